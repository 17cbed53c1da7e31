#!/bin/sh
# Init of `make run` and `make shell` (scripts/vnpu-run.py starts it with
# rdinit=): the busybox guest's setup (its modules, vnpu.ko), then the
# image of the host directory (/dev/vda) mounted at vnpu.dir, and the
# command in /etc/vnpu-run.cmd run there, its output framed for the host,
# or a shell.  The image is unmounted before power-off so that the host
# reads a clean file system back.
/bin/busybox --install -s
export PATH=/tests:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm /root && mount -t tmpfs tmpfs /dev/shm

run=cmd dir=/host
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	vnpu.run=*) run=${arg#vnpu.run=} ;;
	vnpu.dir=*) dir=${arg#vnpu.dir=} ;;
	esac
done

fail() {
	echo "VNPU-INIT: $* failed"
	echo "VNPU-RUN-BEGIN"
	echo "vnpu-run: $* failed in the guest" >&2
	echo "VNPU-RUN-END rc=125"
	poweroff -f
}

for list in /etc/modules.load /etc/modules-share.load; do
	while read -r m; do
		name=$(basename "$m" .ko | tr - _)
		[ -d "/sys/module/$name" ] || insmod "$m" || fail "insmod $m"
	done < "$list"
done
insmod /lib/modules/vnpu.ko || fail "insmod vnpu.ko"
# virtio_blk probes asynchronously.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
mkdir -p "$dir"
mount -t ext4 /dev/vda "$dir" || fail "mounting the shared directory's image at $dir"
cd "$dir" || fail "cd $dir"

if [ "$run" = shell ]; then
	echo "vnpu guest: $dir holds the host directory's files, the tools are in /tests (on PATH), vnpu.ko is loaded."
	echo "Type 'exit' to leave: what you created or changed in $dir is then copied back to the host."
	setsid cttyhack sh -l
	# How the host tells a shell left with 'exit' from a QEMU stopped
	# under it (C-a x, a signal): only the first leaves this file.
	echo "$?" >"$dir/.vnpu-shell-status"
else
	echo "VNPU-RUN-BEGIN"
	sh /etc/vnpu-run.cmd 2>&1
	echo "VNPU-RUN-END rc=$?"
fi
cd /
umount "$dir" || { sync; echo "vnpu-run: unmounting $dir failed" >&2; }
sync
poweroff -f
