#!/usr/bin/env python3
"""Run one command on the emulated NPU with a host directory shared into
the guest (`make run CMD='...'`), or open a shell there (`make shell`).

The guest is the busybox one of `make check-guest` (its initramfs, with
vnpu.ko loaded and the tree's tools, statically linked, in /tests): it
boots in seconds, where the Debian guest would first have to install the
packages and build the module with DKMS.

The directory goes in as a disk: the QEMU build (scripts/qemu.sh, default
features off) has neither virtio-9p nor vvfat, so it is copied into an
ext4 image with mke2fs -d (no mount on the host), attached with
virtio-blk and mounted in the guest at its host path, so relative and
absolute paths in the command mean what they mean on the host.  After the
guest powers off, debugfs copies the image's tree out and rsync brings
back what the command created or changed (size or modification time);
what it deleted stays on the host.  The image holds the directory plus
--room MB for the command's outputs.

A second archive appended to the initramfs (the kernel unpacks
concatenated archives in turn) adds the ext4 modules, this run's init and
the command; rdinit= starts that init in place of the test runner's.  The
command's output is printed as it comes; the exit status is the
command's, or 1 when the guest itself failed (a kernel report, QEMU
dying, no answer within --timeout).
"""
import argparse
import importlib.util
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mkinitramfs import copy_module, load_order, parse_modules_dep, write_archive  # noqa: E402


def load_guest_run():
    spec = importlib.util.spec_from_file_location("guest_run", os.path.join(HERE, "guest-run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


guest_run = load_guest_run()

# Mounting the shared image; crc32c's implementation is a soft dependency
# of ext4 that modules.dep does not name.
SHARE_MODULES = ["crc32c_generic", "virtio_blk", "ext4"]
# A path the kernel command line and the guest's shell take as one word.
PLAIN_PATH = re.compile(r"^/[A-Za-z0-9/._+-]*$")
# The end marker follows the command's last line, which may lack its newline.
RUN_END = re.compile(r"^(.*)VNPU-RUN-END rc=(\d+)$")


def build_overlay(kroot, krel, init, command, output):
    moddir = os.path.join(kroot, "lib/modules", krel)
    deps = parse_modules_dep(moddir)
    order = load_order(SHARE_MODULES, deps)
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "lib/modules/share"))
        os.makedirs(os.path.join(root, "etc"))
        with open(os.path.join(root, "etc/modules-share.load"), "w") as f:
            for name in order:
                rel = deps[name][0]
                dst_rel = os.path.join("lib/modules/share", os.path.basename(rel).split(".ko")[0] + ".ko")
                copy_module(os.path.join(moddir, rel), os.path.join(root, dst_rel))
                f.write("/" + dst_rel + "\n")
        with open(init) as src, open(os.path.join(root, "vnpu-run-init"), "w") as dst:
            dst.write(src.read())
        os.chmod(os.path.join(root, "vnpu-run-init"), 0o755)
        with open(os.path.join(root, "etc/vnpu-run.cmd"), "w") as f:
            f.write(command + "\n")
        # follow: no entry for the archive's root, which would change the
        # mode of the guest's / (mkinitramfs.write_archive).
        write_archive(root, output, "gzip", follow=True)


def du_mb(path):
    out = subprocess.run(["du", "-sm", path], check=True, capture_output=True, text=True).stdout
    return int(out.split()[0])


def make_share(share, image, room_mb):
    size = du_mb(share) * 5 // 4 + room_mb
    if os.path.exists(image):
        os.unlink(image)
    p = subprocess.run(["mke2fs", "-q", "-t", "ext4", "-L", "vnpu-share",
                        "-E", "root_owner=%d:%d" % (os.getuid(), os.getgid()),
                        "-d", share, image, "%dM" % size], capture_output=True, text=True)
    if p.returncode:
        sys.exit("vnpu-run: mke2fs -d %s failed: %s" % (share, p.stderr.strip()))


SHELL_STATUS = ".vnpu-shell-status"


def shell_status(image):
    """The exit status run-init.sh wrote when the guest's shell ended, or
    None when the shell never ended (QEMU was stopped under it)."""
    p = subprocess.run(["debugfs", "-R", "cat /" + SHELL_STATUS, image],
                       capture_output=True, text=True)
    text = p.stdout.strip()
    return int(text) if p.returncode == 0 and text.isdigit() else None


def copy_back(image, share, work):
    """What the command created or changed in the image, into share."""
    out = os.path.join(work, "share-out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    p = subprocess.run(["debugfs", "-R", "rdump / " + out, image], capture_output=True, text=True)
    if p.returncode:
        return "debugfs rdump of the shared image failed: " + p.stderr.strip()[-300:]
    p = subprocess.run(["rsync", "-a", "--exclude=/lost+found", "--exclude=/" + SHELL_STATUS,
                        out + "/", share + "/"],
                       capture_output=True, text=True)
    shutil.rmtree(out, ignore_errors=True)
    if p.returncode:
        return "copying the command's files back failed: " + p.stderr.strip()[-300:]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--kroot", required=True, help="unpacked kernel image root (its modules)")
    ap.add_argument("--krel", required=True)
    ap.add_argument("--initrd", required=True, help="the guest's initramfs (make initramfs)")
    ap.add_argument("--init", required=True, help="the run's init (tests/debian-guest/run-init.sh)")
    ap.add_argument("--dir", default=os.getcwd(), help="the directory to share (default: here)")
    ap.add_argument("--shell", action="store_true", help="an interactive shell, no command")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="more QEMU arguments, split at blanks (trace events, a second device)")
    ap.add_argument("--timeout", type=int, default=3600, help="whole-boot timeout, s")
    ap.add_argument("--room", type=int, default=1024,
                    help="MB free in the shared image for what the command writes")
    ap.add_argument("--log", required=True, help="the console log")
    ap.add_argument("--work", required=True, help="where the combined initrd is written")
    ap.add_argument("command", nargs="?", default="")
    args = ap.parse_args()
    try:
        devices = int(os.environ.get("VNPU_DEVICES") or "1")
    except ValueError:
        devices = 0
    if devices < 1:
        ap.error("VNPU_DEVICES must be a number of devices, at least 1")
    if args.shell and not sys.stdin.isatty():
        # Commands fed to the shell on stdin (make shell < script): QEMU
        # reads them at once, before the guest's shell starts, and the
        # serial port drops what it cannot hold, so the shell would wait
        # forever for an exit it never got.  They run as make run's
        # command instead: all of them, with its output and exit status.
        args.command, args.shell = sys.stdin.read(), False
        if not args.command.strip():
            sys.exit("vnpu-run: --shell with no terminal and nothing on stdin to run")
    if not args.shell and not args.command.strip():
        ap.error("give a command, e.g. make run CMD='npu-info' (or make shell)")

    share = os.path.realpath(args.dir)
    if not os.path.isdir(share):
        ap.error("%s is not a directory" % args.dir)
    # Mounted at its own path when the command line can carry it.
    guest_dir = share if PLAIN_PATH.match(share) else "/host"

    os.makedirs(args.work, exist_ok=True)
    image = os.path.join(args.work, "share.ext4")
    make_share(share, image, args.room)
    overlay = os.path.join(args.work, "run-overlay.cpio.gz")
    initrd = os.path.join(args.work, "run-initrd.img")
    build_overlay(args.kroot, args.krel, args.init, "" if args.shell else args.command, overlay)
    with open(initrd + ".tmp", "wb") as out:
        for part in (args.initrd, overlay):
            with open(part, "rb") as f:
                out.write(f.read())
    os.replace(initrd + ".tmp", initrd)

    # A command runs on the device as shipped (guest-run.py's bench mode:
    # no fault-injection registers, no guest-error log to mix into its
    # output); the shell keeps them for debugging, like make check-guest.
    mode = "shell" if args.shell else "bench"
    opts = argparse.Namespace(
        qemu=args.qemu, kernel=args.kernel, initrd=initrd, mode=mode, tests=[], exclude=[],
        test_timeout=args.timeout, accel="tcg,thread=single", cpu=guest_run.GUEST_CPU, memory="2G",
        device_opts="",
        no_device=False, devices=devices,
        qemu_arg=["-drive file=%s,if=virtio,format=raw" % image.replace(",", ",,")] + args.qemu_arg,
        append="rdinit=/vnpu-run-init vnpu.run=%s vnpu.dir=%s loglevel=4"
               % ("shell" if args.shell else "cmd", guest_dir))
    cmd = guest_run.build_cmd(opts)
    if args.shell:
        rc = subprocess.run(cmd).returncode
        status = shell_status(image)
        if status is None:
            # The file system was not unmounted: what is in the image may
            # be half written, so nothing is copied over the user's files.
            print("vnpu-run: the guest stopped before its shell exited (QEMU status %d); "
                  "nothing was copied back, the guest's files are in %s"
                  % (rc, image), file=sys.stderr)
            sys.exit(rc if rc > 0 else 1)
        problem = copy_back(image, share, args.work)
        if problem:
            print("vnpu-run: " + problem, file=sys.stderr)
        sys.exit(status if status else 1 if rc or problem else 0)

    lines, inside, status = [], False, None
    start = time.monotonic()
    timed_out = False
    with open(args.log, "w", errors="replace") as log:
        log.write("# " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        buf = b""
        while True:
            left = args.timeout - (time.monotonic() - start)
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
            *full, buf = (buf + chunk).split(b"\n")
            for raw in full:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                lines.append(line)
                log.write(line + "\n")
                m = RUN_END.match(line)
                if m and inside:
                    if m.group(1):
                        print(m.group(1), flush=True)
                    inside, status = False, int(m.group(2))
                elif line.endswith("VNPU-RUN-BEGIN"):
                    # Firmware's escape sequences may precede it on the line.
                    inside = True
                elif inside:
                    print(line, flush=True)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    problems = [d for st, d in guest_run.judge(lines, timed_out, args.timeout, args.log,
                                               require_done=False, qemu_status=proc.returncode)
                if st == "failed"]
    if status is None:
        problems.append("the command did not finish in the guest (log: %s)" % args.log)
    elif not timed_out:
        problem = copy_back(image, share, args.work)
        if problem:
            problems.append(problem)
    for p in problems:
        print("vnpu-run: " + p, file=sys.stderr)
    if status is None:
        sys.exit(1)
    sys.exit(status if status or not problems else 1)


if __name__ == "__main__":
    main()
