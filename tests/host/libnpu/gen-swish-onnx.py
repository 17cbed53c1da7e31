#!/usr/bin/env python3
# A one-node ONNX model using the custom op com.example::Swish (beta 1.5)
# of Documentation/custom-ops.rst, written with a hand-rolled protobuf
# encoder (no onnx module needed), its input and the output the op's
# formula gives, as .npy.  Usage: OUT.onnx IN.npy WANT.npy
import math, struct, sys

def varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def key(field, wire):
    return varint(field << 3 | wire)

def vint(field, n):
    return key(field, 0) + varint(n)

def ld(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data

def value_info(name, dims):
    shape = b''.join(ld(1, vint(1, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vint(1, 1) + ld(2, shape)))

def npy(path, vals, dims):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ', '.join(str(d) for d in dims) + (',' if len(dims) == 1 else ''))
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%df' % len(vals), *vals))

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
npy(sys.argv[2], x, [2, 3])
want = [struct.unpack('<f', struct.pack('<f', v))[0] for v in x]
npy(sys.argv[3], [v / (1 + math.exp(-beta * v)) for v in want], [2, 3])
