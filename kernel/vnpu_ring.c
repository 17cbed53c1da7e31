// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The hardware rings.  A job reaches its queue's ring from run_job, or
 * from SUBMIT itself when the queue is idle and drm_sched would run the
 * job at once; its descriptor is written and the doorbell rung.  The
 * completion interrupt consumes the records in ring order, which sets
 * each job's outcome and signals its hardware fence.  The debugfs raw
 * probe shares the rings.
 */

#include <drm/drm_print.h>

#include "vnpu_drv.h"
#include "vnpu_job.h"

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
void vnpu_job_end(struct vnpu_job *job, u32 state, int error)
{
	lockdep_assert_held(&job->q->lock);
	vnpu_job_set_state(job, state);
	job->done = true;
	dma_fence_set_error(job->hw_fence, error);
	dma_fence_signal(job->hw_fence);
}

/* A raw probe left the ring; caller holds q->lock. */
void vnpu_raw_end(struct vnpu_queue *q, u64 seq, int status)
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
void vnpu_queue_retire(struct vnpu_queue *q,
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

void vnpu_ring_push_job(struct vnpu_queue *q, struct vnpu_job *job)
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

/* Take the hardware fence allocated at SUBMIT; caller holds q->lock. */
struct dma_fence *vnpu_job_init_hw_fence(struct vnpu_job *job)
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
void vnpu_job_run_direct(struct vnpu_job *job)
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
