// SPDX-License-Identifier: MIT
/*
 * Engine paths for CONV_TRANSPOSE, REDUCE and SOFTMAX.
 *
 * All keep the reference's order of summation for every output element,
 * so they agree with it bit for bit (integer and float alike); the speed
 * comes from what the reference spends per term: no index vectors, no
 * per-element dtype dispatch, and CONV_TRANSPOSE accumulating all output
 * channels of a pixel at once, a loop over contiguous weights that the
 * compiler vectorizes (-ffp-contract=off keeps it from fusing a
 * multiply-add the reference does not).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_taps.h"

/* Advance @idx over @dims (row-major); false after the last one. */
static bool next_index(uint32_t *idx, const uint32_t *dims, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return true;
		idx[i] = 0;
	}
	return false;
}

/* ---- CONV_TRANSPOSE ----------------------------------------------------- */

struct convt_geo {
	uint32_t n, h, w, c, oh, ow, co, kh, kw, cig, cog, groups;
	struct vnpu_taps_axis ay, ax;
};

/*
 * The taps of one output coordinate in tap order (vnpu_taps.h): @kk the
 * taps, @ii the input coordinates they read.  Costs its taps, not the
 * kernel.
 */
static uint32_t convt_taps(const struct vnpu_taps_axis *a, uint32_t o,
			   uint32_t *kk, uint32_t *ii)
{
	struct vnpu_taps t;
	uint32_t j;

	vnpu_taps_of(a, o, &t);
	for (j = 0; j < t.n; j++) {
		kk[j] = t.first + j * t.period;
		ii[j] = t.ifirst - j * t.istep;
	}
	return t.n;
}

/*
 * One tap for one group: acc[mo] += x[k] * w[k * ws + mo] for k in input
 * channel order, all output channels at once (per element the order of
 * the reference).  Cloned per ISA: it is the whole inner loop.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void tap_f32(float *restrict acc, const float *restrict x,
		    const float *restrict w, uint32_t cig, uint32_t cog,
		    size_t ws)
{
	uint32_t k, mo;

	for (k = 0; k < cig; k++) {
		const float *wr = w + k * ws;
		float xv = x[k];

		for (mo = 0; mo < cog; mo++)
			acc[mo] += xv * wr[mo];
	}
}

/* tap_f32() on zero-point-corrected integers, modulo 2^32 like the reference. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void tap_i32(uint32_t *restrict acc, const int32_t *restrict x,
		    const int32_t *restrict w, uint32_t cig, uint32_t cog,
		    size_t ws)
{
	uint32_t k, mo;

	for (k = 0; k < cig; k++) {
		const int32_t *wr = w + k * ws;
		uint32_t xv = (uint32_t)x[k];

		for (mo = 0; mo < cog; mo++)
			acc[mo] += xv * (uint32_t)wr[mo];
	}
}

/* Output channels up to which convt_rows() runs taps over pixels, not channels. */
#define CONVT_NARROW_CO	8
/* Largest output row (elements) or x-tap table convt_rows() keeps in scratch. */
#define CONVT_ROW_MAX	(1u << 18)

struct convt_f32 {
	const float *wf, *bf, *sf;	/* W packed [C][KH][KW][COg]; bias */
	float alpha, beta;
	uint32_t *tky, *tiy;		/* the y taps of one output row */
	float *xf;			/* one pixel's channels, gathered */
};

/*
 * One input channel's term of one x tap for every output column of a
 * row: acc[ox * co + m] += x[xo[ox]] * w[wo[ox] + m], columns whose tap
 * is missing (xo -1) skipped.  Single-channel outputs get a loop of
 * their own: it is the whole of a detection head's map.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void convt_narrow(float *restrict acc, const float *restrict x,
			 const float *restrict w, const int64_t *restrict xo,
			 const uint32_t *restrict wo, uint32_t ow, uint32_t co,
			 uint32_t cog)
{
	uint32_t ox, m;

	if (cog == 1 && co == 1) {
		for (ox = 0; ox < ow; ox++)
			if (xo[ox] >= 0)
				acc[ox] += x[xo[ox]] * w[wo[ox]];
		return;
	}
	for (ox = 0; ox < ow; ox++) {
		float xv;

		if (xo[ox] < 0)
			continue;
		xv = x[xo[ox]];
		for (m = 0; m < cog; m++)
			acc[(size_t)ox * co + m] += xv * w[wo[ox] + m];
	}
}

/*
 * Bias (or scale and shift) and activation over one pixel's @n outputs in
 * place: vnpu_act_ab()'s operations, the clamps written out so the loops
 * vectorize.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void convt_epilogue(unsigned int act, const struct convt_f32 *f,
			   float *restrict v, uint32_t n)
{
	const float *restrict bf = f->bf, *restrict sf = f->sf;
	float alpha = f->alpha;
	uint32_t m;

	/* No "+ 0.0f" without a bias: it would turn -0 into +0. */
	if (sf)
		for (m = 0; m < n; m++)
			v[m] = v[m] * sf[m] + bf[m];
	else if (bf)
		for (m = 0; m < n; m++)
			v[m] += bf[m];
	switch (act) {
	case VNPU_ACT_NONE:
		break;
	case VNPU_ACT_RELU:
		for (m = 0; m < n; m++)
			v[m] = v[m] > 0.0f ? v[m] : 0.0f;
		break;
	case VNPU_ACT_RELU6:
		for (m = 0; m < n; m++)
			v[m] = v[m] > 6.0f ? 6.0f : v[m] > 0.0f ? v[m] : 0.0f;
		break;
	case VNPU_ACT_LEAKY_RELU:
		for (m = 0; m < n; m++)
			v[m] = v[m] >= 0.0f ? v[m] : v[m] * alpha;
		break;
	default:
		for (m = 0; m < n; m++)
			v[m] = vnpu_act_ab(act, alpha, f->beta, v[m]);
		break;
	}
}

/*
 * One y tap (X row @xr, W at its ky @wa) for a whole output row of a
 * narrow output: for the j-th x tap of every column in turn, channel by
 * channel.  True when aborted.
 */
static bool convt_row_narrow(const struct convt_geo *g, const struct vnpu_tv *x,
			     const float *xr, const float *wa, const int64_t *xoff,
			     const uint32_t *woff, uint32_t maxnx, float *acc,
			     struct vnpu_run_ctx *rc)
{
	size_t ws = (size_t)g->kh * g->kw * g->cog;
	uint32_t j, k;

	for (j = 0; j < maxnx; j++) {
		const int64_t *xo = xoff + (size_t)j * g->ow;
		const uint32_t *wo = woff + (size_t)j * g->ow;

		for (k = 0; k < g->c; k++) {
			if (vnpu_run_tick(rc, (uint64_t)g->ow * g->cog))
				return true;
			convt_narrow(acc + (k / g->cig) * g->cog,
				     xr + (int64_t)k * x->st[3], wa + k * ws, xo, wo,
				     g->ow, g->co, g->cog);
		}
	}
	return false;
}

/*
 * fp32 X and Y: one output row at a time, the x taps of every output
 * column looked up once.  Each output element still takes its terms in
 * the reference's order (ky, then kx, then input channel), so narrow
 * outputs (a detection head's single map) can run the channel loop
 * outermost and the columns innermost: independent accumulators instead
 * of one serial dot product per pixel.
 */
static int convt_rows(const struct vnpu_cmd_compute *c,
		      const struct convt_geo *g, const struct convt_f32 *f,
		      struct vnpu_tv *t, struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	const float *xp = (const float *)(void *)x->p;
	float *yp = (float *)(void *)y->p;
	size_t ws = (size_t)g->kh * g->kw * g->cog, kw = g->kw;
	uint32_t *ntx, *tkx, *tix, *act, nact = 0, maxnx = 0, b, oy, ox, a, i, j, k, m;
	uint64_t sumnx = 0;
	bool narrow;
	int64_t *xoff = NULL;
	uint32_t *woff = NULL;
	float *acc;
	int ret = -ENOMEM;

	ntx = vnpu_run_alloc(rc, 4ull * g->ow);
	tkx = vnpu_run_alloc(rc, 4ull * g->ow * kw);
	tix = vnpu_run_alloc(rc, 4ull * g->ow * kw);
	acc = vnpu_run_alloc(rc, 4ull * g->ow * g->co);
	act = vnpu_run_alloc(rc, 4ull * g->ow);
	if (!ntx || !tkx || !tix || !acc || !act)
		goto out;
	for (ox = 0; ox < g->ow; ox++) {
		ntx[ox] = convt_taps(&g->ax, ox, tkx + ox * kw, tix + ox * kw);
		maxnx = ntx[ox] > maxnx ? ntx[ox] : maxnx;
		sumnx += ntx[ox];
		if (ntx[ox])
			act[nact++] = ox;
	}
	/*
	 * The narrow loops visit every column for every tap index: only
	 * where most columns have most taps, or strides and dilations that
	 * leave most columns without them would cost far more than the
	 * taps there are.  The wide loop visits the columns with taps only.
	 */
	narrow = g->co <= CONVT_NARROW_CO && 2 * sumnx >= (uint64_t)maxnx * g->ow;
	if (narrow && maxnx) {
		/* By tap then column; a column without its j-th tap gets -1. */
		xoff = vnpu_run_alloc(rc, 8ull * g->ow * maxnx);
		woff = vnpu_run_alloc(rc, 4ull * g->ow * maxnx);
		if (!xoff || !woff)
			goto out;
		for (j = 0; j < maxnx; j++)
			for (ox = 0; ox < g->ow; ox++) {
				bool on = j < ntx[ox];

				xoff[(size_t)j * g->ow + ox] = on ?
					(int64_t)tix[ox * kw + j] * x->st[2] : -1;
				woff[(size_t)j * g->ow + ox] = on ?
					tkx[ox * kw + j] * g->cog : 0;
			}
	}
	for (b = 0; b < g->n; b++) {
		for (oy = 0; oy < g->oh; oy++) {
			uint32_t ny = maxnx ? convt_taps(&g->ay, oy, f->tky, f->tiy) : 0;
			float *yr = yp + (int64_t)b * y->st[0] + (int64_t)oy * y->st[1];

			if (vnpu_run_tick(rc, (uint64_t)g->ow * g->co))
				goto cancel;
			memset(acc, 0, 4ull * g->ow * g->co);
			for (a = 0; a < ny; a++) {
				const float *xr = xp + (int64_t)b * x->st[0] +
						  (int64_t)f->tiy[a] * x->st[1];
				const float *wa = f->wf + (size_t)f->tky[a] * kw * g->cog;

				if (narrow) {
					if (convt_row_narrow(g, x, xr, wa, xoff, woff, maxnx,
							     acc, rc))
						goto cancel;
					continue;
				}
				for (i = 0; i < nact; i++) {
					ox = act[i];
					for (j = 0; j < ntx[ox]; j++) {
						const float *px = xr + (int64_t)tix[ox * kw + j] * x->st[2];
						uint32_t gi;

						if (vnpu_run_tick(rc, (uint64_t)g->c * g->cog))
							goto cancel;
						if (x->st[3] != 1) {
							for (k = 0; k < g->c; k++)
								f->xf[k] = px[(int64_t)k * x->st[3]];
							px = f->xf;
						}
						for (gi = 0; gi < g->groups; gi++) {
							uint32_t cin = gi * g->cig;

							tap_f32(acc + (size_t)ox * g->co + (size_t)gi * g->cog,
								px + cin,
								wa + cin * ws + (size_t)tkx[ox * kw + j] * g->cog,
								g->cig, g->cog, ws);
						}
					}
				}
			}
			for (ox = 0; ox < g->ow; ox++) {
				float *yo = yr + (int64_t)ox * y->st[2];

				convt_epilogue(c->act, f, acc + (size_t)ox * g->co, g->co);
				if (y->st[3] == 1) {
					memcpy(yo, acc + (size_t)ox * g->co, 4ull * g->co);
					continue;
				}
				for (m = 0; m < g->co; m++)
					yo[(int64_t)m * y->st[3]] = acc[(size_t)ox * g->co + m];
			}
		}
	}
	ret = 0;
	goto out;
cancel:
	ret = -ECANCELED;
out:
	vnpu_run_free(rc, woff);
	vnpu_run_free(rc, xoff);
	vnpu_run_free(rc, act);
	vnpu_run_free(rc, acc);
	vnpu_run_free(rc, tix);
	vnpu_run_free(rc, tkx);
	vnpu_run_free(rc, ntx);
	return ret;
}

int vnpu_eng_convt(const struct vnpu_cmd_compute *c,
		   const struct vnpu_op_info *info, struct vnpu_tv *t,
		   struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv_transpose *at = &c->attr.convt;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	bool quant = info->quantized;
	struct convt_geo g = {
		.n = x->dims[0], .h = x->dims[1], .w = x->dims[2], .c = x->dims[3],
		.oh = y->dims[1], .ow = y->dims[2], .co = y->dims[3],
		.kh = w->dims[1], .kw = w->dims[2], .cog = w->dims[3],
		.groups = at->groups,
	};
	float alpha, beta = vnpu_act_beta(c);
	uint32_t *tky = NULL, *tiy = NULL, *tkx = NULL, *tix = NULL;
	float *wf = NULL, *xf = NULL, *facc = NULL, *bf = NULL, *sf = NULL;
	int32_t *wi = NULL, *xi = NULL, *iacc = NULL, *bi = NULL;
	struct vnpu_epi *epi = NULL;
	uint32_t idx[4] = { 0 }, ci, co, ny = 0;
	uint64_t wel = (uint64_t)g.c * g.kh * g.kw * g.cog;
	int ret = -ENOMEM;

	memcpy(&alpha, &c->act_alpha, 4);
	g.cig = g.c / g.groups;
	vnpu_taps_axis_init(&g.ay, g.kh, at->dilation_h, at->stride_h, g.h,
			    at->pad_top);
	vnpu_taps_axis_init(&g.ax, g.kw, at->dilation_w, at->stride_w, g.w,
			    at->pad_left);
	tky = vnpu_run_alloc(rc, 4ull * g.kh);
	tiy = vnpu_run_alloc(rc, 4ull * g.kh);
	tkx = vnpu_run_alloc(rc, 4ull * g.kw);
	tix = vnpu_run_alloc(rc, 4ull * g.kw);
	if (!tky || !tiy || !tkx || !tix)
		goto out;
	/* W packed dense [C][KH][KW][COg], in the accumulator's type. */
	if (quant) {
		wi = vnpu_run_alloc(rc, 4 * wel);
		xi = vnpu_run_alloc(rc, 4ull * g.c);
		iacc = vnpu_run_alloc(rc, 4ull * g.co);
		epi = vnpu_run_alloc(rc, sizeof(*epi) * g.co);
		if (!wi || !xi || !iacc || !epi)
			goto out;
	} else {
		wf = vnpu_run_alloc(rc, 4 * wel);
		xf = vnpu_run_alloc(rc, 4ull * g.c);
		facc = vnpu_run_alloc(rc, 4ull * g.co);
		if (!wf || !xf || !facc)
			goto out;
	}
	for (ci = 0; ci < g.c; ci++) {
		uint32_t wx[4] = { ci, 0, 0, 0 };

		for (wx[1] = 0; wx[1] < g.kh; wx[1]++)
			for (wx[2] = 0; wx[2] < g.kw; wx[2]++) {
				/* One input channel's taps can be all of W. */
				if (vnpu_run_tick(rc, g.cog)) {
					ret = -ECANCELED;
					goto out;
				}
				for (wx[3] = 0; wx[3] < g.cog; wx[3]++) {
					const uint8_t *p = w->p +
						((int64_t)wx[0] * w->st[0] + (int64_t)wx[1] * w->st[1] +
						 (int64_t)wx[2] * w->st[2] + (int64_t)wx[3] * w->st[3]) *
						w->esize;
					size_t o = (((size_t)ci * g.kh + wx[1]) * g.kw + wx[2]) * g.cog + wx[3];

					if (quant) {
						int32_t raw = w->dtype == VNPU_DT_INT8 ?
							      (int8_t)*p : *p;

						wi[o] = raw - vnpu_tv_zp(w, wx[3]);
					} else {
						wf[o] = vnpu_ld(w, p, 0);
					}
				}
			}
	}
	if (bias->p) {
		/* Float: shifts (or the bias), then scales for [2, CO]. */
		bf = quant ? NULL : vnpu_run_alloc(rc, 4ull * g.co *
						   (bias->rank == 2 ? 2 : 1));
		bi = quant ? vnpu_run_alloc(rc, 4ull * g.co) : NULL;
		if (!bf && !bi)
			goto out;
		if (bf && bias->rank == 2)
			sf = bf + g.co;
		for (co = 0; co < g.co; co++) {
			const uint8_t *p = bias->p + (int64_t)co * bias->st[0] * bias->esize;
			float one;

			if (quant)
				memcpy(&bi[co], p, 4);
			else
				vnpu_bias_at(bias, co, sf ? &sf[co] : &one, &bf[co]);
		}
	}
	if (quant)
		for (co = 0; co < g.co; co++)
			vnpu_epi_init(&epi[co], c, x, w, y, co);
	if (!quant && x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_FP32 &&
	    (uint64_t)g.ow * g.co <= CONVT_ROW_MAX &&
	    (uint64_t)g.ow * g.kw <= CONVT_ROW_MAX) {
		struct convt_f32 f = {
			.wf = wf, .bf = bf, .sf = sf, .alpha = alpha, .beta = beta,
			.tky = tky, .tiy = tiy, .xf = xf,
		};

		ret = convt_rows(c, &g, &f, t, rc);
		goto out;
	}
	do {
		uint32_t b = idx[0], oy = idx[1], ox = idx[2];
		uint32_t nx = 0, a, bb, gi;

		if (vnpu_run_tick(rc, g.co)) {
			ret = -ECANCELED;
			goto out;
		}
		if (ox == 0)
			ny = convt_taps(&g.ay, oy, tky, tiy);
		/* An output pixel costs its taps: none without both. */
		if (ny)
			nx = convt_taps(&g.ax, ox, tkx, tix);
		if (quant)
			memset(iacc, 0, 4ull * g.co);
		else
			memset(facc, 0, 4ull * g.co);
		/* Per output element: ky, kx, ci order, as the reference. */
		for (a = 0; nx && a < ny; a++) {
			for (bb = 0; bb < nx; bb++) {
				const uint8_t *px = x->p +
					((int64_t)b * x->st[0] + (int64_t)tiy[a] * x->st[1] +
					 (int64_t)tix[bb] * x->st[2]) * x->esize;

				/* One tap: at most W's elements of work. */
				if (vnpu_run_tick(rc, (uint64_t)g.c * g.cog)) {
					ret = -ECANCELED;
					goto out;
				}
				for (ci = 0; ci < g.c; ci++) {
					const uint8_t *p = px + (int64_t)ci * x->st[3] * x->esize;

					if (!quant && x->dtype == VNPU_DT_FP32)
						memcpy(&xf[ci], p, 4);
					else if (quant)
						xi[ci] = (x->dtype == VNPU_DT_INT8 ?
							  (int8_t)*p : *p) - x->zp;
					else
						xf[ci] = vnpu_ld(x, p, 0);
				}
				for (gi = 0; gi < g.groups; gi++) {
					uint32_t cin = gi * g.cig;
					size_t wo = (((size_t)cin * g.kh + tky[a]) * g.kw +
						     tkx[bb]) * g.cog;
					size_t ws = (size_t)g.kh * g.kw * g.cog;

					if (quant)
						tap_i32((uint32_t *)iacc + (size_t)gi * g.cog,
							xi + cin, wi + wo, g.cig, g.cog, ws);
					else
						tap_f32(facc + (size_t)gi * g.cog, xf + cin,
							wf + wo, g.cig, g.cog, ws);
				}
			}
		}
		for (co = 0; co < g.co; co++) {
			uint8_t *py;

			idx[3] = co;
			py = y->p + ((int64_t)idx[0] * y->st[0] + (int64_t)idx[1] * y->st[1] +
				     (int64_t)idx[2] * y->st[2] + (int64_t)co * y->st[3]) *
				    y->esize;
			if (quant) {
				uint32_t acc = (uint32_t)iacc[co];

				if (bi)
					acc += (uint32_t)bi[co];
				vnpu_epi_store(&epi[co], y, py, (int32_t)acc, co);
			} else {
				float v = facc[co];

				if (sf)
					v = v * sf[co] + bf[co];
				else if (bf)
					v += bf[co];
				vnpu_st(y, py, vnpu_act_ab(c->act, alpha, beta, v),
					y->quant == VNPU_QUANT_CHANNEL ? co : 0, c->round);
			}
		}
		idx[3] = 0;
	} while (next_index(idx, y->dims, 3));
	ret = 0;
out:
	vnpu_run_free(rc, bi);
	vnpu_run_free(rc, bf);
	vnpu_run_free(rc, epi);
	vnpu_run_free(rc, iacc);
	vnpu_run_free(rc, xi);
	vnpu_run_free(rc, wi);
	vnpu_run_free(rc, facc);
	vnpu_run_free(rc, xf);
	vnpu_run_free(rc, wf);
	vnpu_run_free(rc, tix);
	vnpu_run_free(rc, tkx);
	vnpu_run_free(rc, tiy);
	vnpu_run_free(rc, tky);
	return ret;
}

/* ---- REDUCE -------------------------------------------------------------- */

/* Widest kept innermost dim reduce_rows() takes (its scratch: 12 B each). */
#define REDUCE_ROW_MAX	(1u << 16)

/*
 * X's innermost dim kept and contiguous (NHWC means over H, W; maxima
 * over a batch): one row of outputs at a time, every reduced element
 * folded into all of them in one contiguous loop.  Each output still
 * takes its terms in the reference's row-major order.
 */
static int reduce_rows(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		       struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_reduce *at = &c->attr.reduce;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	const float *xp = (const float *)(void *)x->p;
	int r = x->rank, nr = 0, no = 0, i;
	uint32_t n = x->dims[r - 1], rd[VNPU_MAX_RANK], od[VNPU_MAX_RANK], j;
	int64_t rs[VNPU_MAX_RANK], os[VNPU_MAX_RANK], ys[VNPU_MAX_RANK];
	uint32_t oi[VNPU_MAX_RANK] = { 0 };
	bool minmax = at->kind == VNPU_REDUCE_MAX || at->kind == VNPU_REDUCE_MIN;
	bool sq = at->kind == VNPU_REDUCE_L2 || at->kind == VNPU_REDUCE_SUM_SQUARE;
	bool ismax = at->kind == VNPU_REDUCE_MAX;
	double *acc = vnpu_run_alloc(rc, 8ull * n);
	float *m = vnpu_run_alloc(rc, 4ull * n);
	uint64_t cnt = 1;
	int ret = 0;

	if (!acc || !m) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r - 1; i++) {
		if ((at->axes >> i) & 1) {
			rd[nr] = x->dims[i];
			rs[nr++] = x->st[i];
			cnt *= x->dims[i];
		} else {
			od[no] = x->dims[i];
			ys[no] = y->st[i];
			os[no++] = x->st[i];
		}
	}
	do {
		uint32_t ri[VNPU_MAX_RANK] = { 0 };
		int64_t base = 0, ybase = 0;
		bool first = true;

		for (i = 0; i < no; i++) {
			base += (int64_t)oi[i] * os[i];
			ybase += (int64_t)oi[i] * ys[i];
		}
		memset(acc, 0, 8ull * n);
		do {
			int64_t off = base;
			const float *p;

			/* One row of X between polls: at most 2^16 elements. */
			if (vnpu_run_tick(rc, n)) {
				ret = -ECANCELED;
				goto out;
			}
			for (i = 0; i < nr; i++)
				off += (int64_t)ri[i] * rs[i];
			p = xp + off;
			if (!minmax && !sq) {
				for (j = 0; j < n; j++)
					acc[j] += p[j];
			} else if (!minmax) {
				for (j = 0; j < n; j++)
					acc[j] += (double)p[j] * p[j];
			} else if (first) {
				memcpy(m, p, 4ull * n);
			} else {
				for (j = 0; j < n; j++)
					if (!isnan(m[j]) &&
					    (isnan(p[j]) || (ismax ? p[j] > m[j] : p[j] < m[j])))
						m[j] = p[j];
			}
			first = false;
		} while (next_index(ri, rd, nr));
		for (j = 0; j < n; j++) {
			double v = acc[j];

			if (at->kind == VNPU_REDUCE_MEAN)
				v /= (double)cnt;
			else if (at->kind == VNPU_REDUCE_L2)
				v = sqrt(v);
			vnpu_st(y, y->p + (ybase + (int64_t)j * y->st[r - 1]) * y->esize,
				minmax ? m[j] : (float)v, 0, c->round);
		}
		if (vnpu_run_tick(rc, n)) {
			ret = -ECANCELED;
			goto out;
		}
	} while (next_index(oi, od, no));
out:
	vnpu_run_free(rc, m);
	vnpu_run_free(rc, acc);
	return ret;
}

/*
 * fp32 X: the reference's row-major walk of the reduced dims with element
 * offsets instead of index vectors and loads, the innermost reduced dim
 * as a plain strided loop.
 */
int vnpu_eng_reduce(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_reduce *at = &c->attr.reduce;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	const float *xp = (const float *)(void *)x->p;
	uint32_t rd[VNPU_MAX_RANK], od[VNPU_MAX_RANK];
	int64_t rs[VNPU_MAX_RANK], os[VNPU_MAX_RANK], ys[VNPU_MAX_RANK];
	uint32_t oi[VNPU_MAX_RANK] = { 0 };
	int nr = 0, no = 0, i;
	uint64_t cnt = 1;
	bool minmax = at->kind == VNPU_REDUCE_MAX || at->kind == VNPU_REDUCE_MIN;
	bool sq = at->kind == VNPU_REDUCE_L2 || at->kind == VNPU_REDUCE_SUM_SQUARE;
	bool ismax = at->kind == VNPU_REDUCE_MAX;

	if (!((at->axes >> (x->rank - 1)) & 1) && x->st[x->rank - 1] == 1 &&
	    x->dims[x->rank - 1] <= REDUCE_ROW_MAX)
		return reduce_rows(c, t, rc);
	for (i = 0; i < x->rank; i++) {
		if ((at->axes >> i) & 1) {
			rd[nr] = x->dims[i];
			rs[nr++] = x->st[i];
			cnt *= x->dims[i];
		} else {
			od[no] = x->dims[i];
			ys[no] = y->st[i];
			os[no++] = x->st[i];
		}
	}
	do {
		uint32_t ri[VNPU_MAX_RANK] = { 0 };
		int64_t base = 0, ybase = 0, inner = rs[nr - 1];
		uint32_t n = rd[nr - 1], j;
		double acc = 0.0;
		float m = 0.0f;
		bool first = true;

		if (vnpu_run_tick(rc, cnt + 1))
			return -ECANCELED;
		for (i = 0; i < no; i++) {
			base += (int64_t)oi[i] * os[i];
			ybase += (int64_t)oi[i] * ys[i];
		}
		do {
			int64_t off = base;
			const float *p;

			for (i = 0; i < nr - 1; i++)
				off += (int64_t)ri[i] * rs[i];
			p = xp + off;
			if (!minmax && !sq) {
				for (j = 0; j < n; j++)
					acc += p[(int64_t)j * inner];
			} else if (!minmax) {
				for (j = 0; j < n; j++) {
					double v = p[(int64_t)j * inner];

					acc += v * v;
				}
			} else {
				for (j = 0; j < n; j++) {
					float v = p[(int64_t)j * inner];

					if (first) {
						m = v;
						first = false;
					} else if (!isnan(m) &&
						   (isnan(v) || (ismax ? v > m : v < m))) {
						m = v;
					}
				}
			}
		} while (next_index(ri, rd, nr - 1));
		if (at->kind == VNPU_REDUCE_MEAN)
			acc /= (double)cnt;
		else if (at->kind == VNPU_REDUCE_L2)
			acc = sqrt(acc);
		vnpu_st(y, y->p + ybase * y->esize, minmax ? m : (float)acc, 0,
			c->round);
	} while (next_index(oi, od, no));
	return 0;
}

/* ---- SOFTMAX ------------------------------------------------------------- */

/*
 * One row: the reference's arithmetic exactly (its maximum, expf() of the
 * same differences, a binary32 sum in index order, one division per
 * element), so the results agree bit for bit.  What the reference spends
 * on index vectors and per-element dtype dispatch is gone; a contiguous
 * row is read in place.
 */
/* The end of the chunk from @i, or 0 if the command was stopped. */
static uint32_t row_chunk(struct vnpu_run_ctx *rc, uint32_t i, uint32_t n)
{
	uint32_t end = n - i > VNPU_ROW_CHUNK ? i + VNPU_ROW_CHUNK : n;

	return vnpu_run_tick(rc, end - i) ? 0 : end;
}

/* Each pass polls every VNPU_ROW_CHUNK elements; false if stopped. */
static bool softmax_row(float *yp, int64_t ys, const float *xp, int64_t xs,
			uint32_t n, float *e, struct vnpu_run_ctx *rc)
{
	float mx = -INFINITY, sum = 0.0f;
	uint32_t i, end;

	if (xs != 1) {
		for (i = 0; i < n; i++)
			e[i] = xp[(int64_t)i * xs];
		xp = e;
	}
	for (i = 0; i < n; i = end) {
		end = row_chunk(rc, i, n);
		if (!end)
			return false;
		for (; i < end; i++)
			mx = xp[i] > mx ? xp[i] : mx;
	}
	for (i = 0; i < n; i = end) {
		end = row_chunk(rc, i, n);
		if (!end)
			return false;
		for (; i < end; i++) {
			e[i] = expf(xp[i] - mx);
			sum += e[i];
		}
	}
	for (i = 0; i < n; i = end) {
		end = row_chunk(rc, i, n);
		if (!end)
			return false;
		if (ys == 1) {
			for (; i < end; i++)
				yp[i] = e[i] / sum;
		} else {
			for (; i < end; i++)
				yp[(int64_t)i * ys] = e[i] / sum;
		}
	}
	return true;
}

int vnpu_eng_softmax(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax];
	uint32_t od[VNPU_MAX_RANK], oi[VNPU_MAX_RANK] = { 0 };
	int64_t xo[VNPU_MAX_RANK], yo[VNPU_MAX_RANK];
	int no = 0, i;
	float *e = vnpu_run_alloc(rc, sizeof(float) * n);

	if (!e)
		return -ENOMEM;
	for (i = 0; i < x->rank; i++) {
		if (i == (int)ax)
			continue;
		od[no] = x->dims[i];
		xo[no] = x->st[i];
		yo[no++] = y->st[i];
	}
	do {
		int64_t xb = 0, yb = 0;

		for (i = 0; i < no; i++) {
			xb += (int64_t)oi[i] * xo[i];
			yb += (int64_t)oi[i] * yo[i];
		}
		/* In place (Y over X) reads a row whole before writing it. */
		if (!softmax_row((float *)(void *)y->p + yb, y->st[ax],
				 (const float *)(void *)x->p + xb, x->st[ax], n, e, rc)) {
			vnpu_run_free(rc, e);
			return -ECANCELED;
		}
	} while (next_index(oi, od, no));
	vnpu_run_free(rc, e);
	return 0;
}
