// SPDX-License-Identifier: MIT
/*
 * Quantized ONNX on the device: QuantizeLinear, DequantizeLinear,
 * QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, and the QDQ
 * form (DequantizeLinear -> Conv/ConvTranspose/MatMul/Gemm ->
 * QuantizeLinear).
 *
 * An 8-bit tensor of the model is an unquantized INT8/UINT8 graph value
 * or a quantized one (QuantizeLinear's output carries its scale and zero
 * point).  ONNX gives the quantization with each consumer, not with the
 * tensor, so a consumer sees the bytes through a RESHAPE to a value with
 * its own parameters when they differ: no work, the same memory.
 *
 * QDQ is fused as onnxruntime's CPU provider fuses it (its QDQ selectors
 * turn the same node units into QLinearConv, QLinearMatMul and QGemm):
 * the integer op reads the DequantizeLinear inputs, the int8 weights and
 * the int32 bias as stored, and writes the QuantizeLinear's output with
 * its parameters, requantizing in its epilogue (Documentation/ops.rst,
 * "Rounding", VNPU_ROUND_ONNX: onnxruntime's float multiplier, half to
 * even).  A unit that does not fit (a float output nobody quantizes, a
 * weight that is not a constant) stays float, as it does in onnxruntime.
 * The DequantizeLinear nodes are still imported; compile drops them when
 * nothing else reads their output.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"
#include "onnx_import.h"
#include "../../ops/vnpu_ref_qlinear.h"

/* ---- Parameters ----------------------------------------------------------- */

static bool is_named(const Onnx__NodeProto *n, const char *op)
{
	return n && n->op_type && !strcmp(n->op_type, op) &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"));
}

/* A constant scalar (or one-element) float scale, finite and > 0. */
static bool const_scale(const struct sym *s, float *out)
{
	if (!s || !s->is_const || s->c.n != 1 || !s->c.f || s->c.dt != OT_FLOAT)
		return false;
	*out = s->c.f[0];
	return *out > 0.0f && *out <= 3.4e38f;
}

/*
 * A constant zero point of one element (absent: 0 of @dflt); *@dt its
 * 8-bit dtype.
 */
static bool const_zp(const struct sym *s, enum npu_dtype dflt, int32_t *zp, enum npu_dtype *dt)
{
	if (!s) {
		*zp = 0;
		*dt = dflt;
		return true;
	}
	if (!s->is_const || s->c.n != 1 || !s->c.i ||
	    (s->c.dt != OT_INT8 && s->c.dt != OT_UINT8))
		return false;
	*zp = (int32_t)s->c.i[0];
	*dt = s->c.dt == OT_INT8 ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8;
	return true;
}

static struct sym *in_sym(const struct imp *im, const Onnx__NodeProto *n, size_t i)
{
	if (i >= n->n_input || !n->input[i] || !*n->input[i])
		return NULL;
	return oi_lookup((struct imp *)im, n->input[i]);
}

/* Per-tensor parameters of a Quantize/DequantizeLinear node @n. */
static bool node_qparams(const struct imp *im, const Onnx__NodeProto *n, enum npu_dtype dflt,
			 float *scale, int32_t *zp, enum npu_dtype *dt)
{
	return const_scale(in_sym(im, n, 1), scale) &&
	       const_zp(in_sym(im, n, 2), dflt, zp, dt);
}

/* ---- Values --------------------------------------------------------------- */

/*
 * The graph value of 8-bit runtime symbol @s read as quantized with
 * (@scale, @zp): its own value when its parameters are those, else a
 * RESHAPE into a value that has them.
 */
static int qview(struct nctx *c, struct sym *s, float scale, int32_t zp, uint32_t *id)
{
	struct npu_value_desc v = NPU_VALUE_DESC_INIT, t;
	struct oi_node r = { .kind = NPU_NODE_RESHAPE, .name = c->name };
	uint32_t src;
	int ret = oi_value_of(c->im, s, &src);

	if (ret)
		return ret;
	ret = npu_graph_get_value(c->im->m->g, src, &v);
	if (ret)
		return oi_fail(c->im, "tensor '%s' has no value", s->name);
	if (v.scale == scale && v.zero_point == zp) {
		*id = src;
		return 0;
	}
	t = v;
	t.name = "onnx-qview";
	t.flags = 0;
	t.data = NULL;
	t.scale = scale;
	t.zero_point = zp;
	ret = npu_graph_add_value(c->im->m->g, &t, id);
	if (ret)
		return oi_fail(c->im, "%s", npu_graph_error(c->im->m->g));
	r.inputs = &src;
	r.num_inputs = 1;
	r.output = *id;
	return oi_add_node(c->im, &r);
}

/*
 * A static 8-bit value from constant @w with per-tensor parameters, or
 * per channel along @axis when @scales has more than one element.
 * @dims replaces the constant's shape when not NULL (same element count).
 */
static int qstatic(struct nctx *c, const struct sym *w, const struct sym *scales,
		   const struct sym *zps, uint32_t axis, uint32_t rank, const uint32_t *dims,
		   const uint8_t *bytes, uint32_t *id)
{
	struct npu_value_desc v = NPU_VALUE_DESC_INIT;
	int32_t *zp = NULL;
	uint64_t i;
	int ret;

	v.name = w->name;
	v.dtype = w->c.dt == OT_INT8 ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8;
	v.rank = rank;
	memcpy(v.dims, dims, 4ull * rank);
	v.data = bytes;
	if (scales->c.n == 1) {
		v.scale = scales->c.f[0];
		v.zero_point = zps ? (int32_t)zps->c.i[0] : 0;
	} else {
		v.quant_axis = axis;
		v.num_channels = (uint32_t)scales->c.n;
		v.channel_scales = scales->c.f;
		if (zps && zps->c.n == scales->c.n) {
			zp = malloc(scales->c.n * sizeof(*zp));
			if (!zp)
				return oi_nomem(c->im);
			for (i = 0; i < scales->c.n; i++)
				zp[i] = (int32_t)zps->c.i[i];
		} else if (zps && zps->c.i[0]) {
			zp = malloc(scales->c.n * sizeof(*zp));
			if (!zp)
				return oi_nomem(c->im);
			for (i = 0; i < scales->c.n; i++)
				zp[i] = (int32_t)zps->c.i[0];
		}
		v.channel_zero_points = zp;
	}
	ret = oi_check_value_size(c->im, w->name, v.dtype, v.rank, v.dims);
	if (!ret && npu_graph_add_value(c->im->m->g, &v, id))
		ret = oi_fail(c->im, "weights '%s': %s", w->name, npu_graph_error(c->im->m->g));
	free(zp);
	return ret;
}

/* The bytes of 8-bit constant @w, optionally transposed from [R, C] to [C, R]. */
static uint8_t *const_bytes(const struct sym *w, bool transpose)
{
	uint8_t *b = malloc(w->c.n + 1);
	uint64_t i, r = transpose ? (uint64_t)w->c.dims[0] : 0, cols = transpose ? (uint64_t)w->c.dims[1] : 0;

	if (!b)
		return NULL;
	for (i = 0; i < w->c.n; i++) {
		uint64_t k = transpose ? (i % r) * cols + i / r : i;

		b[i] = (uint8_t)w->c.i[k];
	}
	return b;
}

/*
 * Per-channel scales @scales fit @n channels (one element: per tensor),
 * and zero points @zps (NULL, one, or @n of @w's dtype).
 */
static bool channel_params(const struct sym *w, const struct sym *scales,
			   const struct sym *zps, uint64_t n)
{
	uint64_t i;

	if (!scales || !scales->is_const || scales->c.dt != OT_FLOAT || !scales->c.f ||
	    (scales->c.n != 1 && (scales->c.n != n || scales->c.rank != 1)))
		return false;
	for (i = 0; i < scales->c.n; i++)
		if (!(scales->c.f[i] > 0.0f) || scales->c.f[i] > 3.4e38f)
			return false;
	if (zps && (!zps->is_const || zps->c.dt != w->c.dt || !zps->c.i ||
		    (zps->c.n != 1 && zps->c.n != scales->c.n)))
		return false;
	return true;
}

static bool const8(const struct sym *s)
{
	return s && s->is_const && s->c.i && (s->c.dt == OT_INT8 || s->c.dt == OT_UINT8);
}

/* A new graph value for output symbol @o, quantized unless @scale is 0. */
static int qout_value(struct imp *im, struct sym *o, enum npu_dtype dt, float scale, int32_t zp,
		      uint32_t rank, const uint32_t *dims)
{
	return oi_new_qvalue(im, o, dt, scale, zp, rank, dims);
}

/* ---- One integer convolution or matrix product ---------------------------- */

struct qop {
	struct sym *x;			/* runtime 8-bit input */
	float xs;
	int32_t xzp;
	struct sym *w, *ws, *wzp;	/* constant 8-bit weights and their parameters */
	struct sym *b;			/* constant int32 bias or NULL */
	enum npu_dtype ydt;		/* INT8/UINT8 (requantized) or INT32 */
	float ys;
	int32_t yzp;
	const char *yname;		/* the output tensor */
};

/*
 * A convolution, or with @transpose a ConvTranspose (W [C, CO/g, KH, KW],
 * its output channels along axis 1, one group when they are per channel:
 * the device's rule).
 */
static int q_conv(struct nctx *c, struct qop *q, bool transpose)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW, .name = c->name };
	uint32_t xd[8], wd[8], yd[4], in[3], nin = 2, co;
	bool one_d = false;
	struct sym *o;
	uint8_t *wb;
	int ret;

	ret = transpose ? oi_conv_transpose_geometry(c, q->x, q->w, &d.op, xd, wd, yd) :
			  oi_conv_geometry(c, q->x, q->w, &d.op, xd, wd, yd, &one_d);
	if (ret)
		return ret;
	if (one_d)
		return oi_fail(c->im, "quantized 1-D convolution is not supported on the device");
	co = yd[1];
	if (!channel_params(q->w, q->ws, q->wzp, transpose ? wd[1] : wd[0]))
		return oi_fail(c->im, "weight scales must be constants, one or one per output channel");
	if (transpose && q->ws->c.n > 1 && d.op.conv_transpose.groups != 1)
		return oi_fail(c->im, "per-channel weights of a grouped ConvTranspose have no device op");
	if (q->b && (!q->b->is_const || q->b->c.dt != OT_INT32 || q->b->c.n != co))
		return oi_fail(c->im, "the bias must be a constant int32 vector of %u elements", co);
	ret = qview(c, q->x, q->xs, q->xzp, &in[0]);
	if (ret)
		return ret;
	wb = const_bytes(q->w, false);
	if (!wb)
		return oi_nomem(c->im);
	ret = qstatic(c, q->w, q->ws, q->wzp, transpose ? 1 : 0, 4, wd, wb, &in[1]);
	free(wb);
	if (!ret && q->b) {
		ret = oi_value_of(c->im, q->b, &in[2]);
		nin = 3;
	}
	if (!ret)
		ret = oi_add_sym(c->im, q->yname, &o);
	if (!ret)
		ret = qout_value(c->im, o, q->ydt, q->ydt == NPU_DTYPE_INT32 ? 0.0f : q->ys,
				 q->yzp, 4, yd);
	if (ret)
		return ret;
	d.inputs = in;
	d.num_inputs = nin;
	d.output = o->value;
	return oi_add_node(c->im, &d);
}

/*
 * A [.., M, K] x [K, N] product with constant 2-D B (transposed from
 * [N, K] when @trans_b): A flattened to [M', K], one GEMM, the result
 * reshaped back.
 */
static int q_matmul(struct nctx *c, struct qop *q, bool trans_b)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .name = c->name };
	struct oi_node r = { .kind = NPU_NODE_RESHAPE, .name = c->name };
	uint32_t ra, da[8], bd[2], ad[2], yd2[2], yd[8], in[3], nin = 2, a, y2, i;
	struct npu_value_desc tv = NPU_VALUE_DESC_INIT;
	uint64_t m = 1;
	struct sym *o;
	uint8_t *wb;
	int ret;

	ret = oi_sym_shape(c, q->x, &ra, da);
	if (ret)
		return ret;
	if (ra < 2 || q->w->c.rank != 2)
		return oi_fail(c->im, "quantized MatMul needs A of rank >= 2 and a 2-D constant B");
	bd[0] = (uint32_t)q->w->c.dims[trans_b ? 1 : 0];
	bd[1] = (uint32_t)q->w->c.dims[trans_b ? 0 : 1];
	if (da[ra - 1] != bd[0])
		return oi_fail(c->im, "inner dimensions differ (%u vs %u)", da[ra - 1], bd[0]);
	for (i = 0; i + 1 < ra; i++)
		m *= da[i];
	if (m > UINT32_MAX)
		return oi_fail(c->im, "A is too large");
	if (!channel_params(q->w, q->ws, q->wzp, bd[1]))
		return oi_fail(c->im, "B's scales must be constants, one or one per column");
	if (q->b && (!q->b->is_const || q->b->c.dt != OT_INT32 || q->b->c.n != bd[1]))
		return oi_fail(c->im, "the bias must be a constant int32 vector of %u elements", bd[1]);
	ret = qview(c, q->x, q->xs, q->xzp, &a);
	if (ret)
		return ret;
	ad[0] = (uint32_t)m;
	ad[1] = bd[0];
	if (ra != 2) {
		uint32_t flat;

		ret = npu_graph_get_value(c->im->m->g, a, &tv);
		tv.name = "onnx-qflat";
		tv.rank = 2;
		memcpy(tv.dims, ad, sizeof(ad));
		tv.flags = 0;
		if (!ret)
			ret = npu_graph_add_value(c->im->m->g, &tv, &flat);
		if (ret)
			return oi_fail(c->im, "%s", npu_graph_error(c->im->m->g));
		r.inputs = &a;
		r.num_inputs = 1;
		r.output = flat;
		ret = oi_add_node(c->im, &r);
		if (ret)
			return ret;
		a = flat;
	}
	in[0] = a;
	wb = const_bytes(q->w, trans_b);
	if (!wb)
		return oi_nomem(c->im);
	ret = qstatic(c, q->w, q->ws, q->wzp, 1, 2, bd, wb, &in[1]);
	free(wb);
	if (!ret && q->b) {
		ret = oi_value_of(c->im, q->b, &in[2]);
		nin = 3;
	}
	if (ret)
		return ret;
	memcpy(yd, da, 4ull * ra);
	yd[ra - 1] = bd[1];
	yd2[0] = (uint32_t)m;
	yd2[1] = bd[1];
	d.op.kind = NPU_OP_GEMM;
	d.inputs = in;
	d.num_inputs = nin;
	if (ra == 2) {
		ret = oi_add_sym(c->im, q->yname, &o);
		if (!ret)
			ret = qout_value(c->im, o, q->ydt, q->ydt == NPU_DTYPE_INT32 ? 0.0f : q->ys,
					 q->yzp, 2, yd2);
		if (ret)
			return ret;
		d.output = o->value;
		return oi_add_node(c->im, &d);
	}
	ret = oi_tmp_qvalue(c->im, q->ydt, q->ydt == NPU_DTYPE_INT32 ? 0.0f : q->ys, q->yzp, 2,
			    yd2, &y2);
	if (ret)
		return ret;
	d.output = y2;
	ret = oi_add_node(c->im, &d);
	if (!ret)
		ret = oi_add_sym(c->im, q->yname, &o);
	if (!ret)
		ret = qout_value(c->im, o, q->ydt, q->ydt == NPU_DTYPE_INT32 ? 0.0f : q->ys, q->yzp,
				 ra, yd);
	if (ret)
		return ret;
	r.inputs = &y2;
	r.num_inputs = 1;
	r.output = o->value;
	return oi_add_node(c->im, &r);
}

/*
 * A product of two 8-bit tensors quantized per tensor, A [.., M, K] and
 * B [.., K, N] (an attention's Q x K^T, a runtime B): one GEMM with
 * numpy batch broadcasting, no bias.
 */
static int q_matmul_rt(struct nctx *c, struct qop *q, struct sym *b, float bs, int32_t bzp)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .name = c->name };
	uint32_t ra, rb, da[8], db[8], rbat, bat[8], yd[8], in[2];
	struct sym *o;
	int ret;

	ret = oi_sym_shape(c, q->x, &ra, da);
	if (!ret)
		ret = oi_sym_shape(c, b, &rb, db);
	if (ret)
		return ret;
	if (ra < 2 || rb < 2)
		return oi_fail(c->im, "quantized MatMul of 1-D operands is not supported on the device");
	if (da[ra - 1] != db[rb - 2])
		return oi_fail(c->im, "inner dimensions differ (%u vs %u)", da[ra - 1], db[rb - 2]);
	ret = oi_broadcast(c, ra - 2, da, rb - 2, db, &rbat, bat);
	if (ret)
		return ret;
	if (rbat + 2 > NPU_TENSOR_MAX_RANK)
		return oi_fail(c->im, "rank above %d", NPU_TENSOR_MAX_RANK);
	memcpy(yd, bat, 4ull * rbat);
	yd[rbat] = da[ra - 2];
	yd[rbat + 1] = db[rb - 1];
	ret = qview(c, q->x, q->xs, q->xzp, &in[0]);
	if (!ret)
		ret = qview(c, b, bs, bzp, &in[1]);
	if (!ret)
		ret = oi_add_sym(c->im, q->yname, &o);
	if (!ret)
		ret = qout_value(c->im, o, q->ydt, q->ydt == NPU_DTYPE_INT32 ? 0.0f : q->ys, q->yzp,
				 rbat + 2, yd);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_GEMM;
	d.inputs = in;
	d.num_inputs = 2;
	d.output = o->value;
	return oi_add_node(c->im, &d);
}

/* ---- QuantizeLinear, DequantizeLinear ------------------------------------- */

int oi_op_quantize(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .name = c->name };
	struct sym *x = c->nin > 0 ? c->in[0] : NULL, *o;
	uint32_t r, dims[8], in;
	enum npu_dtype dt;
	int32_t zp;
	float s;
	int ret;

	if (!x || !node_qparams(c->im, c->n, NPU_DTYPE_UINT8, &s, &zp, &dt))
		return oi_fail(c->im, "only a constant per-tensor scale and 8-bit zero point run on the device");
	if (oi_sym_dtype(x) != NPU_DTYPE_FP32 && oi_sym_dtype(x) != NPU_DTYPE_FP16 &&
	    oi_sym_dtype(x) != NPU_DTYPE_BF16)
		return oi_fail(c->im, "the input must be float");
	ret = oi_sym_shape(c, x, &r, dims);
	if (!ret)
		ret = oi_value_of(c->im, x, &in);
	if (!ret)
		ret = oi_out_sym(c, &o);
	if (!ret)
		ret = qout_value(c->im, o, dt, s, zp, r, dims);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_QUANTIZE;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = o->value;
	return oi_add_node(c->im, &d);
}

int oi_op_dequantize(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	struct sym *x = c->nin > 0 ? c->in[0] : NULL;
	enum npu_dtype dt, xdt = x ? oi_sym_dtype(x) : NPU_DTYPE_FP32;
	uint32_t r, dims[8], in;
	int32_t zp;
	float s;
	int ret;

	if (!x || (xdt != NPU_DTYPE_INT8 && xdt != NPU_DTYPE_UINT8) ||
	    !node_qparams(c->im, c->n, xdt, &s, &zp, &dt) || dt != xdt)
		return oi_fail(c->im, "only 8-bit input with a constant per-tensor scale and zero point runs on the device");
	ret = oi_sym_shape(c, x, &r, dims);
	if (!ret)
		ret = qview(c, x, s, zp, &in);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_DEQUANTIZE;
	return oi_emit(c, &d, &in, 1, NPU_DTYPE_FP32, r, dims);
}

/* ---- QOperator ------------------------------------------------------------- */

/* x at @xi with scale/zp at xi+1, xi+2 (or zp only at @zpi for *Integer). */
static int runtime_x(struct nctx *c, struct qop *q, size_t xi, bool integer)
{
	enum npu_dtype dt;

	q->x = c->in[xi];
	if (!q->x || q->x->is_const ||
	    (oi_sym_dtype(q->x) != NPU_DTYPE_INT8 && oi_sym_dtype(q->x) != NPU_DTYPE_UINT8))
		return oi_fail(c->im, "the device takes a runtime 8-bit input");
	if (integer) {
		q->xs = 1.0f;
		if (!const_zp(c->nin > 2 ? c->in[2] : NULL, oi_sym_dtype(q->x), &q->xzp, &dt) ||
		    dt != oi_sym_dtype(q->x))
			return oi_fail(c->im, "the input zero point must be a constant of its dtype");
		return 0;
	}
	if (!const_scale(c->in[xi + 1], &q->xs) ||
	    !const_zp(c->in[xi + 2], oi_sym_dtype(q->x), &q->xzp, &dt) || dt != oi_sym_dtype(q->x))
		return oi_fail(c->im, "the input's scale and zero point must be constant scalars");
	return 0;
}

static int weights(struct nctx *c, struct qop *q, size_t wi, size_t si, size_t zi)
{
	q->w = c->in[wi];
	q->ws = si < c->nin ? c->in[si] : NULL;
	q->wzp = zi < c->nin ? c->in[zi] : NULL;
	if (!const8(q->w))
		return oi_fail(c->im, "the device takes constant 8-bit weights");
	return 0;
}

static int output_params(struct nctx *c, struct qop *q, size_t si, size_t zi)
{
	enum npu_dtype dt;

	if (!const_scale(si < c->nin ? c->in[si] : NULL, &q->ys) ||
	    !const_zp(zi < c->nin ? c->in[zi] : NULL, NPU_DTYPE_UINT8, &q->yzp, &dt))
		return oi_fail(c->im, "the output's scale and zero point must be constant scalars");
	q->ydt = dt;
	q->yname = c->n->output[0];
	return 0;
}

/* An *Integer op's weights have scale 1: a one-element constant of 1.0. */
static struct sym unit_scale = {
	.name = "1", .is_const = true, .c = { .dt = OT_FLOAT, .n = 1, .f = (float[]){ 1.0f } },
};

int oi_op_qlinear_conv(struct nctx *c)
{
	struct qop q = { 0 };
	int ret = runtime_x(c, &q, 0, false);

	if (!ret)
		ret = weights(c, &q, 3, 4, 5);
	if (!ret)
		ret = output_params(c, &q, 6, 7);
	q.b = c->nin > 8 ? c->in[8] : NULL;
	return ret ? ret : q_conv(c, &q, false);
}

int oi_op_conv_integer(struct nctx *c)
{
	struct qop q = { .ydt = NPU_DTYPE_INT32 };
	int ret = runtime_x(c, &q, 0, true);

	if (!ret)
		ret = weights(c, &q, 1, NPU_KERNEL_MAX_INPUTS, 3);
	q.ws = &unit_scale;
	q.yname = c->n->output[0];
	return ret ? ret : q_conv(c, &q, false);
}

int oi_op_qlinear_matmul(struct nctx *c)
{
	struct qop q = { 0 };
	struct sym *b = c->nin > 3 ? c->in[3] : NULL;
	int ret = runtime_x(c, &q, 0, false);

	if (!ret)
		ret = output_params(c, &q, 6, 7);
	if (ret)
		return ret;
	if (!b || !const8(b) || b->c.rank != 2) {
		/* B [.., K, N] at run time (or batched): one scale for all of it */
		enum npu_dtype bdt = b ? oi_sym_dtype(b) : NPU_DTYPE_FP32, dt;
		int32_t bzp;
		float bs;

		if (!b || (bdt != NPU_DTYPE_INT8 && bdt != NPU_DTYPE_UINT8) ||
		    !const_scale(c->nin > 4 ? c->in[4] : NULL, &bs) ||
		    !const_zp(c->nin > 5 ? c->in[5] : NULL, bdt, &bzp, &dt) || dt != bdt)
			return oi_fail(c->im, "a runtime or batched B needs constant per-tensor parameters");
		return q_matmul_rt(c, &q, b, bs, bzp);
	}
	ret = weights(c, &q, 3, 4, 5);
	return ret ? ret : q_matmul(c, &q, false);
}

int oi_op_matmul_integer(struct nctx *c)
{
	struct qop q = { .ydt = NPU_DTYPE_INT32 };
	int ret = runtime_x(c, &q, 0, true);

	if (!ret)
		ret = weights(c, &q, 1, NPU_KERNEL_MAX_INPUTS, 3);
	q.ws = &unit_scale;
	q.yname = c->n->output[0];
	return ret ? ret : q_matmul(c, &q, false);
}

/* ---- QDQ node units -------------------------------------------------------- */

/* The DequantizeLinear that made symbol @s, with constant per-tensor parameters. */
static const Onnx__NodeProto *dq_of(const struct sym *s)
{
	return s && s->dq && is_named(s->dq, "DequantizeLinear") ? s->dq : NULL;
}

/*
 * The only reader of the node's output, when it is a QuantizeLinear with
 * constant per-tensor parameters and the output is no graph output.
 */
static const Onnx__NodeProto *q_after(const struct nctx *c)
{
	const Onnx__NodeProto *qn = oi_single_reader(c->im, c->n->output[0]);

	return qn && is_named(qn, "QuantizeLinear") && qn->n_input >= 2 &&
	       qn->n_output >= 1 && qn->output[0] && *qn->output[0] ? qn : NULL;
}

static enum npu_dtype ort_act_dtype(struct imp *im, const char *name, enum npu_dtype dt);

/*
 * Whether onnxruntime's CPU provider on x86-64 (where the references are
 * computed) fuses the unit: its QDQ selectors (onnxruntime 1.20,
 * qdq_selectors.cc) want the activation read through @dx and the one
 * QuantizeLinear @qn writes of one 8-bit type, after QDQS8ToU8Transformer
 * (ort_act_dtype).  For Conv and MatMul that type must be uint8
 * (QDQIsInt8Allowed() is false but on ARM: MLAS's x86 kernels take
 * unsigned activations); Gemm (QGemm) takes int8 too.  ConvTranspose has
 * no QDQ selector for the CPU provider.  A unit onnxruntime does not
 * fuse runs as it does: DequantizeLinear, the float op, QuantizeLinear.
 */
static bool ort_fuses(struct nctx *c, const Onnx__NodeProto *dx, enum npu_dtype xdt,
		      const Onnx__NodeProto *qn, enum npu_dtype ydt)
{
	enum npu_dtype x = ort_act_dtype(c->im, dx->input[0], xdt);
	enum npu_dtype y = ort_act_dtype(c->im, qn->output[0], ydt);

	if (is_named(c->n, "ConvTranspose") || x != y)
		return false;
	return x == NPU_DTYPE_UINT8 || is_named(c->n, "Gemm");
}

/*
 * The com.microsoft op onnxruntime's CPU provider makes of a
 * DequantizeLinear -> @n -> QuantizeLinear unit (qdq_selector_action_
 * transformer.cc: UnaryOpQDQRules, BinaryOpQDQRules), with the number of
 * DequantizeLinear inputs it takes; NULL for none.
 */
static const struct npu_onnx_op *ms_op_of(const Onnx__NodeProto *n, size_t *ndq)
{
	*ndq = 1;
	if (is_named(n, "Softmax"))
		return &ok_op_qlinear_softmax;
	if (is_named(n, "GlobalAveragePool"))
		return &ok_op_qlinear_global_average_pool;
	if (is_named(n, "AveragePool"))
		return &ok_op_qlinear_average_pool;
	*ndq = 2;
	if (is_named(n, "Add"))
		return &ok_op_qlinear_add;
	if (is_named(n, "Mul"))
		return &ok_op_qlinear_mul;
	return NULL;
}

/*
 * A QLinearAdd or QLinearMul unit as one device ELTWISE with onnxruntime's
 * arithmetic (VNPU_ROUND_ORT_QLINEAR), so the graph keeps it in the
 * device job: both inputs (one may be a constant, a static value then)
 * and the output of one 8-bit type with constant per-tensor parameters.
 * For Add the operand onnxruntime's broadcast
 * loop runs along (not its scalar) goes first: that order is the
 * rounding's.  1: not such a unit (the CPU kernel takes it).
 */
static int ms_eltwise(struct nctx *c, const Onnx__NodeProto *const *dq,
		      const Onnx__NodeProto *qn, float ys, int32_t yzp, enum npu_dtype ydt)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .name = c->name };
	uint32_t rank[2], dims[2][8], yr, yd[8], in[2];
	bool add = is_named(c->n, "Add");
	struct sym *x[2], *o;
	enum npu_dtype dt;
	int32_t zp[2];
	float sc[2];
	int i, first = 0, ret;

	for (i = 0; i < 2; i++) {
		x[i] = in_sym(c->im, dq[i], 0);
		if (oi_sym_dtype(x[i]) != ydt ||
		    !node_qparams(c->im, dq[i], ydt, &sc[i], &zp[i], &dt) || dt != ydt)
			return 1;
		ret = oi_sym_shape(c, x[i], &rank[i], dims[i]);
		if (ret)
			return ret;
	}
	ret = oi_broadcast(c, rank[0], dims[0], rank[1], dims[1], &yr, yd);
	if (ret)
		return ret;
	if (add && vnpu_qlinear_scalar_side(rank[0], dims[0], rank[1], dims[1]) ==
		   VNPU_QLINEAR_SCALAR_A)
		first = 1;
	for (i = 0; i < 2; i++) {
		int k = i ^ first;
		uint8_t *bytes;

		if (!x[k]->is_const) {
			ret = qview(c, x[k], sc[k], zp[k], &in[i]);
		} else {
			bytes = const_bytes(x[k], false);
			if (!bytes)
				return oi_nomem(c->im);
			ret = qstatic(c, x[k], in_sym(c->im, dq[k], 1), in_sym(c->im, dq[k], 2), 0,
				      rank[k], dims[k], bytes, &in[i]);
			free(bytes);
		}
		if (ret)
			return ret;
	}
	ret = oi_add_sym(c->im, qn->output[0], &o);
	if (!ret)
		ret = qout_value(c->im, o, ydt, ys, yzp, yr, yd);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_ELTWISE;
	d.op.eltwise.kind = add ? NPU_ELTWISE_ADD : NPU_ELTWISE_MUL;
	d.op.round = NPU_ROUND_ORT_QLINEAR;
	d.inputs = in;
	d.num_inputs = 2;
	d.output = o->value;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	oi_lookup(c->im, qn->output[0])->qdq_fused = true;
	return 0;
}

/*
 * An AveragePool's window over NCHW @xd as POOL2D attributes with output
 * extents @yd; false where the device's window is not onnxruntime's
 * (auto_pad other than NOTSET and VALID, ceil_mode, a dilation, a pad as
 * large as the kernel), which the CPU kernel then takes.
 */
static bool avg_window(struct nctx *c, const uint32_t *xd, struct npu_op_params *op,
		       uint32_t *yd)
{
	int64_t k[8], st[8] = { 1, 1 }, pads[8] = { 0, 0, 0, 0 }, dil[8];
	char ap[32];
	const char *autopad = oi_attr_s(c, "auto_pad", ap, sizeof(ap));
	bool valid = autopad && !strcmp(autopad, "VALID");
	int i, n;

	if ((autopad && !valid && strcmp(autopad, "NOTSET")) || oi_attr_i(c, "ceil_mode", 0) ||
	    oi_attr_ints(c, "kernel_shape", k, 8) != 2)
		return false;
	n = oi_attr_ints(c, "strides", st, 8);
	if (n >= 0 && n != 2)
		return false;
	n = oi_attr_ints(c, "dilations", dil, 8);
	if (n >= 0 && (n != 2 || dil[0] != 1 || dil[1] != 1))
		return false;
	n = valid ? -1 : oi_attr_ints(c, "pads", pads, 8);
	if (n >= 0 && n != 4)
		return false;
	for (i = 0; i < 2; i++) {
		int64_t span = (int64_t)xd[2 + i] + pads[i] + pads[2 + i] - k[i], end;

		if (k[i] < 1 || k[i] > 65535 || st[i] < 1 || st[i] > 65535 || pads[i] < 0 ||
		    pads[i] >= k[i] || pads[2 + i] < 0 || pads[2 + i] >= k[i] || span < 0)
			return false;
		yd[2 + i] = (uint32_t)(span / st[i] + 1);
		/* the end padding the last window reaches: the rest changes nothing */
		end = (int64_t)(yd[2 + i] - 1) * st[i] + k[i] - xd[2 + i] - pads[i];
		op->pool.kernel[i] = (uint32_t)k[i];
		op->pool.stride[i] = (uint32_t)st[i];
		op->pool.pad[i] = (uint32_t)pads[i];
		op->pool.pad[2 + i] = end > 0 ? (uint32_t)end : 0;
	}
	op->pool.count_include_pad = oi_attr_i(c, "count_include_pad", 0) != 0;
	return true;
}

/*
 * A QLinearGlobalAveragePool or QLinearAveragePool unit over NCHW as one
 * device POOL2D with onnxruntime's arithmetic (VNPU_ROUND_ORT_QLINEAR).
 * An AveragePool whose window is the whole unpadded image is the global
 * pool, integer sums included, in onnxruntime as here.  1: not such a
 * unit (the CPU kernel takes it).
 */
static int ms_pool(struct nctx *c, const Onnx__NodeProto *dq, const Onnx__NodeProto *qn,
		   float ys, int32_t yzp, enum npu_dtype ydt)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW, .name = c->name };
	struct sym *x = in_sym(c->im, dq, 0), *o;
	uint32_t rank, xd[8], yd[4], in;
	enum npu_dtype dt;
	int32_t xzp;
	float xs;
	int ret;

	if (!x || oi_sym_dtype(x) != ydt ||
	    !node_qparams(c->im, dq, ydt, &xs, &xzp, &dt) || dt != ydt)
		return 1;
	ret = oi_sym_shape(c, x, &rank, xd);
	if (ret)
		return ret;
	if (rank != 4)
		return 1;
	d.op.kind = NPU_OP_POOL2D;
	d.op.pool.kind = NPU_POOL_GLOBAL_AVG;
	yd[0] = xd[0];
	yd[1] = xd[1];
	yd[2] = yd[3] = 1;
	if (is_named(c->n, "AveragePool")) {
		if (!avg_window(c, xd, &d.op, yd))
			return 1;
		if (d.op.pool.kernel[0] == xd[2] && d.op.pool.kernel[1] == xd[3] &&
		    !d.op.pool.pad[0] && !d.op.pool.pad[1] && !d.op.pool.pad[2] &&
		    !d.op.pool.pad[3]) {
			memset(&d.op.pool, 0, sizeof(d.op.pool));
			d.op.pool.kind = NPU_POOL_GLOBAL_AVG;
		} else {
			d.op.pool.kind = NPU_POOL_AVG;
		}
	}
	ret = qview(c, x, xs, xzp, &in);
	if (!ret)
		ret = oi_add_sym(c->im, qn->output[0], &o);
	if (!ret)
		ret = qout_value(c->im, o, ydt, ys, yzp, 4, yd);
	if (ret)
		return ret;
	d.op.round = NPU_ROUND_ORT_QLINEAR;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = o->value;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	oi_lookup(c->im, qn->output[0])->qdq_fused = true;
	return 0;
}

/*
 * A QLinearSoftmax unit along one axis as one device SOFTMAX with
 * onnxruntime's arithmetic (VNPU_ROUND_ORT_QLINEAR): from opset 13, or
 * before it along the last axis (where the run is that axis alone).
 * 1: not such a unit (the CPU kernel takes it).
 */
static int ms_softmax(struct nctx *c, const Onnx__NodeProto *dq, const Onnx__NodeProto *qn,
		      float ys, int32_t yzp, enum npu_dtype ydt)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .name = c->name };
	struct sym *x = in_sym(c->im, dq, 0), *o;
	int64_t axis = oi_attr_i(c, "axis", -1);
	uint32_t rank, xd[8], in;
	enum npu_dtype dt;
	int32_t xzp;
	float xs;
	int ret;

	if (!x || oi_sym_dtype(x) != ydt ||
	    !node_qparams(c->im, dq, ydt, &xs, &xzp, &dt) || dt != ydt)
		return 1;
	ret = oi_sym_shape(c, x, &rank, xd);
	if (ret)
		return ret;
	if (!rank || axis < -(int64_t)rank || axis >= (int64_t)rank ||
	    (c->opset < 13 && !oi_attr(c, "axis")))
		return 1;
	if (axis < 0)
		axis += rank;
	if (c->opset < 13 && axis != (int64_t)rank - 1)
		return 1;
	ret = qview(c, x, xs, xzp, &in);
	if (!ret)
		ret = oi_add_sym(c->im, qn->output[0], &o);
	if (!ret)
		ret = qout_value(c->im, o, ydt, ys, yzp, rank, xd);
	if (ret)
		return ret;
	d.op.kind = NPU_OP_SOFTMAX;
	d.op.softmax.axis = (uint32_t)axis;
	d.op.round = NPU_ROUND_ORT_QLINEAR;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = o->value;
	ret = oi_add_node(c->im, &d);
	if (ret)
		return ret;
	oi_lookup(c->im, qn->output[0])->qdq_fused = true;
	return 0;
}

/* Input @i of node @n, or "" (an absent optional input) */
static char *input_or_empty(const Onnx__NodeProto *n, size_t i)
{
	return i < n->n_input && n->input[i] ? n->input[i] : "";
}

/*
 * A unit onnxruntime turns into a com.microsoft QLinear op (ms_op_of):
 * that op's kernel, which computes what onnxruntime's does
 * (ok_quant_ms*.c), where a DequantizeLinear, the float op and a
 * QuantizeLinear would round differently.  Its inputs are
 * onnxruntime's (qdq_actions.cc): each DequantizeLinear's three, then the
 * QuantizeLinear's scale and zero point; the node's attributes, and for
 * Softmax the opset whose semantics its axis has.  onnxruntime fuses the
 * unit when every activation in and out is of one 8-bit type after
 * QDQS8ToU8Transformer (ort_act_dtype).  1: not such a unit.
 */
static int ms_unit(struct nctx *c)
{
	const Onnx__NodeProto *n = c->n, *qn, *dq[2];
	Onnx__AttributeProto opset = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[65];
	Onnx__NodeProto ms = ONNX__NODE_PROTO__INIT;
	char *ins[8], *outs[1];
	struct nctx k = { .im = c->im, .n = &ms, .opset = 1, .name = c->name };
	const struct npu_onnx_op *op = ms_op_of(n, &k.nin);
	enum npu_dtype ydt, xdt;
	size_t i, ndq = k.nin;
	unsigned int consts = 0;
	int32_t yzp;
	float ys;
	int ret;

	if (!op || c->nin != ndq || n->n_output != 1 || n->n_attribute >= 64 ||
	    !(qn = q_after(c)) || !node_qparams(c->im, qn, NPU_DTYPE_UINT8, &ys, &yzp, &ydt))
		return 1;
	for (i = 0; i < ndq; i++) {
		struct sym *x;

		dq[i] = dq_of(c->in[i]);
		if (!dq[i] || !(x = in_sym(c->im, dq[i], 0)))
			return 1;
		if (x->is_const) {
			/* Add and Mul take one constant operand: a bias, HardSwish's +3 */
			if (op == &ok_op_qlinear_softmax || consts || !const8(x))
				return 1;
			consts++;
		}
		xdt = oi_sym_dtype(x);
		if ((xdt != NPU_DTYPE_INT8 && xdt != NPU_DTYPE_UINT8) ||
		    ort_act_dtype(c->im, dq[i]->input[0], xdt) !=
		    ort_act_dtype(c->im, qn->output[0], ydt))
			return 1;
	}
	if (op == &ok_op_qlinear_global_average_pool || op == &ok_op_qlinear_average_pool) {
		int64_t dil[8];
		int nd = oi_attr_ints(c, "dilations", dil, 8);

		/*
		 * onnxruntime 1.20 on x86-64 leaves int8 pools alone (measured:
		 * they compute as DequantizeLinear, pool, QuantizeLinear), and
		 * its QLinearAveragePool has no dilations.
		 */
		if (ort_act_dtype(c->im, qn->output[0], ydt) != NPU_DTYPE_UINT8 ||
		    (nd > 0 && (dil[0] != 1 || (nd > 1 && dil[1] != 1))))
			return 1;
		ret = ms_pool(c, dq[0], qn, ys, yzp, ydt);
		if (ret <= 0)
			return ret;
	} else if (op == &ok_op_qlinear_softmax) {
		ret = ms_softmax(c, dq[0], qn, ys, yzp, ydt);
		if (ret <= 0)
			return ret;
	} else {
		ret = ms_eltwise(c, dq, qn, ys, yzp, ydt);
		/* the kernels take runtime inputs only */
		if (ret <= 0 || consts)
			return ret;
	}
	k.nin = 0;
	for (i = 0; i < ndq; i++) {
		ins[k.nin++] = dq[i]->input[0];
		ins[k.nin++] = input_or_empty(dq[i], 1);
		ins[k.nin++] = input_or_empty(dq[i], 2);
	}
	ins[k.nin++] = input_or_empty(qn, 1);
	ins[k.nin++] = input_or_empty(qn, 2);
	for (i = 0; i < k.nin; i++)
		k.in[i] = *ins[i] ? oi_lookup(c->im, ins[i]) : NULL;
	outs[0] = qn->output[0];
	ms.op_type = (char *)op->op_type;
	ms.domain = (char *)op->domain;
	ms.name = n->name;
	ms.n_input = k.nin;
	ms.input = ins;
	ms.n_output = 1;
	ms.output = outs;
	for (i = 0; i < n->n_attribute; i++)
		attrs[i] = n->attribute[i];
	ms.n_attribute = n->n_attribute;
	ms.attribute = attrs;
	if (op == &ok_op_qlinear_softmax) {
		opset.name = "opset";
		opset.has_type = 1;
		opset.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		opset.has_i = 1;
		/* the Softmax's since-version, as onnxruntime writes it */
		opset.i = c->opset >= 13 ? 13 : c->opset >= 11 ? 11 : 1;
		attrs[ms.n_attribute++] = &opset;
	}
	ret = oi_kernel_node(&k, op);
	if (ret)
		return ret;
	oi_lookup(c->im, qn->output[0])->qdq_fused = true;
	return 0;
}

int oi_qdq_unit(struct nctx *c)
{
	const Onnx__NodeProto *n = c->n, *dx, *dw, *db = NULL, *qn;
	bool convt = is_named(n, "ConvTranspose");
	bool conv = is_named(n, "Conv") || convt, gemm = is_named(n, "Gemm");
	struct qop q = { 0 };
	enum npu_dtype dt;
	int ret;

	if (!conv && !gemm && !is_named(n, "MatMul"))
		return ms_unit(c);
	if (c->nin < 2 || n->n_output != 1 || !(qn = q_after(c)))
		return 1;
	dx = dq_of(c->in[0]);
	dw = dq_of(c->in[1]);
	if (c->nin > 2 && c->in[2]) {
		db = dq_of(c->in[2]);
		if (!db)
			return 1;
	}
	if (!dx || !dw)
		return 1;
	q.x = in_sym(c->im, dx, 0);
	if (!q.x || q.x->is_const ||
	    (oi_sym_dtype(q.x) != NPU_DTYPE_INT8 && oi_sym_dtype(q.x) != NPU_DTYPE_UINT8) ||
	    !node_qparams(c->im, dx, oi_sym_dtype(q.x), &q.xs, &q.xzp, &dt) ||
	    dt != oi_sym_dtype(q.x))
		return 1;
	q.w = in_sym(c->im, dw, 0);
	q.ws = in_sym(c->im, dw, 1);
	q.wzp = in_sym(c->im, dw, 2);
	if (!const8(q.w)) {
		/* MatMul of two activations (attention): both per tensor */
		struct sym *b = q.w;
		int32_t bzp;
		float bs;

		if (!is_named(n, "MatMul") || !b || b->is_const ||
		    (oi_sym_dtype(b) != NPU_DTYPE_INT8 && oi_sym_dtype(b) != NPU_DTYPE_UINT8) ||
		    !node_qparams(c->im, dw, oi_sym_dtype(b), &bs, &bzp, &dt) ||
		    dt != oi_sym_dtype(b) ||
		    !node_qparams(c->im, qn, NPU_DTYPE_UINT8, &q.ys, &q.yzp, &q.ydt) ||
		    !ort_fuses(c, dx, oi_sym_dtype(q.x), qn, q.ydt))
			return 1;
		q.yname = qn->output[0];
		ret = q_matmul_rt(c, &q, b, bs, bzp);
		if (ret)
			return ret;
		oi_lookup(c->im, q.yname)->qdq_fused = true;
		return 0;
	}
	/* per-axis weights: along the output channels only */
	if (q.ws && q.ws->is_const && q.ws->c.n > 1) {
		int64_t axis = 1;
		const Onnx__AttributeProto *a = NULL;
		size_t i;

		for (i = 0; i < dw->n_attribute; i++)
			if (dw->attribute[i]->name && !strcmp(dw->attribute[i]->name, "axis"))
				a = dw->attribute[i];
		if (a)
			axis = a->i;
		if (axis < 0)
			axis += q.w->c.rank;
		/*
		 * Conv's W has its output channels along axis 0, Gemm's
		 * transposed B [N, K] its columns too; ConvTranspose's W and
		 * MatMul's B along axis 1
		 */
		if (axis != ((conv && !convt) || (gemm && oi_attr_i(c, "transB", 0)) ? 0 : 1))
			return 1;
	}
	if (db) {
		struct sym *bz = in_sym(c->im, db, 2);
		uint64_t i;

		/* onnxruntime takes the int32 bias as stored, in scale xs * ws */
		q.b = in_sym(c->im, db, 0);
		if (!q.b || !q.b->is_const || q.b->c.dt != OT_INT32)
			return 1;
		if (bz && (!bz->is_const || !bz->c.i))
			return 1;
		for (i = 0; bz && i < bz->c.n; i++)
			if (bz->c.i[i])
				return 1;
	}
	if (!node_qparams(c->im, qn, NPU_DTYPE_UINT8, &q.ys, &q.yzp, &q.ydt) ||
	    !ort_fuses(c, dx, oi_sym_dtype(q.x), qn, q.ydt))
		return 1;
	/* QGemm: an int8 A with int8 B only */
	if (gemm && oi_sym_dtype(q.x) == NPU_DTYPE_INT8 && q.w->c.dt != OT_INT8)
		return 1;
	q.yname = qn->output[0];
	if (gemm) {
		bool tb = oi_attr_i(c, "transB", 0) != 0;

		if (oi_attr_i(c, "transA", 0) || oi_attr_f(c, "alpha", 1.0f) != 1.0f ||
		    oi_attr_f(c, "beta", 1.0f) != 1.0f)
			return 1;
		ret = q_matmul(c, &q, tb);
	} else {
		ret = conv ? q_conv(c, &q, convt) : q_matmul(c, &q, false);
	}
	if (ret)
		return ret;
	/* the QuantizeLinear's output is written: its import is done */
	oi_lookup(c->im, q.yname)->qdq_fused = true;
	return 0;
}

bool oi_qdq_done(struct imp *im, const Onnx__NodeProto *n)
{
	struct sym *s;

	if (!is_named(n, "QuantizeLinear") || n->n_output < 1 || !n->output[0])
		return false;
	s = oi_lookup(im, n->output[0]);
	return s && s->qdq_fused;
}

/* ---- Who reads a tensor ------------------------------------------------------ */

/*
 * An entry of im->readers: the index of the one node reading the tensor
 * once, READERS_MANY (more reads) or READERS_NONE, with flags.
 */
#define READERS_NODE	0x3fffffffu
#define READERS_MANY	READERS_NODE
/* a graph output no node reads */
#define READERS_NONE	(READERS_NODE - 1)
/* a graph output */
#define READ_AS_OUTPUT	0x40000000u
/*
 * The output of an int8 QuantizeLinear -> DequantizeLinear pair that
 * onnxruntime's QDQS8ToU8Transformer turns into uint8 (ort_act_dtype).
 */
#define READ_U8_PAIR	0x80000000u

/* A constant int8 zero point of one element: its value in *@zp. */
static bool int8_scalar_zp(const struct sym *s, int64_t *zp)
{
	if (!s || !s->is_const || s->c.n != 1 || !s->c.i || s->c.dt != OT_INT8)
		return false;
	*zp = s->c.i[0];
	return true;
}

/* The one node reading tensor @name once, of no graph output; or NULL. */
static const Onnx__NodeProto *only_reader(const struct imp *im, const char *name)
{
	const uint32_t *v = oi_names_get(&im->readers, name);

	if (!v || (*v & READ_AS_OUTPUT) || (*v & READERS_NODE) >= READERS_NONE)
		return NULL;
	return im->mp->graph->node[*v & READERS_NODE];
}

/*
 * QDQS8ToU8Transformer's test (onnxruntime 1.20, qdq_s8_to_u8.cc), after
 * EnsureUniqueDQForNodeUnit has given each reader of a DequantizeLinear's
 * output a copy of its own: QuantizeLinear @q's output is read once, by
 * a DequantizeLinear whose output at most one node reads once or only the
 * graph returns; both have their zero point input, constant int8 scalars
 * of one value.
 */
static bool s8_pair_to_u8(struct imp *im, const Onnx__NodeProto *q)
{
	const Onnx__NodeProto *dq = only_reader(im, q->output[0]);
	const uint32_t *v;
	int64_t qzp, dqzp;

	if (!is_named(dq, "DequantizeLinear") || q->n_input != 3 || dq->n_input != 3 ||
	    dq->n_output < 1 || !dq->output[0] ||
	    !int8_scalar_zp(in_sym(im, q, 2), &qzp) || !int8_scalar_zp(in_sym(im, dq, 2), &dqzp) ||
	    qzp != dqzp)
		return false;
	v = oi_names_get(&im->readers, dq->output[0]);
	/* no copy: read by no node, or by one node once and not returned */
	return !v || *v == (READERS_NONE | READ_AS_OUTPUT) ||
	       (!(*v & READ_AS_OUTPUT) && *v != READERS_MANY);
}

static int build_readers(struct imp *im)
{
	const Onnx__GraphProto *gp = im->mp->graph;
	size_t i, j, n = 0;

	im->readers_built = true;
	im->readers_unsure = true;	/* until the table is complete */
	if (gp->n_node >= READERS_NONE)
		return -E2BIG;
	for (i = 0; i < gp->n_node; i++)
		n += gp->node[i]->n_input;
	if (oi_names_init(&im->readers, n + gp->n_output + 1))
		return -ENOMEM;
	for (i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *nd = gp->node[i];

		for (j = 0; j < nd->n_input; j++) {
			uint32_t *v;

			if (!nd->input[j] || !*nd->input[j])
				continue;
			/* a second read, by this node or another: two edges for onnxruntime */
			v = oi_names_get(&im->readers, nd->input[j]);
			if (v) {
				*v = READERS_MANY;
				continue;
			}
			if (!oi_names_put(&im->readers, nd->input[j], (uint32_t)i))
				return -ENOMEM;
		}
		/* a node with subgraphs may read anything from inside them */
		for (j = 0; j < nd->n_attribute; j++)
			if (nd->attribute[j]->g || nd->attribute[j]->n_graphs)
				return 0;
	}
	for (i = 0; i < gp->n_output; i++) {
		uint32_t *v = oi_names_put(&im->readers, gp->output[i]->name, READERS_NONE);

		if (!v)
			return -ENOMEM;
		*v |= READ_AS_OUTPUT;
	}
	for (i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *nd = gp->node[i];
		uint32_t *v;

		if (!is_named(nd, "QuantizeLinear") || nd->n_output < 1 || !nd->output[0] ||
		    !(v = oi_names_get(&im->readers, nd->output[0])))
			continue;
		if (s8_pair_to_u8(im, nd))
			*v |= READ_U8_PAIR;
	}
	im->readers_unsure = false;
	return 0;
}

/* The table entry of tensor @name, or NULL when not known. */
static const uint32_t *reader_entry(struct imp *im, const char *name)
{
	if (!name || !im->mp || !im->mp->graph)
		return NULL;
	if (!im->readers_built && build_readers(im))
		return NULL;
	if (im->readers_unsure)
		return NULL;
	return oi_names_get(&im->readers, name);
}

const Onnx__NodeProto *oi_single_reader(struct imp *im, const char *name)
{
	return reader_entry(im, name) ? only_reader(im, name) : NULL;
}

/*
 * The 8-bit type onnxruntime's CPU provider computes activation @name
 * (of type @dt, read through a DequantizeLinear) in, on x86-64:
 * QDQS8ToU8Transformer makes uint8 of each int8 QuantizeLinear ->
 * DequantizeLinear pair it can (s8_pair_to_u8), before the QDQ selectors
 * look at the node units.  Not a pair: an activation several nodes read
 * (a residual connection's), a graph input.
 */
static enum npu_dtype ort_act_dtype(struct imp *im, const char *name, enum npu_dtype dt)
{
	const uint32_t *v;

	if (dt != NPU_DTYPE_INT8)
		return dt;
	v = reader_entry(im, name);
	return v && (*v & READ_U8_PAIR) ? NPU_DTYPE_UINT8 : dt;
}
