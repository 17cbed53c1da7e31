#!/bin/sh
# SPDX-License-Identifier: MIT
# Quantized (QDQ) models on the device (TAP): for each model of
# tests/host/libnpu/gen-qdq-onnx.py (Conv, uint8 Conv, depthwise Conv,
# ConvTranspose, MatMul, a MatMul of two activations, Gemm, and a chain of
# Conv, Relu, MaxPool, Add, Sigmoid and GlobalAveragePool, and a Concat
# with constant zeros then a Transpose, each between Quantize/
# DequantizeLinear), npu-run on the device against onnxruntime's output
# (within npu-run's tolerance, below one quantization step: the same
# integers), and the node unit as one integer CONV2D, GEMM or 8-bit
# CONCAT that ran on the device, or as the float op where onnxruntime
# does not fuse it (ConvTranspose, chain's Conv).
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

n=0
fail=0
for kind in conv conv-u8 depthwise convt matmul attn gemm chain pad; do
	model=$MODELS/qdq/$kind.onnx
	ref=$MODELS/ref/qdq-$kind
	n=$((n + 1))
	if [ ! -f "$model" ] || [ ! -f "$ref/out/out.npy" ]; then
		echo "not ok $n - qdq-$kind: no model or reference in this initramfs"
		fail=1
		n=$((n + 1))
		echo "not ok $n - qdq-$kind: integer op on the device: no model"
		continue
	fi
	log=$("$BIN/npu-run" --profile "$model" --input "x=$ref/in/x.npy" \
		--expect "out=$ref/out/out.npy" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok $n - qdq-$kind matches onnxruntime on the device"
	else
		echo "not ok $n - qdq-$kind matches onnxruntime on the device (npu-run exit $rc)"
		fail=1
	fi
	echo "$log" | sed 's/^/# /'
	n=$((n + 1))
	op=GEMM
	case $kind in
	convt) op=CONV_TRANSPOSE ;;
	conv*|depthwise|chain) op=CONV2D ;;
	pad) op=CONCAT ;;
	esac
	# onnxruntime fuses no ConvTranspose unit, nor chain's Conv, whose
	# input the Add reads too (Documentation/quantization.rst): float ops
	what=integer
	case $kind in
	convt|chain) what=float ;;
	esac
	# "#  node  op  where ...": the op, on the device; nothing on the CPU
	if echo "$log" | grep -Eq "^[0-9]+ +[^ ]+ +$op +device " &&
	   ! echo "$log" | grep -Eq "^[0-9]+ +[^ ]+ +[A-Z0-9_]+ +cpu "; then
		echo "ok $n - qdq-$kind: one $what $op on the device, nothing on the CPU"
	else
		echo "not ok $n - qdq-$kind: one $what $op on the device, nothing on the CPU"
		fail=1
	fi
done
echo "1..$n"
exit $fail
