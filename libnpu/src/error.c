// SPDX-License-Identifier: MIT
/*
 * Error strings and small helpers.  The strings say what the errno means
 * for an NPU caller, which the libc text often does not ("Timer expired"
 * for a fence wait, "Bad address" for a device MMU fault).
 */
#include <time.h>

#include "npu_internal.h"

static const struct {
	int err;
	const char *text;
} npu_errors[] = {
	{ 0, "success" },
	{ EPERM, "operation not permitted" },
	{ ENOENT, "no such buffer, syncobj or job (or the job expired)" },
	{ EINTR, "interrupted by a signal" },
	{ EIO, "device DMA error: address not backed by memory" },
	{ EBADF, "bad file descriptor" },
	{ EAGAIN, "resource temporarily unavailable, try again" },
	{ ENOMEM, "out of memory" },
	{ EACCES, "permission denied (the device node; high priority needs CAP_SYS_NICE)" },
	{ EFAULT, "device MMU fault" },
	{ EBUSY, "job still pending" },
	{ EXDEV, "objects belong to different contexts" },
	{ ENODEV, "no such vnpu device, or the device was lost" },
	{ EINVAL, "invalid argument" },
	{ EMFILE, "too many open files" },
	{ ENOSPC, "no space left (command buffer or device address space full)" },
	{ ERANGE, "value out of range" },
	{ E2BIG, "larger than the device allows" },
	{ ENODATA, "no job status for this fence (imported sync_file)" },
	{ ETIME, "deadline passed before the fence signalled" },
	{ EPROTO, "malformed command stream" },
	{ EOPNOTSUPP, "not supported by this device or driver" },
	{ ETIMEDOUT, "job hung on the device and was reset" },
	{ ECANCELED, "job aborted (dependency failed or context banned)" },
	{ ENOTTY, "not a vnpu device node (unknown ioctl)" },
};

NPU_EXPORT const char *npu_strerror(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(npu_errors) / sizeof(npu_errors[0]); i++)
		if (npu_errors[i].err == err)
			return npu_errors[i].text;
	return "unknown error";
}

NPU_EXPORT int64_t npu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

NPU_EXPORT int64_t npu_deadline_ns(int64_t rel_ns)
{
	int64_t now = npu_time_ns();

	if (rel_ns <= 0)
		return now;
	if (rel_ns >= NPU_TIMEOUT_INFINITE - now)
		return NPU_TIMEOUT_INFINITE;
	return now + rel_ns;
}

static const char *const npu_cap_names[64] = {
	[0] = "mmu",
	[1] = "compute",
	[2] = "timestamp",
	[3] = "fault-inject",
	[4] = "cycle-model",
	[32] = "timeline-syncobj",
};

NPU_EXPORT const char *npu_cap_name(uint64_t cap)
{
	/* exactly one bit */
	if (!cap || (cap & (cap - 1)))
		return NULL;
	return npu_cap_names[__builtin_ctzll(cap)];
}

NPU_EXPORT const char *npu_job_state_name(enum npu_job_state state)
{
	switch (state) {
	case NPU_JOB_PENDING: return "pending";
	case NPU_JOB_OK: return "ok";
	case NPU_JOB_MMU_FAULT: return "mmu-fault";
	case NPU_JOB_CMD_ERROR: return "cmd-error";
	case NPU_JOB_TIMEOUT: return "timeout";
	case NPU_JOB_ABORTED: return "aborted";
	case NPU_JOB_DEVICE_LOST: return "device-lost";
	case NPU_JOB_DMA_ERROR: return "dma-error";
	}
	return "unknown";
}
