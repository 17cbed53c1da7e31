// SPDX-License-Identifier: MIT
/*
 * vnpu_sgemm(), the engine's fp32 GEMM when it is built without a BLAS
 * (libnpu's CPU path), each of its per-ISA kernels in turn: bit for bit
 * against a plain loop that adds the rounded products in ascending k
 * order, which the header promises and the CPU path's results rest on,
 * and within rounding of a double-precision product (so the loop itself
 * is checked); over random shapes around every kernel's register and
 * cache blocks, all four transpose combinations and leading dimensions
 * wider than the rows; and the same bits for a band of rows computed
 * alone (whatever the blocking), which the device's sharing of a command
 * across engines relies on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

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

/* The kernel under test. */
static enum vnpu_sgemm_isa isa;

static void one(size_t m, size_t n, size_t k, bool ta, bool tb)
{
	size_t lda = (ta ? m : k) + rnd(3), ldb = (tb ? k : n) + rnd(3);
	size_t ldc = n + rnd(3), i, j, kk;
	float *a = rand_mat((ta ? k : m) * lda + 1);
	float *b = rand_mat((tb ? n : k) * ldb + 1);
	float *c = rand_mat(m * ldc + 1), *band = rand_mat(m * ldc + 1);
	size_t r0 = m ? rnd((uint32_t)m) : 0;

	assert_int_equal(vnpu_sgemm_isa(isa, ta, tb, m, n, k, a, lda, b, ldb,
					c, ldc), 0);
	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			double want = 0, mag = 0;
			float sum = 0.0f;

			for (kk = 0; kk < k; kk++) {
				float x = ta ? a[kk * lda + i] : a[i * lda + kk];
				float y = tb ? b[j * ldb + kk] : b[kk * ldb + j];
				/* volatile: rounded to float, never fused into the add */
				volatile float prod = x * y;
				double p = (double)x * y;

				sum += prod;
				want += p;
				mag += fabs(p);
			}
			if (memcmp(&sum, &c[i * ldc + j], sizeof(sum)))
				fail_msg("%zux%zux%zu ta %d tb %d isa %d: [%zu][%zu] %a, k-order sum %a",
					 m, n, k, ta, tb, isa, i, j, c[i * ldc + j], sum);
			if (fabs(c[i * ldc + j] - want) > (k + 1) * 1.2e-7 * mag + 1e-30)
				fail_msg("%zux%zux%zu ta %d tb %d: [%zu][%zu] %g, want %g",
					 m, n, k, ta, tb, i, j, c[i * ldc + j], want);
		}
	}
	/* Rows r0..m alone: the same bits as in the whole product. */
	if (m) {
		const float *a0 = ta ? a + r0 : a + r0 * lda;

		assert_int_equal(vnpu_sgemm_isa(isa, ta, tb, m - r0, n, k, a0, lda,
						b, ldb, band, ldc), 0);
		for (i = r0; i < m; i++)
			assert_memory_equal(band + (i - r0) * ldc, c + i * ldc,
					    n * sizeof(float));
	}
	free(a);
	free(b);
	free(c);
	free(band);
}

/* Random shapes up to a few register blocks, and k over one cache block. */
static void random_shapes(void)
{
	int iter;

	for (iter = 0; iter < 300; iter++)
		one(rnd(40), 1 + rnd(90), rnd(600), rnd(2), rnd(2));
}

/*
 * Every dimension at exact multiples and one either side of the register
 * blocks (rows 4, 6, 8; columns 8, 16, 32 and their halves), the 256-k
 * cache block and the 256-column B block; m up to 2 panels reads B in
 * place, beyond it packs.
 */
static void edge_shapes(void)
{
	static const size_t dims[] = { 1, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 24, 31,
				       32, 33, 64, 255, 256, 257 };
	size_t i;
	int t;

	for (i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		for (t = 0; t < 4; t++) {
			one(dims[i] % 64 + 1, 33, dims[i], t & 1, t & 2);
			one(5 + 7 * (size_t)t, dims[i], 257, t & 1, t & 2);
			one(dims[i], 48, 3 + (size_t)t, t & 1, t & 2);
		}
		one(4, 32, dims[i], false, true);
		one(12, 16, dims[i], false, false);
		one(16, 32, dims[i], true, false);
	}
	/* k 0 and 1: a zero C, and one product per element. */
	for (t = 0; t < 4; t++) {
		one(13, 40, 0, t & 1, t & 2);
		one(13, 40, 1, t & 1, t & 2);
		one(1, 1, 1, t & 1, t & 2);
	}
}

/* A wide C: several B blocks of 256 columns, and K blocks on top. */
static void wide_shapes(void)
{
	one(19, 600, 300, false, false);
	one(7, 520, 513, true, true);
	one(30, 257, 40, false, true);
}

static void run_isa(void **state)
{
	isa = *(const enum vnpu_sgemm_isa *)*state;
	random_shapes();
	edge_shapes();
	wide_shapes();
}

/*
 * vnpu_sgemm() runs the best kernel this CPU has; one it lacks is
 * refused, not run.
 */
static void test_dispatch(void **state)
{
	enum vnpu_sgemm_isa best = vnpu_sgemm_best_isa();
	float a[2 * 3] = { 1, 2, 3, 4, 5, 6 }, b[3 * 2] = { 1, -1, 2, 0.5f, 3, 0.25f };
	float c[4], want[4] = { 14, 0.75f, 32, 0 };

	(void)state;
	assert_true(vnpu_sgemm_isa_ok(best));
	assert_true(vnpu_sgemm_isa_ok(VNPU_SGEMM_PORTABLE));
	if (best != VNPU_SGEMM_AVX512)
		assert_false(vnpu_sgemm_isa_ok(VNPU_SGEMM_AVX512));
	if (best == VNPU_SGEMM_PORTABLE)
		assert_false(vnpu_sgemm_isa_ok(VNPU_SGEMM_AVX2));
	assert_false(vnpu_sgemm_isa_ok((enum vnpu_sgemm_isa)99));
	assert_int_equal(vnpu_sgemm_isa((enum vnpu_sgemm_isa)99, false, false, 1,
					1, 1, a, 1, b, 1, c, 1), -EOPNOTSUPP);
	if (!vnpu_sgemm_isa_ok(VNPU_SGEMM_AVX512))
		assert_int_equal(vnpu_sgemm_isa(VNPU_SGEMM_AVX512, false, false, 1,
						1, 1, a, 1, b, 1, c, 1), -EOPNOTSUPP);
	assert_int_equal(vnpu_sgemm(false, false, 2, 2, 3, a, 3, b, 2, c, 2), 0);
	assert_memory_equal(c, want, sizeof(c));
}

int main(void)
{
	static const struct {
		enum vnpu_sgemm_isa isa;
		const char *name;
	} isas[] = {
		{ VNPU_SGEMM_PORTABLE, "test_kernel_portable" },
		{ VNPU_SGEMM_AVX2, "test_kernel_avx2" },
		{ VNPU_SGEMM_AVX512, "test_kernel_avx512" },
	};
	struct CMUnitTest tests[4];
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest){ .name = "test_dispatch",
					  .test_func = test_dispatch };
	for (i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		/* Not a test on this host at all: a skip is no pass. */
		if (!vnpu_sgemm_isa_ok(isas[i].isa)) {
			printf("# %s: not checked here: this CPU lacks it\n",
			       isas[i].name);
			continue;
		}
		tests[n++] = (struct CMUnitTest){ .name = isas[i].name,
						  .test_func = run_isa,
						  .initial_state = (void *)&isas[i].isa };
	}
	return _cmocka_run_group_tests("ops-sgemm", tests, n, NULL, NULL);
}
