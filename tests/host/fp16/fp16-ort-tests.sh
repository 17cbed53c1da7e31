#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Float16 models (tests/host/libnpu/gen-fp16-onnx.py) through npu-run --cpu,
# bit for bit against onnxruntime-node's results (graph optimisations
# disabled, as for the model references), or for fp16-io, whose float16
# input and output ref.js does not read, against the result the
# generator computes.  TAP on stdout.  Without node or onnxruntime-node
# (make models installs it) the onnxruntime kinds fail: a skip is not a
# pass.
#
#   fp16-ort-tests.sh [NPU_RUN]
set -uo pipefail
NPU_RUN=${1:-@NPU_RUN@}
TOP=@TOP@
case $TOP in
@*) TOP=$(cd "$(dirname "$0")/../../.." && pwd) ;;
esac
ORT_MODULES=${ORT_MODULES:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models/ort/node_modules}
GEN=$TOP/tests/host/libnpu/gen-fp16-onnx.py

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

n=0
fails=0
for kind in keep-io concat-fp32 concat-fp16 fp16-io; do
	n=$((n + 1))
	d=$scratch/$kind
	mkdir -p "$d/in" "$d/want"
	why=
	if [ ! -x "$NPU_RUN" ]; then
		why="no npu-run at $NPU_RUN"
	elif ! python3 "$GEN" "$kind" 1 "$d/model.onnx" "$d/in/x.npy" "$d/want/y.npy" \
		>"$d/gen.log" 2>&1; then
		why="gen-fp16-onnx.py failed: $(head -c 200 "$d/gen.log" | tr '\n' ' ')"
	elif [ "$kind" != fp16-io ] && ! command -v node >/dev/null; then
		why="no node to run onnxruntime-node"
	elif [ "$kind" != fp16-io ] && [ ! -d "$ORT_MODULES/onnxruntime-node" ]; then
		why="no onnxruntime-node in $ORT_MODULES (make models installs it)"
	elif [ "$kind" != fp16-io ] && ! NODE_PATH=$ORT_MODULES node "$TOP/tests/models/ref.js" \
		"$d/model.onnx" "$d/in" "$d/want" >"$d/ort.log" 2>&1; then
		why="onnxruntime failed: $(head -c 200 "$d/ort.log" | tr '\n' ' ')"
	elif ! "$NPU_RUN" "$d/model.onnx" --cpu --input "x=$d/in/x.npy" --output-dir "$d/npu" \
		>"$d/npu.log" 2>&1; then
		why="npu-run failed: $(head -c 300 "$d/npu.log" | tr '\n' ' ')"
	fi
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "not ok $n - fp16-$kind: $why"
		continue
	fi
	# equal headers (dtype and shape) and equal elements, byte for byte
	res=$(python3 - "$d/want/y.npy" "$d/npu/y.npy" <<'PY'
import sys

def load(path):
    with open(path, 'rb') as f:
        raw = f.read()
    hlen = int.from_bytes(raw[8:10], 'little')
    return raw[10:10 + hlen], raw[10 + hlen:]

(wh, w), (gh, g) = load(sys.argv[1]), load(sys.argv[2])
size = 2 if b"'<f2'" in wh else 4
if wh != gh or len(w) != len(g):
    print(len(w) // size, len(w) // size, 'dtype or shape differs')
else:
    print(len(w) // size, sum(w[i:i + size] != g[i:i + size] for i in range(0, len(w), size)))
PY
)
	read -r elems differ rest <<<"$res"
	want=$([ "$kind" = fp16-io ] && echo "the generator's" || echo "onnxruntime's")
	if [ "$differ" = 0 ] && [ -z "$rest" ]; then
		echo "ok $n - fp16-$kind: $elems elements equal to $want"
	else
		fails=$((fails + 1))
		echo "not ok $n - fp16-$kind: $differ of $elems elements differ from $want $rest"
	fi
done
echo "1..$n"
[ "$fails" -eq 0 ]
