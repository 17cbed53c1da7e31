/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: the model's preparation, two of the rewrites onnxruntime's
 * quant_pre_process makes (its basic graph optimizations) before
 * quantize_static: Constant nodes become initializers, so that weights a
 * model holds in Constant nodes (paddle2onnx's do) are quantized as
 * weights; and, with --fold-batchnorm, the Conv + BatchNormalization
 * fusion (conv_bn_fusion.cc), so a Conv's output is quantized after, not
 * before, the per-channel scaling.
 */
#ifndef NPU_QUANTIZE_FOLD_H
#define NPU_QUANTIZE_FOLD_H

#include <stddef.h>

#include "onnx.pb-c.h"

/*
 * Fold every inference BatchNormalization whose input is a Conv's output
 * read by nothing else, with the Conv's weight and bias and the
 * normalization's four inputs float initializers used there only:
 *   f = scale / sqrt(var + epsilon),  W' = W * f[c],  b' = (b - mean) * f + B
 * The Conv then writes the BatchNormalization's output.  *@folded gets
 * the count.  0, -EINVAL for a malformed initializer, -ENOMEM.
 */
int qf_fold_batchnorm(Onnx__ModelProto *mp, size_t *folded, char *err, size_t err_size);

/*
 * Every Constant node of the main graph holding a tensor ("value") made
 * an initializer of its output's name; *@count gets the count.  0 or
 * -ENOMEM.
 */
int qf_constants_to_initializers(Onnx__ModelProto *mp, size_t *count);

#endif /* NPU_QUANTIZE_FOLD_H */
