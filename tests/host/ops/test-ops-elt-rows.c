// SPDX-License-Identifier: MIT
/*
 * The engine's per-element rows that do not compute element by element
 * as the reference does, held against the reference byte for byte on the
 * cases that break such rows.  ELTWISE with VNPU_ROUND_ORT_QLINEAR
 * through AVX2 (tails shorter than a vector, broadcast operands, rounding
 * ties, saturation at both ends and beyond int32) and through tables of
 * one operand's 256 codes (rows just below and above the length that
 * builds one, a fixed code that changes from row to row, either operand
 * fixed).  Rows of the other per-element ops along which one 8-bit
 * operand alone moves, through a table of that operand's 256 bytes:
 * every function and kind, into every dtype, with both roundings, the
 * other operands' values changing from row to row (+0 and -0, NaN and
 * infinities among them) or not.  Every command must also have run on
 * the engine's own path, not on its fallback to the reference.
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

/* Whether float element @p of dtype @dt is a NaN. */
static bool is_nan_at(const uint8_t *p, uint8_t dt)
{
	uint32_t u = 0;

	switch (dt) {
	case VNPU_DT_FP32:
		memcpy(&u, p, 4);
		return (u & 0x7fffffffu) > 0x7f800000u;
	case VNPU_DT_FP16:
		memcpy(&u, p, 2);
		return (u & 0x7fffu) > 0x7c00u;
	case VNPU_DT_BF16:
		memcpy(&u, p, 2);
		return (u & 0x7fffu) > 0x7f80u;
	default:
		return false;
	}
}

/*
 * Run @c (operands placed, t[3] described but not placed) on the engine
 * and on the reference, each into its own Y, and compare every byte Y
 * spans, the bytes between strided elements included; which NaN a float
 * NaN is may differ (Documentation/ops.rst).
 */
static void same_as_ref(struct env *e, struct vnpu_cmd_compute *c, const char *what)
{
	struct vnpu_cmd_compute r = *c;
	uint32_t es = vnpu_dtype_size(c->t[3].dtype);
	uint64_t n = span(&c->t[3]) * es, i;
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
	for (i = 0; i < n; i++) {
		uint64_t el = i - i % es;

		if (pe[i] == pr[i] ||
		    (is_nan_at(pe + el, c->t[3].dtype) && is_nan_at(pr + el, c->t[3].dtype)))
			continue;
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
 * row (the rows of any strides, and the tables when an operand is fixed),
 * next to dense operands; rows longer than a chunk too, whose last chunk
 * reads the table its first one built.
 */
static void test_qlinear_strided(void **state)
{
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	int i;
	char what[128];

	for (i = 0; i < 200; i++) {
		const struct qparams *q = &qsets[rnd(&e->r, sizeof(qsets) / sizeof(qsets[0]))];
		uint32_t d[3] = { 1 + rnd(&e->r, 4), 1 + rnd(&e->r, 5),
				  rnd(&e->r, 8) ? 1 + rnd(&e->r, 300) : 1000 + rnd(&e->r, 200) };
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

static const uint8_t all_dts[5] = { VNPU_DT_UINT8, VNPU_DT_INT8, VNPU_DT_FP32, VNPU_DT_FP16,
				    VNPU_DT_BF16 };

static bool is_q8(uint8_t dt)
{
	return dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8;
}

/* Per-tensor quantization for an 8-bit @d: ordinary, tie-making or huge scales. */
static void any_quant(struct env *e, struct vnpu_tensor_desc *d)
{
	static const float scales[] = { 0.02f, 0.05f, 0.5f, 1.0f, 1e-6f, 3e37f };
	int32_t lo = d->dtype == VNPU_DT_INT8 ? -128 : 0;

	if (is_q8(d->dtype))
		tquant(d, scales[rnd(&e->r, sizeof(scales) / sizeof(scales[0]))],
		       lo + (int32_t)rnd(&e->r, 256));
}

/* A float operand's values: ordinary, and now and then a special one. */
static float any_float(struct env *e)
{
	switch (rnd(&e->r, 16)) {
	case 0:
		return NAN;
	case 1:
		return INFINITY;
	case 2:
		return -INFINITY;
	case 3:
		return 0.0f;
	case 4:
		return -0.0f;
	case 5:
		return 1e30f;
	default:
		return (float)((int)rnd(&e->r, 2001) - 1000) / 128.0f;
	}
}

/* Place a float operand @d (fp32, fp16 or bf16) holding @vals[i % nv]. */
static void put_floats(struct env *e, struct vnpu_tensor_desc *d, const float *vals,
		       uint32_t nv)
{
	uint64_t n = span(d), i;
	uint32_t es = vnpu_dtype_size(d->dtype);
	uint8_t *p;

	d->va = flat_alloc(&e->f, n * es);
	assert_true(d->va != 0);
	p = flat_host(&e->f, d->va);
	for (i = 0; i < n; i++) {
		float v = vals[i % nv];
		uint16_t h;

		if (d->dtype == VNPU_DT_FP32) {
			memcpy(p + i * 4, &v, 4);
			continue;
		}
		h = d->dtype == VNPU_DT_FP16 ? vnpu_f32_to_fp16(v) : vnpu_f32_to_bf16(v);
		memcpy(p + i * 2, &h, 2);
	}
}

static const char *dt_name(uint8_t dt)
{
	switch (dt) {
	case VNPU_DT_UINT8: return "uint8";
	case VNPU_DT_INT8: return "int8";
	case VNPU_DT_FP32: return "fp32";
	case VNPU_DT_FP16: return "fp16";
	default: return "bf16";
	}
}

static const uint32_t byte_rows[] = { 1, 255, 256, 257, 1024, 3001 };

/*
 * ACTIVATION of an 8-bit X, every function, into every dtype with both
 * roundings, rows around the table's length; every byte value occurs in
 * the long rows.
 */
static void test_bytes_activation(void **state)
{
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t r;
	unsigned int act;
	int i;
	char what[160];

	for (act = 0; act < VNPU_ACT_COUNT; act++)
		for (r = 0; r < sizeof(byte_rows) / sizeof(byte_rows[0]); r++)
			for (i = 0; i < 6; i++) {
				uint32_t n = byte_rows[r];

				flat_reset(&e->f);
				cmd_init(&c, VNPU_OP_ACTIVATION);
				c.act = (uint8_t)act;
				c.round = (uint8_t)rnd(&e->r, 2);
				if (act == VNPU_ACT_LEAKY_RELU)
					c.act_alpha = f2u(0.1f);
				if (act == VNPU_ACT_HARD_SIGMOID) {
					c.act_alpha = f2u(0.2f);
					c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(0.5f);
				}
				if (act == VNPU_ACT_CLIP) {
					c.attr.activation.clip_min = f2u(-1.0f);
					c.attr.activation.clip_max = f2u(2.5f);
				}
				c.t[0] = tdesc(q8_dts[i & 1], 1, &n);
				any_quant(e, &c.t[0]);
				c.t[3] = tdesc(all_dts[rnd(&e->r, 5)], 1, &n);
				any_quant(e, &c.t[3]);
				if (i >= 4) {
					/* rows of X and Y with a step */
					c.t[0].flags = c.t[3].flags = VNPU_TENSOR_STRIDED;
					c.t[0].strides[0] = 2;
					c.t[3].strides[0] = i == 4 ? 1 : 3;
				}
				put(e, &c.t[0], NULL);
				snprintf(what, sizeof(what),
					 "activation %u of %s into %s, %u elements%s, rounding %u",
					 act, dt_name(c.t[0].dtype), dt_name(c.t[3].dtype), n,
					 i >= 4 ? ", strided" : "", c.round);
				same_as_ref(e, &c, what);
			}
}

/*
 * ACTIVATION with a per-channel scale and shift (BatchNormalization) over
 * an 8-bit NCHW X: a row per channel, its scale and shift the row's fixed
 * values, repeating from channel to channel, +0 next to -0 and NaN next
 * to NaN among them (a table reused only for the same bits).
 */
static void test_bytes_affine(void **state)
{
	static const uint32_t hws[][2] = { { 1, 7 }, { 16, 16 }, { 20, 15 }, { 40, 40 } };
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t h;
	int i;
	char what[160];

	for (h = 0; h < sizeof(hws) / sizeof(hws[0]); h++)
		for (i = 0; i < 40; i++) {
			uint32_t C = 1 + rnd(&e->r, 12), H = hws[h][0], W = hws[h][1];
			uint32_t dx[4] = { 1, C, H, W }, dp[4] = { 2, C, 1, 1 };
			float vals[4], pv[24];
			uint32_t k;

			flat_reset(&e->f);
			cmd_init(&c, VNPU_OP_ACTIVATION);
			c.act = (uint8_t)rnd(&e->r, 3) ? VNPU_ACT_NONE : VNPU_ACT_RELU;
			c.round = (uint8_t)rnd(&e->r, 2);
			c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
			any_quant(e, &c.t[0]);
			c.t[1] = tdesc(rnd(&e->r, 4) ? VNPU_DT_FP32 : VNPU_DT_FP16, 4, dp);
			c.t[3] = tdesc(all_dts[rnd(&e->r, 5)], 4, dx);
			any_quant(e, &c.t[3]);
			put(e, &c.t[0], NULL);
			if (i & 1) {
				vals[0] = 0.0f;
				vals[1] = -0.0f;
				vals[2] = NAN;
				vals[3] = 1.5f;
			} else {
				for (k = 0; k < 4; k++)
					vals[k] = any_float(e);
			}
			for (k = 0; k < 2 * C; k++)
				pv[k] = vals[rnd(&e->r, 4)];
			put_floats(e, &c.t[1], pv, 2 * C);
			snprintf(what, sizeof(what), "affine %s %ux%ux%u into %s, rounding %u",
				 dt_name(c.t[0].dtype), C, H, W, dt_name(c.t[3].dtype), c.round);
			same_as_ref(e, &c, what);
		}
}

/*
 * ELTWISE of every kind (fused activations too) with an 8-bit operand
 * that moves and the other a scalar or one value per NCHW channel, float
 * or 8-bit, on either side, into every dtype.
 */
static void test_bytes_binary(void **state)
{
	static const unsigned int kinds[] = { VNPU_ELTWISE_ADD, VNPU_ELTWISE_SUB, VNPU_ELTWISE_MUL,
					      VNPU_ELTWISE_DIV, VNPU_ELTWISE_MAX, VNPU_ELTWISE_MIN,
					      VNPU_ELTWISE_POW };
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t kd;
	int i;
	char what[160];

	for (kd = 0; kd < sizeof(kinds) / sizeof(kinds[0]); kd++)
		for (i = 0; i < 60; i++) {
			uint32_t C = 1 + rnd(&e->r, 6), HW = i & 1 ? 300 : 1 + rnd(&e->r, 400);
			uint32_t dx[3] = { C, 1, HW }, dc[3] = { C, 1, 1 };
			int side = (int)rnd(&e->r, 2);
			bool scalar = rnd(&e->r, 3) == 0;
			uint8_t odt = rnd(&e->r, 2) ? all_dts[rnd(&e->r, 5)] : q8_dts[rnd(&e->r, 2)];
			float vals[3];
			uint32_t k;

			flat_reset(&e->f);
			cmd_init(&c, VNPU_OP_ELTWISE);
			c.attr.eltwise.kind = kinds[kd];
			c.round = (uint8_t)rnd(&e->r, 2);
			if (rnd(&e->r, 3) == 0)
				c.act = (uint8_t)(1 + rnd(&e->r, VNPU_ACT_GELU));
			c.t[side] = tdesc(q8_dts[rnd(&e->r, 2)], 3, dx);
			any_quant(e, &c.t[side]);
			c.t[!side] = tdesc(odt, scalar ? 1 : 3, scalar ? &dc[1] : dc);
			any_quant(e, &c.t[!side]);
			c.t[3] = tdesc(all_dts[rnd(&e->r, 5)], 3, dx);
			any_quant(e, &c.t[3]);
			put(e, &c.t[side], NULL);
			if (is_q8(odt)) {
				put(e, &c.t[!side], NULL);
			} else {
				for (k = 0; k < 3; k++)
					vals[k] = any_float(e);
				put_floats(e, &c.t[!side], vals, 3);
			}
			snprintf(what, sizeof(what),
				 "eltwise %u act %u, %s %ux%u on %s, other %s%s, into %s, rounding %u",
				 kinds[kd], c.act, dt_name(c.t[side].dtype), C, HW, side ? "B" : "A",
				 dt_name(odt), scalar ? " scalar" : "", dt_name(c.t[3].dtype), c.round);
			same_as_ref(e, &c, what);
		}
}

/*
 * Short rows grouped: an operand of one value per channel over NHWC (its
 * row repeats from one row to the next), per batch or for all of them,
 * dense or strided along its row, in ELTWISE (float and QLinear) and in
 * a per-channel affine; channel counts around the largest row grouped.
 */
static void test_grouped_rows(void **state)
{
	static const uint32_t chans[] = { 1, 3, 16, 24, 96, 255, 511, 512, 513 };
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	size_t ch;
	int i;
	char what[160];

	for (ch = 0; ch < sizeof(chans) / sizeof(chans[0]); ch++)
		for (i = 0; i < 24; i++) {
			uint32_t C = chans[ch], N = 1 + rnd(&e->r, 3), HW = 1 + rnd(&e->r, 9);
			uint32_t dx[3] = { N, HW, C }, dc[3] = { rnd(&e->r, 2) ? N : 1, 1, C };
			uint32_t dp[4] = { 2, dc[0], 1, C };
			int kind = i % 3, side = (int)rnd(&e->r, 2);
			bool strided = rnd(&e->r, 3) == 0;
			float vals[5];
			uint32_t k;

			for (k = 0; k < 5; k++)
				vals[k] = any_float(e);
			flat_reset(&e->f);
			if (kind == 0) {	/* QLinear Add or Mul */
				uint8_t dt = q8_dts[rnd(&e->r, 2)];

				qlinear_cmd(&c, qkinds[rnd(&e->r, 2)], dt,
					    &qsets[rnd(&e->r, sizeof(qsets) / sizeof(qsets[0]))]);
				c.t[side].rank = c.t[!side].rank = c.t[3].rank = 3;
				memcpy(c.t[side].dims, dx, sizeof(dx));
				memcpy(c.t[!side].dims, dc, sizeof(dc));
				memcpy(c.t[3].dims, dx, sizeof(dx));
			} else if (kind == 1) {	/* float Mul or Add, 8-bit or float X */
				cmd_init(&c, VNPU_OP_ELTWISE);
				c.attr.eltwise.kind = rnd(&e->r, 2) ? VNPU_ELTWISE_MUL : VNPU_ELTWISE_ADD;
				c.round = (uint8_t)rnd(&e->r, 2);
				c.t[side] = tdesc(all_dts[rnd(&e->r, 5)], 3, dx);
				any_quant(e, &c.t[side]);
				c.t[!side] = tdesc(rnd(&e->r, 2) ? VNPU_DT_FP32 : VNPU_DT_UINT8, 3, dc);
				any_quant(e, &c.t[!side]);
				c.t[3] = tdesc(all_dts[rnd(&e->r, 5)], 3, dx);
				any_quant(e, &c.t[3]);
			} else {		/* a per-channel scale and shift */
				cmd_init(&c, VNPU_OP_ACTIVATION);
				c.round = (uint8_t)rnd(&e->r, 2);
				side = 0;
				c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 3, dx);
				any_quant(e, &c.t[0]);
				c.t[1] = tdesc(VNPU_DT_FP32, 4, dp);
				c.t[3] = tdesc(all_dts[rnd(&e->r, 5)], 3, dx);
				any_quant(e, &c.t[3]);
			}
			if (strided && kind != 2) {
				/* the channel operand with a step along its row */
				struct vnpu_tensor_desc *d = &c.t[!side];

				d->flags = VNPU_TENSOR_STRIDED;
				d->strides[2] = 2;
				d->strides[1] = 2ull * C;
				d->strides[0] = 2ull * C;
			}
			for (k = 0; k < 2; k++) {
				struct vnpu_tensor_desc *d = &c.t[k];

				if (!d->dtype)
					continue;
				if (is_q8(d->dtype))
					put(e, d, NULL);
				else
					put_floats(e, d, vals, 5);
			}
			snprintf(what, sizeof(what), "%s, %ux%ux%u, channels %s%s on %s",
				 kind == 0 ? "qlinear" : kind == 1 ? "eltwise" : "affine",
				 N, HW, C, dc[0] > 1 ? "per batch" : "for all",
				 strided && kind != 2 ? ", strided" : "", side ? "A" : "B");
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
		cmocka_unit_test(test_bytes_activation),
		cmocka_unit_test(test_bytes_affine),
		cmocka_unit_test(test_bytes_binary),
		cmocka_unit_test(test_grouped_rows),
	};

	return cmocka_run_group_tests_name("ops-elt-rows", tests, setup, teardown);
}
