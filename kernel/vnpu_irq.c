// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * MSI-X: one vector per queue for completions, one for MMU faults and
 * device errors.  Per-job fault details arrive in the completion record;
 * the error vector only logs and acknowledges the device-wide state.
 *
 * Without MSI-X (a platform or a "pci=nomsi" kernel that has none, or a
 * device with it hidden) one MSI or legacy INTx interrupt does everything:
 * its handler reads IRQ_STATUS to find the sources.  INTx may be shared, so
 * that handler claims only interrupts the device raised.
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

/* Acknowledge and handle the device-wide sources in @status. */
static void vnpu_handle_errors(struct vnpu_device *vdev, u32 status)
{
	unsigned int i;

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
}

static irqreturn_t vnpu_error_irq(int irq, void *arg)
{
	struct vnpu_device *vdev = arg;
	u32 status = vnpu_read(vdev, VNPU_REG_IRQ_STATUS);

	/* All ones: in D3hot or gone, see vnpu_single_irq(). */
	if (status == U32_MAX)
		return IRQ_NONE;
	status &= VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR;
	if (!status)
		return IRQ_NONE;
	vnpu_handle_errors(vdev, status);
	return IRQ_HANDLED;
}

/*
 * The single MSI or INTx interrupt.  All ones is what a device in D3hot
 * or gone from the bus returns: never ours, and acknowledging it would
 * write to a device that is not listening.
 */
static irqreturn_t vnpu_single_irq(int irq, void *arg)
{
	struct vnpu_device *vdev = arg;
	u32 status = vnpu_read(vdev, VNPU_REG_IRQ_STATUS);
	unsigned int i;

	if (status == U32_MAX)
		return IRQ_NONE;
	status &= GENMASK(vdev->num_queues - 1, 0) | VNPU_IRQ_MMU_FAULT |
		  VNPU_IRQ_ERROR;
	if (!status)
		return IRQ_NONE;

	/* Ack before scanning, as the per-queue vectors do. */
	vnpu_write(vdev, VNPU_REG_IRQ_STATUS,
		   status & GENMASK(vdev->num_queues - 1, 0));
	for (i = 0; i < vdev->num_queues; i++)
		if (status & VNPU_IRQ_QUEUE(i))
			vnpu_queue_complete(&vdev->queues[i]);
	if (status & (VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR))
		vnpu_handle_errors(vdev, status &
				   (VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR));
	return IRQ_HANDLED;
}

/* One MSI, or the INTx line, which may be shared with other devices. */
static int vnpu_irq_init_single(struct vnpu_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	struct device *dev = &pdev->dev;
	char *name;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0)
		return ret;
	vdev->irqs[0] = pci_irq_vector(pdev, 0);
	if (vdev->irqs[0] < 0)
		return vdev->irqs[0];
	vdev->num_irqs = 1;

	name = devm_kasprintf(dev, GFP_KERNEL, "vnpu-%s", pci_name(pdev));
	if (!name)
		return -ENOMEM;
	drm_info(&vdev->drm, "no MSI-X, using one %s interrupt\n",
		 pdev->msi_enabled ? "MSI" : "INTx");
	return devm_request_irq(dev, vdev->irqs[0], vnpu_single_irq,
				pdev->msi_enabled ? 0 : IRQF_SHARED, name, vdev);
}

/**
 * vnpu_irq_init() - allocate interrupt vectors and install the handlers
 * @vdev: device
 *
 * MSI-X with one vector per source when the device and platform have it,
 * else a single MSI or INTx interrupt.
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
		return vnpu_irq_init_single(vdev);
	vdev->num_irqs = VNPU_MSIX_NUM_VECTORS;
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

	for (i = 0; i < vdev->num_irqs; i++)
		synchronize_irq(vdev->irqs[i]);
}
