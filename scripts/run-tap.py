#!/usr/bin/env python3
"""Run test executables that speak TAP and merge their results.

Each executable's top-level "ok"/"not ok" lines become entries in one
renumbered TAP stream, written to --results and stdout.  An executable that
exits non-zero without reporting a failure, that prints no result at all,
or that exceeds --timeout counts as a failure of its own, so a crash can
never pass silently.  Directives keep TAP's meaning: "ok ... # SKIP" and a
"1..0 # SKIP reason" plan are skipped (never passed), "not ok ... # TODO"
is an expected failure, and "ok ... # TODO" an unexpected pass, which
fails (its expected-failure list is out of date).  A layer given no
executables fails unless --empty names why it is empty by configuration.

With --jobs N the executables run N at a time (the host's cores would
otherwise sit idle behind one single-threaded test), longest first as
--durations remembers them from the last run; the merged stream, the
results and what is printed keep the order the executables were given, so
a run's report does not depend on the scheduling.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

TAP = re.compile(r"^(not ok|ok)\b\s*\d*\s*-?\s*(.*)$")
SKIP_ALL = re.compile(r"^1\.\.0\s*#\s*SKIP\S*\s*(.*)$", re.IGNORECASE)
DIRECTIVE = re.compile(r"#\s*(SKIP|TODO)\b", re.IGNORECASE)


def status(ok, desc):
    """passed, failed, skipped or xfail, as tap-summary.py counts them."""
    d = DIRECTIVE.search(desc)
    kind = d.group(1).upper() if d else None
    if ok:
        return {"SKIP": "skipped", "TODO": "failed"}.get(kind, "passed")
    return "xfail" if kind == "TODO" else "failed"


def run_one(test, extra, timeout):
    """(output, exit status, timed out, seconds) of one executable."""
    start = time.monotonic()
    try:
        p = subprocess.run([test] + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        out, rc, timed_out = p.stdout, p.returncode, False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc, timed_out = -1, True
    return out, rc, timed_out, time.monotonic() - start


def load_durations(path):
    """Seconds per executable from the last run; only a scheduling hint."""
    if not path:
        return {}
    try:
        with open(path) as f:
            d = json.load(f)
        return {k: float(v) for k, v in d.items() if isinstance(v, (int, float))}
    except (OSError, ValueError, AttributeError):
        return {}


def save_durations(path, durations):
    if not path:
        return
    try:
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(durations, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--layer", required=True)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=1, help="executables run at a time")
    ap.add_argument("--durations", metavar="FILE",
                    help="JSON of each executable's last run time, read to start the longest first "
                         "and rewritten")
    ap.add_argument("--arg", action="append", default=[], help="argument for every test")
    ap.add_argument("--quiet", action="store_true", help="print only failures")
    ap.add_argument("--empty", metavar="REASON",
                    help="the layer may have no executables, for this reason")
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()

    durations = load_durations(args.durations)
    order = sorted(range(len(args.tests)),
                   key=lambda i: -durations.get(os.path.basename(args.tests[i]), 0.0))
    runs = [None] * len(args.tests)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_one, args.tests[i], args.arg, args.timeout): i for i in order}
        for f in concurrent.futures.as_completed(futures):
            runs[futures[f]] = f.result()

    entries = []
    for t, (out, rc, timed_out, secs) in zip(args.tests, runs):
        name = os.path.basename(t)
        durations[name] = secs
        seen, failed = 0, False
        for line in out.splitlines():
            m = SKIP_ALL.match(line)
            if m:
                seen += 1
                entries.append(("skipped", "%s # SKIP %s" % (name, m.group(1).strip())))
                continue
            m = TAP.match(line)
            if not m:
                continue
            seen += 1
            desc = m.group(2).strip()
            st = status(m.group(1) == "ok", desc)
            failed |= st == "failed"
            if st == "failed" and m.group(1) == "ok":
                # "not ok" without the directive, so every reader counts it failed.
                desc = re.sub(r"#\s*TODO\b", "(expected to fail:", desc, flags=re.IGNORECASE) + \
                    ") passed unexpectedly: remove it from its expected-failure list"
            entries.append((st, "%s: %s" % (name, desc)))
        if timed_out:
            entries.append(("failed", "%s: timed out after %d s" % (name, args.timeout)))
        elif rc != 0 and not failed:
            entries.append(("failed", "%s: exited with status %d" % (name, rc)))
        elif seen == 0:
            entries.append(("failed", "%s: printed no TAP results" % name))
        if failed or rc != 0 or seen == 0 or not args.quiet:
            sys.stdout.write(out)
    save_durations(args.durations, durations)
    if not args.tests and args.empty:
        entries.append(("skipped", "%s: empty # SKIP %s" % (args.layer, args.empty)))
    elif not args.tests:
        entries.append(("failed", "%s: no tests found to run in this layer" % args.layer))
    lines = ["TAP version 13", "1..%d" % len(entries)]
    for i, (st, desc) in enumerate(entries, 1):
        lines.append("%s %d - %s" % ("not ok" if st in ("failed", "xfail") else "ok", i, desc))
    count = {k: sum(1 for st, _ in entries if st == k)
             for k in ("passed", "failed", "skipped", "xfail")}
    lines.append("# %s: %d passed, %d failed, %d skipped%s" % (
        args.layer, count["passed"], count["failed"], count["skipped"],
        ", %d expected failures" % count["xfail"] if count["xfail"] else ""))
    with open(args.results, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(lines[-1])
    sys.exit(1 if count["failed"] else 0)


if __name__ == "__main__":
    main()
