#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An If whose condition only a run can tell (libnpu/onnx/onnx_control.c):
# both branches imported and each output selected.  The condition's input
# is kept a runtime input (--runtime), else npu-run would fix it to the
# file's value and import one branch.  TAP.
#   if-runtime.sh NPU_RUN GENERATOR WORKDIR
set -u
npu_run=$1 gen=$2 work=$3
python=${PYTHON3:-/usr/bin/python3}
n=0 fail=0
rm -rf "$work" && mkdir -p "$work"

tap() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		echo "$3" | sed 's/^/# /'
		fail=1
	fi
}

for k in select shape gather; do
	"$python" "$gen" "$k" "$work/$k.onnx" "$work/data" || { echo "Bail out! $gen $k failed"; exit 1; }
done
# x sums above 0 (pos: the then branch, x * 2) and below (neg: x + 1)
for d in pos neg; do
	out=$("$npu_run" "$work/select.onnx" --cpu --runtime x --input "x=$work/data/$d/x.npy" \
		--expect "y=$work/data/$d/y.npy" -q 2>&1)
	tap $? "a runtime If selects its $d input's branch" "$out"
done
out=$("$npu_run" "$work/shape.onnx" --cpu --runtime x --input "x=$work/data/pos/x.npy" 2>&1)
rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'another shape in each branch'
tap $? "branches whose outputs differ in shape are refused with the reason" "exit $rc: $out"
"$python" -c 'import sys, numpy; numpy.save(sys.argv[1], numpy.array([0, 1, 2, 3]))' "$work/i.npy"
out=$("$npu_run" "$work/gather.onnx" --cpu --runtime x --runtime i --input "x=$work/data/pos/x.npy" \
	--input "i=$work/i.npy" 2>&1)
rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'reads runtime indices'
tap $? "a branch gathering at runtime indices is refused with the reason" "exit $rc: $out"
echo "1..$n"
exit $fail
