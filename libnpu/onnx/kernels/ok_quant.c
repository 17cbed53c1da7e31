// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: see ok_util.h for the family. */
#include <stddef.h>

#include "ok_quant.h"

const struct npu_onnx_op *const ok_ops_quant[] = {
	&ok_op_quantize_linear,
	&ok_op_dequantize_linear,
	&ok_op_dynamic_quantize_linear,
	&ok_op_matmul_integer,
	&ok_op_qlinear_matmul,
	&ok_op_conv_integer,
	&ok_op_qlinear_conv,
	&ok_op_qlinear_add,
	&ok_op_qlinear_mul,
	&ok_op_qlinear_sigmoid,
	&ok_op_qlinear_leaky_relu,
	&ok_op_qlinear_concat,
	&ok_op_qlinear_global_average_pool,
	&ok_op_qlinear_average_pool,
	&ok_op_qgemm,
	&ok_op_qlinear_softmax,
	NULL,
};
