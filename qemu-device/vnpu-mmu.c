/*
 * vnpu device MMU in QEMU: binds the walk and TLB of vnpu-core-mmu.c to
 * guest memory and the TLB lock, and implements the struct vnpu_mem_ops
 * callbacks the command processor and the compute engine use to reach
 * device virtual addresses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "exec/memory.h"
#include "vnpu-internal.h"
#include "vnpu_exec.h"
#include "trace.h"

/* Bound one map() so a bogus length cannot make us walk for minutes. */
#define VNPU_MAP_MAX    (64ull << 20)

static bool vnpu_mmu_bus_read(void *opaque, uint64_t addr, void *buf,
                              uint64_t len)
{
    return vnpu_dma_rw(opaque, addr, buf, len, false);
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
    s->mmu = (VnpuMmu) {
        .tlb = s->tlb,
        .read = vnpu_mmu_bus_read,
        .bus = s,
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

/*
 * Translate one page.  Returns 0 and the page's DMA address, or the
 * VNPU_FAULT_* word describing why the access is not allowed.  Never
 * records anything: callers decide whether a failure is a fault.
 */
static uint32_t vnpu_translate(VnpuJob *job, uint64_t va, bool is_write,
                               uint64_t *pa)
{
    return vnpu_mmu_translate(&job->s->mmu, &job->mmu, job->ctx_id, va,
                              is_write, pa);
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
        uint64_t pa, npa, run;
        uint32_t f;

        if (vnpu_job_aborted(job)) {
            vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, va);
            return -EFAULT;
        }
        f = vnpu_translate(job, va, is_write, &pa);
        if (f) {
            vnpu_job_mmu_fault(job, va, f);
            return -EFAULT;
        }
        pa += va & VNPU_PAGE_OFFSET_MASK;
        run = MIN(len, VNPU_PAGE_SIZE - (va & VNPU_PAGE_OFFSET_MASK));
        /* Coalesce physically contiguous pages into one bus transaction. */
        while (run < len && run < VNPU_MAP_MAX) {
            if (vnpu_translate(job, va + run, is_write, &npa) ||
                npa != pa + run) {
                break;
            }
            run += MIN(len - run, VNPU_PAGE_SIZE);
        }
        if (!vnpu_dma_rw(job->s, pa, p, run, is_write)) {
            vnpu_job_fail(job, VNPU_JOB_STATUS_DMA_ERROR, va);
            return -EFAULT;
        }
        va += run;
        p += run;
        len -= run;
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

void *vnpu_mem_map(void *opaque, uint64_t va, uint64_t len, bool is_write)
{
    VnpuJob *job = opaque;
    uint64_t pa, npa, off;
    hwaddr plen = len;
    void *host;

    if (job->failed || len == 0 || len > VNPU_MAP_MAX || va + len < va ||
        vnpu_job_aborted(job)) {
        return NULL;
    }
    /*
     * Any fault falls back to read/write, which then records it with the
     * exact VA; map() itself never faults.
     */
    if (vnpu_translate(job, va, is_write, &pa)) {
        return NULL;
    }
    pa += va & VNPU_PAGE_OFFSET_MASK;
    for (off = VNPU_PAGE_SIZE - (va & VNPU_PAGE_OFFSET_MASK); off < len;
         off += VNPU_PAGE_SIZE) {
        if (vnpu_translate(job, va + off, is_write, &npa) || npa != pa + off) {
            return NULL;
        }
    }
    if (!vnpu_dma_is_ram(job->s, pa, len, is_write)) {
        return NULL;
    }
    host = address_space_map(job->s->as, pa, &plen, is_write,
                             MEMTXATTRS_UNSPECIFIED);
    if (host && plen < len) {
        address_space_unmap(job->s->as, host, plen, is_write, 0);
        host = NULL;
    }
    return host;
}

void vnpu_mem_unmap(void *opaque, void *host, uint64_t len, bool is_write,
                    uint64_t access_len)
{
    VnpuJob *job = opaque;

    address_space_unmap(job->s->as, host, len, is_write, MIN(access_len, len));
}
