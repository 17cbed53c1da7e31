#!/usr/bin/env python3
# Float16 models, for checking that libnpu rounds them where onnxruntime's
# CPU provider does on x86-64 (onnx_fp16.c): it computes them in float32
# and rounds to float16 only where a node with a float16 kernel reads a
# value, or a graph output is typed float16.  Usage:
#   gen-fp16-onnx.py KIND SEED OUT.onnx IN.npy [WANT.npy]
# Every op here rounds exactly in float32 (IEEE's correctly rounded
# + - * / and sqrt, max, concatenation), so each model has one result.
# The float32-input kinds are the keep_io_types form of
# onnxconverter-common (a Cast to float16 after the input, a Cast to
# float before the output), whose result onnxruntime-node computes:
#   keep-io       Add, Mul, Sub, Div, Relu, Sqrt, then a Max with a
#                 float16 initializer, a Reshape and a Transpose: the Max
#                 has a float16 kernel and a reader with one, so the Sqrt
#                 result rounds there;
#   concat-fp32   Add, then a Concat with float16 zeros, read by a Mul:
#                 the Concat sits between float32 nodes, so nothing rounds;
#   concat-fp16   the same with a Reshape after the Concat: the Concat
#                 runs in float16 and the Add result rounds.
# fp16-io has float16 input and output and keep-io's chain; WANT.npy is
# its result computed here, in binary64 rounded to binary32 after every
# op, then to binary16 once (binary64 has enough bits that the double
# rounding never differs).  Rounding every node's result to float16
# gives other numbers for most elements of every kind.
import math
import os
import random
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import ld, npy, value_info, vint  # noqa: E402

FLOAT, INT64, FLOAT16 = 1, 7, 10
ROWS, COLS = 6, 16
KINDS = ('keep-io', 'concat-fp32', 'concat-fp16', 'fp16-io')


def f32(v):
    return struct.unpack('<f', struct.pack('<f', v))[0]


def f16(v):
    return struct.unpack('<e', struct.pack('<e', v))[0]


def tensor16(name, dims, vals):
    raw = struct.pack('<%de' % len(vals), *vals)
    return b''.join(vint(1, d) for d in dims) + vint(2, FLOAT16) + ld(8, name) + ld(9, raw)


def tensor64(name, vals):
    return vint(1, len(vals)) + vint(2, INT64) + ld(8, name) + ld(9, struct.pack('<%dq' % len(vals), *vals))


def attr_i(name, v):
    return ld(1, name) + vint(3, v) + vint(20, 2)


def attr_ints(name, vals):
    return ld(1, name) + b''.join(vint(8, v) for v in vals) + vint(20, 7)


def node(ins, outs, op, attrs=()):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) +
            ld(3, outs[0] + '_node') + ld(4, op) + b''.join(ld(5, a) for a in attrs))


if len(sys.argv) < 5 or sys.argv[1] not in KINDS:
    sys.exit('usage: gen-fp16-onnx.py %s SEED OUT.onnx IN.npy [WANT.npy]' % '|'.join(KINDS))
kind, seed, out_onnx, out_in = sys.argv[1:5]
rng = random.Random(int(seed))
consts = {name: [f16(rng.uniform(lo, hi)) for _ in range(COLS)]
          for name, lo, hi in (('c_add', 0.1, 2.0), ('c_mul', 0.5, 2.0), ('c_sub', 0.5, 3.0),
                               ('c_div', 0.7, 3.0), ('c_max', 0.2, 1.2))}
x = [rng.uniform(0.5, 4.0) for _ in range(ROWS * COLS)]
x = [f16(v) if kind == 'fp16-io' else f32(v) for v in x]
inits = [tensor16(n, [COLS], v) for n, v in consts.items()]
nodes = []
src = 'x'
if kind != 'fp16-io':
    nodes.append(node(['x'], ['x16'], 'Cast', [attr_i('to', FLOAT16)]))
    src = 'x16'

if kind.startswith('concat'):
    inits.append(tensor16('zeros', [ROWS, COLS], [0.0] * (ROWS * COLS)))
    nodes.append(node([src, 'c_add'], ['add'], 'Add'))
    nodes.append(node(['add', 'zeros'], ['cat'], 'Concat', [attr_i('axis', 0)]))
    src = 'cat'
    if kind == 'concat-fp16':
        inits.append(tensor64('flat', [2 * ROWS, COLS]))
        nodes.append(node(['cat', 'flat'], ['flat_cat'], 'Reshape'))
        src = 'flat_cat'
    nodes.append(node([src, 'c_mul'], ['mul'], 'Mul'))
    src, dims = 'mul', [2 * ROWS, COLS]
else:
    for op, c in (('Add', 'c_add'), ('Mul', 'c_mul'), ('Sub', 'c_sub'), ('Div', 'c_div')):
        nodes.append(node([src, c], [op.lower()], op))
        src = op.lower()
    nodes.append(node([src], ['relu'], 'Relu'))
    nodes.append(node(['relu'], ['sqrt'], 'Sqrt'))
    nodes.append(node(['sqrt', 'c_max'], ['max'], 'Max'))
    inits.append(tensor64('shape', [2, ROWS // 2, COLS]))
    nodes.append(node(['max', 'shape'], ['r3'], 'Reshape'))
    nodes.append(node(['r3'], ['t'], 'Transpose', [attr_ints('perm', [1, 0, 2])]))
    src, dims = 't', [ROWS // 2, 2, COLS]
if kind == 'fp16-io':
    nodes.append(node([src], ['y'], 'Identity'))
else:
    nodes.append(node([src], ['y'], 'Cast', [attr_i('to', FLOAT)]))

io_type = FLOAT16 if kind == 'fp16-io' else FLOAT
graph = (b''.join(ld(1, n) for n in nodes) + ld(2, 'fp16-' + kind) +
         b''.join(ld(5, t) for t in inits) + ld(11, value_info('x', [ROWS, COLS], io_type)) +
         ld(12, value_info('y', dims, io_type)))
model = vint(1, 8) + ld(7, graph) + ld(8, ld(1, '') + vint(2, 17))
with open(out_onnx, 'wb') as f:
    f.write(model)
npy(out_in, x, [ROWS, COLS], '<f2' if kind == 'fp16-io' else '<f4')

if kind == 'fp16-io':
    y = []
    for i, v in enumerate(x):
        j = i % COLS
        v = f32(v + consts['c_add'][j])
        v = f32(v * consts['c_mul'][j])
        v = f32(v - consts['c_sub'][j])
        v = f32(v / consts['c_div'][j])
        v = f32(math.sqrt(max(v, 0.0)))
        y.append(max(v, consts['c_max'][j]))
    # [2, ROWS // 2, COLS] transposed to [ROWS // 2, 2, COLS]
    half = ROWS // 2 * COLS
    want = [y[b * half + r * COLS + j] for r in range(ROWS // 2) for b in range(2)
            for j in range(COLS)]
    npy(sys.argv[5], [f16(v) for v in want], dims, '<f2')
