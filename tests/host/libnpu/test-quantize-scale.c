// SPDX-License-Identifier: MIT
/*
 * npu-quantize's arithmetic (libnpu/tools/npu-quantize-scale.c) against
 * values worked out by hand from onnxruntime's quant_utils.py:
 *
 *   compute_scale_zp: rmin = min(rmin, 0), rmax = max(rmax, 0), made
 *     [-m, m] when symmetric; scale = float64(rmax - rmin in float32) /
 *     (qmax - qmin), below float32's tiny => (1.0, 0); else
 *     zp = round(qmin - rmin / scale) (float64, ties to even), or
 *     round((qmin + qmax) / 2) when symmetric, and the scale stored as
 *     float32.
 *   quantize_nparray: clip(round(float32(x) / scale) + zp) with the
 *     division in float32, clipped to the type's range.
 *   bias: scale = input_scale * weight_scale (float32), round(b / scale)
 *     divided in float64, clipped to int32.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npu-quantize-scale.h"

static void test_ranges(void **state)
{
	int32_t lo, hi;

	(void)state;
	qz_range(QZ_INT8, false, &lo, &hi);
	assert_int_equal(lo, -128);
	assert_int_equal(hi, 127);
	qz_range(QZ_INT8, true, &lo, &hi);
	assert_int_equal(lo, -127);
	assert_int_equal(hi, 127);
	/* uint8 has no symmetric range of its own */
	qz_range(QZ_UINT8, true, &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 255);
}

static void test_scale_zp_asymmetric(void **state)
{
	float s;
	int32_t z;

	(void)state;
	/* [-1, 3]: scale 4/255, zp round(-128 + 63.75) = -64 (int8), 64 (uint8) */
	assert_int_equal(qz_scale_zp(-1, 3, -128, 127, false, &s, &z), 0);
	assert_true(s == (float)(4.0 / 255.0));
	assert_true(s == 0x1.010102p-6f);
	assert_int_equal(z, -64);
	assert_int_equal(qz_scale_zp(-1, 3, 0, 255, false, &s, &z), 0);
	assert_int_equal(z, 64);
	/* a range that does not hold 0 is widened to it: [2, 5] is [0, 5] */
	assert_int_equal(qz_scale_zp(2, 5, -128, 127, false, &s, &z), 0);
	assert_true(s == (float)(5.0 / 255.0));
	assert_int_equal(z, -128);
	assert_int_equal(qz_scale_zp(-5, -2, 0, 255, false, &s, &z), 0);
	assert_int_equal(z, 255);
}

static void test_scale_zp_ties_to_even(void **state)
{
	float s;
	int32_t z;

	(void)state;
	/* uint8 over [-2.5/8, 255/8 - 2.5/8]: scale 1/8 exactly, zp round(2.5) = 2 */
	assert_int_equal(qz_scale_zp(-0.3125f, 31.5625f, 0, 255, false, &s, &z), 0);
	assert_true(s == 0.125f);
	assert_int_equal(z, 2);
	/* and round(3.5) = 4 */
	assert_int_equal(qz_scale_zp(-0.4375f, 31.4375f, 0, 255, false, &s, &z), 0);
	assert_true(s == 0.125f);
	assert_int_equal(z, 4);
}

static void test_scale_zp_symmetric(void **state)
{
	float s;
	int32_t z;

	(void)state;
	/* [-1, 0.5] symmetric int8 is [-1, 1] over [-127, 127]: 2/254, zp 0 */
	assert_int_equal(qz_scale_zp(-1, 0.5f, -127, 127, true, &s, &z), 0);
	assert_true(s == (float)(2.0 / 254.0));
	assert_int_equal(z, 0);
	/* symmetric uint8: [-m, m] over [0, 255], zp round(127.5) = 128 */
	assert_int_equal(qz_scale_zp(-0.5f, 2, 0, 255, true, &s, &z), 0);
	assert_true(s == (float)(4.0 / 255.0));
	assert_int_equal(z, 128);
	/*
	 * (qmin + qmax) / 2, not qmin - rmin / scale: with m = 0x1.5c0942p+2
	 * the latter is 127.49999999999999 and would round to 127
	 */
	assert_int_equal(qz_scale_zp(-0x1.5c0942p+2f, 0x1.5c0942p+2f, 0, 255, true, &s, &z), 0);
	assert_int_equal(z, 128);
}

static void test_scale_zp_degenerate(void **state)
{
	float s = 0;
	int32_t z = 7;

	(void)state;
	/* onnxruntime's own test: compute_scale_zp(0, 0, -127, 127, True) == [0, 1.0] */
	assert_int_equal(qz_scale_zp(0, 0, -127, 127, true, &s, &z), 0);
	assert_true(s == 1.0f);
	assert_int_equal(z, 0);
	/* a range whose scale is below float32's smallest normal: 1.0 and 0 */
	assert_int_equal(qz_scale_zp(-1e-38f, 0, -128, 127, false, &s, &z), 0);
	assert_true(s == 1.0f);
	assert_int_equal(z, 0);
	assert_int_equal(qz_scale_zp(NAN, 1, -128, 127, false, &s, &z), -EDOM);
	assert_int_equal(qz_scale_zp(0, INFINITY, -128, 127, false, &s, &z), -EDOM);
	assert_int_equal(qz_scale_zp(0, 1, 1, 127, false, &s, &z), -EDOM);
}

static void test_quantize(void **state)
{
	(void)state;
	assert_int_equal(qz_quantize(2.5f, 1, 0, -128, 127), 2);
	assert_int_equal(qz_quantize(3.5f, 1, 0, -128, 127), 4);
	assert_int_equal(qz_quantize(-2.5f, 1, 0, -128, 127), -2);
	assert_int_equal(qz_quantize(-2.5f, 1, 10, -128, 127), 8);
	assert_int_equal(qz_quantize(1000, 1, 0, -128, 127), 127);
	assert_int_equal(qz_quantize(-1000, 1, 0, -127, 127), -127);
	assert_int_equal(qz_quantize(NAN, 1, 0, -128, 127), -128);
	/*
	 * The division is float32's: 0x1.0f2036p+3 / 0x1.f6f542p-3 is
	 * 34.5000008 in float64 (rounding to 35) but exactly 34.5 in float32,
	 * which numpy rounds to 34.
	 */
	assert_int_equal(qz_quantize(0x1.0f2036p+3f, 0x1.f6f542p-3f, 0, -128, 127), 34);
}

static void test_weights(void **state)
{
	const float w[] = { -1.0f, 0.5f, 0.25f, -0.3f, 0.0042f };
	int8_t q[5];
	uint8_t u[3];
	float s;
	int32_t z;

	(void)state;
	/* symmetric int8: scale f32(2 / 254) = 0x1.020408p-7, -1 -> -127,
	 * 0.5 / scale = 63.50000x -> 64, 0.25 -> 32, -0.3 -> -38, 0.0042 -> 1 */
	assert_int_equal(qz_weights(w, 5, 1, QZ_INT8, true, false, &s, &z, q, 1), 0);
	assert_true(s == 0x1.020408p-7f);
	assert_int_equal(z, 0);
	assert_int_equal(q[0], -127);
	assert_int_equal(q[1], 64);
	assert_int_equal(q[2], 32);
	assert_int_equal(q[3], -38);
	assert_int_equal(q[4], 1);
	/* strided: elements 0, 2 and 4 */
	assert_int_equal(qz_weights(w, 3, 2, QZ_INT8, true, false, &s, &z, q, 1), 0);
	assert_int_equal(q[0], -127);
	assert_int_equal(q[1], 32);
	/*
	 * uint8 weights (an Add's constant with uint8 activations): [-1, 1]
	 * over [0, 255], scale f32(2 / 255) = 0x1.010102p-7, zp round(127.5)
	 * = 128; -1 / scale is -127.499992 in float32 (-127, + 128 = 1), 0.5
	 * is 63.749996 (64 -> 192), 0.25 is 31.874998 (32 -> 160).
	 */
	assert_int_equal(qz_weights(w, 3, 1, QZ_UINT8, true, false, &s, &z, u, 1), 0);
	assert_true(s == 0x1.010102p-7f);
	assert_int_equal(z, 128);
	assert_int_equal(u[0], 1);
	assert_int_equal(u[1], 192);
	assert_int_equal(u[2], 160);
	/*
	 * reduce_range: [-1, 1] over [-64, 64], scale f32(2 / 128) = 1/64:
	 * -1 -> -64, 0.5 -> 32, 0.25 -> 16
	 */
	assert_int_equal(qz_weights(w, 3, 1, QZ_INT8, true, true, &s, &z, q, 1), 0);
	assert_true(s == 0.015625f);
	assert_int_equal(z, 0);
	assert_int_equal(q[0], -64);
	assert_int_equal(q[1], 32);
	assert_int_equal(q[2], 16);
	/* all zeros: scale 1, zero point 0, values 0 */
	{
		const float zero[3] = { 0 };

		assert_int_equal(qz_weights(zero, 3, 1, QZ_INT8, true, false, &s, &z, q, 1), 0);
		assert_true(s == 1.0f);
		assert_int_equal(q[0], 0);
	}
	{
		const float bad[2] = { 1, NAN };

		assert_int_equal(qz_weights(bad, 2, 1, QZ_INT8, true, false, &s, &z, q, 1), -EDOM);
	}
}

static void test_bias(void **state)
{
	int32_t q;

	(void)state;
	/* the bias scale is the float32 product of the two scales */
	assert_true(qz_bias_scale(0x1.010102p-6f, 0x1.020408p-7f) ==
		    (float)((double)0x1.010102p-6f * (double)0x1.020408p-7f));
	assert_int_equal(qz_bias(2.5f, 1, &q), 0);
	assert_int_equal(q, 2);
	assert_int_equal(qz_bias(-7.5f, 0.5f, &q), 0);
	assert_int_equal(q, -15);
	/* float64: 0x1.0f2036p+3 / 0x1.f6f542p-3 is 34.5000008, 35 (34 in float32) */
	assert_int_equal(qz_bias(0x1.0f2036p+3f, 0x1.f6f542p-3f, &q), 0);
	assert_int_equal(q, 35);
	/* beyond int32: clipped, and said so */
	assert_int_equal(qz_bias(1e10f, 1, &q), -ERANGE);
	assert_int_equal(q, INT32_MAX);
	assert_int_equal(qz_bias(-1e10f, 1, &q), -ERANGE);
	assert_int_equal(q, INT32_MIN);
	assert_int_equal(qz_bias(NAN, 1, &q), -EDOM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_scale_zp_asymmetric),
		cmocka_unit_test(test_scale_zp_ties_to_even),
		cmocka_unit_test(test_scale_zp_symmetric),
		cmocka_unit_test(test_scale_zp_degenerate),
		cmocka_unit_test(test_quantize),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_bias),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
