#!/bin/sh
# Hostile model files compiled for the device and run there: every fuzz
# reproducer (tests/fuzz/regress/onnx, installed as onnx-hostile/) through
# onnx-replay with FUZZ_ONNX_DEVICE=0, the fuzz target's own checks (a
# refusal says why, a compiled graph small enough runs).  One file per
# process, each within 120 s: a crash, an abort or a hang fails that file.
# A refusal must also meet the file's .expect, as in make check-fuzz.
n=0
fail=0
tap() {	# tap OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
# The refusal in $1 against the .expect lines of $2; prints what does not hold.
expect_failure() {
	msg=$(sed -n 's/^fuzz-[a-z]*: refused: //p' "$1" | head -n 1)
	[ -f "$2.expect" ] && [ -n "$msg" ] || return 0
	while read -r kind re; do
		case $kind in
		refuse) echo "$msg" | grep -qE -- "$re" ||
			{ echo "message \"$msg\" does not match /$re/"; return; } ;;
		refuse-not) ! echo "$msg" | grep -qE -- "$re" ||
			{ echo "message \"$msg\" matches /$re/"; return; } ;;
		''|'#'*) ;;
		*) echo "$2.expect: unknown line \"$kind\""; return ;;
		esac
	done <"$2.expect"
}
files=$(ls onnx-hostile/*.onnx 2>/dev/null)
if [ -z "$files" ]; then
	echo "not ok 1 - no onnx-hostile/ in the guest (tests/guest/hostile installs it)"
	echo "1..1"
	exit 1
fi
log=/tmp/onnx-hostile.log
for f in $files; do
	name=${f#onnx-hostile/}
	FUZZ_ONNX_DEVICE=0 FUZZ_ONNX_VERBOSE=1 timeout 120 ./onnx-replay "$f" >"$log" 2>&1
	rc=$?
	why=$(expect_failure "$log" "$f")
	if [ $rc = 0 ] && [ -z "$why" ]; then
		said=$(sed -n 's/^fuzz-onnx: refused: /refused: /p' "$log" | head -n 1 | cut -c1-160)
		tap 1 "$name on the device: ${said:-accepted}"
	elif [ $rc = 124 ] || [ $rc = 143 ]; then
		tap 0 "$name on the device: no end within 120 s"
	else
		tap 0 "$name on the device (exit $rc) $why"
	fi
	sed 's/^/# /' "$log" | head -n 20
done
echo "1..$n"
exit $fail
