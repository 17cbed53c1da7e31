#!/usr/bin/env bash
# make demo's last line: Documentation/python.rst's BlazeFace example run
# in the Debian guest by python3 with the installed python3-npu, on the
# device (tests/debian-guest/demo).  guest-run.py's demo mode prints what
# the guest prints between its markers: that one line, or why it failed.
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$VNPU_TOP/scripts/debian-guest-lib.sh"

fail_guest() { die "demo: $*"; }

payload=$debian_guest_out/demo-payload
kmod=$VNPU_BUILD/kmod/kernel/vnpu.ko

debian_guest_setup "$payload"
debian_guest_debs "$payload" libnpu1 python3-npu
debian_guest_blazeface "$payload"
cp "$kmod" "$payload/" || fail_guest "no $kmod: make module builds it"
cp "$VNPU_TOP/tests/debian-guest/demo" "$payload/"
# The example is the documentation's first python code block, de-indented
# (as python/tests/test_example.py reads it), so the demo runs what users read.
awk '/^\.\. code-block:: python/ { on = 1; next }
	on && /^[^ \t]/ { exit }
	on { print substr($0, 5) }' "$VNPU_TOP/Documentation/python.rst" > "$payload/blazeface.py"
grep -q 'npu.Model' "$payload/blazeface.py" ||
	fail_guest "no BlazeFace example in Documentation/python.rst's first python block"
debian_guest_stage "$payload" "$debian_guest_out/demo.cpio.gz"
debian_guest_boot "$debian_guest_out/demo.cpio.gz" --name debian-demo --mode demo \
	--log "$debian_guest_out/console-demo.log" --timeout "${DEBIAN_DEMO_TIMEOUT:-1200}" \
	--test-timeout "$((${DEBIAN_DEMO_TIMEOUT:-1200} - 120))"
