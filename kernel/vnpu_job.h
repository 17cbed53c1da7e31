/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * What the files of the job path use of each other: SUBMIT
 * (vnpu_submit.c), the drm_sched backend (vnpu_sched.c), the rings
 * (vnpu_ring.c) and recovery (vnpu_reset.c).  What the rest of the driver
 * calls is in vnpu_drv.h.
 */
#ifndef __VNPU_JOB_H__
#define __VNPU_JOB_H__

#include <linux/types.h>

struct dma_fence;
struct drm_sched_job;
struct vnpu_file_priv;
struct vnpu_hw_completion;
struct vnpu_job;
struct vnpu_job_record;
struct vnpu_queue;

/* vnpu_submit.c */
struct vnpu_job_record *vnpu_job_record(struct vnpu_file_priv *fpriv,
					u64 id);
void vnpu_job_set_state(struct vnpu_job *job, u32 state);
void vnpu_job_release(struct vnpu_job *job);

/* vnpu_sched.c */
int vnpu_job_add_dep(struct vnpu_job *job, struct dma_fence *fence);
bool vnpu_job_dep_failed(struct vnpu_job *job);
void vnpu_sched_requeue(struct drm_sched_job *sched_job);

/* vnpu_ring.c */
struct dma_fence *vnpu_job_init_hw_fence(struct vnpu_job *job);
void vnpu_ring_push_job(struct vnpu_queue *q, struct vnpu_job *job);
void vnpu_job_run_direct(struct vnpu_job *job);
void vnpu_queue_retire(struct vnpu_queue *q,
		       const struct vnpu_hw_completion *c);
void vnpu_job_end(struct vnpu_job *job, u32 state, int error);
void vnpu_raw_end(struct vnpu_queue *q, u64 seq, int status);

#endif /* __VNPU_JOB_H__ */
