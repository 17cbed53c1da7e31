// SPDX-License-Identifier: MIT
/*
 * The engine's int8 GEMM kernels, each one this CPU runs (the portable C
 * one included), held to the reference bit for bit:
 *
 * - vnpu_i8_gemm() itself against the sum it is defined as (unsigned A
 *   bytes times signed B bytes, added mod 2^32), over shapes around the
 *   kernels' register blocks and K blocks, and with operands at the ends
 *   of their ranges so that any int16 saturation, the flaw of
 *   vpmaddubsw-based kernels, shows as a wrong sum;
 * - int8 GEMM and CONV2D commands through vnpu_compute_exec() against
 *   vnpu_ref_run(): odd M, N and K, zero points at -128/127 and 0/255,
 *   per-channel weight and output scales, groups, strides, dilations,
 *   padding, bias, and both requantization roundings (ONNX and TFLite's
 *   Q31), and depthwise convs.  Each case must have run an int8 kernel
 *   (GEMM, im2col, direct or depthwise), not been handed to the
 *   reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_engine.h"

#define MEM_SIZE	(32u << 20)

static uint64_t rs = 0x853c49e6748fea9bull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

static float rndf(float lo, float hi)
{
	return lo + (hi - lo) * (float)rnd(1u << 24) / (float)(1u << 24);
}

/* The kernel under test; set per group. */
static enum vnpu_i8_kernel kern;

/* ---- vnpu_i8_gemm() against its definition ---------------------------- */

enum fill {
	FILL_RANDOM,
	FILL_MAX,	/* A 255, B -128: every product at its largest magnitude */
	FILL_ALTERNATE,	/* A 255, B alternating -128 and 127 along k */
};

static int8_t b_val(enum fill f, uint32_t kk)
{
	switch (f) {
	case FILL_MAX:
		return -128;
	case FILL_ALTERNATE:
		return kk % 2 ? 127 : -128;
	default:
		return (int8_t)rnd(256);
	}
}

/*
 * C = A x B for @mp x @np x @kp through @kern, against the plain sum over
 * the packed layout (ops/vnpu_engine.h), C preset to garbage.
 */
static void gemm_one(uint32_t mp, uint32_t n, uint32_t kp, enum fill f)
{
	struct vnpu_run_ctx rc = { .i8_kernel = kern };
	struct vnpu_i8_b b = { .n = n, .np = vnpu_round_up(n, VNPU_I8_NR), .kp = kp };
	uint8_t *a = malloc((size_t)mp * kp);
	int32_t *c = malloc(sizeof(int32_t) * mp * b.np);
	uint32_t i, j, kk, bad_i = 0, bad_j = 0;
	int32_t got = 0, want_bad = 0;
	bool bad = false;

	b.p = malloc((size_t)b.np * kp);
	assert_true(a && c && b.p);
	for (i = 0; i < mp * kp; i++)
		a[i] = f == FILL_RANDOM ? (uint8_t)rnd(256) : 255;
	for (j = 0; j < b.np; j++)
		for (kk = 0; kk < kp; kk++)
			b.p[(size_t)(j / VNPU_I8_NR) * kp * VNPU_I8_NR + kk / 4 * 64 +
			    j % VNPU_I8_NR * 4 + kk % 4] = b_val(f, kk);
	memset(c, 0x5a, sizeof(int32_t) * mp * b.np);
	assert_int_equal(vnpu_i8_gemm(a, mp, &b, c, &rc), 0);
	for (i = 0; i < mp; i++)
		for (j = 0; j < b.np; j++) {
			uint32_t want = 0;

			for (kk = 0; kk < kp; kk++)
				want += (uint32_t)((int32_t)a[(size_t)i * kp + kk] *
					b.p[(size_t)(j / VNPU_I8_NR) * kp * VNPU_I8_NR +
					    kk / 4 * 64 + j % VNPU_I8_NR * 4 + kk % 4]);
			if ((int32_t)want != c[(size_t)i * b.np + j] && !bad) {
				bad = true;
				bad_i = i;
				bad_j = j;
				got = c[(size_t)i * b.np + j];
				want_bad = (int32_t)want;
			}
		}
	free(a);
	free(b.p);
	free(c);
	if (bad)
		fail_msg("kernel %s, %ux%ux%u fill %d: C[%u][%u] = %d, want %d",
			 vnpu_i8_kernel_id(kern), mp, n, kp, f, bad_i, bad_j, got, want_bad);
}

static void test_gemm_core(void **state)
{
	/* Rows around the register and widening blocks, K around the K blocks. */
	static const uint32_t ms[] = { 8, 16, 24, 32, 40, 56, 64, 96, 104, 192, 200 };
	static const uint32_t ks[] = { 4, 8, 12, 20, 252, 256, 260, 508, 512, 516, 772, 1100 };
	int i;

	(void)state;
	for (i = 0; i < 60; i++)
		gemm_one(ms[rnd(sizeof(ms) / sizeof(ms[0]))], 1 + rnd(80),
			 ks[rnd(sizeof(ks) / sizeof(ks[0]))], FILL_RANDOM);
}

/*
 * Products at their extremes.  K = 65532, the longest row the limits let
 * a GEMM have, sums 255 x -128 to -2138964480: still an int32, so the
 * exact sum is the reference's, and saturating pair sums would be off.
 */
static void test_gemm_extremes(void **state)
{
	(void)state;
	gemm_one(8, 16, 64, FILL_MAX);
	gemm_one(16, 33, 1028, FILL_ALTERNATE);
	gemm_one(8, 17, 65532, FILL_MAX);
	gemm_one(8, 16, 4096, FILL_ALTERNATE);
}

/* ---- Commands against the reference ----------------------------------- */

static const uint8_t q8_dts[] = { VNPU_DT_INT8, VNPU_DT_UINT8 };

static int32_t zp_pick(uint8_t dt)
{
	int32_t lo = dt == VNPU_DT_INT8 ? -128 : 0;

	switch (rnd(4)) {
	case 0:
		return lo;
	case 1:
		return lo + 255;
	default:
		return lo + (int32_t)rnd(256);
	}
}

/* Dense placement with random bytes, and per-channel params when asked. */
static void place(struct flat *f, struct vnpu_tensor_desc *d, bool fill)
{
	uint64_t n = 1, i;
	uint8_t *p;
	int k;

	for (k = 0; k < d->rank; k++)
		n *= d->dims[k];
	n *= vnpu_dtype_size(d->dtype);
	d->va = flat_alloc(f, n);
	assert_true(d->va != 0);
	p = flat_host(f, d->va);
	for (i = 0; i < n; i++)
		p[i] = fill ? (uint8_t)rnd(256) : 0xa5;
	if (d->dtype == VNPU_DT_INT32)
		for (i = 0; i < n; i += 4) {
			int32_t v = (int32_t)rnd(200001) - 100000;

			memcpy(p + i, &v, 4);
		}
	if (d->quant == VNPU_QUANT_CHANNEL) {
		uint32_t ch = d->dims[d->quant_axis], c;
		uint8_t *q;

		d->quant_va = flat_alloc(f, 8ull * ch);
		assert_true(d->quant_va != 0);
		q = flat_host(f, d->quant_va);
		for (c = 0; c < ch; c++) {
			float s = rndf(0.0005f, 0.05f);
			int32_t z = zp_pick(d->dtype);

			memcpy(q + 4 * c, &s, 4);
			memcpy(q + 4 * (ch + c), &z, 4);
		}
	}
}

/* Weights and output, per tensor or per channel (@axis), output scale ~ K. */
static void quantize(struct vnpu_tensor_desc *w, int waxis, struct vnpu_tensor_desc *y,
		     uint32_t k)
{
	if (rnd(2)) {
		w->quant = VNPU_QUANT_CHANNEL;
		w->quant_axis = (uint8_t)waxis;
	} else {
		tquant(w, rndf(0.002f, 0.05f), zp_pick(w->dtype));
	}
	if (rnd(4) == 0) {
		y->quant = VNPU_QUANT_CHANNEL;
		y->quant_axis = (uint8_t)(y->rank - 1);
	} else {
		tquant(y, 0.02f * 0.02f * sqrtf((float)k) * 40.0f * rndf(0.05f, 2.0f),
		       zp_pick(y->dtype));
	}
}

static unsigned int cases;
/* Cases per engine path in the current group. */
static unsigned int reached[VNPU_ENG_NPATHS];
/* Convs whose X was in channel planes, and how many took the direct kernel. */
static unsigned int planar, planar_direct;

/* Engine and reference on copies of one memory: the output bytes equal. */
static void run_case(struct flat *f, struct vnpu_cmd_compute *c)
{
	struct flat f2 = *f;
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	uint64_t used = f->next + 4096, off;
	enum vnpu_eng_path path;

	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	f2.mem = malloc(used);
	assert_non_null(f2.mem);
	memcpy(f2.mem, f->mem, used);
	flat_engine.i8_kernel = kern;
	assert_int_equal(flat_exec(f, c, sizeof(*c), NULL), 0);
	path = flat_engine.res.path;
	/* A case the reference ran would compare it with itself. */
	if (path != VNPU_ENG_GEMM_I8 && path != VNPU_ENG_IM2COL_I8 &&
	    path != VNPU_ENG_CONV_I8 && path != VNPU_ENG_CONV_I8_BYTES && path != VNPU_ENG_DW &&
	    path != VNPU_ENG_DW_GENERAL) {
		free(f2.mem);
		fail_msg("case %u (op 0x%x): ran on path %d, not an int8 kernel",
			 cases, c->hdr.opcode, path);
	}
	reached[path]++;
	if (c->hdr.opcode == VNPU_OP_CONV2D && c->t[0].strides[3] > 1 &&
	    (path == VNPU_ENG_CONV_I8 || path == VNPU_ENG_CONV_I8_BYTES))
		planar_direct++;
	assert_int_equal(flat_ref(&f2, c), 0);
	off = c->t[3].va - FLAT_BASE;
	if (memcmp(f->mem, f2.mem, used)) {
		uint64_t i;
		uint8_t got, want;

		for (i = 0; i < used && f->mem[i] == f2.mem[i]; i++)
			;
		got = f->mem[i];
		want = f2.mem[i];
		free(f2.mem);
		fail_msg("case %u (op 0x%x, kernel %s, round %u): byte %lld of the output "
			 "is %u, the reference's %u", cases, c->hdr.opcode,
			 vnpu_i8_kernel_id(kern), c->round, (long long)(i - off),
			 got, want);
	}
	free(f2.mem);
	cases++;
}

static void one_gemm(struct flat *f)
{
	static const uint32_t ks[] = { 1, 3, 5, 7, 64, 255, 257, 300, 513, 700 };
	struct vnpu_cmd_compute c;
	uint32_t m = 1 + rnd(rnd(3) ? 40 : 230), n = 1 + rnd(rnd(2) ? 20 : 90);
	uint32_t k = ks[rnd(sizeof(ks) / sizeof(ks[0]))] + rnd(3);
	bool ta = rnd(4) == 0, tb = rnd(2);
	uint32_t da[2] = { ta ? k : m, ta ? m : k }, db[2] = { tb ? n : k, tb ? k : n };
	uint32_t dy[2] = { m, n };

	flat_reset(f);
	cmd_init(&c, VNPU_OP_GEMM);
	c.attr.gemm.flags = (ta ? VNPU_GEMM_TRANS_A : 0) | (tb ? VNPU_GEMM_TRANS_B : 0);
	c.t[0] = tdesc(q8_dts[rnd(2)], 2, da);
	c.t[1] = tdesc(q8_dts[rnd(2)], 2, db);
	c.t[3] = tdesc(q8_dts[rnd(2)], 2, dy);
	tquant(&c.t[0], rndf(0.002f, 0.05f), zp_pick(c.t[0].dtype));
	quantize(&c.t[1], tb ? 0 : 1, &c.t[3], k);
	c.round = (uint8_t)rnd(2);
	c.act = rnd(3) ? VNPU_ACT_NONE : VNPU_ACT_RELU;
	if (rnd(2)) {
		c.t[2] = tdesc(VNPU_DT_INT32, 1, &n);
		place(f, &c.t[2], true);
	}
	place(f, &c.t[0], true);
	place(f, &c.t[1], true);
	place(f, &c.t[3], false);
	run_case(f, &c);
}

/*
 * @first: a model's first conv, X of 1-4 channels in NCHW planes and
 * rows of 8 pixels or more (a2_widen_x() takes those 8 at a time).
 */
static void one_conv(struct flat *f, bool first)
{
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t g = rnd(4) ? 1 : 2 + rnd(3), cig = 1 + rnd(rnd(2) ? 8 : 70);
	uint32_t cog = 1 + rnd(rnd(2) ? 20 : 70), kh = 1 + rnd(4), kw = 1 + rnd(4);
	uint32_t h = 1 + rnd(14), w = 1 + rnd(20), nb = 1 + rnd(2), oh, ow, co;
	uint32_t dx[4], dw[4], dy[4];

	if (first) {
		g = 1;
		cig = 1 + rnd(4);
		w = 8 + rnd(33);
	}

	/*
	 * Grouped convs the engine takes to im2col: depthwise ones and ones
	 * of fewer than 8 outputs a group go to other kernels.
	 */
	if (g > 1) {
		cig += 1;
		cog += 7;
	}
	co = g * cog;

	flat_reset(f);
	cmd_init(&c, VNPU_OP_CONV2D);
	at->groups = g;
	at->stride_h = 1 + rnd(2);
	at->stride_w = 1 + rnd(3);
	at->dilation_h = rnd(4) ? 1 : 2;
	at->dilation_w = rnd(4) ? 1 : 2;
	at->pad_top = rnd(3);
	at->pad_bottom = rnd(3);
	at->pad_left = rnd(3);
	at->pad_right = rnd(3);
	if ((kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = g * cig;
	dw[0] = co; dw[1] = kh; dw[2] = kw; dw[3] = cig;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = co;
	c.t[0] = tdesc(q8_dts[rnd(2)], 4, dx);
	c.t[1] = tdesc(q8_dts[rnd(2)], 4, dw);
	c.t[3] = tdesc(q8_dts[rnd(2)], 4, dy);
	tquant(&c.t[0], rndf(0.002f, 0.05f), zp_pick(c.t[0].dtype));
	quantize(&c.t[1], 0, &c.t[3], kh * kw * cig);
	/*
	 * A legal but absurd output scale, the least subnormal: the float
	 * multiplier is infinite, so a sum of 0 gives NaN (the zero point)
	 * and any other saturates, the kernels' rare path.
	 */
	if (!rnd(12)) {
		tquant(&c.t[3], 0x1p-149f, zp_pick(c.t[3].dtype));
		c.t[3].quant_axis = 0;
	}
	c.round = (uint8_t)rnd(2);
	c.act = rnd(3) ? VNPU_ACT_NONE : rnd(2) ? VNPU_ACT_RELU : VNPU_ACT_RELU6;
	if (rnd(2)) {
		c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
		place(f, &c.t[2], true);
	}
	place(f, &c.t[0], true);
	if (g == 1 && (first || !rnd(4))) {
		/*
		 * X in NCHW planes seen as NHWC, as a model's quantized input
		 * reaches its first conv: the same bytes, channels H * W apart.
		 */
		c.t[0].flags = VNPU_TENSOR_STRIDED;
		c.t[0].strides[2] = 1;
		c.t[0].strides[1] = w;
		c.t[0].strides[3] = (uint64_t)h * w;
		c.t[0].strides[0] = (uint64_t)h * w * dx[3];
		planar++;
	}
	place(f, &c.t[1], true);
	/* Half the convs with 7-bit weights: the AVX2 kernel's byte products. */
	if (rnd(2))
		narrow_weights(f, &c.t[1]);
	place(f, &c.t[3], false);
	run_case(f, &c);
}

/*
 * Depthwise: channel counts around the 8-lane vectors and the 64-channel
 * blocks, kernels up to 5 wide (odd ones pair a tap with itself), rows
 * with border columns on both sides.
 */
static void one_dwconv(struct flat *f)
{
	static const uint32_t chans[] = { 1, 7, 8, 9, 16, 24, 63, 64, 65, 72, 100 };
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t ch = chans[rnd(sizeof(chans) / sizeof(chans[0]))];
	uint32_t kh = 1 + rnd(5), kw = 1 + rnd(5), h = 1 + rnd(12), w = 1 + rnd(20);
	uint32_t nb = 1 + rnd(2), dx[4], dw[4], dy[4], oh, ow;

	flat_reset(f);
	cmd_init(&c, VNPU_OP_CONV2D);
	at->groups = ch;
	at->stride_h = 1 + rnd(2);
	at->stride_w = 1 + rnd(2);
	at->dilation_h = rnd(4) ? 1 : 2;
	at->dilation_w = rnd(4) ? 1 : 2;
	at->pad_top = rnd(3);
	at->pad_bottom = rnd(3);
	at->pad_left = rnd(4);
	at->pad_right = rnd(4);
	if ((kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = ch;
	dw[0] = ch; dw[1] = kh; dw[2] = kw; dw[3] = 1;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = ch;
	c.t[0] = tdesc(q8_dts[rnd(2)], 4, dx);
	c.t[1] = tdesc(q8_dts[rnd(2)], 4, dw);
	c.t[3] = tdesc(q8_dts[rnd(2)], 4, dy);
	tquant(&c.t[0], rndf(0.002f, 0.05f), zp_pick(c.t[0].dtype));
	quantize(&c.t[1], 0, &c.t[3], kh * kw);
	c.round = (uint8_t)rnd(2);
	c.act = rnd(3) ? VNPU_ACT_NONE : VNPU_ACT_RELU6;
	if (rnd(2)) {
		c.t[2] = tdesc(VNPU_DT_INT32, 1, &ch);
		place(f, &c.t[2], true);
	}
	place(f, &c.t[0], true);
	place(f, &c.t[1], true);
	place(f, &c.t[3], false);
	run_case(f, &c);
}

static void test_commands(void **state)
{
	struct flat *f = *state;
	int i;

	memset(reached, 0, sizeof(reached));
	planar = planar_direct = 0;
	for (i = 0; i < 150; i++)
		one_gemm(f);
	for (i = 0; i < 300; i++)
		one_conv(f, false);
	for (i = 0; i < 60; i++)
		one_conv(f, true);
	for (i = 0; i < 300; i++)
		one_dwconv(f);
	printf("# kernel %s: %u GEMM, %u im2col conv, %u direct conv (%u byte products), "
	       "%u depthwise cases\n",
	       vnpu_i8_kernel_id(kern), reached[VNPU_ENG_GEMM_I8],
	       reached[VNPU_ENG_IM2COL_I8],
	       reached[VNPU_ENG_CONV_I8] + reached[VNPU_ENG_CONV_I8_BYTES],
	       reached[VNPU_ENG_CONV_I8_BYTES], reached[VNPU_ENG_DW]);
	assert_true(reached[VNPU_ENG_DW] >= 100);
	/* Each int8 kernel reached: TFLite rounding and groups keep im2col. */
	assert_true(reached[VNPU_ENG_GEMM_I8] >= 100);
	assert_true(reached[VNPU_ENG_IM2COL_I8] >= 50);
	if (kern != VNPU_I8_GENERIC)
		assert_true(reached[VNPU_ENG_CONV_I8] >= 50);
	/* 7-bit weights take the byte products without VNNI, the int16 ones else. */
	if (kern == VNPU_I8_AVX2)
		assert_true(reached[VNPU_ENG_CONV_I8_BYTES] >= 50);
	printf("# kernel %s: %u convs with X in channel planes, %u of them direct\n",
	       vnpu_i8_kernel_id(kern), planar, planar_direct);
	/* The AVX2 direct kernel takes them; the VNNI one reads X in place. */
	if (kern == VNPU_I8_AVX2)
		assert_true(planar_direct >= 60);
}

static int setup_flat(void **state)
{
	struct flat *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	flat_init(f, MEM_SIZE);
	*state = f;
	return f->mem ? 0 : -1;
}

static int teardown_flat(void **state)
{
	struct flat *f = *state;

	free(f->mem);
	free(f);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_core),
		cmocka_unit_test(test_gemm_extremes),
		cmocka_unit_test(test_commands),
	};
	char name[64];
	int k, fails = 0;

	/*
	 * Every kernel this CPU runs, not only the one AUTO picks; one the
	 * CPU lacks is a skip, said so, never a pass.
	 */
	for (k = 0; k < VNPU_I8_NKERNELS; k++) {
		kern = (enum vnpu_i8_kernel)k;
		snprintf(name, sizeof(name), "int8 kernel %s", vnpu_i8_kernel_id(kern));
		if (!vnpu_i8_kernel_available(kern)) {
			printf("# SKIP %s: this CPU does not run it\n", name);
			continue;
		}
		fails += _cmocka_run_group_tests(name, tests, sizeof(tests) / sizeof(tests[0]),
						 setup_flat, teardown_flat);
	}
	return fails;
}
