// SPDX-License-Identifier: MIT
/*
 * Reproducers of the hostile-model defects of the ONNX importer (issue
 * "A hostile model file or command cannot crash, hang or exhaust the
 * host"), one small model each, written with protobuf-c from Debian's
 * onnx.proto, each with a .expect file saying what a refusal of it must
 * name.  tests/fuzz/README.md lists what each did to the importer before
 * the fix.
 *
 * usage: gen-onnx regress DIR        the committed files (regress/onnx/)
 *        gen-onnx big DIR            the ones too large to commit (deep
 *                                    nesting, 30,000 nodes), which
 *                                    run-fuzz.sh writes at test time
 *        gen-onnx strip IN OUT MAX   IN with its large initializers and
 *                                    Constant nodes turned into graph
 *                                    inputs of the same type and shape,
 *                                    if that fits in MAX bytes
 *                                    (a seed with a real model's graph)
 * Deterministic: the same bytes every run.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define OT_FLOAT	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define OT_INT64	ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define AT(x)		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##x

/*
 * Nesting depths of four times the smallest that overflowed the default
 * 8 MiB stack in protobuf-c's unpack (tests/fuzz/README.md).
 */
#ifndef TYPEPROTO_DEPTH
#define TYPEPROTO_DEPTH	18000
#endif
#ifndef IF_DEPTH
#define IF_DEPTH	12000
#endif
/* The chain: the old node ordering took minutes over it. */
#ifndef RELU_CHAIN
#define RELU_CHAIN	30000
#endif

static const char *out_dir;

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		perror("gen-onnx");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	return strcpy(xcalloc(strlen(s) + 1, 1), s);
}

/* Append @item to the repeated field (@arr, *@n), realloc'ed by one. */
#define APPEND(arr, n, item) do {					\
	(arr) = realloc((arr), ((n) + 1) * sizeof(*(arr)));		\
	if (!(arr)) {							\
		perror("gen-onnx");					\
		exit(1);						\
	}								\
	(arr)[(n)++] = (item);						\
} while (0)

static Onnx__ModelProto *model_new(int64_t opset)
{
	Onnx__ModelProto *m = xcalloc(1, sizeof(*m));
	Onnx__OperatorSetIdProto *o = xcalloc(1, sizeof(*o));

	onnx__model_proto__init(m);
	onnx__operator_set_id_proto__init(o);
	o->has_version = 1;
	o->version = opset;
	APPEND(m->opset_import, m->n_opset_import, o);
	m->has_ir_version = 1;
	m->ir_version = 8;
	m->graph = xcalloc(1, sizeof(*m->graph));
	onnx__graph_proto__init(m->graph);
	m->graph->name = xstrdup("g");
	return m;
}

static Onnx__TypeProto *tensor_type(int elem, int rank, const int64_t *dims)
{
	Onnx__TypeProto *t = xcalloc(1, sizeof(*t));
	Onnx__TypeProto__Tensor *tt = xcalloc(1, sizeof(*tt));
	int i;

	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = elem;
	if (rank >= 0) {
		tt->shape = xcalloc(1, sizeof(*tt->shape));
		onnx__tensor_shape_proto__init(tt->shape);
		for (i = 0; i < rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = xcalloc(1, sizeof(*d));

			onnx__tensor_shape_proto__dimension__init(d);
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
			APPEND(tt->shape->dim, tt->shape->n_dim, d);
		}
	}
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	return t;
}

static Onnx__ValueInfoProto *value_info(const char *name, Onnx__TypeProto *type)
{
	Onnx__ValueInfoProto *v = xcalloc(1, sizeof(*v));

	onnx__value_info_proto__init(v);
	v->name = xstrdup(name);
	v->type = type;
	return v;
}

static void add_input(Onnx__GraphProto *g, const char *name, int elem, int rank,
		      const int64_t *dims)
{
	APPEND(g->input, g->n_input, value_info(name, tensor_type(elem, rank, dims)));
}

static void add_output(Onnx__GraphProto *g, const char *name)
{
	APPEND(g->output, g->n_output, value_info(name, NULL));
}

/* An int64 or float tensor of shape @dims holding @n values (may differ). */
static Onnx__TensorProto *tensor(const char *name, int dt, int rank, const int64_t *dims,
				 size_t n, const int64_t *iv, const float *fv)
{
	Onnx__TensorProto *t = xcalloc(1, sizeof(*t));
	size_t k;

	onnx__tensor_proto__init(t);
	if (name)
		t->name = xstrdup(name);
	t->has_data_type = 1;
	t->data_type = dt;
	t->n_dims = (size_t)rank;
	t->dims = xcalloc((size_t)rank, sizeof(*t->dims));
	memcpy(t->dims, dims, (size_t)rank * sizeof(*dims));
	if (dt == OT_INT64) {
		t->n_int64_data = n;
		t->int64_data = xcalloc(n, sizeof(int64_t));
		for (k = 0; iv && k < n; k++)
			t->int64_data[k] = iv[k];
	} else {
		t->n_float_data = n;
		t->float_data = xcalloc(n, sizeof(float));
		for (k = 0; fv && k < n; k++)
			t->float_data[k] = fv[k];
	}
	return t;
}

static Onnx__TensorProto *vec_i64(const char *name, size_t n, const int64_t *v)
{
	int64_t d = (int64_t)n;

	return tensor(name, OT_INT64, 1, &d, n, v, NULL);
}

static void add_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	APPEND(g->initializer, g->n_initializer, t);
}

static Onnx__NodeProto *add_node(Onnx__GraphProto *g, const char *op, const char *name,
				 const char *const *in, size_t nin, const char *out)
{
	Onnx__NodeProto *n = xcalloc(1, sizeof(*n));
	size_t i;

	onnx__node_proto__init(n);
	n->op_type = xstrdup(op);
	if (name)
		n->name = xstrdup(name);
	for (i = 0; i < nin; i++)
		APPEND(n->input, n->n_input, xstrdup(in[i]));
	APPEND(n->output, n->n_output, xstrdup(out));
	APPEND(g->node, g->n_node, n);
	return n;
}

static Onnx__AttributeProto *attr_new(Onnx__NodeProto *n, const char *name, int type)
{
	Onnx__AttributeProto *a = xcalloc(1, sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = xstrdup(name);
	a->has_type = 1;
	a->type = type;
	APPEND(n->attribute, n->n_attribute, a);
	return a;
}

static void attr_i(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = attr_new(n, name, AT(INT));

	a->has_i = 1;
	a->i = v;
}

static void attr_ints(Onnx__NodeProto *n, const char *name, size_t k, const int64_t *v)
{
	Onnx__AttributeProto *a = attr_new(n, name, AT(INTS));

	a->n_ints = k;
	a->ints = xcalloc(k, sizeof(int64_t));
	memcpy(a->ints, v, k * sizeof(int64_t));
}

static void attr_t(Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
	attr_new(n, name, AT(TENSOR))->t = t;
}

/* A Constant node @out holding @t. */
static void constant(Onnx__GraphProto *g, const char *out, Onnx__TensorProto *t)
{
	attr_t(add_node(g, "Constant", out, NULL, 0, out), "value", t);
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void write_model(const char *name, const Onnx__ModelProto *m)
{
	size_t len = onnx__model_proto__get_packed_size(m);
	uint8_t *buf = xcalloc(len, 1);

	onnx__model_proto__pack(m, buf);
	write_file(name, buf, len);
	free(buf);
}

/*
 * @name's .expect file for run-fuzz.sh: what a refusal of it must say
 * (the issue: every refusal names the node, the op and the limit).
 */
static void expect(const char *name, const char *lines)
{
	char file[256];

	snprintf(file, sizeof(file), "%s.expect", name);
	write_file(file, lines, strlen(lines));
}

/* ---- Protobuf nesting, spelled on the wire ------------------------------ */

/*
 * Deeply nested messages are written from the inside out as raw wire
 * format: protobuf-c's own packer recurses as deep as the message.
 */
struct wire {
	uint8_t *buf;	/* the message fills buf[pos, cap) */
	size_t pos, cap;
};

static void wire_prepend(struct wire *w, const uint8_t *p, size_t n)
{
	if (n > w->pos) {
		size_t grow = 2 * w->cap + n + 4096, len = w->cap - w->pos;
		uint8_t *nb = xcalloc(grow, 1);

		memcpy(nb + grow - len, w->buf + w->pos, len);
		free(w->buf);
		w->buf = nb;
		w->pos = grow - len;
		w->cap = grow;
	}
	w->pos -= n;
	memcpy(w->buf + w->pos, p, n);
}

static size_t varint(uint64_t v, uint8_t *out)
{
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Wrap everything so far as length-delimited field @field of a message. */
static void wire_wrap(struct wire *w, uint32_t field)
{
	uint8_t hdr[20];
	size_t n = varint((uint64_t)field << 3 | 2, hdr);

	n += varint(w->cap - w->pos, hdr + n);
	wire_prepend(w, hdr, n);
}

/* Prepend the fields of @m packed (no header: they merge into the message). */
static void wire_fields(struct wire *w, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *b = xcalloc(len, 1);

	protobuf_c_message_pack(m, b);
	wire_prepend(w, b, len);
	free(b);
}

/* The model @m with the graph field @w (a GraphProto's fields) added. */
static void write_wire_model(const char *name, Onnx__ModelProto *m, struct wire *w)
{
	Onnx__GraphProto *g = m->graph;

	m->graph = NULL;
	wire_fields(w, &g->base);
	wire_wrap(w, 7);		/* ModelProto.graph */
	wire_fields(w, &m->base);
	m->graph = g;
	write_file(name, w->buf + w->pos, w->cap - w->pos);
	free(w->buf);
}

/*
 * A graph input whose type is a sequence of a sequence of ... of a float
 * tensor, @depth sequences deep: TypeProto.sequence_type (4) ->
 * Sequence.elem_type (1) -> TypeProto.
 */
static void typeproto_nesting(const char *name, unsigned int depth)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__TypeProto *leaf = tensor_type(OT_FLOAT, 1, (const int64_t[]){ 1 });
	Onnx__ValueInfoProto *vi = value_info("x", NULL);
	struct wire w = { 0 };
	unsigned int i;

	wire_fields(&w, &leaf->base);
	for (i = 0; i < depth; i++) {
		wire_wrap(&w, 1);	/* Sequence.elem_type */
		wire_wrap(&w, 4);	/* TypeProto.sequence_type */
	}
	wire_wrap(&w, 2);		/* ValueInfoProto.type */
	wire_fields(&w, &vi->base);	/* its name */
	wire_wrap(&w, 11);		/* GraphProto.input */
	add_node(m->graph, "Identity", "id", (const char *[]){ "x" }, 1, "y");
	add_output(m->graph, "y");
	write_wire_model(name, m, &w);
}

/*
 * An If node whose then_branch holds an If node whose then_branch ...,
 * @depth graphs deep: GraphProto.node (1) -> NodeProto.attribute (5) ->
 * AttributeProto.g (6) -> GraphProto.
 */
static void if_nesting(const char *name, unsigned int depth)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *leaf = xcalloc(1, sizeof(*leaf)), *g = m->graph;
	Onnx__NodeProto *node = xcalloc(1, sizeof(*node));
	Onnx__AttributeProto *a = xcalloc(1, sizeof(*a));
	struct wire w = { 0 };
	unsigned int i;

	onnx__graph_proto__init(leaf);
	add_node(leaf, "Identity", "leaf", (const char *[]){ "x" }, 1, "y");
	add_output(leaf, "y");
	onnx__node_proto__init(node);
	node->op_type = xstrdup("If");
	APPEND(node->input, node->n_input, xstrdup("c"));
	APPEND(node->output, node->n_output, xstrdup("y"));
	onnx__attribute_proto__init(a);
	a->name = xstrdup("then_branch");
	a->has_type = 1;
	a->type = AT(GRAPH);
	wire_fields(&w, &leaf->base);
	for (i = 0; i < depth; i++) {
		wire_wrap(&w, 6);	/* AttributeProto.g */
		wire_fields(&w, &a->base);
		wire_wrap(&w, 5);	/* NodeProto.attribute */
		wire_fields(&w, &node->base);
		wire_wrap(&w, 1);	/* GraphProto.node */
	}
	add_input(g, "c", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
	add_input(g, "x", OT_FLOAT, 1, (const int64_t[]){ 1 });
	add_output(g, "y");
	write_wire_model(name, m, &w);
}

/* ---- Constant folding ---------------------------------------------------- */

/* Slice of a 1-D constant with a step of INT64_MAX (the count loop overflows). */
static void slice_step(const char *name)
{
	static const int64_t x[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;

	add_init(g, vec_i64("x", 10, x));
	add_init(g, vec_i64("starts", 1, (const int64_t[]){ 1 }));
	add_init(g, vec_i64("ends", 1, (const int64_t[]){ 10 }));
	add_init(g, vec_i64("axes", 1, (const int64_t[]){ 0 }));
	add_init(g, vec_i64("steps", 1, (const int64_t[]){ INT64_MAX }));
	add_node(g, "Slice", "slice", (const char *[]){ "x", "starts", "ends", "axes", "steps" }, 5,
		 "shape");
	/* x[1:10:INT64_MAX] is [1]: the shape of a reshape that then works */
	add_input(g, "in", OT_FLOAT, 1, (const int64_t[]){ 1 });
	add_node(g, "Reshape", "reshape", (const char *[]){ "in", "shape" }, 2, "y");
	add_output(g, "y");
	write_model(name, m);
}

/* ConstantOfShape of @n int64 elements into @out. */
static void const_of_shape(Onnx__GraphProto *g, const char *out, int64_t n)
{
	char shape[64];
	Onnx__NodeProto *node;

	snprintf(shape, sizeof(shape), "%s-shape", out);
	constant(g, shape, vec_i64(NULL, 1, &n));
	node = add_node(g, "ConstantOfShape", out, (const char *[]){ shape }, 1, out);
	attr_t(node, "value", vec_i64(NULL, 1, (const int64_t[]){ 7 }));
}

/*
 * Each ConstantOfShape stays under the per-node cap (2^26 elements), and
 * the Concat of eight of them is still under the per-op cap (2^31): a few
 * hundred bytes ask for gigabytes.
 */
static void concat_blowup(const char *name)
{
	static const char *const in[8] = { "c", "c", "c", "c", "c", "c", "c", "c" };
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;

	const_of_shape(g, "c", 1 << 26);
	attr_i(add_node(g, "Concat", "concat", in, 8, "y"), "axis", 0);
	add_output(g, "y");
	write_model(name, m);
}

/* @n ConstantOfShape nodes of 2^26 int64 each: no single one is too big. */
static void const_of_shape_chain(const char *name, int n)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;
	char out[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(out, sizeof(out), "c%d", i);
		const_of_shape(g, out, 1 << 26);
	}
	add_output(g, out);
	write_model(name, m);
}

/*
 * Expand, then Tile, of a constant: the folded (static) operand is small,
 * the outputs are 2^30 and 2^31 floats that the graph must hold.
 */
static void expand_tile_blowup(const char *name)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;

	add_init(g, tensor("x", OT_FLOAT, 1, (const int64_t[]){ 1 }, 1, NULL,
			   (const float[]){ 1 }));
	add_init(g, vec_i64("shape", 2, (const int64_t[]){ 1 << 15, 1 << 15 }));
	add_init(g, vec_i64("reps", 2, (const int64_t[]){ 2, 1 }));
	add_node(g, "Expand", "expand", (const char *[]){ "x", "shape" }, 2, "e");
	add_node(g, "Tile", "tile", (const char *[]){ "e", "reps" }, 2, "y");
	add_output(g, "y");
	write_model(name, m);
}

/*
 * Gather on axis 1 of a constant with dims [2^31, 1, 0]: no elements, but
 * the loops run 2^31 x 1000 times.
 */
static void gather_empty(const char *name)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;
	Onnx__NodeProto *n;

	add_init(g, tensor("x", OT_INT64, 3, (const int64_t[]){ 1ll << 31, 1, 0 }, 0, NULL, NULL));
	add_init(g, tensor("idx", OT_INT64, 1, (const int64_t[]){ 1000 }, 1000, NULL, NULL));
	n = add_node(g, "Gather", "gather", (const char *[]){ "x", "idx" }, 2, "y");
	attr_i(n, "axis", 1);
	add_output(g, "y");
	write_model(name, m);
}

/* INT64_MIN / -1 of constants: an overflow, not a division by zero. */
static void div_overflow(const char *name)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;

	add_init(g, vec_i64("a", 1, (const int64_t[]){ INT64_MIN }));
	add_init(g, vec_i64("b", 1, (const int64_t[]){ -1 }));
	add_node(g, "Div", "div", (const char *[]){ "a", "b" }, 2, "q");
	add_node(g, "Reshape", "reshape", (const char *[]){ "x", "q" }, 2, "y");
	add_input(g, "x", OT_FLOAT, 1, (const int64_t[]){ 1 });
	add_output(g, "y");
	write_model(name, m);
}

/* ---- Shape inference ------------------------------------------------------ */

/* Reshape to eight dims of 2^32-1: their product overflows int64. */
static void reshape_overflow(const char *name)
{
	static const int64_t shape[8] = {
		UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
		UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX,
	};
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;

	add_input(g, "x", OT_FLOAT, 1, (const int64_t[]){ 1 });
	add_init(g, vec_i64("shape", 8, shape));
	add_node(g, "Reshape", "reshape", (const char *[]){ "x", "shape" }, 2, "y");
	add_output(g, "y");
	write_model(name, m);
}

/* Tile, Expand or Resize of a [1,1,1,1] input to 2^32 + 2^16 elements. */
static void huge_output(const char *name, const char *op)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;
	static const int64_t big[4] = { 1, 1, 1 << 16, (1 << 16) + 1 };

	add_input(g, "x", OT_FLOAT, 4, (const int64_t[]){ 1, 1, 1, 1 });
	if (!strcmp(op, "Resize")) {
		add_init(g, vec_i64("sizes", 4, big));
		add_node(g, op, "resize", (const char *[]){ "x", "", "", "sizes" }, 4, "y");
	} else {
		add_init(g, vec_i64("k", 4, big));
		add_node(g, op, op, (const char *[]){ "x", "k" }, 2, "y");
	}
	add_output(g, "y");
	write_model(name, m);
}

/* ---- The CPU path --------------------------------------------------------- */

/*
 * The MaxPool: a 65535 x 65535 window over 64 channels of one
 * pixel, all but one tap padding; the device takes no such window, the
 * CPU path's reference walks every tap.
 */
static void cpu_maxpool_window(const char *name)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;
	Onnx__NodeProto *n;

	add_input(g, "x", OT_FLOAT, 4, (const int64_t[]){ 1, 64, 1, 1 });
	n = add_node(g, "MaxPool", "pool", (const char *[]){ "x" }, 1, "y");
	attr_ints(n, "kernel_shape", 2, (const int64_t[]){ 65535, 65535 });
	attr_ints(n, "pads", 4, (const int64_t[]){ 32767, 32767, 32767, 32767 });
	add_output(g, "y");
	write_model(name, m);
}

/* ---- Graph size ---------------------------------------------------------- */

/* @n Relu nodes in a chain, listed last to first: ordering is all the work. */
static void relu_chain(const char *name, unsigned int n)
{
	Onnx__ModelProto *m = model_new(13);
	Onnx__GraphProto *g = m->graph;
	char in[16], out[16];
	unsigned int i;

	add_input(g, "t0", OT_FLOAT, 1, (const int64_t[]){ 1 });
	for (i = n; i > 0; i--) {
		snprintf(in, sizeof(in), "t%x", i - 1);
		snprintf(out, sizeof(out), "t%x", i);
		add_node(g, "Relu", NULL, (const char *[]){ in }, 1, out);
	}
	snprintf(out, sizeof(out), "t%x", n);
	add_output(g, out);
	write_model(name, m);
}

/* ---- Seeds from real models ---------------------------------------------- */

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(b = xcalloc((size_t)n, 1)) || fread(b, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static int strip(const char *in, const char *out, size_t max)
{
	size_t len, i, j, kept = 0;
	void *data = read_file(in, &len);
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
	Onnx__GraphProto *g;

	if (!m || !m->graph) {
		fprintf(stderr, "gen-onnx: %s: not an ONNX model\n", in);
		return 1;
	}
	g = m->graph;
	for (i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *t = g->initializer[i];
		bool listed = false;

		if (onnx__tensor_proto__get_packed_size(t) <= 1024) {
			g->initializer[kept++] = t;
			continue;
		}
		for (j = 0; j < g->n_input; j++)
			listed |= g->input[j]->name && t->name && !strcmp(g->input[j]->name, t->name);
		if (!listed)
			APPEND(g->input, g->n_input,
			       value_info(t->name ? t->name : "",
					  tensor_type(t->data_type, (int)t->n_dims, t->dims)));
		onnx__tensor_proto__free_unpacked(t, NULL);
	}
	g->n_initializer = kept;
	/* exporters such as paddle2onnx hold weights in Constant nodes */
	for (i = 0, kept = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		const Onnx__TensorProto *t = NULL;

		for (j = 0; j < n->n_attribute; j++)
			if (n->attribute[j]->t && n->attribute[j]->name &&
			    !strcmp(n->attribute[j]->name, "value"))
				t = n->attribute[j]->t;
		if (!n->op_type || strcmp(n->op_type, "Constant") || !t || n->n_output != 1 ||
		    onnx__tensor_proto__get_packed_size(t) <= 1024) {
			g->node[kept++] = n;
			continue;
		}
		APPEND(g->input, g->n_input,
		       value_info(n->output[0], tensor_type(t->data_type, (int)t->n_dims, t->dims)));
		onnx__node_proto__free_unpacked(n, NULL);
	}
	g->n_node = kept;
	len = onnx__model_proto__get_packed_size(m);
	if (len > max) {
		fprintf(stderr, "gen-onnx: %s: %zu bytes without its weights, above %zu\n", in, len,
			max);
		return 1;
	}
	{
		uint8_t *b = xcalloc(len, 1);
		FILE *f = fopen(out, "wb");

		onnx__model_proto__pack(m, b);
		if (!f || fwrite(b, 1, len, f) != len || fclose(f)) {
			perror(out);
			return 1;
		}
		free(b);
	}
	onnx__model_proto__free_unpacked(m, NULL);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "strip"))
		return strip(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc != 3 || (strcmp(argv[1], "regress") && strcmp(argv[1], "big"))) {
		fprintf(stderr, "usage: gen-onnx regress|big DIR | gen-onnx strip IN OUT MAX\n");
		return 2;
	}
	out_dir = argv[2];
	if (!strcmp(argv[1], "big")) {
		typeproto_nesting("typeproto-nesting-deep.onnx", TYPEPROTO_DEPTH);
		expect("typeproto-nesting-deep.onnx", "refuse nest\n");
		if_nesting("if-subgraph-nesting-deep.onnx", IF_DEPTH);
		expect("if-subgraph-nesting-deep.onnx", "refuse nest\n");
		relu_chain("relu-chain-quadratic.onnx", RELU_CHAIN);
		return 0;
	}
	slice_step("const-slice-step-int64-max.onnx");
	expect("const-slice-step-int64-max.onnx",
	       "refuse ^node '(slice|reshape)' \\((Slice|Reshape)\\): \n");
	concat_blowup("const-concat-blowup.onnx");
	expect("const-concat-blowup.onnx",
	       "refuse ^node '[^']+' \\((ConstantOfShape|Concat)\\): .*limit\n");
	const_of_shape_chain("const-of-shape-chain.onnx", 16);
	expect("const-of-shape-chain.onnx", "refuse ^node 'c[0-9]+' \\(ConstantOfShape\\): .*limit\n");
	expand_tile_blowup("const-expand-tile-blowup.onnx");
	expect("const-expand-tile-blowup.onnx",
	       "refuse ^node '(expand|tile)' \\((Expand|Tile)\\): .*limit\n");
	gather_empty("const-gather-dims-2p31-1-0.onnx");
	/* an empty constant cannot be a graph output */
	expect("const-gather-dims-2p31-1-0.onnx",
	       "refuse ^(node 'gather' \\(Gather\\): |constant 'y' )\n");
	div_overflow("const-div-int64-min-by-minus-one.onnx");
	expect("const-div-int64-min-by-minus-one.onnx",
	       "# the divisor is -1: the quotient overflows\n"
	       "refuse ^node 'div' \\(Div\\): \n"
	       "refuse-not division by zero\n");
	reshape_overflow("reshape-dims-product-overflow.onnx");
	expect("reshape-dims-product-overflow.onnx", "refuse ^node 'reshape' \\(Reshape\\): \n");
	huge_output("tile-2p32-elements.onnx", "Tile");
	expect("tile-2p32-elements.onnx", "refuse ^node 'Tile' \\(Tile\\): .*limit\n");
	huge_output("expand-2p32-elements.onnx", "Expand");
	expect("expand-2p32-elements.onnx", "refuse ^node 'Expand' \\(Expand\\): .*limit\n");
	huge_output("resize-2p32-elements.onnx", "Resize");
	expect("resize-2p32-elements.onnx", "refuse ^node 'resize' \\(Resize\\): .*limit\n");
	cpu_maxpool_window("cpu-maxpool-65535-window.onnx");
	expect("cpu-maxpool-65535-window.onnx", "refuse pool\n");
	return 0;
}
