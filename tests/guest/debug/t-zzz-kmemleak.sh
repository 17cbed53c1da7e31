#!/bin/sh
# Debug kernel only (make check-debug adds this directory to the initramfs
# and runs it after the suite; t-zzz sorts after every t-zz-*): ask kmemleak
# for two scans after everything else ran and fail on any suspected leak.
# The report goes to the console as is, where the harness flags it too.
# Only the debug initramfs has it, and the debug kernel is built with
# kmemleak: without it the kernel is not the one check-debug means, a failure.
f=/sys/kernel/debug/kmemleak
echo "1..1"
if [ ! -e "$f" ]; then
	echo "not ok 1 - kmemleak: no $f in this kernel (the debug kernel must have CONFIG_DEBUG_KMEMLEAK)"
	exit 1
fi
# An object is only reported once it is older than kmemleak's minimum age
# (5 s) and unreferenced in a scan; the second scan confirms the first.
echo scan > "$f"
sleep 6
echo scan > "$f"
report=$(cat "$f")
if [ -z "$report" ]; then
	echo "ok 1 - kmemleak: no suspected leaks after the suite"
	exit 0
fi
echo "$report"
n=$(echo "$report" | grep -c '^unreferenced object')
echo "not ok 1 - kmemleak: $n suspected leaks (report above)"
exit 1
