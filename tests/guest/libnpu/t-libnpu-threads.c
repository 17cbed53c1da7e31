// SPDX-License-Identifier: MIT
/*
 * Four threads submit to one context at once: two share a queue, two have
 * queues of their own.  Every job writes a value unique to (thread, job)
 * into its own slot.  Afterwards every fence must have signalled exactly
 * its job with an ok status, every slot must hold exactly its value, job
 * ids must be unique and each queue's timeline points strictly increasing
 * in each thread's submission order.  (White-box: the fence internals are
 * read for ids and points.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "tap.h"

#define THREADS		4
#define JOBS		256
#define RING		8
#define SEC		1000000000ll

static struct npu_context *ctx;
static struct npu_queue *queues[THREADS];

struct worker {
	int id;
	struct npu_queue *q;
	struct npu_buffer *out;
	uint64_t *map;
	struct npu_fence *fences[JOBS];
	int submit_errors;
	int wait_errors;
	int status_errors;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct npu_cmdbuf *ring[RING];
	int i, ret;

	for (i = 0; i < RING; i++)
		if (npu_cmdbuf_create(ctx, 256, &ring[i]))
			TAP_BAIL("thread %d: cmdbuf", w->id);
	for (i = 0; i < JOBS; i++) {
		struct npu_cmdbuf *cb = ring[i % RING];

		/* The slot's previous job must be done before we rewrite it. */
		if (i >= RING && npu_fence_wait(w->fences[i - RING],
						npu_deadline_ns(60 * SEC)))
			w->wait_errors++;
		ret = npu_cmdbuf_reset(cb);
		if (ret) {
			printf("# thread %d job %d: reset %s\n", w->id, i,
			       npu_strerror(ret));
			w->submit_errors++;
			w->fences[i] = NULL;
			continue;
		}
		npu_cmdbuf_write_value(cb, npu_buffer_va(w->out) + 8u * i,
				       ((uint64_t)(w->id + 1) << 32) | (uint64_t)i);
		ret = npu_submit(w->q, cb, &w->out, 1, NULL, 0, &w->fences[i]);
		if (ret) {
			printf("# thread %d job %d: submit %s\n", w->id, i,
			       npu_strerror(ret));
			w->submit_errors++;
			w->fences[i] = NULL;
		}
	}
	for (i = 0; i < JOBS; i++) {
		if (!w->fences[i])
			continue;
		if (npu_fence_wait(w->fences[i], npu_deadline_ns(60 * SEC)))
			w->wait_errors++;
		else if (npu_fence_error(w->fences[i]))
			w->status_errors++;
	}
	for (i = 0; i < RING; i++)
		npu_cmdbuf_destroy(ring[i]);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	static struct worker w[THREADS];
	static uint64_t ids[THREADS * JOBS];
	struct npu_device_info info;
	struct npu_device *dev;
	pthread_t th[THREADS];
	int i, t, ret, bad, n = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = npu_device_open(0, &dev);
	if (ret)
		TAP_BAIL("open: %s", npu_strerror(ret));
	npu_device_get_info(dev, &info, sizeof(info));
	if ((ret = npu_context_create(dev, &ctx)))
		TAP_BAIL("context: %s", npu_strerror(ret));

	/* threads 0 and 1 share queue 0; 2 and 3 get queues 1 and 2 */
	for (t = 0; t < THREADS; t++) {
		w[t].id = t;
		if (t == 1) {
			w[t].q = queues[0];
		} else {
			ret = npu_queue_create(ctx, (t ? t - 1 : 0) % info.num_queues,
					       NPU_PRIORITY_NORMAL, &queues[t]);
			if (ret)
				TAP_BAIL("queue: %s", npu_strerror(ret));
			w[t].q = queues[t];
		}
		if (npu_buffer_alloc(ctx, JOBS * 8, 0, &w[t].out) ||
		    npu_buffer_map(w[t].out, (void **)&w[t].map))
			TAP_BAIL("buffer");
		memset(w[t].map, 0, JOBS * 8);
	}
	for (t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker_main, &w[t]))
			TAP_BAIL("pthread_create");
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);

	for (t = 0; t < THREADS; t++) {
		tap_ok(!w[t].submit_errors, "thread %d: %d jobs submitted", t,
		       JOBS - w[t].submit_errors);
		tap_ok(!w[t].wait_errors, "thread %d: every fence signalled "
		       "(%d wait errors)", t, w[t].wait_errors);
		tap_ok(!w[t].status_errors, "thread %d: every job ok "
		       "(%d failed)", t, w[t].status_errors);
		bad = 0;
		for (i = 0; i < JOBS; i++)
			bad += w[t].map[i] != (((uint64_t)(t + 1) << 32) |
					       (uint64_t)i);
		tap_ok(!bad, "thread %d: every slot holds its own value "
		       "(%d wrong)", t, bad);
	}

	/* No fence stands for two jobs, none for a job of another thread. */
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < JOBS; i++)
			if (w[t].fences[i])
				ids[n++] = w[t].fences[i]->job_id;
	qsort(ids, (size_t)n, sizeof(ids[0]), cmp_u64);
	bad = 0;
	for (i = 1; i < n; i++)
		bad += ids[i] == ids[i - 1];
	tap_ok(n == THREADS * JOBS && !bad && ids[0] != 0,
	       "%d job ids, all distinct and nonzero (%d duplicates)", n, bad);

	bad = 0;
	for (t = 0; t < THREADS; t++)
		for (i = 1; i < JOBS; i++) {
			struct npu_fence *a = w[t].fences[i - 1], *b = w[t].fences[i];

			if (a && b && a->point && b->point <= a->point)
				bad++;
		}
	tap_ok(!bad, "timeline points grow in submission order "
	       "(%s syncobjs, %d out of order)",
	       info.caps & NPU_CAP_TIMELINE_SYNCOBJ ? "timeline" : "binary",
	       bad);

	for (t = 0; t < THREADS; t++) {
		for (i = 0; i < JOBS; i++)
			npu_fence_free(w[t].fences[i]);
		npu_buffer_free(w[t].out);
		npu_queue_destroy(queues[t]);
	}
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return tap_done();
}
