/*
 * Device MMU: context lookup, 4-level walk, fault classification and the
 * software TLB, over a fake physical memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "device-test.h"

#define MEM_BASE    0x100000ull
#define MEM_SIZE    (2ull << 20)

typedef struct Fix {
    FakeMem m;
    uint64_t ctx_table;
    uint64_t root;              /* context 0 */
    VnpuMmuConfig cfg;
    VnpuTlb *tlb;
    VnpuMmu mmu;
    unsigned locks, unlocks;
    bool race_all;              /* test_tlb_invalidate_races_walk */
} Fix;

static void fix_lock(void *opaque)
{
    Fix *f = opaque;

    assert_int_equal(f->locks, f->unlocks);     /* never nested */
    f->locks++;
}

static void fix_unlock(void *opaque)
{
    Fix *f = opaque;

    f->unlocks++;
    assert_int_equal(f->locks, f->unlocks);
}

static int fix_setup(void **state)
{
    Fix *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    fm_init(&f->m, MEM_BASE, MEM_SIZE);
    f->ctx_table = fm_alloc_page(&f->m);
    f->root = fm_alloc_page(&f->m);
    ctx_set(&f->m, f->ctx_table, 0, f->root | VNPU_CTX_VALID, 0);
    f->cfg = (VnpuMmuConfig){ .enabled = true, .ctx_table = f->ctx_table,
                              .ctx_count = 4 };
    f->tlb = calloc(1, sizeof(*f->tlb));
    assert_non_null(f->tlb);
    f->mmu = (VnpuMmu){ .tlb = f->tlb, .read = fm_read, .bus = &f->m,
                        .lock = fix_lock, .unlock = fix_unlock,
                        .lock_opaque = f };
    *state = f;
    return 0;
}

static int fix_teardown(void **state)
{
    Fix *f = *state;

    assert_int_equal(f->locks, f->unlocks);
    fm_free(&f->m);
    free(f->tlb);
    free(f);
    return 0;
}

static uint32_t walk(Fix *f, uint32_t ctx, uint64_t va, bool w, VnpuWalk *out)
{
    return vnpu_mmu_walk(fm_read, &f->m, &f->cfg, ctx, va, w, NULL, out);
}

static uint32_t xlate(Fix *f, uint32_t ctx, uint64_t va, bool w, uint64_t *pa)
{
    return vnpu_mmu_translate(&f->mmu, &f->cfg, ctx, va, w, pa);
}

/* ---- walks ------------------------------------------------------------- */

static void test_walk_four_levels(void **state)
{
    Fix *f = *state;
    /* VAs that differ first at level 0, 1, 2 and 3, plus the extremes. */
    static const uint64_t vas[] = {
        0x0000000000000000ull, 0x0000008000000000ull, 0x0000000040000000ull,
        0x0000000000200000ull, 0x0000000000001000ull, 0x00007fffffffe000ull,
        0x0000ffffffffffffull,
        0x0000123456789000ull,
    };
    uint64_t pa[sizeof(vas) / sizeof(vas[0])];
    unsigned i, reads;
    VnpuWalk w;

    for (i = 0; i < sizeof(vas) / sizeof(vas[0]); i++) {
        pa[i] = fm_alloc_page(&f->m);
        pt_map(&f->m, f->root, vas[i], pa[i], RW);
    }
    for (i = 0; i < sizeof(vas) / sizeof(vas[0]); i++) {
        f->m.reads = 0;
        assert_int_equal(walk(f, 0, vas[i], false, &w), 0);
        assert_int_equal(w.pa, pa[i]);
        assert_int_equal(w.level, 3);
        assert_int_equal(w.root, f->root);
        assert_int_equal(w.perms, RW);
        assert_int_equal(w.pte, pa[i] | VNPU_PTE_VALID | RW);
        /* one context entry and one entry per level */
        assert_int_equal(f->m.reads, 5);
        assert_int_equal(walk(f, 0, vas[i] | 0xfff, true, &w), 0);
        assert_int_equal(w.pa, pa[i]);
    }
    /* With the root supplied, the context entry is not read. */
    reads = f->m.reads;
    assert_int_equal(vnpu_mmu_walk(fm_read, &f->m, &f->cfg, 0, vas[1], false,
                                   &f->root, &w), 0);
    assert_int_equal(w.pa, pa[1]);
    assert_int_equal(f->m.reads - reads, 4);
}

/* An invalid entry at each level: TRANSLATION, decided at that level. */
static void test_walk_translation_fault_each_level(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x00004a5b6c7d8000ull, page = fm_alloc_page(&f->m);
    int level;
    VnpuWalk w;

    for (level = 0; level < VNPU_PT_LEVELS; level++) {
        uint64_t addr, saved;

        pt_map(&f->m, f->root, va, page, RW);
        addr = pt_entry_addr(&f->m, f->root, va, level);
        saved = fm_ld64(&f->m, addr);
        /* Everything but VALID stays: the address alone means nothing. */
        fm_st64(&f->m, addr, saved & ~VNPU_PTE_VALID);
        assert_int_equal(walk(f, 0, va, false, &w),
                         fault_of(VNPU_FAULT_REASON_TRANSLATION, false));
        assert_int_equal(w.level, level);
        assert_int_equal(walk(f, 0, va + 8, true, &w),
                         fault_of(VNPU_FAULT_REASON_TRANSLATION, true));
        assert_int_equal(w.level, level);
        fm_st64(&f->m, addr, saved);
        assert_int_equal(walk(f, 0, va, false, &w), 0);
    }
    /* A neighbour page never mapped faults at the leaf. */
    assert_int_equal(walk(f, 0, va + VNPU_PAGE_SIZE, false, &w),
                     fault_of(VNPU_FAULT_REASON_TRANSLATION, false));
    assert_int_equal(w.level, 3);
    /* An empty root faults at level 0. */
    assert_int_equal(walk(f, 0, 0x0000700000000000ull, false, &w),
                     fault_of(VNPU_FAULT_REASON_TRANSLATION, false));
    assert_int_equal(w.level, 0);
}

static void test_walk_permissions(void **state)
{
    Fix *f = *state;
    static const struct {
        uint64_t perms;
        bool read_ok, write_ok;
    } cases[] = {
        { 0, false, false },
        { VNPU_PTE_READ, true, false },
        { VNPU_PTE_WRITE, false, true },
        { RW, true, true },
    };
    uint64_t page = fm_alloc_page(&f->m);
    unsigned i;
    VnpuWalk w;

    for (i = 0; i < 4; i++) {
        uint64_t va = 0x10000000ull + i * VNPU_PAGE_SIZE;

        pt_map(&f->m, f->root, va, page, cases[i].perms);
        assert_int_equal(walk(f, 0, va, false, &w),
                         cases[i].read_ok ? 0 :
                         fault_of(VNPU_FAULT_REASON_PERMISSION, false));
        assert_int_equal(w.level, 3);
        assert_int_equal(w.perms, cases[i].perms);
        /* PERMISSION still reports the page the leaf names */
        assert_int_equal(w.pa, page);
        assert_int_equal(walk(f, 0, va, true, &w),
                         cases[i].write_ok ? 0 :
                         fault_of(VNPU_FAULT_REASON_PERMISSION, true));
    }
}

/* R/W in upper levels and reserved bits anywhere are ignored by v1. */
static void test_walk_ignored_bits(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x0000000180403000ull, page = fm_alloc_page(&f->m);
    uint64_t junk = 0xfff0000000000ff8ull;      /* bits 63:52 and 11:3 */
    int l;
    VnpuWalk w;

    pt_map(&f->m, f->root, va, page, VNPU_PTE_READ);
    for (l = 0; l < VNPU_PT_LEVELS - 1; l++) {
        uint64_t addr = pt_entry_addr(&f->m, f->root, va, l);

        /* no R/W in an upper level does not restrict the leaf */
        fm_st64(&f->m, addr, (fm_ld64(&f->m, addr) & ~RW) | junk);
    }
    assert_int_equal(walk(f, 0, va, false, &w), 0);
    assert_int_equal(w.pa, page);
    /* and R|W in upper levels does not widen it */
    for (l = 0; l < VNPU_PT_LEVELS - 1; l++) {
        uint64_t addr = pt_entry_addr(&f->m, f->root, va, l);

        fm_st64(&f->m, addr, fm_ld64(&f->m, addr) | RW);
    }
    assert_int_equal(walk(f, 0, va, true, &w),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, true));
    /* junk in the leaf: the address is still bits 51:12 */
    fm_st64(&f->m, pt_entry_addr(&f->m, f->root, va, 3),
            page | junk | VNPU_PTE_VALID | VNPU_PTE_WRITE);
    assert_int_equal(walk(f, 0, va, true, &w), 0);
    assert_int_equal(w.pa, page);
    /* junk in the context entry's pt_root is masked off too */
    ctx_set(&f->m, f->ctx_table, 0, f->root | junk | VNPU_CTX_VALID, 0);
    assert_int_equal(walk(f, 0, va, true, &w), 0);
    assert_int_equal(w.root, f->root);
}

static void test_walk_address_fault(void **state)
{
    Fix *f = *state;
    static const uint64_t bad[] = {
        1ull << 48, (1ull << 48) | 0x1000, 1ull << 63, UINT64_MAX,
        0xffff800000000000ull,  /* canonical upper half: not a v1 VA */
    };
    uint64_t top = (1ull << 48) - VNPU_PAGE_SIZE, page = fm_alloc_page(&f->m);
    unsigned i;
    VnpuWalk w;
    uint64_t pa;

    pt_map(&f->m, f->root, top, page, RW);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f->m.reads = 0;
        assert_int_equal(walk(f, 0, bad[i], false, &w),
                         fault_of(VNPU_FAULT_REASON_ADDRESS, false));
        assert_int_equal(w.level, -1);
        assert_int_equal(xlate(f, 0, bad[i], true, &pa),
                         fault_of(VNPU_FAULT_REASON_ADDRESS, true));
        /* refused before any memory is touched, even for a bad context */
        assert_int_equal(walk(f, 999, bad[i], false, &w),
                         fault_of(VNPU_FAULT_REASON_ADDRESS, false));
        assert_int_equal(f->m.reads, 0);
    }
    /* the last byte below 2^48 translates */
    assert_int_equal(xlate(f, 0, (1ull << 48) - 1, false, &pa), 0);
    assert_int_equal(pa, page);
}

static void test_walk_context_faults(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x5000, page = fm_alloc_page(&f->m);
    uint64_t root1 = fm_alloc_page(&f->m);
    VnpuWalk w;

    pt_map(&f->m, f->root, va, page, RW);
    pt_map(&f->m, root1, va, page, RW);

    /* id not below MMU_CTX_COUNT: no memory read */
    f->m.reads = 0;
    assert_int_equal(walk(f, 4, va, false, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, false));
    assert_int_equal(walk(f, VNPU_MAX_CONTEXTS, va, true, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, true));
    assert_int_equal(walk(f, UINT32_MAX, va, true, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, true));
    assert_int_equal(f->m.reads, 0);
    assert_int_equal(w.level, -1);

    /* entry 1: zero (disabled), then VALID, then reserved word set */
    assert_int_equal(walk(f, 1, va, false, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, false));
    assert_int_equal(w.level, -1);
    ctx_set(&f->m, f->ctx_table, 1, root1 | VNPU_CTX_VALID, 0);
    assert_int_equal(walk(f, 1, va, false, &w), 0);
    assert_int_equal(w.root, root1);
    ctx_set(&f->m, f->ctx_table, 1, root1 | VNPU_CTX_VALID, 1ull << 63);
    assert_int_equal(walk(f, 1, va, false, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, false));
    ctx_set(&f->m, f->ctx_table, 1, root1, 0);  /* address, no VALID */
    assert_int_equal(walk(f, 1, va, true, &w),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, true));
    /* context 0 is unaffected by all of this */
    assert_int_equal(walk(f, 0, va, true, &w), 0);
}

static void test_walk_bus_faults(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x0000000000777000ull, page = fm_alloc_page(&f->m);
    int level;
    VnpuWalk w;

    /* context table outside RAM */
    f->cfg.ctx_table = 0x1000;
    assert_int_equal(walk(f, 0, va, false, &w),
                     fault_of(VNPU_FAULT_REASON_BUS, false));
    assert_int_equal(w.level, -1);
    /* the last entry of a table ending at the end of RAM is readable */
    f->cfg.ctx_table = MEM_BASE + MEM_SIZE - VNPU_CTX_TABLE_ALIGN;
    f->cfg.ctx_count = VNPU_MAX_CONTEXTS;
    ctx_set(&f->m, f->cfg.ctx_table, 255, f->root | VNPU_CTX_VALID, 0);
    pt_map(&f->m, f->root, va, page, RW);
    assert_int_equal(walk(f, 255, va, false, &w), 0);
    f->cfg.ctx_table = f->ctx_table;

    /* each level's next table outside RAM: BUS decided by the next read */
    for (level = 0; level < VNPU_PT_LEVELS - 1; level++) {
        uint64_t addr = pt_entry_addr(&f->m, f->root, va, level);
        uint64_t saved = fm_ld64(&f->m, addr);

        fm_st64(&f->m, addr, (MEM_BASE + MEM_SIZE) | VNPU_PTE_VALID);
        assert_int_equal(walk(f, 0, va, true, &w),
                         fault_of(VNPU_FAULT_REASON_BUS, true));
        assert_int_equal(w.level, level + 1);
        fm_st64(&f->m, addr, saved);
    }
    /* root outside RAM */
    ctx_set(&f->m, f->ctx_table, 0, 0x7000 | VNPU_CTX_VALID, 0);
    assert_int_equal(walk(f, 0, va, false, &w),
                     fault_of(VNPU_FAULT_REASON_BUS, false));
    assert_int_equal(w.level, 0);
    /* a leaf naming a page outside RAM is not the MMU's business */
    ctx_set(&f->m, f->ctx_table, 0, f->root | VNPU_CTX_VALID, 0);
    fm_st64(&f->m, pt_entry_addr(&f->m, f->root, va, 3),
            0xfff0000000ull | VNPU_PTE_VALID | RW);
    assert_int_equal(walk(f, 0, va, false, &w), 0);
    assert_int_equal(w.pa, 0xfff0000000ull);
}

static void test_bypass(void **state)
{
    Fix *f = *state;
    uint64_t pa = 0;
    VnpuWalk w;

    f->cfg.enabled = false;
    f->cfg.ctx_count = 0;
    f->m.reads = 0;
    assert_int_equal(xlate(f, 77, 0x123456789abcull, true, &pa), 0);
    assert_int_equal(pa, 0x123456789000ull);
    assert_int_equal(walk(f, 0, UINT64_MAX, false, &w), 0);
    assert_int_equal(w.pa, UINT64_MAX & ~0xfffull);
    assert_int_equal(f->m.reads, 0);
    assert_int_equal(f->tlb->hits + f->tlb->misses, 0);
}

static void test_ctx_table_valid(void **state)
{
    (void)state;
    assert_true(vnpu_ctx_table_valid(0, 1));
    assert_true(vnpu_ctx_table_valid(0xfffffffffffff000ull, 256));
    assert_false(vnpu_ctx_table_valid(0x1000, 0));
    assert_false(vnpu_ctx_table_valid(0x1000, 257));
    assert_false(vnpu_ctx_table_valid(0x1800, 1));
    assert_false(vnpu_ctx_table_valid(0x1010, 16));
}

static void test_fault_flags(void **state)
{
    unsigned r;

    (void)state;
    for (r = VNPU_FAULT_REASON_TRANSLATION; r <= VNPU_FAULT_REASON_BUS; r++) {
        assert_int_equal(vnpu_fault_flags(r, false), 1u | r << 4);
        assert_int_equal(vnpu_fault_flags(r, true), 3u | r << 4);
        assert_int_equal(vnpu_fault_reason(vnpu_fault_flags(r, true)), r);
    }
}

/* ---- TLB --------------------------------------------------------------- */

static void test_tlb_hit_miss(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x0000000012345000ull, page = fm_alloc_page(&f->m);
    uint64_t pa = 0;

    pt_map(&f->m, f->root, va, page, RW);
    f->m.reads = 0;
    assert_int_equal(xlate(f, 0, va + 0x10, false, &pa), 0);
    assert_int_equal(pa, page);
    assert_int_equal(f->tlb->misses, 1);
    assert_int_equal(f->m.reads, 5);
    /* same page, either access: a hit with no memory traffic */
    assert_int_equal(xlate(f, 0, va + 0xff8, true, &pa), 0);
    assert_int_equal(pa, page);
    assert_int_equal(f->tlb->hits, 1);
    assert_int_equal(f->m.reads, 5);
    /* next page misses, but the context entry is cached: 4 reads */
    pt_map(&f->m, f->root, va + VNPU_PAGE_SIZE, page, RW);
    f->m.reads = 0;
    assert_int_equal(xlate(f, 0, va + VNPU_PAGE_SIZE, false, &pa), 0);
    assert_int_equal(f->tlb->misses, 2);
    assert_int_equal(f->m.reads, 4);
    /* VAs VNPU_TLB_ENTRIES pages apart share a slot and evict each other */
    pt_map(&f->m, f->root, va + VNPU_TLB_ENTRIES * VNPU_PAGE_SIZE, page, RW);
    assert_int_equal(xlate(f, 0, va + VNPU_TLB_ENTRIES * VNPU_PAGE_SIZE,
                           false, &pa), 0);
    assert_int_equal(f->tlb->misses, 3);
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(f->tlb->misses, 4);
    assert_true(f->locks > 0);
}

static void test_tlb_caches_permissions(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x40000, page = fm_alloc_page(&f->m);
    uint64_t pa = 0;

    pt_map(&f->m, f->root, va, page, VNPU_PTE_READ);
    /* a write walks, faults PERMISSION, and caches the read-only leaf */
    assert_int_equal(xlate(f, 0, va, true, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, true));
    f->m.reads = 0;
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(pa, page);
    assert_int_equal(xlate(f, 0, va, true, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, true));
    assert_int_equal(f->m.reads, 0);
    assert_int_equal(f->tlb->hits, 2);

    /* a leaf granting nothing is never cached: every access walks */
    pt_map(&f->m, f->root, va + VNPU_PAGE_SIZE, page, 0);
    assert_int_equal(xlate(f, 0, va + VNPU_PAGE_SIZE, false, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, false));
    f->m.reads = 0;
    assert_int_equal(xlate(f, 0, va + VNPU_PAGE_SIZE, false, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, false));
    assert_int_equal(f->m.reads, 4);
}

/* Translation faults are not cached: a later mapping is seen at once. */
static void test_tlb_no_negative_caching(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x0000001000000000ull, page = fm_alloc_page(&f->m);
    uint64_t pa = 0;

    assert_int_equal(xlate(f, 0, va, false, &pa),
                     fault_of(VNPU_FAULT_REASON_TRANSLATION, false));
    pt_map(&f->m, f->root, va, page, RW);
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(pa, page);
    /* nor are context faults */
    assert_int_equal(xlate(f, 2, va, false, &pa),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, false));
    ctx_set(&f->m, f->ctx_table, 2, f->root | VNPU_CTX_VALID, 0);
    assert_int_equal(xlate(f, 2, va, false, &pa), 0);
}

static void test_tlb_invalidate_ctx_and_all(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x7000, old = fm_alloc_page(&f->m), new = fm_alloc_page(&f->m);
    uint64_t root1 = fm_alloc_page(&f->m), pa = 0, leaf0, leaf1;

    ctx_set(&f->m, f->ctx_table, 1, root1 | VNPU_CTX_VALID, 0);
    pt_map(&f->m, f->root, va, old, RW);
    pt_map(&f->m, root1, va, old, RW);
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(xlate(f, 1, va, false, &pa), 0);

    /* remap both contexts in memory; the TLB still serves the old page */
    leaf0 = pt_entry_addr(&f->m, f->root, va, 3);
    leaf1 = pt_entry_addr(&f->m, root1, va, 3);
    fm_st64(&f->m, leaf0, new | VNPU_PTE_VALID | RW);
    fm_st64(&f->m, leaf1, new | VNPU_PTE_VALID | RW);
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(pa, old);

    /* per-context: only that context sees the change */
    vnpu_tlb_invalidate_locked(f->tlb, false, 0);
    assert_int_equal(xlate(f, 0, va, false, &pa), 0);
    assert_int_equal(pa, new);
    assert_int_equal(xlate(f, 1, va, false, &pa), 0);
    assert_int_equal(pa, old);
    /* an out-of-range context id invalidates nothing */
    vnpu_tlb_invalidate_locked(f->tlb, false, VNPU_MAX_CONTEXTS);
    assert_int_equal(xlate(f, 1, va, false, &pa), 0);
    assert_int_equal(pa, old);

    /* the cached context entry goes too: a new root is used after inval */
    pt_map(&f->m, root1, va + VNPU_PAGE_SIZE, new, RW);
    ctx_set(&f->m, f->ctx_table, 0, root1 | VNPU_CTX_VALID, 0);
    assert_int_equal(xlate(f, 0, va + VNPU_PAGE_SIZE, false, &pa),
                     fault_of(VNPU_FAULT_REASON_TRANSLATION, false));
    vnpu_tlb_invalidate_locked(f->tlb, false, 0);
    assert_int_equal(xlate(f, 0, va + VNPU_PAGE_SIZE, false, &pa), 0);
    assert_int_equal(pa, new);

    /* all: every context walks again */
    fm_st64(&f->m, leaf1, old | VNPU_PTE_VALID | VNPU_PTE_READ);
    vnpu_tlb_invalidate_locked(f->tlb, true, 0);
    assert_int_equal(xlate(f, 1, va, false, &pa), 0);
    assert_int_equal(pa, old);
    assert_int_equal(xlate(f, 0, va, true, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, true));
}

/*
 * An invalidation that runs while a walk is in flight must keep the walk's
 * result out of the cache (it may be stale); the access itself still uses
 * it, as the spec allows for accesses already in progress.
 */
static void inval_during_walk(FakeMem *m, uint64_t addr)
{
    Fix *f = m->priv;

    (void)addr;
    if (f->m.reads == 3) {
        vnpu_tlb_invalidate_locked(f->tlb, f->race_all, 0);
    }
}

static void test_tlb_invalidate_races_walk(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x9000, page = fm_alloc_page(&f->m), pa = 0;
    int round;

    pt_map(&f->m, f->root, va, page, RW);
    for (round = 0; round < 2; round++) {
        /* round 0 races a global invalidation, round 1 a per-context one */
        f->race_all = round == 0;
        vnpu_tlb_invalidate_locked(f->tlb, true, 0);
        f->m.priv = f;
        f->m.on_read = inval_during_walk;
        f->m.reads = 0;
        assert_int_equal(xlate(f, 0, va, false, &pa), 0);
        assert_int_equal(pa, page);
        f->m.on_read = NULL;
        f->m.reads = 0;
        assert_int_equal(xlate(f, 0, va, false, &pa), 0);
        assert_int_equal(f->m.reads, 5);        /* nothing was cached */
        f->m.reads = 0;
        assert_int_equal(xlate(f, 0, va, false, &pa), 0);
        assert_int_equal(f->m.reads, 0);        /* now it is */
    }
}

/* Contexts have separate caches: same VA, different pages. */
static void test_tlb_isolation(void **state)
{
    Fix *f = *state;
    uint64_t va = 0x3000, p0 = fm_alloc_page(&f->m), p1 = fm_alloc_page(&f->m);
    uint64_t root1 = fm_alloc_page(&f->m), pa = 0;

    ctx_set(&f->m, f->ctx_table, 1, root1 | VNPU_CTX_VALID, 0);
    pt_map(&f->m, f->root, va, p0, RW);
    pt_map(&f->m, root1, va, p1, VNPU_PTE_READ);
    assert_int_equal(xlate(f, 0, va, true, &pa), 0);
    assert_int_equal(pa, p0);
    assert_int_equal(xlate(f, 1, va, false, &pa), 0);
    assert_int_equal(pa, p1);
    assert_int_equal(xlate(f, 1, va, true, &pa),
                     fault_of(VNPU_FAULT_REASON_PERMISSION, true));
    assert_int_equal(xlate(f, 0, va, true, &pa), 0);
    assert_int_equal(pa, p0);
    /* an id beyond the count is refused even though context 0 is cached */
    assert_int_equal(xlate(f, 4, va, false, &pa),
                     fault_of(VNPU_FAULT_REASON_CONTEXT, false));
}

/* ---- runs ------------------------------------------------------------- */

#define RUNS_PAGES  600

/*
 * vnpu_mmu_translate_runs() against vnpu_mmu_translate() page by page:
 * 600 pages across a leaf-table boundary, in contiguous groups of 1 to 7
 * pages (some groups backwards), one read-only page and one unmapped.
 * For every start, length and run limit: the runs cover the range from
 * the start without a gap, each byte where the page translation puts
 * it; two runs in a row are never contiguous (else they would be one);
 * and the runs stop short only at a page that faults for the access or
 * when the limit is reached.
 */
static void test_translate_runs(void **state)
{
    static const unsigned maxes[] = { 1, 2, 5, 65 };
    const uint64_t va0 = 0x40000000ull - 9 * VNPU_PAGE_SIZE;
    const uint64_t ro = 300, hole = 420;
    uint64_t pa_of[RUNS_PAGES], next = 0x200000000ull;
    unsigned seed = 3, i = 0, mi, w;
    Fix *f = *state;

    while (i < RUNS_PAGES) {
        unsigned g, len, back;

        seed = seed * 1103515245u + 12345u;
        len = 1 + (seed >> 8) % 7;
        back = (seed >> 16) & 1;
        for (g = 0; g < len && i < RUNS_PAGES; g++, i++) {
            pa_of[i] = next + (back ? len - 1 - g : g) * VNPU_PAGE_SIZE;
        }
        next += (len + 1) * VNPU_PAGE_SIZE;
    }
    for (i = 0; i < RUNS_PAGES; i++) {
        if (i != hole) {
            pt_map(&f->m, f->root, va0 + i * VNPU_PAGE_SIZE, pa_of[i],
                   i == ro ? VNPU_PTE_READ : RW);
        }
    }
    for (w = 0; w < 2; w++) {
        for (mi = 0; mi < sizeof(maxes) / sizeof(maxes[0]); mi++) {
            for (i = 0; i < 200; i++) {
                VnpuRun runs[65];
                uint64_t va, len, done = 0, pa;
                unsigned n = 0, r;
                uint32_t fault, want;

                seed = seed * 1103515245u + 12345u;
                va = va0 + (seed >> 4) % ((RUNS_PAGES - 1) * VNPU_PAGE_SIZE);
                seed = seed * 1103515245u + 12345u;
                len = 1 + (seed >> 4) % (64 * VNPU_PAGE_SIZE);
                if (va + len > va0 + RUNS_PAGES * VNPU_PAGE_SIZE) {
                    len = va0 + RUNS_PAGES * VNPU_PAGE_SIZE - va;
                }
                fault = vnpu_mmu_translate_runs(&f->mmu, &f->cfg, 0, va, len,
                                                w, runs, maxes[mi], &n);
                want = xlate(f, 0, va, w, &pa);
                assert_int_equal(fault, want);
                if (fault) {
                    continue;
                }
                assert_true(n >= 1 && n <= maxes[mi]);
                for (r = 0; r < n; r++) {
                    uint64_t b;

                    assert_true(runs[r].len > 0);
                    if (r) {
                        assert_true(runs[r].pa !=
                                    runs[r - 1].pa + runs[r - 1].len);
                    }
                    for (b = 0; b < runs[r].len; b += VNPU_PAGE_SIZE) {
                        uint64_t at = va + done + b, p;

                        assert_int_equal(xlate(f, 0, at, w, &p), 0);
                        assert_int_equal(p + (at & VNPU_PAGE_OFFSET_MASK),
                                         runs[r].pa + b);
                    }
                    done += runs[r].len;
                }
                assert_true(done <= len);
                if (done < len && n < maxes[mi]) {
                    assert_int_not_equal(xlate(f, 0, va + done, w, &pa), 0);
                }
            }
        }
    }
    assert_int_equal(f->locks, f->unlocks);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fix_setup, fix_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_walk_four_levels),
        T(test_walk_translation_fault_each_level),
        T(test_walk_permissions),
        T(test_walk_ignored_bits),
        T(test_walk_address_fault),
        T(test_walk_context_faults),
        T(test_walk_bus_faults),
        T(test_bypass),
        cmocka_unit_test(test_ctx_table_valid),
        cmocka_unit_test(test_fault_flags),
        T(test_tlb_hit_miss),
        T(test_tlb_caches_permissions),
        T(test_tlb_no_negative_caching),
        T(test_tlb_invalidate_ctx_and_all),
        T(test_tlb_invalidate_races_walk),
        T(test_tlb_isolation),
        T(test_translate_runs),
    };

    return cmocka_run_group_tests_name("device-mmu", tests, NULL, NULL);
}
