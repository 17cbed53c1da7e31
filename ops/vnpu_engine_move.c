// SPDX-License-Identifier: MIT
/*
 * The engine's data-movement paths (COPY, RESIZE).  The reference visits Y one
 * element at a time with full index vectors; here Y is walked a row (its
 * innermost dimension) at a time: the outer indices are mapped to X once
 * per row, a row splits into border / inside / border runs, and an inside
 * run of equal dtypes over unit strides is one memcpy().  Results are
 * those of the reference exactly: the same vnpu_copy_src() mapping and
 * the same vnpu_ld()/vnpu_st() conversions, element for element, or
 * for an 8-bit X a table of their results for each byte.
 */
#include <errno.h>
#include <string.h>

#include "vnpu_engine.h"

/* Move @n elements of @es bytes between strided rows (strides in bytes). */
static void move_raw(uint8_t *dst, int64_t dstep, const uint8_t *src,
		     int64_t sstep, uint32_t n, uint32_t es)
{
	uint32_t i;

	if (dstep == es && sstep == es) {
		memcpy(dst, src, (size_t)n * es);
		return;
	}
	switch (es) {
	case 1:
		for (i = 0; i < n; i++)
			dst[i * dstep] = src[i * sstep];
		break;
	case 2:
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, src + i * sstep, 2);
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, src + i * sstep, 4);
		break;
	}
}

static float fill_value(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

/* Advance @idx over the first @n of @ext; false after the last. */
static bool rows_next(uint32_t *idx, const uint32_t *ext, int n)
{
	int d;

	for (d = n - 1; d >= 0; d--) {
		if (++idx[d] < ext[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

/* Elements moved between two polls of the abort flag on a row. */
#define RUN_MAX	(1u << 16)

/*
 * Edge of the tiles a transposing copy moves at a time; a tile one of
 * whose sides is shorter (NHWC <-> NCHW of 3 channels) grows along the
 * other to about TILE * TILE elements.
 */
#define TILE	32

/* Runs up to this many bytes are moved inline by move_short(). */
#define SHORT_RUN	512

/* @n bytes, n <= SHORT_RUN: 16-byte moves, the tail as an overlapping one. */
static inline void move_short(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i;

	if (n >= 16) {
		for (i = 0; i + 16 <= n; i += 16)
			memcpy(dst + i, src + i, 16);
		if (i < n)
			memcpy(dst + n - 16, src + n - 16, 16);
		return;
	}
	if (n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else if (n >= 4) {
		memcpy(dst, src, 4);
		memcpy(dst + n - 4, src + n - 4, 4);
	} else {
		for (i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

/*
 * A raw copy whose rows gather from X with a stride while another
 * dimension @k is X's contiguous one: a transposition.  Element by
 * element along Y's rows, every read would touch a new cache line (and,
 * for wide tensors, a new page); in TILE x TILE tiles over @k and the
 * row dimension, reads and writes both stay within a few lines.  Only
 * for the KEEP border (the whole box lies inside X) and neither of the two
 * dims reversed.
 */
static int copy_tiled(const struct vnpu_cmd_compute *c, const struct vnpu_tv *x,
		      const struct vnpu_tv *y, const uint32_t *lo,
		      const uint32_t *ext, int k, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	int r = y->rank, in = r - 1, d;
	uint32_t idx[VNPU_MAX_RANK] = { 0 }, outer[VNPU_MAX_RANK];
	uint32_t es = y->esize, kb, jb, kk, ke, tk = TILE, tj = TILE;
	bool avx2 = vnpu_tile_have_avx2();

	/* A short side: the tile grows along the other (a multiple of 8). */
	if (ext[k] < TILE)
		tj = (TILE * TILE / ext[k] + 7) & ~7u;
	else if (ext[in] < TILE)
		tk = (TILE * TILE / ext[in] + 7) & ~7u;
	memcpy(outer, ext, sizeof(outer));
	outer[k] = outer[in] = 1;
	do {
		int64_t xo = 0, yo = 0;

		for (d = 0; d < r; d++) {
			int64_t s = (int64_t)lo[d] + idx[d] - at->offset[d];

			if ((at->reverse >> d) & 1)
				s = x->dims[d] - 1 - s;
			xo += s * x->st[d];
			yo += (int64_t)(lo[d] + idx[d]) * y->st[d];
		}
		if (y->st[k] == 1 && (uint64_t)ext[k] * es <= SHORT_RUN) {
			/*
			 * @k contiguous in Y too (a channel slice of NHWC,
			 * Concat's parts) and its runs short: inline moves,
			 * not a libc call per pixel, and a poll per RUN_MAX
			 * elements rather than per run.
			 */
			uint32_t per = RUN_MAX / ext[k], je, jj;
			size_t len = (size_t)ext[k] * es;

			for (jb = 0; jb < ext[in]; jb += je) {
				je = ext[in] - jb < per ? ext[in] - jb : per;
				uint8_t *py = y->p + (yo + (int64_t)jb * y->st[in]) * es;
				const uint8_t *px = x->p + (xo + (int64_t)jb * x->st[in]) * es;

				if (vnpu_run_tick(rc, (uint64_t)je * ext[k]))
					return -ECANCELED;
				for (jj = 0; jj < je; jj++)
					move_short(py + (int64_t)jj * y->st[in] * es,
						   px + (int64_t)jj * x->st[in] * es, len);
			}
			continue;
		}
		if (y->st[k] == 1) {
			/* Long runs: one memcpy() per row element. */
			for (jb = 0; jb < ext[in]; jb++) {
				for (kb = 0; kb < ext[k]; kb += ke) {
					ke = ext[k] - kb < RUN_MAX ? ext[k] - kb : RUN_MAX;
					if (vnpu_run_tick(rc, ke))
						return -ECANCELED;
					memcpy(y->p + (yo + (int64_t)jb * y->st[in] + kb) * es,
					       x->p + (xo + (int64_t)jb * x->st[in] + kb) * es,
					       (size_t)ke * es);
				}
			}
			continue;
		}
		for (kb = 0; kb < ext[k]; kb += tk)
		for (jb = 0; jb < ext[in]; jb += tj) {
			uint32_t je = ext[in] - jb < tj ? ext[in] - jb : tj;

			ke = ext[k] - kb < tk ? ext[k] - kb : tk;
			if (vnpu_run_tick(rc, (uint64_t)ke * je))
				return -ECANCELED;
			if (y->st[in] == 1) {
				/* Y's rows along @k, X's along @in: a plain transpose. */
				if (rc)
					rc->path = VNPU_ENG_TRANSPOSE;
				vnpu_tile_transpose(y->p + (yo + (int64_t)kb * y->st[k] + jb) * es,
					       y->st[k] * es,
					       x->p + (xo + (int64_t)jb * x->st[in] + kb) * es,
					       x->st[in] * es, ke, je, es, avx2);
				continue;
			}
			for (kk = kb; kk < kb + ke; kk++) {
				const uint8_t *px = x->p + (xo + (int64_t)kk * x->st[k]) * es;
				uint8_t *py = y->p + (yo + (int64_t)kk * y->st[k]) * es;

				move_raw(py + (int64_t)jb * y->st[in] * es, y->st[in] * es,
					 px + (int64_t)jb * x->st[in] * es, x->st[in] * es,
					 je, es);
			}
		}
	} while (rows_next(idx, outer, r));
	return 0;
}

/*
 * Conversions between the float storage types, without vnpu_ld()'s and
 * vnpu_st()'s dispatch per element (the same conversion functions, so the
 * same bits); false when @x -> @y is not one of them.
 */
static bool convert_run(const struct vnpu_tv *x, const struct vnpu_tv *y,
			uint8_t *dst, int64_t dstep, const uint8_t *src,
			int64_t sstep, uint32_t n)
{
	uint32_t i;
	uint16_t h;
	float f;

	if (x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_FP16) {
		for (i = 0; i < n; i++) {
			memcpy(&f, src + i * sstep, 4);
			h = vnpu_f32_to_fp16(f);
			memcpy(dst + i * dstep, &h, 2);
		}
	} else if (x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_BF16) {
		for (i = 0; i < n; i++) {
			memcpy(&f, src + i * sstep, 4);
			h = vnpu_f32_to_bf16(f);
			memcpy(dst + i * dstep, &h, 2);
		}
	} else if (x->dtype == VNPU_DT_FP16 && y->dtype == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			memcpy(&h, src + i * sstep, 2);
			f = vnpu_fp16_to_f32(h);
			memcpy(dst + i * dstep, &f, 4);
		}
	} else if (x->dtype == VNPU_DT_BF16 && y->dtype == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			memcpy(&h, src + i * sstep, 2);
			f = vnpu_bf16_to_f32(h);
			memcpy(dst + i * dstep, &f, 4);
		}
	} else {
		return false;
	}
	return true;
}

/*
 * Copies that convert an 8-bit X (a Concat of parts quantized apart,
 * a requantizing Reshape) are a function of one byte: a table of the
 * reference's vnpu_st(vnpu_ld()) for each byte, built when the copy moves
 * at least this many elements, replaces a call of each per element.
 */
#define BYTE_TABLE_MIN	256

struct byte_table {
	bool on;
	uint32_t es;
	uint8_t out[256][4];
};

static void byte_table_init(struct byte_table *bt, const struct vnpu_tv *x,
			    const struct vnpu_tv *y, unsigned int round)
{
	uint32_t i;

	for (i = 0; i < 256; i++) {
		uint8_t b = (uint8_t)i;

		vnpu_st(y, bt->out[i], vnpu_ld(x, &b, 0), 0, round);
	}
	bt->es = y->esize;
	bt->on = true;
}

static void byte_table_run(const struct byte_table *bt, uint8_t *dst, int64_t dstep,
			   const uint8_t *src, int64_t sstep, uint32_t n)
{
	uint32_t i;

	if (bt->es == 1)
		for (i = 0; i < n; i++)
			dst[i * dstep] = bt->out[src[i * sstep]][0];
	else
		for (i = 0; i < n; i++)
			memcpy(dst + i * dstep, bt->out[src[i * sstep]], bt->es);
}

/*
 * Elements of a raw copy that is one dense block moved as it lies: X and
 * Y of the same dims and strides, no offset or reversal, the strides of
 * the dims longer than 1 a permutation of a dense layout.  libnpu's CPU
 * path hands Transpose such copies (its output keeps X's NHWC layout
 * under the NCHW dims).  0 when the copy is not one.
 */
static uint64_t copy_one_block(const struct vnpu_cmd_compute *c, const struct vnpu_tv *x,
			       const struct vnpu_tv *y)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	uint64_t n = 1, want = 1;
	int d, i, used[VNPU_MAX_RANK] = { 0 };

	if (at->reverse || x->rank != y->rank)
		return 0;
	for (d = 0; d < y->rank; d++) {
		if (at->offset[d] || x->dims[d] != y->dims[d])
			return 0;
		if (y->dims[d] > 1 && x->st[d] != y->st[d])
			return 0;
		n *= y->dims[d];
	}
	/* Dense: each next stride (smallest first) the block so far. */
	for (i = 0; i < y->rank; i++) {
		for (d = 0; d < y->rank; d++)
			if (!used[d] && y->dims[d] > 1 && y->st[d] == (int64_t)want)
				break;
		if (d == y->rank)
			break;
		used[d] = 1;
		want *= y->dims[d];
	}
	return want == n ? n : 0;
}

int vnpu_eng_copy(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		  struct vnpu_run_ctx *rc)
{
	struct byte_table bt = { .on = false };
	uint64_t moved = 1;
	const struct vnpu_attr_copy *at = &c->attr.copy;
	const struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t lo[VNPU_MAX_RANK], hi[VNPU_MAX_RANK], ext[VNPU_MAX_RANK];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = y->rank, in = r - 1, d;
	bool raw = vnpu_copy_raw(x, y);
	uint8_t fillb[4];
	uint32_t es = y->esize, xn = x->dims[in];
	int64_t off = at->offset[in];
	int64_t ystep = y->st[in] * es;
	int64_t xstep = x->st[in] * (int64_t)x->esize;
	bool rev = (at->reverse >> in) & 1;

	vnpu_st(y, fillb, fill_value(at->fill), 0, c->round);
	vnpu_copy_box(c, lo, hi);
	for (d = 0; d < r; d++) {
		ext[d] = hi[d] - lo[d];
		if (!ext[d])
			return 0;
		if (moved < BYTE_TABLE_MIN)
			moved *= ext[d];
	}
	if (!raw && x->esize == 1 && moved >= BYTE_TABLE_MIN)
		byte_table_init(&bt, x, y, c->round);
	if (raw) {
		uint64_t n = copy_one_block(c, x, y), i, m;

		for (i = 0; i < n && x->p != y->p; i += m) {
			m = n - i < RUN_MAX ? n - i : RUN_MAX;
			if (vnpu_run_tick(rc, m))
				return -ECANCELED;
			memmove(y->p + i * es, x->p + i * es, m * es);
		}
		if (n)
			return 0;
	}
	if (raw && at->border == VNPU_COPY_BORDER_KEEP && x->st[in] != 1 &&
	    ext[in] > 1 && !rev)
		for (d = 0; d < in; d++)
			if (x->st[d] == 1 && ext[d] > 1 && !((at->reverse >> d) & 1))
				return copy_tiled(c, x, y, lo, ext, d, rc);
	do {
		int64_t xo = 0, yo = 0, j, a, b;
		bool inside = true;
		uint8_t *py;
		const uint8_t *px;

		for (d = 0; d < in; d++) {
			uint32_t yd = lo[d] + idx[d];
			int64_t s = vnpu_copy_src((int64_t)yd - at->offset[d],
						  x->dims[d], at->border);

			yo += (int64_t)yd * y->st[d];
			if (s < 0) {
				inside = false;
				continue;
			}
			if ((at->reverse >> d) & 1)
				s = x->dims[d] - 1 - s;
			xo += s * x->st[d];
		}
		py = y->p + yo * es;
		px = x->p + xo * (int64_t)x->esize;
		/* The row's inside run: Y columns [a, b) read X from a - off on. */
		a = off > lo[in] ? off : lo[in];
		b = off + xn < hi[in] ? off + xn : hi[in];
		if (!inside || b <= a)
			a = b = hi[in];
		for (j = lo[in]; j < hi[in]; j++) {
			uint8_t *q = py + j * ystep;
			int64_t s;

			if (j == a) {
				int64_t s0 = rev ? xn - 1 - (a - off) : a - off;
				int64_t step = rev ? -xstep : xstep;
				const uint8_t *p0 = px + s0 * xstep;
				uint32_t left = (uint32_t)(b - a), n, i;

				/* In pieces: a row can hold 2^26 elements. */
				for (; left; left -= n) {
					n = left < RUN_MAX ? left : RUN_MAX;
					if (vnpu_run_tick(rc, n))
						return -ECANCELED;
					if (raw)
						move_raw(q, ystep, p0, step, n, es);
					else if (bt.on)
						byte_table_run(&bt, q, ystep, p0, step, n);
					else if (convert_run(x, y, q, ystep, p0, step, n))
						;
					else
						for (i = 0; i < n; i++)
							vnpu_st(y, q + i * ystep,
								vnpu_ld(x, p0 + i * step, 0),
								0, c->round);
					q += n * ystep;
					p0 += n * step;
				}
				j = b - 1;
				continue;
			}
			if (vnpu_run_tick(rc, 1))
				return -ECANCELED;
			s = inside ? vnpu_copy_src(j - off, xn, at->border) : -1;
			if (s < 0) {
				memcpy(q, fillb, es);
				continue;
			}
			if (rev)
				s = xn - 1 - s;
			if (raw)
				memcpy(q, px + s * xstep, es);
			else if (bt.on)
				memcpy(q, bt.out[px[s * xstep]], es);
			else
				vnpu_st(y, q, vnpu_ld(x, px + s * xstep, 0), 0,
					c->round);
		}
	} while (in > 0 && rows_next(idx, ext, in));
	return 0;
}

/* ---- RESIZE ------------------------------------------------------------- */

/*
 * @n channels of X from @p (byte step @step) as reals into @v: what
 * vnpu_ld() returns for each (per-tensor quantization), without its
 * dispatch per element, so the loops over channels vectorize.
 */
static void load_channels(const struct vnpu_tv *x, const uint8_t *p,
			  int64_t step, uint32_t n, float *v)
{
	uint32_t k;
	uint16_t h;

	switch (x->dtype) {
	case VNPU_DT_FP32:
		if (step == 4) {
			memcpy(v, p, 4ull * n);
			break;
		}
		for (k = 0; k < n; k++)
			memcpy(&v[k], p + k * step, 4);
		break;
	case VNPU_DT_INT8:
		for (k = 0; k < n; k++)
			v[k] = (float)((int32_t)(int8_t)p[k * step] - x->zp) * x->scale;
		break;
	case VNPU_DT_UINT8:
		for (k = 0; k < n; k++)
			v[k] = (float)((int32_t)p[k * step] - x->zp) * x->scale;
		break;
	case VNPU_DT_FP16:
		for (k = 0; k < n; k++) {
			memcpy(&h, p + k * step, 2);
			v[k] = vnpu_fp16_to_f32(h);
		}
		break;
	default:	/* BF16 */
		for (k = 0; k < n; k++) {
			memcpy(&h, p + k * step, 2);
			v[k] = vnpu_bf16_to_f32(h);
		}
		break;
	}
}

/*
 * The taps of every output row and column are computed once, not per
 * element, and the channels (NHWC's innermost, usually contiguous) run in
 * the inner loop.  Per element the arithmetic is the reference's, in its
 * order, so results are identical.
 */
int vnpu_eng_resize(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_resize *at = &c->attr.resize;
	const struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t oh = y->dims[1], ow = y->dims[2], ch = y->dims[3];
	bool raw = at->mode == VNPU_RESIZE_NEAREST && vnpu_copy_raw(x, y);
	bool f32 = x->dtype == VNPU_DT_FP32 && y->dtype == VNPU_DT_FP32;
	float ext = fill_value(at->extrapolation);
	struct vnpu_resize_taps *th, *tw;
	uint32_t b, oy, ox, k, i, j;
	float *vacc = NULL, *vrow = NULL, *vin = NULL;
	int ret = 0;

	th = vnpu_run_alloc(rc, sizeof(*th) * ((size_t)oh + ow));
	if (!th)
		return -ENOMEM;
	tw = th + oh;
	/* Channel vectors for the interpolating modes; else element by element. */
	if (!raw && ch <= (1u << 16))
		vacc = vnpu_run_alloc(rc, 3 * sizeof(float) * ch);
	if (vacc) {
		vrow = vacc + ch;
		vin = vrow + ch;
	}
	for (oy = 0; oy < oh && !vnpu_run_tick(rc, 1); oy++)
		vnpu_resize_taps(at, 0, oy, x->dims[1], oh, &th[oy]);
	for (ox = 0; ox < ow && !vnpu_run_tick(rc, 1); ox++)
		vnpu_resize_taps(at, 1, ox, x->dims[2], ow, &tw[ox]);
	if (rc && rc->stopped)
		ret = -ECANCELED;
	for (b = 0; b < y->dims[0] && !ret; b++)
	for (oy = 0; oy < oh && !ret; oy++)
	for (ox = 0; ox < ow; ox++) {
		const struct vnpu_resize_taps *h = &th[oy], *w = &tw[ox];
		uint8_t *py = y->p + ((int64_t)b * y->st[0] + (int64_t)oy * y->st[1] +
				      (int64_t)ox * y->st[2]) * y->esize;
		const uint8_t *src[16];
		int64_t ys = y->st[3] * y->esize, xs = x->st[3] * x->esize;

		/* Channels past 2^16 take the paths that poll per RUN_MAX. */
		if (vnpu_run_tick(rc, (uint64_t)ch * (h->n * w->n + 1))) {
			ret = -ECANCELED;
			break;
		}
		if (!h->n || !w->n) {
			for (k = 0; k < ch && !ret; k++) {
				if (k && !(k % RUN_MAX) && vnpu_run_tick(rc, RUN_MAX))
					ret = -ECANCELED;
				else
					vnpu_st(y, py + k * ys, ext, 0, c->round);
			}
			if (ret)
				break;
			continue;
		}
		for (i = 0; i < h->n; i++)
			for (j = 0; j < w->n; j++)
				src[i * w->n + j] = x->p + ((int64_t)b * x->st[0] +
					(int64_t)h->idx[i] * x->st[1] +
					(int64_t)w->idx[j] * x->st[2]) * x->esize;
		if (raw) {
			for (k = 0; k < ch && !ret; k += RUN_MAX) {
				uint32_t n = ch - k < RUN_MAX ? ch - k : RUN_MAX;

				if (k && vnpu_run_tick(rc, n))
					ret = -ECANCELED;
				else
					move_raw(py + k * ys, ys, src[0] + k * xs, xs,
						 n, y->esize);
			}
			if (ret)
				break;
			continue;
		}
		if (vacc) {
			/* Per channel exactly the sums below, in their order. */
			for (k = 0; k < ch; k++)
				vacc[k] = 0.0f;
			for (i = 0; i < h->n; i++) {
				float wi = h->w[i];

				for (k = 0; k < ch; k++)
					vrow[k] = 0.0f;
				for (j = 0; j < w->n; j++) {
					float wj = w->w[j];

					load_channels(x, src[i * w->n + j], xs, ch, vin);
					for (k = 0; k < ch; k++)
						vrow[k] += wj * vin[k];
				}
				for (k = 0; k < ch; k++)
					vacc[k] += wi * vrow[k];
			}
			for (k = 0; k < ch; k++)
				vacc[k] = vnpu_resize_nan(vacc[k]);
			if (f32 && ys == 4)
				memcpy(py, vacc, 4ull * ch);
			else
				for (k = 0; k < ch; k++)
					vnpu_st(y, py + k * ys, vacc[k], 0, c->round);
			continue;
		}
		for (k = 0; k < ch; k++) {
			float acc = 0.0f;

			if (k && !(k % (RUN_MAX / 16)) &&
			    vnpu_run_tick(rc, (uint64_t)(RUN_MAX / 16) * h->n * w->n)) {
				ret = -ECANCELED;
				break;
			}

			for (i = 0; i < h->n; i++) {
				float row = 0.0f;

				for (j = 0; j < w->n; j++) {
					const uint8_t *p = src[i * w->n + j] + k * xs;
					float v;

					if (f32)
						memcpy(&v, p, 4);
					else
						v = vnpu_ld(x, p, 0);
					row += w->w[j] * v;
				}
				acc += h->w[i] * row;
			}
			acc = vnpu_resize_nan(acc);
			if (f32)
				memcpy(py + k * ys, &acc, 4);
			else
				vnpu_st(y, py + k * ys, acc, 0, c->round);
		}
		if (ret)
			break;
	}
	vnpu_run_free(rc, vacc);
	vnpu_run_free(rc, th);
	return ret;
}
