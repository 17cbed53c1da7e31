#!/bin/sh
# 50 unload/load cycles of vnpu.ko, with a job run in between when the
# ioctl test binary is present.  Runs last (t-zz-*): it reloads the module.
# The harness separately fails the boot on any kernel warning this causes.
cycles=50
echo "1..3"
fail=0
i=0
while [ $i -lt $cycles ]; do
	rmmod vnpu || { fail=1; break; }
	[ -e /dev/accel/accel0 ] && { fail=1; break; }
	insmod "$VNPU_KO" || { fail=1; break; }
	[ -c /dev/accel/accel0 ] || { fail=1; break; }
	i=$((i + 1))
done
if [ $fail = 0 ]; then echo "ok 1 - $cycles rmmod/insmod cycles"; else echo "not ok 1 - cycle $i failed"; fi
if grep -q '^vnpu ' /proc/modules; then echo "ok 2 - vnpu loaded at the end"; else echo "not ok 2 - vnpu not loaded"; fail=1; fi
# The device still runs jobs after all the reloads.
if [ -x ./t-drv-isolation ]; then
	if ./t-drv-isolation >/dev/null 2>&1; then echo "ok 3 - jobs run after reloads"; else echo "not ok 3 - jobs fail after reloads"; fail=1; fi
else
	echo "ok 3 # SKIP t-drv-isolation not present"
fi
exit $fail
