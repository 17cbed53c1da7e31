// SPDX-License-Identifier: MIT
/*
 * Cutting compute commands into output-row bands (vnpu_split.h): GEMM,
 * the windowed ops (CONV2D, POOL2D) and the per-element ones (ELTWISE,
 * ACTIVATION, QUANTIZE, DEQUANTIZE, REQUANTIZE).
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
 * Operands cut along an axis of their own, each band a contiguous block
 * of rows of it (a per-element op's inputs, a batched GEMM's batches).
 */
struct elem_cut {
	unsigned int axis[VNPU_OP_SLOTS];	/* per cut slot, its own axis */
	uint32_t slots;				/* bit i: slot i is cut */
};

/*
 * GEMM bands are rows of A and of Y when the product is unbatched (every
 * batch dimension 1), so a band of rows is one contiguous block of both;
 * B and the bias are shared whole.  A batched product is cut by its
 * batches instead, along Y's outermost batch axis longer than 1: A and B
 * are cut where they run along it and shared where they broadcast, so
 * each part is the same products of the same shapes, each as whole as in
 * the uncut command.  But an fp32 B shared by every batch lets the engine
 * multiply all of A's batches as one taller product, which the BLAS may
 * sum in another order than a band's shorter one: such a product is left
 * whole (integer sums do not depend on the order).
 */
static uint32_t gemm_batch_rows(const struct vnpu_cmd_compute *c,
				const struct vnpu_op_info *info,
				struct elem_cut *ec, uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *y = &c->t[VNPU_OP_SLOT_OUT];
	unsigned int ax, i;

	for (ax = 0; ax + 2 < y->rank && y->dims[ax] == 1; ax++)
		;
	if (ax + 2 >= y->rank || channel_along(y, ax))
		return 0;
	ec->slots = 1u << VNPU_OP_SLOT_OUT;
	ec->axis[VNPU_OP_SLOT_OUT] = ax;
	for (i = 0; i < 2; i++) {
		const struct vnpu_tensor_desc *t = &c->t[i];
		int64_t ia = (int64_t)ax - (y->rank - t->rank);

		if (ia < 0 || t->dims[ia] == 1)
			continue;
		if (channel_along(t, (unsigned int)ia))
			return 0;
		ec->slots |= 1u << i;
		ec->axis[i] = (unsigned int)ia;
	}
	if (!(ec->slots & 2) && !info->quantized)
		return 0;
	*min_rows = 1;
	return y->dims[ax];
}

static uint32_t gemm_rows(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, struct elem_cut *ec,
			  uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *a = &c->t[0], *y = &c->t[VNPU_OP_SLOT_OUT];
	unsigned int i;

	ec->slots = 0;
	for (i = 0; i + 2 < y->rank; i++)
		if (y->dims[i] != 1)
			return gemm_batch_rows(c, info, ec, min_rows);
	if (c->attr.gemm.flags & VNPU_GEMM_TRANS_A || a->rank < 2 || y->rank < 2)
		return 0;
	for (i = 0; i + 2 < a->rank; i++)
		if (a->dims[i] != 1)
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

/* The vertical window of a CONV2D or POOL2D command (0 dilation is 1). */
struct window {
	uint32_t kh, stride, dilation, pad_top, pad_bottom;
};

static struct window window_of(const struct vnpu_cmd_compute *c)
{
	struct window w;

	if (c->hdr.opcode == VNPU_OP_CONV2D) {
		w.kh = c->t[1].dims[1];
		w.stride = c->attr.conv.stride_h;
		w.dilation = c->attr.conv.dilation_h;
		w.pad_top = c->attr.conv.pad_top;
		w.pad_bottom = c->attr.conv.pad_bottom;
	} else {
		w.kh = c->attr.pool.kernel_h;
		w.stride = c->attr.pool.stride_h;
		w.dilation = c->attr.pool.dilation_h;
		w.pad_top = c->attr.pool.pad_top;
		w.pad_bottom = c->attr.pool.pad_bottom;
	}
	if (!w.dilation)
		w.dilation = 1;
	return w;
}

/*
 * CONV2D and POOL2D bands are images when there are several, else output
 * rows.  A band of output rows reads the input rows its windows cover;
 * where the original windows reached into the top or bottom padding, the
 * band keeps that much of it, so OH of the band is exactly its row count
 * and every window of it sees the padding it saw before (which an
 * average that counts the padding, or leaves it out, divides by).
 * GLOBAL_AVG sums every row into each output: it is not cut.
 */
static uint32_t window_rows(const struct vnpu_cmd_compute *c, uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[VNPU_OP_SLOT_OUT];
	uint64_t pixels;

	if (c->hdr.opcode == VNPU_OP_POOL2D &&
	    c->attr.pool.kind == VNPU_POOL_GLOBAL_AVG)
		return 0;
	/* NHWC: only arrays along C, the innermost axis, stay whole. */
	if ((x->quant == VNPU_QUANT_CHANNEL && x->quant_axis != 3) ||
	    (y->quant == VNPU_QUANT_CHANNEL && y->quant_axis != 3))
		return 0;
	pixels = (uint64_t)y->dims[2] * (y->dims[0] > 1 ? y->dims[1] : 1);
	*min_rows = (VNPU_SPLIT_MIN_PIXELS + pixels - 1) / pixels;
	return y->dims[0] > 1 ? y->dims[0] : y->dims[1];
}

static bool window_band(const struct vnpu_cmd_compute *c,
			struct vnpu_cmd_compute *p, uint32_t r0, uint32_t r1)
{
	struct vnpu_tensor_desc *x = &p->t[0], *y = &p->t[VNPU_OP_SLOT_OUT];
	struct window w = window_of(c);
	int64_t lo, hi, start, end, h = c->t[0].dims[1];
	uint32_t *pad_top, *pad_bottom;

	if (c->t[VNPU_OP_SLOT_OUT].dims[0] > 1) {
		x->va += r0 * row_bytes(x, 0);
		x->dims[0] = r1 - r0;
		y->va += r0 * row_bytes(y, 0);
		y->dims[0] = r1 - r0;
		return true;
	}
	lo = (int64_t)r0 * w.stride - w.pad_top;
	hi = (int64_t)(r1 - 1) * w.stride - w.pad_top +
	     (int64_t)(w.kh - 1) * w.dilation + 1;
	start = lo > 0 ? lo : 0;
	end = hi < h ? hi : h;
	/* Windows entirely in the padding: leave such a command whole. */
	if (end <= start)
		return false;
	if (c->hdr.opcode == VNPU_OP_CONV2D) {
		pad_top = &p->attr.conv.pad_top;
		pad_bottom = &p->attr.conv.pad_bottom;
	} else {
		pad_top = &p->attr.pool.pad_top;
		pad_bottom = &p->attr.pool.pad_bottom;
	}
	x->va += start * row_bytes(x, 1);
	x->dims[1] = end - start;
	*pad_top = start - lo;
	*pad_bottom = hi - end;
	y->va += r0 * row_bytes(y, 1);
	y->dims[1] = r1 - r0;
	return true;
}

/*
 * The per-element ops are cut along Y's outermost axis longer than 1 (a
 * [1, H, W, C] activation by rows of H).  An input is cut with Y where it
 * runs along that axis, and shared whole where it broadcasts along it
 * (numpy's rule: its dims align with Y's innermost ones, and a 1 or a
 * missing dim repeats); every element of a band then meets exactly the
 * operand elements it met in the whole command.  ACTIVATION's scale and
 * shift P [2, ...] broadcast to X below their first dim: the command is
 * cut only where they do not vary along the cut axis.
 */
static uint32_t elem_rows(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, struct elem_cut *ec,
			  uint64_t *min_rows)
{
	const struct vnpu_tensor_desc *y = &c->t[VNPU_OP_SLOT_OUT];
	unsigned int ax, i;
	uint64_t row;

	for (ax = 0; ax + 1 < y->rank && y->dims[ax] == 1; ax++)
		;
	if (y->dims[ax] < 2 || channel_along(y, ax))
		return 0;
	ec->slots = 1u << VNPU_OP_SLOT_OUT;
	ec->axis[VNPU_OP_SLOT_OUT] = ax;
	for (i = 0; i < VNPU_OP_SLOT_OUT; i++) {
		const struct vnpu_tensor_desc *t = &c->t[i];
		int64_t ia;

		if (!((info->present >> i) & 1))
			continue;
		if (c->hdr.opcode == VNPU_OP_ACTIVATION && i == 1) {
			ia = (int64_t)ax - (y->rank - (t->rank - 1));
			if (ia >= 0 && t->dims[1 + ia] != 1)
				return 0;
			continue;
		}
		ia = (int64_t)ax - (y->rank - t->rank);
		if (ia < 0 || t->dims[ia] == 1)
			continue;
		if (t->dims[ia] != y->dims[ax] || channel_along(t, (unsigned int)ia))
			return 0;
		ec->slots |= 1u << i;
		ec->axis[i] = (unsigned int)ia;
	}
	row = info->macs / y->dims[ax];
	*min_rows = (VNPU_SPLIT_MIN_ELEMS + row - 1) / row;
	return y->dims[ax];
}

static void elem_band(const struct elem_cut *ec, struct vnpu_cmd_compute *p,
		      uint32_t r0, uint32_t r1)
{
	unsigned int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		struct vnpu_tensor_desc *t = &p->t[i];

		if (!((ec->slots >> i) & 1))
			continue;
		t->va += r0 * row_bytes(t, ec->axis[i]);
		t->dims[ec->axis[i]] = r1 - r0;
	}
}

/*
 * The rows a command is cut along (0: not cut), after the checks every
 * cut needs; @min_rows receives the fewest rows a part may have.
 */
static uint32_t cut_rows(const void *cmd, uint32_t size,
			 struct vnpu_cmd_compute *c, struct vnpu_op_info *info,
			 struct elem_cut *ec, uint64_t *min_rows)
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
		return gemm_rows(c, info, ec, min_rows);
	case VNPU_OP_CONV2D:
	case VNPU_OP_POOL2D:
		return window_rows(c, min_rows);
	case VNPU_OP_ELTWISE:
	case VNPU_OP_ACTIVATION:
	case VNPU_OP_QUANTIZE:
	case VNPU_OP_DEQUANTIZE:
	case VNPU_OP_REQUANTIZE:
		return elem_rows(c, info, ec, min_rows);
	default:
		return 0;
	}
}

static unsigned int cut(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info,
			const struct elem_cut *ec, uint32_t rows,
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
		switch (c->hdr.opcode) {
		case VNPU_OP_GEMM:
			if (ec->slots)
				elem_band(ec, &parts[i], r0, r1);
			else
				gemm_band(&parts[i], r0, r1);
			break;
		case VNPU_OP_CONV2D:
		case VNPU_OP_POOL2D:
			if (!window_band(c, &parts[i], r0, r1))
				return 0;
			break;
		default:
			elem_band(ec, &parts[i], r0, r1);
			break;
		}
		if (vnpu_op_check(&parts[i], sizeof(parts[i]), &check, &pinfo))
			return 0;
	}
	*cycles = vnpu_engine_cycles(c, info);
	return n;
}

/*
 * The work a part aims at and the least it may have: GEMM and CONV2D
 * count MACs, the other ops elements or window taps, each of which costs
 * tens of MACs' time (ops.rst, "Engine performance").
 */
static void part_work(uint16_t opcode, uint64_t *part, uint64_t *min,
		      unsigned int *per_engine)
{
	if (opcode == VNPU_OP_GEMM || opcode == VNPU_OP_CONV2D) {
		*part = VNPU_SPLIT_PART_WORK;
		*min = VNPU_SPLIT_MIN_WORK;
		*per_engine = 1;
	} else {
		*part = VNPU_SPLIT_PART_ELEMS;
		*min = VNPU_SPLIT_MIN_ELEMS;
		*per_engine = VNPU_SPLIT_ELEM_PARTS_PER_ENGINE;
	}
}

unsigned int vnpu_compute_split_min(const void *cmd, uint32_t size,
				    unsigned int max_parts, uint64_t min_work,
				    struct vnpu_cmd_compute *parts,
				    uint64_t *cycles)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	struct elem_cut ec;
	uint64_t min_rows, n;
	uint32_t rows;

	rows = cut_rows(cmd, size, &c, &info, &ec, &min_rows);
	if (!rows || !min_work)
		return 0;
	n = info.macs / min_work;
	n = n < max_parts ? n : max_parts;
	n = n < VNPU_SPLIT_MAX_PARTS ? n : VNPU_SPLIT_MAX_PARTS;
	n = n < rows ? n : rows;
	return cut(&c, &info, &ec, rows, (unsigned int)n, parts, cycles);
}

unsigned int vnpu_compute_split(const void *cmd, uint32_t size,
				unsigned int engines,
				struct vnpu_cmd_compute *parts,
				uint64_t *cycles)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	uint64_t min_rows, n, cap, part, min;
	unsigned int per_engine;
	struct elem_cut ec;
	uint32_t rows;

	rows = cut_rows(cmd, size, &c, &info, &ec, &min_rows);
	if (!rows)
		return 0;
	part_work(c.hdr.opcode, &part, &min, &per_engine);
	n = info.macs / part;
	n = n > engines * per_engine ? n : engines * per_engine;
	n = n < VNPU_SPLIT_MAX_PARTS ? n : VNPU_SPLIT_MAX_PARTS;
	cap = info.macs / min;
	n = n < cap ? n : cap;
	cap = rows / min_rows;
	n = n < cap ? n : cap;
	return cut(&c, &info, &ec, rows, (unsigned int)n, parts, cycles);
}
