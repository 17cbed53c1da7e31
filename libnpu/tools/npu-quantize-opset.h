/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: raising a model's default-domain opset to one that has
 * the QuantizeLinear/DequantizeLinear the rewrite writes (10 per tensor,
 * 13 for per-channel axes), as onnxruntime does with onnx's version
 * converter: the ops whose attributes became inputs (Clip and Pad at 11,
 * Slice and TopK at 10, Squeeze, Unsqueeze, Split and ReduceSum at 13)
 * are rewritten, Softmax, LogSoftmax and Hardmax keep their meaning only
 * where the axes after theirs are all 1, and the ops that changed
 * otherwise (Upsample, Resize before 11, Scatter) are refused.
 */
#ifndef NPU_QUANTIZE_OPSET_H
#define NPU_QUANTIZE_OPSET_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"

/* The dims of tensor @name: its rank, or -1 when unknown. */
typedef int (*qo_shape_fn)(void *ctx, const char *name, int64_t *dims, int max_rank);

/* The default domain's opset entry of @mp, NULL without one. */
Onnx__OperatorSetIdProto *qo_default_opset(Onnx__ModelProto *mp);

/*
 * 0 when @mp can be raised to opset @to, else -EINVAL with the node and
 * the reason in @err; @shape may be NULL, when Softmax's check waits.
 */
int qo_check(Onnx__ModelProto *mp, int64_t to, qo_shape_fn shape, void *ctx, char *err,
	     size_t err_size);

/* Raise @mp to opset @to (after qo_check): 0, -EINVAL or -ENOMEM. */
int qo_upgrade(Onnx__ModelProto *mp, int64_t to, qo_shape_fn shape, void *ctx, char *err,
	       size_t err_size);

#endif /* NPU_QUANTIZE_OPSET_H */
