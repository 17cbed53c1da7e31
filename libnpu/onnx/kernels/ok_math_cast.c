// SPDX-License-Identifier: MIT
/*
 * Converting between dtypes: Cast, CastLike, and Identity (the same
 * dtype).  Floats to integers truncate toward zero and saturate at the
 * target's range (NaN gives 0); integers to integers wrap modulo 2^bits;
 * anything to bool is x != 0 (NaN is true); float16 and bfloat16 go
 * through float32, rounding to nearest even.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ok_math.h"

int ok_math_cast_infer(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       char *err, size_t err_size)
{
	const struct ok_math_state *s = state;
	const char *name = ok_math_op_name(s->op);
	size_t want = s->op == OKM_CASTLIKE ? 2 : 1;

	if (num_inputs != want || !in[0] || (want == 2 && !in[1]))
		return ok_fail(err, err_size, "%s takes %zu input%s, not %zu", name, want,
			       want == 1 ? "" : "s", num_inputs);
	if (num_outputs != 1 || !out[0])
		return ok_fail(err, err_size, "%s has exactly one output, not %zu", name,
			       num_outputs);
	switch (s->op) {
	case OKM_CAST: out[0]->dtype = s->to; break;
	case OKM_CASTLIKE: out[0]->dtype = in[1]->dtype; break;
	default: out[0]->dtype = in[0]->dtype; break;
	}
	if (!npu_dtype_size(out[0]->dtype))
		return ok_fail(err, err_size, "%s to dtype %d is not supported", name,
			       (int)out[0]->dtype);
	return ok_set_shape(out[0], in[0]->rank, in[0]->dims);
}

/* A float truncated toward zero into an integer type, saturating. */
static void set_saturated(struct npu_kernel_tensor *o, uint64_t i, double v)
{
	double lo, hi;

	switch (o->dtype) {
	case NPU_DTYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
	case NPU_DTYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
	case NPU_DTYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
	case NPU_DTYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
	case NPU_DTYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
	case NPU_DTYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
	case NPU_DTYPE_INT64:
		/* 2^63 is the first double above INT64_MAX */
		if (v >= 9223372036854775808.0) {
			ok_set_i(o, i, INT64_MAX);
			return;
		}
		lo = -9223372036854775808.0;
		hi = 9223372036854775807.0;
		break;
	case NPU_DTYPE_UINT64:
		if (v >= 18446744073709551616.0) {
			((uint64_t *)o->data)[i] = UINT64_MAX;
			return;
		}
		lo = 0;
		hi = 18446744073709551615.0;
		break;
	default:
		ok_set_f(o, i, v);
		return;
	}
	if (isnan(v))
		v = 0;
	ok_set_f(o, i, v < lo ? lo : v > hi ? hi : v);
}

static void set_float(struct npu_kernel_tensor *o, uint64_t i, double v, float f)
{
	switch (o->dtype) {
	case NPU_DTYPE_FP64: ((double *)o->data)[i] = v; break;
	case NPU_DTYPE_FP32: ((float *)o->data)[i] = f; break;
	case NPU_DTYPE_FP16: ((uint16_t *)o->data)[i] = ok_f32_to_fp16(f); break;
	default: ((uint16_t *)o->data)[i] = ok_f32_to_bf16(f); break;
	}
}

/* The same conversions, typed, for the pairs models use most. */
#define PAIR(a, b)	((unsigned)(a) << 8 | (unsigned)(b))
#define TYPED(S, D, EXPR)						\
	do {								\
		const S *s_ = (const S *)x->data + from;		\
		D *d_ = (D *)o->data + from;				\
									\
		for (i = 0; i < n; i++) {				\
			S v = s_[i];					\
			d_[i] = (EXPR);					\
		}							\
	} while (0)
/*
 * float to int32/int64: truncate, NaN to 0, saturate; -2^(bits-1) and
 * 2^(bits-1) are exact floats, the first in range, the second not.
 */
#define SAT(v, T, TOP, MAX)						\
	((v) != (v) ? 0 : (v) < -(TOP) ? (T)-(TOP) : (v) >= (TOP) ? (MAX) : (T)(v))

static bool convert_typed(const struct npu_kernel_tensor *x, struct npu_kernel_tensor *o,
			  uint64_t from, uint64_t n)
{
	uint64_t i;

	switch (PAIR(x->dtype, o->dtype)) {
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_INT64):
		TYPED(float, int64_t, SAT(v, int64_t, 9223372036854775808.0f, INT64_MAX));
		return true;
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_INT32):
		TYPED(float, int32_t, SAT(v, int32_t, 2147483648.0f, INT32_MAX));
		return true;
	case PAIR(NPU_DTYPE_INT64, NPU_DTYPE_FP32): TYPED(int64_t, float, (float)v); return true;
	case PAIR(NPU_DTYPE_INT32, NPU_DTYPE_FP32): TYPED(int32_t, float, (float)v); return true;
	case PAIR(NPU_DTYPE_INT64, NPU_DTYPE_INT32):
		TYPED(int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)v);
		return true;
	case PAIR(NPU_DTYPE_INT32, NPU_DTYPE_INT64): TYPED(int32_t, int64_t, v); return true;
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_FP64): TYPED(float, double, v); return true;
	case PAIR(NPU_DTYPE_FP64, NPU_DTYPE_FP32): TYPED(double, float, (float)v); return true;
	case PAIR(NPU_DTYPE_BOOL, NPU_DTYPE_FP32): TYPED(uint8_t, float, v != 0); return true;
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_BOOL): TYPED(float, uint8_t, v != 0); return true;
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_FP16): TYPED(float, uint16_t, ok_f32_to_fp16(v)); return true;
	case PAIR(NPU_DTYPE_FP16, NPU_DTYPE_FP32): TYPED(uint16_t, float, ok_fp16_to_f32(v)); return true;
	case PAIR(NPU_DTYPE_FP32, NPU_DTYPE_BF16): TYPED(float, uint16_t, ok_f32_to_bf16(v)); return true;
	case PAIR(NPU_DTYPE_BF16, NPU_DTYPE_FP32): TYPED(uint16_t, float, ok_bf16_to_f32(v)); return true;
	default:
		return false;
	}
}

static void convert(const struct npu_kernel_tensor *x, struct npu_kernel_tensor *o,
		    uint64_t from, uint64_t n)
{
	bool src_float = ok_is_float(x->dtype), dst_float = ok_is_float(o->dtype);
	uint64_t i;

	if (convert_typed(x, o, from, n))
		return;

	if (o->dtype == NPU_DTYPE_BOOL) {
		for (i = from; i < from + n; i++)
			((uint8_t *)o->data)[i] = src_float ? ok_get_f(x, i) != 0 :
							      ok_get_u(x, i) != 0;
		return;
	}
	if (src_float && dst_float) {
		for (i = from; i < from + n; i++) {
			double v = ok_get_f(x, i);

			set_float(o, i, v, (float)v);
		}
		return;
	}
	if (src_float) {
		for (i = from; i < from + n; i++)
			set_saturated(o, i, ok_get_f(x, i));
		return;
	}
	if (dst_float) {
		/* one rounding, straight from the 64-bit integer */
		for (i = from; i < from + n; i++) {
			if (x->dtype == NPU_DTYPE_UINT64) {
				uint64_t u = ((const uint64_t *)x->data)[i];

				set_float(o, i, (double)u, (float)u);
			} else {
				int64_t v = ok_get_i(x, i);

				set_float(o, i, (double)v, (float)v);
			}
		}
		return;
	}
	for (i = from; i < from + n; i++)
		ok_set_i(o, i, ok_get_i(x, i));
}

int ok_math_cast_run(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in,
		     size_t num_outputs, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	uint64_t n = in[0]->elems, done, m;
	size_t size = npu_dtype_size(in[0]->dtype);
	int ret;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	for (done = 0; done < n; done += m) {
		m = n - done < OK_POLL_EVERY ? n - done : OK_POLL_EVERY;
		if (in[0]->dtype == out[0]->dtype)
			memcpy((char *)out[0]->data + done * size,
			       (const char *)in[0]->data + done * size, m * size);
		else
			convert(in[0], out[0], done, m);
		ret = npu_kernel_poll(call, m);
		if (ret)
			return ret;
	}
	return 0;
}
