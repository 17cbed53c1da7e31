#!/bin/sh
# npu-info against the real device: it lists the device and prints the
# command limits the device reports through the driver's QUERY.
out=$(./npu-info 2>&1)
rc=$?
echo "1..3"
if [ $rc = 0 ] && echo "$out" | grep -q '^Device 0:'; then
	echo "ok 1 - npu-info lists device 0"
else
	echo "not ok 1 - npu-info exit $rc"
fi
if echo "$out" | grep -q 'command limits:   reported by the device'; then
	echo "ok 2 - npu-info: the device reports its command limits"
else
	echo "not ok 2 - npu-info shows no reported limits"
fi
# hardware interface 1.1: CMD_MACS 2^32, KERNEL_DIM 1024
if echo "$out" | grep -q 'command MACs:   4294967296' &&
   echo "$out" | grep -q 'kernel dim:     1024'; then
	echo "ok 3 - npu-info prints the limits' values"
else
	echo "not ok 3 - npu-info limit values missing"
fi
echo "$out" | sed 's/^/# /'
