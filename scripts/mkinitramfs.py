#!/usr/bin/env python3
"""Build the guest initramfs: busybox-static, the modules vnpu.ko needs,
vnpu.ko itself, and the guest test binaries.

The module list is not written by hand: it is vnpu.ko's own `depends`
field, closed over the Debian image's modules.dep, and emitted in load
order (dependencies first).
"""
import argparse
import lzma
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def module_depends(ko):
    out = subprocess.run(["modinfo", "-F", "depends", ko], check=True,
                         capture_output=True, text=True).stdout.strip()
    return [d for d in out.split(",") if d]


def parse_modules_dep(moddir):
    """Map module name -> (path relative to moddir, [dep paths]).  A kernel
    without modules (everything vnpu.ko needs built in) has none."""
    deps = {}
    if not os.path.exists(os.path.join(moddir, "modules.dep")):
        return deps
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            deps[name] = (path, rest.split())
    return deps


def load_order(wanted, deps):
    by_path = {p: n for n, (p, _) in deps.items()}
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        if name not in deps:
            sys.exit(f"mkinitramfs: vnpu.ko needs module {name}, not in modules.dep")
        for dep_path in deps[name][1]:
            visit(by_path[dep_path])
        order.append(name)

    for w in wanted:
        visit(w.replace("-", "_"))
    return order


def copy_module(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if src.endswith(".xz"):
        with lzma.open(src) as fi, open(dst, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    elif src.endswith(".zst"):
        subprocess.run(["zstd", "-q", "-d", "-f", src, "-o", dst], check=True)
    else:
        shutil.copyfile(src, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kroot", required=True, help="unpacked kernel image root")
    ap.add_argument("--krel", required=True, help="kernel release")
    ap.add_argument("--ko", help="vnpu.ko to include (optional)")
    ap.add_argument("--bin", action="append", default=[],
                    help="directory of guest test binaries (repeatable)")
    ap.add_argument("--init", required=True, help="guest init script")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    moddir = os.path.join(args.kroot, "lib/modules", args.krel)
    deps = parse_modules_dep(moddir)
    wanted = module_depends(args.ko) if args.ko else []
    order = load_order(wanted, deps)

    with tempfile.TemporaryDirectory() as root:
        for d in ("bin", "sbin", "dev", "proc", "sys", "tmp", "tests",
                  "etc", "lib/modules", "usr/bin", "usr/sbin"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        shutil.copy2("/bin/busybox", os.path.join(root, "bin/busybox"))
        os.symlink("busybox", os.path.join(root, "bin/sh"))
        shutil.copyfile(args.init, os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)

        with open(os.path.join(root, "etc/modules.load"), "w") as f:
            for name in order:
                rel = deps[name][0]
                dst_rel = os.path.join("lib/modules", os.path.basename(rel).split(".ko")[0] + ".ko")
                copy_module(os.path.join(moddir, rel), os.path.join(root, dst_rel))
                f.write("/" + dst_rel + "\n")
        if args.ko:
            shutil.copyfile(args.ko, os.path.join(root, "lib/modules/vnpu.ko"))

        for bdir in args.bin:
            if not os.path.isdir(bdir):
                continue
            for name in sorted(os.listdir(bdir)):
                src = os.path.join(bdir, name)
                if os.path.isfile(src):
                    dst = os.path.join(root, "tests", name)
                    shutil.copyfile(src, dst)
                    os.chmod(dst, os.stat(src).st_mode | stat.S_IXUSR)
                elif os.path.isdir(src):
                    # Test data (e.g. onnx-data/) goes along as a tree.
                    shutil.copytree(src, os.path.join(root, "tests", name))

        tmp = args.output + ".tmp"
        with open(tmp, "wb") as out:
            find = subprocess.Popen(["find", ".", "-print0"], cwd=root, stdout=subprocess.PIPE)
            cpio = subprocess.Popen(["cpio", "--null", "-o", "-H", "newc", "--quiet"],
                                    cwd=root, stdin=find.stdout, stdout=subprocess.PIPE)
            find.stdout.close()
            gz = subprocess.run(["gzip", "-1"], stdin=cpio.stdout, stdout=out)
            if cpio.wait() or find.wait() or gz.returncode:
                sys.exit("mkinitramfs: cpio failed")
        os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
