/* SPDX-License-Identifier: MIT */
/*
 * What the op API host tests share: a device address space without a
 * device (a flat arena and fake contexts and buffers), running encoded
 * commands with the reference over it, and input generators.  Static
 * functions in a header: each test program is one translation unit.
 */
#ifndef FAKE_DEV_H
#define FAKE_DEV_H

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu_internal.h"
#include "vnpu_ref.h"

/* ---- A device address space without a device ------------------------------ */

#define ARENA_VA	0x10000000ull
#define ARENA_SIZE	(1u << 20)

static uint8_t *arena;
static size_t arena_used;

static inline struct npu_context *fake_ctx(void)
{
	struct npu_context *ctx = calloc(1, sizeof(*ctx));

	assert_non_null(ctx);
	/* Never dropped to zero: nothing here may close a real fd. */
	atomic_init(&ctx->refs, 1000);
	ctx->fd = -1;
	ctx->info.caps = NPU_CAP_COMPUTE | NPU_CAP_MMU;
	pthread_mutex_init(&ctx->lock, NULL);
	return ctx;
}

/* A buffer carved from the arena, already "mapped" for the CPU path. */
static inline struct npu_buffer *fake_buf(struct npu_context *ctx, uint64_t size)
{
	struct npu_buffer *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	size = (size + 4095) & ~4095ull;
	assert_true(arena_used + size <= ARENA_SIZE);
	/* Never dropped to zero by the ops' references: the arena is ours. */
	atomic_init(&b->refs, 1000);
	b->ctx = ctx;
	b->size = size;
	b->va = ARENA_VA + arena_used;
	b->map = arena + arena_used;
	pthread_mutex_init(&b->map_lock, NULL);
	arena_used += size;
	return b;
}

static inline int setup(void **state)
{
	(void)state;
	arena = calloc(1, ARENA_SIZE);
	arena_used = 0;
	return arena ? 0 : -1;
}

static inline int teardown(void **state)
{
	(void)state;
	free(arena);
	return 0;
}

static inline void *at_va(uint64_t va)
{
	assert_true(va >= ARENA_VA && va < ARENA_VA + ARENA_SIZE);
	return arena + (va - ARENA_VA);
}

/* Run every compute command of @cb with the reference over the arena. */
static inline int exec_stream(const struct npu_cmdbuf *cb, unsigned int expect_op)
{
	const uint8_t *p = npu_cmdbuf_data(cb);
	size_t off = 0, size = npu_cmdbuf_size(cb);
	int n = 0;

	while (off < size) {
		struct vnpu_cmd_compute c;
		struct vnpu_op_info info;
		struct vnpu_op_bind bind;
		int i;

		assert_true(size - off >= sizeof(c));
		assert_int_equal(vnpu_op_check(p + off, sizeof(c), &c, &info), 0);
		assert_int_equal(c.hdr.opcode, expect_op);
		assert_int_equal(c.hdr.size, sizeof(c));
		memset(&bind, 0, sizeof(bind));
		for (i = 0; i < VNPU_OP_SLOTS; i++) {
			if (!((info.present >> i) & 1))
				continue;
			bind.data[i] = at_va(c.t[i].va);
			assert_true(c.t[i].va + info.span[i] <= ARENA_VA + ARENA_SIZE);
		}
		assert_int_equal(vnpu_ref_run(&c, &bind), 0);
		off += sizeof(c);
		n++;
	}
	return n;
}

static inline struct npu_tensor *tensor(enum npu_dtype dt, uint32_t rank,
				 const uint32_t *dims)
{
	struct npu_tensor *t = NULL;

	assert_int_equal(npu_tensor_create(dt, rank, dims, &t), 0);
	return t;
}

/* npu_tensor_span() of a tensor that has one. */
static inline uint64_t span_of(const struct npu_tensor *t)
{
	uint64_t span = 0;

	assert_int_equal(npu_tensor_span(t, &span), 0);
	return span;
}

static inline void fill_f32(float *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)((int)((i * 7919u + seed * 104729u) % 97) - 48) / 16.0f;
}

static inline void fill_u8(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u + seed) >> 7);
}

#endif /* FAKE_DEV_H */
