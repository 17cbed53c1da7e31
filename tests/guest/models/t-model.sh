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
#   t-model-vad-v4  Silero VAD v4 (LSTM; Ifs on the sample rate) on v5's
#       window: its output compared with onnxruntime's (vnpu-models compare)
#   t-model-oww-mel|oww-embed|oww-jarvis  openWakeWord's three stages on
#       espeak-ng's "Hey Jarvis", each on onnxruntime's input: the output
#       compared with onnxruntime's; the classifier's If (a verifier run
#       when the first score passes 0.5) decided on the device's score
#   t-model-ppocr-pipeline  page.png read on the device: det's output
#       placing the lines for cls and rec (ocr-cls-prep, ocr-rec-prep), then
#       ocr-check: same boxes, orientation and text as onnxruntime
#   t-model-<model>-int8  the five models above quantized (npu-quantize,
#       tests/models/Makefile) on the fp32 reference's input: the output
#       against onnxruntime's run of the same QDQ file in quantization
#       steps (check_int8: >= 99.9% equal, <= 1 step off); BlazeFace also
#       finds the astronaut's face where fp32 onnxruntime does
#       (blazeface-check --task-only: score >= 0.8, IoU >= 0.9)
#   t-model-ppocr-pipeline-int8  the pipeline with the int8 models: the
#       same lines, orientation and text as fp32 onnxruntime
#       (ocr-check --task-only)
# The device/CPU split and the latency go into each run's TAP line.  A
# model missing from models-expected-pass still runs; its failures are
# "not ok ... # TODO" with npu-run's reason (e.g. the op the importer lacks),
# its passing checks plain "ok", and when every check passes one more line
# "ok ... # TODO" says so, which the harness counts as a failure (an
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
		# one check of a model not expected to pass: it may well pass
		# (it runs on the NPU, its task is done) while another fails
		echo "ok $n - $2"
	else
		echo "not ok $n - $2 # TODO not expected to pass yet ($listed not in models-expected-pass): ${3:-failed}"
		unlisted_failed=1
	fi
}
unlisted_failed=0

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
	ppocr-*|vad-v4|oww-*)
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

# run_and_check_int8 MODEL: an int8 model's run on its reference input and
# its checks.
run_and_check_int8() {
	if run_model "$1" "$(model_ref_input "$1")" "$work/out"; then
		tap 1 "$1 runs on the NPU: $(run_summary)"
	else
		tap 0 "$1 runs on the NPU" "$(run_reason "$1")"
		diag "$RUN_LOG"
		skip "$1 matches onnxruntime" "the model did not run"
		return 1
	fi
	diag "$RUN_LOG"
	check_int8 "$1" "$work/out"
	rc=$?
	diag "$Q_LOG"
	tap $((rc == 0)) "$1 matches onnxruntime running the same int8 model ($(int8_summary))" \
		"$(echo "$Q_LOG" | grep 'out of tolerance' | head -n 1)"
	case $1 in
	blazeface-*)
		base=$(model_base "$1")
		out=$("$VNPU_MODELS_TOOL" blazeface-check "$MODELS/images/astronaut.png" \
			"$(blazeface_size "$1")" "$work/out" "$MODELS/ref/$base/out" --task-only 2>&1)
		frc=$?
		diag "$out"
		tap $((frc == 0)) "$1 finds the astronaut's face as $base does in onnxruntime" \
			"$(echo "$out" | grep '^check:' | tail -n 1)"
		[ $frc = 0 ] || rc=$frc
		;;
	esac
	return "$rc"
}

case $name in
blazeface-front-int8|blazeface-back-int8|ppocr-det-int8|ppocr-cls-int8|ppocr-rec-int8)
	expected=0
	listed=$name
	model_expected "$name" && expected=1
	run_and_check_int8 "$name"
	;;
blazeface-front|blazeface-back|ppocr-det|ppocr-cls|ppocr-rec|vad|yolo|vad-v4|oww-mel|oww-embed|\
oww-jarvis)
	expected=0
	listed=$name
	model_expected "$name" && expected=1
	run_and_check "$name" "$(model_ref_input "$name")" "$work/out"
	;;
ppocr-pipeline|ppocr-pipeline-int8)
	# -int8: the int8 models, read against fp32 onnxruntime's text
	q=${name#ppocr-pipeline}
	expected=1
	listed=
	# The task check as well as each model: int8 PP-OCR matches
	# onnxruntime's int8 bit for bit and still misreads page.png as
	# onnxruntime's int8 does (models.rst), so it has a line of its own.
	for m in ppocr-det$q ppocr-cls$q ppocr-rec$q ppocr-pipeline$q; do
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
	if ! run_model "ppocr-det$q" "$work/det-x.npy" "$work/det"; then
		ok=0
		why="ppocr-det$q: $(run_reason "ppocr-det$q")"
	else
		diag "$RUN_LOG"
		det=$work/det/$(model_ref_output ppocr-det)
		"$VNPU_MODELS_TOOL" ocr-cls-prep "$page" "$det" "$work/cls-x.npy" ||
			{ ok=0; why="ocr-cls-prep failed on det's output"; }
	fi
	if [ $ok = 1 ] && ! run_model "ppocr-cls$q" "$work/cls-x.npy" "$work/cls"; then
		ok=0
		why="ppocr-cls$q: $(run_reason "ppocr-cls$q")"
	elif [ $ok = 1 ]; then
		diag "$RUN_LOG"
		cls=$work/cls/$(model_ref_output ppocr-cls)
		"$VNPU_MODELS_TOOL" ocr-rec-prep "$page" "$det" "$cls" "$work/rec-x.npy" ||
			{ ok=0; why="ocr-rec-prep failed on det's and cls's outputs"; }
	fi
	if [ $ok = 1 ] && ! run_model "ppocr-rec$q" "$work/rec-x.npy" "$work/rec"; then
		ok=0
		why="ppocr-rec$q: $(run_reason "ppocr-rec$q")"
	elif [ $ok = 1 ]; then
		diag "$RUN_LOG"
		rec=$work/rec/$(model_ref_output ppocr-rec)
		ref=$MODELS/ref
		out=$("$VNPU_MODELS_TOOL" ocr-check "$page" "$MODELS/ppocr/ppocr_keys_v1.txt" \
			"$det" "$cls" "$rec" "$ref/ppocr-det/out/sigmoid_0.tmp_0.npy" \
			"$ref/ppocr-cls/out/softmax_0.tmp_0.npy" \
			"$ref/ppocr-rec/out/softmax_11.tmp_0.npy" ${q:+--task-only} 2>&1) || ok=0
		diag "$out"
		why=$(echo "$out" | grep '^check:' | head -n 1)
		[ -n "$why" ] || why=$(echo "$out" | tail -n 1)
	fi
	tap $ok "det$q -> cls$q -> rec$q on the NPU read page.png as fp32 onnxruntime does (ocr-check${q:+ --task-only})" "$why"
	;;
*)
	echo "not ok 1 - unknown model '$name' (installed under a name models-lib.sh does not know)"
	echo "1..1"
	exit 1
	;;
esac

# A model not expected to pass that passed every check: the list is out
# of date, which the harness counts as a failure (an unexpected pass).
if [ "$expected" = 0 ] && [ $unlisted_failed = 0 ] && [ $n -gt 0 ]; then
	n=$((n + 1))
	echo "ok $n - $name passes every check # TODO passes: add $listed to models-expected-pass"
fi
rm -rf "$work"
echo "1..$n"
exit $fail
