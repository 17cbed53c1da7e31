#!/bin/sh
# SPDX-License-Identifier: MIT
# The ONNX backend tests that pass on the host (tests/onnx installs them in
# ./onnx-data), run by npu-run on the device: imported, partitioned between
# the device and the CPU, run and compared with their expected outputs.
# By default one test of each kind (onnx-data/tests-check.txt: the same ops
# on the same input types), with vnpu.onnx=all on the kernel command line
# every one (onnx-data/tests.txt; make onnx-report-guest boots so).
# A test the device fails while the host passes it is an expected failure
# ("not ok ... # TODO reason") when onnx-backend-guest-xfail.txt lists it
# (installed as onnx-data/guest-xfail.txt); a listed test that passes fails.
# One TAP line per test; comments carry the placement of every graph node
# (npu-run --profile: op, device/cpu/folded) and the "split:" line, as
# "# onnx-profile TEST ROW", and the result as
# "# onnx-result TEST<TAB>state<TAB>exit<TAB>reason", which tests/onnx's
# mkdoc.py turns into Documentation/onnx-conformance.rst.
n=0
fail=0
list=onnx-data/tests-check.txt
grep -q 'vnpu\.onnx=all' /proc/cmdline && list=onnx-data/tests.txt
# vnpu.onnx=every:N runs one test in N of the list (the debug kernel's
# layer: there each test costs about 14 times as much, and the driver
# sees the same submit, BO and fence paths in a sample as in all).
every=$(sed -n 's/.*vnpu\.onnx=every:\([1-9][0-9]*\).*/\1/p' /proc/cmdline)
every=${every:-1}
if [ ! -s $list ]; then
	echo "not ok 1 - no $list in the guest (tests/onnx installs it)"
	echo "1..1"
	exit 1
fi
tab=$(printf '\t')
start=$(date +%s)
seen=0
while read -r t; do
	seen=$((seen + 1))
	[ $(((seen - 1) % every)) -eq 0 ] || continue
	d=onnx-data/$t
	set --
	i=0
	while [ -f "$d/test_data_set_0/input_$i.pb" ]; do
		set -- "$@" --input "$d/test_data_set_0/input_$i.pb"
		i=$((i + 1))
	done
	i=0
	while [ -f "$d/test_data_set_0/output_$i.pb" ]; do
		set -- "$@" --expect "$d/test_data_set_0/output_$i.pb"
		i=$((i + 1))
	done
	out=$(timeout 60 ./npu-run "$d/model.onnx" "$@" --profile 2>&1)
	rc=$?
	reason=$(echo "$out" | grep '^npu-run: ' | tail -n 1 | sed "s|^npu-run: ||; s|$d/model.onnx: ||")
	case $rc in
	0) state=pass reason= ;;
	1) if echo "$out" | grep -q 'MISMATCH\|shape or dtype differs'; then state=mismatch; else state=error; fi ;;
	3) state=refused ;;
	124 | 143) state=timeout reason="still running after 60 s" ;;
	*) if [ $rc -ge 128 ]; then state=crash reason="killed by signal $((rc - 128))"; else state=error; fi ;;
	esac
	[ -n "$reason" ] || [ $state = pass ] || reason=$(echo "$out" | grep 'MISMATCH' | head -n 1)
	n=$((n + 1))
	listed=$(grep "^$t$tab" onnx-data/guest-xfail.txt 2>/dev/null | cut -f2-)
	if [ $state = pass ] && [ -n "$listed" ]; then
		echo "not ok $n - $t: passes, but onnx-backend-guest-xfail.txt expects it to fail: delete its line there"
		fail=1
	elif [ $state = pass ]; then
		echo "ok $n - $t"
	elif [ -n "$listed" ] && [ $state != crash ]; then
		echo "not ok $n - $t: $state: $reason # TODO $listed"
	else
		echo "not ok $n - $t: $state: $reason"
		fail=1
	fi
	echo "# onnx-result $t$tab$state$tab$rc$tab$reason"
	echo "$out" | grep -E '^[0-9]+ .* (device|cpu|folded|fused|elided) |^split: ' |
		sed "s|^|# onnx-profile $t |"
done <$list
echo "# $n tests of $list (one in $every) in $(($(date +%s) - start)) s"
echo "1..$n"
exit $fail
