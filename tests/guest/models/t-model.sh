#!/bin/sh
# SPDX-License-Identifier: MIT
# A real model on the device (TAP), installed once per model as
# t-model-<model>, plus t-model-ppocr-pipeline:
#   t-model-blazeface-front|back  npu-run on onnxruntime's input, then
#       blazeface-check: every output within tolerance of onnxruntime's,
#       the astronaut's face found (score >= 0.8, IoU >= 0.9)
#   t-model-ppocr-det|cls|rec     npu-run on onnxruntime's input, the output
#       compared with onnxruntime's (vnpu-models compare)
#   t-model-vad  Silero VAD on a 32 ms window of espeak-ng's speech:
#       vad-check, both outputs within tolerance of onnxruntime's and the
#       window heard as speech
#   t-model-yolo  YOLOv8n on astronaut.png: yolo-check, the output within
#       tolerance of onnxruntime's, the same detections after decoding and
#       NMS, and the astronaut found as a person
#   t-model-ppocr-pipeline  page.png read on the device: det's output
#       placing the lines for cls and rec (ocr-cls-prep, ocr-rec-prep), then
#       ocr-check: same boxes, orientation and text as onnxruntime
# The device/CPU split and the latency go into each run's TAP line.  A
# model missing from models-expected-pass still runs; its failures are
# "not ok ... # TODO" with npu-run's reason (e.g. the op the importer lacks),
# and its passes "ok ... # TODO", which the harness counts as failures (an
# unexpected pass: the list is out of date).  A comparison with
# onnxruntime after a run that failed is skipped, with that reason.
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

name=${0##*/t-model-}
n=0
fail=0

# A layer without /models leaves t-model-* out (check-debug does), so
# running without the data is a broken initrd, not a skip.
if [ ! -d "$MODELS/ref" ]; then
	echo "not ok 1 - no model data in this initramfs ($MODELS: make check-guest appends it)"
	echo "1..1"
	exit 1
fi

# tap OK DESCRIPTION [WHY]: one result; WHY explains a failure.
tap() {
	n=$((n + 1))
	if [ "$expected" = 1 ]; then
		if [ "$1" = 1 ]; then
			echo "ok $n - $2"
		else
			echo "not ok $n - $2${3:+: $3}"
			fail=1
		fi
	elif [ "$1" = 1 ]; then
		echo "ok $n - $2 # TODO passes: add $listed to models-expected-pass"
	else
		echo "not ok $n - $2 # TODO not expected to pass yet ($listed not in models-expected-pass): ${3:-failed}"
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

diag() {
	echo "$1" | sed 's/^/# /'
}

work=/tmp/t-model-$name
rm -rf "$work" && mkdir -p "$work"

# run_and_check MODEL INPUT OUTDIR: the model's run and its comparison.
run_and_check() {
	if run_model "$1" "$2" "$3"; then
		tap 1 "$1 runs on the NPU: $(run_summary)"
	else
		tap 0 "$1 runs on the NPU" "$(run_reason "$1")"
		diag "$RUN_LOG"
		skip "$1 matches onnxruntime" "the model did not run"
		return 1
	fi
	diag "$RUN_LOG"
	case $1 in
	blazeface-*)
		out=$("$VNPU_MODELS_TOOL" blazeface-check "$MODELS/images/astronaut.png" \
			"$(blazeface_size "$1")" "$3" "$MODELS/ref/$1/out" 2>&1)
		rc=$?
		diag "$out"
		tap $((rc == 0)) "$1 finds the astronaut's face and matches onnxruntime (max abs diff $(max_abs_diff "$out"))" \
			"$(echo "$out" | grep '^check:' | tail -n 1)"
		;;
	vad)
		out=$("$VNPU_MODELS_TOOL" vad-check "$3" "$MODELS/ref/$1/out" 2>&1)
		rc=$?
		diag "$out"
		tap $((rc == 0)) "$1 hears speech and matches onnxruntime (max abs diff $(max_abs_diff "$out"))" \
			"$(echo "$out" | grep '^check:' | tail -n 1)"
		;;
	yolo)
		out=$("$VNPU_MODELS_TOOL" yolo-check "$MODELS/images/astronaut.png" 640 "$3" \
			"$MODELS/ref/$1/out" 2>&1)
		rc=$?
		diag "$out"
		tap $((rc == 0)) "$1 finds the astronaut as a person and matches onnxruntime (max abs diff $(max_abs_diff "$out"))" \
			"$(echo "$out" | grep '^check:' | tail -n 1)"
		;;
	ppocr-*)
		f=$(model_ref_output "$1")
		out=$("$VNPU_MODELS_TOOL" compare "$3/$f" "$MODELS/ref/$1/out/$f" 2>&1)
		rc=$?
		diag "$out"
		tap $((rc == 0)) "$1 matches onnxruntime (max abs diff $(max_abs_diff "$out"))" \
			"$(echo "$out" | tail -n 1)"
		;;
	esac
	return "$rc"
}

case $name in
blazeface-front|blazeface-back|ppocr-det|ppocr-cls|ppocr-rec|vad|yolo)
	expected=0
	listed=$name
	model_expected "$name" && expected=1
	run_and_check "$name" "$(model_ref_input "$name")" "$work/out"
	;;
ppocr-pipeline)
	expected=1
	listed=
	for m in ppocr-det ppocr-cls ppocr-rec; do
		model_expected "$m" || { expected=0; listed="$listed${listed:+, }$m"; }
	done
	page=$MODELS/images/page.png
	ok=1
	out=$("$VNPU_MODELS_TOOL" ocr-det-prep "$page" 0 "$work/det-x.npy" 2>&1) &&
		out=$("$VNPU_MODELS_TOOL" compare "$work/det-x.npy" "$MODELS/ref/ppocr-det/in/x.npy" 2>&1)
	rc=$?
	diag "$out"
	# The preparation needs no importer support: always a real check.
	pipeline_expected=$expected
	expected=1
	tap $((rc == 0)) "page.png prepared for det in the guest as on the host" "$out"
	expected=$pipeline_expected
	if ! run_model ppocr-det "$work/det-x.npy" "$work/det"; then
		ok=0
		why="ppocr-det: $(run_reason ppocr-det)"
	else
		diag "$RUN_LOG"
		det=$work/det/$(model_ref_output ppocr-det)
		"$VNPU_MODELS_TOOL" ocr-cls-prep "$page" "$det" "$work/cls-x.npy" ||
			{ ok=0; why="ocr-cls-prep failed on det's output"; }
	fi
	if [ $ok = 1 ] && ! run_model ppocr-cls "$work/cls-x.npy" "$work/cls"; then
		ok=0
		why="ppocr-cls: $(run_reason ppocr-cls)"
	elif [ $ok = 1 ]; then
		diag "$RUN_LOG"
		cls=$work/cls/$(model_ref_output ppocr-cls)
		"$VNPU_MODELS_TOOL" ocr-rec-prep "$page" "$det" "$cls" "$work/rec-x.npy" ||
			{ ok=0; why="ocr-rec-prep failed on det's and cls's outputs"; }
	fi
	if [ $ok = 1 ] && ! run_model ppocr-rec "$work/rec-x.npy" "$work/rec"; then
		ok=0
		why="ppocr-rec: $(run_reason ppocr-rec)"
	elif [ $ok = 1 ]; then
		diag "$RUN_LOG"
		rec=$work/rec/$(model_ref_output ppocr-rec)
		ref=$MODELS/ref
		out=$("$VNPU_MODELS_TOOL" ocr-check "$page" "$MODELS/ppocr/ppocr_keys_v1.txt" \
			"$det" "$cls" "$rec" "$ref/ppocr-det/out/sigmoid_0.tmp_0.npy" \
			"$ref/ppocr-cls/out/softmax_0.tmp_0.npy" \
			"$ref/ppocr-rec/out/softmax_11.tmp_0.npy" 2>&1) || ok=0
		diag "$out"
		why=$(echo "$out" | grep '^check:' | head -n 1)
		[ -n "$why" ] || why=$(echo "$out" | tail -n 1)
	fi
	tap $ok "det -> cls -> rec on the NPU read page.png as onnxruntime does (ocr-check)" "$why"
	;;
*)
	echo "not ok 1 - unknown model '$name' (installed under a name models-lib.sh does not know)"
	echo "1..1"
	exit 1
	;;
esac

rm -rf "$work"
echo "1..$n"
exit $fail
