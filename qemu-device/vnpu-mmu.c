/*
 * vnpu device MMU: context table, 4-level page-table walk, software TLB,
 * and the struct vnpu_mem_ops callbacks the command processor and the
 * compute engine use to reach device virtual addresses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "exec/memory.h"
#include "vnpu-internal.h"
#include "vnpu_exec.h"
#include "trace.h"

#define VNPU_VA_LIMIT   (1ull << VNPU_VA_BITS)
#define VNPU_PAGE_MASK  ((uint64_t)VNPU_PAGE_SIZE - 1)
/* Bound one map() so a bogus length cannot make us walk for minutes. */
#define VNPU_MAP_MAX    (64ull << 20)

void vnpu_tlb_init(VnpuState *s)
{
    qemu_mutex_init(&s->tlb_lock);
    s->ctx_cache = g_new0(VnpuCtxCache, VNPU_MAX_CONTEXTS);
}

void vnpu_tlb_free(VnpuState *s)
{
    g_free(s->ctx_cache);
    s->ctx_cache = NULL;
    qemu_mutex_destroy(&s->tlb_lock);
}

static void vnpu_ctx_cache_clear(VnpuCtxCache *c)
{
    c->gen++;
    c->root_valid = false;
    c->pt_root = 0;
    memset(c->e, 0, sizeof(c->e));
}

void vnpu_tlb_invalidate(VnpuState *s, bool all, uint32_t ctx)
{
    unsigned i;

    qemu_mutex_lock(&s->tlb_lock);
    if (all) {
        s->tlb_gen_all++;
        for (i = 0; i < VNPU_MAX_CONTEXTS; i++) {
            vnpu_ctx_cache_clear(&s->ctx_cache[i]);
        }
    } else if (ctx < VNPU_MAX_CONTEXTS) {
        vnpu_ctx_cache_clear(&s->ctx_cache[ctx]);
    }
    qemu_mutex_unlock(&s->tlb_lock);
}

static uint32_t vnpu_fault(unsigned reason, bool is_write)
{
    return VNPU_FAULT_VALID | (is_write ? VNPU_FAULT_WRITE : 0) |
           (reason << VNPU_FAULT_REASON_SHIFT);
}

static bool vnpu_read_le64(VnpuState *s, uint64_t addr, uint64_t *val)
{
    uint64_t raw;

    if (!vnpu_dma_rw(s, addr, &raw, sizeof(raw), false)) {
        return false;
    }
    *val = le64_to_cpu(raw);
    return true;
}

/*
 * Translate one page.  Returns 0 and the page's DMA address, or the
 * VNPU_FAULT_* word describing why the access is not allowed.  Never
 * records anything: callers decide whether a failure is a fault.
 */
static uint32_t vnpu_translate(VnpuJob *job, uint64_t va, bool is_write,
                               uint64_t *pa)
{
    VnpuState *s = job->s;
    uint64_t vpn = va >> VNPU_PAGE_SHIFT;
    uint64_t need = is_write ? VNPU_PTE_WRITE : VNPU_PTE_READ;
    VnpuCtxCache *c;
    VnpuTlbEntry *e;
    uint64_t gen, gen_all, root, table, pte = 0;
    bool root_cached;
    int l;

    if (!job->mmu_on) {
        *pa = va & ~VNPU_PAGE_MASK;
        return 0;
    }
    if (va >= VNPU_VA_LIMIT) {
        return vnpu_fault(VNPU_FAULT_REASON_ADDRESS, is_write);
    }
    if (job->ctx_id >= job->ctx_count) {
        return vnpu_fault(VNPU_FAULT_REASON_CONTEXT, is_write);
    }

    c = &s->ctx_cache[job->ctx_id];
    qemu_mutex_lock(&s->tlb_lock);
    e = &c->e[vpn % VNPU_TLB_ENTRIES];
    if (e->perms && e->vpn == vpn) {
        uint64_t perms = e->perms, page = e->pa;

        qemu_mutex_unlock(&s->tlb_lock);
        if (!(perms & need)) {
            return vnpu_fault(VNPU_FAULT_REASON_PERMISSION, is_write);
        }
        *pa = page;
        return 0;
    }
    gen = c->gen;
    gen_all = s->tlb_gen_all;
    root_cached = c->root_valid;
    root = c->pt_root;
    qemu_mutex_unlock(&s->tlb_lock);

    if (!root_cached) {
        uint64_t ent[2];

        if (!vnpu_dma_rw(s, job->ctx_table +
                         (uint64_t)job->ctx_id * sizeof(struct vnpu_hw_ctx_entry),
                         ent, sizeof(ent), false)) {
            return vnpu_fault(VNPU_FAULT_REASON_BUS, is_write);
        }
        root = le64_to_cpu(ent[0]);
        if (!(root & VNPU_CTX_VALID) || le64_to_cpu(ent[1]) != 0) {
            return vnpu_fault(VNPU_FAULT_REASON_CONTEXT, is_write);
        }
        root &= VNPU_PTE_ADDR_MASK;
    }

    table = root;
    for (l = 0; l < VNPU_PT_LEVELS; l++) {
        if (!vnpu_read_le64(s, table + VNPU_PT_INDEX(va, l) * 8, &pte)) {
            return vnpu_fault(VNPU_FAULT_REASON_BUS, is_write);
        }
        if (!(pte & VNPU_PTE_VALID)) {
            return vnpu_fault(VNPU_FAULT_REASON_TRANSLATION, is_write);
        }
        table = pte & VNPU_PTE_ADDR_MASK;
    }

    qemu_mutex_lock(&s->tlb_lock);
    /* Insert only if no invalidation ran while we walked. */
    if (c->gen == gen && s->tlb_gen_all == gen_all) {
        c->root_valid = true;
        c->pt_root = root;
        if (pte & (VNPU_PTE_READ | VNPU_PTE_WRITE)) {
            e->vpn = vpn;
            e->pa = table;
            e->perms = pte & (VNPU_PTE_READ | VNPU_PTE_WRITE);
        }
    }
    qemu_mutex_unlock(&s->tlb_lock);

    if (!(pte & need)) {
        return vnpu_fault(VNPU_FAULT_REASON_PERMISSION, is_write);
    }
    *pa = table;
    return 0;
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

static void vnpu_job_fail(VnpuJob *job, uint32_t status, uint64_t va)
{
    if (job->failed) {
        return;
    }
    job->failed = true;
    job->rec.status = status;
    job->rec.fault_va = va;
}

static int vnpu_mem_access(VnpuJob *job, uint64_t va, void *buf, uint64_t len,
                           bool is_write)
{
    uint8_t *p = buf;

    if (job->failed) {
        return -EFAULT;
    }
    if (va + len < va) {
        vnpu_job_mmu_fault(job, va,
                           vnpu_fault(VNPU_FAULT_REASON_ADDRESS, is_write));
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
        pa += va & VNPU_PAGE_MASK;
        run = MIN(len, VNPU_PAGE_SIZE - (va & VNPU_PAGE_MASK));
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
    pa += va & VNPU_PAGE_MASK;
    for (off = VNPU_PAGE_SIZE - (va & VNPU_PAGE_MASK); off < len;
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
