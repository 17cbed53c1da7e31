/* SPDX-License-Identifier: MIT */
/*
 * vnpu compute command encoding, hardware interface version 1.
 *
 * Every compute command (opcode VNPU_OP_*, inside VNPU_CMD_COMPUTE_FIRST..
 * LAST of vnpu_hw.h) is one fixed-size struct vnpu_cmd_compute: the common
 * command header, the fused epilogue, a 48-byte op attribute block and four
 * tensor descriptor slots.  One layout for every op keeps encoders, the
 * validator and the device decoder small; unused slots and attribute bytes
 * are must-be-zero so later versions can give them meaning.
 *
 * Documentation/ops.rst gives the semantics, the rounding rules bit by bit
 * and the timing model.  Floating-point fields are carried as IEEE 754
 * binary32 bit patterns in __u32 so that this header stays usable where
 * floating point is not (the kernel).
 */
#ifndef VNPU_HW_OPS_H
#define VNPU_HW_OPS_H

#include <linux/types.h>

#include "vnpu_hw.h"

enum vnpu_op {
	VNPU_OP_GEMM		= 0x40,
	VNPU_OP_CONV2D		= 0x41,
	VNPU_OP_POOL2D		= 0x42,
	VNPU_OP_ELTWISE		= 0x43,
	VNPU_OP_ACTIVATION	= 0x44,
	VNPU_OP_SOFTMAX		= 0x45,
	VNPU_OP_LAYERNORM	= 0x46,
	VNPU_OP_QUANTIZE	= 0x47,
	VNPU_OP_DEQUANTIZE	= 0x48,
	VNPU_OP_REQUANTIZE	= 0x49,
	VNPU_OP_COPY		= 0x4a,
	VNPU_OP_RESIZE		= 0x4b,
	VNPU_OP_CONV_TRANSPOSE	= 0x4c,
	VNPU_OP_REDUCE		= 0x4d,
	VNPU_OP_LUT		= 0x4e,
	VNPU_OP_LAST		= VNPU_OP_LUT,
};

enum vnpu_dtype {
	VNPU_DT_INVALID	= 0,
	VNPU_DT_FP32	= 1,
	VNPU_DT_FP16	= 2,	/* storage only: computed in fp32 */
	VNPU_DT_BF16	= 3,	/* storage only: computed in fp32 */
	VNPU_DT_INT8	= 4,
	VNPU_DT_UINT8	= 5,
	VNPU_DT_INT32	= 6,	/* biases and raw accumulators */
	VNPU_DT_COUNT,
};

/*
 * Timing model additions to vnpu_hw.h's VNPU_MODEL_*: the vector unit
 * behind the MAC array (elementwise ops, pooling) and its special-function
 * lanes (exp, tanh, erf, division: sigmoid/tanh/GELU, softmax, layer norm).
 */
#define VNPU_MODEL_VECTOR_ELEMS_PER_CYCLE	64
#define VNPU_MODEL_SFU_ELEMS_PER_CYCLE		16

#define VNPU_MAX_RANK		6

/*
 * Command limits of hardware interface 1.1, also readable from BAR0
 * (VNPU_REG_LIMIT_*).  They make every accepted command bounded: in host
 * memory (operand spans), in total work (MACs) and in the work between
 * two points where the device can abandon it (one reduction, one kernel
 * window).  hw-spec.rst, "Command limits", defines what each one counts;
 * a command beyond any of them ends CMD_ERROR at the offending field.
 *
 * TENSOR_ELEMS: elements of one operand (product of its dims).
 * TENSOR_BYTES: bytes one operand spans from its va (strides included).
 * CMD_BYTES: sum over operands of span plus per-channel array bytes.
 * CMD_MACS: work units of one command (ops.rst, "Work units").
 * REDUCTION: terms summed into one output element: GEMM K, CONV2D
 *	KH*KW*C/groups, pooling window KH*KW (global: H*W), the softmax
 *	axis, the layer-norm extent.
 * KERNEL_DIM: CONV2D and POOL2D window height and width.
 * CHANNELS: length of a per-channel quantization array (dims[quant_axis]),
 *	and of a scale/shift operand (ACTIVATION's P, a fused [2, N] t2).
 */
#define VNPU_LIMIT_TENSOR_ELEMS	(1u << 26)
#define VNPU_LIMIT_TENSOR_BYTES	(1u << 27)
#define VNPU_LIMIT_CMD_BYTES	(1u << 28)
#define VNPU_LIMIT_CMD_MACS	(1ull << 32)
#define VNPU_LIMIT_REDUCTION	(1u << 16)
#define VNPU_LIMIT_KERNEL_DIM	1024u
#define VNPU_LIMIT_CHANNELS	(1u << 16)

/*
 * Work units one GEMM batch costs beyond its batch x M x N x (K + 1)
 * (ops.rst, "Work units"): packing and a kernel call per batch, so that
 * many tiny batches are counted at what they cost.
 */
#define VNPU_WORK_GEMM_BATCH	64u

#define VNPU_QUANT_NONE		0	/* float tensor, or int32 bias/acc */
#define VNPU_QUANT_TENSOR	1	/* inline @scale, @zero_point */
#define VNPU_QUANT_CHANNEL	2	/* arrays at @quant_va along @quant_axis */

#define VNPU_TENSOR_STRIDED	(1u << 0)	/* @strides valid, else dense */

/**
 * struct vnpu_tensor_desc - one operand, 128 bytes.
 * @va: device VA of element [0, ..., 0]; aligned to the element size
 * @dtype: VNPU_DT_*
 * @rank: 1..VNPU_MAX_RANK
 * @quant: VNPU_QUANT_*; int8/uint8 tensors need TENSOR or CHANNEL
 * @quant_axis: dimension the CHANNEL arrays run along, else zero
 * @flags: VNPU_TENSOR_*
 * @dims: extents, dims[0] outermost; each >= 1, entries >= @rank zero
 * @strides: element strides when STRIDED (zero allowed: broadcast), else 0
 * @scale: binary32 bits of the per-tensor scale (finite, > 0), else 0
 * @zero_point: per-tensor zero point, within the dtype's range, else 0
 * @quant_va: CHANNEL only: dims[quant_axis] binary32 scales followed
 *	immediately by as many __s32 zero points; 4-byte aligned
 * @reserved: must be zero
 *
 * A slot whose 128 bytes are all zero is absent (optional operands only).
 */
struct vnpu_tensor_desc {
	__u64 va;
	__u8 dtype;
	__u8 rank;
	__u8 quant;
	__u8 quant_axis;
	__u32 flags;
	__u32 dims[VNPU_MAX_RANK];
	__u64 strides[VNPU_MAX_RANK];
	__u32 scale;
	__s32 zero_point;
	__u64 quant_va;
	__u64 reserved[3];
};

/* Fused epilogue activation (GEMM, CONV2D, ELTWISE) or ACTIVATION's op. */
enum vnpu_act {
	VNPU_ACT_NONE		= 0,
	VNPU_ACT_RELU		= 1,
	VNPU_ACT_RELU6		= 2,
	VNPU_ACT_LEAKY_RELU	= 3,	/* slope in act_alpha */
	VNPU_ACT_SIGMOID	= 4,
	VNPU_ACT_TANH		= 5,
	VNPU_ACT_GELU		= 6,	/* exact, erf based */
	VNPU_ACT_CLIP		= 7,	/* ACTIVATION only: attr.activation bounds */
	/* max(0, min(1, act_alpha * x + beta)), beta in attr word VNPU_ACT_BETA_WORD */
	VNPU_ACT_HARD_SIGMOID	= 8,
	VNPU_ACT_HARD_SWISH	= 9,	/* x * max(0, min(1, x / 6 + 1 / 2)) */
	/* ACTIVATION only: the unary functions (no parameters). */
	VNPU_ACT_SQRT		= 10,
	VNPU_ACT_RECIPROCAL	= 11,
	VNPU_ACT_EXP		= 12,
	VNPU_ACT_LOG		= 13,
	VNPU_ACT_ABS		= 14,
	VNPU_ACT_NEG		= 15,
	VNPU_ACT_COUNT,
};

/*
 * VNPU_ACT_HARD_SIGMOID's beta: binary32 bits in the last attribute word
 * (attr.raw[11]) of every op that takes an activation, which each op
 * leaves reserved for it; zero with any other activation.
 */
#define VNPU_ACT_BETA_WORD	11

/* How a real value becomes an integer; see ops.rst "Rounding". */
#define VNPU_ROUND_ONNX		0	/* binary32 multiplier, half to even */
#define VNPU_ROUND_TFLITE	1	/* Q31 fixed-point multiplier */
/*
 * ELTWISE ADD and MUL, POOL2D AVG and GLOBAL_AVG, SOFTMAX only:
 * onnxruntime's QLinearAdd / QLinearMul / QLinearAveragePool /
 * QLinearGlobalAveragePool / QLinearSoftmax arithmetic on the raw codes
 * (ops.rst "Rounding"); see struct vnpu_attr_eltwise, struct
 * vnpu_attr_pool2d and struct vnpu_attr_softmax for what the command must
 * then be.
 */
#define VNPU_ROUND_ORT_QLINEAR	2

#define VNPU_GEMM_TRANS_A	(1u << 0)	/* A is [.., K, M] */
#define VNPU_GEMM_TRANS_B	(1u << 1)	/* B is [.., N, K] */

/**
 * GEMM: t0 A, t1 B, t2 bias [N] (optional), t3 Y.  With float inputs t2
 * may instead be a per-channel scale and shift [2, N] (float, N at most
 * VNPU_LIMIT_CHANNELS): y = act(acc * t2[0][n] + t2[1][n]) (a folded
 * BatchNormalization); likewise CONV2D's and CONV_TRANSPOSE's t2.
 */
struct vnpu_attr_gemm {
	__u32 flags;
	__u32 reserved[11];
};

/** CONV2D NHWC: t0 X [N,H,W,C], t1 W [CO,KH,KW,C/groups], t2 bias [CO], t3 Y. */
struct vnpu_attr_conv2d {
	__u32 stride_h, stride_w;
	__u32 dilation_h, dilation_w;
	__u32 pad_top, pad_left, pad_bottom, pad_right;
	__u32 groups;
	__u32 reserved[3];
};

#define VNPU_POOL_MAX		0
#define VNPU_POOL_AVG		1
#define VNPU_POOL_GLOBAL_AVG	2

#define VNPU_POOL_COUNT_INCLUDE_PAD	(1u << 0)

/**
 * POOL2D NHWC: t0 X [N,H,W,C], t3 Y [N,OH,OW,C].
 * @dilation_h, @dilation_w: window tap spacing; 0 means 1, so commands
 *	written before these fields existed (reserved, zero) stay valid.
 *	GLOBAL_AVG takes 0 only.
 *
 * With @round VNPU_ROUND_ORT_QLINEAR, X and Y are of one 8-bit dtype,
 * each quantized per tensor, and @kind is AVG without dilation
 * (onnxruntime's QLinearAveragePool) or GLOBAL_AVG
 * (QLinearGlobalAveragePool).  AVG takes the float mean as without it,
 * then stores nearbyint(mean / sy + zy) clamped: the zero point is added
 * before rounding.  GLOBAL_AVG sums each channel's N = H * W codes in
 * wrapping int32 from -zx * N, multiplies that sum, converted, by
 * sx / (sy * (float)N) in binary32, clamps to [lo - zy, hi - zy], rounds
 * half to even and then adds zy.  Any other kind, dtype or a dilation
 * with this rounding is a command error at that field.
 */
struct vnpu_attr_pool2d {
	__u32 kind;
	__u32 flags;
	__u32 kernel_h, kernel_w;
	__u32 stride_h, stride_w;
	__u32 pad_top, pad_left, pad_bottom, pad_right;
	union {
		__u32 reserved[2];	/* the name before dilations existed */
		struct {
			__u32 dilation_h, dilation_w;
		};
	};
};

#define VNPU_ELTWISE_ADD	0
#define VNPU_ELTWISE_SUB	1
#define VNPU_ELTWISE_MUL	2
#define VNPU_ELTWISE_DIV	3	/* IEEE division: x / 0 is +-inf or NaN */
#define VNPU_ELTWISE_MAX	4	/* NaN if either operand is NaN */
#define VNPU_ELTWISE_MIN	5	/* NaN if either operand is NaN */
#define VNPU_ELTWISE_POW	6	/* C powf(); exponent 2 and 0.5 exact */

/**
 * ELTWISE with numpy broadcasting: t0 A, t1 B, t3 Y.
 *
 * With @round VNPU_ROUND_ORT_QLINEAR the command is onnxruntime's
 * QLinearAdd (@kind ADD) or QLinearMul (@kind MUL): A, B and Y of one
 * 8-bit dtype, each quantized per tensor, @act VNPU_ACT_NONE.  ADD
 * computes fma(a, sa / sy, fma(b, sb / sy, fixed)) in binary32 on the
 * codes, fixed = zy - (sa / sy * za + sb / sy * zb), so A and B are not
 * interchangeable: A is the operand onnxruntime's kernel runs along its
 * span.  MUL computes (float)((a - za) * (b - zb)) * (sa * sb / sy) + zy.
 * Both convert half to even (NaN and values beyond int32 to the lowest
 * code) and saturate.  Any other op, kind, dtype, per-channel operand or
 * activation with this rounding is a command error at that field.
 */
struct vnpu_attr_eltwise {
	__u32 kind;
	__u32 reserved[11];
};

/**
 * ACTIVATION: t0 X, t1 P (optional), t3 Y; the function is the command's
 * @act.  P, float, dims [2, ...]: P[0] (scale) and P[1] (shift), each
 * broadcasting to X numpy-style with at most VNPU_LIMIT_CHANNELS
 * elements; then y = act(x * scale + shift) (BatchNormalization as one
 * command; a per-channel [2, C] P for NHWC, [2, C, 1, 1] for NCHW).
 * @clip_min, @clip_max: VNPU_ACT_CLIP only (else zero): binary32 bits of
 *	the bounds, not NaN, @clip_min <= @clip_max, infinities allowed;
 *	y = min(max(x, @clip_min), @clip_max), NaN stays NaN.
 */
struct vnpu_attr_activation {
	__u32 clip_min;
	__u32 clip_max;
	__u32 reserved[10];
};

/**
 * SOFTMAX along @axis: t0 X, t3 Y.
 *
 * With @round VNPU_ROUND_ORT_QLINEAR, X and Y are of one 8-bit dtype,
 * each quantized per tensor: onnxruntime's QLinearSoftmax on the codes.
 * For a run of n codes, a table of exp((i - 255 + shift) * sx) in double
 * rounded to binary32, shift = max(0, log(FLT_MAX / n) - 5) / sx; code q
 * reads entry 255 - (max - q); the entries are summed in order and
 * y = nearbyint(e * floor(1 / sy) / sum) + zy, capped at 255 and stored
 * modulo 256 (int8 probabilities near 1 wrap negative, as onnxruntime's
 * do).  Any other dtype with this rounding is a command error at it.
 */
struct vnpu_attr_softmax {
	__u32 axis;
	__u32 reserved[11];
};

/**
 * LAYERNORM over dims @axis..rank-1: t0 X, t1 gamma, t2 beta (both
 * optional, shaped like those trailing dims), t3 Y.
 */
struct vnpu_attr_layernorm {
	__u32 axis;
	__u32 epsilon;	/* binary32 bits, finite, >= 0 */
	__u32 reserved[10];
};

/* How COPY produces the elements of Y that lie outside the copied window. */
#define VNPU_COPY_BORDER_KEEP		0	/* left as they are */
#define VNPU_COPY_BORDER_CONSTANT	1	/* @fill */
#define VNPU_COPY_BORDER_EDGE		2	/* nearest element of X */
#define VNPU_COPY_BORDER_REFLECT	3	/* mirrored, edge not repeated */
#define VNPU_COPY_BORDER_WRAP		4	/* X repeated periodically */

/**
 * COPY: t0 X, t3 Y of the same rank; strided copy with optional border
 * fill and dtype conversion (Transpose, Slice, Concat, Split, Pad,
 * Expand, Tile, DepthToSpace, SpaceToDepth, Cast through X's strides).
 * Element y of Y takes X[s] with s[d] = y[d] - @offset[d] (read from the
 * far end when bit d of @reverse is set) when s lies inside X; elsewhere
 * @border decides.  Values are converted as real numbers (ops.rst), except
 * that equal dtypes and quantization copy bit patterns.
 * @border: VNPU_COPY_BORDER_*
 * @fill: CONSTANT only (else zero): binary32 bits of the border value
 * @offset: where X[0,...,0] lands in Y, per dimension; zero beyond rank
 * @reverse: dimensions of X read backwards (negative-step slices)
 */
struct vnpu_attr_copy {
	__u32 border;
	__u32 fill;
	__s32 offset[VNPU_MAX_RANK];
	__u32 reverse;
	__u32 reserved[3];
};

#define VNPU_RESIZE_NEAREST	0
#define VNPU_RESIZE_LINEAR	1
#define VNPU_RESIZE_CUBIC	2

/* Coordinate transformations (ONNX Resize's, same names). */
#define VNPU_RESIZE_HALF_PIXEL		0
#define VNPU_RESIZE_ASYMMETRIC		1
#define VNPU_RESIZE_ALIGN_CORNERS	2
#define VNPU_RESIZE_PYTORCH_HALF_PIXEL	3
#define VNPU_RESIZE_TF_HALF_PIXEL_FOR_NN	4
#define VNPU_RESIZE_TF_CROP_AND_RESIZE	5

/* How NEAREST rounds a source coordinate to an index. */
#define VNPU_RESIZE_ROUND_PREFER_FLOOR	0
#define VNPU_RESIZE_ROUND_PREFER_CEIL	1
#define VNPU_RESIZE_FLOOR		2
#define VNPU_RESIZE_CEIL		3

#define VNPU_RESIZE_EXCLUDE_OUTSIDE	(1u << 0)	/* CUBIC only */

/**
 * RESIZE NHWC over H and W: t0 X [N,H,W,C], t3 Y [N,OH,OW,C].  ops.rst
 * gives the arithmetic; it is ONNX Resize's.  Binary32 fields:
 * @mode: VNPU_RESIZE_NEAREST, _LINEAR or _CUBIC
 * @coord: VNPU_RESIZE_HALF_PIXEL ... _TF_CROP_AND_RESIZE
 * @nearest: NEAREST's rounding (VNPU_RESIZE_ROUND_PREFER_FLOOR ...), else 0
 * @flags: VNPU_RESIZE_EXCLUDE_OUTSIDE (CUBIC only)
 * @scale_h, @scale_w: the scales the coordinates divide by, finite and
 *	> 0; 0 means OH/H (resp. OW/W)
 * @cubic_a: CUBIC's coefficient (finite), else 0
 * @extrapolation: TF_CROP_AND_RESIZE only (else 0): the value of an
 *	output whose source lies outside X
 * @roi: TF_CROP_AND_RESIZE only (else 0): h_start, w_start, h_end,
 *	w_end, finite, as fractions of the input extent
 */
struct vnpu_attr_resize {
	__u32 mode;
	__u32 coord;
	__u32 nearest;
	__u32 flags;
	__u32 scale_h, scale_w;
	__u32 cubic_a;
	__u32 extrapolation;
	__u32 roi[4];
};

/**
 * CONV_TRANSPOSE NHWC (the gradient of CONV2D): t0 X [N,H,W,C],
 * t1 W [CO,KH,KW,C/groups] (as CONV2D's, read transposed), t2 bias [CO]
 * (optional), t3 Y [N,OH,OW,CO] with
 * OH = (H - 1) * stride_h + (KH - 1) * dilation_h + 1 - pad_top -
 *	pad_bottom + out_pad_h (likewise OW).
 * Input pixel (iy, ix) adds W * x into output pixel
 * (iy * stride_h - pad_top + ky * dilation_h, ...) where that lies inside
 * Y; @out_pad_h/@out_pad_w only extend Y (each < stride or dilation).
 * Dtypes, quantization and the fused epilogue are CONV2D's.
 */
struct vnpu_attr_conv_transpose {
	__u32 stride_h, stride_w;
	__u32 dilation_h, dilation_w;
	__u32 pad_top, pad_left, pad_bottom, pad_right;
	__u32 groups;
	__u32 out_pad_h, out_pad_w;
	__u32 reserved;
};

#define VNPU_REDUCE_SUM		0
#define VNPU_REDUCE_MEAN	1
#define VNPU_REDUCE_MAX		2	/* NaN wins */
#define VNPU_REDUCE_MIN		3	/* NaN wins */
#define VNPU_REDUCE_L2		4	/* sqrt(sum x^2) */
#define VNPU_REDUCE_SUM_SQUARE	5	/* sum x^2 */

/**
 * REDUCE: t0 X, t3 Y.  Y has X's rank (keepdims; dropping dims is a
 * reshape) with dims[i] == 1 for every bit i of @axes and X's extent
 * otherwise.  Float sums accumulate in binary64.
 * @kind: VNPU_REDUCE_*
 * @axes: bit i reduces dimension i; non-zero, below 1 << rank
 */
struct vnpu_attr_reduce {
	__u32 kind;
	__u32 axes;
	__u32 reserved[10];
};

/* Entries of a LUT table: one per code of an 8-bit X. */
#define VNPU_LUT_ENTRIES	256

/**
 * LUT: t0 X, t1 T, t3 Y; a per-element table lookup on 8-bit codes.
 * X and Y are INT8 or UINT8 of the same rank and dims (either strided,
 * Y not overlapping itself), each quantized per tensor.  T is
 * VNPU_LUT_ENTRIES elements of Y's dtype (rank 1, strides allowed)
 * holding Y's codes, quantized per tensor like Y (same scale and zero
 * point).  y = T[i] with i = x for UINT8 X and i = x + 128 for INT8 X
 * (X's byte with its top bit flipped), so T's entries run in increasing
 * order of X's codes either way.  The scales and zero points take no
 * part in the arithmetic: the table is the whole function, made by
 * whoever built the command (libnpu's compiler folds a chain of 8-bit
 * pointwise ops into one).  Per-channel quantization, an activation,
 * a rounding other than VNPU_ROUND_ONNX or a non-zero attribute byte is
 * a command error at that field.
 */
struct vnpu_attr_lut {
	__u32 reserved[12];
};

/**
 * struct vnpu_cmd_compute - every compute command, 576 bytes.
 * @hdr: opcode VNPU_OP_*, flags 0, size sizeof(struct vnpu_cmd_compute)
 * @act: VNPU_ACT_* applied after the bias, before the output conversion;
 *	VNPU_ACT_CLIP is ACTIVATION's only (its bounds live in the attrs)
 * @round: VNPU_ROUND_*; VNPU_ROUND_ORT_QLINEAR with ELTWISE ADD/MUL,
 *	POOL2D AVG/GLOBAL_AVG and SOFTMAX only
 * @reserved0: must be zero
 * @act_alpha: binary32 bits of the leaky ReLU slope or of HARD_SIGMOID's
 *	alpha, else zero
 * @attr: op attributes; bytes the op does not define must be zero
 * @t: operand slots; output is always t[3]
 */
struct vnpu_cmd_compute {
	struct vnpu_cmd_hdr hdr;
	__u8 act;
	__u8 round;
	__u16 reserved0;
	__u32 act_alpha;
	union {
		struct vnpu_attr_gemm gemm;
		struct vnpu_attr_conv2d conv;
		struct vnpu_attr_pool2d pool;
		struct vnpu_attr_eltwise eltwise;
		struct vnpu_attr_activation activation;
		struct vnpu_attr_softmax softmax;
		struct vnpu_attr_layernorm layernorm;
		struct vnpu_attr_copy copy;
		struct vnpu_attr_resize resize;
		struct vnpu_attr_conv_transpose convt;
		struct vnpu_attr_reduce reduce;
		struct vnpu_attr_lut lut;
		__u32 raw[12];
	} attr;
	struct vnpu_tensor_desc t[4];
};

/*
 * Byte offsets within a compute command, as a CMD_ERROR reports them
 * (hw-spec.rst, "Command limits"): of a field, and of a field of operand
 * slot @slot.  offsetof() comes from <stddef.h> or <linux/stddef.h>.
 */
#define VNPU_CMD_OFF(field) \
	((__u32)offsetof(struct vnpu_cmd_compute, field))
#define VNPU_CMD_TENSOR_OFF(slot, field)				\
	(VNPU_CMD_OFF(t) +						\
	 (__u32)(slot) * (__u32)sizeof(struct vnpu_tensor_desc) +	\
	 (__u32)offsetof(struct vnpu_tensor_desc, field))

_Static_assert(sizeof(struct vnpu_tensor_desc) == 128, "tensor descriptor ABI");
_Static_assert(sizeof(struct vnpu_cmd_compute) == 576, "compute command ABI");

#define VNPU_OP_SLOT_IN0	0
#define VNPU_OP_SLOT_IN1	1
#define VNPU_OP_SLOT_IN2	2
#define VNPU_OP_SLOT_OUT	3
#define VNPU_OP_SLOTS		4

#endif /* VNPU_HW_OPS_H */
