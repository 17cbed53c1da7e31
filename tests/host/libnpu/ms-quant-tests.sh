#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# com.microsoft's quantized ops (QLinearAdd, QLinearMul, QLinearSigmoid,
# QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool,
# QLinearAveragePool, QGemm, QLinearSoftmax) on libnpu's CPU path against onnxruntime
# itself, bit for bit; TAP on stdout, one test per op saying how many
# elements were compared and how many differ.
#
# tests/onnx/gen-ms-quant.py writes one-node models with random 8-bit
# inputs (fixed seed); onnxruntime-node runs each with no graph rewrites
# (tests/models/ref.js), npu-run --cpu runs it through the importer and
# the kernels, and every output byte must match.  Without node or
# onnxruntime-node (make models installs it) every test fails: a skip is
# not a pass.
#
#   ms-quant-tests.sh [NPU_RUN]
#
# Installed as test-ms-quant with @NPU_RUN@ and @TOP@ filled in; run from
# the source tree it takes npu-run as its argument.
set -uo pipefail
NPU_RUN=${1:-@NPU_RUN@}
TOP=@TOP@
case $TOP in
@*) TOP=$(cd "$(dirname "$0")/../../.." && pwd) ;;
esac
ORT_MODULES=${ORT_MODULES:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models/ort/node_modules}
SEED=${MS_QUANT_SEED:-1}
OPS="QLinearAdd QLinearMul QLinearSigmoid QLinearLeakyRelu QLinearConcat
QLinearGlobalAveragePool QLinearAveragePool QGemm QLinearSoftmax"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail_all() {
	local n=0 op
	for op in $OPS; do
		n=$((n + 1))
		echo "not ok $n - $op: $1"
	done
	echo "1..$n"
	exit 1
}

[ -x "$NPU_RUN" ] || fail_all "no npu-run at $NPU_RUN"
command -v node >/dev/null || fail_all "no node to run onnxruntime-node"
[ -d "$ORT_MODULES/onnxruntime-node" ] ||
	fail_all "no onnxruntime-node in $ORT_MODULES (make models installs it)"
python3 "$TOP/tests/onnx/gen-ms-quant.py" "$scratch/cases" "$SEED" ||
	fail_all "gen-ms-quant.py failed"

# Each case: "<op> <elements> <differing> <message>" into $scratch/results.
while read -r name op; do
	d=$scratch/cases/$name
	mkdir -p "$d/ort" "$d/npu"
	if ! NODE_PATH=$ORT_MODULES node "$TOP/tests/models/ref.js" "$d/model.onnx" "$d/in" \
		"$d/ort" >"$d/ort.log" 2>&1; then
		echo "$op 0 0 $name: onnxruntime failed: $(head -c 200 "$d/ort.log" | tr '\n' ' ')"
		continue
	fi
	args=()
	for f in "$d"/in/*.npy; do
		args+=(--input "$(basename "$f" .npy)=$f")
	done
	if ! "$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --output-dir "$d/npu" \
		>"$d/npu.log" 2>&1; then
		echo "$op 0 0 $name: npu-run failed: $(head -c 300 "$d/npu.log" | tr '\n' ' ')"
		continue
	fi
	python3 - "$op" "$name" "$d/ort/y.npy" "$d/npu/y.npy" <<'EOF'
import sys

op, name, want_path, got_path = sys.argv[1:]


def load(path):
    with open(path, 'rb') as f:
        raw = f.read()
    hlen = int.from_bytes(raw[8:10], 'little')
    header = raw[10:10 + hlen].decode('latin1')
    descr = header.split("'descr':")[1].split("'")[1]
    shape = header.split("'shape':")[1].split(')')[0].strip(' (')
    return descr, shape.replace(' ', '').rstrip(','), raw[10 + hlen:]


try:
    wd, ws, w = load(want_path)
    gd, gs, g = load(got_path)
except (OSError, IndexError, ValueError) as e:
    print('%s 0 0 %s: unreadable output: %s' % (op, name, e))
    sys.exit(0)
size = {'|u1': 1, '|i1': 1, '<f4': 4, '<i4': 4}.get(wd, 1)
n = len(w) // size
if (wd, ws) != (gd, gs) or len(w) != len(g):
    print('%s %d %d %s: onnxruntime gives %s of shape (%s), npu-run %s of shape (%s)'
          % (op, n, n, name, wd, ws, gd, gs))
    sys.exit(0)
diff = sum(w[i * size:(i + 1) * size] != g[i * size:(i + 1) * size] for i in range(n))
print('%s %d %d %s' % (op, n, diff, name))
EOF
done <"$scratch/cases/cases.txt" >"$scratch/results"

n=0
fails=0
for op in $OPS; do
	n=$((n + 1))
	read -r cases elems differ < <(awk -v op="$op" \
		'$1 == op { c++; e += $2; d += $3 } END { print c + 0, e + 0, d + 0 }' "$scratch/results")
	broken=$(awk -v op="$op" '$1 == op && NF > 4 { $1 = $2 = $3 = ""; print }' "$scratch/results")
	if [ "$cases" -gt 0 ] && [ "$differ" -eq 0 ] && [ -z "$broken" ]; then
		echo "ok $n - $op: $elems elements of $cases models equal to onnxruntime's"
	else
		fails=$((fails + 1))
		echo "not ok $n - $op: $differ of $elems elements of $cases models differ from onnxruntime's"
		awk -v op="$op" '$1 == op && ($3 > 0 || NF > 4) { print "#   " $0 }' "$scratch/results"
	fi
done
echo "1..$n"
[ "$fails" -eq 0 ]
