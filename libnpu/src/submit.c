// SPDX-License-Identifier: MIT
/*
 * Queues, submission and fences.
 *
 * A fence is a DRM syncobj of the submitting context.  When the driver
 * supports timeline syncobjs each queue owns one and job n of the queue
 * signals point n, which costs no ioctl per job; otherwise every job gets
 * its own binary syncobj.
 */
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "npu_internal.h"

/* ---- Queues ------------------------------------------------------------- */

static void queue_put(struct npu_queue *q)
{
	if (atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (q->timeline)
		drmSyncobjDestroy(q->ctx->fd, q->syncobj);
	pthread_mutex_destroy(&q->lock);
	npu__context_put(q->ctx);
	free(q);
}

NPU_EXPORT int npu_queue_create(struct npu_context *ctx, uint32_t hw_queue,
				enum npu_priority priority,
				struct npu_queue **out)
{
	uint32_t nq = VNPU_NUM_QUEUES;
	struct npu_queue *q;

	if (!ctx || !out)
		return -EINVAL;
	if (ctx->info.num_queues)
		nq = ctx->info.num_queues;
	if (hw_queue >= nq)
		return -EINVAL;
	if ((unsigned int)priority > NPU_PRIORITY_HIGH)
		return -EINVAL;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->timeline = !!(ctx->info.caps & NPU_CAP_TIMELINE_SYNCOBJ);
	if (q->timeline && drmSyncobjCreate(ctx->fd, 0, &q->syncobj)) {
		int ret = npu__errno();

		free(q);
		return ret;
	}
	atomic_init(&q->refs, 1);
	q->ctx = ctx;
	npu__context_get(ctx);
	q->hw_queue = hw_queue;
	/* Our enum mirrors the uapi's; spelled out so neither can drift. */
	q->priority = priority == NPU_PRIORITY_LOW ? DRM_VNPU_PRIORITY_LOW :
		      priority == NPU_PRIORITY_HIGH ? DRM_VNPU_PRIORITY_HIGH :
		      DRM_VNPU_PRIORITY_NORMAL;
	pthread_mutex_init(&q->lock, NULL);
	*out = q;
	return 0;
}

void npu__queue_get(struct npu_queue *q)
{
	atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
}

void npu__queue_put(struct npu_queue *q)
{
	queue_put(q);
}

NPU_EXPORT void npu_queue_destroy(struct npu_queue *q)
{
	/* Fences of the queue keep its timeline alive. */
	if (q)
		queue_put(q);
}

/* ---- Fences ------------------------------------------------------------- */

static struct npu_fence *fence_new(struct npu_context *ctx)
{
	struct npu_fence *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	atomic_init(&f->refs, 1);
	f->ctx = ctx;
	npu__context_get(ctx);
	return f;
}

void npu__fence_put(struct npu_fence *f)
{
	if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (f->queue)
		queue_put(f->queue);
	else if (f->syncobj)
		drmSyncobjDestroy(f->ctx->fd, f->syncobj);
	npu__context_put(f->ctx);
	free(f);
}

NPU_EXPORT void npu_fence_free(struct npu_fence *f)
{
	if (f)
		npu__fence_put(f);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

NPU_EXPORT int npu_submit(struct npu_queue *q, struct npu_cmdbuf *cb,
			  struct npu_buffer *const *bufs, size_t num_bufs,
			  struct npu_fence *const *waits, size_t num_waits,
			  struct npu_fence **fence)
{
	struct drm_vnpu_sync *syncs = NULL;
	struct drm_vnpu_submit req;
	uint32_t *handles = NULL;
	struct npu_context *ctx;
	struct npu_fence *f = NULL;
	size_t i, n;
	int ret;

	if (!q || !cb || !cb->ctx || !cb->size ||
	    (num_bufs && !bufs) || (num_waits && !waits))
		return -EINVAL;
	ctx = q->ctx;
	if (cb->ctx != ctx)
		return -EXDEV;
	if (num_bufs >= NPU_SUBMIT_MAX_ENTRIES || num_waits > NPU_SUBMIT_MAX_ENTRIES)
		return -E2BIG;

	handles = malloc((num_bufs + 1) * sizeof(*handles));
	if (num_waits)
		syncs = calloc(num_waits, sizeof(*syncs));
	if (!handles || (num_waits && !syncs)) {
		ret = -ENOMEM;
		goto out;
	}
	handles[0] = cb->bo->handle;
	for (i = 0; i < num_bufs; i++) {
		if (!bufs[i]) {
			ret = -EINVAL;
			goto out;
		}
		if (bufs[i]->ctx != ctx) {
			ret = -EXDEV;
			goto out;
		}
		handles[i + 1] = bufs[i]->handle;
	}
	/* The kernel locks each listed BO once; list every handle once. */
	qsort(handles, num_bufs + 1, sizeof(*handles), cmp_u32);
	for (i = 1, n = 1; i < num_bufs + 1; i++)
		if (handles[i] != handles[n - 1])
			handles[n++] = handles[i];

	for (i = 0; i < num_waits; i++) {
		if (!waits[i]) {
			ret = -EINVAL;
			goto out;
		}
		if (waits[i]->ctx != ctx) {
			ret = -EXDEV;
			goto out;
		}
		syncs[i].handle = waits[i]->syncobj;
		syncs[i].point = waits[i]->point;
	}

	/* Room to track this job before it exists: nothing to undo after. */
	ret = npu__cmdbuf_track_prepare(cb);
	if (ret)
		goto out;
	f = fence_new(ctx);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	if (!q->timeline && drmSyncobjCreate(ctx->fd, 0, &f->syncobj)) {
		ret = npu__errno();
		goto out;
	}

	memset(&req, 0, sizeof(req));
	req.cmd_va = cb->bo->va;
	req.cmd_size = (uint32_t)cb->size;
	req.queue = q->hw_queue;
	req.priority = q->priority;
	req.bo_handles = (uintptr_t)handles;
	req.bo_count = (uint32_t)n;
	req.in_syncs = (uintptr_t)syncs;
	req.in_sync_count = (uint32_t)num_waits;

	pthread_mutex_lock(&q->lock);
	if (q->timeline) {
		req.out_syncobj = q->syncobj;
		req.out_point = q->last_point + 1;
	} else {
		req.out_syncobj = f->syncobj;
	}
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_SUBMIT, &req)) {
		ret = npu__errno();
		pthread_mutex_unlock(&q->lock);
		goto out;
	}
	if (q->timeline) {
		q->last_point = req.out_point;
		f->syncobj = q->syncobj;
		f->point = req.out_point;
		f->queue = q;
		atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&q->lock);
	f->job_id = req.job_id;

	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	cb->inflight[cb->num_inflight++] = f;
	if (fence) {
		*fence = f;
		f = NULL;
	}
	ret = 0;
out:
	if (f)
		npu__fence_put(f);
	free(handles);
	free(syncs);
	return ret;
}

static int fences_wait(struct npu_context *ctx, uint32_t *handles,
		       uint64_t *points, size_t count, bool wait_all,
		       int64_t deadline_ns, uint32_t *first)
{
	unsigned int flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
	int ret;

	if (wait_all)
		flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	/* Timeline waits need the driver feature; points are 0 otherwise. */
	if (ctx->info.caps & NPU_CAP_TIMELINE_SYNCOBJ)
		ret = drmSyncobjTimelineWait(ctx->fd, handles, points,
					     (unsigned int)count, deadline_ns,
					     flags, first);
	else
		ret = drmSyncobjWait(ctx->fd, handles, (unsigned int)count,
				     deadline_ns, flags, first);
	/*
	 * libdrm returns -errno here, unlike its other syncobj calls.  The
	 * kernel says -ETIME for a passed deadline; the API says -ETIMEDOUT.
	 */
	if (ret == -ETIME)
		return -ETIMEDOUT;
	return ret < 0 ? ret : 0;
}

NPU_EXPORT int npu_fence_wait(struct npu_fence *f, int64_t deadline_ns)
{
	struct drm_vnpu_wait w;
	uint32_t first;

	if (!f)
		return -EINVAL;
	/*
	 * A job of ours: WAIT for the job itself (the driver picks its
	 * hardware or scheduler fence).  The timeline syncobj would wake us
	 * through the point's fence chain, which signals from an irq_work,
	 * one interrupt later (see
	 * Documentation/accel/vnpu/latency.rst).  The driver keeps the last
	 * VNPU_JOB_RECORDS jobs; an older one is waited for by its syncobj.
	 */
	if (f->job_id) {
		memset(&w, 0, sizeof(w));
		w.type = DRM_VNPU_WAIT_JOB;
		w.id = f->job_id;
		w.timeout_ns = deadline_ns;
		if (!drmIoctl(f->ctx->fd, DRM_IOCTL_VNPU_WAIT, &w))
			return 0;
		/* The driver's -ETIME is the API's -ETIMEDOUT, as below. */
		if (errno == ETIME)
			return -ETIMEDOUT;
		if (errno != ENOENT)
			return npu__errno();
	}
	return fences_wait(f->ctx, &f->syncobj, &f->point, 1, true,
			   deadline_ns, &first);
}

NPU_EXPORT int npu_fence_wait_many(struct npu_fence *const *fences,
				   size_t count, bool wait_all,
				   int64_t deadline_ns, size_t *first)
{
	uint32_t *handles, idx = 0;
	uint64_t *points;
	size_t i;
	int ret;

	if (!fences || !count || count > NPU_SUBMIT_MAX_ENTRIES)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (!fences[i])
			return -EINVAL;
		if (fences[i]->ctx != fences[0]->ctx)
			return -EXDEV;
	}
	handles = malloc(count * sizeof(*handles));
	points = malloc(count * sizeof(*points));
	if (!handles || !points) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		handles[i] = fences[i]->syncobj;
		points[i] = fences[i]->point;
	}
	ret = fences_wait(fences[0]->ctx, handles, points, count, wait_all,
			  deadline_ns, &idx);
	if (!ret && first && !wait_all)
		*first = idx;
out:
	free(handles);
	free(points);
	return ret;
}

NPU_EXPORT int npu_fence_is_signaled(struct npu_fence *f)
{
	int ret;

	if (!f)
		return -EINVAL;
	ret = npu_fence_wait(f, 0);
	if (ret == -ETIMEDOUT)
		return 0;
	return ret ? ret : 1;
}

NPU_EXPORT int npu_fence_export_sync_file(struct npu_fence *f, int *fd)
{
	uint32_t tmp;
	int ret, out;

	if (!f || !fd)
		return -EINVAL;
	if (!f->point) {
		if (drmSyncobjExportSyncFile(f->ctx->fd, f->syncobj, &out))
			return npu__errno();
		*fd = out;
		return 0;
	}
	/* A sync_file holds one dma_fence: lift the point into a binary syncobj. */
	if (drmSyncobjCreate(f->ctx->fd, 0, &tmp))
		return npu__errno();
	ret = 0;
	if (drmSyncobjTransfer(f->ctx->fd, tmp, 0, f->syncobj, f->point, 0) ||
	    drmSyncobjExportSyncFile(f->ctx->fd, tmp, &out))
		ret = npu__errno();
	drmSyncobjDestroy(f->ctx->fd, tmp);
	if (!ret)
		*fd = out;
	return ret;
}

NPU_EXPORT int npu_fence_import_sync_file(struct npu_context *ctx, int fd,
					  struct npu_fence **out)
{
	struct npu_fence *f;
	int ret;

	if (!ctx || fd < 0 || !out)
		return -EINVAL;
	f = fence_new(ctx);
	if (!f)
		return -ENOMEM;
	if (drmSyncobjCreate(ctx->fd, 0, &f->syncobj)) {
		ret = npu__errno();
		goto err;
	}
	if (drmSyncobjImportSyncFile(ctx->fd, f->syncobj, fd)) {
		ret = npu__errno();
		goto err;
	}
	*out = f;
	return 0;
err:
	npu__fence_put(f);
	return ret;
}

/* The library's state for a uapi state, or -1 for one it does not know. */
static int map_state(uint32_t s)
{
	switch (s) {
	case DRM_VNPU_JOB_PENDING: return NPU_JOB_PENDING;
	case DRM_VNPU_JOB_OK: return NPU_JOB_OK;
	case DRM_VNPU_JOB_MMU_FAULT: return NPU_JOB_MMU_FAULT;
	case DRM_VNPU_JOB_CMD_ERROR: return NPU_JOB_CMD_ERROR;
	case DRM_VNPU_JOB_TIMEOUT: return NPU_JOB_TIMEOUT;
	case DRM_VNPU_JOB_ABORTED: return NPU_JOB_ABORTED;
	case DRM_VNPU_JOB_DEVICE_LOST: return NPU_JOB_DEVICE_LOST;
	case DRM_VNPU_JOB_DMA_ERROR: return NPU_JOB_DMA_ERROR;
	}
	return -1;
}

NPU_EXPORT int npu_fence_status(struct npu_fence *f,
				struct npu_job_status *status)
{
	struct npu_job_status st;
	struct drm_vnpu_job_status js;
	int state;

	if (!f || !status || !status->size)
		return -EINVAL;
	if (!f->job_id)
		return -ENODATA;
	memset(&js, 0, sizeof(js));
	js.job_id = f->job_id;
	if (drmIoctl(f->ctx->fd, DRM_IOCTL_VNPU_JOB_STATUS, &js))
		return npu__errno();
	state = map_state(js.state);
	/* A state this library does not know yet: say so rather than guess. */
	if (state < 0)
		return -EPROTO;
	memset(&st, 0, sizeof(st));
	st.state = (enum npu_job_state)state;
	st.fault_write = !!(js.fault_flags & DRM_VNPU_FAULT_WRITE);
	st.fault_va = js.fault_va;
	st.cycles = js.cycles;
	st.duration_ns = js.duration_ns;
	st.size = status->size < sizeof(st) ? status->size : sizeof(st);
	npu__struct_out(status, status->size, &st, sizeof(st));
	return 0;
}

NPU_EXPORT int npu_fence_error(struct npu_fence *f)
{
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	int ret;

	ret = npu_fence_status(f, &st);
	if (ret)
		return ret;
	return npu__job_error(st.state);
}
