#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The end of `make bench`: every ratio against its goal, and a chart.

Each part of the run leaves a log (the host engine benchmark's output, the
host's onnxruntime and CPU-path model timings, the guest's console).  This
reads them all and prints

  * per real model: npu-run's device/CPU split and the slowest nodes
    (the guest's "profile <model>: ..." lines), its median on the device,
    onnxruntime's on the host, and the CPU path's on the host;
  * the model ratios, "ratio <model>-vs-onnxruntime: <x>x (goal <= 1.5x)",
    npu-run's median in the guest over onnxruntime-node's (one thread) on
    the host, the same input;
  * one block of every "ratio <name>: <x>x (goal <op> <target>x)" line of
    the whole run, in that exact form, then "goals met: N of M";
  * the chart of the ratios against their goals (gnuplot, PNG) and its path.

A part that gave no ratio line (it failed, or the line is not there) is
named; the script then exits non-zero, after printing everything it has.
Documentation/bench.rst describes each ratio.
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


RATIO = re.compile(r"^ratio (\S+): ([0-9]+(?:\.[0-9]+)?)x \(goal (<=|>=) ([0-9]+(?:\.[0-9]+)?)x\)$")
GUEST_MEDIAN = re.compile(r"^bench-model (\S+): npu median ([0-9.]+) ms over (\d+) runs$")
ORT_MEDIAN = re.compile(r"^onnxruntime (\S+): median ([0-9.]+) ms")
CPU_MEDIAN = re.compile(r"^cpu-path (\S+): npu-run --cpu median ([0-9.]+) ms")
PROFILE = re.compile(r"^profile (\S+): (.*)$")
# The console may carry a carriage return or the harness's echo prefix.
CLEAN = re.compile(r"\r")


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return [CLEAN.sub("", line.rstrip("\n")) for line in f]
    except OSError:
        return None


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
                    help="models whose ratio line is shown but not a goal")
    ap.add_argument("--model-goal", type=float, default=1.5)
    ap.add_argument("--out-dir", required=True, help="where ratios.dat/.gp/.png go")
    args = ap.parse_args()

    missing = []
    ratios = []        # (name, value, op, target, source)
    seen = set()

    def add(name, value, op, target, source):
        if name in seen:
            missing.append("%s: ratio %s printed twice" % (source, name))
            return
        seen.add(name)
        ratios.append((name, value, op, target, source))

    # ---- the model ratios ----------------------------------------------
    guest = read_lines(args.guest) if args.guest else None
    host = read_lines(args.host_models) if args.host_models else None
    if args.models and guest is None:
        missing.append("guest console %s: not there (the guest did not run)" % args.guest)
    if args.models and host is None:
        missing.append("host model timings %s: not there" % args.host_models)
    npu, npu_runs, ort, cpu, prof = {}, {}, {}, {}, {}
    model_ratios = []
    for line in guest or []:
        m = GUEST_MEDIAN.match(line)
        if m:
            npu[m.group(1)] = float(m.group(2))
            npu_runs[m.group(1)] = int(m.group(3))
        m = PROFILE.match(line)
        if m:
            prof.setdefault(m.group(1), []).append(m.group(2))
    for line in host or []:
        m = ORT_MEDIAN.match(line)
        if m:
            ort[m.group(1)] = float(m.group(2))
        m = CPU_MEDIAN.match(line)
        if m:
            cpu[m.group(1)] = float(m.group(2))

    for model in args.models:
        print("model %s:" % model)
        for p in prof.get(model, []):
            print("  " + p)
        have_npu, have_ort = model in npu, model in ort
        print("  npu-run on the device (guest): %s" % (
            "median %.3f ms over %d runs" % (npu[model], npu_runs[model]) if have_npu
            else "no figure"))
        print("  onnxruntime, 1 thread (host): %s" % (
            "median %.3f ms" % ort[model] if have_ort else "no figure"))
        if model in cpu:
            print("  npu-run --cpu, 1 thread (host): median %.3f ms%s" % (
                cpu[model], ", %.2fx onnxruntime (informational)" % (cpu[model] / ort[model])
                if have_ort and ort[model] > 0 else ""))
        if not have_npu:
            missing.append("model %s: no 'bench-model' line in the guest console" % model)
        if not have_ort:
            missing.append("model %s: no onnxruntime figure from the host" % model)
        if have_npu and have_ort and ort[model] > 0:
            value = round(npu[model] / ort[model], 2)
            print("  device over onnxruntime: %.2fx (goal <= %sx)" % (value, goal_str(args.model_goal)))
            model_ratios.append((model + "-vs-onnxruntime", value, "<=", args.model_goal,
                                 "models"))

    # ---- every other ratio line, as printed by the parts --------------------
    for spec in args.part:
        name, _, path = spec.partition("=")
        lines = read_lines(path)
        if lines is None:
            missing.append("%s: no log %s (the part did not run)" % (name, path))
            continue
        n = 0
        for line in lines:
            if not line.startswith("ratio "):
                continue
            m = RATIO.match(line)
            if not m:
                missing.append("%s: malformed ratio line: %s" % (name, line))
                continue
            n += 1
            add(m.group(1), float(m.group(2)), m.group(3), float(m.group(4)), name)
        if not n:
            missing.append("%s: no ratio line in %s" % (name, path))
    for r in model_ratios:
        add(*r)
    for want in args.expect:
        if want not in seen:
            missing.append("ratio %s: not printed by any part" % want)

    # ---- the block ------------------------------------------------------------
    print()
    print("ratios (goal in parentheses):")
    met = goals = 0
    info = {m + "-vs-onnxruntime" for m in args.informational}
    for name, value, op, target, _ in ratios:
        print("ratio %s: %.2fx (goal %s %sx)" % (name, value, op, goal_str(target)))
        if name in info:
            continue
        goals += 1
        if (value <= target) if op == "<=" else (value >= target):
            met += 1
    print("goals met: %d of %d%s" % (
        met, goals, " (informational, not counted: %s)" % ", ".join(sorted(info & seen))
        if info & seen else ""))

    chart = write_chart(args.out_dir, ratios, info, missing)
    if chart:
        print("chart: %s" % chart)

    for what in missing:
        print("bench: missing: %s" % what, file=sys.stderr)
    if missing:
        print("bench: %d ratio line(s) or part(s) missing (see above)" % len(missing),
              file=sys.stderr)
    return 1 if missing else 0


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
        for i, (name, value, op, target, _) in enumerate(ratios):
            ok = (value <= target) if op == "<=" else (value >= target)
            state = 2 if name in info else (1 if ok else 0)
            f.write('%d "%s (%s %g)" %.4g %.4g %d\n' % (i, name, op, target,
                                                         max(value, 1e-3), target, state))
    values = [max(r[1], 1e-3) for r in ratios] + [r[3] for r in ratios]
    lo = 10 ** math.floor(math.log10(min(values)) - 0.3)
    hi = 10 ** math.ceil(math.log10(max(values)) + 0.3)
    height = 320 + 34 * len(ratios)
    with open(gp, "w") as f:
        f.write("""# Written by scripts/bench-summary.py; gnuplot %(gp)s renders %(png)s.
set terminal pngcairo size 1100,%(height)d font ",10"
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
