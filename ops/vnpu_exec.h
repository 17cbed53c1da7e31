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

#include "vnpu_run.h"

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
	/*
	 * Optional: true once the command must be abandoned (reset, FLR,
	 * unplug).  Polled at least every VNPU_POLL_WORK work units.
	 */
	bool (*aborted)(void *opaque);
};

/**
 * struct vnpu_engine_cfg - one engine thread's resources.
 * @arena: scratch budget for bounce buffers, packing and im2col; NULL
 *	only in host tools (plain malloc, no budget)
 * @i8_kernel: int8 GEMM kernel, VNPU_I8_AUTO for the best available
 */
struct vnpu_engine_cfg {
	struct vnpu_arena *arena;
	enum vnpu_i8_kernel i8_kernel;
};

/**
 * struct vnpu_compute_result - how one command ended.
 * @cycles: modelled cycles, on success
 * @err_off: -EINVAL: byte offset, within the command, of the first field
 *	found at fault (hw-spec.rst, "Command errors")
 * @path: the engine kernel that ran it (struct vnpu_run_ctx's @path)
 */
struct vnpu_compute_result {
	uint64_t cycles;
	uint32_t err_off;
	enum vnpu_eng_path path;
};

/*
 * Once per process, before the first command: keeps the engine's BLAS (if
 * it has one) to the calling thread.
 */
void vnpu_compute_init(void);

/*
 * Execute one compute command (opcode in VNPU_CMD_COMPUTE_FIRST..LAST).
 * @cmd points at the whole command, header included, already copied into
 * host memory; @size is its byte size as given in the header.  The arena
 * is reset before return.
 *
 * Returns 0 on success, or:
 * -EINVAL: malformed, unsupported or beyond the command limits (the job
 *	ends CMD_ERROR at @res->err_off);
 * -E2BIG: valid, but needs more scratch than the arena holds (CMD_ERROR
 *	at offset 0: the arena size is the device's configuration);
 * -EFAULT: a memory callback failed (the device has recorded the fault);
 * -ECANCELED: mem->aborted() said stop; nothing more was written;
 * -ENOMEM: the host could not provide memory (a device error).
 *
 * An output that was mapped may have been partly written when the engine
 * fails or is aborted; one bounced through write() is written only on
 * success.
 */
int vnpu_compute_exec(const void *cmd, uint32_t size,
		      const struct vnpu_mem_ops *mem, void *opaque,
		      const struct vnpu_engine_cfg *cfg,
		      struct vnpu_compute_result *res);

#endif /* VNPU_EXEC_H */
