// SPDX-License-Identifier: MIT
/*
 * Splitting one graph into pipeline stages (npu_group with
 * NPU_GROUP_PIPELINE): where the cuts go, and the graph each stage
 * compiles.
 *
 * Stages are runs of consecutive nodes in one topological order, so
 * every value flows forward: a stage reads the graph's inputs and the
 * values earlier stages hand on, never a later stage's.  A stage's graph
 * keeps every value of the original under the same id (so the group binds
 * one id the same way in every stage); only the flags change: a value
 * handed in becomes an input, a value handed on becomes an output, and
 * the graph's own inputs and outputs that the stage does not touch lose
 * their flags (compile ignores a value nothing reads or writes).
 *
 * A node costs the cycles the device's timing model (vnpu_engine_cycles(),
 * ops.rst "Timing model") charges for the commands compile makes of it:
 * the same figure the device adds to a job's cycles, so balanced costs
 * are stages that keep their devices equally busy.  A node merged into
 * another costs nothing (its root carries the merged command), and so
 * does a node the CPU runs (a kernel node, an op the device refuses).
 * An automatic cut goes where the running cost crosses its share of the
 * total; within 1/32 of the total of that point the cut with the fewest
 * bytes crossing it wins, since every crossing byte is written to a
 * shared buffer once per request.
 *
 * An automatic cut also keeps the bits: a stage must compute what the
 * whole graph computes.  Compile merges some nodes into others (an
 * activation or a bias add into a convolution, a spelled-out LayerNorm
 * or HardSwish into one op), and a cut between them would leave each
 * half to run on its own, rounding differently; and it stores 4-D values
 * between convolutions NHWC, which a value handed on (in the graph's
 * layout) is not, so the convolution reading it would run another
 * kernel over another layout.  So a cut never splits what compile
 * merged, where any position within the range allows that, and a 4-D
 * value crosses as its NHWC twin (nhwc_twin()).  What merged, and each
 * node's commands, are learnt from compiling the whole graph for the CPU
 * once: the CPU path splits an op into the tiles the device would run.  A forced cut is the caller's choice: it may
 * split either, and the outputs then differ from one device's by
 * rounding.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* How far (in parts of the total cost) a cut may move to cross fewer bytes. */
#define CUT_SLACK_DIV	32u

static bool value_ok(const struct npu_graph *g, uint32_t id)
{
	return id != NPU_VALUE_NONE && id < g->nv;
}

/* npu__node_macs() reads X and W: only where they exist (compile checks the rest). */
static uint64_t node_macs(const struct npu_graph *g, const struct gnode *n)
{
	if (n->kind != NPU_NODE_OP || !value_ok(g, n->out) || !value_ok(g, n->in[0]) ||
	    (n->op.kind != NPU_OP_GEMM && !value_ok(g, n->in[1])))
		return 0;
	return npu__node_macs(g, n);
}

/*
 * @order: the nodes in an order where each comes after the producers of
 * what it reads; the graph's own when it already is one (importers add
 * nodes so), else Kahn's.  -ELOOP for a cycle, -ENOENT for a value read
 * that nothing writes.
 */
static int order_nodes(struct npu_graph *g, uint32_t *order)
{
	uint32_t *deps = NULL, *queue = NULL;
	size_t i, head = 0, tail = 0;
	bool sorted = true;
	uint32_t k;

	for (i = 0; i < g->nn; i++) {
		const struct gnode *n = &g->n[i];
		const uint32_t *in = npu__node_inputs(n);

		for (k = 0; k < npu__node_num_inputs(n); k++) {
			const struct gvalue *v;

			if (!value_ok(g, in[k]))
				continue;
			v = &g->v[in[k]];
			if (v->producer == NPU_VALUE_NONE && !v->data && !(v->flags & NPU_VALUE_INPUT))
				return npu__graph_fail(g, "node %s (%s): reads value %s, which no node writes",
						       n->name, npu__node_op_name(n), v->name), -ENOENT;
			if (v->producer != NPU_VALUE_NONE && v->producer >= i)
				sorted = false;
		}
		order[i] = (uint32_t)i;
	}
	if (sorted)
		return 0;
	deps = calloc(g->nn, sizeof(*deps));
	queue = malloc(g->nn * sizeof(*queue));
	if (!deps || !queue) {
		free(deps);
		free(queue);
		return -ENOMEM;
	}
	for (i = 0; i < g->nn; i++) {
		const uint32_t *in = npu__node_inputs(&g->n[i]);

		for (k = 0; k < npu__node_num_inputs(&g->n[i]); k++)
			if (value_ok(g, in[k]) && g->v[in[k]].producer != NPU_VALUE_NONE)
				deps[i]++;
		if (!deps[i])
			queue[tail++] = (uint32_t)i;
	}
	/* A node's dependents are found by scanning: splitting is done once. */
	while (head < tail) {
		uint32_t done = queue[head++];

		for (i = 0; i < g->nn; i++) {
			const uint32_t *in = npu__node_inputs(&g->n[i]);

			for (k = 0; k < npu__node_num_inputs(&g->n[i]); k++)
				if (value_ok(g, in[k]) && g->v[in[k]].producer == done &&
				    !--deps[i])
					queue[tail++] = (uint32_t)i;
		}
	}
	free(deps);
	if (tail != g->nn) {
		free(queue);
		return npu__graph_fail(g, "the graph has a cycle: it cannot be split into stages"),
		       -ELOOP;
	}
	memcpy(order, queue, g->nn * sizeof(*order));
	free(queue);
	return 0;
}

/*
 * @cross[p]: bytes of the values alive across a cut before position p,
 * i.e. written before p and read at or after it.
 */
static int crossing_bytes(const struct npu_graph *g, const uint32_t *pos, uint64_t *cross)
{
	uint32_t *last = malloc((g->nv ? g->nv : 1) * sizeof(*last));
	size_t i;
	uint32_t k;

	if (!last)
		return -ENOMEM;
	for (i = 0; i < g->nv; i++)
		last[i] = 0;
	for (i = 0; i < g->nn; i++) {
		const uint32_t *in = npu__node_inputs(&g->n[i]);

		for (k = 0; k < npu__node_num_inputs(&g->n[i]); k++)
			if (value_ok(g, in[k]) && pos[i] + 1 > last[in[k]])
				last[in[k]] = pos[i] + 1;
	}
	memset(cross, 0, (g->nn + 1) * sizeof(*cross));
	for (i = 0; i < g->nv; i++) {
		const struct gvalue *v = &g->v[i];
		uint32_t from;

		if (v->producer == NPU_VALUE_NONE || last[i] <= pos[v->producer] + 1)
			continue;
		/* crosses every cut at positions pos[producer]+1 .. last-1 */
		from = pos[v->producer] + 1;
		cross[from] += v->bytes;
		cross[last[i]] -= v->bytes;
	}
	for (i = 1; i <= g->nn; i++)
		cross[i] += cross[i - 1];
	free(last);
	return 0;
}

/*
 * Compile @g whole for the CPU once and learn from it @cost[node] (the
 * timing model's cycles of its commands) and @unsafe[p] (a cut before
 * position p would split nodes compile merges).
 */
static int whole_graph(struct npu_graph *g, const uint32_t *pos, uint32_t compile_flags,
		       uint64_t *cost, uint8_t *unsafe)
{
	int32_t *span = calloc(g->nn + 2, sizeof(*span));
	struct npu_runtime *rt = NULL;
	size_t i;
	int ret;

	if (!span)
		return -ENOMEM;
	ret = npu_graph_compile(g, NULL, compile_flags | NPU_COMPILE_CPU_ONLY, &rt);
	if (ret) {
		free(span);
		return ret;
	}
	memset(cost, 0, g->nn * sizeof(*cost));
	for (i = 0; i < rt->num_steps; i++)
		if (rt->steps[i].op && rt->steps[i].node < g->nn)
			cost[rt->steps[i].node] += npu__op_cycles(rt->steps[i].op);
	/* +1 at the first position a span forbids, -1 past its last */
	for (i = 0; i < g->nn; i++) {
		uint32_t root = (uint32_t)i, a, b, hops = 0;

		while (rt->nodes[root].where == NPU_WHERE_FUSED && rt->nodes[root].fused_into < g->nn &&
		       hops++ < g->nn)
			root = rt->nodes[root].fused_into;
		a = pos[i] < pos[root] ? pos[i] : pos[root];
		b = pos[i] < pos[root] ? pos[root] : pos[i];
		if (a != b) {
			span[a + 1]++;
			span[b + 1]--;
		}
	}
	npu_runtime_free(rt);
	for (i = 0; i <= g->nn; i++) {
		if (i)
			span[i] += span[i - 1];
		unsafe[i] = span[i] > 0;
	}
	free(span);
	return 0;
}

static uint64_t near_dist(const uint64_t *prefix, uint64_t target, uint32_t p)
{
	return prefix[p] > target ? prefix[p] - target : target - prefix[p];
}

/* The cut before which stage @k (k >= 1) of @stages starts, by cost. */
static uint32_t auto_cut(size_t nn, const uint64_t *prefix, const uint64_t *cross,
			 const uint8_t *unsafe, size_t k, size_t stages, uint32_t lo, uint32_t hi)
{
	uint64_t total = prefix[nn], target = total / stages * k + total % stages * k / stages;
	uint64_t slack = total / CUT_SLACK_DIV, best_cross = UINT64_MAX, best_dist = UINT64_MAX;
	uint32_t p, best = lo, near = lo;
	bool any_safe = false;

	for (p = lo; p <= hi; p++)
		any_safe |= !unsafe[p];
	/* The position whose prefix is nearest the target. */
	for (p = lo; p <= hi; p++) {
		uint64_t d = prefix[p] > target ? prefix[p] - target : target - prefix[p];

		if (any_safe && unsafe[p])
			continue;
		if (d < best_dist) {
			best_dist = d;
			near = p;
		}
	}
	best = near;
	/* Fewest bytes crossing within the slack; of those, the nearest. */
	best_dist = UINT64_MAX;
	for (p = lo; p <= hi; p++) {
		uint64_t d = prefix[p] > target ? prefix[p] - target : target - prefix[p];

		if (d > near_dist(prefix, target, near) + slack || (any_safe && unsafe[p]))
			continue;
		if (cross[p] < best_cross || (cross[p] == best_cross && d < best_dist)) {
			best_cross = cross[p];
			best_dist = d;
			best = p;
		}
	}
	return best;
}

/*
 * Positions (in @order) at which stages 1.. start: @start[0] = 0,
 * @start[stages] = nn.  @cost: per node.
 */
static int place_cuts(struct npu_graph *g, size_t stages, const uint32_t *cuts,
		      const uint64_t *cost, const uint8_t *unsafe, const uint32_t *pos,
		      const uint32_t *order, uint32_t *start)
{
	uint64_t *prefix = NULL, *cross = NULL;
	size_t k;
	int ret = 0;

	start[0] = 0;
	start[stages] = (uint32_t)g->nn;
	if (cuts) {
		for (k = 1; k < stages; k++) {
			if (cuts[k - 1] >= g->nn)
				return npu__graph_fail(g, "pipeline cut %zu: node %u is not in the graph (%zu nodes)",
						       k - 1, cuts[k - 1], g->nn), -EINVAL;
			start[k] = pos[cuts[k - 1]];
			if (start[k] <= start[k - 1])
				return npu__graph_fail(g, "pipeline cut %zu at node %s: stage %zu would be empty"
						       " (cuts must follow the graph's order)",
						       k - 1, g->n[cuts[k - 1]].name, k - 1), -EINVAL;
		}
		return 0;
	}
	prefix = malloc((g->nn + 1) * sizeof(*prefix));
	cross = malloc((g->nn + 1) * sizeof(*cross));
	if (!prefix || !cross) {
		ret = -ENOMEM;
		goto out;
	}
	prefix[0] = 0;
	for (k = 0; k < g->nn; k++)
		prefix[k + 1] = prefix[k] + cost[order[k]];
	ret = crossing_bytes(g, pos, cross);
	for (k = 1; k < stages && !ret; k++)
		/* leave at least one node to each later stage */
		start[k] = auto_cut(g->nn, prefix, cross, unsafe, k, stages, start[k - 1] + 1,
				    (uint32_t)(g->nn - (stages - k)));
out:
	free(prefix);
	free(cross);
	return ret;
}

void npu__pipeline_free(struct gpipe *pl)
{
	size_t s;

	if (!pl->st)
		return;
	for (s = 0; s < pl->num_stages; s++) {
		npu_graph_free(pl->st[s].graph);
		free(pl->st[s].io);
	}
	free(pl->st);
	pl->st = NULL;
}

/* Append node @src of @g to stage graph @w, its values under the same ids. */
static int copy_node(struct npu_graph *w, const struct gnode *src)
{
	struct gnode *n;
	const uint32_t *outs;
	uint32_t o;
	int ret = npu__graph_reserve_node(w);

	if (ret)
		return ret;
	n = &w->n[w->nn];
	*n = *src;
	n->kv = NULL;
	n->name = strdup(src->name);
	if (!n->name)
		return -ENOMEM;
	if (src->kv) {
		n->kv = malloc(sizeof(*n->kv) * (src->kin + src->kout));
		if (!n->kv) {
			free(n->name);
			return -ENOMEM;
		}
		memcpy(n->kv, src->kv, sizeof(*n->kv) * (src->kin + src->kout));
	}
	n->kern = npu__gkernel_get(src->kern);
	outs = npu__node_outputs(n);
	for (o = 0; o < npu__node_num_outputs(n); o++)
		if (outs[o] != NPU_VALUE_NONE)
			w->v[outs[o]].producer = (uint32_t)w->nn;
	w->nn++;
	return 0;
}

/* A stage graph with @g's values, none written, no flags yet. */
static int stage_graph(const struct npu_graph *g, struct npu_graph **out)
{
	struct npu_graph *w = calloc(1, sizeof(*w));
	size_t i;

	if (!w)
		return -ENOMEM;
	w->v = calloc(g->nv ? g->nv : 1, sizeof(*w->v));
	if (!w->v) {
		free(w);
		return -ENOMEM;
	}
	w->cap_v = g->nv ? g->nv : 1;
	for (i = 0; i < g->nv; i++) {
		const struct gchq *q = g->v[i].chq;

		w->v[i] = g->v[i];
		/* @g outlives the stage graphs: names and data are borrowed */
		w->v[i].name_borrowed = true;
		w->v[i].data_borrowed = true;
		w->v[i].flags = 0;
		w->v[i].producer = NPU_VALUE_NONE;
		w->v[i].chq = q ? npu__chq_new(q->axis, q->n, q->scale, q->zp) : NULL;
		w->nv++;
		if (q && !w->v[i].chq) {
			npu_graph_free(w);
			return -ENOMEM;
		}
	}
	*out = w;
	return 0;
}

int npu__graph_clone(const struct npu_graph *g, struct npu_graph **out)
{
	struct npu_graph *w;
	size_t i;
	int ret = stage_graph(g, &w);

	if (ret)
		return ret;
	/* the group's copy outlives @g: own every name and static value */
	for (i = 0; i < g->nv && !ret; i++) {
		struct gvalue *v = &w->v[i];

		v->flags = g->v[i].flags;
		v->name = strdup(g->v[i].name);
		v->name_borrowed = false;
		v->data_borrowed = false;
		if (!v->name) {
			v->data = NULL;
			ret = -ENOMEM;
		} else if (g->v[i].data) {
			v->data = malloc(v->bytes ? v->bytes : 1);
			if (v->data)
				memcpy(v->data, g->v[i].data, v->bytes);
			else
				ret = -ENOMEM;
		}
	}
	/* values past a failure still borrow: npu_graph_free() must not free them */
	for (; i < g->nv; i++)
		w->v[i].name_borrowed = w->v[i].data_borrowed = true;
	for (i = 0; i < g->nn && !ret; i++)
		ret = copy_node(w, &g->n[i]);
	if (ret) {
		npu_graph_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

static int io_push(struct gpipe_stage *st, size_t *cap, const struct gpipe_io *io)
{
	if (st->num_io == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct gpipe_io *n = realloc(st->io, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->io = n;
		*cap = c;
	}
	st->io[st->num_io++] = *io;
	return 0;
}

/* Handoff values sit 64-byte aligned in their producer's buffer. */
#define HANDOFF_ALIGN	64u

/*
 * A 4-D value handed on crosses as its NHWC twin, [N,H,W,C]: the stage
 * writing it adds a TRANSPOSE into the twin, the stage reading it one out
 * of it.  Compile then stores the value NHWC on both sides, as it does in
 * the whole graph, and those TRANSPOSEs are plain copies; handed on in
 * the graph's layout, the convolutions after it would read it through
 * strided views, another kernel with other rounding.  *@twin receives
 * its id; @out: the twin is written from @v, else @v from the twin.
 */
static int nhwc_twin(struct npu_graph *w, uint32_t v, bool out, uint32_t *twin)
{
	static const uint32_t to_nhwc[4] = { 0, 2, 3, 1 }, to_nchw[4] = { 0, 3, 1, 2 };
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	const struct gvalue *src = &w->v[v];
	struct gnode *n;
	uint32_t i;
	int ret;

	d.name = src->name;
	d.dtype = src->dtype;
	d.rank = 4;
	for (i = 0; i < 4; i++)
		d.dims[i] = src->dims[to_nhwc[i]];
	d.flags = out ? NPU_VALUE_OUTPUT : NPU_VALUE_INPUT;
	d.scale = src->scale;
	d.zero_point = src->zero_point;
	ret = npu__graph_push_value(w, &d, NULL, twin);
	if (!ret)
		ret = npu__graph_reserve_node(w);
	if (ret)
		return ret;
	n = &w->n[w->nn];
	memset(n, 0, sizeof(*n));
	n->name = strdup(out ? "pipeline handoff out" : "pipeline handoff in");
	if (!n->name)
		return -ENOMEM;
	n->kind = NPU_NODE_TRANSPOSE;
	memcpy(n->perm, out ? to_nhwc : to_nchw, sizeof(to_nhwc));
	n->num_inputs = 1;
	for (i = 0; i < GNODE_MAX_INPUTS; i++)
		n->in[i] = NPU_VALUE_NONE;
	n->in[0] = out ? v : *twin;
	n->out = out ? *twin : v;
	w->v[n->out].producer = (uint32_t)w->nn;
	w->nn++;
	return 0;
}

/*
 * Fill stage @s's graph and bindings.  @cost[node]: its cycles;
 * @stage_of[v]: the stage writing
 * value v (UINT32_MAX: none); @read_after[v]: the last stage reading it;
 * @offset[v]: its place in its producer's handoff buffer.
 */
static int build_stage(const struct npu_graph *g, struct gpipe *pl, size_t s,
		       const uint32_t *order, const uint32_t *start, const uint64_t *cost,
		       const uint32_t *stage_of, const uint32_t *read_after,
		       const uint64_t *offset)
{
	struct gpipe_stage *st = &pl->st[s];
	struct npu_graph *w;
	size_t cap = 0, i;
	uint32_t k;
	int ret = stage_graph(g, &w);

	if (ret)
		return ret;
	st->graph = w;
	st->first_node = order[start[s]];
	st->num_nodes = start[s + 1] - start[s];
	for (i = start[s]; i < start[s + 1] && !ret; i++) {
		const struct gnode *n = &g->n[order[i]];
		const uint32_t *in = npu__node_inputs(n);

		st->cost += cost[order[i]];
		st->macs += node_macs(g, n);
		for (k = 0; k < npu__node_num_inputs(n); k++) {
			struct gvalue *v;

			if (!value_ok(g, in[k]))
				continue;
			v = &w->v[in[k]];
			if (v->data || stage_of[in[k]] == s || (v->flags & NPU_VALUE_INPUT) ||
			    v->producer != NPU_VALUE_NONE)
				continue;
			if (stage_of[in[k]] != GPIPE_CALLER && v->rank == 4) {
				uint64_t bytes = v->bytes;
				uint32_t twin;

				ret = nhwc_twin(w, in[k], false, &twin);
				if (!ret)
					ret = io_push(st, &cap, &(struct gpipe_io){
						.id = twin, .input = true, .bytes = bytes,
						.stage = stage_of[in[k]], .offset = offset[in[k]] });
				st->handoffs_in++;
				continue;
			}
			v->flags |= NPU_VALUE_INPUT;
			ret = io_push(st, &cap, &(struct gpipe_io){
				.id = in[k], .input = true, .bytes = v->bytes,
				.stage = stage_of[in[k]], .offset = offset[in[k]] });
			if (!ret && stage_of[in[k]] != GPIPE_CALLER)
				st->handoffs_in++;
		}
		if (!ret)
			ret = copy_node(w, n);
	}
	for (i = 0; i < g->nv && !ret; i++) {
		const struct gvalue *v = &g->v[i];
		bool handed = read_after[i] != GPIPE_CALLER && read_after[i] > s;

		if (stage_of[i] != s || (!handed && !(v->flags & NPU_VALUE_OUTPUT)))
			continue;
		if (handed && v->rank == 4) {
			uint32_t twin;

			ret = nhwc_twin(w, (uint32_t)i, true, &twin);
			if (!ret)
				ret = io_push(st, &cap, &(struct gpipe_io){
					.id = twin, .bytes = v->bytes, .stage = (uint32_t)s,
					.offset = offset[i] });
			st->handoffs_out++;
			if (ret || !(v->flags & NPU_VALUE_OUTPUT))
				continue;
			/* a graph output too: the caller's binding as well */
			handed = false;
		}
		w->v[i].flags |= NPU_VALUE_OUTPUT;
		ret = io_push(st, &cap, &(struct gpipe_io){
			.id = (uint32_t)i, .bytes = v->bytes,
			.stage = handed ? (uint32_t)s : GPIPE_CALLER, .offset = offset[i],
			.to_caller = handed && (v->flags & NPU_VALUE_OUTPUT) });
		if (!ret && handed)
			st->handoffs_out++;
	}
	return ret;
}

int npu__pipeline_split(struct npu_graph *g, size_t stages, const uint32_t *cuts,
			uint32_t compile_flags, struct gpipe *pl)
{
	uint32_t *order = NULL, *pos = NULL, *start = NULL, *stage_of = NULL, *read_after = NULL;
	uint64_t *offset = NULL, *end = NULL, *cost = NULL;
	uint8_t *unsafe = NULL;
	size_t i, s;
	uint32_t k;
	int ret;

	memset(pl, 0, sizeof(*pl));
	if (stages < 2 || stages > g->nn)
		return npu__graph_fail(g, "a pipeline of %zu stages needs a graph of at least"
				       " as many nodes (it has %zu)", stages, g->nn), -EINVAL;
	order = malloc(g->nn * sizeof(*order));
	pos = malloc(g->nn * sizeof(*pos));
	start = malloc((stages + 1) * sizeof(*start));
	stage_of = malloc(g->nv * sizeof(*stage_of));
	read_after = malloc(g->nv * sizeof(*read_after));
	offset = calloc(g->nv, sizeof(*offset));
	end = calloc(stages, sizeof(*end));
	cost = malloc(g->nn * sizeof(*cost));
	unsafe = malloc(g->nn + 1);
	pl->st = calloc(stages, sizeof(*pl->st));
	ret = order && pos && start && stage_of && read_after && offset && end && cost &&
	      unsafe && pl->st ? 0 : -ENOMEM;
	if (!ret)
		ret = order_nodes(g, order);
	if (ret)
		goto out;
	pl->num_stages = stages;
	for (i = 0; i < g->nn; i++)
		pos[order[i]] = (uint32_t)i;
	/* forced cuts too: the stages report their cost */
	ret = whole_graph(g, pos, compile_flags, cost, unsafe);
	if (!ret)
		ret = place_cuts(g, stages, cuts, cost, unsafe, pos, order, start);
	if (ret)
		goto out;
	for (i = 0; i < g->nv; i++)
		stage_of[i] = read_after[i] = GPIPE_CALLER;
	for (s = 0; s < stages; s++)
		for (i = start[s]; i < start[s + 1]; i++) {
			const struct gnode *n = &g->n[order[i]];
			const uint32_t *io = npu__node_outputs(n);

			for (k = 0; k < npu__node_num_outputs(n); k++)
				if (value_ok(g, io[k]))
					stage_of[io[k]] = (uint32_t)s;
			io = npu__node_inputs(n);
			for (k = 0; k < npu__node_num_inputs(n); k++)
				if (value_ok(g, io[k]))
					read_after[io[k]] = (uint32_t)s;
		}
	/* Each stage's handoffs, packed in one buffer per stage. */
	for (i = 0; i < g->nv; i++) {
		s = stage_of[i];
		if (s == GPIPE_CALLER || read_after[i] == GPIPE_CALLER || read_after[i] <= s)
			continue;
		offset[i] = end[s];
		end[s] += (g->v[i].bytes + HANDOFF_ALIGN - 1) / HANDOFF_ALIGN * HANDOFF_ALIGN;
	}
	for (s = 0; s < stages && !ret; s++) {
		pl->st[s].handoff_bytes = end[s];
		ret = build_stage(g, pl, s, order, start, cost, stage_of, read_after, offset);
	}
out:
	if (ret)
		npu__pipeline_free(pl);
	free(order);
	free(pos);
	free(start);
	free(stage_of);
	free(read_after);
	free(offset);
	free(end);
	free(cost);
	free(unsafe);
	return ret;
}
