// SPDX-License-Identifier: MIT
/*
 * Tensors above libnpu's rank limit (NPU_TENSOR_MAX_RANK, 6) and up to
 * CT_MAX_RANK, which ONNX allows (the NCd1d2d3d4d5 loss tests): such a
 * value is held folded, its dimensions from the sixth on merged into the
 * sixth (the same bytes, row-major), and its symbol keeps the shape the
 * model sees (sym.lrank, sym.ldims).  Only ops that treat the merged
 * dimensions alike take one: elementwise ops, whose operands all have
 * that shape (or one element), and the loss ops, whose dimensions after
 * N and C are all "spatial"; any other op refuses it, naming the node.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"

static void im_node_reset(struct nctx *c)
{
	c->im->node = c->n;
}

int oi_fold_dims(uint32_t rank, const int64_t *dims, uint32_t *frank, uint32_t *fdims)
{
	uint64_t last;
	uint32_t i;

	*frank = rank > NPU_TENSOR_MAX_RANK ? NPU_TENSOR_MAX_RANK : rank;
	for (i = 0; i < *frank; i++)
		fdims[i] = (uint32_t)dims[i];
	if (rank <= NPU_TENSOR_MAX_RANK)
		return 0;
	last = fdims[NPU_TENSOR_MAX_RANK - 1];
	for (i = NPU_TENSOR_MAX_RANK; i < rank; i++) {
		last *= (uint64_t)dims[i];
		if (last > UINT32_MAX)
			return -EOVERFLOW;
	}
	fdims[NPU_TENSOR_MAX_RANK - 1] = (uint32_t)last;
	return 0;
}

/* Ops whose every output element reads the same element of each input. */
static const char *const elementwise[] = {
	"Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh",
	"BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "Ceil",
	"Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp",
	"Floor", "Gelu", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish",
	"Identity", "IsInf", "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log",
	"Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "Pow",
	"Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh",
	"Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh",
	"ThresholdedRelu", "Where", "Xor",
};

static bool is_elementwise(const char *t)
{
	size_t i;

	for (i = 0; i < sizeof(elementwise) / sizeof(elementwise[0]); i++)
		if (!strcmp(t, elementwise[i]))
			return true;
	return false;
}

static bool is_loss(const char *t)
{
	return !strcmp(t, "NegativeLogLikelihoodLoss") || !strcmp(t, "SoftmaxCrossEntropyLoss");
}

void oi_model_shape(const struct sym *s, uint32_t *rank, int64_t *dims)
{
	uint32_t i;

	if (s->lrank) {
		*rank = s->lrank;
		for (i = 0; i < s->lrank; i++)
			dims[i] = s->ldims[i];
	} else if (s->is_const) {
		*rank = s->c.rank;
		for (i = 0; i < s->c.rank; i++)
			dims[i] = s->c.dims[i];
	} else {
		*rank = s->rank;
		for (i = 0; i < s->rank; i++)
			dims[i] = s->dims[i];
	}
}

static uint64_t sym_elems(const struct sym *s)
{
	uint32_t r, i;
	int64_t d[CT_MAX_RANK];
	uint64_t n = 1;

	oi_model_shape(s, &r, d);
	for (i = 0; i < r; i++)
		n *= (uint64_t)d[i];
	return n;
}

static void set_logical(struct sym *s, uint32_t rank, const int64_t *dims)
{
	uint32_t i;

	s->lrank = rank;
	for (i = 0; i < rank; i++)
		s->ldims[i] = (uint32_t)dims[i];
}

/*
 * A symbol of @s's data under the physical shape @dims (@rank, at most
 * the limit), named after it: a reshaped constant, or a RESHAPE node.
 */
static int reshaped(struct nctx *c, struct sym *s, uint32_t rank, const uint32_t *dims,
		    struct sym **out)
{
	struct imp *im = c->im;
	struct oi_node d = { .kind = NPU_NODE_RESHAPE };
	char name[256];
	struct sym *o;
	uint32_t i, in;
	int ret;

	snprintf(name, sizeof(name), "%s/onnx-folded-%u", s->name, im->tmp_count++);
	ret = oi_add_sym(im, name, &o);
	if (ret)
		return ret;
	if (s->is_const) {
		ret = ctensor_copy(&s->c, &o->c, &im->consts);
		if (ret)
			return oi_fold_fail(im, ret);
		o->is_const = true;
		o->c.rank = rank;
		for (i = 0; i < rank; i++)
			o->c.dims[i] = dims[i];
		*out = o;
		return 0;
	}
	ret = oi_new_value(im, o, s->dtype, rank, dims);
	if (ret)
		return ret;
	in = s->value;
	d.name = c->name;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = o->value;
	ret = oi_add_node(im, &d);
	*out = o;
	return ret;
}

/*
 * The model's loss output, from @f: the loss written in its physical
 * shape ([N, d1, ..., merged] without reduction, else a scalar).
 */
static int loss_output(struct nctx *c, const struct oi_rank *rk, struct sym *f)
{
	struct imp *im = c->im;
	struct oi_node d = { .kind = NPU_NODE_RESHAPE };
	uint32_t fr, fd[NPU_TENSOR_MAX_RANK], i, in;
	int64_t ld[CT_MAX_RANK];
	uint32_t lr = 0;
	struct sym *s;
	int ret;

	if ((f->is_const ? f->c.rank : f->rank) > 1) {
		lr = rk->rank - 1;
		ld[0] = rk->dims[0];
		for (i = 2; i < rk->rank; i++)
			ld[i - 1] = rk->dims[i];
	}
	if (oi_fold_dims(lr, ld, &fr, fd))
		return oi_fail(im, "the loss' dimensions from the sixth on hold more than %u elements",
			       UINT32_MAX);
	ret = oi_add_sym(im, c->n->output[0], &s);
	if (ret)
		return ret;
	if (lr > NPU_TENSOR_MAX_RANK)
		set_logical(s, lr, ld);
	if (f->is_const) {
		ret = ctensor_copy(&f->c, &s->c, &im->consts);
		if (ret)
			return oi_fold_fail(im, ret);
		s->is_const = true;
		s->c.rank = fr;
		for (i = 0; i < fr; i++)
			s->c.dims[i] = fd[i];
		return 0;
	}
	ret = oi_new_value(im, s, f->dtype, fr, fd);
	if (ret)
		return ret;
	in = f->value;
	d.name = c->name;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = s->value;
	return oi_add_node(im, &d);
}

int oi_rank_begin(struct nctx *c, struct oi_rank *rk)
{
	const char *t = c->n->op_type ? c->n->op_type : "";
	const struct sym *x = NULL;
	uint32_t xr, i;
	int64_t xd[CT_MAX_RANK];
	size_t k;

	memset(rk, 0, sizeof(*rk));
	for (k = 0; k < c->nin; k++)
		if (c->in[k] && c->in[k]->lrank) {
			x = c->in[k];
			break;
		}
	if (!x)
		return 0;
	oi_model_shape(x, &xr, xd);
	if (is_elementwise(t)) {
		/* broadcasting would mix merged dims: same shape, or one element */
		for (k = 0; k < c->nin; k++) {
			const struct sym *s = c->in[k];
			uint32_t r;
			int64_t d[CT_MAX_RANK];

			if (!s || s == x || sym_elems(s) == 1)
				continue;
			oi_model_shape(s, &r, d);
			if (r != xr || memcmp(d, xd, 8ull * r))
				return oi_fail(c->im, "input %zu broadcasts against input '%s' of rank %u, above libnpu's limit of %d: only operands of the same shape or of one element are supported there",
					       k, x->name, xr, NPU_TENSOR_MAX_RANK);
		}
		rk->active = true;
		rk->rank = xr;
		memcpy(rk->dims, xd, sizeof(xd));
		return 0;
	}
	if (is_loss(t) && c->in[0] == x && c->nin >= 2 && c->in[1]) {
		/* the target [N, d1, ...] folded as the scores' d1... are */
		uint32_t tr, fr, fd[NPU_TENSOR_MAX_RANK];
		int64_t td[CT_MAX_RANK];
		int ret;

		oi_model_shape(c->in[1], &tr, td);
		if (tr + 1 != xr)
			return oi_fail(c->im, "the target has rank %u, not the scores' rank %u minus one",
				       tr, xr);
		for (i = 0; i < tr; i++)
			if (td[i] != xd[i ? i + 1 : 0])
				return oi_fail(c->im, "the target's dimension %u is %lld, the scores' %u is %lld",
					       i, (long long)td[i], i ? i + 1 : 0,
					       (long long)xd[i ? i + 1 : 0]);
		(void)oi_fold_dims(xr, xd, &fr, fd);	/* held so: it fits */
		for (i = 1; i + 1 < fr; i++)
			fd[i] = fd[i + 1];
		ret = reshaped(c, c->in[1], fr - 1, fd, &c->in[1]);
		if (ret)
			return ret;
		if (c->n->n_output > NPU_KERNEL_MAX_OUTPUTS || !c->n->output[0] ||
		    !*c->n->output[0])
			return oi_fail(c->im, "no loss output");
		/* the loss into a value of its own, the model's output after */
		rk->orig = c->n;
		rk->node = *c->n;
		for (k = 0; k < c->n->n_output; k++)
			rk->outputs[k] = c->n->output[k];
		snprintf(rk->folded, sizeof(rk->folded), "%s/onnx-folded-%u", c->n->output[0],
			 c->im->tmp_count++);
		rk->outputs[0] = rk->folded;
		rk->node.output = rk->outputs;
		/* messages name the node as before: an unnamed one by its output */
		rk->node.name = (char *)c->name;
		c->n = &rk->node;
		rk->active = rk->loss = true;
		rk->rank = xr;
		memcpy(rk->dims, xd, sizeof(xd));
		return 0;
	}
	return oi_fail(c->im, "input '%s' has rank %u, above libnpu's limit of %d, which only elementwise ops and the loss ops take (their dimensions are merged)",
		       x->name, xr, NPU_TENSOR_MAX_RANK);
}

int oi_rank_end(struct nctx *c, struct oi_rank *rk, int status)
{
	size_t k;
	int ret;

	if (!rk->active)
		return status;
	if (rk->loss) {
		c->n = rk->orig;
		im_node_reset(c);
	}
	if (status)
		return status;
	for (k = 0; k < c->n->n_output; k++) {
		const char *name = rk->loss && !k ? rk->folded : c->n->output[k];
		struct sym *s = name && *name ? oi_lookup(c->im, name) : NULL;

		if (!s)
			continue;
		if (!rk->loss) {
			set_logical(s, rk->rank, rk->dims);
			continue;
		}
		if (k == 1) {	/* log_prob: the scores' shape */
			set_logical(s, rk->rank, rk->dims);
			continue;
		}
		/* the loss: [N, d1, ...] without reduction, else a scalar */
		ret = loss_output(c, rk, s);
		if (ret)
			return ret;
	}
	return 0;
}
