#!/usr/bin/env python3
"""Sum the TAP results of test layers into the final line.

usage: tap-summary.py RESULTS_DIR LAYER...

The Makefile names the layers (CHECK_LAYERS, less CHECK_SKIP).  A layer's
results are RESULTS_DIR/LAYER.tap and every RESULTS_DIR/LAYER-*.tap (a
layer that runs several tools writes one file each, e.g. fuzz.tap and
fuzz-onnx.tap), all summed.  A layer that should have run but left no
results file counts as one failure, so a layer that broke before testing
cannot vanish from the count; so does a file with no results and no
"1..0 # SKIP reason" plan, and a file whose plan disagrees with its lines.

Each result is one of (TAP's meanings):
  passed             "ok"
  skipped            "ok ... # SKIP reason", or a "1..0 # SKIP reason" plan
  failed             "not ok", and "ok ... # TODO": a known failure that now
                     passes must leave its expected-failure list
  expected failure   "not ok ... # TODO reason": counted apart, with reason
Skips and expected failures are listed by reason at the end.  The last
line is exactly "N passed, N failed, N skipped", which CI reads; the exit
status is 1 when anything failed.
"""
import collections
import glob
import os
import re
import sys

RESULT = re.compile(r"^(not ok|ok)\b\s*\d*\s*-?\s*(.*)$")
PLAN = re.compile(r"^1\.\.(\d+)\s*(?:#\s*(.*))?$")
DIRECTIVE = re.compile(r"#\s*(SKIP|TODO)\S*\s*(.*)$", re.IGNORECASE)

PASS, FAIL, SKIP, XFAIL = "passed", "failed", "skipped", "expected failure"


def classify(line):
    """(status, description, reason) of one TAP result line, or None."""
    m = RESULT.match(line)
    if not m:
        return None
    ok, desc = m.group(1) == "ok", m.group(2).strip()
    d = DIRECTIVE.search(desc)
    kind = d.group(1).upper() if d else None
    reason = d.group(2).strip() if d else ""
    if kind == "SKIP" and ok:
        return SKIP, desc, reason or "(no reason given)"
    if kind == "TODO" and not ok:
        return XFAIL, desc, reason or "(no reason given)"
    if kind == "TODO" and ok:
        return FAIL, desc + " [unexpected pass: remove it from its expected-failure list]", ""
    return (PASS if ok else FAIL), desc, ""


def read_tap(path):
    """Every result of one TAP file as (status, description, reason)."""
    results, plan, skip_all = [], None, None
    with open(path, errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            r = classify(line)
            if r:
                results.append(r)
                continue
            m = PLAN.match(line)
            if m:
                plan = int(m.group(1))
                d = DIRECTIVE.search(line)
                if plan == 0 and d and d.group(1).upper() == "SKIP":
                    skip_all = d.group(2).strip() or "(no reason given)"
    name = os.path.basename(path)
    if skip_all is not None and not results:
        return [(SKIP, name, skip_all)]
    if not results:
        return [(FAIL, "%s: no test results (a layer with nothing to run fails; an empty one "
                 "says why with a \"1..0 # SKIP reason\" plan)" % name, "")]
    if plan is None:
        results.append((FAIL, "%s: no TAP plan (1..N): the run was cut short" % name, ""))
    elif plan != len(results):
        results.append((FAIL, "%s: plan 1..%d but %d results" % (name, plan, len(results)), ""))
    return results


def layer_files(d, layer):
    main = os.path.join(d, layer + ".tap")
    extra = sorted(glob.glob(os.path.join(glob.escape(d), glob.escape(layer) + "-*.tap")))
    return ([main] if os.path.exists(main) else []) + extra


def counts_line(c):
    return "%d passed, %d failed, %d skipped" % (c[PASS], c[FAIL], c[SKIP])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, layers = sys.argv[1], sys.argv[2:]
    total = collections.Counter()
    skips = collections.defaultdict(list)
    xfails = collections.defaultdict(list)
    for layer in layers:
        files = layer_files(d, layer)
        c = collections.Counter()
        if not files:
            print("%-7s FAIL no results: the layer failed before running its tests" % layer)
            c[FAIL] += 1
        for path in files:
            for status, desc, reason in read_tap(path):
                c[status] += 1
                if status == FAIL:
                    print("%-7s FAIL %s" % (layer, desc))
                elif status in (SKIP, XFAIL):
                    bare = DIRECTIVE.sub("", desc).strip() or "(unnamed)"
                    (skips if status == SKIP else xfails)[reason].append(
                        "%s: %s" % (layer, bare))
        print("%-7s %s%s (%s)" % (layer, counts_line(c),
                                  ", %d expected failures" % c[XFAIL] if c[XFAIL] else "",
                                  ", ".join(os.path.basename(f) for f in files) or "no file"))
        total += c
    for title, groups in (("skipped", skips), ("expected failures (not ok # TODO)", xfails)):
        if not groups:
            continue
        print("%s, by reason:" % title)
        for reason in sorted(groups, key=lambda r: (-len(groups[r]), r)):
            tests = groups[reason]
            more = " and %d more" % (len(tests) - 3) if len(tests) > 3 else ""
            print("  %d x %s  [%s%s]" % (len(tests), reason, "; ".join(tests[:3]), more))
    if total[XFAIL]:
        print("%d expected failures, not counted as failed" % total[XFAIL])
    print(counts_line(total))
    sys.exit(1 if total[FAIL] else 0)


if __name__ == "__main__":
    main()
