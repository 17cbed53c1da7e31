// SPDX-License-Identifier: MIT
/*
 * The device's fast compute engine: GEMM and convolution through packed,
 * cache-blocked kernels (OpenBLAS sgemm for fp32 GEMM, our own VNNI kernel
 * for int8), direct NHWC convolutions on AVX-512 (vnpu_engine_conv.c) and
 * depthwise ones (vnpu_engine_dw.c), im2col + GEMM for the rest,
 * transposed convolutions as those convolutions (vnpu_engine_convt.c), the
 * per-element ops through vnpu_engine_elt.c, most others through the
 * reference implementation, which is memory bound for those ops anyway.
 * See Documentation/ops.rst for the measurements behind these choices.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef VNPU_NO_BLAS
#include "vnpu_sgemm.h"
#else
#include <cblas.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "vnpu_engine.h"

/*
 * im2col scratch per chunk of output rows, in bytes (fp32 path): sized
 * to L2 so sgemm reads the rows im2col just wrote from cache (measured:
 * 8 MiB 67, 1 MiB 80, 256 KiB 70 GFLOP/s on the 3x3 conv benchmark).
 */
#define IM2COL_BYTES	(1u << 20)
/*
 * int8 rows per pass: packed A, the int32 products and the output rows
 * of one pass stay in L2, and scratch does not grow with M.
 */
#define I8_ROWS		192

/* The command was abandoned: unwind without touching anything more. */
static bool stopped(const struct vnpu_run_ctx *rc)
{
	return rc && rc->stopped;
}

/* A matrix inside a bound tensor: element (i, j) at base + i*sr + j*sc. */
struct mat {
	const struct vnpu_tv *tv;
	uint8_t *base;
	int64_t sr, sc;
	uint32_t rows, cols;
};

static uint8_t *mat_at(const struct mat *m, uint32_t i, uint32_t j)
{
	return m->base + ((int64_t)i * m->sr + (int64_t)j * m->sc) * m->tv->esize;
}

/* ---- fp32 ----------------------------------------------------------- */

/*
 * Describe @m to cblas without copying when it is fp32 with one unit
 * stride, else pack it densely into *@tmp.  Returns the data pointer.
 */
static const float *f32_operand(const struct mat *m, bool *trans, int *ld,
				float **tmp, struct vnpu_run_ctx *rc)
{
	uint32_t i, j;
	float *d;

	if (m->tv->dtype == VNPU_DT_FP32) {
		if ((m->sc == 1 || m->cols == 1) &&
		    (m->rows == 1 || m->sr >= m->cols) && m->sr <= INT_MAX) {
			*trans = false;
			*ld = m->rows == 1 ? (int)m->cols : (int)m->sr;
			if (*ld < (int)m->cols)
				*ld = (int)m->cols;
			return (const float *)m->base;
		}
		if ((m->sr == 1 || m->rows == 1) &&
		    (m->cols == 1 || m->sc >= m->rows) && m->sc <= INT_MAX) {
			*trans = true;
			*ld = m->cols == 1 ? (int)m->rows : (int)m->sc;
			if (*ld < (int)m->rows)
				*ld = (int)m->rows;
			return (const float *)m->base;
		}
	}
	d = vnpu_run_alloc(rc, sizeof(float) * m->rows * m->cols);
	if (!d)
		return NULL;
	for (i = 0; i < m->rows; i++) {
		if (vnpu_run_tick(rc, m->cols)) {
			vnpu_run_free(rc, d);
			return NULL;
		}
		for (j = 0; j < m->cols; j++)
			d[(size_t)i * m->cols + j] = vnpu_ld(m->tv, mat_at(m, i, j), 0);
	}
	*tmp = d;
	*trans = false;
	*ld = (int)m->cols;
	return d;
}

/*
 * y = act(a @ b + bias) for one matrix.  @yoff(i) gives output row i's
 * element offset so conv rows (b, oy, ox) need no uniform row stride.
 */
struct f32_out {
	const struct vnpu_tv *y;
	uint8_t *base;		/* element (0, 0) */
	int64_t sr, sc;		/* element strides */
	uint32_t ch0;		/* channel of column 0 (conv groups) */
};

/*
 * In-place bias + activation over an fp32 output (rows of @n at stride
 * @ld): the ops of vnpu_act() in the same order, written out per
 * activation so each row loop vectorizes instead of calling per element.
 */
static int f32_epilogue(unsigned int act, float alpha, float beta,
			const struct vnpu_tv *bias, uint32_t ch0, float *y,
			int ld, uint32_t m, uint32_t n, struct vnpu_run_ctx *rc)
{
	float *bv = NULL, *sv = NULL, one;
	uint32_t i, j;

	if (bias->p) {
		/* Shifts (or the bias), then scales for a [2, N] operand. */
		bv = vnpu_run_alloc(rc, sizeof(float) * n * (bias->rank == 2 ? 2 : 1));
		if (!bv)
			return -ENOMEM;
		if (bias->rank == 2)
			sv = bv + n;
		for (j = 0; j < n; j++)
			vnpu_bias_at(bias, ch0 + j, sv ? &sv[j] : &one, &bv[j]);
	}
	for (i = 0; i < m; i++) {
		float *r = y + (size_t)i * ld;

		if (vnpu_run_tick(rc, n)) {
			vnpu_run_free(rc, bv);
			return -ECANCELED;
		}
		/* No "+ 0.0f" without a bias: it would turn -0 into +0. */
		if (sv)
			for (j = 0; j < n; j++)
				r[j] = r[j] * sv[j] + bv[j];
		else if (bv)
			for (j = 0; j < n; j++)
				r[j] += bv[j];
		switch (act) {
		case VNPU_ACT_NONE:
			break;
		case VNPU_ACT_RELU:
			for (j = 0; j < n; j++)
				r[j] = r[j] > 0.0f ? r[j] : 0.0f;
			break;
		case VNPU_ACT_RELU6:
			for (j = 0; j < n; j++)
				r[j] = r[j] > 6.0f ? 6.0f : r[j] > 0.0f ? r[j] : 0.0f;
			break;
		case VNPU_ACT_LEAKY_RELU:
			for (j = 0; j < n; j++)
				r[j] = r[j] >= 0.0f ? r[j] : r[j] * alpha;
			break;
		case VNPU_ACT_HARD_SIGMOID:
			for (j = 0; j < n; j++) {
				float t = alpha * r[j] + beta;

				r[j] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
			}
			break;
		case VNPU_ACT_HARD_SWISH:
			for (j = 0; j < n; j++) {
				float t = r[j] * (1.0f / 6.0f) + 0.5f;

				r[j] = r[j] * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
			}
			break;
		default:
			for (j = 0; j < n; j++)
				r[j] = vnpu_act_ab(act, alpha, beta, r[j]);
			break;
		}
	}
	vnpu_run_free(rc, bv);
	return 0;
}

/*
 * Work of one cblas_sgemm call, in MACs.  A call cannot be interrupted, so
 * a product is cut into blocks no larger than this: 2^24 MACs is 0.3-0.6
 * ms of fp32 work on one core (27-49 GMAC/s, AVX2 and AVX-512 hosts),
 * within the 1 ms a reset may wait for abandoned work; 2^26 took 1.4-2.8
 * ms.  The price, measured on the 1024^3 GEMM: 0.79x of one uncut call,
 * against 0.88x for 2^26-MAC blocks; 256^3 and smaller fit one block and
 * lose nothing.
 */
#define F32_BLOCK_MACS	(VNPU_POLL_BLOCK / 4)
#define F32_OUT_MACS	64

static int f32_gemm(const struct vnpu_cmd_compute *c, const struct mat *a,
		    const struct mat *b, const struct vnpu_tv *bias,
		    const struct f32_out *o, struct vnpu_run_ctx *rc)
{
	uint32_t m = a->rows, n = b->cols, k = a->cols, i, j, i0, j0, mb, nb;
	float *ta = NULL, *tb = NULL, *tc = NULL, *cp;
	uint64_t kk = k ? k : 1, t;
	/*
	 * A block's cost in MACs: an element of C written costs about
	 * F32_OUT_MACS MACs' time, so a small K does not make a block of
	 * tens of milliseconds (K 1: 2^26 elements written between polls).
	 */
	uint64_t kb = kk + F32_OUT_MACS;
	const float *pa, *pb;
	bool tra, trb, direct;
	int lda, ldb, ldc, ret = -ENOMEM;
	float alpha, beta = vnpu_act_beta(c);

	memcpy(&alpha, &c->act_alpha, 4);
	pa = f32_operand(a, &tra, &lda, &ta, rc);
	pb = pa ? f32_operand(b, &trb, &ldb, &tb, rc) : NULL;
	if (!pa || !pb)
		goto out;
	direct = o->y->dtype == VNPU_DT_FP32 && (o->sc == 1 || n == 1) &&
		 (m == 1 || o->sr >= n) && o->sr <= INT_MAX;
	if (direct) {
		cp = (float *)o->base;
		ldc = m == 1 ? (int)n : (int)o->sr;
		if (ldc < (int)n)
			ldc = (int)n;
	} else {
		tc = vnpu_run_alloc(rc, sizeof(float) * m * n);
		if (!tc)
			goto out;
		cp = tc;
		ldc = (int)n;
	}
	/*
	 * Prefer tall blocks (OpenBLAS is fastest on long M panels), and
	 * cut N only when 256 rows of it would exceed the block.
	 */
	nb = n;
	if (256 * (uint64_t)n * kb > F32_BLOCK_MACS) {
		t = F32_BLOCK_MACS / (256 * kb);
		nb = t < 16 ? 16 : (uint32_t)(t / 16 * 16);
		nb = nb > n ? n : nb;
	}
	t = F32_BLOCK_MACS / ((uint64_t)nb * kb);
	mb = t < 1 ? 1 : t > m ? m : (uint32_t)t;
	for (j0 = 0; j0 < n; j0 += nb) {
		uint32_t nn = n - j0 < nb ? n - j0 : nb;

		for (i0 = 0; i0 < m; i0 += mb) {
			uint32_t mm = m - i0 < mb ? m - i0 : mb;

			if (vnpu_run_tick(rc, (uint64_t)mm * nn * kk)) {
				ret = -ECANCELED;
				goto out;
			}
#ifdef VNPU_NO_BLAS
			if (vnpu_sgemm(tra, trb, mm, nn, k,
				       pa + (tra ? i0 : (size_t)i0 * lda), lda,
				       pb + (trb ? (size_t)j0 * ldb : j0), ldb,
				       cp + (size_t)i0 * ldc + j0, ldc))
				goto out;
#else
			cblas_sgemm(CblasRowMajor, tra ? CblasTrans : CblasNoTrans,
				    trb ? CblasTrans : CblasNoTrans, (int)mm,
				    (int)nn, (int)k, 1.0f,
				    pa + (tra ? i0 : (size_t)i0 * lda), lda,
				    pb + (trb ? (size_t)j0 * ldb : j0), ldb, 0.0f,
				    cp + (size_t)i0 * ldc + j0, ldc);
#endif
		}
	}
	if (direct && !bias->p && c->act == VNPU_ACT_NONE) {
		ret = 0;
		goto out;
	}
	if (direct) {
		ret = f32_epilogue(c->act, alpha, beta, bias, o->ch0, cp, ldc, m, n, rc);
		goto out;
	}
	for (i = 0; i < m; i++) {
		if (vnpu_run_tick(rc, n)) {
			ret = -ECANCELED;
			goto out;
		}
		for (j = 0; j < n; j++) {
			float v = cp[(size_t)i * ldc + j];
			uint32_t ch = o->ch0 + j;

			v = vnpu_bias_apply(bias, ch, v);
			vnpu_st(o->y, o->base + ((int64_t)i * o->sr + (int64_t)j * o->sc) *
				o->y->esize, vnpu_act_ab(c->act, alpha, beta, v),
				o->y->quant == VNPU_QUANT_CHANNEL ? ch : 0, c->round);
		}
	}
	ret = 0;
out:
	vnpu_run_free(rc, ta);
	vnpu_run_free(rc, tb);
	vnpu_run_free(rc, tc);
	return ret;
}

/* ---- int8 ------------------------------------------------------------ */

/*
 * The shifted operands: a_u = a + 128 for int8 A (a byte XOR 0x80), b_s =
 * b - 128 for uint8 B (likewise), and the zero points shifted with them.
 */
struct i8_ctx {
	const struct vnpu_cmd_compute *c;
	const struct vnpu_tv *a, *b, *bias, *y;
	uint32_t k, n;
	uint8_t axor, bxor;
	int32_t za_u;
	int32_t *zb_s;		/* [n] */
	struct vnpu_epi *epi;	/* [n] */
	struct vnpu_i8_b pb;
	int32_t *colsum;	/* [np] sum_k b_s */
	/* Per column, for the vectorized requantization (fast == true). */
	bool fast;
	int32_t *corr, *ozp, *lo, *hi;	/* [n] */
	float *fm;			/* [n] */
	uint8_t *row;			/* [n] staging for strided outputs */
	struct vnpu_run_ctx *rc;
};

static int i8_ctx_init(struct i8_ctx *x, const struct vnpu_cmd_compute *c,
		       const struct vnpu_tv *t, uint32_t k, uint32_t n,
		       uint32_t ch0, struct vnpu_run_ctx *rc)
{
	uint32_t j;

	memset(x, 0, sizeof(*x));
	x->rc = rc;
	x->c = c;
	x->a = &t[0];
	x->b = &t[1];
	x->bias = &t[2];
	x->y = &t[3];
	x->k = k;
	x->n = n;
	x->axor = t[0].dtype == VNPU_DT_INT8 ? 0x80 : 0;
	x->bxor = t[1].dtype == VNPU_DT_UINT8 ? 0x80 : 0;
	x->za_u = t[0].zp + (x->axor ? 128 : 0);
	x->pb.n = n;
	x->pb.np = vnpu_round_up(n, VNPU_I8_NR);
	x->pb.kp = vnpu_round_up(k, 4);
	/* n < 2^26 and kp <= 2^16 (command limits): no size overflows. */
	x->zb_s = vnpu_run_alloc(rc, sizeof(int32_t) * n);
	x->epi = vnpu_run_alloc(rc, sizeof(*x->epi) * n);
	x->colsum = vnpu_run_calloc(rc, x->pb.np, sizeof(int32_t));
	x->pb.p = vnpu_run_alloc(rc, (size_t)x->pb.np * x->pb.kp);
	x->corr = vnpu_run_alloc(rc, sizeof(int32_t) * n);
	x->ozp = vnpu_run_alloc(rc, sizeof(int32_t) * n);
	x->lo = vnpu_run_alloc(rc, sizeof(int32_t) * n);
	x->hi = vnpu_run_alloc(rc, sizeof(int32_t) * n);
	x->fm = vnpu_run_alloc(rc, sizeof(float) * n);
	x->row = vnpu_run_alloc(rc, n);
	if (!x->zb_s || !x->epi || !x->colsum || !x->pb.p || !x->corr ||
	    !x->ozp || !x->lo || !x->hi || !x->fm || !x->row)
		return -ENOMEM;
	for (j = 0; j < n; j++) {
		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		x->zb_s[j] = vnpu_tv_zp(&t[1], ch0 + j) - (x->bxor ? 128 : 0);
		vnpu_epi_init(&x->epi[j], c, &t[0], &t[1], &t[3], ch0 + j);
	}
	return 0;
}

static void i8_ctx_fini(struct i8_ctx *x)
{
	vnpu_run_free(x->rc, x->zb_s);
	vnpu_run_free(x->rc, x->epi);
	vnpu_run_free(x->rc, x->colsum);
	vnpu_run_free(x->rc, x->pb.p);
	vnpu_run_free(x->rc, x->corr);
	vnpu_run_free(x->rc, x->ozp);
	vnpu_run_free(x->rc, x->lo);
	vnpu_run_free(x->rc, x->hi);
	vnpu_run_free(x->rc, x->fm);
	vnpu_run_free(x->rc, x->row);
}

/*
 * dst[4c + q] = r[q][c] ^ xq, c < 16: four 16-byte rows to one panel group.
 * SSE2 is part of x86-64, so this needs no run-time dispatch.
 */
#if defined(__x86_64__) && defined(__GNUC__)
static void interleave4(const uint8_t *const r[4], uint8_t x0, uint8_t x1,
			uint8_t x2, uint8_t x3, int8_t *dst)
{
	__m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r[0]), _mm_set1_epi8((char)x0));
	__m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r[1]), _mm_set1_epi8((char)x1));
	__m128i c = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r[2]), _mm_set1_epi8((char)x2));
	__m128i d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r[3]), _mm_set1_epi8((char)x3));
	__m128i ablo = _mm_unpacklo_epi8(a, b), abhi = _mm_unpackhi_epi8(a, b);
	__m128i cdlo = _mm_unpacklo_epi8(c, d), cdhi = _mm_unpackhi_epi8(c, d);

	_mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(ablo, cdlo));
	_mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(ablo, cdlo));
	_mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(abhi, cdhi));
	_mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(abhi, cdhi));
}
#else
static void interleave4(const uint8_t *const r[4], uint8_t x0, uint8_t x1,
			uint8_t x2, uint8_t x3, int8_t *dst)
{
	uint32_t c;

	for (c = 0; c < VNPU_I8_NR; c++) {
		dst[4 * c] = (int8_t)(r[0][c] ^ x0);
		dst[4 * c + 1] = (int8_t)(r[1][c] ^ x1);
		dst[4 * c + 2] = (int8_t)(r[2][c] ^ x2);
		dst[4 * c + 3] = (int8_t)(r[3][c] ^ x3);
	}
}
#endif

/*
 * Row-major B (the usual weight layout): four k rows of 16 columns become
 * one 64-byte panel group by two rounds of byte/word interleaving, instead
 * of a scattered byte store per element.  Column sums run as a separate
 * pass so both loops stay vectorized.
 */
static void pack_b_rows(struct i8_ctx *x, const struct mat *b)
{
	size_t pstride = (size_t)x->pb.kp * VNPU_I8_NR;
	uint32_t n = x->n, np = x->pb.np, kk, j, q;
	const uint8_t *rows[4];
	uint8_t tail[4][VNPU_I8_NR];
	uint8_t zero[VNPU_I8_NR] = { 0 };

	for (kk = 0; kk < x->k; kk++) {
		const uint8_t *src = b->base + (int64_t)kk * b->sr;

		if (vnpu_run_tick(x->rc, n))
			return;
		for (j = 0; j < n; j++)
			x->colsum[j] += (int8_t)(src[j] ^ x->bxor);
	}
	for (kk = 0; kk < x->pb.kp; kk += 4) {
		if (vnpu_run_tick(x->rc, 4 * (uint64_t)np))
			return;
		/* Rows past k pack as zero bytes (after the XOR, too). */
		for (q = 0; q < 4; q++)
			rows[q] = kk + q < x->k ? b->base + (int64_t)(kk + q) * b->sr : NULL;
		for (j = 0; j < np; j += VNPU_I8_NR) {
			int8_t *dst = x->pb.p + (size_t)(j / VNPU_I8_NR) * pstride +
				      (size_t)kk / 4 * 64;
			const uint8_t *r[4];

			for (q = 0; q < 4; q++) {
				if (!rows[q]) {
					r[q] = zero;
				} else if (j + VNPU_I8_NR <= n) {
					r[q] = rows[q] + j;
				} else {
					memset(tail[q], x->bxor, VNPU_I8_NR);
					memcpy(tail[q], rows[q] + j, n - j);
					r[q] = tail[q];
				}
			}
			interleave4(r, rows[0] ? x->bxor : 0, rows[1] ? x->bxor : 0,
				    rows[2] ? x->bxor : 0, rows[3] ? x->bxor : 0, dst);
		}
	}
}

/*
 * Column-major B (conv weights [co][k]): each column's k bytes are
 * contiguous, so a k group of 4 moves as one 32-bit word.
 */
static void pack_b_cols(struct i8_ctx *x, const struct mat *b)
{
	size_t pstride = (size_t)x->pb.kp * VNPU_I8_NR;
	uint32_t k4 = x->k / 4, kk, j;
	uint32_t xor4 = x->bxor * 0x01010101u;

	memset(x->pb.p, 0, (size_t)x->pb.np * x->pb.kp);
	for (j = 0; j < x->n; j++) {
		const uint8_t *src = b->base + (int64_t)j * b->sc;
		int8_t *dst = x->pb.p + (j / VNPU_I8_NR) * pstride + (j % VNPU_I8_NR) * 4;
		int32_t sum = 0;
		uint32_t v;

		if (vnpu_run_tick(x->rc, 2 * (uint64_t)x->k))
			return;
		for (kk = 0; kk < x->k; kk++)
			sum += (int8_t)(src[kk] ^ x->bxor);
		for (kk = 0; kk < k4; kk++) {
			memcpy(&v, src + 4 * kk, 4);
			v ^= xor4;
			memcpy(dst + (size_t)kk * 64, &v, 4);
		}
		for (kk = 4 * k4; kk < x->k; kk++)
			dst[(size_t)k4 * 64 + kk % 4] = (int8_t)(src[kk] ^ x->bxor);
		x->colsum[j] = sum;
	}
}

/*
 * Pack B into VNNI panels with column sums, then fold everything that is
 * per column (zero-point cross term, bias) into one correction.  Channel
 * ch0 + j is column j's output channel.
 */
static void i8_pack_b(struct i8_ctx *x, const struct mat *b, uint32_t ch0)
{
	size_t pstride = (size_t)x->pb.kp * VNPU_I8_NR;
	uint32_t kk, j;

	memset(x->colsum, 0, sizeof(int32_t) * x->pb.np);
	if (b->sc == 1 && b->sr >= x->n) {
		pack_b_rows(x, b);
	} else if (b->sc <= b->sr) {
		/* Walk B along its unit (smaller) stride. */
		memset(x->pb.p, 0, (size_t)x->pb.np * x->pb.kp);
		for (kk = 0; kk < x->k; kk++) {
			const uint8_t *src = b->base + (int64_t)kk * b->sr;
			int8_t *dst = x->pb.p + (kk / 4) * 64 + kk % 4;

			if (vnpu_run_tick(x->rc, x->n))
				return;
			for (j = 0; j < x->n; j++) {
				int8_t v = (int8_t)(src[(int64_t)j * b->sc] ^ x->bxor);

				dst[(j / VNPU_I8_NR) * pstride + (j % VNPU_I8_NR) * 4] = v;
				x->colsum[j] += v;
			}
		}
	} else if (b->sr == 1) {
		pack_b_cols(x, b);
	} else {
		memset(x->pb.p, 0, (size_t)x->pb.np * x->pb.kp);
		for (j = 0; j < x->n; j++) {
			const uint8_t *src = b->base + (int64_t)j * b->sc;
			int8_t *dst = x->pb.p + (j / VNPU_I8_NR) * pstride + (j % VNPU_I8_NR) * 4;
			int32_t sum = 0;

			if (vnpu_run_tick(x->rc, x->k))
				return;
			for (kk = 0; kk < x->k; kk++) {
				int8_t v = (int8_t)(src[(int64_t)kk * b->sr] ^ x->bxor);

				dst[(kk / 4) * 64 + kk % 4] = v;
				sum += v;
			}
			x->colsum[j] = sum;
		}
	}
	if (x->rc && x->rc->stopped)
		return;
	x->fast = true;
	for (j = 0; j < x->n; j++) {
		const struct vnpu_epi *e = &x->epi[j];

		if (vnpu_run_tick(x->rc, 1))
			return;
		uint32_t corr = (uint32_t)x->k * (uint32_t)x->za_u * (uint32_t)x->zb_s[j] -
				(uint32_t)x->za_u * (uint32_t)x->colsum[j];

		if (x->bias->p) {
			int32_t bv;

			memcpy(&bv, x->bias->p + (int64_t)(ch0 + j) * x->bias->st[0] * 4, 4);
			corr += (uint32_t)bv;
		}
		x->corr[j] = (int32_t)corr;
		x->fm[j] = e->fmult;
		x->ozp[j] = e->out_zp;
		x->lo[j] = e->lo;
		x->hi[j] = e->hi;
		if (e->mode != VNPU_EPI_REQUANT || e->round != VNPU_ROUND_ONNX)
			x->fast = false;
	}
}

/*
 * One output row of the ONNX-rounded requantization; cloned per ISA so
 * the loop vectorizes on hosts that have the instructions.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void fin_row(const int32_t *cr, int32_t rs, const int32_t *zb,
		    const int32_t *corr, const float *fm, const int32_t *zp,
		    const int32_t *lo, const int32_t *hi, uint8_t *out, uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++) {
		int32_t acc = (int32_t)((uint32_t)cr[j] - (uint32_t)zb[j] * (uint32_t)rs +
					(uint32_t)corr[j]);

		out[j] = (uint8_t)vnpu_round_sat((float)acc * fm[j], zp[j], lo[j], hi[j]);
	}
}

/*
 * Finish rows of a GEMM whose raw products are in @cacc (rows x np):
 * subtract the zero-point cross terms, add the bias, and requantize.
 * @yrow[i] is output row i's address, @ysc its element stride.
 */
static void i8_finish(const struct i8_ctx *x, const int32_t *cacc,
		      const int32_t *rowsum, uint32_t rows, uint8_t *const *yrow,
		      int64_t ysc, uint32_t ch0)
{
	uint32_t i, j;

	for (i = 0; i < rows; i++) {
		const int32_t *cr = cacc + (size_t)i * x->pb.np;

		if (vnpu_run_tick(x->rc, x->n))
			return;
		if (x->fast) {
			uint8_t *out = ysc == 1 ? yrow[i] : x->row;

			fin_row(cr, rowsum[i], x->zb_s, x->corr, x->fm, x->ozp,
				x->lo, x->hi, out, x->n);
			if (ysc != 1)
				for (j = 0; j < x->n; j++)
					yrow[i][(int64_t)j * ysc] = x->row[j];
			continue;
		}
		for (j = 0; j < x->n; j++) {
			uint32_t acc = (uint32_t)cr[j] -
				       (uint32_t)x->zb_s[j] * (uint32_t)rowsum[i] +
				       (uint32_t)x->corr[j];

			vnpu_epi_store(&x->epi[j], x->y, yrow[i] + (int64_t)j * ysc *
				       x->y->esize, (int32_t)acc, ch0 + j);
		}
	}
}

/* A rows of one GEMM: pack @rows rows of @a from row @r0, with sums. */
static void i8_pack_a(const struct i8_ctx *x, const struct mat *a, uint32_t r0,
		      uint32_t rows, uint8_t *ap, int32_t *rowsum)
{
	uint32_t i, kk;

	for (i = 0; i < rows; i++) {
		const uint8_t *src = a->base + (int64_t)(r0 + i) * a->sr;
		uint8_t *row = ap + (size_t)i * x->pb.kp;
		int32_t s = 0;

		if (vnpu_run_tick(x->rc, x->k))
			return;
		if (a->sc == 1) {
			for (kk = 0; kk < x->k; kk++) {
				row[kk] = src[kk] ^ x->axor;
				s += row[kk];
			}
		} else {
			for (kk = 0; kk < x->k; kk++) {
				row[kk] = src[(int64_t)kk * a->sc] ^ x->axor;
				s += row[kk];
			}
		}
		memset(row + x->k, 0, x->pb.kp - x->k);
		rowsum[i] = s;
	}
}

/* ---- GEMM ------------------------------------------------------------- */

static int eng_gemm(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;
	bool tb = c->attr.gemm.flags & VNPU_GEMM_TRANS_B;
	int r = y->rank, ra = a->rank, rb = b->rank, d;
	uint32_t m = y->dims[r - 2], n = y->dims[r - 1];
	uint32_t k = a->dims[ra - (ta ? 2 : 1)];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	struct mat ma = { a, NULL, a->st[ra - (ta ? 1 : 2)], a->st[ra - (ta ? 2 : 1)], m, k };
	struct mat mb = { b, NULL, b->st[rb - (tb ? 1 : 2)], b->st[rb - (tb ? 2 : 1)], k, n };
	struct i8_ctx x;
	uint8_t *ap = NULL, *prev_b = NULL, **yrow = NULL;
	int32_t *rowsum = NULL, *cacc = NULL;
	uint32_t mp = vnpu_round_up(m < I8_ROWS ? m : I8_ROWS, VNPU_I8_MR);
	int ret = 0;

	if (info->quantized) {
		ret = i8_ctx_init(&x, c, t, k, n, 0, rc);
		ap = vnpu_run_alloc(rc, (size_t)mp * x.pb.kp);
		rowsum = vnpu_run_calloc(rc, mp, sizeof(int32_t));
		cacc = vnpu_run_alloc(rc, sizeof(int32_t) * mp * x.pb.np);
		yrow = vnpu_run_alloc(rc, sizeof(*yrow) * mp);
		if (ret || !ap || !rowsum || !cacc || !yrow) {
			ret = -ENOMEM;
			goto out;
		}
		/* Rows past M in the last pass are computed but never stored. */
		memset(ap, 0, (size_t)mp * x.pb.kp);
	}
	do {
		uint32_t i, r0;
		int64_t oa = 0, ob = 0, oy = 0;

		for (d = 0; d < ra - 2; d++)
			oa += (a->dims[d] == 1 ? 0 : idx[r - ra + d]) * a->st[d];
		for (d = 0; d < rb - 2; d++)
			ob += (b->dims[d] == 1 ? 0 : idx[r - rb + d]) * b->st[d];
		for (d = 0; d < r - 2; d++)
			oy += idx[d] * y->st[d];
		ma.base = a->p + oa * a->esize;
		mb.base = b->p + ob * b->esize;
		if (!info->quantized) {
			struct f32_out o = { y, y->p + oy * y->esize,
					     y->st[r - 2], y->st[r - 1], 0 };

			ret = f32_gemm(c, &ma, &mb, &t[2], &o, rc);
			if (ret)
				goto out;
		} else {
			/* Batches sharing one B (broadcast weights) pack it once. */
			if (mb.base != prev_b)
				i8_pack_b(&x, &mb, 0);
			prev_b = mb.base;
			for (r0 = 0; r0 < m && !stopped(rc); r0 += mp) {
				uint32_t nr = m - r0 < mp ? m - r0 : mp;

				i8_pack_a(&x, &ma, r0, nr, ap, rowsum);
				/* Rows past nr keep stale data; their results are dropped. */
				if (stopped(rc) ||
				    vnpu_i8_gemm(ap, vnpu_round_up(nr, VNPU_I8_MR),
						 &x.pb, cacc, rc))
					break;
				for (i = 0; i < nr; i++)
					yrow[i] = y->p + (oy + (int64_t)(r0 + i) * y->st[r - 2]) *
						  y->esize;
				i8_finish(&x, cacc, rowsum, nr, yrow, y->st[r - 1], 0);
			}
			if (stopped(rc)) {
				ret = -ECANCELED;
				goto out;
			}
		}
		idx[r - 2] = m - 1;
		idx[r - 1] = n - 1;
		for (d = r - 1; d >= 0; d--) {
			if (++idx[d] < y->dims[d])
				break;
			idx[d] = 0;
		}
	} while (d >= 0);
out:
	if (info->quantized)
		i8_ctx_fini(&x);
	vnpu_run_free(rc, ap);
	vnpu_run_free(rc, rowsum);
	vnpu_run_free(rc, cacc);
	vnpu_run_free(rc, yrow);
	return ret;
}

/* ---- CONV2D: im2col + GEMM --------------------------------------------- */

struct conv_geo {
	uint32_t n, h, w, c, kh, kw, cig, cog, oh, ow, co;
	const struct vnpu_attr_conv2d *at;
};

/*
 * @n elements of @es bytes from @src at a byte stride of @sb: the common
 * sizes as constants, so each copy is one load and store, not a call.
 */
static void gather_strided(uint8_t *dst, const uint8_t *src, uint32_t n,
			   size_t es, int64_t sb)
{
	uint32_t i;

	switch (es) {
	case 4:
		for (i = 0; i < n; i++)
			memcpy(dst + i * 4, src + i * sb, 4);
		break;
	case 2:
		for (i = 0; i < n; i++)
			memcpy(dst + i * 2, src + i * sb, 2);
		break;
	case 1:
		for (i = 0; i < n; i++)
			dst[i] = src[i * sb];
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * es, src + i * sb, es);
	}
}

/*
 * Output row @r (b, oy, ox) of group @g: the im2col row in A layout.  Pad
 * taps are @pad_byte in every byte: a one-byte zero point, or the all-zero
 * bits of a float zero.
 */
static void im2col_row(const struct conv_geo *g, const struct vnpu_tv *x,
		       uint32_t r, uint32_t grp, uint8_t *dst, size_t es,
		       int pad_byte)
{
	uint32_t ox = r % g->ow, oy = (r / g->ow) % g->oh, b = r / g->ow / g->oh;
	size_t tap = g->cig * es;
	/* Then the taps of one ky are one run of X, copied in one piece. */
	bool runs = g->at->dilation_w == 1 && g->cig == g->c &&
		    x->st[3] == 1 && x->st[2] == g->c;
	int64_t ix0 = (int64_t)ox * g->at->stride_w - g->at->pad_left;
	uint32_t ky, kx;

	for (ky = 0; ky < g->kh; ky++) {
		int64_t iy = (int64_t)oy * g->at->stride_h - g->at->pad_top +
			     (int64_t)ky * g->at->dilation_h;
		const uint8_t *xrow;

		if (iy < 0 || iy >= g->h) {
			memset(dst, pad_byte, g->kw * tap);
			dst += g->kw * tap;
			continue;
		}
		xrow = x->p + ((int64_t)b * x->st[0] + iy * x->st[1] +
			       (int64_t)grp * g->cig * x->st[3]) * x->esize;
		if (runs) {
			int64_t lo = ix0 < 0 ? -ix0 : 0, hi = (int64_t)g->w - ix0;

			lo = lo < g->kw ? lo : g->kw;
			hi = hi < lo ? lo : hi < g->kw ? hi : g->kw;
			memset(dst, pad_byte, lo * tap);
			memcpy(dst + lo * tap, xrow + (ix0 + lo) * x->st[2] * x->esize,
			       (hi - lo) * tap);
			memset(dst + hi * tap, pad_byte, (g->kw - hi) * tap);
			dst += g->kw * tap;
			continue;
		}
		for (kx = 0; kx < g->kw; kx++) {
			int64_t ix = ix0 + (int64_t)kx * g->at->dilation_w;
			const uint8_t *src;

			if (ix < 0 || ix >= g->w) {
				memset(dst, pad_byte, tap);
				dst += tap;
				continue;
			}
			src = xrow + ix * x->st[2] * x->esize;
			if (x->st[3] == 1)
				memcpy(dst, src, tap);
			else
				gather_strided(dst, src, g->cig, es, x->st[3] * x->esize);
			dst += tap;
		}
	}
}

/* Y is dense NHWC: output rows (b, oy, ox) at a uniform stride of co. */
static bool y_dense(const struct conv_geo *g, const struct vnpu_tv *y)
{
	return y->st[3] == 1 && y->st[2] == g->co &&
	       y->st[1] == (int64_t)g->ow * g->co &&
	       y->st[0] == (int64_t)g->oh * g->ow * g->co;
}

/* Output pixel r at y->st[2] * r: the rows of one im2col chunk are uniform. */
static bool y_rows_uniform(const struct conv_geo *g, const struct vnpu_tv *y)
{
	return y->st[1] == (int64_t)g->ow * y->st[2] &&
	       (g->n == 1 || y->st[0] == (int64_t)g->oh * y->st[1]);
}

static int eng_conv(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *w = &t[1], *y = &t[3];
	struct conv_geo g = {
		x->dims[0], x->dims[1], x->dims[2], x->dims[3],
		w->dims[1], w->dims[2], w->dims[3], w->dims[0] / c->attr.conv.groups,
		y->dims[1], y->dims[2], y->dims[3], &c->attr.conv,
	};
	uint32_t k = g.kh * g.kw * g.cig, rows = g.n * g.oh * g.ow, grp, r0, i;
	uint32_t kp = vnpu_round_up(k, 4), chunk;
	struct vnpu_tv xa;	/* the im2col matrix as a dense tensor view */
	struct mat ma, mb;
	uint8_t *col = NULL, **yrow = NULL;
	int32_t *rowsum = NULL, *cacc = NULL;
	struct i8_ctx q;
	bool have_q = false;
	int ret = -ENOMEM;

	/* Rows per chunk: bounded scratch, a multiple of the row block. */
	chunk = info->quantized ? I8_ROWS : IM2COL_BYTES / (kp * x->esize);
	chunk = chunk < VNPU_I8_MR ? VNPU_I8_MR : chunk / VNPU_I8_MR * VNPU_I8_MR;
	if (chunk > vnpu_round_up(rows, VNPU_I8_MR))
		chunk = vnpu_round_up(rows, VNPU_I8_MR);
	col = vnpu_run_alloc(rc, (size_t)chunk * kp * x->esize);
	if (!col)
		goto out;
	xa = *x;
	xa.p = col;
	if (info->quantized) {
		rowsum = vnpu_run_alloc(rc, sizeof(int32_t) * chunk);
		yrow = vnpu_run_alloc(rc, sizeof(*yrow) * chunk);
		if (!rowsum || !yrow)
			goto out;
	}
	for (grp = 0; grp < c->attr.conv.groups; grp++) {
		/* B(kk, j) = W[grp*cog + j, ky, kx, ci], kk = (ky*KW + kx)*cig + ci */
		mb = (struct mat){ w, w->p + (int64_t)grp * g.cog * w->st[0] * w->esize,
				   0, w->st[0], k, g.cog };
		/* Dense W flattens (ky, kx, ci) to one unit stride. */
		bool wdense = w->st[3] == 1 && w->st[2] == g.cig &&
			      w->st[1] == (int64_t)g.kw * g.cig;

		if (info->quantized) {
			if (!have_q) {
				ret = i8_ctx_init(&q, c, t, k, g.cog, 0, rc);
				have_q = true;
				cacc = vnpu_run_alloc(rc, sizeof(int32_t) * chunk * q.pb.np);
				if (ret || !cacc) {
					ret = -ENOMEM;
					goto out;
				}
			}
			/* Per-channel params are per output channel: redo per group. */
			if (vnpu_run_tick(rc, g.cog)) {
				ret = -ECANCELED;
				goto out;
			}
			for (i = 0; i < g.cog; i++) {
				q.zb_s[i] = vnpu_tv_zp(w, grp * g.cog + i) - (q.bxor ? 128 : 0);
				vnpu_epi_init(&q.epi[i], c, x, w, y, grp * g.cog + i);
			}
			if (wdense) {
				mb.sr = 1;
				i8_pack_b(&q, &mb, grp * g.cog);
			} else {
				/* Gather W_g into a dense [cog][k] copy first. */
				uint8_t *wg = vnpu_run_alloc(rc, (size_t)g.cog * k);
				struct vnpu_tv wt = *w;
				uint32_t kk, j;

				if (!wg) {
					ret = -ENOMEM;
					goto out;
				}
				for (j = 0; j < g.cog; j++) {
					if (vnpu_run_tick(rc, k))
						break;
					for (kk = 0; kk < k; kk++)
						wg[(size_t)j * k + kk] = w->p[(int64_t)(grp * g.cog + j) * w->st[0] +
							(int64_t)(kk / g.cig / g.kw) * w->st[1] +
							(int64_t)(kk / g.cig % g.kw) * w->st[2] +
							(int64_t)(kk % g.cig) * w->st[3]];
				}
				wt.p = wg;
				if (!stopped(rc))
					i8_pack_b(&q, &(struct mat){ &wt, wg, 1, k, k, g.cog },
						  grp * g.cog);
				vnpu_run_free(rc, wg);
			}
			if (stopped(rc)) {
				ret = -ECANCELED;
				goto out;
			}
		} else if (!wdense) {
			/* f32_operand packs through vnpu_ld; give it a k-linear view. */
			ret = -EINVAL;
			goto out;
		} else {
			mb.sr = 1;
			/*
			 * A 1x1, stride 1, unpadded conv over rows of uniform
			 * stride is a GEMM on X itself: no im2col copy.
			 */
			if (g.kh == 1 && g.kw == 1 && c->attr.conv.stride_h == 1 &&
			    c->attr.conv.stride_w == 1 && g.oh == g.h && g.ow == g.w &&
			    x->st[1] == (int64_t)g.w * x->st[2] &&
			    x->st[0] == (int64_t)g.h * x->st[1] && y_dense(&g, y)) {
				struct f32_out o = { y, y->p + (int64_t)grp * g.cog * y->esize,
						     g.co, 1, grp * g.cog };

				ma = (struct mat){ x, x->p + (int64_t)grp * g.cig * x->st[3] * x->esize,
						   x->st[2], x->st[3], rows, g.cig };
				ret = f32_gemm(c, &ma, &mb, &t[2], &o, rc);
				if (ret)
					goto out;
				continue;
			}
		}
		for (r0 = 0; r0 < rows; r0 += chunk) {
			uint32_t nr = rows - r0 < chunk ? rows - r0 : chunk;

			/* im2col of one chunk: nr rows of k elements each. */
			if (vnpu_run_tick(rc, (uint64_t)nr * k)) {
				ret = -ECANCELED;
				goto out;
			}
			if (info->quantized) {
				for (i = 0; i < nr; i++) {
					uint8_t *dst = col + (size_t)i * kp;
					uint32_t kk;
					int32_t s = 0;

					im2col_row(&g, x, r0 + i, grp, dst, 1, (uint8_t)x->zp);
					for (kk = 0; kk < k; kk++) {
						dst[kk] ^= q.axor;
						s += dst[kk];
					}
					memset(dst + k, 0, kp - k);
					rowsum[i] = s;
					yrow[i] = y->p + ((int64_t)((r0 + i) / g.ow / g.oh) * y->st[0] +
							  (int64_t)((r0 + i) / g.ow % g.oh) * y->st[1] +
							  (int64_t)((r0 + i) % g.ow) * y->st[2] +
							  (int64_t)grp * g.cog * y->st[3]) * y->esize;
				}
				memset(col + (size_t)nr * kp, 0, (size_t)(vnpu_round_up(nr, VNPU_I8_MR) - nr) * kp);
				if (vnpu_i8_gemm(col, vnpu_round_up(nr, VNPU_I8_MR), &q.pb,
						 cacc, rc)) {
					ret = -ECANCELED;
					goto out;
				}
				i8_finish(&q, cacc, rowsum, nr, yrow, y->st[3], grp * g.cog);
			} else {
				bool ydense = y_dense(&g, y);
				struct f32_out o = { y, y->p + ((int64_t)r0 * g.co + grp * g.cog) * y->esize,
						     g.co, 1, grp * g.cog };

				for (i = 0; i < nr; i++)
					im2col_row(&g, x, r0 + i, grp,
						   col + (size_t)i * k * x->esize, x->esize, 0);
				xa.rank = 2;
				ma = (struct mat){ &xa, col, k, 1, nr, k };
				if (!ydense && y_rows_uniform(&g, y)) {
					/*
					 * Strided y whose pixels still step by one
					 * stride (NCHW, or a slice of a wider
					 * tensor): one GEMM for the chunk, not one
					 * per pixel.
					 */
					struct f32_out os = { y, y->p + ((int64_t)r0 * y->st[2] +
								  (int64_t)grp * g.cog * y->st[3]) * y->esize,
							      y->st[2], y->st[3], grp * g.cog };

					ret = f32_gemm(c, &ma, &mb, &t[2], &os, rc);
					if (ret)
						goto out;
					continue;
				}
				if (!ydense) {
					/* Strided y: rows are not uniform; go per row. */
					for (i = 0; i < nr; i++) {
						uint32_t rr = r0 + i;
						struct mat mr = { &xa, col + (size_t)i * k * x->esize, k, 1, 1, k };
						struct f32_out orow = { y, y->p + ((int64_t)(rr / g.ow / g.oh) * y->st[0] +
							(int64_t)(rr / g.ow % g.oh) * y->st[1] + (int64_t)(rr % g.ow) * y->st[2] +
							(int64_t)grp * g.cog * y->st[3]) * y->esize, 0, y->st[3], grp * g.cog };

						ret = f32_gemm(c, &mr, &mb, &t[2], &orow, rc);
						if (ret)
							goto out;
					}
					continue;
				}
				ret = f32_gemm(c, &ma, &mb, &t[2], &o, rc);
				if (ret)
					goto out;
			}
		}
	}
	ret = stopped(rc) ? -ECANCELED : 0;
out:
	if (have_q)
		i8_ctx_fini(&q);
	vnpu_run_free(rc, col);
	vnpu_run_free(rc, rowsum);
	vnpu_run_free(rc, cacc);
	vnpu_run_free(rc, yrow);
	return ret;
}

/* ---- Depthwise CONV2D: direct NHWC ------------------------------------- */

/*
 * One input channel per group (channel multiplier cog): per output pixel,
 * each in-bounds tap adds x[c] * w[co] for all output channels at once, a
 * loop over contiguous arrays that vectorizes, instead of im2col rows of
 * a few bytes.  Taps and products go in the reference's order, so integer
 * results are bit-exact and float sums round identically.
 */
static int eng_dwconv(const struct vnpu_cmd_compute *c,
		      const struct vnpu_op_info *info, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], co = y->dims[3];
	uint32_t cog = w->dims[0] / at->groups, taps = kh * kw;
	uint32_t b, oy, ox, ky, kx, j;
	bool q = info->quantized;
	/* Channel multiplier 1 over contiguous channels: x[c] for co = c. */
	bool xunit = cog == 1 && x->st[3] == 1;
	int64_t *xoff = vnpu_run_alloc(rc, sizeof(int64_t) * co);
	int32_t *wq = NULL, *xq = NULL, *bq = NULL;
	uint32_t *acc = NULL;
	float *wf = NULL, *xf = NULL, *facc = NULL, *bf = NULL, *sf = NULL, alpha;
	float beta = vnpu_act_beta(c);
	struct vnpu_epi *epi = NULL;
	/* Per channel: fmult, and out_zp/lo/hi, when all are ONNX requant. */
	float *epi_fm = NULL;
	int32_t *epi_i[3] = { NULL, NULL, NULL };
	uint8_t *row = NULL;
	bool fastq = false;
	int ret = -ENOMEM;

	memcpy(&alpha, &c->act_alpha, 4);
	if (!xoff)
		return -ENOMEM;
	if (q) {
		/* taps * co is W's element count: within the limits. */
		wq = vnpu_run_alloc(rc, sizeof(int32_t) * taps * co);
		xq = vnpu_run_alloc(rc, sizeof(int32_t) * co);
		bq = vnpu_run_calloc(rc, co, sizeof(int32_t));
		acc = vnpu_run_alloc(rc, sizeof(uint32_t) * co);
		epi = vnpu_run_alloc(rc, sizeof(*epi) * co);
		epi_fm = vnpu_run_alloc(rc, sizeof(float) * co);
		epi_i[0] = vnpu_run_alloc(rc, sizeof(int32_t) * co);
		epi_i[1] = vnpu_run_alloc(rc, sizeof(int32_t) * co);
		epi_i[2] = vnpu_run_alloc(rc, sizeof(int32_t) * co);
		row = vnpu_run_alloc(rc, co);
		if (!wq || !xq || !bq || !acc || !epi || !epi_fm || !epi_i[0] ||
		    !epi_i[1] || !epi_i[2] || !row)
			goto out;
		fastq = true;
	} else {
		wf = vnpu_run_alloc(rc, sizeof(float) * taps * co);
		xf = vnpu_run_alloc(rc, sizeof(float) * co);
		facc = vnpu_run_alloc(rc, sizeof(float) * co);
		if (!wf || !xf || !facc)
			goto out;
		if (bias->p) {
			/* Shifts (or the bias), then scales for a [2, CO] operand. */
			bf = vnpu_run_alloc(rc, sizeof(float) * co * (bias->rank == 2 ? 2 : 1));
			if (!bf)
				goto out;
			if (bias->rank == 2)
				sf = bf + co;
		}
	}
	for (j = 0; j < co; j++) {
		if (vnpu_run_tick(rc, taps)) {
			ret = -ECANCELED;
			goto out;
		}
		xoff[j] = (int64_t)(j / cog) * x->st[3] * x->esize;
		for (ky = 0; ky < kh; ky++)
			for (kx = 0; kx < kw; kx++) {
				const uint8_t *pw = w->p + ((int64_t)j * w->st[0] + (int64_t)ky * w->st[1] +
							    (int64_t)kx * w->st[2]) * w->esize;
				uint32_t ti = (ky * kw + kx) * co + j;

				if (q)
					wq[ti] = (w->dtype == VNPU_DT_INT8 ? (int32_t)(int8_t)*pw : *pw) -
						 vnpu_tv_zp(w, j);
				else
					wf[ti] = vnpu_ld(w, pw, 0);
			}
		if (q) {
			if (bias->p)
				memcpy(&bq[j], bias->p + (int64_t)j * bias->st[0] * 4, 4);
			vnpu_epi_init(&epi[j], c, x, w, y, j);
			epi_fm[j] = epi[j].fmult;
			epi_i[0][j] = epi[j].out_zp;
			epi_i[1][j] = epi[j].lo;
			epi_i[2][j] = epi[j].hi;
			if (epi[j].mode != VNPU_EPI_REQUANT || epi[j].round != VNPU_ROUND_ONNX)
				fastq = false;
		} else if (bias->p) {
			float one;

			vnpu_bias_at(bias, j, sf ? &sf[j] : &one, &bf[j]);
		}
	}
	for (b = 0; b < y->dims[0]; b++)
	for (oy = 0; oy < y->dims[1]; oy++)
	for (ox = 0; ox < y->dims[2]; ox++) {
		uint8_t *py = y->p + ((int64_t)b * y->st[0] + (int64_t)oy * y->st[1] +
				      (int64_t)ox * y->st[2]) * y->esize;

		/*
		 * Every tap is visited, padding included: a window of padding
		 * costs its kh * kw bounds checks even though it adds nothing.
		 */
		if (vnpu_run_tick(rc, co + (uint64_t)kh * kw)) {
			ret = -ECANCELED;
			goto out;
		}
		if (q)
			memset(acc, 0, sizeof(uint32_t) * co);
		else
			memset(facc, 0, sizeof(float) * co);
		for (ky = 0; ky < kh; ky++) {
			int64_t iy = (int64_t)oy * at->stride_h - at->pad_top +
				     (int64_t)ky * at->dilation_h;

			if (iy < 0 || iy >= x->dims[1])
				continue;
			for (kx = 0; kx < kw; kx++) {
				int64_t ix = (int64_t)ox * at->stride_w - at->pad_left +
					     (int64_t)kx * at->dilation_w;
				const uint8_t *px;

				if (ix < 0 || ix >= x->dims[2])
					continue;
				if (vnpu_run_tick(rc, co)) {
					ret = -ECANCELED;
					goto out;
				}
				px = x->p + ((int64_t)b * x->st[0] + iy * x->st[1] +
					     ix * x->st[2]) * x->esize;
				if (q) {
					const int32_t *pw = wq + (ky * kw + kx) * co;

					if (xunit && x->dtype == VNPU_DT_INT8)
						for (j = 0; j < co; j++)
							xq[j] = (int8_t)px[j] - x->zp;
					else if (xunit)
						for (j = 0; j < co; j++)
							xq[j] = px[j] - x->zp;
					else if (x->dtype == VNPU_DT_INT8)
						for (j = 0; j < co; j++)
							xq[j] = (int8_t)px[xoff[j]] - x->zp;
					else
						for (j = 0; j < co; j++)
							xq[j] = px[xoff[j]] - x->zp;
					for (j = 0; j < co; j++)
						acc[j] += (uint32_t)(xq[j] * pw[j]);
				} else {
					const float *pw = wf + (ky * kw + kx) * co;

					if (xunit && x->dtype == VNPU_DT_FP32)
						memcpy(xf, px, sizeof(float) * co);
					else if (x->dtype == VNPU_DT_FP32)
						for (j = 0; j < co; j++)
							memcpy(&xf[j], px + xoff[j], 4);
					else
						for (j = 0; j < co; j++)
							xf[j] = vnpu_ld(x, px + xoff[j], 0);
					for (j = 0; j < co; j++)
						facc[j] += xf[j] * pw[j];
				}
			}
		}
		if (fastq) {
			/* vnpu_epi_store()'s ONNX requantization, inlined. */
			uint8_t *o = y->st[3] == 1 ? py : row;

			for (j = 0; j < co; j++)
				o[j] = (uint8_t)vnpu_round_sat((float)(int32_t)(acc[j] + (uint32_t)bq[j]) *
							       epi_fm[j], epi_i[0][j], epi_i[1][j],
							       epi_i[2][j]);
			if (o == row)
				for (j = 0; j < co; j++)
					py[(int64_t)j * y->st[3]] = row[j];
			continue;
		}
		for (j = 0; j < co; j++) {
			uint8_t *p = py + (int64_t)j * y->st[3] * y->esize;

			if (q) {
				vnpu_epi_store(&epi[j], y, p, (int32_t)(acc[j] + (uint32_t)bq[j]), j);
			} else {
				float v = facc[j];

				if (sf)
					v = v * sf[j] + bf[j];
				else if (bf)
					v += bf[j];
				vnpu_st(y, p, vnpu_act_ab(c->act, alpha, beta, v),
					y->quant == VNPU_QUANT_CHANNEL ? j : 0, c->round);
			}
		}
	}
	ret = 0;
out:
	vnpu_run_free(rc, xoff);
	vnpu_run_free(rc, wq);
	vnpu_run_free(rc, xq);
	vnpu_run_free(rc, bq);
	vnpu_run_free(rc, acc);
	vnpu_run_free(rc, epi);
	vnpu_run_free(rc, epi_fm);
	vnpu_run_free(rc, epi_i[0]);
	vnpu_run_free(rc, epi_i[1]);
	vnpu_run_free(rc, epi_i[2]);
	vnpu_run_free(rc, row);
	vnpu_run_free(rc, wf);
	vnpu_run_free(rc, xf);
	vnpu_run_free(rc, facc);
	vnpu_run_free(rc, bf);
	return ret;
}

/* Depthwise channels the general kernel takes: one tap stays abortable. */
#define DW_MAX_CHANNELS	VNPU_DW_MAX_CHANNELS

/* Whether @tv's dims ..@last are one run of rows of stride st[@last]. */
static bool rows_fold(const struct vnpu_tv *tv, int last)
{
	int64_t want = tv->st[last] * tv->dims[last];
	int d;

	for (d = last - 1; d >= 0; d--) {
		if (tv->dims[d] != 1 && tv->st[d] != want)
			return false;
		want *= tv->dims[d];
	}
	return true;
}

/*
 * A float GEMM whose B has no batch (a layer's weights under a batched
 * activation: [B, M, K] x [K, N]) and whose A and Y batches continue
 * their rows in memory is one GEMM of batch x M rows: rewrite the views
 * of A and Y as such, so OpenBLAS packs B once and gets tall panels.
 */
static void gemm_fold_batches(const struct vnpu_cmd_compute *c,
			      const struct vnpu_op_info *info, struct vnpu_tv *t)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	int r = y->rank, d;
	uint64_t rows = 1;

	if (info->quantized || r < 3 || a->rank != r ||
	    (c->attr.gemm.flags & VNPU_GEMM_TRANS_A) || y->quant != VNPU_QUANT_NONE)
		return;
	for (d = 0; d < b->rank - 2; d++)
		if (b->dims[d] != 1)
			return;
	for (d = 0; d < r - 1; d++) {
		if (d < r - 2 && a->dims[d] != y->dims[d])
			return;
		rows *= y->dims[d];
	}
	if (rows > INT_MAX || !rows_fold(a, r - 2) || !rows_fold(y, r - 2))
		return;
	a->dims[0] = y->dims[0] = (uint32_t)rows;
	a->dims[1] = a->dims[r - 1];
	y->dims[1] = y->dims[r - 1];
	a->st[0] = a->st[r - 2];
	a->st[1] = a->st[r - 1];
	y->st[0] = y->st[r - 2];
	y->st[1] = y->st[r - 1];
	a->rank = y->rank = 2;
}

/* Record the kernel about to run; a later one that takes over overwrites it. */
static void took(struct vnpu_run_ctx *rc, enum vnpu_eng_path path)
{
	if (rc)
		rc->path = path;
}

/*
 * A CONV2D over bound operands, by the fastest kernel that takes it:
 * -EAGAIN, nothing written, for grouped convs with few outputs per group,
 * which gain nothing from im2col (the dispatcher then runs the reference).
 */
static int conv_bound(const struct vnpu_cmd_compute *c,
		      const struct vnpu_op_info *info, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	if (vnpu_eng_dw_ok(c, info, t)) {
		int ret;

		took(rc, VNPU_ENG_DW);
		ret = vnpu_eng_dw(c, info, t, rc);

		if (ret <= 0)
			return ret;
	}
	if (c->attr.conv.groups > 1 && t[1].dims[3] == 1 &&
	    t[3].dims[3] <= DW_MAX_CHANNELS) {
		took(rc, VNPU_ENG_DW_GENERAL);
		return eng_dwconv(c, info, t, rc);
	}
	if (c->attr.conv.groups > 1 && t[1].dims[0] / c->attr.conv.groups < 8)
		return -EAGAIN;
	if (vnpu_eng_conv_f32_ok(c, info, t, rc)) {
		took(rc, VNPU_ENG_CONV_F32);
		return vnpu_eng_conv_f32(c, info, t, rc);
	}
	if (vnpu_eng_conv_i8_ok(c, info, t, rc)) {
		int ret;

		took(rc, VNPU_ENG_CONV_I8);
		ret = vnpu_eng_conv_i8(c, info, t, rc);
		if (ret <= 0)
			return ret;
	}
	took(rc, info->quantized ? VNPU_ENG_IM2COL_I8 : VNPU_ENG_IM2COL_F32);
	return eng_conv(c, info, t, rc);
}

int vnpu_eng_conv_bound(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info, struct vnpu_tv *t,
			struct vnpu_run_ctx *rc)
{
	return conv_bound(c, info, t, rc);
}

static int engine_dispatch(const struct vnpu_cmd_compute *c,
			   const struct vnpu_op_info *info,
			   const struct vnpu_op_bind *bind, struct vnpu_run_ctx *rc)
{
	struct vnpu_tv t[VNPU_OP_SLOTS];
	bool fast = c->hdr.opcode == VNPU_OP_GEMM || c->hdr.opcode == VNPU_OP_CONV2D;
	bool small = true;
	int i;

	/* cblas takes int dimensions; huge fp16 vectors go to the reference. */
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool present = (info->present >> i) & 1;

		vnpu_tv_init(&t[i], &c->t[i], present ? bind->data[i] : NULL,
			     bind->qparams[i]);
		if (present && vnpu_tv_check_quant(&t[i]))
			return -EINVAL;
		if (present && info->span[i] > (uint64_t)INT_MAX)
			small = false;
	}
	fast = fast && small;
	if (c->hdr.opcode == VNPU_OP_COPY) {
		took(rc, VNPU_ENG_COPY);
		return vnpu_eng_copy(c, t, rc);
	}
	if (c->hdr.opcode == VNPU_OP_LUT) {
		took(rc, VNPU_ENG_LUT);
		return vnpu_eng_lut(c, t, rc);
	}
	if (vnpu_eng_elt_ok(c, info)) {
		took(rc, VNPU_ENG_ELT);
		return vnpu_eng_elt(c, t, rc);
	}
	if (vnpu_eng_pool_ok(c, t)) {
		took(rc, VNPU_ENG_POOL);
		return vnpu_eng_pool(c, t, rc);
	}
	/* Tap tables for every output row and column, unless absurdly many. */
	if (c->hdr.opcode == VNPU_OP_RESIZE &&
	    (uint64_t)t[3].dims[1] + t[3].dims[2] <= VNPU_RESIZE_TAP_TABLE_MAX) {
		took(rc, VNPU_ENG_RESIZE);
		return vnpu_eng_resize(c, t, rc);
	}
	if (c->hdr.opcode == VNPU_OP_CONV2D && !info->quantized) {
		/* The float path needs a dense W (packing goes through the ref). */
		const struct vnpu_tv *w = &t[1];

		if (!(w->st[3] == 1 && w->st[2] == w->dims[3] &&
		      w->st[1] == (int64_t)w->dims[2] * w->dims[3]))
			fast = false;
	}
	/* Its per-channel scratch (epilogues, accumulators) stays small. */
	if (c->hdr.opcode == VNPU_OP_CONV_TRANSPOSE && t[3].dims[3] <= DW_MAX_CHANNELS) {
		/* The conv kernels take int dimensions, as above. */
		if (small) {
			int ret = vnpu_eng_convt_phases(c, info, t, rc);

			if (ret != -EAGAIN) {
				took(rc, VNPU_ENG_CONVT_PHASES);
				return ret;
			}
		}
		took(rc, VNPU_ENG_CONVT);
		return vnpu_eng_convt(c, info, t, rc);
	}
	if (c->hdr.opcode == VNPU_OP_REDUCE && t[0].dtype == VNPU_DT_FP32) {
		took(rc, VNPU_ENG_REDUCE);
		return vnpu_eng_reduce(c, t, rc);
	}
	if (c->hdr.opcode == VNPU_OP_SOFTMAX && c->round == VNPU_ROUND_ORT_QLINEAR) {
		took(rc, VNPU_ENG_SOFTMAX);
		return vnpu_eng_softmax_qlinear(c, t, rc);
	}
	if (c->hdr.opcode == VNPU_OP_SOFTMAX && t[0].dtype == VNPU_DT_FP32 &&
	    t[3].dtype == VNPU_DT_FP32) {
		took(rc, VNPU_ENG_SOFTMAX);
		return vnpu_eng_softmax(c, t, rc);
	}
	/* Grouped convs the kernels below do not take: -EAGAIN. */
	if (fast && c->hdr.opcode == VNPU_OP_CONV2D) {
		int ret = conv_bound(c, info, t, rc);

		if (ret != -EAGAIN)
			return ret;
		fast = false;
	}
	if (!fast) {
		took(rc, VNPU_ENG_REF);
		return vnpu_ref_run_ctx(c, bind, rc);
	}
	gemm_fold_batches(c, info, t);
	took(rc, info->quantized ? VNPU_ENG_GEMM_I8 : VNPU_ENG_GEMM_F32);
	return eng_gemm(c, info, t, rc);
}

int vnpu_engine_run(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info,
		    const struct vnpu_op_bind *bind, struct vnpu_run_ctx *rc)
{
	int ret;

	took(rc, VNPU_ENG_NONE);
	ret = engine_dispatch(c, info, bind, rc);

	/* Whatever a path made of an abort (a failed pack, a NULL), it is one. */
	return stopped(rc) ? -ECANCELED : ret;
}

/* ---- Timing model ------------------------------------------------------ */

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t vnpu_engine_cycles(const struct vnpu_cmd_compute *c,
			    const struct vnpu_op_info *info)
{
	uint64_t bytes = 0, compute, w, passes;
	unsigned int op = c->hdr.opcode;
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++)
		bytes += info->span[i] + info->qbytes[i];
	if (op == VNPU_OP_GEMM || op == VNPU_OP_CONV2D ||
	    op == VNPU_OP_CONV_TRANSPOSE) {
		uint64_t rate = VNPU_MODEL_MACS_PER_CYCLE;
		uint8_t dt = c->t[0].dtype;

		if (!info->quantized)
			rate /= (dt == VNPU_DT_FP32 ? 4 : 2);
		compute = div_up(info->macs, rate);
		/*
		 * Weights are kept in half the on-chip buffer; when they do
		 * not fit, the activations stream once per weight slice.
		 */
		w = info->span[1];
		passes = div_up(w ? w : 1, VNPU_MODEL_SRAM_BYTES / 2);
		if (passes > 1)
			bytes += (passes - 1) * info->span[0];
	} else {
		bool sfu = op == VNPU_OP_SOFTMAX || op == VNPU_OP_LAYERNORM ||
			   (c->act >= VNPU_ACT_SIGMOID && c->act <= VNPU_ACT_GELU) ||
			   (c->act >= VNPU_ACT_SQRT && c->act <= VNPU_ACT_LOG) ||
			   (op == VNPU_OP_ELTWISE &&
			    (c->attr.eltwise.kind == VNPU_ELTWISE_DIV ||
			     c->attr.eltwise.kind == VNPU_ELTWISE_POW));

		compute = div_up(info->macs, sfu ? VNPU_MODEL_SFU_ELEMS_PER_CYCLE :
				 VNPU_MODEL_VECTOR_ELEMS_PER_CYCLE);
	}
	bytes = div_up(bytes, VNPU_MODEL_DRAM_BYTES_PER_CYCLE);
	return compute > bytes ? compute : bytes;
}
