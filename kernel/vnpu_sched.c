// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The drm_sched backend.  One drm_sched scheduler feeds each hardware
 * queue; every file has one entity per queue and priority.  A job becomes
 * runnable once its syncobj in-fences and the implicit fences of its BOs
 * signalled; run_job writes it to the ring (vnpu_ring.c), a job that
 * times out resets the device (vnpu_reset.c), and free_job leaves the
 * release of its references to a worker.
 */

#include <linux/dma-fence-array.h>
#include <linux/dma-fence-chain.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vnpu_drv.h"
#include "vnpu_job.h"

#define to_vnpu_job(j) container_of(j, struct vnpu_job, base)

/*
 * drm_sched in 6.12 runs a job whose dependency failed as if it had
 * succeeded.  An explicit in-fence (syncobj) that signalled with an error
 * aborts the job instead.  Implicit BO fences do not: a later job may well
 * overwrite what a failed one left behind.  An in-fence on the same
 * scheduler may not have finished yet (drm_sched only waits for it to be
 * scheduled, the ring keeps the order), and is not caught here.
 */
bool vnpu_job_dep_failed(struct vnpu_job *job)
{
	u32 i;

	for (i = 0; i < job->dep_count; i++)
		if (dma_fence_get_status(job->deps[i]) < 0)
			return true;
	return false;
}

/*
 * drm_sched is done with @job's way to the ring: run_job ran, or free_job
 * for a job killed before that.  Caller holds q->lock.  Returns whether
 * this call counted it out (of &vnpu_queue.unrun or, for a job SUBMIT
 * wrote to the ring, &vnpu_queue.direct_unseen).
 */
static bool vnpu_job_seen_locked(struct vnpu_job *job)
{
	lockdep_assert_held(&job->q->lock);
	if (job->seen)
		return false;
	job->seen = true;
	if (job->direct)
		job->q->direct_unseen--;
	else
		job->q->unrun--;
	return true;
}

static bool vnpu_job_seen(struct vnpu_job *job)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&job->q->lock, flags);
	ret = vnpu_job_seen_locked(job);
	spin_unlock_irqrestore(&job->q->lock, flags);
	return ret;
}

/*
 * run_job is in the fence signalling path: the scheduler's finished
 * fences wait on it.  So it neither allocates (the hardware fence was
 * allocated at SUBMIT) nor takes any lock that is held around an
 * allocation; the annotation lets lockdep check that.  drm_sched calls it
 * once per job: recovery puts unstarted jobs back on the ring itself and
 * never asks the scheduler to run a job again.  A job SUBMIT already
 * wrote to the ring (vnpu_job_run_direct()) is only handed over: it is
 * on the hardware, whatever happened since, and its hardware fence says
 * how it ended.
 */
static struct dma_fence *vnpu_job_run(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);
	struct vnpu_queue *q = job->q;
	struct vnpu_device *vdev = job->vdev;
	struct dma_fence *ret;
	unsigned long flags;
	bool cookie;
	int idx;

	if (job->direct) {
		vnpu_job_seen(job);
		/* The reference vnpu_job_init_hw_fence() kept for drm_sched. */
		return job->hw_fence;
	}
	/* Killed, or its file was banned or a dependency failed meanwhile. */
	if (unlikely(sched_job->s_fence->finished.error)) {
		vnpu_job_seen(job);
		vnpu_job_set_state(job, DRM_VNPU_JOB_ABORTED);
		return NULL;
	}
	if (unlikely(READ_ONCE(job->fpriv->banned) || vnpu_job_dep_failed(job))) {
		vnpu_job_seen(job);
		vnpu_job_set_state(job, DRM_VNPU_JOB_ABORTED);
		return ERR_PTR(-ECANCELED);
	}
	if (!drm_dev_enter(&vdev->drm, &idx)) {
		vnpu_job_seen(job);
		vnpu_job_set_state(job, DRM_VNPU_JOB_DEVICE_LOST);
		return ERR_PTR(-ENODEV);
	}
	cookie = dma_fence_begin_signalling();

	/* Recovery stops this work item while it runs, so this is stable. */
	if (unlikely(READ_ONCE(vdev->lost)) || WARN_ON(!job->hw_fence_mem)) {
		vnpu_job_seen(job);
		vnpu_job_set_state(job, DRM_VNPU_JOB_DEVICE_LOST);
		ret = ERR_PTR(-ENODEV);
		goto out;
	}

	/* Counted out with the push, so no direct SUBMIT can get between. */
	spin_lock_irqsave(&q->lock, flags);
	vnpu_job_seen_locked(job);
	ret = vnpu_job_init_hw_fence(job);
	vnpu_ring_push_job(q, job);
	spin_unlock_irqrestore(&q->lock, flags);
out:
	dma_fence_end_signalling(cookie);
	drm_dev_exit(idx);
	return ret;
}

/*
 * drm_sched took the timed-out job off its pending list; put it back at
 * the head (it is the oldest) so the scheduler frees it once its finished
 * fence signalled, and kick the free worker, which looked for finished
 * jobs when the fence signalled and the job was not on the list.
 */
void vnpu_sched_requeue(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	drm_sched_wqueue_start(sched);
}

/* The queue stopped on a ring or completion DMA error. */
static bool vnpu_queue_halted(struct vnpu_queue *q)
{
	u32 st = vnpu_qread(q, VNPU_QREG_STATUS);

	return st != U32_MAX && (st & VNPU_QSTATUS_ERROR);
}

/*
 * In the fence signalling path like run_job: no allocation, and only
 * locks never held around one (reset_lock, q->lock, rec_lock).
 * vnpu_reset() annotates itself once the schedulers' work items are
 * stopped.
 */
static enum drm_gpu_sched_stat vnpu_job_timedout(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);
	struct vnpu_device *vdev = job->vdev;
	struct vnpu_queue *q = job->q;
	unsigned long flags;
	bool hung, cookie;
	int idx;

	if (!drm_dev_enter(&vdev->drm, &idx)) {
		vnpu_sched_requeue(sched_job);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}

	cookie = dma_fence_begin_signalling();
	/* A completion whose interrupt was lost still counts. */
	vnpu_queue_complete(q);

	spin_lock_irqsave(&q->lock, flags);
	hung = job->hw_fence && !job->done;
	spin_unlock_irqrestore(&q->lock, flags);
	dma_fence_end_signalling(cookie);

	if (!hung) {
		/*
		 * Spurious: the job finished (its interrupt was lost or late),
		 * or it never reached the ring.  Everything else on the ring
		 * is untouched and gets a fresh timeout when this returns.
		 */
		vnpu_sched_requeue(sched_job);
	} else if (vnpu_queue_halted(q)) {
		/*
		 * The device could not read the ring or write a record (see
		 * the error interrupt): not the job's doing, so no TIMEOUT and
		 * no ban.  The job at the head ends DMA_ERROR.
		 */
		drm_warn(&vdev->drm, "queue %u halted at job %llu, resetting\n",
			 q->idx, job->id);
		job->ring_error = true;
		vnpu_reset(vdev, job);
	} else {
		drm_warn(&vdev->drm, "job %llu on queue %u timed out, resetting\n",
			 job->id, q->idx);
		vnpu_reset(vdev, job);
	}
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/*
 * Dropping a job's references can unmap (as->lock, the TLB), free BOs
 * (their reservation objects) and address spaces: locks that are held
 * around allocations.  free_job is waited for by recovery, so it only
 * queues the job, and this worker, outside every signalling path, does
 * the rest.
 */
static void vnpu_release_work(struct work_struct *work)
{
	struct vnpu_device *vdev = container_of(work, struct vnpu_device,
						release_work);
	struct llist_node *list = llist_del_all(&vdev->release_list);
	struct vnpu_job *job, *tmp;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(job, tmp, list, release)
		vnpu_job_release(job);
}

static void vnpu_job_queue_release(struct vnpu_job *job)
{
	struct vnpu_device *vdev = job->vdev;

	if (llist_add(&job->release, &vdev->release_list))
		queue_work(system_unbound_wq, &vdev->release_work);
}

static void vnpu_job_hw_done_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	vnpu_job_queue_release(container_of(cb, struct vnpu_job, hw_cb));
}

static void vnpu_job_free(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);

	/* Killed with its entity before it ever ran. */
	vnpu_job_set_state(job, DRM_VNPU_JOB_ABORTED);
	drm_sched_job_cleanup(sched_job);
	if (vnpu_job_seen(job) && job->direct) {
		/*
		 * Killed before run_job, yet SUBMIT put it on the ring: drop
		 * the reference run_job would have handed over, and keep the
		 * job, which the ring tracking points at, until the hardware
		 * (or a reset, or the removal) is done with it.
		 */
		dma_fence_put(job->hw_fence);
		if (!dma_fence_add_callback(job->hw_fence, &job->hw_cb,
					    vnpu_job_hw_done_cb))
			return;
	}
	vnpu_job_queue_release(job);
}

static const struct drm_sched_backend_ops vnpu_sched_ops = {
	.run_job = vnpu_job_run,
	.timedout_job = vnpu_job_timedout,
	.free_job = vnpu_job_free,
};

static void vnpu_sched_fini(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	unsigned int i;

	/*
	 * Files are closed, and remove() failed whatever was on the
	 * hardware; let the scheduler free those jobs before it goes.  A
	 * job still alive references its scheduler, which lives in this
	 * structure: wait for it however long it takes, never free under
	 * it.  The periodic wake-ups keep the hung-task detector quiet and
	 * say what is being waited for.
	 */
	while (!wait_event_timeout(vdev->jobs_wq, !atomic_read(&vdev->live_jobs),
				   msecs_to_jiffies(10 * MSEC_PER_SEC)))
		drm_err(drm, "%d jobs still alive at teardown, waiting\n",
			atomic_read(&vdev->live_jobs));
	/* The last release may still be returning from the worker. */
	flush_work(&vdev->release_work);
	for (i = 0; i < vdev->num_queues; i++) {
		drm_sched_fini(&vdev->queues[i].sched);
		destroy_workqueue(vdev->queues[i].submit_wq);
	}
	destroy_workqueue(vdev->reset_wq);
}

/**
 * vnpu_sched_init() - create one scheduler per hardware queue
 * @vdev: device with allocated rings
 *
 * Return: 0 or a negative errno.
 */
int vnpu_sched_init(struct vnpu_device *vdev)
{
	long timeout = msecs_to_jiffies(vdev->timeout_ms);
	unsigned int i;
	int ret;

	init_llist_head(&vdev->release_list);
	INIT_WORK(&vdev->release_work, vnpu_release_work);
	vdev->reset_wq = alloc_ordered_workqueue("vnpu-reset", 0);
	if (!vdev->reset_wq)
		return -ENOMEM;

	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];
#if VNPU_SCHED_INIT_ARGS
		struct drm_sched_init_args args = {
			.ops = &vnpu_sched_ops,
			.num_rqs = DRM_SCHED_PRIORITY_COUNT,
			/* Slots for the jobs SUBMIT writes itself. */
			.credit_limit = VNPU_RING_JOB_SLOTS - VNPU_DIRECT_MAX,
			.timeout = timeout,
			.timeout_wq = vdev->reset_wq,
			.name = q->name,
			.dev = vdev->drm.dev,
		};
#endif

		/*
		 * Ordered and reclaim-safe as drm_sched's own, but high
		 * priority, which also keeps its items out of the unbound
		 * pool the release work runs in: without it a null job took
		 * 1.5 times as long (Documentation/accel/vnpu/latency.rst).
		 */
		q->submit_wq = alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM |
						       WQ_HIGHPRI, q->name);
		if (!q->submit_wq) {
			ret = -ENOMEM;
			goto err;
		}
#if VNPU_SCHED_INIT_ARGS
		args.submit_wq = q->submit_wq;
		ret = drm_sched_init(&q->sched, &args);
#else
		ret = drm_sched_init(&q->sched, &vnpu_sched_ops, q->submit_wq,
				     DRM_SCHED_PRIORITY_COUNT,
				     VNPU_RING_JOB_SLOTS - VNPU_DIRECT_MAX,
				     0, timeout,
				     vdev->reset_wq, NULL, q->name,
				     vdev->drm.dev);
#endif
		if (ret) {
			destroy_workqueue(q->submit_wq);
			goto err;
		}
	}
	return drmm_add_action_or_reset(&vdev->drm, vnpu_sched_fini, NULL);

err:
	while (i--) {
		drm_sched_fini(&vdev->queues[i].sched);
		destroy_workqueue(vdev->queues[i].submit_wq);
	}
	destroy_workqueue(vdev->reset_wq);
	return ret;
}

static const enum drm_sched_priority vnpu_sched_prio[] = {
	[DRM_VNPU_PRIORITY_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_VNPU_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_VNPU_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

/**
 * vnpu_file_entities_init() - one entity per queue and priority
 * @fpriv: new file
 *
 * Return: 0 or a negative errno.
 */
int vnpu_file_entities_init(struct vnpu_file_priv *fpriv)
{
	struct vnpu_device *vdev = fpriv->vdev;
	unsigned int q, p;
	int ret;

	for (q = 0; q < vdev->num_queues; q++) {
		struct drm_gpu_scheduler *sched = &vdev->queues[q].sched;

		for (p = 0; p < ARRAY_SIZE(vnpu_sched_prio); p++) {
			ret = drm_sched_entity_init(&fpriv->entities[q][p],
						    vnpu_sched_prio[p], &sched,
						    1, NULL);
			if (ret)
				goto err;
		}
	}
	return 0;

err:
	while (p--)
		drm_sched_entity_destroy(&fpriv->entities[q][p]);
	while (q--)
		for (p = 0; p < ARRAY_SIZE(vnpu_sched_prio); p++)
			drm_sched_entity_destroy(&fpriv->entities[q][p]);
	return ret;
}

/**
 * vnpu_file_entities_fini() - flush and destroy a closing file's entities
 * @fpriv: file
 *
 * Queued jobs get a bounded time to reach the hardware; the rest are
 * killed.  Jobs already on the hardware keep their references and finish
 * normally.
 */
void vnpu_file_entities_fini(struct vnpu_file_priv *fpriv)
{
	unsigned int q, p;

	for (q = 0; q < fpriv->vdev->num_queues; q++)
		for (p = 0; p < ARRAY_SIZE(vnpu_sched_prio); p++)
			drm_sched_entity_destroy(&fpriv->entities[q][p]);
}

/*
 * Add explicit in-fence @fence (its reference is consumed) as a
 * dependency, and keep it so run_job can see it failed (see
 * vnpu_job_dep_failed()).  A timeline point is a chain node whose own
 * status says nothing about its job: keep the fence it contains.
 *
 * drm_sched does not wait for a job of the same scheduler to finish: a
 * job of the same entity is ignored (the entity keeps the order) and one
 * of another entity only has to be scheduled (the ring keeps the order).
 * Either way the dependent would be on the ring before its dependency
 * could fail, and run.  So a dependency on one of our jobs goes in behind
 * a one-fence array with a context of its own, which drm_sched waits for
 * like any foreign fence: the dependent runs only once the job finished,
 * at the cost of the device idling between the two.
 */
int vnpu_job_add_dep(struct vnpu_job *job, struct dma_fence *fence)
{
	struct dma_fence *dep = dma_fence_chain_contained(fence);
	/* Not a chain's: drm_sched waits for a whole chain already. */
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);
	struct dma_fence_array *array;
	struct dma_fence **one;

	job->deps[job->dep_count++] = dma_fence_get(dep);
	if (!s_fence || s_fence->sched->ops != &vnpu_sched_ops ||
	    dma_fence_is_signaled(fence))
		return drm_sched_job_add_dependency(&job->base, fence);

	one = kmalloc(sizeof(*one), GFP_KERNEL);
	if (!one)
		goto err;
	one[0] = fence;
	array = dma_fence_array_create(1, one, dma_fence_context_alloc(1), 1, false);
	if (!array) {
		kfree(one);
		goto err;
	}
	return drm_sched_job_add_dependency(&job->base, &array->base);
err:
	dma_fence_put(fence);
	return -ENOMEM;
}
