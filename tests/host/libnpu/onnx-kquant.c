// SPDX-License-Identifier: MIT
/*
 * The quant family of ONNX CPU kernels (libnpu/onnx/kernels/ok_quant*.c)
 * run directly through npu_kernel_run(): the ONNX specification's
 * examples, hand-computed cases of onnxruntime's rounding (half to even
 * after a float32 division, clamping first, NaN to the lower bound), per
 * axis and per channel parameters, every infer() refusal, and a poll.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "npu/kernel.h"
#include "npu/onnx.h"
#include "kernels/ok_quant.h"
#include "onnx-ktest.h"

/* Pool tensors: of a dims array, and scalars. */
#define T(dt, dims, data) kt_tensor(dt, KT_RANK(dims), dims, data)
#define S(dt, data) kt_tensor(dt, 0, NULL, data)

/* ---- QuantizeLinear ---------------------------------------------------------- */

static void test_quantize_per_tensor(void **unused)
{
	/* ONNX's example: 3 / 2 = 1.5 rounds to 2, saturation both ways */
	static const float x[] = { 0, 2, 3, 1000, -254, -1000 };
	static const float scale = 2;
	static const uint8_t zp = 128, want[] = { 128, 129, 130, 255, 1, 0 };
	struct ok_qdq_state st = { .axis = 1, .per_axis = true };
	uint32_t d6[] = { 6 };
	struct npu_kernel_tensor y, *in[3] = {
		T(NPU_DTYPE_FP32, d6, x), S(NPU_DTYPE_FP32, &scale), S(NPU_DTYPE_UINT8, &zp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_int_equal(y.rank, 1);
	assert_memory_equal(y.data, want, 6);
	kt_free_out(&y);
}

static void test_quantize_rounding(void **unused)
{
	/*
	 * int8, zero point -1: ties go to even before the zero point is added
	 * (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), NaN takes the lowest value as
	 * MLAS's MAXPS does, infinities saturate, and the division is float32:
	 * -11.75f / 0.1f is the tie -117.5f in float (-117.4999998 in double),
	 * which rounds to -118, not -117.
	 */
	static const float x[] = { 2.5f, 3.5f, -2.5f, NAN, INFINITY, -INFINITY, -11.75f, 127.5f };
	static const float scale = 1;
	static const int8_t zp = -1, want[] = { 1, 3, -3, -128, 127, -128, -13, 127 };
	static const float scale2 = 0.1f;
	static const int8_t zp2 = 0, want2[] = { 25, 35, -25, -128, 127, -128, -118, 127 };
	struct ok_qdq_state st = { .axis = 1, .per_axis = true };
	uint32_t d8[] = { 8 };
	struct npu_kernel_tensor y, *in[3] = {
		T(NPU_DTYPE_FP32, d8, x), S(NPU_DTYPE_FP32, &scale), S(NPU_DTYPE_INT8, &zp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT8);
	assert_memory_equal(y.data, want, 8);
	kt_free_out(&y);
	in[1] = S(NPU_DTYPE_FP32, &scale2);
	in[2] = S(NPU_DTYPE_INT8, &zp2);
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want2, 8);
	kt_free_out(&y);
}

static void test_quantize_per_axis(void **unused)
{
	/* x [1, 3, 2], axis 1: channel c divides by scale[c], adds zp[c] */
	static const float x[] = { -162, 10, -76, 0, 245, -485 };
	static const float scale[] = { 2, 4, 5 };
	static const uint8_t zp[] = { 84, 24, 196 };
	static const uint8_t want[] = { 3, 89, 5, 24, 245, 99 };
	/* no zero point: uint8 with 0; axis -1 over [3, 2] is per column */
	static const float x2[] = { 1, 1, 2, 2, -3, 300 };
	static const float scale2[] = { 1, 2 };
	static const uint8_t want2[] = { 1, 0, 2, 1, 0, 150 };
	struct ok_qdq_state st = { .axis = 1, .per_axis = true };
	uint32_t dx[] = { 1, 3, 2 }, d3[] = { 3 }, dx2[] = { 3, 2 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[3] = {
		T(NPU_DTYPE_FP32, dx, x), T(NPU_DTYPE_FP32, d3, scale), T(NPU_DTYPE_UINT8, d3, zp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want, 6);
	kt_free_out(&y);
	st.axis = -1;
	in[0] = T(NPU_DTYPE_FP32, dx2, x2);
	in[1] = T(NPU_DTYPE_FP32, d2, scale2);
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_memory_equal(y.data, want2, 6);
	kt_free_out(&y);
}

static void test_quantize_16bit(void **unused)
{
	static const float x[] = { 70000, -70000, 1.5f };
	static const float scale = 1;
	static const uint16_t zpu = 0, wantu[] = { 65535, 0, 2 };
	static const int16_t zps = 0, wants[] = { 32767, -32768, 2 };
	struct ok_qdq_state st = { .axis = 1, .per_axis = true };
	uint32_t d3[] = { 3 };
	struct npu_kernel_tensor y, *in[3] = {
		T(NPU_DTYPE_FP32, d3, x), S(NPU_DTYPE_FP32, &scale), S(NPU_DTYPE_UINT16, &zpu) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, wantu, sizeof(wantu));
	kt_free_out(&y);
	in[2] = S(NPU_DTYPE_INT16, &zps);
	assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, wants, sizeof(wants));
	kt_free_out(&y);
}

static void test_quantize_errors(void **unused)
{
	static const float x[6], scale[3] = { 1, 1, 1 };
	static const int32_t iscale = 1;
	struct ok_qdq_state st = { .axis = 1, .per_axis = false };
	uint32_t dx[] = { 2, 3 }, d3[] = { 3 }, d2[] = { 2 }, d11[] = { 1, 3 };
	struct npu_kernel_tensor y, *in[3] = { T(NPU_DTYPE_FP32, dx, x),
					       T(NPU_DTYPE_FP32, d3, scale), NULL };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "scalar before opset 13");
	st.per_axis = true;
	st.axis = 2;
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "axis 2 is out of range [-2, 2)");
	st.axis = 0;
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "the scale has 3 values, axis 0 of the input has 2");
	in[1] = T(NPU_DTYPE_FP32, d11, scale);
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "must be 1-D, not of rank 2");
	in[1] = S(NPU_DTYPE_INT32, &iscale);
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "the scale must be float32, not int32");
	st.axis = 1;
	in[1] = T(NPU_DTYPE_FP32, d3, scale);
	in[2] = T(NPU_DTYPE_UINT8, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL),
		    "the zero point must have the scale's shape");
	in[2] = T(NPU_DTYPE_INT32, d3, NULL);
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL),
		    "uint8, int8, uint16 or int16, not int32");
	in[0] = T(NPU_DTYPE_INT8, dx, NULL);
	kt_expect_fail(kt_run(&ok_kernel_quantize_linear, &st, 2, in, 1, out, NULL),
		    "x must be float32 or int32, not int8");
	{
		/* a [1] scale with a scalar zero point: onnxruntime's tools write it */
		static const uint32_t d1[] = { 1 };
		static const uint8_t zp = 3;

		in[0] = T(NPU_DTYPE_FP32, dx, x);
		in[1] = T(NPU_DTYPE_FP32, d1, scale);
		in[2] = S(NPU_DTYPE_UINT8, &zp);
		assert_int_equal(kt_run(&ok_kernel_quantize_linear, &st, 3, in, 1, out, NULL), 0);
		/* x is 0: the zero point */
		assert_int_equal(((uint8_t *)y.data)[0], 3);
		kt_free_out(&y);
	}
}

/* ---- DequantizeLinear -------------------------------------------------------- */

static void test_dequantize(void **unused)
{
	/* ONNX's example, then per axis with int8 and an int32 x */
	static const uint8_t x[] = { 0, 3, 128, 255 }, zp = 128;
	static const float scale = 2, want[] = { -256, -250, 0, 254 };
	static const int8_t x2[] = { -128, 0, 1, 127 }, zp2[] = { 1, -1 };
	static const float scale2[] = { 0.5f, 3 }, want2[] = { -64.5f, -0.5f, 6, 384 };
	static const int32_t x3[] = { -2000000000, 7 };
	static const float scale3 = 0.25f, want3[] = { -500000000.0f, 1.75f };
	struct ok_qdq_state st = { .axis = 0, .per_axis = true };
	uint32_t d4[] = { 4 }, d22[] = { 2, 2 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[3] = {
		T(NPU_DTYPE_UINT8, d4, x), S(NPU_DTYPE_FP32, &scale), S(NPU_DTYPE_UINT8, &zp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_dequantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_FP32);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT8, d22, x2);
	in[1] = T(NPU_DTYPE_FP32, d2, scale2);
	in[2] = T(NPU_DTYPE_INT8, d2, zp2);
	assert_int_equal(kt_run(&ok_kernel_dequantize_linear, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want2, sizeof(want2));
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT32, d2, x3);
	in[1] = S(NPU_DTYPE_FP32, &scale3);
	assert_int_equal(kt_run(&ok_kernel_dequantize_linear, &st, 2, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want3, sizeof(want3));
	kt_free_out(&y);
	/* errors */
	in[2] = S(NPU_DTYPE_INT8, &zp2[0]);
	kt_expect_fail(kt_run(&ok_kernel_dequantize_linear, &st, 3, in, 1, out, NULL),
		    "the zero point is int8, x is int32");
	{
		static const int32_t one = 1;

		in[2] = S(NPU_DTYPE_INT32, &one);
		kt_expect_fail(kt_run(&ok_kernel_dequantize_linear, &st, 3, in, 1, out, NULL),
			    "an int32 x needs a zero point of 0, not 1");
	}
	in[0] = T(NPU_DTYPE_FP32, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_dequantize_linear, &st, 2, in, 1, out, NULL),
		    "x must be uint8, int8, uint16, int16 or int32, not float32");
}

/* ---- DynamicQuantizeLinear ---------------------------------------------------- */

static void test_dynamic_quantize(void **unused)
{
	/*
	 * ONNX's example: range [-3, 2], scale 5 / 255, zero point
	 * round(3 / scale) = 153.  Then all-positive data (the range takes 0
	 * in: zero point 0), and all zeros (scale 1).
	 */
	static const float x[] = { 0, 2, -3, -2.5f, 1.34f, 0.5f };
	static const uint8_t want[] = { 153, 255, 0, 26, 221, 179 };
	static const float x2[] = { 1, 2.5f, 5.1f };
	static const uint8_t want2[] = { 50, 125, 255 };
	static const float x3[] = { 0, 0 };
	uint32_t d6[] = { 6 }, d3[] = { 3 }, d2[] = { 2 };
	struct npu_kernel_tensor y, s, z, *in[1] = { T(NPU_DTYPE_FP32, d6, x) };
	struct npu_kernel_tensor *out[3] = { &y, &s, &z };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_dynamic_quantize_linear, NULL, 1, in, 3, out, NULL), 0);
	assert_int_equal(s.rank, 0);
	assert_true(*(float *)s.data == 5.0f / 255.0f);
	assert_int_equal(*(uint8_t *)z.data, 153);
	assert_memory_equal(y.data, want, 6);
	kt_free_out(&y); kt_free_out(&s); kt_free_out(&z);
	in[0] = T(NPU_DTYPE_FP32, d3, x2);
	assert_int_equal(kt_run(&ok_kernel_dynamic_quantize_linear, NULL, 1, in, 3, out, NULL), 0);
	assert_true(*(float *)s.data == 5.1f / 255.0f);
	assert_int_equal(*(uint8_t *)z.data, 0);
	assert_memory_equal(y.data, want2, 3);
	kt_free_out(&y); kt_free_out(&s); kt_free_out(&z);
	in[0] = T(NPU_DTYPE_FP32, d2, x3);
	assert_int_equal(kt_run(&ok_kernel_dynamic_quantize_linear, NULL, 1, in, 3, out, NULL), 0);
	assert_true(*(float *)s.data == 1.0f);
	assert_int_equal(*(uint8_t *)z.data, 0);
	kt_free_out(&y); kt_free_out(&s); kt_free_out(&z);
	in[0] = T(NPU_DTYPE_FP64, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_dynamic_quantize_linear, NULL, 1, in, 3, out, NULL),
		    "x must be float32, not float64");
}

/* ---- MatMulInteger and QLinearMatMul ----------------------------------------- */

static void test_matmul_integer(void **unused)
{
	/* ONNX's example */
	static const uint8_t a[] = { 11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0 }, azp = 12;
	static const uint8_t b[] = { 1, 4, 2, 5, 3, 6 }, bzp = 0;
	static const int32_t want[] = { -38, -83, -44, -98, -50, -113, -56, -128 };
	/* per-column B zero points, int8, B broadcast over A's batch of 2 */
	static const int8_t a2[] = { 1, 2, -3, 4 }, b2[] = { 1, -1, 2, 5 }, bzp2[] = { 1, -1 };
	static const int32_t want2[] = { 2, 12, 4, 24 };
	uint32_t da[] = { 4, 3 }, db[] = { 3, 2 }, da2[] = { 2, 1, 2 }, db2[] = { 2, 2 },
		 d2[] = { 2 };
	struct npu_kernel_tensor y, *in[4] = { T(NPU_DTYPE_UINT8, da, a), T(NPU_DTYPE_UINT8, db, b),
					       S(NPU_DTYPE_UINT8, &azp), S(NPU_DTYPE_UINT8, &bzp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT32);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.dims[0], 4);
	assert_int_equal(y.dims[1], 2);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT8, da2, a2);
	in[1] = T(NPU_DTYPE_INT8, db2, b2);
	in[2] = NULL;
	in[3] = T(NPU_DTYPE_INT8, d2, bzp2);
	assert_int_equal(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, out, NULL), 0);
	assert_int_equal(y.rank, 3);
	assert_int_equal(y.dims[0], 2);
	assert_int_equal(y.dims[1], 1);
	assert_int_equal(y.dims[2], 2);
	assert_memory_equal(y.data, want2, sizeof(want2));
	kt_free_out(&y);
	/* errors */
	in[1] = T(NPU_DTYPE_INT8, da, NULL);
	in[3] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, out, NULL),
		    "A has 2 columns but B has 4 rows");
	in[1] = T(NPU_DTYPE_INT8, db2, b2);
	in[3] = T(NPU_DTYPE_UINT8, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, out, NULL),
		    "B's zero point must be int8, not uint8");
	in[3] = T(NPU_DTYPE_INT8, da, NULL);
	kt_expect_fail(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, out, NULL),
		    "B's zero point must be a scalar or have 2 values");
	in[0] = T(NPU_DTYPE_INT32, db2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_matmul_integer, NULL, 2, in, 1, out, NULL),
		    "A and B must be uint8 or int8, not int32 and int8");
}

static void test_qlinear_matmul(void **unused)
{
	/* ONNX's 2-D example */
	static const uint8_t a[] = { 208, 236, 0, 238, 3, 214, 255, 29 }, azp = 113;
	static const uint8_t b[] = { 152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247 };
	static const uint8_t bzp = 114, yzp = 118;
	static const float as = 0.0066f, bs = 0.00705f, ys = 0.0107f;
	static const uint8_t want[] = { 168, 115, 255, 1, 66, 151 };
	/*
	 * int8 with per-column B scales [1, 0.5], y scale 2, zp 0: row 0 of
	 * A x B is (10, 9) -> 10 * 0.5 = 5, 9 * 0.25 = 2.25 -> (5, 2); row 1
	 * is (-3, -3) -> -1.5 -> -2 (half to even), -0.75 -> -1.
	 */
	static const int8_t a2[] = { 1, 3, 0, -1 }, b2[] = { 1, 0, 3, 3 }, zero = 0;
	static const float as2 = 1, bs2[] = { 1, 0.5f }, ys2 = 2;
	static const int8_t want2[] = { 5, 2, -2, -1 };
	uint32_t da[] = { 2, 4 }, db[] = { 4, 3 }, d22[] = { 2, 2 }, d2[] = { 2 }, d1[] = { 1 };
	struct npu_kernel_tensor y, *in[8] = {
		T(NPU_DTYPE_UINT8, da, a), T(NPU_DTYPE_FP32, d1, &as), T(NPU_DTYPE_UINT8, d1, &azp),
		T(NPU_DTYPE_UINT8, db, b), T(NPU_DTYPE_FP32, d1, &bs), T(NPU_DTYPE_UINT8, d1, &bzp),
		T(NPU_DTYPE_FP32, d1, &ys), T(NPU_DTYPE_UINT8, d1, &yzp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_qlinear_matmul, NULL, 8, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT8, d22, a2);
	in[1] = S(NPU_DTYPE_FP32, &as2);
	in[2] = S(NPU_DTYPE_INT8, &zero);
	in[3] = T(NPU_DTYPE_INT8, d22, b2);
	in[4] = T(NPU_DTYPE_FP32, d2, bs2);
	in[5] = S(NPU_DTYPE_INT8, &zero);
	in[6] = S(NPU_DTYPE_FP32, &ys2);
	in[7] = S(NPU_DTYPE_INT8, &zero);
	assert_int_equal(kt_run(&ok_kernel_qlinear_matmul, NULL, 8, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT8);
	assert_memory_equal(y.data, want2, sizeof(want2));
	kt_free_out(&y);
	/* errors */
	in[6] = T(NPU_DTYPE_FP32, d2, bs2);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_matmul, NULL, 8, in, 1, out, NULL),
		    "the output's scale must be one float32");
	in[6] = S(NPU_DTYPE_FP32, &ys2);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_matmul, NULL, 7, in, 1, out, NULL),
		    "all 8 inputs are required");
}

/* ---- ConvInteger and QLinearConv ---------------------------------------------- */

static void test_conv_integer(void **unused)
{
	/* ONNX's examples: without and with padding */
	static const uint8_t x[] = { 2, 3, 4, 5, 6, 7, 8, 9, 10 }, xzp = 1;
	static const uint8_t w[] = { 1, 1, 1, 1 };
	static const int32_t want[] = { 12, 16, 24, 28 };
	static const int32_t want_pad[] = { 1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9 };
	/* SAME_UPPER with stride 2 over 3 x 3: output 2 x 2, total pad 1 at the end */
	static const int32_t want_same[] = { 12, 9, 15, 9 };
	struct ok_qconv_state st = { .group = 1 };
	uint32_t dx[] = { 1, 1, 3, 3 }, dw[] = { 1, 1, 2, 2 };
	struct npu_kernel_tensor y, *in[3] = { T(NPU_DTYPE_UINT8, dx, x), T(NPU_DTYPE_UINT8, dw, w),
					       S(NPU_DTYPE_UINT8, &xzp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_conv_integer, &st, 3, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT32);
	assert_int_equal(y.dims[2], 2);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	st.n_pads = 4;
	st.pads[0] = st.pads[1] = st.pads[2] = st.pads[3] = 1;
	assert_int_equal(kt_run(&ok_kernel_conv_integer, &st, 3, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[2], 4);
	assert_int_equal(y.dims[3], 4);
	assert_memory_equal(y.data, want_pad, sizeof(want_pad));
	kt_free_out(&y);
	st.n_pads = 0;
	st.auto_pad = OK_QPAD_SAME_UPPER;
	st.n_strides = 2;
	st.strides[0] = st.strides[1] = 2;
	assert_int_equal(kt_run(&ok_kernel_conv_integer, &st, 3, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want_same, sizeof(want_same));
	kt_free_out(&y);
}

static void test_conv_integer_groups_1d(void **unused)
{
	/*
	 * 1-D, 2 groups of 1 channel, dilation 2, per-channel int8 weight
	 * zero points (1, -1): channel 0 is x0 * (w - 1), channel 1 x1 * (w + 1).
	 */
	static const int8_t x[] = { 1, 2, 3, 4, 5, -1, -2, -3, -4, -5 };
	static const int8_t w[] = { 2, 3, 0, -2 }, wzp[] = { 1, -1 };
	/* ch0: w' = (1, 2): x[i] + 2 x[i+2]; ch1: w' = (1, -1): x[i] - x[i+2] */
	static const int32_t want[] = { 7, 10, 13, 2, 2, 2 };
	struct ok_qconv_state st = { .group = 2, .n_dilations = 1, .dilations = { 2 } };
	uint32_t dx[] = { 1, 2, 5 }, dw[] = { 2, 1, 2 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[4] = { T(NPU_DTYPE_INT8, dx, x), T(NPU_DTYPE_INT8, dw, w),
					       NULL, T(NPU_DTYPE_INT8, d2, wzp) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL), 0);
	assert_int_equal(y.rank, 3);
	assert_int_equal(y.dims[1], 2);
	assert_int_equal(y.dims[2], 3);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	/* errors */
	st.group = 3;
	kt_expect_fail(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL),
		    "group 3 does not divide the 2 input and 2 output channels");
	st.group = 1;
	kt_expect_fail(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL),
		    "w has 1 input channels per group, x has 2");
	st.group = 2;
	st.n_kernel = 1;
	st.kernel[0] = 3;
	kt_expect_fail(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL),
		    "kernel_shape[0] is 3, w has 2");
	st.n_kernel = 0;
	st.dilations[0] = 5;
	kt_expect_fail(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL),
		    "the window (6) is larger than the padded input (5)");
	st.dilations[0] = 2;
	st.n_pads = 1;
	kt_expect_fail(kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, out, NULL),
		    "pads must have 1, 1 and 2 values");
}

static void test_qlinear_conv(void **unused)
{
	/*
	 * 1 x 1 x 2 x 2 uint8 x (zp 2, scale 0.5), two 1 x 1 filters of int8
	 * (scales 1 and 0.25, zp 0) with biases (1, -2); y scale 1, zp 10.
	 * ch0: (x - 2) + 1 = (-1, 0, 1, 4) * 0.5 -> -0.5 -> -0 (even), 0, 0.5
	 * -> 0, 2 -> +10 = (10, 10, 10, 12).  ch1: w = 2: 2 (x - 2) - 2 =
	 * (-6, -4, -2, 4) * 0.125 = (-0.75, -0.5, -0.25, 0.5) -> (-1, 0, 0, 0) + 10.
	 */
	static const uint8_t x[] = { 0, 1, 2, 5 }, xzp = 2, yzp = 10;
	static const int8_t w[] = { 1, 2 }, wzp = 0;
	static const float xs = 0.5f, ws[] = { 1, 0.25f }, ys = 1;
	static const int32_t bias[] = { 1, -2 };
	static const uint8_t want[] = { 10, 10, 10, 12, 9, 10, 10, 10 };
	struct ok_qconv_state st = { .group = 1 };
	uint32_t dx[] = { 1, 1, 2, 2 }, dw[] = { 2, 1, 1, 1 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[9] = {
		T(NPU_DTYPE_UINT8, dx, x), S(NPU_DTYPE_FP32, &xs), S(NPU_DTYPE_UINT8, &xzp),
		T(NPU_DTYPE_INT8, dw, w), T(NPU_DTYPE_FP32, d2, ws), S(NPU_DTYPE_INT8, &wzp),
		S(NPU_DTYPE_FP32, &ys), S(NPU_DTYPE_UINT8, &yzp), T(NPU_DTYPE_INT32, d2, bias) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_qlinear_conv, &st, 9, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_int_equal(y.dims[1], 2);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	/* errors */
	in[8] = T(NPU_DTYPE_INT32, dx, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_conv, &st, 9, in, 1, out, NULL),
		    "the bias must be int32 of 2 values");
	in[8] = NULL;
	in[4] = T(NPU_DTYPE_FP32, dx, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_conv, &st, 9, in, 1, out, NULL),
		    "w's scale must be a scalar or have 2 values");
	in[4] = T(NPU_DTYPE_FP32, d2, ws);
	in[7] = S(NPU_DTYPE_INT32, &bias[0]);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_conv, &st, 9, in, 1, out, NULL),
		    "y's zero point must be uint8 or int8, not int32");
	in[7] = S(NPU_DTYPE_UINT8, &yzp);
	in[3] = T(NPU_DTYPE_INT8, d2, w);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_conv, &st, 9, in, 1, out, NULL),
		    "w has rank 1, x has rank 4");
}

/* ---- ConvInteger against a direct evaluation of its definition -------------------- */

static uint32_t rng_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 16) % n;
}

/*
 * Random grouped, strided, dilated, padded convolutions of 1 to 3
 * spatial axes: infer refuses exactly the windows that do not fit, and
 * every output is the sum the definition gives, evaluated here output by
 * output with the padding's geometry worked out independently.
 */
static void test_conv_integer_random(void **unused)
{
	int fitting = 0;

	(void)unused;
	for (int iter = 0; iter < 300; iter++) {
		struct ok_qconv_state st = { .group = 1 + rnd(2) };
		uint32_t r = 1 + rnd(3), cg = 1 + rnd(3), mg = 1 + rnd(3), N = 1 + rnd(2);
		uint32_t dx[5], dw[5], out[3], in_[3], k[3], sd[3], dd[3];
		int64_t pb[3], pe[3];
		bool fits = true;
		uint8_t xzp = (uint8_t)rnd(256);
		int8_t wzp[6];
		struct npu_kernel_tensor y, *in[4], *o[1] = { &y };
		int ret;

		st.auto_pad = (enum ok_quant_pad)rnd(4);
		dx[0] = N;
		dx[1] = cg * (uint32_t)st.group;
		dw[0] = mg * (uint32_t)st.group;
		dw[1] = cg;
		st.n_strides = st.n_dilations = r;
		st.n_pads = st.auto_pad == OK_QPAD_NOTSET ? 2 * r : 0;
		for (uint32_t i = 0; i < r; i++) {
			int64_t ext;

			in_[i] = dx[2 + i] = 1 + rnd(7);
			k[i] = dw[2 + i] = 1 + rnd(3);
			sd[i] = (uint32_t)(st.strides[i] = 1 + rnd(3));
			dd[i] = (uint32_t)(st.dilations[i] = 1 + rnd(2));
			st.pads[i] = st.auto_pad == OK_QPAD_NOTSET ? rnd(3) : 0;
			st.pads[r + i] = st.auto_pad == OK_QPAD_NOTSET ? rnd(3) : 0;
			ext = (int64_t)(k[i] - 1) * dd[i] + 1;
			if (st.auto_pad == OK_QPAD_SAME_UPPER || st.auto_pad == OK_QPAD_SAME_LOWER) {
				int64_t o_ = (in_[i] + sd[i] - 1) / sd[i];
				int64_t total = (o_ - 1) * sd[i] + ext - in_[i];

				if (total < 0)
					total = 0;
				pb[i] = st.auto_pad == OK_QPAD_SAME_UPPER ? total / 2 : (total + 1) / 2;
				pe[i] = total - pb[i];
				out[i] = (uint32_t)o_;
			} else {
				int64_t span;

				pb[i] = st.pads[i];
				pe[i] = st.pads[r + i];
				span = in_[i] + pb[i] + pe[i] - ext;
				fits &= span >= 0;
				out[i] = span >= 0 ? (uint32_t)(span / sd[i] + 1) : 0;
			}
		}
		in[0] = kt_tensor(NPU_DTYPE_UINT8, r + 2, dx, NULL);
		in[1] = kt_tensor(NPU_DTYPE_INT8, r + 2, dw, NULL);
		for (uint64_t i = 0; i < in[0]->elems; i++)
			((uint8_t *)in[0]->data)[i] = (uint8_t)rnd(256);
		for (uint64_t i = 0; i < in[1]->elems; i++)
			((int8_t *)in[1]->data)[i] = (int8_t)(rnd(256) - 128);
		for (uint32_t m = 0; m < dw[0]; m++)
			wzp[m] = (int8_t)(rnd(256) - 128);
		in[2] = S(NPU_DTYPE_UINT8, &xzp);
		{
			uint32_t dz[1] = { dw[0] };

			in[3] = kt_tensor(NPU_DTYPE_INT8, 1, dz, wzp);
		}
		ret = kt_run(&ok_kernel_conv_integer, &st, 4, in, 1, o, NULL);
		if (!fits) {
			kt_expect_fail(ret, "is larger than the padded input");
			kt_teardown(NULL);
			continue;
		}
		assert_int_equal(ret, 0);
		for (uint32_t i = 0; i < r; i++)
			assert_int_equal(y.dims[2 + i], out[i]);
		for (uint64_t e = 0; e < y.elems; e++) {
			uint64_t rest = e;
			uint32_t oc[3], n, m, grp;
			int64_t want = 0;

			for (int i = (int)r - 1; i >= 0; i--) {
				oc[i] = (uint32_t)(rest % out[i]);
				rest /= out[i];
			}
			m = (uint32_t)(rest % dw[0]);
			n = (uint32_t)(rest / dw[0]);
			grp = m / mg;
			for (uint32_t c = 0; c < cg; c++) {
				uint64_t kn = 1;

				for (uint32_t i = 0; i < r; i++)
					kn *= k[i];
				for (uint64_t kk = 0; kk < kn; kk++) {
					uint64_t krest = kk, xi = (uint64_t)n * dx[1] + grp * cg + c;
					uint64_t wi = (uint64_t)m * cg + c;
					uint32_t kc[3];
					bool inside = true;

					for (int i = (int)r - 1; i >= 0; i--) {
						kc[i] = (uint32_t)(krest % k[i]);
						krest /= k[i];
					}
					for (uint32_t i = 0; i < r; i++) {
						int64_t at = (int64_t)oc[i] * sd[i] + (int64_t)kc[i] * dd[i] - pb[i];

						inside &= at >= 0 && at < in_[i];
						xi = xi * in_[i] + (uint64_t)(at < 0 ? 0 : at);
						wi = wi * k[i] + kc[i];
					}
					if (inside)
						want += (int64_t)(((uint8_t *)in[0]->data)[xi] - xzp) *
							(((int8_t *)in[1]->data)[wi] - wzp[m]);
				}
			}
			if (((int32_t *)y.data)[e] != want)
				fail_msg("iteration %d, output %llu: %d, want %lld", iter,
					 (unsigned long long)e, ((int32_t *)y.data)[e], (long long)want);
		}
		kt_free_out(&y);
		kt_teardown(NULL);
		fitting++;
	}
	/* both kinds of case were drawn */
	assert_true(fitting > 150 && fitting < 300);
}

/*
 * Random MatMulInteger shapes (1-D operands, batches broadcast both
 * ways, up to rank 4) with per-row A and per-column B zero points,
 * against each output's sum evaluated here with numpy's rules.
 */
static void test_matmul_integer_random(void **unused)
{
	(void)unused;
	for (int iter = 0; iter < 200; iter++) {
		uint32_t ra = 1 + rnd(4), rb = 1 + rnd(4), M = 1 + rnd(4), K = 1 + rnd(5),
			 N = 1 + rnd(4);
		uint32_t da[4], db[4], batch[2], ab[2] = { 1, 1 }, bb[2] = { 1, 1 };
		uint32_t nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0, nb;
		int8_t azp[4], bzp[4];
		struct npu_kernel_tensor y, *in[4], *o[1] = { &y };
		uint32_t i;

		nb = nba > nbb ? nba : nbb;
		for (i = 0; i < nb; i++) {
			batch[i] = 1 + rnd(3);
			/* right-aligned: each operand's batch axis is the batch or 1 */
			if (i >= nb - nba)
				ab[i] = rnd(2) ? batch[i] : 1;
			if (i >= nb - nbb)
				bb[i] = rnd(2) ? batch[i] : 1;
			if (ab[i] == 1 && bb[i] == 1)
				batch[i] = 1;
			else
				batch[i] = ab[i] > bb[i] ? ab[i] : bb[i];
		}
		for (i = 0; i < nba; i++)
			da[i] = ab[nb - nba + i];
		for (i = 0; i < nbb; i++)
			db[i] = bb[nb - nbb + i];
		if (ra == 1) {
			da[0] = K;
			M = 1;
		} else {
			da[nba] = M;
			da[nba + 1] = K;
		}
		if (rb == 1) {
			db[0] = K;
			N = 1;
		} else {
			db[nbb] = K;
			db[nbb + 1] = N;
		}
		in[0] = kt_tensor(NPU_DTYPE_INT8, ra, da, NULL);
		in[1] = kt_tensor(NPU_DTYPE_INT8, rb, db, NULL);
		for (uint64_t e = 0; e < in[0]->elems; e++)
			((int8_t *)in[0]->data)[e] = (int8_t)(rnd(256) - 128);
		for (uint64_t e = 0; e < in[1]->elems; e++)
			((int8_t *)in[1]->data)[e] = (int8_t)(rnd(256) - 128);
		for (i = 0; i < 4; i++) {
			azp[i] = (int8_t)(rnd(256) - 128);
			bzp[i] = (int8_t)(rnd(256) - 128);
		}
		{
			uint32_t dm[1] = { M }, dn[1] = { N };

			in[2] = kt_tensor(NPU_DTYPE_INT8, 1, dm, azp);
			in[3] = kt_tensor(NPU_DTYPE_INT8, 1, dn, bzp);
		}
		assert_int_equal(kt_run(&ok_kernel_matmul_integer, NULL, 4, in, 1, o, NULL), 0);
		assert_int_equal(y.rank, nb + (ra > 1) + (rb > 1));
		for (uint64_t e = 0; e < y.elems; e++) {
			uint64_t rest = e / ((uint64_t)M * N), ai = 0, bi = 0;
			uint32_t row = (uint32_t)(e / N % M), col = (uint32_t)(e % N), bc[2];
			int64_t want = 0;

			for (int d = (int)nb - 1; d >= 0; d--) {
				bc[d] = (uint32_t)(rest % batch[d]);
				rest /= batch[d];
			}
			for (i = 0; i < nb; i++) {
				ai = ai * ab[i] + (ab[i] == 1 ? 0 : bc[i]);
				bi = bi * bb[i] + (bb[i] == 1 ? 0 : bc[i]);
			}
			for (uint32_t kk = 0; kk < K; kk++)
				want += (int64_t)(((int8_t *)in[0]->data)[(ai * M + row) * K + kk] -
						  azp[row]) *
					(((int8_t *)in[1]->data)[(bi * K + kk) * N + col] - bzp[col]);
			if (((int32_t *)y.data)[e] != want)
				fail_msg("iteration %d, output %llu: %d, want %lld", iter,
					 (unsigned long long)e, ((int32_t *)y.data)[e], (long long)want);
		}
		kt_free_out(&y);
		kt_teardown(NULL);
	}
}

/* ---- Limits: the work count bounds a run, polls stop a long one ----------------- */

static void test_limits(void **unused)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	uint32_t da[] = { 64, 256 }, db[] = { 256, 64 }, dx[] = { 1, 8, 32, 32 }, dw[] = { 8, 8, 3, 3 };
	struct npu_kernel_tensor y, *in[2] = { T(NPU_DTYPE_UINT8, da, NULL), T(NPU_DTYPE_UINT8, db, NULL) };
	struct npu_kernel_tensor *out[1] = { &y };
	struct ok_qconv_state st = { .group = 1 };

	(void)unused;
	/* 64 * 64 * 256 MACs and more: over a limit of 2^20 */
	lim.max_work = 1u << 20;
	assert_int_equal(kt_run(&ok_kernel_matmul_integer, NULL, 2, in, 1, out, &lim), -E2BIG);
	kt_free_out(&y);
	lim.max_work = 0;
	lim.cancel = kt_cancel_after_first;
	kt_polls = 0;
	assert_int_equal(kt_run(&ok_kernel_matmul_integer, NULL, 2, in, 1, out, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_UINT8, dx, NULL);
	in[1] = T(NPU_DTYPE_UINT8, dw, NULL);
	kt_polls = 0;
	assert_int_equal(kt_run(&ok_kernel_conv_integer, &st, 2, in, 1, out, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_free_out(&y);
}

/* ---- One-node models through npu_onnx_load(): create() end to end ------------- */

/* An initializer of ONNX type @elem from raw little-endian bytes. */
static void init_raw(struct mb *b, const char *name, int elem, int rank, const int64_t *dims,
		     const void *data, size_t bytes)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = elem;
	t->n_dims = (size_t)rank;
	t->dims = keep(b, calloc((size_t)rank + 1, 8));
	memcpy(t->dims, dims, 8ull * (size_t)rank);
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = keep(b, malloc(bytes));
	memcpy(t->raw_data.data, data, bytes);
	b->inits[b->g.n_initializer++] = t;
}


static void test_load_quantize(void **unused)
{
	/* opset 13: a per-axis scale along the default axis 1 */
	static const int64_t dx[] = { 2, 3 }, d3[] = { 3 };
	static const float scale[] = { 1, 2, 4 }, x[] = { 1, 1, 1, -3, 9, 30 };
	static const uint8_t zp[] = { 0, 10, 20 }, want[] = { 1, 10, 20, 0, 14, 28 };
	uint8_t y[6];
	struct mb b;

	(void)unused;
	mb_init(&b, 13);
	input(&b, "x", 2, dx);
	init_f(&b, "s", 1, d3, scale, 3);
	init_raw(&b, "z", 2, 1, d3, zp, 3);
	kt_output_of(&b, "y", 2);
	nodef(&b, "QuantizeLinear", "q", "x,s,z", "y", NULL);
	kt_load_run(&b, x, y, sizeof(y));
	assert_memory_equal(y, want, sizeof(want));
	/* opset 10 has no axis: the same scale is refused */
	mb_init(&b, 10);
	input(&b, "x", 2, dx);
	init_f(&b, "s", 1, d3, scale, 3);
	init_raw(&b, "z", 2, 1, d3, zp, 3);
	kt_output_of(&b, "y", 2);
	nodef(&b, "QuantizeLinear", "q", "x,s,z", "y", NULL);
	load(&b, NULL, -EINVAL, "node 'q' (QuantizeLinear): the scale must be a scalar before opset 13");
	mb_free(&b);
}

static void test_load_qlinear_conv(void **unused)
{
	/* auto_pad and strides from the node: ConvInteger's SAME_UPPER case, scale 1 */
	static const int64_t dx[] = { 1, 1, 3, 3 }, dw[] = { 1, 1, 2, 2 }, d1[] = { 1 };
	static const uint8_t x[] = { 2, 3, 4, 5, 6, 7, 8, 9, 10 }, xzp = 1, yzp = 0;
	static const int8_t w[] = { 1, 1, 1, 1 }, wzp = 0;
	static const float one = 1;
	static const uint8_t want[] = { 12, 9, 15, 9 };
	const char *pads[] = { "SAME_UPPER", "MIDDLE" };
	uint8_t y[4];
	struct mb b;

	(void)unused;
	for (int i = 0; i < 2; i++) {
		Onnx__NodeProto *n;

		mb_init(&b, 13);
		b.ins[b.g.n_input++] = vinfo(&b, "x", 2, 4, dx);
		init_f(&b, "xs", 0, d1, &one, 1);
		init_raw(&b, "xz", 2, 0, d1, &xzp, 1);
		init_raw(&b, "w", 3, 4, dw, w, 4);
		init_f(&b, "ws", 0, d1, &one, 1);
		init_raw(&b, "wz", 3, 0, d1, &wzp, 1);
		init_f(&b, "ys", 0, d1, &one, 1);
		init_raw(&b, "yz", 2, 0, d1, &yzp, 1);
		kt_output_of(&b, "y", 2);
		n = nodef(&b, "QLinearConv", "qc", "x,xs,xz,w,ws,wz,ys,yz", "y", "strides=ints:2,2",
			  NULL);
		kt_attr_s(&b, n, "auto_pad", pads[i]);
		if (i) {
			load(&b, NULL, -EINVAL,
			     "node 'qc' (QLinearConv): auto_pad \"MIDDLE\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
			mb_free(&b);
			break;
		}
		kt_load_run(&b, x, y, sizeof(y));
		assert_memory_equal(y, want, sizeof(want));
	}
}

static void test_table(void **unused)
{
	const struct npu_onnx_op *const *p;
	size_t n = 0;

	(void)unused;
	for (p = ok_ops_quant; *p; p++) {
		assert_int_equal((*p)->size, sizeof(struct npu_onnx_op));
		/* com.microsoft's ops are test-onnx-kquant-ms's */
		if (!strcmp((*p)->domain, "com.microsoft"))
			continue;
		n++;
		assert_string_equal((*p)->domain, "");
		assert_string_equal((*p)->kernel->name, (*p)->op_type);
	}
	assert_int_equal(n, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_quantize_per_tensor, kt_teardown),
		cmocka_unit_test_teardown(test_quantize_rounding, kt_teardown),
		cmocka_unit_test_teardown(test_quantize_per_axis, kt_teardown),
		cmocka_unit_test_teardown(test_quantize_16bit, kt_teardown),
		cmocka_unit_test_teardown(test_quantize_errors, kt_teardown),
		cmocka_unit_test_teardown(test_dequantize, kt_teardown),
		cmocka_unit_test_teardown(test_dynamic_quantize, kt_teardown),
		cmocka_unit_test_teardown(test_matmul_integer, kt_teardown),
		cmocka_unit_test_teardown(test_qlinear_matmul, kt_teardown),
		cmocka_unit_test_teardown(test_conv_integer, kt_teardown),
		cmocka_unit_test_teardown(test_conv_integer_groups_1d, kt_teardown),
		cmocka_unit_test_teardown(test_qlinear_conv, kt_teardown),
		cmocka_unit_test_teardown(test_conv_integer_random, kt_teardown),
		cmocka_unit_test_teardown(test_matmul_integer_random, kt_teardown),
		cmocka_unit_test_teardown(test_limits, kt_teardown),
		cmocka_unit_test(test_load_quantize),
		cmocka_unit_test(test_load_qlinear_conv),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
