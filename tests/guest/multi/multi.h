/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the two-device guest tests on top of the driver tests' own
 * (vnpu_t.h): a device by its accel minor, a BO shared as a dma-buf, and
 * a SUBMIT with explicit fences.
 */
#ifndef VNPU_MULTI_H
#define VNPU_MULTI_H

#include "vnpu_t.h"

/* The PCI address behind /dev/accel/accel@minor into @pci, or -errno. */
static inline int m_pci_of(unsigned int minor, char *pci, size_t len)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device", minor);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	snprintf(pci, len, "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
	return 0;
}

static inline int m_open(unsigned int minor)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/accel/accel%u", minor);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* Export @bo of @fd as a dma-buf and import it into @to: @out's handle,
 * VA and CPU mapping are @to's. */
static inline int m_share(int fd, const struct t_bo *bo, int to, struct t_bo *out)
{
	struct drm_vnpu_bo_info i = {};
	int dmabuf, ret;

	if (drmPrimeHandleToFD(fd, bo->handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf))
		return -errno;
	ret = drmPrimeFDToHandle(to, dmabuf, &out->handle) ? -errno : 0;
	close(dmabuf);
	if (ret)
		return ret;
	i.handle = out->handle;
	ret = t_ioctl(to, DRM_IOCTL_VNPU_BO_INFO, &i);
	if (ret)
		return ret;
	out->va = i.va;
	out->size = i.size;
	out->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, to,
			i.mmap_offset);
	return out->map == MAP_FAILED ? -errno : 0;
}

static inline void m_bo_close(int fd, struct t_bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };

	if (bo->map && bo->map != MAP_FAILED)
		munmap(bo->map, bo->size);
	bo->map = NULL;
	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/*
 * SUBMIT on queue 0 that waits for @in_syncobj (0: none) and signals
 * @out_syncobj (0: none); returns the job id through @id.
 */
static inline int m_submit(int fd, uint64_t cmd_va, size_t len, const uint32_t *bos,
			   uint32_t nbos, uint32_t in_syncobj, uint32_t out_syncobj,
			   uint64_t *id)
{
	struct drm_vnpu_sync in = { .handle = in_syncobj };
	struct drm_vnpu_submit s = {
		.cmd_va = cmd_va,
		.cmd_size = len,
		.priority = DRM_VNPU_PRIORITY_NORMAL,
		.bo_handles = (uintptr_t)bos,
		.bo_count = nbos,
		.in_syncs = in_syncobj ? (uintptr_t)&in : 0,
		.in_sync_count = !!in_syncobj,
		.out_syncobj = out_syncobj,
	};
	int ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);

	if (!ret && id)
		*id = s.job_id;
	return ret;
}

/* A job's final state after waiting for it, or -errno. */
static inline int m_finish(int fd, uint64_t id)
{
	struct drm_vnpu_job_status st;
	int ret = t_wait_job(fd, id, 120);

	if (!ret)
		ret = t_job_status(fd, id, &st);
	return ret ? ret : (int)st.state;
}

/* The fence in @fd's @syncobj as a syncobj of @to (a sync_file between). */
static inline int m_move_fence(int fd, uint32_t syncobj, int to, uint32_t to_syncobj)
{
	int sync_file, ret;

	if (drmSyncobjExportSyncFile(fd, syncobj, &sync_file))
		return -errno;
	ret = drmSyncobjImportSyncFile(to, to_syncobj, sync_file) ? -errno : 0;
	close(sync_file);
	return ret;
}

#endif /* VNPU_MULTI_H */
