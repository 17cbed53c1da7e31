#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run ONNX backend tests (Debian's libonnx-testdata) through npu-run and
# record how each ended.
#
#   run-tests.sh NPU_RUN OUT_DIR [TEST...]
#
# TEST is a path under $ONNX_DATA_ROOT such as node/test_abs; with none,
# the tests are read from stdin, one a line ("-" alone: every test of the
# four directories).  Each test runs as
#   npu-run model.onnx --input input_0.pb ... --expect output_0.pb ... --profile $NPU_RUN_ARGS
# under a TIMEOUT-second limit, JOBS at a time, and leaves:
#   OUT_DIR/log/TEST.log   npu-run's output (stdout and stderr)
#   OUT_DIR/results.tsv    TEST <TAB> state <TAB> exit status <TAB> reason,
#                          sorted by test
# state is one of
#   pass      exit 0: every output within tolerance
#   mismatch  exit 1 with an output beyond tolerance (or of another shape)
#   refused   exit 3: the importer or the graph compiler refused the model
#   error     any other exit below 128 (a run-time error, bad input files)
#   timeout   still running after TIMEOUT seconds (then killed)
#   crash     killed by a signal, or a sanitizer report in the output
# and reason is npu-run's last error line (the refusal), its first
# mismatching output, or the sanitizer's report.
# Environment: ONNX_DATA_ROOT (/usr/share/libonnx-testdata/data), JOBS (2),
# TIMEOUT (30), NPU_RUN_ARGS (extra npu-run arguments, e.g. --cpu).
set -uo pipefail
ONNX_DATA_ROOT=${ONNX_DATA_ROOT:-/usr/share/libonnx-testdata/data}
ONNX_SUITES="node pytorch-converted pytorch-operator simple"
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-30}
NPU_RUN_ARGS=${NPU_RUN_ARGS:-}

# One test: its log and its one-line result file.  Bash builtins only
# besides timeout and npu-run: a thousand tests' forks add up.
run_one() {
	local npu_run=$1 out=$2 t=$3 dir=$ONNX_DATA_ROOT/$3 i args=() log rc state reason line
	local set=$dir/test_data_set_0 lines=() err='' mism='' san=''
	log=$out/log/$t.log
	# input_10.pb comes after input_9.pb, which a glob does not keep.
	for ((i = 0; ; i++)); do
		[ -f "$set/input_$i.pb" ] || break
		args+=(--input "$set/input_$i.pb")
	done
	for ((i = 0; ; i++)); do
		[ -f "$set/output_$i.pb" ] || break
		args+=(--expect "$set/output_$i.pb")
	done
	# shellcheck disable=SC2086
	timeout -k 5 "$TIMEOUT" "$npu_run" "$dir/model.onnx" "${args[@]}" --profile \
		$NPU_RUN_ARGS >"$log" 2>&1 </dev/null
	rc=$?
	mapfile -t lines <"$log"
	for line in "${lines[@]}"; do
		case $line in
		"npu-run: "*) err=${line#npu-run: } ;;
		esac
		case $line in
		"output "*": MISMATCH"* | *"shape or dtype differs"*) [ -n "$mism" ] || mism=${line#npu-run: } ;;
		*"ERROR: "*Sanitizer* | *"runtime error:"* | "SUMMARY: "*) [ -n "$san" ] || san=$line ;;
		esac
	done
	reason=$err
	if [ -n "$san" ]; then
		state=crash reason=$san
	elif [ $rc = 124 ]; then
		state=timeout reason="still running after $TIMEOUT s"
	elif [ $rc -ge 128 ]; then
		state=crash reason="killed by signal $((rc - 128))${err:+ after: $err}"
	elif [ $rc = 0 ]; then
		state=pass reason=
	elif [ $rc = 3 ]; then
		state=refused
	elif [ $rc = 1 ] && [ -n "$mism" ]; then
		# an earlier "npu-run:" line may be a refusal npu-run recovered from
		state=mismatch reason=$mism
	else
		state=error reason=${err:-"exit $rc: ${lines[-1]-}"}
	fi
	# One line per test, whatever the message held; the model's own
	# path says nothing the test's name does not.
	reason=${reason//$dir\/model.onnx: /}
	reason=${reason//$set\//}
	reason=${reason//$'\t'/ }
	printf '%s\t%s\t%s\t%.300s\n' "$t" "$state" "$rc" "$reason" >"$out/log/$t.res"
}

if [ "${1:-}" = --one ]; then
	run_one "$2" "$3" "$4"
	exit 0
fi
if [ $# -lt 2 ]; then
	echo "usage: $0 NPU_RUN OUT_DIR [TEST...]" >&2
	exit 2
fi
npu_run=$1 out=$2
shift 2
mkdir -p "$out"
list=$out/tests.txt
if [ $# -gt 0 ]; then
	printf '%s\n' "$@" >"$list"
else
	cat >"$list"
fi
if [ "$(cat "$list")" = - ]; then
	for s in $ONNX_SUITES; do
		for d in "$ONNX_DATA_ROOT/$s"/test_*; do
			[ -f "$d/model.onnx" ] && echo "$s/${d##*/}"
		done
	done >"$list"
fi
while read -r t; do rm -f "$out/log/$t.res"; done <"$list"
# shellcheck disable=SC2046
mkdir -p "$out/log" $(sed -n 's|^\(.*\)/[^/]*$|'"$out"'/log/\1|p' "$list" | sort -u)
export ONNX_DATA_ROOT TIMEOUT NPU_RUN_ARGS
xargs -a "$list" -d '\n' -P "$JOBS" -n 1 "$0" --one "$npu_run" "$out"
while read -r t; do
	if [ -f "$out/log/$t.res" ]; then
		IFS= read -r line <"$out/log/$t.res"
		echo "$line"
	else
		printf '%s\terror\t-\tthe runner recorded no result\n' "$t"
	fi
done <"$list" | sort >"$out/results.tsv"
