#!/usr/bin/env python3
"""Run one long build step and show that it is alive.

    progress.py --label "building QEMU" --log FILE [--ninja | --count REGEX
                [--total N]] -- command args...

The command's output (stdout and stderr) goes to --log, never to the
screen.  What the user sees, on stderr:

- on a terminal, one status line rewritten in place at most a few times a
  second: "[vnpu] building QEMU [1234/2345 52%] 1m23s";
- otherwise (CI logs, make -s > file), one plain line every
  VNPU_PROGRESS_SECONDS (default 30) and none when the step is quicker, so
  a log never floods.

A final line says how the step ended and how long it took, unless it
succeeded within VNPU_PROGRESS_QUIET seconds (default 5): a step with
nothing to do stays silent.
Progress comes from ninja's "[N/M]" status (--ninja), from counting output
lines that match --count (out of --total, when known), or is just the
elapsed time.  Exits with the command's status.
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

NINJA = re.compile(r"^\[(\d+)/(\d+)\]")


def fmt_elapsed(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return "%ds" % seconds
    return "%dm%02ds" % (seconds // 60, seconds % 60)


class Progress:
    def __init__(self, label, total):
        self.label = label
        self.done = 0
        self.total = total
        self.lock = threading.Lock()

    def status(self):
        with self.lock:
            done, total = self.done, self.total
        if total:
            return "%d/%d %d%%" % (done, total, min(100, 100 * done // total))
        return "%d" % done if done else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", required=True)
    ap.add_argument("--log", required=True, help="the command's output goes here")
    ap.add_argument("--ninja", action="store_true", help="parse ninja's [N/M] status")
    ap.add_argument("--count", help="count output lines matching this regex")
    ap.add_argument("--total", type=int, default=0, help="expected --count matches")
    ap.add_argument("--append", action="store_true", help="append to --log")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")

    tty = sys.stderr.isatty()
    period = float(os.environ.get("VNPU_PROGRESS_SECONDS", "30"))
    quiet = float(os.environ.get("VNPU_PROGRESS_QUIET", "5"))
    counter = re.compile(args.count) if args.count else None
    prog = Progress(args.label, args.total)
    start = time.monotonic()
    finished = threading.Event()
    reported = threading.Event()

    def report():
        last = ""
        while not finished.wait(0.25 if tty else period):
            elapsed = fmt_elapsed(time.monotonic() - start)
            st = prog.status()
            if tty:
                line = "[vnpu] %s %s%s" % (args.label, "[%s] " % st if st else "", elapsed)
                # Pad over the previous line's tail; never wrap the terminal.
                cols = os.get_terminal_size(sys.stderr.fileno()).columns - 1
                cols = cols if cols >= 20 else 79
                sys.stderr.write("\r" + line[:cols].ljust(min(cols, len(last))))
                last = line[:cols]
            else:
                sys.stderr.write("[vnpu] %s: %s%s elapsed\n" %
                                 (args.label, st + ", " if st else "", elapsed))
                reported.set()
            sys.stderr.flush()
        if tty and last:
            sys.stderr.write("\r" + " " * len(last) + "\r")

    mode = "a" if args.append else "w"
    with open(args.log, mode, errors="replace") as log:
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, errors="replace", bufsize=1)
        except OSError as e:
            log.write("%s: %s\n" % (cmd[0], e))
            print("[vnpu] %s: cannot run %s: %s" % (args.label, cmd[0], e), file=sys.stderr)
            return 127
        t = threading.Thread(target=report, daemon=True)
        t.start()
        for line in p.stdout:
            log.write(line)
            if args.ninja:
                m = NINJA.match(line)
                if m:
                    with prog.lock:
                        prog.done, prog.total = int(m.group(1)), int(m.group(2))
            elif counter and counter.search(line):
                with prog.lock:
                    prog.done += 1
        rc = p.wait()
        finished.set()
        t.join()
    st = prog.status()
    elapsed = time.monotonic() - start
    if rc != 0 or elapsed >= quiet or reported.is_set():
        print("[vnpu] %s: %s%s in %s" % (args.label, "done" if rc == 0 else "FAILED (exit %d)" % rc,
                                         " (%s)" % st if st else "", fmt_elapsed(elapsed)),
              file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
