#!/bin/sh
# First stage of the Debian guest (busybox, scripts/debian-guest-initramfs.py):
# load what mounting the root image needs, mount it, copy this run's
# payload (/payload: the packages under test and the test scripts) into it
# and switch to the Debian root, where /root/vnpu/init.sh runs the tests as
# PID 1.  The image is attached with snapshot=on: what the tests write
# (dpkg, DKMS) goes to QEMU's temporary overlay, never to the cached image.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
	echo "VNPU-INIT: $* failed"
	echo "VNPU-ALL-DONE"
	poweroff -f
}

while read -r m; do
	insmod "$m" || fail "insmod $m"
done < /etc/modules.load

# virtio_blk probes asynchronously.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/vda ] || fail "finding the root image (/dev/vda)"
mount -t ext4 /dev/vda /newroot || fail "mounting the root image"
mkdir -p /newroot/root/vnpu
cp -a /payload/. /newroot/root/vnpu/ || fail "copying the payload into the root image"
# The archive's copies lost their modes.  The image (mmdebstrap's apt
# variant) has no mount or poweroff commands: this busybox serves the
# Debian side's init for those.
for f in /newroot/root/vnpu/init.sh /newroot/root/vnpu/t-* /newroot/root/vnpu/demo; do
	[ -f "$f" ] && chmod +x "$f"
done
cp /bin/busybox /newroot/root/vnpu/busybox
umount /proc /sys
mount --move /dev /newroot/dev || fail "moving /dev"
exec switch_root /newroot /bin/sh /root/vnpu/init.sh
