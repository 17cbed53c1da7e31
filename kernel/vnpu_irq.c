// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * MSI-X: one vector per queue for completions, one for MMU faults and
 * device errors.  Per-job fault details arrive in the completion record;
 * the error vector only logs and acknowledges the device-wide state.
 */

#include <linux/interrupt.h>
#include <linux/pci.h>
#include <drm/drm_print.h>

#include "vnpu_drv.h"

static irqreturn_t vnpu_queue_irq(int irq, void *arg)
{
	struct vnpu_queue *q = arg;

	/* Ack before scanning, so a later completion raises a new message. */
	vnpu_write(q->vdev, VNPU_REG_IRQ_STATUS, VNPU_IRQ_QUEUE(q->idx));
	vnpu_queue_complete(q);
	return IRQ_HANDLED;
}

static irqreturn_t vnpu_error_irq(int irq, void *arg)
{
	struct vnpu_device *vdev = arg;
	u32 status = vnpu_read(vdev, VNPU_REG_IRQ_STATUS);
	unsigned int i;

	status &= VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR;
	if (!status)
		return IRQ_NONE;
	vnpu_write(vdev, VNPU_REG_IRQ_STATUS, status);

	if (status & VNPU_IRQ_MMU_FAULT) {
		u32 fs = vnpu_read(vdev, VNPU_REG_MMU_FAULT_STATUS);
		u64 va = vnpu_read(vdev, VNPU_REG_MMU_FAULT_VA_LO) |
			 (u64)vnpu_read(vdev, VNPU_REG_MMU_FAULT_VA_HI) << 32;

		if (fs & VNPU_FAULT_VALID) {
			drm_dbg_driver(&vdev->drm,
				       "MMU fault: ctx %u queue %u va %#llx %s reason %u\n",
				       vnpu_read(vdev, VNPU_REG_MMU_FAULT_CTX),
				       vnpu_read(vdev, VNPU_REG_MMU_FAULT_QUEUE), va,
				       fs & VNPU_FAULT_WRITE ? "write" : "read",
				       (u32)((fs & VNPU_FAULT_REASON_MASK) >>
				       VNPU_FAULT_REASON_SHIFT));
			/* Re-arms the latch for the next fault. */
			vnpu_write(vdev, VNPU_REG_MMU_FAULT_STATUS, VNPU_FAULT_VALID);
		}
	}

	if (status & VNPU_IRQ_ERROR) {
		u32 err = vnpu_read(vdev, VNPU_REG_ERROR_STATUS);

		vnpu_write(vdev, VNPU_REG_ERROR_STATUS, err);
		drm_err_ratelimited(&vdev->drm, "device error %#x\n", err);
		/* A halted queue only recovers through a reset: do it now. */
		for (i = 0; i < vdev->num_queues; i++) {
			struct vnpu_queue *q = &vdev->queues[i];

			if (vnpu_qread(q, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR)
				drm_sched_fault(&q->sched);
		}
	}
	return IRQ_HANDLED;
}

/**
 * vnpu_irq_init() - allocate MSI-X vectors and install the handlers
 * @vdev: device
 *
 * Return: 0 or a negative errno.
 */
int vnpu_irq_init(struct vnpu_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	struct device *dev = &pdev->dev;
	unsigned int i;
	char *name;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, VNPU_MSIX_NUM_VECTORS,
				    VNPU_MSIX_NUM_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0)
		return ret;
	for (i = 0; i < VNPU_MSIX_NUM_VECTORS; i++) {
		vdev->irqs[i] = pci_irq_vector(pdev, i);
		if (vdev->irqs[i] < 0)
			return vdev->irqs[i];
	}

	/* Named after the PCI function, so two devices tell apart. */
	name = devm_kasprintf(dev, GFP_KERNEL, "vnpu-%s-error", pci_name(pdev));
	if (!name)
		return -ENOMEM;
	ret = devm_request_irq(dev, vdev->irqs[VNPU_MSIX_VEC_ERROR],
			       vnpu_error_irq, 0, name, vdev);
	if (ret)
		return ret;
	for (i = 0; i < vdev->num_queues; i++) {
		struct vnpu_queue *q = &vdev->queues[i];

		name = devm_kasprintf(dev, GFP_KERNEL, "vnpu-%s-q%u",
				      pci_name(pdev), i);
		if (!name)
			return -ENOMEM;
		ret = devm_request_irq(dev, vdev->irqs[VNPU_MSIX_VEC_QUEUE(i)],
				       vnpu_queue_irq, 0, name, q);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vnpu_irq_sync() - wait for running handlers to finish
 * @vdev: device whose interrupts were masked
 *
 * Called from reset, in the fence signalling path: it uses the IRQ
 * numbers cached at probe (see &vnpu_device.irqs).
 */
void vnpu_irq_sync(struct vnpu_device *vdev)
{
	unsigned int i;

	for (i = 0; i < VNPU_MSIX_NUM_VECTORS; i++)
		synchronize_irq(vdev->irqs[i]);
}
