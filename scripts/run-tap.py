#!/usr/bin/env python3
"""Run test executables that speak TAP and merge their results.

Each executable's top-level "ok"/"not ok" lines become entries in one
renumbered TAP stream, written to --results and stdout.  An executable that
exits non-zero without reporting a failure, that prints no result at all,
or that exceeds --timeout counts as a failure of its own, so a crash can
never pass silently.
"""
import argparse
import os
import re
import subprocess
import sys

TAP = re.compile(r"^(not ok|ok)\b\s*\d*\s*-?\s*(.*)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--layer", required=True)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--arg", action="append", default=[], help="argument for every test")
    ap.add_argument("--quiet", action="store_true", help="print only failures")
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()

    entries = []
    for t in args.tests:
        name = os.path.basename(t)
        try:
            p = subprocess.run([t] + args.arg, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=args.timeout, text=True, errors="replace")
            out, rc, timed_out = p.stdout, p.returncode, False
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, timed_out = -1, True
        seen, failed = 0, False
        for line in out.splitlines():
            m = TAP.match(line)
            if not m:
                continue
            seen += 1
            ok = m.group(1) == "ok"
            failed |= not ok
            entries.append((ok, "%s: %s" % (name, m.group(2).strip())))
        if timed_out:
            entries.append((False, "%s: timed out after %d s" % (name, args.timeout)))
        elif rc != 0 and not failed:
            entries.append((False, "%s: exited with status %d" % (name, rc)))
        elif seen == 0:
            entries.append((False, "%s: printed no TAP results" % name))
        if failed or rc != 0 or seen == 0 or not args.quiet:
            sys.stdout.write(out)
    if not entries:
        print("# %s: no tests in this layer yet" % args.layer)
    lines = ["TAP version 13", "1..%d" % len(entries)]
    for i, (ok, desc) in enumerate(entries, 1):
        lines.append("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
    passed = sum(1 for ok, _ in entries if ok)
    lines.append("# %s: %d passed, %d failed" % (args.layer, passed, len(entries) - passed))
    with open(args.results, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(lines[-1])
    sys.exit(0 if passed == len(entries) else 1)


if __name__ == "__main__":
    main()
