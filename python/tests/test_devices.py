# SPDX-License-Identifier: MIT
"""Discovery and the device objects.  The host has no NPU: there the tests
check that the absence is reported clearly; with a device (the guest) they
check what it reports."""
import errno

import numpy as np
import pytest

import npu

HAVE_DEVICE = bool(npu.devices())
needs_device = pytest.mark.skipif(not HAVE_DEVICE, reason="no vnpu device on this machine")
no_device = pytest.mark.skipif(HAVE_DEVICE, reason="this machine has a vnpu device")


def test_devices_is_a_list_of_devices():
    devs = npu.devices()
    assert isinstance(devs, list)
    assert all(isinstance(d, npu.Device) for d in devs)
    assert [d.index for d in devs] == list(range(len(devs)))


@no_device
def test_no_device_on_the_host():
    assert npu.devices() == []


@no_device
@pytest.mark.parametrize("make", [lambda: npu.Device(0), lambda: npu.Context(0)],
                         ids=["Device(0)", "Context(0)"])
def test_absent_device_is_a_clear_error(make):
    with pytest.raises(npu.Error) as e:
        make()
    assert e.value.errno == errno.ENODEV
    assert e.value.code == -errno.ENODEV
    assert e.value.job_state is None
    assert "device 0: there are 0 vnpu devices" in str(e.value)


@no_device
def test_model_on_absent_device_is_a_clear_error(add_model):
    with pytest.raises(npu.Error, match=r"device 0: there are 0 vnpu devices") as e:
        npu.Model(add_model, device=0)
    assert e.value.errno == errno.ENODEV


def test_device_argument_types(add_model):
    with pytest.raises(TypeError, match="npu.Device or an index"):
        npu.Model(add_model, device="0")
    with pytest.raises(ValueError, match="cpu=True runs on the CPU"):
        npu.Model(add_model, device=0, cpu=True)
    with pytest.raises(npu.Error, match="device -1"):
        npu.Device(-1)


def test_model_without_device_falls_back_to_the_cpu(add_model):
    m = npu.Model(add_model)
    if HAVE_DEVICE:
        assert m.device.index == 0
    else:
        assert m.device is None
    assert npu.Model(add_model, cpu=True).device is None


@needs_device
def test_device_info_and_limits():
    d = npu.devices()[0]
    assert d.node.startswith("/dev/accel/accel") and d.name == d.node.rsplit("/", 1)[1]
    info = d.info
    assert info["index"] == 0 and info["pci_address"] == d.pci_address
    assert info["query_error"] == 0 and info["num_queues"] >= 1
    assert "compute" in info["caps"]
    limits = d.limits
    assert limits["tensor_bytes"] > 0 and limits["cmd_macs"] > 0
    assert repr(d).startswith("<npu.Device 0 ")


@needs_device
def test_buffer_is_device_memory_seen_from_numpy():
    ctx = npu.Context(0)
    buf = ctx.alloc(10000)
    assert buf.size >= 10000 and buf.size % 4096 == 0 and buf.va and buf.context is ctx
    a = buf.asarray(np.float32, (4, 5))
    a[:] = np.arange(20, dtype=np.float32).reshape(4, 5)
    assert np.frombuffer(memoryview(buf), np.float32, 20).tolist() == list(range(20))
    buf.wait_idle(timeout=5)
    with pytest.raises(ValueError, match="do not fit"):
        buf.asarray(np.float32, (buf.size,))


@needs_device
def test_gemm_on_the_device_matches_numpy():
    rng = np.random.default_rng(1)
    ctx = npu.Context(npu.devices()[0])
    buf = ctx.alloc(3 * 4096)
    a = buf.asarray(np.float32, (8, 16))
    b = buf.asarray(np.float32, (16, 4), offset=4096)
    a[:] = rng.standard_normal((8, 16))
    b[:] = rng.standard_normal((16, 4))
    op = npu.Op("gemm", [npu.Tensor.on_buffer(buf, np.float32, (8, 16)),
                         npu.Tensor.on_buffer(buf, np.float32, (16, 4), 4096), None],
                npu.Tensor.on_buffer(buf, np.float32, (8, 4), 8192))
    assert op.supported == (True, None)
    assert op.run() == "device"
    y = buf.asarray(np.float32, (8, 4), offset=8192)
    np.testing.assert_allclose(y, a @ b, rtol=1e-5, atol=1e-5)
