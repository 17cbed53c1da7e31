// SPDX-License-Identifier: MIT
/*
 * The reduce family of the ONNX CPU kernels (libnpu/onnx/kernels/
 * ok_reduce*.c) run directly through npu_kernel_run(): each op on small
 * cases whose results are worked out by hand from the ONNX operator
 * spec's examples and definitions, every refusal of infer and run with
 * its message, and the CPU limits (work count, cancellation through the
 * kernels' polls).
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

#include "npu/kernel.h"
#include "npu/npu.h"
#include "npu/onnx.h"
#include "onnx.pb-c.h"
#include "onnx-ktest.h"
#include "kernels/ok_reduce.h"

/* @nout outputs, all present unless listed in @absent (a bit mask). */
static void want_out(struct kt_call *c, size_t nout, unsigned absent)
{
	size_t o;

	c->nout = nout;
	for (o = 0; o < nout; o++)
		c->outp[o] = absent & (1u << o) ? NULL : &c->out[o];
}

static void expect_i64(const struct npu_kernel_tensor *t, const int64_t *want, size_t n)
{
	assert_int_equal(t->dtype, NPU_DTYPE_INT64);
	assert_int_equal(t->elems, n);
	assert_memory_equal(t->data, want, n * sizeof(*want));
}

static const struct npu_kernel *red(enum ok_reduce_kind k)
{
	return &ok_reduce_kernels[k];
}

/* ---- Reduce* --------------------------------------------------------------------- */

/* The spec's ReduceSum example: [3, 2, 2] over axis 1, kept. */
static void test_reduce_sum_keepdims(void **unused)
{
	static const float x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	static const double want[] = { 4, 6, 12, 14, 20, 22 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM, .keepdims = true, .num_axes = 1,
				     .axes = { 1 } };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 1, 2 });
	kt_expect_f(&c.out[0], want, 6, 0);
	kt_call_done(&c);

	/* negative axes, dropped: [3, 2] */
	s.keepdims = false;
	s.axes[0] = -2;
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	kt_expect_f(&c.out[0], want, 6, 0);
	kt_call_done(&c);
}

/* Opset 13+ axes input: empty means all, or nothing with noop_with_empty_axes. */
static void test_reduce_axes_input(void **unused)
{
	static const float x[] = { 1, 2, 3, 4, 5, 6 };
	static const int64_t axes[] = { 0 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM, .keepdims = true, .axes_input = true };
	struct kt_call c = { 0 };
	double all = 21;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	want_out(&c, 1, 0);
	/* no axes input: every axis */
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, 1 });
	kt_expect_f(&c.out[0], &all, 1, 0);
	kt_call_done(&c);

	/* no axes (kernel tensors are never empty) with noop: the input itself */
	s.noop_with_empty_axes = true;
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	kt_expect_f(&c.out[0], (const double[]){ 1, 2, 3, 4, 5, 6 }, 6, 0);
	kt_call_done(&c);

	/* the input unchanged: ReduceSumSquare does not square, as onnxruntime's */
	s.kind = OK_REDUCE_SUM_SQUARE;
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM_SQUARE), &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 1, 2, 3, 4, 5, 6 }, 6, 0);
	kt_call_done(&c);

	/* a scalar reduced over all (no) axes without noop is still squared */
	s.noop_with_empty_axes = false;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 0, NULL, &x[2]);
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM_SQUARE), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	kt_expect_f(&c.out[0], (const double[]){ 9 }, 1, 0);
	kt_call_done(&c);
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);

	/* axes [0], dropped: [3] */
	s.kind = OK_REDUCE_SUM;
	s.keepdims = false;
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, axes);
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 });
	kt_expect_f(&c.out[0], (const double[]){ 5, 7, 9 }, 3, 0);
	kt_call_done(&c);

	/* an axes input that is not a constant */
	c.in[1].data = NULL;
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_SUM), &s, &c), &c, "axes must be a constant");
}

/* Every reduction over axis 1 of [[1, 2], [3, 4]], and over all of it. */
static void test_reduce_kinds(void **unused)
{
	static const float x[] = { 1, 2, 3, 4 };
	static const struct {
		enum ok_reduce_kind kind;
		double row[2], all;
	} cases[] = {
		{ OK_REDUCE_SUM, { 3, 7 }, 10 },
		{ OK_REDUCE_MEAN, { 1.5, 3.5 }, 2.5 },
		{ OK_REDUCE_MAX, { 2, 4 }, 4 },
		{ OK_REDUCE_MIN, { 1, 3 }, 1 },
		{ OK_REDUCE_PROD, { 2, 12 }, 24 },
		{ OK_REDUCE_L1, { 3, 7 }, 10 },
		{ OK_REDUCE_L2, { 2.2360679775, 5 }, 5.4772255751 },
		{ OK_REDUCE_LOG_SUM, { 1.0986122887, 1.9459101091 }, 2.302585093 },
		{ OK_REDUCE_LOG_SUM_EXP, { 2.3132616875, 4.3132616875 }, 4.4401896985 },
		{ OK_REDUCE_SUM_SQUARE, { 5, 25 }, 30 },
	};
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ok_reduce_state s = { .kind = cases[i].kind, .num_axes = 1, .axes = { 1 } };
		struct kt_call c = { 0 };

		kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
		want_out(&c, 1, 0);
		assert_int_equal(kt_call_run(red(s.kind), &s, &c), 0);
		kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 });
		kt_expect_f(&c.out[0], cases[i].row, 2, 1e-6);
		kt_call_done(&c);
		/* no axes: all of them, to a scalar */
		s.num_axes = 0;
		assert_int_equal(kt_call_run(red(s.kind), &s, &c), 0);
		kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
		kt_expect_f(&c.out[0], &cases[i].all, 1, 1e-6);
		kt_call_done(&c);
	}
}

/* Integers add as integers: an int64 sum beyond 2^53 stays exact, means truncate. */
static void test_reduce_integers(void **unused)
{
	static const int64_t big[] = { INT64_C(4611686018427387904), 1, 2 };
	static const int32_t small[] = { 1, 2, 3, 5, -7, -2 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM };
	struct kt_call c = { 0 };
	int64_t want = INT64_C(4611686018427387907);

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_INT64, 1, (uint32_t[]){ 3 }, big);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_i64(&c.out[0], &want, 1);
	kt_call_done(&c);

	/* [[1, 2, 3], [5, -7, -2]]: means 2 and -4/3 -> -1 */
	s.kind = OK_REDUCE_MEAN;
	s.num_axes = 1;
	s.axes[0] = 1;
	kt_call_in(&c, 0, NPU_DTYPE_INT32, 2, (uint32_t[]){ 2, 3 }, small);
	assert_int_equal(kt_call_run(red(OK_REDUCE_MEAN), &s, &c), 0);
	assert_int_equal(c.out[0].dtype, NPU_DTYPE_INT32);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 2);
	assert_int_equal(((int32_t *)c.out[0].data)[1], -1);
	kt_call_done(&c);

	s.kind = OK_REDUCE_MIN;
	assert_int_equal(kt_call_run(red(OK_REDUCE_MIN), &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 1);
	assert_int_equal(((int32_t *)c.out[0].data)[1], -7);
	kt_call_done(&c);

	s.kind = OK_REDUCE_L1;
	assert_int_equal(kt_call_run(red(OK_REDUCE_L1), &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[1], 14);
	kt_call_done(&c);
}

static void test_reduce_errors(void **unused)
{
	static const float x[] = { 1, 2, 3, 4 };
	static const uint8_t b[] = { 1, 0 };
	static const int64_t axes[] = { 0 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_MAX, .num_axes = 1, .axes = { 2 } };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	want_out(&c, 1, 0);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_MAX), &s, &c), &c, "axis 2 is out of range [-2, 2)");
	s.num_axes = 2;
	s.axes[0] = 1;
	s.axes[1] = -1;
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_MAX), &s, &c), &c, "axis -1 is listed twice");
	/* before its opset takes axes as an input */
	s.num_axes = 0;
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, axes);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_MAX), &s, &c), &c, "takes axes as an attribute");
	c.nin = 1;
	kt_call_in(&c, 0, NPU_DTYPE_BOOL, 1, (uint32_t[]){ 2 }, b);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_MAX), &s, &c), &c, "not bool");
	/* float axes */
	s.axes_input = true;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, x);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_MAX), &s, &c), &c, "axes must be integers, not float32");
}

/* ---- ArgMax, ArgMin, TopK ----------------------------------------------------------- */

static void test_argmax_argmin(void **unused)
{
	/* the spec's example [[2, 1], [3, 10]], and a tie [[2, 2], [3, 10]] */
	static const float x[] = { 2, 1, 3, 10 }, tie[] = { 2, 2, 3, 10 };
	struct ok_arg_state s = { .is_max = true, .keepdims = true, .axis = 0 };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_argmax_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT64, 2, (uint32_t[]){ 1, 2 });
	expect_i64(&c.out[0], (const int64_t[]){ 1, 1 }, 2);
	kt_call_done(&c);

	s.axis = -1;
	s.keepdims = false;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, tie);
	assert_int_equal(kt_call_run(&ok_argmax_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 });
	expect_i64(&c.out[0], (const int64_t[]){ 0, 1 }, 2);
	kt_call_done(&c);
	s.select_last_index = true;
	assert_int_equal(kt_call_run(&ok_argmax_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1, 1 }, 2);
	kt_call_done(&c);

	s.is_max = false;
	assert_int_equal(kt_call_run(&ok_argmin_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1, 0 }, 2);
	kt_call_done(&c);

	s.axis = 2;
	kt_call_expect_err(kt_call_infer(&ok_argmin_kernel, &s, &c), &c, "axis 2 is out of range [-2, 2)");
}

static void test_argmax_int64(void **unused)
{
	/* differ below double precision */
	static const int64_t x[] = { INT64_C(9007199254740993), INT64_C(9007199254740992) };
	struct ok_arg_state s = { .is_max = true };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_argmax_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 0 }, 1);
	kt_call_done(&c);
	s.is_max = false;
	assert_int_equal(kt_call_run(&ok_argmin_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1 }, 1);
	kt_call_done(&c);
}

static void test_topk(void **unused)
{
	static const float x[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	static const int32_t ties[] = { 3, 1, 3, 1 };
	static const int64_t k3 = 3, k2 = 2, k5 = 5, kneg = -1;
	struct ok_topk_state s = { .k_input = true, .largest = true, .sorted = true, .axis = 1 };
	struct kt_call c = { 0 };

	(void)unused;
	/* the spec's example: [3, 4], k 3 along axis 1 */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 4 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k3);
	want_out(&c, 2, 0);
	assert_int_equal(kt_call_run(&ok_topk_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 3 });
	kt_expect_shape(&c.out[1], NPU_DTYPE_INT64, 2, (uint32_t[]){ 3, 3 });
	kt_expect_f(&c.out[0], (const double[]){ 3, 2, 1, 7, 6, 5, 11, 10, 9 }, 9, 0);
	expect_i64(&c.out[1], (const int64_t[]){ 3, 2, 1, 3, 2, 1, 3, 2, 1 }, 9);
	kt_call_done(&c);

	/* along axis 0, the smallest, opset 1's attribute k */
	s.k_input = false;
	s.k = 2;
	s.axis = 0;
	s.largest = false;
	c.nin = 1;
	assert_int_equal(kt_call_run(&ok_topk_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8, 0);
	expect_i64(&c.out[1], (const int64_t[]){ 0, 0, 0, 0, 1, 1, 1, 1 }, 8);
	kt_call_done(&c);

	/* ties: the lower index first, either way; values only */
	s.k_input = true;
	s.axis = -1;
	kt_call_in(&c, 0, NPU_DTYPE_INT32, 1, (uint32_t[]){ 4 }, ties);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k2);
	assert_int_equal(kt_call_run(&ok_topk_kernel, &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 1);
	expect_i64(&c.out[1], (const int64_t[]){ 1, 3 }, 2);
	kt_call_done(&c);
	s.largest = true;
	want_out(&c, 2, 1u << 0);
	assert_int_equal(kt_call_run(&ok_topk_kernel, &s, &c), 0);
	expect_i64(&c.out[1], (const int64_t[]){ 0, 2 }, 2);
	kt_call_done(&c);

	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k5);
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &s, &c), &c, "k (5) is above the axis' length 4");
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &kneg);
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &s, &c), &c, "k (-1) is negative");
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, NULL);
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &s, &c), &c, "K must be a constant");
	kt_call_in(&c, 1, NPU_DTYPE_INT32, 1, (uint32_t[]){ 1 }, ties);
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &s, &c), &c, "K must be int64, not int32");
}

/* ---- Softmax, LogSoftmax, Hardmax ---------------------------------------------------- */

static void test_softmax_axis_forms(void **unused)
{
	static const float x[] = { 1, 2, 3, 4 };
	/* e^-1 / (1 + e^-1) and friends */
	static const double pair[] = { 0.2689414214, 0.7310585786, 0.2689414214, 0.7310585786 };
	static const double four[] = { 0.0320586033, 0.0871443187, 0.2368828181, 0.6439142599 };
	struct ok_softmax_state s13 = { .axis = -1 }, s11 = { .flatten = true, .axis = 1 };
	struct kt_call c = { 0 };
	double logs[4];
	size_t i;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, x);
	want_out(&c, 1, 0);
	/* opset 13: along the last axis alone */
	assert_int_equal(kt_call_run(&ok_softmax_kernel, &s13, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 });
	kt_expect_f(&c.out[0], pair, 4, 1e-6);
	kt_call_done(&c);
	/* before 13: the input coerced to [1, 4] at axis 1 */
	assert_int_equal(kt_call_run(&ok_softmax_kernel, &s11, &c), 0);
	kt_expect_f(&c.out[0], four, 4, 1e-6);
	kt_call_done(&c);
	for (i = 0; i < 4; i++)
		logs[i] = log(four[i]);
	assert_int_equal(kt_call_run(&ok_logsoftmax_kernel, &s11, &c), 0);
	kt_expect_f(&c.out[0], logs, 4, 1e-6);
	kt_call_done(&c);
	/* the coerced form takes axis == rank */
	s11.axis = 3;
	assert_int_equal(kt_call_infer(&ok_softmax_kernel, &s11, &c), 0);
	s11.axis = 4;
	kt_call_expect_err(kt_call_infer(&ok_softmax_kernel, &s11, &c), &c, "axis 4 is out of range [-3, 3]");
	s13.axis = 3;
	kt_call_expect_err(kt_call_infer(&ok_softmax_kernel, &s13, &c), &c, "axis 3 is out of range [-3, 3)");
	kt_call_in(&c, 0, NPU_DTYPE_INT32, 1, (uint32_t[]){ 1 }, x);
	kt_call_expect_err(kt_call_infer(&ok_softmax_kernel, &s11, &c), &c, "not int32");
}

/* No overflow for large inputs, in float64 too; fp16 rounds its results. */
static void test_softmax_stable(void **unused)
{
	static const double big[] = { 1000, 1000, 999 };
	static const uint16_t h[] = { 0x3c00, 0x3c00 };	/* 1.0, 1.0 */
	struct ok_softmax_state s = { .axis = -1 };
	struct kt_call c = { 0 };
	double e = exp(-1), want[3] = { 1 / (2 + e), 1 / (2 + e), e / (2 + e) };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP64, 1, (uint32_t[]){ 3 }, big);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_softmax_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], want, 3, 1e-12);
	kt_call_done(&c);
	kt_call_in(&c, 0, NPU_DTYPE_FP16, 1, (uint32_t[]){ 2 }, h);
	assert_int_equal(kt_call_run(&ok_softmax_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0.5, 0.5 }, 2, 0);
	kt_call_done(&c);
}

static void test_hardmax(void **unused)
{
	static const float x[] = { 1, 3, 3, 0, 5, -1 };
	struct ok_softmax_state s = { .axis = -1 };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	want_out(&c, 1, 0);
	/* the first of equal maxima */
	assert_int_equal(kt_call_run(&ok_hardmax_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0, 1, 0, 0, 1, 0 }, 6, 0);
	kt_call_done(&c);
	/* before opset 13 at axis 0: one row of six */
	s.flatten = true;
	s.axis = 0;
	assert_int_equal(kt_call_run(&ok_hardmax_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0, 0, 0, 0, 1, 0 }, 6, 0);
	kt_call_done(&c);
}

/* ---- Normalizations ----------------------------------------------------------------- */

static void test_layernorm(void **unused)
{
	static const float x[] = { 1, 2, 3, 2, 4, 6 }, scale[] = { 2, 2, 2 }, bias[] = { 1, 0, 1 };
	/* [1, 2, 3]: mean 2, variance 2/3: (x - 2) * sqrt(3/2); [2, 4, 6] the same */
	const double r = sqrt(1.5);
	const double want[] = { -2 * r + 1, 0, 2 * r + 1, -2 * r + 1, 0, 2 * r + 1 };
	struct ok_norm_state s = { .axis = -1, .epsilon = 0 };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, scale);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, bias);
	want_out(&c, 3, 0);
	assert_int_equal(kt_call_run(&ok_layernorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], want, 6, 1e-6);
	kt_expect_shape(&c.out[1], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 1 });
	kt_expect_f(&c.out[1], (const double[]){ 2, 4 }, 2, 1e-6);
	kt_expect_f(&c.out[2], (const double[]){ r, r / 2 }, 2, 1e-6);
	kt_call_done(&c);

	/* axis 0: the whole tensor, Scale broadcast from [1] */
	s.axis = 0;
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, scale);
	c.nin = 2;
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_layernorm_kernel, &s, &c), 0);
	kt_call_done(&c);

	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, scale);
	kt_call_expect_err(kt_call_infer(&ok_layernorm_kernel, &s, &c), &c, "does not broadcast to 3");
	c.nin = 1;
	kt_call_expect_err(kt_call_infer(&ok_layernorm_kernel, &s, &c), &c, "the Scale input is missing");
}

static void test_instance_group_norm(void **unused)
{
	static const float x[] = { 1, 3, 10, 20 }, two[] = { 2, 2 }, one[] = { 1, 1 };
	static const float zero[] = { 0, 0 };
	struct ok_norm_state s = { .epsilon = 0, .num_groups = 2 };
	struct kt_call c = { 0 };

	(void)unused;
	/* [1, 2, 2]: each channel's [a, b] becomes [-1, 1], then * 2 + 1 */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, two);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, one);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_instancenorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ -1, 3, -1, 3 }, 4, 1e-6);
	kt_call_done(&c);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, two);
	kt_call_expect_err(kt_call_infer(&ok_instancenorm_kernel, &s, &c), &c, "scale must be 1-D of 2 values");

	/* [1, 4, 1]: two groups of two channels */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 4, 1 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, one);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, zero);
	assert_int_equal(kt_call_run(&ok_groupnorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ -1, 1, -1, 1 }, 4, 1e-6);
	kt_call_done(&c);
	s.num_groups = 3;
	kt_call_expect_err(kt_call_infer(&ok_groupnorm_kernel, &s, &c), &c, "num_groups (3) must divide the 4");
}

static void test_lpnorm_mvn_lrn(void **unused)
{
	static const float v[] = { 3, 4, 1, 3 }, ch[] = { 1, 2, 3 };
	struct ok_norm_state s = { .axis = -1, .p = 2, .num_axes = 3, .axes = { 0, 2, 3 } };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, v);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_lpnorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0.6, 0.8, 0.316227766, 0.948683298 }, 4, 1e-6);
	kt_call_done(&c);
	s.p = 1;
	assert_int_equal(kt_call_run(&ok_lpnorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 3.0 / 7, 4.0 / 7, 0.25, 0.75 }, 4, 1e-6);
	kt_call_done(&c);
	s.p = 3;
	kt_call_expect_err(kt_call_infer(&ok_lpnorm_kernel, &s, &c), &c, "p must be 1 or 2, not 3");

	/* MVN over N, H, W of [1, 2, 1, 2]: channels [3, 4] and [1, 3] */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 1, 2 }, v);
	assert_int_equal(kt_call_run(&ok_mvn_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ -1, 1, -1, 1 }, 4, 1e-6);
	kt_call_done(&c);

	/* LRN of [1, 3, 1, 1] = [1, 2, 3], size 3, alpha/size 1, beta 1, bias 1 */
	s.size = 3;
	s.alpha = 3;
	s.beta = 1;
	s.bias = 1;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 3, 1, 1 }, ch);
	assert_int_equal(kt_call_run(&ok_lrn_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 1.0 / 6, 2.0 / 15, 3.0 / 14 }, 3, 1e-6);
	kt_call_done(&c);
	s.size = 0;
	kt_call_expect_err(kt_call_infer(&ok_lrn_kernel, &s, &c), &c, "size must be positive");
}

static void test_batchnorm(void **unused)
{
	/* [1, 2, 1, 2]: channel 0 holds [1, 2], channel 1 [3, 4] */
	static const float x[] = { 1, 2, 3, 4 }, scale[] = { 1, 2 }, bias[] = { 0, 1 };
	static const float mean[] = { 1, 3 }, var[] = { 4, 0.25f };
	struct ok_norm_state s = { .epsilon = 0, .momentum = 0.9f, .spatial = true };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 1, 2 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, scale);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, bias);
	kt_call_in(&c, 3, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, mean);
	kt_call_in(&c, 4, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, var);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_batchnorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ 0, 0.5, 1, 5 }, 4, 1e-6);
	kt_call_done(&c);

	/* training: the batch's statistics, means 1.5 and 3.5, variances 0.25 */
	s.training_mode = true;
	want_out(&c, 3, 0);
	assert_int_equal(kt_call_run(&ok_batchnorm_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], (const double[]){ -1, 1, -1, 3 }, 4, 1e-6);
	kt_expect_f(&c.out[1], (const double[]){ 1.05, 3.05 }, 2, 1e-6);
	kt_expect_f(&c.out[2], (const double[]){ 3.625, 0.25 }, 2, 1e-6);
	kt_call_done(&c);

	s.training_mode = false;
	kt_call_expect_err(kt_call_infer(&ok_batchnorm_kernel, &s, &c), &c, "training mode only");
	c.nin = 4;
	want_out(&c, 1, 0);
	kt_call_expect_err(kt_call_infer(&ok_batchnorm_kernel, &s, &c), &c, "the input_var input is missing");
}

/* ---- Losses ------------------------------------------------------------------------- */

static void test_nll(void **unused)
{
	static const float lp[] = { -1, -2, -3, -4, -5, -6 }, w[] = { 0.5f, 1, 2 };
	static const int64_t t[] = { 2, 0 }, bad[] = { 3, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_NONE };
	struct kt_call c = { 0 };
	const double sum = 7, mean = 3.5, wmean = 8 / 2.5, ignored = 4;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, lp);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 });
	kt_expect_f(&c.out[0], (const double[]){ 3, 4 }, 2, 0);
	kt_call_done(&c);
	s.reduction = OK_LOSS_SUM;
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	kt_expect_f(&c.out[0], &sum, 1, 0);
	kt_call_done(&c);
	s.reduction = OK_LOSS_MEAN;
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &mean, 1, 0);
	kt_call_done(&c);

	/* weights [0.5, 1, 2]: losses 6 and 2, mean over the weights 2.5 */
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, w);
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &wmean, 1, 1e-6);
	kt_call_done(&c);

	/* ignoring class 2: the mean is over the one target left, weighted or not */
	s.has_ignore_index = true;
	s.ignore_index = 2;
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &ignored, 1, 1e-6);
	kt_call_done(&c);
	c.nin = 2;
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &ignored, 1, 1e-6);
	kt_call_done(&c);

	/* a target out of range fails the run; ignore_index itself may be */
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, bad);
	kt_call_expect_err(kt_call_run(&ok_nll_kernel, &s, &c), &c,
		   "target 3 (element 0) is out of the classes' range [0, 3)");
	kt_call_done(&c);
	s.ignore_index = 3;
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &ignored, 1, 1e-6);
	kt_call_done(&c);

	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, lp);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &s, &c), &c, "target must be int32 or int64, not float32");
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 3 }, t);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &s, &c), &c, "target's dimension 0 is 3");
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, w);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &s, &c), &c, "weight must be [C] = [3]");
}

/* [N, C, d] = [1, 2, 2] with targets [N, d] = [[1, 0]] */
static void test_nll_nd(void **unused)
{
	static const double lp[] = { -1, -2, -3, -4 };
	static const int32_t t[] = { 1, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_NONE };
	struct kt_call c = { 0 };

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 2, 2 }, lp);
	kt_call_in(&c, 1, NPU_DTYPE_INT32, 2, (uint32_t[]){ 1, 2 }, t);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_nll_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP64, 2, (uint32_t[]){ 1, 2 });
	kt_expect_f(&c.out[0], (const double[]){ 3, 2 }, 2, 0);
	kt_call_done(&c);
}

static void test_sce(void **unused)
{
	/* rows [0, 0] and [0, ln 3]: log-softmax [-ln 2, -ln 2] and [-ln 4, ln 3 - ln 4] */
	const float x[] = { 0, 0, 0, (float)log(3) };
	static const int64_t t[] = { 1, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_MEAN };
	struct kt_call c = { 0 };
	const double l2 = log(2), l4 = log(4), mean = (l2 + l4) / 2;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	want_out(&c, 2, 0);
	assert_int_equal(kt_call_run(&ok_sce_kernel, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	kt_expect_f(&c.out[0], &mean, 1, 1e-6);
	kt_expect_shape(&c.out[1], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 });
	kt_expect_f(&c.out[1], (const double[]){ -l2, -l2, -l4, log(3) - l4 }, 4, 1e-6);
	kt_call_done(&c);

	/* ignoring target 0 leaves the first row alone in the mean */
	s.has_ignore_index = true;
	s.ignore_index = 0;
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_sce_kernel, &s, &c), 0);
	kt_expect_f(&c.out[0], &l2, 1, 1e-6);
	kt_call_done(&c);

	/* NLL has no second output */
	want_out(&c, 2, 0);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &s, &c), &c, "has one output");
}

/* ---- Det -------------------------------------------------------------------------------- */

static void test_det(void **unused)
{
	/* [[1, 2], [3, 4]], a swap, a singular matrix, and a 3x3 needing a pivot */
	static const float x[] = { 1, 2, 3, 4, 0, 1, 1, 0, 1, 2, 2, 4 };
	static const double m3[] = { 0, 2, 1, 1, 1, 1, 2, 0, 3 };
	struct kt_call c = { 0 };
	double want3 = -4;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(&ok_det_kernel, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 });
	kt_expect_f(&c.out[0], (const double[]){ -2, -1, 0 }, 3, 1e-6);
	kt_call_done(&c);
	/* 0*(3-0) - 2*(3-2) + 1*(0-2) = -4 */
	kt_call_in(&c, 0, NPU_DTYPE_FP64, 2, (uint32_t[]){ 3, 3 }, m3);
	assert_int_equal(kt_call_run(&ok_det_kernel, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP64, 0, NULL);
	kt_expect_f(&c.out[0], &want3, 1, 1e-12);
	kt_call_done(&c);
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	kt_call_expect_err(kt_call_infer(&ok_det_kernel, NULL, &c), &c, "the matrices are 2x3, not square");
}

/* The other refusals of infer, each with its reason. */
static void test_refusals(void **unused)
{
	static const float f[8] = { 0 };
	static const int64_t i64[4] = { 0 };
	static const uint8_t b[2] = { 0 };
	struct ok_reduce_state rs = { .kind = OK_REDUCE_SUM, .axes_input = true };
	struct ok_arg_state as = { .is_max = true };
	struct ok_topk_state ts = { .k_input = true, .axis = -1 };
	struct ok_norm_state ns = { .axis = -1, .num_groups = 1, .spatial = true, .num_axes = 2,
				    .axes = { 0, -2 } };
	struct ok_loss_state ls = { .reduction = OK_LOSS_MEAN };
	struct kt_call c = { 0 };

	(void)unused;
	want_out(&c, 1, 0);
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 1, 1 }, i64);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_SUM), &rs, &c), &c, "axes must be 1-D, not of rank 2");
	c.nin = 1;
	kt_call_in(&c, 0, NPU_DTYPE_UINT64, 1, (uint32_t[]){ 2 }, i64);
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_SUM), &rs, &c), &c, "not uint64");
	kt_call_in(&c, 0, NPU_DTYPE_BOOL, 1, (uint32_t[]){ 2 }, b);
	kt_call_expect_err(kt_call_infer(&ok_argmax_kernel, &as, &c), &c, "not bool");

	/* TopK's K of two values */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, f);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, i64);
	want_out(&c, 2, 0);
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &ts, &c), &c, "K must hold one value, not 2");
	c.nin = 1;
	kt_call_expect_err(kt_call_infer(&ok_topk_kernel, &ts, &c), &c, "the K input is missing");
	want_out(&c, 1, 0);

	kt_call_in(&c, 0, NPU_DTYPE_INT32, 2, (uint32_t[]){ 2, 2 }, f);
	kt_call_expect_err(kt_call_infer(&ok_layernorm_kernel, &ns, &c), &c, "X must be float16");
	kt_call_expect_err(kt_call_infer(&ok_lpnorm_kernel, &ns, &c), &c, "not int32");
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	kt_call_expect_err(kt_call_infer(&ok_instancenorm_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	kt_call_expect_err(kt_call_infer(&ok_groupnorm_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	kt_call_expect_err(kt_call_infer(&ok_lrn_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	kt_call_expect_err(kt_call_infer(&ok_det_kernel, NULL, &c), &c, "must be [*, M, M], not of rank 1");
	kt_call_expect_err(kt_call_infer(&ok_sce_kernel, &ls, &c), &c, "the scores must be [N, C, ...]");
	/* axes 0 and -2 of a 2-D input are the same */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	kt_call_expect_err(kt_call_infer(&ok_mvn_kernel, &ns, &c), &c, "axis -2 is listed twice");

	/* BatchNormalization's parameters hold one value per channel */
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, f);
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	kt_call_in(&c, 3, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, f);
	kt_call_in(&c, 4, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	kt_call_expect_err(kt_call_infer(&ok_batchnorm_kernel, &ns, &c), &c, "input_mean must hold 2 values, not 3");

	/* losses: the target's rank, the weight's dtype */
	c.nin = 0;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 1 }, i64);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &ls, &c), &c, "the target has rank 2, not the input's rank minus one (1)");
	kt_call_expect_err(kt_call_infer(&ok_sce_kernel, &ls, &c), &c, "not the scores' rank minus one (1)");
	kt_call_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, i64);
	kt_call_in(&c, 2, NPU_DTYPE_FP64, 1, (uint32_t[]){ 2 }, f);
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &ls, &c), &c, "the weight is float64, not float32");
	c.nin = 1;
	kt_call_expect_err(kt_call_infer(&ok_nll_kernel, &ls, &c), &c, "the target input is missing");

	/* a model may leave the first input or output name empty */
	c.inp[0] = NULL;
	kt_call_expect_err(kt_call_infer(&ok_softmax_kernel, &ns, &c), &c, "the first input is missing");
	c.nin = 0;
	kt_call_expect_err(kt_call_infer(&ok_det_kernel, NULL, &c), &c, "the first input is missing");
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	want_out(&c, 1, 1u << 0);
	kt_call_expect_err(kt_call_infer(&ok_layernorm_kernel, &ns, &c), &c, "the first output is missing");
	kt_call_expect_err(kt_call_infer(red(OK_REDUCE_SUM), &rs, &c), &c, "the first output is missing");
}

/* Float16 and integer inputs where onnxruntime takes them. */
static void test_dtypes(void **unused)
{
	/* 1.0, 2.0, -3.0, 0.5 */
	static const uint16_t h[] = { 0x3c00, 0x4000, 0xc200, 0x3800 };
	static const int8_t i8[] = { -5, 7, 7, -128 };
	static const uint8_t u8[] = { 200, 3, 255, 0 };
	struct ok_reduce_state rs = { .kind = OK_REDUCE_SUM };
	struct ok_arg_state as = { .is_max = true };
	struct kt_call c = { 0 };
	const double sum = 0.5;

	(void)unused;
	kt_call_in(&c, 0, NPU_DTYPE_FP16, 1, (uint32_t[]){ 4 }, h);
	want_out(&c, 1, 0);
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &rs, &c), 0);
	kt_expect_f(&c.out[0], &sum, 1, 0);
	kt_call_done(&c);

	kt_call_in(&c, 0, NPU_DTYPE_INT8, 1, (uint32_t[]){ 4 }, i8);
	assert_int_equal(kt_call_run(&ok_argmax_kernel, &as, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1 }, 1);
	kt_call_done(&c);
	as.is_max = false;
	assert_int_equal(kt_call_run(&ok_argmin_kernel, &as, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 3 }, 1);
	kt_call_done(&c);

	/* uint8 max and sum: the sum wraps in the output's 8 bits, as onnxruntime's */
	rs.kind = OK_REDUCE_MAX;
	kt_call_in(&c, 0, NPU_DTYPE_UINT8, 1, (uint32_t[]){ 4 }, u8);
	assert_int_equal(kt_call_run(red(OK_REDUCE_MAX), &rs, &c), 0);
	assert_int_equal(((uint8_t *)c.out[0].data)[0], 255);
	kt_call_done(&c);
	rs.kind = OK_REDUCE_SUM;
	assert_int_equal(kt_call_run(red(OK_REDUCE_SUM), &rs, &c), 0);
	assert_int_equal(((uint8_t *)c.out[0].data)[0], (458 & 0xff));
	kt_call_done(&c);
}

/* ---- Limits --------------------------------------------------------------------------------- */

/* A reduction over 2^20 elements: beyond a small max_work, and cancelled by its polls. */
static void test_limits(void **unused)
{
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM };
	struct ok_softmax_state sm = { .axis = -1 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct kt_call c = { 0 };
	float *x = calloc(1u << 20, sizeof(*x));

	(void)unused;
	assert_non_null(x);
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1024, 1024 }, x);
	want_out(&c, 1, 0);
	lim.max_work = 1000;
	assert_int_equal(kt_call_run_limits(red(OK_REDUCE_SUM), &s, &c, &lim), -E2BIG);
	kt_call_done(&c);
	lim.max_work = 0;
	lim.cancel = kt_cancel_now;
	assert_int_equal(kt_call_run_limits(red(OK_REDUCE_SUM), &s, &c, &lim), -ECANCELED);
	kt_call_done(&c);
	assert_int_equal(kt_call_run_limits(&ok_softmax_kernel, &sm, &c, &lim), -ECANCELED);
	kt_call_done(&c);
	free(x);
}

/* ---- create(): attributes and opsets through the importer ------------------------------ */

/* Hardmax's axis: before opset 13 a 2-D coercion at 1, from 13 the last axis alone. */
static void test_create_hardmax_opsets(void **unused)
{
	static const int64_t dims[] = { 1, 2, 3 };
	float x[] = { 1, 3, 3, 0, 5, -1 }, y[6];
	static const float v11[] = { 0, 0, 0, 0, 1, 0 }, v13[] = { 0, 1, 0, 0, 1, 0 };
	struct mb b;

	(void)unused;
	mb_init(&b, 11);
	input(&b, "x", 3, dims);
	nodef(&b, "Hardmax", "hm", "x", "y", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, dims);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, v11, sizeof(y));
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 3, dims);
	nodef(&b, "Hardmax", "hm", "x", "y", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, dims);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, v13, sizeof(y));
	mb_free(&b);
}

/* Axes: an attribute before opset 13 (ReduceSum) or 18 (the others), then an input. */
static void test_create_reduce_axes(void **unused)
{
	static const int64_t dims[] = { 2, 2 }, two[] = { 2 }, one[] = { 1 };
	float x[] = { 1, 2, 3, 4 }, y[2];
	int32_t xi[] = { 1, 2, 3, 4 }, yi[2];
	struct mb b;

	(void)unused;
	mb_init(&b, 11);
	input(&b, "x", 2, dims);
	nodef(&b, "ReduceProd", "rp", "x", "y", "axes=ints:1", "keepdims=i:0", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 1, two);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_true(y[0] == 2 && y[1] == 12);
	mb_free(&b);

	/* int32, which the device's reductions do not take */
	mb_init(&b, 13);
	b.ins[b.g.n_input++] = vinfo(&b, "x", 6, 2, dims);
	init_i64(&b, "axes", one, 1);
	nodef(&b, "ReduceSum", "rs", "x,axes", "y", "keepdims=i:0", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 6, 1, two);
	kt_run_model(&b, 1, (void *[]){ xi }, 1, (void *[]){ yi });
	assert_true(yi[0] == 3 && yi[1] == 7);
	mb_free(&b);
}

/* TopK's largest=0 and its K initializer; ArgMax's select_last_index. */
static void test_create_topk_argmax(void **unused)
{
	static const int64_t dims[] = { 4 }, two[] = { 2 }, k[] = { 2 }, one[] = { 1 };
	float x[] = { 3, 1, 3, 1 }, vals[2];
	int64_t idx[2], last;
	struct mb b;

	(void)unused;
	mb_init(&b, 11);
	input(&b, "x", 1, dims);
	init_i64(&b, "k", k, 1);
	nodef(&b, "TopK", "tk", "x,k", "v,i", "largest=i:0", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "v", 1, 1, two);
	b.outs[b.g.n_output++] = vinfo(&b, "i", 7, 1, two);
	kt_run_model(&b, 1, (void *[]){ x }, 2, (void *[]){ vals, idx });
	assert_true(vals[0] == 1 && vals[1] == 1);
	assert_true(idx[0] == 1 && idx[1] == 3);
	mb_free(&b);

	mb_init(&b, 12);
	input(&b, "x", 1, dims);
	nodef(&b, "ArgMax", "am", "x", "y", "select_last_index=i:1", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 7, 1, one);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ &last });
	assert_int_equal(last, 2);
	mb_free(&b);
}

/* SoftmaxCrossEntropyLoss's reduction string and ignore_index; bad attributes. */
static void test_create_loss(void **unused)
{
	static const int64_t xd[] = { 2, 2 }, td[] = { 2 };
	const float x[] = { 0, 0, 0, (float)log(3) };
	int64_t t[] = { 1, 0 };
	float loss;
	Onnx__NodeProto *n;
	struct mb b;

	(void)unused;
	mb_init(&b, 13);
	input(&b, "x", 2, xd);
	b.ins[b.g.n_input++] = vinfo(&b, "t", 7, 1, td);
	n = nodef(&b, "SoftmaxCrossEntropyLoss", "sce", "x,t", "loss", "ignore_index=i:0", NULL);
	kt_attr_string(&b, n, "reduction", "sum");
	b.outs[b.g.n_output++] = vinfo(&b, "loss", 1, 0, NULL);
	kt_run_model(&b, 2, (void *[]){ (void *)x, t }, 1, (void *[]){ &loss });
	/* the second row's target is ignored: the sum is the first row's ln 2 */
	assert_true(fabs(loss - log(2)) < 1e-6);
	n->attribute[1]->s.data = (uint8_t *)"avg";
	n->attribute[1]->s.len = 3;
	load(&b, NULL, -EINVAL, "reduction must be none, sum or mean, not \"avg\"");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 2, xd);
	nodef(&b, "LRN", "lrn", "x", "y", NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "the size attribute is missing");
	mb_free(&b);

	mb_init(&b, 11);
	input(&b, "x", 2, xd);
	nodef(&b, "ReduceProd", "rp", "x", "y", "axes=ints:0,1,2,3,4,5,6", NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "axes has 7 values, at most 6 are possible");
	mb_free(&b);

	mb_init(&b, 9);
	input(&b, "x", 2, xd);
	nodef(&b, "TopK", "tk", "x", "v,i", NULL);
	output(&b, "v");
	load(&b, NULL, -EINVAL, "the k attribute is missing");
	mb_free(&b);
}

/*
 * One row of 2^20 elements stops at the first poll inside it, before the
 * row's outputs are written: the first poll is npu_kernel_run()'s own,
 * before the kernel starts.
 */
static void test_poll_inside_row(void **unused)
{
	struct ok_softmax_state sm = { .axis = -1 };
	struct ok_norm_state ln = { .axis = -1 };
	struct ok_arg_state am = { .is_max = true, .axis = -1 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	static const float one = 1;
	const uint32_t n = 1u << 20;
	struct kt_call c = { 0 };
	float *x = calloc(n, sizeof(*x));

	(void)unused;
	assert_non_null(x);
	lim.cancel = kt_cancel_after_first;
	kt_call_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, n }, x);
	want_out(&c, 1, 0);
	kt_polls = 0;
	assert_int_equal(kt_call_run_limits(&ok_softmax_kernel, &sm, &c, &lim), -ECANCELED);
	assert_true(((float *)c.out[0].data)[n - 1] == 0);
	kt_call_done(&c);

	/* a bias of 1 would show in every output written */
	kt_call_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, &one);
	kt_call_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, &one);
	kt_polls = 0;
	assert_int_equal(kt_call_run_limits(&ok_layernorm_kernel, &ln, &c, &lim), -ECANCELED);
	assert_true(((float *)c.out[0].data)[n - 1] == 0);
	kt_call_done(&c);

	c.nin = 1;
	x[n - 1] = 1;
	kt_polls = 0;
	assert_int_equal(kt_call_run_limits(&ok_argmax_kernel, &am, &c, &lim), -ECANCELED);
	/* stopped before it saw the maximum at the row's end */
	assert_true(((int64_t *)c.out[0].data)[0] == 0);
	kt_call_done(&c);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_sum_keepdims),
		cmocka_unit_test(test_reduce_axes_input),
		cmocka_unit_test(test_reduce_kinds),
		cmocka_unit_test(test_reduce_integers),
		cmocka_unit_test(test_reduce_errors),
		cmocka_unit_test(test_argmax_argmin),
		cmocka_unit_test(test_argmax_int64),
		cmocka_unit_test(test_topk),
		cmocka_unit_test(test_softmax_axis_forms),
		cmocka_unit_test(test_softmax_stable),
		cmocka_unit_test(test_hardmax),
		cmocka_unit_test(test_layernorm),
		cmocka_unit_test(test_instance_group_norm),
		cmocka_unit_test(test_lpnorm_mvn_lrn),
		cmocka_unit_test(test_batchnorm),
		cmocka_unit_test(test_nll),
		cmocka_unit_test(test_nll_nd),
		cmocka_unit_test(test_sce),
		cmocka_unit_test(test_det),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_poll_inside_row),
		cmocka_unit_test(test_create_hardmax_opsets),
		cmocka_unit_test(test_create_reduce_axes),
		cmocka_unit_test(test_create_topk_argmax),
		cmocka_unit_test(test_create_loss),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
