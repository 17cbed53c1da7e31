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
exec "$VNPU_TOP/scripts/run-tap.py" --layer host --results "$results" --quiet ${tests[@]+"${tests[@]}"}
