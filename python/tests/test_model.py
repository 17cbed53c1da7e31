# SPDX-License-Identifier: MIT
"""npu.Model on the CPU path: import, metadata, run, its errors, async
runs and the profile table."""
import errno
import pathlib
import threading
import time

import numpy as np
import pytest

import npu
from conftest import onnx_model

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.full((2, 3), 0.5, np.float32)


def test_from_path_str_pathlike_and_bytes(add_model, add_model_file):
    for source in (add_model_file, str(add_model_file), add_model, bytearray(add_model),
                   memoryview(add_model)):
        y = npu.Model(source, cpu=True).run({"a": A, "b": B})
        assert list(y) == ["y"]
        np.testing.assert_array_equal(y["y"], A + B)


def test_metadata(add_model):
    m = npu.Model(add_model, cpu=True)
    assert m.inputs == (("a", np.dtype(np.float32), (2, 3)), ("b", np.dtype(np.float32), (2, 3)))
    (out,) = m.outputs
    assert isinstance(out, npu.IOInfo)
    assert (out.name, out.dtype, out.shape) == ("y", np.dtype(np.float32), (2, 3))
    s = m.summary
    assert s["opset"] == 13 and s["nodes"] == 1 and s["device_segments"] == 0
    assert repr(m) == "<npu.Model on cpu (a float32 (2, 3), b float32 (2, 3))>"


def test_outputs_are_new_arrays_each_run(add_model):
    m = npu.Model(add_model, cpu=True)
    y1 = m.run({"a": A, "b": B})["y"]
    y2 = m.run({"a": B, "b": B})["y"]
    assert y1 is not y2 and not np.shares_memory(y1, y2)
    np.testing.assert_array_equal(y1, A + B)
    np.testing.assert_array_equal(y2, B + B)
    assert y1.flags.c_contiguous and y1.flags.writeable and y1.flags.owndata


def test_non_contiguous_and_read_only_inputs(add_model):
    m = npu.Model(add_model, cpu=True)
    wide = np.arange(12, dtype=np.float32).reshape(2, 6)
    a = wide[:, ::2]                     # a strided view: copied for libnpu
    b = B.copy()
    b.flags.writeable = False            # only read: bound as it is
    np.testing.assert_array_equal(m.run({"a": a, "b": b})["y"], a + b)


@pytest.mark.parametrize("inputs, exc, message", [
    ({"a": A, "b": B.astype(np.float64)}, TypeError,
     r"input 'b': dtype dtype\('float64'\), but the model takes float32"),
    ({"a": A, "b": B.astype(">f4")}, TypeError, r"input 'b': dtype dtype\('>f4'\)"),
    ({"a": A, "b": B[:1]}, ValueError, r"input 'b': shape \(1, 3\), but the model takes \(2, 3\)"),
    ({"a": A, "b": B.reshape(6)}, ValueError, r"input 'b': shape \(6,\)"),
    ({"a": A}, ValueError, r"input 'b' \(float32 \(2, 3\)\) is missing"),
    ({"a": A, "b": B, "c": B}, ValueError,
     r"input 'c': the model has no input of that name \(its inputs: \['a', 'b'\]\)"),
    ({"a": A, 1: B}, TypeError, r"input names are str"),
    ([A, B], TypeError, r"inputs must be a dict"),
], ids=["dtype", "byte-order", "shape", "rank", "missing", "unknown", "key-type", "not-a-dict"])
def test_bad_inputs_are_clear_errors(add_model, inputs, exc, message):
    m = npu.Model(add_model, cpu=True)
    with pytest.raises(exc, match=message):
        m.run(inputs)
    with pytest.raises(exc, match=message):
        m.run_async(inputs)
    np.testing.assert_array_equal(m.run({"a": A, "b": B})["y"], A + B)   # still usable


def test_corrupt_model_file(add_model, tmp_path):
    bad = tmp_path / "truncated.onnx"
    bad.write_bytes(add_model[:len(add_model) // 2])
    with pytest.raises(npu.Error, match=r"truncated\.onnx: .*") as e:
        npu.Model(bad, cpu=True)
    assert e.value.errno == errno.EBADMSG and e.value.code == -errno.EBADMSG
    with pytest.raises(npu.Error, match=r"npu.Model\(bytes\): not a valid ONNX model") as e:
        npu.Model(b"\xff" * 64, cpu=True)
    assert e.value.errno == errno.EBADMSG
    with pytest.raises(npu.Error, match="no-such.onnx") as e:
        npu.Model(tmp_path / "no-such.onnx", cpu=True)
    assert e.value.errno == errno.ENOENT
    with pytest.raises(TypeError, match="a path .* or the ONNX file's bytes"):
        npu.Model(42, cpu=True)


def test_unsupported_node_names_node_and_op():
    model = onnx_model([("NoSuchOp", ["x"], ["y"], {"name": "mystery"})],
                       [("x", np.float32, [1])], [("y", np.float32, [1])], check=False)
    with pytest.raises(npu.Error, match=r"mystery.*NoSuchOp|NoSuchOp.*mystery"):
        npu.Model(model, cpu=True)


def test_dynamic_dims_and_constants():
    model = onnx_model([("Reshape", ["x", "shape"], ["y"])],
                       [("x", np.float32, ["n", 4]), ("shape", np.int64, [2])],
                       [("y", np.float32, ["p", "q"])])
    with pytest.raises(npu.Error, match="n"):
        npu.Model(model, cpu=True)
    m = npu.Model(model, cpu=True, shapes={"x": (3, 4)},
                  constants={"shape": np.array([2, 6], np.int64)})
    assert [i.name for i in m.inputs] == ["x"] and m.inputs[0].shape == (3, 4)
    assert m.outputs[0].shape == (2, 6)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(m.run({"x": x})["y"], x.reshape(2, 6))
    with pytest.raises(ValueError, match="dimension 0 is 0"):
        npu.Model(model, cpu=True, shapes={"x": (0, 4)})
    with pytest.raises(TypeError, match="shapes must be a dict"):
        npu.Model(model, cpu=True, shapes=[(3, 4)])


def test_other_dtypes_in_and_out():
    model = onnx_model([("Cast", ["x"], ["y"], {"to": 6})],       # INT32
                       [("x", np.uint8, [4])], [("y", np.int32, [4])])
    m = npu.Model(model, cpu=True)
    assert m.inputs[0].dtype == np.uint8 and m.outputs[0].dtype == np.int32
    y = m.run({"x": np.array([0, 1, 200, 255], np.uint8)})["y"]
    assert y.dtype == np.int32 and y.tolist() == [0, 1, 200, 255]


def big_matmul_model():
    """One MatMul of 2^33 multiply-accumulates: over the CPU path's
    default budget of 2^32 work units, refused before it runs."""
    return onnx_model([("MatMul", ["a", "b"], ["y"], {"name": "too_big"})],
                      [("a", np.float32, [2048, 2048]), ("b", np.float32, [2048, 2048])],
                      [("y", np.float32, [2048, 2048])])


def test_failed_run_names_the_node():
    m = npu.Model(big_matmul_model(), cpu=True)
    a = np.zeros((2048, 2048), np.float32)
    with pytest.raises(npu.Error, match=r"Model.run: .*too_big.*work units") as e:
        m.run({"a": a, "b": a})
    assert e.value.errno == errno.E2BIG
    future = m.run_async({"a": a, "b": a})
    with pytest.raises(npu.Error, match="too_big") as e:
        future.result(timeout=60)
    assert e.value.errno == errno.E2BIG


def test_timeout_stops_the_run_and_keeps_the_model_usable(blazeface):
    """A run past its timeout is stopped and waited for before run()
    raises: the model takes the next run at once, and the arrays of the
    stopped one are no longer written."""
    m = npu.Model(blazeface, cpu=True)
    x = np.load(pathlib.Path(blazeface).parents[1] / "ref/blazeface-front/in/input_0.npy")
    feed = {m.inputs[0].name: x}
    expect = m.run(feed)
    for _ in range(5):
        with pytest.raises(npu.Error, match=r"Model.run: node '.*' \(.*\)") as e:
            m.run(feed, timeout=0.001)
        # ETIME: the CPU path stopped at the deadline; ETIMEDOUT: the wait
        # for a device job passed it
        assert e.value.errno in (errno.ETIME, errno.ETIMEDOUT), e.value
        got = m.run(feed)
        for name, y in expect.items():
            np.testing.assert_array_equal(got[name], y)
    with pytest.raises(ValueError, match="timeout must be None or >= 0"):
        m.run(feed, timeout=-1)


def test_run_async_returns_a_future(add_model):
    import concurrent.futures
    m = npu.Model(add_model, cpu=True)
    f = m.run_async({"a": A, "b": B})
    assert isinstance(f, concurrent.futures.Future)
    np.testing.assert_array_equal(f.result(timeout=60)["y"], A + B)
    # Runs of one model take turns: many in flight from many threads.
    results, threads = {}, []

    def submit(k):
        a = np.full((2, 3), k, np.float32)
        results[k] = (a, m.run_async({"a": a, "b": B}))
    for k in range(16):
        threads.append(threading.Thread(target=submit, args=(k,)))
        threads[-1].start()
    for t in threads:
        t.join()
    for k, (a, f) in results.items():
        np.testing.assert_array_equal(f.result(timeout=60)["y"], a + B)
    with pytest.raises(RuntimeError, match="no run in flight"):
        m._finish()


def test_run_releases_the_gil(blazeface):
    """A thread woken just as a run starts runs before the run is over.
    With the GIL held throughout, it could only run once the run had
    returned (at 1.0 of the run, or a hair before when the interpreter
    hands it the GIL between the call's return and the next line).  The
    best of five: on a loaded machine the scheduler may run the woken
    thread late in any one run (0.76 of one was seen), and BlazeFace on
    the CPU path now takes about 2 ms, so three tries under 0.9 failed
    a loaded check-host once; five under 0.95 leave room for both."""
    m = npu.Model(blazeface, cpu=True)
    x = np.load(pathlib.Path(blazeface).parents[1] / "ref/blazeface-front/in/input_0.npy")
    feed = {m.inputs[0].name: x}
    m.run(feed)
    woke = []
    for _ in range(5):
        go, t_woke = threading.Event(), []
        t = threading.Thread(target=lambda: (go.wait(), t_woke.append(time.monotonic())))
        t.start()
        t0 = time.monotonic()
        go.set()
        m.run(feed)
        t1 = time.monotonic()
        t.join()
        woke.append((t_woke[0] - t0) / (t1 - t0))
    assert min(woke) < 0.95, "the other thread woke at %s of the runs" % woke


def test_profile_table(add_model):
    model = onnx_model([("MatMul", ["x", "w"], ["h"], {"name": "fc"}),
                        ("Relu", ["h"], ["y"], {"name": "act"})],
                       [("x", np.float32, [4, 8])], [("y", np.float32, [4, 16])],
                       [("w", np.ones((8, 16), np.float32))])
    m = npu.Model(model, cpu=True)
    table = m.profile()
    assert [(p.index, p.name) for p in table] == [(0, "fc"), (1, "act")]
    fc, act = table
    assert isinstance(fc, npu.NodeProfile)
    assert fc.op == "GEMM" and fc.where == "cpu" and fc.segment == 0 and fc.macs == 4 * 8 * 16
    assert fc.cpu_reason and fc.fused_into is None
    assert act.where == "fused" and act.fused_into == 0 and act.segment is None
    timed = m.profile({"x": np.ones((4, 8), np.float32)})
    assert timed[0].time_ns > 0
    with pytest.raises(ValueError, match="missing"):
        m.profile({})


def test_help_reads_well():
    import pydoc
    text = pydoc.render_doc(npu.Model, renderer=pydoc.plaintext)
    for words in ("Model(model, device=None, *, cpu=False", "run(self, /, inputs, timeout=None)",
                  "run_async(self, inputs)", "profile(self, /, inputs=None", "inputs", "outputs",
                  "concurrent.futures.Future", "NodeProfile"):
        assert words in text, words
