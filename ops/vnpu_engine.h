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

/*
 * Run a command already validated by vnpu_op_check() (@info is its
 * result) within @x's scratch budget, polling its abort callback.
 * 0, -EINVAL (a per-channel array holds a bad value), -ENOMEM (scratch
 * exhausted: see vnpu_arena_exhausted()) or -ECANCELED.
 */
int vnpu_engine_run(const struct vnpu_cmd_compute *cmd,
		    const struct vnpu_op_info *info,
		    const struct vnpu_op_bind *bind, struct vnpu_run_ctx *x);

/* Modelled NPU cycles of a validated command (timing model, ops.rst). */
uint64_t vnpu_engine_cycles(const struct vnpu_cmd_compute *cmd,
			    const struct vnpu_op_info *info);

/*
 * COPY (vnpu_engine_move.c) over operands bound by the dispatcher: 0 or
 * -ECANCELED.
 */
int vnpu_eng_copy(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		  struct vnpu_run_ctx *rc);
/*
 * Y[i][j] = X[j][i] for i < @ni, j < @nj of @es-byte elements (1, 2 or
 * 4), rows contiguous, Y's @ys and X's @xs bytes apart
 * (vnpu_engine_tile.c); @avx2 from vnpu_tile_have_avx2().
 */
void vnpu_tile_transpose(uint8_t *y, int64_t ys, const uint8_t *x, int64_t xs,
			 uint32_t ni, uint32_t nj, uint32_t es, bool avx2);
bool vnpu_tile_have_avx2(void);
/* Output rows plus columns vnpu_eng_resize() precomputes taps for. */
#define VNPU_RESIZE_TAP_TABLE_MAX	(1u << 20)
/* RESIZE, likewise; also -ENOMEM (its tap tables come from the arena). */
int vnpu_eng_resize(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc);

/* ---- CONV_TRANSPOSE, REDUCE, SOFTMAX (vnpu_engine_nn.c) ------------ */

/*
 * Bound operands @t of a validated command; same results as the
 * reference, bit for bit.  0, -ENOMEM or -ECANCELED.
 */
int vnpu_eng_convt(const struct vnpu_cmd_compute *c,
		   const struct vnpu_op_info *info, struct vnpu_tv *t,
		   struct vnpu_run_ctx *rc);
/*
 * CONV_TRANSPOSE as stride-1 CONV2Ds, one per output phase
 * (vnpu_engine_convt.c): fp32 X, W and Y, or 8-bit quantized.  Integer
 * results as the reference's, float ones within the CONV2D tolerance.
 * 0, -ENOMEM, -ECANCELED, or -EAGAIN (nothing written) for commands it
 * leaves to vnpu_eng_convt().
 */
int vnpu_eng_convt_phases(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, struct vnpu_tv *t,
			  struct vnpu_run_ctx *rc);
/*
 * A CONV2D @c over operands @t bound by the caller (views need not lie in
 * the command's buffers), by the kernel vnpu_engine_run() would pick: 0,
 * -ENOMEM, -ECANCELED, or -EAGAIN (nothing written) for grouped convs with
 * fewer than 8 outputs per group that are not depthwise.
 */
int vnpu_eng_conv_bound(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info, struct vnpu_tv *t,
			struct vnpu_run_ctx *rc);
/* X must be fp32. */
int vnpu_eng_reduce(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc);
/* SOFTMAX with fp32 X and Y; bit for bit too.  0, -ENOMEM or -ECANCELED. */
int vnpu_eng_softmax(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc);
/* SOFTMAX with VNPU_ROUND_ORT_QLINEAR (QLinearSoftmax); likewise. */
int vnpu_eng_softmax_qlinear(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
			     struct vnpu_run_ctx *rc);

/* ---- Per-tensor 8-bit rows to and from reals (vnpu_engine_q8.c) ------ */

/* INT8 or UINT8, per tensor, with a zero point the row functions take. */
bool vnpu_eng_q8_ok(const struct vnpu_tv *tv);
/* @m dense elements at @p of @tv as vnpu_ld() reads them. */
void vnpu_eng_q8_load(const struct vnpu_tv *tv, const uint8_t *p, float *buf,
		      uint32_t m);
/* @v[0..m) into elements p[j * st] of @tv as vnpu_st() stores them. */
void vnpu_eng_q8_store(const struct vnpu_tv *tv, uint8_t *p, int64_t st,
		       const float *v, uint32_t m, unsigned int round);

/* ---- ELTWISE and the per-element ops (vnpu_engine_elt.c) ------------- */

/*
 * vnpu_eng_elt() takes @c: ELTWISE, ACTIVATION, QUANTIZE or DEQUANTIZE
 * without per-channel quantized operands.
 */
bool vnpu_eng_elt_ok(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info);
/* Same results as the reference, bit for bit.  0 or -ECANCELED. */
int vnpu_eng_elt(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		 struct vnpu_run_ctx *rc);

/* LUT over bound operands; bit-identical to the reference.  0 or -ECANCELED. */
int vnpu_eng_lut(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		 struct vnpu_run_ctx *rc);

/* ---- POOL2D (vnpu_engine_pool.c) --------------------------------------- */

/* X and Y fp32 or per-tensor 8-bit (vnpu_eng_q8_ok()), unit channel stride. */
bool vnpu_eng_pool_ok(const struct vnpu_cmd_compute *c,
		      const struct vnpu_tv *t);
/* Same results as the reference, bit for bit.  0 or -ECANCELED. */
int vnpu_eng_pool(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		  struct vnpu_run_ctx *rc);

/* ---- Depthwise CONV2D (vnpu_engine_dw.c) ------------------------------- */

/* Depthwise channels the direct kernels take: per-channel scratch stays small. */
#define VNPU_DW_MAX_CHANNELS	(1u << 16)

/*
 * vnpu_eng_dw() takes @c: a depthwise CONV2D with channel multiplier 1,
 * channels dense in X and Y, all fp32 or 8-bit quantized.
 */
bool vnpu_eng_dw_ok(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info, const struct vnpu_tv *t);
/*
 * Same results as the reference (bit for bit on int8, within ops.rst's
 * tolerance on fp32).  0, -ENOMEM, -ECANCELED, or 1 when an epilogue
 * needs the general path (nothing written then).
 */
int vnpu_eng_dw(const struct vnpu_cmd_compute *c,
		const struct vnpu_op_info *info, struct vnpu_tv *t,
		struct vnpu_run_ctx *rc);

/* ---- direct CONV2D (vnpu_engine_conv.c) -------------------------- */

/*
 * vnpu_eng_conv_f32() takes @c: an fp32 CONV2D with one group, channels
 * dense in X and Y, on a host (and configuration, @rc) with AVX-512.
 */
bool vnpu_eng_conv_f32_ok(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, const struct vnpu_tv *t,
			  const struct vnpu_run_ctx *rc);
/* Within ops.rst's float tolerance of the reference.  0, -ENOMEM or -ECANCELED. */
int vnpu_eng_conv_f32(const struct vnpu_cmd_compute *c,
		      const struct vnpu_op_info *info, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc);

/*
 * vnpu_eng_conv_i8() takes @c: an 8-bit quantized CONV2D with one group,
 * dense channels, on a host (and configuration) with AVX-512 VNNI or AVX2.
 */
bool vnpu_eng_conv_i8_ok(const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info, const struct vnpu_tv *t,
			 const struct vnpu_run_ctx *rc);
/*
 * Bit-exact with the reference.  0, -ENOMEM, -ECANCELED, or 1 when the
 * command needs the im2col path (nothing written then).
 */
int vnpu_eng_conv_i8(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc);

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

/* Only for values already bounded by the command limits (< 2^31). */
static inline uint32_t vnpu_round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * @c: mp x np int32, row stride np; mp multiple of MR, np of NR.  Runs
 * @x's int8 kernel and polls @x every few register blocks: 0 or
 * -ECANCELED (then @c is partly written).
 */
int vnpu_i8_gemm(const uint8_t *a, uint32_t mp, const struct vnpu_i8_b *b,
		 int32_t *c, struct vnpu_run_ctx *x);
#endif /* VNPU_ENGINE_H */
