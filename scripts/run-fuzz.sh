#!/usr/bin/env bash
# Run a host fuzzer (tests/fuzz, libFuzzer + ASan/UBSan; TARGET engine,
# the default, or onnx) for a fixed budget and write one TAP line per
# check to RESULTS:
#   1. every reproducer in tests/fuzz/regress/TARGET/ runs clean (a line
#      each), under the same time and memory limits as the fuzzing; for
#      onnx also the reproducers too large to commit, which gen-onnx
#      writes into the build directory.  A missing or empty regress
#      directory fails: each fixed defect keeps its reproducer there;
#   2. fuzzing from the committed corpus (plus a scratch copy, never the
#      checkout) for SECONDS with a fixed seed finds nothing, and executes
#      at least MIN_RUNS inputs (topped up with a second, equally long run
#      if a slow machine fell short; fewer than MIN_RUNS in all fails).
# An input that takes more than FUZZ_TIMEOUT seconds (10), grows the
# process past FUZZ_RSS_LIMIT_MB or asks for one allocation above
# FUZZ_MALLOC_LIMIT_MB fails like a crash, with the reason in the TAP line.
# A crash leaves its input in BUILD/artifacts/ and the log in BUILD/.
#
# usage: run-fuzz.sh RESULTS BUILD SECONDS MIN_RUNS SEED [TARGET]
# FUZZ_CORPUS_DIR: keep what the run finds there instead of a scratch dir.
# FUZZ_EXTRA_SEEDS: directories (space-separated) whose */model.onnx files
# seed the run too (Debian's ONNX node tests for the onnx target, which
# adds Debian's other ONNX test models and the real models' graphs).
#
# A reproducer FILE may come with FILE.expect, lines of
#   refuse ERE        if the model is refused, the message matches ERE
#   refuse-not ERE    if the model is refused, the message does not match
# (for defects that showed as a wrong message rather than a crash).
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
read -r -a seed_dirs <<<"${FUZZ_EXTRA_SEEDS:-}"
if [ "$target" = onnx ]; then
	testdata=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
	seed_dirs+=("$testdata/pytorch-converted" "$testdata/pytorch-operator" "$testdata/simple")
fi
mkdir -p "$scratch/seeds"
for d in ${seed_dirs[@]+"${seed_dirs[@]}"}; do
	for f in "$d"/*/model.onnx; do
		[ -f "$f" ] && cp "$f" "$scratch/seeds/$(basename "$d")-$(basename "$(dirname "$f")").onnx"
	done
done

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
# libFuzzer's limits, for the regressions and the fuzzing alike.  The
# issue's goal for a model is under a second of CPU per megabyte and a peak
# RSS of a few times its size: 10 s per input (wall clock) is that with
# room for the sanitizers and a busy machine.
case $target in
engine) max_len=4696 rss_mb=4096 ;;	# header + command + memory data (fuzz-engine.h)
*) max_len=${FUZZ_ONNX_MAX_LEN:-131072} rss_mb=2048 ;;
esac
rss_mb=${FUZZ_RSS_LIMIT_MB:-$rss_mb}
limits=(-timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="$rss_mb"
	-malloc_limit_mb="${FUZZ_MALLOC_LIMIT_MB:-$rss_mb}")
# libFuzzer options common to every fuzzing run.
opts=(-max_len="$max_len" "${limits[@]}" -print_final_stats=1
      -artifact_prefix="$artifacts/")

# The onnx target's seeds from the real models (scripts/models.sh puts them
# in $VNPU_CACHE/models): their weights would not fit in max_len, so
# gen-onnx makes every large initializer or Constant a graph input of its
# type and shape.
if [ "$target" = onnx ]; then
	n=0
	while IFS= read -r -d '' f; do
		if [ -x "$build/gen-onnx" ] &&
		   "$build/gen-onnx" strip "$f" "$scratch/seeds/real-$(basename "$f")" "$max_len"; then
			n=$((n + 1))
		else
			log "$name: no seed from $f"
		fi
	done < <(find "$VNPU_CACHE/models" -name '*.onnx' -not -path '*/node_modules/*' -print0 2>/dev/null)
	[ $n -gt 0 ] || log "$name: no real models in $VNPU_CACHE/models (make models): not among the seeds"
fi
[ -n "$(ls -A "$scratch/seeds")" ] && seeds+=("$scratch/seeds")

tap=()
record() {	# record OK DESCRIPTION
	if [ "$1" = 1 ]; then tap+=("ok $((${#tap[@]} + 1)) - $2")
	else tap+=("not ok $((${#tap[@]} + 1)) - $2"); fi
}

# Why a run failed, from its log: the sanitizer or target report, or
# libFuzzer's (timeout, out-of-memory for the RSS limit, malloc limit).
crash_summary() {
	local s
	s=$(grep -m1 -E 'fuzz-[a-z]+: BUG|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$1" || true)
	case $s in
	*'libFuzzer: out-of-memory (malloc('*) s="malloc limit: ${s#*ERROR: libFuzzer: }" ;;
	*'libFuzzer: out-of-memory'*) s="RSS limit: ${s#*ERROR: libFuzzer: }" ;;
	*'libFuzzer: timeout'*) s="timeout: ${s#*ERROR: libFuzzer: }" ;;
	esac
	printf '%s' "${s:-exit status $2}" | sed -E 's/^==[0-9]+== ?//' | tr -d '\r' | cut -c1-200
}

# The report of a crash, with the stack frames that are ours.
report() {
	grep -E 'BUG|^  (op|t[0-3]:) |ERROR|runtime error|SUMMARY|#[0-9]+ 0x.* in .*/(ops|tests/fuzz|libnpu/[a-z]+)/[a-z_-]+\.[ch]:' "$1" |
		head -30 >&2 || true
}

# Does the refusal message in log $1 meet $2.expect?  Prints what not.
expect_failure() {
	local lf=$1 exp=$2.expect msg kind re
	[ -f "$exp" ] || return 0
	msg=$(sed -n 's/^fuzz-[a-z]*: refused: //p' "$lf" | head -1)
	[ -n "$msg" ] || return 0
	while read -r kind re; do
		case $kind in
		refuse) grep -qE -- "$re" <<<"$msg" || { printf 'message "%s" does not match /%s/' "$msg" "$re"; return; } ;;
		refuse-not) ! grep -qE -- "$re" <<<"$msg" || { printf 'message "%s" matches /%s/' "$msg" "$re"; return; } ;;
		''|'#'*) ;;
		*) printf '%s: unknown line "%s"' "$exp" "$kind"; return ;;
		esac
	done <"$exp"
}

# 1. Regressions: each reproducer once, one TAP line each, without -max_len
# (libFuzzer would cut a file to it).
mapfile -t inputs < <(find "$regress" -maxdepth 1 -type f ! -name '*.expect' ! -name 'README*' 2>/dev/null | sort)
if [ ${#inputs[@]} = 0 ]; then
	record 0 "$name: regressions: tests/fuzz/regress/$target/ is missing or empty"
fi
if [ "$target" = onnx ]; then
	big=$build/regress-onnx
	rm -rf "$big" && mkdir -p "$big"
	if [ -x "$build/gen-onnx" ] && "$build/gen-onnx" big "$big"; then
		mapfile -t -O ${#inputs[@]} inputs < <(find "$big" -maxdepth 1 -type f ! -name '*.expect' | sort)
	else
		record 0 "$name: regressions: gen-onnx big failed (make -C tests/fuzz host-tests)"
	fi
fi
for f in ${inputs[@]+"${inputs[@]}"}; do
	case $f in
	"$regress"/*) input=regress/$target/$(basename "$f") ;;
	*) input="$(basename "$f") (gen-onnx big)" ;;
	esac
	lf=$build/$name-regress.log
	if FUZZ_ONNX_VERBOSE=1 "$fuzzer" "${limits[@]}" -runs=1 "$f" >"$lf" 2>&1; then
		why=$(expect_failure "$lf" "$f")
		if [ -z "$why" ]; then
			record 1 "$name: $input"
			continue
		fi
	else
		why=$(crash_summary "$lf" $?)
		report "$lf"
	fi
	cp "$lf" "$build/$name-regress-$(basename "$f").log"
	record 0 "$name: $input: $why"
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

failed=$(printf '%s\n' "${tap[@]}" | grep -c '^not ok' || true)
summary="# $name: $((${#tap[@]} - failed)) passed, $failed failed, 0 skipped"
{
	echo "TAP version 13"
	echo "1..${#tap[@]}"
	printf '%s\n' "${tap[@]}"
	echo "$summary"
} >"$results"
printf '%s\n' "${tap[@]}" "$summary"
[ "$failed" = 0 ]
