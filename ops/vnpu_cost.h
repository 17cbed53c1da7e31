/* SPDX-License-Identifier: MIT */
/*
 * What one work unit (ops.rst, "Work units") of each device op may cost:
 * the largest CPU time per counted unit bench/ops/bench-cost.c found over
 * the engine's kernels and the reference, on an x86-64 host with AVX-512
 * (ops.rst, "Cost of a work unit", has the table and how it was
 * measured), rounded up.  A command of U units then runs in at most
 * about U times this, whatever its shapes, strides or attributes: that
 * is what makes VNPU_LIMIT_CMD_MACS a bound on time.
 *
 * Not a timing model (that is vnpu_engine_cycles()): a ceiling the
 * engine fuzzer holds every run to, with slack for sanitizers and load.
 */
#ifndef VNPU_COST_H
#define VNPU_COST_H

#include "vnpu_hw_ops.h"

/* Nanoseconds per work unit of @op, at most; 0 for an unknown opcode. */
static inline unsigned int vnpu_cost_unit_ns(unsigned int op)
{
	static const unsigned char ns[VNPU_OP_LAST - VNPU_OP_GEMM + 1] = {
		[VNPU_OP_GEMM - VNPU_OP_GEMM]		= 40,
		[VNPU_OP_CONV2D - VNPU_OP_GEMM]		= 50,
		[VNPU_OP_POOL2D - VNPU_OP_GEMM]		= 20,
		[VNPU_OP_ELTWISE - VNPU_OP_GEMM]	= 60,
		[VNPU_OP_ACTIVATION - VNPU_OP_GEMM]	= 60,
		[VNPU_OP_SOFTMAX - VNPU_OP_GEMM]	= 40,
		[VNPU_OP_LAYERNORM - VNPU_OP_GEMM]	= 70,
		[VNPU_OP_QUANTIZE - VNPU_OP_GEMM]	= 30,
		[VNPU_OP_DEQUANTIZE - VNPU_OP_GEMM]	= 30,
		[VNPU_OP_REQUANTIZE - VNPU_OP_GEMM]	= 30,
		[VNPU_OP_COPY - VNPU_OP_GEMM]		= 100,
		[VNPU_OP_RESIZE - VNPU_OP_GEMM]		= 60,
		[VNPU_OP_CONV_TRANSPOSE - VNPU_OP_GEMM]	= 60,
		[VNPU_OP_REDUCE - VNPU_OP_GEMM]		= 40,
		[VNPU_OP_LUT - VNPU_OP_GEMM]		= 20,
	};

	if (op < VNPU_OP_GEMM || op > VNPU_OP_LAST)
		return 0;
	return ns[op - VNPU_OP_GEMM];
}

#endif /* VNPU_COST_H */
