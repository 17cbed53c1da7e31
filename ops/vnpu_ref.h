/* SPDX-License-Identifier: MIT */
/*
 * vnpu compute ops: command validation and the reference implementation.
 *
 * This is the one definition of what every compute op computes.  It is
 * plain C11 with no global state and no QEMU or kernel dependency, so the
 * device engine (whose fast paths must agree with it), libnpu's CPU
 * fallback and the host tests all link the same code.
 *
 * Use: vnpu_op_check() a command (it also reports how many bytes each
 * operand spans), bind a host address to every present operand slot, and
 * vnpu_ref_run() it.
 */
#ifndef VNPU_REF_H
#define VNPU_REF_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vnpu_hw_ops.h"
#include "vnpu_run.h"

/**
 * struct vnpu_op_info - what vnpu_op_check() learned about a command.
 * @present: bit i set when slot i holds an operand
 * @span: bytes from t[i].va that cover every element of slot i
 * @qbytes: bytes of slot i's per-channel arrays at t[i].quant_va, else 0
 * @macs: work units (ops.rst, "Work units"): multiply-accumulates for
 *	GEMM and CONV2D, window taps for pooling, elements otherwise
 * @quantized: the op accumulates in int32 (int8/uint8 GEMM or CONV2D)
 * @err_off: on -EINVAL, byte offset within the command of the first
 *	field found at fault
 */
struct vnpu_op_info {
	uint32_t present;
	uint64_t span[VNPU_OP_SLOTS];
	uint64_t qbytes[VNPU_OP_SLOTS];
	uint64_t macs;
	bool quantized;
	uint32_t err_off;
};

/**
 * struct vnpu_op_limits - the bounds a checker enforces (vnpu_hw_ops.h's
 * VNPU_LIMIT_* for a device; far larger ones for the host CPU fallback).
 */
struct vnpu_op_limits {
	uint64_t tensor_elems;
	uint64_t tensor_bytes;
	uint64_t cmd_bytes;
	uint64_t cmd_macs;
	uint64_t reduction;
	uint32_t kernel_dim;
	uint32_t channels;
};

/* The command limits of hardware interface 1.1. */
extern const struct vnpu_op_limits vnpu_op_limits_device;
/*
 * What vnpu_ref_check() allows: only what keeps the reference's own
 * arithmetic exact (64-bit offsets, int32 indices); for the CPU fallback,
 * whose caller owns the memory and the time.
 */
extern const struct vnpu_op_limits vnpu_op_limits_host;

/**
 * vnpu_op_check - validate one compute command.
 * @cmd: the command bytes (any alignment)
 * @size: their count
 * @cc: receives an aligned copy of the command
 * @info: receives the operand spans
 *
 * Return: 0, or -EINVAL for anything malformed or beyond the device's
 * command limits: unknown opcode, non-zero reserved bits, bad
 * dtype/rank/shape, shape products or address spans that overflow,
 * operands reaching beyond the VA space, a self-overlapping output.
 * info->err_off then names the offending field.
 */
int vnpu_op_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		  struct vnpu_op_info *info);

/* vnpu_op_check() against other limits. */
int vnpu_op_check_limits(const void *cmd, uint32_t size,
			 struct vnpu_cmd_compute *cc, struct vnpu_op_info *info,
			 const struct vnpu_op_limits *lim);

/**
 * struct vnpu_op_bind - host addresses of a command's operands.
 * @data: host address of element [0,...,0] of each present slot; the
 *	whole span reported by vnpu_op_check() must be accessible from it
 * @qparams: host copy of slot i's per-channel arrays (qbytes[i] bytes,
 *	any alignment) for VNPU_QUANT_CHANNEL slots, else NULL
 */
struct vnpu_op_bind {
	void *data[VNPU_OP_SLOTS];
	const void *qparams[VNPU_OP_SLOTS];
};

/**
 * vnpu_ref_run - execute a command with the reference implementation.
 *
 * Takes device commands and the CPU-only ops below (vnpu_ref_check()).
 *
 * Return: 0, or -EINVAL if the command is malformed or a per-channel
 * array holds an invalid scale or zero point (nothing is written then).
 */
int vnpu_ref_run(const struct vnpu_cmd_compute *cmd,
		 const struct vnpu_op_bind *bind);

/*
 * vnpu_ref_run() within @x's scratch budget, polling its abort callback
 * (the device engine's path for ops it has no fast kernel for).  Also
 * -ENOMEM (scratch) and -ECANCELED; @x may be NULL.
 */
int vnpu_ref_run_ctx(const struct vnpu_cmd_compute *cmd,
		     const struct vnpu_op_bind *bind, struct vnpu_run_ctx *x);

/* ---- CPU-only ops ------------------------------------------------------ */

/*
 * Ops no device implements, which the reference runs for libnpu's CPU
 * fallback so that a model using them still runs (on the CPU) rather than
 * not at all.  They reuse struct vnpu_cmd_compute with opcodes outside the
 * compute command range of vnpu_hw.h: vnpu_op_check(), and so every
 * device, rejects them; vnpu_ref_check() and vnpu_ref_run() accept them.
 * They take no fused activation (act 0, act_alpha 0).
 */
#define VNPU_REF_OP_CPU_FIRST	0xf0
/*
 * Wrapping integer ELTWISE (attr.eltwise.kind) of unquantized tensors:
 * t0 A, t1 B, t3 Y, one dtype of INT8, UINT8, INT32, all VNPU_QUANT_NONE,
 * numpy broadcasting as ELTWISE.  Results are taken modulo 2^bits (ONNX's
 * integer Add/Sub/Mul), where ELTWISE would saturate a quantized value.
 * DIV truncates (x / 0 is 0), MAX/MIN compare signed values of the dtype,
 * POW is repeated multiplication modulo 2^32 (int_pow() in vnpu_ref.c).
 */
#define VNPU_REF_OP_INT_ELTWISE	0xf0
/*
 * 3-D pooling NDHWC: t0 X [N,D,H,W,C], t3 Y [N,OD,OH,OW,C], attributes
 * struct vnpu_ref_attr_pool3d in attr.raw; dtypes and quantization as
 * POOL2D.  t2 (optional, MAX only): INT32 tensor shaped like Y that
 * receives, per output element, the element offset within X (the sum of
 * index times X's element stride) of the maximum: the first one in
 * window order, a NaN winning over numbers; -1 for a window that holds
 * no element of X.  With X an NCDHW tensor described through strides
 * this is ONNX MaxPool's row-major Indices output.  2-D pooling with
 * indices is this op with D = 1.
 */
#define VNPU_REF_OP_POOL3D	0xf1
#define VNPU_REF_OP_CPU_LAST	VNPU_REF_OP_POOL3D

/*
 * Dimension order d, h, w.  Each kernel, stride and dilation >= 1; a pad
 * smaller than the dilated kernel extent; @kind VNPU_POOL_MAX or _AVG;
 * @flags VNPU_POOL_COUNT_INCLUDE_PAD (AVG only).  A window with no element
 * of X yields -inf (MAX) or 0 (AVG without COUNT_INCLUDE_PAD).
 */
struct vnpu_ref_attr_pool3d {
	uint32_t kind;
	uint32_t flags;
	uint16_t kernel[3], stride[3], dilation[3];
	uint16_t pad_begin[3], pad_end[3];
	uint16_t reserved;	/* must be zero, as attr bytes 40..47 */
};

/**
 * vnpu_ref_check - vnpu_op_check() that also accepts the CPU-only ops, and
 * checks vnpu_op_limits_host instead of the device's command limits.
 */
int vnpu_ref_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		   struct vnpu_op_info *info);

/* ---- Building blocks shared with the device engine ------------------- */

/* A bound operand: strides in elements, quant parameters resolved. */
struct vnpu_tv {
	uint8_t *p;
	uint8_t dtype, rank, quant, axis;
	uint32_t esize;
	uint32_t dims[VNPU_MAX_RANK];
	int64_t st[VNPU_MAX_RANK];
	float scale;
	int32_t zp;
	const uint8_t *qarr;	/* CHANNEL: scales then zero points */
};

void vnpu_tv_init(struct vnpu_tv *tv, const struct vnpu_tensor_desc *d,
		  void *data, const void *qparams);
/* Per-channel quant parameters (channel ignored for per-tensor). */
float vnpu_tv_scale(const struct vnpu_tv *tv, uint32_t ch);
int32_t vnpu_tv_zp(const struct vnpu_tv *tv, uint32_t ch);
/* Check every per-channel scale and zero point of a bound operand. */
int vnpu_tv_check_quant(const struct vnpu_tv *tv);

uint32_t vnpu_dtype_size(unsigned int dtype);
float vnpu_fp16_to_f32(uint16_t h);
uint16_t vnpu_f32_to_fp16(float f);
float vnpu_bf16_to_f32(uint16_t h);
uint16_t vnpu_f32_to_bf16(float f);

/* Element @p of @tv as a real value (dequantized with channel @ch). */
float vnpu_ld(const struct vnpu_tv *tv, const uint8_t *p, uint32_t ch);
/* Store real @v as element @p of @tv (quantized with channel @ch). */
void vnpu_st(const struct vnpu_tv *tv, uint8_t *p, float v, uint32_t ch,
	     unsigned int round);

float vnpu_act(unsigned int act, float alpha, float x);
/* Any activation, HARD_SIGMOID's @beta included (ignored by the others). */
float vnpu_act_ab(unsigned int act, float alpha, float beta, float x);
/* HARD_SIGMOID's beta of a command (attr word VNPU_ACT_BETA_WORD), else 0. */
float vnpu_act_beta(const struct vnpu_cmd_compute *c);
/* VNPU_ACT_CLIP: min(max(@x, @lo), @hi), NaN staying NaN. */
float vnpu_clip(float lo, float hi, float x);
/* ELTWISE POW: powf(), with exponents 2 and 0.5 as a * a and sqrtf(a). */
float vnpu_pow(float a, float b);
/*
 * ACTIVATION's affine operand P [2, ...] (t1) as its two halves, the
 * scale P[0] and the shift P[1], each of rank P.rank - 1.
 */
void vnpu_affine_views(const struct vnpu_tv *p, struct vnpu_tv *scale,
		       struct vnpu_tv *shift);
/*
 * The float epilogue's per-channel step of GEMM, CONV2D, CONV_TRANSPOSE
 * (t2 @bias bound, channel @n): a [N] bias gives @scale 1 and returns
 * false; a [2, N] scale/shift operand gives its two values and returns
 * true.
 */
bool vnpu_bias_at(const struct vnpu_tv *bias, uint32_t n, float *scale,
		  float *shift);
/*
 * @acc + bias[n], or @acc * scale[n] + shift[n] (one multiply, then one
 * add), or @acc without t2.
 */
float vnpu_bias_apply(const struct vnpu_tv *bias, uint32_t n, float acc);
/* Real value -> saturated integer in [lo, hi] with the @round rule. */
int32_t vnpu_quantize_f(float v, float scale, int32_t zp, int32_t lo,
			int32_t hi, unsigned int round);

/*
 * rint(@v) + @zp saturated to [@lo, @hi], NaN counting as 0: the last
 * step of every ONNX-rounded requantization.  Inline so the engine's
 * vectorized loops round exactly like the reference; @lo - @zp and
 * @hi - @zp must be exact in binary32 (true for 8-bit outputs).
 */
static inline int32_t vnpu_round_sat(float v, int32_t zp, int32_t lo,
				     int32_t hi)
{
	float r = rintf(v);
	float flo = (float)(lo - zp), fhi = (float)(hi - zp);

	r = r == r ? r : 0.0f;
	r = r < flo ? flo : r > fhi ? fhi : r;
	return (int32_t)r + zp;
}

/* The Q31 multiplier of VNPU_ROUND_TFLITE. */
struct vnpu_qmul {
	int32_t mult;
	int32_t shift;	/* > 0: left, < 0: right */
};
struct vnpu_qmul vnpu_qmul_from_double(double m);
int32_t vnpu_qmul_apply(int32_t x, struct vnpu_qmul q);

/*
 * Epilogue of a quantized GEMM/CONV2D for one output channel: int32
 * accumulator (bias already added, mod 2^32) to the output element.
 */
struct vnpu_epi {
	unsigned int mode;	/* VNPU_EPI_* */
	unsigned int act, round;
	float alpha, beta;
	float in_scale;		/* sa * sb[n], binary32 */
	float out_scale;
	int32_t out_zp, lo, hi;	/* integer clamp incl. ReLU/ReLU6 */
	float fmult;		/* ONNX: (sa * sb[n]) / sy */
	struct vnpu_qmul qmul;	/* TFLITE */
};

#define VNPU_EPI_INT32		0	/* store the accumulator */
#define VNPU_EPI_REQUANT	1	/* integer requantization + clamp */
#define VNPU_EPI_FLOAT		2	/* dequantize, act, store via vnpu_st */

void vnpu_epi_init(struct vnpu_epi *e, const struct vnpu_cmd_compute *cmd,
		   const struct vnpu_tv *a, const struct vnpu_tv *b,
		   const struct vnpu_tv *y, uint32_t n);
void vnpu_epi_store(const struct vnpu_epi *e, const struct vnpu_tv *y,
		    uint8_t *p, int32_t acc, uint32_t ych);

/*
 * COPY: the index of X that Y's index @s (already less the offset) reads
 * along a dimension of extent @n under @border, or -1 for none (KEEP and
 * CONSTANT outside X).
 */
int64_t vnpu_copy_src(int64_t s, uint32_t n, unsigned int border);
/* COPY moves bit patterns (no conversion) from @x to @y. */
bool vnpu_copy_raw(const struct vnpu_tv *x, const struct vnpu_tv *y);
/*
 * COPY's written region of Y, [@lo[d], @hi[d]) per dimension: all of Y
 * unless the border is KEEP, else where X lands (possibly empty).
 */
void vnpu_copy_box(const struct vnpu_cmd_compute *c, uint32_t *lo,
		   uint32_t *hi);

/*
 * RESIZE: the elements of X one output coordinate @o reads along @axis
 * (0: H, 1: W; extents @in of X, @out of Y) and their weights; @n = 0
 * for a TF_CROP_AND_RESIZE coordinate outside X (the extrapolation
 * value), else 1, 2 or 4 taps.
 */
struct vnpu_resize_taps {
	uint32_t n;
	uint32_t idx[4];
	float w[4];
};
void vnpu_resize_taps(const struct vnpu_attr_resize *at, int axis, uint32_t o,
		      uint32_t in, uint32_t out, struct vnpu_resize_taps *t);
/*
 * RESIZE stores a NaN sum as the default NaN: which payload a sum of
 * NaNs keeps depends on operand order, which vectorized code may swap.
 */
static inline float vnpu_resize_nan(float v)
{
	return v == v ? v : __builtin_nanf("");
}

#endif /* VNPU_REF_H */
