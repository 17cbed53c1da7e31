// SPDX-License-Identifier: MIT
/*
 * Structure-aware mutator of fuzz-onnx.  Byte flips almost never get a
 * model past the protobuf parser and the first name lookup, so most of
 * the time the input is unpacked as an ONNX ModelProto (protobuf-c's code
 * generated from Debian's onnx.proto, as libnpu builds it), changed where
 * the importer makes decisions, and packed again:
 *
 *  - nodes: op types the importer knows (and a few it does not), inputs
 *    and outputs rewired to other names, empty or duplicate names, nodes
 *    added, copied, deleted, reordered; domains;
 *  - attributes: the names the importer reads, of every type (ints and
 *    floats at their extremes, strings it matches, tensors, graphs);
 *  - tensors (initializers, Constant values): dims of 0, 1, 2^31, -1,
 *    INT64_MAX, ..., data types, data that does not match the shape, raw
 *    and typed data, extreme values;
 *  - value types: element types, shapes, dim_param, TypeProto nesting;
 *  - If/Loop subgraphs holding copies of the graph; the opset.
 *
 * A quarter of the calls, and every input that does not unpack, go to
 * libFuzzer's byte mutator instead.  Inputs nested deeper than
 * MAX_NESTING messages are never unpacked here (protobuf-c's unpack
 * recurses): they are the importer's problem, not the mutator's.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2,
				 size_t s2, uint8_t *out, size_t max_out,
				 unsigned int seed);

#define MAX_NESTING	40
#define AT(x)		ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##x
#define DT(x)		ONNX__TENSOR_PROTO__DATA_TYPE__##x
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- Randomness ---------------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t below(struct rng *r, size_t n)
{
	return n ? (size_t)(rnd(r) % n) : 0;
}

static bool one_in(struct rng *r, unsigned int n)
{
	return below(r, n) == 0;
}

/* Every allocation failure here is the fuzzer's, not the target's. */
static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		abort();
	return p;
}

static void *xcalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	return strcpy(xcalloc(strlen(s) + 1), s);
}

/* Repeated fields: protobuf-c's arrays, allocated with malloc as it does. */
#define PUSH(arr, n, item) do {						\
	(arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr)));		\
	(arr)[(n)++] = (item);						\
} while (0)

#define INSERT(arr, n, at, item) do {					\
	size_t at_ = (at);						\
	(arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr)));		\
	memmove(&(arr)[at_ + 1], &(arr)[at_], ((n) - at_) * sizeof(*(arr))); \
	(arr)[at_] = (item);						\
	(n)++;								\
} while (0)

#define REMOVE(arr, n, at) do {						\
	size_t at_ = (at);						\
	memmove(&(arr)[at_], &(arr)[at_ + 1], ((n) - at_ - 1) * sizeof(*(arr))); \
	(n)--;								\
} while (0)

/* ---- Values the importer treats specially --------------------------------- */

static const char *const known_ops[] = {
	"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid", "HardSwish",
	"Sqrt", "Reciprocal", "Exp", "Log", "Abs", "Neg", "ReduceMean", "ReduceSum",
	"ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare", "Add", "Sub", "Mul",
	"Div", "Pow", "ConvTranspose", "Max", "Min", "Conv", "MaxPool", "AveragePool",
	"GlobalAveragePool", "GlobalMaxPool", "MatMul", "Gemm", "Softmax",
	"LayerNormalization", "BatchNormalization", "Reshape", "Flatten", "Squeeze",
	"Unsqueeze", "Identity", "Dropout", "Constant", "Shape", "ConstantOfShape",
	"Gather", "Concat", "Cast", "Slice", "Transpose", "Split", "Pad", "Expand",
	"Tile", "DepthToSpace", "SpaceToDepth", "Resize",
	/* not imported: the refusal paths */
	"If", "Loop", "Scan", "Where", "NonZero", "TopK", "", "relu",
};

static const char *const attr_names[] = {
	"axis", "axes", "perm", "kernel_shape", "strides", "pads", "dilations", "group",
	"auto_pad", "to", "value", "value_float", "value_int", "value_floats",
	"value_ints", "mode", "alpha", "beta", "transA", "transB", "keepdims", "epsilon",
	"blocksize", "starts", "ends", "split", "allowzero", "min", "max", "storage_order",
	"ceil_mode", "count_include_pad", "output_padding", "output_shape",
	"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
	"exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "start",
	"end", "noop_with_empty_axes", "then_branch", "else_branch", "body", "momentum",
	"training_mode", "select_last_index", "num_outputs",
};

static const char *const attr_strings[] = {
	"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", "constant", "reflect", "edge",
	"wrap", "nearest", "linear", "bilinear", "cubic", "DCR", "CRD", "half_pixel",
	"asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize",
	"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "stretch", "",
};

static const int64_t extreme_ints[] = {
	0, 1, -1, 2, 3, 4, 7, 8, 16, 255, 256, 65535, 65536, INT32_MAX,
	(int64_t)INT32_MAX + 1, UINT32_MAX, (int64_t)UINT32_MAX + 1, INT64_MAX,
	INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, -2, INT32_MIN, 1ll << 26, 1ll << 31,
	1ll << 32, 1ll << 62,
};

static int64_t rand_int(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return extreme_ints[below(r, NELEM(extreme_ints))];
	case 1:
		return (int64_t)rnd(r);
	default:
		return (int64_t)below(r, 10) - 2;
	}
}

/* A dimension: mostly small, sometimes absurd. */
static int64_t rand_dim(struct rng *r)
{
	return one_in(r, 3) ? extreme_ints[below(r, NELEM(extreme_ints))] :
			      (int64_t)below(r, 8) + 1;
}

static float rand_float(struct rng *r)
{
	static const float special[] = {
		0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-7f, 1e30f, -1e30f, 3.4e38f,
		INFINITY, -INFINITY, NAN, 65536.0f, 9.3e18f, 1e-45f,
	};

	if (one_in(r, 2))
		return special[below(r, NELEM(special))];
	return (float)((int64_t)below(r, 2001) - 1000) / 100.0f;
}

static int rand_dtype(struct rng *r)
{
	static const int common[] = { DT(FLOAT), DT(INT64), DT(INT32), DT(UINT8), DT(INT8),
				      DT(FLOAT16), DT(DOUBLE), DT(BOOL), DT(BFLOAT16) };

	if (one_in(r, 8))
		return (int)rand_int(r);
	if (one_in(r, 4))
		return (int)below(r, 20);
	return common[below(r, NELEM(common))];
}

/* ---- Names ------------------------------------------------------------------ */

struct names {
	const char **v;
	size_t n;
};

static void names_add(struct names *ns, const char *s)
{
	if (s)
		PUSH(ns->v, ns->n, s);
}

static void names_of(const Onnx__GraphProto *g, struct names *ns)
{
	size_t i, j;

	for (i = 0; i < g->n_input; i++)
		names_add(ns, g->input[i]->name);
	for (i = 0; i < g->n_output; i++)
		names_add(ns, g->output[i]->name);
	for (i = 0; i < g->n_initializer; i++)
		names_add(ns, g->initializer[i]->name);
	for (i = 0; i < g->n_node; i++) {
		for (j = 0; j < g->node[i]->n_input; j++)
			names_add(ns, g->node[i]->input[j]);
		for (j = 0; j < g->node[i]->n_output; j++)
			names_add(ns, g->node[i]->output[j]);
	}
}

/* A name of @g (existing, so rewiring and duplicates), empty, or new. */
static char *rand_name(struct rng *r, const Onnx__GraphProto *g)
{
	struct names ns = { 0 };
	char buf[32];
	char *s;

	names_of(g, &ns);
	if (ns.n && !one_in(r, 4)) {
		s = xstrdup(ns.v[below(r, ns.n)]);
	} else if (one_in(r, 6)) {
		s = xstrdup("");
	} else {
		snprintf(buf, sizeof(buf), "m%u", (unsigned int)below(r, 1000));
		s = xstrdup(buf);
	}
	free(ns.v);
	return s;
}

/* ---- Tensors ---------------------------------------------------------------- */

static size_t elem_size(int dt)
{
	switch (dt) {
	case DT(DOUBLE): case DT(INT64): case DT(UINT64): return 8;
	case DT(FLOAT): case DT(INT32): case DT(UINT32): return 4;
	case DT(FLOAT16): case DT(BFLOAT16): case DT(INT16): case DT(UINT16): return 2;
	default: return 1;
	}
}

/* Element count of @t's dims, or SIZE_MAX if above @cap (or negative). */
static size_t tensor_count(const Onnx__TensorProto *t, size_t cap)
{
	size_t n = 1, k;

	for (k = 0; k < t->n_dims; k++) {
		if (t->dims[k] < 0 || (t->dims[k] && n > cap / (uint64_t)t->dims[k]))
			return SIZE_MAX;
		n *= (size_t)t->dims[k];
	}
	return n;
}

static void tensor_clear_data(Onnx__TensorProto *t)
{
	free(t->float_data);
	free(t->int32_data);
	free(t->int64_data);
	free(t->double_data);
	free(t->uint64_data);
	free(t->raw_data.data);
	t->float_data = NULL;
	t->int32_data = NULL;
	t->int64_data = NULL;
	t->double_data = NULL;
	t->uint64_data = NULL;
	t->raw_data.data = NULL;
	t->n_float_data = t->n_int32_data = t->n_int64_data = t->n_double_data = 0;
	t->n_uint64_data = 0;
	t->raw_data.len = 0;
	t->has_raw_data = 0;
}

/* @n elements of data in the field @t's data type uses, or as raw bytes. */
static void tensor_fill(struct rng *r, Onnx__TensorProto *t, size_t n)
{
	size_t k;

	tensor_clear_data(t);
	if (one_in(r, 3)) {
		t->has_raw_data = 1;
		t->raw_data.len = n * elem_size(t->data_type);
		t->raw_data.data = xcalloc(t->raw_data.len);
		for (k = 0; k < t->raw_data.len; k++)
			t->raw_data.data[k] = one_in(r, 2) ? 0 : (uint8_t)rnd(r);
		return;
	}
	switch (t->data_type) {
	case DT(FLOAT):
		t->n_float_data = n;
		t->float_data = xcalloc(n * sizeof(float));
		for (k = 0; k < n; k++)
			t->float_data[k] = rand_float(r);
		break;
	case DT(DOUBLE):
		t->n_double_data = n;
		t->double_data = xcalloc(n * sizeof(double));
		for (k = 0; k < n; k++)
			t->double_data[k] = rand_float(r);
		break;
	case DT(UINT32): case DT(UINT64):
		t->n_uint64_data = n;
		t->uint64_data = xcalloc(n * sizeof(uint64_t));
		for (k = 0; k < n; k++)
			t->uint64_data[k] = (uint64_t)rand_int(r);
		break;
	case DT(INT64):
		t->n_int64_data = n;
		t->int64_data = xcalloc(n * sizeof(int64_t));
		for (k = 0; k < n; k++)
			t->int64_data[k] = one_in(r, 2) ? rand_int(r) : (int64_t)below(r, 5);
		break;
	default:
		t->n_int32_data = n;
		t->int32_data = xcalloc(n * sizeof(int32_t));
		for (k = 0; k < n; k++)
			t->int32_data[k] = (int32_t)rand_int(r);
		break;
	}
}

static Onnx__TensorProto *rand_tensor(struct rng *r, const char *name)
{
	Onnx__TensorProto *t = xcalloc(sizeof(*t));
	size_t rank = one_in(r, 8) ? below(r, 10) : below(r, 5), k, n;

	onnx__tensor_proto__init(t);
	if (name)
		t->name = xstrdup(name);
	t->has_data_type = 1;
	t->data_type = one_in(r, 2) ? DT(INT64) : rand_dtype(r);
	t->n_dims = rank;
	t->dims = xcalloc(rank * sizeof(int64_t));
	for (k = 0; k < rank; k++)
		t->dims[k] = one_in(r, 4) ? rand_dim(r) : (int64_t)below(r, 4) + 1;
	n = tensor_count(t, 256);
	if (n == SIZE_MAX || one_in(r, 8))
		n = below(r, 9);
	tensor_fill(r, t, n);
	return t;
}

static void mutate_tensor(struct rng *r, Onnx__TensorProto *t)
{
	size_t n;

	switch (below(r, 7)) {
	case 0:		/* one dim to an extreme */
		if (t->n_dims) {
			t->dims[below(r, t->n_dims)] = rand_dim(r);
			break;
		}
		/* fall through */
	case 1:		/* rank up or down */
		if (t->n_dims && one_in(r, 2)) {
			t->n_dims--;
		} else {
			int64_t d = rand_dim(r);

			INSERT(t->dims, t->n_dims, below(r, t->n_dims + 1), d);
		}
		break;
	case 2:
		t->has_data_type = !one_in(r, 16);
		t->data_type = rand_dtype(r);
		break;
	case 3:		/* data for the shape, or a mismatch */
		n = tensor_count(t, 4096);
		if (n == SIZE_MAX || one_in(r, 3))
			n = below(r, 17);
		tensor_fill(r, t, n);
		break;
	case 4:		/* one value to an extreme */
		if (t->n_int64_data)
			t->int64_data[below(r, t->n_int64_data)] = rand_int(r);
		else if (t->n_float_data)
			t->float_data[below(r, t->n_float_data)] = rand_float(r);
		else if (t->n_int32_data)
			t->int32_data[below(r, t->n_int32_data)] = (int32_t)rand_int(r);
		else if (t->raw_data.len)
			t->raw_data.data[below(r, t->raw_data.len)] = (uint8_t)rnd(r);
		break;
	case 5:
		t->has_data_location = one_in(r, 2);
		t->data_location = (Onnx__TensorProto__DataLocation)below(r, 3);
		break;
	default: {	/* truncate the data */
		if (t->has_raw_data && t->raw_data.len)
			t->raw_data.len = below(r, t->raw_data.len);
		else if (t->n_int64_data)
			t->n_int64_data = below(r, t->n_int64_data);
		else if (t->n_float_data)
			t->n_float_data = below(r, t->n_float_data);
		break;
	}
	}
}

/* ---- Types ------------------------------------------------------------------ */

static Onnx__TypeProto *rand_type(struct rng *r, unsigned int depth);

static Onnx__TensorShapeProto *rand_shape(struct rng *r)
{
	Onnx__TensorShapeProto *s = xcalloc(sizeof(*s));
	size_t rank = one_in(r, 8) ? below(r, 10) : below(r, 5), k;

	onnx__tensor_shape_proto__init(s);
	for (k = 0; k < rank; k++) {
		Onnx__TensorShapeProto__Dimension *d = xcalloc(sizeof(*d));

		onnx__tensor_shape_proto__dimension__init(d);
		if (one_in(r, 6)) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = xstrdup(one_in(r, 2) ? "N" : "batch");
		} else if (!one_in(r, 10)) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = one_in(r, 3) ? rand_dim(r) : (int64_t)below(r, 4) + 1;
		}
		PUSH(s->dim, s->n_dim, d);
	}
	return s;
}

static Onnx__TypeProto *rand_type(struct rng *r, unsigned int depth)
{
	Onnx__TypeProto *t = xcalloc(sizeof(*t));

	onnx__type_proto__init(t);
	if (depth < 8 && one_in(r, 6)) {
		Onnx__TypeProto__Sequence *s = xcalloc(sizeof(*s));

		onnx__type_proto__sequence__init(s);
		s->elem_type = rand_type(r, depth + 1);
		t->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
		t->sequence_type = s;
	} else if (depth < 8 && one_in(r, 8)) {
		Onnx__TypeProto__Optional *o = xcalloc(sizeof(*o));

		onnx__type_proto__optional__init(o);
		o->elem_type = rand_type(r, depth + 1);
		t->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
		t->optional_type = o;
	} else {
		Onnx__TypeProto__Tensor *tt = xcalloc(sizeof(*tt));

		onnx__type_proto__tensor__init(tt);
		tt->has_elem_type = !one_in(r, 16);
		tt->elem_type = one_in(r, 2) ? DT(FLOAT) : rand_dtype(r);
		if (!one_in(r, 8))
			tt->shape = rand_shape(r);
		t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		t->tensor_type = tt;
	}
	return t;
}

static void mutate_type(struct rng *r, Onnx__ValueInfoProto *vi)
{
	Onnx__TypeProto__Tensor *tt;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type || one_in(r, 6)) {
		if (vi->type)
			onnx__type_proto__free_unpacked(vi->type, NULL);
		vi->type = one_in(r, 10) ? NULL : rand_type(r, 0);
		return;
	}
	tt = vi->type->tensor_type;
	switch (below(r, 3)) {
	case 0:
		tt->has_elem_type = 1;
		tt->elem_type = rand_dtype(r);
		break;
	case 1:
		if (tt->shape && tt->shape->n_dim) {
			Onnx__TensorShapeProto__Dimension *d =
				tt->shape->dim[below(r, tt->shape->n_dim)];

			if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
				free(d->dim_param);
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = rand_dim(r);
			break;
		}
		/* fall through */
	default:
		if (tt->shape)
			onnx__tensor_shape_proto__free_unpacked(tt->shape, NULL);
		tt->shape = one_in(r, 8) ? NULL : rand_shape(r);
		break;
	}
}

/* ---- Attributes and subgraphs ---------------------------------------------- */

static void *msg_copy(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = xcalloc(n);
	void *c;

	protobuf_c_message_pack(m, b);
	c = protobuf_c_message_unpack(m->descriptor, NULL, n, b);
	free(b);
	if (!c)
		abort();
	return c;
}

/* A small graph: one node of a known op reading x, writing y. */
static Onnx__GraphProto *rand_graph(struct rng *r, const Onnx__GraphProto *like)
{
	Onnx__GraphProto *g;
	Onnx__NodeProto *n;
	Onnx__ValueInfoProto *vi;

	if (like && !one_in(r, 3))
		return msg_copy(&like->base);
	g = xcalloc(sizeof(*g));
	onnx__graph_proto__init(g);
	n = xcalloc(sizeof(*n));
	onnx__node_proto__init(n);
	n->op_type = xstrdup(known_ops[below(r, NELEM(known_ops))]);
	PUSH(n->input, n->n_input, xstrdup("x"));
	PUSH(n->output, n->n_output, xstrdup("y"));
	PUSH(g->node, g->n_node, n);
	vi = xcalloc(sizeof(*vi));
	onnx__value_info_proto__init(vi);
	vi->name = xstrdup("y");
	vi->type = rand_type(r, 0);
	PUSH(g->output, g->n_output, vi);
	return g;
}

/* An attribute @name of a random type and value (@g: for subgraphs). */
static Onnx__AttributeProto *rand_attr_named(struct rng *r, const char *name,
					     const Onnx__GraphProto *g)
{
	Onnx__AttributeProto *a = xcalloc(sizeof(*a));
	size_t n, k;

	onnx__attribute_proto__init(a);
	a->name = xstrdup(name);
	a->has_type = !one_in(r, 16);
	switch (below(r, 9)) {
	case 0:
		a->type = AT(INT);
		a->has_i = 1;
		a->i = rand_int(r);
		break;
	case 1: case 2:
		a->type = AT(INTS);
		n = one_in(r, 8) ? below(r, 20) : below(r, 5);
		a->n_ints = n;
		a->ints = xcalloc(n * sizeof(int64_t));
		for (k = 0; k < n; k++)
			a->ints[k] = one_in(r, 2) ? rand_int(r) : (int64_t)below(r, 4);
		break;
	case 3:
		a->type = AT(FLOAT);
		a->has_f = 1;
		a->f = rand_float(r);
		break;
	case 4:
		a->type = AT(FLOATS);
		n = below(r, 9);
		a->n_floats = n;
		a->floats = xcalloc(n * sizeof(float));
		for (k = 0; k < n; k++)
			a->floats[k] = rand_float(r);
		break;
	case 5: {
		const char *s = attr_strings[below(r, NELEM(attr_strings))];

		a->type = AT(STRING);
		a->has_s = 1;
		a->s.len = strlen(s);
		a->s.data = (uint8_t *)xstrdup(s);
		break;
	}
	case 6: case 7:
		a->type = AT(TENSOR);
		a->t = rand_tensor(r, NULL);
		break;
	default:
		a->type = AT(GRAPH);
		a->g = rand_graph(r, g);
		break;
	}
	if (one_in(r, 16))
		a->type = (Onnx__AttributeProto__AttributeType)below(r, 16);
	return a;
}

static Onnx__AttributeProto *rand_attr(struct rng *r, const Onnx__GraphProto *g)
{
	return rand_attr_named(r, attr_names[below(r, NELEM(attr_names))], g);
}

/* ---- Nodes ------------------------------------------------------------------ */

static Onnx__NodeProto *rand_node(struct rng *r, const Onnx__GraphProto *g)
{
	Onnx__NodeProto *n = xcalloc(sizeof(*n));
	size_t nin = below(r, 4) + (one_in(r, 8) ? below(r, 8) : 0), k;

	onnx__node_proto__init(n);
	n->op_type = xstrdup(known_ops[below(r, NELEM(known_ops))]);
	for (k = 0; k < nin; k++)
		PUSH(n->input, n->n_input, rand_name(r, g));
	PUSH(n->output, n->n_output, rand_name(r, g));
	for (k = below(r, 3); k > 0; k--)
		PUSH(n->attribute, n->n_attribute, rand_attr(r, g));
	return n;
}

/* A node of @g whose output is a new name that a graph output then reads. */
static void add_node(struct rng *r, Onnx__GraphProto *g)
{
	Onnx__NodeProto *n = rand_node(r, g);

	INSERT(g->node, g->n_node, below(r, g->n_node + 1), n);
	if (one_in(r, 2) && n->output[0][0]) {
		Onnx__ValueInfoProto *vi = xcalloc(sizeof(*vi));

		onnx__value_info_proto__init(vi);
		vi->name = xstrdup(n->output[0]);
		PUSH(g->output, g->n_output, vi);
	}
}

static void rewire(struct rng *r, Onnx__GraphProto *g, Onnx__NodeProto *n)
{
	char ***arr;
	size_t *cnt;

	if (one_in(r, 3)) {
		arr = &n->output;
		cnt = &n->n_output;
	} else {
		arr = &n->input;
		cnt = &n->n_input;
	}
	if (!*cnt || one_in(r, 4)) {
		char *s = rand_name(r, g);

		INSERT(*arr, *cnt, below(r, *cnt + 1), s);
	} else if (one_in(r, 5)) {
		size_t i = below(r, *cnt);

		free((*arr)[i]);
		REMOVE(*arr, *cnt, i);
	} else {
		size_t i = below(r, *cnt);
		char *s = rand_name(r, g);

		free((*arr)[i]);
		(*arr)[i] = s;
	}
}

static void shuffle_nodes(struct rng *r, Onnx__GraphProto *g)
{
	size_t i;

	if (one_in(r, 2)) {
		for (i = g->n_node; i > 1; i--) {
			size_t j = below(r, i);
			Onnx__NodeProto *t = g->node[i - 1];

			g->node[i - 1] = g->node[j];
			g->node[j] = t;
		}
	} else {
		for (i = 0; i < g->n_node / 2; i++) {
			Onnx__NodeProto *t = g->node[i];

			g->node[i] = g->node[g->n_node - 1 - i];
			g->node[g->n_node - 1 - i] = t;
		}
	}
}

static void mutate_node(struct rng *r, Onnx__GraphProto *g, Onnx__NodeProto *n)
{
	Onnx__AttributeProto *a;
	char *s;
	size_t i;

	switch (below(r, 8)) {
	case 0:
		free(n->op_type);
		n->op_type = xstrdup(known_ops[below(r, NELEM(known_ops))]);
		break;
	case 1: case 2:
		rewire(r, g, n);
		break;
	case 3:
		PUSH(n->attribute, n->n_attribute, rand_attr(r, g));
		break;
	case 4: case 5:
		if (!n->n_attribute) {
			PUSH(n->attribute, n->n_attribute, rand_attr(r, g));
			break;
		}
		i = below(r, n->n_attribute);
		a = n->attribute[i];
		if (a->n_ints && one_in(r, 2)) {
			a->ints[below(r, a->n_ints)] = rand_int(r);
		} else if (a->has_i && one_in(r, 2)) {
			a->i = rand_int(r);
		} else if (a->t && one_in(r, 2)) {
			mutate_tensor(r, a->t);
		} else if (a->g && one_in(r, 2) && a->g->n_node) {
			mutate_node(r, a->g, a->g->node[below(r, a->g->n_node)]);
		} else {	/* same name, new type and value */
			n->attribute[i] = rand_attr_named(r, a->name ? a->name : "", g);
			onnx__attribute_proto__free_unpacked(a, NULL);
		}
		break;
	case 6:
		if (n->n_attribute) {
			i = below(r, n->n_attribute);
			onnx__attribute_proto__free_unpacked(n->attribute[i], NULL);
			REMOVE(n->attribute, n->n_attribute, i);
		}
		break;
	default:
		free(n->domain);
		n->domain = one_in(r, 2) ? NULL : xstrdup(one_in(r, 2) ? "ai.onnx" : "com.microsoft");
		s = one_in(r, 2) ? NULL : rand_name(r, g);
		free(n->name);
		n->name = s;
		break;
	}
}

/* Wrap a copy of @g (or a node of it) as the then_branch/body of a new If/Loop node. */
static void nest(struct rng *r, Onnx__GraphProto *g)
{
	Onnx__NodeProto *n = xcalloc(sizeof(*n));
	Onnx__AttributeProto *a = xcalloc(sizeof(*a));
	bool loop = one_in(r, 3);

	onnx__node_proto__init(n);
	onnx__attribute_proto__init(a);
	n->op_type = xstrdup(loop ? "Loop" : "If");
	PUSH(n->input, n->n_input, rand_name(r, g));
	PUSH(n->output, n->n_output, rand_name(r, g));
	a->name = xstrdup(loop ? "body" : one_in(r, 2) ? "then_branch" : "else_branch");
	a->has_type = 1;
	a->type = AT(GRAPH);
	a->g = msg_copy(&g->base);
	PUSH(n->attribute, n->n_attribute, a);
	INSERT(g->node, g->n_node, below(r, g->n_node + 1), n);
}

/* ---- The model ---------------------------------------------------------------- */

static void mutate_io(struct rng *r, Onnx__GraphProto *g)
{
	Onnx__ValueInfoProto ***arr = one_in(r, 2) ? &g->input : &g->output;
	size_t *cnt = arr == &g->input ? &g->n_input : &g->n_output;

	if (!*cnt || one_in(r, 4)) {
		Onnx__ValueInfoProto *vi = xcalloc(sizeof(*vi));

		onnx__value_info_proto__init(vi);
		vi->name = rand_name(r, g);
		vi->type = rand_type(r, 0);
		PUSH(*arr, *cnt, vi);
	} else if (one_in(r, 6)) {
		size_t i = below(r, *cnt);

		onnx__value_info_proto__free_unpacked((*arr)[i], NULL);
		REMOVE(*arr, *cnt, i);
	} else if (one_in(r, 4)) {
		Onnx__ValueInfoProto *vi = (*arr)[below(r, *cnt)];
		char *s = rand_name(r, g);

		free(vi->name);
		vi->name = s;
	} else {
		mutate_type(r, (*arr)[below(r, *cnt)]);
	}
}

static void mutate_initializer(struct rng *r, Onnx__GraphProto *g)
{
	if (!g->n_initializer || one_in(r, 4)) {
		char *name = rand_name(r, g);

		PUSH(g->initializer, g->n_initializer, rand_tensor(r, name));
		free(name);
	} else if (one_in(r, 8)) {
		size_t i = below(r, g->n_initializer);

		onnx__tensor_proto__free_unpacked(g->initializer[i], NULL);
		REMOVE(g->initializer, g->n_initializer, i);
	} else if (one_in(r, 6)) {
		Onnx__TensorProto *t = g->initializer[below(r, g->n_initializer)];
		char *s = rand_name(r, g);

		free(t->name);
		t->name = s;
	} else {
		mutate_tensor(r, g->initializer[below(r, g->n_initializer)]);
	}
}

static void mutate_opset(struct rng *r, Onnx__ModelProto *m)
{
	Onnx__OperatorSetIdProto *o;

	if (!m->n_opset_import || one_in(r, 4)) {
		o = xcalloc(sizeof(*o));
		onnx__operator_set_id_proto__init(o);
		PUSH(m->opset_import, m->n_opset_import, o);
	}
	o = m->opset_import[below(r, m->n_opset_import)];
	o->has_version = !one_in(r, 10);
	o->version = one_in(r, 4) ? rand_int(r) : (int64_t)below(r, 20);
	if (one_in(r, 4)) {
		free(o->domain);
		o->domain = xstrdup(one_in(r, 2) ? "ai.onnx" : one_in(r, 2) ? "" : "ai.onnx.ml");
	}
}

/* A graph to change: the model's, or one nested in an attribute of a node. */
static Onnx__GraphProto *pick_graph(struct rng *r, Onnx__GraphProto *g)
{
	unsigned int depth;

	for (depth = 0; depth < 8 && g->n_node && one_in(r, 6); depth++) {
		Onnx__NodeProto *n = g->node[below(r, g->n_node)];
		size_t i;

		for (i = 0; i < n->n_attribute && !n->attribute[i]->g; i++)
			;
		if (i == n->n_attribute)
			break;
		g = n->attribute[i]->g;
	}
	return g;
}

static void mutate_model(struct rng *r, Onnx__ModelProto *m)
{
	Onnx__GraphProto *g;

	if (!m->graph) {
		m->graph = xcalloc(sizeof(*m->graph));
		onnx__graph_proto__init(m->graph);
	}
	g = pick_graph(r, m->graph);
	switch (below(r, 16)) {
	case 0: case 1: case 2: case 3: case 4:
		if (g->n_node) {
			mutate_node(r, g, g->node[below(r, g->n_node)]);
			break;
		}
		/* fall through */
	case 5:
		add_node(r, g);
		break;
	case 6:
		if (g->n_node) {
			size_t i = below(r, g->n_node);

			onnx__node_proto__free_unpacked(g->node[i], NULL);
			REMOVE(g->node, g->n_node, i);
		}
		break;
	case 7:
		if (g->n_node)	/* a copy: every output defined twice */
			INSERT(g->node, g->n_node, below(r, g->n_node + 1),
			       msg_copy(&g->node[below(r, g->n_node)]->base));
		break;
	case 8:
		shuffle_nodes(r, g);
		break;
	case 9: case 10: case 11:
		mutate_initializer(r, g);
		break;
	case 12: case 13:
		mutate_io(r, g);
		break;
	case 14:
		if (one_in(r, 3))
			nest(r, g);
		else
			mutate_opset(r, m);
		break;
	default:
		m->has_ir_version = 1;
		m->ir_version = one_in(r, 2) ? (int64_t)below(r, 10) : rand_int(r);
		break;
	}
}

/* ---- libFuzzer's entry points ------------------------------------------------ */

static bool read_varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *pos < end; shift += 7) {
		uint8_t b = p[(*pos)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * Is @p a ModelProto nested at most MAX_NESTING messages deep?  A walk of
 * the wire format with an explicit stack; anything malformed is "no".
 */
static bool nesting_ok(const uint8_t *p, size_t len)
{
	struct {
		const ProtobufCMessageDescriptor *desc;
		size_t end;
	} st[MAX_NESTING];
	size_t pos = 0;
	int top = 0;

	st[0].desc = &onnx__model_proto__descriptor;
	st[0].end = len;
	for (;;) {
		const ProtobufCFieldDescriptor *f;
		uint64_t tag, v;

		while (top >= 0 && pos == st[top].end)
			top--;
		if (top < 0)
			return true;
		if (!read_varint(p, st[top].end, &pos, &tag))
			return false;
		switch (tag & 7) {
		case 0:
			if (!read_varint(p, st[top].end, &pos, &v))
				return false;
			break;
		case 1:
		case 5:
			if (st[top].end - pos < ((tag & 7) == 1 ? 8u : 4u))
				return false;
			pos += (tag & 7) == 1 ? 8 : 4;
			break;
		case 2:
			if (!read_varint(p, st[top].end, &pos, &v) || v > st[top].end - pos)
				return false;
			f = tag >> 3 <= UINT32_MAX ?
			    protobuf_c_message_descriptor_get_field(st[top].desc,
								    (unsigned int)(tag >> 3)) : NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (top + 1 == MAX_NESTING)
					return false;
				top++;
				st[top].desc = (const ProtobufCMessageDescriptor *)f->descriptor;
				st[top].end = pos + (size_t)v;
			} else {
				pos += (size_t)v;
			}
			break;
		default:
			return false;
		}
	}
}

static Onnx__ModelProto *unpack(const uint8_t *data, size_t size)
{
	return nesting_ok(data, size) ? onnx__model_proto__unpack(NULL, size, data) : NULL;
}

/* Pack @m into @out if it fits in @max bytes; 0 if not. */
static size_t pack(const Onnx__ModelProto *m, uint8_t *out, size_t max)
{
	size_t n = onnx__model_proto__get_packed_size(m);

	return n <= max ? onnx__model_proto__pack(m, out) : 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct rng r = { .s = seed };
	Onnx__ModelProto *m;
	size_t n = 0;
	unsigned int k;

	if (one_in(&r, 4) || !(m = unpack(data, size)))
		return LLVMFuzzerMutate(data, size, max_size);
	for (k = 1 + (unsigned int)below(&r, 3); k > 0; k--)
		mutate_model(&r, m);
	n = pack(m, data, max_size);
	onnx__model_proto__free_unpacked(m, NULL);
	return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

/*
 * Nodes, initializers, graph inputs or the whole graph of @d2 grafted into
 * @d1's graph.
 */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2,
				 size_t s2, uint8_t *out, size_t max_out,
				 unsigned int seed)
{
	struct rng r = { .s = seed };
	Onnx__ModelProto *a = unpack(d1, s1), *b = a ? unpack(d2, s2) : NULL;
	Onnx__GraphProto *ga, *gb;
	size_t n = 0, i, cnt;

	if (!a || !b || !a->graph || !b->graph)
		goto out;
	ga = pick_graph(&r, a->graph);
	gb = b->graph;
	switch (below(&r, 4)) {
	case 0:
		for (cnt = 1 + below(&r, 4); cnt > 0 && gb->n_node; cnt--)
			INSERT(ga->node, ga->n_node, below(&r, ga->n_node + 1),
			       msg_copy(&gb->node[below(&r, gb->n_node)]->base));
		break;
	case 1:
		for (i = 0; i < gb->n_initializer && i < 4; i++)
			PUSH(ga->initializer, ga->n_initializer,
			     msg_copy(&gb->initializer[below(&r, gb->n_initializer)]->base));
		break;
	case 2:
		for (i = 0; i < gb->n_input && i < 4; i++)
			PUSH(ga->input, ga->n_input, msg_copy(&gb->input[i]->base));
		break;
	default: {
		Onnx__AttributeProto *at = xcalloc(sizeof(*at));
		Onnx__NodeProto *host;

		onnx__attribute_proto__init(at);
		at->name = xstrdup("then_branch");
		at->has_type = 1;
		at->type = AT(GRAPH);
		at->g = msg_copy(&gb->base);
		if (!ga->n_node)
			add_node(&r, ga);
		host = ga->node[below(&r, ga->n_node)];
		PUSH(host->attribute, host->n_attribute, at);
		break;
	}
	}
	n = pack(a, out, max_out);
out:
	if (a)
		onnx__model_proto__free_unpacked(a, NULL);
	if (b)
		onnx__model_proto__free_unpacked(b, NULL);
	return n;
}
