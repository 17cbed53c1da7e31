// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

#include <linux/errno.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "vnpu_hw.h"
#include "vnpu_pt.h"

/*
 * The device only sees entries; the CPU needs to find the child of an
 * entry without translating DMA addresses back, so every table carries a
 * shadow array of child pointers (levels 0-2) and a count of live entries
 * so that empty tables can be freed on unmap.
 */
struct vnpu_pt_table {
	__le64 *entries;
	u64 dma;
	unsigned int used;
	struct vnpu_pt_table *child[];
};

static struct vnpu_pt_table *vnpu_pt_table_new(struct vnpu_pt *pt, int level)
{
	unsigned int nchild = level < VNPU_PT_LEVELS - 1 ? VNPU_PT_ENTRIES : 0;
	struct vnpu_pt_table *t;

	t = kzalloc(struct_size(t, child, nchild), GFP_KERNEL);
	if (!t)
		return NULL;
	t->entries = pt->ops->alloc(pt->priv, &t->dma);
	if (!t->entries) {
		kfree(t);
		return NULL;
	}
	pt->tables++;
	return t;
}

static void vnpu_pt_table_free(struct vnpu_pt *pt, struct vnpu_pt_table *t,
			       int level)
{
	unsigned int i;

	if (level < VNPU_PT_LEVELS - 1) {
		for (i = 0; i < VNPU_PT_ENTRIES; i++)
			if (t->child[i])
				vnpu_pt_table_free(pt, t->child[i], level + 1);
	}
	pt->ops->free(pt->priv, t->entries, t->dma);
	pt->tables--;
	kfree(t);
}

/**
 * vnpu_pt_init() - create an empty address space
 * @pt: the address space
 * @ops: table allocator
 * @priv: cookie passed to @ops
 *
 * Return: 0 or -ENOMEM.
 */
int vnpu_pt_init(struct vnpu_pt *pt, const struct vnpu_pt_alloc_ops *ops,
		 void *priv)
{
	pt->ops = ops;
	pt->priv = priv;
	pt->tables = 0;
	pt->root = vnpu_pt_table_new(pt, 0);
	return pt->root ? 0 : -ENOMEM;
}

/**
 * vnpu_pt_fini() - free every table of an address space
 * @pt: the address space
 */
void vnpu_pt_fini(struct vnpu_pt *pt)
{
	if (pt->root)
		vnpu_pt_table_free(pt, pt->root, 0);
	pt->root = NULL;
}

/**
 * vnpu_pt_root_dma() - device address of the level-0 table
 * @pt: the address space
 *
 * Return: the address to store in the context table entry.
 */
u64 vnpu_pt_root_dma(const struct vnpu_pt *pt)
{
	return pt->root->dma;
}

static bool vnpu_pt_range_ok(u64 va, u64 size)
{
	u64 end;

	if (!size || (va | size) & (VNPU_PAGE_SIZE - 1))
		return false;
	if (check_add_overflow(va, size, &end))
		return false;
	return end <= (1ull << VNPU_VA_BITS);
}

/* Walk to the leaf table for @va, creating missing levels if @create. */
static struct vnpu_pt_table *vnpu_pt_leaf(struct vnpu_pt *pt, u64 va,
					  bool create)
{
	struct vnpu_pt_table *t = pt->root;
	int level;

	for (level = 0; level < VNPU_PT_LEVELS - 1; level++) {
		unsigned int idx = VNPU_PT_INDEX(va, level);
		struct vnpu_pt_table *c = t->child[idx];

		if (!c) {
			if (!create)
				return NULL;
			c = vnpu_pt_table_new(pt, level + 1);
			if (!c)
				return NULL;
			t->child[idx] = c;
			t->used++;
			/*
			 * The child is fully zeroed before it becomes
			 * reachable; the caller orders these stores against
			 * the device with its TLB invalidation.
			 */
			t->entries[idx] = cpu_to_le64(c->dma | VNPU_PTE_VALID);
		}
		t = c;
	}
	return t;
}

/**
 * vnpu_pt_map() - map a physically contiguous range
 * @pt: the address space
 * @va: device VA, page aligned
 * @pa: bus address, page aligned
 * @size: bytes, a nonzero multiple of the page size
 * @writable: grant device writes as well as reads
 *
 * On failure nothing of the range stays mapped.
 *
 * Return: 0, -EINVAL for a bad range or an already mapped page, -ENOMEM.
 */
int vnpu_pt_map(struct vnpu_pt *pt, u64 va, u64 pa, u64 size, bool writable)
{
	u64 flags = VNPU_PTE_VALID | VNPU_PTE_READ |
		    (writable ? VNPU_PTE_WRITE : 0);
	u64 off;

	if (!vnpu_pt_range_ok(va, size) || pa & (VNPU_PAGE_SIZE - 1) ||
	    (pa + size - 1) & ~(VNPU_PTE_ADDR_MASK | (VNPU_PAGE_SIZE - 1)))
		return -EINVAL;

	for (off = 0; off < size; off += VNPU_PAGE_SIZE) {
		struct vnpu_pt_table *leaf = vnpu_pt_leaf(pt, va + off, true);
		unsigned int idx = VNPU_PT_INDEX(va + off, 3);

		if (!leaf || leaf->entries[idx]) {
			if (off)
				vnpu_pt_unmap(pt, va, off);
			return leaf ? -EINVAL : -ENOMEM;
		}
		leaf->entries[idx] = cpu_to_le64(((pa + off) & VNPU_PTE_ADDR_MASK) |
						 flags);
		leaf->used++;
	}
	return 0;
}

/* Clear one leaf entry and free tables that became empty. */
static void vnpu_pt_clear(struct vnpu_pt *pt, u64 va)
{
	struct vnpu_pt_table *path[VNPU_PT_LEVELS];
	int level;

	path[0] = pt->root;
	for (level = 0; level < VNPU_PT_LEVELS - 1; level++) {
		path[level + 1] = path[level]->child[VNPU_PT_INDEX(va, level)];
		if (!path[level + 1])
			return;
	}
	if (!path[3]->entries[VNPU_PT_INDEX(va, 3)])
		return;
	path[3]->entries[VNPU_PT_INDEX(va, 3)] = 0;
	path[3]->used--;

	for (level = VNPU_PT_LEVELS - 1; level > 0; level--) {
		struct vnpu_pt_table *parent = path[level - 1];
		unsigned int idx = VNPU_PT_INDEX(va, level - 1);

		if (path[level]->used)
			break;
		parent->entries[idx] = 0;
		parent->child[idx] = NULL;
		parent->used--;
		vnpu_pt_table_free(pt, path[level], level);
	}
}

/**
 * vnpu_pt_unmap() - unmap a range; unmapped pages in it are skipped
 * @pt: the address space
 * @va: device VA, page aligned
 * @size: bytes, a multiple of the page size
 *
 * Tables that become empty are freed, so the caller must invalidate the
 * device TLB before the freed memory can be reused by anyone else; the
 * driver does so under the same lock.
 */
void vnpu_pt_unmap(struct vnpu_pt *pt, u64 va, u64 size)
{
	u64 off;

	if (!vnpu_pt_range_ok(va, size))
		return;
	for (off = 0; off < size; off += VNPU_PAGE_SIZE)
		vnpu_pt_clear(pt, va + off);
}

/**
 * vnpu_pt_lookup() - read the leaf entry for a VA, as the device would
 * @pt: the address space
 * @va: device VA
 *
 * Return: the leaf entry, or 0 when no valid translation exists.
 */
u64 vnpu_pt_lookup(const struct vnpu_pt *pt, u64 va)
{
	const struct vnpu_pt_table *t = pt->root;
	int level;

	if (va >= (1ull << VNPU_VA_BITS))
		return 0;
	for (level = 0; level < VNPU_PT_LEVELS - 1; level++) {
		t = t->child[VNPU_PT_INDEX(va, level)];
		if (!t)
			return 0;
	}
	return le64_to_cpu(t->entries[VNPU_PT_INDEX(va, 3)]);
}

/**
 * vnpu_va_alloc() - reserve device VA for a buffer plus a guard page
 * @mm: the address space's range allocator, initialised by the caller
 * @node: zeroed node to insert
 * @size: buffer bytes, a nonzero multiple of the page size
 *
 * Return: 0, -EINVAL for a bad @size, -ENOSPC when no hole is big enough.
 */
int vnpu_va_alloc(struct drm_mm *mm, struct drm_mm_node *node, u64 size)
{
	u64 total;

	if (!size || size & (VNPU_PAGE_SIZE - 1) ||
	    check_add_overflow(size, VNPU_VA_GUARD, &total))
		return -EINVAL;
	return drm_mm_insert_node_generic(mm, node, total, VNPU_PAGE_SIZE, 0,
					  DRM_MM_INSERT_BEST);
}
