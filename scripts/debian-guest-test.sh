#!/usr/bin/env bash
# The Debian-userspace guest layer: boot the Debian root image
# (scripts/debian-guest-image.sh) with the vnpu device, install the
# packages `make check-deb` left in $VNPU_BUILD/deb with dpkg -i, and run
# tests/debian-guest/t-* on the device.  scripts/guest-run.py boots and
# judges it as it does the busybox guest (kernel reports, QEMU's health,
# each test's TAP) and writes the TAP to $1.
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$VNPU_TOP/scripts/debian-guest-lib.sh"
results=$1
timeout=${DEBIAN_GUEST_TIMEOUT:-3600}

fail_guest() {
	printf 'TAP version 13\n1..1\nnot ok 1 - %s\n' "$*" > "$results"
	die "$*"
}

payload=$debian_guest_out/payload
onnx_test=${ONNX_NODE_DATA:-/usr/share/libonnx-testdata/data/node}/test_conv_with_strides_padding

debian_guest_setup "$payload"
debian_guest_debs "$payload" libnpu1 npu-tools python3-npu vnpu-dkms
debian_guest_blazeface "$payload"
# python/tests/test_dynamic.py's real model: PP-OCR's classifier at
# several batch sizes against onnxruntime's rows.
mkdir -p "$payload/models/ppocr" &&
	cp "$VNPU_CACHE/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$payload/models/ppocr/" &&
	cp -r "$VNPU_CACHE/models/ref/ppocr-cls" "$payload/models/ref/" ||
	fail_guest "no PP-OCR classifier or reference in $VNPU_CACHE/models: make models fetches them"
mkdir -p "$payload/python-tests" "$payload/onnx"
cp "$VNPU_TOP"/tests/debian-guest/t-* "$payload/"
cp "$VNPU_TOP"/python/tests/*.py "$payload/python-tests/"
cp "$VNPU_TOP/Documentation/python.rst" "$payload/"
cp -r "$onnx_test" "$payload/onnx/" || fail_guest "no $onnx_test (libonnx-testdata)"
debian_guest_stage "$payload" "$debian_guest_out/stage.cpio.gz"

# python3-npu's tests of a machine without a device: t-python3-npu.sh
# deselects them; named here so that the layer's header says so.
host_only="python3-npu's tests of a machine without a device (check-host runs them)"
debian_guest_boot "$debian_guest_out/stage.cpio.gz" --name debian-guest --mode bench \
	--exclude "test_no_device_on_the_host=$host_only" --exclude "test_*absent_device*=$host_only" \
	--log "$debian_guest_out/console.log" --results "$results" \
	--timeout "$timeout" --test-timeout "$((timeout - 300))"
