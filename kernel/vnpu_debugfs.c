// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * debugfs: device state and the device's fault-injection registers, so
 * tests can provoke hangs, DMA errors and lost interrupts on demand.
 */

#include <linux/debugfs.h>
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
	drm_printf(&p, "mmu_faults: %d\n", atomic_read(&vdev->fault_count));
	drm_printf(&p, "live_jobs: %d\n", atomic_read(&vdev->live_jobs));

	if (!drm_dev_enter(&vdev->drm, &idx))
		return 0;
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
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnpu_state);

/* Each knob arms the next N jobs with one kind of device fault. */
static int vnpu_inject_set(struct vnpu_device *vdev, u32 reg, u64 val)
{
	int idx;

	if (val > U32_MAX)
		return -EINVAL;
	if (!(vdev->caps & VNPU_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	vnpu_write(vdev, reg, val);
	drm_dev_exit(idx);
	return 0;
}

static int vnpu_inject_get(struct vnpu_device *vdev, u32 reg, u64 *val)
{
	int idx;

	if (!(vdev->caps & VNPU_CAP_FAULT_INJECT))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	*val = vnpu_read(vdev, reg);
	drm_dev_exit(idx);
	return 0;
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

/**
 * vnpu_debugfs_init() - populate the DRM minor's debugfs directory
 * @vdev: registered device
 */
void vnpu_debugfs_init(struct vnpu_device *vdev)
{
	struct dentry *root = vdev->drm.debugfs_root;

	debugfs_create_file("state", 0444, root, vdev, &vnpu_state_fops);
	debugfs_create_file_unsafe("inject_hang", 0600, root, vdev,
				   &vnpu_inject_hang_fops);
	debugfs_create_file_unsafe("inject_dma_error", 0600, root, vdev,
				   &vnpu_inject_dma_error_fops);
	debugfs_create_file_unsafe("inject_lost_irq", 0600, root, vdev,
				   &vnpu_inject_lost_irq_fops);
}
