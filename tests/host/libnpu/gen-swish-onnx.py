#!/usr/bin/env python3
# A one-node ONNX model using the custom op com.example::Swish (beta 1.5)
# of Documentation/custom-ops.rst, written with a hand-rolled protobuf
# encoder (no onnx module needed), its input and the output the op's
# formula gives, as .npy.  Usage: OUT.onnx IN.npy WANT.npy
import math, os, struct, sys

# nothing is written into the checkout (no __pycache__)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import key, ld, npy_f32, value_info, vint  # noqa: E402


beta = 1.5
x = [-4.0, -1.0, 0.0, 0.5, 2.0, 7.0]
# float attribute beta: name, f (field 2, fixed32), type FLOAT (1)
attr = ld(1, 'beta') + key(2, 5) + struct.pack('<f', beta) + vint(20, 1)
node = ld(1, 'x') + ld(2, 'y') + ld(3, 'sw') + ld(4, 'Swish') + ld(5, attr) + ld(7, 'com.example')
graph = ld(1, node) + ld(2, 'swish') + ld(11, value_info('x', [2, 3])) + ld(12, value_info('y', [2, 3]))
model = (vint(1, 8) + ld(7, graph) + ld(8, ld(1, '') + vint(2, 13)) +
         ld(8, ld(1, 'com.example') + vint(2, 1)))
with open(sys.argv[1], 'wb') as f:
    f.write(model)
npy_f32(sys.argv[2], x, [2, 3])
want = [struct.unpack('<f', struct.pack('<f', v))[0] for v in x]
npy_f32(sys.argv[3], [v / (1 + math.exp(-beta * v)) for v in want], [2, 3])
