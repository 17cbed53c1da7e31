/*
 * vnpu PCIe NPU device model: state shared by the device's source files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Locking (see also Documentation/hw-spec.rst, "Device model notes"):
 *
 * - The BQL is held by MMIO handlers, reset, realize/unrealize and the
 *   interrupt bottom half.  Worker threads never take it: every DMA they
 *   issue goes to RAM only, translated and accessed in one RCU critical
 *   section (vnpu-dma.c), never through an MMIO dispatch.
 * - VnpuState.lock protects the register file, the queue state, the
 *   engine slots and the pending interrupt vectors.  No DMA is ever issued
 *   with it held.
 * - VnpuState.tlb_lock protects the software TLB only; page-table walks
 *   run without it and insert their result only if no invalidation raced
 *   with them (generation counters) and their job is still current.
 * - Every access a worker makes to guest memory passes the reset gate
 *   (vnpu_job_dma): the engine's in_dma flag, then a check of the job's
 *   reset generation.  Reset bumps the generation, then waits for in_dma
 *   to drop, so once it returns no access of an older job can happen.
 *   An output mapped for writing holds the gate (maps_out) until it is
 *   unmapped, so reset also waits for an abandoned engine to reach its
 *   next abort check and unmap it.
 *   This is why reset and unrealize need not wait for workers to finish
 *   their jobs: an abandoned job keeps only its engine (and, after
 *   unrealize, a reference to the device, dropped when its worker exits).
 */
#ifndef HW_VNPU_INTERNAL_H
#define HW_VNPU_INTERNAL_H

#include "hw/pci/pci.h"
#include "qemu/thread.h"
#include "qom/object.h"
#include "vnpu_hw.h"
#include "vnpu_exec.h"
#include "vnpu-core.h"

#define TYPE_VNPU "vnpu"
OBJECT_DECLARE_SIMPLE_TYPE(VnpuState, VNPU)

#define VNPU_MAX_ENGINES        8
/*
 * The longest reset waits for a guest-memory access already in flight to
 * finish (vnpu_dma_quiesce).  Such an access is one chunk of at most
 * VNPU_DMA_CHUNK bytes, microseconds of memcpy; the bound only matters if
 * the host stalls a worker in the middle of one.
 */
#define VNPU_RESET_WAIT_MS      2000
/*
 * Largest piece of guest memory one bus transaction moves: bounds the time
 * between two abort checks of a transfer, and how long reset can wait for
 * a write in flight.
 */
#define VNPU_DMA_CHUNK          (256 * 1024)
/* How long reset spins on an access in flight before it blocks. */
#define VNPU_GATE_SPIN_US       50
/* Per-engine scratch (QOM property scratch-mb), in MiB. */
#define VNPU_SCRATCH_MB_DEFAULT 512
#define VNPU_SCRATCH_MB_MIN     1
#define VNPU_SCRATCH_MB_MAX     16384
/*
 * How long an engine with nothing to do keeps looking for a band of a
 * shared command while another engine runs a job (property help-spin-us;
 * 0: it sleeps at once).  A job's commands follow each other within
 * microseconds, far sooner than a sleeping thread is woken on a loaded
 * host; a millisecond covers the gaps between a job's shared commands.
 */
#define VNPU_HELP_SPIN_US_DEFAULT 1000
#define VNPU_HELP_SPIN_US_MAX   1000000

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

/* Inputs of one compute command mapped at once (its slots, at most). */
#define VNPU_JOB_READ_MAPS      4

typedef struct VnpuReadMap {
    const uint8_t *host;        /* NULL: free */
    uint64_t len;
} VnpuReadMap;

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
    /* Inputs mapped now: an output overlapping one is not mapped. */
    VnpuReadMap read_maps[VNPU_JOB_READ_MAPS];
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
    struct vnpu_arena *arena;   /* scratch of this engine's commands */
    struct vnpu_engine_cfg cfg;
    /* The split of this engine's current command (vnpu-engine.c), reused. */
    struct VnpuSplit *split_buf;
    bool busy;                  /* under s->lock */
    uint64_t job_gen;           /* under s->lock: reset_gen of its job */
    bool abort;                 /* under s->lock; read racily by the job */
    bool in_dma;                /* atomic: a guest-memory access in flight */
    int maps_out;               /* atomic: outputs mapped for writing */
};

struct VnpuState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion msix_bar;
    AddressSpace *as;           /* bus master address space */
    QEMUBH *irq_bh;

    /* properties */
    uint32_t num_engines;
    uint32_t scratch_mb;
    uint32_t help_spin_us;
    char *i8_kernel_name;
    enum vnpu_i8_kernel i8_kernel;
    bool fault_inject;
    bool msix;                  /* has the MSI-X capability and BAR */
    uint32_t inject_hang;
    uint32_t inject_dma_error;
    uint32_t inject_lost_irq;
    uint32_t inject_wedge;
    bool wedged;                /* STATUS never READY: inject_wedge fired */

    QemuMutex lock;
    QemuCond work_cond;         /* workers wait for jobs */
    QemuCond abort_cond;        /* hung jobs wait for abort */
    QemuCond split_cond;        /* a split command waits for its helpers */
    struct VnpuSplit *split;    /* under lock: the command idle engines share */
    bool started;               /* lock, TLB and workers exist */
    bool stopping;
    uint64_t reset_gen;         /* written under lock, read atomically */
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

    /* The reset gate's slow path: quiesce sleeps, workers wake it. */
    QemuMutex gate_lock;
    QemuCond gate_cond;
    int gate_waiters;           /* atomic */

    QemuMutex tlb_lock;
    VnpuTlb *tlb;               /* under tlb_lock */
    VnpuMmu mmu;                /* walks through vnpu_dma_rw, locks tlb_lock */
};

/* vnpu.c */
uint64_t vnpu_now_ns(void);
void vnpu_raise_locked(VnpuState *s, uint32_t irq_bits, bool send);
void vnpu_error_locked(VnpuState *s, uint32_t err_bits);
bool vnpu_take_injection(VnpuState *s, uint32_t *counter);

/* vnpu-dma.c */
typedef enum VnpuDmaResult {
    VNPU_DMA_OK,
    VNPU_DMA_BUS_ERROR,         /* not RAM (or read-only RAM for a write) */
    VNPU_DMA_STALE,             /* the job was abandoned by a reset */
} VnpuDmaResult;

VnpuDmaResult vnpu_job_dma(VnpuJob *job, uint64_t addr, void *buf,
                           uint64_t len, bool is_write);
void *vnpu_job_map_read(VnpuJob *job, uint64_t addr, uint64_t len);
void vnpu_dma_unmap_read(void *host);
void *vnpu_job_map_write(VnpuJob *job, uint64_t addr, uint64_t len);
void vnpu_job_unmap_write(VnpuJob *job, void *host, uint64_t len);
bool vnpu_job_current(VnpuJob *job);
bool vnpu_dma_quiesce(VnpuState *s);

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
bool vnpu_engines_start(VnpuState *s, Error **errp);
void vnpu_engines_stop(VnpuState *s);
void vnpu_engines_join(VnpuState *s);
void vnpu_engines_abort_locked(VnpuState *s);
bool vnpu_job_aborted(VnpuJob *job);
void vnpu_kick_locked(VnpuState *s);

#endif
