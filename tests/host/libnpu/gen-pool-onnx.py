#!/usr/bin/env python3
# A one-node ONNX model, MaxPool with a K x K window over X [1,64,1,1]
# padded to one output pixel, written with a hand-rolled protobuf encoder
# (no onnx module needed), and its input as .npy.  Usage: K OUT.onnx IN.npy
import os, sys

# nothing is written into the checkout (no __pycache__)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import ld, npy_f32, value_info, vint  # noqa: E402


def ints_attr(name, vals):
    return ld(1, name) + b''.join(vint(8, v) for v in vals) + vint(20, 7)

k = int(sys.argv[1])
lo, hi = (k - 1) // 2, k - 1 - (k - 1) // 2
node = (ld(1, 'x') + ld(2, 'y') + ld(3, 'pool') + ld(4, 'MaxPool') +
        ld(5, ints_attr('kernel_shape', [k, k])) +
        ld(5, ints_attr('pads', [lo, lo, hi, hi])))
graph = (ld(1, node) + ld(2, 'g') + ld(11, value_info('x', [1, 64, 1, 1])) +
         ld(12, value_info('y', [1, 64, 1, 1])))
model = vint(1, 8) + ld(8, vint(2, 13)) + ld(7, graph)
open(sys.argv[2], 'wb').write(model)

npy_f32(sys.argv[3], [(i % 13) - 6.0 for i in range(64)], [1, 64, 1, 1])
