#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Requantize a QDQ model's Conv, Gemm and MatMul weights to 7 bits.

    reduce-range.py QDQ.onnx

(in place, with Debian's python3-onnx).  onnxruntime's quantize_static
calls this reduce_range: weights in [-63, 63] and their scales grown by
127/63, each bias requantized to the new input x weight scale.  It keeps
onnxruntime's fused integer kernels exact on CPUs without VNNI: MLAS's
AVX2 kernel sums pairs of u8 x s8 products in 16 bits (vpmaddubsw), which
saturates for full-range int8 weights (255 * 127 * 2 > 32767) and cannot
for 7-bit ones (255 * 63 * 2 = 32130).  The weights are requantized from
their 8-bit values (round(q * 63 / 127)): npu-quantize has no such option
yet.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

WEIGHT_OPS = ('Conv', 'ConvTranspose', 'Gemm', 'MatMul')
QMAX = 63


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: reduce-range.py QDQ.onnx')
    model = onnx.load(sys.argv[1])
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}

    def get(name):
        return numpy_helper.to_array(inits[name])

    def put(name, value):
        inits[name].CopyFrom(numpy_helper.from_array(value, name))

    def dq_of(name):
        node = producer.get(name)
        return node if node is not None and node.op_type == 'DequantizeLinear' else None

    for node in graph.node:
        if node.op_type not in WEIGHT_OPS or len(node.input) < 2:
            continue
        wdq, xdq = dq_of(node.input[1]), dq_of(node.input[0])
        if wdq is None or xdq is None or wdq.input[0] not in inits:
            continue
        q = get(wdq.input[0])
        if q.dtype != np.int8 or np.abs(q.astype(np.int32)).max() <= QMAX:
            continue
        scale = get(wdq.input[1])
        axis = next((a.i for a in wdq.attribute if a.name == 'axis'), 1)
        shape = [1] * q.ndim
        if scale.size > 1:
            shape[axis % q.ndim] = -1
        new_scale = (scale * np.float32(127.0 / QMAX)).astype(np.float32)
        ratio = scale.astype(np.float64).reshape(shape) / new_scale.astype(np.float64).reshape(shape)
        new_q = np.clip(np.round(q * ratio), -QMAX, QMAX).astype(np.int8)
        put(wdq.input[0], new_q)
        put(wdq.input[1], new_scale)
        bdq = dq_of(node.input[2]) if len(node.input) > 2 else None
        if bdq is not None and bdq.input[0] in inits:
            bias_scale = get(bdq.input[1])
            new_bias_scale = (get(xdq.input[1]) * new_scale).astype(np.float32)
            new_bias_scale = new_bias_scale.reshape(bias_scale.shape)
            bias = get(bdq.input[0]).astype(np.float64) * bias_scale
            put(bdq.input[0], np.round(bias / new_bias_scale).astype(np.int32))
            put(bdq.input[1], new_bias_scale)
    onnx.save(model, sys.argv[1])


if __name__ == '__main__':
    main()
