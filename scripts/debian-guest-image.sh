#!/usr/bin/env bash
# Build the Debian guest's root filesystem image, or find it cached, and
# print its path.  mmdebstrap assembles it from the packages in
# tests/debian-guest/packages, fetched through the machine's own apt
# sources (its *.sources and *.list files are handed over as they are,
# so no mirror is named here); the guest kernel's modules come from the
# kernel cache (scripts/kernel.sh), the same files as the vmlinuz the
# guest boots.  mke2fs -d turns the tree into an ext4 image with no loop
# mount.  The image is cached under $VNPU_CACHE/debian-guest/<key>, the key
# a hash of the package list, the kernel release and the suite, so a clean
# clone with a warm cache finds it; the guest boots it with snapshot=on,
# so nothing ever writes to it.
set -euo pipefail
. "$(dirname "$0")/env.sh"

# Bumped when what this script does to the tree changes.
IMAGE_FORMAT=1

krel=$("$VNPU_TOP/scripts/kernel.sh")
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || die "debian-guest: /etc/os-release names no VERSION_CODENAME to build the guest from"

mapfile -t packages < <(sed -e 's/#.*//' -e "s/@KREL@/$krel/" -e '/^[[:space:]]*$/d' \
	"$VNPU_TOP/tests/debian-guest/packages" | tr -d '[:blank:]')
key=$(printf '%s\n' "format $IMAGE_FORMAT" "suite $suite" "kernel $krel" "${packages[@]}" |
	sha256sum | cut -c1-16)
dir=$VNPU_CACHE/debian-guest/$key
image=$dir/rootfs.ext4
if [ -f "$image" ]; then
	echo "$image"
	exit 0
fi

sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] || continue
	# Binary package sources only; the deb-src entries scripts/deps.sh adds
	# would only slow apt down.
	grep -qE '^(Types:.*\bdeb\b|deb )' "$f" || continue
	sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || die "debian-guest: no apt sources in /etc/apt to build the guest from"

log "building the Debian guest image ($suite, ${#packages[@]} packages, kernel $krel): cold, a few minutes"
mkdir -p "$VNPU_CACHE/debian-guest"
work=$(mktemp -d "$VNPU_CACHE/debian-guest/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
tree=$work/root
buildlog=$VNPU_CACHE/debian-guest/build-$key.log
include=$(IFS=,; echo "${packages[*]}")
# --variant=apt: the essential set and apt, nothing recommended; the guest
# runs no init system, only its test script.
"$VNPU_TOP/scripts/progress.py" --label "mmdebstrap $suite" --log "$buildlog" -- \
	mmdebstrap --mode=root --variant=apt --include="$include" \
	"$suite" "$tree" "${sources[@]}" ||
	die "debian-guest: mmdebstrap failed (log: $buildlog)"

[ -d "$tree/usr/lib/modules/$krel/kernel" ] && [ -d "$tree/usr/src/linux-headers-$krel" ] ||
	die "debian-guest: the modules or headers of $krel are missing from the image (log: $buildlog)"
# The guest boots the kernel cache's vmlinuz with a first stage of our own
# (scripts/debian-guest-initramfs.py); the initrd linux-image's postinst
# generated is never used.
rm -f "$tree"/boot/initrd.img-* "$tree"/initrd.img "$tree"/initrd.img.old

# Room for dpkg -i and the DKMS build on top of what is installed.
used_mb=$(du -sm "$tree" | cut -f1)
size_mb=$((used_mb + used_mb / 4 + 1024))
mke2fs -q -t ext4 -L vnpu-debian -E root_owner=0:0 -d "$tree" "$work/rootfs.ext4" "${size_mb}M" >&2 ||
	die "debian-guest: mke2fs -d failed"
printf '%s\n' "${packages[@]}" > "$work/packages"
mkdir -p "$dir"
mv "$work/packages" "$dir/packages"
mv "$work/rootfs.ext4" "$image"
log "Debian guest image: $image (${used_mb} MB of files)"
echo "$image"
