/*
 * vnpu device MMU in QEMU: binds the walk and TLB of vnpu-core-mmu.c to
 * guest memory and the TLB lock, and implements the struct vnpu_mem_ops
 * callbacks the command processor and the compute engine use to reach
 * device virtual addresses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "exec/memory.h"
#include "vnpu-internal.h"
#include "vnpu_exec.h"
#include "trace.h"

/*
 * Bound one map() so a bogus length cannot make us walk for long: 32 leaf
 * tables at most.
 */
#define VNPU_MAP_MAX    (64ull << 20)

/* Context entries and page tables are read on behalf of a job, gated. */
static bool vnpu_mmu_bus_read(void *opaque, uint64_t addr, void *buf,
                              uint64_t len)
{
    return vnpu_job_dma(opaque, addr, buf, len, false) == VNPU_DMA_OK;
}

static void vnpu_mmu_tlb_lock(void *opaque)
{
    qemu_mutex_lock((QemuMutex *)opaque);
}

static void vnpu_mmu_tlb_unlock(void *opaque)
{
    qemu_mutex_unlock((QemuMutex *)opaque);
}

void vnpu_tlb_init(VnpuState *s)
{
    qemu_mutex_init(&s->tlb_lock);
    s->tlb = g_new0(VnpuTlb, 1);
    /* .read, .bus and .may_cache are the job's: see vnpu_translate_run(). */
    s->mmu = (VnpuMmu) {
        .tlb = s->tlb,
        .lock = vnpu_mmu_tlb_lock,
        .unlock = vnpu_mmu_tlb_unlock,
        .lock_opaque = &s->tlb_lock,
    };
}

void vnpu_tlb_free(VnpuState *s)
{
    g_free(s->tlb);
    s->tlb = NULL;
    qemu_mutex_destroy(&s->tlb_lock);
}

void vnpu_tlb_invalidate(VnpuState *s, bool all, uint32_t ctx)
{
    qemu_mutex_lock(&s->tlb_lock);
    vnpu_tlb_invalidate_locked(s->tlb, all, ctx);
    qemu_mutex_unlock(&s->tlb_lock);
}

static bool vnpu_mmu_may_cache(void *opaque)
{
    return vnpu_job_current(opaque);
}

/*
 * Translate the page holding @va and the physically contiguous run of at
 * most @len bytes from @va after it (vnpu_mmu_translate_run()).  Returns
 * 0, or the VNPU_FAULT_* word describing why @va's page is not
 * accessible.  Never records anything: callers decide whether a failure
 * is a fault.
 *
 * A job abandoned by reset still walks with the page tables it started
 * with; its translations must not enter the TLB the next jobs use.
 */
static uint32_t vnpu_translate_run(VnpuJob *job, uint64_t va, uint64_t len,
                                   bool is_write, uint64_t *pa, uint64_t *run)
{
    VnpuMmu mmu = job->s->mmu;

    mmu.read = vnpu_mmu_bus_read;
    mmu.bus = job;
    mmu.may_cache = vnpu_mmu_may_cache;
    mmu.cache_opaque = job;
    return vnpu_mmu_translate_run(&mmu, &job->mmu, job->ctx_id, va, len,
                                  is_write, pa, run);
}

/* The runs of one chunk (vnpu_mmu_translate_runs()): every 4 KiB page. */
#define VNPU_CHUNK_RUNS (VNPU_DMA_CHUNK / VNPU_PAGE_SIZE + 1)

static uint32_t vnpu_translate_runs(VnpuJob *job, uint64_t va, uint64_t len,
                                    bool is_write, VnpuRun *runs,
                                    unsigned *n)
{
    VnpuMmu mmu = job->s->mmu;

    mmu.read = vnpu_mmu_bus_read;
    mmu.bus = job;
    mmu.may_cache = vnpu_mmu_may_cache;
    mmu.cache_opaque = job;
    return vnpu_mmu_translate_runs(&mmu, &job->mmu, job->ctx_id, va, len,
                                   is_write, runs, VNPU_CHUNK_RUNS, n);
}

static void vnpu_job_mmu_fault(VnpuJob *job, uint64_t va, uint32_t flags)
{
    if (job->failed) {
        return;
    }
    trace_vnpu_mmu_fault(job->queue, job->ctx_id, va, flags);
    job->failed = true;
    job->rec.status = VNPU_JOB_STATUS_MMU_FAULT;
    job->rec.fault_flags = flags;
    job->rec.fault_va = va;
}

/*
 * Move @len bytes between @buf and device VA @va in chunks of at most
 * VNPU_DMA_CHUNK bytes, checking for an abort before each: a transfer of
 * a whole operand (up to the tensor span limit) stays abortable within
 * microseconds.  A chunk is translated at once into its physically
 * contiguous runs, one bus transaction each, so an operand on scattered
 * 4 KiB pages costs a copy per page but not a translation per page.
 */
static int vnpu_mem_access(VnpuJob *job, uint64_t va, void *buf, uint64_t len,
                           bool is_write)
{
    uint8_t *p = buf;

    if (job->failed) {
        return -EFAULT;
    }
    if (vnpu_range_wraps(va, len)) {
        vnpu_job_mmu_fault(job, va,
                           vnpu_fault_flags(VNPU_FAULT_REASON_ADDRESS,
                                            is_write));
        return -EFAULT;
    }
    while (len) {
        VnpuRun runs[VNPU_CHUNK_RUNS];
        unsigned n, i;
        uint32_t f;

        if (vnpu_job_aborted(job)) {
            vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, va);
            return -EFAULT;
        }
        f = vnpu_translate_runs(job, va, MIN(len, VNPU_DMA_CHUNK), is_write,
                                runs, &n);
        if (f) {
            vnpu_job_mmu_fault(job, va, f);
            return -EFAULT;
        }
        for (i = 0; i < n; i++) {
            VnpuDmaResult r = vnpu_job_dma(job, runs[i].pa, p, runs[i].len,
                                           is_write);

            if (r == VNPU_DMA_STALE) {
                vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, va);
                return -EFAULT;
            }
            if (r != VNPU_DMA_OK) {
                qemu_log_mask(LOG_GUEST_ERROR,
                              "vnpu: queue %u: DMA %s at VA 0x%" PRIx64
                              " (bus address 0x%" PRIx64 ") is not RAM\n",
                              job->queue, is_write ? "write" : "read", va,
                              runs[i].pa);
                vnpu_job_fail(job, VNPU_JOB_STATUS_DMA_ERROR, va);
                return -EFAULT;
            }
            va += runs[i].len;
            p += runs[i].len;
            len -= runs[i].len;
        }
    }
    return 0;
}

int vnpu_mem_read(void *opaque, uint64_t va, void *buf, uint64_t len)
{
    return vnpu_mem_access(opaque, va, buf, len, false);
}

int vnpu_mem_write(void *opaque, uint64_t va, const void *buf, uint64_t len)
{
    return vnpu_mem_access(opaque, va, (void *)buf, len, true);
}

/* Whether [@host, @host + @len) shares a byte with an input mapped now. */
static bool vnpu_overlaps_read_map(VnpuJob *job, const uint8_t *host,
                                   uint64_t len)
{
    unsigned i;

    for (i = 0; i < VNPU_JOB_READ_MAPS; i++) {
        const VnpuReadMap *m = &job->read_maps[i];

        if (m->host && host < m->host + m->len && m->host < host + len) {
            return true;
        }
    }
    return false;
}

static bool vnpu_track_read_map(VnpuJob *job, const uint8_t *host,
                                uint64_t len)
{
    unsigned i;

    for (i = 0; i < VNPU_JOB_READ_MAPS; i++) {
        if (!job->read_maps[i].host) {
            job->read_maps[i] = (VnpuReadMap) { .host = host, .len = len };
            return true;
        }
    }
    return false;
}

static void vnpu_untrack_read_map(VnpuJob *job, const uint8_t *host)
{
    unsigned i;

    for (i = 0; i < VNPU_JOB_READ_MAPS; i++) {
        if (job->read_maps[i].host == host) {
            job->read_maps[i].host = NULL;
            return;
        }
    }
}

/*
 * A host pointer to an operand that is one run of RAM, else NULL and the
 * caller bounces it through read() and write(), which also report any
 * fault at its exact VA: map() itself never faults.
 *
 * An output is mapped only if it shares no byte with an input mapped for
 * the same command: the engine may read an input after it wrote part of
 * its output, and a bounced output (written back once the op is done)
 * keeps the results what they were whenever operands alias.  A mapped
 * output holds the reset gate until it is unmapped (vnpu-dma.c).
 */
void *vnpu_mem_map(void *opaque, uint64_t va, uint64_t len, bool is_write)
{
    VnpuJob *job = opaque;
    uint64_t pa, run;
    uint8_t *host;

    if (job->failed || len == 0 || len > VNPU_MAP_MAX ||
        vnpu_range_wraps(va, len) || vnpu_job_aborted(job)) {
        return NULL;
    }
    if (vnpu_translate_run(job, va, len, is_write, &pa, &run) || run < len) {
        trace_vnpu_map(va, 0, len, is_write, false);
        return NULL;
    }
    if (!is_write) {
        host = vnpu_job_map_read(job, pa, len);
        if (host && !vnpu_track_read_map(job, host, len)) {
            vnpu_dma_unmap_read(host);
            host = NULL;
        }
    } else {
        host = vnpu_job_map_write(job, pa, len);
        if (host && vnpu_overlaps_read_map(job, host, len)) {
            vnpu_job_unmap_write(job, host, len);
            host = NULL;
        }
    }
    trace_vnpu_map(va, pa, len, is_write, host != NULL);
    return host;
}

void vnpu_mem_unmap(void *opaque, void *host, uint64_t len, bool is_write,
                    uint64_t access_len)
{
    VnpuJob *job = opaque;

    if (is_write) {
        vnpu_job_unmap_write(job, host, len);
    } else {
        vnpu_untrack_read_map(job, host);
        vnpu_dma_unmap_read(host);
    }
}
