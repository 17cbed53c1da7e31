#!/usr/bin/env bash
# Run the device model's qtests against the QEMU we built.
# usage: run-qtests.sh RESULTS FUZZ_SECONDS FUZZ_SEED [fuzz-only]
set -euo pipefail
. "$(dirname "$0")/env.sh"
results=$1 fuzz_seconds=$2 fuzz_seed=$3 only=${4:-}
export QTEST_QEMU_BINARY=$VNPU_QEMU
export VNPU_FUZZ_SECONDS=$fuzz_seconds VNPU_FUZZ_SEED=$fuzz_seed
tests=("$VNPU_QEMU_BUILD/tests/qtest/vnpu-fuzz-test")
[ "$only" = fuzz-only ] || tests=("$VNPU_QEMU_BUILD/tests/qtest/vnpu-test" "${tests[@]}")
cd "$VNPU_QEMU_BUILD"
exec "$VNPU_TOP/scripts/run-tap.py" --layer qtest --results "$results" \
	--timeout $((fuzz_seconds + 600)) --arg=--tap --arg=-k --quiet "${tests[@]}"
