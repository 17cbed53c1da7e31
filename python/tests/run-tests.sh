#!/bin/sh
# SPDX-License-Identifier: MIT
# The npu package's pytest suite over the sanitized build of the package
# in @PYTHONPATH@, as TAP (python/Makefile fills in the paths).  Arguments go to pytest.
# No cache or bytecode is written into the checkout.
export PYTHONPATH="@PYTHONPATH@:@TESTS@${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export NPU_PY_DOC="${NPU_PY_DOC:-@DOC@}"
# The extension is built with ASan, the interpreter is not: its runtime
# must be loaded first.  CPython frees little at exit, so LeakSanitizer
# would only report the interpreter; the tests count references instead.
export LD_PRELOAD="@LIBASAN@${LD_PRELOAD:+ $LD_PRELOAD}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
exec "@PYTHON@" -m pytest -p tap -p no:cacheprovider -q --rootdir="@TESTS@" \
	--import-mode=append "@TESTS@" "$@"
