// SPDX-License-Identifier: MIT
/*
 * Tiling: one op, several device commands, each within the command
 * limits the device reports (hw-spec.rst, "Command limits").
 *
 * A GEMM is split along M, N and its outermost batch axis, a CONV2D along
 * batch and output rows, a COPY along its output's three outermost dims, a
 * RESIZE along batch and channels; K and the convolution window are never split,
 * because no command adds to a partial result.  The planner starts from
 * the whole op and halves one split axis at a time, picking the axis that
 * brings the first exceeded limit down the most, until the largest tile
 * fits.  Whether a finished command fits is always decided by the
 * device's own checker (vnpu_op_check_limits()); the measurements here
 * only steer the splitting.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_tile.h"

/*
 * The limits in the order a command is measured against them: first the
 * ones no split changes, so that a reason names what really stands in
 * the way.
 */
enum lim {
	L_REDUCTION,
	L_KERNEL_DIM,
	L_CHANNELS,
	L_TENSOR_ELEMS,
	L_TENSOR_BYTES,
	L_CMD_BYTES,
	L_CMD_MACS,
	L_COUNT,
};

static bool lim_per_slot(enum lim k)
{
	return k == L_CHANNELS || k == L_TENSOR_ELEMS || k == L_TENSOR_BYTES;
}

static uint64_t lim_get(const struct vnpu_op_limits *l, enum lim k)
{
	switch (k) {
	case L_REDUCTION:
		return l->reduction;
	case L_KERNEL_DIM:
		return l->kernel_dim;
	case L_CHANNELS:
		return l->channels;
	case L_TENSOR_ELEMS:
		return l->tensor_elems;
	case L_TENSOR_BYTES:
		return l->tensor_bytes;
	case L_CMD_BYTES:
		return l->cmd_bytes;
	default:
		return l->cmd_macs;
	}
}

static void lim_set(struct vnpu_op_limits *l, enum lim k, uint64_t v)
{
	switch (k) {
	case L_REDUCTION:
		l->reduction = v;
		break;
	case L_KERNEL_DIM:
		l->kernel_dim = (uint32_t)v;
		break;
	case L_CHANNELS:
		l->channels = (uint32_t)v;
		break;
	case L_TENSOR_ELEMS:
		l->tensor_elems = v;
		break;
	case L_TENSOR_BYTES:
		l->tensor_bytes = v;
		break;
	case L_CMD_BYTES:
		l->cmd_bytes = v;
		break;
	default:
		l->cmd_macs = v;
		break;
	}
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void npu__op_limits(const struct npu_device_limits *reported,
		    uint64_t max_tile_bytes, struct vnpu_op_limits *lim)
{
	struct npu_device_limits e;

	npu__limits_effective(reported, &e);
	lim->tensor_elems = e.tensor_elems;
	lim->tensor_bytes = max_tile_bytes && max_tile_bytes < e.tensor_bytes ?
			    max_tile_bytes : e.tensor_bytes;
	lim->cmd_bytes = e.cmd_bytes;
	lim->cmd_macs = e.cmd_macs;
	lim->reduction = e.reduction;
	lim->kernel_dim = clamp32(e.kernel_dim);
	lim->channels = clamp32(e.channels);
}

/* ---- Why a command does not fit ------------------------------------------ */

static const char *limit_reason(unsigned int opcode, enum lim k)
{
	bool split = opcode == VNPU_OP_GEMM || opcode == VNPU_OP_CONV2D ||
		     opcode == VNPU_OP_COPY || opcode == VNPU_OP_RESIZE;

	switch (k) {
	case L_REDUCTION:
		if (opcode == VNPU_OP_GEMM)
			return "GEMM K exceeds the device's REDUCTION limit (terms summed into one output element), and K cannot be split: no device command adds to a partial result";
		if (opcode == VNPU_OP_CONV2D)
			return "CONV2D KH*KW*C/groups exceeds the device's REDUCTION limit (terms summed into one output element), and the window cannot be split: no device command adds to a partial result";
		if (opcode == VNPU_OP_CONV_TRANSPOSE)
			return "CONV_TRANSPOSE KH*KW*C/groups exceeds the device's REDUCTION limit (terms summed into one output element), and the window cannot be split: no device command adds to a partial result";
		if (opcode == VNPU_OP_REDUCE)
			return "the reduced extent (product of the reduced dims) exceeds the device's REDUCTION limit, and no device command adds to a partial result";
		return "the op exceeds the device's REDUCTION limit (terms summed into one output element), and it cannot be split into several commands";
	case L_KERNEL_DIM:
		return "the window exceeds the device's KERNEL_DIM limit (kernel height and width), and it cannot be split";
	case L_CHANNELS:
		return split ?
		       "a per-channel quantization array exceeds the device's CHANNELS limit, and the op cannot be split to fit" :
		       "a per-channel quantization array exceeds the device's CHANNELS limit, and the op cannot be split into several commands";
	case L_TENSOR_ELEMS:
		return split ?
		       "an operand exceeds the device's TENSOR_ELEMS limit (elements per operand), and the op cannot be split to fit" :
		       "an operand exceeds the device's TENSOR_ELEMS limit (elements per operand), and the op cannot be split into several commands";
	case L_TENSOR_BYTES:
		return split ?
		       "an operand spans more than the device's TENSOR_BYTES limit (or max_tile_bytes), and the op cannot be split to fit" :
		       "an operand spans more than the device's TENSOR_BYTES limit (or max_tile_bytes), and the op cannot be split into several commands";
	case L_CMD_BYTES:
		return split ?
		       "the operands exceed the device's CMD_BYTES limit (bytes per command), and the op cannot be split to fit" :
		       "the operands exceed the device's CMD_BYTES limit (bytes per command), and the op cannot be split into several commands";
	case L_CMD_MACS:
		return split ?
		       "the op exceeds the device's CMD_MACS limit (work units per command), and it cannot be split to fit" :
		       "the op exceeds the device's CMD_MACS limit (work units per command), and it cannot be split into several commands";
	default:
		return "the device refuses the command for a rule the CPU fallback does not have";
	}
}

/*
 * Which limit of @lim @c breaks, asked of the device's checker one limit
 * at a time so the answer follows the device's own definitions; L_COUNT
 * when none (or when @c is refused for another reason).
 */
static enum lim broken_limit(const struct vnpu_cmd_compute *c,
			     const struct vnpu_op_limits *lim)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct vnpu_op_limits one;
	int k;

	if (vnpu_op_check_limits(c, sizeof(*c), &cc, &info, &vnpu_op_limits_host))
		return L_COUNT;
	for (k = 0; k < L_COUNT; k++) {
		one = vnpu_op_limits_host;
		lim_set(&one, (enum lim)k, lim_get(lim, (enum lim)k));
		if (vnpu_op_check_limits(c, sizeof(*c), &cc, &info, &one))
			return (enum lim)k;
	}
	return L_COUNT;
}

int npu__check_cmd(const struct vnpu_cmd_compute *c,
		   const struct vnpu_op_limits *lim, const char **why)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	if (!vnpu_op_check_limits(c, sizeof(*c), &cc, &info, lim))
		return 0;
	*why = limit_reason(c->hdr.opcode, broken_limit(c, lim));
	return -E2BIG;
}

/* ---- Measuring a tile ------------------------------------------------------ */

/* A command's value for each limit: per slot, or the command's in [k][0]. */
struct meas {
	uint64_t v[L_COUNT][VNPU_OP_SLOTS];
};

static uint64_t meas_val(const struct meas *m, enum lim k, int s)
{
	return m->v[k][lim_per_slot(k) ? s : 0];
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The ops the planner splits: GEMM, CONV2D, COPY. */
static int measure(const struct vnpu_cmd_compute *c, struct meas *m)
{
	const struct vnpu_tensor_desc *w = &c->t[1];
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	int s, i;

	if (vnpu_ref_check(c, sizeof(*c), &cc, &info))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	for (s = 0; s < VNPU_OP_SLOTS; s++) {
		const struct vnpu_tensor_desc *d = &c->t[s];
		uint64_t n = 1;

		if (!((info.present >> s) & 1))
			continue;
		for (i = 0; i < d->rank; i++)
			n *= d->dims[i];
		m->v[L_TENSOR_ELEMS][s] = n;
		m->v[L_TENSOR_BYTES][s] = info.span[s];
		if (d->quant == VNPU_QUANT_CHANNEL)
			m->v[L_CHANNELS][s] = d->dims[d->quant_axis];
		m->v[L_CMD_BYTES][0] = sat_add(m->v[L_CMD_BYTES][0],
					       sat_add(info.span[s], info.qbytes[s]));
	}
	m->v[L_CMD_MACS][0] = info.macs;
	if (c->hdr.opcode == VNPU_OP_GEMM) {
		bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;

		m->v[L_REDUCTION][0] = c->t[0].dims[c->t[0].rank - (ta ? 2 : 1)];
	} else if (c->hdr.opcode == VNPU_OP_CONV2D) {
		m->v[L_REDUCTION][0] = (uint64_t)w->dims[1] * w->dims[2] * w->dims[3];
		m->v[L_KERNEL_DIM][0] = w->dims[1] > w->dims[2] ? w->dims[1] : w->dims[2];
	}
	return 0;
}

static void meas_max(struct meas *m, const struct meas *o)
{
	int k, s;

	for (k = 0; k < L_COUNT; k++)
		for (s = 0; s < VNPU_OP_SLOTS; s++)
			if (o->v[k][s] > m->v[k][s])
				m->v[k][s] = o->v[k][s];
}

/* The first limit @m exceeds: true with *@k, *@s (the slot, or 0). */
static bool excess(const struct meas *m, const struct vnpu_op_limits *lim,
		   enum lim *k, int *s)
{
	int kk, ss;

	for (kk = 0; kk < L_COUNT; kk++) {
		for (ss = 0; ss < (lim_per_slot(kk) ? VNPU_OP_SLOTS : 1); ss++) {
			if (m->v[kk][ss] > lim_get(lim, (enum lim)kk)) {
				*k = (enum lim)kk;
				*s = ss;
				return true;
			}
		}
	}
	return false;
}

/* ---- Slicing descriptors --------------------------------------------------- */

/*
 * A dimension of extent 1 never steps, so its stride can be 0; and must
 * be, where it would exceed TENSOR_BYTES (the device refuses any stride
 * past it), as the batch stride of a tile of one image does.
 */
static void drop_unit_strides(struct vnpu_tensor_desc *d)
{
	int i;

	if (!(d->flags & VNPU_TENSOR_STRIDED))
		return;
	for (i = 0; i < d->rank; i++)
		if (d->dims[i] == 1)
			d->strides[i] = 0;
}

/* Describe the same elements with explicit strides. */
static void make_strided(struct vnpu_tensor_desc *d)
{
	uint64_t s = 1;
	int i;

	if (d->flags & VNPU_TENSOR_STRIDED)
		return;
	for (i = d->rank - 1; i >= 0; i--) {
		d->strides[i] = s;
		s *= d->dims[i];
	}
	d->flags |= VNPU_TENSOR_STRIDED;
	drop_unit_strides(d);
}

/*
 * A tile that is still one dense block (a band of rows of one image, a
 * run of batches) is described as dense again: the engine's fast kernels
 * take dense operands (a convolution's im2col and GEMM paths), and a
 * strided descriptor of the same elements sent it to its generic path,
 * four times slower.
 */
static void undo_strides(struct vnpu_tensor_desc *d)
{
	uint64_t s = 1;
	int i;

	if (!(d->flags & VNPU_TENSOR_STRIDED))
		return;
	for (i = d->rank - 1; i >= 0; i--) {
		if (d->dims[i] != 1 && d->strides[i] != s)
			return;
		s *= d->dims[i];
	}
	d->flags &= ~VNPU_TENSOR_STRIDED;
	memset(d->strides, 0, sizeof(d->strides));
}

/* Narrow dimension @axis to [@start, @start + @len). */
static void slice(struct vnpu_tensor_desc *d, int axis, uint32_t start,
		  uint32_t len)
{
	/* An untiled operand keeps its dense descriptor. */
	if (!start && len == d->dims[axis])
		return;
	make_strided(d);
	d->va += (uint64_t)start * d->strides[axis] * vnpu_dtype_size(d->dtype);
	d->dims[axis] = len;
	if (len == 1)
		d->strides[axis] = 0;
}

/* ---- The split ops -------------------------------------------------------- */

#define AXES	3

struct splitter {
	/* Extent of each split axis; 1 for an axis the op does not have. */
	void (*extents)(const struct vnpu_cmd_compute *full, uint32_t *ext);
	/*
	 * The tile [start, start + len) on every axis: 0, or -ERANGE when
	 * it cannot be expressed as a command.
	 */
	int (*tile)(const struct vnpu_cmd_compute *full, const uint32_t *start,
		    const uint32_t *len, struct npu_tile *t);
	/* Axes whose tiles differ in more than their length. */
	uint32_t varies;
	/* Axes whose halving can lower limit @k of slot @s. */
	uint32_t (*shrinks)(enum lim k, int s);
};

#define AX(a)	(1u << (a))

/* GEMM: axis 0 the output's outermost batch axis, 1 M, 2 N. */
static void gemm_extents(const struct vnpu_cmd_compute *full, uint32_t *ext)
{
	const struct vnpu_tensor_desc *y = &full->t[3];

	ext[0] = y->rank > 2 ? y->dims[0] : 1;
	ext[1] = y->dims[y->rank - 2];
	ext[2] = y->dims[y->rank - 1];
}

/* An input's axis under the output's axis 0, unless broadcast along it. */
static void slice_batch(struct vnpu_tensor_desc *d, int out_rank,
			uint32_t start, uint32_t len)
{
	int axis = d->rank - out_rank;

	if (axis >= 0 && d->dims[axis] != 1)
		slice(d, axis, start, len);
}

static int gemm_tile(const struct vnpu_cmd_compute *full, const uint32_t *start,
		     const uint32_t *len, struct npu_tile *t)
{
	struct vnpu_cmd_compute *c = &t->c;
	bool ta = full->attr.gemm.flags & VNPU_GEMM_TRANS_A;
	bool tb = full->attr.gemm.flags & VNPU_GEMM_TRANS_B;
	int ra = full->t[0].rank, rb = full->t[1].rank, r = full->t[3].rank;

	*c = *full;
	memset(t->qstart, 0, sizeof(t->qstart));
	if (r > 2) {
		slice_batch(&c->t[0], r, start[0], len[0]);
		slice_batch(&c->t[1], r, start[0], len[0]);
		slice(&c->t[3], 0, start[0], len[0]);
	}
	slice(&c->t[0], ta ? ra - 1 : ra - 2, start[1], len[1]);
	slice(&c->t[1], tb ? rb - 2 : rb - 1, start[2], len[2]);
	/* B's and Y's channels, if any, are along N (vnpu_op_check()). */
	t->qstart[1] = start[2];
	if (c->t[2].rank)
		slice(&c->t[2], c->t[2].rank - 1, start[2], len[2]);
	slice(&c->t[3], r - 2, start[1], len[1]);
	slice(&c->t[3], r - 1, start[2], len[2]);
	t->qstart[3] = start[2];
	return 0;
}

static uint32_t gemm_shrinks(enum lim k, int s)
{
	switch (k) {
	case L_CHANNELS:
		return AX(2);
	case L_TENSOR_ELEMS:
	case L_TENSOR_BYTES:
		return s == 0 ? AX(0) | AX(1) : s == 1 ? AX(0) | AX(2) :
		       s == 2 ? AX(2) : AX(0) | AX(1) | AX(2);
	case L_CMD_BYTES:
	case L_CMD_MACS:
		return AX(0) | AX(1) | AX(2);
	default:
		return 0;
	}
}

static const struct splitter gemm_splitter = {
	.extents = gemm_extents,
	.tile = gemm_tile,
	.varies = 0,
	.shrinks = gemm_shrinks,
};

/* CONV2D: axis 0 batch, 1 output rows. */
static void conv_extents(const struct vnpu_cmd_compute *full, uint32_t *ext)
{
	ext[0] = full->t[3].dims[0];
	ext[1] = full->t[3].dims[1];
	ext[2] = 1;
}

/* Output rows [o0, o0 + ot) of a convolution, with the input rows they read. */
static int conv_tile(const struct vnpu_cmd_compute *full, const uint32_t *start,
		     const uint32_t *len, struct npu_tile *t)
{
	struct vnpu_cmd_compute *c = &t->c;
	const struct vnpu_attr_conv2d *at = &full->attr.conv;
	uint32_t o0 = start[1], ot = len[1];
	int64_t h = full->t[0].dims[1];
	int64_t ek = (int64_t)(full->t[1].dims[1] - 1) * at->dilation_h + 1;
	int64_t first = (int64_t)o0 * at->stride_h - at->pad_top;
	int64_t end = (int64_t)(o0 + ot - 1) * at->stride_h - at->pad_top + ek;
	int64_t s = first < 0 ? 0 : first, e = end > h ? h : end;

	if (e <= s)
		return -ERANGE;	/* rows entirely in the padding */
	*c = *full;
	memset(t->qstart, 0, sizeof(t->qstart));
	slice(&c->t[0], 0, start[0], len[0]);
	slice(&c->t[0], 1, (uint32_t)s, (uint32_t)(e - s));
	c->attr.conv.pad_top = (uint32_t)(s - first);
	c->attr.conv.pad_bottom = (uint32_t)(end - e);
	slice(&c->t[3], 0, start[0], len[0]);
	slice(&c->t[3], 1, o0, ot);
	return 0;
}

static uint32_t conv_shrinks(enum lim k, int s)
{
	switch (k) {
	case L_TENSOR_ELEMS:
	case L_TENSOR_BYTES:
		/* Weights and bias are never split. */
		return s == 0 || s == 3 ? AX(0) | AX(1) : 0;
	case L_CMD_BYTES:
	case L_CMD_MACS:
		return AX(0) | AX(1);
	default:
		return 0;
	}
}

static const struct splitter conv_splitter = {
	.extents = conv_extents,
	.tile = conv_tile,
	/* Padding makes the input rows a tile reads depend on where it is. */
	.varies = AX(1),
	.shrinks = conv_shrinks,
};

/*
 * COPY: axes 0..2 are Y's three outermost dims (1 beyond its rank).  A
 * tile is a box of Y with the offsets moved by its start; X is narrowed
 * to what lands in the box when the border reads nothing of X outside
 * it (KEEP, CONSTANT), and stays whole for EDGE, REFLECT and WRAP, whose
 * borders may read any of it.
 */
static void copy_extents(const struct vnpu_cmd_compute *full, uint32_t *ext)
{
	int a;

	for (a = 0; a < AXES; a++)
		ext[a] = a < full->t[3].rank ? full->t[3].dims[a] : 1;
}

static int copy_tile(const struct vnpu_cmd_compute *full, const uint32_t *start,
		     const uint32_t *len, struct npu_tile *t)
{
	struct vnpu_cmd_compute *c = &t->c;
	uint32_t border = full->attr.copy.border;
	bool narrow = border == VNPU_COPY_BORDER_KEEP ||
		      border == VNPU_COPY_BORDER_CONSTANT;
	int a;

	*c = *full;
	memset(t->qstart, 0, sizeof(t->qstart));
	for (a = 0; a < AXES && a < full->t[3].rank; a++) {
		int64_t off = full->attr.copy.offset[a], st = start[a];
		int64_t xd = full->t[0].dims[a], lo, hi;

		slice(&c->t[3], a, start[a], len[a]);
		if (!narrow) {
			if (off - st < INT32_MIN)
				return -ERANGE;
			c->attr.copy.offset[a] = (int32_t)(off - st);
			continue;
		}
		/* X's indices [lo, hi) land in the tile's rows. */
		lo = st - off < 0 ? 0 : st - off;
		hi = st + len[a] - off > xd ? xd : st + len[a] - off;
		if (hi <= lo) {
			/* None do: one element of X, placed past the tile. */
			lo = 0;
			hi = 1;
			off = st + len[a];
		}
		if ((full->attr.copy.reverse >> a) & 1)
			slice(&c->t[0], a, (uint32_t)(xd - hi), (uint32_t)(hi - lo));
		else
			slice(&c->t[0], a, (uint32_t)lo, (uint32_t)(hi - lo));
		c->attr.copy.offset[a] = (int32_t)(off + lo - st);
	}
	return 0;
}

static uint32_t copy_shrinks(enum lim k, int s)
{
	(void)s;
	switch (k) {
	case L_TENSOR_ELEMS:
	case L_TENSOR_BYTES:
	case L_CMD_BYTES:
	case L_CMD_MACS:
		return AX(0) | AX(1) | AX(2);
	default:
		return 0;
	}
}

static const struct splitter copy_splitter = {
	.extents = copy_extents,
	.tile = copy_tile,
	/* Where X lands in a tile depends on where the tile is. */
	.varies = AX(0) | AX(1) | AX(2),
	.shrinks = copy_shrinks,
};

/*
 * RESIZE: axis 0 batch, 1 channels; both independent of the coordinate
 * arithmetic, unlike output rows and columns (a tile's first row would
 * need an offset the command cannot carry).
 */
static void resize_extents(const struct vnpu_cmd_compute *full, uint32_t *ext)
{
	ext[0] = full->t[3].dims[0];
	ext[1] = full->t[3].dims[3];
	ext[2] = 1;
}

static int resize_tile(const struct vnpu_cmd_compute *full, const uint32_t *start,
		       const uint32_t *len, struct npu_tile *t)
{
	struct vnpu_cmd_compute *c = &t->c;
	int s;

	*c = *full;
	memset(t->qstart, 0, sizeof(t->qstart));
	for (s = 0; s < VNPU_OP_SLOTS; s += VNPU_OP_SLOT_OUT) {
		slice(&c->t[s], 0, start[0], len[0]);
		slice(&c->t[s], 3, start[1], len[1]);
	}
	return 0;
}

static uint32_t resize_shrinks(enum lim k, int s)
{
	(void)s;
	switch (k) {
	case L_TENSOR_ELEMS:
	case L_TENSOR_BYTES:
	case L_CMD_BYTES:
	case L_CMD_MACS:
		return AX(0) | AX(1);
	default:
		return 0;
	}
}

static const struct splitter resize_splitter = {
	.extents = resize_extents,
	.tile = resize_tile,
	.varies = 0,
	.shrinks = resize_shrinks,
};

/* ---- The planner ----------------------------------------------------------- */

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Measure every tile of extents @len that can differ from the first in
 * more than its length, and keep the largest value of each limit.
 */
static int measure_split(const struct splitter *sp,
			 const struct vnpu_cmd_compute *full,
			 const uint32_t *ext, const uint32_t *len,
			 struct meas *m)
{
	uint32_t start[AXES] = { 0 }, l[AXES];
	struct npu_tile t;
	struct meas one;
	int a, ret;

	memset(m, 0, sizeof(*m));
	for (;;) {
		for (a = 0; a < AXES; a++)
			l[a] = min32(len[a], ext[a] - start[a]);
		ret = sp->tile(full, start, l, &t);
		if (!ret)
			ret = measure(&t.c, &one);
		if (ret)
			return ret;
		meas_max(m, &one);
		for (a = 0; a < AXES; a++) {
			if (!(sp->varies & AX(a)))
				continue;
			start[a] += len[a];
			if (start[a] < ext[a])
				break;
			start[a] = 0;
		}
		if (a == AXES)
			return 0;
	}
}

static int plan_add(struct npu_plan *p, const struct npu_tile *t)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		struct npu_tile *nt = realloc(p->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		p->t = nt;
		p->cap = cap;
	}
	p->t[p->n++] = *t;
	return 0;
}

static int plan_split(const struct vnpu_cmd_compute *full,
		      const struct splitter *sp,
		      const struct vnpu_op_limits *lim, size_t max_cmds,
		      struct npu_plan *p, const char **why)
{
	uint32_t ext[AXES], len[AXES], start[AXES], l[AXES];
	uint64_t count = 1, v, best_v = 0;
	struct meas m, mc;
	struct npu_tile t;
	int a, s, best, ret;
	enum lim k;

	sp->extents(full, ext);
	memcpy(len, ext, sizeof(len));
	for (;;) {
		ret = measure_split(sp, full, ext, len, &m);
		if (ret == -ERANGE)
			goto padding;
		if (ret)
			return ret;
		if (!excess(&m, lim, &k, &s))
			break;
		best = -1;
		for (a = 0; a < AXES; a++) {
			uint32_t keep = len[a];

			if (!(sp->shrinks(k, s) & AX(a)) || len[a] == 1)
				continue;
			len[a] = (len[a] + 1) / 2;
			ret = measure_split(sp, full, ext, len, &mc);
			len[a] = keep;
			if (ret == -ERANGE)
				continue;
			if (ret)
				return ret;
			/*
			 * Only an axis that lowers the value counts (a
			 * row-major B spans all of K x N however N is split),
			 * the one that lowers it most wins, then the longer.
			 */
			v = meas_val(&mc, k, s);
			if (v >= meas_val(&m, k, s))
				continue;
			if (best < 0 || v < best_v ||
			    (v == best_v && len[a] > len[best])) {
				best = a;
				best_v = v;
			}
		}
		if (best < 0) {
			*why = limit_reason(full->hdr.opcode, k);
			return -E2BIG;
		}
		len[best] = (len[best] + 1) / 2;
	}

	for (a = 0; a < AXES; a++) {
		/* Each factor is below 2^32 and count at most max_cmds. */
		count *= (ext[a] + len[a] - 1) / len[a];
		if (count > max_cmds) {
			*why = "the op needs more commands to fit the device's limits than one command buffer holds";
			return -E2BIG;
		}
	}
	for (start[0] = 0; start[0] < ext[0]; start[0] += len[0]) {
		for (start[1] = 0; start[1] < ext[1]; start[1] += len[1]) {
			for (start[2] = 0; start[2] < ext[2]; start[2] += len[2]) {
				for (a = 0; a < AXES; a++)
					l[a] = min32(len[a], ext[a] - start[a]);
				ret = sp->tile(full, start, l, &t);
				if (ret == -ERANGE)
					goto padding;
				for (s = 0; s < VNPU_OP_SLOTS; s++)
					undo_strides(&t.c.t[s]);
				if (!ret)
					ret = plan_add(p, &t);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
padding:
	*why = full->hdr.opcode == VNPU_OP_COPY ?
	       "splitting the copy to fit the device's limits needs an offset beyond 32 bits" :
	       "splitting the op to fit the device's limits leaves a tile whose window lies entirely in the padding";
	return -E2BIG;
}

int npu__plan(const struct vnpu_cmd_compute *full,
	      const struct vnpu_op_limits *lim, size_t max_cmds,
	      struct npu_plan *p, const char **why)
{
	struct vnpu_cmd_compute c = *full;
	struct npu_tile t;
	int s, ret;

	for (s = 0; s < VNPU_OP_SLOTS; s++)
		drop_unit_strides(&c.t[s]);
	switch (c.hdr.opcode) {
	case VNPU_OP_GEMM:
		return plan_split(&c, &gemm_splitter, lim, max_cmds, p, why);
	case VNPU_OP_CONV2D:
		return plan_split(&c, &conv_splitter, lim, max_cmds, p, why);
	case VNPU_OP_COPY:
		return plan_split(&c, &copy_splitter, lim, max_cmds, p, why);
	case VNPU_OP_RESIZE:
		return plan_split(&c, &resize_splitter, lim, max_cmds, p, why);
	default:
		ret = npu__check_cmd(&c, lim, why);
		if (ret)
			return ret;
		memset(&t, 0, sizeof(t));
		t.c = c;
		return plan_add(p, &t);
	}
}
