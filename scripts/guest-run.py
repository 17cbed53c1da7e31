#!/usr/bin/env python3
"""Boot the test guest under QEMU TCG with the vnpu device and judge it.

The guest init (tests/guest/init.sh) frames each test's TAP output with
VNPU-TEST-BEGIN/END lines.  This harness
  * enforces a wall-clock timeout on the whole boot,
  * parses every test's TAP,
  * fails the run on any kernel Oops/BUG/WARNING/lockdep/KASAN report in
    the console log, even when every test passed,
  * keeps the full console log,
  * fails the run when QEMU itself fails: a non-zero exit status or a
    signal, or a message of its own on stderr (an assertion, an abort, a
    sanitizer report: the device model crashed, even after the last test),
  * fails a test whose device logged a flood of guest errors (QEMU's
    -d guest_errors, LOG_GUEST_ERROR; the limit is below),
and writes one renumbered TAP stream (stdout and --results) so the layer's
counts can be summed with the other layers.  Directives keep TAP's
meaning: "ok ... # SKIP" and a "1..0 # SKIP reason" plan are skipped (not
passed), "not ok ... # TODO" is an expected failure (counted apart), and
"ok ... # TODO" an unexpected pass, which fails.  --exclude leaves tests
out of a layer that cannot run them (the init skips them) and says so in
the stream's header, rather than letting them skip on every run.

Guest errors: the device logs each malformed command, descriptor or
register access the guest makes (LOG_GUEST_ERROR).  Some tests make such
errors on purpose: in a full check-guest run t-drv-faults made 201 (one
per faulting job), t-ops-e2e 45, t-drv-ioctl 4, every other test and the
boot none.  A test whose run logs more than --guest-error-limit
(GUEST_ERROR_LIMIT, 500: twice the most any test needs) is flooding the
log, i.e. the device or driver is stuck in a loop of errors, and fails.  A
test that makes more on purpose declares its own bound with a line
"# expect-guest-errors: N" before it makes them.  Outside any test (boot,
module load) the same limit applies.  Errors count against the test
running when QEMU logged them; the TAP stream says how many each made.

Files come out of the guest over the console, the one channel every boot
has: the guest prints "VNPU-FILE-BEGIN name size sha256", the file in
base64, "VNPU-FILE-END name" (tests/guest/models/models-lib.sh,
send_file); with --out-dir the harness decodes it there, checks size and
sha256, and shows one line naming the host path in place of the block.

Several devices: --devices N (default $VNPU_DEVICES, else 1) gives the
guest N vnpu devices, each with the same options.  Tests named t-multi-*
need MULTI_DEVICES of them.  A boot with fewer leaves them out and names
them on a line "VNPU-DEFERRED t-multi-... t-zzz-..." (with the checks
that close every boot, t-zzz-*); the harness then boots once more with
MULTI_DEVICES devices for just those, and both boots' results make one
TAP stream (the second boot's prefixed, its console log beside the
first's).  With --tests the split is known beforehand, and a boot left
with only closing checks is not made.
"""
import argparse
import base64
import fnmatch
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import time

# Without ERMS: with it, glibc's memcpy and the kernel's copy_user
# use `rep movsb` for mid-sized copies, which TCG runs one byte per
# loop iteration (~200 MB/s); their vector loops run several times
# faster.  On blazeface-front the runtime's copies of the input and
# outputs took a third of the guest's latency (bench.rst, "Where the
# device time goes").
GUEST_CPU = "max,erms=off"

KERNEL_PROBLEMS = [
    re.compile(p) for p in (
        r"\bOops\b", r"\bBUG:", r"kernel BUG at", r"WARNING: CPU:",
        r"WARNING: .*(lock|RCU)", r"------------\[ cut here \]------------",
        r"\bKASAN\b", r"UBSAN:", r"general protection fault",
        r"Kernel panic", r"possible circular locking", r"lockdep",
        r"INFO: task .* blocked for more than", r"rcu: INFO: .*stall",
        r"Unable to handle kernel", r"kmemleak:.*new suspected",
        # Debug kernel (make check-debug): kmemleak's report, DMA-API debug
        # (all but its two boot lines), debug objects.
        r"unreferenced object 0x", r"DMA-API: ", r"ODEBUG:",
    )
]
# Boot lines of the debug kernel that name a checker without reporting.
KERNEL_BENIGN = re.compile(
    r"rcu: \s*RCU lockdep checking is enabled|DMA-API: preallocated \d+ debug entries"
    r"|DMA-API: debugging enabled by kernel config")
SKIP_ALL = re.compile(r"^1\.\.0\s*#\s*SKIP\b\s*(.*)$")
TAP_LINE = re.compile(r"^(not ok|ok)\b\s*\d*\s*-?\s*(.*)$")
TODO = re.compile(r"#\s*TODO\b", re.IGNORECASE)
FILE_BEGIN = re.compile(r"^VNPU-FILE-BEGIN (\S+) (\d+) ([0-9a-f]{64})$")
BASE64_LINE = re.compile(r"^[A-Za-z0-9+/=]+$")
# Who sends a file names it, but it lands only in --out-dir.
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Modes whose device has the debug (fault-injection) registers.
FAULT_INJECT_MODES = ("test", "shell")
RESULT_DIRECTIVE = re.compile(r"#\s*(SKIP|TODO)\b", re.IGNORECASE)
# QEMU's stderr, tagged in the line list (and the log) so the judge tells
# it from the console.
STDERR_TAG = "QEMU-STDERR: "
# What QEMU itself says when it dies or finds itself broken; anything else
# on its stderr in a test run is a guest-error log line.
QEMU_PROBLEMS = re.compile(
    r"Assertion .* failed|assertion failed|hardware error|Aborted|Segmentation fault"
    r"|core dumped|AddressSanitizer|LeakSanitizer|runtime error:|\*\*ERROR\*\*"
    r"|^qemu-system-\S+: (?!warning:)|^qemu: ")
GUEST_ERROR_LIMIT = 500
# Tests that need several devices, how many they get, and the checks that
# close every boot (kmemleak's scan) and so run in both.
MULTI_PREFIX = "t-multi-"
MULTI_DEVICES = 2
CLOSING_PREFIX = "t-zzz-"
DEFERRED = re.compile(r"^VNPU-DEFERRED((?: \S+)+)\s*$")
# A kernel message on the console (printk's timestamp).
KERNEL_MESSAGE = re.compile(r"^\[\s*\d+\.\d+\] ")
EXPECT_GUEST_ERRORS = re.compile(r"^#\s*expect-guest-errors:\s*(\d+)")


def build_cmd(args):
    # Callers that predate --devices (scripts/vnpu-run.py) build their own
    # namespace without it: one device.
    devices = 0 if args.no_device else getattr(args, "devices", 1)
    append = ["console=ttyS0", "panic=-1", "vnpu.mode=" + args.mode,
              "vnpu.timeout=%d" % args.test_timeout, "vnpu.devices=%d" % devices]
    if args.tests:
        append.append("vnpu.tests=" + ",".join(args.tests))
    if args.exclude:
        append.append("vnpu.exclude=" + ",".join(pat for pat, _ in args.exclude))
    if args.append:
        append.append(args.append)
    cmd = [args.qemu, "-machine", "q35", "-accel", args.accel, "-cpu", args.cpu,
           "-smp", "2", "-m", args.memory, "-nographic", "-no-reboot",
           "-nic", "none", "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
           "-kernel", args.kernel, "-initrd", args.initrd,
           "-append", " ".join(append)]
    if not args.no_device:
        opts = ["vnpu"]
        # The guest tests (recovery, raw_rtt) and interactive debugging use
        # the fault-injection registers; bench and demo run the device as
        # shipped.  An explicit x-fault-inject in --device-opts wins.
        if args.mode in FAULT_INJECT_MODES and "x-fault-inject" not in args.device_opts:
            opts.append("x-fault-inject=on")
        if args.device_opts:
            opts.append(args.device_opts)
        # Every device the same; QEMU gives each the next free slot on the
        # root bus, so they probe, and get their accel minors, in order.
        for _ in range(devices):
            cmd += ["-device", ",".join(opts)]
    if args.mode == "test":
        # The device's guest-error log goes to stderr, judged per test.
        cmd += ["-d", "guest_errors"]
    for extra in args.qemu_arg:
        cmd += extra.split()
    return cmd


def run_interactive(cmd):
    os.execvp(cmd[0], cmd)


class FileReceiver:
    """Decodes the VNPU-FILE blocks of the console into out_dir."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.current = None     # (name, size, sha256, [base64 lines])
        self.problems = []

    def feed(self, line):
        """Return the lines to keep in place of this console line."""
        if self.current is None:
            m = FILE_BEGIN.match(line)
            if not m or not self.out_dir:
                return [line]
            self.current = (m.group(1), int(m.group(2)), m.group(3), [])
            return []
        name, size, digest, chunks = self.current
        if line == "VNPU-FILE-END " + name:
            self.current = None
            return [self.finish(name, size, digest, chunks)]
        if BASE64_LINE.match(line):
            chunks.append(line)
            return []
        # A kernel message between the chunks: keep it (the judge reads it).
        return [line]

    def finish(self, name, size, digest, chunks):
        try:
            data = base64.b64decode("".join(chunks), validate=True)
        except ValueError:
            data = b""
        if not FILE_NAME.match(name):
            why = "bad file name"
        elif len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            why = "got %d bytes, sha256 mismatch or garbled on the console" % len(data)
        else:
            os.makedirs(self.out_dir, exist_ok=True)
            path = os.path.join(self.out_dir, name)
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(path + ".tmp", path)
            return "%s -> %s (%d bytes, from the guest)" % (name, os.path.abspath(path), size)
        self.problems.append("file %s from the guest: %s" % (name, why))
        return "%s: not received from the guest: %s" % (name, why)

    def close(self):
        if self.current is not None:
            self.problems.append("file %s from the guest: cut off" % self.current[0])
            self.current = None


def boot(cmd, timeout, log_path, echo, receiver=None):
    """Run QEMU, stream the console and QEMU's stderr (tagged STDERR_TAG)
    to the log; return (lines, timed_out, QEMU's exit status)."""
    lines = []
    start = time.monotonic()
    timed_out = False
    if receiver is None:
        receiver = FileReceiver(None)
    # Line-buffered: the log is what one watches during a long, quiet run
    # (dpkg, a DKMS build), and a block-buffered one stops at a block's
    # end, minutes behind the console, which looks like a stalled boot.
    with open(log_path, "w", buffering=1, errors="replace") as log:
        log.write("# " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        bufs = {proc.stdout: b"", proc.stderr: b""}

        def emit(pipe, raw):
            text = raw.decode("utf-8", "replace").rstrip("\r")
            out = [STDERR_TAG + text] if pipe is proc.stderr else receiver.feed(text)
            for line in out:
                lines.append(line)
                log.write(line + "\n")
                if echo:
                    print(line, flush=True)

        while bufs:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select(list(bufs), [], [], min(left, 1.0))
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            # QEMU's stderr first: a guest error is logged while the test
            # that caused it runs, before the console lines that follow.
            for pipe in sorted(ready, key=lambda p: p is not proc.stderr):
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    if bufs[pipe]:
                        emit(pipe, bufs[pipe])
                    del bufs[pipe]
                    continue
                *full, bufs[pipe] = (bufs[pipe] + chunk).split(b"\n")
                for raw in full:
                    emit(pipe, raw)
        for pipe, rest in bufs.items():
            if rest:
                emit(pipe, rest)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.write("# wall time %.1f s%s\n" % (time.monotonic() - start,
                                                ", TIMED OUT" if timed_out else ""))
    return lines, timed_out, proc.returncode


def result_status(ok, desc):
    """passed, failed, skipped or xfail, as scripts/tap-summary.py counts."""
    d = RESULT_DIRECTIVE.search(desc)
    kind = d.group(1).upper() if d else None
    if ok:
        return {"SKIP": "skipped", "TODO": "failed"}.get(kind, "passed")
    return "xfail" if kind == "TODO" else "failed"


def judge(lines, timed_out, timeout, log_path, require_done=True, qemu_status=0,
          guest_error_limit=GUEST_ERROR_LIMIT, notes=None):
    """Return a list of (status, description) over all tests and checks;
    status is "passed", "failed", "skipped" or "xfail" (a "not ok # TODO",
    an expected failure).  qemu_status is QEMU's exit status as
    subprocess reports it (negative: killed by that signal).  notes, a
    list, gets how many guest errors each test made."""
    results = []
    current, tap_seen, failed_inside = None, 0, False
    done = False
    errors, limit, outside_errors = 0, guest_error_limit, 0

    def check_flood(who, count, bound):
        if count and notes is not None:
            notes.append("%s: %d device guest errors (limit %d)" % (who, count, bound))
        if count > bound:
            results.append(("failed", "%s: %d device guest errors (LOG_GUEST_ERROR), more than "
                            "the %d a test may make (log: %s)" % (who, count, bound, log_path)))

    for line in lines:
        if line.startswith(STDERR_TAG):
            text = line[len(STDERR_TAG):]
            if QEMU_PROBLEMS.search(text):
                results.append(("failed", "QEMU on stderr: " + text.strip()[:160]))
            elif current:
                errors += 1
            else:
                outside_errors += 1
            continue
        if line.startswith("VNPU-TEST-BEGIN "):
            current, tap_seen, failed_inside = line.split()[1], 0, False
            errors, limit = 0, guest_error_limit
            continue
        if line.startswith("VNPU-TEST-END ") and current:
            m = re.search(r"rc=(\d+)", line)
            rc = int(m.group(1)) if m else -1
            if rc == 124 or rc == 143:
                results.append(("failed", "%s: timed out inside the guest" % current))
            elif rc == 127:
                results.append(("failed", "%s: no such test in the guest" % current))
            elif tap_seen == 0:
                results.append(("failed", "%s: exited rc=%d without TAP results" % (current, rc)))
            elif rc != 0 and not failed_inside:
                results.append(("failed", "%s: exited rc=%d" % (current, rc)))
            check_flood(current, errors, limit)
            current = None
            continue
        if line.startswith("VNPU-ALL-DONE"):
            done = True
            continue
        if line.startswith("VNPU-INIT: ") and "failed" in line:
            results.append(("failed", "init: " + line[len("VNPU-INIT: "):]))
            continue
        if current:
            m = EXPECT_GUEST_ERRORS.match(line)
            if m:
                limit = int(m.group(1))
                continue
            # A skip-all plan: the test does not apply to this kernel or
            # device; a skip, never a pass.
            m = SKIP_ALL.match(line)
            if m:
                tap_seen += 1
                results.append(("skipped", "%s # SKIP %s" % (
                    current, m.group(1).strip() or "(no reason given)")))
                continue
            m = TAP_LINE.match(line)
            if m:
                tap_seen += 1
                desc = m.group(2).strip()
                status = result_status(m.group(1) == "ok", desc)
                if status == "failed":
                    failed_inside = True
                    if m.group(1) == "ok":
                        # "not ok" without the directive, so every reader
                        # counts it failed.
                        desc = re.sub(r"#\s*TODO\b", "(expected to fail:", desc,
                                      flags=re.IGNORECASE) + \
                            ") passed unexpectedly: remove it from its expected-failure list"
                results.append((status, "%s: %s" % (current, desc)))
    if current:
        results.append(("failed", "%s: did not finish (guest died or hung)" % current))
        check_flood(current, errors, limit)
    check_flood("outside the tests (boot, module load)", outside_errors, guest_error_limit)
    for line in lines:
        if line.startswith(STDERR_TAG) or KERNEL_BENIGN.search(line):
            continue
        for pat in KERNEL_PROBLEMS:
            if pat.search(line) and not line.startswith(("ok ", "not ok ", "#")):
                results.append(("failed", "kernel report in console: " + line.strip()[:160]))
                break
    if timed_out:
        results.append(("failed", "guest timed out after %d s (log: %s)" % (timeout, log_path)))
    else:
        if qemu_status is None or qemu_status < 0:
            results.append(("failed", "QEMU was killed by signal %s (log: %s)" % (
                -qemu_status if qemu_status is not None else "?", log_path)))
        elif qemu_status != 0:
            results.append(("failed", "QEMU exited with status %d (log: %s)" % (
                qemu_status, log_path)))
        if require_done and not done:
            results.append(("failed", "guest did not reach the end of its test list (log: %s)"
                            % log_path))
    return results


def split_tests(tests, devices):
    """(tests for the first boot, tests for a boot with MULTI_DEVICES
    devices) out of an explicit list; either may be empty."""
    if devices >= MULTI_DEVICES:
        return tests, []
    multi = [t for t in tests if t.startswith(MULTI_PREFIX)]
    closing = [t for t in tests if t.startswith(CLOSING_PREFIX)]
    first = [t for t in tests if t not in multi]
    if multi:
        multi += closing
        if first == closing:
            first = []
    return first, multi


def deferred_tests(lines):
    """The tests a boot left for one with more devices (VNPU-DEFERRED)."""
    for line in lines:
        m = DEFERRED.match(line)
        if m:
            return m.group(1).split()
    return []


def test_boots(args, receiver):
    """Boot for the tests, and once more with MULTI_DEVICES devices for
    those that need them; return [(label, log, lines, timed_out, status)]
    and a line of wall time per boot."""
    boots, times = [], []

    def run(label, log, opts):
        start = time.monotonic()
        lines, timed_out, rc = boot(build_cmd(opts), opts.timeout, log, opts.echo, receiver)
        boots.append((label, log, lines, timed_out, rc))
        times.append("%sboot with %d device(s): %.1f s" % (
            label, 0 if opts.no_device else opts.devices, time.monotonic() - start))
        return lines

    first, multi = split_tests(args.tests, args.devices)
    if first or not args.tests:
        lines = run("", args.log, argparse.Namespace(**dict(vars(args), tests=first)))
        if not args.tests:
            multi = deferred_tests(lines)
    if multi and not args.no_device:
        base, ext = os.path.splitext(args.log)
        run("%d devices: " % MULTI_DEVICES, "%s-%ddev%s" % (base, MULTI_DEVICES, ext),
            argparse.Namespace(**dict(vars(args), tests=multi, devices=MULTI_DEVICES)))
    return boots, times


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--mode", default="test", choices=["test", "bench", "demo", "shell"])
    ap.add_argument("--tests", nargs="*", default=[], help="only these guest tests")
    ap.add_argument("--timeout", type=int, default=1200, help="whole-boot timeout, s")
    ap.add_argument("--test-timeout", type=int, default=600, help="per-test timeout, s")
    # Single-threaded TCG: with MTTCG, the kernel patching its own text
    # (static keys, alternatives) while the other vCPU runs it occasionally
    # executed a half-patched instruction (an int3 Oops in early boot).
    ap.add_argument("--accel", default="tcg,thread=single")
    ap.add_argument("--cpu", default=GUEST_CPU,
                    help="QEMU's -cpu model (default %(default)s)")
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--device-opts", default="", help="extra -device vnpu,... options")
    ap.add_argument("--no-device", action="store_true")
    # A string default goes through type=int too: a bad VNPU_DEVICES gets
    # argparse's usage error, not a traceback.
    ap.add_argument("--devices", type=int, default=os.environ.get("VNPU_DEVICES") or "1",
                    help="vnpu devices in the guest (default $VNPU_DEVICES, else 1)")
    ap.add_argument("--qemu-arg", action="append", default=[])
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--log", default="console.log")
    ap.add_argument("--results", help="write the TAP stream here too")
    ap.add_argument("--echo", action="store_true", help="echo the console")
    ap.add_argument("--name", default="guest", help="layer name in the summary line")
    ap.add_argument("--out-dir", help="where files the guest sends (VNPU-FILE) go")
    ap.add_argument("--exclude", action="append", default=[], metavar="PATTERN=REASON",
                    help="leave the tests matching this shell pattern out of the layer")
    ap.add_argument("--guest-error-limit", type=int, default=GUEST_ERROR_LIMIT,
                    help="device guest errors a test may log (default %(default)s)")
    args = ap.parse_args()
    if args.devices < 1:
        ap.error("--devices %d: give at least 1 (or --no-device)" % args.devices)
    excludes = []
    for spec in args.exclude:
        pat, sep, why = spec.partition("=")
        if not sep or not why or "," in pat or not re.match(r"^[A-Za-z0-9._*?-]+$", pat):
            ap.error("--exclude %r: give PATTERN=REASON (a shell pattern of test names)" % spec)
        excludes.append((pat, why))
    args.exclude = excludes
    named = [(t, why) for t in args.tests for pat, why in excludes if fnmatch.fnmatchcase(t, pat)]

    cmd = build_cmd(args)
    if args.mode == "shell":
        run_interactive(cmd)

    receiver = FileReceiver(args.out_dir)
    if args.mode != "test":
        lines, timed_out, rc = boot(cmd, args.timeout, args.log, args.echo, receiver)
        receiver.close()
    if args.mode == "demo":
        # The demo's own output, between the init's markers (the kernel's
        # messages stay in the log, even those of a module the demo loads
        # itself, and are judged there), so its last lines are the demo's
        # verdicts.
        status = None
        if not args.echo:
            inside = False
            for line in lines:
                if line.startswith("VNPU-DEMO-BEGIN"):
                    inside = True
                elif line.startswith("VNPU-DEMO-END"):
                    inside = False
                elif inside and not KERNEL_MESSAGE.match(line):
                    print(line)
        for line in lines:
            m = re.match(r"^VNPU-DEMO-END rc=(\d+)", line)
            if m:
                status = int(m.group(1))
        problems = judge(lines, timed_out, args.timeout, args.log, qemu_status=rc,
                         guest_error_limit=args.guest_error_limit)
        bad = [d for st, d in problems if st == "failed"] + receiver.problems
        if status is None:
            bad.append("the demo did not finish (log: %s)" % args.log)
        elif status:
            bad.append("the demo failed (exit status %d)" % status)
        for d in bad:
            print("demo: " + d, file=sys.stderr)
        sys.exit(1 if bad else 0)

    if args.mode == "test":
        boots, boot_times = test_boots(args, receiver)
        receiver.close()
    else:
        boots, boot_times = [("", args.log, lines, timed_out, rc)], []
    notes = []
    results = []
    for label, log, lines, timed_out, rc in boots:
        found = judge(lines, timed_out, args.timeout, log, qemu_status=rc,
                      guest_error_limit=args.guest_error_limit, notes=notes)
        if not any(line.startswith("VNPU-TEST-BEGIN ") for line in lines):
            found.append(("failed", "guest ran no test (log: %s)" % log))
        results += [(st, label + d) for st, d in found]
    results += [("failed", "%s: not in this layer: %s" % (t, why)) for t, why in named]
    results += [("failed", p) for p in receiver.problems]
    out = ["TAP version 13"]
    out += ["# %s: not in this layer: %s (%s)" % (args.name, pat, why) for pat, why in excludes]
    out.append("1..%d" % len(results))
    for i, (st, desc) in enumerate(results, 1):
        out.append("%s %d - %s" % ("ok" if st in ("passed", "skipped") else "not ok", i, desc))
    count = {k: sum(1 for st, _ in results if st == k)
             for k in ("passed", "failed", "skipped", "xfail")}
    failed = count["failed"]
    out += ["# " + note for note in notes]
    for label, log, _, _, _ in boots:
        out.append("# %s: %sconsole log %s" % (args.name, label, log))
    out += ["# %s: %s" % (args.name, t) for t in boot_times]
    out.append("# %s: %d passed, %d failed, %d skipped%s" % (
        args.name, count["passed"], failed, count["skipped"],
        ", %d expected failures" % count["xfail"] if count["xfail"] else ""))
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.results:
        with open(args.results, "w") as f:
            f.write(text)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
