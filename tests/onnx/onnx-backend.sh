#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every ONNX backend test of Debian's libonnx-testdata (node,
# pytorch-converted, pytorch-operator, simple) through npu-run on the host
# CPU path, compared with its expected outputs; TAP on stdout.  Installed
# by tests/onnx/Makefile as test-onnx-backend with the paths filled in.
#
# One line per test:
#   ok         npu-run passes (whether or not onnxruntime 1.30 does)
#   not ok     npu-run fails (refused, mismatch, error, timeout) and the
#              test is not in onnx-backend-xfail.txt; or it crashed
#              (signal or sanitizer report), listed or not
#   not ok ... # TODO reason
#              npu-run fails the way onnx-backend-xfail.txt says (an
#              expected failure, counted apart from failures)
# A listed test that passes fails until its line is deleted, and one that
# now fails another way (a refusal become a mismatch) until its line is
# updated, so the list only shrinks unless someone says why.  Tests that
# onnxruntime does not pass either are run and judged the same way.
#
# Every test runs first with the optimised npu-run (30 s each, two at a
# time); then every test except the expected failures that failed the
# expected way, and those that timed out, runs again under ASan/UBSan,
# whose verdict counts.  (ASan's
# start-up on a thousand models would dominate the layer; the importer's
# refusal paths run sanitized in test-onnx-import and under the fuzzer.)
# A test that passed under this very sanitized binary before (the cache
# is keyed by its sha256, so any change to libnpu empties it) and passes
# the optimised run again is not run sanitized again.
# Environment: ONNX_DATA_ROOT, ONNX_BACKEND_XFAIL (the list), JOBS.
set -uo pipefail
NPU_RUN_FAST=@NPU_RUN_FAST@
NPU_RUN_SAN=@NPU_RUN_SAN@
RUN_TESTS=@RUN_TESTS@
ORT_RESULTS=@ORT_RESULTS@
XFAIL=${ONNX_BACKEND_XFAIL:-@XFAIL@}
SAN_CACHE=@SAN_CACHE@
export ONNX_DATA_ROOT=${ONNX_DATA_ROOT:-/usr/share/libonnx-testdata/data}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export JOBS=${JOBS:-2}
export NPU_RUN_ARGS=--cpu
list_name=$(basename "$XFAIL")

n=0
fails=0
tap() {	# tap ok|notok|todo DESCRIPTION [REASON]
	n=$((n + 1))
	case $1 in
	ok) echo "ok $n - $2" ;;
	notok) echo "not ok $n - $2"; fails=$((fails + 1)) ;;
	todo) echo "not ok $n - $2 # TODO $3" ;;
	esac
}

if [ ! -d "$ONNX_DATA_ROOT/node" ]; then
	echo "not ok 1 - no $ONNX_DATA_ROOT/node (Debian's libonnx-testdata; make deps installs it)"
	echo "1..1"
	exit 1
fi

# "suite/test<TAB>state: reason", one a line.
declare -A xstate=() xwhy=()
if [ -f "$XFAIL" ]; then
	while IFS=$'\t' read -r t why; do
		case $t in '' | '#'*) continue ;; esac
		xstate[$t]=${why%%:*}
		xwhy[$t]=${why:-"(no reason in $list_name)"}
	done <"$XFAIL"
else
	tap notok "expected-failure list $XFAIL exists"
fi
declare -A ort=()
while IFS=$'\t' read -r t state _; do
	ort[$t]=$state
done <"$ORT_RESULTS"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
start=$(date +%s)
echo - | TIMEOUT=30 "$RUN_TESTS" "$NPU_RUN_FAST" "$scratch/fast"
fast_s=$(($(date +%s) - start))

declare -A state=() rc=() reason=()
while IFS=$'\t' read -r t s c r; do
	state[$t]=$s rc[$t]=$c reason[$t]=$r
done <"$scratch/fast/results.tsv"
if [ ${#state[@]} = 0 ]; then
	tap notok "run-tests.sh ran no test of $ONNX_DATA_ROOT"
	echo "1..$n"
	exit 1
fi
mkdir -p "$SAN_CACHE"
san_clean=$SAN_CACHE/$(sha256sum "$NPU_RUN_SAN" | cut -c1-32).txt
declare -A clean=()
cached=0
if [ -f "$san_clean" ]; then
	while read -r t; do clean[$t]=1; done <"$san_clean"
	cached=$(awk -F'\t' '$2 == "pass" { print $1 }' "$scratch/fast/results.tsv" |
		sort | comm -12 - "$san_clean" | wc -l)
fi
for t in "${!state[@]}"; do
	s=${state[$t]}
	# a hang would only hang longer sanitized
	if { [ "$s" = pass ] && [ -n "${clean[$t]+1}" ]; } || [ "$s" = timeout ]; then
		continue
	fi
	[ "$s" != crash ] && [ "${xstate[$t]-}" = "$s" ] || echo "$t"
done | sort >"$scratch/again.txt"
# ASan and UBSan slow a run down about threefold.
start=$(date +%s)
TIMEOUT=120 "$RUN_TESTS" "$NPU_RUN_SAN" "$scratch/san" <"$scratch/again.txt"
san_s=$(($(date +%s) - start))
while IFS=$'\t' read -r t s c r; do
	state[$t]=$s rc[$t]=$c reason[$t]=$r
	[ "$s" = pass ] && clean[$t]=1
done <"$scratch/san/results.tsv"
# What passed sanitized under this binary, for the next run.
for t in "${!state[@]}"; do
	[ "${state[$t]}" = pass ] && [ -n "${clean[$t]+1}" ] && echo "$t"
done | sort >"$scratch/clean.txt"
find "$SAN_CACHE" -name '*.txt' -delete
mv "$scratch/clean.txt" "$san_clean"

declare -A count=()
for t in $(printf '%s\n' "${!state[@]}" | sort); do
	s=${state[$t]} r=${reason[$t]}
	o=${ort[$t]:-"not in $(basename "$ORT_RESULTS")"}
	desc=$t
	[ "$o" = pass ] || desc="$t (onnxruntime: $o)"
	count[$s]=$((${count[$s]:-0} + 1))
	if [ -n "${xstate[$t]+1}" ] && [ "$s" = pass ]; then
		tap notok "$desc: passes, but $list_name expects it to fail: delete its line there"
	elif [ "$s" = pass ]; then
		tap ok "$desc"
	elif [ "$s" = crash ]; then
		tap notok "$desc: crashed (exit ${rc[$t]}): $r"
		# the sanitized log when there is one: it has the stack
		log=$scratch/san/log/$t.log
		[ -f "$log" ] || log=$scratch/fast/log/$t.log
		grep -v '^ *[0-9]* .*  *\(device\|cpu\|folded\|fused\|elided\) ' "$log" | head -n 40 | sed 's/^/#   /'
	elif [ -z "${xstate[$t]+1}" ]; then
		tap notok "$desc: $s: $r (not in $list_name)"
	elif [ "${xstate[$t]}" != "$s" ]; then
		tap notok "$desc: $s: $r; $list_name expects ${xstate[$t]}: update its line"
	else
		tap todo "$desc" "${xwhy[$t]}"
	fi
done
stale=
for t in "${!xstate[@]}"; do
	[ -n "${state[$t]+1}" ] || stale="$stale $t"
done
if [ -z "$stale" ]; then
	tap ok "every test in $list_name is in $ONNX_DATA_ROOT"
else
	tap notok "$list_name names tests that are not in $ONNX_DATA_ROOT:$stale"
fi
summary=
for s in pass mismatch refused error timeout crash; do
	summary="$summary, ${count[$s]:-0} $s"
done
echo "# ${#state[@]} tests:${summary#,}"
echo "# optimised run of every test ${fast_s}s; $(wc -l <"$scratch/again.txt") again under ASan/UBSan ${san_s}s ($cached passed under this binary before)"
echo "1..$n"
[ $fails = 0 ]
