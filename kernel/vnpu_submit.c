// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * SUBMIT, WAIT and JOB_STATUS.  SUBMIT builds a job from its arguments
 * (BOs looked up and mapped, syncobj in-fences and the BOs' implicit
 * fences as dependencies, the out-syncobj given the finished fence),
 * records it and hands it to its queue's scheduler.  The file's job
 * records keep each outcome for WAIT and JOB_STATUS.
 */

#include <linux/bsearch.h>
#include <linux/capability.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>

#include "vnpu_drv.h"
#include "vnpu_job.h"

/* Caller holds fpriv->rec_lock. */
struct vnpu_job_record *vnpu_job_record(struct vnpu_file_priv *fpriv,
					u64 id)
{
	struct vnpu_job_record *rec;

	lockdep_assert_held(&fpriv->rec_lock);
	/* Allocated by the file's first SUBMIT. */
	if (!fpriv->records)
		return NULL;
	rec = &fpriv->records[id % VNPU_JOB_RECORDS];
	return rec->id == id ? rec : NULL;
}

/* Set the outcome of a job that has none yet. */
void vnpu_job_set_state(struct vnpu_job *job, u32 state)
{
	struct vnpu_file_priv *fpriv = job->fpriv;
	struct vnpu_job_record *rec;
	unsigned long flags;

	spin_lock_irqsave(&fpriv->rec_lock, flags);
	rec = vnpu_job_record(fpriv, job->id);
	if (rec && rec->state == DRM_VNPU_JOB_PENDING)
		rec->state = state;
	spin_unlock_irqrestore(&fpriv->rec_lock, flags);
}

/*
 * Undo SUBMIT: from its error path, and from vnpu_release_work() once
 * drm_sched and the hardware are done with the job.
 */
void vnpu_job_release(struct vnpu_job *job)
{
	struct vnpu_device *vdev = job->vdev;
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		if (job->maps && job->maps[i])
			vnpu_mapping_put(job->maps[i]);
		if (job->bos && job->bos[i])
			drm_gem_object_put(job->bos[i]);
	}
	kvfree(job->maps);
	kvfree(job->bos);
	for (i = 0; i < job->dep_count; i++)
		dma_fence_put(job->deps[i]);
	kvfree(job->deps);
	dma_fence_put(job->hw_fence);
	kfree(job->hw_fence_mem);
	if (job->fpriv)
		vnpu_file_priv_put(job->fpriv);
	if (job->pm_ref)
		vnpu_job_rpm_put(vdev);
	kfree(job);
	if (atomic_dec_and_test(&vdev->live_jobs))
		wake_up_all(&vdev->jobs_wq);
}

static int vnpu_submit_in_syncs(struct vnpu_job *job, struct drm_file *file,
				const struct drm_vnpu_submit *args)
{
	struct drm_vnpu_sync *syncs;
	u32 i;
	int ret = 0;

	if (!args->in_sync_count)
		return 0;
	syncs = kvmalloc_array(args->in_sync_count, sizeof(*syncs), GFP_KERNEL);
	if (!syncs)
		return -ENOMEM;
	if (copy_from_user(syncs, u64_to_user_ptr(args->in_syncs),
			   array_size(args->in_sync_count, sizeof(*syncs)))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < args->in_sync_count; i++) {
		ret = vnpu_check_sync(&syncs[i]);
		if (ret)
			goto out;
	}
	job->deps = kvcalloc(args->in_sync_count, sizeof(*job->deps),
			     GFP_KERNEL);
	if (!job->deps) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < args->in_sync_count; i++) {
		struct dma_fence *fence;

		ret = drm_syncobj_find_fence(file, syncs[i].handle,
					     syncs[i].point, 0, &fence);
		if (ret)
			goto out;
		ret = vnpu_job_add_dep(job, fence);
		if (ret)
			goto out;
	}
out:
	kvfree(syncs);
	return ret;
}

static int vnpu_obj_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct drm_gem_object * const *)a;
	uintptr_t y = (uintptr_t)*(struct drm_gem_object * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * A BO listed twice is listed once: sort the looked-up objects (their
 * order does not matter) and drop the duplicates, which would otherwise
 * make locking the reservations fail with -EALREADY.
 */
static void vnpu_submit_dedup_bos(struct vnpu_job *job)
{
	u32 i, n = 0;

	sort(job->bos, job->bo_count, sizeof(*job->bos), vnpu_obj_cmp, NULL);
	for (i = 0; i < job->bo_count; i++) {
		if (n && job->bos[n - 1] == job->bos[i])
			drm_gem_object_put(job->bos[i]);
		else
			job->bos[n++] = job->bos[i];
	}
	for (i = n; i < job->bo_count; i++)
		job->bos[i] = NULL;
	job->bo_count = n;
}

/*
 * A GEM_CLOSE of one of @handles that ran after the lookup dropped this
 * file's mapping of the BO, and vnpu_bo_map() then made a new one, at
 * another VA than the caller's commands use.  DRM clears a handle before
 * it calls &drm_gem_object_funcs.close, so a second lookup tells: the
 * SUBMIT fails as if the handle had been closed first.  A close after
 * this check leaves the mapping the job holds, and its VA, alone.
 */
static int vnpu_submit_bos_recheck(struct vnpu_job *job, struct drm_file *file,
				   const u32 *handles, u32 count)
{
	struct drm_gem_object *obj;
	bool held;
	u32 i;

	for (i = 0; i < count; i++) {
		obj = drm_gem_object_lookup(file, handles[i]);
		held = obj && bsearch(&obj, job->bos, job->bo_count,
				      sizeof(*job->bos), vnpu_obj_cmp);
		drm_gem_object_put(obj);
		if (!held)
			return -ENOENT;
	}
	return 0;
}

static int vnpu_submit_bos(struct vnpu_job *job, struct drm_file *file,
			   const struct drm_vnpu_submit *args,
			   struct vnpu_as *as)
{
	u32 *handles;
	u32 i;
	int ret;

	if (!args->bo_count)
		return 0;
	handles = kvmalloc_array(args->bo_count, sizeof(*handles), GFP_KERNEL);
	job->bos = kvcalloc(args->bo_count, sizeof(*job->bos), GFP_KERNEL);
	if (!handles || !job->bos) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(handles, u64_to_user_ptr(args->bo_handles),
			   array_size(args->bo_count, sizeof(*handles)))) {
		ret = -EFAULT;
		goto out;
	}
	job->bo_count = args->bo_count;
	for (i = 0; i < args->bo_count; i++) {
		job->bos[i] = drm_gem_object_lookup(file, handles[i]);
		if (!job->bos[i]) {
			ret = -ENOENT;
			goto out;
		}
	}
	vnpu_submit_dedup_bos(job);

	job->maps = kvcalloc(job->bo_count, sizeof(*job->maps), GFP_KERNEL);
	if (!job->maps) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < job->bo_count; i++) {
		struct vnpu_mapping *map;

		/* Also maps an import that was never passed to BO_INFO. */
		map = vnpu_bo_map(to_vnpu_bo(job->bos[i]), as);
		if (IS_ERR(map)) {
			ret = PTR_ERR(map);
			goto out;
		}
		job->maps[i] = map;
	}
	ret = vnpu_submit_bos_recheck(job, file, handles, args->bo_count);
out:
	kvfree(handles);
	return ret;
}

/* Record the job before it can run, so no outcome is ever lost. */
static void vnpu_job_record_new(struct vnpu_job *job, struct dma_fence *finished)
{
	struct vnpu_file_priv *fpriv = job->fpriv;
	struct vnpu_job_record *rec;
	struct dma_fence *old, *old_hw;
	unsigned long flags;

	spin_lock_irqsave(&fpriv->rec_lock, flags);
	job->id = fpriv->next_job_id++;
	rec = &fpriv->records[job->id % VNPU_JOB_RECORDS];
	old = rec->fence;
	old_hw = rec->hw_fence;
	*rec = (struct vnpu_job_record) {
		.id = job->id,
		.state = DRM_VNPU_JOB_PENDING,
		.fence = dma_fence_get(finished),
	};
	spin_unlock_irqrestore(&fpriv->rec_lock, flags);
	dma_fence_put(old);
	dma_fence_put(old_hw);
}

static void vnpu_submit_unreserve(struct vnpu_file_priv *fpriv)
{
	atomic_dec(&fpriv->unfinished);
	wake_up(&fpriv->unfinished_wq);
}

/*
 * Count a new job towards the file's %VNPU_MAX_UNFINISHED; at the limit,
 * wait for one to finish, or fail with -EAGAIN on a file opened with
 * O_NONBLOCK.  Blocking is the default because libdrm's drmIoctl()
 * retries -EAGAIN in a busy loop.  Called outside drm_dev_enter(), so a
 * wait never holds up an unplug, which is what ends the jobs.
 */
static int vnpu_submit_reserve(struct vnpu_file_priv *fpriv, bool nonblock)
{
	int ret;

	while (!atomic_add_unless(&fpriv->unfinished, 1, VNPU_MAX_UNFINISHED)) {
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(fpriv->unfinished_wq,
					       atomic_read(&fpriv->unfinished) <
					       VNPU_MAX_UNFINISHED);
		if (ret)
			return ret;
	}
	return 0;
}

/* The job's finished fence signalled: it no longer counts. */
static void vnpu_job_finished_cb(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	struct vnpu_job *job = container_of(cb, struct vnpu_job, finished_cb);

	vnpu_submit_unreserve(job->fpriv);
}

/**
 * vnpu_ioctl_submit() - DRM_IOCTL_VNPU_SUBMIT
 * @dev: DRM device
 * @data: &struct drm_vnpu_submit
 * @file: caller
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vnpu_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(dev);
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct drm_vnpu_submit *args = data;
	struct drm_syncobj *out_sync = NULL;
	struct dma_fence_chain *chain = NULL;
	struct ww_acquire_ctx acquire_ctx;
	struct dma_fence *finished;
	struct vnpu_job *job;
	struct vnpu_as *as;
	bool inited = false;
	int ret, idx;
	u32 i;

	ret = vnpu_check_submit(args, vdev->num_queues, VNPU_CMD_MAX_BUFFER);
	if (ret)
		return ret;
	/*
	 * HIGH jobs go ahead of everyone else's on the device, so, as for
	 * a nice value below zero, that takes CAP_SYS_NICE (amdgpu and
	 * panthor gate their high priorities the same way).
	 */
	if (args->priority == DRM_VNPU_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EACCES;
	if (READ_ONCE(fpriv->banned))
		return -ECANCELED;
	/*
	 * Bound what one file can queue: drm_sched's entity queues are
	 * unbounded, and every job pins memory.  The count drops when a
	 * job's finished fence signals.
	 */
	ret = vnpu_submit_reserve(fpriv, file->filp->f_flags & O_NONBLOCK);
	if (ret)
		return ret;
	if (!drm_dev_enter(dev, &idx)) {
		vnpu_submit_unreserve(fpriv);
		return -ENODEV;
	}
	/* A device that did not come back from a reset takes no more work. */
	if (READ_ONCE(vdev->lost)) {
		ret = -ENODEV;
		goto out_count;
	}
	ret = vnpu_file_records(fpriv);
	if (ret)
		goto out_count;
	as = vnpu_file_as(fpriv);
	if (IS_ERR(as)) {
		ret = PTR_ERR(as);
		goto out_count;
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto out_count;
	}
	atomic_inc(&vdev->live_jobs);
	job->vdev = vdev;
	/* The device stays in D0 while the job exists; see vnpu_drv.c. */
	ret = vnpu_job_rpm_get(vdev);
	if (ret)
		goto out_job;
	job->pm_ref = true;
	job->q = &vdev->queues[args->queue];
	job->cmd_va = args->cmd_va;
	job->cmd_size = args->cmd_size;
	INIT_LIST_HEAD(&job->link);
	/* run_job is in the signalling path and must not allocate. */
	job->hw_fence_mem = kzalloc(sizeof(*job->hw_fence_mem), GFP_KERNEL);
	if (!job->hw_fence_mem) {
		ret = -ENOMEM;
		goto out_job;
	}

	ret = vnpu_submit_bos(job, file, args, as);
	if (ret)
		goto out_job;

	if (args->out_syncobj) {
		out_sync = drm_syncobj_find(file, args->out_syncobj);
		if (!out_sync) {
			ret = -ENOENT;
			goto out_job;
		}
		if (args->out_point) {
			chain = dma_fence_chain_alloc();
			if (!chain) {
				ret = -ENOMEM;
				goto out_job;
			}
		}
	}

#if VNPU_SCHED_JOB_INIT_CLIENT_ID
	ret = drm_sched_job_init(&job->base,
				 &fpriv->entities[args->queue][args->priority],
				 1, fpriv, file->client_id);
#else
	ret = drm_sched_job_init(&job->base,
				 &fpriv->entities[args->queue][args->priority],
				 1, fpriv);
#endif
	if (ret)
		goto out_job;
	inited = true;

	ret = vnpu_submit_in_syncs(job, file, args);
	if (ret)
		goto out_job;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &acquire_ctx);
	if (ret)
		goto out_job;
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret)
			goto out_unlock;
		/* Written as a writer: wait for readers and writers alike. */
		ret = drm_sched_job_add_implicit_dependencies(&job->base,
							      job->bos[i], true);
		if (ret)
			goto out_unlock;
	}

	mutex_lock(&vdev->sched_lock);
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished,
				   DMA_RESV_USAGE_WRITE);
	kref_get(&fpriv->refcount);
	job->fpriv = fpriv;
	/* Not signalled yet: the job was only armed. */
	if (dma_fence_add_callback(finished, &job->finished_cb,
				   vnpu_job_finished_cb))
		vnpu_submit_unreserve(fpriv);
	vnpu_job_record_new(job, finished);
	args->job_id = job->id;
	/*
	 * The fences are published, so the locks can go; after the push the
	 * job may already be freed and job->bos with it.
	 */
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire_ctx);
	vnpu_job_run_direct(job);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&vdev->sched_lock);

	if (out_sync) {
		if (chain)
			drm_syncobj_add_point(out_sync, chain, finished,
					      args->out_point);
		else
			drm_syncobj_replace_fence(out_sync, finished);
		drm_syncobj_put(out_sync);
	}
	dma_fence_put(finished);
	drm_dev_exit(idx);
	return 0;

out_unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire_ctx);
out_job:
	if (inited)
		drm_sched_job_cleanup(&job->base);
	vnpu_job_release(job);
	dma_fence_chain_free(chain);
	if (out_sync)
		drm_syncobj_put(out_sync);
out_count:
	vnpu_submit_unreserve(fpriv);
	drm_dev_exit(idx);
	return ret;
}

/**
 * vnpu_ioctl_wait() - DRM_IOCTL_VNPU_WAIT
 * @dev: DRM device
 * @data: &struct drm_vnpu_wait
 * @file: caller
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vnpu_ioctl_wait(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct drm_vnpu_wait *args = data;
	long timeout, ret;

	ret = vnpu_check_wait(args);
	if (ret)
		return ret;
	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);

	if (args->type == DRM_VNPU_WAIT_BO) {
		struct drm_gem_object *obj;

		if (args->id > U32_MAX)
			return -ENOENT;
		obj = drm_gem_object_lookup(file, args->id);
		if (!obj)
			return -ENOENT;
		ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ,
					    true, timeout);
		drm_gem_object_put(obj);
	} else {
		struct vnpu_job_record *rec;
		struct dma_fence *fence = NULL;

		spin_lock_irq(&fpriv->rec_lock);
		rec = args->id ? vnpu_job_record(fpriv, args->id) : NULL;
		/*
		 * Its outcome is recorded before the hardware fence signals,
		 * and its BOs are final: no need to wait for the scheduler's
		 * worker to notice (latency.rst).
		 */
		if (rec)
			fence = dma_fence_get(rec->hw_fence ?: rec->fence);
		spin_unlock_irq(&fpriv->rec_lock);
		if (!rec)
			return -ENOENT;
		ret = dma_fence_wait_timeout(fence, true, timeout);
		dma_fence_put(fence);
	}
	if (ret == 0)
		return -ETIME;
	return ret < 0 ? ret : 0;
}

/**
 * vnpu_ioctl_job_status() - DRM_IOCTL_VNPU_JOB_STATUS
 * @dev: DRM device
 * @data: &struct drm_vnpu_job_status
 * @file: caller
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vnpu_ioctl_job_status(struct drm_device *dev, void *data,
			  struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct drm_vnpu_job_status *args = data;
	struct vnpu_job_record *rec;
	int ret;

	ret = vnpu_check_job_status(args);
	if (ret)
		return ret;

	spin_lock_irq(&fpriv->rec_lock);
	rec = args->job_id ? vnpu_job_record(fpriv, args->job_id) : NULL;
	if (rec) {
		args->state = rec->state;
		args->fault_flags = rec->fault_flags;
		args->fault_va = rec->fault_va;
		args->cycles = rec->cycles;
		args->duration_ns = rec->duration_ns;
	}
	spin_unlock_irq(&fpriv->rec_lock);
	return rec ? 0 : -ENOENT;
}
