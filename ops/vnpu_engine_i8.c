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

/* Portable kernel: one MR x NR block, @k4 groups of 4. */
static void mk_generic(const uint8_t *a, size_t lda, const int8_t *b,
		       uint32_t k4, int32_t *c, size_t ldc, int npanels,
		       size_t pstride, bool acc)
{
	int32_t t[VNPU_I8_MR][2 * VNPU_I8_NR];
	uint32_t kk;
	int r, j, q;

	memset(t, 0, sizeof(t));
	for (kk = 0; kk < k4; kk++)
		for (r = 0; r < VNPU_I8_MR; r++) {
			const uint8_t *pa = a + r * lda + 4 * kk;

			for (j = 0; j < npanels * VNPU_I8_NR; j++) {
				const int8_t *pb = b + (j / VNPU_I8_NR) * pstride +
						   kk * 64 + (j % VNPU_I8_NR) * 4;
				int32_t s = 0;

				for (q = 0; q < 4; q++)
					s += (int32_t)pa[q] * pb[q];
				t[r][j] = (int32_t)((uint32_t)t[r][j] + (uint32_t)s);
			}
		}
	for (r = 0; r < VNPU_I8_MR; r++)
		for (j = 0; j < npanels * VNPU_I8_NR; j++)
			c[r * ldc + j] = acc ? (int32_t)((uint32_t)c[r * ldc + j] +
							 (uint32_t)t[r][j]) : t[r][j];
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
 * AVX2 has no u8 x s8 dot product that cannot saturate (vpmaddubsw
 * saturates its int16 pair sums: 2 * 255 * 127 > 32767), so both operands
 * are widened to int16 and multiplied with vpmaddwd, whose pair sums of
 * (0..255) x (-128..127) products are exact in int32.  One sign-extended
 * 16-byte B slice holds 4 columns x 4 k as int16, so each int32 lane gets
 * half of a column's k group; vphaddd folds the halves at the end.
 *
 * 4 rows x 8 columns per pass, four passes per 8 x 16 block: 8 accumulators,
 * 2 B and 1 A register, within AVX2's 16.
 */
AVX2_TARGET
static void mk_avx2_8x16(const uint8_t *a, size_t lda, const int8_t *b,
			 uint32_t k4, int32_t *c, size_t ldc, bool acc)
{
	int rh, ch, r;
	uint32_t kk;

	for (rh = 0; rh < 2; rh++)
		for (ch = 0; ch < 2; ch++) {
			const uint8_t *pa = a + (size_t)rh * 4 * lda;
			__m256i x[4][2];

			for (r = 0; r < 4; r++)
				x[r][0] = x[r][1] = _mm256_setzero_si256();
			for (kk = 0; kk < k4; kk++) {
				const int8_t *pb = b + kk * 64 + ch * 32;
				__m256i vb0 = _mm256_cvtepi8_epi16(
					_mm_loadu_si128((const __m128i *)pb));
				__m256i vb1 = _mm256_cvtepi8_epi16(
					_mm_loadu_si128((const __m128i *)(pb + 16)));

				for (r = 0; r < 4; r++) {
					__m256i va = _mm256_cvtepu8_epi16(
						_mm_set1_epi32(ld_i32(pa + r * lda + 4 * kk)));

					x[r][0] = _mm256_add_epi32(x[r][0],
								   _mm256_madd_epi16(va, vb0));
					x[r][1] = _mm256_add_epi32(x[r][1],
								   _mm256_madd_epi16(va, vb1));
				}
			}
			for (r = 0; r < 4; r++) {
				int32_t *pc = c + (size_t)(rh * 4 + r) * ldc + ch * 8;
				/* lanes: c0 c1 c4 c5 | c2 c3 c6 c7 */
				__m256i v = _mm256_hadd_epi32(x[r][0], x[r][1]);

				v = _mm256_permute4x64_epi64(v, 0xd8);
				if (acc)
					v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)pc));
				_mm256_storeu_si256((__m256i *)pc, v);
			}
		}
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
	size_t pstride = (size_t)b->kp / 4 * 64;
	uint32_t npan = b->np / VNPU_I8_NR, k0, m0, m, j;

	for (k0 = 0; k0 < b->kp; k0 += KC) {
		uint32_t kc = b->kp - k0 < KC ? b->kp - k0 : KC;
		bool acc = k0 != 0;

		for (m0 = 0; m0 < mp; m0 += MC) {
			uint32_t me = mp - m0 < MC ? mp : m0 + MC;

			for (j = 0; j < npan; j += 2) {
				const int8_t *pb = b->p + j * pstride + (size_t)k0 / 4 * 64;
				int np2 = npan - j >= 2 ? 2 : 1;

				/* One poll per column pair: at most MC x 32 x KC MACs. */
				if (vnpu_run_tick(x, (uint64_t)(me - m0) * kc * 32))
					return -ECANCELED;
				for (m = m0; m < me; m += VNPU_I8_MR) {
					const uint8_t *pa = a + (size_t)m * b->kp + k0;
					int32_t *pc = c + (size_t)m * b->np + j * VNPU_I8_NR;
#if defined(__x86_64__) && defined(__GNUC__)
					if (kern == VNPU_I8_VNNI && np2 == 2) {
						mk_vnni_8x32(pa, b->kp, pb, kc / 4, pc,
							     b->np, pstride, acc);
						continue;
					}
					if (kern == VNPU_I8_VNNI) {
						mk_vnni_8x16(pa, b->kp, pb, kc / 4, pc,
							     b->np, acc);
						continue;
					}
					if (kern == VNPU_I8_AVX2) {
						mk_avx2_8x16(pa, b->kp, pb, kc / 4, pc,
							     b->np, acc);
						if (np2 == 2)
							mk_avx2_8x16(pa, b->kp, pb + pstride,
								     kc / 4, pc + VNPU_I8_NR,
								     b->np, acc);
						continue;
					}
#endif
					mk_generic(pa, b->kp, pb, kc / 4, pc, b->np,
						   np2, pstride, acc);
				}
			}
		}
	}
	return 0;
}
