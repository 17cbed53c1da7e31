#!/usr/bin/env python3
"""Build the guest initramfs: busybox-static, the modules vnpu.ko needs,
vnpu.ko itself, and the guest test binaries.

The module list is not written by hand: it is vnpu.ko's own `depends`
field, closed over the Debian image's modules.dep, and emitted in load
order (dependencies first).

--data DEST=SRC adds a file or tree.  With --data and no --init it builds
a data-only archive instead (the real models and their references, tens of
MB), to be concatenated with a base archive into one initrd: the kernel
unpacks concatenated cpio archives one after the other into the same
rootfs, so the big, rarely changing data is packed once and only the boots
that need it pay for it (Documentation/platform.rst, "Guest", has the
figures).  --compress none leaves an archive uncompressed.
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


def write_archive(root, output, compress, follow=False):
    """cpio (newc) of the tree at root; with follow (a data-only archive),
    symbolic links are stored as the files they point to (cpio -L), and
    the root directory itself is left out, so that appending the archive
    does not change the mode of the guest's /."""
    tmp = output + ".tmp"
    with open(tmp, "wb") as out:
        find = subprocess.Popen(["find", "."] + (["-mindepth", "1"] if follow else []) +
                                ["-print0"], cwd=root, stdout=subprocess.PIPE)
        cpio = subprocess.Popen(["cpio", "--null", "-o", "-H", "newc", "--quiet"] +
                                (["-L"] if follow else []),
                                cwd=root, stdin=find.stdout,
                                stdout=subprocess.PIPE if compress == "gzip" else out)
        find.stdout.close()
        gz_rc = 0
        if compress == "gzip":
            gz_rc = subprocess.run(["gzip", "-1"], stdin=cpio.stdout, stdout=out).returncode
        if cpio.wait() or find.wait() or gz_rc:
            sys.exit("mkinitramfs: cpio failed")
    os.replace(tmp, output)


def data_items(specs):
    """Yield (path in the archive, source file) for each DEST=SRC, SRC a
    file or a directory tree."""
    for spec in specs:
        dest, sep, src = spec.partition("=")
        dest = dest.strip("/")
        if not sep or not dest or ".." in dest.split("/"):
            sys.exit(f"mkinitramfs: --data {spec}: want DEST=SRC, DEST inside the archive")
        if os.path.isfile(src):
            yield dest, src
        elif os.path.isdir(src):
            for dirpath, _, files in os.walk(src):
                rel = os.path.relpath(dirpath, src)
                for f in sorted(files):
                    yield os.path.normpath(os.path.join(dest, rel, f)), os.path.join(dirpath, f)
        else:
            sys.exit(f"mkinitramfs: --data {spec}: {src} does not exist")


def add_data(root, specs, link):
    """Put the --data files into the tree at root: as symbolic links to
    the sources when link (a data-only archive, written with cpio -L, so
    tens of MB are not copied once more), else as copies."""
    for dest, src in data_items(specs):
        dst = os.path.join(root, dest)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if link:
            os.symlink(os.path.abspath(src), dst)
        else:
            shutil.copyfile(src, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kroot", help="unpacked kernel image root")
    ap.add_argument("--krel", help="kernel release")
    ap.add_argument("--ko", help="vnpu.ko to include (optional)")
    ap.add_argument("--bin", action="append", default=[],
                    help="directory of guest test binaries (repeatable)")
    ap.add_argument("--data", action="append", default=[], metavar="DEST=SRC",
                    help="put file or tree SRC at DEST in the archive (repeatable)")
    ap.add_argument("--compress", choices=["gzip", "none"], default="gzip")
    ap.add_argument("--init", help="guest init script (omit for a data-only archive)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    if not args.init:
        if not args.data or args.ko or args.bin:
            sys.exit("mkinitramfs: without --init, give only --data (a data-only archive)")
        with tempfile.TemporaryDirectory() as root:
            add_data(root, args.data, link=True)
            write_archive(root, args.output, args.compress, follow=True)
        return
    if not args.kroot or not args.krel:
        sys.exit("mkinitramfs: --kroot and --krel are needed for a bootable archive")

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

        add_data(root, args.data, link=False)
        write_archive(root, args.output, args.compress)


if __name__ == "__main__":
    main()
