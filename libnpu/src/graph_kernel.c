// SPDX-License-Identifier: MIT
/*
 * Kernel nodes (npu/kernel.h): CPU kernels an application or a front end
 * defines, run by the graph runtime in its CPU segments.
 *
 * A kernel sees its operands as dense row-major host tensors of any
 * dtype: compile keeps their values in the graph's own layout and
 * places them in the arena or the statics like any other value, and
 * each run points the tensors' data there.  A kernel is bounded like
 * the CPU path's ops (struct npu_cpu_limits): its work and bytes are
 * checked before it runs, and it polls the deadline and cancel through
 * npu_kernel_poll() while it runs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "npu_ops_cpu.h"

/* ---- The shared kernel and state ---------------------------------------- */

/*
 * Take @state with @k's table.  The caller handed over @state, so it is
 * released even when the table is unusable, as far as it can be read.
 */
static int gkernel_new(const struct npu_kernel *k, void *state,
		       struct gkernel **out)
{
	struct gkernel *gk;
	int ret;

	gk = calloc(1, sizeof(*gk));
	if (!gk) {
		ret = -ENOMEM;
		goto release;
	}
	ret = npu__struct_in(&gk->k, sizeof(gk->k), k, k->size);
	if (ret) {
		free(gk);
		goto release;
	}
	gk->state = state;
	atomic_init(&gk->refs, 1);
	*out = gk;
	return 0;
release:
	if (k->size >= offsetof(struct npu_kernel, release) + sizeof(k->release) &&
	    k->release)
		k->release(state);
	return ret;
}

struct gkernel *npu__gkernel_get(struct gkernel *gk)
{
	if (gk)
		atomic_fetch_add(&gk->refs, 1);
	return gk;
}

void npu__gkernel_put(struct gkernel *gk)
{
	if (!gk || atomic_fetch_sub(&gk->refs, 1) != 1)
		return;
	if (gk->k.release)
		gk->k.release(gk->state);
	free(gk);
}

static const char *kernel_name(const struct gkernel *gk)
{
	return gk->k.name ? gk->k.name : "KERNEL";
}

/* ---- Tensors -------------------------------------------------------------- */

const char *npu__dtype_name(enum npu_dtype dtype)
{
	static const char *const names[] = {
		[NPU_DTYPE_FP32] = "fp32", [NPU_DTYPE_FP16] = "fp16",
		[NPU_DTYPE_BF16] = "bf16", [NPU_DTYPE_INT8] = "int8",
		[NPU_DTYPE_UINT8] = "uint8", [NPU_DTYPE_INT32] = "int32",
		[NPU_DTYPE_INT64] = "int64", [NPU_DTYPE_BOOL] = "bool",
		[NPU_DTYPE_FP64] = "fp64", [NPU_DTYPE_INT16] = "int16",
		[NPU_DTYPE_UINT16] = "uint16", [NPU_DTYPE_UINT32] = "uint32",
		[NPU_DTYPE_UINT64] = "uint64",
	};

	if ((unsigned int)dtype < sizeof(names) / sizeof(names[0]) &&
	    names[dtype])
		return names[dtype];
	return "unknown dtype";
}

void npu__kernel_tensor(const struct gvalue *v, void *data,
			struct npu_kernel_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dtype = v->dtype;
	t->rank = v->rank;
	memcpy(t->dims, v->dims, sizeof(t->dims));
	t->elems = v->elems;
	t->data = data;
	t->scale = v->scale;
	t->zero_point = v->zero_point;
}

/* "int64 [3, 4]" into @buf. */
static const char *describe(enum npu_dtype dtype, uint32_t rank,
			    const uint32_t *dims, char *buf, size_t size)
{
	size_t len;
	uint32_t i;

	len = (size_t)snprintf(buf, size, "%s [", npu__dtype_name(dtype));
	for (i = 0; i < rank && i < NPU_TENSOR_MAX_RANK && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%u",
					i ? ", " : "", dims[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
	return buf;
}

/* ---- Running a kernel ---------------------------------------------------- */

struct npu_kernel_call {
	const struct npu_cpu_limits *lim;
	uint64_t work_done;
	int stop;		/* -ETIME or -ECANCELED once the run must stop */
	char *err;
	size_t err_size;
	bool failed;		/* npu_kernel_fail() wrote @err */
};

NPU_EXPORT int npu_kernel_poll(struct npu_kernel_call *call, uint64_t work_done)
{
	if (!call)
		return -EINVAL;
	call->work_done += work_done;
	if (call->stop)
		return call->stop;
	if (call->lim->cancel && call->lim->cancel(call->lim->cancel_opaque))
		call->stop = -ECANCELED;
	else if (call->lim->deadline_ns != NPU_TIMEOUT_INFINITE &&
		 npu_time_ns() >= call->lim->deadline_ns)
		call->stop = -ETIME;
	return call->stop;
}

NPU_EXPORT int npu_kernel_fail(struct npu_kernel_call *call, int error,
			       const char *fmt, ...)
{
	va_list ap;

	/* a kernel that got its errno wrong still fails */
	if (error >= 0)
		error = -EINVAL;
	if (!call)
		return error;
	if (call->err && call->err_size && fmt) {
		va_start(ap, fmt);
		vsnprintf(call->err, call->err_size, fmt, ap);
		va_end(ap);
	}
	call->failed = true;
	return error;
}

__attribute__((format(printf, 3, 4)))
static int run_fail(const struct npu_cpu_run *run, int ret, const char *fmt, ...)
{
	va_list ap;

	if (run->err && run->err_size) {
		va_start(ap, fmt);
		vsnprintf(run->err, run->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Saturating: a count past UINT64_MAX is beyond any limit anyway. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Elements (@bytes false) or bytes of the operands present. */
static uint64_t operands_total(size_t n, const struct npu_kernel_tensor *const *t,
			       bool bytes)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i])
			sum = add_sat(sum, bytes ? mul_sat(t[i]->elems,
							   npu_dtype_size(t[i]->dtype)) :
					    t[i]->elems);
	return sum;
}

int npu__kernel_exec(const struct npu_kernel *k, const void *state,
		     size_t nin, const struct npu_kernel_tensor *const *in,
		     size_t nout, struct npu_kernel_tensor *const *out,
		     const struct npu_cpu_run *run)
{
	struct npu_kernel_call call = {
		.lim = &run->lim, .err = run->err, .err_size = run->err_size,
	};
	uint64_t work, bytes;
	int ret;

	if (run->err && run->err_size)
		run->err[0] = '\0';
	work = k->work ? k->work(state, nin, in, nout,
				 (const struct npu_kernel_tensor *const *)out) :
			 add_sat(operands_total(nin, in, false),
				 operands_total(nout, (const struct npu_kernel_tensor *const *)out,
						false));
	bytes = add_sat(operands_total(nin, in, true),
			operands_total(nout, (const struct npu_kernel_tensor *const *)out, true));
	if (work > run->lim.max_work)
		return run_fail(run, -E2BIG, "%llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
				(unsigned long long)work,
				(unsigned long long)run->lim.max_work);
	if (bytes > run->lim.max_bytes)
		return run_fail(run, -E2BIG, "operands of %llu bytes exceed the CPU path's limit of %llu (npu_cpu_limits.max_bytes)",
				(unsigned long long)bytes,
				(unsigned long long)run->lim.max_bytes);
	/* A run already past its deadline or cancelled starts nothing. */
	ret = npu_kernel_poll(&call, 0);
	if (!ret)
		ret = k->run(state, nin, in, nout, out, &call);
	if (!ret)
		return 0;
	if (ret > 0)
		return run_fail(run, -EPROTO, "the kernel returned %d, not 0 or a negative errno",
				ret);
	if (call.failed)
		return ret;
	if (call.stop && ret == call.stop)
		return run_fail(run, ret, ret == -ETIME ?
				"stopped at the deadline (npu_cpu_limits.deadline_ns) after %llu of %llu work units" :
				"cancelled after %llu of %llu work units",
				(unsigned long long)call.work_done,
				(unsigned long long)work);
	return run_fail(run, ret, "%s", npu_strerror(ret));
}

/* @t is a tensor a kernel may get: @what for messages. */
static int check_tensor(const struct npu_kernel_tensor *t, const char *what,
			size_t i, const struct npu_cpu_run *run)
{
	uint64_t elems = 1;
	uint32_t k;

	if (!npu_dtype_size(t->dtype) || t->rank > NPU_TENSOR_MAX_RANK)
		return run_fail(run, -EINVAL, "%s %zu: bad dtype or rank", what, i);
	/* a dimension may be 0: an empty input beside outputs that are not */
	for (k = 0; k < t->rank; k++)
		if (__builtin_mul_overflow(elems, t->dims[k], &elems))
			return run_fail(run, -EINVAL, "%s %zu: bad dims", what, i);
	if (elems != t->elems)
		return run_fail(run, -EINVAL, "%s %zu: elems is %llu, its dims make %llu",
				what, i, (unsigned long long)t->elems,
				(unsigned long long)elems);
	if (!t->data)
		return run_fail(run, -EINVAL, "%s %zu: no data", what, i);
	return 0;
}

NPU_EXPORT int npu_kernel_run(const struct npu_kernel *kernel, const void *state,
			      size_t num_inputs,
			      const struct npu_kernel_tensor *const *in,
			      size_t num_outputs,
			      struct npu_kernel_tensor *const *out,
			      const struct npu_cpu_limits *limits, char *err,
			      size_t err_size)
{
	struct npu_kernel k;
	struct npu_cpu_run run;
	size_t i;
	int ret;

	ret = npu__cpu_run_init(&run, limits, err, err_size);
	if (ret)
		return run_fail(&run, ret, "bad npu_cpu_limits");
	if (!kernel)
		return run_fail(&run, -EINVAL, "no kernel");
	ret = npu__struct_in(&k, sizeof(k), kernel, kernel->size);
	if (ret || !k.run)
		return run_fail(&run, ret ? ret : -EINVAL, "%s: not a usable kernel table",
				k.name && !ret ? k.name : "kernel");
	if (num_inputs > NPU_KERNEL_MAX_INPUTS || (num_inputs && !in) ||
	    !num_outputs || num_outputs > NPU_KERNEL_MAX_OUTPUTS || !out)
		return run_fail(&run, -EINVAL, "%u to %u inputs and 1 to %u outputs",
				0u, NPU_KERNEL_MAX_INPUTS, NPU_KERNEL_MAX_OUTPUTS);
	for (i = 0; i < num_inputs; i++)
		if (in[i] && (ret = check_tensor(in[i], "input", i, &run)))
			return ret;
	for (i = 0; i < num_outputs; i++)
		if (out[i] && (ret = check_tensor(out[i], "output", i, &run)))
			return ret;
	return npu__kernel_exec(&k, state, num_inputs, in, num_outputs, out, &run);
}

/* ---- Adding a node ------------------------------------------------------- */

/*
 * The operands of @d name values, outputs no other node writes nor the
 * graph provides, and at least one output is present.
 */
static int check_operands(struct npu_graph *g, const struct npu_kernel_node_desc *d,
			  const char *nm, const char *op)
{
	uint32_t i, j, present = 0;

	if (d->num_inputs > NPU_KERNEL_MAX_INPUTS || (d->num_inputs && !d->inputs))
		return npu__graph_fail(g, "node '%s' (%s): needs 0 to %d inputs", nm, op,
				       NPU_KERNEL_MAX_INPUTS);
	if (!d->num_outputs || d->num_outputs > NPU_KERNEL_MAX_OUTPUTS || !d->outputs)
		return npu__graph_fail(g, "node '%s' (%s): needs 1 to %d outputs", nm, op,
				       NPU_KERNEL_MAX_OUTPUTS);
	for (i = 0; i < d->num_inputs; i++)
		if (d->inputs[i] != NPU_VALUE_NONE && d->inputs[i] >= g->nv)
			return npu__graph_fail(g, "node '%s' (%s): input %u is no value", nm, op, i);
	for (i = 0; i < d->num_outputs; i++) {
		uint32_t o = d->outputs[i];
		const struct gvalue *v;

		if (o == NPU_VALUE_NONE)
			continue;
		if (o >= g->nv)
			return npu__graph_fail(g, "node '%s' (%s): output %u is no value", nm, op, i);
		v = &g->v[o];
		if (v->data || (v->flags & NPU_VALUE_INPUT))
			return npu__graph_fail(g, "node '%s' (%s): writes static or input value %s",
					       nm, op, v->name);
		if (v->producer != NPU_VALUE_NONE)
			return npu__graph_fail(g, "node '%s' (%s): value %s is already written by node %s",
					       nm, op, v->name, g->n[v->producer].name);
		for (j = 0; j < i; j++)
			if (d->outputs[j] == o)
				return npu__graph_fail(g, "node '%s' (%s): writes value %s twice",
						       nm, op, v->name);
		for (j = 0; j < d->num_inputs; j++)
			if (d->inputs[j] == o)
				return npu__graph_fail(g, "node '%s' (%s): reads its own output %s",
						       nm, op, v->name);
		present++;
	}
	if (!present)
		return npu__graph_fail(g, "node '%s' (%s): no output is present", nm, op);
	return 0;
}

/*
 * Run @gk's infer on the inputs and compare what it gives with the
 * output values.
 */
static int check_infer(struct npu_graph *g, const struct gkernel *gk,
		       const struct npu_kernel_node_desc *d, const char *nm)
{
	struct npu_kernel_tensor t[NPU_KERNEL_MAX_INPUTS + NPU_KERNEL_MAX_OUTPUTS];
	struct npu_kernel_tensor *pt[NPU_KERNEL_MAX_INPUTS + NPU_KERNEL_MAX_OUTPUTS];
	const char *op = kernel_name(gk);
	uint32_t nin = d->num_inputs, i;
	char msg[192], a[96], b[96];
	int ret;

	for (i = 0; i < nin + d->num_outputs; i++) {
		uint32_t v = i < nin ? d->inputs[i] : d->outputs[i - nin];

		memset(&t[i], 0, sizeof(t[i]));
		pt[i] = v == NPU_VALUE_NONE ? NULL : &t[i];
		if (v != NPU_VALUE_NONE && i < nin)
			npu__kernel_tensor(&g->v[v], g->v[v].data, &t[i]);
	}
	msg[0] = '\0';
	ret = gk->k.infer(gk->state, nin, (const struct npu_kernel_tensor *const *)pt,
			  d->num_outputs, pt + nin, msg, sizeof(msg));
	if (ret)
		return npu__graph_fail(g, "node '%s' (%s): %s", nm, op,
				       msg[0] ? msg : npu_strerror(ret));
	for (i = 0; i < d->num_outputs; i++) {
		const struct npu_kernel_tensor *o = &t[nin + i];
		const struct gvalue *v;

		if (d->outputs[i] == NPU_VALUE_NONE)
			continue;
		v = &g->v[d->outputs[i]];
		if (o->rank > NPU_TENSOR_MAX_RANK)
			return npu__graph_fail(g, "node '%s' (%s): output %u (%s): the kernel infers rank %u",
					       nm, op, i, v->name, o->rank);
		if (o->dtype == v->dtype && o->rank == v->rank &&
		    !memcmp(o->dims, v->dims, 4ull * o->rank))
			continue;
		return npu__graph_fail(g, "node '%s' (%s): output %u (%s): the kernel infers %s, the value is %s",
				       nm, op, i, v->name,
				       describe(o->dtype, o->rank, o->dims, a, sizeof(a)),
				       describe(v->dtype, v->rank, v->dims, b, sizeof(b)));
	}
	return 0;
}

static int push_kernel_node(struct npu_graph *g, const struct npu_kernel_node_desc *d,
			    struct gkernel *gk, uint32_t *id)
{
	uint32_t nops = d->num_inputs + d->num_outputs, i;
	struct gnode *n;
	int ret;

	ret = npu__graph_reserve_node(g);
	if (ret)
		return ret;
	n = &g->n[g->nn];
	memset(n, 0, sizeof(*n));
	n->name = strdup(d->name ? d->name : "");
	n->kv = malloc(4ull * nops);
	if (!n->name || !n->kv) {
		free(n->name);
		free(n->kv);
		return -ENOMEM;
	}
	if (d->num_inputs)
		memcpy(n->kv, d->inputs, 4ull * d->num_inputs);
	memcpy(n->kv + d->num_inputs, d->outputs, 4ull * d->num_outputs);
	n->kind = NPU_NODE_KERNEL;
	n->kern = gk;
	n->kin = d->num_inputs;
	n->kout = d->num_outputs;
	for (i = 0; i < GNODE_MAX_INPUTS; i++)
		n->in[i] = NPU_VALUE_NONE;
	n->out = NPU_VALUE_NONE;
	for (i = d->num_outputs; i-- > 0;) {
		if (d->outputs[i] == NPU_VALUE_NONE)
			continue;
		n->out = d->outputs[i];
		g->v[d->outputs[i]].producer = (uint32_t)g->nn;
	}
	if (id)
		*id = (uint32_t)g->nn;
	g->nn++;
	return 0;
}

NPU_EXPORT int npu_graph_add_kernel_node(struct npu_graph *g,
					 const struct npu_kernel_node_desc *d,
					 uint32_t *id)
{
	struct npu_kernel_node_desc kd;
	struct gkernel *gk = NULL;
	const char *nm;
	int ret;

	if (g)
		g->err[0] = 0;
	if (!d)
		return g ? npu__graph_fail(g, "no kernel node description") : -EINVAL;
	/* the state is ours from here on, whatever happens */
	memset(&kd, 0, sizeof(kd));
	memcpy(&kd, d, d->size < sizeof(kd) ? d->size : sizeof(kd));
	if (kd.kernel) {
		ret = gkernel_new(kd.kernel, kd.state, &gk);
		if (ret)
			return g ? (npu__graph_fail(g, "kernel node: %s",
						    ret == -ENOMEM ? "out of memory" :
						    "a kernel table without size or with fields this libnpu does not know"),
				    ret) : ret;
	}
	if (!g) {
		ret = -EINVAL;
		goto out;
	}
	ret = npu__struct_in(&kd, sizeof(kd), d, d->size);
	if (ret) {
		npu__graph_fail(g, ret == -E2BIG ?
				"kernel node: fields this libnpu does not know" :
				"kernel node: no size (NPU_KERNEL_NODE_DESC_INIT)");
		goto out;
	}
	nm = kd.name ? kd.name : "";
	if (!gk || !gk->k.infer || !gk->k.run) {
		ret = npu__graph_fail(g, "node '%s': a kernel needs infer and run", nm);
		goto out;
	}
	ret = check_operands(g, &kd, nm, kernel_name(gk));
	if (!ret)
		ret = check_infer(g, gk, &kd, nm);
	if (!ret)
		ret = push_kernel_node(g, &kd, gk, id);
	if (!ret)
		return 0;
out:
	npu__gkernel_put(gk);
	return ret;
}

/* ---- Compile and run ----------------------------------------------------- */

int npu__fold_kernel(struct npu_graph *w, const struct gnode *n)
{
	struct npu_kernel_tensor t[NPU_KERNEL_MAX_INPUTS + NPU_KERNEL_MAX_OUTPUTS];
	struct npu_kernel_tensor *pt[NPU_KERNEL_MAX_INPUTS + NPU_KERNEL_MAX_OUTPUTS];
	uint32_t nops = n->kin + n->kout, i;
	struct npu_cpu_run run;
	char msg[256];
	int ret = 0;

	for (i = 0; i < nops; i++) {
		uint32_t v = n->kv[i];
		void *data;

		pt[i] = NULL;
		if (v == NPU_VALUE_NONE)
			continue;
		data = i < n->kin ? w->v[v].data : calloc(1, w->v[v].bytes ? w->v[v].bytes : 1);
		if (!data)
			ret = -ENOMEM;
		npu__kernel_tensor(&w->v[v], data, &t[i]);
		pt[i] = &t[i];
	}
	/* Folding runs on the CPU within its default limits. */
	npu__cpu_run_init(&run, NULL, msg, sizeof(msg));
	if (!ret) {
		ret = npu__kernel_exec(&n->kern->k, n->kern->state, n->kin,
				       (const struct npu_kernel_tensor *const *)pt,
				       n->kout, pt + n->kin, &run);
		if (ret)
			npu__graph_fail(w, "node '%s' (%s): %s", n->name,
					kernel_name(n->kern), msg);
	}
	for (i = n->kin; i < nops; i++) {
		struct gvalue *v;

		if (!pt[i])
			continue;
		if (ret) {
			free(t[i].data);
			continue;
		}
		v = &w->v[n->kv[i]];
		v->data = t[i].data;
		v->data_borrowed = false;
	}
	return ret;
}

void npu__rkernel_free(struct rkernel *rk)
{
	if (!rk)
		return;
	npu__gkernel_put(rk->kern);
	free(rk->t);
	free(rk->pt);
	free(rk->where);
	free(rk->offset);
	free(rk);
}

int npu__rkernel_create(const struct npu_graph *w, const struct gnode *n,
			const uint32_t *root, const uint64_t *soff,
			struct rkernel **out)
{
	uint32_t nops = n->kin + n->kout, i;
	struct rkernel *rk = calloc(1, sizeof(*rk));

	if (!rk)
		return -ENOMEM;
	rk->t = calloc(nops, sizeof(*rk->t));
	rk->pt = calloc(nops, sizeof(*rk->pt));
	rk->where = calloc(nops, 1);
	rk->offset = calloc(nops, sizeof(*rk->offset));
	if (!rk->t || !rk->pt || !rk->where || !rk->offset) {
		npu__rkernel_free(rk);
		return -ENOMEM;
	}
	rk->kern = npu__gkernel_get(n->kern);
	rk->nin = n->kin;
	rk->nout = n->kout;
	for (i = 0; i < nops; i++) {
		uint32_t v = n->kv[i];

		if (v == NPU_VALUE_NONE)
			continue;
		npu__kernel_tensor(&w->v[v], NULL, &rk->t[i]);
		rk->pt[i] = &rk->t[i];
		rk->where[i] = w->v[v].data ? RK_STATIC : RK_ARENA;
		rk->offset[i] = w->v[v].data ? soff[v] : soff[root[v]];
	}
	*out = rk;
	return 0;
}

int npu__rkernel_run(struct npu_runtime *rt, struct rkernel *rk,
		     const struct npu_cpu_run *run)
{
	uint8_t *arena, *statics;
	uint32_t i;
	int ret;

	ret = npu__runtime_arena(rt, &arena);
	if (!ret)
		ret = npu__runtime_statics(rt, &statics);
	if (ret)
		return run_fail(run, ret, "mapping its operands: %s", npu_strerror(ret));
	for (i = 0; i < rk->nin + rk->nout; i++)
		if (rk->where[i] != RK_ABSENT)
			rk->t[i].data = (rk->where[i] == RK_ARENA ? arena : statics) +
					rk->offset[i];
	return npu__kernel_exec(&rk->kern->k, rk->kern->state, rk->nin,
				(const struct npu_kernel_tensor *const *)rk->pt,
				rk->nout, rk->pt + rk->nin, run);
}
