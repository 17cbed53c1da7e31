// SPDX-License-Identifier: MIT
/*
 * The importer's budgets against hostile models of a few bytes to a few
 * megabytes, each built here: protobuf nesting that would overflow
 * protobuf-c's recursion, malformed wire data, encodings that unpack into
 * far more memory than they take, constant folding that would allocate
 * gigabytes or loop for hours, tensors of 2^32+ elements, integer
 * overflows in shape and constant arithmetic, and 100,000 chained nodes.
 * Each must end in the exact refusal (error code, and a message naming the
 * node, the op and the limit) or in the correct result.
 *
 * With ONNX_LIMITS_DUMP=<dir> every hostile model is also written there
 * (<test>.onnx), to measure npu-run's time and memory on it.
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
#include "npu/onnx.h"
#include "onnx-build.h"
#include "onnx.pb-c.h"

static void dump(const char *name, const void *data, size_t len)
{
	const char *dir = getenv("ONNX_LIMITS_DUMP");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.onnx", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* load() of onnx-build.c, dumping the model first. */
static struct npu_onnx_model *check(const char *name, struct mb *b,
				    const struct npu_onnx_options *o, int want,
				    const char *msg)
{
	size_t len;
	uint8_t *buf = pack(b, &len);

	dump(name, buf, len);
	free(buf);
	return load(b, o, want, msg);
}

/* Load raw bytes; expect @want and exactly @msg (or a message containing @part). */
static void load_raw(const char *name, const void *data, size_t len,
		     const struct npu_onnx_options *o, int want, const char *msg,
		     const char *part)
{
	struct npu_onnx_model *m = NULL;
	char err[512] = "";
	int ret;

	dump(name, data, len);
	ret = npu_onnx_load(data, len, o, &m, err, sizeof(err));
	if (ret != want)
		fail_msg("%s: load returned %d, want %d: %s", name, ret, want, err);
	if (msg && strcmp(err, msg))
		fail_msg("%s: message\n  '%s'\nwant\n  '%s'", name, err, msg);
	if (part && !strstr(err, part))
		fail_msg("%s: message '%s' lacks '%s'", name, err, part);
	npu_onnx_free(m);
}

/* ---- Raw protobuf, built back to front -------------------------------------- */

/*
 * A message grows at the front: what is already there is the content of
 * the message being built, so wrapping it into a field of its parent
 * prepends a tag and a length, and siblings are prepended before it.
 * Nesting a million levels this way takes linear time and no recursion
 * (protobuf-c's pack recurses as its unpack does).
 */
struct rev {
	uint8_t *buf;
	size_t cap, pos;
};

static void rev_init(struct rev *r, size_t cap)
{
	r->buf = malloc(cap);
	assert_non_null(r->buf);
	r->cap = r->pos = cap;
}

static void rev_bytes(struct rev *r, const void *p, size_t n)
{
	assert_true(n <= r->pos);
	r->pos -= n;
	memcpy(r->buf + r->pos, p, n);
}

static void rev_varint(struct rev *r, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	rev_bytes(r, b, n);
}

static size_t rev_len(const struct rev *r)
{
	return r->cap - r->pos;
}

/* Everything from @mark on becomes length-delimited field @field. */
static void rev_wrap(struct rev *r, size_t mark, uint32_t field)
{
	rev_varint(r, mark - r->pos);
	rev_varint(r, (uint64_t)field << 3 | 2);
}

static void rev_string(struct rev *r, uint32_t field, const char *s)
{
	size_t mark = r->pos;

	rev_bytes(r, s, strlen(s));
	rev_wrap(r, mark, field);
}

static void rev_int(struct rev *r, uint32_t field, uint64_t v)
{
	rev_varint(r, v);
	rev_varint(r, (uint64_t)field << 3);
}

static uint32_t field_id(const ProtobufCMessageDescriptor *d, const char *name)
{
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);

	assert_non_null(f);
	return f->id;
}

/* ModelProto fields around a GraphProto that starts at r->pos. */
static void rev_model(struct rev *r, size_t graph_end)
{
	size_t mark;

	rev_wrap(r, graph_end, field_id(&onnx__model_proto__descriptor, "graph"));
	mark = r->pos;
	rev_int(r, field_id(&onnx__operator_set_id_proto__descriptor, "version"), 13);
	rev_wrap(r, mark, field_id(&onnx__model_proto__descriptor, "opset_import"));
	rev_int(r, field_id(&onnx__model_proto__descriptor, "ir_version"), 8);
}

/*
 * A model whose graph input 'x' has a TypeProto @levels sequences deep:
 * ModelProto, GraphProto, ValueInfoProto, then TypeProto and
 * TypeProto.Sequence alternating, 4 + 2 * @levels messages deep.
 */
static void deep_type(struct rev *r, size_t levels)
{
	uint32_t seq = field_id(&onnx__type_proto__descriptor, "sequence_type");
	uint32_t elem = field_id(&onnx__type_proto__sequence__descriptor, "elem_type");
	size_t end, i;

	rev_init(r, 16 * levels + 256);
	end = r->pos;
	for (i = 0; i < levels; i++) {
		rev_wrap(r, end, elem);		/* TypeProto in Sequence */
		rev_wrap(r, end, seq);		/* Sequence in TypeProto */
	}
	rev_wrap(r, end, field_id(&onnx__value_info_proto__descriptor, "type"));
	rev_string(r, field_id(&onnx__value_info_proto__descriptor, "name"), "x");
	rev_wrap(r, end, field_id(&onnx__graph_proto__descriptor, "input"));
	rev_model(r, end);
}

/* An If node whose then_branch holds an If node ... @levels deep. */
static void deep_graph(struct rev *r, size_t levels)
{
	uint32_t node = field_id(&onnx__graph_proto__descriptor, "node");
	uint32_t attr = field_id(&onnx__node_proto__descriptor, "attribute");
	uint32_t g = field_id(&onnx__attribute_proto__descriptor, "g");
	uint32_t name = field_id(&onnx__attribute_proto__descriptor, "name");
	uint32_t op = field_id(&onnx__node_proto__descriptor, "op_type");
	size_t end, i;

	rev_init(r, 48 * levels + 256);
	end = r->pos;
	for (i = 0; i < levels; i++) {
		rev_wrap(r, end, node);			/* NodeProto in GraphProto */
		rev_wrap(r, end, g);			/* GraphProto in AttributeProto */
		rev_string(r, name, "then_branch");
		rev_wrap(r, end, attr);			/* AttributeProto in NodeProto */
		rev_string(r, op, "If");
	}
	rev_wrap(r, end, node);
	rev_model(r, end);
}

static void test_nesting(void **state)
{
	struct npu_onnx_options o = { .size = sizeof(o) };
	struct rev r;

	(void)state;
	/* 300,000 levels: a 2 MB file that overflowed protobuf-c's stack */
	deep_type(&r, 300000);
	load_raw("nest-type", r.buf + r.pos, rev_len(&r), NULL, -E2BIG,
		 "protobuf messages nest deeper than 64 levels (npu_onnx_options.max_nesting): a TypeProto.Sequence inside TypeProto at byte 329",
		 NULL);
	/* the caller may allow more, up to 1000 */
	o.max_nesting = 1000;
	load_raw("nest-type", r.buf + r.pos, rev_len(&r), &o, -E2BIG, NULL,
		 "nest deeper than 1000 levels (npu_onnx_options.max_nesting)");
	o.max_nesting = 1001;
	load_raw("nest-type", r.buf + r.pos, rev_len(&r), &o, -EINVAL,
		 "npu_onnx_options.max_nesting 1001 is above 1000 (protobuf-c recurses once per level)",
		 NULL);
	free(r.buf);

	deep_graph(&r, 200000);
	load_raw("nest-graph", r.buf + r.pos, rev_len(&r), NULL, -E2BIG, NULL,
		 "nest deeper than 64 levels (npu_onnx_options.max_nesting)");
	free(r.buf);

	/* 64 levels pass the wire check; the importer then says what it lacks */
	deep_type(&r, 30);
	load_raw("nest-type-64", r.buf + r.pos, rev_len(&r), NULL, -EINVAL,
		 "input 'x' is not a tensor", NULL);
	free(r.buf);
	deep_type(&r, 31);
	load_raw("nest-type-66", r.buf + r.pos, rev_len(&r), NULL, -E2BIG, NULL,
		 "nest deeper than 64 levels");
	free(r.buf);
}

static void test_wire(void **state)
{
	static const uint8_t cut[] = { 0x3a, 0x05, 0x0a };	/* graph: 5 bytes, 1 there */
	static const uint8_t group[] = { 0x3b };		/* field 7, start group */
	uint8_t *twice;
	struct rev r;
	size_t len;

	(void)state;
	load_raw("wire-cut", cut, sizeof(cut), NULL, -EBADMSG,
		 "not a valid ONNX model: a field of 5 bytes at byte 2 runs past the end of its file (1 bytes left)",
		 NULL);
	load_raw("wire-group", group, sizeof(group), NULL, -EBADMSG,
		 "not a valid ONNX model: wire type 3 (a group) at byte 1", NULL);
	/* a model twice in a row: protobuf merges the graphs, copying them */
	deep_type(&r, 1);
	len = rev_len(&r);
	twice = malloc(2 * len);
	assert_non_null(twice);
	memcpy(twice, r.buf + r.pos, len);
	memcpy(twice + len, r.buf + r.pos, len);
	load_raw("wire-twice", twice, 2 * len, NULL, -EBADMSG, NULL,
		 "field 'graph' of ModelProto appears twice");
	free(twice);
	free(r.buf);

	/*
	 * 2^20 empty nodes: 2 bytes each in the file, a C struct of ~130
	 * bytes each once unpacked: more than 8 times the file plus 64 MiB.
	 */
	{
		const size_t n = 1u << 20;
		uint32_t node = field_id(&onnx__graph_proto__descriptor, "node");
		size_t end, i;

		rev_init(&r, 2 * n + 256);
		end = r.pos;
		for (i = 0; i < n; i++) {
			size_t mark = r.pos;

			rev_wrap(&r, mark, node);
		}
		rev_model(&r, end);
		load_raw("wire-empty-nodes", r.buf + r.pos, rev_len(&r), NULL, -E2BIG, NULL,
			 "bytes (8 times its size plus 64 MiB)");
		free(r.buf);
	}
}

/* ---- Constant folding ------------------------------------------------------- */

/* An int64 initializer of any shape and no data (so, empty). */
static void init_empty(struct mb *b, const char *name, int rank, const int64_t *dims)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = 7;
	t->n_dims = (size_t)rank;
	t->dims = keep(b, calloc((size_t)rank, 8));
	memcpy(t->dims, dims, 8ull * (size_t)rank);
	b->inits[b->g.n_initializer++] = t;
}

static const int64_t d2x3[2] = { 2, 3 };

/* Concat of constants: 16 MiB eight times over the 64 MiB budget. */
static void test_fold_concat(void **state)
{
	struct npu_onnx_options o = { .size = sizeof(o) };
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "shape", (const int64_t[]){ 1 << 22 }, 1);
	nodef(&b, "ConstantOfShape", "k", "shape", "k", (const char *)NULL);
	nodef(&b, "Concat", "cat", "k,k,k,k,k,k,k,k", "c", "axis=i:0", (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	check("fold-concat", &b, NULL, -E2BIG,
	      "node 'cat' (Concat): folded constants would reach 150994944 bytes, over the limit of 67108864 (npu_onnx_options.max_const_bytes)");
	mb_free(&b);

	/* the caller's budget: 1 MiB + 2 MiB is over 2 MiB, under 4 MiB */
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "shape", (const int64_t[]){ 1 << 18 }, 1);
	nodef(&b, "ConstantOfShape", "k", "shape", "k", (const char *)NULL);
	nodef(&b, "Concat", "cat", "k,k", "c", "axis=i:0", (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	o.max_const_bytes = 2 << 20;
	load(&b, &o, -E2BIG,
	     "node 'cat' (Concat): folded constants would reach 3145728 bytes, over the limit of 2097152 (npu_onnx_options.max_const_bytes)");
	o.max_const_bytes = 4 << 20;
	npu_onnx_free(load(&b, &o, 0, NULL));
	/* a caller that predates the budgets (size 0) gets the defaults */
	o.size = 0;
	npu_onnx_free(load(&b, &o, 0, NULL));
	mb_free(&b);
}

/* ConstantOfShape: each under the old per-node cap, together over the budget. */
static void test_fold_constant_of_shape(void **state)
{
	static const char *const names[5] = { "k0", "k1", "k2", "k3", "k4" };
	struct mb b;
	int i;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "shape", (const int64_t[]){ 1 << 22 }, 1);
	for (i = 0; i < 5; i++)
		nodef(&b, "ConstantOfShape", names[i], "shape", names[i], (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	check("fold-constant-of-shape", &b, NULL, -E2BIG,
	      "node 'k4' (ConstantOfShape): folded constants would reach 83886080 bytes, over the limit of 67108864 (npu_onnx_options.max_const_bytes)");
	mb_free(&b);
}

/*
 * Gather over X of dims [2^31, 1, 0]: an empty result, which took
 * 2^31 x 1000 turns of an empty loop to compute; it is an output, of
 * shape [2^31, 1000, 0] and no bytes.
 */
static void test_fold_gather_empty(void **state)
{
	static int64_t idx[1000];
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_empty(&b, "big", 3, (const int64_t[]){ 1ll << 31, 1, 0 });
	init_i64(&b, "idx", idx, 1000);
	nodef(&b, "Gather", "g", "big,idx", "gathered", "axis=i:1", (const char *)NULL);
	nodef(&b, "Shape", "s", "gathered", "shape", (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	output(&b, "gathered");
	m = check("fold-gather-empty", &b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_output(m, 1, &io), 0);
	assert_string_equal(io.name, "gathered");
	assert_int_equal(io.rank, 3);
	assert_int_equal(io.dims[0], 1u << 31);
	assert_int_equal(io.dims[1], 1000);
	assert_int_equal(io.dims[2], 0);
	npu_onnx_free(m);
	mb_free(&b);

	/* an index out of range is found without walking the outer dims */
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_empty(&b, "big", 3, (const int64_t[]){ 1ll << 31, 1, 0 });
	init_i64(&b, "idx", (const int64_t[]){ 0, 1 }, 2);
	nodef(&b, "Gather", "g", "big,idx", "gathered", "axis=i:1", (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL,
	     "node 'g' (Gather): Gather index 1 out of range for a dimension of 1");
	mb_free(&b);
}

/*
 * Slice of a constant with steps near INT64_MAX and INT64_MIN: the folded
 * values become Reshape's shape [-1, values...], so the output's dims
 * show them.  X has 96 elements; data = [4, 6, 3, 7, 8].
 */
static void test_fold_slice_steps(void **state)
{
	static const struct {
		int64_t start, end, step;
		uint32_t rank, dims[4];
	} cases[] = {
		{ 1, INT64_MAX, INT64_MAX, 2, { 16, 6 } },		/* [6] */
		{ 0, INT64_MAX, INT64_MAX - 1, 2, { 24, 4 } },		/* [4] */
		{ -1, INT64_MIN, INT64_MIN, 2, { 12, 8 } },		/* [8] */
		{ 4, -INT64_MAX, -2, 4, { 1, 8, 3, 4 } },		/* [8, 3, 4] */
		{ INT64_MIN, INT64_MAX, 2, 4, { 1, 4, 3, 8 } },		/* [4, 3, 8] */
		{ INT64_MAX, INT64_MIN, INT64_MIN + 1, 2, { 12, 8 } },	/* [8] */
		{ 2, 2, INT64_MAX, 0, { 0 } },				/* [] */
	};
	static const int64_t dx[4] = { 2, 3, 4, 4 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npu_onnx_model *m;
		struct npu_onnx_io io;
		struct mb b;
		uint32_t k;

		mb_init(&b, 13);
		input(&b, "x", 4, dx);
		init_i64(&b, "data", (const int64_t[]){ 4, 6, 3, 7, 8 }, 5);
		init_i64(&b, "st", &cases[i].start, 1);
		init_i64(&b, "en", &cases[i].end, 1);
		init_i64(&b, "ax", (const int64_t[]){ 0 }, 1);
		init_i64(&b, "sp", &cases[i].step, 1);
		init_i64(&b, "m1", (const int64_t[]){ -1 }, 1);
		nodef(&b, "Slice", "sl", "data,st,en,ax,sp", "v", (const char *)NULL);
		nodef(&b, "Concat", "cat", "m1,v", "shape", "axis=i:0", (const char *)NULL);
		nodef(&b, "Reshape", "rs", "x,shape", "y", (const char *)NULL);
		output(&b, "y");
		if (!cases[i].rank) {
			/* an empty slice: Reshape to [-1], all 96 elements */
			m = load(&b, NULL, 0, NULL);
			assert_int_equal(npu_onnx_output(m, 0, &io), 0);
			assert_int_equal(io.rank, 1);
			assert_int_equal(io.dims[0], 96);
			npu_onnx_free(m);
			mb_free(&b);
			continue;
		}
		m = load(&b, NULL, 0, NULL);
		assert_int_equal(npu_onnx_output(m, 0, &io), 0);
		if (io.rank != cases[i].rank)
			fail_msg("case %zu: rank %u, want %u", i, io.rank, cases[i].rank);
		for (k = 0; k < io.rank; k++)
			if (io.dims[k] != cases[i].dims[k])
				fail_msg("case %zu: dim %u is %u, want %u", i, k, io.dims[k],
					 cases[i].dims[k]);
		npu_onnx_free(m);
		mb_free(&b);
	}
}

/* ---- Integer overflow in shape and constant arithmetic ------------------------- */

static void test_int_overflow(void **state)
{
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "a", (const int64_t[]){ INT64_MIN }, 1);
	init_i64(&b, "b", (const int64_t[]){ -1 }, 1);
	nodef(&b, "Div", "d", "a,b", "q", (const char *)NULL);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	check("int-div-overflow", &b, NULL, -EINVAL,
	      "node 'd' (Div): Div: -9223372036854775808 / -1 overflows int64");
	mb_free(&b);

	/* ONNX integer division truncates towards zero */
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "a", (const int64_t[]){ -7, 7 }, 2);
	init_i64(&b, "b", (const int64_t[]){ 2, -2 }, 2);
	init_i64(&b, "m", (const int64_t[]){ -2 }, 1);
	nodef(&b, "Div", "d", "a,b", "q", (const char *)NULL);	/* [-3, -3] */
	nodef(&b, "Mul", "mm", "q,m", "shape", (const char *)NULL);	/* [6, 6] */
	nodef(&b, "ConstantOfShape", "k", "shape", "kk", (const char *)NULL);
	nodef(&b, "Relu", "r", "kk", "y", (const char *)NULL);
	output(&b, "y");
	{
		struct npu_onnx_model *m = load(&b, NULL, 0, NULL);
		struct npu_onnx_io io;

		assert_int_equal(npu_onnx_output(m, 0, &io), 0);
		assert_int_equal(io.rank, 2);
		assert_int_equal(io.dims[0], 6);
		assert_int_equal(io.dims[1], 6);
		npu_onnx_free(m);
	}
	mb_free(&b);

	/* Reshape: the known dims' product overflowed int64 */
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	init_i64(&b, "shape", (const int64_t[]){ 4294967295, 4294967295, 4294967295, -1 }, 4);
	nodef(&b, "Reshape", "rs", "x,shape", "y", (const char *)NULL);
	output(&b, "y");
	check("int-reshape-overflow", &b, NULL, -EINVAL,
	      "node 'rs' (Reshape): the new shape's element count overflows");
	mb_free(&b);

	/* Pad: dim + INT64_MAX overflowed before the pads' range was checked */
	mb_init(&b, 13);
	input(&b, "x", 4, (const int64_t[]){ 2, 3, 4, 4 });
	init_i64(&b, "p", (const int64_t[]){ 0, 0, INT64_MAX, 0, 0, 0, 0, 0 }, 8);
	nodef(&b, "Pad", "pad", "x,p", "y", (const char *)NULL);
	output(&b, "y");
	check("int-pad-overflow", &b, NULL, -EINVAL,
	      "node 'pad' (Pad): pads 9223372036854775807 and 0 of axis 2 (length 4) leave no output, or too much");
	mb_free(&b);

	/* Tile: 2^62 x 4 wrapped to 0 in uint64, then overflowed int64 */
	mb_init(&b, 13);
	input(&b, "x", 4, (const int64_t[]){ 2, 3, 4, 4 });
	init_i64(&b, "r", (const int64_t[]){ 1, 1, 1ll << 62, 1 }, 4);
	nodef(&b, "Tile", "tile", "x,r", "y", (const char *)NULL);
	output(&b, "y");
	check("int-tile-overflow", &b, NULL, -EINVAL,
	      "node 'tile' (Tile): repeats[2] (4611686018427387904) is not within [1, 4294967295]");
	mb_free(&b);
}

/* ---- Tensor sizes ----------------------------------------------------------- */

static void test_value_size(void **state)
{
	static const int64_t dx[4] = { 2, 3, 4, 4 };
	static const struct {
		const char *name, *op, *ins, *k;
		const char *msg;
	} cases[] = {
		{ "value-tile", "Tile", "x,a", "1,1,65536,65536",
		  "node 'big' (Tile): tensor 'y' of shape [2,3,262144,262144] would take 1649267441664 bytes, over the limit of 1073741824 (npu_onnx_options.max_value_bytes)" },
		{ "value-expand", "Expand", "x,a", "65536,65536,1,1,1,1",
		  "node 'big' (Expand): tensor 'y' of shape [65536,65536,2,3,4,4] would take 1649267441664 bytes, over the limit of 1073741824 (npu_onnx_options.max_value_bytes)" },
		{ "value-resize", "Resize", "x,-,-,a", "2,3,65536,65536",
		  "node 'big' (Resize): tensor 'y' of shape [2,3,65536,65536] would take 103079215104 bytes, over the limit of 1073741824 (npu_onnx_options.max_value_bytes)" },
	};
	struct npu_onnx_options o = { .size = sizeof(o), .max_value_bytes = 1024 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t v[8];
		size_t n = 0;
		char *dup = strdup(cases[i].k), *tok;
		struct mb b;

		assert_non_null(dup);
		for (tok = strtok(dup, ","); tok; tok = strtok(NULL, ","))
			v[n++] = strtoll(tok, NULL, 0);
		free(dup);
		mb_init(&b, 13);
		input(&b, "x", 4, dx);
		init_i64(&b, "a", v, n);
		nodef(&b, cases[i].op, "big", cases[i].ins, "y", (const char *)NULL);
		output(&b, "y");
		check(cases[i].name, &b, NULL, -E2BIG, cases[i].msg);
		mb_free(&b);
	}

	/* the caller's limit: 2 x 384 bytes fit in 1024, 4 x do not */
	{
		struct mb b;

		mb_init(&b, 13);
		input(&b, "x", 4, dx);
		init_i64(&b, "a", (const int64_t[]){ 1, 1, 1, 2 }, 4);
		nodef(&b, "Tile", "t", "x,a", "y", (const char *)NULL);
		output(&b, "y");
		npu_onnx_free(load(&b, &o, 0, NULL));
		mb_free(&b);
		mb_init(&b, 13);
		input(&b, "x", 4, dx);
		init_i64(&b, "a", (const int64_t[]){ 1, 1, 2, 2 }, 4);
		nodef(&b, "Tile", "t", "x,a", "y", (const char *)NULL);
		output(&b, "y");
		load(&b, &o, -E2BIG,
		     "node 't' (Tile): tensor 'y' of shape [2,3,8,8] would take 1536 bytes, over the limit of 1024 (npu_onnx_options.max_value_bytes)");
		mb_free(&b);
	}
}

/* ---- Graph size --------------------------------------------------------------- */

/*
 * @n Relu nodes x -> t1 -> ... -> y, stored last first so that every
 * node's producer comes after it in the file.
 */
static void relu_chain(struct mb *b, size_t n, Onnx__NodeProto **slots,
		       Onnx__NodeProto *nodes, char (*names)[16], char **io)
{
	size_t i;

	input(b, "x", 2, d2x3);
	for (i = 0; i < n; i++) {
		Onnx__NodeProto *nd = &nodes[i];

		onnx__node_proto__init(nd);
		snprintf(names[i], sizeof(names[i]), i + 1 == n ? "y" : "t%zu", i + 1);
		io[2 * i] = i ? names[i - 1] : "x";
		io[2 * i + 1] = names[i];
		nd->op_type = "Relu";
		nd->n_input = nd->n_output = 1;
		nd->input = &io[2 * i];
		nd->output = &io[2 * i + 1];
		slots[n - 1 - i] = nd;
	}
	b->g.node = slots;
	b->g.n_node = n;
	output(b, "y");
}

static void test_chain(void **state)
{
	const size_t n = 100000;
	Onnx__NodeProto **slots = calloc(n, sizeof(*slots));
	Onnx__NodeProto *nodes = calloc(n, sizeof(*nodes));
	char (*names)[16] = calloc(n, sizeof(*names));
	char **io = calloc(2 * n, sizeof(*io));
	struct npu_onnx_options o = { .size = sizeof(o), .max_nodes = 99999 };
	struct npu_onnx_model *m;
	struct npu_onnx_io out;
	struct mb b;

	(void)state;
	assert_true(slots && nodes && names && io);
	mb_init(&b, 13);
	relu_chain(&b, n, slots, nodes, names, io);
	m = check("chain-100000", &b, NULL, 0, NULL);
	assert_int_equal(npu_graph_num_nodes(npu_onnx_graph(m)), n);
	assert_int_equal(npu_onnx_output(m, 0, &out), 0);
	assert_string_equal(out.name, "y");
	assert_int_equal(out.rank, 2);
	npu_onnx_free(m);
	load(&b, &o, -E2BIG,
	     "the graph has 100000 nodes, over the limit of 99999 (npu_onnx_options.max_nodes)");
	mb_free(&b);
	free(io);
	free(names);
	free(nodes);
	free(slots);
}

/* ---- The options struct ------------------------------------------------------- */

static void test_options(void **state)
{
	struct npu_onnx_options o = { .size = 4 };
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, d2x3);
	nodef(&b, "Relu", "r", "x", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, &o, -EINVAL, "npu_onnx_options.size 4 is too small");
	o = (struct npu_onnx_options){ .size = sizeof(o), .reserved = 1 };
	load(&b, &o, -EINVAL, "npu_onnx_options.reserved must be zero");
	o = (struct npu_onnx_options){ .size = sizeof(o), .reserved2 = 1 };
	load(&b, &o, -EINVAL, "npu_onnx_options.reserved2 must be zero");
	o = (struct npu_onnx_options){ .size = sizeof(o), .rounding = 2 };
	load(&b, &o, -EINVAL,
	     "npu_onnx_options.rounding 2 is not NPU_ROUND_ONNX (0) or NPU_ROUND_TFLITE (1)");
	o = (struct npu_onnx_options){ .size = sizeof(o), .rounding = NPU_ROUND_TFLITE };
	npu_onnx_free(load(&b, &o, 0, NULL));
	o = (struct npu_onnx_options){ .size = sizeof(o) };
	npu_onnx_free(load(&b, &o, 0, NULL));
	mb_free(&b);
}

/* argv[1], if given, picks the tests to run (a cmocka filter: test_chain). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_fold_concat),
		cmocka_unit_test(test_fold_constant_of_shape),
		cmocka_unit_test(test_fold_gather_empty),
		cmocka_unit_test(test_fold_slice_steps),
		cmocka_unit_test(test_int_overflow),
		cmocka_unit_test(test_value_size),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_options),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-limits", tests, NULL, NULL);
}
