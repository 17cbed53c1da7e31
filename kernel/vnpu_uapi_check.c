// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

#include <linux/errno.h>
#include <linux/math.h>
#include <linux/overflow.h>

#include "vnpu_hw.h"
#include "vnpu_uapi_check.h"

/**
 * vnpu_check_query() - validate &struct drm_vnpu_query
 * @args: ioctl arguments
 *
 * Return: 0 or -EINVAL.
 */
int vnpu_check_query(const struct drm_vnpu_query *args)
{
	if (args->pad || args->param != DRM_VNPU_QUERY_DEVICE_INFO)
		return -EINVAL;
	return 0;
}

/**
 * vnpu_check_bo_create() - validate &struct drm_vnpu_bo_create
 * @args: ioctl arguments
 * @max_bo_size: device limit, a multiple of the page size
 * @aligned_size: out: @args->size rounded up to the page size
 *
 * Return: 0, -EINVAL or -E2BIG.
 */
int vnpu_check_bo_create(const struct drm_vnpu_bo_create *args,
			 u64 max_bo_size, u64 *aligned_size)
{
	if (!args->size || args->flags & ~DRM_VNPU_BO_FLAGS)
		return -EINVAL;
	/* Compared before rounding so the round-up cannot overflow. */
	if (args->size > max_bo_size)
		return -E2BIG;
	*aligned_size = round_up(args->size, (u64)VNPU_PAGE_SIZE);
	return 0;
}

/**
 * vnpu_check_bo_info() - validate &struct drm_vnpu_bo_info
 * @args: ioctl arguments
 *
 * Return: 0 or -EINVAL.
 */
int vnpu_check_bo_info(const struct drm_vnpu_bo_info *args)
{
	return args->pad ? -EINVAL : 0;
}

/**
 * vnpu_check_submit() - validate &struct drm_vnpu_submit
 * @args: ioctl arguments
 * @num_queues: queues the device has
 * @max_cmd_size: largest command buffer the device accepts
 *
 * Return: 0, -EINVAL or -E2BIG.
 */
int vnpu_check_submit(const struct drm_vnpu_submit *args, u32 num_queues,
		      u32 max_cmd_size)
{
	u64 end;

	if (args->flags || args->pad)
		return -EINVAL;
	if (args->queue >= num_queues ||
	    args->priority > DRM_VNPU_PRIORITY_HIGH)
		return -EINVAL;
	if (!args->cmd_size || args->cmd_size % 8 || args->cmd_va % 8)
		return -EINVAL;
	if (check_add_overflow(args->cmd_va, (u64)args->cmd_size, &end))
		return -EINVAL;
	if (!args->out_syncobj && args->out_point)
		return -EINVAL;
	if (args->cmd_size > max_cmd_size)
		return -E2BIG;
	if (args->bo_count > VNPU_SUBMIT_MAX_ENTRIES ||
	    args->in_sync_count > VNPU_SUBMIT_MAX_ENTRIES)
		return -E2BIG;
	return 0;
}

/**
 * vnpu_check_sync() - validate one &struct drm_vnpu_sync
 * @sync: in-fence entry
 *
 * Return: 0 or -EINVAL.
 */
int vnpu_check_sync(const struct drm_vnpu_sync *sync)
{
	return sync->flags ? -EINVAL : 0;
}

/**
 * vnpu_check_wait() - validate &struct drm_vnpu_wait
 * @args: ioctl arguments
 *
 * Return: 0 or -EINVAL.
 */
int vnpu_check_wait(const struct drm_vnpu_wait *args)
{
	if (args->pad)
		return -EINVAL;
	if (args->type != DRM_VNPU_WAIT_JOB && args->type != DRM_VNPU_WAIT_BO)
		return -EINVAL;
	return 0;
}

/**
 * vnpu_check_job_status() - validate &struct drm_vnpu_job_status
 * @args: ioctl arguments
 *
 * Return: 0 or -EINVAL.
 */
int vnpu_check_job_status(const struct drm_vnpu_job_status *args)
{
	return args->pad ? -EINVAL : 0;
}
