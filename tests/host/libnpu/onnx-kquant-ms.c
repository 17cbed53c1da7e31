// SPDX-License-Identifier: MIT
/*
 * com.microsoft's quantized ops (libnpu/onnx/kernels/ok_quant_ms*.c) run
 * through npu_kernel_run() on cases computed by hand from onnxruntime's
 * arithmetic (the comments give the intermediate values), every infer()
 * refusal, and one-node models through npu_onnx_load().  Their agreement
 * with onnxruntime itself is ms-quant-tests.sh's.
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

#define T(dt, dims, data) kt_tensor(dt, KT_RANK(dims), dims, data)
#define S(dt, data) kt_tensor(dt, 0, NULL, data)
#define F32(v) S(NPU_DTYPE_FP32, &(const float){ v })
#define U8(v) S(NPU_DTYPE_UINT8, &(const uint8_t){ v })
#define I8(v) S(NPU_DTYPE_INT8, &(const int8_t){ v })

/* A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp into @in. */
static void binary_in(struct npu_kernel_tensor **in, struct npu_kernel_tensor *a,
		      struct npu_kernel_tensor *b, float sa, float sb, float sc, int za, int zb,
		      int zc)
{
	in[0] = a;
	in[1] = F32(sa);
	in[3] = b;
	in[4] = F32(sb);
	in[6] = F32(sc);
	if (a->dtype == NPU_DTYPE_INT8) {
		in[2] = I8((int8_t)za);
		in[5] = I8((int8_t)zb);
		in[7] = I8((int8_t)zc);
	} else {
		in[2] = U8((uint8_t)za);
		in[5] = U8((uint8_t)zb);
		in[7] = U8((uint8_t)zc);
	}
}

/* ---- QLinearAdd ------------------------------------------------------------ */

static void test_add_rounding(void **unused)
{
	/*
	 * rA = 0.5 / 1 and rB = 0.25 / 1 are exact, fixed = 100 - (0.5 * 128 +
	 * 0.25 * 0) = 36: 0 + 1.25 + 36 = 37.25 -> 37, 5 + 1.75 + 36 = 42.75 ->
	 * 43, 127.5 + 36 = 163.5 -> 164 and 1.5 + 36 = 37.5 -> 38 (ties go to
	 * even), 64 + 32 + 36 = 132, 2.5 + 36 = 38.5 -> 38.
	 */
	static const uint8_t a[] = { 0, 10, 255, 128, 3, 5 }, b[] = { 5, 7, 0, 128, 0, 0 };
	static const uint8_t want[] = { 37, 43, 164, 132, 38, 38 };
	/* C_scale 0.25: rA 2, rB 1, fixed 100 - 256: 765 - 156 -> 255, -156 -> 0 */
	static const uint8_t a2[] = { 255, 0 }, b2[] = { 255, 0 }, want2[] = { 255, 0 };
	uint32_t d6[] = { 6 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };

	(void)unused;
	binary_in(in, T(NPU_DTYPE_UINT8, d6, a), T(NPU_DTYPE_UINT8, d6, b), 0.5f, 0.25f, 1, 128, 0,
		  100);
	assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	binary_in(in, T(NPU_DTYPE_UINT8, d2, a2), T(NPU_DTYPE_UINT8, d2, b2), 0.5f, 0.25f, 0.25f,
		  128, 0, 100);
	assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want2, sizeof(want2));
	kt_free_out(&y);
}

static void test_add_scalar_forms(void **unused)
{
	/*
	 * A_scale 0.324, B_scale 0.462, C_scale 0.516, zero points 82, 204,
	 * 44: rA = 0.627907038f, rB = 0.895348907f, fixed = -190.139557f.
	 * For a = 34, b = 217 the sum is 25.5 in reals; fma(34, rA, fma(217,
	 * rB, fixed)) is 25.4999962f -> 25, but when A is the scalar of the
	 * innermost run onnxruntime nests the fmas the other way, fma(217, rB,
	 * fma(34, rA, fixed)) = 25.5000019f -> 26.  Shapes alone decide: [2]
	 * and [2] (both spans), [2] and [1] or a rank-0 B (B the scalar) take
	 * the first form, [1] or a rank-0 A and [2] the second.  For a = 8, b
	 * = 233 both forms give 23 (23.4999943f, 23.4999924f), and so must B
	 * as the scalar: folding it into the bias unfused, fixed + 233 * rB,
	 * would give 23.5000019f -> 24.  onnxruntime agrees on both pairs
	 * (they are in ms-quant-tests.sh's grid cases).
	 */
	static const uint8_t a[] = { 34, 34 }, b[] = { 217, 217 }, a2[] = { 8, 8 }, b2[] = { 233, 233 };
	static const uint8_t nested_b[] = { 25, 25 }, nested_a[] = { 26, 26 }, both[] = { 23, 23 };
	uint32_t d2[] = { 2 }, d1[] = { 1 };
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };
	struct {
		struct npu_kernel_tensor *a, *b;
		const uint8_t *want;
	} cases[] = {
		{ T(NPU_DTYPE_UINT8, d2, a), T(NPU_DTYPE_UINT8, d2, b), nested_b },
		{ T(NPU_DTYPE_UINT8, d2, a), T(NPU_DTYPE_UINT8, d1, b), nested_b },
		{ T(NPU_DTYPE_UINT8, d2, a), S(NPU_DTYPE_UINT8, b), nested_b },
		{ T(NPU_DTYPE_UINT8, d1, a), T(NPU_DTYPE_UINT8, d2, b), nested_a },
		{ S(NPU_DTYPE_UINT8, a), T(NPU_DTYPE_UINT8, d2, b), nested_a },
		{ T(NPU_DTYPE_UINT8, d2, a2), T(NPU_DTYPE_UINT8, d2, b2), both },
		{ T(NPU_DTYPE_UINT8, d2, a2), T(NPU_DTYPE_UINT8, d1, b2), both },
		{ T(NPU_DTYPE_UINT8, d1, a2), T(NPU_DTYPE_UINT8, d2, b2), both },
	};

	(void)unused;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		binary_in(in, cases[i].a, cases[i].b, 0.324f, 0.462f, 0.516f, 82, 204, 44);
		assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL), 0);
		assert_int_equal(y.elems, 2);
		if (memcmp(y.data, cases[i].want, 2))
			fail_msg("case %zu: %u, %u instead of %u", i, ((uint8_t *)y.data)[0],
				 ((uint8_t *)y.data)[1], cases[i].want[0]);
		kt_free_out(&y);
	}
}

static void test_add_broadcast_int8(void **unused)
{
	/*
	 * int8 [2, 1] + [3], all scales 1, zero points 0: exact sums, clamped
	 * to [-128, 127]; absent zero points are 0.
	 */
	static const int8_t a[] = { 100, -100 }, b[] = { 1, 50, -50 };
	static const int8_t want[] = { 101, 127, 50, -99, -50, -128 };
	uint32_t d21[] = { 2, 1 }, d3[] = { 3 }, d23[] = { 2, 3 };
	struct npu_kernel_tensor y, *in[8] = { 0 }, *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_INT8, d21, a);
	in[1] = F32(1);
	in[3] = T(NPU_DTYPE_INT8, d3, b);
	in[4] = F32(1);
	in[6] = F32(1);
	assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 7, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_INT8, 2, d23);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
}

/* ---- QLinearMul ------------------------------------------------------------ */

static void test_mul(void **unused)
{
	/*
	 * Ratio 0.5 * 0.5 / 0.5 = 0.5, zero points 128: (a - 128) * (b - 128)
	 * * 0.5 + 128: 3 * 0.5 = 1.5 -> 129.5 -> 130, 5 * 0.5 -> 130.5 -> 130
	 * (ties to even), -8 * -1 * 0.5 -> 132, 127 * 1 * 0.5 -> 191.5 -> 192,
	 * 127 * 127 * 0.5 -> 8192.5 -> 255.
	 */
	static const uint8_t a[] = { 129, 133, 120, 255, 255 }, b[] = { 131, 129, 127, 129, 255 };
	static const uint8_t want[] = { 130, 130, 132, 192, 255 };
	/* int8, ratio 1, zero points 0: -128 * -128 saturates, 3 * -5 = -15 */
	static const int8_t a2[] = { -128, 3 }, b2[] = { -128, -5 }, want2[] = { 127, -15 };
	uint32_t d5[] = { 5 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };

	(void)unused;
	binary_in(in, T(NPU_DTYPE_UINT8, d5, a), T(NPU_DTYPE_UINT8, d5, b), 0.5f, 0.5f, 0.5f, 128,
		  128, 128);
	assert_int_equal(kt_run(&ok_kernel_qlinear_mul, NULL, 8, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	binary_in(in, T(NPU_DTYPE_INT8, d2, a2), T(NPU_DTYPE_INT8, d2, b2), 1, 1, 1, 0, 0, 0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_mul, NULL, 8, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want2, sizeof(want2));
	kt_free_out(&y);
}

static void test_binary_errors(void **unused)
{
	static const float two[] = { 1, 2 };
	uint32_t d2[] = { 2 }, d3[] = { 3 }, d1[] = { 1 }, d11[] = { 1, 1 };
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };
	struct npu_kernel_tensor *a = T(NPU_DTYPE_UINT8, d2, NULL);

	(void)unused;
	binary_in(in, T(NPU_DTYPE_INT32, d2, NULL), a, 1, 1, 1, 0, 0, 0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "A must be uint8 or int8, not int32");
	binary_in(in, a, T(NPU_DTYPE_INT8, d2, NULL), 1, 1, 1, 0, 0, 0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_mul, NULL, 8, in, 1, out, NULL),
		       "B is int8 but A is uint8");
	binary_in(in, a, a, 1, 1, 1, 0, 0, 0);
	in[4] = T(NPU_DTYPE_FP32, d2, two);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "B_scale must be a scalar or a 1-D tensor of one value (it has rank 1 and 2 values)");
	in[4] = S(NPU_DTYPE_INT32, &(const int32_t){ 1 });
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "B_scale must be float32, not int32");
	binary_in(in, a, a, 1, 1, 1, 0, 0, 0);
	in[7] = I8(0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "C_zero_point is int8, but its tensor is uint8");
	/* onnxruntime takes a 1-D tensor of one value, not a [1, 1] one */
	in[7] = T(NPU_DTYPE_UINT8, d1, NULL);
	assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL), 0);
	kt_free_out(&y);
	in[7] = T(NPU_DTYPE_UINT8, d11, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "C_zero_point must be a scalar or a 1-D tensor of one value (it has rank 2");
	binary_in(in, a, T(NPU_DTYPE_UINT8, d3, NULL), 1, 1, 1, 0, 0, 0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL), "broadcast");
	binary_in(in, a, a, 1, 1, 1, 0, 0, 0);
	in[6] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "C_scale is required");
	in[3] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, NULL),
		       "A and B are required");
}

/* ---- QLinearSigmoid, QLinearLeakyRelu --------------------------------------- */

static void test_sigmoid(void **unused)
{
	/*
	 * int8, X scale 1, zero point 0, Y scale 1/256, zero point -128: the
	 * logistic of 0 is 0.5 exactly in MLAS's rational form (p = 0) -> 128
	 * - 128 = 0; of 1, 0.7310586 -> 187.15 -> 187 - 128 = 59; of -1,
	 * 0.2689414 -> 68.85 -> 69 - 128 = -59; 127 and -128 clamp to +-18,
	 * 1 - 1.5e-8 -> 256 -> 127, and 1.5e-8 -> 0 -> -128.
	 */
	static const int8_t x[] = { 0, 1, -1, 127, -128 }, want[] = { 0, 59, -59, 127, -128 };
	uint32_t d5[] = { 5 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_INT8, d5, x);
	in[1] = F32(1);
	in[2] = I8(0);
	in[3] = F32(1.0f / 256);
	in[4] = I8(-128);
	assert_int_equal(kt_run(&ok_kernel_qlinear_sigmoid, NULL, 5, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_INT8, 1, d5);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	/* MLAS's approximation is within 1e-6 of the logistic, and exact at 0 */
	assert_true(ok_ms_logistic(0.0f) == 0.5f);
	for (float v = -20.0f; v <= 20.0f; v += 0.125f)
		assert_true(fabs(ok_ms_logistic(v) - 1.0 / (1.0 + exp(-(double)v))) < 1e-6);
}

static void test_leaky_relu(void **unused)
{
	/*
	 * int8, alpha 0.5, X scale 0.5, Y scale 0.5, zero points 0: a code c
	 * < 0 is 0.25 * c / 0.5 = c / 2: -5 -> -2.5 -> -2, -3 -> -1.5 -> -2,
	 * -1 -> -0.5 -> 0 (ties to even); c >= 0 stays c; -128 -> -64.
	 */
	static const int8_t x[] = { -5, -3, -1, 6, 127, -128 }, want[] = { -2, -2, 0, 6, 127, -64 };
	/* uint8, X zero point 100: code 90 is -10 * 0.5 * 0.5 / 0.5 -> -5 + 50 */
	static const uint8_t xu[] = { 90, 100, 255 }, wantu[] = { 45, 50, 205 };
	struct ok_ms_leaky_relu_state st = { .alpha = 0.5f };
	uint32_t d6[] = { 6 }, d3[] = { 3 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_INT8, d6, x);
	in[1] = F32(0.5f);
	in[2] = I8(0);
	in[3] = F32(0.5f);
	in[4] = I8(0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_leaky_relu, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_UINT8, d3, xu);
	in[2] = U8(100);
	in[4] = U8(50);
	assert_int_equal(kt_run(&ok_kernel_qlinear_leaky_relu, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, wantu, sizeof(wantu));
	kt_free_out(&y);
}

static void test_lookup_errors(void **unused)
{
	uint32_t d2[] = { 2 };
	struct ok_ms_leaky_relu_state st = { .alpha = 0.1f };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_INT16, d2, NULL);
	in[1] = F32(1);
	in[2] = NULL;
	in[3] = F32(1);
	in[4] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_sigmoid, NULL, 5, in, 1, out, NULL),
		       "X must be uint8 or int8, not int16");
	in[0] = T(NPU_DTYPE_UINT8, d2, NULL);
	in[4] = I8(0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_leaky_relu, &st, 5, in, 1, out, NULL),
		       "Y_zero_point is int8, but its tensor is uint8");
	in[4] = NULL;
	in[3] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_sigmoid, NULL, 5, in, 1, out, NULL),
		       "Y_scale is required");
	in[3] = T(NPU_DTYPE_FP32, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_sigmoid, NULL, 5, in, 1, out, NULL),
		       "Y_scale must be a scalar");
}

/* ---- QLinearConcat ------------------------------------------------------------ */

static void test_concat(void **unused)
{
	/*
	 * Y scale 1, zero point 0; X0 has Y's parameters and is copied, X1
	 * (scale 0.5, zero point 10) goes through its table: 10 -> 0, 13 ->
	 * 1.5 -> 2, 255 -> 122.5 -> 122, 0 -> -5 -> 0.  Along axis 1 (-1).
	 */
	static const uint8_t x0[] = { 1, 2 }, x1[] = { 10, 13, 255, 0 };
	static const uint8_t want[] = { 1, 0, 2, 2, 122, 0 };
	struct ok_ms_concat_state st = { .axis = -1 };
	uint32_t d21[] = { 2, 1 }, d22[] = { 2, 2 }, d23[] = { 2, 3 };
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };

	(void)unused;
	in[0] = F32(1);
	in[1] = U8(0);
	in[2] = T(NPU_DTYPE_UINT8, d21, x0);
	in[3] = F32(1);
	in[4] = U8(0);
	in[5] = T(NPU_DTYPE_UINT8, d22, x1);
	in[6] = F32(0.5f);
	in[7] = U8(10);
	assert_int_equal(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_UINT8, 2, d23);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	/* refusals */
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 7, in, 1, out, NULL),
		       "triples, not 7 inputs");
	in[7] = I8(10);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL),
		       "input 7 (a zero point) is int8, but its tensor is uint8");
	in[7] = U8(10);
	in[5] = T(NPU_DTYPE_INT8, d22, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL),
		       "input 5 is int8, Y_zero_point is uint8");
	in[5] = T(NPU_DTYPE_UINT8, d22, x1);
	st.axis = 0;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL),
		       "input 5's dimension 1 is 2, input 2's is 1");
	st.axis = 2;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL),
		       "axis 2 is out of range");
	st.axis = 1;
	in[1] = S(NPU_DTYPE_INT32, &(const int32_t){ 0 });
	kt_expect_fail(kt_run(&ok_kernel_qlinear_concat, &st, 8, in, 1, out, NULL),
		       "Y_zero_point must be uint8 or int8, not int32");
}

/* ---- QLinearGlobalAveragePool, QLinearAveragePool ----------------------------- */

static void test_global_average_pool(void **unused)
{
	/*
	 * [1, 2, 2, 2], x scale 1, zero point 1, y scale 0.5, zero point 3:
	 * multiplier 1 / (0.5 * 4) = 0.5; channel 0 sums 10 - 4 = 6 -> 3 + 3
	 * = 6, channel 1 sums 1 - 4 = -3 -> -1.5 -> -2 (ties to even) + 3 = 1.
	 * The same data in N, H, W, C gives the same.
	 */
	static const uint8_t x[] = { 1, 2, 3, 4, 0, 0, 0, 1 }, want[] = { 6, 1 };
	static const uint8_t x_nhwc[] = { 1, 0, 2, 0, 3, 0, 4, 1 };
	struct ok_ms_pool_state st = { 0 };
	uint32_t dx[] = { 1, 2, 2, 2 }, dy[] = { 1, 2, 1, 1 }, dy_nhwc[] = { 1, 1, 1, 2 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_UINT8, dx, x);
	in[1] = F32(1);
	in[2] = U8(1);
	in[3] = F32(0.5f);
	in[4] = U8(3);
	assert_int_equal(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out,
				NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_UINT8, 4, dy);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	st.channels_last = true;
	in[0] = T(NPU_DTYPE_UINT8, dx, x_nhwc);
	assert_int_equal(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out,
				NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_UINT8, 4, dy_nhwc);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
}

static void test_global_average_pool_errors(void **unused)
{
	uint32_t dx[] = { 1, 2, 2, 2 }, d2[] = { 2, 2 };
	struct ok_ms_pool_state st = { 0 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y }, huge = {
		.dtype = NPU_DTYPE_UINT8, .rank = 4, .dims = { 1, 1, 4096, 4096 },
		.elems = 4096u * 4096u };

	(void)unused;
	in[0] = T(NPU_DTYPE_UINT8, dx, NULL);
	in[1] = F32(1);
	in[2] = U8(1);
	in[3] = F32(1.0f / 4096);
	in[4] = U8(3);
	/* 1 / (2^-12 * 4) = 1024: every output would be 255 */
	kt_expect_fail(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out, NULL),
		       "is out of onnxruntime's range [2^-32, 256)");
	in[3] = F32(1);
	in[0] = &huge;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out, NULL),
		       "an image of 16777216 elements per channel is beyond onnxruntime's limit");
	in[0] = T(NPU_DTYPE_UINT8, d2, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out, NULL),
		       "X has rank 2, needs N, C and a spatial axis");
	in[0] = T(NPU_DTYPE_UINT8, dx, NULL);
	in[4] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_global_average_pool, &st, 5, in, 1, out, NULL),
		       "x_zero_point and y_zero_point are required");
}

static void test_average_pool(void **unused)
{
	/*
	 * 3 x 3 codes 1..9, scales 1, zero points 0, a 2 x 2 window with
	 * stride 2 and one row and column of padding before: windows {1},
	 * {2, 3}, {4, 7}, {5, 6, 8, 9}.  Without the padding in the count:
	 * 1, 2.5 -> 2, 5.5 -> 6, 7; with it (/ 4): 0.25 -> 0, 1.25 -> 1,
	 * 2.75 -> 3, 7.  A 3 x 3 window without padding is the global pool:
	 * 45 * (1 / 9) -> 5.
	 */
	static const uint8_t x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const uint8_t want[] = { 1, 2, 6, 7 }, want_pad[] = { 0, 1, 3, 7 }, want_all = 5;
	struct ok_ms_pool_state st = {
		.w = { .n_kernel = 2, .kernel = { 2, 2 }, .n_strides = 2, .strides = { 2, 2 },
		       .n_pads = 4, .pads = { 1, 1, 0, 0 } } };
	uint32_t dx[] = { 1, 1, 3, 3 }, dy[] = { 1, 1, 2, 2 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_UINT8, dx, x);
	in[1] = F32(1);
	in[2] = U8(0);
	in[3] = F32(1);
	in[4] = U8(0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_UINT8, 4, dy);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	st.count_include_pad = true;
	assert_int_equal(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want_pad, sizeof(want_pad));
	kt_free_out(&y);
	st = (struct ok_ms_pool_state){ .w = { .n_kernel = 2, .kernel = { 3, 3 } } };
	assert_int_equal(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(y.elems, 1);
	assert_int_equal(((uint8_t *)y.data)[0], want_all);
	kt_free_out(&y);
	/* refusals */
	st.w.n_kernel = 1;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL),
		       "attribute kernel_shape has 1 values for 2 spatial axes");
	st.w = (struct ok_window){ .n_kernel = 2, .kernel = { 4, 4 } };
	kt_expect_fail(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL),
		       "larger than the padded input");
	st.w.kernel[0] = 2;
	st.w.kernel[1] = 2;
	in[2] = I8(0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_average_pool, &st, 5, in, 1, out, NULL),
		       "x_zero_point is int8, but its tensor is uint8");
}

/* ---- QGemm ---------------------------------------------------------------------- */

/* A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp into @in. */
static void qgemm_in(struct npu_kernel_tensor **in, struct npu_kernel_tensor *b,
		     struct npu_kernel_tensor *b_scale, struct npu_kernel_tensor *b_zp, bool quant)
{
	static const uint8_t a[] = { 1, 2, 3, 4, 5, 6 };
	static const int32_t c[] = { 10, -10 };
	uint32_t d23[] = { 2, 3 }, d2[] = { 2 };

	in[0] = T(NPU_DTYPE_UINT8, d23, a);
	in[1] = F32(0.5f);
	in[2] = U8(1);
	in[3] = b;
	in[4] = b_scale;
	in[5] = b_zp;
	in[6] = T(NPU_DTYPE_INT32, d2, c);
	in[7] = quant ? F32(1) : NULL;
	in[8] = quant ? U8(128) : NULL;
}

static void test_qgemm(void **unused)
{
	/*
	 * A - 1 = [0 1 2; 3 4 5], B = [1 0; 0 1; 1 1]: products [2 3; 8 9],
	 * plus C = [10, -10]: [12 -7; 18 -1], times 1 * 0.5 * 1 / 1: [6 -3.5;
	 * 9 -0.5] -> 6, -4, 9, 0 (ties to even) + 128.  B given transposed
	 * with a scale of 2 for column 1: -7 and -1 become -7 and -1 -> 121,
	 * 127.  Without y_scale and y_zero_point Y is float: [6 -3.5 9 -0.5].
	 */
	static const uint8_t b[] = { 1, 0, 0, 1, 1, 1 }, bt[] = { 1, 0, 1, 0, 1, 1 };
	static const uint8_t want[] = { 134, 124, 137, 128 }, want_t[] = { 134, 121, 137, 127 };
	static const float b_scales[] = { 1, 2 }, want_f[] = { 6, -3.5f, 9, -0.5f };
	static const uint8_t b_zps[] = { 0, 0 };
	struct ok_ms_gemm_state st = { .alpha = 1 };
	uint32_t d32[] = { 3, 2 }, d23[] = { 2, 3 }, d22[] = { 2, 2 }, d2[] = { 2 };
	struct npu_kernel_tensor y, *in[9], *out[1] = { &y };

	(void)unused;
	qgemm_in(in, T(NPU_DTYPE_UINT8, d32, b), F32(1), U8(0), true);
	assert_int_equal(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_UINT8, 2, d22);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	st.trans_b = true;
	qgemm_in(in, T(NPU_DTYPE_UINT8, d23, bt), T(NPU_DTYPE_FP32, d2, b_scales),
		 T(NPU_DTYPE_UINT8, d2, b_zps), true);
	assert_int_equal(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want_t, sizeof(want_t));
	kt_free_out(&y);
	st.trans_b = false;
	qgemm_in(in, T(NPU_DTYPE_UINT8, d32, b), F32(1), U8(0), false);
	assert_int_equal(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL), 0);
	kt_expect_shape(&y, NPU_DTYPE_FP32, 2, d22);
	assert_memory_equal(y.data, want_f, sizeof(want_f));
	kt_free_out(&y);
}

static void test_qgemm_errors(void **unused)
{
	static const float three[] = { 1, 1, 1 };
	uint32_t d32[] = { 3, 2 }, d3[] = { 3 }, d4[] = { 4 }, d22[] = { 2, 2 };
	struct ok_ms_gemm_state st = { .alpha = 1 };
	struct npu_kernel_tensor y, *in[9], *out[1] = { &y };
	struct npu_kernel_tensor *b = T(NPU_DTYPE_UINT8, d32, NULL);

	(void)unused;
	qgemm_in(in, b, T(NPU_DTYPE_FP32, d3, three), U8(0), true);
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "b_scale must be a scalar or a 1-D tensor of 1 or N = 2 values");
	qgemm_in(in, b, F32(1), T(NPU_DTYPE_UINT8, d22, NULL), true);
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "b_zero_point must be a scalar");
	qgemm_in(in, b, F32(1), I8(0), true);
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "b_zero_point must be uint8, not int8");
	qgemm_in(in, b, F32(1), U8(0), true);
	in[0] = T(NPU_DTYPE_INT8, d32, NULL);
	in[2] = I8(0);
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "an int8 A needs an int8 B, not uint8");
	qgemm_in(in, b, F32(1), U8(0), true);
	in[6] = T(NPU_DTYPE_INT32, d4, NULL);
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "C of rank 1 and 4 values does not broadcast to Y's 2 x 2");
	qgemm_in(in, b, F32(1), U8(0), true);
	in[7] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "y_zero_point needs a y_scale");
	qgemm_in(in, b, F32(1), U8(0), true);
	st.trans_a = true;
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "A' has 2 columns but B' has 3 rows");
	st.trans_a = false;
	in[2] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_qgemm, &st, 9, in, 1, out, NULL),
		       "a_zero_point is required");
}

/* ---- QLinearSoftmax ------------------------------------------------------------ */

static void test_softmax(void **unused)
{
	/*
	 * y_scale 1/256: an output is round(256 * e_i / sum).  Equal codes
	 * share equally: 4 of them 64 each.  Codes one apart with X_scale
	 * ln 3 weigh 3 to 1: 192 and 64.  Opset 12 with axis 0 takes the
	 * whole [2, 2] as one run (64 each), opset 13 each column (128).
	 */
	static const uint8_t eq[] = { 7, 7, 7, 7 }, w64[] = { 64, 64, 64, 64 };
	static const uint8_t w128[] = { 128, 128, 128, 128 };
	static const uint8_t two[] = { 9, 8 }, w3to1[] = { 192, 64 };
	/*
	 * X_scale 1, codes 255 and 0: the table's shift is log(FLT_MAX / 2) -
	 * 5 = 83.02, so code 0 reads exp(-171.98), 0 in float: 256 and 0;
	 * uint8 caps 256 at 255, int8 (y_zp -128) gives 128 and wraps it to
	 * -128, as onnxruntime does.
	 */
	static const uint8_t far[] = { 255, 0 }, w_cap[] = { 255, 0 };
	static const int8_t far8[] = { 127, -128 }, w_wrap[] = { -128, -128 };
	struct ok_ms_softmax_state st = { .opset = 13, .axis = -1 };
	uint32_t d4[] = { 4 }, d2[] = { 2 }, d1[] = { 1 }, d22[] = { 2, 2 };
	struct npu_kernel_tensor y, *in[5], *out[1] = { &y };

	(void)unused;
	in[0] = T(NPU_DTYPE_UINT8, d4, eq);
	in[1] = F32(0.5f);
	in[2] = U8(3);
	in[3] = F32(1.0f / 256);
	in[4] = U8(0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w64, 4);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_UINT8, d22, eq);
	st = (struct ok_ms_softmax_state){ .opset = 12, .axis = 0 };
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w64, 4);
	kt_free_out(&y);
	st.opset = 13;
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w128, 4);
	kt_free_out(&y);
	st.axis = -1;
	in[0] = T(NPU_DTYPE_UINT8, d2, two);
	in[1] = F32(logf(3.0f));
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w3to1, 2);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_UINT8, d2, far);
	in[1] = F32(1);
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w_cap, 2);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT8, d2, far8);
	in[2] = I8(0);
	in[4] = I8(-128);
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, w_wrap, 2);
	kt_free_out(&y);
	/*
	 * A run of one: its entry exp(log(FLT_MAX) - 5) = 2.3e36 times 256
	 * is infinite, which x86-64 converts to 0 for uint8 (y_zp 0 -> 0)
	 * and to INT32_MIN for int8, + -128 wrapping past 255 -> -1.
	 */
	in[0] = T(NPU_DTYPE_INT8, d1, far8);
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(((int8_t *)y.data)[0], -1);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_UINT8, d1, far);
	in[2] = U8(0);
	in[4] = U8(0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(((uint8_t *)y.data)[0], 0);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_INT8, d2, far8);
	in[2] = I8(0);
	in[4] = I8(-128);
	/* refusals */
	in[1] = F32(0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL),
		       "X_scale is 0: a softmax needs a positive finite scale");
	in[1] = F32(1);
	st.axis = 1;
	kt_expect_fail(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL),
		       "axis 1 is out of range");
	st.axis = -1;
	in[4] = U8(0);
	kt_expect_fail(kt_run(&ok_kernel_qlinear_softmax, &st, 5, in, 1, out, NULL),
		       "y_zero_point is uint8, but its tensor is int8");
}

/* ---- Polling ----------------------------------------------------------------- */

static void test_cancel(void **unused)
{
	/* a run of 64 Ki elements polls, and stops when cancelled */
	uint32_t dx[] = { 256, 256 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_kernel_tensor y, *in[8], *out[1] = { &y };

	(void)unused;
	lim.cancel = kt_cancel_after_first;
	kt_polls = 0;
	binary_in(in, T(NPU_DTYPE_UINT8, dx, NULL), T(NPU_DTYPE_UINT8, dx, NULL), 1, 1, 1, 0, 0,
		  0);
	assert_int_equal(kt_run(&ok_kernel_qlinear_add, NULL, 8, in, 1, out, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_free_out(&y);
}

/* ---- One-node models through npu_onnx_load() -------------------------------- */

/* An initializer of ONNX type @elem from raw bytes (as onnx-kquant.c's). */
static void init_raw(struct mb *b, const char *name, int elem, int rank, const int64_t *dims,
		     const void *data, size_t bytes)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = elem;
	t->n_dims = (size_t)rank;
	t->dims = keep(b, calloc(rank ? (size_t)rank : 1, sizeof(int64_t)));
	memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = keep(b, malloc(bytes));
	memcpy(t->raw_data.data, data, bytes);
	b->inits[b->g.n_initializer++] = t;
}

/* A model of opsets 13 and com.microsoft 1; @n's domain set. */
static void ms_model(struct mb *b, Onnx__NodeProto *n)
{
	Onnx__OperatorSetIdProto *ms = keep(b, calloc(1, sizeof(*ms)));
	Onnx__OperatorSetIdProto **all = keep(b, calloc(2, sizeof(*all)));

	onnx__operator_set_id_proto__init(ms);
	ms->domain = "com.microsoft";
	ms->has_version = 1;
	ms->version = 1;
	all[0] = &b->os;
	all[1] = ms;
	b->m.opset_import = all;
	b->m.n_opset_import = 2;
	n->domain = "com.microsoft";
}

static void test_load_add(void **unused)
{
	/* test_add_rounding's first case, B and the parameters constants */
	static const int64_t d6[] = { 6 };
	static const uint8_t a[] = { 0, 10, 255, 128, 3, 5 }, b[] = { 5, 7, 0, 128, 0, 0 };
	static const uint8_t want[] = { 37, 43, 164, 132, 38, 38 }, za = 128, zb = 0, zc = 100;
	static const float sa = 0.5f, sb = 0.25f, sc = 1, bad = 1;
	uint8_t y[6];
	struct mb m;

	(void)unused;
	for (int i = 0; i < 2; i++) {
		mb_init(&m, 13);
		m.ins[m.g.n_input++] = vinfo(&m, "a", 2, 1, d6);
		init_raw(&m, "b", 2, 1, d6, b, sizeof(b));
		init_f(&m, "sa", 0, d6, &sa, 1);
		init_raw(&m, "za", 2, 0, d6, &za, 1);
		init_f(&m, "sb", 0, d6, &sb, 1);
		init_raw(&m, "zb", 2, 0, d6, &zb, 1);
		if (i)
			init_raw(&m, "sc", 6, 0, d6, &bad, sizeof(bad));
		else
			init_f(&m, "sc", 0, d6, &sc, 1);
		init_raw(&m, "zc", 2, 0, d6, &zc, 1);
		kt_output_of(&m, "y", 2);
		ms_model(&m, nodef(&m, "QLinearAdd", "qa", "a,sa,za,b,sb,zb,sc,zc", "y", NULL));
		if (i) {
			load(&m, NULL, -EINVAL,
			     "node 'qa' (QLinearAdd): C_scale must be float32, not int32");
			mb_free(&m);
			break;
		}
		kt_load_run(&m, a, y, sizeof(y));
		assert_memory_equal(y, want, sizeof(want));
	}
}

static void test_load_lookup_and_pool(void **unused)
{
	/* test_leaky_relu's int8 case, then test_global_average_pool's */
	static const int64_t d6[] = { 6 }, dx[] = { 1, 2, 2, 2 };
	static const int8_t x[] = { -5, -3, -1, 6, 127, -128 }, want[] = { -2, -2, 0, 6, 127, -64 };
	static const int8_t z0 = 0;
	static const uint8_t xp[] = { 1, 2, 3, 4, 0, 0, 0, 1 }, want_p[] = { 6, 1 }, xz = 1, yz = 3;
	static const float half = 0.5f, one = 1;
	int8_t y[6];
	uint8_t yp[2];
	struct mb m;

	(void)unused;
	mb_init(&m, 13);
	m.ins[m.g.n_input++] = vinfo(&m, "x", 3, 1, d6);
	init_f(&m, "s", 0, d6, &half, 1);
	init_raw(&m, "z", 3, 0, d6, &z0, 1);
	kt_output_of(&m, "y", 3);
	ms_model(&m, nodef(&m, "QLinearLeakyRelu", "lr", "x,s,z,s,z", "y", "alpha=f:0.5", NULL));
	kt_load_run(&m, x, y, sizeof(y));
	assert_memory_equal(y, want, sizeof(want));

	mb_init(&m, 13);
	m.ins[m.g.n_input++] = vinfo(&m, "x", 2, 4, dx);
	init_f(&m, "xs", 0, d6, &one, 1);
	init_raw(&m, "xz", 2, 0, d6, &xz, 1);
	init_f(&m, "ys", 0, d6, &half, 1);
	init_raw(&m, "yz", 2, 0, d6, &yz, 1);
	kt_output_of(&m, "y", 2);
	ms_model(&m, nodef(&m, "QLinearGlobalAveragePool", "gap", "x,xs,xz,ys,yz", "y", NULL));
	kt_load_run(&m, xp, yp, sizeof(yp));
	assert_memory_equal(yp, want_p, sizeof(want_p));
}

static void test_table(void **unused)
{
	const struct npu_onnx_op *const *p;
	size_t ms = 0;

	(void)unused;
	for (p = ok_ops_quant; *p; p++) {
		if (strcmp((*p)->domain, "com.microsoft"))
			continue;
		assert_int_equal((*p)->since_version, 1);
		assert_string_equal((*p)->kernel->name, (*p)->op_type);
		ms++;
	}
	assert_int_equal(ms, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_add_rounding, kt_teardown),
		cmocka_unit_test_teardown(test_add_scalar_forms, kt_teardown),
		cmocka_unit_test_teardown(test_add_broadcast_int8, kt_teardown),
		cmocka_unit_test_teardown(test_mul, kt_teardown),
		cmocka_unit_test_teardown(test_binary_errors, kt_teardown),
		cmocka_unit_test_teardown(test_sigmoid, kt_teardown),
		cmocka_unit_test_teardown(test_leaky_relu, kt_teardown),
		cmocka_unit_test_teardown(test_lookup_errors, kt_teardown),
		cmocka_unit_test_teardown(test_concat, kt_teardown),
		cmocka_unit_test_teardown(test_global_average_pool, kt_teardown),
		cmocka_unit_test_teardown(test_global_average_pool_errors, kt_teardown),
		cmocka_unit_test_teardown(test_average_pool, kt_teardown),
		cmocka_unit_test_teardown(test_qgemm, kt_teardown),
		cmocka_unit_test_teardown(test_qgemm_errors, kt_teardown),
		cmocka_unit_test_teardown(test_softmax, kt_teardown),
		cmocka_unit_test_teardown(test_cancel, kt_teardown),
		cmocka_unit_test(test_load_add),
		cmocka_unit_test(test_load_lookup_and_pool),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
