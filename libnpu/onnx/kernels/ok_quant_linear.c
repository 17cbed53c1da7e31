// SPDX-License-Identifier: MIT
/*
 * QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, and the
 * rounding every quantized kernel shares, as onnxruntime's MLAS does it.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "ok_quant.h"

bool ok_quant_range(enum npu_dtype dt, int32_t *lo, int32_t *hi)
{
	switch (dt) {
	case NPU_DTYPE_UINT8: *lo = 0; *hi = 255; return true;
	case NPU_DTYPE_INT8: *lo = -128; *hi = 127; return true;
	case NPU_DTYPE_UINT16: *lo = 0; *hi = 65535; return true;
	case NPU_DTYPE_INT16: *lo = -32768; *hi = 32767; return true;
	default: return false;
	}
}

/*
 * MLAS clamps before it rounds, against bounds shifted by the zero point,
 * with MAXPS/MINPS: a NaN takes the lower bound.  The bounds are integers,
 * so clamping first and rounding second equals the reverse order.
 */
static int32_t clamp_round(float v, int32_t zero_point, int32_t lo, int32_t hi)
{
	float fl = (float)(lo - zero_point), fh = (float)(hi - zero_point);

	if (!(v > fl))
		v = fl;
	if (v > fh)
		v = fh;
	return (int32_t)nearbyintf(v) + zero_point;
}

int32_t ok_quantize_f32(float x, float scale, int32_t zero_point, int32_t lo,
			int32_t hi)
{
	return clamp_round(x / scale, zero_point, lo, hi);
}

int32_t ok_requantize(int32_t acc, float multiplier, int32_t zero_point,
		      int32_t lo, int32_t hi)
{
	return clamp_round((float)acc * multiplier, zero_point, lo, hi);
}

/* ---- Scale and zero point of one tensor: per tensor or per axis ------------ */

struct qparams {
	uint64_t outer, channels, inner;	/* x as [outer, channels, inner] */
	const struct npu_kernel_tensor *scale, *zero_point;
};

static int qparams_check(const struct ok_qdq_state *st,
			 const struct npu_kernel_tensor *x,
			 const struct npu_kernel_tensor *scale,
			 const struct npu_kernel_tensor *zp, char *err,
			 size_t err_size)
{
	uint32_t axis;
	int ret;

	if (scale->dtype != NPU_DTYPE_FP32)
		return ok_fail(err, err_size, "the scale must be float32, not %s",
			       ok_dtype_name(scale->dtype));
	/* one value either way: onnxruntime's own tools write [1] and a scalar */
	if (zp && (zp->elems != scale->elems ||
		   (zp->rank != scale->rank && (zp->elems != 1 || zp->rank > 1 || scale->rank > 1))))
		return ok_fail(err, err_size,
			       "the zero point must have the scale's shape (%llu values of rank %u, not %llu of rank %u)",
			       (unsigned long long)scale->elems, scale->rank,
			       (unsigned long long)zp->elems, zp->rank);
	if (scale->elems == 1 && scale->rank <= 1)
		return 0;
	if (!st->per_axis)
		return ok_fail(err, err_size,
			       "the scale must be a scalar before opset 13 (it has %llu values)",
			       (unsigned long long)scale->elems);
	if (scale->rank != 1)
		return ok_fail(err, err_size,
			       "a per-axis scale must be 1-D, not of rank %u", scale->rank);
	ret = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
	if (ret)
		return ret;
	if (scale->dims[0] != x->dims[axis])
		return ok_fail(err, err_size,
			       "the scale has %u values, axis %u of the input has %u",
			       scale->dims[0], axis, x->dims[axis]);
	return 0;
}

/* Both ops' infer ends alike: the parameters checked, y shaped as x with type @dt. */
static int qparams_output(const struct ok_qdq_state *st, const struct npu_kernel_tensor *x,
			  const struct npu_kernel_tensor *scale,
			  const struct npu_kernel_tensor *zp, struct npu_kernel_tensor *y,
			  enum npu_dtype dt, char *err, size_t err_size)
{
	int ret = qparams_check(st, x, scale, zp, err, err_size);

	if (ret)
		return ret;
	y->dtype = dt;
	return ok_set_shape(y, x->rank, x->dims);
}

static void qparams_init(struct qparams *q, const struct ok_qdq_state *st,
			 const struct npu_kernel_tensor *x,
			 const struct npu_kernel_tensor *scale,
			 const struct npu_kernel_tensor *zp)
{
	uint32_t axis = 0, d;

	q->scale = scale;
	q->zero_point = zp;
	q->outer = 1;
	q->channels = 1;
	q->inner = x->elems;
	if (scale->elems == 1 && scale->rank <= 1)
		return;
	ok_axis(st->axis, x->rank, &axis, "axis", NULL, 0);
	q->inner = 1;
	for (d = 0; d < axis; d++)
		q->outer *= x->dims[d];
	q->channels = x->dims[axis];
	for (d = axis + 1; d < x->rank; d++)
		q->inner *= x->dims[d];
}

/* ---- QuantizeLinear ------------------------------------------------------- */

static int q_infer(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0], *scale = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *zp = num_inputs > 2 ? in[2] : NULL;
	enum npu_dtype dt = NPU_DTYPE_UINT8;
	int32_t lo, hi;

	if (!x || !scale || num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "x and y_scale are required");
	if (x->dtype != NPU_DTYPE_FP32 && x->dtype != NPU_DTYPE_INT32)
		return ok_fail(err, err_size, "x must be float32 or int32, not %s",
			       ok_dtype_name(x->dtype));
	if (zp) {
		dt = zp->dtype;
		if (!ok_quant_range(dt, &lo, &hi))
			return ok_fail(err, err_size,
				       "the zero point must be uint8, int8, uint16 or int16, not %s",
				       ok_dtype_name(dt));
	}
	return qparams_output(state, x, scale, zp, out[0], dt, err, err_size);
}

static int q_run(const void *state, size_t num_inputs,
		 const struct npu_kernel_tensor *const *in, size_t num_outputs,
		 struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0], *zp = num_inputs > 2 ? in[2] : NULL;
	struct npu_kernel_tensor *y = out[0];
	struct qparams q;
	uint64_t o, c, i, idx = 0, since = 0;
	int32_t lo, hi;
	int ret;

	(void)num_outputs;
	ok_quant_range(y->dtype, &lo, &hi);
	qparams_init(&q, state, x, in[1], zp);
	for (o = 0; o < q.outer; o++) {
		for (c = 0; c < q.channels; c++) {
			float scale = (float)ok_get_f(q.scale, c);
			int32_t z = zp ? (int32_t)ok_get_i(zp, c) : 0;

			for (i = 0; i < q.inner; i++, idx++) {
				float v = x->dtype == NPU_DTYPE_FP32 ?
					  ((const float *)x->data)[idx] :
					  (float)((const int32_t *)x->data)[idx];

				ok_set_i(y, idx, ok_quantize_f32(v, scale, z, lo, hi));
				ret = ok_tick(call, &since, 1);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

static int qdq_create(const struct npu_onnx_node *node, void *opaque,
		      void **state, char *err, size_t err_size)
{
	struct ok_qdq_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->per_axis = npu_onnx_node_opset(node) >= 13;
	st->axis = st->per_axis ? ok_attr_i(node, "axis", 1) : 1;
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_quantize_linear = {
	.size = sizeof(struct npu_kernel),
	.name = "QuantizeLinear",
	.infer = q_infer,
	.run = q_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_quantize_linear = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "QuantizeLinear",
	.since_version = 10,
	.kernel = &ok_kernel_quantize_linear,
	.create = qdq_create,
};

/* ---- DequantizeLinear ----------------------------------------------------- */

static int dq_infer(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0], *scale = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *zp = num_inputs > 2 ? in[2] : NULL;
	int32_t lo, hi;
	uint64_t i;

	if (!x || !scale || num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "x and x_scale are required");
	if (!ok_quant_range(x->dtype, &lo, &hi) && x->dtype != NPU_DTYPE_INT32)
		return ok_fail(err, err_size,
			       "x must be uint8, int8, uint16, int16 or int32, not %s",
			       ok_dtype_name(x->dtype));
	if (zp && zp->dtype != x->dtype)
		return ok_fail(err, err_size, "the zero point is %s, x is %s",
			       ok_dtype_name(zp->dtype), ok_dtype_name(x->dtype));
	if (zp && x->dtype == NPU_DTYPE_INT32 && zp->data)
		for (i = 0; i < zp->elems; i++)
			if (ok_get_i(zp, i))
				return ok_fail(err, err_size,
					       "an int32 x needs a zero point of 0, not %lld",
					       (long long)ok_get_i(zp, i));
	return qparams_output(state, x, scale, zp, out[0], NPU_DTYPE_FP32, err, err_size);
}

static int dq_run(const void *state, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, size_t num_outputs,
		  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0], *zp = num_inputs > 2 ? in[2] : NULL;
	float *y = out[0]->data;
	struct qparams q;
	uint64_t o, c, i, idx = 0, since = 0;
	int ret;

	(void)num_outputs;
	qparams_init(&q, state, x, in[1], zp);
	for (o = 0; o < q.outer; o++) {
		for (c = 0; c < q.channels; c++) {
			float scale = (float)ok_get_f(q.scale, c);
			int64_t z = zp ? ok_get_i(zp, c) : 0;

			for (i = 0; i < q.inner; i++, idx++) {
				y[idx] = (float)(ok_get_i(x, idx) - z) * scale;
				ret = ok_tick(call, &since, 1);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

const struct npu_kernel ok_kernel_dequantize_linear = {
	.size = sizeof(struct npu_kernel),
	.name = "DequantizeLinear",
	.infer = dq_infer,
	.run = dq_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_dequantize_linear = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "DequantizeLinear",
	.since_version = 10,
	.kernel = &ok_kernel_dequantize_linear,
	.create = qdq_create,
};

/* ---- DynamicQuantizeLinear ------------------------------------------------ */

static int dyn_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	size_t k;

	(void)state;
	if (num_inputs < 1 || !x)
		return ok_fail(err, err_size, "x is required");
	if (x->dtype != NPU_DTYPE_FP32)
		return ok_fail(err, err_size, "x must be float32, not %s",
			       ok_dtype_name(x->dtype));
	for (k = 0; k < num_outputs && k < 3; k++) {
		if (!out[k])
			continue;
		out[k]->dtype = k == 1 ? NPU_DTYPE_FP32 : NPU_DTYPE_UINT8;
		if (k)
			ok_set_shape(out[k], 0, NULL);
		else
			ok_set_shape(out[k], x->rank, x->dims);
	}
	return 0;
}

static int dyn_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	const float *xv = x->data;
	float mn = FLT_MAX, mx = -FLT_MAX, scale, zp_f;
	int32_t zp;
	uint64_t i, since = 0;
	int ret;

	(void)state;
	(void)num_inputs;
	for (i = 0; i < x->elems; i++) {
		/* NaNs take no part in the range, as in MLAS's min/max search */
		mn = fminf(mn, xv[i]);
		mx = fmaxf(mx, xv[i]);
		ret = ok_tick(call, &since, 1);
		if (ret)
			return ret;
	}
	mn = fminf(mn, 0.0f);
	mx = fmaxf(mx, 0.0f);
	scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
	zp_f = 0.0f - mn / scale;
	zp_f = fmaxf(0.0f, fminf(255.0f, zp_f));
	zp = (int32_t)nearbyintf(zp_f);
	if (num_outputs > 1 && out[1])
		((float *)out[1]->data)[0] = scale;
	if (num_outputs > 2 && out[2])
		((uint8_t *)out[2]->data)[0] = (uint8_t)zp;
	if (!out[0])
		return 0;
	for (i = 0; i < x->elems; i++) {
		((uint8_t *)out[0]->data)[i] =
			(uint8_t)ok_quantize_f32(xv[i], scale, zp, 0, 255);
		ret = ok_tick(call, &since, 1);
		if (ret)
			return ret;
	}
	return 0;
}

static uint64_t dyn_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs, const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	(void)out;
	return 2 * in[0]->elems;	/* the range search, then the quantization */
}

const struct npu_kernel ok_kernel_dynamic_quantize_linear = {
	.size = sizeof(struct npu_kernel),
	.name = "DynamicQuantizeLinear",
	.infer = dyn_infer,
	.work = dyn_work,
	.run = dyn_run,
};

const struct npu_onnx_op ok_op_dynamic_quantize_linear = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "DynamicQuantizeLinear",
	.since_version = 11,
	.kernel = &ok_kernel_dynamic_quantize_linear,
};
