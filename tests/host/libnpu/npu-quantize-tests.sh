#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host tests of npu-quantize (built with ASan/UBSan); TAP on stdout.
# Installed by libnpu/Makefile with the binaries' paths filled in.
#
#   1. A generated fp32 model (gen-quantize-onnx.py: Conv, Relu, Add,
#      Reshape, MatMul, Sigmoid, Concat, Gemm; random weights) quantized
#      on random samples, per option: the written model has onnxruntime's
#      QDQ layout, names, scales, zero points and quantized weights and
#      biases, recomputed from onnxruntime's formulas in
#      quantize-check.py; onnxruntime-node loads and runs it unchanged
#      (graph optimizations disabled: each QDQ node as the model writes it,
#      the ONNX meaning of the model), and so does npu-run --cpu, both
#      within int8's error of the fp32 model's outputs (an SQNR floor).
#   2. Every refusal: exit status 1 (2 for bad arguments) with a message
#      naming what is wrong, and no model written.
#      A near-silent input: weight scales raised for the bias, as there.
#   3. BlazeFace (front) quantized on the astronaut image: onnxruntime and
#      npu-run --cpu run it, within int8's error of fp32.
# onnxruntime-node and the models come from `make models`; without them
# the tests that need them fail.
set -uo pipefail
NPU_QUANTIZE=@NPU_QUANTIZE@
NPU_QUANTIZE_FAST=@NPU_QUANTIZE_FAST@
NPU_RUN=@NPU_RUN@
TESTS=@TESTS@
REF_JS=@REF_JS@
MODELS=${VNPU_MODELS:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models}
export NODE_PATH=$MODELS/ort/node_modules
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
gen() { python3 "$TESTS/gen-quantize-onnx.py" "$@"; }
check() { python3 "$TESTS/quantize-check.py" "$@"; }
ort() { node "$REF_JS" "$@"; }
show() { sed 's/^/# /' "$1"; }

gen main "$scratch/m.onnx" "$scratch/calib" 8 7
gen main "$scratch/m.onnx" "$scratch/eval" 1 99
mkdir -p "$scratch/ref"
if ! ort "$scratch/m.onnx" "$scratch/eval/s00" "$scratch/ref" >"$scratch/log" 2>&1; then
	show "$scratch/log"
	notok "onnxruntime-node runs the fp32 model (NODE_PATH=$NODE_PATH; make models)"
fi

# quantize ARGS...; then the structure, onnxruntime and npu-run checks.
# MIN_SQNR: the outputs' SQNR against fp32 each runtime must reach.
quantize_and_run() {
	local name=$1 act=$2 per=$3 method=$4 p=$5 min_sqnr=$6 out=$scratch/$1 reduce=
	shift 6
	case " $* " in *" --reduce-range "*) reduce=reduce ;; esac
	mkdir -p "$out/ort" "$out/npu"
	if ! "$NPU_QUANTIZE" "$@" "$scratch/m.onnx" "$scratch/calib" -o "$out/q.onnx" \
		--report "$out/report" >"$out/log" 2>&1; then
		show "$out/log"
		notok "npu-quantize $*: fails"
		return
	fi
	if check main "$out/q.onnx" "$scratch/m.onnx" "$scratch/calib" "$act" "$per" "$method" "$p" \
		$reduce >"$out/check" 2>&1; then
		ok "npu-quantize $*: onnxruntime's QDQ layout, names, scales and weights ($act, per $per)"
	else
		show "$out/check"
		notok "npu-quantize $*: onnxruntime's QDQ layout, names, scales and weights ($act, per $per)"
	fi
	if grep -q '^summary: 8 tensors quantized; lowest SQNR [0-9.]* dB at .*; outputs. lowest SQNR [0-9.]* dB$' "$out/report" &&
		grep -q '^  x  *input  *max abs error [0-9.e-]*  *SQNR  *[0-9.]* dB$' "$out/report" &&
		grep -q '^  out  *output  *max abs error' "$out/report"; then
		ok "npu-quantize $*: --report has a line per tensor and output, and the summary"
	else
		show "$out/report"
		notok "npu-quantize $*: --report has a line per tensor and output, and the summary"
	fi
	if ort "$out/q.onnx" "$scratch/eval/s00" "$out/ort" >"$out/log" 2>&1 &&
		"$NPU_RUN" -q --cpu "$out/q.onnx" --input "$scratch/eval/s00/x.npy" \
			--output-dir "$out/npu" >>"$out/log" 2>&1 &&
		check compare "$out/q.onnx" "$scratch/ref" "$out/ort" "$out/npu" "$min_sqnr" >>"$out/log" 2>&1; then
		show "$out/log"
		ok "npu-quantize $*: onnxruntime and npu-run --cpu run it, SQNR >= $min_sqnr dB against fp32"
	else
		show "$out/log"
		notok "npu-quantize $*: onnxruntime and npu-run --cpu run it, SQNR >= $min_sqnr dB against fp32"
	fi
}

# 1. Quantization.  The SQNR floors are some 8 dB under what the methods
# reach on this model (43 dB MinMax).
quantize_and_run minmax int8 channel minmax 0 35
quantize_and_run uint8 uint8 tensor minmax 0 35 --activation uint8 --per-tensor
# 7-bit weights (39 dB measured)
quantize_and_run reduce int8 channel minmax 0 30 --reduce-range
quantize_and_run percentile int8 channel percentile 99.999 33 --method percentile
quantize_and_run percentile99 int8 channel percentile 99 30 --method percentile --percentile 99
quantize_and_run entropy int8 channel entropy 0 33 --method entropy
# onnxruntime's entropy defaults (128 bins, 128 quantized) leave one window,
# the whole range; more bins let the KL search clip outliers (34 dB measured)
quantize_and_run entropy512 int8 channel entropy 0 12 --method entropy --bins 512

# A near-silent input (samples of 1e-30): x's scale times a weight scale is
# too small to hold the Conv's bias in int32, and the weight scales are
# raised as onnxruntime's quantize_static raises them (quantize-check.py
# recomputes them); onnxruntime runs the result.
gen main "$scratch/mq.onnx" "$scratch/quiet" 4 7 1e-30
for per in channel tensor; do
	opt=
	[ "$per" = tensor ] && opt=--per-tensor
	mkdir -p "$scratch/quiet-ort-$per"
	if "$NPU_QUANTIZE" $opt --no-report "$scratch/mq.onnx" "$scratch/quiet" \
		-o "$scratch/quiet-$per.onnx" >"$scratch/log" 2>&1 &&
		grep -q '^[0-9]* weight scales\{0,1\} raised so that the bias fits in int32' "$scratch/log" &&
		check main "$scratch/quiet-$per.onnx" "$scratch/mq.onnx" "$scratch/quiet" int8 "$per" \
			minmax 0 quiet >>"$scratch/log" 2>&1 &&
		ort "$scratch/quiet-$per.onnx" "$scratch/eval/s00" "$scratch/quiet-ort-$per" \
			>>"$scratch/log" 2>&1; then
		ok "npu-quantize (per $per) raises weight scales a near-silent input leaves too small for the bias, as onnxruntime does"
	else
		show "$scratch/log"
		notok "npu-quantize (per $per) raises weight scales a near-silent input leaves too small for the bias, as onnxruntime does"
	fi
done

if grep -q '^opset raised from 12 to 13: per-channel DequantizeLinear needs 13$' "$scratch/minmax/log" ||
	"$NPU_QUANTIZE" --no-report "$scratch/m.onnx" "$scratch/calib" -o "$scratch/o13.onnx" |
		grep -q '^opset raised from 12 to 13: per-channel DequantizeLinear needs 13$'; then
	ok "npu-quantize says it raised the opset to 13 for per-channel weights"
else
	notok "npu-quantize says it raised the opset to 13 for per-channel weights"
fi

if "$NPU_QUANTIZE" --no-report --exclude conv "$scratch/m.onnx" "$scratch/calib" \
	-o "$scratch/ex.onnx" >"$scratch/log" 2>&1 &&
	grep -q '^node conv (Conv): excluded (--exclude)$' "$scratch/log" &&
	check float "$scratch/ex.onnx" conv x W B >>"$scratch/log" 2>&1; then
	ok "npu-quantize --exclude conv leaves the Conv float and says so"
else
	show "$scratch/log"
	notok "npu-quantize --exclude conv leaves the Conv float and says so"
fi

# activations over --max-memory: one run of each sample per group of
# tensors, the same model written
if "$NPU_QUANTIZE" --max-memory 3K "$scratch/m.onnx" "$scratch/calib" -o "$scratch/g.onnx" \
	--report "$scratch/g.report" >"$scratch/log" 2>&1 &&
	grep -q '^calibration: activations over --max-memory, [0-9]* runs of each sample$' "$scratch/log" &&
	cmp -s "$scratch/g.onnx" "$scratch/minmax/q.onnx" &&
	diff -q <(sed 1d "$scratch/g.report") <(sed 1d "$scratch/minmax/report") >/dev/null; then
	ok "npu-quantize --max-memory 3K calibrates in groups: the same model and report"
else
	show "$scratch/log"
	notok "npu-quantize --max-memory 3K calibrates in groups: the same model and report"
fi

if "$NPU_QUANTIZE" --no-report --samples 3 "$scratch/m.onnx" "$scratch/calib" \
	-o "$scratch/s3.onnx" >"$scratch/log" 2>&1 && grep -q 'calibration on 3 samples$' "$scratch/log"; then
	ok "npu-quantize --samples 3 calibrates on 3 samples"
else
	show "$scratch/log"
	notok "npu-quantize --samples 3 calibrates on 3 samples"
fi

# a single-input model's samples may be .npy files side by side
mkdir -p "$scratch/flat"
cp "$scratch/calib/s00/x.npy" "$scratch/flat/a.npy"
cp "$scratch/calib/s01/x.npy" "$scratch/flat/b.npy"
if "$NPU_QUANTIZE" --no-report "$scratch/m.onnx" "$scratch/flat" -o "$scratch/flat.onnx" \
	>"$scratch/log" 2>&1 && grep -q 'calibration on 2 samples$' "$scratch/log"; then
	ok "npu-quantize takes a directory of .npy files as samples of a one-input model"
else
	show "$scratch/log"
	notok "npu-quantize takes a directory of .npy files as samples of a one-input model"
fi

gen exp "$scratch/exp.onnx"
mkdir -p "$scratch/expq"
if "$NPU_QUANTIZE" "$scratch/exp.onnx" "$scratch/calib" -o "$scratch/expq.onnx" \
	>"$scratch/log" 2>&1 &&
	grep -q "^node exp (Exp): onnxruntime's quantize_static leaves this op float$" "$scratch/log" &&
	ort "$scratch/expq.onnx" "$scratch/eval/s00" "$scratch/expq" >>"$scratch/log" 2>&1; then
	ok "an op quantize_static does not quantize (Exp) stays float, is reported, and onnxruntime runs the model"
else
	show "$scratch/log"
	notok "an op quantize_static does not quantize (Exp) stays float, is reported, and onnxruntime runs the model"
fi

# weights in a Constant node; BatchNormalization, Mul and Add after the Conv
gen bn "$scratch/bn.onnx"
mkdir -p "$scratch/bnref"
ort "$scratch/bn.onnx" "$scratch/eval/s00" "$scratch/bnref" >/dev/null 2>&1
for fold in unfolded folded; do
	opt=
	[ $fold = folded ] && opt=--fuse-conv
	mkdir -p "$scratch/bn-$fold/ort" "$scratch/bn-$fold/npu"
	if "$NPU_QUANTIZE" --no-report $opt "$scratch/bn.onnx" "$scratch/calib" \
		-o "$scratch/bn-$fold/q.onnx" >"$scratch/log" 2>&1 &&
		grep -q '^1 Constant node made initializer$' "$scratch/log" &&
		check bn "$scratch/bn-$fold/q.onnx" $fold >>"$scratch/log" 2>&1 &&
		ort "$scratch/bn-$fold/q.onnx" "$scratch/eval/s00" "$scratch/bn-$fold/ort" >>"$scratch/log" 2>&1 &&
		"$NPU_RUN" -q --cpu "$scratch/bn-$fold/q.onnx" --input "$scratch/eval/s00/x.npy" \
			--output-dir "$scratch/bn-$fold/npu" >>"$scratch/log" 2>&1 &&
		check compare "$scratch/bn-$fold/q.onnx" "$scratch/bnref" "$scratch/bn-$fold/ort" \
			"$scratch/bn-$fold/npu" 35 >>"$scratch/log" 2>&1; then
		show "$scratch/log"
		ok "a weight in a Constant node is quantized as a weight; BatchNormalization, Mul, Add $fold ${opt:+($opt)}; onnxruntime and npu-run run it"
	else
		show "$scratch/log"
		notok "a weight in a Constant node is quantized as a weight; BatchNormalization, Mul, Add $fold ${opt:+($opt)}; onnxruntime and npu-run run it"
	fi
done

# opset 9 raised to 13: Clip, Slice, Unsqueeze and Squeeze get their
# attributes as inputs, onnxruntime runs the result (its Softmax output
# over 128 values, quantized over [0, 1] as onnxruntime does, measured 17 dB)
gen opset9 "$scratch/o9.onnx"
mkdir -p "$scratch/o9/ref" "$scratch/o9/ort" "$scratch/o9/npu"
if "$NPU_QUANTIZE" --no-report "$scratch/o9.onnx" "$scratch/calib" -o "$scratch/o9/q.onnx" \
	>"$scratch/log" 2>&1 &&
	grep -q '^opset raised from 9 to 13: per-channel DequantizeLinear needs 13$' "$scratch/log" &&
	ort "$scratch/o9.onnx" "$scratch/eval/s00" "$scratch/o9/ref" >>"$scratch/log" 2>&1 &&
	ort "$scratch/o9/q.onnx" "$scratch/eval/s00" "$scratch/o9/ort" >>"$scratch/log" 2>&1 &&
	"$NPU_RUN" -q --cpu "$scratch/o9/q.onnx" --input "$scratch/eval/s00/x.npy" \
		--output-dir "$scratch/o9/npu" >>"$scratch/log" 2>&1 &&
	check compare "$scratch/o9/q.onnx" "$scratch/o9/ref" "$scratch/o9/ort" "$scratch/o9/npu" 12 \
		>>"$scratch/log" 2>&1; then
	show "$scratch/log"
	ok "an opset-9 model with Clip, Slice, Squeeze, Unsqueeze raised to 13: onnxruntime and npu-run run it"
else
	show "$scratch/log"
	notok "an opset-9 model with Clip, Slice, Squeeze, Unsqueeze raised to 13: onnxruntime and npu-run run it"
fi

gen softmax "$scratch/softmax.onnx"
if "$NPU_QUANTIZE" --no-report --per-tensor "$scratch/softmax.onnx" "$scratch/calib" \
	-o "$scratch/softmaxq.onnx" >"$scratch/log" 2>&1; then
	ok "npu-quantize --per-tensor keeps an opset-12 model with a Softmax at opset 12"
else
	show "$scratch/log"
	notok "npu-quantize --per-tensor keeps an opset-12 model with a Softmax at opset 12"
fi

# 2. Refusals: STATUS MESSAGE-REGEX DESCRIPTION -- ARGS...
refuse() {
	local want=$1 msg=$2 what=$3 rc
	shift 4
	rm -f "$scratch/bad.onnx"
	"$NPU_QUANTIZE" "$@" >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -q -- "$msg" "$scratch/log" && [ ! -e "$scratch/bad.onnx" ]; then
		ok "refused: $what (exit $rc)"
	else
		show "$scratch/log"
		notok "refused: $what (exit $rc, want $want and /$msg/)"
	fi
}
M=$scratch/m.onnx
B=$scratch/bad.onnx
mkdir -p "$scratch/empty" "$scratch/nofile/s0" "$scratch/i32/s0" "$scratch/shape/s0" \
	"$scratch/junk/s0" "$scratch/mixed/s0"
cp "$scratch/calib/s00/x.npy" "$scratch/mixed/a.npy"
# an int32 .npy of the right shape, and a float32 one of the wrong shape
python3 - "$scratch" <<'PY'
import struct, sys
d = sys.argv[1]
h = "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3, 8, 8), }"
h += ' ' * (63 - (10 + len(h)) % 64) + '\n'
open(d + '/i32/s0/x.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + bytes(4 * 192))
sys.path.insert(0, sys.argv[1])
PY
python3 -c "import sys; sys.path.insert(0, '$TESTS'); sys.dont_write_bytecode = True
from onnxpb import npy_f32; npy_f32('$scratch/shape/s0/x.npy', [0.5] * 48, [1, 3, 4, 4])"
printf 'not a numpy file' >"$scratch/junk/s0/x.npy"
printf 'not a model' >"$scratch/junk.onnx"
gen nanweight "$scratch/nan.onnx"
gen fp16 "$scratch/fp16.onnx"

refuse 1 "sample directory $scratch/none: No such file or directory" "a missing sample directory" -- "$M" "$scratch/none" -o "$B"
refuse 1 "has no samples" "an empty sample directory" -- "$M" "$scratch/empty" -o "$B"
refuse 1 "mixes subdirectories and .npy files" "a sample directory with both layouts" -- "$M" "$scratch/mixed" -o "$B"
refuse 1 "nofile/s0/x.npy (input 'x'): No such file or directory" "a sample without a file for input x" -- "$M" "$scratch/nofile" -o "$B"
refuse 1 "i32/s0/x.npy: int32 \[1,3,8,8\] does not fit input 'x', float32 \[1,3,8,8\]" "a sample of another dtype than the input" -- "$M" "$scratch/i32" -o "$B"
refuse 1 "shape/s0/x.npy: float32 \[1,3,4,4\] does not fit input 'x', float32 \[1,3,8,8\]" "a sample of another shape than the input" -- "$M" "$scratch/shape" -o "$B"
refuse 1 "junk/s0/x.npy (input 'x'): not a valid .npy file" "a sample that is not a .npy file" -- "$M" "$scratch/junk" -o "$B"
refuse 1 "m.onnx-missing: No such file or directory" "a missing model" -- "$M-missing" "$scratch/calib" -o "$B"
refuse 1 "npu-quantize: $scratch/junk.onnx: " "a file that is not an ONNX model" -- "$scratch/junk.onnx" "$scratch/calib" -o "$B"
refuse 1 "initializer 'W' is float16: npu-quantize takes fp32 models only\|float16" "a model that is not fp32" -- "$scratch/fp16.onnx" "$scratch/calib" -o "$B"
refuse 1 "initializer 'W' has a value that is not finite" "a weight that is NaN" -- "$scratch/nan.onnx" "$scratch/calib" -o "$B"
refuse 1 "(QuantizeLinear): the model is quantized already" "a model quantized already" -- "$scratch/minmax/q.onnx" "$scratch/calib" -o "$B"
refuse 1 "node 'softmax' (Softmax): axis 1 of a rank-4 input means another thing at opset 13 (a softmax over all the axes from it on, before) (the QDQ form needs opset 13; the model's is 12; --per-tensor needs no more than 10)" "per channel on an opset-12 model whose Softmax cannot be raised to opset 13" -- "$scratch/softmax.onnx" "$scratch/calib" -o "$B"
refuse 1 "exclude nosuch: the model has no node of that name" "--exclude of a node the model does not have" -- --exclude nosuch "$M" "$scratch/calib" -o "$B"
refuse 1 "npu-quantize: $scratch/no/such/dir/q.onnx: No such file or directory" "an output path that cannot be written" -- --no-report "$M" "$scratch/calib" -o "$scratch/no/such/dir/q.onnx"
refuse 1 "report $scratch/no/such/dir/r: No such file or directory" "a --report path that cannot be written" -- --report "$scratch/no/such/dir/r" "$M" "$scratch/calib" -o "$B.r"
refuse 2 "method foo: not minmax, percentile or entropy" "--method foo" -- --method foo "$M" "$scratch/calib" -o "$B"
refuse 2 "activation int4: not int8 or uint8" "--activation int4" -- --activation int4 "$M" "$scratch/calib" -o "$B"
refuse 2 "percentile 0: not a number in (0, 100\]" "--percentile 0" -- --method percentile --percentile 0 "$M" "$scratch/calib" -o "$B"
refuse 2 "percentile applies to --method percentile only" "--percentile without --method percentile" -- --percentile 99 "$M" "$scratch/calib" -o "$B"
refuse 2 "samples 0: not a positive count" "--samples 0" -- --samples 0 "$M" "$scratch/calib" -o "$B"
refuse 2 "max-memory 0: not a size from 1K to 16T" "--max-memory 0" -- --max-memory 0 "$M" "$scratch/calib" -o "$B"
refuse 2 "bins 1: not a count from 2 to 1048576" "--bins 1" -- --method entropy --bins 1 "$M" "$scratch/calib" -o "$B"
refuse 2 "quantized-bins 256 exceeds --bins 128" "--quantized-bins over --bins" -- --method entropy --quantized-bins 256 "$M" "$scratch/calib" -o "$B"
refuse 2 "bins and --quantized-bins apply to the histogram methods" "--bins with minmax" -- --bins 64 "$M" "$scratch/calib" -o "$B"
refuse 2 "usage: npu-quantize" "no -o" -- "$M" "$scratch/calib"
if [ ! -e /dev/accel/accel0 ]; then
	refuse 1 "device: no NPU found" "--device without an NPU" -- --device "$M" "$scratch/calib" -o "$B"
fi

# 3. A real model: BlazeFace front on the astronaut image (its reference input)
bf=$MODELS/blazeface/face_detection_front_128x128_barracuda.onnx
bfin=$MODELS/ref/blazeface-front/in
mkdir -p "$scratch/bf/ort" "$scratch/bf/npu" "$scratch/bf/samples"
ln -s "$bfin" "$scratch/bf/samples/astronaut"
if "$NPU_QUANTIZE_FAST" -q --no-report "$bf" "$scratch/bf/samples" -o "$scratch/bf/q.onnx" >"$scratch/log" 2>&1 &&
	ort "$scratch/bf/q.onnx" "$bfin" "$scratch/bf/ort" >>"$scratch/log" 2>&1 &&
	"$NPU_RUN" -q --cpu "$scratch/bf/q.onnx" --input "$bfin/input_0.npy" \
		--output-dir "$scratch/bf/npu" >>"$scratch/log" 2>&1 &&
	check compare "$scratch/bf/q.onnx" "$MODELS/ref/blazeface-front/out" "$scratch/bf/ort" \
		"$scratch/bf/npu" 10 >>"$scratch/log" 2>&1; then
	show "$scratch/log"
	ok "BlazeFace front quantized: onnxruntime and npu-run --cpu run it, SQNR >= 10 dB against fp32"
else
	show "$scratch/log"
	notok "BlazeFace front quantized: onnxruntime and npu-run --cpu run it, SQNR >= 10 dB against fp32 ($MODELS; make models)"
fi

echo "1..$n"
exit $((fails > 0))
