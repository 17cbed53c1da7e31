#!/bin/sh
# SPDX-License-Identifier: MIT
# A real model's latency on the device for `make bench`, installed once per
# model as b-model-<model>: npu-run --iterations N --profile on the input
# onnxruntime's reference was computed from (the host times onnxruntime on
# the same file), its outputs then held against that reference by the
# checks t-model-<model> makes.  Prints, besides one TAP result,
#   bench-model <model>: npu median <ms> ms over <n> runs, <e> engines
#   check device <model>: PASS max abs diff <x> | FAIL <why>
#   profile <model>: split: ...            (npu-run's device/CPU split)
#   profile <model>: profiled run: ...     (device and CPU time)
#   profile <model>: top <i>: #<n> <node> <op> on the <where>, <us> us, <macs> MACs
# which scripts/bench-summary.py turns into the model's ratio lines: the
# device's engine count (npu-info) is the thread count of the onnxruntime
# figure it is compared with, and a FAIL makes them errors.
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

name=${0##*/b-model-}
# The big models run fewer times: ppocr-rec takes seconds per run under TCG.
case $name in
ppocr-rec) ITERATIONS=${VNPU_BENCH_ITERATIONS_SLOW:-3} ;;
*) ITERATIONS=${VNPU_BENCH_ITERATIONS:-10} ;;
esac
TOP_NODES=5

if [ ! -d "$MODELS/ref" ]; then
	echo "1..0 # SKIP no model data in this initramfs (make bench appends it)"
	exit 0
fi
if ! model_file "$name" >/dev/null; then
	echo "1..0 # SKIP unknown model '$name'"
	exit 0
fi


out=/tmp/b-model-$name
if ! run_model "$name" "$(model_ref_input "$name")" "$out"; then
	echo "$RUN_LOG" | sed 's/^/# /'
	echo "not ok 1 - $name on the NPU: $(run_reason "$name")"
	echo "1..1"
	exit 1
fi
check=$(check_outputs "$name" "$out")
matched=$?
rm -rf "$out"
engines=$("$BIN/npu-info" 2>/dev/null | sed -n 's/^ *engines: *\([0-9][0-9]*\)$/\1/p' | head -n 1)
echo "bench-model $name: npu median $RUN_MS ms over $ITERATIONS runs${engines:+, $engines engines}"
echo "check device $name: $check"
echo "$RUN_LOG" | sed -n "s/^\(split: .*\)/profile $name: \1/p; s/^\(profiled run: .*\)/profile $name: \1/p"
# The per-node table: "#  node  op  where  seg  MACs  cycles  time-us  note";
# rows of nodes that ran (on the device or the CPU), slowest first.
# The node's number (#) finds it in the table: names are cut to 28 chars.
echo "$RUN_LOG" | awk '$1 ~ /^[0-9]+$/ && ($4 == "device" || $4 == "cpu") && NF >= 8 {
	print $8, $1, $2, $3, $4, $6 }' | sort -rn | head -n "$TOP_NODES" |
	awk -v m="$name" '{ printf "profile %s: top %d: #%s %s %s on the %s, %.1f us, %s MACs\n",
		m, NR, $2, $3, $4, $5, $1, $6 }'
if [ "$matched" != 0 ]; then
	echo "not ok 1 - $name on the NPU: its output does not match onnxruntime's: $check"
	echo "1..1"
	exit 1
fi
echo "ok 1 - $name on the NPU, output matches onnxruntime's: $(run_summary)"
echo "1..1"
