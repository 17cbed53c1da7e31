/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Validation of ioctl arguments that needs no device state, kept apart so
 * KUnit can test every rule without hardware.
 */
#ifndef __VNPU_UAPI_CHECK_H__
#define __VNPU_UAPI_CHECK_H__

#include <linux/types.h>
#include <drm/vnpu_accel.h>

/* Per-submit array limit documented in the uapi header. */
#define VNPU_SUBMIT_MAX_ENTRIES		4096
/* Job outcomes remembered per file, as documented for JOB_STATUS. */
#define VNPU_JOB_RECORDS		4096

int vnpu_check_query(const struct drm_vnpu_query *args);
int vnpu_check_bo_create(const struct drm_vnpu_bo_create *args,
			 u64 max_bo_size, u64 *aligned_size);
int vnpu_check_bo_info(const struct drm_vnpu_bo_info *args);
int vnpu_check_submit(const struct drm_vnpu_submit *args, u32 num_queues,
		      u32 max_cmd_size);
int vnpu_check_sync(const struct drm_vnpu_sync *sync);
int vnpu_check_wait(const struct drm_vnpu_wait *args);
int vnpu_check_job_status(const struct drm_vnpu_job_status *args);

#endif /* __VNPU_UAPI_CHECK_H__ */
