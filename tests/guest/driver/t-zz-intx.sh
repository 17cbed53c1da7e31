#!/bin/sh
# The single-interrupt fallback: with MSI and MSI-X disallowed for the
# device (its msi_bus attribute, as a "pci=nomsi" kernel or a platform
# without MSI would), the driver binds with one INTx interrupt and runs
# jobs; allowed again, it is back on per-queue MSI-X vectors.  Fails on a
# driver that knows only MSI-X: the bind is refused.  Rebinds the device,
# so it runs after the other tests (t-zz-*).  Booting QEMU with
# -device vnpu,x-msix=off takes the same path with the capability absent.
echo "1..6"
fail=0
pci=$(basename "$(readlink /sys/class/accel/accel0/device)")
dev=/sys/bus/pci/devices/$pci
drv=/sys/bus/pci/drivers/vnpu

rebind() {
	echo "$pci" > $drv/unbind || return 1
	echo "$pci" > $drv/bind || return 1
	i=0
	while [ ! -c /dev/accel/accel0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -c /dev/accel/accel0 ]
}

# The job binaries are optional in a trimmed initramfs.
run_jobs() {
	[ -x ./t-drv-order ] || return 0
	./t-drv-order >/dev/null 2>&1 && ./t-drv-isolation >/dev/null 2>&1
}

echo 0 > "$dev/msi_bus"
if rebind; then echo "ok 1 - bound with MSI/MSI-X disallowed"; else echo "not ok 1 - no bind without MSI-X"; fail=1; fi
if grep -q "vnpu-$pci\$" /proc/interrupts && ! grep -q "vnpu-$pci-q0" /proc/interrupts &&
   grep "vnpu-$pci\$" /proc/interrupts | grep -q IO-APIC; then
	echo "ok 2 - one INTx interrupt, named after the device"
else
	echo "not ok 2 - not on one INTx interrupt"; grep vnpu /proc/interrupts | sed 's/^/# /'; fail=1
fi
if run_jobs; then echo "ok 3 - jobs complete on INTx"; else echo "not ok 3 - jobs fail on INTx"; fail=1; fi
before=$(grep "vnpu-$pci\$" /proc/interrupts | awk '{ s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }')
[ -x ./t-drv-isolation ] && ./t-drv-isolation >/dev/null 2>&1
after=$(grep "vnpu-$pci\$" /proc/interrupts | awk '{ s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }')
if [ ! -x ./t-drv-isolation ] || [ "${after:-0}" -gt "${before:-0}" ]; then
	echo "ok 4 - completions arrive as INTx interrupts ($before -> $after)"
else
	echo "not ok 4 - no INTx interrupts counted ($before -> $after)"; fail=1
fi

echo 1 > "$dev/msi_bus"
if rebind; then echo "ok 5 - rebound with MSI-X allowed"; else echo "not ok 5 - rebind failed"; fail=1; fi
if grep -q "vnpu-$pci-q0" /proc/interrupts && grep "vnpu-$pci-q0" /proc/interrupts | grep -q MSI &&
   run_jobs; then
	echo "ok 6 - back on per-queue MSI-X vectors, jobs complete"
else
	echo "not ok 6 - not back on MSI-X"; fail=1
fi
exit $fail
