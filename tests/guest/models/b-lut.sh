#!/bin/sh
# SPDX-License-Identifier: MIT
# The table fold on the device (TAP; graph.rst "Tables"): each int8 model
# (npu-quantize's QDQ file, tests/models/Makefile) compiled with the fold
# and without it (npu-run --no-lut), each timed over ITERATIONS runs on
# the device on its fp32 model's reference input.  The two runs' outputs
# must be the same bytes.  Prints per model
#   bench-lut <model>: nodes <with> (without <n>), median <ms> ms (without <ms>),
#       min <ms> ms (without <ms>), modelled cycles <c> (without <c>)
# (the modelled cycles, the timing model's sum over the profiled run's
# jobs, do not depend on the host's load; the times do) and one TAP
# result: the outputs equal.
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

MODELS_LUT=${VNPU_LUT_MODELS:-"blazeface-front blazeface-back ppocr-det ppocr-cls ppocr-rec"}
n=0
fail=0

if [ ! -d "$MODELS/int8" ]; then
	echo "1..0 # SKIP no int8 models in this initramfs"
	exit 0
fi

# lut_run MODEL OUTDIR [--no-lut]: LUT_NODES, LUT_MS (median), LUT_MIN,
# LUT_CYCLES; false when it fails.
lut_run() {
	case $1 in
	ppocr-rec) it=${VNPU_BENCH_ITERATIONS_SLOW:-3} ;;
	*) it=${VNPU_BENCH_ITERATIONS:-10} ;;
	esac
	rm -rf "$2"
	lut_log=$("$NPU_RUN" "$(model_file "$1-int8")" \
		--input "$(model_input "$1")=$(model_ref_input "$1")" \
		--iterations "$it" --profile --output-dir "$2" ${3:+"$3"} 2>&1)
	lut_rc=$?
	LUT_NODES=$(echo "$lut_log" | sed -n 's/^split: [0-9]* of \([0-9]*\) nodes.*/\1/p')
	LUT_MS=$(echo "$lut_log" | sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
	LUT_MIN=$(echo "$lut_log" | sed -n 's/^latency: .* min \([0-9.]*\) ms.*/\1/p')
	LUT_CYCLES=$(echo "$lut_log" | sed -n 's/^profiled run: .*(\([0-9]*\) modelled cycles).*/\1/p')
	[ "$lut_rc" = 0 ] || echo "$lut_log" | tail -n 5 | sed 's/^/# /'
	[ "$lut_rc" = 0 ]
}

for m in $MODELS_LUT; do
	n=$((n + 1))
	if ! lut_run "$m" /tmp/b-lut-on; then
		echo "not ok $n - $m-int8 with and without tables: npu-run failed"
		fail=1
		continue
	fi
	on_nodes=$LUT_NODES on_ms=$LUT_MS on_min=$LUT_MIN on_cycles=$LUT_CYCLES
	if ! lut_run "$m" /tmp/b-lut-off --no-lut; then
		echo "not ok $n - $m-int8 with and without tables: npu-run --no-lut failed"
		fail=1
		continue
	fi
	echo "bench-lut $m-int8: nodes $on_nodes (without $LUT_NODES), median $on_ms ms (without $LUT_MS)," \
		"min $on_min ms (without $LUT_MIN), modelled cycles $on_cycles (without $LUT_CYCLES)"
	same=1
	for f in /tmp/b-lut-on/*.npy; do
		cmp -s "$f" "/tmp/b-lut-off/${f##*/}" || same=0
	done
	if [ "$same" = 1 ]; then
		echo "ok $n - $m-int8: the same output bytes with and without tables"
	else
		echo "not ok $n - $m-int8: the same output bytes with and without tables"
		fail=1
	fi
	rm -rf /tmp/b-lut-on /tmp/b-lut-off
done
echo "1..$n"
exit $fail
