// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * debugfs: device state and the device's fault-injection registers, so
 * tests can provoke hangs, DMA errors and lost interrupts on demand;
 * raw_rtt, the bare doorbell->interrupt round trip of the hardware; and
 * bos, how each BO's pages reach the device.
 */

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <drm/drm_managed.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "vnpu_drv.h"

static int vnpu_state_show(struct seq_file *m, void *unused)
{
	struct vnpu_device *vdev = m->private;
	struct drm_printer p = drm_seq_file_printer(m);
	unsigned int i;
	int idx;

	drm_printf(&p, "platform: %s\n",
		   vdev->platform == VNPU_PLATFORM_EMULATED ? "emulated" : "silicon");
	drm_printf(&p, "timeout_ms: %u\n", vdev->timeout_ms);
	drm_printf(&p, "resets: %d\n", atomic_read(&vdev->reset_count));
	drm_printf(&p, "lost: %d\n", READ_ONCE(vdev->lost));
	drm_printf(&p, "mmu_faults: %d\n", atomic_read(&vdev->fault_count));
	drm_printf(&p, "tlb_timeouts: %d\n", atomic_read(&vdev->tlb_timeouts));
	drm_printf(&p, "leaked_pages: %ld\n",
		   atomic_long_read(&vdev->leaked_pages));
	drm_printf(&p, "live_jobs: %d\n", atomic_read(&vdev->live_jobs));
	drm_printf(&p, "huge_bo: %d\n", !!vdev->gemfs);
	if (vdev->hw_version >= VNPU_HW_VERSION(1, 1)) {
		drm_printf(&p, "limit_tensor_elems: %u\n", vdev->limits.tensor_elems);
		drm_printf(&p, "limit_tensor_bytes: %u\n", vdev->limits.tensor_bytes);
		drm_printf(&p, "limit_cmd_bytes: %u\n", vdev->limits.cmd_bytes);
		drm_printf(&p, "limit_cmd_macs: %llu\n", vdev->limits.cmd_macs);
		drm_printf(&p, "limit_reduction: %u\n", vdev->limits.reduction);
		drm_printf(&p, "limit_kernel_dim: %u\n", vdev->limits.kernel_dim);
		drm_printf(&p, "limit_channels: %u\n", vdev->limits.channels);
	} else {
		drm_printf(&p, "limits: not reported\n");
	}

	if (!drm_dev_enter(&vdev->drm, &idx))
		return 0;
	/* Registers read all ones in D3hot: wake the device up. */
	if (vnpu_rpm_get(vdev) < 0) {
		drm_dev_exit(idx);
		return 0;
	}
	drm_printf(&p, "status: %#x irq_status: %#x error_status: %#x\n",
		   vnpu_read(vdev, VNPU_REG_STATUS),
		   vnpu_read(vdev, VNPU_REG_IRQ_STATUS),
		   vnpu_read(vdev, VNPU_REG_ERROR_STATUS));
	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		drm_printf(&p, "queue %u: status %#x head %u tail %u seqno %llu\n",
			   i, vnpu_qread(q, VNPU_QREG_STATUS),
			   vnpu_qread(q, VNPU_QREG_HEAD),
			   vnpu_qread(q, VNPU_QREG_TAIL), q->seqno);
	}
	vnpu_rpm_put(vdev);
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnpu_state);

/*
 * One line per BO: its size, the DMA segments its pages form and the
 * largest of them.  The device moves a segment in one piece, so this is
 * what huge-page backing (vnpu_gemfs_init()) buys.  Lock order as in
 * vnpu_gem_unbind(): the BO list, then each BO's reservation, under
 * which the helper creates and frees the table.
 */
static int vnpu_bos_show(struct seq_file *m, void *unused)
{
	struct vnpu_device *vdev = m->private;
	struct vnpu_bo *bo;

	seq_puts(m, "size dma_segments largest_segment\n");
	mutex_lock(&vdev->bo_lock);
	list_for_each_entry(bo, &vdev->bo_list, dev_link) {
		struct drm_gem_object *obj = &bo->base.base;
		struct scatterlist *sg;
		unsigned int i, segs = 0;
		u64 largest = 0;

		dma_resv_lock(obj->resv, NULL);
		if (bo->base.sgt) {
			for_each_sgtable_dma_sg(bo->base.sgt, sg, i) {
				segs++;
				largest = max_t(u64, largest, sg_dma_len(sg));
			}
		}
		dma_resv_unlock(obj->resv);
		seq_printf(m, "%zu %u %llu\n", obj->size, segs, largest);
	}
	mutex_unlock(&vdev->bo_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnpu_bos);

/* Each knob arms the next N jobs with one kind of device fault. */
static int vnpu_inject_set(struct vnpu_device *vdev, u32 reg, u64 val)
{
	int idx, ret;

	if (val > U32_MAX)
		return -EINVAL;
	if (!(vdev->caps & VNPU_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	/* The injection counters survive D3hot; the registers need D0. */
	ret = vnpu_rpm_get(vdev);
	if (!ret) {
		vnpu_write(vdev, reg, val);
		vnpu_rpm_put(vdev);
	}
	drm_dev_exit(idx);
	return ret;
}

static int vnpu_inject_get(struct vnpu_device *vdev, u32 reg, u64 *val)
{
	int idx, ret;

	if (!(vdev->caps & VNPU_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	ret = vnpu_rpm_get(vdev);
	if (!ret) {
		*val = vnpu_read(vdev, reg);
		vnpu_rpm_put(vdev);
	}
	drm_dev_exit(idx);
	return ret;
}

#define VNPU_INJECT_ATTR(name, reg)					\
static const u32 vnpu_inject_##name##_reg = (reg);			\
static int vnpu_inject_##name##_set(void *data, u64 val)		\
{									\
	return vnpu_inject_set(data, vnpu_inject_##name##_reg, val);	\
}									\
static int vnpu_inject_##name##_get(void *data, u64 *val)		\
{									\
	return vnpu_inject_get(data, vnpu_inject_##name##_reg, val);	\
}									\
DEFINE_DEBUGFS_ATTRIBUTE(vnpu_inject_##name##_fops,			\
			 vnpu_inject_##name##_get,			\
			 vnpu_inject_##name##_set, "%llu\n")

VNPU_INJECT_ATTR(hang, VNPU_REG_DEBUG_INJECT_HANG);
VNPU_INJECT_ATTR(dma_error, VNPU_REG_DEBUG_INJECT_DMA_ERROR);
VNPU_INJECT_ATTR(lost_irq, VNPU_REG_DEBUG_INJECT_LOST_IRQ);
VNPU_INJECT_ATTR(wedge, VNPU_REG_DEBUG_INJECT_WEDGE);

#define VNPU_RAW_DEFAULT_COUNT	1000
#define VNPU_RAW_MAX_COUNT	100000
/* The queue the probe uses: where a single-queue client's jobs go. */
#define VNPU_RAW_QUEUE		0

/*
 * raw_rtt measures what a job costs the hardware path alone: a one-NOP
 * descriptor written straight into a ring, the doorbell, the device's
 * fetch and completion write, the MSI-X message and the interrupt
 * handler waking the prober.  No drm_sched, fence, syncobj or ioctl is
 * involved, so it is the floor under the null-job figure libnpu measures.
 * The command buffer lives in a context the probe creates and destroys
 * around each measurement, so no file's address space is involved either.
 */
struct vnpu_raw_ctx {
	struct vnpu_device *vdev;
	struct vnpu_as *as;
	struct page *page;
	struct sg_table sgt;
	struct drm_mm_node node;
};

static int vnpu_raw_ctx_init(struct vnpu_raw_ctx *rc, struct vnpu_device *vdev)
{
	struct vnpu_cmd_hdr *nop;
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->vdev = vdev;
	rc->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!rc->page)
		return -ENOMEM;
	nop = page_address(rc->page);
	nop->opcode = cpu_to_le16(VNPU_CMD_NOP);
	nop->flags = 0;
	nop->size = cpu_to_le32(sizeof(*nop));

	ret = sg_alloc_table(&rc->sgt, 1, GFP_KERNEL);
	if (ret)
		goto err_page;
	sg_set_page(rc->sgt.sgl, rc->page, PAGE_SIZE, 0);
	/* Mapping also makes the NOP visible to the device. */
	ret = dma_map_sgtable(vdev->drm.dev, &rc->sgt, DMA_TO_DEVICE, 0);
	if (ret)
		goto err_sgt;

	rc->as = vnpu_as_create(vdev);
	if (IS_ERR(rc->as)) {
		ret = PTR_ERR(rc->as);
		goto err_dma;
	}
	ret = vnpu_as_map_sgt(rc->as, &rc->node, &rc->sgt, VNPU_PAGE_SIZE,
			      false);
	if (ret)
		goto err_as;
	return 0;

err_as:
	vnpu_as_put(rc->as);
err_dma:
	dma_unmap_sgtable(vdev->drm.dev, &rc->sgt, DMA_TO_DEVICE, 0);
err_sgt:
	sg_free_table(&rc->sgt);
err_page:
	__free_page(rc->page);
	return ret;
}

static void vnpu_raw_ctx_fini(struct vnpu_raw_ctx *rc)
{
	struct vnpu_device *vdev = rc->vdev;

	vnpu_as_unmap(rc->as, &rc->node, VNPU_PAGE_SIZE);
	vnpu_as_put(rc->as);
	dma_unmap_sgtable(vdev->drm.dev, &rc->sgt, DMA_TO_DEVICE, 0);
	sg_free_table(&rc->sgt);
	__free_page(rc->page);
}

struct vnpu_raw_reset {
	struct work_struct work;
	struct vnpu_device *vdev;
};

static void vnpu_raw_reset_work(struct work_struct *work)
{
	struct vnpu_raw_reset *r = container_of(work, struct vnpu_raw_reset, work);

	vnpu_reset(r->vdev, NULL);
}

/*
 * A probe that never completed still sits on the ring, possibly with a
 * hung engine under it.  Reset on the ordered reset workqueue, as a
 * timed-out job would, so this never races a scheduler timeout handler.
 */
static void vnpu_raw_reset(struct vnpu_device *vdev)
{
	struct vnpu_raw_reset r = { .vdev = vdev };

	INIT_WORK_ONSTACK(&r.work, vnpu_raw_reset_work);
	queue_work(vdev->reset_wq, &r.work);
	flush_work(&r.work);
	destroy_work_on_stack(&r.work);
}

/* One round trip; caller holds raw_lock.  Returns ns or a negative errno. */
static s64 vnpu_raw_once(struct vnpu_raw_ctx *rc, struct vnpu_queue *q)
{
	struct vnpu_device *vdev = rc->vdev;
	unsigned long timeout = msecs_to_jiffies(vdev->timeout_ms);
	u64 seq = VNPU_SEQ_RAW | ++vdev->raw_next;
	unsigned long flags;
	ktime_t t0, t1;
	bool pending;
	int ret, idx;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;

	/* Not while a reset has the queues stopped. */
	mutex_lock(&vdev->reset_lock);
	t0 = ktime_get();
	ret = vnpu_queue_raw_submit(q, rc->as->ctx_id, rc->node.start,
				    sizeof(struct vnpu_cmd_hdr), seq);
	mutex_unlock(&vdev->reset_lock);
	if (ret)
		goto out;

	if (!wait_for_completion_timeout(&q->raw_done, timeout)) {
		/* A record whose interrupt was lost still ends the probe. */
		vnpu_queue_complete(q);
		spin_lock_irqsave(&q->lock, flags);
		pending = q->raw_seq == seq;
		spin_unlock_irqrestore(&q->lock, flags);
		if (pending) {
			drm_warn(&vdev->drm, "raw probe on queue %u timed out, resetting\n",
				 q->idx);
			vnpu_raw_reset(vdev);
		}
		/* The record or the reset completed it by now. */
		wait_for_completion(&q->raw_done);
		ret = -ETIMEDOUT;
		goto out;
	}
	t1 = ktime_get();

	spin_lock_irqsave(&q->lock, flags);
	ret = q->raw_status;
	spin_unlock_irqrestore(&q->lock, flags);
	if (ret > 0) {
		drm_dbg_driver(&vdev->drm, "raw probe ended with status %d\n", ret);
		ret = -EIO;
	}
out:
	drm_dev_exit(idx);
	return ret ? ret : ktime_to_ns(ktime_sub(t1, t0));
}

static int vnpu_cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return (x > y) - (x < y);
}

static int vnpu_raw_rtt_show(struct seq_file *m, void *unused)
{
	struct vnpu_device *vdev = m->private;
	struct vnpu_queue *q = &vdev->queues[VNPU_RAW_QUEUE];
	struct vnpu_raw_ctx rc;
	s64 *ns, total = 0;
	u32 i, n;
	int ret;

	ret = mutex_lock_interruptible(&vdev->raw_lock);
	if (ret)
		return ret;
	n = vdev->raw_count;
	ns = kvmalloc_array(n, sizeof(*ns), GFP_KERNEL);
	if (!ns) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* Keeps the device in D0 while probes are on the ring. */
	ret = vnpu_rpm_get(vdev);
	if (ret)
		goto out_free;
	ret = vnpu_raw_ctx_init(&rc, vdev);
	if (ret) {
		vnpu_rpm_put(vdev);
		goto out_free;
	}

	for (i = 0; i < n; i++) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		ns[i] = vnpu_raw_once(&rc, q);
		if (ns[i] < 0) {
			ret = ns[i];
			break;
		}
		total += ns[i];
	}
	vnpu_raw_ctx_fini(&rc);
	vnpu_rpm_put(vdev);
	if (ret)
		goto out_free;

	sort(ns, n, sizeof(*ns), vnpu_cmp_s64, NULL);
	seq_printf(m, "queue: %u\n", q->idx);
	seq_printf(m, "samples: %u\n", n);
	seq_printf(m, "min_ns: %lld\n", ns[0]);
	seq_printf(m, "median_ns: %lld\n", ns[n / 2]);
	seq_printf(m, "p99_ns: %lld\n", ns[min(n - 1, n * 99 / 100)]);
	seq_printf(m, "max_ns: %lld\n", ns[n - 1]);
	seq_printf(m, "total_ns: %lld\n", total);
out_free:
	kvfree(ns);
out_unlock:
	mutex_unlock(&vdev->raw_lock);
	return ret;
}

static int vnpu_raw_rtt_open(struct inode *inode, struct file *file)
{
	return single_open(file, vnpu_raw_rtt_show, inode->i_private);
}

/* Sets the number of round trips the next reads measure. */
static ssize_t vnpu_raw_rtt_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *off)
{
	struct seq_file *m = file->private_data;
	struct vnpu_device *vdev = m->private;
	u32 n;
	int ret;

	ret = kstrtou32_from_user(ubuf, len, 0, &n);
	if (ret)
		return ret;
	if (!n || n > VNPU_RAW_MAX_COUNT)
		return -EINVAL;
	ret = mutex_lock_interruptible(&vdev->raw_lock);
	if (ret)
		return ret;
	vdev->raw_count = n;
	mutex_unlock(&vdev->raw_lock);
	return len;
}

static const struct file_operations vnpu_raw_rtt_fops = {
	.owner = THIS_MODULE,
	.open = vnpu_raw_rtt_open,
	.read = seq_read,
	.write = vnpu_raw_rtt_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * vnpu_debugfs_init() - populate the DRM minor's debugfs directory
 * @vdev: registered device
 */
void vnpu_debugfs_init(struct vnpu_device *vdev)
{
	struct dentry *root = vdev->drm.debugfs_root;
	unsigned int i;

	debugfs_create_file("state", 0444, root, vdev, &vnpu_state_fops);
	debugfs_create_file("bos", 0444, root, vdev, &vnpu_bos_fops);
	debugfs_create_file_unsafe("inject_hang", 0600, root, vdev,
				   &vnpu_inject_hang_fops);
	debugfs_create_file_unsafe("inject_dma_error", 0600, root, vdev,
				   &vnpu_inject_dma_error_fops);
	debugfs_create_file_unsafe("inject_lost_irq", 0600, root, vdev,
				   &vnpu_inject_lost_irq_fops);
	debugfs_create_file_unsafe("inject_wedge", 0600, root, vdev,
				   &vnpu_inject_wedge_fops);

	if (drmm_mutex_init(&vdev->drm, &vdev->raw_lock)) {
		drm_warn(&vdev->drm, "no raw_rtt probe: out of memory\n");
		return;
	}
	vdev->raw_count = VNPU_RAW_DEFAULT_COUNT;
	for (i = 0; i < vdev->num_queues; i++)
		init_completion(&vdev->queues[i].raw_done);
	debugfs_create_file("raw_rtt", 0600, root, vdev, &vnpu_raw_rtt_fops);
}
