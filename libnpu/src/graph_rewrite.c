// SPDX-License-Identifier: MIT
/*
 * Graph compilation, the graph-to-graph part: constant folding, the
 * rewrites (DIV by a constant, BATCHNORM), dead-node removal, epilogue
 * fusion (bias, activation) and weight packing, all on compile's working
 * copy of the graph.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_compile.h"
#include "npu_ops_cpu.h"

/* Grow the per-node arrays of @c to cover every working node. */
int npu__cstate_fit(struct cstate *c)
{
	size_t n = c->w->nn, cap;
	uint8_t *st;
	uint32_t *fi, *orig, *ord, (*cnt)[GNODE_MAX_INPUTS];

	if (n <= c->cap_nodes)
		return 0;
	/* geometric, so that rewrites adding a node each stay linear */
	cap = n + n / 2 + 16;
	st = realloc(c->state, cap);
	if (!st)
		return -ENOMEM;
	c->state = st;
	fi = realloc(c->fused_into, cap * 4);
	if (!fi)
		return -ENOMEM;
	c->fused_into = fi;
	orig = realloc(c->origin, cap * 4);
	if (!orig)
		return -ENOMEM;
	c->origin = orig;
	ord = realloc(c->order, cap * 4);
	if (!ord)
		return -ENOMEM;
	c->order = ord;
	cnt = realloc(c->counted, cap * sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	c->counted = cnt;
	c->cap_nodes = cap;
	return 0;
}

int npu__add_node_raw(struct cstate *c, const struct gnode *tmpl,
		      uint32_t origin, uint32_t *id)
{
	struct npu_graph *w = c->w;
	int ret;

	if (w->nn == w->cap_n) {
		size_t cap = 2 * w->cap_n;
		struct gnode *nn = realloc(w->n, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		w->n = nn;
		w->cap_n = cap;
	}
	w->n[w->nn] = *tmpl;
	w->n[w->nn].name = strdup(tmpl->name);
	if (!w->n[w->nn].name)
		return -ENOMEM;
	*id = (uint32_t)w->nn++;
	ret = npu__cstate_fit(c);
	if (ret)
		return ret;
	c->state[*id] = N_ALIVE;
	c->fused_into[*id] = NPU_VALUE_NONE;
	c->origin[*id] = origin;
	memset(c->counted[*id], 0xff, sizeof(c->counted[*id]));
	return 0;
}

/* A new value like @like (dtype, quantization) with @rank/@dims. */
int npu__add_value_raw(struct cstate *c, const struct gvalue *like,
		       uint32_t rank, const uint32_t *dims, void *data,
		       uint32_t *id)
{
	struct npu_value_desc d = {
		.name = like->name, .dtype = like->dtype, .rank = rank,
		.scale = like->scale, .zero_point = like->zero_point,
	};
	/* read before the push, which may move @like */
	const struct gchq *q = like->chq;
	uint32_t *cons;
	int ret;

	/* per-channel weights keep their channels (OIHW packed to OHWI: axis 0) */
	if (q && (q->axis >= rank || dims[q->axis] != q->n))
		return -EINVAL;
	memcpy(d.dims, dims, 4ull * rank);
	ret = npu__graph_push_value(c->w, &d, data, id);
	if (ret)
		return ret;
	if (q) {
		c->w->v[*id].chq = npu__chq_new(q->axis, q->n, q->scale, q->zp);
		if (!c->w->v[*id].chq)
			return -ENOMEM;
	}
	if (c->w->nv > c->cap_consumers) {
		size_t cap = c->w->nv + c->w->nv / 2 + 16;

		cons = realloc(c->consumers, cap * 4);
		if (!cons)
			return -ENOMEM;
		c->consumers = cons;
		cons = realloc(c->readers_xor, cap * 4);
		if (!cons)
			return -ENOMEM;
		c->readers_xor = cons;
		c->cap_consumers = cap;
	}
	c->consumers[*id] = 0;
	c->readers_xor[*id] = 0;
	return 0;
}

void npu__count_consumers(struct cstate *c)
{
	struct npu_graph *w = c->w;
	size_t i;

	memset(c->consumers, 0, w->nv * 4);
	memset(c->readers_xor, 0, w->nv * 4);
	memset(c->counted, 0xff, w->nn * sizeof(*c->counted));
	for (i = 0; i < w->nn; i++)
		npu__recount_node(c, (uint32_t)i);
}

/*
 * No rewrite changes a kernel node's inputs, so they need no copy in
 * @counted (a kernel has up to NPU_KERNEL_MAX_INPUTS): counted[id][0]
 * says only whether they are counted.
 */
static void recount_kernel(struct cstate *c, uint32_t id)
{
	const struct gnode *n = &c->w->n[id];
	bool was = c->counted[id][0] != NPU_VALUE_NONE;
	bool now = c->state[id] == N_ALIVE;
	uint32_t k;

	if (was == now)
		return;
	for (k = 0; k < n->kin; k++) {
		if (n->kv[k] == NPU_VALUE_NONE)
			continue;
		if (now)
			c->consumers[n->kv[k]]++;
		else
			c->consumers[n->kv[k]]--;
		c->readers_xor[n->kv[k]] ^= id;
	}
	c->counted[id][0] = now ? 0 : NPU_VALUE_NONE;
}

void npu__recount_node(struct cstate *c, uint32_t id)
{
	const struct gnode *n = &c->w->n[id];
	uint32_t *was = c->counted[id], k;

	if (n->kind == NPU_NODE_KERNEL) {
		recount_kernel(c, id);
		return;
	}
	for (k = 0; k < GNODE_MAX_INPUTS; k++) {
		if (was[k] != NPU_VALUE_NONE) {
			c->consumers[was[k]]--;
			c->readers_xor[was[k]] ^= id;
		}
		was[k] = NPU_VALUE_NONE;
	}
	if (c->state[id] != N_ALIVE)
		return;
	for (k = 0; k < n->num_inputs; k++) {
		was[k] = n->in[k];
		if (n->in[k] != NPU_VALUE_NONE) {
			c->consumers[n->in[k]]++;
			c->readers_xor[n->in[k]] ^= id;
		}
	}
}

/* ---- Constant folding ---------------------------------------------------- */

static bool all_static(const struct npu_graph *w, const struct gnode *n)
{
	const uint32_t *in = npu__node_inputs(n);
	uint32_t k;

	for (k = 0; k < npu__node_num_inputs(n); k++)
		if (in[k] != NPU_VALUE_NONE && !w->v[in[k]].data)
			return false;
	return true;
}

static int fold_node(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id];
	struct gvalue *vo = &w->v[n->out];
	struct gbind bin[GNODE_MAX_INPUTS] = { 0 }, bout = { 0 };
	void *data;
	uint32_t k;
	int ret;

	if (n->kind == NPU_NODE_KERNEL) {
		/* the same run path as the runtime's, once */
		ret = npu__fold_kernel(w, n);
		if (!ret)
			c->state[id] = N_FOLDED;
		return ret;
	}
	if (n->kind == NPU_NODE_RESHAPE) {
		const struct gvalue *vi = &w->v[n->in[0]];

		if (vi->elems != vo->elems || vi->dtype != vo->dtype)
			return npu__graph_fail(w, "node %s (RESHAPE): element count or dtype differs",
					       n->name);
		data = malloc(vo->bytes ? vo->bytes : 1);
		if (!data)
			return -ENOMEM;
		memcpy(data, vi->data, vo->bytes);
	} else if (npu__node_has_ops(n)) {
		struct npu_op *ops[GNODE_MAX_OPS] = { 0 };
		struct npu_cpu_run run;
		char msg[256];
		size_t nops = 0, j;

		data = calloc(1, vo->bytes ? vo->bytes : 1);
		if (!data)
			return -ENOMEM;
		for (k = 0; k < n->num_inputs; k++)
			if (n->in[k] != NPU_VALUE_NONE)
				bin[k].host = w->v[n->in[k]].data;
		bout.host = data;
		ret = npu__graph_make_ops(w, n, bin, &bout, ops, &nops);
		/* Folding runs on the CPU within its default limits. */
		npu__cpu_run_init(&run, NULL, msg, sizeof(msg));
		for (j = 0; !ret && j < nops; j++) {
			ret = npu__op_run_host(ops[j], false, &run);
			if (ret)
				npu__graph_fail(w, "node %s (%s): folding its constant output: %s",
						n->name, npu__node_op_name(n), msg);
		}
		for (j = 0; j < nops; j++)
			npu_op_free(ops[j]);
		if (ret) {
			free(data);
			return ret;
		}
	} else {
		return 0;	/* rewritten into ops first, then folded */
	}
	vo->data = data;
	vo->data_borrowed = false;
	c->state[id] = N_FOLDED;
	return 0;
}

int npu__fold_constants(struct cstate *c)
{
	size_t i;
	int ret;

	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] != N_ALIVE || !all_static(c->w, &c->w->n[id]))
			continue;
		ret = fold_node(c, id);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- Rewrites ------------------------------------------------------------- */

static bool is_f32_static(const struct gvalue *v)
{
	return v->data && v->dtype == NPU_DTYPE_FP32;
}

static int rewrite_div(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id];
	const struct gvalue *b;
	uint32_t nb;
	float *r;
	uint64_t i;
	int ret;

	if (n->num_inputs != 2 || n->in[1] == NPU_VALUE_NONE)
		return npu__graph_fail(w, "node %s (DIV): needs a dividend and a divisor", n->name);
	if (!is_f32_static(&w->v[n->in[1]])) {
		/* a divisor known only at run time: the device divides */
		n->kind = NPU_NODE_OP;
		memset(&n->op, 0, sizeof(n->op));
		n->op.kind = NPU_OP_ELTWISE;
		n->op.eltwise.kind = NPU_ELTWISE_DIV;
		return 0;
	}
	b = &w->v[n->in[1]];
	r = malloc(b->bytes ? b->bytes : 1);
	if (!r)
		return -ENOMEM;
	for (i = 0; i < b->elems; i++)
		r[i] = 1.0f / ((const float *)b->data)[i];
	ret = npu__add_value_raw(c, b, b->rank, b->dims, r, &nb);
	if (ret) {
		free(r);
		return ret;
	}
	n = &w->n[id];
	n->kind = NPU_NODE_OP;
	memset(&n->op, 0, sizeof(n->op));
	n->op.kind = NPU_OP_ELTWISE;
	n->op.eltwise.kind = NPU_ELTWISE_MUL;
	n->in[1] = nb;
	npu__recount_node(c, id);
	return 0;
}

/* Per-channel factors of a BATCHNORM: y = x * s[c] + t[c]. */
static int bn_factors(struct npu_graph *w, const struct gnode *n, uint32_t ch,
		      float **s_out, float **t_out)
{
	const float *p[4];
	float *s, *t;
	uint32_t k;

	if (n->num_inputs != 5)
		return npu__graph_fail(w, "node %s (BATCHNORM): needs X, scale, bias, mean, var",
				       n->name);
	for (k = 1; k < 5; k++) {
		const struct gvalue *v = n->in[k] == NPU_VALUE_NONE ? NULL : &w->v[n->in[k]];

		if (!v || !is_f32_static(v) || v->elems != ch)
			return npu__graph_fail(w, "node %s (BATCHNORM): scale, bias, mean and var must be fp32 constants of %u elements",
					       n->name, ch);
		p[k - 1] = v->data;
	}
	s = malloc(4ull * ch);
	t = malloc(4ull * ch);
	if (!s || !t) {
		free(s);
		free(t);
		return -ENOMEM;
	}
	for (k = 0; k < ch; k++) {
		s[k] = p[0][k] / sqrtf(p[3][k] + n->epsilon);
		t[k] = p[1][k] - p[2][k] * s[k];
	}
	*s_out = s;
	*t_out = t;
	return 0;
}

static bool private_result(const struct cstate *c, uint32_t v)
{
	return c->consumers[v] == 1 && !(c->w->v[v].flags & NPU_VALUE_OUTPUT);
}

static void fuse(struct cstate *c, uint32_t into, uint32_t gone)
{
	struct npu_graph *w = c->w;

	w->n[into].out = w->n[gone].out;
	w->v[w->n[gone].out].producer = into;
	c->state[gone] = N_FUSED;
	c->fused_into[gone] = into;
	npu__recount_node(c, into);
	npu__recount_node(c, gone);
}

/*
 * Can a BATCHNORM over @ch channels of value @x fold into its producer
 * @p: an NCHW CONV2D or CONV_TRANSPOSE with static fp32 weights and bias,
 * no activation yet, whose result nothing else reads.
 */
static bool foldable_conv(const struct cstate *c, const struct gnode *p, uint32_t x,
			  uint32_t ch)
{
	const struct npu_graph *w = c->w;
	const struct gvalue *wv;

	if (p->kind != NPU_NODE_OP || !(p->flags & NPU_NODE_NCHW) ||
	    (p->op.kind != NPU_OP_CONV2D && p->op.kind != NPU_OP_CONV_TRANSPOSE) ||
	    p->op.act != NPU_ACT_NONE || !private_result(c, x) || p->num_inputs < 2 ||
	    (p->flags & GNODE_W_PACKED) || !is_f32_static(&w->v[p->in[1]]) ||
	    w->v[p->in[1]].rank != 4 ||
	    (p->num_inputs >= 3 && p->in[2] != NPU_VALUE_NONE &&
	     (!is_f32_static(&w->v[p->in[2]]) || w->v[p->in[2]].elems != ch)))
		return false;
	wv = &w->v[p->in[1]];
	if (p->op.kind == NPU_OP_CONV2D)
		return wv->dims[0] == ch;
	/* ONNX's [C, CO/groups, KH, KW] */
	return p->op.conv_transpose.groups &&
	       (uint64_t)wv->dims[1] * p->op.conv_transpose.groups == ch &&
	       wv->dims[0] % p->op.conv_transpose.groups == 0;
}

/* Output channel of weight element @i (@per elements per dims[0] slice). */
static uint32_t out_channel(const struct gnode *p, const struct gvalue *wv, uint64_t i,
			    uint64_t per)
{
	uint64_t c_in, mo;
	uint32_t cog, cpg;

	if (p->op.kind == NPU_OP_CONV2D)
		return (uint32_t)(i / per);
	cog = wv->dims[1];
	cpg = wv->dims[0] / p->op.conv_transpose.groups;
	c_in = i / per;
	mo = (i % per) / ((uint64_t)wv->dims[2] * wv->dims[3]);
	return (uint32_t)(c_in / cpg * cog + mo);
}

/*
 * Fold node @id, y = x * s[co] + t[co] over the output channels of x,
 * into x's producer @pid (foldable_conv()): W' = W * s[co], b' = b * s + t.
 * Takes @s and @t.
 */
static int fold_into_conv(struct cstate *c, uint32_t pid, uint32_t id, float *s, float *t,
			  uint32_t ch)
{
	struct npu_graph *w = c->w;
	struct gnode *p = &w->n[pid];
	const struct gvalue *wv = &w->v[p->in[1]];
	const float *b0 = p->num_inputs >= 3 && p->in[2] != NPU_VALUE_NONE ?
			  w->v[p->in[2]].data : NULL;
	uint64_t per = wv->elems / wv->dims[0], i;
	float *nw = malloc(wv->bytes), *nbias = malloc(4ull * ch);
	uint32_t wid, bid, k;
	int ret = -ENOMEM;

	if (!nw || !nbias)
		goto out;
	for (i = 0; i < wv->elems; i++)
		nw[i] = ((const float *)wv->data)[i] * s[out_channel(p, wv, i, per)];
	for (k = 0; k < ch; k++)
		nbias[k] = (b0 ? b0[k] : 0.0f) * s[k] + t[k];
	ret = npu__add_value_raw(c, wv, wv->rank, wv->dims, nw, &wid);
	if (ret)
		goto out;
	nw = NULL;
	ret = npu__add_value_raw(c, &w->v[p->in[1]], 1, &ch, nbias, &bid);
	if (ret)
		goto out;
	nbias = NULL;
	p = &w->n[pid];
	p->in[1] = wid;
	p->in[2] = bid;
	p->num_inputs = 3;
	fuse(c, pid, id);
out:
	free(nw);
	free(nbias);
	free(s);
	free(t);
	return ret;
}

/* *@added: the node the rewrite adds after @id, or NPU_VALUE_NONE. */
static int rewrite_bn(struct cstate *c, uint32_t id, uint32_t *added)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id], *p = NULL;
	const struct gvalue *x = &w->v[n->in[0]];
	uint32_t ch, pid = x->producer, k, dims[NPU_TENSOR_MAX_RANK];
	float *s = NULL, *t = NULL;
	int ret;

	if (x->rank < 2 || x->dtype != NPU_DTYPE_FP32)
		return npu__graph_fail(w, "node %s (BATCHNORM): X must be fp32 [N,C,...]", n->name);
	ch = x->dims[1];
	ret = bn_factors(w, n, ch, &s, &t);
	if (ret)
		return ret;
	if (pid != NPU_VALUE_NONE && c->state[pid] == N_ALIVE)
		p = &w->n[pid];
	if (p && foldable_conv(c, p, n->in[0], ch)) {
		return fold_into_conv(c, pid, id, s, t, ch);
	} else {
		/* Alone: a multiply and an add with [1,C,1,...] constants. */
		struct gnode add = { 0 };
		uint32_t sid, tid, mid, aid;
		struct gvalue xv = *x;

		for (k = 0; k < x->rank; k++)
			dims[k] = k == 1 ? ch : 1;
		ret = npu__add_value_raw(c, &xv, x->rank, dims, s, &sid);
		if (ret) {
			free(s);
			free(t);
			return ret;
		}
		ret = npu__add_value_raw(c, &xv, xv.rank, dims, t, &tid);
		if (ret) {
			free(t);
			return ret;
		}
		ret = npu__add_value_raw(c, &xv, xv.rank, xv.dims, NULL, &mid);
		if (ret)
			return ret;
		n = &w->n[id];
		add.name = n->name;
		add.kind = NPU_NODE_OP;
		add.op.kind = NPU_OP_ELTWISE;
		add.op.eltwise.kind = NPU_ELTWISE_ADD;
		add.num_inputs = 2;
		add.in[0] = mid;
		add.in[1] = tid;
		add.in[2] = NPU_VALUE_NONE;
		add.out = n->out;
		for (k = 2; k < GNODE_MAX_INPUTS; k++)
			add.in[k] = NPU_VALUE_NONE;
		ret = npu__add_node_raw(c, &add, c->origin[id], &aid);
		if (ret)
			return ret;
		n = &w->n[id];
		w->v[add.out].producer = aid;
		w->v[mid].producer = id;
		n->kind = NPU_NODE_OP;
		memset(&n->op, 0, sizeof(n->op));
		n->op.kind = NPU_OP_ELTWISE;
		n->op.eltwise.kind = NPU_ELTWISE_MUL;
		n->num_inputs = 2;
		n->in[1] = sid;
		for (k = 2; k < GNODE_MAX_INPUTS; k++)
			n->in[k] = NPU_VALUE_NONE;
		n->out = mid;
		*added = aid;
		npu__recount_node(c, id);
		npu__recount_node(c, aid);
		return 0;
	}
}

static int fold_affine(struct cstate *c, uint32_t id);

int npu__rewrite_special(struct cstate *c)
{
	/* the order again, with each node a rewrite adds right after its origin */
	uint32_t *order = malloc((2 * c->norder + 1) * sizeof(*order));
	size_t i, n = 0;
	int ret = 0;

	if (!order)
		return -ENOMEM;
	npu__count_consumers(c);
	for (i = 0; i < c->norder && !ret; i++) {
		uint32_t id = c->order[i], added = NPU_VALUE_NONE;

		order[n++] = id;
		if (c->state[id] != N_ALIVE)
			continue;
		if (c->w->n[id].kind == NPU_NODE_DIV)
			ret = rewrite_div(c, id);
		else if (c->w->n[id].kind == NPU_NODE_BATCHNORM)
			ret = rewrite_bn(c, id, &added);
		else if (c->w->n[id].kind == NPU_NODE_OP)
			ret = fold_affine(c, id);
		if (added != NPU_VALUE_NONE)
			order[n++] = added;
	}
	if (!ret) {
		memcpy(c->order, order, n * sizeof(*order));
		c->norder = n;
	}
	free(order);
	return ret;
}

/* ---- Fusion --------------------------------------------------------------- */

static bool is_float_plain(const struct gvalue *v)
{
	return v->dtype == NPU_DTYPE_FP32 && v->scale == 0.0f;
}

static bool same_shape(const struct gvalue *a, const struct gvalue *b)
{
	return a->rank == b->rank && !memcmp(a->dims, b->dims, 4ull * a->rank);
}

/*
 * Channels of a bias @s added to the output @y of @p, or 0 when @s is not
 * a per-channel vector along @p's channel axis.
 */
static uint32_t bias_channels(const struct gnode *p, const struct gvalue *y,
			      const struct gvalue *s)
{
	uint32_t axis = y->rank - 1, k, ch;

	if ((p->op.kind == NPU_OP_CONV2D || p->op.kind == NPU_OP_CONV_TRANSPOSE) &&
	    (p->flags & NPU_NODE_NCHW))
		axis = 1;
	ch = y->dims[axis];
	if (s->elems != ch || s->rank > y->rank)
		return 0;
	/* right-aligned broadcasting: the one non-1 dim must sit at @axis */
	for (k = 0; k < s->rank; k++) {
		uint32_t yaxis = y->rank - s->rank + k;

		if (s->dims[k] != 1 && yaxis != axis)
			return 0;
	}
	return ch;
}

/*
 * A MUL or an ADD of a static fp32 scalar or per-channel vector after a
 * convolution (foldable_conv()), folded into its weights and bias as
 * onnxruntime's ConvMulFusion and ConvAddFusion do: PP-OCRv4's learnable
 * affine blocks put both after most of their convs, and as ELTWISEs they
 * were two more passes over each result.  The same sums up to the
 * rounding of W * s, within the CONV2D tolerance.
 */
static int fold_affine(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	const struct gnode *n = &w->n[id];
	bool mul = n->op.kind == NPU_OP_ELTWISE && n->op.eltwise.kind == NPU_ELTWISE_MUL;
	uint32_t k, ch, pid, i;

	if (n->op.kind != NPU_OP_ELTWISE || (!mul && n->op.eltwise.kind != NPU_ELTWISE_ADD) ||
	    n->op.act != NPU_ACT_NONE || n->num_inputs != 2)
		return 0;
	for (k = 0; k < 2; k++) {
		const struct gvalue *x = &w->v[n->in[k]], *sv = &w->v[n->in[1 - k]];
		const float *v;
		float *s, *t;

		pid = x->producer;
		if (pid == NPU_VALUE_NONE || c->state[pid] != N_ALIVE || x->rank < 2 ||
		    !is_f32_static(sv) || !is_float_plain(x) ||
		    !is_float_plain(&w->v[n->out]) || !same_shape(x, &w->v[n->out]))
			continue;
		ch = x->dims[1];
		if (!foldable_conv(c, &w->n[pid], n->in[k], ch) ||
		    (sv->elems != 1 && bias_channels(&w->n[pid], x, sv) != ch))
			continue;
		s = malloc(4ull * ch);
		t = malloc(4ull * ch);
		if (!s || !t) {
			free(s);
			free(t);
			return -ENOMEM;
		}
		v = sv->data;
		for (i = 0; i < ch; i++) {
			float f = v[sv->elems == 1 ? 0 : i];

			s[i] = mul ? f : 1.0f;
			t[i] = mul ? 0.0f : f;
		}
		return fold_into_conv(c, pid, id, s, t, ch);
	}
	return 0;
}

static bool is_conv_like(const struct gnode *p)
{
	return p->op.kind == NPU_OP_GEMM || p->op.kind == NPU_OP_CONV2D ||
	       p->op.kind == NPU_OP_CONV_TRANSPOSE;
}

/* An ADD of a static per-channel vector after GEMM or a convolution. */
static int fuse_bias(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id], *p;
	uint32_t k, pid;
	int ret;

	if (n->op.kind != NPU_OP_ELTWISE || n->op.eltwise.kind != NPU_ELTWISE_ADD ||
	    n->op.act != NPU_ACT_NONE || n->num_inputs != 2)
		return 0;
	for (k = 0; k < 2; k++) {
		const struct gvalue *x = &w->v[n->in[k]], *s = &w->v[n->in[1 - k]];
		uint32_t ch, bid;
		void *copy;

		pid = x->producer;
		if (pid == NPU_VALUE_NONE || c->state[pid] != N_ALIVE)
			continue;
		p = &w->n[pid];
		if (p->kind != NPU_NODE_OP || p->op.act != NPU_ACT_NONE || !is_conv_like(p) ||
		    (p->num_inputs >= 3 && p->in[2] != NPU_VALUE_NONE) ||
		    !private_result(c, n->in[k]) || !is_f32_static(s) ||
		    !is_float_plain(x) || !same_shape(x, &w->v[n->out]) ||
		    !is_float_plain(&w->v[n->out]))
			continue;
		ch = bias_channels(p, x, s);
		if (!ch)
			continue;
		copy = malloc(4ull * ch);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, s->data, 4ull * ch);
		ret = npu__add_value_raw(c, s, 1, &ch, copy, &bid);
		if (ret) {
			free(copy);
			return ret;
		}
		p = &w->n[pid];
		p->in[2] = bid;
		p->num_inputs = 3;
		fuse(c, pid, id);
		return 0;
	}
	return 0;
}

/* An activation after GEMM, a convolution or ELTWISE, as its epilogue. */
static void fuse_activation(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id], *p;
	enum npu_activation act = n->op.act;
	const struct gvalue *x = &w->v[n->in[0]];
	uint32_t pid;

	if (n->op.kind != NPU_OP_ACTIVATION)
		return;
	if (act == NPU_ACT_CLIP) {
		if (n->op.clip.min == 0.0f && n->op.clip.max == 6.0f)
			act = NPU_ACT_RELU6;
		else if (n->op.clip.min == 0.0f && isinf(n->op.clip.max) && n->op.clip.max > 0)
			act = NPU_ACT_RELU;
		else
			return;
	}
	/* the unary functions are ACTIVATION's alone */
	if (act == NPU_ACT_NONE || act > NPU_ACT_HARD_SWISH)
		return;
	pid = x->producer;
	if (pid == NPU_VALUE_NONE || c->state[pid] != N_ALIVE)
		return;
	p = &w->n[pid];
	if (p->kind != NPU_NODE_OP || p->op.act != NPU_ACT_NONE ||
	    (!is_conv_like(p) && p->op.kind != NPU_OP_ELTWISE) ||
	    !private_result(c, n->in[0]) || !is_float_plain(x) ||
	    !is_float_plain(&w->v[n->out]) || !same_shape(x, &w->v[n->out]))
		return;
	p->op.act = act;
	p->op.act_alpha = act == NPU_ACT_LEAKY_RELU || act == NPU_ACT_HARD_SIGMOID ?
			  n->op.act_alpha : 0.0f;
	p->op.act_beta = act == NPU_ACT_HARD_SIGMOID ? n->op.act_beta : 0.0f;
	fuse(c, pid, id);
}

int npu__fuse_bias(struct cstate *c)
{
	size_t i;
	int ret;

	npu__count_consumers(c);
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] != N_ALIVE || c->w->n[id].kind != NPU_NODE_OP)
			continue;
		ret = fuse_bias(c, id);
		if (ret)
			return ret;
	}
	return 0;
}

int npu__fuse_epilogues(struct cstate *c)
{
	size_t i;
	int ret;

	npu__count_consumers(c);
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] != N_ALIVE || c->w->n[id].kind != NPU_NODE_OP)
			continue;
		ret = fuse_bias(c, id);
		if (ret)
			return ret;
		if (c->state[id] == N_ALIVE)
			fuse_activation(c, id);
	}
	return 0;
}

/* Drop nodes no output needs. */
int npu__drop_dead(struct cstate *c)
{
	struct npu_graph *w = c->w;
	uint8_t *need = calloc(w->nv ? w->nv : 1, 1);
	size_t i;
	uint32_t k;

	if (!need)
		return -ENOMEM;
	for (i = 0; i < w->nv; i++)
		if (w->v[i].flags & NPU_VALUE_OUTPUT)
			need[i] = 1;
	for (i = c->norder; i-- > 0;) {
		uint32_t id = c->order[i];
		struct gnode *n = &w->n[id];

		const uint32_t *in = npu__node_inputs(n), *outs = npu__node_outputs(n);
		bool needed = false;

		if (c->state[id] != N_ALIVE)
			continue;
		/* a node with several outputs runs if any of them is needed */
		for (k = 0; k < npu__node_num_outputs(n); k++)
			needed |= outs[k] != NPU_VALUE_NONE && need[outs[k]];
		if (!needed) {
			c->state[id] = N_DEAD;
			continue;
		}
		for (k = 0; k < npu__node_num_inputs(n); k++)
			if (in[k] != NPU_VALUE_NONE)
				need[in[k]] = 1;
	}
	free(need);
	npu__count_consumers(c);
	return 0;
}

/*
 * NCHW convolution weights, packed once: CONV2D's OIHW -> OHWI,
 * CONV_TRANSPOSE's [C, CO/groups, KH, KW] -> [C, KH, KW, CO/groups] (the
 * same move of dim 1 last).
 */
int npu__pack_weights(struct cstate *c)
{
	struct npu_graph *w = c->w;
	size_t i;
	int ret;

	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i], co, ci, kh, kw, o, a, y, x, wid;
		struct gnode *n = &w->n[id];
		const struct gvalue *wv;
		uint32_t dims[4];
		uint8_t *dst;
		size_t es;

		if (c->state[id] != N_ALIVE || n->kind != NPU_NODE_OP ||
		    (n->op.kind != NPU_OP_CONV2D && n->op.kind != NPU_OP_CONV_TRANSPOSE) ||
		    !(n->flags & NPU_NODE_NCHW) || (n->flags & GNODE_W_PACKED) ||
		    n->num_inputs < 2 || !w->v[n->in[1]].data || w->v[n->in[1]].rank != 4)
			continue;
		wv = &w->v[n->in[1]];
		co = wv->dims[0];
		ci = wv->dims[1];
		kh = wv->dims[2];
		kw = wv->dims[3];
		es = npu_dtype_size(wv->dtype);
		dst = malloc(wv->bytes);
		if (!dst)
			return -ENOMEM;
		for (o = 0; o < co; o++)
			for (a = 0; a < ci; a++)
				for (y = 0; y < kh; y++)
					for (x = 0; x < kw; x++)
						memcpy(dst + es * ((((uint64_t)o * kh + y) * kw + x) * ci + a),
						       (const uint8_t *)wv->data +
						       es * ((((uint64_t)o * ci + a) * kh + y) * kw + x), es);
		dims[0] = co;
		dims[1] = kh;
		dims[2] = kw;
		dims[3] = ci;
		{
			/* dim 1 moves last: per-channel scales go with it */
			static const uint32_t moved[4] = { 0, 3, 1, 2 };
			struct gvalue like = *wv;
			const struct gchq *q = wv->chq;

			like.chq = NULL;
			ret = npu__add_value_raw(c, &like, 4, dims, dst, &wid);
			if (ret) {
				free(dst);
				return ret;
			}
			if (q) {
				w->v[wid].chq = npu__chq_new(moved[q->axis], q->n, q->scale, q->zp);
				if (!w->v[wid].chq)
					return -ENOMEM;
			}
		}
		n = &w->n[id];
		n->in[1] = wid;
		n->flags |= GNODE_W_PACKED;
	}
	return 0;
}

/* ---- Layout plan ---------------------------------------------------------- */

/*
 * NCHW convolutions and pools read and write NHWC views of NCHW memory,
 * which the device engine takes only on its strided (slow) paths.  An
 * internal 4-D value that nothing but such ops and layout-free ops
 * (ELTWISE, ACTIVATION, per-tensor QUANTIZE and DEQUANTIZE: a QDQ
 * model's convolutions are between them) touch is stored NHWC instead,
 * densely; the
 * layout-free ops then work on [N,H,W,C] shapes, with their static
 * broadcast operands permuted to match.  Graph inputs and outputs, and
 * values a RESHAPE or any other op sees, keep the graph's layout.
 */
enum { L_ROLE_NONE, L_ROLE_FREE, L_ROLE_GROUP };

/* How node @n uses input @k (or its output for k == num_inputs). */
static int layout_role(const struct gnode *n, uint32_t k)
{
	bool out = k == n->num_inputs;

	/* views of any storage: the rest of the graph decides */
	if (npu__node_is_move(n))
		return L_ROLE_FREE;
	if (n->kind != NPU_NODE_OP)
		return L_ROLE_NONE;
	switch (n->op.kind) {
	case NPU_OP_CONV2D:
	case NPU_OP_CONV_TRANSPOSE:
	case NPU_OP_POOL2D:
	case NPU_OP_RESIZE:
		if (!(n->flags & NPU_NODE_NCHW))
			return L_ROLE_NONE;
		return out || k == 0 ? L_ROLE_FREE : L_ROLE_NONE;
	case NPU_OP_ELTWISE:
	case NPU_OP_ACTIVATION:
	case NPU_OP_LUT:	/* its table (static) is no tensor of the layout */
	/* per tensor (npu__plan_layout() keeps per-channel ones out) */
	case NPU_OP_QUANTIZE:
	case NPU_OP_DEQUANTIZE:
		return L_ROLE_GROUP;
	default:
		return L_ROLE_NONE;
	}
}

/*
 * A QUANTIZE or DEQUANTIZE along a channel axis: its axis is the graph's,
 * so it keeps the graph's layout.
 */
static bool per_channel_qdq(const struct npu_graph *w, const struct gnode *n)
{
	return n->kind == NPU_NODE_OP &&
	       (n->op.kind == NPU_OP_QUANTIZE || n->op.kind == NPU_OP_DEQUANTIZE) &&
	       (w->v[n->in[0]].chq || w->v[n->out].chq);
}

static bool layout_candidate(const struct gvalue *v)
{
	return v->rank == 4 && !v->data && !(v->flags & (NPU_VALUE_INPUT | NPU_VALUE_OUTPUT));
}

/* A copy of static @s broadcast against 4-D values, permuted to NHWC. */
static int permute_static(struct cstate *c, uint32_t sid, uint32_t *out)
{
	const struct gvalue *s = &c->w->v[sid];
	uint32_t d[4] = { 1, 1, 1, 1 }, nd[4], n, ch, h, w, k;
	size_t es = npu_dtype_size(s->dtype);
	uint8_t *dst;
	int ret;

	for (k = 0; k < s->rank; k++)
		d[4 - s->rank + k] = s->dims[k];
	nd[0] = d[0];
	nd[1] = d[2];
	nd[2] = d[3];
	nd[3] = d[1];
	dst = malloc(s->bytes ? s->bytes : 1);
	if (!dst)
		return -ENOMEM;
	for (n = 0; n < d[0]; n++)
		for (ch = 0; ch < d[1]; ch++)
			for (h = 0; h < d[2]; h++)
				for (w = 0; w < d[3]; w++)
					memcpy(dst + es * (((uint64_t)(n * d[2] + h) * d[3] + w) * d[1] + ch),
					       (const uint8_t *)s->data +
					       es * (((uint64_t)(n * d[1] + ch) * d[2] + h) * d[3] + w), es);
	ret = npu__add_value_raw(c, s, 4, nd, dst, out);
	if (ret)
		free(dst);
	return ret;
}

/* An OP node that keeps one layout across all its runtime operands. */
static bool layout_group(const struct cstate *c, uint32_t id)
{
	const struct gnode *n = &c->w->n[id];

	return c->state[id] == N_ALIVE && n->kind == NPU_NODE_OP &&
	       layout_role(n, 0) == L_ROLE_GROUP;
}

/* Operand @k of @n: an input, or the output for k == num_inputs. */
static uint32_t operand(const struct gnode *n, uint32_t k)
{
	return k < n->num_inputs ? n->in[k] : n->out;
}

/*
 * Mark bad every runtime operand of layout-free node @id and queue the
 * newly marked ones.
 */
static void spread_bad(struct npu_graph *w, uint32_t id, uint8_t *bad,
		       uint32_t *queue, size_t *tail)
{
	const struct gnode *n = &w->n[id];
	uint32_t k;

	for (k = 0; k <= n->num_inputs; k++) {
		uint32_t v = operand(n, k);

		if (v != NPU_VALUE_NONE && !w->v[v].data && !bad[v]) {
			bad[v] = 1;
			queue[(*tail)++] = v;
		}
	}
}

int npu__plan_layout(struct cstate *c)
{
	struct npu_graph *w = c->w;
	uint8_t *bad = calloc(w->nv ? w->nv : 1, 1);
	uint8_t *spread = calloc(w->nn ? w->nn : 1, 1);
	uint32_t *start = calloc(w->nv + 1, sizeof(*start));
	uint32_t *queue = malloc((w->nv ? w->nv : 1) * sizeof(*queue));
	uint32_t *touch = NULL, *fill = NULL;
	size_t i, head = 0, tail = 0, total = 0;
	uint32_t k;
	int ret = 0;

	if (!bad || !spread || !start || !queue) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nv; i++)
		bad[i] = !layout_candidate(&w->v[i]);
	/* values some node needs in the graph's own layout */
	for (i = 0; i < c->norder; i++) {
		const struct gnode *n = &w->n[c->order[i]];

		if (c->state[c->order[i]] != N_ALIVE)
			continue;
		if (n->kind == NPU_NODE_KERNEL) {
			/* kernels see dense row-major values, as the graph has them */
			for (k = 0; k < n->kin + n->kout; k++)
				if (n->kv[k] != NPU_VALUE_NONE)
					bad[n->kv[k]] = 1;
			continue;
		}
		for (k = 0; k <= n->num_inputs; k++) {
			uint32_t v = operand(n, k);

			if (v != NPU_VALUE_NONE &&
			    (layout_role(n, k) == L_ROLE_NONE || per_channel_qdq(w, n)))
				bad[v] = 1;
		}
	}
	/*
	 * Layout-free ops keep one layout across all their runtime operands:
	 * a bad operand (or a static one above rank 4) makes every runtime
	 * operand bad, and that spreads on through the layout-free ops
	 * touching them, breadth first over the ops touching each value.
	 */
	for (i = 0; i < w->nn; i++) {
		if (!layout_group(c, (uint32_t)i))
			continue;
		for (k = 0; k <= w->n[i].num_inputs; k++) {
			uint32_t v = operand(&w->n[i], k);

			if (v != NPU_VALUE_NONE && !w->v[v].data) {
				start[v + 1]++;
				total++;
			}
		}
	}
	for (i = 0; i < w->nv; i++)
		start[i + 1] += start[i];
	touch = malloc((total ? total : 1) * sizeof(*touch));
	fill = calloc(w->nv ? w->nv : 1, sizeof(*fill));
	if (!touch || !fill) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nn; i++) {
		if (!layout_group(c, (uint32_t)i))
			continue;
		for (k = 0; k <= w->n[i].num_inputs; k++) {
			uint32_t v = operand(&w->n[i], k);

			if (v != NPU_VALUE_NONE && !w->v[v].data)
				touch[start[v] + fill[v]++] = (uint32_t)i;
		}
	}
	for (i = 0; i < w->nv; i++)
		if (bad[i] && !w->v[i].data)
			queue[tail++] = (uint32_t)i;
	for (i = 0; i < w->nn; i++) {
		if (!layout_group(c, (uint32_t)i))
			continue;
		for (k = 0; k <= w->n[i].num_inputs; k++) {
			uint32_t v = operand(&w->n[i], k);

			if (v != NPU_VALUE_NONE && w->v[v].data && w->v[v].rank > 4) {
				spread[i] = 1;
				spread_bad(w, (uint32_t)i, bad, queue, &tail);
				break;
			}
		}
	}
	while (head < tail) {
		uint32_t v = queue[head++], j;

		for (j = start[v]; j < start[v + 1]; j++) {
			if (!spread[touch[j]]) {
				spread[touch[j]] = 1;
				spread_bad(w, touch[j], bad, queue, &tail);
			}
		}
	}
	for (i = 0; i < w->nv; i++)
		w->v[i].nhwc = !bad[i];
	/* static operands of layout-free ops on NHWC values, permuted */
	for (i = 0; i < c->norder && !ret; i++) {
		uint32_t id = c->order[i];
		struct gnode *n = &w->n[id];

		if (c->state[id] != N_ALIVE || n->kind != NPU_NODE_OP ||
		    layout_role(n, 0) != L_ROLE_GROUP || !w->v[n->out].nhwc)
			continue;
		for (k = 0; k < n->num_inputs && !ret; k++) {
			uint32_t v = n->in[k], nv;

			if (v == NPU_VALUE_NONE || !w->v[v].data || w->v[v].elems == 1 ||
			    n->op.kind == NPU_OP_LUT)
				continue;
			ret = permute_static(c, v, &nv);
			if (!ret)
				w->n[id].in[k] = nv;
		}
	}
out:
	free(bad);
	free(spread);
	free(start);
	free(queue);
	free(touch);
	free(fill);
	return ret;
}

/* ---- LayerNorm spelled out ----------------------------------------------- */

/* The live OP node writing @v, else NULL. */
static struct gnode *producer_op(struct cstate *c, uint32_t v)
{
	uint32_t pid = c->w->v[v].producer;
	struct gnode *p;

	if (pid == NPU_VALUE_NONE || c->state[pid] != N_ALIVE)
		return NULL;
	p = &c->w->n[pid];
	return p->kind == NPU_NODE_OP ? p : NULL;
}

static bool is_eltwise(const struct gnode *n, enum npu_eltwise_kind kind)
{
	return n && n->kind == NPU_NODE_OP && n->op.kind == NPU_OP_ELTWISE && n->op.eltwise.kind == kind &&
	       n->op.act == NPU_ACT_NONE && n->num_inputs == 2;
}

/* Is @v read by @n nodes' inputs in all, none of them a graph output? */
static bool read_only_by(const struct cstate *c, uint32_t v, uint32_t n)
{
	return c->consumers[v] == n && !(c->w->v[v].flags & NPU_VALUE_OUTPUT);
}

/* The one live node reading @v, if exactly one input reads it. */
static uint32_t sole_consumer(const struct cstate *c, uint32_t v)
{
	return read_only_by(c, v, 1) ? c->readers_xor[v] : NPU_VALUE_NONE;
}

static bool static_scalar(const struct gvalue *v, float *f)
{
	if (!is_f32_static(v) || v->elems != 1)
		return false;
	*f = *(const float *)v->data;
	return true;
}

/*
 * A static operand of the MUL or ADD after the normalisation that varies
 * only along the normalised dims @nd[0..@nr) (leading ones are free).
 */
static bool affine_operand(const struct gvalue *s, uint32_t nr, const uint32_t *nd)
{
	uint32_t k, lead;

	if (!is_f32_static(s) || !s->rank || s->rank > nr + NPU_TENSOR_MAX_RANK)
		return false;
	for (lead = 0; lead < s->rank && s->rank - lead > nr; lead++)
		if (s->dims[lead] != 1)
			return false;
	if (s->rank - lead != nr)
		return false;
	for (k = 0; k < nr; k++)
		if (s->dims[lead + k] != nd[k])
			return false;
	return true;
}

/*
 * @m is REDUCE MEAN of a live value over a suffix of its dims, keeping
 * them: *@axis is where the suffix starts.
 */
static bool mean_over_suffix(const struct cstate *c, const struct gnode *m, uint32_t *axis)
{
	const struct gvalue *x;
	uint32_t a, full;

	if (!m || m->op.kind != NPU_OP_REDUCE || m->op.reduce.kind != NPU_REDUCE_MEAN ||
	    m->op.act != NPU_ACT_NONE || m->num_inputs != 1)
		return false;
	x = &c->w->v[m->in[0]];
	if (!x->rank || x->rank > NPU_TENSOR_MAX_RANK || !is_float_plain(x))
		return false;
	full = (1u << x->rank) - 1;
	for (a = 0; a < x->rank; a++)
		if (m->op.reduce.axes == (full & ~((1u << a) - 1)))
			break;
	*axis = a;
	return a < x->rank;
}

/* A static value of the normalised dims holding @s's elements. */
static int affine_value(struct cstate *c, uint32_t sid, uint32_t nr, const uint32_t *nd,
			uint32_t *out)
{
	const struct gvalue *s = &c->w->v[sid];
	void *copy = malloc(s->bytes ? s->bytes : 1);
	int ret;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, s->data, s->bytes);
	ret = npu__add_value_raw(c, s, nr, nd, copy, out);
	if (ret)
		free(copy);
	return ret;
}

/*
 * y = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma] [+ beta]
 * over the trailing dims from some axis on, as exporters spell
 * LayerNormalization: REDUCE MEAN, SUB, POW 2 (or a MUL by itself),
 * REDUCE MEAN, ADD eps, SQRT, DIV, then maybe MUL gamma and ADD beta.
 * Anchored at the DIV; the pattern's last node becomes one LAYERNORM and
 * the others are fused into it.
 */
static int layernorm_at(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *div = &w->n[id], *sq, *add, *m2, *pw, *sub, *m1;
	uint32_t chain[8], nchain = 0, last = id, d, s, x, e, axis, axis2, k, nr;
	uint32_t gsrc = NPU_VALUE_NONE, bsrc = NPU_VALUE_NONE, gid = NPU_VALUE_NONE;
	uint32_t bid = NPU_VALUE_NONE, nxt, sel, nd[NPU_TENSOR_MAX_RANK];
	uint32_t gamma_out = NPU_VALUE_NONE;
	const struct gvalue *xv;
	bool squared_by_mul;
	float eps, two;
	int ret;

	if (!is_eltwise(div, NPU_ELTWISE_DIV))
		return 0;
	d = div->in[0];
	s = div->in[1];
	sq = producer_op(c, s);
	if (!sq || sq->op.kind != NPU_OP_ACTIVATION || sq->op.act != NPU_ACT_SQRT ||
	    !read_only_by(c, s, 1))
		return 0;
	add = producer_op(c, sq->in[0]);
	if (!is_eltwise(add, NPU_ELTWISE_ADD) || !read_only_by(c, sq->in[0], 1))
		return 0;
	/* ADD(m2, eps) in either order */
	sel = static_scalar(&w->v[add->in[1]], &eps) ? 0 :
	      static_scalar(&w->v[add->in[0]], &eps) ? 1 : 2;
	if (sel == 2 || !(eps >= 0.0f) || !isfinite(eps))
		return 0;
	e = add->in[sel];
	m2 = producer_op(c, e);
	if (!mean_over_suffix(c, m2, &axis2) || !read_only_by(c, e, 1))
		return 0;
	pw = producer_op(c, m2->in[0]);
	if (!pw || !read_only_by(c, m2->in[0], 1))
		return 0;
	squared_by_mul = is_eltwise(pw, NPU_ELTWISE_MUL) && pw->in[0] == d && pw->in[1] == d;
	if (!squared_by_mul && !(is_eltwise(pw, NPU_ELTWISE_POW) && pw->in[0] == d &&
				 static_scalar(&w->v[pw->in[1]], &two) && two == 2.0f))
		return 0;
	/* d feeds the square (once or twice) and the DIV, nothing else */
	if (!read_only_by(c, d, squared_by_mul ? 3 : 2))
		return 0;
	sub = producer_op(c, d);
	if (!is_eltwise(sub, NPU_ELTWISE_SUB))
		return 0;
	x = sub->in[0];
	m1 = producer_op(c, sub->in[1]);
	if (!mean_over_suffix(c, m1, &axis) || axis != axis2 || m1->in[0] != x ||
	    !read_only_by(c, sub->in[1], 1))
		return 0;
	xv = &w->v[x];
	if (!is_float_plain(xv) || !same_shape(xv, &w->v[d]) ||
	    !same_shape(xv, &w->v[div->out]) || !is_float_plain(&w->v[div->out]))
		return 0;
	nr = xv->rank - axis;
	memcpy(nd, xv->dims + axis, 4ull * nr);
	/* then maybe * gamma, then maybe + beta, each shaped like the output */
	nxt = sole_consumer(c, div->out);
	if (nxt != NPU_VALUE_NONE && is_eltwise(&w->n[nxt], NPU_ELTWISE_MUL)) {
		struct gnode *mn = &w->n[nxt];
		uint32_t o = mn->in[0] == div->out ? mn->in[1] : mn->in[0];

		if (affine_operand(&w->v[o], nr, nd) && same_shape(xv, &w->v[mn->out])) {
			gsrc = o;
			last = nxt;
			gamma_out = mn->out;
			nxt = sole_consumer(c, mn->out);
		}
	}
	if (nxt != NPU_VALUE_NONE && is_eltwise(&w->n[nxt], NPU_ELTWISE_ADD)) {
		struct gnode *an = &w->n[nxt];
		uint32_t lo = w->n[last].out;
		uint32_t o = an->in[0] == lo ? an->in[1] : an->in[0];

		if (affine_operand(&w->v[o], nr, nd) && same_shape(xv, &w->v[an->out])) {
			bsrc = o;
			last = nxt;
		}
	}
	ret = gsrc == NPU_VALUE_NONE ? 0 : affine_value(c, gsrc, nr, nd, &gid);
	if (!ret && bsrc != NPU_VALUE_NONE)
		ret = affine_value(c, bsrc, nr, nd, &bid);
	if (ret)
		return ret;
	/* every node of the pattern but the last goes into the last */
	chain[nchain++] = m1->out;
	chain[nchain++] = d;
	chain[nchain++] = m2->in[0];
	chain[nchain++] = e;
	chain[nchain++] = sq->in[0];
	chain[nchain++] = s;
	chain[nchain++] = div->out;
	if (gsrc != NPU_VALUE_NONE && bsrc != NPU_VALUE_NONE)
		chain[nchain++] = gamma_out;
	for (k = 0; k < nchain; k++) {
		uint32_t pid = w->v[chain[k]].producer;

		if (pid == last)
			continue;
		c->state[pid] = N_FUSED;
		c->fused_into[pid] = last;
		npu__recount_node(c, pid);
	}
	div = &w->n[last];
	div->kind = NPU_NODE_OP;
	memset(&div->op, 0, sizeof(div->op));
	div->op.kind = NPU_OP_LAYERNORM;
	div->op.layernorm.axis = axis;
	div->op.layernorm.epsilon = eps;
	div->flags = 0;
	div->in[0] = x;
	div->in[1] = gid;
	div->in[2] = bid;
	div->num_inputs = bid != NPU_VALUE_NONE ? 3 : gid != NPU_VALUE_NONE ? 2 : 1;
	npu__recount_node(c, last);
	return 0;
}

int npu__rewrite_layernorm(struct cstate *c)
{
	size_t i;
	int ret;

	npu__count_consumers(c);
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] != N_ALIVE)
			continue;
		ret = layernorm_at(c, id);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- HardSwish spelled out ----------------------------------------------- */

/*
 * y = x * clip(x + 3, 0, 6) / 6, as exporters spell HardSwish: ADD 3,
 * ACTIVATION CLIP [0, 6], MUL by x, then MUL by 1/6 (DIV by 6 after the
 * constant rewrite).  Anchored at the last MUL, which becomes one
 * HARD_SWISH activation of x; the others are fused into it.
 */
static int hardswish_at(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *last = &w->n[id], *mx, *clip, *add;
	uint32_t m, cv, a, x, k, sel;
	float f;

	if (!is_eltwise(last, NPU_ELTWISE_MUL))
		return 0;
	sel = static_scalar(&w->v[last->in[1]], &f) ? 0 :
	      static_scalar(&w->v[last->in[0]], &f) ? 1 : 2;
	if (sel == 2 || f != 1.0f / 6.0f)
		return 0;
	m = last->in[sel];
	mx = producer_op(c, m);
	if (!is_eltwise(mx, NPU_ELTWISE_MUL) || !read_only_by(c, m, 1))
		return 0;
	for (k = 0; k < 2; k++) {
		cv = mx->in[k];
		x = mx->in[1 - k];
		clip = producer_op(c, cv);
		if (clip && clip->op.kind == NPU_OP_ACTIVATION && clip->op.act == NPU_ACT_CLIP &&
		    clip->op.clip.min == 0.0f && clip->op.clip.max == 6.0f &&
		    read_only_by(c, cv, 1))
			break;
	}
	if (k == 2)
		return 0;
	a = clip->in[0];
	add = producer_op(c, a);
	if (!is_eltwise(add, NPU_ELTWISE_ADD) || !read_only_by(c, a, 1))
		return 0;
	sel = add->in[0] == x && static_scalar(&w->v[add->in[1]], &f) ? 0 :
	      add->in[1] == x && static_scalar(&w->v[add->in[0]], &f) ? 1 : 2;
	if (sel == 2 || f != 3.0f || !is_float_plain(&w->v[x]) ||
	    !same_shape(&w->v[x], &w->v[a]) || !same_shape(&w->v[x], &w->v[m]) ||
	    !same_shape(&w->v[x], &w->v[last->out]) || !is_float_plain(&w->v[last->out]))
		return 0;
	for (k = 0; k < 3; k++) {
		uint32_t pid = w->v[k == 0 ? a : k == 1 ? cv : m].producer;

		c->state[pid] = N_FUSED;
		c->fused_into[pid] = id;
		npu__recount_node(c, pid);
	}
	memset(&last->op, 0, sizeof(last->op));
	last->op.kind = NPU_OP_ACTIVATION;
	last->op.act = NPU_ACT_HARD_SWISH;
	last->in[0] = x;
	last->in[1] = NPU_VALUE_NONE;
	last->num_inputs = 1;
	npu__recount_node(c, id);
	return 0;
}

int npu__rewrite_hardswish(struct cstate *c)
{
	size_t i;
	int ret;

	npu__count_consumers(c);
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] != N_ALIVE)
			continue;
		ret = hardswish_at(c, id);
		if (ret)
			return ret;
	}
	return 0;
}
