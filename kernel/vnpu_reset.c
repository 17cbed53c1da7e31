// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Recovery.  A reset, after a job timed out or a queue halted, ends every
 * job on the rings in exactly one way; a device that is gone ends them
 * all.
 */

#include <drm/drm_print.h>

#include "vnpu_drv.h"
#include "vnpu_job.h"

/*
 * Fail every job on the ring with @error (-ENODEV: the device is gone)
 * and stop the queue.  Used once the device was removed or could not be
 * brought back, so no completion can arrive for them any more.
 */
static void vnpu_queue_fail_active(struct vnpu_queue *q, int error)
{
	struct vnpu_job *job;
	unsigned long flags;
	u64 seq;

	spin_lock_irqsave(&q->lock, flags);
	q->stopped = true;
	while (q->track.head != q->track.tail) {
		job = vnpu_track_pop(&q->track, &seq);
		if (seq & VNPU_SEQ_RAW)
			vnpu_raw_end(q, seq, error);
		else if (job)
			vnpu_job_end(job, DRM_VNPU_JOB_DEVICE_LOST, error);
	}
	/* A probe whose slot a reset already dropped. */
	vnpu_raw_end(q, q->raw_seq, error);
	vnpu_track_clear(&q->track);
	memset(q->ring, 0, VNPU_RING_ENTRIES * sizeof(*q->ring));
	memset(q->compl, 0, VNPU_RING_ENTRIES * sizeof(*q->compl));
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * vnpu_job_fail_all() - fail the jobs of every queue after a device loss
 * @vdev: device, already quiesced or unplugged
 * @error: fence error
 */
void vnpu_job_fail_all(struct vnpu_device *vdev, int error)
{
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++)
		vnpu_queue_fail_active(&vdev->queues[i], error);
}

/*
 * Stop queue @q fetching and find the slot whose job may be on an engine.
 * With the queue disabled nothing new starts; a job already on an engine
 * is the one at HEAD and keeps it until it completes.  So HEAD read
 * before a STATUS that is not IDLE names the running job, and a STATUS
 * that is IDLE means no job of this queue started and did not finish.
 *
 * Return: the slot, %VNPU_STARTED_NONE or %VNPU_STARTED_ANY.
 */
static int vnpu_queue_quiesce(struct vnpu_queue *q)
{
	unsigned long flags;
	u32 head, st;

	spin_lock_irqsave(&q->lock, flags);
	/* From here on the interrupt handler leaves the ring alone. */
	q->stopped = true;
	vnpu_qwrite(q, VNPU_QREG_CONTROL, 0);
	head = vnpu_qread(q, VNPU_QREG_HEAD);
	st = vnpu_qread(q, VNPU_QREG_STATUS);
	spin_unlock_irqrestore(&q->lock, flags);

	if (head >= VNPU_RING_ENTRIES || st == U32_MAX)
		return VNPU_STARTED_ANY;	/* gone: assume every job ran */
	return st & VNPU_QSTATUS_IDLE ? VNPU_STARTED_NONE : head;
}

/* The job that hung: TIMEOUT, and it counts towards its file's ban. */
static void vnpu_job_blame(struct vnpu_job *job)
{
	struct vnpu_file_priv *fpriv = job->fpriv;

	vnpu_job_end(job, DRM_VNPU_JOB_TIMEOUT, -ETIMEDOUT);
	if (vnpu_fault_bans(&fpriv->faults))
		WRITE_ONCE(fpriv->banned, true);
}

/*
 * After the device was reset (so its rings are final): sort every job
 * still on @q's ring into finished (it has its record: it ran exactly
 * once, report that), guilty (@bad: TIMEOUT), cut off (it was on an engine
 * at the reset: ABORTED; today's device cannot resume it, and running it
 * again could corrupt a non-idempotent stream) and unstarted (put on
 * @q->replay, to be written to the fresh ring).  @started is the slot
 * vnpu_queue_quiesce() returned (vnpu_harvest_oldest() has the rules).
 */
static void vnpu_queue_harvest(struct vnpu_queue *q, struct vnpu_job *bad,
			       int started)
{
	struct vnpu_hw_completion rec;
	struct vnpu_job *job;
	unsigned long flags;
	enum vnpu_harvest verdict;
	u64 seq;

	spin_lock_irqsave(&q->lock, flags);
	while (q->track.head != q->track.tail) {
		rec = q->compl[q->track.head];
		job = q->track.owner[q->track.head];
		verdict = vnpu_harvest_oldest(&q->track, le64_to_cpu(rec.seq),
					      job && job == bad,
					      job && job->ring_error, started);
		if (verdict == VNPU_HARVEST_RETIRE) {
			vnpu_queue_retire(q, &rec);
			continue;
		}
		vnpu_track_pop(&q->track, &seq);
		switch (verdict) {
		case VNPU_HARVEST_RAW:
			vnpu_raw_end(q, seq, -ECANCELED);
			break;
		case VNPU_HARVEST_DMA_ERROR:
			vnpu_job_end(job, DRM_VNPU_JOB_DMA_ERROR, -EIO);
			break;
		case VNPU_HARVEST_BLAME:
			vnpu_job_blame(job);
			break;
		case VNPU_HARVEST_ABORT:
			if (!WARN_ON_ONCE(!job))
				vnpu_job_end(job, DRM_VNPU_JOB_ABORTED, -ECANCELED);
			break;
		default:
			if (!WARN_ON_ONCE(!job))
				list_add_tail(&job->link, &q->replay);
			break;
		}
	}
	vnpu_track_clear(&q->track);
	memset(q->ring, 0, VNPU_RING_ENTRIES * sizeof(*q->ring));
	memset(q->compl, 0, VNPU_RING_ENTRIES * sizeof(*q->compl));
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * Write the jobs the reset found unstarted to the fresh ring, in their
 * old order, with their old sequence numbers and hardware fences, and let
 * the interrupt handler consume records again.  Each runs exactly once.
 */
static void vnpu_queue_replay(struct vnpu_queue *q, int error)
{
	struct vnpu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry_safe(job, tmp, &q->replay, link) {
		list_del_init(&job->link);
		switch (vnpu_replay_verdict(error, READ_ONCE(job->fpriv->banned))) {
		case VNPU_REPLAY_LOST:
			vnpu_job_end(job, DRM_VNPU_JOB_DEVICE_LOST, error);
			break;
		case VNPU_REPLAY_ABORT:
			vnpu_job_end(job, DRM_VNPU_JOB_ABORTED, -ECANCELED);
			break;
		case VNPU_REPLAY_PUSH:
			vnpu_ring_push_job(q, job);
			break;
		}
	}
	if (!error)
		q->stopped = false;
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * vnpu_reset() - reset the device; innocent jobs run exactly once or abort
 * @vdev: device
 * @bad: the job that hung, off its scheduler's pending list, or NULL
 *
 * CONTROL.SOFT_RESET resets the whole device, so every queue takes part.
 * The schedulers' work items are stopped (no run_job, no free_job) but
 * drm_sched's pending lists and its callbacks on the hardware fences stay
 * as they are: the driver ends each job on the rings itself.  After the
 * reset the completion rings are final, and each job ends in exactly one
 * way: with its record if it finished; TIMEOUT (-ETIMEDOUT) if it is
 * @bad; ABORTED (-ECANCELED) if it was on an engine; otherwise it is
 * written to the fresh ring and runs once.  If @bad's queue halted on a
 * ring error instead, @bad ends DMA_ERROR (-EIO) and is not blamed.  A
 * device that does not come back is lost: its jobs end DEVICE_LOST
 * (-ENODEV), as do later ones.
 *
 * Called on the ordered reset workqueue, so it never races a timeout
 * handler.  Signals fences, so it must not allocate: see run_job.
 */
void vnpu_reset(struct vnpu_device *vdev, struct vnpu_job *bad)
{
	int started[VNPU_NUM_QUEUES];
	unsigned int i;
	bool cookie;
	int ret;

	mutex_lock(&vdev->reset_lock);
	/* Waits for run_job and free_job; neither allocates nor sleeps long. */
	for (i = 0; i < vdev->num_queues; i++)
		drm_sched_wqueue_stop(&vdev->queues[i].sched);
	cookie = dma_fence_begin_signalling();

	if (vdev->lost)
		goto out;

	/*
	 * No TLB invalidation while the device resets and its MMU is
	 * reprogrammed: one would wait for a sequence number the reset
	 * drops, time out, and leak pages for nothing.  mmu_lock is never
	 * held around an allocation or a fence wait.
	 */
	mutex_lock(&vdev->mmu_lock);
	vnpu_write(vdev, VNPU_REG_IRQ_MASK, 0);
	for (i = 0; i < vdev->num_queues; i++)
		started[i] = vnpu_queue_quiesce(&vdev->queues[i]);
	vnpu_hw_stop(vdev);
	ret = vnpu_hw_wait_ready(vdev);
	if (ret)
		for (i = 0; i < vdev->num_queues; i++)
			started[i] = VNPU_STARTED_ANY;

	for (i = 0; i < vdev->num_queues; i++)
		vnpu_queue_harvest(&vdev->queues[i], bad, started[i]);

	if (!ret)
		ret = vnpu_hw_start(vdev);
	if (ret) {
		drm_err(&vdev->drm, "device did not come back from reset (%d): lost\n",
			ret);
		WRITE_ONCE(vdev->lost, true);
		vnpu_write(vdev, VNPU_REG_IRQ_MASK, 0);
		vnpu_irq_sync(vdev);
	}
	mutex_unlock(&vdev->mmu_lock);
	/*
	 * Counted before the replay: a replayed job can complete, and its
	 * waiter read the count, before this function goes on.
	 */
	atomic_inc(&vdev->reset_count);
	for (i = 0; i < vdev->num_queues; i++)
		vnpu_queue_replay(&vdev->queues[i], ret ? -ENODEV : 0);

	/* The replayed jobs get a full timeout from now. */
	for (i = 0; i < vdev->num_queues; i++)
		drm_sched_resume_timeout(&vdev->queues[i].sched,
					 vdev->queues[i].sched.timeout);
out:
	dma_fence_end_signalling(cookie);
	if (bad)
		vnpu_sched_requeue(&bad->base);
	for (i = 0; i < vdev->num_queues; i++)
		drm_sched_wqueue_start(&vdev->queues[i].sched);
	mutex_unlock(&vdev->reset_lock);
}
