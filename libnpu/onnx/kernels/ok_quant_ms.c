// SPDX-License-Identifier: MIT
/*
 * com.microsoft's elementwise quantized ops, as onnxruntime's optimizer
 * writes them when it turns QDQ models into QOperator form: QLinearAdd,
 * QLinearMul, QLinearSigmoid, QLinearLeakyRelu and QLinearConcat.
 *
 * These kernels are the reference the int8 device path is compared with,
 * and users compare us with onnxruntime bit for bit, so each follows the
 * float32 arithmetic of onnxruntime's CPU provider (MLAS) on x86-64 with
 * AVX2 and FMA, operation by operation, not the real-number formula:
 *
 * QLinearAdd keeps two float ratios, rA = A_scale / C_scale and rB =
 * B_scale / C_scale, and a float bias holding the zero points, fixed =
 * C_zp - (rA * A_zp + rB * B_zp), so an output is two fused
 * multiply-adds of the raw integers, fma(a, rA, fma(b, rB, fixed)),
 * rounded once at the end.  When onnxruntime's broadcast loop sees A as
 * the scalar of its innermost run (which depends only on the two shapes,
 * see vnpu_qlinear_scalar_side()), it calls MLAS with B first, and the
 * fmas nest the other way, fma(b, rB, fma(a, rA, fixed)): a different
 * rounding, which we follow (ms-quant-tests.sh has pairs of codes where
 * the two differ).
 *
 * QLinearMul multiplies the integers exactly, (a - A_zp) * (b - B_zp),
 * converts the product to float and applies one ratio, A_scale * B_scale
 * / C_scale (in that order), then adds C_zp as a float: two roundings,
 * no fma (MLAS has only an SSE2 form of it).
 *
 * Both round with the conversion instruction (half to even), which gives
 * INT32_MIN for a NaN or a value beyond int32 (so a huge ratio saturates
 * low, as onnxruntime's does), and then saturate to the 8-bit range.
 * That arithmetic is the device's ELTWISE with VNPU_ROUND_ORT_QLINEAR,
 * defined once in ops/vnpu_ref_qlinear.h for the device, the engine and
 * these kernels; the importer gives QDQ units the device command
 * (onnx_quant.c, ms_eltwise()), so these kernels run what it cannot.
 *
 * QLinearSigmoid, QLinearLeakyRelu and QLinearConcat are table lookups:
 * each of the 256 codes is dequantized as x_scale * (code - x_zp) in
 * float, mapped, and quantized by QuantizeLinear's rule (ok_quantize_f32:
 * divide, clamp, round half to even).  The map is the identity for
 * Concat (an input whose scale and zero point equal the output's is
 * copied), v >= 0 ? v : alpha * v for LeakyRelu, and for Sigmoid MLAS's
 * logistic: not expf, but a rational approximation (Eigen's
 * coefficients) on inputs clamped to [-18, 18], evaluated with its FMA
 * kernel's sequence of fused multiply-adds, which we evaluate the same
 * way so the table is onnxruntime's to the bit on the machines that run
 * that kernel (every x86-64 with AVX2).  Quantized, the approximation
 * and the exact logistic rarely pick different codes: one table entry in
 * 66 of 100,000 random (x_scale, x_zp, y_scale) tables measured, 66 of
 * 25.6 million entries; onnxruntime's SSE2 kernel (no FMA) rounds its
 * steps apart and may differ from both as rarely.  ms-quant-tests.sh
 * compares our tables with onnxruntime's outputs themselves.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"
#include "../../../ops/vnpu_ref_qlinear.h"

/* ---- Parameters shared by the com.microsoft ops -------------------------- */

bool ok_ms_is_q8(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_UINT8 || dt == NPU_DTYPE_INT8;
}

/* onnxruntime takes a rank-0 tensor or a 1-D tensor of one value. */
static bool one_value(const struct npu_kernel_tensor *t)
{
	return t->rank == 0 || (t->rank == 1 && t->dims[0] == 1);
}

int ok_ms_check_scale(const struct npu_kernel_tensor *t, const char *what, char *err,
		      size_t err_size)
{
	if (!t)
		return ok_fail(err, err_size, "%s is required", what);
	if (t->dtype != NPU_DTYPE_FP32)
		return ok_fail(err, err_size, "%s must be float32, not %s", what,
			       ok_dtype_name(t->dtype));
	if (!one_value(t))
		return ok_fail(err, err_size,
			       "%s must be a scalar or a 1-D tensor of one value (it has rank %u and %llu values)",
			       what, t->rank, (unsigned long long)t->elems);
	return 0;
}

int ok_ms_check_zero_point(const struct npu_kernel_tensor *t, enum npu_dtype want,
			   const char *what, char *err, size_t err_size)
{
	if (!t)
		return 0;
	if (t->dtype != want)
		return ok_fail(err, err_size, "%s is %s, but its tensor is %s", what,
			       ok_dtype_name(t->dtype), ok_dtype_name(want));
	if (!one_value(t))
		return ok_fail(err, err_size,
			       "%s must be a scalar or a 1-D tensor of one value (it has rank %u and %llu values)",
			       what, t->rank, (unsigned long long)t->elems);
	return 0;
}

float ok_ms_scale(const struct npu_kernel_tensor *t)
{
	return ((const float *)t->data)[0];
}

int32_t ok_ms_zero_point(const struct npu_kernel_tensor *t)
{
	return t ? ok_ms_q8(t, 0) : 0;
}

int32_t ok_ms_cvt(float v)
{
	/* CVTPS2DQ: anything it cannot represent (NaN too) is INT32_MIN */
	if (!(v >= -2147483648.0f && v < 2147483648.0f))
		return INT32_MIN;
	return (int32_t)nearbyintf(v);
}

static const struct npu_kernel_tensor *opt_in(size_t num_inputs,
					      const struct npu_kernel_tensor *const *in,
					      size_t i)
{
	return i < num_inputs ? in[i] : NULL;
}

/* ---- QLinearAdd and QLinearMul ------------------------------------------- */

enum { BIN_A, BIN_A_SCALE, BIN_A_ZP, BIN_B, BIN_B_SCALE, BIN_B_ZP, BIN_C_SCALE, BIN_C_ZP };

static int binary_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *a = opt_in(num_inputs, in, BIN_A);
	const struct npu_kernel_tensor *b = opt_in(num_inputs, in, BIN_B);
	const struct npu_kernel_tensor *both[2] = { a, b };
	static const char *const zp_names[] = { "A_zero_point", "B_zero_point", "C_zero_point" };
	static const size_t zp_index[] = { BIN_A_ZP, BIN_B_ZP, BIN_C_ZP };
	int ret;
	size_t k;

	(void)state;
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "C is required");
	if (!a || !b)
		return ok_fail(err, err_size, "A and B are required");
	if (!ok_ms_is_q8(a->dtype))
		return ok_fail(err, err_size, "A must be uint8 or int8, not %s",
			       ok_dtype_name(a->dtype));
	if (b->dtype != a->dtype)
		return ok_fail(err, err_size, "B is %s but A is %s", ok_dtype_name(b->dtype),
			       ok_dtype_name(a->dtype));
	ret = ok_ms_check_scale(opt_in(num_inputs, in, BIN_A_SCALE), "A_scale", err, err_size);
	if (!ret)
		ret = ok_ms_check_scale(opt_in(num_inputs, in, BIN_B_SCALE), "B_scale", err,
					err_size);
	if (!ret)
		ret = ok_ms_check_scale(opt_in(num_inputs, in, BIN_C_SCALE), "C_scale", err,
					err_size);
	for (k = 0; !ret && k < 3; k++)
		ret = ok_ms_check_zero_point(opt_in(num_inputs, in, zp_index[k]), a->dtype,
					     zp_names[k], err, err_size);
	if (ret)
		return ret;
	ret = ok_broadcast(2, both, out[0], err, err_size);
	if (ret)
		return ret;
	out[0]->dtype = a->dtype;
	return 0;
}

static int binary_run(bool mul, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		      struct npu_kernel_tensor *y, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *a = in[BIN_A], *b = in[BIN_B];
	float sa = ok_ms_scale(in[BIN_A_SCALE]), sb = ok_ms_scale(in[BIN_B_SCALE]);
	float sc = ok_ms_scale(in[BIN_C_SCALE]);
	int32_t za = ok_ms_zero_point(opt_in(num_inputs, in, BIN_A_ZP));
	int32_t zb = ok_ms_zero_point(opt_in(num_inputs, in, BIN_B_ZP));
	int32_t zc = ok_ms_zero_point(opt_in(num_inputs, in, BIN_C_ZP));
	/* MLAS is called with the span first: B's when A is the scalar */
	bool b_first = !mul && vnpu_qlinear_scalar_side(a->rank, a->dims, b->rank, b->dims) ==
			       VNPU_QLINEAR_SCALAR_A;
	struct vnpu_qlinear_add add;
	struct vnpu_qlinear_mul prod;
	struct ok_bcast ba, bb;
	int32_t lo, hi;
	uint64_t i, pending = 0;
	int ret;

	ok_quant_range(y->dtype, &lo, &hi);
	ok_bcast_init(&ba, a, y);
	ok_bcast_init(&bb, b, y);
	if (b_first)
		vnpu_qlinear_add_init(&add, sb, zb, sa, za, sc, zc);
	else
		vnpu_qlinear_add_init(&add, sa, za, sb, zb, sc, zc);
	vnpu_qlinear_mul_init(&prod, sa, za, sb, zb, sc, zc);
	for (i = 0; i < y->elems; i++) {
		int32_t va = ok_ms_q8(a, ok_bcast_index(&ba, i));
		int32_t vb = ok_ms_q8(b, ok_bcast_index(&bb, i));
		float v;

		if (mul)
			v = vnpu_qlinear_mul_f(&prod, va, vb);
		else if (b_first)
			v = vnpu_qlinear_add_f(&add, vb, va);
		else
			v = vnpu_qlinear_add_f(&add, va, vb);
		ok_set_i(y, i, vnpu_qlinear_sat(v, lo, hi));
		ret = ok_tick(call, &pending, 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int add_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	(void)state;
	(void)num_outputs;
	return binary_run(false, num_inputs, in, out[0], call);
}

static int mul_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	(void)state;
	(void)num_outputs;
	return binary_run(true, num_inputs, in, out[0], call);
}

const struct npu_kernel ok_kernel_qlinear_add = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearAdd",
	.infer = binary_infer,
	.run = add_run,
};

const struct npu_onnx_op ok_op_qlinear_add = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearAdd",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_add,
};

const struct npu_kernel ok_kernel_qlinear_mul = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearMul",
	.infer = binary_infer,
	.run = mul_run,
};

const struct npu_onnx_op ok_op_qlinear_mul = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearMul",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_mul,
};

/* ---- Table lookups: QLinearSigmoid, QLinearLeakyRelu ---------------------- */

/* MLAS's logistic as its FMA3 kernel evaluates it (see the top of the file). */
float ok_ms_logistic(float x)
{
	float x2, p, q, r;

	/* MAXPS/MINPS with the bound first: a NaN input passes through */
	x = x < -18.0f ? -18.0f : x;
	x = x > 18.0f ? 18.0f : x;
	x2 = x * x;
	p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
	p = fmaf(x2, p, 6.08574864600143e-05f);
	p = fmaf(x2, p, 8.51377133304701e-03f);
	p = fmaf(x2, p, 2.48287947061529e-01f);
	q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
	q = fmaf(x2, q, 6.29106785017040e-06f);
	q = fmaf(x2, q, 1.70198817374094e-03f);
	q = fmaf(x2, q, 1.16817656904453e-01f);
	q = fmaf(x2, q, 9.93151921023180e-01f);
	p = x * p;
	r = p / q + 0.5f;
	/* the FMA3 kernel clamps below only */
	return r < 0.0f ? 0.0f : r;
}

enum table_fn { TABLE_SIGMOID, TABLE_LEAKY_RELU, TABLE_IDENTITY };

void ok_ms_build_table(uint8_t table[256], enum npu_dtype dt, float x_scale, int32_t x_zp,
		       float y_scale, int32_t y_zp, int fn, float alpha)
{
	int32_t lo, hi, code;

	ok_quant_range(dt, &lo, &hi);
	for (code = 0; code < 256; code++) {
		/* the table is indexed by the byte: code 200 of int8 is -56 */
		int32_t x = dt == NPU_DTYPE_INT8 ? (int32_t)(int8_t)code : code;
		float v = x_scale * (float)(x - x_zp);

		if (fn == TABLE_SIGMOID)
			v = ok_ms_logistic(v);
		else if (fn == TABLE_LEAKY_RELU)
			v = v >= 0.0f ? v : alpha * v;
		table[code] = (uint8_t)ok_quantize_f32(v, y_scale, y_zp, lo, hi);
	}
}

enum { LUT_X, LUT_X_SCALE, LUT_X_ZP, LUT_Y_SCALE, LUT_Y_ZP };

static int lut_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = opt_in(num_inputs, in, LUT_X);
	int ret;

	(void)state;
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	if (!x)
		return ok_fail(err, err_size, "X is required");
	if (!ok_ms_is_q8(x->dtype))
		return ok_fail(err, err_size, "X must be uint8 or int8, not %s",
			       ok_dtype_name(x->dtype));
	ret = ok_ms_check_scale(opt_in(num_inputs, in, LUT_X_SCALE), "X_scale", err, err_size);
	if (!ret)
		ret = ok_ms_check_scale(opt_in(num_inputs, in, LUT_Y_SCALE), "Y_scale", err,
					err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(opt_in(num_inputs, in, LUT_X_ZP), x->dtype,
					     "X_zero_point", err, err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(opt_in(num_inputs, in, LUT_Y_ZP), x->dtype,
					     "Y_zero_point", err, err_size);
	if (ret)
		return ret;
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

static int lut_run(int fn, float alpha, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, struct npu_kernel_tensor *y,
		   struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[LUT_X];
	const uint8_t *src = x->data;
	uint8_t *dst = y->data, table[256];
	uint64_t i, pending = 0;
	int ret;

	ok_ms_build_table(table, x->dtype, ok_ms_scale(in[LUT_X_SCALE]),
			  ok_ms_zero_point(opt_in(num_inputs, in, LUT_X_ZP)),
			  ok_ms_scale(in[LUT_Y_SCALE]),
			  ok_ms_zero_point(opt_in(num_inputs, in, LUT_Y_ZP)), fn, alpha);
	for (i = 0; i < x->elems; i++) {
		dst[i] = table[src[i]];
		ret = ok_tick(call, &pending, 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int sigmoid_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, size_t num_outputs,
		       struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)state;
	(void)num_outputs;
	return lut_run(TABLE_SIGMOID, 0.0f, num_inputs, in, out[0], call);
}

static int leaky_relu_run(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_ms_leaky_relu_state *st = state;

	(void)num_outputs;
	return lut_run(TABLE_LEAKY_RELU, st->alpha, num_inputs, in, out[0], call);
}

static int leaky_relu_create(const struct npu_onnx_node *node, void *opaque, void **state,
			     char *err, size_t err_size)
{
	struct ok_ms_leaky_relu_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->alpha = ok_attr_f(node, "alpha", 0.01f);
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qlinear_sigmoid = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearSigmoid",
	.infer = lut_infer,
	.run = sigmoid_run,
};

const struct npu_onnx_op ok_op_qlinear_sigmoid = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearSigmoid",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_sigmoid,
};

const struct npu_kernel ok_kernel_qlinear_leaky_relu = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearLeakyRelu",
	.infer = lut_infer,
	.run = leaky_relu_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_leaky_relu = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearLeakyRelu",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_leaky_relu,
	.create = leaky_relu_create,
};

/* ---- QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point)... */

static int concat_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_ms_concat_state *st = state;
	const struct npu_kernel_tensor *y_zp = opt_in(num_inputs, in, 1), *first;
	uint32_t dims[NPU_TENSOR_MAX_RANK], axis, d;
	uint64_t sum = 0;
	size_t k;
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	if (num_inputs < 5 || (num_inputs - 2) % 3)
		return ok_fail(err, err_size,
			       "the inputs must be Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, not %zu inputs",
			       num_inputs);
	ret = ok_ms_check_scale(in[0], "Y_scale", err, err_size);
	if (ret)
		return ret;
	if (!y_zp)
		return ok_fail(err, err_size, "Y_zero_point is required");
	if (!ok_ms_is_q8(y_zp->dtype))
		return ok_fail(err, err_size, "Y_zero_point must be uint8 or int8, not %s",
			       ok_dtype_name(y_zp->dtype));
	ret = ok_ms_check_zero_point(y_zp, y_zp->dtype, "Y_zero_point", err, err_size);
	if (ret)
		return ret;
	first = in[2];
	if (!first)
		return ok_fail(err, err_size, "input 2 (the first X) is missing");
	if (!first->rank)
		return ok_fail(err, err_size, "the tensors must have a rank of at least 1");
	ret = ok_axis(st->axis, first->rank, &axis, "axis", err, err_size);
	if (ret)
		return ret;
	for (k = 2; k < num_inputs; k += 3) {
		const struct npu_kernel_tensor *x = in[k];
		char what[48];

		if (!x)
			return ok_fail(err, err_size, "input %zu (an X) is missing", k);
		if (x->dtype != y_zp->dtype)
			return ok_fail(err, err_size, "input %zu is %s, Y_zero_point is %s", k,
				       ok_dtype_name(x->dtype), ok_dtype_name(y_zp->dtype));
		snprintf(what, sizeof(what), "input %zu (a scale)", k + 1);
		ret = ok_ms_check_scale(in[k + 1], what, err, err_size);
		if (ret)
			return ret;
		snprintf(what, sizeof(what), "input %zu (a zero point)", k + 2);
		if (!in[k + 2])
			return ok_fail(err, err_size, "%s is required", what);
		ret = ok_ms_check_zero_point(in[k + 2], y_zp->dtype, what, err, err_size);
		if (ret)
			return ret;
		if (x->rank != first->rank)
			return ok_fail(err, err_size, "input %zu has rank %u, input 2 rank %u", k,
				       x->rank, first->rank);
		for (d = 0; d < x->rank; d++)
			if (d != axis && x->dims[d] != first->dims[d])
				return ok_fail(err, err_size,
					       "input %zu's dimension %u is %u, input 2's is %u", k,
					       d, x->dims[d], first->dims[d]);
		sum += x->dims[axis];
	}
	if (sum > UINT32_MAX)
		return ok_fail(err, err_size, "the output's axis %u would have %llu elements",
			       axis, (unsigned long long)sum);
	memcpy(dims, first->dims, first->rank * sizeof(dims[0]));
	dims[axis] = (uint32_t)sum;
	out[0]->dtype = y_zp->dtype;
	return ok_set_shape(out[0], first->rank, dims);
}

static int concat_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_ms_concat_state *st = state;
	struct npu_kernel_tensor *y = out[0];
	float y_scale = ok_ms_scale(in[0]);
	int32_t y_zp = ok_ms_zero_point(in[1]);
	uint64_t outer = 1, y_pitch, offset = 0, o, pending = 0;
	uint8_t *dst = y->data;
	uint32_t axis, d;
	size_t k;
	int ret;

	(void)num_outputs;
	ok_axis(st->axis, y->rank, &axis, "axis", NULL, 0);
	for (d = 0; d < axis; d++)
		outer *= y->dims[d];
	y_pitch = y->elems / outer;
	for (k = 2; k < num_inputs; k += 3) {
		const struct npu_kernel_tensor *x = in[k];
		const uint8_t *src = x->data;
		float x_scale = ok_ms_scale(in[k + 1]);
		int32_t x_zp = ok_ms_zero_point(in[k + 2]);
		/* onnxruntime compares the parameters, not the tables */
		bool copy = x_scale == y_scale && x_zp == y_zp;
		uint64_t pitch = x->elems / outer, i;
		uint8_t table[256];

		if (!copy)
			ok_ms_build_table(table, y->dtype, x_scale, x_zp, y_scale, y_zp,
					  TABLE_IDENTITY, 0.0f);
		for (o = 0; o < outer; o++) {
			uint8_t *row = dst + o * y_pitch + offset;
			const uint8_t *from = src + o * pitch;

			if (copy)
				memcpy(row, from, pitch);
			else
				for (i = 0; i < pitch; i++)
					row[i] = table[from[i]];
			ret = ok_tick(call, &pending, pitch);
			if (ret)
				return ret;
		}
		offset += pitch;
	}
	return 0;
}

static int concat_create(const struct npu_onnx_node *node, void *opaque, void **state,
			 char *err, size_t err_size)
{
	struct ok_ms_concat_state *st;
	int64_t axis;

	(void)opaque;
	if (npu_onnx_attr_int(node, "axis", &axis))
		return ok_fail(err, err_size, "attribute axis is required");
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = axis;
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qlinear_concat = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearConcat",
	.infer = concat_infer,
	.run = concat_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_concat = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearConcat",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_concat,
	.create = concat_create,
};
