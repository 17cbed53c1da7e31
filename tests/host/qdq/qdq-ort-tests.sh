#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# QDQ node units imported as onnxruntime's CPU provider runs them, checked
# against onnxruntime-node itself at graph optimization level 'extended'
# (where it fuses the units it can), bit for bit; TAP on stdout.
#
# tests/host/libnpu/gen-qdq-onnx.py writes each model (fixed seed); ref.js
# runs onnxruntime, npu-run --cpu runs libnpu's importer and CPU path.
# tie and tie-shared hold the fusion rule both ways: their input codes
# make the exact integer product and the float one round apart, so
# libnpu equals onnxruntime only by fusing the Conv whose input only it
# reads (QLinearConv) and by running the Conv whose input two nodes read
# in float, as onnxruntime on x86-64 does (onnx_quant.c, ort_fuses());
# softmax and add, by running onnxruntime's QLinearSoftmax and QLinearAdd
# arithmetic where it fuses those units (ms_unit()).  add-col-a,
# add-col-b and mul-col-a (gen-qdq-grid.py) take every pair of codes with
# one operand broadcast along the other: equal only if the importer's
# device command puts first the operand onnxruntime runs along.
# Without node or onnxruntime-node (make models installs it) every test
# fails: a skip is not a pass.
#
#   qdq-ort-tests.sh [NPU_RUN]
set -uo pipefail
NPU_RUN=${1:-@NPU_RUN@}
TOP=@TOP@
case $TOP in
@*) TOP=$(cd "$(dirname "$0")/../../.." && pwd) ;;
esac
ORT_MODULES=${ORT_MODULES:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models/ort/node_modules}
# The kinds whose weights cannot saturate MLAS's AVX2 u8s8 kernel (16-bit
# pair sums, Documentation/quantization.rst): one input channel, or no
# integer kernel at all (depthwise convolutions, ConvTranspose, attention).
KINDS="tie tie-shared softmax add depthwise convt attn chain pad add-col-a add-col-b mul-col-a"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

n=0
fails=0
for kind in $KINDS; do
	n=$((n + 1))
	d=$scratch/$kind
	mkdir -p "$d/in"
	why=
	gen=$TOP/tests/host/libnpu/gen-qdq-onnx.py
	case $kind in
	*-col-*) gen=$TOP/tests/host/qdq/gen-qdq-grid.py ;;
	esac
	if [ ! -x "$NPU_RUN" ]; then
		why="no npu-run at $NPU_RUN"
	elif ! command -v node >/dev/null; then
		why="no node to run onnxruntime-node"
	elif [ ! -d "$ORT_MODULES/onnxruntime-node" ]; then
		why="no onnxruntime-node in $ORT_MODULES (make models installs it)"
	elif ! python3 "$gen" "$kind" 1 "$d/model.onnx" \
		"$d/in/x.npy" >"$d/gen.log" 2>&1; then
		why="$(basename "$gen") failed: $(head -c 200 "$d/gen.log" | tr '\n' ' ')"
	elif ! NODE_PATH=$ORT_MODULES node "$TOP/tests/models/ref.js" "$d/model.onnx" "$d/in" \
		"$d/ort" extended >"$d/ort.log" 2>&1; then
		why="onnxruntime failed: $(head -c 200 "$d/ort.log" | tr '\n' ' ')"
	elif ! "$NPU_RUN" "$d/model.onnx" --cpu --input "x=$d/in/x.npy" --output-dir "$d/npu" \
		>"$d/npu.log" 2>&1; then
		why="npu-run failed: $(head -c 300 "$d/npu.log" | tr '\n' ' ')"
	fi
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "not ok $n - qdq-$kind: $why"
		continue
	fi
	# out.npy: the dequantized result, so equal bytes are equal codes
	res=$(python3 - "$d/ort/out.npy" "$d/npu/out.npy" <<'PY'
import sys

def load(path):
    with open(path, 'rb') as f:
        raw = f.read()
    hlen = int.from_bytes(raw[8:10], 'little')
    return raw[10:10 + hlen], raw[10 + hlen:]

(wh, w), (gh, g) = load(sys.argv[1]), load(sys.argv[2])
if wh != gh or len(w) != len(g):
    print('%d %d shapes differ' % (len(w) // 4, len(w) // 4))
else:
    n = len(w) // 4
    print(n, sum(w[i * 4:i * 4 + 4] != g[i * 4:i * 4 + 4] for i in range(n)))
PY
)
	read -r elems differ rest <<<"$res"
	if [ "$differ" = 0 ] && [ -z "$rest" ]; then
		echo "ok $n - qdq-$kind: $elems elements equal to onnxruntime's ('extended')"
	else
		fails=$((fails + 1))
		echo "not ok $n - qdq-$kind: $differ of $elems elements differ from onnxruntime's ('extended') $rest"
	fi
done
echo "1..$n"
[ "$fails" -eq 0 ]
