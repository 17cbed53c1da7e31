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
	printf 'TAP version 13\n1..0 # SKIP no KUnit suites (kernel/.kunitconfig missing)\n# kunit: 0 passed, 0 failed, 1 skipped\n' |
		tee "$results"
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
import json, os, re, sys
path, out, rc, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
entries = []   # (status, description): passed, failed or skipped
# A skip's reason is on the test's KTAP line, "ok N name # SKIP reason", in
# the kernel's raw output (test.log in the build dir) or kunit.py's log.
skip_why = {}
for raw in (os.path.join(os.path.dirname(path), "test.log"), log):
    try:
        with open(raw, errors="replace") as f:
            for line in f:
                m = re.search(r"\bok \d+ (\S+) # SKIP\s*(.*)$", line)
                if m and m.group(2).strip():
                    skip_why.setdefault(m.group(1), m.group(2).strip())
    except OSError:
        pass
def walk(group, prefix):
    """kunit.py's JSON: groups with sub_groups and leaf test_cases."""
    for case in group.get("test_cases", []):
        st = case.get("status", "")
        name = prefix + str(case.get("name"))
        if st == "PASS":
            entries.append(("passed", name))
        elif st == "SKIP":
            why = skip_why.get(str(case.get("name")), "(no reason in the KTAP output)")
            entries.append(("skipped", "%s # SKIP %s" % (name, why)))
        else:
            entries.append(("failed", "%s (%s)" % (name, st or "no status")))
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub.get("name", "") + ".")
try:
    with open(path) as f:
        walk(json.load(f), "")
except (OSError, ValueError):
    pass
if rc != 0 and all(st != "failed" for st, _ in entries):
    entries.append(("failed", "kunit.py failed (exit %d), see %s" % (rc, log)))
if not entries:
    entries.append(("failed", "kunit.py reported no test cases, see %s" % log))
lines = ["TAP version 13", "1..%d" % len(entries)]
for i, (st, d) in enumerate(entries, 1):
    lines.append("%s %d - %s" % ("not ok" if st == "failed" else "ok", i, d))
count = {k: sum(1 for st, _ in entries if st == k) for k in ("passed", "failed", "skipped")}
lines.append("# kunit: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % count)
open(out, "w").write("\n".join(lines) + "\n")
print(lines[-1])
sys.exit(1 if count["failed"] or rc != 0 else 0)
PY
