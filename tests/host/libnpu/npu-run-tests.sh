#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host tests of npu-run (built with ASan/UBSan) and of the graph guide's
# example program; TAP on stdout.  Installed by libnpu/Makefile with the
# binaries' paths filled in.
#
#   1. (Debian's ONNX backend tests, all 1,072 of them, run through
#      npu-run in tests/onnx/onnx-backend.sh, the conformance layer.)
#   2. npu-run's options: --output-dir writes .npy files (creating the
#      directory's parents) that --expect reads back, --iterations and
#      --profile print their reports (no p99 below 100 runs); int64, bool
#      and float64 outputs match the ONNX tests' expected .pb and make a
#      round trip through .npy; which inputs are constants of the model
#      (int64 and bool; --const, --runtime; inputs the importer fixes to
#      their values); the exit statuses of Documentation/npu-run.rst: a
#      wrong --expect is a mismatch (exit 1, with npu-run's message, never
#      a crash), bad arguments exit 2, a missing model 3.
#   3. Documentation/graph.rst's example program runs and checks itself.
#   4. The real models (Documentation/models.rst; `make models` puts them
#      in $VNPU_CACHE/models) run through npu-run on the CPU fallback and
#      vnpu-models holds the outputs against onnxruntime's (its tolerance,
#      and for BlazeFace the face found).  Every model must run: a refusal
#      fails like any other error, and so does a missing model directory
#      (check-host fetches them first: make models).
set -uo pipefail
NPU_RUN=@NPU_RUN@
# the same tool without sanitizers, to sort out unsupported models quickly
NPU_RUN_FAST=@NPU_RUN_FAST@
GRAPH_EXAMPLE=@GRAPH_EXAMPLE@
SWISH_SO=@SWISH_SO@
ONNX_DATA=${ONNX_DATA:-/usr/share/libonnx-testdata/data/node}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}


n=0
fails=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
notok() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "not ok $n - $1"
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# 2. Options
dir=$ONNX_DATA/test_conv_with_strides_padding
if [ -d "$dir" ]; then
	if "$NPU_RUN" "$dir/model.onnx" --input "x=$dir/test_data_set_0/input_0.pb" \
		--input "W=$dir/test_data_set_0/input_1.pb" --output-dir "$scratch/out" \
		--iterations 3 --profile >"$scratch/log" 2>&1 &&
		[ -f "$scratch/out/y.npy" ] &&
		grep -q '^latency: median .*, max .* over 3 runs (no p99 below 100 runs)$' "$scratch/log" &&
		grep -q '^split: 1 of 1 nodes on the device\|^split: 0 of 1 nodes on the device' "$scratch/log"; then
		ok "npu-run --output-dir --iterations --profile"
	else
		notok "npu-run --output-dir --iterations --profile"
		sed 's/^/#   /' "$scratch/log"
	fi
	if "$NPU_RUN" "$dir/model.onnx" --cpu --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --expect "y=$scratch/out/y.npy" \
		--expect "$dir/test_data_set_0/output_0.pb" --atol 0 --rtol 0 >"$scratch/log" 2>&1; then
		ok "npu-run --expect reads back its own .npy output exactly"
	else
		notok "npu-run --expect reads back its own .npy output exactly"
		sed 's/^/#   /' "$scratch/log"
	fi
	# A wrong expectation is a mismatch: exit 1 with npu-run's message
	# (Documentation/npu-run.rst), not any failure (a crash is not one).
	# First an expectation of the wrong shape (the input for the output)...
	"$NPU_RUN" "$dir/model.onnx" --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" \
		--expect "$dir/test_data_set_0/input_0.pb" >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "^npu-run: --expect .*input_0.pb: shape or dtype differs from output 'y' (float32 \[1,1,4,3\], not float32 \[1,1,7,5\])$" \
		"$scratch/log" && ! grep -q -E 'Sanitizer|runtime error' "$scratch/log"; then
		ok "npu-run fails a wrong --expect: exit 1, shape differs"
	else
		notok "npu-run fails a wrong --expect: exit $rc, want 1 and \"shape or dtype differs\""
		sed 's/^/#   /' "$scratch/log"
	fi
	# ... then its own output with the last element changed to 1e6.
	cp "$scratch/out/y.npy" "$scratch/wrong.npy" 2>/dev/null &&
		printf '\000\044\164\111' | dd of="$scratch/wrong.npy" bs=1 conv=notrunc status=none \
			seek=$(($(stat -c %s "$scratch/wrong.npy") - 4))
	"$NPU_RUN" "$dir/model.onnx" --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --expect "y=$scratch/wrong.npy" \
		>"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q '^output y: MISMATCH, max abs diff .* (1 of 12 elements beyond tolerance)$' \
		"$scratch/log" && ! grep -q -E 'Sanitizer|runtime error' "$scratch/log"; then
		ok "npu-run fails a wrong --expect: exit 1, one element beyond tolerance"
	else
		notok "npu-run fails a wrong --expect value: exit $rc, want 1 and 1 of 12 elements MISMATCH"
		sed 's/^/#   /' "$scratch/log"
	fi
	# --output-dir creates its parents; p99 from 100 runs on
	"$NPU_RUN" "$dir/model.onnx" --cpu --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --output-dir "$scratch/deep/a/b" \
		--iterations 100 --quiet >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ -f "$scratch/deep/a/b/y.npy" ] &&
		grep -q '^latency: median .* ms, min .* ms, p99 .* ms over 100 runs$' "$scratch/log"; then
		ok "npu-run --output-dir a/b creates a and b; p99 over 100 runs"
	else
		notok "npu-run --output-dir a/b (exit $rc) or p99 over 100 runs"
		sed 's/^/#   /' "$scratch/log"
	fi
else
	notok "npu-run options: no $dir"
fi

# Outputs of host-only dtypes against the ONNX tests' expected .pb, then
# as .npy (numpy's descr) read back by --expect: an I/O check only, the
# .pb is the oracle.
for spec in test_argmax_default_axis_example:result:'<i8' test_equal:z:'|b1' \
	test_cast_FLOAT_to_DOUBLE:output:'<f8' test_mod_mixed_sign_int16:z:'<i2' \
	test_max_uint64:result:'<u8'; do
	t=${spec%%:*} rest=${spec#*:}
	out=${rest%%:*} descr=${rest#*:}
	d=$ONNX_DATA/$t
	args=()
	for f in "$d"/test_data_set_0/input_*.pb; do args+=(--input "$f"); done
	if "$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$d/test_data_set_0/output_0.pb" \
		--output-dir "$scratch/$t" >"$scratch/log" 2>&1 &&
		head -c 128 "$scratch/$t/$out.npy" | grep -q -F "{'descr': '$descr'" &&
		"$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$out=$scratch/$t/$out.npy" \
			--atol 0 --rtol 0 >>"$scratch/log" 2>&1; then
		ok "npu-run $t: $descr output matches the ONNX test and its .npy reads back"
	else
		notok "npu-run $t: $descr output against the ONNX test and through .npy"
		sed 's/^/#   /' "$scratch/log"
	fi
done
# A float64 .npy as an input: the float32 -> float64 cast's output fed to
# the float64 -> float32 cast gives back the first cast's input exactly.
d=$ONNX_DATA/test_cast_DOUBLE_to_FLOAT
if "$NPU_RUN" "$d/model.onnx" --cpu --input "input=$scratch/test_cast_FLOAT_to_DOUBLE/output.npy" \
	--expect "$ONNX_DATA/test_cast_FLOAT_to_DOUBLE/test_data_set_0/input_0.pb" --atol 0 --rtol 0 \
	>"$scratch/log" 2>&1; then
	ok "npu-run takes a float64 .npy input"
else
	notok "npu-run takes a float64 .npy input"
	sed 's/^/#   /' "$scratch/log"
fi

# Constants of the model: an int64 input is one (Gather's indices
# folded with --const data), --runtime keeps it an input (the Gather a
# CPU kernel), and a Reshape whose shape --runtime keeps an input is
# refused (exit 3) with the importer's reason.  Resize's float scales
# are an input the importer fixes to its value, and npu-run says so.
d=$ONNX_DATA/test_gather_0
gargs=(--input "$d/test_data_set_0/input_0.pb" --input "$d/test_data_set_0/input_1.pb"
	--expect "$d/test_data_set_0/output_0.pb" --cpu --profile)
if "$NPU_RUN" "$d/model.onnx" "${gargs[@]}" --const data >"$scratch/log" 2>&1 &&
	grep -q '^split: 0 of 0 nodes' "$scratch/log" &&
	"$NPU_RUN" "$d/model.onnx" "${gargs[@]}" --runtime indices >"$scratch/log" 2>&1 &&
	grep -q '^0 .* Gather .* cpu ' "$scratch/log"; then
	ok "npu-run --const folds Gather, --runtime keeps its int64 indices an input"
else
	notok "npu-run --const and --runtime on Gather"
	sed 's/^/#   /' "$scratch/log"
fi
d=$ONNX_DATA/test_reshape_reordered_all_dims
"$NPU_RUN" "$d/model.onnx" --cpu --input "$d/test_data_set_0/input_0.pb" \
	--input "$d/test_data_set_0/input_1.pb" --runtime shape >"$scratch/log" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "node 'reshaped' (Reshape): .*constant" "$scratch/log"; then
	ok "npu-run --runtime on Reshape's shape: refused, exit 3"
else
	notok "npu-run --runtime on Reshape's shape: exit $rc, want 3 and a constant asked for"
	sed 's/^/#   /' "$scratch/log"
fi
d=$ONNX_DATA/test_resize_upsample_scales_nearest
args=()
for f in "$d"/test_data_set_0/input_*.pb; do args+=(--input "$f"); done
if "$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$d/test_data_set_0/output_0.pb" \
	>"$scratch/log" 2>&1 && grep -q "^input 'scales' is fixed to its value" "$scratch/log"; then
	ok "npu-run fixes Resize's float scales input to its value"
else
	notok "npu-run Resize with float scales as an input"
	sed 's/^/#   /' "$scratch/log"
fi
"$NPU_RUN" >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run without a model exits 2" || notok "npu-run without a model exits 2"
"$NPU_RUN" /nonexistent.onnx >/dev/null 2>&1
[ $? = 3 ] && ok "npu-run on a missing file exits 3" || notok "npu-run on a missing file exits 3"
"$NPU_RUN" "$dir/model.onnx" --shape x=1xq >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run rejects a bad --shape" || notok "npu-run rejects a bad --shape"

# --timeout and the CPU path's limits (issue 20): a one-node MaxPool model
# written by gen-pool-onnx.py (no onnx module needed).  A 4096 x 4096
# window over 64 channels (2^30 taps, seconds on the CPU) stops at
# --timeout 0.05 with exit 4 naming the node; a 65535 x 65535 window is
# refused by the CPU path's work limit with exit 3.
GEN_POOL=${VNPU_TOP:-.}/tests/host/libnpu/gen-pool-onnx.py
if python3 "$GEN_POOL" 4096 "$scratch/long.onnx" "$scratch/pool-x.npy" &&
	python3 "$GEN_POOL" 65535 "$scratch/huge.onnx" "$scratch/pool-x.npy"; then
	out=$("$NPU_RUN" "$scratch/long.onnx" --cpu --input "$scratch/pool-x.npy" --timeout 0.05 2>&1)
	rc=$?
	if [ $rc = 4 ] && grep -q "timed out after 0.050 s: node 'pool' (POOL2D) on the CPU: .*stopped at the deadline" <<<"$out"; then
		ok "npu-run --timeout stops a long CPU run: exit 4, names the node"
	else
		notok "npu-run --timeout: exit $rc, want 4 naming node 'pool'"
		sed 's/^/#   /' <<<"$out"
	fi
	out=$("$NPU_RUN" "$scratch/huge.onnx" --cpu --input "$scratch/pool-x.npy" 2>&1)
	rc=$?
	if [ $rc = 3 ] && grep -q "node 'pool' (POOL2D) on the CPU: POOL2D: 274869518400 work units exceed the CPU path's limit of 4294967296" <<<"$out"; then
		ok "npu-run refuses a node beyond the CPU path's work limit: exit 3"
	else
		notok "npu-run CPU work limit: exit $rc, want 3 and the limit named"
		sed 's/^/#   /' <<<"$out"
	fi
else
	notok "gen-pool-onnx.py could not write the MaxPool models"
fi

# Loop and Scan unrolled at import (onnx_loop.c), models written by
# gen-loop-onnx.py with their results: a Loop of 70 iterations and a
# backward Scan along axis 1 match them; a Loop past the unrolling
# budget, one whose condition a run decides and one holding a Loop are
# refused, exit 3, each with its reason.
GEN_LOOP=${VNPU_TOP:-.}/tests/host/libnpu/gen-loop-onnx.py
for kind in loop scan; do
	if python3 "$GEN_LOOP" $kind "$scratch/$kind.onnx" "$scratch/$kind-x.npy" "$scratch/$kind-y.npy" \
		"$scratch/$kind-s.npy" &&
		"$NPU_RUN" "$scratch/$kind.onnx" --cpu --input "$scratch/$kind-x.npy" \
			--expect "y=$scratch/$kind-y.npy" --expect "s=$scratch/$kind-s.npy" >"$scratch/log" 2>&1; then
		ok "npu-run unrolls a $kind: its outputs match"
	else
		notok "npu-run $kind"
		sed 's/^/#   /' "$scratch/log"
	fi
done
for case in "budget:4096 iterations of 22 nodes exceed the 65536 nodes import unrolls" \
	"runtime-cond:a Loop whose condition is only known at run time is not supported" \
	"nested:a body holding subgraphs (If, Loop or Scan inside it) is not supported"; do
	kind=${case%%:*}
	why=${case#*:}
	python3 "$GEN_LOOP" "$kind" "$scratch/$kind.onnx" "$scratch/$kind-x.npy"
	out=$("$NPU_RUN" "$scratch/$kind.onnx" --cpu --input "$scratch/$kind-x.npy" 2>&1)
	rc=$?
	if [ $rc = 3 ] && grep -qF "node 'y_node' (Loop): $why" <<<"$out"; then
		ok "npu-run refuses a $kind Loop: exit 3, $why"
	else
		notok "npu-run $kind Loop: exit $rc, want 3 and: $why"
		sed 's/^/#   /' <<<"$out"
	fi
done

# Custom operators: the plugin of Documentation/custom-ops.rst (compiled
# from the page) runs a model using com.example::Swish, which
# gen-swish-onnx.py writes with the formula's output; without the plugin
# the node is refused, naming it.
GEN_SWISH=${VNPU_TOP:-.}/tests/host/libnpu/gen-swish-onnx.py
if python3 "$GEN_SWISH" "$scratch/swish.onnx" "$scratch/sx.npy" "$scratch/sy.npy"; then
	if "$NPU_RUN" "$scratch/swish.onnx" --cpu --input "x=$scratch/sx.npy" --expect "y=$scratch/sy.npy" \
		--custom-ops "$SWISH_SO" --profile >"$scratch/log" 2>&1 &&
		grep -q ' com.example::Swish .*cpu ' "$scratch/log"; then
		ok "npu-run --custom-ops runs the documented plugin's op, matching its formula"
	else
		notok "npu-run --custom-ops with the documented plugin"
		sed 's/^/#   /' "$scratch/log"
	fi
	"$NPU_RUN" "$scratch/swish.onnx" --cpu --input "x=$scratch/sx.npy" >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 3 ] && grep -q "node 'sw' (Swish): domain 'com.example' is not supported" "$scratch/log"; then
		ok "npu-run without the plugin refuses the custom op, exit 3"
	else
		notok "npu-run without the plugin: exit $rc, want 3 naming the node"
		sed 's/^/#   /' "$scratch/log"
	fi
else
	notok "gen-swish-onnx.py could not write the custom-op model"
fi
# Documentation/npu-run.rst's operator table is npu-run --list-ops's
# output (make -C libnpu doc-ops rewrites it).
if "$NPU_RUN" --list-ops >"$scratch/ops" 2>&1 &&
	awk '/^\.\. begin: npu-run --list-ops/{on=1;next} /^\.\. end: npu-run --list-ops/{on=0} on' \
		"${VNPU_TOP:-.}/Documentation/npu-run.rst" | sed '/^$/d' | diff -u - "$scratch/ops" >"$scratch/log"; then
	ok "Documentation/npu-run.rst's operator table is npu-run --list-ops's ($(grep -c '^[A-Z]' "$scratch/ops") ops)"
else
	notok "Documentation/npu-run.rst's operator table differs from npu-run --list-ops (make -C libnpu doc-ops)"
	sed 's/^/#   /' "$scratch/log" | head -20
fi

# 3. The guide's example
if out=$("$GRAPH_EXAMPLE" 2>&1); then
	ok "Documentation/graph.rst example: $(tail -1 <<<"$out")"
else
	notok "Documentation/graph.rst example"
	sed 's/^/#   /' <<<"$out"
fi

# 4. Real models
MODELS=${VNPU_MODELS:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models}
VNPU_MODELS_TOOL=${VNPU_MODELS_TOOL:-${VNPU_BUILD:-${VNPU_CACHE:-$HOME/.cache/vnpu}/build}/tests/models/bin/vnpu-models}
if [ -d "$MODELS/ref" ] && [ -x "$VNPU_MODELS_TOOL" ]; then
	for spec in blazeface-front:blazeface/face_detection_front_128x128_barracuda:128 \
		    blazeface-back:blazeface/face_detection_back_256x256_barracuda:256 \
		    ppocr-cls:ppocr/ch_ppocr_mobile_v2.0_cls_infer: \
		    ppocr-det:ppocr/ch_PP-OCRv4_det_infer: \
		    ppocr-rec:ppocr/ch_PP-OCRv4_rec_infer: \
		    yolo:yolo/yolov8n: \
		    vad:vad/silero_vad_v5:; do
		name=${spec%%:*}
		rest=${spec#*:}
		model=$MODELS/${rest%%:*}.onnx
		size=${rest#*:}
		ref=$MODELS/ref/$name
		out=$scratch/$name
		args=()
		for f in "$ref"/in/*.npy; do
			args+=(--input "$(basename "$f" .npy)=$f")
		done
		# BlazeFace sanitized; PP-OCR's and YOLO's GMACs would take
		# minutes under ASan, so they run the unsanitized build.
		run=$NPU_RUN
		[ "${name#ppocr}" != "$name" ] || [ "$name" = yolo ] && run=$NPU_RUN_FAST
		log=$("$run" "$model" "${args[@]}" --output-dir "$out" --quiet 2>&1)
		rc=$?
		if [ $rc != 0 ]; then
			notok "model $name: npu-run (exit $rc)"
			sed 's/^/#   /' <<<"$log" | head -20
			continue
		fi
		good=1
		if [ -n "$size" ]; then
			chk=$("$VNPU_MODELS_TOOL" blazeface-check "$MODELS/images/astronaut.png" "$size" \
				"$out" "$ref/out" 2>&1) || good=0
		else
			chk=
			for f in "$ref"/out/*.npy; do
				chk+=$("$VNPU_MODELS_TOOL" compare "$out/$(basename "$f")" "$f" 2>&1) ||
					good=0
				chk+=$'\n'
			done
		fi
		if [ $good = 1 ]; then
			ok "model $name on the CPU fallback matches onnxruntime"
		else
			notok "model $name on the CPU fallback against onnxruntime"
		fi
		sed 's/^/#   /' <<<"$chk"
	done
else
	notok "real models: no $MODELS/ref or $VNPU_MODELS_TOOL (make models; check-host does it)"
fi

echo "1..$n"
[ $fails = 0 ]
