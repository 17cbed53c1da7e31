// SPDX-License-Identifier: MIT
/* npu-quantize: scale and zero point arithmetic (see npu-quantize-scale.h). */
#include <errno.h>
#include <float.h>
#include <math.h>

#include "npu-quantize-scale.h"

void qz_range(enum qz_type t, bool symmetric, int32_t *qmin, int32_t *qmax)
{
	if (t == QZ_UINT8) {
		*qmin = 0;
		*qmax = 255;
	} else {
		*qmin = symmetric ? -127 : -128;
		*qmax = 127;
	}
}

/* numpy.round: half to even, which rint() does in the default rounding mode. */
static double round_even(double v)
{
	return rint(v);
}

int qz_scale_zp(float rmin, float rmax, int32_t qmin, int32_t qmax, bool symmetric,
		float *scale, int32_t *zero_point)
{
	double dr, s, z;

	if (!isfinite(rmin) || !isfinite(rmax) || qmin > 0 || qmax < 0 || qmin > qmax)
		return -EDOM;
	rmin = fminf(rmin, 0.0f);
	rmax = fmaxf(rmax, 0.0f);
	if (symmetric) {
		float absmax = fmaxf(fabsf(rmin), fabsf(rmax));

		rmin = -absmax;
		rmax = absmax;
	}
	/* numpy subtracts the float32 bounds in float32, then widens */
	dr = (double)(float)(rmax - rmin);
	s = dr / ((double)qmax - (double)qmin);
	if (s < FLT_MIN) {
		*scale = 1.0f;
		*zero_point = 0;
		return 0;
	}
	/* symmetric: (qmin + qmax) / 2, which does not depend on the scale */
	if (symmetric)
		z = round_even(((double)qmin + (double)qmax) / 2.0);
	else
		z = round_even((double)qmin - (double)rmin / s);
	if (z < qmin)
		z = qmin;
	if (z > qmax)
		z = qmax;
	*zero_point = (int32_t)z;
	*scale = (float)s;
	return 0;
}

int32_t qz_quantize(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax)
{
	float q = rintf(x / scale) + (float)zero_point;

	if (!(q >= (float)qmin))	/* NaN too */
		return qmin;
	if (q > (float)qmax)
		return qmax;
	return (int32_t)q;
}

int qz_weights(const float *w, size_t n, size_t stride, enum qz_type t, bool symmetric,
	       bool reduce_range, float *scale, int32_t *zero_point, void *out,
	       size_t out_stride)
{
	float lo = 0, hi = 0;
	int32_t qmin, qmax, cmin, cmax;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		float v = w[i * stride];

		if (!isfinite(v))
			return -EDOM;
		if (!i || v < lo)
			lo = v;
		if (!i || v > hi)
			hi = v;
	}
	qz_range(t, symmetric, &qmin, &qmax);
	/* ONNX_INT_TYPE_REDUCED_RANGE */
	if (reduce_range) {
		qmin = t == QZ_INT8 ? -64 : 0;
		qmax = t == QZ_INT8 ? 64 : 127;
	}
	*scale = 1.0f;
	*zero_point = 0;
	if (n) {
		ret = qz_scale_zp(lo, hi, qmin, qmax, symmetric, scale, zero_point);
		if (ret)
			return ret;
	}
	/* quantize_nparray clips to the type's whole range */
	qz_range(t, false, &cmin, &cmax);
	for (i = 0; i < n; i++) {
		int32_t q = qz_quantize(w[i * stride], *scale, *zero_point, cmin, cmax);

		if (t == QZ_UINT8)
			((uint8_t *)out)[i * out_stride] = (uint8_t)q;
		else
			((int8_t *)out)[i * out_stride] = (int8_t)q;
	}
	return 0;
}

float qz_bias_scale(float input_scale, float weight_scale)
{
	return input_scale * weight_scale;
}

int qz_bias(float b, float bias_scale, int32_t *q)
{
	double v = rint((double)b / (double)bias_scale);

	if (isnan(v))
		return -EDOM;
	if (v < -2147483648.0) {
		*q = INT32_MIN;
		return -ERANGE;
	}
	if (v > 2147483647.0) {
		*q = INT32_MAX;
		return -ERANGE;
	}
	*q = (int32_t)v;
	return 0;
}
