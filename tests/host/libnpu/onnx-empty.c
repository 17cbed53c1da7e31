// SPDX-License-Identifier: MIT
/*
 * Empty tensors (a dimension of 0, as ONNX allows): empty graph inputs
 * and constants, ops whose output is empty, empty parts mixed with ones
 * that are not, through import, compile and run on the CPU path.  An
 * empty result is known without running anything; every other result is
 * checked against plain loops.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "npu/onnx.h"
#include "onnx-build.h"
#include "onnx.pb-c.h"

/* A float initializer with a 0 among its dimensions: no data at all. */
static void init_empty_f(struct mb *b, const char *name, int rank, const int64_t *dims)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = 1;
	t->n_dims = (size_t)rank;
	t->dims = keep(b, calloc((size_t)rank, 8));
	memcpy(t->dims, dims, 8ull * (size_t)rank);
	b->inits[b->g.n_initializer++] = t;
}

/* Output @name's index, failing the test without one. */
static size_t out_index(const struct npu_onnx_model *m, const char *name)
{
	struct npu_onnx_io io;
	size_t i;

	for (i = 0; i < npu_onnx_num_outputs(m); i++)
		if (!npu_onnx_output(m, i, &io) && !strcmp(io.name, name))
			return i;
	fail_msg("no output '%s'", name);
	return 0;
}

/*
 * Compile @m for the CPU, bind @in to its inputs in order and run; each
 * output gets a buffer of its bytes (plus one, so an empty one is not
 * NULL) in @out, which the caller frees.
 */
static struct npu_runtime *run(struct npu_onnx_model *m, void *const *in, void **out)
{
	size_t ni = npu_onnx_num_inputs(m), no = npu_onnx_num_outputs(m), i;
	uint32_t ids[16];
	void *data[16];
	struct npu_runtime *rt = NULL;

	assert_true(ni + no <= 16);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	for (i = 0; i < ni; i++) {
		struct npu_onnx_io io;

		assert_int_equal(npu_onnx_input(m, i, &io), 0);
		ids[i] = io.value;
		data[i] = in[i];
	}
	for (i = 0; i < no; i++) {
		struct npu_onnx_io io;

		assert_int_equal(npu_onnx_output(m, i, &io), 0);
		out[i] = calloc(1, npu_runtime_value_bytes(rt, io.value) + 1);
		assert_non_null(out[i]);
		ids[ni + i] = io.value;
		data[ni + i] = out[i];
	}
	assert_int_equal(npu_runtime_setup(rt, ni + no, ids, data), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	return rt;
}

/* Output @name has shape @dims (@rank) and, in @rt, @bytes bytes. */
static void check_out(const struct npu_onnx_model *m, const struct npu_runtime *rt,
		      const char *name, uint32_t rank, const uint32_t *dims, uint64_t bytes)
{
	struct npu_onnx_io io;
	uint32_t k;

	assert_int_equal(npu_onnx_output(m, out_index(m, name), &io), 0);
	assert_int_equal(io.rank, rank);
	for (k = 0; k < rank; k++)
		assert_int_equal(io.dims[k], dims[k]);
	assert_int_equal(npu_runtime_value_bytes(rt, io.value), bytes);
}

static void free_outs(struct npu_onnx_model *m, void **out)
{
	size_t i;

	for (i = 0; i < npu_onnx_num_outputs(m); i++)
		free(out[i]);
}

static float relu(float v)
{
	return v > 0 ? v : 0;
}

static const float x6[6] = { -1.5f, 2.0f, 0.25f, -3.0f, 4.5f, 0.0f };

/*
 * An empty graph input e [0, 3] (a batch of 0) beside x [2, 3]: Concat
 * skips it, an elementwise op on it is empty, a sum over its empty axis
 * is 0 (not empty), and its shape is a constant.
 */
static void test_empty_input(void **state)
{
	static const int64_t dx[2] = { 2, 3 }, de[2] = { 0, 3 }, ax0[1] = { 0 };
	static const uint32_t d23[2] = { 2, 3 }, d03[2] = { 0, 3 }, d13[2] = { 1, 3 },
		d2[1] = { 2 };
	float none[1] = { 0 };
	void *out[8];
	float *y, *s;
	int64_t *shape;
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct npu_runtime *rt;
	struct mb b;
	int k;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, dx);
	input(&b, "e", 2, de);
	init_i64(&b, "ax0", ax0, 1);
	nodef(&b, "Concat", NULL, "e,x,e", "c", "axis=i:0", (const char *)NULL);
	nodef(&b, "Relu", NULL, "c", "y", (const char *)NULL);
	nodef(&b, "Relu", NULL, "e", "ye", (const char *)NULL);
	nodef(&b, "ReduceSum", NULL, "e,ax0", "s", "keepdims=i:1", (const char *)NULL);
	nodef(&b, "Shape", NULL, "e", "se", (const char *)NULL);
	output(&b, "y");
	output(&b, "ye");
	output(&b, "s");
	output(&b, "se");
	m = load(&b, NULL, 0, NULL);
	assert_non_null(m);
	/* the empty input stays an input the caller binds, not a fixed value */
	assert_int_equal(npu_onnx_num_inputs(m), 2);
	assert_int_equal(npu_onnx_input(m, 1, &io), 0);
	assert_string_equal(io.name, "e");
	assert_int_equal(io.rank, 2);
	assert_int_equal(io.dims[0], 0);
	assert_int_equal(npu_onnx_input_fixed(m, 1), 0);
	rt = run(m, (void *[]){ (void *)x6, none }, out);
	check_out(m, rt, "y", 2, d23, sizeof(x6));
	check_out(m, rt, "ye", 2, d03, 0);
	check_out(m, rt, "s", 2, d13, 3 * sizeof(float));
	check_out(m, rt, "se", 1, d2, 2 * sizeof(int64_t));
	y = out[out_index(m, "y")];
	s = out[out_index(m, "s")];
	shape = out[out_index(m, "se")];
	for (k = 0; k < 6; k++)
		assert_true(y[k] == relu(x6[k]));
	for (k = 0; k < 3; k++)
		assert_true(s[k] == 0.0f);
	assert_int_equal(shape[0], 0);
	assert_int_equal(shape[1], 3);
	npu_runtime_free(rt);
	free_outs(m, out);
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * An empty initializer k [2, 0] concatenated to x [2, 3] along axis 1,
 * and ConstantOfShape of shape [0]: an empty output of a constant.
 */
static void test_empty_constant(void **state)
{
	static const int64_t dx[2] = { 2, 3 }, dk[2] = { 2, 0 }, zero[1] = { 0 };
	static const uint32_t d23[2] = { 2, 3 }, d0[1] = { 0 };
	void *out[8];
	float *y;
	struct npu_onnx_model *m;
	struct npu_runtime *rt;
	struct mb b;
	int k;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, dx);
	init_empty_f(&b, "k", 2, dk);
	init_i64(&b, "zero", zero, 1);
	nodef(&b, "Concat", NULL, "k,x,k", "c", "axis=i:1", (const char *)NULL);
	nodef(&b, "Neg", NULL, "c", "y", (const char *)NULL);
	nodef(&b, "ConstantOfShape", NULL, "zero", "z", (const char *)NULL);
	output(&b, "y");
	output(&b, "z");
	m = load(&b, NULL, 0, NULL);
	assert_non_null(m);
	rt = run(m, (void *[]){ (void *)x6 }, out);
	check_out(m, rt, "y", 2, d23, sizeof(x6));
	check_out(m, rt, "z", 1, d0, 0);
	y = out[out_index(m, "y")];
	for (k = 0; k < 6; k++)
		assert_true(y[k] == -x6[k]);
	npu_runtime_free(rt);
	free_outs(m, out);
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * Ops that make an empty result of x [2, 3], which is not empty: a Slice
 * past the end, a Split with a part of 0 (its other part is all of x),
 * a Reshape with allowzero of the Slice.
 */
static void test_empty_result(void **state)
{
	static const int64_t dx[2] = { 2, 3 }, st[1] = { 5 }, en[1] = { 9 }, ax[1] = { 0 },
		split[2] = { 0, 2 }, shp[3] = { 3, 0, 1 };
	static const uint32_t d03[2] = { 0, 3 }, d23[2] = { 2, 3 }, d301[3] = { 3, 0, 1 };
	void *out[8];
	float *y;
	struct npu_onnx_model *m;
	struct npu_runtime *rt;
	struct mb b;
	int k;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, dx);
	init_i64(&b, "st", st, 1);
	init_i64(&b, "en", en, 1);
	init_i64(&b, "ax", ax, 1);
	init_i64(&b, "split", split, 2);
	init_i64(&b, "shp", shp, 3);
	nodef(&b, "Slice", NULL, "x,st,en,ax", "sl", (const char *)NULL);
	nodef(&b, "Split", NULL, "x,split", "a,bb", "axis=i:0", (const char *)NULL);
	nodef(&b, "Relu", NULL, "bb", "y", (const char *)NULL);
	nodef(&b, "Reshape", NULL, "sl,shp", "r", "allowzero=i:1", (const char *)NULL);
	output(&b, "sl");
	output(&b, "a");
	output(&b, "y");
	output(&b, "r");
	m = load(&b, NULL, 0, NULL);
	assert_non_null(m);
	rt = run(m, (void *[]){ (void *)x6 }, out);
	check_out(m, rt, "sl", 2, d03, 0);
	check_out(m, rt, "a", 2, d03, 0);
	check_out(m, rt, "y", 2, d23, sizeof(x6));
	check_out(m, rt, "r", 3, d301, 0);
	y = out[out_index(m, "y")];
	for (k = 0; k < 6; k++)
		assert_true(y[k] == relu(x6[k]));
	npu_runtime_free(rt);
	free_outs(m, out);
	npu_onnx_free(m);
	mb_free(&b);

	/* ONNX: a -1 cannot be inferred beside an allowzero 0 */
	mb_init(&b, 14);
	input(&b, "x", 2, dx);
	init_i64(&b, "shp", (const int64_t[]){ 0, -1 }, 2);
	nodef(&b, "Reshape", NULL, "x,shp", "r", "allowzero=i:1", (const char *)NULL);
	output(&b, "r");
	load(&b, NULL, -EINVAL, "(Reshape): a -1 beside a 0 that allowzero keeps cannot be inferred");
	mb_free(&b);
}

/*
 * The graph API: a node whose output is empty is compiled to nothing (no
 * op, no segment) and a run binds and copies nothing.
 */
static void test_graph_empty_node(void **state)
{
	struct npu_op_params relu_op = { .size = sizeof(relu_op), .kind = NPU_OP_ACTIVATION,
					 .act = NPU_ACT_RELU };
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	struct npu_node_desc nd = NPU_NODE_DESC_INIT;
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
	struct npu_runtime *rt = NULL;
	struct npu_graph *g;
	uint32_t vx, vy;
	size_t ndev = 1;
	char dummy[1];

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	d.name = "x";
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 2;
	d.dims[0] = 0;
	d.dims[1] = 4;
	d.flags = NPU_VALUE_INPUT;
	assert_int_equal(npu_graph_add_value(g, &d, &vx), 0);
	d.name = "y";
	d.flags = NPU_VALUE_OUTPUT;
	assert_int_equal(npu_graph_add_value(g, &d, &vy), 0);
	nd.name = "relu";
	nd.kind = NPU_NODE_OP;
	nd.op = &relu_op;
	nd.num_inputs = 1;
	nd.inputs = &vx;
	nd.output = vy;
	assert_int_equal(npu_graph_add_node(g, &nd, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_value_bytes(rt, vx), 0);
	assert_int_equal(npu_runtime_value_bytes(rt, vy), 0);
	assert_int_equal(npu_runtime_num_segments(rt, &ndev), 0);
	assert_int_equal(ndev, 0);
	assert_int_equal(npu_runtime_node_profile(rt, 0, &p), 0);
	assert_int_equal(p.where, NPU_WHERE_ELIDED);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ dummy, dummy }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
	npu_graph_free(g);
}

/* A TensorProto of shape [0, 3] (a test_data_set's .pb) loads as empty. */
static void test_tensor_file(void **state)
{
	Onnx__TensorProto t;
	struct npu_onnx_tensor nt;
	int64_t dims[2] = { 0, 3 };
	uint8_t buf[64];
	size_t len;
	char err[256];

	(void)state;
	onnx__tensor_proto__init(&t);
	t.name = "e";
	t.has_data_type = 1;
	t.data_type = 1;
	t.n_dims = 2;
	t.dims = dims;
	len = onnx__tensor_proto__get_packed_size(&t);
	assert_true(len <= sizeof(buf));
	onnx__tensor_proto__pack(&t, buf);
	assert_int_equal(npu_onnx_tensor_load(buf, len, &nt, err, sizeof(err)), 0);
	assert_string_equal(nt.name, "e");
	assert_int_equal(nt.rank, 2);
	assert_int_equal(nt.dims[0], 0);
	assert_int_equal(nt.dims[1], 3);
	assert_int_equal(nt.bytes, 0);
	assert_non_null(nt.data);
	npu_onnx_tensor_free(&nt);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_input),
		cmocka_unit_test(test_empty_constant),
		cmocka_unit_test(test_empty_result),
		cmocka_unit_test(test_graph_empty_node),
		cmocka_unit_test(test_tensor_file),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-empty", tests, NULL, NULL);
}
