#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host tests of npu-run (built with ASan/UBSan) and of the graph guide's
# example program; TAP on stdout.  Installed by libnpu/Makefile with the
# binaries' paths filled in.
#
#   1. Every ONNX backend node test of Debian's libonnx-testdata runs
#      through npu-run on the CPU fallback and is compared with its
#      expected outputs (rtol 1e-3, atol 1e-5; integers exact).  A model
#      the importer refuses (exit 3: an op or type libnpu has no op for)
#      is a SKIP with npu-run's message; the tests in MUST_PASS may not
#      be skipped.  A mismatch, a crash or a sanitizer report fails.
#      (Refusals are sorted out by an unsanitized build, as ASan's start-up
#      cost on ~900 models dominates; the importer's error paths run
#      sanitized in test-onnx-import and under the fuzzer.)
#   2. npu-run's options: --output-dir writes .npy files that --expect
#      reads back, --iterations and --profile print their reports, bad
#      arguments exit 2.
#   3. Documentation/graph.rst's example program runs and checks itself.
set -uo pipefail
NPU_RUN=@NPU_RUN@
# the same tool without sanitizers, to sort out unsupported models quickly
NPU_RUN_FAST=@NPU_RUN_FAST@
GRAPH_EXAMPLE=@GRAPH_EXAMPLE@
ONNX_DATA=${ONNX_DATA:-/usr/share/libonnx-testdata/data/node}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Node tests of the ops libnpu has, which must import and match.
MUST_PASS="test_add test_add_bcast test_add_uint8 test_averagepool_2d_default
test_averagepool_2d_pads test_averagepool_2d_pads_count_include_pad
test_averagepool_2d_precomputed_pads
test_averagepool_2d_precomputed_pads_count_include_pad
test_averagepool_2d_precomputed_same_upper test_averagepool_2d_precomputed_strides
test_averagepool_2d_same_lower test_averagepool_2d_same_upper test_averagepool_2d_strides
test_basic_conv_with_padding test_basic_conv_without_padding test_clip_default_inbounds
test_constant test_conv_with_autopad_same test_conv_with_strides_and_asymmetric_padding
test_conv_with_strides_no_padding test_conv_with_strides_padding test_dropout_default
test_flatten_axis0 test_flatten_axis1 test_flatten_axis2 test_flatten_axis3
test_flatten_default_axis test_flatten_negative_axis1 test_gemm_default_matrix_bias
test_gemm_default_no_bias test_gemm_default_scalar_bias
test_gemm_default_single_elem_vector_bias test_gemm_default_vector_bias
test_gemm_default_zero_bias test_gemm_transposeA test_gemm_transposeB test_identity
test_leakyrelu test_leakyrelu_default test_leakyrelu_example test_matmul_2d
test_matmul_3d test_matmul_4d test_maxpool_2d_default test_maxpool_2d_dilations
test_maxpool_2d_pads test_maxpool_2d_precomputed_pads
test_maxpool_2d_precomputed_same_upper test_maxpool_2d_precomputed_strides
test_maxpool_2d_same_lower test_maxpool_2d_same_upper test_maxpool_2d_strides test_mul
test_mul_bcast test_mul_example test_mul_uint8 test_relu test_sigmoid
test_sigmoid_example test_softmax_axis_0 test_softmax_axis_1 test_softmax_axis_2
test_softmax_default_axis test_softmax_example test_softmax_large_number
test_softmax_negative_axis test_sub test_sub_bcast test_sub_example test_sub_uint8
test_tanh test_tanh_example test_unsqueeze_axis_3 test_hardswish test_hardswish_expanded"

n=0
fails=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
notok() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "not ok $n - $1"
}
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}
must() {
	case " $(echo $MUST_PASS) " in *" $1 "*) return 0 ;; esac
	return 1
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# 1. Node tests
if [ -d "$ONNX_DATA" ]; then
	passed=0 skipped=0
	for dir in "$ONNX_DATA"/test_*; do
		t=$(basename "$dir")
		[ -f "$dir/model.onnx" ] && [ -d "$dir/test_data_set_0" ] || continue
		args=()
		for f in "$dir"/test_data_set_0/input_*.pb; do
			[ -f "$f" ] && args+=(--input "$f")
		done
		for f in "$dir"/test_data_set_0/output_*.pb; do
			[ -f "$f" ] && args+=(--expect "$f")
		done
		# What the fast build refuses as unsupported is skipped unless
		# it must pass; everything it runs is run again sanitized.
		out=$("$NPU_RUN_FAST" "$dir/model.onnx" "${args[@]}" --quiet 2>&1)
		rc=$?
		if [ $rc != 3 ] || must "$t"; then
			out=$("$NPU_RUN" "$dir/model.onnx" "${args[@]}" --quiet 2>&1)
			rc=$?
		fi
		if [ $rc = 0 ]; then
			ok "node $t"
			passed=$((passed + 1))
		elif [ $rc = 3 ] && ! must "$t" && ! grep -q -E 'Sanitizer|runtime error' <<<"$out"; then
			skip "node $t" "$(tail -1 <<<"$out" | sed 's/^npu-run: [^:]*: //' | cut -c1-160)"
			skipped=$((skipped + 1))
		else
			notok "node $t (exit $rc)"
			sed 's/^/#   /' <<<"$out" | head -20
		fi
	done
	echo "# node tests: $passed passed, $skipped skipped"
else
	skip "node tests" "no $ONNX_DATA"
fi

# 2. Options
dir=$ONNX_DATA/test_conv_with_strides_padding
if [ -d "$dir" ]; then
	if "$NPU_RUN" "$dir/model.onnx" --input "x=$dir/test_data_set_0/input_0.pb" \
		--input "W=$dir/test_data_set_0/input_1.pb" --output-dir "$scratch/out" \
		--iterations 3 --profile >"$scratch/log" 2>&1 &&
		[ -f "$scratch/out/y.npy" ] &&
		grep -q '^latency: median .* over 3 runs' "$scratch/log" &&
		grep -q '^split: 1 of 1 nodes on the device\|^split: 0 of 1 nodes on the device' "$scratch/log"; then
		ok "npu-run --output-dir --iterations --profile"
	else
		notok "npu-run --output-dir --iterations --profile"
		sed 's/^/#   /' "$scratch/log"
	fi
	if "$NPU_RUN" "$dir/model.onnx" --cpu --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --expect "y=$scratch/out/y.npy" \
		--expect "$dir/test_data_set_0/output_0.pb" --atol 0 --rtol 0 >"$scratch/log" 2>&1; then
		ok "npu-run --expect reads back its own .npy output exactly"
	else
		notok "npu-run --expect reads back its own .npy output exactly"
		sed 's/^/#   /' "$scratch/log"
	fi
	# a wrong expectation is a mismatch (exit 1), not a pass
	if "$NPU_RUN" "$dir/model.onnx" --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" \
		--expect "$dir/test_data_set_0/input_0.pb" >"$scratch/log" 2>&1; then
		notok "npu-run fails a wrong --expect"
	else
		ok "npu-run fails a wrong --expect"
	fi
fi
"$NPU_RUN" >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run without a model exits 2" || notok "npu-run without a model exits 2"
"$NPU_RUN" /nonexistent.onnx >/dev/null 2>&1
[ $? = 3 ] && ok "npu-run on a missing file exits 3" || notok "npu-run on a missing file exits 3"
"$NPU_RUN" "$dir/model.onnx" --shape x=1xq >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run rejects a bad --shape" || notok "npu-run rejects a bad --shape"

# 3. The guide's example
if out=$("$GRAPH_EXAMPLE" 2>&1); then
	ok "Documentation/graph.rst example: $(tail -1 <<<"$out")"
else
	notok "Documentation/graph.rst example"
	sed 's/^/#   /' <<<"$out"
fi

echo "1..$n"
[ $fails = 0 ]
