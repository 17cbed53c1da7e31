/* SPDX-License-Identifier: MIT */
/*
 * The device's fast compute engine.  Same contract as vnpu_ref_run() (the
 * engine must produce what the reference produces: bit-identical on
 * integer paths, within ops.rst's tolerances on float paths) but with
 * blocked SIMD kernels for the ops that matter.  No global mutable state:
 * several device worker threads call it at once.
 */
#ifndef VNPU_ENGINE_H
#define VNPU_ENGINE_H

#include "vnpu_ref.h"

/* Run a command already validated by vnpu_op_check() (@info is its result). */
int vnpu_engine_run(const struct vnpu_cmd_compute *cmd,
		    const struct vnpu_op_info *info,
		    const struct vnpu_op_bind *bind);

/* Modelled NPU cycles of a validated command (timing model, ops.rst). */
uint64_t vnpu_engine_cycles(const struct vnpu_cmd_compute *cmd,
			    const struct vnpu_op_info *info);

/* ---- int8 GEMM core (vnpu_engine_i8.c) -------------------------------- */

/*
 * C[m][n] = sum_k A[m][k] * B[k][n] mod 2^32 with A unsigned and B signed
 * bytes.  A is row-major with rows padded to kp (a multiple of 4) bytes;
 * B is packed by vnpu_i8_pack_b() into 16-column panels of 4-byte k groups,
 * the layout a VNNI dot-product instruction consumes directly.
 */
#define VNPU_I8_NR	16	/* columns per panel */
#define VNPU_I8_MR	8	/* rows per register block */

struct vnpu_i8_b {
	int8_t *p;		/* np/16 panels of (kp/4) x 16 x 4 bytes */
	uint32_t n, np, kp;
};

static inline uint32_t vnpu_round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* @c: mp x np int32, row stride np; mp multiple of MR, np of NR. */
void vnpu_i8_gemm(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		  int32_t *c);
/*
 * The kernels vnpu_i8_gemm() can dispatch to.  It takes the best one the
 * CPU has, or the one the environment variable VNPU_I8_KERNEL names
 * (vnpu_i8_kernel_id() spelling) when the CPU has that one.
 */
enum vnpu_i8_kernel {
	VNPU_I8_GENERIC,	/* portable C */
	VNPU_I8_AVX2,		/* int16 widening + vpmaddwd */
	VNPU_I8_VNNI,		/* AVX-512 vpdpbusd */
	VNPU_I8_NKERNELS
};

bool vnpu_i8_kernel_available(enum vnpu_i8_kernel k);
const char *vnpu_i8_kernel_id(enum vnpu_i8_kernel k);
enum vnpu_i8_kernel vnpu_i8_kernel_select(void);
/* Name of the kernel vnpu_i8_gemm() dispatches to now. */
const char *vnpu_i8_kernel_name(void);

#endif /* VNPU_ENGINE_H */
