#!/bin/sh
# npu-info and npu-top with two devices: each lists both, by their own
# PCI functions, and npu-top counts a client on the device it has open.
echo "1..4"
info=$(./npu-info 2>&1)
rc=$?
pcis=$(echo "$info" | sed -n 's/^  pci address: *//p' | sort -u | wc -l)
if [ $rc = 0 ] && echo "$info" | grep -q ', 2 vnpu devices$' &&
   echo "$info" | grep -q '^Device 0:' && echo "$info" | grep -q '^Device 1:' &&
   [ "$pcis" = 2 ]; then
	echo "ok 1 - npu-info lists both devices, two PCI functions"
else
	echo "not ok 1 - npu-info (exit $rc, $pcis PCI addresses)"
fi
if [ "$(echo "$info" | grep -c 'command limits:   reported by the device')" = 2 ]; then
	echo "ok 2 - npu-info opens each device for its limits"
else
	echo "not ok 2 - npu-info could not open both devices"
fi
echo "$info" | sed 's/^/# /'

# This shell holds accel1 open: one client there, none on accel0.
exec 3<>/dev/accel/accel1
top=$(./npu-top -b -n 2 -d 0.5 2>&1)
rc=$?
exec 3>&-
# DEVICE PCI ENGINES BUSY% JOBS/S QUEUE MEM_KIB CLIENTS, last sample's rows.
rows=$(echo "$top" | awk '$1 ~ /^accel[0-9]+$/ && NF == 8 { r[$1] = $8 } END { for (d in r) print d, r[d] }' | sort)
if [ $rc = 0 ] && echo "$rows" | grep -q '^accel0 ' && echo "$rows" | grep -q '^accel1 '; then
	echo "ok 3 - npu-top has a row for each device"
else
	echo "not ok 3 - npu-top rows (exit $rc): $rows"
fi
if echo "$rows" | grep -q '^accel1 1$' && echo "$rows" | grep -q '^accel0 0$'; then
	echo "ok 4 - npu-top counts the client on the device it has open"
else
	echo "not ok 4 - npu-top clients per device: $rows"
fi
echo "$top" | sed 's/^/# /'
