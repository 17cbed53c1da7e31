#!/usr/bin/env bash
# Run a host fuzzer (tests/fuzz, libFuzzer + ASan/UBSan; TARGET engine,
# the default, or onnx) for a fixed budget and write one TAP line per
# check to RESULTS:
#   1. every reproducer in tests/fuzz/regress/TARGET/ runs clean (a line
#      each);
#   2. fuzzing from the committed corpus (plus a scratch copy, never the
#      checkout) for SECONDS with a fixed seed finds nothing, and executes
#      at least MIN_RUNS inputs (topped up with a second, equally long run
#      if a slow machine fell short; fewer than MIN_RUNS in all fails).
# A crash leaves its input in BUILD/artifacts/ and the log in BUILD/.
#
# usage: run-fuzz.sh RESULTS BUILD SECONDS MIN_RUNS SEED [TARGET]
# FUZZ_CORPUS_DIR: keep what the run finds there instead of a scratch dir.
# FUZZ_EXTRA_SEEDS: a directory whose */model.onnx files seed the run too
# (Debian's ONNX node tests for the onnx target).
set -euo pipefail
. "$(dirname "$0")/env.sh"
results=$1 build=$2 seconds=$3 min_runs=$4 seed=$5 target=${6:-engine}
name=fuzz-$target
fuzzer=$build/$name
corpus=$VNPU_TOP/tests/fuzz/corpus/$target
regress=$VNPU_TOP/tests/fuzz/regress/$target
artifacts=$build/artifacts
[ -x "$fuzzer" ] || die "$fuzzer not built (make -C tests/fuzz host-tests)"
mkdir -p "$artifacts" "$(dirname "$results")"

scratch=$(mktemp -d "$build/scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
work=${FUZZ_CORPUS_DIR:-$scratch/corpus}
mkdir -p "$work"
seeds=()
[ -d "$corpus" ] && seeds+=("$corpus")
if [ -n "${FUZZ_EXTRA_SEEDS:-}" ] && [ -d "$FUZZ_EXTRA_SEEDS" ]; then
	mkdir -p "$scratch/seeds"
	for f in "$FUZZ_EXTRA_SEEDS"/*/model.onnx; do
		[ -f "$f" ] && cp "$f" "$scratch/seeds/$(basename "$(dirname "$f")").onnx"
	done
	seeds+=("$scratch/seeds")
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1
# Symbolized sanitizer stacks (llvm-14; plain "llvm-symbolizer" needs "llvm").
for s in llvm-symbolizer /usr/lib/llvm-14/bin/llvm-symbolizer; do
	if command -v "$s" >/dev/null; then
		export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v "$s")}
		break
	fi
done
# libFuzzer options common to every run.
case $target in
engine) max_len=4696 ;;	# header + command + memory data (fuzz-engine.h)
*) max_len=65536 ;;
esac
opts=(-max_len=$max_len -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
      -artifact_prefix="$artifacts/")

tap=()
record() {	# record OK DESCRIPTION
	if [ "$1" = 1 ]; then tap+=("ok $((${#tap[@]} + 1)) - $2")
	else tap+=("not ok $((${#tap[@]} + 1)) - $2"); fi
}

# Why a run failed, from its log: the sanitizer or target report.
crash_summary() {
	local s
	s=$(grep -m1 -E 'fuzz-[a-z]+: BUG|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$1" || true)
	printf '%s' "${s:-exit status $2}" | tr -d '\r' | cut -c1-200
}

# The report of a crash, with the stack frames that are ours.
report() {
	grep -E 'BUG|^  (op|t[0-3]:) |ERROR|runtime error|SUMMARY|#[0-9]+ 0x.* in .*/(ops|tests/fuzz|libnpu/[a-z]+)/[a-z_-]+\.[ch]:' "$1" |
		head -30 >&2 || true
}

# 1. Regressions: each reproducer once, one TAP line each.
mapfile -t inputs < <(find "$regress" -maxdepth 1 -type f 2>/dev/null | sort)
[ ${#inputs[@]} -gt 0 ] || record 1 "$name: regressions: none yet"
for f in ${inputs[@]+"${inputs[@]}"}; do
	input=regress/$target/$(basename "$f")
	lf=$build/$name-regress.log
	if "$fuzzer" "${opts[@]}" -runs=1 "$f" >"$lf" 2>&1; then
		record 1 "$name: $input"
	else
		rc=$?
		report "$lf"
		cp "$lf" "$build/$name-regress-$(basename "$f").log"
		record 0 "$name: $input: $(crash_summary "$lf" $rc)"
	fi
done

# 2. The fixed-budget run, plus a top-up run if it fell short of MIN_RUNS.
total=0 secs=0 crashed=0 why=
for pass in 1 2; do
	lf=$build/$name-run$pass.log
	args=(-seed=$((seed + pass - 1)) -max_total_time="$seconds")
	[ $pass = 1 ] || args+=(-runs=$((min_runs - total)))
	rc=0
	"$fuzzer" "${opts[@]}" "${args[@]}" "$work" ${seeds[@]+"${seeds[@]}"} >"$lf" 2>&1 || rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$lf" | tail -1)
	t=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$lf" | tail -1)
	if [ $rc != 0 ] || [ -z "$n" ]; then
		crashed=1
		n=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$lf" | tail -1)
		total=$((total + ${n:-0}))
		why=$(crash_summary "$lf" $rc)
		report "$lf"
		grep -E 'Test unit written' "$lf" >&2 || true
		log "$name crashed (log $lf, input in $artifacts/);" \
			"reproduce with: $fuzzer INPUT, then add INPUT to tests/fuzz/regress/$target/"
		break
	fi
	total=$((total + n))
	secs=$((secs + ${t:-$seconds}))
	[ "$total" -ge "$min_runs" ] && break
	log "$name: $total execs in $secs s, below $min_runs: topping up"
done
if [ $crashed = 1 ]; then
	record 0 "$name: crash after $total execs: $why"
elif [ "$total" -lt "$min_runs" ]; then
	record 0 "$name: $total execs in $secs s, below the $min_runs required"
else
	record 1 "$name: $total execs in $secs s, 0 crashes"
fi

{
	echo "TAP version 13"
	echo "1..${#tap[@]}"
	printf '%s\n' "${tap[@]}"
} >"$results"
printf '%s\n' "${tap[@]}"
! grep -q '^not ok' "$results"
