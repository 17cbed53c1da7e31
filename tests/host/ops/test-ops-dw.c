// SPDX-License-Identifier: MIT
/*
 * The direct depthwise kernels (ops/vnpu_engine_dw.c) against the
 * reference, bit for bit, on every int8 kernel this CPU has: a sweep of
 * the edges each kernel variant has, where test-ops-diff's random cases
 * reach them only by chance.
 *
 * - channels 2..33 (one is a plain conv) and a few wider counts: every
 *   tail of the 8- and 16-lane channel blocks, a tail alone (C < 8) and
 *   none;
 * - rows of 1..21 columns with padding on each side alone and on all
 *   four, pads wider than the kernel, strides 1, 2, 3 and mixed, 2-way
 *   dilation, kernels 1x1 to 5x5 and odd/even widths: interior runs of
 *   8 and 4 columns, single interior columns, border columns, columns
 *   and rows entirely in the padding; vertical strides 2 and 3 with odd
 *   and even heights and dilated rows (the staged ky pairs of int8 on
 *   AVX2);
 * - fp32 with every fused activation (and hard-swish, which the kernels
 *   leave to the separate pass), no bias, a bias and a scale-and-shift;
 * - int8 and uint8 X, W and Y in every combination, per-tensor and
 *   per-channel weights, zero points at their limits, NONE, RELU and
 *   RELU6, with and without a bias.
 *
 * Float inputs are small multiples of powers of two, so every sum is
 * exact in any order: the fp32 kernels' FMA chains must then give the
 * reference's bits too, and an output read from a wrong tap, channel or
 * pixel cannot hide inside a rounding tolerance.  X is the last operand
 * in a memory exactly its size, so a kernel reading past X's last
 * channel faults under AddressSanitizer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_engine.h"

#define MEM_SIZE	(8u << 20)

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return n ? (uint32_t)((r->s >> 16) % n) : 0;
}

/* k / 2^@sh for k in [-n, n]. */
static float rnd_dyadic(struct rng *r, uint32_t n, int sh)
{
	return ((float)rnd(r, 2 * n + 1) - (float)n) / (float)(1u << sh);
}

static int32_t zp_pick(struct rng *r, uint8_t dt)
{
	int32_t lo = dt == VNPU_DT_INT8 ? -128 : 0;

	switch (rnd(r, 4)) {
	case 0:
		return lo;
	case 1:
		return lo + 255;
	default:
		return lo + (int32_t)rnd(r, 256);
	}
}

/* One geometry: kernel, strides, dilations, pads (top, bottom, left, right). */
struct geo {
	uint32_t kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
};

static const struct geo geos[] = {
	{ 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },	/* the common case */
	{ 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 },	/* no border at all */
	{ 3, 3, 1, 1, 1, 1, 2, 0, 0, 0 },	/* each side alone */
	{ 3, 3, 1, 1, 1, 1, 0, 2, 0, 0 },
	{ 3, 3, 1, 1, 1, 1, 0, 0, 2, 0 },
	{ 3, 3, 1, 1, 1, 1, 0, 0, 0, 2 },
	{ 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
	{ 3, 3, 2, 2, 1, 1, 0, 1, 0, 1 },	/* TF "same", stride 2 */
	{ 3, 3, 1, 2, 1, 1, 1, 1, 1, 1 },
	{ 3, 3, 2, 1, 1, 1, 1, 1, 1, 1 },
	{ 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },
	{ 5, 5, 2, 2, 1, 1, 2, 2, 2, 2 },
	{ 5, 5, 3, 3, 1, 1, 1, 3, 4, 0 },
	{ 3, 3, 1, 1, 2, 2, 2, 2, 2, 2 },	/* dilated */
	{ 3, 3, 1, 1, 2, 1, 0, 1, 3, 1 },
	{ 2, 2, 1, 1, 1, 1, 0, 1, 0, 1 },	/* even kernel widths */
	{ 1, 4, 1, 1, 1, 1, 0, 0, 1, 2 },
	{ 4, 1, 1, 2, 1, 1, 2, 1, 0, 0 },
	{ 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },
	{ 1, 1, 2, 2, 1, 1, 1, 1, 1, 1 },	/* pad pixels: the epilogue of 0 */
	{ 3, 3, 1, 1, 1, 1, 5, 4, 6, 5 },	/* pads wider than the kernel */
	{ 2, 5, 1, 1, 1, 1, 1, 0, 4, 4 },
	/* int8 on AVX2 stages ky pairs at vertical strides of 2 and more: */
	{ 3, 3, 2, 2, 2, 2, 2, 2, 2, 2 },	/* dilated: a pair's rows dh apart */
	{ 2, 3, 2, 1, 1, 1, 0, 1, 1, 1 },	/* even height, stride 2 x 1 */
	{ 4, 2, 3, 2, 2, 1, 3, 0, 1, 2 },	/* stride 3, pairs of padding rows */
	{ 3, 3, 2, 2, 1, 1, 5, 4, 6, 5 },	/* pads wider than the kernel */
};

#define NGEOS	(sizeof(geos) / sizeof(geos[0]))

static const uint32_t wide_chans[] = { 40, 47, 48, 64, 71, 96 };

struct env {
	struct flat f;
	struct rng r;
	enum vnpu_i8_kernel kern;
	unsigned int cases;
};

/* @d's data (and per-channel parameters) in @e's memory, random. */
static void place(struct env *e, struct vnpu_tensor_desc *d, bool fill)
{
	uint64_t n = 1, i;
	uint32_t es = vnpu_dtype_size(d->dtype), k;
	uint8_t *p;

	for (k = 0; k < d->rank; k++)
		n *= d->dims[k];
	if (d->quant == VNPU_QUANT_CHANNEL) {
		uint32_t nc = d->dims[d->quant_axis], c;
		uint8_t *q;

		d->quant_va = flat_alloc(&e->f, 8ull * nc);
		assert_true(d->quant_va != 0);
		q = flat_host(&e->f, d->quant_va);
		for (c = 0; c < nc; c++) {
			float s = 0.002f + 0.048f * (float)rnd(&e->r, 1000) / 1000.0f;
			int32_t z = rnd(&e->r, 2) ? 0 : zp_pick(&e->r, d->dtype);

			memcpy(q + 4 * c, &s, 4);
			memcpy(q + 4 * (nc + c), &z, 4);
		}
	}
	d->va = flat_alloc(&e->f, n * es);
	assert_true(d->va != 0);
	p = flat_host(&e->f, d->va);
	if (!fill) {
		memset(p, 0xa5, n * es);
		return;
	}
	for (i = 0; i < n; i++) {
		float v;
		int32_t iv;

		switch (d->dtype) {
		case VNPU_DT_FP32:
			v = rnd_dyadic(&e->r, 16, 3);
			memcpy(p + 4 * i, &v, 4);
			break;
		case VNPU_DT_INT32:
			iv = (int32_t)rnd(&e->r, 40001) - 20000;
			memcpy(p + 4 * i, &iv, 4);
			break;
		default:
			p[i] = (uint8_t)rnd(&e->r, 256);
		}
	}
}

/*
 * X last, in a memory that ends with it: an allocation of exactly the
 * bytes used so far, so AddressSanitizer sees any read past X's end.
 */
static uint8_t *place_x_last(struct env *e, struct vnpu_tensor_desc *x, uint64_t *size)
{
	uint8_t *mem;

	place(e, x, true);
	*size = x->va - FLAT_BASE;
	*size += (uint64_t)vnpu_dtype_size(x->dtype) * x->dims[0] * x->dims[1] *
		 x->dims[2] * x->dims[3];
	mem = malloc(*size);
	assert_non_null(mem);
	memcpy(mem, e->f.mem, *size);
	return mem;
}

/* The engine on one exact copy of the memory, the reference on another. */
static void run_case(struct env *e, struct vnpu_cmd_compute *c)
{
	struct flat fe = e->f, fr = e->f;
	struct vnpu_tensor_desc *y = &c->t[3];
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	uint64_t size, off, i;

	fe.mem = place_x_last(e, &c->t[0], &size);
	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	fe.size = size;
	fr.mem = malloc(size);
	assert_non_null(fr.mem);
	memcpy(fr.mem, fe.mem, size);
	fr.size = size;
	flat_engine.i8_kernel = e->kern;
	assert_int_equal(flat_exec(&fe, c, sizeof(*c), NULL), 0);
	/* Another path would compare something else with the reference. */
	if (flat_engine.res.path != VNPU_ENG_DW) {
		free(fe.mem);
		free(fr.mem);
		fail_msg("case %u: ran on path %d, not the direct depthwise kernels",
			 e->cases, flat_engine.res.path);
	}
	assert_int_equal(flat_ref(&fr, c), 0);
	off = y->va - FLAT_BASE;
	for (i = 0; i < size && fe.mem[i] == fr.mem[i]; i++)
		;
	if (i < size) {
		uint8_t got = fe.mem[i], want = fr.mem[i];

		free(fe.mem);
		free(fr.mem);
		fail_msg("case %u (kernel %s, C %u, X %ux%u, K %ux%u, stride %ux%u, "
			 "dilation %ux%u, pads %u %u %u %u, dtypes %u %u %u, act %u): "
			 "byte %lld from Y's start is 0x%02x, the reference's 0x%02x",
			 e->cases, vnpu_i8_kernel_id(e->kern), y->dims[3], c->t[0].dims[1],
			 c->t[0].dims[2], c->t[1].dims[1], c->t[1].dims[2],
			 c->attr.conv.stride_h, c->attr.conv.stride_w,
			 c->attr.conv.dilation_h, c->attr.conv.dilation_w,
			 c->attr.conv.pad_top, c->attr.conv.pad_bottom,
			 c->attr.conv.pad_left, c->attr.conv.pad_right, c->t[0].dtype,
			 c->t[1].dtype, y->dtype, c->act, (long long)(i - off),
			 got, want);
	}
	free(fe.mem);
	free(fr.mem);
	e->cases++;
}

/* A depthwise CONV2D of @ch channels over an @h x @w X in geometry @g. */
static void dw_cmd(struct vnpu_cmd_compute *c, const struct geo *g, uint32_t ch,
		   uint32_t h, uint32_t w, uint32_t *dx, uint32_t *dw, uint32_t *dy)
{
	struct vnpu_attr_conv2d *at = &c->attr.conv;

	cmd_init(c, VNPU_OP_CONV2D);
	at->groups = ch;
	at->stride_h = g->sh;
	at->stride_w = g->sw;
	at->dilation_h = g->dh;
	at->dilation_w = g->dw;
	at->pad_top = g->pt;
	at->pad_bottom = g->pb;
	at->pad_left = g->pl;
	at->pad_right = g->pr;
	dx[0] = 1; dx[1] = h; dx[2] = w; dx[3] = ch;
	dw[0] = ch; dw[1] = g->kh; dw[2] = g->kw; dw[3] = 1;
	dy[0] = 1;
	dy[1] = (h + g->pt + g->pb - (g->kh - 1) * g->dh - 1) / g->sh + 1;
	dy[2] = (w + g->pl + g->pr - (g->kw - 1) * g->dw - 1) / g->sw + 1;
	dy[3] = ch;
}

/* X rows of the kernel's reach and a few more; columns 1..21 and then wider. */
static void pick_xy(struct env *e, const struct geo *g, uint32_t i, uint32_t *h, uint32_t *w)
{
	uint32_t minh = (g->kh - 1) * g->dh + 1, minw = (g->kw - 1) * g->dw + 1;

	*h = minh + rnd(&e->r, 3);
	*w = 1 + i % 21;
	if (*w + g->pl + g->pr < minw)
		*w = minw;
	if (*h + g->pt + g->pb < minh)
		*h = minh;
}

static void one_f32(struct env *e, const struct geo *g, uint32_t ch, uint32_t i)
{
	static const uint8_t acts[] = { VNPU_ACT_NONE, VNPU_ACT_RELU, VNPU_ACT_RELU6,
					VNPU_ACT_LEAKY_RELU, VNPU_ACT_HARD_SWISH };
	struct vnpu_cmd_compute c;
	uint32_t dx[4], dw[4], dy[4], db[2] = { 2, ch }, h, w;
	float alpha = 0.125f;

	pick_xy(e, g, i, &h, &w);
	dw_cmd(&c, g, ch, h, w, dx, dw, dy);
	c.act = acts[i % 5];
	if (c.act == VNPU_ACT_LEAKY_RELU)
		memcpy(&c.act_alpha, &alpha, 4);
	flat_reset(&e->f);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	/* No bias, a bias, a scale and shift. */
	if (i / 5 % 3 == 1)
		c.t[2] = tdesc(VNPU_DT_FP32, 1, &ch);
	else if (i / 5 % 3 == 2)
		c.t[2] = tdesc(VNPU_DT_FP32, 2, db);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	place(e, &c.t[1], true);
	if (c.t[2].rank)
		place(e, &c.t[2], true);
	place(e, &c.t[3], false);
	run_case(e, &c);
}

static void one_q8(struct env *e, const struct geo *g, uint32_t ch, uint32_t i)
{
	static const uint8_t acts[] = { VNPU_ACT_NONE, VNPU_ACT_RELU, VNPU_ACT_RELU6 };
	static const uint8_t dts[] = { VNPU_DT_INT8, VNPU_DT_UINT8 };
	struct vnpu_cmd_compute c;
	uint32_t dx[4], dw[4], dy[4], h, w;
	float sx = 0.02f, sw = 0.01f;

	pick_xy(e, g, i, &h, &w);
	dw_cmd(&c, g, ch, h, w, dx, dw, dy);
	c.act = acts[i % 3];
	c.round = VNPU_ROUND_ONNX;
	flat_reset(&e->f);
	/* Every combination of the three dtypes over eight cases. */
	c.t[0] = tdesc(dts[i & 1], 4, dx);
	c.t[1] = tdesc(dts[i >> 1 & 1], 4, dw);
	c.t[3] = tdesc(dts[i >> 2 & 1], 4, dy);
	tquant(&c.t[0], sx, zp_pick(&e->r, c.t[0].dtype));
	if (i / 8 % 2) {
		c.t[1].quant = VNPU_QUANT_CHANNEL;
		c.t[1].quant_axis = 0;
	} else {
		tquant(&c.t[1], sw, zp_pick(&e->r, c.t[1].dtype));
	}
	/* Some outputs saturate: a scale below the sums' spread. */
	tquant(&c.t[3], sx * sw * (float)(g->kh * g->kw) * (rnd(&e->r, 3) ? 40.0f : 2.0f),
	       zp_pick(&e->r, c.t[3].dtype));
	if (i / 16 % 2)
		c.t[2] = tdesc(VNPU_DT_INT32, 1, &ch);
	place(e, &c.t[1], true);
	if (c.t[2].rank)
		place(e, &c.t[2], true);
	place(e, &c.t[3], false);
	run_case(e, &c);
}

/*
 * Every channel count 2..33 and the wider ones, each over every
 * geometry; the row width, activation, bias and dtypes vary with the
 * case index so that each is met with many channel counts.
 */
static void sweep(struct env *e, bool quant)
{
	uint32_t ch, k, i = 0, n;

	for (ch = 2; ch <= 33 + sizeof(wide_chans) / sizeof(wide_chans[0]); ch++) {
		n = ch <= 33 ? ch : wide_chans[ch - 34];
		for (k = 0; k < NGEOS; k++, i++) {
			if (quant)
				one_q8(e, &geos[k], n, i);
			else
				one_f32(e, &geos[k], n, i);
		}
	}
}

static void test_dw_f32(void **state)
{
	struct env *e = *state;

	sweep(e, false);
	printf("# %s: %u fp32 cases\n", vnpu_i8_kernel_id(e->kern), e->cases);
}

static void test_dw_q8(void **state)
{
	struct env *e = *state;

	sweep(e, true);
	printf("# %s: %u int8 cases\n", vnpu_i8_kernel_id(e->kern), e->cases);
}

/*
 * int8 on AVX2 stages an output row's X rows when the ring fits the
 * scratch: PP-OCR rec's 480-channel, 278-column 5x5 rows take 2.6 MiB of
 * it.  With the device's default scratch the ring is used (the arena's
 * peak says so), and with 2 MiB, where only the unstaged kernel fits,
 * that kernel runs instead of the command failing; the bytes equal the
 * reference's either way (and on every other kernel, which stages
 * nothing).
 */
static void test_dw_q8_stage_budget(void **state)
{
	static const struct geo g = { 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 };
	static const size_t arenas[] = { FLAT_ARENA_BYTES, 2u << 20 };
	struct env *e = *state;
	struct vnpu_arena *saved = flat_engine.arena;
	uint32_t dx[4], dw[4], dy[4], k;

	for (k = 0; k < 2; k++) {
		struct vnpu_cmd_compute c;
		size_t peak;

		flat_engine.arena = vnpu_arena_new(arenas[k]);
		assert_non_null(flat_engine.arena);
		dw_cmd(&c, &g, 480, 6, 278, dx, dw, dy);
		c.round = VNPU_ROUND_ONNX;
		flat_reset(&e->f);
		c.t[0] = tdesc(VNPU_DT_UINT8, 4, dx);
		c.t[1] = tdesc(VNPU_DT_INT8, 4, dw);
		c.t[3] = tdesc(VNPU_DT_UINT8, 4, dy);
		tquant(&c.t[0], 0.02f, 3);
		tquant(&c.t[1], 0.01f, 0);
		tquant(&c.t[3], 0.02f * 0.01f * 25 * 40, 128);
		place(e, &c.t[1], true);
		place(e, &c.t[3], false);
		run_case(e, &c);
		peak = vnpu_arena_peak(flat_engine.arena);
		vnpu_arena_free(flat_engine.arena);
		flat_engine.arena = saved;
		printf("# %s, scratch %zu MiB: peak %zu KiB\n", vnpu_i8_kernel_id(e->kern),
		       arenas[k] >> 20, peak >> 10);
		/* Only int8 on AVX2 stages rows. */
		if (e->kern != VNPU_I8_AVX2)
			continue;
		if (k == 0)
			assert_true(peak > (2u << 20));
		else
			assert_true(peak <= (2u << 20));
	}
}

static enum vnpu_i8_kernel group_kern;

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	flat_init(&e->f, MEM_SIZE);
	e->r.s = 0x2545f4914f6cdd1dull;
	e->kern = group_kern;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	free(e->f.mem);
	free(e);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dw_f32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dw_q8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dw_q8_stage_budget, setup, teardown),
	};
	char group[64];
	int k, fails = 0;

	/* Every kernel this CPU has; one it has not is said, not passed. */
	for (k = 0; k < VNPU_I8_NKERNELS; k++) {
		group_kern = (enum vnpu_i8_kernel)k;
		if (!vnpu_i8_kernel_available(group_kern)) {
			printf("# int8 kernel %s: not on this CPU, its depthwise kernels not run\n",
			       vnpu_i8_kernel_id(group_kern));
			continue;
		}
		snprintf(group, sizeof(group), "depthwise, int8 kernel %s",
			 vnpu_i8_kernel_id(group_kern));
		fails += _cmocka_run_group_tests(group, tests, sizeof(tests) / sizeof(tests[0]),
						 NULL, NULL);
	}
	return fails;
}
