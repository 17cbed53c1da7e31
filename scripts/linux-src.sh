#!/usr/bin/env bash
# Unpack Debian's linux-source-6.12 once into $VNPU_LINUX_SRC (for
# checkpatch.pl and the KUnit/in-tree build), then mirror the driver into
# it as drivers/accel/vnpu with the two-line Kconfig/Makefile hooks an
# in-tree submission would add.
set -euo pipefail
. "$(dirname "$0")/env.sh"

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || die "linux-source-6.12 is not installed (run scripts/deps.sh)"
stamp=$VNPU_LINUX_SRC/.vnpu-unpacked
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(stat -c %Y "$tarball")" ]; then
	log "unpacking $(basename "$tarball")"
	rm -rf "$VNPU_LINUX_SRC" && mkdir -p "$VNPU_LINUX_SRC"
	tar -xf "$tarball" -C "$VNPU_LINUX_SRC" --strip-components=1
	stat -c %Y "$tarball" > "$stamp"
fi

s=$VNPU_LINUX_SRC
mkdir -p "$s/drivers/accel/vnpu"
rsync -rc --delete --exclude='*.o' --exclude='.*.cmd' \
	"$VNPU_TOP/kernel/" "$s/drivers/accel/vnpu/"
rsync -c "$VNPU_TOP/include/vnpu/vnpu_hw.h" "$s/drivers/accel/vnpu/vnpu_hw.h"
rsync -c "$VNPU_TOP/uapi/drm/vnpu_accel.h" "$s/include/uapi/drm/vnpu_accel.h"
grep -q 'drivers/accel/vnpu/Kconfig' "$s/drivers/accel/Kconfig" ||
	sed -i 's|^source "drivers/accel/qaic/Kconfig"|&\nsource "drivers/accel/vnpu/Kconfig"|' "$s/drivers/accel/Kconfig"
grep -q 'vnpu/' "$s/drivers/accel/Makefile" ||
	printf 'obj-$(CONFIG_DRM_ACCEL)\t\t+= vnpu/\n' >> "$s/drivers/accel/Makefile"
echo "$s"
