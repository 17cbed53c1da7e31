// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * PCI probe, device bring-up, file lifetime and the ioctl table.
 */

#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/uaccess.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>

#include "vnpu_drv.h"

/*
 * Longest job timeout accepted: scaled for an emulator that is ten
 * minutes, and beyond that a hang would look like a dead machine.
 */
#define VNPU_TIMEOUT_MS_MAX	60000

static unsigned int vnpu_timeout_ms = 1000;

static int vnpu_timeout_ms_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint_minmax(val, kp, 1, VNPU_TIMEOUT_MS_MAX);

	if (ret)
		pr_err("vnpu: timeout_ms=%s refused: must be 1..%u\n", val,
		       VNPU_TIMEOUT_MS_MAX);
	return ret;
}

static const struct kernel_param_ops vnpu_timeout_ms_ops = {
	.set = vnpu_timeout_ms_set,
	.get = param_get_uint,
};

module_param_cb(timeout_ms, &vnpu_timeout_ms_ops, &vnpu_timeout_ms, 0444);
MODULE_PARM_DESC(timeout_ms,
		 "Job timeout on silicon in ms, 1..60000, scaled 10x on an emulator (default 1000)");

/* CAPS bits this driver knows; QUERY reports no others. */
#define VNPU_CAPS_KNOWN	(VNPU_CAP_MMU | VNPU_CAP_COMPUTE | VNPU_CAP_TIMESTAMP | \
			 VNPU_CAP_FAULT_INJECT | VNPU_CAP_CYCLE_MODEL)

/* TCG runs the guest an order of magnitude slower than silicon would. */
#define VNPU_EMULATED_TIMEOUT_SCALE	10
#define VNPU_READY_TIMEOUT_US		(3 * USEC_PER_SEC)
/*
 * Idle time before runtime suspend, scaled like the job timeout: long
 * enough that back-to-back jobs do not pay a D3hot round trip each.
 */
#define VNPU_AUTOSUSPEND_MS		100

static void vnpu_queue_hw_init(struct vnpu_queue *q)
{
	vnpu_qwrite(q, VNPU_QREG_RING_LO, lower_32_bits(q->ring_dma));
	vnpu_qwrite(q, VNPU_QREG_RING_HI, upper_32_bits(q->ring_dma));
	vnpu_qwrite(q, VNPU_QREG_RING_SIZE, VNPU_RING_ENTRIES);
	vnpu_qwrite(q, VNPU_QREG_COMPL_LO, lower_32_bits(q->compl_dma));
	vnpu_qwrite(q, VNPU_QREG_COMPL_HI, upper_32_bits(q->compl_dma));
	vnpu_qwrite(q, VNPU_QREG_PRIORITY, 0);
	vnpu_qwrite(q, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
}

/**
 * vnpu_hw_wait_ready() - wait for a requested reset to complete
 * @vdev: device, after a write of CONTROL.SOFT_RESET
 *
 * Once STATUS reads READY | IDLE, no job from before the reset writes
 * memory any more, so the completion rings hold their final contents.
 * An engine may still be abandoning a job that hung before the reset, and
 * the device refuses to enable its queue until then.  Sleeps: never call
 * with a spinlock held.
 *
 * Return: 0, or -ETIMEDOUT when the device does not come back.
 */
int vnpu_hw_wait_ready(struct vnpu_device *vdev)
{
	u32 st;

	return read_poll_timeout(vnpu_read, st,
				 (st & (VNPU_STATUS_READY | VNPU_STATUS_IDLE)) ==
				 (VNPU_STATUS_READY | VNPU_STATUS_IDLE),
				 1000, VNPU_READY_TIMEOUT_US, false, vdev,
				 VNPU_REG_STATUS);
}

/**
 * vnpu_hw_start() - reset the device and program it from scratch
 * @vdev: device
 *
 * Used at probe and by recovery: soft reset, context table, queues,
 * interrupts, enable.  The rings must be empty.
 *
 * Return: 0, -ETIMEDOUT when the device does not come back, -EIO when a
 * queue does not enable.
 */
int vnpu_hw_start(struct vnpu_device *vdev)
{
	unsigned int i;
	int ret;

	vnpu_write(vdev, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
	ret = vnpu_hw_wait_ready(vdev);
	if (ret)
		return ret;

	/* Bus mastering must be on before the device fetches anything. */
	pci_set_master(vdev->pdev);
	vnpu_mmu_hw_init(vdev);
	vnpu_write(vdev, VNPU_REG_IRQ_STATUS, ~0u);
	vnpu_write(vdev, VNPU_REG_ERROR_STATUS, ~0u);

	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		vnpu_queue_hw_init(q);
		if (!(vnpu_qread(q, VNPU_QREG_STATUS) & VNPU_QSTATUS_ENABLED) ||
		    vnpu_qread(q, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR) {
			drm_err(&vdev->drm, "queue %u did not enable\n", i);
			return -EIO;
		}
	}

	vnpu_write(vdev, VNPU_REG_IRQ_MASK,
		   GENMASK(vdev->num_queues - 1, 0) | VNPU_IRQ_MMU_FAULT |
		   VNPU_IRQ_ERROR);
	vnpu_write(vdev, VNPU_REG_CONTROL, VNPU_CONTROL_ENABLE);
	return 0;
}

/**
 * vnpu_hw_stop() - quiesce the device
 * @vdev: device
 *
 * After this no interrupt handler runs and the device fetches nothing.
 */
void vnpu_hw_stop(struct vnpu_device *vdev)
{
	unsigned long flags;
	unsigned int i;

	/*
	 * A reset returns HEAD to 0: no completion handler may read it from
	 * here on, whatever interrupt is still on its way.
	 */
	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		spin_lock_irqsave(&q->lock, flags);
		q->stopped = true;
		spin_unlock_irqrestore(&q->lock, flags);
	}
	vnpu_write(vdev, VNPU_REG_IRQ_MASK, 0);
	vnpu_write(vdev, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
	vnpu_irq_sync(vdev);
}

/*
 * Power management
 *
 * The device keeps no state in D3hot.  Everything it needs lives in
 * system memory (context table, page tables, rings), so powering it up is
 * vnpu_hw_start() on empty rings, the same bring-up as probe and reset.
 *
 * Runtime PM: every job holds a reference from SUBMIT until it is
 * released (&vnpu_device.pm_jobs), so the device is in D0 whenever a job
 * exists, queued or running; debugfs takes one around register accesses.
 * Once userspace allowed runtime PM (power/control = auto), after
 * VNPU_AUTOSUSPEND_MS without a reference the device is quiesced and the
 * PCI core puts it in D3hot; the next SUBMIT resumes it.
 *
 * System sleep: userspace is frozen, so no job is submitted any more; the
 * ones submitted get the job timeout to finish, after which the suspend is
 * refused with -EBUSY rather than dropping them.  Resume reprograms the
 * device and jobs continue with the next SUBMIT.
 *
 * Locking: vnpu_power_down() and vnpu_power_up() hold
 * &vnpu_device.reset_lock (no reset or raw probe runs meanwhile) and
 * &vnpu_device.mmu_lock (no TLB invalidation touches the device while
 * &vnpu_device.powered_down changes).
 */

/**
 * vnpu_rpm_get() - keep the device in D0, resuming it if needed
 * @vdev: device
 *
 * Sleeps; not for the fence signalling paths.
 *
 * Return: 0 or a negative errno from the resume.
 */
int vnpu_rpm_get(struct vnpu_device *vdev)
{
	int ret = pm_runtime_resume_and_get(vdev->drm.dev);

	if (ret < 0)
		drm_err_ratelimited(&vdev->drm, "cannot resume the device: %d\n",
				    ret);
	return ret;
}

/**
 * vnpu_rpm_put() - drop a vnpu_rpm_get() reference
 * @vdev: device
 *
 * The device suspends once it stayed idle for the autosuspend delay.
 */
void vnpu_rpm_put(struct vnpu_device *vdev)
{
	pm_runtime_mark_last_busy(vdev->drm.dev);
	pm_runtime_put_autosuspend(vdev->drm.dev);
}

/**
 * vnpu_job_rpm_get() - a runtime PM reference for a new job
 * @vdev: device; the caller is inside drm_dev_enter()
 *
 * Return: 0 or a negative errno from the resume.
 */
int vnpu_job_rpm_get(struct vnpu_device *vdev)
{
	int ret = vnpu_rpm_get(vdev);

	if (!ret)
		atomic_inc(&vdev->pm_jobs);
	return ret;
}

/**
 * vnpu_job_rpm_put() - drop a job's runtime PM reference
 * @vdev: device
 *
 * A job can outlive the PCI binding; remove() then dropped its reference
 * already, since the PCI core rebalances the usage count at unbind.
 */
void vnpu_job_rpm_put(struct vnpu_device *vdev)
{
	int idx;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return;
	atomic_dec(&vdev->pm_jobs);
	vnpu_rpm_put(vdev);
	drm_dev_exit(idx);
}

/* Forget the ring positions: a powered-down device restarts at slot 0. */
static void vnpu_queue_ring_reset(struct vnpu_queue *q)
{
	spin_lock_irq(&q->lock);
	vnpu_track_clear(&q->track);
	memset(q->ring, 0, VNPU_RING_ENTRIES * sizeof(*q->ring));
	memset(q->compl, 0, VNPU_RING_ENTRIES * sizeof(*q->compl));
	spin_unlock_irq(&q->lock);
}

static bool vnpu_queue_empty(struct vnpu_queue *q)
{
	bool empty;

	spin_lock_irq(&q->lock);
	empty = !vnpu_track_used(&q->track);
	spin_unlock_irq(&q->lock);
	return empty;
}

/*
 * Quiesce an idle device before D3hot.  -EBUSY if anything is still on a
 * ring (a raw probe, or a job a system suspend did not wait out).
 */
static int vnpu_power_down(struct vnpu_device *vdev)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&vdev->reset_lock);
	for (i = 0; i < vdev->num_queues; i++)
		if (!vnpu_queue_empty(&vdev->queues[i]))
			ret = -EBUSY;
	if (!ret) {
		mutex_lock(&vdev->mmu_lock);
		vnpu_hw_stop(vdev);
		vdev->powered_down = true;
		mutex_unlock(&vdev->mmu_lock);
	}
	mutex_unlock(&vdev->reset_lock);
	return ret;
}

/*
 * Program the device from scratch after D3hot.  A device that does not
 * come back is lost, as after a failed reset: its jobs end DEVICE_LOST.
 */
static void vnpu_power_up(struct vnpu_device *vdev)
{
	unsigned long flags;
	unsigned int i;
	int ret;

	mutex_lock(&vdev->reset_lock);
	mutex_lock(&vdev->mmu_lock);
	vdev->powered_down = false;
	for (i = 0; i < vdev->num_queues; i++)
		vnpu_queue_ring_reset(&vdev->queues[i]);
	ret = vdev->lost ? -ENODEV : vnpu_hw_start(vdev);
	if (!ret) {
		for (i = 0; i < vdev->num_queues; i++) {
			struct vnpu_queue *q = &vdev->queues[i];

			spin_lock_irqsave(&q->lock, flags);
			q->stopped = false;
			spin_unlock_irqrestore(&q->lock, flags);
		}
	} else if (!vdev->lost) {
		drm_err(&vdev->drm, "device did not come back from D3hot (%d): lost\n",
			ret);
		WRITE_ONCE(vdev->lost, true);
		vnpu_write(vdev, VNPU_REG_IRQ_MASK, 0);
		vnpu_irq_sync(vdev);
	}
	mutex_unlock(&vdev->mmu_lock);
	mutex_unlock(&vdev->reset_lock);
}

static int vnpu_pm_runtime_suspend(struct device *dev)
{
	struct vnpu_device *vdev = pci_get_drvdata(to_pci_dev(dev));

	return vnpu_power_down(vdev);
}

static int vnpu_pm_runtime_resume(struct device *dev)
{
	struct vnpu_device *vdev = pci_get_drvdata(to_pci_dev(dev));

	vnpu_power_up(vdev);
	return 0;
}

static int vnpu_pm_suspend(struct device *dev)
{
	struct vnpu_device *vdev = pci_get_drvdata(to_pci_dev(dev));

	if (!wait_event_timeout(vdev->jobs_wq, !atomic_read(&vdev->live_jobs),
				msecs_to_jiffies(vdev->timeout_ms))) {
		drm_err(&vdev->drm, "%d jobs did not finish, refusing to suspend\n",
			atomic_read(&vdev->live_jobs));
		return -EBUSY;
	}
	return vnpu_power_down(vdev);
}

static int vnpu_pm_resume(struct device *dev)
{
	struct vnpu_device *vdev = pci_get_drvdata(to_pci_dev(dev));

	vnpu_power_up(vdev);
	return 0;
}

static const struct dev_pm_ops vnpu_pm_ops = {
	SYSTEM_SLEEP_PM_OPS(vnpu_pm_suspend, vnpu_pm_resume)
	RUNTIME_PM_OPS(vnpu_pm_runtime_suspend, vnpu_pm_runtime_resume, NULL)
};

static void vnpu_file_priv_release(struct kref *kref)
{
	struct vnpu_file_priv *fpriv =
		container_of(kref, struct vnpu_file_priv, refcount);
	unsigned int i;

	for (i = 0; fpriv->records && i < VNPU_JOB_RECORDS; i++) {
		dma_fence_put(fpriv->records[i].fence);
		dma_fence_put(fpriv->records[i].hw_fence);
	}
	kvfree(fpriv->records);
	if (fpriv->as)
		vnpu_as_put(fpriv->as);
	mutex_destroy(&fpriv->lock);
	kfree(fpriv);
}

/**
 * vnpu_file_priv_put() - drop a file reference
 * @fpriv: file state
 */
void vnpu_file_priv_put(struct vnpu_file_priv *fpriv)
{
	kref_put(&fpriv->refcount, vnpu_file_priv_release);
}

/**
 * vnpu_file_as() - the file's address space, created on first use
 * @fpriv: file state
 *
 * Opening a file takes neither a context id nor page tables, so a process
 * holding many idle files locks nobody out; the first BO or SUBMIT does.
 *
 * Return: the address space (the file's reference) or an ERR_PTR:
 * -ENOSPC when every context id is taken, -ENOMEM.
 */
struct vnpu_as *vnpu_file_as(struct vnpu_file_priv *fpriv)
{
	/* Pairs with the release below: a seen pointer is initialised. */
	struct vnpu_as *as = smp_load_acquire(&fpriv->as);

	if (as)
		return as;
	mutex_lock(&fpriv->lock);
	as = fpriv->as;
	if (as)
		goto out;
	as = vnpu_as_create(fpriv->vdev);
	if (IS_ERR(as))
		goto out;
	/* Publish only a fully initialised space; see above. */
	smp_store_release(&fpriv->as, as);
out:
	mutex_unlock(&fpriv->lock);
	return as;
}

/**
 * vnpu_file_records() - allocate the job records on the first SUBMIT
 * @fpriv: file state
 *
 * Return: 0 or -ENOMEM.
 */
int vnpu_file_records(struct vnpu_file_priv *fpriv)
{
	struct vnpu_job_record *records;
	int ret = 0;

	/* Pairs with the release below: seen records are zeroed. */
	if (smp_load_acquire(&fpriv->records))
		return 0;
	mutex_lock(&fpriv->lock);
	if (!fpriv->records) {
		records = kvcalloc(VNPU_JOB_RECORDS, sizeof(*records),
				   GFP_KERNEL);
		if (records) {
			spin_lock_irq(&fpriv->rec_lock);
			/* Publish the zeroed array; see above. */
			smp_store_release(&fpriv->records, records);
			spin_unlock_irq(&fpriv->rec_lock);
		} else {
			ret = -ENOMEM;
		}
	}
	mutex_unlock(&fpriv->lock);
	return ret;
}

static int vnpu_open(struct drm_device *dev, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(dev);
	struct vnpu_file_priv *fpriv;
	int ret, idx;

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv) {
		ret = -ENOMEM;
		goto out;
	}
	kref_init(&fpriv->refcount);
	fpriv->vdev = vdev;
	mutex_init(&fpriv->lock);
	init_waitqueue_head(&fpriv->unfinished_wq);
	spin_lock_init(&fpriv->rec_lock);
	fpriv->next_job_id = 1;

	ret = vnpu_file_entities_init(fpriv);
	if (ret)
		goto err_free;

	file->driver_priv = fpriv;
	drm_dev_exit(idx);
	return 0;

err_free:
	mutex_destroy(&fpriv->lock);
	kfree(fpriv);
out:
	drm_dev_exit(idx);
	return ret;
}

static void vnpu_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;

	vnpu_file_entities_fini(fpriv);
	vnpu_file_priv_put(fpriv);
}

/* Appending fields must keep the 1.0 prefix where older userspace reads it. */
static_assert(offsetof(struct drm_vnpu_device_info, limit_tensor_elems) == 72);
static_assert(sizeof(struct drm_vnpu_device_info) == 104);

static int vnpu_ioctl_query(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(dev);
	struct drm_vnpu_query *args = data;
	struct drm_vnpu_device_info info = {};
	void __user *ptr = u64_to_user_ptr(args->data);
	u32 len;
	int ret;

	ret = vnpu_check_query(args);
	if (ret)
		return ret;

	if (!args->size) {
		args->size = sizeof(info);
		return 0;
	}

	info.pci_vendor = vdev->pdev->vendor;
	info.pci_device = vdev->pdev->device;
	info.hw_version = vdev->hw_version;
	info.caps = vdev->caps & VNPU_CAPS_KNOWN;
	info.platform = vdev->platform;
	info.num_queues = vdev->num_queues;
	info.num_engines = vdev->num_engines;
	info.va_bits = vdev->va_bits;
	info.va_start = VNPU_VA_START;
	info.va_end = vdev->va_end;
	info.max_bo_size = VNPU_MAX_BO_SIZE;
	info.max_cmd_size = VNPU_CMD_MAX_BUFFER;
	info.clock_mhz = vdev->clock_mhz;
	info.macs_per_cycle = vdev->macs_per_cycle;
	info.limit_tensor_elems = vdev->limits.tensor_elems;
	info.limit_tensor_bytes = vdev->limits.tensor_bytes;
	info.limit_cmd_macs = vdev->limits.cmd_macs;
	info.limit_cmd_bytes = vdev->limits.cmd_bytes;
	info.limit_reduction = vdev->limits.reduction;
	info.limit_kernel_dim = vdev->limits.kernel_dim;
	info.limit_channels = vdev->limits.channels;

	len = min_t(u32, args->size, sizeof(info));
	if (copy_to_user(ptr, &info, len))
		return -EFAULT;
	/* A newer caller's trailing fields read as "not supported". */
	if (args->size > len && clear_user(ptr + len, args->size - len))
		return -EFAULT;
	args->size = len;
	return 0;
}

static const struct drm_ioctl_desc vnpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VNPU_QUERY, vnpu_ioctl_query, 0),
	DRM_IOCTL_DEF_DRV(VNPU_BO_CREATE, vnpu_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(VNPU_BO_INFO, vnpu_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(VNPU_SUBMIT, vnpu_ioctl_submit, 0),
	DRM_IOCTL_DEF_DRV(VNPU_WAIT, vnpu_ioctl_wait, 0),
	DRM_IOCTL_DEF_DRV(VNPU_JOB_STATUS, vnpu_ioctl_job_status, 0),
};

/*
 * Keys per Documentation/gpu/drm-usage-stats.rst; the driver-specific ones
 * carry the driver's name as prefix.  Up to num_engines jobs run at once
 * and each adds its own device time, so the capacity tells readers what
 * 100% busy is.
 * vnpu-jobs-unfinished is the file's queue depth: submitted jobs whose
 * finished fence has not signalled (a submit in progress may count, and
 * so may a job whose hardware fence signalled a moment ago).
 */
static void vnpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vnpu_file_priv *fpriv = file->driver_priv;
	struct vnpu_device *vdev = fpriv->vdev;
	unsigned long flags;
	u64 submitted;

	drm_printf(p, "drm-engine-npu:\t%llu ns\n",
		   (u64)atomic64_read(&fpriv->busy_ns));
	if (vdev->num_engines > 1)
		drm_printf(p, "drm-engine-capacity-npu:\t%u\n",
			   vdev->num_engines);
	drm_printf(p, "drm-cycles-npu:\t%llu\n",
		   (u64)atomic64_read(&fpriv->cycles));
	drm_show_memory_stats(p, file);

	spin_lock_irqsave(&fpriv->rec_lock, flags);
	submitted = fpriv->next_job_id - 1;
	spin_unlock_irqrestore(&fpriv->rec_lock, flags);
	drm_printf(p, "vnpu-jobs-submitted:\t%llu\n", submitted);
	drm_printf(p, "vnpu-jobs-unfinished:\t%d\n",
		   atomic_read(&fpriv->unfinished));
}

static const struct file_operations vnpu_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver vnpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = vnpu_open,
	.postclose = vnpu_postclose,
	.gem_create_object = vnpu_gem_create_object,
	.gem_prime_import_sg_table = vnpu_gem_prime_import_sg_table,
	.show_fdinfo = vnpu_show_fdinfo,
	.ioctls = vnpu_ioctls,
	.num_ioctls = ARRAY_SIZE(vnpu_ioctls),
	.fops = &vnpu_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.major = DRIVER_MAJOR,
	.minor = DRIVER_MINOR,
};

/*
 * Called by remove() once every queue is stopped and emptied, or by the
 * DRM device's release if probe failed.
 */
static void vnpu_rings_free(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		if (q->ring)
			dma_free_coherent(drm->dev,
					  VNPU_RING_ENTRIES * sizeof(*q->ring),
					  q->ring, q->ring_dma);
		if (q->compl)
			dma_free_coherent(drm->dev,
					  VNPU_RING_ENTRIES * sizeof(*q->compl),
					  q->compl, q->compl_dma);
		q->ring = NULL;
		q->compl = NULL;
	}
}

/*
 * The rings go at unbind, although the DRM device may live on in open
 * files: after remove() run_job refuses jobs (drm_dev_enter()), the
 * queues are stopped so no completion path reads them, and a reset can
 * no longer start.  The queue state itself (locks, names) stays with the
 * DRM device.
 */
static int vnpu_rings_init(struct vnpu_device *vdev)
{
	unsigned int i;
	int ret;

	ret = drmm_add_action(&vdev->drm, vnpu_rings_free, NULL);
	if (ret)
		return ret;
	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		q->vdev = vdev;
		q->idx = i;
		spin_lock_init(&q->lock);
		INIT_LIST_HEAD(&q->replay);
		q->fence_ctx = dma_fence_context_alloc(1);
		snprintf(q->name, sizeof(q->name), "vnpu-q%u", i);
		q->ring = dma_alloc_coherent(vdev->drm.dev,
					     VNPU_RING_ENTRIES * sizeof(*q->ring),
					     &q->ring_dma, GFP_KERNEL);
		q->compl = dma_alloc_coherent(vdev->drm.dev,
					      VNPU_RING_ENTRIES * sizeof(*q->compl),
					      &q->compl_dma, GFP_KERNEL);
		if (!q->ring || !q->compl)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Offsets 0x050..0x06c were unassigned before 1.1 and read as zero there,
 * but only the version says whether a zero is a limit or no register.
 */
static void vnpu_read_limits(struct vnpu_device *vdev)
{
	struct vnpu_limits *l = &vdev->limits;

	if (vdev->hw_version < VNPU_HW_VERSION(1, 1))
		return;
	l->tensor_elems = vnpu_read(vdev, VNPU_REG_LIMIT_TENSOR_ELEMS);
	l->tensor_bytes = vnpu_read(vdev, VNPU_REG_LIMIT_TENSOR_BYTES);
	l->cmd_bytes = vnpu_read(vdev, VNPU_REG_LIMIT_CMD_BYTES);
	l->cmd_macs = (u64)vnpu_read(vdev, VNPU_REG_LIMIT_CMD_MACS_HI) << 32 |
		      vnpu_read(vdev, VNPU_REG_LIMIT_CMD_MACS_LO);
	l->reduction = vnpu_read(vdev, VNPU_REG_LIMIT_REDUCTION);
	l->kernel_dim = vnpu_read(vdev, VNPU_REG_LIMIT_KERNEL_DIM);
	l->channels = vnpu_read(vdev, VNPU_REG_LIMIT_CHANNELS);
}

static int vnpu_identify(struct vnpu_device *vdev)
{
	u32 id = vnpu_read(vdev, VNPU_REG_ID);

	vdev->hw_version = vnpu_read(vdev, VNPU_REG_VERSION);
	if (id != VNPU_HW_ID_VALUE ||
	    vdev->hw_version >> 16 != VNPU_HW_VERSION_MAJOR) {
		drm_err(&vdev->drm, "unsupported device: id %#x version %#x\n",
			id, vdev->hw_version);
		return -ENODEV;
	}
	vdev->caps = vnpu_read(vdev, VNPU_REG_CAPS);
	if (!(vdev->caps & VNPU_CAP_MMU)) {
		drm_err(&vdev->drm, "device has no MMU, refusing to drive it\n");
		return -ENODEV;
	}
	vdev->platform = vnpu_read(vdev, VNPU_REG_PLATFORM);
	vdev->num_queues = min_t(u32, vnpu_read(vdev, VNPU_REG_NUM_QUEUES),
				 VNPU_NUM_QUEUES);
	vdev->max_contexts = min_t(u32, vnpu_read(vdev, VNPU_REG_MAX_CONTEXTS),
				   VNPU_MAX_CONTEXTS);
	vdev->va_bits = min_t(u32, vnpu_read(vdev, VNPU_REG_VA_BITS),
			      VNPU_VA_BITS);
	vdev->num_engines = vnpu_read(vdev, VNPU_REG_NUM_ENGINES);
	vdev->clock_mhz = vnpu_read(vdev, VNPU_REG_CLOCK_MHZ);
	vdev->macs_per_cycle = vnpu_read(vdev, VNPU_REG_MAC_PER_CYCLE);
	if (!vdev->num_queues || vdev->max_contexts <= VNPU_FIRST_CTX ||
	    vdev->va_bits < 32) {
		drm_err(&vdev->drm, "implausible geometry: %u queues, %u contexts, %u VA bits\n",
			vdev->num_queues, vdev->max_contexts, vdev->va_bits);
		return -ENODEV;
	}
	vdev->va_end = 1ull << vdev->va_bits;
	vnpu_read_limits(vdev);

	vdev->timeout_ms = vnpu_timeout_ms;
	if (vdev->platform == VNPU_PLATFORM_EMULATED)
		vdev->timeout_ms *= VNPU_EMULATED_TIMEOUT_SCALE;
	return 0;
}

static int vnpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct vnpu_device *vdev;
	int ret;

	vdev = devm_drm_dev_alloc(dev, &vnpu_drm_driver, struct vnpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);
	vdev->pdev = pdev;
	pci_set_drvdata(pdev, vdev);
	init_waitqueue_head(&vdev->jobs_wq);

	ret = drmm_mutex_init(&vdev->drm, &vdev->mmu_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&vdev->drm, &vdev->reset_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&vdev->drm, &vdev->sched_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&vdev->drm, &vdev->bo_lock);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&vdev->bo_list);
	INIT_LIST_HEAD(&vdev->as_list);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	vdev->regs = pcim_iomap_region(pdev, VNPU_BAR_REGS, DRIVER_NAME);
	if (IS_ERR(vdev->regs))
		return PTR_ERR(vdev->regs);
	pci_set_master(pdev);

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(52));
	if (ret)
		return ret;
	dma_set_max_seg_size(dev, UINT_MAX);

	ret = vnpu_identify(vdev);
	if (ret)
		return ret;
	ret = vnpu_gemfs_init(vdev);
	if (ret)
		return ret;
	ret = vnpu_mmu_init(vdev);
	if (ret)
		return ret;
	ret = vnpu_rings_init(vdev);
	if (ret)
		return ret;
	ret = vnpu_sched_init(vdev);
	if (ret)
		return ret;
	ret = vnpu_irq_init(vdev);
	if (ret)
		return ret;
	ret = vnpu_hw_start(vdev);
	if (ret) {
		drm_err(&vdev->drm, "device does not start: %d\n", ret);
		return ret;
	}

	ret = drm_dev_register(&vdev->drm, 0);
	if (ret) {
		vnpu_hw_stop(vdev);
		return ret;
	}
	vnpu_debugfs_init(vdev);

	/*
	 * The PCI core holds a usage reference across probe: drop it, so
	 * the device autosuspends when idle once runtime PM is allowed.
	 * That is left to the PCI default and to userspace policy
	 * (power/control), as for most PCI drivers.  remove() takes the
	 * reference back.
	 */
	pm_runtime_set_autosuspend_delay(dev, vdev->platform == VNPU_PLATFORM_EMULATED ?
					 VNPU_AUTOSUSPEND_MS * VNPU_EMULATED_TIMEOUT_SCALE :
					 VNPU_AUTOSUSPEND_MS);
	pm_runtime_use_autosuspend(dev);
	pm_runtime_mark_last_busy(dev);
	pm_runtime_put_autosuspend(dev);

	drm_info(&vdev->drm, "vnpu %u.%u, %u queues, %u engines, %s, timeout %u ms\n",
		 vdev->hw_version >> 16, vdev->hw_version & 0xffff,
		 vdev->num_queues, vdev->num_engines,
		 vdev->platform == VNPU_PLATFORM_EMULATED ? "emulated" : "silicon",
		 vdev->timeout_ms);
	return 0;
}

static void vnpu_remove(struct pci_dev *pdev)
{
	struct vnpu_device *vdev = pci_get_drvdata(pdev);
	struct device *dev = &pdev->dev;
	int jobs;

	/*
	 * The PCI core resumed the device for us.  From here on no ioctl,
	 * run_job or timeout handler touches BAR0, and no job takes or
	 * drops a runtime PM reference.
	 */
	drm_dev_unplug(&vdev->drm);

	/* The jobs outliving the binding give their references back now. */
	for (jobs = atomic_xchg(&vdev->pm_jobs, 0); jobs > 0; jobs--)
		pm_runtime_put_noidle(dev);
	/* Undo the end of probe. */
	pm_runtime_get_noresume(dev);
	pm_runtime_dont_use_autosuspend(dev);

	mutex_lock(&vdev->reset_lock);
	vnpu_hw_stop(vdev);
	/* Nothing on the hardware will complete now; tell the waiters. */
	vnpu_job_fail_all(vdev, -ENODEV);
	mutex_unlock(&vdev->reset_lock);

	/*
	 * No DMA memory of this device may outlive the binding, whoever
	 * still holds the DRM device: BO mappings, page tables, the
	 * context table, the rings.
	 */
	vnpu_gem_unbind(vdev);
	vnpu_mmu_unbind(vdev);
	vnpu_rings_free(&vdev->drm, NULL);
}

/*
 * Reboot or kexec: stop all DMA, so the next kernel does not find the
 * device writing to memory it reuses.  The binding stays, so jobs end
 * DEVICE_LOST rather than waiting for a device that is not coming back.
 */
static void vnpu_shutdown(struct pci_dev *pdev)
{
	struct vnpu_device *vdev = pci_get_drvdata(pdev);

	mutex_lock(&vdev->reset_lock);
	WRITE_ONCE(vdev->lost, true);
	vnpu_hw_stop(vdev);
	vnpu_job_fail_all(vdev, -ENODEV);
	pci_clear_master(pdev);
	mutex_unlock(&vdev->reset_lock);
}

static const struct pci_device_id vnpu_pci_ids[] = {
	{ PCI_DEVICE(VNPU_PCI_VENDOR_ID, VNPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vnpu_pci_ids);

static struct pci_driver vnpu_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = vnpu_pci_ids,
	.probe = vnpu_probe,
	.remove = vnpu_remove,
	.shutdown = vnpu_shutdown,
	.driver.pm = pm_ptr(&vnpu_pm_ops),
};
module_pci_driver(vnpu_pci_driver);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_AUTHOR("The vnpu authors");
MODULE_LICENSE("GPL");
/* dma_buf_unmap_attachment(), for imports at unbind */
MODULE_IMPORT_NS(DMA_BUF);
