// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device MMU: the context table, per-file address spaces and TLB
 * maintenance.  Every open file gets its own context id and page tables,
 * so a job can only reach the memory mapped into its own file's space.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/scatterlist.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vnpu_drv.h"

#define VNPU_TLB_TIMEOUT_US	(100 * USEC_PER_MSEC)

/**
 * struct vnpu_pt_freed - a page table waiting for a TLB invalidation
 * @link: entry in &vnpu_as.freed
 * @table: the table's memory
 * @dma: its bus address
 *
 * The device may cache walks through a table, so a table the page-table
 * builder lets go of is freed only once an invalidation completed, and
 * never if one times out.
 */
struct vnpu_pt_freed {
	struct list_head link;
	__le64 *table;
	u64 dma;
};

static __le64 *vnpu_pt_dma_alloc(void *priv, u64 *dma)
{
	struct vnpu_as *as = priv;
	dma_addr_t addr;
	void *p;

	p = dma_alloc_coherent(as->vdev->drm.dev, VNPU_PAGE_SIZE, &addr,
			       GFP_KERNEL);
	if (!p)
		return NULL;
	*dma = addr;
	return p;
}

/* Called with as->lock held, or from the last reference's release. */
static void vnpu_pt_dma_free(void *priv, __le64 *table, u64 dma)
{
	struct vnpu_as *as = priv;
	struct vnpu_pt_freed *f;

	/* vnpu_mmu_unbind(): the device is stopped and caches nothing. */
	if (as->unbound) {
		dma_free_coherent(as->vdev->drm.dev, VNPU_PAGE_SIZE, table, dma);
		return;
	}
	f = kmalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		/* Cannot track it until the invalidation: keep it. */
		atomic_long_inc(&as->vdev->leaked_pages);
		return;
	}
	f->table = table;
	f->dma = dma;
	list_add_tail(&f->link, &as->freed);
}

static const struct vnpu_pt_alloc_ops vnpu_pt_dma_ops = {
	.alloc = vnpu_pt_dma_alloc,
	.free = vnpu_pt_dma_free,
};

/*
 * After an invalidation: free the tables let go of before it, or, if it
 * did not complete, leak them, since the device may still walk them.
 */
static void vnpu_as_free_tables(struct vnpu_as *as, bool invalidated)
{
	struct vnpu_device *vdev = as->vdev;
	struct vnpu_pt_freed *f, *tmp;

	list_for_each_entry_safe(f, tmp, &as->freed, link) {
		list_del(&f->link);
		if (invalidated)
			dma_free_coherent(vdev->drm.dev, VNPU_PAGE_SIZE,
					  f->table, f->dma);
		else
			atomic_long_inc(&vdev->leaked_pages);
		kfree(f);
	}
}

static void vnpu_ctx_table_free(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);

	/* Already gone if the device was unbound; see vnpu_mmu_unbind(). */
	if (vdev->ctx_table)
		dma_free_coherent(drm->dev, VNPU_PAGE_SIZE, vdev->ctx_table,
				  vdev->ctx_table_dma);
	vdev->ctx_table = NULL;
	ida_destroy(&vdev->ctx_ida);
}

/**
 * vnpu_mmu_init() - allocate the context table
 * @vdev: device
 *
 * The table is freed at unbind (vnpu_mmu_unbind()), or with the DRM device
 * if probe fails.
 *
 * Return: 0 or -ENOMEM.
 */
int vnpu_mmu_init(struct vnpu_device *vdev)
{
	BUILD_BUG_ON(VNPU_MAX_CONTEXTS * sizeof(struct vnpu_hw_ctx_entry) >
		     VNPU_PAGE_SIZE);

	ida_init(&vdev->ctx_ida);
	vdev->ctx_table = dma_alloc_coherent(vdev->drm.dev, VNPU_PAGE_SIZE,
					     &vdev->ctx_table_dma, GFP_KERNEL);
	if (!vdev->ctx_table)
		return -ENOMEM;
	return drmm_add_action_or_reset(&vdev->drm, vnpu_ctx_table_free, NULL);
}

/**
 * vnpu_mmu_hw_init() - point the device at the context table
 * @vdev: device, after a reset
 *
 * Caller holds &vnpu_device.mmu_lock (or is probing), so no TLB
 * invalidation is in flight while the MMU is reprogrammed.
 */
void vnpu_mmu_hw_init(struct vnpu_device *vdev)
{
	vnpu_write(vdev, VNPU_REG_MMU_CTX_TABLE_LO, lower_32_bits(vdev->ctx_table_dma));
	vnpu_write(vdev, VNPU_REG_MMU_CTX_TABLE_HI, upper_32_bits(vdev->ctx_table_dma));
	vnpu_write(vdev, VNPU_REG_MMU_CTX_COUNT, vdev->max_contexts);
	vnpu_write(vdev, VNPU_REG_MMU_TLB_INVAL, VNPU_TLB_INVAL_ALL);
	vnpu_write(vdev, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
}

/*
 * Make page-table or context-table stores visible to the device and wait
 * until it dropped every cached translation of @ctx.  Caller holds
 * vdev->mmu_lock, so invalidation sequence numbers are not interleaved and
 * a reset (which holds it around the MMU re-initialisation) is not under
 * way.  On a device that is gone nothing fetches any more: success.  A
 * powered-down device caches nothing, and vnpu_power_up() invalidates
 * everything before it fetches again: success too.
 *
 * Return: 0, or -ETIMEDOUT when the device did not confirm in time; the
 * caller must then not free memory the old translations reached.
 */
static int vnpu_tlb_invalidate(struct vnpu_device *vdev, u32 ctx)
{
	u32 seq, cur;
	int idx, ret;

	lockdep_assert_held(&vdev->mmu_lock);
	if (vdev->powered_down || !drm_dev_enter(&vdev->drm, &idx))
		return 0;

	/* The coherent stores must land before the device re-walks. */
	wmb();
	seq = vnpu_read(vdev, VNPU_REG_MMU_TLB_INVAL_SEQ);
	vnpu_write(vdev, VNPU_REG_MMU_TLB_INVAL, ctx & VNPU_TLB_INVAL_CTX_MASK);
	ret = readl_poll_timeout(vdev->regs + VNPU_REG_MMU_TLB_INVAL_SEQ, cur,
				 cur != seq, 10, VNPU_TLB_TIMEOUT_US);
	if (ret) {
		atomic_inc(&vdev->tlb_timeouts);
		dev_warn_ratelimited(vdev->drm.dev,
				     "TLB invalidation of ctx %u timed out; leaking the pages it may still reach\n",
				     ctx);
	}
	drm_dev_exit(idx);
	return ret;
}

/**
 * vnpu_mmu_leak_bo() - keep a BO's pages forever
 * @vdev: device
 * @obj: BO whose unmapping was not confirmed by the device
 *
 * The device may still hold translations to the pages, so they must never
 * be reused: take a page reference the BO's release does not drop (for an
 * import, a reference on the dma-buf).  Counted in debugfs.
 */
void vnpu_mmu_leak_bo(struct vnpu_device *vdev, struct drm_gem_object *obj)
{
	struct drm_gem_shmem_object *shmem = to_drm_gem_shmem_obj(obj);
	size_t i, n = obj->size >> PAGE_SHIFT;

	if (obj->import_attach) {
		get_dma_buf(obj->import_attach->dmabuf);
	} else if (shmem->pages) {
		for (i = 0; i < n; i++)
			get_page(shmem->pages[i]);
	} else {
		return;
	}
	atomic_long_add(n, &vdev->leaked_pages);
}

/**
 * vnpu_as_create() - a fresh address space with its own context id
 * @vdev: device
 *
 * Return: the address space or an ERR_PTR: -ENOSPC when every context id
 * is taken, -ENOMEM.
 */
struct vnpu_as *vnpu_as_create(struct vnpu_device *vdev)
{
	struct vnpu_as *as;
	int ret;

	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return ERR_PTR(-ENOMEM);
	kref_init(&as->refcount);
	as->vdev = vdev;
	mutex_init(&as->lock);
	INIT_LIST_HEAD(&as->freed);
	drm_mm_init(&as->mm, VNPU_VA_START, vdev->va_end - VNPU_VA_START);

	ret = ida_alloc_range(&vdev->ctx_ida, VNPU_FIRST_CTX,
			      vdev->max_contexts - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_mm;
	as->ctx_id = ret;

	ret = vnpu_pt_init(&as->pt, &vnpu_pt_dma_ops, as);
	if (ret)
		goto err_ctx;

	mutex_lock(&vdev->mmu_lock);
	vdev->ctx_table[as->ctx_id].reserved = 0;
	WRITE_ONCE(vdev->ctx_table[as->ctx_id].pt_root,
		   cpu_to_le64(vnpu_pt_root_dma(&as->pt) | VNPU_CTX_VALID));
	vnpu_tlb_invalidate(vdev, as->ctx_id);
	list_add_tail(&as->link, &vdev->as_list);
	mutex_unlock(&vdev->mmu_lock);
	return as;

err_ctx:
	ida_free(&vdev->ctx_ida, as->ctx_id);
err_mm:
	drm_mm_takedown(&as->mm);
	mutex_destroy(&as->lock);
	kfree(as);
	return ERR_PTR(ret);
}

static void vnpu_as_release(struct kref *kref)
{
	struct vnpu_as *as = container_of(kref, struct vnpu_as, refcount);
	struct vnpu_device *vdev = as->vdev;
	int ret;

	/*
	 * Every mapping and job holds a reference, so nothing can be in
	 * flight in this context any more.  Invalidate the entry before the
	 * tables are freed so a stale descriptor cannot walk freed memory.
	 */
	mutex_lock(&vdev->mmu_lock);
	list_del(&as->link);
	/* No context table any more once the device was unbound. */
	if (vdev->ctx_table)
		WRITE_ONCE(vdev->ctx_table[as->ctx_id].pt_root, 0);
	ret = vnpu_tlb_invalidate(vdev, as->ctx_id);
	mutex_unlock(&vdev->mmu_lock);

	/* After an unbind, vnpu_mmu_unbind() freed the tables. */
	if (!as->unbound) {
		vnpu_pt_fini(&as->pt);
		vnpu_as_free_tables(as, !ret);
	}
	drm_mm_takedown(&as->mm);
	/*
	 * The device may still translate for this context id: never hand it
	 * to another file, whose jobs would reach the old pages.
	 */
	if (!ret)
		ida_free(&vdev->ctx_ida, as->ctx_id);
	mutex_destroy(&as->lock);
	kfree(as);
}

/**
 * vnpu_as_get() - take a reference
 * @as: address space
 *
 * Return: @as.
 */
struct vnpu_as *vnpu_as_get(struct vnpu_as *as)
{
	kref_get(&as->refcount);
	return as;
}

/**
 * vnpu_as_put() - drop a reference, freeing the context on the last one
 * @as: address space
 */
void vnpu_as_put(struct vnpu_as *as)
{
	kref_put(&as->refcount, vnpu_as_release);
}

/**
 * vnpu_as_map_sgt() - allocate VA and map a scatter table there
 * @as: address space
 * @node: zeroed node, receives the VA range
 * @sgt: DMA-mapped pages
 * @size: bytes to map, page aligned, at most the table's length
 * @writable: grant device writes
 *
 * Return: 0, -ENOSPC when the address space is full, -EINVAL, -ENOMEM.
 */
int vnpu_as_map_sgt(struct vnpu_as *as, struct drm_mm_node *node,
		    struct sg_table *sgt, u64 size, bool writable)
{
	struct scatterlist *sg;
	u64 va, done = 0;
	unsigned int i;
	int ret, inval;

	mutex_lock(&as->lock);
	if (as->unbound) {
		ret = -ENODEV;
		goto out;
	}
	ret = vnpu_va_alloc(&as->mm, node, size);
	if (ret)
		goto out;

	va = node->start;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 len = min_t(u64, sg_dma_len(sg), size - done);

		if (!len)
			break;
		/* The device MMU has only 4 KiB pages. */
		if ((sg_dma_address(sg) | len) & (VNPU_PAGE_SIZE - 1)) {
			ret = -EINVAL;
			break;
		}
		ret = vnpu_pt_map(&as->pt, va + done, sg_dma_address(sg), len,
				  writable);
		if (ret)
			break;
		done += len;
	}
	if (!ret && done != size)
		ret = -EINVAL;
	if (ret) {
		if (done)
			vnpu_pt_unmap(&as->pt, va, done);
		drm_mm_remove_node(node);
	}
	/*
	 * Even a pure addition invalidates: the device may cache walks of
	 * intermediate tables, and failure cleanup may have freed tables.
	 */
	mutex_lock(&as->vdev->mmu_lock);
	inval = vnpu_tlb_invalidate(as->vdev, as->ctx_id);
	mutex_unlock(&as->vdev->mmu_lock);
	vnpu_as_free_tables(as, !inval);
out:
	mutex_unlock(&as->lock);
	return ret;
}

/**
 * vnpu_as_unmap() - unmap a range and release its VA
 * @as: address space
 * @node: node from vnpu_as_map_sgt()
 * @size: bytes mapped
 *
 * Returns 0 only after the device can no longer use the translations, so
 * the caller may free the pages afterwards.
 *
 * Return: 0, or -ETIMEDOUT when the device did not confirm the TLB
 * invalidation: the caller must then never free the pages (see
 * vnpu_mmu_leak_bo()).
 */
int vnpu_as_unmap(struct vnpu_as *as, struct drm_mm_node *node, u64 size)
{
	struct vnpu_device *vdev = as->vdev;
	int ret;

	mutex_lock(&as->lock);
	if (as->unbound) {
		/* No tables and no device: nothing can reach the pages. */
		drm_mm_remove_node(node);
		mutex_unlock(&as->lock);
		return 0;
	}
	vnpu_pt_unmap(&as->pt, node->start, size);
	drm_mm_remove_node(node);
	mutex_lock(&vdev->mmu_lock);
	ret = vnpu_tlb_invalidate(vdev, as->ctx_id);
	mutex_unlock(&vdev->mmu_lock);
	vnpu_as_free_tables(as, !ret);
	mutex_unlock(&as->lock);
	return ret;
}

/**
 * vnpu_mmu_unbind() - free the device's translation tables at unbind
 * @vdev: device in remove(), already stopped
 *
 * Files still open keep their address spaces (a later unmap or close must
 * find them), but no DMA memory may outlive the binding: every space's
 * page tables and the context table are freed now, and the spaces are
 * marked so they never touch either again.  A space whose last reference
 * is already gone frees its own tables.  Tables leaked after a TLB
 * invalidation timeout stay leaked.
 *
 * Takes &vnpu_device.mmu_lock and each &vnpu_as.lock, never both at once
 * (the unmap path nests them the other way round).
 */
void vnpu_mmu_unbind(struct vnpu_device *vdev)
{
	struct vnpu_as *as, *found;

	for (;;) {
		found = NULL;
		mutex_lock(&vdev->mmu_lock);
		list_for_each_entry(as, &vdev->as_list, link) {
			if (!READ_ONCE(as->unbound) &&
			    kref_get_unless_zero(&as->refcount)) {
				found = as;
				break;
			}
		}
		mutex_unlock(&vdev->mmu_lock);
		if (!found)
			break;

		mutex_lock(&found->lock);
		WRITE_ONCE(found->unbound, true);
		vnpu_pt_fini(&found->pt);
		vnpu_as_free_tables(found, true);
		mutex_unlock(&found->lock);
		vnpu_as_put(found);
	}

	mutex_lock(&vdev->mmu_lock);
	if (vdev->ctx_table)
		dma_free_coherent(vdev->drm.dev, VNPU_PAGE_SIZE, vdev->ctx_table,
				  vdev->ctx_table_dma);
	vdev->ctx_table = NULL;
	mutex_unlock(&vdev->mmu_lock);
}
