/* SPDX-License-Identifier: MIT */
/*
 * libnpu - userspace runtime for the vnpu DRM accel driver, API version 1.
 *
 * Conventions
 *
 *   Every function returns 0 or a positive count on success and a negative
 *   errno on failure; npu_strerror() turns that into text.  Nothing is
 *   printed.  Output parameters are written only on success.  Every handle
 *   is opaque and freed by its own npu_*_free()/_destroy()/_close(), all of
 *   which accept NULL.
 *
 * Objects and their thread safety
 *
 *   npu_device   An open accel node (/dev/accel/accelN) whose driver is
 *                "vnpu", with its QUERY answer.  Immutable after open:
 *                safe from any number of threads.
 *   npu_context  A device address space: its own file description on the
 *                node, so its own device MMU context.  A fault or a ban
 *                only ever affects the context it happened in.  Every
 *                function taking a context is thread-safe.
 *   npu_buffer   Device memory mapped at a device VA of one context,
 *                reference-counted.  Every function is thread-safe except
 *                npu_buffer_free(), which must not race the caller's own
 *                other uses of the buffer.
 *   npu_queue    A submission stream on one hardware queue with one
 *                priority.  npu_submit() on the same queue from several
 *                threads is safe (submissions are serialised per queue so
 *                fences of one queue signal in submission order).
 *   npu_cmdbuf   A command buffer being built.  Not thread-safe: one
 *                thread at a time builds, submits or resets it.
 *   npu_fence    Completion of one submitted job (a DRM syncobj).
 *                Immutable: wait, status and export are safe from any
 *                thread; npu_fence_free() must not race other uses.
 *
 *   Objects keep what they depend on alive, so they may be freed in any
 *   order: a context stays open while a buffer, queue, command buffer,
 *   fence, op or runtime of it exists (a context keeps its own file on the
 *   node, so the npu_device may be closed first); a buffer stays allocated
 *   while a tensor is bound to it or an op uses it (npu_buffer_free()
 *   drops the caller's reference, the memory goes with the last one); a
 *   queue stays while a fence of it exists.
 *
 * ABI rules (libnpu 1.3, Documentation/libnpu.rst "ABI conventions")
 *
 *   - No struct that may grow is ever passed by value, returned, embedded
 *     in another public struct or passed as an array: lists are opaque
 *     objects read one element at a time (npu_device_list_get_info()).
 *   - Every struct the library reads or writes is extensible: it starts
 *     with "uint32_t size" set by the caller to its sizeof (the *_INIT
 *     initialisers do it), or its size is a separate argument.  Fields are
 *     only ever appended.  The library takes a smaller size as an older
 *     caller's (the missing fields read as zero) and rejects a larger one
 *     with -E2BIG unless every byte it does not know is zero.  It writes
 *     only min(size, its own sizeof) bytes of an output struct (and zeroes
 *     the caller's tail beyond its own).  A size of 0 is -EINVAL.
 *   - Negative errnos are failures of the call itself.  The outcome of a
 *     device job is read from its fence (npu_fence_status(),
 *     npu_fence_error()); calls that submit and wait return a failed job's
 *     outcome as NPU_ERR_JOB_*, a range no errno uses.
 *   - Symbols are versioned (NPU_1.0 ... NPU_1.9); npu_version() and
 *     npu_version_check() tell what the running library provides.
 *
 * Time
 *
 *   Timeouts are absolute CLOCK_MONOTONIC times in nanoseconds, as in the
 *   kernel uapi; npu_deadline_ns() builds one from a relative delay.
 */
#ifndef NPU_NPU_H
#define NPU_NPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_API_VERSION			1

/* The libnpu release these headers belong to. */
#define NPU_VERSION_MAJOR		1
#define NPU_VERSION_MINOR		9
#define NPU_VERSION_PATCH		0

/* Never time out. */
#define NPU_TIMEOUT_INFINITE		INT64_MAX

struct npu_device;
struct npu_context;
struct npu_buffer;
struct npu_queue;
struct npu_cmdbuf;
struct npu_fence;

/* ---- Version (since 1.3, NPU_1.3) ---------------------------------------- */

/* The running library's version, "1.9.0"; static. */
const char *npu_version(void);

/*
 * 0 when the running library provides API @major.@minor (same major,
 * minor at most its own), else -ENOTSUP.  Pass NPU_VERSION_MAJOR and
 * NPU_VERSION_MINOR to check the headers a program was built with.
 */
int npu_version_check(unsigned int major, unsigned int minor);

/* ---- Errors ------------------------------------------------------------- */

/*
 * Outcome of a device job that did not succeed, returned by calls that
 * submit and wait (npu_op_run(), npu_runtime_run(), npu_runtime_wait())
 * and by npu_fence_error(): -(NPU_ERR_JOB_BASE + enum npu_job_state),
 * below every errno, so "the job faulted" is never mistaken for "the
 * call failed" (a negative errno).
 */
#define NPU_ERR_JOB_BASE		0x1000
#define NPU_ERR_JOB(state)		(-(NPU_ERR_JOB_BASE + (int)(state)))
#define NPU_ERR_JOB_PENDING		NPU_ERR_JOB(0)	/* not finished */
#define NPU_ERR_JOB_MMU_FAULT		NPU_ERR_JOB(2)
#define NPU_ERR_JOB_CMD_ERROR		NPU_ERR_JOB(3)
#define NPU_ERR_JOB_TIMEOUT		NPU_ERR_JOB(4)
#define NPU_ERR_JOB_ABORTED		NPU_ERR_JOB(5)
#define NPU_ERR_JOB_DEVICE_LOST		NPU_ERR_JOB(6)
#define NPU_ERR_JOB_DMA_ERROR		NPU_ERR_JOB(7)
/* Is @err a job outcome?  Its enum npu_job_state is then -@err - BASE. */
#define NPU_ERR_IS_JOB(err) \
	((err) <= -NPU_ERR_JOB_BASE && (err) > -(NPU_ERR_JOB_BASE + 0x100))
#define NPU_ERR_JOB_STATE(err)		(-(err) - NPU_ERR_JOB_BASE)

/*
 * Text for an error this library returned: a negative errno (the sign
 * does not matter) or an NPU_ERR_JOB_* ("job: device MMU fault").  Never
 * NULL; the string is static and thread-safe.
 */
const char *npu_strerror(int err);

/* ---- Time --------------------------------------------------------------- */

/* Current CLOCK_MONOTONIC time in ns. */
int64_t npu_time_ns(void);

/* Absolute deadline @rel_ns from now; saturates at NPU_TIMEOUT_INFINITE. */
int64_t npu_deadline_ns(int64_t rel_ns);

/* ---- Discovery ---------------------------------------------------------- */

/*
 * Device capability bits, same values as DRM_VNPU_CAP_*, except
 * TIMELINE_SYNCOBJ, which libnpu reads from the DRM core.
 */
#define NPU_CAP_MMU			(1ull << 0)
#define NPU_CAP_COMPUTE			(1ull << 1)
#define NPU_CAP_TIMESTAMP		(1ull << 2)
#define NPU_CAP_FAULT_INJECT		(1ull << 3)
#define NPU_CAP_CYCLE_MODEL		(1ull << 4)
#define NPU_CAP_TIMELINE_SYNCOBJ	(1ull << 32)

/* Name of one NPU_CAP_* bit, or NULL for an unknown bit. */
const char *npu_cap_name(uint64_t cap);

/*
 * What is known about one device.  The sysfs part is always filled; the
 * query part only when @query_error is 0 (opening the node can fail for a
 * user without access, which does not hide the device from the list).
 * New fields are only ever appended; npu_device_get_info() and
 * npu_device_list_get_info() take the size the caller was compiled with.
 */
struct npu_device_info {
	/* position in npu_device_list() order (ascending accel minor) */
	uint32_t index;
	/* accel minor: N of /dev/accel/accelN */
	uint32_t minor;
	char node[64];			/* "/dev/accel/accel0" */
	char pci_address[32];		/* "0000:00:04.0" */
	char driver[32];		/* bound kernel driver, "" if unknown */
	uint16_t pci_vendor;
	uint16_t pci_device;
	uint8_t pci_revision;
	uint8_t pad0[3];
	/* 0 when the fields below are valid, else why they are not */
	int32_t query_error;
	uint32_t hw_version;		/* major << 16 | minor */
	uint32_t platform;		/* 0 silicon, 1 emulated */
	uint64_t caps;			/* NPU_CAP_* */
	uint32_t num_queues;
	uint32_t num_engines;
	uint32_t va_bits;
	uint32_t max_cmd_size;
	uint64_t va_start;
	uint64_t va_end;
	uint64_t max_bo_size;
	uint32_t clock_mhz;
	uint32_t macs_per_cycle;
	char driver_version[32];	/* "1.0.0" from drmGetVersion */
};

/*
 * A snapshot of every accel device bound to the vnpu driver, read from
 * /sys/class/accel; works without root.  An opaque list, so
 * npu_device_info can grow: count it, then copy out one entry at a time.
 * Zero devices is success with an empty list.  Changed in 1.3 (it
 * returned an array of npu_device_info).
 */
struct npu_device_list;

int npu_device_list(struct npu_device_list **out);
size_t npu_device_list_count(const struct npu_device_list *list);
/*
 * Copy min(@size, sizeof(struct npu_device_info)) bytes of entry @index
 * to @info.  -ERANGE for @index >= npu_device_list_count().
 */
int npu_device_list_get_info(const struct npu_device_list *list,
			     size_t index, struct npu_device_info *info,
			     size_t size);
void npu_device_list_free(struct npu_device_list *list);

/*
 * Open a device by npu_device_list() index, or by PCI address
 * ("0000:00:04.0"; the domain may be left out: "00:04.0").
 * -ENODEV when there is no such vnpu device.
 */
int npu_device_open(uint32_t index, struct npu_device **out);
int npu_device_open_pci(const char *pci_address, struct npu_device **out);
void npu_device_close(struct npu_device *dev);

/*
 * Copy min(@size, sizeof(struct npu_device_info)) bytes of the device's
 * info to @info (and zero any bytes beyond, for a newer caller).
 */
int npu_device_get_info(const struct npu_device *dev,
			struct npu_device_info *info, size_t size);

/*
 * Command limits (hardware interface 1.1): the largest compute command the
 * device accepts; it fails a command beyond any of them.  npu_op_*() keeps
 * within them by splitting GEMM and CONV2D ops into several commands, and
 * runs on the CPU what cannot be split to fit (npu_op_supported() names
 * the limit).  Passed by pointer with its size; fields are only ever
 * appended.
 */
struct npu_device_limits {
	/*
	 * 1: the values below are the device's, read through the driver.
	 * 0: the device or its driver predates command limits (hardware
	 * interface or driver 1.0); the values are then interface 1.1's,
	 * which libnpu plans with for such a device and for host-only use.
	 */
	uint32_t reported;
	uint32_t pad0;
	uint64_t tensor_elems;	/* elements of one operand */
	uint64_t tensor_bytes;	/* bytes one operand spans, strides included */
	uint64_t cmd_bytes;	/* operand spans + per-channel arrays, per command */
	/* work units per command: MACs, window taps (pooling) or elements */
	uint64_t cmd_macs;
	uint64_t reduction;	/* terms summed into one output element */
	uint64_t kernel_dim;	/* CONV2D and POOL2D window height and width */
	uint64_t channels;	/* entries of one per-channel quant array */
};

/*
 * Copy min(@size, sizeof(struct npu_device_limits)) bytes of the device's
 * command limits to @limits.  Since libnpu 1.1 (symbol version NPU_1.1).
 */
int npu_device_get_limits(const struct npu_device *dev,
			  struct npu_device_limits *limits, size_t size);

/* ---- Contexts ----------------------------------------------------------- */

int npu_context_create(struct npu_device *dev, struct npu_context **out);
void npu_context_destroy(struct npu_context *ctx);

/* The DRM file descriptor, for use with libdrm.  Owned by the context. */
int npu_context_fd(const struct npu_context *ctx);

/* ---- Buffers ------------------------------------------------------------ */

/* The device may only read the buffer. */
#define NPU_BUFFER_DEVICE_READONLY	(1u << 0)

/*
 * Allocate @size bytes (rounded up to the page size) and map them into
 * the context's device address space.  -E2BIG above max_bo_size, -ENOSPC
 * when the address space is full.
 */
int npu_buffer_alloc(struct npu_context *ctx, uint64_t size, uint32_t flags,
		     struct npu_buffer **out);
/*
 * Drop the caller's reference.  Tensors bound to the buffer and ops using
 * it hold their own, so the memory (and its CPU mapping) goes when the
 * last of them does.
 */
void npu_buffer_free(struct npu_buffer *buf);

/*
 * Map the buffer into the CPU address space.  The mapping is created on
 * first call, shared by later calls and removed with the buffer.
 */
int npu_buffer_map(struct npu_buffer *buf, void **ptr);

uint64_t npu_buffer_va(const struct npu_buffer *buf);
uint64_t npu_buffer_size(const struct npu_buffer *buf);
uint32_t npu_buffer_handle(const struct npu_buffer *buf);

/*
 * Wait until every job using the buffer has finished.  -ETIMEDOUT when
 * @deadline_ns passes first (-ETIME before 1.3).
 */
int npu_buffer_wait_idle(struct npu_buffer *buf, int64_t deadline_ns);

/* Export as a dma-buf; the caller owns *@fd (close-on-exec, read-write). */
int npu_buffer_export(struct npu_buffer *buf, int *fd);

/*
 * Import a dma-buf into @ctx and map it into the context's device address
 * space.  @fd is not consumed.  Importing the same dma-buf twice gives two
 * handles on the same memory, each freed on its own.
 */
int npu_buffer_import(struct npu_context *ctx, int fd,
		      struct npu_buffer **out);

/* ---- Command buffers ---------------------------------------------------- */

/*
 * Create a command buffer with room for @capacity bytes (rounded up to 8).
 * With a context it lives in device memory and can be submitted; with
 * @ctx NULL it is host memory only, to encode and inspect commands
 * (npu_cmdbuf_data()).  -E2BIG above the device's max_cmd_size (1 MiB).
 *
 * Every npu_cmdbuf_*() append below either adds one whole command or
 * fails leaving the buffer unchanged: -ENOSPC when it does not fit,
 * -EINVAL for an argument the hardware would reject.
 */
int npu_cmdbuf_create(struct npu_context *ctx, size_t capacity,
		      struct npu_cmdbuf **out);
/*
 * Safe while jobs using the buffer are in flight, and does not wait for
 * them: each submission holds the device memory (the kernel keeps it
 * until the job is done), only the host side goes at once.
 */
void npu_cmdbuf_destroy(struct npu_cmdbuf *cb);

/*
 * Empty the buffer for reuse.  -EBUSY while any job it was submitted with,
 * on any queue, has not finished (the device may still be reading it).
 */
int npu_cmdbuf_reset(struct npu_cmdbuf *cb);

size_t npu_cmdbuf_size(const struct npu_cmdbuf *cb);
size_t npu_cmdbuf_capacity(const struct npu_cmdbuf *cb);
/* The encoded little-endian command stream, npu_cmdbuf_size() bytes. */
const void *npu_cmdbuf_data(const struct npu_cmdbuf *cb);

/* A NOP of @size bytes (header included; a multiple of 8, at least 8). */
int npu_cmdbuf_nop(struct npu_cmdbuf *cb, uint32_t size);
/* Copy @size (> 0) bytes; the two ranges must not overlap. */
int npu_cmdbuf_copy(struct npu_cmdbuf *cb, uint64_t dst_va, uint64_t src_va,
		    uint64_t size);
/* Fill @size bytes (> 0, a multiple of 4) with @pattern. */
int npu_cmdbuf_fill(struct npu_cmdbuf *cb, uint64_t dst_va, uint64_t size,
		    uint32_t pattern);
/* Store @value at 8-byte aligned @dst_va. */
int npu_cmdbuf_write_value(struct npu_cmdbuf *cb, uint64_t dst_va,
			   uint64_t value);
/* Store the device clock (ns) at 8-byte aligned @dst_va. */
int npu_cmdbuf_timestamp(struct npu_cmdbuf *cb, uint64_t dst_va);
/* Make earlier writes of the job visible to later reads. */
int npu_cmdbuf_barrier(struct npu_cmdbuf *cb);
/*
 * Append one pre-encoded compute command (opcode 0x40..0x7f) of @size
 * bytes; its header must carry that size and zero flags.
 */
int npu_cmdbuf_raw(struct npu_cmdbuf *cb, const void *cmd, size_t size);

/* ---- Queues and submission ---------------------------------------------- */

enum npu_priority {
	NPU_PRIORITY_LOW = 0,
	NPU_PRIORITY_NORMAL = 1,
	NPU_PRIORITY_HIGH = 2,	/* submits fail -EACCES without CAP_SYS_NICE */
};

/* A queue on hardware queue @hw_queue (below info.num_queues). */
int npu_queue_create(struct npu_context *ctx, uint32_t hw_queue,
		     enum npu_priority priority, struct npu_queue **out);
void npu_queue_destroy(struct npu_queue *q);

/*
 * Maximum number of wait fences of one submission, and of buffers
 * including the command buffer.
 */
#define NPU_SUBMIT_MAX_ENTRIES		4096

/*
 * Run @cb on @q once every fence in @waits has signalled.  @bufs lists
 * the buffers the job touches (the command buffer is added for you):
 * they stay resident while it runs and the job waits for, and then
 * fences, their earlier users.  All objects must be of the queue's
 * context (-EXDEV otherwise; move a fence across with a sync_file).
 * *@fence receives the job's fence unless @fence is NULL.
 * -ECANCELED when the context was banned after repeated faults.
 */
int npu_submit(struct npu_queue *q, struct npu_cmdbuf *cb,
	       struct npu_buffer *const *bufs, size_t num_bufs,
	       struct npu_fence *const *waits, size_t num_waits,
	       struct npu_fence **fence);

/* ---- Fences ------------------------------------------------------------- */

void npu_fence_free(struct npu_fence *f);

/*
 * Wait for the fence to signal.  0 once it has, whatever the job's
 * outcome (read it with npu_fence_status() or npu_fence_error()),
 * -ETIMEDOUT when @deadline_ns passes first (-ETIME before 1.3), another
 * negative errno only when the wait itself failed.
 */
int npu_fence_wait(struct npu_fence *f, int64_t deadline_ns);

/*
 * Wait for all (@wait_all) or any of @count fences of one context; returns
 * like npu_fence_wait().  With !@wait_all, *@first (if not NULL) receives
 * the index of a signalled fence.
 */
int npu_fence_wait_many(struct npu_fence *const *fences, size_t count,
			bool wait_all, int64_t deadline_ns, size_t *first);

/* 1 if signalled, 0 if not, negative errno on error; never blocks. */
int npu_fence_is_signaled(struct npu_fence *f);

/* Export as a sync_file fd (owned by the caller). */
int npu_fence_export_sync_file(struct npu_fence *f, int *fd);

/*
 * Make a fence of @ctx from a sync_file, for use as an npu_submit() wait
 * fence or with npu_fence_wait().  @fd is not consumed.  Such a fence
 * has no job status (-ENODATA).
 */
int npu_fence_import_sync_file(struct npu_context *ctx, int fd,
			       struct npu_fence **out);

enum npu_job_state {
	NPU_JOB_PENDING = 0,
	NPU_JOB_OK = 1,
	NPU_JOB_MMU_FAULT = 2,		/* fault_va, fault_write valid */
	NPU_JOB_CMD_ERROR = 3,		/* fault_va = offset of bad command */
	NPU_JOB_TIMEOUT = 4,		/* hung; the device was reset */
	NPU_JOB_ABORTED = 5,		/* cancelled before it ran */
	NPU_JOB_DEVICE_LOST = 6,
	NPU_JOB_DMA_ERROR = 7,		/* address not backed by memory */
};

/*
 * Extensible (see "ABI rules"): set @size first, e.g.
 * struct npu_job_status st = NPU_JOB_STATUS_INIT;
 */
struct npu_job_status {
	uint32_t size;			/* sizeof(struct npu_job_status) */
	enum npu_job_state state;
	bool fault_write;
	uint64_t fault_va;
	uint64_t cycles;		/* modelled device cycles */
	uint64_t duration_ns;		/* device time the job ran */
};

#define NPU_JOB_STATUS_INIT	{ .size = sizeof(struct npu_job_status) }

/* Name of a job state ("ok", "mmu-fault", ...), "unknown" otherwise. */
const char *npu_job_state_name(enum npu_job_state state);

/*
 * Read back the job's outcome into min(@status->size, sizeof) bytes.
 * -ENOENT once the driver forgot the job (it keeps the last 4096 per
 * context).
 */
int npu_fence_status(struct npu_fence *f, struct npu_job_status *status);

/*
 * The job's outcome: 0 ok, or NPU_ERR_JOB_* (NPU_ERR_JOB_PENDING while it
 * runs, NPU_ERR_JOB_MMU_FAULT, ...); a negative errno only when the status
 * could not be read (-ENODATA for an imported fence).  Before 1.3 the
 * outcomes were errnos (-EFAULT, -EIO, ...), indistinguishable from
 * failures of the call.
 */
int npu_fence_error(struct npu_fence *f);

#ifdef __cplusplus
}
#endif

#include "ops.h"	/* tensors, ops, CPU fallback */
#include "graph.h"	/* graphs of ops: compile once, run many times */
#include "kernel.h"	/* CPU kernels: graph nodes of any op, on the host */

#endif /* NPU_NPU_H */
