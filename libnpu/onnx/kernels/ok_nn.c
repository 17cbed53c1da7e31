// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: see ok_util.h for the family, ok_nn.h for its files. */
#include <stddef.h>

#include "ok_nn.h"

const struct npu_onnx_op *const ok_ops_nn[] = {
	&ok_op_conv,
	&ok_op_conv_transpose,
	&ok_op_max_pool,
	&ok_op_average_pool,
	&ok_op_lp_pool,
	&ok_op_global_max_pool,
	&ok_op_global_average_pool,
	&ok_op_global_lp_pool,
	&ok_op_max_unpool,
	&ok_op_matmul,
	&ok_op_gemm,
	&ok_op_einsum,
	&ok_op_resize,
	&ok_op_upsample,
	&ok_op_grid_sample,
	&ok_op_roi_align,
	NULL,
};
