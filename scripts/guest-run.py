#!/usr/bin/env python3
"""Boot the test guest under QEMU TCG with the vnpu device and judge it.

The guest init (tests/guest/init.sh) frames each test's TAP output with
VNPU-TEST-BEGIN/END lines.  This harness
  * enforces a wall-clock timeout on the whole boot,
  * parses every test's TAP,
  * fails the run on any kernel Oops/BUG/WARNING/lockdep/KASAN report in
    the console log, even when every test passed,
  * keeps the full console log,
and writes one renumbered TAP stream (stdout and --results) so the layer's
pass/fail counts can be summed with the other layers.  A test's
"not ok ... # TODO" line is a known failure (TAP's meaning): it stays in
the stream as such and does not fail the run.

Files come out of the guest over the console, the one channel every boot
has: the guest prints "VNPU-FILE-BEGIN name size sha256", the file in
base64, "VNPU-FILE-END name" (tests/guest/models/models-lib.sh,
send_file); with --out-dir the harness decodes it there, checks size and
sha256, and shows one line naming the host path in place of the block.
"""
import argparse
import base64
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import time

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


def build_cmd(args):
    append = ["console=ttyS0", "panic=-1", "vnpu.mode=" + args.mode,
              "vnpu.timeout=%d" % args.test_timeout]
    if args.tests:
        append.append("vnpu.tests=" + ",".join(args.tests))
    if args.append:
        append.append(args.append)
    cmd = [args.qemu, "-machine", "q35", "-accel", args.accel, "-cpu", "max",
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
        cmd += ["-device", ",".join(opts)]
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
    """Run QEMU, stream the console to the log; return (lines, timed_out)."""
    lines = []
    start = time.monotonic()
    timed_out = False
    if receiver is None:
        receiver = FileReceiver(None)
    with open(log_path, "w", errors="replace") as log:
        log.write("# " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        buf = b""
        while True:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            *full, buf = buf.split(b"\n")
            for raw in full:
                for line in receiver.feed(raw.decode("utf-8", "replace").rstrip("\r")):
                    lines.append(line)
                    log.write(line + "\n")
                    if echo:
                        print(line, flush=True)
        if buf:
            lines.append(buf.decode("utf-8", "replace"))
            log.write(lines[-1] + "\n")
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.write("# wall time %.1f s%s\n" % (time.monotonic() - start,
                                                ", TIMED OUT" if timed_out else ""))
    return lines, timed_out, proc.returncode


def judge(lines, timed_out, timeout, log_path, require_done=True):
    """Return a list of (ok, description) over all tests and checks; ok is
    None for a "not ok # TODO" (a known failure)."""
    results = []
    current, tap_seen, failed_inside = None, 0, False
    done = False
    for line in lines:
        if line.startswith("VNPU-TEST-BEGIN "):
            current, tap_seen, failed_inside = line.split()[1], 0, False
            continue
        if line.startswith("VNPU-TEST-END ") and current:
            m = re.search(r"rc=(\d+)", line)
            rc = int(m.group(1)) if m else -1
            if rc == 124 or rc == 143:
                results.append((False, "%s: timed out inside the guest" % current))
            elif rc == 127:
                results.append((False, "%s: no such test in the guest" % current))
            elif tap_seen == 0:
                results.append((False, "%s: exited rc=%d without TAP results" % (current, rc)))
            elif rc != 0 and not failed_inside:
                results.append((False, "%s: exited rc=%d" % (current, rc)))
            current = None
            continue
        if line.startswith("VNPU-ALL-DONE"):
            done = True
            continue
        if line.startswith("VNPU-INIT: ") and "failed" in line:
            results.append((False, "init: " + line[len("VNPU-INIT: "):]))
            continue
        if current:
            # A skip-all plan: the test does not apply to this kernel or
            # device (e.g. fault injection on the stock kernel).
            m = SKIP_ALL.match(line)
            if m:
                tap_seen += 1
                results.append((True, "%s # SKIP %s" % (current, m.group(1).strip())))
                continue
            m = TAP_LINE.match(line)
            if m:
                tap_seen += 1
                ok = m.group(1) == "ok"
                desc = m.group(2).strip()
                if not ok and TODO.search(desc):
                    # A known failure: reported, not counted against the run.
                    results.append((None, "%s: %s" % (current, desc)))
                    continue
                if not ok:
                    failed_inside = True
                results.append((ok, "%s: %s" % (current, desc)))
    if current:
        results.append((False, "%s: did not finish (guest died or hung)" % current))
    for line in lines:
        if KERNEL_BENIGN.search(line):
            continue
        for pat in KERNEL_PROBLEMS:
            if pat.search(line) and not line.startswith(("ok ", "not ok ", "#")):
                results.append((False, "kernel report in console: " + line.strip()[:160]))
                break
    if timed_out:
        results.append((False, "guest timed out after %d s (log: %s)" % (timeout, log_path)))
    elif require_done and not done:
        results.append((False, "guest did not reach the end of its test list (log: %s)" % log_path))
    return results


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
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--device-opts", default="", help="extra -device vnpu,... options")
    ap.add_argument("--no-device", action="store_true")
    ap.add_argument("--qemu-arg", action="append", default=[])
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--log", default="console.log")
    ap.add_argument("--results", help="write the TAP stream here too")
    ap.add_argument("--echo", action="store_true", help="echo the console")
    ap.add_argument("--name", default="guest", help="layer name in the summary line")
    ap.add_argument("--out-dir", help="where files the guest sends (VNPU-FILE) go")
    args = ap.parse_args()

    cmd = build_cmd(args)
    if args.mode == "shell":
        run_interactive(cmd)

    receiver = FileReceiver(args.out_dir)
    lines, timed_out, rc = boot(cmd, args.timeout, args.log, args.echo, receiver)
    receiver.close()
    if args.mode == "demo":
        # The demo's own output, between the init's markers (the kernel's
        # boot messages stay in the log), so its last lines are the
        # demo's verdicts.
        status = None
        if not args.echo:
            inside = False
            for line in lines:
                if line.startswith("VNPU-DEMO-BEGIN"):
                    inside = True
                elif line.startswith("VNPU-DEMO-END"):
                    inside = False
                elif inside:
                    print(line)
        for line in lines:
            m = re.match(r"^VNPU-DEMO-END rc=(\d+)", line)
            if m:
                status = int(m.group(1))
        problems = judge(lines, timed_out, args.timeout, args.log)
        bad = [d for ok, d in problems if ok is False] + receiver.problems
        if status is None:
            bad.append("the demo did not finish (log: %s)" % args.log)
        elif status:
            bad.append("the demo failed (exit status %d)" % status)
        for d in bad:
            print("demo: " + d, file=sys.stderr)
        sys.exit(1 if bad else 0)

    results = judge(lines, timed_out, args.timeout, args.log)
    if not results:
        results.append((False, "guest ran no test (log: %s)" % args.log))
    results += [(False, p) for p in receiver.problems]
    out = ["TAP version 13", "1..%d" % len(results)]
    for i, (ok, desc) in enumerate(results, 1):
        out.append("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
    passed = sum(1 for ok, _ in results if ok)
    todo = sum(1 for ok, _ in results if ok is None)
    failed = len(results) - passed - todo
    out.append("# %s: %d passed, %d failed%s (console log: %s)" % (
        args.name, passed, failed, ", %d known failures (TODO)" % todo if todo else "",
        args.log))
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.results:
        with open(args.results, "w") as f:
            f.write(text)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
