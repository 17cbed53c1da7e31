#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The audio models no other test runs, through npu-run on the host's CPU
# path, each output against onnxruntime's reference (tests/models/Makefile
# makes both under $MODELS/ref; `make check-host` fetches and makes them
# first, so missing data fails).  TAP.
#   audio-models.sh NPU_RUN MODELS
# Every input is kept a runtime input (--runtime): openWakeWord's
# classifier must run its If on the score it computes, not have npu-run
# fix the input and fold the whole model to its answer.
set -u
npu_run=$1 models=$2
n=0 fail=0

# NAME:MODEL(under $models, no .onnx)
for spec in vad-v4:vad/silero_vad_legacy oww-mel:audio/oww/melspectrogram \
	    oww-embed:audio/oww/embedding_model oww-jarvis:audio/oww/hey_jarvis_v0.1; do
	name=${spec%%:*}
	model=$models/${spec#*:}.onnx
	ref=$models/ref/$name
	n=$((n + 1))
	args=()
	for f in "$ref"/in/*.npy; do
		[ -f "$f" ] || continue
		in=$(basename "$f" .npy)
		args+=(--input "$in=$f")
		# Silero's sample rate stays the constant it is by default
		[ "$in" = sr ] || args+=(--runtime "$in")
	done
	for f in "$ref"/out/*.npy; do
		[ -f "$f" ] && args+=(--expect "$(basename "$f" .npy)=$f")
	done
	if [ ! -f "$model" ] || [ ${#args[@]} = 0 ]; then
		echo "not ok $n - $name: no model or reference in $models (make models)"
		fail=1
		continue
	fi
	out=$("$npu_run" "$model" --cpu "${args[@]}" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok $n - $name through the importer matches onnxruntime"
	else
		echo "not ok $n - $name through the importer matches onnxruntime (npu-run exit $rc)"
		echo "$out" | tail -n 8 | sed 's/^/# /'
		fail=1
	fi
done
echo "1..$n"
exit $fail
