/*
 * vnpu device logic that needs no QEMU: the MMU walk and fault
 * classification, the software TLB, and the validation and decoding of
 * descriptors, rings and v1 commands.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Plain C11 so that the very code the device runs is also compiled on the
 * host by tests/host/device.  Nothing here allocates, sleeps or reaches
 * guest memory by itself: the page-table walk reads through a bus callback,
 * and the caller provides the lock around the TLB (VnpuMmu.lock/unlock).
 * All guest-provided structures are decoded from little-endian bytes, so
 * the results do not depend on the host's byte order.
 */
#ifndef HW_VNPU_CORE_H
#define HW_VNPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vnpu_hw.h"

#define VNPU_TLB_ENTRIES        32      /* per context, direct mapped */
/* Leaf tables remembered per context (walk cache), direct mapped. */
#define VNPU_LEAF_CACHE_ENTRIES 8
/* VA span one leaf table translates: 512 pages, 2 MiB. */
#define VNPU_LEAF_SHIFT         VNPU_PT_LEVEL_SHIFT(VNPU_PT_LEVELS - 2)
#define VNPU_DESC_SIZE          64
#define VNPU_COMPL_SIZE         64
#define VNPU_RING_ALIGN         64
#define VNPU_CTX_TABLE_ALIGN    4096
#define VNPU_VA_LIMIT           (1ull << VNPU_VA_BITS)
#define VNPU_PAGE_OFFSET_MASK   ((uint64_t)VNPU_PAGE_SIZE - 1)

static inline uint16_t vnpu_ld16_le(const void *p)
{
    const uint8_t *b = p;

    return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t vnpu_ld32_le(const void *p)
{
    const uint8_t *b = p;

    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

static inline uint64_t vnpu_ld64_le(const void *p)
{
    const uint8_t *b = p;

    return (uint64_t)vnpu_ld32_le(b) | (uint64_t)vnpu_ld32_le(b + 4) << 32;
}

/*
 * Whether [@addr, @addr + @len) wraps 2^64.  A range ending exactly at 2^64
 * does not: its last byte is addressable.
 */
static inline bool vnpu_range_wraps(uint64_t addr, uint64_t len)
{
    return len && addr + (len - 1) < addr;
}

/* ---- MMU ----------------------------------------------------------------- */

/*
 * Read @len bytes at bus (DMA) address @addr into @buf.  Returns false on a
 * bus error (the address is not RAM).  Called without any lock held.
 */
typedef bool VnpuBusReadFn(void *opaque, uint64_t addr, void *buf,
                           uint64_t len);

/* The MMU registers as a job saw them when it started. */
typedef struct VnpuMmuConfig {
    bool enabled;
    uint64_t ctx_table;
    uint32_t ctx_count;
} VnpuMmuConfig;

/*
 * Where a walk ended.  @level is the page-table level whose entry decided
 * the outcome (3 for a leaf), or -1 when the walk never reached the page
 * tables (ADDRESS, CONTEXT, or BUS on the context entry).
 */
typedef struct VnpuWalk {
    int level;
    uint64_t root;      /* level-0 table, once the context entry was read */
    uint64_t pte;       /* the deciding entry, as read */
    uint64_t leaf;      /* the leaf table, once the walk reached it */
    uint64_t pa;        /* page DMA address (success and PERMISSION) */
    uint64_t perms;     /* leaf VNPU_PTE_READ | VNPU_PTE_WRITE */
} VnpuWalk;

uint32_t vnpu_fault_flags(unsigned reason, bool is_write);

static inline unsigned vnpu_fault_reason(uint32_t flags)
{
    return (flags & VNPU_FAULT_REASON_MASK) >> VNPU_FAULT_REASON_SHIFT;
}

/*
 * Walk the page tables of context @ctx_id for the page holding @va.  The
 * context entry is read from the table unless @cached_root is non-NULL.
 * Returns 0 (and @w->pa) when the leaf grants the access, else the
 * VNPU_FAULT_* word for the job's completion record.  In bypass mode the
 * VA is the DMA address and nothing is checked.
 */
uint32_t vnpu_mmu_walk(VnpuBusReadFn *read, void *opaque,
                       const VnpuMmuConfig *cfg, uint32_t ctx_id, uint64_t va,
                       bool is_write, const uint64_t *cached_root,
                       VnpuWalk *w);

typedef struct VnpuTlbEntry {
    uint64_t vpn;               /* VA >> PAGE_SHIFT, valid if perms != 0 */
    uint64_t pa;                /* page DMA address */
    uint64_t perms;             /* VNPU_PTE_READ | VNPU_PTE_WRITE */
} VnpuTlbEntry;

/* Where the leaf table of one 2 MiB VA region is: a walk cache entry. */
typedef struct VnpuLeafEntry {
    bool valid;
    uint64_t tag;               /* VA >> VNPU_LEAF_SHIFT */
    uint64_t table;             /* leaf table DMA address */
} VnpuLeafEntry;

typedef struct VnpuCtxCache {
    uint64_t gen;               /* bumped by every invalidation of this ctx */
    bool root_valid;
    uint64_t pt_root;
    VnpuTlbEntry e[VNPU_TLB_ENTRIES];
    VnpuLeafEntry leaf[VNPU_LEAF_CACHE_ENTRIES];
} VnpuCtxCache;

/* Context-entry and leaf cache of every context. */
typedef struct VnpuTlb {
    uint64_t gen_all;           /* bumped by every global invalidation */
    uint64_t hits, misses;      /* statistics, for tests and tracing */
    VnpuCtxCache ctx[VNPU_MAX_CONTEXTS];
} VnpuTlb;

/* Caller holds the TLB lock.  @ctx >= VNPU_MAX_CONTEXTS is ignored. */
void vnpu_tlb_invalidate_locked(VnpuTlb *t, bool all, uint32_t ctx);

/*
 * Everything vnpu_mmu_translate() needs.  @lock/@unlock serialize the TLB
 * against invalidations and other engines; they may be NULL for a
 * single-threaded user.  The walk itself runs unlocked, so a translation
 * racing with an invalidation is used once but never cached.  @may_cache,
 * if set, is asked with the lock held before a walk's result is cached
 * (the device refuses for a job that a reset abandoned: its walk used the
 * page tables of the device's previous life).
 */
typedef struct VnpuMmu {
    VnpuTlb *tlb;
    VnpuBusReadFn *read;
    void *bus;
    void (*lock)(void *opaque);
    void (*unlock)(void *opaque);
    void *lock_opaque;
    bool (*may_cache)(void *opaque);
    void *cache_opaque;
} VnpuMmu;

/*
 * Translate the page holding @va through the TLB, walking on a miss.
 * Returns 0 and the page's DMA address in @pa, or a VNPU_FAULT_* word.
 */
uint32_t vnpu_mmu_translate(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                            uint32_t ctx_id, uint64_t va, bool is_write,
                            uint64_t *pa);

/*
 * Translate the page holding @va as vnpu_mmu_translate() does, then find
 * how far the pages after it continue it in DMA address space with the
 * same access granted: returns 0, @pa = the DMA address of @va itself and
 * @run = bytes from @va (1..@len) that are contiguous from @pa; or the
 * fault of @va's own page.  A later page that would fault, or that is
 * elsewhere, only ends the run: the caller's next translation starts
 * there and reports that fault at its exact VA.
 *
 * The pages after the first are read straight from their leaf tables,
 * up to a whole table (512 entries, 2 MiB of VA) in one bus read, with
 * the leaf tables' addresses cached per context next to the TLB: a run
 * of N pages costs one read per 2 MiB instead of N lookups, each a walk
 * once the TLB has to evict.  Reading entries from memory is never
 * staler than the TLB, so the invalidation rules are unchanged.
 */
uint32_t vnpu_mmu_translate_run(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                                uint32_t ctx_id, uint64_t va, uint64_t len,
                                bool is_write, uint64_t *pa, uint64_t *run);

/* One physically contiguous piece of a translated range. */
typedef struct VnpuRun {
    uint64_t pa;
    uint64_t len;
} VnpuRun;

/*
 * vnpu_mmu_translate_run() past the end of the first run: the runs that
 * [@va, @va + @len) maps to, in VA order, at most @max (>= 1) of them,
 * from the same reads of the leaf tables.  Returns 0 and @n >= 1 runs
 * that cover @va onwards without a gap (possibly less than @len: they
 * end at a page that would fault, or after @max runs), or the fault of
 * @va's own page.  Scattered 4 KiB pages then cost one leaf-table read
 * per 2 MiB, not a translation each.
 */
uint32_t vnpu_mmu_translate_runs(const VnpuMmu *mmu, const VnpuMmuConfig *cfg,
                                 uint32_t ctx_id, uint64_t va, uint64_t len,
                                 bool is_write, VnpuRun *runs, unsigned max,
                                 unsigned *n);

/* MMU_CONTROL.ENABLE may be set with this context table. */
bool vnpu_ctx_table_valid(uint64_t table, uint32_t count);

/* ---- Queues ---------------------------------------------------------------- */

typedef enum VnpuRingErr {
    VNPU_RING_OK = 0,
    VNPU_RING_ERR_SIZE,         /* not a power of two in 2..4096 */
    VNPU_RING_ERR_ALIGN,        /* a ring base not 64-byte aligned */
    VNPU_RING_ERR_WRAP,         /* a ring wraps the 64-bit address space */
} VnpuRingErr;

/* The checks CONTROL.ENABLE makes on a queue's setup. */
VnpuRingErr vnpu_ring_check(uint64_t ring, uint64_t compl, uint32_t size);
const char *vnpu_ring_strerror(VnpuRingErr err);

/* TAIL must name a slot of the ring (@size already validated). */
static inline bool vnpu_ring_tail_valid(uint32_t size, uint32_t tail)
{
    return tail < size;
}

/* Decode a descriptor from its 64 little-endian bytes. */
void vnpu_desc_decode(const void *raw, struct vnpu_hw_desc *d);
/* The descriptor rules; a descriptor breaking one gets DESC_ERROR. */
bool vnpu_desc_valid(const struct vnpu_hw_desc *d);

/* ---- Command stream -------------------------------------------------------- */

typedef enum VnpuCmdErr {
    VNPU_CMD_OK = 0,
    VNPU_CMD_ERR_TRUNCATED,     /* fewer than 8 bytes left for a header */
    VNPU_CMD_ERR_SIZE,          /* size < 8, not a multiple of 8 or past end */
    VNPU_CMD_ERR_FLAGS,         /* header flags not zero */
    VNPU_CMD_ERR_OPCODE,        /* undefined opcode */
    VNPU_CMD_ERR_CMD_SIZE,      /* a v1 command with the wrong size */
    VNPU_CMD_ERR_RESERVED,      /* a must-be-zero field is not */
    VNPU_CMD_ERR_ALIGN,         /* address or size misaligned */
    VNPU_CMD_ERR_WRAP,          /* a range wraps 2^64 */
    VNPU_CMD_ERR_OVERLAP,       /* COPY source and destination overlap */
} VnpuCmdErr;

/* One decoded command, host byte order. */
typedef struct VnpuCmd {
    uint16_t opcode;
    uint32_t off;               /* byte offset in the command buffer */
    uint32_t size;              /* whole command, header included */
    union {
        struct {
            uint64_t src, dst, len;
        } copy;
        struct {
            uint64_t dst, len;
            uint32_t pattern;
        } fill;
        struct {
            uint64_t dst, value;    /* value unused by TIMESTAMP */
        } store;
    } u;
} VnpuCmd;

/*
 * Decode and validate the command at @off of the @size-byte buffer @buf.
 * Every rule of the v1 command stream that can be checked without touching
 * memory is checked here; compute commands (0x40..0x7f) only get the header
 * checks, their payload is the compute engine's.  On error the job's
 * completion carries CMD_ERROR with fault_va = @off.
 */
VnpuCmdErr vnpu_cmd_decode(const uint8_t *buf, uint32_t size, uint32_t off,
                           VnpuCmd *cmd);
const char *vnpu_cmd_strerror(VnpuCmdErr err);

/* Modelled DRAM cycles of a completed v1 command (hw-spec "Timing model"). */
uint64_t vnpu_dma_cycles(uint64_t bytes);
uint64_t vnpu_cmd_cycles(const VnpuCmd *cmd);

#endif
