// SPDX-License-Identifier: MIT
/*
 * npu_group: one graph compiled for several devices, independent requests
 * spread over them, and a request whose device fails re-run on another.
 *
 * One worker thread per device takes requests from one FIFO, so a device
 * that is done early takes the next request (no fixed round robin: a
 * slower device, or one sharing the host's cores with more work, simply
 * answers fewer).  A worker runs one request at a time on its runtime
 * (a runtime has one run in flight), which is also what makes failover
 * safe: the failed run is over, and wrote no output, before the request
 * is queued again.
 *
 * A pipeline group (NPU_GROUP_PIPELINE) has one stage per device instead,
 * split by graph_pipeline.c: stage 0's worker takes requests from the
 * group's FIFO, every later stage's from a FIFO of its own that the stage
 * before feeds, so the stages overlap on successive requests.  A request
 * holds one handoff slot (a shared buffer per stage that hands values on)
 * from stage 0 to the last stage; the slots are few, which bounds how far
 * stage 0 runs ahead.  Each stage is compiled once per slot with the
 * values it hands in and on placed in that slot's shared buffers
 * (npu__graph_compile_bound()), so the devices' jobs write and read them
 * there and nothing is copied between a stage's arena and the buffer;
 * the weights are one copy per device (runtimes of the same statics
 * share them).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph_internal.h"

#define GROUP_DEFAULT_REQUESTS	64u
#define GROUP_MAX_REQUESTS	65536u
/* Far more devices than a machine holds: a bound on what create allocates. */
#define GROUP_MAX_DEVICES	256u
#define REQ_NONE		UINT32_MAX

/*
 * Handoff slots: one per stage, so that every stage can hold a request
 * (each slot costs every stage a compiled runtime and its arena).
 */
#define PIPE_MIN_SLOTS		2u

enum req_state { REQ_FREE, REQ_QUEUED, REQ_RUNNING, REQ_DONE };

struct req_fifo {
	uint32_t head, tail;		/* REQ_NONE when empty */
};

struct group_req {
	uint64_t ticket;
	enum req_state state;
	uint32_t next;			/* FIFO link, REQ_NONE at the end */
	size_t count;
	uint32_t *ids;			/* owned copies of the caller's arrays */
	void **data;
	int error;
	uint32_t device;
	uint32_t attempts;
	int64_t submit_ns;
	uint64_t queued_ns;
	uint64_t run_ns;
	uint32_t hslot;			/* pipeline: its handoff slot, or REQ_NONE */
	int64_t start_ns;		/* pipeline: when stage 0 took it */
	uint64_t seq;			/* submission order */
};

struct group_dev {
	struct npu_group *group;
	uint32_t index;
	struct npu_context *ctx;	/* referenced; NULL: a CPU copy */
	struct npu_queue *q;
	struct npu_runtime *rt;
	pthread_t thread;
	bool thread_live;
	enum npu_group_device_state state;
	int error;
	uint64_t completed, failed, busy_ns;
	/* pipeline: the requests the stage before handed on, and binding room */
	struct req_fifo inq;
	uint32_t *bind_ids;
	void **bind_data;
	/* pipeline: a runtime per handoff slot (srt[0] is @rt), or copies through it */
	struct npu_runtime **srt;
	bool zero_copy;
	/* handed-on values that are outputs too; the worker adds unlocked */
	atomic_uint_fast64_t copied_bytes;
	/* pipeline failover: the whole graph compiled for this device */
	struct npu_runtime *whole;
};

struct npu_group {
	pthread_mutex_t lock;
	pthread_mutex_t add_lock;	/* npu_group_add_device(), one at a time */
	/* data parallel: the graph kept (owned copy) and options, to compile again */
	struct npu_graph *graph;
	struct npu_group_options opts;
	pthread_cond_t work;		/* a request queued, or stop */
	pthread_cond_t done;		/* a request ended */
	uint32_t flags;
	bool stopping;
	struct group_dev *devs;
	size_t num_devs;
	size_t active;
	/* the graph's external inputs and outputs, ascending */
	uint32_t *io_ids;
	size_t num_io;
	struct group_req *reqs;
	uint32_t max_reqs;
	uint32_t *gen;			/* per slot, so tickets are not reused */
	struct req_fifo queue;
	uint32_t cursor;
	/*
	 * Pipeline: the stages; handoff slots free (a stack); hview[(h * S +
	 * s) * S + t]: stage s's handoff buffer of slot h as stage t sees
	 * it; every buffer allocated or imported, to free.
	 */
	bool pipeline;
	bool fallback;			/* a stage's device left: whole graphs now */
	struct gpipe pl;
	uint32_t num_hslots, num_hfree;
	uint32_t *hfree;
	uint8_t **hview;
	struct npu_buffer **hbuf;	/* like hview: the buffer in stage t's context */
	struct npu_buffer **hbufs;
	size_t num_hbufs;
	void **hhost;			/* CPU copies' handoff memory */
	size_t num_hhost;
	uint32_t outstanding;
	uint64_t submitted, completed, failed, failovers;
};

/*
 * The failures that say the device (or its binding, or the context on
 * it) is gone or broken rather than the request: job outcomes, and the
 * errnos a file of an unbound device or a banned context returns.
 */
static bool device_failure(int err)
{
	return NPU_ERR_IS_JOB(err) || err == -ENODEV || err == -EIO ||
	       err == -ECANCELED || err == -ENXIO;
}

static void fifo_push(struct npu_group *p, struct req_fifo *f, uint32_t slot, bool front)
{
	p->reqs[slot].state = REQ_QUEUED;
	if (f->head == REQ_NONE) {
		p->reqs[slot].next = REQ_NONE;
		f->head = f->tail = slot;
	} else if (front) {
		p->reqs[slot].next = f->head;
		f->head = slot;
	} else {
		p->reqs[slot].next = REQ_NONE;
		p->reqs[f->tail].next = slot;
		f->tail = slot;
	}
}

static uint32_t fifo_pop(struct npu_group *p, struct req_fifo *f)
{
	uint32_t slot = f->head;

	if (slot != REQ_NONE) {
		f->head = p->reqs[slot].next;
		if (f->head == REQ_NONE)
			f->tail = REQ_NONE;
	}
	return slot;
}

/* Under @p->lock. */
static void req_end(struct npu_group *p, struct group_req *r, int error)
{
	if (r->hslot != REQ_NONE) {
		p->hfree[p->num_hfree++] = r->hslot;
		r->hslot = REQ_NONE;
		/* stage 0 may be waiting for a slot */
		pthread_cond_broadcast(&p->work);
	}
	r->state = REQ_DONE;
	r->error = error;
	if (error)
		p->failed++;
	else
		p->completed++;
	pthread_cond_broadcast(&p->done);
}

/* The last device left: nothing queued can be answered any more. */
static void fail_queued(struct npu_group *p)
{
	uint32_t slot;
	size_t i;

	while ((slot = fifo_pop(p, &p->queue)) != REQ_NONE)
		req_end(p, &p->reqs[slot], -ENODEV);
	for (i = 0; p->pipeline && i < p->num_devs; i++)
		while ((slot = fifo_pop(p, &p->devs[i].inq)) != REQ_NONE)
			req_end(p, &p->reqs[slot], -ENODEV);
}

/*
 * A data-parallel worker's loop, and a pipeline's after failover (the
 * whole graph on @d->whole): under @p->lock, returned with it held.
 */
static void serve(struct group_dev *d)
{
	struct npu_group *p = d->group;
	struct npu_runtime *rt = d->whole ? d->whole : d->rt;

	for (;;) {
		struct group_req *r;
		uint32_t slot;
		int64_t t0, now;
		int ret;

		while (!p->stopping && p->queue.head == REQ_NONE)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stopping)
			break;
		slot = fifo_pop(p, &p->queue);
		r = &p->reqs[slot];
		r->state = REQ_RUNNING;
		r->device = d->index;
		t0 = npu_time_ns();
		if (!r->attempts++)
			r->queued_ns = (uint64_t)(t0 - r->submit_ns);
		pthread_mutex_unlock(&p->lock);

		/* Binding every input and output replaces the last request's. */
		ret = npu_runtime_setup(rt, r->count, r->ids, r->data);
		if (!ret)
			ret = npu_runtime_run(rt, d->q, NPU_TIMEOUT_INFINITE);
		now = npu_time_ns();

		pthread_mutex_lock(&p->lock);
		d->busy_ns += (uint64_t)(now - t0);
		if (!ret) {
			d->completed++;
			r->run_ns = (uint64_t)(now - t0);
			req_end(p, r, 0);
			continue;
		}
		d->failed++;
		if (!device_failure(ret)) {
			req_end(p, r, ret);
			continue;
		}
		d->state = NPU_GROUP_DEVICE_LEFT;
		d->error = ret;
		p->active--;
		if (p->flags & NPU_GROUP_NO_FAILOVER) {
			req_end(p, r, ret);
		} else if (p->active) {
			fifo_push(p, &p->queue, slot, true);
			p->failovers++;
			pthread_cond_broadcast(&p->work);
		} else {
			req_end(p, r, -ENODEV);
		}
		if (!p->active)
			fail_queued(p);
		break;
	}
}

static void *worker(void *arg)
{
	struct group_dev *d = arg;
	struct npu_group *p = d->group;

	pthread_mutex_lock(&p->lock);
	serve(d);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Stage @t's view of stage @s's handoff buffer in slot @h. */
static uint8_t *hview(const struct npu_group *p, uint32_t h, size_t s, size_t t)
{
	size_t n = p->num_devs;

	return p->hview[((size_t)h * n + s) * n + t];
}

static struct npu_buffer *hbuf(const struct npu_group *p, uint32_t h, size_t s, size_t t)
{
	size_t n = p->num_devs;

	return p->hbuf[((size_t)h * n + s) * n + t];
}

static void *caller_ptr(const struct group_req *r, uint32_t id)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (r->ids[i] == id)
			return r->data[i];
	return NULL;
}

/*
 * Run stage @d on request @r: bind its values, run, copy out what the
 * caller wants too.  With zero copy the slot's runtime ignores the
 * handoff bindings: its jobs use the shared buffers themselves.
 */
static int stage_run(struct npu_group *p, struct group_dev *d, const struct group_req *r)
{
	const struct gpipe_stage *st = &p->pl.st[d->index];
	struct npu_runtime *rt = d->zero_copy ? d->srt[r->hslot] : d->rt;
	size_t i;
	int ret;

	for (i = 0; i < st->num_io; i++) {
		const struct gpipe_io *io = &st->io[i];

		d->bind_ids[i] = io->id;
		d->bind_data[i] = io->stage == GPIPE_CALLER ? caller_ptr(r, io->id) :
				  hview(p, r->hslot, io->stage, d->index) + io->offset;
	}
	ret = npu_runtime_setup(rt, st->num_io, d->bind_ids, d->bind_data);
	if (!ret)
		ret = npu_runtime_run(rt, d->q, NPU_TIMEOUT_INFINITE);
	for (i = 0; !ret && i < st->num_io; i++)
		if (st->io[i].to_caller) {
			memcpy(caller_ptr(r, st->io[i].id), d->bind_data[i], st->io[i].bytes);
			atomic_fetch_add(&d->copied_bytes, st->io[i].bytes);
		}
	return ret;
}

/*
 * Under @p->lock: @r leaves the pipeline to run again whole, ahead of
 * every request not yet started, in submission order among those sent
 * back (push_front() of each in turn keeps that when they come newest
 * first, which sendback_all() arranges).
 */
static void sendback(struct npu_group *p, struct group_req *r)
{
	if (r->hslot != REQ_NONE) {
		p->hfree[p->num_hfree++] = r->hslot;
		r->hslot = REQ_NONE;
	}
	fifo_push(p, &p->queue, (uint32_t)(r - p->reqs), true);
	p->failovers++;
}

static int by_seq_desc(const void *a, const void *b, void *arg)
{
	const struct group_req *reqs = arg;
	uint64_t x = reqs[*(const uint32_t *)a].seq, y = reqs[*(const uint32_t *)b].seq;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Under @p->lock: a stage's device left and another remains, so every
 * request waiting between stages goes back to the group's queue to run
 * whole (@failed, the one whose run failed, among them); the requests
 * other stages are running follow when their runs end (pipe_worker()).
 */
static void begin_fallback(struct npu_group *p, struct group_req *failed)
{
	uint32_t *back = malloc((p->max_reqs + 1) * sizeof(*back)), slot, k = 0;
	size_t i;

	p->fallback = true;
	for (i = 1; i < p->num_devs; i++)
		while ((slot = fifo_pop(p, &p->devs[i].inq)) != REQ_NONE) {
			if (back)
				back[k++] = slot;
			else
				sendback(p, &p->reqs[slot]);
		}
	if (back) {
		back[k++] = (uint32_t)(failed - p->reqs);
		qsort_r(back, k, sizeof(*back), by_seq_desc, p->reqs);
		for (i = 0; i < k; i++)
			sendback(p, &p->reqs[back[i]]);
		free(back);
	} else {
		sendback(p, failed);
	}
	pthread_cond_broadcast(&p->work);
}

/*
 * After failover, a surviving stage's device runs whole graphs: compiled
 * here, outside the lock (requests wait in the queue meanwhile), then
 * served as a data-parallel group serves them.  Under @p->lock.
 */
static void serve_whole(struct group_dev *d)
{
	struct npu_group *p = d->group;
	int ret;

	pthread_mutex_unlock(&p->lock);
	ret = npu_graph_compile(p->graph, d->ctx, p->opts.compile_flags, &d->whole);
	pthread_mutex_lock(&p->lock);
	if (!ret) {
		serve(d);
		return;
	}
	d->state = NPU_GROUP_DEVICE_LEFT;
	d->error = ret;
	if (!--p->active)
		fail_queued(p);
}

/*
 * A pipeline stage's worker.  Every stage is needed for every request, so
 * when one device fails the pipeline is over: with NPU_GROUP_NO_FAILOVER
 * what is queued fails, and what another stage is running fails when it
 * comes back; else every request not yet answered runs again, the whole
 * graph on each device left (begin_fallback(), serve_whole()).
 */
static void *pipe_worker(void *arg)
{
	struct group_dev *d = arg;
	struct npu_group *p = d->group;
	struct req_fifo *in = d->index ? &d->inq : &p->queue;
	bool last = d->index + 1 == p->num_devs;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct group_req *r;
		uint32_t slot;
		int64_t t0, now;
		bool group_over = false;
		int ret;

		while (!p->stopping && !p->fallback &&
		       (in->head == REQ_NONE || (!d->index && !p->num_hfree)))
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stopping)
			break;
		if (p->fallback) {
			serve_whole(d);
			break;
		}
		slot = fifo_pop(p, in);
		r = &p->reqs[slot];
		r->state = REQ_RUNNING;
		r->device = d->index;
		t0 = npu_time_ns();
		if (!d->index) {
			r->hslot = p->hfree[--p->num_hfree];
			r->attempts = 1;
			r->start_ns = t0;
			r->queued_ns = (uint64_t)(t0 - r->submit_ns);
		}
		pthread_mutex_unlock(&p->lock);

		ret = stage_run(p, d, r);
		now = npu_time_ns();

		pthread_mutex_lock(&p->lock);
		d->busy_ns += (uint64_t)(now - t0);
		if (ret)
			d->failed++;
		else
			d->completed++;
		if (p->fallback) {
			/* another stage's device left meanwhile: run it again whole */
			if (!ret && last) {
				r->run_ns = (uint64_t)(now - r->start_ns);
				req_end(p, r, 0);
			} else if (ret && !device_failure(ret)) {
				req_end(p, r, ret);	/* the request's own error */
			} else {
				sendback(p, r);
				pthread_cond_broadcast(&p->work);
			}
			if (ret && device_failure(ret)) {
				d->state = NPU_GROUP_DEVICE_LEFT;
				d->error = ret;
				if (!--p->active)
					fail_queued(p);
				break;
			}
			serve_whole(d);
			break;
		}
		if (!ret) {
			/* another stage's device left meanwhile (NPU_GROUP_NO_FAILOVER) */
			group_over = p->active < p->num_devs;
			if (group_over)
				ret = -ENODEV;
		}
		if (!ret && !last) {
			fifo_push(p, &p->devs[d->index + 1].inq, slot, false);
			pthread_cond_broadcast(&p->work);
			continue;
		}
		if (!ret)
			r->run_ns = (uint64_t)(now - r->start_ns);
		if (ret && device_failure(ret) && !group_over &&
		    !(p->flags & NPU_GROUP_NO_FAILOVER) && p->active > 1) {
			d->state = NPU_GROUP_DEVICE_LEFT;
			d->error = ret;
			p->active--;
			begin_fallback(p, r);
			break;
		}
		req_end(p, r, ret);
		if (group_over || !device_failure(ret))
			continue;
		d->state = NPU_GROUP_DEVICE_LEFT;
		d->error = ret;
		p->active--;
		fail_queued(p);
		break;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Contexts on every vnpu device, for a group created without any. */
static int open_all(struct npu_context ***out, size_t *count)
{
	struct npu_device_list *list;
	struct npu_context **ctxs;
	size_t n, i;
	int ret = npu_device_list(&list);

	if (ret)
		return ret;
	n = npu_device_list_count(list);
	npu_device_list_free(list);
	if (!n)
		return -ENODEV;
	if (n > GROUP_MAX_DEVICES)
		n = GROUP_MAX_DEVICES;
	ctxs = calloc(n, sizeof(*ctxs));
	if (!ctxs)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		struct npu_device *dev;

		ret = npu_device_open((uint32_t)i, &dev);
		if (ret)
			break;
		/* The context keeps its own file: the device may go. */
		ret = npu_context_create(dev, &ctxs[i]);
		npu_device_close(dev);
	}
	if (ret) {
		while (i-- > 0)
			npu_context_destroy(ctxs[i]);
		free(ctxs);
		return ret;
	}
	*out = ctxs;
	*count = n;
	return 0;
}

NPU_EXPORT void npu_group_free(struct npu_group *p)
{
	size_t i, k;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->num_devs; i++)
		if (p->devs[i].thread_live)
			pthread_join(p->devs[i].thread, NULL);
	for (i = 0; i < p->num_hbufs; i++)
		npu_buffer_free(p->hbufs[i]);
	for (i = 0; i < p->num_hhost; i++)
		free(p->hhost[i]);
	for (i = 0; i < p->num_devs; i++) {
		struct group_dev *d = &p->devs[i];

		free(d->bind_ids);
		free(d->bind_data);
		for (k = 0; d->srt && k < p->num_hslots; k++)
			if (d->srt[k] != d->rt)
				npu_runtime_free(d->srt[k]);
		free(d->srt);
		npu_runtime_free(d->whole);
		npu_runtime_free(d->rt);
		npu_queue_destroy(d->q);
		if (d->ctx)
			npu__context_put(d->ctx);
	}
	for (i = 0; p->reqs && i < p->max_reqs; i++) {
		free(p->reqs[i].ids);
		free(p->reqs[i].data);
	}
	npu_graph_free(p->graph);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->add_lock);
	pthread_mutex_destroy(&p->lock);
	npu__pipeline_free(&p->pl);
	free(p->hbufs);
	free(p->hhost);
	free(p->hview);
	free(p->hbuf);
	free(p->hfree);
	free(p->devs);
	free(p->io_ids);
	free(p->reqs);
	free(p->gen);
	free(p);
}

static int group_init_sync(struct npu_group *p)
{
	pthread_condattr_t ca;
	int ret;

	ret = -pthread_condattr_init(&ca);
	if (ret)
		return ret;
	/* npu_group_wait()'s deadlines are CLOCK_MONOTONIC, as npu_time_ns(). */
	ret = -pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = -pthread_cond_init(&p->done, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		return ret;
	ret = -pthread_cond_init(&p->work, NULL);
	if (ret) {
		pthread_cond_destroy(&p->done);
		return ret;
	}
	ret = -pthread_mutex_init(&p->lock, NULL);
	if (!ret) {
		ret = -pthread_mutex_init(&p->add_lock, NULL);
		if (ret)
			pthread_mutex_destroy(&p->lock);
	}
	if (ret) {
		pthread_cond_destroy(&p->work);
		pthread_cond_destroy(&p->done);
	}
	return ret;
}

/* Compile @g for device slot @d and make its queue. */
static int dev_setup(struct npu_group *p, struct group_dev *d, struct npu_graph *g,
		     struct npu_context *ctx, const struct npu_group_options *o)
{
	int ret;

	d->group = p;
	d->state = NPU_GROUP_DEVICE_ACTIVE;
	if (ctx) {
		npu__context_get(ctx);
		d->ctx = ctx;
	}
	ret = npu_graph_compile(g, ctx, o->compile_flags, &d->rt);
	if (!ret && ctx && !(o->compile_flags & NPU_COMPILE_CPU_ONLY))
		ret = npu_queue_create(ctx, o->hw_queue, NPU_PRIORITY_NORMAL, &d->q);
	return ret;
}

/*
 * Stage @s's handoff buffer for slot @h, and every later stage's view of
 * it: allocated on @s's device and imported into each later stage's
 * context (a dma-buf, so both devices map the same pages), or host
 * memory where either side is a CPU copy.
 */
static int handoff_setup(struct npu_group *p, uint32_t h, size_t s)
{
	struct group_dev *d = &p->devs[s];
	uint64_t bytes = p->pl.st[s].handoff_bytes;
	struct npu_buffer *buf;
	size_t n = p->num_devs, t;
	int fd = -1, ret;
	void *ptr;

	if (!bytes)
		return 0;
	if (!d->ctx) {
		ptr = calloc(1, bytes);
		if (!ptr)
			return -ENOMEM;
		p->hhost[p->num_hhost++] = ptr;
		for (t = s; t < n; t++)
			p->hview[((size_t)h * n + s) * n + t] = ptr;
		return 0;
	}
	ret = npu_buffer_alloc(d->ctx, bytes, 0, &buf);
	if (ret)
		return ret;
	p->hbufs[p->num_hbufs++] = buf;
	ret = npu_buffer_map(buf, &ptr);
	if (ret)
		return ret;
	for (t = s; t < n; t++) {
		struct npu_context *ct = p->devs[t].ctx;
		struct npu_buffer *imp;
		void *view;

		/* the producer's own mapping serves a CPU copy and its own context */
		if (!ct || ct == d->ctx || !p->pl.st[t].handoffs_in) {
			p->hview[((size_t)h * n + s) * n + t] = ptr;
			p->hbuf[((size_t)h * n + s) * n + t] = ct == d->ctx ? buf : NULL;
			continue;
		}
		if (fd < 0) {
			ret = npu_buffer_export(buf, &fd);
			if (ret)
				return ret;
		}
		ret = npu_buffer_import(ct, fd, &imp);
		if (ret)
			break;
		p->hbufs[p->num_hbufs++] = imp;
		ret = npu_buffer_map(imp, &view);
		if (ret)
			break;
		p->hview[((size_t)h * n + s) * n + t] = view;
		p->hbuf[((size_t)h * n + s) * n + t] = imp;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Compile stage @d once per handoff slot, each runtime's handoff values
 * in that slot's shared buffers.  A stage whose values cannot be placed
 * so (compile says -ENOTSUP: a CPU kernel node reads or writes one) has
 * one runtime that copies them through its arena instead.
 */
static int stage_compile(struct npu_group *p, struct group_dev *d, const struct npu_group_options *o)
{
	const struct gpipe_stage *st = &p->pl.st[d->index];
	struct gbound *b = calloc(st->num_io ? st->num_io : 1, sizeof(*b));
	size_t i, nb;
	uint32_t h;
	int ret = 0;

	d->srt = calloc(p->num_hslots, sizeof(*d->srt));
	if (!b || !d->srt) {
		free(b);
		return -ENOMEM;
	}
	d->zero_copy = true;
	for (h = 0; h < p->num_hslots && d->zero_copy && !ret; h++) {
		for (i = 0, nb = 0; i < st->num_io; i++) {
			const struct gpipe_io *io = &st->io[i];

			if (io->stage == GPIPE_CALLER)
				continue;
			b[nb].id = io->id;
			b[nb].buf = hbuf(p, h, io->stage, d->index);
			b[nb].offset = io->offset;
			b[nb].host = hview(p, h, io->stage, d->index) + io->offset;
			/* a device runtime needs the buffer itself */
			if (d->ctx && !b[nb].buf)
				d->zero_copy = false;
			nb++;
		}
		if (!d->zero_copy)
			break;
		ret = npu__graph_compile_bound(st->graph, d->ctx, o->compile_flags, b, nb,
					       &d->srt[h]);
		if (ret == -ENOTSUP) {
			d->zero_copy = false;
			ret = 0;
		}
	}
	free(b);
	if (!ret && !d->zero_copy) {
		for (h = 0; h < p->num_hslots; h++) {
			npu_runtime_free(d->srt[h]);
			d->srt[h] = NULL;
		}
		ret = npu_graph_compile(st->graph, d->ctx, o->compile_flags, &d->rt);
	} else if (!ret) {
		d->rt = d->srt[0];
	}
	return ret;
}

/* Split @g into one stage per device, make the handoff slots, compile each stage. */
static int pipeline_setup(struct npu_group *p, struct npu_graph *g,
			  struct npu_context *const *ctxs, size_t count,
			  const struct npu_group_options *o)
{
	size_t n = count, s, i;
	uint32_t h;
	int ret;

	if (o->num_cuts && (o->num_cuts != count - 1 || !o->cuts))
		return npu__graph_fail(g, "a pipeline over %zu devices takes %zu cuts, not %u",
				       count, count - 1, o->num_cuts), -EINVAL;
	ret = npu__pipeline_split(g, count, o->num_cuts ? o->cuts : NULL, o->compile_flags,
				  &p->pl);
	if (ret)
		return ret;
	p->pipeline = true;
	for (s = 0; s < n; s++) {
		struct group_dev *d = &p->devs[s];
		struct gpipe_stage *st = &p->pl.st[s];

		d->group = p;
		d->state = NPU_GROUP_DEVICE_ACTIVE;
		d->index = (uint32_t)s;
		d->inq.head = d->inq.tail = REQ_NONE;
		if (ctxs[s]) {
			npu__context_get(ctxs[s]);
			d->ctx = ctxs[s];
		}
		p->num_devs = s + 1;
		d->bind_ids = malloc((st->num_io ? st->num_io : 1) * sizeof(*d->bind_ids));
		d->bind_data = malloc((st->num_io ? st->num_io : 1) * sizeof(*d->bind_data));
		if (!d->bind_ids || !d->bind_data)
			return -ENOMEM;
	}
	p->num_hslots = (uint32_t)(n > PIPE_MIN_SLOTS ? n : PIPE_MIN_SLOTS);
	p->hfree = malloc(p->num_hslots * sizeof(*p->hfree));
	p->hview = calloc((size_t)p->num_hslots * n * n, sizeof(*p->hview));
	p->hbuf = calloc((size_t)p->num_hslots * n * n, sizeof(*p->hbuf));
	p->hbufs = calloc((size_t)p->num_hslots * n * n, sizeof(*p->hbufs));
	p->hhost = calloc((size_t)p->num_hslots * n, sizeof(*p->hhost));
	if (!p->hfree || !p->hview || !p->hbuf || !p->hbufs || !p->hhost)
		return -ENOMEM;
	for (h = 0; h < p->num_hslots; h++) {
		for (s = 0; s < n; s++) {
			ret = handoff_setup(p, h, s);
			if (ret)
				return npu__graph_fail(g, "pipeline stage %zu: no shared buffer for its"
						       " %llu bytes handed on: %s", s,
						       (unsigned long long)p->pl.st[s].handoff_bytes,
						       npu_strerror(ret)), ret;
		}
		p->hfree[p->num_hfree++] = h;
	}
	for (s = 0; s < n; s++) {
		struct group_dev *d = &p->devs[s];

		ret = stage_compile(p, d, o);
		if (!ret && d->ctx && !(o->compile_flags & NPU_COMPILE_CPU_ONLY))
			ret = npu_queue_create(d->ctx, o->hw_queue, NPU_PRIORITY_NORMAL, &d->q);
		if (ret) {
			/* the stage's graph names the node; say it on the caller's */
			npu__graph_fail(g, "pipeline stage %zu: %s", s,
					npu_graph_error(p->pl.st[s].graph));
			return ret;
		}
	}
	/* The caller binds the graph's own inputs and outputs. */
	p->io_ids = malloc((g->nv ? g->nv : 1) * sizeof(*p->io_ids));
	if (!p->io_ids)
		return -ENOMEM;
	for (i = 0; i < g->nv; i++)
		if (g->v[i].flags & (NPU_VALUE_INPUT | NPU_VALUE_OUTPUT))
			p->io_ids[p->num_io++] = (uint32_t)i;
	return 0;
}

NPU_EXPORT int npu_group_create(struct npu_graph *g, struct npu_context *const *ctxs,
			       size_t count, const struct npu_group_options *opts,
			       struct npu_group **out)
{
	struct npu_group_options o = { .size = sizeof(o) };
	struct npu_context **own = NULL;
	struct npu_group *p;
	const struct npu_runtime *rt0;
	size_t i;
	int ret;

	if (!g || !out || (!ctxs != !count) || count > GROUP_MAX_DEVICES)
		return -EINVAL;
	if (opts) {
		ret = npu__struct_in(&o, sizeof(o), opts, opts->size);
		if (ret)
			return ret;
	}
	if ((o.flags & ~(NPU_GROUP_NO_FAILOVER | NPU_GROUP_PIPELINE)) ||
	    o.max_requests > GROUP_MAX_REQUESTS ||
	    (!(o.flags & NPU_GROUP_PIPELINE) && (o.num_cuts || o.cuts)))
		return -EINVAL;
	if (!ctxs) {
		ret = open_all(&own, &count);
		if (ret)
			return ret;
		ctxs = own;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -ENOMEM;
		goto out_own;
	}
	ret = group_init_sync(p);
	if (ret) {
		free(p);
		goto out_own;
	}
	p->flags = o.flags;
	p->queue.head = p->queue.tail = REQ_NONE;
	p->max_reqs = o.max_requests ? o.max_requests : GROUP_DEFAULT_REQUESTS;
	/* room for npu_group_add_device(): workers hold pointers into it */
	p->devs = calloc(o.flags & NPU_GROUP_PIPELINE ? count : GROUP_MAX_DEVICES,
			 sizeof(*p->devs));
	p->opts = o;
	p->opts.cuts = NULL;
	p->reqs = calloc(p->max_reqs, sizeof(*p->reqs));
	p->gen = calloc(p->max_reqs, sizeof(*p->gen));
	if (!p->devs || !p->reqs || !p->gen) {
		ret = -ENOMEM;
		goto fail;
	}
	if (o.flags & NPU_GROUP_PIPELINE) {
		ret = count < 2 ? (npu__graph_fail(g, "a pipeline needs two devices or more, not %zu",
						   count), -EINVAL) :
		      pipeline_setup(p, g, ctxs, count, &o);
		/* failover runs it whole on a device that remains */
		if (!ret && !(o.flags & NPU_GROUP_NO_FAILOVER))
			ret = npu__graph_clone(g, &p->graph);
		if (ret)
			goto fail;
		goto start;
	}
	for (i = 0; i < count; i++) {
		p->devs[i].index = (uint32_t)i;
		p->num_devs = i + 1;
		ret = dev_setup(p, &p->devs[i], g, ctxs[i], &o);
		if (ret)
			goto fail;
	}
	ret = npu__graph_clone(g, &p->graph);
	if (ret)
		goto fail;
	/* Every copy comes from one graph: the same inputs and outputs. */
	rt0 = p->devs[0].rt;
	p->num_io = rt0->num_io;
	p->io_ids = malloc((p->num_io ? p->num_io : 1) * sizeof(*p->io_ids));
	if (!p->io_ids) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < p->num_io; i++)
		p->io_ids[i] = rt0->io[i].id;
	qsort(p->io_ids, p->num_io, sizeof(*p->io_ids), cmp_u32);
start:
	p->active = count;
	for (i = 0; i < count; i++) {
		ret = -pthread_create(&p->devs[i].thread, NULL, p->pipeline ? pipe_worker : worker,
				      &p->devs[i]);
		if (ret)
			goto fail;
		p->devs[i].thread_live = true;
	}
	*out = p;
	p = NULL;
	ret = 0;
fail:
	npu_group_free(p);
out_own:
	if (own) {
		/* the group holds its own references */
		for (i = 0; i < count; i++)
			npu_context_destroy(own[i]);
		free(own);
	}
	return ret;
}

/* npu_group_add_device() may grow num_devs meanwhile. */
static size_t num_devs(const struct npu_group *p)
{
	struct npu_group *mp = (struct npu_group *)p;
	size_t n;

	pthread_mutex_lock(&mp->lock);
	n = p->num_devs;
	pthread_mutex_unlock(&mp->lock);
	return n;
}

NPU_EXPORT size_t npu_group_num_devices(const struct npu_group *p)
{
	return p ? num_devs(p) : 0;
}

NPU_EXPORT const struct npu_runtime *npu_group_runtime(const struct npu_group *p,
						      size_t index)
{
	return p && index < num_devs(p) ? p->devs[index].rt : NULL;
}

/* Do @ids name every input and output exactly once? */
static bool binds_all(const struct npu_group *p, size_t count, const uint32_t *ids)
{
	uint32_t *sorted;
	bool ok;

	if (count != p->num_io)
		return false;
	if (!count)
		return true;
	sorted = malloc(count * sizeof(*sorted));
	if (!sorted)
		return false;
	memcpy(sorted, ids, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), cmp_u32);
	ok = !memcmp(sorted, p->io_ids, count * sizeof(*sorted));
	free(sorted);
	return ok;
}

NPU_EXPORT int npu_group_submit(struct npu_group *p, size_t count, const uint32_t *ids,
			       void *const *data, uint64_t *ticket)
{
	uint32_t *ids_copy = NULL;
	void **data_copy = NULL;
	struct group_req *r;
	uint32_t slot;
	size_t i;
	int ret = 0;

	if (!p || !ticket || (count && (!ids || !data)))
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!data[i])
			return -EINVAL;
	if (!binds_all(p, count, ids))
		return -EINVAL;
	if (count) {
		ids_copy = malloc(count * sizeof(*ids_copy));
		data_copy = malloc(count * sizeof(*data_copy));
		if (!ids_copy || !data_copy) {
			free(ids_copy);
			free(data_copy);
			return -ENOMEM;
		}
		memcpy(ids_copy, ids, count * sizeof(*ids_copy));
		memcpy(data_copy, data, count * sizeof(*data_copy));
	}
	pthread_mutex_lock(&p->lock);
	if (!p->active || (p->pipeline && !p->fallback && p->active < p->num_devs))
		ret = -ENODEV;
	else if (p->outstanding == p->max_reqs)
		ret = -EAGAIN;
	if (ret) {
		pthread_mutex_unlock(&p->lock);
		free(ids_copy);
		free(data_copy);
		return ret;
	}
	while (p->reqs[p->cursor].state != REQ_FREE)
		p->cursor = (p->cursor + 1) % p->max_reqs;
	slot = p->cursor;
	r = &p->reqs[slot];
	memset(r, 0, sizeof(*r));
	r->hslot = REQ_NONE;
	/* A ticket is never 0, and a slot's next ticket differs from its last. */
	r->ticket = ((uint64_t)++p->gen[slot] << 32) | slot;
	if (!p->gen[slot])
		r->ticket = ((uint64_t)++p->gen[slot] << 32) | slot;
	r->count = count;
	r->ids = ids_copy;
	r->data = data_copy;
	r->submit_ns = npu_time_ns();
	r->seq = p->submitted;
	fifo_push(p, &p->queue, slot, false);
	p->outstanding++;
	p->submitted++;
	*ticket = r->ticket;
	/*
	 * Data-parallel workers all wait for the queue, so waking one will
	 * do.  A pipeline's stages share the condition but wait for different
	 * queues: a signal could wake a later stage, which sleeps again, and
	 * leave stage 0 asleep with the request queued.
	 */
	if (p->pipeline)
		pthread_cond_broadcast(&p->work);
	else
		pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

NPU_EXPORT int npu_group_wait(struct npu_group *p, uint64_t ticket, int64_t deadline_ns,
			     struct npu_group_result *result)
{
	struct npu_group_result res = { .size = sizeof(res) };
	uint32_t slot = (uint32_t)ticket;
	struct group_req *r;
	struct timespec ts;
	uint32_t *ids;
	void **data;
	int ret = 0;

	if (!p || (result && !result->size))
		return -EINVAL;
	if (slot >= p->max_reqs)
		return -ENOENT;
	ts.tv_sec = deadline_ns / 1000000000;
	ts.tv_nsec = deadline_ns % 1000000000;
	pthread_mutex_lock(&p->lock);
	r = &p->reqs[slot];
	while (!ret && r->ticket == ticket && r->state != REQ_FREE && r->state != REQ_DONE)
		ret = deadline_ns == NPU_TIMEOUT_INFINITE ?
		      pthread_cond_wait(&p->done, &p->lock) :
		      pthread_cond_timedwait(&p->done, &p->lock, &ts);
	if (r->ticket != ticket || r->state == REQ_FREE) {
		pthread_mutex_unlock(&p->lock);
		return -ENOENT;
	}
	if (r->state != REQ_DONE) {
		pthread_mutex_unlock(&p->lock);
		return ret == ETIMEDOUT ? -ETIMEDOUT : -ret;
	}
	res.error = r->error;
	res.device = r->device;
	res.attempts = r->attempts;
	res.queued_ns = r->queued_ns;
	res.run_ns = r->run_ns;
	ret = r->error;
	ids = r->ids;
	data = r->data;
	r->ids = NULL;
	r->data = NULL;
	r->state = REQ_FREE;
	r->ticket = 0;
	p->outstanding--;
	pthread_mutex_unlock(&p->lock);
	free(ids);
	free(data);
	if (result)
		npu__struct_out(result, result->size, &res, sizeof(res));
	return ret;
}

NPU_EXPORT int npu_group_get_device_stats(const struct npu_group *p, size_t index,
					 struct npu_group_device_stats *st)
{
	struct npu_group_device_stats s = { .size = sizeof(s) };
	struct npu_group *mp = (struct npu_group *)p;
	const struct group_dev *d;

	if (!p || !st || !st->size)
		return -EINVAL;
	pthread_mutex_lock(&mp->lock);
	if (index >= p->num_devs) {
		pthread_mutex_unlock(&mp->lock);
		return -EINVAL;
	}
	d = &p->devs[index];
	s.state = d->state;
	s.error = d->error;
	s.minor = d->ctx ? d->ctx->info.minor : UINT32_MAX;
	s.completed = d->completed;
	s.failed = d->failed;
	s.busy_ns = d->busy_ns;
	pthread_mutex_unlock(&mp->lock);
	npu__struct_out(st, st->size, &s, sizeof(s));
	return 0;
}

NPU_EXPORT int npu_group_get_stats(const struct npu_group *p, struct npu_group_stats *st)
{
	struct npu_group_stats s = { .size = sizeof(s) };
	struct npu_group *mp = (struct npu_group *)p;

	if (!p || !st || !st->size)
		return -EINVAL;
	pthread_mutex_lock(&mp->lock);
	s.active_devices = (uint32_t)p->active;
	s.submitted = p->submitted;
	s.completed = p->completed;
	s.failed = p->failed;
	s.failovers = p->failovers;
	pthread_mutex_unlock(&mp->lock);
	npu__struct_out(st, st->size, &s, sizeof(s));
	return 0;
}

NPU_EXPORT size_t npu_group_num_stages(const struct npu_group *p)
{
	return p && p->pipeline ? p->pl.num_stages : 0;
}

NPU_EXPORT int npu_group_get_stage(const struct npu_group *p, size_t index,
				  struct npu_group_stage *st)
{
	struct npu_group_stage s = { .size = sizeof(s) };
	struct npu_group *mp = (struct npu_group *)p;
	const struct gpipe_stage *ps;
	uint32_t h;

	if (!p || !st || !st->size || !p->pipeline || index >= p->pl.num_stages)
		return -EINVAL;
	ps = &p->pl.st[index];
	s.first_node = ps->first_node;
	s.num_nodes = ps->num_nodes;
	s.inputs_handed_in = ps->handoffs_in;
	s.outputs_handed_on = ps->handoffs_out;
	s.handoff_bytes = ps->handoff_bytes;
	s.macs = ps->macs;
	s.cost = ps->cost;
	pthread_mutex_lock(&mp->lock);
	s.runs = p->devs[index].completed + p->devs[index].failed;
	s.busy_ns = p->devs[index].busy_ns;
	s.copied_bytes = atomic_load(&p->devs[index].copied_bytes);
	for (h = 0; h < p->num_hslots; h++) {
		const struct npu_runtime *rt = p->devs[index].srt[h];

		if (rt)
			s.copied_bytes += atomic_load(&rt->copied_bytes);
	}
	if (!p->devs[index].zero_copy)
		s.copied_bytes += atomic_load(&p->devs[index].rt->copied_bytes);
	s.zero_copy = p->devs[index].zero_copy;
	pthread_mutex_unlock(&mp->lock);
	npu__struct_out(st, st->size, &s, sizeof(s));
	return 0;
}

NPU_EXPORT int npu_group_add_device(struct npu_group *p, struct npu_context *ctx,
				   size_t *index)
{
	struct group_dev *d;
	int ret;

	if (!p || p->pipeline)
		return -EINVAL;
	pthread_mutex_lock(&p->add_lock);
	if (p->num_devs == GROUP_MAX_DEVICES) {
		pthread_mutex_unlock(&p->add_lock);
		return -ENOSPC;
	}
	/* Only this call writes past num_devs, and only under add_lock. */
	d = &p->devs[p->num_devs];
	memset(d, 0, sizeof(*d));
	d->index = (uint32_t)p->num_devs;
	ret = dev_setup(p, d, p->graph, ctx, &p->opts);
	if (ret) {
		npu_runtime_free(d->rt);
		npu_queue_destroy(d->q);
		if (d->ctx)
			npu__context_put(d->ctx);
		memset(d, 0, sizeof(*d));
		pthread_mutex_unlock(&p->add_lock);
		return ret;
	}
	pthread_mutex_lock(&p->lock);
	p->num_devs++;
	p->active++;
	pthread_mutex_unlock(&p->lock);
	ret = -pthread_create(&d->thread, NULL, worker, d);
	pthread_mutex_lock(&p->lock);
	if (ret) {
		d->state = NPU_GROUP_DEVICE_LEFT;
		d->error = ret;
		p->active--;
		if (!p->active)
			fail_queued(p);
	} else {
		d->thread_live = true;
		/* requests may be waiting for a device */
		pthread_cond_broadcast(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
	if (!ret && index)
		*index = d->index;
	pthread_mutex_unlock(&p->add_lock);
	return ret;
}
