// SPDX-License-Identifier: MIT
/*
 * ONNX sequences, which import resolves into the tensors they hold
 * (libnpu/onnx/onnx_seq.c): models built here, run on the CPU and
 * compared with the tensors picked by hand; and the refusals, each naming
 * the node and why (runtime positions, positions out of range, tensors of
 * mixed types, sequences where a tensor belongs).
 */
#include <errno.h>
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

/* A scalar int32 (@dt 6) or int64 (@dt 7) initializer. */
static void init_scalar(struct mb *b, const char *name, int dt, int64_t v)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = dt;
	if (dt == 6) {
		t->n_int32_data = 1;
		t->int32_data = keep(b, calloc(1, 4));
		t->int32_data[0] = (int32_t)v;
	} else {
		t->n_int64_data = 1;
		t->int64_data = keep(b, calloc(1, 8));
		t->int64_data[0] = v;
	}
	b->inits[b->g.n_initializer++] = t;
}

/* Compile for the CPU, bind inputs then outputs in order, run. */
static void run(struct npu_onnx_model *m, void *const *in, void *const *out)
{
	size_t ni = npu_onnx_num_inputs(m), no = npu_onnx_num_outputs(m), i;
	struct npu_runtime *rt = NULL;
	uint32_t ids[8];
	void *data[8];

	assert_true(ni + no <= 8);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	for (i = 0; i < ni + no; i++) {
		struct npu_onnx_io io;

		if (i < ni)
			assert_int_equal(npu_onnx_input(m, i, &io), 0);
		else
			assert_int_equal(npu_onnx_output(m, i - ni, &io), 0);
		ids[i] = io.value;
		data[i] = i < ni ? in[i] : out[i - ni];
	}
	assert_int_equal(npu_runtime_setup(rt, ni + no, ids, data), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
}

static void expect_shape(struct npu_onnx_model *m, size_t out, uint32_t rank, const uint32_t *dims)
{
	struct npu_onnx_io io;
	uint32_t k;

	assert_int_equal(npu_onnx_output(m, out, &io), 0);
	assert_int_equal(io.rank, rank);
	for (k = 0; k < rank; k++)
		assert_int_equal(io.dims[k], dims[k]);
}

static const int64_t d23[2] = { 2, 3 }, d43[2] = { 4, 3 };

/*
 * [x, y] with z inserted before the last (-1, an int32 position), the
 * first erased: [z, y]; its last tensor is y, its length 2, and the
 * tensors stacked along a new last axis [2, 3, 2] interleave z and y.
 */
static void test_construct_insert_erase(void **state)
{
	static const uint32_t dstack[3] = { 2, 3, 2 };
	float x[6], y[6], z[6], a[6], st[12];
	int64_t n = -1;
	struct npu_onnx_model *m;
	struct mb b;
	int k;

	(void)state;
	for (k = 0; k < 6; k++) {
		x[k] = (float)k;
		y[k] = 10.0f + (float)k;
		z[k] = -1.0f - (float)k;
	}
	mb_init(&b, 13);
	input(&b, "x", 2, d23);
	input(&b, "y", 2, d23);
	input(&b, "z", 2, d23);
	init_scalar(&b, "minus1", 6, -1);
	init_scalar(&b, "zero", 7, 0);
	nodef(&b, "SequenceConstruct", "make", "x,y", "s1", (const char *)NULL);
	nodef(&b, "SequenceInsert", "ins", "s1,z,minus1", "s2", (const char *)NULL);
	nodef(&b, "SequenceErase", "erase", "s2,zero", "s3", (const char *)NULL);
	nodef(&b, "SequenceAt", "at", "s3,minus1", "a", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s3", "n", (const char *)NULL);
	nodef(&b, "ConcatFromSequence", "stack", "s3", "st", "axis=i:-1", "new_axis=i:1",
	      (const char *)NULL);
	output(&b, "a");
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	output(&b, "st");
	m = load(&b, NULL, 0, NULL);
	expect_shape(m, 0, 2, (const uint32_t[]){ 2, 3 });
	expect_shape(m, 1, 0, NULL);
	expect_shape(m, 2, 3, dstack);
	run(m, (void *[]){ x, y, z }, (void *[]){ a, &n, st });
	assert_memory_equal(a, y, sizeof(y));
	assert_int_equal(n, 2);
	for (k = 0; k < 6; k++) {
		assert_true(st[2 * k] == z[k]);
		assert_true(st[2 * k + 1] == y[k]);
	}
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * x [4, 3] split along axis 1 without keepdims: three columns of [4],
 * concatenated along axis 0 ([12], x transposed); by a scalar split of 3
 * along axis 0: [3, 3] and [1, 3], the second x's last row; by sizes
 * [1, 3]: its length 2.
 */
static void test_split_concat(void **state)
{
	static const uint32_t d12[1] = { 12 }, d13[2] = { 1, 3 };
	static const int64_t sizes[2] = { 1, 3 };
	float x[12], t[12], last[3];
	int64_t n = -1;
	struct npu_onnx_model *m;
	struct mb b;
	int r, c;

	(void)state;
	for (r = 0; r < 12; r++)
		x[r] = (float)(r * 7 % 5) - 1.5f;
	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	init_scalar(&b, "three", 7, 3);
	init_scalar(&b, "one", 7, 1);
	init_i64(&b, "sizes", sizes, 2);
	nodef(&b, "SplitToSequence", "cols", "x", "sc", "axis=i:1", "keepdims=i:0",
	      (const char *)NULL);
	nodef(&b, "ConcatFromSequence", "cat", "sc", "t", "axis=i:0", (const char *)NULL);
	nodef(&b, "SplitToSequence", "rows", "x,three", "sr", (const char *)NULL);
	nodef(&b, "SequenceAt", "at", "sr,one", "last", (const char *)NULL);
	nodef(&b, "SplitToSequence", "parts", "x,sizes", "sp", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "sp", "n", (const char *)NULL);
	output(&b, "t");
	output(&b, "last");
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	m = load(&b, NULL, 0, NULL);
	expect_shape(m, 0, 1, d12);
	expect_shape(m, 1, 2, d13);
	run(m, (void *[]){ x }, (void *[]){ t, last, &n });
	for (c = 0; c < 3; c++)
		for (r = 0; r < 4; r++)
			assert_true(t[c * 4 + r] == x[r * 3 + c]);
	assert_memory_equal(last, x + 9, sizeof(last));
	assert_int_equal(n, 2);
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * keepdims=0 drops the split axis only, at opset 12 too (where Squeeze
 * takes its axes as an attribute): x [2, 1, 3] gives two [1, 3].
 */
static void test_split_keepdims_opset12(void **state)
{
	static const int64_t d213[3] = { 2, 1, 3 };
	static const uint32_t d13[2] = { 1, 3 };
	float x[6] = { 1, 2, 3, 4, 5, 6 }, a[3];
	struct npu_onnx_model *m;
	struct mb b;

	(void)state;
	mb_init(&b, 12);
	input(&b, "x", 3, d213);
	init_scalar(&b, "one", 7, 1);
	nodef(&b, "SplitToSequence", "rows", "x", "s", "keepdims=i:0", (const char *)NULL);
	nodef(&b, "SequenceAt", "at", "s,one", "a", (const char *)NULL);
	output(&b, "a");
	m = load(&b, NULL, 0, NULL);
	expect_shape(m, 0, 2, d13);
	run(m, (void *[]){ x }, (void *[]){ a });
	assert_memory_equal(a, x + 3, sizeof(a));
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * Split sizes that only a run tells: the length is known (the sizes'
 * shape), a tensor is not, and a runtime scalar split leaves the length
 * unknown too.
 */
static void test_runtime_split(void **state)
{
	static const int64_t d2[1] = { 2 };
	int64_t n = -1;
	float x[12] = { 0 };
	int64_t sizes[2] = { 1, 3 };
	struct npu_onnx_model *m;
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	b.ins[b.g.n_input++] = vinfo(&b, "sizes", 7, 1, d2);
	nodef(&b, "SplitToSequence", "parts", "x,sizes", "sp", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "sp", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	m = load(&b, NULL, 0, NULL);
	run(m, (void *[]){ x, sizes }, (void *[]){ &n });
	assert_int_equal(n, 2);
	npu_onnx_free(m);
	init_scalar(&b, "zero", 7, 0);
	nodef(&b, "SequenceAt", "at", "sp,zero", "a", (const char *)NULL);
	output(&b, "a");
	load(&b, NULL, -EINVAL,
	     "node 'at' (SequenceAt): tensor 0 of the sequence has a size only a run can tell (the split sizes 'sizes' are runtime data)");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	b.ins[b.g.n_input++] = vinfo(&b, "k", 7, 0, NULL);
	nodef(&b, "SplitToSequence", "parts", "x,k", "sp", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "sp", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'parts' (SplitToSequence): the split ('k') is a runtime scalar: how many tensors the sequence holds only a run can tell");
	mb_free(&b);
}

/* A two-tensor sequence "s" of x and y ([2, 3] float32), for the refusals. */
static void seq2(struct mb *b)
{
	mb_init(b, 13);
	input(b, "x", 2, d23);
	input(b, "y", 2, d23);
	nodef(b, "SequenceConstruct", "make", "x,y", "s", (const char *)NULL);
}

static void test_refused_positions(void **state)
{
	struct mb b;

	(void)state;
	/* a position only a run tells */
	seq2(&b);
	b.ins[b.g.n_input++] = vinfo(&b, "p", 7, 0, NULL);
	nodef(&b, "SequenceAt", "at", "s,p", "a", (const char *)NULL);
	output(&b, "a");
	load(&b, NULL, -EINVAL,
	     "node 'at' (SequenceAt): the position ('p') is runtime data: import resolves a sequence into its tensors, so the positions read from it must be constants");
	mb_free(&b);

	/* out of range, each op its own range */
	seq2(&b);
	init_scalar(&b, "two", 7, 2);
	nodef(&b, "SequenceAt", "at", "s,two", "a", (const char *)NULL);
	output(&b, "a");
	load(&b, NULL, -EINVAL,
	     "node 'at' (SequenceAt): position 2 is outside [-2, 1] for a sequence of 2 tensors");
	mb_free(&b);

	seq2(&b);
	init_scalar(&b, "m3", 6, -3);
	nodef(&b, "SequenceInsert", "ins", "s,x,m3", "s2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s2", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'ins' (SequenceInsert): position -3 is outside [-2, 2] for a sequence of 2 tensors");
	mb_free(&b);

	/* a float position, a 1-D one */
	seq2(&b);
	init_f(&b, "pf", 0, d23, (const float[]){ 0.0f }, 1);
	nodef(&b, "SequenceAt", "at", "s,pf", "a", (const char *)NULL);
	output(&b, "a");
	load(&b, NULL, -EINVAL, "node 'at' (SequenceAt): the position ('pf') is float32, not int32 or int64");
	mb_free(&b);

	seq2(&b);
	init_i64(&b, "p1", (const int64_t[]){ 0 }, 1);
	nodef(&b, "SequenceErase", "erase", "s,p1", "s2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s2", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL, "node 'erase' (SequenceErase): the position ('p1') has rank 1, not a scalar");
	mb_free(&b);

	/* nothing to erase */
	mb_init(&b, 13);
	nodef(&b, "SequenceEmpty", "empty", "", "s", (const char *)NULL);
	nodef(&b, "SequenceErase", "erase", "s", "s2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s2", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL, "node 'erase' (SequenceErase): the sequence is empty: there is no tensor to erase");
	mb_free(&b);
}

static void test_refused_types(void **state)
{
	static const int64_t one[1] = { 1 };
	struct mb b;

	(void)state;
	/* one type a sequence */
	mb_init(&b, 13);
	input(&b, "x", 2, d23);
	init_i64(&b, "i", one, 1);
	nodef(&b, "SequenceConstruct", "make", "x,i", "s", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'make' (SequenceConstruct): input 1 ('i') is int64, input 0 ('x') float32: a sequence's tensors have one type");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 2, d23);
	nodef(&b, "SequenceEmpty", "empty", "", "s", "dtype=i:7", (const char *)NULL);
	nodef(&b, "SequenceInsert", "ins", "s,x", "s2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s2", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'ins' (SequenceInsert): the tensor 'x' is float32, the sequence's tensors int64");
	mb_free(&b);

	/* a sequence where a tensor belongs, and the other way round */
	seq2(&b);
	nodef(&b, "Relu", "relu", "s", "r", (const char *)NULL);
	output(&b, "r");
	load(&b, NULL, -EINVAL,
	     "node 'relu' (Relu): input 's' is an ONNX sequence, which only the sequence ops take");
	mb_free(&b);

	seq2(&b);
	nodef(&b, "SequenceInsert", "ins", "s,s", "s2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "s2", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL, "node 'ins' (SequenceInsert): input 1 ('s') is a sequence, not a tensor");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 2, d23);
	nodef(&b, "SequenceLength", "len", "x", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL, "node 'len' (SequenceLength): input 0 ('x') is a tensor, not a sequence");
	mb_free(&b);

	/* a model's output */
	seq2(&b);
	output(&b, "s");
	load(&b, NULL, -EINVAL, "output 's' is an ONNX sequence, not a tensor");
	mb_free(&b);
}

/* What SplitToSequence and ConcatFromSequence refuse. */
static void test_refused_split_concat(void **state)
{
	static const int64_t bad[2] = { 1, 2 };
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	init_i64(&b, "sizes", bad, 2);
	nodef(&b, "SplitToSequence", "parts", "x,sizes", "sp", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "sp", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'parts' (SplitToSequence): the split sizes add up to 3, not dimension 0 (4) of input 'x'");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	nodef(&b, "SplitToSequence", "parts", "x", "sp", "axis=i:2", (const char *)NULL);
	nodef(&b, "SequenceLength", "len", "sp", "n", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "n", 7, 0, NULL);
	load(&b, NULL, -EINVAL,
	     "node 'parts' (SplitToSequence): axis 2 is outside [-2, 1] for input 'x' of rank 2");
	mb_free(&b);

	mb_init(&b, 13);
	nodef(&b, "SequenceEmpty", "empty", "", "s", (const char *)NULL);
	nodef(&b, "ConcatFromSequence", "cat", "s", "t", "axis=i:0", (const char *)NULL);
	output(&b, "t");
	load(&b, NULL, -EINVAL,
	     "node 'cat' (ConcatFromSequence): the sequence is empty: there is no tensor to concatenate");
	mb_free(&b);

	/* tensors Concat refuses: its reason, as this node's */
	mb_init(&b, 13);
	input(&b, "x", 2, d43);
	input(&b, "y", 2, d23);
	nodef(&b, "SequenceConstruct", "make", "x,y", "s", (const char *)NULL);
	nodef(&b, "ConcatFromSequence", "cat", "s", "t", "axis=i:1", (const char *)NULL);
	output(&b, "t");
	load(&b, NULL, -EINVAL, "node 'cat' (ConcatFromSequence): its Concat: ");
	mb_free(&b);

	seq2(&b);
	nodef(&b, "ConcatFromSequence", "cat", "s", "t", "axis=i:2", (const char *)NULL);
	output(&b, "t");
	load(&b, NULL, -EINVAL,
	     "node 'cat' (ConcatFromSequence): its Concat: axis 2 is outside [-2, 1] for rank-2 tensors");
	mb_free(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_construct_insert_erase),
		cmocka_unit_test(test_split_concat),
		cmocka_unit_test(test_split_keepdims_opset12),
		cmocka_unit_test(test_runtime_split),
		cmocka_unit_test(test_refused_positions),
		cmocka_unit_test(test_refused_types),
		cmocka_unit_test(test_refused_split_concat),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-seq", tests, NULL, NULL);
}
