// SPDX-License-Identifier: MIT
/*
 * Differential tests: the device engine, driven through vnpu_compute_exec()
 * over a flat device memory, against the reference implementation, over
 * thousands of random shapes, layouts, dtypes and quantization parameters.
 * Integer outputs must match bit for bit; float outputs within the
 * tolerances of Documentation/ops.rst, bit for bit from the kernels it
 * specifies as bit-identical.  Bytes outside the output must never change.
 *
 * The engine hands what its kernels do not take to the reference, and a
 * case that ends there compares the reference with itself.  So every case
 * records which kernel ran it (struct vnpu_compute_result's path), and the
 * last group fails for any kernel fewer than REACH_MIN cases reached.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_engine.h"

#define MEM_SIZE	(24u << 20)

/* Random cases each engine kernel must receive over the whole run. */
#define REACH_MIN	200

static const char *const path_names[VNPU_ENG_NPATHS] = {
	[VNPU_ENG_NONE] = "none",
	[VNPU_ENG_REF] = "reference (compared with itself)",
	[VNPU_ENG_COPY] = "copy",
	[VNPU_ENG_ELT] = "eltwise",
	[VNPU_ENG_POOL] = "pool",
	[VNPU_ENG_RESIZE] = "resize",
	[VNPU_ENG_CONVT] = "conv-transpose",
	[VNPU_ENG_REDUCE] = "reduce",
	[VNPU_ENG_LUT] = "lut",
	[VNPU_ENG_SOFTMAX] = "softmax",
	[VNPU_ENG_DW] = "depthwise",
	[VNPU_ENG_DW_GENERAL] = "depthwise-general",
	[VNPU_ENG_GEMM_F32] = "gemm-fp32",
	[VNPU_ENG_GEMM_I8] = "gemm-int8",
	[VNPU_ENG_CONV_F32] = "conv-direct-fp32",
	[VNPU_ENG_CONV_I8] = "conv-direct-int8",
	[VNPU_ENG_IM2COL_F32] = "conv-im2col-fp32",
	[VNPU_ENG_IM2COL_I8] = "conv-im2col-int8",
	[VNPU_ENG_CONVT_PHASES] = "conv-transpose-phases",
	[VNPU_ENG_SOFTMAX_AVX2] = "softmax-avx2",
	[VNPU_ENG_SOFTMAX_COLS] = "softmax-columns",
	[VNPU_ENG_TRANSPOSE] = "copy-transpose",
	[VNPU_ENG_LUT_AVX2] = "lut-avx2",
	[VNPU_ENG_CONV_I8_BYTES] = "conv-direct-int8-bytes",
};

/* Cases that each kernel ran, over every group so far. */
static unsigned int reached[VNPU_ENG_NPATHS];

/*
 * Kernels that Documentation/ops.rst specifies as bit-identical to the
 * reference (NaN payloads aside); the others sum floats in another order.
 */
static bool path_exact(enum vnpu_eng_path p)
{
	switch (p) {
	case VNPU_ENG_REF:
	case VNPU_ENG_COPY:
	case VNPU_ENG_ELT:
	case VNPU_ENG_POOL:
	case VNPU_ENG_RESIZE:
	case VNPU_ENG_CONVT:
	case VNPU_ENG_REDUCE:
	case VNPU_ENG_LUT:
	case VNPU_ENG_SOFTMAX:
	case VNPU_ENG_SOFTMAX_AVX2:
	case VNPU_ENG_SOFTMAX_COLS:
	case VNPU_ENG_TRANSPOSE:
	case VNPU_ENG_LUT_AVX2:
	case VNPU_ENG_DW_GENERAL:
		return true;
	default:
		return false;
	}
}

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

static float rndf(struct rng *r, float lo, float hi)
{
	return lo + (hi - lo) * (float)rnd(r, 1u << 24) / (float)(1u << 24);
}

static bool is_float(uint8_t dt)
{
	return dt == VNPU_DT_FP32 || dt == VNPU_DT_FP16 || dt == VNPU_DT_BF16;
}

static int32_t zp_pick(struct rng *r, uint8_t dt)
{
	int32_t lo = dt == VNPU_DT_INT8 ? -128 : 0, hi = lo + 255;

	switch (rnd(r, 5)) {
	case 0:
		return lo;	/* zero points at their limits */
	case 1:
		return hi;
	case 2:
		return dt == VNPU_DT_INT8 ? 0 : 128;
	default:
		return lo + (int32_t)rnd(r, 256);
	}
}

struct env {
	struct flat f;
	struct rng r;
	float ftol_abs;		/* absolute float tolerance of this case */
	bool one_term;		/* float sums of one product: exact on every kernel */
	unsigned int cases;
	unsigned int mark[VNPU_ENG_NPATHS];	/* reached[] when a test began */
};

static void reach_begin(struct env *e)
{
	memcpy(e->mark, reached, sizeof(reached));
}

/* A TAP diagnostic: which kernels the cases of test @name reached. */
static void reach_note(const struct env *e, const char *name)
{
	int p;

	printf("# %s (int8 kernel %s):", name,
	       vnpu_i8_kernel_id(vnpu_i8_kernel_resolve(flat_engine.i8_kernel)));
	for (p = 0; p < VNPU_ENG_NPATHS; p++)
		if (reached[p] != e->mark[p])
			printf(" %s %u;", path_names[p], reached[p] - e->mark[p]);
	printf("\n");
	fflush(stdout);
}

/* Give @d a device VA (optionally strided) and random contents. */
static void place(struct env *e, struct vnpu_tensor_desc *d, bool strided,
		  bool fill)
{
	struct vnpu_op_info info;
	struct vnpu_tv tv;
	uint32_t es = vnpu_dtype_size(d->dtype);
	uint64_t span, elems, i;
	int64_t st = 1;
	int k;

	if (strided && rnd(&e->r, 3) == 0) {
		d->flags = VNPU_TENSOR_STRIDED;
		for (k = d->rank - 1; k >= 0; k--) {
			/* Occasionally a broadcast (zero) stride on a size-1 dim
			 * or a gap between elements. */
			d->strides[k] = (uint64_t)st;
			st = st * d->dims[k] + rnd(&e->r, 3);
		}
		if (rnd(&e->r, 4) == 0)
			for (k = 0; k < d->rank; k++)
				if (d->dims[k] == 1)
					d->strides[k] = 0;
	}
	span = 1;
	for (k = 0; k < d->rank; k++)
		span += (uint64_t)(d->dims[k] - 1) *
			(d->flags ? d->strides[k] : 0);
	elems = 1;
	for (k = 0; k < d->rank; k++)
		elems *= d->dims[k];
	if (!d->flags)
		span = elems;
	(void)info;
	d->va = flat_alloc(&e->f, span * es);
	assert_true(d->va != 0);
	if (d->quant == VNPU_QUANT_CHANNEL) {
		uint32_t n = d->dims[d->quant_axis], c;
		uint8_t *q;

		d->quant_va = flat_alloc(&e->f, 8ull * n);
		q = flat_host(&e->f, d->quant_va);
		for (c = 0; c < n; c++) {
			float s = rndf(&e->r, 0.002f, 0.05f);
			int32_t z = rnd(&e->r, 2) ? 0 : zp_pick(&e->r, d->dtype);

			memcpy(q + 4 * c, &s, 4);
			memcpy(q + 4 * (n + c), &z, 4);
		}
	}
	if (!fill) {
		memset(flat_host(&e->f, d->va), 0xa5, span * es);
		return;
	}
	/* Float storage conversions are the reference's; only data comes from here. */
	vnpu_tv_init(&tv, d, flat_host(&e->f, d->va), NULL);
	for (i = 0; i < span; i++) {
		uint8_t *p = (uint8_t *)flat_host(&e->f, d->va) + i * es;
		int32_t iv;

		switch (d->dtype) {
		case VNPU_DT_FP32:
		case VNPU_DT_FP16:
		case VNPU_DT_BF16:
			vnpu_st(&tv, p, rndf(&e->r, -1.0f, 1.0f), 0, 0);
			break;
		case VNPU_DT_INT32:
			iv = (int32_t)rnd(&e->r, 40001) - 20000;
			if (rnd(&e->r, 50) == 0)
				iv = rnd(&e->r, 2) ? INT32_MAX - 5 : INT32_MIN + 5;
			memcpy(p, &iv, 4);
			break;
		default:
			*p = (uint8_t)rnd(&e->r, 256);
		}
	}
}

static float ulp_rel(uint8_t dt)
{
	return dt == VNPU_DT_FP16 ? 2e-3f : dt == VNPU_DT_BF16 ? 1.6e-2f : 2e-6f;
}

/*
 * Run @c on a copy of the memory through the engine and on another through
 * the reference, then compare.
 */
static void run_case(struct env *e, struct vnpu_cmd_compute *c)
{
	struct flat f2 = e->f;
	struct vnpu_tensor_desc *y = &c->t[3];
	uint32_t es = vnpu_dtype_size(y->dtype);
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	uint64_t cycles = 0, off, i, used;
	enum vnpu_eng_path path;
	uint8_t *a, *b;
	bool exact;
	int ret;

	ret = vnpu_op_check(c, sizeof(*c), &cc, &info);
	if (ret) {
		fprintf(stderr, "case %u: op 0x%x rejected at %u\n", e->cases,
			c->hdr.opcode, info.err_off);
		fail();
	}
	/* Only the allocated prefix (plus a guard) can legitimately differ. */
	used = e->f.next + 4096;
	f2.size = used;
	f2.mem = malloc(used);
	assert_non_null(f2.mem);
	memcpy(f2.mem, e->f.mem, used);
	e->f.allow_map = rnd(&e->r, 2);
	assert_int_equal(flat_exec(&e->f, c, sizeof(*c), &cycles), 0);
	assert_int_equal(e->f.maps, 0);		/* every map unmapped */
	assert_true(cycles > 0);
	path = flat_engine.res.path;
	assert_true(path > VNPU_ENG_NONE && path < VNPU_ENG_NPATHS);
	reached[path]++;
	/* One product has no summation order: only the epilogue is left. */
	exact = path_exact(path) || e->one_term;
	assert_int_equal(flat_ref(&f2, c), 0);

	a = e->f.mem;
	b = f2.mem;
	off = y->va - FLAT_BASE;
	/* Nothing outside the output's span may change. */
	assert_memory_equal(a, b, off);
	assert_memory_equal(a + off + info.span[3], b + off + info.span[3],
			    used - off - info.span[3]);
	for (i = 0; i < info.span[3]; i += es) {
		struct vnpu_tv tv;
		float va, vb, tol;

		if (!memcmp(a + off + i, b + off + i, es))
			continue;
		if (!is_float(y->dtype) && (!e->ftol_abs || exact)) {
			fprintf(stderr, "case %u op 0x%x (%s): byte %llu differs (%d vs %d)\n",
				e->cases, c->hdr.opcode, path_names[path],
				(unsigned long long)i, a[off + i], b[off + i]);
			fail();
		}
		if (!is_float(y->dtype)) {
			/* Float inputs into a quantized output: one step apart. */
			int d = y->dtype == VNPU_DT_INT8 ?
				(int8_t)a[off + i] - (int8_t)b[off + i] :
				a[off + i] - b[off + i];

			if (d < -1 || d > 1) {
				fprintf(stderr, "case %u: q %d vs %d\n", e->cases,
					a[off + i], b[off + i]);
				fail();
			}
			continue;
		}
		vnpu_tv_init(&tv, y, NULL, NULL);
		va = vnpu_ld(&tv, a + off + i, 0);
		vb = vnpu_ld(&tv, b + off + i, 0);
		/* Which NaN a result is stays unspecified (ops.rst). */
		if (isnan(va) && isnan(vb))
			continue;
		if (exact) {
			fprintf(stderr, "case %u op 0x%x (%s): %a vs %a, not bit for bit\n",
				e->cases, c->hdr.opcode, path_names[path], va, vb);
			fail();
		}
		tol = e->ftol_abs + fabsf(vb) * ulp_rel(y->dtype);
		if (!(fabsf(va - vb) <= tol)) {
			fprintf(stderr, "case %u op 0x%x (%s): %g vs %g (tol %g)\n",
				e->cases, c->hdr.opcode, path_names[path], va, vb, tol);
			fail();
		}
	}
	free(f2.mem);
	e->cases++;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	flat_init(&e->f, MEM_SIZE);
	e->r.s = 0x9e3779b97f4a7c15ull;
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

static const uint8_t float_dts[] = { VNPU_DT_FP32, VNPU_DT_FP32, VNPU_DT_FP16, VNPU_DT_BF16 };
static const uint8_t q8_dts[] = { VNPU_DT_INT8, VNPU_DT_UINT8 };

static void pick_act(struct env *e, struct vnpu_cmd_compute *c, bool int_out)
{
	/*
	 * CLIP and the unary functions are not fused activations:
	 * test_unary covers them.
	 */
	uint32_t a = rnd(&e->r, VNPU_ACT_CLIP + 2);

	c->act = (uint8_t)(a < VNPU_ACT_CLIP ? a : a + 1);
	if (int_out)
		c->act = VNPU_ACT_NONE;
	if (c->act == VNPU_ACT_LEAKY_RELU)
		c->act_alpha = f2u(rndf(&e->r, 0.0f, 0.3f));
	if (c->act == VNPU_ACT_HARD_SIGMOID) {
		c->act_alpha = f2u(rndf(&e->r, 0.1f, 0.3f));
		c->attr.raw[VNPU_ACT_BETA_WORD] = f2u(rndf(&e->r, 0.3f, 0.7f));
	}
	c->round = (uint8_t)rnd(&e->r, 2);
}

/* Quant params for a quantized output: a scale that sometimes saturates. */
static void quant_out(struct env *e, struct vnpu_tensor_desc *y, float in_scale,
		      uint32_t k, bool per_channel, int axis)
{
	float s = in_scale * sqrtf((float)k) * 40.0f * rndf(&e->r, 0.1f, 3.0f);

	if (per_channel) {
		y->quant = VNPU_QUANT_CHANNEL;
		y->quant_axis = (uint8_t)axis;
	} else {
		tquant(y, s, zp_pick(&e->r, y->dtype));
	}
}

/*
 * The bias of a float GEMM/CONV2D: [n], or a per-channel scale and shift
 * [2, n] (scales in [-1, 1] keep the tolerances of the sum).
 */
static void float_bias(struct env *e, struct vnpu_tensor_desc *t, uint32_t n)
{
	uint32_t d[2] = { 2, n };

	if (rnd(&e->r, 2))
		*t = tdesc(float_dts[rnd(&e->r, 4)], 1, &n);
	else
		*t = tdesc(float_dts[rnd(&e->r, 4)], 2, d);
	place(e, t, true, true);
}

static void one_gemm(struct env *e, bool big)
{
	struct vnpu_cmd_compute c;
	uint32_t m = 1 + rnd(&e->r, big ? 120 : 20), n = 1 + rnd(&e->r, big ? 70 : 40);
	uint32_t k = 1 + rnd(&e->r, big ? 700 : 40);
	uint32_t bat[2] = { 1 + rnd(&e->r, 3), 1 + rnd(&e->r, 2) };
	uint32_t da[VNPU_MAX_RANK], db[VNPU_MAX_RANK], dy[VNPU_MAX_RANK];
	int nb = big ? 0 : (int)rnd(&e->r, 3), ra = 2 + nb, rb = 2 + nb, i;
	bool quant = rnd(&e->r, 2), ta = rnd(&e->r, 2), tb = rnd(&e->r, 2);
	float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

	cmd_init(&c, VNPU_OP_GEMM);
	if (nb && rnd(&e->r, 2))
		rb = 2;		/* weights shared across the batch */
	for (i = 0; i < nb; i++) {
		da[i] = rnd(&e->r, 4) ? bat[i] : 1;	/* broadcast batch dims */
		dy[i] = bat[i];
	}
	for (i = 0; i < rb - 2; i++)
		db[i] = rnd(&e->r, 4) ? bat[i] : 1;
	for (i = 0; i < nb; i++)
		if (da[i] == 1 && (rb == 2 || db[i] == 1))
			dy[i] = 1;
	da[ra - 2] = ta ? k : m;
	da[ra - 1] = ta ? m : k;
	db[rb - 2] = tb ? n : k;
	db[rb - 1] = tb ? k : n;
	dy[nb] = m;
	dy[nb + 1] = n;
	c.attr.gemm.flags = (ta ? VNPU_GEMM_TRANS_A : 0) | (tb ? VNPU_GEMM_TRANS_B : 0);
	flat_reset(&e->f);
	if (quant) {
		c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], ra, da);
		c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], rb, db);
		tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
		if (rnd(&e->r, 2)) {
			c.t[1].quant = VNPU_QUANT_CHANNEL;
			c.t[1].quant_axis = (uint8_t)(rb - (tb ? 2 : 1));
			sb = 0.025f;
		} else {
			tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
		}
		switch (rnd(&e->r, 6)) {
		case 0:
			c.t[3] = tdesc(VNPU_DT_INT32, ra > rb ? ra : rb, dy);
			break;
		case 1:
			c.t[3] = tdesc(VNPU_DT_FP32, ra > rb ? ra : rb, dy);
			break;
		default:
			c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], ra > rb ? ra : rb, dy);
			quant_out(e, &c.t[3], sa * sb, k, rnd(&e->r, 4) == 0,
				  c.t[3].rank - 1);
		}
		pick_act(e, &c, c.t[3].dtype == VNPU_DT_INT32);
		if (rnd(&e->r, 2)) {
			c.t[2] = tdesc(VNPU_DT_INT32, 1, &n);
			place(e, &c.t[2], true, true);
		}
		e->ftol_abs = c.t[3].dtype == VNPU_DT_FP32 ? 1e-3f : 0.0f;
	} else {
		c.t[0] = tdesc(float_dts[rnd(&e->r, 4)], ra, da);
		c.t[1] = tdesc(float_dts[rnd(&e->r, 4)], rb, db);
		c.t[3] = tdesc(float_dts[rnd(&e->r, 4)], ra > rb ? ra : rb, dy);
		if (rnd(&e->r, 6) == 0) {
			c.t[3].dtype = q8_dts[rnd(&e->r, 2)];
			quant_out(e, &c.t[3], 1.0f / 40.0f / sqrtf((float)k), k, false, 0);
			e->ftol_abs = 1.0f;
		} else {
			e->ftol_abs = 2e-5f * (float)(k + 1);
		}
		pick_act(e, &c, false);
		if (rnd(&e->r, 2))
			float_bias(e, &c.t[2], n);
	}
	place(e, &c.t[0], true, true);
	place(e, &c.t[1], true, true);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
}

/*
 * Batched A times unbatched B ([.., M, K] x [K, N] or [1, 1, K, N]): the
 * engine runs it as one GEMM of batch x M rows when A's and Y's batches
 * continue their rows in memory, batch by batch otherwise (gaps, a
 * transposed A); both within the tolerance.
 */
static void one_gemm_fold(struct env *e)
{
	struct vnpu_cmd_compute c;
	uint32_t m = 1 + rnd(&e->r, rnd(&e->r, 4) ? 30 : 1), n = 1 + rnd(&e->r, 50);
	uint32_t k = 1 + rnd(&e->r, 60);
	uint32_t da[4], db[4], dy[4];
	int nb = 1 + (int)rnd(&e->r, 2), r = nb + 2, rb = rnd(&e->r, 2) ? 2 : r, i;
	bool ta = rnd(&e->r, 6) == 0, tb = rnd(&e->r, 2);

	cmd_init(&c, VNPU_OP_GEMM);
	for (i = 0; i < nb; i++) {
		dy[i] = 1 + rnd(&e->r, 5);
		if (rb > 2)
			db[i] = 1;
		/* A broadcast batch (B has none): Y's is 1 too. */
		if (rnd(&e->r, 8) == 0)
			dy[i] = 1;
		da[i] = dy[i];
	}
	da[r - 2] = ta ? k : m;
	da[r - 1] = ta ? m : k;
	db[rb - 2] = tb ? n : k;
	db[rb - 1] = tb ? k : n;
	dy[r - 2] = m;
	dy[r - 1] = n;
	c.attr.gemm.flags = (ta ? VNPU_GEMM_TRANS_A : 0) | (tb ? VNPU_GEMM_TRANS_B : 0);
	flat_reset(&e->f);
	c.t[0] = tdesc(VNPU_DT_FP32, r, da);
	c.t[1] = tdesc(rnd(&e->r, 4) ? VNPU_DT_FP32 : VNPU_DT_FP16, rb, db);
	c.t[3] = tdesc(rnd(&e->r, 4) ? VNPU_DT_FP32 : VNPU_DT_BF16, r, dy);
	pick_act(e, &c, false);
	if (rnd(&e->r, 2))
		float_bias(e, &c.t[2], n);
	e->ftol_abs = 2e-5f * (float)(k + 1);
	place(e, &c.t[0], true, true);
	place(e, &c.t[1], true, true);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
}

static void test_gemm_fold(void **state)
{
	int i;

	for (i = 0; i < 600; i++)
		one_gemm_fold(*state);
}

static void test_gemm_small(void **state)
{
	int i;

	for (i = 0; i < 1500; i++)
		one_gemm(*state, false);
}

static void test_gemm_blocked(void **state)
{
	int i;

	for (i = 0; i < 40; i++)
		one_gemm(*state, true);
}

/* X of one_conv() transposed in memory. */
static void permuted_layout(struct env *e, struct vnpu_tensor_desc *d);

static void one_conv(struct env *e)
{
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t g, cig, cog, kh, kw, h, w, nb = 1 + rnd(&e->r, 2), oh, ow;
	uint32_t dx[4], dw[4], dy[4], co;
	bool quant = rnd(&e->r, 2);
	float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

	cmd_init(&c, VNPU_OP_CONV2D);
	switch (rnd(&e->r, 4)) {
	case 0:		/* depthwise, channel multiplier 1 or 2 */
		cig = 1;
		g = 1 + rnd(&e->r, 12);
		cog = 1 + rnd(&e->r, 2);
		break;
	case 1:
		g = 2 + rnd(&e->r, 2);
		cig = 1 + rnd(&e->r, 5);
		cog = 1 + rnd(&e->r, 10);
		break;
	default:
		g = 1;
		cig = 1 + rnd(&e->r, 20);
		cog = 1 + rnd(&e->r, 40);
	}
	kh = 1 + rnd(&e->r, 4);
	kw = 1 + rnd(&e->r, 4);
	h = 1 + rnd(&e->r, 10);
	w = 1 + rnd(&e->r, 10);
	at->groups = g;
	at->stride_h = 1 + rnd(&e->r, 3);
	at->stride_w = 1 + rnd(&e->r, 3);
	at->dilation_h = 1 + rnd(&e->r, 2);
	at->dilation_w = 1 + rnd(&e->r, 2);
	/* Padding up to larger than the kernel. */
	at->pad_top = rnd(&e->r, 6);
	at->pad_bottom = rnd(&e->r, 6);
	at->pad_left = rnd(&e->r, 6);
	at->pad_right = rnd(&e->r, 6);
	/* Pointwise convs (1x1, stride 1, unpadded) run as a plain GEMM on X. */
	if (rnd(&e->r, 8) == 0) {
		kh = kw = 1;
		at->stride_h = at->stride_w = 1;
		at->pad_top = at->pad_bottom = at->pad_left = at->pad_right = 0;
	}
	if ((uint64_t)(kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((uint64_t)(kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	co = g * cog;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = g * cig;
	dw[0] = co; dw[1] = kh; dw[2] = kw; dw[3] = cig;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = co;
	flat_reset(&e->f);
	if (quant) {
		c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
		c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dw);
		tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
		if (rnd(&e->r, 2)) {
			c.t[1].quant = VNPU_QUANT_CHANNEL;
			sb = 0.025f;
		} else {
			tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
		}
		if (rnd(&e->r, 8) == 0) {
			c.t[3] = tdesc(VNPU_DT_INT32, 4, dy);
		} else {
			c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dy);
			quant_out(e, &c.t[3], sa * sb, kh * kw * cig, rnd(&e->r, 4) == 0, 3);
		}
		pick_act(e, &c, c.t[3].dtype == VNPU_DT_INT32);
		if (rnd(&e->r, 2)) {
			c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
			place(e, &c.t[2], false, true);
		}
		e->ftol_abs = 0.0f;
	} else {
		c.t[0] = tdesc(float_dts[rnd(&e->r, 4)], 4, dx);
		c.t[1] = tdesc(float_dts[rnd(&e->r, 4)], 4, dw);
		c.t[3] = tdesc(float_dts[rnd(&e->r, 4)], 4, dy);
		pick_act(e, &c, false);
		if (rnd(&e->r, 2))
			float_bias(e, &c.t[2], co);
		e->ftol_abs = 2e-5f * (float)(kh * kw * cig + 1);
	}
	/* X transposed in memory too (NCHW among them): channels at a stride. */
	if (rnd(&e->r, 4) == 0)
		permuted_layout(e, &c.t[0]);
	place(e, &c.t[0], !c.t[0].flags, true);
	place(e, &c.t[1], true, true);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
}

/*
 * Depthwise convs the direct kernels take (channel multiplier 1, dense
 * channels): channel counts around the 16-lane blocks (odd ones, tails
 * of 1..15), rows wider than the four-column groups, stride 2 and
 * asymmetric strides, borders wider than the kernel, dilation, kernels
 * up to 5x5, and every epilogue the kernels fuse or leave to a pass.
 */
static void one_dwconv(struct env *e, bool wide)
{
	static const uint32_t chans[] = { 1, 3, 15, 16, 17, 24, 31, 33, 48, 64, 70 };
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t ch = chans[rnd(&e->r, sizeof(chans) / sizeof(chans[0]))];
	uint32_t kh = 1 + rnd(&e->r, 5), kw = 1 + rnd(&e->r, 5);
	uint32_t h = 1 + rnd(&e->r, 14), w = 1 + rnd(&e->r, 20), nb = 1 + rnd(&e->r, 2);
	uint32_t dx[4], dw[4], dy[4], oh, ow;
	bool quant = rnd(&e->r, 2);
	float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

	if (wide) {
		/* Rows cut into several units of work, 4-column groups across the cuts. */
		ch = 2047 + 954 * rnd(&e->r, 2);
		kh = kw = 5;
		h = 3;
		w = 40 + rnd(&e->r, 8);
	}
	cmd_init(&c, VNPU_OP_CONV2D);
	at->groups = ch;
	at->stride_h = 1 + rnd(&e->r, 2);
	at->stride_w = 1 + rnd(&e->r, 2);
	at->dilation_h = rnd(&e->r, 4) ? 1 : 2;
	at->dilation_w = rnd(&e->r, 4) ? 1 : 2;
	at->pad_top = rnd(&e->r, 4);
	at->pad_bottom = rnd(&e->r, 4);
	at->pad_left = rnd(&e->r, 7);
	at->pad_right = rnd(&e->r, 7);
	if ((uint64_t)(kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((uint64_t)(kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = ch;
	dw[0] = ch; dw[1] = kh; dw[2] = kw; dw[3] = 1;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = ch;
	flat_reset(&e->f);
	if (quant) {
		c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
		c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dw);
		tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
		if (rnd(&e->r, 2)) {
			c.t[1].quant = VNPU_QUANT_CHANNEL;
			sb = 0.025f;
		} else {
			tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
		}
		c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dy);
		quant_out(e, &c.t[3], sa * sb, kh * kw, rnd(&e->r, 4) == 0, 3);
		pick_act(e, &c, false);
		if (rnd(&e->r, 2)) {
			c.t[2] = tdesc(VNPU_DT_INT32, 1, &ch);
			place(e, &c.t[2], false, true);
		}
		e->ftol_abs = 0.0f;
	} else {
		c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
		c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
		pick_act(e, &c, false);
		if (rnd(&e->r, 2))
			float_bias(e, &c.t[2], ch);
		e->ftol_abs = 2e-5f * (float)(kh * kw + 1);
	}
	place(e, &c.t[0], true, true);
	place(e, &c.t[1], true, true);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
}

static void test_dwconv(void **state)
{
	int i;

	for (i = 0; i < 1500; i++)
		one_dwconv(*state, false);
	for (i = 0; i < 6; i++)
		one_dwconv(*state, true);
}

/*
 * Float GEMMs, convs and depthwise convs whose sums are one product each
 * (K = 1, 1x1 kernels of one input channel per group), so the kernels'
 * own bias and activation passes must give the reference's bits for
 * every activation; strides and padding give pad outputs, act(bias).
 */
static void one_term_case(struct env *e)
{
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t m = 1 + rnd(&e->r, 20), n = 1 + rnd(&e->r, 40), one = 1;
	uint32_t h = 1 + rnd(&e->r, 10), w = 1 + rnd(&e->r, 10), g;
	uint32_t da[2] = { m, one }, db[2] = { one, n }, dy[4], dx[4], dw[4];

	flat_reset(&e->f);
	if (rnd(&e->r, 3) == 0) {
		cmd_init(&c, VNPU_OP_GEMM);
		c.t[0] = tdesc(VNPU_DT_FP32, 2, da);
		c.t[1] = tdesc(VNPU_DT_FP32, 2, db);
		dy[0] = m;
		dy[1] = n;
		c.t[3] = tdesc(VNPU_DT_FP32, 2, dy);
	} else {
		/* A conv of one group, or a depthwise one of m channels. */
		g = rnd(&e->r, 2) ? 1 : m;
		n = g == 1 ? n : g;
		cmd_init(&c, VNPU_OP_CONV2D);
		at->groups = g;
		at->stride_h = 1 + rnd(&e->r, 2);
		at->stride_w = 1 + rnd(&e->r, 2);
		at->dilation_h = at->dilation_w = 1;
		at->pad_top = rnd(&e->r, 3);
		at->pad_bottom = rnd(&e->r, 3);
		at->pad_left = rnd(&e->r, 3);
		at->pad_right = rnd(&e->r, 3);
		dx[0] = 1; dx[1] = h; dx[2] = w; dx[3] = g;
		dw[0] = n; dw[1] = 1; dw[2] = 1; dw[3] = 1;
		dy[0] = 1;
		dy[1] = (h + at->pad_top + at->pad_bottom - 1) / at->stride_h + 1;
		dy[2] = (w + at->pad_left + at->pad_right - 1) / at->stride_w + 1;
		dy[3] = n;
		c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
		c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	}
	pick_act(e, &c, false);
	if (rnd(&e->r, 2))
		float_bias(e, &c.t[2], n);
	e->ftol_abs = 0.0f;
	e->one_term = true;
	place(e, &c.t[0], true, true);
	place(e, &c.t[1], true, true);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
	e->one_term = false;
}

static void test_one_term(void **state)
{
	int i;

	for (i = 0; i < 1500; i++)
		one_term_case(*state);
}

/*
 * Convs of the direct AVX-512 kernels (one group, dense channels; fp32,
 * and int8 with input channels not a multiple of 4 as well):
 * output channels around the 16-lane vectors and 64-channel blocks (so
 * every block width and masked tail), rows long enough for full
 * register blocks of every width plus tails, borders, strides,
 * dilation, and the 1x1 convs that run as one GEMM over all pixels.
 */
static void one_conv_direct(struct env *e, bool quant, bool wide)
{
	static const uint32_t cos[] = { 1, 5, 16, 17, 24, 33, 48, 64, 65, 80, 129 };
	struct vnpu_cmd_compute c;
	struct vnpu_attr_conv2d *at = &c.attr.conv;
	uint32_t ci = 1 + rnd(&e->r, 24), co = cos[rnd(&e->r, sizeof(cos) / sizeof(cos[0]))];
	uint32_t kh = 1 + rnd(&e->r, 4), kw = 1 + rnd(&e->r, 4);
	uint32_t h = 1 + rnd(&e->r, 8), w = 1 + rnd(&e->r, 40), nb = 1 + rnd(&e->r, 2);
	uint32_t dx[4], dw[4], dy[4], oh, ow;

	if (wide) {
		/* Rows cut into 48-column units of work. */
		ci = 600;
		co = 65 + 64 * rnd(&e->r, 2);
		kh = kw = 3;
		h = 1 + rnd(&e->r, 2);
		w = 60 + rnd(&e->r, 40);
	}
	cmd_init(&c, VNPU_OP_CONV2D);
	at->groups = 1;
	at->stride_h = 1 + rnd(&e->r, 2);
	at->stride_w = 1 + rnd(&e->r, 2);
	at->dilation_h = rnd(&e->r, 4) ? 1 : 2;
	at->dilation_w = rnd(&e->r, 4) ? 1 : 2;
	at->pad_top = rnd(&e->r, 3);
	at->pad_bottom = rnd(&e->r, 3);
	at->pad_left = rnd(&e->r, 5);
	at->pad_right = rnd(&e->r, 5);
	if (rnd(&e->r, 3) == 0 && !wide) {
		kh = kw = 1;
		at->stride_h = at->stride_w = 1;
		at->pad_top = at->pad_bottom = at->pad_left = at->pad_right = 0;
	}
	if ((uint64_t)(kh - 1) * at->dilation_h + 1 > h + at->pad_top + at->pad_bottom)
		at->pad_bottom += kh * at->dilation_h;
	if ((uint64_t)(kw - 1) * at->dilation_w + 1 > w + at->pad_left + at->pad_right)
		at->pad_right += kw * at->dilation_w;
	oh = (h + at->pad_top + at->pad_bottom - (kh - 1) * at->dilation_h - 1) / at->stride_h + 1;
	ow = (w + at->pad_left + at->pad_right - (kw - 1) * at->dilation_w - 1) / at->stride_w + 1;
	dx[0] = nb; dx[1] = h; dx[2] = w; dx[3] = ci;
	dw[0] = co; dw[1] = kh; dw[2] = kw; dw[3] = ci;
	dy[0] = nb; dy[1] = oh; dy[2] = ow; dy[3] = co;
	flat_reset(&e->f);
	if (quant) {
		float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

		c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
		c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dw);
		tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
		/*
		 * Mostly the weight zero point the VNNI kernel takes (0 for
		 * int8, 128 for uint8), sometimes another (im2col path).
		 */
		if (rnd(&e->r, 4))
			tquant(&c.t[1], sb, c.t[1].dtype == VNPU_DT_UINT8 ? 128 : 0);
		else
			tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
		c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dy);
		quant_out(e, &c.t[3], sa * sb, kh * kw * ci, rnd(&e->r, 4) == 0, 3);
		pick_act(e, &c, false);
		if (rnd(&e->r, 2)) {
			c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
			place(e, &c.t[2], false, true);
		}
		e->ftol_abs = 0.0f;
	} else {
		c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
		c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
		pick_act(e, &c, false);
		if (rnd(&e->r, 2))
			float_bias(e, &c.t[2], co);
		e->ftol_abs = 2e-5f * (float)(kh * kw * ci + 1);
	}
	place(e, &c.t[0], true, true);
	place(e, &c.t[1], true, true);
	/* Half the int8 ones with 7-bit weights: without VNNI, byte products. */
	if (quant && rnd(&e->r, 2))
		narrow_weights(&e->f, &c.t[1]);
	place(e, &c.t[3], true, false);
	run_case(e, &c);
}

static void test_conv_direct(void **state)
{
	int i;

	/*
	 * The int8 half reaches the AVX2 direct kernels in about one case
	 * of four (measured: 144 of 600), split between the int16 and the
	 * byte-product one, the VNNI one more often: enough cases that each
	 * gets REACH_MIN.
	 */
	for (i = 0; i < 6000; i++)
		one_conv_direct(*state, i & 1, false);
	for (i = 0; i < 4; i++)
		one_conv_direct(*state, i & 1, true);
}

static void test_conv(void **state)
{
	int i;

	for (i = 0; i < 1200; i++)
		one_conv(*state);
}

/* A random shape of rank 1..5 and one of its broadcast-compatible shapes. */
static int rnd_shape(struct env *e, uint32_t *d, uint32_t maxd)
{
	int r = 1 + (int)rnd(&e->r, 5), i;

	for (i = 0; i < r; i++)
		d[i] = 1 + rnd(&e->r, maxd);
	return r;
}

static void rnd_operand(struct env *e, struct vnpu_tensor_desc *t, int ry,
			const uint32_t *dy, bool quant_ok)
{
	int r = 1 + (int)rnd(&e->r, ry), i;
	uint32_t d[VNPU_MAX_RANK];

	for (i = 0; i < r; i++)
		d[i] = rnd(&e->r, 3) ? dy[ry - r + i] : 1;
	*t = tdesc(quant_ok && rnd(&e->r, 3) == 0 ? q8_dts[rnd(&e->r, 2)] :
		   float_dts[rnd(&e->r, 4)], r, d);
	if (!is_float(t->dtype))
		tquant(t, rndf(&e->r, 0.002f, 0.02f), zp_pick(&e->r, t->dtype));
}

static void out_like(struct env *e, struct vnpu_tensor_desc *y, int r,
		     const uint32_t *d)
{
	*y = tdesc(rnd(&e->r, 4) == 0 ? q8_dts[rnd(&e->r, 2)] :
		   float_dts[rnd(&e->r, 4)], r, d);
	if (!is_float(y->dtype)) {
		if (rnd(&e->r, 4) == 0) {
			y->quant = VNPU_QUANT_CHANNEL;
			y->quant_axis = (uint8_t)rnd(&e->r, r);
		} else {
			tquant(y, rndf(&e->r, 0.005f, 0.03f), zp_pick(&e->r, y->dtype));
		}
	}
}

static void test_eltwise(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 600; i++) {
		struct vnpu_cmd_compute c;
		uint32_t dy[VNPU_MAX_RANK];
		int r = rnd_shape(e, dy, 6), j;

		cmd_init(&c, VNPU_OP_ELTWISE);
		c.attr.eltwise.kind = rnd(&e->r, VNPU_ELTWISE_POW + 1);
		rnd_operand(e, &c.t[0], r, dy, true);
		rnd_operand(e, &c.t[1], r, dy, true);
		/* y is exactly the broadcast shape */
		for (j = 0; j < r; j++) {
			int ia = j - (r - c.t[0].rank), ib = j - (r - c.t[1].rank);
			uint32_t a = ia >= 0 ? c.t[0].dims[ia] : 1;
			uint32_t b = ib >= 0 ? c.t[1].dims[ib] : 1;

			dy[j] = a > b ? a : b;
		}
		out_like(e, &c.t[3], r, dy);
		pick_act(e, &c, false);
		flat_reset(&e->f);
		place(e, &c.t[0], true, true);
		place(e, &c.t[1], true, true);
		place(e, &c.t[3], true, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

static void test_unary(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 900; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = rnd_shape(e, d, 7);
		unsigned int op = VNPU_OP_ACTIVATION + rnd(&e->r, 6);

		if (op == VNPU_OP_LAYERNORM + 0 && rnd(&e->r, 2))
			op = VNPU_OP_SOFTMAX;
		cmd_init(&c, (uint16_t)op);
		flat_reset(&e->f);
		switch (op) {
		case VNPU_OP_ACTIVATION:
			rnd_operand(e, &c.t[0], r, d, true);
			memcpy(c.t[0].dims, d, sizeof(uint32_t) * r);
			c.t[0].rank = (uint8_t)r;
			out_like(e, &c.t[3], r, d);
			pick_act(e, &c, false);
			if (rnd(&e->r, 4) == 0) {
				/* Bounds that are infinite, equal, or straddle 0. */
				float lo = rnd(&e->r, 5) ? rndf(&e->r, -2.0f, 1.0f) : -INFINITY;
				float hi = rnd(&e->r, 5) ? lo + rndf(&e->r, 0.0f, 3.0f) : INFINITY;

				if (rnd(&e->r, 8) == 0)
					hi = lo;
				c.act = VNPU_ACT_CLIP;
				c.act_alpha = 0;
				c.attr.raw[VNPU_ACT_BETA_WORD] = 0;
				c.attr.activation.clip_min = f2u(lo);
				c.attr.activation.clip_max = f2u(hi);
			} else if (rnd(&e->r, 3) == 0) {
				c.act = (uint8_t)(VNPU_ACT_SQRT +
						  rnd(&e->r, VNPU_ACT_NEG - VNPU_ACT_SQRT + 1));
				c.act_alpha = 0;
				c.attr.raw[VNPU_ACT_BETA_WORD] = 0;
			}
			break;
		case VNPU_OP_SOFTMAX:
		case VNPU_OP_LAYERNORM:
			c.t[0] = tdesc(float_dts[rnd(&e->r, 4)], r, d);
			c.t[3] = tdesc(float_dts[rnd(&e->r, 4)], r, d);
			c.attr.softmax.axis = rnd(&e->r, r);
			if (op == VNPU_OP_LAYERNORM) {
				int ax = (int)c.attr.layernorm.axis;

				c.attr.layernorm.epsilon = f2u(1e-5f);
				if (rnd(&e->r, 2)) {
					c.t[1] = tdesc(float_dts[rnd(&e->r, 4)], r - ax, d + ax);
					place(e, &c.t[1], true, true);
				}
				if (rnd(&e->r, 2)) {
					c.t[2] = tdesc(float_dts[rnd(&e->r, 4)], r - ax, d + ax);
					place(e, &c.t[2], true, true);
				}
			}
			c.round = (uint8_t)rnd(&e->r, 2);
			break;
		case VNPU_OP_QUANTIZE:
			c.t[0] = tdesc(float_dts[rnd(&e->r, 4)], r, d);
			c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], r, d);
			tquant(&c.t[3], rndf(&e->r, 0.002f, 0.02f), zp_pick(&e->r, c.t[3].dtype));
			c.round = (uint8_t)rnd(&e->r, 2);
			break;
		case VNPU_OP_DEQUANTIZE:
		case VNPU_OP_REQUANTIZE:
			c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], r, d);
			if (rnd(&e->r, 3) == 0) {
				c.t[0].quant = VNPU_QUANT_CHANNEL;
				c.t[0].quant_axis = (uint8_t)rnd(&e->r, r);
			} else {
				tquant(&c.t[0], rndf(&e->r, 0.002f, 0.02f), zp_pick(&e->r, c.t[0].dtype));
			}
			if (op == VNPU_OP_DEQUANTIZE) {
				c.t[3] = tdesc(float_dts[rnd(&e->r, 4)], r, d);
			} else {
				c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], r, d);
				tquant(&c.t[3], rndf(&e->r, 0.002f, 0.02f), zp_pick(&e->r, c.t[3].dtype));
			}
			c.round = (uint8_t)rnd(&e->r, 2);
			break;
		}
		place(e, &c.t[0], true, true);
		place(e, &c.t[3], true, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * Overwrite about one float element of @d in @every with an IEEE special
 * or an extreme value: the per-element engine paths must treat them as
 * the reference does.
 */
static void sprinkle(struct env *e, const struct vnpu_tensor_desc *d,
		     unsigned int every)
{
	static const float special[] = {
		0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 2.0f, 0.5f,
		-3.0f, 6.0f, 1e30f, -1e-30f, 1e-40f, 88.0f, -100.0f, 3.0f,
		/* Ties at a scale of 1/64 (q8_operand()): 2.5, -1.5, 32.5 */
		2.5f / 64.0f, -1.5f / 64.0f, 32.5f / 64.0f,
	};
	struct vnpu_tv tv;
	uint32_t es = vnpu_dtype_size(d->dtype);
	uint64_t span = 1, i;
	int k;

	if (!is_float(d->dtype))
		return;
	for (k = 0; k < d->rank; k++)
		if (d->flags)
			span += (uint64_t)(d->dims[k] - 1) * d->strides[k];
		else
			span *= d->dims[k];
	vnpu_tv_init(&tv, d, flat_host(&e->f, d->va), NULL);
	for (i = 0; i < span; i++)
		if (rnd(&e->r, every) == 0)
			vnpu_st(&tv, (uint8_t *)flat_host(&e->f, d->va) + i * es,
				special[rnd(&e->r, sizeof(special) / sizeof(special[0]))],
				0, 0);
}

/* An operand of Y's shape @dy in the layout @pattern asks for. */
enum elt_pattern {
	PAT_SAME,		/* Y's shape */
	PAT_CHANNEL,		/* [C], or [1,..,1,C]: per channel */
	PAT_SCALAR,		/* one element, rank 1 or Y's rank */
	PAT_INNER,		/* [.., 1]: broadcast along the innermost dim */
	PAT_RANDOM,		/* each dim kept or 1 at random */
	PAT_COUNT
};

static void elt_operand(struct env *e, struct vnpu_tensor_desc *t, int r,
			const uint32_t *dy, enum elt_pattern pat, uint8_t dt)
{
	uint32_t d[VNPU_MAX_RANK];
	int i, rr = r;

	for (i = 0; i < r; i++)
		d[i] = dy[i];
	switch (pat) {
	case PAT_SAME:
		break;
	case PAT_CHANNEL:
		if (rnd(&e->r, 2)) {
			rr = 1;
			d[0] = dy[r - 1];
		} else {
			for (i = 0; i < r - 1; i++)
				d[i] = 1;
		}
		break;
	case PAT_SCALAR:
		rr = rnd(&e->r, 2) ? 1 : r;
		for (i = 0; i < rr; i++)
			d[i] = 1;
		break;
	case PAT_INNER:
		d[r - 1] = 1;
		break;
	default:
		rr = 1 + (int)rnd(&e->r, r);
		for (i = 0; i < rr; i++)
			d[i] = rnd(&e->r, 2) ? dy[r - rr + i] : 1;
		break;
	}
	*t = tdesc(dt, rr, d);
	if (!is_float(dt))
		tquant(t, rndf(&e->r, 0.002f, 0.05f), zp_pick(&e->r, dt));
}

static uint8_t any_dt(struct env *e)
{
	return rnd(&e->r, 4) == 0 ? q8_dts[rnd(&e->r, 2)] : float_dts[rnd(&e->r, 4)];
}

/*
 * ELTWISE in the layouts models use (same shape, per-channel and scalar
 * operands broadcast over NHWC, either side) and at random, rows long
 * enough to span several engine chunks, IEEE specials in the data, and
 * the exact in-place case.
 */
static void test_eltwise_patterns(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 1500; i++) {
		struct vnpu_cmd_compute c;
		uint32_t dy[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, 5), j;
		bool big = rnd(&e->r, 6) == 0, swap = rnd(&e->r, 2);
		enum elt_pattern pat = rnd(&e->r, PAT_COUNT);
		bool allf32 = rnd(&e->r, 2);
		uint8_t dta = allf32 ? VNPU_DT_FP32 : any_dt(e);
		uint8_t dtb = allf32 ? VNPU_DT_FP32 : any_dt(e);

		for (j = 0; j < r; j++)
			dy[j] = 1 + rnd(&e->r, big ? 3 : 7);
		if (big)
			dy[r - 1] = 1 + rnd(&e->r, 3000);
		cmd_init(&c, VNPU_OP_ELTWISE);
		c.attr.eltwise.kind = rnd(&e->r, VNPU_ELTWISE_POW + 1);
		elt_operand(e, &c.t[swap], r, dy, PAT_SAME, dta);
		elt_operand(e, &c.t[!swap], r, dy, pat, dtb);
		c.t[3] = tdesc(allf32 && rnd(&e->r, 4) ? VNPU_DT_FP32 : any_dt(e), r, dy);
		if (!is_float(c.t[3].dtype))
			tquant(&c.t[3], rnd(&e->r, 4) == 0 ? 1.0f / 64.0f :
			       rndf(&e->r, 0.005f, 0.05f),
			       zp_pick(&e->r, c.t[3].dtype));
		if (rnd(&e->r, 3) == 0)
			pick_act(e, &c, false);
		else
			c.round = (uint8_t)rnd(&e->r, 2);
		flat_reset(&e->f);
		place(e, &c.t[0], true, true);
		place(e, &c.t[1], true, true);
		sprinkle(e, &c.t[0], 8);
		sprinkle(e, &c.t[1], 8);
		if (rnd(&e->r, 8) == 0 && !c.t[swap].flags &&
		    c.t[swap].dtype == c.t[3].dtype) {
			/* In place: Y is the full-shape operand itself. */
			uint64_t va = c.t[swap].va;

			c.t[3] = c.t[swap];
			c.t[3].va = va;
		} else {
			place(e, &c.t[3], true, false);
		}
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * An 8-bit scale for a VNPU_ROUND_ORT_QLINEAR operand: mostly at random;
 * a power-of-two multiple of the output's, so that ties land on halves;
 * or so large against the output's that results saturate, even beyond
 * int32 or to infinity.
 */
static float qlinear_scale(struct env *e, float sy)
{
	switch (rnd(&e->r, 6)) {
	case 0:
		return sy * (rnd(&e->r, 2) ? 0.5f : 0.25f);
	case 1:
		return sy * (float)(1 + rnd(&e->r, 4)) * 0.5f;
	case 2:
		return sy * (rnd(&e->r, 2) ? 300.0f : rnd(&e->r, 2) ? 1e12f : 1e35f);
	default:
		return rndf(&e->r, 0.002f, 0.05f);
	}
}

/*
 * ELTWISE ADD and MUL with VNPU_ROUND_ORT_QLINEAR: every broadcast
 * pattern on either side, int8 and uint8, strided operands and rows
 * long enough for several engine chunks, on the engine's own path.
 */
static void test_eltwise_qlinear(void **state)
{
	struct env *e = *state;
	unsigned int on_elt = 0;
	int i;

	for (i = 0; i < 1200; i++) {
		struct vnpu_cmd_compute c;
		uint32_t dy[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, 5), j, k;
		bool big = rnd(&e->r, 6) == 0, swap = rnd(&e->r, 2);
		enum elt_pattern pat = rnd(&e->r, PAT_COUNT);
		uint8_t dt = q8_dts[rnd(&e->r, 2)];
		float sy = rnd(&e->r, 4) == 0 ? 1.0f / 64.0f : rndf(&e->r, 0.005f, 0.05f);

		for (j = 0; j < r; j++)
			dy[j] = 1 + rnd(&e->r, big ? 3 : 7);
		if (big)
			dy[r - 1] = 1 + rnd(&e->r, 3000);
		cmd_init(&c, VNPU_OP_ELTWISE);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.eltwise.kind = rnd(&e->r, 2) ? VNPU_ELTWISE_ADD : VNPU_ELTWISE_MUL;
		elt_operand(e, &c.t[swap], r, dy, PAT_SAME, dt);
		elt_operand(e, &c.t[!swap], r, dy, pat, dt);
		for (k = 0; k < 2; k++)
			c.t[k].scale = f2u(qlinear_scale(e, sy));
		c.t[3] = tdesc(dt, r, dy);
		tquant(&c.t[3], sy, zp_pick(&e->r, dt));
		flat_reset(&e->f);
		place(e, &c.t[0], true, true);
		place(e, &c.t[1], true, true);
		place(e, &c.t[3], true, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
		on_elt += flat_engine.res.path == VNPU_ENG_ELT;
	}
	/* the engine's own loop, not its fallback to the reference */
	assert_int_equal(on_elt, 1200);
}

/* ACTIVATION, every function, long rows, specials, strided and in place. */
static void test_activation_all(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 1200; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, 4), j;
		bool f32 = rnd(&e->r, 2);

		for (j = 0; j < r; j++)
			d[j] = 1 + rnd(&e->r, 9);
		if (rnd(&e->r, 4) == 0)
			d[r - 1] = 1 + rnd(&e->r, 5000);
		cmd_init(&c, VNPU_OP_ACTIVATION);
		c.act = (uint8_t)(i % VNPU_ACT_COUNT);
		if (c.act == VNPU_ACT_LEAKY_RELU)
			c.act_alpha = f2u(rndf(&e->r, 0.0f, 0.3f));
		if (c.act == VNPU_ACT_HARD_SIGMOID) {
			c.act_alpha = f2u(rndf(&e->r, 0.1f, 0.3f));
			c.attr.raw[VNPU_ACT_BETA_WORD] = f2u(rndf(&e->r, 0.3f, 0.7f));
		}
		if (c.act == VNPU_ACT_CLIP) {
			float lo = rndf(&e->r, -2.0f, 1.0f);

			c.attr.activation.clip_min = f2u(lo);
			c.attr.activation.clip_max = f2u(lo + rndf(&e->r, 0.0f, 3.0f));
		}
		c.round = (uint8_t)rnd(&e->r, 2);
		elt_operand(e, &c.t[0], r, d, PAT_SAME,
			    f32 ? VNPU_DT_FP32 : any_dt(e));
		c.t[3] = tdesc(f32 ? VNPU_DT_FP32 : any_dt(e), r, d);
		if (!is_float(c.t[3].dtype))
			tquant(&c.t[3], rndf(&e->r, 0.005f, 0.05f),
			       zp_pick(&e->r, c.t[3].dtype));
		flat_reset(&e->f);
		place(e, &c.t[0], true, true);
		sprinkle(e, &c.t[0], 6);
		if (rnd(&e->r, 3) == 0) {
			/*
			 * A scale/shift P [2, ...]: per channel innermost
			 * (NHWC), along dim 1 (NCHW), scalar or random.
			 */
			uint32_t dp[VNPU_MAX_RANK];
			int rp = 1, pat = (int)rnd(&e->r, 4);

			dp[0] = 2;
			for (j = 0; j < r && rp < VNPU_MAX_RANK; j++) {
				if (pat == 0 && j < r - 1)
					continue;
				if (pat == 1 && j == 0 && r > 1)
					continue;
				dp[rp++] = pat == 2 ? 1 : pat == 3 && rnd(&e->r, 2) ? 1 :
					   pat == 1 && j > 1 ? 1 : d[j];
			}
			/* At most CHANNELS elements: long rows broadcast P. */
			if (pat == 3 && dp[rp - 1] > 512)
				dp[rp - 1] = 1;
			c.t[1] = tdesc(float_dts[rnd(&e->r, 4)], rp, dp);
			place(e, &c.t[1], true, true);
			sprinkle(e, &c.t[1], 10);
		}
		if (rnd(&e->r, 6) == 0 && c.t[0].dtype == c.t[3].dtype &&
		    !c.t[0].flags) {
			uint64_t va = c.t[0].va;

			c.t[3] = c.t[0];
			c.t[3].va = va;
		} else {
			place(e, &c.t[3], true, false);
		}
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * Make @d a per-tensor 8-bit operand.  One scale in four is a power of two,
 * so that the specials of sprinkle() (and sums of them) fall exactly on
 * rounding ties.
 */
static void q8_operand(struct env *e, struct vnpu_tensor_desc *d)
{
	float scale = rnd(&e->r, 4) == 0 ? 1.0f / 64.0f :
		      rndf(&e->r, 0.002f, 0.05f);

	d->dtype = q8_dts[rnd(&e->r, 2)];
	tquant(d, scale, zp_pick(&e->r, d->dtype));
}

static void test_pool(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 900; i++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_pool2d *at = &c.attr.pool;
		/* Three cases in four in the kernel's dtypes, the rest any. */
		bool kernel = rnd(&e->r, 4) != 0;
		uint32_t dx[4] = { 1 + rnd(&e->r, 2), 1 + rnd(&e->r, 9),
				   1 + rnd(&e->r, 9), 1 + rnd(&e->r, 8) };
		uint32_t dy[4] = { dx[0], 1, 1, dx[3] }, ekh, ekw;

		cmd_init(&c, VNPU_OP_POOL2D);
		at->kind = rnd(&e->r, 3);
		if (at->kind != VNPU_POOL_GLOBAL_AVG) {
			at->kernel_h = 1 + rnd(&e->r, dx[1] < 4 ? dx[1] : 4);
			at->kernel_w = 1 + rnd(&e->r, dx[2] < 4 ? dx[2] : 4);
			at->stride_h = 1 + rnd(&e->r, 3);
			at->stride_w = 1 + rnd(&e->r, 3);
			/* 0 (the pre-dilation encoding), 1, or a real dilation */
			at->dilation_h = rnd(&e->r, 3);
			at->dilation_w = rnd(&e->r, 3);
			ekh = (at->kernel_h - 1) * (at->dilation_h ? at->dilation_h : 1) + 1;
			ekw = (at->kernel_w - 1) * (at->dilation_w ? at->dilation_w : 1) + 1;
			if (ekh > dx[1] || ekw > dx[2]) {
				at->dilation_h = at->dilation_w = 0;
				ekh = at->kernel_h;
				ekw = at->kernel_w;
			}
			at->pad_top = rnd(&e->r, ekh);
			at->pad_bottom = rnd(&e->r, ekh);
			at->pad_left = rnd(&e->r, ekw);
			at->pad_right = rnd(&e->r, ekw);
			if (at->kind == VNPU_POOL_AVG && rnd(&e->r, 2))
				at->flags = VNPU_POOL_COUNT_INCLUDE_PAD;
			dy[1] = (dx[1] + at->pad_top + at->pad_bottom - ekh) / at->stride_h + 1;
			dy[2] = (dx[2] + at->pad_left + at->pad_right - ekw) / at->stride_w + 1;
		}
		flat_reset(&e->f);
		rnd_operand(e, &c.t[0], 4, dx, true);
		memcpy(c.t[0].dims, dx, sizeof(dx));
		c.t[0].rank = 4;
		c.t[3] = tdesc(float_dts[rnd(&e->r, 4)], 4, dy);
		if (kernel) {
			/* fp32 or per-tensor 8-bit on either side. */
			c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
			c.t[3].dtype = VNPU_DT_FP32;
			if (rnd(&e->r, 2))
				q8_operand(e, &c.t[0]);
			if (rnd(&e->r, 2))
				q8_operand(e, &c.t[3]);
			/* Often one quantization on both sides, as quantizers write MaxPool. */
			if (!is_float(c.t[0].dtype) && rnd(&e->r, 2)) {
				c.t[3].dtype = c.t[0].dtype;
				c.t[3].quant = c.t[0].quant;
				c.t[3].scale = c.t[0].scale;
				c.t[3].zero_point = c.t[0].zero_point;
			}
		} else if (rnd(&e->r, 3) == 0) {
			c.t[3].dtype = q8_dts[rnd(&e->r, 2)];
			tquant(&c.t[3], rndf(&e->r, 0.002f, 0.02f), zp_pick(&e->r, c.t[3].dtype));
		}
		c.round = (uint8_t)rnd(&e->r, 2);
		place(e, &c.t[0], true, true);
		sprinkle(e, &c.t[0], 12);
		place(e, &c.t[3], true, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * POOL2D AVG and GLOBAL_AVG with VNPU_ROUND_ORT_QLINEAR: int8 and uint8,
 * padding counted or not, channel rows beyond the engine's chunk,
 * tie-making and saturating scales, on the engine's own path.
 */
static void test_pool_qlinear(void **state)
{
	struct env *e = *state;
	unsigned int on_pool = 0;
	int i;

	for (i = 0; i < 900; i++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_pool2d *at = &c.attr.pool;
		bool wide = rnd(&e->r, 8) == 0;
		uint32_t dx[4] = { 1 + rnd(&e->r, 2), 1 + rnd(&e->r, wide ? 3 : 12),
				   1 + rnd(&e->r, wide ? 3 : 12),
				   wide ? 1000 + rnd(&e->r, 1500) : 2 + rnd(&e->r, 40) };
		uint32_t dy[4] = { dx[0], 1, 1, dx[3] };
		uint8_t dt = q8_dts[rnd(&e->r, 2)];
		float sy = rnd(&e->r, 4) == 0 ? 1.0f / 64.0f : rndf(&e->r, 0.005f, 0.05f);

		cmd_init(&c, VNPU_OP_POOL2D);
		c.round = VNPU_ROUND_ORT_QLINEAR;
		at->kind = rnd(&e->r, 2) ? VNPU_POOL_AVG : VNPU_POOL_GLOBAL_AVG;
		if (at->kind == VNPU_POOL_AVG) {
			at->kernel_h = 1 + rnd(&e->r, dx[1] < 4 ? dx[1] : 4);
			at->kernel_w = 1 + rnd(&e->r, dx[2] < 4 ? dx[2] : 4);
			at->stride_h = 1 + rnd(&e->r, 3);
			at->stride_w = 1 + rnd(&e->r, 3);
			at->dilation_h = rnd(&e->r, 2);
			at->dilation_w = rnd(&e->r, 2);
			at->pad_top = rnd(&e->r, at->kernel_h);
			at->pad_bottom = rnd(&e->r, at->kernel_h);
			at->pad_left = rnd(&e->r, at->kernel_w);
			at->pad_right = rnd(&e->r, at->kernel_w);
			if (rnd(&e->r, 2))
				at->flags = VNPU_POOL_COUNT_INCLUDE_PAD;
			dy[1] = (dx[1] + at->pad_top + at->pad_bottom - at->kernel_h) /
				at->stride_h + 1;
			dy[2] = (dx[2] + at->pad_left + at->pad_right - at->kernel_w) /
				at->stride_w + 1;
		}
		c.t[0] = tdesc(dt, 4, dx);
		tquant(&c.t[0], qlinear_scale(e, sy), zp_pick(&e->r, dt));
		c.t[3] = tdesc(dt, 4, dy);
		tquant(&c.t[3], sy, zp_pick(&e->r, dt));
		flat_reset(&e->f);
		place(e, &c.t[0], true, true);
		place(e, &c.t[3], true, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
		on_pool += flat_engine.res.path == VNPU_ENG_POOL;
	}
	/* the engine's own loops, not its fallback to the reference */
	assert_int_equal(on_pool, 900);
}

/*
 * A strided layout for @d: its dims in memory in a random order (a
 * transpose, an NCHW view of NHWC data), with gaps between rows.
 */
static void permuted_layout(struct env *e, struct vnpu_tensor_desc *d)
{
	int ord[VNPU_MAX_RANK], i, k;
	uint64_t st = 1;

	for (i = 0; i < d->rank; i++)
		ord[i] = i;
	for (i = d->rank - 1; i > 0; i--) {
		int j = (int)rnd(&e->r, (uint32_t)i + 1), t = ord[i];

		ord[i] = ord[j];
		ord[j] = t;
	}
	d->flags = VNPU_TENSOR_STRIDED;
	for (i = d->rank - 1; i >= 0; i--) {
		k = ord[i];
		d->strides[k] = st;
		st = st * d->dims[k] + rnd(&e->r, 3);
	}
}

/* Dense, or with gaps (place()), or transposed in memory. */
static void place_any(struct env *e, struct vnpu_tensor_desc *d, bool fill)
{
	if (rnd(&e->r, 4) == 0)
		permuted_layout(e, d);
	place(e, d, !d->flags, fill);
}

/* Any dtype for @d, quantized per tensor when 8-bit. */
static void q8_or_float(struct env *e, struct vnpu_tensor_desc *d)
{
	d->dtype = any_dt(e);
	if (!is_float(d->dtype))
		tquant(d, rndf(&e->r, 0.005f, 0.05f), zp_pick(&e->r, d->dtype));
}

/*
 * COPY: slices, pads with every border, reversed dims, transposes and
 * dtype conversions, as the importer lowers Slice, Pad, Transpose,
 * Concat, Cast and friends.
 */
static void test_copy(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 700; i++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[VNPU_MAX_RANK], yd[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, VNPU_MAX_RANK), d;

		for (d = 0; d < r; d++) {
			uint32_t m = r > 4 ? 4 : r > 2 ? 8 : 40;

			yd[d] = 1 + rnd(&e->r, m);
			xd[d] = 1 + rnd(&e->r, yd[d] + 3);
		}
		cmd_init(&c, VNPU_OP_COPY);
		c.round = (uint8_t)rnd(&e->r, 2);
		c.t[0] = tdesc(VNPU_DT_FP32, r, xd);
		c.t[3] = tdesc(VNPU_DT_FP32, r, yd);
		if (rnd(&e->r, 2)) {
			q8_or_float(e, &c.t[0]);
			if (rnd(&e->r, 2))
				c.t[3] = c.t[0];
			else
				q8_or_float(e, &c.t[3]);
			memcpy(c.t[3].dims, yd, sizeof(uint32_t) * r);
		}
		c.attr.copy.border = rnd(&e->r, VNPU_COPY_BORDER_WRAP + 1);
		if (c.attr.copy.border == VNPU_COPY_BORDER_CONSTANT)
			c.attr.copy.fill = f2u(rnd(&e->r, 4) ? rndf(&e->r, -4.0f, 4.0f) :
					       rnd(&e->r, 2) ? NAN : -INFINITY);
		for (d = 0; d < r; d++)
			c.attr.copy.offset[d] = (int32_t)rnd(&e->r, yd[d] + xd[d] + 3) -
						(int32_t)xd[d] - 1;
		if (rnd(&e->r, 3) == 0)
			c.attr.copy.reverse = rnd(&e->r, 1u << r);
		flat_reset(&e->f);
		place_any(e, &c.t[0], true);
		sprinkle(e, &c.t[0], 16);
		place_any(e, &c.t[3], false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
	/* Transpose as lowered: a permuted view of X into a dense Y, raw. */
	for (i = 0; i < 400; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 2 + (int)rnd(&e->r, 3), k;

		cmd_init(&c, VNPU_OP_COPY);
		for (k = 0; k < r; k++)
			d[k] = 2 + rnd(&e->r, r > 3 ? 8 : 30);
		c.t[0] = tdesc(VNPU_DT_FP32, r, d);
		q8_or_float(e, &c.t[0]);
		c.t[3] = c.t[0];
		flat_reset(&e->f);
		permuted_layout(e, &c.t[0]);
		place(e, &c.t[0], false, true);
		place(e, &c.t[3], false, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/* RESIZE: every mode, coordinate rule and rounding, up and down, any dtype. */
static void test_resize(void **state)
{
	struct env *e = *state;
	int i, k;

	for (i = 0; i < 600; i++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_resize *at = &c.attr.resize;
		uint32_t xd[4], yd[4];

		cmd_init(&c, VNPU_OP_RESIZE);
		at->mode = rnd(&e->r, 3);
		at->coord = rnd(&e->r, 6);
		if (at->mode == VNPU_RESIZE_NEAREST)
			at->nearest = rnd(&e->r, 4);
		if (at->mode == VNPU_RESIZE_CUBIC) {
			at->cubic_a = f2u(rnd(&e->r, 2) ? -0.75f : -0.5f);
			at->flags = rnd(&e->r, 2) ? VNPU_RESIZE_EXCLUDE_OUTSIDE : 0;
		}
		xd[0] = yd[0] = 1 + rnd(&e->r, 2);
		xd[3] = yd[3] = 1 + rnd(&e->r, 20);
		for (k = 1; k <= 2; k++) {
			xd[k] = 1 + rnd(&e->r, 9);
			yd[k] = 1 + rnd(&e->r, 19);
			if (rnd(&e->r, 2))	/* an explicit scale, not always out / in */
				(k == 1 ? &at->scale_h : &at->scale_w)[0] =
					f2u((float)yd[k] / (float)xd[k] * (rnd(&e->r, 2) ? 1.0f : 0.9f));
		}
		if (at->coord == VNPU_RESIZE_TF_CROP_AND_RESIZE) {
			at->extrapolation = f2u(rnd(&e->r, 2) ? 10.0f : 0.0f);
			for (k = 0; k < 2; k++) {
				at->roi[k] = f2u((float)rnd(&e->r, 8) / 10.0f - 0.2f);
				at->roi[2 + k] = f2u((float)rnd(&e->r, 8) / 10.0f + 0.5f);
			}
		}
		c.round = (uint8_t)rnd(&e->r, 2);
		c.t[0] = tdesc(VNPU_DT_FP32, 4, xd);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, yd);
		if (rnd(&e->r, 2)) {
			q8_or_float(e, &c.t[0]);
			q8_or_float(e, &c.t[3]);
		}
		flat_reset(&e->f);
		place_any(e, &c.t[0], true);
		sprinkle(e, &c.t[0], 20);
		place_any(e, &c.t[3], false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * CONV_TRANSPOSE: groups, strides, dilations, pads, output padding, fp32
 * with the fused epilogues, fp16/bf16 storage, and 8-bit quantized with
 * per-channel weights; bit for bit (ops.rst), but for fp32 sums on the
 * phase path (CONV2D kernels), within CONV2D's tolerance.
 */
static void test_convt(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 700; i++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_conv_transpose *at = &c.attr.convt;
		uint32_t g = 1 + rnd(&e->r, 3), cig = 1 + rnd(&e->r, i % 3 ? 6 : 24);
		uint32_t cog = 1 + rnd(&e->r, i % 2 ? 3 : 12), kh = 1 + rnd(&e->r, 4);
		uint32_t kw = 1 + rnd(&e->r, 4), co = g * cog;
		uint32_t dx[4] = { 1 + rnd(&e->r, 2), 1 + rnd(&e->r, 7),
				   1 + rnd(&e->r, i % 5 ? 9 : 40), g * cig };
		uint32_t dw[4] = { g * cig, kh, kw, cog }, dy[4];
		uint64_t full_h, full_w;
		bool quant = rnd(&e->r, 3) == 0;
		float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

		cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
		at->groups = g;
		at->stride_h = 1 + rnd(&e->r, 3);
		at->stride_w = 1 + rnd(&e->r, 3);
		at->dilation_h = 1 + rnd(&e->r, 2);
		at->dilation_w = 1 + rnd(&e->r, 2);
		at->out_pad_h = rnd(&e->r, at->stride_h > at->dilation_h ? at->stride_h : at->dilation_h);
		at->out_pad_w = rnd(&e->r, at->stride_w > at->dilation_w ? at->stride_w : at->dilation_w);
		full_h = (uint64_t)(dx[1] - 1) * at->stride_h + (kh - 1) * at->dilation_h + 1 + at->out_pad_h;
		full_w = (uint64_t)(dx[2] - 1) * at->stride_w + (kw - 1) * at->dilation_w + 1 + at->out_pad_w;
		at->pad_top = rnd(&e->r, (uint32_t)full_h);
		at->pad_bottom = rnd(&e->r, (uint32_t)(full_h - at->pad_top));
		at->pad_left = rnd(&e->r, (uint32_t)full_w);
		at->pad_right = rnd(&e->r, (uint32_t)(full_w - at->pad_left));
		dy[0] = dx[0];
		dy[1] = (uint32_t)(full_h - at->pad_top - at->pad_bottom);
		dy[2] = (uint32_t)(full_w - at->pad_left - at->pad_right);
		dy[3] = co;
		flat_reset(&e->f);
		if (quant) {
			c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
			c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dw);
			tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
			/* Per output channel is one axis of W only without groups. */
			if (g == 1 && rnd(&e->r, 2)) {
				c.t[1].quant = VNPU_QUANT_CHANNEL;
				c.t[1].quant_axis = 3;
				sb = 0.025f;
			} else {
				tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
			}
			if (rnd(&e->r, 6) == 0) {
				c.t[3] = tdesc(VNPU_DT_INT32, 4, dy);
			} else {
				c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dy);
				quant_out(e, &c.t[3], sa * sb, kh * kw * cig, false, 3);
			}
			pick_act(e, &c, c.t[3].dtype == VNPU_DT_INT32);
			if (rnd(&e->r, 2)) {
				c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
				place(e, &c.t[2], false, true);
			}
		} else {
			bool f32 = rnd(&e->r, 4) != 0;

			c.t[0] = tdesc(f32 ? VNPU_DT_FP32 : float_dts[rnd(&e->r, 4)], 4, dx);
			c.t[1] = tdesc(f32 ? VNPU_DT_FP32 : float_dts[rnd(&e->r, 4)], 4, dw);
			c.t[3] = tdesc(f32 ? VNPU_DT_FP32 : float_dts[rnd(&e->r, 4)], 4, dy);
			pick_act(e, &c, false);
			if (rnd(&e->r, 2))
				float_bias(e, &c.t[2], co);
		}
		/* The phase path's float sums: CONV2D's tolerance (ops.rst). */
		e->ftol_abs = quant ? 0.0f : 2e-5f * (float)(kh * kw * cig + 1);
		place_any(e, &c.t[0], true);
		place(e, &c.t[1], false, true);
		place_any(e, &c.t[3], false);
		run_case(e, &c);
	}
}

/*
 * CONV_TRANSPOSE on the phase path (vnpu_engine_convt.c), fp32 and 8-bit:
 * strides 1-4, kernels 1-5 and multiples of the stride (whose phases merge
 * into one conv), dilations 1-3, any pads and output padding, one group,
 * depthwise and grouped with 8 or more outputs per group, channels past
 * 64, strided and permuted views of X and Y, per-channel W and Y, every
 * fused activation.  Most cases must take that path.
 */
static void test_convt_phases(void **state)
{
	struct env *e = *state;
	unsigned int phases = 0;
	int i;

	for (i = 0; i < 600; i++) {
		struct vnpu_cmd_compute c;
		struct vnpu_attr_conv_transpose *at = &c.attr.convt;
		uint32_t mode = rnd(&e->r, 4), g, cig, cog, kh, kw, co;
		uint32_t dx[4], dw[4], dy[4];
		uint64_t full_h, full_w;
		bool quant = rnd(&e->r, 3) == 0;
		float sa = rndf(&e->r, 0.005f, 0.05f), sb = rndf(&e->r, 0.005f, 0.05f);

		cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
		at->stride_h = 1 + rnd(&e->r, 4);
		at->stride_w = 1 + rnd(&e->r, 4);
		at->dilation_h = rnd(&e->r, 3) ? 1 : 1 + rnd(&e->r, 3);
		at->dilation_w = rnd(&e->r, 3) ? 1 : 1 + rnd(&e->r, 3);
		kh = 1 + rnd(&e->r, 5);
		kw = 1 + rnd(&e->r, 5);
		if (rnd(&e->r, 2)) {
			/* A multiple of the stride: every phase the same window. */
			kh = at->stride_h * (1 + rnd(&e->r, 2));
			kw = at->stride_w * (1 + rnd(&e->r, 2));
		}
		if (mode == 1) {		/* depthwise, multiplier 1 or 2 */
			g = 1 + rnd(&e->r, i % 4 ? 16 : 80);
			cig = 1;
			cog = 1 + rnd(&e->r, 2);
		} else if (mode == 2) {		/* grouped, 8 or more outputs a group */
			g = 2 + rnd(&e->r, 2);
			cig = 1 + rnd(&e->r, 8);
			cog = 8 + rnd(&e->r, 5);
		} else {
			g = 1;
			cig = 1 + rnd(&e->r, i % 4 ? 16 : 80);
			cog = 1 + rnd(&e->r, i % 3 ? 8 : 70);
		}
		co = g * cog;
		at->groups = g;
		at->out_pad_h = rnd(&e->r, at->stride_h > at->dilation_h ? at->stride_h : at->dilation_h);
		at->out_pad_w = rnd(&e->r, at->stride_w > at->dilation_w ? at->stride_w : at->dilation_w);
		dx[0] = 1 + rnd(&e->r, 2);
		dx[1] = 1 + rnd(&e->r, 9);
		dx[2] = 1 + rnd(&e->r, i % 5 ? 12 : 40);
		dx[3] = g * cig;
		dw[0] = g * cig;
		dw[1] = kh;
		dw[2] = kw;
		dw[3] = cog;
		full_h = (uint64_t)(dx[1] - 1) * at->stride_h + (kh - 1) * at->dilation_h + 1 + at->out_pad_h;
		full_w = (uint64_t)(dx[2] - 1) * at->stride_w + (kw - 1) * at->dilation_w + 1 + at->out_pad_w;
		/* Small pads mostly (the common case), any now and then. */
		at->pad_top = rnd(&e->r, 4) ? rnd(&e->r, kh < full_h ? kh : (uint32_t)full_h) :
			      rnd(&e->r, (uint32_t)full_h);
		at->pad_bottom = rnd(&e->r, (uint32_t)(full_h - at->pad_top) < kh + 1 ?
				     (uint32_t)(full_h - at->pad_top) : kh + 1);
		at->pad_left = rnd(&e->r, 4) ? rnd(&e->r, kw < full_w ? kw : (uint32_t)full_w) :
			       rnd(&e->r, (uint32_t)full_w);
		at->pad_right = rnd(&e->r, (uint32_t)(full_w - at->pad_left) < kw + 1 ?
				    (uint32_t)(full_w - at->pad_left) : kw + 1);
		dy[0] = dx[0];
		dy[1] = (uint32_t)(full_h - at->pad_top - at->pad_bottom);
		dy[2] = (uint32_t)(full_w - at->pad_left - at->pad_right);
		dy[3] = co;
		flat_reset(&e->f);
		if (quant) {
			c.t[0] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dx);
			c.t[1] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dw);
			tquant(&c.t[0], sa, zp_pick(&e->r, c.t[0].dtype));
			if (g == 1 && rnd(&e->r, 2)) {
				c.t[1].quant = VNPU_QUANT_CHANNEL;
				c.t[1].quant_axis = 3;
				sb = 0.025f;
			} else {
				tquant(&c.t[1], sb, zp_pick(&e->r, c.t[1].dtype));
			}
			if (rnd(&e->r, 8) == 0) {
				c.t[3] = tdesc(VNPU_DT_INT32, 4, dy);
			} else {
				c.t[3] = tdesc(q8_dts[rnd(&e->r, 2)], 4, dy);
				quant_out(e, &c.t[3], sa * sb, kh * kw * cig, rnd(&e->r, 4) == 0, 3);
			}
			pick_act(e, &c, c.t[3].dtype == VNPU_DT_INT32);
			if (rnd(&e->r, 2)) {
				c.t[2] = tdesc(VNPU_DT_INT32, 1, &co);
				place(e, &c.t[2], false, true);
			}
		} else {
			c.t[0] = tdesc(VNPU_DT_FP32, 4, dx);
			c.t[1] = tdesc(VNPU_DT_FP32, 4, dw);
			c.t[3] = tdesc(VNPU_DT_FP32, 4, dy);
			pick_act(e, &c, false);
			if (rnd(&e->r, 2))
				float_bias(e, &c.t[2], co);
		}
		e->ftol_abs = quant ? 0.0f : 2e-5f * (float)(kh * kw * cig + 1);
		place_any(e, &c.t[0], true);
		place(e, &c.t[1], rnd(&e->r, 2), true);
		place_any(e, &c.t[3], false);
		run_case(e, &c);
		phases += flat_engine.res.path == VNPU_ENG_CONVT_PHASES;
	}
	printf("# test_convt_phases: %u of 600 cases on the phase path\n", phases);
	assert_true(phases >= 450);
}

/* REDUCE of an fp32 X over any set of axes, every kind, specials included. */
static void test_reduce(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 700; i++) {
		struct vnpu_cmd_compute c;
		uint32_t dx[VNPU_MAX_RANK], dy[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, 5), d;

		cmd_init(&c, VNPU_OP_REDUCE);
		c.attr.reduce.kind = rnd(&e->r, VNPU_REDUCE_SUM_SQUARE + 1);
		while (!c.attr.reduce.axes)
			c.attr.reduce.axes = rnd(&e->r, 1u << r);
		for (d = 0; d < r; d++) {
			dx[d] = 1 + rnd(&e->r, r > 3 ? 6 : 24);
			dy[d] = (c.attr.reduce.axes >> d) & 1 ? 1 : dx[d];
		}
		c.round = (uint8_t)rnd(&e->r, 2);
		c.t[0] = tdesc(VNPU_DT_FP32, r, dx);
		c.t[3] = tdesc(VNPU_DT_FP32, r, dy);
		if (rnd(&e->r, 4) == 0)
			q8_or_float(e, &c.t[3]);
		flat_reset(&e->f);
		place_any(e, &c.t[0], true);
		if (rnd(&e->r, 3) == 0)
			sprinkle(e, &c.t[0], 30);
		place_any(e, &c.t[3], false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * LUT: random tables of either dtype from X of either dtype, any rank,
 * dense, gapped, transposed and broadcast (zero-stride) X, strided
 * tables, and X and Y one tensor (in place).
 */
static void test_lut(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 800; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK], ent = VNPU_LUT_ENTRIES;
		int r = 1 + (int)rnd(&e->r, VNPU_MAX_RANK), k;
		uint8_t xdt = rnd(&e->r, 2) ? VNPU_DT_INT8 : VNPU_DT_UINT8;
		uint8_t ydt = rnd(&e->r, 2) ? VNPU_DT_INT8 : VNPU_DT_UINT8;
		bool in_place = xdt == ydt && rnd(&e->r, 4) == 0;

		cmd_init(&c, VNPU_OP_LUT);
		for (k = 0; k < r; k++)
			d[k] = 1 + rnd(&e->r, r > 3 ? 5 : 40);
		if (rnd(&e->r, 6) == 0) {	/* long rows, few of them */
			for (k = 0; k < r - 1; k++)
				d[k] = 1 + rnd(&e->r, 2);
			d[r - 1] = 1 + rnd(&e->r, 20000);
		}
		c.t[0] = tdesc(xdt, r, d);
		tquant(&c.t[0], rndf(&e->r, 0.005f, 0.05f), zp_pick(&e->r, xdt));
		c.t[1] = tdesc(ydt, 1, &ent);
		c.t[3] = tdesc(ydt, r, d);
		tquant(&c.t[3], rndf(&e->r, 0.005f, 0.05f), zp_pick(&e->r, ydt));
		c.t[1].quant = c.t[3].quant;
		c.t[1].scale = c.t[3].scale;
		c.t[1].zero_point = c.t[3].zero_point;
		flat_reset(&e->f);
		place_any(e, &c.t[0], true);
		place(e, &c.t[1], true, true);
		if (in_place) {
			c.t[3].va = c.t[0].va;
			c.t[3].flags = c.t[0].flags;
			memcpy(c.t[3].strides, c.t[0].strides, sizeof(c.t[3].strides));
			/* a broadcast X cannot be written in place */
			for (k = 0; k < r; k++)
				if (c.t[3].flags && !c.t[3].strides[k] && d[k] > 1)
					in_place = false;
		}
		if (!in_place) {
			c.t[3].va = 0;
			c.t[3].flags = 0;
			memset(c.t[3].strides, 0, sizeof(c.t[3].strides));
			place_any(e, &c.t[3], false);
		}
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/*
 * SOFTMAX with fp32 X and Y along any axis, strided and transposed
 * operands, long rows, and specials (which decide the whole row).
 */
static void test_softmax(void **state)
{
	struct env *e = *state;
	int i;

	for (i = 0; i < 700; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 1 + (int)rnd(&e->r, 5), k;

		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.attr.softmax.axis = rnd(&e->r, (uint32_t)r);
		for (k = 0; k < r; k++)
			d[k] = 1 + rnd(&e->r, 6);
		if (rnd(&e->r, 4) == 0)
			d[c.attr.softmax.axis] = 1 + rnd(&e->r, 3000);
		c.t[0] = tdesc(VNPU_DT_FP32, r, d);
		c.t[3] = tdesc(VNPU_DT_FP32, r, d);
		flat_reset(&e->f);
		place_any(e, &c.t[0], true);
		if (rnd(&e->r, 3) == 0)
			sprinkle(e, &c.t[0], 40);
		place_any(e, &c.t[3], false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
	/* An outer axis over a dense inner block of 8 or more: the columns. */
	for (i = 0; i < 250; i++) {
		struct vnpu_cmd_compute c;
		uint32_t d[VNPU_MAX_RANK];
		int r = 2 + (int)rnd(&e->r, 4), k;

		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.attr.softmax.axis = rnd(&e->r, (uint32_t)r - 1);
		for (k = 0; k < r; k++)
			d[k] = 1 + rnd(&e->r, 5);
		d[r - 1] = 8 + rnd(&e->r, 30);
		c.t[0] = tdesc(VNPU_DT_FP32, r, d);
		c.t[3] = tdesc(VNPU_DT_FP32, r, d);
		flat_reset(&e->f);
		place(e, &c.t[0], false, true);
		if (rnd(&e->r, 3) == 0)
			sprinkle(e, &c.t[0], 40);
		place(e, &c.t[3], false, false);
		e->ftol_abs = 0.0f;
		run_case(e, &c);
	}
}

/* Each test again, telling which kernels its cases reached. */
#define COUNTED(fn)					\
	static void fn##_counted(void **state)		\
	{						\
		reach_begin(*state);			\
		fn(state);				\
		reach_note(*state, #fn);		\
	}
COUNTED(test_gemm_small)
COUNTED(test_gemm_blocked)
COUNTED(test_gemm_fold)
COUNTED(test_conv)
COUNTED(test_dwconv)
COUNTED(test_conv_direct)
COUNTED(test_one_term)
COUNTED(test_eltwise)
COUNTED(test_unary)
COUNTED(test_eltwise_patterns)
COUNTED(test_eltwise_qlinear)
COUNTED(test_activation_all)
COUNTED(test_pool)
COUNTED(test_pool_qlinear)
COUNTED(test_copy)
COUNTED(test_resize)
COUNTED(test_convt)
COUNTED(test_convt_phases)
COUNTED(test_reduce)
COUNTED(test_lut)
COUNTED(test_softmax)
#define counted_test(fn)	{ #fn, fn##_counted, NULL, NULL, NULL }

/*
 * Whether this host can run kernel @p at all; NULL if it can, else why
 * not.  The direct conv kernels need AVX-512 (VNNI for int8, and the
 * fp32 one follows the int8 kernel choice).
 */
static const char *path_unavailable(enum vnpu_eng_path p)
{
	if ((p == VNPU_ENG_SOFTMAX_AVX2 || p == VNPU_ENG_SOFTMAX_COLS ||
	     p == VNPU_ENG_LUT_AVX2) &&
	    !__builtin_cpu_supports("avx2"))
		return "this CPU has no AVX2, so the kernel cannot run here";
	/* Its fp32 rows are the AVX2 kernels' fallback; QLinear is test-ops-nn's. */
	if (p == VNPU_ENG_SOFTMAX && __builtin_cpu_supports("avx2"))
		return "with AVX2 every fp32 softmax takes the AVX2 kernels";
	/* The direct kernels have AVX-512 VNNI and AVX2 (fp32: with FMA) forms. */
	if (p == VNPU_ENG_CONV_I8_BYTES && vnpu_i8_kernel_available(VNPU_I8_VNNI))
		return "with AVX-512 VNNI the int8 convs take the VNNI kernel";
	if (vnpu_i8_kernel_available(VNPU_I8_VNNI))
		return NULL;
	if (p == VNPU_ENG_CONV_F32 && !(vnpu_i8_kernel_available(VNPU_I8_AVX2) &&
					__builtin_cpu_supports("fma")))
		return "this CPU has neither AVX-512 VNNI nor AVX2 with FMA, so the kernel cannot run here";
	if (p == VNPU_ENG_CONV_I8 && !vnpu_i8_kernel_available(VNPU_I8_AVX2))
		return "this CPU has neither AVX-512 VNNI nor AVX2, so the kernel cannot run here";
	if (p == VNPU_ENG_CONV_I8_BYTES && !vnpu_i8_kernel_available(VNPU_I8_AVX2))
		return "this CPU has no AVX2, so the kernel cannot run here";
	return NULL;
}

/* One kernel's count over every group above: at least REACH_MIN. */
static void test_reach(void **state)
{
	enum vnpu_eng_path p = *(const enum vnpu_eng_path *)*state;

	printf("# %s: %u random cases\n", path_names[p], reached[p]);
	if (reached[p] < REACH_MIN) {
		fprintf(stderr, "kernel %s reached by %u random cases, want >= %u\n",
			path_names[p], reached[p], REACH_MIN);
		fail();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		counted_test(test_gemm_small),
		counted_test(test_gemm_blocked),
		counted_test(test_gemm_fold),
		counted_test(test_conv),
		counted_test(test_dwconv),
		counted_test(test_conv_direct),
		counted_test(test_one_term),
		counted_test(test_eltwise),
		counted_test(test_unary),
		counted_test(test_eltwise_patterns),
		counted_test(test_eltwise_qlinear),
		counted_test(test_activation_all),
		counted_test(test_pool),
		counted_test(test_pool_qlinear),
		counted_test(test_copy),
		counted_test(test_resize),
		counted_test(test_convt),
		counted_test(test_convt_phases),
		counted_test(test_reduce),
		counted_test(test_lut),
		counted_test(test_softmax),
	};

	/*
	 * The int8 GEMM/CONV cases again on every other kernel this CPU has
	 * (the depthwise kernels follow the same choice, fp32 ones too).
	 */
	static const struct {
		const char *name;
		CMUnitTestFunction fn;
	} i8[] = {
		{ "test_gemm_small", test_gemm_small_counted },
		{ "test_gemm_blocked", test_gemm_blocked_counted },
		{ "test_conv", test_conv_counted },
		{ "test_dwconv", test_dwconv_counted },
	};
	enum vnpu_i8_kernel best = vnpu_i8_kernel_resolve(VNPU_I8_AUTO);
	struct CMUnitTest i8_tests[4], reach[VNPU_ENG_NPATHS];
	enum vnpu_eng_path paths[VNPU_ENG_NPATHS];
	char names[4][64], group[64], reach_names[VNPU_ENG_NPATHS][64];
	int k, i, n, fails;

	fails = cmocka_run_group_tests(tests, setup, teardown);
	for (k = 0; k < VNPU_I8_NKERNELS; k++) {
		if ((enum vnpu_i8_kernel)k == best || !vnpu_i8_kernel_available(k))
			continue;
		flat_engine.i8_kernel = k;
		for (i = 0; i < 4; i++) {
			snprintf(names[i], sizeof(names[i]), "%s/%s", i8[i].name,
				 vnpu_i8_kernel_id(k));
			i8_tests[i] = (struct CMUnitTest){ .name = names[i],
							   .test_func = i8[i].fn };
		}
		snprintf(group, sizeof(group), "int8 kernel %s", vnpu_i8_kernel_id(k));
		fails += _cmocka_run_group_tests(group, i8_tests, 4, setup, teardown);
	}
	flat_engine.i8_kernel = VNPU_I8_AUTO;

	/* Every kernel, not the reference (nor "none", which no case may end in). */
	for (n = 0, i = VNPU_ENG_REF + 1; i < VNPU_ENG_NPATHS; i++) {
		const char *why = path_unavailable((enum vnpu_eng_path)i);

		/* Not a test on this host at all: a skip is no pass. */
		if (why) {
			printf("# %s: %u random cases; not checked here: %s\n",
			       path_names[i], reached[i], why);
			continue;
		}
		paths[n] = (enum vnpu_eng_path)i;
		snprintf(reach_names[n], sizeof(reach_names[n]), "reach/%s", path_names[i]);
		reach[n] = (struct CMUnitTest){ .name = reach_names[n], .test_func = test_reach,
						.initial_state = &paths[n] };
		n++;
	}
	printf("# reference fallbacks (the reference compared with itself): %u cases\n",
	       reached[VNPU_ENG_REF]);
	fails += _cmocka_run_group_tests("engine kernels reached", reach, (size_t)n,
					 NULL, NULL);
	return fails;
}
