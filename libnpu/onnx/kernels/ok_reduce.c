// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: see ok_util.h for the family, ok_reduce.h for its files. */
#include <stddef.h>

#include "ok_reduce.h"

const struct npu_onnx_op *const ok_ops_reduce[] = {
	&ok_op_reduce_sum,
	&ok_op_reduce_mean,
	&ok_op_reduce_max,
	&ok_op_reduce_min,
	&ok_op_reduce_prod,
	&ok_op_reduce_l1,
	&ok_op_reduce_l2,
	&ok_op_reduce_log_sum,
	&ok_op_reduce_log_sum_exp,
	&ok_op_reduce_sum_square,
	&ok_op_argmax,
	&ok_op_argmin,
	&ok_op_topk,
	&ok_op_hardmax,
	&ok_op_softmax,
	&ok_op_logsoftmax,
	&ok_op_layernorm,
	&ok_op_instancenorm,
	&ok_op_groupnorm,
	&ok_op_lpnorm,
	&ok_op_mvn,
	&ok_op_lrn,
	&ok_op_batchnorm,
	&ok_op_sce,
	&ok_op_nll,
	&ok_op_det,
	NULL,
};
