#!/usr/bin/env bash
# Resolve the newest Debian linux-image-6.12.*-amd64-unsigned that has an
# exactly matching linux-headers package, download both (plus the headers'
# common and kbuild packages) and unpack them with dpkg-deb under
# $VNPU_KERNEL_CACHE/<version>.  Nothing is installed on the host.
# Prints the resolved kernel release (e.g. 6.12.117+deb12-amd64).
set -euo pipefail
. "$(dirname "$0")/env.sh"

resolve() {
	local images headers rel
	images=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64-unsigned$' |
		awk '{print $1}' | sed -e 's/^linux-image-//' -e 's/-unsigned$//' | sort -V -r)
	headers=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb[0-9]+-amd64$' |
		awk '{print $1}' | sed -e 's/^linux-headers-//')
	for rel in $images; do
		if grep -qxF "$rel" <<<"$headers"; then
			echo "$rel"
			return 0
		fi
	done
	return 1
}

# A previous resolution is reused while its packages are still in the cache;
# VNPU_KERNEL_REFRESH=1 asks the archive again.
stamp=$VNPU_KERNEL_CACHE/current
if [ -z "${VNPU_KERNEL_REFRESH:-}" ] && [ -s "$stamp" ] &&
   [ -f "$VNPU_KERNEL_CACHE/$(cat "$stamp")/.unpacked" ]; then
	cat "$stamp"
	exit 0
fi

rel=$(resolve) || {
	apt-get update -qq >/dev/null 2>&1 || true
	rel=$(resolve) || die "no linux-image-6.12.*-amd64-unsigned with matching headers in the archive"
}
dir=$VNPU_KERNEL_CACHE/$rel
if [ ! -f "$dir/.unpacked" ]; then
	log "downloading Debian kernel $rel"
	kbuild=$(apt-cache show "linux-headers-$rel" | sed -n 's/^Depends:.*\(linux-kbuild-[^ ,]*\).*/\1/p' | head -n1)
	common=$(apt-cache show "linux-headers-$rel" | sed -n 's/^Depends:.*\(linux-headers-[^ ,]*-common\)[ ,].*/\1/p' | head -n1)
	[ -n "$kbuild" ] && [ -n "$common" ] || die "cannot resolve kbuild/common packages of linux-headers-$rel"
	rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && "$VNPU_TOP/scripts/progress.py" --label "downloading the kernel packages" \
		--log "$dir/download.log" -- apt-get download -qq "linux-image-$rel-unsigned" \
		"linux-headers-$rel" "$common" "$kbuild") ||
		die "apt-get download of the kernel packages failed (log: $dir/download.log)"
	"$VNPU_TOP/scripts/progress.py" --label "unpacking the kernel packages" \
		--log "$dir/unpack.log" -- sh -c 'for deb in "$1"/debs/*.deb; do
			dpkg-deb -x "$deb" "$1/root" || exit 1; done' sh "$dir" ||
		die "unpacking the kernel packages failed (log: $dir/unpack.log)"
	# The arch headers' Makefile includes the common tree by absolute path;
	# point it at our unpacked copy.
	sed -i "s|/usr/src/|$dir/root/usr/src/|" "$dir/root/usr/src/linux-headers-$rel/Makefile"
	rm -rf "$dir/debs"
	# The package leaves modules.dep to depmod at install time.
	"$VNPU_TOP/scripts/progress.py" --label "indexing the kernel modules (depmod)" \
		--log "$dir/depmod.log" -- depmod -b "$dir/root" "$rel" ||
		die "depmod failed (log: $dir/depmod.log)"
	touch "$dir/.unpacked"
fi
echo "$rel" > "$stamp"
echo "$rel"
