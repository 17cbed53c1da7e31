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
	struct npu_fence *last;		/* last submission, for reset */
};

/* discovery.c: the roots are "/sys" and "/dev" except in tests. */
int npu__device_list_at(const char *sysfs_root, const char *dev_root,
			bool query, struct npu_device_info **list,
			size_t *count);
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

/* npu_ops.c: work units of an op (ops.rst "Work units"), all its commands */
uint64_t npu__op_work(const struct npu_op *op);

/* drm ioctls return -1/errno; libdrm's syncobj helpers do the same. */
static inline int npu__errno(void)
{
	return errno ? -errno : -EIO;
}

#endif /* NPU_INTERNAL_H */
