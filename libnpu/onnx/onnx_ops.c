// SPDX-License-Identifier: MIT
/*
 * ONNX compute ops into graph nodes: each handler checks its inputs,
 * infers the output shape (numpy broadcasting, convolution and pooling
 * windows with auto_pad, batched MatMul) and adds nodes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

static bool float_dtype(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP16 || dt == NPU_DTYPE_BF16;
}

int oi_op_binary(struct nctx *c)
{
	const char *t = c->n->op_type;
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *a = NULL, *b = NULL;
	uint32_t ra, rb, r, da[8], db[8], dy[8], in[2];
	int ret;

	ret = oi_qdq_unit(c);
	if (ret <= 0)
		return ret;
	ret = oi_need_in(c, 0, &a);
	if (!ret)
		ret = oi_need_in(c, 1, &b);
	if (ret)
		return ret;
	if (!a->is_const && !b->is_const && a->dtype != b->dtype)
		return oi_fail(c->im, "operands of two dtypes have no device op");
	if (a->is_const && b->is_const && strcmp(t, "Pow")) {
		struct sym *o;
		struct ctensor y;

		ret = const_binary(t, &a->c, &b->c, &c->im->consts, &y, c->im->err,
				   c->im->err_size);
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
	ret = oi_sym_shape(c, a, &ra, da);
	if (!ret)
		ret = oi_sym_shape(c, b, &rb, db);
	if (!ret)
		ret = oi_broadcast(c, ra, da, rb, db, &r, dy);
	if (!ret && !strcmp(t, "Pow") && !float_dtype(oi_sym_dtype(a)))
		ret = oi_fail(c->im, "Pow of %s has no device op (the device's ELTWISE computes in float)",
			      oi_sym_dtype(a) == NPU_DTYPE_INT32 ? "int32" : "8-bit integers");
	if (!ret)
		ret = oi_value_of(c->im, a, &in[0]);
	if (ret)
		return ret;
	if (!strcmp(t, "Pow") && b->is_const && !ct_is_float(&b->c) &&
	    oi_sym_dtype(a) == NPU_DTYPE_FP32) {
		/* Pow's exponent may be of another type: a float one computes alike */
		struct sym fb = *b;
		uint64_t k;

		fb.value = NPU_VALUE_NONE;
		fb.c.dt = OT_FLOAT;
		fb.c.i = NULL;
		fb.c.f = malloc((b->c.n ? b->c.n : 1) * sizeof(float));
		if (!fb.c.f)
			return oi_nomem(c->im);
		for (k = 0; k < b->c.n; k++)
			fb.c.f[k] = (float)b->c.i[k];
		ret = oi_value_of(c->im, &fb, &in[1]);
		free(fb.c.f);
	} else {
		ret = oi_value_of(c->im, b, &in[1]);
	}
	if (ret)
		return ret;
	if (oi_sym_dtype(a) != oi_sym_dtype(b) && strcmp(t, "Pow"))
		return oi_fail(c->im, "operands of different element types");
	if (!strcmp(t, "Div") && b->is_const) {
		d.kind = NPU_NODE_DIV;	/* compile multiplies by the reciprocals */
	} else {
		d.op.kind = NPU_OP_ELTWISE;
		d.op.eltwise.kind = !strcmp(t, "Add") ? NPU_ELTWISE_ADD :
				    !strcmp(t, "Sub") ? NPU_ELTWISE_SUB :
				    !strcmp(t, "Mul") ? NPU_ELTWISE_MUL :
				    !strcmp(t, "Div") ? NPU_ELTWISE_DIV : NPU_ELTWISE_POW;
	}
	if (r > NPU_TENSOR_MAX_RANK)
		return oi_fail(c->im, "rank %u above %d", r, NPU_TENSOR_MAX_RANK);
	return oi_emit(c, &d, in, 2, oi_sym_dtype(a), r, dy);
}

int oi_op_unary_act(struct nctx *c, enum npu_activation act)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = NULL;
	uint32_t in, r, dims[8];
	int ret = oi_need_in(c, 0, &x);

	if (!ret)
		ret = oi_sym_shape(c, x, &r, dims);
	if (!ret && !float_dtype(oi_sym_dtype(x)))
		return oi_fail(c->im, "activations of unquantized integers have no device op");
	if (!ret)
		ret = oi_value_of(c->im, x, &in);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_ACTIVATION;
	d.op.act = act;
	if (act == NPU_ACT_LEAKY_RELU)
		d.op.act_alpha = oi_attr_f(c, "alpha", 0.01f);
	if (act == NPU_ACT_HARD_SIGMOID) {
		d.op.act_alpha = oi_attr_f(c, "alpha", 0.2f);
		d.op.act_beta = oi_attr_f(c, "beta", 0.5f);
		if (!isfinite(d.op.act_alpha) || !isfinite(d.op.act_beta))
			return oi_fail(c->im, "alpha and beta must be finite");
	}
	if (act != NPU_ACT_CLIP && act != NPU_ACT_RELU && oi_sym_dtype(x) != NPU_DTYPE_FP32 &&
	    oi_sym_dtype(x) != NPU_DTYPE_FP16 && oi_sym_dtype(x) != NPU_DTYPE_BF16)
		return oi_fail(c->im, "only float tensors are supported");
	if (act == NPU_ACT_CLIP) {
		double lo = -INFINITY, hi = INFINITY;

		if (c->opset < 11) {
			lo = oi_attr_f(c, "min", -INFINITY);
			hi = oi_attr_f(c, "max", INFINITY);
		} else {
			if (c->nin > 1 && c->in[1]) {
				if (!c->in[1]->is_const || c->in[1]->c.n != 1)
					return oi_fail(c->im, "min must be a constant scalar");
				lo = ctensor_get(&c->in[1]->c, 0);
			}
			if (c->nin > 2 && c->in[2]) {
				if (!c->in[2]->is_const || c->in[2]->c.n != 1)
					return oi_fail(c->im, "max must be a constant scalar");
				hi = ctensor_get(&c->in[2]->c, 0);
			}
		}
		if (isnan(lo) || isnan(hi))
			return oi_fail(c->im, "NaN bounds");
		if (lo > hi)
			lo = hi;	/* numpy's clip: max everywhere */
		d.op.clip.min = (float)lo;
		d.op.clip.max = (float)hi;
	}
	return oi_emit(c, &d, &in, 1, oi_sym_dtype(x), r, dims);
}

/* Output size of one spatial axis; pads may be updated for auto_pad. */
static int spatial(struct nctx *c, uint32_t in, uint32_t k, uint32_t s, uint32_t dil,
		   uint32_t *pb, uint32_t *pe, const char *autopad, bool ceil_mode,
		   uint32_t *out)
{
	uint64_t dk = (uint64_t)(k - 1) * dil + 1, span, o;

	if (autopad && (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER"))) {
		uint64_t total;

		o = (in + (uint64_t)s - 1) / s;
		total = (o - 1) * s + dk > in ? (o - 1) * s + dk - in : 0;
		*pb = (uint32_t)(!strcmp(autopad, "SAME_UPPER") ? total / 2 : (total + 1) / 2);
		*pe = (uint32_t)(total - *pb);
		*out = (uint32_t)o;
		return 0;
	}
	if (autopad && !strcmp(autopad, "VALID"))
		*pb = *pe = 0;
	else if (autopad && strcmp(autopad, "NOTSET"))
		return oi_fail(c->im, "auto_pad '%s' unknown", autopad);
	span = (uint64_t)in + *pb + *pe;
	if (span < dk)
		return oi_fail(c->im, "the window (%" PRIu64 ") is larger than the padded input (%" PRIu64 ")",
			    dk, span);
	o = (span - dk) / s + 1;
	if (ceil_mode && (span - dk) % s) {
		/* ceil mode adds a last, partial window */
		return oi_fail(c->im, "ceil_mode with a partial last window is not supported");
	}
	*out = (uint32_t)o;
	return 0;
}

/* kernel, strides, dilations and pads of a 2-D conv/pool. */
struct win {
	uint32_t k[2], s[2], d[2], p[4];	/* p: top, left, bottom, right */
};

/*
 * The window of a conv/pool with @nsp (1 or 2) spatial dims, as 2-D:
 * 1-D is H = 1 (xd is then [N, C, 1, L]), so the device's 2-D ops run it.
 */
static int window(struct nctx *c, const uint32_t *xd, const uint32_t *kshape, int nsp,
		  bool ceil_mode, struct win *w, uint32_t *oh, uint32_t *ow)
{
	int64_t v[8];
	char ap[32];
	const char *autopad = oi_attr_s(c, "auto_pad", ap, sizeof(ap));
	int n, i, ret, off = 2 - nsp;	/* 1-D values go to the W slots */

	for (i = 0; i < 2; i++) {
		w->k[i] = kshape[i];
		w->s[i] = 1;
		w->d[i] = 1;
	}
	memset(w->p, 0, sizeof(w->p));
	n = oi_attr_ints(c, "strides", v, 8);
	if (n >= 0 && n != nsp)
		return oi_fail(c->im, "strides must have %d values", nsp);
	for (i = 0; i < n; i++) {
		if (v[i] < 1 || v[i] > 65535)
			return oi_fail(c->im, "bad stride %" PRId64, v[i]);
		w->s[off + i] = (uint32_t)v[i];
	}
	n = oi_attr_ints(c, "dilations", v, 8);
	if (n >= 0 && n != nsp)
		return oi_fail(c->im, "dilations must have %d values", nsp);
	for (i = 0; i < n; i++) {
		if (v[i] < 1 || v[i] > 65535)
			return oi_fail(c->im, "bad dilation %" PRId64, v[i]);
		w->d[off + i] = (uint32_t)v[i];
	}
	n = oi_attr_ints(c, "pads", v, 8);
	if (n >= 0 && n != 2 * nsp)
		return oi_fail(c->im, "pads must have %d values", 2 * nsp);
	for (i = 0; i < n; i++) {
		if (v[i] < 0 || v[i] > 65535)
			return oi_fail(c->im, "bad pad %" PRId64, v[i]);
	}
	if (n == 4) {
		/* ONNX: h_begin, w_begin, h_end, w_end; libnpu: t, l, b, r */
		w->p[0] = (uint32_t)v[0];
		w->p[1] = (uint32_t)v[1];
		w->p[2] = (uint32_t)v[2];
		w->p[3] = (uint32_t)v[3];
	} else if (n == 2) {
		w->p[1] = (uint32_t)v[0];
		w->p[3] = (uint32_t)v[1];
	}
	if (!w->k[0] || !w->k[1] || w->k[0] > 65535 || w->k[1] > 65535)
		return oi_fail(c->im, "bad kernel shape");
	ret = spatial(c, xd[2], w->k[0], w->s[0], w->d[0], &w->p[0], &w->p[2],
		      nsp == 1 ? NULL : autopad, ceil_mode, oh);
	if (!ret)
		ret = spatial(c, xd[3], w->k[1], w->s[1], w->d[1], &w->p[1], &w->p[3], autopad,
			      ceil_mode, ow);
	return ret;
}

/*
 * A 1-D op's input [N, C, L] (or W [CO, CI, K]) as 4-D [N, C, 1, L]: a
 * RESHAPE, which costs nothing (a static W folds at compile).
 */
static int as_2d(struct nctx *c, uint32_t *id, enum npu_dtype dt, const uint32_t *d3)
{
	uint32_t d4[4] = { d3[0], d3[1], 1, d3[2] };

	return oi_reshape_tmp(c, *id, dt, 4, d4, id);
}

/* Emit @d writing 4-D @yd4, whose output is the node's 3-D [N, C, L]. */
static int emit_1d(struct nctx *c, struct oi_node *d, const uint32_t *in, uint32_t nin,
		   enum npu_dtype dt, const uint32_t *yd4)
{
	struct oi_node r = { .kind = NPU_NODE_RESHAPE };
	uint32_t tmp, yd3[3] = { yd4[0], yd4[1], yd4[3] };
	int ret = oi_tmp_value(c->im, dt, 4, yd4, &tmp);

	if (ret)
		return ret;
	d->name = c->name;
	d->inputs = in;
	d->num_inputs = nin;
	d->output = tmp;
	ret = oi_add_node(c->im, d);
	return ret ? ret : oi_emit(c, &r, &tmp, 1, dt, 3, yd3);
}

int oi_conv_geometry(struct nctx *c, struct sym *x, struct sym *w, struct npu_op_params *op,
		     uint32_t *xd, uint32_t *wd, uint32_t *yd, bool *one_d_out)
{
	uint32_t rx, rw, ks[2];
	int64_t g = oi_attr_i(c, "group", 1), v[8];
	bool one_d;
	struct win win;
	int ret, n;

	ret = oi_sym_shape(c, x, &rx, xd);
	if (!ret)
		ret = oi_sym_shape(c, w, &rw, wd);
	if (ret)
		return ret;
	one_d = rx == 3 && rw == 3;
	if (!one_d && (rx != 4 || rw != 4))
		return oi_fail(c->im, "only 1-D and 2-D convolution (3-D or 4-D X and W) run on the device");
	if (one_d) {
		/* [N, C, L] as [N, C, 1, L] */
		xd[3] = xd[2];
		xd[2] = 1;
		wd[3] = wd[2];
		wd[2] = 1;
	}
	if (g < 1 || g > xd[1] || xd[1] % g || wd[0] % g || wd[1] * (uint64_t)g != xd[1])
		return oi_fail(c->im, "group %" PRId64 " does not fit C=%u, W=[%u,%u,..]", g, xd[1],
			    wd[0], wd[1]);
	n = oi_attr_ints(c, "kernel_shape", v, 8);
	if (n >= 0 && (one_d ? n != 1 || v[0] != wd[3] :
			       n != 2 || v[0] != wd[2] || v[1] != wd[3]))
		return oi_fail(c->im, "kernel_shape disagrees with W");
	ks[0] = wd[2];
	ks[1] = wd[3];
	ret = window(c, xd, ks, one_d ? 1 : 2, false, &win, &yd[2], &yd[3]);
	if (ret)
		return ret;
	yd[0] = xd[0];
	yd[1] = wd[0];
	op->kind = NPU_OP_CONV2D;
	memcpy(op->conv.stride, win.s, sizeof(win.s));
	memcpy(op->conv.dilation, win.d, sizeof(win.d));
	memcpy(op->conv.pad, win.p, sizeof(win.p));
	op->conv.groups = (uint32_t)g;
	*one_d_out = one_d;
	return 0;
}

int oi_op_conv(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW };
	struct sym *x = NULL, *w = NULL, *b = c->nin > 2 ? c->in[2] : NULL;
	uint32_t xd[8], wd[8], in[3], nin = 2, yd[4];
	bool one_d;
	int ret;

	ret = oi_qdq_unit(c);
	if (ret <= 0)
		return ret;

	ret = oi_need_in(c, 0, &x);
	if (!ret)
		ret = oi_need_in(c, 1, &w);
	if (ret)
		return ret;
	if (!float_dtype(oi_sym_dtype(x)) || !float_dtype(oi_sym_dtype(w)))
		return oi_fail(c->im, "convolution of unquantized integers has no device op");
	ret = oi_conv_geometry(c, x, w, &d.op, xd, wd, yd, &one_d);
	if (ret)
		return ret;
	ret = oi_value_of(c->im, x, &in[0]);
	if (!ret)
		ret = oi_value_of(c->im, w, &in[1]);
	if (!ret && b) {
		ret = oi_value_of(c->im, b, &in[2]);
		nin = 3;
	}
	if (ret)
		return ret;
	if (!one_d)
		return oi_emit(c, &d, in, nin, oi_sym_dtype(x), 4, yd);
	{
		uint32_t x3[3] = { xd[0], xd[1], xd[3] }, w3[3] = { wd[0], wd[1], wd[3] };

		ret = as_2d(c, &in[0], oi_sym_dtype(x), x3);
		if (!ret)
			ret = as_2d(c, &in[1], oi_sym_dtype(w), w3);
	}
	return ret ? ret : emit_1d(c, &d, in, nin, oi_sym_dtype(x), yd);
}

int oi_op_pool(struct nctx *c, enum npu_pool_kind kind, bool global)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW };
	struct sym *x = NULL;
	uint32_t rx, xd[8], yd[4], ks[2], in;
	bool one_d;
	int64_t v[8];
	struct win win;
	int ret, n;

	ret = oi_need_in(c, 0, &x);
	if (!ret)
		ret = oi_sym_shape(c, x, &rx, xd);
	if (ret)
		return ret;
	one_d = rx == 3;
	if (!one_d && rx != 4)
		return oi_fail(c->im, "only 1-D and 2-D pooling (3-D or 4-D X) run on the device");
	if (!float_dtype(oi_sym_dtype(x)))
		return oi_fail(c->im, "pooling of unquantized integers has no device op");
	if (one_d) {
		xd[3] = xd[2];
		xd[2] = 1;
	}
	d.op.kind = NPU_OP_POOL2D;
	d.op.pool.kind = kind;
	yd[0] = xd[0];
	yd[1] = xd[1];
	if (global) {
		if (kind == NPU_POOL_AVG) {
			d.op.pool.kind = NPU_POOL_GLOBAL_AVG;
		} else {
			if (xd[2] > 65535 || xd[3] > 65535)
				return oi_fail(c->im, "window too large");
			d.op.pool.kernel[0] = xd[2];
			d.op.pool.kernel[1] = xd[3];
			d.op.pool.stride[0] = d.op.pool.stride[1] = 1;
		}
		yd[2] = yd[3] = 1;
	} else {
		n = oi_attr_ints(c, "kernel_shape", v, 8);
		if (n != (one_d ? 1 : 2) || v[0] < 1 || v[n - 1] < 1 || v[0] > 65535 ||
		    v[n - 1] > 65535)
			return oi_fail(c->im, "kernel_shape must be %d positive values", one_d ? 1 : 2);
		ks[0] = one_d ? 1 : (uint32_t)v[0];
		ks[1] = (uint32_t)v[n - 1];
		ret = window(c, xd, ks, one_d ? 1 : 2, oi_attr_i(c, "ceil_mode", 0) != 0, &win,
			     &yd[2], &yd[3]);
		if (ret)
			return ret;
		memcpy(d.op.pool.kernel, win.k, sizeof(win.k));
		memcpy(d.op.pool.stride, win.s, sizeof(win.s));
		memcpy(d.op.pool.pad, win.p, sizeof(win.p));
		if (kind == NPU_POOL_MAX) {
			memcpy(d.op.pool.dilation, win.d, sizeof(win.d));
		} else {
			if (win.d[0] != 1 || win.d[1] != 1)
				return oi_fail(c->im, "dilated average pooling is not supported");
			d.op.pool.count_include_pad = oi_attr_i(c, "count_include_pad", 0) != 0;
		}
	}
	ret = oi_value_of(c->im, x, &in);
	if (ret)
		return ret;
	if (!one_d)
		return oi_emit(c, &d, &in, 1, oi_sym_dtype(x), 4, yd);
	{
		uint32_t x3[3] = { xd[0], xd[1], xd[3] };

		ret = as_2d(c, &in, oi_sym_dtype(x), x3);
	}
	return ret ? ret : emit_1d(c, &d, &in, 1, oi_sym_dtype(x), yd);
}

/* A RESHAPE of graph value @src into a new value; *@id receives it. */
int oi_reshape_tmp(struct nctx *c, uint32_t src, enum npu_dtype dt, uint32_t rank,
		   const uint32_t *dims, uint32_t *id)
{
	struct oi_node d = { .kind = NPU_NODE_RESHAPE, .name = c->name };
	int ret = oi_tmp_value(c->im, dt, rank, dims, id);

	if (ret)
		return ret;
	d.inputs = &src;
	d.num_inputs = 1;
	d.output = *id;
	return oi_add_node(c->im, &d);
}

int oi_op_matmul(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *a = NULL, *b = NULL;
	uint32_t ra, rb, da[8], db[8], in[2], rbat, bat[8], yd[8], ry, i, mid;
	bool a1, b1;
	int ret;

	ret = oi_qdq_unit(c);
	if (ret <= 0)
		return ret;

	ret = oi_need_in(c, 0, &a);
	if (!ret)
		ret = oi_need_in(c, 1, &b);
	if (!ret)
		ret = oi_sym_shape(c, a, &ra, da);
	if (!ret)
		ret = oi_sym_shape(c, b, &rb, db);
	if (!ret)
		ret = oi_value_of(c->im, a, &in[0]);
	if (!ret)
		ret = oi_value_of(c->im, b, &in[1]);
	if (ret)
		return ret;
	if (!ra || !rb)
		return oi_fail(c->im, "scalar operands");
	a1 = ra == 1;
	b1 = rb == 1;
	/* 1-D operands are promoted to matrices and the extra dim dropped. */
	if (a1) {
		da[1] = da[0];
		da[0] = 1;
		ra = 2;
		ret = oi_reshape_tmp(c, in[0], oi_sym_dtype(a), 2, da, &in[0]);
	}
	if (!ret && b1) {
		db[1] = 1;
		rb = 2;
		ret = oi_reshape_tmp(c, in[1], oi_sym_dtype(b), 2, db, &in[1]);
	}
	if (ret)
		return ret;
	if (da[ra - 1] != db[rb - 2])
		return oi_fail(c->im, "inner dimensions differ (%u vs %u)", da[ra - 1], db[rb - 2]);
	ret = oi_broadcast(c, ra - 2, da, rb - 2, db, &rbat, bat);
	if (ret)
		return ret;
	memcpy(yd, bat, 4ull * rbat);
	yd[rbat] = da[ra - 2];
	yd[rbat + 1] = db[rb - 1];
	ry = rbat + 2;
	if (ry > NPU_TENSOR_MAX_RANK)
		return oi_fail(c->im, "rank above %d", NPU_TENSOR_MAX_RANK);
	d.op.kind = NPU_OP_GEMM;
	if (!a1 && !b1)
		return oi_emit(c, &d, in, 2, oi_sym_dtype(a), ry, yd);
	/* GEMM into a temporary, then drop the promoted dims. */
	ret = oi_tmp_value(c->im, oi_sym_dtype(a), ry, yd, &mid);
	if (ret)
		return ret;
	d.name = c->name;
	d.inputs = in;
	d.num_inputs = 2;
	d.output = mid;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	{
		uint32_t od[8], r = 0;

		for (i = 0; i < ry; i++) {
			if ((a1 && i == ry - 2) || (b1 && i == ry - 1))
				continue;
			od[r++] = yd[i];
		}
		d = (struct oi_node){ .kind = NPU_NODE_RESHAPE };
		return oi_emit(c, &d, &mid, 1, oi_sym_dtype(a), r, od);
	}
}

/* Gemm's nodes once alpha and beta are folded into B and C. */
static int gemm_nodes(struct nctx *c, struct sym *a, struct sym *b, struct sym *cc,
		      uint32_t rc, const uint32_t *dc, uint32_t *yd, bool ta, bool tb)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	uint32_t in[3], mid;
	int ret;

	d.op.kind = NPU_OP_GEMM;
	d.op.gemm.flags = (ta ? NPU_GEMM_TRANS_A : 0) | (tb ? NPU_GEMM_TRANS_B : 0);
	ret = oi_value_of(c->im, a, &in[0]);
	if (!ret)
		ret = oi_value_of(c->im, b, &in[1]);
	if (ret)
		return ret;
	if (!cc)
		return oi_emit(c, &d, in, 2, oi_sym_dtype(a), 2, yd);
	{
		uint32_t r, bd[8];

		ret = oi_broadcast(c, rc, dc, 2, yd, &r, bd);
		if (ret)
			return ret;
		if (r != 2 || bd[0] != yd[0] || bd[1] != yd[1])
			return oi_fail(c->im, "C does not broadcast to [M, N]");
	}
	/* A per-column C is GEMM's bias; anything else an ADD after it. */
	if (cc->is_const && cc->c.n == yd[1] && (rc == 1 || (rc == 2 && dc[0] == 1))) {
		struct sym tmp = *cc;

		if (rc == 2) {
			/* the bias is 1-D: a reshaped constant of its own */
			ret = oi_value_of(c->im, cc, &in[2]);
			if (ret)
				return ret;
			ret = oi_reshape_tmp(c, in[2], NPU_DTYPE_FP32, 1, &yd[1], &in[2]);
		} else {
			ret = oi_value_of(c->im, cc, &in[2]);
		}
		(void)tmp;
		return ret ? ret : oi_emit(c, &d, in, 3, oi_sym_dtype(a), 2, yd);
	}
	ret = oi_tmp_value(c->im, oi_sym_dtype(a), 2, yd, &mid);
	if (ret)
		return ret;
	d.name = c->name;
	d.inputs = in;
	d.num_inputs = 2;
	d.output = mid;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	in[0] = mid;
	ret = oi_value_of(c->im, cc, &in[1]);
	if (ret)
		return ret;
	d = (struct oi_node){ .kind = NPU_NODE_OP };
	d.op.kind = NPU_OP_ELTWISE;
	d.op.eltwise.kind = NPU_ELTWISE_ADD;
	return oi_emit(c, &d, in, 2, oi_sym_dtype(a), 2, yd);
}

int oi_op_gemm(struct nctx *c)
{
	struct sym *a = NULL, *b = NULL, *cc = c->nin > 2 ? c->in[2] : NULL;
	struct sym bs = { 0 }, cs = { 0 };
	float alpha = oi_attr_f(c, "alpha", 1.0f), beta = oi_attr_f(c, "beta", 1.0f);
	uint32_t ra, rb, rc = 0, da[8], db[8], dc[8], yd[2];
	bool ta = oi_attr_i(c, "transA", 0), tb = oi_attr_i(c, "transB", 0);
	int ret;

	ret = oi_qdq_unit(c);
	if (ret <= 0)
		return ret;

	ret = oi_need_in(c, 0, &a);
	if (!ret)
		ret = oi_need_in(c, 1, &b);
	if (!ret)
		ret = oi_sym_shape(c, a, &ra, da);
	if (!ret)
		ret = oi_sym_shape(c, b, &rb, db);
	if (!ret && cc)
		ret = oi_sym_shape(c, cc, &rc, dc);
	if (ret)
		return ret;
	if (ra != 2 || rb != 2)
		return oi_fail(c->im, "A and B must be 2-D");
	if ((ta ? da[0] : da[1]) != (tb ? db[1] : db[0]))
		return oi_fail(c->im, "inner dimensions differ");
	yd[0] = ta ? da[1] : da[0];
	yd[1] = tb ? db[0] : db[1];
	/* alpha and beta fold into private scaled copies of constant B, C */
	if (alpha != 1.0f && (!b->is_const || b->c.dt != OT_FLOAT))
		return oi_fail(c->im, "alpha != 1 needs a constant float B");
	if (cc && beta != 1.0f && (!cc->is_const || cc->c.dt != OT_FLOAT))
		return oi_fail(c->im, "beta != 1 needs a constant float C");
	if (alpha != 1.0f) {
		bs = *b;
		bs.value = NPU_VALUE_NONE;
		if (ctensor_scaled(&b->c, alpha, &bs.c))
			return oi_nomem(c->im);
		b = &bs;
	}
	if (cc && beta != 1.0f) {
		cs = *cc;
		cs.value = NPU_VALUE_NONE;
		if (ctensor_scaled(&cc->c, beta, &cs.c)) {
			ctensor_free(&bs.c);
			return oi_nomem(c->im);
		}
		cc = &cs;
	}
	ret = gemm_nodes(c, a, b, cc, rc, dc, yd, ta, tb);
	ctensor_free(&bs.c);
	ctensor_free(&cs.c);
	return ret;
}

int oi_op_softmax(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = NULL;
	int64_t axis = oi_attr_i(c, "axis", c->opset >= 13 ? -1 : 1);
	uint32_t r, xd[8], in, d2[2] = { 1, 1 }, i, mid, res;
	int ret = oi_qdq_unit(c);

	if (ret <= 0)
		return ret;
	ret = oi_need_in(c, 0, &x);
	if (!ret)
		ret = oi_sym_shape(c, x, &r, xd);
	if (!ret)
		ret = oi_value_of(c->im, x, &in);
	if (ret)
		return ret;
	if (!r)
		return oi_fail(c->im, "scalar input");
	if (axis < -(int64_t)r || axis >= (int64_t)r)
		return oi_fail(c->im, "axis %" PRId64 " out of range", axis);
	if (axis < 0)
		axis += r;
	d.op.kind = NPU_OP_SOFTMAX;
	if (c->opset >= 13 || axis == (int64_t)r - 1) {
		d.op.softmax.axis = (uint32_t)axis;
		return oi_emit(c, &d, &in, 1, oi_sym_dtype(x), r, xd);
	}
	/* Before opset 13 the input is coerced to 2-D at @axis. */
	for (i = 0; i < r; i++)
		d2[i >= axis] *= xd[i];
	ret = oi_reshape_tmp(c, in, oi_sym_dtype(x), 2, d2, &mid);
	if (!ret)
		ret = oi_tmp_value(c->im, oi_sym_dtype(x), 2, d2, &res);
	if (ret)
		return ret;
	d.op.softmax.axis = 1;
	d.name = c->name;
	d.inputs = &mid;
	d.num_inputs = 1;
	d.output = res;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	d = (struct oi_node){ .kind = NPU_NODE_RESHAPE };
	return oi_emit(c, &d, &res, 1, oi_sym_dtype(x), r, xd);
}

int oi_op_layernorm(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = NULL, *s = NULL, *b = c->nin > 2 ? c->in[2] : NULL;
	int64_t axis = oi_attr_i(c, "axis", -1);
	uint32_t r, xd[8], rs, sd[8], in[3], nin = 2, k;
	uint64_t cnt = 1, n2;
	int ret = oi_need_in(c, 0, &x);

	if (!ret)
		ret = oi_need_in(c, 1, &s);
	if (!ret)
		ret = oi_sym_shape(c, x, &r, xd);
	if (ret)
		return ret;
	if (!r || axis < -(int64_t)r || axis >= (int64_t)r)
		return oi_fail(c->im, "axis %" PRId64 " out of range", axis);
	if (axis < 0)
		axis += r;
	for (k = (uint32_t)axis; k < r; k++)
		cnt *= xd[k];
	for (k = 1; k < 3; k++) {
		struct sym *p = k == 1 ? s : b;

		if (!p)
			continue;
		ret = oi_sym_shape(c, p, &rs, sd);
		if (ret)
			return ret;
		for (n2 = 1; rs; rs--)
			n2 *= sd[rs - 1];
		if (n2 != cnt)
			return oi_fail(c->im, "Scale/B broadcast over the normalized dims is not supported");
		ret = oi_value_of(c->im, p, &in[k]);
		if (!ret)
			ret = oi_reshape_tmp(c, in[k], oi_sym_dtype(p), r - (uint32_t)axis, xd + axis, &in[k]);
		if (ret)
			return ret;
		nin = k + 1;
	}
	ret = oi_value_of(c->im, x, &in[0]);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_LAYERNORM;
	d.op.layernorm.axis = (uint32_t)axis;
	d.op.layernorm.epsilon = oi_attr_f(c, "epsilon", 1e-5f);
	return oi_emit(c, &d, in, nin, oi_sym_dtype(x), r, xd);
}

int oi_op_batchnorm(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_BATCHNORM };
	uint32_t in[5], r, xd[8], i;
	struct sym *x = NULL;
	int ret;

	if (oi_attr_i(c, "training_mode", 0))
		return oi_fail(c->im, "training mode is not supported");
	if (c->nin != 5)
		return oi_fail(c->im, "needs X, scale, B, mean and var");
	for (i = 1; i < 5; i++)
		if (!c->in[i] || !c->in[i]->is_const)
			return oi_fail(c->im, "scale, B, mean and var must be constants to fold into the device's ops");
	for (i = 0; i < 5; i++) {
		struct sym *s = NULL;

		ret = oi_need_in(c, i, &s);
		if (!ret)
			ret = oi_value_of(c->im, s, &in[i]);
		if (ret)
			return ret;
	}
	x = c->in[0];
	ret = oi_sym_shape(c, x, &r, xd);
	if (ret)
		return ret;
	d.epsilon = oi_attr_f(c, "epsilon", 1e-5f);
	return oi_emit(c, &d, in, 5, oi_sym_dtype(x), r, xd);
}

/*
 * Max and Min: of one input a copy, of a tensor and a constant scalar a
 * clip, else ELTWISE MAX/MIN (several inputs pairwise, left to right).
 */
int oi_op_minmax(struct nctx *c, bool is_max)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = NULL, *k = NULL;
	uint32_t r, dims[8], in[2], ra, da[8], yd[8], i;
	enum npu_dtype dt;
	double v;
	int ret;

	for (i = 0; i < c->nin; i++)
		if (!c->in[i])
			return oi_fail(c->im, "input %u is required", i);
	if (!c->nin)
		return oi_fail(c->im, "no inputs");
	if (c->nin == 1) {
		d.kind = NPU_NODE_RESHAPE;
		ret = oi_sym_shape(c, c->in[0], &r, dims);
		if (!ret)
			ret = oi_value_of(c->im, c->in[0], &in[0]);
		return ret ? ret : oi_emit(c, &d, in, 1, oi_sym_dtype(c->in[0]), r, dims);
	}
	if (c->nin == 2) {
		x = c->in[0]->is_const ? c->in[1] : c->in[0];
		k = c->in[0]->is_const ? c->in[0] : c->in[1];
		if (!x->is_const && k->is_const && k->c.n == 1 && k->c.rank <= x->rank &&
		    !isnan(v = ctensor_get(&k->c, 0))) {
			ret = oi_sym_shape(c, x, &r, dims);
			if (!ret)
				ret = oi_value_of(c->im, x, &in[0]);
			if (ret)
				return ret;
			d.op.kind = NPU_OP_ACTIVATION;
			d.op.act = NPU_ACT_CLIP;
			d.op.clip.min = is_max ? (float)v : -INFINITY;
			d.op.clip.max = is_max ? INFINITY : (float)v;
			return oi_emit(c, &d, in, 1, oi_sym_dtype(x), r, dims);
		}
	}
	dt = oi_sym_dtype(c->in[0]);
	ret = oi_sym_shape(c, c->in[0], &r, dims);
	if (!ret)
		ret = oi_value_of(c->im, c->in[0], &in[0]);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_ELTWISE;
	d.op.eltwise.kind = is_max ? NPU_ELTWISE_MAX : NPU_ELTWISE_MIN;
	for (i = 1; i < c->nin; i++) {
		if (oi_sym_dtype(c->in[i]) != dt)
			return oi_fail(c->im, "inputs of different element types");
		ret = oi_sym_shape(c, c->in[i], &ra, da);
		if (!ret)
			ret = oi_broadcast(c, r, dims, ra, da, &r, yd);
		if (!ret) {
			memcpy(dims, yd, sizeof(dims));
			ret = oi_value_of(c->im, c->in[i], &in[1]);
		}
		if (ret)
			return ret;
		if (r > NPU_TENSOR_MAX_RANK)
			return oi_fail(c->im, "rank %u above %d", r, NPU_TENSOR_MAX_RANK);
		if (i + 1 == c->nin)
			break;
		{
			struct oi_node t = d;
			uint32_t mid;

			ret = oi_tmp_value(c->im, dt, r, dims, &mid);
			if (ret)
				return ret;
			t.name = c->name;
			t.inputs = in;
			t.num_inputs = 2;
			t.output = mid;
			ret = oi_add_node(c->im, &t);
			if (ret)
				return ret;
			in[0] = mid;
		}
	}
	return oi_emit(c, &d, in, 2, dt, r, dims);
}

/*
 * ReduceMean/Sum/Max/Min/L2/SumSquare: axes from the attribute (before
 * opset 18; ReduceSum from 13) or the second input, all dims when none
 * are given (unless noop_with_empty_axes), keepdims a free reshape.
 */
int oi_op_reduce(struct nctx *c, enum npu_reduce_kind kind)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = NULL;
	const struct sym *ax = c->nin > 1 ? c->in[1] : NULL;
	bool keep = oi_attr_i(c, "keepdims", 1) != 0;
	uint32_t r, xd[8], yd[8], kd[8], in, i, nk = 0, mid;
	int64_t axes[8];
	int n = -1;
	int ret = oi_need_in(c, 0, &x);

	if (!ret)
		ret = oi_sym_shape(c, x, &r, xd);
	if (!ret)
		ret = oi_value_of(c->im, x, &in);
	if (ret)
		return ret;
	if (!r)
		return oi_fail(c->im, "a scalar input");
	if (oi_sym_dtype(x) != NPU_DTYPE_FP32)
		return oi_fail(c->im, "only fp32 tensors are supported");
	if (ax && !(ax->is_const && !ax->c.n)) {
		uint64_t k;

		if (!ax->is_const || ct_is_float(&ax->c) || ax->c.rank > 1)
			return oi_fail(c->im, "axes must be a constant 1-D integer tensor");
		if (ax->c.n > 8)
			return oi_fail(c->im, "too many axes");
		for (k = 0; k < ax->c.n; k++)
			axes[k] = ax->c.i[k];
		n = (int)ax->c.n;
	} else if (!ax) {
		n = oi_attr_ints(c, "axes", axes, 8);
		if (n == -2)
			return oi_fail(c->im, "too many axes");
	}
	d.op.kind = NPU_OP_REDUCE;
	d.op.reduce.kind = kind;
	if (n <= 0) {
		if (oi_attr_i(c, "noop_with_empty_axes", 0)) {
			d = (struct oi_node){ .kind = NPU_NODE_RESHAPE };
			return oi_emit(c, &d, &in, 1, NPU_DTYPE_FP32, r, xd);
		}
		d.op.reduce.axes = (1u << r) - 1;
	}
	for (i = 0; n > 0 && i < (uint32_t)n; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];

		if (a < 0 || a >= (int64_t)r)
			return oi_fail(c->im, "axis %" PRId64 " out of range for rank %u", axes[i], r);
		d.op.reduce.axes |= 1u << a;
	}
	for (i = 0; i < r; i++) {
		yd[i] = (d.op.reduce.axes >> i) & 1 ? 1 : xd[i];
		if (!((d.op.reduce.axes >> i) & 1))
			kd[nk++] = xd[i];
	}
	if (keep)
		return oi_emit(c, &d, &in, 1, NPU_DTYPE_FP32, r, yd);
	/* the device keeps the reduced dims; dropping them is a reshape */
	ret = oi_tmp_value(c->im, NPU_DTYPE_FP32, r, yd, &mid);
	if (ret)
		return ret;
	d.name = c->name;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = mid;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	d = (struct oi_node){ .kind = NPU_NODE_RESHAPE };
	return oi_emit(c, &d, &mid, 1, NPU_DTYPE_FP32, nk, kd);	/* nk 0: a scalar */
}

/*
 * ConvTranspose (2-D): output_shape and auto_pad become pads as ONNX's
 * reference computes them; a negative end pad is extra output padding.
 */
int oi_conv_transpose_geometry(struct nctx *c, struct sym *x, struct sym *w,
			       struct npu_op_params *p, uint32_t *xd, uint32_t *wd, uint32_t *yd)
{
	uint32_t rx, rw, i;
	int64_t g = oi_attr_i(c, "group", 1), v[8], st[2] = { 1, 1 }, dl[2] = { 1, 1 };
	int64_t pb[2] = { 0, 0 }, pe[2] = { 0, 0 }, op[2] = { 0, 0 }, os[2] = { 0, 0 };
	char ap[32];
	const char *autopad = oi_attr_s(c, "auto_pad", ap, sizeof(ap));
	bool given, same = false, upper = false;
	int ret, n;

	ret = oi_sym_shape(c, x, &rx, xd);
	if (!ret)
		ret = oi_sym_shape(c, w, &rw, wd);
	if (ret)
		return ret;
	if (rx != 4 || rw != 4)
		return oi_fail(c->im, "only 2-D ConvTranspose (4-D X and W) is supported");
	if (g < 1 || g > xd[1] || xd[1] % g || wd[0] != xd[1] ||
	    (uint64_t)wd[1] * (uint64_t)g > 65536)
		return oi_fail(c->im, "group %" PRId64 " does not fit C=%u, W=[%u,%u,..]", g, xd[1],
			       wd[0], wd[1]);
	if (!wd[2] || !wd[3] || wd[2] > 65535 || wd[3] > 65535)
		return oi_fail(c->im, "bad kernel shape");
	n = oi_attr_ints(c, "kernel_shape", v, 8);
	if (n >= 0 && (n != 2 || v[0] != wd[2] || v[1] != wd[3]))
		return oi_fail(c->im, "kernel_shape disagrees with W");
	if (autopad && !strcmp(autopad, "SAME_UPPER"))
		same = upper = true;
	else if (autopad && !strcmp(autopad, "SAME_LOWER"))
		same = true;
	else if (autopad && strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID"))
		return oi_fail(c->im, "auto_pad '%s' unknown", autopad);
	{
		static const char *const names[4] = { "strides", "dilations", "output_padding",
						      "output_shape" };
		int64_t *dst[4] = { st, dl, op, os };
		int k;

		for (k = 0; k < 4; k++) {
			n = oi_attr_ints(c, names[k], v, 8);
			if (n < 0)
				continue;
			if (n != 2)
				return oi_fail(c->im, "%s must have 2 values (2-D only)", names[k]);
			for (i = 0; i < 2; i++) {
				if (v[i] < (k < 2 ? 1 : 0) || v[i] > (k == 3 ? UINT32_MAX : 65535))
					return oi_fail(c->im, "bad %s value %" PRId64, names[k], v[i]);
				dst[k][i] = v[i];
			}
		}
	}
	given = oi_attr(c, "output_shape") != NULL;
	if (given)
		upper = false;
	n = oi_attr_ints(c, "pads", v, 8);
	if (n >= 0 && n != 4)
		return oi_fail(c->im, "pads must have 4 values (2-D only)");
	for (i = 0; n == 4 && i < 2; i++) {
		if (v[i] < 0 || v[i] > 65535 || v[2 + i] < 0 || v[2 + i] > 65535)
			return oi_fail(c->im, "bad pad");
		pb[i] = v[i];
		pe[i] = v[2 + i];
	}
	if (autopad && !strcmp(autopad, "VALID"))
		pb[0] = pb[1] = pe[0] = pe[1] = 0;
	for (i = 0; i < 2; i++) {
		int64_t dk = (wd[2 + i] - 1) * dl[i] + 1, o;

		if (given || same) {
			int64_t tot, lo;

			if (!given)
				os[i] = (int64_t)xd[2 + i] * st[i];
			tot = st[i] * ((int64_t)xd[2 + i] - 1) + op[i] + dk - os[i];
			lo = tot >= 0 ? tot / 2 : -((-tot + 1) / 2);
			pb[i] = upper ? lo : tot - lo;
			pe[i] = upper ? tot - lo : lo;
		}
		if (pe[i] < 0) {
			op[i] -= pe[i];
			pe[i] = 0;
		}
		if (pb[i] < 0 || pb[i] > 65535 || pe[i] > 65535 || op[i] > 65535)
			return oi_fail(c->im, "the output shape needs padding the op cannot express");
		o = ((int64_t)xd[2 + i] - 1) * st[i] + dk - pb[i] - pe[i] + op[i];
		if (o < 1 || o > UINT32_MAX)
			return oi_fail(c->im, "output dim %u would be %" PRId64, 2 + i, o);
		yd[2 + i] = (uint32_t)o;
		p->conv_transpose.stride[i] = (uint32_t)st[i];
		p->conv_transpose.dilation[i] = (uint32_t)dl[i];
		p->conv_transpose.output_pad[i] = (uint32_t)op[i];
		p->conv_transpose.pad[i] = (uint32_t)pb[i];
		p->conv_transpose.pad[2 + i] = (uint32_t)pe[i];
	}
	yd[0] = xd[0];
	yd[1] = wd[1] * (uint32_t)g;
	p->kind = NPU_OP_CONV_TRANSPOSE;
	p->conv_transpose.groups = (uint32_t)g;
	return 0;
}

int oi_op_conv_transpose(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW };
	struct sym *x = NULL, *w = NULL, *b = c->nin > 2 ? c->in[2] : NULL;
	uint32_t xd[8], wd[8], in[3], nin = 2, yd[4];
	int ret;

	ret = oi_qdq_unit(c);
	if (ret <= 0)
		return ret;
	ret = oi_need_in(c, 0, &x);
	if (!ret)
		ret = oi_need_in(c, 1, &w);
	if (ret)
		return ret;
	if (oi_sym_dtype(x) != NPU_DTYPE_FP32 || oi_sym_dtype(w) != NPU_DTYPE_FP32)
		return oi_fail(c->im, "only fp32 tensors are supported");
	ret = oi_conv_transpose_geometry(c, x, w, &d.op, xd, wd, yd);
	if (ret)
		return ret;
	ret = oi_value_of(c->im, x, &in[0]);
	if (!ret)
		ret = oi_value_of(c->im, w, &in[1]);
	if (!ret && b) {
		uint32_t rb, bd[8];

		ret = oi_sym_shape(c, b, &rb, bd);
		if (!ret && (rb != 1 || bd[0] != yd[1]))
			return oi_fail(c->im, "B must be 1-D of %u elements", yd[1]);
		if (!ret)
			ret = oi_value_of(c->im, b, &in[2]);
		nin = 3;
	}
	if (ret)
		return ret;
	return oi_emit(c, &d, in, nin, NPU_DTYPE_FP32, 4, yd);
}
