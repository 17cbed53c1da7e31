#!/bin/sh
# SPDX-License-Identifier: MIT
# The host side of `make bench` for the real models (Documentation/bench.rst):
#   bench-host-models.sh NPU_RUN ITERATIONS MODEL...
# For each model, on the input its onnxruntime reference was computed
# from ($VNPU_CACHE/models/ref/<model>/in, the file the guest's b-model-*
# feeds npu-run), prints
#   onnxruntime <model>: median X ms, min X ms over N runs (1 thread)
#   cpu-path <model>: npu-run --cpu median X ms over N runs (1 thread)
# onnxruntime-node with one intra-op and one inter-op thread, sequential
# (tests/models/ort/bench.js, after one untimed run), and libnpu's CPU path
# on one thread (npu-run times every run; the median keeps the cold first
# one out).  Exits non-zero if a model failed to run, after the others.
# shellcheck disable=SC1091
set -u
[ $# -ge 3 ] || { echo "usage: $0 NPU_RUN ITERATIONS MODEL..." >&2; exit 2; }
npu_run=$1
iterations=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VNPU_CACHE:-$HOME/.cache/vnpu}
# models-lib.sh is the one place that knows each model's file and input.
VNPU_MODELS=$cache/models
. "$top/tests/guest/models/models-lib.sh"
# One thread for OpenBLAS too, while the engine's fp32 path calls it.
export OPENBLAS_NUM_THREADS=1
rc=0
for m in "$@"; do
	file=$(model_file "$m") || { echo "bench-host-models: unknown model $m" >&2; rc=1; continue; }
	NODE_PATH=$VNPU_MODELS/ort/node_modules node "$top/tests/models/ort/bench.js" \
		"$m" "$file" "$VNPU_MODELS/ref/$m/in" "$iterations" || rc=1
	out=$("$npu_run" "$file" --cpu --input "$(model_input "$m")=$(model_ref_input "$m")" \
		--iterations "$iterations" 2>&1)
	ms=$(echo "$out" | sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
	if [ -n "$ms" ]; then
		echo "cpu-path $m: npu-run --cpu median $ms ms over $iterations runs (1 thread)"
	else
		echo "$out" | tail -n 3 | sed 's/^/# /'
		echo "bench-host-models: npu-run --cpu failed on $m" >&2
		rc=1
	fi
done
exit $rc
