# shellcheck shell=bash
# Common paths for every build script.  Everything downloaded or built lives
# under VNPU_CACHE, outside the checkout, so `git clean -xfd` and fresh CI
# clones stay incremental.
VNPU_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VNPU_CACHE=${VNPU_CACHE:-$HOME/.cache/vnpu}
VNPU_BUILD=${VNPU_BUILD:-$VNPU_CACHE/build}
VNPU_QEMU_SRC=$VNPU_CACHE/qemu/src
VNPU_QEMU_BUILD=$VNPU_CACHE/qemu/build
VNPU_QEMU=$VNPU_QEMU_BUILD/qemu-system-x86_64
VNPU_KERNEL_CACHE=$VNPU_CACHE/kernel
VNPU_LINUX_SRC=$VNPU_CACHE/linux-source
export VNPU_TOP VNPU_CACHE VNPU_BUILD VNPU_QEMU_SRC VNPU_QEMU_BUILD VNPU_QEMU \
	VNPU_KERNEL_CACHE VNPU_LINUX_SRC
export CCACHE_DIR=${CCACHE_DIR:-$VNPU_CACHE/ccache}
mkdir -p "$VNPU_CACHE" "$VNPU_BUILD"

log() { printf '[vnpu] %s\n' "$*" >&2; }
die() { printf '[vnpu] error: %s\n' "$*" >&2; exit 1; }
