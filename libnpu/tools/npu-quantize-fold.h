/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: the model's preparation, two of the rewrites onnxruntime's
 * quant_pre_process makes (its basic graph optimizations) before
 * quantize_static: Constant nodes become initializers, so that weights a
 * model holds in Constant nodes (paddle2onnx's do) are quantized as
 * weights; and, with --fuse-conv, the Conv + BatchNormalization
 * fusion (conv_bn_fusion.cc), so a Conv's output is quantized after, not
 * before, the per-channel scaling.
 */
#ifndef NPU_QUANTIZE_FOLD_H
#define NPU_QUANTIZE_FOLD_H

#include <stddef.h>

#include "onnx.pb-c.h"

/*
 * Fold into a Conv what follows it when the Conv's output is read by
 * nothing else and its weight and bias, and the other operands, are float
 * initializers used there only (onnxruntime's ConvBNFusion, ConvMulFusion
 * and ConvAddFusion):
 *   BatchNormalization (inference):  f = scale / sqrt(var + epsilon),
 *     W' = W * f[c],  b' = (b - mean) * f + B
 *   Mul by a constant per channel (or one value):  W' = W * m[c], b' = b * m[c]
 *   Add of a constant per channel (or one value):  b' = b + a[c]
 * The Conv then writes the folded node's output.  *@folded gets the count
 * of nodes folded.  0 or -ENOMEM.
 */
int qf_fuse_conv(Onnx__ModelProto *mp, size_t *folded, char *err, size_t err_size);

/*
 * Every Constant node of the main graph holding a tensor ("value") made
 * an initializer of its output's name; *@count gets the count.  0 or
 * -ENOMEM.
 */
int qf_constants_to_initializers(Onnx__ModelProto *mp, size_t *count);

#endif /* NPU_QUANTIZE_FOLD_H */
