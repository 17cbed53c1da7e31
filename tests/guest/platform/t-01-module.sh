#!/bin/sh
# vnpu.ko unloads and loads again cleanly, and the accel node follows it.
# The harness separately fails the boot on any kernel warning this causes.
echo "1..4"
n=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi
}
check "accel node present while loaded" '[ -c /dev/accel/accel0 ]'
check "rmmod vnpu" 'rmmod vnpu'
check "accel node gone after unload" '[ ! -e /dev/accel/accel0 ]'
check "insmod vnpu again" 'insmod "$VNPU_KO" && [ -c /dev/accel/accel0 ]'
