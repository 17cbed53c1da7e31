# SPDX-License-Identifier: MIT
"""npu.Model with dynamic input dimensions: one load, runs of several
shapes checked against numpy, the shape cache's counters (a shape seen
before neither imports nor compiles), its bound, and the errors of shapes
the model cannot take."""
import numpy as np
import pytest

import npu
from conftest import MODELS, onnx_model

RNG = np.random.default_rng(21)
W = RNG.standard_normal((4, 3)).astype(np.float32)
BIAS = RNG.standard_normal(3).astype(np.float32)
K = RNG.standard_normal((2, 1, 3, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def batch_model():
    """x [batch, 2, 2] -> Reshape to [batch, 4] (the target from Shape(x),
    folded at import) -> MatMul W -> Add bias -> Relu."""
    return onnx_model(
        [("Shape", ["x"], ["s"]),
         ("Gather", ["s", "zero"], ["n"], {"axis": 0}),
         ("Concat", ["n", "four"], ["t"], {"axis": 0}),
         ("Reshape", ["x", "t"], ["f"], {"name": "flatten"}),
         ("MatMul", ["f", "w"], ["p"]),
         ("Add", ["p", "bias"], ["q"]),
         ("Relu", ["q"], ["y"])],
        [("x", np.float32, ["batch", 2, 2])], [("y", np.float32, ["batch", 3])],
        [("zero", np.array([0], np.int64)), ("four", np.array([4], np.int64)),
         ("w", W), ("bias", BIAS)])


def batch_reference(x):
    return np.maximum(x.reshape(len(x), 4) @ W + BIAS, 0)


@pytest.fixture(scope="module")
def spatial_model():
    """x [1, 1, h, w] -> Conv 3x3 pads 1 -> Relu -> y; and its global average."""
    return onnx_model(
        [("Conv", ["x", "k"], ["c"], {"pads": [1, 1, 1, 1]}),
         ("Relu", ["c"], ["y"]),
         ("GlobalAveragePool", ["y"], ["g"])],
        [("x", np.float32, [1, 1, "h", "w"])],
        [("y", np.float32, [1, 2, "h", "w"]), ("g", np.float32, [1, 2, 1, 1])],
        [("k", K)])


def spatial_reference(x):
    _, _, h, w = x.shape
    xp = np.pad(x[0, 0].astype(np.float64), 1)
    y = np.zeros((1, 2, h, w))
    for co in range(2):
        for i in range(3):
            for j in range(3):
                y[0, co] += K[co, 0, i, j] * xp[i:i + h, j:j + w]
    y = np.maximum(y, 0)
    return y, y.mean(axis=(2, 3), keepdims=True)


def test_dynamic_dims_are_reported(batch_model, spatial_model):
    m = npu.Model(batch_model, cpu=True, shapes={"x": (2, 2, 2)})
    (x,) = m.inputs
    assert x.shape == (2, 2, 2) and x.dynamic == ("batch", None, None)
    assert m.outputs[0].dynamic == ("batch", None)
    assert x == ("x", np.dtype(np.float32), (2, 2, 2))        # still a 3-tuple
    s = npu.Model(spatial_model, cpu=True, shapes={"x": (1, 1, 4, 4)})
    assert s.inputs[0].dynamic == (None, None, "h", "w")
    assert s.outputs[1].dynamic == (None, None, None, None)


def test_batch_sizes_one_load(batch_model):
    m = npu.Model(batch_model, cpu=True, shapes={"x": (2, 2, 2)})
    assert m.shape_cache == dict(capacity=8, entries=1, hits=0, misses=0, evictions=0,
                                 imports=1, compiles=1)
    for n in (2, 1, 5, 9, 1, 2, 5):
        x = RNG.standard_normal((n, 2, 2)).astype(np.float32)
        y = m.run({"x": x})["y"]
        assert y.shape == (n, 3)
        np.testing.assert_allclose(y, batch_reference(x), rtol=1e-5, atol=1e-5)
    # 2 (the load's), 1, 5 and 9 imported and compiled once each
    assert m.shape_cache == dict(capacity=8, entries=4, hits=4, misses=3, evictions=0,
                                 imports=4, compiles=4)
    assert m.inputs[0].shape == (2, 2, 2)      # the load's, whatever ran since


def test_image_sizes_and_back(spatial_model):
    m = npu.Model(spatial_model, cpu=True, shapes={"x": (1, 1, 5, 5)})
    for h, w in ((5, 5), (8, 6), (3, 9), (8, 6), (5, 5)):
        x = RNG.standard_normal((1, 1, h, w)).astype(np.float32)
        out = m.run({"x": x})
        y, g = spatial_reference(x)
        assert out["y"].shape == (1, 2, h, w) and out["g"].shape == (1, 2, 1, 1)
        np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out["g"], g, rtol=1e-5, atol=1e-5)
    c = m.shape_cache
    assert (c["imports"], c["compiles"], c["hits"], c["misses"]) == (3, 3, 3, 2)


def test_run_async_with_a_new_shape(batch_model):
    m = npu.Model(batch_model, cpu=True, shapes={"x": (1, 2, 2)})
    xs = [RNG.standard_normal((n, 2, 2)).astype(np.float32) for n in (3, 1, 3)]
    for x in xs:
        np.testing.assert_allclose(m.run_async({"x": x}).result(timeout=60)["y"],
                                   batch_reference(x), rtol=1e-5, atol=1e-5)
    assert m.shape_cache["compiles"] == 2 and m.shape_cache["hits"] == 2


def test_cache_is_bounded(batch_model):
    m = npu.Model(batch_model, cpu=True, shapes={"x": (1, 2, 2)}, max_shapes=2)
    for n in (2, 3):                           # 1 is evicted by 3
        m.run({"x": np.ones((n, 2, 2), np.float32)})
    c = m.shape_cache
    assert (c["entries"], c["evictions"], c["compiles"]) == (2, 1, 3)
    x = RNG.standard_normal((1, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": x})["y"], batch_reference(x), rtol=1e-5, atol=1e-5)
    c = m.shape_cache
    assert (c["entries"], c["evictions"], c["compiles"], c["imports"]) == (2, 2, 4, 4)
    for bad in (0, -1, 1025):
        with pytest.raises(ValueError, match="max_shapes is %d, not 1 to 1024" % bad):
            npu.Model(batch_model, cpu=True, shapes={"x": (1, 2, 2)}, max_shapes=bad)


def test_fixed_dims_must_match(batch_model):
    m = npu.Model(batch_model, cpu=True, shapes={"x": (1, 2, 2)})
    with pytest.raises(ValueError, match=r"input 'x': shape \(3, 2, 5\), but the model takes "
                       r"\('batch', 2, 2\): dimension 2 must be 2"):
        m.run({"x": np.zeros((3, 2, 5), np.float32)})
    with pytest.raises(ValueError, match=r"input 'x': shape \(3, 4\), but the model takes "
                       r"\('batch', 2, 2\)$"):
        m.run({"x": np.zeros((3, 4), np.float32)})
    with pytest.raises(ValueError, match=r"dimension 0 is 0, which libnpu cannot take"):
        m.run({"x": np.zeros((0, 2, 2), np.float32)})
    assert m.shape_cache["imports"] == 1        # refused before any import


def test_a_shape_the_model_cannot_take():
    model = onnx_model([("Reshape", ["x", "to"], ["y"], {"name": "to_2x6"})],
                       [("x", np.float32, ["n", 3])], [("y", np.float32, [2, 6])],
                       [("to", np.array([2, 6], np.int64))])
    m = npu.Model(model, cpu=True, shapes={"x": (4, 3)})
    with pytest.raises(npu.Error, match=r"for these shapes.*to_2x6.*Reshape") as e:
        m.run({"x": np.zeros((5, 3), np.float32)})
    assert e.value.errno != 0
    c = m.shape_cache
    assert (c["entries"], c["misses"], c["imports"], c["compiles"]) == (1, 1, 2, 1)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(m.run({"x": x})["y"], x.reshape(2, 6))   # still usable


def test_fixed_shape_model_keeps_its_checks(add_model):
    m = npu.Model(add_model, cpu=True)
    assert m.inputs[0].dynamic == (None, None)
    with pytest.raises(ValueError, match=r"input 'b': shape \(1, 3\), but the model takes "
                       r"\(2, 3\)$"):
        m.run({"a": np.zeros((2, 3), np.float32), "b": np.zeros((1, 3), np.float32)})


PPOCR_CLS = MODELS / "ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx"
PPOCR_CLS_REF = MODELS / "ref/ppocr-cls"


def test_real_model_batches_against_onnxruntime():
    """PP-OCR's direction classifier (x [batch, 3, h, w]) at batch sizes
    7, 1, 3 and back, each against the rows of onnxruntime-node's output
    for the same crops (make models)."""
    if not PPOCR_CLS.exists() or not (PPOCR_CLS_REF / "in/x.npy").exists():
        pytest.skip("no PP-OCR classifier or reference in %s: run `make models`" % MODELS)
    x = np.load(PPOCR_CLS_REF / "in/x.npy")
    ref = np.load(PPOCR_CLS_REF / "out/softmax_0.tmp_0.npy")
    assert x.shape == (7, 3, 48, 192)
    m = npu.Model(PPOCR_CLS, cpu=True, shapes={"x": x.shape})
    assert m.inputs[0].dynamic == ("p2o.DynamicDimension.0", None, "p2o.DynamicDimension.1",
                                   "p2o.DynamicDimension.2")
    for rows in (slice(0, 7), slice(0, 1), slice(2, 5), slice(0, 7), slice(6, 7)):
        y = m.run({"x": np.ascontiguousarray(x[rows])})["softmax_0.tmp_0"]
        np.testing.assert_allclose(y, ref[rows], rtol=1e-3, atol=1e-4)
    c = m.shape_cache
    assert (c["imports"], c["compiles"], c["hits"], c["misses"]) == (3, 3, 3, 2)
