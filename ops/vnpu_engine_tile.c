// SPDX-License-Identifier: MIT
/*
 * Transposing tiles for the engine's COPY (vnpu_engine_move.c's
 * copy_tiled()): Y[i][j] = X[j][i] for i < ni, j < nj, each row
 * contiguous, Y's rows @ys bytes apart and X's @xs.  Blocks of 8 x 8 go
 * through registers (unpacks, as in any SIMD transpose), so both sides
 * are read and written a vector at a time; 3 channels between pixels
 * and planes by byte shuffles or lane permutes; the rest element by
 * element.  Bytes are moved, never interpreted: the reference's bits.
 */
#include <string.h>

#include "vnpu_engine.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

bool vnpu_tile_have_avx2(void)
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

bool vnpu_tile_have_avx2(void)
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

void vnpu_tile_transpose(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
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

