#!/usr/bin/env bash
# Install every Debian package the build and tests need; `deps.sh bench`
# adds what only `make bench` needs.  Idempotent: when
# everything is present this is one dpkg-query and returns in well under a
# second.  Only Debian's archive is used; source packages come from deb-src
# entries derived from the machine's own apt sources, so no mirror name is
# ever written down here.
set -euo pipefail
. "$(dirname "$0")/env.sh"

packages=(
	build-essential ccache ninja-build meson pkg-config python3 python3-venv
	libglib2.0-dev libpixman-1-dev zlib1g-dev libfdt-dev flex bison bc dpkg-dev
	libelf-dev libssl-dev rsync kmod cpio xz-utils zstd
	busybox-static seabios qemu-system-data
	libdrm-dev libcmocka-dev libopenblas-dev
	clang libclang-rt-14-dev llvm-14
	libonnx-testdata libonnx-dev protobuf-c-compiler libprotobuf-c-dev
	sparse pahole linux-source-6.12
	dataset-fashion-mnist espeak-ng
	libpng-dev
	python3-pil python3-onnx fonts-dejavu-core
	python3-dev python3-numpy python3-pytest dh-python
	debhelper dh-dkms dkms lintian fakeroot
)

# make bench: the chart (gnuplot), and the libraries the host engine
# benchmark compares the engine with (oneDNN, XNNPACK).
if [ "${1-}" = bench ]; then
	packages+=(gnuplot-nox libdnnl-dev libxnnpack-dev libpthreadpool-dev)
fi

# make check-debian-guest, run and shell: mmdebstrap assembles the Debian
# guest's root file system, mke2fs (-d) turns it and the directory
# `make run` shares into ext4 images, debugfs reads the latter back.
if [ "${1-}" = debian-guest ]; then
	packages+=(mmdebstrap e2fsprogs)
fi

# python3-pil, python3-onnx and fonts-dejavu-core make the int8 models'
# calibration data and read their output scales (tests/models/Makefile).
# python3-dev, python3-numpy and python3-pytest build and test the npu
# Python module (python/); dh-python packages it as python3-npu.

missing=()
# dpkg-query prints nothing for packages it has never heard of, so ask per
# package rather than parsing one combined listing.
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

# The model references run onnxruntime-node (scripts/models.sh).  Debian's
# nodejs and npm provide it; a machine that already has a node and an npm
# from elsewhere (whose nodejs package may conflict with Debian's npm) keeps
# them.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	missing+=(nodejs npm)
fi

ensure_deb_src() {
	if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	log "deriving deb-src entries from the existing apt sources"
	local f out=/etc/apt/sources.list.d/vnpu-deb-src
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		grep -q '^Types:.*\bdeb\b' "$f" || continue
		sed -e 's/^Types:.*/Types: deb-src/' "$f" >> "$out.sources"
		printf '\n' >> "$out.sources"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		sed -n -e 's/^deb \(.*\)/deb-src \1/p' "$f" >> "$out.list"
	done
	return 1
}

need_update=0
ensure_deb_src || need_update=1
if [ ${#missing[@]} -gt 0 ] || [ "$need_update" = 1 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root"
	log "installing: ${missing[*]-(none, refreshing deb-src lists)}"
	apt-get update -qq
	if [ ${#missing[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${missing[@]}" >/dev/null
	fi
fi
