// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * KUnit tests of the hardware-independent driver logic: page tables, VA
 * allocation, ioctl argument checks, and the completion, reset and ban
 * bookkeeping of vnpu_track.c against a simulated device.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/sizes.h>

#include "vnpu_hw.h"
#include "vnpu_pt.h"
#include "vnpu_track.h"
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

/*
 * Ring bookkeeping against a simulated device: the device finishes
 * descriptors in ring order, writes each slot's record (the descriptor's
 * seq) before it advances HEAD, and the driver may see HEAD late (a lost
 * interrupt) or many slots at once.
 */
struct vnpu_test_ring {
	struct vnpu_ring_track t;
	u64 record[VNPU_RING_ENTRIES];
	u32 hw_head;
	u64 next_seq;
	unsigned int jobs[VNPU_RING_ENTRIES];	/* owner cookies */
};

static void vnpu_test_ring_push(struct vnpu_test_ring *r, unsigned int cookie)
{
	/* At most RING_ENTRIES - 1 in flight: a cookie's cell is its own. */
	r->jobs[cookie % VNPU_RING_ENTRIES] = cookie;
	vnpu_track_push(&r->t, &r->jobs[cookie % VNPU_RING_ENTRIES], ++r->next_seq);
}

/* The device finishes @n descriptors. */
static void vnpu_test_ring_run(struct vnpu_test_ring *r, u32 n)
{
	while (n--) {
		r->record[r->hw_head] = r->t.seq[r->hw_head];
		r->hw_head = (r->hw_head + 1) % VNPU_RING_ENTRIES;
	}
}

/* Consume like vnpu_queue_complete(); returns slots consumed. */
static int vnpu_test_ring_consume(struct kunit *test, struct vnpu_test_ring *r,
				  unsigned int *expect_cookie)
{
	int done = vnpu_track_finished(&r->t, r->hw_head);
	int n = done;

	KUNIT_ASSERT_GE(test, done, 0);
	while (n--) {
		unsigned int *owner;
		u64 seq;

		KUNIT_EXPECT_TRUE(test, vnpu_track_record_ok(&r->t, r->record[r->t.head]));
		owner = vnpu_track_pop(&r->t, &seq);
		KUNIT_EXPECT_EQ(test, *owner, *expect_cookie);
		(*expect_cookie)++;
	}
	return done;
}

static void vnpu_track_test_in_order(struct kunit *test)
{
	struct vnpu_test_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, expect = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < 5; i++)
		vnpu_test_ring_push(r, i);
	KUNIT_EXPECT_EQ(test, vnpu_track_used(&r->t), 5u);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(&r->t, r->hw_head), 0);
	vnpu_test_ring_run(r, 3);
	KUNIT_EXPECT_EQ(test, vnpu_test_ring_consume(test, r, &expect), 3);
	KUNIT_EXPECT_EQ(test, vnpu_track_used(&r->t), 2u);
	/* Nothing new: consuming again is a no-op. */
	KUNIT_EXPECT_EQ(test, vnpu_test_ring_consume(test, r, &expect), 0);
	vnpu_test_ring_run(r, 2);
	KUNIT_EXPECT_EQ(test, vnpu_test_ring_consume(test, r, &expect), 2);
	KUNIT_EXPECT_EQ(test, expect, 5u);
	KUNIT_EXPECT_EQ(test, vnpu_track_used(&r->t), 0u);
}

/* Across the wrap, slot 255 is consumed before slot 0. */
static void vnpu_track_test_wrap_order(struct kunit *test)
{
	struct vnpu_test_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, expect = 0, cookie = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	/* Three laps of the ring in bursts that straddle the wrap. */
	for (i = 0; i < 3 * VNPU_RING_ENTRIES / 50; i++) {
		unsigned int k;

		for (k = 0; k < 50; k++)
			vnpu_test_ring_push(r, cookie++);
		vnpu_test_ring_run(r, 50);
		KUNIT_EXPECT_EQ(test, vnpu_test_ring_consume(test, r, &expect), 50);
	}
	KUNIT_EXPECT_EQ(test, expect, cookie);
}

/*
 * Lost interrupts: the driver sees HEAD only now and then; every job is
 * still consumed exactly once, in order, with its own record.
 */
static void vnpu_track_test_lost_irqs(struct kunit *test)
{
	struct vnpu_test_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, expect = 0, cookie = 0, total = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < 2000; i++) {
		u32 room = VNPU_RING_JOB_SLOTS - vnpu_track_used(&r->t);
		u32 in_flight;

		if (room && i % 3 != 2)
			vnpu_test_ring_push(r, cookie++);
		in_flight = (r->t.tail - r->hw_head) % VNPU_RING_ENTRIES;
		if (in_flight && i % 5 == 0)
			vnpu_test_ring_run(r, 1 + i % in_flight);
		if (i % 7 == 0)
			total += vnpu_test_ring_consume(test, r, &expect);
	}
	vnpu_test_ring_run(r, (r->t.tail - r->hw_head) % VNPU_RING_ENTRIES);
	total += vnpu_test_ring_consume(test, r, &expect);
	KUNIT_EXPECT_EQ(test, total, cookie);
	KUNIT_EXPECT_EQ(test, expect, cookie);
}

/* A record from the slot's previous lap is not the slot's. */
static void vnpu_track_test_stale_record(struct kunit *test)
{
	struct vnpu_test_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, expect = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < VNPU_RING_ENTRIES; i++) {
		vnpu_test_ring_push(r, i);
		vnpu_test_ring_run(r, 1);
		vnpu_test_ring_consume(test, r, &expect);
	}
	/* Lap two: slot 0 holds the record of lap one's descriptor. */
	vnpu_test_ring_push(r, i);
	KUNIT_EXPECT_FALSE(test, vnpu_track_record_ok(&r->t, r->record[r->t.head]));
	vnpu_test_ring_run(r, 1);
	KUNIT_EXPECT_TRUE(test, vnpu_track_record_ok(&r->t, r->record[r->t.head]));
}

/* A HEAD outside the slots in flight finishes nothing. */
static void vnpu_track_test_bad_head(struct kunit *test)
{
	struct vnpu_ring_track *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->head = 250;
	t->tail = 250;
	for (i = 0; i < 10; i++)
		vnpu_track_push(t, NULL, i + 1);
	KUNIT_EXPECT_EQ(test, t->tail, 4u);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 250), 0);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 255), 5);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 0), 6);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 4), 10);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 5), -EIO);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, 249), -EIO);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, VNPU_RING_ENTRIES), -EIO);
	KUNIT_EXPECT_EQ(test, vnpu_track_finished(t, U32_MAX), -EIO);
	vnpu_track_clear(t);
	KUNIT_EXPECT_EQ(test, t->head, 0u);
	KUNIT_EXPECT_EQ(test, t->tail, 0u);
	KUNIT_EXPECT_EQ(test, vnpu_track_used(t), 0u);
}

static void vnpu_track_test_harvest_rules(struct kunit *test)
{
	struct vnpu_ring_track *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u32 slot;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->head = 7;
	t->tail = 7;
	slot = vnpu_track_push(t, NULL, 42);
	/* With its record a job ran exactly once, guilty or not. */
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 42, true, false, slot),
			VNPU_HARVEST_RETIRE);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 42, false, false, VNPU_STARTED_ANY),
			VNPU_HARVEST_RETIRE);
	/* Without one (a stale record has another seq). */
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 42 - VNPU_RING_ENTRIES, true, false, slot),
			VNPU_HARVEST_BLAME);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, true, true, slot),
			VNPU_HARVEST_DMA_ERROR);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, false, false, slot),
			VNPU_HARVEST_ABORT);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, false, false, VNPU_STARTED_ANY),
			VNPU_HARVEST_ABORT);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, false, false, VNPU_STARTED_NONE),
			VNPU_HARVEST_REPLAY);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, false, false, slot + 1),
			VNPU_HARVEST_REPLAY);
	vnpu_track_clear(t);
	slot = vnpu_track_push(t, NULL, VNPU_SEQ_RAW | 3);
	KUNIT_EXPECT_EQ(test, vnpu_harvest_oldest(t, 0, false, false, slot),
			VNPU_HARVEST_RAW);
}

/*
 * A reset in the middle of a queue: two jobs finished, the third was on
 * the engine (guilty or innocent), three never started.  Every job ends
 * exactly once, and only unstarted ones run again.
 */
static void vnpu_track_test_reset_exactly_once(struct kunit *test)
{
	struct vnpu_test_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int guilty, i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	for (guilty = 0; guilty < 2; guilty++) {
		unsigned int count[VNPU_HARVEST_REPLAY + 1] = { 0 };
		int started;

		vnpu_track_clear(&r->t);
		memset(r->record, 0, sizeof(r->record));
		r->hw_head = 0;
		for (i = 0; i < 6; i++)
			vnpu_test_ring_push(r, i);
		vnpu_test_ring_run(r, 2);
		started = r->hw_head;
		while (r->t.head != r->t.tail) {
			enum vnpu_harvest v;
			u64 seq;

			v = vnpu_harvest_oldest(&r->t, r->record[r->t.head],
						guilty && (int)r->t.head == started,
						false, started);
			count[v]++;
			vnpu_track_pop(&r->t, &seq);
		}
		KUNIT_EXPECT_EQ(test, count[VNPU_HARVEST_RETIRE], 2u);
		KUNIT_EXPECT_EQ(test, count[VNPU_HARVEST_BLAME], guilty);
		KUNIT_EXPECT_EQ(test, count[VNPU_HARVEST_ABORT], 1 - guilty);
		KUNIT_EXPECT_EQ(test, count[VNPU_HARVEST_REPLAY], 3u);
		KUNIT_EXPECT_EQ(test, count[VNPU_HARVEST_RAW] + count[VNPU_HARVEST_DMA_ERROR], 0u);
	}
}

static void vnpu_track_test_ban(struct kunit *test)
{
	atomic_t faults = ATOMIC_INIT(0);
	int i;

	for (i = 1; i < VNPU_BAN_FAULTS; i++)
		KUNIT_EXPECT_FALSE(test, vnpu_fault_bans(&faults));
	KUNIT_EXPECT_TRUE(test, vnpu_fault_bans(&faults));
	KUNIT_EXPECT_TRUE(test, vnpu_fault_bans(&faults));

	KUNIT_EXPECT_EQ(test, vnpu_replay_verdict(false, false), VNPU_REPLAY_PUSH);
	KUNIT_EXPECT_EQ(test, vnpu_replay_verdict(false, true), VNPU_REPLAY_ABORT);
	KUNIT_EXPECT_EQ(test, vnpu_replay_verdict(true, false), VNPU_REPLAY_LOST);
	KUNIT_EXPECT_EQ(test, vnpu_replay_verdict(true, true), VNPU_REPLAY_LOST);
}

static struct kunit_case vnpu_track_cases[] = {
	KUNIT_CASE(vnpu_track_test_in_order),
	KUNIT_CASE(vnpu_track_test_wrap_order),
	KUNIT_CASE(vnpu_track_test_lost_irqs),
	KUNIT_CASE(vnpu_track_test_stale_record),
	KUNIT_CASE(vnpu_track_test_bad_head),
	KUNIT_CASE(vnpu_track_test_harvest_rules),
	KUNIT_CASE(vnpu_track_test_reset_exactly_once),
	KUNIT_CASE(vnpu_track_test_ban),
	{}
};

static struct kunit_suite vnpu_track_suite = {
	.name = "vnpu_track",
	.test_cases = vnpu_track_cases,
};

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
kunit_test_suites(&vnpu_pt_suite, &vnpu_check_suite, &vnpu_track_suite);
