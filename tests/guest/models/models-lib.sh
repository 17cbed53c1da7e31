# SPDX-License-Identifier: MIT
# Shared by the real-model guest tests (t-model-*) and the demo
# (models-demo); sourced, busybox sh.  The model data is at $MODELS (the
# archive `make check-guest` and `make demo` append to the initramfs, laid
# out like $VNPU_CACHE/models: Documentation/models.rst).

MODELS=${VNPU_MODELS:-/models}
BIN=${VNPU_TESTS_DIR:-/tests}
NPU_RUN=$BIN/npu-run
VNPU_MODELS_TOOL=$BIN/vnpu-models
# The one list of the models expected to pass on the device today; the
# others run too, their failures reported as TAP TODO (known failures).
EXPECTED=$BIN/models-expected-pass
# npu-run's timed runs per model; the latency reported is their median.
ITERATIONS=${VNPU_MODEL_ITERATIONS:-3}

# An int8 model (<model>-int8, tests/models/Makefile: npu-quantize's QDQ
# file) takes its fp32 model's input and pre- and postprocessing.
model_base() {
	echo "${1%-int8}"
}

model_file() {
	case $1 in
	*-int8) echo "$MODELS/int8/$(model_base "$1").onnx" ;;
	blazeface-front) echo "$MODELS/blazeface/face_detection_front_128x128_barracuda.onnx" ;;
	blazeface-back) echo "$MODELS/blazeface/face_detection_back_256x256_barracuda.onnx" ;;
	ppocr-det) echo "$MODELS/ppocr/ch_PP-OCRv4_det_infer.onnx" ;;
	ppocr-cls) echo "$MODELS/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" ;;
	ppocr-rec) echo "$MODELS/ppocr/ch_PP-OCRv4_rec_infer.onnx" ;;
	vad) echo "$MODELS/vad/silero_vad_v5.onnx" ;;
	vad-v4) echo "$MODELS/vad/silero_vad_legacy.onnx" ;;
	oww-mel) echo "$MODELS/audio/oww/melspectrogram.onnx" ;;
	oww-embed) echo "$MODELS/audio/oww/embedding_model.onnx" ;;
	oww-jarvis) echo "$MODELS/audio/oww/hey_jarvis_v0.1.onnx" ;;
	yolo) echo "$MODELS/yolo/yolov8n.onnx" ;;
	*) return 1 ;;
	esac
}

# The graph input's name, and the reference input (ref.js's naming): a
# file, or for a model of several inputs their directory, one
# <input>.npy each.
model_input() {
	case $(model_base "$1") in
	blazeface-*) echo "input:0" ;;
	ppocr-*) echo x ;;
	yolo) echo images ;;
	esac
}

model_ref_input() {
	case $1 in
	blazeface-*) echo "$MODELS/ref/$1/in/input_0.npy" ;;
	ppocr-*) echo "$MODELS/ref/$1/in/x.npy" ;;
	vad|vad-v4|oww-*) echo "$MODELS/ref/$1/in" ;;
	yolo) echo "$MODELS/ref/$1/in/images.npy" ;;
	esac
}

# The output the per-model comparison reads (BlazeFace: all four, by
# blazeface-check).
model_ref_output() {
	case $(model_base "$1") in
	ppocr-det) echo sigmoid_0.tmp_0.npy ;;
	ppocr-cls) echo softmax_0.tmp_0.npy ;;
	ppocr-rec) echo softmax_11.tmp_0.npy ;;
	yolo) echo output0.npy ;;
	vad-v4) echo output.npy ;;
	oww-mel) echo output.npy ;;
	oww-embed) echo conv2d_19.npy ;;
	oww-jarvis) echo 53.npy ;;
	esac
}

blazeface_size() {
	case $(model_base "$1") in
	blazeface-front) echo 128 ;;
	blazeface-back) echo 256 ;;
	esac
}

model_expected() {
	[ -f "$EXPECTED" ] && sed 's/#.*//; s/[[:space:]]//g' "$EXPECTED" | grep -qx "$1"
}

# run_model NAME INPUT OUTDIR: the model on the device with npu-run,
# timed (ITERATIONS runs) and profiled.  Sets
#   RUN_RC      npu-run's exit status (0 ran, 3 cannot be imported or
#               compiled yet, anything else failed)
#   RUN_LOG     its whole output
#   RUN_WHY     why it failed: npu-run's last error line
#   RUN_DEV RUN_NODES  nodes on the device, of all nodes that run
#   RUN_MACS_PCT RUN_MACS  share of the MACs on the device, all MACs
#   RUN_MS      median latency in ms
run_model() {
	RUN_DEV='' RUN_NODES='' RUN_MACS_PCT='' RUN_MACS='' RUN_MS='' RUN_WHY=''
	run_out=$3
	rm -rf "$3"
	if [ -d "$2" ]; then
		# One --input per file; these input names have no character
		# ref.js replaces.
		run_in=$2
		set -- "$(model_file "$1")"
		for run_file in "$run_in"/*.npy; do
			run_in_name=${run_file##*/}
			set -- "$@" --input "${run_in_name%.npy}=$run_file"
		done
	else
		set -- "$(model_file "$1")" --input "$(model_input "$1")=$2"
	fi
	RUN_LOG=$("$NPU_RUN" "$@" --iterations "$ITERATIONS" --profile --output-dir "$run_out" 2>&1)
	RUN_RC=$?
	# shellcheck disable=SC2046
	set -- $(echo "$RUN_LOG" | sed -n \
		's/^split: \([0-9]*\) of \([0-9]*\) nodes on the device, \([0-9.]*\)% of \([0-9]*\) MACs$/\1 \2 \3 \4/p')
	RUN_DEV=$1 RUN_NODES=$2 RUN_MACS_PCT=$3 RUN_MACS=$4
	RUN_MS=$(echo "$RUN_LOG" | sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
	if [ "$RUN_RC" = 0 ] && ! echo "$RUN_LOG" | grep -q '^model .*, on the NPU$'; then
		RUN_RC=1
		RUN_WHY="did not run on the NPU (no device?)"
	elif [ "$RUN_RC" != 0 ]; then
		RUN_WHY=$(echo "$RUN_LOG" | grep '^npu-run: ' | tail -n 1)
		[ -n "$RUN_WHY" ] || RUN_WHY="npu-run exited with status $RUN_RC"
	fi
	[ "$RUN_RC" = 0 ]
}

# Why the model did not run, without npu-run's prefix and the model's path.
run_reason() {
	echo "$RUN_WHY" | sed "s|^npu-run: ||; s|^$(model_file "$1"): ||"
}

# One line on how a run went: where it ran and how fast.
run_summary() {
	echo "$RUN_DEV of $RUN_NODES nodes on the device ($RUN_MACS_PCT% of $RUN_MACS MACs), median $RUN_MS ms over $ITERATIONS runs"
}

# max abs diff from a vnpu-models *-check or compare output (its last one).
max_abs_diff() {
	echo "$1" | sed -n 's/.*max abs diff \([^ ]*\).*/\1/p' | tail -n 1
}

# check_outputs MODEL OUTDIR: the outputs of a run against onnxruntime's
# reference, as t-model-<model> checks them; prints "PASS max abs diff X"
# or "FAIL <why>".  The benchmarks check what they time with it, in the
# guest (b-model) and on the host (scripts/bench-host-models.sh).
check_outputs() {
	if [ ! -x "$VNPU_MODELS_TOOL" ]; then
		echo "FAIL no checker: $VNPU_MODELS_TOOL is not built (make models)"
		return 1
	fi
	case $1 in
	blazeface-*)
		check_out=$("$VNPU_MODELS_TOOL" blazeface-check "$MODELS/images/astronaut.png" \
			"$(blazeface_size "$1")" "$2" "$MODELS/ref/$1/out" 2>&1)
		;;
	vad)
		check_out=$("$VNPU_MODELS_TOOL" vad-check "$2" "$MODELS/ref/$1/out" 2>&1)
		;;
	yolo)
		check_out=$("$VNPU_MODELS_TOOL" yolo-check "$MODELS/images/astronaut.png" 640 "$2" \
			"$MODELS/ref/$1/out" 2>&1)
		;;
	*)
		f=$(model_ref_output "$1")
		check_out=$("$VNPU_MODELS_TOOL" compare "$2/$f" "$MODELS/ref/$1/out/$f" 2>&1)
		;;
	esac
	check_rc=$?
	if [ "$check_rc" = 0 ]; then
		echo "PASS max abs diff $(max_abs_diff "$check_out")"
	else
		echo "FAIL $(echo "$check_out" | grep -v '^face [0-9]' | tr '\n' ';' | sed "s|$2/||g; s/;\$//; s/;/; /g")"
	fi
	return "$check_rc"
}

# check_int8 MODEL OUTDIR: an int8 run's outputs against onnxruntime's run
# of the same QDQ file on the same input, counted in quantization steps of
# each output (its last DequantizeLinear's scale, which the build wrote
# beside the reference as <output>.scale).  Sets Q_EQUAL and Q_TOTAL (equal
# elements, of all, over every quantized output), Q_STEPS (the largest
# difference in steps) and Q_LOG (vnpu-models compare-q's lines); returns
# compare-q's verdict: >= 99.9% equal and at most 1 step off, every output.
# An output a float node makes (no .scale) is held to the fp32 tolerance
# (vnpu-models compare) instead.
check_int8() {
	Q_EQUAL=0 Q_TOTAL=0 Q_STEPS=0 Q_LOG='' q_rc=0
	if [ ! -x "$VNPU_MODELS_TOOL" ]; then
		Q_LOG="no checker: $VNPU_MODELS_TOOL is not built (make models)"
		return 1
	fi
	for q_ref in "$MODELS/ref/$1/out"/*.npy; do
		if [ ! -f "$q_ref" ]; then
			Q_LOG="no reference in $MODELS/ref/$1/out (make models)"
			return 1
		fi
		q_name=${q_ref##*/}
		q_scale=${q_ref%.npy}.scale
		if [ ! -f "$q_scale" ]; then
			q_out=$("$VNPU_MODELS_TOOL" compare "$2/$q_name" "$q_ref" 2>&1) || q_rc=1
			Q_LOG="$Q_LOG${Q_LOG:+
}$(echo "$q_out" | sed "s|^$2/||") (a float output)"
			continue
		fi
		q_out=$("$VNPU_MODELS_TOOL" compare-q "$2/$q_name" "$q_ref" "$(cat "$q_scale")" 2>&1) ||
			q_rc=1
		Q_LOG="$Q_LOG${Q_LOG:+
}$(echo "$q_out" | sed "s|^$2/||")"
		# shellcheck disable=SC2046
		set -- "$1" "$2" $(echo "$q_out" | sed -n \
			's/.*: \([0-9]*\) of \([0-9]*\) elements equal, max diff \([0-9a-z.]*\) steps.*/\1 \2 \3/p')
		if [ $# != 5 ]; then
			q_rc=1
			continue
		fi
		Q_EQUAL=$((Q_EQUAL + $3)) Q_TOTAL=$((Q_TOTAL + $4)) Q_STEPS=$(max_of "$5" "$Q_STEPS")
		set -- "$1" "$2"
	done
	return $q_rc
}

# "<e> of <n> elements equal, max diff <d> steps", check_int8's figures
int8_summary() {
	echo "$Q_EQUAL of $Q_TOTAL elements equal, max diff $Q_STEPS steps"
}

# larger of two max abs diffs (as awk reads numbers, inf included)
max_of() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || a + 0 >= b + 0) print a; else print b }'
}

# send_file PATH: hand a file to the host over the console
# (scripts/guest-run.py --out-dir decodes it).
send_file() {
	echo "VNPU-FILE-BEGIN ${1##*/} $(wc -c < "$1") $(sha256sum "$1" | cut -d' ' -f1)"
	base64 "$1"
	echo "VNPU-FILE-END ${1##*/}"
}
