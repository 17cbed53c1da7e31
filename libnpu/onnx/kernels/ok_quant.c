// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: see ok_util.h for the family. */
#include <stddef.h>

#include "ok_util.h"

const struct npu_onnx_op *const ok_ops_quant[] = {
	NULL,
};
