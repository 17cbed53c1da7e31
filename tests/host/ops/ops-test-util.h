/* SPDX-License-Identifier: MIT */
/*
 * Host test helpers for the compute ops: a flat device memory behind
 * struct vnpu_mem_ops, a bump allocator of device VAs in it, and builders
 * for tensor descriptors.
 */
#ifndef OPS_TEST_UTIL_H
#define OPS_TEST_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_exec.h"
#include "vnpu_ref.h"

#define FLAT_BASE	0x100000ull

struct flat {
	uint8_t *mem;
	uint64_t size, next;
	bool allow_map;		/* false forces the read/write bounce path */
	unsigned int maps, reads, writes;
};

static inline bool flat_ok(struct flat *f, uint64_t va, uint64_t len)
{
	return va >= FLAT_BASE && va - FLAT_BASE <= f->size &&
	       len <= f->size - (va - FLAT_BASE);
}

static inline int flat_read(void *o, uint64_t va, void *buf, uint64_t len)
{
	struct flat *f = o;

	if (!flat_ok(f, va, len))
		return -EFAULT;
	memcpy(buf, f->mem + (va - FLAT_BASE), len);
	f->reads++;
	return 0;
}

static inline int flat_write(void *o, uint64_t va, const void *buf, uint64_t len)
{
	struct flat *f = o;

	if (!flat_ok(f, va, len))
		return -EFAULT;
	memcpy(f->mem + (va - FLAT_BASE), buf, len);
	f->writes++;
	return 0;
}

static inline void *flat_map(void *o, uint64_t va, uint64_t len, bool w)
{
	struct flat *f = o;

	(void)w;
	if (!f->allow_map || !flat_ok(f, va, len))
		return NULL;
	f->maps++;
	return f->mem + (va - FLAT_BASE);
}

static inline void flat_unmap(void *o, void *h, uint64_t len, bool w,
			      uint64_t al)
{
	struct flat *f = o;

	(void)h;
	(void)len;
	(void)w;
	(void)al;
	f->maps--;
}

static const struct vnpu_mem_ops flat_ops = {
	.read = flat_read, .write = flat_write,
	.map = flat_map, .unmap = flat_unmap,
};

static inline void flat_init(struct flat *f, uint64_t size)
{
	memset(f, 0, sizeof(*f));
	f->size = size;
	f->mem = calloc(1, size);
	f->allow_map = true;
}

static inline void flat_reset(struct flat *f)
{
	f->next = 0;
}

/* A device VA for @len bytes, 64-byte aligned; 0 when full. */
static inline uint64_t flat_alloc(struct flat *f, uint64_t len)
{
	uint64_t va = FLAT_BASE + f->next;

	len = (len + 63) & ~63ull;
	if (len > f->size - f->next)
		return 0;
	f->next += len;
	return va;
}

static inline void *flat_host(struct flat *f, uint64_t va)
{
	return f->mem + (va - FLAT_BASE);
}

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Dense descriptor of @rank dims. */
static inline struct vnpu_tensor_desc tdesc(uint8_t dt, int rank,
					    const uint32_t *dims)
{
	struct vnpu_tensor_desc d;
	int i;

	memset(&d, 0, sizeof(d));
	d.dtype = dt;
	d.rank = (uint8_t)rank;
	for (i = 0; i < rank; i++)
		d.dims[i] = dims[i];
	return d;
}

static inline void tquant(struct vnpu_tensor_desc *d, float scale, int32_t zp)
{
	d->quant = VNPU_QUANT_TENSOR;
	d->scale = f2u(scale);
	d->zero_point = zp;
}

/*
 * The placed 8-bit weights @d ([co][kh][kw][ci], dense or strided) made
 * 7-bit: each w - zw moved into [-64, 63] by its own low 7 bits, so the
 * values stay as random, and clamped to the type (towards zw, still in
 * range).  The engine's AVX2 int8 conv takes such weights with byte
 * products (vnpu_engine_conv.c, conv_i8_bytes()).
 */
static inline void narrow_weights(struct flat *f, const struct vnpu_tensor_desc *d)
{
	int32_t lo = d->dtype == VNPU_DT_INT8 ? -128 : 0;
	const uint8_t *zps = d->quant == VNPU_QUANT_CHANNEL ?
		(const uint8_t *)flat_host(f, d->quant_va) + 4 * d->dims[d->quant_axis] : NULL;
	uint8_t *base = flat_host(f, d->va);
	uint64_t st[4];
	uint32_t i[4];
	int k;

	st[3] = 1;
	for (k = 2; k >= 0; k--)
		st[k] = st[k + 1] * d->dims[k + 1];
	if (d->flags)
		for (k = 0; k < 4; k++)
			st[k] = d->strides[k];
	for (i[0] = 0; i[0] < d->dims[0]; i[0]++)
		for (i[1] = 0; i[1] < d->dims[1]; i[1]++)
			for (i[2] = 0; i[2] < d->dims[2]; i[2]++)
				for (i[3] = 0; i[3] < d->dims[3]; i[3]++) {
					uint8_t *p = base + i[0] * st[0] + i[1] * st[1] +
						     i[2] * st[2] + i[3] * st[3];
					int32_t zw = d->zero_point, v;

					if (zps)
						memcpy(&zw, zps + 4 * i[d->quant_axis], 4);
					v = zw + (*p & 127) - 64;
					v = v < lo ? lo : v > lo + 255 ? lo + 255 : v;
					*p = (uint8_t)v;
				}
}

static inline void cmd_init(struct vnpu_cmd_compute *c, uint16_t op)
{
	memset(c, 0, sizeof(*c));
	c->hdr.opcode = op;
	c->hdr.size = sizeof(*c);
}

/* Bind every present slot of a checked command to @f's host memory. */
static inline void flat_bind(struct flat *f, const struct vnpu_cmd_compute *c,
			     const struct vnpu_op_info *info,
			     struct vnpu_op_bind *b)
{
	int i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		b->data[i] = flat_host(f, c->t[i].va);
		if (c->t[i].quant == VNPU_QUANT_CHANNEL)
			b->qparams[i] = flat_host(f, c->t[i].quant_va);
	}
}

/* Run @c through the reference over @f's memory. */
static inline int flat_ref(struct flat *f, const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct vnpu_op_bind b;
	int ret = vnpu_op_check(c, sizeof(*c), &cc, &info);

	if (ret)
		return ret;
	flat_bind(f, &cc, &info, &b);
	return vnpu_ref_run(&cc, &b);
}

/*
 * The engine as the device runs it: with a scratch arena (so every test
 * also exercises the budgeted allocations) and the int8 kernel a test
 * selects.  @abort_after > 0 makes the abort callback say stop on its
 * Nth poll.
 */
struct flat_engine {
	struct vnpu_arena *arena;
	enum vnpu_i8_kernel i8_kernel;
	unsigned int polls, abort_after;
	struct vnpu_compute_result res;
};

static struct flat_engine flat_engine = { .i8_kernel = VNPU_I8_AUTO };

static inline bool flat_aborted(void *o)
{
	struct flat_engine *e = &flat_engine;

	(void)o;
	e->polls++;
	return e->abort_after && e->polls >= e->abort_after;
}

static const struct vnpu_mem_ops flat_ops_abortable = {
	.read = flat_read, .write = flat_write,
	.map = flat_map, .unmap = flat_unmap, .aborted = flat_aborted,
};

/* Scratch of the device's default size; address space only until used. */
#define FLAT_ARENA_BYTES	(512ull << 20)

/* vnpu_compute_exec() as a device engine calls it; cycles on success. */
static inline int flat_exec(struct flat *f, const void *c, uint32_t size,
			    uint64_t *cycles)
{
	struct vnpu_engine_cfg cfg;
	int ret;

	if (!flat_engine.arena) {
		flat_engine.arena = vnpu_arena_new(FLAT_ARENA_BYTES);
		if (!flat_engine.arena)
			abort();
	}
	cfg.arena = flat_engine.arena;
	cfg.i8_kernel = flat_engine.i8_kernel;
	flat_engine.polls = 0;
	ret = vnpu_compute_exec(c, size, &flat_ops_abortable, f, &cfg,
				&flat_engine.res);
	if (cycles)
		*cycles = flat_engine.res.cycles;
	return ret;
}

#endif /* OPS_TEST_UTIL_H */
