// SPDX-License-Identifier: MIT
/*
 * The direct fp32 CONV2D kernel this host runs (vnpu_engine_conv.c: the
 * AVX2 + FMA one here, AVX-512 where the CPU has it) against the
 * reference, on the edges of its blocking: output channels around the
 * 8- and 16-lane vectors and the 16/24-channel register blocks, few input
 * channels with wide kernels (kx folded into the channel loop), columns
 * whose window crosses a border, strides, dilation (no folding), X with
 * gaps between pixels (no folding), X in planes (NCHW, AVX2 only), every
 * fused and unfused activation, bias of one row or of scale and shift,
 * batches.  Each case also runs
 * cut into row bands as the device cuts commands for its engines: the
 * bands' bytes must be the whole command's.  A host with no direct kernel
 * fails here rather than passing without checking anything.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_split.h"

static struct flat f;
static uint64_t rs = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 32) % n;
}

static float rndf(void)
{
	return (float)rnd(2001) / 1000.0f - 1.0f;
}

/*
 * Dense or, with @gap, every pixel followed by @gap unused floats; with
 * @planar, NCHW seen as NHWC (each channel a plane of its own, as the CPU
 * path hands a model's input to its first conv).
 */
static void place_f32(struct vnpu_tensor_desc *d, uint32_t gap, bool planar, bool fill)
{
	uint64_t n = 1, i;
	int k;
	float *p;

	if (planar) {
		d->flags = VNPU_TENSOR_STRIDED;
		d->strides[2] = 1;
		d->strides[1] = d->dims[2];
		d->strides[3] = (uint64_t)d->dims[1] * d->dims[2];
		d->strides[0] = d->strides[3] * d->dims[3];
		n = d->strides[0] * d->dims[0];
	} else if (gap) {
		uint64_t st = 1;

		d->flags = VNPU_TENSOR_STRIDED;
		for (k = d->rank - 1; k >= 0; k--) {
			d->strides[k] = st;
			st *= d->dims[k] + (k == d->rank - 1 ? gap : 0);
		}
		n = st;
	} else {
		for (k = 0; k < d->rank; k++)
			n *= d->dims[k];
	}
	d->va = flat_alloc(&f, 4 * n);
	assert_true(d->va != 0);
	p = flat_host(&f, d->va);
	for (i = 0; i < n; i++)
		p[i] = fill ? rndf() : NAN;
}

/*
 * Per output element, (K + 1) * FLT_EPSILON * (sum of |terms|): each of
 * two sums of the same terms in any order is within half of that of the
 * exact one (Higham, "Accuracy and Stability of Numerical Algorithms",
 * 3.1), so they are within it of each other.  The activations used here
 * change a difference by a factor of at most 1.5 (hard swish).  The
 * direct kernel and the reference sum in one order, so this is loose;
 * it is what the fp32 tolerance may be anywhere a command is cut.
 */
static float *error_bound(const struct vnpu_cmd_compute *c, uint64_t n)
{
	struct vnpu_cmd_compute ac = *c;
	uint64_t k = (uint64_t)c->t[1].dims[1] * c->t[1].dims[2] * c->t[1].dims[3], i;
	float *mag = malloc(4 * n), *y = flat_host(&f, c->t[3].va);
	void *keep[3] = { NULL, NULL, NULL };
	size_t bytes[3];
	int s;

	assert_non_null(mag);
	memcpy(mag, y, 4 * n);
	for (s = 0; s < 3; s++) {
		struct vnpu_cmd_compute cc;
		struct vnpu_op_info info;
		float *p;

		if (s == 2 && !c->t[2].va)
			continue;
		assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
		bytes[s] = info.span[s];
		p = flat_host(&f, c->t[s].va);
		keep[s] = malloc(bytes[s]);
		assert_non_null(keep[s]);
		memcpy(keep[s], p, bytes[s]);
		for (i = 0; i < bytes[s] / 4; i++)
			p[i] = fabsf(p[i]);
	}
	ac.act = VNPU_ACT_NONE;
	ac.act_alpha = 0;
	ac.attr.raw[VNPU_ACT_BETA_WORD] = 0;
	assert_int_equal(flat_ref(&f, &ac), 0);
	for (i = 0; i < n; i++) {
		float m = (float)(k + 1) * FLT_EPSILON * y[i] * 1.5f;

		y[i] = mag[i];
		mag[i] = m + FLT_MIN;
	}
	for (s = 0; s < 3; s++) {
		if (keep[s])
			memcpy(flat_host(&f, c->t[s].va), keep[s], bytes[s]);
		free(keep[s]);
	}
	return mag;
}

static const uint8_t acts[] = {
	VNPU_ACT_NONE, VNPU_ACT_RELU, VNPU_ACT_RELU6, VNPU_ACT_LEAKY_RELU,
	VNPU_ACT_SIGMOID, VNPU_ACT_TANH, VNPU_ACT_HARD_SIGMOID, VNPU_ACT_HARD_SWISH,
};

/*
 * The epilogue, fused or not, against vnpu_act_ab() of the same
 * kernel's output without the activation: the sums are the same bits,
 * so every output must be, NaN, infinities and clamp ends included.
 */
static void check_epilogue(struct vnpu_cmd_compute *c, const float *got, uint64_t yn)
{
	struct vnpu_cmd_compute none = *c;
	float alpha, beta = vnpu_act_beta(c), *y = flat_host(&f, c->t[3].va);
	uint64_t i;

	memcpy(&alpha, &c->act_alpha, 4);
	none.act = VNPU_ACT_NONE;
	none.act_alpha = 0;
	none.attr.raw[VNPU_ACT_BETA_WORD] = 0;
	assert_int_equal(flat_exec(&f, &none, sizeof(none), NULL), 0);
	assert_int_equal(flat_engine.res.path, VNPU_ENG_CONV_F32);
	for (i = 0; i < yn; i++) {
		float e = vnpu_act_ab(c->act, alpha, beta, y[i]);

		if (memcmp(&e, &got[i], 4))
			fail_msg("act %u at %llu: engine %.9g, activation of its sum %.9g (sum %.9g)",
				 c->act, (unsigned long long)i, got[i], e, y[i]);
	}
}

/*
 * One random conv; @co and @ci of -1 pick them at random.  @odd: X holds
 * NaN, infinities and values at the activations' bends, and only the
 * epilogue is checked (the reference's NaN has no bound).
 */
static void one_case(int co_pick, int ci_pick, bool odd)
{
	static const uint32_t cos[] = { 1, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32,
					33, 40, 47, 48, 56, 64, 65, 72, 88 };
	static struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t co = co_pick > 0 ? (uint32_t)co_pick : cos[rnd(sizeof(cos) / sizeof(cos[0]))];
	uint32_t ci = ci_pick > 0 ? (uint32_t)ci_pick : (rnd(2) ? 1 + rnd(4) : 1 + rnd(40));
	uint32_t kh = 1 + rnd(5), kw = 1 + rnd(7), h = 1 + rnd(12), w = 1 + rnd(50);
	uint32_t nb = 1 + rnd(2), dx[4], dw[4], dy[4], oh, ow, i;
	uint64_t yn, cycles;
	float alpha = rndf(), *y, *want, *bound;
	unsigned int n;

	/* Within the weight size the AVX2 kernel takes (vnpu_eng_conv_f32_ok()). */
	while (ci > 1 && (uint64_t)kh * kw * ci * ((co + 7) / 8 * 8) * 4 >= (256u << 10))
		ci /= 2;
	cmd_init(&c, VNPU_OP_CONV2D);
	at->groups = 1;
	at->stride_h = 1 + rnd(2);
	at->stride_w = 1 + rnd(3);
	at->dilation_h = rnd(4) ? 1 : 2;
	at->dilation_w = rnd(4) ? 1 : 2;
	at->pad_top = rnd(3);
	at->pad_bottom = rnd(3);
	at->pad_left = rnd(4);
	at->pad_right = rnd(4);
	if (rnd(4) == 0) {
		/* The pointwise convs that run as one GEMM over all pixels. */
		kh = kw = 1;
		at->stride_h = at->stride_w = 1;
		at->pad_top = at->pad_bottom = at->pad_left = at->pad_right = 0;
	}
	if ((kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = ci;
	dw[0] = co; dw[1] = kh; dw[2] = kw; dw[3] = ci;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = co;
	flat_reset(&f);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	/* The AVX-512 kernel reads adjacent channels only. */
	if (rnd(5) || vnpu_i8_kernel_resolve(VNPU_I8_AUTO) != VNPU_I8_AVX2)
		place_f32(&c.t[0], rnd(4) ? 0 : 1 + rnd(3), false, true);
	else
		place_f32(&c.t[0], 0, true, true);
	place_f32(&c.t[1], 0, false, true);
	place_f32(&c.t[3], 0, false, false);
	if (rnd(3)) {
		uint32_t db[2] = { 2, co };

		c.t[2] = rnd(2) ? tdesc(VNPU_DT_FP32, 1, &co) : tdesc(VNPU_DT_FP32, 2, db);
		place_f32(&c.t[2], 0, false, true);
	}
	c.act = acts[rnd(sizeof(acts))];
	if (c.act == VNPU_ACT_LEAKY_RELU || c.act == VNPU_ACT_HARD_SIGMOID)
		c.act_alpha = f2u(alpha);
	if (c.act == VNPU_ACT_HARD_SIGMOID)
		c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(rndf());
	if (odd) {
		static const float odd_x[] = { NAN, INFINITY, -INFINITY, 3.0f, -3.0f,
					       0.0f, -0.0f, 1e30f, -1e30f };
		float *xp = flat_host(&f, c.t[0].va);
		uint64_t xn = (uint64_t)nb * h * w * ci;

		for (i = 0; i < 1 + xn / 16; i++)
			xp[rnd((uint32_t)xn)] = odd_x[rnd(sizeof(odd_x) / sizeof(odd_x[0]))];
	}
	yn = (uint64_t)nb * oh * ow * co;
	y = flat_host(&f, c.t[3].va);
	want = malloc(4 * yn);
	assert_non_null(want);

	assert_int_equal(flat_exec(&f, &c, sizeof(c), NULL), 0);
	if (flat_engine.res.path != VNPU_ENG_CONV_F32)
		fail_msg("co %u ci %u k %ux%u: ran on engine path %d, not the direct kernel",
			 co, ci, kh, kw, flat_engine.res.path);
	memcpy(want, y, 4 * yn);
	check_epilogue(&c, want, yn);
	if (odd) {
		free(want);
		return;
	}
	assert_int_equal(flat_ref(&f, &c), 0);
	bound = error_bound(&c, yn);
	/* Plus the activation's own rounding: a few units in the last place. */
	for (i = 0; i < yn; i++)
		if (!(fabsf(want[i] - y[i]) <= bound[i] + 4 * FLT_EPSILON * fabsf(y[i])))
			fail_msg("co %u ci %u k %ux%u s %ux%u d %ux%u pad %u,%u,%u,%u act %u "
				 "at %u: engine %.9g, reference %.9g (bound %g)", co, ci, kh, kw,
				 at->stride_h, at->stride_w, at->dilation_h, at->dilation_w,
				 at->pad_top, at->pad_left, at->pad_bottom, at->pad_right,
				 c.act, i, want[i], y[i], bound[i]);
	free(bound);

	/* Cut into row bands at every row it allows: the same bytes. */
	n = vnpu_compute_split_min(&c, sizeof(c), VNPU_SPLIT_MAX_PARTS, 1, parts, &cycles);
	if (n) {
		memset(y, 0x5a, 4 * yn);
		for (i = 0; i < n; i++)
			assert_int_equal(flat_exec(&f, &parts[i], sizeof(parts[i]), NULL), 0);
		if (memcmp(y, want, 4 * yn))
			fail_msg("co %u ci %u k %ux%u: cut in %u bands, not the whole command's bytes",
				 co, ci, kh, kw, n);
	}
	free(want);
}

static void test_random(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 600; i++)
		one_case(-1, -1, false);
}

/* Every output channel count from 1 to 72: each vector tail and block mix. */
static void test_every_co(void **state)
{
	int co;

	(void)state;
	for (co = 1; co <= 72; co++)
		one_case(co, -1, false);
}

/* First layers: 1 to 4 input channels, the folded taps. */
static void test_few_ci(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 200; i++)
		one_case(-1, 1 + (i & 3), false);
}

/* NaN, infinities, signed zeros and the clamps' ends through every epilogue. */
static void test_odd_values(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 300; i++)
		one_case(-1, -1, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_every_co),
		cmocka_unit_test(test_few_ci),
		cmocka_unit_test(test_odd_values),
	};

	flat_init(&f, 64ull << 20);
	return cmocka_run_group_tests_name("ops-conv-direct", tests, NULL, NULL);
}
