// SPDX-License-Identifier: MIT
/*
 * Command buffer builder.  Every append checks what the device would
 * otherwise reject at run time (alignment, sizes, VA range, overlap), so a
 * bad argument fails at the call that made it instead of as a
 * CMD_ERROR/MMU fault of the job later.  Commands are encoded little-endian
 * as the hardware interface requires, independent of host byte order.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"

static uint32_t cmdbuf_va_bits(const struct npu_cmdbuf *cb)
{
	if (cb->ctx && cb->ctx->info.va_bits && cb->ctx->info.va_bits < 64)
		return cb->ctx->info.va_bits;
	return VNPU_VA_BITS;
}

/* [va, va + size) lies inside the device address space. */
static bool va_range_ok(const struct npu_cmdbuf *cb, uint64_t va,
			uint64_t size)
{
	uint64_t limit = 1ull << cmdbuf_va_bits(cb);

	return va < limit && size <= limit - va;
}

NPU_EXPORT int npu_cmdbuf_create(struct npu_context *ctx, size_t capacity,
				 struct npu_cmdbuf **out)
{
	uint64_t max = VNPU_CMD_MAX_BUFFER;
	struct npu_cmdbuf *cb;
	void *map;
	int ret;

	if (!out || !capacity)
		return -EINVAL;
	if (ctx && ctx->info.max_cmd_size && ctx->info.max_cmd_size < max)
		max = ctx->info.max_cmd_size;
	if (capacity > max)
		return -E2BIG;
	capacity = (capacity + 7) & ~(size_t)7;

	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->capacity = capacity;
	if (ctx) {
		/* The device only ever reads commands; a job cannot rewrite its own. */
		ret = npu_buffer_alloc(ctx, capacity, NPU_BUFFER_DEVICE_READONLY,
				       &cb->bo);
		if (ret)
			goto err;
		ret = npu_buffer_map(cb->bo, &map);
		if (ret)
			goto err;
		cb->data = map;
		cb->ctx = ctx;
		npu__context_get(ctx);
	} else {
		cb->data = calloc(1, capacity);
		if (!cb->data) {
			ret = -ENOMEM;
			goto err;
		}
	}
	*out = cb;
	return 0;
err:
	npu_buffer_free(cb->bo);
	free(cb);
	return ret;
}

NPU_EXPORT void npu_cmdbuf_destroy(struct npu_cmdbuf *cb)
{
	size_t i;

	if (!cb)
		return;
	/*
	 * No wait: a submitted job holds its own reference on the BO in the
	 * kernel, so the device keeps reading valid commands; only our
	 * mapping and handle go now.
	 */
	if (cb->ctx) {
		npu_buffer_free(cb->bo);
		npu__context_put(cb->ctx);
	} else {
		free(cb->data);
	}
	for (i = 0; i < cb->num_inflight; i++)
		npu__fence_put(cb->inflight[i]);
	free(cb->inflight);
	free(cb);
}

/*
 * Drop the fences of finished jobs; the first error reading one is
 * returned (its fence is kept).
 */
static int prune_inflight(struct npu_cmdbuf *cb)
{
	size_t i, n = 0;
	int ret, err = 0;

	for (i = 0; i < cb->num_inflight; i++) {
		ret = npu_fence_is_signaled(cb->inflight[i]);
		if (ret == 1) {
			npu__fence_put(cb->inflight[i]);
			continue;
		}
		if (ret < 0 && !err)
			err = ret;
		cb->inflight[n++] = cb->inflight[i];
	}
	cb->num_inflight = n;
	return err;
}

int npu__cmdbuf_track_prepare(struct npu_cmdbuf *cb)
{
	struct npu_fence **t;
	size_t cap;

	prune_inflight(cb);
	if (cb->num_inflight < cb->cap_inflight)
		return 0;
	cap = cb->cap_inflight ? 2 * cb->cap_inflight : 4;
	t = realloc(cb->inflight, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	cb->inflight = t;
	cb->cap_inflight = cap;
	return 0;
}

NPU_EXPORT int npu_cmdbuf_reset(struct npu_cmdbuf *cb)
{
	int ret;

	if (!cb)
		return -EINVAL;
	ret = prune_inflight(cb);
	if (ret)
		return ret;
	if (cb->num_inflight)
		return -EBUSY;
	cb->size = 0;
	return 0;
}

NPU_EXPORT size_t npu_cmdbuf_size(const struct npu_cmdbuf *cb)
{
	return cb ? cb->size : 0;
}

NPU_EXPORT size_t npu_cmdbuf_capacity(const struct npu_cmdbuf *cb)
{
	return cb ? cb->capacity : 0;
}

NPU_EXPORT const void *npu_cmdbuf_data(const struct npu_cmdbuf *cb)
{
	return cb ? cb->data : NULL;
}

/*
 * Room for one command of @size bytes with its header written, or NULL
 * when it does not fit.  The caller fills the body before anything else
 * can observe the buffer, so a failed append leaves no trace.
 */
static uint8_t *cmd_begin(struct npu_cmdbuf *cb, uint16_t opcode,
			  uint32_t size)
{
	struct vnpu_cmd_hdr hdr;
	uint8_t *p;

	if (size > cb->capacity - cb->size)
		return NULL;
	p = cb->data + cb->size;
	memset(p, 0, size);
	hdr.opcode = htole16(opcode);
	hdr.flags = 0;
	hdr.size = htole32(size);
	memcpy(p, &hdr, sizeof(hdr));
	cb->size += size;
	return p;
}

NPU_EXPORT int npu_cmdbuf_nop(struct npu_cmdbuf *cb, uint32_t size)
{
	if (!cb || size < sizeof(struct vnpu_cmd_hdr) || size % 8)
		return -EINVAL;
	return cmd_begin(cb, VNPU_CMD_NOP, size) ? 0 : -ENOSPC;
}

NPU_EXPORT int npu_cmdbuf_copy(struct npu_cmdbuf *cb, uint64_t dst_va,
			       uint64_t src_va, uint64_t size)
{
	struct vnpu_cmd_copy c;
	uint8_t *p;

	if (!cb || !size || !va_range_ok(cb, dst_va, size) ||
	    !va_range_ok(cb, src_va, size))
		return -EINVAL;
	/* The device copies forward with no overlap handling. */
	if (dst_va < src_va + size && src_va < dst_va + size)
		return -EINVAL;
	p = cmd_begin(cb, VNPU_CMD_COPY, sizeof(c));
	if (!p)
		return -ENOSPC;
	memcpy(&c, p, sizeof(c.hdr));
	c.src_va = htole64(src_va);
	c.dst_va = htole64(dst_va);
	c.size = htole64(size);
	memcpy(p, &c, sizeof(c));
	return 0;
}

NPU_EXPORT int npu_cmdbuf_fill(struct npu_cmdbuf *cb, uint64_t dst_va,
			       uint64_t size, uint32_t pattern)
{
	struct vnpu_cmd_fill c;
	uint8_t *p;

	if (!cb || !size || size % 4 || !va_range_ok(cb, dst_va, size))
		return -EINVAL;
	p = cmd_begin(cb, VNPU_CMD_FILL, sizeof(c));
	if (!p)
		return -ENOSPC;
	memcpy(&c, p, sizeof(c.hdr));
	c.dst_va = htole64(dst_va);
	c.size = htole64(size);
	c.pattern = htole32(pattern);
	c.reserved = 0;
	memcpy(p, &c, sizeof(c));
	return 0;
}

NPU_EXPORT int npu_cmdbuf_write_value(struct npu_cmdbuf *cb, uint64_t dst_va,
				      uint64_t value)
{
	struct vnpu_cmd_write_value c;
	uint8_t *p;

	if (!cb || dst_va % 8 || !va_range_ok(cb, dst_va, 8))
		return -EINVAL;
	p = cmd_begin(cb, VNPU_CMD_WRITE_VALUE, sizeof(c));
	if (!p)
		return -ENOSPC;
	memcpy(&c, p, sizeof(c.hdr));
	c.dst_va = htole64(dst_va);
	c.value = htole64(value);
	memcpy(p, &c, sizeof(c));
	return 0;
}

NPU_EXPORT int npu_cmdbuf_timestamp(struct npu_cmdbuf *cb, uint64_t dst_va)
{
	struct vnpu_cmd_timestamp c;
	uint8_t *p;

	if (!cb || dst_va % 8 || !va_range_ok(cb, dst_va, 8))
		return -EINVAL;
	p = cmd_begin(cb, VNPU_CMD_TIMESTAMP, sizeof(c));
	if (!p)
		return -ENOSPC;
	memcpy(&c, p, sizeof(c.hdr));
	c.dst_va = htole64(dst_va);
	memcpy(p, &c, sizeof(c));
	return 0;
}

NPU_EXPORT int npu_cmdbuf_barrier(struct npu_cmdbuf *cb)
{
	if (!cb)
		return -EINVAL;
	return cmd_begin(cb, VNPU_CMD_BARRIER, sizeof(struct vnpu_cmd_barrier)) ?
	       0 : -ENOSPC;
}

NPU_EXPORT int npu_cmdbuf_raw(struct npu_cmdbuf *cb, const void *cmd,
			      size_t size)
{
	struct vnpu_cmd_hdr hdr;
	uint16_t opcode;

	if (!cb || !cmd || size < sizeof(hdr) || size % 8 ||
	    size > VNPU_CMD_MAX_BUFFER)
		return -EINVAL;
	memcpy(&hdr, cmd, sizeof(hdr));
	opcode = le16toh(hdr.opcode);
	if (opcode < VNPU_CMD_COMPUTE_FIRST || opcode > VNPU_CMD_COMPUTE_LAST ||
	    hdr.flags || le32toh(hdr.size) != size)
		return -EINVAL;
	if (size > cb->capacity - cb->size)
		return -ENOSPC;
	memcpy(cb->data + cb->size, cmd, size);
	cb->size += size;
	return 0;
}
