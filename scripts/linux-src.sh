#!/usr/bin/env bash
# Unpack Debian's linux-source-6.12 once into $VNPU_LINUX_SRC (for
# checkpatch.pl and the KUnit/in-tree build), then drop the project's
# kernel part in as drivers/accel/vnpu with the two-line Kconfig/Makefile
# hooks the README's in-tree build adds.
set -euo pipefail
. "$(dirname "$0")/env.sh"

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || die "linux-source-6.12 is not installed (run scripts/deps.sh)"
stamp=$VNPU_LINUX_SRC/.vnpu-unpacked
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(stat -c %Y "$tarball")" ]; then
	rm -rf "$VNPU_LINUX_SRC" && mkdir -p "$VNPU_LINUX_SRC"
	# Progress: tar reports every 1000 records of 10 KiB read; xz knows
	# how many bytes the archive unpacks to.
	size=$(xz --robot --list "$tarball" 2>/dev/null | awk '$1 == "totals" { print $5 }')
	"$VNPU_TOP/scripts/progress.py" --label "unpacking $(basename "$tarball")" \
		--log "$VNPU_CACHE/linux-source-unpack.log" --count 'Read checkpoint' \
		--total $(( ${size:-0} / 10240 / 1000 )) -- \
		tar -xf "$tarball" -C "$VNPU_LINUX_SRC" --strip-components=1 \
		--checkpoint=1000 --checkpoint-action=echo ||
		die "unpacking $tarball failed (log: $VNPU_CACHE/linux-source-unpack.log)"
	stat -c %Y "$tarball" > "$stamp"
fi

# The project dropped in as drivers/accel/vnpu, as the README describes,
# limited to what kbuild reads: Kconfig and Kbuild at its root, the driver
# in kernel/, the shared headers beside it.  The uapi header also goes
# where a kernel tree keeps it, refreshed on every run: <drm/vnpu_accel.h>
# finds that copy before the project's own.
s=$VNPU_LINUX_SRC
d=$s/drivers/accel/vnpu
mkdir -p "$d"
rsync -rc --delete --delete-excluded \
	--include='/Kconfig' --include='/Kbuild' \
	--include='/kernel/***' --include='/include/' --include='/include/vnpu/***' \
	--include='/uapi/***' --exclude='*' \
	"$VNPU_TOP/" "$d/"
rsync -c "$VNPU_TOP/uapi/drm/vnpu_accel.h" "$s/include/uapi/drm/vnpu_accel.h"
grep -q 'drivers/accel/vnpu/Kconfig' "$s/drivers/accel/Kconfig" ||
	sed -i 's|^source "drivers/accel/qaic/Kconfig"|&\nsource "drivers/accel/vnpu/Kconfig"|' "$s/drivers/accel/Kconfig"
grep -q 'vnpu/' "$s/drivers/accel/Makefile" ||
	printf 'obj-$(CONFIG_DRM_ACCEL_VNPU)\t+= vnpu/\n' >> "$s/drivers/accel/Makefile"
echo "$s"
