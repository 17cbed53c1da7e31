/* SPDX-License-Identifier: MIT */
/*
 * fp32 GEMM for builds of the engine without a BLAS: libnpu's CPU path,
 * which runs the engine inside every program that links libnpu, static
 * guest binaries included, where a 26 MB static OpenBLAS per binary is
 * not an option.  The QEMU device keeps OpenBLAS where it is faster.
 *
 * The subset of cblas_sgemm() the engine calls: row-major, alpha 1,
 * beta 0.  Each C element sums its K products in ascending k order, so
 * the result does not depend on how M or N are blocked.
 */
#ifndef VNPU_SGEMM_H
#define VNPU_SGEMM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * C[m][n] = sum_k op(A)[m][k] * op(B)[k][n], op = transpose when @ta/@tb.
 * A is [m][lda] (or [k][lda] with @ta), B [k][ldb] (or [n][ldb] with @tb),
 * C [m][ldc].  0, or -ENOMEM when the packing buffer cannot be had.
 */
int vnpu_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k,
	       const float *a, size_t lda, const float *b, size_t ldb,
	       float *c, size_t ldc);

/*
 * The register-blocked kernels vnpu_sgemm() picks from, best first that
 * the CPU runs; named so tests and benchmarks can run each one.
 */
enum vnpu_sgemm_isa {
	VNPU_SGEMM_PORTABLE,	/* 16-byte vectors: SSE2, NEON, ... */
	VNPU_SGEMM_AVX2,
	VNPU_SGEMM_AVX512,
};

/* Whether this CPU (and build) runs @isa's kernel. */
bool vnpu_sgemm_isa_ok(enum vnpu_sgemm_isa isa);
enum vnpu_sgemm_isa vnpu_sgemm_best_isa(void);
/* vnpu_sgemm() with @isa's kernel; -EOPNOTSUPP if !vnpu_sgemm_isa_ok(). */
int vnpu_sgemm_isa(enum vnpu_sgemm_isa isa, bool ta, bool tb, size_t m,
		   size_t n, size_t k, const float *a, size_t lda,
		   const float *b, size_t ldb, float *c, size_t ldc);

#endif /* VNPU_SGEMM_H */
