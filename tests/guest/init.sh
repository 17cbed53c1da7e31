#!/bin/sh
# Guest init (busybox).  The kernel command line selects what to do:
#   vnpu.mode=test   run every /tests/t-* (or those in vnpu.tests=a,b) as TAP,
#                    less those matching a shell pattern in vnpu.exclude=p,q
#                    (tests a layer cannot run; the harness says so)
#   vnpu.mode=bench  run every /tests/b-*
#   vnpu.mode=demo   run /tests/demo (framed by VNPU-DEMO-BEGIN/END rc=N)
#   vnpu.mode=shell  interactive shell
# Each test's output is framed by VNPU-TEST-BEGIN/END lines that the host
# harness (scripts/guest-run.py) parses; the guest then powers off.
# Tests named t-multi-* need two vnpu devices (vnpu.devices=N, set by the
# harness): a boot with fewer leaves them out and names them, with the
# checks that close every boot (t-zzz-*), on a VNPU-DEFERRED line, and the
# harness runs them in a boot of their own.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm

mode=test
only=
exclude=
per_test_timeout=300
devices=1
set -f	# vnpu.exclude holds patterns, not paths to expand
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	vnpu.mode=*) mode=${arg#vnpu.mode=} ;;
	vnpu.tests=*) only=$(echo "${arg#vnpu.tests=}" | tr ',' ' ') ;;
	vnpu.exclude=*) exclude=$(echo "${arg#vnpu.exclude=}" | tr ',' ' ') ;;
	vnpu.timeout=*) per_test_timeout=${arg#vnpu.timeout=} ;;
	vnpu.devices=*) devices=${arg#vnpu.devices=} ;;
	esac
done
set +f

excluded() {
	set -f
	for pat in $exclude; do
		# shellcheck disable=SC2254
		case "$1" in $pat) set +f; return 0 ;; esac
	done
	set +f
	return 1
}

# Dependencies first, in the order mkinitramfs.py resolved from modules.dep.
while read -r m; do
	insmod "$m" || echo "VNPU-INIT: insmod $m failed"
done < /etc/modules.load

export VNPU_KO=/lib/modules/vnpu.ko
if [ -f "$VNPU_KO" ]; then
	if insmod "$VNPU_KO"; then
		echo "VNPU-INIT: vnpu.ko loaded"
	else
		echo "VNPU-INIT: insmod vnpu.ko failed"
	fi
fi

run_one() {
	t=$1
	name=$(basename "$t")
	echo "VNPU-TEST-BEGIN $name"
	read -r t0 _ </proc/uptime
	# The test's own stderr goes to the console too, outside TAP lines.
	timeout "$per_test_timeout" "$t" 2>&1
	rc=$?
	read -r t1 _ </proc/uptime
	# Its wall time, so a console log shows where a layer's time goes.
	echo "VNPU-TEST-END $name rc=$rc secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
}

case "$mode" in
test|bench)
	prefix=t-
	[ "$mode" = bench ] && prefix=b-
	cd /tests
	if [ -n "$only" ]; then
		list=$only
	else
		list=$(ls | grep "^$prefix" | sort)
	fi
	deferred=
	for t in $list; do
		if excluded "$t"; then
			continue
		elif [ "$mode" = test ] && [ "$devices" -lt 2 ] && [ "${t#t-multi-}" != "$t" ]; then
			deferred="$deferred $t"
		elif [ -x "/tests/$t" ]; then
			run_one "/tests/$t"
		else
			echo "VNPU-TEST-BEGIN $t"
			echo "VNPU-TEST-END $t rc=127"
		fi
	done
	if [ -n "$deferred" ]; then
		for t in $list; do
			case "$t" in t-zzz-*) excluded "$t" || deferred="$deferred $t" ;; esac
		done
		echo "VNPU-DEFERRED$deferred"
	fi
	echo "VNPU-ALL-DONE"
	;;
demo)
	# The harness shows what is between the markers and fails on rc != 0.
	echo "VNPU-DEMO-BEGIN"
	/tests/demo 2>&1
	echo "VNPU-DEMO-END rc=$?"
	echo "VNPU-ALL-DONE"
	;;
shell)
	echo "vnpu guest shell: tests are in /tests, vnpu.ko is loaded. 'poweroff -f' to leave."
	setsid cttyhack sh -l
	;;
esac
sync
poweroff -f
