#!/bin/sh
# PID 1 of the Debian guest, after the first stage switched to the root
# image (tests/debian-guest/stage-init.sh).  No init system: mount what the
# tests need, run every /root/vnpu/t-* in name order framed by the
# VNPU-TEST-BEGIN/END lines scripts/guest-run.py judges (or, with
# vnpu.mode=demo, /root/vnpu/demo framed as the busybox guest frames its
# demo), and power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
# The first stage's busybox: the image has no mount package.
bb=/root/vnpu/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t tmpfs tmpfs /tmp
$bb mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
$bb mount -t devpts devpts /dev/pts
$bb mount -t tmpfs tmpfs /dev/shm
# What udev would make: bash's <(...), which dkms uses, needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

per_test_timeout=1500 mode=test
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	vnpu.timeout=*) per_test_timeout=${arg#vnpu.timeout=} ;;
	vnpu.mode=*) mode=${arg#vnpu.mode=} ;;
	esac
done

cd /root/vnpu || exit 1
if [ "$mode" = demo ]; then
	echo "VNPU-DEMO-BEGIN"
	timeout "$per_test_timeout" ./demo 2>&1
	echo "VNPU-DEMO-END rc=$?"
else
	for t in t-*; do
		echo "VNPU-TEST-BEGIN $t"
		timeout "$per_test_timeout" "./$t" 2>&1
		echo "VNPU-TEST-END $t rc=$?"
	done
fi
echo "VNPU-ALL-DONE"
sync
$bb poweroff -f
