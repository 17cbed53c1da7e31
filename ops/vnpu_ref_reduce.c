// SPDX-License-Identifier: MIT
/*
 * REDUCE: validation and reference semantics.  #included by vnpu_ref.c
 * (it shares that file's private helpers), never compiled on its own.
 *
 * Sums accumulate in binary64 in row-major order of the reduced dims and
 * round once to binary32 at the end (MEAN divides in binary64 first,
 * L2 takes the square root in binary64), so the device's blocked sums
 * agree with the reference to within binary32 rounding.
 */

static int check_reduce(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_reduce *at = &c->attr.reduce;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	uint64_t red = 1, xel = 1;
	int i;

	if (at->kind > VNPU_REDUCE_SUM_SQUARE)
		return bad(k, OFF(attr.reduce.kind));
	if (!all_zero(at->reserved, sizeof(at->reserved)))
		return bad(k, OFF(attr.reduce.reserved) +
			   first_nonzero(at->reserved, sizeof(at->reserved)));
	if (!at->axes || at->axes >> x->rank)
		return bad(k, OFF(attr.reduce.axes));
	if (y->rank != x->rank)
		return bad(k, TOFF(3, rank));
	for (i = 0; i < x->rank; i++) {
		bool r = (at->axes >> i) & 1;

		if (y->dims[i] != (r ? 1 : x->dims[i]))
			return bad(k, DIM_OFF(3, i));
		if (r)
			red *= x->dims[i];	/* <= elements of x */
		xel *= x->dims[i];
	}
	if (red > k->lim->reduction)
		return bad(k, OFF(attr.reduce.axes));
	/* A channel axis of x would mix scales within one sum. */
	if (x->quant == VNPU_QUANT_CHANNEL)
		return bad(k, TOFF(0, quant));
	if (y->quant == VNPU_QUANT_CHANNEL)
		return bad(k, TOFF(3, quant));
	/* Work units: elements of x, each read once. */
	k->info->macs = xel;
	return 0;
}

static int ref_reduce(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_reduce *at = &c->attr.reduce;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t rdims[VNPU_MAX_RANK], idx[VNPU_MAX_RANK] = { 0 };
	int rmap[VNPU_MAX_RANK], nr = 0, r = x->rank, i;
	uint64_t cnt = 1;

	for (i = 0; i < r; i++) {
		if (!((at->axes >> i) & 1))
			continue;
		rmap[nr] = i;
		rdims[nr++] = x->dims[i];
		cnt *= x->dims[i];
	}
	do {
		uint32_t ri[VNPU_MAX_RANK] = { 0 }, xi[VNPU_MAX_RANK];
		bool minmax = at->kind == VNPU_REDUCE_MAX ||
			      at->kind == VNPU_REDUCE_MIN;
		double acc = 0.0;
		float m = 0.0f;
		bool first = true;

		if (vnpu_run_tick(rc, cnt + 1))
			return -ECANCELED;
		memcpy(xi, idx, sizeof(xi));
		do {
			float v;

			for (i = 0; i < nr; i++)
				xi[rmap[i]] = ri[i];
			v = vnpu_ld(x, tv_at(x, xi), 0);
			if (!minmax) {
				acc += at->kind == VNPU_REDUCE_L2 ||
				       at->kind == VNPU_REDUCE_SUM_SQUARE ?
				       (double)v * v : v;
			} else if (first || isnan(v) ||
				   (at->kind == VNPU_REDUCE_MAX ? v > m : v < m)) {
				/* Once NaN, m stays: no comparison is true. */
				if (!isnan(m) || first)
					m = v;
			}
			first = false;
		} while (idx_next(ri, rdims, nr));
		if (at->kind == VNPU_REDUCE_MEAN)
			acc /= (double)cnt;
		else if (at->kind == VNPU_REDUCE_L2)
			acc = sqrt(acc);
		vnpu_st(y, tv_at(y, idx), minmax ? m : (float)acc, 0, c->round);
	} while (idx_next(idx, y->dims, r));
	return 0;
}
