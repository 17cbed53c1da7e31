/* SPDX-License-Identifier: MIT */
/*
 * The index and data-movement family of the ONNX CPU kernels: the ops
 * each file defines, their per-node states (declared here so the unit
 * tests can fill them without a model), and the byte-wise strided copy
 * they share.
 *
 * Movement ops never look at element values: they copy
 * npu_dtype_size() bytes per element, so one code path serves every
 * dtype.  Only ops that compute (CumSum, Range, the scatter reductions,
 * OneHot, EyeLike, Unique's ordering) switch on the dtype.
 */
#ifndef NPU_ONNX_OK_INDEX_H
#define NPU_ONNX_OK_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ok_util.h"

/* ---- The ops (ok_index_*.c) ---------------------------------------------- */

extern const struct npu_onnx_op ok_op_gather, ok_op_gather_elements, ok_op_gather_nd;
extern const struct npu_onnx_op ok_op_scatter, ok_op_scatter_elements, ok_op_scatter_nd;
extern const struct npu_onnx_op ok_op_trilu, ok_op_cumsum, ok_op_range, ok_op_onehot,
	ok_op_eyelike;
extern const struct npu_onnx_op ok_op_size, ok_op_shape;
extern const struct npu_onnx_op ok_op_reverse_sequence, ok_op_compress, ok_op_nonzero,
	ok_op_unique;
extern const struct npu_onnx_op ok_op_transpose, ok_op_concat, ok_op_split, ok_op_slice,
	ok_op_expand, ok_op_tile, ok_op_depth_to_space, ok_op_space_to_depth;
extern const struct npu_onnx_op ok_op_pad;

/* ---- Per-node states ------------------------------------------------------- */

/* Gather, GatherElements, Concat, and Compress (whose axis is optional: has_axis). */
struct ok_axis_state {
	int64_t axis;
	bool has_axis;
};

struct ok_gather_nd_state {
	int64_t batch_dims;
};

enum ok_reduction {
	OK_REDUCE_NONE,
	OK_REDUCE_ADD,
	OK_REDUCE_MUL,
	OK_REDUCE_MAX,
	OK_REDUCE_MIN,
};

/* ScatterElements, Scatter (axis) and ScatterND (axis unused). */
struct ok_scatter_state {
	int64_t axis;
	enum ok_reduction reduction;
};

struct ok_trilu_state {
	bool upper;
};

struct ok_cumsum_state {
	bool exclusive, reverse;
};

struct ok_onehot_state {
	int64_t axis;
};

struct ok_eyelike_state {
	int64_t k;
	bool has_dtype;
	enum npu_dtype dtype;
};

/* Shape (opset 15's start and end; end absent: the rank). */
struct ok_shape_state {
	int64_t start, end;
	bool has_end;
};

struct ok_reverse_sequence_state {
	int64_t batch_axis, time_axis;
};

struct ok_unique_state {
	bool sorted, has_axis;
	int64_t axis;
};

struct ok_transpose_state {
	uint32_t num_perm;	/* 0: reverse the axes */
	int64_t perm[NPU_TENSOR_MAX_RANK];
};

#define OK_MAX_SPLITS	NPU_KERNEL_MAX_OUTPUTS

/*
 * Split: sizes from the attribute (opset < 13, num_split), from input 1
 * (opset 13+, when present), num_outputs (opset 18) or even parts.
 */
struct ok_split_state {
	int64_t axis;
	uint32_t num_split;
	int64_t split[OK_MAX_SPLITS];
	int64_t num_outputs;	/* 0: not given */
};

/* Slice: opset < 10 takes attributes; 10+ inputs (from_inputs). */
struct ok_slice_state {
	bool from_inputs, has_axes;
	uint32_t num;
	int64_t starts[NPU_TENSOR_MAX_RANK], ends[NPU_TENSOR_MAX_RANK],
		axes[NPU_TENSOR_MAX_RANK];
};

enum ok_pad_mode {
	OK_PAD_CONSTANT,
	OK_PAD_REFLECT,
	OK_PAD_EDGE,
	OK_PAD_WRAP,
};

/* Pad: opset < 11 takes pads and value attributes; 11+ inputs. */
struct ok_pad_state {
	enum ok_pad_mode mode;
	bool from_inputs;
	uint32_t num_pads;
	int64_t pads[2 * NPU_TENSOR_MAX_RANK];
	float value;
};

/* DepthToSpace (crd: opset 11's CRD mode) and SpaceToDepth. */
struct ok_block_state {
	int64_t blocksize;
	bool crd;
};

/* ---- Shared helpers (ok_index_copy.c) -------------------------------------- */

/*
 * A strided view walked in row-major order into dense memory: twice the
 * tensor rank, because Tile and DepthToSpace see their input as a view of
 * up to 2 * rank dimensions.
 */
#define OK_VIEW_MAX_RANK	(2 * NPU_TENSOR_MAX_RANK)

struct ok_view {
	uint32_t rank;
	uint64_t dims[OK_VIEW_MAX_RANK];
	int64_t stride[OK_VIEW_MAX_RANK];	/* in elements; may be 0 or negative */
};

/*
 * Copy the view of @src (elements of @elem_size bytes; strides relative
 * to @src) densely into @dst, polling @call.  Adjacent dimensions that
 * are contiguous merge, rows of stride 1 copy with memcpy.
 */
int ok_view_copy(void *dst, const void *src, size_t elem_size, const struct ok_view *v,
		 struct npu_kernel_call *call);

/* An index tensor's element @i (int32 or int64 only: see ok_check_indices). */
static inline int64_t ok_index_at(const struct npu_kernel_tensor *t, uint64_t i)
{
	return t->dtype == NPU_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
					   : ((const int32_t *)t->data)[i];
}

/*
 * -EINVAL unless the first @required inputs are present and, if
 * @need_out0, output 0: a model may leave out any input or output.
 */
int ok_need_io(size_t ni, const struct npu_kernel_tensor *const *in, size_t required,
	       size_t no, struct npu_kernel_tensor *const *out, bool need_out0, char *err,
	       size_t err_size);
#define OK_NEED_IO(ni, in, required, no, out, need_out0)				\
	do {										\
		int need_ = ok_need_io(ni, in, required, no, out, need_out0, err, err_size); \
		if (need_)								\
			return need_;							\
	} while (0)

/* -EINVAL unless @t is int32 or int64, naming @what. */
int ok_check_indices(const struct npu_kernel_tensor *t, const char *what, char *err,
		     size_t err_size);

/*
 * Index @i of @idx checked against an axis of @n and wrapped from the
 * end, into *@out; -EINVAL through @call when out of range.
 */
int ok_fetch_index(const struct npu_kernel_tensor *idx, uint64_t i, uint64_t n,
		   uint64_t *out, struct npu_kernel_call *call);

/*
 * GatherElements' and ScatterElements' indices: no larger than the data
 * @x off @axis, where they index it.
 */
int ok_check_elements_indices(const struct npu_kernel_tensor *idx,
			      const struct npu_kernel_tensor *x, uint32_t axis, char *err,
			      size_t err_size);

/*
 * The next element of an indices tensor of @dims walked in row-major
 * order, @c its coordinate: moves @base, the data offset of that element
 * with the @axis coordinate left out, by the data's strides @s.
 */
static inline void ok_elements_step(uint64_t *c, uint64_t *base, const uint64_t *s,
				    const uint32_t *dims, uint32_t rank, uint32_t axis)
{
	uint32_t d;

	for (d = rank; d-- > 0;) {
		if (d != axis)
			*base += s[d];
		if (++c[d] < dims[d])
			break;
		if (d != axis)
			*base -= s[d] * dims[d];
		c[d] = 0;
	}
}

/* Every dimension of @t within [1, UINT32_MAX], the rank within the limit. */
int ok_set_shape64(struct npu_kernel_tensor *t, uint32_t rank, const uint64_t *dims,
		   const char *what, char *err, size_t err_size);

/* ONNX TensorProto's data type numbers to npu dtypes; -1 if none. */
int ok_onnx_dtype(int64_t onnx_type);

/* "none", "add", "mul", "max", "min" from a node's reduction attribute. */
int ok_reduction_attr(const struct npu_onnx_node *n, enum ok_reduction *out, char *err,
		      size_t err_size);

#endif /* NPU_ONNX_OK_INDEX_H */
