#!/bin/sh
# npu-run on the device: ONNX node tests (the copy tests/onnx puts into
# ./onnx-data/node) imported, compiled for the NPU, run and compared with their
# expected outputs; the ops must run on the device, as --profile shows.
# Data movement (Transpose ... Resize) runs as COPY and RESIZE commands.
n=0
fail=0
tap() {	# tap OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
# tests/onnx puts onnx-data into every test initramfs: without it, or
# without a test named here, the guest was built wrong, which fails.
if [ ! -d onnx-data ]; then
	echo "not ok 1 - no onnx-data in the guest (tests/onnx installs it)"
	echo "1..1"
	exit 1
fi
for t in test_conv_with_strides_padding test_basic_conv_with_padding \
	 test_gemm_default_vector_bias test_gemm_transposeB test_matmul_3d \
	 test_maxpool_2d_pads test_averagepool_2d_pads test_softmax_axis_1 \
	 test_relu test_add_bcast test_sigmoid \
	 test_transpose_all_permutations_3 test_concat_3d_axis_1 test_slice test_slice_neg_steps \
	 test_split_variable_parts_2d test_edge_pad test_reflect_pad test_expand_dim_changed \
	 test_tile test_depthtospace_crd_mode test_spacetodepth test_cast_FLOAT_to_FLOAT16 \
	 test_resize_upsample_sizes_nearest test_resize_downsample_sizes_linear_pytorch_half_pixel \
	 test_resize_upsample_sizes_cubic; do
	d=onnx-data/node/$t
	if [ ! -f "$d/model.onnx" ]; then
		tap 0 "npu-run $t: not in the guest's onnx-data"
		continue
	fi
	args=""
	for f in "$d"/test_data_set_0/input_*.pb; do args="$args --input $f"; done
	for f in "$d"/test_data_set_0/output_*.pb; do args="$args --expect $f"; done
	# shellcheck disable=SC2086
	out=$(./npu-run "$d/model.onnx" $args --profile 2>&1)
	rc=$?
	if [ $rc = 0 ] && echo "$out" | grep -q 'on the NPU' &&
	   echo "$out" | grep -q '^split: \([1-9][0-9]*\) of \1 nodes on the device'; then
		tap 1 "npu-run $t: matches, all nodes on the device"
	else
		tap 0 "npu-run $t (exit $rc)"
	fi
	echo "$out" | sed 's/^/# /'
done
out=$(./npu-run onnx-data/node/test_relu/model.onnx --input onnx-data/node/test_relu/test_data_set_0/input_0.pb \
	--iterations 20 2>&1)
echo "$out" | grep -q '^latency: median .* over 20 runs' && tap 1 "npu-run --iterations 20" ||
	tap 0 "npu-run --iterations 20"
echo "$out" | sed 's/^/# /'
out=$(./npu-run onnx-data/node/test_relu/model.onnx --cpu \
	--input onnx-data/node/test_relu/test_data_set_0/input_0.pb \
	--expect onnx-data/node/test_relu/test_data_set_0/output_0.pb 2>&1)
[ $? = 0 ] && echo "$out" | grep -q 'on the CPU' && tap 1 "npu-run --cpu in the guest" ||
	tap 0 "npu-run --cpu in the guest"
echo "1..$n"
exit $fail
