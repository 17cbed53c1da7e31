// SPDX-License-Identifier: MIT
/*
 * The math family of ONNX CPU kernels (libnpu/onnx/kernels/ok_math*.c)
 * run directly through npu_kernel_run(): the ONNX specification's
 * examples and hand-computed cases (rounding half to even, integer
 * division and Mod signs, wrapping integer arithmetic, Cast's saturation,
 * NaN through Max/Min/Clip), broadcasts checked against an index-by-index
 * computation written here, every infer() refusal, run-time errors, and
 * a cancelled run; and create() end to end: one-node models imported,
 * compiled and run, their attributes reaching the kernel, bad ones
 * refused with the node named.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "kernels/ok_math.h"
#include "onnx-ktest.h"

/* Pool tensors: of a dims array, and scalars. */
#define T(dt, dims, data) kt_tensor(dt, KT_RANK(dims), dims, data)
#define S(dt, data) kt_tensor(dt, 0, NULL, data)

/* ---- Running one op --------------------------------------------------------- */

static struct npu_kernel_tensor y;

static const struct npu_kernel *kernel(enum ok_math_op op)
{
	const char *name = ok_math_op_name(op);

	for (size_t i = 0; ok_ops_math[i]; i++)
		if (!strcmp(ok_ops_math[i]->op_type, name))
			return ok_ops_math[i]->kernel;
	fail_msg("no %s in ok_ops_math", name);
	return NULL;
}

/* infer, allocate y, run @st's op; the result of whichever failed. */
static int run_lim(const struct ok_math_state *st, size_t nin,
		   struct npu_kernel_tensor **in, const struct npu_cpu_limits *lim)
{
	const struct npu_kernel *k = kernel(st->op);
	struct npu_kernel_tensor *out[1] = { &y };
	int ret;

	kt_msg[0] = 0;
	free(y.data);
	memset(&y, 0, sizeof(y));
	ret = k->infer(st, nin, (const struct npu_kernel_tensor *const *)in, 1, out, kt_msg,
		       sizeof(kt_msg));
	if (ret)
		return ret;
	y.data = calloc(1, y.elems * npu_dtype_size(y.dtype));
	assert_non_null(y.data);
	return npu_kernel_run(k, st, nin, (const struct npu_kernel_tensor *const *)in, 1, out,
			      lim, kt_msg, sizeof(kt_msg));
}

static int run(const struct ok_math_state *st, size_t nin, struct npu_kernel_tensor **in)
{
	return run_lim(st, nin, in, NULL);
}

static int free_y(void **unused)
{
	kt_teardown(unused);
	free(y.data);
	memset(&y, 0, sizeof(y));
	return 0;
}

static void expect_fail(int ret, int want, const char *part)
{
	assert_int_equal(ret, want);
	if (!strstr(kt_msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", kt_msg, part);
}

static void expect_f32(const float *want, size_t n, double tol)
{
	assert_int_equal(y.dtype, NPU_DTYPE_FP32);
	assert_int_equal(y.elems, n);
	for (size_t i = 0; i < n; i++) {
		float got = ((const float *)y.data)[i];

		if (isnan(want[i]) ? !isnan(got) : got != want[i] && !(fabs(got - want[i]) <= tol))
			fail_msg("element %zu: %.9g, want %.9g", i, got, want[i]);
	}
}

/* One float32 unary op over @x. */
static void unary32(struct ok_math_state st, const float *x, const float *want, size_t n,
		    double tol)
{
	uint32_t d[1] = { (uint32_t)n };
	struct npu_kernel_tensor *in[1] = { kt_tensor(NPU_DTYPE_FP32, 1, d, x) };

	assert_int_equal(run(&st, 1, in), 0);
	expect_f32(want, n, tol);
}

/* ---- One input -------------------------------------------------------------- */

static void test_unary_float(void **unused)
{
	static const float x[] = { -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f };
	static const float round_want[] = { -2, -2, -0.0f, 0, 2, 2, 4 };
	static const float floor_want[] = { -3, -2, -1, 0, 1, 2, 3 };
	static const float ceil_want[] = { -2, -1, -0.0f, 1, 2, 3, 4 };
	static const float abs_want[] = { 2.5f, 1.5f, 0.5f, 0.5f, 1.5f, 2.5f, 3.7f };
	static const float neg_want[] = { 2.5f, 1.5f, 0.5f, -0.5f, -1.5f, -2.5f, -3.7f };
	static const float s[] = { -3, 0, 2, NAN, -0.0f };
	/* onnxruntime's sign of NaN is 0 */
	static const float sign_want[] = { -1, 0, 1, 0, 0 };
	static const float p[] = { 0.25f, 1, 4 };
	static const float sqrt_want[] = { 0.5f, 1, 2 }, recip_want[] = { 4, 1, 0.25f };
	static const float log_want[] = { -1.38629436f, 0, 1.38629436f };
	static const float e[] = { -1, 0, 1 };
	static const float exp_want[] = { 0.36787944f, 1, 2.71828183f };
	static const float erf_want[] = { -0.84270079f, 0, 0.84270079f };

	(void)unused;
	unary32((struct ok_math_state){ .op = OKM_ROUND }, x, round_want, 7, 0);
	unary32((struct ok_math_state){ .op = OKM_FLOOR }, x, floor_want, 7, 0);
	unary32((struct ok_math_state){ .op = OKM_CEIL }, x, ceil_want, 7, 0);
	unary32((struct ok_math_state){ .op = OKM_ABS }, x, abs_want, 7, 0);
	unary32((struct ok_math_state){ .op = OKM_NEG }, x, neg_want, 7, 0);
	unary32((struct ok_math_state){ .op = OKM_SIGN }, s, sign_want, 5, 0);
	assert_false(signbit(((float *)y.data)[4]));
	unary32((struct ok_math_state){ .op = OKM_SQRT }, p, sqrt_want, 3, 0);
	unary32((struct ok_math_state){ .op = OKM_RECIPROCAL }, p, recip_want, 3, 0);
	unary32((struct ok_math_state){ .op = OKM_LOG }, p, log_want, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_EXP }, e, exp_want, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_ERF }, e, erf_want, 3, 1e-6);
}

static void test_trig(void **unused)
{
	static const float x[] = { -0.5f, 0, 0.5f };
	static const struct {
		enum ok_math_op op;
		float want[3];
	} cases[] = {
		{ OKM_SIN, { -0.47942554f, 0, 0.47942554f } },
		{ OKM_COS, { 0.87758256f, 1, 0.87758256f } },
		{ OKM_TAN, { -0.54630249f, 0, 0.54630249f } },
		{ OKM_ASIN, { -0.52359878f, 0, 0.52359878f } },
		{ OKM_ACOS, { 2.09439510f, 1.57079633f, 1.04719755f } },
		{ OKM_ATAN, { -0.46364761f, 0, 0.46364761f } },
		{ OKM_SINH, { -0.52109531f, 0, 0.52109531f } },
		{ OKM_COSH, { 1.12762597f, 1, 1.12762597f } },
		{ OKM_ASINH, { -0.48121183f, 0, 0.48121183f } },
		{ OKM_ATANH, { -0.54930614f, 0, 0.54930614f } },
		{ OKM_TANH, { -0.46211716f, 0, 0.46211716f } },
	};
	static const float a[] = { 1, 2, 10 };
	static const float acosh_want[] = { 0, 1.31695790f, 2.99322285f };

	(void)unused;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		unary32((struct ok_math_state){ .op = cases[i].op }, x, cases[i].want, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_ACOSH }, a, acosh_want, 3, 1e-6);
}

static void test_activations(void **unused)
{
	static const float x[] = { -1, 0, 1 };
	static const float relu[] = { 0, 0, 1 }, leaky[] = { -0.1f, 0, 1 };
	static const float elu[] = { -1.2642411f, 0, 1 };
	static const float selu[] = { -3.79272318f, 0, 3 };
	static const float celu[] = { -0.7869387f, 0, 1 };
	static const float softplus[] = { 0.31326166f, 0.69314718f, 1.31326163f };
	static const float softsign[] = { -0.5f, 0, 0.5f };
	static const float hsig[] = { 0.1f, 0.6f, 1 };
	static const float sigmoid[] = { 0.26894142f, 0.5f, 0.73105858f };
	static const float mish[] = { -0.30340147f, 0, 0.86509836f };
	static const float gelu[] = { -0.15865525f, 0, 0.84134475f };
	static const float gelu_tanh[] = { -0.15880801f, 0, 0.84119199f };
	static const float t[] = { -1.5f, 0, 1.2f, 2, 2.2f };
	static const float thresholded[] = { 0, 0, 0, 0, 2.2f };
	static const float h[] = { -4, -3, 0, 1, 3, 4 };
	static const float hswish[] = { 0, 0, 0, 0.66666667f, 3, 4 };
	static const float sx[] = { -2, -1, 0, 1, 2 };
	static const float shrink_hard[] = { -2, 0, 0, 0, 2 };
	static const float shrink_soft[] = { -0.5f, 0, 0, 0, 0.5f };
	static const float big[] = { -100, 100 };
	static const float sigmoid_big[] = { 0, 1 }, softplus_big[] = { 0, 100 };

	(void)unused;
	unary32((struct ok_math_state){ .op = OKM_RELU }, x, relu, 3, 0);
	unary32((struct ok_math_state){ .op = OKM_LEAKY_RELU, .alpha = 0.1f }, x, leaky, 3, 1e-7);
	unary32((struct ok_math_state){ .op = OKM_ELU, .alpha = 2 }, x, elu, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_SELU, .alpha = 2, .gamma = 3 }, x, selu, 3,
		1e-6);
	unary32((struct ok_math_state){ .op = OKM_CELU, .alpha = 2 }, x, celu, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_SOFTPLUS }, x, softplus, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_SOFTSIGN }, x, softsign, 3, 0);
	unary32((struct ok_math_state){ .op = OKM_HARD_SIGMOID, .alpha = 0.5f, .beta = 0.6f },
		x, hsig, 3, 1e-7);
	unary32((struct ok_math_state){ .op = OKM_SIGMOID }, x, sigmoid, 3, 1e-7);
	unary32((struct ok_math_state){ .op = OKM_MISH }, x, mish, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_GELU }, x, gelu, 3, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_GELU, .gelu_tanh = true }, x, gelu_tanh, 3,
		1e-6);
	unary32((struct ok_math_state){ .op = OKM_THRESHOLDED_RELU, .alpha = 2 }, t,
		thresholded, 5, 0);
	unary32((struct ok_math_state){ .op = OKM_HARD_SWISH }, h, hswish, 6, 1e-6);
	unary32((struct ok_math_state){ .op = OKM_SHRINK, .alpha = 1.5f }, sx, shrink_hard, 5,
		0);
	unary32((struct ok_math_state){ .op = OKM_SHRINK, .alpha = 1.5f, .beta = 1.5f }, sx,
		shrink_soft, 5, 0);
	/* no overflow of e^x on the way */
	unary32((struct ok_math_state){ .op = OKM_SIGMOID }, big, sigmoid_big, 2, 1e-30);
	unary32((struct ok_math_state){ .op = OKM_SOFTPLUS }, big, softplus_big, 2, 1e-30);
}

static void test_unary_other_floats(void **unused)
{
	/* float64 natively; float16 and bfloat16 through float32 */
	static const double xd[] = { -1, 0, 1, 2.5 };
	static const double sig[] = { 0.2689414213699951, 0.5, 0.7310585786300049,
				      0.9241418199787566 };
	/* fp16: -1.5, 0.5, 2.5, 65504 (the largest) */
	static const uint16_t xh[] = { 0xbe00, 0x3800, 0x4100, 0x7bff };
	static const uint16_t round_h[] = { 0xc000, 0x0000, 0x4000, 0x7bff };
	/* bf16: -2, 9 */
	static const uint16_t xb[] = { 0xc000, 0x4110 };
	static const uint16_t sqrt_b[] = { 0xffc0, 0x4040 };
	uint32_t d4[] = { 4 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_SIGMOID };
	struct npu_kernel_tensor *in[1] = { T(NPU_DTYPE_FP64, d4, xd) };

	(void)unused;
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_FP64);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(((double *)y.data)[i] - sig[i]) < 1e-15);
	st.op = OKM_ROUND;
	in[0] = T(NPU_DTYPE_FP16, d4, xh);
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_FP16);
	assert_memory_equal(y.data, round_h, sizeof(round_h));
	st.op = OKM_SQRT;
	in[0] = T(NPU_DTYPE_BF16, d2, xb);
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_BF16);
	/* sqrt(-2) is a NaN: any NaN encoding will do */
	assert_true(isnan(ok_bf16_to_f32(((uint16_t *)y.data)[0])));
	assert_int_equal(((uint16_t *)y.data)[1], sqrt_b[1]);
}

static void test_predicates(void **unused)
{
	static const float x[] = { -1.2f, NAN, INFINITY, 2.8f, -INFINITY, INFINITY };
	static const uint8_t nan_want[] = { 0, 1, 0, 0, 0, 0 };
	static const uint8_t inf_want[] = { 0, 0, 1, 0, 1, 1 };
	static const uint8_t neg_want[] = { 0, 0, 0, 0, 1, 0 };
	static const uint8_t pos_want[] = { 0, 0, 1, 0, 0, 1 };
	static const double xd[] = { NAN, -INFINITY };
	static const uint8_t d_want[] = { 1, 0 };
	uint32_t d6[] = { 6 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_ISNAN };
	struct npu_kernel_tensor *in[1] = { T(NPU_DTYPE_FP32, d6, x) };

	(void)unused;
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_BOOL);
	assert_memory_equal(y.data, nan_want, 6);
	st = (struct ok_math_state){ .op = OKM_ISINF, .detect_pos = true, .detect_neg = true };
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, inf_want, 6);
	st.detect_pos = false;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, neg_want, 6);
	st.detect_pos = true;
	st.detect_neg = false;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, pos_want, 6);
	st.op = OKM_ISNAN;
	in[0] = T(NPU_DTYPE_FP64, d2, xd);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, d_want, 2);
}

static void test_unary_int(void **unused)
{
	/* wrapping: |INT32_MIN| and -INT32_MIN are INT32_MIN, as in two's complement */
	static const int32_t x[] = { INT32_MIN, -7, 0, 5, INT32_MAX };
	static const int32_t abs_want[] = { INT32_MIN, 7, 0, 5, INT32_MAX };
	static const int32_t neg_want[] = { INT32_MIN, 7, 0, -5, -INT32_MAX };
	static const int32_t sign_want[] = { -1, -1, 0, 1, 1 };
	static const int32_t relu_want[] = { 0, 0, 0, 5, INT32_MAX };
	static const int32_t not_want[] = { INT32_MAX, 6, -1, -6, INT32_MIN };
	static const int8_t x8[] = { -128, -1, 3 }, neg8[] = { -128, 1, -3 };
	static const uint16_t xu[] = { 0, 1, 65535 }, notu[] = { 65535, 65534, 0 };
	static const uint16_t signu[] = { 0, 1, 1 };
	static const int64_t x64[] = { -5, 4, 1 }, shrink64[] = { -3, 2, 0 };
	static const uint8_t b[] = { 0, 1, 1 }, notb[] = { 1, 0, 0 };
	uint32_t d5[] = { 5 }, d3[] = { 3 };
	struct ok_math_state st = { .op = OKM_ABS };
	struct npu_kernel_tensor *in[1] = { T(NPU_DTYPE_INT32, d5, x) };

	(void)unused;
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT32);
	assert_memory_equal(y.data, abs_want, sizeof(abs_want));
	st.op = OKM_NEG;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, neg_want, sizeof(neg_want));
	st.op = OKM_SIGN;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, sign_want, sizeof(sign_want));
	st.op = OKM_RELU;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, relu_want, sizeof(relu_want));
	st.op = OKM_BITWISE_NOT;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, not_want, sizeof(not_want));
	st.op = OKM_NEG;
	in[0] = T(NPU_DTYPE_INT8, d3, x8);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, neg8, sizeof(neg8));
	st.op = OKM_BITWISE_NOT;
	in[0] = T(NPU_DTYPE_UINT16, d3, xu);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, notu, sizeof(notu));
	st.op = OKM_SIGN;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, signu, sizeof(signu));
	/* Shrink of integers: lambd 1.5, bias 2 */
	st = (struct ok_math_state){ .op = OKM_SHRINK, .alpha = 1.5f, .beta = 2 };
	in[0] = T(NPU_DTYPE_INT64, d3, x64);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, shrink64, sizeof(shrink64));
	st = (struct ok_math_state){ .op = OKM_NOT };
	in[0] = T(NPU_DTYPE_BOOL, d3, b);
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_BOOL);
	assert_memory_equal(y.data, notb, 3);
}

static void test_unary_errors(void **unused)
{
	static const int32_t x[] = { 1 };
	uint32_t d1[] = { 1 };
	struct ok_math_state st = { .op = OKM_SQRT };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_INT32, d1, x), T(NPU_DTYPE_INT32, d1, x) };

	(void)unused;
	expect_fail(run(&st, 1, in), -EINVAL,
		    "Sqrt takes float16, bfloat16, float32 or float64, not int32");
	st.op = OKM_NOT;
	expect_fail(run(&st, 1, in), -EINVAL, "Not takes bool, not int32");
	st.op = OKM_NEG;
	in[0] = T(NPU_DTYPE_UINT8, d1, x);
	expect_fail(run(&st, 1, in), -EINVAL, "Neg takes signed numbers, not uint8");
	st.op = OKM_BITWISE_NOT;
	in[0] = T(NPU_DTYPE_FP32, d1, x);
	expect_fail(run(&st, 1, in), -EINVAL, "BitwiseNot takes integers, not float32");
	st.op = OKM_ABS;
	in[0] = T(NPU_DTYPE_BOOL, d1, x);
	expect_fail(run(&st, 1, in), -EINVAL, "Abs takes numbers (not bool), not bool");
	expect_fail(run(&st, 2, in), -EINVAL, "Abs takes exactly one input, not 2");
}

/* ---- Two or more inputs ------------------------------------------------------ */

/* Element @i of a [rank, dims] output, seen from a broadcast input. */
static size_t bcast_at(const struct npu_kernel_tensor *t, const struct npu_kernel_tensor *o,
		       size_t i)
{
	size_t idx = 0, mul = 1;

	for (uint32_t d = o->rank; d-- > 0;) {
		size_t c = i % o->dims[d];

		i /= o->dims[d];
		if (d + t->rank >= o->rank) {
			uint32_t td = d + t->rank - o->rank;

			idx += (t->dims[td] == 1 ? 0 : c) * mul;
			mul *= t->dims[td];
		}
	}
	return idx;
}

static void test_broadcast_shapes(void **unused)
{
	/* shapes that exercise the walker's merged and repeated dimensions */
	static const uint32_t shapes[][2][5] = {
		{ { 4, 2, 1, 3, 4 }, { 4, 1, 5, 1, 4 } },
		{ { 3, 2, 3, 4 }, { 1, 4 } },
		{ { 3, 2, 3, 4 }, { 2, 1, 1 } },
		{ { 2, 3, 1 }, { 2, 1, 4 } },
		{ { 1, 1 }, { 3, 1, 1, 5 } },
		{ { 3, 5, 1, 7 }, { 3, 5, 1, 7 } },
		{ { 0 }, { 2, 3, 2 } },
		{ { 4, 1, 2, 1, 2 }, { 4, 2, 1, 2, 1 } },
	};

	(void)unused;
	for (size_t c = 0; c < sizeof(shapes) / sizeof(shapes[0]); c++) {
		struct npu_kernel_tensor *in[2];
		struct ok_math_state st = { .op = OKM_SUB };

		for (int k = 0; k < 2; k++) {
			in[k] = kt_tensor(NPU_DTYPE_FP32, shapes[c][k][0], shapes[c][k] + 1, NULL);
			for (size_t i = 0; i < in[k]->elems; i++)
				((float *)in[k]->data)[i] = (float)(i * (k ? 100 : 1));
		}
		assert_int_equal(run(&st, 2, in), 0);
		for (size_t i = 0; i < y.elems; i++) {
			float want = ((float *)in[0]->data)[bcast_at(in[0], &y, i)] -
				     ((float *)in[1]->data)[bcast_at(in[1], &y, i)];

			if (((float *)y.data)[i] != want)
				fail_msg("shape case %zu, element %zu: %g, want %g", c, i,
					 ((float *)y.data)[i], want);
		}
	}
}

static void test_arith_float(void **unused)
{
	static const float a[] = { 1, 2, 3, 4, 5, 6 }, b[] = { 2, -1, 0.5f };
	static const float add[] = { 3, 1, 3.5f, 6, 4, 6.5f };
	static const float mul[] = { 2, -2, 1.5f, 8, -5, 3 };
	static const float div[] = { 0.5f, -2, 6, 2, -5, 12 };
	static const float sub_scalar[] = { -1, 0, 1, 2, 3, 4 };
	static const float two = 2;
	static const double ad[] = { 1, 2, 3 }, bd[] = { 4, 5, 6 }, powd[] = { 1, 32, 729 };
	uint32_t d23[] = { 2, 3 }, d3[] = { 3 };
	struct ok_math_state st = { .op = OKM_ADD };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_FP32, d23, a), T(NPU_DTYPE_FP32, d3, b) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.rank, 2);
	expect_f32(add, 6, 0);
	st.op = OKM_MUL;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(mul, 6, 0);
	st.op = OKM_DIV;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(div, 6, 0);
	st.op = OKM_SUB;
	in[1] = S(NPU_DTYPE_FP32, &two);
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(sub_scalar, 6, 0);
	/* the scalar on the left */
	in[1] = in[0];
	in[0] = S(NPU_DTYPE_FP32, &two);
	assert_int_equal(run(&st, 2, in), 0);
	for (int i = 0; i < 6; i++)
		assert_true(((float *)y.data)[i] == -sub_scalar[i]);
	st.op = OKM_POW;
	in[0] = T(NPU_DTYPE_FP64, d3, ad);
	in[1] = T(NPU_DTYPE_FP64, d3, bd);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, powd, sizeof(powd));
}

static void test_arith_int(void **unused)
{
	/* division truncates toward zero; sums wrap */
	static const int64_t a[] = { 7, -7, 7, -7, INT64_MAX }, b[] = { 2, 2, -2, -2, 1 };
	static const int64_t div[] = { 3, -3, -3, 3, INT64_MAX };
	static const int64_t add[] = { 9, -5, 5, -9, INT64_MIN };
	static const int32_t a32[] = { INT32_MAX, INT32_MIN, 65536 };
	static const int32_t b32[] = { 1, -1, 65536 };
	static const int32_t add32[] = { INT32_MIN, INT32_MAX, 131072 };
	static const int32_t mul32[] = { INT32_MAX, INT32_MIN, 0 };
	static const uint8_t au[] = { 200, 3, 250 }, bu[] = { 100, 5, 7 };
	static const uint8_t addu[] = { 44, 8, 1 }, subu[] = { 100, 254, 243 };
	static const uint8_t divu[] = { 2, 0, 35 }, maxu[] = { 200, 5, 250 };
	static const int16_t a16[] = { 300, -300 }, b16[] = { 300, 300 };
	static const int16_t mul16[] = { 24464, -24464 };
	uint32_t d5[] = { 5 }, d3[] = { 3 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_DIV };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_INT64, d5, a), T(NPU_DTYPE_INT64, d5, b) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT64);
	assert_memory_equal(y.data, div, sizeof(div));
	st.op = OKM_ADD;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, add, sizeof(add));
	in[0] = T(NPU_DTYPE_INT32, d3, a32);
	in[1] = T(NPU_DTYPE_INT32, d3, b32);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, add32, sizeof(add32));
	st.op = OKM_MUL;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mul32, sizeof(mul32));
	in[0] = T(NPU_DTYPE_UINT8, d3, au);
	in[1] = T(NPU_DTYPE_UINT8, d3, bu);
	st.op = OKM_ADD;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, addu, 3);
	st.op = OKM_SUB;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, subu, 3);
	st.op = OKM_DIV;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, divu, 3);
	st.op = OKM_MAX;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, maxu, 3);
	st.op = OKM_MUL;
	in[0] = T(NPU_DTYPE_INT16, d2, a16);
	in[1] = T(NPU_DTYPE_INT16, d2, b16);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mul16, sizeof(mul16));
}

static void test_division_errors(void **unused)
{
	static const int32_t a[] = { 4, 5 }, b[] = { 2, 0 };
	static const int64_t m[] = { INT64_MIN, 3 }, m1[] = { -1, -1 };
	static const int64_t mod_m1[] = { 0, 0 };
	uint32_t d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_DIV };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_INT32, d2, a), T(NPU_DTYPE_INT32, d2, b) };

	(void)unused;
	expect_fail(run(&st, 2, in), -EDOM, "Div: integer division by zero");
	st.op = OKM_MOD;
	expect_fail(run(&st, 2, in), -EDOM, "Mod: integer division by zero");
	st.op = OKM_DIV;
	in[0] = T(NPU_DTYPE_INT64, d2, m);
	in[1] = T(NPU_DTYPE_INT64, d2, m1);
	expect_fail(run(&st, 2, in), -ERANGE,
		    "Div: -9223372036854775808 / -1 overflows int64");
	/* the remainder of INT64_MIN by -1 is 0, whichever convention */
	st.op = OKM_MOD;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mod_m1, sizeof(mod_m1));
	st.fmod = true;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mod_m1, sizeof(mod_m1));
}

static void test_mod(void **unused)
{
	/* the spec's mixed-sign examples */
	static const int64_t a[] = { -4, 7, 5, 4, -7, 8 }, b[] = { 2, -3, 8, -2, 3, 5 };
	static const int64_t mod[] = { 0, -2, 5, 0, 2, 3 };
	static const int64_t fmod[] = { 0, 1, 5, 0, -1, 3 };
	static const int8_t a8[] = { -4, 7, 5, 4, -7, 8 }, b8[] = { 2, -3, 8, -2, 3, 5 };
	static const int8_t mod8[] = { 0, -2, 5, 0, 2, 3 };
	static const float af[] = { -4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f };
	static const float bf[] = { 2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f };
	static const float fmodf_want[] = { -0.1f, 0.4f, 5, 0.1f, -0.4f, 3 };
	uint32_t d6[] = { 6 };
	struct ok_math_state st = { .op = OKM_MOD };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_INT64, d6, a), T(NPU_DTYPE_INT64, d6, b) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mod, sizeof(mod));
	st.fmod = true;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, fmod, sizeof(fmod));
	st.fmod = false;
	in[0] = T(NPU_DTYPE_INT8, d6, a8);
	in[1] = T(NPU_DTYPE_INT8, d6, b8);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, mod8, sizeof(mod8));
	in[0] = T(NPU_DTYPE_FP32, d6, af);
	in[1] = T(NPU_DTYPE_FP32, d6, bf);
	expect_fail(run(&st, 2, in), -EINVAL, "Mod of float32 needs fmod=1");
	st.fmod = true;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(fmodf_want, 6, 1e-6);
}

static void test_pow_types(void **unused)
{
	static const float xf[] = { 1, 2, 3 };
	static const int64_t e64[] = { 4, 5, 6 };
	static const float want_f[] = { 1, 32, 729 };
	static const int32_t x32[] = { 1, 2, 3, 2, -1, -2 }, e32[] = { 4, 5, 6, -1, -3, 31 };
	static const int32_t want32[] = { 1, 32, 729, 0, -1, INT32_MIN };
	static const int64_t x64[] = { 1, 2, 3 };
	static const float ef[] = { 4, 5, 0.5f };
	static const int64_t want64[] = { 1, 32, 1 };
	static const uint64_t b64 = 255, e_big = (1ull << 63) + 1;
	static const uint8_t b8 = 255;
	uint32_t d3[] = { 3 }, d6[] = { 6 };
	struct ok_math_state st = { .op = OKM_POW };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_FP32, d3, xf), T(NPU_DTYPE_INT64, d3, e64) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(want_f, 3, 0);
	/* integers: exact and wrapping; 2^-1 truncates to 0 */
	in[0] = T(NPU_DTYPE_INT32, d6, x32);
	in[1] = T(NPU_DTYPE_INT32, d6, e32);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, want32, sizeof(want32));
	/* an integer base with a float exponent truncates: 3^0.5 is 1 */
	in[0] = T(NPU_DTYPE_INT64, d3, x64);
	in[1] = T(NPU_DTYPE_FP32, d3, ef);
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT64);
	assert_memory_equal(y.data, want64, sizeof(want64));
	/* an unsigned exponent of 2^63 or more is not negative: 255^(2^63+1) */
	in[0] = S(NPU_DTYPE_UINT64, &b64);
	in[1] = S(NPU_DTYPE_UINT64, &e_big);
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(*(uint64_t *)y.data, 255);
	in[0] = S(NPU_DTYPE_UINT8, &b8);
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_UINT8);
	assert_int_equal(*(uint8_t *)y.data, 255);
}

static void test_variadic(void **unused)
{
	static const float d0[] = { 3, 2, 1 }, d1[] = { 1, 4, 4 }, d2[] = { 2, 5, 3 };
	static const float sum[] = { 6, 11, 8 }, mean[] = { 2, 3.6666667f, 2.6666667f };
	static const float max[] = { 3, 5, 4 }, min[] = { 1, 2, 1 };
	static const float n0[] = { NAN, 1, 2 }, n1[] = { 0, NAN, 1 };
	static const float nmax[] = { NAN, NAN, 2 }, nmin[] = { NAN, NAN, 1 };
	static const float col[] = { 10, 20 };
	static const float bsum[] = { 13, 12, 11, 23, 22, 21 };
	static const int64_t i0[] = { -5, 9 }, i1[] = { 7, -2 }, imin[] = { -5, -2 };
	uint32_t d3[] = { 3 }, d21[] = { 2, 1 }, d2s[] = { 2 };
	struct ok_math_state st = { .op = OKM_SUM };
	struct npu_kernel_tensor *in[3] = {
		T(NPU_DTYPE_FP32, d3, d0), T(NPU_DTYPE_FP32, d3, d1), T(NPU_DTYPE_FP32, d3, d2) };

	(void)unused;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(sum, 3, 0);
	st.op = OKM_MEAN;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(mean, 3, 1e-6);
	st.op = OKM_MAX;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(max, 3, 0);
	st.op = OKM_MIN;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(min, 3, 0);
	/* one input is a copy */
	st.op = OKM_MEAN;
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32(d0, 3, 0);
	/* NaN wins either way round */
	in[0] = T(NPU_DTYPE_FP32, d3, n0);
	in[1] = T(NPU_DTYPE_FP32, d3, n1);
	st.op = OKM_MAX;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(nmax, 3, 0);
	st.op = OKM_MIN;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(nmin, 3, 0);
	/* the first input smaller than the output: [3] + [2, 1] + [3] */
	in[0] = T(NPU_DTYPE_FP32, d3, d0);
	in[1] = T(NPU_DTYPE_FP32, d21, col);
	in[2] = T(NPU_DTYPE_FP32, d3, NULL);	/* zeros */
	st.op = OKM_SUM;
	assert_int_equal(run(&st, 3, in), 0);
	assert_int_equal(y.rank, 2);
	expect_f32(bsum, 6, 0);
	st.op = OKM_MIN;
	in[0] = T(NPU_DTYPE_INT64, d2s, i0);
	in[1] = T(NPU_DTYPE_INT64, d2s, i1);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, imin, sizeof(imin));
	st.op = OKM_SUM;
	expect_fail(run(&st, 2, in), -EINVAL,
		    "Sum takes float16, bfloat16, float32 or float64, not int64");
	expect_fail(run(&st, 0, in), -EINVAL, "Sum needs at least one input");
}

static void test_compare_logic(void **unused)
{
	static const float a[] = { 1, 2, NAN, 4 }, b[] = { 2, 2, NAN, 3 };
	static const uint8_t eq[] = { 0, 1, 0, 0 }, gt[] = { 0, 0, 0, 1 };
	static const uint8_t ge[] = { 0, 1, 0, 1 }, lt[] = { 1, 0, 0, 0 }, le[] = { 1, 1, 0, 0 };
	static const int64_t ia[] = { -1, 5 }, ib = 5;
	static const uint8_t ieq[] = { 0, 1 };
	static const uint64_t ua[] = { UINT64_MAX, 1 }, ub[] = { 1, 1 };
	static const uint8_t ugt[] = { 1, 0 };
	static const uint8_t ba[] = { 0, 0, 1, 1 }, bb[] = { 0, 1, 0, 1 };
	static const uint8_t band[] = { 0, 0, 0, 1 }, bor[] = { 0, 1, 1, 1 };
	static const uint8_t bxor[] = { 0, 1, 1, 0 }, beq[] = { 1, 0, 0, 1 };
	static const uint8_t row[] = { 1, 0 };
	static const uint8_t bcast_and[] = { 0, 0, 1, 0 };
	/* fp16 1.0, 2.0 against 1.5 */
	static const uint16_t ha[] = { 0x3c00, 0x4000 }, hb = 0x3e00;
	static const uint8_t hlt[] = { 1, 0 };
	uint32_t d4[] = { 4 }, d2[] = { 2 }, d22[] = { 2, 2 };
	struct ok_math_state st = { .op = OKM_EQUAL };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_FP32, d4, a), T(NPU_DTYPE_FP32, d4, b) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_BOOL);
	assert_memory_equal(y.data, eq, 4);
	st.op = OKM_GREATER;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, gt, 4);
	st.op = OKM_GREATER_EQUAL;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, ge, 4);
	st.op = OKM_LESS;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, lt, 4);
	st.op = OKM_LESS_EQUAL;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, le, 4);
	st.op = OKM_EQUAL;
	in[0] = T(NPU_DTYPE_INT64, d2, ia);
	in[1] = S(NPU_DTYPE_INT64, &ib);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, ieq, 2);
	st.op = OKM_GREATER;
	in[0] = T(NPU_DTYPE_UINT64, d2, ua);
	in[1] = T(NPU_DTYPE_UINT64, d2, ub);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, ugt, 2);
	st.op = OKM_LESS;
	in[0] = T(NPU_DTYPE_FP16, d2, ha);
	in[1] = S(NPU_DTYPE_FP16, &hb);
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_BOOL);
	assert_memory_equal(y.data, hlt, 2);
	in[0] = T(NPU_DTYPE_BOOL, d4, ba);
	in[1] = T(NPU_DTYPE_BOOL, d4, bb);
	st.op = OKM_AND;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, band, 4);
	st.op = OKM_OR;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, bor, 4);
	st.op = OKM_XOR;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, bxor, 4);
	st.op = OKM_EQUAL;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, beq, 4);
	/* [2, 2] and a row [2] */
	st.op = OKM_AND;
	in[0] = T(NPU_DTYPE_BOOL, d22, ba);
	in[1] = T(NPU_DTYPE_BOOL, d2, row);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, bcast_and, 4);
	in[1] = T(NPU_DTYPE_FP32, d2, a);
	expect_fail(run(&st, 2, in), -EINVAL, "And's input 1 is float32, unlike input 0 (bool)");
	in[0] = T(NPU_DTYPE_FP32, d2, a);
	expect_fail(run(&st, 2, in), -EINVAL, "And takes bool, not float32");
	st.op = OKM_GREATER;
	in[0] = T(NPU_DTYPE_BOOL, d2, ba);
	in[1] = T(NPU_DTYPE_BOOL, d2, bb);
	expect_fail(run(&st, 2, in), -EINVAL, "Greater takes numbers (not bool), not bool");
}

static void test_bits(void **unused)
{
	static const uint32_t x[] = { 16, 4, 1 }, s[] = { 1, 2, 3 };
	static const uint32_t right[] = { 8, 1, 0 }, left[] = { 32, 16, 8 };
	static const uint8_t x8[] = { 0xff, 0x81 }, s8[] = { 8, 7 }, left8[] = { 0, 0x80 };
	static const uint64_t x64[] = { 1 }, s64[] = { 63 }, left64[] = { 1ull << 63 };
	static const int32_t a[] = { 12, -1, 6 }, b[] = { 10, 5, -3 };
	static const int32_t and[] = { 8, 5, 4 }, or[] = { 14, -1, -1 }, xor[] = { 6, -6, -5 };
	uint32_t d3[] = { 3 }, d2[] = { 2 }, d1[] = { 1 };
	struct ok_math_state st = { .op = OKM_BITSHIFT, .shift_right = true };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_UINT32, d3, x), T(NPU_DTYPE_UINT32, d3, s) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, right, sizeof(right));
	st.shift_right = false;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, left, sizeof(left));
	/* a shift by the width or more gives 0 */
	in[0] = T(NPU_DTYPE_UINT8, d2, x8);
	in[1] = T(NPU_DTYPE_UINT8, d2, s8);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, left8, 2);
	in[0] = T(NPU_DTYPE_UINT64, d1, x64);
	in[1] = T(NPU_DTYPE_UINT64, d1, s64);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, left64, 8);
	in[0] = T(NPU_DTYPE_INT32, d3, a);
	in[1] = T(NPU_DTYPE_INT32, d3, b);
	expect_fail(run(&st, 2, in), -EINVAL, "BitShift takes unsigned integers, not int32");
	st.op = OKM_BITWISE_AND;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, and, sizeof(and));
	st.op = OKM_BITWISE_OR;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, or, sizeof(or));
	st.op = OKM_BITWISE_XOR;
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, xor, sizeof(xor));
}

static void test_prelu(void **unused)
{
	static const float x[] = { -1, 2, -3, 4, -5, 6 }, slope[] = { 0.5f, 0.25f, 2 };
	static const float want[] = { -0.5f, 2, -6, 4, -1.25f, 6 };
	static const int64_t xi[] = { -4, 3 }, si = 3, wanti[] = { -12, 3 };
	uint32_t d23[] = { 2, 3 }, d3[] = { 3 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_PRELU };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_FP32, d23, x), T(NPU_DTYPE_FP32, d3, slope) };

	(void)unused;
	assert_int_equal(run(&st, 2, in), 0);
	expect_f32(want, 6, 0);
	in[0] = T(NPU_DTYPE_INT64, d2, xi);
	in[1] = S(NPU_DTYPE_INT64, &si);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, wanti, sizeof(wanti));
	/* the slope may not widen X */
	in[0] = T(NPU_DTYPE_FP32, d3, slope);
	in[1] = T(NPU_DTYPE_FP32, d23, x);
	expect_fail(run(&st, 2, in), -EINVAL, "PRelu's slope must broadcast to X's shape");
}

static void test_binary_errors(void **unused)
{
	uint32_t d3[] = { 3 }, d4[] = { 4 };
	struct ok_math_state st = { .op = OKM_ADD };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_FP32, d3, NULL), T(NPU_DTYPE_FP32, d4, NULL) };

	(void)unused;
	expect_fail(run(&st, 2, in), -EINVAL, "does not broadcast");
	in[1] = T(NPU_DTYPE_INT64, d3, NULL);
	expect_fail(run(&st, 2, in), -EINVAL, "Add's input 1 is int64, unlike input 0 (float32)");
	expect_fail(run(&st, 1, in), -EINVAL, "Add takes two inputs, not 1");
	in[1] = NULL;
	expect_fail(run(&st, 2, in), -EINVAL, "Add's input 1 is missing");
	in[0] = T(NPU_DTYPE_BOOL, d3, NULL);
	in[1] = T(NPU_DTYPE_BOOL, d3, NULL);
	expect_fail(run(&st, 2, in), -EINVAL, "Add takes numbers (not bool), not bool");
}

/* ---- Where, Clip ------------------------------------------------------------ */

static void test_where(void **unused)
{
	static const uint8_t c[] = { 1, 0, 1, 1 };
	static const float x[] = { 1, 2, 3, 4 }, yv[] = { 9, 8, 7, 6 };
	static const float want[] = { 1, 8, 3, 4 };
	static const uint8_t crow[] = { 0, 1 };
	static const int64_t xi[] = { 1, 2 }, yi = -1;
	uint32_t d22[] = { 2, 2 }, d2[] = { 2 }, d21[] = { 2, 1 };
	struct ok_math_state st = { .op = OKM_WHERE };
	struct npu_kernel_tensor *in[3] = { T(NPU_DTYPE_BOOL, d22, c), T(NPU_DTYPE_FP32, d22, x),
					    T(NPU_DTYPE_FP32, d22, yv) };

	(void)unused;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(want, 4, 0);
	/* a [2] condition, a [2, 1] X and a scalar Y broadcast to [2, 2] */
	in[0] = T(NPU_DTYPE_BOOL, d2, crow);
	in[1] = T(NPU_DTYPE_INT64, d21, xi);
	in[2] = S(NPU_DTYPE_INT64, &yi);
	assert_int_equal(run(&st, 3, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT64);
	assert_int_equal(y.rank, 2);
	assert_memory_equal(y.data, ((int64_t[]){ -1, 1, -1, 2 }), 32);
	in[2] = S(NPU_DTYPE_FP32, x);
	expect_fail(run(&st, 3, in), -EINVAL, "Where's X (int64) and Y (float32) differ in type");
	in[0] = T(NPU_DTYPE_FP32, d2, x);
	expect_fail(run(&st, 3, in), -EINVAL, "Where's condition must be bool, not float32");
}

static void test_clip(void **unused)
{
	static const float x[] = { -2, 0, 2, NAN }, lo = -1, hi = 1;
	static const float both[] = { -1, 0, 1, NAN }, upper[] = { -2, 0, 1, NAN };
	static const float swapped[] = { -1, -1, -1, NAN };
	static const int8_t x8[] = { -128, 5, 127 }, lo8 = -3, want8[] = { -3, 5, 127 };
	static const uint64_t xu[] = { 0, UINT64_MAX }, hiu = 7, wantu[] = { 0, 7 };
	static const uint16_t xh[] = { 0xc000, 0x4000 }, loh = 0xbc00, wanth[] = { 0xbc00, 0x4000 };
	uint32_t d4[] = { 4 }, d3[] = { 3 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_CLIP };
	struct npu_kernel_tensor *in[3] = { T(NPU_DTYPE_FP32, d4, x), S(NPU_DTYPE_FP32, &lo),
					    S(NPU_DTYPE_FP32, &hi) };

	(void)unused;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(both, 4, 0);
	in[1] = NULL;
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(upper, 4, 0);
	/* min above max gives max everywhere */
	in[1] = S(NPU_DTYPE_FP32, &hi);
	in[2] = S(NPU_DTYPE_FP32, &lo);
	assert_int_equal(run(&st, 3, in), 0);
	expect_f32(swapped, 4, 0);
	/* before opset 11: attributes */
	st = (struct ok_math_state){ .op = OKM_CLIP, .clip_attrs = true, .clip_min = -1,
				     .clip_max = 1 };
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32(both, 4, 0);
	expect_fail(run(&st, 2, in), -EINVAL, "Clip takes one input before opset 11, not 2");
	st.clip_attrs = false;
	in[0] = T(NPU_DTYPE_INT8, d3, x8);
	in[1] = S(NPU_DTYPE_INT8, &lo8);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, want8, 3);
	in[0] = T(NPU_DTYPE_UINT64, d2, xu);
	in[1] = NULL;
	in[2] = S(NPU_DTYPE_UINT64, &hiu);
	assert_int_equal(run(&st, 3, in), 0);
	assert_memory_equal(y.data, wantu, sizeof(wantu));
	in[0] = T(NPU_DTYPE_FP16, d2, xh);
	in[1] = S(NPU_DTYPE_FP16, &loh);
	assert_int_equal(run(&st, 2, in), 0);
	assert_memory_equal(y.data, wanth, sizeof(wanth));
	in[1] = T(NPU_DTYPE_FP16, d2, xh);
	expect_fail(run(&st, 2, in), -EINVAL, "Clip's min must be a scalar, not 2 values");
	in[1] = S(NPU_DTYPE_FP32, &lo);
	expect_fail(run(&st, 2, in), -EINVAL, "Clip's min is float32, unlike its input (float16)");
	st.clip_attrs = true;
	in[0] = T(NPU_DTYPE_INT8, d3, x8);
	expect_fail(run(&st, 1, in), -EINVAL, "Clip takes float types before opset 11, not int8");
}

/* ---- Cast --------------------------------------------------------------------- */

static void test_cast_float_to_int(void **unused)
{
	/* truncation toward zero, saturation at the range, NaN as 0 */
	static const float x[] = { 1.9f, -1.9f, 3e9f, -3e9f, NAN, INFINITY, -INFINITY };
	static const int32_t want32[] = { 1, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN };
	static const uint8_t want8[] = { 1, 0, 255, 0, 0, 255, 0 };
	static const int64_t want64[] = { 1, -1, 3000000000, -3000000000, 0, INT64_MAX,
					  INT64_MIN };
	static const uint64_t wantu64[] = { 1, 0, 3000000000, 0, 0, UINT64_MAX, 0 };
	static const uint8_t wantb[] = { 1, 1, 1, 1, 1, 1, 1 };
	uint32_t d7[] = { 7 };
	struct ok_math_state st = { .op = OKM_CAST, .to = NPU_DTYPE_INT32 };
	struct npu_kernel_tensor *in[1] = { T(NPU_DTYPE_FP32, d7, x) };

	(void)unused;
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT32);
	assert_memory_equal(y.data, want32, sizeof(want32));
	st.to = NPU_DTYPE_UINT8;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, want8, sizeof(want8));
	st.to = NPU_DTYPE_INT64;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, want64, sizeof(want64));
	st.to = NPU_DTYPE_UINT64;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantu64, sizeof(wantu64));
	st.to = NPU_DTYPE_BOOL;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantb, sizeof(wantb));
}

static void test_cast_other(void **unused)
{
	/* integers wrap; 2^53 + 1 rounds once, straight to float32 */
	static const int64_t xi[] = { 300, -1, 0, 9007199254740993 };
	static const int8_t want8[] = { 44, -1, 0, 1 };
	static const uint16_t wantu16[] = { 300, 65535, 0, 1 };
	static const uint8_t wantb[] = { 1, 1, 0, 1 };
	static const float wantf[] = { 300, -1, 0, 9007199254740992.0f };
	static const uint64_t big[] = { UINT64_MAX };
	/* float32 to float16: 65504 is the largest, 1/3 rounds to 0x3555, 1e5 is +inf */
	static const float xf[] = { 65504, 1.0f / 3, 1e5f, -0.0f };
	static const uint16_t wanth[] = { 0x7bff, 0x3555, 0x7c00, 0x8000 };
	static const uint16_t wantbf[] = { 0x4780, 0x3eab, 0x47c3, 0x8000 };
	static const uint8_t xb[] = { 1, 0 };
	static const double wantd[] = { 1, 0 };
	uint32_t d4[] = { 4 }, d1[] = { 1 }, d2[] = { 2 };
	struct ok_math_state st = { .op = OKM_CAST, .to = NPU_DTYPE_INT8 };
	struct npu_kernel_tensor *in[2] = { T(NPU_DTYPE_INT64, d4, xi), NULL };

	(void)unused;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, want8, sizeof(want8));
	st.to = NPU_DTYPE_UINT16;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantu16, sizeof(wantu16));
	st.to = NPU_DTYPE_BOOL;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantb, sizeof(wantb));
	st.to = NPU_DTYPE_FP32;
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32(wantf, 4, 0);
	st.to = NPU_DTYPE_INT32;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, ((int32_t[]){ 300, -1, 0, 1 }), 16);
	st.to = NPU_DTYPE_FP64;
	in[0] = T(NPU_DTYPE_UINT64, d1, big);
	assert_int_equal(run(&st, 1, in), 0);
	assert_true(((double *)y.data)[0] == 18446744073709551616.0);
	st.to = NPU_DTYPE_FP16;
	in[0] = T(NPU_DTYPE_FP32, d4, xf);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wanth, sizeof(wanth));
	st.to = NPU_DTYPE_BF16;
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantbf, sizeof(wantbf));
	/* and back, exactly */
	st.to = NPU_DTYPE_FP32;
	in[0] = T(NPU_DTYPE_FP16, d4, wanth);
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32((const float[]){ 65504, 0.333251953125f, INFINITY, -0.0f }, 4, 0);
	in[0] = T(NPU_DTYPE_BF16, d4, wantbf);
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32((const float[]){ 65536, 0.333984375f, 99840, -0.0f }, 4, 0);
	st.to = NPU_DTYPE_FP64;
	in[0] = T(NPU_DTYPE_BOOL, d2, xb);
	assert_int_equal(run(&st, 1, in), 0);
	assert_memory_equal(y.data, wantd, sizeof(wantd));
	st.to = NPU_DTYPE_FP32;
	assert_int_equal(run(&st, 1, in), 0);
	expect_f32((const float[]){ 1, 0 }, 2, 0);
	/* CastLike takes the second input's dtype; Identity copies */
	st.op = OKM_CASTLIKE;
	in[1] = S(NPU_DTYPE_INT32, xi);
	assert_int_equal(run(&st, 2, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT32);
	assert_memory_equal(y.data, ((int32_t[]){ 1, 0 }), 8);
	expect_fail(run(&st, 1, in), -EINVAL, "CastLike takes 2 inputs, not 1");
	st.op = OKM_IDENTITY;
	in[0] = T(NPU_DTYPE_INT64, d4, xi);
	assert_int_equal(run(&st, 1, in), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT64);
	assert_memory_equal(y.data, xi, sizeof(xi));
}

static void test_onnx_dtypes(void **unused)
{
	enum npu_dtype dt;

	(void)unused;
	assert_true(ok_math_onnx_dtype(1, &dt) && dt == NPU_DTYPE_FP32);
	assert_true(ok_math_onnx_dtype(7, &dt) && dt == NPU_DTYPE_INT64);
	assert_true(ok_math_onnx_dtype(9, &dt) && dt == NPU_DTYPE_BOOL);
	assert_true(ok_math_onnx_dtype(10, &dt) && dt == NPU_DTYPE_FP16);
	assert_true(ok_math_onnx_dtype(16, &dt) && dt == NPU_DTYPE_BF16);
	assert_true(ok_math_onnx_dtype(13, &dt) && dt == NPU_DTYPE_UINT64);
	assert_false(ok_math_onnx_dtype(8, &dt));	/* string */
	assert_false(ok_math_onnx_dtype(0, &dt));
}

/* ---- create(), through the importer ----------------------------------------- */

/* ONNX TensorProto types */
enum { T_FLOAT = 1, T_UINT8 = 2, T_INT64 = 7, T_BOOL = 9, T_DOUBLE = 11 };

/* Inputs "x" (and "y" if @two) of ONNX type @elem and shape [n]; output "z". */
static void model(struct mb *b, int64_t opset, int elem, int two, int out_elem, int64_t n)
{
	mb_init(b, opset);
	b->ins[b->g.n_input++] = vinfo(b, "x", elem, 1, &n);
	if (two)
		b->ins[b->g.n_input++] = vinfo(b, "y", elem, 1, &n);
	b->outs[b->g.n_output++] = vinfo(b, "z", out_elem, 0, NULL);
}

/*
 * Import @b, compile it for the CPU and run it on @x (and @y); the output
 * into @z.  The node must have run as the math family's kernel @op.
 */
static void import_run(struct mb *b, const char *op, const void *x, const void *y2,
		       void *z, size_t zbytes)
{
	struct npu_onnx_model *m = load(b, NULL, 0, NULL);
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
	struct npu_onnx_io io;
	struct npu_runtime *rt = NULL;
	uint32_t ids[3];
	void *ptrs[3];
	size_t n = 0, i;

	mb_free(b);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	for (i = 0; i < npu_onnx_num_inputs(m); i++) {
		assert_int_equal(npu_onnx_input(m, i, &io), 0);
		ids[n] = io.value;
		ptrs[n++] = (void *)(i ? y2 : x);
	}
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	ids[n] = io.value;
	ptrs[n++] = z;
	assert_int_equal(npu_runtime_value_bytes(rt, io.value), zbytes);
	assert_int_equal(npu_runtime_setup(rt, n, ids, ptrs), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_int_equal(npu_runtime_node_profile(rt, 0, &p), 0);
	assert_string_equal(p.op, op);
	assert_int_equal(p.where, NPU_WHERE_CPU);
	npu_runtime_free(rt);
	npu_onnx_free(m);
}

static void test_create_runs(void **unused)
{
	static const double x[] = { -2, -1, 0, 1, 2 };
	static const double shrink[] = { -0.5, 0, 0, 0, 0.5 };
	static const double clip[] = { -1.5, -1, 0, 1, 1.5 };
	static const float f[] = { -1.2f, NAN, INFINITY, 2.8f, -INFINITY };
	static const uint8_t pos_inf[] = { 0, 0, 1, 0, 0 };
	static const uint8_t u[] = { 16, 4, 1, 255, 2 }, sh[] = { 1, 2, 3, 1, 7 };
	static const uint8_t right[] = { 8, 1, 0, 127, 0 };
	double zd[5];
	uint8_t zb[5];
	int64_t zi[5];
	struct mb b;

	(void)unused;
	model(&b, 17, T_DOUBLE, 0, T_DOUBLE, 5);
	nodef(&b, "Shrink", "s", "x", "z", "lambd=f:1.5", "bias=f:1.5", NULL);
	import_run(&b, "Shrink", x, NULL, zd, sizeof(zd));
	assert_memory_equal(zd, shrink, sizeof(zd));
	/* Clip before opset 11 reads min and max from attributes */
	model(&b, 6, T_DOUBLE, 0, T_DOUBLE, 5);
	nodef(&b, "Clip", "c", "x", "z", "min=f:-1.5", "max=f:1.5", NULL);
	import_run(&b, "Clip", x, NULL, zd, sizeof(zd));
	assert_memory_equal(zd, clip, sizeof(zd));
	model(&b, 17, T_FLOAT, 0, T_BOOL, 5);
	nodef(&b, "IsInf", "i", "x", "z", "detect_negative=i:0", NULL);
	import_run(&b, "IsInf", f, NULL, zb, sizeof(zb));
	assert_memory_equal(zb, pos_inf, sizeof(zb));
	model(&b, 17, T_FLOAT, 0, T_INT64, 5);
	nodef(&b, "Cast", "c", "x", "z", "to=i:7", NULL);
	import_run(&b, "Cast", f, NULL, zi, sizeof(zi));
	assert_int_equal(zi[0], -1);
	assert_int_equal(zi[1], 0);
	assert_int_equal(zi[2], INT64_MAX);
	assert_int_equal(zi[3], 2);
	assert_int_equal(zi[4], INT64_MIN);
	model(&b, 17, T_UINT8, 1, T_UINT8, 5);
	kt_attr_s(&b, nodef(&b, "BitShift", "bs", "x,y", "z", NULL), "direction", "RIGHT");
	import_run(&b, "BitShift", u, sh, zb, sizeof(zb));
	assert_memory_equal(zb, right, sizeof(zb));
}

static void test_create_refuses(void **unused)
{
	struct mb b;

	(void)unused;
	model(&b, 17, T_FLOAT, 0, T_FLOAT, 4);
	nodef(&b, "Celu", "c", "x", "z", "alpha=f:0", NULL);
	load(&b, NULL, -EINVAL, "node 'c' (Celu): Celu's alpha must not be 0");
	mb_free(&b);
	model(&b, 17, T_INT64, 1, T_INT64, 4);
	nodef(&b, "Mod", "m", "x,y", "z", "fmod=i:2", NULL);
	load(&b, NULL, -EINVAL, "Mod's fmod must be 0 or 1, not 2");
	mb_free(&b);
	model(&b, 17, T_FLOAT, 0, T_FLOAT, 4);
	nodef(&b, "Cast", "c", "x", "z", "to=i:8", NULL);
	load(&b, NULL, -EINVAL, "Cast to string (8) is not supported");
	mb_free(&b);
	model(&b, 17, T_FLOAT, 0, T_FLOAT, 4);
	nodef(&b, "Cast", "c", "x", "z", NULL);
	load(&b, NULL, -EINVAL, "Cast needs the integer attribute to");
	mb_free(&b);
	model(&b, 17, T_UINT8, 1, T_UINT8, 4);
	nodef(&b, "BitShift", "bs", "x,y", "z", NULL);
	load(&b, NULL, -EINVAL, "BitShift needs the attribute direction");
	mb_free(&b);
	model(&b, 17, T_UINT8, 1, T_UINT8, 4);
	kt_attr_s(&b, nodef(&b, "BitShift", "bs", "x,y", "z", NULL), "direction", "UP");
	load(&b, NULL, -EINVAL, "BitShift's direction must be \"LEFT\" or \"RIGHT\", not \"UP\"");
	mb_free(&b);
	model(&b, 17, T_FLOAT, 0, T_BOOL, 4);
	nodef(&b, "IsInf", "i", "x", "z", "detect_positive=i:3", NULL);
	load(&b, NULL, -EINVAL, "IsInf's detect_positive must be 0 or 1, not 3");
	mb_free(&b);
	/* infer's refusal names the node too */
	model(&b, 17, T_INT64, 0, T_INT64, 4);
	nodef(&b, "Sqrt", "q", "x", "z", NULL);
	load(&b, NULL, -EINVAL, "Sqrt takes float16, bfloat16, float32 or float64, not int64");
	mb_free(&b);
}

/* ---- Limits ------------------------------------------------------------------- */

static void test_cancel(void **unused)
{
	/* 2^20 elements: polled every few thousand, stopped at the second poll */
	uint32_t d[] = { 1024, 1024 }, row[] = { 1024 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct ok_math_state st = { .op = OKM_ADD };
	struct npu_kernel_tensor *in[3] = { T(NPU_DTYPE_FP32, d, NULL), T(NPU_DTYPE_FP32, row, NULL),
					    NULL };

	(void)unused;
	lim.cancel = kt_cancel_after_first;
	assert_int_equal(run_lim(&st, 2, in, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_polls = 0;
	st.op = OKM_EXP;
	assert_int_equal(run_lim(&st, 1, in, &lim), -ECANCELED);
	kt_polls = 0;
	st.op = OKM_CAST;
	st.to = NPU_DTYPE_INT64;
	assert_int_equal(run_lim(&st, 1, in, &lim), -ECANCELED);
	kt_polls = 0;
	st.op = OKM_CLIP;
	assert_int_equal(run_lim(&st, 1, in, &lim), -ECANCELED);
	kt_polls = 0;
	st.op = OKM_WHERE;
	in[2] = in[0];
	in[0] = T(NPU_DTYPE_BOOL, d, NULL);
	assert_int_equal(run_lim(&st, 3, in, &lim), -ECANCELED);
	kt_polls = 0;
	st.op = OKM_MEAN;
	assert_int_equal(run_lim(&st, 2, in + 1, &lim), -ECANCELED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_unary_float, free_y),
		cmocka_unit_test_teardown(test_trig, free_y),
		cmocka_unit_test_teardown(test_activations, free_y),
		cmocka_unit_test_teardown(test_unary_other_floats, free_y),
		cmocka_unit_test_teardown(test_predicates, free_y),
		cmocka_unit_test_teardown(test_unary_int, free_y),
		cmocka_unit_test_teardown(test_unary_errors, free_y),
		cmocka_unit_test_teardown(test_broadcast_shapes, free_y),
		cmocka_unit_test_teardown(test_arith_float, free_y),
		cmocka_unit_test_teardown(test_arith_int, free_y),
		cmocka_unit_test_teardown(test_division_errors, free_y),
		cmocka_unit_test_teardown(test_mod, free_y),
		cmocka_unit_test_teardown(test_pow_types, free_y),
		cmocka_unit_test_teardown(test_variadic, free_y),
		cmocka_unit_test_teardown(test_compare_logic, free_y),
		cmocka_unit_test_teardown(test_bits, free_y),
		cmocka_unit_test_teardown(test_prelu, free_y),
		cmocka_unit_test_teardown(test_binary_errors, free_y),
		cmocka_unit_test_teardown(test_where, free_y),
		cmocka_unit_test_teardown(test_clip, free_y),
		cmocka_unit_test_teardown(test_cast_float_to_int, free_y),
		cmocka_unit_test_teardown(test_cast_other, free_y),
		cmocka_unit_test_teardown(test_onnx_dtypes, free_y),
		cmocka_unit_test_teardown(test_cancel, free_y),
		cmocka_unit_test_teardown(test_create_runs, free_y),
		cmocka_unit_test_teardown(test_create_refuses, free_y),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
