#!/bin/sh
# The timeout_ms module parameter is checked at load: 0 and absurd values
# are refused with a message, a sane one is taken.  Reloads the module, so
# it runs after every other test but t-zz-reload.sh (t-zz-*).  Then
# huge_bo=0: BOs fall back to the kernel's shmem mount and still work
# (t-drv-hugebo --fallback, whose TAP lines are folded into one).
echo "1..5"
fail=0
n=0
rmmod vnpu || { echo "Bail out! rmmod vnpu failed"; exit 1; }
for v in 0 60001 4294967295; do
	n=$((n + 1))
	if insmod "$VNPU_KO" timeout_ms=$v 2>/dev/null; then
		echo "not ok $n - timeout_ms=$v accepted"
		fail=1
		rmmod vnpu
	elif dmesg | grep -q "timeout_ms=$v refused"; then
		echo "ok $n - timeout_ms=$v refused with a message"
	else
		echo "not ok $n - timeout_ms=$v refused without a message"
		fail=1
	fi
done
if insmod "$VNPU_KO" timeout_ms=2000 &&
   [ "$(cat /sys/module/vnpu/parameters/timeout_ms)" = 2000 ]; then
	echo "ok 4 - timeout_ms=2000 taken"
else
	echo "not ok 4 - timeout_ms=2000 not taken"
	fail=1
fi
rmmod vnpu 2>/dev/null
if insmod "$VNPU_KO" huge_bo=0 && out=$(/tests/t-drv-hugebo --fallback); then
	echo "ok 5 - huge_bo=0: BOs on 4 KiB pages work"
else
	echo "not ok 5 - huge_bo=0: $(echo "$out" | grep '^not ok' | head -n 1)"
	fail=1
fi
# Leave the module as the other tests found it.
rmmod vnpu 2>/dev/null
insmod "$VNPU_KO" || fail=1
exit $fail
