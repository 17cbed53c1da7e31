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
#include "vnpu_ref_qlinear.h"
#include "vnpu_ref_softmax.h"
#include "vnpu_taps.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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
 * One row: the reference's arithmetic exactly (its maximum, the
 * exponential of vnpu_ref_softmax.h of the same differences, the same
 * eight partial sums in index order, one division per element), so the
 * results agree bit for bit.  A contiguous row is read in place, a
 * strided one gathered once; with AVX2 eight lanes run the
 * exponential as the scalar does, element i in lane i % 8 of the sum.
 */
/* The end of the chunk from @i, or 0 if the command was stopped. */
static uint32_t row_chunk(struct vnpu_run_ctx *rc, uint32_t i, uint32_t n)
{
	uint32_t end = n - i > VNPU_ROW_CHUNK ? i + VNPU_ROW_CHUNK : n;

	return vnpu_run_tick(rc, end - i) ? 0 : end;
}

/* The chunks start at multiples of 8: lane j of a vector is sum j. */
_Static_assert(VNPU_ROW_CHUNK % VNPU_SOFTMAX_LANES == 0, "softmax chunk");

#if defined(__x86_64__) && defined(__GNUC__)
#define SM_AVX2	__attribute__((target("avx2")))

/* vnpu_softmax_exp() of eight lanes, operation for operation. */
SM_AVX2 static inline __m256 sm_exp8(__m256 x)
{
	const __m256 shift = _mm256_set1_ps(VNPU_SOFTMAX_SHIFT);
	__m256 c = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(VNPU_SOFTMAX_EXP_LO)),
				 _mm256_set1_ps(VNPU_SOFTMAX_EXP_HI));
	__m256 kf = _mm256_add_ps(_mm256_mul_ps(c, _mm256_set1_ps(VNPU_SOFTMAX_LOG2E)), shift);
	__m256 r, p;
	__m256i k, k1;
	int i;

	kf = _mm256_sub_ps(kf, shift);
	r = _mm256_sub_ps(c, _mm256_mul_ps(kf, _mm256_set1_ps(VNPU_SOFTMAX_LN2_HI)));
	r = _mm256_sub_ps(r, _mm256_mul_ps(kf, _mm256_set1_ps(VNPU_SOFTMAX_LN2_LO)));
	p = _mm256_set1_ps(vnpu_softmax_exp_c[0]);
	for (i = 1; i < 6; i++)
		p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(vnpu_softmax_exp_c[i]));
	p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
	p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.0f));
	k = _mm256_cvtps_epi32(kf);
	k1 = _mm256_srai_epi32(k, 1);
	k = _mm256_sub_epi32(k, k1);
	p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_add_epi32(k1, _mm256_set1_epi32(127)), 23)));
	p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23)));
	return _mm256_blendv_ps(p, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* max over x[i..end) into @mx (reference's rule: NaN never replaces it). */
SM_AVX2 static float sm_max_avx2(const float *x, uint32_t i, uint32_t end, float mx)
{
	__m256 m = _mm256_set1_ps(mx);
	float l[8];
	int j;

	/* maxps(a, b) is "a > b ? a : b", the reference's comparison. */
	for (; i + 8 <= end; i += 8)
		m = _mm256_max_ps(_mm256_loadu_ps(x + i), m);
	_mm256_storeu_ps(l, m);
	for (j = 0; j < 8; j++)
		mx = l[j] > mx ? l[j] : mx;
	for (; i < end; i++)
		mx = x[i] > mx ? x[i] : mx;
	return mx;
}

/* e[i] = exp(x[i] - mx) over [i, end), adding each into part[i % 8]. */
SM_AVX2 static void sm_exp_avx2(float *e, const float *x, uint32_t i, uint32_t end, float mx,
				float *part)
{
	__m256 acc = _mm256_loadu_ps(part), m = _mm256_set1_ps(mx);

	/* Two vectors at a time: four independent Horner chains in flight. */
	for (; i + 16 <= end; i += 16) {
		__m256 v0 = sm_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
		__m256 v1 = sm_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m));

		_mm256_storeu_ps(e + i, v0);
		_mm256_storeu_ps(e + i + 8, v1);
		acc = _mm256_add_ps(_mm256_add_ps(acc, v0), v1);
	}
	for (; i + 8 <= end; i += 8) {
		__m256 v = sm_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));

		_mm256_storeu_ps(e + i, v);
		acc = _mm256_add_ps(acc, v);
	}
	_mm256_storeu_ps(part, acc);
	for (; i < end; i++) {
		e[i] = vnpu_softmax_exp(x[i] - mx);
		part[i % VNPU_SOFTMAX_LANES] += e[i];
	}
}

SM_AVX2 static void sm_div_avx2(float *y, const float *e, uint32_t i, uint32_t end, float sum)
{
	__m256 s = _mm256_set1_ps(sum);

	for (; i + 8 <= end; i += 8)
		_mm256_storeu_ps(y + i, _mm256_div_ps(_mm256_loadu_ps(e + i), s));
	for (; i < end; i++)
		y[i] = e[i] / sum;
}

/* Axis steps between two polls in sm_cols_avx2(): 4096 elements. */
#define SM_COL_STEPS	(VNPU_ROW_CHUNK / 8)

/*
 * Eight rows at once: lane l of each vector is row l, X's rows @xl and
 * Y's @yl elements apart (1: the rows of an outer axis over a dense
 * inner block, one vector per axis step; more: short rows gathered),
 * the axis @xs and @ys apart.  Per lane exactly softmax_row()'s
 * arithmetic: the same maximum, element a of a row in partial sum a % 8
 * (the vector acc[a % 8]), vnpu_softmax_sum8() per lane.  @e holds 8n
 * floats.  False if stopped.
 */
/* Eight lanes @xl apart (1: one vector load; else a gather). */
SM_AVX2 static inline __m256 sm_load8(const float *x, int64_t xl, __m256i gi)
{
	return xl == 1 ? _mm256_loadu_ps(x) : _mm256_i32gather_ps(x, gi, 4);
}

SM_AVX2 static bool sm_cols_avx2(float *y, int64_t ys, int64_t yl, const float *x,
				 int64_t xs, int64_t xl, uint32_t n, float *e,
				 struct vnpu_run_ctx *rc)
{
	__m256 m = _mm256_set1_ps(-INFINITY), acc[VNPU_SOFTMAX_LANES], s;
	__m256i gi = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
					_mm256_set1_epi32((int32_t)xl));
	float part[VNPU_SOFTMAX_LANES][8], sum[8];
	uint32_t a, end;
	int l, j;

	for (a = 0; a < n; a = end) {
		end = n - a > SM_COL_STEPS ? a + SM_COL_STEPS : n;
		if (vnpu_run_tick(rc, 8ull * (end - a)))
			return false;
		for (; a < end; a++)
			m = _mm256_max_ps(sm_load8(x + a * xs, xl, gi), m);
	}
	for (j = 0; j < VNPU_SOFTMAX_LANES; j++)
		acc[j] = _mm256_setzero_ps();
	for (a = 0; a < n; a = end) {
		end = n - a > SM_COL_STEPS ? a + SM_COL_STEPS : n;
		if (vnpu_run_tick(rc, 8ull * (end - a)))
			return false;
		for (; a < end; a++) {
			__m256 v = sm_exp8(_mm256_sub_ps(sm_load8(x + a * xs, xl, gi), m));

			_mm256_storeu_ps(e + 8ull * a, v);
			acc[a % VNPU_SOFTMAX_LANES] = _mm256_add_ps(acc[a % VNPU_SOFTMAX_LANES], v);
		}
	}
	for (j = 0; j < VNPU_SOFTMAX_LANES; j++)
		_mm256_storeu_ps(part[j], acc[j]);
	for (l = 0; l < 8; l++) {
		float p[VNPU_SOFTMAX_LANES];

		for (j = 0; j < VNPU_SOFTMAX_LANES; j++)
			p[j] = part[j][l];
		sum[l] = vnpu_softmax_sum8(p);
	}
	s = _mm256_loadu_ps(sum);
	for (a = 0; a < n; a = end) {
		end = n - a > SM_COL_STEPS ? a + SM_COL_STEPS : n;
		if (vnpu_run_tick(rc, 8ull * (end - a)))
			return false;
		for (; a < end; a++) {
			__m256 v = _mm256_div_ps(_mm256_loadu_ps(e + 8ull * a), s);

			if (yl == 1) {
				_mm256_storeu_ps(y + a * ys, v);
				continue;
			}
			_mm256_storeu_ps(sum, v);
			for (l = 0; l < 8; l++)
				y[a * ys + l * yl] = sum[l];
		}
	}
	return true;
}

static bool sm_have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#else
static float sm_max_avx2(const float *x, uint32_t i, uint32_t end, float mx)
{
	(void)x, (void)i, (void)end;
	return mx;
}

static void sm_exp_avx2(float *e, const float *x, uint32_t i, uint32_t end, float mx,
			float *part)
{
	(void)e, (void)x, (void)i, (void)end, (void)mx, (void)part;
}

static void sm_div_avx2(float *y, const float *e, uint32_t i, uint32_t end, float sum)
{
	(void)y, (void)e, (void)i, (void)end, (void)sum;
}

static bool sm_cols_avx2(float *y, int64_t ys, int64_t yl, const float *x,
			 int64_t xs, int64_t xl, uint32_t n, float *e,
			 struct vnpu_run_ctx *rc)
{
	(void)y, (void)ys, (void)yl, (void)x, (void)xs, (void)xl, (void)n, (void)e, (void)rc;
	return false;
}

static bool sm_have_avx2(void)
{
	return false;
}
#endif

/* Each pass polls every VNPU_ROW_CHUNK elements; false if stopped. */
static bool softmax_row(float *yp, int64_t ys, const float *xp, int64_t xs,
			uint32_t n, float *e, bool avx2, struct vnpu_run_ctx *rc)
{
	float mx = -INFINITY, sum, part[VNPU_SOFTMAX_LANES] = { 0 };
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
		if (avx2) {
			mx = sm_max_avx2(xp, i, end, mx);
			continue;
		}
		for (; i < end; i++)
			mx = xp[i] > mx ? xp[i] : mx;
	}
	for (i = 0; i < n; i = end) {
		end = row_chunk(rc, i, n);
		if (!end)
			return false;
		if (avx2) {
			sm_exp_avx2(e, xp, i, end, mx, part);
			continue;
		}
		for (; i < end; i++) {
			e[i] = vnpu_softmax_exp(xp[i] - mx);
			part[i % VNPU_SOFTMAX_LANES] += e[i];
		}
	}
	sum = vnpu_softmax_sum8(part);
	for (i = 0; i < n; i = end) {
		end = row_chunk(rc, i, n);
		if (!end)
			return false;
		if (ys == 1 && avx2) {
			sm_div_avx2(yp, e, i, end, sum);
		} else if (ys == 1) {
			for (; i < end; i++)
				yp[i] = e[i] / sum;
		} else {
			for (; i < end; i++)
				yp[(int64_t)i * ys] = e[i] / sum;
		}
	}
	return true;
}

/* Axis lengths the column kernel takes: its scratch is 8 floats a step. */
#define SM_COLS_MAX	(1u << 16)

/* Dims after @ax one dense block (unit innermost stride)? */
static bool sm_inner_dense(const struct vnpu_tv *v, uint32_t ax)
{
	int64_t st = 1;
	int d;

	for (d = v->rank - 1; d > (int)ax; d--) {
		if (v->dims[d] > 1 && v->st[d] != st)
			return false;
		st *= v->dims[d];
	}
	return true;
}

/* [lo, hi) bytes of @v's elements; dims are non-zero and strides >= 0. */
static void sm_extent(const struct vnpu_tv *v, uintptr_t *lo, uintptr_t *hi)
{
	int64_t last = 0;
	int d;

	for (d = 0; d < v->rank; d++)
		last += (int64_t)(v->dims[d] - 1) * v->st[d];
	*lo = (uintptr_t)v->p;
	*hi = *lo + (uintptr_t)(last + 1) * v->esize;
}

/* Y is X itself, or apart from it? */
static bool sm_same_or_apart(const struct vnpu_tv *x, const struct vnpu_tv *y)
{
	uintptr_t xl, xh, yl, yh;

	if (x->p == y->p && !memcmp(x->st, y->st, sizeof(x->st[0]) * x->rank))
		return true;
	sm_extent(x, &xl, &xh);
	sm_extent(y, &yl, &yh);
	return xh <= yl || yh <= xl;
}

/*
 * Which rows the column kernel takes eight at a time, if any: lane dim
 * @L (VNPU_MAX_RANK: the dense block of every dim after the axis) of
 * @nl lanes, @xl and @yl apart.  An outer axis over a dense inner block
 * of 8 or more; or rows shorter than 8 along the innermost axis, eight
 * neighbouring rows of the dim before it (gathered).  The kernel writes
 * eight rows after reading them whole, as the row path writes one: the
 * same result when Y is X itself or apart from it, not for other
 * overlaps.
 */
static bool sm_cols_plan(const struct vnpu_tv *x, const struct vnpu_tv *y, uint32_t ax,
			 int *L, uint32_t *nl, int64_t *xl, int64_t *yl)
{
	uint32_t inner = 1;
	int i;

	if (x->dims[ax] > SM_COLS_MAX || !sm_same_or_apart(x, y))
		return false;
	for (i = ax + 1; i < x->rank; i++)
		inner *= x->dims[i];
	if (ax + 1 < x->rank && inner >= 8 && sm_inner_dense(x, ax) && sm_inner_dense(y, ax)) {
		*L = VNPU_MAX_RANK;
		*nl = inner;
		*xl = *yl = 1;
		return true;
	}
	if (ax + 1 != x->rank || ax == 0 || x->dims[ax] >= 8 || x->dims[ax - 1] < 8 ||
	    x->st[ax - 1] < 0 || x->st[ax - 1] > INT32_MAX / 8)
		return false;
	*L = (int)ax - 1;
	*nl = x->dims[ax - 1];
	*xl = x->st[ax - 1];
	*yl = y->st[ax - 1];
	return true;
}

int vnpu_eng_softmax(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax], nl = 0, j;
	uint32_t od[VNPU_MAX_RANK], oi[VNPU_MAX_RANK] = { 0 };
	int64_t xo[VNPU_MAX_RANK], yo[VNPU_MAX_RANK], xl = 0, yl = 0;
	int no = 0, i, L = -1;
	bool avx2 = sm_have_avx2(), cols;
	float *e;

	cols = avx2 && sm_cols_plan(x, y, ax, &L, &nl, &xl, &yl);
	e = vnpu_run_alloc(rc, sizeof(float) * n * (cols ? 8 : 1));
	if (!e)
		return -ENOMEM;
	if (avx2 && rc)
		rc->path = cols ? VNPU_ENG_SOFTMAX_COLS : VNPU_ENG_SOFTMAX_AVX2;
	/* The outer loop leaves the axis and the lanes' dims to the kernels. */
	for (i = 0; i < x->rank; i++) {
		if (i == (int)ax || i == L || (L == VNPU_MAX_RANK && i > (int)ax))
			continue;
		od[no] = x->dims[i];
		xo[no] = x->st[i];
		yo[no++] = y->st[i];
	}
	do {
		float *yp = (float *)(void *)y->p;
		const float *xp = (const float *)(void *)x->p;

		for (i = 0; i < no; i++) {
			xp += (int64_t)oi[i] * xo[i];
			yp += (int64_t)oi[i] * yo[i];
		}
		if (!cols) {
			/* In place (Y over X) reads a row whole before writing it. */
			if (!softmax_row(yp, y->st[ax], xp, x->st[ax], n, e, avx2, rc))
				goto stopped;
			continue;
		}
		for (j = 0; j + 8 <= nl; j += 8)
			if (!sm_cols_avx2(yp + j * yl, y->st[ax], yl, xp + j * xl, x->st[ax], xl,
					  n, e, rc))
				goto stopped;
		for (; j < nl; j++)
			if (!softmax_row(yp + j * yl, y->st[ax], xp + j * xl, x->st[ax], n, e,
					 avx2, rc))
				goto stopped;
	} while (next_index(oi, od, no));
	vnpu_run_free(rc, e);
	return 0;
stopped:
	vnpu_run_free(rc, e);
	return -ECANCELED;
}

/* ---- SOFTMAX with VNPU_ROUND_ORT_QLINEAR --------------------------------- */

/*
 * The reference's arithmetic on the codes (vnpu_ref_qlinear.h): the same
 * table, the same entries summed in binary32 in index order, the same
 * quotient per output.  A code is handled as its key, the byte with the
 * sign bit flipped for int8, so that keys order as the codes do and one
 * unsigned byte loop serves both dtypes: entry 255 - (max - q) of the
 * reference is entry 255 - max_key + key.
 *
 * Each row's sum is a chain of dependent additions whose order is the
 * result, so one row at a time waits on the adder's latency; the sums of
 * SMQ_ROWS rows run interleaved, each still in its own order.  A row
 * whose keys span fewer values than it has elements gets its outputs
 * from a table of one quotient per key, filled by the reference's own
 * function.
 */
#define SMQ_ROWS	4

struct smq_row {
	const uint8_t *x;
	uint8_t *y;
	const float *e;		/* entry of key k: e[k] */
	float sum;
	uint8_t lo, hi;		/* smallest and largest key */
};

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * vnpu_qlinear_softmax_q() eight outputs at a time, with the same
 * binary32 operations: the product, the quotient (both IEEE, as the
 * scalar ones), ROUNDPS to nearest as nearbyintf() in the default
 * rounding mode; a quotient not below 2^31 (NaN included: the ordered
 * compare fails) takes the scalar's out-of-range value, then the zero
 * point added modulo 2^32, the signed cap at 255 and the low byte.
 * Returns how many outputs it wrote (a multiple of 8).
 */
__attribute__((target("avx2")))
static uint32_t smq_q_avx2(const struct vnpu_qlinear_softmax *f, const float *e,
			   const uint8_t *x, uint8_t *y, uint32_t m, uint8_t flip, float sum)
{
	const __m256 ym = _mm256_set1_ps(f->y_mul), s = _mm256_set1_ps(sum);
	const __m256 big = _mm256_set1_ps(2147483648.0f);
	const __m256i zy = _mm256_set1_epi32(f->zy), cap = _mm256_set1_epi32(255);
	const __m256i over = _mm256_set1_epi32(f->is_signed ? INT32_MIN : 0);
	const __m256i low = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
					     -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1,
					     -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i fl = _mm_set1_epi8((char)flip);
	uint32_t j;

	for (j = 0; j + 8 <= m; j += 8) {
		__m128i b = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(x + j)),
					  fl);
		__m256 ev = _mm256_i32gather_ps(e, _mm256_cvtepu8_epi32(b), 4);
		__m256 r = _mm256_round_ps(_mm256_div_ps(_mm256_mul_ps(ev, ym), s),
					   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m256 in = _mm256_cmp_ps(r, big, _CMP_LT_OQ);
		__m256i q = _mm256_blendv_epi8(over, _mm256_cvttps_epi32(r),
					       _mm256_castps_si256(in));

		q = _mm256_min_epi32(_mm256_add_epi32(q, zy), cap);
		q = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, low),
						_mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
		_mm_storel_epi64((__m128i *)(void *)(y + j), _mm256_castsi256_si128(q));
	}
	return j;
}

static bool smq_have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#else
static uint32_t smq_q_avx2(const struct vnpu_qlinear_softmax *f, const float *e,
			   const uint8_t *x, uint8_t *y, uint32_t m, uint8_t flip, float sum)
{
	(void)f, (void)e, (void)x, (void)y, (void)m, (void)flip, (void)sum;
	return 0;
}

static bool smq_have_avx2(void)
{
	return false;
}
#endif

/* Rows are dense here (smq_move() makes them so). */
__attribute__((target_clones("avx2", "default")))
static void smq_range(const uint8_t *x, uint32_t n, uint8_t flip, uint8_t *lo, uint8_t *hi)
{
	uint8_t mn = *lo, mx = *hi;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint8_t k = x[i] ^ flip;

		mn = k < mn ? k : mn;
		mx = k > mx ? k : mx;
	}
	*lo = mn;
	*hi = mx;
}

/* Elements [i, end) of @g rows added to their sums, each in index order. */
static void smq_sums(struct smq_row *r, int g, uint32_t i, uint32_t end, uint8_t flip)
{
	int k;

	if (g == SMQ_ROWS) {
		const uint8_t *x0 = r[0].x, *x1 = r[1].x, *x2 = r[2].x, *x3 = r[3].x;
		const float *e0 = r[0].e, *e1 = r[1].e, *e2 = r[2].e, *e3 = r[3].e;
		float s0 = r[0].sum, s1 = r[1].sum, s2 = r[2].sum, s3 = r[3].sum;

		for (; i < end; i++) {
			s0 += e0[x0[i] ^ flip];
			s1 += e1[x1[i] ^ flip];
			s2 += e2[x2[i] ^ flip];
			s3 += e3[x3[i] ^ flip];
		}
		r[0].sum = s0;
		r[1].sum = s1;
		r[2].sum = s2;
		r[3].sum = s3;
		return;
	}
	for (k = 0; k < g; k++) {
		const uint8_t *x = r[k].x;
		const float *e = r[k].e;
		float s = r[k].sum;
		uint32_t j;

		for (j = i; j < end; j++)
			s += e[x[j] ^ flip];
		r[k].sum = s;
	}
}

/*
 * Outputs [i, end) of row @r: through @lut (indexed by byte) if non-NULL.
 * Y may be X itself (in place), never the table or the row's fields:
 * locals, so that a byte store does not reload them.
 */
static void smq_out(const struct vnpu_qlinear_softmax *f, const struct smq_row *r,
		    const uint8_t *lut, uint32_t i, uint32_t end, uint8_t flip, bool simd)
{
	const uint8_t *x = r->x;
	uint8_t *y = r->y;

	if (lut) {
		uint8_t t[256];

		memcpy(t, lut, sizeof(t));
		for (; i < end; i++)
			y[i] = t[x[i]];
	} else {
		const float *e = r->e;
		float sum = r->sum;

		if (simd)
			i += smq_q_avx2(f, e, x + i, y + i, end - i, flip, sum);
		for (; i < end; i++)
			y[i] = vnpu_qlinear_softmax_q(f, e[x[i] ^ flip], sum);
	}
}

/*
 * The end of the pass's chunk from @i: the row's end when the rows were
 * ticked whole, 0 if the command was stopped.
 */
static uint32_t smq_chunk(struct vnpu_run_ctx *rc, uint32_t i, uint32_t n, bool whole)
{
	return whole ? n : row_chunk(rc, i, n);
}

/*
 * The three passes over @g rows of @n; false if stopped.  Short rows are
 * ticked once for all three passes, as the reference does, so that a
 * command of many short rows pays no poll per pass.
 */
static bool smq_rows(const struct vnpu_qlinear_softmax *f, struct smq_row *r, int g,
		     uint32_t n, uint8_t flip, bool simd, struct vnpu_run_ctx *rc)
{
	bool whole = 3ull * (uint64_t)g * n <= VNPU_ROW_CHUNK;
	uint8_t lut[256];
	uint32_t i, end;
	int k;

	if (whole && vnpu_run_tick(rc, 3ull * (uint64_t)g * n))
		return false;
	for (k = 0; k < g; k++) {
		r[k].lo = 255;
		r[k].hi = 0;
		for (i = 0; i < n; i = end) {
			end = smq_chunk(rc, i, n, whole);
			if (!end)
				return false;
			smq_range(r[k].x + i, end - i, flip, &r[k].lo, &r[k].hi);
		}
		r[k].e = f->table + 255 - r[k].hi;
		r[k].sum = 0.0f;
	}
	for (i = 0; i < n; i = end) {
		uint32_t step = n - i > VNPU_ROW_CHUNK / SMQ_ROWS ? VNPU_ROW_CHUNK / SMQ_ROWS : n - i;

		end = whole ? n : i + step;
		if (!whole && vnpu_run_tick(rc, (uint64_t)g * step))
			return false;
		smq_sums(r, g, i, end, flip);
	}
	for (k = 0; k < g; k++) {
		bool table = (uint32_t)(r[k].hi - r[k].lo) + 1 < n;
		uint32_t key;

		if (table)
			for (key = r[k].lo; key <= r[k].hi; key++)
				lut[key ^ flip] = vnpu_qlinear_softmax_q(f, r[k].e[key],
									 r[k].sum);
		for (i = 0; i < n; i = end) {
			end = smq_chunk(rc, i, n, whole);
			if (!end)
				return false;
			smq_out(f, &r[k], table ? lut : NULL, i, end, flip, simd);
		}
	}
	return true;
}

/*
 * Rows along a strided axis are copied SMQ_BLOCK_ROWS at a time into
 * dense rows and back, reading every X element and writing every Y
 * element once, in memory order where the rows are neighbours (the
 * softmax axis outermost: row k + 1 starts one byte after row k), not
 * once per pass with a cache miss each.
 */
#define SMQ_BLOCK_BYTES	(64u << 10)
#define SMQ_BLOCK_ROWS	64

/*
 * Elements [0, n) of @g rows at offsets @off (stride @st) of @strided into
 * the dense rows of @dense, or back when @back; false if stopped.
 */
static bool smq_move(uint8_t *strided, const int64_t *off, int64_t st, uint8_t *dense,
		     int g, uint32_t n, bool back, struct vnpu_run_ctx *rc)
{
	uint32_t i, end, step = VNPU_ROW_CHUNK / (uint32_t)g;
	int k;

	for (i = 0; i < n; i = end) {
		end = n - i > step ? i + step : n;
		if (vnpu_run_tick(rc, (uint64_t)g * (end - i)))
			return false;
		for (; i < end; i++) {
			uint8_t *p = strided + (int64_t)i * st;

			if (back)
				for (k = 0; k < g; k++)
					p[off[k]] = dense[(size_t)k * n + i];
			else
				for (k = 0; k < g; k++)
					dense[(size_t)k * n + i] = p[off[k]];
		}
	}
	return true;
}

/*
 * Runs of one code: each is its own maximum, its entry is table[255] and
 * its sum 0 + table[255], so every output is the one byte those give.
 */
static bool smq_ones(const struct vnpu_qlinear_softmax *f, struct vnpu_tv *y,
		     const uint32_t *od, const int64_t *yo, int no, struct vnpu_run_ctx *rc)
{
	uint8_t b = vnpu_qlinear_softmax_q(f, f->table[255], 0.0f + f->table[255]);
	uint32_t oi[VNPU_MAX_RANK] = { 0 }, k = 0;
	int i;

	do {
		int64_t yb = 0;

		if (++k == VNPU_ROW_CHUNK) {
			k = 0;
			if (vnpu_run_tick(rc, 3 * VNPU_ROW_CHUNK))
				return false;
		}
		for (i = 0; i < no; i++)
			yb += (int64_t)oi[i] * yo[i];
		y->p[yb] = b;
	} while (next_index(oi, od, no));
	return !vnpu_run_tick(rc, 3ull * k);
}

int vnpu_eng_softmax_qlinear(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
			     struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax];
	uint32_t od[VNPU_MAX_RANK], oi[VNPU_MAX_RANK] = { 0 };
	int64_t xo[VNPU_MAX_RANK], yo[VNPU_MAX_RANK];
	int64_t xr[SMQ_BLOCK_ROWS], yr[SMQ_BLOCK_ROWS], xs = x->st[ax], ys = y->st[ax];
	bool dense = xs == 1 && ys == 1, simd = smq_have_avx2(), more, ok = true;
	int rows = dense ? SMQ_ROWS : SMQ_BLOCK_ROWS, no = 0, g, k, i;
	uint8_t flip = x->dtype == VNPU_DT_INT8 ? 0x80 : 0, *buf = NULL;
	struct vnpu_qlinear_softmax *f = vnpu_run_alloc(rc, sizeof(*f));
	struct smq_row r[SMQ_ROWS];

	if (!f)
		return -ENOMEM;
	if (!dense) {
		if (SMQ_BLOCK_BYTES / n < (uint32_t)rows)
			rows = SMQ_BLOCK_BYTES / n > 1 ? (int)(SMQ_BLOCK_BYTES / n) : 1;
		buf = vnpu_run_alloc(rc, 2 * (size_t)rows * n);
		if (!buf) {
			vnpu_run_free(rc, f);
			return -ENOMEM;
		}
	}
	vnpu_qlinear_softmax_init(f, x->scale, y->scale, y->zp, n, flip != 0);
	for (i = 0; i < x->rank; i++) {
		if (i == (int)ax)
			continue;
		od[no] = x->dims[i];
		xo[no] = x->st[i];
		yo[no++] = y->st[i];
	}
	if (n == 1) {
		ok = smq_ones(f, y, od, yo, no, rc);
		vnpu_run_free(rc, buf);
		vnpu_run_free(rc, f);
		return ok ? 0 : -ECANCELED;
	}
	do {
		for (g = 0, more = true; g < rows && more; g++) {
			xr[g] = yr[g] = 0;
			for (i = 0; i < no; i++) {
				xr[g] += (int64_t)oi[i] * xo[i];
				yr[g] += (int64_t)oi[i] * yo[i];
			}
			more = next_index(oi, od, no);
		}
		/*
		 * In place (Y over X): each row is read whole before it is
		 * written, and the block before any of it is written back.
		 */
		if (!dense)
			ok = smq_move(x->p, xr, xs, buf, g, n, false, rc);
		for (k = 0; k < g && ok; k += SMQ_ROWS) {
			int m = g - k < SMQ_ROWS ? g - k : SMQ_ROWS, j;

			for (j = 0; j < m; j++) {
				r[j].x = dense ? x->p + xr[k + j] : buf + (size_t)(k + j) * n;
				r[j].y = dense ? y->p + yr[k + j] :
					 buf + (size_t)(rows + k + j) * n;
			}
			ok = smq_rows(f, r, m, n, flip, simd, rc);
		}
		if (ok && !dense)
			ok = smq_move(y->p, yr, ys, buf + (size_t)rows * n, g, n, true, rc);
	} while (ok && more);
	vnpu_run_free(rc, buf);
	vnpu_run_free(rc, f);
	return ok ? 0 : -ECANCELED;
}
