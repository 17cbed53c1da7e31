#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""uint8 QDQ units whose arithmetic onnxruntime's CPU provider fixes when
it fuses them, the first three cut from ppocr-rec-int8 (npu-quantize
--activation uint8), and whether libnpu's importer computes what
onnxruntime does.

    qdq-hR-ort-units.py NPU_RUN [ORT_MODULES]

TAP on stdout; needs node with onnxruntime-node (make models installs it
into ~/.cache/vnpu/models/ort/node_modules) and Debian's python3-onnx.
At graph optimization level 'extended' onnxruntime turns each unit into
a com.microsoft op, rounding as that op's kernel does:

  gap     QLinearGlobalAveragePool: the integer sum of (q - zp) times
          x_scale / (y_scale * (float)N), rounded half to even, plus the
          output zero point (MLAS qlgavgpool.cpp).  A float mean rounds
          the other way near a tie (ppocr-rec: 33.49996 steps exact,
          33.50023 in float).
  avgpool QLinearAveragePool: the float mean of x_scale * (q - zp), then
          nearbyintf(y / y_scale + zero_point): the zero point is added
          before rounding, so with an odd zero point every tie rounds
          the other way from QuantizeLinear's (ppocr-rec's 3x2 pool:
          42,456 of 467,040 outputs).
  addc    QLinearAdd of an activation and a constant (a DequantizeLinear
          of an initializer: HardSwish's +3, a bias): onnxruntime fuses
          it as it does two activations, two fused multiply-adds of the
          codes; x + 3 at x = 0 is exactly 127.5 steps, which its
          arithmetic makes 127.49999 (127).

and AveragePool as the importer lowers it otherwise: padded windows
counting the padding or not (a POOL2D with the same arithmetic), a window
over the whole image (onnxruntime computes that as the global pool),
ceil_mode (the com.microsoft kernel, not the device), and an int8 unit,
which onnxruntime on x86-64 does not fuse.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

U8 = TensorProto.UINT8


def qparams(g, name, scale, zp):
    g['init'] += [numpy_helper.from_array(np.array(scale, np.float32), name + '_s'),
                  numpy_helper.from_array(np.array(zp, np.uint8), name + '_z')]
    return [name + '_s', name + '_z']


def unit_model(op_nodes, x_shape, xq, yq, extra_init=()):
    """x (uint8) -> DequantizeLinear -> op_nodes (reading 'xf', writing 'yf')
    -> QuantizeLinear -> DequantizeLinear -> out (float: equal bytes are
    equal codes)."""
    g = {'init': list(extra_init)}
    nodes = [helper.make_node('DequantizeLinear', ['x'] + qparams(g, 'x', *xq), ['xf'])]
    nodes += op_nodes
    yp = qparams(g, 'y', *yq)
    nodes += [helper.make_node('QuantizeLinear', ['yf'] + yp, ['yq']),
              helper.make_node('DequantizeLinear', ['yq'] + yp, ['out'])]
    graph = helper.make_graph(nodes, 'unit', [helper.make_tensor_value_info('x', U8, x_shape)],
                              [helper.make_tensor_value_info('out', TensorProto.FLOAT, None)],
                              g['init'])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 7
    return model


# Units libnpu does not compute as onnxruntime does, each with its reason
# (not ok # TODO); none now.
KNOWN = {}


def cases(rng):
    # ppocr-rec-int8's p2o.GlobalAveragePool.2: 6 x 278 per channel, each
    # channel's codes summing to 8359 + 8 x 1668, 33.499957 steps exact
    shape = [1, 512, 6, 278]
    n = shape[2] * shape[3]
    x = rng.integers(1, 48, (shape[1], n)) * (rng.random((shape[1], n)) < 0.54)
    for c in range(shape[1]):
        while (d := 8359 - int((x[c] - 8).sum())):
            x[c, np.flatnonzero(x[c] > 0 if d < 0 else x[c] < 255)[:abs(d)]] += np.sign(d)
    yield ('gap', unit_model([helper.make_node('GlobalAveragePool', ['xf'], ['yf'])], shape,
                             (0.18181208, 8), (0.027197987, 51)),
           x.astype(np.uint8).reshape(shape))
    # p2o.AveragePool.0: kernel and stride 3 x 2, output sharing the input's
    # quantization, zero point 3
    shape = [1, 64, 12, 278]
    yield ('avgpool', unit_model([helper.make_node('AveragePool', ['xf'], ['yf'],
                                                   kernel_shape=[3, 2], strides=[3, 2])],
                                 shape, (0.4043235, 3), (0.4043235, 3)),
           rng.integers(0, 40, shape, dtype=np.uint8))
    # p2o.Add.28: HardSwish's x + 3, its output clipped to [0, 6] by the
    # QuantizeLinear's range; x = 0 is code 143
    three = [numpy_helper.from_array(np.array(255, np.uint8), 'c_q'),
             numpy_helper.from_array(np.array(0.011764706, np.float32), 'c_s'),
             numpy_helper.from_array(np.array(0, np.uint8), 'c_z')]
    shape = [1, 16, 8, 8]
    yield ('addc', unit_model([helper.make_node('DequantizeLinear', ['c_q', 'c_s', 'c_z'], ['cf']),
                               helper.make_node('Add', ['xf', 'cf'], ['yf'])],
                              shape, (0.08478298, 143), (0.023529412, 0), three),
           rng.integers(120, 170, shape, dtype=np.uint8))
    # ties everywhere: scales 0.5, odd zero points, sums of two codes
    shape = [1, 8, 13, 17]
    for name, attrs in (('avgpool-pad', dict(kernel_shape=[3, 2], strides=[2, 2],
                                             pads=[1, 1, 1, 1])),
                        ('avgpool-padcount', dict(kernel_shape=[2, 3], strides=[2, 1],
                                                  pads=[1, 0, 1, 2], count_include_pad=1)),
                        ('avgpool-whole', dict(kernel_shape=[13, 17])),
                        ('avgpool-ceil', dict(kernel_shape=[2, 2], strides=[2, 2],
                                              ceil_mode=1))):
        yield (name, unit_model([helper.make_node('AveragePool', ['xf'], ['yf'], **attrs)],
                                shape, (0.5, 3), (0.5, 5)),
               rng.integers(0, 30, shape, dtype=np.uint8))
    m = unit_model([helper.make_node('AveragePool', ['xf'], ['yf'], kernel_shape=[1, 2],
                                     strides=[1, 2])], shape, (0.5, 3), (0.5, 5))
    for t in m.graph.initializer:
        if t.name.endswith('_z'):
            t.CopyFrom(numpy_helper.from_array(np.array(numpy_helper.to_array(t), np.int8),
                                               t.name))
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.INT8
    yield 'avgpool-int8', m, rng.integers(-20, 20, shape, dtype=np.int8)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: qdq-hR-ort-units.py NPU_RUN [ORT_MODULES]')
    npu_run = sys.argv[1]
    modules = sys.argv[2] if len(sys.argv) == 3 else os.path.expanduser(
        '~/.cache/vnpu/models/ort/node_modules')
    ref_js = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../models/ref.js')
    rng = np.random.default_rng(22)
    fails = n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, x in cases(rng):
            n += 1
            d = os.path.join(tmp, name)
            os.makedirs(os.path.join(d, 'in'))
            onnx.save(model, os.path.join(d, 'model.onnx'))
            np.save(os.path.join(d, 'in', 'x.npy'), x)
            runs = [['node', ref_js, d + '/model.onnx', d + '/in', d + '/ort', 'extended'],
                    [npu_run, d + '/model.onnx', '--cpu', '--input', 'x=' + d + '/in/x.npy',
                     '--output-dir', d + '/npu']]
            why = None
            for args in runs:
                r = subprocess.run(args, capture_output=True, text=True,
                                   env=dict(os.environ, NODE_PATH=modules))
                if r.returncode:
                    why = f'{args[0]} failed: {(r.stderr or r.stdout).strip()[-200:]}'
                    break
            if why is None:
                want = np.load(d + '/ort/out.npy')
                got = np.load(d + '/npu/out.npy')
                differ = int((want != got).sum())
                if differ:
                    why = f"{differ} of {want.size} elements differ from onnxruntime's ('extended')"
            todo = f' # TODO {KNOWN[name]}' if name in KNOWN else ''
            if why:
                fails += not todo
                print(f'not ok {n} - qdq-{name}: {why}{todo}')
            else:
                # a known failure that passes is a failure too (tap-summary.py)
                fails += bool(todo)
                print(f"ok {n} - qdq-{name}: {want.size} elements equal to onnxruntime's "
                      f"('extended'){todo}")
    print(f'1..{n}')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
