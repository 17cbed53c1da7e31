// SPDX-License-Identifier: MIT
/*
 * The nn family of the ONNX CPU kernels (libnpu/onnx/kernels/ok_nn*.c)
 * run directly through npu_kernel_run(): each op on small cases whose
 * results are worked out by hand from the ONNX operator spec's examples
 * and definitions (noted at each case), the forms the device does not
 * take (1-D and 3-D windows, float64 and integer products, N-D resize),
 * every refusal of infer and run with its message, and the CPU limits
 * (work count, cancellation through the kernels' polls).
 */
#include <errno.h>
#include <float.h>
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
#include "kernels/ok_nn.h"

/* Input @i of @c; a call given no outputs has the one output. */
static void set_in(struct kt_call *c, size_t i, enum npu_dtype dt, uint32_t rank,
		   const uint32_t *dims, const void *data)
{
	kt_call_in(c, i, dt, rank, dims, data);
	if (!c->nout) {
		c->nout = 1;
		c->outp[0] = &c->out[0];
	}
}

/* An optional input left out. */
static void absent(struct kt_call *c, size_t i)
{
	c->inp[i] = NULL;
	if (i + 1 > c->nin)
		c->nin = i + 1;
}

static void expect_i(const struct npu_kernel_tensor *t, const int64_t *want, size_t n)
{
	size_t i;

	assert_int_equal(t->elems, n);
	for (i = 0; i < n; i++) {
		if (ok_get_i(t, i) != want[i]) {
			print_error("element %zu: got %lld, want %lld\n", i,
				    (long long)ok_get_i(t, i), (long long)want[i]);
			fail();
		}
	}
}

static void iota_f(float *v, size_t n, float first)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = first + (float)i;
}

/* ---- Conv ------------------------------------------------------------------------- */

/* The spec's Conv examples: a 5 x 5 ramp under a 3 x 3 box, with and without pads, strided. */
static void test_conv_2d(void **unused)
{
	struct ok_conv_state s = { .group = 1 };
	float x[25], w[9];
	struct kt_call c = { 0 };

	(void)unused;
	iota_f(x, 25, 0);
	for (int i = 0; i < 9; i++)
		w[i] = 1;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 5, 5 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 3 }, w);
	s.w.n_pads = 4;
	s.w.pads[0] = s.w.pads[1] = s.w.pads[2] = s.w.pads[3] = 1;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 5, 5 });
	kt_expect_f(&c.out[0], (double[]){ 12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108,
					117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84 },
		 25, 1e-6);
	s.w.n_pads = 0;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 54, 63, 72, 99, 108, 117, 144, 153, 162 }, 9, 1e-6);
	/* conv_with_strides_padding: strides 2, pads 1. */
	s.w.n_pads = 4;
	s.w.n_strides = 2;
	s.w.strides[0] = s.w.strides[1] = 2;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 3 });
	kt_expect_f(&c.out[0], (double[]){ 12, 27, 24, 63, 108, 81, 72, 117, 84 }, 9, 1e-6);
	kt_call_done(&c);
}

/* 1-D float64 with two groups and a bias; a dilated 1-D; a 3-D box. */
static void test_conv_1d_3d_groups(void **unused)
{
	struct ok_conv_state s = { .group = 2 };
	double x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, w[4] = { 1, 1, 1, -1 }, b[2] = { 10, 20 };
	float x7[7], w2[2] = { 1, 1 }, x3[8], w3[8];
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 2, 4 }, x);
	set_in(&c, 1, NPU_DTYPE_FP64, 3, (uint32_t[]){ 2, 1, 2 }, w);
	set_in(&c, 2, NPU_DTYPE_FP64, 1, (uint32_t[]){ 2 }, b);
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 2, 3 });
	/* Group 0 sums neighbours of channel 0, group 1 differences channel 1. */
	kt_expect_f(&c.out[0], (double[]){ 13, 15, 17, 19, 19, 19 }, 6, 0);
	kt_call_done(&c);

	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	s.group = 1;
	iota_f(x7, 7, 0);
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 7 }, x7);
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 2 }, w2);
	s.w.n_dilations = 1;
	s.w.dilations[0] = 2;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	/* x[i] + x[i + 2] */
	kt_expect_f(&c.out[0], (double[]){ 2, 4, 6, 8, 10 }, 5, 0);
	kt_call_done(&c);

	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	s.group = 1;
	iota_f(x3, 8, 1);
	for (int i = 0; i < 8; i++)
		w3[i] = (float)(i + 1);
	set_in(&c, 0, NPU_DTYPE_FP32, 5, (uint32_t[]){ 1, 1, 2, 2, 2 }, x3);
	set_in(&c, 1, NPU_DTYPE_FP32, 5, (uint32_t[]){ 1, 1, 2, 2, 2 }, w3);
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 5, (uint32_t[]){ 1, 1, 1, 1, 1 });
	/* 1^2 + 2^2 + ... + 8^2 */
	kt_expect_f(&c.out[0], (double[]){ 204 }, 1, 0);
	kt_call_done(&c);
}

/* auto_pad: an odd total pad goes to the end with SAME_UPPER, the start with SAME_LOWER. */
static void test_conv_auto_pad(void **unused)
{
	struct ok_conv_state s = { .group = 1 };
	float x[4] = { 1, 2, 3, 4 }, w[2] = { 1, 1 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 4 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 2 }, w);
	s.w.auto_pad = OK_PAD_SAME_UPPER;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 3, 5, 7, 4 }, 4, 0);
	s.w.auto_pad = OK_PAD_SAME_LOWER;
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 3, 5, 7 }, 4, 0);
	s.w.auto_pad = OK_PAD_VALID;
	s.w.n_pads = 2;
	s.w.pads[0] = s.w.pads[1] = 5;	/* ignored under VALID */
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 3, 5, 7 }, 3, 0);
	kt_call_done(&c);
}

static void test_conv_errors(void **unused)
{
	struct ok_conv_state s = { .group = 1 };
	float x[32] = { 0 }, w[32] = { 0 };
	int32_t xi[4] = { 0 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 4 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 3, 2 }, w);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "W's dimension 1 (3) is not X's channels per group (2)");
	s.group = 3;
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "X's 2 channels do not divide into 3 groups");
	s.group = 1;
	set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 2, 1 }, w);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "W has rank 4 but X has rank 3");
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 9 }, w);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "larger than the padded input");
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, w);
	s.w.n_strides = 2;
	s.w.strides[0] = s.w.strides[1] = 1;
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "strides has 2 values for 1 spatial axes");
	s.w.n_strides = 0;
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, w);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "B must be a vector of the 1 output channels");
	c.nin = 2;
	set_in(&c, 0, NPU_DTYPE_INT32, 3, (uint32_t[]){ 1, 2, 2 }, xi);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "X must be a float type, not int32");
	set_in(&c, 0, NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 2, 4 }, x);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "W is float32 but X is float16");
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 4 }, x);
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv, &s, &c), &c, "needs N, C and a spatial axis");
}

/* ---- ConvTranspose ------------------------------------------------------------------ */

/* The spec's ConvTranspose example: a 3 x 3 ramp through a 3 x 3 box into two channels. */
static void test_conv_transpose_2d(void **unused)
{
	static const double want[25] = { 0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
					 9, 20, 33, 24, 13, 6, 13, 21, 15, 8 };
	struct ok_conv_state s = { .group = 1 };
	float x[9], w[18];
	double both[50];
	struct kt_call c = { 0 };

	(void)unused;
	iota_f(x, 9, 0);
	for (int i = 0; i < 18; i++)
		w[i] = 1;
	for (int i = 0; i < 50; i++)
		both[i] = want[i % 25];
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 3 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 3, 3 }, w);
	assert_int_equal(kt_call_run(&ok_kernel_conv_transpose, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 5, 5 });
	kt_expect_f(&c.out[0], both, 50, 1e-6);
	kt_call_done(&c);
}

/* 1-D float64: strides with output_padding, an output_shape, pads, a bias. */
static void test_conv_transpose_1d(void **unused)
{
	struct ok_conv_state s = { .group = 1 };
	double x[2] = { 1, 2 }, w[3] = { 1, 1, 1 }, b[1] = { 0.5 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 1, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 1, 3 }, w);
	s.w.n_strides = 1;
	s.w.strides[0] = 2;
	s.n_output_padding = 1;
	s.output_padding[0] = 1;
	assert_int_equal(kt_call_run(&ok_kernel_conv_transpose, &s, &c), 0);
	/* x0 spreads over 0..2, x1 over 2..4, position 5 is output padding. */
	kt_expect_f(&c.out[0], (double[]){ 1, 1, 3, 2, 2, 0 }, 6, 0);
	s.n_output_padding = 0;
	s.n_output_shape = 1;
	s.output_shape[0] = 7;
	assert_int_equal(kt_call_run(&ok_kernel_conv_transpose, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 1, 3, 2, 2, 0, 0 }, 7, 0);
	s.n_output_shape = 0;
	s.w.n_pads = 2;
	s.w.pads[0] = s.w.pads[1] = 1;
	set_in(&c, 2, NPU_DTYPE_FP64, 1, (uint32_t[]){ 1 }, b);
	assert_int_equal(kt_call_run(&ok_kernel_conv_transpose, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1.5, 3.5, 2.5 }, 3, 0);
	s.w.n_pads = 0;
	s.n_output_padding = 1;
	s.output_padding[0] = 2;
	kt_call_expect_err(kt_call_infer(&ok_kernel_conv_transpose, &s, &c), &c,
		   "output_padding[0] (2) must be below the stride or the dilation");
	kt_call_done(&c);
}

/* Groups in the transpose: each input channel spreads into its own group's outputs; float16 data. */
static void test_conv_transpose_groups_fp16(void **unused)
{
	struct ok_conv_state s = { .group = 2 };
	uint16_t x[4], w[4], x3[3], w2[2];
	static const float xv[4] = { 1, 2, 3, 4 }, wv[4] = { 1, 1, 1, -1 };
	struct kt_call c = { 0 };
	int i;

	(void)unused;
	for (i = 0; i < 4; i++) {
		x[i] = ok_f32_to_fp16(xv[i]);
		w[i] = ok_f32_to_fp16(wv[i]);
	}
	set_in(&c, 0, NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 2, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP16, 3, (uint32_t[]){ 2, 1, 2 }, w);
	assert_int_equal(kt_call_run(&ok_kernel_conv_transpose, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 2, 3 });
	/* [1, 2] * [1, 1] -> 1, 3, 2; [3, 4] * [1, -1] -> 3, 1, -4 */
	kt_expect_f(&c.out[0], (double[]){ 1, 3, 2, 3, 1, -4 }, 6, 0);

	s.group = 1;
	for (i = 0; i < 3; i++)
		x3[i] = ok_f32_to_fp16((float)(i + 1));
	w2[0] = w2[1] = ok_f32_to_fp16(1);
	set_in(&c, 0, NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 1, 3 }, x3);
	set_in(&c, 1, NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 1, 2 }, w2);
	assert_int_equal(kt_call_run(&ok_kernel_conv, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP16, 3, (uint32_t[]){ 1, 1, 2 });
	kt_expect_f(&c.out[0], (double[]){ 3, 5 }, 2, 0);
	kt_call_done(&c);
}

/* ---- Pools --------------------------------------------------------------------------- */

/* maxpool_2d_ceil over two channels, with Indices in both storage orders. */
static void test_max_pool_ceil_indices(void **unused)
{
	struct ok_pool_state s = { .kind = OK_POOL_MAX };
	struct kt_call c = { 0 };
	float x[32];

	(void)unused;
	iota_f(x, 32, 1);
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 4, 4 }, x);
	c.nout = 2;
	c.outp[1] = &c.out[1];
	s.w.n_kernel = s.w.n_strides = 2;
	s.w.kernel[0] = s.w.kernel[1] = 3;
	s.w.strides[0] = s.w.strides[1] = 2;
	s.w.ceil_mode = true;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 2, 2 });
	kt_expect_shape(&c.out[1], NPU_DTYPE_INT64, 4, (uint32_t[]){ 1, 2, 2, 2 });
	kt_expect_f(&c.out[0], (double[]){ 11, 12, 15, 16, 27, 28, 31, 32 }, 8, 0);
	expect_i(&c.out[1], (int64_t[]){ 10, 11, 14, 15, 26, 27, 30, 31 }, 8);
	s.storage_order = 1;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	/* Column-major inside each plane: h + w * H. */
	expect_i(&c.out[1], (int64_t[]){ 10, 14, 11, 15, 26, 30, 27, 31 }, 8);
	/* Without ceil_mode the partial windows go. */
	s.w.ceil_mode = false;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 11, 27 }, 2, 0);
	kt_call_done(&c);
}

/*
 * maxpool_2d_dilations; ceil_mode's last window dropped when it would
 * start in the end padding (maxpool_2d_ceil_output_size_reduce_by_one);
 * int8 in 1-D.
 */
static void test_max_pool_forms(void **unused)
{
	struct ok_pool_state s = { .kind = OK_POOL_MAX };
	int8_t xi[4] = { -5, 3, -1, 7 };
	struct kt_call c = { 0 };
	float x[16];

	(void)unused;
	iota_f(x, 16, 1);
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 4, 4 }, x);
	s.w.n_kernel = s.w.n_dilations = 2;
	s.w.kernel[0] = s.w.kernel[1] = 2;
	s.w.dilations[0] = s.w.dilations[1] = 2;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 11, 12, 15, 16 }, 4, 0);

	memset(&s.w, 0, sizeof(s.w));
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, x);
	s.w.n_kernel = s.w.n_strides = 2;
	s.w.kernel[0] = s.w.kernel[1] = 1;
	s.w.strides[0] = s.w.strides[1] = 2;
	s.w.ceil_mode = true;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 1, 1 });
	kt_expect_f(&c.out[0], (double[]){ 1 }, 1, 0);

	memset(&s.w, 0, sizeof(s.w));
	set_in(&c, 0, NPU_DTYPE_INT8, 3, (uint32_t[]){ 1, 1, 4 }, xi);
	s.w.n_kernel = s.w.n_strides = 1;
	s.w.kernel[0] = s.w.strides[0] = 2;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT8, 3, (uint32_t[]){ 1, 1, 2 });
	expect_i(&c.out[0], (int64_t[]){ 3, 7 }, 2);
	kt_call_done(&c);
}

/*
 * As onnxruntime's max: a NaN never wins, and a window of NaNs or
 * -infinities gives the dtype's lowest value with index -1.
 */
static void test_max_pool_nan(void **unused)
{
	struct ok_pool_state s = { .kind = OK_POOL_MAX };
	float x[4] = { NAN, 1, -INFINITY, NAN };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 4 }, x);
	c.nout = 2;
	c.outp[1] = &c.out[1];
	s.w.n_kernel = s.w.n_strides = 1;
	s.w.kernel[0] = s.w.strides[0] = 2;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, -FLT_MAX }, 2, 0);
	expect_i(&c.out[1], (int64_t[]){ 1, -1 }, 2);
	kt_call_done(&c);
}

/* AveragePool with and without the pads counted; LpPool p 1 and 2; SAME_UPPER in 3-D. */
static void test_average_lp_pool(void **unused)
{
	struct ok_pool_state s = { .kind = OK_POOL_AVERAGE };
	float x[3] = { 1, 2, 3 }, x8[8];
	double xd[2] = { 3, -4 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 3 }, x);
	s.w.n_kernel = 1;
	s.w.kernel[0] = 2;
	s.w.n_pads = 2;
	s.w.pads[0] = s.w.pads[1] = 1;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 1.5, 2.5, 3 }, 4, 1e-7);
	s.count_include_pad = true;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 0.5, 1.5, 2.5, 1.5 }, 4, 1e-7);

	memset(&s, 0, sizeof(s));
	s.kind = OK_POOL_LP;
	s.p = 2;
	s.w.n_kernel = 1;
	s.w.kernel[0] = 2;
	set_in(&c, 0, NPU_DTYPE_FP64, 3, (uint32_t[]){ 1, 1, 2 }, xd);
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 5 }, 1, 0);
	s.p = 1;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 7 }, 1, 0);
	s.p = 3;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ cbrt(27.0 + 64.0) }, 1, 1e-12);

	/* 3-D average, SAME_UPPER: 2 x 2 x 2 windows, the end padded, pads not counted. */
	memset(&s, 0, sizeof(s));
	s.kind = OK_POOL_AVERAGE;
	s.w.auto_pad = OK_PAD_SAME_UPPER;
	s.w.n_kernel = 3;
	s.w.kernel[0] = s.w.kernel[1] = s.w.kernel[2] = 2;
	iota_f(x8, 8, 0);
	set_in(&c, 0, NPU_DTYPE_FP32, 5, (uint32_t[]){ 1, 1, 2, 2, 2 }, x8);
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 5, (uint32_t[]){ 1, 1, 2, 2, 2 });
	kt_expect_f(&c.out[0], (double[]){ 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7 }, 8, 1e-7);
	kt_call_done(&c);
}

static void test_global_pools(void **unused)
{
	struct ok_pool_state s = { .global = true };
	float x[12];
	struct kt_call c = { 0 };

	(void)unused;
	iota_f(x, 12, 1);
	/* Two channels of 2 x 3: any number of spatial axes reduce to 1 each. */
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 2, 3 }, x);
	s.kind = OK_POOL_AVERAGE;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 1, 1 });
	kt_expect_f(&c.out[0], (double[]){ 3.5, 9.5 }, 2, 1e-7);
	s.kind = OK_POOL_MAX;
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 6, 12 }, 2, 0);
	s.kind = OK_POOL_LP;
	s.p = 2;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 2, 1, 2 }, (float[]){ 3, 4, 6, 8 });
	assert_int_equal(kt_call_run(&ok_kernel_pool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 3, (uint32_t[]){ 2, 1, 1 });
	kt_expect_f(&c.out[0], (double[]){ 5, 10 }, 2, 1e-7);
	kt_call_done(&c);
}

static void test_pool_errors(void **unused)
{
	struct ok_pool_state s = { .kind = OK_POOL_AVERAGE };
	int32_t xi[4] = { 0 };
	float x[4] = { 0 };
	struct kt_call c = { 0 };

	(void)unused;
	s.w.n_kernel = 1;
	s.w.kernel[0] = 2;
	set_in(&c, 0, NPU_DTYPE_INT8, 3, (uint32_t[]){ 1, 1, 4 }, xi);
	kt_call_expect_err(kt_call_infer(&ok_kernel_pool, &s, &c), &c, "X must be a float type, not int8");
	s.kind = OK_POOL_MAX;
	set_in(&c, 0, NPU_DTYPE_INT32, 3, (uint32_t[]){ 1, 1, 4 }, xi);
	kt_call_expect_err(kt_call_infer(&ok_kernel_pool, &s, &c), &c, "X must be a float type, int8 or uint8, not int32");
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, x);
	kt_call_expect_err(kt_call_infer(&ok_kernel_pool, &s, &c), &c, "kernel_shape has 1 values for 2 spatial axes");
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 1 }, x);
	kt_call_expect_err(kt_call_infer(&ok_kernel_pool, &s, &c), &c, "larger than the padded input");
	s.kind = OK_POOL_AVERAGE;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 4 }, x);
	c.nout = 2;
	c.outp[1] = &c.out[1];
	kt_call_expect_err(kt_call_infer(&ok_kernel_pool, &s, &c), &c, "only MaxPool has a second output");
}

/* MaxPool's indices put back: the rest zero; an index past the output refused at run time. */
static void test_max_unpool(void **unused)
{
	struct ok_unpool_state s = { 0 };
	float x[4] = { 5, 6, 7, 8 };
	int64_t idx[4] = { 5, 7, 13, 15 }, shape[4] = { 1, 1, 5, 5 };
	struct kt_call c = { 0 };

	(void)unused;
	s.w.n_kernel = s.w.n_strides = 2;
	s.w.kernel[0] = s.w.kernel[1] = 2;
	s.w.strides[0] = s.w.strides[1] = 2;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_INT64, 4, (uint32_t[]){ 1, 1, 2, 2 }, idx);
	assert_int_equal(kt_call_run(&ok_kernel_max_unpool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 4, 4 });
	kt_expect_f(&c.out[0], (double[]){ 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8 }, 16, 0);
	/* output_shape 5 x 5: the same flat indices land elsewhere. */
	set_in(&c, 2, NPU_DTYPE_INT64, 1, (uint32_t[]){ 4 }, shape);
	assert_int_equal(kt_call_run(&ok_kernel_max_unpool, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 5, 5 });
	assert_true(((float *)c.out[0].data)[5] == 5 && ((float *)c.out[0].data)[15] == 8);
	c.nin = 2;
	idx[3] = 16;
	assert_int_equal(kt_call_run(&ok_kernel_max_unpool, &s, &c), -EINVAL);
	assert_non_null(strstr(c.err, "index 16 is out of range [0, 16)"));
	set_in(&c, 2, NPU_DTYPE_INT64, 1, (uint32_t[]){ 4 }, NULL);
	kt_call_expect_err(kt_call_infer(&ok_kernel_max_unpool, &s, &c), &c, "output_shape must be a constant");
	kt_call_done(&c);
}

/* ---- MatMul, Gemm ---------------------------------------------------------------------- */

static void test_matmul_dtypes(void **unused)
{
	int64_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 };
	uint32_t ua[2] = { 0x80000000u, 3 }, ub[2] = { 2, 0xffffffffu };
	double da[2] = { 0.5, 0.25 }, db[2] = { 4, 8 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 3 }, a);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 3, 2 }, b);
	assert_int_equal(kt_call_run(&ok_kernel_matmul, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 2 });
	expect_i(&c.out[0], (int64_t[]){ 58, 64, 139, 154 }, 4);
	/* uint32 wraps: 2^31 * 2 + 3 * (2^32 - 1) = 2^32 * 4 - 3 -> 2^32 - 3 */
	set_in(&c, 0, NPU_DTYPE_UINT32, 1, (uint32_t[]){ 2 }, ua);
	set_in(&c, 1, NPU_DTYPE_UINT32, 1, (uint32_t[]){ 2 }, ub);
	assert_int_equal(kt_call_run(&ok_kernel_matmul, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_UINT32, 0, NULL);
	assert_int_equal(((uint32_t *)c.out[0].data)[0], 0xfffffffdu);
	set_in(&c, 0, NPU_DTYPE_FP64, 2, (uint32_t[]){ 1, 2 }, da);
	set_in(&c, 1, NPU_DTYPE_FP64, 1, (uint32_t[]){ 2 }, db);
	assert_int_equal(kt_call_run(&ok_kernel_matmul, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP64, 1, (uint32_t[]){ 1 });
	kt_expect_f(&c.out[0], (double[]){ 4 }, 1, 0);
	kt_call_done(&c);
}

/* Batch axes broadcast: A [2, 1, 1, 2] x B [3, 2, 1] -> [2, 3, 1, 1], each a dot product. */
static void test_matmul_broadcast(void **unused)
{
	int32_t a[4] = { 1, 2, 3, 4 }, b[6] = { 1, 0, 0, 1, 1, 1 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_INT32, 4, (uint32_t[]){ 2, 1, 1, 2 }, a);
	set_in(&c, 1, NPU_DTYPE_INT32, 3, (uint32_t[]){ 3, 2, 1 }, b);
	assert_int_equal(kt_call_run(&ok_kernel_matmul, NULL, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT32, 4, (uint32_t[]){ 2, 3, 1, 1 });
	expect_i(&c.out[0], (int64_t[]){ 1, 2, 3, 3, 4, 7 }, 6);
	set_in(&c, 1, NPU_DTYPE_INT32, 3, (uint32_t[]){ 2, 3, 1 }, b);
	kt_call_expect_err(kt_call_infer(&ok_kernel_matmul, NULL, &c), &c, "A's inner dimension 2 is not B's 3");
	set_in(&c, 1, NPU_DTYPE_INT32, 3, (uint32_t[]){ 3, 2, 1 }, b);
	set_in(&c, 0, NPU_DTYPE_INT32, 4, (uint32_t[]){ 2, 2, 1, 2 }, a);
	kt_call_expect_err(kt_call_infer(&ok_kernel_matmul, NULL, &c), &c, "batch dimensions 2 and 3 do not broadcast");
	set_in(&c, 1, NPU_DTYPE_INT64, 3, (uint32_t[]){ 3, 2, 1 }, b);
	kt_call_expect_err(kt_call_infer(&ok_kernel_matmul, NULL, &c), &c, "A is int32 but B is int64");
	/* 8-bit integers are MatMulInteger's: their scales would be lost here. */
	set_in(&c, 0, NPU_DTYPE_INT8, 2, (uint32_t[]){ 1, 2 }, a);
	set_in(&c, 1, NPU_DTYPE_INT8, 2, (uint32_t[]){ 2, 1 }, a);
	kt_call_expect_err(kt_call_infer(&ok_kernel_matmul, NULL, &c), &c, "MatMul does not take int8");
	kt_call_done(&c);
}

/*
 * Shapes that cross the GEMM's blocking: 6 rows (a block of four and two
 * left over), 19 columns (whole vectors and a tail), integer-valued so
 * every dtype's sum is exact and equals the plain triple loop.
 */
static void test_matmul_blocking(void **unused)
{
	static const enum npu_dtype dts[] = { NPU_DTYPE_FP32, NPU_DTYPE_FP64, NPU_DTYPE_INT64 };
	struct ok_gemm_state gs = { .alpha = 1, .beta = 0, .trans_b = true };
	double a[6 * 5], b[5 * 19], want[6 * 19];
	uint64_t buf_a[6 * 5], buf_b[5 * 19];
	struct npu_kernel_tensor ta = { .dtype = NPU_DTYPE_FP32 };
	struct kt_call c = { 0 };
	size_t i, j, k, d;

	(void)unused;
	for (i = 0; i < 30; i++)
		a[i] = (double)((int)(i * 7 % 11) - 5);
	for (i = 0; i < 95; i++)
		b[i] = (double)((int)(i * 5 % 13) - 6);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 19; j++) {
			want[i * 19 + j] = 0;
			for (k = 0; k < 5; k++)
				want[i * 19 + j] += a[i * 5 + k] * b[k * 19 + j];
		}
	for (d = 0; d < 3; d++) {
		ta.dtype = dts[d];
		ta.data = buf_a;
		for (i = 0; i < 30; i++)
			ok_set_f(&ta, i, a[i]);
		ta.data = buf_b;
		for (i = 0; i < 95; i++)
			ok_set_f(&ta, i, b[i]);
		set_in(&c, 0, dts[d], 2, (uint32_t[]){ 6, 5 }, buf_a);
		set_in(&c, 1, dts[d], 2, (uint32_t[]){ 5, 19 }, buf_b);
		assert_int_equal(kt_call_run(&ok_kernel_matmul, NULL, &c), 0);
		kt_expect_f(&c.out[0], want, 6 * 19, 0);
	}
	/* Gemm with B transposed: B^T of the 19 x 5 matrix walks B by columns. */
	for (k = 0; k < 5; k++)
		for (j = 0; j < 19; j++)
			ok_set_f(&ta, j * 5 + k, b[k * 19 + j]);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 19, 5 }, buf_b);
	assert_int_equal(kt_call_run(&ok_kernel_gemm, &gs, &c), 0);
	kt_expect_f(&c.out[0], want, 6 * 19, 0);
	kt_call_done(&c);
}

/* transA, alpha 0.5, a row C broadcast with beta 2; integers; C that does not broadcast. */
static void test_gemm(void **unused)
{
	struct ok_gemm_state s = { .alpha = 0.5f, .beta = 2, .trans_a = true };
	float a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 }, cv[2] = { 1, 2 }, c3[3] = { 0 };
	int64_t ai[4] = { 1, 2, 3, 4 }, bi[4] = { 5, 6, 7, 8 }, ci[1] = { 100 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, a);
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, b);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, cv);
	assert_int_equal(kt_call_run(&ok_kernel_gemm, &s, &c), 0);
	/* A^T B = [[26, 30], [38, 44]] */
	kt_expect_f(&c.out[0], (double[]){ 15, 19, 21, 26 }, 4, 0);
	s.trans_a = false;
	s.trans_b = true;
	s.alpha = 1;
	absent(&c, 2);
	assert_int_equal(kt_call_run(&ok_kernel_gemm, &s, &c), 0);
	/* A B^T = [[17, 23], [39, 53]] */
	kt_expect_f(&c.out[0], (double[]){ 17, 23, 39, 53 }, 4, 0);
	s.trans_b = false;
	s.beta = 1;
	set_in(&c, 0, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 2 }, ai);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 2 }, bi);
	set_in(&c, 2, NPU_DTYPE_INT64, 0, NULL, ci);
	assert_int_equal(kt_call_run(&ok_kernel_gemm, &s, &c), 0);
	expect_i(&c.out[0], (int64_t[]){ 119, 122, 143, 150 }, 4);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, a);
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, b);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 3 }, c3);
	kt_call_expect_err(kt_call_infer(&ok_kernel_gemm, &s, &c), &c, "C's dimension 0 (3) does not broadcast to 2");
	set_in(&c, 2, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 1 }, c3);
	kt_call_expect_err(kt_call_infer(&ok_kernel_gemm, &s, &c), &c, "C has rank 3, above 2");
	absent(&c, 2);
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, a);
	kt_call_expect_err(kt_call_infer(&ok_kernel_gemm, &s, &c), &c, "A and B must be matrices");
	kt_call_done(&c);
}

/* ---- Einsum ---------------------------------------------------------------------------- */

static int einsum(struct kt_call *c, const char *eq)
{
	struct ok_einsum_state s;

	snprintf(s.equation, sizeof(s.equation), "%s", eq);
	return kt_call_run(&ok_kernel_einsum, &s, c);
}

static void test_einsum(void **unused)
{
	int64_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 };
	float sq[9];
	double v[3] = { 1, 2, 3 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_INT64, 2, (uint32_t[]){ 2, 3 }, a);
	set_in(&c, 1, NPU_DTYPE_INT64, 2, (uint32_t[]){ 3, 2 }, b);
	assert_int_equal(einsum(&c, "ij,jk->ik"), 0);
	expect_i(&c.out[0], (int64_t[]){ 58, 64, 139, 154 }, 4);
	/* Implicit output: the letters seen once, in order. */
	assert_int_equal(einsum(&c, "ij, jk"), 0);
	expect_i(&c.out[0], (int64_t[]){ 58, 64, 139, 154 }, 4);
	assert_int_equal(einsum(&c, "ij,jk->ki"), 0);
	expect_i(&c.out[0], (int64_t[]){ 58, 139, 64, 154 }, 4);
	/* Sum over everything. */
	assert_int_equal(einsum(&c, "ij,jk->"), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_INT64, 0, NULL);
	expect_i(&c.out[0], (int64_t[]){ 58 + 64 + 139 + 154 }, 1);

	c.nin = 1;
	iota_f(sq, 9, 0);
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 3 }, sq);
	assert_int_equal(einsum(&c, "ii->i"), 0);
	kt_expect_f(&c.out[0], (double[]){ 0, 4, 8 }, 3, 0);
	assert_int_equal(einsum(&c, "ii"), 0);
	kt_expect_f(&c.out[0], (double[]){ 12 }, 1, 0);
	assert_int_equal(einsum(&c, "...ij->...ji"), 0);
	kt_expect_f(&c.out[0], (double[]){ 0, 3, 6, 1, 4, 7, 2, 5, 8 }, 9, 0);
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 3, 1, 3 }, sq);
	/* The ellipsis broadcasts: [3, 1] against [2]. */
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 }, sq);
	assert_int_equal(einsum(&c, "...j,...j->..."), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	/* rows 0..2 of sq dotted with rows 0 and 1 of sq */
	kt_expect_f(&c.out[0], (double[]){ 5, 14, 14, 50, 23, 86 }, 6, 0);

	set_in(&c, 0, NPU_DTYPE_FP64, 1, (uint32_t[]){ 3 }, v);
	set_in(&c, 1, NPU_DTYPE_FP64, 1, (uint32_t[]){ 3 }, v);
	assert_int_equal(einsum(&c, "i,i"), 0);
	kt_expect_f(&c.out[0], (double[]){ 14 }, 1, 0);
	assert_int_equal(einsum(&c, "i,j->ij"), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 2, 3, 2, 4, 6, 3, 6, 9 }, 9, 0);

	kt_call_expect_err(einsum(&c, "i->i"), &c, "equation has 1 terms for 2 inputs");
	kt_call_expect_err(einsum(&c, "i,i->j"), &c, "output label 'j' is in no input");
	kt_call_expect_err(einsum(&c, "i,i->ii"), &c, "output label 'i' is repeated");
	kt_call_expect_err(einsum(&c, "ij,i"), &c, "input 0 has rank 1 for 2 labels");
	kt_call_expect_err(einsum(&c, "i,1"), &c, "'1' is not a letter");
	set_in(&c, 1, NPU_DTYPE_FP64, 1, (uint32_t[]){ 2 }, v);
	kt_call_expect_err(einsum(&c, "i,i"), &c, "label 'i' has extents 3 and 2");
	kt_call_expect_err(einsum(&c, "abcd,efg->abcdefg"), &c, "input 0 has rank 1 for 4 labels");
	kt_call_done(&c);
}

/* ---- Resize, Upsample ---------------------------------------------------------------------- */

static struct ok_resize_state resize_state(enum ok_resize_mode mode, enum ok_resize_coord coord)
{
	struct ok_resize_state s = { .opset = 13, .mode = mode, .coord = coord,
				     .cubic_a = -0.75f };

	return s;
}

/* resize_upsample_scales_nearest and _linear of the spec. */
static void test_resize_spec(void **unused)
{
	struct ok_resize_state s = resize_state(OK_RESIZE_NEAREST, OK_COORD_HALF_PIXEL);
	float x[4] = { 1, 2, 3, 4 }, sc[4] = { 1, 1, 2, 3 }, sc2[4] = { 1, 1, 2, 2 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, x);
	absent(&c, 1);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, sc);
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 4, 6 });
	kt_expect_f(&c.out[0], (double[]){ 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
					3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4 }, 24, 0);
	s = resize_state(OK_RESIZE_LINEAR, OK_COORD_HALF_PIXEL);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, sc2);
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5,
					2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4 }, 16, 1e-6);
	s.coord = OK_COORD_ALIGN_CORNERS;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 4 / 3.0, 5 / 3.0, 2, 5 / 3.0, 2, 7 / 3.0, 8 / 3.0,
					7 / 3.0, 8 / 3.0, 3, 10 / 3.0, 3, 10 / 3.0, 11 / 3.0, 4 },
		 16, 1e-6);
	kt_call_done(&c);
}

/* Nearest modes on 1-D, asymmetric scale 2: x / 2 rounds its halves down or up. */
static void test_resize_nearest_modes(void **unused)
{
	struct ok_resize_state s = resize_state(OK_RESIZE_NEAREST, OK_COORD_ASYMMETRIC);
	float x[4] = { 1, 2, 3, 4 }, sc[1] = { 2 };
	int64_t sizes[1] = { 2 };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, x);
	absent(&c, 1);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, sc);
	s.nearest = OK_NEAREST_ROUND_PREFER_FLOOR;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 1, 2, 2, 3, 3, 4, 4 }, 8, 0);
	s.nearest = OK_NEAREST_ROUND_PREFER_CEIL;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 2, 2, 3, 3, 4, 4, 4 }, 8, 0);
	/* Resize-10 and Upsample: floor when growing, ceil when shrinking. */
	s.nearest = OK_NEAREST_SIMPLE;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1, 1, 2, 2, 3, 3, 4, 4 }, 8, 0);
	/* sizes 2: scale 0.5 */
	absent(&c, 2);
	set_in(&c, 3, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, sizes);
	s.coord = OK_COORD_TF_HALF_PIXEL_FOR_NN;
	s.nearest = OK_NEAREST_ROUND_PREFER_FLOOR;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	/* (x + 0.5) * 2 = 1, 3 */
	kt_expect_f(&c.out[0], (double[]){ 2, 4 }, 2, 0);
	kt_call_done(&c);
}

/*
 * Cubic with A = -0.75 at half-way points, align_corners on a ramp: the
 * edge sample repeats for the tap before the first, or is left out
 * (exclude_outside) and the weights renormalised.
 */
static void test_resize_cubic(void **unused)
{
	struct ok_resize_state s = resize_state(OK_RESIZE_CUBIC, OK_COORD_ALIGN_CORNERS);
	double x[4] = { 0, 1, 2, 3 };
	int64_t sizes[1] = { 7 };
	struct kt_call c = { 0 };
	double near = 0.59375 * 1 - 0.09375 * 2;

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP64, 1, (uint32_t[]){ 4 }, x);
	absent(&c, 1);
	absent(&c, 2);
	set_in(&c, 3, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, sizes);
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 0, near, 1, 1.5, 2, 3 - near, 3 }, 7, 1e-12);
	s.exclude_outside = true;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 0, near / 1.09375, 1, 1.5, 2, 3 - near / 1.09375, 3 },
		 7, 1e-12);
	kt_call_done(&c);
}

/* tf_crop_and_resize past the input's end gives extrapolation_value; antialias widens the filter. */
static void test_resize_crop_antialias(void **unused)
{
	struct ok_resize_state s = resize_state(OK_RESIZE_LINEAR, OK_COORD_TF_CROP_AND_RESIZE);
	float x[4] = { 1, 2, 3, 4 }, roi[2] = { 0, 1.5f }, half[1] = { 0.5f }, xr[4] = { 0, 1, 2, 3 };
	int64_t sizes[1] = { 4 };
	struct kt_call c = { 0 };

	(void)unused;
	s.extrapolation = 10;
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, roi);
	absent(&c, 2);
	set_in(&c, 3, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, sizes);
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	/* x = 0, 1.5, 3, 4.5 */
	kt_expect_f(&c.out[0], (double[]){ 1, 2.5, 4, 10 }, 4, 1e-6);
	absent(&c, 1);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "tf_crop_and_resize needs the input roi");

	/*
	 * Antialiased linear, scale 0.5, half_pixel: output 0 centres on 0.5 with
	 * a triangle two samples wide each side: weights 0.75, 0.75, 0.25 on
	 * samples 0, 1, 2 (sample -1 outside), normalised.
	 */
	s = resize_state(OK_RESIZE_LINEAR, OK_COORD_HALF_PIXEL);
	s.antialias = true;
	set_in(&c, 0, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, xr);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 1 }, half);
	c.nin = 3;
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1.25 / 1.75, 3 - 1.25 / 1.75 }, 2, 1e-6);
	kt_call_done(&c);
}

/* Opset 18's axes and keep_aspect_ratio_policy; Upsample's scales attribute; the refusals. */
static void test_resize_axes_errors(void **unused)
{
	struct ok_resize_state s = resize_state(OK_RESIZE_NEAREST, OK_COORD_ASYMMETRIC);
	float x[8] = { 0 }, sc[2] = { 2, 2 }, bad[2] = { 0, 1 };
	int64_t sizes[2] = { 3, 3 }, axes2[2] = { 2, 3 };
	struct kt_call c = { 0 };

	(void)unused;
	s.opset = 18;
	s.n_axes = 2;
	memcpy(s.axes, axes2, sizeof(axes2));
	s.aspect = OK_ASPECT_NOT_LARGER;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 4 }, x);
	absent(&c, 1);
	absent(&c, 2);
	set_in(&c, 3, NPU_DTYPE_INT64, 1, (uint32_t[]){ 2 }, sizes);
	assert_int_equal(kt_call_infer(&ok_kernel_resize, &s, &c), 0);
	/* scale min(3/2, 3/4): 2 x 4 -> 2 x 3 */
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 3 });
	s.aspect = OK_ASPECT_NOT_SMALLER;
	assert_int_equal(kt_call_infer(&ok_kernel_resize, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 6 });
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, sc);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "only one of scales and sizes may be given");
	absent(&c, 3);
	c.nin = 3;
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, bad);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "scale 0 of axis 2 must be positive");
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, NULL);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "scales must be a constant");
	s.axes[1] = 2;
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, sc);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "axis 2 is repeated");
	s.axes[1] = 4;
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "axis 4 is out of range [-4, 4)");

	/* Upsample-7: the scales attribute, every axis. */
	memset(&s, 0, sizeof(s));
	s.upsample = true;
	s.opset = 7;
	s.coord = OK_COORD_ASYMMETRIC;
	s.nearest = OK_NEAREST_SIMPLE;
	s.n_scales = 4;
	s.scales[0] = s.scales[1] = 1;
	s.scales[2] = 2;
	s.scales[3] = 1.5f;
	c.nin = 1;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 4 }, x);
	assert_int_equal(kt_call_run(&ok_kernel_resize, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 4, 6 });
	s.scales[3] = 0.5f;
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &s, &c), &c, "Upsample's scale 0.5 of axis 3 is below 1");
	kt_call_done(&c);
}

/* ---- GridSample, RoiAlign ------------------------------------------------------------------- */

/*
 * X is 3 x 2 ([[0, 1], [2, 3], [4, 5]]); grid points (0, 0), (1, 1) and
 * (-1, -1) in normalised (x, y).  Without align_corners they fall on
 * pixel coordinates (0.5, 1), (1.5, 2.5) and (-0.5, -0.5).
 */
static void test_grid_sample(void **unused)
{
	struct ok_grid_state s = { .mode = OK_GRID_LINEAR, .padding = OK_GRID_ZEROS };
	float x[6] = { 0, 1, 2, 3, 4, 5 }, grid[6] = { 0, 0, 1, 1, -1, -1 };
	float x5[5] = { 0, 1, 2, 3, 4 }, g1[2] = { 0.25f, 1.5f };
	struct kt_call c = { 0 };

	(void)unused;
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 2 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 3, 2 }, grid);
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 1, 3 });
	kt_expect_f(&c.out[0], (double[]){ 2.5, 1.25, 0 }, 3, 1e-6);
	s.padding = OK_GRID_BORDER;
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 2.5, 5, 0 }, 3, 1e-6);
	s.padding = OK_GRID_REFLECTION;
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 2.5, 5, 0 }, 3, 1e-6);
	s.padding = OK_GRID_ZEROS;
	s.mode = OK_GRID_NEAREST;
	/* 0.5 rounds to even: column 0 of row 1. */
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 2, 0, 0 }, 3, 0);
	s.mode = OK_GRID_LINEAR;
	s.align_corners = true;
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 2.5, 5, 0 }, 3, 1e-6);

	/* 1-D (opset 20's N-D form): 0.25 -> 2.5 between 2 and 3; 1.5 past the end reflects. */
	s.align_corners = true;
	s.padding = OK_GRID_REFLECTION;
	set_in(&c, 0, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 1, 5 }, x5);
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 1 }, g1);
	assert_int_equal(kt_call_run(&ok_kernel_grid_sample, &s, &c), 0);
	/* 1.5 -> 5 in [0, 4]: reflected to 3 */
	kt_expect_f(&c.out[0], (double[]){ 2.5, 3 }, 2, 1e-6);
	s.mode = OK_GRID_CUBIC;
	kt_call_expect_err(kt_call_infer(&ok_kernel_grid_sample, &s, &c), &c, "cubic sampling is defined for 2 spatial axes, not 1");
	set_in(&c, 1, NPU_DTYPE_FP32, 3, (uint32_t[]){ 1, 2, 2 }, grid);
	kt_call_expect_err(kt_call_infer(&ok_kernel_grid_sample, &s, &c), &c, "grid must be [N, spatial..., 1]");
	kt_call_done(&c);
}

/*
 * X holds each pixel's column, so a bilinear sample inside the image is
 * its x: one 2 x 2 roi, one bin, 2 x 2 samples.  half_pixel shifts the
 * roi by half a pixel: samples at x 0 and 1; output_half_pixel at 0.5
 * and 1.5.
 */
static void test_roi_align(void **unused)
{
	struct ok_roi_state s = { .out_h = 1, .out_w = 1, .sampling_ratio = 2,
				  .spatial_scale = 1, .half_pixel = true };
	float x[16], rois[4] = { 0, 0, 2, 2 };
	int64_t bi[1] = { 0 };
	struct kt_call c = { 0 };

	(void)unused;
	for (int i = 0; i < 16; i++)
		x[i] = (float)(i % 4);
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 4, 4 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, 4 }, rois);
	set_in(&c, 2, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, bi);
	assert_int_equal(kt_call_run(&ok_kernel_roi_align, &s, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 1, 1 });
	kt_expect_f(&c.out[0], (double[]){ 0.5 }, 1, 1e-6);
	s.half_pixel = false;
	assert_int_equal(kt_call_run(&ok_kernel_roi_align, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 1 }, 1, 1e-6);
	/*
	 * max (onnxruntime's): the largest weighted corner of any sample; at
	 * (1.5, 1.5) the corners weigh 0.25 each, the largest holds 2.
	 */
	s.max_mode = true;
	assert_int_equal(kt_call_run(&ok_kernel_roi_align, &s, &c), 0);
	kt_expect_f(&c.out[0], (double[]){ 0.5 }, 1, 1e-6);
	bi[0] = 1;
	assert_int_equal(kt_call_run(&ok_kernel_roi_align, &s, &c), -EINVAL);
	assert_non_null(strstr(c.err, "batch index 1 of roi 0 is out of range [0, 1)"));
	bi[0] = 0;
	rois[2] = INFINITY;
	assert_int_equal(kt_call_run(&ok_kernel_roi_align, &s, &c), -EINVAL);
	assert_non_null(strstr(c.err, "roi 0 is not finite"));
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 1, 3 }, rois);
	kt_call_expect_err(kt_call_infer(&ok_kernel_roi_align, &s, &c), &c, "rois must be [num_rois, 4]");
	kt_call_done(&c);
}

/* ---- Limits ---------------------------------------------------------------------------------- */

/*
 * A 64-channel 3 x 3 convolution of a 64 x 64 image (151M MACs): beyond a
 * small max_work before it starts, and stopped by its polls when
 * cancelled; the same for a pool, a resize and an einsum.
 */
static void test_limits(void **unused)
{
	struct ok_conv_state cs = { .group = 1 };
	struct ok_pool_state ps = { .kind = OK_POOL_MAX };
	struct ok_resize_state rs = resize_state(OK_RESIZE_LINEAR, OK_COORD_HALF_PIXEL);
	struct ok_einsum_state es = { .equation = "ij,jk->ik" };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	float *x = calloc(64 * 64 * 64, sizeof(float)), *w = calloc(64 * 64 * 9, sizeof(float));
	float sc[4] = { 1, 1, 4, 4 };
	struct kt_call c = { 0 };

	(void)unused;
	assert_non_null(x);
	assert_non_null(w);
	set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 64, 64, 64 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 64, 64, 3, 3 }, w);
	assert_int_equal(kt_call_infer(&ok_kernel_conv, &cs, &c), 0);
	assert_true(ok_kernel_conv.work(&cs, c.nin, c.inp, c.nout,
					(const struct npu_kernel_tensor *const *)c.outp) >=
		    64ull * 64 * 62 * 62 * 9);
	lim.max_work = 1000000;
	assert_int_equal(kt_call_run_limits(&ok_kernel_conv, &cs, &c, &lim), -E2BIG);
	lim.max_work = 0;
	lim.cancel = kt_cancel_now;
	assert_int_equal(kt_call_run_limits(&ok_kernel_conv, &cs, &c, &lim), -ECANCELED);
	assert_int_equal(kt_call_run_limits(&ok_kernel_conv_transpose, &cs, &c, &lim), -ECANCELED);

	c.nin = 1;
	ps.w.n_kernel = 2;
	ps.w.kernel[0] = ps.w.kernel[1] = 3;
	assert_int_equal(kt_call_run_limits(&ok_kernel_pool, &ps, &c, &lim), -ECANCELED);
	absent(&c, 1);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 }, sc);
	assert_int_equal(kt_call_run_limits(&ok_kernel_resize, &rs, &c, &lim), -ECANCELED);
	c.nin = 2;
	set_in(&c, 0, NPU_DTYPE_FP32, 2, (uint32_t[]){ 512, 512 }, x);
	set_in(&c, 1, NPU_DTYPE_FP32, 2, (uint32_t[]){ 512, 512 }, x);
	assert_int_equal(kt_call_run_limits(&ok_kernel_einsum, &es, &c, &lim), -ECANCELED);
	assert_int_equal(kt_call_run_limits(&ok_kernel_matmul, NULL, &c, &lim), -ECANCELED);
	kt_call_done(&c);
	free(x);
	free(w);
}

/* Outputs that cannot exist: rank above 6, more elements than the bound. */
static void test_output_bounds(void **unused)
{
	float v[4] = { 1, 2, 3, 4 }, huge[2] = { 2e9f, 2e9f };
	struct ok_einsum_state es = { .equation = "a,b,c,d,e->abcde" };
	struct ok_resize_state rs = resize_state(OK_RESIZE_NEAREST, OK_COORD_ASYMMETRIC);
	struct kt_call c = { 0 };
	size_t i;

	(void)unused;
	for (i = 0; i < 5; i++)
		set_in(&c, i, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, v);
	assert_int_equal(kt_call_infer(&ok_kernel_einsum, &es, &c), 0);
	kt_expect_shape(&c.out[0], NPU_DTYPE_FP32, 5, (uint32_t[]){ 2, 2, 2, 2, 2 });
	for (i = 0; i < 3; i++)
		set_in(&c, i, NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 }, v);
	c.nin = 4;
	snprintf(es.equation, sizeof(es.equation), "ab,cd,ef,g->abcdefg");
	kt_call_expect_err(kt_call_infer(&ok_kernel_einsum, &es, &c), &c, "the output would have rank 7, above 6");
	snprintf(es.equation, sizeof(es.equation), "ab,cd,ef,g->abcdefgg");
	kt_call_expect_err(kt_call_infer(&ok_kernel_einsum, &es, &c), &c, "a term has more than 6 labels");
	c.nin = 1;
	absent(&c, 1);
	set_in(&c, 2, NPU_DTYPE_FP32, 1, (uint32_t[]){ 2 }, huge);
	kt_call_expect_err(kt_call_infer(&ok_kernel_resize, &rs, &c), &c,
		   "the output's dimension 1 (4000000000) makes it too large");
}

/* Every kernel's infer refuses absent inputs and outputs, and no inputs at all. */
static void test_absent_operands(void **unused)
{
	struct ok_conv_state cs = { .group = 1 };
	struct ok_pool_state ps = { .kind = OK_POOL_MAX, .global = true };
	struct ok_unpool_state us = { 0 };
	struct ok_gemm_state gs = { .alpha = 1, .beta = 1 };
	struct ok_einsum_state es = { .equation = "i,i" };
	struct ok_resize_state rs = resize_state(OK_RESIZE_NEAREST, OK_COORD_ASYMMETRIC);
	struct ok_grid_state gr = { 0 };
	struct ok_roi_state ro = { .out_h = 1, .out_w = 1, .spatial_scale = 1 };
	const struct { const struct npu_kernel *k; const void *state; } ks[] = {
		{ &ok_kernel_conv, &cs }, { &ok_kernel_conv_transpose, &cs },
		{ &ok_kernel_pool, &ps }, { &ok_kernel_max_unpool, &us },
		{ &ok_kernel_matmul, NULL }, { &ok_kernel_gemm, &gs },
		{ &ok_kernel_einsum, &es }, { &ok_kernel_resize, &rs },
		{ &ok_kernel_grid_sample, &gr }, { &ok_kernel_roi_align, &ro },
	};
	float v[16] = { 0 };
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		struct kt_call c = { 0 };

		/* No inputs, no outputs. */
		assert_int_equal(ks[i].k->infer(ks[i].state, 0, c.inp, 0, c.outp, c.err,
						sizeof(c.err)), -EINVAL);
		/* Every input present but the first; then every output absent. */
		set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, v);
		set_in(&c, 1, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, v);
		set_in(&c, 2, NPU_DTYPE_INT64, 1, (uint32_t[]){ 1 }, v);
		absent(&c, 0);
		assert_int_equal(kt_call_infer(ks[i].k, ks[i].state, &c), -EINVAL);
		assert_true(c.err[0] != 0);
		set_in(&c, 0, NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 1, 2, 2 }, v);
		c.outp[0] = NULL;
		assert_int_equal(kt_call_infer(ks[i].k, ks[i].state, &c), -EINVAL);
		assert_true(c.err[0] != 0);
	}
}

/* ---- create(): attributes and opsets through the importer ------------------------------ */

/*
 * 1-D Conv (no device form) with its attributes: dilations, group,
 * auto_pad as a string; ConvTranspose's strides and output_shape.
 */
static void test_create_conv(void **unused)
{
	static const int64_t xd[] = { 1, 2, 4 }, wd[] = { 2, 1, 2 }, bd[] = { 2 }, yd[] = { 1, 2, 4 };
	static const int64_t tx[] = { 1, 1, 2 }, tw[] = { 1, 1, 3 }, ty[] = { 1, 1, 7 };
	float x[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, w[] = { 1, 1, 1, -1 }, bias[] = { 10, 20 }, y[8];
	float tin[] = { 1, 2 }, tk[] = { 1, 1, 1 }, ty_out[7];
	struct mb b;
	Onnx__NodeProto *n;

	(void)unused;
	mb_init(&b, 13);
	input(&b, "x", 3, xd);
	init_f(&b, "w", 3, wd, w, 4);
	init_f(&b, "b", 1, bd, bias, 2);
	n = nodef(&b, "Conv", "conv", "x,w,b", "y", "group=i:2", "dilations=ints:2", NULL);
	kt_attr_string(&b, n, "auto_pad", "SAME_LOWER");
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, yd);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	/* Taps two apart, one pad each side: x[i - 1] + x[i + 1], x[i - 1] - x[i + 1]. */
	assert_true(y[0] == 12 && y[1] == 14 && y[2] == 16 && y[3] == 13);
	assert_true(y[4] == 14 && y[5] == 18 && y[6] == 18 && y[7] == 27);
	mb_free(&b);

	mb_init(&b, 11);
	input(&b, "x", 3, tx);
	init_f(&b, "w", 3, tw, tk, 3);
	nodef(&b, "ConvTranspose", "ct", "x,w", "y", "strides=ints:2", "output_shape=ints:7", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, ty);
	kt_run_model(&b, 1, (void *[]){ tin }, 1, (void *[]){ ty_out });
	assert_true(ty_out[0] == 1 && ty_out[1] == 1 && ty_out[2] == 3 && ty_out[3] == 2 &&
		    ty_out[4] == 2 && ty_out[5] == 0 && ty_out[6] == 0);
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 3, xd);
	init_f(&b, "w", 3, wd, w, 4);
	n = nodef(&b, "Conv", "conv", "x,w", "y", NULL);
	kt_attr_string(&b, n, "auto_pad", "SAME_MIDDLE");
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, yd);
	load(&b, NULL, -EINVAL, "auto_pad \"SAME_MIDDLE\" is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
	mb_free(&b);
}

/* MaxPool's Indices output (int64, no device form) with ceil_mode; LpPool's p. */
static void test_create_pool(void **unused)
{
	static const int64_t xd[] = { 1, 1, 5 }, yd[] = { 1, 1, 3 }, ld[] = { 1, 1, 2 };
	float x[] = { 1, 9, 2, 8, 3 }, y[3], lx[] = { 1, -2, 2, 3, -6 }, ly[2];
	int64_t idx[3];
	struct mb b;

	(void)unused;
	mb_init(&b, 12);
	input(&b, "x", 3, xd);
	nodef(&b, "MaxPool", "mp", "x", "y,i", "kernel_shape=ints:2", "strides=ints:2",
	      "ceil_mode=i:1", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, yd);
	b.outs[b.g.n_output++] = vinfo(&b, "i", 7, 3, yd);
	kt_run_model(&b, 1, (void *[]){ x }, 2, (void *[]){ y, idx });
	assert_true(y[0] == 9 && y[1] == 8 && y[2] == 3);
	assert_true(idx[0] == 1 && idx[1] == 3 && idx[2] == 4);
	mb_free(&b);

	mb_init(&b, 11);
	input(&b, "x", 3, xd);
	nodef(&b, "LpPool", "lp", "x", "y", "kernel_shape=ints:2", "strides=ints:3", "p=i:1", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, ld);
	kt_run_model(&b, 1, (void *[]){ lx }, 1, (void *[]){ ly });
	assert_true(ly[0] == 3 && ly[1] == 9);
	mb_free(&b);

	mb_init(&b, 11);
	input(&b, "x", 3, xd);
	nodef(&b, "MaxPool", "mp", "x", "y", "strides=ints:2", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 3, yd);
	load(&b, NULL, -EINVAL, "attribute kernel_shape is required");
	mb_free(&b);
}

/* Resize's string attributes on a rank-1 input; Resize-10's two inputs; Einsum's equation. */
static void test_create_resize_einsum(void **unused)
{
	static const int64_t xd[] = { 4 }, yd[] = { 8 }, one[] = { 1 }, md[] = { 2, 2 };
	float x[] = { 1, 2, 3, 4 }, y[8], two[] = { 2 };
	float m[] = { 1, 2, 3, 4 }, tr[4];
	struct mb b;
	Onnx__NodeProto *n;

	(void)unused;
	mb_init(&b, 13);
	input(&b, "x", 1, xd);
	init_f(&b, "scales", 1, one, two, 1);
	n = nodef(&b, "Resize", "rs", "x,-,scales", "y", NULL);
	kt_attr_string(&b, n, "coordinate_transformation_mode", "asymmetric");
	kt_attr_string(&b, n, "nearest_mode", "round_prefer_ceil");
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 1, yd);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_true(y[0] == 1 && y[1] == 2 && y[2] == 2 && y[3] == 3 && y[6] == 4 && y[7] == 4);
	mb_free(&b);

	/* Resize-10: asymmetric, nearest floors when growing. */
	mb_init(&b, 10);
	input(&b, "x", 1, xd);
	init_f(&b, "scales", 1, one, two, 1);
	nodef(&b, "Resize", "rs", "x,scales", "y", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 1, yd);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_true(y[0] == 1 && y[1] == 1 && y[2] == 2 && y[3] == 2 && y[6] == 4 && y[7] == 4);
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 1, xd);
	init_f(&b, "scales", 1, one, two, 1);
	n = nodef(&b, "Resize", "rs", "x,-,scales", "y", NULL);
	kt_attr_string(&b, n, "mode", "bicubic");
	b.outs[b.g.n_output++] = vinfo(&b, "y", 1, 1, yd);
	load(&b, NULL, -EINVAL, "mode \"bicubic\" is not supported");
	mb_free(&b);

	mb_init(&b, 12);
	input(&b, "m", 2, md);
	n = nodef(&b, "Einsum", "es", "m", "t", NULL);
	kt_attr_string(&b, n, "equation", "ij->ji");
	b.outs[b.g.n_output++] = vinfo(&b, "t", 1, 2, md);
	kt_run_model(&b, 1, (void *[]){ m }, 1, (void *[]){ tr });
	assert_true(tr[0] == 1 && tr[1] == 3 && tr[2] == 2 && tr[3] == 4);
	mb_free(&b);

	mb_init(&b, 12);
	input(&b, "m", 2, md);
	nodef(&b, "Einsum", "es", "m", "t", NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "t", 1, 2, md);
	load(&b, NULL, -EINVAL, "attribute equation is required");
	mb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_2d),
		cmocka_unit_test(test_conv_1d_3d_groups),
		cmocka_unit_test(test_conv_auto_pad),
		cmocka_unit_test(test_conv_errors),
		cmocka_unit_test(test_conv_transpose_2d),
		cmocka_unit_test(test_conv_transpose_1d),
		cmocka_unit_test(test_conv_transpose_groups_fp16),
		cmocka_unit_test(test_max_pool_ceil_indices),
		cmocka_unit_test(test_max_pool_forms),
		cmocka_unit_test(test_max_pool_nan),
		cmocka_unit_test(test_average_lp_pool),
		cmocka_unit_test(test_global_pools),
		cmocka_unit_test(test_pool_errors),
		cmocka_unit_test(test_max_unpool),
		cmocka_unit_test(test_matmul_dtypes),
		cmocka_unit_test(test_matmul_broadcast),
		cmocka_unit_test(test_matmul_blocking),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_einsum),
		cmocka_unit_test(test_resize_spec),
		cmocka_unit_test(test_resize_nearest_modes),
		cmocka_unit_test(test_resize_cubic),
		cmocka_unit_test(test_resize_crop_antialias),
		cmocka_unit_test(test_resize_axes_errors),
		cmocka_unit_test(test_grid_sample),
		cmocka_unit_test(test_roi_align),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_output_bounds),
		cmocka_unit_test(test_absent_operands),
		cmocka_unit_test(test_create_conv),
		cmocka_unit_test(test_create_pool),
		cmocka_unit_test(test_create_resize_einsum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
