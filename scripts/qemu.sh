#!/usr/bin/env bash
# Fetch Debian's QEMU 7.2 source, hook qemu-device/ into it and build
# qemu-system-x86_64 plus the vnpu qtests.  The integration is small on
# purpose: one subdir() in hw/meson.build, one source line in hw/Kconfig,
# one trace subdir and one qtest list entry.  Our files are copied in only
# when their content changed, so a rebuild after editing the device model
# recompiles just those files.
set -euo pipefail
. "$(dirname "$0")/env.sh"

fetch() {
	[ -f "$VNPU_QEMU_SRC/VERSION" ] && return 0
	log "fetching QEMU source with apt-get source"
	local dl=$VNPU_CACHE/qemu/dl
	rm -rf "$dl" && mkdir -p "$dl"
	(cd "$dl" && "$VNPU_TOP/scripts/progress.py" --label "fetching QEMU source" \
		--log "$VNPU_CACHE/qemu/fetch.log" -- apt-get source -qq qemu) ||
		die "apt-get source qemu failed (deb-src entries missing? run scripts/deps.sh; log: $VNPU_CACHE/qemu/fetch.log)"
	local dir
	dir=$(find "$dl" -maxdepth 1 -type d -name 'qemu-*' | head -n1)
	[ -n "$dir" ] || die "no QEMU source tree unpacked"
	rm -rf "$VNPU_QEMU_SRC"
	mv "$dir" "$VNPU_QEMU_SRC"
	rm -rf "$dl"
}

# add_line FILE ANCHOR_REGEX LINE: insert LINE after the first line matching
# ANCHOR_REGEX unless LINE is already present.
add_line() {
	local file=$1 anchor=$2 line=$3
	grep -qxF "$line" "$file" && return 0
	grep -qE "$anchor" "$file" || die "integration anchor '$anchor' not found in $file"
	awk -v a="$anchor" -v l="$line" '{ print } !done && $0 ~ a { print l; done = 1 }' \
		"$file" > "$file.tmp" && mv "$file.tmp" "$file"
	changed=1
}

# sync_file SRC DST: copy only when the content differs, keeping mtimes of
# unchanged files so ninja does not rebuild them.
changed=0
sync_file() {
	cmp -s "$1" "$2" 2>/dev/null && return 0
	install -D -m 0644 "$1" "$2"
	changed=1
}

integrate() {
	local s=$VNPU_QEMU_SRC f
	add_line "$s/hw/meson.build" "^subdir\\('misc'\\)" "subdir('vnpu')"
	add_line "$s/hw/Kconfig" "^source misc/Kconfig" "source vnpu/Kconfig"
	add_line "$s/meson.build" "^    'hw/misc',$" "    'hw/vnpu',"
	add_line "$s/tests/qtest/meson.build" "^qtests_x86_64 = qtests_i386" \
		"qtests_x86_64 += (config_all_devices.has_key('CONFIG_VNPU') ? ['vnpu-test', 'vnpu-fuzz-test'] : [])"
	mkdir -p "$s/hw/vnpu"
	for f in "$VNPU_TOP"/qemu-device/* "$VNPU_TOP"/include/vnpu/*.h; do
		[ -f "$f" ] && sync_file "$f" "$s/hw/vnpu/$(basename "$f")"
	done
	for f in "$VNPU_TOP"/ops/*.[ch]; do
		[ -f "$f" ] && sync_file "$f" "$s/hw/vnpu/$(basename "$f")"
	done
	sync_file "$VNPU_TOP/ops/meson.build" "$s/hw/vnpu/ops/meson.build"
	for f in "$VNPU_TOP"/tests/qtest/*.[ch]; do
		[ -f "$f" ] && sync_file "$f" "$s/tests/qtest/$(basename "$f")"
	done
}

configure() {
	[ -f "$VNPU_QEMU_BUILD/build.ninja" ] && return 0
	log "configuring QEMU (x86_64-softmmu, default features off)"
	# A half-configured tree from an interrupted run confuses meson.
	rm -rf "$VNPU_QEMU_BUILD" && mkdir -p "$VNPU_QEMU_BUILD"
	(cd "$VNPU_QEMU_BUILD" && "$VNPU_TOP/scripts/progress.py" --label "configuring QEMU" \
		--log configure.log -- "$VNPU_QEMU_SRC/configure" \
		--target-list=x86_64-softmmu --without-default-features \
		--disable-docs --disable-werror --enable-trace-backends=log) ||
		{ tail -30 "$VNPU_QEMU_BUILD/configure.log"; die "QEMU configure failed"; }
}

# Ninja's "[N/M]" status becomes the progress line (scripts/progress.py).
# QEMU regenerates qemu-version.h on every run and so relinks the binary
# even when nothing changed; the stamp, written after a build that
# succeeded and dropped when one of our files changes, skips that, so a
# run starting a guest never finds the binary being relinked under it.
build() {
	local jobs stamp=$VNPU_QEMU_BUILD/.vnpu-built
	[ "$changed" = 0 ] && [ -f "$stamp" ] && [ -x "$VNPU_QEMU" ] &&
		[ -x "$VNPU_QEMU_BUILD/tests/qtest/vnpu-test" ] &&
		[ -x "$VNPU_QEMU_BUILD/tests/qtest/vnpu-fuzz-test" ] && return 0
	rm -f "$stamp"
	jobs=$(nproc)
	PATH=/usr/lib/ccache:$PATH "$VNPU_TOP/scripts/progress.py" --label "building QEMU" --ninja \
		--log "$VNPU_QEMU_BUILD/ninja.log" -- ninja -C "$VNPU_QEMU_BUILD" -j"$jobs" \
		qemu-system-x86_64 tests/qtest/vnpu-test tests/qtest/vnpu-fuzz-test ||
		{ grep -E 'error|Error' -A3 "$VNPU_QEMU_BUILD/ninja.log" | head -60; die "QEMU build failed"; }
	touch "$stamp"
}

# Two runs at once (CI runs the debug kernel layer beside make check) take
# turns; the second finds the build done.
mkdir -p "$VNPU_CACHE/qemu"
exec 9>"$VNPU_CACHE/qemu/.build.lock"
flock 9
fetch
integrate
configure
build
