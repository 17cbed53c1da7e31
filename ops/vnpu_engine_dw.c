// SPDX-License-Identifier: MIT
/*
 * Depthwise CONV2D of the device engine: one input channel per group and
 * a channel multiplier of 1, channels dense in X and Y (NHWC).
 *
 * Per output pixel the taps are walked in the reference's order (ky, then
 * kx) and each tap is a multiply-add over all channels at once, so the
 * vectors run along C.  Padding is resolved outside the inner loops: per
 * output row the in-bounds ky range, per output column the in-bounds kx
 * range (both precomputed), so the channel loops never test a border.
 * Weights are repacked once per command to [tap][C] (fp32, or int32 with
 * the weight zero point already subtracted), and the bias, activation and
 * requantization run as a vectorized epilogue per pixel while its sums are
 * still in L1.
 *
 * Kernels: AVX-512 and AVX2 (intrinsics: several pixels per call, the
 * epilogue fused, channel tails masked; int8 on AVX2 reads X's rows
 * staged once as int16 tap pairs, padding included, so every column is
 * interior: kx pairs at stride 1 for kernels 3 wide or more, else ky
 * pairs), and a portable C body for any other host.  The choice follows
 * the int8 GEMM kernel's configuration (see vnpu_i8_kernel_resolve())
 * so tests can run every variant on one host.  Integer results are
 * bit-exact (sums mod 2^32 are order independent); the vector kernels
 * sum floats with fused multiply-adds, in the reference's tap order,
 * within ops.rst's tolerance.
 */
#include <errno.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DW_X86 1
#endif

#include "vnpu_engine.h"

/* One output pixel: which taps are in bounds and where they read. */
struct dw_px {
	const uint8_t *xb;	/* X at (b, 0, 0, 0) */
	const uint8_t *xend;	/* past X's last byte */
	int64_t xs1, xs2;	/* byte strides of H and W */
	uint32_t c, kw;
	int64_t iy0, ix0;	/* input row/column of tap (0, 0) */
	int64_t dh, dw;		/* dilations */
	uint32_t ky0, ky1, kx0, kx1;	/* in-bounds taps [ky0, ky1) x [kx0, kx1) */
	const void *w;		/* [kh * kw][c]: float, or int32 minus zero point */
	/*
	 * int8 on AVX2: [kh][(kw + 1) / 2][c][2] kx pairs, or with ky pairs
	 * staged (row_i8_ypair()) [kp][kw][c][2] ky pairs
	 */
	const int16_t *w2;
	/* int8 on AVX2: staged X row of each ky, or row pair of each of kp */
	const int16_t *const *il;
	uint32_t kp;		/* row_i8_ypair(): (kh + 1) / 2 */
	int32_t zx;		/* X zero point (int8) */
	bool xs8;		/* X is int8, else uint8 (int8 path) */
	/* Columns [ox0, ow) of an output row: */
	uint32_t ox0, ow;
	int64_t sw, pl;		/* ix0 of column ox is ox * sw - pl */
	const uint32_t *kx0s, *kx1s;	/* [ow] in-bounds kx range per column */
	uint32_t full0, full1;	/* columns [full0, full1) have every kx tap */
	/* Epilogue fused into the AVX-512 kernels (fused == true): */
	bool fused;
	const float *bv, *sv;	/* fp32: bias or shift, scale */
	unsigned int act;	/* fp32: NONE, RELU, RELU6 or LEAKY_RELU */
	float alpha;
	const int32_t *bq, *zp;	/* int8: bias, output zero point */
	const float *fm, *flo, *fhi;	/* int8: multiplier, clamp minus zp */
	uint8_t *yq;		/* int8: output row, pixel stride ystr bytes */
	int64_t ystr;
};

static const uint8_t *tap_ptr(const struct dw_px *p, uint32_t ky, uint32_t kx)
{
	return p->xb + (p->iy0 + (int64_t)ky * p->dh) * p->xs1 +
	       (p->ix0 + (int64_t)kx * p->dw) * p->xs2;
}

/* ---- portable bodies ------------------------------------------------------ */

#define DW_CB	64	/* channels per accumulator block */

static inline __attribute__((always_inline))
void px_f32_body(const struct dw_px *p, float *out)
{
	const float *w = p->w;
	uint32_t c0, ky, kx, j;

	for (c0 = 0; c0 < p->c; c0 += DW_CB) {
		uint32_t n = p->c - c0 < DW_CB ? p->c - c0 : DW_CB;
		float acc[DW_CB];

		for (j = 0; j < n; j++)
			acc[j] = 0.0f;
		for (ky = p->ky0; ky < p->ky1; ky++)
			for (kx = p->kx0; kx < p->kx1; kx++) {
				const float *x = (const float *)tap_ptr(p, ky, kx) + c0;
				const float *wt = w + (size_t)(ky * p->kw + kx) * p->c + c0;

				for (j = 0; j < n; j++)
					acc[j] += x[j] * wt[j];
			}
		for (j = 0; j < n; j++)
			out[c0 + j] = acc[j];
	}
}

static inline __attribute__((always_inline))
void px_i8_body(const struct dw_px *p, int32_t *out)
{
	const int32_t *w = p->w;
	uint32_t c0, ky, kx, j;

	for (c0 = 0; c0 < p->c; c0 += DW_CB) {
		uint32_t n = p->c - c0 < DW_CB ? p->c - c0 : DW_CB;
		uint32_t acc[DW_CB];

		for (j = 0; j < n; j++)
			acc[j] = 0;
		for (ky = p->ky0; ky < p->ky1; ky++)
			for (kx = p->kx0; kx < p->kx1; kx++) {
				const uint8_t *x = tap_ptr(p, ky, kx) + c0;
				const int32_t *wt = w + (size_t)(ky * p->kw + kx) * p->c + c0;

				if (p->xs8)
					for (j = 0; j < n; j++)
						acc[j] += (uint32_t)(((int32_t)(int8_t)x[j] - p->zx) * wt[j]);
				else
					for (j = 0; j < n; j++)
						acc[j] += (uint32_t)(((int32_t)x[j] - p->zx) * wt[j]);
			}
		for (j = 0; j < n; j++)
			out[c0 + j] = (int32_t)acc[j];
	}
}

/* A row of output pixels, @out[ox * @ostr + channel]. */
#define ROW_BODY(body, type) do {					\
	struct dw_px q = *p;						\
	uint32_t ox;							\
									\
	for (ox = p->ox0; ox < p->ow; ox++) {				\
		q.ix0 = (int64_t)ox * p->sw - p->pl;			\
		q.kx0 = p->kx0s[ox];					\
		q.kx1 = p->kx1s[ox];					\
		body(&q, (type *)out + ox * ostr);			\
	}								\
} while (0)

static void row_f32_generic(const struct dw_px *p, float *out, size_t ostr)
{
	ROW_BODY(px_f32_body, float);
}

static void row_i8_generic(const struct dw_px *p, int32_t *out, size_t ostr)
{
	ROW_BODY(px_i8_body, int32_t);
}

#ifdef DW_X86
/* ---- AVX2 ---------------------------------------------------------------- */

/*
 * The AVX-512 kernels' structure in 8-lane registers: an interior run of
 * columns goes 8 (then 4) output pixels per call, so each weight vector
 * loaded feeds 8 independent accumulator chains (enough to cover the FMA
 * latency, where one pixel's chain is bound by it), and the epilogue runs
 * on the sums while they are still in registers.  Channels go 8 at a
 * time; a last block of fewer reads and writes only its lanes.
 */
#define AVX2_TARGET __attribute__((target("avx2,fma")))

/* Lanes [0, n) of 8 set. */
AVX2_TARGET
static inline __m256i lanes8(uint32_t n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
				  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* 8 floats, or the @m lanes of a tail (the others 0, never touched). */
AVX2_TARGET
static inline __m256 ldf8(const float *x, const bool tail, __m256i m)
{
	return tail ? _mm256_maskload_ps(x, m) : _mm256_loadu_ps(x);
}

AVX2_TARGET
static inline __m256i ldi8(const int32_t *x, const bool tail, __m256i m)
{
	return tail ? _mm256_maskload_epi32(x, m) : _mm256_loadu_si256((const __m256i *)x);
}

/*
 * 8 bytes of X.  A tail of @n reads the next pixel's first channels too
 * (lanes nothing stores), except at the end of X: only its @n there.
 */
AVX2_TARGET
static inline __m128i ldb8(const struct dw_px *p, const uint8_t *x, const bool tail,
			   uint32_t n)
{
	uint64_t v = 0;

	if (!tail || p->xend - x >= 8)
		return _mm_loadl_epi64((const __m128i *)x);
	memcpy(&v, x, n);
	return _mm_cvtsi64_si128((long long)v);
}

/*
 * An epilogue's per-channel operands for 8 channels, loaded once for all
 * the pixels of a call (a store to Y could alias them, so the compiler
 * would reload them for each).
 */
struct epi8 {
	__m256 sv, bv;		/* fp32 */
	__m256i bq, zp;		/* int8 */
	__m256 fm, flo, fhi;
};

AVX2_TARGET
static inline void epi8_load_f32(const struct dw_px *p, uint32_t c0, const bool tail,
				 __m256i m, struct epi8 *k)
{
	/* v * 1 + -0 is v, +-0 and NaN included: one form for every bias. */
	k->sv = p->sv ? ldf8(p->sv + c0, tail, m) : _mm256_set1_ps(1.0f);
	k->bv = p->bv ? ldf8(p->bv + c0, tail, m) : _mm256_set1_ps(-0.0f);
}

AVX2_TARGET
static inline void epi8_load_i8(const struct dw_px *p, uint32_t c0, const bool tail,
				__m256i m, struct epi8 *k)
{
	k->bq = ldi8(p->bq + c0, tail, m);
	k->zp = ldi8(p->zp + c0, tail, m);
	k->fm = ldf8(p->fm + c0, tail, m);
	k->flo = ldf8(p->flo + c0, tail, m);
	k->fhi = ldf8(p->fhi + c0, tail, m);
}

/* f32_epi_v() on @np pixels' sums, the activation chosen once for all. */
AVX2_TARGET
static inline __attribute__((always_inline))
void f32_epi_v8(const struct dw_px *p, __m256 *a, const int np, const struct epi8 *k)
{
	const __m256 zero = _mm256_setzero_ps(), six = _mm256_set1_ps(6.0f);
	const __m256 alpha = _mm256_set1_ps(p->alpha);
	int i;

	for (i = 0; i < np; i++)
		a[i] = _mm256_add_ps(_mm256_mul_ps(a[i], k->sv), k->bv);
	switch (p->act) {
	case VNPU_ACT_RELU:
		for (i = 0; i < np; i++)
			a[i] = _mm256_max_ps(a[i], zero);
		break;
	case VNPU_ACT_RELU6:
		for (i = 0; i < np; i++)
			a[i] = _mm256_min_ps(_mm256_max_ps(a[i], zero), six);
		break;
	case VNPU_ACT_LEAKY_RELU:
		for (i = 0; i < np; i++)
			a[i] = _mm256_blendv_ps(_mm256_mul_ps(a[i], alpha), a[i],
						_mm256_cmp_ps(a[i], zero, _CMP_GE_OQ));
		break;
	default:
		break;
	}
}

/*
 * Channels [@c0, @c0 + 8) (fewer in a @tail) of @np output pixels from
 * column @ox, taps kx in [@kx0, @kx1), summed in the reference's tap
 * order with one FMA each.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void f32_blk8(const struct dw_px *p, uint32_t ox, const int np, uint32_t kyn,
	      uint32_t kx0, uint32_t kx1, float *out, size_t ostr, uint32_t c0,
	      const bool tail)
{
	/* Pointers stepped, not recomputed: addressing was half the work. */
	int64_t xs2 = p->xs2, step = p->sw * xs2, kxstep = p->dw * xs2;
	int64_t kystep = p->dh * p->xs1, ix0 = (int64_t)ox * p->sw - p->pl;
	uint32_t c = p->c, kw = p->kw, ky, kx;
	const float *wr = (const float *)p->w + (size_t)p->ky0 * kw * c + c0;
	const uint8_t *xr = p->xb + (int64_t)c0 * 4 + ix0 * xs2 +
			    (p->iy0 + (int64_t)p->ky0 * p->dh) * p->xs1;
	__m256i m = lanes8(c - c0);
	float *o = out + ox * ostr + c0;
	__m256 a[8];
	struct epi8 k;
	int i;

	for (i = 0; i < np; i++)
		a[i] = _mm256_setzero_ps();
	for (ky = 0; ky < kyn; ky++, xr += kystep, wr += (size_t)kw * c) {
		const uint8_t *xp = xr + kx0 * kxstep;

		for (kx = kx0; kx < kx1; kx++, xp += kxstep) {
			__m256 wv = ldf8(wr + (size_t)kx * c, tail, m);

			for (i = 0; i < np; i++)
				a[i] = _mm256_fmadd_ps(ldf8((const float *)(xp + i * step), tail, m),
						       wv, a[i]);
		}
	}
	if (p->fused) {
		epi8_load_f32(p, c0, tail, m, &k);
		f32_epi_v8(p, a, np, &k);
	}
	for (i = 0; i < np; i++, o += ostr) {
		if (tail)
			_mm256_maskstore_ps(o, m, a[i]);
		else
			_mm256_storeu_ps(o, a[i]);
	}
}

/*
 * One pixel (a border column, or one left over), channels [@c0, @c0 +
 * 32): four 8-channel FMA chains side by side, each in tap order.  One
 * chain alone waits out the FMA latency at every tap: on 8x8 and 16x16
 * images, where half the columns go one at a time, those pixels took
 * most of the time.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void f32_col32(const struct dw_px *p, uint32_t ox, uint32_t kyn, uint32_t kx0,
	       uint32_t kx1, float *out, uint32_t c0)
{
	int64_t kxstep = p->dw * p->xs2, kystep = p->dh * p->xs1;
	int64_t ix0 = (int64_t)ox * p->sw - p->pl;
	uint32_t c = p->c, kw = p->kw, ky, kx;
	const float *wr = (const float *)p->w + (size_t)p->ky0 * kw * c + c0;
	const uint8_t *xr = p->xb + (int64_t)c0 * 4 + ix0 * p->xs2 +
			    (p->iy0 + (int64_t)p->ky0 * p->dh) * p->xs1;
	__m256i m = lanes8(8);
	__m256 a[4];
	struct epi8 k;
	int v;

	for (v = 0; v < 4; v++)
		a[v] = _mm256_setzero_ps();
	for (ky = 0; ky < kyn; ky++, xr += kystep, wr += (size_t)kw * c) {
		const uint8_t *xp = xr + kx0 * kxstep;

		for (kx = kx0; kx < kx1; kx++, xp += kxstep)
			for (v = 0; v < 4; v++)
				a[v] = _mm256_fmadd_ps(_mm256_loadu_ps((const float *)xp + 8 * v),
						       _mm256_loadu_ps(wr + (size_t)kx * c + 8 * v),
						       a[v]);
	}
	for (v = 0; v < 4; v++) {
		if (p->fused) {
			epi8_load_f32(p, c0 + 8 * v, false, m, &k);
			f32_epi_v8(p, &a[v], 1, &k);
		}
		_mm256_storeu_ps(out + c0 + 8 * v, a[v]);
	}
}

AVX2_TARGET
static inline __attribute__((always_inline))
void f32_pix8(const struct dw_px *p, uint32_t ox, const int np, uint32_t kyn,
	      uint32_t kx0, uint32_t kx1, float *out, size_t ostr)
{
	uint32_t c0 = 0;

	if (np == 1)
		for (; c0 + 32 <= p->c; c0 += 32)
			f32_col32(p, ox, kyn, kx0, kx1, out + ox * ostr, c0);
	for (; c0 + 8 <= p->c; c0 += 8)
		f32_blk8(p, ox, np, kyn, kx0, kx1, out, ostr, c0, false);
	/*
	 * A tail of 8 or more channels: the last 8 again, unmasked (the
	 * overlap recomputes the same bits).  vmaskmovps loads and stores
	 * cost several times a plain access on AMD cores.
	 */
	if (c0 < p->c && p->c >= 8)
		f32_blk8(p, ox, np, kyn, kx0, kx1, out, ostr, p->c - 8, false);
	else if (c0 < p->c)
		f32_blk8(p, ox, np, kyn, kx0, kx1, out, ostr, c0, true);
}

/*
 * Interior columns 8, then 4, at a time, with every kx tap (@kw: a
 * constant for the common widths, so the tap loop unrolls); border
 * columns one at a time.
 */
#define ROW_AVX2(pix, kw, ...) do {					\
	uint32_t ox = p->ox0;						\
									\
	while (ox < p->ow) {						\
		if (ox >= p->full0 && ox + 8 <= p->full1 && ox + 8 <= p->ow) { \
			pix(p, ox, 8, __VA_ARGS__ 0, kw, out, ostr);	\
			ox += 8;					\
		} else if (ox >= p->full0 && ox + 4 <= p->full1 &&	\
			   ox + 4 <= p->ow) {				\
			pix(p, ox, 4, __VA_ARGS__ 0, kw, out, ostr);	\
			ox += 4;					\
		} else {						\
			pix(p, ox, 1, __VA_ARGS__ p->kx0s[ox],		\
			    p->kx1s[ox], out, ostr);			\
			ox++;						\
		}							\
	}								\
} while (0)

AVX2_TARGET
static void row_f32_avx2(const struct dw_px *p, float *out, size_t ostr)
{
	uint32_t kyn = p->ky1 - p->ky0;

	/* A 3x3 kernel's rows with all three taps in bounds: both loops unroll. */
	if (p->kw == 3 && kyn == 3)
		ROW_AVX2(f32_pix8, 3, 3,);
	else if (p->kw == 3)
		ROW_AVX2(f32_pix8, 3, kyn,);
	else if (p->kw == 5)
		ROW_AVX2(f32_pix8, 5, kyn,);
	else
		ROW_AVX2(f32_pix8, p->kw, kyn,);
}

/*
 * epi_i8() on 8 sums, as i8_epi_store() does it: values end in
 * [lo, hi], within a byte, so the low byte of each lane is the result
 * for either output type.
 */
AVX2_TARGET
static inline void i8_epi_store8(const struct dw_px *p, __m256i acc, uint32_t c0,
				 const bool tail, const struct epi8 *k, uint8_t *y)
{
	__m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(acc, k->bq));
	__m256i r;
	__m128i b;

	f = _mm256_round_ps(_mm256_mul_ps(f, k->fm),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	f = _mm256_and_ps(f, _mm256_cmp_ps(f, f, _CMP_ORD_Q));
	f = _mm256_max_ps(f, k->flo);
	f = _mm256_min_ps(f, k->fhi);
	r = _mm256_add_epi32(_mm256_cvttps_epi32(f), k->zp);
	r = _mm256_and_si256(r, _mm256_set1_epi32(0xff));
	b = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
	b = _mm_packus_epi16(b, b);
	if (tail) {
		uint64_t v = (uint64_t)_mm_cvtsi128_si64(b);

		memcpy(y + c0, &v, p->c - c0);
	} else {
		_mm_storel_epi64((__m128i *)(y + c0), b);
	}
}

/* The int8 kernels always fuse the requantization: Y, not the sums. */
AVX2_TARGET
static inline void i8_out8(const struct dw_px *p, __m256i acc, uint32_t ox,
			   int32_t *out, size_t ostr, uint32_t c0, const bool tail,
			   __m256i m, const struct epi8 *k)
{
	(void)out;
	(void)ostr;
	(void)m;
	i8_epi_store8(p, acc, c0, tail, k, p->yq + (int64_t)ox * p->ystr);
}

/*
 * Channels [@c0, @c0 + 8) of @np output pixels with every kx tap in
 * bounds.  The taps of a kernel row go in pairs (kx, kx + 1): one
 * vpmaddwd multiplies 8 channels x 2 taps of X, widened to int16, by the
 * pairs of w - zw (p->w2; an odd last tap pairs with a zero weight and
 * a zero X).  |x| <= 255 and |w - zw| <= 255, so each pair sum is exact
 * in int32; sum (x - zx) * w = sum x * w - zx * sum w (mod 2^32), the
 * second term once per call for all pixels.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void i8_pairs8(const struct dw_px *p, uint32_t ox, const int np, const bool s8,
	       uint32_t kw, int32_t *out, size_t ostr, uint32_t c0, const bool tail)
{
	int64_t xs2 = p->xs2, step = p->sw * xs2, ix0 = (int64_t)ox * p->sw - p->pl;
	int64_t kxs = p->dw * xs2;
	const int32_t *w = p->w;
	uint32_t c = p->c, kp = (kw + 1) / 2, ky, kx, pr, n = c - c0;
	__m256i m = lanes8(n), cs = _mm256_setzero_si256(), a[8];
	struct epi8 k;
	int i;

	for (ky = p->ky0; ky < p->ky1; ky++)
		for (kx = 0; kx < kw; kx++)
			cs = _mm256_add_epi32(cs, ldi8(w + (size_t)(ky * kw + kx) * c + c0, tail, m));
	cs = _mm256_mullo_epi32(cs, _mm256_set1_epi32(-p->zx));
	for (i = 0; i < np; i++)
		a[i] = cs;
	for (ky = p->ky0; ky < p->ky1; ky++) {
		const uint8_t *xr = p->xb + c0 + (p->iy0 + (int64_t)ky * p->dh) * p->xs1 +
				    ix0 * xs2;

		for (pr = 0; pr < kp; pr++) {
			/* Past C in a tail: lanes no store reads. */
			__m256i wv = _mm256_loadu_si256((const __m256i *)
				(p->w2 + ((size_t)(ky * kp + pr) * c + c0) * 2));
			const uint8_t *x0 = xr + 2 * pr * kxs;
			bool odd = 2 * pr + 1 == kw;

			for (i = 0; i < np; i++) {
				__m128i il = _mm_unpacklo_epi8(ldb8(p, x0 + i * step, tail, n),
					odd ? _mm_setzero_si128() : ldb8(p, x0 + kxs + i * step, tail, n));
				__m256i e = s8 ? _mm256_cvtepi8_epi16(il) : _mm256_cvtepu8_epi16(il);

				a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(e, wv));
			}
		}
	}
	epi8_load_i8(p, c0, tail, m, &k);
	for (i = 0; i < np; i++)
		i8_out8(p, a[i], ox + i, out, ostr, c0, tail, m, &k);
}

/* A border column: the in-bounds taps one at a time, (x - zx) * w in int32. */
AVX2_TARGET
static inline __attribute__((always_inline))
void i8_taps8(const struct dw_px *p, uint32_t ox, const bool s8, uint32_t kx0,
	      uint32_t kx1, int32_t *out, size_t ostr, uint32_t c0, const bool tail)
{
	int64_t ix0 = (int64_t)ox * p->sw - p->pl;
	const int32_t *w = p->w;
	uint32_t c = p->c, ky, kx, n = c - c0;
	__m256i m = lanes8(n), a = _mm256_setzero_si256(), zx = _mm256_set1_epi32(p->zx);
	struct epi8 k;

	for (ky = p->ky0; ky < p->ky1; ky++) {
		const uint8_t *xr = p->xb + c0 + (p->iy0 + (int64_t)ky * p->dh) * p->xs1 +
				    ix0 * p->xs2;

		for (kx = kx0; kx < kx1; kx++) {
			__m128i b = ldb8(p, xr + (int64_t)kx * p->dw * p->xs2, tail, n);
			__m256i e = s8 ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);

			a = _mm256_add_epi32(a, _mm256_mullo_epi32(_mm256_sub_epi32(e, zx),
				ldi8(w + (size_t)(ky * p->kw + kx) * c + c0, tail, m)));
		}
	}
	epi8_load_i8(p, c0, tail, m, &k);
	i8_out8(p, a, ox, out, ostr, c0, tail, m, &k);
}

AVX2_TARGET
static inline __attribute__((always_inline))
void i8_pix8(const struct dw_px *p, uint32_t ox, const int np, const bool s8,
	     uint32_t kx0, uint32_t kx1, int32_t *out, size_t ostr)
{
	bool full = np > 1 || (kx0 == 0 && kx1 == p->kw);
	uint32_t c0;

	for (c0 = 0; c0 + 8 <= p->c; c0 += 8) {
		if (full)
			i8_pairs8(p, ox, np, s8, kx1, out, ostr, c0, false);
		else
			i8_taps8(p, ox, s8, kx0, kx1, out, ostr, c0, false);
	}
	if (c0 < p->c) {
		if (full)
			i8_pairs8(p, ox, np, s8, kx1, out, ostr, c0, true);
		else
			i8_taps8(p, ox, s8, kx0, kx1, out, ostr, c0, true);
	}
}

AVX2_TARGET
static void row_i8_avx2(const struct dw_px *p, int32_t *out, size_t ostr)
{
	if (p->kw == 3 && p->xs8)
		ROW_AVX2(i8_pix8, 3, true,);
	else if (p->kw == 3)
		ROW_AVX2(i8_pix8, 3, false,);
	else if (p->xs8)
		ROW_AVX2(i8_pix8, p->kw, true,);
	else
		ROW_AVX2(i8_pix8, p->kw, false,);
}

/*
 * int8 with X's rows staged (stage_row_avx2()): the in-bounds and the
 * padding columns alike, each 8 channels x 2 taps of a pixel one
 * vpmaddwd of a load and a weight pair, no widening in the loop.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void i8_staged8(const struct dw_px *p, uint32_t ox, const int np, uint32_t kw,
		int32_t *out, size_t ostr, uint32_t c0, const bool tail)
{
	int64_t col = (int64_t)p->c * 2, step = p->sw * col, pair = 2 * p->dw * col;
	uint32_t c = p->c, kp = (kw + 1) / 2, ky, pr;
	__m256i m = lanes8(c - c0), a[8];
	struct epi8 k;
	int i;

	for (i = 0; i < np; i++)
		a[i] = _mm256_setzero_si256();
	for (ky = p->ky0; ky < p->ky1; ky++) {
		const int16_t *xr = p->il[ky] + (int64_t)ox * step + 2 * c0;
		const int16_t *wr = p->w2 + ((size_t)ky * kp * c + c0) * 2;

		for (pr = 0; pr < kp; pr++) {
			/* Past C in a tail: lanes no store reads. */
			__m256i wv = _mm256_loadu_si256((const __m256i *)(wr + (size_t)pr * c * 2));
			const int16_t *xp = xr + pr * pair;

			for (i = 0; i < np; i++)
				a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(wv,
					_mm256_loadu_si256((const __m256i *)(xp + i * step))));
		}
	}
	epi8_load_i8(p, c0, tail, m, &k);
	for (i = 0; i < np; i++)
		i8_out8(p, a[i], ox + i, out, ostr, c0, tail, m, &k);
}

AVX2_TARGET
static inline __attribute__((always_inline))
void i8_staged_pix(const struct dw_px *p, uint32_t ox, const int np, uint32_t kw,
		   int32_t *out, size_t ostr)
{
	uint32_t c0;

	for (c0 = 0; c0 + 8 <= p->c; c0 += 8)
		i8_staged8(p, ox, np, kw, out, ostr, c0, false);
	if (c0 < p->c)
		i8_staged8(p, ox, np, kw, out, ostr, c0, true);
}

/* Every column alike: 8, then 4, then 1 at a time. */
#define ROW_STAGED(kw) do {						\
	uint32_t ox = p->ox0;						\
									\
	for (; ox + 8 <= p->ow; ox += 8)				\
		i8_staged_pix(p, ox, 8, kw, out, ostr);			\
	for (; ox + 4 <= p->ow; ox += 4)				\
		i8_staged_pix(p, ox, 4, kw, out, ostr);			\
	for (; ox < p->ow; ox++)					\
		i8_staged_pix(p, ox, 1, kw, out, ostr);			\
} while (0)

AVX2_TARGET
static void row_i8_staged(const struct dw_px *p, int32_t *out, size_t ostr)
{
	if (p->kw == 3)
		ROW_STAGED(3);
	else
		ROW_STAGED(p->kw);
}

/*
 * X row @xrow for row_i8_staged(): @n columns j of the padded row, each
 * the int16 pairs (x[j] - zx, x[j + dw] - zx) of its channels, a
 * padding column's x - zx being 0 (it adds nothing, as the reference
 * skips it).  |x - zx| <= 255, so each pair sum of products with w - zw
 * is exact in int32.  Each row is staged once and read by every output
 * row whose kernel covers it.
 */
/* Columns @xa and @xb (NULL: padding) as one staged column @d. */
AVX2_TARGET
static inline __attribute__((always_inline))
void stage_col(const struct dw_px *p, const uint8_t *xa, const uint8_t *xb,
	       int16_t *d, const bool s8)
{
	const __m256i zx = _mm256_set1_epi16((short)p->zx);
	const uint8_t *x[2] = { xa, xb };
	uint32_t c = p->c, c0 = 0, k;

	/*
	 * 16 channels: vpunpck[lh]wd pair them within 128-bit lanes, so
	 * (0-3, 8-11) and (4-7, 12-15), put back in order by lane moves.
	 */
	for (; xa && xb && c0 + 16 <= c; c0 += 16) {
		__m128i ba = _mm_loadu_si128((const __m128i *)(xa + c0));
		__m128i bb = _mm_loadu_si128((const __m128i *)(xb + c0));
		__m256i va = _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(ba) :
					      _mm256_cvtepu8_epi16(ba), zx);
		__m256i vb = _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(bb) :
					      _mm256_cvtepu8_epi16(bb), zx);
		__m256i lo = _mm256_unpacklo_epi16(va, vb), hi = _mm256_unpackhi_epi16(va, vb);

		_mm256_storeu_si256((__m256i *)(d + 2 * c0), _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_storeu_si256((__m256i *)(d + 2 * c0 + 16),
				    _mm256_permute2x128_si256(lo, hi, 0x31));
	}
	for (; c0 < c; c0 += 8) {
		bool tail = c - c0 < 8;
		__m128i v[2];

		for (k = 0; k < 2; k++) {
			__m128i b;

			if (!x[k]) {
				v[k] = _mm_setzero_si128();
				continue;
			}
			b = ldb8(p, x[k] + c0, tail, c - c0);
			v[k] = _mm_sub_epi16(s8 ? _mm_cvtepi8_epi16(b) : _mm_cvtepu8_epi16(b),
					     _mm256_castsi256_si128(zx));
		}
		/* A tail's lanes past C run into the next column or the row's slack. */
		_mm_storeu_si128((__m128i *)(d + 2 * c0), _mm_unpacklo_epi16(v[0], v[1]));
		_mm_storeu_si128((__m128i *)(d + 2 * c0 + 8), _mm_unpackhi_epi16(v[0], v[1]));
	}
}

/*
 * @n bytes of two runs of X (NULL: padding) into the int16 pairs (a[i]
 * - zx, b[i] - zx) at @d: a dense row's columns are one run, so the
 * pairs go 16 at a time across pixel boundaries, where stage_col()'s
 * column at a time cost as much as the products it fed at 24 channels.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void stage_run(const uint8_t *a, const uint8_t *b, size_t n, int32_t zx, int16_t *d,
	       const bool s8)
{
	const __m256i z = _mm256_set1_epi16((short)zx);
	size_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		__m256i va = _mm256_setzero_si256(), vb = _mm256_setzero_si256(), lo, hi;

		if (a)
			va = _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(_mm_loadu_si128(
				(const __m128i *)(a + i))) : _mm256_cvtepu8_epi16(
				_mm_loadu_si128((const __m128i *)(a + i))), z);
		if (b)
			vb = _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(_mm_loadu_si128(
				(const __m128i *)(b + i))) : _mm256_cvtepu8_epi16(
				_mm_loadu_si128((const __m128i *)(b + i))), z);
		lo = _mm256_unpacklo_epi16(va, vb);
		hi = _mm256_unpackhi_epi16(va, vb);
		_mm256_storeu_si256((__m256i *)(d + 2 * i), _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_storeu_si256((__m256i *)(d + 2 * i + 16),
				    _mm256_permute2x128_si256(lo, hi, 0x31));
	}
	for (; i < n; i++) {
		d[2 * i] = (int16_t)(a ? (s8 ? (int8_t)a[i] : a[i]) - zx : 0);
		d[2 * i + 1] = (int16_t)(b ? (s8 ? (int8_t)b[i] : b[i]) - zx : 0);
	}
}

AVX2_TARGET
static inline __attribute__((always_inline))
void stage_row_t(const struct dw_px *p, const uint8_t *xrow, uint32_t w, uint32_t n,
		 int16_t *dst, const bool s8)
{
	size_t col = (size_t)p->c * 2;
	uint32_t j, k;

	/*
	 * Dense X: runs of columns whose two taps are alike in or out of
	 * bounds, each staged as two runs of X dw columns apart.
	 */
#define IN_A(j) ((int64_t)(j) - p->pl >= 0 && (int64_t)(j) - p->pl < w)
#define IN_B(j) ((int64_t)(j) - p->pl + p->dw >= 0 && (int64_t)(j) - p->pl + p->dw < w)
	for (j = 0; p->xs2 == p->c && j < n; j = k) {
		bool a = IN_A(j), b = IN_B(j);

		for (k = j + 1; k < n && IN_A(k) == a && IN_B(k) == b; k++)
			;
		stage_run(a ? xrow + ((int64_t)j - p->pl) * p->c : NULL,
			  b ? xrow + ((int64_t)j - p->pl + p->dw) * p->c : NULL,
			  (size_t)(k - j) * p->c, p->zx, dst + j * col, s8);
	}
#undef IN_A
#undef IN_B
	for (j = 0; p->xs2 != p->c && j < n; j++) {
		int64_t ia = (int64_t)j - p->pl, ib = ia + p->dw;

		stage_col(p, ia >= 0 && ia < w ? xrow + ia * p->xs2 : NULL,
			  ib >= 0 && ib < w ? xrow + ib * p->xs2 : NULL,
			  dst + (size_t)j * p->c * 2, s8);
	}
}

/*
 * X row @xrow for row_i8_staged(): @n columns j of the padded row, each
 * the int16 pairs (x[j] - zx, x[j + dw] - zx) of its channels, a
 * padding column's x - zx being 0 (it adds nothing, as the reference
 * skips it).  |x - zx| <= 255, so each pair sum of products with w - zw
 * is exact in int32.  Each row is staged once and read by every output
 * row whose kernel covers it.
 */
AVX2_TARGET
static void stage_row_avx2(const struct dw_px *p, const uint8_t *xrow, uint32_t w,
			   uint32_t n, int16_t *dst)
{
	if (p->xs8)
		stage_row_t(p, xrow, w, n, dst, true);
	else
		stage_row_t(p, xrow, w, n, dst, false);
}

/*
 * int8 at any stride (row_i8_ypair()): kernel rows go in pairs (ky,
 * ky + 1), an odd last row paired with a zero weight.  Each staged row
 * pair holds, per column of the padded row, the int16 pairs (x[iy] -
 * zx, x[iy + dh] - zx) of its channels, padding rows and columns 0, so
 * every output pixel is interior: one vpmaddwd per 8 channels x 2 taps,
 * whatever the strides.  Where row_i8_staged()'s kx pairs need stride 1
 * (at stride 2 every other staged pair is never read), ky pairs waste
 * nothing: a staged column feeds ceil(kw / sw) taps of each output row
 * whose kernel covers its rows.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void i8_ypair8(const struct dw_px *p, uint32_t ox, const int np, uint32_t kw,
	       int32_t *out, size_t ostr, uint32_t c0, const bool tail)
{
	int64_t col = (int64_t)p->c * 2, step = p->sw * col, kxs = p->dw * col;
	uint32_t c = p->c, kp = p->kp, pr, kx;
	__m256i m = lanes8(c - c0), a[8];
	struct epi8 k;
	int i;

	for (i = 0; i < np; i++)
		a[i] = _mm256_setzero_si256();
	for (pr = 0; pr < kp; pr++) {
		const int16_t *xr = p->il[pr] + (int64_t)ox * step + 2 * c0;
		const int16_t *wr = p->w2 + ((size_t)pr * kw * c + c0) * 2;

		for (kx = 0; kx < kw; kx++) {
			/* Past C in a tail: lanes no store reads. */
			__m256i wv = _mm256_loadu_si256((const __m256i *)(wr + (size_t)kx * c * 2));
			const int16_t *xp = xr + kx * kxs;

			for (i = 0; i < np; i++)
				a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(wv,
					_mm256_loadu_si256((const __m256i *)(xp + i * step))));
		}
	}
	epi8_load_i8(p, c0, tail, m, &k);
	for (i = 0; i < np; i++)
		i8_out8(p, a[i], ox + i, out, ostr, c0, tail, m, &k);
}

AVX2_TARGET
static inline __attribute__((always_inline))
void i8_ypair_pix(const struct dw_px *p, uint32_t ox, const int np, uint32_t kw,
		  int32_t *out, size_t ostr)
{
	uint32_t c0;

	for (c0 = 0; c0 + 8 <= p->c; c0 += 8)
		i8_ypair8(p, ox, np, kw, out, ostr, c0, false);
	if (c0 < p->c)
		i8_ypair8(p, ox, np, kw, out, ostr, c0, true);
}

/* Every column alike: 8, then 4, then 1 at a time. */
#define ROW_YPAIR(kw) do {						\
	uint32_t ox = p->ox0;						\
									\
	for (; ox + 8 <= p->ow; ox += 8)				\
		i8_ypair_pix(p, ox, 8, kw, out, ostr);			\
	for (; ox + 4 <= p->ow; ox += 4)				\
		i8_ypair_pix(p, ox, 4, kw, out, ostr);			\
	for (; ox < p->ow; ox++)					\
		i8_ypair_pix(p, ox, 1, kw, out, ostr);			\
} while (0)

AVX2_TARGET
static void row_i8_ypair(const struct dw_px *p, int32_t *out, size_t ostr)
{
	if (p->kw == 3)
		ROW_YPAIR(3);
	else if (p->kw == 5)
		ROW_YPAIR(5);
	else
		ROW_YPAIR(p->kw);
}

/*
 * Input rows @iy and @iy + dh of batch @b (either may be padding) as one
 * staged row pair for row_i8_ypair(): @n columns of the padded row.
 * Padding columns are zeros; dense X's in-bounds columns one run.
 */
AVX2_TARGET
static void stage_ypair_avx2(const struct dw_px *p, int64_t iy, uint32_t h, uint32_t w,
			     uint32_t n, int16_t *dst)
{
	const uint8_t *ra = iy >= 0 && iy < h ? p->xb + iy * p->xs1 : NULL;
	const uint8_t *rb = iy + p->dh >= 0 && iy + p->dh < h ? p->xb + (iy + p->dh) * p->xs1 :
				NULL;
	int64_t j0 = p->pl < n ? p->pl : n, j1 = p->pl + w < n ? p->pl + w : n, j;
	size_t col = (size_t)p->c * 2;

	if ((!ra && !rb) || j1 <= j0) {
		memset(dst, 0, n * col * sizeof(int16_t));
		return;
	}
	memset(dst, 0, j0 * col * sizeof(int16_t));
	if (p->xs2 == p->c) {
		if (p->xs8)
			stage_run(ra, rb, (j1 - j0) * p->c, p->zx, dst + j0 * col, true);
		else
			stage_run(ra, rb, (j1 - j0) * p->c, p->zx, dst + j0 * col, false);
	}
	for (j = j0; p->xs2 != p->c && j < j1; j++) {
		const uint8_t *xa = ra ? ra + (j - p->pl) * p->xs2 : NULL;
		const uint8_t *xb = rb ? rb + (j - p->pl) * p->xs2 : NULL;

		if (p->xs8)
			stage_col(p, xa, xb, dst + j * col, true);
		else
			stage_col(p, xa, xb, dst + j * col, false);
	}
	/* After the columns: stage_col()'s channel tail spills into the next. */
	memset(dst + j1 * col, 0, (n - j1) * col * sizeof(int16_t));
}

/* ---- AVX-512 ------------------------------------------------------------- */

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

/* The channel mask of the 16-channel block at @c0 of @c. */
static inline __mmask16 ch_mask(uint32_t c, uint32_t c0)
{
	return c - c0 >= 16 ? 0xffff : (__mmask16)((1u << (c - c0)) - 1);
}

/* Bias and activation of 16 sums, as epi_f32() does them (no FMA). */
AVX512_TARGET
static inline __m512 f32_epi_v(const struct dw_px *p, __m512 v, uint32_t c0,
			       __mmask16 m)
{
	const __m512 zero = _mm512_setzero_ps();

	if (p->sv)
		v = _mm512_add_ps(_mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, p->sv + c0)),
				  _mm512_maskz_loadu_ps(m, p->bv + c0));
	else if (p->bv)
		v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, p->bv + c0));
	/* vmaxps/vminps return the second operand for NaN and for +-0 pairs: r > 0 ? r : 0. */
	switch (p->act) {
	case VNPU_ACT_RELU:
		return _mm512_max_ps(v, zero);
	case VNPU_ACT_RELU6:
		return _mm512_min_ps(_mm512_max_ps(v, zero), _mm512_set1_ps(6.0f));
	case VNPU_ACT_LEAKY_RELU:
		return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ),
					    _mm512_mul_ps(v, _mm512_set1_ps(p->alpha)), v);
	default:
		return v;
	}
}

/*
 * @np (1 or 4) output pixels from column @ox, all channels, taps kx in
 * [@kx0, @kx1): each weight vector loaded once feeds @np independent FMA
 * chains.  Finished (bias, activation) when p->fused, else raw sums.
 */
AVX512_TARGET
static inline __attribute__((always_inline))
void f32_pix(const struct dw_px *p, uint32_t ox, int np, uint32_t kx0,
	     uint32_t kx1, float *out, size_t ostr)
{
	int64_t xs2 = p->xs2, step = p->sw * xs2, ix0 = (int64_t)ox * p->sw - p->pl;
	const float *w = p->w;
	uint32_t c = p->c, c0, ky, kx;
	int i;

	for (c0 = 0; c0 < c; c0 += 16) {
		__mmask16 m = ch_mask(c, c0);
		__m512 a[4];

		for (i = 0; i < np; i++)
			a[i] = _mm512_setzero_ps();
		for (ky = p->ky0; ky < p->ky1; ky++) {
			const uint8_t *xr = p->xb + (int64_t)c0 * 4 +
					    (p->iy0 + (int64_t)ky * p->dh) * p->xs1 + ix0 * xs2;
			const float *wr = w + (size_t)ky * p->kw * c + c0;

			for (kx = kx0; kx < kx1; kx++) {
				__m512 wv = _mm512_maskz_loadu_ps(m, wr + (size_t)kx * c);
				const uint8_t *xp = xr + (int64_t)kx * p->dw * xs2;

				for (i = 0; i < np; i++)
					a[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xp + i * step),
							       wv, a[i]);
			}
		}
		for (i = 0; i < np; i++)
			_mm512_mask_storeu_ps(out + (ox + i) * ostr + c0, m,
					      p->fused ? f32_epi_v(p, a[i], c0, m) : a[i]);
	}
}

/*
 * One output row: interior columns four at a time, border columns with
 * their own kx range.  The channel loop is innermost so the few input
 * lines of a column group stay in L1 across all channel blocks.
 */
AVX512_TARGET
static void row_f32_avx512(const struct dw_px *p, float *out, size_t ostr)
{
	uint32_t ox = p->ox0;

	while (ox < p->ow) {
		if (ox >= p->full0 && ox + 4 <= p->full1 && ox + 4 <= p->ow) {
			f32_pix(p, ox, 4, 0, p->kw, out, ostr);
			ox += 4;
		} else {
			f32_pix(p, ox, 1, p->kx0s[ox], p->kx1s[ox], out, ostr);
			ox++;
		}
	}
}

/* 16 channels of X, widened to int32 (@s8: a constant after inlining). */
AVX512_TARGET
static inline __m512i ld_x16(const uint8_t *x, __mmask16 m, const bool s8)
{
	__m128i b = _mm_maskz_loadu_epi8(m, x);

	return s8 ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

/*
 * epi_i8() on 16 sums: rint((float)(acc + bias) * fm), NaN as 0, clamped
 * in float to [lo - zp, hi - zp], plus zp, stored as bytes.
 */
AVX512_TARGET
static inline void i8_epi_store(const struct dw_px *p, __m512i acc, uint32_t c0,
				__mmask16 m, uint8_t *y)
{
	__m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(m, p->bq + c0)));

	f = _mm512_roundscale_ps(_mm512_mul_ps(f, _mm512_maskz_loadu_ps(m, p->fm + c0)),
				 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	f = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(f, f, _CMP_ORD_Q), f);
	f = _mm512_max_ps(f, _mm512_maskz_loadu_ps(m, p->flo + c0));
	f = _mm512_min_ps(f, _mm512_maskz_loadu_ps(m, p->fhi + c0));
	_mm_mask_storeu_epi8(y + c0, m, _mm512_cvtepi32_epi8(
		_mm512_add_epi32(_mm512_cvttps_epi32(f), _mm512_maskz_loadu_epi32(m, p->zp + c0))));
}

#define MAC(a, x, w) a = _mm512_add_epi32(a, _mm512_mullo_epi32(x, w))

/* f32_pix() for int8: sums mod 2^32, then requantized (p->fused) or raw. */
AVX512_TARGET
static inline __attribute__((always_inline))
void i8_pix(const struct dw_px *p, uint32_t ox, int np, const bool s8,
	    uint32_t kx0, uint32_t kx1, int32_t *out, size_t ostr)
{
	int64_t xs2 = p->xs2, step = p->sw * xs2, ix0 = (int64_t)ox * p->sw - p->pl;
	const int32_t *w = p->w;
	uint32_t c = p->c, c0, ky, kx;
	__m512i nzx = _mm512_set1_epi32(-p->zx);
	int i;

	for (c0 = 0; c0 < c; c0 += 16) {
		__mmask16 m = ch_mask(c, c0);
		__m512i a[4], cs = _mm512_setzero_si512();

		/*
		 * sum (x - zx) * w = sum x * w - zx * sum w over the in-bounds
		 * taps (mod 2^32): start every pixel at the second term.
		 */
		for (ky = p->ky0; ky < p->ky1; ky++)
			for (kx = kx0; kx < kx1; kx++)
				cs = _mm512_add_epi32(cs, _mm512_maskz_loadu_epi32(m,
					w + (size_t)(ky * p->kw + kx) * c + c0));
		cs = _mm512_mullo_epi32(cs, nzx);
		for (i = 0; i < np; i++)
			a[i] = cs;
		for (ky = p->ky0; ky < p->ky1; ky++) {
			const uint8_t *xr = p->xb + c0 +
					    (p->iy0 + (int64_t)ky * p->dh) * p->xs1 + ix0 * xs2;
			const int32_t *wr = w + (size_t)ky * p->kw * c + c0;

			for (kx = kx0; kx < kx1; kx++) {
				__m512i wv = _mm512_maskz_loadu_epi32(m, wr + (size_t)kx * c);
				const uint8_t *xp = xr + (int64_t)kx * p->dw * xs2;

				for (i = 0; i < np; i++)
					MAC(a[i], ld_x16(xp + i * step, m, s8), wv);
			}
		}
		for (i = 0; i < np; i++) {
			if (p->fused)
				i8_epi_store(p, a[i], c0, m, p->yq + (int64_t)(ox + i) * p->ystr);
			else
				_mm512_mask_storeu_epi32(out + (ox + i) * ostr + c0, m, a[i]);
		}
	}
}

/* One output row: X's signedness as a constant. */
#define ROW_I8(S8) do {							\
	while (ox < p->ow) {						\
		if (ox >= p->full0 && ox + 4 <= p->full1 && ox + 4 <= p->ow) { \
			i8_pix(p, ox, 4, S8, 0, p->kw, out, ostr);	\
			ox += 4;					\
		} else {						\
			i8_pix(p, ox, 1, S8, p->kx0s[ox], p->kx1s[ox],	\
			       out, ostr);				\
			ox++;						\
		}							\
	}								\
} while (0)

AVX512_TARGET
static void row_i8_avx512(const struct dw_px *p, int32_t *out, size_t ostr)
{
	uint32_t ox = p->ox0;

	if (p->xs8)
		ROW_I8(true);
	else
		ROW_I8(false);
}
#endif

/* ---- epilogues ------------------------------------------------------------ */

#if defined(DW_X86) && !defined(__clang__)
#define EPI_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EPI_CLONES
#endif

/* vnpu_epi_store()'s ONNX requantization over one pixel's channels. */
EPI_CLONES
static void epi_i8(const int32_t *acc, const int32_t *bq, const float *fm,
		   const int32_t *zp, const int32_t *lo, const int32_t *hi,
		   uint8_t *y, uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++)
		y[j] = (uint8_t)vnpu_round_sat((float)(int32_t)((uint32_t)acc[j] + (uint32_t)bq[j]) *
					       fm[j], zp[j], lo[j], hi[j]);
}

/* Bias (or scale and shift) and activation in place, vnpu_act()'s order. */
EPI_CLONES
static void epi_f32(float *y, const float *bv, const float *sv, unsigned int act,
		    float alpha, float beta, uint32_t n)
{
	uint32_t j;

	/* No "+ 0.0f" without a bias: it would turn -0 into +0. */
	if (sv)
		for (j = 0; j < n; j++)
			y[j] = y[j] * sv[j] + bv[j];
	else if (bv)
		for (j = 0; j < n; j++)
			y[j] += bv[j];
	switch (act) {
	case VNPU_ACT_NONE:
		break;
	case VNPU_ACT_RELU:
		for (j = 0; j < n; j++)
			y[j] = y[j] > 0.0f ? y[j] : 0.0f;
		break;
	case VNPU_ACT_RELU6:
		for (j = 0; j < n; j++)
			y[j] = y[j] > 6.0f ? 6.0f : y[j] > 0.0f ? y[j] : 0.0f;
		break;
	case VNPU_ACT_LEAKY_RELU:
		for (j = 0; j < n; j++)
			y[j] = y[j] >= 0.0f ? y[j] : y[j] * alpha;
		break;
	case VNPU_ACT_HARD_SIGMOID:
		for (j = 0; j < n; j++) {
			float t = alpha * y[j] + beta;

			y[j] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
		}
		break;
	case VNPU_ACT_HARD_SWISH:
		for (j = 0; j < n; j++) {
			float t = y[j] * (1.0f / 6.0f) + 0.5f;

			y[j] = y[j] * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
		}
		break;
	default:
		for (j = 0; j < n; j++)
			y[j] = vnpu_act_ab(act, alpha, beta, y[j]);
		break;
	}
}

/* ---- the command ---------------------------------------------------------- */

/* Elements of one output row (int8 sums: 4 MiB of scratch). */
#define DW_ROW_MAX	(1u << 20)
/*
 * Bytes of staged X rows (int8 on AVX2), else the kernel that reads X:
 * PP-OCR rec's 480-channel rows, 282 columns of int16 pairs for 5 taps,
 * take 2.6 MiB.
 */
#define DW_STAGE_MAX	(1u << 23)

static bool is_q8(uint8_t dt)
{
	return dt == VNPU_DT_UINT8 || dt == VNPU_DT_INT8;
}

bool vnpu_eng_dw_ok(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info, const struct vnpu_tv *t)
{
	const struct vnpu_tv *x = &t[0], *w = &t[1], *y = &t[3];
	uint64_t taps = (uint64_t)w->dims[1] * w->dims[2];

	if (c->hdr.opcode != VNPU_OP_CONV2D || c->attr.conv.groups < 2 ||
	    w->dims[0] != c->attr.conv.groups || w->dims[3] != 1 ||
	    x->dims[3] != c->attr.conv.groups || x->st[3] != 1 || y->st[3] != 1 ||
	    y->dims[3] > VNPU_DW_MAX_CHANNELS)
		return false;
	/*
	 * One output row is the unit of work between polls, and the int8
	 * sums of one row are scratch: keep both bounded.
	 */
	if (taps * y->dims[3] * y->dims[2] > VNPU_POLL_BLOCK ||
	    (uint64_t)y->dims[3] * y->dims[2] > DW_ROW_MAX)
		return false;
	if (info->quantized)
		return is_q8(x->dtype) && is_q8(w->dtype) && is_q8(y->dtype);
	return x->dtype == VNPU_DT_FP32 && w->dtype == VNPU_DT_FP32 &&
	       y->dtype == VNPU_DT_FP32;
}

typedef void row_f32_fn(const struct dw_px *p, float *out, size_t ostr);
typedef void row_i8_fn(const struct dw_px *p, int32_t *out, size_t ostr);

/* Everything one output row needs; rows are independent of each other. */
struct dw_job {
	const struct vnpu_cmd_compute *c;
	const struct vnpu_tv *x, *y;
	struct dw_px px;	/* template: X geometry, weights */
	uint32_t kh, kw, co;
	bool q;
	row_f32_fn *kf;
	row_i8_fn *ki;
	/* fp32 epilogue */
	const float *bv, *sv;
	float alpha, beta;
	/* int8 epilogue */
	const int32_t *bq, *zp, *lo, *hi;
	const float *fm;
	int32_t *acc;		/* [ow][co] scratch */
	uint32_t seg;		/* columns per unit of work */
	/*
	 * int8 on AVX2: X rows staged for row_i8_staged(), a ring of the
	 * rows one output row reads, @stage_cols columns of @stage_len
	 * int16 each; the (batch, row) each slot holds, or -1.
	 */
	int16_t *stage;
	size_t stage_len;
	uint32_t stage_rows, stage_cols;
	int64_t *stage_tag;
	const int16_t **il;	/* [kh] */
	bool ypair;		/* staged ky pairs, row_i8_ypair() */
};

/* [lo, hi) of taps k whose input coordinate o*s - pad + k*d is inside [0, n). */
static void tap_range(int64_t base, int64_t d, uint32_t k, uint32_t n,
		      uint32_t *lo, uint32_t *hi)
{
	int64_t a = 0, b = k;

	if (base < 0)
		a = (-base + d - 1) / d;
	if (base + (b - 1) * d >= (int64_t)n)
		b = base >= (int64_t)n ? 0 : ((int64_t)n - 1 - base) / d + 1;
	if (a > b)
		a = b;
	*lo = (uint32_t)(a > k ? k : a);
	*hi = (uint32_t)(b > k ? k : b);
}

/* The staged X rows output row @p reads, staging those not yet in the ring. */
static void stage_rows(const struct dw_job *j, struct dw_px *p, uint32_t b)
{
#ifdef DW_X86
	int64_t iy, tag;
	uint32_t ky, slot;
	int16_t *row;

	if (j->ypair) {
		/* Row pairs from iy0 on, padding rows included (staged as 0). */
		for (ky = 0; ky < p->kp; ky++) {
			iy = p->iy0 + 2 * (int64_t)ky * p->dh;
			slot = (uint32_t)(((iy % j->stage_rows) + j->stage_rows) % j->stage_rows);
			tag = ((int64_t)b << 34) + iy + (1ll << 33);
			row = j->stage + slot * j->stage_len;
			if (j->stage_tag[slot] != tag) {
				stage_ypair_avx2(p, iy, j->x->dims[1], j->x->dims[2],
						 j->stage_cols, row);
				j->stage_tag[slot] = tag;
			}
			j->il[ky] = row;
		}
		p->il = j->il;
		return;
	}
	for (ky = p->ky0; ky < p->ky1; ky++) {
		iy = p->iy0 + (int64_t)ky * p->dh;
		slot = (uint32_t)(iy % j->stage_rows);
		tag = (int64_t)b * j->x->dims[1] + iy;
		row = j->stage + slot * j->stage_len;
		if (j->stage_tag[slot] != tag) {
			stage_row_avx2(p, p->xb + iy * p->xs1, j->x->dims[2], j->stage_cols, row);
			j->stage_tag[slot] = tag;
		}
		j->il[ky] = row;
	}
	p->il = j->il;
#else
	(void)j;
	(void)p;
	(void)b;
#endif
}

/*
 * Output rows [r0, r1) of the flattened (batch, oy) range: the outer
 * loop a multi-engine split may hand out in slices.  0 or -ECANCELED.
 */
static int dw_rows(const struct dw_job *j, uint32_t r0, uint32_t r1,
		   struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	const struct vnpu_tv *x = j->x, *y = j->y;
	uint32_t oh = y->dims[1], ow = y->dims[2], r, ox, ox0, ox1;
	struct dw_px p = j->px;

	for (r = r0; r < r1; r++) {
		uint32_t b = r / oh, oy = r % oh;
		uint8_t *yrow = y->p + ((int64_t)b * y->st[0] + (int64_t)oy * y->st[1]) * y->esize;

		p.xb = x->p + (int64_t)b * x->st[0] * x->esize;
		p.iy0 = (int64_t)oy * at->stride_h - at->pad_top;
		tap_range(p.iy0, at->dilation_h, j->kh, x->dims[1], &p.ky0, &p.ky1);
		p.yq = yrow;
		if (j->stage)
			stage_rows(j, &p, b);
		/*
		 * Segments of a row are the units of work between polls;
		 * padding taps count, as in the command's MACs, so a window
		 * mostly outside X still polls in proportion.
		 */
		for (ox0 = 0; ox0 < ow; ox0 = ox1) {
			ox1 = ow - ox0 < j->seg ? ow : ox0 + j->seg;
			if (vnpu_run_tick(rc, (uint64_t)(ox1 - ox0) * j->co *
					  (1 + (uint64_t)j->kh * j->kw)))
				return -ECANCELED;
			p.ox0 = ox0;
			p.ow = ox1;
			if (j->q) {
				j->ki(&p, j->acc, j->co);
				for (ox = ox0; ox < ox1 && !p.fused; ox++)
					epi_i8(j->acc + (size_t)ox * j->co, j->bq, j->fm, j->zp,
					       j->lo, j->hi, yrow + (int64_t)ox * y->st[2], j->co);
			} else {
				/* Raw sums straight into Y, finished in place while in cache. */
				j->kf(&p, (float *)yrow, (size_t)y->st[2]);
				for (ox = ox0; ox < ox1 && !p.fused; ox++)
					epi_f32((float *)yrow + (int64_t)ox * y->st[2], j->bv,
						j->sv, j->c->act, j->alpha, j->beta, j->co);
			}
		}
	}
	return 0;
}

#ifdef DW_X86
/*
 * The ring of staged X rows, when it fits DW_STAGE_MAX and the scratch
 * left: the rows one output row's taps span, each of the padded columns
 * its output columns read, plus the 8 channels a last block reads past
 * the end.  0 (staged or not) or -ENOMEM.
 *
 * Staging a column costs about what its products cost in the kernel,
 * so it pays only when each staged value feeds several taps: kx pairs
 * at horizontal stride 1 and kernels 3 wide or more, whatever the
 * vertical stride (instructions per command under callgrind: 3x3 stride
 * 1, C 16: 0.92x the unstaged kernel's; 5x5 stride 1, C 240: 0.49x; 3x3
 * stride 2, C 24: 1.8x; bench-ops, PP-OCR rec's 5x5 stride 2x1 over 480
 * channels: 0.14 ms against the ky pairs' 0.19, its 3x3 2x1 over 64 the
 * same either way), else ky pairs for kernels 2 tall or more
 * (row_i8_ypair()), whose staged values all feed taps.
 */
static int stage_alloc(struct dw_job *j, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	uint64_t cols = (uint64_t)(j->y->dims[2] - 1) * at->stride_w +
			(uint64_t)(j->kw - 1) * at->dilation_w + 1;
	bool xpair = at->stride_w == 1 && j->kw >= 3;
	uint64_t kp = (j->kh + 1) / 2, rows, len;
	uint32_t i;

	if (!xpair && j->kh < 2)
		return 0;
	/* The rows of one output row's kh taps, or of its kp row pairs. */
	rows = xpair ? (uint64_t)(j->kh - 1) * at->dilation_h + 1 :
		       2 * (kp - 1) * at->dilation_h + 1;
	if (cols > DW_STAGE_MAX || rows > DW_STAGE_MAX)
		return 0;
	len = cols * j->co * 2 + 16;
	if (rows * len * sizeof(int16_t) > DW_STAGE_MAX)
		return 0;
	/* A scratch budget that cannot hold it leaves the unstaged kernel. */
	j->stage = vnpu_run_alloc(rc, rows * len * sizeof(int16_t));
	if (!j->stage)
		return 0;
	j->stage_len = len;
	j->stage_rows = (uint32_t)rows;
	j->stage_cols = (uint32_t)cols;
	j->ypair = !xpair;
	j->stage_tag = vnpu_run_alloc(rc, rows * sizeof(int64_t));
	j->il = vnpu_run_alloc(rc, (xpair ? j->kh : kp) * sizeof(*j->il));
	if (!j->stage || !j->stage_tag || !j->il)
		return -ENOMEM;
	for (i = 0; i < rows; i++)
		j->stage_tag[i] = -1;
	return 0;
}

#endif

/*
 * W [co][kh][kw][1] into @wp's [tap][co] (fp32, or int32 w - zw) and, for
 * the AVX2 int8 kernels, @w2's kx pairs (ky pairs if @ypair).  Channel blocks outermost and
 * channels innermost, so the stores run sequentially: per element, the
 * strided stores and addressing of a channel-at-a-time loop took a
 * third of a small command's time.
 */
static int dw_pack(const struct vnpu_tv *w, uint32_t taps, uint32_t co, bool q,
		   void *wp, int16_t *w2, bool ypair, struct vnpu_run_ctx *rc)
{
	uint32_t kw = w->dims[2], kp = (kw + 1) / 2, c0, n, tap, ch;
	int64_t s0 = w->st[0] * w->esize;
	bool s8 = w->dtype == VNPU_DT_INT8;
	int32_t zw[DW_CB];

	for (c0 = 0; c0 < co; c0 += DW_CB) {
		n = co - c0 < DW_CB ? co - c0 : DW_CB;
		if (vnpu_run_tick(rc, (uint64_t)n * taps))
			return -ECANCELED;
		for (ch = 0; q && ch < n; ch++)
			zw[ch] = vnpu_tv_zp(w, c0 + ch);
		for (tap = 0; tap < taps; tap++) {
			uint32_t ky = tap / kw, kx = tap % kw;
			const uint8_t *src = w->p + c0 * s0 + ((int64_t)ky * w->st[1] +
							       (int64_t)kx * w->st[2]) * w->esize;
			size_t ti = (size_t)tap * co + c0;
			int32_t *d = (int32_t *)wp + ti;
			int16_t *d2;

			if (!q) {
				for (ch = 0; ch < n; ch++)
					memcpy((float *)wp + ti + ch, src + ch * s0, 4);
				continue;
			}
			if (s8)
				for (ch = 0; ch < n; ch++)
					d[ch] = (int8_t)src[ch * s0] - zw[ch];
			else
				for (ch = 0; ch < n; ch++)
					d[ch] = src[ch * s0] - zw[ch];
			if (!w2)
				continue;
			if (ypair)
				d2 = w2 + ((size_t)(ky / 2 * kw + kx) * co + c0) * 2 + ky % 2;
			else
				d2 = w2 + ((size_t)(ky * kp + kx / 2) * co + c0) * 2 + kx % 2;
			for (ch = 0; ch < n; ch++)
				d2[2 * ch] = (int16_t)d[ch];
		}
	}
	return 0;
}

int vnpu_eng_dw(const struct vnpu_cmd_compute *c,
		const struct vnpu_op_info *info, struct vnpu_tv *t,
		struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], co = y->dims[3], ow = y->dims[2];
	uint32_t taps = kh * kw, ch, ox;
	enum vnpu_i8_kernel kern = vnpu_i8_kernel_resolve(rc ? rc->i8_kernel : VNPU_I8_AUTO);
	struct dw_job j;
	uint32_t *kxr = NULL;
	void *wp = NULL;
	float *bf = NULL, *fm = NULL, *fl = NULL;
	int32_t *bq = NULL, *qi = NULL, *acc = NULL;
	int16_t *w2 = NULL;
	int64_t span;
	struct vnpu_epi e;
	int ret = -ENOMEM;

	memset(&j, 0, sizeof(j));
	j.c = c;
	j.x = x;
	j.y = y;
	j.kh = kh;
	j.kw = kw;
	j.co = co;
	j.q = info->quantized;
	j.beta = vnpu_act_beta(c);
	memcpy(&j.alpha, &c->act_alpha, 4);
	kxr = vnpu_run_alloc(rc, sizeof(uint32_t) * 2 * ow);
	/* taps * co is W's element count: within the limits. */
	wp = vnpu_run_alloc(rc, 4 * (size_t)taps * co);
	if (!kxr || !wp)
		goto out;
#ifdef DW_X86
	if (j.q && kern == VNPU_I8_AVX2) {
		/* The staging decides the pairs W is packed in. */
		ret = stage_alloc(&j, rc);
		if (ret < 0)
			goto out;
		ret = -ENOMEM;
		/*
		 * At most 2 * taps * co int16, W's size as int32, plus the
		 * 8 channels a last block of fewer reads past the end.
		 */
		w2 = vnpu_run_calloc(rc, ((size_t)(j.ypair ? (kh + 1) / 2 * kw :
						   kh * ((kw + 1) / 2)) * co + 8) * 2,
				     sizeof(int16_t));
		if (!w2)
			goto out;
	}
#endif
	for (ox = 0; ox < ow; ox++)
		tap_range((int64_t)ox * at->stride_w - at->pad_left, at->dilation_w, kw,
			  x->dims[2], &kxr[ox], &kxr[ow + ox]);
	if (j.q) {
		bq = vnpu_run_calloc(rc, co, sizeof(int32_t));
		fm = vnpu_run_alloc(rc, sizeof(float) * co);
		qi = vnpu_run_alloc(rc, sizeof(int32_t) * 3 * co);
		acc = vnpu_run_alloc(rc, sizeof(int32_t) * co * (size_t)ow);
		fl = vnpu_run_alloc(rc, sizeof(float) * 2 * co);
		if (!bq || !fm || !qi || !acc || !fl)
			goto out;
	} else if (bias->p) {
		/* Shifts (or the bias), then scales for a [2, CO] operand. */
		bf = vnpu_run_alloc(rc, sizeof(float) * co * (bias->rank == 2 ? 2 : 1));
		if (!bf)
			goto out;
	}
	ret = dw_pack(w, taps, co, j.q, wp, w2, j.ypair, rc);
	if (ret)
		goto out;
	for (ch = 0; ch < co; ch++) {
		if (j.q) {
			if (bias->p)
				memcpy(&bq[ch], bias->p + (int64_t)ch * bias->st[0] * 4, 4);
			/* Per channel only through W's or Y's per-channel scales. */
			if (!ch || w->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL)
				vnpu_epi_init(&e, c, x, w, y, ch);
			/* Other epilogues take the general path. */
			if (e.mode != VNPU_EPI_REQUANT || e.round != VNPU_ROUND_ONNX) {
				ret = 1;
				goto out;
			}
			fm[ch] = e.fmult;
			qi[ch] = e.out_zp;
			qi[co + ch] = e.lo;
			qi[2 * co + ch] = e.hi;
			/* Exact: both differences fit 9 bits for 8-bit outputs. */
			fl[ch] = (float)(e.lo - e.out_zp);
			fl[co + ch] = (float)(e.hi - e.out_zp);
		} else if (bias->p) {
			float one;

			vnpu_bias_at(bias, ch, bias->rank == 2 ? &bf[co + ch] : &one, &bf[ch]);
		}
	}
	j.px = (struct dw_px){ .xs1 = x->st[1] * x->esize, .xs2 = x->st[2] * x->esize,
		.c = co, .kw = kw, .dh = at->dilation_h, .dw = at->dilation_w,
		.w = wp, .w2 = w2, .zx = x->zp, .xs8 = x->dtype == VNPU_DT_INT8, .ow = ow,
		.sw = at->stride_w, .pl = at->pad_left, .kx0s = kxr, .kx1s = kxr + ow,
		.kp = (kh + 1) / 2 };
	for (ch = 0, span = 1; ch < 4; ch++)
		span += x->st[ch] > 0 ? (int64_t)(x->dims[ch] - 1) * x->st[ch] : 0;
	j.px.xend = x->p + span * x->esize;
	/* The columns with every kx tap in bounds are one interval. */
	for (ox = 0; ox < ow; ox++)
		if (kxr[ox] == 0 && kxr[ow + ox] == kw) {
			if (j.px.full1 == 0)
				j.px.full0 = ox;
			j.px.full1 = ox + 1;
		}
	j.bq = bq;
	j.fm = fm;
	j.zp = qi;
	j.lo = qi ? qi + co : NULL;
	j.hi = qi ? qi + 2 * co : NULL;
	j.acc = acc;
	j.bv = bf;
	j.sv = bf && bias->rank == 2 ? bf + co : NULL;
	j.px.bv = j.bv;
	j.px.sv = j.sv;
	j.px.act = c->act;
	j.px.alpha = j.alpha;
	j.px.bq = bq;
	j.px.zp = qi;
	j.px.fm = fm;
	j.px.flo = fl;
	j.px.fhi = fl ? fl + co : NULL;
	j.px.ystr = y->st[2] * y->esize;
	j.kf = row_f32_generic;
	j.ki = row_i8_generic;
#ifdef DW_X86
	if (kern == VNPU_I8_VNNI) {
		j.kf = row_f32_avx512;
		j.ki = row_i8_avx512;
	} else if (kern == VNPU_I8_AVX2) {
		j.kf = row_f32_avx2;
		j.ki = row_i8_avx2;
		if (j.stage)
			j.ki = j.ypair ? row_i8_ypair : row_i8_staged;
	}
	/* The vector kernels finish these epilogues in registers. */
	j.px.fused = j.kf != row_f32_generic &&
		     (j.q || c->act == VNPU_ACT_NONE || c->act == VNPU_ACT_RELU ||
		      c->act == VNPU_ACT_RELU6 || c->act == VNPU_ACT_LEAKY_RELU);
#else
	(void)kern;
#endif
	/*
	 * Segments of about 2^20 MACs, a few hundred microseconds: 2^21 took
	 * up to 1.9 ms on a loaded host, over a reset's 1 ms.
	 */
	j.seg = (uint32_t)((1u << 20) / ((uint64_t)co * (taps + 1)));
	j.seg = j.seg < 4 ? 1 : j.seg / 4 * 4;
	ret = dw_rows(&j, 0, y->dims[0] * y->dims[1], rc);
out:
	vnpu_run_free(rc, kxr);
	vnpu_run_free(rc, wp);
	vnpu_run_free(rc, w2);
	vnpu_run_free(rc, bf);
	vnpu_run_free(rc, bq);
	vnpu_run_free(rc, fm);
	vnpu_run_free(rc, qi);
	vnpu_run_free(rc, acc);
	vnpu_run_free(rc, fl);
	vnpu_run_free(rc, j.stage);
	vnpu_run_free(rc, j.stage_tag);
	vnpu_run_free(rc, j.il);
	return ret;
}
