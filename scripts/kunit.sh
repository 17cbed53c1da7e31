#!/usr/bin/env bash
# Build and run the driver's KUnit tests with kunit.py on UML, in tree as
# drivers/accel/vnpu (scripts/linux-src.sh).  The tests are part of the
# driver (see Kconfig), which UML's PCI-over-virtio emulation lets build.
# Results become TAP in $1.
set -euo pipefail
. "$(dirname "$0")/env.sh"
results=$1
src=$("$VNPU_TOP/scripts/linux-src.sh")
kconfig=$src/drivers/accel/vnpu/kernel/.kunitconfig
if [ ! -f "$kconfig" ]; then
	printf 'TAP version 13\n1..0\n# kunit: no KUnit suites yet (kernel/.kunitconfig missing)\n' | tee "$results"
	exit 0
fi
build=$VNPU_CACHE/kunit-uml
mkdir -p "$build"
json=$build/results.json
rm -f "$json"
set +e
(cd "$src" && "$VNPU_TOP/scripts/progress.py" --label "KUnit on UML (build and run)" \
	--log "$build/kunit.log" -- python3 tools/testing/kunit/kunit.py run --arch=um \
	--build_dir="$build" --kunitconfig="$kconfig" --jobs="$(nproc)" \
	--timeout=300 --json="$json")
rc=$?
set -e
grep -E '^\[[0-9:]+\] (=|\[|Testing|Ran|Elapsed)' "$build/kunit.log" | tail -n 60 || true
python3 - "$json" "$results" "$rc" "$build/kunit.log" <<'PY'
import json, sys
path, out, rc, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
entries = []
def walk(group, prefix):
    """kunit.py's JSON: groups with sub_groups and leaf test_cases."""
    for case in group.get("test_cases", []):
        st = case.get("status", "")
        entries.append((st in ("PASS", "SKIP"),
                        "%s%s%s" % (prefix, case.get("name"), " # SKIP" if st == "SKIP" else "")))
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub.get("name", "") + ".")
try:
    with open(path) as f:
        walk(json.load(f), "")
except (OSError, ValueError):
    pass
if rc != 0 and all(ok for ok, _ in entries):
    entries.append((False, "kunit.py failed (exit %d), see %s" % (rc, log)))
lines = ["TAP version 13", "1..%d" % len(entries)]
for i, (ok, d) in enumerate(entries, 1):
    lines.append("%s %d - %s" % ("ok" if ok else "not ok", i, d))
p = sum(ok for ok, _ in entries)
lines.append("# kunit: %d passed, %d failed" % (p, len(entries) - p))
open(out, "w").write("\n".join(lines) + "\n")
print(lines[-1])
sys.exit(0 if p == len(entries) and rc == 0 else 1)
PY
