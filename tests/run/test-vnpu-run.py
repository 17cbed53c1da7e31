#!/usr/bin/env python3
"""make run and make shell as a user runs them (scripts/vnpu-run.py).

Writes TAP to argv[1].  Each case boots the guest once from a scratch
directory: make run's output, exit status and files copied back (with
two devices, VNPU_DEVICES=2); make shell left with 'exit N' on a
terminal; and make shell whose QEMU is stopped under it (C-a x), which
must fail and copy nothing back rather than exit 0 as if the shell had
ended.
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOT_TIMEOUT = 600


def make(target, cwd, extra=()):
    return ["make", "-s", "--no-print-directory", "-C", TOP, target, "RUN_DIR=" + cwd, *extra]


def on_terminal(argv, keys):
    """Run argv on a pseudo-terminal; type keys once the guest's shell
    prompt is up.  Returns (status, output)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                            start_new_session=True)
    os.close(slave)
    out, typed, start = b"", False, time.monotonic()
    while time.monotonic() - start < BOOT_TIMEOUT:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not typed and b"Enter 'help' for a list" in out:
            time.sleep(2)  # the prompt, and its cursor query, come after
            os.write(master, keys)
            typed = True
        if proc.poll() is not None and not ready:
            break
    if proc.poll() is None:
        proc.kill()
    os.close(master)
    return proc.wait(), out.decode("utf-8", "replace")


def main():
    results = []

    def check(ok, name, why=""):
        results.append((ok, name, why))

    with tempfile.TemporaryDirectory(prefix="vnpu-run-test.") as d:
        with open(os.path.join(d, "in.txt"), "w") as f:
            f.write("from the host\n")
        p = subprocess.run(make("run", d, ["VNPU_DEVICES=2",
                                          "CMD=cat in.txt; ls /dev/accel; npu-info >/dev/null && "
                                          "echo written > out.txt; exit 3"]),
                           capture_output=True, text=True, timeout=BOOT_TIMEOUT)
        check("from the host" in p.stdout, "make run: the command reads the host's file",
              p.stdout[-300:] + p.stderr[-300:])
        check("accel1" in p.stdout, "make run VNPU_DEVICES=2: the guest has two devices",
              p.stdout[-300:])
        check(p.returncode != 0 and "Error 3" in p.stderr, "make run: fails with the command's status 3",
              "status %d, %s" % (p.returncode, p.stderr[-300:]))
        check(os.path.exists(os.path.join(d, "out.txt")), "make run: what the command wrote is copied back")

        rc, out = on_terminal(make("shell", d), b"echo typed > shell.txt; exit 4\n")
        check(rc != 0 and "Error 4" in out, "make shell: 'exit 4' fails with status 4",
              "status %d: %s" % (rc, out[-300:]))
        check(os.path.exists(os.path.join(d, "shell.txt")), "make shell: what the shell wrote is copied back")

        rc, out = on_terminal(make("shell", d), b"echo lost > lost.txt\n\x01x")
        check(rc != 0 and "stopped before its shell exited" in out,
              "make shell: QEMU stopped under the shell (C-a x) fails and says so",
              "status %d: %s" % (rc, out[-300:]))
        check(not os.path.exists(os.path.join(d, "lost.txt")),
              "make shell: nothing is copied back from a guest stopped under its shell")
        check(not os.path.exists(os.path.join(d, ".vnpu-shell-status")),
              "make shell: the shell's status file stays in the guest")

    with open(sys.argv[1], "w") as tap:
        tap.write("TAP version 13\n1..%d\n" % len(results))
        for i, (ok, name, why) in enumerate(results, 1):
            tap.write("%s %d - %s\n" % ("ok" if ok else "not ok", i, name))
            if not ok and why:
                for line in why.strip().splitlines()[-8:]:
                    tap.write("# %s\n" % line)
    sys.exit(0 if all(r[0] for r in results) else 1)


if __name__ == "__main__":
    main()
