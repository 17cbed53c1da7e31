// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Job submission and recovery.  One drm_sched scheduler feeds each
 * hardware queue; every file has one entity per queue and priority.  A job
 * becomes runnable once its syncobj in-fences and the implicit fences of
 * its BOs signalled; run_job writes a descriptor and rings the doorbell,
 * the completion interrupt signals the hardware fence.
 */

#include <linux/bsearch.h>
#include <linux/capability.h>
#include <linux/dma-fence-array.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>

#include "vnpu_drv.h"

#define to_vnpu_job(j) container_of(j, struct vnpu_job, base)

static const char *vnpu_fence_driver_name(struct dma_fence *fence)
{
	return DRIVER_NAME;
}

static const char *vnpu_fence_timeline_name(struct dma_fence *fence)
{
	return "vnpu-hw";
}

static const struct dma_fence_ops vnpu_fence_ops = {
	.get_driver_name = vnpu_fence_driver_name,
	.get_timeline_name = vnpu_fence_timeline_name,
};

/* Caller holds fpriv->rec_lock. */
static struct vnpu_job_record *vnpu_job_record(struct vnpu_file_priv *fpriv,
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
static void vnpu_job_set_state(struct vnpu_job *job, u32 state)
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

static const u32 vnpu_hw_status_state[] = {
	[VNPU_JOB_STATUS_OK] = DRM_VNPU_JOB_OK,
	[VNPU_JOB_STATUS_MMU_FAULT] = DRM_VNPU_JOB_MMU_FAULT,
	[VNPU_JOB_STATUS_CMD_ERROR] = DRM_VNPU_JOB_CMD_ERROR,
	[VNPU_JOB_STATUS_DMA_ERROR] = DRM_VNPU_JOB_DMA_ERROR,
	[VNPU_JOB_STATUS_ABORTED] = DRM_VNPU_JOB_ABORTED,
	[VNPU_JOB_STATUS_DESC_ERROR] = DRM_VNPU_JOB_CMD_ERROR,
};

static const int vnpu_hw_status_errno[] = {
	[VNPU_JOB_STATUS_OK] = 0,
	[VNPU_JOB_STATUS_MMU_FAULT] = -EFAULT,
	[VNPU_JOB_STATUS_CMD_ERROR] = -EINVAL,
	[VNPU_JOB_STATUS_DMA_ERROR] = -EIO,
	[VNPU_JOB_STATUS_ABORTED] = -ECANCELED,
	[VNPU_JOB_STATUS_DESC_ERROR] = -EINVAL,
};

/* The device reported the end of @job; caller holds q->lock. */
static void vnpu_job_hw_done(struct vnpu_job *job,
			     const struct vnpu_hw_completion *c)
{
	struct vnpu_file_priv *fpriv = job->fpriv;
	u32 status = le32_to_cpu(c->status);
	u64 start = le64_to_cpu(c->start_ns);
	u64 end = le64_to_cpu(c->end_ns);
	u64 cycles = le64_to_cpu(c->cycles);
	struct vnpu_job_record *rec;
	u32 state;
	int err;

	lockdep_assert_held(&job->q->lock);
	if (status < ARRAY_SIZE(vnpu_hw_status_state)) {
		state = vnpu_hw_status_state[status];
		err = vnpu_hw_status_errno[status];
	} else {
		drm_err_ratelimited(&job->vdev->drm,
				    "unknown completion status %u\n", status);
		state = DRM_VNPU_JOB_CMD_ERROR;
		err = -EIO;
	}

	spin_lock(&fpriv->rec_lock);
	rec = vnpu_job_record(fpriv, job->id);
	if (rec && rec->state == DRM_VNPU_JOB_PENDING) {
		rec->state = state;
		rec->fault_va = le64_to_cpu(c->fault_va);
		rec->fault_flags = 0;
		if (status == VNPU_JOB_STATUS_MMU_FAULT &&
		    le32_to_cpu(c->fault_flags) & VNPU_FAULT_WRITE)
			rec->fault_flags = DRM_VNPU_FAULT_WRITE;
		rec->cycles = cycles;
		rec->duration_ns = end > start ? end - start : 0;
	}
	spin_unlock(&fpriv->rec_lock);

	if (end > start)
		atomic64_add(end - start, &fpriv->busy_ns);
	atomic64_add(cycles, &fpriv->cycles);

	if (status == VNPU_JOB_STATUS_MMU_FAULT) {
		atomic_inc(&job->vdev->fault_count);
		if (vnpu_fault_bans(&fpriv->faults))
			WRITE_ONCE(fpriv->banned, true);
	}

	job->done = true;
	if (err)
		dma_fence_set_error(job->hw_fence, err);
	dma_fence_signal(job->hw_fence);
}

/*
 * End a job on the ring that has no completion record and never will:
 * a reset abandoned or blamed it, or the device is gone.  Caller holds
 * q->lock.
 */
static void vnpu_job_end(struct vnpu_job *job, u32 state, int error)
{
	lockdep_assert_held(&job->q->lock);
	vnpu_job_set_state(job, state);
	job->done = true;
	dma_fence_set_error(job->hw_fence, error);
	dma_fence_signal(job->hw_fence);
}

/* A raw probe left the ring; caller holds q->lock. */
static void vnpu_raw_end(struct vnpu_queue *q, u64 seq, int status)
{
	lockdep_assert_held(&q->lock);
	if (seq != q->raw_seq)
		return;
	q->raw_seq = 0;
	q->raw_status = status;
	complete(&q->raw_done);
}

/*
 * The device finished the descriptor at the ring's head: hand its record
 * to the job or raw probe there.  The record was written before the device
 * advanced HEAD past the slot (or before a reset completed), so it is
 * complete; its seq must echo the descriptor's, since a record from the
 * slot's previous use (RING_ENTRIES jobs ago) has another one.
 */
static void vnpu_queue_retire(struct vnpu_queue *q,
			      const struct vnpu_hw_completion *c)
{
	u64 want, seq = le64_to_cpu(c->seq);
	bool own = vnpu_track_record_ok(&q->track, seq);
	struct vnpu_hw_completion bad;
	struct vnpu_job *job;

	lockdep_assert_held(&q->lock);
	job = vnpu_track_pop(&q->track, &want);
	if (unlikely(!own)) {
		drm_err_ratelimited(&q->vdev->drm,
				    "queue %u: record seq %llu, expected %llu\n",
				    q->idx, seq, want);
		/* Never report another job's outcome: fail this one. */
		memset(&bad, 0, sizeof(bad));
		bad.status = cpu_to_le32(U32_MAX);
		c = &bad;
	}
	if (want & VNPU_SEQ_RAW) {
		/* Not a job: no fence, no record, only the waiter. */
		vnpu_raw_end(q, want, le32_to_cpu(c->status));
		return;
	}
	if (!WARN_ON_ONCE(!job))
		vnpu_job_hw_done(job, c);
}

/**
 * vnpu_queue_complete() - consume the completion records of a queue
 * @q: queue
 *
 * Records are consumed in ring order, from the driver's head up to the
 * device's HEAD register, which the device advances only after writing a
 * slot's record: so fences signal in submission order, a record is read
 * only once it is whole, and the work is proportional to the number of
 * jobs that completed.  Called from the queue's interrupt handler and,
 * for a lost interrupt, from the timeout handler and the raw probe.
 * While a reset or removal has the queue stopped, HEAD means nothing and
 * this does nothing; the reset consumes the records itself.
 */
void vnpu_queue_complete(struct vnpu_queue *q)
{
	struct vnpu_hw_completion rec;
	unsigned long flags;
	u32 hw_head;
	int done;

	spin_lock_irqsave(&q->lock, flags);
	if (q->stopped)
		goto out;
	/* readl() orders the record loads below after the HEAD load. */
	hw_head = vnpu_qread(q, VNPU_QREG_HEAD);
	done = vnpu_track_finished(&q->track, hw_head);
	/* All ones: the device is gone; else a HEAD it cannot have. */
	if (done < 0 && hw_head != U32_MAX)
		drm_err_ratelimited(&q->vdev->drm, "queue %u: HEAD %u outside the ring\n",
				    q->idx, hw_head);
	while (done-- > 0) {
		rec = q->compl[q->track.head];
		vnpu_queue_retire(q, &rec);
	}
out:
	spin_unlock_irqrestore(&q->lock, flags);
}

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

/* Write one descriptor and ring the doorbell; caller holds q->lock. */
static void vnpu_ring_push(struct vnpu_queue *q, struct vnpu_job *job,
			   u32 ctx_id, u64 cmd_va, u32 cmd_size, u64 seq)
{
	struct vnpu_hw_desc *desc;

	lockdep_assert_held(&q->lock);
	desc = &q->ring[vnpu_track_push(&q->track, job, seq)];
	desc->ctx_id = cpu_to_le32(ctx_id);
	desc->flags = 0;
	desc->cmd_va = cpu_to_le64(cmd_va);
	desc->cmd_size = cpu_to_le32(cmd_size);
	desc->reserved0 = 0;
	desc->seq = cpu_to_le64(seq);
	memset(desc->reserved, 0, sizeof(desc->reserved));
	/* writel orders the descriptor stores before the doorbell. */
	vnpu_qwrite(q, VNPU_QREG_TAIL, q->track.tail);
	vnpu_qwrite(q, VNPU_QREG_DOORBELL, 1);
}

static void vnpu_ring_push_job(struct vnpu_queue *q, struct vnpu_job *job)
{
	vnpu_ring_push(q, job, job->fpriv->as->ctx_id, job->cmd_va,
		       job->cmd_size, job->seqno);
}

/**
 * vnpu_queue_raw_submit() - put a descriptor on a ring behind drm_sched's back
 * @q: queue
 * @ctx_id: kernel-owned context the command buffer is mapped in
 * @cmd_va: command buffer VA
 * @cmd_size: command buffer bytes
 * @seq: sequence number with %VNPU_SEQ_RAW set
 *
 * For the debugfs raw round-trip probe.  The completion path hands the
 * record to @q->raw_done instead of a job, and a reset or removal
 * completes it with an error.  Callers serialise on &vnpu_device.raw_lock
 * and hold &vnpu_device.reset_lock, so the queue is not being torn down
 * and the one ring slot drm_sched leaves free is theirs.
 *
 * Return: 0, -EBUSY if a raw probe is still on this ring, -ENODEV if the
 * device is lost.
 */
int vnpu_queue_raw_submit(struct vnpu_queue *q, u32 ctx_id, u64 cmd_va,
			  u32 cmd_size, u64 seq)
{
	unsigned long flags;
	int ret = 0;

	if (WARN_ON(!(seq & VNPU_SEQ_RAW)))
		return -EINVAL;
	lockdep_assert_held(&q->vdev->raw_lock);
	lockdep_assert_held(&q->vdev->reset_lock);

	spin_lock_irqsave(&q->lock, flags);
	if (q->stopped) {
		ret = -ENODEV;
	} else if (q->raw_seq) {
		ret = -EBUSY;
	} else {
		q->raw_seq = seq;
		q->raw_status = 0;
		reinit_completion(&q->raw_done);
		vnpu_ring_push(q, NULL, ctx_id, cmd_va, cmd_size, seq);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

/*
 * drm_sched in 6.12 runs a job whose dependency failed as if it had
 * succeeded.  An explicit in-fence (syncobj) that signalled with an error
 * aborts the job instead.  Implicit BO fences do not: a later job may well
 * overwrite what a failed one left behind.  An in-fence on the same
 * scheduler may not have finished yet (drm_sched only waits for it to be
 * scheduled, the ring keeps the order), and is not caught here.
 */
static bool vnpu_job_dep_failed(struct vnpu_job *job)
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

/* Take the hardware fence allocated at SUBMIT; caller holds q->lock. */
static struct dma_fence *vnpu_job_init_hw_fence(struct vnpu_job *job)
{
	struct vnpu_fence *fence = job->hw_fence_mem;
	struct vnpu_queue *q = job->q;

	lockdep_assert_held(&q->lock);
	job->hw_fence_mem = NULL;
	spin_lock_init(&fence->lock);
	job->seqno = ++q->seqno;
	dma_fence_init(&fence->base, &vnpu_fence_ops, &fence->lock,
		       q->fence_ctx, job->seqno);
	/* One reference for the job, the initial one for drm_sched. */
	job->hw_fence = dma_fence_get(&fence->base);
	job->done = false;
	return &fence->base;
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
 * Whether drm_sched would run @job now as far as its dependencies go,
 * by its own rules (drm_sched_entity_add_dependency_cb()): a fence of the
 * job's own entity does not count (the entity keeps the order, and every
 * earlier job of it is on the ring: see vnpu_job_run_direct()); one of
 * another job of the same scheduler only has to be scheduled (the ring
 * keeps the order); any other must have signalled.  The explicit
 * in-fences on our jobs are behind a fence array (vnpu_job_add_dep()),
 * so they must have signalled too.
 */
static bool vnpu_job_deps_ready(struct vnpu_job *job)
{
	u64 own = job->base.entity->fence_context;
	struct drm_sched_fence *s_fence;
	struct dma_fence *f;
	unsigned long i;

	xa_for_each(&job->base.dependencies, i, f) {
		if (f->context == own || f->context == own + 1)
			continue;
		s_fence = to_drm_sched_fence(f);
		if (!f->error && s_fence && s_fence->sched == &job->q->sched &&
		    !test_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &f->flags))
			f = &s_fence->scheduled;
		if (!dma_fence_is_signaled(f))
			return false;
	}
	return !vnpu_job_dep_failed(job);
}

/*
 * Called by SUBMIT, under &vnpu_device.sched_lock, right before the job
 * goes to drm_sched.  When the scheduler would run it at once anyway (no
 * unmet dependency; no job of the queue waiting in drm_sched, so the ring
 * order is one drm_sched could have picked and no other job is passed;
 * the queue not in a reset) and the queue is idle, write it to the ring
 * here: that saves the hop to the scheduler's worker before the doorbell,
 * which only a job that would otherwise find the device idle waits for.
 * With jobs on the ring, the hop overlaps their run, and under TCG doing
 * the doorbell in the submitter instead cost throughput.  drm_sched
 * still gets the job and calls run_job for it, which hands over the
 * hardware fence, so the scheduler's job accounting, timeout and recovery
 * see it as any other.  Until then it holds a ring slot the scheduler
 * does not count: at most %VNPU_DIRECT_MAX jobs do, and the credit limit
 * leaves their slots free.  A reset finds it on the ring like any job
 * there.
 */
static void vnpu_job_run_direct(struct vnpu_job *job)
{
	struct vnpu_file_priv *fpriv = job->fpriv;
	struct vnpu_queue *q = job->q;
	struct vnpu_job_record *rec;
	unsigned long flags;
	bool ready, cookie;

	ready = !READ_ONCE(fpriv->banned) && !READ_ONCE(job->vdev->lost) &&
		job->hw_fence_mem && vnpu_job_deps_ready(job);

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&q->lock, flags);
	ready = ready && !q->unrun && q->direct_unseen < VNPU_DIRECT_MAX &&
		!q->stopped && !vnpu_track_used(&q->track);
	if (!ready) {
		q->unrun++;
	} else {
		q->direct_unseen++;
		job->direct = true;
		/* The initial reference is run_job's to return. */
		vnpu_job_init_hw_fence(job);
		vnpu_ring_push_job(q, job);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	dma_fence_end_signalling(cookie);
	if (!ready)
		return;

	/* WAIT can return once the hardware is done with it. */
	spin_lock_irqsave(&fpriv->rec_lock, flags);
	rec = vnpu_job_record(fpriv, job->id);
	if (rec && !rec->hw_fence)
		rec->hw_fence = dma_fence_get(job->hw_fence);
	spin_unlock_irqrestore(&fpriv->rec_lock, flags);
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

/*
 * drm_sched took the timed-out job off its pending list; put it back at
 * the head (it is the oldest) so the scheduler frees it once its finished
 * fence signalled, and kick the free worker, which looked for finished
 * jobs when the fence signalled and the job was not on the list.
 */
static void vnpu_sched_requeue(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	drm_sched_wqueue_start(sched);
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

static void vnpu_job_release(struct vnpu_job *job)
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
static int vnpu_job_add_dep(struct vnpu_job *job, struct dma_fence *fence)
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
