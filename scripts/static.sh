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
	printf 'TAP version 13\n1..0 # SKIP no driver sources (kernel/*.[ch])\n# static: 0 passed, 0 failed, 1 skipped\n' |
		tee "$results"
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

# The MAINTAINERS entry, placed into a copy of the tree's MAINTAINERS where
# parse-maintainers.pl's ordering puts it, must be what get_maintainer.pl
# answers for the driver, its documentation and its uapi header.
log=$out/maintainers.log
python3 - "$src/MAINTAINERS" "$VNPU_TOP/MAINTAINERS" "$out/MAINTAINERS" <<'PY' >"$log" 2>&1
import sys
tree, ours, out = sys.argv[1:]
entry = open(ours).read().split("\n\n", 1)[1].strip("\n") + "\n"
name = entry.split("\n", 1)[0]
text = open(tree).read()
sections = text.split("\n\n")
# The first section after the header text whose title sorts after ours.
for i, sec in enumerate(sections):
    title = sec.split("\n", 1)[0]
    if "\nF:\t" in sec and title.isupper() and title > name:
        sections.insert(i, entry.rstrip("\n"))
        break
open(out, "w").write("\n\n".join(sections))
PY
ok=1
for f in drivers/accel/vnpu/kernel/vnpu_drv.c Documentation/accel/vnpu/index.rst \
	include/uapi/drm/vnpu_accel.h; do
	# As a patch touching the file: the documentation is not in the tree.
	who=$(printf -- '--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-x\n+y\n' "$f" "$f" |
		(cd "$src" && perl scripts/get_maintainer.pl --mpath "$out/MAINTAINERS" \
		--no-git --no-git-fallback --no-tree) 2>&1) || ok=0
	printf '%s:\n%s\n' "$f" "$who" >>"$log"
	grep -q "maintainer:DRM ACCEL DRIVER FOR VNPU" <<<"$who" || ok=0
done
(cd "$src" && perl scripts/parse-maintainers.pl --input="$out/MAINTAINERS" \
	--output="$out/MAINTAINERS.sorted") >>"$log" 2>&1 || ok=0
cmp -s <(grep -A7 '^DRM ACCEL DRIVER FOR VNPU$' "$out/MAINTAINERS") \
	<(grep -A7 '^DRM ACCEL DRIVER FOR VNPU$' "$out/MAINTAINERS.sorted") || ok=0
if [ "$ok" = 1 ]; then
	report ok "MAINTAINERS entry: get_maintainer.pl finds it, parse-maintainers.pl keeps it in place"
else
	report not-ok "MAINTAINERS entry" "$log"
fi

{
	echo "TAP version 13"
	echo "1..$n"
	printf '%s\n' "${tap[@]}"
	echo "# static: $((n - fails)) passed, $fails failed, 0 skipped"
} > "$results"
tail -n1 "$results"
[ "$fails" = 0 ]
