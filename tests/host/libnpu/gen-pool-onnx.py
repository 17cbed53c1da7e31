#!/usr/bin/env python3
# A one-node ONNX model, MaxPool with a K x K window over X [1,64,1,1]
# padded to one output pixel, written with a hand-rolled protobuf encoder
# (no onnx module needed), and its input as .npy.  Usage: K OUT.onnx IN.npy
import struct, sys

def varint(n):
    out = b''
    n &= (1 << 64) - 1
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
    tensor = vint(1, 1) + ld(2, shape)          # FLOAT, shape
    return ld(1, name) + ld(2, ld(1, tensor))

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

hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 64, 1, 1), }"
hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
with open(sys.argv[3], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
    f.write(struct.pack('<64f', *[(i % 13) - 6.0 for i in range(64)]))
