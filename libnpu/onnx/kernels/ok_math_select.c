// SPDX-License-Identifier: MIT
/*
 * Choosing between values: Where (three broadcast operands) and Clip
 * (bounds from attributes before opset 11, from optional scalar inputs
 * since).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ok_math.h"

static int where_infer(size_t num_inputs, const struct npu_kernel_tensor *const *in,
		       struct npu_kernel_tensor *out, char *err, size_t err_size)
{
	int ret;

	if (num_inputs != 3 || !in[0] || !in[1] || !in[2])
		return ok_fail(err, err_size, "Where takes three inputs: condition, X and Y");
	if (in[0]->dtype != NPU_DTYPE_BOOL)
		return ok_fail(err, err_size, "Where's condition must be bool, not %s",
			       ok_dtype_name(in[0]->dtype));
	if (in[1]->dtype != in[2]->dtype)
		return ok_fail(err, err_size, "Where's X (%s) and Y (%s) differ in type",
			       ok_dtype_name(in[1]->dtype), ok_dtype_name(in[2]->dtype));
	ret = ok_broadcast(3, in, out, err, err_size);
	out->dtype = in[1]->dtype;
	return ret;
}

static int clip_infer(const struct ok_math_state *s, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in,
		      struct npu_kernel_tensor *out, char *err, size_t err_size)
{
	size_t k;

	if (num_inputs < 1 || num_inputs > (s->clip_attrs ? 1u : 3u) || !in[0])
		return ok_fail(err, err_size, "Clip takes %s, not %zu inputs",
			       s->clip_attrs ? "one input before opset 11" :
					       "an input, and optional min and max",
			       num_inputs);
	if (in[0]->dtype == NPU_DTYPE_BOOL || (s->clip_attrs && !ok_is_float(in[0]->dtype)))
		return ok_fail(err, err_size, "Clip takes %s, not %s",
			       s->clip_attrs ? "float types before opset 11" : "numbers",
			       ok_dtype_name(in[0]->dtype));
	for (k = 1; k < num_inputs; k++) {
		if (!in[k])
			continue;
		if (in[k]->dtype != in[0]->dtype)
			return ok_fail(err, err_size, "Clip's %s is %s, unlike its input (%s)",
				       k == 1 ? "min" : "max", ok_dtype_name(in[k]->dtype),
				       ok_dtype_name(in[0]->dtype));
		if (in[k]->elems != 1)
			return ok_fail(err, err_size,
				       "Clip's %s must be a scalar, not %llu values",
				       k == 1 ? "min" : "max",
				       (unsigned long long)in[k]->elems);
	}
	out->dtype = in[0]->dtype;
	return ok_set_shape(out, in[0]->rank, in[0]->dims);
}

int ok_math_select_infer(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs, struct npu_kernel_tensor *const *out,
			 char *err, size_t err_size)
{
	const struct ok_math_state *s = state;

	if (num_outputs != 1 || !out[0])
		return ok_fail(err, err_size, "%s has exactly one output, not %zu",
			       ok_math_op_name(s->op), num_outputs);
	if (s->op == OKM_WHERE)
		return where_infer(num_inputs, in, out[0], err, err_size);
	return clip_infer(s, num_inputs, in, out[0], err, err_size);
}

#define WHERE_LOOP(T)							\
	do {								\
		const T *x = in[1], *y = in[2];				\
		T *o = out;						\
									\
		for (i = 0; i < n; i++)					\
			o[i] = c[i * step[0]] ? x[i * step[1]] : y[i * step[2]]; \
	} while (0)

static int where_row(const void *ctx, struct npu_kernel_call *call, uint64_t n,
		     void *out, const void *const *in, const uint64_t *step)
{
	const uint8_t *c = in[0];
	uint64_t i;

	(void)call;
	switch (*(const size_t *)ctx) {
	case 1: WHERE_LOOP(uint8_t); break;
	case 2: WHERE_LOOP(uint16_t); break;
	case 4: WHERE_LOOP(uint32_t); break;
	default: WHERE_LOOP(uint64_t); break;
	}
	return 0;
}

/* NaN stays NaN; min above max gives max, as onnxruntime does. */
#define CLAMP(T, LO, HI)						\
	do {								\
		const T *x = src;					\
		T *o = dst, lo = (LO), hi = (HI);			\
									\
		for (i = 0; i < n; i++) {				\
			T v = x[i] < lo ? lo : x[i];			\
			o[i] = v > hi ? hi : v;				\
		}							\
	} while (0)

/* The bound in input @k as element 0 of the input's type, or @def. */
#define BOUND(T, k, def)						\
	(num_inputs > (k) && in[k] ? *(const T *)in[k]->data : (def))

static void clip_piece(const struct ok_math_state *s, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       struct npu_kernel_tensor *out, uint64_t from, uint64_t n)
{
	const struct npu_kernel_tensor *xt = in[0];
	size_t size = npu_dtype_size(xt->dtype);
	const void *src = (const char *)xt->data + from * size;
	void *dst = (char *)out->data + from * size;
	uint64_t i;

	switch (xt->dtype) {
	case NPU_DTYPE_FP32:
		if (s->clip_attrs)
			CLAMP(float, s->clip_min, s->clip_max);
		else
			CLAMP(float, BOUND(float, 1, -INFINITY), BOUND(float, 2, INFINITY));
		break;
	case NPU_DTYPE_FP64:
		if (s->clip_attrs)
			CLAMP(double, s->clip_min, s->clip_max);
		else
			CLAMP(double, BOUND(double, 1, -INFINITY), BOUND(double, 2, INFINITY));
		break;
	case NPU_DTYPE_FP16:
	case NPU_DTYPE_BF16: {
		/* the bounds and values are exact in float32 */
		double lo = s->clip_attrs ? s->clip_min : -INFINITY;
		double hi = s->clip_attrs ? s->clip_max : INFINITY;

		if (!s->clip_attrs && num_inputs > 1 && in[1])
			lo = ok_get_f(in[1], 0);
		if (!s->clip_attrs && num_inputs > 2 && in[2])
			hi = ok_get_f(in[2], 0);
		for (i = from; i < from + n; i++) {
			double v = ok_get_f(xt, i);

			v = v < lo ? lo : v;
			ok_set_f(out, i, v > hi ? hi : v);
		}
		break;
	}
	case NPU_DTYPE_INT8: CLAMP(int8_t, BOUND(int8_t, 1, INT8_MIN), BOUND(int8_t, 2, INT8_MAX)); break;
	case NPU_DTYPE_INT16: CLAMP(int16_t, BOUND(int16_t, 1, INT16_MIN), BOUND(int16_t, 2, INT16_MAX)); break;
	case NPU_DTYPE_INT32: CLAMP(int32_t, BOUND(int32_t, 1, INT32_MIN), BOUND(int32_t, 2, INT32_MAX)); break;
	case NPU_DTYPE_INT64: CLAMP(int64_t, BOUND(int64_t, 1, INT64_MIN), BOUND(int64_t, 2, INT64_MAX)); break;
	case NPU_DTYPE_UINT8: CLAMP(uint8_t, BOUND(uint8_t, 1, 0), BOUND(uint8_t, 2, UINT8_MAX)); break;
	case NPU_DTYPE_UINT16: CLAMP(uint16_t, BOUND(uint16_t, 1, 0), BOUND(uint16_t, 2, UINT16_MAX)); break;
	case NPU_DTYPE_UINT32: CLAMP(uint32_t, BOUND(uint32_t, 1, 0), BOUND(uint32_t, 2, UINT32_MAX)); break;
	case NPU_DTYPE_UINT64: CLAMP(uint64_t, BOUND(uint64_t, 1, 0), BOUND(uint64_t, 2, UINT64_MAX)); break;
	case NPU_DTYPE_BOOL:
		break;
	}
}

int ok_math_select_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call)
{
	const struct ok_math_state *s = state;
	uint64_t n = out[0]->elems, done, m;
	int ret;

	(void)num_outputs;
	if (s->op == OKM_WHERE) {
		size_t size = npu_dtype_size(out[0]->dtype);
		struct ok_walk w;

		ok_walk_init(&w, out[0], 3, in);
		return ok_walk_run(&w, out[0], in, where_row, &size, call);
	}
	for (done = 0; done < n; done += m) {
		m = n - done < OK_POLL_EVERY ? n - done : OK_POLL_EVERY;
		clip_piece(s, num_inputs, in, out[0], done, m);
		ret = npu_kernel_poll(call, m);
		if (ret)
			return ret;
	}
	return 0;
}
