#!/usr/bin/env python3
# QDQ models as onnxruntime's quantize_static writes them (Quantize/
# DequantizeLinear around Conv, MatMul and Gemm; int8 weights per output
# channel with only a DequantizeLinear; an int32 bias in scale
# x_scale * w_scale), with random weights and input, for comparing
# libnpu's fused integer ops with onnxruntime's.  Usage:
#   gen-qdq-onnx.py KIND SEED OUT.onnx IN.npy
# KIND: conv (3x3, pads 1, per-channel, int8 activations), conv-u8 (uint8
# activations, per-tensor weights, stride 2), depthwise (groups = C),
# convt (ConvTranspose, stride 2, per-channel W along axis 1),
# matmul (3-D A times per-column B), attn (x times its transpose, both
# activations), gemm (transB, bias), chain (Conv,
# Relu, MaxPool, Add of a second branch, Sigmoid, GlobalAveragePool, each
# between its own Quantize/DequantizeLinear pairs), pad (BlazeFace's
# channel padding: a Concat with dequantized constant zeros, then a
# Transpose, each between Quantize/DequantizeLinear), tie and tie-shared
# (a 1x1 Conv of one channel whose input codes are picked so that the
# exact integer product and the float one round to different codes: the
# input read by the Conv alone, which onnxruntime fuses into QLinearConv,
# or also by a second node, which it does not, see tie_inputs()), softmax
# and add (DequantizeLinear -> Softmax or Add -> QuantizeLinear, which
# onnxruntime runs as its com.microsoft QLinearSoftmax and QLinearAdd).
import os
import random
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import ld, npy_f32, value_info, vint  # noqa: E402

FLOAT, UINT8, INT8, INT32 = 1, 2, 3, 6


def tensor(name, dt, dims, vals):
    fmt = {FLOAT: 'f', UINT8: 'B', INT8: 'b', INT32: 'i'}[dt]
    raw = struct.pack('<%d%s' % (len(vals), fmt), *vals)
    return b''.join(vint(1, d) for d in dims) + vint(2, dt) + ld(8, name) + ld(9, raw)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def attr_i(name, v):
    return ld(1, name) + vint(3, v) + vint(20, 2)


def attr_ints(name, vals):
    return ld(1, name) + b''.join(vint(8, v) for v in vals) + vint(20, 7)


def node(ins, outs, op, name, attrs=()):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) +
            ld(3, name) + ld(4, op) + b''.join(ld(5, a) for a in attrs))


kind, seed, out_onnx, out_npy = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = random.Random(seed)
u8 = kind == 'conv-u8'
adt = UINT8 if u8 else INT8
inits, nodes = [], []
outputs = []


def qparams(prefix, lo, hi):
    """quantize_static's asymmetric parameters for the range [lo, hi]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    qmin, qmax = (0, 255) if u8 else (-128, 127)
    scale = f32((hi - lo) / (qmax - qmin))
    zp = int(round(qmin - lo / scale))
    inits.append(tensor(prefix + '_scale', FLOAT, [], [scale]))
    inits.append(tensor(prefix + '_zero_point', adt, [], [zp]))
    return scale


def qdq(t, lo, hi):
    """Q then DQ of activation @t: returns the dequantized name and scale."""
    s = qparams(t, lo, hi)
    nodes.append(node([t, t + '_scale', t + '_zero_point'], [t + '_q'], 'QuantizeLinear',
                      t + '_Q'))
    nodes.append(node([t + '_q', t + '_scale', t + '_zero_point'], [t + '_dq'],
                      'DequantizeLinear', t + '_DQ'))
    return t + '_dq', s


def weights(name, dims, axis, per_channel, xs, bias):
    n = dims[axis]
    w = [rng.uniform(-1, 1) for _ in range(eval('*'.join(map(str, dims))))]
    chans = n if per_channel else 1
    stride = 1
    for d in dims[axis + 1:]:
        stride *= d
    mx = [0.0] * chans
    for i, v in enumerate(w):
        c = (i // stride) % n if per_channel else 0
        mx[c] = max(mx[c], abs(v))
    scales = [f32(m / 127.0) for m in mx]
    q = [max(-127, min(127, round(v / scales[(i // stride) % n if per_channel else 0])))
         for i, v in enumerate(w)]
    inits.append(tensor(name + '_quantized', INT8, dims, q))
    sdims = [chans] if per_channel else []
    inits.append(tensor(name + '_scale', FLOAT, sdims, scales))
    inits.append(tensor(name + '_zero_point', INT8, sdims, [0] * chans))
    attrs = [attr_i('axis', axis)] if per_channel else []
    nodes.append(node([name + '_quantized', name + '_scale', name + '_zero_point'],
                      [name + '_dq'], 'DequantizeLinear', name + '_DQ', attrs))
    if not bias:
        return name + '_dq', None
    bs = [f32(xs * scales[c if per_channel else 0]) for c in range(n)]
    b = [round(rng.uniform(-0.5, 0.5) / s) for s in bs]
    inits.append(tensor(name + '_bias_quantized', INT32, [n], b))
    inits.append(tensor(name + '_bias_scale', FLOAT, [n], bs))
    inits.append(tensor(name + '_bias_zero_point', INT32, [n], [0] * n))
    nodes.append(node([name + '_bias_quantized', name + '_bias_scale', name + '_bias_zero_point'],
                      [name + '_bias_dq'], 'DequantizeLinear', name + '_bias_DQ',
                      [attr_i('axis', 0)]))
    return name + '_dq', name + '_bias_dq'


def tie_inputs(n, xs, ys):
    """@n inputs for the tie models: codes whose product with some channel's
    weight rounds one way as onnxruntime's QLinearConv computes it (the
    exact integer times the float multiplier x_scale * w_scale / y_scale,
    half to even) and the other way as its float Conv does (dequantized x
    times dequantized w, divided by y_scale), in binary32 step by step."""
    ws, wq = tie_weights['scales'], tie_weights['q']
    m = [f32(f32(xs * s) / ys) for s in ws]

    def differs(q):
        for c, w in enumerate(wq):
            exact = round(f32(float(q * w) * m[c]))
            flt = round(f32(f32(f32(q * xs) * f32(w * ws[c])) / ys))
            if exact != flt:
                return True
        return False
    ties = [q for q in range(-128, 128) if differs(q)]
    if not ties:
        sys.exit('gen-qdq-onnx.py: no input code rounds differently; change the seed')
    codes = [ties[i % len(ties)] for i in range(n)]
    return [f32(q * xs) for q in codes]


tie_weights = {}
if kind in ('conv', 'conv-u8', 'depthwise'):
    c, co = (8, 8) if kind == 'depthwise' else (3, 6)
    xdims, ydims = [1, c, 9, 9], None
    xd, xs = qdq('x', -1.0, 1.0)
    wdims = [co, 1 if kind == 'depthwise' else c, 3, 3]
    wd, bd = weights('w', wdims, 0, not u8, xs, True)
    attrs = [attr_ints('pads', [1, 1, 1, 1]), attr_ints('kernel_shape', [3, 3])]
    if u8:
        attrs.append(attr_ints('strides', [2, 2]))
    if kind == 'depthwise':
        attrs.append(attr_i('group', c))
    nodes.append(node([xd, wd, bd], ['y'], 'Conv', 'conv', attrs))
    o = 5 if u8 else 9
    ydims = [1, co, o, o]
elif kind == 'convt':
    xdims, ydims = [1, 4, 5, 5], [1, 6, 11, 11]
    xd, xs = qdq('x', -1.0, 1.0)
    wd, bd = weights('w', [4, 6, 3, 3], 1, True, xs, True)
    nodes.append(node([xd, wd, bd], ['y'], 'ConvTranspose', 'convt',
                      [attr_ints('strides', [2, 2]), attr_ints('pads', [1, 1, 0, 0]),
                       attr_ints('output_padding', [1, 1])]))
elif kind == 'chain':
    xdims, ydims = [1, 4, 8, 8], [1, 4, 1, 1]
    xd, xs = qdq('x', -1.0, 1.0)
    wd, bd = weights('w', [4, 4, 3, 3], 0, True, xs, True)
    nodes.append(node([xd, wd, bd], ['c'], 'Conv', 'conv',
                      [attr_ints('pads', [1, 1, 1, 1])]))
    cd, cs = qdq('c', -3.0, 3.0)
    nodes.append(node([cd], ['r'], 'Relu', 'relu'))
    rd, _ = qdq('r', 0.0, 3.0)
    nodes.append(node([rd], ['p'], 'MaxPool', 'pool',
                      [attr_ints('kernel_shape', [2, 2]), attr_ints('pads', [0, 0, 1, 1]),
                       attr_ints('strides', [1, 1])]))
    pd, _ = qdq('p', 0.0, 3.0)
    nodes.append(node([pd, xd], ['a'], 'Add', 'add'))
    ad, _ = qdq('a', -2.0, 4.0)
    nodes.append(node([ad], ['s'], 'Sigmoid', 'sigmoid'))
    sd, _ = qdq('s', 0.0, 1.0)
    nodes.append(node([sd], ['y'], 'GlobalAveragePool', 'gap'))
elif kind == 'attn':
    xdims, ydims = [2, 6, 8], [2, 6, 6]
    xd, xs = qdq('x', -1.0, 1.0)
    nodes.append(node(['x'], ['xt'], 'Transpose', 'xt', [attr_ints('perm', [0, 2, 1])]))
    td, _ = qdq('xt', -1.0, 1.0)
    nodes.append(node([xd, td], ['y'], 'MatMul', 'attn'))
elif kind == 'pad':
    xdims, ydims = [1, 4, 6, 6], [1, 6, 6, 6]
    xd, xs = qdq('x', -1.0, 1.0)
    inits.append(tensor('zeros_quantized', adt, [1, 2, 6, 6], [5] * 72))
    inits.append(tensor('zeros_scale', FLOAT, [], [0.01]))
    inits.append(tensor('zeros_zero_point', adt, [], [5]))
    nodes.append(node(['zeros_quantized', 'zeros_scale', 'zeros_zero_point'], ['zeros_dq'],
                      'DequantizeLinear', 'zeros_DQ'))
    nodes.append(node([xd, 'zeros_dq'], ['p'], 'Concat', 'pad', [attr_i('axis', 1)]))
    pd, _ = qdq('p', -1.5, 1.0)
    nodes.append(node([pd], ['y'], 'Transpose', 'nhwc', [attr_ints('perm', [0, 2, 3, 1])]))
elif kind in ('tie', 'tie-shared'):
    co = 4
    xdims, ydims = [1, 1, 8, 8], [1, co, 8, 8]
    xd, xs = qdq('x', -1.0, 1.0)
    # w_scale with x_scale * w_scale / y_scale exactly 1/2 in binary32 (y's
    # range is [-4, 4], see below): an odd product is a tie for the exact
    # integer sum, which the float one misses by an ulp either way
    ys = f32(8.0 / 255)
    w_scale = f32(ys / (2 * xs))
    while f32(f32(xs * w_scale) / ys) != 0.5:
        w_scale = f32(w_scale * (1 + 2 ** -24))
    wq = [rng.choice([-1, 1]) * rng.randrange(1, 128, 2) for _ in range(co)]
    tie_weights.update(scales=[w_scale] * co, q=wq)
    inits.append(tensor('w_quantized', INT8, [co, 1, 1, 1], wq))
    inits.append(tensor('w_scale', FLOAT, [co], [w_scale] * co))
    inits.append(tensor('w_zero_point', INT8, [co], [0] * co))
    nodes.append(node(['w_quantized', 'w_scale', 'w_zero_point'], ['w_dq'],
                      'DequantizeLinear', 'w_DQ', [attr_i('axis', 0)]))
    nodes.append(node([xd, 'w_dq'], ['y'], 'Conv', 'conv'))
    if kind == 'tie-shared':
        # a second reader of x's DequantizeLinear: onnxruntime gives each
        # reader its own copy, and the QuantizeLinear read by two stays int8
        nodes.append(node([xd], ['xout'], 'Identity', 'xout'))
        outputs.append(('xout', xdims))
elif kind == 'softmax':
    xdims, ydims = [4, 3, 10], [4, 3, 10]
    xd, xs = qdq('x', -4.0, 4.0)
    nodes.append(node([xd], ['y'], 'Softmax', 'softmax', [attr_i('axis', -1)]))
elif kind == 'add':
    # x quantized twice, so that both Adds' operands are their own QuantizeLinear's
    xdims, ydims = [1, 4, 6, 6], [1, 4, 6, 6]
    xd, xs = qdq('x', -1.0, 1.0)
    nodes.append(node(['x'], ['x2'], 'Identity', 'x2'))
    x2d, _ = qdq('x2', -0.7, 1.3)
    nodes.append(node([xd, x2d], ['y'], 'Add', 'add'))
elif kind == 'matmul':
    xdims, ydims = [2, 5, 16], [2, 5, 8]
    xd, xs = qdq('x', -1.0, 1.0)
    wd, _ = weights('w', [16, 8], 1, True, xs, False)
    nodes.append(node([xd, wd], ['y'], 'MatMul', 'matmul'))
elif kind == 'gemm':
    xdims, ydims = [4, 16], [4, 8]
    xd, xs = qdq('x', -1.0, 1.0)
    wd, bd = weights('w', [8, 16], 0, True, xs, True)
    nodes.append(node([xd, wd, bd], ['y'], 'Gemm', 'gemm', [attr_i('transB', 1)]))
else:
    sys.exit('unknown kind ' + kind)

yd, ys = qdq('y', *((0.0, 1.0) if kind == 'softmax' else (-4.0, 4.0)))
nodes.append(node([yd], ['out'], 'Identity', 'out'))
outputs.insert(0, ('out', ydims))
graph = (b''.join(ld(1, n) for n in nodes) + ld(2, 'qdq') +
         b''.join(ld(5, t) for t in inits) + ld(11, value_info('x', xdims)) +
         b''.join(ld(12, value_info(o, d)) for o, d in outputs))
model = vint(1, 8) + ld(8, vint(2, 13)) + ld(7, graph)
open(out_onnx, 'wb').write(model)
n = 1
for d in xdims:
    n *= d
if kind.startswith('tie'):
    npy_f32(out_npy, tie_inputs(n, xs, ys), xdims)
else:
    npy_f32(out_npy, [rng.uniform(-1, 1) for _ in range(n)], xdims)
