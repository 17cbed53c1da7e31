#!/usr/bin/env bash
# Build vnpu.ko out of tree against the resolved Debian 6.12 headers.
# Kbuild in 6.12 writes objects next to the sources, so the sources are
# mirrored (content-compared, so unchanged files keep their mtimes) into
# $VNPU_BUILD/kmod with the same relative layout as the checkout.
# Extra arguments go to kbuild, e.g. `kmod.sh W=1 C=2`.
# VNPU_KDIR builds against another kernel tree instead (the debug kernel's
# build directory); VNPU_KMOD_OUT then keeps its objects apart from the
# Debian kernel's (default $VNPU_BUILD/kmod).
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ -n "${VNPU_KDIR:-}" ]; then
	kdir=$VNPU_KDIR
else
	rel=$("$VNPU_TOP/scripts/kernel.sh")
	kdir=$VNPU_KERNEL_CACHE/$rel/root/usr/src/linux-headers-$rel
fi
out=${VNPU_KMOD_OUT:-$VNPU_BUILD/kmod}
mkdir -p "$out"
for d in kernel include/vnpu uapi/drm; do
	mkdir -p "$out/$d"
	rsync -rc --include='*/' --include='*.[ch]' --include='Kbuild' \
		--include='Makefile' --include='Kconfig' --exclude='*' \
		"$VNPU_TOP/$d/" "$out/$d/"
done
make -C "$kdir" M="$out/kernel" -j"$(nproc)" "$@" modules
