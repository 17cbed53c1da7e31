// SPDX-License-Identifier: MIT
/*
 * ONNX model import into an npu_graph.
 *
 * Every ONNX tensor name becomes a symbol: either a constant held here
 * (initializers, Constant nodes, and whatever integer shape arithmetic
 * computes from them), or a graph value.  Constants become static graph
 * values only when a compute node reads them, so int64 shape tensors
 * never reach the graph.  Nodes are visited in dependency order (Kahn's
 * algorithm over the names), which also finds cycles and dangling names;
 * each op handler checks its inputs, infers its output shape and adds
 * graph nodes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "onnx_wire.h"
#include "ok_util.h"

/* struct oi_names values of imp.reads */
#define READ_BY_NODE	1u
#define GRAPH_OUTPUT	2u
#define OUTPUT_FLOAT16	4u	/* a graph output the model types float16 */
#define READ_BY_FP16	8u	/* read by a node with a float16 kernel (onnx_fp16.c) */

__attribute__((format(printf, 2, 3)))
int oi_fail(struct imp *im, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (im->err && im->err_size) {
		if (im->node) {
			const Onnx__NodeProto *n = im->node;
			/* an unnamed node is known by its first output, else its index */
			const char *nm = n->name && *n->name ? n->name :
					 n->n_output && n->output[0] ? n->output[0] : "";
			size_t idx = 0;

			while (im->gp && idx < im->gp->n_node && im->gp->node[idx] != n)
				idx++;
			if (*nm)
				snprintf(im->err, im->err_size, "node '%s' (%s): %s", nm,
					 n->op_type ? n->op_type : "?", msg);
			else
				snprintf(im->err, im->err_size, "node #%zu (%s): %s", idx,
					 n->op_type ? n->op_type : "?", msg);
		}
		else
			snprintf(im->err, im->err_size, "%s", msg);
	}
	return -EINVAL;
}

int oi_nomem(struct imp *im)
{
	oi_fail(im, "out of memory");
	return -ENOMEM;
}

int oi_fold_fail(struct imp *im, int ret)
{
	char msg[256];

	if (ret == -EDQUOT) {
		oi_fail(im, "folded constants would reach %" PRIu64 " bytes, over the limit of %" PRIu64 " (npu_onnx_options.max_const_bytes)",
			im->consts.want, im->consts.limit);
		return -E2BIG;
	}
	if (ret == -ENOMEM)
		return oi_nomem(im);
	if (ret == -E2BIG)
		return oi_fail(im, "the result has more than 2^31 elements");
	snprintf(msg, sizeof(msg), "%s", im->err && im->err_size && *im->err ? im->err :
		 "cannot evaluate");
	return oi_fail(im, "%s", msg);
}

int oi_check_value_size(struct imp *im, const char *name, enum npu_dtype dt,
			uint32_t rank, const uint32_t *dims)
{
	uint64_t bytes = npu_dtype_size(dt);
	char shape[12 * NPU_TENSOR_MAX_RANK + 4] = "[";
	bool over = false;
	uint32_t i;

	for (i = 0; i < rank && i < NPU_TENSOR_MAX_RANK; i++)
		over |= __builtin_mul_overflow(bytes, dims[i], &bytes);
	if (!over && bytes <= im->lim.max_value_bytes)
		return 0;
	for (i = 0; i < rank && i < NPU_TENSOR_MAX_RANK; i++)
		snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%u",
			 i ? "," : "", dims[i]);
	strcat(shape, "]");
	if (over)
		oi_fail(im, "tensor '%s' of shape %s would take more than 2^64 bytes, over the limit of %" PRIu64 " (npu_onnx_options.max_value_bytes)",
			name ? name : "", shape, im->lim.max_value_bytes);
	else
		oi_fail(im, "tensor '%s' of shape %s would take %" PRIu64 " bytes, over the limit of %" PRIu64 " (npu_onnx_options.max_value_bytes)",
			name ? name : "", shape, bytes, im->lim.max_value_bytes);
	return -E2BIG;
}

/* ---- Symbols ------------------------------------------------------------ */

#define SYM_BLOCK	256u

static struct sym *sym_at(const struct imp *im, size_t i)
{
	return &im->blocks[i / SYM_BLOCK][i % SYM_BLOCK];
}

struct sym *oi_lookup(struct imp *im, const char *name)
{
	size_t i;

	if (!name || !im->tcap)
		return NULL;
	for (i = oi_name_hash(name) & (im->tcap - 1); im->table[i];
	     i = (i + 1) & (im->tcap - 1))
		if (!strcmp(sym_at(im, im->table[i] - 1)->name, name))
			return sym_at(im, im->table[i] - 1);
	return NULL;
}

static int rehash(struct imp *im, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));
	size_t i, j;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < im->nsyms; i++) {
		for (j = oi_name_hash(sym_at(im, i)->name) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = (uint32_t)i + 1;
	}
	free(im->table);
	im->table = t;
	im->tcap = cap;
	return 0;
}

/* A new symbol @name; -EEXIST if the name is taken (SSA violated). */
int oi_add_sym(struct imp *im, const char *name, struct sym **out)
{
	struct sym *s;

	if (!name || !*name)
		return oi_fail(im, "a tensor without a name");
	if (oi_lookup(im, name))
		return oi_fail(im, "tensor '%s' is defined twice", name);
	if (im->nsyms >= UINT32_MAX / 4)
		return oi_fail(im, "too many tensors");
	if (im->nsyms == im->nblocks * SYM_BLOCK) {
		struct sym **nb = realloc(im->blocks, (im->nblocks + 1) * sizeof(*nb));

		if (!nb)
			return oi_nomem(im);
		im->blocks = nb;
		nb[im->nblocks] = malloc(SYM_BLOCK * sizeof(**nb));
		if (!nb[im->nblocks])
			return oi_nomem(im);
		im->nblocks++;
	}
	if (2 * (im->nsyms + 1) > im->tcap && rehash(im, im->tcap ? 2 * im->tcap : 128))
		return oi_nomem(im);
	s = sym_at(im, im->nsyms);
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return oi_nomem(im);
	s->value = NPU_VALUE_NONE;
	s->kvalue = NPU_VALUE_NONE;
	{
		size_t j;

		for (j = oi_name_hash(name) & (im->tcap - 1); im->table[j]; j = (j + 1) & (im->tcap - 1))
			;
		im->table[j] = (uint32_t)im->nsyms + 1;
	}
	im->nsyms++;
	*out = s;
	return 0;
}

static bool is_output_name(const struct imp *im, const char *name)
{
	const uint32_t *f = oi_names_get(&im->reads, name);

	return f && (*f & GRAPH_OUTPUT);
}

bool oi_is_graph_output(const struct imp *im, const char *name)
{
	return is_output_name(im, name);
}

bool oi_is_read_by_fp16_node(const struct imp *im, const char *name)
{
	const uint32_t *f = oi_names_get(&im->reads, name);

	return f && (*f & READ_BY_FP16);
}

static bool is_float16_output(const struct imp *im, const char *name)
{
	const uint32_t *f = oi_names_get(&im->reads, name);

	return f && (*f & OUTPUT_FLOAT16);
}

/* ---- Graph values ----------------------------------------------------------- */

/* A new graph value for symbol @s (a node output) of @dtype and shape. */
int oi_new_value(struct imp *im, struct sym *s, enum npu_dtype dt,
		 uint32_t rank, const uint32_t *dims)
{
	return oi_new_qvalue(im, s, dt, 0.0f, 0, rank, dims);
}

int oi_new_qvalue(struct imp *im, struct sym *s, enum npu_dtype dt, float scale, int32_t zp,
		  uint32_t rank, const uint32_t *dims)
{
	struct npu_value_desc d = { .size = sizeof(d), .name = s->name, .dtype = dt, .rank = rank,
				    .scale = scale, .zero_point = zp };
	int ret;

	if (rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "rank %u above %d", rank, NPU_TENSOR_MAX_RANK);
	ret = oi_check_value_size(im, s->name, dt, rank, dims);
	if (ret)
		return ret;
	memcpy(d.dims, dims, 4ull * rank);
	/* a float16 output computed in float32 gets its own value (bind_output) */
	if (is_output_name(im, s->name) && !(dt == NPU_DTYPE_FP32 && is_float16_output(im, s->name)))
		d.flags = NPU_VALUE_OUTPUT;
	ret = npu_graph_add_value(im->m->g, &d, &s->value);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) :
			oi_fail(im, "tensor '%s': %s", s->name, npu_graph_error(im->m->g));
	s->dtype = dt;
	s->rank = rank;
	memcpy(s->dims, dims, 4ull * rank);
	return 0;
}

/* An anonymous intermediate value (for rewrites inside one node). */
int oi_tmp_value(struct imp *im, enum npu_dtype dt, uint32_t rank,
		 const uint32_t *dims, uint32_t *id)
{
	return oi_tmp_qvalue(im, dt, 0.0f, 0, rank, dims, id);
}

int oi_tmp_qvalue(struct imp *im, enum npu_dtype dt, float scale, int32_t zp, uint32_t rank,
		  const uint32_t *dims, uint32_t *id)
{
	struct npu_value_desc d = { .size = sizeof(d), .dtype = dt, .rank = rank,
				    .scale = scale, .zero_point = zp };
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "onnx-tmp-%u", im->tmp_count++);
	if (rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "rank %u above %d", rank, NPU_TENSOR_MAX_RANK);
	ret = oi_check_value_size(im, name, dt, rank, dims);
	if (ret)
		return ret;
	d.name = name;
	memcpy(d.dims, dims, 4ull * rank);
	ret = npu_graph_add_value(im->m->g, &d, id);
	return ret ? oi_fail(im, "%s", npu_graph_error(im->m->g)) : 0;
}

/* The graph value of symbol @s, making a static one from a constant. */
int oi_value_of(struct imp *im, struct sym *s, uint32_t *id)
{
	struct npu_value_desc d = { .size = sizeof(d), .name = s->name };
	void *data = NULL;
	uint64_t i;
	int ret;

	/* a fixed input's value is the runtime input; its constant is static */
	if (s->fixed && s->has_svalue) {
		*id = s->svalue;
		return 0;
	}
	if (s->value != NPU_VALUE_NONE && !s->fixed) {
		*id = s->value;
		return 0;
	}
	if (!s->is_const)
		return oi_fail(im, "tensor '%s' has no value", s->name);
	if (s->c.rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "constant '%s' has rank %u, above %d", s->name, s->c.rank,
			    NPU_TENSOR_MAX_RANK);
	d.rank = s->c.rank;
	for (i = 0; i < s->c.rank; i++) {
		if (s->c.dims[i] < 1 || s->c.dims[i] > UINT32_MAX)
			return oi_fail(im, "constant '%s' has an empty or huge dimension", s->name);
		d.dims[i] = (uint32_t)s->c.dims[i];
	}
	switch (s->c.dt) {
	case OT_FLOAT: case OT_DOUBLE: case OT_FLOAT16:
		d.dtype = NPU_DTYPE_FP32;
		d.data = s->c.f;
		break;
	case OT_INT8: case OT_UINT8: case OT_INT32:
		d.dtype = s->c.dt == OT_INT8 ? NPU_DTYPE_INT8 :
			  s->c.dt == OT_UINT8 ? NPU_DTYPE_UINT8 : NPU_DTYPE_INT32;
		data = malloc(s->c.n * npu_dtype_size(d.dtype) + 1);
		if (!data)
			return oi_nomem(im);
		for (i = 0; i < s->c.n; i++) {
			if (d.dtype == NPU_DTYPE_INT32)
				((int32_t *)data)[i] = (int32_t)s->c.i[i];
			else
				((uint8_t *)data)[i] = (uint8_t)s->c.i[i];
		}
		d.data = data;
		break;
	default:
		return oi_fail(im, "constant '%s' of type %s cannot be an operand of a device op",
			    s->name, onnx_type_name(s->c.dt));
	}
	ret = oi_check_value_size(im, s->name, d.dtype, d.rank, d.dims);
	if (ret) {
		free(data);
		return ret;
	}
	if (s->fixed) {
		ret = npu_graph_add_value(im->m->g, &d, &s->svalue);
		free(data);
		if (ret)
			return ret == -ENOMEM ? oi_nomem(im) :
				oi_fail(im, "constant '%s': %s", s->name, npu_graph_error(im->m->g));
		s->has_svalue = true;
		*id = s->svalue;
		return 0;
	}
	ret = npu_graph_add_value(im->m->g, &d, &s->value);
	free(data);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) :
			oi_fail(im, "constant '%s': %s", s->name, npu_graph_error(im->m->g));
	s->dtype = d.dtype;
	s->rank = d.rank;
	memcpy(s->dims, d.dims, sizeof(s->dims));
	*id = s->value;
	return 0;
}

enum npu_rounding oi_rounding(const struct imp *im)
{
	const struct npu_onnx_options *o = im->opts;

	if (!o || o->size < offsetof(struct npu_onnx_options, rounding) + sizeof(o->rounding))
		return NPU_ROUND_ONNX;
	return (enum npu_rounding)o->rounding;
}

int oi_add_node(struct imp *im, const struct oi_node *d)
{
	struct npu_node_desc nd = NPU_NODE_DESC_INIT;
	struct npu_op_params op = d->op;
	int ret;

	uint64_t max = (uint64_t)im->lim.max_nodes * GRAPH_NODES_PER_NODE +
		       (im->gp ? im->gp->n_output : 0);

	if (npu_graph_num_nodes(im->m->g) >= max)
		return oi_fail(im, "graph nodes would exceed %" PRIu64 ", %u per ONNX node of the limit of %u (npu_onnx_options.max_nodes)",
			       max, GRAPH_NODES_PER_NODE, im->lim.max_nodes);
	op.size = sizeof(op);
	/* onnxruntime's QLinear arithmetic is the op's own, not a rounding choice */
	if (d->kind == NPU_NODE_OP && op.round != NPU_ROUND_ORT_QLINEAR)
		op.round = oi_rounding(im);
	nd.name = d->name;
	nd.kind = d->kind;
	nd.flags = d->flags;
	nd.op = d->kind == NPU_NODE_OP ? &op : NULL;
	nd.epsilon = d->epsilon;
	memcpy(nd.slice.start, d->slice.start, sizeof(nd.slice.start));
	memcpy(nd.slice.step, d->slice.step, sizeof(nd.slice.step));
	nd.num_inputs = d->num_inputs;
	nd.inputs = d->inputs;
	nd.output = d->output;
	ret = npu_graph_add_node(im->m->g, &nd, NULL);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) : oi_fail(im, "%s", npu_graph_error(im->m->g));
	return 0;
}

/* ---- Node context ----------------------------------------------------------- */


const Onnx__AttributeProto *oi_attr(const struct nctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n->n_attribute; i++)
		if (c->n->attribute[i]->name && !strcmp(c->n->attribute[i]->name, name))
			return c->n->attribute[i];
	return NULL;
}

int64_t oi_attr_i(const struct nctx *c, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = oi_attr(c, name);

	return a && a->has_i ? a->i : def;
}

float oi_attr_f(const struct nctx *c, const char *name, float def)
{
	const Onnx__AttributeProto *a = oi_attr(c, name);

	return a && a->has_f ? a->f : def;
}

/* Up to @max ints of attribute @name; returns the count, -1 if absent. */
int oi_attr_ints(const struct nctx *c, const char *name, int64_t *v, size_t max)
{
	const Onnx__AttributeProto *a = oi_attr(c, name);
	size_t i;

	if (!a)
		return -1;
	if (a->n_ints > max)
		return -2;
	for (i = 0; i < a->n_ints; i++)
		v[i] = a->ints[i];
	return (int)a->n_ints;
}

const char *oi_attr_s(const struct nctx *c, const char *name, char *buf, size_t size)
{
	const Onnx__AttributeProto *a = oi_attr(c, name);
	size_t n;

	if (!a || !a->has_s)
		return NULL;
	n = a->s.len < size - 1 ? a->s.len : size - 1;
	memcpy(buf, a->s.data, n);
	buf[n] = 0;
	return buf;
}

/* The runtime (non-constant) input @i, else an error. */
int oi_need_in(struct nctx *c, size_t i, struct sym **s)
{
	if (i >= c->nin || !c->in[i])
		return oi_fail(c->im, "input %zu is required", i);
	*s = c->in[i];
	return 0;
}

bool oi_name_used(const struct imp *im, const char *name)
{
	return oi_names_get(&im->reads, name) != NULL;
}

int oi_out_sym(struct nctx *c, struct sym **s)
{
	size_t i;

	if (!c->n->n_output || !c->n->output[0] || !*c->n->output[0])
		return oi_fail(c->im, "no output");
	/* optional outputs (Mean, Indices, mask, ...) are fine if nobody reads them */
	for (i = 1; i < c->n->n_output; i++)
		if (c->n->output[i] && *c->n->output[i] && oi_name_used(c->im, c->n->output[i]))
			return oi_fail(c->im, "output %zu ('%s') is not supported, only the first output",
				    i, c->n->output[i]);
	return oi_add_sym(c->im, c->n->output[0], s);
}

/* Shape of a symbol, constant or not. */
int oi_sym_shape(struct nctx *c, const struct sym *s, uint32_t *rank, uint32_t *dims)
{
	uint32_t i;

	if (!s->is_const) {
		*rank = s->rank;
		memcpy(dims, s->dims, 4ull * s->rank);
		return 0;
	}
	if (s->c.rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(c->im, "constant '%s' has rank %u, above %d", s->name, s->c.rank,
			    NPU_TENSOR_MAX_RANK);
	for (i = 0; i < s->c.rank; i++) {
		if (s->c.dims[i] < 1 || s->c.dims[i] > UINT32_MAX)
			return oi_fail(c->im, "constant '%s' has an empty or huge dimension", s->name);
		dims[i] = (uint32_t)s->c.dims[i];
	}
	*rank = s->c.rank;
	return 0;
}

enum npu_dtype oi_sym_dtype(const struct sym *s)
{
	if (!s->is_const)
		return s->dtype;
	switch (s->c.dt) {
	case OT_INT8: return NPU_DTYPE_INT8;
	case OT_UINT8: return NPU_DTYPE_UINT8;
	case OT_INT32: return NPU_DTYPE_INT32;
	case OT_FLOAT: case OT_DOUBLE: case OT_FLOAT16: return NPU_DTYPE_FP32;
	default: return 0;
	}
}

/* numpy broadcasting of two shapes */
int oi_broadcast(struct nctx *c, uint32_t ra, const uint32_t *a, uint32_t rb,
		 const uint32_t *b, uint32_t *r, uint32_t *out)
{
	uint32_t n = ra > rb ? ra : rb, i;

	for (i = 0; i < n; i++) {
		uint32_t x = i + ra >= n ? a[i + ra - n] : 1;
		uint32_t y = i + rb >= n ? b[i + rb - n] : 1;

		if (x != y && x != 1 && y != 1)
			return oi_fail(c->im, "shapes do not broadcast (dimension %u: %u vs %u)", i, x, y);
		out[i] = x == 1 ? y : x;
	}
	*r = n;
	return 0;
}

/* A node of kind @kind with @in inputs writing the new output symbol. */
int oi_emit(struct nctx *c, const struct oi_node *tmpl, const uint32_t *in,
	    uint32_t nin, enum npu_dtype dt, uint32_t rank, const uint32_t *dims)
{
	struct oi_node d = *tmpl;
	struct sym *o;
	int ret = oi_out_sym(c, &o);

	if (!ret)
		ret = oi_new_value(c->im, o, dt, rank, dims);
	if (ret)
		return ret;
	d.name = c->name;
	d.inputs = in;
	d.num_inputs = nin;
	d.output = o->value;
	return oi_add_node(c->im, &d);
}

/*
 * onnxruntime's CPU provider has no float16 arithmetic on x86-64: it runs
 * a float16 node in float32 between conversions it inserts, then drops
 * every float32 -> float16 -> float32 pair of casts, its own and the
 * model's alike (InsertCastTransformer, RemoveDuplicateCastTransformer).
 * A float16 model is so computed in float32 throughout and rounds to
 * float16 only at the outputs it types float16, even where it casts to
 * float16 itself (measured with onnxruntime 1.20: Cast(to float16) ->
 * Add -> Mul -> Cast(to float) gives the float32 result, unrounded).
 * libnpu computes the same way: a float16 graph input or kernel result
 * is converted to float32 once (exactly), here, and the nodes that read
 * it read that; a Cast between the two is none (oi_op_cast());
 * bind_output() rounds what the model types float16.  Rounding each
 * node's result to float16 instead was up to 1.3e-3 off onnxruntime.
 */
/* A node of @kind reading @in and writing a new value of @dt and shape. */
static int add_tmp_node(struct imp *im, enum npu_node_kind kind, const char *name, uint32_t in,
			enum npu_dtype dt, uint32_t rank, const uint32_t *dims, uint32_t *out)
{
	struct oi_node d = { .kind = kind, .name = name };
	int ret = oi_tmp_value(im, dt, rank, dims, out);

	if (ret)
		return ret;
	if (kind == NPU_NODE_OP)
		d.op.kind = NPU_OP_COPY;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = *out;
	return oi_add_node(im, &d);
}

/*
 * @in converted to @dt by a COPY (which moves at least one dimension: a
 * scalar goes through shape [1]) into a new value; the last node writes
 * *@out, made by @final when it is not NULL (a graph output).
 */
int oi_convert_value(struct imp *im, const char *name, uint32_t in, enum npu_dtype from,
		     enum npu_dtype dt, uint32_t rank, const uint32_t *dims, uint32_t *out)
{
	static const uint32_t one = 1;
	int ret = 0;

	if (!rank)
		ret = add_tmp_node(im, NPU_NODE_RESHAPE, name, in, from, 1, &one, &in);
	if (!ret)
		ret = add_tmp_node(im, NPU_NODE_OP, name, in, dt, rank ? rank : 1, rank ? dims : &one,
				   out);
	if (!ret && !rank)
		ret = add_tmp_node(im, NPU_NODE_RESHAPE, name, *out, dt, 0, &one, out);
	return ret;
}

int oi_widen_fp16(struct imp *im, struct sym *s)
{
	uint32_t wide;
	int ret;

	if (!s || s->is_const || s->widened || s->dtype != NPU_DTYPE_FP16)
		return 0;
	ret = oi_convert_value(im, s->name, s->value, NPU_DTYPE_FP16, NPU_DTYPE_FP32, s->rank, s->dims,
			    &wide);
	if (ret)
		return ret;
	s->fp16_value = s->value;
	s->value = wide;
	s->dtype = NPU_DTYPE_FP32;
	s->widened = true;
	s->fp16_typed = true;
	s->fp16_exact = true;
	return 0;
}

/* ---- Model ------------------------------------------------------------------------ */

/* Tensor @t, given for input @name, as the constant of symbol @s. */
static int set_constant(struct imp *im, struct sym *s, const char *name,
			const struct npu_onnx_tensor *t)
{
	size_t es = npu_dtype_size((enum npu_dtype)t->dtype);
	uint64_t n = 1, k;
	uint32_t i;

	if (t->rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "constant input '%s': rank %u", name, t->rank);
	for (i = 0; i < t->rank; i++)
		if (__builtin_mul_overflow(n, t->dims[i], &n))
			n = UINT64_MAX;
	if (!es || n > MAX_CONST_ELEMS || n * es != t->bytes || (n && !t->data))
		return oi_fail(im, "constant input '%s': %" PRIu64 " bytes do not hold its %" PRIu64 " elements",
			       name, t->bytes, n);
	{
		/* every dtype, through the kernels' element access */
		struct npu_kernel_tensor kt = { .dtype = (enum npu_dtype)t->dtype,
						.data = t->data };
		bool fl = ok_is_float(kt.dtype);

		s->c.dt = oi_onnx_of_dtype(kt.dtype);
		s->c.n = n;
		if (fl)
			s->c.f = malloc(n * sizeof(float) + 1);
		else
			s->c.i = malloc(n * sizeof(int64_t) + 1);
		if (fl ? !s->c.f : !s->c.i)
			return oi_nomem(im);
		for (k = 0; k < n; k++) {
			if (fl)
				s->c.f[k] = (float)ok_get_f(&kt, k);
			else
				s->c.i[k] = ok_get_i(&kt, k);
		}
	}
	s->c.rank = t->rank;
	for (i = 0; i < t->rank; i++)
		s->c.dims[i] = t->dims[i];
	s->is_const = true;
	return 0;
}

/* A graph input the caller fixed (npu_onnx_options.constants). */
static int bind_constant(struct imp *im, const char *name,
			 const struct npu_onnx_tensor *t)
{
	struct sym *s;
	int ret = oi_add_sym(im, name, &s);

	return ret ? ret : set_constant(im, s, name, t);
}

/* npu_onnx_options.values, when the caller's options have the field. */
static const struct npu_onnx_tensor *known_value(const struct imp *im, const char *name)
{
	const struct npu_onnx_options *o = im->opts;
	size_t i;

	if (!o || o->size < offsetof(struct npu_onnx_options, num_values) + sizeof(o->num_values))
		return NULL;
	for (i = 0; i < o->num_values; i++)
		if (o->values[i].name[0] && !strcmp(o->values[i].name, name))
			return &o->values[i];
	return NULL;
}

int oi_fix_inputs(struct nctx *c, size_t from, size_t to)
{
	struct imp *im = c->im;
	int fixed = 0, ret;
	size_t i;

	for (i = from; i < c->nin && i < to; i++) {
		struct sym *s = c->in[i];
		const struct npu_onnx_tensor *t;

		if (!s || s->is_const || !s->graph_input || !(t = known_value(im, s->name)))
			continue;
		if (t->dtype != (int)s->dtype || t->rank != s->rank ||
		    memcmp(t->dims, s->dims, 4ull * s->rank))
			return oi_fail(im, "the value given for input '%s' does not have its dtype and shape",
				       s->name);
		ret = set_constant(im, s, s->name, t);
		if (ret)
			return ret;
		s->fixed = true;
		fixed++;
	}
	return fixed;
}

uint64_t oi_elems(uint32_t rank, const uint32_t *dims)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < rank; i++)
		n *= dims[i];
	return n;
}

int oi_set_empty(struct imp *im, struct sym *s, enum npu_dtype dt, uint32_t rank,
		 const uint32_t *dims)
{
	uint32_t i;

	s->c.dt = oi_onnx_of_dtype(dt);
	s->c.rank = rank;
	for (i = 0; i < rank; i++)
		s->c.dims[i] = dims[i];
	s->c.n = 0;
	/* never NULL: readers pass it to memcpy() with 0 bytes */
	if (ok_is_float(dt))
		s->c.f = malloc(1);
	else
		s->c.i = malloc(1);
	if (ok_is_float(dt) ? !s->c.f : !s->c.i)
		return oi_nomem(im);
	s->is_const = true;
	return 0;
}

/*
 * Input @vi of a rank above libnpu's limit, held folded (onnx_rank.c):
 * its dimensions must be fixed, and a given shape (which cannot have that
 * rank) must be the folded one, as npu_onnx_tensor_load() reads a file.
 */
static int bind_high_rank_input(struct imp *im, const Onnx__ValueInfoProto *vi,
				const struct npu_onnx_shape *given, struct npu_value_desc *d)
{
	const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
	int64_t ld[CT_MAX_RANK];
	struct sym *s;
	uint32_t r = (uint32_t)sh->n_dim, i;
	int ret;

	if (r > CT_MAX_RANK)
		return oi_fail(im, "input '%s' has rank %u, above the limit of %d", vi->name, r,
			       CT_MAX_RANK);
	for (i = 0; i < r; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = sh->dim[i];

		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			ld[i] = dm->dim_value;
		else if (im->opts && im->opts->unbound_dims_are_one)
			ld[i] = 1;
		else
			return oi_fail(im, "input '%s': dimension %u is dynamic, which is not supported above rank %d",
				       vi->name, i, NPU_TENSOR_MAX_RANK);
		if (ld[i] < 1 || ld[i] > UINT32_MAX)
			return oi_fail(im, "input '%s': bad dimension %" PRId64 " (empty tensors are not supported above rank %d)",
				       vi->name, ld[i], NPU_TENSOR_MAX_RANK);
	}
	if (oi_fold_dims(r, ld, &d->rank, d->dims))
		return oi_fail(im, "input '%s': its dimensions from the sixth on hold more than %u elements",
			       vi->name, UINT32_MAX);
	/* a given shape cannot have this rank: it is the folded one, as a file's */
	for (i = 0; given && i < d->rank; i++)
		if (given->rank != d->rank || given->dims[i] != d->dims[i])
			return oi_fail(im, "input '%s' has rank %u: the given shape must be its folded one, of rank %d",
				       vi->name, r, NPU_TENSOR_MAX_RANK);
	ret = oi_check_value_size(im, vi->name, d->dtype, d->rank, d->dims);
	if (!ret)
		ret = oi_add_sym(im, vi->name, &s);
	if (ret)
		return ret;
	d->name = vi->name;
	d->flags = NPU_VALUE_INPUT;
	ret = npu_graph_add_value(im->m->g, d, &s->value);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) :
			oi_fail(im, "input '%s': %s", vi->name, npu_graph_error(im->m->g));
	s->dtype = d->dtype;
	s->rank = d->rank;
	memcpy(s->dims, d->dims, sizeof(s->dims));
	s->graph_input = true;
	s->lrank = r;
	for (i = 0; i < r; i++)
		s->ldims[i] = (uint32_t)ld[i];
	return 0;
}

static int bind_input(struct imp *im, const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto__Tensor *tt;
	const struct npu_onnx_shape *given = NULL;
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	struct sym *s;
	size_t i;
	int ret;

	if (!vi->name || !*vi->name)
		return oi_fail(im, "a graph input without a name");
	if (oi_lookup(im, vi->name))
		return 0;	/* an initializer: a constant, not an input */
	for (i = 0; im->opts && i < im->opts->num_constants; i++)
		if (!strcmp(im->opts->constants[i].name, vi->name))
			return bind_constant(im, vi->name, &im->opts->constants[i]);
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type)
		return oi_fail(im, "input '%s' is not a tensor", vi->name);
	tt = vi->type->tensor_type;
	d.dtype = onnx_npu_dtype(tt->elem_type);
	if (!d.dtype)
		return oi_fail(im, "input '%s' has element type %s, which is not supported",
			       vi->name, onnx_type_name(tt->elem_type));
	{
		const uint32_t *k = oi_names_get(&im->shape_index, vi->name);

		given = k ? &im->opts->shapes[*k] : NULL;
	}
	if (!tt->shape && !given)
		return oi_fail(im, "input '%s' has no shape; give one", vi->name);
	if (tt->shape && tt->shape->n_dim > NPU_TENSOR_MAX_RANK)
		return bind_high_rank_input(im, vi, given, &d);
	d.rank = given ? given->rank : (uint32_t)tt->shape->n_dim;
	if (d.rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "input '%s' has rank %u, above %d", vi->name, d.rank,
			    NPU_TENSOR_MAX_RANK);
	if (given && tt->shape && tt->shape->n_dim != given->rank)
		return oi_fail(im, "input '%s' has rank %zu, the given shape %u", vi->name,
			    tt->shape->n_dim, given->rank);
	for (i = 0; i < d.rank; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape ? tt->shape->dim[i] : NULL;
		bool fixed = dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		int64_t v;

		if (given) {
			v = given->dims[i];
			if (fixed && dm->dim_value != v)
				return oi_fail(im, "input '%s': dimension %zu is %" PRId64 ", not %" PRId64,
					    vi->name, i, dm->dim_value, v);
		} else if (fixed) {
			v = dm->dim_value;
		} else if (im->opts && im->opts->unbound_dims_are_one) {
			v = 1;
		} else {
			return oi_fail(im, "input '%s': dimension %zu is dynamic ('%s'); give the shape",
				    vi->name, i,
				    dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
				    dm->dim_param ? dm->dim_param : "?");
		}
		if (v < 0 || v > UINT32_MAX)
			return oi_fail(im, "input '%s': bad dimension %" PRId64, vi->name, v);
		d.dims[i] = (uint32_t)v;
	}
	ret = oi_check_value_size(im, vi->name, d.dtype, d.rank, d.dims);
	if (!ret)
		ret = oi_add_sym(im, vi->name, &s);
	if (ret)
		return ret;
	d.name = vi->name;
	d.flags = NPU_VALUE_INPUT;
	ret = npu_graph_add_value(im->m->g, &d, &s->value);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) :
			oi_fail(im, "input '%s': %s", vi->name, npu_graph_error(im->m->g));
	s->dtype = d.dtype;
	s->rank = d.rank;
	memcpy(s->dims, d.dims, sizeof(s->dims));
	s->graph_input = true;
	if (d.rank && !oi_elems(d.rank, d.dims)) {
		/*
		 * Whatever is bound holds nothing: the nodes that read it see
		 * a constant of no elements, the graph keeps the input.
		 */
		s->fixed = s->empty = true;
		return oi_set_empty(im, s, d.dtype, d.rank, d.dims);
	}
	if (im->fix_all && known_value(im, s->name)) {
		ret = set_constant(im, s, s->name, known_value(im, s->name));
		s->fixed = !ret;
	}
	if (!ret && !s->fixed && !s->has_svalue)
		ret = oi_widen_fp16(im, s);
	return ret;
}

/* Room for every graph input and output, so that add_io() never grows it. */
static int alloc_io(struct imp *im)
{
	struct npu_onnx_model *m = im->m;
	size_t ni = im->gp->n_input, no = im->gp->n_output;

	m->in = calloc(ni ? ni : 1, sizeof(*m->in));
	m->out = calloc(no ? no : 1, sizeof(*m->out));
	m->in_dyn = calloc(ni ? ni : 1, sizeof(*m->in_dyn));
	m->out_dyn = calloc(no ? no : 1, sizeof(*m->out_dyn));
	m->names = calloc(ni + no ? ni + no : 1, sizeof(*m->names));
	m->in_fixed = calloc(ni ? ni : 1, sizeof(*m->in_fixed));
	m->max_in = ni;
	m->max_out = no;
	return m->in && m->out && m->in_dyn && m->out_dyn && m->names && m->in_fixed ? 0 :
		oi_nomem(im);
}

/*
 * The dimensions @vi leaves dynamic (a dim_param, or no dim_value) of a
 * value of rank @rank; all of them when it declares no shape and
 * @unknown_is_dynamic.
 */
static int note_dynamic(struct imp *im, const Onnx__ValueInfoProto *vi, uint32_t rank,
			bool unknown_is_dynamic, struct oi_dyn *dyn)
{
	const Onnx__TensorShapeProto *sh = vi && vi->type &&
		vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
		vi->type->tensor_type ? vi->type->tensor_type->shape : NULL;
	uint32_t k;

	if (sh && sh->n_dim != rank)
		sh = NULL;	/* the declared shape is wrong: what was imported counts */
	for (k = 0; k < rank; k++) {
		const Onnx__TensorShapeProto__Dimension *dm = sh ? sh->dim[k] : NULL;
		const char *param = "";

		if (sh && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			continue;
		if (!sh && !unknown_is_dynamic)
			continue;
		if (dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		    dm->dim_param)
			param = dm->dim_param;
		dyn->param[k] = strdup(param);
		if (!dyn->param[k])
			return oi_nomem(im);
		dyn->mask |= 1u << k;
	}
	return 0;
}

/* A model input or output @s, declared by @vi. */
static int add_io(struct imp *im, const struct sym *s, bool input, const Onnx__ValueInfoProto *vi)
{
	struct npu_onnx_model *m = im->m;
	struct npu_onnx_io *na = input ? m->in : m->out;
	size_t *n = input ? &m->num_in : &m->num_out;
	char **nn = m->names;
	int ret;

	/*
	 * An input fixed by its value takes no other shape; one above the
	 * rank limit has its dimensions fixed (bind_high_rank_input()).
	 */
	if (!(input && s->fixed && !s->empty) && !(input && s->lrank)) {
		ret = note_dynamic(im, vi, s->rank, input || m->any_dynamic_in,
				   input ? &m->in_dyn[*n] : &m->out_dyn[*n]);
		if (ret)
			return ret;
		if (input && m->in_dyn[*n].mask)
			m->any_dynamic_in = true;
	}
	nn[m->num_names] = strdup(s->name);
	if (!nn[m->num_names])
		return oi_nomem(im);
	na[*n].name = nn[m->num_names++];
	na[*n].value = s->widened ? s->fp16_value : s->value;
	na[*n].dtype = s->widened ? NPU_DTYPE_FP16 : s->dtype;
	na[*n].rank = s->rank;
	memcpy(na[*n].dims, s->dims, sizeof(s->dims));
	(*n)++;
	return 0;
}

/* A graph output that is a constant or an input gets a value of its own. */
static int bind_output(struct imp *im, const Onnx__ValueInfoProto *vi)
{
	const char *name = vi->name;
	struct oi_node d = { .kind = NPU_NODE_RESHAPE };
	struct npu_value_desc vd = { .size = sizeof(vd), .name = name, .flags = NPU_VALUE_OUTPUT };
	struct sym *s = oi_lookup(im, name), tmp;
	uint32_t in;
	int ret;

	if (!s)
		return oi_fail(im, "output '%s' is not computed by any node", name ? name : "");
	if (s->seq)
		return oi_fail(im, "output '%s' is an ONNX sequence, not a tensor: only tensors are supported as a model's outputs",
			       name);
	if (!s->is_const) {
		struct npu_value_desc cur = NPU_VALUE_DESC_INIT;

		npu_graph_get_value(im->m->g, s->widened ? s->fp16_value : s->value, &cur);
		if (cur.flags & NPU_VALUE_OUTPUT)
			return add_io(im, s, false, vi);
	}
	if (s->widened) {
		/* a float16 input or Cast result: the float16 value as it is */
		tmp = *s;
		tmp.widened = false;
		tmp.value = s->fp16_value;
		tmp.dtype = NPU_DTYPE_FP16;
		s = &tmp;
	}
	if (s->is_const) {
		struct npu_value_desc cv = NPU_VALUE_DESC_INIT;

		ret = oi_exact_value_of(im, s, &in);
		if (ret)
			return ret;
		npu_graph_get_value(im->m->g, in, &cv);
		s->dtype = cv.dtype;
		s->rank = cv.rank;
		memcpy(s->dims, cv.dims, sizeof(s->dims));
	} else {
		in = s->value;
	}
	vd.dtype = s->dtype;
	/* computed in float32, typed float16 by the model (oi_widen_fp16()) */
	if (vd.dtype == NPU_DTYPE_FP32 && is_float16_output(im, name)) {
		ret = oi_convert_value(im, name, in, NPU_DTYPE_FP32, NPU_DTYPE_FP16, s->rank, s->dims,
				    &in);
		if (ret)
			return ret;
		vd.dtype = NPU_DTYPE_FP16;
	}
	vd.rank = s->rank;
	memcpy(vd.dims, s->dims, sizeof(vd.dims));
	tmp = *s;
	tmp.dtype = vd.dtype;
	ret = npu_graph_add_value(im->m->g, &vd, &tmp.value);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) : oi_fail(im, "%s", npu_graph_error(im->m->g));
	d.name = name;
	d.inputs = &in;
	d.num_inputs = 1;
	d.output = tmp.value;
	ret = oi_add_node(im, &d);
	return ret ? ret : add_io(im, &tmp, false, vi);
}

/*
 * Kahn's order over names, linear in the number of names: each node
 * output maps to its producer in a hash table, the edges producer ->
 * reader are laid out per producer (CSR), and a node is ready when its
 * last producer is.  -ELOOP with a node on a cycle.
 */
static int order_nodes(struct imp *im, size_t **order_out);

/* Producers (in this graph) of what a node's subgraphs read. */
struct implicit {
	const struct oi_names *producer;
	uint32_t *p;
	size_t n, cap;
};

static int implicit_graph(const Onnx__GraphProto *g, struct implicit *x);

static int implicit_inputs(const Onnx__NodeProto *nd, struct implicit *x)
{
	size_t a, k;
	int ret = 0;

	for (a = 0; a < nd->n_attribute && !ret; a++) {
		const Onnx__AttributeProto *at = nd->attribute[a];

		if (at->g)
			ret = implicit_graph(at->g, x);
		for (k = 0; k < at->n_graphs && !ret; k++)
			ret = implicit_graph(at->graphs[k], x);
	}
	return ret;
}

static int implicit_graph(const Onnx__GraphProto *g, struct implicit *x)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < g->n_node && !ret; i++) {
		const Onnx__NodeProto *nd = g->node[i];

		for (j = 0; j < nd->n_input; j++) {
			const uint32_t *p = nd->input[j] && *nd->input[j] ?
					    oi_names_get(x->producer, nd->input[j]) : NULL;

			if (!p)
				continue;
			if (x->n == x->cap) {
				size_t cap = x->cap ? 2 * x->cap : 8;
				uint32_t *np = realloc(x->p, cap * sizeof(*np));

				if (!np)
					return -ENOMEM;
				x->p = np;
				x->cap = cap;
			}
			x->p[x->n++] = *p;
		}
		ret = implicit_inputs(nd, x);
	}
	return ret;
}

int oi_order_nodes(struct imp *im, size_t **order_out)
{
	return order_nodes(im, order_out);
}

static int order_nodes(struct imp *im, size_t **order_out)
{
	const Onnx__GraphProto *gp = im->gp;
	size_t n = gp->n_node, i, j, head = 0, cnt = 0, nout = 0, nedge = 0;
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *deps = calloc(n ? n : 1, sizeof(*deps));
	size_t *first = calloc(n + 1, sizeof(*first));	/* edges of producer p: first[p].. */
	uint32_t *reader = NULL;
	struct oi_names producer = { 0 };
	int ret = 0;

	if (!order || !deps || !first)
		goto nomem;
	for (i = 0; i < n; i++)
		nout += gp->node[i]->n_output;
	if (oi_names_init(&producer, nout))
		goto nomem;
	for (i = 0; i < n; i++) {
		const Onnx__NodeProto *nd = gp->node[i];

		for (j = 0; j < nd->n_output; j++) {
			if (!nd->output[j] || !*nd->output[j])
				continue;
			/* also twice by one node: one of its outputs would be lost */
			if (oi_lookup(im, nd->output[j]) || oi_names_get(&producer, nd->output[j])) {
				im->node = nd;
				ret = oi_fail(im, "output '%s' is defined twice", nd->output[j]);
				goto out;
			}
			oi_names_put(&producer, nd->output[j], (uint32_t)i);
		}
	}
	/* count each producer's readers, then place them */
	for (i = 0; i < n; i++) {
		const Onnx__NodeProto *nd = gp->node[i];
		struct implicit imp_in = { .producer = &producer };

		for (j = 0; j < nd->n_input; j++) {
			const uint32_t *p;

			if (!nd->input[j] || !*nd->input[j])
				continue;
			p = oi_names_get(&producer, nd->input[j]);
			if (p) {
				deps[i]++;
				first[*p + 1]++;
				nedge++;
			} else if (!oi_lookup(im, nd->input[j])) {
				im->node = nd;
				ret = oi_fail(im, "input '%s' is not defined (dangling name)", nd->input[j]);
				goto out;
			}
		}
		/* what its subgraphs read of this graph orders it too (If) */
		if (implicit_inputs(nd, &imp_in)) {
			free(imp_in.p);
			goto nomem;
		}
		for (j = 0; j < imp_in.n; j++) {
			deps[i]++;
			first[imp_in.p[j] + 1]++;
			nedge++;
		}
		free(imp_in.p);
		if (!deps[i])
			order[cnt++] = i;
	}
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	reader = malloc((nedge ? nedge : 1) * sizeof(*reader));
	if (!reader)
		goto nomem;
	{
		size_t *fill = calloc(n ? n : 1, sizeof(*fill));

		if (!fill)
			goto nomem;
		for (i = 0; i < n; i++) {
			const Onnx__NodeProto *nd = gp->node[i];

			struct implicit imp_in = { .producer = &producer };

			for (j = 0; j < nd->n_input; j++) {
				const uint32_t *p = nd->input[j] && *nd->input[j] ?
						    oi_names_get(&producer, nd->input[j]) : NULL;

				if (p)
					reader[first[*p] + fill[*p]++] = (uint32_t)i;
			}
			if (implicit_inputs(nd, &imp_in)) {
				free(imp_in.p);
				free(fill);
				goto nomem;
			}
			for (j = 0; j < imp_in.n; j++)
				reader[first[imp_in.p[j]] + fill[imp_in.p[j]]++] = (uint32_t)i;
			free(imp_in.p);
		}
		free(fill);
	}
	while (head < cnt) {
		size_t p = order[head++], e;

		/* every node reading an output of p loses one dependency */
		for (e = first[p]; e < first[p + 1]; e++)
			if (--deps[reader[e]] == 0)
				order[cnt++] = reader[e];
	}
	if (cnt != n) {
		for (i = 0; i < n && !deps[i]; i++)
			;
		im->node = gp->node[i];
		oi_fail(im, "part of a cycle");
		ret = -ELOOP;
		goto out;
	}
	*order_out = order;
	order = NULL;
	goto out;
nomem:
	ret = oi_nomem(im);
out:
	im->node = ret ? im->node : NULL;
	oi_names_free(&producer);
	free(reader);
	free(first);
	free(order);
	free(deps);
	return ret;
}

/* Mark the outputs of a node that was refused or skipped. */
static int poison_outputs(struct imp *im, const Onnx__NodeProto *n)
{
	size_t j;

	for (j = 0; j < n->n_output; j++) {
		struct sym *s;

		if (!n->output[j] || !*n->output[j])
			continue;
		s = oi_lookup(im, n->output[j]);
		if (!s && oi_add_sym(im, n->output[j], &s))
			return -ENOMEM;
		s->poisoned = true;
	}
	return 0;
}

static bool reads_poisoned(struct imp *im, const Onnx__NodeProto *n)
{
	size_t j;

	for (j = 0; j < n->n_input; j++) {
		const struct sym *s = n->input[j] && *n->input[j] ? oi_lookup(im, n->input[j]) : NULL;

		if (s && s->poisoned)
			return true;
	}
	return false;
}

/*
 * Import every node in @order.  A node refused (-EINVAL) does not stop
 * the import: its outputs are poisoned, the nodes reading them are only
 * checked for a known op, and the error lists every refused node, the
 * first one first, so a user learns in one pass what a model needs.
 */
int oi_import_nodes(struct imp *im, const size_t *order, int64_t opset)
{
	char *all = NULL, one[512];
	size_t i, len = 0, cap = 4096, refused = 0;
	int ret = 0;

	for (i = 0; i < im->gp->n_node && !ret; i++) {
		const Onnx__NodeProto *n = im->gp->node[order[i]];

		if (im->err && im->err_size)
			im->err[0] = 0;
		if (reads_poisoned(im, n)) {
			/* skipped: its outputs are unknown too */
			ret = poison_outputs(im, n);
			if (!ret && !oi_op_known(im, n, opset)) {
				im->node = n;
				ret = oi_fail_unknown(im, n, opset);
			}
		} else {
			ret = oi_import_node(im, n, opset);
		}
		if (ret != -EINVAL)
			continue;
		ret = poison_outputs(im, n);
		if (ret)
			break;
		if (!refused++) {
			all = malloc(cap);
			if (!all) {
				ret = -ENOMEM;
				break;
			}
			all[0] = 0;
		}
		snprintf(one, sizeof(one), "%s%s", refused == 2 ? "; also " :
			 refused > 2 ? "; " : "", im->err ? im->err : "");
		if (len + strlen(one) + 1 < cap) {
			memcpy(all + len, one, strlen(one) + 1);
			len += strlen(one);
		}
	}
	if (!ret && refused) {
		if (im->err && im->err_size) {
			if (refused > 1)
				snprintf(im->err, im->err_size, "%s (%zu nodes refused)", all, refused);
			else
				snprintf(im->err, im->err_size, "%s", all);
		}
		ret = -EINVAL;
	} else if (ret == -ENOMEM) {
		ret = oi_nomem(im);
	}
	free(all);
	return ret;
}

/* Everything a node reads, and the graph's outputs: imp.reads. */
/* Names read in @gp and its subgraphs (nesting is bounded by the wire check). */
static size_t count_reads(const Onnx__GraphProto *gp)
{
	size_t i, a, k, total = gp->n_output;

	for (i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *nd = gp->node[i];

		total += nd->n_input;
		for (a = 0; a < nd->n_attribute; a++) {
			if (nd->attribute[a]->g)
				total += count_reads(nd->attribute[a]->g);
			for (k = 0; k < nd->attribute[a]->n_graphs; k++)
				total += count_reads(nd->attribute[a]->graphs[k]);
		}
	}
	return total;
}

/* A subgraph's outputs are read by its node: READ_BY_NODE, not GRAPH_OUTPUT. */
static void put_reads(struct imp *im, const Onnx__GraphProto *gp, bool top)
{
	size_t i, j, a, k;

	for (i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *nd = gp->node[i];

		for (j = 0; j < nd->n_input; j++)
			if (nd->input[j] && *nd->input[j])
				*oi_names_put(&im->reads, nd->input[j], 0) |= READ_BY_NODE |
					(top && oi_fp16_native(nd) ? READ_BY_FP16 : 0);
		for (a = 0; a < nd->n_attribute; a++) {
			if (nd->attribute[a]->g)
				put_reads(im, nd->attribute[a]->g, false);
			for (k = 0; k < nd->attribute[a]->n_graphs; k++)
				put_reads(im, nd->attribute[a]->graphs[k], false);
		}
	}
	for (i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		bool fp16 = vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
			    vi->type->tensor_type &&
			    vi->type->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;

		if (vi->name)
			*oi_names_put(&im->reads, vi->name, 0) |=
				top ? GRAPH_OUTPUT | (fp16 ? OUTPUT_FLOAT16 : 0) : READ_BY_NODE;
	}
}

static int index_reads(struct imp *im)
{
	if (oi_names_init(&im->reads, count_reads(im->gp)))
		return oi_nomem(im);
	put_reads(im, im->gp, true);
	return 0;
}

/* npu_onnx_options' budgets, the defaults where it has none. */
static int take_limits(struct imp *im, const struct npu_onnx_options *o)
{
	const size_t have = o ? o->size : 0;
	const size_t base = offsetof(struct npu_onnx_options, size) + sizeof(o->size);

	im->lim = (struct oi_limits){ .max_nesting = NPU_ONNX_DEFAULT_MAX_NESTING,
				      .max_nodes = NPU_ONNX_DEFAULT_MAX_NODES,
				      .max_value_bytes = NPU_ONNX_DEFAULT_MAX_VALUE_BYTES };
	im->consts.limit = NPU_ONNX_DEFAULT_MAX_CONST_BYTES;
	if (!have)
		return 0;
	if (have < base)
		return oi_fail(im, "npu_onnx_options.size %zu is too small", have);
	if (have > sizeof(*o)) {
		const unsigned char *extra = (const unsigned char *)o + sizeof(*o);
		size_t k;

		for (k = 0; k < have - sizeof(*o); k++)
			if (extra[k]) {
				oi_fail(im, "npu_onnx_options has fields this libnpu-onnx does not know");
				return -E2BIG;
			}
	}
#define TAKE(field, dst) \
	do { \
		if (have >= offsetof(struct npu_onnx_options, field) + sizeof(o->field) && o->field) \
			dst = o->field; \
	} while (0)
	TAKE(max_nesting, im->lim.max_nesting);
	TAKE(max_nodes, im->lim.max_nodes);
	TAKE(max_const_bytes, im->consts.limit);
	TAKE(max_value_bytes, im->lim.max_value_bytes);
#undef TAKE
	if (have >= offsetof(struct npu_onnx_options, reserved) + sizeof(o->reserved) && o->reserved)
		return oi_fail(im, "npu_onnx_options.reserved must be zero");
	if (have >= offsetof(struct npu_onnx_options, reserved2) + sizeof(o->reserved2) &&
	    o->reserved2)
		return oi_fail(im, "npu_onnx_options.reserved2 must be zero");
	if (have >= offsetof(struct npu_onnx_options, rounding) + sizeof(o->rounding) &&
	    o->rounding > NPU_ROUND_TFLITE)
		return oi_fail(im, "npu_onnx_options.rounding %u is not NPU_ROUND_ONNX (0) or NPU_ROUND_TFLITE (1)",
			       o->rounding);
	if (im->lim.max_nesting > NPU_ONNX_LIMIT_MAX_NESTING)
		return oi_fail(im, "npu_onnx_options.max_nesting %u is above %u (protobuf-c recurses once per level)",
			       im->lim.max_nesting, NPU_ONNX_LIMIT_MAX_NESTING);
	return 0;
}

int64_t oi_domain_opset(const struct imp *im, const char *domain)
{
	size_t i;

	for (i = 0; im->mp && i < im->mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = im->mp->opset_import[i];

		if (o->domain && !strcmp(o->domain, domain))
			return o->has_version ? o->version : 0;
	}
	return 0;
}

static void imp_free(struct imp *im)
{
	size_t i;

	for (i = 0; i < im->nsyms; i++) {
		free(sym_at(im, i)->name);
		oi_seq_free(sym_at(im, i)->seq);
		if (!sym_at(im, i)->borrowed)
			ctensor_free(&sym_at(im, i)->c);
	}
	for (i = 0; i < im->nblocks; i++)
		free(im->blocks[i]);
	free(im->blocks);
	free(im->table);
	/* im->reads is the source's */
	if (im->readers_built)
		oi_names_free(&im->readers);
	oi_names_free(&im->shape_index);
}

/*
 * Decoded, an initializer's protobuf copy of its data is only memory: a
 * source keeps the decoded one, which every import reads.
 */
static void drop_proto_data(Onnx__TensorProto *tp)
{
	free(tp->raw_data.data);
	tp->raw_data.data = NULL;
	tp->raw_data.len = 0;
	free(tp->float_data);
	tp->float_data = NULL;
	tp->n_float_data = 0;
	free(tp->int32_data);
	tp->int32_data = NULL;
	tp->n_int32_data = 0;
	free(tp->int64_data);
	tp->int64_data = NULL;
	tp->n_int64_data = 0;
	free(tp->double_data);
	tp->double_data = NULL;
	tp->n_double_data = 0;
	free(tp->uint64_data);
	tp->uint64_data = NULL;
	tp->n_uint64_data = 0;
}

/* Symbols for the top graph's initializers, borrowing the source's data. */
static int add_initializers(struct imp *im)
{
	size_t i;
	int ret;

	for (i = 0; i < im->gp->n_initializer; i++) {
		struct sym *s;

		ret = oi_add_sym(im, im->gp->initializer[i]->name, &s);
		if (ret)
			return ret;
		s->c = im->src->inits[i];
		s->is_const = true;
		s->borrowed = true;
	}
	return 0;
}

int oi_source_parse(struct npu_onnx_source *src, const void *data, size_t size,
		    const struct npu_onnx_options *opts, char *err, size_t err_size)
{
	struct imp im = { .src = src, .opts = opts, .err = err, .err_size = err_size };
	Onnx__ModelProto *mp;
	int64_t opset = -1;
	bool imports_onnx = false;
	size_t i;
	int ret;

	if (err && err_size)
		err[0] = 0;
	if (!data && size)
		return -EINVAL;
	ret = take_limits(&im, opts);
	if (ret)
		return ret;
	{
		struct onnx_wire_limits wl = { .max_depth = im.lim.max_nesting };

		/* 8 times the file plus a slack: see ONNX_WIRE_SLACK_MIB */
		wl.max_unpacked = (size > (UINT64_MAX >> 4) ? UINT64_MAX >> 1 : 8 * (uint64_t)size) +
				  ((uint64_t)ONNX_WIRE_SLACK_MIB << 20);
		ret = onnx_wire_check(data, size, &onnx__model_proto__descriptor, &wl, err, err_size);
		if (ret)
			return ret;
	}
	mp = src->mp = onnx__model_proto__unpack(NULL, size, data);
	if (!mp) {
		oi_fail(&im, "not a valid ONNX model (protobuf parse error)");
		return -EBADMSG;
	}
	for (i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = mp->opset_import[i];

		if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
			if (!o->has_version) {
				oi_fail(&im, "the model's opset_import for the default domain has no version");
				return -EINVAL;
			}
			opset = o->version;
			imports_onnx = true;
		}
	}
	/*
	 * A model of other domains' ops only need not import ONNX's; its
	 * opset is then 0, and a default-domain node in it is refused by
	 * name (oi_fail_unknown()).
	 */
	if (!imports_onnx) {
		opset = 0;
	} else if (opset < 1 || opset > 18) {
		oi_fail(&im, "default-domain opset %" PRId64 " is not supported (1 to 18)", opset);
		return -ENOTSUP;
	}
	src->opset = opset;
	im.mp = mp;
	if (!mp->graph)
		return oi_fail(&im, "the model has no graph");
	im.gp = mp->graph;
	if (im.gp->n_node > im.lim.max_nodes) {
		oi_fail(&im, "the graph has %zu nodes, over the limit of %u (npu_onnx_options.max_nodes)",
			im.gp->n_node, im.lim.max_nodes);
		return -E2BIG;
	}
	ret = index_reads(&im);
	src->reads = im.reads;
	if (ret)
		return ret;
	src->inits = calloc(im.gp->n_initializer ? im.gp->n_initializer : 1, sizeof(*src->inits));
	if (!src->inits)
		return oi_nomem(&im);
	for (i = 0; i < im.gp->n_initializer; i++) {
		Onnx__TensorProto *tp = im.gp->initializer[i];

		ret = ctensor_from_proto(tp, &src->inits[i], err, err_size);
		if (ret) {
			if (ret != -ENOMEM) {
				char tmp[200];

				snprintf(tmp, sizeof(tmp), "%s", err ? err : "");
				ret = oi_fail(&im, "initializer '%s': %s", tp->name ? tp->name : "",
					      tmp);
			}
			return ret;
		}
		drop_proto_data(tp);
	}
	if (im.gp->n_sparse_initializer)
		return oi_fail(&im, "sparse initializers are not supported");
	/* the names an import defines before any node: what the node order checks */
	ret = add_initializers(&im);
	if (!ret && oi_names_init(&src->inputs, im.gp->n_input))
		ret = oi_nomem(&im);
	for (i = 0; !ret && i < im.gp->n_input; i++) {
		const char *name = im.gp->input[i]->name;
		struct sym *s;

		if (!name || !*name) {
			ret = oi_fail(&im, "a graph input without a name");
		} else if (!oi_lookup(&im, name)) {
			ret = oi_add_sym(&im, name, &s);
			oi_names_put(&src->inputs, name, 1);
		}
	}
	if (!ret)
		ret = order_nodes(&im, &src->order);
	imp_free(&im);
	if (!ret && err && err_size)
		err[0] = 0;
	return ret;
}

void oi_source_release(struct npu_onnx_source *src)
{
	size_t i;

	if (src->inits && src->mp && src->mp->graph)
		for (i = 0; i < src->mp->graph->n_initializer; i++)
			ctensor_free(&src->inits[i]);
	free(src->inits);
	free(src->order);
	oi_names_free(&src->reads);
	oi_names_free(&src->inputs);
	if (src->mp)
		onnx__model_proto__free_unpacked(src->mp, NULL);
	if (src->owns_opts)
		oi_options_release(&src->opts);
	memset(src, 0, sizeof(*src));
}

static int import_once(const struct npu_onnx_source *src, const struct npu_onnx_options *opts,
		       struct npu_onnx_model **out, char *err, size_t err_size, bool fix_all)
{
	struct imp im = { .src = src, .opts = opts, .err = err, .err_size = err_size,
			  .fix_all = fix_all, .mp = src->mp, .gp = src->mp->graph,
			  .reads = src->reads };
	size_t i;
	int ret;

	if (err && err_size)
		err[0] = 0;
	ret = take_limits(&im, opts);
	if (ret)
		return ret;
	/* a shape per input at most is looked up: no scan of every shape per input */
	if (oi_names_init(&im.shape_index, opts->num_shapes))
		return oi_nomem(&im);
	for (i = 0; i < opts->num_shapes; i++) {
		uint32_t *k = oi_names_put(&im.shape_index, opts->shapes[i].name, (uint32_t)i);

		if (k)
			*k = (uint32_t)i;	/* the last shape given for a name */
	}
	im.m = calloc(1, sizeof(*im.m));
	if (!im.m) {
		oi_names_free(&im.shape_index);
		return oi_nomem(&im);
	}
	im.m->opset = src->opset;
	ret = npu_graph_create(&im.m->g);
	if (!ret)
		ret = alloc_io(&im);
	if (!ret)
		ret = add_initializers(&im);
	for (i = 0; !ret && i < im.gp->n_input; i++)
		ret = bind_input(&im, im.gp->input[i]);
	if (!ret)
		ret = oi_import_nodes(&im, src->order, src->opset);
	if (ret)
		goto out;
	im.node = NULL;
	for (i = 0; i < im.gp->n_input; i++) {
		struct sym *s = oi_lookup(&im, im.gp->input[i]->name);

		if (s && (!s->is_const || s->fixed)) {
			ret = add_io(&im, s, true, im.gp->input[i]);
			if (ret)
				goto out;
			im.m->in_fixed[im.m->num_in - 1] = s->fixed && !s->empty;
		}
	}
	if (!im.gp->n_output) {
		ret = oi_fail(&im, "the graph has no outputs");
		goto out;
	}
	for (i = 0; i < im.gp->n_output; i++) {
		ret = bind_output(&im, im.gp->output[i]);
		if (ret)
			goto out;
	}
out:
	imp_free(&im);
	if (ret) {
		npu_onnx_free(im.m);
		return ret;
	}
	/* a refusal a fallback then got past leaves no message behind */
	if (err && err_size)
		err[0] = 0;
	*out = im.m;
	return 0;
}

/* Is @name a graph input the caller may shape (not an initializer)? */
static bool is_shapeable_input(const struct npu_onnx_source *src, const char *name)
{
	return oi_names_get(&src->inputs, name) != NULL;
}

/*
 * With known input values, a node whose shape depends on an input is
 * first given that value only where it reads the input directly; if a
 * node still cannot know its shape (the value reaches it through other
 * nodes), import is done once more with every known input fixed.
 */
int oi_source_import(const struct npu_onnx_source *src, const struct npu_onnx_shape *shapes,
		     size_t num_shapes, struct npu_onnx_model **out, char *err, size_t err_size)
{
	struct npu_onnx_options o = src->opts;
	struct npu_onnx_shape *all = NULL;
	size_t i;
	int ret;

	__atomic_add_fetch((uint64_t *)&src->imports, 1, __ATOMIC_RELAXED);
	if (num_shapes) {
		for (i = 0; i < num_shapes; i++)
			if (!shapes[i].name || !is_shapeable_input(src, shapes[i].name)) {
				if (err && err_size)
					snprintf(err, err_size, "the model has no input '%s' to shape",
						 shapes[i].name ? shapes[i].name : "(null)");
				return -EINVAL;
			}
		/* the load's shapes, then these: bind_input() takes the last match */
		all = malloc((o.num_shapes + num_shapes) * sizeof(*all));
		if (!all)
			return -ENOMEM;
		if (o.num_shapes)
			memcpy(all, o.shapes, o.num_shapes * sizeof(*all));
		memcpy(all + o.num_shapes, shapes, num_shapes * sizeof(*all));
		o.shapes = all;
		o.num_shapes += num_shapes;
	}
	ret = import_once(src, &o, out, err, err_size, false);
	if (ret == -EINVAL &&
	    o.size >= offsetof(struct npu_onnx_options, num_values) + sizeof(o.num_values) &&
	    o.num_values)
		ret = import_once(src, &o, out, err, err_size, true);
	free(all);
	return ret;
}

NPU_EXPORT_ONNX int npu_onnx_load(const void *data, size_t size,
				  const struct npu_onnx_options *opts,
				  struct npu_onnx_model **out, char *err, size_t err_size)
{
	struct npu_onnx_source src = { 0 };
	int ret;

	if (err && err_size)
		err[0] = 0;
	if (!out || (!data && size))
		return -EINVAL;
	/* the caller's options outlive this call: no copy of their arrays */
	ret = oi_options_copy(&src.opts, opts, false);
	if (!ret)
		ret = oi_source_parse(&src, data, size, opts, err, err_size);
	if (!ret)
		ret = oi_source_import(&src, NULL, 0, out, err, err_size);
	oi_source_release(&src);
	return ret;
}

NPU_EXPORT_ONNX int npu_onnx_load_file(const char *path,
				       const struct npu_onnx_options *opts,
				       struct npu_onnx_model **out, char *err,
				       size_t err_size)
{
	size_t len;
	void *buf;
	int ret = onnx_read_file(path, &buf, &len);

	if (ret) {
		if (err && err_size)
			snprintf(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = npu_onnx_load(buf, len, opts, out, err, err_size);
	free(buf);
	return ret;
}

NPU_EXPORT_ONNX void npu_onnx_free(struct npu_onnx_model *m)
{
	size_t i, k;

	if (!m)
		return;
	npu_graph_free(m->g);
	for (i = 0; i < m->num_names; i++)
		free(m->names[i]);
	for (i = 0; m->in_dyn && i < m->max_in; i++)
		for (k = 0; k < NPU_TENSOR_MAX_RANK; k++)
			free(m->in_dyn[i].param[k]);
	for (i = 0; m->out_dyn && i < m->max_out; i++)
		for (k = 0; k < NPU_TENSOR_MAX_RANK; k++)
			free(m->out_dyn[i].param[k]);
	free(m->in_dyn);
	free(m->out_dyn);
	free(m->names);
	free(m->in);
	free(m->in_fixed);
	free(m->out);
	free(m);
}

NPU_EXPORT_ONNX struct npu_graph *npu_onnx_graph(struct npu_onnx_model *m)
{
	return m ? m->g : NULL;
}

NPU_EXPORT_ONNX size_t npu_onnx_num_inputs(const struct npu_onnx_model *m)
{
	return m ? m->num_in : 0;
}

NPU_EXPORT_ONNX size_t npu_onnx_num_outputs(const struct npu_onnx_model *m)
{
	return m ? m->num_out : 0;
}

NPU_EXPORT_ONNX int npu_onnx_input(const struct npu_onnx_model *m, size_t i,
				   struct npu_onnx_io *io)
{
	if (!m || !io || i >= m->num_in)
		return -EINVAL;
	*io = m->in[i];
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_output(const struct npu_onnx_model *m, size_t i,
				    struct npu_onnx_io *io)
{
	if (!m || !io || i >= m->num_out)
		return -EINVAL;
	*io = m->out[i];
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_input_fixed(const struct npu_onnx_model *m, size_t i)
{
	if (!m || i >= m->num_in)
		return -EINVAL;
	return m->in_fixed[i];
}

NPU_EXPORT_ONNX int64_t npu_onnx_opset(const struct npu_onnx_model *m)
{
	return m ? m->opset : -1;
}
