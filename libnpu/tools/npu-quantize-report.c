// SPDX-License-Identifier: MIT
/* npu-quantize: error report (see npu-quantize-report.h). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "npu-quantize-report.h"

void qe_add(struct qe_stat *s, const float *ref, const float *got, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double r = ref[i], d = r - (double)got[i];

		/* a NaN either side is an error without bound */
		if (isnan(d))
			d = INFINITY;
		if (fabs(d) > s->max_abs)
			s->max_abs = fabs(d);
		s->signal += r * r;
		s->noise += d * d;
	}
	s->count += n;
}

double qe_sqnr(const struct qe_stat *s)
{
	if (s->noise == 0)
		return INFINITY;
	if (s->signal == 0)
		return -INFINITY;
	return 10.0 * log10(s->signal / s->noise);
}

static void line(FILE *f, const struct qe_stat *s)
{
	if (s->missing)
		fprintf(f, "  %-48s %-18s not comparable (absent or of another shape in a run)\n",
			s->name, s->what);
	else
		fprintf(f, "  %-48s %-18s max abs error %-12.6g SQNR %7.2f dB\n", s->name, s->what,
			s->max_abs, qe_sqnr(s));
}

void qe_print(FILE *f, const struct qe_stat *tensors, size_t nt, const struct qe_stat *outputs,
	      size_t no, size_t samples)
{
	const struct qe_stat *worst = NULL;
	double min_out = INFINITY;
	size_t i;

	fprintf(f, "error against fp32 over %zu sample%s, per quantized tensor:\n", samples,
		samples == 1 ? "" : "s");
	for (i = 0; i < nt; i++) {
		line(f, &tensors[i]);
		if (!tensors[i].missing && (!worst || qe_sqnr(&tensors[i]) < qe_sqnr(worst)))
			worst = &tensors[i];
	}
	fprintf(f, "model outputs:\n");
	for (i = 0; i < no; i++) {
		line(f, &outputs[i]);
		if (!outputs[i].missing && qe_sqnr(&outputs[i]) < min_out)
			min_out = qe_sqnr(&outputs[i]);
	}
	fprintf(f, "summary: %zu tensors quantized; lowest SQNR %.2f dB at %s; outputs' lowest SQNR %.2f dB\n",
		nt, worst ? qe_sqnr(worst) : INFINITY, worst ? worst->name : "-", min_out);
}
