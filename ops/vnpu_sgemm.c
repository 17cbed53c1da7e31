// SPDX-License-Identifier: MIT
/*
 * Portable blocked fp32 GEMM (vnpu_sgemm.h): B is packed into 32-column
 * strips of a K block, A into 4-row panels of it, and a 4 x 32 register
 * block accumulates one strip, one k at a time.  GCC's vector extension
 * keeps it portable: target clones give the AVX-512 and AVX2 hosts their
 * own code, and plain SSE2 elsewhere (a TCG guest among them).
 *
 * Built with -ffp-contract=off like the rest of the engine: a product is
 * rounded before it is added, as the reference does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_sgemm.h"

#define NR	32	/* columns of a strip */
#define MR	4	/* rows of a panel */
#define KC	256	/* k of a block: a strip's 32 KiB stays in L1/L2 */

typedef float v16 __attribute__((vector_size(64), aligned(4)));

static inline float a_at(bool ta, const float *a, size_t lda, size_t i,
			 size_t k)
{
	return ta ? a[k * lda + i] : a[i * lda + k];
}

static inline float b_at(bool tb, const float *b, size_t ldb, size_t k,
			 size_t j)
{
	return tb ? b[j * ldb + k] : b[k * ldb + j];
}

/* Strips of B rows k0..k0+kc, each kc x NR, zero past column n. */
static void pack_b(bool tb, const float *b, size_t ldb, size_t n, size_t k0,
		   size_t kc, float *bp)
{
	size_t s, k, j;

	for (s = 0; s < n; s += NR) {
		size_t w = n - s < NR ? n - s : NR;

		for (k = 0; k < kc; k++) {
			float *d = bp + (s / NR) * kc * NR + k * NR;

			if (!tb) {
				memcpy(d, b + (k0 + k) * ldb + s, w * sizeof(float));
			} else {
				for (j = 0; j < w; j++)
					d[j] = b_at(tb, b, ldb, k0 + k, s + j);
			}
			for (j = w; j < NR; j++)
				d[j] = 0.0f;
		}
	}
}

/* A rows i0..i0+MR, k0..k0+kc, as kc groups of MR; zero past row m. */
static void pack_a(bool ta, const float *a, size_t lda, size_t m, size_t i0,
		   size_t k0, size_t kc, float *ap)
{
	size_t k, r;

	for (k = 0; k < kc; k++)
		for (r = 0; r < MR; r++)
			ap[k * MR + r] = i0 + r < m ?
					 a_at(ta, a, lda, i0 + r, k0 + k) : 0.0f;
}

/*
 * One 4 x 32 block: acc (from C unless @first) += ap * bp over kc, then
 * back to C, rows below @rows and columns below @cols only.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void kernel(const float *ap, const float *bp, size_t kc, bool first,
		   float *c, size_t ldc, size_t rows, size_t cols)
{
	v16 acc[MR][2];
	float tmp[MR][NR];
	size_t k, r;

	if (first || rows < MR || cols < NR) {
		memset(tmp, 0, sizeof(tmp));
		if (!first)
			for (r = 0; r < rows; r++)
				memcpy(tmp[r], c + r * ldc, cols * sizeof(float));
		for (r = 0; r < MR; r++) {
			memcpy(&acc[r][0], tmp[r], 64);
			memcpy(&acc[r][1], tmp[r] + 16, 64);
		}
	} else {
		for (r = 0; r < MR; r++) {
			memcpy(&acc[r][0], c + r * ldc, 64);
			memcpy(&acc[r][1], c + r * ldc + 16, 64);
		}
	}
	for (k = 0; k < kc; k++) {
		v16 b0, b1;

		memcpy(&b0, bp + k * NR, 64);
		memcpy(&b1, bp + k * NR + 16, 64);
		for (r = 0; r < MR; r++) {
			float s = ap[k * MR + r];

			acc[r][0] += s * b0;
			acc[r][1] += s * b1;
		}
	}
	if (rows < MR || cols < NR) {
		for (r = 0; r < MR; r++) {
			memcpy(tmp[r], &acc[r][0], 64);
			memcpy(tmp[r] + 16, &acc[r][1], 64);
		}
		for (r = 0; r < rows; r++)
			memcpy(c + r * ldc, tmp[r], cols * sizeof(float));
		return;
	}
	for (r = 0; r < MR; r++) {
		memcpy(c + r * ldc, &acc[r][0], 64);
		memcpy(c + r * ldc + 16, &acc[r][1], 64);
	}
}

int vnpu_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k,
	       const float *a, size_t lda, const float *b, size_t ldb,
	       float *c, size_t ldc)
{
	size_t strips = (n + NR - 1) / NR, k0, i0, s;
	float *bp, *ap;

	if (!m || !n)
		return 0;
	if (!k) {
		for (i0 = 0; i0 < m; i0++)
			memset(c + i0 * ldc, 0, n * sizeof(float));
		return 0;
	}
	bp = malloc(strips * KC * NR * sizeof(float) + KC * MR * sizeof(float));
	if (!bp)
		return -ENOMEM;
	ap = bp + strips * KC * NR;
	for (k0 = 0; k0 < k; k0 += KC) {
		size_t kc = k - k0 < KC ? k - k0 : KC;

		pack_b(tb, b, ldb, n, k0, kc, bp);
		for (i0 = 0; i0 < m; i0 += MR) {
			size_t rows = m - i0 < MR ? m - i0 : MR;

			pack_a(ta, a, lda, m, i0, k0, kc, ap);
			for (s = 0; s < strips; s++) {
				size_t cols = n - s * NR < NR ? n - s * NR : NR;

				kernel(ap, bp + s * kc * NR, kc, k0 == 0,
				       c + i0 * ldc + s * NR, ldc, rows, cols);
			}
		}
	}
	free(bp);
	return 0;
}
