#!/usr/bin/env python3
# Loop and Scan models for npu-run-tests.sh, written with the hand-rolled
# protobuf encoder (no onnx module needed).  Usage:
#   gen-loop-onnx.py KIND OUT.onnx X.npy [Y.npy S.npy]
# KIND loop: a Loop of 70 iterations (more than one Concat stacks: the
# scan output is built in levels) adding a body initializer to a
# carried value; Y.npy and S.npy hold the final value and the stacked
# scan output, computed here in binary32.  scan: a Scan (opset 11) over
# axis 1 of X, backwards, summing into a state, its scan output stacked
# along axis 1.  budget: 4,096 iterations of a 20-node body, past what
# import unrolls.  runtime-cond: a Loop whose condition depends on the
# carried value.  nested: a Loop inside the body.  The last three are
# refused, each with its reason.
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnxpb import ld, npy, value_info, vint  # noqa: E402

FLOAT, INT64, BOOL = 1, 7, 9
N = 4


def f32(v):
    return struct.unpack('<f', struct.pack('<f', v))[0]


def tensor(name, dt, dims, vals):
    fmt = {FLOAT: 'f', INT64: 'q', BOOL: '?'}[dt]
    return (b''.join(vint(1, d) for d in dims) + vint(2, dt) + ld(8, name) +
            ld(9, struct.pack('<%d%s' % (len(vals), fmt), *vals)))


def attr_i(name, v):
    return ld(1, name) + vint(3, v) + vint(20, 2)


def attr_ints(name, vals):
    return ld(1, name) + b''.join(vint(8, v) for v in vals) + vint(20, 7)


def attr_graph(name, g):
    return ld(1, name) + ld(6, g) + vint(20, 5)


def node(ins, outs, op, attrs=()):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) +
            ld(3, outs[0] + '_node' if outs else op) + ld(4, op) +
            b''.join(ld(5, a) for a in attrs))


def graph(name, nodes, inits, ins, outs):
    return (b''.join(ld(1, n) for n in nodes) + ld(2, name) + b''.join(ld(5, t) for t in inits) +
            b''.join(ld(11, v) for v in ins) + b''.join(ld(12, v) for v in outs))


def loop_body(extra_nodes=(), cond_from_value=False, relus=0):
    nodes = [node(['v_in', 'c'], ['v_out'], 'Add'), node(['v_out'], ['scan_out'], 'Identity')]
    if cond_from_value:
        nodes += [node(['v_in'], ['total'], 'ReduceSum', [attr_i('keepdims', 0)]),
                  node(['total', 'limit'], ['cond_out'], 'Less')]
    else:
        nodes.append(node(['cond_in'], ['cond_out'], 'Identity'))
    src = 'scan_out'
    for k in range(relus):
        nodes.append(node([src], ['relu%d' % k], 'Relu'))
        src = 'relu%d' % k
    nodes += list(extra_nodes)
    inits = [tensor('c', FLOAT, [N], [0.5, -0.25, 1.0, 0.125]), tensor('limit', FLOAT, [], [100.0])]
    ins = [value_info('iter', [], INT64), value_info('cond_in', [], BOOL), value_info('v_in', [N])]
    outs = [value_info('cond_out', [], BOOL), value_info('v_out', [N]), value_info(src, [N])]
    return graph('body', nodes, inits, ins, outs)


def loop_model(trips, body):
    nodes = [node(['M', '', 'x'], ['y', 's'], 'Loop', [attr_graph('body', body)])]
    g = graph('loop', nodes, [tensor('M', INT64, [], [trips])], [value_info('x', [N])],
              [value_info('y', [N]), value_info('s', [trips, N])])
    return vint(1, 8) + ld(7, g) + ld(8, ld(1, '') + vint(2, 13))


kind, out = sys.argv[1], sys.argv[2]
x = [1.0, 2.0, -3.0, 0.75]
if kind == 'loop':
    model = loop_model(70, loop_body())
elif kind == 'budget':
    model = loop_model(4096, loop_body(relus=19))
elif kind == 'runtime-cond':
    model = loop_model(8, loop_body(cond_from_value=True))
elif kind == 'nested':
    inner = graph('inner', [node(['ci'], ['co'], 'Identity')], [],
                  [value_info('i2', [], INT64), value_info('ci', [], BOOL)],
                  [value_info('co', [], BOOL)])
    model = loop_model(3, loop_body([node(['M2', ''], [], 'Loop', [attr_graph('body', inner)])]))
elif kind == 'scan':
    body = graph('body', [node(['sum_in', 'next'], ['sum_out'], 'Add'),
                          node(['sum_out'], ['scan_out'], 'Identity')], [],
                 [value_info('sum_in', [2]), value_info('next', [2])],
                 [value_info('sum_out', [2]), value_info('scan_out', [2])])
    nodes = [node(['init', 'xs'], ['y', 's'], 'Scan',
                  [attr_graph('body', body), attr_i('num_scan_inputs', 1),
                   attr_ints('scan_input_axes', [1]), attr_ints('scan_input_directions', [1]),
                   attr_ints('scan_output_axes', [1])])]
    g = graph('scan', nodes, [tensor('init', FLOAT, [2], [0.0, 0.0])],
              [value_info('xs', [2, 3])], [value_info('y', [2]), value_info('s', [2, 3])])
    model = vint(1, 8) + ld(7, g) + ld(8, ld(1, '') + vint(2, 11))
else:
    sys.exit('gen-loop-onnx.py: KIND is loop, scan, budget, runtime-cond or nested')
with open(out, 'wb') as f:
    f.write(model)

if kind == 'scan':
    xs = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0]
    npy(sys.argv[3], xs, [2, 3])
    # backwards along axis 1: columns 2, 1, 0; outputs stacked along axis 1
    acc, cols = [0.0, 0.0], {}
    for t, col in enumerate((2, 1, 0)):
        acc = [f32(acc[r] + xs[r * 3 + col]) for r in range(2)]
        cols[t] = acc
    if len(sys.argv) > 5:
        npy(sys.argv[4], acc, [2])
        npy(sys.argv[5], [cols[t][r] for r in range(2) for t in range(3)], [2, 3])
else:
    npy(sys.argv[3], x, [N])
    if kind == 'loop' and len(sys.argv) > 5:
        c = [0.5, -0.25, 1.0, 0.125]
        v, rows = x, []
        for _ in range(70):
            v = [f32(a + b) for a, b in zip(v, c)]
            rows += v
        npy(sys.argv[4], v, [N])
        npy(sys.argv[5], rows, [70, N])
