#!/bin/sh
# SPDX-License-Identifier: MIT
# The npu package's pytest suite over the package built in @PYTHONPATH@,
# as TAP (python/Makefile fills in the paths).  Arguments go to pytest.
# No cache or bytecode is written into the checkout.
export PYTHONPATH="@PYTHONPATH@:@TESTS@${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export NPU_PY_DOC="${NPU_PY_DOC:-@DOC@}"
exec "@PYTHON@" -m pytest -p tap -p no:cacheprovider -q --rootdir="@TESTS@" \
	--import-mode=append "@TESTS@" "$@"
