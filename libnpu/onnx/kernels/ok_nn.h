/* SPDX-License-Identifier: MIT */
/*
 * The nn family of ONNX CPU kernels (ok_nn*.c): convolutions and pooling
 * of any spatial rank, MatMul/Gemm/Einsum of every dtype, Resize and
 * Upsample, GridSample and RoiAlign.  Private to the family and its
 * tests (tests/host/libnpu/onnx-knn.c fills these states directly).
 */
#ifndef NPU_ONNX_OK_NN_H
#define NPU_ONNX_OK_NN_H

#include <stdint.h>

#include "ok_util.h"

/* Spatial axes of an N, C, D1..Dn tensor: rank is at most 6. */
#define OK_NN_MAX_SPATIAL	(NPU_TENSOR_MAX_RANK - 2)

enum ok_auto_pad {
	OK_PAD_NOTSET,
	OK_PAD_SAME_UPPER,
	OK_PAD_SAME_LOWER,
	OK_PAD_VALID,
};

/*
 * Attributes of a sliding window (Conv, ConvTranspose, the pools); a
 * count of 0 means the attribute is absent and takes its default.
 */
struct ok_window {
	enum ok_auto_pad auto_pad;
	uint32_t n_kernel, n_strides, n_dilations, n_pads;
	int64_t kernel[OK_NN_MAX_SPATIAL];
	int64_t strides[OK_NN_MAX_SPATIAL];
	int64_t dilations[OK_NN_MAX_SPATIAL];
	int64_t pads[2 * OK_NN_MAX_SPATIAL];	/* begins, then ends */
	bool ceil_mode;
};

/* A window's geometry along each spatial axis, as infer() resolves it. */
struct ok_geom {
	uint32_t n;				/* spatial axes */
	uint32_t in[OK_NN_MAX_SPATIAL], out[OK_NN_MAX_SPATIAL];
	uint32_t kernel[OK_NN_MAX_SPATIAL];
	uint32_t stride[OK_NN_MAX_SPATIAL], dilation[OK_NN_MAX_SPATIAL];
	int64_t pad_begin[OK_NN_MAX_SPATIAL];
	int64_t pad_end[OK_NN_MAX_SPATIAL];
};

struct ok_conv_state {
	struct ok_window w;
	int64_t group;
	uint32_t n_output_padding, n_output_shape;
	int64_t output_padding[OK_NN_MAX_SPATIAL];
	int64_t output_shape[NPU_TENSOR_MAX_RANK];
};

enum ok_pool_kind {
	OK_POOL_MAX,
	OK_POOL_AVERAGE,
	OK_POOL_LP,
};

struct ok_pool_state {
	enum ok_pool_kind kind;
	bool global;
	struct ok_window w;
	bool count_include_pad;
	int64_t storage_order;		/* MaxPool's Indices: 1 is column-major */
	int64_t p;			/* LpPool */
};

struct ok_unpool_state {
	struct ok_window w;
};

struct ok_gemm_state {
	float alpha, beta;
	bool trans_a, trans_b;
};

/* The equation is parsed again against the inputs' ranks (for its ellipses) each time. */
struct ok_einsum_state {
	char equation[256];
};

enum ok_resize_mode {
	OK_RESIZE_NEAREST,
	OK_RESIZE_LINEAR,
	OK_RESIZE_CUBIC,
};

enum ok_resize_coord {
	OK_COORD_HALF_PIXEL,
	OK_COORD_ASYMMETRIC,
	OK_COORD_PYTORCH_HALF_PIXEL,
	OK_COORD_TF_HALF_PIXEL_FOR_NN,
	OK_COORD_ALIGN_CORNERS,
	OK_COORD_TF_CROP_AND_RESIZE,
	OK_COORD_HALF_PIXEL_SYMMETRIC,
};

enum ok_resize_nearest {
	OK_NEAREST_ROUND_PREFER_FLOOR,
	OK_NEAREST_ROUND_PREFER_CEIL,
	OK_NEAREST_FLOOR,
	OK_NEAREST_CEIL,
	OK_NEAREST_SIMPLE,	/* Upsample, Resize-10: ceil when shrinking, else floor */
};

enum ok_resize_aspect {
	OK_ASPECT_STRETCH,
	OK_ASPECT_NOT_LARGER,
	OK_ASPECT_NOT_SMALLER,
};

struct ok_resize_state {
	int64_t opset;			/* before 11: asymmetric, SIMPLE nearest, no roi */
	bool upsample;			/* Upsample: scales only, opset 7 in an attribute */
	enum ok_resize_mode mode;
	enum ok_resize_coord coord;
	enum ok_resize_nearest nearest;
	enum ok_resize_aspect aspect;
	float cubic_a, extrapolation;
	bool exclude_outside, antialias;
	uint32_t n_axes, n_scales;
	int64_t axes[NPU_TENSOR_MAX_RANK];
	float scales[NPU_TENSOR_MAX_RANK];	/* Upsample-7's attribute */
};

enum ok_grid_mode {
	OK_GRID_LINEAR,
	OK_GRID_NEAREST,
	OK_GRID_CUBIC,
};

enum ok_grid_padding {
	OK_GRID_ZEROS,
	OK_GRID_BORDER,
	OK_GRID_REFLECTION,
};

struct ok_grid_state {
	enum ok_grid_mode mode;
	enum ok_grid_padding padding;
	bool align_corners;
};

struct ok_roi_state {
	bool max_mode;
	bool half_pixel;
	int64_t out_h, out_w, sampling_ratio;
	float spatial_scale;
};

/* ---- Shared by the family's files ------------------------------------------ */

/* Parse the window attributes of @node into @w (spatial axes unknown yet). */
int ok_window_parse(const struct npu_onnx_node *node, struct ok_window *w,
		    bool pooling, char *err, size_t err_size);
/*
 * Resolve @w over the spatial dims of @x (N, C, D1..Dn) with the kernel
 * extents @kernel (from the weights or the attribute) into @g.
 */
int ok_window_geom(const struct ok_window *w, const struct npu_kernel_tensor *x,
		   const uint32_t *kernel, struct ok_geom *g, char *err,
		   size_t err_size);

/*
 * Set @t's dtype and shape from 64-bit @dims: -EINVAL with a message when
 * a dimension is 0, the rank is above NPU_TENSOR_MAX_RANK or the tensor
 * would have more than OK_NN_MAX_ELEMS elements.
 */
#define OK_NN_MAX_ELEMS		(1ull << 40)
int ok_nn_out_shape(struct npu_kernel_tensor *t, enum npu_dtype dtype, uint32_t rank,
		    const uint64_t *dims, char *err, size_t err_size);
/* Saturating arithmetic for work counts. */
uint64_t ok_nn_mul_sat(uint64_t a, uint64_t b);
uint64_t ok_nn_add_sat(uint64_t a, uint64_t b);

/* What the kernels compute in: float for fp32/fp16/bf16, double, or integers. */
enum ok_wtype {
	OK_WT_F32,
	OK_WT_F64,
	OK_WT_INT,
};
enum ok_wtype ok_wtype_of(enum npu_dtype dt);
/* Elements [@off, @off + @n) of @t converted into @dst. */
void ok_load_f32(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, float *dst);
void ok_load_f64(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, double *dst);
void ok_load_u64(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, uint64_t *dst);
void ok_store_f32(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const float *src);
void ok_store_f64(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const double *src);
void ok_store_u64(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const uint64_t *src);

/*
 * C[M x N] += A[M x K] * B[K x N], A's element (i, k) at
 * A[i * a_row + k * a_col] (so either layout), B's at B[k * b_row + j *
 * b_col], C row-major with leading dimension ldc.  Polls @call; its
 * non-zero result is returned.
 */
int ok_gemm_f32(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const float *A, size_t a_row, size_t a_col,
		const float *B, size_t b_row, size_t b_col, float *C, size_t ldc);
int ok_gemm_f64(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const double *A, size_t a_row, size_t a_col,
		const double *B, size_t b_row, size_t b_col, double *C, size_t ldc);
int ok_gemm_u64(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const uint64_t *A, size_t a_row, size_t a_col,
		const uint64_t *B, size_t b_row, size_t b_col, uint64_t *C, size_t ldc);

/* ---- The ops (ok_ops_nn[] lists them) --------------------------------------- */

extern const struct npu_onnx_op ok_op_conv, ok_op_conv_transpose;
extern const struct npu_onnx_op ok_op_max_pool, ok_op_average_pool, ok_op_lp_pool;
extern const struct npu_onnx_op ok_op_global_max_pool, ok_op_global_average_pool,
	ok_op_global_lp_pool, ok_op_max_unpool;
extern const struct npu_onnx_op ok_op_matmul, ok_op_gemm, ok_op_einsum;
extern const struct npu_onnx_op ok_op_resize, ok_op_upsample;
extern const struct npu_onnx_op ok_op_grid_sample, ok_op_roi_align;

extern const struct npu_kernel ok_kernel_conv, ok_kernel_conv_transpose, ok_kernel_pool,
	ok_kernel_max_unpool, ok_kernel_matmul, ok_kernel_gemm, ok_kernel_einsum,
	ok_kernel_resize, ok_kernel_grid_sample, ok_kernel_roi_align;

#endif /* NPU_ONNX_OK_NN_H */
