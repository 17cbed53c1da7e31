#!/bin/sh
# SPDX-License-Identifier: MIT
# The device's engines share a large command by output-row bands
# (ops/vnpu_split.h): GEMM, CONV2D, POOL2D and the per-element ops.  A
# model must give the same bytes however its commands were shared.  This
# runs whole int8 models on the device (every engine it has; the cut
# depends on the engine count) and on libnpu's CPU path in the same guest
# (the same engine code on one thread, every command whole), and holds
# every output file to be byte for byte the same.
#
# int8 only: their arithmetic is integer or per element, so the CPU path
# and the device compute the same bits; an fp32 GEMM or convolution sums
# in the order of the BLAS it runs on (OpenBLAS in the device, the
# engine's own GEMM on the CPU path), so fp32 models are held to
# onnxruntime within tolerance by t-model-* instead, and so are the
# outputs of the convolutions npu-quantize left in fp32
# (tests/models/Makefile: blazeface-back's two regressor heads).
# shellcheck source=tests/guest/models/models-lib.sh
. "$(dirname "$0")/models-lib.sh"

# blazeface-back-int8: residual QLinearAdds of 128x128x24 and wide convs,
# which the device cuts; blazeface-front-int8: the same blocks at 64x64,
# mostly too small to cut.
MODELS_TO_RUN=${VNPU_ENGINES_MODELS:-"blazeface-back-int8 blazeface-front-int8"}

# fp32_outputs MODEL: the outputs an fp32 convolution computes.
fp32_outputs() {
	case $1 in
	blazeface-back-int8) echo "Identity_0.npy Identity_1_0.npy" ;;
	esac
}

if [ ! -d "$MODELS/ref" ]; then
	echo "1..0 # SKIP no model data in this initramfs (make check-guest appends it)"
	exit 0
fi
engines=$("$BIN/npu-info" 2>/dev/null | sed -n 's/^ *engines: *\([0-9][0-9]*\)$/\1/p' | head -n 1)
if [ -z "$engines" ]; then
	echo "1..0 # SKIP npu-info reports no device"
	exit 0
fi

# shellcheck disable=SC2086  # a list of names, split on purpose
set -- $MODELS_TO_RUN
echo "1..$#"
echo "# device with $engines engines against the CPU path"
n=0
fail=0
for m in "$@"; do
	n=$((n + 1))
	dev=/tmp/engines-$m-dev
	cpu=/tmp/engines-$m-cpu
	rm -rf "$dev" "$cpu"
	in="$(model_input "$m")=$(model_ref_input "$m")"
	if ! log=$("$NPU_RUN" "$(model_file "$m")" --input "$in" --output-dir "$dev" 2>&1); then
		echo "$log" | sed 's/^/# /'
		echo "not ok $n - $m: npu-run on the device failed"
		fail=1
		continue
	fi
	if ! echo "$log" | grep -q '^model .*, on the NPU$'; then
		echo "$log" | sed 's/^/# /'
		echo "not ok $n - $m: did not run on the NPU"
		fail=1
		continue
	fi
	if ! log=$("$NPU_RUN" "$(model_file "$m")" --input "$in" --cpu --output-dir "$cpu" 2>&1); then
		echo "$log" | sed 's/^/# /'
		echo "not ok $n - $m: npu-run on the CPU path failed"
		fail=1
		continue
	fi
	outs=0
	differ=
	for f in "$cpu"/*.npy; do
		[ -f "$f" ] || continue
		case " $(fp32_outputs "$m") " in
		*" ${f##*/} "*) continue ;;
		esac
		outs=$((outs + 1))
		if ! cmp -s "$f" "$dev/${f##*/}"; then
			differ="$differ ${f##*/}"
		fi
	done
	if [ "$outs" = 0 ]; then
		echo "not ok $n - $m: the CPU path wrote no integer output"
		fail=1
	elif [ -n "$differ" ]; then
		echo "not ok $n - $m: $engines engines and the CPU path differ in:$differ"
		fail=1
	else
		echo "ok $n - $m: $outs integer outputs byte for byte the same on $engines engines and on the CPU path"
	fi
	rm -rf "$dev" "$cpu"
done
exit $fail
