/*
 * Shared helpers of the device host tests: a fake physical memory (a real
 * byte array behind the MMU's bus-read callback) and a page-table builder
 * that writes little-endian entries into it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VNPU_DEVICE_TEST_H
#define VNPU_DEVICE_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vnpu-core.h"

/*
 * Physical memory [base, base + size).  Address 0 is deliberately outside
 * it, so a zeroed entry that is mistakenly followed is a bus error.
 */
typedef struct FakeMem {
    uint8_t *bytes;
    uint64_t base;
    uint64_t size;
    uint64_t next;              /* page allocator, bump only */
    unsigned reads;             /* bus reads served or refused */
    /* Called before every read; lets a test race an invalidation. */
    void (*on_read)(struct FakeMem *m, uint64_t addr);
    void *priv;
} FakeMem;

static inline void fm_init(FakeMem *m, uint64_t base, uint64_t size)
{
    memset(m, 0, sizeof(*m));
    m->bytes = calloc(1, size);
    assert_non_null(m->bytes);
    m->base = base;
    m->size = size;
    m->next = base;
}

static inline void fm_free(FakeMem *m)
{
    free(m->bytes);
    m->bytes = NULL;
}

static inline bool fm_read(void *opaque, uint64_t addr, void *buf,
                           uint64_t len)
{
    FakeMem *m = opaque;

    m->reads++;
    if (m->on_read) {
        m->on_read(m, addr);
    }
    if (addr < m->base || addr - m->base > m->size ||
        len > m->size - (addr - m->base)) {
        return false;
    }
    memcpy(buf, m->bytes + (addr - m->base), len);
    return true;
}

static inline uint64_t fm_alloc_page(FakeMem *m)
{
    uint64_t pa = m->next;

    assert_true(pa + VNPU_PAGE_SIZE <= m->base + m->size);
    m->next += VNPU_PAGE_SIZE;
    memset(m->bytes + (pa - m->base), 0, VNPU_PAGE_SIZE);
    return pa;
}

static inline void fm_st64(FakeMem *m, uint64_t addr, uint64_t v)
{
    uint8_t *p;
    int i;

    assert_true(addr >= m->base && addr + 8 <= m->base + m->size);
    p = m->bytes + (addr - m->base);
    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline uint64_t fm_ld64(FakeMem *m, uint64_t addr)
{
    assert_true(addr >= m->base && addr + 8 <= m->base + m->size);
    return vnpu_ld64_le(m->bytes + (addr - m->base));
}

/* Address of the level-@level entry for @va under @root (tables exist). */
static inline uint64_t pt_entry_addr(FakeMem *m, uint64_t root, uint64_t va,
                                     int level)
{
    uint64_t table = root;
    int l;

    for (l = 0; l < level; l++) {
        table = fm_ld64(m, table + VNPU_PT_INDEX(va, l) * 8) &
                VNPU_PTE_ADDR_MASK;
    }
    return table + VNPU_PT_INDEX(va, level) * 8;
}

/* Map the page of @va to @pa with leaf bits @perms, allocating tables. */
static inline void pt_map(FakeMem *m, uint64_t root, uint64_t va, uint64_t pa,
                          uint64_t perms)
{
    uint64_t table = root, ent, addr;
    int l;

    for (l = 0; l < VNPU_PT_LEVELS - 1; l++) {
        addr = table + VNPU_PT_INDEX(va, l) * 8;
        ent = fm_ld64(m, addr);
        if (!(ent & VNPU_PTE_VALID)) {
            ent = fm_alloc_page(m) | VNPU_PTE_VALID;
            fm_st64(m, addr, ent);
        }
        table = ent & VNPU_PTE_ADDR_MASK;
    }
    fm_st64(m, table + VNPU_PT_INDEX(va, 3) * 8, pa | VNPU_PTE_VALID | perms);
}

/* Write context entry @ctx of the table at @table. */
static inline void ctx_set(FakeMem *m, uint64_t table, uint32_t ctx,
                           uint64_t pt_root, uint64_t reserved)
{
    fm_st64(m, table + ctx * 16ull, pt_root);
    fm_st64(m, table + ctx * 16ull + 8, reserved);
}

#define RW (VNPU_PTE_READ | VNPU_PTE_WRITE)

static inline uint32_t fault_of(unsigned reason, bool is_write)
{
    return VNPU_FAULT_VALID | (is_write ? VNPU_FAULT_WRITE : 0) |
           (reason << 4);
}

#endif
