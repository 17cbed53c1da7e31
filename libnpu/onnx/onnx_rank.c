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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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
	"Celu", "Clip", "Cos", "Cosh", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp",
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
 * Symbol @name holding @f's data with the model's shape @dims (@rank):
 * folded above the limit, a reshaped constant or a RESHAPE node.
 */
static int relabel(struct nctx *c, struct sym *f, const char *name, uint32_t rank,
		   const int64_t *dims)
{
	struct imp *im = c->im;
	struct oi_node d = { .kind = NPU_NODE_RESHAPE };
	uint32_t fr, fd[NPU_TENSOR_MAX_RANK], i, in;
	struct sym *s;
	int ret;

	if (oi_fold_dims(rank, dims, &fr, fd))
		return oi_fail(im, "output '%s': its dimensions from the sixth on hold more than %u elements",
			       name, UINT32_MAX);
	ret = oi_add_sym(im, name, &s);
	if (ret)
		return ret;
	if (rank > NPU_TENSOR_MAX_RANK)
		set_logical(s, rank, dims);
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

/*
 * The model's loss output, from @f: the loss written in its physical
 * shape ([N, d1, ..., merged] without reduction, else a scalar).
 */
static int loss_output(struct nctx *c, const struct oi_rank *rk, struct sym *f)
{
	int64_t ld[CT_MAX_RANK];
	uint32_t lr = 0, i;

	if ((f->is_const ? f->c.rank : f->rank) > 1) {
		lr = rk->rank - 1;
		ld[0] = rk->dims[0];
		for (i = 2; i < rk->rank; i++)
			ld[i - 1] = rk->dims[i];
	}
	return relabel(c, f, c->n->output[0], lr, ld);
}

/*
 * Ops that only rename a value's data (its bytes stay as they are) or
 * read its shape: they take the model's shape (onnx_meta.c) and write
 * an output above the limit folded themselves.
 */
static bool is_metadata(const char *t)
{
	static const char *const ops[] = {
		"Flatten", "Reshape", "Shape", "Size", "Squeeze", "Unsqueeze",
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(t, ops[i]))
			return true;
	return false;
}

#define AXES_ALL	INT64_MIN		/* every axis */
#define AXES_STARTS	(INT64_MIN + 1)		/* Slice's: 0 to len(starts) - 1 */
#define AXIS_REQUIRED	(INT64_MIN + 2)

/*
 * Ops that act along some axes and treat every other dimension alike,
 * each output element reading the same position of them: merging runs of
 * such dimensions (and with @reduce, runs of reduced ones) changes
 * nothing, so a tensor above the rank limit fits under it that way.
 */
static const struct axis_op {
	const char *op;
	int64_t since, until;	/* the opsets of this form; until 0: still */
	const char *attr;	/* the "axis" (one) or "axes" (a list) attribute */
	int axes_input;		/* the input holding the axes list, else -1 */
	int64_t def;		/* the axis when none is given, or AXES_* */
	bool reduce;		/* a reduction (keepdims, runs of axes merge) */
	uint64_t full;		/* inputs of the data's shape: bit k for input k */
} axis_ops[] = {
	{ "ArgMax", 1, 0, "axis", -1, 0, true, 1 },
	{ "ArgMin", 1, 0, "axis", -1, 0, true, 1 },
	{ "Concat", 4, 0, "axis", -1, AXIS_REQUIRED, false, ~0ull },
	{ "GatherElements", 11, 0, "axis", -1, 0, false, 3 },
	{ "Hardmax", 13, 0, "axis", -1, -1, false, 1 },
	{ "LogSoftmax", 13, 0, "axis", -1, -1, false, 1 },
	{ "ReduceL1", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceL1", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceL2", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceL2", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceLogSum", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceLogSum", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceLogSumExp", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceLogSumExp", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceMax", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceMax", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceMean", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceMean", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceMin", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceMin", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceProd", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceProd", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceSum", 1, 12, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceSum", 13, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "ReduceSumSquare", 1, 17, "axes", -1, AXES_ALL, true, 1 },
	{ "ReduceSumSquare", 18, 0, NULL, 1, AXES_ALL, true, 1 },
	{ "Slice", 10, 0, NULL, 3, AXES_STARTS, false, 1 },
	{ "Softmax", 13, 0, "axis", -1, -1, false, 1 },
	{ "Split", 2, 0, "axis", -1, 0, false, 1 },
};

static const struct axis_op *find_axis_op(const char *t, int64_t opset)
{
	size_t i;

	for (i = 0; i < sizeof(axis_ops) / sizeof(axis_ops[0]); i++)
		if (!strcmp(t, axis_ops[i].op) && opset >= axis_ops[i].since &&
		    (!axis_ops[i].until || opset <= axis_ops[i].until))
			return &axis_ops[i];
	return NULL;
}

/* Mark the axes @v[@n] of a rank-@r tensor in @t; -EINVAL for one out of range. */
static int mark_axes(struct nctx *c, const int64_t *v, size_t n, uint32_t r, bool *t)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t a = v[i] < 0 ? v[i] + r : v[i];

		if (a < 0 || a >= r)
			return oi_fail(c->im, "axis %" PRId64 " is outside [%d, %u] for rank %u",
				       v[i], -(int)r, r - 1, r);
		t[a] = true;
	}
	return 0;
}

/* Which of the @r axes @ao's node acts on, into @t. */
static int acted_axes(struct nctx *c, const struct axis_op *ao, uint32_t r, bool *t)
{
	const Onnx__AttributeProto *a = ao->attr ? oi_attr(c, ao->attr) : NULL;
	const struct sym *in = ao->axes_input >= 0 && (size_t)ao->axes_input < c->nin ?
			       c->in[ao->axes_input] : NULL;
	bool noop = ao->reduce && oi_attr_i(c, "noop_with_empty_axes", 0);
	int64_t v;
	uint32_t i;

	memset(t, 0, CT_MAX_RANK * sizeof(*t));
	if (a && !strcmp(ao->attr, "axes"))
		return a->n_ints || !noop ? mark_axes(c, a->ints, a->n_ints, r, t) : 0;
	if (a) {
		v = a->i;
		return mark_axes(c, &v, 1, r, t);
	}
	if (in) {
		if (!in->is_const || ct_is_float(&in->c) || in->c.rank > 1)
			return oi_fail(c->im, "the axes ('%s') must be a constant 1-D integer tensor for an input above the rank limit",
				       in->name);
		if (in->c.n || noop)
			return mark_axes(c, in->c.i, in->c.n, r, t);
	}
	switch (ao->def) {
	case AXIS_REQUIRED:
		return oi_fail(c->im, "the %s attribute is required", ao->attr);
	case AXES_ALL:
		if (noop)
			return 0;
		for (i = 0; i < r; i++)
			t[i] = true;
		return 0;
	case AXES_STARTS:
		in = c->nin > 1 ? c->in[1] : NULL;
		if (!in || !in->is_const || in->c.n > r)
			return oi_fail(c->im, "the starts must be a constant of at most %u values for an input above the rank limit",
				       r);
		for (i = 0; i < in->c.n; i++)
			t[i] = true;
		return 0;
	default:
		v = ao->def;
		return mark_axes(c, &v, 1, r, t);
	}
}

/*
 * Merge the dimensions node @c treats alike (@ao) so its input @x of the
 * model's rank @xr and shape @xd fits under the limit: its data inputs
 * reshaped, its axes renumbered, its outputs written to names of their
 * own (oi_rank_end() reshapes them into the model's).
 */
static int group_begin(struct nctx *c, struct oi_rank *rk, const struct axis_op *ao,
		       const struct sym *x, uint32_t xr, const int64_t *xd)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *n = c->n;
	bool t[CT_MAX_RANK];
	uint32_t g = 0, i, of[CT_MAX_RANK];
	size_t k, na = 0;
	int ret = acted_axes(c, ao, xr, t);

	if (ret)
		return ret;
	for (i = 0; i < xr; i++) {
		if (i && (t[i] != t[i - 1] || (t[i] && !ao->reduce)))
			g++;
		if (g >= NPU_TENSOR_MAX_RANK)
			return oi_fail(im, "input '%s' has rank %u, above libnpu's limit of %d, and keeps %u dimensions even with those it treats alike merged",
				       x->name, xr, NPU_TENSOR_MAX_RANK, g + 1);
		if (!i || g != of[i - 1])
			rk->group[g] = i;
		rk->touched[g] = t[i];
		of[i] = g;
	}
	rk->ngroups = g + 1;
	rk->group[rk->ngroups] = xr;
	/* the data inputs, each with its dimensions merged alike */
	rk->inputs = calloc(n->n_input ? n->n_input : 1, sizeof(*rk->inputs));
	if (!rk->inputs)
		return oi_nomem(im);
	memcpy(rk->inputs, n->input, n->n_input * sizeof(*rk->inputs));
	for (k = 0; k < c->nin; k++) {
		struct sym *s = c->in[k];
		uint32_t sr, pd[NPU_TENSOR_MAX_RANK], j;
		int64_t sd[CT_MAX_RANK];

		if (!s)
			continue;
		oi_model_shape(s, &sr, sd);
		if (k >= 64 || !(ao->full >> k & 1)) {
			if (sr > NPU_TENSOR_MAX_RANK)
				return oi_fail(im, "input %zu ('%s') has rank %u, above libnpu's limit of %d, which this input does not take",
					       k, s->name, sr, NPU_TENSOR_MAX_RANK);
			continue;
		}
		if (sr != xr)
			return oi_fail(im, "input %zu ('%s') has rank %u, input '%s' %u", k, s->name,
				       sr, x->name, xr);
		for (j = 0; j < rk->ngroups; j++)
			pd[j] = 1;
		for (i = 0; i < xr; i++) {
			uint64_t m = (uint64_t)pd[of[i]] * (uint64_t)sd[i];

			if (!t[i] && sd[i] != xd[i])
				return oi_fail(im, "input %zu ('%s') differs from input '%s' in dimension %u, which merging its dimensions needs alike",
					       k, s->name, x->name, i);
			if (m > UINT32_MAX)
				return oi_fail(im, "input %zu ('%s'): merged dimensions would hold more than %u elements",
					       k, s->name, UINT32_MAX);
			pd[of[i]] = (uint32_t)m;
		}
		ret = reshaped(c, s, rk->ngroups, pd, &c->in[k]);
		if (ret)
			return ret;
		rk->inputs[k] = c->in[k]->name;
	}
	rk->node = *n;
	rk->node.input = rk->inputs;
	rk->node.name = (char *)c->name;
	/* the axes renumbered: each its group, a reduction's once each */
	if (ao->reduce) {
		for (g = 0; g < rk->ngroups; g++)
			if (rk->touched[g])
				rk->axes[na++] = g;
	} else {
		const Onnx__AttributeProto *a = ao->attr ? oi_attr(c, ao->attr) : NULL;
		const struct sym *in = ao->axes_input >= 0 && (size_t)ao->axes_input < c->nin ?
				       c->in[ao->axes_input] : NULL;
		const int64_t *v = a ? (a->n_ints ? a->ints : &a->i) : in ? in->c.i : NULL;
		size_t nv = a ? (a->n_ints ? a->n_ints : 1) : in ? in->c.n : 0;

		for (; na < nv; na++)
			rk->axes[na] = of[v[na] < 0 ? v[na] + xr : v[na]];
	}
	if (ao->attr && oi_attr(c, ao->attr)) {
		const Onnx__AttributeProto *a = oi_attr(c, ao->attr);

		rk->attrs = calloc(n->n_attribute, sizeof(*rk->attrs));
		if (!rk->attrs)
			return oi_nomem(im);
		memcpy(rk->attrs, n->attribute, n->n_attribute * sizeof(*rk->attrs));
		rk->attr = *a;
		if (a->n_ints) {
			rk->attr.ints = rk->axes;
			rk->attr.n_ints = na;
		} else {
			rk->attr.i = rk->axes[0];
		}
		for (k = 0; k < n->n_attribute; k++)
			if (rk->attrs[k] == a)
				rk->attrs[k] = &rk->attr;
		rk->node.attribute = rk->attrs;
	} else if (ao->axes_input >= 0 && (size_t)ao->axes_input < c->nin &&
		   c->in[ao->axes_input]) {
		char *name = oi_name_fmt(c->name, im->tmp_count++, "onnx-folded-axes");

		ret = name ? oi_const_sym(im, name, rk->axes, na, false, OT_INT64) : oi_nomem(im);
		if (!ret) {
			c->in[ao->axes_input] = oi_lookup(im, name);
			rk->inputs[ao->axes_input] = c->in[ao->axes_input]->name;
		}
		free(name);
		if (ret)
			return ret;
	}
	/* the outputs into names of their own */
	if (n->n_output > NPU_KERNEL_MAX_OUTPUTS)
		return oi_fail(im, "%zu outputs, at most %d are supported", n->n_output,
			       NPU_KERNEL_MAX_OUTPUTS);
	for (k = 0; k < n->n_output; k++) {
		rk->outputs[k] = n->output[k] && *n->output[k] ?
				 oi_name_fmt(n->output[k], im->tmp_count++, "onnx-folded") : strdup("");
		if (!rk->outputs[k])
			return oi_nomem(im);
	}
	rk->node.output = rk->outputs;
	rk->orig = n;
	c->n = &rk->node;
	rk->active = rk->grouped = true;
	rk->rank = xr;
	memcpy(rk->dims, xd, sizeof(rk->dims));
	return 0;
}

static void group_free(struct oi_rank *rk)
{
	size_t k;

	for (k = 0; k < NPU_KERNEL_MAX_OUTPUTS; k++) {
		free(rk->outputs[k]);
		rk->outputs[k] = NULL;
	}
	free(rk->inputs);
	free(rk->attrs);
	rk->inputs = NULL;
	rk->attrs = NULL;
}

/* Output @k, written grouped to @f, in the model's shape. */
static int group_output(struct nctx *c, const struct oi_rank *rk, size_t k, struct sym *f)
{
	uint32_t pr = f->is_const ? f->c.rank : f->rank, g, i, r = 0, nt = 0;
	int64_t d[CT_MAX_RANK];
	bool keep;

	for (g = 0; g < rk->ngroups; g++)
		nt += rk->touched[g];
	keep = pr == rk->ngroups;
	if (!keep && pr != rk->ngroups - nt)
		return oi_fail(c->im, "output %zu has rank %u, which does not tell the model's shape back",
			       k, pr);
	for (g = 0, pr = 0; g < rk->ngroups; g++) {
		uint32_t from = rk->group[g], to = rk->group[g + 1];
		int64_t od;

		if (rk->touched[g] && !keep)
			continue;
		od = f->is_const ? f->c.dims[pr] : f->dims[pr];
		pr++;
		if (!rk->touched[g]) {
			for (i = from; i < to; i++)
				d[r++] = rk->dims[i];
		} else if (to - from == 1) {
			d[r++] = od;
		} else {
			if (od != 1)
				return oi_fail(c->im, "output %zu: merged axes came out as %" PRId64 ", not 1",
					       k, od);
			for (i = from; i < to; i++)
				d[r++] = 1;
		}
	}
	return relabel(c, f, rk->orig->output[k], r, d);
}

int oi_rank_begin(struct nctx *c, struct oi_rank *rk)
{
	const char *t = c->n->op_type ? c->n->op_type : "";
	const struct sym *x = NULL;
	const struct axis_op *ao;
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
	if (is_metadata(t))
		return 0;
	ao = find_axis_op(t, c->opset);
	if (ao) {
		int ret = group_begin(c, rk, ao, x, xr, xd);

		if (ret) {
			if (c->n == &rk->node)
				c->n = rk->orig;
			im_node_reset(c);
			group_free(rk);
			memset(rk, 0, sizeof(*rk));
		}
		return ret;
	}
	return oi_fail(c->im, "input '%s' has rank %u, above libnpu's limit of %d, which only elementwise, metadata, reduction, softmax, gather-elements, slice, split, concat and loss ops take (their dimensions are merged)",
		       x->name, xr, NPU_TENSOR_MAX_RANK);
}

int oi_rank_end(struct nctx *c, struct oi_rank *rk, int status)
{
	size_t k;
	int ret;

	if (!rk->active)
		return status;
	if (rk->grouped) {
		c->n = rk->orig;
		im_node_reset(c);
		for (k = 0; !status && k < c->n->n_output; k++) {
			struct sym *f = *rk->outputs[k] ? oi_lookup(c->im, rk->outputs[k]) : NULL;

			if (f)
				status = group_output(c, rk, k, f);
		}
		group_free(rk);
		return status;
	}
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
