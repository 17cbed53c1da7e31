// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * KUnit tests of the hardware-independent driver logic.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/sizes.h>

#include "vnpu_hw.h"
#include "vnpu_pt.h"
#include "vnpu_uapi_check.h"

/* Tables from kmalloc; the "DMA address" is the virtual address. */
struct vnpu_test_alloc {
	unsigned int live;
	unsigned int fail_after;	/* 0: never fail */
	unsigned int allocs;
};

static __le64 *vnpu_test_pt_alloc(void *priv, u64 *dma)
{
	struct vnpu_test_alloc *ta = priv;
	__le64 *t;

	if (ta->fail_after && ++ta->allocs > ta->fail_after)
		return NULL;
	t = kzalloc(VNPU_PAGE_SIZE, GFP_KERNEL);
	if (!t)
		return NULL;
	*dma = (u64)(uintptr_t)t;
	ta->live++;
	return t;
}

static void vnpu_test_pt_free(void *priv, __le64 *table, u64 dma)
{
	struct vnpu_test_alloc *ta = priv;

	ta->live--;
	kfree(table);
}

static const struct vnpu_pt_alloc_ops vnpu_test_pt_ops = {
	.alloc = vnpu_test_pt_alloc,
	.free = vnpu_test_pt_free,
};

/* Walk the tables as the device would, from the entries alone. */
static u64 vnpu_test_walk(struct vnpu_pt *pt, u64 va)
{
	u64 entry = vnpu_pt_root_dma(pt) | VNPU_PTE_VALID;
	int level;

	for (level = 0; level < VNPU_PT_LEVELS; level++) {
		__le64 *table;

		if (!(entry & VNPU_PTE_VALID))
			return 0;
		table = (__le64 *)(uintptr_t)(entry & VNPU_PTE_ADDR_MASK);
		entry = le64_to_cpu(table[VNPU_PT_INDEX(va, level)]);
	}
	return entry;
}

static void vnpu_pt_test_map_lookup(struct kunit *test)
{
	struct vnpu_test_alloc ta = {};
	struct vnpu_pt pt;
	u64 va = 0x12345000ull, pa = 0xabc000ull, e;

	KUNIT_ASSERT_EQ(test, vnpu_pt_init(&pt, &vnpu_test_pt_ops, &ta), 0);
	KUNIT_EXPECT_EQ(test, ta.live, 1u);
	KUNIT_ASSERT_EQ(test, vnpu_pt_map(&pt, va, pa, 3 * VNPU_PAGE_SIZE, true), 0);
	/* One table per level for a range inside one leaf table. */
	KUNIT_EXPECT_EQ(test, ta.live, 4u);

	e = vnpu_test_walk(&pt, va + VNPU_PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, e & VNPU_PTE_ADDR_MASK, pa + VNPU_PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, e & VNPU_PTE_VALID);
	KUNIT_EXPECT_TRUE(test, e & VNPU_PTE_READ);
	KUNIT_EXPECT_TRUE(test, e & VNPU_PTE_WRITE);
	KUNIT_EXPECT_EQ(test, vnpu_pt_lookup(&pt, va + 2 * VNPU_PAGE_SIZE), e + VNPU_PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, va + 3 * VNPU_PAGE_SIZE), 0ull);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, va - VNPU_PAGE_SIZE), 0ull);

	vnpu_pt_unmap(&pt, va, 3 * VNPU_PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, va), 0ull);
	/* Empty intermediate tables are freed. */
	KUNIT_EXPECT_EQ(test, ta.live, 1u);
	vnpu_pt_fini(&pt);
	KUNIT_EXPECT_EQ(test, ta.live, 0u);
}

static void vnpu_pt_test_readonly(struct kunit *test)
{
	struct vnpu_test_alloc ta = {};
	struct vnpu_pt pt;
	u64 e;

	KUNIT_ASSERT_EQ(test, vnpu_pt_init(&pt, &vnpu_test_pt_ops, &ta), 0);
	KUNIT_ASSERT_EQ(test, vnpu_pt_map(&pt, 0x200000, 0x5000, VNPU_PAGE_SIZE, false), 0);
	e = vnpu_test_walk(&pt, 0x200000);
	KUNIT_EXPECT_TRUE(test, e & VNPU_PTE_READ);
	KUNIT_EXPECT_FALSE(test, e & VNPU_PTE_WRITE);
	vnpu_pt_fini(&pt);
	KUNIT_EXPECT_EQ(test, ta.live, 0u);
}

static void vnpu_pt_test_cross_boundaries(struct kunit *test)
{
	struct vnpu_test_alloc ta = {};
	struct vnpu_pt pt;
	/* Two pages either side of a level-0 (512 GiB) boundary. */
	u64 va = (1ull << 39) - 2 * VNPU_PAGE_SIZE;
	u64 off;

	KUNIT_ASSERT_EQ(test, vnpu_pt_init(&pt, &vnpu_test_pt_ops, &ta), 0);
	KUNIT_ASSERT_EQ(test, vnpu_pt_map(&pt, va, 0x100000, 4 * VNPU_PAGE_SIZE, true), 0);
	/* Root + two chains of three tables. */
	KUNIT_EXPECT_EQ(test, ta.live, 7u);
	for (off = 0; off < 4 * VNPU_PAGE_SIZE; off += VNPU_PAGE_SIZE)
		KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, va + off) & VNPU_PTE_ADDR_MASK,
				0x100000 + off);
	vnpu_pt_unmap(&pt, va, 2 * VNPU_PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, ta.live, 4u);
	KUNIT_EXPECT_NE(test, vnpu_test_walk(&pt, va + 2 * VNPU_PAGE_SIZE), 0ull);
	vnpu_pt_fini(&pt);
	KUNIT_EXPECT_EQ(test, ta.live, 0u);
}

static void vnpu_pt_test_bad_input(struct kunit *test)
{
	struct vnpu_test_alloc ta = {};
	struct vnpu_pt pt;

	KUNIT_ASSERT_EQ(test, vnpu_pt_init(&pt, &vnpu_test_pt_ops, &ta), 0);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x1001, 0x1000, VNPU_PAGE_SIZE, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x1000, 0x1001, VNPU_PAGE_SIZE, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x1000, 0x1000, 0, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x1000, 0x1000, 100, true), -EINVAL);
	/* Beyond the 48-bit VA space, and wrapping u64. */
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 1ull << 48, 0x1000, VNPU_PAGE_SIZE, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, (1ull << 48) - VNPU_PAGE_SIZE, 0x1000,
					  2 * VNPU_PAGE_SIZE, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, ~0ull & ~0xfffull, 0x1000,
					  2 * VNPU_PAGE_SIZE, true), -EINVAL);
	/* Physical address beyond the PTE's 52 bits. */
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x1000, 1ull << 52, VNPU_PAGE_SIZE, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, ta.live, 1u);

	/* Double map is refused and leaves the first mapping intact. */
	KUNIT_ASSERT_EQ(test, vnpu_pt_map(&pt, 0x3000, 0x7000, VNPU_PAGE_SIZE, true), 0);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x2000, 0x9000, 2 * VNPU_PAGE_SIZE, true),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, 0x2000), 0ull);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, 0x3000) & VNPU_PTE_ADDR_MASK, 0x7000ull);
	vnpu_pt_fini(&pt);
	KUNIT_EXPECT_EQ(test, ta.live, 0u);
}

static void vnpu_pt_test_alloc_failure(struct kunit *test)
{
	struct vnpu_test_alloc ta = { .fail_after = 2 };
	struct vnpu_pt pt;

	KUNIT_ASSERT_EQ(test, vnpu_pt_init(&pt, &vnpu_test_pt_ops, &ta), 0);
	KUNIT_EXPECT_EQ(test, vnpu_pt_map(&pt, 0x400000, 0x1000, VNPU_PAGE_SIZE, true),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, vnpu_test_walk(&pt, 0x400000), 0ull);
	vnpu_pt_fini(&pt);
	KUNIT_EXPECT_EQ(test, ta.live, 0u);
}

static void vnpu_va_test_alloc(struct kunit *test)
{
	struct drm_mm_node a = {}, b = {}, c = {};
	struct drm_mm mm;
	u64 end = VNPU_VA_START + 20 * VNPU_PAGE_SIZE;

	drm_mm_init(&mm, VNPU_VA_START, end - VNPU_VA_START);
	KUNIT_ASSERT_EQ(test, vnpu_va_alloc(&mm, &a, 4 * VNPU_PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, vnpu_va_alloc(&mm, &b, 4 * VNPU_PAGE_SIZE), 0);
	KUNIT_EXPECT_GE(test, a.start, VNPU_VA_START);
	KUNIT_EXPECT_LE(test, b.start + b.size, end);
	KUNIT_EXPECT_EQ(test, a.start % VNPU_PAGE_SIZE, 0ull);
	/* Each buffer is followed by an unmapped guard page. */
	KUNIT_EXPECT_EQ(test, a.size, 4 * VNPU_PAGE_SIZE + VNPU_VA_GUARD);
	KUNIT_EXPECT_TRUE(test, a.start + a.size <= b.start || b.start + b.size <= a.start);

	/* a and b take 5 pages each with their guards: 10 of 20 are left. */
	KUNIT_EXPECT_EQ(test, vnpu_va_alloc(&mm, &c, 10 * VNPU_PAGE_SIZE), -ENOSPC);
	KUNIT_ASSERT_EQ(test, vnpu_va_alloc(&mm, &c, 9 * VNPU_PAGE_SIZE), 0);
	drm_mm_remove_node(&c);

	KUNIT_EXPECT_EQ(test, vnpu_va_alloc(&mm, &c, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_va_alloc(&mm, &c, 100), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_va_alloc(&mm, &c, ~0ull & ~0xfffull), -EINVAL);

	/* Freed space is reused. */
	drm_mm_remove_node(&a);
	KUNIT_EXPECT_EQ(test, vnpu_va_alloc(&mm, &c, 4 * VNPU_PAGE_SIZE), 0);
	drm_mm_remove_node(&c);
	drm_mm_remove_node(&b);
	drm_mm_takedown(&mm);
}

static void vnpu_check_test_bo_create(struct kunit *test)
{
	struct drm_vnpu_bo_create a = { .size = 1 };
	u64 size = 0;

	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), 0);
	KUNIT_EXPECT_EQ(test, size, (u64)VNPU_PAGE_SIZE);
	a.size = SZ_1G;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), 0);
	KUNIT_EXPECT_EQ(test, size, (u64)SZ_1G);
	a.size = SZ_1G + 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), -E2BIG);
	a.size = ~0ull;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), -E2BIG);
	a.size = 0;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), -EINVAL);
	a.size = 4096;
	a.flags = DRM_VNPU_BO_DEVICE_READONLY;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), 0);
	a.flags = 1u << 31;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_create(&a, SZ_1G, &size), -EINVAL);
}

static void vnpu_check_test_submit(struct kunit *test)
{
	const struct drm_vnpu_submit good = {
		.cmd_va = 0x100000, .cmd_size = 64, .queue = 3,
		.priority = DRM_VNPU_PRIORITY_HIGH,
	};
	struct drm_vnpu_submit s;
	u32 max = VNPU_CMD_MAX_BUFFER;

	s = good;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), 0);
	s = good; s.queue = 4;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.priority = 3;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.flags = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.pad = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.cmd_size = 0;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.cmd_size = 12;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.cmd_va = 0x100004;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.cmd_va = ~7ull;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s = good; s.cmd_size = max + 8;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -E2BIG);
	s = good; s.bo_count = VNPU_SUBMIT_MAX_ENTRIES + 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -E2BIG);
	s = good; s.in_sync_count = ~0u;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -E2BIG);
	s = good; s.out_point = 5;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), -EINVAL);
	s.out_syncobj = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_submit(&s, 4, max), 0);
}

static void vnpu_check_test_misc(struct kunit *test)
{
	struct drm_vnpu_query q = {};
	struct drm_vnpu_wait w = {};
	struct drm_vnpu_job_status js = {};
	struct drm_vnpu_bo_info bi = {};
	struct drm_vnpu_sync sync = {};

	KUNIT_EXPECT_EQ(test, vnpu_check_query(&q), 0);
	q.param = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_query(&q), -EINVAL);
	q.param = 0; q.pad = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_query(&q), -EINVAL);

	KUNIT_EXPECT_EQ(test, vnpu_check_wait(&w), 0);
	w.type = DRM_VNPU_WAIT_BO;
	KUNIT_EXPECT_EQ(test, vnpu_check_wait(&w), 0);
	w.type = 2;
	KUNIT_EXPECT_EQ(test, vnpu_check_wait(&w), -EINVAL);
	w.type = 0; w.pad = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_wait(&w), -EINVAL);

	KUNIT_EXPECT_EQ(test, vnpu_check_job_status(&js), 0);
	js.pad = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_job_status(&js), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_info(&bi), 0);
	bi.pad = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_bo_info(&bi), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnpu_check_sync(&sync), 0);
	sync.flags = 1;
	KUNIT_EXPECT_EQ(test, vnpu_check_sync(&sync), -EINVAL);
}

static struct kunit_case vnpu_pt_cases[] = {
	KUNIT_CASE(vnpu_pt_test_map_lookup),
	KUNIT_CASE(vnpu_pt_test_readonly),
	KUNIT_CASE(vnpu_pt_test_cross_boundaries),
	KUNIT_CASE(vnpu_pt_test_bad_input),
	KUNIT_CASE(vnpu_pt_test_alloc_failure),
	KUNIT_CASE(vnpu_va_test_alloc),
	{}
};

static struct kunit_suite vnpu_pt_suite = {
	.name = "vnpu_pt",
	.test_cases = vnpu_pt_cases,
};

static struct kunit_case vnpu_check_cases[] = {
	KUNIT_CASE(vnpu_check_test_bo_create),
	KUNIT_CASE(vnpu_check_test_submit),
	KUNIT_CASE(vnpu_check_test_misc),
	{}
};

static struct kunit_suite vnpu_check_suite = {
	.name = "vnpu_uapi_check",
	.test_cases = vnpu_check_cases,
};

/* Part of vnpu.ko (see Kconfig): the suites run when the driver loads. */
kunit_test_suites(&vnpu_pt_suite, &vnpu_check_suite);
