// SPDX-License-Identifier: MIT
/*
 * Compile step: chains of 8-bit pointwise ops become one table lookup.
 *
 * After graph_quant.c a QDQ model's pointwise ops read and write 8-bit
 * values, one device command each (a decomposed HardSwish is four: ADD 3,
 * CLIP [0, 6], DIV 6, MUL by x).  A set of such nodes whose only runtime
 * input is ONE per-tensor 8-bit value x, every other operand a constant
 * scalar, computes a function of x's byte alone: if its result is a
 * per-tensor 8-bit value, the function is a 256-entry table and the
 * whole set is one LUT command (ops.rst, "LUT").
 *
 * The table comes from running the set's own nodes, as ops on the CPU
 * path (the engine, bit for bit the reference the device runs), over
 * a 256-element x holding every code: each table entry is what the
 * unfolded nodes compute for that code, NaN and infinite intermediates
 * and saturation included, so folding changes no bit of any result.
 *
 * A node whose value is also read outside the set, or is a graph output,
 * cannot vanish: the set then ends before it (its last node is the one
 * whose result leaves).  Sets of one node stay as they are (one command
 * either way).  NPU_COMPILE_NO_LUT turns the step off, for comparing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph_compile.h"

/* Nodes one table may fold: far more than any activation spelled out. */
#define LUT_MAX_NODES	64

struct lut_region {
	uint32_t root;			/* the one runtime input */
	uint32_t n;
	uint32_t node[LUT_MAX_NODES];	/* in execution order */
};

static bool per_tensor_8bit(const struct gvalue *v)
{
	return (v->dtype == NPU_DTYPE_INT8 || v->dtype == NPU_DTYPE_UINT8) &&
	       v->scale > 0.0f && !v->chq;
}

static bool same_dims(const struct gvalue *a, const struct gvalue *b)
{
	return a->rank == b->rank && !memcmp(a->dims, b->dims, 4ull * a->rank);
}

/* A constant the ops broadcast to every element: one element, per tensor. */
static bool scalar_const(const struct gvalue *v)
{
	return v->data && v->elems == 1 && !v->chq && npu__dtype_is_device(v->dtype) &&
	       v->dtype != NPU_DTYPE_INT32 &&
	       (v->scale > 0.0f || (v->dtype != NPU_DTYPE_INT8 && v->dtype != NPU_DTYPE_UINT8));
}

/* A runtime value inside a region: real-valued (float, or 8-bit per tensor). */
static bool region_value(const struct gvalue *v, const struct gvalue *root)
{
	bool flt = (v->dtype == NPU_DTYPE_FP32 || v->dtype == NPU_DTYPE_FP16 ||
		    v->dtype == NPU_DTYPE_BF16) && v->scale == 0.0f && !v->chq;

	return !v->data && (flt || per_tensor_8bit(v)) && same_dims(v, root);
}

/* Ops that compute each output element from the same element of each input. */
static bool pointwise(const struct gnode *n)
{
	if (n->kind != NPU_NODE_OP)
		return false;
	switch (n->op.kind) {
	case NPU_OP_ELTWISE:
		return n->num_inputs == 2;
	case NPU_OP_ACTIVATION:	/* without the per-channel affine operand */
	case NPU_OP_QUANTIZE:
	case NPU_OP_DEQUANTIZE:
	case NPU_OP_REQUANTIZE:
		return n->num_inputs == 1;
	default:
		return false;
	}
}

static bool in_region(const struct lut_region *r, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < r->n; i++)
		if (r->node[i] == id)
			return true;
	return false;
}

/* A value @r's nodes may read: its root or a result of one of them. */
static bool region_reads(struct cstate *c, const struct lut_region *r, uint32_t v)
{
	uint32_t p = c->w->v[v].producer;

	return v == r->root || (p != NPU_VALUE_NONE && in_region(r, p));
}

/*
 * Can live node @id join @r: pointwise, every input the region's or a
 * constant scalar, at least one the region's, its result real-valued
 * and shaped like the root?
 */
static bool joins(struct cstate *c, const struct lut_region *r, uint32_t id)
{
	const struct npu_graph *w = c->w;
	const struct gnode *n = &w->n[id];
	bool reads = false;
	uint32_t k;

	if (c->state[id] != N_ALIVE || !pointwise(n) || in_region(r, id) ||
	    !region_value(&w->v[n->out], &w->v[r->root]))
		return false;
	for (k = 0; k < n->num_inputs; k++) {
		uint32_t v = n->in[k];

		if (v == NPU_VALUE_NONE)
			return false;
		if (region_reads(c, r, v))
			reads = true;
		else if (!scalar_const(&w->v[v]))
			return false;
	}
	return reads;
}

/* Consumers of each value among live nodes, as index lists (CSR). */
struct lut_readers {
	uint32_t *start;	/* nv + 1 */
	uint32_t *node;
};

static int readers_build(struct cstate *c, struct lut_readers *rd)
{
	const struct npu_graph *w = c->w;
	uint32_t *fill;
	size_t i, total = 0;
	uint32_t k;

	rd->start = calloc(w->nv + 1, 4);
	fill = calloc(w->nv ? w->nv : 1, 4);
	if (!rd->start || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < w->nn; i++)
		for (k = 0; c->state[i] == N_ALIVE && k < w->n[i].num_inputs; k++)
			if (w->n[i].kind != NPU_NODE_KERNEL && w->n[i].in[k] != NPU_VALUE_NONE) {
				rd->start[w->n[i].in[k] + 1]++;
				total++;
			}
	for (i = 0; i < w->nv; i++)
		rd->start[i + 1] += rd->start[i];
	rd->node = malloc((total ? total : 1) * 4);
	if (!rd->node) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < w->nn; i++)
		for (k = 0; c->state[i] == N_ALIVE && k < w->n[i].num_inputs; k++)
			if (w->n[i].kind != NPU_NODE_KERNEL && w->n[i].in[k] != NPU_VALUE_NONE) {
				uint32_t v = w->n[i].in[k];

				rd->node[rd->start[v] + fill[v]++] = (uint32_t)i;
			}
	free(fill);
	return 0;
}

/*
 * Grow @r from its root: every node that can join does, breadth first
 * over the readers of the values the region has.  @pos gives each node's
 * place in execution order, by which the region is then sorted.
 */
static void region_grow(struct cstate *c, const struct lut_readers *rd,
			const uint32_t *pos, struct lut_region *r)
{
	uint32_t vals[LUT_MAX_NODES + 1], nvals = 0, head = 0, i, j;

	vals[nvals++] = r->root;
	while (head < nvals && r->n < LUT_MAX_NODES) {
		uint32_t v = vals[head++];

		for (i = rd->start[v]; i < rd->start[v + 1] && r->n < LUT_MAX_NODES; i++) {
			uint32_t id = rd->node[i];

			if (!joins(c, r, id))
				continue;
			r->node[r->n++] = id;
			vals[nvals++] = c->w->n[id].out;
		}
	}
	/* insertion sort: a few nodes */
	for (i = 1; i < r->n; i++)
		for (j = i; j > 0 && pos[r->node[j - 1]] > pos[r->node[j]]; j--) {
			uint32_t t = r->node[j];

			r->node[j] = r->node[j - 1];
			r->node[j - 1] = t;
		}
}

/*
 * The nodes of @r that @exit depends on (itself included), in order, into
 * @s; false unless every value they make but @exit's is read only by
 * them and is no graph output.
 */
static bool region_cut(struct cstate *c, const struct lut_region *r, uint32_t exit,
		       struct lut_region *s)
{
	const struct npu_graph *w = c->w;
	bool need[LUT_MAX_NODES] = { false };
	uint32_t i, j, k;
	int e;

	for (e = (int)r->n - 1; e >= 0 && r->node[e] != exit; e--)
		;
	need[e] = true;
	/* inputs come before their readers: one backward sweep */
	for (i = (uint32_t)e + 1; i-- > 0;) {
		const struct gnode *n = &w->n[r->node[i]];

		if (!need[i])
			continue;
		for (k = 0; k < n->num_inputs; k++)
			for (j = 0; j < i; j++)
				if (w->n[r->node[j]].out == n->in[k])
					need[j] = true;
	}
	s->root = r->root;
	s->n = 0;
	for (i = 0; i <= (uint32_t)e; i++)
		if (need[i])
			s->node[s->n++] = r->node[i];
	for (i = 0; i + 1 < s->n; i++) {
		uint32_t v = w->n[s->node[i]].out, inside = 0;

		if (w->v[v].flags & NPU_VALUE_OUTPUT)
			return false;
		for (j = 0; j < s->n; j++)
			for (k = 0; k < w->n[s->node[j]].num_inputs; k++)
				inside += w->n[s->node[j]].in[k] == v;
		if (c->consumers[v] != inside)
			return false;
	}
	return true;
}

/* An unbound tensor of value @v's dtype and quantization, [@n], at @data. */
static int lut_tensor(const struct gvalue *v, uint32_t n, void *data,
		      struct npu_tensor **out)
{
	int ret = npu_tensor_create(v->dtype, 1, &n, out);

	if (!ret && v->scale > 0.0f)
		ret = npu_tensor_set_quant(*out, v->scale, v->zero_point);
	if (!ret)
		ret = npu_tensor_bind_host(*out, data, (size_t)n * npu_dtype_size(v->dtype));
	if (ret) {
		npu_tensor_free(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * Run @s's nodes as ops over all 256 codes of its root into @table (the
 * last node's results, in LUT order).  1 when some node cannot run that
 * way (then nothing is folded), 0, or -ENOMEM.
 */
static int region_table(struct cstate *c, const struct lut_region *s, uint8_t *table)
{
	const struct npu_graph *w = c->w;
	const struct gvalue *root = &w->v[s->root];
	uint8_t flip = root->dtype == NPU_DTYPE_INT8 ? 0x80 : 0;
	/* each value's 256 elements: the root's codes, then each node's result */
	uint8_t *buf[LUT_MAX_NODES + 1] = { 0 };
	uint32_t i, k, j;
	int ret = 0;

	for (i = 0; i <= s->n && !ret; i++) {
		uint32_t v = i ? w->n[s->node[i - 1]].out : s->root;

		buf[i] = malloc(VNPU_LUT_ENTRIES * npu_dtype_size(w->v[v].dtype));
		if (!buf[i])
			ret = -ENOMEM;
	}
	for (j = 0; !ret && j < VNPU_LUT_ENTRIES; j++)
		buf[0][j] = (uint8_t)(j ^ flip);
	for (i = 0; i < s->n && !ret; i++) {
		const struct gnode *n = &w->n[s->node[i]];
		struct npu_tensor *in[2] = { NULL, NULL }, *y = NULL;
		struct npu_op *op = NULL;

		for (k = 0; k < n->num_inputs && !ret; k++) {
			const struct gvalue *v = &w->v[n->in[k]];

			if (v->data) {
				ret = lut_tensor(v, 1, v->data, &in[k]);
				continue;
			}
			for (j = 0; j <= i; j++)
				if ((j ? w->n[s->node[j - 1]].out : s->root) == n->in[k])
					break;
			ret = lut_tensor(v, VNPU_LUT_ENTRIES, buf[j], &in[k]);
		}
		if (!ret)
			ret = lut_tensor(&w->v[n->out], VNPU_LUT_ENTRIES, buf[i + 1], &y);
		if (!ret)
			ret = npu__op_create(&n->op, (const struct npu_tensor *const *)in,
					     n->num_inputs, y, &op);
		if (!ret)
			ret = npu_op_run_cpu(op);
		npu_op_free(op);
		npu_tensor_free(in[0]);
		npu_tensor_free(in[1]);
		npu_tensor_free(y);
	}
	if (!ret)
		memcpy(table, buf[s->n], VNPU_LUT_ENTRIES);
	for (i = 0; i <= s->n; i++)
		free(buf[i]);
	/* an op the CPU path refuses here is left for the runtime to report */
	return ret == -ENOMEM ? ret : ret ? 1 : 0;
}

/* Replace @s by one LUT node: its last node, reading the root and @table. */
static int region_fold(struct cstate *c, const struct lut_region *s, uint8_t *table)
{
	struct npu_graph *w = c->w;
	uint32_t last = s->node[s->n - 1], tid, i;
	struct gvalue like = w->v[w->n[last].out];
	struct gnode *n;
	int ret;

	ret = npu__add_value_raw(c, &like, 1, (const uint32_t[]){ VNPU_LUT_ENTRIES },
				 table, &tid);
	if (ret)
		return ret;
	for (i = 0; i + 1 < s->n; i++) {
		c->state[s->node[i]] = N_FUSED;
		c->fused_into[s->node[i]] = last;
		npu__recount_node(c, s->node[i]);
	}
	n = &w->n[last];
	memset(&n->op, 0, sizeof(n->op));
	n->op.size = sizeof(n->op);
	n->op.kind = NPU_OP_LUT;
	n->flags = 0;
	n->in[0] = s->root;
	n->in[1] = tid;
	n->num_inputs = 2;
	npu__recount_node(c, last);
	return 0;
}

/* The largest foldable part of @r, whose last node's result leaves it. */
static bool region_best(struct cstate *c, const struct lut_region *r, struct lut_region *best)
{
	struct lut_region s;
	uint32_t i;

	best->root = r->root;
	best->n = 0;
	for (i = r->n; i-- > 0;) {
		uint32_t id = r->node[i];

		if (!per_tensor_8bit(&c->w->v[c->w->n[id].out]))
			continue;
		if (region_cut(c, r, id, &s) && s.n > best->n)
			*best = s;
	}
	return best->n >= 2;
}

int npu__fuse_lut(struct cstate *c)
{
	struct npu_graph *w = c->w;
	struct lut_readers rd = { NULL, NULL };
	struct lut_region r, s;
	uint32_t *pos;
	uint8_t *table;
	size_t i;
	int ret;

	npu__count_consumers(c);
	pos = calloc(w->nn ? w->nn : 1, 4);
	ret = pos ? readers_build(c, &rd) : -ENOMEM;
	for (i = 0; i < c->norder; i++)
		if (!ret)
			pos[c->order[i]] = (uint32_t)i;
	for (i = 0; i < c->norder && !ret; i++) {
		uint32_t id = c->order[i], k, root = NPU_VALUE_NONE;
		const struct gnode *n = &w->n[id];

		/* a region starts at a node reading the root (and constants) */
		if (c->state[id] != N_ALIVE || !pointwise(n))
			continue;
		for (k = 0; k < n->num_inputs; k++) {
			uint32_t v = n->in[k];

			if (v != NPU_VALUE_NONE && !w->v[v].data)
				root = root == NPU_VALUE_NONE || root == v ? v : NPU_VALUE_NONE - 1;
		}
		if (root >= w->nv || !per_tensor_8bit(&w->v[root]))
			continue;
		r.root = root;
		r.n = 0;
		region_grow(c, &rd, pos, &r);
		if (!region_best(c, &r, &s))
			continue;
		table = malloc(VNPU_LUT_ENTRIES);
		if (!table) {
			ret = -ENOMEM;
			break;
		}
		ret = region_table(c, &s, table);
		if (!ret) {
			ret = region_fold(c, &s, table);
			if (!ret)
				continue;
		}
		free(table);
		if (ret > 0)
			ret = 0;
	}
	free(pos);
	free(rd.start);
	free(rd.node);
	return ret;
}
