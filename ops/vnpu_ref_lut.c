// SPDX-License-Identifier: MIT
/*
 * LUT: validation and reference semantics.  #included by vnpu_ref.c (it
 * shares that file's private helpers), never compiled on its own.
 *
 * The table is read into a local copy before any element of Y is
 * written, so a T that overlaps Y reads as it was when the command
 * started, and X may be Y itself (in place).
 */

static int check_lut(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_tensor_desc *tb = &c->t[1], *y = &c->t[3];
	int i;

	if (c->round != VNPU_ROUND_ONNX)
		return bad(k, OFF(round));
	if (!all_zero(c->attr.lut.reserved, sizeof(c->attr.lut.reserved)))
		return bad(k, OFF(attr.lut.reserved) +
			   first_nonzero(c->attr.lut.reserved,
					 sizeof(c->attr.lut.reserved)));
	for (i = 0; i < VNPU_OP_SLOTS; i += VNPU_OP_SLOT_OUT) {
		if (!dt_is_q8(c->t[i].dtype))
			return bad(k, TOFF(i, dtype));
		if (c->t[i].quant != VNPU_QUANT_TENSOR)
			return bad(k, TOFF(i, quant));
	}
	/* T holds Y's codes: it is described as Y's elements are. */
	if (tb->dtype != y->dtype)
		return bad(k, TOFF(1, dtype));
	if (tb->rank != 1)
		return bad(k, TOFF(1, rank));
	if (tb->dims[0] != VNPU_LUT_ENTRIES)
		return bad(k, DIM_OFF(1, 0));
	if (tb->quant != VNPU_QUANT_TENSOR)
		return bad(k, TOFF(1, quant));
	if (tb->scale != y->scale)
		return bad(k, TOFF(1, scale));
	if (tb->zero_point != y->zero_point)
		return bad(k, TOFF(1, zero_point));
	/* Work units: elements of Y (check_ops counted them), one lookup each. */
	return 0;
}

/* Entry of the table a code of @x's dtype indexes. */
static inline unsigned int lut_index(const struct vnpu_tv *x, uint8_t code)
{
	return x->dtype == VNPU_DT_INT8 ? (uint8_t)(code ^ 0x80u) : code;
}

static int ref_lut(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		   struct vnpu_run_ctx *rc)
{
	const struct vnpu_tv *x = &t[0], *tb = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	uint8_t table[VNPU_LUT_ENTRIES];
	unsigned int i;

	(void)c;
	for (i = 0; i < VNPU_LUT_ENTRIES; i++)
		table[i] = tb->p[(int64_t)i * tb->st[0]];
	do {
		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		*tv_at(y, idx) = table[lut_index(x, *tv_at(x, idx))];
	} while (idx_next(idx, y->dims, y->rank));
	return 0;
}
