#!/bin/sh
# The emulated NPU is on the PCI bus with the IDs documented in
# Documentation/hw-spec.rst, and vnpu.ko is bound to it.
echo "1..4"
dev=
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x4e50 ]; then
		dev=$d
	fi
done
if [ -n "$dev" ]; then
	echo "ok 1 - vnpu PCI function present at $(basename "$dev")"
else
	echo "not ok 1 - no PCI function with vendor 0x1234 device 0x4e50"
	exit 1
fi
class=$(cat "$dev/class")
if [ "$class" = 0x120000 ]; then
	echo "ok 2 - class code $class (processing accelerator)"
else
	echo "not ok 2 - class code $class, expected 0x120000"
fi
rev=$(cat "$dev/revision")
if [ "$rev" = 0x01 ]; then
	echo "ok 3 - revision $rev"
else
	echo "not ok 3 - revision $rev, expected 0x01"
fi
drv=$(basename "$(readlink "$dev/driver" 2>/dev/null)" 2>/dev/null)
if [ "$drv" = vnpu ]; then
	echo "ok 4 - bound to driver $drv"
else
	echo "not ok 4 - bound to '${drv:-nothing}', expected vnpu"
fi
