/*
 * vnpu PCIe NPU device model: state shared by the device's source files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Locking (see also Documentation/hw-spec.rst, "Device model notes"):
 *
 * - The BQL is held by MMIO handlers, reset, realize/unrealize and the
 *   interrupt bottom half.  Worker threads never take it: every DMA they
 *   issue is restricted to RAM (vnpu_dma_rw), which address_space_* serve
 *   under RCU without the BQL.  This is what lets reset, under the BQL,
 *   wait for the workers to abandon their jobs without deadlocking.
 * - VnpuState.lock protects the register file, the queue state, the
 *   engine slots and the pending interrupt vectors.  No DMA is ever issued
 *   with it held.
 * - VnpuState.tlb_lock protects the software TLB only; page-table walks
 *   run without it and insert their result only if no invalidation raced
 *   with them (generation counters).
 */
#ifndef HW_VNPU_INTERNAL_H
#define HW_VNPU_INTERNAL_H

#include "hw/pci/pci.h"
#include "qemu/thread.h"
#include "qom/object.h"
#include "vnpu_hw.h"
#include "vnpu-core.h"

#define TYPE_VNPU "vnpu"
OBJECT_DECLARE_SIMPLE_TYPE(VnpuState, VNPU)

#define VNPU_MAX_ENGINES        8
/* How long reset waits for workers to abandon their jobs (see vnpu.c). */
#define VNPU_RESET_WAIT_MS      2000

typedef struct VnpuQueue {
    uint64_t ring;
    uint64_t compl;
    uint32_t size;
    uint32_t head;
    uint32_t tail;
    uint32_t fetch_tail;        /* TAIL as of the last doorbell */
    uint32_t control;
    uint32_t priority;
    bool error;                 /* halted on a ring error */
    bool busy;                  /* a job of this queue is on an engine */
    uint64_t done_seq;
    uint32_t done_seq_hi_latch;
} VnpuQueue;

typedef struct VnpuEngine VnpuEngine;

/* One job being executed by an engine; lives on the worker's stack. */
typedef struct VnpuJob {
    VnpuState *s;
    VnpuEngine *eng;
    unsigned queue;
    uint32_t slot;
    uint64_t reset_gen;

    /* MMU configuration snapshot taken when the job started. */
    VnpuMmuConfig mmu;
    uint32_t ctx_id;

    struct vnpu_hw_desc desc;
    struct vnpu_hw_completion rec;
    bool failed;                /* rec.status is final */
    bool lost_irq;
} VnpuJob;

/* The first failure of a job is the one its completion record reports. */
static inline void vnpu_job_fail(VnpuJob *job, uint32_t status, uint64_t va)
{
    if (job->failed) {
        return;
    }
    job->failed = true;
    job->rec.status = status;
    job->rec.fault_va = va;
}

struct VnpuEngine {
    VnpuState *s;
    unsigned index;
    QemuThread thread;
    bool busy;                  /* under s->lock */
    bool abort;                 /* under s->lock; read racily by the job */
};

struct VnpuState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion msix_bar;
    AddressSpace *as;           /* bus master address space */
    QEMUBH *irq_bh;

    /* properties */
    uint32_t num_engines;
    uint32_t inject_hang;
    uint32_t inject_dma_error;
    uint32_t inject_lost_irq;

    QemuMutex lock;
    QemuCond work_cond;         /* workers wait for jobs */
    QemuCond idle_cond;         /* reset waits for engines to drain */
    QemuCond abort_cond;        /* hung jobs wait for abort */
    bool stopping;
    uint64_t reset_gen;
    unsigned rr_next;

    /* register file, under lock */
    uint32_t control;
    uint32_t irq_status;
    uint32_t irq_mask;
    uint32_t error_status;
    uint32_t scratch;
    uint32_t ts_hi_latch;
    uint32_t mmu_control;
    uint64_t ctx_table;
    uint32_t ctx_count;
    uint32_t tlb_inval_seq;
    uint32_t fault_status;
    uint32_t fault_ctx;
    uint64_t fault_va;
    uint32_t fault_queue;
    VnpuQueue q[VNPU_NUM_QUEUES];
    uint32_t notify_vecs;       /* MSI-X vectors the bottom half sends */

    VnpuEngine eng[VNPU_MAX_ENGINES];

    QemuMutex tlb_lock;
    VnpuTlb *tlb;               /* under tlb_lock */
    VnpuMmu mmu;                /* walks through vnpu_dma_rw, locks tlb_lock */
};

/* vnpu.c */
uint64_t vnpu_now_ns(void);
void vnpu_raise_locked(VnpuState *s, uint32_t irq_bits, bool send);
void vnpu_error_locked(VnpuState *s, uint32_t err_bits);
bool vnpu_dma_is_ram(VnpuState *s, uint64_t addr, uint64_t len,
                     bool is_write);
bool vnpu_dma_rw(VnpuState *s, uint64_t addr, void *buf, uint64_t len,
                 bool is_write);
bool vnpu_take_injection(uint32_t *counter);

/* vnpu-mmu.c */
void vnpu_tlb_init(VnpuState *s);
void vnpu_tlb_free(VnpuState *s);
void vnpu_tlb_invalidate(VnpuState *s, bool all, uint32_t ctx);
int vnpu_mem_read(void *opaque, uint64_t va, void *buf, uint64_t len);
int vnpu_mem_write(void *opaque, uint64_t va, const void *buf, uint64_t len);
void *vnpu_mem_map(void *opaque, uint64_t va, uint64_t len, bool is_write);
void vnpu_mem_unmap(void *opaque, void *host, uint64_t len, bool is_write,
                    uint64_t access_len);

/* vnpu-engine.c */
void vnpu_engines_start(VnpuState *s);
void vnpu_engines_stop(VnpuState *s);
void vnpu_engines_abort_locked(VnpuState *s);
bool vnpu_job_aborted(VnpuJob *job);
void vnpu_kick_locked(VnpuState *s);

#endif
