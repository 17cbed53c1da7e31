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
#include "onnx-build.h"
#include "kernels/ok_reduce.h"

#define N_OUT 5

struct call {
	struct npu_kernel_tensor in[6];
	const struct npu_kernel_tensor *inp[6];
	size_t nin;
	struct npu_kernel_tensor out[N_OUT];
	struct npu_kernel_tensor *outp[N_OUT];
	size_t nout;
	char err[256];
};

static void set_in(struct call *c, size_t i, enum npu_dtype dt, uint32_t rank,
		   const uint32_t *dims, const void *data)
{
	struct npu_kernel_tensor *t = &c->in[i];
	uint32_t d;

	memset(t, 0, sizeof(*t));
	t->dtype = dt;
	t->rank = rank;
	t->elems = 1;
	for (d = 0; d < rank; d++) {
		t->dims[d] = dims[d];
		t->elems *= dims[d];
	}
	t->data = (void *)data;
	c->inp[i] = t;
	if (i + 1 > c->nin)
		c->nin = i + 1;
}

/* @nout outputs, all present unless listed in @absent (a bit mask). */
static void want_out(struct call *c, size_t nout, unsigned absent)
{
	size_t o;

	c->nout = nout;
	for (o = 0; o < nout; o++)
		c->outp[o] = absent & (1u << o) ? NULL : &c->out[o];
}

static int infer(const struct npu_kernel *k, const void *state, struct call *c)
{
	c->err[0] = 0;
	return k->infer(state, c->nin, c->inp, c->nout, c->outp, c->err, sizeof(c->err));
}

/* infer, then run on outputs allocated as infer shapes them. */
static int run_limits(const struct npu_kernel *k, const void *state, struct call *c,
		      const struct npu_cpu_limits *limits)
{
	size_t o;
	int rc = infer(k, state, c);

	if (rc)
		return rc;
	for (o = 0; o < c->nout; o++) {
		if (!c->outp[o])
			continue;
		c->out[o].data = calloc(c->out[o].elems ? c->out[o].elems : 1,
					npu_dtype_size(c->out[o].dtype));
		assert_non_null(c->out[o].data);
	}
	return npu_kernel_run(k, state, c->nin, c->inp, c->nout, c->outp, limits, c->err,
			      sizeof(c->err));
}

static int run(const struct npu_kernel *k, const void *state, struct call *c)
{
	return run_limits(k, state, c, NULL);
}

static void done(struct call *c)
{
	size_t o;

	for (o = 0; o < N_OUT; o++) {
		free(c->out[o].data);
		c->out[o].data = NULL;
	}
}

static void expect_shape(const struct npu_kernel_tensor *t, enum npu_dtype dt, uint32_t rank,
			 const uint32_t *dims)
{
	uint32_t d;

	assert_int_equal(t->dtype, dt);
	assert_int_equal(t->rank, rank);
	for (d = 0; d < rank; d++)
		assert_int_equal(t->dims[d], dims[d]);
}

static void expect_f(const struct npu_kernel_tensor *t, const double *want, size_t n, double tol)
{
	size_t i;

	assert_int_equal(t->elems, n);
	for (i = 0; i < n; i++) {
		double got = t->dtype == NPU_DTYPE_FP64 ? ((const double *)t->data)[i]
			     : t->dtype == NPU_DTYPE_FP16 ? ok_fp16_to_f32(((const uint16_t *)t->data)[i])
							  : ((const float *)t->data)[i];

		if (!(fabs(got - want[i]) <= tol * (1 + fabs(want[i])))) {
			print_error("element %zu: got %.9g, want %.9g\n", i, got, want[i]);
			fail();
		}
	}
}

static void expect_i64(const struct npu_kernel_tensor *t, const int64_t *want, size_t n)
{
	assert_int_equal(t->dtype, NPU_DTYPE_INT64);
	assert_int_equal(t->elems, n);
	assert_memory_equal(t->data, want, n * sizeof(*want));
}

static void expect_err(int rc, const struct call *c, const char *part)
{
	assert_int_equal(rc, -EINVAL);
	if (!strstr(c->err, part)) {
		print_error("message \"%s\" lacks \"%s\"\n", c->err, part);
		fail();
	}
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
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 1, 2 });
	expect_f(&c.out[0], want, 6, 0);
	done(&c);

	/* negative axes, dropped: [3, 2] */
	s.keepdims = false;
	s.axes[0] = -2;
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	expect_f(&c.out[0], want, 6, 0);
	done(&c);
}

/* Opset 13+ axes input: empty means all, or nothing with noop_with_empty_axes. */
static void test_reduce_axes_input(void **unused)
{
	static const float x[] = { 1, 2, 3, 4, 5, 6 };
	static const int64_t axes[] = { 0 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM, .keepdims = true, .axes_input = true };
	struct call c = { 0 };
	double all = 21;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	want_out(&c, 1, 0);
	/* no axes input: every axis */
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, 1 });
	expect_f(&c.out[0], &all, 1, 0);
	done(&c);

	/* no axes (kernel tensors are never empty) with noop: the input itself */
	s.noop_with_empty_axes = true;
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	expect_f(&c.out[0], (const double[]){ 1, 2, 3, 4, 5, 6 }, 6, 0);
	done(&c);

	/* the input unchanged: ReduceSumSquare does not square, as onnxruntime's */
	s.kind = OK_REDUCE_SUM_SQUARE;
	assert_int_equal(run(red(OK_REDUCE_SUM_SQUARE), &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 1, 2, 3, 4, 5, 6 }, 6, 0);
	done(&c);

	/* a scalar reduced over all (no) axes without noop is still squared */
	s.noop_with_empty_axes = false;
	set_in(&c, 0, NPU_DTYPE_FP32, 0, NULL, &x[2]);
	assert_int_equal(run(red(OK_REDUCE_SUM_SQUARE), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	expect_f(&c.out[0], (const double[]){ 9 }, 1, 0);
	done(&c);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);

	/* axes [0], dropped: [3] */
	s.kind = OK_REDUCE_SUM;
	s.keepdims = false;
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, axes);
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 });
	expect_f(&c.out[0], (const double[]){ 5, 7, 9 }, 3, 0);
	done(&c);

	/* an axes input that is not a constant */
	c.in[1].data = NULL;
	expect_err(infer(red(OK_REDUCE_SUM), &s, &c), &c, "axes must be a constant");
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
		struct call c = { 0 };

		set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
		want_out(&c, 1, 0);
		assert_int_equal(run(red(s.kind), &s, &c), 0);
		expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 });
		expect_f(&c.out[0], cases[i].row, 2, 1e-6);
		done(&c);
		/* no axes: all of them, to a scalar */
		s.num_axes = 0;
		assert_int_equal(run(red(s.kind), &s, &c), 0);
		expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
		expect_f(&c.out[0], &cases[i].all, 1, 1e-6);
		done(&c);
	}
}

/* Integers add as integers: an int64 sum beyond 2^53 stays exact, means truncate. */
static void test_reduce_integers(void **unused)
{
	static const int64_t big[] = { INT64_C(4611686018427387904), 1, 2 };
	static const int32_t small[] = { 1, 2, 3, 5, -7, -2 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM };
	struct call c = { 0 };
	int64_t want = INT64_C(4611686018427387907);

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_INT64, 1, (uint32_t[]){ 3 }, big);
	want_out(&c, 1, 0);
	assert_int_equal(run(red(OK_REDUCE_SUM), &s, &c), 0);
	expect_i64(&c.out[0], &want, 1);
	done(&c);

	/* [[1, 2, 3], [5, -7, -2]]: means 2 and -4/3 -> -1 */
	s.kind = OK_REDUCE_MEAN;
	s.num_axes = 1;
	s.axes[0] = 1;
	set_in(&c, 0, NPU_DTYPE_INT32, 2, (uint32_t[]){ 2, 3 }, small);
	assert_int_equal(run(red(OK_REDUCE_MEAN), &s, &c), 0);
	assert_int_equal(c.out[0].dtype, NPU_DTYPE_INT32);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 2);
	assert_int_equal(((int32_t *)c.out[0].data)[1], -1);
	done(&c);

	s.kind = OK_REDUCE_MIN;
	assert_int_equal(run(red(OK_REDUCE_MIN), &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 1);
	assert_int_equal(((int32_t *)c.out[0].data)[1], -7);
	done(&c);

	s.kind = OK_REDUCE_L1;
	assert_int_equal(run(red(OK_REDUCE_L1), &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[1], 14);
	done(&c);
}

static void test_reduce_errors(void **unused)
{
	static const float x[] = { 1, 2, 3, 4 };
	static const uint8_t b[] = { 1, 0 };
	static const int64_t axes[] = { 0 };
	struct ok_reduce_state s = { .kind = OK_REDUCE_MAX, .num_axes = 1, .axes = { 2 } };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	want_out(&c, 1, 0);
	expect_err(infer(red(OK_REDUCE_MAX), &s, &c), &c, "axis 2 is out of range [-2, 2)");
	s.num_axes = 2;
	s.axes[0] = 1;
	s.axes[1] = -1;
	expect_err(infer(red(OK_REDUCE_MAX), &s, &c), &c, "axis -1 is listed twice");
	/* before its opset takes axes as an input */
	s.num_axes = 0;
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, axes);
	expect_err(infer(red(OK_REDUCE_MAX), &s, &c), &c, "takes axes as an attribute");
	c.nin = 1;
	set_in(&c, 0, NPU_DTYPE_BOOL, 1, (uint32_t[]){ 2 }, b);
	expect_err(infer(red(OK_REDUCE_MAX), &s, &c), &c, "not bool");
	/* float axes */
	s.axes_input = true;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, x);
	expect_err(infer(red(OK_REDUCE_MAX), &s, &c), &c, "axes must be integers, not float32");
}

/* ---- ArgMax, ArgMin, TopK ----------------------------------------------------------- */

static void test_argmax_argmin(void **unused)
{
	/* the spec's example [[2, 1], [3, 10]], and a tie [[2, 2], [3, 10]] */
	static const float x[] = { 2, 1, 3, 10 }, tie[] = { 2, 2, 3, 10 };
	struct ok_arg_state s = { .is_max = true, .keepdims = true, .axis = 0 };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_argmax_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_INT64, 2, (uint32_t[]){ 1, 2 });
	expect_i64(&c.out[0], (const int64_t[]){ 1, 1 }, 2);
	done(&c);

	s.axis = -1;
	s.keepdims = false;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, tie);
	assert_int_equal(run(&ok_argmax_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 });
	expect_i64(&c.out[0], (const int64_t[]){ 0, 1 }, 2);
	done(&c);
	s.select_last_index = true;
	assert_int_equal(run(&ok_argmax_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1, 1 }, 2);
	done(&c);

	s.is_max = false;
	assert_int_equal(run(&ok_argmin_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1, 0 }, 2);
	done(&c);

	s.axis = 2;
	expect_err(infer(&ok_argmin_kernel, &s, &c), &c, "axis 2 is out of range [-2, 2)");
}

static void test_argmax_int64(void **unused)
{
	/* differ below double precision */
	static const int64_t x[] = { INT64_C(9007199254740993), INT64_C(9007199254740992) };
	struct ok_arg_state s = { .is_max = true };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_argmax_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 0 }, 1);
	done(&c);
	s.is_max = false;
	assert_int_equal(run(&ok_argmin_kernel, &s, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1 }, 1);
	done(&c);
}

static void test_topk(void **unused)
{
	static const float x[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	static const int32_t ties[] = { 3, 1, 3, 1 };
	static const int64_t k3 = 3, k2 = 2, k5 = 5, kneg = -1;
	struct ok_topk_state s = { .k_input = true, .largest = true, .sorted = true, .axis = 1 };
	struct call c = { 0 };

	(void)unused;
	/* the spec's example: [3, 4], k 3 along axis 1 */
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 4 }, x);
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k3);
	want_out(&c, 2, 0);
	assert_int_equal(run(&ok_topk_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 3 });
	expect_shape(&c.out[1], NPU_DTYPE_INT64, 2, (uint32_t[]){ 3, 3 });
	expect_f(&c.out[0], (const double[]){ 3, 2, 1, 7, 6, 5, 11, 10, 9 }, 9, 0);
	expect_i64(&c.out[1], (const int64_t[]){ 3, 2, 1, 3, 2, 1, 3, 2, 1 }, 9);
	done(&c);

	/* along axis 0, the smallest, opset 1's attribute k */
	s.k_input = false;
	s.k = 2;
	s.axis = 0;
	s.largest = false;
	c.nin = 1;
	assert_int_equal(run(&ok_topk_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8, 0);
	expect_i64(&c.out[1], (const int64_t[]){ 0, 0, 0, 0, 1, 1, 1, 1 }, 8);
	done(&c);

	/* ties: the lower index first, either way; values only */
	s.k_input = true;
	s.axis = -1;
	set_in(&c, 0, NPU_DTYPE_INT32, 1, (uint32_t[]){ 4 }, ties);
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k2);
	assert_int_equal(run(&ok_topk_kernel, &s, &c), 0);
	assert_int_equal(((int32_t *)c.out[0].data)[0], 1);
	expect_i64(&c.out[1], (const int64_t[]){ 1, 3 }, 2);
	done(&c);
	s.largest = true;
	want_out(&c, 2, 1u << 0);
	assert_int_equal(run(&ok_topk_kernel, &s, &c), 0);
	expect_i64(&c.out[1], (const int64_t[]){ 0, 2 }, 2);
	done(&c);

	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &k5);
	expect_err(infer(&ok_topk_kernel, &s, &c), &c, "k (5) is above the axis' length 4");
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, &kneg);
	expect_err(infer(&ok_topk_kernel, &s, &c), &c, "k (-1) is negative");
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, NULL);
	expect_err(infer(&ok_topk_kernel, &s, &c), &c, "K must be a constant");
	set_in(&c, 1, NPU_DTYPE_INT32, 1, (uint32_t[]){ 1 }, ties);
	expect_err(infer(&ok_topk_kernel, &s, &c), &c, "K must be int64, not int32");
}

/* ---- Softmax, LogSoftmax, Hardmax ---------------------------------------------------- */

static void test_softmax_axis_forms(void **unused)
{
	static const float x[] = { 1, 2, 3, 4 };
	/* e^-1 / (1 + e^-1) and friends */
	static const double pair[] = { 0.2689414214, 0.7310585786, 0.2689414214, 0.7310585786 };
	static const double four[] = { 0.0320586033, 0.0871443187, 0.2368828181, 0.6439142599 };
	struct ok_softmax_state s13 = { .axis = -1 }, s11 = { .flatten = true, .axis = 1 };
	struct call c = { 0 };
	double logs[4];
	size_t i;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, x);
	want_out(&c, 1, 0);
	/* opset 13: along the last axis alone */
	assert_int_equal(run(&ok_softmax_kernel, &s13, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 });
	expect_f(&c.out[0], pair, 4, 1e-6);
	done(&c);
	/* before 13: the input coerced to [1, 4] at axis 1 */
	assert_int_equal(run(&ok_softmax_kernel, &s11, &c), 0);
	expect_f(&c.out[0], four, 4, 1e-6);
	done(&c);
	for (i = 0; i < 4; i++)
		logs[i] = log(four[i]);
	assert_int_equal(run(&ok_logsoftmax_kernel, &s11, &c), 0);
	expect_f(&c.out[0], logs, 4, 1e-6);
	done(&c);
	/* the coerced form takes axis == rank */
	s11.axis = 3;
	assert_int_equal(infer(&ok_softmax_kernel, &s11, &c), 0);
	s11.axis = 4;
	expect_err(infer(&ok_softmax_kernel, &s11, &c), &c, "axis 4 is out of range [-3, 3]");
	s13.axis = 3;
	expect_err(infer(&ok_softmax_kernel, &s13, &c), &c, "axis 3 is out of range [-3, 3)");
	set_in(&c, 0, NPU_DTYPE_INT32, 1, (uint32_t[]){ 1 }, x);
	expect_err(infer(&ok_softmax_kernel, &s11, &c), &c, "not int32");
}

/* No overflow for large inputs, in float64 too; fp16 rounds its results. */
static void test_softmax_stable(void **unused)
{
	static const double big[] = { 1000, 1000, 999 };
	static const uint16_t h[] = { 0x3c00, 0x3c00 };	/* 1.0, 1.0 */
	struct ok_softmax_state s = { .axis = -1 };
	struct call c = { 0 };
	double e = exp(-1), want[3] = { 1 / (2 + e), 1 / (2 + e), e / (2 + e) };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP64, 1, (uint32_t[]){ 3 }, big);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_softmax_kernel, &s, &c), 0);
	expect_f(&c.out[0], want, 3, 1e-12);
	done(&c);
	set_in(&c, 0, NPU_DTYPE_FP16, 1, (uint32_t[]){ 2 }, h);
	assert_int_equal(run(&ok_softmax_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0.5, 0.5 }, 2, 0);
	done(&c);
}

static void test_hardmax(void **unused)
{
	static const float x[] = { 1, 3, 3, 0, 5, -1 };
	struct ok_softmax_state s = { .axis = -1 };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	want_out(&c, 1, 0);
	/* the first of equal maxima */
	assert_int_equal(run(&ok_hardmax_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0, 1, 0, 0, 1, 0 }, 6, 0);
	done(&c);
	/* before opset 13 at axis 0: one row of six */
	s.flatten = true;
	s.axis = 0;
	assert_int_equal(run(&ok_hardmax_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0, 0, 0, 0, 1, 0 }, 6, 0);
	done(&c);
}

/* ---- Normalizations ----------------------------------------------------------------- */

static void test_layernorm(void **unused)
{
	static const float x[] = { 1, 2, 3, 2, 4, 6 }, scale[] = { 2, 2, 2 }, bias[] = { 1, 0, 1 };
	/* [1, 2, 3]: mean 2, variance 2/3: (x - 2) * sqrt(3/2); [2, 4, 6] the same */
	const double r = sqrt(1.5);
	const double want[] = { -2 * r + 1, 0, 2 * r + 1, -2 * r + 1, 0, 2 * r + 1 };
	struct ok_norm_state s = { .axis = -1, .epsilon = 0 };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, scale);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, bias);
	want_out(&c, 3, 0);
	assert_int_equal(run(&ok_layernorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], want, 6, 1e-6);
	expect_shape(&c.out[1], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 1 });
	expect_f(&c.out[1], (const double[]){ 2, 4 }, 2, 1e-6);
	expect_f(&c.out[2], (const double[]){ r, r / 2 }, 2, 1e-6);
	done(&c);

	/* axis 0: the whole tensor, Scale broadcast from [1] */
	s.axis = 0;
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, scale);
	c.nin = 2;
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_layernorm_kernel, &s, &c), 0);
	done(&c);

	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, scale);
	expect_err(infer(&ok_layernorm_kernel, &s, &c), &c, "does not broadcast to 3");
	c.nin = 1;
	expect_err(infer(&ok_layernorm_kernel, &s, &c), &c, "the Scale input is missing");
}

static void test_instance_group_norm(void **unused)
{
	static const float x[] = { 1, 3, 10, 20 }, two[] = { 2, 2 }, one[] = { 1, 1 };
	static const float zero[] = { 0, 0 };
	struct ok_norm_state s = { .epsilon = 0, .num_groups = 2 };
	struct call c = { 0 };

	(void)unused;
	/* [1, 2, 2]: each channel's [a, b] becomes [-1, 1], then * 2 + 1 */
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, two);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, one);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_instancenorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ -1, 3, -1, 3 }, 4, 1e-6);
	done(&c);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, two);
	expect_err(infer(&ok_instancenorm_kernel, &s, &c), &c, "scale must be 1-D of 2 values");

	/* [1, 4, 1]: two groups of two channels */
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 4, 1 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, one);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, zero);
	assert_int_equal(run(&ok_groupnorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ -1, 1, -1, 1 }, 4, 1e-6);
	done(&c);
	s.num_groups = 3;
	expect_err(infer(&ok_groupnorm_kernel, &s, &c), &c, "num_groups (3) must divide the 4");
}

static void test_lpnorm_mvn_lrn(void **unused)
{
	static const float v[] = { 3, 4, 1, 3 }, ch[] = { 1, 2, 3 };
	struct ok_norm_state s = { .axis = -1, .p = 2, .num_axes = 3, .axes = { 0, 2, 3 } };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, v);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_lpnorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0.6, 0.8, 0.316227766, 0.948683298 }, 4, 1e-6);
	done(&c);
	s.p = 1;
	assert_int_equal(run(&ok_lpnorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 3.0 / 7, 4.0 / 7, 0.25, 0.75 }, 4, 1e-6);
	done(&c);
	s.p = 3;
	expect_err(infer(&ok_lpnorm_kernel, &s, &c), &c, "p must be 1 or 2, not 3");

	/* MVN over N, H, W of [1, 2, 1, 2]: channels [3, 4] and [1, 3] */
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 1, 2 }, v);
	assert_int_equal(run(&ok_mvn_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ -1, 1, -1, 1 }, 4, 1e-6);
	done(&c);

	/* LRN of [1, 3, 1, 1] = [1, 2, 3], size 3, alpha/size 1, beta 1, bias 1 */
	s.size = 3;
	s.alpha = 3;
	s.beta = 1;
	s.bias = 1;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 3, 1, 1 }, ch);
	assert_int_equal(run(&ok_lrn_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 1.0 / 6, 2.0 / 15, 3.0 / 14 }, 3, 1e-6);
	done(&c);
	s.size = 0;
	expect_err(infer(&ok_lrn_kernel, &s, &c), &c, "size must be positive");
}

static void test_batchnorm(void **unused)
{
	/* [1, 2, 1, 2]: channel 0 holds [1, 2], channel 1 [3, 4] */
	static const float x[] = { 1, 2, 3, 4 }, scale[] = { 1, 2 }, bias[] = { 0, 1 };
	static const float mean[] = { 1, 3 }, var[] = { 4, 0.25f };
	struct ok_norm_state s = { .epsilon = 0, .momentum = 0.9f, .spatial = true };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 1, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, scale);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, bias);
	set_in(&c, 3, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, mean);
	set_in(&c, 4, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, var);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_batchnorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ 0, 0.5, 1, 5 }, 4, 1e-6);
	done(&c);

	/* training: the batch's statistics, means 1.5 and 3.5, variances 0.25 */
	s.training_mode = true;
	want_out(&c, 3, 0);
	assert_int_equal(run(&ok_batchnorm_kernel, &s, &c), 0);
	expect_f(&c.out[0], (const double[]){ -1, 1, -1, 3 }, 4, 1e-6);
	expect_f(&c.out[1], (const double[]){ 1.05, 3.05 }, 2, 1e-6);
	expect_f(&c.out[2], (const double[]){ 3.625, 0.25 }, 2, 1e-6);
	done(&c);

	s.training_mode = false;
	expect_err(infer(&ok_batchnorm_kernel, &s, &c), &c, "training mode only");
	c.nin = 4;
	want_out(&c, 1, 0);
	expect_err(infer(&ok_batchnorm_kernel, &s, &c), &c, "the input_var input is missing");
}

/* ---- Losses ------------------------------------------------------------------------- */

static void test_nll(void **unused)
{
	static const float lp[] = { -1, -2, -3, -4, -5, -6 }, w[] = { 0.5f, 1, 2 };
	static const int64_t t[] = { 2, 0 }, bad[] = { 3, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_NONE };
	struct call c = { 0 };
	const double sum = 7, mean = 3.5, wmean = 8 / 2.5, ignored = 4;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, lp);
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 });
	expect_f(&c.out[0], (const double[]){ 3, 4 }, 2, 0);
	done(&c);
	s.reduction = OK_LOSS_SUM;
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	expect_f(&c.out[0], &sum, 1, 0);
	done(&c);
	s.reduction = OK_LOSS_MEAN;
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_f(&c.out[0], &mean, 1, 0);
	done(&c);

	/* weights [0.5, 1, 2]: losses 6 and 2, mean over the weights 2.5 */
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, w);
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_f(&c.out[0], &wmean, 1, 1e-6);
	done(&c);

	/* ignoring class 2: the mean is over the one target left, weighted or not */
	s.has_ignore_index = true;
	s.ignore_index = 2;
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_f(&c.out[0], &ignored, 1, 1e-6);
	done(&c);
	c.nin = 2;
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_f(&c.out[0], &ignored, 1, 1e-6);
	done(&c);

	/* a target out of range fails the run; ignore_index itself may be */
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, bad);
	expect_err(run(&ok_nll_kernel, &s, &c), &c,
		   "target 3 (element 0) is out of the classes' range [0, 3)");
	done(&c);
	s.ignore_index = 3;
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_f(&c.out[0], &ignored, 1, 1e-6);
	done(&c);

	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, lp);
	expect_err(infer(&ok_nll_kernel, &s, &c), &c, "target must be int32 or int64, not float32");
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 3 }, t);
	expect_err(infer(&ok_nll_kernel, &s, &c), &c, "target's dimension 0 is 3");
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, w);
	expect_err(infer(&ok_nll_kernel, &s, &c), &c, "weight must be [C] = [3]");
}

/* [N, C, d] = [1, 2, 2] with targets [N, d] = [[1, 0]] */
static void test_nll_nd(void **unused)
{
	static const double lp[] = { -1, -2, -3, -4 };
	static const int32_t t[] = { 1, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_NONE };
	struct call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 2, 2 }, lp);
	set_in(&c, 1, NPU_DTYPE_INT32, 2, (uint32_t[]){ 1, 2 }, t);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_nll_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP64, 2, (uint32_t[]){ 1, 2 });
	expect_f(&c.out[0], (const double[]){ 3, 2 }, 2, 0);
	done(&c);
}

static void test_sce(void **unused)
{
	/* rows [0, 0] and [0, ln 3]: log-softmax [-ln 2, -ln 2] and [-ln 4, ln 3 - ln 4] */
	const float x[] = { 0, 0, 0, (float)log(3) };
	static const int64_t t[] = { 1, 0 };
	struct ok_loss_state s = { .reduction = OK_LOSS_MEAN };
	struct call c = { 0 };
	const double l2 = log(2), l4 = log(4), mean = (l2 + l4) / 2;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, t);
	want_out(&c, 2, 0);
	assert_int_equal(run(&ok_sce_kernel, &s, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 0, NULL);
	expect_f(&c.out[0], &mean, 1, 1e-6);
	expect_shape(&c.out[1], NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 });
	expect_f(&c.out[1], (const double[]){ -l2, -l2, -l4, log(3) - l4 }, 4, 1e-6);
	done(&c);

	/* ignoring target 0 leaves the first row alone in the mean */
	s.has_ignore_index = true;
	s.ignore_index = 0;
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_sce_kernel, &s, &c), 0);
	expect_f(&c.out[0], &l2, 1, 1e-6);
	done(&c);

	/* NLL has no second output */
	want_out(&c, 2, 0);
	expect_err(infer(&ok_nll_kernel, &s, &c), &c, "has one output");
}

/* ---- Det -------------------------------------------------------------------------------- */

static void test_det(void **unused)
{
	/* [[1, 2], [3, 4]], a swap, a singular matrix, and a 3x3 needing a pivot */
	static const float x[] = { 1, 2, 3, 4, 0, 1, 1, 0, 1, 2, 2, 4 };
	static const double m3[] = { 0, 2, 1, 1, 1, 1, 2, 0, 3 };
	struct call c = { 0 };
	double want3 = -4;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 2, 2 }, x);
	want_out(&c, 1, 0);
	assert_int_equal(run(&ok_det_kernel, NULL, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 });
	expect_f(&c.out[0], (const double[]){ -2, -1, 0 }, 3, 1e-6);
	done(&c);
	/* 0*(3-0) - 2*(3-2) + 1*(0-2) = -4 */
	set_in(&c, 0, NPU_DTYPE_FP64, 2, (uint32_t[]){ 3, 3 }, m3);
	assert_int_equal(run(&ok_det_kernel, NULL, &c), 0);
	expect_shape(&c.out[0], NPU_DTYPE_FP64, 0, NULL);
	expect_f(&c.out[0], &want3, 1, 1e-12);
	done(&c);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, x);
	expect_err(infer(&ok_det_kernel, NULL, &c), &c, "the matrices are 2x3, not square");
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
	struct call c = { 0 };

	(void)unused;
	want_out(&c, 1, 0);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 1, 1 }, i64);
	expect_err(infer(red(OK_REDUCE_SUM), &rs, &c), &c, "axes must be 1-D, not of rank 2");
	c.nin = 1;
	set_in(&c, 0, NPU_DTYPE_UINT64, 1, (uint32_t[]){ 2 }, i64);
	expect_err(infer(red(OK_REDUCE_SUM), &rs, &c), &c, "not uint64");
	set_in(&c, 0, NPU_DTYPE_BOOL, 1, (uint32_t[]){ 2 }, b);
	expect_err(infer(&ok_argmax_kernel, &as, &c), &c, "not bool");

	/* TopK's K of two values */
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, f);
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, i64);
	want_out(&c, 2, 0);
	expect_err(infer(&ok_topk_kernel, &ts, &c), &c, "K must hold one value, not 2");
	c.nin = 1;
	expect_err(infer(&ok_topk_kernel, &ts, &c), &c, "the K input is missing");
	want_out(&c, 1, 0);

	set_in(&c, 0, NPU_DTYPE_INT32, 2, (uint32_t[]){ 2, 2 }, f);
	expect_err(infer(&ok_layernorm_kernel, &ns, &c), &c, "X must be float16");
	expect_err(infer(&ok_lpnorm_kernel, &ns, &c), &c, "not int32");
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	expect_err(infer(&ok_instancenorm_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	expect_err(infer(&ok_groupnorm_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	expect_err(infer(&ok_lrn_kernel, &ns, &c), &c, "must be [N, C, ...], not of rank 1");
	expect_err(infer(&ok_det_kernel, NULL, &c), &c, "must be [*, M, M], not of rank 1");
	expect_err(infer(&ok_sce_kernel, &ls, &c), &c, "the scores must be [N, C, ...]");
	/* axes 0 and -2 of a 2-D input are the same */
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	expect_err(infer(&ok_mvn_kernel, &ns, &c), &c, "axis -2 is listed twice");

	/* BatchNormalization's parameters hold one value per channel */
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, f);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	set_in(&c, 3, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, f);
	set_in(&c, 4, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, f);
	expect_err(infer(&ok_batchnorm_kernel, &ns, &c), &c, "input_mean must hold 2 values, not 3");

	/* losses: the target's rank, the weight's dtype */
	c.nin = 0;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 1 }, i64);
	expect_err(infer(&ok_nll_kernel, &ls, &c), &c, "the target has rank 2, not the input's rank minus one (1)");
	expect_err(infer(&ok_sce_kernel, &ls, &c), &c, "not the scores' rank minus one (1)");
	set_in(&c, 1, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, i64);
	set_in(&c, 2, NPU_DTYPE_FP64, 1, (uint32_t[]){ 2 }, f);
	expect_err(infer(&ok_nll_kernel, &ls, &c), &c, "the weight is float64, not float32");
	c.nin = 1;
	expect_err(infer(&ok_nll_kernel, &ls, &c), &c, "the target input is missing");

	/* a model may leave the first input or output name empty */
	c.inp[0] = NULL;
	expect_err(infer(&ok_softmax_kernel, &ns, &c), &c, "the first input is missing");
	c.nin = 0;
	expect_err(infer(&ok_det_kernel, NULL, &c), &c, "the first input is missing");
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, f);
	want_out(&c, 1, 1u << 0);
	expect_err(infer(&ok_layernorm_kernel, &ns, &c), &c, "the first output is missing");
	expect_err(infer(red(OK_REDUCE_SUM), &rs, &c), &c, "the first output is missing");
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
	struct call c = { 0 };
	const double sum = 0.5;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP16, 1, (uint32_t[]){ 4 }, h);
	want_out(&c, 1, 0);
	assert_int_equal(run(red(OK_REDUCE_SUM), &rs, &c), 0);
	expect_f(&c.out[0], &sum, 1, 0);
	done(&c);

	set_in(&c, 0, NPU_DTYPE_INT8, 1, (uint32_t[]){ 4 }, i8);
	assert_int_equal(run(&ok_argmax_kernel, &as, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 1 }, 1);
	done(&c);
	as.is_max = false;
	assert_int_equal(run(&ok_argmin_kernel, &as, &c), 0);
	expect_i64(&c.out[0], (const int64_t[]){ 3 }, 1);
	done(&c);

	/* uint8 max and sum: the sum wraps in the output's 8 bits, as onnxruntime's */
	rs.kind = OK_REDUCE_MAX;
	set_in(&c, 0, NPU_DTYPE_UINT8, 1, (uint32_t[]){ 4 }, u8);
	assert_int_equal(run(red(OK_REDUCE_MAX), &rs, &c), 0);
	assert_int_equal(((uint8_t *)c.out[0].data)[0], 255);
	done(&c);
	rs.kind = OK_REDUCE_SUM;
	assert_int_equal(run(red(OK_REDUCE_SUM), &rs, &c), 0);
	assert_int_equal(((uint8_t *)c.out[0].data)[0], (458 & 0xff));
	done(&c);
}

/* ---- Limits --------------------------------------------------------------------------------- */

static bool cancel_now(void *opaque)
{
	(void)opaque;
	return true;
}

/* A reduction over 2^20 elements: beyond a small max_work, and cancelled by its polls. */
static void test_limits(void **unused)
{
	struct ok_reduce_state s = { .kind = OK_REDUCE_SUM };
	struct ok_softmax_state sm = { .axis = -1 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct call c = { 0 };
	float *x = calloc(1u << 20, sizeof(*x));

	(void)unused;
	assert_non_null(x);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1024, 1024 }, x);
	want_out(&c, 1, 0);
	lim.max_work = 1000;
	assert_int_equal(run_limits(red(OK_REDUCE_SUM), &s, &c, &lim), -E2BIG);
	done(&c);
	lim.max_work = 0;
	lim.cancel = cancel_now;
	assert_int_equal(run_limits(red(OK_REDUCE_SUM), &s, &c, &lim), -ECANCELED);
	done(&c);
	assert_int_equal(run_limits(&ok_softmax_kernel, &sm, &c, &lim), -ECANCELED);
	done(&c);
	free(x);
}

/* ---- create(): attributes and opsets through the importer ------------------------------ */

/* A string attribute, which nodef() does not make. */
static void attr_string(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *at = keep(b, calloc(1, sizeof(*at)));

	onnx__attribute_proto__init(at);
	at->name = (char *)name;
	at->has_s = 1;
	at->s.data = (uint8_t *)v;
	at->s.len = strlen(v);
	n->attribute[n->n_attribute++] = at;
}

/* Load @b, run it once on @ins (the graph's inputs in order) into @outs. */
static void run_model(struct mb *b, size_t nin, void *const *ins, size_t nout, void *const *outs)
{
	struct npu_onnx_model *m = load(b, NULL, 0, NULL);
	uint32_t values[8];
	void *bufs[8];
	struct npu_onnx_io io;
	struct npu_runtime *rt;
	size_t i, k = 0;

	for (i = 0; i < nin; i++) {
		assert_int_equal(npu_onnx_input(m, i, &io), 0);
		values[k] = io.value;
		bufs[k++] = ins[i];
	}
	for (i = 0; i < nout; i++) {
		assert_int_equal(npu_onnx_output(m, i, &io), 0);
		values[k] = io.value;
		bufs[k++] = outs[i];
	}
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, (uint32_t)k, values, bufs), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
	npu_onnx_free(m);
}

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
	run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, v11, sizeof(y));
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 3, dims);
	nodef(&b, "Hardmax", "hm", "x", "y", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, dims);
	run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
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
	run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_true(y[0] == 2 && y[1] == 12);
	mb_free(&b);

	/* int32, which the device's reductions do not take */
	mb_init(&b, 13);
	b.ins[b.g.n_input++] = vinfo(&b, "x", 6, 2, dims);
	init_i64(&b, "axes", one, 1);
	nodef(&b, "ReduceSum", "rs", "x,axes", "y", "keepdims=i:0", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 6, 1, two);
	run_model(&b, 1, (void *[]){ xi }, 1, (void *[]){ yi });
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
	run_model(&b, 1, (void *[]){ x }, 2, (void *[]){ vals, idx });
	assert_true(vals[0] == 1 && vals[1] == 1);
	assert_true(idx[0] == 1 && idx[1] == 3);
	mb_free(&b);

	mb_init(&b, 12);
	input(&b, "x", 1, dims);
	nodef(&b, "ArgMax", "am", "x", "y", "select_last_index=i:1", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 7, 1, one);
	run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ &last });
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
	attr_string(&b, n, "reduction", "sum");
	b.outs[b.g.n_output++] = vinfo(&b, "loss", 1, 0, NULL);
	run_model(&b, 2, (void *[]){ (void *)x, t }, 1, (void *[]){ &loss });
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

static int polls;

static bool cancel_on_second_poll(void *opaque)
{
	(void)opaque;
	return ++polls >= 2;
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
	struct call c = { 0 };
	float *x = calloc(n, sizeof(*x));

	(void)unused;
	assert_non_null(x);
	lim.cancel = cancel_on_second_poll;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, n }, x);
	want_out(&c, 1, 0);
	polls = 0;
	assert_int_equal(run_limits(&ok_softmax_kernel, &sm, &c, &lim), -ECANCELED);
	assert_true(((float *)c.out[0].data)[n - 1] == 0);
	done(&c);

	/* a bias of 1 would show in every output written */
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, &one);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, &one);
	polls = 0;
	assert_int_equal(run_limits(&ok_layernorm_kernel, &ln, &c, &lim), -ECANCELED);
	assert_true(((float *)c.out[0].data)[n - 1] == 0);
	done(&c);

	c.nin = 1;
	x[n - 1] = 1;
	polls = 0;
	assert_int_equal(run_limits(&ok_argmax_kernel, &am, &c, &lim), -ECANCELED);
	/* stopped before it saw the maximum at the row's end */
	assert_true(((int64_t *)c.out[0].data)[0] == 0);
	done(&c);
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
