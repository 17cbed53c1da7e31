/* SPDX-License-Identifier: MIT */
/*
 * The input format of the engine fuzz target (fuzz-engine.c) and the
 * command builders it shares with the seed generator (gen-seeds.c).
 *
 * An input is a 24-byte header, the 576-byte compute command exactly as a
 * guest would write it, and up to FZ_DATA_MAX bytes of raw data; shorter
 * inputs are zero-padded.  The command's tensor VAs address a flat fake
 * device memory of FZ_MEM bytes at FZ_BASE.  Its contents come from a
 * PRNG seeded by the header (dtype-shaped values, or raw bytes), then the
 * trailing data is copied over it.
 */
#ifndef FUZZ_ENGINE_H
#define FUZZ_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vnpu_hw_ops.h"

#define FZ_BASE		0x100000ull
#define FZ_MEM		(1u << 20)
#define FZ_CMD		((uint32_t)sizeof(struct vnpu_cmd_compute))
#define FZ_HDR		24u
#define FZ_DATA_MAX	4096u
#define FZ_MAX_LEN	(FZ_HDR + FZ_CMD + FZ_DATA_MAX)

/* fz_hdr.mode */
#define FZ_M_BOUNCE	(1u << 0)	/* no map(): read/write bounce buffers */
#define FZ_M_RAW	(1u << 1)	/* memory holds raw PRNG bytes */
#define FZ_M_RAWQ	(1u << 2)	/* per-channel arrays too */

struct fz_hdr {
	uint8_t mode;		/* FZ_M_* */
	uint8_t kernel;		/* int8 kernel: value % 4 - 1 (-1 = auto) */
	uint8_t abort_after;	/* abort callback says stop on this poll, 0 never
				 * (past the work budget: on poll 1 if 0, else
				 * on poll (this - 1) % 4 + 1) */
	uint8_t misalign;	/* command bytes at this offset % 64 of a buffer */
	uint32_t size;		/* size given to vnpu_compute_exec(): 576 if 0,
				 * else this % 2048 */
	uint64_t seed;		/* memory contents PRNG */
	uint32_t data_off;	/* trailing data lands at this offset % FZ_MEM */
	uint8_t arena;		/* scratch: FZ_ARENA_* in bits 7:6 */
	uint8_t reserved[3];
};

/*
 * Where the engine's scratch comes from.  MALLOC: no arena, so every
 * scratch buffer is a heap block ASan guards and LeakSanitizer accounts
 * (commands past the work budget use the device's arena instead).
 * DEVICE: an arena of the device's kind.  SMALL (bit 7): an arena of
 * fz_arena_cap() bytes, to run out of scratch at every allocation.
 */
#define FZ_ARENA_MALLOC	0x00
#define FZ_ARENA_DEVICE	0x40
#define FZ_ARENA_SMALL	0x80

/* 256 B .. 64 MiB: (1 + bits 3:0) << (8 + 2 * bits 6:4). */
static inline uint32_t fz_arena_cap(uint8_t a)
{
	return (1u + (a & 15u)) << (8 + 2 * ((a >> 4) & 7u));
}

_Static_assert(sizeof(struct fz_hdr) == FZ_HDR, "fuzz header");

/* ---- PRNG (splitmix64) ------------------------------------------------ */

static inline uint64_t fz_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t fz_rnd(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)((fz_next(s) >> 32) % n) : 0;
}

static inline float fz_rndf(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)fz_rnd(s, 1u << 24) / (float)(1u << 24);
}

static inline uint32_t fz_f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* ---- Descriptor helpers ----------------------------------------------- */

static inline uint32_t fz_esize(unsigned int dt)
{
	switch (dt) {
	case VNPU_DT_FP32:
	case VNPU_DT_INT32:
		return 4;
	case VNPU_DT_FP16:
	case VNPU_DT_BF16:
		return 2;
	case VNPU_DT_INT8:
	case VNPU_DT_UINT8:
		return 1;
	default:
		return 0;
	}
}

static inline bool fz_is_float(unsigned int dt)
{
	return dt == VNPU_DT_FP32 || dt == VNPU_DT_FP16 || dt == VNPU_DT_BF16;
}

static inline bool fz_is_q8(unsigned int dt)
{
	return dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8;
}

static inline bool fz_present(const struct vnpu_tensor_desc *d)
{
	static const struct vnpu_tensor_desc zero;

	return memcmp(d, &zero, sizeof(zero)) != 0;
}

/* Bytes @d spans from its va (saturating; 0 for a nonsense rank/dtype). */
static inline uint64_t fz_span(const struct vnpu_tensor_desc *d)
{
	uint64_t es = fz_esize(d->dtype), last = 0, elems = 1, t;
	int i;

	if (!es || d->rank < 1 || d->rank > VNPU_MAX_RANK)
		return 0;
	for (i = 0; i < d->rank; i++) {
		if (!d->dims[i])
			return 0;
		if (d->flags & VNPU_TENSOR_STRIDED) {
			if (__builtin_mul_overflow((uint64_t)(d->dims[i] - 1),
						   d->strides[i], &t) ||
			    __builtin_add_overflow(last, t, &last))
				return UINT64_MAX;
		} else if (__builtin_mul_overflow(elems, d->dims[i], &elems)) {
			return UINT64_MAX;
		}
	}
	if (!(d->flags & VNPU_TENSOR_STRIDED))
		last = elems - 1;
	if (__builtin_mul_overflow(last + 1, es, &t))
		return UINT64_MAX;
	return t;
}

static inline void fz_desc(struct vnpu_tensor_desc *d, uint8_t dt, int rank,
			   const uint32_t *dims)
{
	int i;

	memset(d, 0, sizeof(*d));
	d->dtype = dt;
	d->rank = (uint8_t)rank;
	for (i = 0; i < rank; i++)
		d->dims[i] = dims[i];
}

/* Make @d's quantization fields agree with its dtype. */
static inline void fz_fix_quant(struct vnpu_tensor_desc *d, uint64_t *r,
				bool channel_ok)
{
	float s;

	if (fz_is_q8(d->dtype)) {
		if (channel_ok && d->quant == VNPU_QUANT_CHANNEL &&
		    d->quant_axis < d->rank) {
			d->scale = 0;
			d->zero_point = 0;
			return;
		}
		d->quant = VNPU_QUANT_TENSOR;
		d->quant_axis = 0;
		d->quant_va = 0;
		memcpy(&s, &d->scale, 4);
		if (!(s > 0.0f) || !(s < 1e30f))
			d->scale = fz_f2u(fz_rndf(r, 0.002f, 0.05f));
		if (d->dtype == VNPU_DT_INT8 &&
		    (d->zero_point < -128 || d->zero_point > 127))
			d->zero_point = (int32_t)fz_rnd(r, 256) - 128;
		if (d->dtype == VNPU_DT_UINT8 &&
		    (d->zero_point < 0 || d->zero_point > 255))
			d->zero_point = (int32_t)fz_rnd(r, 256);
	} else {
		d->quant = VNPU_QUANT_NONE;
		d->quant_axis = 0;
		d->scale = 0;
		d->zero_point = 0;
		d->quant_va = 0;
	}
}

/*
 * Give a strided tensor (or, now and then, a dense one) strides: dense
 * order with small gaps, sometimes a permuted order, and on inputs
 * sometimes a zero (broadcast) stride.
 */
static inline void fz_restride(struct vnpu_tensor_desc *d, uint64_t *r,
			       bool output)
{
	int order[VNPU_MAX_RANK], i, j, t;
	uint64_t st = 1;

	if (!(d->flags & VNPU_TENSOR_STRIDED) && fz_rnd(r, 4))
		return;
	if (d->rank < 1 || d->rank > VNPU_MAX_RANK)
		return;
	d->flags = VNPU_TENSOR_STRIDED;
	memset(d->strides, 0, sizeof(d->strides));
	for (i = 0; i < d->rank; i++)
		order[i] = d->rank - 1 - i;	/* innermost first */
	if (fz_rnd(r, 4) == 0)
		for (i = d->rank - 1; i > 0; i--) {
			j = (int)fz_rnd(r, (uint32_t)i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	for (i = 0; i < d->rank; i++) {
		int k = order[i];

		d->strides[k] = st;
		st = st * (d->dims[k] ? d->dims[k] : 1) + fz_rnd(r, 3);
		if (st > (1ull << 40))
			st = 1ull << 40;
	}
	if (!output && fz_rnd(r, 6) == 0)
		d->strides[fz_rnd(r, d->rank)] = 0;
	if (fz_rnd(r, 4) == 0)
		for (i = 0; i < d->rank; i++)
			if (d->dims[i] == 1)
				d->strides[i] = 0;
}

/*
 * Lay the present operands (and per-channel arrays) out in the fake
 * memory: in order, aligned, with small gaps.  Now and then the output
 * overlaps an input, which the device must survive too.
 */
static inline void fz_layout(struct vnpu_cmd_compute *c, uint64_t *r)
{
	uint64_t cur = 64 * fz_rnd(r, 64);
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		struct vnpu_tensor_desc *d = &c->t[i];
		uint64_t span, es, q;

		if (!fz_present(d))
			continue;
		es = fz_esize(d->dtype) ? fz_esize(d->dtype) : 1;
		fz_restride(d, r, i == VNPU_OP_SLOT_OUT);
		span = fz_span(d);
		if (span > FZ_MEM)
			span = FZ_MEM;
		cur = fz_rnd(r, 4) ? (cur + 63) & ~63ull : (cur + es - 1) / es * es;
		d->va = FZ_BASE + cur;
		cur += span + fz_rnd(r, 3) * es;
		if (d->quant == VNPU_QUANT_CHANNEL && d->quant_axis < VNPU_MAX_RANK) {
			q = 8ull * d->dims[d->quant_axis];
			if (q > FZ_MEM)
				q = FZ_MEM;
			cur = (cur + 3) & ~3ull;
			d->quant_va = FZ_BASE + cur;
			cur += q;
		}
	}
	if (fz_present(&c->t[3]) && fz_rnd(r, 16) == 0) {
		i = (int)fz_rnd(r, 3);
		if (fz_present(&c->t[i]))
			c->t[3].va = c->t[i].va & ~3ull;
	}
}

/* Broadcast @a against @b into @y (right-aligned numpy rules). */
static inline int fz_bcast(const struct vnpu_tensor_desc *a,
			   struct vnpu_tensor_desc *b, uint32_t *y)
{
	int r = a->rank > b->rank ? a->rank : b->rank, i;

	for (i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		uint32_t da = ia >= 0 ? a->dims[ia] : 1;
		uint32_t db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			b->dims[ib] = db = 1;
		y[i] = da > db ? da : db;
	}
	return r;
}

static inline uint32_t fz_win_out(uint32_t in, uint32_t pa, uint32_t pb,
				  uint32_t kd, uint32_t dil, uint32_t stride)
{
	uint64_t ext = (uint64_t)in + pa + pb;
	uint64_t ek = (uint64_t)(kd - 1) * dil + 1;

	if (!kd || !dil || !stride || ek > ext)
		return 0;
	return (uint32_t)((ext - ek) / stride + 1);
}

static inline void fz_set_rank(struct vnpu_tensor_desc *d, int rank)
{
	int i;

	if (d->rank == rank)
		return;
	for (i = 0; i < VNPU_MAX_RANK; i++) {
		if (i >= rank) {
			d->dims[i] = 0;
			d->strides[i] = 0;
		} else if (!d->dims[i]) {
			d->dims[i] = 1;
		}
	}
	d->rank = (uint8_t)rank;
	if (d->quant_axis >= rank)
		d->quant_axis = 0;
}

/*
 * A bias of @n channels: [n], or for a float one already of rank 2 the
 * per-channel scale and shift [2, n].
 */
static inline void fz_fix_bias(struct vnpu_tensor_desc *bias, uint32_t n)
{
	bool affine = bias->rank == 2 && bias->dtype != VNPU_DT_INT32;

	fz_set_rank(bias, affine ? 2 : 1);
	bias->dims[0] = affine ? 2 : n;
	if (affine)
		bias->dims[1] = n;
}

/*
 * Derive the dependent shapes of a command from its inputs' shapes
 * (output, bias, gamma/beta, the K of B), so that a mutated input dim
 * still gives a command the device accepts most of the time.
 */
static inline void fz_fix_shapes(struct vnpu_cmd_compute *c, uint64_t *r)
{
	struct vnpu_tensor_desc *a = &c->t[0], *b = &c->t[1], *bias = &c->t[2];
	struct vnpu_tensor_desc *y = &c->t[3];
	uint32_t yd[VNPU_MAX_RANK];
	int i, ry;

	if (a->rank < 1 || a->rank > VNPU_MAX_RANK)
		fz_set_rank(a, 1 + (int)fz_rnd(r, 4));
	for (i = 0; i < a->rank; i++)
		if (!a->dims[i])
			a->dims[i] = 1;
	switch (c->hdr.opcode) {
	case VNPU_OP_GEMM: {
		bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;
		bool tb = c->attr.gemm.flags & VNPU_GEMM_TRANS_B;
		uint32_t m, k, n;

		if (a->rank < 2)
			fz_set_rank(a, 2);
		if (b->rank < 2 || b->rank > VNPU_MAX_RANK)
			fz_set_rank(b, 2);
		for (i = 0; i < b->rank; i++)
			if (!b->dims[i])
				b->dims[i] = 1;
		m = a->dims[a->rank - (ta ? 1 : 2)];
		k = a->dims[a->rank - (ta ? 2 : 1)];
		b->dims[b->rank - (tb ? 1 : 2)] = k;
		n = b->dims[b->rank - (tb ? 2 : 1)];
		ry = a->rank > b->rank ? a->rank : b->rank;
		for (i = 0; i < ry - 2; i++) {
			int ia = i - (ry - a->rank), ib = i - (ry - b->rank);
			uint32_t da = ia >= 0 ? a->dims[ia] : 1;
			uint32_t db = ib >= 0 ? b->dims[ib] : 1;

			if (da != db && da != 1 && db != 1)
				b->dims[ib] = db = 1;
			yd[i] = da > db ? da : db;
		}
		yd[ry - 2] = m;
		yd[ry - 1] = n;
		fz_set_rank(y, ry);
		memcpy(y->dims, yd, 4u * (uint32_t)ry);
		if (fz_present(bias))
			fz_fix_bias(bias, n);
		if (y->quant == VNPU_QUANT_CHANNEL)
			y->quant_axis = (uint8_t)(ry - 1);
		if (b->quant == VNPU_QUANT_CHANNEL)
			b->quant_axis = (uint8_t)(b->rank - (tb ? 2 : 1));
		break;
	}
	case VNPU_OP_CONV2D: {
		struct vnpu_attr_conv2d *at = &c->attr.conv;
		uint32_t g, ci, co, oh, ow;

		fz_set_rank(a, 4);
		fz_set_rank(b, 4);
		fz_set_rank(y, 4);
		for (i = 0; i < 4; i++)
			if (!b->dims[i])
				b->dims[i] = 1;
		if (!at->groups || at->groups > 4096)
			at->groups = 1;
		g = at->groups;
		ci = a->dims[3] / g ? a->dims[3] / g : 1;
		a->dims[3] = ci * g;
		co = b->dims[0] / g ? b->dims[0] / g : 1;
		b->dims[0] = co * g;
		b->dims[3] = ci;
		if (!at->stride_h)
			at->stride_h = 1;
		if (!at->stride_w)
			at->stride_w = 1;
		if (!at->dilation_h)
			at->dilation_h = 1;
		if (!at->dilation_w)
			at->dilation_w = 1;
		if (!fz_win_out(a->dims[1], at->pad_top, at->pad_bottom,
				b->dims[1], at->dilation_h, at->stride_h))
			at->pad_bottom += b->dims[1] * at->dilation_h;
		if (!fz_win_out(a->dims[2], at->pad_left, at->pad_right,
				b->dims[2], at->dilation_w, at->stride_w))
			at->pad_right += b->dims[2] * at->dilation_w;
		oh = fz_win_out(a->dims[1], at->pad_top, at->pad_bottom,
				b->dims[1], at->dilation_h, at->stride_h);
		ow = fz_win_out(a->dims[2], at->pad_left, at->pad_right,
				b->dims[2], at->dilation_w, at->stride_w);
		y->dims[0] = a->dims[0];
		y->dims[1] = oh ? oh : 1;
		y->dims[2] = ow ? ow : 1;
		y->dims[3] = b->dims[0];
		if (fz_present(bias))
			fz_fix_bias(bias, b->dims[0]);
		if (y->quant == VNPU_QUANT_CHANNEL)
			y->quant_axis = 3;
		if (b->quant == VNPU_QUANT_CHANNEL)
			b->quant_axis = 0;
		break;
	}
	case VNPU_OP_POOL2D: {
		struct vnpu_attr_pool2d *at = &c->attr.pool;
		uint32_t dh, dw, ekh, ekw;

		fz_set_rank(a, 4);
		fz_set_rank(y, 4);
		y->dims[0] = a->dims[0];
		y->dims[3] = a->dims[3];
		if (at->kind == VNPU_POOL_GLOBAL_AVG) {
			y->dims[1] = y->dims[2] = 1;
			break;
		}
		if (!at->kernel_h || at->kernel_h > a->dims[1])
			at->kernel_h = 1 + fz_rnd(r, a->dims[1] < 4 ? a->dims[1] : 4);
		if (!at->kernel_w || at->kernel_w > a->dims[2])
			at->kernel_w = 1 + fz_rnd(r, a->dims[2] < 4 ? a->dims[2] : 4);
		if (!at->stride_h)
			at->stride_h = 1;
		if (!at->stride_w)
			at->stride_w = 1;
		dh = at->dilation_h ? at->dilation_h : 1;
		dw = at->dilation_w ? at->dilation_w : 1;
		if ((uint64_t)(at->kernel_h - 1) * dh + 1 > a->dims[1])
			at->dilation_h = dh = 1;
		if ((uint64_t)(at->kernel_w - 1) * dw + 1 > a->dims[2])
			at->dilation_w = dw = 1;
		ekh = (at->kernel_h - 1) * dh + 1;
		ekw = (at->kernel_w - 1) * dw + 1;
		at->pad_top %= ekh;
		at->pad_bottom %= ekh;
		at->pad_left %= ekw;
		at->pad_right %= ekw;
		y->dims[1] = fz_win_out(a->dims[1], at->pad_top, at->pad_bottom,
					at->kernel_h, dh, at->stride_h);
		y->dims[2] = fz_win_out(a->dims[2], at->pad_left, at->pad_right,
					at->kernel_w, dw, at->stride_w);
		if (!y->dims[1])
			y->dims[1] = 1;
		if (!y->dims[2])
			y->dims[2] = 1;
		break;
	}
	case VNPU_OP_CONV_TRANSPOSE: {
		struct vnpu_attr_conv_transpose *at = &c->attr.convt;
		uint64_t fh, fw;

		fz_set_rank(a, 4);
		fz_set_rank(b, 4);
		fz_set_rank(y, 4);
		for (i = 0; i < 4; i++)
			if (!b->dims[i])
				b->dims[i] = 1;
		if (!at->groups || at->groups > 64 || a->dims[3] % at->groups)
			at->groups = 1;
		b->dims[0] = a->dims[3];
		if (!at->stride_h)
			at->stride_h = 1;
		if (!at->stride_w)
			at->stride_w = 1;
		if (!at->dilation_h)
			at->dilation_h = 1;
		if (!at->dilation_w)
			at->dilation_w = 1;
		at->out_pad_h %= at->stride_h > at->dilation_h ? at->stride_h : at->dilation_h;
		at->out_pad_w %= at->stride_w > at->dilation_w ? at->stride_w : at->dilation_w;
		fh = (uint64_t)(a->dims[1] - 1) * at->stride_h +
		     (uint64_t)(b->dims[1] - 1) * at->dilation_h + 1 + at->out_pad_h;
		fw = (uint64_t)(a->dims[2] - 1) * at->stride_w +
		     (uint64_t)(b->dims[2] - 1) * at->dilation_w + 1 + at->out_pad_w;
		if ((uint64_t)at->pad_top + at->pad_bottom >= fh)
			at->pad_top = at->pad_bottom = 0;
		if ((uint64_t)at->pad_left + at->pad_right >= fw)
			at->pad_left = at->pad_right = 0;
		y->dims[0] = a->dims[0];
		y->dims[1] = (uint32_t)(fh - at->pad_top - at->pad_bottom);
		y->dims[2] = (uint32_t)(fw - at->pad_left - at->pad_right);
		y->dims[3] = b->dims[3] * at->groups;
		if (fz_present(bias))
			fz_fix_bias(bias, y->dims[3]);
		if (b->quant == VNPU_QUANT_CHANNEL)
			b->quant_axis = 3;
		break;
	}
	case VNPU_OP_REDUCE:
		fz_set_rank(y, a->rank);
		c->attr.reduce.axes &= (1u << a->rank) - 1;
		if (!c->attr.reduce.axes)
			c->attr.reduce.axes = 1;
		for (i = 0; i < a->rank; i++)
			y->dims[i] = (c->attr.reduce.axes >> i) & 1 ? 1 : a->dims[i];
		break;
	case VNPU_OP_ELTWISE:
		if (b->rank < 1 || b->rank > VNPU_MAX_RANK)
			fz_set_rank(b, 1);
		for (i = 0; i < b->rank; i++)
			if (!b->dims[i])
				b->dims[i] = 1;
		ry = fz_bcast(a, b, yd);
		fz_set_rank(y, ry);
		memcpy(y->dims, yd, 4u * (uint32_t)ry);
		break;
	case VNPU_OP_RESIZE:
		/* N and C follow X, the resized H and W are free. */
		fz_set_rank(a, 4);
		fz_set_rank(y, 4);
		y->dims[0] = a->dims[0];
		y->dims[3] = a->dims[3];
		for (i = 1; i <= 2; i++)
			if (!y->dims[i])
				y->dims[i] = a->dims[i];
		break;
	case VNPU_OP_COPY:
		/* Y's extents are free: only its rank follows X. */
		fz_set_rank(y, a->rank);
		for (i = 0; i < y->rank; i++)
			if (!y->dims[i])
				y->dims[i] = a->dims[i];
		break;
	default:
		fz_set_rank(y, a->rank);
		memcpy(y->dims, a->dims, sizeof(y->dims));
		if (c->hdr.opcode == VNPU_OP_SOFTMAX)
			c->attr.softmax.axis %= a->rank;
		if (c->hdr.opcode == VNPU_OP_LAYERNORM) {
			uint32_t ax = c->attr.layernorm.axis % a->rank;

			c->attr.layernorm.axis = ax;
			for (i = 1; i <= 2; i++) {
				struct vnpu_tensor_desc *g = &c->t[i];

				if (!fz_present(g))
					continue;
				fz_set_rank(g, a->rank - (int)ax);
				memcpy(g->dims, a->dims + ax, 4u * (a->rank - ax));
			}
		}
		/* ACTIVATION's scale/shift: per channel of X's last dim. */
		if (c->hdr.opcode == VNPU_OP_ACTIVATION && fz_present(&c->t[1])) {
			struct vnpu_tensor_desc *p = &c->t[1];

			fz_set_rank(p, 2);
			p->dims[0] = 2;
			p->dims[1] = a->dims[a->rank - 1] <= VNPU_LIMIT_CHANNELS ?
				     a->dims[a->rank - 1] : 1;
		}
		break;
	}
}

/* ---- Generator of well-formed commands -------------------------------- */

static const uint8_t fz_float_dts[] = {
	VNPU_DT_FP32, VNPU_DT_FP32, VNPU_DT_FP16, VNPU_DT_BF16
};

static inline uint8_t fz_q8(uint64_t *r)
{
	return fz_rnd(r, 2) ? VNPU_DT_INT8 : VNPU_DT_UINT8;
}

static inline uint8_t fz_fdt(uint64_t *r)
{
	return fz_float_dts[fz_rnd(r, 4)];
}

static inline void fz_tquant(struct vnpu_tensor_desc *d, uint64_t *r)
{
	int32_t lo = d->dtype == VNPU_DT_INT8 ? -128 : 0;

	d->quant = VNPU_QUANT_TENSOR;
	d->scale = fz_f2u(fz_rndf(r, 0.002f, 0.05f));
	switch (fz_rnd(r, 4)) {
	case 0:
		d->zero_point = lo;
		break;
	case 1:
		d->zero_point = lo + 255;
		break;
	default:
		d->zero_point = lo + (int32_t)fz_rnd(r, 256);
	}
}

static inline void fz_act(struct vnpu_cmd_compute *c, uint64_t *r, bool int_out)
{
	/* The fused activations: all below CLIP, HARD_SIGMOID, HARD_SWISH. */
	uint32_t a = fz_rnd(r, VNPU_ACT_CLIP + 2);

	c->act = int_out ? 0 : (uint8_t)(a < VNPU_ACT_CLIP ? a : a + 1);
	if (c->act == VNPU_ACT_LEAKY_RELU)
		c->act_alpha = fz_f2u(fz_rndf(r, 0.0f, 0.3f));
	if (c->act == VNPU_ACT_HARD_SIGMOID) {
		c->act_alpha = fz_f2u(fz_rndf(r, -1.0f, 1.0f));
		c->attr.raw[VNPU_ACT_BETA_WORD] = fz_f2u(fz_rndf(r, -1.0f, 2.0f));
	}
	c->round = (uint8_t)fz_rnd(r, 2);
}

static inline int fz_shape(uint64_t *r, uint32_t *d, uint32_t maxd)
{
	int rk = 1 + (int)fz_rnd(r, 4), i;

	for (i = 0; i < rk; i++)
		d[i] = 1 + fz_rnd(r, maxd);
	return rk;
}

/*
 * A random well-formed command of opcode @op with small shapes (the kind
 * tests/host/ops/test-ops-diff.c runs), its operands laid out in the fake
 * memory.  @big: larger GEMM/CONV shapes (past the abort poll interval).
 */
static inline void fz_gen(struct vnpu_cmd_compute *c, uint64_t *r,
			  unsigned int op, bool big)
{
	uint32_t da[VNPU_MAX_RANK], db[VNPU_MAX_RANK], n1 = 1;
	/* A float bias or, as often, a scale/shift: shapes set by fz_fix_bias(). */
	const uint32_t nb2[2] = { 1, 1 };
	bool quant = fz_rnd(r, 2);
	int rk, i;

	memset(c, 0, sizeof(*c));
	c->hdr.opcode = (uint16_t)op;
	c->hdr.size = FZ_CMD;
	switch (op) {
	case VNPU_OP_GEMM: {
		uint32_t m = 1 + fz_rnd(r, big ? 200 : 20), k = 1 + fz_rnd(r, big ? 400 : 40);
		uint32_t n = 1 + fz_rnd(r, big ? 160 : 40);
		bool ta = fz_rnd(r, 2), tb = fz_rnd(r, 2);
		int nb = big ? 0 : (int)fz_rnd(r, 3);

		c->attr.gemm.flags = (ta ? VNPU_GEMM_TRANS_A : 0) | (tb ? VNPU_GEMM_TRANS_B : 0);
		for (i = 0; i < nb; i++)
			da[i] = db[i] = 1 + fz_rnd(r, 3);
		da[nb] = ta ? k : m;
		da[nb + 1] = ta ? m : k;
		db[nb] = tb ? n : k;
		db[nb + 1] = tb ? k : n;
		if (quant) {
			fz_desc(&c->t[0], fz_q8(r), nb + 2, da);
			fz_desc(&c->t[1], fz_q8(r), nb + 2, db);
			fz_tquant(&c->t[0], r);
			if (fz_rnd(r, 2)) {
				c->t[1].quant = VNPU_QUANT_CHANNEL;
			} else {
				fz_tquant(&c->t[1], r);
			}
			switch (fz_rnd(r, 6)) {
			case 0:
				c->t[3].dtype = VNPU_DT_INT32;
				break;
			case 1:
				c->t[3].dtype = VNPU_DT_FP32;
				break;
			default:
				c->t[3].dtype = fz_q8(r);
				if (fz_rnd(r, 4) == 0)
					c->t[3].quant = VNPU_QUANT_CHANNEL;
				else
					fz_tquant(&c->t[3], r);
			}
			fz_act(c, r, c->t[3].dtype == VNPU_DT_INT32);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], VNPU_DT_INT32, 1, &n1);
		} else {
			fz_desc(&c->t[0], fz_fdt(r), nb + 2, da);
			fz_desc(&c->t[1], fz_fdt(r), nb + 2, db);
			c->t[3].dtype = fz_fdt(r);
			if (fz_rnd(r, 6) == 0) {
				c->t[3].dtype = fz_q8(r);
				fz_tquant(&c->t[3], r);
			}
			fz_act(c, r, false);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], fz_fdt(r), 1 + fz_rnd(r, 2), nb2);
		}
		c->t[3].rank = (uint8_t)(nb + 2);
		break;
	}
	case VNPU_OP_CONV2D: {
		struct vnpu_attr_conv2d *at = &c->attr.conv;
		uint32_t g, cig, cog;

		switch (fz_rnd(r, 4)) {
		case 0:		/* depthwise, channel multiplier 1 or 2 */
			cig = 1;
			g = 1 + fz_rnd(r, big ? 64 : 12);
			cog = 1 + fz_rnd(r, 2);
			break;
		case 1:
			g = 2 + fz_rnd(r, 2);
			cig = 1 + fz_rnd(r, 5);
			cog = 1 + fz_rnd(r, 10);
			break;
		default:
			g = 1;
			cig = 1 + fz_rnd(r, big ? 64 : 20);
			cog = 1 + fz_rnd(r, big ? 64 : 40);
		}
		da[0] = 1 + fz_rnd(r, 2);
		da[1] = 1 + fz_rnd(r, big ? 24 : 10);
		da[2] = 1 + fz_rnd(r, big ? 24 : 10);
		da[3] = g * cig;
		db[0] = g * cog;
		db[1] = 1 + fz_rnd(r, 4);
		db[2] = 1 + fz_rnd(r, 4);
		db[3] = cig;
		at->groups = g;
		at->stride_h = 1 + fz_rnd(r, 3);
		at->stride_w = 1 + fz_rnd(r, 3);
		at->dilation_h = 1 + fz_rnd(r, 2);
		at->dilation_w = 1 + fz_rnd(r, 2);
		at->pad_top = fz_rnd(r, 4);
		at->pad_bottom = fz_rnd(r, 4);
		at->pad_left = fz_rnd(r, 4);
		at->pad_right = fz_rnd(r, 4);
		if (fz_rnd(r, 6) == 0) {	/* pointwise: a plain GEMM on X */
			db[1] = db[2] = 1;
			at->stride_h = at->stride_w = 1;
			at->pad_top = at->pad_bottom = at->pad_left = at->pad_right = 0;
		}
		if (quant) {
			fz_desc(&c->t[0], fz_q8(r), 4, da);
			fz_desc(&c->t[1], fz_q8(r), 4, db);
			fz_tquant(&c->t[0], r);
			if (fz_rnd(r, 2))
				c->t[1].quant = VNPU_QUANT_CHANNEL;
			else
				fz_tquant(&c->t[1], r);
			if (fz_rnd(r, 8) == 0) {
				c->t[3].dtype = VNPU_DT_INT32;
			} else {
				c->t[3].dtype = fz_q8(r);
				if (fz_rnd(r, 4) == 0)
					c->t[3].quant = VNPU_QUANT_CHANNEL;
				else
					fz_tquant(&c->t[3], r);
			}
			fz_act(c, r, c->t[3].dtype == VNPU_DT_INT32);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], VNPU_DT_INT32, 1, &n1);
		} else {
			fz_desc(&c->t[0], fz_fdt(r), 4, da);
			fz_desc(&c->t[1], fz_fdt(r), 4, db);
			c->t[3].dtype = fz_fdt(r);
			fz_act(c, r, false);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], VNPU_DT_FP32, 1 + fz_rnd(r, 2), nb2);
		}
		c->t[3].rank = 4;
		break;
	}
	case VNPU_OP_POOL2D: {
		struct vnpu_attr_pool2d *at = &c->attr.pool;

		da[0] = 1 + fz_rnd(r, 2);
		da[1] = 1 + fz_rnd(r, 9);
		da[2] = 1 + fz_rnd(r, 9);
		da[3] = 1 + fz_rnd(r, 8);
		at->kind = fz_rnd(r, 3);
		if (at->kind != VNPU_POOL_GLOBAL_AVG) {
			at->kernel_h = 1 + fz_rnd(r, 4);
			at->kernel_w = 1 + fz_rnd(r, 4);
			at->stride_h = 1 + fz_rnd(r, 3);
			at->stride_w = 1 + fz_rnd(r, 3);
			at->dilation_h = fz_rnd(r, 3);
			at->dilation_w = fz_rnd(r, 3);
			at->pad_top = fz_rnd(r, 3);
			at->pad_bottom = fz_rnd(r, 3);
			at->pad_left = fz_rnd(r, 3);
			at->pad_right = fz_rnd(r, 3);
			if (at->kind == VNPU_POOL_AVG && fz_rnd(r, 2))
				at->flags = VNPU_POOL_COUNT_INCLUDE_PAD;
		}
		if (fz_rnd(r, 3) == 0) {
			fz_desc(&c->t[0], fz_q8(r), 4, da);
			fz_tquant(&c->t[0], r);
		} else {
			fz_desc(&c->t[0], fz_fdt(r), 4, da);
		}
		c->t[3].dtype = fz_fdt(r);
		if (fz_rnd(r, 3) == 0) {
			c->t[3].dtype = fz_q8(r);
			fz_tquant(&c->t[3], r);
		}
		c->t[3].rank = 4;
		c->round = (uint8_t)fz_rnd(r, 2);
		break;
	}
	case VNPU_OP_CONV_TRANSPOSE: {
		struct vnpu_attr_conv_transpose *at = &c->attr.convt;
		uint32_t g = 1 + fz_rnd(r, 3), cig = 1 + fz_rnd(r, big ? 32 : 6);

		da[0] = 1 + fz_rnd(r, 2);
		da[1] = 1 + fz_rnd(r, big ? 16 : 6);
		da[2] = 1 + fz_rnd(r, big ? 16 : 6);
		da[3] = g * cig;
		db[0] = g * cig;
		db[1] = 1 + fz_rnd(r, 4);
		db[2] = 1 + fz_rnd(r, 4);
		db[3] = 1 + fz_rnd(r, big ? 32 : 6);
		at->groups = g;
		at->stride_h = 1 + fz_rnd(r, 3);
		at->stride_w = 1 + fz_rnd(r, 3);
		at->dilation_h = 1 + fz_rnd(r, 2);
		at->dilation_w = 1 + fz_rnd(r, 2);
		at->pad_top = fz_rnd(r, 3);
		at->pad_bottom = fz_rnd(r, 3);
		at->pad_left = fz_rnd(r, 3);
		at->pad_right = fz_rnd(r, 3);
		at->out_pad_h = fz_rnd(r, at->stride_h);
		at->out_pad_w = fz_rnd(r, at->stride_w);
		if (quant) {
			fz_desc(&c->t[0], fz_q8(r), 4, da);
			fz_desc(&c->t[1], fz_q8(r), 4, db);
			fz_tquant(&c->t[0], r);
			if (g == 1 && fz_rnd(r, 2))
				c->t[1].quant = VNPU_QUANT_CHANNEL;
			else
				fz_tquant(&c->t[1], r);
			c->t[3].dtype = fz_rnd(r, 8) ? fz_q8(r) : VNPU_DT_INT32;
			if (c->t[3].dtype != VNPU_DT_INT32)
				fz_tquant(&c->t[3], r);
			fz_act(c, r, c->t[3].dtype == VNPU_DT_INT32);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], VNPU_DT_INT32, 1, &n1);
		} else {
			fz_desc(&c->t[0], fz_fdt(r), 4, da);
			fz_desc(&c->t[1], fz_fdt(r), 4, db);
			c->t[3].dtype = fz_fdt(r);
			fz_act(c, r, false);
			if (fz_rnd(r, 2))
				fz_desc(&c->t[2], fz_fdt(r), 1, &n1);
		}
		c->t[3].rank = 4;
		break;
	}
	case VNPU_OP_REDUCE:
		rk = fz_shape(r, da, 7);
		c->attr.reduce.kind = fz_rnd(r, VNPU_REDUCE_SUM_SQUARE + 1);
		c->attr.reduce.axes = 1 + fz_rnd(r, (1u << rk) - 1);
		if (fz_rnd(r, 4) == 0) {
			fz_desc(&c->t[0], fz_q8(r), rk, da);
			fz_tquant(&c->t[0], r);
		} else {
			fz_desc(&c->t[0], fz_fdt(r), rk, da);
		}
		c->t[3].dtype = fz_rnd(r, 4) ? fz_fdt(r) : fz_q8(r);
		if (fz_is_q8(c->t[3].dtype))
			fz_tquant(&c->t[3], r);
		c->t[3].rank = (uint8_t)rk;
		c->round = (uint8_t)fz_rnd(r, 2);
		break;
	case VNPU_OP_ELTWISE:
		rk = fz_shape(r, da, 6);
		c->attr.eltwise.kind = fz_rnd(r, VNPU_ELTWISE_POW + 1);
		for (i = 0; i < 2; i++) {
			int rr = 1 + (int)fz_rnd(r, (uint32_t)rk), j;

			for (j = 0; j < rr; j++)
				db[j] = fz_rnd(r, 3) ? da[rk - rr + j] : 1;
			if (fz_rnd(r, 3) == 0) {
				fz_desc(&c->t[i], fz_q8(r), rr, db);
				fz_tquant(&c->t[i], r);
			} else {
				fz_desc(&c->t[i], fz_fdt(r), rr, db);
			}
		}
		c->t[3].dtype = fz_rnd(r, 4) ? fz_fdt(r) : fz_q8(r);
		if (fz_is_q8(c->t[3].dtype))
			fz_tquant(&c->t[3], r);
		c->t[3].rank = 1;
		fz_act(c, r, false);
		break;
	case VNPU_OP_COPY: {
		static const uint8_t dts[] = {
			VNPU_DT_FP32, VNPU_DT_FP16, VNPU_DT_BF16, VNPU_DT_INT8,
			VNPU_DT_UINT8, VNPU_DT_INT32,
		};
		uint8_t xdt = dts[fz_rnd(r, sizeof(dts))];

		rk = fz_shape(r, da, 7);
		for (i = 0; i < rk; i++)
			db[i] = 1 + fz_rnd(r, 9);
		fz_desc(&c->t[0], xdt, rk, da);
		fz_desc(&c->t[3], xdt == VNPU_DT_INT32 || fz_rnd(r, 2) ? xdt :
			dts[fz_rnd(r, sizeof(dts) - 1)], rk, db);
		for (i = 0; i < VNPU_OP_SLOTS; i += VNPU_OP_SLOT_OUT)
			if (fz_is_q8(c->t[i].dtype))
				fz_tquant(&c->t[i], r);
		c->attr.copy.border = fz_rnd(r, VNPU_COPY_BORDER_WRAP + 1);
		if (c->attr.copy.border == VNPU_COPY_BORDER_CONSTANT)
			c->attr.copy.fill = fz_f2u(fz_rndf(r, -4.0f, 4.0f));
		for (i = 0; i < rk; i++)
			c->attr.copy.offset[i] = (int32_t)fz_rnd(r, da[i] + db[i] + 3) -
						 (int32_t)da[i] - 1;
		c->attr.copy.reverse = fz_rnd(r, 1u << rk);
		c->round = (uint8_t)fz_rnd(r, 2);
		break;
	}
	case VNPU_OP_RESIZE: {
		struct vnpu_attr_resize *at = &c->attr.resize;

		for (i = 0; i < 4; i++) {
			da[i] = 1 + fz_rnd(r, i == 0 ? 2 : 7);
			db[i] = i == 0 || i == 3 ? da[i] : 1 + fz_rnd(r, 13);
		}
		fz_desc(&c->t[0], fz_rnd(r, 3) ? fz_fdt(r) : fz_q8(r), 4, da);
		fz_desc(&c->t[3], fz_rnd(r, 3) ? fz_fdt(r) : fz_q8(r), 4, db);
		for (i = 0; i < VNPU_OP_SLOTS; i += VNPU_OP_SLOT_OUT)
			if (fz_is_q8(c->t[i].dtype))
				fz_tquant(&c->t[i], r);
		at->mode = fz_rnd(r, VNPU_RESIZE_CUBIC + 1);
		at->coord = fz_rnd(r, VNPU_RESIZE_TF_CROP_AND_RESIZE + 1);
		if (at->mode == VNPU_RESIZE_NEAREST)
			at->nearest = fz_rnd(r, VNPU_RESIZE_CEIL + 1);
		if (at->mode == VNPU_RESIZE_CUBIC) {
			at->cubic_a = fz_f2u(fz_rndf(r, -1.0f, 0.0f));
			at->flags = fz_rnd(r, 2) ? VNPU_RESIZE_EXCLUDE_OUTSIDE : 0;
		}
		if (fz_rnd(r, 2))
			at->scale_h = fz_f2u(fz_rndf(r, 0.05f, 8.0f));
		if (fz_rnd(r, 2))
			at->scale_w = fz_f2u(fz_rndf(r, 0.05f, 8.0f));
		if (at->coord == VNPU_RESIZE_TF_CROP_AND_RESIZE) {
			at->extrapolation = fz_f2u(fz_rndf(r, -2.0f, 2.0f));
			for (i = 0; i < 4; i++)
				at->roi[i] = fz_f2u(fz_rndf(r, -0.5f, 1.5f));
		}
		c->round = (uint8_t)fz_rnd(r, 2);
		break;
	}
	case VNPU_OP_LUT: {
		uint32_t ent = VNPU_LUT_ENTRIES;

		rk = fz_shape(r, da, 7);
		fz_desc(&c->t[0], fz_q8(r), rk, da);
		fz_tquant(&c->t[0], r);
		fz_desc(&c->t[3], fz_q8(r), rk, da);
		fz_tquant(&c->t[3], r);
		/* the table: Y's codes, described as Y is */
		fz_desc(&c->t[1], c->t[3].dtype, 1, &ent);
		c->t[1].quant = VNPU_QUANT_TENSOR;
		c->t[1].scale = c->t[3].scale;
		c->t[1].zero_point = c->t[3].zero_point;
		break;
	}
	default:	/* the unary ops */
		rk = fz_shape(r, da, 7);
		switch (op) {
		case VNPU_OP_ACTIVATION:
			fz_desc(&c->t[0], fz_rnd(r, 3) ? fz_fdt(r) : fz_q8(r), rk, da);
			c->t[3].dtype = fz_rnd(r, 4) ? fz_fdt(r) : fz_q8(r);
			fz_act(c, r, false);
			if (fz_rnd(r, 4) == 0) {
				float lo = fz_rndf(r, -2.0f, 1.0f);

				c->act = VNPU_ACT_CLIP;
				c->act_alpha = 0;
				c->attr.activation.clip_min = fz_f2u(lo);
				c->attr.activation.clip_max = fz_f2u(lo + fz_rndf(r, 0.0f, 3.0f));
				c->attr.raw[VNPU_ACT_BETA_WORD] = 0;
			} else if (fz_rnd(r, 3) == 0) {
				c->act = (uint8_t)(VNPU_ACT_SQRT +
						   fz_rnd(r, VNPU_ACT_NEG - VNPU_ACT_SQRT + 1));
				c->act_alpha = 0;
				c->attr.raw[VNPU_ACT_BETA_WORD] = 0;
			}
			if (fz_rnd(r, 3) == 0) {
				uint32_t dp[2] = { 2, da[rk - 1] };

				fz_desc(&c->t[1], fz_fdt(r), 2, dp);
			}
			break;
		case VNPU_OP_SOFTMAX:
		case VNPU_OP_LAYERNORM:
			fz_desc(&c->t[0], fz_fdt(r), rk, da);
			c->t[3].dtype = fz_fdt(r);
			c->attr.softmax.axis = fz_rnd(r, (uint32_t)rk);
			if (op == VNPU_OP_LAYERNORM) {
				c->attr.layernorm.epsilon = fz_f2u(1e-5f);
				for (i = 1; i <= 2; i++)
					if (fz_rnd(r, 2))
						fz_desc(&c->t[i], fz_fdt(r), 1, &n1);
			}
			break;
		case VNPU_OP_QUANTIZE:
			fz_desc(&c->t[0], fz_fdt(r), rk, da);
			c->t[3].dtype = fz_q8(r);
			break;
		case VNPU_OP_DEQUANTIZE:
			fz_desc(&c->t[0], fz_q8(r), rk, da);
			c->t[3].dtype = fz_fdt(r);
			break;
		default:
			fz_desc(&c->t[0], fz_q8(r), rk, da);
			c->t[3].dtype = fz_q8(r);
			break;
		}
		if (fz_is_q8(c->t[0].dtype)) {
			if (op != VNPU_OP_ACTIVATION && fz_rnd(r, 3) == 0) {
				c->t[0].quant = VNPU_QUANT_CHANNEL;
				c->t[0].quant_axis = (uint8_t)fz_rnd(r, (uint32_t)rk);
			} else {
				fz_tquant(&c->t[0], r);
			}
		}
		if (fz_is_q8(c->t[3].dtype))
			fz_tquant(&c->t[3], r);
		c->t[3].rank = (uint8_t)rk;
		if (op != VNPU_OP_ACTIVATION)
			c->round = (uint8_t)fz_rnd(r, 2);
		break;
	}
	fz_fix_shapes(c, r);
	/* Per-channel axes the op requires, now that shapes are known. */
	if (c->t[0].quant == VNPU_QUANT_CHANNEL && op == VNPU_OP_REQUANTIZE &&
	    c->t[3].quant == VNPU_QUANT_CHANNEL)
		c->t[3].quant_axis = c->t[0].quant_axis;
	fz_layout(c, r);
}

#endif /* FUZZ_ENGINE_H */
