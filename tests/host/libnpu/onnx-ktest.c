// SPDX-License-Identifier: MIT
/* Helpers of the ONNX CPU kernels' tests: see onnx-ktest.h. */
#include "onnx-ktest.h"
