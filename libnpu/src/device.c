// SPDX-License-Identifier: MIT
/*
 * Devices, contexts and buffers.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "npu_internal.h"
#include "vnpu/vnpu_hw_ops.h"

/* Does an answer of @size bytes include @field? */
#define QUERY_HAS(size, field) \
	((size) >= offsetof(struct drm_vnpu_device_info, field) + \
		   sizeof(((struct drm_vnpu_device_info *)0)->field))

int npu__info_from_query(const struct drm_vnpu_device_info *di, size_t size,
			 struct npu_device_info *info,
			 struct npu_device_limits *lim)
{
	if (!QUERY_HAS(size, caps))
		return -EPROTO;
	info->pci_vendor = di->pci_vendor;
	info->pci_device = di->pci_device;
	info->hw_version = di->hw_version;
	info->caps = di->caps;
	info->platform = di->platform;
	info->num_queues = di->num_queues;
	info->num_engines = di->num_engines;
	info->va_bits = di->va_bits;
	info->va_start = di->va_start;
	info->va_end = di->va_end;
	info->max_bo_size = di->max_bo_size;
	info->max_cmd_size = di->max_cmd_size;
	info->clock_mhz = di->clock_mhz;
	info->macs_per_cycle = di->macs_per_cycle;
	info->query_error = 0;
	if (!lim)
		return 0;
	memset(lim, 0, sizeof(*lim));
	/*
	 * A 1.0 driver's answer ends before the limits, and a 1.1 driver
	 * reports zeros for a 1.0 device: both mean "no limits reported".
	 * A device reports all of them or none.
	 */
	if (!QUERY_HAS(size, limit_channels) || !di->limit_tensor_elems)
		return 0;
	lim->reported = 1;
	lim->tensor_elems = di->limit_tensor_elems;
	lim->tensor_bytes = di->limit_tensor_bytes;
	lim->cmd_bytes = di->limit_cmd_bytes;
	lim->cmd_macs = di->limit_cmd_macs;
	lim->reduction = di->limit_reduction;
	lim->kernel_dim = di->limit_kernel_dim;
	lim->channels = di->limit_channels;
	return 0;
}

int npu__query_fd(int fd, struct npu_device_info *info,
		  struct npu_device_limits *lim)
{
	struct drm_vnpu_device_info di;
	struct drm_vnpu_query q;

	memset(&di, 0, sizeof(di));
	memset(&q, 0, sizeof(q));
	q.param = DRM_VNPU_QUERY_DEVICE_INFO;
	q.size = sizeof(di);
	q.data = (uintptr_t)&di;
	uint64_t timeline = 0;
	int ret;

	if (drmIoctl(fd, DRM_IOCTL_VNPU_QUERY, &q))
		return npu__errno();
	ret = npu__info_from_query(&di, q.size, info, lim);
	if (ret)
		return ret;
	/* A 1.0 driver also set bit 32 itself; the core's answer is the truth. */
	info->caps &= ~NPU_CAP_TIMELINE_SYNCOBJ;
	if (!drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &timeline) && timeline)
		info->caps |= NPU_CAP_TIMELINE_SYNCOBJ;
	return 0;
}

static uint64_t limit_or(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
}

void npu__limits_effective(const struct npu_device_limits *lim,
			   struct npu_device_limits *out)
{
	static const struct npu_device_limits none;

	if (!lim)
		lim = &none;
	out->reported = lim->reported;
	out->pad0 = 0;
	out->tensor_elems = limit_or(lim->tensor_elems, VNPU_LIMIT_TENSOR_ELEMS);
	out->tensor_bytes = limit_or(lim->tensor_bytes, VNPU_LIMIT_TENSOR_BYTES);
	out->cmd_bytes = limit_or(lim->cmd_bytes, VNPU_LIMIT_CMD_BYTES);
	out->cmd_macs = limit_or(lim->cmd_macs, VNPU_LIMIT_CMD_MACS);
	out->reduction = limit_or(lim->reduction, VNPU_LIMIT_REDUCTION);
	out->kernel_dim = limit_or(lim->kernel_dim, VNPU_LIMIT_KERNEL_DIM);
	out->channels = limit_or(lim->channels, VNPU_LIMIT_CHANNELS);
}

static int device_open_info(const struct npu_device_info *found,
			    struct npu_device **out)
{
	struct npu_device *dev;
	int fd;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->info = *found;
	fd = npu__open_node(found->node, &dev->info, &dev->limits);
	if (fd < 0) {
		free(dev);
		return fd;
	}
	dev->fd = fd;
	strcpy(dev->node, found->node);
	*out = dev;
	return 0;
}

/* Shared by open-by-index and open-by-address: @pci NULL selects @index. */
static int device_open(uint32_t index, const char *pci,
		       struct npu_device **out)
{
	struct npu_device_list *list;
	size_t i;
	int ret;

	ret = npu__device_list_at("/sys", "/dev", false, &list);
	if (ret)
		return ret;
	ret = -ENODEV;
	for (i = 0; i < list->count; i++) {
		if (pci ? strcmp(list->infos[i].pci_address, pci) : i != index)
			continue;
		ret = device_open_info(&list->infos[i], out);
		break;
	}
	npu_device_list_free(list);
	return ret;
}

NPU_EXPORT int npu_device_open(uint32_t index, struct npu_device **out)
{
	if (!out)
		return -EINVAL;
	return device_open(index, NULL, out);
}

NPU_EXPORT int npu_device_open_pci(const char *pci_address,
				   struct npu_device **out)
{
	char canon[32];
	int ret;

	if (!pci_address || !out)
		return -EINVAL;
	ret = npu__parse_pci_address(pci_address, canon, sizeof(canon));
	if (ret)
		return -EINVAL;
	return device_open(0, canon, out);
}

NPU_EXPORT void npu_device_close(struct npu_device *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

NPU_EXPORT int npu_device_get_info(const struct npu_device *dev,
				   struct npu_device_info *info, size_t size)
{
	if (!dev || !info || !size)
		return -EINVAL;
	npu__struct_out(info, size, &dev->info, sizeof(*info));
	return 0;
}

NPU_EXPORT int npu_device_get_limits(const struct npu_device *dev,
				     struct npu_device_limits *limits,
				     size_t size)
{
	struct npu_device_limits l;

	if (!dev || !limits || !size)
		return -EINVAL;
	npu__limits_effective(&dev->limits, &l);
	npu__struct_out(limits, size, &l, sizeof(l));
	return 0;
}

/* ---- Contexts ----------------------------------------------------------- */

NPU_EXPORT int npu_context_create(struct npu_device *dev,
				  struct npu_context **out)
{
	struct npu_context *ctx;
	int fd;

	if (!dev || !out)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->info = dev->info;
	/* A new open file is a new device address space in the driver. */
	fd = npu__open_node(dev->node, &ctx->info, &ctx->limits);
	if (fd < 0) {
		free(ctx);
		return fd;
	}
	ctx->fd = fd;
	atomic_init(&ctx->refs, 1);
	pthread_mutex_init(&ctx->lock, NULL);
	*out = ctx;
	return 0;
}

void npu__context_get(struct npu_context *ctx)
{
	atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
}

void npu__context_put(struct npu_context *ctx)
{
	if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) != 1)
		return;
	/* Closing the file releases every handle and syncobj it still has. */
	close(ctx->fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->handles);
	free(ctx);
}

NPU_EXPORT void npu_context_destroy(struct npu_context *ctx)
{
	if (ctx)
		npu__context_put(ctx);
}

NPU_EXPORT int npu_context_fd(const struct npu_context *ctx)
{
	return ctx ? ctx->fd : -EINVAL;
}

/* ---- GEM handle accounting (ctx->lock held) ----------------------------- */

static int handle_ref(struct npu_context *ctx, uint32_t handle)
{
	struct npu_handle_ref *t;
	size_t i;

	for (i = 0; i < ctx->num_handles; i++) {
		if (ctx->handles[i].handle == handle) {
			ctx->handles[i].refs++;
			return 0;
		}
	}
	if (ctx->num_handles == ctx->cap_handles) {
		size_t cap = ctx->cap_handles ? ctx->cap_handles * 2 : 16;

		t = realloc(ctx->handles, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		ctx->handles = t;
		ctx->cap_handles = cap;
	}
	ctx->handles[ctx->num_handles].handle = handle;
	ctx->handles[ctx->num_handles].refs = 1;
	ctx->num_handles++;
	return 0;
}

/* Drop one reference; close the GEM handle with the last one. */
static void handle_unref(struct npu_context *ctx, uint32_t handle)
{
	size_t i;

	for (i = 0; i < ctx->num_handles; i++) {
		if (ctx->handles[i].handle != handle)
			continue;
		if (--ctx->handles[i].refs)
			return;
		ctx->handles[i] = ctx->handles[--ctx->num_handles];
		break;
	}
	drmCloseBufferHandle(ctx->fd, handle);
}

/* ---- Buffers ------------------------------------------------------------ */

static int bo_info(struct npu_context *ctx, uint32_t handle,
		   struct drm_vnpu_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_BO_INFO, info))
		return npu__errno();
	return 0;
}

static struct npu_buffer *buffer_new(struct npu_context *ctx)
{
	struct npu_buffer *buf = calloc(1, sizeof(*buf));

	if (!buf)
		return NULL;
	pthread_mutex_init(&buf->map_lock, NULL);
	atomic_init(&buf->refs, 1);
	buf->ctx = ctx;
	npu__context_get(ctx);
	return buf;
}

static void buffer_delete(struct npu_buffer *buf)
{
	pthread_mutex_destroy(&buf->map_lock);
	npu__context_put(buf->ctx);
	free(buf);
}

NPU_EXPORT int npu_buffer_alloc(struct npu_context *ctx, uint64_t size,
				uint32_t flags, struct npu_buffer **out)
{
	struct drm_vnpu_bo_create req;
	struct npu_buffer *buf;
	int ret;

	if (!ctx || !out || !size || (flags & ~NPU_BUFFER_DEVICE_READONLY))
		return -EINVAL;
	if (ctx->info.max_bo_size && size > ctx->info.max_bo_size)
		return -E2BIG;
	buf = buffer_new(ctx);
	if (!buf)
		return -ENOMEM;

	memset(&req, 0, sizeof(req));
	req.size = size;
	req.flags = flags & NPU_BUFFER_DEVICE_READONLY ?
		    DRM_VNPU_BO_DEVICE_READONLY : 0;
	pthread_mutex_lock(&ctx->lock);
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_BO_CREATE, &req)) {
		ret = npu__errno();
		pthread_mutex_unlock(&ctx->lock);
		goto err;
	}
	ret = handle_ref(ctx, req.handle);
	if (ret)
		drmCloseBufferHandle(ctx->fd, req.handle);
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		goto err;

	buf->handle = req.handle;
	buf->flags = flags;
	buf->size = req.size;
	buf->va = req.va;
	*out = buf;
	return 0;
err:
	buffer_delete(buf);
	return ret;
}

void npu__buffer_get(struct npu_buffer *buf)
{
	atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

void npu__buffer_put(struct npu_buffer *buf)
{
	struct npu_context *ctx;

	if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1)
		return;
	ctx = buf->ctx;
	if (buf->map)
		munmap(buf->map, buf->size);
	pthread_mutex_lock(&ctx->lock);
	handle_unref(ctx, buf->handle);
	pthread_mutex_unlock(&ctx->lock);
	buffer_delete(buf);
}

NPU_EXPORT void npu_buffer_free(struct npu_buffer *buf)
{
	if (buf)
		npu__buffer_put(buf);
}

NPU_EXPORT int npu_buffer_map(struct npu_buffer *buf, void **ptr)
{
	struct drm_vnpu_bo_info info;
	void *map;
	int ret = 0;

	if (!buf || !ptr)
		return -EINVAL;
	pthread_mutex_lock(&buf->map_lock);
	if (!buf->map) {
		ret = bo_info(buf->ctx, buf->handle, &info);
		if (ret)
			goto out;
		map = mmap(NULL, buf->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   buf->ctx->fd, (off_t)info.mmap_offset);
		if (map == MAP_FAILED) {
			ret = -errno;
			goto out;
		}
		buf->map = map;
	}
	*ptr = buf->map;
out:
	pthread_mutex_unlock(&buf->map_lock);
	return ret;
}

NPU_EXPORT uint64_t npu_buffer_va(const struct npu_buffer *buf)
{
	return buf ? buf->va : 0;
}

NPU_EXPORT uint64_t npu_buffer_size(const struct npu_buffer *buf)
{
	return buf ? buf->size : 0;
}

NPU_EXPORT uint32_t npu_buffer_handle(const struct npu_buffer *buf)
{
	return buf ? buf->handle : 0;
}

NPU_EXPORT int npu_buffer_wait_idle(struct npu_buffer *buf,
				    int64_t deadline_ns)
{
	struct drm_vnpu_wait w;

	if (!buf)
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.type = DRM_VNPU_WAIT_BO;
	w.id = buf->handle;
	w.timeout_ns = deadline_ns;
	if (drmIoctl(buf->ctx->fd, DRM_IOCTL_VNPU_WAIT, &w))
		return errno == ETIME ? -ETIMEDOUT : npu__errno();
	return 0;
}

NPU_EXPORT int npu_buffer_export(struct npu_buffer *buf, int *fd)
{
	int out;

	if (!buf || !fd)
		return -EINVAL;
	if (drmPrimeHandleToFD(buf->ctx->fd, buf->handle, DRM_CLOEXEC | DRM_RDWR,
			       &out))
		return npu__errno();
	*fd = out;
	return 0;
}

NPU_EXPORT int npu_buffer_import(struct npu_context *ctx, int fd,
				 struct npu_buffer **out)
{
	struct drm_vnpu_bo_info info;
	struct npu_buffer *buf;
	uint32_t handle;
	int ret;

	if (!ctx || fd < 0 || !out)
		return -EINVAL;
	buf = buffer_new(ctx);
	if (!buf)
		return -ENOMEM;

	pthread_mutex_lock(&ctx->lock);
	if (drmPrimeFDToHandle(ctx->fd, fd, &handle)) {
		ret = npu__errno();
		pthread_mutex_unlock(&ctx->lock);
		goto err;
	}
	ret = handle_ref(ctx, handle);
	if (ret) {
		/* Only close what no other npu_buffer holds. */
		size_t i;
		bool known = false;

		for (i = 0; i < ctx->num_handles; i++)
			known |= ctx->handles[i].handle == handle;
		if (!known)
			drmCloseBufferHandle(ctx->fd, handle);
		pthread_mutex_unlock(&ctx->lock);
		goto err;
	}
	pthread_mutex_unlock(&ctx->lock);

	/* BO_INFO also maps an imported BO into this file's address space. */
	ret = bo_info(ctx, handle, &info);
	if (ret) {
		pthread_mutex_lock(&ctx->lock);
		handle_unref(ctx, handle);
		pthread_mutex_unlock(&ctx->lock);
		goto err;
	}
	buf->handle = handle;
	buf->size = info.size;
	buf->va = info.va;
	*out = buf;
	return 0;
err:
	buffer_delete(buf);
	return ret;
}

/* ---- Extensible structs ------------------------------------------------- */

int npu__struct_in(void *dst, size_t ksize, const void *src, size_t usize)
{
	const uint8_t *p = src;
	size_t i;

	if (!usize)
		return -EINVAL;
	for (i = ksize; i < usize; i++)
		if (p[i])
			return -E2BIG;
	memcpy(dst, src, usize < ksize ? usize : ksize);
	if (usize < ksize)
		memset((uint8_t *)dst + usize, 0, ksize - usize);
	return 0;
}

void npu__struct_out(void *dst, size_t usize, const void *src, size_t ksize)
{
	memcpy(dst, src, usize < ksize ? usize : ksize);
	if (usize > ksize)
		memset((uint8_t *)dst + ksize, 0, usize - ksize);
}
