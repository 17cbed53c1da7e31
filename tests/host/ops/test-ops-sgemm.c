// SPDX-License-Identifier: MIT
/*
 * vnpu_sgemm(), the engine's fp32 GEMM when it is built without a BLAS
 * (libnpu's CPU path): against a double-precision product over random
 * shapes around its block sizes, all four transpose combinations and
 * leading dimensions wider than the rows; and the same bits for a band of
 * rows computed alone (each element sums its products in k order,
 * whatever the blocking), which the device's sharing of a command across
 * engines relies on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vnpu_sgemm.h"

static uint64_t rs = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

static float *rand_mat(size_t n)
{
	float *p = malloc(n * sizeof(float) + 1);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = ((float)rnd(2001) - 1000.0f) / 313.0f;
	return p;
}

static void one(size_t m, size_t n, size_t k, bool ta, bool tb)
{
	size_t lda = (ta ? m : k) + rnd(3), ldb = (tb ? k : n) + rnd(3);
	size_t ldc = n + rnd(3), i, j, kk;
	float *a = rand_mat((ta ? k : m) * lda + 1);
	float *b = rand_mat((tb ? n : k) * ldb + 1);
	float *c = rand_mat(m * ldc + 1), *band = rand_mat(m * ldc + 1);
	size_t r0 = m ? rnd((uint32_t)m) : 0;

	assert_int_equal(vnpu_sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc), 0);
	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			double want = 0, mag = 0;

			for (kk = 0; kk < k; kk++) {
				double p = (double)(ta ? a[kk * lda + i] : a[i * lda + kk]) *
					   (tb ? b[j * ldb + kk] : b[kk * ldb + j]);

				want += p;
				mag += fabs(p);
			}
			if (fabs(c[i * ldc + j] - want) > (k + 1) * 1.2e-7 * mag + 1e-30)
				fail_msg("%zux%zux%zu ta %d tb %d: [%zu][%zu] %g, want %g",
					 m, n, k, ta, tb, i, j, c[i * ldc + j], want);
		}
	}
	/* Rows r0..m alone: the same bits as in the whole product. */
	if (m) {
		const float *a0 = ta ? a + r0 : a + r0 * lda;

		assert_int_equal(vnpu_sgemm(ta, tb, m - r0, n, k, a0, lda, b, ldb,
					    band, ldc), 0);
		for (i = r0; i < m; i++)
			assert_memory_equal(band + (i - r0) * ldc, c + i * ldc,
					    n * sizeof(float));
	}
	free(a);
	free(b);
	free(c);
	free(band);
}

static void test_random(void **state)
{
	int iter;

	(void)state;
	for (iter = 0; iter < 300; iter++)
		one(rnd(40), 1 + rnd(90), rnd(600), rnd(2), rnd(2));
}

/* Exact multiples and one past the 4-row panel, 32-column strip, 256-k block. */
static void test_edges(void **state)
{
	static const size_t dims[] = { 1, 3, 4, 5, 31, 32, 33, 255, 256, 257 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		one(dims[i] % 64 + 1, 33, dims[i], false, false);
		one(5, dims[i], 257, true, false);
		one(4, 32, dims[i], false, true);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests_name("ops-sgemm", tests, NULL, NULL);
}
