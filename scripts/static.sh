#!/usr/bin/env bash
# Static checks of the driver: checkpatch.pl --strict (from linux-source-6.12)
# per file, then one kbuild run with W=1 and sparse (C=2).  Any warning is a
# failure.  Results become TAP in $1.
set -uo pipefail
. "$(dirname "$0")/env.sh"
results=$1
src=$("$VNPU_TOP/scripts/linux-src.sh") || exit 1
out=$VNPU_BUILD/static
mkdir -p "$out"
n=0 fails=0
tap=()
report() { # ok|not-ok description [log]
	n=$((n + 1))
	if [ "$1" = ok ]; then tap+=("ok $n - $2"); else tap+=("not ok $n - $2"); fails=$((fails + 1)); [ -n "${3:-}" ] && cat "$3"; fi
}

files=$(cd "$VNPU_TOP" && ls kernel/*.[ch] kernel/tests/*.[ch] uapi/drm/vnpu_accel.h 2>/dev/null)
if [ -z "$files" ]; then
	printf 'TAP version 13\n1..0\n# static: no driver sources yet\n' | tee "$results"
	exit 0
fi
for f in $files; do
	log=$out/checkpatch-$(echo "$f" | tr / _).log
	if (cd "$VNPU_TOP" && perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f "$f") >"$log" 2>&1; then
		report ok "checkpatch --strict $f"
	else
		report not-ok "checkpatch --strict $f" "$log"
	fi
done

# W=1 and sparse in a build directory of their own, so flag changes never
# force the regular module build to recompile.
log=$out/kbuild-w1-sparse.log
if VNPU_BUILD=$out "$VNPU_TOP/scripts/kmod.sh" W=1 C=2 >"$log" 2>&1; then
	if grep -E '(warning|error):' "$log" >/dev/null; then
		report not-ok "W=1 + sparse C=2 build without warnings" "$log"
	else
		report ok "W=1 + sparse C=2 build without warnings"
	fi
else
	report not-ok "W=1 + sparse C=2 build" "$log"
fi

{
	echo "TAP version 13"
	echo "1..$n"
	printf '%s\n' "${tap[@]}"
	echo "# static: $((n - fails)) passed, $fails failed"
} > "$results"
tail -n1 "$results"
[ "$fails" = 0 ]
