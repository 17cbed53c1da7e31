#!/bin/sh
# SPDX-License-Identifier: MIT
# npu-run --pipeline on two devices with a real model, PP-OCRv4's text
# recognizer (ppocr-rec, from the /models archive check-guest appends):
# the model split in two stages by cost, stage 0 on device 0 and stage 1
# on device 1, the values crossing the cut handed on through a buffer
# both devices map, written and read there by the devices' jobs (zero
# copy: counted by npu-run's "CPU copied" figure).  Every request's
# output must be the very bytes one device running the whole model gives
# (each output file compared byte for byte), and match onnxruntime's
# reference; both stages must have run every request and handed values on.
n=0
fail=0
tap() {	# tap OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"
model=ppocr-rec
REQUESTS=${VNPU_PIPELINE_REQUESTS:-6}
if [ ! -f "$(model_file $model)" ]; then
	echo "not ok 1 - no $(model_file $model) in the guest: the models archive is appended by make check-guest (GUEST_WANTS_MODELS)"
	echo "1..1"
	exit 1
fi
set -- "$(model_file $model)" --input "$(model_input $model)=$(model_ref_input $model)"
rm -rf /tmp/pipe-one /tmp/pipe-two

out=$("$NPU_RUN" "$@" --device 0 --output-dir /tmp/pipe-one 2>&1)
rc=$?
echo "$out" | sed 's/^/# one device: /'
tap "$([ $rc = 0 ] && echo "$out" | grep -q '^model .*, on the NPU$' && echo 1)" \
	"$model on device 0 alone (exit $rc)"

out=$("$NPU_RUN" "$@" --devices 0,1 --pipeline --batch "$REQUESTS" --output-dir /tmp/pipe-two 2>&1)
rc=$?
echo "$out" | sed 's/^/# pipeline: /'
tap "$([ $rc = 0 ] && echo 1)" "npu-run --devices 0,1 --pipeline --batch $REQUESTS (exit $rc)"
tap "$(echo "$out" | grep -q "^outputs: $REQUESTS of $REQUESTS requests answered, 0 differ" && echo 1)" \
	"all $REQUESTS requests answered, every one with the first one's bytes"
runs0=$(echo "$out" | sed -n 's/^stage 0: .*, hands on \([0-9]*\) values .*, \([0-9]*\) runs, .*/\1 \2/p')
runs1=$(echo "$out" | sed -n 's/^stage 1: .*, \([0-9]*\) runs, .*/\1/p')
tap "$([ "${runs0#* }" = "$REQUESTS" ] && [ "${runs0%% *}" -ge 1 ] && [ "$runs1" = "$REQUESTS" ] && echo 1)" \
	"stage 0 ran every request and handed ${runs0%% *} values on, stage 1 ran every request (${runs0#* }, ${runs1:-none})"
tap "$(echo "$out" | grep -q '^device 0 (accel0): ' && echo "$out" | grep -q '^device 1 (accel1): ' && echo 1)" \
	"stage 0 on accel0, stage 1 on accel1"
# Zero copy: the values handed on are written by device 0's jobs and read
# by device 1's in the shared buffer, so the CPU copies per request only
# the caller's input into stage 0 and the output out of stage 1: at most
# the .npy files' sizes (their headers make them a little larger).
# Copying the handoff too would add the bytes that cross the cut to both.
hand=$(echo "$out" | sed -n 's/^stage 0: .*, hands on [0-9]* values (\([0-9]*\) bytes), .*/\1/p')
copied0=$(echo "$out" | sed -n 's/^stage 0: .*, zero copy, CPU copied \([0-9]*\) bytes$/\1/p')
copied1=$(echo "$out" | sed -n 's/^stage 1: .*, zero copy, CPU copied \([0-9]*\) bytes$/\1/p')
in_bytes=$(wc -c < "$(model_ref_input $model)")
out_bytes=$(cat /tmp/pipe-two/*.npy 2>/dev/null | wc -c)
tap "$([ -n "$hand" ] && [ -n "$copied0" ] && [ -n "$copied1" ] && [ "$hand" -gt 0 ] &&
	[ $((copied0 / REQUESTS)) -le "$in_bytes" ] && [ $((copied1 / REQUESTS)) -le "$out_bytes" ] &&
	echo 1)" \
	"zero copy: $hand bytes handed on per request; the CPU copied ${copied0:-?} and ${copied1:-?} bytes in all (input file $in_bytes, outputs $out_bytes bytes)"

same=1
files=0
for f in /tmp/pipe-one/*.npy; do
	[ -f "$f" ] || { same=0; break; }
	files=$((files + 1))
	if ! cmp -s "$f" "/tmp/pipe-two/${f##*/}"; then
		echo "# ${f##*/} differs from one device's"
		same=0
	fi
done
tap "$([ $same = 1 ] && [ $files -ge 1 ] && echo 1)" \
	"every output ($files files) is byte for byte what one device gives"
matched=0
check=$(check_outputs $model /tmp/pipe-two) && matched=1
tap $matched "the pipeline's output matches onnxruntime's: $check"
rm -rf /tmp/pipe-one /tmp/pipe-two
echo "1..$n"
exit $fail
