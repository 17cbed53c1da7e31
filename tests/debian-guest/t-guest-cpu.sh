#!/bin/sh
# The guest CPU against the Debian userspace it runs.  QEMU 7.2's TCG
# emulates the AVX masked moves (vmaskmovps, vpmaskmovd) by touching every
# element, so one whose masked-out elements lie past the end of a mapping
# faults where a real CPU does not; numpy's AVX and AVX2 loops load an
# array's tail that way, and numpy crashed on a 15-element array (python3-
# npu's test_gemm_with_bias_and_fused_relu, in np.maximum) when the next
# page happened to be unmapped.  scripts/debian-guest-test.sh boots this
# guest on a CPU model without AVX for that; here an array ends right
# before a page with no access, so that a faulting tail load crashes on
# every run rather than now and then.
python3 - <<'PY'
import ctypes
import mmap

import numpy as np

features = np.core._multiarray_umath.__cpu_features__
print("# numpy %s, SIMD in use: %s" % (np.__version__, " ".join(k for k, v in features.items() if v)))
page = mmap.PAGESIZE
area = mmap.mmap(-1, 2 * page)
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
base = ctypes.addressof(ctypes.c_char.from_buffer(area))
n = 0
for count in (15, 7, 3):
    guard = libc.mprotect(base + page, page, 0)  # PROT_NONE
    x = np.frombuffer(area, np.float32, count, page - 4 * count)
    x[:] = np.arange(count, dtype=np.float32) - count // 2
    got = np.maximum(x, 0)
    want = [max(v - count // 2, 0) for v in range(count)]
    n += 1
    ok = guard == 0 and got.tolist() == want
    print("%s %d - np.maximum over %d float32 ending at a page with no access: %s" % (
        "ok" if ok else "not ok", n, count,
        "mprotect failed, errno %d" % ctypes.get_errno() if guard else got.tolist()))
    libc.mprotect(base + page, page, mmap.PROT_READ | mmap.PROT_WRITE)
print("1..%d" % n)
PY
