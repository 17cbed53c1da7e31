/* SPDX-License-Identifier: MIT */
/*
 * What the ONNX CPU kernels' tests (onnx-k*.c) share: building kernel
 * tensors and running kernels through npu_kernel_run().
 */
#ifndef ONNX_KTEST_H
#define ONNX_KTEST_H

#include "npu/kernel.h"

#endif /* ONNX_KTEST_H */
