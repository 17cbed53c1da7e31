/*
 * Randomized property test of the device MMU: random context tables and
 * page tables (sparse, aliasing, with junk bits and entries pointing out
 * of RAM) in a fake physical memory, random VAs, and the result of
 * vnpu_mmu_walk() and vnpu_mmu_translate() compared with an independent
 * model.  The model never walks a VA: it enumerates every path from each
 * root forward, depth first, and answers a query by searching the
 * enumerated mappings.
 *
 * VNPU_TEST_SEED=<n> replays one seed; the seed is printed as a TAP
 * comment.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include "device-test.h"

#define MEM_BASE    0x200000ull
#define MEM_PAGES   96
#define MAX_CTX     8
#define ROUNDS      64
#define QUERIES     400
#define MAX_MAPS    8192
#define MAX_BUS     2048

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

/* ---- the model ----------------------------------------------------------- */

typedef struct Leaf {
    uint64_t vpn;               /* VA >> 12 */
    uint64_t pa;
    uint64_t perms;
} Leaf;

typedef struct BusPrefix {
    int level;                  /* the table at this level is not in RAM */
    uint64_t prefix;            /* VA bits above that level's index */
} BusPrefix;

typedef struct Model {
    const FakeMem *m;
    enum { CTX_OK, CTX_BAD, CTX_BUS } state;
    uint64_t root;
    Leaf leaves[MAX_MAPS];
    unsigned nleaves;
    BusPrefix bus[MAX_BUS];
    unsigned nbus;
    /* non-zero entries lacking VALID: only to aim queries at them */
    BusPrefix holes[MAX_BUS];
    unsigned nholes;
} Model;

static bool model_in_ram(const FakeMem *m, uint64_t addr, uint64_t len)
{
    return addr >= m->base && addr + len <= m->base + m->size;
}

/* Little-endian u64 straight from the array, without the device helpers. */
static uint64_t model_ld(const FakeMem *m, uint64_t addr)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = v << 8 | m->bytes[addr - m->base + i];
    }
    return v;
}

/*
 * Enumerate table @table at @level reached through the VA page-number bits
 * @vpn_hi (indices of the levels above, already in position).
 */
static void model_dfs(Model *mo, uint64_t table, int level, uint64_t vpn_hi)
{
    unsigned shift = 9 * (3 - level);     /* of this level's index in a VPN */
    unsigned i;

    if (!model_in_ram(mo->m, table, 4096)) {
        assert_true(mo->nbus < MAX_BUS);
        mo->bus[mo->nbus++] = (BusPrefix){ level, vpn_hi };
        return;
    }
    for (i = 0; i < 512; i++) {
        uint64_t e = model_ld(mo->m, table + 8 * i);
        uint64_t vpn = vpn_hi | (uint64_t)i << shift;
        uint64_t next = e & 0x000ffffffffff000ull;

        if (!(e & 1)) {
            if (e && mo->nholes < MAX_BUS) {
                mo->holes[mo->nholes++] = (BusPrefix){ level + 1, vpn };
            }
            continue;
        }
        if (level == 3) {
            assert_true(mo->nleaves < MAX_MAPS);
            mo->leaves[mo->nleaves++] = (Leaf){ vpn, next, e & 6 };
        } else {
            model_dfs(mo, next, level + 1, vpn);
        }
    }
}

static void model_build(Model *mo, const FakeMem *m, uint64_t ctx_table,
                        uint32_t ctx)
{
    uint64_t addr = ctx_table + 16ull * ctx;
    uint64_t root;

    memset(mo, 0, sizeof(*mo));
    mo->m = m;
    if (!model_in_ram(m, addr, 16)) {
        mo->state = CTX_BUS;
        return;
    }
    root = model_ld(m, addr);
    if (!(root & 1) || model_ld(m, addr + 8)) {
        mo->state = CTX_BAD;
        return;
    }
    mo->state = CTX_OK;
    mo->root = root & 0x000ffffffffff000ull;
    model_dfs(mo, mo->root, 0, 0);
}

/* The expected fault word (0 = success, with *pa). */
static uint32_t model_query(const Model *mo, uint32_t ctx, uint32_t count,
                            uint64_t va, bool is_write, uint64_t *pa)
{
    uint64_t vpn = va >> 12;
    unsigned i;

    if (va >> 48) {
        return fault_of(VNPU_FAULT_REASON_ADDRESS, is_write);
    }
    if (ctx >= count || mo->state == CTX_BAD) {
        return fault_of(VNPU_FAULT_REASON_CONTEXT, is_write);
    }
    if (mo->state == CTX_BUS) {
        return fault_of(VNPU_FAULT_REASON_BUS, is_write);
    }
    for (i = 0; i < mo->nleaves; i++) {
        if (mo->leaves[i].vpn == vpn) {
            if (!(mo->leaves[i].perms & (is_write ? 4 : 2))) {
                return fault_of(VNPU_FAULT_REASON_PERMISSION, is_write);
            }
            *pa = mo->leaves[i].pa;
            return 0;
        }
    }
    for (i = 0; i < mo->nbus; i++) {
        unsigned low = 9 * (4 - mo->bus[i].level);   /* bits not yet indexed */

        if ((vpn >> low) == (mo->bus[i].prefix >> low)) {
            return fault_of(VNPU_FAULT_REASON_BUS, is_write);
        }
    }
    return fault_of(VNPU_FAULT_REASON_TRANSLATION, is_write);
}

/* ---- random memory ----------------------------------------------------------- */

static uint64_t random_target(const FakeMem *m)
{
    uint64_t r = rnd_below(100);

    if (r < 6) {
        return m->base + m->size + rnd_below(1024) * 4096;     /* past RAM */
    }
    if (r < 8) {
        return rnd_below(m->base / 4096) * 4096;                /* below RAM */
    }
    return m->base + rnd_below(MEM_PAGES) * 4096;
}

static uint64_t random_junk(void)
{
    /* bits 63:52 and 11:3 are reserved and ignored by v1 */
    return rnd_below(4) ? 0 : rnd() & 0xfff0000000000ff8ull;
}

static void random_memory(FakeMem *m, uint64_t ctx_table, uint32_t nctx)
{
    uint64_t p;
    uint32_t c;

    memset(m->bytes, 0, m->size);
    /* every page but the context table's is a sparse table */
    for (p = m->base; p < m->base + m->size; p += 4096) {
        unsigned k, n = rnd_below(7);

        if (p == ctx_table) {
            continue;
        }
        for (k = 0; k < n; k++) {
            uint64_t e = random_target(m) | random_junk() | (rnd() & 6);

            if (rnd_below(100) < 85) {
                e |= VNPU_PTE_VALID;
            }
            fm_st64(m, p + 8 * rnd_below(512), e);
        }
    }
    for (c = 0; c < nctx; c++) {
        uint64_t root = random_target(m) | random_junk();
        uint64_t reserved = rnd_below(10) == 0 ? rnd() | 1 : 0;

        if (rnd_below(10) < 9) {
            root |= VNPU_CTX_VALID;
        }
        ctx_set(m, ctx_table, c, root, reserved);
    }
}

/* A VA worth asking about: mapped, near a bus prefix, or anywhere. */
static uint64_t random_va(const Model *mo)
{
    uint64_t r = rnd_below(100), off = rnd_below(4096);

    if (r < 50 && mo->nleaves) {
        return mo->leaves[rnd_below(mo->nleaves)].vpn << 12 | off;
    }
    if ((r < 65 && mo->nbus) || (r >= 65 && r < 80 && mo->nholes)) {
        const BusPrefix *b = r < 65 ? &mo->bus[rnd_below(mo->nbus)] :
                             &mo->holes[rnd_below(mo->nholes)];
        unsigned low = 9 * (4 - b->level);

        return ((b->prefix >> low << low) |
                (rnd() & ((1ull << low) - 1))) << 12 | off;
    }
    if (r < 92) {
        return rnd() & ((1ull << 48) - 1);
    }
    return rnd();
}

static void test_random_walks(void **state)
{
    static Model models[MAX_CTX];
    static VnpuTlb tlb;
    uint64_t seed = *(uint64_t *)*state;
    unsigned round, q, checked = 0, by_reason[6] = { 0 };
    FakeMem m;

    fm_init(&m, MEM_BASE, MEM_PAGES * 4096ull);
    rng_state = seed;
    for (round = 0; round < ROUNDS; round++) {
        uint64_t ctx_table = MEM_BASE + rnd_below(MEM_PAGES) * 4096;
        uint32_t nctx = 1 + rnd_below(MAX_CTX), c;
        VnpuMmuConfig cfg = {
            .enabled = true, .ctx_table = ctx_table,
            .ctx_count = rnd_below(4) ? nctx : 1 + rnd_below(nctx),
        };
        VnpuMmu mmu = { .tlb = &tlb, .read = fm_read, .bus = &m };

        random_memory(&m, ctx_table, nctx);
        for (c = 0; c < nctx; c++) {
            model_build(&models[c], &m, ctx_table, c);
        }
        vnpu_tlb_invalidate_locked(&tlb, true, 0);

        for (q = 0; q < QUERIES; q++) {
            uint32_t ctx = rnd_below(8) ? rnd_below(cfg.ctx_count) :
                           rnd_below(nctx + 2);
            /* an id past the table is refused before its entry is used */
            const Model *mo = &models[ctx < nctx ? ctx : 0];
            uint64_t va = random_va(mo);
            bool is_write = rnd() & 1;
            uint64_t want_pa = 0, pa = 0;
            uint32_t want, got;
            VnpuWalk w;
            int pass;

            want = model_query(mo, ctx, cfg.ctx_count, va,
                               is_write, &want_pa);
            got = vnpu_mmu_walk(fm_read, &m, &cfg, ctx, va, is_write, NULL,
                                &w);
            if (got != want || (!want && w.pa != want_pa)) {
                fail_msg("seed %llu round %u: ctx %u va 0x%llx %s: walk "
                         "0x%x pa 0x%llx, model 0x%x pa 0x%llx",
                         (unsigned long long)seed, round, ctx,
                         (unsigned long long)va, is_write ? "write" : "read",
                         got, (unsigned long long)w.pa, want,
                         (unsigned long long)want_pa);
            }
            /* through the TLB: cold or warm, the same answer */
            for (pass = 0; pass < 2; pass++) {
                got = vnpu_mmu_translate(&mmu, &cfg, ctx, va, is_write, &pa);
                assert_int_equal(got, want);
                if (!want) {
                    assert_int_equal(pa, want_pa);
                }
            }
            if (rnd_below(50) == 0) {
                vnpu_tlb_invalidate_locked(&tlb, rnd() & 1, ctx);
            }
            by_reason[vnpu_fault_reason(want)]++;
            checked++;
        }
    }
    fm_free(&m);
    /* the generator must exercise every outcome, or the test proves little */
    for (q = 0; q < 6; q++) {
        if (by_reason[q] == 0) {
            fail_msg("seed %llu: no query with fault reason %u",
                     (unsigned long long)seed, q);
        }
    }
    assert_true(tlb.hits > 0 && tlb.misses > 0);
    printf("# %u queries: ok %u translation %u permission %u context %u "
           "address %u bus %u; tlb hits %llu misses %llu\n", checked,
           by_reason[0], by_reason[1], by_reason[2], by_reason[3],
           by_reason[4], by_reason[5], (unsigned long long)tlb.hits,
           (unsigned long long)tlb.misses);
}

int main(void)
{
    static uint64_t seed = 20261122;
    const char *env = getenv("VNPU_TEST_SEED");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_random_walks, &seed),
    };

    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    }
    if (seed == 0) {
        seed = 1;       /* xorshift needs a non-zero state */
    }
    printf("# seed %llu\n", (unsigned long long)seed);
    return cmocka_run_group_tests_name("device-mmu-random", tests, NULL,
                                       NULL);
}
