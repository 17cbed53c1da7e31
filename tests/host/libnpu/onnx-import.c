// SPDX-License-Identifier: MIT
/*
 * The ONNX importer against models built here with protobuf-c: a small
 * Conv -> Relu -> Flatten -> Gemm network run end to end, dynamic
 * dimensions, constant shape arithmetic, and hostile files (truncated,
 * wrong types, cycles, dangling names, huge dims, unsupported ops), each
 * of which must fail with a message naming the culprit.
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
#include "npu/onnx.h"
#include "onnx.pb-c.h"

#include "onnx-build.h"

/* ---- Tests -------------------------------------------------------------------- */

/* x[N,1,4,4] -> Conv(2 filters 3x3, pad 1) -> Relu -> Flatten -> Gemm(32->3) */
static void build_net(struct mb *b, float *w, float *bias, float *fc, float *fcb)
{
	static const int64_t dx[4] = { -1, 1, 4, 4 }, dw[4] = { 2, 1, 3, 3 }, db[1] = { 2 },
		dfc[2] = { 3, 32 }, dfb[1] = { 3 };

	for (int i = 0; i < 18; i++)
		w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
	bias[0] = 0.25f;
	bias[1] = -0.5f;
	for (int i = 0; i < 96; i++)
		fc[i] = (float)((i * 5) % 13 - 6) / 16.0f;
	for (int i = 0; i < 3; i++)
		fcb[i] = (float)i - 1.0f;
	input(b, "x", 4, dx);
	init_f(b, "w", 4, dw, w, 18);
	init_f(b, "b", 1, db, bias, 2);
	init_f(b, "fc", 2, dfc, fc, 96);
	init_f(b, "fcb", 1, dfb, fcb, 3);
	nodef(b, "Conv", "conv", "x,w,b", "c", "pads=ints:1,1,1,1", "kernel_shape=ints:3,3",
	      (const char *)NULL);
	nodef(b, "Relu", "relu", "c", "r", (const char *)NULL);
	nodef(b, "Flatten", "flat", "r", "f", (const char *)NULL);
	nodef(b, "Gemm", "fc", "f,fc,fcb", "y", "transB=i:1", (const char *)NULL);
	output(b, "y");
}

static void test_net(void **state)
{
	static const struct npu_onnx_shape sh = { .name = "x", .rank = 4, .dims = { 2, 1, 4, 4 } };
	struct npu_onnx_options o = { .shapes = &sh, .num_shapes = 1 };
	float w[18], bias[2], fc[96], fcb[3], x[32], y[6], want[6], r[2][32];
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct npu_runtime *rt;
	struct mb b;
	int n, co, oy, ox, k;

	(void)state;
	mb_init(&b, 13);
	build_net(&b, w, bias, fc, fcb);
	/* dynamic N without a shape is an error naming the input */
	m = load(&b, NULL, -EINVAL, "input 'x': dimension 0 is dynamic ('N')");
	m = load(&b, &o, 0, NULL);
	assert_int_equal(npu_onnx_num_inputs(m), 1);
	assert_int_equal(npu_onnx_num_outputs(m), 1);
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	assert_string_equal(io.name, "y");
	assert_int_equal(io.rank, 2);
	assert_int_equal(io.dims[0], 2);
	assert_int_equal(io.dims[1], 3);
	assert_int_equal(npu_onnx_opset(m), 13);

	for (k = 0; k < 32; k++)
		x[k] = (float)(k % 9) / 4.0f - 1.0f;
	for (n = 0; n < 2; n++) {
		for (co = 0; co < 2; co++)
			for (oy = 0; oy < 4; oy++)
				for (ox = 0; ox < 4; ox++) {
					float a = bias[co];

					for (k = 0; k < 9; k++) {
						int iy = oy + k / 3 - 1, ix = ox + k % 3 - 1;

						if (iy >= 0 && iy < 4 && ix >= 0 && ix < 4)
							a += x[n * 16 + iy * 4 + ix] * w[co * 9 + k];
					}
					r[n][co * 16 + oy * 4 + ox] = a > 0 ? a : 0;
				}
		for (co = 0; co < 3; co++) {
			float a = fcb[co];

			for (k = 0; k < 32; k++)
				a += r[n][k] * fc[co * 32 + k];
			want[n * 3 + co] = a;
		}
	}
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	{
		struct npu_onnx_io ii;

		npu_onnx_input(m, 0, &ii);
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ ii.value, io.value },
						   (void *[]){ x, y }), 0);
	}
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	for (k = 0; k < 6; k++)
		assert_true(fabsf(y[k] - want[k]) < 1e-4f);
	npu_runtime_free(rt);
	npu_onnx_free(m);
	mb_free(&b);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, all folded at import. */
static void test_shape_arith(void **state)
{
	static const int64_t dx[3] = { 2, 3, 4 }, idx0[1] = { 0 }, minus1[1] = { -1 },
		ax0[1] = { 0 };
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 3, dx);
	init_i64(&b, "i0", idx0, 1);
	init_i64(&b, "m1", minus1, 1);
	init_i64(&b, "axes", ax0, 1);
	nodef(&b, "Shape", "shape", "x", "s", (const char *)NULL);
	nodef(&b, "Gather", "g", "s,i0", "n", (const char *)NULL);
	nodef(&b, "Concat", "cat", "n,m1", "newshape", "axis=i:0", (const char *)NULL);
	nodef(&b, "Reshape", "rs", "x,newshape", "y", (const char *)NULL);
	output(&b, "y");
	m = load(&b, NULL, 0, NULL);
	npu_onnx_output(m, 0, &io);
	assert_int_equal(io.rank, 2);
	assert_int_equal(io.dims[0], 2);
	assert_int_equal(io.dims[1], 12);
	npu_onnx_free(m);
	mb_free(&b);
}

/* Gemm's alpha scales a private copy of B: a MatMul sharing B sees it unscaled. */
static void test_gemm_alpha_shared(void **state)
{
	static const int64_t dx[2] = { 1, 2 }, dk[2] = { 2, 2 };
	float x[2] = { 1, 2 }, y1[2], y2[2];
	struct npu_onnx_model *m;
	struct npu_onnx_io io[3];
	struct npu_runtime *rt;
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, dx);
	init_f(&b, "k", 2, dk, (float[]){ 1, 2, 3, 4 }, 4);
	nodef(&b, "Gemm", "scaled", "x,k", "y1", "alpha=f:2", (const char *)NULL);
	nodef(&b, "MatMul", "plain", "x,k", "y2", (const char *)NULL);
	output(&b, "y1");
	output(&b, "y2");
	m = load(&b, NULL, 0, NULL);
	npu_onnx_input(m, 0, &io[0]);
	npu_onnx_output(m, 0, &io[1]);
	npu_onnx_output(m, 1, &io[2]);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, 3, (uint32_t[]){ io[0].value, io[1].value,
		io[2].value }, (void *[]){ x, y1, y2 }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_true(y2[0] == 7 && y2[1] == 10);
	assert_true(y1[0] == 14 && y1[1] == 20);
	npu_runtime_free(rt);
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * Data movement: each op once with the output shape its constant
 * attributes and inputs imply, and once with something it must refuse,
 * saying why.  (Values are checked by npu-run's node tests.)
 */
struct move_case {
	const char *op, *ins, *outs;
	const char *attr;		/* one attribute spec or NULL */
	const char *k1, *k2;		/* int64 initializers "a", "b": "v,v,..." */
	int want_rank;			/* output 0; 0: an error */
	int64_t want[6];
	const char *msg;
};

static size_t parse_i64s(const char *s, int64_t *v)
{
	size_t n = 0;
	char *dup = strdup(s), *tok;

	assert_non_null(dup);
	for (tok = strtok(dup, ","); tok && n < 8; tok = strtok(NULL, ","))
		v[n++] = strtoll(tok, NULL, 0);
	free(dup);
	return n;
}

static void test_data_movement(void **state)
{
	static const struct move_case cases[] = {
		{ "Transpose", "x", "y", "perm=ints:0,2,3,1", NULL, NULL, 4, { 2, 4, 4, 3 }, NULL },
		{ "Transpose", "x", "y", "perm=ints:0,0,1,2", NULL, NULL, 0, { 0 }, "is not a permutation" },
		{ "Concat", "x,x", "y", "axis=i:1", NULL, NULL, 4, { 2, 6, 4, 4 }, NULL },
		{ "Concat", "x,a", "y", "axis=i:1", "1,2", NULL, 0, { 0 }, "input 1 is int64, input 0 is float32" },
		/* more inputs than a graph node takes (it overran a stack array) */
		{ "Concat", "x,x,x,x,x,x,x,x,x,x,x,x", "y", "axis=i:1", NULL, NULL, 4, { 2, 36, 4, 4 }, NULL },
		{ "Slice", "x,a,b,k", "y", NULL, "1", "100", 4, { 2, 3, 3, 4 }, NULL },
		{ "Slice", "x,a,b,k,s", "y", NULL, "0", "4", 4, { 2, 3, 2, 4 }, NULL },
		{ "Slice", "x,a,b,k,z", "y", NULL, "0", "4", 0, { 0 }, "steps[0] is 0" },
		{ "Slice", "x,a,b,k", "y", NULL, "9", "100", 4, { 2, 3, 0, 4 }, NULL },
		{ "Pad", "x,a", "y", NULL, "0,0,1,-1,0,0,2,0", NULL, 4, { 2, 3, 7, 3 }, NULL },
		{ "Pad", "x,a", "y", NULL, "0,0,-4,0,0,0,2,0", NULL, 4, { 2, 3, 2, 4 }, NULL },
		{ "Pad", "x,a", "y", NULL, "0,0,0x10000000000,0,0,0,0,0", NULL, 0, { 0 },
		  "leave no output, or too much" },
		{ "Pad", "x,a", "y", NULL, "1,2", NULL, 0, { 0 }, "pads has 2 values, 8 were expected" },
		{ "Expand", "x,a", "y", NULL, "3,1,1,1,1", NULL, 5, { 3, 2, 3, 4, 4 }, NULL },
		{ "Expand", "x,a", "y", NULL, "5", NULL, 0, { 0 }, "does not broadcast" },
		{ "Tile", "x,a", "y", NULL, "1,2,1,3", NULL, 4, { 2, 6, 4, 12 }, NULL },
		{ "Tile", "x,a", "y", NULL, "1,0x10000000000,1,1", NULL, 0, { 0 }, "is not within [1, 4294967295]" },
		{ "SpaceToDepth", "x", "y", "blocksize=i:2", NULL, NULL, 4, { 2, 12, 2, 2 }, NULL },
		{ "SpaceToDepth", "x", "y", "blocksize=i:3", NULL, NULL, 0, { 0 }, "multiples" },
		{ "DepthToSpace", "x", "y", "blocksize=i:2", NULL, NULL, 0, { 0 }, "blocksize^2" },
		{ "Resize", "x,-,-,a", "y", NULL, "2,3,8,6", NULL, 4, { 2, 3, 8, 6 }, NULL },
		{ "Resize", "x,-,-,a", "y", NULL, "4,3,8,6", NULL, 4, { 4, 3, 8, 6 }, NULL },
		{ "Resize", "x", "y", NULL, NULL, NULL, 0, { 0 }, "one of scales and sizes is required" },
		{ "Split", "x,a", "y,z", "axis=i:2", "1,3", NULL, 4, { 2, 3, 1, 4 }, NULL },
		{ "Split", "x,a", "y,z", "axis=i:2", "1,4", NULL, 0, { 0 }, "split sums to 5" },
		{ "Cast", "x", "y", "to=i:10", NULL, NULL, 4, { 2, 3, 4, 4 }, NULL },
		{ "Cast", "x", "y", "to=i:7", NULL, NULL, 4, { 2, 3, 4, 4 }, NULL },
	};
	static const int64_t dx[4] = { 2, 3, 4, 4 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct move_case *c = &cases[i];
		struct npu_onnx_model *m;
		struct npu_onnx_io io;
		int64_t v[8];
		struct mb b;
		int k;

		mb_init(&b, 13);
		input(&b, "x", 4, dx);
		if (c->k1)
			init_i64(&b, "a", v, parse_i64s(c->k1, v));
		if (c->k2)
			init_i64(&b, "b", v, parse_i64s(c->k2, v));
		if (!strcmp(c->op, "Slice")) {
			init_i64(&b, "k", (const int64_t[]){ 2 }, 1);
			init_i64(&b, "s", (const int64_t[]){ 2 }, 1);
			init_i64(&b, "z", (const int64_t[]){ 0 }, 1);
		}
		nodef(&b, c->op, "mv", c->ins, c->outs, c->attr, (const char *)NULL);
		output(&b, "y");
		if (strchr(c->outs, ','))
			output(&b, "z");
		m = load(&b, NULL, c->want_rank ? 0 : -EINVAL, c->msg);
		if (c->want_rank) {
			assert_int_equal(npu_onnx_output(m, 0, &io), 0);
			if ((int)io.rank != c->want_rank)
				fail_msg("%s: rank %u, want %d", c->op, io.rank, c->want_rank);
			for (k = 0; k < c->want_rank; k++)
				if (io.dims[k] != c->want[k])
					fail_msg("%s: dim %d is %u, want %lld", c->op, k, io.dims[k],
						 (long long)c->want[k]);
			npu_onnx_free(m);
		}
		mb_free(&b);
	}
}

/*
 * A constant reshaped while its symbol's storage grows: the importer's
 * symbol table moved on growth, and the Reshape then copied the freed
 * constant (ASan: heap-use-after-free).  k Split outputs bring the table
 * to each size around its first growths.
 */
static void test_sym_table_growth(void **state)
{
	static const int64_t dx[1] = { 2 };
	int64_t sizes[64];
	float data[64];
	char outs[64 * 8];
	size_t k, i, len;

	(void)state;
	for (i = 0; i < 64; i++)
		data[i] = (float)i;
	for (k = 2; k <= 64; k++) {
		struct npu_onnx_model *m;
		struct mb b;

		mb_init(&b, 13);
		input(&b, "x", 1, dx);
		init_f(&b, "c", 1, (const int64_t[]){ 64 }, data, 64);
		for (i = 0; i < k; i++)
			sizes[i] = i + 1 < k ? 1 : 64 - (int64_t)(k - 1);
		init_i64(&b, "sizes", sizes, k);
		init_i64(&b, "shape", (const int64_t[]){ 1, -1 }, 2);
		for (i = 0, len = 0; i < k; i++)
			len += (size_t)snprintf(outs + len, sizeof(outs) - len, "%sp%zu", i ? "," : "", i);
		nodef(&b, "Split", "split", "c,sizes", outs, "axis=i:0", (const char *)NULL);
		nodef(&b, "Reshape", "reshape", "p0,shape", "y", (const char *)NULL);
		output(&b, "y");
		m = load(&b, NULL, 0, NULL);
		npu_onnx_free(m);
		mb_free(&b);
	}
}

/*
 * A scalar float16 output: computed in float32 (onnx_fp16.c), rounded
 * back through shape [1] (oi_convert_value()), which handed the scalar's
 * reshape a NULL dims pointer (UBSan; found by fuzz-onnx).
 */
static void test_fp16_scalar_output(void **state)
{
	static const int64_t dx[2] = { 2, 3 };
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	b.ins[b.g.n_input++] = vinfo(&b, "x", 10, 2, dx);
	nodef(&b, "ReduceMax", "max", "x", "y", "keepdims=i:0", (const char *)NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "y", 10, 0, NULL);
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	assert_int_equal(io.dtype, NPU_DTYPE_FP16);
	assert_int_equal(io.rank, 0);
	npu_onnx_free(m);
	mb_free(&b);
}

static void test_hostile(void **state)
{
	static const int64_t d2[2] = { 2, 3 }, huge[2] = { 1ll << 40, 3 };
	struct npu_onnx_model *m = NULL;
	char err[256];
	uint8_t *buf;
	size_t len, cut;
	struct mb b;

	(void)state;
	/* truncation at every length: an error or (rarely) a valid prefix */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	buf = pack(&b, &len);
	for (cut = 0; cut < len; cut++) {
		int ret = npu_onnx_load(buf, cut, NULL, &m, err, sizeof(err));

		assert_true(ret < 0);
		assert_true(err[0] != 0);
	}
	assert_int_equal(npu_onnx_load(buf, len, NULL, &m, err, sizeof(err)), 0);
	npu_onnx_free(m);
	/* garbage bytes */
	memset(buf, 0xff, len);
	assert_int_equal(npu_onnx_load(buf, len, NULL, &m, err, sizeof(err)), -EBADMSG);
	free(buf);
	mb_free(&b);

	/* an unsupported op names node and op */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "NonZero", "nz", "x", "y", (const char *)NULL);
	output(&b, "y");
	/* a data-dependent shape of a runtime input */
	load(&b, NULL, -EINVAL,
	     "node 'nz' (NonZero): the output shape depends on the input's values, which must be constant");
	mb_free(&b);

	/* a cycle */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "Add", "a1", "x,q", "p", (const char *)NULL);
	nodef(&b, "Relu", "a2", "p", "q", (const char *)NULL);
	output(&b, "q");
	load(&b, NULL, -ELOOP, "cycle");
	mb_free(&b);

	/* a dangling name */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "Add", "adder", "x,nowhere", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "'nowhere'");
	mb_free(&b);

	/* a name defined twice */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r1", "x", "y", (const char *)NULL);
	nodef(&b, "Relu", "r2", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "defined twice");
	mb_free(&b);

	/* a huge dimension, and an output nobody computes */
	mb_init(&b, 13);
	input(&b, "x", 2, huge);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "bad dimension");
	mb_free(&b);
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	output(&b, "nothing");
	load(&b, NULL, -EINVAL, "'nothing'");
	mb_free(&b);

	/* a ConstantOfShape of 2^60 elements */
	{
		static const int64_t big[3] = { 1 << 20, 1 << 20, 1 << 20 };

		mb_init(&b, 13);
		input(&b, "x", 2, d2);
		init_i64(&b, "shape", big, 3);
		nodef(&b, "ConstantOfShape", "cos", "shape", "k", (const char *)NULL);
		nodef(&b, "Add", "add", "x,k", "y", (const char *)NULL);
		output(&b, "y");
		load(&b, NULL, -E2BIG, "(npu_onnx_options.max_const_bytes)");
		mb_free(&b);
	}

	/* wrong types: an initializer whose data does not match its dims */
	{
		static const int64_t d4[1] = { 4 };

		mb_init(&b, 13);
		input(&b, "x", 2, d2);
		init_f(&b, "k", 1, d4, (float[]){ 1, 2, 3, 4 }, 3);
		nodef(&b, "Add", "add", "x,k", "y", (const char *)NULL);
		output(&b, "y");
		load(&b, NULL, -EINVAL, "initializer 'k'");
		mb_free(&b);
	}

	/* an opset out of range; an old one in range */
	mb_init(&b, 19);
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -ENOTSUP, "opset 19 is not supported (1 to 18)");
	mb_free(&b);
	mb_init(&b, 3);
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	npu_onnx_free(load(&b, NULL, 0, NULL));
	mb_free(&b);
	/*
	 * No default-domain import: a node of ONNX's own is refused by name,
	 * not as "opset -1" (a model of other domains' ops only is legal)
	 */
	mb_init(&b, 13);
	b.os.domain = "com.example";
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r", "x", "t", (const char *)NULL);
	nodef(&b, "Relu", "r2", "t", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL,
	     "node 'r' (Relu): op of the default ONNX domain, which the model does not import "
	     "(its opset_import has no '' or 'ai.onnx' entry); also node 'r2' (Relu): op of the "
	     "default ONNX domain, which the model does not import");
	mb_free(&b);
	mb_init(&b, 13);
	b.os.has_version = 0;
	input(&b, "x", 2, d2);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "the model's opset_import for the default domain has no version");
	mb_free(&b);
	/* an op the registry knows from opset 7 on, in a model of opset 6 */
	mb_init(&b, 6);
	input(&b, "x", 2, d2);
	nodef(&b, "Add", "a", "x,x", "t", (const char *)NULL);
	nodef(&b, "Sub", "s", "t,x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL,
	     "node 'a' (Add): op not supported by libnpu at opset 6 (its lowering starts at opset 7); "
	     "also node 's' (Sub): op not supported by libnpu at opset 6 (its lowering starts at opset 7)");
	mb_free(&b);

	/* an optional output is fine while nobody reads it */
	mb_init(&b, 13);
	input(&b, "x", 2, d2);
	nodef(&b, "Dropout", "drop", "x", "y,mask", (const char *)NULL);
	output(&b, "y");
	npu_onnx_free(load(&b, NULL, 0, NULL));
	/* read, the mask comes from Dropout's kernel: all ones in inference */
	output(&b, "mask");
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_num_outputs(m), 2);
	npu_onnx_free(m);
	mb_free(&b);

	assert_int_equal(npu_onnx_load(NULL, 0, NULL, NULL, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net),
		cmocka_unit_test(test_shape_arith),
		cmocka_unit_test(test_gemm_alpha_shared),
		cmocka_unit_test(test_data_movement),
		cmocka_unit_test(test_sym_table_growth),
		cmocka_unit_test(test_fp16_scalar_output),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests_name("onnx-import", tests, NULL, NULL);
}
