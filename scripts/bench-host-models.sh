#!/bin/sh
# SPDX-License-Identifier: MIT
# The host side of `make bench` for the real models (Documentation/bench.rst):
#   bench-host-models.sh NPU_RUN ITERATIONS MODEL...
# For each model, and after each fp32 one its int8 version (<model>-int8,
# npu-quantize's QDQ file, which takes the same input), on the input its
# onnxruntime reference was computed from ($VNPU_CACHE/models/ref/<model>/in,
# the file the guest's b-model-* feeds npu-run), prints
#   onnxruntime <model>: median X ms, min X ms over N runs (T threads)
#   cpu-path <model>: npu-run --cpu median X ms over N runs (1 thread)
#   check cpu-path <model>: PASS max abs diff X | FAIL <why>
#   check cpu-path <model>-int8: PASS <e> of <n> elements equal, max diff <d> steps
#                                | FAIL <the first output out of tolerance>
#   check onnxruntime-all <model>-int8: the same, for onnxruntime's own
#                                outputs at its default level against the
#                                reference's ('extended')
# onnxruntime-node (tests/models/ort/bench.js, after one untimed run) with
# T intra-op threads, one inter-op thread, sequential, once per T in
# BENCH_ORT_THREADS; libnpu's CPU path on one thread (npu-run times every
# run; the median keeps the cold first one out), its outputs then held
# against onnxruntime's reference by the checks t-model-<model> makes in
# the guest (an int8 model's in quantization steps, check_int8).  Exits
# non-zero if a model failed to run or to match, after the others.
# shellcheck disable=SC1091
set -u
[ $# -ge 3 ] || { echo "usage: $0 NPU_RUN ITERATIONS MODEL..." >&2; exit 2; }
npu_run=$1
iterations=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VNPU_CACHE:-$HOME/.cache/vnpu}
# One thread per engine of the default device (qemu-device/vnpu.c,
# property "engines": 2) for the ratios that are goals, one for the
# informational ones and the CPU path's comparison.  bench-summary.py
# holds the count against the engines the guest's device reports, so a
# device booted with another count gives an error, not an unfair ratio.
ort_threads=${BENCH_ORT_THREADS:-1 2}
# models-lib.sh is the one place that knows each model's file and input.
VNPU_MODELS=$cache/models
. "$top/tests/guest/models/models-lib.sh"
# The checker `make models` builds for the host (tests/models), which
# models-lib.sh's checks run.
# shellcheck disable=SC2034
VNPU_MODELS_TOOL=${VNPU_BUILD:-$cache/build}/tests/models/bin/vnpu-models
# One thread for OpenBLAS too, should the engine's fp32 path call it.
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check_run MODEL OUTDIR: "PASS ..." or "FAIL ..." for a run's outputs, as
# the guest's b-model checks them; fails when they do not match.
check_run() {
	case $1 in
	*-int8)
		if check_int8 "$1" "$2"; then
			echo "PASS $(int8_summary)"
			return 0
		fi
		why=$(echo "$Q_LOG" | grep 'out of tolerance' | head -n 1)
		echo "FAIL ${why:-$(int8_summary): $(echo "$Q_LOG" | head -n 1)}"
		return 1
		;;
	esac
	check_outputs "$1" "$2"
}

# Each fp32 model is followed by its int8 version, unless that is named too.
models=
for m in "$@"; do
	models="$models $m"
	case $m in
	*-int8) continue ;;
	esac
	case " $* " in
	*" $m-int8 "*) ;;
	*) models="$models $m-int8" ;;
	esac
done

rc=0
for m in $models; do
	file=$(model_file "$m") || { echo "bench-host-models: unknown model $m" >&2; rc=1; continue; }
	for t in $ort_threads; do
		out=$(NODE_PATH=$VNPU_MODELS/ort/node_modules node "$top/tests/models/ort/bench.js" \
			"$m" "$file" "$VNPU_MODELS/ref/$m/in" "$iterations" "$t") || rc=1
		ran=$(echo "$out" | sed -n 's/^onnxruntime .*(\([0-9]*\) threads*)$/\1/p')
		if [ "$ran" = "$t" ]; then
			echo "$out"
		elif [ -n "$out" ]; then
			echo "$out" | sed 's/^/# /'
			echo "bench-host-models: onnxruntime ran $m with ${ran:-an unknown number of} thread(s), not $t" >&2
			rc=1
		fi
	done
	case $m in
	*-int8)
		# onnxruntime is timed at its default graph optimisation level,
		# 'all', as a user runs it; the int8 references are computed at
		# 'extended' (tests/models/Makefile says why).  Whether 'all'
		# gives the same bits, i.e. whether the time is that of the graph
		# the device is held against (informational):
		allout=$work/$m-ort-all
		if NODE_PATH=$VNPU_MODELS/ort/node_modules node "$top/tests/models/ref.js" \
			"$file" "$VNPU_MODELS/ref/$m/in" "$allout" all >/dev/null 2>&1; then
			echo "check onnxruntime-all $m: $(check_run "$m" "$allout")"
		else
			echo "check onnxruntime-all $m: FAIL tests/models/ref.js did not run the model at level 'all'"
		fi
		;;
	esac
	outdir=$work/$m
	out=$("$npu_run" "$file" --cpu --input "$(model_input "$m")=$(model_ref_input "$m")" \
		--iterations "$iterations" --output-dir "$outdir" 2>&1)
	ms=$(echo "$out" | sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
	if [ -n "$ms" ]; then
		echo "cpu-path $m: npu-run --cpu median $ms ms over $iterations runs (1 thread)"
		result=$(check_run "$m" "$outdir") || rc=1
		echo "check cpu-path $m: $result"
	else
		echo "$out" | tail -n 3 | sed 's/^/# /'
		echo "bench-host-models: npu-run --cpu failed on $m" >&2
		rc=1
	fi
done
exit $rc
