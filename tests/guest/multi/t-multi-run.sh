#!/bin/sh
# SPDX-License-Identifier: MIT
# npu-run --devices and --batch with two devices, on an ONNX node test
# (a convolution, from the onnx-data every test initramfs has): requests
# spread over both devices, every one's output the first one's bytes and
# the first held against the test's expected output; then device 1 is
# unbound while a batch runs, and every request must still be answered
# right, on device 0, with the failovers counted.  Device 1 is bound
# again at the end.
n=0
fail=0
tap() {	# tap OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
d=onnx-data/node/test_conv_with_strides_padding
if [ ! -f "$d/model.onnx" ]; then
	echo "not ok 1 - no $d in the guest (tests/onnx installs it)"
	echo "1..1"
	exit 1
fi
set -- "$d/model.onnx" --input "$d/test_data_set_0/input_0.pb" \
	--input "$d/test_data_set_0/input_1.pb" --expect "$d/test_data_set_0/output_0.pb"

# requests LOG INDEX: requests device INDEX answered, from npu-run's line
requests() {
	echo "$1" | sed -n "s/^device $2 (accel[0-9]*): \([0-9]*\) requests.*/\1/p"
}

out=$(./npu-run "$@" --devices all --batch 200 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
r0=$(requests "$out" 0)
r1=$(requests "$out" 1)
tap "$([ $rc = 0 ] && echo 1)" "npu-run --devices all --batch 200 (exit $rc)"
tap "$([ "${r0:-0}" -gt 0 ] && [ "${r1:-0}" -gt 0 ] && [ $((r0 + r1)) = 200 ] && echo 1)" \
	"both devices answered requests (${r0:-none} + ${r1:-none})"
tap "$(echo "$out" | grep -q '^outputs: 200 of 200 requests answered, 0 differ' &&
       echo "$out" | grep -q '^output y: matches' && echo 1)" \
	"every output the same bytes, and they match the expected output"
rate2=$(echo "$out" | sed -n 's/^batch: .*: \([0-9.]*\) inputs\/s$/\1/p')

out=$(./npu-run "$@" --devices 0 --batch 200 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
tap "$([ $rc = 0 ] && [ "$(requests "$out" 0)" = 200 ] && echo 1)" \
	"npu-run --devices 0 --batch 200: all on device 0 (exit $rc)"

# About 8 s of requests at the two-device rate, device 1 unbound after 2 s.
pci=$(readlink /sys/class/accel/accel1/device)
pci=${pci##*/}
count=$(awk -v r="${rate2:-100}" 'BEGIN { c = int(r * 8); print c < 400 ? 400 : c }')
./npu-run "$@" --devices all --batch "$count" > /tmp/t-multi-run.log 2>&1 &
pid=$!
sleep 2
unbound=1
echo "$pci" > /sys/bus/pci/drivers/vnpu/unbind && unbound=0
wait $pid
rc=$?
out=$(cat /tmp/t-multi-run.log)
echo "$out" | sed 's/^/# /'
tap "$([ $unbound = 0 ] && echo 1)" "device 1 ($pci) unbound during a batch of $count"
tap "$([ $rc = 0 ] && echo 1)" "npu-run exits 0 (exit $rc)"
tap "$(echo "$out" | grep -q "^outputs: $count of $count requests answered, 0 differ" &&
       echo "$out" | grep -q '^output y: matches' && echo 1)" \
	"every request answered, with the same bytes, matching the expected output"
tap "$(echo "$out" | grep -q '^failovers: [1-9]' &&
       echo "$out" | grep -q '^device 1 (accel1): .*, left: ' && echo 1)" \
	"npu-run counts the failovers and says device 1 left"

echo "$pci" > /sys/bus/pci/drivers/vnpu/bind
i=0
while [ ! -e /dev/accel/accel1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tap "$([ -e /dev/accel/accel1 ] && echo 1)" "device 1 binds again"
echo "1..$n"
exit $fail
