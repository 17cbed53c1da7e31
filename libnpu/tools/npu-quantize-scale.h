/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: the quantization arithmetic of onnxruntime's
 * quantize_static (quant_utils.py), reproduced value for value: the
 * scale and zero point of a range, the rounding of weights and biases.
 * numpy's types are kept where they decide the result (the range is
 * subtracted in float32, the scale divided in float64 then stored as
 * float32, values divided by the scale in float32, ties to even).
 */
#ifndef NPU_QUANTIZE_SCALE_H
#define NPU_QUANTIZE_SCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qz_type { QZ_INT8, QZ_UINT8 };

/*
 * The integer range of @t (get_qmin_qmax_for_qType): int8 is -128..127,
 * or -127..127 when @symmetric; uint8 is always 0..255.
 */
void qz_range(enum qz_type t, bool symmetric, int32_t *qmin, int32_t *qmax);

/*
 * compute_scale_zp(): the scale and zero point that map [@rmin, @rmax],
 * widened to include 0 (and made [-m, m] when @symmetric, the zero point
 * then (qmin + qmax) / 2), onto [@qmin, @qmax].  -EDOM for a non-finite
 * bound or qmin > 0 > qmax.
 */
int qz_scale_zp(float rmin, float rmax, int32_t qmin, int32_t qmax, bool symmetric,
		float *scale, int32_t *zero_point);

/*
 * quantize_nparray(): round(x / scale) + zero_point, clipped to
 * [@qmin, @qmax]; the division in float32, ties to even.
 */
int32_t qz_quantize(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);

/*
 * quantize_data() on @n weights: the scale and zero point of their range
 * (symmetric or not; over 7 bits, [-64, 64] or [0, 127], with
 * @reduce_range) and the values as @t (int8_t or uint8_t in @out).
 * -EDOM for a weight that is not finite.
 */
int qz_weights(const float *w, size_t n, size_t stride, enum qz_type t, bool symmetric,
	       bool reduce_range, float *scale, int32_t *zero_point, void *out,
	       size_t out_stride);

/*
 * quantize_bias_static(): bias scale input_scale * weight_scale (float32)
 * and the bias as int32 round(b / scale), divided in float64; a value
 * beyond int32 is clipped to it and -ERANGE returned (onnxruntime warns
 * "exceeds the range of a int32"), -EDOM for NaN.
 */
float qz_bias_scale(float input_scale, float weight_scale);
int qz_bias(float b, float bias_scale, int32_t *q);

#endif /* NPU_QUANTIZE_SCALE_H */
