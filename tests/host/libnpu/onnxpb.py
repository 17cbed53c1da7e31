# SPDX-License-Identifier: MIT
# A hand-rolled protobuf encoder for the few ONNX messages the host tests'
# model generators write (gen-*-onnx.py), and a float32 .npy writer: no
# onnx or numpy module is needed.
import struct


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


def value_info(name, dims, elem_type=1):
    """A tensor ValueInfoProto of shape @dims (elem_type 1: FLOAT)."""
    shape = b''.join(ld(1, vint(1, d)) for d in dims)
    tensor = vint(1, elem_type) + ld(2, shape)
    return ld(1, name) + ld(2, ld(1, tensor))


def npy(path, vals, dims, descr='<f4'):
    """@vals as a .npy of @descr: '<f4' float32, '<f2' float16."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr,
        ', '.join(str(d) for d in dims) + (',' if len(dims) == 1 else ''))
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%d%s' % (len(vals), {'<f4': 'f', '<f2': 'e'}[descr]), *vals))


def npy_f32(path, vals, dims):
    npy(path, vals, dims)
