#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fp32 models for npu-quantize's tests, with random weights, and random
# calibration samples, written with the project's protobuf encoder (no onnx
# or numpy module needed).
#
#   gen-quantize-onnx.py KIND OUT.onnx [SAMPLE_DIR COUNT SEED]
#
# KIND main: x [1,3,8,8] -> Conv(W, B, pads 1) -> Relu -> Add(K) -> Reshape
#   [1,256] -> MatMul(Wm) -> Sigmoid, and Concat(MatMul, Sigmoid) = out
#   [1,20]; Gemm(Reshape, Wg, Bg, transB) = g [1,10].  Opset 12, so
#   per-channel weights raise it to 13.
# KIND softmax: x -> Conv -> Softmax, opset 12 (cannot be raised to 13).
# KIND exp: x -> Conv -> Exp -> Mul(x2), Exp being an op quantize_static
#   leaves float.
# KIND bn: x -> Conv(W, a Constant node's value; no bias) ->
#   BatchNormalization -> Mul(one value) -> Add([4,1,1]) -> Relu = y, opset 13.
# KIND opset9: x -> Conv -> Clip(min 0, max 6 as attributes) -> Slice
#   (attributes) -> Unsqueeze, Squeeze (axes attributes) -> Flatten ->
#   Softmax(axis 1) = y [1,128], opset 9: the attributes become inputs
#   when npu-quantize raises it.
# KIND nanweight: main with a NaN in W.
# KIND fp16: main with W stored as float16.
# Samples: SAMPLE_DIR/sNN/x.npy, values uniform in [-1, 1).
import os, random, struct, sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import key, ld, npy_f32, value_info, vint  # noqa: E402

FLOAT, INT64, FLOAT16 = 1, 7, 10


def tensor(name, dims, vals, dtype=FLOAT):
    body = b''.join(vint(1, d) for d in dims) + vint(2, dtype) + ld(8, name)
    if dtype == INT64:
        raw = struct.pack('<%dq' % len(vals), *vals)
    elif dtype == FLOAT16:
        raw = struct.pack('<%de' % len(vals), *vals)
    else:
        raw = struct.pack('<%df' % len(vals), *vals)
    return body + ld(9, raw)


def attr_i(name, v):
    return ld(1, name) + vint(3, v) + vint(20, 2)


def attr_ints(name, vals):
    return ld(1, name) + b''.join(vint(8, v) for v in vals) + vint(20, 7)


def node(op, name, ins, outs, attrs=b''):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) +
            ld(3, name) + ld(4, op) + attrs)


def rnd(rng, n, scale):
    return [rng.uniform(-scale, scale) for _ in range(n)]


def model(nodes, inits, ins, outs, opset):
    g = b''.join(ld(1, n) for n in nodes) + ld(2, 'g')
    g += b''.join(ld(5, t) for t in inits)
    g += b''.join(ld(11, value_info(n, d)) for n, d in ins)
    g += b''.join(ld(12, value_info(n, d)) for n, d in outs)
    return vint(1, 8) + ld(8, vint(2, opset)) + ld(7, g)


def conv(rng, w_dtype=FLOAT, nan=False):
    w = rnd(rng, 4 * 3 * 3 * 3, 0.5)
    if nan:
        w[5] = float('nan')
    return ([node('Conv', 'conv', ['x', 'W', 'B'], ['c'], ld(5, attr_ints('pads', [1, 1, 1, 1])))],
            [tensor('W', [4, 3, 3, 3], w, w_dtype), tensor('B', [4], rnd(rng, 4, 0.2))])


def main_model(rng, w_dtype=FLOAT, nan=False):
    nodes, inits = conv(rng, w_dtype, nan)
    nodes += [
        node('Relu', 'relu', ['c'], ['r']),
        node('Add', 'add', ['r', 'K'], ['a']),
        node('Reshape', 'flat', ['a', 'shape'], ['f']),
        node('MatMul', 'mm', ['f', 'Wm'], ['m']),
        node('Sigmoid', 'sig', ['m'], ['s']),
        node('Concat', 'cat', ['m', 's'], ['out'], ld(5, attr_i('axis', 1))),
        node('Gemm', 'gemm', ['f', 'Wg', 'Bg'], ['g'], ld(5, attr_i('transB', 1))),
    ]
    inits += [tensor('K', [1, 4, 1, 1], rnd(rng, 4, 0.3)),
              tensor('shape', [2], [1, 256], INT64),
              tensor('Wm', [256, 10], rnd(rng, 2560, 0.1)),
              tensor('Wg', [10, 256], rnd(rng, 2560, 0.1)),
              tensor('Bg', [10], rnd(rng, 10, 0.2))]
    return model(nodes, inits, [('x', [1, 3, 8, 8])], [('out', [1, 20]), ('g', [1, 10])], 12)


def softmax_model(rng):
    nodes, inits = conv(rng)
    nodes.append(node('Softmax', 'softmax', ['c'], ['y'], ld(5, attr_i('axis', 1))))
    return model(nodes, inits, [('x', [1, 3, 8, 8])], [('y', [1, 4, 8, 8])], 12)


def exp_model(rng):
    nodes, inits = conv(rng)
    nodes += [node('Exp', 'exp', ['c'], ['e']), node('Mul', 'mul', ['e', 'c'], ['y'])]
    return model(nodes, inits, [('x', [1, 3, 8, 8])], [('y', [1, 4, 8, 8])], 13)


def bn_model(rng):
    w = tensor('Wc', [4, 3, 3, 3], rnd(rng, 108, 0.5))
    nodes = [node('Constant', 'wconst', [], ['W'], ld(5, ld(1, 'value') + ld(5, w) + vint(20, 4))),
             node('Conv', 'conv', ['x', 'W'], ['c'], ld(5, attr_ints('pads', [1, 1, 1, 1]))),
             node('BatchNormalization', 'bn', ['c', 'gamma', 'beta', 'mean', 'var'], ['b'],
                  ld(5, ld(1, 'epsilon') + key_f(2, 1e-3) + vint(20, 1))),
             node('Mul', 'mul', ['b', 'two'], ['m']),
             node('Add', 'add', ['shift', 'm'], ['a']),
             node('Relu', 'relu', ['a'], ['y'])]
    inits = [tensor('gamma', [4], [rng.uniform(0.5, 4) for _ in range(4)]),
             tensor('beta', [4], rnd(rng, 4, 0.5)),
             tensor('mean', [4], rnd(rng, 4, 0.3)),
             tensor('var', [4], [rng.uniform(0.01, 0.2) for _ in range(4)]),
             tensor('two', [], [2.0]),
             tensor('shift', [4, 1, 1], rnd(rng, 4, 0.5))]
    return model(nodes, inits, [('x', [1, 3, 8, 8])], [('y', [1, 4, 8, 8])], 13)


def attr_f(name, v):
    return ld(1, name) + key_f(2, v) + vint(20, 1)


def opset9_model(rng):
    nodes, inits = conv(rng)
    nodes += [
        node('Clip', 'clip', ['c'], ['r'], ld(5, attr_f('min', 0.0)) + ld(5, attr_f('max', 0.3))),
        node('Slice', 'slice', ['r'], ['s'], ld(5, attr_ints('starts', [1])) +
             ld(5, attr_ints('ends', [3])) + ld(5, attr_ints('axes', [1]))),
        node('Unsqueeze', 'unsq', ['s'], ['u'], ld(5, attr_ints('axes', [0]))),
        node('Squeeze', 'sq', ['u'], ['q'], ld(5, attr_ints('axes', [0]))),
        node('Flatten', 'flat', ['q'], ['f']),
        node('Softmax', 'softmax', ['f'], ['y']),
    ]
    return model(nodes, inits, [('x', [1, 3, 8, 8])], [('y', [1, 128])], 9)


def key_f(field, v):
    return key(field, 5) + struct.pack('<f', v)


kind, out = sys.argv[1], sys.argv[2]
rng = random.Random(1234)
build = {
    'main': lambda: main_model(rng),
    'softmax': lambda: softmax_model(rng),
    'exp': lambda: exp_model(rng),
    'bn': lambda: bn_model(rng),
    'opset9': lambda: opset9_model(rng),
    'nanweight': lambda: main_model(rng, nan=True),
    'fp16': lambda: main_model(rng, w_dtype=FLOAT16),
}[kind]
open(out, 'wb').write(build())
if len(sys.argv) > 3:
    sdir, count, seed = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    # an optional magnitude: 1e-30 makes a near-silent input whose scale
    # is too small for the Conv's bias in int32
    mag = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0
    srng = random.Random(seed)
    for i in range(count):
        d = os.path.join(sdir, 's%02d' % i)
        os.makedirs(d, exist_ok=True)
        npy_f32(os.path.join(d, 'x.npy'), rnd(srng, 3 * 8 * 8, mag), [1, 3, 8, 8])
