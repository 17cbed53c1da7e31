// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Buffer objects: shmem-backed GEM objects, mapped into the device address
 * space of every file holding a handle to them.  A BO is mapped into its
 * creator's space at creation and into an importer's space on first use,
 * never into anyone else's.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>

#include "vnpu_drv.h"

static bool vnpu_huge_bo = true;
module_param_named(huge_bo, vnpu_huge_bo, bool, 0444);
MODULE_PARM_DESC(huge_bo,
		 "Back buffers with transparent huge pages where possible (default: on)");

static void vnpu_gemfs_fini(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);

	kern_unmount(vdev->gemfs);
}

/**
 * vnpu_gemfs_init() - mount the shmem instance BOs are backed from
 * @vdev: device being probed
 *
 * The device reaches a run of physically contiguous memory in one piece,
 * and the 4 KiB pages of the kernel's shmem mount are rarely neighbours.
 * A private mount with huge=within_size backs every 2 MiB of a BO that
 * the BO's size covers with one huge folio when the allocator has one.
 * The 6.12 GEM shmem helper takes no mount, so vnpu_bo_use_gemfs() swaps
 * the file in.  Without transparent huge pages, with huge_bo=0 or if the
 * mount fails, BOs stay on the kernel's mount, as they would anyway.
 * The mount goes with the DRM device, after the last BO.
 *
 * Return: 0, or -ENOMEM if the release action cannot be registered.
 */
int vnpu_gemfs_init(struct vnpu_device *vdev)
{
	char huge_opt[] = "huge=within_size";
	struct file_system_type *type;
	struct vfsmount *mnt;

	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) || !vnpu_huge_bo)
		return 0;
	/* Built in: the type holds no module reference to give back. */
	type = get_fs_type("tmpfs");
	if (!type)
		return 0;
	mnt = vfs_kern_mount(type, SB_KERNMOUNT, type->name, huge_opt);
	if (IS_ERR(mnt)) {
		drm_info(&vdev->drm, "no huge-page shmem mount (%pe): buffers use 4 KiB pages\n",
			 mnt);
		return 0;
	}
	vdev->gemfs = mnt;
	return drmm_add_action_or_reset(&vdev->drm, vnpu_gemfs_fini, NULL);
}

/*
 * Smallest BO whose backing file is rounded up to whole huge pages.  The
 * mount uses a huge folio only for a 2 MiB range that the file's size
 * covers, so a BO smaller than that (a model's whole activation arena,
 * its weights) or the tail of a larger one would get 4 KiB pages, which
 * the device cannot map as one run and must copy page by page on every
 * command (Documentation/bench.rst, "Where the device time goes").  The
 * rounding costs at most 2 MiB - 256 KiB of memory per BO, never more
 * than 8 times the BO's size; smaller BOs (command buffers, one op's
 * tensors) keep exactly their pages.
 */
#define VNPU_HUGE_BO_MIN	SZ_256K

/*
 * Back a BO the helper just created from the private mount instead.  Its
 * file has no pages, no mapping and no user yet, so swapping it is safe;
 * on failure the BO simply keeps the file it has.  The file may be
 * larger than the BO (VNPU_HUGE_BO_MIN): the helper only ever reads the
 * BO's pages, and neither a CPU mapping nor the device mapping reaches
 * past the BO's size, so the rest of the last huge folio is never used.
 */
static void vnpu_bo_use_gemfs(struct vnpu_device *vdev,
			      struct drm_gem_object *obj)
{
	size_t backing = obj->size;
	struct file *filp;

	if (!vdev->gemfs)
		return;
	if (backing >= VNPU_HUGE_BO_MIN)
		backing = ALIGN(backing, PMD_SIZE);
	filp = shmem_file_setup_with_mnt(vdev->gemfs, "vnpu bo", backing,
					 VM_NORESERVE);
	if (IS_ERR(filp))
		return;
	mapping_set_gfp_mask(filp->f_mapping,
			     mapping_gfp_mask(obj->filp->f_mapping));
	fput(obj->filp);
	obj->filp = filp;
}

static void vnpu_mapping_release(struct kref *kref)
{
	struct vnpu_mapping *map = container_of(kref, struct vnpu_mapping, refcount);
	struct drm_gem_object *obj = &map->bo->base.base;

	/* The BO outlives its mappings; see vnpu_gem_free(). */
	if (vnpu_as_unmap(map->as, &map->node, obj->size))
		vnpu_mmu_leak_bo(map->as->vdev, obj);
	vnpu_as_put(map->as);
	kfree(map);
}

/**
 * vnpu_mapping_put() - drop a mapping reference, unmapping on the last one
 * @map: mapping
 */
void vnpu_mapping_put(struct vnpu_mapping *map)
{
	kref_put(&map->refcount, vnpu_mapping_release);
}

/**
 * vnpu_bo_map() - find or create the BO's mapping in an address space
 * @bo: buffer
 * @as: address space
 *
 * Return: a referenced mapping or an ERR_PTR.
 */
struct vnpu_mapping *vnpu_bo_map(struct vnpu_bo *bo, struct vnpu_as *as)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct vnpu_mapping *map;
	struct sg_table *sgt;
	int ret;

	mutex_lock(&bo->lock);
	list_for_each_entry(map, &bo->mappings, link) {
		if (map->as == as) {
			kref_get(&map->refcount);
			goto out;
		}
	}

	/* Pins the pages until the BO is freed; mappings never outlive it. */
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		map = ERR_CAST(sgt);
		goto out;
	}

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map) {
		map = ERR_PTR(-ENOMEM);
		goto out;
	}
	kref_init(&map->refcount);
	map->bo = bo;
	ret = vnpu_as_map_sgt(as, &map->node, sgt, obj->size, !bo->readonly);
	if (ret) {
		kfree(map);
		map = ERR_PTR(ret);
		goto out;
	}
	map->as = vnpu_as_get(as);
	/* One reference for the list, one for the caller. */
	kref_get(&map->refcount);
	list_add_tail(&map->link, &bo->mappings);
out:
	mutex_unlock(&bo->lock);
	return map;
}

/*
 * A file dropped its last handle: unmap the BO from that file's space.
 * Jobs still running hold their own mapping references, so the unmap
 * happens when the last of them ends.
 */
static void vnpu_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct vnpu_bo *bo = to_vnpu_bo(obj);
	struct vnpu_as *as = READ_ONCE(fpriv->as);
	struct vnpu_mapping *map, *found = NULL;

	/* No address space yet: nothing of this file is mapped anywhere. */
	if (!as)
		return;
	mutex_lock(&bo->lock);
	list_for_each_entry(map, &bo->mappings, link) {
		if (map->as == as) {
			list_del(&map->link);
			found = map;
			break;
		}
	}
	mutex_unlock(&bo->lock);
	if (found)
		vnpu_mapping_put(found);
}

/* The BO is complete: from here on remove() must know about it. */
static void vnpu_bo_track(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	mutex_lock(&vdev->bo_lock);
	list_add_tail(&bo->dev_link, &vdev->bo_list);
	mutex_unlock(&vdev->bo_lock);
}

/*
 * An import's mapping for the device is the exporter's, and an exporter
 * that caches it (every DRM PRIME exporter: cache_sgt_mapping) unmaps it
 * only when the attachment goes, whatever dma_buf_unmap_attachment() is
 * told: so the attachment goes now.  The import keeps the dma-buf
 * reference it took, for the dma-buf's reservation object is the BO's,
 * until vnpu_gem_free(); without the attachment the helper frees it as a
 * BO without pages.  Nothing else looks at the attachment once the DRM
 * device is unplugged: every ioctl and a new mmap fail with -ENODEV, and
 * an mmap made before stays the exporter's.
 */
static void vnpu_gem_unbind_import(struct vnpu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct dma_buf_attachment *attach = obj->import_attach;

	/* The helper's table is the attachment's cached one. */
	dma_resv_lock(obj->resv, NULL);
	bo->base.sgt = NULL;
	dma_resv_unlock(obj->resv);
	bo->unbound_dmabuf = attach->dmabuf;
	WRITE_ONCE(obj->import_attach, NULL);
	/* Takes the reservation itself. */
	dma_buf_detach(bo->unbound_dmabuf, attach);
}

/**
 * vnpu_gem_unbind() - take every BO's pages away from a device being removed
 * @vdev: device in remove(), already quiesced
 *
 * The shmem helper keeps each BO's pages DMA-mapped for the device until
 * the BO is freed, and a file still open after the unbind can keep a BO
 * for as long as it likes: unmap them now, while the device is still
 * bound.  The pages stay (an mmap keeps working); a BO freed later finds
 * no scatter table and only drops its pages.  An import is detached from
 * its dma-buf.
 */
void vnpu_gem_unbind(struct vnpu_device *vdev)
{
	struct vnpu_bo *bo;

	mutex_lock(&vdev->bo_lock);
	list_for_each_entry(bo, &vdev->bo_list, dev_link) {
		struct drm_gem_object *obj = &bo->base.base;
		struct sg_table *sgt;

		if (obj->import_attach) {
			vnpu_gem_unbind_import(bo);
			continue;
		}
		/* The helper creates and frees the table under the resv. */
		dma_resv_lock(obj->resv, NULL);
		sgt = bo->base.sgt;
		bo->base.sgt = NULL;
		if (sgt) {
			dma_unmap_sgtable(vdev->drm.dev, sgt, DMA_BIDIRECTIONAL, 0);
			sg_free_table(sgt);
			kfree(sgt);
		}
		dma_resv_unlock(obj->resv);
	}
	mutex_unlock(&vdev->bo_lock);
}

static void vnpu_gem_free(struct drm_gem_object *obj)
{
	struct vnpu_device *vdev = to_vnpu_device(obj->dev);
	struct vnpu_bo *bo = to_vnpu_bo(obj);
	struct dma_buf *unbound_dmabuf = bo->unbound_dmabuf;
	struct vnpu_mapping *map, *tmp;

	/* First, so vnpu_gem_unbind() never sees a BO being freed. */
	mutex_lock(&vdev->bo_lock);
	list_del_init(&bo->dev_link);
	mutex_unlock(&vdev->bo_lock);

	/*
	 * Normally the last handle's close emptied the list.  A mapping can
	 * remain when BO_INFO raced with a close of the same handle, or when
	 * handle creation failed; no job can hold it any more since jobs
	 * hold a BO reference, so unmap it now, before the pages go.
	 */
	list_for_each_entry_safe(map, tmp, &bo->mappings, link) {
		list_del(&map->link);
		vnpu_mapping_put(map);
	}
	mutex_destroy(&bo->lock);
	drm_gem_shmem_free(&bo->base);
	/* Last: the helper locked the BO's reservation, the dma-buf's. */
	if (unbound_dmabuf)
		dma_buf_put(unbound_dmabuf);
}

static enum drm_gem_object_status vnpu_gem_status(struct drm_gem_object *obj)
{
	struct vnpu_bo *bo = to_vnpu_bo(obj);

	return bo->base.pages || obj->import_attach ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs vnpu_gem_funcs = {
	.free = vnpu_gem_free,
	.close = vnpu_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.status = vnpu_gem_status,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/**
 * vnpu_gem_create_object() - &drm_driver.gem_create_object hook
 * @dev: DRM device
 * @size: object size
 *
 * Also used by the shmem helper when importing a foreign dma-buf.
 *
 * Return: the embedded GEM object or an ERR_PTR.
 */
struct drm_gem_object *vnpu_gem_create_object(struct drm_device *dev,
					      size_t size)
{
	struct vnpu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	/* Listed only once complete: the helper's error paths just kfree(). */
	INIT_LIST_HEAD(&bo->dev_link);
	bo->base.base.funcs = &vnpu_gem_funcs;
	return &bo->base.base;
}

/**
 * vnpu_gem_prime_import_sg_table() - &drm_driver.gem_prime_import_sg_table
 * @dev: DRM device
 * @attach: the foreign dma-buf's attachment to this device
 * @sgt: its pages, mapped for this device
 *
 * Return: the new GEM object or an ERR_PTR.
 */
struct drm_gem_object *
vnpu_gem_prime_import_sg_table(struct drm_device *dev,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt)
{
	struct drm_gem_object *obj;

	obj = drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);
	if (!IS_ERR(obj))
		vnpu_bo_track(to_vnpu_device(dev), to_vnpu_bo(obj));
	return obj;
}

/**
 * vnpu_ioctl_bo_create() - DRM_IOCTL_VNPU_BO_CREATE
 * @dev: DRM device
 * @data: &struct drm_vnpu_bo_create
 * @file: caller
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vnpu_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct drm_vnpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct vnpu_mapping *map;
	struct vnpu_as *as;
	struct vnpu_bo *bo;
	u64 size;
	u32 handle;
	int ret, idx;

	ret = vnpu_check_bo_create(args, VNPU_MAX_BO_SIZE, &size);
	if (ret)
		return ret;
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	/* Mapping would wait for TLB invalidations a lost device never does. */
	if (READ_ONCE(to_vnpu_device(dev)->lost)) {
		ret = -ENODEV;
		goto out;
	}

	as = vnpu_file_as(fpriv);
	if (IS_ERR(as)) {
		ret = PTR_ERR(as);
		goto out;
	}

	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem)) {
		ret = PTR_ERR(shmem);
		goto out;
	}
	bo = container_of(shmem, struct vnpu_bo, base);
	vnpu_bo_use_gemfs(to_vnpu_device(dev), &shmem->base);
	bo->readonly = args->flags & DRM_VNPU_BO_DEVICE_READONLY;
	vnpu_bo_track(to_vnpu_device(dev), bo);

	map = vnpu_bo_map(bo, as);
	if (IS_ERR(map)) {
		drm_gem_object_put(&shmem->base);
		ret = PTR_ERR(map);
		goto out;
	}

	/*
	 * The handle goes last: once it exists another thread may close it,
	 * which would drop the list reference under our feet.
	 */
	args->va = map->node.start;
	args->size = shmem->base.size;
	vnpu_mapping_put(map);
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	drm_gem_object_put(&shmem->base);
	if (!ret)
		args->handle = handle;
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vnpu_ioctl_bo_info() - DRM_IOCTL_VNPU_BO_INFO
 * @dev: DRM device
 * @data: &struct drm_vnpu_bo_info
 * @file: caller
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vnpu_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct drm_vnpu_bo_info *args = data;
	struct drm_gem_object *obj;
	struct vnpu_mapping *map;
	struct vnpu_as *as;
	int ret, idx;

	ret = vnpu_check_bo_info(args);
	if (ret)
		return ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (!drm_dev_enter(dev, &idx)) {
		drm_gem_object_put(obj);
		return -ENODEV;
	}

	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		goto out;

	as = vnpu_file_as(fpriv);
	if (IS_ERR(as)) {
		ret = PTR_ERR(as);
		goto out;
	}
	map = vnpu_bo_map(to_vnpu_bo(obj), as);
	if (IS_ERR(map)) {
		ret = PTR_ERR(map);
		goto out;
	}
	args->va = map->node.start;
	args->size = obj->size;
	args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	vnpu_mapping_put(map);
out:
	drm_dev_exit(idx);
	drm_gem_object_put(obj);
	return ret;
}
