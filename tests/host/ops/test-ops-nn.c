// SPDX-License-Identifier: MIT
/*
 * CONV_TRANSPOSE, REDUCE, the ELTWISE kinds DIV/MAX/MIN/POW and the
 * activations HARD_SIGMOID..NEG:
 *
 * - known values worked out by hand (and the IEEE special cases);
 * - thousands of random shapes where both the reference and the engine
 *   (vnpu_compute_exec() over a flat memory) must equal an independent
 *   implementation written here the other way round (CONV_TRANSPOSE as
 *   a scatter, REDUCE as a loop over X): with small integer values in
 *   fp32 every sum is exact, so they must agree bit for bit whatever the
 *   order; quantized and fp16 cases compare engine with reference;
 * - fp32 CONV_TRANSPOSE and SOFTMAX with full-mantissa values (where the
 *   order of summation shows): engine and reference bit for bit, but for
 *   CONV_TRANSPOSE's phase path (the CONV2D kernels' order), within the
 *   bound any order of the sum keeps;
 * - QLinear SOFTMAX on 8-bit codes: the engine's path byte for byte with
 *   the reference, ties, saturation and overflowing quotients included;
 * - malformed commands, each refused at the byte offset of its field.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_ref_qlinear.h"

#define MEM_SIZE	(16u << 20)

static struct flat f;
static uint64_t rs = 0x243f6a8885a308d3ull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

/* Small integers: fp32 sums of up to 2^16 of their products are exact. */
static float small_int(void)
{
	return (float)((int)rnd(9) - 4);
}

static float rd32(uint64_t va, uint64_t i)
{
	float v;

	memcpy(&v, (uint8_t *)flat_host(&f, va) + 4 * i, 4);
	return v;
}

static void wr32(uint64_t va, uint64_t i, float v)
{
	memcpy((uint8_t *)flat_host(&f, va) + 4 * i, &v, 4);
}

static uint64_t alloc_f32(uint64_t n, bool fill)
{
	uint64_t va = flat_alloc(&f, 4 * n), i;

	assert_true(va != 0);
	for (i = 0; i < n; i++)
		wr32(va, i, fill ? small_int() : NAN);
	return va;
}

/* Run @c through the reference and through the engine; 0 from both. */
static void run_both(struct vnpu_cmd_compute *c, uint64_t yva, uint64_t n,
		     float *ref, float *eng)
{
	uint64_t cycles = 0, i;

	assert_int_equal(flat_ref(&f, c), 0);
	for (i = 0; i < n; i++) {
		ref[i] = rd32(yva, i);
		wr32(yva, i, NAN);
	}
	assert_int_equal(flat_exec(&f, c, sizeof(*c), &cycles), 0);
	assert_true(cycles > 0);
	for (i = 0; i < n; i++)
		eng[i] = rd32(yva, i);
}

/* ---- Known values ---------------------------------------------------------- */

static void run_ref(struct vnpu_cmd_compute *c, void *a, void *b, void *bias,
		    void *y)
{
	struct vnpu_op_bind bind = { { a, b, bias, y }, { NULL } };
	int i;

	for (i = 0; i < 4; i++)
		if (c->t[i].dtype)
			c->t[i].va = 0x1000 * (i + 1);
	assert_int_equal(vnpu_ref_run(c, &bind), 0);
}

static void test_convt_known(void **state)
{
	static const uint32_t dx[4] = { 1, 2, 2, 1 }, dw[4] = { 1, 2, 2, 1 };
	uint32_t dy[4] = { 1, 4, 4, 1 };
	float x[4] = { 1, 2, 3, 4 }, w[4] = { 1, 10, 100, 1000 }, y[64];
	float bias = 0.5f;
	struct vnpu_cmd_compute c;
	int i, j;

	(void)state;
	/* Stride 2, 2x2 kernel: every input pixel paints its own block. */
	cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
	c.attr.convt.stride_h = c.attr.convt.stride_w = 2;
	c.attr.convt.dilation_h = c.attr.convt.dilation_w = 1;
	c.attr.convt.groups = 1;
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c.t[2] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 1 });
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	run_ref(&c, x, w, &bias, y);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			assert_true(y[i * 4 + j] == x[(i / 2) * 2 + j / 2] *
				    w[(i % 2) * 2 + j % 2] + 0.5f);
	/* Stride 1: overlaps add up; y[1][1] collects all four taps. */
	c.attr.convt.stride_h = c.attr.convt.stride_w = 1;
	c.t[3].dims[1] = c.t[3].dims[2] = 3;
	memset(&c.t[2], 0, sizeof(c.t[2]));
	run_ref(&c, x, w, NULL, y);
	assert_true(y[0] == 1 && y[2] == 20 && y[4] == 1 * 1000 + 2 * 100 + 3 * 10 + 4);
	/* Padding crops, output padding extends at the end only. */
	c.attr.convt.pad_top = c.attr.convt.pad_left = 1;
	c.attr.convt.pad_bottom = c.attr.convt.pad_right = 1;
	c.t[3].dims[1] = c.t[3].dims[2] = 1;
	run_ref(&c, x, w, NULL, y);
	assert_true(y[0] == 1234);
	memset(&c.attr.convt, 0, sizeof(c.attr.convt));
	c.attr.convt.stride_h = 2;
	c.attr.convt.stride_w = 1;
	c.attr.convt.dilation_h = c.attr.convt.dilation_w = 1;
	c.attr.convt.groups = 1;
	c.attr.convt.out_pad_h = 1;
	c.t[3].dims[1] = 5;	/* (2 - 1) * 2 + (2 - 1) + 1 + 1 */
	c.t[3].dims[2] = 3;
	run_ref(&c, x, w, NULL, y);
	assert_true(y[0] == 1 && y[3] == 100 && y[6] == 3 && y[11] == 4000 &&
		    y[12] == 0 && y[14] == 0);
}

static void test_reduce_known(void **state)
{
	static const uint32_t dx[3] = { 2, 3, 2 };
	float x[12], y[12];
	struct vnpu_cmd_compute c;
	int i;

	(void)state;
	for (i = 0; i < 12; i++)
		x[i] = (float)(i - 5);
	cmd_init(&c, VNPU_OP_REDUCE);
	c.t[0] = tdesc(VNPU_DT_FP32, 3, dx);
	c.t[3] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 2, 1, 2 });
	c.attr.reduce.axes = 2;
	c.attr.reduce.kind = VNPU_REDUCE_SUM;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == -5 - 3 - 1 && y[3] == 2 + 4 + 6);
	c.attr.reduce.kind = VNPU_REDUCE_MEAN;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == -3.0f && y[3] == 4.0f);
	c.attr.reduce.kind = VNPU_REDUCE_MAX;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == -1 && y[1] == 0);
	c.attr.reduce.kind = VNPU_REDUCE_MIN;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == -5 && y[3] == 2);
	c.attr.reduce.kind = VNPU_REDUCE_SUM_SQUARE;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == 25 + 9 + 1);
	c.attr.reduce.kind = VNPU_REDUCE_L2;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == sqrtf(35.0f));
	/* Everything at once, and NaN winning over max/min. */
	c.attr.reduce.axes = 7;
	c.t[3].dims[0] = c.t[3].dims[2] = 1;
	c.attr.reduce.kind = VNPU_REDUCE_SUM;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(y[0] == 6);
	x[7] = NAN;
	c.attr.reduce.kind = VNPU_REDUCE_MAX;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(isnan(y[0]));
	c.attr.reduce.kind = VNPU_REDUCE_MIN;
	run_ref(&c, x, NULL, NULL, y);
	assert_true(isnan(y[0]));
}

static float eltwise1(unsigned int kind, float a, float b)
{
	struct vnpu_cmd_compute c;
	uint32_t one = 1;
	float y;

	cmd_init(&c, VNPU_OP_ELTWISE);
	c.attr.eltwise.kind = kind;
	c.t[0] = tdesc(VNPU_DT_FP32, 1, &one);
	c.t[1] = tdesc(VNPU_DT_FP32, 1, &one);
	c.t[3] = tdesc(VNPU_DT_FP32, 1, &one);
	run_ref(&c, &a, &b, NULL, &y);
	return y;
}

static float act1(unsigned int act, float alpha, float beta, float x)
{
	struct vnpu_cmd_compute c;
	uint32_t one = 1;
	float y;

	cmd_init(&c, VNPU_OP_ACTIVATION);
	c.act = (uint8_t)act;
	if (act == VNPU_ACT_HARD_SIGMOID) {
		c.act_alpha = f2u(alpha);
		c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(beta);
	}
	c.t[0] = tdesc(VNPU_DT_FP32, 1, &one);
	c.t[3] = tdesc(VNPU_DT_FP32, 1, &one);
	run_ref(&c, &x, NULL, NULL, &y);
	return y;
}

static void test_eltwise_act_known(void **state)
{
	(void)state;
	assert_true(eltwise1(VNPU_ELTWISE_DIV, 1.0f, 4.0f) == 0.25f);
	assert_true(eltwise1(VNPU_ELTWISE_DIV, -1.0f, 0.0f) == -INFINITY);
	assert_true(isnan(eltwise1(VNPU_ELTWISE_DIV, 0.0f, 0.0f)));
	assert_true(eltwise1(VNPU_ELTWISE_MAX, -1.0f, 2.0f) == 2.0f);
	assert_true(eltwise1(VNPU_ELTWISE_MIN, -1.0f, 2.0f) == -1.0f);
	assert_true(isnan(eltwise1(VNPU_ELTWISE_MAX, NAN, 2.0f)));
	assert_true(isnan(eltwise1(VNPU_ELTWISE_MIN, 2.0f, NAN)));
	assert_true(eltwise1(VNPU_ELTWISE_POW, 3.0f, 2.0f) == 9.0f);
	assert_true(eltwise1(VNPU_ELTWISE_POW, 1.1f, 2.0f) == 1.1f * 1.1f);
	assert_true(eltwise1(VNPU_ELTWISE_POW, 2.0f, 0.5f) == sqrtf(2.0f));
	assert_true(eltwise1(VNPU_ELTWISE_POW, -INFINITY, 0.5f) == INFINITY);
	assert_true(!signbit(eltwise1(VNPU_ELTWISE_POW, -0.0f, 0.5f)));
	assert_true(isnan(eltwise1(VNPU_ELTWISE_POW, -4.0f, 0.5f)));
	assert_true(eltwise1(VNPU_ELTWISE_POW, 2.0f, -1.0f) == 0.5f);
	assert_true(eltwise1(VNPU_ELTWISE_POW, 0.0f, 0.0f) == 1.0f);

	assert_true(act1(VNPU_ACT_HARD_SIGMOID, 0.5f, 0.6f, 0.5f) == 0.85f);
	assert_true(act1(VNPU_ACT_HARD_SIGMOID, 0.5f, 0.6f, 3.0f) == 1.0f);
	assert_true(act1(VNPU_ACT_HARD_SIGMOID, 0.5f, 0.6f, -3.0f) == 0.0f);
	assert_true(isnan(act1(VNPU_ACT_HARD_SIGMOID, 0.2f, 0.5f, NAN)));
	assert_true(act1(VNPU_ACT_HARD_SWISH, 0, 0, 3.0f) == 3.0f);
	assert_true(act1(VNPU_ACT_HARD_SWISH, 0, 0, -3.0f) == 0.0f);
	assert_true(act1(VNPU_ACT_HARD_SWISH, 0, 0, 0.0f) == 0.0f);
	assert_true(act1(VNPU_ACT_SQRT, 0, 0, 16.0f) == 4.0f);
	assert_true(isnan(act1(VNPU_ACT_SQRT, 0, 0, -1.0f)));
	assert_true(act1(VNPU_ACT_RECIPROCAL, 0, 0, 4.0f) == 0.25f);
	assert_true(act1(VNPU_ACT_RECIPROCAL, 0, 0, -0.0f) == -INFINITY);
	assert_true(act1(VNPU_ACT_EXP, 0, 0, 0.0f) == 1.0f);
	assert_true(act1(VNPU_ACT_LOG, 0, 0, 1.0f) == 0.0f);
	assert_true(act1(VNPU_ACT_LOG, 0, 0, 0.0f) == -INFINITY);
	assert_true(act1(VNPU_ACT_ABS, 0, 0, -2.5f) == 2.5f);
	assert_true(act1(VNPU_ACT_NEG, 0, 0, 2.5f) == -2.5f);
}

/*
 * ACTIVATION with a scale/shift operand: BatchNormalization over NCHW
 * (P [2, C, 1, 1]) and NHWC (P [2, C]), worked out by hand, through the
 * reference and the engine.
 */
static void test_affine_known(void **state)
{
	static const uint32_t dx[4] = { 1, 2, 2, 2 };
	static const float pv[4] = { 2.0f, -1.0f, 1.0f, 0.5f };
	/* NCHW: channel 0 is x * 2 + 1, channel 1 is -x + 0.5. */
	static const float nchw[8] = { 1, 3, 5, 7, -3.5f, -4.5f, -5.5f, -6.5f };
	/* NHWC: channels alternate innermost. */
	static const float nhwc[8] = { 1, -0.5f, 5, -2.5f, 9, -4.5f, 13, -6.5f };
	struct vnpu_cmd_compute c;
	float ref[8], eng[8];
	int layout, relu, i;

	(void)state;
	for (layout = 0; layout < 2; layout++) {
		for (relu = 0; relu < 2; relu++) {
			const float *want = layout ? nhwc : nchw;
			uint32_t dp[4] = { 2, 2, 1, 1 };

			flat_reset(&f);
			cmd_init(&c, VNPU_OP_ACTIVATION);
			c.act = relu ? VNPU_ACT_RELU : VNPU_ACT_NONE;
			c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
			c.t[1] = tdesc(VNPU_DT_FP32, layout ? 2 : 4, dp);
			c.t[3] = tdesc(VNPU_DT_FP32, 4, dx);
			c.t[0].va = alloc_f32(8, false);
			c.t[1].va = alloc_f32(4, false);
			c.t[3].va = alloc_f32(8, false);
			for (i = 0; i < 8; i++)
				wr32(c.t[0].va, i, (float)i);
			for (i = 0; i < 4; i++)
				wr32(c.t[1].va, i, pv[i]);
			run_both(&c, c.t[3].va, 8, ref, eng);
			for (i = 0; i < 8; i++) {
				float w = relu && want[i] < 0 ? 0.0f : want[i];

				assert_true(ref[i] == w);
				assert_true(eng[i] == w);
			}
		}
	}
}

/* ---- Random shapes against independent implementations --------------------- */

static void one_convt(bool check_exact)
{
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv_transpose *at = &c.attr.convt;
	uint32_t nb = 1 + rnd(2), h = 1 + rnd(6), w = 1 + rnd(6), g = 1 + rnd(3);
	uint32_t cig = 1 + rnd(4), cog = 1 + rnd(5), kh = 1 + rnd(4), kw = 1 + rnd(4);
	uint32_t ch = g * cig, co = g * cog, b, iy, ix, ci, ky, kx, mo;
	uint64_t full_h, full_w, ny, i;
	uint32_t dx[4], dw[4], dy[4], oh, ow;
	uint64_t xva, wva, bva = 0, yva;
	float *want, *ref, *eng;
	bool affine = false;

	cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
	at->groups = g;
	at->stride_h = 1 + rnd(3);
	at->stride_w = 1 + rnd(3);
	at->dilation_h = 1 + rnd(2);
	at->dilation_w = 1 + rnd(2);
	at->out_pad_h = rnd(at->stride_h > at->dilation_h ? at->stride_h : at->dilation_h);
	at->out_pad_w = rnd(at->stride_w > at->dilation_w ? at->stride_w : at->dilation_w);
	full_h = (uint64_t)(h - 1) * at->stride_h + (kh - 1) * at->dilation_h + 1 + at->out_pad_h;
	full_w = (uint64_t)(w - 1) * at->stride_w + (kw - 1) * at->dilation_w + 1 + at->out_pad_w;
	at->pad_top = rnd((uint32_t)full_h);
	at->pad_bottom = rnd((uint32_t)(full_h - at->pad_top));
	at->pad_left = rnd((uint32_t)full_w);
	at->pad_right = rnd((uint32_t)(full_w - at->pad_left));
	oh = (uint32_t)(full_h - at->pad_top - at->pad_bottom);
	ow = (uint32_t)(full_w - at->pad_left - at->pad_right);
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = ch;
	dw[0] = ch; dw[1] = kh; dw[2] = kw; dw[3] = cog;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = co;
	ny = (uint64_t)nb * oh * ow * co;
	flat_reset(&f);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	xva = c.t[0].va = alloc_f32((uint64_t)nb * h * w * ch, true);
	wva = c.t[1].va = alloc_f32((uint64_t)ch * kh * kw * cog, true);
	switch (rnd(3)) {
	case 1:
		c.t[2] = tdesc(VNPU_DT_FP32, 1, &co);
		bva = c.t[2].va = alloc_f32(co, true);
		break;
	case 2:		/* per-channel scale and shift: [2, CO] */
		c.t[2] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, co });
		bva = c.t[2].va = alloc_f32(2ull * co, true);
		affine = true;
		break;
	}
	if (!check_exact) {
		/* Engine against reference only: an activation and fp16 output. */
		c.act = (uint8_t)(rnd(2) ? VNPU_ACT_HARD_SWISH : VNPU_ACT_HARD_SIGMOID);
		if (c.act == VNPU_ACT_HARD_SIGMOID) {
			c.act_alpha = f2u(0.2f);
			c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(0.5f);
		}
	}
	yva = c.t[3].va = alloc_f32(ny, false);
	want = calloc(ny, 4);
	ref = calloc(ny, 4);
	eng = calloc(ny, 4);
	assert_non_null(want);
	assert_non_null(ref);
	assert_non_null(eng);
	/* The scatter: each input pixel adds W * x into the output it hits. */
	for (b = 0; b < nb; b++)
		for (iy = 0; iy < h; iy++)
			for (ix = 0; ix < w; ix++)
				for (ci = 0; ci < ch; ci++)
					for (ky = 0; ky < kh; ky++)
						for (kx = 0; kx < kw; kx++)
							for (mo = 0; mo < cog; mo++) {
								int64_t oy = (int64_t)iy * at->stride_h - at->pad_top + (int64_t)ky * at->dilation_h;
								int64_t ox = (int64_t)ix * at->stride_w - at->pad_left + (int64_t)kx * at->dilation_w;
								uint32_t oc = ci / cig * cog + mo;

								if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
									continue;
								want[(((uint64_t)b * oh + oy) * ow + ox) * co + oc] +=
									rd32(xva, (((uint64_t)b * h + iy) * w + ix) * ch + ci) *
									rd32(wva, (((uint64_t)ci * kh + ky) * kw + kx) * cog + mo);
							}
	if (affine)
		for (i = 0; i < ny; i++)
			want[i] = want[i] * rd32(bva, i % co) + rd32(bva, co + i % co);
	else if (bva)
		for (i = 0; i < ny; i++)
			want[i] += rd32(bva, i % co);
	run_both(&c, yva, ny, ref, eng);
	for (i = 0; i < ny; i++) {
		if (memcmp(&ref[i], &eng[i], 4)) {
			fprintf(stderr, "convt engine %g != ref %g at %llu: %ux%ux%ux%u, W %ux%u, "
				"groups %u, cog %u, stride %ux%u, dilation %ux%u, pads %u %u %u %u, "
				"out pad %ux%u\n", eng[i], ref[i], (unsigned long long)i,
				nb, h, w, ch, kh, kw, g, cog, at->stride_h, at->stride_w,
				at->dilation_h, at->dilation_w, at->pad_top, at->pad_left,
				at->pad_bottom, at->pad_right, at->out_pad_h, at->out_pad_w);
			fail();
		}
		if (check_exact && want[i] != ref[i]) {
			fprintf(stderr, "convt ref %g != scatter %g at %llu\n", ref[i], want[i],
				(unsigned long long)i);
			fail();
		}
	}
	free(want);
	free(ref);
	free(eng);
}

static void test_convt_random(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 1500; i++)
		one_convt(i % 4 != 3);
}

/* Quantized CONV_TRANSPOSE: the engine must equal the reference byte for byte. */
static void test_convt_int8(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 400; it++) {
		struct vnpu_cmd_compute c, cc;
		struct vnpu_op_info info;
		uint32_t g = 1 + rnd(2), cig = 1 + rnd(5), cog = 1 + rnd(6);
		uint32_t dx[4] = { 1 + rnd(2), 1 + rnd(5), 1 + rnd(5), g * cig };
		uint32_t dw[4] = { g * cig, 1 + rnd(3), 1 + rnd(3), cog };
		uint32_t dy[4], co = g * cog;
		uint8_t *snap;
		uint64_t i, n, cycles;

		cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
		c.attr.convt.groups = g;
		c.attr.convt.stride_h = 1 + rnd(2);
		c.attr.convt.stride_w = 1 + rnd(2);
		c.attr.convt.dilation_h = c.attr.convt.dilation_w = 1;
		dy[0] = dx[0];
		dy[1] = (dx[1] - 1) * c.attr.convt.stride_h + dw[1];
		dy[2] = (dx[2] - 1) * c.attr.convt.stride_w + dw[2];
		dy[3] = co;
		flat_reset(&f);
		c.t[0] = tdesc(rnd(2) ? VNPU_DT_INT8 : VNPU_DT_UINT8, 4, dx);
		c.t[1] = tdesc(rnd(2) ? VNPU_DT_INT8 : VNPU_DT_UINT8, 4, dw);
		c.t[3] = tdesc(rnd(4) ? VNPU_DT_INT8 : VNPU_DT_INT32, 4, dy);
		tquant(&c.t[0], 0.02f, c.t[0].dtype == VNPU_DT_INT8 ? -3 : 120);
		tquant(&c.t[1], 0.01f, c.t[1].dtype == VNPU_DT_INT8 ? 2 : 128);
		if (c.t[3].dtype == VNPU_DT_INT8) {
			tquant(&c.t[3], 0.05f + 0.01f * (float)rnd(10), (int32_t)rnd(20) - 10);
			c.act = (uint8_t)rnd(3);	/* none, relu, relu6 */
		}
		if (rnd(2)) {
			c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
			c.t[2].va = flat_alloc(&f, 4ull * co);
			for (i = 0; i < co; i++) {
				int32_t v = (int32_t)rnd(2001) - 1000;

				memcpy((uint8_t *)flat_host(&f, c.t[2].va) + 4 * i, &v, 4);
			}
		}
		for (i = 0; i < 4; i++) {
			if (i == 2)
				continue;
			n = vnpu_dtype_size(c.t[i].dtype);
			n *= (uint64_t)c.t[i].dims[0] * c.t[i].dims[1] * c.t[i].dims[2] * c.t[i].dims[3];
			c.t[i].va = flat_alloc(&f, n);
			for (; n--;)
				((uint8_t *)flat_host(&f, c.t[i].va))[n] = (uint8_t)rnd(256);
		}
		assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
		assert_true(info.quantized);
		n = info.span[3];
		snap = malloc(n);
		assert_int_equal(flat_ref(&f, &c), 0);
		memcpy(snap, flat_host(&f, c.t[3].va), n);
		memset(flat_host(&f, c.t[3].va), 0x5a, n);
		assert_int_equal(flat_exec(&f, &c, sizeof(c), &cycles), 0);
		assert_memory_equal(snap, flat_host(&f, c.t[3].va), n);
		free(snap);
	}
}

static void test_reduce_random(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 2000; it++) {
		struct vnpu_cmd_compute c;
		uint32_t dx[VNPU_MAX_RANK], dy[VNPU_MAX_RANK], idx[VNPU_MAX_RANK] = { 0 };
		int r = 1 + (int)rnd(5), d;
		uint64_t nx = 1, ny = 1, i, xva, yva;
		double *sum;
		float *mx, *mn, *ref, *eng;
		uint64_t *cnt;
		unsigned int kind = rnd(6);
		bool strided = rnd(3) == 0;

		cmd_init(&c, VNPU_OP_REDUCE);
		c.attr.reduce.kind = kind;
		while (!c.attr.reduce.axes)
			c.attr.reduce.axes = rnd(1u << r);
		for (d = 0; d < r; d++) {
			dx[d] = 1 + rnd(5);
			dy[d] = (c.attr.reduce.axes >> d) & 1 ? 1 : dx[d];
			nx *= dx[d];
			ny *= dy[d];
		}
		flat_reset(&f);
		c.t[0] = tdesc(VNPU_DT_FP32, r, dx);
		c.t[3] = tdesc(VNPU_DT_FP32, r, dy);
		xva = c.t[0].va = alloc_f32(2 * nx, true);
		if (strided) {
			/* X transposed in memory: reversed dims order, padded. */
			uint64_t st = 2;

			c.t[0].flags = VNPU_TENSOR_STRIDED;
			for (d = 0; d < r; d++) {
				c.t[0].strides[d] = st;
				st *= dx[d];
			}
		}
		if (rnd(20) == 0 && (kind == VNPU_REDUCE_MAX || kind == VNPU_REDUCE_MIN))
			wr32(xva, 0, NAN);
		yva = c.t[3].va = alloc_f32(ny, false);
		sum = calloc(ny, sizeof(*sum));
		mx = malloc(4 * ny);
		mn = malloc(4 * ny);
		cnt = calloc(ny, sizeof(*cnt));
		ref = malloc(4 * ny);
		eng = malloc(4 * ny);
		/* The other way round: walk X once, fold into the output it feeds. */
		for (i = 0; i < nx; i++) {
			uint64_t yo = 0, xo = 0, ys = 1;
			float v;

			for (d = r - 1; d >= 0; d--) {
				xo += idx[d] * (strided ? c.t[0].strides[d] : 0);
				if (!((c.attr.reduce.axes >> d) & 1)) {
					yo += idx[d] * ys;
					ys *= dx[d];
				}
			}
			if (!strided) {
				for (xo = 0, d = 0; d < r; d++)
					xo = xo * dx[d] + idx[d];
			}
			v = rd32(xva, xo);
			sum[yo] += kind == VNPU_REDUCE_L2 || kind == VNPU_REDUCE_SUM_SQUARE ?
				   (double)v * v : v;
			/* NaN wins; once there it stays. */
			if (!cnt[yo]) {
				mx[yo] = mn[yo] = v;
			} else {
				if (!isnan(mx[yo]) && (isnan(v) || v > mx[yo]))
					mx[yo] = v;
				if (!isnan(mn[yo]) && (isnan(v) || v < mn[yo]))
					mn[yo] = v;
			}
			cnt[yo]++;
			for (d = r - 1; d >= 0; d--) {
				if (++idx[d] < dx[d])
					break;
				idx[d] = 0;
			}
		}
		run_both(&c, yva, ny, ref, eng);
		for (i = 0; i < ny; i++) {
			float w = kind == VNPU_REDUCE_MAX ? mx[i] :
				  kind == VNPU_REDUCE_MIN ? mn[i] :
				  kind == VNPU_REDUCE_MEAN ? (float)(sum[i] / (double)cnt[i]) :
				  kind == VNPU_REDUCE_L2 ? (float)sqrt(sum[i]) : (float)sum[i];

			if (memcmp(&ref[i], &eng[i], 4) ||
			    (memcmp(&w, &ref[i], 4) && !(isnan(w) && isnan(ref[i])))) {
				fprintf(stderr, "reduce kind %u axes %#x: want %g ref %g eng %g\n",
					kind, c.attr.reduce.axes, w, ref[i], eng[i]);
				fail();
			}
		}
		free(sum);
		free(mx);
		free(mn);
		free(cnt);
		free(ref);
		free(eng);
	}
}

/* ---- fp32 CONV_TRANSPOSE and SOFTMAX with real fractions ------------------ */

/* A value with a full mantissa, now and then an IEEE special. */
static float real_val(bool specials)
{
	static const float sp[] = { INFINITY, -INFINITY, NAN, -0.0f, 1e30f, -1e-40f };

	if (specials && rnd(50) == 0)
		return sp[rnd(6)];
	return ((float)rnd(1u << 24) / (float)(1u << 23) - 1.0f) * 3.0f;
}

/*
 * A strided view of @d (rank @r): dims permuted in memory by a random
 * order, gaps between rows; returns the span in elements.
 */
static uint64_t rnd_layout(struct vnpu_tensor_desc *d, int r)
{
	int ord[VNPU_MAX_RANK], i, j;
	uint64_t st = 1 + rnd(2), span = 1;

	for (i = 0; i < r; i++)
		ord[i] = i;
	for (i = r - 1; i > 0; i--) {
		int k = (int)rnd((uint32_t)i + 1), tmp = ord[i];

		ord[i] = ord[k];
		ord[k] = tmp;
	}
	d->flags = VNPU_TENSOR_STRIDED;
	for (i = r - 1; i >= 0; i--) {
		j = ord[i];
		d->strides[j] = st;
		st = st * d->dims[j] + rnd(3);
	}
	for (i = 0; i < r; i++)
		span += (uint64_t)(d->dims[i] - 1) * d->strides[i];
	return span;
}

/* Bit for bit, any NaN matching any NaN (which NaN is unspecified). */
static void same_bits(const float *ref, const float *eng, uint64_t n,
		      const char *what)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (isnan(ref[i]) && isnan(eng[i]))
			continue;
		if (memcmp(&ref[i], &eng[i], 4)) {
			fprintf(stderr, "%s: engine %a != ref %a at %llu\n", what,
				eng[i], ref[i], (unsigned long long)i);
			fail();
		}
	}
}

/*
 * The phase path's float sums run in the CONV2D kernels' order.  Any
 * order of k terms (plus a bias) is within (k + 2) * 2^-23 of the sum of
 * their magnitudes @mag (the reference run over |x|, |w|, |bias|), and
 * the activations here magnify an error at most 1.5 times; then one
 * rounding of the result.  Infinities and NaNs where the reference has
 * them.
 */
static void near_ref(const float *ref, const float *eng, const float *mag,
		     uint64_t n, uint64_t k, const char *what)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		float tol = 2.0f * mag[i] * (float)(k + 2) * 0x1p-23f + fabsf(ref[i]) * 0x1p-22f;

		/* A NaN among the terms: NaN sums, which the activation may clamp. */
		if ((isnan(ref[i]) && isnan(eng[i])) || eng[i] == ref[i])
			continue;
		if (!isinf(ref[i]) && fabsf(eng[i] - ref[i]) <= tol)
			continue;
		fprintf(stderr, "%s: engine %a != ref %a at %llu (tolerance %a)\n", what,
			eng[i], ref[i], (unsigned long long)i, tol);
		fail();
	}
}

/* The reference over |x|, |w| and |bias| (no activation): each output's sum of magnitudes. */
static void magnitudes(const struct vnpu_cmd_compute *c, const uint64_t *n, float *mag)
{
	struct vnpu_cmd_compute m = *c;
	uint64_t i;
	int s;

	m.act = VNPU_ACT_NONE;
	m.act_alpha = 0;
	for (s = 0; s < 4; s++) {
		if (!m.t[s].dtype)
			continue;
		m.t[s].va = flat_alloc(&f, 4 * n[s]);
		assert_true(m.t[s].va != 0);
		for (i = 0; i < n[s] && s != 3; i++)
			wr32(m.t[s].va, i, fabsf(rd32(c->t[s].va, i)));
	}
	assert_int_equal(flat_ref(&f, &m), 0);
	for (i = 0; i < n[3]; i++)
		mag[i] = rd32(m.t[3].va, i);
}

/*
 * The engine's row path keeps the reference's order of summation, so
 * with full-mantissa values (where order shows) it must still agree bit
 * for bit: narrow and wide outputs, groups, strides, dilations, pads,
 * channel-strided (NCHW-like) X and Y, activations, specials.  The phase
 * path (stride phases through the CONV2D kernels) takes the shapes it
 * can and must come within the float tolerance; both must run often.
 */
static void test_convt_float(void **state)
{
	static const uint8_t acts[] = { VNPU_ACT_NONE, VNPU_ACT_RELU, VNPU_ACT_SIGMOID,
					VNPU_ACT_LEAKY_RELU, VNPU_ACT_HARD_SWISH };
	unsigned int rows = 0, phases = 0;
	int it;

	(void)state;
	for (it = 0; it < 1200; it++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_conv_transpose *at = &c.attr.convt;
		uint32_t g = 1 + rnd(3), cig = 1 + rnd(it % 3 ? 6 : 40);
		uint32_t cog = it % 2 ? 1 + rnd(3) : 1 + rnd(12), kh = 1 + rnd(4), kw = 1 + rnd(4);
		uint32_t dx[4] = { 1 + rnd(2), 1 + rnd(7), 1 + rnd(it % 5 ? 9 : 60), g * cig };
		uint32_t dw[4] = { g * cig, kh, kw, cog }, dy[4], co = g * cog;
		uint64_t full_h, full_w, nx, ny, i;
		float *ref, *eng;

		cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
		at->groups = g;
		at->stride_h = 1 + rnd(3);
		at->stride_w = 1 + rnd(3);
		at->dilation_h = 1 + rnd(2);
		at->dilation_w = 1 + rnd(2);
		full_h = (uint64_t)(dx[1] - 1) * at->stride_h + (kh - 1) * at->dilation_h + 1;
		full_w = (uint64_t)(dx[2] - 1) * at->stride_w + (kw - 1) * at->dilation_w + 1;
		at->pad_top = rnd((uint32_t)full_h);
		at->pad_bottom = rnd((uint32_t)(full_h - at->pad_top));
		at->pad_left = rnd((uint32_t)full_w);
		at->pad_right = rnd((uint32_t)(full_w - at->pad_left));
		dy[0] = dx[0];
		dy[1] = (uint32_t)(full_h - at->pad_top - at->pad_bottom);
		dy[2] = (uint32_t)(full_w - at->pad_left - at->pad_right);
		dy[3] = co;
		c.act = acts[rnd(5)];
		if (c.act == VNPU_ACT_LEAKY_RELU)
			c.act_alpha = f2u(0.1f);
		flat_reset(&f);
		c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
		c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
		nx = (uint64_t)dx[0] * dx[1] * dx[2] * dx[3];
		if (rnd(3) == 0)
			nx = rnd_layout(&c.t[0], 4);
		c.t[0].va = flat_alloc(&f, 4 * nx);
		for (i = 0; i < nx; i++)
			wr32(c.t[0].va, i, real_val(true));
		c.t[1].va = flat_alloc(&f, 4ull * dw[0] * kh * kw * cog);
		for (i = 0; i < (uint64_t)dw[0] * kh * kw * cog; i++)
			wr32(c.t[1].va, i, real_val(false));
		if (rnd(2)) {
			c.t[2] = tdesc(VNPU_DT_FP32, 1, &co);
			c.t[2].va = flat_alloc(&f, 4ull * co);
			for (i = 0; i < co; i++)
				wr32(c.t[2].va, i, real_val(false));
		}
		ny = (uint64_t)dy[0] * dy[1] * dy[2] * dy[3];
		if (rnd(3) == 0)
			ny = rnd_layout(&c.t[3], 4);
		c.t[3].va = flat_alloc(&f, 4 * ny);
		assert_true(c.t[0].va && c.t[1].va && c.t[3].va);
		for (i = 0; i < ny; i++)	/* gaps: as run_both() leaves them */
			wr32(c.t[3].va, i, NAN);
		ref = calloc(ny, 4);
		eng = calloc(ny, 4);
		assert_non_null(ref);
		assert_non_null(eng);
		run_both(&c, c.t[3].va, ny, ref, eng);
		if (flat_engine.res.path == VNPU_ENG_CONVT_PHASES) {
			uint64_t n[4] = { nx, (uint64_t)dw[0] * kh * kw * cog, co, ny };
			float *mag = calloc(ny, 4);

			assert_non_null(mag);
			magnitudes(&c, n, mag);
			near_ref(ref, eng, mag, ny, (uint64_t)kh * kw * cig, "convt phases");
			free(mag);
			phases++;
		} else {
			assert_int_equal(flat_engine.res.path, VNPU_ENG_CONVT);
			same_bits(ref, eng, ny, "convt");
			rows++;
		}
		free(ref);
		free(eng);
	}
	printf("# fp32 CONV_TRANSPOSE: %u cases on the phase path, %u on the row path\n",
	       phases, rows);
	assert_true(phases >= 600 && rows >= 100);
}

/*
 * SOFTMAX on fp32: the engine repeats the reference's arithmetic, so bit
 * for bit along any axis, over strided and in-place operands, rows from
 * one element to several thousand, with infinities and NaNs in them.
 */
static void test_softmax_float(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 1500; it++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(5), k;
		uint64_t nx = 1, ny, i;
		bool in_place = rnd(6) == 0;
		float *ref, *eng;

		for (k = 0; k < r; k++) {
			d[k] = 1 + rnd(6);
			nx *= d[k];
		}
		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.attr.softmax.axis = rnd((uint32_t)r);
		if (rnd(4) == 0) {
			/* A long axis, the others short: several MB at most. */
			nx = 1;
			for (k = 0; k < r; k++) {
				d[k] = k == (int)c.attr.softmax.axis ?
				       1 + rnd(it % 2 ? 300 : 4000) : 1 + rnd(3);
				nx *= d[k];
			}
		}
		flat_reset(&f);
		c.t[0] = tdesc(VNPU_DT_FP32, r, d);
		c.t[3] = tdesc(VNPU_DT_FP32, r, d);
		if (rnd(3) == 0)
			nx = rnd_layout(&c.t[0], r);
		c.t[0].va = flat_alloc(&f, 4 * nx);
		assert_true(c.t[0].va != 0);
		for (i = 0; i < nx; i++)
			wr32(c.t[0].va, i, rnd(3) ? real_val(rnd(2)) : 40.0f * real_val(false));
		if (in_place) {
			c.t[3] = c.t[0];
			ny = nx;
		} else {
			ny = 1;
			for (k = 0; k < r; k++)
				ny *= d[k];
			if (rnd(3) == 0)
				ny = rnd_layout(&c.t[3], r);
			c.t[3].va = flat_alloc(&f, 4 * ny);
			assert_true(c.t[3].va != 0);
			for (i = 0; i < ny; i++)
				wr32(c.t[3].va, i, NAN);
		}
		ref = calloc(ny, 4);
		eng = calloc(ny, 4);
		assert_non_null(ref);
		assert_non_null(eng);
		if (in_place) {
			/* Each run needs the input back. */
			float *x0 = malloc(4 * nx);
			uint64_t cycles = 0;

			assert_non_null(x0);
			memcpy(x0, flat_host(&f, c.t[0].va), 4 * nx);
			assert_int_equal(flat_ref(&f, &c), 0);
			memcpy(ref, flat_host(&f, c.t[0].va), 4 * nx);
			memcpy(flat_host(&f, c.t[0].va), x0, 4 * nx);
			assert_int_equal(flat_exec(&f, &c, sizeof(c), &cycles), 0);
			memcpy(eng, flat_host(&f, c.t[0].va), 4 * nx);
			free(x0);
		} else {
			run_both(&c, c.t[3].va, ny, ref, eng);
		}
		same_bits(ref, eng, ny, "softmax");
		free(ref);
		free(eng);
	}
}

/*
 * A scale for the QLinear softmax tests: mostly model-like, now and then
 * extreme enough that table entries underflow to 0 (large sx) or the
 * quotient overflows (sy so small that floor(1 / sy) is huge or
 * infinite, 0 * inf then NaN): the conversions of infinities and NaN.
 */
static float qsm_scale(bool is_y)
{
	static const float x_odd[] = { 40.0f, 1e3f, 1e-30f, 1e-45f };
	static const float y_odd[] = { 1.0f / 200.0f, 1e-10f, 1e-40f, 1e-45f, 3.0f };

	switch (rnd(8)) {
	case 0:
		return is_y ? y_odd[rnd(5)] : x_odd[rnd(4)];
	case 1:
		return is_y ? 1.0f / 256.0f : 0.125f;
	default:
		return (float)(1 + rnd(1000)) / (is_y ? 250000.0f : 2000.0f);
	}
}

/*
 * SOFTMAX with VNPU_ROUND_ORT_QLINEAR (QLinearSoftmax on the codes): the
 * engine's own path (not the reference) must give the reference's bytes
 * along any axis, int8 and uint8, over strided and in-place operands,
 * rows of one element to about 7,000 (PP-OCR rec's 6625 classes), rows
 * of one repeated code (every entry a tie at the maximum), codes only at
 * the dtype's ends, and the extreme scales of qsm_scale().
 */
static void test_softmax_qlinear(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 1500; it++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(5), k, fill = (int)rnd(6);
		uint8_t dt = rnd(2) ? VNPU_DT_INT8 : VNPU_DT_UINT8;
		int32_t lo = dt == VNPU_DT_INT8 ? -128 : 0;
		uint64_t nx = 1, ny, i;
		bool in_place = rnd(6) == 0;
		uint8_t *ref, *eng, *x0;
		uint64_t cycles = 0;

		for (k = 0; k < r; k++) {
			d[k] = 1 + rnd(6);
			nx *= d[k];
		}
		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.softmax.axis = rnd((uint32_t)r);
		if (rnd(3) == 0) {
			nx = 1;
			for (k = 0; k < r; k++) {
				d[k] = k == (int)c.attr.softmax.axis ?
				       1 + rnd(it % 2 ? 300 : 7000) : 1 + rnd(4);
				nx *= d[k];
			}
		}
		flat_reset(&f);
		c.t[0] = tdesc(dt, r, d);
		c.t[3] = tdesc(dt, r, d);
		tquant(&c.t[0], qsm_scale(false), lo + (int32_t)rnd(256));
		tquant(&c.t[3], qsm_scale(true), rnd(2) ? lo : lo + (int32_t)rnd(256));
		if (rnd(3) == 0)
			nx = rnd_layout(&c.t[0], r);
		c.t[0].va = flat_alloc(&f, nx);
		assert_true(c.t[0].va != 0);
		for (i = 0; i < nx; i++) {
			uint8_t *b = (uint8_t *)flat_host(&f, c.t[0].va) + i;

			switch (fill) {
			case 0:		/* one code everywhere: all ties */
				*b = 0x5a;
				break;
			case 1:		/* the dtype's two ends */
				*b = rnd(2) ? 0x7f : 0x80;
				break;
			case 2:		/* a narrow band: few keys, the table path */
				*b = (uint8_t)(100 + rnd(5));
				break;
			default:
				*b = (uint8_t)rnd(256);
			}
		}
		if (in_place) {
			c.t[3] = c.t[0];
			c.t[3].scale = f2u(qsm_scale(true));
			c.t[3].zero_point = lo + (int32_t)rnd(256);
			ny = nx;
		} else {
			ny = 1;
			for (k = 0; k < r; k++)
				ny *= d[k];
			if (rnd(3) == 0)
				ny = rnd_layout(&c.t[3], r);
			c.t[3].va = flat_alloc(&f, ny);
			assert_true(c.t[3].va != 0);
			memset(flat_host(&f, c.t[3].va), 0xa5, ny);
		}
		ref = malloc(ny);
		eng = malloc(ny);
		x0 = malloc(nx);
		assert_non_null(ref);
		assert_non_null(eng);
		assert_non_null(x0);
		memcpy(x0, flat_host(&f, c.t[0].va), nx);
		assert_int_equal(flat_ref(&f, &c), 0);
		memcpy(ref, flat_host(&f, c.t[3].va), ny);
		memcpy(flat_host(&f, c.t[0].va), x0, nx);
		if (!in_place)
			memset(flat_host(&f, c.t[3].va), 0xa5, ny);
		assert_int_equal(flat_exec(&f, &c, sizeof(c), &cycles), 0);
		assert_int_equal(flat_engine.res.path, VNPU_ENG_SOFTMAX);
		memcpy(eng, flat_host(&f, c.t[3].va), ny);
		for (i = 0; i < ny; i++) {
			if (ref[i] != eng[i]) {
				fprintf(stderr, "qlinear softmax (it %d, axis %u of %u): engine "
					"0x%02x != ref 0x%02x at %llu\n", it,
					c.attr.softmax.axis, d[c.attr.softmax.axis], eng[i],
					ref[i], (unsigned long long)i);
				fail();
			}
		}
		free(ref);
		free(eng);
		free(x0);
	}
}

/* A row's binary32 sum of QLinearSoftmax entries, in index order or reversed. */
static float qsm_sum(const struct vnpu_qlinear_softmax *q, const uint8_t *x, uint32_t n,
		     bool reverse)
{
	float sum = 0.0f;
	uint32_t i;

	for (i = 0; i < n; i++)
		sum += vnpu_qlinear_softmax_e(q, 255, x[reverse ? n - 1 - i : i]);
	return sum;
}

/*
 * The random bytes above rarely show the order of a row's sum: a
 * last-bit change in the sum seldom moves a quotient across a rounding
 * boundary.  These rows are built so that it does.  Keys 255 down to
 * 255 - QSM_MIDS + 1 come first, then thousands of one key whose entry
 * is under half an ulp of the running sum: summing in index order
 * absorbs them one by one, while any other order (reversed, a chunk
 * reversed, interleaved parts as a vector sum keeps) adds some of them
 * up first, and 70 of them already make 32 ulps.  The x scale is searched
 * until one output byte differs between the in-order sum and that sum
 * 32 ulps higher (outputs only fall as the sum grows, so every larger
 * sum differs too).  Five such rows in one command, so that both the
 * grouped and the left-over rows are checked: the engine must give the
 * reference's bytes.
 */
#define QSM_MIDS	48

static void test_softmax_qlinear_order(void **state)
{
	const uint32_t n = 6625, rows = 5;
	const float sy = 1.0f / 255.5f;
	struct vnpu_qlinear_softmax *q = malloc(sizeof(*q));
	uint8_t *row = malloc(n), *ref = malloc((size_t)n * rows), *eng = malloc((size_t)n * rows);
	uint32_t d[2] = { rows, n }, j, i, k;
	float sx = 0.0f, in_order = 0.0f, higher;
	bool found = false;
	struct vnpu_cmd_compute c;
	uint64_t cycles = 0;

	(void)state;
	assert_non_null(q);
	assert_non_null(row);
	assert_non_null(ref);
	assert_non_null(eng);
	for (j = 0; j < 4000 && !found; j++) {
		sx = 0.1f + 0.00005f * (float)j;
		for (k = 0; k < QSM_MIDS; k++)
			row[k] = (uint8_t)(255 - k);
		/* entries of this key are below 2^-25 of the largest */
		memset(row + QSM_MIDS, 255 - (int)ceilf(17.5f / sx), n - QSM_MIDS);
		vnpu_qlinear_softmax_init(q, sx, sy, 0, n, false);
		in_order = qsm_sum(q, row, n, false);
		higher = in_order;
		for (k = 0; k < 32; k++)
			higher = nextafterf(higher, INFINITY);
		for (k = 0; k < QSM_MIDS; k++)
			if (vnpu_qlinear_softmax_q(q, q->table[255 - k], in_order) !=
			    vnpu_qlinear_softmax_q(q, q->table[255 - k], higher))
				found = true;
	}
	assert_true(found);
	assert_true(qsm_sum(q, row, n, true) > higher);
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.round = VNPU_ROUND_ORT_QLINEAR;
	c.attr.softmax.axis = 1;
	c.t[0] = tdesc(VNPU_DT_UINT8, 2, d);
	c.t[3] = tdesc(VNPU_DT_UINT8, 2, d);
	tquant(&c.t[0], sx, 0);
	tquant(&c.t[3], sy, 0);
	c.t[0].va = flat_alloc(&f, (uint64_t)n * rows);
	c.t[3].va = flat_alloc(&f, (uint64_t)n * rows);
	assert_true(c.t[0].va && c.t[3].va);
	for (i = 0; i < rows; i++)
		memcpy((uint8_t *)flat_host(&f, c.t[0].va) + (size_t)i * n, row, n);
	assert_int_equal(flat_ref(&f, &c), 0);
	memcpy(ref, flat_host(&f, c.t[3].va), (size_t)n * rows);
	memset(flat_host(&f, c.t[3].va), 0xa5, (size_t)n * rows);
	assert_int_equal(flat_exec(&f, &c, sizeof(c), &cycles), 0);
	assert_int_equal(flat_engine.res.path, VNPU_ENG_SOFTMAX);
	memcpy(eng, flat_host(&f, c.t[3].va), (size_t)n * rows);
	assert_memory_equal(eng, ref, (size_t)n * rows);
	free(q);
	free(row);
	free(ref);
	free(eng);
}

/* ---- Malformed commands ------------------------------------------------------- */

static void good_convt(struct vnpu_cmd_compute *c)
{
	static const uint32_t dx[4] = { 1, 3, 3, 4 }, dw[4] = { 4, 3, 3, 2 };
	static const uint32_t dy[4] = { 1, 7, 7, 4 };

	flat_reset(&f);
	cmd_init(c, VNPU_OP_CONV_TRANSPOSE);
	c->attr.convt.stride_h = c->attr.convt.stride_w = 2;
	c->attr.convt.dilation_h = c->attr.convt.dilation_w = 1;
	c->attr.convt.groups = 2;
	c->t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c->t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c->t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	c->t[0].va = flat_alloc(&f, 4 * 36);
	c->t[1].va = flat_alloc(&f, 4 * 72);
	c->t[3].va = flat_alloc(&f, 4 * 196);
}

static void good_reduce(struct vnpu_cmd_compute *c)
{
	static const uint32_t dx[3] = { 2, 3, 4 }, dy[3] = { 2, 1, 1 };

	flat_reset(&f);
	cmd_init(c, VNPU_OP_REDUCE);
	c->attr.reduce.kind = VNPU_REDUCE_MEAN;
	c->attr.reduce.axes = 6;
	c->t[0] = tdesc(VNPU_DT_FP32, 3, dx);
	c->t[3] = tdesc(VNPU_DT_FP32, 3, dy);
	c->t[0].va = flat_alloc(&f, 4 * 24);
	c->t[3].va = flat_alloc(&f, 4 * 2);
}

static void good_act(struct vnpu_cmd_compute *c)
{
	static const uint32_t d[2] = { 3, 5 };

	flat_reset(&f);
	cmd_init(c, VNPU_OP_ACTIVATION);
	c->act = VNPU_ACT_HARD_SIGMOID;
	c->act_alpha = f2u(0.2f);
	c->attr.raw[VNPU_ACT_BETA_WORD] = f2u(0.5f);
	c->t[0] = tdesc(VNPU_DT_FP32, 2, d);
	c->t[3] = tdesc(VNPU_DT_FP32, 2, d);
	c->t[0].va = flat_alloc(&f, 4 * 15);
	c->t[3].va = flat_alloc(&f, 4 * 15);
}

/* @c must be refused at byte @off by the checker, the engine and the reference. */
static void refused(const struct vnpu_cmd_compute *c, uint32_t off, const char *what)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	uint64_t cycles = 1;

	if (vnpu_op_check(c, sizeof(*c), &cc, &info) != -EINVAL || info.err_off != off) {
		fprintf(stderr, "%s: err_off %u, want %u\n", what, info.err_off, off);
		fail();
	}
	assert_int_equal(flat_exec(&f, c, sizeof(*c), &cycles), -EINVAL);
	assert_int_equal(flat_engine.res.err_off, off);
	assert_int_equal(flat_ref(&f, c), -EINVAL);
}

#define BAD(good, stmt, field) do { \
		struct vnpu_cmd_compute c; \
		uint64_t cyc; \
		good(&c); \
		assert_int_equal(flat_exec(&f, &c, sizeof(c), &cyc), 0); \
		stmt; \
		refused(&c, VNPU_CMD_OFF(field), #stmt); \
	} while (0)
#define BADT(good, stmt, slot, field) do { \
		struct vnpu_cmd_compute c; \
		good(&c); \
		stmt; \
		refused(&c, VNPU_CMD_TENSOR_OFF(slot, field), #stmt); \
	} while (0)

static void test_malformed(void **state)
{
	(void)state;
	BAD(good_convt, c.attr.convt.reserved = 1, attr.convt.reserved);
	BAD(good_convt, c.attr.convt.stride_h = 0, attr.convt.stride_h);
	BAD(good_convt, c.attr.convt.dilation_w = 0, attr.convt.dilation_w);
	BAD(good_convt, c.attr.convt.pad_left = 70000, attr.convt.pad_left);
	BAD(good_convt, c.attr.convt.out_pad_h = 2, attr.convt.out_pad_h);
	BAD(good_convt, c.attr.convt.out_pad_w = 5, attr.convt.out_pad_w);
	BAD(good_convt, c.attr.convt.groups = 3, attr.convt.groups);
	BAD(good_convt, c.attr.convt.groups = 0, attr.convt.groups);
	BAD(good_convt, c.attr.convt.pad_top = 7; c.attr.convt.pad_bottom = 7,
	    t[3].dims[1]);
	BAD(good_convt, c.act = VNPU_ACT_SQRT, act);
	BAD(good_convt, c.act = VNPU_ACT_CLIP, act);
	BADT(good_convt, c.t[1].dims[0] = 3, 1, dims[0]);
	BADT(good_convt, c.t[3].dims[3] = 5, 3, dims[3]);
	BADT(good_convt, c.t[3].dims[1] = 8, 3, dims[1]);
	BADT(good_convt, c.t[1].dims[1] = 2000, 1, dims[1]);
	BADT(good_convt, c.t[0].rank = 3; c.t[0].dims[3] = 0, 0, rank);
	BADT(good_convt, c.t[2] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 3 });
	     c.t[2].va = 0x100000, 2, dims[0]);
	/* The fused scale/shift [2, CO]: shape, dtype, float accumulation only. */
	BADT(good_convt, c.t[2] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 3, 4 });
	     c.t[2].va = 0x100000, 2, dims[0]);
	BADT(good_convt, c.t[2] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, 5 });
	     c.t[2].va = 0x100000, 2, dims[1]);
	BADT(good_convt, c.t[2] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 2, 4, 1 });
	     c.t[2].va = 0x100000, 2, rank);
	/* Per-channel weight scales need groups == 1. */
	BADT(good_convt, c.t[0].dtype = VNPU_DT_INT8; tquant(&c.t[0], 1, 0);
	     c.t[1].dtype = VNPU_DT_INT8; c.t[1].quant = VNPU_QUANT_CHANNEL;
	     c.t[1].quant_axis = 3; c.t[1].quant_va = 0x100000, 1, quant);

	BAD(good_reduce, c.attr.reduce.kind = 6, attr.reduce.kind);
	BAD(good_reduce, c.attr.reduce.axes = 0, attr.reduce.axes);
	BAD(good_reduce, c.attr.reduce.axes = 8, attr.reduce.axes);
	BAD(good_reduce, c.attr.reduce.reserved[3] = 1, attr.reduce.reserved[3]);
	BAD(good_reduce, c.act = VNPU_ACT_RELU, act);
	BADT(good_reduce, c.t[3].dims[1] = 3, 3, dims[1]);
	BADT(good_reduce, c.t[3].dims[0] = 1, 3, dims[0]);
	BADT(good_reduce, c.t[3].rank = 2; c.t[3].dims[2] = 0, 3, rank);
	BADT(good_reduce, c.t[0].dtype = VNPU_DT_INT32, 0, dtype);
	BADT(good_reduce, c.t[0].dtype = VNPU_DT_INT8; c.t[0].quant = VNPU_QUANT_CHANNEL;
	     c.t[0].quant_va = 0x100000, 0, quant);

	BAD(good_act, c.act_alpha = f2u(INFINITY), act_alpha);
	BAD(good_act, c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(NAN),
	    attr.raw[VNPU_ACT_BETA_WORD]);
	BAD(good_act, c.attr.raw[3] = 1, attr.raw[3]);
	BAD(good_act, c.act = VNPU_ACT_HARD_SWISH, act_alpha);
	{
		struct vnpu_cmd_compute c;

		/* A stray beta: 0.5f's first non-zero byte is its top one. */
		good_act(&c);
		c.act = VNPU_ACT_HARD_SWISH;
		c.act_alpha = 0;
		refused(&c, VNPU_CMD_OFF(attr.raw[VNPU_ACT_BETA_WORD]) + 3, "stray beta");
	}
	BAD(good_act, c.act = VNPU_ACT_COUNT, act);
	/* The scale/shift operand P [2, ...] of ACTIVATION. */
	BADT(good_act, c.t[1] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 3, 5 });
	     c.t[1].va = 0x100000, 1, dims[0]);
	BADT(good_act, c.t[1] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 2 });
	     c.t[1].va = 0x100000, 1, rank);
	BADT(good_act, c.t[1] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 2, 1, 1, 5 });
	     c.t[1].va = 0x100000, 1, rank);
	BADT(good_act, c.t[1] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 2, 3, 4 });
	     c.t[1].va = 0x100000, 1, dims[2]);
	BADT(good_act, c.t[1] = tdesc(VNPU_DT_INT8, 2, (const uint32_t[]){ 2, 5 });
	     tquant(&c.t[1], 1.0f, 0); c.t[1].va = 0x100000, 1, dtype);
	BADT(good_act, c.t[0].dims[1] = 70000; c.t[3].dims[1] = 70000;
	     c.t[1] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, 70000 });
	     c.t[1].va = 0x100000, 1, dims);
	BADT(good_act, c.hdr.opcode = VNPU_OP_QUANTIZE; c.act = 0; c.act_alpha = 0;
	     c.attr.raw[VNPU_ACT_BETA_WORD] = 0; c.t[3].dtype = VNPU_DT_INT8;
	     tquant(&c.t[3], 1.0f, 0);
	     c.t[1] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, 5 });
	     c.t[1].va = 0x100000, 1, va);
	BAD(good_act, c.hdr.opcode = VNPU_OP_SOFTMAX, act);
	BAD(good_act, c.hdr.opcode = VNPU_OP_ELTWISE; c.act = VNPU_ACT_EXP;
	    c.act_alpha = 0; c.attr.raw[VNPU_ACT_BETA_WORD] = 0; c.t[1] = c.t[0], act);
	BAD(good_act, c.hdr.opcode = VNPU_OP_ELTWISE; c.act = 0; c.act_alpha = 0;
	    c.attr.raw[VNPU_ACT_BETA_WORD] = 0; c.t[1] = c.t[0];
	    c.attr.eltwise.kind = VNPU_ELTWISE_POW + 1, attr.eltwise.kind);
}

static int setup(void **state)
{
	(void)state;
	flat_init(&f, MEM_SIZE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(f.mem);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convt_known),
		cmocka_unit_test(test_reduce_known),
		cmocka_unit_test(test_eltwise_act_known),
		cmocka_unit_test(test_affine_known),
		cmocka_unit_test(test_convt_random),
		cmocka_unit_test(test_convt_int8),
		cmocka_unit_test(test_reduce_random),
		cmocka_unit_test(test_convt_float),
		cmocka_unit_test(test_softmax_float),
		cmocka_unit_test(test_softmax_qlinear),
		cmocka_unit_test(test_softmax_qlinear_order),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
