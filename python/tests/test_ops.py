# SPDX-License-Identifier: MIT
"""npu.Tensor and npu.Op on the CPU path, against numpy's arithmetic."""
import errno
import gc
import sys

import numpy as np
import pytest

import npu

rng = np.random.default_rng(20261127)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_gemm_with_bias_and_fused_relu():
    a, b, bias = randn(5, 7), randn(7, 3), randn(3)
    y = np.empty((5, 3), np.float32)
    op = npu.Op("gemm", [npu.Tensor(a), npu.Tensor(b), npu.Tensor(bias)], npu.Tensor(y),
                act="relu")
    assert op.kind == "gemm"
    assert op.run() == "cpu"
    np.testing.assert_allclose(y, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)


def test_gemm_transposed_b():
    a, bt = randn(4, 6), randn(3, 6)
    y = np.zeros((4, 3), np.float32)
    npu.Op("gemm", [npu.Tensor(a), npu.Tensor(bt), None], npu.Tensor(y), trans_b=True).run()
    np.testing.assert_allclose(y, a @ bt.T, rtol=1e-5, atol=1e-5)


def conv2d_nhwc(x, w, stride, pad):
    """Direct convolution, X NHWC, W [CO, KH, KW, C]."""
    n, h, wd, c = x.shape
    co, kh, kw, _ = w.shape
    t, l, bo, r = pad
    xp = np.pad(x, ((0, 0), (t, bo), (l, r), (0, 0)))
    oh = (h + t + bo - kh) // stride[0] + 1
    ow = (wd + l + r - kw) // stride[1] + 1
    y = np.zeros((n, oh, ow, co), np.float64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,ohwc->no", win, w)
    return y


def test_conv2d_nhwc_strided_padded():
    x, w = randn(1, 9, 8, 3), randn(4, 3, 3, 3)
    y = np.empty((1, 5, 4, 4), np.float32)
    op = npu.Op("conv2d", [npu.Tensor(x), npu.Tensor(w), None], npu.Tensor(y),
                stride=(2, 2), pad=(1, 1, 1, 0))
    assert op.run() == "cpu"
    np.testing.assert_allclose(y, conv2d_nhwc(x, w, (2, 2), (1, 1, 1, 0)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, fn", [("add", np.add), ("sub", np.subtract),
                                      ("mul", np.multiply), ("max", np.maximum)])
def test_eltwise_broadcasting(name, fn):
    a, b = randn(2, 3, 4), randn(1, 4)
    y = np.empty((2, 3, 4), np.float32)
    npu.Op("eltwise", [npu.Tensor(a), npu.Tensor(b)], npu.Tensor(y), op=name).run()
    np.testing.assert_allclose(y, fn(a, b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("act, fn", [
    ("relu", lambda x: np.maximum(x, 0)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", np.tanh),
    ("abs", np.abs),
    ("clip", lambda x: np.clip(x, -0.5, 0.25)),
])
def test_activation(act, fn):
    x = randn(3, 17)
    y = np.empty_like(x)
    npu.Op("activation", [npu.Tensor(x)], npu.Tensor(y), act=act,
           clip=(-0.5, 0.25) if act == "clip" else None).run()
    np.testing.assert_allclose(y, fn(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_pool2d_max_and_softmax():
    x = randn(1, 4, 4, 2)
    y = np.empty((1, 2, 2, 2), np.float32)
    npu.Op("pool2d", [npu.Tensor(x)], npu.Tensor(y), pool="max", kernel=(2, 2),
           stride=(2, 2)).run()
    np.testing.assert_array_equal(y, x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    s = randn(3, 5)
    p = np.empty_like(s)
    npu.Op("softmax", [npu.Tensor(s)], npu.Tensor(p), axis=1).run()
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_quantized_tensors():
    """(q - zero_point) * scale in, the sum requantized to scale 1 out."""
    x = np.array([[-128, 0, 10, 127]], np.int8)
    z = np.array([[-6, 2, 1, 0]], np.int8)
    y = np.empty((1, 4), np.int8)
    npu.Op("eltwise", [npu.Tensor(x, scale=0.5, zero_point=0),
                       npu.Tensor(z, scale=1.0, zero_point=-4)],
           npu.Tensor(y, scale=1.0, zero_point=0), op="add").run()
    assert y.tolist() == [[-66, 6, 10, 68]]
    with pytest.raises(npu.Error, match="scale > 0") as e:
        npu.Tensor(x, scale=-1.0)
    assert e.value.errno == errno.EINVAL


def test_op_errors_are_clear():
    a, b = randn(2, 3), randn(4, 5)
    y = np.empty((2, 5), np.float32)
    with pytest.raises(npu.Error, match=r"npu.Op\(gemm\): shapes, dtypes or parameters") as e:
        npu.Op("gemm", [npu.Tensor(a), npu.Tensor(b), None], npu.Tensor(y))
    assert e.value.errno == errno.EINVAL
    with pytest.raises(ValueError, match=r"kind 'matmul' is not one of \['gemm'"):
        npu.Op("matmul", [npu.Tensor(a)], npu.Tensor(y))
    with pytest.raises(ValueError, match=r"act 'swish' is not one of"):
        npu.Op("activation", [npu.Tensor(a)], npu.Tensor(a), act="swish")
    with pytest.raises(ValueError, match=r"op 'xor' is not one of"):
        npu.Op("eltwise", [npu.Tensor(a), npu.Tensor(a)], npu.Tensor(a), op="xor")
    with pytest.raises(ValueError, match=r"stride takes 2 values, not 3"):
        npu.Op("conv2d", [npu.Tensor(a)], npu.Tensor(a), stride=(1, 1, 1))
    with pytest.raises(TypeError, match=r"input 0 is a numpy.ndarray, not an npu.Tensor"):
        npu.Op("activation", [a], npu.Tensor(a))
    ro = np.zeros((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="output tensor's array is read-only"):
        npu.Op("activation", [npu.Tensor(a)], npu.Tensor(ro), act="relu")
    with pytest.raises(ValueError, match="C-contiguous"):
        npu.Tensor(randn(4, 4)[:, ::2])
    with pytest.raises(TypeError, match="binds a numpy.ndarray"):
        npu.Tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="has no libnpu dtype"):
        npu.Tensor(np.zeros(3, np.complex64))


def test_support_query_and_cpu_limits():
    a, b = randn(64, 64), randn(64, 64)
    y = np.empty((64, 64), np.float32)
    op = npu.Op("gemm", [npu.Tensor(a), npu.Tensor(b), None], npu.Tensor(y))
    ok, reason = op.supported
    assert ok is False and reason        # host memory: the CPU path
    assert op.num_commands == 0
    with pytest.raises(npu.Error, match=r"GEMM: \d+ work units exceed the CPU path's limit of 1000 \(npu_cpu_limits.max_work\)") as e:
        op.run_cpu(max_work=1000)
    assert e.value.errno == errno.E2BIG
    op.run_cpu()
    np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-4)


def test_op_keeps_its_arrays_alive():
    a, b = randn(3, 3), randn(3, 3)
    expect = a + b
    y = np.empty((3, 3), np.float32)
    before = sys.getrefcount(a)
    ta = npu.Tensor(a)
    assert sys.getrefcount(a) == before + 1 and ta.memory is a
    op = npu.Op("eltwise", [ta, npu.Tensor(b)], npu.Tensor(y), op="add")
    del a, b, ta
    gc.collect()
    op.run()
    np.testing.assert_array_equal(y, expect)
    del op
    gc.collect()
    assert sys.getrefcount(y) == 2        # the op let go of the output
