// SPDX-License-Identifier: MIT
/*
 * Elementwise functions of one tensor: Abs, Neg, the roundings, exp/log,
 * the trigonometric family, IsNaN/IsInf, Not/BitwiseNot and the
 * activations (Relu ... Shrink).  float32 and float64 run natively,
 * float16 and bfloat16 through float32 in blocks, integers in their own
 * type with wrapping arithmetic.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ok_math.h"

#define BLOCK	1024u

static bool op_is_predicate(enum ok_math_op op)
{
	return op == OKM_ISNAN || op == OKM_ISINF;
}

/* The dtypes each op takes; the float-only ones are the default. */
static bool takes(enum ok_math_op op, enum npu_dtype dt)
{
	bool is_int = !ok_is_float(dt) && dt != NPU_DTYPE_BOOL;

	switch (op) {
	case OKM_NOT:
		return dt == NPU_DTYPE_BOOL;
	case OKM_BITWISE_NOT:
		return is_int;
	case OKM_ABS:
	case OKM_SIGN:
	case OKM_SHRINK:
		return dt != NPU_DTYPE_BOOL;
	case OKM_NEG:
	case OKM_RELU:
		return ok_is_signed(dt);
	default:
		return ok_is_float(dt);
	}
}

static const char *takes_words(enum ok_math_op op)
{
	switch (op) {
	case OKM_NOT:
		return "bool";
	case OKM_BITWISE_NOT:
		return "integers";
	case OKM_ABS:
	case OKM_SIGN:
	case OKM_SHRINK:
		return "numbers (not bool)";
	case OKM_NEG:
	case OKM_RELU:
		return "signed numbers";
	default:
		return "float16, bfloat16, float32 or float64";
	}
}

int ok_math_unary_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in,
			size_t num_outputs, struct npu_kernel_tensor *const *out,
			char *err, size_t err_size)
{
	const struct ok_math_state *s = state;

	if (num_inputs != 1 || !in[0])
		return ok_fail(err, err_size, "%s takes exactly one input, not %zu",
			       ok_math_op_name(s->op), num_inputs);
	if (num_outputs != 1 || !out[0])
		return ok_fail(err, err_size, "%s has exactly one output, not %zu",
			       ok_math_op_name(s->op), num_outputs);
	if (!takes(s->op, in[0]->dtype))
		return ok_fail(err, err_size, "%s takes %s, not %s", ok_math_op_name(s->op),
			       takes_words(s->op), ok_dtype_name(in[0]->dtype));
	out[0]->dtype = op_is_predicate(s->op) ? NPU_DTYPE_BOOL : in[0]->dtype;
	return ok_set_shape(out[0], in[0]->rank, in[0]->dims);
}

/*
 * The float functions, once per native float type: FN(name) is the C
 * library's function for the type (expf or exp).
 */
#define FN_F32(name)	name##f
#define FN_F64(name)	name

#define UNARY_FLOAT(NAME, T, FN)						\
static void NAME(const struct ok_math_state *s, T *o,		\
		 const T *x, uint64_t n)				\
{									\
	const T alpha = (T)s->alpha, beta = (T)s->beta, gamma = (T)s->gamma; \
	uint64_t i;							\
									\
	switch (s->op) {						\
	case OKM_ABS: for (i = 0; i < n; i++) o[i] = FN(fabs)(x[i]); break; \
	case OKM_NEG: for (i = 0; i < n; i++) o[i] = -x[i]; break;	\
	case OKM_SIGN:							\
		/* NaN and both zeros give +0, as in onnxruntime */	\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] > 0 ? (T)1 : x[i] < 0 ? (T)-1 : (T)0; \
		break;							\
	case OKM_FLOOR: for (i = 0; i < n; i++) o[i] = FN(floor)(x[i]); break; \
	case OKM_CEIL: for (i = 0; i < n; i++) o[i] = FN(ceil)(x[i]); break; \
	/* the default rounding mode: half to even */			\
	case OKM_ROUND: for (i = 0; i < n; i++) o[i] = FN(nearbyint)(x[i]); break; \
	case OKM_RECIPROCAL: for (i = 0; i < n; i++) o[i] = (T)1 / x[i]; break; \
	case OKM_SQRT: for (i = 0; i < n; i++) o[i] = FN(sqrt)(x[i]); break; \
	case OKM_EXP: for (i = 0; i < n; i++) o[i] = FN(exp)(x[i]); break; \
	case OKM_LOG: for (i = 0; i < n; i++) o[i] = FN(log)(x[i]); break; \
	case OKM_ERF: for (i = 0; i < n; i++) o[i] = FN(erf)(x[i]); break; \
	case OKM_SIN: for (i = 0; i < n; i++) o[i] = FN(sin)(x[i]); break; \
	case OKM_COS: for (i = 0; i < n; i++) o[i] = FN(cos)(x[i]); break; \
	case OKM_TAN: for (i = 0; i < n; i++) o[i] = FN(tan)(x[i]); break; \
	case OKM_ASIN: for (i = 0; i < n; i++) o[i] = FN(asin)(x[i]); break; \
	case OKM_ACOS: for (i = 0; i < n; i++) o[i] = FN(acos)(x[i]); break; \
	case OKM_ATAN: for (i = 0; i < n; i++) o[i] = FN(atan)(x[i]); break; \
	case OKM_SINH: for (i = 0; i < n; i++) o[i] = FN(sinh)(x[i]); break; \
	case OKM_COSH: for (i = 0; i < n; i++) o[i] = FN(cosh)(x[i]); break; \
	case OKM_ASINH: for (i = 0; i < n; i++) o[i] = FN(asinh)(x[i]); break; \
	case OKM_ACOSH: for (i = 0; i < n; i++) o[i] = FN(acosh)(x[i]); break; \
	case OKM_ATANH: for (i = 0; i < n; i++) o[i] = FN(atanh)(x[i]); break; \
	/* NaN passes through the activations' comparisons */		\
	case OKM_RELU: for (i = 0; i < n; i++) o[i] = x[i] < 0 ? 0 : x[i]; break; \
	case OKM_LEAKY_RELU:						\
		for (i = 0; i < n; i++) o[i] = x[i] < 0 ? alpha * x[i] : x[i]; \
		break;							\
	case OKM_ELU:							\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] < 0 ? alpha * FN(expm1)(x[i]) : x[i]; \
		break;							\
	case OKM_SELU:							\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] > 0 ? gamma * x[i] :		\
			       gamma * alpha * FN(expm1)(x[i]);		\
		break;							\
	case OKM_CELU:							\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] > 0 ? x[i] :			\
			       alpha * FN(expm1)(x[i] / alpha);		\
		break;							\
	case OKM_SOFTPLUS:						\
		/* log(1 + e^x) without overflowing e^x */		\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] > 0 ? x[i] + FN(log1p)(FN(exp)(-x[i])) : \
			       FN(log1p)(FN(exp)(x[i]));		\
		break;							\
	case OKM_SOFTSIGN:						\
		for (i = 0; i < n; i++) o[i] = x[i] / (1 + FN(fabs)(x[i])); \
		break;							\
	case OKM_MISH:							\
		for (i = 0; i < n; i++) {				\
			T sp = x[i] > 0 ? x[i] + FN(log1p)(FN(exp)(-x[i])) : \
			       FN(log1p)(FN(exp)(x[i]));		\
			o[i] = x[i] * FN(tanh)(sp);			\
		}							\
		break;							\
	case OKM_THRESHOLDED_RELU:					\
		for (i = 0; i < n; i++) o[i] = x[i] > alpha ? x[i] : 0; \
		break;							\
	case OKM_GELU:							\
		if (s->gelu_tanh) {					\
			const T k = (T)0.7978845608028654; /* sqrt(2/pi) */ \
			for (i = 0; i < n; i++)				\
				o[i] = (T)0.5 * x[i] * (1 + FN(tanh)(k * \
				       (x[i] + (T)0.044715 * x[i] * x[i] * x[i]))); \
		} else {						\
			const T r = (T)0.7071067811865476; /* 1/sqrt(2) */ \
			for (i = 0; i < n; i++)				\
				o[i] = (T)0.5 * x[i] * (1 + FN(erf)(x[i] * r)); \
		}							\
		break;							\
	case OKM_HARD_SIGMOID:						\
		for (i = 0; i < n; i++) {				\
			T v = alpha * x[i] + beta;			\
			o[i] = v < 0 ? 0 : v > 1 ? 1 : v;		\
		}							\
		break;							\
	case OKM_HARD_SWISH:						\
		for (i = 0; i < n; i++) {				\
			T v = x[i] * (T)(1.0 / 6) + (T)0.5;		\
			o[i] = x[i] * (v < 0 ? 0 : v > 1 ? 1 : v);	\
		}							\
		break;							\
	case OKM_SIGMOID:						\
		/* e^-|x| never overflows */				\
		for (i = 0; i < n; i++) {				\
			T e = FN(exp)(-FN(fabs)(x[i]));			\
			o[i] = x[i] >= 0 ? 1 / (1 + e) : e / (1 + e);	\
		}							\
		break;							\
	case OKM_TANH: for (i = 0; i < n; i++) o[i] = FN(tanh)(x[i]); break; \
	case OKM_SHRINK:						\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] < -alpha ? x[i] + beta :		\
			       x[i] > alpha ? x[i] - beta : 0;		\
		break;							\
	default:							\
		break;							\
	}								\
}

UNARY_FLOAT(unary_f32, float, FN_F32)
UNARY_FLOAT(unary_f64, double, FN_F64)

#define PREDICATE(NAME, T, FN)						\
static void NAME(const struct ok_math_state *s, uint8_t *o,	\
		 const T *x, uint64_t n)				\
{									\
	uint64_t i;							\
									\
	if (s->op == OKM_ISNAN) {					\
		for (i = 0; i < n; i++) o[i] = x[i] != x[i];		\
		return;							\
	}								\
	for (i = 0; i < n; i++)						\
		o[i] = FN(isinf)(x[i]) &&				\
		       (x[i] > 0 ? s->detect_pos : s->detect_neg);	\
}

#define FN_ANY(f)	f
PREDICATE(predicate_f32, float, FN_ANY)
PREDICATE(predicate_f64, double, FN_ANY)

static void to_f32(enum npu_dtype dt, float *f, const uint16_t *h, uint64_t n)
{
	uint64_t i;

	if (dt == NPU_DTYPE_FP16)
		for (i = 0; i < n; i++)
			f[i] = ok_fp16_to_f32(h[i]);
	else
		for (i = 0; i < n; i++)
			f[i] = ok_bf16_to_f32(h[i]);
}

static void from_f32(enum npu_dtype dt, uint16_t *h, const float *f, uint64_t n)
{
	uint64_t i;

	if (dt == NPU_DTYPE_FP16)
		for (i = 0; i < n; i++)
			h[i] = ok_f32_to_fp16(f[i]);
	else
		for (i = 0; i < n; i++)
			h[i] = ok_f32_to_bf16(f[i]);
}

/* float16 and bfloat16 in blocks through the float32 loops */
static void unary_half(const struct ok_math_state *s, enum npu_dtype dt, void *o,
		       const uint16_t *x, uint64_t n)
{
	float a[BLOCK], b[BLOCK];
	uint64_t done, m;

	for (done = 0; done < n; done += m) {
		m = n - done < BLOCK ? n - done : BLOCK;
		to_f32(dt, a, x + done, m);
		if (op_is_predicate(s->op)) {
			predicate_f32(s, (uint8_t *)o + done, a, m);
			continue;
		}
		unary_f32(s, b, a, m);
		from_f32(dt, (uint16_t *)o + done, b, m);
	}
}

/*
 * Integers: results wrap modulo 2^bits, computed in uint64_t so that
 * -INT_MIN and friends are never signed overflow.
 */
#define UNARY_SIGNED(NAME, T)						\
static void NAME(enum ok_math_op op, T *o, const T *x, \
		 uint64_t n)						\
{									\
	uint64_t i;							\
									\
	switch (op) {							\
	case OKM_ABS:							\
		for (i = 0; i < n; i++)					\
			o[i] = x[i] < 0 ? (T)(0 - (uint64_t)x[i]) : x[i]; \
		break;							\
	case OKM_NEG:							\
		for (i = 0; i < n; i++) o[i] = (T)(0 - (uint64_t)x[i]); \
		break;							\
	case OKM_SIGN:							\
		for (i = 0; i < n; i++) o[i] = (T)((x[i] > 0) - (x[i] < 0)); \
		break;							\
	case OKM_RELU: for (i = 0; i < n; i++) o[i] = x[i] < 0 ? 0 : x[i]; break; \
	case OKM_BITWISE_NOT: for (i = 0; i < n; i++) o[i] = (T)~x[i]; break; \
	default:							\
		break;							\
	}								\
}

#define UNARY_UNSIGNED(NAME, T)						\
static void NAME(enum ok_math_op op, T *o, const T *x, \
		 uint64_t n)						\
{									\
	uint64_t i;							\
									\
	switch (op) {							\
	case OKM_ABS: memcpy(o, x, n * sizeof(T)); break;		\
	case OKM_SIGN: for (i = 0; i < n; i++) o[i] = x[i] != 0; break;	\
	case OKM_BITWISE_NOT: for (i = 0; i < n; i++) o[i] = (T)~x[i]; break; \
	default:							\
		break;							\
	}								\
}

UNARY_SIGNED(unary_i8, int8_t)
UNARY_SIGNED(unary_i16, int16_t)
UNARY_SIGNED(unary_i32, int32_t)
UNARY_SIGNED(unary_i64, int64_t)
UNARY_UNSIGNED(unary_u8, uint8_t)
UNARY_UNSIGNED(unary_u16, uint16_t)
UNARY_UNSIGNED(unary_u32, uint32_t)
UNARY_UNSIGNED(unary_u64, uint64_t)

/* Shrink of integers: the float attributes apply to the value as a double. */
static void shrink_int(const struct ok_math_state *s, const struct npu_kernel_tensor *x,
		       struct npu_kernel_tensor *o, uint64_t from, uint64_t n)
{
	double lambd = s->alpha, bias = s->beta;
	uint64_t i;

	for (i = from; i < from + n; i++) {
		double v = ok_get_f(x, i);

		ok_set_f(o, i, v < -lambd ? v + bias : v > lambd ? v - bias : 0);
	}
}

static void unary_piece(const struct ok_math_state *s, const struct npu_kernel_tensor *x,
			struct npu_kernel_tensor *o, uint64_t from, uint64_t n)
{
	const void *src = (const char *)x->data + from * npu_dtype_size(x->dtype);
	void *dst = (char *)o->data + from * npu_dtype_size(o->dtype);
	uint64_t i;

	if (s->op == OKM_NOT) {
		for (i = 0; i < n; i++)
			((uint8_t *)dst)[i] = !((const uint8_t *)src)[i];
		return;
	}
	if (s->op == OKM_SHRINK && !ok_is_float(x->dtype)) {
		shrink_int(s, x, o, from, n);
		return;
	}
	switch (x->dtype) {
	case NPU_DTYPE_FP32:
		if (op_is_predicate(s->op))
			predicate_f32(s, dst, src, n);
		else
			unary_f32(s, dst, src, n);
		break;
	case NPU_DTYPE_FP64:
		if (op_is_predicate(s->op))
			predicate_f64(s, dst, src, n);
		else
			unary_f64(s, dst, src, n);
		break;
	case NPU_DTYPE_FP16:
	case NPU_DTYPE_BF16:
		unary_half(s, x->dtype, dst, src, n);
		break;
	case NPU_DTYPE_INT8: unary_i8(s->op, dst, src, n); break;
	case NPU_DTYPE_INT16: unary_i16(s->op, dst, src, n); break;
	case NPU_DTYPE_INT32: unary_i32(s->op, dst, src, n); break;
	case NPU_DTYPE_INT64: unary_i64(s->op, dst, src, n); break;
	case NPU_DTYPE_UINT8: unary_u8(s->op, dst, src, n); break;
	case NPU_DTYPE_UINT16: unary_u16(s->op, dst, src, n); break;
	case NPU_DTYPE_UINT32: unary_u32(s->op, dst, src, n); break;
	case NPU_DTYPE_UINT64: unary_u64(s->op, dst, src, n); break;
	case NPU_DTYPE_BOOL:
		break;
	}
}

int ok_math_unary_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in,
		      size_t num_outputs, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_math_state *s = state;
	uint64_t n = in[0]->elems, done, m;
	int ret;

	(void)num_inputs;
	(void)num_outputs;
	for (done = 0; done < n; done += m) {
		m = n - done < OK_POLL_EVERY ? n - done : OK_POLL_EVERY;
		unary_piece(s, in[0], out[0], done, m);
		ret = npu_kernel_poll(call, m);
		if (ret)
			return ret;
	}
	return 0;
}
