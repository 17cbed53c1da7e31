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
	NULL,
};
