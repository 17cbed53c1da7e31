// SPDX-License-Identifier: MIT
/*
 * fp32 CONV2D of the device engine without im2col: a direct (implicit
 * GEMM) NHWC kernel for AVX-512, and the same for AVX2 + FMA.
 *
 * The product is Y[pixel][co] = sum over (ky, kx, ci) of X[pixel's tap]
 * [ci] * W[ky][kx][ci][co].  Weights are packed once per command to
 * [ky][kx][ci][co rounded up to 16] so 64 output channels are four
 * vector loads; the X element is broadcast.  A register block is six
 * output pixels of one row by 64 channels (24 accumulators; narrower
 * channel blocks take more pixels): per input channel four weight loads
 * and six broadcasts feed 24 FMAs, and X is
 * read in place, so no im2col copy is made and 1x1 convs are plain GEMMs
 * on NHWC rows.  Columns whose window crosses the left or right border
 * go one at a time with their own in-bounds kx range, rows get their
 * in-bounds ky range, so the inner loops never test a border.  Bias and
 * ReLU/ReLU6/leaky ReLU (on AVX2 also hard sigmoid and hard swish, which
 * MobileNetV3 and PP-OCR put after most of their convs) are applied in
 * registers before the store; other activations take a pass over each
 * finished pixel.
 *
 * On AVX2 hosts the im2col + sgemm path of vnpu_engine.c spent most of
 * a first layer's or a small 1x1 conv's time packing and in the
 * per-output epilogue (K of 16..75 leaves the GEMM little to amortize
 * them on), so the same kernel runs there on 8-lane vectors.  Hosts
 * with neither, or configured for the generic int8 kernel, keep
 * im2col + sgemm for fp32.  int8 convs have a direct kernel for AVX-512
 * VNNI and one for AVX2 (below).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "vnpu_engine.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

#define NV	4	/* 16-channel vectors per register block, at most */
/*
 * Output pixels per register block for @nv vectors: 24 or so accumulators
 * (16 for one vector, whose weight load is then shared by 16 FMAs).
 */
#define MR_OF(nv)	((nv) == 1 ? 16 : (nv) == 2 ? 12 : (nv) == 3 ? 8 : 6)
#define MR_MAX	16

struct cv_row;

struct cv_job {
	const struct vnpu_cmd_compute *c;
	const struct vnpu_tv *x, *y;
	const float *w;		/* [kh][kw][ci][cop] */
	uint32_t kh, kw, ci, co, cop, ow, oh;
	uint32_t seg;		/* columns per unit of work */
	int64_t xs1, xs2, xs3;	/* element strides of X's H, W and C */
	int64_t sw, pl, dw;
	const uint32_t *kx0s, *kx1s;	/* [ow] in-bounds kx per column */
	uint32_t full0, full1;	/* columns with every kx tap */
	const float *bv, *sv;	/* [cop] bias or shift, scale; NULL if none */
	bool fused;		/* bias and activation in registers */
	bool fold;		/* a row's kx taps are one run of X (see cv2_block) */
	unsigned int act;
	float alpha, beta;	/* beta: HARD_SIGMOID's */
	/* Columns [ox0, ox1) of one row: the AVX-512 or the AVX2 kernel. */
	void (*row)(const struct cv_job *j, const struct cv_row *r, uint32_t ox0,
		    uint32_t ox1);
};

/* The state of one output row. */
struct cv_row {
	const float *xb;	/* X at (b, 0, 0, 0) */
	int64_t iy0;		/* input row of ky = 0 */
	int64_t dh;
	uint32_t ky0, ky1;
	float *yrow;		/* Y at (b, oy, 0, 0) */
	int64_t ys2;
};

AVX512_TARGET
static inline __m512 cv_epi(const struct cv_job *j, __m512 v, uint32_t n)
{
	const __m512 zero = _mm512_setzero_ps();

	if (j->sv)
		v = _mm512_add_ps(_mm512_mul_ps(v, _mm512_loadu_ps(j->sv + n)),
				  _mm512_loadu_ps(j->bv + n));
	else if (j->bv)
		v = _mm512_add_ps(v, _mm512_loadu_ps(j->bv + n));
	/* vmaxps/vminps return the second operand for NaN and +-0: r > 0 ? r : 0. */
	switch (j->act) {
	case VNPU_ACT_RELU:
		return _mm512_max_ps(v, zero);
	case VNPU_ACT_RELU6:
		return _mm512_min_ps(_mm512_max_ps(v, zero), _mm512_set1_ps(6.0f));
	case VNPU_ACT_LEAKY_RELU:
		return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ),
					    _mm512_mul_ps(v, _mm512_set1_ps(j->alpha)), v);
	default:
		return v;
	}
}

/*
 * @np pixels from column @ox by @nv vectors of channels from @n0, over
 * taps kx in [@kx0, @kx1).  @np and @nv are constants after inlining.
 */
AVX512_TARGET
static inline __attribute__((always_inline))
void cv_block(const struct cv_job *j, const struct cv_row *r, uint32_t ox,
	      const int np, const int nv, uint32_t n0, uint32_t kx0, uint32_t kx1)
{
	int64_t step = j->sw * j->xs2, ix0 = (int64_t)ox * j->sw - j->pl;
	uint32_t ci = j->ci, cop = j->cop, ky, kx, k;
	__m512 acc[MR_MAX][NV];
	int p, v;

	for (p = 0; p < np; p++)
		for (v = 0; v < nv; v++)
			acc[p][v] = _mm512_setzero_ps();
	for (ky = r->ky0; ky < r->ky1; ky++) {
		const float *xr = r->xb + (r->iy0 + (int64_t)ky * r->dh) * j->xs1 + ix0 * j->xs2;

		for (kx = kx0; kx < kx1; kx++) {
			const float *xp = xr + (int64_t)kx * j->dw * j->xs2;
			const float *wp = j->w + ((size_t)(ky * j->kw + kx) * ci) * cop + n0;

			for (k = 0; k < ci; k++) {
				__m512 wv[NV];

				for (v = 0; v < nv; v++)
					wv[v] = _mm512_loadu_ps(wp + (size_t)k * cop + 16 * v);
				for (p = 0; p < np; p++) {
					__m512 xv = _mm512_set1_ps(xp[p * step + k]);

					for (v = 0; v < nv; v++)
						acc[p][v] = _mm512_fmadd_ps(xv, wv[v], acc[p][v]);
				}
			}
		}
	}
	for (p = 0; p < np; p++) {
		float *yp = r->yrow + (int64_t)(ox + p) * r->ys2 + n0;

		for (v = 0; v < nv; v++) {
			uint32_t n = n0 + 16 * v;
			__mmask16 m = j->co - n >= 16 ? 0xffff : (__mmask16)((1u << (j->co - n)) - 1);

			_mm512_mask_storeu_ps(yp + 16 * v, m,
					      j->fused ? cv_epi(j, acc[p][v], n) : acc[p][v]);
		}
	}
}

/*
 * Columns [ox0, ox1) of one row for the channel block at @n0 of @nv
 * vectors: interior columns MR_OF(nv) (or, in the tail, half that) at a
 * time.
 */
#define CV_COLUMNS(NVC) do {						\
	const int mr = MR_OF(NVC), mr2 = MR_OF(NVC) / 2;		\
	uint32_t ox = ox0;						\
									\
	while (ox < ox1) {						\
		if (ox >= j->full0 && ox + mr <= j->full1 && ox + mr <= ox1) { \
			cv_block(j, r, ox, mr, NVC, n0, 0, j->kw);	\
			ox += mr;					\
		} else if (ox >= j->full0 && ox + mr2 <= j->full1 && ox + mr2 <= ox1) { \
			cv_block(j, r, ox, mr2, NVC, n0, 0, j->kw);	\
			ox += mr2;					\
		} else {						\
			cv_block(j, r, ox, 1, NVC, n0, j->kx0s[ox],	\
				 j->kx1s[ox]);				\
			ox++;						\
		}							\
	}								\
} while (0)

AVX512_TARGET
static void cv_row(const struct cv_job *j, const struct cv_row *r, uint32_t ox0,
		   uint32_t ox1)
{
	uint32_t n0;

	for (n0 = 0; n0 < j->cop; n0 += 16 * NV) {
		switch ((j->cop - n0) / 16) {
		case 1:
			CV_COLUMNS(1);
			break;
		case 2:
			CV_COLUMNS(2);
			break;
		case 3:
			CV_COLUMNS(3);
			break;
		default:
			CV_COLUMNS(4);
			break;
		}
	}
}

/*
 * The AVX2 + FMA kernel: the same loops on 8-lane vectors, so 16 ymm
 * registers hold at most 12 accumulators (12 pixels x 8 channels, 6 x
 * 16 as OpenBLAS's and XNNPACK's AVX2 tiles, or 4 x 24) besides the
 * weight vectors and the broadcast.  Channel blocks wider than 24 are
 * cut into blocks of 16 and 24, each sweeping the row segment again
 * (from cache).
 */
#define AVX2_TARGET __attribute__((target("avx2,fma")))
#define NV2	3
#define MR2_OF(nv)	((nv) == 1 ? 12 : (nv) == 2 ? 6 : 4)
#define MR2_MAX	12

/*
 * t < 0 ? 0 : t > 1 ? 1 : t, as vnpu_act_ab() clamps: vmaxps/vminps
 * return their second operand for NaN, so t is second and NaN stays NaN.
 */
AVX2_TARGET
static inline __m256 cv2_unit_clamp(__m256 t)
{
	return _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), t));
}

/*
 * Scale or bias (@sv, @bv; either may be NULL) and activation @act of the
 * channels n..n+7.  Called with constant @act, @sv and @bv where the
 * block is specialized (cv2_store()).
 */
AVX2_TARGET
static inline __attribute__((always_inline))
__m256 cv2_epi(__m256 v, uint32_t n, const float *sv, const float *bv,
	       const unsigned int act, float alpha, float beta)
{
	const __m256 zero = _mm256_setzero_ps();

	if (sv)
		v = _mm256_add_ps(_mm256_mul_ps(v, _mm256_loadu_ps(sv + n)),
				  _mm256_loadu_ps(bv + n));
	else if (bv)
		v = _mm256_add_ps(v, _mm256_loadu_ps(bv + n));
	/* vmaxps/vminps return the second operand for NaN and +-0: r > 0 ? r : 0. */
	switch (act) {
	case VNPU_ACT_RELU:
		return _mm256_max_ps(v, zero);
	case VNPU_ACT_RELU6:
		return _mm256_min_ps(_mm256_max_ps(v, zero), _mm256_set1_ps(6.0f));
	case VNPU_ACT_LEAKY_RELU:
		return _mm256_blendv_ps(_mm256_mul_ps(v, _mm256_set1_ps(alpha)), v,
					_mm256_cmp_ps(v, zero, _CMP_GE_OQ));
	case VNPU_ACT_HARD_SIGMOID:
		return cv2_unit_clamp(_mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(alpha)),
						    _mm256_set1_ps(beta)));
	case VNPU_ACT_HARD_SWISH:
		return _mm256_mul_ps(v, cv2_unit_clamp(_mm256_add_ps(
			_mm256_mul_ps(v, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f))));
	default:
		return v;
	}
}

/* Not an activation: the block is stored as summed (cv_epi_pass() follows). */
#define CV2_RAW	(~0u)

/*
 * The stores of one register block.  With @act constant the epilogue has
 * no branch per vector: before this was split out, reloading j->act after
 * every store (a store may alias it) and its jump table took a quarter of
 * a 1x1 conv's time when K is 8.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void cv2_store(const struct cv_job *j, const struct cv_row *r, uint32_t ox,
	       const int np, const int nv, uint32_t n0, __m256 acc[][NV2],
	       const unsigned int act, const bool scaled)
{
	const float *sv = scaled ? j->sv : NULL, *bv = act == CV2_RAW ? NULL : j->bv;
	const float alpha = j->alpha, beta = j->beta;
	const int64_t ys2 = r->ys2;
	float *y0 = r->yrow + (int64_t)ox * ys2 + n0;
	const uint32_t co = j->co;
	int p, v;

#pragma GCC unroll 12
	for (p = 0; p < np; p++) {
#pragma GCC unroll 3
		for (v = 0; v < nv; v++) {
			uint32_t n = n0 + 8 * v;
			__m256 o = act == CV2_RAW ? acc[p][v] :
				cv2_epi(acc[p][v], n, sv, bv, act, alpha, beta);

			if (co - n >= 8)
				_mm256_storeu_ps(y0 + p * ys2 + 8 * v, o);
			else
				_mm256_maskstore_ps(y0 + p * ys2 + 8 * v,
					_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(co - n)),
						_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), o);
		}
	}
}

/*
 * cv_block() on 8-lane vectors.  When X's pixels are dense and kx is not
 * dilated (j->fold), taps kx0..kx1 of an input row are one run of
 * (kx1 - kx0) * ci floats in X, and one run of rows in the packed W, so
 * they are a single loop: a 3-channel first layer then has 5 * 3 = 15
 * steps per kernel row instead of 5 loops of 3.  The order of the sum
 * (ky, kx, ci) is unchanged.  The pixel and vector loops are unrolled by
 * pragma: GCC 12 otherwise unrolls them after it has decided to keep
 * acc[][] in memory, and the kernel then runs at half speed storing
 * accumulators to the stack on every step.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void cv2_block(const struct cv_job *j, const struct cv_row *r, uint32_t ox,
	       const int np, const int nv, const bool cs, uint32_t n0, uint32_t kx0,
	       uint32_t kx1)
{
	int64_t step = j->sw * j->xs2, ix0 = (int64_t)ox * j->sw - j->pl;
	uint32_t ci = j->ci, cop = j->cop, ky, kx, nk, k;
	__m256 acc[MR2_MAX][NV2];
	int p, v;

#pragma GCC unroll 12
	for (p = 0; p < np; p++)
#pragma GCC unroll 3
		for (v = 0; v < nv; v++)
			acc[p][v] = _mm256_setzero_ps();
	for (ky = r->ky0; ky < r->ky1; ky++) {
		const float *xr = r->xb + (r->iy0 + (int64_t)ky * r->dh) * j->xs1 + ix0 * j->xs2;

		for (kx = kx0; kx < kx1; kx += nk) {
			const float *xp = xr + (int64_t)kx * j->dw * j->xs2;
			const float *wp = j->w + ((size_t)(ky * j->kw + kx) * ci) * cop + n0;
			uint32_t kn = ci;

			nk = 1;
			if (j->fold) {
				nk = kx1 - kx;
				kn = nk * ci;
			}
			for (k = 0; k < kn; k++) {
				__m256 wv[NV2];

#pragma GCC unroll 3
				for (v = 0; v < nv; v++)
					wv[v] = _mm256_loadu_ps(wp + (size_t)k * cop + 8 * v);
#pragma GCC unroll 12
				for (p = 0; p < np; p++) {
					__m256 xv = _mm256_broadcast_ss(xp + p * step +
									(cs ? k * j->xs3 : k));

#pragma GCC unroll 3
					for (v = 0; v < nv; v++)
						acc[p][v] = _mm256_fmadd_ps(xv, wv[v], acc[p][v]);
				}
			}
		}
	}
	if (!j->fused) {
		cv2_store(j, r, ox, np, nv, n0, acc, CV2_RAW, false);
		return;
	}
	/* A folded BatchNormalization's scale: rare enough to keep generic. */
	if (j->sv) {
		cv2_store(j, r, ox, np, nv, n0, acc, j->act, true);
		return;
	}
	switch (j->act) {
	case VNPU_ACT_RELU:
		cv2_store(j, r, ox, np, nv, n0, acc, VNPU_ACT_RELU, false);
		break;
	case VNPU_ACT_RELU6:
		cv2_store(j, r, ox, np, nv, n0, acc, VNPU_ACT_RELU6, false);
		break;
	case VNPU_ACT_HARD_SWISH:
		cv2_store(j, r, ox, np, nv, n0, acc, VNPU_ACT_HARD_SWISH, false);
		break;
	case VNPU_ACT_NONE:
		cv2_store(j, r, ox, np, nv, n0, acc, VNPU_ACT_NONE, false);
		break;
	default:
		cv2_store(j, r, ox, np, nv, n0, acc, j->act, false);
		break;
	}
}

#define CV2_COLUMNS(NVC) do {						\
	const int mr = MR2_OF(NVC), mr2 = MR2_OF(NVC) / 2;		\
	uint32_t ox = ox0;						\
									\
	while (ox < ox1) {						\
		if (ox >= j->full0 && ox + mr <= j->full1 && ox + mr <= ox1) { \
			cv2_block(j, r, ox, mr, NVC, cs, n0, 0, j->kw);	\
			ox += mr;					\
		} else if (ox >= j->full0 && ox + mr2 <= j->full1 && ox + mr2 <= ox1) { \
			cv2_block(j, r, ox, mr2, NVC, cs, n0, 0, j->kw); \
			ox += mr2;					\
		} else {						\
			cv2_block(j, r, ox, 1, NVC, cs, n0, j->kx0s[ox], \
				  j->kx1s[ox]);				\
			ox++;						\
		}							\
	}								\
} while (0)

/*
 * @cs: X's channels are not adjacent (an NCHW input seen as NHWC, as the
 * CPU path hands a model's first conv its input): each tap's channel k
 * is read at k * xs3.  A constant after inlining, so the NHWC kernel
 * keeps its addressing.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void cv2_row_body(const struct cv_job *j, const struct cv_row *r, uint32_t ox0,
		  uint32_t ox1, const bool cs)
{
	uint32_t n0, nv;

	for (n0 = 0; n0 < j->cop; n0 += 8 * nv) {
		nv = (j->cop - n0) / 8;
		/* 32 channels as 16 + 16: 4 x 24 + 1 x 8 would waste the second pass. */
		nv = nv == 4 ? 2 : nv > NV2 ? NV2 : nv;
		switch (nv) {
		case 1:
			CV2_COLUMNS(1);
			break;
		case 2:
			CV2_COLUMNS(2);
			break;
		default:
			CV2_COLUMNS(3);
			break;
		}
	}
}

AVX2_TARGET
static void cv2_row(const struct cv_job *j, const struct cv_row *r, uint32_t ox0,
		    uint32_t ox1)
{
	cv2_row_body(j, r, ox0, ox1, false);
}

AVX2_TARGET
static void cv2_row_cs(const struct cv_job *j, const struct cv_row *r, uint32_t ox0,
		       uint32_t ox1)
{
	cv2_row_body(j, r, ox0, ox1, true);
}

/*
 * Bias and activation not fused: vnpu_act()'s order, one pass per step
 * over the pixel so the bias and the clamps vectorize; the activations
 * of a libm call go through vnpu_act_ab().
 */
static void cv_epi_pass(const struct cv_job *j, float *y)
{
	uint32_t n, co = j->co;

	if (j->sv)
		for (n = 0; n < co; n++)
			y[n] = y[n] * j->sv[n] + j->bv[n];
	else if (j->bv)
		for (n = 0; n < co; n++)
			y[n] += j->bv[n];
	switch (j->act) {
	case VNPU_ACT_NONE:
		break;
	case VNPU_ACT_HARD_SIGMOID:
		for (n = 0; n < co; n++) {
			float t = j->alpha * y[n] + j->beta;

			y[n] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
		}
		break;
	case VNPU_ACT_HARD_SWISH:
		for (n = 0; n < co; n++) {
			float t = y[n] * (1.0f / 6.0f) + 0.5f;

			y[n] = y[n] * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
		}
		break;
	default:
		for (n = 0; n < co; n++)
			y[n] = vnpu_act_ab(j->act, j->alpha, j->beta, y[n]);
		break;
	}
}

/* [lo, hi) of taps k whose coordinate base + k*d lies in [0, n). */
static void cv_tap_range(int64_t base, int64_t d, uint32_t k, uint32_t n,
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

/*
 * Output rows [r0, r1) of the flattened (batch, oy) range: the outer
 * loop a multi-engine split may hand out in slices.  0 or -ECANCELED.
 */
static int cv_rows(const struct cv_job *j, uint32_t r0, uint32_t r1,
		   struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	const struct vnpu_tv *x = j->x, *y = j->y;
	uint32_t oh = j->oh, rr, ox, ox0, ox1;
	struct cv_row r;

	r.dh = at->dilation_h;
	r.ys2 = y->st[2];
	for (rr = r0; rr < r1; rr++) {
		uint32_t b = rr / oh, oy = rr % oh;

		r.xb = (const float *)x->p + (int64_t)b * x->st[0];
		r.iy0 = (int64_t)oy * at->stride_h - at->pad_top;
		r.yrow = (float *)y->p + (int64_t)b * y->st[0] + (int64_t)oy * y->st[1];
		cv_tap_range(r.iy0, r.dh, j->kh, x->dims[1], &r.ky0, &r.ky1);
		/*
		 * A row in segments of at most seg columns: the unit between
		 * polls.  Padding taps count as work, as in the command's MACs,
		 * so a window mostly outside X still polls in proportion.
		 */
		for (ox0 = 0; ox0 < j->ow; ox0 = ox1) {
			ox1 = j->ow - ox0 < j->seg ? j->ow : ox0 + j->seg;
			if (vnpu_run_tick(rc, (uint64_t)(ox1 - ox0) * j->cop *
					  (1 + (uint64_t)j->kh * j->kw * j->ci)))
				return -ECANCELED;
			j->row(j, &r, ox0, ox1);
			if (!j->fused)
				for (ox = ox0; ox < ox1; ox++)
					cv_epi_pass(j, r.yrow + (int64_t)ox * r.ys2);
		}
	}
	return 0;
}

/*
 * Dense W [co][K] to [K][cop] in 16 x 16 tiles, so both the rows read
 * and the rows written stay in cache; columns past co are zero.
 */
static int pack_dense(float *dst, const float *src, uint32_t kk, uint32_t co,
		      uint32_t cop, struct vnpu_run_ctx *rc)
{
	uint32_t n0, k0, i, q;

	for (k0 = 0; k0 < kk; k0++)
		memset(dst + (size_t)k0 * cop + co, 0, sizeof(float) * (cop - co));
	for (n0 = 0; n0 < co; n0 += 16) {
		uint32_t nn = co - n0 < 16 ? co - n0 : 16;

		if (vnpu_run_tick(rc, (uint64_t)16 * kk))
			return -ECANCELED;
		for (k0 = 0; k0 < kk; k0 += 16) {
			uint32_t kn = kk - k0 < 16 ? kk - k0 : 16;

			for (i = 0; i < nn; i++) {
				const float *s = src + (size_t)(n0 + i) * kk + k0;

				for (q = 0; q < kn; q++)
					dst[(size_t)(k0 + q) * cop + n0 + i] = s[q];
			}
		}
	}
	return 0;
}

/*
 * pack_dense() with 8 x 8 tiles transposed in registers.  The scalar loop
 * moves about a float a cycle, which for a 1x1 conv over a handful of
 * pixels (PP-OCR cls's head: 7 pixels, 200 x 50 weights) was most of
 * the command.  The same floats land in the same places.
 */
AVX2_TARGET
static int pack_dense_avx2(float *dst, const float *src, uint32_t kk, uint32_t co,
			   uint32_t cop, struct vnpu_run_ctx *rc)
{
	uint32_t n0, k0, i, q;

	for (k0 = 0; k0 < kk; k0++)
		memset(dst + (size_t)k0 * cop + co, 0, sizeof(float) * (cop - co));
	for (n0 = 0; n0 < co; n0 += 8) {
		uint32_t nn = co - n0 < 8 ? co - n0 : 8;

		if (vnpu_run_tick(rc, (uint64_t)8 * kk))
			return -ECANCELED;
		for (k0 = 0; nn == 8 && k0 + 8 <= kk; k0 += 8) {
			const float *sp = src + (size_t)n0 * kk + k0;
			__m256 r[8], t[8], u[8];

			for (i = 0; i < 8; i++)
				r[i] = _mm256_loadu_ps(sp + (size_t)i * kk);
			for (i = 0; i < 8; i += 2) {
				t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
				t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
			}
			for (i = 0; i < 8; i += 4) {
				u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
				u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
				u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
				u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
			}
			/* u[q] and u[q + 4] hold taps q and q + 4 of rows 0-3 and 4-7. */
			for (q = 0; q < 4; q++) {
				_mm256_storeu_ps(dst + (size_t)(k0 + q) * cop + n0,
						 _mm256_permute2f128_ps(u[q], u[q + 4], 0x20));
				_mm256_storeu_ps(dst + (size_t)(k0 + q + 4) * cop + n0,
						 _mm256_permute2f128_ps(u[q], u[q + 4], 0x31));
			}
		}
		for (; k0 < kk; k0++)
			for (i = 0; i < nn; i++)
				dst[(size_t)k0 * cop + n0 + i] = src[(size_t)(n0 + i) * kk + k0];
	}
	return 0;
}

/*
 * A 1x1, stride 1, unpadded conv over uniformly strided pixels is a GEMM
 * on X: all of an image's pixels form one row, so register blocks never
 * stop at a row's end.  Makes @j so when it applies (*@kxr then holds
 * the new column table); -ENOMEM.
 */
static int cv_flatten(struct cv_job *j, uint32_t **kxr, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	const struct vnpu_tv *x = j->x, *y = j->y;
	uint32_t ox;

	if (j->kh != 1 || j->kw != 1 || at->stride_h != 1 || at->stride_w != 1 ||
	    at->pad_top || at->pad_left || y->dims[1] != x->dims[1] ||
	    y->dims[2] != x->dims[2] || x->st[1] != (int64_t)x->dims[2] * x->st[2] ||
	    y->st[1] != (int64_t)j->ow * y->st[2])
		return 0;
	j->ow *= y->dims[1];
	j->oh = 1;
	j->full0 = 0;
	j->full1 = j->ow;
	vnpu_run_free(rc, *kxr);
	*kxr = vnpu_run_calloc(rc, 2 * (size_t)j->ow, sizeof(uint32_t));
	if (!*kxr)
		return -ENOMEM;
	for (ox = 0; ox < j->ow; ox++)
		(*kxr)[j->ow + ox] = 1;
	j->kx0s = *kxr;
	j->kx1s = *kxr + j->ow;
	return 0;
}

static bool have_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl");
}

static bool have_avx2_fma(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/*
 * Lanes of the fp32 kernel for this run: 16 (AVX-512), 8 (AVX2) or 0
 * (none: im2col).  The int8 kernel choice stands for the ISA, so a test
 * that selects the generic int8 kernel gets the im2col path for fp32.
 */
static unsigned int cv_lanes(const struct vnpu_run_ctx *rc)
{
	switch (vnpu_i8_kernel_resolve(rc ? rc->i8_kernel : VNPU_I8_AUTO)) {
	case VNPU_I8_VNNI:
		return have_avx512() ? 16 : 0;
	case VNPU_I8_AVX2:
		return have_avx2_fma() ? 8 : 0;
	default:
		return 0;
	}
}

/*
 * Whether the @lanes-wide kernel applies @act in registers before its
 * store; any other activation takes a pass over each finished pixel.
 */
static bool cv_act_fused(unsigned int act, unsigned int lanes)
{
	switch (act) {
	case VNPU_ACT_NONE:
	case VNPU_ACT_RELU:
	case VNPU_ACT_RELU6:
	case VNPU_ACT_LEAKY_RELU:
		return true;
	case VNPU_ACT_HARD_SIGMOID:
	case VNPU_ACT_HARD_SWISH:
		return lanes == 8;
	default:
		return false;
	}
}

bool vnpu_eng_conv_f32_ok(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, const struct vnpu_tv *t,
			  const struct vnpu_run_ctx *rc)
{
	const struct vnpu_tv *x = &t[0], *w = &t[1], *y = &t[3];
	uint64_t k = (uint64_t)w->dims[1] * w->dims[2] * w->dims[3];

	unsigned int lanes;

	if (c->hdr.opcode != VNPU_OP_CONV2D || info->quantized || c->attr.conv.groups != 1 ||
	    x->dtype != VNPU_DT_FP32 || w->dtype != VNPU_DT_FP32 ||
	    y->dtype != VNPU_DT_FP32 || y->st[3] != 1)
		return false;
	lanes = cv_lanes(rc);
	/* Only the AVX2 kernel reads channels apart (cv2_row_body()). */
	if (x->st[3] != 1 && lanes != 8)
		return false;
	switch (lanes) {
	case 0:
		return false;
	case 8:
		/*
		 * Every block of 4..12 pixels streams all of W: once W no
		 * longer fits in a core's L2 (256 KiB or more of floats),
		 * sgemm's K blocking wins.  Measured on an AVX2 EPYC: 3x3
		 * 128->128 and 1x1 256->256 ran 0.72-0.74x as fast direct,
		 * 3x3 64->64 (144 KiB) 1.2x faster.
		 */
		if (k * vnpu_round_up(y->dims[3], 8) * sizeof(float) >= (256u << 10))
			return false;
		break;
	}
	/* One output column is the least unit of work between polls. */
	return (uint64_t)vnpu_round_up(y->dims[3], 16) * (k + 1) <= VNPU_POLL_BLOCK;
}

int vnpu_eng_conv_f32(const struct vnpu_cmd_compute *c,
		      const struct vnpu_op_info *info, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], ci = w->dims[3], co = y->dims[3];
	uint32_t lanes = cv_lanes(rc), cop = vnpu_round_up(co, lanes ? lanes : 16);
	uint32_t ow = y->dims[2], ky, kx, k, n, ox;
	float *wp = NULL, *bf = NULL;
	uint32_t *kxr = NULL;
	struct cv_job j;
	int ret = -ENOMEM;

	(void)info;
	memset(&j, 0, sizeof(j));
	/* kh * kw * ci * cop is W's size rounded up: within the limits. */
	wp = vnpu_run_alloc(rc, sizeof(float) * kh * kw * ci * (size_t)cop);
	kxr = vnpu_run_alloc(rc, sizeof(uint32_t) * 2 * ow);
	if (!wp || !kxr)
		goto out;
	if (bias->p) {
		bf = vnpu_run_calloc(rc, 2 * (size_t)cop, sizeof(float));
		if (!bf)
			goto out;
		for (n = 0; n < co; n++) {
			float one;

			vnpu_bias_at(bias, n, bias->rank == 2 ? &bf[cop + n] : &one, &bf[n]);
		}
	}
	if (w->st[3] == 1 && w->st[2] == ci && w->st[1] == (int64_t)kw * ci &&
	    w->st[0] == (int64_t)kh * kw * ci) {
		if ((lanes == 8 ? pack_dense_avx2 : pack_dense)(wp, (const float *)w->p,
							    kh * kw * ci, co, cop, rc)) {
			ret = -ECANCELED;
			goto out;
		}
	} else {
		for (ky = 0; ky < kh; ky++)
			for (kx = 0; kx < kw; kx++)
				for (k = 0; k < ci; k++) {
					float *dst = wp + ((size_t)(ky * kw + kx) * ci + k) * cop;

					if (vnpu_run_tick(rc, cop)) {
						ret = -ECANCELED;
						goto out;
					}
					for (n = 0; n < co; n++)
						memcpy(&dst[n], w->p + ((int64_t)n * w->st[0] +
							(int64_t)ky * w->st[1] + (int64_t)kx * w->st[2] +
							(int64_t)k * w->st[3]) * 4, 4);
					memset(dst + co, 0, sizeof(float) * (cop - co));
				}
	}
	for (ox = 0; ox < ow; ox++)
		cv_tap_range((int64_t)ox * at->stride_w - at->pad_left, at->dilation_w, kw,
			     x->dims[2], &kxr[ox], &kxr[ow + ox]);
	j = (struct cv_job){ .c = c, .x = x, .y = y, .w = wp, .kh = kh, .kw = kw,
		.ci = ci, .co = co, .cop = cop, .ow = ow, .xs1 = x->st[1], .xs2 = x->st[2],
		.xs3 = x->st[3],
		.sw = at->stride_w, .pl = at->pad_left, .dw = at->dilation_w,
		.kx0s = kxr, .kx1s = kxr + ow, .bv = bf,
		.sv = bf && bias->rank == 2 ? bf + cop : NULL, .act = c->act,
		.fold = at->dilation_w == 1 && x->st[2] == ci && x->st[3] == 1,
		.row = lanes == 16 ? cv_row : x->st[3] == 1 ? cv2_row : cv2_row_cs };
	memcpy(&j.alpha, &c->act_alpha, 4);
	j.beta = vnpu_act_beta(c);
	j.fused = cv_act_fused(c->act, lanes);
	/* The columns with every kx tap in bounds are one interval. */
	for (ox = 0; ox < ow; ox++)
		if (kxr[ox] == 0 && kxr[ow + ox] == kw) {
			if (!j.full1)
				j.full0 = ox;
			j.full1 = ox + 1;
		}
	j.oh = y->dims[1];
	if (cv_flatten(&j, &kxr, rc)) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * Segments of about 2^24 MACs (well under VNPU_POLL_BLOCK) in whole
	 * register blocks of every width (48 is a multiple of each MR_OF),
	 * or single columns when even 48 of them are too much work.
	 */
	{
		uint64_t col = (uint64_t)cop * (kh * kw * ci + 1);

		j.seg = (uint32_t)((1u << 24) / col);
		if (j.seg >= 48)
			j.seg = j.seg / 48 * 48;
		else if (48 * col <= VNPU_POLL_BLOCK)
			j.seg = 48;
		else if (!j.seg)
			j.seg = 1;
	}
	ret = cv_rows(&j, 0, y->dims[0] * j.oh, rc);
out:
	vnpu_run_free(rc, wp);
	vnpu_run_free(rc, kxr);
	vnpu_run_free(rc, bf);
	return ret;
}

/* ---- int8: VNNI direct conv ------------------------------------------- */

/*
 * The same blocking with vpdpbusd: X bytes (made unsigned: int8 X is
 * XORed with 0x80, its zero point shifted with it) are broadcast four
 * input channels at a time against weights packed per tap as [ci/4][cop]
 * [4] signed bytes (uint8 W XORed likewise), so every instruction is 16
 * output channels x 4 MACs.  The X zero point comes off afterwards as
 * za * (sum of the in-bounds taps' weights), which is what the reference
 * gets from padding taps contributing nothing: exact mod 2^32.  Commands
 * whose shifted weight zero point is not 0 (they would need per-pixel
 * sums of X) take the im2col path.
 */
struct q8_job {
	const struct cv_job *g;	/* geometry: w is unused */
	const int8_t *w;	/* [kh*kw][cip/4][cop][4] */
	const int32_t *wsum;	/* [kh*kw][cop] sum over ci of w_s */
	uint32_t cip;
	uint32_t axor4;		/* 0x80808080 for int8 X */
	int32_t za;		/* X zero point, shifted like X */
	const int32_t *bq, *zp;	/* [cop] */
	const float *fm, *flo, *fhi;	/* [cop] */
};

struct q8_row {
	const uint8_t *xb;
	int64_t iy0, dh;
	uint32_t ky0, ky1;
	uint8_t *yrow;
	int64_t ys2;
};

/*
 * Four X bytes at @p to every lane (a broadcast load), XORed with @axv
 * when @flip (int8 X; a constant after inlining).
 */
AVX512_TARGET
static inline __m512i q8_bcast(const uint8_t *p, __m512i axv, const bool flip)
{
	int32_t v;
	__m512i b;

	memcpy(&v, p, 4);
	b = _mm512_set1_epi32(v);
	return flip ? _mm512_xor_si512(b, axv) : b;
}

/* The last 1-3 bytes of a pixel likewise, without reading past them. */
AVX512_TARGET
static inline __m512i q8_bcast_tail(const uint8_t *p, uint32_t n, __m512i axv,
				    const bool flip)
{
	__m512i b = _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8((__mmask16)((1u << n) - 1), p));

	return flip ? _mm512_xor_si512(b, axv) : b;
}

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/*
 * acc += u8 @a . s8 @b per 4-byte group.  In asm so the accumulator is
 * updated in place: with the intrinsic GCC 12 copies each of the 24
 * accumulators through one register and spills (measured: half speed).
 */
VNNI_TARGET
static inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b)
{
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
}

VNNI_TARGET
static inline __attribute__((always_inline))
void q8_block(const struct q8_job *q, const struct q8_row *r, uint32_t ox,
	      const int np, const int nv, const bool flip, uint32_t n0, uint32_t kx0,
	      uint32_t kx1)
{
	const struct cv_job *j = q->g;
	int64_t step = j->sw * j->xs2, ix0 = (int64_t)ox * j->sw - j->pl;
	uint32_t ci = j->ci, cop = j->cop, g4 = ci / 4, rem = ci % 4, ky, kx, k;
	__m512i acc[MR_MAX][NV], corr[NV], axv = _mm512_set1_epi32((int)q->axor4);
	int p, v;

	/*
	 * Start from -za * (weight sums of the in-bounds taps), the same for
	 * every pixel of a block, so no correction register stays live.
	 */
	for (v = 0; v < nv; v++) {
		__m512i cs = _mm512_setzero_si512();

		for (ky = r->ky0; ky < r->ky1; ky++)
			for (kx = kx0; kx < kx1; kx++)
				cs = _mm512_add_epi32(cs, _mm512_loadu_si512(q->wsum +
					(size_t)(ky * j->kw + kx) * cop + n0 + 16 * v));
		corr[v] = _mm512_mullo_epi32(cs, _mm512_set1_epi32(-q->za));
	}
	for (p = 0; p < np; p++)
		for (v = 0; v < nv; v++)
			acc[p][v] = corr[v];
	for (ky = r->ky0; ky < r->ky1; ky++) {
		const uint8_t *xr = r->xb + (r->iy0 + (int64_t)ky * r->dh) * j->xs1 + ix0 * j->xs2;

		for (kx = kx0; kx < kx1; kx++) {
			const uint8_t *xp = xr + (int64_t)kx * j->dw * j->xs2;
			uint32_t tap = ky * j->kw + kx;
			const int8_t *wp = q->w + ((size_t)tap * (q->cip / 4) * cop + n0) * 4;

			for (k = 0; k < g4; k++) {
				__m512i wv[NV];

				for (v = 0; v < nv; v++)
					wv[v] = _mm512_loadu_si512(wp + ((size_t)k * cop + 16 * v) * 4);
				for (p = 0; p < np; p++) {
					__m512i xv = q8_bcast(xp + p * step + 4 * k, axv, flip);

					for (v = 0; v < nv; v++)
						acc[p][v] = dpbusd(acc[p][v], xv, wv[v]);
				}
			}
			if (rem) {
				/* The last 1-3 channels: never read past the pixel. */
				__m512i wv[NV];

				for (v = 0; v < nv; v++)
					wv[v] = _mm512_loadu_si512(wp + ((size_t)g4 * cop + 16 * v) * 4);
				for (p = 0; p < np; p++) {
					__m512i xv = q8_bcast_tail(xp + p * step + 4 * g4, rem, axv, flip);

					for (v = 0; v < nv; v++)
						acc[p][v] = dpbusd(acc[p][v], xv, wv[v]);
				}
			}
		}
	}
	for (p = 0; p < np; p++) {
		uint8_t *yp = r->yrow + (int64_t)(ox + p) * r->ys2;

		for (v = 0; v < nv; v++) {
			uint32_t n = n0 + 16 * v;
			__mmask16 m = j->co - n >= 16 ? 0xffff : (__mmask16)((1u << (j->co - n)) - 1);
			__m512i a = _mm512_add_epi32(acc[p][v], _mm512_loadu_si512(q->bq + n));
			/* vnpu_round_sat(): rint, NaN as 0, clamp in float, + zp. */
			__m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_loadu_ps(q->fm + n));

			f = _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
			f = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(f, f, _CMP_ORD_Q), f);
			f = _mm512_min_ps(_mm512_max_ps(f, _mm512_loadu_ps(q->flo + n)),
					  _mm512_loadu_ps(q->fhi + n));
			_mm_mask_storeu_epi8(yp + n, m, _mm512_cvtepi32_epi8(_mm512_add_epi32(
				_mm512_cvttps_epi32(f), _mm512_loadu_si512(q->zp + n))));
		}
	}
}

#define Q8_COLUMNS(NVC, FLIP) do {					\
	const int mr = MR_OF(NVC), mr2 = MR_OF(NVC) / 2;		\
	uint32_t ox = ox0;						\
									\
	while (ox < ox1) {						\
		if (ox >= j->full0 && ox + mr <= j->full1 && ox + mr <= ox1) { \
			q8_block(q, r, ox, mr, NVC, FLIP, n0, 0, j->kw); \
			ox += mr;					\
		} else if (ox >= j->full0 && ox + mr2 <= j->full1 && ox + mr2 <= ox1) { \
			q8_block(q, r, ox, mr2, NVC, FLIP, n0, 0, j->kw); \
			ox += mr2;					\
		} else {						\
			q8_block(q, r, ox, 1, NVC, FLIP, n0, j->kx0s[ox], \
				 j->kx1s[ox]);				\
			ox++;						\
		}							\
	}								\
} while (0)

/* One channel block: the width and X's signedness as constants. */
#define Q8_NV(NVC) do {							\
	if (q->axor4)							\
		Q8_COLUMNS(NVC, true);					\
	else								\
		Q8_COLUMNS(NVC, false);					\
} while (0)

VNNI_TARGET
static void q8_row(const struct q8_job *q, const struct q8_row *r, uint32_t ox0,
		   uint32_t ox1)
{
	const struct cv_job *j = q->g;
	uint32_t n0;

	for (n0 = 0; n0 < j->cop; n0 += 16 * NV) {
		switch ((j->cop - n0) / 16) {
		case 1:
			Q8_NV(1);
			break;
		case 2:
			Q8_NV(2);
			break;
		case 3:
			Q8_NV(3);
			break;
		default:
			Q8_NV(4);
			break;
		}
	}
}

/* Output rows [r0, r1) of (batch, oy): a multi-engine split's unit. */
static int q8_rows(const struct q8_job *q, uint32_t r0, uint32_t r1,
		   struct vnpu_run_ctx *rc)
{
	const struct cv_job *j = q->g;
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	const struct vnpu_tv *x = j->x, *y = j->y;
	uint32_t rr, ox0, ox1;
	struct q8_row r;

	r.dh = at->dilation_h;
	r.ys2 = y->st[2] * y->esize;
	for (rr = r0; rr < r1; rr++) {
		uint32_t b = rr / j->oh, oy = rr % j->oh;

		r.xb = x->p + (int64_t)b * x->st[0];
		r.iy0 = (int64_t)oy * at->stride_h - at->pad_top;
		r.yrow = y->p + (int64_t)b * y->st[0] + (int64_t)oy * y->st[1];
		cv_tap_range(r.iy0, r.dh, j->kh, x->dims[1], &r.ky0, &r.ky1);
		for (ox0 = 0; ox0 < j->ow; ox0 = ox1) {
			ox1 = j->ow - ox0 < j->seg ? j->ow : ox0 + j->seg;
			if (vnpu_run_tick(rc, (uint64_t)(ox1 - ox0) * j->cop *
					  (1 + (uint64_t)j->kh * j->kw * j->ci)))
				return -ECANCELED;
			q8_row(q, &r, ox0, ox1);
		}
	}
	return 0;
}

/* ---- int8: AVX2 direct conv ------------------------------------------- */

/*
 * Without VNNI the products are int16 x int16 with vpmaddwd, which sums
 * two of them exactly into each int32 lane (no vpmaddubsw: it saturates).
 * X is widened once per command to int16 x - zx, weights per tap to pairs
 * of input channels, [ci/2][cop][2] int16 w - zw, so each term is the
 * reference's (x - zx) * (w - zw) itself: |term| <= 255 * 255, a pair sum
 * fits int32, and the sums are equal mod 2^32 for any zero points,
 * per-channel ones included, with no correction terms.  Padding taps are
 * never visited, as in the reference.  Per input channel pair a block of
 * pixels broadcasts one 32-bit pair each against 8-channel weight vectors
 * (12 x 8 or 6 x 16 channels: 12 accumulators), and requantizes in
 * registers before one 8-byte store per pixel and vector (one of 16 bytes
 * for two): no im2col copy, no row sums, no int32 scratch.
 */
#define A2_TARGET __attribute__((target("avx2")))
#define A2_MR_OF(nv)	((nv) == 1 ? 12 : 6)
#define A2_MR_MAX	12

struct a2_job {
	const struct cv_job *g;	/* geometry; w, xs1, xs2 unused */
	const int16_t *x;	/* [n][h][w][cip] x - zx */
	int64_t xs0, xs1, xs2;	/* its strides, in elements */
	const int16_t *w;	/* [taps][cip/2][cop][2] w - zw */
	uint32_t cip;
	bool s8out;
	bool nan_free;		/* every fm finite: a product is never NaN */
	const int32_t *bq, *zp;	/* [cop] */
	const float *fm, *flo, *fhi;	/* [cop] */
};

struct a2_row {
	const int16_t *xb;	/* X at (b, 0, 0, 0) */
	int64_t iy0, dh;
	uint32_t ky0, ky1;
	uint8_t *yrow;
	int64_t ys2;		/* bytes between output pixels */
};

/*
 * The requantization of 8 output channels, loaded once per register
 * block: the byte stores of a2_store() may alias anything, so read
 * through @q per pixel these were reloaded for every pixel, and with a
 * small K (1x1 convs over 8 to 32 channels) the epilogue was most of the
 * kernel's time.
 */
struct a2_epi {
	__m256i bq, zp;
	__m256 fm, lo, hi;
	uint32_t left;		/* channels from n to co */
};

A2_TARGET
static inline struct a2_epi a2_epi_at(const struct a2_job *q, uint32_t n)
{
	return (struct a2_epi){
		_mm256_loadu_si256((const __m256i *)(q->bq + n)),
		_mm256_loadu_si256((const __m256i *)(q->zp + n)),
		_mm256_loadu_ps(q->fm + n), _mm256_loadu_ps(q->flo + n),
		_mm256_loadu_ps(q->fhi + n), q->g->co - n };
}

/*
 * Channels [n, n + 8) of one pixel requantized, as int32 zp + round_sat():
 * vnpu_round_sat() in registers.  Its NaN case (a product of 0 and an
 * infinite multiplier) only exists when some fm is not finite
 * (!@nan_free, a constant after inlining).
 */
A2_TARGET
static inline __m256i a2_requant(const struct a2_epi *e, const bool nan_free, __m256i acc)
{
	__m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc, e->bq)), e->fm);

	f = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	if (!nan_free)
		f = _mm256_and_ps(f, _mm256_cmp_ps(f, f, _CMP_ORD_Q));
	f = _mm256_min_ps(_mm256_max_ps(f, e->lo), e->hi);
	return _mm256_add_epi32(_mm256_cvttps_epi32(f), e->zp);
}

/* Channels [n, n + 8) of one pixel at @yp. */
A2_TARGET
static inline void a2_store(const struct a2_epi *e, bool s8out, const bool nan_free,
			    __m256i acc, uint8_t *yp)
{
	__m256i v = a2_requant(e, nan_free, acc);
	__m128i h;

	/* In [lo, hi], within the 8-bit type: the packs never saturate. */
	h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	h = s8out ? _mm_packs_epi16(h, h) : _mm_packus_epi16(h, h);
	if (e->left >= 8) {
		_mm_storel_epi64((__m128i *)yp, h);
	} else {
		uint8_t t[16];

		_mm_storeu_si128((__m128i *)t, h);
		memcpy(yp, t, e->left);
	}
}

/*
 * Channels [n, n + 16) of one pixel, all present: both vectors packed
 * together and stored at once, 5 instructions where two a2_store()s take 8.
 */
A2_TARGET
static inline void a2_store16(const struct a2_epi *e, bool s8out, const bool nan_free,
			      __m256i acc0, __m256i acc1, uint8_t *yp)
{
	/* Per 128-bit lane: [v0 0..3, v1 0..3 | v0 4..7, v1 4..7] */
	__m256i h = _mm256_packs_epi32(a2_requant(&e[0], nan_free, acc0),
				       a2_requant(&e[1], nan_free, acc1));
	__m128i lo, hi;

	h = _mm256_permute4x64_epi64(h, 0xd8);	/* v0 0..7 | v1 0..7 */
	lo = _mm256_castsi256_si128(h);
	hi = _mm256_extracti128_si256(h, 1);
	_mm_storeu_si128((__m128i *)yp, s8out ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi));
}

/*
 * The requantized sums @acc of @np pixels by @nv vectors of 8 channels
 * from @n0, stored from the pixel at @yp, @ys2 bytes apart.
 */
A2_TARGET
static inline __attribute__((always_inline))
void a2_finish(const struct a2_job *q, uint8_t *yp, int64_t ys2, const int np,
	       const int nv, uint32_t n0, __m256i acc[][2])
{
	const bool s8out = q->s8out;
	uint8_t *yb = yp + n0;
	struct a2_epi e[2];
	int p, v;

	for (v = 0; v < nv; v++)
		e[v] = a2_epi_at(q, n0 + 8 * v);
	if (nv == 2 && e[1].left >= 8) {
		if (q->nan_free)
			for (p = 0; p < np; p++)
				a2_store16(e, s8out, true, acc[p][0], acc[p][1], yb + p * ys2);
		else
			for (p = 0; p < np; p++)
				a2_store16(e, s8out, false, acc[p][0], acc[p][1], yb + p * ys2);
		return;
	}
	if (q->nan_free)
		for (p = 0; p < np; p++)
			for (v = 0; v < nv; v++)
				a2_store(&e[v], s8out, true, acc[p][v], yb + p * ys2 + 8 * v);
	else
		for (p = 0; p < np; p++)
			for (v = 0; v < nv; v++)
				a2_store(&e[v], s8out, false, acc[p][v], yb + p * ys2 + 8 * v);
}

/*
 * @acc + vpmaddwd(@a, @b), in asm with a temporary of its own: from the
 * intrinsics GCC 12 keeps one of a 6 x 16 block's 12 accumulators on the
 * stack, and the store-to-load round trip on it each k pair then set the
 * loop's pace (perf: 42% of the kernel's samples on that store).
 */
A2_TARGET
static inline __m256i a2_madd(__m256i acc, __m256i a, __m256i b)
{
	__m256i t;

	__asm__("vpmaddwd %[b], %[a], %[t]\n\tvpaddd %[t], %[acc], %[acc]"
		: [acc] "+x"(acc), [t] "=&x"(t) : [a] "x"(a), [b] "x"(b));
	return acc;
}

/*
 * @np pixels from column @ox by @nv vectors of 8 channels from @n0, over
 * taps kx in [@kx0, @kx1); @np and @nv are constants after inlining.
 */
A2_TARGET
static inline __attribute__((always_inline))
void a2_block(const struct a2_job *q, const struct a2_row *r, uint32_t ox,
	      const int np, const int nv, uint32_t n0, uint32_t kx0, uint32_t kx1)
{
	const struct cv_job *j = q->g;
	int64_t step = j->sw * q->xs2, ix0 = (int64_t)ox * j->sw - j->pl;
	uint32_t k2n = q->cip / 2, cop = j->cop, ky, kx, k2, nk, kn;
	__m256i acc[A2_MR_MAX][2];
	int p, v;

	for (p = 0; p < np; p++)
		for (v = 0; v < nv; v++)
			acc[p][v] = _mm256_setzero_si256();
	for (ky = r->ky0; ky < r->ky1; ky++) {
		const int16_t *xr = r->xb + (r->iy0 + (int64_t)ky * r->dh) * q->xs1 + ix0 * q->xs2;

		for (kx = kx0; kx < kx1; kx += nk) {
			const int16_t *xp = xr + (int64_t)kx * j->dw * q->xs2;
			const int16_t *wp = q->w + ((size_t)(ky * j->kw + kx) * k2n * cop + n0) * 2;

			/*
			 * Undilated, taps kx0..kx1 are one run of the widened X
			 * and of W: one loop, not a short one per tap (a first
			 * layer's 3 channels are 2 pairs a tap).
			 */
			nk = j->dw == 1 ? kx1 - kx : 1;
			kn = nk * k2n;
			for (k2 = 0; k2 < kn; k2++, xp += 2, wp += 2 * (size_t)cop) {
				__m256i wv[2];

				for (v = 0; v < nv; v++)
					wv[v] = _mm256_loadu_si256((const __m256i *)(wp + 16 * v));
				for (p = 0; p < np; p++) {
					int32_t pair;
					__m256i xv;

					memcpy(&pair, xp + p * step, 4);
					xv = _mm256_set1_epi32(pair);
					for (v = 0; v < nv; v++)
						acc[p][v] = a2_madd(acc[p][v], xv, wv[v]);
				}
			}
		}
	}
	a2_finish(q, r->yrow + (int64_t)ox * r->ys2, r->ys2, np, nv, n0, acc);
}

#define A2_COLUMNS(NVC) do {						\
	const int mr = A2_MR_OF(NVC), mr2 = A2_MR_OF(NVC) / 2;		\
	uint32_t ox = ox0;						\
									\
	while (ox < ox1) {						\
		if (ox >= j->full0 && ox + mr <= j->full1 && ox + mr <= ox1) { \
			a2_block(q, r, ox, mr, NVC, n0, 0, j->kw);	\
			ox += mr;					\
		} else if (ox >= j->full0 && ox + mr2 <= j->full1 && ox + mr2 <= ox1) { \
			a2_block(q, r, ox, mr2, NVC, n0, 0, j->kw);	\
			ox += mr2;					\
		} else {						\
			a2_block(q, r, ox, 1, NVC, n0, j->kx0s[ox],	\
				 j->kx1s[ox]);				\
			ox++;						\
		}							\
	}								\
} while (0)

A2_TARGET
static void a2_row(const struct a2_job *q, const struct a2_row *r, uint32_t ox0,
		   uint32_t ox1)
{
	const struct cv_job *j = q->g;
	uint32_t n0;

	for (n0 = 0; n0 < j->cop; n0 += 16) {
		if (j->cop - n0 >= 16)
			A2_COLUMNS(2);
		else
			A2_COLUMNS(1);
	}
}

/* Output rows [r0, r1) of (batch, oy). */
static int a2_rows(const struct a2_job *q, uint32_t r0, uint32_t r1,
		   struct vnpu_run_ctx *rc)
{
	const struct cv_job *j = q->g;
	const struct vnpu_attr_conv2d *at = &j->c->attr.conv;
	const struct vnpu_tv *y = j->y;
	uint32_t rr, ox0, ox1;
	struct a2_row r;

	r.dh = at->dilation_h;
	r.ys2 = y->st[2] * y->esize;
	for (rr = r0; rr < r1; rr++) {
		uint32_t b = rr / j->oh, oy = rr % j->oh;

		r.xb = q->x + (int64_t)b * q->xs0;
		r.iy0 = (int64_t)oy * at->stride_h - at->pad_top;
		r.yrow = y->p + (int64_t)b * y->st[0] + (int64_t)oy * y->st[1];
		cv_tap_range(r.iy0, r.dh, j->kh, j->x->dims[1], &r.ky0, &r.ky1);
		for (ox0 = 0; ox0 < j->ow; ox0 = ox1) {
			ox1 = j->ow - ox0 < j->seg ? j->ow : ox0 + j->seg;
			if (vnpu_run_tick(rc, (uint64_t)(ox1 - ox0) * j->cop *
					  (1 + (uint64_t)j->kh * j->kw * j->ci)))
				return -ECANCELED;
			a2_row(q, &r, ox0, ox1);
		}
	}
	return 0;
}

/*
 * Channels [n, n + 8) of a dense W, k below ci rounded down to 16, into
 * the [taps][cip/2][cop][2] pairs: per 16 k, eight rows of eight w - zw
 * pairs transposed in registers to eight k pairs of eight channels, one
 * 32-byte store each, where a pair at a time cost as much as a 1x1
 * conv's multiplies over a small image.
 */
A2_TARGET
static void a2_pack_w8(const struct vnpu_tv *w, uint32_t n, uint32_t taps,
		       uint32_t ci, uint32_t cip, uint32_t cop, int16_t *wp)
{
	bool s8 = w->dtype == VNPU_DT_INT8;
	__m256i zw[8];
	uint32_t tap, k, r;

	for (r = 0; r < 8; r++)
		zw[r] = _mm256_set1_epi16((short)vnpu_tv_zp(w, n + r));
	for (tap = 0; tap < taps; tap++)
		for (k = 0; k + 16 <= ci; k += 16) {
			__m256i v[8], t[8], u[8];
			int16_t *dst = wp + (((size_t)tap * (cip / 2) + k / 2) * cop + n) * 2;

			for (r = 0; r < 8; r++) {
				__m128i b = _mm_loadu_si128((const __m128i *)(w->p +
					(int64_t)(n + r) * w->st[0] + (size_t)tap * ci + k));

				v[r] = _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(b) :
							_mm256_cvtepu8_epi16(b), zw[r]);
			}
			for (r = 0; r < 8; r += 2) {
				t[r] = _mm256_unpacklo_epi32(v[r], v[r + 1]);
				t[r + 1] = _mm256_unpackhi_epi32(v[r], v[r + 1]);
			}
			for (r = 0; r < 8; r += 4) {
				u[r] = _mm256_unpacklo_epi64(t[r], t[r + 2]);
				u[r + 1] = _mm256_unpackhi_epi64(t[r], t[r + 2]);
				u[r + 2] = _mm256_unpacklo_epi64(t[r + 1], t[r + 3]);
				u[r + 3] = _mm256_unpackhi_epi64(t[r + 1], t[r + 3]);
			}
			for (r = 0; r < 4; r++) {
				_mm256_storeu_si256((__m256i *)(dst + (size_t)r * cop * 2),
						    _mm256_permute2x128_si256(u[r], u[r + 4], 0x20));
				_mm256_storeu_si256((__m256i *)(dst + (size_t)(r + 4) * cop * 2),
						    _mm256_permute2x128_si256(u[r], u[r + 4], 0x31));
			}
		}
}

/* 16 X bytes, int8 (@s8) or uint8, widened to int16 minus @zx. */
A2_TARGET
static inline __m256i a2_widen16(__m128i v, bool s8, __m256i zx)
{
	return _mm256_sub_epi16(s8 ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v), zx);
}

/*
 * One row of @w dense pixels of odd @ci = cip - 1, cip 2, 4, 8 or 16:
 * 16 / cip pixels per vector, each pixel's ci bytes shuffled into cip
 * slots.  The extra slot holds -zx, not 0: its weights are 0.  Returns
 * the pixels done; the last ones, whose 16-byte load would read past
 * the row, are left to the caller.
 */
A2_TARGET
static uint32_t a2_widen_row_odd(const uint8_t *src, uint32_t w, uint32_t ci,
				 uint32_t cip, bool s8, __m256i zx, int16_t *d)
{
	uint32_t per = 16 / cip, ix, o;
	uint8_t m[16];
	__m128i shuf;

	for (o = 0; o < 16; o++)
		m[o] = o % cip < ci ? (uint8_t)(o / cip * ci + o % cip) : 0x80;
	shuf = _mm_loadu_si128((const __m128i *)m);
	for (ix = 0; ix + per <= w && (size_t)ix * ci + 16 <= (size_t)w * ci;
	     ix += per, src += per * ci, d += 16)
		_mm256_storeu_si256((__m256i *)d, a2_widen16(_mm_shuffle_epi8(
			_mm_loadu_si128((const __m128i *)src), shuf), s8, zx));
	return ix;
}

/*
 * One row of @w pixels of X in channel planes (a model's NCHW input, as
 * its first conv reads it): @ci <= 4 planes @cs bytes apart, pixels
 * adjacent in each, into @cip = 2 or 4 int16 slots per pixel, 8 pixels at
 * a time: a byte load per plane, widened, then interleaved, where a pixel
 * at a time cost more than the conv's products (ppocr-cls's first conv:
 * twice a2_row()'s time).  Slots past @ci are 0 (their weights are 0).
 * Returns the pixels done.
 */
A2_TARGET
static uint32_t a2_widen_row_planar(const uint8_t *src, int64_t cs, uint32_t w,
				    uint32_t ci, uint32_t cip, bool s8, __m128i zx,
				    int16_t *d)
{
	__m128i p[4];
	uint32_t ix, k;

	for (ix = 0; ix + 8 <= w; ix += 8, d += 8 * cip) {
		for (k = 0; k < 4; k++) {
			__m128i b;

			if (k >= ci) {
				p[k] = _mm_setzero_si128();
				continue;
			}
			b = _mm_loadl_epi64((const __m128i *)(src + (int64_t)k * cs + ix));
			p[k] = _mm_sub_epi16(s8 ? _mm_cvtepi8_epi16(b) : _mm_cvtepu8_epi16(b), zx);
		}
		if (cip == 2) {
			_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(p[0], p[1]));
			_mm_storeu_si128((__m128i *)(d + 8), _mm_unpackhi_epi16(p[0], p[1]));
		} else {
			/* 32-bit pairs (c0, c1) and (c2, c3) of pixels 0-3, 4-7. */
			__m128i a0 = _mm_unpacklo_epi16(p[0], p[1]);
			__m128i a1 = _mm_unpackhi_epi16(p[0], p[1]);
			__m128i b0 = _mm_unpacklo_epi16(p[2], p[3]);
			__m128i b1 = _mm_unpackhi_epi16(p[2], p[3]);

			_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi32(a0, b0));
			_mm_storeu_si128((__m128i *)(d + 8), _mm_unpackhi_epi32(a0, b0));
			_mm_storeu_si128((__m128i *)(d + 16), _mm_unpacklo_epi32(a1, b1));
			_mm_storeu_si128((__m128i *)(d + 24), _mm_unpackhi_epi32(a1, b1));
		}
	}
	return ix;
}

/* X - zx as dense int16 [n][h][w][cip], channels past ci zero. */
A2_TARGET
static int a2_widen_x(const struct vnpu_tv *x, uint32_t cip, int16_t *dst,
		      struct vnpu_run_ctx *rc)
{
	uint32_t n = x->dims[0], h = x->dims[1], w = x->dims[2], ci = x->dims[3];
	bool s8 = x->dtype == VNPU_DT_INT8;
	/* Pixels one run of bytes: rows convert as runs, not pixel by pixel. */
	bool dense = x->st[3] == 1 && x->st[2] == ci;
	/* A model's NCHW input seen as NHWC: each channel a plane of its own. */
	int64_t cs = x->st[3];
	__m256i zx = _mm256_set1_epi16((short)x->zp);
	uint32_t b, iy, ix, k;

	for (b = 0; b < n; b++)
		for (iy = 0; iy < h; iy++) {
			const uint8_t *row = x->p + (int64_t)b * x->st[0] + (int64_t)iy * x->st[1];
			int16_t *drow = dst + ((size_t)b * h + iy) * w * cip;

			if (vnpu_run_tick(rc, (uint64_t)w * cip))
				return -ECANCELED;
			ix = 0;
			if (dense && cip == ci) {
				size_t e = (size_t)w * ci, i;

				for (i = 0; i + 16 <= e; i += 16)
					_mm256_storeu_si256((__m256i *)(drow + i), a2_widen16(
						_mm_loadu_si128((const __m128i *)(row + i)), s8, zx));
				for (; i < e; i++)
					drow[i] = (int16_t)((s8 ? (int32_t)(int8_t)row[i] :
							     (int32_t)row[i]) - x->zp);
				continue;
			}
			if (dense && 16 % cip == 0)
				ix = a2_widen_row_odd(row, w, ci, cip, s8, zx, drow);
			else if (cs != 1 && x->st[2] == 1 && ci <= 4)
				ix = a2_widen_row_planar(row, cs, w, ci, cip, s8,
							 _mm256_castsi256_si128(zx), drow);
			for (; ix < w; ix++) {
				const uint8_t *src = x->p + (int64_t)b * x->st[0] +
						     (int64_t)iy * x->st[1] + (int64_t)ix * x->st[2];
				int16_t *d = dst + (((size_t)b * h + iy) * w + ix) * cip;

				k = 0;
				if (cs == 1)
					for (; k + 16 <= ci; k += 16) {
						__m128i v = _mm_loadu_si128((const __m128i *)(src + k));
						__m256i e = s8 ? _mm256_cvtepi8_epi16(v) :
							    _mm256_cvtepu8_epi16(v);

						_mm256_storeu_si256((__m256i *)(d + k),
								    _mm256_sub_epi16(e, zx));
					}
				for (; k < ci; k++) {
					uint8_t v = src[(int64_t)k * cs];

					d[k] = (int16_t)((s8 ? (int32_t)(int8_t)v : (int32_t)v) - x->zp);
				}
				for (; k < cip; k++)
					d[k] = 0;
			}
		}
	return 0;
}

/* ---- int8: AVX2 byte products, for 7-bit weights ---------------------- */

/*
 * vpmaddubsw multiplies unsigned by signed bytes and adds pairs of
 * products into int16 with saturation, which is why the kernel above
 * widens to int16.  But when every w - zw of a command lies in [-64, 63]
 * (7-bit weights: what onnxruntime's reduce_range writes for CPUs without
 * VNNI), a pair's sum is at most 2 x 255 x 64 = 32640 in size and never
 * saturates, so vpmaddubsw then vpmaddwd by 1 sum four exact products
 * into each int32 lane: 32 MACs per three instructions where the int16
 * form takes two for 16 (Zen 3, registers only: 99 against 83 GMAC/s),
 * and X stays bytes, half the loads.
 *
 * X is copied as unsigned bytes xu (int8 X XOR 0x80, zero point zxu =
 * zx + 128), with its padding filled with zxu, so every output pixel
 * visits every tap: a padding tap adds (zxu - zxu) * (w - zw) = 0, as the
 * reference's skipped tap adds nothing, and the sum of xu * (w - zw) less
 * the per-channel constant zxu * sum(w - zw), folded into the bias, is
 * the reference's sum, mod 2^32 as it is.  Undilated, a tap row's kw
 * pixels are one run of the copy, so its K is kw * xc bytes in groups of
 * 4 across taps (a 3-channel 5-wide first layer: 4 groups a row, where
 * the int16 form reads 5 taps of 2 pairs); bytes of a group past the run
 * have weight 0.
 */
struct b2_job {
	struct a2_job e;	/* the epilogue: bq less zxu * sum(w - zw) */
	const uint8_t *x;	/* [n][hp][wp][xc] unsigned */
	int64_t xs0, rstep;	/* bytes between images, output rows' inputs */
	int64_t pstep;		/* bytes between output pixels' inputs */
	int64_t kystep;		/* bytes between tap rows */
	int64_t segstep;	/* bytes between dilated taps of a row */
	const int8_t *w;	/* [kh][gk][cop][4] w - zw */
	uint32_t kh, gk;	/* tap rows, 4-byte groups per tap row */
	uint32_t nseg, gseg;	/* runs of X per tap row, groups per run */
};

static const int16_t b2_ones[16] __attribute__((aligned(32))) = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};

/*
 * @acc + the four products of each lane: vpmaddubsw(@xu, @w), then
 * vpmaddwd by 1 from memory, in asm as a2_madd() and for the same
 * reason; the ones stay out of the registers, which 12 accumulators, two
 * weight vectors, a broadcast and a temporary fill.
 */
A2_TARGET
static inline __m256i b2_madd(__m256i acc, __m256i xu, __m256i w)
{
	__m256i t;

	__asm__("vpmaddubsw %[w], %[x], %[t]\n\t"
		"vpmaddwd %[one], %[t], %[t]\n\t"
		"vpaddd %[t], %[acc], %[acc]"
		: [acc] "+x"(acc), [t] "=&x"(t)
		: [x] "x"(xu), [w] "x"(w), [one] "m"(*(const __m256i *)b2_ones));
	return acc;
}

/*
 * @np pixels from the one whose first tap is at @xp, by @nv vectors of 8
 * channels from @n0, stored from @yp; @np and @nv are constants after
 * inlining.
 */
A2_TARGET
static inline __attribute__((always_inline))
void b2_block(const struct b2_job *q, const uint8_t *xp, uint8_t *yp, int64_t ys2,
	      const int np, const int nv, uint32_t n0)
{
	uint32_t cop = q->e.g->cop, ky, s, g;
	__m256i acc[A2_MR_MAX][2];
	int p, v;

	for (p = 0; p < np; p++)
		for (v = 0; v < nv; v++)
			acc[p][v] = _mm256_setzero_si256();
	for (ky = 0; ky < q->kh; ky++) {
		const uint8_t *xk = xp + (int64_t)ky * q->kystep;
		const int8_t *wp = q->w + ((size_t)ky * q->gk * cop + n0) * 4;

		for (s = 0; s < q->nseg; s++) {
			const uint8_t *xs = xk + (int64_t)s * q->segstep;

			for (g = 0; g < q->gseg; g++, xs += 4, wp += 4 * (size_t)cop) {
				__m256i wv[2];

				for (v = 0; v < nv; v++)
					wv[v] = _mm256_loadu_si256((const __m256i *)(wp + 32 * v));
				for (p = 0; p < np; p++) {
					int32_t quad;
					__m256i xv;

					memcpy(&quad, xs + p * q->pstep, 4);
					xv = _mm256_set1_epi32(quad);
					for (v = 0; v < nv; v++)
						acc[p][v] = b2_madd(acc[p][v], xv, wv[v]);
				}
			}
		}
	}
	a2_finish(&q->e, yp, ys2, np, nv, n0, acc);
}

#define B2_COLUMNS(NVC) do {						\
	const int mr = A2_MR_OF(NVC), mr2 = A2_MR_OF(NVC) / 2;		\
	uint32_t ox = ox0;						\
									\
	for (; ox + mr <= ox1; ox += mr)				\
		b2_block(q, xrow + ox * q->pstep, yrow + ox * ys2, ys2,	\
			 mr, NVC, n0);					\
	if (ox + mr2 <= ox1) {						\
		b2_block(q, xrow + ox * q->pstep, yrow + ox * ys2, ys2,	\
			 mr2, NVC, n0);					\
		ox += mr2;						\
	}								\
	for (; ox < ox1; ox++)						\
		b2_block(q, xrow + ox * q->pstep, yrow + ox * ys2, ys2,	\
			 1, NVC, n0);					\
} while (0)

/* Columns [ox0, ox1) of the output row at @yrow, its inputs at @xrow. */
A2_TARGET
static void b2_row(const struct b2_job *q, const uint8_t *xrow, uint8_t *yrow,
		   int64_t ys2, uint32_t ox0, uint32_t ox1)
{
	uint32_t cop = q->e.g->cop, n0;

	for (n0 = 0; n0 < cop; n0 += 16) {
		if (cop - n0 >= 16)
			B2_COLUMNS(2);
		else
			B2_COLUMNS(1);
	}
}

static int b2_rows(const struct b2_job *q, uint32_t rows, struct vnpu_run_ctx *rc)
{
	const struct cv_job *j = q->e.g;
	const struct vnpu_tv *y = j->y;
	int64_t ys2 = y->st[2] * y->esize;
	uint32_t rr, ox0, ox1;

	for (rr = 0; rr < rows; rr++) {
		uint32_t b = rr / j->oh, oy = rr % j->oh;
		const uint8_t *xrow = q->x + (int64_t)b * q->xs0 + (int64_t)oy * q->rstep;
		uint8_t *yrow = y->p + (int64_t)b * y->st[0] + (int64_t)oy * y->st[1];

		for (ox0 = 0; ox0 < j->ow; ox0 = ox1) {
			ox1 = j->ow - ox0 < j->seg ? j->ow : ox0 + j->seg;
			if (vnpu_run_tick(rc, (uint64_t)(ox1 - ox0) * j->cop *
					  (1 + (uint64_t)j->kh * j->kw * j->ci)))
				return -ECANCELED;
			b2_row(q, xrow, yrow, ys2, ox0, ox1);
		}
	}
	return 0;
}

/*
 * One row of @w pixels of X in up to 4 channel planes @cs bytes apart
 * into 4 bytes a pixel, 16 pixels at a time; bytes past @ci are @fill.
 * Returns the pixels done.
 */
A2_TARGET
static uint32_t b2_interleave4(const uint8_t *src, int64_t cs, uint32_t w, uint32_t ci,
			       uint8_t flip, uint8_t fill, uint8_t *d)
{
	__m128i f = _mm_set1_epi8((char)flip), p[4];
	uint32_t ix, k;

	for (ix = 0; ix + 16 <= w; ix += 16, d += 64) {
		__m128i a0, a1, b0, b1;

		for (k = 0; k < 4; k++)
			p[k] = k < ci ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)
						(src + (int64_t)k * cs + ix)), f) :
					_mm_set1_epi8((char)fill);
		a0 = _mm_unpacklo_epi8(p[0], p[1]);
		a1 = _mm_unpackhi_epi8(p[0], p[1]);
		b0 = _mm_unpacklo_epi8(p[2], p[3]);
		b1 = _mm_unpackhi_epi8(p[2], p[3]);
		_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a0, b0));
		_mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a0, b0));
		_mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(a1, b1));
		_mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(a1, b1));
	}
	return ix;
}

/* @n bytes XOR @flip: int8 made unsigned, or a plain copy. */
A2_TARGET
static void b2_copy_flip(const uint8_t *src, size_t n, uint8_t flip, uint8_t *d)
{
	__m256i f = _mm256_set1_epi8((char)flip);
	size_t i = 0;

	if (!flip) {
		memcpy(d, src, n);
		return;
	}
	for (; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(d + i), _mm256_xor_si256(
			_mm256_loadu_si256((const __m256i *)(src + i)), f));
	for (; i < n; i++)
		d[i] = src[i] ^ flip;
}

/*
 * X as unsigned bytes [n][hp][wp][xc] at @dst: @pt rows and @pl columns
 * of @zxu before each image's pixels, @zxu after them and in channels
 * past ci.
 */
A2_TARGET
static int b2_copy_x(const struct vnpu_tv *x, uint32_t xc, uint32_t hp, uint32_t wp,
		     uint32_t pt, uint32_t pl, uint8_t zxu, uint8_t *dst,
		     struct vnpu_run_ctx *rc)
{
	uint32_t n = x->dims[0], h = x->dims[1], w = x->dims[2], ci = x->dims[3];
	uint8_t flip = x->dtype == VNPU_DT_INT8 ? 0x80 : 0;
	bool dense = x->st[3] == 1 && x->st[2] == ci && xc == ci;
	bool planar = !dense && x->st[2] == 1 && ci <= 4 && xc == 4;
	size_t rowb = (size_t)wp * xc, tail = (size_t)(wp - pl - w) * xc;
	uint32_t b, r, ix, k;

	for (b = 0; b < n; b++)
		for (r = 0; r < hp; r++) {
			uint8_t *d = dst + ((size_t)b * hp + r) * rowb;
			const uint8_t *row;

			if (vnpu_run_tick(rc, rowb))
				return -ECANCELED;
			if (r < pt || r - pt >= h) {
				memset(d, zxu, rowb);
				continue;
			}
			row = x->p + (int64_t)b * x->st[0] + (int64_t)(r - pt) * x->st[1];
			memset(d, zxu, (size_t)pl * xc);
			d += (size_t)pl * xc;
			memset(d + (size_t)w * xc, zxu, tail);
			if (dense) {
				b2_copy_flip(row, (size_t)w * ci, flip, d);
				continue;
			}
			ix = planar ? b2_interleave4(row, x->st[3], w, ci, flip, zxu, d) : 0;
			for (; ix < w; ix++) {
				const uint8_t *src = row + (int64_t)ix * x->st[2];
				uint8_t *dp = d + (size_t)ix * xc;

				for (k = 0; k < ci; k++)
					dp[k] = src[(int64_t)k * x->st[3]] ^ flip;
				for (; k < xc; k++)
					dp[k] = zxu;
			}
		}
	return 0;
}

/* The sum of @v's eight int32 lanes. */
A2_TARGET
static inline uint32_t b2_hsum(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return (uint32_t)_mm_cvtsi128_si32(s);
}

/*
 * Channels [n, n + 8) of a dense W of @wbytes bytes, tap row @ky's @l
 * bytes, into their groups: per 32 bytes, each channel's w - zw checked
 * against [-64, 63] (w against [zw - 64, zw + 63] within its type, in
 * bytes) and summed into @wsum, then eight channels' eight groups
 * transposed in registers, one 32-byte store a group, where a byte at a
 * time cost more than a 1x1 conv's products over a small image.  Bytes
 * past @l and channels from @co on count as zw (w - zw = 0); a load
 * that would pass W's end goes through a staging copy.  Returns false
 * when a byte is out of range.
 */
A2_TARGET
static bool b2_pack_w8(const struct vnpu_tv *w, uint64_t wbytes, uint32_t n, uint32_t co,
		       uint32_t ky, uint32_t l, uint32_t gk, uint32_t cop, int8_t *dst,
		       uint32_t *wsum)
{
	int32_t tlo = w->dtype == VNPU_DT_INT8 ? -128 : 0;
	/* uint8 compares as signed bytes once XORed with 0x80 */
	__m256i flip = _mm256_set1_epi8(w->dtype == VNPU_DT_INT8 ? 0 : (char)0x80);
	__m256i zb[8], lo[8], hi[8], sum[8], bad = _mm256_setzero_si256();
	__m256i one8 = _mm256_set1_epi8(1), one16 = _mm256_set1_epi16(1);
	__m256i idx = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
				       16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
				       29, 30, 31);
	uint32_t k, r, g, ng = (l + 3) / 4;

	for (r = 0; r < 8; r++) {
		int32_t zw = n + r < co ? vnpu_tv_zp(w, n + r) : 0;
		int32_t a = zw - 64 < tlo ? tlo : zw - 64;
		int32_t b = zw + 63 > tlo + 255 ? tlo + 255 : zw + 63;
		int32_t sh = w->dtype == VNPU_DT_INT8 ? 0 : 128;

		zb[r] = _mm256_set1_epi8((char)(uint8_t)zw);
		lo[r] = _mm256_set1_epi8((char)(a - sh));
		hi[r] = _mm256_set1_epi8((char)(b - sh));
		sum[r] = _mm256_setzero_si256();
	}
	for (k = 0; k < l; k += 32) {
		__m256i v[8], t[8], u[8], o[8];
		__m256i live = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(l - k < 32 ? l - k : 32)),
						 idx);
		int8_t *d = dst + (((size_t)ky * gk + k / 4) * cop + n) * 4;

		for (r = 0; r < 8; r++) {
			uint64_t off = (uint64_t)(n + r) * w->st[0] + (uint64_t)ky * w->st[1] + k;
			__m256i b;

			if (n + r >= co) {
				v[r] = _mm256_setzero_si256();
				continue;
			}
			if (off + 32 <= wbytes) {
				b = _mm256_loadu_si256((const __m256i *)(w->p + off));
			} else {
				uint8_t stage[32] = { 0 };

				memcpy(stage, w->p + off, wbytes - off);
				b = _mm256_loadu_si256((const __m256i *)stage);
			}
			b = _mm256_blendv_epi8(zb[r], b, live);
			{
				__m256i bs = _mm256_xor_si256(b, flip);

				bad = _mm256_or_si256(bad, _mm256_or_si256(
					_mm256_cmpgt_epi8(lo[r], bs), _mm256_cmpgt_epi8(bs, hi[r])));
			}
			/* In [-64, 63]: the byte difference is exact. */
			v[r] = _mm256_sub_epi8(b, zb[r]);
			sum[r] = _mm256_add_epi32(sum[r], _mm256_madd_epi16(
				_mm256_maddubs_epi16(one8, v[r]), one16));
		}
		for (r = 0; r < 8; r += 2) {
			t[r] = _mm256_unpacklo_epi32(v[r], v[r + 1]);
			t[r + 1] = _mm256_unpackhi_epi32(v[r], v[r + 1]);
		}
		for (r = 0; r < 8; r += 4) {
			u[r] = _mm256_unpacklo_epi64(t[r], t[r + 2]);
			u[r + 1] = _mm256_unpackhi_epi64(t[r], t[r + 2]);
			u[r + 2] = _mm256_unpacklo_epi64(t[r + 1], t[r + 3]);
			u[r + 3] = _mm256_unpackhi_epi64(t[r + 1], t[r + 3]);
		}
		for (r = 0; r < 4; r++) {
			o[r] = _mm256_permute2x128_si256(u[r], u[r + 4], 0x20);
			o[r + 4] = _mm256_permute2x128_si256(u[r], u[r + 4], 0x31);
		}
		/* The row's last groups end within this block. */
		for (g = 0; g < 8 && k / 4 + g < ng; g++)
			_mm256_storeu_si256((__m256i *)(d + (size_t)g * cop * 4), o[g]);
	}
	if (!_mm256_testz_si256(bad, bad))
		return false;
	for (r = 0; r < 8 && n + r < co; r++)
		wsum[n + r] += b2_hsum(sum[r]);
	return true;
}

/*
 * W - zw as [kh][gk][cop][4] bytes, a tap row's kx taps @tapb bytes apart
 * in its groups (xc undilated, whole groups of xc dilated), and each
 * channel's sum(w - zw) at @wsum; 1 when some w - zw is outside
 * [-64, 63] (this kernel cannot take it), -ECANCELED.
 */
static int b2_pack_w(const struct vnpu_tv *w, uint32_t co, uint32_t cop, uint32_t gk,
		     uint32_t tapb, int8_t *dst, uint32_t *wsum, struct vnpu_run_ctx *rc)
{
	uint32_t kh = w->dims[1], kw = w->dims[2], ci = w->dims[3], n, ky, kx, k;
	bool s8 = w->dtype == VNPU_DT_INT8;

	memset(wsum, 0, sizeof(*wsum) * co);
	/* Tap rows one run of bytes, in the groups' order: 8 channels at a time. */
	if (w->st[3] == 1 && w->st[2] == ci && w->st[1] >= 0 && w->st[0] >= 0 && tapb == ci) {
		uint64_t wbytes = (uint64_t)(co - 1) * w->st[0] + (uint64_t)(kh - 1) * w->st[1] +
				  (uint64_t)kw * ci;

		for (n = 0; n < co; n += 8) {
			if (vnpu_run_tick(rc, (uint64_t)8 * kh * kw * ci))
				return -ECANCELED;
			for (ky = 0; ky < kh; ky++)
				if (!b2_pack_w8(w, wbytes, n, co, ky, kw * ci, gk, cop, dst, wsum))
					return 1;
		}
		return 0;
	}
	for (n = 0; n < co; n++) {
		int32_t zw = vnpu_tv_zp(w, n);
		uint32_t sum = 0;

		if (vnpu_run_tick(rc, (uint64_t)kh * kw * ci))
			return -ECANCELED;
		for (ky = 0; ky < kh; ky++)
			for (kx = 0; kx < kw; kx++) {
				const uint8_t *src = w->p + (int64_t)n * w->st[0] +
						     (int64_t)ky * w->st[1] +
						     (int64_t)kx * w->st[2];
				int8_t *dk = dst + ((size_t)ky * gk * cop + n) * 4;

				for (k = 0; k < ci; k++) {
					uint32_t j = kx * tapb + k;
					uint8_t b = src[(int64_t)k * w->st[3]];
					int32_t v = (s8 ? (int32_t)(int8_t)b : (int32_t)b) - zw;

					if (v < -64 || v > 63)
						return 1;
					dk[(size_t)j / 4 * cop * 4 + j % 4] = (int8_t)v;
					sum += (uint32_t)v;
				}
			}
		wsum[n] = sum;
	}
	return 0;
}

/*
 * The byte-product conv, given the epilogue @q0 (bias at bq) and the
 * geometry @j: 0, -ENOMEM, -ECANCELED, or 1 when it cannot take the
 * command (weights past 7 bits, no memory for its copy of X).
 */
static int conv_i8_bytes(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
			 const struct a2_job *q0, struct cv_job *j, bool flat,
			 struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *y = &t[3];
	uint32_t kh = j->kh, kw = j->kw, ci = j->ci, co = j->co, cop = j->cop;
	uint32_t h = x->dims[1], wd = x->dims[2], oh = y->dims[1], ow = y->dims[2];
	uint32_t pt = at->pad_top, pl = at->pad_left, dh = at->dilation_h;
	uint32_t dw = at->dilation_w, xc, gseg, nseg, gk, hp, wp, n;
	bool dense = x->st[3] == 1 && x->st[2] == ci;
	uint8_t zxu = (uint8_t)(x->zp + (x->dtype == VNPU_DT_INT8 ? 128 : 0));
	uint32_t *wsum = NULL, *bq = NULL;
	int8_t *wb = NULL;
	uint8_t *xb = NULL;
	struct b2_job q;
	uint64_t need;
	int ret = 1;

	/* Channels a plane apart interleave 4 a pixel; others stay as they are. */
	xc = !dense && x->st[2] == 1 && ci <= 4 ? 4 : ci;
	if (dw == 1) {
		nseg = 1;
		gk = gseg = (kw * xc + 3) / 4;
	} else {
		nseg = kw;
		gseg = (xc + 3) / 4;
		gk = kw * gseg;
	}
	hp = (oh - 1) * at->stride_h + (kh - 1) * dh + 1;
	wp = (ow - 1) * at->stride_w + (kw - 1) * dw + 1;
	if (hp < pt + h)
		hp = pt + h;
	if (wp < pl + wd)
		wp = pl + wd;
	wb = vnpu_run_calloc(rc, (size_t)kh * gk * cop * 4, 1);
	wsum = vnpu_run_alloc(rc, sizeof(uint32_t) * co);
	bq = vnpu_run_alloc(rc, sizeof(uint32_t) * cop);
	if (!wb || !wsum || !bq) {
		ret = -ENOMEM;
		goto out;
	}
	ret = b2_pack_w(w, co, cop, gk, dw == 1 ? xc : 4 * gseg, wb, wsum, rc);
	if (ret)
		goto out;
	memcpy(bq, q0->bq, sizeof(uint32_t) * cop);
	for (n = 0; n < co; n++)
		bq[n] -= (uint32_t)zxu * wsum[n];
	/*
	 * Unsigned X with channels in place and nothing around it is read
	 * where it is; the groups of a multiple of 4 channels end within it.
	 */
	if (x->dtype == VNPU_DT_UINT8 && dense && ci % 4 == 0 && hp == h && wp == wd &&
	    x->st[1] == (int64_t)wd * ci) {
		q.x = x->p;
		q.xs0 = x->st[0];
	} else {
		/* Sizes within the command's limits; 4 bytes a group may read past. */
		need = (uint64_t)x->dims[0] * hp * wp * xc;
		xb = vnpu_run_alloc(rc, need + 4);
		if (!xb) {
			ret = 1;
			goto out;
		}
		memset(xb + need, zxu, 4);
		ret = b2_copy_x(x, xc, hp, wp, pt, pl, zxu, xb, rc);
		if (ret)
			goto out;
		q.x = xb;
		q.xs0 = (int64_t)hp * wp * xc;
	}
	q.e = *q0;
	q.e.bq = (const int32_t *)bq;
	q.e.g = j;
	q.kystep = (int64_t)dh * wp * xc;
	q.pstep = (int64_t)at->stride_w * xc;
	q.rstep = (int64_t)at->stride_h * wp * xc;
	q.segstep = (int64_t)dw * xc;
	q.w = wb;
	q.kh = kh;
	q.gk = gk;
	q.nseg = nseg;
	q.gseg = gseg;
	/* The flattened 1x1 conv (see conv_i8_avx2()): one row of every pixel. */
	if (flat)
		q.rstep = 0;
	if (rc)
		rc->path = VNPU_ENG_CONV_I8_BYTES;
	ret = b2_rows(&q, y->dims[0] * j->oh, rc);
out:
	vnpu_run_free(rc, wb);
	vnpu_run_free(rc, wsum);
	vnpu_run_free(rc, bq);
	vnpu_run_free(rc, xb);
	return ret;
}

/*
 * The AVX2 direct conv: 0, -ENOMEM, -ECANCELED, or 1 for the im2col path
 * (another epilogue, or no memory for the widened X, which im2col does
 * without).  7-bit weights take the byte-product kernel.
 */
static int conv_i8_avx2(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
			struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], ci = w->dims[3], co = y->dims[3];
	uint32_t cop = vnpu_round_up(co, 8), cip = vnpu_round_up(ci, 2), ow = y->dims[2];
	uint32_t taps = kh * kw, tap, k, n, ox;
	bool dense = w->st[3] == 1 && w->st[2] == ci && w->st[1] == (int64_t)kw * ci;
	bool flat = false;
	int16_t *wp = NULL, *xw = NULL;
	int32_t *qi = NULL;
	float *qf = NULL;
	uint32_t *kxr = NULL;
	struct vnpu_epi e;
	struct cv_job j;
	struct a2_job q;
	bool nan_free = true;
	int ret = -ENOMEM;

	memset(&j, 0, sizeof(j));
	qi = vnpu_run_calloc(rc, 2 * (size_t)cop, sizeof(int32_t));
	qf = vnpu_run_calloc(rc, 3 * (size_t)cop, sizeof(float));
	kxr = vnpu_run_alloc(rc, sizeof(uint32_t) * 2 * ow);
	if (!qi || !qf || !kxr)
		goto out;
	for (n = 0; n < co; n++) {
		/* Per channel only through W's or Y's per-channel scales. */
		if (!n || w->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL)
			vnpu_epi_init(&e, c, x, w, y, n);
		if (e.mode != VNPU_EPI_REQUANT || e.round != VNPU_ROUND_ONNX) {
			ret = 1;
			goto out;
		}
		if (bias->p)
			memcpy(&qi[n], bias->p + (int64_t)n * bias->st[0] * 4, 4);
		qi[cop + n] = e.out_zp;
		qf[n] = e.fmult;
		if (!isfinite(e.fmult))
			nan_free = false;
		qf[cop + n] = (float)(e.lo - e.out_zp);
		qf[2 * cop + n] = (float)(e.hi - e.out_zp);
	}
	for (ox = 0; ox < ow; ox++)
		cv_tap_range((int64_t)ox * at->stride_w - at->pad_left, at->dilation_w, kw,
			     x->dims[2], &kxr[ox], &kxr[ow + ox]);
	j = (struct cv_job){ .c = c, .x = x, .y = y, .kh = kh, .kw = kw, .ci = ci,
		.co = co, .cop = cop, .ow = ow, .oh = y->dims[1], .sw = at->stride_w,
		.pl = at->pad_left, .dw = at->dilation_w, .kx0s = kxr, .kx1s = kxr + ow };
	for (ox = 0; ox < ow; ox++)
		if (kxr[ox] == 0 && kxr[ow + ox] == kw) {
			if (!j.full1)
				j.full0 = ox;
			j.full1 = ox + 1;
		}
	q = (struct a2_job){ .g = &j, .xs2 = cip,
		.xs1 = (int64_t)x->dims[2] * cip,
		.xs0 = (int64_t)x->dims[1] * x->dims[2] * cip, .cip = cip,
		.s8out = y->dtype == VNPU_DT_INT8, .nan_free = nan_free, .bq = qi,
		.zp = qi + cop, .fm = qf,
		.flo = qf + cop, .fhi = qf + 2 * cop };
	/* A 1x1, stride 1, unpadded conv: X is one row of pixels. */
	if (kh == 1 && kw == 1 && at->stride_h == 1 && at->stride_w == 1 &&
	    !at->pad_top && !at->pad_left && y->dims[1] == x->dims[1] &&
	    y->dims[2] == x->dims[2] && y->st[1] == (int64_t)ow * y->st[2]) {
		flat = true;
		j.ow *= y->dims[1];
		j.oh = 1;
		j.full0 = 0;
		j.full1 = j.ow;
		vnpu_run_free(rc, kxr);
		kxr = vnpu_run_calloc(rc, 2 * (size_t)j.ow, sizeof(uint32_t));
		if (!kxr)
			goto out;
		for (ox = 0; ox < j.ow; ox++)
			kxr[j.ow + ox] = 1;
		j.kx0s = kxr;
		j.kx1s = kxr + j.ow;
	}
	{
		uint64_t col = (uint64_t)cop * (taps * cip + 1);

		/* Segments of about 2^24 MACs in whole blocks (48 = 4 x 12). */
		j.seg = (uint32_t)((1u << 24) / col);
		if (j.seg >= 48)
			j.seg = j.seg / 48 * 48;
		else if (48 * col <= VNPU_POLL_BLOCK)
			j.seg = 48;
		else if (!j.seg)
			j.seg = 1;
	}
	ret = conv_i8_bytes(c, t, &q, &j, flat, rc);
	if (ret <= 0)
		goto out;
	/* taps * cip * cop is W's size rounded up: within the limits. */
	ret = -ENOMEM;
	wp = vnpu_run_calloc(rc, (size_t)taps * cip * cop, sizeof(int16_t));
	if (!wp)
		goto out;
	for (n = 0; n < co; n++) {
		int32_t zw = vnpu_tv_zp(w, n);

		if (vnpu_run_tick(rc, (uint64_t)taps * ci)) {
			ret = -ECANCELED;
			goto out;
		}
		/* Dense W: whole groups of 8 channels, 16 k at a time, below. */
		k = dense && n < co / 8 * 8 ? ci / 16 * 16 : 0;
		for (tap = 0; tap < taps; tap++) {
			const uint8_t *src = w->p + (int64_t)n * w->st[0] +
					     (int64_t)(tap / kw) * w->st[1] +
					     (int64_t)(tap % kw) * w->st[2];
			int16_t *dst = wp + ((size_t)tap * (cip / 2) * cop + n) * 2;
			uint32_t kk;

			for (kk = k; kk < ci; kk++) {
				const uint8_t *pw = src + (int64_t)kk * w->st[3];
				int32_t v = w->dtype == VNPU_DT_INT8 ? (int8_t)*pw : *pw;

				dst[(size_t)(kk / 2) * cop * 2 + kk % 2] = (int16_t)(v - zw);
			}
		}
	}
	if (dense)
		for (n = 0; n + 8 <= co; n += 8) {
			if (vnpu_run_tick(rc, (uint64_t)8 * taps * ci)) {
				ret = -ECANCELED;
				goto out;
			}
			a2_pack_w8(w, n, taps, ci, cip, cop, wp);
		}
	/* A multiple of 2^8 bytes past the others: the widened X, else im2col. */
	xw = vnpu_run_alloc(rc, sizeof(int16_t) * x->dims[0] * x->dims[1] *
				(size_t)x->dims[2] * cip);
	if (!xw) {
		ret = 1;
		goto out;
	}
	if (a2_widen_x(x, cip, xw, rc)) {
		ret = -ECANCELED;
		goto out;
	}
	q.x = xw;
	q.w = wp;
	if (rc)
		rc->path = VNPU_ENG_CONV_I8;
	ret = a2_rows(&q, 0, y->dims[0] * j.oh, rc);
out:
	vnpu_run_free(rc, wp);
	vnpu_run_free(rc, xw);
	vnpu_run_free(rc, qi);
	vnpu_run_free(rc, qf);
	vnpu_run_free(rc, kxr);
	return ret;
}

static bool have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

static bool have_vnni(void)
{
	__builtin_cpu_init();
	return have_avx512() && __builtin_cpu_supports("avx512vnni");
}

static bool q8(uint8_t dt)
{
	return dt == VNPU_DT_UINT8 || dt == VNPU_DT_INT8;
}

bool vnpu_eng_conv_i8_ok(const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info, const struct vnpu_tv *t,
			 const struct vnpu_run_ctx *rc)
{
	const struct vnpu_tv *x = &t[0], *w = &t[1], *y = &t[3];
	uint64_t k = (uint64_t)w->dims[1] * w->dims[2] * vnpu_round_up(w->dims[3], 4);

	if (c->hdr.opcode != VNPU_OP_CONV2D || !info->quantized || c->attr.conv.groups != 1 ||
	    !q8(x->dtype) || !q8(w->dtype) || !q8(y->dtype) || y->st[3] != 1)
		return false;
	/*
	 * The VNNI kernel reads X's channels in place, 4 bytes at a time; the
	 * AVX2 one reads X only through a2_widen_x(), which takes channels a
	 * plane apart too (a model's NCHW input, as its first conv gets it).
	 */
	switch (vnpu_i8_kernel_resolve(rc ? rc->i8_kernel : VNPU_I8_AUTO)) {
	case VNPU_I8_VNNI:
		if (!have_vnni() || x->st[3] != 1)
			return false;
		break;
	case VNPU_I8_AVX2:
		if (!have_avx2())
			return false;
		break;
	default:
		return false;
	}
	return (uint64_t)vnpu_round_up(y->dims[3], 16) * (k + 1) <= VNPU_POLL_BLOCK;
}

int vnpu_eng_conv_i8(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], ci = w->dims[3], co = y->dims[3];
	uint32_t cop = vnpu_round_up(co, 16), cip = vnpu_round_up(ci, 4), ow = y->dims[2];
	uint32_t taps = kh * kw, tap, k, n, ox;
	uint8_t bxor = w->dtype == VNPU_DT_UINT8 ? 0x80 : 0;
	int8_t *wp = NULL;
	int32_t *wsum = NULL, *qi = NULL;
	float *qf = NULL;
	uint32_t *kxr = NULL;
	struct vnpu_epi e;
	struct cv_job j;
	struct q8_job q;
	int ret = -ENOMEM;

	(void)info;
	if (vnpu_i8_kernel_resolve(rc ? rc->i8_kernel : VNPU_I8_AUTO) == VNPU_I8_AVX2)
		return conv_i8_avx2(c, t, rc);
	memset(&j, 0, sizeof(j));
	memset(&q, 0, sizeof(q));
	/* taps * cip * cop is W's size rounded up: within the limits. */
	wp = vnpu_run_calloc(rc, (size_t)taps * cip * cop, 1);
	wsum = vnpu_run_calloc(rc, (size_t)taps * cop, sizeof(int32_t));
	qi = vnpu_run_calloc(rc, 2 * (size_t)cop, sizeof(int32_t));
	qf = vnpu_run_calloc(rc, 3 * (size_t)cop, sizeof(float));
	kxr = vnpu_run_alloc(rc, sizeof(uint32_t) * 2 * ow);
	if (!wp || !wsum || !qi || !qf || !kxr)
		goto out;
	for (n = 0; n < co; n++) {
		if (vnpu_run_tick(rc, (uint64_t)taps * ci)) {
			ret = -ECANCELED;
			goto out;
		}
		/* Only a zero shifted weight zero point: else the im2col path. */
		if (vnpu_tv_zp(w, n) - (bxor ? 128 : 0)) {
			ret = 1;
			goto out;
		}
		/* Per channel only through W's or Y's per-channel scales. */
		if (!n || w->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL)
			vnpu_epi_init(&e, c, x, w, y, n);
		if (e.mode != VNPU_EPI_REQUANT || e.round != VNPU_ROUND_ONNX) {
			ret = 1;
			goto out;
		}
		if (bias->p)
			memcpy(&qi[n], bias->p + (int64_t)n * bias->st[0] * 4, 4);
		qi[cop + n] = e.out_zp;
		qf[n] = e.fmult;
		qf[cop + n] = (float)(e.lo - e.out_zp);
		qf[2 * cop + n] = (float)(e.hi - e.out_zp);
		for (tap = 0; tap < taps; tap++) {
			const uint8_t *src = w->p + (int64_t)n * w->st[0] +
					     (int64_t)(tap / kw) * w->st[1] +
					     (int64_t)(tap % kw) * w->st[2];
			int8_t *dst = wp + ((size_t)tap * (cip / 4) * cop + n) * 4;
			int32_t sum = 0;

			if (w->st[3] == 1) {
				/* Four bytes of a k group move as one word. */
				uint32_t xor4 = bxor * 0x01010101u, u;

				for (k = 0; k < ci; k++)
					sum += (int8_t)(src[k] ^ bxor);
				for (k = 0; k + 4 <= ci; k += 4) {
					memcpy(&u, src + k, 4);
					u ^= xor4;
					memcpy(dst + (size_t)(k / 4) * cop * 4, &u, 4);
				}
				for (; k < ci; k++)
					dst[(size_t)(k / 4) * cop * 4 + k % 4] = (int8_t)(src[k] ^ bxor);
			} else {
				for (k = 0; k < ci; k++) {
					int8_t v = (int8_t)(src[(int64_t)k * w->st[3]] ^ bxor);

					dst[(size_t)(k / 4) * cop * 4 + k % 4] = v;
					sum += v;
				}
			}
			wsum[(size_t)tap * cop + n] = sum;
		}
	}
	for (ox = 0; ox < ow; ox++)
		cv_tap_range((int64_t)ox * at->stride_w - at->pad_left, at->dilation_w, kw,
			     x->dims[2], &kxr[ox], &kxr[ow + ox]);
	j = (struct cv_job){ .c = c, .x = x, .y = y, .kh = kh, .kw = kw, .ci = ci,
		.co = co, .cop = cop, .ow = ow, .oh = y->dims[1], .xs1 = x->st[1],
		.xs2 = x->st[2], .sw = at->stride_w, .pl = at->pad_left,
		.dw = at->dilation_w, .kx0s = kxr, .kx1s = kxr + ow };
	for (ox = 0; ox < ow; ox++)
		if (kxr[ox] == 0 && kxr[ow + ox] == kw) {
			if (!j.full1)
				j.full0 = ox;
			j.full1 = ox + 1;
		}
	if (cv_flatten(&j, &kxr, rc))
		goto out;
	q = (struct q8_job){ .g = &j, .w = wp, .wsum = wsum, .cip = cip,
		.axor4 = x->dtype == VNPU_DT_INT8 ? 0x80808080u : 0,
		.za = x->zp + (x->dtype == VNPU_DT_INT8 ? 128 : 0),
		.bq = qi, .zp = qi + cop, .fm = qf, .flo = qf + cop, .fhi = qf + 2 * cop };
	{
		uint64_t col = (uint64_t)cop * (taps * cip + 1);

		j.seg = (uint32_t)((1u << 24) / col);
		if (j.seg >= 48)
			j.seg = j.seg / 48 * 48;
		else if (48 * col <= VNPU_POLL_BLOCK)
			j.seg = 48;
		else if (!j.seg)
			j.seg = 1;
	}
	ret = q8_rows(&q, 0, y->dims[0] * j.oh, rc);
out:
	vnpu_run_free(rc, wp);
	vnpu_run_free(rc, wsum);
	vnpu_run_free(rc, qi);
	vnpu_run_free(rc, qf);
	vnpu_run_free(rc, kxr);
	return ret;
}
#else
bool vnpu_eng_conv_i8_ok(const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info, const struct vnpu_tv *t,
			 const struct vnpu_run_ctx *rc)
{
	(void)c, (void)info, (void)t, (void)rc;
	return false;
}

int vnpu_eng_conv_i8(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc)
{
	(void)c, (void)info, (void)t, (void)rc;
	return -EINVAL;
}

bool vnpu_eng_conv_f32_ok(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, const struct vnpu_tv *t,
			  const struct vnpu_run_ctx *rc)
{
	(void)c, (void)info, (void)t, (void)rc;
	return false;
}

int vnpu_eng_conv_f32(const struct vnpu_cmd_compute *c,
		      const struct vnpu_op_info *info, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	(void)c, (void)info, (void)t, (void)rc;
	return -EINVAL;
}
#endif
