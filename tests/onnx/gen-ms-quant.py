#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One-node models of com.microsoft's quantized ops, with random 8-bit
inputs, for comparing libnpu's CPU kernels with onnxruntime itself.

    gen-ms-quant.py OUT_DIR [SEED]

writes OUT_DIR/<case>/model.onnx and OUT_DIR/<case>/in/<input>.npy for
every case, and OUT_DIR/cases.txt listing "<case> <op>" lines.  Scales
and zero points are initializers (as onnxruntime's optimizer writes
them; every zero point is given, as onnxruntime's type inference takes
the output's type from it); the data tensors are the graph's inputs.  The cases cover int8 and
uint8, broadcasting shapes of every kind onnxruntime's broadcast loop
tells apart (a scalar operand, a scalar innermost run, plain spans),
scales that make rounding ties (powers of two and ratios such as 3/2)
next to random ones, and every op's attributes.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'host', 'libnpu'))
from onnxpb import key, ld, vint  # noqa: E402

FLOAT, UINT8, INT8, INT32 = 1, 2, 3, 6
NPY = {UINT8: ('|u1', 'B'), INT8: ('|i1', 'b'), INT32: ('<i4', 'i'), FLOAT: ('<f4', 'f')}
RANGE = {UINT8: (0, 255), INT8: (-128, 127)}


def fixed32(field, value):
    return key(field, 5) + struct.pack('<f', value)


def tensor(name, elem, dims, vals):
    fmt = NPY[elem][1]
    body = b''.join(vint(1, d) for d in dims) + vint(2, elem) + ld(8, name)
    return body + ld(9, struct.pack('<%d%s' % (len(vals), fmt), *vals))


def value_info(name, elem, dims):
    shape = b''.join(ld(1, vint(1, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vint(1, elem) + ld(2, shape)))


def attr_i(name, v):
    return ld(1, name) + vint(3, v) + vint(20, 2)


def attr_f(name, v):
    return ld(1, name) + fixed32(2, v) + vint(20, 1)


def attr_ints(name, vs):
    return ld(1, name) + b''.join(vint(8, v) for v in vs) + vint(20, 7)


def attr_s(name, s):
    return ld(1, name) + ld(4, s) + vint(20, 3)


def model(op, inputs, out_elem, attrs, inits, graph_inputs):
    """@inputs: names ('' for an absent optional one)."""
    node = b''.join(ld(1, i) for i in inputs) + ld(2, 'y') + ld(3, 'n0') + ld(4, op)
    node += b''.join(ld(5, a) for a in attrs) + ld(7, 'com.microsoft')
    graph = ld(1, node) + ld(2, 'g')
    graph += b''.join(ld(5, t) for t in inits)
    graph += b''.join(ld(11, value_info(n, e, d)) for n, e, d in graph_inputs)
    graph += ld(12, ld(1, 'y') + ld(2, ld(1, vint(1, out_elem))))
    opsets = ld(8, ld(1, '') + vint(2, 13)) + ld(8, ld(1, 'com.microsoft') + vint(2, 1))
    return vint(1, 8) + ld(2, 'gen-ms-quant') + opsets + ld(7, graph)


def npy(path, elem, dims, vals):
    descr, fmt = NPY[elem]
    shape = ', '.join(str(d) for d in dims) + (',' if len(dims) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, shape)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%d%s' % (len(vals), fmt), *vals))


def count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


class Gen:
    def __init__(self, out, seed):
        self.out = out
        self.rng = random.Random(seed)
        self.cases = []

    def codes(self, elem, dims):
        lo, hi = RANGE[elem]
        return [self.rng.randint(lo, hi) for _ in range(count(dims))]

    def zp(self, elem):
        lo, hi = RANGE[elem]
        # the middle, an end, or anywhere
        return self.rng.choice([(lo + hi + 1) // 2, lo, hi, self.rng.randint(lo, hi)])

    def scale(self):
        # ties come from exact binary ratios; random ones from anywhere
        return self.rng.choice([0.5, 0.25, 1.0, 2.0, 0.75, 1.5, 3.0, 0.1, 0.02,
                                self.rng.uniform(0.001, 0.2),
                                self.rng.uniform(0.001, 0.2),
                                self.rng.uniform(0.01, 2.0)])

    def write(self, name, op, onnx, data):
        d = os.path.join(self.out, name)
        os.makedirs(os.path.join(d, 'in'), exist_ok=True)
        with open(os.path.join(d, 'model.onnx'), 'wb') as f:
            f.write(onnx)
        for n, e, dims, vals in data:
            npy(os.path.join(d, 'in', n + '.npy'), e, dims, vals)
        self.cases.append((name, op))

    def binary(self, op, idx, elem, a_dims, b_dims):
        sa, sb, sc = self.scale(), self.scale(), self.scale()
        names = ['A', 'a_s', 'a_z', 'B', 'b_s', 'b_z', 'c_s', 'c_z']
        inits = [tensor('a_s', FLOAT, [], [sa]), tensor('b_s', FLOAT, [], [sb]),
                 tensor('c_s', FLOAT, [], [sc]), tensor('a_z', elem, [], [self.zp(elem)]),
                 tensor('b_z', elem, [], [self.zp(elem)]), tensor('c_z', elem, [], [self.zp(elem)])]
        a, b = self.codes(elem, a_dims), self.codes(elem, b_dims)
        onnx = model(op, names, elem, [], inits, [('A', elem, a_dims), ('B', elem, b_dims)])
        self.write('%s-%d' % (op, idx), op, onnx, [('A', elem, a_dims, a), ('B', elem, b_dims, b)])

    def grid(self, op, idx, elem, params, form):
        """Every pair of codes, A along one axis and B along the other, laid
        out so that onnxruntime takes the form @form: 'a' (A is the scalar
        of each span), 'b' (B is) or 'general' (both A and B are spans)."""
        sa, sb, sc, za, zb, zc = params
        lo, hi = RANGE[elem]
        codes = list(range(lo, hi + 1))
        if form == 'a':
            a_dims, b_dims = [256, 1], [1, 256]
            a, b = codes, codes
        elif form == 'b':
            a_dims, b_dims = [1, 256], [256, 1]
            a, b = codes, codes
        else:
            a_dims = b_dims = [256, 256]
            a = [x for x in codes for _ in codes]
            b = [y for _ in codes for y in codes]
        names = ['A', 'a_s', 'a_z', 'B', 'b_s', 'b_z', 'c_s', 'c_z']
        inits = [tensor('a_s', FLOAT, [], [sa]), tensor('b_s', FLOAT, [], [sb]),
                 tensor('c_s', FLOAT, [], [sc]), tensor('a_z', elem, [], [za]),
                 tensor('b_z', elem, [], [zb]), tensor('c_z', elem, [], [zc])]
        onnx = model(op, names, elem, [], inits, [('A', elem, a_dims), ('B', elem, b_dims)])
        self.write('%s-%d' % (op, idx), op, onnx, [('A', elem, a_dims, a), ('B', elem, b_dims, b)])

    def lookup(self, op, idx, elem, dims, attrs):
        names = ['X', 'x_s', 'x_z', 'y_s', 'y_z']
        inits = [tensor('x_s', FLOAT, [], [self.scale()]),
                 tensor('x_z', elem, [], [self.zp(elem)]),
                 tensor('y_s', FLOAT, [], [self.rng.choice([1 / 256, 1 / 255, 0.004, 0.01,
                                                            self.scale()])]),
                 tensor('y_z', elem, [], [self.zp(elem)])]
        onnx = model(op, names, elem, attrs, inits, [('X', elem, dims)])
        x = list(range(RANGE[elem][0], RANGE[elem][1] + 1))  # every code once
        x += self.codes(elem, [count(dims) - len(x)])
        self.write('%s-%d' % (op, idx), op, onnx, [('X', elem, dims, x)])

    def concat(self, idx, elem, shapes, axis):
        names, inits, gins, data = ['y_s', 'y_z'], [], [], []
        ys, yz = self.scale(), self.zp(elem)
        inits += [tensor('y_s', FLOAT, [], [ys]), tensor('y_z', elem, [], [yz])]
        for k, dims in enumerate(shapes):
            same = k == 0  # one input is copied: its parameters are Y's
            names += ['x%d' % k, 's%d' % k, 'z%d' % k]
            inits += [tensor('s%d' % k, FLOAT, [], [ys if same else self.scale()]),
                      tensor('z%d' % k, elem, [], [yz if same else self.zp(elem)])]
            gins.append(('x%d' % k, elem, dims))
            data.append(('x%d' % k, elem, dims, self.codes(elem, dims)))
        onnx = model('QLinearConcat', names, elem, [attr_i('axis', axis)], inits, gins)
        self.write('QLinearConcat-%d' % idx, 'QLinearConcat', onnx, data)

    def pool(self, op, idx, elem, dims, attrs, x_scale=None, y_scale=None):
        names = ['X', 'x_s', 'x_z', 'y_s', 'y_z']
        inits = [tensor('x_s', FLOAT, [], [x_scale or self.scale()]),
                 tensor('y_s', FLOAT, [], [y_scale or self.scale()]),
                 tensor('x_z', elem, [], [self.zp(elem)]), tensor('y_z', elem, [], [self.zp(elem)])]
        onnx = model(op, names, elem, attrs, inits, [('X', elem, dims)])
        self.write('%s-%d' % (op, idx), op, onnx, [('X', elem, dims, self.codes(elem, dims))])

    def softmax(self, idx, elem, dims, opset, axis):
        names = ['X', 'x_s', 'x_z', 'y_s', 'y_z']
        y_zp = 0 if elem == UINT8 else -128
        inits = [tensor('x_s', FLOAT, [], [self.rng.choice([0.05, 0.1, 0.25,
                                                            self.rng.uniform(0.01, 0.3)])]),
                 tensor('x_z', elem, [], [self.zp(elem)]),
                 tensor('y_s', FLOAT, [], [1 / 256 if dims[-1] == 1 else
                                           self.rng.choice([1 / 256, 1 / 255, 0.01])]),
                 tensor('y_z', elem, [], [y_zp])]
        attrs = [attr_i('opset', opset)] + ([attr_i('axis', axis)] if axis is not None else [])
        onnx = model('QLinearSoftmax', names, elem, attrs, inits, [('X', elem, dims)])
        self.write('QLinearSoftmax-%d' % idx, 'QLinearSoftmax', onnx,
                   [('X', elem, dims, self.codes(elem, dims))])

    def qgemm(self, idx, a_elem, b_elem, M, N, K, trans_a, trans_b, per_column, bias, out_q,
              alpha):
        a_dims = [K, M] if trans_a else [M, K]
        b_dims = [N, K] if trans_b else [K, N]
        nb = N if per_column else 1
        names = ['A', 'a_s', 'a_z', 'B', 'b_s', 'b_z', 'C' if bias else '',
                 'y_s' if out_q else '', 'y_z' if out_q else '']
        inits = [tensor('a_s', FLOAT, [], [self.rng.uniform(0.005, 0.05)]),
                 tensor('a_z', a_elem, [], [self.zp(a_elem)]),
                 tensor('b_s', FLOAT, [nb] if per_column else [],
                        [self.rng.uniform(0.001, 0.02) for _ in range(nb)]),
                 tensor('b_z', b_elem, [nb] if per_column else [],
                        [self.zp(b_elem) if b_elem == UINT8 or a_elem == INT8 else
                         self.rng.randint(-64, 63) for _ in range(nb)])]
        if bias:
            inits.append(tensor('C', INT32, [N], [self.rng.randint(-20000, 20000)
                                                  for _ in range(N)]))
        if out_q:
            inits += [tensor('y_s', FLOAT, [], [self.rng.uniform(0.05, 0.5)]),
                      tensor('y_z', a_elem, [], [self.zp(a_elem)])]
        attrs = [attr_i('transA', int(trans_a)), attr_i('transB', int(trans_b)),
                 attr_f('alpha', alpha)]
        gins = [('A', a_elem, a_dims), ('B', b_elem, b_dims)]
        onnx = model('QGemm', names, a_elem if out_q else FLOAT, attrs, inits, gins)
        # uint8 A with int8 B: 7-bit weights, as onnxruntime's quantizer
        # writes them (reduce_range) because its x86 kernel without VNNI
        # saturates a pair of products at int16 (see ok_quant_ms_gemm.c)
        if a_elem == UINT8 and b_elem == INT8:
            b = [self.rng.randint(-64, 63) for _ in range(count(b_dims))]
        else:
            b = self.codes(b_elem, b_dims)
        self.write('QGemm-%d' % idx, 'QGemm', onnx,
                   [('A', a_elem, a_dims, self.codes(a_elem, a_dims)),
                    ('B', b_elem, b_dims, b)])


def main():
    out = sys.argv[1]
    g = Gen(out, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    # every kind of span onnxruntime's broadcast loop tells apart
    shapes = [([2, 3, 40], [2, 3, 40]), ([2, 3, 40], [40]), ([2, 3, 40], [3, 1]),
              ([3, 1], [2, 3, 40]), ([], [5, 37]), ([5, 37], []), ([1], [4, 33]),
              ([4, 1, 7], [1, 6, 1]), ([2, 1], [1]), ([1, 1], [1, 1]), ([300], [300]),
              ([6, 1, 1], [6, 8, 9])]
    i = 0
    for op in ('QLinearAdd', 'QLinearMul'):
        for elem in (UINT8, INT8):
            for a, b in shapes:
                g.binary(op, i, elem, a, b)
                i += 1
    # every pair of codes, under scales whose sums land next to ties
    # (the first two are such that the folded and the fused forms of
    # QLinearAdd round some pairs differently) and random ones
    params = [(0.324, 0.462, 0.516, 82, 204, 44), (0.057, 0.518, 0.288, 55, 126, 18)]
    params += [(g.rng.uniform(0.01, 1), g.rng.uniform(0.01, 1), g.rng.uniform(0.01, 1),
                g.rng.randint(0, 255), g.rng.randint(0, 255), g.rng.randint(0, 255))
               for _ in range(2)]
    for op in ('QLinearAdd', 'QLinearMul'):
        for k, p in enumerate(params):
            elem = UINT8 if k % 2 == 0 else INT8
            if elem == INT8:
                p = p[:3] + tuple(z - 128 for z in p[3:])
            for form in ('a', 'b', 'general'):
                g.grid(op, i, elem, p, form)
                i += 1
    for elem in (UINT8, INT8):
        for k in range(6):
            g.lookup('QLinearSigmoid', i, elem, [2, 200], [])
            i += 1
            g.lookup('QLinearLeakyRelu', i, elem, [2, 200],
                     [attr_f('alpha', g.rng.choice([0.01, 0.1, 0.2, 0.3333]))])
            i += 1
        g.concat(i, elem, [[2, 3, 4], [2, 5, 4], [2, 1, 4]], 1)
        g.concat(i + 1, elem, [[3, 7], [3, 2]], -1)
        g.concat(i + 2, elem, [[4, 2], [1, 2], [3, 2], [2, 2]], 0)
        i += 3
        for dims, cl in (([1, 8, 7, 7], 0), ([2, 3, 5, 5], 0), ([1, 6, 6, 4], 1),
                         ([2, 4, 100], 0), ([1, 3, 4, 4, 4], 0)):
            image = count(dims[1:-1] if cl else dims[2:])
            # a multiplier x_s / (y_s * image) inside MLAS's range
            g.pool('QLinearGlobalAveragePool', i, elem, dims, [attr_i('channels_last', cl)],
                   x_scale=g.rng.uniform(0.01, 0.1), y_scale=g.rng.uniform(0.005, 0.05))
            i += 1
        for dims, attrs in (
                ([1, 3, 9, 9], [attr_ints('kernel_shape', [3, 3])]),
                ([2, 2, 8, 8], [attr_ints('kernel_shape', [2, 2]), attr_ints('strides', [2, 2])]),
                ([1, 4, 7, 7], [attr_ints('kernel_shape', [3, 3]),
                                attr_ints('pads', [1, 1, 1, 1])]),
                ([1, 4, 7, 7], [attr_ints('kernel_shape', [3, 3]), attr_ints('pads', [1, 1, 1, 1]),
                                attr_i('count_include_pad', 1)]),
                ([1, 2, 10, 10], [attr_ints('kernel_shape', [3, 2]), attr_ints('strides', [2, 3]),
                                  attr_i('ceil_mode', 1)]),
                ([1, 3, 6, 6], [attr_ints('kernel_shape', [3, 3]), attr_s('auto_pad', 'SAME_UPPER')]),
                ([1, 3, 20], [attr_ints('kernel_shape', [4]), attr_ints('strides', [3])]),
                ([1, 2, 5, 5, 5], [attr_ints('kernel_shape', [2, 2, 2])]),
                ([1, 7, 7, 5], [attr_ints('kernel_shape', [3, 3]), attr_i('channels_last', 1),
                                attr_ints('pads', [1, 0, 1, 0])]),
                ([1, 5, 4, 4], [attr_ints('kernel_shape', [4, 4])])):
            g.pool('QLinearAveragePool', i, elem, dims, attrs)
            i += 1
    for elem in (UINT8, INT8):
        for dims, opset, axis in (([4, 10], 13, None), ([3, 5, 6], 13, 1), ([2, 3, 4], 12, None),
                                  ([2, 3, 4], 12, 2), ([2, 3, 4], 12, 1), ([1, 1000], 13, -1),
                                  ([5, 2], 13, 0), ([6, 1], 13, -1)):
            g.softmax(i, elem, dims, opset, axis)
            i += 1
    for a_elem, b_elem in ((UINT8, UINT8), (UINT8, INT8), (INT8, INT8)):
        for M, N, K, ta, tb, pc, bias, oq, alpha in (
                (4, 5, 6, 0, 0, 0, 1, 1, 1.0), (7, 3, 33, 1, 0, 1, 1, 1, 1.0),
                (3, 8, 17, 0, 1, 1, 0, 1, 0.5), (5, 6, 64, 1, 1, 0, 1, 0, 1.0),
                (2, 9, 20, 0, 0, 1, 0, 0, 2.0)):
            g.qgemm(i, a_elem, b_elem, M, N, K, ta, tb, pc, bias, oq, alpha)
            i += 1
    with open(os.path.join(out, 'cases.txt'), 'w') as f:
        for name, op in g.cases:
            f.write('%s %s\n' % (name, op))


if __name__ == '__main__':
    main()
