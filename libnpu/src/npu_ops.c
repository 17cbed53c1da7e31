// SPDX-License-Identifier: MIT
/*
 * The op API: tensors, op validation, device commands and the CPU
 * fallback.
 *
 * An op is validated once, at creation, by the device's own rules
 * (vnpu_ref_check(): vnpu_op_check() without the device's command limits,
 * which the CPU fallback does not share), applied to the whole untiled
 * command with placeholder addresses.  The device commands (tiles, within
 * the limits the device reports; npu_tile.c) are then computed and kept,
 * so encoding is a copy and an op is immutable afterwards.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_ops_cpu.h"
#include "npu_tile.h"
#include "npu/ops.h"
#include "vnpu_engine.h"
#include "vnpu_ref.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the op encoder writes vnpu's little-endian layout from host structs"
#endif

_Static_assert(NPU_TENSOR_MAX_RANK == VNPU_MAX_RANK, "rank limit");
_Static_assert((int)NPU_DTYPE_INT32 == VNPU_DT_INT32 &&
	       (int)NPU_DTYPE_UINT8 == VNPU_DT_UINT8, "dtype values");
_Static_assert((int)NPU_ACT_GELU == VNPU_ACT_GELU &&
	       (int)NPU_ACT_CLIP == VNPU_ACT_CLIP &&
	       (int)NPU_ACT_HARD_SIGMOID == VNPU_ACT_HARD_SIGMOID &&
	       (int)NPU_ACT_NEG == VNPU_ACT_NEG, "activation values");
_Static_assert((int)NPU_ELTWISE_POW == VNPU_ELTWISE_POW &&
	       (int)NPU_REDUCE_SUM_SQUARE == VNPU_REDUCE_SUM_SQUARE,
	       "eltwise and reduce kinds");
_Static_assert((int)NPU_COPY_BORDER_WRAP == VNPU_COPY_BORDER_WRAP,
	       "copy border values");
_Static_assert((int)NPU_RESIZE_CUBIC == VNPU_RESIZE_CUBIC &&
	       (int)NPU_RESIZE_TF_CROP_AND_RESIZE == VNPU_RESIZE_TF_CROP_AND_RESIZE &&
	       (int)NPU_RESIZE_CEIL == VNPU_RESIZE_CEIL, "resize values");
_Static_assert((int)NPU_ROUND_TFLITE == VNPU_ROUND_TFLITE &&
	       (int)NPU_ROUND_ORT_QLINEAR == VNPU_ROUND_ORT_QLINEAR, "rounding values");
_Static_assert(NPU_GEMM_TRANS_A == VNPU_GEMM_TRANS_A &&
	       NPU_GEMM_TRANS_B == VNPU_GEMM_TRANS_B, "gemm flags");

/* A placeholder device address for validation before any is known. */
#define PLACEHOLDER_QVA		0x1000ull

struct npu_tensor {
	struct vnpu_tensor_desc d;	/* va and quant_va not yet set */
	uint8_t *qarr;			/* CHANNEL: scales then zero points */
	struct npu_buffer *buf;
	uint64_t offset;
	void *host;
};

struct op_slot {
	bool present;
	struct npu_buffer *buf;
	uint64_t offset;
	void *host;
	uint8_t *qarr;
	uint64_t qbytes;
};

struct npu_op {
	struct vnpu_cmd_compute full;	/* untiled, placeholder addresses */
	struct op_slot s[VNPU_OP_SLOTS];
	struct npu_context *ctx;	/* of the buffers, referenced */
	const char *reason;		/* NULL: the device takes it */
	struct vnpu_cmd_compute *cmds;
	size_t num_cmds;
	struct npu_buffer *qbuf;	/* per-channel arrays of the tiles */
	struct npu_buffer *bufs[VNPU_OP_SLOTS + 1];
	size_t num_bufs;
	uint64_t work;			/* vnpu_op_info.macs of @full */
	struct npu_cpu_tiles host;	/* the CPU path's split of @full */
};

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * Every dtype, the host-only ones included (graph values, kernels).  The
 * op API itself goes by vnpu_dtype_size(), the device's, so a tensor of a
 * host-only dtype is refused where it is created and never reaches an op.
 */
NPU_EXPORT size_t npu_dtype_size(enum npu_dtype dtype)
{
	switch (dtype) {
	case NPU_DTYPE_BOOL:
		return 1;
	case NPU_DTYPE_INT16:
	case NPU_DTYPE_UINT16:
		return 2;
	case NPU_DTYPE_UINT32:
		return 4;
	case NPU_DTYPE_INT64:
	case NPU_DTYPE_FP64:
	case NPU_DTYPE_UINT64:
		return 8;
	default:
		return vnpu_dtype_size((unsigned int)dtype);
	}
}

/* ---- Tensors -------------------------------------------------------------- */

NPU_EXPORT int npu_tensor_create(enum npu_dtype dtype, uint32_t rank,
				 const uint32_t *dims, struct npu_tensor **out)
{
	struct npu_tensor *t;
	uint64_t elems = 1;
	uint32_t i;

	if (!out || !dims || !vnpu_dtype_size((unsigned int)dtype) ||
	    rank < 1 || rank > VNPU_MAX_RANK)
		return -EINVAL;
	for (i = 0; i < rank; i++)
		if (!dims[i])
			return -EINVAL;
	/* Every tensor has a span that fits: npu_tensor_span() never fails. */
	for (i = 0; i < rank; i++)
		if (__builtin_mul_overflow(elems, dims[i], &elems))
			return -EOVERFLOW;
	if (__builtin_mul_overflow(elems, vnpu_dtype_size((unsigned int)dtype),
				   &elems))
		return -EOVERFLOW;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->d.dtype = (uint8_t)dtype;
	t->d.rank = (uint8_t)rank;
	memcpy(t->d.dims, dims, 4u * rank);
	*out = t;
	return 0;
}

NPU_EXPORT void npu_tensor_free(struct npu_tensor *t)
{
	if (!t)
		return;
	if (t->buf)
		npu__buffer_put(t->buf);
	free(t->qarr);
	free(t);
}

NPU_EXPORT int npu_tensor_set_strides(struct npu_tensor *t,
				      const uint64_t *strides)
{
	uint64_t last = 0, x;
	int i;

	if (!t)
		return -EINVAL;
	if (!strides) {
		t->d.flags &= ~VNPU_TENSOR_STRIDED;
		memset(t->d.strides, 0, sizeof(t->d.strides));
		return 0;
	}
	for (i = 0; i < t->d.rank; i++)
		if (__builtin_mul_overflow((uint64_t)(t->d.dims[i] - 1),
					   strides[i], &x) ||
		    __builtin_add_overflow(last, x, &last))
			return -EOVERFLOW;
	if (__builtin_add_overflow(last, 1, &x) ||
	    __builtin_mul_overflow(x, vnpu_dtype_size(t->d.dtype), &x))
		return -EOVERFLOW;
	memcpy(t->d.strides, strides, 8u * t->d.rank);
	t->d.flags |= VNPU_TENSOR_STRIDED;
	return 0;
}

static bool is_q8(uint8_t dt)
{
	return dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8;
}

static bool zp_ok(uint8_t dt, int32_t zp)
{
	return dt == VNPU_DT_INT8 ? zp >= -128 && zp <= 127 : zp >= 0 && zp <= 255;
}

NPU_EXPORT int npu_tensor_set_quant(struct npu_tensor *t, float scale,
				    int32_t zero_point)
{
	if (!t || !is_q8(t->d.dtype) || !(scale > 0.0f) || !isfinite(scale) ||
	    !zp_ok(t->d.dtype, zero_point))
		return -EINVAL;
	free(t->qarr);
	t->qarr = NULL;
	t->d.quant = VNPU_QUANT_TENSOR;
	t->d.quant_axis = 0;
	t->d.scale = bits_of(scale);
	t->d.zero_point = zero_point;
	return 0;
}

NPU_EXPORT int npu_tensor_set_quant_channel(struct npu_tensor *t, uint32_t axis,
					    const float *scales,
					    const int32_t *zero_points)
{
	uint32_t n, c;
	uint8_t *q;

	if (!t || !scales || !is_q8(t->d.dtype) || axis >= t->d.rank)
		return -EINVAL;
	n = t->d.dims[axis];
	for (c = 0; c < n; c++)
		if (!(scales[c] > 0.0f) || !isfinite(scales[c]) ||
		    (zero_points && !zp_ok(t->d.dtype, zero_points[c])))
			return -EINVAL;
	q = calloc(n, 8);
	if (!q)
		return -ENOMEM;
	memcpy(q, scales, 4ull * n);
	if (zero_points)
		memcpy(q + 4ull * n, zero_points, 4ull * n);
	free(t->qarr);
	t->qarr = q;
	t->d.quant = VNPU_QUANT_CHANNEL;
	t->d.quant_axis = (uint8_t)axis;
	t->d.scale = 0;
	t->d.zero_point = 0;
	return 0;
}

NPU_EXPORT int npu_tensor_span(const struct npu_tensor *t, uint64_t *span)
{
	uint64_t last = 0, x;
	int i;

	if (!t || !span)
		return -EINVAL;
	if (!(t->d.flags & VNPU_TENSOR_STRIDED)) {
		for (i = 0, last = 1; i < t->d.rank; i++)
			if (__builtin_mul_overflow(last, t->d.dims[i], &last))
				return -EOVERFLOW;
	} else {
		for (i = 0; i < t->d.rank; i++)
			if (__builtin_mul_overflow((uint64_t)(t->d.dims[i] - 1),
						   t->d.strides[i], &x) ||
			    __builtin_add_overflow(last, x, &last))
				return -EOVERFLOW;
		if (__builtin_add_overflow(last, 1, &last))
			return -EOVERFLOW;
	}
	if (__builtin_mul_overflow(last, vnpu_dtype_size(t->d.dtype), &last))
		return -EOVERFLOW;
	*span = last;
	return 0;
}

uint64_t npu__tensor_span(const struct npu_tensor *t)
{
	uint64_t span;

	return npu_tensor_span(t, &span) ? 0 : span;
}

static void tensor_unbind(struct npu_tensor *t)
{
	if (t->buf)
		npu__buffer_put(t->buf);
	t->buf = NULL;
	t->host = NULL;
	t->offset = 0;
}

NPU_EXPORT int npu_tensor_bind_buffer(struct npu_tensor *t,
				      struct npu_buffer *buf, uint64_t offset)
{
	uint64_t span, size;
	int ret;

	if (!t || !buf || offset % vnpu_dtype_size(t->d.dtype))
		return -EINVAL;
	ret = npu_tensor_span(t, &span);
	if (ret)
		return ret;
	size = npu_buffer_size(buf);
	if (offset > size || span > size - offset)
		return -ERANGE;
	/* Take the new reference first: @buf may be the one bound now. */
	npu__buffer_get(buf);
	tensor_unbind(t);
	t->buf = buf;
	t->offset = offset;
	return 0;
}

NPU_EXPORT int npu_tensor_bind_host(struct npu_tensor *t, void *data,
				    size_t len)
{
	uint64_t span;
	int ret;

	if (!t || !data ||
	    (uintptr_t)data % vnpu_dtype_size(t->d.dtype))
		return -EINVAL;
	ret = npu_tensor_span(t, &span);
	if (ret)
		return ret;
	if (len < span)
		return -ERANGE;
	tensor_unbind(t);
	t->host = data;
	return 0;
}

/* ---- Ops ------------------------------------------------------------------ */

static uint16_t vnpu_opcode(enum npu_op_kind k)
{
	static const uint16_t map[NPU_OP_KIND_COUNT] = {
		[NPU_OP_GEMM] = VNPU_OP_GEMM,
		[NPU_OP_CONV2D] = VNPU_OP_CONV2D,
		[NPU_OP_POOL2D] = VNPU_OP_POOL2D,
		[NPU_OP_ELTWISE] = VNPU_OP_ELTWISE,
		[NPU_OP_ACTIVATION] = VNPU_OP_ACTIVATION,
		[NPU_OP_SOFTMAX] = VNPU_OP_SOFTMAX,
		[NPU_OP_LAYERNORM] = VNPU_OP_LAYERNORM,
		[NPU_OP_QUANTIZE] = VNPU_OP_QUANTIZE,
		[NPU_OP_DEQUANTIZE] = VNPU_OP_DEQUANTIZE,
		[NPU_OP_REQUANTIZE] = VNPU_OP_REQUANTIZE,
		[NPU_OP_POOL3D] = VNPU_REF_OP_POOL3D,
		[NPU_OP_COPY] = VNPU_OP_COPY,
		[NPU_OP_RESIZE] = VNPU_OP_RESIZE,
		[NPU_OP_CONV_TRANSPOSE] = VNPU_OP_CONV_TRANSPOSE,
		[NPU_OP_REDUCE] = VNPU_OP_REDUCE,
		[NPU_OP_LUT] = VNPU_OP_LUT,
	};

	return (unsigned int)k < NPU_OP_KIND_COUNT ? map[k] : 0;
}

static int encode_pool3d(const struct npu_op_params *p,
			 struct vnpu_cmd_compute *c)
{
	struct vnpu_ref_attr_pool3d at;
	int i;

	memset(&at, 0, sizeof(at));
	at.kind = (uint32_t)p->pool3d.kind;
	at.flags = p->pool3d.count_include_pad ? VNPU_POOL_COUNT_INCLUDE_PAD : 0;
	for (i = 0; i < 3; i++) {
		uint32_t dil = p->pool3d.dilation[i] ? p->pool3d.dilation[i] : 1;

		if (p->pool3d.kernel[i] > UINT16_MAX ||
		    p->pool3d.stride[i] > UINT16_MAX || dil > UINT16_MAX ||
		    p->pool3d.pad[i] > UINT16_MAX ||
		    p->pool3d.pad[3 + i] > UINT16_MAX)
			return -EINVAL;
		at.kernel[i] = (uint16_t)p->pool3d.kernel[i];
		at.stride[i] = (uint16_t)p->pool3d.stride[i];
		at.dilation[i] = (uint16_t)dil;
		at.pad_begin[i] = (uint16_t)p->pool3d.pad[i];
		at.pad_end[i] = (uint16_t)p->pool3d.pad[3 + i];
	}
	memcpy(c->attr.raw, &at, sizeof(at));
	return 0;
}

/* Bytes of npu_op_params' per-op union (its largest member). */
#define PARAMS_UNION_BYTES	(offsetof(struct npu_op_params, clip) - \
				 offsetof(struct npu_op_params, conv))

/* Encode @p's attributes; -EINVAL for a field the op does not use. */
static int encode_attrs(const struct npu_op_params *p,
			struct vnpu_cmd_compute *c)
{
	struct npu_op_params z;
	size_t used;

	/* Bytes of the union beyond what the op uses must be zero. */
	memset(&z, 0, sizeof(z));
	switch (p->kind) {
	case NPU_OP_GEMM:
		c->attr.gemm.flags = p->gemm.flags;
		used = sizeof(p->gemm);
		break;
	case NPU_OP_CONV2D:
		c->attr.conv.stride_h = p->conv.stride[0];
		c->attr.conv.stride_w = p->conv.stride[1];
		c->attr.conv.dilation_h = p->conv.dilation[0];
		c->attr.conv.dilation_w = p->conv.dilation[1];
		c->attr.conv.pad_top = p->conv.pad[0];
		c->attr.conv.pad_left = p->conv.pad[1];
		c->attr.conv.pad_bottom = p->conv.pad[2];
		c->attr.conv.pad_right = p->conv.pad[3];
		c->attr.conv.groups = p->conv.groups;
		used = sizeof(p->conv);
		break;
	case NPU_OP_POOL2D:
		c->attr.pool.kind = (uint32_t)p->pool.kind;
		c->attr.pool.flags = p->pool.count_include_pad ?
				     VNPU_POOL_COUNT_INCLUDE_PAD : 0;
		c->attr.pool.kernel_h = p->pool.kernel[0];
		c->attr.pool.kernel_w = p->pool.kernel[1];
		c->attr.pool.stride_h = p->pool.stride[0];
		c->attr.pool.stride_w = p->pool.stride[1];
		c->attr.pool.pad_top = p->pool.pad[0];
		c->attr.pool.pad_left = p->pool.pad[1];
		c->attr.pool.pad_bottom = p->pool.pad[2];
		c->attr.pool.pad_right = p->pool.pad[3];
		c->attr.pool.dilation_h = p->pool.dilation[0];
		c->attr.pool.dilation_w = p->pool.dilation[1];
		used = sizeof(p->pool);
		break;
	case NPU_OP_POOL3D:
		if (encode_pool3d(p, c))
			return -EINVAL;
		used = sizeof(p->pool3d);
		break;
	case NPU_OP_ELTWISE:
		c->attr.eltwise.kind = (uint32_t)p->eltwise.kind;
		used = sizeof(p->eltwise);
		break;
	case NPU_OP_CONV_TRANSPOSE:
		c->attr.convt.stride_h = p->conv_transpose.stride[0];
		c->attr.convt.stride_w = p->conv_transpose.stride[1];
		c->attr.convt.dilation_h = p->conv_transpose.dilation[0];
		c->attr.convt.dilation_w = p->conv_transpose.dilation[1];
		c->attr.convt.pad_top = p->conv_transpose.pad[0];
		c->attr.convt.pad_left = p->conv_transpose.pad[1];
		c->attr.convt.pad_bottom = p->conv_transpose.pad[2];
		c->attr.convt.pad_right = p->conv_transpose.pad[3];
		c->attr.convt.groups = p->conv_transpose.groups;
		c->attr.convt.out_pad_h = p->conv_transpose.output_pad[0];
		c->attr.convt.out_pad_w = p->conv_transpose.output_pad[1];
		used = sizeof(p->conv_transpose);
		break;
	case NPU_OP_REDUCE:
		c->attr.reduce.kind = (uint32_t)p->reduce.kind;
		c->attr.reduce.axes = p->reduce.axes;
		used = sizeof(p->reduce);
		break;
	case NPU_OP_SOFTMAX:
		c->attr.softmax.axis = p->softmax.axis;
		used = sizeof(p->softmax);
		break;
	case NPU_OP_LAYERNORM:
		c->attr.layernorm.axis = p->layernorm.axis;
		if (!isfinite(p->layernorm.epsilon))
			return -EINVAL;
		c->attr.layernorm.epsilon = bits_of(p->layernorm.epsilon);
		used = sizeof(p->layernorm);
		break;
	case NPU_OP_COPY:
		c->attr.copy.border = (uint32_t)p->copy.border;
		if (p->copy.border == NPU_COPY_BORDER_CONSTANT)
			c->attr.copy.fill = bits_of(p->copy.fill);
		else if (p->copy.fill != 0.0f)
			return -EINVAL;
		memcpy(c->attr.copy.offset, p->copy.offset,
		       sizeof(c->attr.copy.offset));
		c->attr.copy.reverse = p->copy.reverse;
		used = sizeof(p->copy);
		break;
	case NPU_OP_RESIZE:
		c->attr.resize.mode = (uint32_t)p->resize.mode;
		c->attr.resize.coord = (uint32_t)p->resize.coord;
		c->attr.resize.nearest = (uint32_t)p->resize.nearest;
		c->attr.resize.flags = p->resize.exclude_outside ?
				       VNPU_RESIZE_EXCLUDE_OUTSIDE : 0;
		c->attr.resize.scale_h = bits_of(p->resize.scale[0]);
		c->attr.resize.scale_w = bits_of(p->resize.scale[1]);
		c->attr.resize.cubic_a = bits_of(p->resize.cubic_a);
		c->attr.resize.extrapolation = bits_of(p->resize.extrapolation);
		/* Binary32 bits, as bits_of() gives them (the ABI is little-endian). */
		memcpy(c->attr.resize.roi, p->resize.roi, sizeof(c->attr.resize.roi));
		used = sizeof(p->resize);
		break;
	default:
		used = 0;
		break;
	}
	/*
	 * Words of the union the op does not use must be zero, so a field
	 * set for the wrong op kind is an error, not silently ignored.  The
	 * pool structs hold a bool (and padding), so they are not compared.
	 */
	if (p->act == NPU_ACT_CLIP) {
		c->attr.activation.clip_min = bits_of(p->clip.min);
		c->attr.activation.clip_max = bits_of(p->clip.max);
	} else if (p->clip.min != 0.0f || p->clip.max != 0.0f) {
		return -EINVAL;
	}
	if (p->act == NPU_ACT_HARD_SIGMOID) {
		if (!isfinite(p->act_beta))
			return -EINVAL;
		c->attr.raw[VNPU_ACT_BETA_WORD] = bits_of(p->act_beta);
	} else if (p->act_beta != 0.0f) {
		return -EINVAL;
	}
	if (p->kind != NPU_OP_POOL2D && p->kind != NPU_OP_POOL3D &&
	    p->kind != NPU_OP_RESIZE &&
	    memcmp((const uint8_t *)&p->conv + used, (const uint8_t *)&z.conv + used,
		   PARAMS_UNION_BYTES - used))
		return -EINVAL;
	return 0;
}

/* Unquantized integer operands: ONNX's wrapping integer Add/Sub/Mul. */
static bool int_eltwise(const struct vnpu_cmd_compute *c)
{
	uint8_t dt = c->t[3].dtype;

	return (dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8 || dt == VNPU_DT_INT32) &&
	       c->t[3].quant == VNPU_QUANT_NONE;
}

static const struct npu_tensor *slot_tensor(const struct npu_tensor *const *in,
					    size_t n, const struct npu_tensor *o,
					    int i)
{
	if (i == VNPU_OP_SLOT_OUT)
		return o;
	return (size_t)i < n ? in[i] : NULL;
}

/* Append per-channel arrays for channels [start, start + n) of slot @s. */
static int qblob_add(uint8_t **blob, size_t *len, const struct op_slot *s,
		     uint32_t total, uint32_t start, uint32_t n, uint64_t *off)
{
	uint8_t *nb = realloc(*blob, *len + 8ull * n);

	if (!nb)
		return -ENOMEM;
	*blob = nb;
	memcpy(nb + *len, s->qarr + 4ull * start, 4ull * n);
	memcpy(nb + *len + 4ull * n, s->qarr + 4ull * (total + start), 4ull * n);
	*off = *len;
	*len += 8ull * n;
	return 0;
}

/* Each distinct buffer once, with a reference the op drops when freed. */
static void add_buf(struct npu_op *op, struct npu_buffer *b)
{
	size_t i;

	for (i = 0; i < op->num_bufs; i++)
		if (op->bufs[i] == b)
			return;
	npu__buffer_get(b);
	op->bufs[op->num_bufs++] = b;
}

/*
 * Turn the plan into device commands: real addresses, and per-channel
 * arrays for each tile uploaded into one read-only buffer.
 */
static int plan_finish(struct npu_op *op, struct npu_plan *p,
		       const struct vnpu_op_limits *lim, const char **why)
{
	uint8_t *blob = NULL;
	size_t blen = 0, i;
	uint64_t qoff[VNPU_OP_SLOTS];
	int s, ret = 0;
	void *map;

	op->cmds = calloc(p->n, sizeof(*op->cmds));
	if (!op->cmds)
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		struct vnpu_cmd_compute *c = &p->t[i].c;

		for (s = 0; s < VNPU_OP_SLOTS; s++) {
			struct vnpu_tensor_desc *d = &c->t[s];

			qoff[s] = 0;
			if (!op->s[s].present)
				continue;
			d->va += npu_buffer_va(op->s[s].buf) + op->s[s].offset;
			if (d->quant != VNPU_QUANT_CHANNEL)
				continue;
			ret = qblob_add(&blob, &blen, &op->s[s],
					op->full.t[s].dims[d->quant_axis],
					p->t[i].qstart[s], d->dims[d->quant_axis],
					&qoff[s]);
			if (ret)
				goto out;
		}
		op->cmds[i] = *c;
		for (s = 0; s < VNPU_OP_SLOTS; s++)
			op->cmds[i].t[s].quant_va = qoff[s];
	}
	op->num_cmds = p->n;
	if (blen) {
		ret = npu_buffer_alloc(op->ctx, blen, NPU_BUFFER_DEVICE_READONLY,
				       &op->qbuf);
		if (!ret)
			ret = npu_buffer_map(op->qbuf, &map);
		if (ret)
			goto out;
		memcpy(map, blob, blen);
		add_buf(op, op->qbuf);
		for (i = 0; i < p->n; i++)
			for (s = 0; s < VNPU_OP_SLOTS; s++)
				if (op->cmds[i].t[s].quant == VNPU_QUANT_CHANNEL)
					op->cmds[i].t[s].quant_va += npu_buffer_va(op->qbuf);
	}
	/*
	 * Every command must pass the device's own check with the limits
	 * the plan was made for; the planner only estimates.
	 */
	for (i = 0; i < p->n && !ret; i++)
		ret = npu__check_cmd(&op->cmds[i], lim, why);
out:
	free(blob);
	return ret;
}

/* Commands of one op must fit one command buffer (npu_op_run()). */
static size_t max_cmds(const struct npu_context *ctx)
{
	uint32_t size = ctx->info.max_cmd_size ? ctx->info.max_cmd_size :
			VNPU_CMD_MAX_BUFFER;

	return size / sizeof(struct vnpu_cmd_compute);
}

static void plan_device(struct npu_op *op, uint64_t max_tile_bytes)
{
	struct npu_plan p = { 0 };
	struct vnpu_op_limits lim;
	const char *why = NULL;
	int ret, s;

	for (s = 0; s < VNPU_OP_SLOTS; s++) {
		if (op->s[s].present && !op->s[s].buf) {
			op->reason = "an operand is in host memory";
			return;
		}
	}
	if (!op->ctx) {
		op->reason = "no operand is in device memory";
		return;
	}
	if (!(op->ctx->info.caps & NPU_CAP_COMPUTE)) {
		op->reason = "the device has no compute engine";
		return;
	}
	npu__op_limits(&op->ctx->limits, max_tile_bytes, &lim);
	ret = npu__plan(&op->full, &lim, max_cmds(op->ctx), &p, &why);
	if (!ret)
		ret = plan_finish(op, &p, &lim, &why);
	free(p.t);
	if (ret) {
		free(op->cmds);
		op->cmds = NULL;
		op->num_cmds = 0;
		if (op->qbuf && op->bufs[op->num_bufs - 1] == op->qbuf) {
			op->num_bufs--;
			npu__buffer_put(op->qbuf);
		}
		npu_buffer_free(op->qbuf);
		op->qbuf = NULL;
		op->reason = ret == -E2BIG && why ? why :
			"the device commands could not be prepared (out of memory)";
	}
}

static uint64_t lower(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The tiles the CPU path runs @op as, when one engine command cannot take
 * it: the same split as the device's (npu__plan()), against the limits
 * the engine enforces (vnpu_op_limits_device), lowered to the context's
 * where it reports smaller ones, so that on a device with interface 1.1's
 * limits both paths run the same commands.
 */
static int plan_host(struct npu_op *op, uint64_t max_tile_bytes)
{
	const struct vnpu_op_limits *e = &vnpu_op_limits_device;
	struct vnpu_op_limits lim;
	const char *why = NULL;
	int ret;

	npu__op_limits(op->ctx ? &op->ctx->limits : NULL, max_tile_bytes, &lim);
	lim.tensor_elems = lower(lim.tensor_elems, e->tensor_elems);
	lim.tensor_bytes = lower(lim.tensor_bytes, e->tensor_bytes);
	lim.cmd_bytes = lower(lim.cmd_bytes, e->cmd_bytes);
	lim.cmd_macs = lower(lim.cmd_macs, e->cmd_macs);
	lim.reduction = lower(lim.reduction, e->reduction);
	lim.kernel_dim = (uint32_t)lower(lim.kernel_dim, e->kernel_dim);
	lim.channels = (uint32_t)lower(lim.channels, e->channels);
	if (!npu__check_cmd(&op->full, &lim, &why))
		return 0;
	ret = npu__plan(&op->full, &lim,
			op->ctx ? max_cmds(op->ctx) :
			VNPU_CMD_MAX_BUFFER / sizeof(struct vnpu_cmd_compute),
			&op->host.plan, &why);
	/* An op the planner cannot split still runs, on the reference. */
	if (ret && ret != -ENOMEM) {
		free(op->host.plan.t);
		memset(&op->host.plan, 0, sizeof(op->host.plan));
		op->host.why = ret == -E2BIG && why ? why :
			"the op could not be split into commands within the device's limits";
		return 0;
	}
	return ret;
}

NPU_EXPORT int npu_op_create(const struct npu_op_params *params,
			     const struct npu_tensor *const *inputs,
			     size_t num_inputs, const struct npu_tensor *output,
			     struct npu_op **out)
{
	struct npu_op_params p;
	int ret;

	if (!params)
		return -EINVAL;
	ret = npu__struct_in(&p, sizeof(p), params, params->size);
	if (ret)
		return ret;
	p.size = sizeof(p);
	return npu__op_create(&p, inputs, num_inputs, output, out);
}

int npu__op_create(const struct npu_op_params *params,
		   const struct npu_tensor *const *inputs, size_t num_inputs,
		   const struct npu_tensor *output, struct npu_op **out)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct npu_op *op;
	int i, ret;

	if (!params || !output || !out || num_inputs > 3 ||
	    (num_inputs && !inputs) || !vnpu_opcode(params->kind) ||
	    (unsigned int)params->act > NPU_ACT_NEG ||
	    (unsigned int)params->round > NPU_ROUND_ORT_QLINEAR)
		return -EINVAL;
	if (params->act == NPU_ACT_LEAKY_RELU ||
	    params->act == NPU_ACT_HARD_SIGMOID ? !isfinite(params->act_alpha) :
	    params->act_alpha != 0.0f)
		return -EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->full.hdr.opcode = vnpu_opcode(params->kind);
	op->full.hdr.size = sizeof(op->full);
	op->full.act = (uint8_t)params->act;
	op->full.round = (uint8_t)params->round;
	if (params->act == NPU_ACT_LEAKY_RELU ||
	    params->act == NPU_ACT_HARD_SIGMOID)
		op->full.act_alpha = bits_of(params->act_alpha);
	ret = encode_attrs(params, &op->full);
	if (ret)
		goto fail;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		const struct npu_tensor *t = slot_tensor(inputs, num_inputs,
							 output, i);
		struct op_slot *s = &op->s[i];

		if (!t)
			continue;
		ret = -EINVAL;
		if (!t->buf && !t->host)
			goto fail;
		s->present = true;
		s->buf = t->buf;
		s->offset = t->offset;
		s->host = t->host;
		op->full.t[i] = t->d;
		if (t->d.quant == VNPU_QUANT_CHANNEL) {
			s->qbytes = 8ull * t->d.dims[t->d.quant_axis];
			s->qarr = malloc(s->qbytes);
			if (!s->qarr) {
				ret = -ENOMEM;
				goto fail;
			}
			memcpy(s->qarr, t->qarr, s->qbytes);
			op->full.t[i].quant_va = PLACEHOLDER_QVA;
		}
		if (t->buf) {
			if (op->ctx && op->ctx != t->buf->ctx) {
				ret = -EXDEV;
				goto fail;
			}
			if (!op->ctx) {
				op->ctx = t->buf->ctx;
				npu__context_get(op->ctx);
			}
			add_buf(op, t->buf);
		}
	}
	if (params->kind == NPU_OP_ELTWISE && int_eltwise(&op->full))
		op->full.hdr.opcode = VNPU_REF_OP_INT_ELTWISE;
	/*
	 * The device's rules are the op's rules: one check for both paths
	 * (vnpu_ref_check() is vnpu_op_check() plus the CPU-only ops, with
	 * only host-sized limits; plan_device() applies the device's).
	 */
	if (vnpu_ref_check(&op->full, sizeof(op->full), &cc, &info)) {
		ret = -EINVAL;
		goto fail;
	}
	op->work = info.macs;
	switch (op->full.hdr.opcode) {
	case VNPU_REF_OP_INT_ELTWISE:
		op->reason = "wrapping integer arithmetic on unquantized tensors (ONNX's integer Add, Div, Max, Pow, ...) is not in the device op set";
		break;
	case VNPU_REF_OP_POOL3D:
		op->reason = (info.present & 4) ?
			"pooling with an indices output is not in the device op set" :
			"3-D pooling is not in the device op set";
		break;
	default:
		ret = plan_host(op, params->max_tile_bytes);
		if (ret)
			goto fail;
		plan_device(op, params->max_tile_bytes);
		break;
	}
	*out = op;
	return 0;
fail:
	npu_op_free(op);
	return ret;
}

uint64_t npu__op_work(const struct npu_op *op)
{
	return op->work;
}

/* A command the device would refuse costs nothing: it never runs there. */
static uint64_t cmd_cycles(const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	if (vnpu_op_check_limits(c, sizeof(*c), &cc, &info, &vnpu_op_limits_host))
		return 0;
	return vnpu_engine_cycles(&cc, &info);
}

uint64_t npu__op_cycles(const struct npu_op *op)
{
	uint64_t cycles = 0;
	size_t i;

	if (op->num_cmds) {
		for (i = 0; i < op->num_cmds; i++)
			cycles += cmd_cycles(&op->cmds[i]);
		return cycles;
	}
	if (!op->host.plan.n)
		return cmd_cycles(&op->full);
	for (i = 0; i < op->host.plan.n; i++)
		cycles += cmd_cycles(&op->host.plan.t[i].c);
	return cycles;
}

NPU_EXPORT void npu_op_free(struct npu_op *op)
{
	int i;

	if (!op)
		return;
	for (i = 0; i < (int)op->num_bufs; i++)
		npu__buffer_put(op->bufs[i]);
	npu_buffer_free(op->qbuf);
	free(op->cmds);
	free(op->host.plan.t);
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		free(op->s[i].qarr);
	if (op->ctx)
		npu__context_put(op->ctx);
	free(op);
}

NPU_EXPORT int npu_op_supported(const struct npu_op *op, const char **reason)
{
	if (!op)
		return -EINVAL;
	if (op->reason && reason)
		*reason = op->reason;
	return !op->reason;
}

NPU_EXPORT size_t npu_op_num_commands(const struct npu_op *op)
{
	return op ? op->num_cmds : 0;
}

NPU_EXPORT int npu_op_encode(const struct npu_op *op, struct npu_cmdbuf *cb)
{
	size_t i;
	int ret;

	if (!op || !cb)
		return -EINVAL;
	if (op->reason)
		return -ENOTSUP;
	if (cb->ctx && cb->ctx != op->ctx)
		return -EXDEV;
	if (op->num_cmds > (cb->capacity - cb->size) / sizeof(op->cmds[0]))
		return -ENOSPC;
	for (i = 0; i < op->num_cmds; i++) {
		ret = npu_cmdbuf_raw(cb, &op->cmds[i], sizeof(op->cmds[i]));
		if (ret) {
			/* Cannot happen after the checks above; undo anyway. */
			cb->size -= i * sizeof(op->cmds[0]);
			return ret;
		}
	}
	return 0;
}

NPU_EXPORT size_t npu_op_buffers(const struct npu_op *op,
				 struct npu_buffer **bufs, size_t max)
{
	size_t i;

	if (!op)
		return 0;
	for (i = 0; i < op->num_bufs && i < max && bufs; i++)
		bufs[i] = op->bufs[i];
	return op->num_bufs;
}

int npu__op_run_host(const struct npu_op *op, bool reference,
		     const struct npu_cpu_run *run)
{
	struct npu_cpu_run defaults;
	struct vnpu_op_bind bind;
	void *map;
	int i, ret;

	if (!op)
		return -EINVAL;
	if (!run) {
		npu__cpu_run_init(&defaults, NULL, NULL, 0);
		run = &defaults;
	}
	memset(&bind, 0, sizeof(bind));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		const struct op_slot *s = &op->s[i];

		if (!s->present)
			continue;
		if (s->buf) {
			ret = npu_buffer_map(s->buf, &map);
			if (ret)
				return ret;
			bind.data[i] = (uint8_t *)map + s->offset;
		} else {
			bind.data[i] = s->host;
		}
		bind.qparams[i] = s->qarr;
	}
	return reference ? vnpu_ref_run(&op->full, &bind) :
			   npu__cpu_exec(&op->full, &bind, &op->host, run);
}

NPU_EXPORT int npu_op_run_cpu(const struct npu_op *op)
{
	return npu__op_run_host(op, false, NULL);
}

NPU_EXPORT int npu_op_run_cpu_limits(const struct npu_op *op,
				     const struct npu_cpu_limits *limits,
				     char *err, size_t err_size)
{
	struct npu_cpu_run run;
	int ret;

	ret = npu__cpu_run_init(&run, limits, err, err_size);
	if (ret)
		return ret;
	return npu__op_run_host(op, false, &run);
}

NPU_EXPORT int npu_op_run(const struct npu_op *op, struct npu_queue *q,
			  int64_t deadline_ns, enum npu_op_where *where)
{
	struct npu_cmdbuf *cb = NULL;
	struct npu_fence *f = NULL;
	int ret;

	if (!op)
		return -EINVAL;
	if (!q || op->reason) {
		struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;

		lim.deadline_ns = deadline_ns;
		ret = npu_op_run_cpu_limits(op, &lim, NULL, 0);
		if (!ret && where)
			*where = NPU_OP_RAN_CPU;
		return ret;
	}
	ret = npu_cmdbuf_create(op->ctx, op->num_cmds * sizeof(op->cmds[0]), &cb);
	if (!ret)
		ret = npu_op_encode(op, cb);
	if (!ret)
		ret = npu_submit(q, cb, op->bufs, op->num_bufs, NULL, 0, &f);
	/* The job's outcome is NPU_ERR_JOB_*, never a call's errno. */
	if (!ret)
		ret = npu_fence_wait(f, deadline_ns);
	if (!ret)
		ret = npu_fence_error(f);
	npu_fence_free(f);
	npu_cmdbuf_destroy(cb);
	if (!ret && where)
		*where = NPU_OP_RAN_DEVICE;
	return ret;
}
