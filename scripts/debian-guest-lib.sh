# shellcheck shell=bash
# What the Debian guest's layer (scripts/debian-guest-test.sh) and make
# demo's Python line (scripts/debian-guest-demo.sh) share: the image, the
# kernel, the packages of `make check-deb`, the BlazeFace data, the first
# stage, and how QEMU boots it.  Sourced after env.sh; the caller defines
# fail_guest MESSAGE, which reports and exits.

# The guest CPU: QEMU's "max" without AVX.  QEMU 7.2's TCG emulates the
# AVX masked moves (vmaskmovps, vpmaskmovd) by accessing every element, so
# one whose masked-out elements lie past a mapping's end faults where a
# real CPU does not; numpy's AVX2 loops load array tails that way and
# crashed python3-npu's tests at random (tests/debian-guest/t-guest-cpu.sh
# shows it).  Without AVX, numpy and libnpu's CPU path take their SSE
# loops.  The busybox guests keep "max": their static test binaries make
# no masked move.
DEBIAN_GUEST_CPU=max,-avx,-avx2,-fma,-f16c,-erms

debian_guest_out=$VNPU_BUILD/debian-guest
debian_guest_ver=$(cd "$VNPU_TOP" && dpkg-parsechangelog -S Version)
debian_guest_arch=$(dpkg --print-architecture)

# debian_guest_setup PAYLOAD: build or find the image, and start the
# payload with init.sh and a copy of the first stage's busybox.
debian_guest_setup() {
	debian_guest_image=$("$VNPU_TOP/scripts/debian-guest-image.sh") ||
		fail_guest "building the Debian guest image failed"
	debian_guest_krel=$("$VNPU_TOP/scripts/kernel.sh")
	debian_guest_kroot=$VNPU_KERNEL_CACHE/$debian_guest_krel/root
	rm -rf "$1" && mkdir -p "$1/debs" "$1/models/blazeface" "$1/models/ref"
	cp "$VNPU_TOP/tests/debian-guest/init.sh" "$1/"
}

# debian_guest_debs PAYLOAD PACKAGE...: check-deb's packages into the payload.
debian_guest_debs() {
	local payload=$1 p f
	shift
	for p; do
		f=${p}_${debian_guest_ver}_$debian_guest_arch.deb
		[ "$p" = vnpu-dkms ] && f=${p}_${debian_guest_ver}_all.deb
		cp "$VNPU_BUILD/deb/$f" "$payload/debs/" ||
			fail_guest "no $f in $VNPU_BUILD/deb: make check-deb builds it"
	done
}

# debian_guest_blazeface PAYLOAD: the model and onnxruntime's outputs.
debian_guest_blazeface() {
	local models=$VNPU_CACHE/models
	cp "$models/blazeface/face_detection_front_128x128_barracuda.onnx" "$1/models/blazeface/" &&
		cp -r "$models/ref/blazeface-front" "$1/models/ref/" ||
		fail_guest "no BlazeFace model or reference in $models: make models fetches them"
}

# debian_guest_stage PAYLOAD OUT: the first stage, payload included.
debian_guest_stage() {
	"$VNPU_TOP/scripts/debian-guest-initramfs.py" --kroot "$debian_guest_kroot" \
		--krel "$debian_guest_krel" --init "$VNPU_TOP/tests/debian-guest/stage-init.sh" \
		--data "payload=$1" -o "$2" || fail_guest "building the first stage failed"
}

# debian_guest_boot STAGE GUEST-RUN-ARGS...: boot it through guest-run.py.
# snapshot=on: the guest's writes (dpkg, DKMS) go to a temporary overlay,
# so the cached image is the same for every run.  The device as shipped
# (no fault-injection registers, which only the busybox guest's tests
# use): guest-run.py's bench and demo modes.
debian_guest_boot() {
	local stage=$1
	shift
	exec "$VNPU_TOP/scripts/guest-run.py" --qemu "$VNPU_QEMU" --cpu "$DEBIAN_GUEST_CPU" \
		--kernel "$debian_guest_kroot/boot/vmlinuz-$debian_guest_krel" --initrd "$stage" \
		--qemu-arg "-drive file=$debian_guest_image,if=virtio,format=raw,snapshot=on" "$@"
}
