// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: the index and data-movement family (ok_index.h). */
#include <stddef.h>

#include "ok_index.h"

const struct npu_onnx_op *const ok_ops_index[] = {
	&ok_op_gather,
	&ok_op_gather_elements,
	&ok_op_gather_nd,
	&ok_op_scatter,
	&ok_op_scatter_elements,
	&ok_op_scatter_nd,
	&ok_op_trilu,
	&ok_op_cumsum,
	&ok_op_range,
	&ok_op_onehot,
	&ok_op_eyelike,
	&ok_op_size,
	&ok_op_shape,
	&ok_op_reverse_sequence,
	&ok_op_compress,
	&ok_op_nonzero,
	&ok_op_unique,
	&ok_op_transpose,
	&ok_op_concat,
	&ok_op_split,
	&ok_op_slice,
	&ok_op_pad,
	&ok_op_expand,
	&ok_op_tile,
	&ok_op_depth_to_space,
	&ok_op_space_to_depth,
	NULL,
};
