/*
 * vnpu: a PCIe NPU device model implementing include/vnpu/vnpu_hw.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This file holds the PCI/QOM glue, the BAR0 register file, interrupts,
 * reset and fault-injection knobs.  The device MMU lives in vnpu-mmu.c and
 * the queues, engines and command processor in vnpu-engine.c.  The
 * programming model is specified in Documentation/hw-spec.rst.
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "exec/memory.h"
#include "vnpu-internal.h"
#include "vnpu_hw_ops.h"
#include "trace.h"

#define VNPU_PCIE_CAP_OFFSET    0x80
/* After the PCIe capability (0x80..0xbb); MSI-X takes the first free slot. */
#define VNPU_PM_CAP_OFFSET      0xc8

/*
 * The power state lives in the PM capability's PMCSR, in config space, so
 * it migrates with it and needs no field of its own.
 */
static bool vnpu_powered_down(VnpuState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    return (pci_get_word(pdev->config + VNPU_PM_CAP_OFFSET + PCI_PM_CTRL) &
            PCI_PM_CTRL_STATE_MASK) != 0;
}

uint64_t vnpu_now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/*
 * Consume one armed fault injection, if any; safe against qom-set.  The
 * counters cannot be armed unless x-fault-inject is on; checking here too
 * keeps a device without it free of injected faults whatever happens.
 */
bool vnpu_take_injection(VnpuState *s, uint32_t *counter)
{
    uint32_t v;

    if (!s->fault_inject) {
        return false;
    }
    v = qatomic_read(counter);

    while (v) {
        uint32_t old = qatomic_cmpxchg(counter, v, v - 1);
        if (old == v) {
            return true;
        }
        v = old;
    }
    return false;
}

/* ---- interrupts ---------------------------------------------------------- */

static uint32_t vnpu_irq_vector_bits(uint32_t irq_bits)
{
    uint32_t vecs = 0;
    unsigned q;

    for (q = 0; q < VNPU_NUM_QUEUES; q++) {
        if (irq_bits & VNPU_IRQ_QUEUE(q)) {
            vecs |= 1u << VNPU_MSIX_VEC_QUEUE(q);
        }
    }
    if (irq_bits & (VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR)) {
        vecs |= 1u << VNPU_MSIX_VEC_ERROR;
    }
    return vecs;
}

/*
 * Latch @irq_bits in IRQ_STATUS and, when @send, queue one message per
 * enabled source for the bottom half.  Callable from any thread.
 */
void vnpu_raise_locked(VnpuState *s, uint32_t irq_bits, bool send)
{
    s->irq_status |= irq_bits;
    if (send) {
        s->notify_vecs |= vnpu_irq_vector_bits(irq_bits & s->irq_mask);
    }
    /* Also refreshes the INTx level when MSI-X is off. */
    qemu_bh_schedule(s->irq_bh);
}

void vnpu_error_locked(VnpuState *s, uint32_t err_bits)
{
    s->error_status |= err_bits;
    vnpu_raise_locked(s, VNPU_IRQ_ERROR, true);
}

static void vnpu_irq_bh(void *opaque)
{
    VnpuState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t vecs;
    bool level;
    unsigned v;

    qemu_mutex_lock(&s->lock);
    vecs = s->notify_vecs;
    s->notify_vecs = 0;
    level = (s->irq_status & s->irq_mask) != 0;
    qemu_mutex_unlock(&s->lock);

    if (s->msix && msix_enabled(pdev)) {
        for (v = 0; v < VNPU_MSIX_NUM_VECTORS; v++) {
            if (vecs & (1u << v)) {
                trace_vnpu_irq(v);
                msix_notify(pdev, v);
            }
        }
        pci_set_irq(pdev, 0);
    } else {
        trace_vnpu_intx(level);
        pci_set_irq(pdev, level);
    }
}

/* ---- reset --------------------------------------------------------------- */

/*
 * Drop every queued and in-flight job and return the register file to its
 * reset values.  Called with the BQL held (MMIO, FLR, system reset).
 *
 * Reset does not wait for the engines to finish their jobs: it abandons
 * them.  Bumping reset_gen detaches every running job from its queue (it
 * will complete nothing) and closes the reset gate on it; waiting for the
 * accesses already in flight (at most one VNPU_DMA_CHUNK per engine) is
 * all it takes for no DMA of those jobs to happen after this returns.  Their
 * workers see the abort at their next check and give their engines back
 * shortly after; until then those engines take no new job.
 */
static void vnpu_do_reset(VnpuState *s, const char *why)
{
    int64_t t0 = get_clock();
    unsigned i, abandoned = 0;

    trace_vnpu_reset(why);
    qemu_mutex_lock(&s->lock);
    qatomic_set(&s->reset_gen, s->reset_gen + 1);
    s->control = 0;
    vnpu_engines_abort_locked(s);
    for (i = 0; i < s->num_engines; i++) {
        abandoned += s->eng[i].busy;
    }
    memset(s->q, 0, sizeof(s->q));
    s->irq_status = 0;
    s->irq_mask = 0;
    s->error_status = 0;
    s->scratch = 0;
    s->ts_hi_latch = 0;
    s->mmu_control = 0;
    s->ctx_table = 0;
    s->ctx_count = 0;
    s->tlb_inval_seq = 0;
    s->fault_status = 0;
    s->fault_ctx = 0;
    s->fault_va = 0;
    s->fault_queue = 0;
    s->notify_vecs = 0;
    s->rr_next = 0;
    /* Any reset clears a wedge; only a soft one arms the next. */
    s->wedged = !strcmp(why, "soft") && vnpu_take_injection(s, &s->inject_wedge);
    qemu_mutex_unlock(&s->lock);

    vnpu_dma_quiesce(s);
    vnpu_tlb_invalidate(s, true, 0);
    pci_set_irq(PCI_DEVICE(s), 0);
    trace_vnpu_reset_done(why, abandoned, get_clock() - t0);
}

static void vnpu_qdev_reset(DeviceState *dev)
{
    VnpuState *s = VNPU(dev);
    PCIDevice *pdev = PCI_DEVICE(dev);
    bool flr = pci_is_express(pdev) && pdev->exp.exp_cap &&
               (pci_get_word(pdev->config + pdev->exp.exp_cap + PCI_EXP_DEVCTL) &
                PCI_EXP_DEVCTL_BCR_FLR);

    vnpu_do_reset(s, flr ? "flr" : "device");
}

/* ---- register file --------------------------------------------------------- */

static uint32_t vnpu_caps(VnpuState *s)
{
    return VNPU_CAP_MMU | VNPU_CAP_COMPUTE | VNPU_CAP_TIMESTAMP |
           (s->fault_inject ? VNPU_CAP_FAULT_INJECT : 0) |
           VNPU_CAP_CYCLE_MODEL;
}

static uint32_t *vnpu_inject_counter(VnpuState *s, hwaddr addr)
{
    switch (addr) {
    case VNPU_REG_DEBUG_INJECT_HANG:
        return &s->inject_hang;
    case VNPU_REG_DEBUG_INJECT_DMA_ERROR:
        return &s->inject_dma_error;
    case VNPU_REG_DEBUG_INJECT_WEDGE:
        return &s->inject_wedge;
    default:
        return &s->inject_lost_irq;
    }
}

/* A job abandoned by reset is no longer the device's: it does not count. */
static bool vnpu_engines_idle_locked(VnpuState *s)
{
    unsigned i;

    for (i = 0; i < s->num_engines; i++) {
        if (s->eng[i].busy && s->eng[i].job_gen == s->reset_gen) {
            return false;
        }
    }
    return true;
}

/* The debug block exists only with x-fault-inject=on. */
static bool vnpu_is_debug_reg(VnpuState *s, hwaddr addr)
{
    return s->fault_inject &&
           (addr == VNPU_REG_DEBUG_INJECT_HANG ||
            addr == VNPU_REG_DEBUG_INJECT_DMA_ERROR ||
            addr == VNPU_REG_DEBUG_INJECT_LOST_IRQ ||
            addr == VNPU_REG_DEBUG_INJECT_WEDGE);
}

static uint32_t vnpu_queue_read(VnpuState *s, unsigned qi, hwaddr r)
{
    VnpuQueue *q = &s->q[qi];
    uint32_t st;

    switch (r) {
    case VNPU_QREG_RING_LO:
        return q->ring;
    case VNPU_QREG_RING_HI:
        return q->ring >> 32;
    case VNPU_QREG_RING_SIZE:
        return q->size;
    case VNPU_QREG_COMPL_LO:
        return q->compl;
    case VNPU_QREG_COMPL_HI:
        return q->compl >> 32;
    case VNPU_QREG_HEAD:
        return q->head;
    case VNPU_QREG_TAIL:
        return q->tail;
    case VNPU_QREG_CONTROL:
        return q->control;
    case VNPU_QREG_STATUS:
        st = 0;
        if (q->control & VNPU_QCTRL_ENABLE) {
            st |= VNPU_QSTATUS_ENABLED;
        }
        if (!q->busy && (q->head == q->fetch_tail || q->error ||
                         !(q->control & VNPU_QCTRL_ENABLE))) {
            st |= VNPU_QSTATUS_IDLE;
        }
        if (q->error) {
            st |= VNPU_QSTATUS_ERROR;
        }
        return st;
    case VNPU_QREG_PRIORITY:
        return q->priority;
    case VNPU_QREG_DONE_SEQ_LO:
        q->done_seq_hi_latch = q->done_seq >> 32;
        return q->done_seq;
    case VNPU_QREG_DONE_SEQ_HI:
        return q->done_seq_hi_latch;
    case VNPU_QREG_DOORBELL:
        return 0;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: read of undefined queue %u register 0x%" HWADDR_PRIx
                      "\n", qi, r);
        return 0;
    }
}

static uint64_t vnpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    VnpuState *s = opaque;
    uint64_t v = 0;

    if (vnpu_powered_down(s)) {
        /* As a powered-down function: no decode, all ones. */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: read of 0x%" HWADDR_PRIx " in D3hot\n", addr);
        return UINT32_MAX;
    }
    qemu_mutex_lock(&s->lock);
    if (addr >= VNPU_REG_QUEUE_BASE &&
        addr < VNPU_REG_QUEUE(VNPU_NUM_QUEUES, 0)) {
        v = vnpu_queue_read(s, (addr - VNPU_REG_QUEUE_BASE) /
                               VNPU_REG_QUEUE_STRIDE,
                            (addr - VNPU_REG_QUEUE_BASE) % VNPU_REG_QUEUE_STRIDE);
        goto out;
    }
    switch (addr) {
    case VNPU_REG_ID:
        v = VNPU_HW_ID_VALUE;
        break;
    case VNPU_REG_VERSION:
        v = VNPU_HW_VERSION(VNPU_HW_VERSION_MAJOR, VNPU_HW_VERSION_MINOR);
        break;
    case VNPU_REG_CAPS:
        v = vnpu_caps(s);
        break;
    case VNPU_REG_PLATFORM:
        v = VNPU_PLATFORM_EMULATED;
        break;
    case VNPU_REG_NUM_QUEUES:
        v = VNPU_NUM_QUEUES;
        break;
    case VNPU_REG_MAX_CONTEXTS:
        v = VNPU_MAX_CONTEXTS;
        break;
    case VNPU_REG_VA_BITS:
        v = VNPU_VA_BITS;
        break;
    case VNPU_REG_NUM_ENGINES:
        v = s->num_engines;
        break;
    case VNPU_REG_CONTROL:
        v = s->control;
        break;
    case VNPU_REG_STATUS:
        if (s->wedged) {
            v = 0;
            break;
        }
        v = VNPU_STATUS_READY;
        if (vnpu_engines_idle_locked(s)) {
            v |= VNPU_STATUS_IDLE;
        }
        break;
    case VNPU_REG_IRQ_STATUS:
        v = s->irq_status;
        break;
    case VNPU_REG_IRQ_MASK:
        v = s->irq_mask;
        break;
    case VNPU_REG_ERROR_STATUS:
        v = s->error_status;
        break;
    case VNPU_REG_SCRATCH:
        v = s->scratch;
        break;
    case VNPU_REG_TIMESTAMP_LO: {
        uint64_t now = vnpu_now_ns();

        s->ts_hi_latch = now >> 32;
        v = (uint32_t)now;
        break;
    }
    case VNPU_REG_TIMESTAMP_HI:
        v = s->ts_hi_latch;
        break;
    case VNPU_REG_CLOCK_MHZ:
        v = VNPU_MODEL_CLOCK_MHZ;
        break;
    case VNPU_REG_MAC_PER_CYCLE:
        v = VNPU_MODEL_MACS_PER_CYCLE;
        break;
    case VNPU_REG_LIMIT_TENSOR_ELEMS:
        v = VNPU_LIMIT_TENSOR_ELEMS;
        break;
    case VNPU_REG_LIMIT_TENSOR_BYTES:
        v = VNPU_LIMIT_TENSOR_BYTES;
        break;
    case VNPU_REG_LIMIT_CMD_BYTES:
        v = VNPU_LIMIT_CMD_BYTES;
        break;
    case VNPU_REG_LIMIT_CMD_MACS_LO:
        v = (uint32_t)VNPU_LIMIT_CMD_MACS;
        break;
    case VNPU_REG_LIMIT_CMD_MACS_HI:
        v = (uint64_t)VNPU_LIMIT_CMD_MACS >> 32;
        break;
    case VNPU_REG_LIMIT_REDUCTION:
        v = VNPU_LIMIT_REDUCTION;
        break;
    case VNPU_REG_LIMIT_KERNEL_DIM:
        v = VNPU_LIMIT_KERNEL_DIM;
        break;
    case VNPU_REG_LIMIT_CHANNELS:
        v = VNPU_LIMIT_CHANNELS;
        break;
    case VNPU_REG_MMU_CONTROL:
        v = s->mmu_control;
        break;
    case VNPU_REG_MMU_CTX_TABLE_LO:
        v = (uint32_t)s->ctx_table;
        break;
    case VNPU_REG_MMU_CTX_TABLE_HI:
        v = s->ctx_table >> 32;
        break;
    case VNPU_REG_MMU_CTX_COUNT:
        v = s->ctx_count;
        break;
    case VNPU_REG_MMU_TLB_INVAL:
        v = 0;
        break;
    case VNPU_REG_MMU_TLB_INVAL_SEQ:
        v = s->tlb_inval_seq;
        break;
    case VNPU_REG_MMU_FAULT_STATUS:
        v = s->fault_status;
        break;
    case VNPU_REG_MMU_FAULT_CTX:
        v = s->fault_ctx;
        break;
    case VNPU_REG_MMU_FAULT_VA_LO:
        v = (uint32_t)s->fault_va;
        break;
    case VNPU_REG_MMU_FAULT_VA_HI:
        v = s->fault_va >> 32;
        break;
    case VNPU_REG_MMU_FAULT_QUEUE:
        v = s->fault_queue;
        break;
    case VNPU_REG_DEBUG_INJECT_HANG:
    case VNPU_REG_DEBUG_INJECT_DMA_ERROR:
    case VNPU_REG_DEBUG_INJECT_LOST_IRQ:
    case VNPU_REG_DEBUG_INJECT_WEDGE:
        if (vnpu_is_debug_reg(s, addr)) {
            v = qatomic_read(vnpu_inject_counter(s, addr));
            break;
        }
        /* fall through: without x-fault-inject the offsets are undefined */
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: read of undefined register 0x%" HWADDR_PRIx "\n",
                      addr);
        break;
    }
out:
    qemu_mutex_unlock(&s->lock);
    trace_vnpu_mmio_read(addr, v);
    return v;
}

static void vnpu_bad_write_locked(VnpuState *s, hwaddr addr, uint64_t val,
                                  const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "vnpu: write 0x%" PRIx64 " to register 0x%" HWADDR_PRIx
                  " ignored: %s\n", val, addr, why);
    vnpu_error_locked(s, VNPU_ERR_REGISTER);
}

static void vnpu_ring_error_locked(VnpuState *s, unsigned qi, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vnpu: queue %u halted: %s\n", qi, why);
    s->q[qi].error = true;
    vnpu_error_locked(s, VNPU_ERR_RING);
}

static void vnpu_queue_enable_locked(VnpuState *s, unsigned qi)
{
    VnpuQueue *q = &s->q[qi];
    VnpuRingErr err;

    q->control |= VNPU_QCTRL_ENABLE;
    q->head = 0;
    q->tail = 0;
    q->fetch_tail = 0;
    q->error = false;

    err = vnpu_ring_check(q->ring, q->compl, q->size);
    if (err != VNPU_RING_OK) {
        vnpu_ring_error_locked(s, qi, vnpu_ring_strerror(err));
    }
}

static void vnpu_queue_write(VnpuState *s, unsigned qi, hwaddr r,
                             uint32_t val, hwaddr addr)
{
    VnpuQueue *q = &s->q[qi];
    bool enabled = q->control & VNPU_QCTRL_ENABLE;

    switch (r) {
    case VNPU_QREG_RING_LO:
    case VNPU_QREG_RING_HI:
    case VNPU_QREG_RING_SIZE:
    case VNPU_QREG_COMPL_LO:
    case VNPU_QREG_COMPL_HI:
        if (enabled) {
            vnpu_bad_write_locked(s, addr, val, "queue is enabled");
            return;
        }
        if (r == VNPU_QREG_RING_LO) {
            q->ring = deposit64(q->ring, 0, 32, val);
        } else if (r == VNPU_QREG_RING_HI) {
            q->ring = deposit64(q->ring, 32, 32, val);
        } else if (r == VNPU_QREG_RING_SIZE) {
            q->size = val;
        } else if (r == VNPU_QREG_COMPL_LO) {
            q->compl = deposit64(q->compl, 0, 32, val);
        } else {
            q->compl = deposit64(q->compl, 32, 32, val);
        }
        return;
    case VNPU_QREG_TAIL:
        if (!enabled) {
            vnpu_bad_write_locked(s, addr, val, "queue is disabled");
            return;
        }
        if (q->error) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "vnpu: queue %u TAIL write while halted\n", qi);
            return;
        }
        if (!vnpu_ring_tail_valid(q->size, val)) {
            vnpu_ring_error_locked(s, qi, "TAIL beyond ring size");
            return;
        }
        q->tail = val;
        return;
    case VNPU_QREG_DOORBELL:
        trace_vnpu_doorbell(qi, q->tail);
        if (!enabled) {
            vnpu_bad_write_locked(s, addr, val, "doorbell on disabled queue");
            return;
        }
        if (q->error) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "vnpu: queue %u doorbell while halted\n", qi);
            return;
        }
        q->fetch_tail = q->tail;
        vnpu_kick_locked(s);
        return;
    case VNPU_QREG_CONTROL:
        if (val & ~VNPU_QCTRL_ENABLE) {
            vnpu_bad_write_locked(s, addr, val, "reserved QCTRL bits");
            return;
        }
        if ((val & VNPU_QCTRL_ENABLE) && !enabled) {
            if (q->busy) {
                vnpu_bad_write_locked(s, addr, val,
                                      "queue still has a job on an engine");
                return;
            }
            vnpu_queue_enable_locked(s, qi);
        } else if (!(val & VNPU_QCTRL_ENABLE) && enabled) {
            /* A job already on an engine still completes. */
            q->control &= ~VNPU_QCTRL_ENABLE;
            q->error = false;
            q->fetch_tail = q->head;
        }
        return;
    case VNPU_QREG_PRIORITY:
        if (val > VNPU_PRIORITY_MAX) {
            vnpu_bad_write_locked(s, addr, val, "priority out of range");
            return;
        }
        q->priority = val;
        return;
    default:
        vnpu_bad_write_locked(s, addr, val, "read-only or undefined register");
        return;
    }
}

static void vnpu_mmu_control_write_locked(VnpuState *s, hwaddr addr,
                                          uint32_t val)
{
    if (val & ~VNPU_MMU_CONTROL_ENABLE) {
        vnpu_bad_write_locked(s, addr, val, "reserved MMU_CONTROL bits");
        return;
    }
    if (val & VNPU_MMU_CONTROL_ENABLE) {
        if (!vnpu_ctx_table_valid(s->ctx_table, s->ctx_count)) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "vnpu: MMU not enabled: bad context table "
                          "0x%" PRIx64 " count %u\n",
                          s->ctx_table, s->ctx_count);
            vnpu_error_locked(s, VNPU_ERR_CTX_TABLE);
            return;
        }
    }
    s->mmu_control = val;
}

static void vnpu_mmio_write(void *opaque, hwaddr addr, uint64_t val64,
                            unsigned size)
{
    VnpuState *s = opaque;
    uint32_t val = val64;
    bool reset = false, inval = false, inval_all = false;
    uint32_t inval_ctx = 0;

    trace_vnpu_mmio_write(addr, val64);
    if (vnpu_powered_down(s)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: write of 0x%" HWADDR_PRIx " in D3hot dropped\n",
                      addr);
        return;
    }
    qemu_mutex_lock(&s->lock);
    if (addr >= VNPU_REG_QUEUE_BASE &&
        addr < VNPU_REG_QUEUE(VNPU_NUM_QUEUES, 0)) {
        vnpu_queue_write(s, (addr - VNPU_REG_QUEUE_BASE) / VNPU_REG_QUEUE_STRIDE,
                         (addr - VNPU_REG_QUEUE_BASE) % VNPU_REG_QUEUE_STRIDE,
                         val, addr);
        goto out;
    }
    switch (addr) {
    case VNPU_REG_CONTROL:
        if (val & ~(VNPU_CONTROL_ENABLE | VNPU_CONTROL_SOFT_RESET)) {
            vnpu_bad_write_locked(s, addr, val, "reserved CONTROL bits");
            break;
        }
        if (val & VNPU_CONTROL_SOFT_RESET) {
            reset = true;
            break;
        }
        s->control = val;
        vnpu_kick_locked(s);
        break;
    case VNPU_REG_IRQ_STATUS:
        s->irq_status &= ~val;
        qemu_bh_schedule(s->irq_bh);
        break;
    case VNPU_REG_IRQ_MASK: {
        uint32_t valid = VNPU_IRQ_QUEUE_ALL | VNPU_IRQ_MMU_FAULT |
                         VNPU_IRQ_ERROR;
        uint32_t newly = val & ~s->irq_mask;

        if (val & ~valid) {
            vnpu_bad_write_locked(s, addr, val, "undefined IRQ_MASK bits");
            break;
        }
        s->irq_mask = val;
        /* Enabling a source that is already pending sends its message. */
        s->notify_vecs |= vnpu_irq_vector_bits(newly & s->irq_status);
        qemu_bh_schedule(s->irq_bh);
        break;
    }
    case VNPU_REG_ERROR_STATUS:
        s->error_status &= ~val;
        break;
    case VNPU_REG_SCRATCH:
        s->scratch = val;
        break;
    case VNPU_REG_MMU_CONTROL:
        if ((val ^ s->mmu_control) & VNPU_MMU_CONTROL_ENABLE) {
            inval = inval_all = true;
        }
        vnpu_mmu_control_write_locked(s, addr, val);
        break;
    case VNPU_REG_MMU_CTX_TABLE_LO:
    case VNPU_REG_MMU_CTX_TABLE_HI:
    case VNPU_REG_MMU_CTX_COUNT:
        if (s->mmu_control & VNPU_MMU_CONTROL_ENABLE) {
            vnpu_bad_write_locked(s, addr, val, "MMU is enabled");
            break;
        }
        if (addr == VNPU_REG_MMU_CTX_TABLE_LO) {
            s->ctx_table = deposit64(s->ctx_table, 0, 32, val);
        } else if (addr == VNPU_REG_MMU_CTX_TABLE_HI) {
            s->ctx_table = deposit64(s->ctx_table, 32, 32, val);
        } else if (val > VNPU_MAX_CONTEXTS) {
            vnpu_bad_write_locked(s, addr, val, "more than MAX_CONTEXTS");
        } else {
            s->ctx_count = val;
        }
        break;
    case VNPU_REG_MMU_TLB_INVAL:
        if ((val & ~(VNPU_TLB_INVAL_ALL | VNPU_TLB_INVAL_CTX_MASK)) ||
            (!(val & VNPU_TLB_INVAL_ALL) &&
             (val & VNPU_TLB_INVAL_CTX_MASK) >= VNPU_MAX_CONTEXTS)) {
            vnpu_bad_write_locked(s, addr, val, "bad TLB invalidation");
            break;
        }
        inval = true;
        inval_all = val & VNPU_TLB_INVAL_ALL;
        inval_ctx = val & VNPU_TLB_INVAL_CTX_MASK;
        break;
    case VNPU_REG_MMU_FAULT_STATUS:
        if (val & VNPU_FAULT_VALID) {
            s->fault_status = 0;
        }
        break;
    case VNPU_REG_DEBUG_INJECT_HANG:
    case VNPU_REG_DEBUG_INJECT_DMA_ERROR:
    case VNPU_REG_DEBUG_INJECT_LOST_IRQ:
    case VNPU_REG_DEBUG_INJECT_WEDGE:
        if (vnpu_is_debug_reg(s, addr)) {
            qatomic_set(vnpu_inject_counter(s, addr), val);
            break;
        }
        /* fall through: without x-fault-inject the offsets are undefined */
    default:
        vnpu_bad_write_locked(s, addr, val, "read-only or undefined register");
        break;
    }
out:
    qemu_mutex_unlock(&s->lock);

    if (inval) {
        /*
         * Synchronous: once this MMIO write returns no later translation
         * can use an entry cached before it.
         */
        vnpu_tlb_invalidate(s, inval_all, inval_ctx);
        qemu_mutex_lock(&s->lock);
        s->tlb_inval_seq++;
        qemu_mutex_unlock(&s->lock);
    }
    if (reset) {
        vnpu_do_reset(s, "soft");
    }
}

static const MemoryRegionOps vnpu_mmio_ops = {
    .read = vnpu_mmio_read,
    .write = vnpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ---- PCI / QOM ------------------------------------------------------------- */

static void vnpu_realize(PCIDevice *pdev, Error **errp)
{
    VnpuState *s = VNPU(pdev);
    const char *i8 = s->i8_kernel_name ? s->i8_kernel_name : "auto";
    unsigned v;

    if (s->num_engines < 1 || s->num_engines > VNPU_MAX_ENGINES) {
        error_setg(errp, "vnpu: engines must be 1..%d", VNPU_MAX_ENGINES);
        return;
    }
    if (s->scratch_mb < VNPU_SCRATCH_MB_MIN ||
        s->scratch_mb > VNPU_SCRATCH_MB_MAX) {
        error_setg(errp, "vnpu: scratch-mb must be %d..%d (MiB of scratch "
                   "per engine), not %u", VNPU_SCRATCH_MB_MIN,
                   VNPU_SCRATCH_MB_MAX, s->scratch_mb);
        return;
    }
    if (s->help_spin_us > VNPU_HELP_SPIN_US_MAX) {
        error_setg(errp, "vnpu: help-spin-us must be 0..%d (microseconds an "
                   "idle engine looks for work to share), not %u",
                   VNPU_HELP_SPIN_US_MAX, s->help_spin_us);
        return;
    }
    if (vnpu_i8_kernel_parse(i8, &s->i8_kernel)) {
        error_setg(errp, "vnpu: i8-kernel '%s' is not one of auto, generic, "
                   "avx2, avx512-vnni", i8);
        return;
    }
    /* An explicit choice is for testing or measuring it: never substitute. */
    if (s->i8_kernel != VNPU_I8_AUTO &&
        !vnpu_i8_kernel_available(s->i8_kernel)) {
        error_setg(errp, "vnpu: i8-kernel '%s' needs a CPU feature this "
                   "host lacks", i8);
        return;
    }
    if (!s->fault_inject &&
        (s->inject_hang || s->inject_dma_error || s->inject_lost_irq ||
         s->inject_wedge)) {
        error_setg(errp, "vnpu: inject-* need x-fault-inject=on");
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    if (pcie_endpoint_cap_init(pdev, VNPU_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "vnpu: cannot add the PCIe capability");
        return;
    }
    pcie_cap_flr_init(pdev);

    memory_region_init_io(&s->mmio, OBJECT(s), &vnpu_mmio_ops, s,
                          "vnpu-regs", VNPU_BAR_REGS_SIZE);
    pci_register_bar(pdev, VNPU_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);
    if (pci_add_capability(pdev, PCI_CAP_ID_PM, VNPU_PM_CAP_OFFSET,
                           PCI_PM_SIZEOF, errp) < 0) {
        pcie_cap_exit(pdev);
        return;
    }
    /* D0 and D3hot only; NoSoftReset clear: D3hot loses the device state. */
    pci_set_word(pdev->config + VNPU_PM_CAP_OFFSET + PCI_PM_PMC, 0x3);
    pci_set_word(pdev->wmask + VNPU_PM_CAP_OFFSET + PCI_PM_CTRL,
                 PCI_PM_CTRL_STATE_MASK);
    if (s->msix &&
        msix_init_exclusive_bar(pdev, VNPU_MSIX_NUM_VECTORS, VNPU_BAR_MSIX,
                                errp)) {
        pcie_cap_exit(pdev);
        return;
    }
    for (v = 0; s->msix && v < VNPU_MSIX_NUM_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }

    s->as = pci_get_address_space(pdev);
    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->work_cond);
    qemu_cond_init(&s->abort_cond);
    qemu_cond_init(&s->split_cond);
    qemu_mutex_init(&s->gate_lock);
    qemu_cond_init(&s->gate_cond);
    vnpu_tlb_init(s);
    s->irq_bh = qemu_bh_new(vnpu_irq_bh, s);
    if (!vnpu_engines_start(s, errp)) {
        qemu_bh_delete(s->irq_bh);
        vnpu_tlb_free(s);
        qemu_cond_destroy(&s->gate_cond);
        qemu_mutex_destroy(&s->gate_lock);
        qemu_cond_destroy(&s->split_cond);
        qemu_cond_destroy(&s->abort_cond);
        qemu_cond_destroy(&s->work_cond);
        qemu_mutex_destroy(&s->lock);
        if (s->msix) {
            msix_unuse_all_vectors(pdev);
            msix_uninit_exclusive_bar(pdev);
        }
        pcie_cap_exit(pdev);
        return;
    }
    s->started = true;
}

/*
 * Unplug.  Workers are stopped, not joined: a worker busy with a compute
 * step finishes it on its own scratch and exits later, still holding a
 * reference to the device, so what it uses (lock, TLB, arena) is freed in
 * vnpu_instance_finalize().  It no longer touches guest memory, the
 * address space or the interrupt machinery torn down here.
 */
static void vnpu_exit(PCIDevice *pdev)
{
    VnpuState *s = VNPU(pdev);
    int64_t t0 = get_clock();

    vnpu_engines_stop(s);
    trace_vnpu_unrealize(get_clock() - t0);
    qemu_bh_delete(s->irq_bh);
    s->irq_bh = NULL;
    if (s->msix) {
        msix_unuse_all_vectors(pdev);
        msix_uninit_exclusive_bar(pdev);
    }
    pcie_cap_exit(pdev);
}

static void vnpu_instance_finalize(Object *obj)
{
    VnpuState *s = VNPU(obj);

    if (!s->started) {
        return;
    }
    vnpu_engines_join(s);
    trace_vnpu_finalize();
    vnpu_tlb_free(s);
    qemu_cond_destroy(&s->gate_cond);
    qemu_mutex_destroy(&s->gate_lock);
    qemu_cond_destroy(&s->split_cond);
    qemu_cond_destroy(&s->abort_cond);
    qemu_cond_destroy(&s->work_cond);
    qemu_mutex_destroy(&s->lock);
}

/*
 * Entering D3hot powers the engines down: every job is abandoned and the
 * register file returns to its reset values, as after D3hot -> D0 on a
 * function without NoSoftReset.  The driver must reprogram everything on
 * the way back to D0.
 */
static void vnpu_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    VnpuState *s = VNPU(pdev);
    bool was_down = vnpu_powered_down(s);

    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    if (vnpu_powered_down(s) != was_down) {
        trace_vnpu_power(was_down ? 0 : 3);
        if (!was_down) {
            vnpu_do_reset(s, "d3hot");
        }
    }
}

/*
 * The inject-* counters.  Runtime-settable with qom-set and consumed by
 * the engines atomically, but only on a device with x-fault-inject=on: a
 * production configuration must not be one qom-set away from failing
 * jobs.  Before realize any value is stored (property order on the
 * command line is not defined); realize then refuses a device that has
 * counters armed without x-fault-inject.
 */
static void vnpu_get_inject(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    uint32_t val = qatomic_read((uint32_t *)opaque);

    visit_type_uint32(v, name, &val, errp);
}

static void vnpu_set_inject(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    VnpuState *s = VNPU(obj);
    uint32_t val;

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (DEVICE(obj)->realized && !s->fault_inject) {
        error_setg(errp, "vnpu: %s needs x-fault-inject=on", name);
        return;
    }
    qatomic_set((uint32_t *)opaque, val);
}

static void vnpu_instance_init(Object *obj)
{
    VnpuState *s = VNPU(obj);
    static const struct {
        const char *name;
        size_t off;
    } counters[] = {
        { "inject-hang", offsetof(VnpuState, inject_hang) },
        { "inject-dma-error", offsetof(VnpuState, inject_dma_error) },
        { "inject-lost-irq", offsetof(VnpuState, inject_lost_irq) },
        { "inject-wedge", offsetof(VnpuState, inject_wedge) },
    };
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(counters); i++) {
        object_property_add(obj, counters[i].name, "uint32", vnpu_get_inject,
                            vnpu_set_inject, NULL,
                            (uint8_t *)s + counters[i].off);
    }
}

static Property vnpu_properties[] = {
    DEFINE_PROP_UINT32("engines", VnpuState, num_engines, 2),
    DEFINE_PROP_UINT32("scratch-mb", VnpuState, scratch_mb,
                       VNPU_SCRATCH_MB_DEFAULT),
    DEFINE_PROP_UINT32("help-spin-us", VnpuState, help_spin_us,
                       VNPU_HELP_SPIN_US_DEFAULT),
    DEFINE_PROP_STRING("i8-kernel", VnpuState, i8_kernel_name),
    DEFINE_PROP_BOOL("x-fault-inject", VnpuState, fault_inject, false),
    /* Off: no MSI-X capability, so drivers fall back to INTx. */
    DEFINE_PROP_BOOL("x-msix", VnpuState, msix, true),
    DEFINE_PROP_END_OF_LIST(),
};

/* Jobs run on host threads against guest memory; nothing to migrate yet. */
static const VMStateDescription vnpu_vmstate = {
    .name = "vnpu",
    .unmigratable = 1,
};

static void vnpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = vnpu_realize;
    k->exit = vnpu_exit;
    k->config_write = vnpu_write_config;
    k->vendor_id = VNPU_PCI_VENDOR_ID;
    k->device_id = VNPU_PCI_DEVICE_ID;
    k->revision = VNPU_PCI_REVISION;
    k->class_id = VNPU_PCI_CLASS_CODE >> 8;
    dc->desc = "vnpu virtual NPU";
    dc->reset = vnpu_qdev_reset;
    dc->vmsd = &vnpu_vmstate;
    device_class_set_props(dc, vnpu_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo vnpu_info = {
    .name = TYPE_VNPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VnpuState),
    .instance_init = vnpu_instance_init,
    .instance_finalize = vnpu_instance_finalize,
    .class_init = vnpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void vnpu_register_types(void)
{
    type_register_static(&vnpu_info);
}
type_init(vnpu_register_types)
