/* SPDX-License-Identifier: MIT */
/*
 * libnpu internals shared by the source files (and by libnpu's own host
 * tests, which link the objects directly).  Not installed.
 */
#ifndef NPU_INTERNAL_H
#define NPU_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/npu.h"
#include "vnpu/vnpu_hw.h"
#include "vnpu_accel.h"

/* Only functions marked NPU_EXPORT leave libnpu.so (-fvisibility=hidden). */
#define NPU_EXPORT __attribute__((visibility("default")))

struct npu_device {
	int fd;			/* kept so the node cannot change under us */
	char node[64];
	struct npu_device_info info;
	struct npu_device_limits limits;
};

struct npu_handle_ref {
	uint32_t handle;
	uint32_t refs;
};

struct npu_context {
	atomic_uint refs;
	int fd;
	struct npu_device_info info;	/* copy: the device may be closed */
	/* as reported; all zero (tests' fake contexts): interface 1.1's */
	struct npu_device_limits limits;
	/*
	 * GEM handles are per file and PRIME import returns the existing
	 * handle for a dma-buf the file already knows, so two npu_buffers
	 * can share one handle.  This table counts them; @lock also covers
	 * import and close so a handle cannot be closed between the kernel
	 * returning it and the count going up.
	 */
	pthread_mutex_t lock;
	struct npu_handle_ref *handles;
	size_t num_handles;
	size_t cap_handles;
};

struct npu_buffer {
	/*
	 * The caller's reference plus one per bound tensor and per op using
	 * the buffer (ops.h keeps no raw pointers).
	 */
	atomic_uint refs;
	struct npu_context *ctx;
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t va;
	uint64_t mmap_offset;
	pthread_mutex_t map_lock;
	void *map;
};

struct npu_queue {
	atomic_uint refs;
	struct npu_context *ctx;
	uint32_t hw_queue;
	uint32_t priority;
	/*
	 * Timeline mode: one syncobj per queue, job n signals point n.  The
	 * lock keeps point allocation and the SUBMIT ioctl in one order, as
	 * a timeline must only ever grow.
	 */
	bool timeline;
	uint32_t syncobj;
	uint64_t last_point;
	pthread_mutex_t lock;
};

struct npu_fence {
	atomic_uint refs;
	struct npu_context *ctx;
	struct npu_queue *queue;	/* timeline owner, else NULL */
	uint32_t syncobj;		/* owned unless @queue is set */
	uint64_t point;			/* 0 for a binary syncobj */
	uint64_t job_id;		/* 0: imported, no job status */
};

struct npu_cmdbuf {
	struct npu_context *ctx;	/* NULL: host-only */
	struct npu_buffer *bo;		/* backing store when ctx is set */
	uint8_t *data;
	size_t size;
	size_t capacity;
	/*
	 * Submissions not yet seen finished, on any queue: reset must wait
	 * for all of them, not just the last.  Pruned on every submit.
	 */
	struct npu_fence **inflight;
	size_t num_inflight;
	size_t cap_inflight;
};

struct npu_device_list {
	size_t count;
	struct npu_device_info *infos;
};

/*
 * Extensible structs (npu.h "ABI rules").  Copy a caller's struct of
 * @usize bytes into ours of @ksize: -EINVAL for 0, -E2BIG when bytes
 * beyond @ksize are not zero; missing fields become zero.
 */
int npu__struct_in(void *dst, size_t ksize, const void *src, size_t usize);
/* Write min(@usize, @ksize) bytes of @src, zeroing the caller's tail. */
void npu__struct_out(void *dst, size_t usize, const void *src, size_t ksize);

void npu__buffer_get(struct npu_buffer *buf);
void npu__buffer_put(struct npu_buffer *buf);

/* discovery.c: the roots are "/sys" and "/dev" except in tests. */
int npu__device_list_at(const char *sysfs_root, const char *dev_root,
			bool query, struct npu_device_list **out);
int npu__parse_pci_address(const char *s, char *out, size_t out_size);
int npu__parse_hex(const char *s, unsigned long max, unsigned long *out);
/* @lim may be NULL when only @info is wanted. */
int npu__open_node(const char *node, struct npu_device_info *info,
		   struct npu_device_limits *lim);

/* device.c */
int npu__query_fd(int fd, struct npu_device_info *info,
		  struct npu_device_limits *lim);
/*
 * Fill @info's query part and @lim (if not NULL) from a QUERY answer of
 * @size bytes (a shorter answer is an older driver's prefix).  -EPROTO
 * when even the capabilities are missing.
 */
int npu__info_from_query(const struct drm_vnpu_device_info *di, size_t size,
			 struct npu_device_info *info,
			 struct npu_device_limits *lim);
/*
 * The limits to plan device commands with: @lim's reported values, with
 * hardware interface 1.1's in place of any a device did not report (all
 * of them for @lim NULL, i.e. no device).
 */
void npu__limits_effective(const struct npu_device_limits *lim,
			   struct npu_device_limits *out);
void npu__context_get(struct npu_context *ctx);
void npu__context_put(struct npu_context *ctx);

/* submit.c */
void npu__fence_put(struct npu_fence *f);
void npu__queue_get(struct npu_queue *q);
void npu__queue_put(struct npu_queue *q);
/* cmdbuf.c: forget finished jobs, make room to track one more. */
int npu__cmdbuf_track_prepare(struct npu_cmdbuf *cb);

/* npu_ops.c: work units of an op (ops.rst "Work units"), all its commands */
uint64_t npu__op_work(const struct npu_op *op);
/*
 * npu_ops.c: the device's timing model (vnpu_engine_cycles()) summed over
 * the commands @op runs as: its device commands, else the tiles the CPU
 * path splits it into (the device's split at interface 1.1's limits),
 * else its one command; 0 for an op the device does not take.
 */
uint64_t npu__op_cycles(const struct npu_op *op);
/* npu_op_create() for the library's own full-size, trusted params. */
int npu__op_create(const struct npu_op_params *params,
		   const struct npu_tensor *const *inputs, size_t num_inputs,
		   const struct npu_tensor *output, struct npu_op **out);
/* The tensor's span, or 0 when it does not fit (never for a made tensor). */
uint64_t npu__tensor_span(const struct npu_tensor *t);
/* A job's outcome for a state: 0 for OK, else NPU_ERR_JOB_*. */
int npu__job_error(enum npu_job_state state);

/* drm ioctls return -1/errno; libdrm's syncobj helpers do the same. */
static inline int npu__errno(void)
{
	return errno ? -errno : -EIO;
}

#endif /* NPU_INTERNAL_H */
