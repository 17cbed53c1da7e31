// SPDX-License-Identifier: MIT
/*
 * The engine's per-element rows that do not compute element by element
 * as the reference does, held against the reference byte for byte on the
 * cases that break such rows: ELTWISE with VNPU_ROUND_ORT_QLINEAR through
 * AVX2 (tails shorter than a vector, broadcast operands, rounding ties,
 * saturation at both ends and beyond int32) and through tables of one
 * operand's 256 codes (rows just below and above the length that builds
 * one, a fixed code that changes from row to row, either operand fixed).
 * Every command must also have run on the engine's own path, not on its
 * fallback to the reference.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

struct env {
	struct flat f;
	uint64_t r;
};

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)((*s >> 11) % n);
}

static int setup(void **state)
{
	static struct env e;

	flat_init(&e.f, 64ull << 20);
	e.r = 0x9e3779b97f4a7c15ull;
	*state = &e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	free(e->f.mem);
	return 0;
}

/* Elements @d spans, strides included. */
static uint64_t span(const struct vnpu_tensor_desc *d)
{
	uint64_t n = 1;
	int k;

	if (!(d->flags & VNPU_TENSOR_STRIDED)) {
		for (k = 0; k < d->rank; k++)
			n *= d->dims[k];
		return n;
	}
	for (k = 0; k < d->rank; k++)
		n += (uint64_t)(d->dims[k] - 1) * d->strides[k];
	return n;
}

/* Strides with a gap of @gap elements after every innermost row. */
static void gapped(struct vnpu_tensor_desc *d, uint32_t gap)
{
	uint64_t st = 1;
	int k;

	d->flags = VNPU_TENSOR_STRIDED;
	for (k = d->rank - 1; k >= 0; k--) {
		d->strides[k] = st;
		st = st * d->dims[k] + (k == d->rank - 1 ? gap : 0);
	}
}

/*
 * Place the 8-bit operand @d with @codes (NULL: random codes, the two
 * extremes of the dtype often).
 */
static void put(struct env *e, struct vnpu_tensor_desc *d, const uint8_t *codes)
{
	uint64_t n = span(d), i;
	uint8_t *p;

	d->va = flat_alloc(&e->f, n);
	assert_true(d->va != 0);
	p = flat_host(&e->f, d->va);
	for (i = 0; i < n; i++) {
		uint32_t k = rnd(&e->r, 8);

		if (codes)
			p[i] = codes[i];
		else if (k == 0)
			p[i] = d->dtype == VNPU_DT_INT8 ? 0x80 : 0x00;
		else if (k == 1)
			p[i] = d->dtype == VNPU_DT_INT8 ? 0x7f : 0xff;
		else
			p[i] = (uint8_t)rnd(&e->r, 256);
	}
}

/*
 * Run @c (operands placed, t[3] described but not placed) on the engine
 * and on the reference, each into its own Y, and compare every byte Y
 * spans, the bytes between strided elements included.
 */
static void same_as_ref(struct env *e, struct vnpu_cmd_compute *c, const char *what)
{
	struct vnpu_cmd_compute r = *c;
	uint64_t n = span(&c->t[3]) * vnpu_dtype_size(c->t[3].dtype), i;
	uint8_t *pe, *pr;

	c->t[3].va = flat_alloc(&e->f, n);
	r.t[3].va = flat_alloc(&e->f, n);
	assert_true(c->t[3].va && r.t[3].va);
	pe = flat_host(&e->f, c->t[3].va);
	pr = flat_host(&e->f, r.t[3].va);
	memset(pe, 0x5a, n);
	memset(pr, 0x5a, n);
	if (flat_exec(&e->f, c, sizeof(*c), NULL)) {
		fprintf(stderr, "# %s: the engine refused it\n", what);
		fail();
	}
	assert_int_equal(flat_engine.res.path, VNPU_ENG_ELT);
	assert_int_equal(flat_ref(&e->f, &r), 0);
	for (i = 0; i < n; i++)
		if (pe[i] != pr[i]) {
			fprintf(stderr, "# %s: byte %llu of Y is 0x%02x, the reference's 0x%02x\n",
				what, (unsigned long long)i, pe[i], pr[i]);
			fail();
		}
}

struct qparams {
	float sa, sb, sy;
	int32_t za, zb, zy;
	const char *why;
};

/*
 * Scales and zero points for uint8 (the int8 cases shift every zero point
 * by -128): ordinary ones, gen-ms-quant.py's set with which the two fma
 * nestings of QLinearAdd round some pairs apart, exact halves (ratios of
 * 0.5: ties to even), results far past both ends, and ratios so large
 * that results leave int32 or become infinite or NaN (inf * 0).
 */
static const struct qparams qsets[] = {
	{ 0.02f, 0.03f, 0.04f, 128, 120, 100, "ordinary" },
	{ 0.324f, 0.462f, 0.516f, 82, 204, 44, "nesting" },
	{ 1.0f, 1.0f, 2.0f, 0, 0, 0, "ties" },
	{ 1.0f, 1.0f, 2.0f, 3, 0, 1, "ties, odd zero points" },
	{ 0.5f, 0.25f, 0.001f, 128, 128, 128, "saturating" },
	{ 1e10f, 1e10f, 1e-3f, 128, 7, 128, "beyond int32" },
	{ 3e38f, 3e38f, 1e-30f, 128, 128, 0, "infinite ratios" },
};

static void qlinear_cmd(struct vnpu_cmd_compute *c, unsigned int kind, uint8_t dt,
			const struct qparams *q)
{
	int32_t shift = dt == VNPU_DT_INT8 ? -128 : 0;

	cmd_init(c, VNPU_OP_ELTWISE);
	c->round = VNPU_ROUND_ORT_QLINEAR;
	c->attr.eltwise.kind = kind;
	c->t[0].dtype = c->t[1].dtype = c->t[3].dtype = dt;
	tquant(&c->t[0], q->sa, q->za + shift);
	tquant(&c->t[1], q->sb, q->zb + shift);
	tquant(&c->t[3], q->sy, q->zy + shift);
}

static void shape(struct vnpu_tensor_desc *d, int rank, const uint32_t *dims)
{
	int k;

	d->rank = (uint8_t)rank;
	for (k = 0; k < rank; k++)
		d->dims[k] = dims[k];
}

static const uint8_t q8_dts[2] = { VNPU_DT_UINT8, VNPU_DT_INT8 };
static const unsigned int qkinds[2] = { VNPU_ELTWISE_ADD, VNPU_ELTWISE_MUL };

/*
 * Every pair of codes, three ways: both operands dense (the vector rows),
 * A a column and B a row (rows of one A code: tables), and the reverse.
 */
static void test_qlinear_all_pairs(void **state)
{
	static const uint32_t dn[1] = { 65536 }, dcol[2] = { 256, 1 }, drow[2] = { 1, 256 },
		dy[2] = { 256, 256 };
	static uint8_t pa[65536], pb[65536], codes[256];
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t s;
	int d, k, way;
	char what[128];

	for (k = 0; k < 65536; k++) {
		pa[k] = (uint8_t)(k >> 8);
		pb[k] = (uint8_t)k;
	}
	for (k = 0; k < 256; k++)
		codes[k] = (uint8_t)k;
	for (s = 0; s < sizeof(qsets) / sizeof(qsets[0]); s++)
		for (d = 0; d < 2; d++)
			for (k = 0; k < 2; k++)
				for (way = 0; way < 3; way++) {
					flat_reset(&e->f);
					qlinear_cmd(&c, qkinds[k], q8_dts[d], &qsets[s]);
					if (way == 0) {
						shape(&c.t[0], 1, dn);
						shape(&c.t[1], 1, dn);
						shape(&c.t[3], 1, dn);
					} else {
						shape(&c.t[way == 1 ? 0 : 1], 2, dcol);
						shape(&c.t[way == 1 ? 1 : 0], 2, drow);
						shape(&c.t[3], 2, dy);
					}
					put(e, &c.t[0], way ? codes : pa);
					put(e, &c.t[1], way ? codes : pb);
					snprintf(what, sizeof(what), "%s %s %s, %s",
						 d ? "int8" : "uint8", k ? "mul" : "add",
						 way == 0 ? "dense" : way == 1 ? "A fixed per row" :
						 "B fixed per row", qsets[s].why);
					same_as_ref(e, &c, what);
				}
}

/*
 * Rows of every length up to a few vectors and around the length from
 * which a table is built: dense, with either operand a single element,
 * and a single element in all three (n = 1 below).
 */
static void test_qlinear_lengths(void **state)
{
	static const uint32_t long_rows[] = { 254, 255, 256, 257, 263, 1023, 1024, 1025, 3001 };
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	uint32_t n, one = 1;
	int i, pat;
	char what[128];

	for (i = 0; i < 70 + (int)(sizeof(long_rows) / sizeof(long_rows[0])); i++)
		for (pat = 0; pat < 4; pat++) {
			const struct qparams *q = &qsets[rnd(&e->r, sizeof(qsets) / sizeof(qsets[0]))];
			uint8_t dt = q8_dts[rnd(&e->r, 2)];
			unsigned int kind = qkinds[rnd(&e->r, 2)];

			n = i < 70 ? (uint32_t)i + 1 : long_rows[i - 70];
			if (pat == 3 && n > 1)
				continue;
			flat_reset(&e->f);
			qlinear_cmd(&c, kind, dt, q);
			shape(&c.t[0], 1, pat == 1 ? &one : &n);
			shape(&c.t[1], 1, pat == 2 ? &one : &n);
			shape(&c.t[3], 1, &n);
			put(e, &c.t[0], NULL);
			put(e, &c.t[1], NULL);
			snprintf(what, sizeof(what), "%s %s, %u elements, %s, %s",
				 dt == VNPU_DT_INT8 ? "int8" : "uint8",
				 kind == VNPU_ELTWISE_MUL ? "mul" : "add", n,
				 pat == 0 ? "dense" : pat == 1 ? "A one element" :
				 pat == 2 ? "B one element" : "all one element", q->why);
			same_as_ref(e, &c, what);
		}
}

/*
 * A per-channel operand broadcast over NCHW (a fixed code per row of
 * H * W, rows short and long, the codes repeating from channel to channel
 * so that a row may find the table of an earlier one) and over NHWC (the
 * vector rows, an operand that restarts every row), on either side.
 */
static void test_qlinear_channels(void **state)
{
	static const uint32_t hw[][2] = { { 1, 3 }, { 3, 17 }, { 16, 16 }, { 15, 20 } };
	static const uint32_t chans[] = { 1, 3, 8, 13, 40 };
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t h, ch;
	int side, nhwc;
	char what[160];

	for (h = 0; h < sizeof(hw) / sizeof(hw[0]); h++)
		for (ch = 0; ch < sizeof(chans) / sizeof(chans[0]); ch++)
			for (side = 0; side < 2; side++)
				for (nhwc = 0; nhwc < 2; nhwc++) {
					const struct qparams *q =
						&qsets[rnd(&e->r, sizeof(qsets) / sizeof(qsets[0]))];
					uint32_t C = chans[ch], H = hw[h][0], W = hw[h][1];
					uint32_t dx[4] = { 1, C, H, W }, dc[4] = { 1, C, 1, 1 };
					uint8_t dt = q8_dts[rnd(&e->r, 2)], few[3], *pc;
					unsigned int kind = qkinds[rnd(&e->r, 2)];
					uint32_t i;

					if (nhwc) {
						dx[1] = H;
						dx[2] = W;
						dx[3] = C;
						dc[1] = 1;
						dc[3] = C;
					}
					flat_reset(&e->f);
					qlinear_cmd(&c, kind, dt, q);
					shape(&c.t[side], 4, dx);
					shape(&c.t[!side], 4, dc);
					shape(&c.t[3], 4, dx);
					put(e, &c.t[side], NULL);
					put(e, &c.t[!side], NULL);
					/* three codes among the channels */
					pc = flat_host(&e->f, c.t[!side].va);
					for (i = 0; i < 3; i++)
						few[i] = (uint8_t)rnd(&e->r, 256);
					for (i = 0; i < C; i++)
						pc[i] = few[rnd(&e->r, 3)];
					snprintf(what, sizeof(what),
						 "%s %s, %s %ux%ux%u, channels on %s, %s",
						 dt == VNPU_DT_INT8 ? "int8" : "uint8",
						 kind == VNPU_ELTWISE_MUL ? "mul" : "add",
						 nhwc ? "NHWC" : "NCHW", C, H, W, side ? "A" : "B",
						 q->why);
					same_as_ref(e, &c, what);
				}
}

/*
 * Operands and Y with gaps between their rows, and Y strided along its
 * row (the rows of any strides), next to dense operands.
 */
static void test_qlinear_strided(void **state)
{
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	int i;
	char what[128];

	for (i = 0; i < 200; i++) {
		const struct qparams *q = &qsets[rnd(&e->r, sizeof(qsets) / sizeof(qsets[0]))];
		uint32_t d[3] = { 1 + rnd(&e->r, 4), 1 + rnd(&e->r, 5), 1 + rnd(&e->r, 300) };
		uint32_t one[3] = { d[0], d[1], 1 };
		uint8_t dt = q8_dts[rnd(&e->r, 2)];
		unsigned int kind = qkinds[rnd(&e->r, 2)];
		int k, fixed = (int)rnd(&e->r, 3);

		flat_reset(&e->f);
		qlinear_cmd(&c, kind, dt, q);
		for (k = 0; k < 4; k++) {
			if (k == 2)
				continue;
			shape(&c.t[k], 3, k == fixed ? one : d);
			if (rnd(&e->r, 2))
				gapped(&c.t[k], 1 + rnd(&e->r, 5));
		}
		if (rnd(&e->r, 2)) {
			/* Y's row itself strided */
			c.t[3].flags = VNPU_TENSOR_STRIDED;
			c.t[3].strides[2] = 2;
			c.t[3].strides[1] = 2ull * d[2] + 1;
			c.t[3].strides[0] = c.t[3].strides[1] * d[1];
		}
		put(e, &c.t[0], NULL);
		put(e, &c.t[1], NULL);
		snprintf(what, sizeof(what), "%s %s strided, %ux%ux%u, %s",
			 dt == VNPU_DT_INT8 ? "int8" : "uint8",
			 kind == VNPU_ELTWISE_MUL ? "mul" : "add", d[0], d[1], d[2], q->why);
		same_as_ref(e, &c, what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qlinear_all_pairs),
		cmocka_unit_test(test_qlinear_lengths),
		cmocka_unit_test(test_qlinear_channels),
		cmocka_unit_test(test_qlinear_strided),
	};

	return cmocka_run_group_tests_name("ops-elt-rows", tests, setup, teardown);
}
