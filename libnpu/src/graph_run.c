// SPDX-License-Identifier: MIT
/*
 * Running a compiled graph: bind, copy inputs in, run the segments, copy
 * outputs out; per-node profile.
 *
 * How a run proceeds depends on what it holds:
 *   - only device segments: they are all submitted from
 *     npu_runtime_run_async(), each waiting on the previous one's fence;
 *     npu_runtime_wait() waits on the last fence with the caller's
 *     deadline;
 *   - device and CPU segments: a worker thread submits device segments
 *     and runs CPU segments once the fence before them has signalled;
 *   - no queue (host only, or a forced CPU run): everything runs on the
 *     caller's thread inside npu_runtime_run_async().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_internal.h"
#include "npu_ops_cpu.h"

NPU_EXPORT const char *npu_node_where_name(enum npu_node_where w)
{
	switch (w) {
	case NPU_WHERE_DEVICE: return "device";
	case NPU_WHERE_CPU: return "cpu";
	case NPU_WHERE_FOLDED: return "folded";
	case NPU_WHERE_FUSED: return "fused";
	case NPU_WHERE_ELIDED: return "elided";
	}
	return "unknown";
}

/* @rt->io is in value order (compile builds it so): a binary search. */
static struct rio *find_io(struct npu_runtime *rt, uint32_t id)
{
	size_t lo = 0, hi = rt->num_io;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rt->io[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rt->num_io && rt->io[lo].id == id ? &rt->io[lo] : NULL;
}

NPU_EXPORT int npu_runtime_setup(struct npu_runtime *rt, size_t count,
				 const uint32_t *ids, void *const *data)
{
	size_t i;

	if (!rt || (count && (!ids || !data)))
		return -EINVAL;
	/* All or nothing: check every id before binding any. */
	for (i = 0; i < count; i++)
		if (!find_io(rt, ids[i]) || !data[i])
			return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	if (rt->thread_live) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	for (i = 0; i < count; i++)
		find_io(rt, ids[i])->user = data[i];
	pthread_mutex_unlock(&rt->lock);
	return 0;
}

NPU_EXPORT uint64_t npu_runtime_value_bytes(const struct npu_runtime *rt,
					    uint32_t id)
{
	return rt && id < rt->num_values ? rt->value_bytes[id] : 0;
}

static int copy_outputs(struct npu_runtime *rt)
{
	uint8_t *arena;
	size_t i;
	int ret = npu__runtime_arena(rt, &arena);

	if (ret)
		return ret;
	for (i = 0; i < rt->num_io; i++) {
		const struct rio *io = &rt->io[i];

		/* an input that is also an output is already in place */
		if (!io->user || io->input)
			continue;
		memcpy(io->user, io->konst ? io->konst : arena + io->offset,
		       io->bytes);
		atomic_fetch_add(&rt->copied_bytes, io->bytes);
	}
	return 0;
}

__attribute__((format(printf, 2, 3)))
static void set_error(struct npu_runtime *rt, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&rt->lock);
	va_start(ap, fmt);
	vsnprintf(rt->err, sizeof(rt->err), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&rt->lock);
}

/* The CPU ops' cancel poll: npu_runtime_cancel(), then the caller's own. */
static bool run_cancelled(void *opaque)
{
	struct npu_runtime *rt = opaque;

	if (atomic_load_explicit(&rt->cancel, memory_order_relaxed))
		return true;
	return rt->cpu_limits.cancel &&
	       rt->cpu_limits.cancel(rt->cpu_limits.cancel_opaque);
}

/*
 * Before a step or segment starts: 0, or why the run stops there
 * (-ECANCELED, -ETIME), with the message naming the node not run.
 */
static int run_stop_before(struct npu_runtime *rt, const struct rstep *st)
{
	const struct rnode *n = &rt->nodes[st->node];
	int64_t deadline = rt->cpu_limits.deadline_ns;

	if (run_cancelled(rt)) {
		set_error(rt, "node '%s' (%s): cancelled before it started",
			  n->name, n->op);
		return -ECANCELED;
	}
	if (deadline && deadline != NPU_TIMEOUT_INFINITE &&
	    npu_time_ns() >= deadline) {
		set_error(rt, "node '%s' (%s): the deadline passed before it started",
			  n->name, n->op);
		return -ETIME;
	}
	return 0;
}

static int run_cpu_step(struct npu_runtime *rt, struct rstep *st)
{
	const struct rnode *n = &rt->nodes[st->node];
	struct npu_cpu_run run;
	char msg[256];
	int64_t t0 = npu_time_ns();
	int ret;

	/* The limits were checked when set: this cannot fail. */
	npu__cpu_run_init(&run, rt->cpu_limits.size ? &rt->cpu_limits : NULL,
			  msg, sizeof(msg));
	run.lim.cancel = run_cancelled;
	run.lim.cancel_opaque = rt;
	atomic_store(&rt->running, (size_t)(st - rt->steps) + 1);
	ret = st->kern ? npu__rkernel_run(rt, st->kern, &run) :
			 npu__op_run_host(st->op, false, &run);
	atomic_store(&rt->running, 0);
	rt->nodes[st->node].time_ns += (uint64_t)(npu_time_ns() - t0);
	/* a kernel's own message reads on from the node: "node 'k' (TopK): index 9 ..." */
	if (ret)
		set_error(rt, st->kern ? "node '%s' (%s): %s" : "node '%s' (%s) on the CPU: %s",
			  n->name, n->op, msg[0] ? msg : npu_strerror(ret));
	return ret;
}

static int wait_fence(struct npu_fence *f)
{
	int ret = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);

	return ret ? ret : npu_fence_error(f);
}

/* Profiling: one job per device op, waited for, its status recorded. */
static int run_profiled_step(struct npu_runtime *rt, struct rstep *st)
{
	struct npu_buffer *b[VNPU_OP_SLOTS + 1];
	struct npu_job_status js = NPU_JOB_STATUS_INIT;
	size_t n;
	int ret;

	if (!st->prof_cb) {
		ret = npu_cmdbuf_create(rt->ctx, npu_op_num_commands(st->op) *
					sizeof(struct vnpu_cmd_compute), &st->prof_cb);
		if (!ret)
			ret = npu_op_encode(st->op, st->prof_cb);
		if (ret) {
			npu_cmdbuf_destroy(st->prof_cb);
			st->prof_cb = NULL;
			return ret;
		}
	}
	npu_fence_free(st->prof_fence);
	st->prof_fence = NULL;
	n = npu_op_buffers(st->op, b, VNPU_OP_SLOTS + 1);
	ret = npu_submit(rt->q, st->prof_cb, b, n, NULL, 0, &st->prof_fence);
	if (!ret)
		ret = wait_fence(st->prof_fence);
	if (!ret && !npu_fence_status(st->prof_fence, &js)) {
		rt->nodes[st->node].cycles += js.cycles;
		rt->nodes[st->node].time_ns += js.duration_ns;
	}
	return ret;
}

/*
 * Submit device segments, each waiting for the one before, and run CPU
 * segments once the device work before them is done.  *@last receives
 * the fence of a device segment at the end, not yet waited for.
 */
static int run_segments(struct npu_runtime *rt, struct npu_fence **last)
{
	struct npu_fence *prev = NULL;
	size_t i, j, prev_seg = 0;
	int ret = 0;

	for (i = 0; i < rt->num_segs && !ret; i++) {
		struct rseg *s = &rt->segs[i];

		if (s->device && rt->q && !rt->profiling) {
			ret = run_stop_before(rt, &rt->steps[s->first]);
			if (ret)
				break;
			npu_fence_free(s->fence);
			s->fence = NULL;
			ret = npu_submit(rt->q, s->cb, s->bufs, s->num_bufs,
					 prev ? &prev : NULL, prev ? 1 : 0, &s->fence);
			prev = s->fence;
			prev_seg = i;
			continue;
		}
		if (prev) {
			atomic_store(&rt->waiting_seg, prev_seg + 1);
			ret = wait_fence(prev);
			atomic_store(&rt->waiting_seg, 0);
			prev = NULL;
			if (ret)
				break;
		}
		for (j = 0; j < s->count && !ret; j++) {
			struct rstep *st = &rt->steps[s->first + j];

			ret = run_stop_before(rt, st);
			if (ret)
				break;
			if (s->device && rt->q) {
				atomic_store(&rt->running, s->first + j + 1);
				ret = run_profiled_step(rt, st);
				atomic_store(&rt->running, 0);
			} else {
				ret = run_cpu_step(rt, st);
			}
		}
	}
	*last = ret ? NULL : prev;
	if (ret && prev)
		npu_fence_wait(prev, NPU_TIMEOUT_INFINITE);
	return ret;
}

static size_t last_device_seg(const struct npu_runtime *rt)
{
	size_t i;

	for (i = rt->num_segs; i-- > 0;)
		if (rt->segs[i].device)
			return i;
	return 0;
}

static void *worker(void *arg)
{
	struct npu_runtime *rt = arg;
	struct npu_fence *last = NULL;
	int ret = run_segments(rt, &last);

	if (!ret && last) {
		atomic_store(&rt->waiting_seg, last_device_seg(rt) + 1);
		ret = wait_fence(last);
		atomic_store(&rt->waiting_seg, 0);
	}
	if (!ret)
		ret = copy_outputs(rt);
	pthread_mutex_lock(&rt->lock);
	rt->result = ret;
	rt->done = true;
	pthread_cond_broadcast(&rt->cond);
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

/* A run in flight: thread_live; @pending is the fence of an inline run. */
static struct npu_fence *pending_fence(struct npu_runtime *rt)
{
	size_t i;

	for (i = rt->num_segs; i-- > 0;)
		if (rt->segs[i].device)
			return rt->segs[i].fence;
	return NULL;
}

enum run_mode { RUN_SYNC, RUN_INLINE, RUN_THREAD };

NPU_EXPORT int npu_runtime_run_async(struct npu_runtime *rt,
				     struct npu_queue *q)
{
	enum run_mode mode = RUN_SYNC;
	struct npu_fence *last = NULL;
	uint8_t *arena;
	size_t i;
	int ret;

	if (!rt)
		return -EINVAL;
	if (q && !rt->device)
		q = NULL;	/* nothing for it to run */
	pthread_mutex_lock(&rt->lock);
	if (rt->thread_live) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&rt->lock);
	for (i = 0; i < rt->num_io; i++)
		if (!rt->io[i].user && rt->io[i].bytes)
			return -EINVAL;
	ret = npu__runtime_arena(rt, &arena);
	if (ret)
		return ret;
	/*
	 * The previous run has been waited for, so no job uses the arena
	 * and writing the inputs into it is safe.
	 */
	for (i = 0; i < rt->num_io; i++)
		if (rt->io[i].input && rt->io[i].bytes) {
			memcpy(arena + rt->io[i].offset, rt->io[i].user, rt->io[i].bytes);
			atomic_fetch_add(&rt->copied_bytes, rt->io[i].bytes);
		}
	for (i = 0; i < rt->num_nodes; i++) {
		rt->nodes[i].cycles = 0;
		rt->nodes[i].time_ns = 0;
	}
	/* The run's worker submits on @q: keep it even if the caller lets go. */
	if (q)
		npu__queue_get(q);
	if (rt->q)
		npu__queue_put(rt->q);
	rt->q = q;
	if (q) {
		mode = RUN_INLINE;
		for (i = 0; i < rt->num_segs; i++)
			if (!rt->segs[i].device)
				mode = RUN_THREAD;
		if (rt->profiling)
			mode = RUN_THREAD;
	}
	rt->done = false;
	rt->result = 0;
	rt->err[0] = '\0';
	atomic_store(&rt->cancel, false);
	atomic_store(&rt->running, 0);
	atomic_store(&rt->waiting_seg, 0);
	switch (mode) {
	case RUN_SYNC:
		ret = run_segments(rt, &last);
		if (!ret)
			ret = copy_outputs(rt);
		rt->result = ret;
		rt->done = true;
		rt->thread_live = false;
		return ret;
	case RUN_INLINE:
		ret = run_segments(rt, &last);
		if (ret)
			return ret;
		rt->thread_live = true;
		return 0;
	case RUN_THREAD:
		rt->thread_live = true;
		ret = -pthread_create(&rt->thread, NULL, worker, rt);
		if (ret)
			rt->thread_live = false;
		return ret;
	}
	return -EINVAL;
}

static bool has_thread(const struct npu_runtime *rt)
{
	size_t i;

	if (rt->profiling)
		return true;
	for (i = 0; i < rt->num_segs; i++)
		if (!rt->segs[i].device)
			return true;
	return false;
}

/*
 * A wait's deadline passed with the run in flight: say what it is doing,
 * the CPU op of the worker, else the first device segment not finished.
 */
static void describe_running(struct npu_runtime *rt)
{
	size_t step = atomic_load(&rt->running);
	size_t seg = atomic_load(&rt->waiting_seg), i;
	const struct rnode *n, *last;

	if (step) {
		const struct rstep *st = &rt->steps[step - 1];

		n = &rt->nodes[st->node];
		set_error(rt, "node '%s' (%s) was running on the %s", n->name,
			  n->op, st->device && rt->q ? "device" : "CPU");
		return;
	}
	/*
	 * A worker thread owns the fences while it runs: it says which one
	 * it waits for.  Without one they are the caller's to look at.
	 */
	for (i = 0; i < rt->num_segs; i++) {
		const struct rseg *s = &rt->segs[i];

		if (seg ? i != seg - 1 :
		    has_thread(rt) || !s->device || !s->fence ||
		    npu_fence_is_signaled(s->fence))
			continue;
		n = &rt->nodes[rt->steps[s->first].node];
		last = &rt->nodes[rt->steps[s->first + s->count - 1].node];
		set_error(rt, "device segment %zu, nodes '%s' (%s) to '%s' (%s), was running",
			  i, n->name, n->op, last->name, last->op);
		return;
	}
	set_error(rt, "the run had not finished");
}

NPU_EXPORT int npu_runtime_wait(struct npu_runtime *rt, int64_t deadline_ns)
{
	struct timespec ts;
	int ret = 0;

	if (!rt)
		return -EINVAL;
	if (!rt->thread_live)
		return rt->result;
	if (!has_thread(rt) || !rt->q) {
		struct npu_fence *f = pending_fence(rt);

		ret = f ? npu_fence_wait(f, deadline_ns) : 0;
		if (ret == -ETIMEDOUT)
			describe_running(rt);
		if (ret)
			return ret;	/* -ETIMEDOUT: still running */
		ret = f ? npu_fence_error(f) : 0;
		if (!ret)
			ret = copy_outputs(rt);
		if (!ret)
			rt->err[0] = '\0';	/* an earlier wait's "was running" */
		rt->result = ret;
		rt->thread_live = false;
		return ret;
	}
	ts.tv_sec = deadline_ns / 1000000000;
	ts.tv_nsec = deadline_ns % 1000000000;
	pthread_mutex_lock(&rt->lock);
	while (!rt->done && !ret)
		ret = deadline_ns == NPU_TIMEOUT_INFINITE ?
		      pthread_cond_wait(&rt->cond, &rt->lock) :
		      pthread_cond_timedwait(&rt->cond, &rt->lock, &ts);
	pthread_mutex_unlock(&rt->lock);
	if (!rt->done) {
		describe_running(rt);
		return -ETIMEDOUT;
	}
	pthread_join(rt->thread, NULL);
	rt->thread_live = false;
	if (!rt->result)
		rt->err[0] = '\0';	/* an earlier wait's "was running" */
	return rt->result;
}

NPU_EXPORT int npu_runtime_run(struct npu_runtime *rt, struct npu_queue *q,
			       int64_t deadline_ns)
{
	int ret = npu_runtime_run_async(rt, q);

	return ret ? ret : npu_runtime_wait(rt, deadline_ns);
}

NPU_EXPORT int npu_runtime_set_cpu_limits(struct npu_runtime *rt,
					  const struct npu_cpu_limits *limits)
{
	struct npu_cpu_run run;
	int ret;

	if (!rt)
		return -EINVAL;
	ret = npu__cpu_run_init(&run, limits, NULL, 0);
	if (ret)
		return ret;
	pthread_mutex_lock(&rt->lock);
	if (rt->thread_live) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	rt->cpu_limits = run.lim;
	pthread_mutex_unlock(&rt->lock);
	return 0;
}

NPU_EXPORT int npu_runtime_cancel(struct npu_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	atomic_store(&rt->cancel, true);
	return 0;
}

NPU_EXPORT const char *npu_runtime_error(struct npu_runtime *rt)
{
	if (!rt)
		return "";
	/* A worker still running may write it: read a settled copy. */
	pthread_mutex_lock(&rt->lock);
	memcpy(rt->err_out, rt->err, sizeof(rt->err_out));
	pthread_mutex_unlock(&rt->lock);
	return rt->err_out;
}

NPU_EXPORT size_t npu_runtime_num_nodes(const struct npu_runtime *rt)
{
	return rt ? rt->num_nodes : 0;
}

NPU_EXPORT size_t npu_runtime_num_segments(const struct npu_runtime *rt,
					   size_t *device_segments)
{
	if (!rt)
		return 0;
	if (device_segments)
		*device_segments = rt->num_dev_segs;
	return rt->num_segs;
}

NPU_EXPORT uint64_t npu_runtime_arena_bytes(const struct npu_runtime *rt)
{
	return rt ? rt->arena_bytes : 0;
}

NPU_EXPORT uint64_t npu_runtime_static_bytes(const struct npu_runtime *rt)
{
	return rt ? rt->static_bytes : 0;
}

NPU_EXPORT int npu_runtime_set_profiling(struct npu_runtime *rt, bool on)
{
	if (!rt)
		return -EINVAL;
	if (rt->thread_live)
		return -EBUSY;
	rt->profiling = on;
	return 0;
}

NPU_EXPORT int npu_runtime_node_profile(const struct npu_runtime *rt,
					uint32_t node,
					struct npu_node_profile *p)
{
	struct npu_node_profile np;
	const struct rnode *n;

	if (!rt || !p || !p->size || node >= rt->num_nodes)
		return -EINVAL;
	n = &rt->nodes[node];
	memset(&np, 0, sizeof(np));
	np.size = p->size < sizeof(np) ? p->size : sizeof(np);
	np.name = n->name;
	np.op = n->op;
	np.where = n->where;
	np.fused_into = n->fused_into;
	np.segment = n->segment;
	np.cpu_reason = n->cpu_reason;
	np.macs = n->macs;
	np.device_cycles = n->cycles;
	np.time_ns = n->time_ns;
	npu__struct_out(p, p->size, &np, sizeof(np));
	return 0;
}
