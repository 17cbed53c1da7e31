#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host tests of npu-run (built with ASan/UBSan) and of the graph guide's
# example program; TAP on stdout.  Installed by libnpu/Makefile with the
# binaries' paths filled in.
#
#   1. Every ONNX backend node test of Debian's libonnx-testdata runs
#      through npu-run on the CPU fallback and is compared with its
#      expected outputs (rtol 1e-3, atol 1e-5; integers exact).  Every
#      node test is in the coverage target: one the importer refuses
#      (exit 3: an op or type libnpu has no op for) fails, unless it is
#      listed with its reason in onnx-node-xfail.txt (next to this
#      script; $ONNX_NODE_XFAIL overrides), and then it is an expected
#      failure, "not ok ... # TODO reason".  A listed test that passes
#      fails until its line is deleted, so the list only shrinks; a listed
#      test must still be refused the same way (exit 3), not fail another.
#      The tests in MUST_PASS may not be listed.  A mismatch, a crash or a
#      sanitizer report fails.  (Refusals are sorted out by an unsanitized
#      build, as ASan's start-up cost on ~900 models dominates; the
#      importer's error paths run sanitized in test-onnx-import and under
#      the fuzzer.)
#   2. npu-run's options: --output-dir writes .npy files (creating the
#      directory's parents) that --expect reads back, --iterations and
#      --profile print their reports (no p99 below 100 runs); int64, bool
#      and float64 outputs match the ONNX tests' expected .pb and make a
#      round trip through .npy; which inputs are constants of the model
#      (int64 and bool; --const, --runtime; inputs the importer fixes to
#      their values); the exit statuses of Documentation/npu-run.rst: a
#      wrong --expect is a mismatch (exit 1, with npu-run's message, never
#      a crash), bad arguments exit 2, a missing model 3.
#   3. Documentation/graph.rst's example program runs and checks itself.
#   4. The real models (Documentation/models.rst; `make models` puts them
#      in $VNPU_CACHE/models) run through npu-run on the CPU fallback and
#      vnpu-models holds the outputs against onnxruntime's (its tolerance,
#      and for BlazeFace the face found).  Every model must run: a refusal
#      fails like any other error, and so does a missing model directory
#      (check-host fetches them first: make models).
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
test_tanh test_tanh_example test_unsqueeze_axis_3 test_hardswish test_hardswish_expanded
test_transpose_default test_transpose_all_permutations_0 test_transpose_all_permutations_1
test_transpose_all_permutations_2 test_transpose_all_permutations_3
test_transpose_all_permutations_4 test_transpose_all_permutations_5
test_concat_1d_axis_0 test_concat_2d_axis_1 test_concat_3d_axis_2 test_concat_3d_axis_negative_3
test_slice test_slice_default_axes test_slice_default_steps test_slice_end_out_of_bounds
test_slice_neg test_slice_negative_axes test_slice_neg_steps test_split_equal_parts_1d test_split_equal_parts_2d
test_split_equal_parts_default_axis test_split_variable_parts_1d test_split_variable_parts_2d
test_split_variable_parts_default_axis test_edge_pad test_reflect_pad test_expand_dim_changed
test_expand_dim_unchanged test_tile test_tile_precomputed test_depthtospace_crd_mode
test_depthtospace_dcr_mode test_depthtospace_example test_spacetodepth test_spacetodepth_example
test_cast_FLOAT16_to_FLOAT test_cast_FLOAT_to_FLOAT16 test_resize_downsample_sizes_cubic
test_resize_downsample_sizes_linear_pytorch_half_pixel test_resize_downsample_sizes_nearest
test_resize_upsample_sizes_cubic test_resize_upsample_sizes_nearest
test_resize_upsample_sizes_nearest_ceil_half_pixel
test_resize_upsample_sizes_nearest_floor_align_corners
test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric
test_convtranspose test_convtranspose_autopad_same test_convtranspose_dilations
test_convtranspose_kernel_shape test_convtranspose_output_shape test_convtranspose_pad
test_convtranspose_pads test_convtranspose_with_kernel test_reduce_mean_keepdims_example
test_reduce_mean_do_not_keepdims_example test_reduce_mean_default_axes_keepdims_example
test_reduce_mean_negative_axes_keepdims_example test_reduce_sum_keepdims_example
test_reduce_sum_empty_axes_input_noop_example test_reduce_max_keepdims_example
test_reduce_min_keepdims_example test_reduce_l2_keep_dims_example
test_reduce_sum_square_keepdims_example test_div test_div_bcast test_pow test_pow_bcast_array
test_pow_bcast_scalar test_pow_types_float32_int64 test_max_example test_max_two_inputs
test_max_one_input test_min_example test_min_two_inputs test_sqrt test_reciprocal test_exp
test_log test_abs test_neg"

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
todo() {
	n=$((n + 1))
	echo "not ok $n - $1 # TODO $2"
}
must() {
	case " $(echo $MUST_PASS) " in *" $1 "*) return 0 ;; esac
	return 1
}

# The expected failures: "test_name<TAB>npu-run's refusal", one a line.
XFAIL=${ONNX_NODE_XFAIL:-${VNPU_TOP:-.}/tests/host/libnpu/onnx-node-xfail.txt}
declare -A xfail=()
if [ -f "$XFAIL" ]; then
	while IFS=$'\t' read -r name why; do
		case $name in '' | '#'*) continue ;; esac
		xfail[$name]=${why:-"(no reason in $(basename "$XFAIL"))"}
	done <"$XFAIL"
else
	notok "expected-failure list $XFAIL exists"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# 1. Node tests
if [ -d "$ONNX_DATA" ]; then
	passed=0 expected=0
	declare -A seen=()
	for dir in "$ONNX_DATA"/test_*; do
		t=$(basename "$dir")
		[ -f "$dir/model.onnx" ] && [ -d "$dir/test_data_set_0" ] || continue
		seen[$t]=1
		listed=${xfail[$t]+1}
		args=()
		for f in "$dir"/test_data_set_0/input_*.pb; do
			[ -f "$f" ] && args+=(--input "$f")
		done
		for f in "$dir"/test_data_set_0/output_*.pb; do
			[ -f "$f" ] && args+=(--expect "$f")
		done
		# A listed test the fast build refuses stays an expected
		# failure; everything else is run again sanitized.
		out=$("$NPU_RUN_FAST" "$dir/model.onnx" "${args[@]}" --quiet 2>&1)
		rc=$?
		if [ $rc != 3 ] || [ -z "$listed" ] || must "$t"; then
			out=$("$NPU_RUN" "$dir/model.onnx" "${args[@]}" --quiet 2>&1)
			rc=$?
		fi
		refusal=$(tail -1 <<<"$out" | sed 's/^npu-run: [^:]*: //' | cut -c1-160)
		if [ -n "$listed" ] && must "$t"; then
			notok "node $t: in MUST_PASS and in $(basename "$XFAIL"): delete its line there"
		elif [ $rc = 0 ] && [ -n "$listed" ]; then
			notok "node $t: passes, but $(basename "$XFAIL") expects it to fail: delete its line there"
		elif [ $rc = 0 ]; then
			ok "node $t"
			passed=$((passed + 1))
		elif [ $rc = 3 ] && ! grep -q -E 'Sanitizer|runtime error' <<<"$out"; then
			if [ -n "$listed" ]; then
				todo "node $t" "${xfail[$t]}"
				expected=$((expected + 1))
			else
				notok "node $t: refused by the importer: $refusal (not in $(basename "$XFAIL"))"
			fi
		else
			notok "node $t (exit $rc)"
			sed 's/^/#   /' <<<"$out" | head -20
		fi
	done
	stale=
	for t in "${!xfail[@]}"; do
		[ -n "${seen[$t]+1}" ] || stale="$stale $t"
	done
	if [ -z "$stale" ]; then
		ok "every test in $(basename "$XFAIL") is a node test in $ONNX_DATA"
	else
		notok "$(basename "$XFAIL") names tests that are not in $ONNX_DATA:$stale"
	fi
	echo "# node tests: $passed passed, $expected expected failures ($(basename "$XFAIL"))"
else
	notok "node tests: no $ONNX_DATA (Debian's libonnx-testdata; make deps installs it)"
fi

# 2. Options
dir=$ONNX_DATA/test_conv_with_strides_padding
if [ -d "$dir" ]; then
	if "$NPU_RUN" "$dir/model.onnx" --input "x=$dir/test_data_set_0/input_0.pb" \
		--input "W=$dir/test_data_set_0/input_1.pb" --output-dir "$scratch/out" \
		--iterations 3 --profile >"$scratch/log" 2>&1 &&
		[ -f "$scratch/out/y.npy" ] &&
		grep -q '^latency: median .*, max .* over 3 runs (no p99 below 100 runs)$' "$scratch/log" &&
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
	# A wrong expectation is a mismatch: exit 1 with npu-run's message
	# (Documentation/npu-run.rst), not any failure (a crash is not one).
	# First an expectation of the wrong shape (the input for the output)...
	"$NPU_RUN" "$dir/model.onnx" --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" \
		--expect "$dir/test_data_set_0/input_0.pb" >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "^npu-run: --expect .*input_0.pb: shape or dtype differs from output 'y' (float32 \[1,1,4,3\], not float32 \[1,1,7,5\])$" \
		"$scratch/log" && ! grep -q -E 'Sanitizer|runtime error' "$scratch/log"; then
		ok "npu-run fails a wrong --expect: exit 1, shape differs"
	else
		notok "npu-run fails a wrong --expect: exit $rc, want 1 and \"shape or dtype differs\""
		sed 's/^/#   /' "$scratch/log"
	fi
	# ... then its own output with the last element changed to 1e6.
	cp "$scratch/out/y.npy" "$scratch/wrong.npy" 2>/dev/null &&
		printf '\000\044\164\111' | dd of="$scratch/wrong.npy" bs=1 conv=notrunc status=none \
			seek=$(($(stat -c %s "$scratch/wrong.npy") - 4))
	"$NPU_RUN" "$dir/model.onnx" --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --expect "y=$scratch/wrong.npy" \
		>"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q '^output y: MISMATCH, max abs diff .* (1 of 12 elements beyond tolerance)$' \
		"$scratch/log" && ! grep -q -E 'Sanitizer|runtime error' "$scratch/log"; then
		ok "npu-run fails a wrong --expect: exit 1, one element beyond tolerance"
	else
		notok "npu-run fails a wrong --expect value: exit $rc, want 1 and 1 of 12 elements MISMATCH"
		sed 's/^/#   /' "$scratch/log"
	fi
	# --output-dir creates its parents; p99 from 100 runs on
	"$NPU_RUN" "$dir/model.onnx" --cpu --input "$dir/test_data_set_0/input_0.pb" \
		--input "$dir/test_data_set_0/input_1.pb" --output-dir "$scratch/deep/a/b" \
		--iterations 100 --quiet >"$scratch/log" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ -f "$scratch/deep/a/b/y.npy" ] &&
		grep -q '^latency: median .* ms, min .* ms, p99 .* ms over 100 runs$' "$scratch/log"; then
		ok "npu-run --output-dir a/b creates a and b; p99 over 100 runs"
	else
		notok "npu-run --output-dir a/b (exit $rc) or p99 over 100 runs"
		sed 's/^/#   /' "$scratch/log"
	fi
else
	notok "npu-run options: no $dir"
fi

# Outputs of host-only dtypes against the ONNX tests' expected .pb, then
# as .npy (numpy's descr) read back by --expect: an I/O check only, the
# .pb is the oracle.
for spec in test_argmax_default_axis_example:result:'<i8' test_equal:z:'|b1' \
	test_cast_FLOAT_to_DOUBLE:output:'<f8' test_mod_mixed_sign_int16:z:'<i2' \
	test_max_uint64:result:'<u8'; do
	t=${spec%%:*} rest=${spec#*:}
	out=${rest%%:*} descr=${rest#*:}
	d=$ONNX_DATA/$t
	args=()
	for f in "$d"/test_data_set_0/input_*.pb; do args+=(--input "$f"); done
	if "$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$d/test_data_set_0/output_0.pb" \
		--output-dir "$scratch/$t" >"$scratch/log" 2>&1 &&
		head -c 128 "$scratch/$t/$out.npy" | grep -q -F "{'descr': '$descr'" &&
		"$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$out=$scratch/$t/$out.npy" \
			--atol 0 --rtol 0 >>"$scratch/log" 2>&1; then
		ok "npu-run $t: $descr output matches the ONNX test and its .npy reads back"
	else
		notok "npu-run $t: $descr output against the ONNX test and through .npy"
		sed 's/^/#   /' "$scratch/log"
	fi
done
# A float64 .npy as an input: the float32 -> float64 cast's output fed to
# the float64 -> float32 cast gives back the first cast's input exactly.
d=$ONNX_DATA/test_cast_DOUBLE_to_FLOAT
if "$NPU_RUN" "$d/model.onnx" --cpu --input "input=$scratch/test_cast_FLOAT_to_DOUBLE/output.npy" \
	--expect "$ONNX_DATA/test_cast_FLOAT_to_DOUBLE/test_data_set_0/input_0.pb" --atol 0 --rtol 0 \
	>"$scratch/log" 2>&1; then
	ok "npu-run takes a float64 .npy input"
else
	notok "npu-run takes a float64 .npy input"
	sed 's/^/#   /' "$scratch/log"
fi

# Constants of the model: an int64 input is one (Gather's indices
# folded with --const data), --runtime keeps it an input (the Gather a
# CPU kernel), and a Reshape whose shape --runtime keeps an input is
# refused (exit 3) with the importer's reason.  Resize's float scales
# are an input the importer fixes to its value, and npu-run says so.
d=$ONNX_DATA/test_gather_0
gargs=(--input "$d/test_data_set_0/input_0.pb" --input "$d/test_data_set_0/input_1.pb"
	--expect "$d/test_data_set_0/output_0.pb" --cpu --profile)
if "$NPU_RUN" "$d/model.onnx" "${gargs[@]}" --const data >"$scratch/log" 2>&1 &&
	grep -q '^split: 0 of 0 nodes' "$scratch/log" &&
	"$NPU_RUN" "$d/model.onnx" "${gargs[@]}" --runtime indices >"$scratch/log" 2>&1 &&
	grep -q '^0 .* Gather .* cpu ' "$scratch/log"; then
	ok "npu-run --const folds Gather, --runtime keeps its int64 indices an input"
else
	notok "npu-run --const and --runtime on Gather"
	sed 's/^/#   /' "$scratch/log"
fi
d=$ONNX_DATA/test_reshape_reordered_all_dims
"$NPU_RUN" "$d/model.onnx" --cpu --input "$d/test_data_set_0/input_0.pb" \
	--input "$d/test_data_set_0/input_1.pb" --runtime shape >"$scratch/log" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "node 'reshaped' (Reshape): .*constant" "$scratch/log"; then
	ok "npu-run --runtime on Reshape's shape: refused, exit 3"
else
	notok "npu-run --runtime on Reshape's shape: exit $rc, want 3 and a constant asked for"
	sed 's/^/#   /' "$scratch/log"
fi
d=$ONNX_DATA/test_resize_upsample_scales_nearest
args=()
for f in "$d"/test_data_set_0/input_*.pb; do args+=(--input "$f"); done
if "$NPU_RUN" "$d/model.onnx" --cpu "${args[@]}" --expect "$d/test_data_set_0/output_0.pb" \
	>"$scratch/log" 2>&1 && grep -q "^input 'scales' is fixed to its value" "$scratch/log"; then
	ok "npu-run fixes Resize's float scales input to its value"
else
	notok "npu-run Resize with float scales as an input"
	sed 's/^/#   /' "$scratch/log"
fi
"$NPU_RUN" >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run without a model exits 2" || notok "npu-run without a model exits 2"
"$NPU_RUN" /nonexistent.onnx >/dev/null 2>&1
[ $? = 3 ] && ok "npu-run on a missing file exits 3" || notok "npu-run on a missing file exits 3"
"$NPU_RUN" "$dir/model.onnx" --shape x=1xq >/dev/null 2>&1
[ $? = 2 ] && ok "npu-run rejects a bad --shape" || notok "npu-run rejects a bad --shape"

# --timeout and the CPU path's limits (issue 20): a one-node MaxPool model
# written by gen-pool-onnx.py (no onnx module needed).  A 4096 x 4096
# window over 64 channels (2^30 taps, seconds on the CPU) stops at
# --timeout 0.05 with exit 4 naming the node; a 65535 x 65535 window is
# refused by the CPU path's work limit with exit 3.
GEN_POOL=${VNPU_TOP:-.}/tests/host/libnpu/gen-pool-onnx.py
if python3 "$GEN_POOL" 4096 "$scratch/long.onnx" "$scratch/pool-x.npy" &&
	python3 "$GEN_POOL" 65535 "$scratch/huge.onnx" "$scratch/pool-x.npy"; then
	out=$("$NPU_RUN" "$scratch/long.onnx" --cpu --input "$scratch/pool-x.npy" --timeout 0.05 2>&1)
	rc=$?
	if [ $rc = 4 ] && grep -q "timed out after 0.050 s: node 'pool' (POOL2D) on the CPU: .*stopped at the deadline" <<<"$out"; then
		ok "npu-run --timeout stops a long CPU run: exit 4, names the node"
	else
		notok "npu-run --timeout: exit $rc, want 4 naming node 'pool'"
		sed 's/^/#   /' <<<"$out"
	fi
	out=$("$NPU_RUN" "$scratch/huge.onnx" --cpu --input "$scratch/pool-x.npy" 2>&1)
	rc=$?
	if [ $rc = 3 ] && grep -q "node 'pool' (POOL2D) on the CPU: POOL2D: 274869518400 work units exceed the CPU path's limit of 4294967296" <<<"$out"; then
		ok "npu-run refuses a node beyond the CPU path's work limit: exit 3"
	else
		notok "npu-run CPU work limit: exit $rc, want 3 and the limit named"
		sed 's/^/#   /' <<<"$out"
	fi
else
	notok "gen-pool-onnx.py could not write the MaxPool models"
fi

# 3. The guide's example
if out=$("$GRAPH_EXAMPLE" 2>&1); then
	ok "Documentation/graph.rst example: $(tail -1 <<<"$out")"
else
	notok "Documentation/graph.rst example"
	sed 's/^/#   /' <<<"$out"
fi

# 4. Real models
MODELS=${VNPU_MODELS:-${VNPU_CACHE:-$HOME/.cache/vnpu}/models}
VNPU_MODELS_TOOL=${VNPU_MODELS_TOOL:-${VNPU_BUILD:-${VNPU_CACHE:-$HOME/.cache/vnpu}/build}/tests/models/bin/vnpu-models}
if [ -d "$MODELS/ref" ] && [ -x "$VNPU_MODELS_TOOL" ]; then
	for spec in blazeface-front:blazeface/face_detection_front_128x128_barracuda:128 \
		    blazeface-back:blazeface/face_detection_back_256x256_barracuda:256 \
		    ppocr-cls:ppocr/ch_ppocr_mobile_v2.0_cls_infer: \
		    ppocr-det:ppocr/ch_PP-OCRv4_det_infer: \
		    ppocr-rec:ppocr/ch_PP-OCRv4_rec_infer:; do
		name=${spec%%:*}
		rest=${spec#*:}
		model=$MODELS/${rest%%:*}.onnx
		size=${rest#*:}
		ref=$MODELS/ref/$name
		out=$scratch/$name
		args=()
		for f in "$ref"/in/*.npy; do
			args+=(--input "$(basename "$f" .npy)=$f")
		done
		# BlazeFace sanitized; PP-OCR's GMACs on the reference ops would
		# take minutes under ASan, so it runs the unsanitized build.
		run=$NPU_RUN
		[ "${name#ppocr}" != "$name" ] && run=$NPU_RUN_FAST
		log=$("$run" "$model" "${args[@]}" --output-dir "$out" --quiet 2>&1)
		rc=$?
		if [ $rc != 0 ]; then
			notok "model $name: npu-run (exit $rc)"
			sed 's/^/#   /' <<<"$log" | head -20
			continue
		fi
		good=1
		if [ -n "$size" ]; then
			chk=$("$VNPU_MODELS_TOOL" blazeface-check "$MODELS/images/astronaut.png" "$size" \
				"$out" "$ref/out" 2>&1) || good=0
		else
			chk=
			for f in "$ref"/out/*.npy; do
				chk+=$("$VNPU_MODELS_TOOL" compare "$out/$(basename "$f")" "$f" 2>&1) ||
					good=0
				chk+=$'\n'
			done
		fi
		if [ $good = 1 ]; then
			ok "model $name on the CPU fallback matches onnxruntime"
		else
			notok "model $name on the CPU fallback against onnxruntime"
		fi
		sed 's/^/#   /' <<<"$chk"
	done
else
	notok "real models: no $MODELS/ref or $VNPU_MODELS_TOOL (make models; check-host does it)"
fi

echo "1..$n"
[ $fails = 0 ]
