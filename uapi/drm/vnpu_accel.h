/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Userspace ABI of the vnpu DRM accel driver, version 1.  MIT-licensed,
 * like drm.h, so userspace (Mesa and others) can carry a copy.
 */
#ifndef __UAPI_VNPU_ACCEL_H__
#define __UAPI_VNPU_ACCEL_H__

#include <linux/const.h>

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_VNPU_QUERY			0x00
#define DRM_VNPU_BO_CREATE		0x01
#define DRM_VNPU_BO_INFO		0x02
#define DRM_VNPU_SUBMIT			0x03
#define DRM_VNPU_WAIT			0x04
#define DRM_VNPU_JOB_STATUS		0x05

#define DRM_IOCTL_VNPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_QUERY, struct drm_vnpu_query)
#define DRM_IOCTL_VNPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_CREATE, struct drm_vnpu_bo_create)
#define DRM_IOCTL_VNPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_INFO, struct drm_vnpu_bo_info)
#define DRM_IOCTL_VNPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_SUBMIT, struct drm_vnpu_submit)
#define DRM_IOCTL_VNPU_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_WAIT, struct drm_vnpu_wait)
#define DRM_IOCTL_VNPU_JOB_STATUS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_JOB_STATUS, struct drm_vnpu_job_status)

/**
 * DOC: vnpu uapi rules
 *
 * Every pointer is a __u64.  Every struct is a multiple of 8 bytes with
 * explicit padding.  Every pad, reserved field and undefined flag bit must
 * be zero; the driver checks this and fails with -EINVAL otherwise, so
 * later versions can give those bits a meaning.  Timeouts are absolute
 * CLOCK_MONOTONIC times in nanoseconds.
 */

/**
 * enum drm_vnpu_query_param - what &drm_vnpu_query.param asks for
 * @DRM_VNPU_QUERY_DEVICE_INFO: fills &struct drm_vnpu_device_info
 */
enum drm_vnpu_query_param {
	DRM_VNPU_QUERY_DEVICE_INFO = 0,
};

/**
 * struct drm_vnpu_query - read a size-extensible info struct
 *
 * If @size is zero the driver only writes the size it would fill back into
 * @size.  Otherwise it copies min(@size, its own size) bytes to @data and
 * sets @size to that number; a caller built against a newer header gets
 * its extra trailing bytes zeroed, an older caller gets a prefix.
 *
 * Errors: -EINVAL for an unknown @param or a nonzero @pad, -EFAULT for a
 * bad @data pointer.
 */
struct drm_vnpu_query {
	/** @param: one of &enum drm_vnpu_query_param */
	__u32 param;
	/** @size: in: bytes available at @data; out: bytes written */
	__u32 size;
	/** @data: user pointer to the output struct */
	__u64 data;
	/** @pad: must be zero */
	__u64 pad;
};

#define DRM_VNPU_CAP_MMU		_BITULL(0)
#define DRM_VNPU_CAP_COMPUTE		_BITULL(1)
#define DRM_VNPU_CAP_TIMESTAMP		_BITULL(2)
#define DRM_VNPU_CAP_FAULT_INJECT	_BITULL(3)
#define DRM_VNPU_CAP_CYCLE_MODEL	_BITULL(4)
/*
 * Bit 32 was a driver feature bit for timeline syncobjs in 1.0; it is
 * never set now and never reused.  Ask the DRM core instead:
 * DRM_CAP_SYNCOBJ_TIMELINE (drmGetCap()).
 */

/**
 * struct drm_vnpu_device_info - answer to %DRM_VNPU_QUERY_DEVICE_INFO
 *
 * Fields are only ever appended.  Version 1.0 of the driver filled the 72
 * bytes up to and including @pad; the command limits followed in 1.1.
 */
struct drm_vnpu_device_info {
	/** @pci_vendor: PCI vendor id */
	__u16 pci_vendor;
	/** @pci_device: PCI device id */
	__u16 pci_device;
	/** @hw_version: VNPU_REG_VERSION, major << 16 | minor */
	__u32 hw_version;
	/** @caps: DRM_VNPU_CAP_* */
	__u64 caps;
	/** @platform: 0 silicon, 1 emulated */
	__u32 platform;
	/** @num_queues: hardware queues, valid &drm_vnpu_submit.queue values */
	__u32 num_queues;
	/** @num_engines: jobs the device executes concurrently */
	__u32 num_engines;
	/** @va_bits: width of the device address space */
	__u32 va_bits;
	/** @va_start: lowest VA the driver hands out */
	__u64 va_start;
	/** @va_end: one past the highest VA the driver hands out */
	__u64 va_end;
	/** @max_bo_size: largest BO that can be created */
	__u64 max_bo_size;
	/** @max_cmd_size: largest command buffer in bytes */
	__u32 max_cmd_size;
	/** @clock_mhz: modelled NPU clock, for converting cycles to time */
	__u32 clock_mhz;
	/** @macs_per_cycle: modelled MAC array throughput */
	__u32 macs_per_cycle;
	/** @pad: zero */
	__u32 pad;

	/*
	 * Command limits (hardware interface 1.1): the largest compute
	 * command the device accepts; one beyond any of them ends its job
	 * with %DRM_VNPU_JOB_CMD_ERROR.  Each reads 0 ("not reported") from
	 * a 1.0 device, which has no such limits, and from a driver that
	 * predates them, whose answer is shorter.
	 */

	/** @limit_tensor_elems: elements of one operand */
	__u32 limit_tensor_elems;
	/** @limit_tensor_bytes: bytes one operand spans, strides included */
	__u32 limit_tensor_bytes;
	/** @limit_cmd_macs: work units (MACs, window taps or elements) of one command */
	__u64 limit_cmd_macs;
	/** @limit_cmd_bytes: operand spans plus per-channel arrays of one command */
	__u32 limit_cmd_bytes;
	/** @limit_reduction: terms summed into one output element */
	__u32 limit_reduction;
	/** @limit_kernel_dim: CONV2D and POOL2D window height and width */
	__u32 limit_kernel_dim;
	/** @limit_channels: entries of one per-channel quantization array */
	__u32 limit_channels;
};

/* Map the BO read-only in the device address space. */
#define DRM_VNPU_BO_DEVICE_READONLY	_BITUL(0)
#define DRM_VNPU_BO_FLAGS		DRM_VNPU_BO_DEVICE_READONLY

/**
 * struct drm_vnpu_bo_create - create a buffer and map it for the device
 *
 * The BO is mapped into the calling file's device address space at once;
 * @va is where the device sees it.  @size is rounded up to the page size.
 *
 * The file's address space (and its context id) is created by its first
 * BO_CREATE, BO_INFO or SUBMIT, not at open.
 *
 * Errors: -EINVAL for a zero @size or unknown @flags;
 * -E2BIG for a size above &drm_vnpu_device_info.max_bo_size; -ENOSPC when
 * the address space is full or every context id of the device is taken;
 * -ENODEV when the device is gone or lost (a reset it did not come back
 * from); -ENOMEM.
 */
struct drm_vnpu_bo_create {
	/** @size: in: bytes; out: the rounded size */
	__u64 size;
	/** @flags: DRM_VNPU_BO_* */
	__u32 flags;
	/** @handle: out: GEM handle */
	__u32 handle;
	/** @va: out: device virtual address */
	__u64 va;
};

/**
 * struct drm_vnpu_bo_info - look up a BO's mmap offset and device VA
 *
 * Also maps an imported (PRIME) BO into the caller's address space on
 * first use, so @va is valid for any handle of this file.
 *
 * Errors: -ENOENT for a bad @handle, -EINVAL for nonzero @pad, -ENOSPC
 * when the address space is full or every context id is taken, -ENODEV
 * when the device is gone, -ENOMEM.
 */
struct drm_vnpu_bo_info {
	/** @handle: GEM handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @mmap_offset: out: offset to pass to mmap() on the device fd */
	__u64 mmap_offset;
	/** @va: out: device virtual address in this file's address space */
	__u64 va;
	/** @size: out: BO size in bytes */
	__u64 size;
};

/**
 * enum drm_vnpu_priority - scheduling priority of a submitted job
 * @DRM_VNPU_PRIORITY_LOW: background work
 * @DRM_VNPU_PRIORITY_NORMAL: default
 * @DRM_VNPU_PRIORITY_HIGH: latency sensitive work; needs CAP_SYS_NICE
 */
enum drm_vnpu_priority {
	DRM_VNPU_PRIORITY_LOW = 0,
	DRM_VNPU_PRIORITY_NORMAL = 1,
	DRM_VNPU_PRIORITY_HIGH = 2,
};

/**
 * struct drm_vnpu_sync - a syncobj reference, used for in-fences
 */
struct drm_vnpu_sync {
	/** @handle: syncobj handle */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
	/** @point: timeline point, or 0 for a binary syncobj */
	__u64 point;
};

/*
 * Jobs one file may have submitted and not yet finished (on every queue
 * together).  SUBMIT beyond it waits until one of them finished
 * (interruptibly), or, on a file opened with O_NONBLOCK, fails with
 * -EAGAIN (note that libdrm's drmIoctl() retries -EAGAIN at once).  The
 * limit is below the 4096 job outcomes a file keeps, so the outcome of
 * every unfinished job stays readable.
 */
#define DRM_VNPU_MAX_UNFINISHED_JOBS	1024

/**
 * struct drm_vnpu_submit - queue one job
 *
 * The job runs the command buffer at @cmd_va in the file's address space
 * once every in-fence and every implicit fence of the listed BOs has
 * signalled.  The listed BOs stay resident until the job ends, and the
 * job's fence is added to their reservation objects (as a write fence).
 * A handle listed more than once counts once.
 *
 * Errors: -EINVAL for a bad @queue, @priority, nonzero pad or flag,
 * misaligned or zero-sized command buffer; -E2BIG for @cmd_size above
 * &drm_vnpu_device_info.max_cmd_size or counts above 4096; -ENOENT for an
 * unknown BO or syncobj handle; -EFAULT for a bad array pointer; -EACCES
 * for %DRM_VNPU_PRIORITY_HIGH without CAP_SYS_NICE; -ECANCELED when the
 * file's context was banned after repeated faults; -EAGAIN when a file
 * opened with O_NONBLOCK has %DRM_VNPU_MAX_UNFINISHED_JOBS jobs
 * unfinished; -ERESTARTSYS/-EINTR on a signal while waiting for one of
 * them to finish; -ENOSPC when every
 * context id is taken (the file's first BO or SUBMIT takes one) or the
 * address space is full; -ENODEV when the device is gone or lost; -ENOMEM.
 */
struct drm_vnpu_submit {
	/** @cmd_va: device VA of the command buffer, 8-byte aligned */
	__u64 cmd_va;
	/** @cmd_size: command buffer bytes, multiple of 8 */
	__u32 cmd_size;
	/** @queue: hardware queue, below &drm_vnpu_device_info.num_queues */
	__u32 queue;
	/** @priority: &enum drm_vnpu_priority */
	__u32 priority;
	/** @flags: must be zero */
	__u32 flags;
	/** @bo_handles: user pointer to an array of __u32 GEM handles */
	__u64 bo_handles;
	/** @bo_count: entries in @bo_handles */
	__u32 bo_count;
	/** @in_sync_count: entries in @in_syncs */
	__u32 in_sync_count;
	/** @in_syncs: user pointer to an array of &struct drm_vnpu_sync */
	__u64 in_syncs;
	/** @out_syncobj: syncobj to signal on completion, or 0 */
	__u32 out_syncobj;
	/** @pad: must be zero */
	__u32 pad;
	/** @out_point: timeline point for @out_syncobj, 0 for binary */
	__u64 out_point;
	/** @job_id: out: id for %DRM_IOCTL_VNPU_WAIT and JOB_STATUS */
	__u64 job_id;
};

/**
 * enum drm_vnpu_wait_type - what &drm_vnpu_wait waits on
 * @DRM_VNPU_WAIT_JOB: the job &drm_vnpu_wait.id
 * @DRM_VNPU_WAIT_BO: every fence on the BO with handle &drm_vnpu_wait.id
 */
enum drm_vnpu_wait_type {
	DRM_VNPU_WAIT_JOB = 0,
	DRM_VNPU_WAIT_BO = 1,
};

/**
 * struct drm_vnpu_wait - wait for a job or a BO to become idle
 *
 * Errors: -ETIME when @timeout_ns passes first, -EINVAL for a bad @type
 * or nonzero @pad, -ENOENT for an unknown job id or BO handle,
 * -ERESTARTSYS/-EINTR on a signal.  A job that ended in error still
 * makes the wait succeed; read its outcome with JOB_STATUS.
 */
struct drm_vnpu_wait {
	/** @type: &enum drm_vnpu_wait_type */
	__u32 type;
	/** @pad: must be zero */
	__u32 pad;
	/** @id: job id or BO handle */
	__u64 id;
	/** @timeout_ns: absolute CLOCK_MONOTONIC deadline */
	__s64 timeout_ns;
};

/**
 * enum drm_vnpu_job_state - outcome of a job
 * @DRM_VNPU_JOB_PENDING: not finished yet
 * @DRM_VNPU_JOB_OK: completed
 * @DRM_VNPU_JOB_MMU_FAULT: the device MMU refused an access; see fault_va
 * @DRM_VNPU_JOB_CMD_ERROR: malformed command stream; fault_va holds the
 *	offending byte offset in the command buffer
 * @DRM_VNPU_JOB_TIMEOUT: the job hung and the device was reset
 * @DRM_VNPU_JOB_ABORTED: cancelled (an in_syncs fence failed, file closed, or
 *	context banned) before it ran
 * @DRM_VNPU_JOB_DEVICE_LOST: the device went away
 * @DRM_VNPU_JOB_DMA_ERROR: a translated address was not backed by memory
 */
enum drm_vnpu_job_state {
	DRM_VNPU_JOB_PENDING = 0,
	DRM_VNPU_JOB_OK = 1,
	DRM_VNPU_JOB_MMU_FAULT = 2,
	DRM_VNPU_JOB_CMD_ERROR = 3,
	DRM_VNPU_JOB_TIMEOUT = 4,
	DRM_VNPU_JOB_ABORTED = 5,
	DRM_VNPU_JOB_DEVICE_LOST = 6,
	DRM_VNPU_JOB_DMA_ERROR = 7,
};

/* The fault was a write (else a read). */
#define DRM_VNPU_FAULT_WRITE		_BITUL(0)

/**
 * struct drm_vnpu_job_status - read back the outcome of a job
 *
 * The driver keeps the outcome of the file's most recent 4096 jobs.
 *
 * Errors: -ENOENT for an unknown or expired @job_id, -EINVAL for nonzero
 * @pad.
 */
struct drm_vnpu_job_status {
	/** @job_id: from &drm_vnpu_submit.job_id */
	__u64 job_id;
	/** @state: out: &enum drm_vnpu_job_state */
	__u32 state;
	/** @fault_flags: out: DRM_VNPU_FAULT_* for an MMU fault */
	__u32 fault_flags;
	/** @fault_va: out: faulting VA or command offset */
	__u64 fault_va;
	/** @cycles: out: modelled device cycles of the job */
	__u64 cycles;
	/** @duration_ns: out: device time the job ran */
	__u64 duration_ns;
	/** @pad: must be zero */
	__u64 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_VNPU_ACCEL_H__ */
