#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The end of `make bench`: every ratio against its goal, and a chart.

Each part of the run leaves a log (the host engine benchmark's output, the
host's onnxruntime and CPU-path model timings, the guest's console).  This
reads them all and prints

  * per real model: npu-run's device/CPU split and the slowest nodes
    (the guest's "profile <model>: ..." lines), its median on the device
    and the engines the device has, onnxruntime's medians on the host with
    as many threads and with one, the CPU path's on the host, and whether
    each npu-run's outputs match onnxruntime's reference;
  * the model ratios: "ratio <model>-vs-onnxruntime", npu-run's median on
    the device over onnxruntime-node's on the host with one thread per
    device engine, the primary lines; "ratio <model>-vs-onnxruntime-1thread",
    the same over onnxruntime on one thread, informational; the same two
    for each model's int8 version, "<model>-int8-vs-onnxruntime-int8[-1thread]"
    (onnxruntime running the same QDQ file), and "<model>-int8-vs-fp32",
    the fp32 model's device median over the int8 one's, from one boot;
  * one block of every ratio line of the whole run that is a goal, in the
    exact form "ratio <name>: <x>x (goal <op> <target>x)", then "goals met:
    N of M", then the informational lines in the same form;
  * the chart of the ratios against their goals (gnuplot, PNG) and its path.

A ratio is a measurement of outputs that were checked, or it is an error:
"ratio <name>: ERROR <why>", counted as a goal not met, whenever a figure
it needs is missing, zero, not finite or implausible, the part printed an
ERROR line (a peer not run, an output that differs from the reference), or
the model's output on the device was not checked.  Outputs that were
checked and do not match (an int8 model short of onnxruntime's bits, say)
keep their timing, which is still the model's, with the verdict beside it:
"ratio <name>: <x>x (goal <op> <target>x) (outputs not matching: <why>)",
counted as a goal not met.  A part that gave no ratio line is named.  An
error, a mismatch or a missing part makes the script exit non-zero, after
printing everything it has.  Documentation/bench.rst describes each ratio.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys


def goal_str(target):
    """A goal as the issue writes it: 1.0, 1.5, 4.0 (at least one decimal)."""
    text = "%g" % target
    return text if "." in text or "e" in text else text + ".0"


RATIO_LINE = re.compile(r"^ratio (\S+): (.*)$")
RATIO_ERROR = re.compile(r"^ERROR (.+)$")
RATIO_VALUE = re.compile(r"^(\S+)x \(goal (<=|>=) ([0-9]+(?:\.[0-9]+)?)x\)"
                         r"(?: \(outputs not matching: (.+)\))?$")
GUEST_MEDIAN = re.compile(
    r"^bench-model (\S+): npu median (\S+) ms over (\d+) runs(?:, (\d+) engines?)?$")
ORT_MEDIAN = re.compile(r"^onnxruntime (\S+): median (\S+) ms.*\((\d+) threads?\)$")
CPU_MEDIAN = re.compile(r"^cpu-path (\S+): npu-run --cpu median (\S+) ms")
# The outputs of a benchmarked run against onnxruntime's reference
# (tests/guest/models/b-model.sh on the device, bench-host-models.sh for
# the CPU path).
# onnxruntime-all: onnxruntime's own outputs of an int8 model at the level
# it is timed at ('all') against its reference's ('extended').
CHECK = re.compile(r"^check (device|cpu-path|onnxruntime-all) (\S+): (PASS|FAIL)\b ?(.*)$")
PROFILE = re.compile(r"^profile (\S+): (.*)$")
# The console may carry a carriage return.
CLEAN = re.compile(r"\r")
# Beyond these a ratio is a placeholder or a broken timer, not a
# measurement: the fastest and slowest things compared here are within
# a factor of 1e3 of each other.
PLAUSIBLE = (1e-6, 1e6)


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return [CLEAN.sub("", line.rstrip("\n")) for line in f]
    except OSError:
        return None


def number(text):
    """A measured figure, or None when it is not a positive finite number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def invalid_ratio(value):
    """Why @value is no ratio, or None when it is one."""
    if math.isnan(value):
        return "the ratio is NaN"
    if math.isinf(value):
        return "the ratio is infinite"
    if value <= 0:
        return "the ratio is %g, not positive" % value
    if not PLAUSIBLE[0] <= value <= PLAUSIBLE[1]:
        return "the ratio %g is outside %g..%g, a placeholder rather than a measurement" % (
            value, PLAUSIBLE[0], PLAUSIBLE[1])
    return None


class Ratios:
    """The run's ratio lines: a value, or the reason there is none."""

    def __init__(self):
        self.lines = []     # dicts: name, value, op, target, error, mismatch, source
        self.seen = set()
        self.missing = []   # parts or lines that are not there
        self.failed = []    # checks that failed outside any ratio line

    def add(self, name, source, op, target, value=None, error=None, mismatch=None):
        if name in self.seen:
            self.missing.append("%s: ratio %s printed twice" % (source, name))
            return
        self.seen.add(name)
        if error is None:
            error = invalid_ratio(value)
        if error is not None:
            value = None
        self.lines.append({"name": name, "value": value, "op": op, "target": target,
                           "error": error, "mismatch": mismatch, "source": source})

    def parse_part(self, name, lines):
        """Every "ratio ..." line of one part's log; the number of them."""
        n = 0
        for line in lines:
            m = RATIO_LINE.match(line)
            if not m:
                continue
            n += 1
            ratio, rest = m.group(1), m.group(2)
            e = RATIO_ERROR.match(rest)
            v = RATIO_VALUE.match(rest)
            if e:
                self.add(ratio, name, None, None, error=e.group(1))
            elif v:
                try:
                    value = float(v.group(1))
                except ValueError:
                    self.add(ratio, name, v.group(2), float(v.group(3)),
                             error="'%s' is not a number" % v.group(1))
                    continue
                self.add(ratio, name, v.group(2), float(v.group(3)), value=value,
                         mismatch=v.group(4))
            else:
                self.add(ratio, name, None, None, error="malformed ratio line: %s" % line)
        return n


def model_ratios(args, ratios):
    """The model lines from the guest's console and the host's timings."""
    guest = read_lines(args.guest) if args.guest else None
    host = read_lines(args.host_models) if args.host_models else None
    if args.models and guest is None:
        ratios.missing.append("guest console %s: not there (the guest did not run)" % args.guest)
    if args.models and host is None:
        ratios.missing.append("host model timings %s: not there" % args.host_models)
    fig = Figures()
    for line in guest or []:
        m = GUEST_MEDIAN.match(line)
        if m:
            fig.npu[m.group(1)] = (m.group(2), int(m.group(3)))
            if m.group(4):
                fig.engines[m.group(1)] = int(m.group(4))
        m = PROFILE.match(line)
        if m:
            fig.prof.setdefault(m.group(1), []).append(m.group(2))
        m = CHECK.match(line)
        if m and m.group(1) == "device":
            fig.checks[("device", m.group(2))] = (m.group(3), m.group(4))
    for line in host or []:
        m = ORT_MEDIAN.match(line)
        if m:
            fig.ort.setdefault(m.group(1), {})[int(m.group(3))] = m.group(2)
        m = CPU_MEDIAN.match(line)
        if m:
            fig.cpu[m.group(1)] = m.group(2)
        m = CHECK.match(line)
        if m and m.group(1) != "device":
            fig.checks[(m.group(1), m.group(2))] = (m.group(3), m.group(4))

    for model in args.models:
        model_block(fig, ratios, model, model + "-vs-onnxruntime", args.model_goal)
        if args.int8:
            q = model + "-int8"
            model_block(fig, ratios, q, q + "-vs-onnxruntime-int8", args.int8_goal)
            int8_vs_fp32(fig, ratios, model, args.int8_speedup_goal)


class Figures:
    """What the logs say, by model name (an int8 model as <model>-int8)."""

    def __init__(self):
        self.npu = {}       # device median (text), runs
        self.engines = {}   # the device's engine count
        self.ort = {}       # thread count -> onnxruntime's median (text)
        self.cpu = {}       # the CPU path's median (text)
        self.prof = {}      # the guest's profile lines
        self.checks = {}    # (device|cpu-path, model) -> (PASS|FAIL, details)

    def device_ms(self, model):
        return number(self.npu[model][0]) if model in self.npu else None

    def device_error(self, model):
        """Why there is no device figure to compare, or None."""
        if model not in self.npu:
            return "no 'bench-model %s' line in the guest console (the model did not run)" % model
        if self.device_ms(model) is None:
            return "the device's median '%s' ms is not a measurement" % self.npu[model][0]
        if ("device", model) not in self.checks:
            return "the device's output was not checked against onnxruntime's"
        return None

    def mismatch(self, model):
        """Why the device's checked output does not match, or None."""
        check = self.checks.get(("device", model))
        if check and check[0] != "PASS":
            return check[1] or "FAIL"
        return None


def model_block(fig, ratios, model, name, goal):
    """One model's figures, and its two lines against onnxruntime: @name
    with one thread per device engine, @name-1thread with one."""
    print("model %s:" % model)
    for p in fig.prof.get(model, []):
        print("  " + p)
    dev_ms = fig.device_ms(model)
    n_eng = fig.engines.get(model)
    ort = fig.ort.get(model, {})
    ort_ms = {t: number(v) for t, v in ort.items()}
    if model in fig.npu:
        print("  npu-run on the device (guest): median %s ms over %d runs, %s" % (
            fig.npu[model][0], fig.npu[model][1],
            "%d engines" % n_eng if n_eng else "engine count not reported"))
    else:
        print("  npu-run on the device (guest): no figure")
    dev_check = fig.checks.get(("device", model))
    print("  device output against onnxruntime's: %s" % (
        " ".join(dev_check).strip() if dev_check else "not checked"))
    for t in sorted(ort_ms):
        print("  onnxruntime, %d thread%s (host): median %s ms" % (
            t, "" if t == 1 else "s", ort[t]))
    if not ort_ms:
        print("  onnxruntime (host): no figure")
    all_check = fig.checks.get(("onnxruntime-all", model))
    if all_check:
        print("  onnxruntime's outputs at the level timed ('all') against the reference's "
              "('extended'): %s (informational)" % " ".join(all_check).strip())
    if model in fig.cpu:
        cpu_check = fig.checks.get(("cpu-path", model))
        cpu_ms, ort1 = number(fig.cpu[model]), ort_ms.get(1)
        print("  npu-run --cpu, 1 thread (host): median %s ms%s" % (
            fig.cpu[model], ", %.2fx onnxruntime on 1 thread (informational)" % (cpu_ms / ort1)
            if cpu_ms and ort1 else ""))
        print("  npu-run --cpu output against onnxruntime's: %s" % (
            " ".join(cpu_check).strip() if cpu_check else "not checked"))
        if not cpu_check or cpu_check[0] != "PASS":
            ratios.failed.append("model %s: npu-run --cpu's output %s" % (
                model, "does not match onnxruntime's: " + cpu_check[1]
                if cpu_check else "was not checked against onnxruntime's"))

    def ort_error(threads):
        if threads not in ort_ms:
            have = ", ".join("%d" % t for t in sorted(ort_ms)) or "none"
            return "no onnxruntime figure with %d thread%s from the host (have: %s)" % (
                threads, "" if threads == 1 else "s", have)
        if ort_ms[threads] is None:
            return "onnxruntime's median '%s' ms is not a measurement" % ort[threads]
        return None

    primary_err = fig.device_error(model)
    if primary_err is None and not n_eng:
        primary_err = "the guest did not report the device's engine count"
    if primary_err is None:
        primary_err = ort_error(n_eng)
    one_err = fig.device_error(model) or ort_error(1)
    mismatch = fig.mismatch(model)
    for line, threads, err in ((name, n_eng, primary_err), (name + "-1thread", 1, one_err)):
        what = "%s thread%s" % (threads or "?", "" if threads == 1 else "s")
        if err:
            ratios.add(line, "models", "<=", goal, error=err)
            print("  device over onnxruntime, %s: ERROR %s" % (what, err))
            continue
        value = round(dev_ms / ort_ms[threads], 2)
        ratios.add(line, "models", "<=", goal, value=value, mismatch=mismatch)
        print("  device over onnxruntime, %s: %.2fx (goal <= %sx)%s%s" % (
            what, value, goal_str(goal), mismatch_note(mismatch),
            " (informational)" if line.endswith("-1thread") else ""))


def int8_vs_fp32(fig, ratios, model, goal):
    """<model>-int8-vs-fp32: how much faster the device runs the int8 model
    than the fp32 one, both medians from the same guest boot."""
    q = model + "-int8"
    name = q + "-vs-fp32"
    err = fig.device_error(model) or fig.device_error(q)
    if err:
        ratios.add(name, "models", ">=", goal, error=err)
        print("  int8 over fp32 on the device: ERROR %s" % err)
        return
    why = "; ".join("%s: %s" % (m, fig.mismatch(m)) for m in (model, q) if fig.mismatch(m))
    value = round(fig.device_ms(model) / fig.device_ms(q), 2)
    ratios.add(name, "models", ">=", goal, value=value, mismatch=why or None)
    print("  int8 over fp32 on the device: %.2fx as fast (goal >= %sx)%s" % (
        value, goal_str(goal), mismatch_note(why or None)))


def mismatch_note(why):
    return " (outputs not matching: %s)" % why if why else ""


def goal_met(r):
    """A measured value on the right side of its goal, of outputs that match."""
    if r["error"] is not None or r["mismatch"] is not None:
        return False
    return r["value"] <= r["target"] if r["op"] == "<=" else r["value"] >= r["target"]


def print_block(ratios, info):
    """The ratio block; (goals met, goals, errors)."""
    def line(r):
        if r["error"] is not None:
            return "ratio %s: ERROR %s" % (r["name"], r["error"])
        return "ratio %s: %.2fx (goal %s %sx)%s" % (r["name"], r["value"], r["op"],
                                                   goal_str(r["target"]),
                                                   mismatch_note(r["mismatch"]))

    goals = [r for r in ratios.lines if r["name"] not in info]
    informational = [r for r in ratios.lines if r["name"] in info]
    print("ratios (goal in parentheses):")
    met = 0
    for r in goals:
        print(line(r))
        if goal_met(r):
            met += 1
    errors = sum(r["error"] is not None for r in ratios.lines)
    print("goals met: %d of %d%s" % (met, len(goals),
                                    " (%d in error, counted as not met)" % sum(
                                        r["error"] is not None for r in goals)
                                    if any(r["error"] is not None for r in goals) else ""))
    if informational:
        print("informational ratios (not goals; onnxruntime on 1 thread, or a model "
              "without a goal):")
        for r in informational:
            print(line(r))
    return met, len(goals), errors


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", action="append", default=[], metavar="NAME=LOG",
                    help="a part of the run and its log; each must give a ratio line")
    ap.add_argument("--expect", action="append", default=[], metavar="RATIO",
                    help="a ratio line that must be there (by name)")
    ap.add_argument("--host-models", metavar="LOG",
                    help="onnxruntime and CPU-path timings (scripts/bench-host-models.sh)")
    ap.add_argument("--guest", metavar="LOG", help="the guest's console log")
    ap.add_argument("--models", nargs="*", default=[],
                    help="the real models whose ratios are computed here")
    ap.add_argument("--informational", nargs="*", default=[],
                    help="models whose ratio lines are shown but not goals")
    ap.add_argument("--model-goal", type=float, default=1.5)
    ap.add_argument("--int8", action=argparse.BooleanOptionalAction, default=True,
                    help="also each model's int8 version, <model>-int8 (default: yes)")
    ap.add_argument("--int8-goal", type=float, default=1.0,
                    help="an int8 model on the device over onnxruntime on the same QDQ file")
    ap.add_argument("--int8-speedup-goal", type=float, default=2.0,
                    help="an fp32 model's device median over its int8 version's")
    ap.add_argument("--out-dir", help="where ratios.dat/.gp/.png go")
    ap.add_argument("--no-chart", action="store_true", help="print the ratios only")
    args = ap.parse_args()
    if not args.no_chart and not args.out_dir:
        ap.error("--out-dir is needed for the chart (or --no-chart)")

    ratios = Ratios()
    model_ratios(args, ratios)
    model_lines = ratios.lines
    # The parts' lines come first in the block, the models' after them.
    ratios.lines = []
    for spec in args.part:
        name, _, path = spec.partition("=")
        lines = read_lines(path)
        if lines is None:
            ratios.missing.append("%s: no log %s (the part did not run)" % (name, path))
            continue
        if not ratios.parse_part(name, lines):
            ratios.missing.append("%s: no ratio line in %s" % (name, path))
    ratios.lines += model_lines
    for want in args.expect:
        if want not in ratios.seen:
            ratios.missing.append("ratio %s: not printed by any part" % want)

    info = {m + "-vs-onnxruntime" for m in args.informational}
    info |= {m + "-vs-onnxruntime-1thread" for m in args.models}
    info |= {m + "-int8-vs-onnxruntime-int8-1thread" for m in args.models}
    print()
    _, _, errors = print_block(ratios, info)

    if not args.no_chart:
        chart = write_chart(args.out_dir, [r for r in ratios.lines if r["error"] is None],
                            info, ratios.missing)
        if chart:
            print("chart: %s" % chart)

    for what in ratios.missing:
        print("bench: missing: %s" % what, file=sys.stderr)
    for r in ratios.lines:
        if r["error"] is None and r["mismatch"] is not None:
            ratios.failed.append("ratio %s: outputs not matching: %s" % (r["name"], r["mismatch"]))
    for what in ratios.failed:
        print("bench: failed: %s" % what, file=sys.stderr)
    if ratios.missing:
        print("bench: %d ratio line(s) or part(s) missing (see above)" % len(ratios.missing),
              file=sys.stderr)
    if errors:
        print("bench: %d ratio line(s) in error (see above)" % errors, file=sys.stderr)
    return 1 if ratios.missing or ratios.failed or errors else 0


def write_chart(out_dir, ratios, info, missing):
    """ratios.dat and ratios.gp in @out_dir, rendered to ratios.png."""
    os.makedirs(out_dir, exist_ok=True)
    dat = os.path.join(out_dir, "ratios.dat")
    gp = os.path.join(out_dir, "ratios.gp")
    png = os.path.join(out_dir, "ratios.png")
    if os.path.exists(png):
        os.unlink(png)
    if not ratios:
        missing.append("chart: no ratio to draw")
        return None
    with open(dat, "w") as f:
        f.write("# index name value goal met(1/0/2 informational)\n")
        for i, r in enumerate(ratios):
            value, op, target = r["value"], r["op"], r["target"]
            state = 2 if r["name"] in info else (1 if goal_met(r) else 0)
            # A bar of outputs that do not match says so: its colour alone
            # would read as a goal merely missed.
            f.write('%d "%s (%s %g)%s" %.4g %.4g %d\n' % (
                i, r["name"], op, target, ", outputs not matching" if r["mismatch"] else "",
                max(value, 1e-3), target, state))
    values = [max(r["value"], 1e-3) for r in ratios] + [r["target"] for r in ratios]
    lo = 10 ** math.floor(math.log10(min(values)) - 0.3)
    hi = 10 ** math.ceil(math.log10(max(values)) + 0.3)
    height = 320 + 34 * len(ratios)
    with open(gp, "w") as f:
        f.write("""# Written by scripts/bench-summary.py; gnuplot %(gp)s renders %(png)s.
set terminal pngcairo size 1300,%(height)d font ",10"
set output "%(png)s"
set title "make bench: measured ratio (bar) against its goal (black mark); log scale"
set logscale x
set xrange [%(lo)g:%(hi)g]
set yrange [%(top)g:-0.7]
set ytics nomirror
set grid xtics
set xlabel "ratio (x)"
set key outside bottom center horizontal
set style fill solid 0.8 border -1
unset colorbox
# Bars from the axis to the measured value: green met, red not met, grey
# informational.
color(s) = s == 1 ? 0x2e9e44 : (s == 0 ? 0xd23c3c : 0x999999)
plot "%(dat)s" using (sqrt($3 * %(lo)g)):1:(%(lo)g):3:($1 - 0.35):($1 + 0.35):(color($5)):ytic(2) \\
        with boxxyerror lc rgb variable title "measured (green: goal met, red: not met, grey: informational)", \\
     "" using 4:1 with points pt 7 ps 1.6 lc rgb "black" title "goal", \\
     "" using 3:1:(sprintf("%%.2fx", $3)) with labels left offset 1,0 notitle
""" % {"gp": gp, "png": png, "height": height, "lo": lo, "hi": hi,
       "top": len(ratios) - 0.3, "dat": dat})
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        missing.append("chart: gnuplot is not installed (scripts/deps.sh bench)")
        return None
    r = subprocess.run([gnuplot, gp], capture_output=True, text=True)
    if r.returncode or not os.path.exists(png):
        missing.append("chart: gnuplot failed: %s" % r.stderr.strip()[:300])
        return None
    return png


if __name__ == "__main__":
    sys.exit(main())
