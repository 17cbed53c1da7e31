/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: the statistics calibration keeps per activation tensor,
 * and the ranges onnxruntime's calibrators (calibrate.py) derive from
 * them: MinMax, Percentile and Entropy.
 *
 * Memory is fixed per tensor whatever the number of samples: a minimum,
 * a maximum and one histogram of a fixed number of bins.  onnxruntime
 * grows its histograms as later samples widen the range; here a first
 * pass over the samples finds the range and a second one fills a
 * histogram over it, which is the histogram onnxruntime builds when the
 * first sample already spans the range (always so for one sample).
 */
#ifndef NPU_QUANTIZE_CALIB_H
#define NPU_QUANTIZE_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qc_method { QC_MINMAX, QC_PERCENTILE, QC_ENTROPY };

/* onnxruntime's defaults (create_calibrator) */
#define QC_PERCENTILE_BINS	2048u
#define QC_ENTROPY_BINS		128u
#define QC_ENTROPY_QUANT_BINS	128u
#define QC_DEFAULT_PERCENTILE	99.999

struct qc_stats {
	bool seen;
	float min, max;		/* of the values */
	float amin, amax;	/* of their absolute values */
	/* the histogram of the second pass: nbins counts over [lo, hi] */
	uint32_t nbins;
	uint64_t *hist;
	float lo, hi;
};

/* Pass 1: the range. */
void qc_stats_add(struct qc_stats *s, const float *x, size_t n);

/*
 * Pass 2: the histogram @m needs (Entropy: values over [-t, t], t the
 * largest magnitude; Percentile: magnitudes over [amin, amax]), @nbins
 * bins.  0 or -ENOMEM.
 */
int qc_hist_init(struct qc_stats *s, enum qc_method m, uint32_t nbins);
void qc_hist_add(struct qc_stats *s, enum qc_method m, const float *x, size_t n);
void qc_stats_free(struct qc_stats *s);

/* np.histogram's edge @i of @nbins bins over [lo, hi] (float32, as numpy's). */
float qc_edge(float lo, float hi, uint32_t nbins, uint32_t i);

/* np.histogram's bin of @x over [lo, hi], or -1 outside. */
int64_t qc_bin(float lo, float hi, uint32_t nbins, float x);

/*
 * The range of a tensor: MinMax is [min, max]; Percentile (symmetric, as
 * onnxruntime's default) [-e, e] with e the histogram edge where the CDF
 * of |x| reaches @percentile; Entropy the thresholds of least KL
 * divergence against a @num_quantized_bins quantization.  Both clipped to
 * [min, max].
 */
void qc_range(const struct qc_stats *s, enum qc_method m, double percentile,
	      uint32_t num_quantized_bins, float *rmin, float *rmax);

/*
 * get_entropy_threshold(): the (start, end) bin indices of the
 * histogram's KL-optimal window; exposed for the tests.
 */
void qc_entropy_window(const uint64_t *hist, uint32_t nbins, uint32_t num_quantized_bins,
		       uint32_t *start, uint32_t *end);

#endif /* NPU_QUANTIZE_CALIB_H */
