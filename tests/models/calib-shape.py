#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""PP-OCR's calibration at one shape per model (Debian's python3-onnx).

npu-quantize compiles the model once for all samples, so a model whose
input has dynamic dimensions (PP-OCR's batch, height and width) is refused
("dimension 0 is dynamic; give the shape").  Calibration therefore runs a
copy with the input fixed at the samples' one shape, and the QDQ model
written from it gets the original's dynamic inputs and outputs back: the
Q/DQ pairs npu-quantize adds do not depend on the shape.

    calib-shape.py fix FP32.onnx OUT.onnx N C H W
        FP32 with its one input fixed at N x C x H x W, outputs and
        inferred shapes left to the importer; a model older than opset 10
        (cls and rec are opset 9) converted to opset 11 by onnx's own
        version converter, as quantize_static does: QuantizeLinear came in
        opset 10.  Not to 13, which per-axis DequantizeLinear (per-channel
        weights) needs: the converter cannot move their Softmax to 13
        without a shape for its input, which their Shape -> Reshape
        chains leave unknown.  Constant nodes become initializers: the
        calibration makes every node's output a graph output, and det's
        empty Constants (Resize's roi) cannot be one
    calib-shape.py restore FP32.onnx QDQ.onnx
        QDQ's graph inputs and outputs given FP32's (dynamic) shapes again,
        its inferred value shapes dropped (in place)
    calib-shape.py split BATCH.npy OUTDIR PREFIX [WIDTH]
        each line of a batch of line crops as its own sample,
        OUTDIR/PREFIX-<i>.npy, cut or padded (with 0, the value
        ocr-rec-prep pads with) to WIDTH columns when given
"""
import os
import sys

import numpy as np
import onnx
from onnx import version_converter

QDQ_MIN_OPSET = 10
QDQ_OPSET = 11


def dims_of(value_info):
    return value_info.type.tensor_type.shape.dim


def fix(src, dst, shape):
    model = onnx.load(src)
    inputs = [i for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    if len(inputs) != 1 or len(dims_of(inputs[0])) != len(shape):
        sys.exit(f'calib-shape.py: {src}: not one input of rank {len(shape)}')
    for d, n in zip(dims_of(inputs[0]), shape):
        d.Clear()
        d.dim_value = n
    if any(o.domain in ('', 'ai.onnx') and o.version < QDQ_MIN_OPSET for o in model.opset_import):
        model = version_converter.convert_version(model, QDQ_OPSET)
    for node in [n for n in model.graph.node if n.op_type == 'Constant']:
        if len(node.attribute) != 1 or node.attribute[0].name != 'value':
            sys.exit(f'calib-shape.py: {src}: Constant {node.name} is not a plain tensor')
        tensor = onnx.TensorProto()
        tensor.CopyFrom(node.attribute[0].t)
        tensor.name = node.output[0]
        model.graph.initializer.append(tensor)
        model.graph.node.remove(node)
    for o in model.graph.output:
        o.type.tensor_type.ClearField('shape')
    del model.graph.value_info[:]
    onnx.save(model, dst)


def restore(src, qdq):
    orig = onnx.load(src)
    model = onnx.load(qdq)
    shapes = {v.name: v.type for v in list(orig.graph.input) + list(orig.graph.output)}
    for v in list(model.graph.input) + list(model.graph.output):
        if v.name not in shapes:
            sys.exit(f'calib-shape.py: {qdq}: {v.name} is not in {src}')
        v.type.CopyFrom(shapes[v.name])
    del model.graph.value_info[:]
    onnx.save(model, qdq)


def split(src, outdir, prefix, width):
    batch = np.load(src)
    os.makedirs(outdir, exist_ok=True)
    for i, line in enumerate(batch):
        if width:
            out = np.zeros(line.shape[:-1] + (width,), dtype=line.dtype)
            w = min(width, line.shape[-1])
            out[..., :w] = line[..., :w]
            line = out
        np.save(os.path.join(outdir, f'{prefix}-{i}.npy'), line[np.newaxis])


def main():
    a = sys.argv[1:]
    if len(a) == 7 and a[0] == 'fix':
        fix(a[1], a[2], [int(x) for x in a[3:]])
    elif len(a) == 3 and a[0] == 'restore':
        restore(a[1], a[2])
    elif len(a) in (4, 5) and a[0] == 'split':
        split(a[1], a[2], a[3], int(a[4]) if len(a) == 5 else 0)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
