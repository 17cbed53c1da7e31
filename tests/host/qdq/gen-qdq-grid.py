#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# QDQ Add and Mul units whose two operands broadcast against each other,
# with every pair of 8-bit codes: x [2, 256] holds A's 256 codes in row 0
# and B's in row 1, each sliced out and quantized with its own parameters,
# one a column [256, 1] and the other a row [1, 256].  onnxruntime fuses
# the unit into QLinearAdd or QLinearMul, whose broadcast loop takes the
# column operand as the scalar of each span; for Add that decides how the
# two fused multiply-adds nest, and the parameters (gen-ms-quant.py's first
# tie-making set) make some pairs round differently the two ways.  Usage:
#   gen-qdq-grid.py KIND SEED OUT.onnx IN.npy
# KIND: add-col-a (A is the column: the scalar is on A's side, the side
# the importer must swap), add-col-b (B is the column), mul-col-a.
# SEED is accepted for qdq-ort-tests.sh; the models are fixed.
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'libnpu'))
from onnxpb import ld, value_info, vint  # noqa: E402

FLOAT, UINT8, INT64 = 1, 2, 7
# scale and zero point of A, B and Y: the folded and the fused forms of
# QLinearAdd round some code pairs apart under these
PARAMS = ((0.324, 82), (0.462, 204), (0.516, 44))


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def tensor(name, dt, dims, vals):
    fmt = {FLOAT: 'f', UINT8: 'B', INT64: 'q'}[dt]
    raw = struct.pack('<%d%s' % (len(vals), fmt), *vals)
    return b''.join(vint(1, d) for d in dims) + vint(2, dt) + ld(8, name) + ld(9, raw)


def node(ins, outs, op, name):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) +
            ld(3, name) + ld(4, op))


def npy_f32(path, vals, dims):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ', '.join(str(d) for d in dims))
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%df' % len(vals), *vals))


kind, out_onnx, out_npy = sys.argv[1], sys.argv[3], sys.argv[4]
if kind not in ('add-col-a', 'add-col-b', 'mul-col-a'):
    sys.exit('unknown kind ' + kind)
inits, nodes = [], []


def qdq(t, scale, zp):
    inits.append(tensor(t + '_scale', FLOAT, [], [scale]))
    inits.append(tensor(t + '_zero_point', UINT8, [], [zp]))
    nodes.append(node([t, t + '_scale', t + '_zero_point'], [t + '_q'], 'QuantizeLinear',
                      t + '_Q'))
    nodes.append(node([t + '_q', t + '_scale', t + '_zero_point'], [t + '_dq'],
                      'DequantizeLinear', t + '_DQ'))
    return t + '_dq'


def operand(t, row, column):
    """Row @row of x as [256, 1] (@column) or [1, 256]."""
    inits.append(tensor(t + '_starts', INT64, [1], [row]))
    inits.append(tensor(t + '_ends', INT64, [1], [row + 1]))
    inits.append(tensor(t + '_axes', INT64, [1], [0]))
    nodes.append(node(['x', t + '_starts', t + '_ends', t + '_axes'], [t + '_row'], 'Slice',
                      t + '_slice'))
    inits.append(tensor(t + '_shape', INT64, [2], [256, 1] if column else [1, 256]))
    nodes.append(node([t + '_row', t + '_shape'], [t], 'Reshape', t + '_reshape'))


a_column = kind.endswith('-a')
operand('a', 0, a_column)
operand('b', 1, not a_column)
ad = qdq('a', f32(PARAMS[0][0]), PARAMS[0][1])
bd = qdq('b', f32(PARAMS[1][0]), PARAMS[1][1])
nodes.append(node([ad, bd], ['y'], 'Add' if kind.startswith('add') else 'Mul', 'op'))
yd = qdq('y', f32(PARAMS[2][0]), PARAMS[2][1])
nodes.append(node([yd], ['out'], 'Identity', 'out'))
graph = (b''.join(ld(1, n) for n in nodes) + ld(2, 'qdq-grid') +
         b''.join(ld(5, t) for t in inits) + ld(11, value_info('x', [2, 256])) +
         ld(12, value_info('out', [256, 256])))
open(out_onnx, 'wb').write(vint(1, 8) + ld(8, vint(2, 13)) + ld(7, graph))
# every code of each row: the dequantized value of code c, which quantizes back to c
vals = [f32(f32(s) * (c - z)) for s, z in PARAMS[:2] for c in range(256)]
npy_f32(out_npy, vals, [2, 256])
