// SPDX-License-Identifier: MIT
/*
 * Graph compilation: order, fold, rewrite, fuse, plan the arena, upload
 * statics, create the ops and partition them into segments.
 *
 * Compile works on a copy of the graph (the user's graph is left as it
 * was, so it can be compiled again, e.g. for another context).  The copy
 * borrows the user's static data; everything compile makes is its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "graph_compile.h"


/* ---- Working copy ------------------------------------------------------- */

static void work_free(struct npu_graph *w)
{
	npu_graph_free(w);
}

static int work_clone(const struct npu_graph *g, struct npu_graph **out)
{
	struct npu_graph *w = calloc(1, sizeof(*w));
	size_t i;

	if (!w)
		return -ENOMEM;
	w->v = calloc(g->nv ? g->nv : 1, sizeof(*w->v));
	w->n = calloc(g->nn ? g->nn : 1, sizeof(*w->n));
	if (!w->v || !w->n)
		goto nomem;
	w->cap_v = g->nv ? g->nv : 1;
	w->cap_n = g->nn ? g->nn : 1;
	for (i = 0; i < g->nv; i++) {
		const struct gchq *q = g->v[i].chq;

		w->v[i] = g->v[i];
		w->v[i].name_borrowed = true;
		w->v[i].data_borrowed = true;
		/* the runtime may outlive @g: its own copy */
		w->v[i].chq = q ? npu__chq_new(q->axis, q->n, q->scale, q->zp) : NULL;
		w->nv++;
		if (q && !w->v[i].chq)
			goto nomem;
	}
	for (i = 0; i < g->nn; i++) {
		const struct gnode *n = &g->n[i];

		w->n[i] = *n;
		w->n[i].kv = NULL;
		w->n[i].kern = npu__gkernel_get(n->kern);
		w->nn++;
		w->n[i].name = strdup(n->name);
		if (!w->n[i].name)
			goto nomem;
		if (n->kv) {
			w->n[i].kv = malloc(4ull * (n->kin + n->kout));
			if (!w->n[i].kv)
				goto nomem;
			memcpy(w->n[i].kv, n->kv, 4ull * (n->kin + n->kout));
		}
	}
	*out = w;
	return 0;
nomem:
	work_free(w);
	return -ENOMEM;
}
/* ---- Empty values -------------------------------------------------------- */

/*
 * A node whose every output is empty (a dimension of 0, as ONNX allows)
 * has nothing to compute: it issues no op and no kernel call, and runs
 * as an elided node.
 */
static void drop_empty(struct cstate *c)
{
	struct npu_graph *w = c->w;
	size_t i;
	uint32_t k;

	for (i = 0; i < w->nn; i++) {
		const struct gnode *n = &w->n[i];
		const uint32_t *outs = npu__node_outputs(n);
		bool empty = true;

		for (k = 0; k < npu__node_num_outputs(n) && empty; k++)
			empty = outs[k] == NPU_VALUE_NONE || !w->v[outs[k]].elems;
		if (empty && c->state[i] == N_ALIVE)
			c->state[i] = N_DEAD;
	}
}

/* ---- Order -------------------------------------------------------------- */

static int topo_sort(struct cstate *c)
{
	struct npu_graph *w = c->w;
	uint32_t *deps = calloc(w->nn ? w->nn : 1, 4);
	uint32_t *start = calloc(w->nv + 1, 4);
	uint32_t *users = NULL;
	size_t i, head = 0, total = 0;
	uint32_t k;
	int ret = 0;

	if (!deps || !start)
		goto nomem;
	/* Users of each value, as a compressed adjacency list. */
	for (i = 0; i < w->nn; i++) {
		const uint32_t *in = npu__node_inputs(&w->n[i]);

		for (k = 0; k < npu__node_num_inputs(&w->n[i]); k++)
			if (in[k] != NPU_VALUE_NONE) {
				start[in[k] + 1]++;
				total++;
			}
	}
	for (i = 0; i < w->nv; i++)
		start[i + 1] += start[i];
	users = malloc((total ? total : 1) * 4);
	if (!users)
		goto nomem;
	{
		uint32_t *fill = calloc(w->nv + 1, 4);

		if (!fill)
			goto nomem;
		for (i = 0; i < w->nn; i++) {
			const uint32_t *in = npu__node_inputs(&w->n[i]);

			for (k = 0; k < npu__node_num_inputs(&w->n[i]); k++) {
				uint32_t v = in[k];

				if (v == NPU_VALUE_NONE)
					continue;
				users[start[v] + fill[v]++] = (uint32_t)i;
				if (w->v[v].producer != NPU_VALUE_NONE)
					deps[i]++;
			}
		}
		free(fill);
	}
	for (i = 0; i < w->nn; i++) {
		const struct gnode *n = &w->n[i];
		const uint32_t *in = npu__node_inputs(n);

		for (k = 0; k < npu__node_num_inputs(n); k++) {
			const struct gvalue *v;

			if (in[k] == NPU_VALUE_NONE)
				continue;
			v = &w->v[in[k]];
			if (v->producer == NPU_VALUE_NONE && !v->data &&
			    !(v->flags & NPU_VALUE_INPUT)) {
				ret = -ENOENT;
				npu__graph_fail(w, "node %s (%s): reads value %s, which no node writes",
						n->name, npu__node_op_name(n), v->name);
				goto out;
			}
		}
		if (!deps[i])
			c->order[c->norder++] = (uint32_t)i;
	}
	while (head < c->norder) {
		const struct gnode *n = &w->n[c->order[head++]];
		const uint32_t *outs = npu__node_outputs(n);
		uint32_t o;

		for (o = 0; o < npu__node_num_outputs(n); o++) {
			uint32_t v = outs[o];

			if (v == NPU_VALUE_NONE)
				continue;
			for (k = start[v]; k < start[v + 1]; k++)
				if (--deps[users[k]] == 0)
					c->order[c->norder++] = users[k];
		}
	}
	if (c->norder != w->nn) {
		for (i = 0; i < w->nn && !deps[i]; i++)
			;
		ret = -ELOOP;
		npu__graph_fail(w, "node %s (%s): part of a cycle", w->n[i].name,
				npu__node_op_name(&w->n[i]));
	}
	for (i = 0; i < w->nv && !ret; i++) {
		if ((w->v[i].flags & NPU_VALUE_OUTPUT) && !(w->v[i].flags & NPU_VALUE_INPUT) &&
		    w->v[i].producer == NPU_VALUE_NONE) {
			ret = -ENOENT;
			npu__graph_fail(w, "output %s: no node writes it", w->v[i].name);
		}
	}
	goto out;
nomem:
	ret = -ENOMEM;
out:
	free(deps);
	free(start);
	free(users);
	return ret;
}

/* ---- Shared statics --------------------------------------------------------- */

/*
 * One read-only copy of a runtime's statics, shared by every runtime of
 * the same bytes on the same context (or on the host), freed with the
 * last: a model specialised for several input shapes (npu_onnx_specialize())
 * compiles to runtimes whose weights are laid out alike.
 */
struct gstatics {
	struct gstatics *next;
	struct npu_context *ctx;	/* NULL: host memory */
	uint64_t bytes, hash;
	struct npu_buffer *buf;
	void *host;
	unsigned int refs;
};

static pthread_mutex_t statics_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gstatics *statics_list;
static uint64_t statics_count;

uint64_t npu__statics_alive(void)
{
	uint64_t n;

	pthread_mutex_lock(&statics_lock);
	n = statics_count;
	pthread_mutex_unlock(&statics_lock);
	return n;
}

static uint64_t fnv1a(const uint8_t *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ull, i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/*
 * Host memory of @bytes (rounded as mem_alloc() rounds them), zeroed.
 * Large blocks come from mmap(): the kernel zeroes a page when it is
 * first touched, so compiling a graph whose inputs or activations are
 * large costs no memory until the values are written.  A model file
 * declaring a 1 GiB input used to make the compiler touch 1 GiB.
 */
static void *host_zalloc(uint64_t bytes)
{
	uint64_t sz = npu__align_up(bytes ? bytes : 1, ARENA_ALIGN);
	void *p;

	if (sz > SIZE_MAX)
		return NULL;
	if (sz >= HOST_MMAP_MIN) {
		p = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	p = aligned_alloc(ARENA_ALIGN, (size_t)sz);
	if (p)
		memset(p, 0, (size_t)sz);
	return p;
}

static void host_free(void *p, uint64_t bytes)
{
	uint64_t sz = npu__align_up(bytes ? bytes : 1, ARENA_ALIGN);

	if (!p)
		return;
	if (sz >= HOST_MMAP_MIN)
		munmap(p, (size_t)sz);
	else
		free(p);
}

static void statics_put(struct npu_runtime *rt)
{
	struct gstatics *s = rt->statics, **pp;

	if (!s)
		return;
	pthread_mutex_lock(&statics_lock);
	if (--s->refs) {
		s = NULL;
	} else {
		for (pp = &statics_list; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		statics_count--;
	}
	pthread_mutex_unlock(&statics_lock);
	if (s) {
		npu_buffer_free(s->buf);
		host_free(s->host, s->bytes);
		free(s);
	}
	rt->statics = NULL;
	rt->static_buf = NULL;
	rt->static_host = NULL;
}

static int mem_alloc(struct npu_runtime *rt, uint64_t bytes, bool ro,
		     struct npu_buffer **buf, void **host);

/* Where @s's bytes are, to compare them with another runtime's. */
static const uint8_t *statics_bytes(const struct gstatics *s)
{
	void *m = NULL;

	if (!s->buf)
		return s->host;
	return npu_buffer_map(s->buf, &m) ? NULL : m;
}

/*
 * @rt's statics, @img (@bytes): an alive copy of the same bytes on the
 * same context, else a new one that later runtimes may share.
 */
static int statics_get(struct npu_runtime *rt, const uint8_t *img, uint64_t bytes)
{
	struct npu_context *ctx = rt->device ? rt->ctx : NULL;
	uint64_t hash = fnv1a(img, bytes);
	struct gstatics *s;
	uint8_t *dst;
	int ret;

	pthread_mutex_lock(&statics_lock);
	for (s = statics_list; s; s = s->next) {
		const uint8_t *have;

		if (s->ctx != ctx || s->bytes != bytes || s->hash != hash)
			continue;
		have = statics_bytes(s);
		if (have && !memcmp(have, img, bytes))
			break;
	}
	if (s) {
		s->refs++;
		pthread_mutex_unlock(&statics_lock);
		rt->statics = s;
		rt->static_buf = s->buf;
		rt->static_host = s->host;
		return 0;
	}
	pthread_mutex_unlock(&statics_lock);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = mem_alloc(rt, bytes, true, &s->buf, &s->host);
	if (ret) {
		free(s);
		return ret;
	}
	dst = s->buf ? (uint8_t *)statics_bytes(s) : s->host;
	if (!dst) {
		npu_buffer_free(s->buf);
		free(s);
		return -ENOMEM;
	}
	memcpy(dst, img, bytes);
	s->ctx = ctx;
	s->bytes = bytes;
	s->hash = hash;
	s->refs = 1;
	rt->statics = s;
	rt->static_buf = s->buf;
	rt->static_host = s->host;
	/* another compile of the same bytes may have added one meanwhile: both live */
	pthread_mutex_lock(&statics_lock);
	s->next = statics_list;
	statics_list = s;
	statics_count++;
	pthread_mutex_unlock(&statics_lock);
	return 0;
}

/* ---- Runtime ---------------------------------------------------------------- */

NPU_EXPORT void npu_runtime_free(struct npu_runtime *rt)
{
	size_t i;

	if (!rt)
		return;
	if (rt->thread_live)
		npu_runtime_wait(rt, NPU_TIMEOUT_INFINITE);
	for (i = 0; i < rt->num_segs; i++) {
		npu_fence_free(rt->segs[i].fence);
		npu_cmdbuf_destroy(rt->segs[i].cb);
		free(rt->segs[i].bufs);
	}
	for (i = 0; i < rt->num_steps; i++) {
		npu_fence_free(rt->steps[i].prof_fence);
		npu_cmdbuf_destroy(rt->steps[i].prof_cb);
		npu_op_free(rt->steps[i].op);
		npu__rkernel_free(rt->steps[i].kern);
	}
	for (i = 0; i < rt->num_nodes && rt->nodes; i++)
		free(rt->nodes[i].name);
	for (i = 0; i < rt->num_io; i++)
		free((void *)rt->io[i].konst);
	npu_buffer_free(rt->arena_buf);
	statics_put(rt);
	if (rt->q)
		npu__queue_put(rt->q);
	host_free(rt->arena_host, rt->arena_bytes);
	free(rt->segs);
	free(rt->steps);
	free(rt->nodes);
	free(rt->io);
	free(rt->value_bytes);
	pthread_cond_destroy(&rt->cond);
	pthread_mutex_destroy(&rt->lock);
	if (rt->ctx)
		npu_context_destroy(rt->ctx);
	free(rt);
}

static int runtime_alloc(struct npu_runtime **out)
{
	struct npu_runtime *rt = calloc(1, sizeof(*rt));
	pthread_condattr_t ca;

	if (!rt)
		return -ENOMEM;
	pthread_mutex_init(&rt->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rt->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = rt;
	return 0;
}

static int mem_alloc(struct npu_runtime *rt, uint64_t bytes, bool ro,
		     struct npu_buffer **buf, void **host)
{
	if (rt->device)
		return npu_buffer_alloc(rt->ctx, npu__align_up(bytes ? bytes : 1, ARENA_ALIGN),
					ro ? NPU_BUFFER_DEVICE_READONLY : 0, buf);
	*host = host_zalloc(bytes);
	return *host ? 0 : -ENOMEM;
}

/*
 * Say in @w why @what's @bytes could not be had, keeping @ret: a model
 * whose values need more device memory than one buffer may hold (or than
 * the device has left) must be refused in words, not by an errno alone.
 */
static int mem_fail(struct npu_graph *w, const struct npu_runtime *rt, int ret,
		    const char *what, uint64_t bytes)
{
	uint64_t max = rt->device ? rt->ctx->info.max_bo_size : 0;

	if (ret == -E2BIG && max)
		npu__graph_fail(w, "%s needs %llu bytes of device memory, over the device's "
				"largest buffer of %llu bytes", what, (unsigned long long)bytes,
				(unsigned long long)max);
	else
		npu__graph_fail(w, "%s needs %llu bytes of %s memory: %s", what,
				(unsigned long long)bytes, rt->device ? "device" : "host",
				npu_strerror(ret));
	return ret;
}

int npu__runtime_arena(struct npu_runtime *rt, uint8_t **p)
{
	void *m;
	int ret;

	if (!rt->arena_buf) {
		*p = rt->arena_host;
		return 0;
	}
	ret = npu_buffer_map(rt->arena_buf, &m);
	if (!ret)
		*p = m;
	return ret;
}

int npu__runtime_statics(struct npu_runtime *rt, uint8_t **p)
{
	void *m;
	int ret;

	if (!rt->static_buf) {
		*p = rt->static_host;
		return 0;
	}
	ret = npu_buffer_map(rt->static_buf, &m);
	if (!ret)
		*p = m;
	return ret;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct npu_buffer *const *)a;
	uintptr_t y = (uintptr_t)*(struct npu_buffer *const *)b;

	return x < y ? -1 : x > y;
}

/* Group steps into segments and encode the device ones. */
static int partition(struct npu_runtime *rt)
{
	size_t cap = rt->ctx && rt->ctx->info.max_cmd_size ?
		     rt->ctx->info.max_cmd_size : VNPU_CMD_MAX_BUFFER;
	size_t i, seg_bytes = 0;
	struct npu_device_limits lim;
	struct rseg *s = NULL;
	uint64_t seg_work = 0;
	int ret;

	/*
	 * A job does at most a quarter of the work one maximal command may
	 * do, so a large model's jobs stay well within the driver's job
	 * timeout (which one maximal command must meet) and a run is many
	 * shorter jobs, not one long one.  A larger op is a job of its own.
	 */
	npu__limits_effective(rt->ctx ? &rt->ctx->limits : NULL, &lim);
	lim.cmd_macs /= 4;
	rt->segs = calloc(rt->num_steps ? rt->num_steps : 1, sizeof(*rt->segs));
	if (!rt->segs)
		return -ENOMEM;
	for (i = 0; i < rt->num_steps; i++) {
		struct rstep *st = &rt->steps[i];
		/* what a device job holds: CPU steps (kernels have no op) count nothing */
		size_t bytes = !st->device ? 0 :
			       npu_op_num_commands(st->op) * sizeof(struct vnpu_cmd_compute) +
			       sizeof(struct vnpu_cmd_barrier);
		uint64_t work = st->device ? npu__op_work(st->op) : 0;

		if (!s || s->device != st->device ||
		    (st->device && (seg_bytes + bytes > cap ||
				    (seg_work && work > lim.cmd_macs - seg_work)))) {
			s = &rt->segs[rt->num_segs++];
			s->device = st->device;
			s->first = i;
			seg_bytes = 0;
			seg_work = 0;
			if (st->device)
				rt->num_dev_segs++;
		}
		s->count++;
		seg_bytes += bytes;
		seg_work = work > lim.cmd_macs - seg_work ? lim.cmd_macs : seg_work + work;
		rt->nodes[st->node].segment = (uint32_t)(s - rt->segs);
	}
	for (i = 0; i < rt->num_segs; i++) {
		size_t j, nb = 0, bytes = 0;

		s = &rt->segs[i];
		if (!s->device)
			continue;
		for (j = 0; j < s->count; j++) {
			const struct npu_op *op = rt->steps[s->first + j].op;

			bytes += npu_op_num_commands(op) * sizeof(struct vnpu_cmd_compute) +
				 sizeof(struct vnpu_cmd_barrier);
			nb += npu_op_buffers(op, NULL, 0);
		}
		ret = npu_cmdbuf_create(rt->ctx, bytes, &s->cb);
		if (ret)
			return ret;
		s->bufs = calloc(nb ? nb : 1, sizeof(*s->bufs));
		if (!s->bufs)
			return -ENOMEM;
		for (j = 0; j < s->count; j++) {
			const struct npu_op *op = rt->steps[s->first + j].op;
			struct npu_buffer *b[VNPU_OP_SLOTS + 1];
			size_t k, n = npu_op_buffers(op, b, VNPU_OP_SLOTS + 1);

			if (j) {
				ret = npu_cmdbuf_barrier(s->cb);
				if (ret)
					return ret;
			}
			ret = npu_op_encode(op, s->cb);
			if (ret)
				return ret;
			for (k = 0; k < n && k < VNPU_OP_SLOTS + 1; k++)
				s->bufs[s->num_bufs++] = b[k];
		}
		/* each buffer once, by sorting: a segment may hold thousands of ops */
		qsort(s->bufs, s->num_bufs, sizeof(*s->bufs), by_address);
		for (j = 0, nb = 0; j < s->num_bufs; j++)
			if (!nb || s->bufs[nb - 1] != s->bufs[j])
				s->bufs[nb++] = s->bufs[j];
		s->num_bufs = nb;
	}
	return 0;
}

NPU_EXPORT int npu_graph_compile(struct npu_graph *g, struct npu_context *ctx,
				 uint32_t flags, struct npu_runtime **out)
{
	return npu__graph_compile_bound(g, ctx, flags, NULL, 0, out);
}

/*
 * @bsel[root]: the index in @bound of the value placed at that storage
 * root, or UINT32_MAX.  Every external value sharing a bound root must be
 * bound itself (else a run would copy it through an arena slot it does
 * not have), and no kernel node may touch one (its operands are arena
 * offsets): -ENOTSUP, so the caller falls back to copies.
 */
static int bound_roots(struct npu_graph *g, const struct cstate *c, const uint32_t *root,
		       const struct gbound *bound, size_t num_bound, uint32_t *bsel)
{
	const struct npu_graph *w = c->w;
	size_t i, j;

	for (i = 0; i < w->nv; i++)
		bsel[i] = UINT32_MAX;
	for (j = 0; j < num_bound; j++) {
		const struct gvalue *v;

		if (bound[j].id >= g->nv)
			return npu__graph_fail(g, "bound value %u is not in the graph", bound[j].id),
			       -EINVAL;
		v = &w->v[bound[j].id];
		if (v->data || !(v->flags & (NPU_VALUE_INPUT | NPU_VALUE_OUTPUT)) ||
		    bsel[root[bound[j].id]] != UINT32_MAX)
			return -ENOTSUP;
		bsel[root[bound[j].id]] = (uint32_t)j;
	}
	for (i = 0; i < g->nv; i++) {
		const struct gvalue *v = &w->v[i];

		if (v->data || !(v->flags & (NPU_VALUE_INPUT | NPU_VALUE_OUTPUT)) ||
		    bsel[root[i]] == UINT32_MAX || bound[bsel[root[i]]].id == i)
			continue;
		for (j = 0; j < num_bound && bound[j].id != i; j++)
			;
		if (j == num_bound)
			return -ENOTSUP;
	}
	for (i = 0; i < c->norder; i++) {
		const struct gnode *n = &w->n[c->order[i]];
		uint32_t k;

		if (c->state[c->order[i]] != N_ALIVE || n->kind != NPU_NODE_KERNEL)
			continue;
		for (k = 0; k < n->kin + n->kout; k++)
			if (n->kv[k] != NPU_VALUE_NONE && !w->v[n->kv[k]].data &&
			    bsel[root[n->kv[k]]] != UINT32_MAX)
				return -ENOTSUP;
	}
	return 0;
}

int npu__graph_compile_bound(struct npu_graph *g, struct npu_context *ctx, uint32_t flags,
			     const struct gbound *bound, size_t num_bound,
			     struct npu_runtime **out)
{
	struct cstate c = { 0 };
	struct npu_runtime *rt = NULL;
	struct lifetime *lt = NULL;
	uint32_t *root = NULL, *bsel = NULL;
	int64_t *vfirst = NULL, *vlast = NULL;
	uint64_t *soff = NULL, static_end = 0;
	size_t i, nlt = 0, nsteps = 0, nio = 0;
	uint8_t *smap = NULL, *amap = NULL;
	struct npu_graph *w;
	int ret;

	if (!g)
		return -EINVAL;
	g->err[0] = 0;
	if (!out ||
	    (flags & ~(NPU_COMPILE_CPU_ONLY | NPU_COMPILE_NCHW_ONLY | NPU_COMPILE_NO_LUT)))
		return npu__graph_fail(g, "bad compile arguments");
	ret = work_clone(g, &c.w);
	if (ret)
		return ret;
	w = c.w;
	c.cap_consumers = w->nv ? w->nv : 1;
	c.consumers = calloc(c.cap_consumers, 4);
	c.readers_xor = calloc(c.cap_consumers, 4);
	ret = c.consumers && c.readers_xor ? npu__cstate_fit(&c) : -ENOMEM;
	if (ret)
		goto out;
	for (i = 0; i < w->nn; i++) {
		c.state[i] = N_ALIVE;
		c.fused_into[i] = NPU_VALUE_NONE;
		c.origin[i] = (uint32_t)i;
	}
	ret = topo_sort(&c);
	drop_empty(&c);
	/*
	 * Before folding, so that a DEQUANTIZE of a constant (a QDQ model's
	 * padding zeros) is still one that an 8-bit CONCAT can read
	 */
	if (!ret)
		ret = npu__fuse_quant(&c);
	if (!ret)
		ret = npu__fold_constants(&c);
	if (!ret)
		ret = npu__fuse_bias(&c);	/* a BATCHNORM may follow a bias */
	if (!ret)
		ret = npu__rewrite_special(&c);
	if (!ret)
		ret = npu__rewrite_layernorm(&c);
	if (!ret)
		ret = npu__rewrite_hardswish(&c);
	if (!ret)
		ret = npu__fold_constants(&c);
	if (!ret)
		ret = npu__fuse_quant(&c);
	if (!ret)
		ret = npu__drop_dead(&c);
	if (!ret && !(flags & NPU_COMPILE_NO_LUT))
		ret = npu__fuse_lut(&c);
	if (!ret)
		ret = npu__fuse_epilogues(&c);
	if (!ret)
		ret = npu__pack_weights(&c);
	if (!ret && !(flags & NPU_COMPILE_NCHW_ONLY))
		ret = npu__plan_layout(&c);
	if (ret)
		goto out;

	ret = runtime_alloc(&rt);
	if (ret)
		goto out;
	rt->device = ctx && !(flags & NPU_COMPILE_CPU_ONLY);
	if (ctx) {
		npu__context_get(ctx);
		rt->ctx = ctx;
	}
	rt->num_nodes = g->nn;
	rt->nodes = calloc(g->nn ? g->nn : 1, sizeof(*rt->nodes));
	rt->num_values = g->nv;
	rt->value_bytes = calloc(g->nv ? g->nv : 1, 8);
	root = malloc((w->nv ? w->nv : 1) * 4);
	vfirst = malloc((w->nv ? w->nv : 1) * 8);
	vlast = malloc((w->nv ? w->nv : 1) * 8);
	soff = malloc((w->nv ? w->nv : 1) * 8);
	lt = calloc(w->nv ? w->nv : 1, sizeof(*lt));
	bsel = malloc((w->nv ? w->nv : 1) * 4);
	if (!rt->nodes || !rt->value_bytes || !root || !vfirst || !vlast || !soff || !lt ||
	    !bsel) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nv; i++)
		rt->value_bytes[i] = g->v[i].bytes;
	for (i = 0; i < g->nn; i++) {
		struct rnode *rn = &rt->nodes[i];

		rn->name = strdup(g->n[i].name);
		if (!rn->name) {
			ret = -ENOMEM;
			goto out;
		}
		rn->op = npu__node_op_name(&g->n[i]);
		/* a chain folded into a table runs as its last node: say so */
		if (c.state[i] == N_ALIVE && w->n[i].kind == NPU_NODE_OP &&
		    w->n[i].op.kind == NPU_OP_LUT)
			rn->op = npu__node_op_name(&w->n[i]);
		rn->fused_into = NPU_VALUE_NONE;
		switch (c.state[i]) {
		case N_FOLDED:
			rn->where = NPU_WHERE_FOLDED;
			break;
		case N_FUSED:
			rn->where = NPU_WHERE_FUSED;
			rn->fused_into = c.origin[c.fused_into[i]];
			break;
		case N_DEAD:
			rn->where = NPU_WHERE_ELIDED;
			break;
		default:
			rn->where = w->n[i].kind == NPU_NODE_RESHAPE ? NPU_WHERE_ELIDED :
				    NPU_WHERE_CPU;
			if (w->n[i].kind == NPU_NODE_KERNEL)
				rn->cpu_reason = "a CPU kernel";
			break;
		}
	}

	/* Storage roots and lifetimes, in step positions. */
	for (i = 0; i < w->nv; i++) {
		root[i] = (uint32_t)i;
		vfirst[i] = INT64_MAX;
		vlast[i] = -1;
		soff[i] = UINT64_MAX;
	}
	{
		int64_t pos = 0;

		for (i = 0; i < c.norder; i++) {
			uint32_t id = c.order[i], k;
			struct gnode *n = &w->n[id];
			const uint32_t *in = npu__node_inputs(n), *outs = npu__node_outputs(n);

			if (c.state[id] != N_ALIVE)
				continue;
			if (n->kind == NPU_NODE_RESHAPE) {
				const struct gvalue *vi = &w->v[n->in[0]];

				if (vi->elems != w->v[n->out].elems ||
				    vi->dtype != w->v[n->out].dtype) {
					ret = npu__graph_fail(g, "node %s (RESHAPE): element count or dtype differs",
							      n->name);
					goto out;
				}
				root[n->out] = root[n->in[0]];
			} else if (n->kind == NPU_NODE_KERNEL) {
				nsteps++;
			} else if (!npu__node_has_ops(n)) {
				ret = npu__graph_fail(g, "node %s (%s): cannot be compiled", n->name,
						      npu__node_op_name(n));
				goto out;
			} else {
				nsteps += n->kind == NPU_NODE_CONCAT ? n->num_inputs : 1;
			}
			for (k = 0; k < npu__node_num_inputs(n); k++) {
				uint32_t v = in[k];

				if (v == NPU_VALUE_NONE)
					continue;
				if (w->v[v].data) {
					if ((npu__node_has_ops(n) || n->kind == NPU_NODE_KERNEL) &&
					    soff[v] == UINT64_MAX) {
						static_end = npu__align_up(static_end, ARENA_ALIGN);
						soff[v] = static_end;
						static_end += w->v[v].bytes;
					}
					continue;
				}
				if (vlast[root[v]] < pos)
					vlast[root[v]] = pos;
			}
			/* every output a kernel writes needs room, read or not */
			for (k = 0; k < npu__node_num_outputs(n); k++) {
				uint32_t r;

				if (outs[k] == NPU_VALUE_NONE)
					continue;
				r = root[outs[k]];
				if (vfirst[r] > pos)
					vfirst[r] = pos;
				if (vlast[r] < pos)
					vlast[r] = pos;
			}
			pos++;
		}
		for (i = 0; i < w->nv; i++) {
			const struct gvalue *v = &w->v[i];

			if (v->data)
				continue;
			if (v->flags & NPU_VALUE_INPUT) {
				vfirst[root[i]] = -1;
				if (vlast[root[i]] < 0)
					vlast[root[i]] = -1;
			}
			if (v->flags & NPU_VALUE_OUTPUT) {
				vlast[root[i]] = pos;
				if (vfirst[root[i]] == INT64_MAX)
					vfirst[root[i]] = -1;
			}
		}
		ret = bound_roots(g, &c, root, bound, num_bound, bsel);
		if (ret)
			goto out;
		for (i = 0; i < w->nv; i++) {
			/* a bound value lives in the caller's memory, not the arena */
			if (root[i] != i || w->v[i].data || vlast[i] < 0 ||
			    vfirst[i] == INT64_MAX || bsel[i] != UINT32_MAX)
				continue;
			lt[nlt].root = (uint32_t)i;
			lt[nlt].first = vfirst[i];
			lt[nlt].last = vlast[i];
			lt[nlt].bytes = w->v[i].bytes;
			nlt++;
		}
	}
	ret = npu__plan_arena(lt, nlt, &rt->arena_bytes);
	if (ret)
		goto out;
	for (i = 0; i < nlt; i++)
		soff[lt[i].root] = lt[i].offset;
	/* an empty value nothing writes (its producer dropped) still has a place */
	for (i = 0; i < w->nv; i++)
		if (root[i] == i && !w->v[i].data && !w->v[i].bytes && soff[i] == UINT64_MAX)
			soff[i] = 0;
	rt->static_bytes = static_end;

	ret = mem_alloc(rt, rt->arena_bytes, false, &rt->arena_buf, &rt->arena_host);
	if (!ret)
		ret = npu__runtime_arena(rt, &amap);
	if (ret)
		mem_fail(w, rt, ret, "the arena of the graph's values", rt->arena_bytes);
	/* the statics laid out, then shared with a runtime of the same bytes */
	smap = ret ? NULL : calloc(1, static_end ? static_end : 1);
	if (!ret && !smap)
		ret = -ENOMEM;
	if (ret)
		goto out;
	(void)amap;
	for (i = 0; i < w->nv; i++)
		if (w->v[i].data && soff[i] != UINT64_MAX)
			memcpy(smap + soff[i], w->v[i].data, w->v[i].bytes);
	ret = statics_get(rt, smap, static_end);
	free(smap);
	smap = NULL;
	if (ret) {
		mem_fail(w, rt, ret, "the graph's constants", static_end);
		goto out;
	}

	/* Ops, in order. */
	rt->steps = calloc(nsteps ? nsteps : 1, sizeof(*rt->steps));
	if (!rt->steps) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c.norder; i++) {
		uint32_t id = c.order[i], k;
		struct gnode *n = &w->n[id];
		struct gbind bin[GNODE_MAX_INPUTS] = { 0 }, bout = { 0 };
		struct npu_op *ops[GNODE_MAX_OPS] = { 0 };
		size_t nops = 0, j;
		struct rnode *rn;

		if (c.state[id] != N_ALIVE)
			continue;
		if (n->kind == NPU_NODE_KERNEL) {
			struct rstep *st = &rt->steps[rt->num_steps];

			ret = npu__rkernel_create(w, n, root, soff, &st->kern);
			if (ret)
				goto out;
			st->node = c.origin[id];
			rt->num_steps++;
			continue;
		}
		if (!npu__node_has_ops(n))
			continue;
		for (k = 0; k <= n->num_inputs; k++) {
			uint32_t v = k < n->num_inputs ? n->in[k] : n->out;
			struct gbind *b = k < n->num_inputs ? &bin[k] : &bout;

			if (v == NPU_VALUE_NONE)
				continue;
			if (w->v[v].data) {
				b->buf = rt->static_buf;
				b->offset = soff[v];
				b->host = rt->static_host ? (uint8_t *)rt->static_host + soff[v] : NULL;
			} else if (bsel[root[v]] != UINT32_MAX) {
				const struct gbound *e = &bound[bsel[root[v]]];

				b->buf = e->buf;
				b->offset = e->offset;
				b->host = e->buf ? NULL : e->host;
			} else {
				b->buf = rt->arena_buf;
				b->offset = soff[root[v]];
				b->host = rt->arena_host ? (uint8_t *)rt->arena_host + soff[root[v]] : NULL;
			}
		}
		ret = npu__graph_make_ops(w, n, bin, &bout, ops, &nops);
		if (ret) {
			snprintf(g->err, sizeof(g->err), "%s", w->err);
			goto out;
		}
		rn = &rt->nodes[c.origin[id]];
		for (j = 0; j < nops; j++) {
			struct rstep *st = &rt->steps[rt->num_steps++];
			const char *why = NULL;

			st->op = ops[j];
			st->node = c.origin[id];
			st->device = rt->device && npu_op_supported(st->op, &why) == 1;
			/*
			 * A node rewritten into several ops (or a CONCAT, one
			 * per input) is on the device if all of them are.
			 */
			if ((c.origin[id] == id && j == 0) || !st->device) {
				rn->where = st->device ? NPU_WHERE_DEVICE : NPU_WHERE_CPU;
				rn->cpu_reason = st->device ? NULL :
						 !rt->device ? "compiled for the CPU" : why;
			}
		}
		rn->macs += npu__node_macs(w, n);
	}

	/* External inputs and outputs, by value id: setup searches them. */
	rt->io = calloc(g->nv ? g->nv : 1, sizeof(*rt->io));
	if (!rt->io) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nv; i++) {
		const struct gvalue *v = &w->v[i];
		struct rio *io;

		if (!(v->flags & (NPU_VALUE_INPUT | NPU_VALUE_OUTPUT)))
			continue;
		io = &rt->io[nio++];
		io->id = (uint32_t)i;
		io->input = v->flags & NPU_VALUE_INPUT;
		io->bytes = v->bytes;
		if (v->data) {
			/* folded to a constant: copied out by every run */
			void *k = malloc(v->bytes ? v->bytes : 1);

			if (!k) {
				ret = -ENOMEM;
				goto out;
			}
			memcpy(k, v->data, v->bytes);
			io->konst = k;
		} else if (bsel[root[i]] != UINT32_MAX) {
			/* in the caller's memory: nothing to copy in or out */
			io->offset = 0;
			io->bytes = 0;
		} else {
			io->offset = soff[root[i]];
			if (io->offset == UINT64_MAX) {	/* an input nothing reads */
				io->offset = 0;
				io->bytes = 0;
			}
		}
	}
	rt->num_io = nio;
	ret = partition(rt);
out:
	if (ret) {
		if (rt)
			rt->num_io = nio;
		npu_runtime_free(rt);
		if (!g->err[0] && w && w->err[0])
			snprintf(g->err, sizeof(g->err), "%s", w->err);
		/* Every refusal says something, if only the errno in words. */
		if (!g->err[0])
			snprintf(g->err, sizeof(g->err), "compile failed: %s", npu_strerror(ret));
	} else {
		*out = rt;
	}
	free(root);
	free(bsel);
	free(vfirst);
	free(vlast);
	free(soff);
	free(lt);
	free(c.state);
	free(c.fused_into);
	free(c.origin);
	free(c.order);
	free(c.consumers);
	free(c.readers_xor);
	free(c.counted);
	work_free(c.w);
	return ret;
}
