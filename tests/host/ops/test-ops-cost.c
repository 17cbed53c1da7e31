// SPDX-License-Identifier: MIT
/*
 * The work a command does against the work units vnpu_op_check() counts
 * for it (ops.rst, "Work units"): the device bounds a command's units, so
 * a kernel whose work is not proportional to them lets a guest keep an
 * engine busy far past the limits.  CONV_TRANSPOSE was one: every output
 * pixel scanned every kernel tap, so a legal command counted at 67 M
 * units ran for minutes.  Its kernels now find an output pixel's taps by
 * arithmetic (vnpu_taps.h).
 *
 * Nothing here is timed.  What is checked:
 *  - vnpu_taps_of() gives exactly the taps the definition gives (a scan
 *    of every tap, as the old kernels did), over extreme strides,
 *    dilations, pads and kernel sizes;
 *  - the reference and the engine compute, bit for bit, what that scan
 *    gives on adversarial transposed convolutions (an independent oracle:
 *    diff tests only compare the engine with the reference, and both
 *    changed); the engine's phase path, which sums in the CONV2D kernels'
 *    order, within the bound any order keeps;
 *  - the work the kernels account to the abort poll (vnpu_run_tick()),
 *    seen as the number of polls, stays within a small multiple of the
 *    counted units: the old reference accounted its scan, 65 537 units
 *    per output element of the tall-kernel command counted as 2.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_engine.h"
#include "vnpu_taps.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

/* A value of [1, max], biased to the small and to the extremes. */
static uint32_t pick(uint32_t max)
{
	switch (rnd(4)) {
	case 0:
		return 1 + rnd(4 < max ? 4 : max);
	case 1:
		return max - rnd(max < 3 ? max : 3);
	default:
		return 1 + rnd(max);
	}
}

/* ---- The taps of one coordinate ---------------------------------------- */

static void check_axis(uint32_t k, uint32_t dil, uint32_t stride, uint32_t in,
		       uint32_t pad, uint32_t o)
{
	struct vnpu_taps_axis a;
	struct vnpu_taps t;
	uint32_t n = 0, tap;

	vnpu_taps_axis_init(&a, k, dil, stride, in, pad);
	vnpu_taps_of(&a, o, &t);
	for (tap = 0; tap < k; tap++) {
		int64_t v = (int64_t)o + pad - (int64_t)tap * dil;

		if (v < 0 || v % stride || v / stride >= in)
			continue;
		if (n >= t.n || t.first + n * t.period != tap ||
		    t.ifirst - n * t.istep != (uint32_t)(v / stride)) {
			fprintf(stderr, "k %u dil %u stride %u in %u pad %u o %u: "
				"tap %u (input %lld) is not tap %u of %u (first %u "
				"period %u, input %u step %u)\n", k, dil, stride, in,
				pad, o, tap, (long long)(v / stride), n, t.n, t.first,
				t.period, t.ifirst, t.istep);
			fail();
		}
		n++;
	}
	if (n != t.n) {
		fprintf(stderr, "k %u dil %u stride %u in %u pad %u o %u: %u taps, "
			"vnpu_taps_of() says %u\n", k, dil, stride, in, pad, o, n, t.n);
		fail();
	}
}

static void test_taps_match_scan(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 40000; i++) {
		uint32_t k = pick(i % 4 ? 64 : 1024), dil = pick(i % 3 ? 12 : 65536);
		uint32_t stride = pick(i % 3 ? 12 : 65536), in = pick(i % 2 ? 40 : 1u << 20);
		uint32_t pad = rnd(3) ? rnd(8) : rnd(65537);
		uint64_t full = (uint64_t)(in - 1) * stride + (uint64_t)(k - 1) * dil + 1 +
				stride;
		uint32_t o;

		/* Outputs past the last one the validator allows too: they have no taps. */
		o = (uint32_t)(rnd(4) ? rnd((uint32_t)(full < UINT32_MAX ? full : UINT32_MAX)) :
			       full - 1 - rnd(3) < UINT32_MAX ? full - 1 - rnd(3) : UINT32_MAX);
		check_axis(k, dil, stride, in, pad, o);
		check_axis(k, dil, stride, in, pad, rnd(2 * (k + stride)));
	}
}

/* ---- Whole commands ----------------------------------------------------- */

struct host_cmd {
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;
	struct vnpu_op_bind b;
	void *mem[VNPU_OP_SLOTS];
};

struct poll_count {
	unsigned int polls;
};

static bool count_poll(void *o)
{
	((struct poll_count *)o)->polls++;
	return false;
}

static void host_cmd_bind(struct host_cmd *h)
{
	uint64_t r = 0x5eed;
	int i;

	memset(&h->b, 0, sizeof(h->b));
	if (vnpu_op_check(&h->c, sizeof(h->c), &h->cc, &h->info)) {
		fprintf(stderr, "command refused at offset %u\n", h->info.err_off);
		fail();
	}
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		uint64_t j;

		h->mem[i] = NULL;
		if (!((h->info.present >> i) & 1))
			continue;
		h->mem[i] = calloc(1, h->info.span[i]);
		assert_non_null(h->mem[i]);
		h->b.data[i] = h->mem[i];
		if (i == VNPU_OP_SLOT_OUT)
			continue;
		for (j = 0; j + 4 <= h->info.span[i]; j += 4) {
			float v;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			v = (float)((int32_t)(r >> 40) % 1000) / 997.0f;
			if (h->c.t[i].dtype == VNPU_DT_FP32) {
				memcpy((uint8_t *)h->mem[i] + j, &v, 4);
			} else {
				uint16_t x = vnpu_f32_to_fp16(v);

				memcpy((uint8_t *)h->mem[i] + j, &x, 2);
				x = vnpu_f32_to_fp16(-v / 3);
				memcpy((uint8_t *)h->mem[i] + j + 2, &x, 2);
			}
		}
	}
}

static void host_cmd_free(struct host_cmd *h)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++)
		free(h->mem[i]);
}

static float load(const struct vnpu_tensor_desc *d, const void *base, uint64_t i)
{
	uint16_t x;
	float f;

	if (d->dtype == VNPU_DT_FP32) {
		memcpy(&f, (const uint8_t *)base + 4 * i, 4);
		return f;
	}
	memcpy(&x, (const uint8_t *)base + 2 * i, 2);
	return vnpu_fp16_to_f32(x);
}

/*
 * CONV_TRANSPOSE by its definition, dense NHWC operands, no bias or
 * activation: every output element sums, in ky, kx, ci order, the taps
 * found by trying them all.  Returns Y's values as floats.
 */
static float *convt_oracle(const struct host_cmd *h, float **mag)
{
	const struct vnpu_cmd_compute *c = &h->cc;
	const struct vnpu_attr_conv_transpose *at = &c->attr.convt;
	const struct vnpu_tensor_desc *x = &c->t[0], *w = &c->t[1], *y = &c->t[3];
	uint32_t cig = x->dims[3] / at->groups, cog = w->dims[3];
	uint64_t n = (uint64_t)y->dims[0] * y->dims[1] * y->dims[2] * y->dims[3], e = 0;
	uint32_t b, oy, ox, co, ky, kx, ci;
	float *out = malloc(4 * n), *abs_sum = malloc(4 * n);

	assert_non_null(out);
	assert_non_null(abs_sum);
	for (b = 0; b < y->dims[0]; b++)
		for (oy = 0; oy < y->dims[1]; oy++)
			for (ox = 0; ox < y->dims[2]; ox++)
				for (co = 0; co < y->dims[3]; co++) {
					uint32_t g = co / cog, mo = co % cog;
					float acc = 0.0f, m = 0.0f;

					for (ky = 0; ky < w->dims[1]; ky++) {
						int64_t vy = (int64_t)oy + at->pad_top -
							     (int64_t)ky * at->dilation_h;

						if (vy < 0 || vy % at->stride_h ||
						    vy / at->stride_h >= x->dims[1])
							continue;
						for (kx = 0; kx < w->dims[2]; kx++) {
							int64_t vx = (int64_t)ox + at->pad_left -
								     (int64_t)kx * at->dilation_w;
							uint64_t xi, wi;

							if (vx < 0 || vx % at->stride_w ||
							    vx / at->stride_w >= x->dims[2])
								continue;
							for (ci = 0; ci < cig; ci++) {
								xi = (((uint64_t)b * x->dims[1] +
								       (uint64_t)(vy / at->stride_h)) *
								      x->dims[2] + (uint64_t)(vx / at->stride_w)) *
								     x->dims[3] + g * cig + ci;
								wi = (((uint64_t)(g * cig + ci) * w->dims[1] + ky) *
								      w->dims[2] + kx) * cog + mo;
								acc += load(x, h->mem[0], xi) *
								       load(w, h->mem[1], wi);
								m += fabsf(load(x, h->mem[0], xi) *
									   load(w, h->mem[1], wi));
							}
						}
					}
					abs_sum[e] = m;
					out[e++] = acc;
				}
	*mag = abs_sum;
	return out;
}

/*
 * Bit for bit, or for @mag != NULL (the engine's phase path, whose float
 * sums run in the CONV2D kernels' order) within what any order of the
 * sum can differ by: (terms + 1) roundings of the magnitudes' sum, and
 * the storage type's rounding of the result.
 */
static void expect_equal(const struct host_cmd *h, const float *want,
			 const float *mag, const char *who, const char *what)
{
	const struct vnpu_tensor_desc *w = &h->cc.t[1];
	float terms = (float)w->dims[1] * w->dims[2] * (w->dims[0] / h->cc.attr.convt.groups);
	const struct vnpu_tensor_desc *y = &h->cc.t[3];
	uint64_t n = h->info.span[3] / (y->dtype == VNPU_DT_FP32 ? 4 : 2), i;

	for (i = 0; i < n; i++) {
		float got = load(y, h->mem[3], i), want_y = want[i];
		uint32_t a, b;

		if (y->dtype != VNPU_DT_FP32)
			want_y = vnpu_fp16_to_f32(vnpu_f32_to_fp16(want_y));
		memcpy(&a, &got, 4);
		memcpy(&b, &want_y, 4);
		if (mag && fabsf(got - want_y) <= mag[i] * (terms + 2) * 0x1p-23f +
		    fabsf(want_y) * (y->dtype == VNPU_DT_FP32 ? 0x1p-23f : 0x1p-10f))
			continue;
		if (a != b) {
			fprintf(stderr, "%s, %s: element %llu is %.9g, the definition "
				"gives %.9g\n", what, who, (unsigned long long)i, got, want_y);
			fail();
		}
	}
}

/*
 * Run @h through the reference and the engine, each against the oracle,
 * counting polls: each poll stands for VNPU_POLL_WORK units the kernel
 * accounted, which must stay within twice the counted units (the
 * engine accounts packing W and writing Y besides the MACs) plus one
 * poll interval.
 */
static void run_both(struct host_cmd *h, const char *what, bool oracle)
{
	float *mag = NULL, *want = oracle ? convt_oracle(h, &mag) : NULL;
	int side;

	for (side = 0; side < 2; side++) {
		struct poll_count pc = { 0 };
		struct vnpu_run_ctx x = {
			.aborted = count_poll, .opaque = &pc, .i8_kernel = VNPU_I8_AUTO,
		};
		uint64_t ticked_min;
		int ret;

		memset(h->mem[3], 0, h->info.span[3]);
		ret = side ? vnpu_engine_run(&h->cc, &h->info, &h->b, &x) :
		      vnpu_ref_run_ctx(&h->cc, &h->b, &x);
		assert_int_equal(ret, 0);
		ticked_min = (uint64_t)pc.polls * VNPU_POLL_WORK;
		if (ticked_min > 2 * h->info.macs + VNPU_POLL_WORK) {
			fprintf(stderr, "%s, %s: accounted at least %llu work units "
				"for a command counted as %llu\n", what,
				side ? "engine" : "reference",
				(unsigned long long)ticked_min,
				(unsigned long long)h->info.macs);
			fail();
		}
		if (want)
			expect_equal(h, want, side && x.path == VNPU_ENG_CONVT_PHASES ? mag : NULL,
				     side ? "engine" : "reference", what);
	}
	free(want);
	free(mag);
}

static void convt_cmd(struct host_cmd *h, uint8_t dt, const uint32_t *dx,
		      uint32_t kh, uint32_t kw, uint32_t cog, uint32_t groups,
		      uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw,
		      uint32_t pt, uint32_t pl, uint32_t pb, uint32_t pr)
{
	struct vnpu_attr_conv_transpose *at = &h->c.attr.convt;
	uint32_t dwt[4] = { dx[3], kh, kw, cog }, dy[4];
	uint64_t fh = (uint64_t)(dx[1] - 1) * sh + (uint64_t)(kh - 1) * dh + 1;
	uint64_t fw = (uint64_t)(dx[2] - 1) * sw + (uint64_t)(kw - 1) * dw + 1;

	cmd_init(&h->c, VNPU_OP_CONV_TRANSPOSE);
	at->groups = groups;
	at->stride_h = sh;
	at->stride_w = sw;
	at->dilation_h = dh;
	at->dilation_w = dw;
	at->pad_top = pt;
	at->pad_left = pl;
	at->pad_bottom = pb;
	at->pad_right = pr;
	dy[0] = dx[0];
	dy[1] = (uint32_t)(fh - pt - pb);
	dy[2] = (uint32_t)(fw - pl - pr);
	dy[3] = cog * groups;
	h->c.t[0] = tdesc(dt, 4, dx);
	h->c.t[1] = tdesc(dt, 4, dwt);
	h->c.t[3] = tdesc(dt, 4, dy);
	h->c.t[0].va = 1ull << 32;
	h->c.t[1].va = 2ull << 32;
	h->c.t[3].va = 3ull << 32;
}

/* The command, one input pixel: 1088 taps scanned per output pixel. */
static void test_convt_tall_kernel(void **state)
{
	static const uint8_t dts[] = { VNPU_DT_FP16, VNPU_DT_FP32 };
	const uint32_t dx[4] = { 1, 1, 1, 1 };
	struct host_cmd h;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		convt_cmd(&h, dts[i], dx, 1024, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0);
		host_cmd_bind(&h);
		/* Counted: one MAC and one written element per output pixel. */
		assert_int_equal(h.info.macs, 2 * 1024 * 64);
		run_both(&h, i ? "tall kernel fp32" : "tall kernel fp16", true);
		host_cmd_free(&h);
	}
}

/* Strides, dilations and pads that leave most outputs or taps without work. */
static void test_convt_sparse(void **state)
{
	static const struct {
		const char *what;
		uint8_t dt;
		uint32_t dx[4], kh, kw, cog, g, sh, sw, dh, dw, pt, pl, pb, pr;
	} cs[] = {
		{ "dilation 1000, wide kernel, 64 channels, narrow output", VNPU_DT_FP32,
		  { 1, 1, 1, 64 }, 1, 64, 1, 1, 1, 1, 1, 1000, 0, 0, 0, 0 },
		{ "stride 65536", VNPU_DT_FP16, { 1, 1, 2, 4 }, 1, 4, 4, 1, 1, 65536, 1, 1,
		  0, 0, 0, 0 },
		{ "dilation 997 stride 1000, groups", VNPU_DT_FP32, { 1, 1, 4, 8 }, 1, 8, 3, 2,
		  1000, 1000, 997, 997, 0, 0, 0, 0 },
		{ "pads eat all but a corner", VNPU_DT_FP32, { 1, 16, 16, 2 }, 16, 16, 2, 1,
		  1, 1, 1, 1, 28, 28, 1, 1 },
		{ "dilation 3 stride 6, tall kernel", VNPU_DT_FP16, { 2, 3, 3, 3 }, 100, 5,
		  2, 1, 6, 2, 3, 4, 50, 3, 20, 1 },
		{ "wide rows with every third column active", VNPU_DT_FP32, { 1, 2, 40, 3 }, 2,
		  2, 5, 1, 1, 3, 1, 1, 0, 0, 0, 0 },
	};
	struct host_cmd h;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		convt_cmd(&h, cs[i].dt, cs[i].dx, cs[i].kh, cs[i].kw, cs[i].cog, cs[i].g,
			  cs[i].sh, cs[i].sw, cs[i].dh, cs[i].dw, cs[i].pt, cs[i].pl,
			  cs[i].pb, cs[i].pr);
		host_cmd_bind(&h);
		run_both(&h, cs[i].what, true);
		host_cmd_free(&h);
	}
}

/* Random small geometries against the definition, extremes included. */
static void test_convt_random(void **state)
{
	struct host_cmd h;
	int i;

	(void)state;
	for (i = 0; i < 300; i++) {
		uint32_t g = 1 + rnd(2), cig = 1 + rnd(3);
		uint32_t dx[4] = { 1 + rnd(2), 1 + rnd(4), 1 + rnd(6), g * cig };
		uint32_t kh = 1 + rnd(i % 4 ? 4 : 40), kw = 1 + rnd(5), cog = 1 + rnd(i % 3 ? 3 : 10);
		uint32_t sh = rnd(8) ? 1 + rnd(4) : 1 + rnd(300);
		uint32_t sw = rnd(8) ? 1 + rnd(4) : 1 + rnd(300);
		uint32_t dh = rnd(8) ? 1 + rnd(3) : 1 + rnd(300);
		uint32_t dw = rnd(8) ? 1 + rnd(3) : 1 + rnd(300);
		uint64_t fh = (uint64_t)(dx[1] - 1) * sh + (uint64_t)(kh - 1) * dh + 1;
		uint64_t fw = (uint64_t)(dx[2] - 1) * sw + (uint64_t)(kw - 1) * dw + 1;
		uint32_t pt = rnd((uint32_t)fh), pb = rnd((uint32_t)(fh - pt));
		uint32_t pl = rnd((uint32_t)fw), pr = rnd((uint32_t)(fw - pl));

		convt_cmd(&h, rnd(3) ? VNPU_DT_FP32 : VNPU_DT_FP16, dx, kh, kw, cog, g,
			  sh, sw, dh, dw, pt, pl, pb, pr);
		host_cmd_bind(&h);
		run_both(&h, "random", true);
		host_cmd_free(&h);
	}
}

/*
 * CO past the engine's channel limit runs the reference, which scanned
 * every tap per output element too: work accounted only, the values are
 * the engine's and the reference's same code.
 */
static void test_convt_many_channels(void **state)
{
	const uint32_t dx[4] = { 1, 1, 1, 2 };
	struct host_cmd h;

	(void)state;
	convt_cmd(&h, VNPU_DT_FP16, dx, 8, 8, 32769, 2, 1, 1, 1, 1, 0, 0, 0, 0);
	host_cmd_bind(&h);
	run_both(&h, "CO 65538", false);
	host_cmd_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taps_match_scan),
		cmocka_unit_test(test_convt_tall_kernel),
		cmocka_unit_test(test_convt_sparse),
		cmocka_unit_test(test_convt_random),
		cmocka_unit_test(test_convt_many_channels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
