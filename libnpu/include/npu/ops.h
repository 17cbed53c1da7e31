/* SPDX-License-Identifier: MIT */
/*
 * libnpu op API: tensors, compute ops, device encoding and CPU fallback.
 *
 * Model
 *
 *   An npu_tensor describes one operand: dtype, shape, optional element
 *   strides, optional quantization (per tensor, or per channel along one
 *   axis) and where its elements live (an npu_buffer + offset, or plain
 *   host memory).  An npu_op is created from a parameter block and its
 *   tensors; creation validates everything once and takes a snapshot of
 *   the tensors, so later changes to a tensor do not affect ops already
 *   made from it.  An op then either
 *
 *     - is encoded into a command buffer (npu_op_encode()): one compute
 *       command, or several when the op exceeds one of the device's
 *       command limits (npu_device_get_limits()) and can be split: GEMM
 *       along M, N and its outermost batch axis, CONV2D along batch and
 *       output rows (never K or the window: no command adds to a partial
 *       result), COPY along its output's three outermost dims, RESIZE
 *       along batch and channels, or
 *     - runs on the CPU (npu_op_run_cpu()) with the device model's own
 *       compute engine, which gives the same results as the device
 *       (bit-exact on integer paths), or, for what the engine does not
 *       take, the reference implementation the engine is checked against.
 *
 *   npu_op_supported() says which of the two applies and, when the device
 *   cannot take the op, why.  npu_op_run() does the whole round trip.
 *
 * Thread safety
 *
 *   npu_tensor   Not thread-safe: one thread at a time configures a
 *                tensor.  Ops created from it do not refer back to it,
 *                so a tensor may be changed or freed once ops are made.
 *   npu_op       Immutable after npu_op_create(): npu_op_supported(),
 *                npu_op_encode() (into different command buffers),
 *                npu_op_buffers() and npu_op_run() are safe from any
 *                number of threads.  npu_op_run_cpu() and npu_op_run()
 *                write the output tensor's memory, so concurrent runs of
 *                ops sharing an output race like any other writes.
 *                npu_op_free() must not race other uses of the op.
 *
 *   A tensor bound to a buffer and an op using one hold a reference on
 *   it (npu.h), so the caller may free the buffer, the tensor and the op
 *   in any order.  The CPU path reads and writes buffers through their
 *   CPU mapping: the caller makes sure no device job is using them at the
 *   time (e.g. npu_buffer_wait_idle()).
 *
 * Errors are negative errnos as everywhere in libnpu; nothing is printed.
 */
#ifndef NPU_OPS_H
#define NPU_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct npu_context;
struct npu_buffer;
struct npu_cmdbuf;
struct npu_queue;

#define NPU_TENSOR_MAX_RANK	6

/* Element types; 1 to 6 are the hardware's VNPU_DT_* values. */
enum npu_dtype {
	NPU_DTYPE_FP32 = 1,
	NPU_DTYPE_FP16 = 2,	/* storage only, computed in fp32 */
	NPU_DTYPE_BF16 = 3,	/* storage only, computed in fp32 */
	NPU_DTYPE_INT8 = 4,	/* quantized: needs scale and zero point */
	NPU_DTYPE_UINT8 = 5,	/* quantized: needs scale and zero point */
	NPU_DTYPE_INT32 = 6,	/* GEMM/CONV2D biases and raw accumulators */
	/*
	 * Host-only types (since 1.5): graph values and CPU kernels
	 * (kernel.h) take them, no device op or libnpu op does.  BOOL is one
	 * byte, 0 or 1.
	 */
	NPU_DTYPE_INT64 = 7,
	NPU_DTYPE_BOOL = 8,
	NPU_DTYPE_FP64 = 9,
	NPU_DTYPE_INT16 = 10,
	NPU_DTYPE_UINT16 = 11,
	NPU_DTYPE_UINT32 = 12,
	NPU_DTYPE_UINT64 = 13,
};

/*
 * Bytes of one element, 0 for an unknown dtype; the host-only dtypes
 * have theirs too (since 1.5), though npu_tensor_create() refuses them.
 */
size_t npu_dtype_size(enum npu_dtype dtype);

struct npu_tensor;

/*
 * A dense tensor of @rank (1..NPU_TENSOR_MAX_RANK) dimensions @dims
 * (outermost first, each >= 1), not yet bound to memory.  -EOVERFLOW when
 * its span (npu_tensor_span()) does not fit in 64 bits; -EINVAL for a
 * host-only dtype, which no op takes (kernel.h's kernels do).
 */
int npu_tensor_create(enum npu_dtype dtype, uint32_t rank,
		      const uint32_t *dims, struct npu_tensor **out);
void npu_tensor_free(struct npu_tensor *t);

/*
 * Element strides, one per dimension (0 broadcasts that dimension);
 * NULL makes the tensor dense again.  -EOVERFLOW when the addressed span
 * does not fit in 64 bits.
 */
int npu_tensor_set_strides(struct npu_tensor *t, const uint64_t *strides);

/*
 * Per-tensor quantization: real = (q - @zero_point) * @scale.  Only for
 * INT8/UINT8; @scale finite and > 0, @zero_point within the dtype.
 */
int npu_tensor_set_quant(struct npu_tensor *t, float scale,
			 int32_t zero_point);

/*
 * Per-channel quantization along @axis: dims[axis] scales and zero points
 * (copied).  @zero_points may be NULL for all zeros.
 */
int npu_tensor_set_quant_channel(struct npu_tensor *t, uint32_t axis,
				 const float *scales,
				 const int32_t *zero_points);

/*
 * Place element [0,...,0] at @offset into @buf, taking a reference on
 * @buf (dropped by rebinding or npu_tensor_free()).  -ERANGE if the span
 * does not fit in the buffer, -EINVAL if @offset is not element aligned.
 */
int npu_tensor_bind_buffer(struct npu_tensor *t, struct npu_buffer *buf,
			   uint64_t offset);
/*
 * Place element [0,...,0] at @data in host memory (CPU only): @len bytes
 * the caller owns.  -ERANGE when @len is below the tensor's span, -EINVAL
 * if @data is not element aligned.  @len is new in 1.3.
 */
int npu_tensor_bind_host(struct npu_tensor *t, void *data, size_t len);

/*
 * *@span = bytes from element [0,...,0] to one past the last addressed
 * element.  -EOVERFLOW when that does not fit in 64 bits (creation and
 * npu_tensor_set_strides() already refuse such shapes).  Before 1.3 it
 * returned the span, wrapped modulo 2^64 on overflow.
 */
int npu_tensor_span(const struct npu_tensor *t, uint64_t *span);

/* ---- Ops ------------------------------------------------------------------ */

enum npu_op_kind {
	/*
	 * in: A, B, bias (opt); numpy batch broadcast.  With float A and B
	 * the bias may be a per-channel scale and shift [2, N] instead:
	 * y = act(acc * bias[0][n] + bias[1][n]) (also CONV2D's and
	 * CONV_TRANSPOSE's, [2, CO]: a folded BatchNormalization).
	 */
	NPU_OP_GEMM = 0,
	NPU_OP_CONV2D,		/* in: X NHWC, W [CO,KH,KW,C/groups], bias (opt) */
	NPU_OP_POOL2D,		/* in: X NHWC */
	/*
	 * in: A, B with numpy broadcasting.  Unquantized INT8/UINT8/INT32
	 * A, B and output of one dtype make it ONNX's wrapping integer
	 * arithmetic (modulo 2^bits), which runs on the CPU only.
	 */
	NPU_OP_ELTWISE,
	/*
	 * in: X, optional P; the op is params.act.  P (float, [2, ...]):
	 * y = act(x * P[0] + P[1]), P[0] and P[1] broadcasting to X, at most
	 * 2^16 elements each (BatchNormalization: [2, C] for NHWC,
	 * [2, C, 1, 1] for NCHW).
	 */
	NPU_OP_ACTIVATION,
	NPU_OP_SOFTMAX,		/* in: X */
	NPU_OP_LAYERNORM,	/* in: X, gamma (opt), beta (opt) */
	NPU_OP_QUANTIZE,	/* in: float X; out int8/uint8 */
	NPU_OP_DEQUANTIZE,	/* in: int8/uint8 X; out float */
	NPU_OP_REQUANTIZE,	/* in: int8/uint8 X; out int8/uint8 */
	/*
	 * in: X [N,D,H,W,C]; optional inputs[2]: an INT32 tensor shaped like
	 * the output that receives the maxima's element offsets within X
	 * (MAX only; -1 for a window without elements).  CPU only: no device
	 * pools in 3-D or reports indices (use D = 1 for 2-D with indices).
	 */
	NPU_OP_POOL3D,
	/*
	 * in: X of the output's rank.  Strided copy with dtype conversion:
	 * output element y takes X[y - params.copy.offset] where that lies
	 * inside X; elsewhere params.copy.border decides.  With X a strided
	 * view (npu_tensor_set_strides()) and the output a view of a larger
	 * buffer this is Transpose, Slice, Concat, Split, Pad, Expand, Tile,
	 * DepthToSpace, SpaceToDepth and Cast.  INT32 only to INT32;
	 * no per-channel quantization.
	 */
	NPU_OP_COPY,
	/*
	 * in: X [N,H,W,C]; output [N,OH,OW,C]: ONNX Resize over H and W
	 * (params.resize), any dtype but INT32, no per-channel quantization.
	 */
	NPU_OP_RESIZE,
	/*
	 * in: X NHWC, W [C,KH,KW,CO/groups] (input channel first, as ONNX's
	 * [C,CO/groups,KH,KW] seen through strides), bias (opt) [CO]
	 */
	NPU_OP_CONV_TRANSPOSE,
	NPU_OP_REDUCE,		/* in: X; output keeps X's rank (keepdims) */
	/*
	 * in: X, T (since 1.9).  A table lookup on 8-bit codes: X and the
	 * output INT8 or UINT8 of one shape, each quantized per tensor; T
	 * [256] of the output's dtype and quantization holds output codes,
	 * indexed by X's code (UINT8) or X's code + 128 (INT8).  No
	 * parameters: act NONE, round ONNX.  Any function of one 8-bit
	 * value (a chain of pointwise ops) as one command.
	 */
	NPU_OP_LUT,
	NPU_OP_KIND_COUNT,
};

/* Fused activation (GEMM, CONV2D, ELTWISE) or ACTIVATION's function. */
enum npu_activation {
	NPU_ACT_NONE = 0,
	NPU_ACT_RELU,
	NPU_ACT_RELU6,
	NPU_ACT_LEAKY_RELU,	/* slope in act_alpha */
	NPU_ACT_SIGMOID,
	NPU_ACT_TANH,
	NPU_ACT_GELU,
	NPU_ACT_CLIP,		/* ACTIVATION only: bounds in params.clip */
	/* max(0, min(1, act_alpha * x + act_beta)) */
	NPU_ACT_HARD_SIGMOID,
	NPU_ACT_HARD_SWISH,	/* x * max(0, min(1, x / 6 + 1 / 2)) */
	/* ACTIVATION only, no parameters: */
	NPU_ACT_SQRT,
	NPU_ACT_RECIPROCAL,
	NPU_ACT_EXP,
	NPU_ACT_LOG,
	NPU_ACT_ABS,
	NPU_ACT_NEG,
};

/* How real values become integers (Documentation/ops.rst "Rounding"). */
enum npu_rounding {
	NPU_ROUND_ONNX = 0,	/* binary32 multiplier, ties to even */
	NPU_ROUND_TFLITE = 1,	/* Q31 fixed-point multiplier */
	/*
	 * onnxruntime's QLinear arithmetic on the codes, bit for bit, per
	 * tensor, 8-bit: NPU_OP_ELTWISE ADD/MUL of A, B and output of one
	 * dtype, no activation (QLinearAdd/QLinearMul; for ADD, A is the
	 * operand onnxruntime's kernel runs along); NPU_OP_POOL2D AVG and
	 * GLOBAL_AVG without dilation (QLinearAveragePool/
	 * QLinearGlobalAveragePool); NPU_OP_SOFTMAX (QLinearSoftmax).
	 * ops.rst "Rounding".
	 */
	NPU_ROUND_ORT_QLINEAR = 2,
};

#define NPU_GEMM_TRANS_A	(1u << 0)
#define NPU_GEMM_TRANS_B	(1u << 1)

enum npu_pool_kind {
	NPU_POOL_MAX = 0,
	NPU_POOL_AVG = 1,
	NPU_POOL_GLOBAL_AVG = 2,
};

enum npu_eltwise_kind {
	NPU_ELTWISE_ADD = 0,
	NPU_ELTWISE_SUB = 1,
	NPU_ELTWISE_MUL = 2,
	NPU_ELTWISE_DIV = 3,
	NPU_ELTWISE_MAX = 4,	/* NaN if either is NaN */
	NPU_ELTWISE_MIN = 5,	/* NaN if either is NaN */
	NPU_ELTWISE_POW = 6,
};

enum npu_reduce_kind {
	NPU_REDUCE_SUM = 0,
	NPU_REDUCE_MEAN = 1,
	NPU_REDUCE_MAX = 2,
	NPU_REDUCE_MIN = 3,
	NPU_REDUCE_L2 = 4,
	NPU_REDUCE_SUM_SQUARE = 5,
};

/* What NPU_OP_COPY writes where the output lies outside X. */
enum npu_copy_border {
	NPU_COPY_BORDER_KEEP = 0,	/* nothing: those elements keep their values */
	NPU_COPY_BORDER_CONSTANT,	/* params.copy.fill */
	NPU_COPY_BORDER_EDGE,		/* the nearest element of X */
	NPU_COPY_BORDER_REFLECT,	/* X mirrored about its edges */
	NPU_COPY_BORDER_WRAP,		/* X repeated (Tile) */
};

enum npu_resize_mode {
	NPU_RESIZE_NEAREST = 0,
	NPU_RESIZE_LINEAR,
	NPU_RESIZE_CUBIC,
};

/* ONNX Resize's coordinate_transformation_mode. */
enum npu_resize_coord {
	NPU_RESIZE_HALF_PIXEL = 0,
	NPU_RESIZE_ASYMMETRIC,
	NPU_RESIZE_ALIGN_CORNERS,
	NPU_RESIZE_PYTORCH_HALF_PIXEL,
	NPU_RESIZE_TF_HALF_PIXEL_FOR_NN,
	NPU_RESIZE_TF_CROP_AND_RESIZE,
};

/* ONNX Resize's nearest_mode (NEAREST only). */
enum npu_resize_nearest {
	NPU_RESIZE_ROUND_PREFER_FLOOR = 0,
	NPU_RESIZE_ROUND_PREFER_CEIL,
	NPU_RESIZE_FLOOR,
	NPU_RESIZE_CEIL,
};

/*
 * Op parameters.  Extensible (npu.h "ABI rules"): initialise with
 * NPU_OP_PARAMS_INIT (or zero it and set @size), then set what the op
 * needs; fields an op does not use must stay zero.  Padding order is top,
 * left, bottom, right.
 */
struct npu_op_params {
	uint32_t size;		/* sizeof(struct npu_op_params) */
	enum npu_op_kind kind;
	enum npu_activation act;
	float act_alpha;
	enum npu_rounding round;
	/*
	 * Largest span in bytes one operand of one device command may have;
	 * 0 is the device's TENSOR_BYTES limit (npu_device_limits), and a
	 * larger value still obeys it.  GEMM/CONV2D/COPY/RESIZE ops beyond
	 * this or any other command limit are split into several commands,
	 * other ops go to the CPU.
	 */
	uint64_t max_tile_bytes;
	union {
		struct {
			uint32_t flags;		/* NPU_GEMM_* */
		} gemm;
		struct {
			uint32_t stride[2];	/* h, w; >= 1 */
			uint32_t dilation[2];	/* h, w; >= 1 */
			uint32_t pad[4];
			uint32_t groups;	/* >= 1 */
		} conv;
		struct {
			enum npu_pool_kind kind;
			bool count_include_pad;
			uint32_t kernel[2];
			uint32_t stride[2];
			uint32_t pad[4];	/* each < dilated kernel */
			uint32_t dilation[2];	/* h, w; 0 means 1 */
		} pool;
		struct {
			enum npu_pool_kind kind;	/* MAX or AVG */
			bool count_include_pad;
			uint32_t kernel[3];	/* d, h, w; each 1..65535 */
			uint32_t stride[3];	/* 1..65535 */
			uint32_t dilation[3];	/* 0 means 1; up to 65535 */
			uint32_t pad[6];	/* d, h, w begin, then end */
		} pool3d;
		struct {
			enum npu_eltwise_kind kind;
		} eltwise;
		struct {
			uint32_t stride[2];	/* h, w; >= 1 */
			uint32_t dilation[2];	/* h, w; >= 1 */
			uint32_t pad[4];
			uint32_t groups;	/* >= 1 */
			/* h, w: each below its stride or dilation */
			uint32_t output_pad[2];
		} conv_transpose;
		struct {
			enum npu_reduce_kind kind;
			uint32_t axes;		/* bit i reduces dim i */
		} reduce;
		struct {
			uint32_t axis;
		} softmax;
		struct {
			uint32_t axis;		/* normalise dims axis..rank-1 */
			float epsilon;
		} layernorm;
		struct {
			enum npu_copy_border border;
			float fill;		/* CONSTANT only */
			/* where X[0,...,0] lands in the output */
			int32_t offset[NPU_TENSOR_MAX_RANK];
			uint32_t reverse;	/* bit d: read X's dim d backwards */
		} copy;
		struct {
			enum npu_resize_mode mode;
			enum npu_resize_coord coord;
			enum npu_resize_nearest nearest;
			bool exclude_outside;	/* CUBIC only */
			float scale[2];		/* h, w; 0: output / input extent */
			float cubic_a;		/* CUBIC only */
			/* TF_CROP_AND_RESIZE only: */
			float extrapolation;
			float roi[4];		/* h, w start, then h, w end */
		} resize;
	};
	/*
	 * NPU_ACT_CLIP's bounds (else both zero): y = min(max(x, min), max);
	 * not NaN, min <= max, infinities allowed.
	 */
	struct {
		float min, max;
	} clip;
	/* NPU_ACT_HARD_SIGMOID's beta (finite), else zero. */
	float act_beta;
};

#define NPU_OP_PARAMS_INIT	{ .size = sizeof(struct npu_op_params) }

struct npu_op;

/*
 * Create an op from @params, @num_inputs input tensors (NULL entries for
 * absent optional inputs) and @output.  Every tensor must be bound; the op
 * takes a reference on each buffer it uses.  -EINVAL for a @params->size
 * of 0, -E2BIG for a larger size with non-zero fields this library does
 * not know.  All
 * buffer-bound tensors must belong to one context (-EXDEV); per-channel
 * quantization parameters are uploaded into a buffer of that context.
 * -EINVAL for anything the op set does not define (shapes, dtypes,
 * attributes; the same rules the device applies), -ENOMEM.
 */
int npu_op_create(const struct npu_op_params *params,
		  const struct npu_tensor *const *inputs, size_t num_inputs,
		  const struct npu_tensor *output, struct npu_op **out);
void npu_op_free(struct npu_op *op);

/*
 * 1 when the device can run the op, 0 when it must run on the CPU; then
 * *@reason (if not NULL) receives a static English explanation, which
 * names the command limit (REDUCTION, TENSOR_BYTES, ...) when one is why.
 */
int npu_op_supported(const struct npu_op *op, const char **reason);

/* Device commands the op encodes to (1 unless tiled), 0 if unsupported. */
size_t npu_op_num_commands(const struct npu_op *op);

/*
 * Append the op's command(s) to @cb: all of them, or none with -ENOSPC.
 * -ENOTSUP when npu_op_supported() says no.
 */
int npu_op_encode(const struct npu_op *op, struct npu_cmdbuf *cb);

/*
 * The buffers a job running the op must list in npu_submit(), including
 * the op's own parameter buffer; they live as long as the op.  Writes at
 * most @max and returns the total count.
 */
size_t npu_op_buffers(const struct npu_op *op, struct npu_buffer **bufs,
		      size_t max);

/*
 * Run the op on the CPU: the device's compute engine, else the reference,
 * within the default npu_cpu_limits (below; since 1.4, before which the
 * CPU path had no bound).
 */
int npu_op_run_cpu(const struct npu_op *op);

/* ---- CPU path limits (since 1.4, NPU_1.4) -------------------------------- */

/*
 * The CPU path counts an op's work as the device does (vnpu's command
 * checker: Documentation/ops.rst "Work units") and refuses an op beyond
 * its limits before running any of it, so a hostile model or command
 * cannot keep a host busy for minutes.  The defaults: 2^32 work units,
 * the device's own command limit (the engine does that in well under a
 * second, the reference in a few seconds), and 2^32 bytes of operands.
 */
#define NPU_CPU_DEFAULT_MAX_WORK	(1ull << 32)
#define NPU_CPU_DEFAULT_MAX_BYTES	(1ull << 32)

/*
 * Extensible (npu.h "ABI rules"): NPU_CPU_LIMITS_INIT, then set what
 * differs from the defaults; a zero field is its default.
 *
 * @max_work: work units one op may take; UINT64_MAX: no limit
 * @max_bytes: bytes one op's operands (and per-channel arrays) may span
 * @deadline_ns: absolute CLOCK_MONOTONIC time (npu_deadline_ns()) at which
 *	a running op is stopped; 0: none
 * @cancel: polled with @cancel_opaque while an op runs (every 2^16 work
 *	units or one kernel block, a few milliseconds at most); once it
 *	returns true the op stops.  NULL: never.  Called on the running
 *	thread; it must be cheap and thread-safe (an atomic load).
 *
 * A stopped op has written part of its output.
 */
struct npu_cpu_limits {
	uint32_t size;		/* sizeof(struct npu_cpu_limits) */
	uint32_t flags;		/* none defined yet: 0 */
	uint64_t max_work;
	uint64_t max_bytes;
	int64_t deadline_ns;
	bool (*cancel)(void *opaque);
	void *cancel_opaque;
};

#define NPU_CPU_LIMITS_INIT	{ .size = sizeof(struct npu_cpu_limits) }

/*
 * npu_op_run_cpu() within @limits (NULL: the defaults).  -E2BIG, before
 * anything runs, for an op beyond @max_work or @max_bytes; -ETIME when
 * @deadline_ns passed and the op was stopped; -ECANCELED when @cancel
 * stopped it.  @err (if not NULL) receives an English message for any
 * failure, naming the op, the limit and the counted value against it,
 * e.g. "POOL2D: 274869518400 work units exceed the CPU path's limit of
 * 4294967296 (npu_cpu_limits.max_work)"; "" on success.
 */
int npu_op_run_cpu_limits(const struct npu_op *op,
			  const struct npu_cpu_limits *limits, char *err,
			  size_t err_size);

enum npu_op_where {
	NPU_OP_RAN_DEVICE = 1,
	NPU_OP_RAN_CPU = 2,
};

/*
 * Run the op to completion: as one job on @q when the device supports it
 * (@q may be NULL to force the CPU), else on the CPU.  A job that did not
 * succeed returns its outcome, NPU_ERR_JOB_* (npu.h); a negative errno
 * means the call failed (-ETIMEDOUT: @deadline_ns passed while the job
 * ran).  On the CPU the default npu_cpu_limits apply with @deadline_ns as
 * their deadline (-ETIME: the op was stopped there; since 1.4).  *@where
 * (if not NULL) tells which ran.
 */
int npu_op_run(const struct npu_op *op, struct npu_queue *q,
	       int64_t deadline_ns, enum npu_op_where *where);

#ifdef __cplusplus
}
#endif

#endif /* NPU_OPS_H */
