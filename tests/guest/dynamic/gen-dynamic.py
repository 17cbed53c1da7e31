#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The models and cases of t-onnx-dynamic (a guest test): a model with a
symbolic batch whose Reshape target is folded from Shape(x), and a Conv
model with a symbolic image size, each with inputs of several shapes and
numpy's outputs for them (computed in float64, stored float32).

    gen-dynamic.py OUTDIR

writes OUTDIR/batch.onnx, OUTDIR/spatial.onnx, the inputs and references
as raw native float32 (*.bin), and OUTDIR/cases.txt, one case a line:
    MODEL RANK DIMS... INPUT NOUT OUTPUT...
Debian's python3-onnx and python3-numpy (/usr/bin/python3)."""
import pathlib
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2111)
W = RNG.standard_normal((4, 3)).astype(np.float32)
BIAS = RNG.standard_normal(3).astype(np.float32)
K = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)


def model(nodes, inputs, outputs, inits):
    graph = helper.make_graph(
        [helper.make_node(*n[:3], **(n[3] if len(n) > 3 else {})) for n in nodes], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(v, name=k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def batch_model():
    return model([("Shape", ["x"], ["s"]),
                  ("Gather", ["s", "zero"], ["n"], {"axis": 0}),
                  ("Concat", ["n", "four"], ["t"], {"axis": 0}),
                  ("Reshape", ["x", "t"], ["f"], {"name": "flatten"}),
                  ("MatMul", ["f", "w"], ["p"]),
                  ("Add", ["p", "bias"], ["q"]),
                  ("Relu", ["q"], ["y"])],
                 [("x", ["batch", 2, 2])], [("y", ["batch", 3])],
                 [("zero", np.array([0], np.int64)), ("four", np.array([4], np.int64)),
                  ("w", W), ("bias", BIAS)])


def batch_reference(x):
    return [np.maximum(x.astype(np.float64).reshape(len(x), 4) @ W + BIAS, 0)]


def spatial_model():
    return model([("Conv", ["x", "k"], ["c"], {"pads": [1, 1, 1, 1]}),
                  ("Relu", ["c"], ["y"]),
                  ("MaxPool", ["y"], ["p"], {"kernel_shape": [2, 2], "strides": [2, 2]})],
                 [("x", [1, 2, "h", "w"])],
                 [("y", [1, 4, "h", "w"]), ("p", [1, 4, "ph", "pw"])], [("k", K)])


def spatial_reference(x):
    _, c, h, w = x.shape
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, h, w))
    for co in range(4):
        for ci in range(c):
            for i in range(3):
                for j in range(3):
                    y[0, co] += K[co, ci, i, j] * xp[ci, i:i + h, j:j + w]
    y = np.maximum(y, 0)
    ph, pw = h // 2, w // 2
    p = y[:, :, :2 * ph, :2 * pw].reshape(1, 4, ph, 2, pw, 2).max(axis=(3, 5))
    return [y, p]


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "batch.onnx").write_bytes(batch_model())
    (out / "spatial.onnx").write_bytes(spatial_model())
    lines = []
    cases = [("batch", batch_reference, s) for s in ((2, 2, 2), (1, 2, 2), (5, 2, 2), (9, 2, 2))]
    cases += [("spatial", spatial_reference, s)
              for s in ((1, 2, 8, 8), (1, 2, 12, 6), (1, 2, 5, 16), (1, 2, 32, 24))]
    for i, (name, ref, shape) in enumerate(cases):
        x = RNG.standard_normal(shape).astype(np.float32)
        x.tofile(out / ("%s-%d-x.bin" % (name, i)))
        outs = []
        for k, y in enumerate(ref(x)):
            path = "%s-%d-y%d.bin" % (name, i, k)
            y.astype(np.float32).tofile(out / path)
            outs.append(path)
        lines.append(" ".join([name + ".onnx", str(len(shape))] + [str(d) for d in shape] +
                              ["%s-%d-x.bin" % (name, i), str(len(outs))] + outs))
    (out / "cases.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
