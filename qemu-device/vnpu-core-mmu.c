/*
 * vnpu device MMU core: context lookup, 4-level page-table walk, fault
 * classification and the software TLB.  Plain C11, shared by the QEMU
 * device (vnpu-mmu.c) and the host unit tests; see vnpu-core.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "vnpu-core.h"

static inline uint64_t vnpu_min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint32_t vnpu_fault_flags(unsigned reason, bool is_write)
{
    return VNPU_FAULT_VALID | (is_write ? VNPU_FAULT_WRITE : 0) |
           (reason << VNPU_FAULT_REASON_SHIFT);
}

bool vnpu_ctx_table_valid(uint64_t table, uint32_t count)
{
    return !(table & (VNPU_CTX_TABLE_ALIGN - 1)) && count > 0 &&
           count <= VNPU_MAX_CONTEXTS;
}

uint32_t vnpu_mmu_walk(VnpuBusReadFn *read, void *opaque,
                       const VnpuMmuConfig *cfg, uint32_t ctx_id, uint64_t va,
                       bool is_write, const uint64_t *cached_root,
                       VnpuWalk *w)
{
    uint64_t need = is_write ? VNPU_PTE_WRITE : VNPU_PTE_READ;
    uint64_t table;
    uint8_t raw[16];
    int l;

    memset(w, 0, sizeof(*w));
    w->level = -1;
    if (!cfg->enabled) {
        w->pa = va & ~VNPU_PAGE_OFFSET_MASK;
        w->perms = VNPU_PTE_READ | VNPU_PTE_WRITE;
        return 0;
    }
    if (va >= VNPU_VA_LIMIT) {
        return vnpu_fault_flags(VNPU_FAULT_REASON_ADDRESS, is_write);
    }
    if (ctx_id >= cfg->ctx_count) {
        return vnpu_fault_flags(VNPU_FAULT_REASON_CONTEXT, is_write);
    }

    if (cached_root) {
        w->root = *cached_root;
    } else {
        if (!read(opaque, cfg->ctx_table +
                  (uint64_t)ctx_id * sizeof(struct vnpu_hw_ctx_entry),
                  raw, sizeof(raw))) {
            return vnpu_fault_flags(VNPU_FAULT_REASON_BUS, is_write);
        }
        w->root = vnpu_ld64_le(raw);
        if (!(w->root & VNPU_CTX_VALID) || vnpu_ld64_le(raw + 8) != 0) {
            return vnpu_fault_flags(VNPU_FAULT_REASON_CONTEXT, is_write);
        }
        w->root &= VNPU_PTE_ADDR_MASK;
    }

    table = w->root;
    for (l = 0; l < VNPU_PT_LEVELS; l++) {
        w->level = l;
        if (l == VNPU_PT_LEVELS - 1) {
            w->leaf = table;
        }
        if (!read(opaque, table + VNPU_PT_INDEX(va, l) * 8, raw, 8)) {
            return vnpu_fault_flags(VNPU_FAULT_REASON_BUS, is_write);
        }
        w->pte = vnpu_ld64_le(raw);
        if (!(w->pte & VNPU_PTE_VALID)) {
            return vnpu_fault_flags(VNPU_FAULT_REASON_TRANSLATION, is_write);
        }
        table = w->pte & VNPU_PTE_ADDR_MASK;
    }
    w->pa = table;
    w->perms = w->pte & (VNPU_PTE_READ | VNPU_PTE_WRITE);
    if (!(w->perms & need)) {
        return vnpu_fault_flags(VNPU_FAULT_REASON_PERMISSION, is_write);
    }
    return 0;
}

static void vnpu_ctx_cache_clear(VnpuCtxCache *c)
{
    c->gen++;
    c->root_valid = false;
    c->pt_root = 0;
    memset(c->e, 0, sizeof(c->e));
    memset(c->leaf, 0, sizeof(c->leaf));
}

void vnpu_tlb_invalidate_locked(VnpuTlb *t, bool all, uint32_t ctx)
{
    unsigned i;

    if (all) {
        t->gen_all++;
        for (i = 0; i < VNPU_MAX_CONTEXTS; i++) {
            vnpu_ctx_cache_clear(&t->ctx[i]);
        }
    } else if (ctx < VNPU_MAX_CONTEXTS) {
        vnpu_ctx_cache_clear(&t->ctx[ctx]);
    }
}

static void vnpu_mmu_lock(const VnpuMmu *mmu)
{
    if (mmu->lock) {
        mmu->lock(mmu->lock_opaque);
    }
}

static void vnpu_mmu_unlock(const VnpuMmu *mmu)
{
    if (mmu->unlock) {
        mmu->unlock(mmu->lock_opaque);
    }
}

uint32_t vnpu_mmu_translate(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                            uint32_t ctx_id, uint64_t va, bool is_write,
                            uint64_t *pa)
{
    uint64_t vpn = va >> VNPU_PAGE_SHIFT;
    uint64_t need = is_write ? VNPU_PTE_WRITE : VNPU_PTE_READ;
    VnpuTlb *t = mmu->tlb;
    VnpuCtxCache *c;
    VnpuTlbEntry *e;
    uint64_t gen, gen_all, root;
    bool root_cached;
    VnpuWalk w;
    uint32_t fault;

    /* Bypass, bad VA and bad context id never reach the cache. */
    if (!cfg->enabled || va >= VNPU_VA_LIMIT || ctx_id >= cfg->ctx_count) {
        fault = vnpu_mmu_walk(mmu->read, mmu->bus, cfg, ctx_id, va, is_write,
                              NULL, &w);
        if (!fault) {
            *pa = w.pa;
        }
        return fault;
    }

    c = &t->ctx[ctx_id];
    vnpu_mmu_lock(mmu);
    e = &c->e[vpn % VNPU_TLB_ENTRIES];
    if (e->perms && e->vpn == vpn) {
        uint64_t perms = e->perms, page = e->pa;

        t->hits++;
        vnpu_mmu_unlock(mmu);
        if (!(perms & need)) {
            return vnpu_fault_flags(VNPU_FAULT_REASON_PERMISSION, is_write);
        }
        *pa = page;
        return 0;
    }
    t->misses++;
    gen = c->gen;
    gen_all = t->gen_all;
    root_cached = c->root_valid;
    root = c->pt_root;
    vnpu_mmu_unlock(mmu);

    fault = vnpu_mmu_walk(mmu->read, mmu->bus, cfg, ctx_id, va, is_write,
                          root_cached ? &root : NULL, &w);
    if (w.level == VNPU_PT_LEVELS - 1 &&
        vnpu_fault_reason(fault) != VNPU_FAULT_REASON_BUS &&
        vnpu_fault_reason(fault) != VNPU_FAULT_REASON_TRANSLATION) {
        vnpu_mmu_lock(mmu);
        /* Insert only if no invalidation ran while we walked. */
        if (c->gen == gen && t->gen_all == gen_all &&
            (!mmu->may_cache || mmu->may_cache(mmu->cache_opaque))) {
            c->root_valid = true;
            c->pt_root = w.root;
            if (w.perms) {
                e->vpn = vpn;
                e->pa = w.pa;
                e->perms = w.perms;
            }
        }
        vnpu_mmu_unlock(mmu);
    }
    if (!fault) {
        *pa = w.pa;
    }
    return fault;
}

/*
 * The leaf table translating @va, from the walk cache or by a walk of
 * @va's page (whose own outcome does not matter here: only the table
 * does).  False when no walk reaches a leaf table.
 */
static bool vnpu_leaf_table(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                            uint32_t ctx_id, uint64_t va, bool is_write,
                            uint64_t *table)
{
    VnpuCtxCache *c = &mmu->tlb->ctx[ctx_id];
    uint64_t tag = va >> VNPU_LEAF_SHIFT, gen, gen_all, root;
    VnpuLeafEntry *le = &c->leaf[tag % VNPU_LEAF_CACHE_ENTRIES];
    bool root_cached;
    VnpuWalk w;

    vnpu_mmu_lock(mmu);
    if (le->valid && le->tag == tag) {
        *table = le->table;
        vnpu_mmu_unlock(mmu);
        return true;
    }
    gen = c->gen;
    gen_all = mmu->tlb->gen_all;
    root_cached = c->root_valid;
    root = c->pt_root;
    vnpu_mmu_unlock(mmu);

    vnpu_mmu_walk(mmu->read, mmu->bus, cfg, ctx_id, va, is_write,
                  root_cached ? &root : NULL, &w);
    if (w.level != VNPU_PT_LEVELS - 1) {
        return false;
    }
    *table = w.leaf;
    vnpu_mmu_lock(mmu);
    /* As for the TLB: only if no invalidation ran while we walked. */
    if (c->gen == gen && mmu->tlb->gen_all == gen_all &&
        (!mmu->may_cache || mmu->may_cache(mmu->cache_opaque))) {
        le->valid = true;
        le->tag = tag;
        le->table = w.leaf;
    }
    vnpu_mmu_unlock(mmu);
    return true;
}

uint32_t vnpu_mmu_translate_runs(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                                 uint32_t ctx_id, uint64_t va, uint64_t len,
                                 bool is_write, VnpuRun *runs, unsigned max,
                                 unsigned *n)
{
    uint64_t need = is_write ? VNPU_PTE_WRITE : VNPU_PTE_READ;
    uint64_t page, next, done;
    uint8_t raw[VNPU_PT_ENTRIES * 8];
    VnpuRun *r = runs;
    uint32_t fault;

    fault = vnpu_mmu_translate(mmu, cfg, ctx_id, va, is_write, &page);
    if (fault) {
        return fault;
    }
    *n = 1;
    r->pa = page + (va & VNPU_PAGE_OFFSET_MASK);
    done = vnpu_min_u64(len, VNPU_PAGE_SIZE - (va & VNPU_PAGE_OFFSET_MASK));
    r->len = done;
    if (!cfg->enabled) {
        /* Bypass: the VA is the DMA address, all of it. */
        r->len = len;
        return 0;
    }
    while (done < len) {
        unsigned first, cnt, i;
        uint64_t table;

        next = va + done;
        /* Not past the VA limit: a later call reports ADDRESS there. */
        if (next >= VNPU_VA_LIMIT ||
            !vnpu_leaf_table(mmu, cfg, ctx_id, next, is_write, &table)) {
            break;
        }
        first = VNPU_PT_INDEX(next, VNPU_PT_LEVELS - 1);
        cnt = (unsigned)vnpu_min_u64(VNPU_PT_ENTRIES - first,
                                     (len - done + VNPU_PAGE_SIZE - 1) >>
                                     VNPU_PAGE_SHIFT);
        if (!mmu->read(mmu->bus, table + first * 8ull, raw, cnt * 8ull)) {
            break;
        }
        for (i = 0; i < cnt; i++) {
            uint64_t pte = vnpu_ld64_le(raw + i * 8);
            uint64_t pa = pte & VNPU_PTE_ADDR_MASK;
            uint64_t step = vnpu_min_u64(len - done, VNPU_PAGE_SIZE);

            if (!(pte & VNPU_PTE_VALID) || !(pte & need)) {
                break;
            }
            if (pa != r->pa + r->len) {
                if (*n == max) {
                    break;
                }
                r++;
                (*n)++;
                r->pa = pa;
                r->len = 0;
            }
            r->len += step;
            done += step;
        }
        if (i < cnt) {
            break;
        }
    }
    return 0;
}

uint32_t vnpu_mmu_translate_run(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                                uint32_t ctx_id, uint64_t va, uint64_t len,
                                bool is_write, uint64_t *pa, uint64_t *run)
{
    VnpuRun r;
    unsigned n;
    uint32_t fault = vnpu_mmu_translate_runs(mmu, cfg, ctx_id, va, len,
                                             is_write, &r, 1, &n);

    if (!fault) {
        *pa = r.pa;
        *run = r.len;
    }
    return fault;
}
