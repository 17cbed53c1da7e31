/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: the error of the quantized model against the fp32 one,
 * per tensor, accumulated over samples in fixed memory.
 */
#ifndef NPU_QUANTIZE_REPORT_H
#define NPU_QUANTIZE_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct qe_stat {
	char *name;		/* the fp32 model's tensor */
	const char *what;	/* "output", or the op type producing it */
	double max_abs;		/* largest |fp32 - quantized| */
	double signal;		/* sum of fp32^2 */
	double noise;		/* sum of (fp32 - quantized)^2 */
	uint64_t count;
	bool missing;		/* absent or of another size in one of the runs */
};

void qe_add(struct qe_stat *s, const float *ref, const float *got, size_t n);

/*
 * Signal-to-quantization-noise ratio in dB, 10 log10(signal / noise):
 * INFINITY for no noise at all.
 */
double qe_sqnr(const struct qe_stat *s);

/* One line per tensor, then the outputs, then a summary line. */
void qe_print(FILE *f, const struct qe_stat *tensors, size_t nt, const struct qe_stat *outputs,
	      size_t no, size_t samples);

#endif /* NPU_QUANTIZE_REPORT_H */
