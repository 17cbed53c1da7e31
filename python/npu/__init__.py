# SPDX-License-Identifier: MIT
"""libnpu from Python: run ONNX models and single ops on vnpu NPUs.

    >>> import npu, numpy as np
    >>> model = npu.Model("model.onnx")           # the first NPU, else the CPU
    >>> y = model.run({"x": np.zeros((1, 3), np.float32)})

npu.devices() lists the NPUs; npu.Model imports and compiles an ONNX model
(libnpu-onnx and libnpu's graph compiler) and runs it on numpy arrays;
npu.Context, npu.Buffer, npu.Tensor and npu.Op are libnpu's own objects for
callers writing their own runtime.  Failures of libnpu raise npu.Error with
libnpu's message.  Documentation/python.rst has the whole guide.
"""
import threading as _threading
from concurrent.futures import Future as _Future

from . import _npu
from ._npu import (Buffer, Context, Device, Error, IOInfo, NodeProfile, Op, Tensor,
                   devices, libnpu_version)

__all__ = ["Buffer", "Context", "Device", "Error", "IOInfo", "Model", "NodeProfile", "Op",
           "Tensor", "devices", "libnpu_version"]


class Model(_npu.Model):
    __doc__ = _npu.Model.__doc__
    __slots__ = ()

    def run_async(self, inputs):
        """Start a run and return a concurrent.futures.Future of its outputs.

        The future's result() is what run() returns, or raises the
        npu.Error it raises.  The run starts here: the inputs are checked
        now (TypeError and ValueError are raised here, as by run()) and
        bound, and must not change until the future is done; a thread
        waits for the run with the GIL released.  One run of a Model is in
        flight at a time: a second run_async() or run() waits for the
        first to end.
        """
        future = _Future()
        future.set_running_or_notify_cancel()
        try:
            self._start(inputs)
        except Error as e:      # libnpu refused the run: its outcome
            future.set_exception(e)
            return future

        def wait():
            try:
                outputs = self._finish()
            except BaseException as e:  # the caller sees it from result()
                future.set_exception(e)
            else:
                future.set_result(outputs)

        _threading.Thread(target=wait, name="npu-run-async", daemon=True).start()
        return future

    def __repr__(self):
        where = "cpu" if self.device is None else self.device.name
        ins = ", ".join("%s %s %s" % (i.name, i.dtype, i.shape) for i in self.inputs)
        return "<npu.Model on %s (%s)>" % (where, ins)
