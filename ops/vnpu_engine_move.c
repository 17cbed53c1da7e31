// SPDX-License-Identifier: MIT
/*
 * The engine's data-movement paths (COPY, RESIZE).  The reference visits Y one
 * element at a time with full index vectors; here Y is walked a row (its
 * innermost dimension) at a time: the outer indices are mapped to X once
 * per row, a row splits into border / inside / border runs, and an inside
 * run of equal dtypes over unit strides is one memcpy().  Results are
 * those of the reference exactly: the same vnpu_copy_src() mapping and
 * the same vnpu_ld()/vnpu_st() conversions, element for element, or
 * for an 8-bit X a table of their results for each byte.
 */
#include <errno.h>
#include <string.h>

#include "vnpu_engine.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Move @n elements of @es bytes between strided rows (strides in bytes). */
static void move_raw(uint8_t *dst, int64_t dstep, const uint8_t *src,
		     int64_t sstep, uint32_t n, uint32_t es)
{
	uint32_t i;

	if (dstep == es && sstep == es) {
		memcpy(dst, src, (size_t)n * es);
		return;
	}
	switch (es) {
	case 1:
		for (i = 0; i < n; i++)
			dst[i * dstep] = src[i * sstep];
		break;
	case 2:
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, src + i * sstep, 2);
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, src + i * sstep, 4);
		break;
	}
}

static float fill_value(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

/* Advance @idx over the first @n of @ext; false after the last. */
static bool rows_next(uint32_t *idx, const uint32_t *ext, int n)
{
	int d;

	for (d = n - 1; d >= 0; d--) {
		if (++idx[d] < ext[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

/* Elements moved between two polls of the abort flag on a row. */
#define RUN_MAX	(1u << 16)

/*
 * Edge of the tiles a transposing copy moves at a time; a tile one of
 * whose sides is shorter (NHWC <-> NCHW of 3 channels) grows along the
 * other to about TILE * TILE elements.
 */
#define TILE	32

/*
 * Transposing kernels: Y[i][j] = X[j][i] for i < ni, j < nj, each row
 * contiguous, Y's rows @ys bytes apart and X's @xs.  Blocks of 8 x 8 go
 * through registers (unpacks, as in any SIMD transpose), so both sides
 * are read and written a vector at a time; the rest element by element.
 * Bytes are moved, never interpreted: the same bits as move_raw().
 */
#if defined(__x86_64__) && defined(__GNUC__)
static void t8x8_b8(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs)
{
	__m128i r[8], a[8], b[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = _mm_loadl_epi64((const __m128i *)(const void *)(x + i * xs));
	for (i = 0; i < 4; i++)
		a[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
	for (i = 0; i < 2; i++) {
		b[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
		b[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
	}
	a[0] = _mm_unpacklo_epi32(b[0], b[2]);
	a[1] = _mm_unpackhi_epi32(b[0], b[2]);
	a[2] = _mm_unpacklo_epi32(b[1], b[3]);
	a[3] = _mm_unpackhi_epi32(b[1], b[3]);
	for (i = 0; i < 4; i++) {
		_mm_storel_epi64((__m128i *)(void *)(y + 2 * i * ys), a[i]);
		_mm_storel_epi64((__m128i *)(void *)(y + (2 * i + 1) * ys),
				 _mm_unpackhi_epi64(a[i], a[i]));
	}
}

static void t8x8_b16(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs)
{
	__m128i r[8], a[8], b[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = _mm_loadu_si128((const __m128i *)(const void *)(x + i * xs));
	for (i = 0; i < 4; i++) {
		a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
		a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
	}
	/* a[2p + h]: rows 2p, 2p+1 interleaved, columns 4h..4h+3. */
	for (i = 0; i < 2; i++) {
		b[4 * i] = _mm_unpacklo_epi32(a[4 * i], a[4 * i + 2]);
		b[4 * i + 1] = _mm_unpackhi_epi32(a[4 * i], a[4 * i + 2]);
		b[4 * i + 2] = _mm_unpacklo_epi32(a[4 * i + 1], a[4 * i + 3]);
		b[4 * i + 3] = _mm_unpackhi_epi32(a[4 * i + 1], a[4 * i + 3]);
	}
	/* b[4q + c/2]: rows 4q..4q+3 of columns c, c+1 (c even). */
	for (i = 0; i < 4; i++) {
		_mm_storeu_si128((__m128i *)(void *)(y + 2 * i * ys),
				 _mm_unpacklo_epi64(b[i], b[4 + i]));
		_mm_storeu_si128((__m128i *)(void *)(y + (2 * i + 1) * ys),
				 _mm_unpackhi_epi64(b[i], b[4 + i]));
	}
}

#define MV_AVX2	__attribute__((target("avx2")))

MV_AVX2 static void t8x8_b32(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs)
{
	__m256 r[8], a[8], b[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = _mm256_loadu_ps((const float *)(const void *)(x + i * xs));
	for (i = 0; i < 4; i++) {
		a[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		a[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	for (i = 0; i < 2; i++) {
		b[4 * i] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0x44);
		b[4 * i + 1] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0xee);
		b[4 * i + 2] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0x44);
		b[4 * i + 3] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0xee);
	}
	/* b[4q + c]: rows 4q..4q+3 of columns c and c + 4 (each 128-bit lane). */
	for (i = 0; i < 4; i++) {
		_mm256_storeu_ps((float *)(void *)(y + i * ys),
				 _mm256_permute2f128_ps(b[i], b[4 + i], 0x20));
		_mm256_storeu_ps((float *)(void *)(y + (i + 4) * ys),
				 _mm256_permute2f128_ps(b[i], b[4 + i], 0x31));
	}
}

/*
 * Fewer than 8 rows of 4-byte elements (3 channels of NHWC into NCHW
 * planes): each Y row gathers 8 X elements per instruction.  Returns
 * the columns done (a multiple of 8); X's row step must fit an int32
 * index 8 times over.
 */
MV_AVX2 static uint32_t t_gather_b32(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
				     uint32_t ni, uint32_t nj)
{
	const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
					       _mm256_set1_epi32((int)(xs / 4)));
	uint32_t i, j, nb = nj & ~7u;

	for (i = 0; i < ni; i++)
		for (j = 0; j < nb; j += 8)
			_mm256_storeu_ps((float *)(void *)(y + i * ys + 4 * j),
					 _mm256_i32gather_ps((const float *)(const void *)
							     (x + j * xs + 4 * i), idx, 4));
	return nb;
}

/*
 * Three rows of bytes from pixels of 3 (RGB NHWC into NCHW planes): 48
 * bytes, 16 pixels, per step, each plane's 16 bytes picked by three
 * byte shuffles.  Returns the columns done (a multiple of 16).
 */
MV_AVX2 static uint32_t t_rgb_b8(uint8_t *y, int64_t ys, const uint8_t *x, uint32_t nj)
{
	uint32_t j, nb = nj & ~15u;
	__m128i sh[3][3];
	int c, v, k;

	/* sh[c][v]: where byte k of plane c lies in the v-th 16-byte load. */
	for (c = 0; c < 3; c++)
		for (v = 0; v < 3; v++) {
			int8_t b[16];

			for (k = 0; k < 16; k++) {
				int at = 3 * k + c - 16 * v;

				b[k] = at >= 0 && at < 16 ? (int8_t)at : -1;
			}
			sh[c][v] = _mm_loadu_si128((const __m128i *)(const void *)b);
		}
	for (j = 0; j < nb; j += 16) {
		const uint8_t *p = x + 3 * j;
		__m128i l0 = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i l1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
		__m128i l2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));

		for (c = 0; c < 3; c++)
			_mm_storeu_si128((__m128i *)(void *)(y + c * ys + j),
					 _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(l0, sh[c][0]),
								   _mm_shuffle_epi8(l1, sh[c][1])),
						      _mm_shuffle_epi8(l2, sh[c][2])));
	}
	return nb;
}

/*
 * Three rows of 4-byte elements from pixels of 3: 24 elements, 8
 * pixels, per step; plane c's 8 are lanes of the three loads moved into
 * place by one permute each and blended.  Returns the columns done.
 */
MV_AVX2 static uint32_t t_rgb_b32(uint8_t *y, int64_t ys, const uint8_t *x, uint32_t nj)
{
	uint32_t j, nb = nj & ~7u;
	__m256i perm[3];
	__m256 m01[3], m2[3];
	int c, k;

	for (c = 0; c < 3; c++) {
		int32_t pi[8], a[8], b[8];

		/* Pixel k's channel c is element 3k + c of the 24: load (3k+c)/8. */
		for (k = 0; k < 8; k++) {
			pi[k] = (3 * k + c) % 8;
			a[k] = (3 * k + c) / 8 == 1 ? -1 : 0;
			b[k] = (3 * k + c) / 8 == 2 ? -1 : 0;
		}
		perm[c] = _mm256_loadu_si256((const __m256i *)(const void *)pi);
		m01[c] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)a));
		m2[c] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)b));
	}
	for (j = 0; j < nb; j += 8) {
		const float *p = (const float *)(const void *)(x + 12 * j);
		__m256 l0 = _mm256_loadu_ps(p), l1 = _mm256_loadu_ps(p + 8);
		__m256 l2 = _mm256_loadu_ps(p + 16);

		for (c = 0; c < 3; c++) {
			__m256 v = _mm256_permutevar8x32_ps(l0, perm[c]);

			v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(l1, perm[c]), m01[c]);
			v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(l2, perm[c]), m2[c]);
			_mm256_storeu_ps((float *)(void *)(y + c * ys + 4 * j), v);
		}
	}
	return nb;
}

/*
 * The other way: pixels of 3 from three planes (NCHW into NHWC), 8 (4
 * bytes) or 16 (bytes) pixels a step.  Output element e of a step is
 * plane e % 3's pixel e / 3: per output vector one permute or byte
 * shuffle of each plane, then blends (ors).  Returns the pixels done.
 */
MV_AVX2 static uint32_t t_rgb_i_b32(uint8_t *y, const uint8_t *x, int64_t xs, uint32_t ni)
{
	uint32_t i, nb = ni & ~7u;
	__m256i perm[3];
	__m256 m1[3], m2[3];
	int v, t;

	for (v = 0; v < 3; v++) {
		int32_t pi[8], a[8], b[8];

		for (t = 0; t < 8; t++) {
			pi[t] = (8 * v + t) / 3;
			a[t] = (8 * v + t) % 3 == 1 ? -1 : 0;
			b[t] = (8 * v + t) % 3 == 2 ? -1 : 0;
		}
		perm[v] = _mm256_loadu_si256((const __m256i *)(const void *)pi);
		m1[v] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)a));
		m2[v] = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)b));
	}
	for (i = 0; i < nb; i += 8) {
		__m256 p0 = _mm256_loadu_ps((const float *)(const void *)(x + 4 * i));
		__m256 p1 = _mm256_loadu_ps((const float *)(const void *)(x + xs + 4 * i));
		__m256 p2 = _mm256_loadu_ps((const float *)(const void *)(x + 2 * xs + 4 * i));
		float *q = (float *)(void *)(y + 12 * i);

		for (v = 0; v < 3; v++) {
			__m256 o = _mm256_permutevar8x32_ps(p0, perm[v]);

			o = _mm256_blendv_ps(o, _mm256_permutevar8x32_ps(p1, perm[v]), m1[v]);
			o = _mm256_blendv_ps(o, _mm256_permutevar8x32_ps(p2, perm[v]), m2[v]);
			_mm256_storeu_ps(q + 8 * v, o);
		}
	}
	return nb;
}

MV_AVX2 static uint32_t t_rgb_i_b8(uint8_t *y, const uint8_t *x, int64_t xs, uint32_t ni)
{
	uint32_t i, nb = ni & ~15u;
	__m128i sh[3][3];
	int v, c, t;

	/* sh[v][c]: output vector v's bytes that come from plane c. */
	for (v = 0; v < 3; v++)
		for (c = 0; c < 3; c++) {
			int8_t b[16];

			for (t = 0; t < 16; t++)
				b[t] = (16 * v + t) % 3 == c ? (int8_t)((16 * v + t) / 3) : -1;
			sh[v][c] = _mm_loadu_si128((const __m128i *)(const void *)b);
		}
	for (i = 0; i < nb; i += 16) {
		__m128i p0 = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
		__m128i p1 = _mm_loadu_si128((const __m128i *)(const void *)(x + xs + i));
		__m128i p2 = _mm_loadu_si128((const __m128i *)(const void *)(x + 2 * xs + i));

		for (v = 0; v < 3; v++)
			_mm_storeu_si128((__m128i *)(void *)(y + 3 * i + 16 * v),
					 _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(p0, sh[v][0]),
								   _mm_shuffle_epi8(p1, sh[v][1])),
						      _mm_shuffle_epi8(p2, sh[v][2])));
	}
	return nb;
}

static bool mv_have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#define MV_SIMD	true
#else
/* Never called: tile_transpose() leaves every block to t_rest(). */
static void t8x8_b8(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs)
{
	(void)y, (void)ys, (void)x, (void)xs;
}
#define t8x8_b16	t8x8_b8
#define t8x8_b32	t8x8_b8

static uint32_t t_gather_b32(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
			     uint32_t ni, uint32_t nj)
{
	(void)y, (void)ys, (void)x, (void)xs, (void)ni, (void)nj;
	return 0;
}

static uint32_t t_rgb_b8(uint8_t *y, int64_t ys, const uint8_t *x, uint32_t nj)
{
	(void)y, (void)ys, (void)x, (void)nj;
	return 0;
}
#define t_rgb_b32	t_rgb_b8

static uint32_t t_rgb_i_b8(uint8_t *y, const uint8_t *x, int64_t xs, uint32_t ni)
{
	(void)y, (void)x, (void)xs, (void)ni;
	return 0;
}
#define t_rgb_i_b32	t_rgb_i_b8

static bool mv_have_avx2(void)
{
	return false;
}
#define MV_SIMD	false
#endif

/* Rows [i0, ni) of a tile, element by element. */
static void t_rest(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
		   uint32_t i0, uint32_t ni, uint32_t j0, uint32_t nj, uint32_t es)
{
	uint32_t i, j;

	for (i = i0; i < ni; i++) {
		uint8_t *q = y + i * ys;
		const uint8_t *p = x + (size_t)i * es;

		switch (es) {
		case 1:
			for (j = j0; j < nj; j++)
				q[j] = p[j * xs];
			break;
		case 2:
			for (j = j0; j < nj; j++)
				memcpy(q + 2 * j, p + j * xs, 2);
			break;
		default:
			for (j = j0; j < nj; j++)
				memcpy(q + 4 * j, p + j * xs, 4);
			break;
		}
	}
}

static void tile_transpose(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
			   uint32_t ni, uint32_t nj, uint32_t es, bool avx2)
{
	uint32_t i, j, a, b, nb = nj & ~7u, ni8 = ni & ~7u;
	bool xs_first;

	if (!MV_SIMD || (es == 4 && !avx2))
		nb = 0;
	if (avx2 && nj == 3 && ys == 3 * es && (es == 1 || es == 4)) {
		i = es == 1 ? t_rgb_i_b8(y, x, xs, ni) : t_rgb_i_b32(y, x, xs, ni);
		t_rest(y, ys, x, xs, i, ni, 0, nj, es);
		return;
	}
	if (avx2 && ni == 3 && es == 4 && xs == 12) {
		j = t_rgb_b32(y, ys, x, nj);
		t_rest(y, ys, x, xs, 0, ni, j, nj, es);
		return;
	}
	if (avx2 && ni < 8 && es == 4 && xs / 4 < INT32_MAX / 8) {
		j = t_gather_b32(y, ys, x, xs, ni, nj);
		t_rest(y, ys, x, xs, 0, ni, j, nj, es);
		return;
	}
	if (avx2 && ni == 3 && es == 1 && xs == 3) {
		j = t_rgb_b8(y, ys, x, nj);
		t_rest(y, ys, x, xs, 0, ni, j, nj, es);
		return;
	}
	/*
	 * Rows a power of two apart share a cache set: walking down all of
	 * one side's rows per block would evict each before its next use.
	 * The inner loop runs along the rows of the side whose stride has
	 * more trailing zeros, so that only eight of them are live.
	 */
	xs_first = __builtin_ctzll((uint64_t)xs | (1ull << 62)) >
		   __builtin_ctzll((uint64_t)ys | (1ull << 62));
	for (a = 0; a < (xs_first ? nb : ni8); a += 8)
		for (b = 0; b < (xs_first ? ni8 : nb); b += 8) {
			i = xs_first ? b : a;
			j = xs_first ? a : b;
			if (es == 1)
				t8x8_b8(y + i * ys + j * es, ys, x + j * xs + (size_t)i * es, xs);
			else if (es == 2)
				t8x8_b16(y + i * ys + j * es, ys, x + j * xs + (size_t)i * es, xs);
			else
				t8x8_b32(y + i * ys + j * es, ys, x + j * xs + (size_t)i * es, xs);
		}
	i = nb ? ni8 : 0;
	t_rest(y, ys, x, xs, 0, i, nb, nj, es);
	t_rest(y, ys, x, xs, i, ni, 0, nj, es);
}

/* Runs up to this many bytes are moved inline by move_short(). */
#define SHORT_RUN	512

/* @n bytes, n <= SHORT_RUN: 16-byte moves, the tail as an overlapping one. */
static inline void move_short(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i;

	if (n >= 16) {
		for (i = 0; i + 16 <= n; i += 16)
			memcpy(dst + i, src + i, 16);
		if (i < n)
			memcpy(dst + n - 16, src + n - 16, 16);
		return;
	}
	if (n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else if (n >= 4) {
		memcpy(dst, src, 4);
		memcpy(dst + n - 4, src + n - 4, 4);
	} else {
		for (i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

/*
 * A raw copy whose rows gather from X with a stride while another
 * dimension @k is X's contiguous one: a transposition.  Element by
 * element along Y's rows, every read would touch a new cache line (and,
 * for wide tensors, a new page); in TILE x TILE tiles over @k and the
 * row dimension, reads and writes both stay within a few lines.  Only
 * for the KEEP border (the whole box lies inside X) and neither of the two
 * dims reversed.
 */
static int copy_tiled(const struct vnpu_cmd_compute *c, const struct vnpu_tv *x,
		      const struct vnpu_tv *y, const uint32_t *lo,
		      const uint32_t *ext, int k, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	int r = y->rank, in = r - 1, d;
	uint32_t idx[VNPU_MAX_RANK] = { 0 }, outer[VNPU_MAX_RANK];
	uint32_t es = y->esize, kb, jb, kk, ke, tk = TILE, tj = TILE;
	bool avx2 = mv_have_avx2();

	/* A short side: the tile grows along the other (a multiple of 8). */
	if (ext[k] < TILE)
		tj = (TILE * TILE / ext[k] + 7) & ~7u;
	else if (ext[in] < TILE)
		tk = (TILE * TILE / ext[in] + 7) & ~7u;
	memcpy(outer, ext, sizeof(outer));
	outer[k] = outer[in] = 1;
	do {
		int64_t xo = 0, yo = 0;

		for (d = 0; d < r; d++) {
			int64_t s = (int64_t)lo[d] + idx[d] - at->offset[d];

			if ((at->reverse >> d) & 1)
				s = x->dims[d] - 1 - s;
			xo += s * x->st[d];
			yo += (int64_t)(lo[d] + idx[d]) * y->st[d];
		}
		if (y->st[k] == 1 && (uint64_t)ext[k] * es <= SHORT_RUN) {
			/*
			 * @k contiguous in Y too (a channel slice of NHWC,
			 * Concat's parts) and its runs short: inline moves,
			 * not a libc call per pixel, and a poll per RUN_MAX
			 * elements rather than per run.
			 */
			uint32_t per = RUN_MAX / ext[k], je, jj;
			size_t len = (size_t)ext[k] * es;

			for (jb = 0; jb < ext[in]; jb += je) {
				je = ext[in] - jb < per ? ext[in] - jb : per;
				uint8_t *py = y->p + (yo + (int64_t)jb * y->st[in]) * es;
				const uint8_t *px = x->p + (xo + (int64_t)jb * x->st[in]) * es;

				if (vnpu_run_tick(rc, (uint64_t)je * ext[k]))
					return -ECANCELED;
				for (jj = 0; jj < je; jj++)
					move_short(py + (int64_t)jj * y->st[in] * es,
						   px + (int64_t)jj * x->st[in] * es, len);
			}
			continue;
		}
		if (y->st[k] == 1) {
			/* Long runs: one memcpy() per row element. */
			for (jb = 0; jb < ext[in]; jb++) {
				for (kb = 0; kb < ext[k]; kb += ke) {
					ke = ext[k] - kb < RUN_MAX ? ext[k] - kb : RUN_MAX;
					if (vnpu_run_tick(rc, ke))
						return -ECANCELED;
					memcpy(y->p + (yo + (int64_t)jb * y->st[in] + kb) * es,
					       x->p + (xo + (int64_t)jb * x->st[in] + kb) * es,
					       (size_t)ke * es);
				}
			}
			continue;
		}
		for (kb = 0; kb < ext[k]; kb += tk)
		for (jb = 0; jb < ext[in]; jb += tj) {
			uint32_t je = ext[in] - jb < tj ? ext[in] - jb : tj;

			ke = ext[k] - kb < tk ? ext[k] - kb : tk;
			if (vnpu_run_tick(rc, (uint64_t)ke * je))
				return -ECANCELED;
			if (y->st[in] == 1) {
				/* Y's rows along @k, X's along @in: a plain transpose. */
				if (rc)
					rc->path = VNPU_ENG_TRANSPOSE;
				tile_transpose(y->p + (yo + (int64_t)kb * y->st[k] + jb) * es,
					       y->st[k] * es,
					       x->p + (xo + (int64_t)jb * x->st[in] + kb) * es,
					       x->st[in] * es, ke, je, es, avx2);
				continue;
			}
			for (kk = kb; kk < kb + ke; kk++) {
				const uint8_t *px = x->p + (xo + (int64_t)kk * x->st[k]) * es;
				uint8_t *py = y->p + (yo + (int64_t)kk * y->st[k]) * es;

				move_raw(py + (int64_t)jb * y->st[in] * es, y->st[in] * es,
					 px + (int64_t)jb * x->st[in] * es, x->st[in] * es,
					 je, es);
			}
		}
	} while (rows_next(idx, outer, r));
	return 0;
}

/*
 * Conversions between the float storage types, without vnpu_ld()'s and
 * vnpu_st()'s dispatch per element (the same conversion functions, so the
 * same bits); false when @x -> @y is not one of them.
 */
static bool convert_run(const struct vnpu_tv *x, const struct vnpu_tv *y,
			uint8_t *dst, int64_t dstep, const uint8_t *src,
			int64_t sstep, uint32_t n)
{
	uint32_t i;
	uint16_t h;
	float f;

	if (x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_FP16) {
		for (i = 0; i < n; i++) {
			memcpy(&f, src + i * sstep, 4);
			h = vnpu_f32_to_fp16(f);
			memcpy(dst + i * dstep, &h, 2);
		}
	} else if (x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_BF16) {
		for (i = 0; i < n; i++) {
			memcpy(&f, src + i * sstep, 4);
			h = vnpu_f32_to_bf16(f);
			memcpy(dst + i * dstep, &h, 2);
		}
	} else if (x->dtype == VNPU_DT_FP16 && y->dtype == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			memcpy(&h, src + i * sstep, 2);
			f = vnpu_fp16_to_f32(h);
			memcpy(dst + i * dstep, &f, 4);
		}
	} else if (x->dtype == VNPU_DT_BF16 && y->dtype == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			memcpy(&h, src + i * sstep, 2);
			f = vnpu_bf16_to_f32(h);
			memcpy(dst + i * dstep, &f, 4);
		}
	} else {
		return false;
	}
	return true;
}

/*
 * Copies that convert an 8-bit X (a Concat of parts quantized apart,
 * a requantizing Reshape) are a function of one byte: a table of the
 * reference's vnpu_st(vnpu_ld()) for each byte, built when the copy moves
 * at least this many elements, replaces a call of each per element.
 */
#define BYTE_TABLE_MIN	256

struct byte_table {
	bool on;
	uint32_t es;
	uint8_t out[256][4];
};

static void byte_table_init(struct byte_table *bt, const struct vnpu_tv *x,
			    const struct vnpu_tv *y, unsigned int round)
{
	uint32_t i;

	for (i = 0; i < 256; i++) {
		uint8_t b = (uint8_t)i;

		vnpu_st(y, bt->out[i], vnpu_ld(x, &b, 0), 0, round);
	}
	bt->es = y->esize;
	bt->on = true;
}

static void byte_table_run(const struct byte_table *bt, uint8_t *dst, int64_t dstep,
			   const uint8_t *src, int64_t sstep, uint32_t n)
{
	uint32_t i;

	if (bt->es == 1)
		for (i = 0; i < n; i++)
			dst[i * dstep] = bt->out[src[i * sstep]][0];
	else
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, bt->out[src[i * sstep]], bt->es);
}

/*
 * Elements of a raw copy that is one dense block moved as it lies: X and
 * Y of the same dims and strides, no offset or reversal, the strides of
 * the dims longer than 1 a permutation of a dense layout.  libnpu's CPU
 * path hands Transpose such copies (its output keeps X's NHWC layout
 * under the NCHW dims).  0 when the copy is not one.
 */
static uint64_t copy_one_block(const struct vnpu_cmd_compute *c, const struct vnpu_tv *x,
			       const struct vnpu_tv *y)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	uint64_t n = 1, want = 1;
	int d, i, used[VNPU_MAX_RANK] = { 0 };

	if (at->reverse || x->rank != y->rank)
		return 0;
	for (d = 0; d < y->rank; d++) {
		if (at->offset[d] || x->dims[d] != y->dims[d])
			return 0;
		if (y->dims[d] > 1 && x->st[d] != y->st[d])
			return 0;
		n *= y->dims[d];
	}
	/* Dense: each next stride (smallest first) the block so far. */
	for (i = 0; i < y->rank; i++) {
		for (d = 0; d < y->rank; d++)
			if (!used[d] && y->dims[d] > 1 && y->st[d] == (int64_t)want)
				break;
		if (d == y->rank)
			break;
		used[d] = 1;
		want *= y->dims[d];
	}
	return want == n ? n : 0;
}

int vnpu_eng_copy(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		  struct vnpu_run_ctx *rc)
{
	struct byte_table bt = { .on = false };
	uint64_t moved = 1;
	const struct vnpu_attr_copy *at = &c->attr.copy;
	const struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t lo[VNPU_MAX_RANK], hi[VNPU_MAX_RANK], ext[VNPU_MAX_RANK];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = y->rank, in = r - 1, d;
	bool raw = vnpu_copy_raw(x, y);
	uint8_t fillb[4];
	uint32_t es = y->esize, xn = x->dims[in];
	int64_t off = at->offset[in];
	int64_t ystep = y->st[in] * es;
	int64_t xstep = x->st[in] * (int64_t)x->esize;
	bool rev = (at->reverse >> in) & 1;

	vnpu_st(y, fillb, fill_value(at->fill), 0, c->round);
	vnpu_copy_box(c, lo, hi);
	for (d = 0; d < r; d++) {
		ext[d] = hi[d] - lo[d];
		if (!ext[d])
			return 0;
		if (moved < BYTE_TABLE_MIN)
			moved *= ext[d];
	}
	if (!raw && x->esize == 1 && moved >= BYTE_TABLE_MIN)
		byte_table_init(&bt, x, y, c->round);
	if (raw) {
		uint64_t n = copy_one_block(c, x, y), i, m;

		for (i = 0; i < n && x->p != y->p; i += m) {
			m = n - i < RUN_MAX ? n - i : RUN_MAX;
			if (vnpu_run_tick(rc, m))
				return -ECANCELED;
			memmove(y->p + i * es, x->p + i * es, m * es);
		}
		if (n)
			return 0;
	}
	if (raw && at->border == VNPU_COPY_BORDER_KEEP && x->st[in] != 1 &&
	    ext[in] > 1 && !rev)
		for (d = 0; d < in; d++)
			if (x->st[d] == 1 && ext[d] > 1 && !((at->reverse >> d) & 1))
				return copy_tiled(c, x, y, lo, ext, d, rc);
	do {
		int64_t xo = 0, yo = 0, j, a, b;
		bool inside = true;
		uint8_t *py;
		const uint8_t *px;

		for (d = 0; d < in; d++) {
			uint32_t yd = lo[d] + idx[d];
			int64_t s = vnpu_copy_src((int64_t)yd - at->offset[d],
						  x->dims[d], at->border);

			yo += (int64_t)yd * y->st[d];
			if (s < 0) {
				inside = false;
				continue;
			}
			if ((at->reverse >> d) & 1)
				s = x->dims[d] - 1 - s;
			xo += s * x->st[d];
		}
		py = y->p + yo * es;
		px = x->p + xo * (int64_t)x->esize;
		/* The row's inside run: Y columns [a, b) read X from a - off on. */
		a = off > lo[in] ? off : lo[in];
		b = off + xn < hi[in] ? off + xn : hi[in];
		if (!inside || b <= a)
			a = b = hi[in];
		for (j = lo[in]; j < hi[in]; j++) {
			uint8_t *q = py + j * ystep;
			int64_t s;

			if (j == a) {
				int64_t s0 = rev ? xn - 1 - (a - off) : a - off;
				int64_t step = rev ? -xstep : xstep;
				const uint8_t *p0 = px + s0 * xstep;
				uint32_t left = (uint32_t)(b - a), n, i;

				/* In pieces: a row can hold 2^26 elements. */
				for (; left; left -= n) {
					n = left < RUN_MAX ? left : RUN_MAX;
					if (vnpu_run_tick(rc, n))
						return -ECANCELED;
					if (raw)
						move_raw(q, ystep, p0, step, n, es);
					else if (bt.on)
						byte_table_run(&bt, q, ystep, p0, step, n);
					else if (convert_run(x, y, q, ystep, p0, step, n))
						;
					else
						for (i = 0; i < n; i++)
							vnpu_st(y, q + i * ystep,
								vnpu_ld(x, p0 + i * step, 0),
								0, c->round);
					q += n * ystep;
					p0 += n * step;
				}
				j = b - 1;
				continue;
			}
			if (vnpu_run_tick(rc, 1))
				return -ECANCELED;
			s = inside ? vnpu_copy_src(j - off, xn, at->border) : -1;
			if (s < 0) {
				memcpy(q, fillb, es);
				continue;
			}
			if (rev)
				s = xn - 1 - s;
			if (raw)
				memcpy(q, px + s * xstep, es);
			else if (bt.on)
				memcpy(q, bt.out[px[s * xstep]], es);
			else
				vnpu_st(y, q, vnpu_ld(x, px + s * xstep, 0), 0,
					c->round);
		}
	} while (in > 0 && rows_next(idx, ext, in));
	return 0;
}

/* ---- RESIZE ------------------------------------------------------------- */

/*
 * @n channels of X from @p (byte step @step) as reals into @v: what
 * vnpu_ld() returns for each (per-tensor quantization), without its
 * dispatch per element, so the loops over channels vectorize.
 */
static void load_channels(const struct vnpu_tv *x, const uint8_t *p,
			  int64_t step, uint32_t n, float *v)
{
	uint32_t k;
	uint16_t h;

	switch (x->dtype) {
	case VNPU_DT_FP32:
		if (step == 4) {
			memcpy(v, p, 4ull * n);
			break;
		}
		for (k = 0; k < n; k++)
			memcpy(&v[k], p + k * step, 4);
		break;
	case VNPU_DT_INT8:
		for (k = 0; k < n; k++)
			v[k] = (float)((int32_t)(int8_t)p[k * step] - x->zp) * x->scale;
		break;
	case VNPU_DT_UINT8:
		for (k = 0; k < n; k++)
			v[k] = (float)((int32_t)p[k * step] - x->zp) * x->scale;
		break;
	case VNPU_DT_FP16:
		for (k = 0; k < n; k++) {
			memcpy(&h, p + k * step, 2);
			v[k] = vnpu_fp16_to_f32(h);
		}
		break;
	default:	/* BF16 */
		for (k = 0; k < n; k++) {
			memcpy(&h, p + k * step, 2);
			v[k] = vnpu_bf16_to_f32(h);
		}
		break;
	}
}

/*
 * The taps of every output row and column are computed once, not per
 * element, and the channels (NHWC's innermost, usually contiguous) run in
 * the inner loop.  Per element the arithmetic is the reference's, in its
 * order, so results are identical.
 */
int vnpu_eng_resize(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_resize *at = &c->attr.resize;
	const struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t oh = y->dims[1], ow = y->dims[2], ch = y->dims[3];
	bool raw = at->mode == VNPU_RESIZE_NEAREST && vnpu_copy_raw(x, y);
	bool f32 = x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_FP32;
	float ext = fill_value(at->extrapolation);
	struct vnpu_resize_taps *th, *tw;
	uint32_t b, oy, ox, k, i, j;
	float *vacc = NULL, *vrow = NULL, *vin = NULL;
	int ret = 0;

	th = vnpu_run_alloc(rc, sizeof(*th) * ((size_t)oh + ow));
	if (!th)
		return -ENOMEM;
	tw = th + oh;
	/* Channel vectors for the interpolating modes; else element by element. */
	if (!raw && ch <= (1u << 16))
		vacc = vnpu_run_alloc(rc, 3 * sizeof(float) * ch);
	if (vacc) {
		vrow = vacc + ch;
		vin = vrow + ch;
	}
	for (oy = 0; oy < oh && !vnpu_run_tick(rc, 1); oy++)
		vnpu_resize_taps(at, 0, oy, x->dims[1], oh, &th[oy]);
	for (ox = 0; ox < ow && !vnpu_run_tick(rc, 1); ox++)
		vnpu_resize_taps(at, 1, ox, x->dims[2], ow, &tw[ox]);
	if (rc && rc->stopped)
		ret = -ECANCELED;
	for (b = 0; b < y->dims[0] && !ret; b++)
	for (oy = 0; oy < oh && !ret; oy++)
	for (ox = 0; ox < ow; ox++) {
		const struct vnpu_resize_taps *h = &th[oy], *w = &tw[ox];
		uint8_t *py = y->p + ((int64_t)b * y->st[0] + (int64_t)oy * y->st[1] +
				      (int64_t)ox * y->st[2]) * y->esize;
		const uint8_t *src[16];
		int64_t ys = y->st[3] * y->esize, xs = x->st[3] * x->esize;

		/* Channels past 2^16 take the paths that poll per RUN_MAX. */
		if (vnpu_run_tick(rc, (uint64_t)ch * (h->n * w->n + 1))) {
			ret = -ECANCELED;
			break;
		}
		if (!h->n || !w->n) {
			for (k = 0; k < ch && !ret; k++) {
				if (k && !(k % RUN_MAX) && vnpu_run_tick(rc, RUN_MAX))
					ret = -ECANCELED;
				else
					vnpu_st(y, py + k * ys, ext, 0, c->round);
			}
			if (ret)
				break;
			continue;
		}
		for (i = 0; i < h->n; i++)
			for (j = 0; j < w->n; j++)
				src[i * w->n + j] = x->p + ((int64_t)b * x->st[0] +
					(int64_t)h->idx[i] * x->st[1] +
					(int64_t)w->idx[j] * x->st[2]) * x->esize;
		if (raw) {
			for (k = 0; k < ch && !ret; k += RUN_MAX) {
				uint32_t n = ch - k < RUN_MAX ? ch - k : RUN_MAX;

				if (k && vnpu_run_tick(rc, n))
					ret = -ECANCELED;
				else
					move_raw(py + k * ys, ys, src[0] + k * xs, xs,
						 n, y->esize);
			}
			if (ret)
				break;
			continue;
		}
		if (vacc) {
			/* Per channel exactly the sums below, in their order. */
			for (k = 0; k < ch; k++)
				vacc[k] = 0.0f;
			for (i = 0; i < h->n; i++) {
				float wi = h->w[i];

				for (k = 0; k < ch; k++)
					vrow[k] = 0.0f;
				for (j = 0; j < w->n; j++) {
					float wj = w->w[j];

					load_channels(x, src[i * w->n + j], xs, ch, vin);
					for (k = 0; k < ch; k++)
						vrow[k] += wj * vin[k];
				}
				for (k = 0; k < ch; k++)
					vacc[k] += wi * vrow[k];
			}
			for (k = 0; k < ch; k++)
				vacc[k] = vnpu_resize_nan(vacc[k]);
			if (f32 && ys == 4)
				memcpy(py, vacc, 4ull * ch);
			else
				for (k = 0; k < ch; k++)
					vnpu_st(y, py + k * ys, vacc[k], 0, c->round);
			continue;
		}
		for (k = 0; k < ch; k++) {
			float acc = 0.0f;

			if (k && !(k % (RUN_MAX / 16)) &&
			    vnpu_run_tick(rc, (uint64_t)(RUN_MAX / 16) * h->n * w->n)) {
				ret = -ECANCELED;
				break;
			}

			for (i = 0; i < h->n; i++) {
				float row = 0.0f;

				for (j = 0; j < w->n; j++) {
					const uint8_t *p = src[i * w->n + j] + k * xs;
					float v;

					if (f32)
						memcpy(&v, p, 4);
					else
						v = vnpu_ld(x, p, 0);
					row += w->w[j] * v;
				}
				acc += h->w[i] * row;
			}
			acc = vnpu_resize_nan(acc);
			if (f32)
				memcpy(py + k * ys, &acc, 4);
			else
				vnpu_st(y, py + k * ys, acc, 0, c->round);
		}
		if (ret)
			break;
	}
	vnpu_run_free(rc, vacc);
	vnpu_run_free(rc, th);
	return ret;
}
