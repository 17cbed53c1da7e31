// SPDX-License-Identifier: MIT
/*
 * ONNX metadata ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 * Dropout) as RESHAPE nodes or reshaped constants, and constant ops
 * (Constant, Shape, ConstantOfShape, and Gather/Concat/Cast/Slice of
 * constants) evaluated at import.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

/* A new symbol for the output: a constant, or a RESHAPE of a value. */
static int reshape_out(struct nctx *c, struct sym *x, uint32_t r, const int64_t *dims)
{
	struct oi_node d = { .kind = NPU_NODE_RESHAPE };
	uint32_t ud[8], i, in, fr;
	uint64_t n = 1, xn;
	struct sym *o;
	int ret;

	if (r > CT_MAX_RANK)
		return oi_fail(c->im, "rank %u too large", r);
	for (i = 0; i < r; i++) {
		if (dims[i] < 0 || dims[i] > UINT32_MAX)
			return oi_fail(c->im, "negative or huge dimension %" PRId64, dims[i]);
		if (__builtin_mul_overflow(n, (uint64_t)dims[i], &n) || n > (1ull << 48))
			return oi_fail(c->im, "too many elements");
		if (i < 8)
			ud[i] = (uint32_t)dims[i];
	}
	if (x->is_const) {
		if (n != x->c.n)
			return oi_fail(c->im, "%" PRIu64 " elements reshaped to %" PRIu64, x->c.n, n);
		ret = oi_out_sym(c, &o);
		if (ret)
			return ret;
		ret = ctensor_copy(&x->c, &o->c, &c->im->consts);
		if (ret)
			return oi_fold_fail(c->im, ret);
		o->is_const = true;
		o->c.rank = r;
		memcpy(o->c.dims, dims, 8ull * r);
		return 0;
	}
	xn = oi_elems(x->rank, x->dims);
	if (n != xn)
		return oi_fail(c->im, "%" PRIu64 " elements reshaped to %" PRIu64, xn, n);
	in = x->value;
	if (r <= NPU_TENSOR_MAX_RANK)
		return oi_emit(c, &d, &in, 1, x->dtype, r, ud);
	/* above the rank limit: held folded, the model's shape remembered (onnx_rank.c) */
	if (oi_fold_dims(r, dims, &fr, ud))
		return oi_fail(c->im, "dimensions 6 to %u hold more than %u elements", r, UINT32_MAX);
	ret = oi_emit(c, &d, &in, 1, x->dtype, fr, ud);
	o = ret ? NULL : oi_lookup(c->im, c->n->output[0]);
	if (o) {
		o->lrank = r;
		for (i = 0; i < r; i++)
			o->ldims[i] = (uint32_t)dims[i];
	}
	return ret;
}

/* The shape the model sees, above the rank limit too. */
static int cur_dims(struct nctx *c, struct sym *x, uint32_t *r, int64_t *dims)
{
	(void)c;
	oi_model_shape(x, r, dims);
	return 0;
}

/* The axes of Squeeze/Unsqueeze: attribute before opset 13, input after. */
static int get_axes(struct nctx *c, int64_t *axes, int *n)
{
	size_t i;

	if (c->opset < 13) {
		*n = oi_attr_ints(c, "axes", axes, 16);
		if (*n == -2)
			return oi_fail(c->im, "too many axes");
		return 0;
	}
	if (c->nin < 2 || !c->in[1]) {
		*n = -1;
		return 0;
	}
	if (!c->in[1]->is_const || c->in[1]->c.n > 16 || ct_is_float(&c->in[1]->c))
		return oi_fail(c->im, "axes must be a constant int tensor of at most 16 values");
	for (i = 0; i < c->in[1]->c.n; i++)
		axes[i] = c->in[1]->c.i[i];
	*n = (int)c->in[1]->c.n;
	return 0;
}

int oi_op_meta(struct nctx *c)
{
	const char *t = c->n->op_type;
	int64_t dims[CT_MAX_RANK + 16], nd[CT_MAX_RANK + 16], axes[16];
	uint32_t r, i, k, nr = 0;
	struct sym *x = NULL;
	int ret = oi_need_in(c, 0, &x), na;

	if (!ret)
		ret = cur_dims(c, x, &r, dims);
	if (ret)
		return ret;
	if (!strcmp(t, "Identity") || !strcmp(t, "Dropout"))
		return reshape_out(c, x, r, dims);
	if (!strcmp(t, "Flatten")) {
		int64_t axis = oi_attr_i(c, "axis", 1), a = 1, b = 1;

		if (axis < -(int64_t)r || axis > (int64_t)r)
			return oi_fail(c->im, "axis out of range");
		if (axis < 0)
			axis += r;
		for (i = 0; i < r; i++)
			if (__builtin_mul_overflow((int64_t)i < axis ? a : b, dims[i],
						   (int64_t)i < axis ? &a : &b))
				return oi_fail(c->im, "the flattened shape overflows");
		nd[0] = a;
		nd[1] = b;
		return reshape_out(c, x, 2, nd);
	}
	if (!strcmp(t, "Reshape")) {
		const struct sym *s = c->nin > 1 ? c->in[1] : NULL;
		bool allowzero = oi_attr_i(c, "allowzero", 0) != 0;
		int64_t known = 1, inferred = -1, total = 1;

		if (!s || !s->is_const || ct_is_float(&s->c) || s->c.rank != 1 ||
		    s->c.n > CT_MAX_RANK)
			return oi_fail(c->im, "the shape must be a constant 1-D int64 tensor");
		for (i = 0; i < r; i++)
			if (__builtin_mul_overflow(total, dims[i], &total))
				return oi_fail(c->im, "the input's element count overflows");
		for (i = 0; i < s->c.n; i++) {
			int64_t v = s->c.i[i];

			if (v == 0 && !allowzero) {
				if (i >= r)
					return oi_fail(c->im, "0 copies a dimension the input lacks");
				v = dims[i];
			} else if (v == -1) {
				if (inferred >= 0)
					return oi_fail(c->im, "two -1 dimensions");
				inferred = i;
				nd[i] = 1;
				continue;
			} else if (v < 0) {
				return oi_fail(c->im, "bad dimension %" PRId64, v);
			}
			if (v > UINT32_MAX)
				return oi_fail(c->im, "huge dimension");
			nd[i] = v;
			if (__builtin_mul_overflow(known, v, &known))
				return oi_fail(c->im, "the new shape's element count overflows");
		}
		if (inferred >= 0) {
			/* ONNX: a -1 cannot be inferred beside an allowzero 0 */
			if (!known && allowzero)
				return oi_fail(c->im, "a -1 beside a 0 that allowzero keeps cannot be inferred");
			if (!known || total % known)
				return oi_fail(c->im, "-1 cannot be inferred");
			nd[inferred] = total / known;
		}
		return reshape_out(c, x, (uint32_t)s->c.n, nd);
	}
	ret = get_axes(c, axes, &na);
	if (ret)
		return ret;
	if (!strcmp(t, "Squeeze")) {
		for (i = 0; i < (uint32_t)(na > 0 ? na : 0); i++) {
			if (axes[i] < -(int64_t)r || axes[i] >= (int64_t)r)
				return oi_fail(c->im, "axis out of range");
			if (axes[i] < 0)
				axes[i] += r;
			if (dims[axes[i]] != 1)
				return oi_fail(c->im, "squeezed axis %" PRId64 " is not 1", axes[i]);
		}
		for (i = 0; i < r; i++) {
			bool drop = false;

			if (na < 0)
				drop = dims[i] == 1;
			for (k = 0; na > 0 && k < (uint32_t)na; k++)
				drop |= axes[k] == i;
			if (!drop)
				nd[nr++] = dims[i];
		}
		return reshape_out(c, x, nr, nd);
	}
	/* Unsqueeze */
	if (na < 1)
		return oi_fail(c->im, "axes are required");
	nr = r + (uint32_t)na;
	if (nr > CT_MAX_RANK)
		return oi_fail(c->im, "rank too large");
	for (i = 0; i < nr; i++)
		nd[i] = 0;
	for (k = 0; k < (uint32_t)na; k++) {
		int64_t a = axes[k] < 0 ? axes[k] + nr : axes[k];

		if (a < 0 || a >= (int64_t)nr || nd[a])
			return oi_fail(c->im, "bad or repeated axis");
		nd[a] = 1;
	}
	for (i = 0, k = 0; i < nr; i++)
		if (!nd[i])
			nd[i] = dims[k++];
		else
			nd[i] = 1;
	/* an inserted 1 might collide with a real dim of 1: rebuild cleanly */
	{
		bool ins[CT_MAX_RANK + 16] = { 0 };

		for (k = 0; k < (uint32_t)na; k++)
			ins[axes[k] < 0 ? axes[k] + nr : axes[k]] = true;
		for (i = 0, k = 0; i < nr; i++)
			nd[i] = ins[i] ? 1 : dims[k++];
	}
	return reshape_out(c, x, nr, nd);
}

/* Shape, Constant, ConstantOfShape, and integer ops on constants. */
int oi_op_const(struct nctx *c)
{
	const char *t = c->n->op_type;
	struct ctensor y = { 0 };
	struct sym *o;
	int ret = 0;

	if (!strcmp(t, "Constant")) {
		const Onnx__AttributeProto *a;

		if ((a = oi_attr(c, "value")) && a->t)
			ret = ctensor_from_proto(a->t, &y, c->im->err, c->im->err_size);
		else if ((a = oi_attr(c, "value_float")) && a->has_f)
			ret = ctensor_scalar_f(a->f, &y);
		else if ((a = oi_attr(c, "value_int")) && a->has_i)
			ret = ctensor_scalar_i(a->i, &y);
		else if ((a = oi_attr(c, "value_floats")))
			ret = ctensor_vec_f(a->floats, a->n_floats, &y);
		else if ((a = oi_attr(c, "value_ints")))
			ret = ctensor_vec_i(a->ints, a->n_ints, &y);
		else
			return oi_fail(c->im, "no supported value attribute");
		if (ret == -EINVAL)
			return oi_fail(c->im, "%s", c->im->err);
	} else if (!strcmp(t, "Shape")) {
		struct sym *x = NULL;
		int64_t dims[CT_MAX_RANK], start, end;
		uint32_t r, i;

		ret = oi_need_in(c, 0, &x);
		if (!ret)
			ret = cur_dims(c, x, &r, dims);
		if (ret)
			return ret;
		start = oi_attr_i(c, "start", 0);
		end = oi_attr_i(c, "end", r);
		if (start < 0)
			start += r;
		if (end < 0)
			end += r;
		start = start < 0 ? 0 : start > r ? r : start;
		end = end < start ? start : end > r ? r : end;
		ret = ctensor_vec_i(dims + start, (size_t)(end - start), &y);
		for (i = 0; !ret && i < y.n; i++)
			;
	} else if (!strcmp(t, "ConstantOfShape")) {
		const Onnx__AttributeProto *a = oi_attr(c, "value");
		struct sym *s = NULL;
		struct ctensor v = { 0 };

		ret = oi_need_in(c, 0, &s);
		if (ret)
			return ret;
		if (!s->is_const || ct_is_float(&s->c) || s->c.rank > 1)
			return oi_fail(c->im, "the shape must be a constant 1-D int64 tensor");
		if (a && a->t) {
			ret = ctensor_from_proto(a->t, &v, c->im->err, c->im->err_size);
			if (ret)
				return ret == -ENOMEM ? oi_nomem(c->im) : oi_fail(c->im, "%s", c->im->err);
			if (v.n != 1) {
				ctensor_free(&v);
				return oi_fail(c->im, "value must have one element");
			}
		} else {
			ret = ctensor_scalar_f(0.0f, &v);
			if (ret)
				return oi_nomem(c->im);
		}
		ret = ctensor_fill(&v, s->c.i, s->c.n, &c->im->consts, &y);
		ctensor_free(&v);
		if (ret == -EINVAL)
			return oi_fail(c->im, "a negative dimension in the shape");
		if (ret == -E2BIG)
			return oi_fail(c->im, "the shape has more than 2^31 elements");
		if (ret)
			return oi_fold_fail(c->im, ret);
	} else {
		/*
		 * Gather, Concat, Cast, Slice: constants only.  A Concat may
		 * have any number of inputs; Slice before opset 10 takes 4.
		 */
		const struct ctensor **ins;
		struct ctensor sl[3] = { 0 };
		size_t i, nin = c->nin;
		int64_t iattr[4];

		for (i = 0; i < c->nin; i++)
			if (c->in[i] && !c->in[i]->is_const)
				return oi_fail(c->im, "only constant inputs are supported (this op has no device op yet)");
		ins = calloc(nin > 4 ? nin : 4, sizeof(*ins));
		if (!ins)
			return oi_nomem(c->im);
		for (i = 0; i < c->nin; i++)
			ins[i] = c->in[i] ? &c->in[i]->c : NULL;
		iattr[0] = oi_attr_i(c, "axis", 0);
		iattr[1] = oi_attr_i(c, "to", 0);
		iattr[2] = c->opset;
		if (!strcmp(t, "Slice") && c->opset < 10) {
			/* before opset 10 starts, ends and axes are attributes */
			static const char *const an[3] = { "starts", "ends", "axes" };
			int64_t v[8];
			int k, n;

			for (k = 0, ret = 0; k < 3 && !ret; k++) {
				n = oi_attr_ints(c, an[k], v, 8);
				if (n < 0 && k < 2) {
					ctensor_free(&sl[0]);
					free(ins);
					return oi_fail(c->im, "%s is required", an[k]);
				}
				if (n >= 0)
					ret = ctensor_vec_i(v, (size_t)n, &sl[k]);
				ins[1 + k] = n >= 0 ? &sl[k] : NULL;
			}
			nin = 4;
			iattr[2] = 10;
		}
		if (!ret)
			ret = const_op(t, ins, nin, iattr, &c->im->consts, &y, c->im->err,
				       c->im->err_size);
		for (i = 0; i < 3; i++)
			ctensor_free(&sl[i]);
		free(ins);
	}
	if (ret)
		return oi_fold_fail(c->im, ret);
	ret = oi_out_sym(c, &o);
	if (ret) {
		ctensor_free(&y);
		return ret;
	}
	o->is_const = true;
	o->c = y;
	return 0;
}
