#!/usr/bin/env bash
# Run the device model's qtests against the QEMU we built.
# usage: run-qtests.sh RESULTS FUZZ_SECONDS FUZZ_SEED [fuzz-only]
#
# The full output of every test (QEMU command lines, g_test_message()
# measurements) goes to RESULTS with .log for .tap; the console gets the
# measurements worth reading (reset timings, fuzz statistics), the summary,
# and the whole output of any failing test.
set -euo pipefail
. "$(dirname "$0")/env.sh"
results=$1 fuzz_seconds=$2 fuzz_seed=$3 only=${4:-}
log=${results%.tap}.log
export QTEST_QEMU_BINARY=$VNPU_QEMU
export VNPU_FUZZ_SECONDS=$fuzz_seconds VNPU_FUZZ_SEED=$fuzz_seed
tests=("$VNPU_QEMU_BUILD/tests/qtest/vnpu-fuzz-test")
[ "$only" = fuzz-only ] || tests=("$VNPU_QEMU_BUILD/tests/qtest/vnpu-test" "${tests[@]}")
cd "$VNPU_QEMU_BUILD"
rc=0
"$VNPU_TOP/scripts/run-tap.py" --layer qtest --results "$results" \
	--timeout $((fuzz_seconds + 600)) --arg=--tap --arg=-k "${tests[@]}" >"$log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$log"
else
	grep -E '^# .*(longest legal command|after the (soft reset|FLR)|vnpu fuzz:)' "$log" || true
	tail -n 1 "$log"
fi
exit "$rc"
