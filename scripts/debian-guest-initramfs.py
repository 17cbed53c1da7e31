#!/usr/bin/env python3
"""Build the Debian guest's first stage: a busybox initramfs holding the
modules that mount the root image (virtio_blk and ext4, closed over the
kernel's modules.dep and loaded in that order), the stage's init, and the
run's payload (--data DEST=SRC: the packages under test, the test scripts
and their data).

Why a stage of our own rather than the root image's initramfs-tools: the
image has no initramfs-tools and no init system (it runs only the test
script, which keeps a TCG boot short), and the payload changes with every
build of the packages while the image is cached by its package list; the
stage is rebuilt from the kernel cache in about a second and copies the
payload into the booted root, so the image itself is never written.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkinitramfs import add_data, copy_module, load_order, parse_modules_dep, write_archive  # noqa: E402

# What mounting /dev/vda as ext4 needs beyond what Debian builds in
# (virtio_pci is built in); crc32c's implementation is a soft dependency
# modules.dep does not name.
ROOT_MODULES = ["crc32c_generic", "virtio_blk", "ext4"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kroot", required=True, help="unpacked kernel image root")
    ap.add_argument("--krel", required=True, help="kernel release")
    ap.add_argument("--init", required=True, help="the stage's init script")
    ap.add_argument("--data", action="append", default=[], metavar="DEST=SRC",
                    help="put file or tree SRC at DEST in the archive (repeatable)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    moddir = os.path.join(args.kroot, "lib/modules", args.krel)
    deps = parse_modules_dep(moddir)
    order = load_order([m for m in ROOT_MODULES if m in deps], deps)
    with tempfile.TemporaryDirectory() as root:
        for d in ("bin", "dev", "proc", "sys", "newroot", "etc", "lib/modules"):
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
        add_data(root, args.data, link=False)
        write_archive(root, args.output, "gzip")


if __name__ == "__main__":
    main()
