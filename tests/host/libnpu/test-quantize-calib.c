// SPDX-License-Identifier: MIT
/*
 * npu-quantize's calibration (libnpu/tools/npu-quantize-calib.c) against
 * values worked out by hand from onnxruntime's calibrate.py and numpy:
 *
 *   np.histogram(a, n, range=(lo, hi)): edges np.linspace(lo, hi, n + 1)
 *     in float64 cast to float32, the last bin closed.
 *   PercentileCalibrater (symmetric, the default): the histogram of |x|
 *     over [min |x|, max |x|]; the threshold is edge[searchsorted(
 *     cumsum(hist / total), p / 100)], the range (-t, t) clipped to the
 *     data's [min, max].
 *   EntropyCalibrater's get_entropy_threshold: for each window of
 *     2i + 1 bins around the middle one, from num_quantized_bins / 2 up,
 *     KL(p || q) with p the window plus the outliers folded into its end
 *     bins and q the window merged into num_quantized_bins bins spread
 *     back over p's non-empty bins (int64 truncation), both smoothed;
 *     the first window of least divergence wins.  The expected windows
 *     below were computed with a transcription of that code.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "npu-quantize-calib.h"

static void test_edges_and_bins(void **state)
{
	(void)state;
	assert_true(qc_edge(0, 1, 4, 0) == 0.0f);
	assert_true(qc_edge(0, 1, 4, 1) == 0.25f);
	assert_true(qc_edge(0, 1, 4, 4) == 1.0f);
	/* float64 then float32: 7 * 0.9 is 6.3 in float32 (0x1.933334p+2) */
	assert_true(qc_edge(0, 9, 10, 7) == 0x1.933334p+2f);
	assert_int_equal(qc_bin(0, 1, 4, 0), 0);
	assert_int_equal(qc_bin(0, 1, 4, 0.25f), 1);
	assert_int_equal(qc_bin(0, 1, 4, 0.2499f), 0);
	/* the last bin holds its right edge */
	assert_int_equal(qc_bin(0, 1, 4, 1), 3);
	assert_int_equal(qc_bin(0, 1, 4, 1.0001f), -1);
	assert_int_equal(qc_bin(0, 1, 4, -0.0001f), -1);
	assert_int_equal(qc_bin(0, 1, 4, NAN), -1);
}

static void test_stats(void **state)
{
	const float x[] = { -3, NAN, 2, 0.5f, -0.25f };
	struct qc_stats s = { 0 };
	float lo, hi;

	(void)state;
	qc_stats_add(&s, x, 5);
	assert_true(s.seen);
	assert_true(s.min == -3 && s.max == 2);
	assert_true(s.amin == 0.25f && s.amax == 3);
	qc_range(&s, QC_MINMAX, 0, 0, &lo, &hi);
	assert_true(lo == -3 && hi == 2);
}

static void test_percentile(void **state)
{
	float x[10], lo, hi;
	struct qc_stats s = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		x[i] = (float)i;
	qc_stats_add(&s, x, 10);
	assert_int_equal(qc_hist_init(&s, QC_PERCENTILE, 10), 0);
	qc_hist_add(&s, QC_PERCENTILE, x, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(s.hist[i], 1);
	/*
	 * cumsum of ten 0.1s first reaches 0.75 at index 7 (0.7999...), so
	 * the threshold is edge 7, 6.3; (-6.3, 6.3) clipped to [0, 9].
	 */
	qc_range(&s, QC_PERCENTILE, 75, 0, &lo, &hi);
	assert_true(lo == 0);
	assert_true(hi == 0x1.933334p+2f);
	/* 99.999% is reached at the last bin, whose left edge is 8.1: never the max */
	qc_range(&s, QC_PERCENTILE, 99.999, 0, &lo, &hi);
	assert_true(hi == 0x1.033334p+3f);
	qc_stats_free(&s);

	/* symmetric: -9..0 gives (-6.3, 0) */
	for (i = 0; i < 10; i++)
		x[i] = -(float)i;
	s = (struct qc_stats){ 0 };
	qc_stats_add(&s, x, 10);
	assert_int_equal(qc_hist_init(&s, QC_PERCENTILE, 10), 0);
	qc_hist_add(&s, QC_PERCENTILE, x, 10);
	qc_range(&s, QC_PERCENTILE, 75, 0, &lo, &hi);
	assert_true(lo == -0x1.933334p+2f);
	assert_true(hi == 0);
	qc_stats_free(&s);
}

static void test_entropy_window(void **state)
{
	static const uint64_t a[8] = { 1, 0, 0, 50, 100, 50, 0, 1 };
	static const uint64_t b[16] = { 0, 0, 3, 40, 90, 60, 10, 2, 0, 0, 1, 0, 0, 0, 0, 1 };
	static const uint64_t flat[8] = { 5, 5, 5, 5, 5, 5, 5, 5 };
	uint32_t s, e;

	(void)state;
	/* KL 0.081 for [2, 7), 3.13 for [1, 8), 0.271 for [0, 8) */
	qc_entropy_window(a, 8, 4, &s, &e);
	assert_int_equal(s, 2);
	assert_int_equal(e, 7);
	/* seven windows; [5, 12) has the least divergence, 0.1223 (next 0.1291) */
	qc_entropy_window(b, 16, 4, &s, &e);
	assert_int_equal(s, 5);
	assert_int_equal(e, 12);
	/* a flat histogram keeps everything (KL 0) */
	qc_entropy_window(flat, 8, 4, &s, &e);
	assert_int_equal(s, 0);
	assert_int_equal(e, 8);
	/* onnxruntime's defaults, 128 bins and 128 quantized bins: one window, all of it */
	{
		uint64_t h[128] = { 0 };

		h[3] = 7;
		h[64] = 100;
		h[127] = 1;
		qc_entropy_window(h, 128, 128, &s, &e);
		assert_int_equal(s, 0);
		assert_int_equal(e, 128);
	}
}

static void test_entropy_range(void **state)
{
	float x[8], lo, hi;
	struct qc_stats s = { 0 };
	int i, k;

	(void)state;
	/*
	 * Values over [-4, 4] in 8 bins of width 1 with the counts of @a
	 * above: the window [2, 7) spans edges -2 to 3, inside [min, max].
	 */
	static const float centres[8] = { -3.5f, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f };
	static const int counts[8] = { 1, 0, 0, 50, 100, 50, 0, 1 };

	x[0] = -4;
	x[1] = 4;
	qc_stats_add(&s, x, 2);
	assert_int_equal(qc_hist_init(&s, QC_ENTROPY, 8), 0);
	for (i = 0; i < 8; i++)
		for (k = 0; k < counts[i]; k++)
			qc_hist_add(&s, QC_ENTROPY, &centres[i], 1);
	qc_range(&s, QC_ENTROPY, 0, 4, &lo, &hi);
	assert_true(lo == -2);
	assert_true(hi == 3);
	qc_stats_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges_and_bins),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_entropy_window),
		cmocka_unit_test(test_entropy_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
