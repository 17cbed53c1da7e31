// SPDX-License-Identifier: MIT
/* npu-quantize: calibration statistics (see npu-quantize-calib.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu-quantize-calib.h"

void qc_stats_add(struct qc_stats *s, const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float v = x[i], a = fabsf(v);

		if (isnan(v))
			continue;
		if (!s->seen) {
			s->min = s->max = v;
			s->amin = s->amax = a;
			s->seen = true;
			continue;
		}
		if (v < s->min)
			s->min = v;
		if (v > s->max)
			s->max = v;
		if (a < s->amin)
			s->amin = a;
		if (a > s->amax)
			s->amax = a;
	}
}

int qc_hist_init(struct qc_stats *s, enum qc_method m, uint32_t nbins)
{
	free(s->hist);
	s->hist = calloc(nbins ? nbins : 1, sizeof(*s->hist));
	if (!s->hist)
		return -ENOMEM;
	s->nbins = nbins;
	if (m == QC_ENTROPY) {
		float t = fmaxf(fabsf(s->min), fabsf(s->max));

		s->lo = -t;
		s->hi = t;
	} else {
		s->lo = s->amin;
		s->hi = s->amax;
	}
	/* np.histogram widens an empty range by half a unit each way */
	if (s->lo == s->hi) {
		s->lo -= 0.5f;
		s->hi += 0.5f;
	}
	return 0;
}

float qc_edge(float lo, float hi, uint32_t nbins, uint32_t i)
{
	/* np.linspace in float64, then cast; the last edge is exact */
	if (i >= nbins)
		return hi;
	return (float)((double)i * (((double)hi - (double)lo) / nbins) + (double)lo);
}

int64_t qc_bin(float lo, float hi, uint32_t nbins, float x)
{
	int64_t i;
	float f;

	if (!(x >= lo && x <= hi))
		return -1;
	/* np.histogram's fast path in float32, then its correction by the edges */
	f = ((x - lo) / (hi - lo)) * (float)nbins;
	i = (int64_t)f;
	if (i >= (int64_t)nbins)
		i = nbins - 1;
	if (i > 0 && x < qc_edge(lo, hi, nbins, (uint32_t)i))
		i--;
	if (i < (int64_t)nbins - 1 && x >= qc_edge(lo, hi, nbins, (uint32_t)i + 1))
		i++;
	return i;
}

void qc_hist_add(struct qc_stats *s, enum qc_method m, const float *x, size_t n)
{
	size_t i;

	if (!s->hist)
		return;
	for (i = 0; i < n; i++) {
		float v = m == QC_PERCENTILE ? fabsf(x[i]) : x[i];
		int64_t b = qc_bin(s->lo, s->hi, s->nbins, v);

		if (b >= 0)
			s->hist[b]++;
	}
}

void qc_stats_free(struct qc_stats *s)
{
	free(s->hist);
	s->hist = NULL;
}

/* quant_utils.smooth_distribution(): no empty bin, in float32 as numpy does. */
static bool smooth(const int64_t *p, float *out, size_t n)
{
	const float eps = 0.0001f;
	size_t i, zeros = 0;
	float eps1;

	for (i = 0; i < n; i++)
		zeros += p[i] == 0;
	if (zeros == n)
		return false;
	eps1 = (float)(0.0001 * (double)zeros / (double)(n - zeros));
	for (i = 0; i < n; i++)
		out[i] = p[i] ? (float)p[i] - eps1 : eps;
	for (i = 0; i < n; i++)
		if (out[i] <= 0)
			return false;
	return true;
}

/* scipy.stats.entropy(p, q): both normalised, sum p log(p / q). */
static double kl(const float *p, const float *q, size_t n)
{
	double sp = 0, sq = 0, d = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sp += p[i];
		sq += q[i];
	}
	for (i = 0; i < n; i++) {
		double a = p[i] / sp, b = q[i] / sq;

		if (a > 0)
			d += a * log(a / b);
	}
	return d;
}

void qc_entropy_window(const uint64_t *hist, uint32_t nbins, uint32_t num_quantized_bins,
		       uint32_t *start, uint32_t *end)
{
	uint32_t zero = nbins / 2, half = num_quantized_bins / 2, i, best_s = 0, best_e = nbins;
	double best = INFINITY;
	int64_t *p = malloc((size_t)nbins * sizeof(*p)), *q = malloc((size_t)nbins * sizeof(*q));
	float *ps = malloc((size_t)nbins * sizeof(*ps)), *qs = malloc((size_t)nbins * sizeof(*qs));
	int64_t *qb = malloc((size_t)(num_quantized_bins ? num_quantized_bins : 1) * sizeof(*qb));

	*start = 0;
	*end = nbins;
	if (!p || !q || !ps || !qs || !qb || !num_quantized_bins || half > zero)
		goto out;
	for (i = half; i <= zero; i++) {
		uint32_t s = zero - i, e = zero + i + 1 <= nbins ? zero + i + 1 : nbins;
		uint32_t len = e - s, merged = len / num_quantized_bins, k, j;
		uint64_t left = 0, right = 0;
		double d;

		for (j = 0; j < s; j++)
			left += hist[j];
		for (j = e; j < nbins; j++)
			right += hist[j];
		for (j = 0; j < len; j++)
			p[j] = (int64_t)hist[s + j];
		p[0] += (int64_t)left;
		p[len - 1] += (int64_t)right;
		/* the window without its outliers, merged into the quantized bins */
		for (k = 0; k < num_quantized_bins; k++) {
			qb[k] = 0;
			for (j = k * merged; j < k * merged + merged; j++)
				qb[k] += (int64_t)hist[s + j];
		}
		for (j = num_quantized_bins * merged; j < len; j++)
			qb[num_quantized_bins - 1] += (int64_t)hist[s + j];
		/* spread back over the bins p has values in (numpy's int64 truncation) */
		memset(q, 0, (size_t)len * sizeof(*q));
		for (k = 0; k < num_quantized_bins; k++) {
			int64_t norm = 0;

			for (j = k * merged; j < k * merged + merged; j++)
				norm += p[j] != 0;
			if (norm)
				for (j = k * merged; j < k * merged + merged; j++)
					q[j] = (int64_t)((double)qb[k] / (double)norm);
		}
		if (!smooth(p, ps, len) || !smooth(q, qs, len))
			d = INFINITY;
		else
			d = kl(ps, qs, len);
		/* np.argmin: the first of equal minima, the first if all are inf */
		if (i == half || d < best) {
			best = d;
			best_s = s;
			best_e = e;
		}
	}
	*start = best_s;
	*end = best_e;
out:
	free(p);
	free(q);
	free(ps);
	free(qs);
	free(qb);
}

void qc_range(const struct qc_stats *s, enum qc_method m, double percentile,
	      uint32_t num_quantized_bins, float *rmin, float *rmax)
{
	*rmin = s->seen ? s->min : 0;
	*rmax = s->seen ? s->max : 0;
	if (m == QC_MINMAX || !s->seen || !s->hist)
		return;
	if (m == QC_PERCENTILE) {
		uint64_t total = 0;
		double cdf = 0;
		uint32_t i, idx = s->nbins;
		float e;

		for (i = 0; i < s->nbins; i++)
			total += s->hist[i];
		/* np.searchsorted(cumsum(hist / total), p / 100): first cdf >= p */
		for (i = 0; total && i < s->nbins; i++) {
			cdf += (double)s->hist[i] / (double)total;
			if (cdf >= percentile / 100.0) {
				idx = i;
				break;
			}
		}
		e = qc_edge(s->lo, s->hi, s->nbins, idx);
		*rmin = -e < s->min ? s->min : -e;
		*rmax = e > s->max ? s->max : e;
	} else {
		uint32_t a, b;
		float lo, hi;

		qc_entropy_window(s->hist, s->nbins, num_quantized_bins, &a, &b);
		lo = qc_edge(s->lo, s->hi, s->nbins, a);
		hi = qc_edge(s->lo, s->hi, s->nbins, b);
		*rmin = lo < s->min ? s->min : lo;
		*rmax = hi > s->max ? s->max : hi;
	}
}
