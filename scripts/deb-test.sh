#!/usr/bin/env bash
# Build the Debian packages (debian/) the way a distribution would, from a
# copy of the tree under $VNPU_BUILD so the checkout stays clean, check
# them with lintian, then install the library packages into a scratch root
# (dpkg -x, nothing touches the host's dpkg database), compile the
# libnpu tutorial against that installed libnpu.pc and import the
# packaged npu Python module.  Results become TAP in
# $1.
set -uo pipefail
. "$(dirname "$0")/env.sh"
results=$1

n=0 fails=0 skips=0
tap=()
report() { # ok|not-ok description [log]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		tap+=("ok $n - $2")
	else
		tap+=("not ok $n - $2")
		fails=$((fails + 1))
		[ -n "${3:-}" ] && tail -n 40 "$3"
	fi
}
finish() {
	{
		echo "TAP version 13"
		echo "1..$n"
		printf '%s\n' "${tap[@]}"
		echo "# deb: $((n - fails - skips)) passed, $fails failed, $skips skipped"
	} > "$results"
	tail -n 1 "$results"
	[ "$fails" = 0 ]
	exit
}

out=$VNPU_BUILD/deb
ver=$(cd "$VNPU_TOP" && dpkg-parsechangelog -S Version)
tree=$out/vnpu-$ver
log=$out/build.log
rm -rf "$out" && mkdir -p "$tree"

# One version everywhere: the changelog, DKMS and libnpu.pc.
dkms_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VNPU_TOP/dkms.conf")
lib_ver=$(sed -n 's/^VERSION := //p' "$VNPU_TOP/libnpu/Makefile")
if [ "$ver" = "$dkms_ver" ] && [ "$ver" = "$lib_ver" ]; then
	report ok "one version $ver in debian/changelog, dkms.conf and libnpu"
else
	report not-ok "versions agree: changelog $ver, dkms.conf $dkms_ver, libnpu $lib_ver"
fi

# What a clean clone holds: tracked files plus new ones, minus what
# .gitignore excludes.
rsync -a --exclude=/.git --filter=':- .gitignore' "$VNPU_TOP/" "$tree/"
if (cd "$tree" && dpkg-buildpackage -b -us -uc -j"$(nproc)") > "$log" 2>&1; then
	report ok "dpkg-buildpackage -b -us -uc"
else
	report not-ok "dpkg-buildpackage -b -us -uc" "$log"
	finish
fi

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb() { echo "$out/${1}_${ver}_${2:-$arch}.deb"; }
# has PACKAGE PATH...: the package ships every PATH.
has() {
	local pkg=$1 list p
	shift
	list=$(dpkg-deb -c "$(deb "$pkg" "${ARCH_OF_PKG:-}")" 2>/dev/null | awk '{print $6}' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qxE "$p" <<<"$list" || { echo "# $pkg lacks $p"; return 1; }
	done
}
libdir=/usr/lib/$multiarch
if has libnpu1 "$libdir/libnpu\.so\.1\.[0-9.]+" && has libnpu1 "$libdir/libnpu\.so\.1"; then
	report ok "libnpu1: the shared library"
else
	report not-ok "libnpu1: the shared library"
fi
if has libnpu-dev /usr/include/npu/npu.h "$libdir/libnpu\.a" "$libdir/libnpu\.so" \
	"$libdir/pkgconfig/libnpu\.pc"; then
	report ok "libnpu-dev: headers, static library, libnpu.pc"
else
	report not-ok "libnpu-dev: headers, static library, libnpu.pc"
fi
# Every program in libnpu/tools (npu-*.c), and the man page of each that has one in
# libnpu/man (lintian warns about those without).
tools=() names=() no_man=""
for t in "$VNPU_TOP"/libnpu/tools/npu-*.c; do
	t=$(basename "$t" .c)
	# npu-quantize-*.c are npu-quantize's modules (libnpu/Makefile), not tools.
	case $t in npu-quantize-*) continue ;; esac
	names+=("$t")
	tools+=("/usr/bin/$t")
	if [ -f "$VNPU_TOP/libnpu/man/$t.1" ]; then
		tools+=("/usr/share/man/man1/$t\.1\.gz")
	else
		no_man+=" $t"
	fi
done
if has npu-tools "${tools[@]}" &&
   dpkg-deb -f "$(deb npu-tools)" Depends | grep -q "libnpu1 (>= "; then
	report ok "npu-tools: ${names[*]}, linked to libnpu1${no_man:+ (no man page:$no_man)}"
else
	report not-ok "npu-tools: every libnpu/tools program with its man page, depending on libnpu1"
fi
if ARCH_OF_PKG=all has vnpu-dkms "/usr/src/vnpu-$ver/dkms.conf" "/usr/src/vnpu-$ver/kernel/vnpu_drv.c" \
	"/usr/src/vnpu-$ver/include/vnpu/vnpu_hw.h" "/usr/src/vnpu-$ver/uapi/drm/vnpu_accel.h" &&
   dpkg-deb -f "$(deb vnpu-dkms all)" Depends | grep -q dkms &&
   dpkg-deb -I "$(deb vnpu-dkms all)" postinst | grep -q 'dkms'; then
	report ok "vnpu-dkms: the driver source under /usr/src/vnpu-$ver, registered with DKMS on install"
else
	report not-ok "vnpu-dkms: driver source and DKMS maintainer scripts"
fi

pydir=/usr/lib/python3/dist-packages/npu
if has python3-npu "$pydir/__init__\.py" "$pydir/__init__\.pyi" "$pydir/py\.typed" \
	"$pydir/_npu\.cpython-[0-9]+-$multiarch\.so" &&
   dpkg-deb -f "$(deb python3-npu)" Depends | grep -q "libnpu1 (>= " &&
   dpkg-deb -f "$(deb python3-npu)" Depends | grep -q "python3-numpy-abi" &&
   dpkg-deb -f "$(deb python3-npu)" Depends | grep -q "python3 (<< "; then
	report ok "python3-npu: the npu module, its stubs and extension, depending on libnpu1, python3 and numpy's ABI"
else
	report not-ok "python3-npu: npu/__init__.py, __init__.pyi, py.typed and _npu.*.so, with libnpu1, python3 and numpy dependencies"
fi

# What vnpu-dkms installs is enough to build the driver: DKMS's own build
# of it, with plain kbuild against the cached Debian 6.12 headers.
rel=$("$VNPU_TOP/scripts/kernel.sh")
hdrs=$VNPU_KERNEL_CACHE/$rel/root/usr/src/linux-headers-$rel
dkms_root=$out/dkms-root
dpkg -x "$(deb vnpu-dkms all)" "$dkms_root"
if make -C "$hdrs" M="$dkms_root/usr/src/vnpu-$ver/kernel" -j"$(nproc)" modules \
	> "$out/dkms-kbuild.log" 2>&1 &&
   modinfo -F vermagic "$dkms_root/usr/src/vnpu-$ver/kernel/vnpu.ko" | grep -q "^$rel "; then
	report ok "vnpu-dkms: its source tree builds vnpu.ko for $rel"
else
	report not-ok "vnpu-dkms: its source tree builds vnpu.ko for $rel" "$out/dkms-kbuild.log"
fi

# lintian's errors fail the test; its warnings are listed in the log.
changes=$out/vnpu_${ver}_${arch}.changes
if lintian --fail-on error --tag-display-limit 0 "$changes" > "$out/lintian.log" 2>&1; then
	report ok "lintian: no errors ($(grep -c '^W:' "$out/lintian.log") warnings, see $out/lintian.log)"
else
	report not-ok "lintian: no errors" "$out/lintian.log"
fi

# A user's view: the library packages unpacked into a root of their own,
# the tutorial built only from what pkg-config says about it.
root=$out/root
for p in libnpu1 libnpu-dev; do
	dpkg -x "$(deb "$p")" "$root"
done
hello=$out/hello.c
awk '/^\.\. code-block:: c/{on=1;next} on&&/^[^ \t]/{exit} on{sub(/^    /,"");print}' \
	"$VNPU_TOP/Documentation/libnpu.rst" > "$hello"
pc() {
	PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root$libdir/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig \
		pkg-config "$@" libnpu
}
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror $(pc --cflags) -o "$out/hello" "$hello" $(pc --libs) \
	> "$out/hello.log" 2>&1 &&
   readelf -d "$out/hello" | grep -q 'NEEDED.*\[libnpu\.so\.1\]'; then
	report ok "tutorial builds against the installed libnpu.pc ($(pc --modversion)), linked to libnpu.so.1"
else
	report not-ok "tutorial builds against the installed libnpu.pc" "$out/hello.log"
fi
# The dynamic loader resolves it from the scratch root (every symbol, at
# once): with no device on the host the tutorial gets as far as
# npu_device_open() and fails the way it is written to, exit 1 and
# npu_strerror(-ENODEV), never a loader error, a crash or anything else.
LD_LIBRARY_PATH=$root$libdir LD_BIND_NOW=1 "$out/hello" > "$out/hello-run.log" 2>&1
rc=$?
want="error: no such vnpu device, or the device was lost"
if [ "$rc" = 1 ] && [ "$(cat "$out/hello-run.log")" = "$want" ]; then
	report ok "tutorial loads the installed libnpu.so.1 and reports no device (exit 1, \"$want\")"
else
	echo "exit status $rc; expected 1 and \"$want\"" >> "$out/hello-run.log"
	report not-ok "tutorial loads the installed libnpu.so.1" "$out/hello-run.log"
fi

# The packaged module, unpacked beside libnpu1: its extension is linked to
# libnpu.so.1 and imports with every symbol bound; with no device on the
# host it finds none, and a corrupt model gets libnpu-onnx's error.
dpkg -x "$(deb python3-npu)" "$root"
ext=$(find "$root$pydir" -name '_npu.cpython-*.so' | head -n 1)
pyrun() {
	LD_LIBRARY_PATH=$root$libdir LD_BIND_NOW=1 PYTHONPATH=$root/usr/lib/python3/dist-packages \
		PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$@"
}
if [ -n "$ext" ] && readelf -d "$ext" | grep -q 'NEEDED.*\[libnpu\.so\.1\]' &&
   pyrun - "$root" > "$out/python-import.log" 2>&1 <<'PY'
import errno, sys
import npu
assert npu.__file__.startswith(sys.argv[1]), npu.__file__
assert npu.devices() == [], npu.devices()
try:
	npu.Model(b"\xff" * 16, cpu=True)
except npu.Error as e:
	assert e.errno == errno.EBADMSG and "not a valid ONNX model" in str(e), e
else:
	raise AssertionError("a corrupt model loaded")
print("npu", npu.libnpu_version)
PY
then
	report ok "python3-npu: imports from the unpacked packages, linked to libnpu.so.1 ($(tail -n 1 "$out/python-import.log"))"
else
	report not-ok "python3-npu: imports from the unpacked packages, linked to libnpu.so.1" "$out/python-import.log"
fi
# The documentation's BlazeFace example with the packaged module, on the
# CPU path, against onnxruntime's outputs (when `make models` fetched them).
models=$VNPU_CACHE/models
bf=$models/blazeface/face_detection_front_128x128_barracuda.onnx
if [ -f "$bf" ] && [ -f "$models/ref/blazeface-front/in/input_0.npy" ]; then
	awk '/^\.\. code-block:: python/{on=1;next} on&&/^[^ \t]/{exit} on{sub(/^    /,"");print}' \
		"$VNPU_TOP/Documentation/python.rst" > "$out/blazeface.py"
	if pyrun "$out/blazeface.py" "$bf" "$models/ref/blazeface-front/in/input_0.npy" \
		"$models/ref/blazeface-front/out" > "$out/python-blazeface.log" 2>&1; then
		report ok "python3-npu: Documentation/python.rst's example: $(tail -n 1 "$out/python-blazeface.log")"
	else
		report not-ok "python3-npu: Documentation/python.rst's BlazeFace example" "$out/python-blazeface.log"
	fi
else
	n=$((n + 1))
	tap+=("ok $n - python3-npu: Documentation/python.rst's example # SKIP no BlazeFace model in $models (make models)")
	skips=$((skips + 1))
fi
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror -static $(pc --cflags --static) -o "$out/hello-static" \
	"$hello" $(pc --libs --static) > "$out/hello-static.log" 2>&1; then
	report ok "tutorial links statically from libnpu.pc's --static flags"
else
	report not-ok "tutorial links statically from libnpu.pc's --static flags" "$out/hello-static.log"
fi
finish
