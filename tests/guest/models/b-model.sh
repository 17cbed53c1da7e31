#!/bin/sh
# SPDX-License-Identifier: MIT
# A real model's latency on the device for `make bench`, installed once per
# model as b-model-<model>: npu-run --iterations N --profile on the input
# onnxruntime's reference was computed from (the host times onnxruntime on
# the same file), its outputs then held against that reference by the
# checks t-model-<model> makes; then the same for the model's int8 version
# (<model>-int8, npu-quantize's QDQ file, on the same input), its outputs
# held against onnxruntime's run of that file in quantization steps
# (check_int8), so that the fp32 and int8 medians come from one boot.
# Prints, per model, besides one TAP result,
#   bench-model <model>: npu median <ms> ms over <n> runs, <e> engines
#   check device <model>: PASS max abs diff <x> | FAIL <why>
#   check device <model>-int8: PASS <e> of <n> elements equal, max diff <d> steps
#                              | FAIL <the first output out of tolerance>
#   profile <model>: split: ...            (npu-run's device/CPU split)
#   profile <model>: profiled run: ...     (device and CPU time)
#   profile <model>: top <i>: #<n> <node> <op> on the <where>, <us> us, <macs> MACs
# which scripts/bench-summary.py turns into the model's ratio lines: the
# device's engine count (npu-info) is the thread count of the onnxruntime
# figure it is compared with, and a FAIL marks them.  An int8 model not in
# models-expected-pass that does not match is a known failure (TAP TODO),
# as in t-model; it is timed all the same.
# For the models of MULTI_MODELS, when the guest has two devices (make
# bench boots with two), the throughput of npu-run --batch on device 0
# alone and on both devices (npu_group: one copy of the model per
# device), the two-device run's outputs checked like the others:
#   bench-multi <model>: 1 device <r1> inputs/s, 2 devices <r2> inputs/s over <n> requests
#   ratio two-devices-vs-one-<model>: <r2/r1>x (goal >= 1.6x) | ERROR <why>
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

name=${0##*/b-model-}
TOP_NODES=5
# Issue 24's data-parallel models, and its goal for two devices over one.
MULTI_MODELS="blazeface-back ppocr-det"
MULTI_GOAL=1.6
# Issue 24's pipeline model (one stage per device), and the goal of its
# modelled throughput (device cycles from the timing model) over one device.
PIPELINE_MODELS="ppocr-rec"
PIPELINE_MODELLED_GOAL=1.9
# VNPU_BENCH_PARTS: only these parts (latency, pipeline, multi, int8), e.g.
# guest-run.py --append VNPU_BENCH_PARTS=pipeline (the kernel hands a
# parameter it does not know to init's environment); all by default.
part() {
	case " ${VNPU_BENCH_PARTS:-latency pipeline multi int8} " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

if [ ! -d "$MODELS/ref" ]; then
	echo "1..0 # SKIP no model data in this initramfs (make bench appends it)"
	exit 0
fi
if ! model_file "$name" >/dev/null; then
	echo "1..0 # SKIP unknown model '$name'"
	exit 0
fi

engines=$("$BIN/npu-info" 2>/dev/null | sed -n 's/^ *engines: *\([0-9][0-9]*\)$/\1/p' | head -n 1)
n=0
fail=0

# tap OK DESCRIPTION [TODO]: one result; TODO makes a failure a known one.
tap() {
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	elif [ -n "${3:-}" ]; then
		echo "not ok $n - $2 # TODO $3"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}

# bench MODEL: time MODEL on the device, check its outputs, print its lines
# and its TAP result.
bench() {
	# The big models run fewer times: ppocr-rec takes seconds per run under TCG.
	case $1 in
	ppocr-rec*) ITERATIONS=${VNPU_BENCH_ITERATIONS_SLOW:-3} ;;
	*) ITERATIONS=${VNPU_BENCH_ITERATIONS:-10} ;;
	esac
	todo=
	case $1 in
	*-int8) model_expected "$1" || todo="not in models-expected-pass yet" ;;
	esac
	out=/tmp/b-model-$1
	if ! run_model "$1" "$(model_ref_input "$1")" "$out"; then
		echo "$RUN_LOG" | sed 's/^/# /'
		tap 0 "$1 on the NPU: $(run_reason "$1")" "$todo"
		return
	fi
	case $1 in
	*-int8)
		if check_int8 "$1" "$out"; then
			check="PASS $(int8_summary)"
			matched=0
		else
			why=$(echo "$Q_LOG" | grep 'out of tolerance' | head -n 1)
			check="FAIL ${why:-$(int8_summary): $(echo "$Q_LOG" | head -n 1)}"
			matched=1
		fi
		;;
	*)
		check=$(check_outputs "$1" "$out")
		matched=$?
		;;
	esac
	rm -rf "$out"
	echo "bench-model $1: npu median $RUN_MS ms over $ITERATIONS runs${engines:+, $engines engines}"
	echo "check device $1: $check"
	echo "$RUN_LOG" | sed -n "s/^\(split: .*\)/profile $1: \1/p; s/^\(profiled run: .*\)/profile $1: \1/p"
	# The per-node table: "#  node  op  where  seg  MACs  cycles  time-us  note";
	# rows of nodes that ran (on the device or the CPU), slowest first.
	# The node's number (#) finds it in the table: names are cut to 28 chars.
	echo "$RUN_LOG" | awk '$1 ~ /^[0-9]+$/ && ($4 == "device" || $4 == "cpu") && NF >= 8 {
		print $8, $1, $2, $3, $4, $6 }' | sort -rn | head -n "$TOP_NODES" |
		awk -v m="$1" '{ printf "profile %s: top %d: #%s %s %s on the %s, %.1f us, %s MACs\n",
			m, NR, $2, $3, $4, $5, $1, $6 }'
	if [ "$matched" != 0 ]; then
		tap 0 "$1 on the NPU: its output does not match onnxruntime's: $check" "$todo"
	else
		tap 1 "$1 on the NPU, output matches onnxruntime's: $(run_summary)"
	fi
}

# batch_rate MODEL DEVICES OUTDIR: BATCH_RATE, the requests per second of
# npu-run --batch on DEVICES (its outputs in OUTDIR), or "" and BATCH_WHY.
# BATCH_EXTRA: more npu-run options (--pipeline).
batch_rate() {
	if [ -d "$(model_ref_input "$1")" ]; then
		set -- "$1" "$2" "$3" "$(model_ref_input "$1")"
		batch_in=""
		for f in "$4"/*.npy; do
			g=${f##*/}
			batch_in="$batch_in --input ${g%.npy}=$f"
		done
	else
		batch_in="--input $(model_input "$1")=$(model_ref_input "$1")"
	fi
	# shellcheck disable=SC2086
	BATCH_LOG=$("$NPU_RUN" "$(model_file "$1")" $batch_in --devices "$2" \
		--batch "$MULTI_REQUESTS" --output-dir "$3" $BATCH_EXTRA 2>&1)
	rc=$?
	echo "$BATCH_LOG" | sed "s/^/# $1 --devices $2: /"
	BATCH_WHY=
	BATCH_RATE=
	if [ $rc != 0 ]; then
		BATCH_WHY="npu-run --devices $2 --batch exited with status $rc: $(echo "$BATCH_LOG" |
			grep '^npu-run: ' | tail -n 1)"
	elif ! echo "$BATCH_LOG" | grep -q '^model .*, on the NPU$'; then
		BATCH_WHY="npu-run --devices $2 did not run on the NPU"
	else
		BATCH_RATE=$(echo "$BATCH_LOG" | sed -n 's/^batch: .*: \([0-9.]*\) inputs\/s$/\1/p')
	fi
}

# multi MODEL: one device's throughput against two devices'.
multi() {
	MULTI_REQUESTS=${VNPU_BENCH_MULTI_REQUESTS:-40}
	ratio="ratio two-devices-vs-one-$1"
	batch_rate "$1" 0 "/tmp/b-multi-1-$1"
	r1=$BATCH_RATE why1=$BATCH_WHY
	batch_rate "$1" 0,1 "/tmp/b-multi-2-$1"
	r2=$BATCH_RATE why2=$BATCH_WHY
	if [ -z "$r1" ] || [ -z "$r2" ]; then
		echo "$ratio: ERROR ${why1:-$why2}"
		tap 0 "$1 on two devices: ${why1:-$why2}"
		rm -rf "/tmp/b-multi-1-$1" "/tmp/b-multi-2-$1"
		return
	fi
	check=$(check_outputs "$1" "/tmp/b-multi-2-$1")
	matched=$?
	rm -rf "/tmp/b-multi-1-$1" "/tmp/b-multi-2-$1"
	echo "bench-multi $1: 1 device $r1 inputs/s, 2 devices $r2 inputs/s over $MULTI_REQUESTS requests"
	if [ "$matched" != 0 ]; then
		echo "$ratio: ERROR the two-device run's output does not match onnxruntime's: $check"
		tap 0 "$1 on two devices: $check"
		return
	fi
	awk -v a="$r2" -v b="$r1" -v r="$ratio" -v g="$MULTI_GOAL" \
		'BEGIN { printf "%s: %.2fx (goal >= %sx)\n", r, a / b, g }'
	tap 1 "$1 on two devices, output matches onnxruntime's: $r1 -> $r2 inputs/s"
}

# cycles_per_request LOG DEVICE: the modelled device cycles per request
# (or per stage run) of DEVICE in an npu-run --batch log.
cycles_per_request() {
	echo "$1" | sed -n "s/^device $2 (accel[0-9]*): \([0-9]*\) requests, .*, \([0-9]*\) device cycles.*/\1 \2/p" |
		awk '$1 > 0 { printf "%.0f", $2 / $1 }'
}

# pipeline MODEL: one device's throughput against the model split in two
# stages over two devices (npu-run --pipeline), measured here and modelled
# from the devices' cycle counts: a pipeline's rate is its slower stage's.
pipeline() {
	MULTI_REQUESTS=${VNPU_BENCH_PIPELINE_REQUESTS:-8}
	ratio="ratio two-devices-pipeline-vs-one-$1"
	batch_rate "$1" 0 "/tmp/b-pipe-1-$1"
	r1=$BATCH_RATE why1=$BATCH_WHY log1=$BATCH_LOG
	BATCH_EXTRA=--pipeline
	batch_rate "$1" 0,1 "/tmp/b-pipe-2-$1"
	BATCH_EXTRA=
	r2=$BATCH_RATE why2=$BATCH_WHY log2=$BATCH_LOG
	if [ -z "$r1" ] || [ -z "$r2" ]; then
		echo "$ratio: ERROR ${why1:-$why2}"
		echo "$ratio-modelled: ERROR ${why1:-$why2}"
		tap 0 "$1 in a two-device pipeline: ${why1:-$why2}"
		rm -rf "/tmp/b-pipe-1-$1" "/tmp/b-pipe-2-$1"
		return
	fi
	check=$(check_outputs "$1" "/tmp/b-pipe-2-$1")
	matched=$?
	rm -rf "/tmp/b-pipe-1-$1" "/tmp/b-pipe-2-$1"
	echo "$log2" | sed -n "s/^\(stage [0-9]*: .*\)/bench-pipeline $1: \1/p"
	echo "bench-pipeline $1: 1 device $r1 inputs/s, 2-stage pipeline $r2 inputs/s over $MULTI_REQUESTS requests"
	if [ "$matched" != 0 ]; then
		echo "$ratio: ERROR the pipeline's output does not match onnxruntime's: $check"
		tap 0 "$1 in a two-device pipeline: $check"
		return
	fi
	# measured: inputs per second in this guest, both devices QEMU threads on the host's cores
	awk -v a="$r2" -v b="$r1" -v r="$ratio" -v g="$MULTI_GOAL" \
		'BEGIN { printf "%s: %.2fx (goal >= %sx)\n", r, a / b, g }'
	c=$(cycles_per_request "$log1" 0)
	c0=$(cycles_per_request "$log2" 0)
	c1=$(cycles_per_request "$log2" 1)
	if [ -n "$c" ] && [ -n "$c0" ] && [ -n "$c1" ] && [ "$c0$c1" != 00 ]; then
		echo "bench-pipeline $1: modelled device throughput from the timing model: $c cycles per input on one device, stages $c0 + $c1 on two; the slower stage sets the rate"
		awk -v c="$c" -v a="$c0" -v b="$c1" -v r="$ratio-modelled" -v g="$PIPELINE_MODELLED_GOAL" \
			'BEGIN { m = a > b ? a : b; printf "%s: %.2fx (goal >= %sx)\n", r, c / m, g }'
	else
		echo "$ratio-modelled: ERROR npu-run printed no device cycles (one device: '${c}', stages: '${c0}' '${c1}')"
	fi
	tap 1 "$1 in a two-device pipeline, output matches onnxruntime's: $r1 -> $r2 inputs/s"
}

part latency && bench "$name"
case " $PIPELINE_MODELS " in
*" $name "*)
	if ! part pipeline; then
		:
	elif [ -e /dev/accel/accel1 ]; then
		pipeline "$name"
	else
		echo "ratio two-devices-pipeline-vs-one-$name: ERROR the guest has one device (make bench boots with two)"
		tap 0 "$name in a two-device pipeline: the guest has one device"
	fi
	;;
esac
case " $MULTI_MODELS " in
*" $name "*)
	if ! part multi; then
		:
	elif [ -e /dev/accel/accel1 ]; then
		multi "$name"
	else
		echo "ratio two-devices-vs-one-$name: ERROR the guest has one device (make bench boots with two)"
		tap 0 "$name on two devices: the guest has one device"
	fi
	;;
esac
# The int8 version of an fp32 model, when the initramfs has it (make
# bench's does: tests/models/Makefile builds the five).
case $name in
*-int8) ;;
*)
	if ! part int8; then
		:
	elif [ -f "$(model_file "$name-int8")" ]; then
		bench "$name-int8"
	else
		tap 0 "$name-int8 on the NPU: no $(model_file "$name-int8") in this initramfs (make models)"
	fi
	;;
esac
echo "1..$n"
exit $fail
