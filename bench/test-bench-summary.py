#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Self-test of scripts/bench-summary.py on canned logs (TAP).

Each case writes the logs one `make bench` run leaves (the host engine
benchmark's, the host's model timings, the guest's console), runs the
summary on them and checks what it makes of them: a ratio whose
measurement is missing or invalid is an ERROR line counted as not met and
fails the run; one whose outputs were checked and did not match the
reference keeps its value, marked "(outputs not matching: <why>)", is
counted as not met and fails the run too; a good line is met or not met by
the comparison it states.  The model m1 comes with its int8 version,
m1-int8, as every model of `make bench` does.  BENCH_SUMMARY names
another summary script to test (by default the one in this checkout).
"""
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = os.environ.get("BENCH_SUMMARY", os.path.join(TOP, "scripts", "bench-summary.py"))

HOST_OPS = """vnpu ops bench: engine 1 thread
ratio gemm-fp32-vnpu-sgemm-vs-openblas: 0.85x (goal >= 1.0x)
ratio gemm-int8-engine-vs-openblas-fp32: 4.20x (goal >= 4.0x)
"""
INT8_PASS = "PASS 896 of 896 elements equal, max diff 0 steps"
INT8_FAIL = "FAIL Identity_0.npy: 880 of 896 elements equal, max diff 3 steps (out of tolerance)"
GUEST = """bench-model m1: npu median 3.000 ms over 10 runs, 2 engines
check device m1: PASS max abs diff 1.2e-05
bench-model m1-int8: npu median 1.000 ms over 10 runs, 2 engines
check device m1-int8: %s
ratio null-job-vs-raw-irq: 1.20x (goal <= 1.5x)
""" % INT8_PASS
HOST_MODELS = """onnxruntime m1: median 2.500 ms, min 2.400 ms over 20 runs (1 thread)
onnxruntime m1: median 1.500 ms, min 1.400 ms over 20 runs (2 threads)
cpu-path m1: npu-run --cpu median 2.600 ms over 20 runs (1 thread)
check cpu-path m1: PASS max abs diff 2.3e-05
onnxruntime m1-int8: median 2.000 ms, min 1.900 ms over 20 runs (1 thread)
onnxruntime m1-int8: median 0.800 ms, min 0.700 ms over 20 runs (2 threads)
cpu-path m1-int8: npu-run --cpu median 1.900 ms over 20 runs (1 thread)
check cpu-path m1-int8: %s
check onnxruntime-all m1-int8: FAIL Identity_0.npy: 890 of 896 elements equal, max diff 2 steps (out of tolerance)
""" % INT8_PASS

# The goals the good logs meet: int8 4.20 >= 4.0, the null job 1.20 <= 1.5,
# m1's int8 model 3.00 >= 2.0 times as fast as its fp32 one.
GOOD_MET = {"gemm-int8-engine-vs-openblas-fp32", "null-job-vs-raw-irq", "m1-int8-vs-fp32"}


def run(host_ops=HOST_OPS, guest=GUEST, host_models=HOST_MODELS):
    """The summary over these logs (None: the log is not there)."""
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, text in (("host-ops", host_ops), ("console", guest),
                           ("host-models", host_models)):
            paths[name] = os.path.join(d, name + ".log")
            if text is not None:
                with open(paths[name], "w") as f:
                    f.write(text)
        p = subprocess.run(
            [sys.executable, SUMMARY, "--no-chart", "--out-dir", d,
             "--part", "host-engine=" + paths["host-ops"],
             "--part", "guest=" + paths["console"], "--expect", "null-job-vs-raw-irq",
             "--host-models", paths["host-models"], "--guest", paths["console"],
             "--models", "m1"],
            capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def block(out):
    """The goal lines of the block, the goals-met line, the informational lines."""
    lines = out.splitlines()
    try:
        start = lines.index("ratios (goal in parentheses):")
    except ValueError:
        return [], "", []
    goals, met, info = [], "", []
    for line in lines[start + 1:]:
        if line.startswith("goals met:"):
            met = line
        elif line.startswith("ratio "):
            (info if met else goals).append(line)
    return goals, met, info


def line_of(lines, name):
    for line in lines:
        if line.startswith("ratio %s:" % name):
            return line
    return None


results = []


def check(desc, ok, detail=""):
    results.append((bool(ok), desc, detail))


def case_good():
    rc, out, err = run()
    goals, met, info = block(out)
    check("good logs: exit status 0", rc == 0, err)
    check("good logs: a goal not reached is printed as measured",
          line_of(goals, "gemm-fp32-vnpu-sgemm-vs-openblas") ==
          "ratio gemm-fp32-vnpu-sgemm-vs-openblas: 0.85x (goal >= 1.0x)", out)
    check("good logs: the device over onnxruntime with as many threads as engines",
          line_of(goals, "m1-vs-onnxruntime") == "ratio m1-vs-onnxruntime: 2.00x (goal <= 1.5x)",
          out)
    check("good logs: the one-thread line is informational, not a goal",
          line_of(info, "m1-vs-onnxruntime-1thread") ==
          "ratio m1-vs-onnxruntime-1thread: 1.20x (goal <= 1.5x)" and
          line_of(goals, "m1-vs-onnxruntime-1thread") is None, out)
    check("good logs: the int8 model on the device over onnxruntime on the same file "
          "with as many threads as engines",
          line_of(goals, "m1-int8-vs-onnxruntime-int8") ==
          "ratio m1-int8-vs-onnxruntime-int8: 1.25x (goal <= 1.0x)", out)
    check("good logs: the int8 one-thread line is informational, not a goal",
          line_of(info, "m1-int8-vs-onnxruntime-int8-1thread") ==
          "ratio m1-int8-vs-onnxruntime-int8-1thread: 0.50x (goal <= 1.0x)" and
          line_of(goals, "m1-int8-vs-onnxruntime-int8-1thread") is None, out)
    check("good logs: the fp32 device median over the int8 one",
          line_of(goals, "m1-int8-vs-fp32") == "ratio m1-int8-vs-fp32: 3.00x (goal >= 2.0x)",
          out)
    check("good logs: onnxruntime's own int8 bits at level 'all' shown, not failing the run",
          "onnxruntime's outputs at the level timed ('all') against the reference's "
          "('extended'): FAIL Identity_0.npy: 890 of 896 elements equal, max diff 2 steps "
          "(out of tolerance) (informational)" in out and rc == 0, out + err)
    # Met: int8 4.20 >= 4.0, null job 1.20 <= 1.5, m1-int8 3.00 >= 2.0;
    # not met: fp32 0.85, m1 2.00, m1-int8 1.25.
    check("good logs: goals met 3 of 6", met == "goals met: 3 of 6", out)


def mismatch_case(desc, marked, why_pattern, met_want, **logs):
    """Every line of @marked keeps its value (text) and is marked as outputs
    not matching, for a reason matching @why_pattern; goals met is
    @met_want; the run fails, naming each."""
    rc, out, err = run(**logs)
    goals, met, info = block(out)
    for name, value in marked.items():
        line = line_of(goals + info, name) or ""
        m = re.match(r"^ratio %s: %s \(goal [<>]= [0-9.]+x\) \(outputs not matching: (.+)\)$"
                     % (re.escape(name), re.escape(value)), line)
        check("%s: ratio %s keeps its value %s, marked" % (desc, name, value),
              m and re.search(why_pattern, m.group(1)), "line: %r\n%s%s" % (line, out, err))
        check("%s: ratio %s named as failed" % (desc, name),
              "bench: failed: ratio %s: outputs not matching" % name in err, err)
    check("%s: %s" % (desc, met_want), met == met_want, out)
    check("%s: exit status non-zero" % desc, rc != 0, "rc %d" % rc)


def error_case(desc, name, why_pattern, also=(), **logs):
    """The line @name must be an ERROR matching @why_pattern, not met, exit
    non-zero; the lines named in @also lose their figure with it."""
    rc, out, err = run(**logs)
    goals, met, info = block(out)
    line = line_of(goals + info, name) or ""
    m = re.match(r"^ratio %s: ERROR (.+)$" % re.escape(name), line)
    check("%s: ratio %s is an ERROR" % (desc, name), m and re.search(why_pattern, m.group(1)),
          "line: %r\n%s%s" % (line, out, err))
    n = re.match(r"^goals met: (\d+) of (\d+)", met)
    if line_of(goals, name) is not None:
        # Every other goal stays as the good logs have it: met exactly
        # those of GOOD_MET that are not this line.
        want = len(GOOD_MET - {name} - set(also))
        check("%s: the ERROR is not counted as met" % desc, n and int(n.group(1)) == want,
              "%s, want %d met" % (met, want))
    check("%s: exit status non-zero" % desc, rc != 0, "rc %d" % rc)


def main():
    case_good()
    # VNPU_BENCH_NO_PEERS before this fix: no peer ran, worst stayed 1e30.
    error_case("a ratio with no peer measured", "conv-int8-vs-best-peer", "placeholder",
               host_ops=HOST_OPS + "ratio conv-int8-vs-best-peer: "
               "1000000000000000019884624838656.00x (goal >= 1.0x)\n")
    error_case("a part's ERROR line", "conv-fp32-vs-best-peer", "VNPU_BENCH_NO_PEERS",
               host_ops=HOST_OPS + "ratio conv-fp32-vs-best-peer: ERROR not measured: "
               "VNPU_BENCH_NO_PEERS set, the peers did not run\n")
    for bad, why in (("nan", "NaN"), ("inf", "infinite"), ("0.00", "not positive")):
        error_case("a ratio of %s" % bad, "dwconv-int8-vs-best-peer", why,
                   host_ops=HOST_OPS + "ratio dwconv-int8-vs-best-peer: %sx (goal >= 1.0x)\n"
                   % bad)
    error_case("a GEMM output that differs from the reference",
               "gemm-int8-engine-vs-openblas-fp32", "differs from the reference",
               host_ops=HOST_OPS.replace(
                   "ratio gemm-int8-engine-vs-openblas-fp32: 4.20x (goal >= 4.0x)",
                   "ratio gemm-int8-engine-vs-openblas-fp32: ERROR gemm int8 256x256x256: "
                   "the engine's output differs from the reference in 3 of 65536 elements"))
    # The fp32 model's output does not match: its lines against onnxruntime
    # and the int8 speed-up, which times it, are marked; no goal is met
    # that was met (3.00 >= 2.0 no longer counts).
    mismatch_case("the device's output does not match onnxruntime's",
                  {"m1-vs-onnxruntime": "2.00x", "m1-vs-onnxruntime-1thread": "1.20x",
                   "m1-int8-vs-fp32": "3.00x"},
                  "max abs diff 3.1", "goals met: 2 of 6",
                  guest=GUEST.replace("check device m1: PASS max abs diff 1.2e-05",
                                      "check device m1: FAIL Identity_0.npy: max abs diff 3.1 "
                                      "(out of tolerance)"))
    # An int8 model short of the agreement bar (issue 22: >= 99.9% equal,
    # <= 1 step off) is still timed.
    mismatch_case("the int8 model's output does not match onnxruntime's int8 output",
                  {"m1-int8-vs-onnxruntime-int8": "1.25x",
                   "m1-int8-vs-onnxruntime-int8-1thread": "0.50x",
                   "m1-int8-vs-fp32": "3.00x"},
                  "880 of 896 elements equal, max diff 3 steps", "goals met: 2 of 6",
                  guest=GUEST.replace("check device m1-int8: " + INT8_PASS,
                                      "check device m1-int8: " + INT8_FAIL))
    mismatch_case("a part's line marked as outputs not matching",
                  {"dwconv-int8-vs-best-peer": "1.10x"}, "XNNPACK", "goals met: 3 of 7",
                  host_ops=HOST_OPS + "ratio dwconv-int8-vs-best-peer: 1.10x (goal >= 1.0x) "
                  "(outputs not matching: XNNPACK's output differs)\n")
    error_case("the int8 model's output not checked", "m1-int8-vs-onnxruntime-int8",
               "not checked", also=("m1-int8-vs-fp32",),
               guest=GUEST.replace("check device m1-int8: %s\n" % INT8_PASS, ""))
    error_case("the int8 model did not run on the device", "m1-int8-vs-fp32",
               "no 'bench-model m1-int8' line",
               guest=GUEST.replace("bench-model m1-int8: npu median 1.000 ms over 10 runs, "
                                   "2 engines\n", ""))
    error_case("onnxruntime not run on the int8 model with one thread per device engine",
               "m1-int8-vs-onnxruntime-int8", "no onnxruntime figure with 2 threads",
               host_models=HOST_MODELS.replace(
                   "onnxruntime m1-int8: median 0.800 ms, min 0.700 ms over 20 runs "
                   "(2 threads)\n", ""))
    error_case("the fp32 model did not run on the device (int8 speed-up)", "m1-int8-vs-fp32",
               "no 'bench-model m1' line",
               guest=GUEST.replace("bench-model m1: npu median 3.000 ms over 10 runs, 2 engines\n",
                                   ""))
    error_case("the device's output not checked", "m1-vs-onnxruntime", "not checked",
               also=("m1-int8-vs-fp32",),
               guest=GUEST.replace("check device m1: PASS max abs diff 1.2e-05\n", ""))
    error_case("onnxruntime not run with one thread per device engine", "m1-vs-onnxruntime",
               "no onnxruntime figure with 2 threads",
               host_models=HOST_MODELS.replace(
                   "onnxruntime m1: median 1.500 ms, min 1.400 ms over 20 runs (2 threads)\n",
                   ""))
    error_case("the device's engine count not reported", "m1-vs-onnxruntime", "engine count",
               guest=GUEST.replace(", 2 engines", ""))
    error_case("a zero onnxruntime median", "m1-vs-onnxruntime", "not a measurement",
               host_models=HOST_MODELS.replace("median 1.500 ms", "median 0.000 ms"))
    error_case("the model did not run on the device", "m1-vs-onnxruntime", "did not run",
               also=("m1-int8-vs-fp32",),
               guest=GUEST.replace("bench-model m1: npu median 3.000 ms over 10 runs, 2 engines\n",
                                   ""))

    rc, out, err = run(host_models=HOST_MODELS.replace(
        "check cpu-path m1: PASS max abs diff 2.3e-05", "check cpu-path m1: FAIL max abs diff 4"))
    check("the CPU path's output does not match onnxruntime's: exit status non-zero",
          rc != 0 and "npu-run --cpu's output does not match" in err, err)
    rc, out, err = run(host_models=HOST_MODELS.replace("check cpu-path m1-int8: " + INT8_PASS,
                                                       "check cpu-path m1-int8: " + INT8_FAIL))
    check("the CPU path's int8 output does not match onnxruntime's: exit status non-zero",
          rc != 0 and "m1-int8: npu-run --cpu's output does not match" in err, err)
    rc, out, err = run(host_ops=None)
    check("a part's log not there: exit status non-zero, named",
          rc != 0 and "host-engine: no log" in err, err)

    for i, (ok, desc, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
        if not ok:
            for line in str(detail).splitlines()[:40]:
                print("# " + line)
    print("1..%d" % len(results))
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
