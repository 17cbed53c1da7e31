#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write Documentation/onnx-conformance.rst (on stdout) from a run of the
ONNX backend tests through npu-run: a host run's directory (run-tests.sh:
results.tsv and log/TEST.log with npu-run's --profile table), or a guest
console log of t-onnx-backend (its "# onnx-result" and "# onnx-profile"
lines)."""
import argparse
import collections
import os
import re
import sys

# The source tree stays free of __pycache__.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_ops  # noqa: E402

# npu-run --profile: "%-4zu %-28.28s %-11s %-7s ..." (libnpu/tools/npu-run.c)
PROFILE_ROW = re.compile(r"^\d+\s+(.{28}) (\S+)\s+(device|cpu|folded|fused|elided)\s")
GUEST_RESULT = re.compile(r"^# onnx-result (\S+)\t(\w+)\t(\S+)\t?(.*)$")
GUEST_PROFILE = re.compile(r"^# onnx-profile (\S+) (.*)$")
STATES = ("pass", "mismatch", "refused", "error", "timeout", "crash")
WHERE = ("device", "cpu", "folded", "fused", "elided")


def read_host(run_dir):
    results, rows = {}, {}
    with open(os.path.join(run_dir, "results.tsv"), errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                continue
            test, state, rc = parts[:3]
            results[test] = (state, rc, parts[3] if len(parts) > 3 else "")
    for test in results:
        rows[test] = []
        try:
            with open(os.path.join(run_dir, "log", test + ".log"), errors="replace") as f:
                rows[test] = [line.rstrip("\n") for line in f if PROFILE_ROW.match(line)]
        except OSError:
            pass
    return results, rows


def read_guest(log):
    results, rows = {}, collections.defaultdict(list)
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = GUEST_RESULT.match(line)
            if m:
                results[m.group(1)] = (m.group(2), m.group(3), m.group(4))
                continue
            m = GUEST_PROFILE.match(line)
            if m and PROFILE_ROW.match(m.group(2)):
                rows[m.group(1)].append(m.group(2))
    return results, rows


def read_onnxruntime(path):
    ort = {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                ort[parts[0]] = parts[1]
    return ort


def table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    sep = "  ".join("=" * w for w in widths)
    out = [sep]
    for i, r in enumerate(rows):
        out.append("  ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            out.append(sep)
    out.append(sep)
    return out


def reason_class(reason):
    """A refusal with its names and numbers taken out, to group by."""
    r = re.sub(r"'[^']*'", "'…'", reason)
    r = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", r)
    return r[:150]


def pct(a, b):
    return "%.1f%%" % (100.0 * a / b) if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--host", metavar="DIR", help="run-tests.sh output directory")
    src.add_argument("--guest", metavar="LOG", help="guest console log of t-onnx-backend")
    ap.add_argument("--onnxruntime", required=True, help="onnxruntime's results (TSV)")
    ap.add_argument("--data", required=True, help="libonnx-testdata's data directory")
    ap.add_argument("--xfail", help="with --guest: the host's expected failures, "
                    "which the guest does not run")
    args = ap.parse_args()

    results, rows = read_host(args.host) if args.host else read_guest(args.guest)
    if not results:
        sys.exit("mkdoc: no test results in %s" % (args.host or args.guest))
    if args.guest and args.xfail:
        with open(args.xfail, errors="replace") as f:
            for line in f:
                test, _, why = line.rstrip("\n").partition("\t")
                if test and not test.startswith("#") and test not in results:
                    state, _, reason = why.partition(": ")
                    results[test] = (state, "-", "on the host: " + reason)
    ort = read_onnxruntime(args.onnxruntime)

    per_op = collections.defaultdict(collections.Counter)
    test_ops = {}
    for test in sorted(results):
        state = results[test][0]
        try:
            nodes = onnx_ops.model_nodes(os.path.join(args.data, test, "model.onnx"))
        except (OSError, ValueError):
            nodes = []
        ops = sorted(set(op for op, _ in nodes))
        test_ops[test] = ops
        for op in ops:
            c = per_op[op]
            c["tests"] += 1
            c["pass"] += state == "pass"
            if ort.get(test) == "pass":
                c["ort"] += 1
                c["ort_pass"] += state == "pass"
        # Graph nodes back to the ONNX node they came from, by name
        # (the profile prints 28 characters of it).
        label_op = {label[:28].rstrip(): op for op, label in nodes}
        for row in rows.get(test, []):
            m = PROFILE_ROW.match(row)
            op = label_op.get(m.group(1).rstrip())
            if op:
                per_op[op][m.group(3)] += 1

    n = len(results)
    states = collections.Counter(r[0] for r in results.values())
    ort_pass = [t for t in results if ort.get(t) == "pass"]
    ort_ok = sum(results[t][0] == "pass" for t in ort_pass)
    extra = sorted(t for t in results if ort.get(t) != "pass" and results[t][0] == "pass")

    out = []
    w = out.append
    w(".. SPDX-License-Identifier: MIT")
    w(".. Generated by `make onnx-report` (tests/onnx/mkdoc.py); do not edit by hand.")
    w("")
    w("==========================")
    w("ONNX backend conformance")
    w("==========================")
    w("")
    w("Every test of Debian's ``libonnx-testdata``")
    w("(``/usr/share/libonnx-testdata/data/``: ``node``, ``pytorch-converted``,")
    w("``pytorch-operator``, ``simple``) runs through ``npu-run``, that is the")
    w("ONNX importer (``libnpu-onnx``) and the graph runtime, exactly as a user")
    w("runs a model::")
    w("")
    w("    npu-run model.onnx --input input_0.pb ... --expect output_0.pb ... --profile")
    w("")
    w("and passes when it exits 0: every output within ``|got - want| <=")
    w("1e-5 + 1e-3 * |want|`` (integers and booleans exactly, NaN equals NaN).")
    w("The yardstick is onnxruntime 1.30's CPU provider on the same tests")
    w("and tolerance (``tests/onnx/onnx-backend-onnxruntime-1.30.tsv``).  A")
    w("test still running after 30 s is stopped and counts as a timeout; one")
    w("killed by a signal or with a sanitizer report, as a crash.")
    w("")
    if args.guest:
        w("These results come from a **guest** run (``t-onnx-backend``: Debian's")
        w("6.12 kernel, vnpu.ko and the QEMU device, 60 s per test) over the")
        w("tests that pass on the host: nodes the device's command set takes run")
        w("on the device, the rest on libnpu's CPU path, in one partitioned")
        w("graph.  The tests the host fails (``tests/onnx/onnx-backend-xfail.txt``)")
        w("do not run in the guest and are listed with the host's reason.")
    else:
        w("These results come from a **host** run (``npu-run --cpu``): every node")
        w("runs on libnpu's CPU path, so the placement columns show CPU and")
        w("compile-time folding only.  ``make onnx-report-guest`` regenerates")
        w("this page from the guest, where the device/CPU split is measured.")
    w("")
    w("Regenerate with ``make onnx-report`` (host) or ``make onnx-report-guest``.")
    w("")
    w("Summary")
    w("=======")
    w("")
    out.extend(table([
        ("Tests", "Count"),
        ("tests", str(n)),
        ("onnxruntime 1.30 passes", str(len(ort_pass))),
        ("of those, npu-run passes", "%d (%s)" % (ort_ok, pct(ort_ok, len(ort_pass)))),
        ("npu-run passes, onnxruntime does not", str(len(extra))),
    ] + [("npu-run: " + s, str(states.get(s, 0))) for s in STATES]))
    w("")
    w("*refused*: the importer or the graph compiler said no (exit 3), with")
    w("the node, op and reason; *mismatch*: an output beyond tolerance or of")
    w("another shape; *error*: any other failure npu-run reported.")
    w("")
    w("Per op")
    w("======")
    w("")
    w("An op's tests are the tests whose model contains it (subgraphs")
    w("included), so a test with several ops counts for each.  *Passed* is")
    w("over all of them, *of onnxruntime's* over those onnxruntime passes.")
    w("The placement columns count the graph nodes the importer made of the")
    w("op's nodes, from ``npu-run --profile`` of every test that ran to the")
    w("end: on the device, on the CPU, folded at compile time (constants),")
    w("fused into another node or elided (no work, e.g. a reshape).")
    w("")
    hdr = ("Op", "Passed / tests", "Of onnxruntime's", "Device", "CPU", "Folded",
           "Fused or elided")
    trows = [hdr]
    for op in sorted(per_op, key=str.lower):
        c = per_op[op]
        trows.append((op, "%d / %d" % (c["pass"], c["tests"]),
                      "%d / %d" % (c["ort_pass"], c["ort"]),
                      str(c["device"]), str(c["cpu"]), str(c["folded"]),
                      str(c["fused"] + c["elided"])))
    out.extend(table(trows))
    w("")
    w("Failures by reason")
    w("==================")
    w("")
    w("The failing tests onnxruntime passes, grouped by npu-run's message")
    w("with names and numbers taken out (the largest groups first):")
    w("")
    groups = collections.Counter()
    for t in ort_pass:
        state, _, reason = results[t]
        if state != "pass":
            groups["%s: %s" % (state, reason_class(reason))] += 1
    if groups:
        for g, k in groups.most_common():
            w("- %d × %s" % (k, g.replace("\\", "\\\\").replace("*", "\\*").replace("`", "'")))
    else:
        w("None.")
    w("")
    w("Every failing test")
    w("==================")
    w("")
    w("With its ops, npu-run's last error line, and onnxruntime's own result")
    w("when it does not pass either.")
    w("")
    failing = [t for t in sorted(results) if results[t][0] != "pass"]
    for t in failing:
        state, rc, reason = results[t]
        note = "" if ort.get(t) == "pass" else " [onnxruntime: %s]" % ort.get(t, "not run")
        text = "%s: %s" % (state, reason) if reason else state
        text = text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "'")
        w("- ``%s`` (%s): %s%s" % (t, ", ".join(test_ops.get(t, [])) or "?", text, note))
    if not failing:
        w("None.")
    w("")
    if extra:
        w("Passing where onnxruntime does not")
        w("==================================")
        w("")
        for t in extra:
            w("- ``%s``: onnxruntime %s" % (t, ort.get(t, "not run")))
        w("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
