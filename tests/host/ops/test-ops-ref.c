// SPDX-License-Identifier: MIT
/*
 * Exact-value tests of the reference implementation: the rounding rules
 * documented in Documentation/ops.rst, dtype conversions and small ops
 * worked out by hand.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

static void test_quantize_rounding(void **state)
{
	(void)state;
	/* ONNX: half to even.  TFLite: half away from zero. */
	assert_int_equal(vnpu_quantize_f(2.5f, 1.0f, 0, -128, 127, VNPU_ROUND_ONNX), 2);
	assert_int_equal(vnpu_quantize_f(3.5f, 1.0f, 0, -128, 127, VNPU_ROUND_ONNX), 4);
	assert_int_equal(vnpu_quantize_f(-2.5f, 1.0f, 0, -128, 127, VNPU_ROUND_ONNX), -2);
	assert_int_equal(vnpu_quantize_f(2.5f, 1.0f, 0, -128, 127, VNPU_ROUND_TFLITE), 3);
	assert_int_equal(vnpu_quantize_f(-2.5f, 1.0f, 0, -128, 127, VNPU_ROUND_TFLITE), -3);
	/* Zero point is added after rounding, then saturation. */
	assert_int_equal(vnpu_quantize_f(0.25f, 0.5f, 10, 0, 255, VNPU_ROUND_ONNX), 10);
	assert_int_equal(vnpu_quantize_f(0.75f, 0.5f, 10, 0, 255, VNPU_ROUND_ONNX), 12);
	assert_int_equal(vnpu_quantize_f(1000.0f, 0.5f, 10, 0, 255, VNPU_ROUND_ONNX), 255);
	assert_int_equal(vnpu_quantize_f(-1e30f, 0.5f, 10, -128, 127, VNPU_ROUND_ONNX), -128);
	assert_int_equal(vnpu_quantize_f(INFINITY, 0.5f, 10, -128, 127, VNPU_ROUND_ONNX), 127);
	assert_int_equal(vnpu_quantize_f(NAN, 0.5f, 10, -128, 127, VNPU_ROUND_ONNX), 10);
}

static void test_qmul(void **state)
{
	struct vnpu_qmul q;

	(void)state;
	q = vnpu_qmul_from_double(0.5);
	assert_int_equal(q.mult, 1 << 30);
	assert_int_equal(q.shift, 0);
	/*
	 * With no right shift only the doubling high multiply rounds, and it
	 * rounds ties towards +infinity: 1.5 -> 2 but -1.5 -> -1 (TFLite).
	 */
	assert_int_equal(vnpu_qmul_apply(3, q), 2);
	assert_int_equal(vnpu_qmul_apply(-3, q), -1);
	assert_int_equal(vnpu_qmul_apply(5, q), 3);
	q = vnpu_qmul_from_double(0.25);
	assert_int_equal(q.mult, 1 << 30);
	assert_int_equal(q.shift, -1);
	assert_int_equal(vnpu_qmul_apply(6, q), 2);	/* 1.5 -> 2 */
	assert_int_equal(vnpu_qmul_apply(-6, q), -2);	/* the shift: away from 0 */
	assert_int_equal(vnpu_qmul_apply(-5, q), -1);	/* -1.25 -> -1 */
	q = vnpu_qmul_from_double(3.0);			/* > 1: left shift */
	assert_int_equal(q.shift, 2);
	assert_int_equal(vnpu_qmul_apply(7, q), 21);
	/* The left shift saturates first (TFLite leaves it undefined). */
	assert_int_equal(vnpu_qmul_apply(INT32_MAX, q), 0x5fffffff);
	assert_int_equal(vnpu_qmul_apply(INT32_MIN, q), -0x60000000);
	q = vnpu_qmul_from_double(1e-12);		/* underflows to zero */
	assert_int_equal(q.mult, 0);
	assert_int_equal(vnpu_qmul_apply(1000000, q), 0);
	/* A mantissa rounding up to 1.0 renormalizes. */
	q = vnpu_qmul_from_double(0.99999999999);
	assert_int_equal(q.mult, 1 << 30);
	assert_int_equal(q.shift, 1);
}

static void test_fp16_bf16(void **state)
{
	(void)state;
	assert_int_equal(vnpu_f32_to_fp16(1.0f), 0x3c00);
	assert_int_equal(vnpu_f32_to_fp16(-2.0f), 0xc000);
	assert_int_equal(vnpu_f32_to_fp16(65504.0f), 0x7bff);
	assert_int_equal(vnpu_f32_to_fp16(65519.0f), 0x7bff);
	assert_int_equal(vnpu_f32_to_fp16(65520.0f), 0x7c00);	/* rounds to inf */
	assert_int_equal(vnpu_f32_to_fp16(0x1p-24f), 0x0001);	/* smallest subnormal */
	assert_int_equal(vnpu_f32_to_fp16(0x1p-25f), 0x0000);	/* tie to even: 0 */
	assert_int_equal(vnpu_f32_to_fp16(0x3p-25f), 0x0002);	/* tie to even: 2 */
	assert_int_equal(vnpu_f32_to_fp16(0x1p-14f), 0x0400);	/* smallest normal */
	/* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1. */
	assert_int_equal(vnpu_f32_to_fp16(1.0f + 0x1p-11f), 0x3c00);
	assert_int_equal(vnpu_f32_to_fp16(1.0f + 0x3p-11f), 0x3c02);
	assert_int_equal(vnpu_f32_to_fp16(INFINITY), 0x7c00);
	assert_true((vnpu_f32_to_fp16(NAN) & 0x7e00) == 0x7e00);
	assert_true(vnpu_fp16_to_f32(0x0001) == 0x1p-24f);
	assert_true(vnpu_fp16_to_f32(0x7bff) == 65504.0f);
	assert_true(vnpu_fp16_to_f32(0xfc00) == -INFINITY);
	assert_int_equal(vnpu_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(vnpu_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);	/* tie: even */
	assert_int_equal(vnpu_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
	assert_true(vnpu_bf16_to_f32(0xc040) == -3.0f);
	assert_true(isnan(vnpu_bf16_to_f32(vnpu_f32_to_bf16(NAN))));
}

/* Run one command over host arrays without any device memory. */
static void run(struct vnpu_cmd_compute *c, void *a, void *b, void *bias,
		void *y)
{
	struct vnpu_op_bind bind = { { a, b, bias, y }, { NULL } };
	int i;

	for (i = 0; i < 4; i++)
		if (c->t[i].dtype)
			c->t[i].va = 0x1000 * (i + 1);
	assert_int_equal(vnpu_ref_run(c, &bind), 0);
}

static void test_gemm_int8_exact(void **state)
{
	static const uint32_t da[2] = { 2, 2 }, dy[2] = { 2, 2 }, nb = 2;
	/* A - za = [[1,2],[3,4]], B - zb = [[5,6],[7,8]]: A.B = [[19,22],[43,50]] */
	int8_t a[4] = { 1 - 3, 2 - 3, 3 - 3, 4 - 3 };
	uint8_t b[4] = { 5 + 100, 6 + 100, 7 + 100, 8 + 100 };
	int32_t bias[2] = { 1, -100 };
	struct vnpu_cmd_compute c;
	int8_t y[4];
	int32_t y32[4];

	(void)state;
	cmd_init(&c, VNPU_OP_GEMM);
	c.t[0] = tdesc(VNPU_DT_INT8, 2, da);
	tquant(&c.t[0], 0.5f, -3);
	c.t[1] = tdesc(VNPU_DT_UINT8, 2, da);
	tquant(&c.t[1], 0.25f, 100);
	c.t[2] = tdesc(VNPU_DT_INT32, 1, &nb);
	c.t[3] = tdesc(VNPU_DT_INT32, 2, dy);
	run(&c, a, b, bias, y32);
	assert_int_equal(y32[0], 20);
	assert_int_equal(y32[1], -78);
	assert_int_equal(y32[2], 44);
	assert_int_equal(y32[3], -50);

	/* Requantize: M = 0.5 * 0.25 / 1.0 = 0.125, zp 2. */
	c.t[3] = tdesc(VNPU_DT_INT8, 2, dy);
	tquant(&c.t[3], 1.0f, 2);
	run(&c, a, b, bias, y);
	/* 20/8 = 2.5 -> 2 (even); -78/8 = -9.75 -> -10; 44/8 = 5.5 -> 6; -50/8 = -6.25 -> -6 */
	assert_int_equal(y[0], 4);
	assert_int_equal(y[1], -8);
	assert_int_equal(y[2], 8);
	assert_int_equal(y[3], -4);
	c.round = VNPU_ROUND_TFLITE;	/* ties away: 2.5 -> 3 */
	run(&c, a, b, bias, y);
	assert_int_equal(y[0], 5);
	assert_int_equal(y[1], -8);
	assert_int_equal(y[2], 8);
	assert_int_equal(y[3], -4);
	/* ReLU clamps at the output zero point; ReLU6 at zp + 6/scale. */
	c.act = VNPU_ACT_RELU;
	run(&c, a, b, bias, y);
	assert_int_equal(y[1], 2);
	assert_int_equal(y[2], 8);
	c.act = VNPU_ACT_RELU6;
	run(&c, a, b, bias, y);
	assert_int_equal(y[2], 8);
	assert_int_equal(y[1], 2);
	c.t[3].scale = f2u(0.5f);	/* 6 / 0.5 = 12 -> clamp at 14 */
	c.round = VNPU_ROUND_ONNX;
	run(&c, a, b, bias, y);
	assert_int_equal(y[2], 13);	/* 44 / 4 = 11 + 2 */
	assert_int_equal(y[0], 7);	/* 20 / 4 = 5 + 2 */
	bias[0] = 1000;
	run(&c, a, b, bias, y);
	assert_int_equal(y[0], 14);
}

static void test_conv_pad(void **state)
{
	/* 1x2x2x1 input, 3x3 kernel of ones, pad 1: each output sums all 4. */
	static const uint32_t dx[4] = { 1, 2, 2, 1 }, dw[4] = { 1, 3, 3, 1 };
	float x[4] = { 1, 2, 3, 4 }, w[9], y[4];
	struct vnpu_cmd_compute c;
	int i;

	(void)state;
	for (i = 0; i < 9; i++)
		w[i] = 1.0f;
	cmd_init(&c, VNPU_OP_CONV2D);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dx);
	c.attr.conv = (struct vnpu_attr_conv2d){ 1, 1, 1, 1, 1, 1, 1, 1, 1, { 0 } };
	run(&c, x, w, NULL, y);
	for (i = 0; i < 4; i++)
		assert_true(y[i] == 10.0f);
	/* Padding 3 > kernel with stride 3: the middle window sees x[0] only. */
	c.attr.conv = (struct vnpu_attr_conv2d){ 3, 3, 1, 1, 3, 3, 3, 3, 1, { 0 } };
	c.t[3].dims[1] = 2;
	c.t[3].dims[2] = 2;
	w[4] = 0.0f;
	w[8] = 5.0f;
	run(&c, x, w, NULL, y);
	/* Windows at (0,0), (0,1), (1,0) lie entirely in padding; (1,1)
	 * covers rows/cols 0..2: x0*w0 + x1*w1 + x2*w3 + x3*w4. */
	assert_true(y[0] == 0.0f && y[1] == 0.0f && y[2] == 0.0f);
	assert_true(y[3] == 6.0f);
}

static void test_eltwise_bcast(void **state)
{
	static const uint32_t da[2] = { 2, 3 }, db[1] = { 3 };
	float a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 10, 20, 30 }, y[6];
	struct vnpu_cmd_compute c;

	(void)state;
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.attr.eltwise.kind = VNPU_ELTWISE_SUB;
	c.t[0] = tdesc(VNPU_DT_FP32, 2, da);
	c.t[1] = tdesc(VNPU_DT_FP32, 1, db);
	c.t[3] = tdesc(VNPU_DT_FP32, 2, da);
	c.act = VNPU_ACT_LEAKY_RELU;
	c.act_alpha = f2u(0.5f);
	run(&c, a, b, NULL, y);
	assert_true(y[0] == -4.5f && y[2] == -13.5f && y[5] == -12.0f);
}

/*
 * A binary32 fma and a binary32 multiply-then-add, each rounded once from
 * the exact double: products of an 8-bit code (or of a 17-bit integer)
 * and a float fit a double's 53 bits, and so do the sums here (operands
 * of modest, close exponents), so one float conversion is one rounding.
 * An arithmetic of the test's own, not the reference's fmaf().
 */
static float fma_by_double(int32_t x, float r, float add)
{
	return (float)((double)x * (double)r + (double)add);
}

static int32_t ort_code(double v)
{
	double q = nearbyint(v);

	return q < 0 ? 0 : q > 255 ? 255 : (int32_t)q;
}

/*
 * ELTWISE with VNPU_ROUND_ORT_QLINEAR on every pair of uint8 codes (A a
 * column, B a row) against the formulas of ops.rst "Rounding" evaluated
 * independently, for both operand orders of ADD.  The parameters are
 * gen-ms-quant.py's tie-making set, with which onnxruntime's two fma
 * nestings round some pairs apart: the count of those checks that the
 * test can tell A from B at all.
 */
static void test_eltwise_qlinear(void **state)
{
	static const uint32_t dcol[2] = { 256, 1 }, drow[2] = { 1, 256 }, dy[2] = { 256, 256 };
	const float s[3] = { 0.324f, 0.462f, 0.516f };
	const int32_t z[3] = { 82, 204, 44 };
	static uint8_t codes[256], y[256 * 256];
	float ra = s[0] / s[2], rb = s[1] / s[2];
	float fixed = (float)z[2] - (ra * (float)z[0] + rb * (float)z[1]);
	float ratio = s[0] * s[1] / s[2];
	struct vnpu_cmd_compute c;
	unsigned int nesting_differs = 0;
	int32_t a, b;
	int swap;

	(void)state;
	for (a = 0; a < 256; a++)
		codes[a] = (uint8_t)a;
	for (swap = 0; swap < 2; swap++) {
		cmd_init(&c, VNPU_OP_ELTWISE);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.eltwise.kind = VNPU_ELTWISE_ADD;
		/* swap: B first, so the command's A is the row */
		c.t[swap] = tdesc(VNPU_DT_UINT8, 2, dcol);
		tquant(&c.t[swap], s[0], z[0]);
		c.t[!swap] = tdesc(VNPU_DT_UINT8, 2, drow);
		tquant(&c.t[!swap], s[1], z[1]);
		c.t[3] = tdesc(VNPU_DT_UINT8, 2, dy);
		tquant(&c.t[3], s[2], z[2]);
		run(&c, codes, codes, NULL, y);
		for (a = 0; a < 256; a++)
			for (b = 0; b < 256; b++) {
				float a_out = fma_by_double(a, ra, fma_by_double(b, rb, fixed));
				float b_out = fma_by_double(b, rb, fma_by_double(a, ra, fixed));
				int32_t want = ort_code(swap ? b_out : a_out);

				nesting_differs += !swap && ort_code(a_out) != ort_code(b_out);
				if (y[a * 256 + b] != want) {
					fprintf(stderr, "add, swap %d: a %d b %d: %d, want %d\n",
						swap, a, b, y[a * 256 + b], want);
					fail();
				}
			}
	}
	assert_true(nesting_differs > 0);

	c.attr.eltwise.kind = VNPU_ELTWISE_MUL;
	c.t[0] = tdesc(VNPU_DT_UINT8, 2, dcol);
	tquant(&c.t[0], s[0], z[0]);
	c.t[1] = tdesc(VNPU_DT_UINT8, 2, drow);
	tquant(&c.t[1], s[1], z[1]);
	run(&c, codes, codes, NULL, y);
	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++) {
			float p = (float)((double)((a - z[0]) * (b - z[1])) * (double)ratio);
			int32_t want = ort_code((float)((double)p + (double)z[2]));

			if (y[a * 256 + b] != want) {
				fprintf(stderr, "mul: a %d b %d: %d, want %d\n", a, b,
					y[a * 256 + b], want);
				fail();
			}
		}

	/*
	 * A result beyond int32 is the lowest code whatever its sign, as
	 * CVTPS2DQ's "integer indefinite" clamps; a zero product stays zy.
	 */
	c.t[3].scale = f2u(1e-30f);
	run(&c, codes, codes, NULL, y);
	assert_int_equal(y[0], 0);		/* (0 - 82) * (0 - 204) * 1.5e29 */
	assert_int_equal(y[255], 0);		/* (0 - 82) * (255 - 204) * 1.5e29 */
	assert_int_equal(y[82 * 256 + 7], 44);
}

/*
 * POOL2D GLOBAL_AVG with VNPU_ROUND_ORT_QLINEAR over every channel sum a
 * 2 x 2 image of uint8 or int8 codes can have (one channel each), against
 * QLinearGlobalAveragePool's formula evaluated here: the integer sum less
 * zx * 4, times sx / (sy * 4) in binary32, clamped, rounded half to even,
 * plus zy.  The second parameter set makes every odd sum a tie with an
 * odd zy: rounding before adding zy (onnxruntime) or after
 * (QuantizeLinear) then differs, which the count checks the test sees.
 */
static void test_pool_gap_qlinear(void **state)
{
	enum { N = 4, C = 255 * N + 1 };
	static const struct { float sx; int32_t zx; float sy; int32_t zy; } p[] = {
		{ 0.18181208f, 8, 0.027197987f, 51 },	/* ppocr-rec-int8's */
		{ 2.0f, 0, 1.0f, 3 },			/* ratio 0.5 */
		{ 1.0f, 128, 0.01f, 0 },		/* saturates both ways */
	};
	static const uint32_t dx[4] = { 1, 2, 2, C }, dy[4] = { 1, 1, 1, C };
	static uint8_t x[N * C], y[C];
	unsigned int tie_differs = 0, k, sgn;
	struct vnpu_cmd_compute c;
	int32_t ch, i;

	(void)state;
	for (sgn = 0; sgn < 2; sgn++) {
		int32_t lo = sgn ? -128 : 0, hi = lo + 255;

		/* channel ch's codes sum to lo * N + ch */
		for (ch = 0; ch < C; ch++)
			for (i = 0; i < N; i++) {
				int32_t v = ch - 255 * i;

				x[i * C + ch] = (uint8_t)(lo + (v < 0 ? 0 : v > 255 ? 255 : v));
			}
		for (k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
			float ratio = p[k].sx / (p[k].sy * (float)N);
			int32_t zx = sgn ? p[k].zx - 128 : p[k].zx;
			int32_t zy = sgn ? p[k].zy - 128 : p[k].zy;

			cmd_init(&c, VNPU_OP_POOL2D);
			c.round = VNPU_ROUND_ORT_QLINEAR;
			c.attr.pool.kind = VNPU_POOL_GLOBAL_AVG;
			c.t[0] = tdesc(sgn ? VNPU_DT_INT8 : VNPU_DT_UINT8, 4, dx);
			tquant(&c.t[0], p[k].sx, zx);
			c.t[3] = tdesc(c.t[0].dtype, 4, dy);
			tquant(&c.t[3], p[k].sy, zy);
			run(&c, x, NULL, NULL, y);
			for (ch = 0; ch < C; ch++) {
				int32_t acc = lo * N + ch - zx * N;
				double v = (float)((double)acc * (double)ratio);
				double r = v < lo - zy ? lo - zy : v > hi - zy ? hi - zy : v;
				int32_t want = (int32_t)nearbyint(r) + zy;
				int32_t got = sgn ? (int8_t)y[ch] : y[ch];
				double after = nearbyint(v + zy);

				after = after < lo ? lo : after > hi ? hi : after;
				tie_differs += k == 1 && (int32_t)after != want;
				if (got != want) {
					fprintf(stderr, "gap %s, set %u: sum %d: %d, want %d\n",
						sgn ? "int8" : "uint8", k, lo * N + ch, got, want);
					fail();
				}
			}
		}
	}
	assert_true(tie_differs > 0);
}

/*
 * POOL2D AVG with VNPU_ROUND_ORT_QLINEAR over every pair of uint8 codes
 * (a 1 x 2 window: output (ox, c) averages codes ox and c), against
 * QLinearAveragePool's formula evaluated here: the binary32 mean of the
 * dequantized codes, then nearbyint(mean / sy + zy), clamped.  With
 * scales 0.5 and zero points 3 every odd sum is a tie that rounds the
 * other way from QuantizeLinear's, which the count checks.
 */
static void test_pool_avg_qlinear(void **state)
{
	static const struct { float sx; int32_t zx; float sy; int32_t zy; } p[] = {
		{ 0.5f, 3, 0.5f, 3 },
		{ 0.4043235f, 3, 0.4043235f, 3 },	/* ppocr-rec-int8's */
		{ 0.4043235f, 200, 0.1f, 17 },		/* saturates both ways */
	};
	static const uint32_t dx[4] = { 1, 1, 512, 256 }, dy[4] = { 1, 1, 256, 256 };
	static uint8_t x[512 * 256], y[256 * 256];
	unsigned int tie_differs = 0, k;
	struct vnpu_cmd_compute c;
	int32_t a, b;

	(void)state;
	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++) {
			x[(2 * a) * 256 + b] = (uint8_t)a;
			x[(2 * a + 1) * 256 + b] = (uint8_t)b;
		}
	for (k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
		cmd_init(&c, VNPU_OP_POOL2D);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG, .kernel_h = 1,
			.kernel_w = 2, .stride_h = 1, .stride_w = 2 };
		c.t[0] = tdesc(VNPU_DT_UINT8, 4, dx);
		tquant(&c.t[0], p[k].sx, p[k].zx);
		c.t[3] = tdesc(VNPU_DT_UINT8, 4, dy);
		tquant(&c.t[3], p[k].sy, p[k].zy);
		run(&c, x, NULL, NULL, y);
		for (a = 0; a < 256; a++)
			for (b = 0; b < 256; b++) {
				float fa = (float)((double)(a - p[k].zx) * (double)p[k].sx);
				float fb = (float)((double)(b - p[k].zx) * (double)p[k].sx);
				float mean = (float)((double)(float)((double)fa + (double)fb) / 2.0);
				float t = (float)((double)mean / (double)p[k].sy);
				double q = nearbyint((float)((double)t + (double)p[k].zy));
				double ql = nearbyint(t) + p[k].zy;
				int32_t want = q < 0 ? 0 : q > 255 ? 255 : (int32_t)q;

				ql = ql < 0 ? 0 : ql > 255 ? 255 : ql;
				tie_differs += k == 0 && (int32_t)ql != want;
				if (y[a * 256 + b] != want) {
					fprintf(stderr, "avg, set %u: a %d b %d: %d, want %d\n", k,
						a, b, y[a * 256 + b], want);
					fail();
				}
			}
	}
	assert_true(tie_differs > 0);
}

/*
 * SOFTMAX with VNPU_ROUND_ORT_QLINEAR over every pair of codes (a run of
 * two along axis 1), int8 and uint8, against QLinearSoftmax's formula
 * evaluated here: exp((i - 255 + shift) * sx) in double rounded to float,
 * shift from log(FLT_MAX / 2), entries summed in float, then
 * nearbyint(e * floor(1 / sy) / sum) + zy, capped at 255, wrapped for
 * int8.  A run of one under a tiny y scale divides infinity: the output
 * is zy for uint8 and -1 for int8 with a negative zy, as on x86-64.
 */
static void test_softmax_qlinear(void **state)
{
	static const uint32_t dx[2] = { 256 * 256, 2 }, d1[2] = { 1, 1 };
	static uint8_t x[256 * 256 * 2], y[256 * 256 * 2];
	const float sx = 0.0813f, sy = 1.0f / 256.0f;
	struct vnpu_cmd_compute c;
	unsigned int sgn, wraps = 0;
	double shift = log((double)(FLT_MAX / 2.0f)) - 5.0;
	float table[256];
	int32_t a, b, k;

	(void)state;
	shift /= (double)sx;
	for (k = 0; k < 256; k++)
		table[k] = (float)exp(((double)k - 255.0 + shift) * (double)sx);
	for (sgn = 0; sgn < 2; sgn++) {
		int32_t lo = sgn ? -128 : 0, zy = sgn ? -128 : 0;

		for (a = 0; a < 256; a++)
			for (b = 0; b < 256; b++) {
				x[(a * 256 + b) * 2] = (uint8_t)(lo + a);
				x[(a * 256 + b) * 2 + 1] = (uint8_t)(lo + b);
			}
		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.softmax.axis = 1;
		c.t[0] = tdesc(sgn ? VNPU_DT_INT8 : VNPU_DT_UINT8, 2, dx);
		tquant(&c.t[0], sx, sgn ? -7 : 121);
		c.t[3] = tdesc(c.t[0].dtype, 2, dx);
		tquant(&c.t[3], sy, zy);
		run(&c, x, NULL, NULL, y);
		for (a = 0; a < 256; a++)
			for (b = 0; b < 256; b++) {
				int32_t mx = a > b ? a : b, j;
				float ea = table[255 - (mx - a)], eb = table[255 - (mx - b)];
				float sum = (float)((double)ea + (double)eb);

				for (j = 0; j < 2; j++) {
					float e = j ? eb : ea;
					double q = nearbyint((float)((double)(float)((double)e * 256.0) /
								     (double)sum)) + zy;
					uint8_t want = (uint8_t)(q > 255 ? 255 : q);

					wraps += sgn && q > 127;
					if (y[(a * 256 + b) * 2 + j] != want) {
						fprintf(stderr, "softmax %s: %d %d [%d]: %d, want %d\n",
							sgn ? "int8" : "uint8", a, b, j,
							y[(a * 256 + b) * 2 + j], want);
						fail();
					}
				}
			}
	}
	/* probabilities of 1 (q = 256 - 128 = 128) wrap to -128 */
	assert_true(wraps > 0);

	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.round = VNPU_ROUND_ORT_QLINEAR;
	c.attr.softmax.axis = 1;
	c.t[0] = tdesc(VNPU_DT_UINT8, 2, d1);
	tquant(&c.t[0], 1.0f, 0);
	c.t[3] = tdesc(VNPU_DT_UINT8, 2, d1);
	tquant(&c.t[3], 1e-3f, 9);
	x[0] = 200;
	run(&c, x, NULL, NULL, y);
	assert_int_equal(y[0], 9);
	c.t[0].dtype = c.t[3].dtype = VNPU_DT_INT8;
	c.t[3].zero_point = (uint32_t)-9;
	run(&c, x, NULL, NULL, y);
	assert_int_equal((int8_t)y[0], -1);
}

static void test_softmax_layernorm(void **state)
{
	static const uint32_t d[2] = { 1, 3 };
	float x[3] = { 0.0f, logf(2.0f), logf(5.0f) }, y[3], g[3] = { 1, 2, 1 };
	struct vnpu_cmd_compute c;

	(void)state;
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.attr.softmax.axis = 1;
	c.t[0] = tdesc(VNPU_DT_FP32, 2, d);
	c.t[3] = tdesc(VNPU_DT_FP32, 2, d);
	run(&c, x, NULL, NULL, y);
	assert_true(fabsf(y[0] - 0.125f) < 1e-6f && fabsf(y[1] - 0.25f) < 1e-6f &&
		    fabsf(y[2] - 0.625f) < 1e-6f);

	x[0] = 1.0f;
	x[1] = 2.0f;
	x[2] = 3.0f;
	cmd_init(&c, VNPU_OP_LAYERNORM);
	c.attr.layernorm.axis = 1;
	c.t[0] = tdesc(VNPU_DT_FP32, 2, d);
	c.t[1] = tdesc(VNPU_DT_FP32, 1, d + 1);
	c.t[3] = tdesc(VNPU_DT_FP32, 2, d);
	run(&c, x, g, NULL, y);
	/* mean 2, variance 2/3: (x - 2) * sqrt(3/2) */
	assert_true(fabsf(y[0] + 1.2247449f) < 1e-6f && y[1] == 0.0f &&
		    fabsf(y[2] - 1.2247449f) < 1e-6f);
}

static void test_requantize(void **state)
{
	static const uint32_t d[1] = { 4 };
	uint8_t x[4] = { 0, 10, 11, 255 };
	int8_t y[4];
	struct vnpu_cmd_compute c;

	(void)state;
	cmd_init(&c, VNPU_OP_REQUANTIZE);
	c.t[0] = tdesc(VNPU_DT_UINT8, 1, d);
	tquant(&c.t[0], 0.5f, 10);
	c.t[3] = tdesc(VNPU_DT_INT8, 1, d);
	tquant(&c.t[3], 1.0f, -1);
	run(&c, x, NULL, NULL, y);
	/* (x - 10) * 0.5 - 1: -5 - 1, 0 - 1, 0.5 -> 0 (even) - 1, 122.5 -> 122 - 1 */
	assert_int_equal(y[0], -6);
	assert_int_equal(y[1], -1);
	assert_int_equal(y[2], -1);
	assert_int_equal(y[3], 121);
	c.round = VNPU_ROUND_TFLITE;
	run(&c, x, NULL, NULL, y);
	assert_int_equal(y[2], 0);
	assert_int_equal(y[3], 122);
}

static void test_pool_avg(void **state)
{
	static const uint32_t dx[4] = { 1, 2, 2, 1 };
	float x[4] = { 1, 2, 3, 4 }, y[4];
	struct vnpu_cmd_compute c;

	(void)state;
	cmd_init(&c, VNPU_OP_POOL2D);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dx);
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG, .kernel_h = 2, .kernel_w = 2,
		.stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1 };
	run(&c, x, NULL, NULL, y);
	/* y[0,0] sees x[0] only; y[1,1] sees all four */
	assert_true(y[0] == 1.0f && y[1] == 1.5f && y[3] == 2.5f);
	c.attr.pool.flags = VNPU_POOL_COUNT_INCLUDE_PAD;
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == 0.25f && y[3] == 2.5f);
}

static void test_clip(void **state)
{
	static const uint32_t d[1] = { 5 };
	float x[5] = { -3.0f, -1.0f, 0.5f, 2.0f, NAN }, y[5];
	int8_t xi[5] = { -128, -5, 0, 5, 127 }, yi[5];
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	cmd_init(&c, VNPU_OP_ACTIVATION);
	c.act = VNPU_ACT_CLIP;
	c.attr.activation.clip_min = f2u(-1.0f);
	c.attr.activation.clip_max = f2u(1.0f);
	c.t[0] = tdesc(VNPU_DT_FP32, 1, d);
	c.t[3] = tdesc(VNPU_DT_FP32, 1, d);
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == -1.0f && y[1] == -1.0f && y[2] == 0.5f &&
		    y[3] == 1.0f && isnan(y[4]));
	/* An integer tensor clips exactly with the identity quantization. */
	c.t[0] = tdesc(VNPU_DT_INT8, 1, d);
	c.t[3] = tdesc(VNPU_DT_INT8, 1, d);
	tquant(&c.t[0], 1.0f, 0);
	tquant(&c.t[3], 1.0f, 0);
	c.attr.activation.clip_min = f2u(-INFINITY);
	c.attr.activation.clip_max = f2u(3.0f);
	run(&c, xi, NULL, NULL, yi);
	assert_true(yi[0] == -128 && yi[1] == -5 && yi[3] == 3 && yi[4] == 3);
	/* NaN or crossed bounds, or CLIP fused into another op, are invalid. */
	c.attr.activation.clip_min = f2u(NAN);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.attr.activation.clip_min = f2u(4.0f);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.attr.activation.clip_min = 0;
	c.attr.activation.reserved[0] = 1;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.attr.activation.reserved[0] = 0;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	c.act = VNPU_ACT_RELU;	/* bounds are CLIP's only */
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.act = VNPU_ACT_CLIP;
	c.t[0] = tdesc(VNPU_DT_FP32, 1, d);
	c.t[1] = tdesc(VNPU_DT_FP32, 1, d);
	c.t[3] = tdesc(VNPU_DT_FP32, 1, d);
	c.t[0].va = c.t[1].va = c.t[3].va = 0x1000;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
}

static void test_pool_dilation(void **state)
{
	static const uint32_t dx[4] = { 1, 1, 5, 1 }, dy[4] = { 1, 1, 3, 1 };
	float x[5] = { 1, 9, 2, 8, 3 }, y[3];
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	cmd_init(&c, VNPU_OP_POOL2D);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_MAX, .kernel_h = 1,
		.kernel_w = 2, .stride_h = 1, .stride_w = 1, .dilation_w = 2 };
	/* taps (0,2), (1,3), (2,4) */
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == 2.0f && y[1] == 9.0f && y[2] == 3.0f);
	c.attr.pool.kind = VNPU_POOL_AVG;
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == 1.5f && y[1] == 8.5f && y[2] == 2.5f);
	/* the output extent follows the dilated window: 4 outputs is wrong */
	c.t[3].dims[2] = 4;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	/* pad may reach up to, not including, the dilated extent (3) */
	c.t[3].dims[2] = 5;
	c.attr.pool.pad_left = 2;
	c.attr.pool.pad_right = 0;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	c.attr.pool.pad_left = 3;
	c.t[3].dims[2] = 6;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
}

static void test_cpu_int_eltwise(void **state)
{
	static const uint32_t d[1] = { 4 };
	uint8_t a[4] = { 200, 3, 0, 255 }, b[4] = { 100, 5, 1, 255 }, y[4];
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	cmd_init(&c, VNPU_REF_OP_INT_ELTWISE);
	c.t[0] = tdesc(VNPU_DT_UINT8, 1, d);
	c.t[1] = tdesc(VNPU_DT_UINT8, 1, d);
	c.t[3] = tdesc(VNPU_DT_UINT8, 1, d);
	c.attr.eltwise.kind = VNPU_ELTWISE_ADD;
	run(&c, a, b, NULL, y);
	assert_true(y[0] == 44 && y[1] == 8 && y[2] == 1 && y[3] == 254);
	c.attr.eltwise.kind = VNPU_ELTWISE_SUB;
	run(&c, a, b, NULL, y);
	assert_true(y[0] == 100 && y[1] == 254 && y[2] == 255 && y[3] == 0);
	c.attr.eltwise.kind = VNPU_ELTWISE_MUL;
	run(&c, a, b, NULL, y);
	assert_true(y[0] == (uint8_t)20000 && y[1] == 15 && y[2] == 0 && y[3] == 1);
	/* CPU-only: no device takes it, the reference does. */
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), 0);
	/* one dtype throughout, no quantization, no fused activation */
	c.t[1].dtype = VNPU_DT_INT8;
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.t[1].dtype = VNPU_DT_UINT8;
	tquant(&c.t[1], 1.0f, 0);
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.t[1] = tdesc(VNPU_DT_UINT8, 1, d);
	c.t[1].va = 0x2000;
	c.act = VNPU_ACT_RELU;
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
	c.act = 0;
	c.t[0].dtype = c.t[1].dtype = c.t[3].dtype = VNPU_DT_FP32;
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
}

static void test_cpu_pool3d(void **state)
{
	/* X [1, 2, 2, 2, 1]: a 2x2x2 cube; window 2x2x2 with begin pad 1 */
	static const uint32_t dx[5] = { 1, 2, 2, 2, 1 }, dy[5] = { 1, 2, 2, 2, 1 };
	float x[8] = { 1, 2, 3, 4, 5, 6, 8, 7 }, y[8];
	int32_t ind[8];
	struct vnpu_ref_attr_pool3d at = {
		.kind = VNPU_POOL_MAX, .kernel = { 2, 2, 2 }, .stride = { 1, 1, 1 },
		.dilation = { 1, 1, 1 }, .pad_begin = { 1, 1, 1 },
	};
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	cmd_init(&c, VNPU_REF_OP_POOL3D);
	c.t[0] = tdesc(VNPU_DT_FP32, 5, dx);
	c.t[2] = tdesc(VNPU_DT_INT32, 5, dy);
	c.t[3] = tdesc(VNPU_DT_FP32, 5, dy);
	memcpy(c.attr.raw, &at, sizeof(at));
	run(&c, x, NULL, ind, y);
	/* y[d,h,w] = max of x[<=d, <=h, <=w] */
	assert_true(y[0] == 1 && y[1] == 2 && y[3] == 4 && y[6] == 8 && y[7] == 8);
	assert_true(ind[0] == 0 && ind[3] == 3 && ind[6] == 6 && ind[7] == 6);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	at.kind = VNPU_POOL_AVG;	/* indices are MAX's only */
	memcpy(c.attr.raw, &at, sizeof(at));
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
	memset(&c.t[2], 0, sizeof(c.t[2]));
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == 1 && y[7] == 4.5f);
	at.flags = VNPU_POOL_COUNT_INCLUDE_PAD;
	memcpy(c.attr.raw, &at, sizeof(at));
	run(&c, x, NULL, NULL, y);
	assert_true(y[0] == 0.125f && y[7] == 4.5f);
	at.pad_begin[2] = 2;	/* pad as large as the window */
	memcpy(c.attr.raw, &at, sizeof(at));
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
	at.pad_begin[2] = 1;
	at.reserved = 1;
	memcpy(c.attr.raw, &at, sizeof(at));
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantize_rounding),
		cmocka_unit_test(test_qmul),
		cmocka_unit_test(test_fp16_bf16),
		cmocka_unit_test(test_gemm_int8_exact),
		cmocka_unit_test(test_conv_pad),
		cmocka_unit_test(test_eltwise_bcast),
		cmocka_unit_test(test_eltwise_qlinear),
		cmocka_unit_test(test_pool_gap_qlinear),
		cmocka_unit_test(test_pool_avg_qlinear),
		cmocka_unit_test(test_softmax_qlinear),
		cmocka_unit_test(test_softmax_layernorm),
		cmocka_unit_test(test_requantize),
		cmocka_unit_test(test_pool_avg),
		cmocka_unit_test(test_clip),
		cmocka_unit_test(test_pool_dilation),
		cmocka_unit_test(test_cpu_int_eltwise),
		cmocka_unit_test(test_cpu_pool3d),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
