// SPDX-License-Identifier: MIT
/*
 * int8 GEMM kernels of the device engine.
 *
 * The product of unsigned A bytes and signed B bytes is what x86's VNNI
 * dot product (vpdpbusd) computes: four u8 x s8 products summed into each
 * int32 lane, without saturation, so the result is exact modulo 2^32 and
 * matches the reference bit for bit.  The caller shifts int8 A and uint8 B
 * into that form and folds the shift into the zero-point correction.
 *
 * QEMU is built for generic x86-64, so the SIMD kernels are compiled per
 * function with target attributes and chosen at run time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_engine.h"

#define KC	512	/* k bytes per block: B panel pair slab is 16 KiB */
#define MC	96	/* rows per block: A block stays in L2 */

static int32_t ld_i32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Portable kernel, for hosts without AVX2: C[2][16] (+)= two A rows at @a
 * (stride @lda) times a B strip widened to [kc][16] int16, with plain
 * loops the compiler vectorizes.  A product of a byte (0..255) and a
 * signed byte fits int16, so the multiplies can be 16-bit ones; the sums
 * are unsigned, exact mod 2^32 as the reference's.
 */
#define P_KC	256	/* k of a block: an 8 KiB widened B strip */

static void mk_portable_2x16(const uint8_t *a, size_t lda, const int16_t *b,
			     uint32_t kc, int32_t *c, size_t ldc, bool acc)
{
	uint32_t t0[VNPU_I8_NR] = { 0 }, t1[VNPU_I8_NR] = { 0 }, k;
	int j;

	for (k = 0; k < kc; k++) {
		const int16_t *bk = b + (size_t)k * VNPU_I8_NR;
		int16_t a0 = a[k], a1 = a[lda + k];

		for (j = 0; j < VNPU_I8_NR; j++) {
			t0[j] += (uint32_t)(int32_t)(int16_t)(a0 * bk[j]);
			t1[j] += (uint32_t)(int32_t)(int16_t)(a1 * bk[j]);
		}
	}
	for (j = 0; j < VNPU_I8_NR; j++) {
		c[j] = (int32_t)(t0[j] + (acc ? (uint32_t)c[j] : 0));
		c[ldc + j] = (int32_t)(t1[j] + (acc ? (uint32_t)c[ldc + j] : 0));
	}
}

/* The VNNI-layout strip at @b, @kc k, as [kc][16] int16. */
static void widen_b_portable(const int8_t *b, uint32_t kc, int16_t *w)
{
	uint32_t k, j;

	for (k = 0; k < kc; k++)
		for (j = 0; j < VNPU_I8_NR; j++)
			w[(size_t)k * VNPU_I8_NR + j] = b[(size_t)k / 4 * 64 + j * 4 + k % 4];
}

static int gemm_portable(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
			 int32_t *c, struct vnpu_run_ctx *x)
{
	int16_t bw[VNPU_I8_NR * P_KC];
	size_t pstride = (size_t)b->kp / 4 * 64;
	uint32_t npan = b->np / VNPU_I8_NR, k0, m, j;

	for (k0 = 0; k0 < b->kp; k0 += P_KC) {
		uint32_t kc = b->kp - k0 < P_KC ? b->kp - k0 : P_KC;

		for (j = 0; j < npan; j++) {
			if (vnpu_run_tick(x, (uint64_t)mp * kc * VNPU_I8_NR))
				return -ECANCELED;
			widen_b_portable(b->p + j * pstride + (size_t)k0 / 4 * 64, kc, bw);
			for (m = 0; m < mp; m += 2)
				mk_portable_2x16(a + (size_t)m * b->kp + k0, b->kp, bw, kc,
						 c + (size_t)m * b->np + j * VNPU_I8_NR, b->np,
						 k0 != 0);
		}
	}
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/*
 * 8 rows x 32 columns: 16 zmm accumulators, two B loads and eight
 * broadcasts per k group feed sixteen vpdpbusd (1024 MACs).
 */
VNNI_TARGET
static void mk_vnni_8x32(const uint8_t *a, size_t lda, const int8_t *b,
			 uint32_t k4, int32_t *c, size_t ldc, size_t pstride,
			 bool acc)
{
	__m512i c0a, c0b, c1a, c1b, c2a, c2b, c3a, c3b;
	__m512i c4a, c4b, c5a, c5b, c6a, c6b, c7a, c7b;
	const int8_t *b1 = b + pstride;
	uint32_t kk;

	c0a = c0b = c1a = c1b = c2a = c2b = c3a = c3b = _mm512_setzero_si512();
	c4a = c4b = c5a = c5b = c6a = c6b = c7a = c7b = _mm512_setzero_si512();
	for (kk = 0; kk < k4; kk++) {
		__m512i vb0 = _mm512_loadu_si512(b + kk * 64);
		__m512i vb1 = _mm512_loadu_si512(b1 + kk * 64);
		const uint8_t *pa = a + 4 * kk;
		__m512i va;

#define ROW(r, x0, x1) \
		va = _mm512_set1_epi32(ld_i32(pa + (r) * lda)); \
		x0 = _mm512_dpbusd_epi32(x0, va, vb0); \
		x1 = _mm512_dpbusd_epi32(x1, va, vb1)
		ROW(0, c0a, c0b);
		ROW(1, c1a, c1b);
		ROW(2, c2a, c2b);
		ROW(3, c3a, c3b);
		ROW(4, c4a, c4b);
		ROW(5, c5a, c5b);
		ROW(6, c6a, c6b);
		ROW(7, c7a, c7b);
#undef ROW
	}
#define STORE(r, x0, x1) do { \
		int32_t *pc = c + (r) * ldc; \
		if (acc) { \
			x0 = _mm512_add_epi32(x0, _mm512_loadu_si512(pc)); \
			x1 = _mm512_add_epi32(x1, _mm512_loadu_si512(pc + 16)); \
		} \
		_mm512_storeu_si512(pc, x0); \
		_mm512_storeu_si512(pc + 16, x1); \
	} while (0)
	STORE(0, c0a, c0b);
	STORE(1, c1a, c1b);
	STORE(2, c2a, c2b);
	STORE(3, c3a, c3b);
	STORE(4, c4a, c4b);
	STORE(5, c5a, c5b);
	STORE(6, c6a, c6b);
	STORE(7, c7a, c7b);
#undef STORE
}

/* 8 rows x 16 columns, for an odd last panel. */
VNNI_TARGET
static void mk_vnni_8x16(const uint8_t *a, size_t lda, const int8_t *b,
			 uint32_t k4, int32_t *c, size_t ldc, bool acc)
{
	__m512i x[VNPU_I8_MR];
	uint32_t kk;
	int r;

	for (r = 0; r < VNPU_I8_MR; r++)
		x[r] = _mm512_setzero_si512();
	for (kk = 0; kk < k4; kk++) {
		__m512i vb = _mm512_loadu_si512(b + kk * 64);

		for (r = 0; r < VNPU_I8_MR; r++)
			x[r] = _mm512_dpbusd_epi32(x[r],
				_mm512_set1_epi32(ld_i32(a + r * lda + 4 * kk)), vb);
	}
	for (r = 0; r < VNPU_I8_MR; r++) {
		if (acc)
			x[r] = _mm512_add_epi32(x[r], _mm512_loadu_si512(c + r * ldc));
		_mm512_storeu_si512(c + r * ldc, x[r]);
	}
}

#define AVX2_TARGET __attribute__((target("avx2")))

/*
 * AVX2 has no u8 x s8 dot product that cannot saturate: vpmaddubsw
 * saturates its int16 pair sums (2 * 255 * 127 > 32767), which is why
 * onnxruntime's AVX2 kernel is not bit-exact.  So both operands are
 * widened to int16 and multiplied with vpmaddwd, whose sums of two
 * (0..255) x (-128..127) products are exact in int32: 16 MACs per
 * instruction, twice an fp32 FMA's 8, plus the vpaddd into the
 * accumulator, which Zen 3 and recent Intel cores issue on a port the
 * multiplies leave free.
 *
 * Widening inside the loop would cost a shuffle per operand vector, as
 * many as the multiplies.  It is done once per block instead, into stack
 * buffers: a K block of one B panel as [k/2][16 columns][2] int16 (each
 * k pair of a row is two vectors of 8 columns, no horizontal adds at the
 * end), and A rows as [k/2][rows][2] per panel of 6 or 4 rows, so each
 * row's k pair is one 32-bit broadcast.
 */
#define W_KC	256	/* k of a block: an 8 KiB widened B panel strip */
#define W_MB	48	/* rows widened at once: 24 KiB of A */
#define W_MR	6	/* rows of the register block: 12 accumulators */

/* 4 columns x 4 k as s8 -> k pair 0 of the 4 columns, then k pair 1. */
#define W_B_SHUF 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15

/* The VNNI-layout panel strip at @b, @kc k, into [kc/2][16][2] int16. */
AVX2_TARGET
static void widen_b(const int8_t *b, uint32_t kc, int16_t *w)
{
	const __m128i shuf = _mm_setr_epi8(W_B_SHUF);
	uint32_t k4, q;

	for (k4 = 0; k4 < kc / 4; k4++)
		for (q = 0; q < 4; q++) {
			__m128i v = _mm_shuffle_epi8(_mm_loadu_si128(
				(const __m128i *)(b + (size_t)k4 * 64 + q * 16)), shuf);
			int16_t *d = w + (size_t)k4 * 64 + q * 8;

			_mm_storeu_si128((__m128i *)d, _mm_cvtepi8_epi16(v));
			_mm_storeu_si128((__m128i *)(d + 32),
					 _mm_cvtepi8_epi16(_mm_srli_si128(v, 8)));
		}
}

/* Four A rows at @a (stride @lda), @kc k, into [kc/2][4][2] int16. */
AVX2_TARGET
static void widen_a4(const uint8_t *a, size_t lda, uint32_t kc, int16_t *w)
{
	uint32_t k = 0, r;

	for (; k + 16 <= kc; k += 16, w += 64) {
		__m128i r0 = _mm_loadu_si128((const __m128i *)(a + k));
		__m128i r1 = _mm_loadu_si128((const __m128i *)(a + lda + k));
		__m128i r2 = _mm_loadu_si128((const __m128i *)(a + 2 * lda + k));
		__m128i r3 = _mm_loadu_si128((const __m128i *)(a + 3 * lda + k));
		/* 16-bit units are k pairs: interleave the rows' pairs. */
		__m128i l01 = _mm_unpacklo_epi16(r0, r1), h01 = _mm_unpackhi_epi16(r0, r1);
		__m128i l23 = _mm_unpacklo_epi16(r2, r3), h23 = _mm_unpackhi_epi16(r2, r3);

		_mm256_storeu_si256((__m256i *)w,
			_mm256_cvtepu8_epi16(_mm_unpacklo_epi32(l01, l23)));
		_mm256_storeu_si256((__m256i *)(w + 16),
			_mm256_cvtepu8_epi16(_mm_unpackhi_epi32(l01, l23)));
		_mm256_storeu_si256((__m256i *)(w + 32),
			_mm256_cvtepu8_epi16(_mm_unpacklo_epi32(h01, h23)));
		_mm256_storeu_si256((__m256i *)(w + 48),
			_mm256_cvtepu8_epi16(_mm_unpackhi_epi32(h01, h23)));
	}
	for (; k < kc; k += 2, w += 8)
		for (r = 0; r < 4; r++) {
			w[2 * r] = a[r * lda + k];
			w[2 * r + 1] = a[r * lda + k + 1];
		}
}

/*
 * Six A rows likewise, [kc/2][6][2]: rows 0-3 as widen_a4() makes them,
 * then rows 4 and 5, merged per k pair.
 */
AVX2_TARGET
static void widen_a6(const uint8_t *a, size_t lda, uint32_t kc, int16_t *w)
{
	int16_t w4[4 * W_KC] __attribute__((aligned(32)));
	uint32_t k2;

	widen_a4(a, lda, kc, w4);
	for (k2 = 0; k2 < kc / 2; k2++, w += 12) {
		memcpy(w, w4 + 8 * k2, 16);
		w[8] = a[4 * lda + 2 * k2];
		w[9] = a[4 * lda + 2 * k2 + 1];
		w[10] = a[5 * lda + 2 * k2];
		w[11] = a[5 * lda + 2 * k2 + 1];
	}
}

/*
 * @acc + vpmaddwd(@a, @b), in asm with a temporary of its own: with the
 * intrinsics GCC 12 runs out of the 16 ymm registers for a 6 x 16 block
 * and keeps an accumulator on the stack, whose store and reload each k
 * pair then set the loop's pace.
 */
AVX2_TARGET
static inline __m256i madd_acc(__m256i acc, __m256i a, __m256i b)
{
	__m256i t;

	__asm__("vpmaddwd %[b], %[a], %[t]\n\tvpaddd %[t], %[acc], %[acc]"
		: [acc] "+x"(acc), [t] "=&x"(t) : [a] "x"(a), [b] "x"(b));
	return acc;
}

/*
 * C[@mr][16] (+)= widened A panel ([kc/2][mr][2]) x widened B strip over
 * @kc k; @mr is 4 or 6, a constant after inlining.  Six rows keep 12
 * accumulators, the two B vectors and a broadcast in the 16 registers.
 */
AVX2_TARGET
static inline __attribute__((always_inline))
void mk_avx2_rx16(const int mr, const int16_t *a, const int16_t *b, uint32_t kc,
		  int32_t *c, size_t ldc, bool acc)
{
	__m256i x[W_MR][2];
	uint32_t kk;
	int r;

#pragma GCC unroll 6
	for (r = 0; r < mr; r++)
		x[r][0] = x[r][1] = _mm256_setzero_si256();
	for (kk = 0; kk < kc / 2; kk++, a += 2 * mr, b += 32) {
		__m256i vb0 = _mm256_loadu_si256((const __m256i *)b);
		__m256i vb1 = _mm256_loadu_si256((const __m256i *)(b + 16));

#pragma GCC unroll 6
		for (r = 0; r < mr; r++) {
			__m256i va = _mm256_set1_epi32(ld_i32((const uint8_t *)(a + 2 * r)));

			x[r][0] = madd_acc(x[r][0], va, vb0);
			x[r][1] = madd_acc(x[r][1], va, vb1);
		}
	}
#pragma GCC unroll 6
	for (r = 0; r < mr; r++) {
		__m256i *pc = (__m256i *)(c + r * ldc);

		if (acc) {
			x[r][0] = _mm256_add_epi32(x[r][0], _mm256_loadu_si256(pc));
			x[r][1] = _mm256_add_epi32(x[r][1], _mm256_loadu_si256(pc + 1));
		}
		_mm256_storeu_si256(pc, x[r][0]);
		_mm256_storeu_si256(pc + 1, x[r][1]);
	}
}

AVX2_TARGET
static void mk_avx2_6x16(const int16_t *a, const int16_t *b, uint32_t kc,
			 int32_t *c, size_t ldc, bool acc)
{
	mk_avx2_rx16(6, a, b, kc, c, ldc, acc);
}

AVX2_TARGET
static void mk_avx2_4x16(const int16_t *a, const int16_t *b, uint32_t kc,
			 int32_t *c, size_t ldc, bool acc)
{
	mk_avx2_rx16(4, a, b, kc, c, ldc, acc);
}

/*
 * Rows of a block (a multiple of 8, as mp is) as panels of 6 and then of
 * 4: 8 = 4 + 4, 16 = 6 + 6 + 4, 24 = 4 x 6, ...  The first row of the
 * 4-row panels.
 */
static uint32_t rows_in_6s(uint32_t rows)
{
	switch (rows % 6) {
	case 0:
		return rows;
	case 2:
		return rows - 8;
	default:
		return rows - 4;
	}
}

/*
 * vnpu_i8_gemm() on AVX2: per K block and W_MB rows, A widened once and
 * each B panel strip widened once, then every 6- and 4-row panel against
 * it.  Widening B once per W_MB rows costs about 1/W_MB of the multiplies.
 */
AVX2_TARGET
static int gemm_avx2(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		     int32_t *c, struct vnpu_run_ctx *x)
{
	int16_t aw[W_MB * W_KC] __attribute__((aligned(32)));
	int16_t bw[VNPU_I8_NR * W_KC] __attribute__((aligned(32)));
	size_t pstride = (size_t)b->kp / 4 * 64;
	uint32_t npan = b->np / VNPU_I8_NR, k0, m0, m, j;

	for (k0 = 0; k0 < b->kp; k0 += W_KC) {
		uint32_t kc = b->kp - k0 < W_KC ? b->kp - k0 : W_KC;
		bool acc = k0 != 0;

		for (m0 = 0; m0 < mp; m0 += W_MB) {
			uint32_t rows = mp - m0 < W_MB ? mp - m0 : W_MB;
			uint32_t r6 = rows_in_6s(rows);

			for (m = 0; m < r6; m += 6)
				widen_a6(a + (size_t)(m0 + m) * b->kp + k0, b->kp, kc,
					 aw + (size_t)m * kc);
			for (; m < rows; m += 4)
				widen_a4(a + (size_t)(m0 + m) * b->kp + k0, b->kp, kc,
					 aw + (size_t)m * kc);
			for (j = 0; j < npan; j++) {
				int32_t *cp = c + (size_t)m0 * b->np + j * VNPU_I8_NR;

				if (vnpu_run_tick(x, (uint64_t)rows * kc * VNPU_I8_NR))
					return -ECANCELED;
				widen_b(b->p + j * pstride + (size_t)k0 / 4 * 64, kc, bw);
				for (m = 0; m < r6; m += 6)
					mk_avx2_6x16(aw + (size_t)m * kc, bw, kc,
						     cp + (size_t)m * b->np, b->np, acc);
				for (; m < rows; m += 4)
					mk_avx2_4x16(aw + (size_t)m * kc, bw, kc,
						     cp + (size_t)m * b->np, b->np, acc);
			}
		}
	}
	return 0;
}

/* vnpu_i8_gemm() on AVX-512 VNNI: 8 x 32 blocks on the packed layout as is. */
static int gemm_vnni(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		     int32_t *c, struct vnpu_run_ctx *x)
{
	size_t pstride = (size_t)b->kp / 4 * 64;
	uint32_t npan = b->np / VNPU_I8_NR, k0, m0, m, j;

	for (k0 = 0; k0 < b->kp; k0 += KC) {
		uint32_t kc = b->kp - k0 < KC ? b->kp - k0 : KC;
		bool acc = k0 != 0;

		for (m0 = 0; m0 < mp; m0 += MC) {
			uint32_t me = mp - m0 < MC ? mp : m0 + MC;

			for (j = 0; j < npan; j += 2) {
				const int8_t *pb = b->p + j * pstride + (size_t)k0 / 4 * 64;

				/* One poll per column pair: at most MC x 32 x KC MACs. */
				if (vnpu_run_tick(x, (uint64_t)(me - m0) * kc * 32))
					return -ECANCELED;
				for (m = m0; m < me; m += VNPU_I8_MR) {
					const uint8_t *pa = a + (size_t)m * b->kp + k0;
					int32_t *pc = c + (size_t)m * b->np + j * VNPU_I8_NR;

					if (npan - j >= 2)
						mk_vnni_8x32(pa, b->kp, pb, kc / 4, pc,
							     b->np, pstride, acc);
					else
						mk_vnni_8x16(pa, b->kp, pb, kc / 4, pc,
							     b->np, acc);
				}
			}
		}
	}
	return 0;
}

static bool have_vnni(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vnni");
}

static bool have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#else
static bool have_vnni(void)
{
	return false;
}

static bool have_avx2(void)
{
	return false;
}
#endif

static const char *const kernel_names[VNPU_I8_NKERNELS] = {
	[VNPU_I8_GENERIC] = "generic",
	[VNPU_I8_AVX2] = "avx2",
	[VNPU_I8_VNNI] = "avx512-vnni",
};

bool vnpu_i8_kernel_available(enum vnpu_i8_kernel k)
{
	switch (k) {
	case VNPU_I8_GENERIC:
		return true;
	case VNPU_I8_AVX2:
		return have_avx2();
	case VNPU_I8_VNNI:
		return have_vnni();
	default:
		return false;
	}
}

const char *vnpu_i8_kernel_id(enum vnpu_i8_kernel k)
{
	if (k == VNPU_I8_AUTO)
		return "auto";
	return (unsigned int)k < VNPU_I8_NKERNELS ? kernel_names[k] : "?";
}

int vnpu_i8_kernel_parse(const char *id, enum vnpu_i8_kernel *k)
{
	int i;

	if (!strcmp(id, "auto")) {
		*k = VNPU_I8_AUTO;
		return 0;
	}
	for (i = 0; i < VNPU_I8_NKERNELS; i++) {
		if (!strcmp(id, kernel_names[i])) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * The configured kernel when the CPU has it (to test and measure the
 * fallbacks on a host that has all of them), else the best one it has.
 */
enum vnpu_i8_kernel vnpu_i8_kernel_resolve(enum vnpu_i8_kernel want)
{
	int k;

	if (want != VNPU_I8_AUTO && vnpu_i8_kernel_available(want))
		return want;
	for (k = VNPU_I8_NKERNELS - 1; k > 0; k--)
		if (vnpu_i8_kernel_available(k))
			return k;
	return VNPU_I8_GENERIC;
}

int vnpu_i8_gemm(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		 int32_t *c, struct vnpu_run_ctx *x)
{
	enum vnpu_i8_kernel kern =
		vnpu_i8_kernel_resolve(x ? x->i8_kernel : VNPU_I8_AUTO);

#if defined(__x86_64__) && defined(__GNUC__)
	if (kern == VNPU_I8_VNNI)
		return gemm_vnni(a, mp, b, c, x);
	if (kern == VNPU_I8_AVX2)
		return gemm_avx2(a, mp, b, c, x);
#endif
	(void)kern;
	return gemm_portable(a, mp, b, c, x);
}
