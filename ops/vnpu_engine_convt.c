// SPDX-License-Identifier: MIT
/*
 * CONV_TRANSPOSE as stride-1 CONV2Ds: the sub-pixel (phase) decomposition.
 *
 * Along one axis, output o = r + s * j (phase r < s) takes exactly the taps
 * k with (r + pad - k * d) divisible by s, reading input j + (r + pad -
 * k * d) / s.  Those taps are every T-th one (T = s / gcd(s, d)) and their
 * inputs step by D = d / gcd(s, d), so a phase is an ordinary correlation
 * with stride 1 and dilation D over X, with the phase's taps in reverse
 * order as its kernel.  The phases run through the engine's CONV2D kernels
 * (direct fp32/int8, depthwise, im2col + GEMM) with the command's own
 * epilogue, into a dense band that is then copied to its strided place in
 * Y; outputs no tap reaches (a phase without taps, or past the input) get
 * the epilogue of an empty sum.
 *
 * Along an axis whose phases all read the same window (same tap count and
 * first input: a kernel that is a multiple of the stride, unpadded or
 * padded by a multiple of it), one conv runs all of them as extra output
 * channels.  Narrow outputs (a detection head's single map) then fill the
 * kernels' vector lanes, and the conv is one call, not s of them.  Other
 * axes run phase by phase: their windows differ, and a common window would
 * multiply taps that are zero.
 *
 * Integer results equal the reference's bit for bit (the sum is exact
 * modulo 2^32 in any order); float sums run in the conv kernels' order,
 * within ops.rst's GEMM/CONV2D tolerance.
 */
#include <errno.h>
#include <string.h>

#include "vnpu_engine.h"

/* Output band of one conv (bytes): the conv kernels' output stays in L2. */
#define CONVT_BAND_BYTES	(1u << 20)
/*
 * Kernel extents (and strides) up to which the derived CONV2D pads stay
 * far inside the command limit (MAX_PAD, 2^16) the conv kernels assume.
 */
#define CONVT_SPAN_MAX		(1u << 15)

/* One phase of one axis. */
struct ct_phase {
	uint32_t jn;		/* outputs in the phase */
	uint32_t m;		/* its taps; 0: outputs get the empty sum */
	uint32_t klast, kstep;	/* conv tap i is transposed tap klast - i * kstep */
	uint32_t dil;		/* input step between conv taps */
	int64_t base;		/* input read by output 0's conv tap 0 */
};

/* One band of a phase as CONV2D geometry along one axis. */
struct ct_band {
	uint32_t x0, len;	/* X rows (or columns) the band reads */
	uint32_t pb, pa;	/* CONV2D pads before and after */
};

/* The phases of one axis. */
struct ct_axis {
	struct ct_phase *ph;	/* [n] */
	uint32_t n;		/* phases that have outputs: min(stride, extent) */
	uint32_t s;		/* the stride */
	bool merge;		/* all read one window: one conv runs them all */
};

/*
 * The phases one CONV2D runs: @ny along y from @ry, @nx along x from @rx.
 * Its output channels are group-major: conv channel (g, p, m) is command
 * channel g * cog + m of phase p = iy * nx + ix.
 */
struct ct_set {
	uint32_t ry, rx, ny, nx;
	uint32_t cog2, co2;	/* conv output channels per group, in all */
};

struct ct_run {
	const struct vnpu_cmd_compute *c;
	const struct vnpu_op_info *info;
	struct vnpu_tv *t;
	struct vnpu_run_ctx *rc;
	struct ct_axis ay, ax;
	uint32_t cig, cog, co, groups;
	uint8_t *zpix;		/* one output pixel of empty sums, Y's dtype */
	uint8_t *wp;		/* the set's kernel, CONV2D layout */
	uint8_t *band;		/* the conv's output band, dense */
	size_t band_bytes;
	/* Per conv channel: bias, W's and Y's per-channel scales and zero points. */
	uint8_t *bias2, *wq2, *yq2;
	struct vnpu_tv vb, vw, vy;	/* t[2], t[1], t[3] as the conv sees them */
};

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static void phase_of(struct ct_phase *ph, uint32_t out, uint32_t k, uint32_t s,
		     uint32_t d, uint32_t pad, uint32_t r)
{
	uint32_t g = gcd32(s, d), kk, first = k;

	memset(ph, 0, sizeof(*ph));
	ph->jn = r < out ? (out - r + s - 1) / s : 0;
	/* The taps of a phase repeat every s / g: look no further. */
	for (kk = 0; kk < k && kk < s / g; kk++)
		if (((int64_t)r + pad - (int64_t)kk * d) % s == 0) {
			first = kk;
			break;
		}
	if (first >= k)
		return;
	ph->kstep = s / g;
	ph->m = (k - 1 - first) / ph->kstep + 1;
	ph->klast = first + (ph->m - 1) * ph->kstep;
	ph->dil = d / g;
	ph->base = ((int64_t)r + pad - (int64_t)ph->klast * d) / s;
}

/*
 * Outputs [j0, j0 + jn) of phase @ph over an input of extent @in as a
 * CONV2D's X range and pads; false when none of them reads any input.
 */
static bool band_of(struct ct_band *b, const struct ct_phase *ph, uint32_t j0,
		    uint32_t jn, uint32_t in)
{
	int64_t first = ph->base + j0, len, pa;

	if (!ph->m)
		return false;
	b->x0 = first > 0 ? (uint32_t)first : 0;
	b->pb = first < 0 ? (uint32_t)-first : 0;
	if (b->x0 >= in)
		return false;
	len = (int64_t)in - b->x0;
	pa = (int64_t)jn - len - b->pb + (int64_t)(ph->m - 1) * ph->dil;
	if (pa < 0) {
		/* Rows past the last output's last tap are never read. */
		len += pa;
		pa = 0;
	}
	if (len <= 0)
		return false;
	b->len = (uint32_t)len;
	b->pa = (uint32_t)pa;
	return true;
}

static int axis_init(struct ct_axis *a, struct vnpu_run_ctx *rc, uint32_t out,
		     uint32_t k, uint32_t s, uint32_t d, uint32_t pad)
{
	uint32_t r;

	a->s = s;
	a->n = s < out ? s : out;
	a->ph = vnpu_run_alloc(rc, sizeof(*a->ph) * a->n);
	if (!a->ph)
		return -ENOMEM;
	a->merge = true;
	for (r = 0; r < a->n; r++) {
		if (vnpu_run_tick(rc, k))
			return -ECANCELED;
		phase_of(&a->ph[r], out, k, s, d, pad, r);
		if (!a->ph[r].m || a->ph[r].m != a->ph[0].m ||
		    a->ph[r].base != a->ph[0].base)
			a->merge = false;
	}
	return 0;
}

/* Y element (b, oy, ox, 0). */
static uint8_t *y_px(const struct vnpu_tv *y, uint32_t b, uint32_t oy, uint32_t ox)
{
	return y->p + ((int64_t)b * y->st[0] + (int64_t)oy * y->st[1] +
		       (int64_t)ox * y->st[2]) * y->esize;
}

/* @n bytes; the common small sizes as constants, so no call per pixel. */
static void copy_run(uint8_t *d, const uint8_t *s, size_t n)
{
	switch (n) {
	case 1:
		*d = *s;
		break;
	case 4:
		memcpy(d, s, 4);
		break;
	case 8:
		memcpy(d, s, 8);
		break;
	case 16:
		memcpy(d, s, 16);
		break;
	default:
		memcpy(d, s, n);
	}
}

/* @n channels (@src dense, Y's dtype) into Y at @dst. */
static void put_ch(const struct vnpu_tv *y, uint8_t *dst, const uint8_t *src,
		   uint32_t n)
{
	uint32_t m;

	if (y->st[3] == 1) {
		copy_run(dst, src, (size_t)n * y->esize);
		return;
	}
	for (m = 0; m < n; m++)
		copy_run(dst + (int64_t)m * y->st[3] * y->esize,
			 src + (size_t)m * y->esize, y->esize);
}

/* The epilogue of an empty sum, per channel: what outputs without taps hold. */
static int empty_pixel(struct ct_run *r)
{
	const struct vnpu_cmd_compute *c = r->c;
	const struct vnpu_tv *x = &r->t[0], *w = &r->t[1], *bias = &r->t[2];
	const struct vnpu_tv *y = &r->t[3];
	float alpha, beta = vnpu_act_beta(c);
	uint32_t m;

	memcpy(&alpha, &c->act_alpha, 4);
	for (m = 0; m < r->co; m++) {
		uint8_t *p = r->zpix + (size_t)m * y->esize;

		if (vnpu_run_tick(r->rc, 1))
			return -ECANCELED;
		if (r->info->quantized) {
			struct vnpu_epi e;
			int32_t acc = 0;

			if (bias->p)
				memcpy(&acc, bias->p + (int64_t)m * bias->st[0] * 4, 4);
			vnpu_epi_init(&e, c, x, w, y, m);
			vnpu_epi_store(&e, y, p, acc, m);
		} else {
			vnpu_st(y, p, vnpu_act_ab(c->act, alpha, beta,
						  vnpu_bias_apply(bias, m, 0.0f)),
				y->quant == VNPU_QUANT_CHANNEL ? m : 0, c->round);
		}
	}
	return 0;
}

/* Outputs (b, ry + sy * j, rx + sx * i), j in [j0, j1), i < ni: empty sums. */
static int fill_empty(struct ct_run *r, uint32_t b, uint32_t ry, uint32_t j0,
		      uint32_t j1, uint32_t rx, uint32_t ni)
{
	const struct vnpu_tv *y = &r->t[3];
	uint32_t j, i;

	for (j = j0; j < j1; j++) {
		if (vnpu_run_tick(r->rc, (uint64_t)ni * r->co))
			return -ECANCELED;
		for (i = 0; i < ni; i++)
			put_ch(y, y_px(y, b, ry + r->ay.s * j, rx + r->ax.s * i),
			       r->zpix, r->co);
	}
	return 0;
}

/* Every output of set @s's phases in rows [j0, j0 + jn) of image @b: empty sums. */
static int fill_set(struct ct_run *r, const struct ct_set *s, uint32_t b,
		    uint32_t j0, uint32_t jn)
{
	uint32_t iy, ix;
	int ret = 0;

	for (iy = 0; !ret && iy < s->ny; iy++) {
		const struct ct_phase *py = &r->ay.ph[s->ry + iy];
		uint32_t j1 = j0 + jn < py->jn ? j0 + jn : py->jn;

		for (ix = 0; !ret && ix < s->nx && j0 < j1; ix++)
			ret = fill_empty(r, b, s->ry + iy, j0, j1, s->rx + ix,
					 r->ax.ph[s->rx + ix].jn);
	}
	return ret;
}

/*
 * W [C][KH][KW][COg] -> the set's CONV2D kernel [CO2][MY][MX][Cig], each
 * phase's taps reversed; and the epilogue's per-channel operands (bias,
 * per-channel scales and zero points) per conv channel.
 */
static int pack_set(struct ct_run *r, const struct ct_set *s)
{
	const struct vnpu_tv *w = &r->t[1], *bias = &r->t[2], *y = &r->t[3];
	const struct ct_phase *py0 = &r->ay.ph[s->ry], *px0 = &r->ax.ph[s->rx];
	size_t es = w->esize;
	uint8_t *d = r->wp;
	uint32_t o2, a, b, ci;

	for (o2 = 0; o2 < s->co2; o2++) {
		uint32_t gi = o2 / s->cog2, ph = o2 % s->cog2 / r->cog;
		uint32_t mo = o2 % r->cog, co = gi * r->cog + mo;
		const struct ct_phase *py = &r->ay.ph[s->ry + ph / s->nx];
		const struct ct_phase *px = &r->ax.ph[s->rx + ph % s->nx];

		if (vnpu_run_tick(r->rc, (uint64_t)py0->m * px0->m * r->cig))
			return -ECANCELED;
		for (a = 0; a < py0->m; a++) {
			uint32_t ky = py->klast - a * py->kstep;

			for (b = 0; b < px0->m; b++) {
				uint32_t kx = px->klast - b * px->kstep;
				const uint8_t *src = w->p + ((int64_t)gi * r->cig * w->st[0] +
							     (int64_t)ky * w->st[1] +
							     (int64_t)kx * w->st[2] +
							     (int64_t)mo * w->st[3]) * es;

				for (ci = 0; ci < r->cig; ci++, d += es)
					copy_run(d, src + (int64_t)ci * w->st[0] * es, es);
			}
		}
		if (bias->p && r->info->quantized) {
			memcpy(r->bias2 + 4ull * o2, bias->p + (int64_t)co * bias->st[0] * 4, 4);
		} else if (bias->p) {
			float sc, sh;

			vnpu_bias_at(bias, co, &sc, &sh);
			if (bias->rank == 2)
				memcpy(r->bias2 + 4ull * o2, &sc, 4);
			memcpy(r->bias2 + 4ull * (bias->rank == 2 ? s->co2 + o2 : o2), &sh, 4);
		}
		if (w->quant == VNPU_QUANT_CHANNEL) {
			memcpy(r->wq2 + 4ull * o2, w->qarr + 4ull * co, 4);
			memcpy(r->wq2 + 4ull * (s->co2 + o2), w->qarr + 4ull * (r->co + co), 4);
		}
		if (y->quant == VNPU_QUANT_CHANNEL) {
			memcpy(r->yq2 + 4ull * o2, y->qarr + 4ull * co, 4);
			memcpy(r->yq2 + 4ull * (s->co2 + o2), y->qarr + 4ull * (r->co + co), 4);
		}
	}
	/* The conv's view of W, the bias and Y: per conv channel. */
	r->vw.p = r->wp;
	r->vw.axis = 0;
	r->vw.qarr = r->wq2;
	r->vw.dims[0] = s->co2;
	r->vw.dims[1] = py0->m;
	r->vw.dims[2] = px0->m;
	r->vw.dims[3] = r->cig;
	r->vw.st[3] = 1;
	r->vw.st[2] = r->cig;
	r->vw.st[1] = (int64_t)px0->m * r->cig;
	r->vw.st[0] = (int64_t)py0->m * px0->m * r->cig;
	if (bias->p) {
		r->vb.p = r->bias2;
		r->vb.dims[bias->rank - 1] = s->co2;
		r->vb.st[bias->rank - 1] = 1;
		if (bias->rank == 2)
			r->vb.st[0] = s->co2;
	}
	r->vy.qarr = r->yq2;
	r->vy.dims[3] = s->co2;
	return 0;
}

/* Rows [j0, j0 + jn) of set @s in image @b: one CONV2D, then into Y. */
static int run_band(struct ct_run *r, const struct ct_set *s, uint32_t b,
		    uint32_t j0, uint32_t jn, const struct ct_band *bx)
{
	const struct vnpu_tv *x = &r->t[0], *y = &r->t[3];
	const struct ct_phase *py0 = &r->ay.ph[s->ry], *px0 = &r->ax.ph[s->rx];
	uint32_t jx_n = px0->jn, sy = r->ay.s, sx = r->ax.s, ow = y->dims[2];
	struct vnpu_cmd_compute cc = *r->c;
	struct vnpu_attr_conv2d *at = &cc.attr.conv;
	struct vnpu_tv v[VNPU_OP_SLOTS];
	size_t es = y->esize, pix = (size_t)s->co2 * es, mark;
	bool runs = r->groups == 1 && y->st[3] == 1 && y->st[2] == r->co;
	struct ct_band by;
	uint32_t j, iy, jx, ix, gi;
	int ret;

	if (!band_of(&by, py0, j0, jn, x->dims[1]))
		return fill_set(r, s, b, j0, jn);
	/* HARD_SIGMOID's beta lives in the attribute words too: keep it. */
	memset(&cc.attr, 0, sizeof(cc.attr));
	cc.attr.raw[VNPU_ACT_BETA_WORD] = r->c->attr.raw[VNPU_ACT_BETA_WORD];
	cc.hdr.opcode = VNPU_OP_CONV2D;
	at->stride_h = at->stride_w = 1;
	at->dilation_h = py0->dil;
	at->dilation_w = px0->dil;
	at->pad_top = by.pb;
	at->pad_bottom = by.pa;
	at->pad_left = bx->pb;
	at->pad_right = bx->pa;
	at->groups = r->groups;

	v[0] = *x;
	v[0].p = x->p + ((int64_t)b * x->st[0] + (int64_t)by.x0 * x->st[1] +
			 (int64_t)bx->x0 * x->st[2]) * x->esize;
	v[0].dims[0] = 1;
	v[0].dims[1] = by.len;
	v[0].dims[2] = bx->len;
	v[1] = r->vw;
	v[2] = r->vb;
	v[3] = r->vy;
	v[3].p = r->band;
	v[3].dims[0] = 1;
	v[3].dims[1] = jn;
	v[3].dims[2] = jx_n;
	v[3].st[3] = 1;
	v[3].st[2] = s->co2;
	v[3].st[1] = (int64_t)jx_n * s->co2;
	v[3].st[0] = (int64_t)jn * jx_n * s->co2;

	/* Its scratch is the conv's alone: give it back for the next band. */
	mark = vnpu_run_mark(r->rc);
	ret = vnpu_eng_conv_bound(&cc, r->info, v, r->rc);
	vnpu_run_release(r->rc, mark);
	if (ret)
		return ret;
	for (j = 0; j < jn; j++) {
		const uint8_t *row = r->band + (size_t)j * jx_n * pix;

		if (vnpu_run_tick(r->rc, (uint64_t)jx_n * s->co2))
			return -ECANCELED;
		for (iy = 0; iy < s->ny; iy++) {
			uint32_t ry = s->ry + iy;

			/* Merged phases may have one row fewer than the first. */
			if (j0 + j >= r->ay.ph[ry].jn)
				continue;
			if (runs) {
				/* The nx phases of a column are adjacent pixels of Y. */
				uint8_t *dst = y_px(y, b, ry + sy * (j0 + j), s->rx);
				const uint8_t *src = row + (size_t)iy * s->nx * r->co * es;
				int64_t step = (int64_t)sx * y->st[2] * (int64_t)es;
				size_t full = (size_t)s->nx * r->co * es;

				for (jx = 0; jx < jx_n; jx++, dst += step, src += pix) {
					uint32_t ox = s->rx + sx * jx;

					copy_run(dst, src, ow - ox >= s->nx ? full :
						 (size_t)(ow - ox) * r->co * es);
				}
				continue;
			}
			for (jx = 0; jx < jx_n; jx++)
				for (ix = 0; ix < s->nx; ix++) {
					uint32_t rx = s->rx + ix;
					uint8_t *dst;

					if (jx >= r->ax.ph[rx].jn)
						continue;
					dst = y_px(y, b, ry + sy * (j0 + j), rx + sx * jx);
					for (gi = 0; gi < r->groups; gi++)
						put_ch(y, dst + (int64_t)gi * r->cog * y->st[3] * es,
						       row + jx * pix + ((size_t)gi * s->cog2 +
									 (size_t)(iy * s->nx + ix) * r->cog) * es,
						       r->cog);
				}
		}
	}
	return 0;
}

/* Every output of set @s. */
static int run_set(struct ct_run *r, const struct ct_set *s)
{
	const struct vnpu_tv *x = &r->t[0], *y = &r->t[3];
	const struct ct_phase *py0 = &r->ay.ph[s->ry], *px0 = &r->ax.ph[s->rx];
	uint32_t b, j0, rows;
	struct ct_band bx;
	int ret = 0;

	if (vnpu_run_tick(r->rc, 1))
		return -ECANCELED;
	if (!py0->m || !px0->m || !band_of(&bx, px0, 0, px0->jn, x->dims[2])) {
		for (b = 0; !ret && b < x->dims[0]; b++)
			ret = fill_set(r, s, b, 0, py0->jn);
		return ret;
	}
	ret = pack_set(r, s);
	rows = (uint32_t)(r->band_bytes / ((size_t)px0->jn * s->co2 * y->esize));
	for (b = 0; !ret && b < x->dims[0]; b++)
		for (j0 = 0; !ret && j0 < py0->jn; j0 += rows)
			ret = run_band(r, s, b, j0, py0->jn - j0 < rows ? py0->jn - j0 : rows,
				       &bx);
	return ret;
}

static uint64_t y_elems(const struct vnpu_tv *y)
{
	return (uint64_t)y->dims[0] * y->dims[1] * y->dims[2] * y->dims[3];
}

/*
 * MACs the sets' convs run, padding taps included: each factor within the
 * command's checked extents, the product below 2^60.
 */
static uint64_t conv_work(const struct ct_run *r, uint32_t ny, uint32_t nx,
			  uint32_t n)
{
	uint64_t sum = 0;
	uint32_t ry, rx;

	for (ry = 0; ry < r->ay.n; ry += ny) {
		/* Up to one set per output pixel (strides past the kernel). */
		if (vnpu_run_tick(r->rc, r->ax.n / nx))
			return UINT64_MAX;
		for (rx = 0; rx < r->ax.n; rx += nx) {
			const struct ct_phase *py = &r->ay.ph[ry], *px = &r->ax.ph[rx];

			sum += (uint64_t)n * py->jn * px->jn * ny * nx * r->co *
			       py->m * px->m * r->cig;
		}
	}
	return sum;
}

int vnpu_eng_convt_phases(const struct vnpu_cmd_compute *c,
			  const struct vnpu_op_info *info, struct vnpu_tv *t,
			  struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv_transpose *at = &c->attr.convt;
	const struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	struct ct_run r = {
		.c = c, .info = info, .t = t, .rc = rc,
		.cig = x->dims[3] / at->groups, .cog = w->dims[3], .co = y->dims[3],
		.groups = at->groups,
	};
	uint32_t ny, nx, ry, rx, cmax;
	uint64_t work;
	size_t row;
	int ret;

	if (!info->quantized && (x->dtype != VNPU_DT_FP32 || w->dtype != VNPU_DT_FP32 ||
				 y->dtype != VNPU_DT_FP32))
		return -EAGAIN;
	if (x->quant == VNPU_QUANT_CHANNEL)
		return -EAGAIN;
	if ((uint64_t)w->dims[1] * at->dilation_h + at->stride_h > CONVT_SPAN_MAX ||
	    (uint64_t)w->dims[2] * at->dilation_w + at->stride_w > CONVT_SPAN_MAX)
		return -EAGAIN;
	ret = axis_init(&r.ay, rc, y->dims[1], w->dims[1], at->stride_h,
			at->dilation_h, at->pad_top);
	if (!ret)
		ret = axis_init(&r.ax, rc, y->dims[2], w->dims[2], at->stride_w,
				at->dilation_w, at->pad_left);
	if (ret)
		goto out;
	ny = r.ay.merge ? r.ay.n : 1;
	nx = r.ax.merge ? r.ax.n : 1;
	/* What CONV2D hands the reference (few outputs per group): the old path. */
	if (at->groups > 1 && r.cig != 1 && ny * nx * r.cog < 8) {
		ret = -EAGAIN;
		goto out;
	}
	/*
	 * The convs also run the taps that fall on their padding: where
	 * those are more than a quarter of the real ones (tiny inputs under
	 * big kernels, pads that crop most of the output), the work would
	 * outgrow the units the command is counted and polled at.
	 */
	work = conv_work(&r, ny, nx, x->dims[0]);
	if (work == UINT64_MAX) {
		ret = -ECANCELED;
		goto out;
	}
	if (work > (info->macs - y_elems(y)) / 4 * 5) {
		ret = -EAGAIN;
		goto out;
	}
	cmax = ny * nx * r.co;
	/* A conv's widest output row: the first phase has the most columns and rows. */
	row = (size_t)r.ax.ph[0].jn * cmax * y->esize;
	r.band_bytes = row > CONVT_BAND_BYTES ? row : CONVT_BAND_BYTES;
	if (r.band_bytes > row * r.ay.ph[0].jn)
		r.band_bytes = row * r.ay.ph[0].jn;
	r.zpix = vnpu_run_alloc(rc, (size_t)r.co * y->esize);
	/* The phases' taps are W's, each once: a set's kernel is at most W. */
	r.wp = vnpu_run_alloc(rc, (size_t)r.co * w->dims[1] * w->dims[2] * r.cig * w->esize);
	r.band = vnpu_run_alloc(rc, r.band_bytes);
	r.bias2 = vnpu_run_alloc(rc, 8ull * cmax);
	r.wq2 = vnpu_run_alloc(rc, 8ull * cmax);
	r.yq2 = vnpu_run_alloc(rc, 8ull * cmax);
	if (!r.zpix || !r.wp || !r.band || !r.bias2 || !r.wq2 || !r.yq2) {
		ret = -ENOMEM;
		goto out;
	}
	r.vw = *w;
	r.vb = *bias;
	r.vy = *y;
	if (bias->p && !info->quantized) {
		/* As fp32, whatever float type the bias has. */
		r.vb.dtype = VNPU_DT_FP32;
		r.vb.esize = 4;
	}
	ret = empty_pixel(&r);
	for (ry = 0; !ret && ry < r.ay.n; ry += ny)
		for (rx = 0; !ret && rx < r.ax.n; rx += nx) {
			struct ct_set s = {
				.ry = ry, .rx = rx, .ny = ny, .nx = nx,
				.cog2 = ny * nx * r.cog, .co2 = ny * nx * r.co,
			};

			ret = run_set(&r, &s);
		}
out:
	vnpu_run_free(rc, r.yq2);
	vnpu_run_free(rc, r.wq2);
	vnpu_run_free(rc, r.bias2);
	vnpu_run_free(rc, r.band);
	vnpu_run_free(rc, r.wp);
	vnpu_run_free(rc, r.zpix);
	vnpu_run_free(rc, r.ax.ph);
	vnpu_run_free(rc, r.ay.ph);
	return ret;
}
