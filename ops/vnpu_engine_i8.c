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

static bool have_vnni(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vnni");
}
#else
static bool have_vnni(void)
{
	return false;
}
#endif

const char *vnpu_i8_kernel_name(void)
{
	return have_vnni() ? "avx512-vnni 8x32" : "generic C";
}

void vnpu_i8_gemm(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		  int32_t *c)
{
	/* Read-only CPU feature probe: safe from any number of threads. */
	bool vnni = have_vnni();
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

				for (m = m0; m < me; m += VNPU_I8_MR) {
					const uint8_t *pa = a + (size_t)m * b->kp + k0;
					int32_t *pc = c + (size_t)m * b->np + j * VNPU_I8_NR;
#if defined(__x86_64__) && defined(__GNUC__)
					if (vnni && np2 == 2) {
						mk_vnni_8x32(pa, b->kp, pb, kc / 4, pc,
							     b->np, pstride, acc);
						continue;
					}
					if (vnni) {
						mk_vnni_8x16(pa, b->kp, pb, kc / 4, pc,
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
	(void)vnni;
}
