/* SPDX-License-Identifier: MIT */
/*
 * The seam between the device model and the compute engine.
 *
 * The device owns address translation; the engine owns op semantics.  The
 * engine never sees guest-physical addresses: it asks the device to move
 * bytes to and from device virtual addresses through struct vnpu_mem_ops,
 * and the device walks its MMU (recording any fault) while doing so.  The
 * same interface lets host unit tests and benchmarks drive the engine over
 * a flat buffer, with no QEMU at all.
 */
#ifndef VNPU_EXEC_H
#define VNPU_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vnpu_mem_ops {
	/* Copy @len bytes at device VA @va into @buf.  0 or -EFAULT. */
	int (*read)(void *opaque, uint64_t va, void *buf, uint64_t len);
	/* Copy @len bytes from @buf to device VA @va.  0 or -EFAULT. */
	int (*write)(void *opaque, uint64_t va, const void *buf, uint64_t len);
	/*
	 * Optional bulk path: a host pointer to @len bytes at @va when the
	 * range is contiguous and directly accessible, else NULL (the caller
	 * then falls back to read/write).  Every successful map is paired
	 * with one unmap(@access_len = bytes actually touched).
	 */
	void *(*map)(void *opaque, uint64_t va, uint64_t len, bool is_write);
	void (*unmap)(void *opaque, void *host, uint64_t len, bool is_write,
		      uint64_t access_len);
};

/*
 * Execute one compute command (opcode in VNPU_CMD_COMPUTE_FIRST..LAST).
 * @cmd points at the whole command, header included, already copied into
 * host memory; @size is its byte size as given in the header.
 *
 * Returns 0 on success, -EINVAL for a malformed or unsupported command
 * (the job ends with VNPU_JOB_STATUS_CMD_ERROR), -EFAULT when a memory
 * callback failed (the device has already recorded the fault), or -ENOMEM
 * when the host could not provide scratch memory (a device error, not the
 * guest's).  *@cycles receives the modelled cycle count on success.
 *
 * An output that was mapped may have been partly written when the engine
 * fails; one bounced through write() is written only on success.
 */
int vnpu_compute_exec(const void *cmd, uint32_t size,
		      const struct vnpu_mem_ops *mem, void *opaque,
		      uint64_t *cycles);

#endif /* VNPU_EXEC_H */
