// SPDX-License-Identifier: MIT
/*
 * CONV_TRANSPOSE: validation and reference semantics.  #included by
 * vnpu_ref.c (it shares that file's private helpers), never compiled on
 * its own.
 *
 * The reference gathers: each output element sums, in ky, kx, ci order,
 * the taps whose input pixel lands on it.  That is the same sum the
 * scatter definition in vnpu_hw_ops.h gives, in a fixed order, so float
 * results are defined to the bit and integer ones exactly.
 */

#include "vnpu_taps.h"

/* Output extent (in - 1) * s + (k - 1) * d + 1 - pa - pb + op, or 0. */
static uint32_t convt_out(uint32_t in, uint32_t s, uint32_t kd, uint32_t d,
			  uint32_t pa, uint32_t pb, uint32_t op)
{
	/* Each factor below 2^32, the terms below 2^49: no overflow. */
	uint64_t full = (uint64_t)(in - 1) * s + (uint64_t)(kd - 1) * d + 1 + op;
	uint64_t pads = (uint64_t)pa + pb;

	if (pads >= full || full - pads > UINT32_MAX)
		return 0;
	return (uint32_t)(full - pads);
}

static int check_convt(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_conv_transpose *at = &c->attr.convt;
	const struct vnpu_tensor_desc *x = &c->t[0], *w = &c->t[1], *y = &c->t[3];
	uint32_t g = at->groups, oh, ow, cog;
	uint64_t red, xel, t;
	int ret;

	if (at->reserved)
		return bad(k, OFF(attr.convt.reserved));
	if (x->rank != 4)
		return bad(k, TOFF(0, rank));
	if (w->rank != 4)
		return bad(k, TOFF(1, rank));
	if (y->rank != 4)
		return bad(k, TOFF(3, rank));
	if ((ret = check_window_field(k, at->stride_h, OFF(attr.convt.stride_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->stride_w, OFF(attr.convt.stride_w), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->dilation_h, OFF(attr.convt.dilation_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->dilation_w, OFF(attr.convt.dilation_w), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->pad_top, OFF(attr.convt.pad_top), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_left, OFF(attr.convt.pad_left), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_bottom, OFF(attr.convt.pad_bottom), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_right, OFF(attr.convt.pad_right), true, MAX_PAD)))
		return ret;
	/* ONNX's rule: output padding below the stride or the dilation. */
	if (at->out_pad_h >= at->stride_h && at->out_pad_h >= at->dilation_h)
		return bad(k, OFF(attr.convt.out_pad_h));
	if (at->out_pad_w >= at->stride_w && at->out_pad_w >= at->dilation_w)
		return bad(k, OFF(attr.convt.out_pad_w));
	/* W [C, KH, KW, CO/groups]: one row of taps per input channel. */
	if (!g || x->dims[3] % g)
		return bad(k, OFF(attr.convt.groups));
	if (w->dims[0] != x->dims[3])
		return bad(k, DIM_OFF(1, 0));
	if (w->dims[1] > k->lim->kernel_dim)
		return bad(k, DIM_OFF(1, 1));
	if (w->dims[2] > k->lim->kernel_dim)
		return bad(k, DIM_OFF(1, 2));
	cog = w->dims[3];
	/* At most W's element count (dims[0] is C): no overflow. */
	red = (uint64_t)w->dims[1] * w->dims[2] * (x->dims[3] / g);
	if (red > k->lim->reduction)
		return bad(k, DIM_OFF(1, 0));
	oh = convt_out(x->dims[1], at->stride_h, w->dims[1], at->dilation_h,
		       at->pad_top, at->pad_bottom, at->out_pad_h);
	ow = convt_out(x->dims[2], at->stride_w, w->dims[2], at->dilation_w,
		       at->pad_left, at->pad_right, at->out_pad_w);
	if (y->dims[0] != x->dims[0])
		return bad(k, DIM_OFF(3, 0));
	if (!oh || y->dims[1] != oh)
		return bad(k, DIM_OFF(3, 1));
	if (!ow || y->dims[2] != ow)
		return bad(k, DIM_OFF(3, 2));
	if ((uint64_t)cog * g != y->dims[3])
		return bad(k, DIM_OFF(3, 3));
	/*
	 * Per-channel weight scales run along the output channel, which
	 * is one axis of W only without groups.
	 */
	if (w->quant == VNPU_QUANT_CHANNEL && g != 1)
		return bad(k, TOFF(1, quant));
	ret = check_mm_types(k, 3, 3);
	if (ret)
		return ret;
	ret = check_bias(k, y->dims[3]);
	if (ret)
		return ret;
	/*
	 * Work: every element of x meets every tap of its group's outputs,
	 * and every output element takes the epilogue (strides and padding
	 * can make Y far larger than the MACs).  info->macs holds Y's
	 * element count here (check_ops).
	 */
	xel = (uint64_t)x->dims[0] * x->dims[1] * x->dims[2] * x->dims[3];
	if (__builtin_mul_overflow(xel, (uint64_t)w->dims[1] * w->dims[2], &t) ||
	    __builtin_mul_overflow(t, (uint64_t)cog, &t) ||
	    __builtin_add_overflow(t, k->info->macs, &k->info->macs))
		return bad(k, 0);
	return 0;
}

static int ref_convt(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     bool quant, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv_transpose *at = &c->attr.convt;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t kh = w->dims[1], kw = w->dims[2], cog = w->dims[3];
	uint32_t cig = x->dims[3] / at->groups;
	uint32_t idx[4] = { 0 }, ny = 0;
	float alpha = f32_from_bits(c->act_alpha);
	float beta = vnpu_act_beta(c);
	struct vnpu_taps_axis ay, ax;
	struct vnpu_taps ty = { 0 }, tx = { 0 };

	vnpu_taps_axis_init(&ay, kh, at->dilation_h, at->stride_h, x->dims[1],
			    at->pad_top);
	vnpu_taps_axis_init(&ax, kw, at->dilation_w, at->stride_w, x->dims[2],
			    at->pad_left);
	do {
		uint32_t b = idx[0], co = idx[3], g = co / cog, mo = co % cog;
		uint32_t a, bb, ci;
		uint32_t acc = 0;
		float facc = 0.0f;

		/* The taps reaching this pixel, never the whole kernel. */
		if (!idx[2] && !idx[3]) {
			vnpu_taps_of(&ay, idx[1], &ty);
			ny = ty.n;
		}
		if (!idx[3]) {
			tx.n = 0;
			if (ny)
				vnpu_taps_of(&ax, idx[2], &tx);
		}
		if (vnpu_run_tick(rc, (uint64_t)ny * tx.n * cig + 1))
			return -ECANCELED;
		for (a = 0; tx.n && a < ny; a++) {
			uint32_t ky = ty.first + a * ty.period;
			uint32_t iy = ty.ifirst - a * ty.istep;

			for (bb = 0; bb < tx.n; bb++) {
				uint32_t kx = tx.first + bb * tx.period;
				uint32_t ix = tx.ifirst - bb * tx.istep;

				for (ci = 0; ci < cig; ci++) {
					uint32_t xi[4] = { b, iy, ix, g * cig + ci };
					uint32_t wi[4] = { g * cig + ci, ky, kx, mo };

					if (quant)
						acc += (uint32_t)((ld_raw(x, tv_at(x, xi)) - x->zp) *
								  (ld_raw(w, tv_at(w, wi)) - vnpu_tv_zp(w, mo)));
					else
						facc += vnpu_ld(x, tv_at(x, xi), 0) *
							vnpu_ld(w, tv_at(w, wi), 0);
				}
			}
		}
		if (quant) {
			struct vnpu_epi e;

			if (bias->p)
				acc += (uint32_t)ld_raw(bias, bias->p + co * bias->st[0] * 4);
			/* W's per-channel scales (groups == 1): channel co. */
			vnpu_epi_init(&e, c, x, w, y, co);
			vnpu_epi_store(&e, y, tv_at(y, idx), (int32_t)acc, co);
		} else {
			facc = vnpu_bias_apply(bias, co, facc);
			vnpu_st(y, tv_at(y, idx), vnpu_act_ab(c->act, alpha, beta, facc),
				y->quant == VNPU_QUANT_CHANNEL ? co : 0, c->round);
		}
	} while (idx_next(idx, y->dims, 4));
	return 0;
}
