/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device page-table builder and VA allocator.  Pure logic: the tables live
 * in memory handed out by a caller-supplied allocator, so the same code
 * runs against DMA-coherent memory in the driver and kmalloc in KUnit.
 */
#ifndef __VNPU_PT_H__
#define __VNPU_PT_H__

#include <linux/types.h>
#include <drm/drm_mm.h>

/**
 * struct vnpu_pt_alloc_ops - where page-table pages come from
 * @alloc: return a zeroed, VNPU_PAGE_SIZE-aligned table of VNPU_PT_ENTRIES
 *	little-endian entries and its device address in @dma, or NULL
 * @free: release a table returned by @alloc
 */
struct vnpu_pt_alloc_ops {
	__le64 *(*alloc)(void *priv, u64 *dma);
	void (*free)(void *priv, __le64 *table, u64 dma);
};

struct vnpu_pt_table;

/**
 * struct vnpu_pt - one four-level device address space
 * @ops: table allocator
 * @priv: allocator cookie
 * @root: level-0 table, always present after vnpu_pt_init()
 * @tables: tables currently allocated, root included
 *
 * The caller serialises all calls on one &struct vnpu_pt.
 */
struct vnpu_pt {
	const struct vnpu_pt_alloc_ops *ops;
	void *priv;
	struct vnpu_pt_table *root;
	unsigned int tables;
};

int vnpu_pt_init(struct vnpu_pt *pt, const struct vnpu_pt_alloc_ops *ops,
		 void *priv);
void vnpu_pt_fini(struct vnpu_pt *pt);
u64 vnpu_pt_root_dma(const struct vnpu_pt *pt);
int vnpu_pt_map(struct vnpu_pt *pt, u64 va, u64 pa, u64 size, bool writable);
void vnpu_pt_unmap(struct vnpu_pt *pt, u64 va, u64 size);
u64 vnpu_pt_lookup(const struct vnpu_pt *pt, u64 va);

/* Device VAs the driver hands out: the first 1 MiB stays unmapped. */
#define VNPU_VA_START		0x100000ull

/* An unmapped page after every BO turns small overruns into faults. */
#define VNPU_VA_GUARD		4096ull

int vnpu_va_alloc(struct drm_mm *mm, struct drm_mm_node *node, u64 size);

#endif /* __VNPU_PT_H__ */
