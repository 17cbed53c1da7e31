# SPDX-License-Identifier: MIT
"""Fixtures of the npu package's tests: small ONNX models made with
Debian's python3-onnx, and the real BlazeFace model with onnxruntime's
reference outputs from `make models`."""
import os
import pathlib

import numpy as np
import pytest

MODELS = pathlib.Path(os.environ.get("VNPU_CACHE", pathlib.Path.home() / ".cache/vnpu")) / "models"
BLAZEFACE = MODELS / "blazeface/face_detection_front_128x128_barracuda.onnx"
BLAZEFACE_REF = MODELS / "ref/blazeface-front"


def onnx_model(nodes, inputs, outputs, initializers=(), opset=13, check=True):
    """Serialized ModelProto of one graph; inputs/outputs are
    (name, numpy dtype, shape) with None or a string for a dynamic dim."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    def vi(name, dtype, shape):
        if hasattr(helper, "np_dtype_to_tensor_dtype"):
            elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        else:                                   # onnx before 1.13
            elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
        return helper.make_tensor_value_info(name, elem, shape)

    graph = helper.make_graph(
        [helper.make_node(*n[:3], **(n[3] if len(n) > 3 else {})) for n in nodes], "g",
        [vi(*i) for i in inputs], [vi(*o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), name=k) for k, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if check:
        onnx.checker.check_model(model)
    return model.SerializeToString()


@pytest.fixture(scope="session")
def add_model():
    """y = a + b, float32 [2, 3]."""
    return onnx_model([("Add", ["a", "b"], ["y"])],
                      [("a", np.float32, [2, 3]), ("b", np.float32, [2, 3])],
                      [("y", np.float32, [2, 3])])


@pytest.fixture(scope="session")
def add_model_file(add_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "add.onnx"
    path.write_bytes(add_model)
    return path


@pytest.fixture(scope="session")
def blazeface():
    if not BLAZEFACE.exists() or not (BLAZEFACE_REF / "in/input_0.npy").exists():
        pytest.skip("no BlazeFace model or reference in %s: run `make models`" % MODELS)
    return BLAZEFACE
