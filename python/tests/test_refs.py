# SPDX-License-Identifier: MIT
"""Reference counts and memory: runs leak nothing, objects keep what they
need alive and let go of the rest."""
import gc
import sys
import tracemalloc

import numpy as np

import npu

A = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_runs_hold_no_references(add_model):
    m = npu.Model(add_model, cpu=True)
    a, b = A.copy(), A.copy()
    ra, rb = sys.getrefcount(a), sys.getrefcount(b)
    for _ in range(100):
        y = m.run({"a": a, "b": b})["y"]
    assert (sys.getrefcount(a), sys.getrefcount(b)) == (ra, rb)
    assert sys.getrefcount(y) == 2        # only ours: the model keeps no output
    f = m.run_async({"a": a, "b": b})
    f.result(timeout=60)
    del f
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(b)) == (ra, rb)


def test_no_growth_over_many_runs(add_model):
    m = npu.Model(add_model, cpu=True)
    feed = {"a": A, "b": A}
    for _ in range(50):
        m.run(feed)
    tracemalloc.start()
    try:
        first = tracemalloc.take_snapshot()
        for _ in range(2000):
            m.run(feed)
        for _ in range(50):
            m.run_async(feed).result(timeout=60)
        gc.collect()
        grown = sum(s.size_diff for s in
                    tracemalloc.take_snapshot().compare_to(first, "filename") if s.size_diff > 0)
    finally:
        tracemalloc.stop()
    # A leaked output array per run would be 2000 * (24 bytes + header).
    assert grown < 20000, grown


def test_no_growth_over_many_models(add_model):
    tracemalloc.start()
    try:
        npu.Model(add_model, cpu=True).run({"a": A, "b": A})
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            npu.Model(add_model, cpu=True).run({"a": A, "b": A})
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    assert grown < 20000, grown


def test_errors_leak_nothing(add_model):
    m = npu.Model(add_model, cpu=True)
    b64 = A.astype(np.float64)
    bad = {"a": A, "b": b64}
    rb = sys.getrefcount(b64)
    for _ in range(100):
        try:
            m.run(bad)
        except TypeError:
            pass
        try:
            npu.Model(b"\x00garbage", cpu=True)
        except npu.Error:
            pass
    assert sys.getrefcount(b64) == rb
