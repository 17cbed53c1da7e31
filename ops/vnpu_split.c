// SPDX-License-Identifier: MIT
/*
 * Cutting GEMM and CONV2D commands into output-row bands (vnpu_split.h).
 *
 * Everything here works on a command vnpu_op_check() has accepted, so
 * every product below is bounded by the command limits and fits in 64
 * bits; each part is checked again before it is handed out.
 */
#include <errno.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_split.h"

static bool dense(const struct vnpu_tensor_desc *t)
{
	return !(t->flags & VNPU_TENSOR_STRIDED);
}

/* Per-channel arrays that run along @axis would have to be cut too. */
static bool channel_along(const struct vnpu_tensor_desc *t, unsigned int axis)
{
	return t->quant == VNPU_QUANT_CHANNEL && t->quant_axis == axis;
}

static bool ranges_meet(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* The output shares no byte with an input or a per-channel array. */
static bool output_apart(const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info)
{
	const struct vnpu_tensor_desc *y = &c->t[VNPU_OP_SLOT_OUT];
	uint64_t ylen = info->span[VNPU_OP_SLOT_OUT];
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		if (i != VNPU_OP_SLOT_OUT &&
		    ranges_meet(y->va, ylen, c->t[i].va, info->span[i]))
			return false;
		if (ranges_meet(y->va, ylen, c->t[i].quant_va, info->qbytes[i]))
			return false;
	}
	return true;
}

/* Bytes of one row of @t below dimension @dim: the product of the rest. */
static uint64_t row_bytes(const struct vnpu_tensor_desc *t, unsigned int dim)
{
	uint64_t n = vnpu_dtype_size(t->dtype);
	unsigned int i;

	for (i = dim + 1; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

/*
 * GEMM bands are rows of A and of Y.  Only an unbatched product is cut
 * (every batch dimension 1), so a band of rows is one contiguous block of
 * both; B and the bias are shared whole.
 */
static uint32_t gemm_rows(const struct vnpu_cmd_compute *c, uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *a = &c->t[0], *y = &c->t[VNPU_OP_SLOT_OUT];
	unsigned int i;

	if (c->attr.gemm.flags & VNPU_GEMM_TRANS_A || a->rank < 2 || y->rank < 2)
		return 0;
	for (i = 0; i + 2 < a->rank; i++)
		if (a->dims[i] != 1)
			return 0;
	for (i = 0; i + 2 < y->rank; i++)
		if (y->dims[i] != 1)
			return 0;
	if (a->dims[a->rank - 2] != y->dims[y->rank - 2] ||
	    channel_along(a, a->rank - 2) || channel_along(y, y->rank - 2))
		return 0;
	*min_rows = VNPU_SPLIT_MIN_GEMM_ROWS;
	return y->dims[y->rank - 2];
}

static void gemm_band(struct vnpu_cmd_compute *p, uint32_t r0, uint32_t r1)
{
	struct vnpu_tensor_desc *a = &p->t[0], *y = &p->t[VNPU_OP_SLOT_OUT];

	a->va += r0 * row_bytes(a, a->rank - 2);
	a->dims[a->rank - 2] = r1 - r0;
	y->va += r0 * row_bytes(y, y->rank - 2);
	y->dims[y->rank - 2] = r1 - r0;
}

/*
 * CONV2D bands are images when there are several, else output rows.  A
 * band of output rows reads the input rows its windows cover; where the
 * original windows reached into the top or bottom padding, the band keeps
 * that much of it, so OH of the band is exactly its row count.
 */
static uint32_t conv_rows(const struct vnpu_cmd_compute *c, uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[VNPU_OP_SLOT_OUT];
	uint64_t pixels;

	/* NHWC: only arrays along C, the innermost axis, stay whole. */
	if ((x->quant == VNPU_QUANT_CHANNEL && x->quant_axis != 3) ||
	    (y->quant == VNPU_QUANT_CHANNEL && y->quant_axis != 3))
		return 0;
	pixels = (uint64_t)y->dims[2] * (y->dims[0] > 1 ? y->dims[1] : 1);
	*min_rows = (VNPU_SPLIT_MIN_PIXELS + pixels - 1) / pixels;
	return y->dims[0] > 1 ? y->dims[0] : y->dims[1];
}

static bool conv_band(const struct vnpu_cmd_compute *c,
		      struct vnpu_cmd_compute *p, uint32_t r0, uint32_t r1)
{
	struct vnpu_tensor_desc *x = &p->t[0], *y = &p->t[VNPU_OP_SLOT_OUT];
	const struct vnpu_attr_conv2d *a = &c->attr.conv;
	int64_t lo, hi, start, end, h = c->t[0].dims[1];
	uint32_t kh = c->t[1].dims[1];

	if (c->t[VNPU_OP_SLOT_OUT].dims[0] > 1) {
		x->va += r0 * row_bytes(x, 0);
		x->dims[0] = r1 - r0;
		y->va += r0 * row_bytes(y, 0);
		y->dims[0] = r1 - r0;
		return true;
	}
	lo = (int64_t)r0 * a->stride_h - a->pad_top;
	hi = (int64_t)(r1 - 1) * a->stride_h - a->pad_top +
	     (int64_t)(kh - 1) * a->dilation_h + 1;
	start = lo > 0 ? lo : 0;
	end = hi < h ? hi : h;
	/* Windows entirely in the padding: leave such a command whole. */
	if (end <= start)
		return false;
	x->va += start * row_bytes(x, 1);
	x->dims[1] = end - start;
	p->attr.conv.pad_top = start - lo;
	p->attr.conv.pad_bottom = hi - end;
	y->va += r0 * row_bytes(y, 1);
	y->dims[1] = r1 - r0;
	return true;
}

/*
 * The rows a command is cut along (0: not cut), after the checks every
 * cut needs; @min_rows receives the fewest rows a part may have.
 */
static uint32_t cut_rows(const void *cmd, uint32_t size,
			 struct vnpu_cmd_compute *c, struct vnpu_op_info *info,
			 uint64_t *min_rows)
{
	int i;

	if (vnpu_op_check(cmd, size, c, info) || !output_apart(c, info))
		return 0;
	/*
	 * Dense operands only: they take the fast kernels, for which sharing
	 * pays, and every band of them is dense too.
	 */
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (((info->present >> i) & 1) && !dense(&c->t[i]))
			return 0;
	switch (c->hdr.opcode) {
	case VNPU_OP_GEMM:
		return gemm_rows(c, min_rows);
	case VNPU_OP_CONV2D:
		return conv_rows(c, min_rows);
	default:
		return 0;
	}
}

static unsigned int cut(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info, uint32_t rows,
			unsigned int n, struct vnpu_cmd_compute *parts,
			uint64_t *cycles)
{
	struct vnpu_cmd_compute check;
	struct vnpu_op_info pinfo;
	unsigned int i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t r0 = (uint64_t)rows * i / n;
		uint32_t r1 = (uint64_t)rows * (i + 1) / n;

		parts[i] = *c;
		if (c->hdr.opcode == VNPU_OP_GEMM)
			gemm_band(&parts[i], r0, r1);
		else if (!conv_band(c, &parts[i], r0, r1))
			return 0;
		if (vnpu_op_check(&parts[i], sizeof(parts[i]), &check, &pinfo))
			return 0;
	}
	*cycles = vnpu_engine_cycles(c, info);
	return n;
}

unsigned int vnpu_compute_split_min(const void *cmd, uint32_t size,
				    unsigned int max_parts, uint64_t min_work,
				    struct vnpu_cmd_compute *parts,
				    uint64_t *cycles)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	uint64_t min_rows, n;
	uint32_t rows;

	rows = cut_rows(cmd, size, &c, &info, &min_rows);
	if (!rows || !min_work)
		return 0;
	n = info.macs / min_work;
	n = n < max_parts ? n : max_parts;
	n = n < VNPU_SPLIT_MAX_PARTS ? n : VNPU_SPLIT_MAX_PARTS;
	n = n < rows ? n : rows;
	return cut(&c, &info, rows, (unsigned int)n, parts, cycles);
}

unsigned int vnpu_compute_split(const void *cmd, uint32_t size,
				unsigned int engines,
				struct vnpu_cmd_compute *parts,
				uint64_t *cycles)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	uint64_t min_rows, n, cap;
	uint32_t rows;

	rows = cut_rows(cmd, size, &c, &info, &min_rows);
	if (!rows)
		return 0;
	n = info.macs / VNPU_SPLIT_PART_WORK;
	n = n > engines ? n : engines;
	n = n < VNPU_SPLIT_MAX_PARTS ? n : VNPU_SPLIT_MAX_PARTS;
	cap = info.macs / VNPU_SPLIT_MIN_WORK;
	n = n < cap ? n : cap;
	cap = rows / min_rows;
	n = n < cap ? n : cap;
	return cut(&c, &info, rows, (unsigned int)n, parts, cycles);
}
