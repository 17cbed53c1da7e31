#!/usr/bin/env bash
# Run every host unit test (test-* in the given directories) as TAP.
set -euo pipefail
. "$(dirname "$0")/env.sh"
results=$1
shift
tests=()
for d in "$@"; do
	[ -d "$d" ] || continue
	while IFS= read -r t; do tests+=("$t"); done < <(find "$d" -maxdepth 1 -name 'test-*' -type f -perm -u+x | sort)
done
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# VNPU_TEST_JOBS=1 runs them one at a time, as a test that fails only
# under load would need to be looked at.
exec "$VNPU_TOP/scripts/run-tap.py" --layer host --results "$results" --quiet \
	--jobs "${VNPU_TEST_JOBS:-$(nproc)}" --durations "$VNPU_BUILD/host-test-durations.json" \
	${tests[@]+"${tests[@]}"}
