// SPDX-License-Identifier: MIT
/*
 * Error strings and small helpers.  The strings say what the errno means
 * for an NPU caller, which the libc text often does not ("Timer expired"
 * for a fence wait, "Bad address" for a device MMU fault).
 */
#include <string.h>
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
	{ EIO, "I/O error" },
	{ EBADF, "bad file descriptor" },
	{ EAGAIN, "resource temporarily unavailable, try again" },
	{ ENOMEM, "out of memory" },
	{ EACCES, "permission denied (the device node; high priority needs CAP_SYS_NICE)" },
	{ EFAULT, "bad address" },
	{ EBUSY, "busy: a job using it has not finished" },
	{ EXDEV, "objects belong to different contexts" },
	{ ENODEV, "no such vnpu device, or the device was lost" },
	{ EINVAL, "invalid argument" },
	{ EMFILE, "too many open files" },
	{ ENOSPC, "no space left (command buffer or device address space full)" },
	{ ERANGE, "value out of range" },
	{ EDOM, "argument outside the operation's domain (an integer division by zero)" },
	{ E2BIG, "too big: beyond a limit of the device or of the CPU path (npu_cpu_limits)" },
	{ ENODATA, "no job status for this fence (imported sync_file)" },
	{ ETIME, "deadline passed: the CPU path stopped the op" },
	{ EOVERFLOW, "value too large: a size does not fit in 64 bits" },
	{ EPROTO, "malformed command stream" },
	{ EOPNOTSUPP, "not supported by this device or driver" },
	{ ETIMEDOUT, "deadline passed before the wait finished" },
	{ ECANCELED, "cancelled, or context banned after repeated faults" },
	{ ENOTTY, "not a vnpu device node (unknown ioctl)" },
};

/* Indexed by enum npu_job_state. */
static const char *const npu_job_errors[] = {
	"job: not finished yet",
	"job: succeeded",
	"job: device MMU fault",
	"job: malformed command stream",
	"job: hung on the device, which was reset",
	"job: aborted before it ran (dependency failed or context banned)",
	"job: device lost",
	"job: device DMA error (address not backed by memory)",
};

NPU_EXPORT const char *npu_strerror(int err)
{
	size_t i;

	if (NPU_ERR_IS_JOB(err)) {
		i = (size_t)NPU_ERR_JOB_STATE(err);
		return i < sizeof(npu_job_errors) / sizeof(npu_job_errors[0]) &&
		       i != NPU_JOB_OK ? npu_job_errors[i] : "job: unknown outcome";
	}
	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(npu_errors) / sizeof(npu_errors[0]); i++)
		if (npu_errors[i].err == err)
			return npu_errors[i].text;
	/* any other errno (a custom kernel's), in the C library's words */
	return strerrordesc_np(err) ? strerrordesc_np(err) : "unknown error";
}

int npu__job_error(enum npu_job_state state)
{
	return state == NPU_JOB_OK ? 0 : NPU_ERR_JOB(state);
}

#define NPU_STR_(x)	#x
#define NPU_STR(x)	NPU_STR_(x)

NPU_EXPORT const char *npu_version(void)
{
	return NPU_STR(NPU_VERSION_MAJOR) "." NPU_STR(NPU_VERSION_MINOR) "."
	       NPU_STR(NPU_VERSION_PATCH);
}

NPU_EXPORT int npu_version_check(unsigned int major, unsigned int minor)
{
	return major == NPU_VERSION_MAJOR && minor <= NPU_VERSION_MINOR ?
	       0 : -ENOTSUP;
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
