// SPDX-License-Identifier: MIT
/*
 * Reference semantics of the data-movement ops (COPY).  Part of
 * vnpu_ref.c, which #includes this file where its validation helpers are
 * in scope, so that every build of the reference (device, libnpu, tests,
 * fuzzers) gets the same code without a second compilation unit.
 */

/* ---- COPY --------------------------------------------------------------- */

int64_t vnpu_copy_src(int64_t s, uint32_t n, unsigned int border)
{
	int64_t p;

	if (s >= 0 && s < n)
		return s;
	switch (border) {
	case VNPU_COPY_BORDER_EDGE:
		return s < 0 ? 0 : (int64_t)n - 1;
	case VNPU_COPY_BORDER_REFLECT:
		if (n == 1)
			return 0;
		p = 2 * ((int64_t)n - 1);
		s %= p;
		if (s < 0)
			s += p;
		return s < n ? s : p - s;
	case VNPU_COPY_BORDER_WRAP:
		s %= n;
		return s < 0 ? s + n : s;
	default:
		return -1;
	}
}

bool vnpu_copy_raw(const struct vnpu_tv *x, const struct vnpu_tv *y)
{
	if (x->dtype != y->dtype)
		return false;
	return !dt_is_q8(x->dtype) || (x->scale == y->scale && x->zp == y->zp);
}

void vnpu_copy_box(const struct vnpu_cmd_compute *c, uint32_t *lo,
		   uint32_t *hi)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	int d;

	for (d = 0; d < c->t[3].rank; d++) {
		int64_t a = at->offset[d], b = a + c->t[0].dims[d];
		int64_t n = c->t[3].dims[d];

		if (at->border != VNPU_COPY_BORDER_KEEP) {
			lo[d] = 0;
			hi[d] = (uint32_t)n;
			continue;
		}
		a = a < 0 ? 0 : a > n ? n : a;
		b = b < a ? a : b > n ? n : b;
		lo[d] = (uint32_t)a;
		hi[d] = (uint32_t)b;
	}
}

static int check_copy(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_copy *at = &c->attr.copy;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	uint32_t lo[VNPU_MAX_RANK], hi[VNPU_MAX_RANK];
	int d, s;

	if (at->border > VNPU_COPY_BORDER_WRAP)
		return bad(k, OFF(attr.copy.border));
	if (at->border != VNPU_COPY_BORDER_CONSTANT && at->fill)
		return bad(k, OFF(attr.copy.fill));
	if (!all_zero(at->reserved, sizeof(at->reserved)))
		return bad(k, OFF(attr.copy.reserved) +
			   first_nonzero(at->reserved, sizeof(at->reserved)));
	if (x->rank != y->rank)
		return bad(k, TOFF(3, rank));
	for (d = y->rank; d < VNPU_MAX_RANK; d++)
		if (at->offset[d])
			return bad(k, OFF(attr.copy.offset) + 4u * (uint32_t)d);
	if (at->reverse >> y->rank)
		return bad(k, OFF(attr.copy.reverse));
	/* Int32 moves as bits only; per-channel scales would need a mapping. */
	if ((x->dtype == VNPU_DT_INT32) != (y->dtype == VNPU_DT_INT32))
		return bad(k, TOFF(3, dtype));
	for (s = 0; s < VNPU_OP_SLOTS; s += VNPU_OP_SLOT_OUT)
		if (c->t[s].quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(s, quant));
	/* Work units: the elements written (< 2^40, see check_tensor). */
	vnpu_copy_box(c, lo, hi);
	k->info->macs = 1;
	for (d = 0; d < y->rank; d++)
		k->info->macs *= hi[d] - lo[d];
	return 0;
}

static int ref_copy(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_copy *at = &c->attr.copy;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t lo[VNPU_MAX_RANK], hi[VNPU_MAX_RANK], ext[VNPU_MAX_RANK];
	uint32_t idx[VNPU_MAX_RANK] = { 0 }, yi[VNPU_MAX_RANK], xi[VNPU_MAX_RANK];
	float fill = f32_from_bits(at->fill);
	bool raw = vnpu_copy_raw(x, y);
	int r = y->rank, d;

	vnpu_copy_box(c, lo, hi);
	for (d = 0; d < r; d++) {
		ext[d] = hi[d] - lo[d];
		if (!ext[d])
			return 0;	/* X lies wholly outside Y: nothing to do */
	}
	do {
		bool inside = true;
		uint8_t *py;

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		for (d = 0; d < r; d++) {
			int64_t s;

			yi[d] = lo[d] + idx[d];
			s = vnpu_copy_src((int64_t)yi[d] - at->offset[d],
					  x->dims[d], at->border);
			if (s < 0) {
				inside = false;
				continue;
			}
			xi[d] = (at->reverse >> d) & 1 ?
				x->dims[d] - 1 - (uint32_t)s : (uint32_t)s;
		}
		py = tv_at(y, yi);
		if (!inside)
			vnpu_st(y, py, fill, 0, c->round);
		else if (raw)
			memcpy(py, tv_at(x, xi), y->esize);
		else
			vnpu_st(y, py, vnpu_ld(x, tv_at(x, xi), 0), 0, c->round);
	} while (idx_next(idx, ext, r));
	return 0;
}

/* ---- RESIZE ------------------------------------------------------------- */

/*
 * Where output coordinate @o of an axis reads X, in X's coordinates.  As
 * in ONNX, the resized length the transformations use is in * scale, a
 * real number: with an explicit scale it need not be the output extent.
 */
static double resize_src(const struct vnpu_attr_resize *at, int axis,
			 uint32_t o, uint32_t in, uint32_t out)
{
	uint32_t sbits = axis ? at->scale_w : at->scale_h;
	double s = sbits ? (double)f32_from_bits(sbits) : (double)out / in;
	double x = o, len = (double)in * s, a, b;

	switch (at->coord) {
	case VNPU_RESIZE_HALF_PIXEL:
		return (x + 0.5) / s - 0.5;
	case VNPU_RESIZE_ASYMMETRIC:
		return x / s;
	case VNPU_RESIZE_ALIGN_CORNERS:
		return len == 1.0 ? 0.0 : x * (in - 1) / (len - 1);
	case VNPU_RESIZE_PYTORCH_HALF_PIXEL:
		return len > 1.0 ? (x + 0.5) / s - 0.5 : 0.0;
	case VNPU_RESIZE_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5) / s;
	default:	/* TF_CROP_AND_RESIZE */
		a = f32_from_bits(at->roi[axis]);
		b = f32_from_bits(at->roi[2 + axis]);
		return len > 1.0 ? a * (in - 1) + x * (b - a) * (in - 1) / (len - 1) :
		       0.5 * (a + b) * (in - 1);
	}
}

static uint32_t clamp_index(int64_t i, uint32_t n)
{
	return i < 0 ? 0 : i >= n ? n - 1 : (uint32_t)i;
}

void vnpu_resize_taps(const struct vnpu_attr_resize *at, int axis, uint32_t o,
		      uint32_t in, uint32_t out, struct vnpu_resize_taps *t)
{
	double x = resize_src(at, axis, o, in, out), fl, r, c[4], sum;
	double a = f32_from_bits(at->cubic_a);
	int64_t i0;
	int k;

	memset(t, 0, sizeof(*t));
	/* Finite scales and roi make x finite; this keeps the casts defined regardless. */
	if (x != x)
		x = 0.0;
	if (at->coord == VNPU_RESIZE_TF_CROP_AND_RESIZE &&
	    !(x >= 0.0 && x <= (double)in - 1))
		return;		/* n = 0: the extrapolation value */
	/*
	 * Past a few elements beyond X every tap clamps to the edge anyway;
	 * bounding x keeps the integer conversions defined.
	 */
	x = x < -8.0 ? -8.0 : x > (double)in + 8 ? (double)in + 8 : x;
	fl = floor(x);
	r = x - fl;
	i0 = (int64_t)fl;
	switch (at->mode) {
	case VNPU_RESIZE_NEAREST:
		switch (at->nearest) {
		case VNPU_RESIZE_ROUND_PREFER_FLOOR:
			i0 += r > 0.5;
			break;
		case VNPU_RESIZE_ROUND_PREFER_CEIL:
			i0 += r >= 0.5;
			break;
		case VNPU_RESIZE_CEIL:
			i0 += r > 0.0;
			break;
		}
		t->n = 1;
		t->idx[0] = clamp_index(i0, in);
		t->w[0] = 1.0f;
		return;
	case VNPU_RESIZE_LINEAR:
		t->n = 2;
		t->idx[0] = clamp_index(i0, in);
		t->idx[1] = clamp_index(i0 + 1, in);
		t->w[0] = (float)(1.0 - r);
		t->w[1] = (float)r;
		return;
	}
	/* CUBIC: Keys' kernel with coefficient a, taps i0 - 1 .. i0 + 2. */
	c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
	c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
	c[2] = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1;
	c[3] = ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a;
	if (at->flags & VNPU_RESIZE_EXCLUDE_OUTSIDE) {
		double keep[4];

		for (sum = 0.0, k = 0; k < 4; k++) {
			int64_t i = i0 - 1 + k;

			keep[k] = i >= 0 && i < in ? c[k] : 0.0;
			sum += keep[k];
		}
		/* A window wholly outside X keeps the plain weights. */
		if (sum != 0.0)
			for (k = 0; k < 4; k++)
				c[k] = keep[k] / sum;
	}
	t->n = 4;
	for (k = 0; k < 4; k++) {
		t->idx[k] = clamp_index(i0 - 1 + k, in);
		t->w[k] = (float)c[k];
	}
}

static bool f32_finite(uint32_t bits)
{
	return isfinite(f32_from_bits(bits));
}

static int check_resize(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_resize *at = &c->attr.resize;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	bool crop = at->coord == VNPU_RESIZE_TF_CROP_AND_RESIZE;
	float s;
	int i;

	if (at->mode > VNPU_RESIZE_CUBIC)
		return bad(k, OFF(attr.resize.mode));
	if (at->coord > VNPU_RESIZE_TF_CROP_AND_RESIZE)
		return bad(k, OFF(attr.resize.coord));
	if (at->mode == VNPU_RESIZE_NEAREST ? at->nearest > VNPU_RESIZE_CEIL :
	    at->nearest != 0)
		return bad(k, OFF(attr.resize.nearest));
	if ((at->flags & ~VNPU_RESIZE_EXCLUDE_OUTSIDE) ||
	    (at->flags && at->mode != VNPU_RESIZE_CUBIC))
		return bad(k, OFF(attr.resize.flags));
	s = f32_from_bits(at->scale_h);
	if (at->scale_h && !(s > 0.0f && isfinite(s)))
		return bad(k, OFF(attr.resize.scale_h));
	s = f32_from_bits(at->scale_w);
	if (at->scale_w && !(s > 0.0f && isfinite(s)))
		return bad(k, OFF(attr.resize.scale_w));
	if (at->mode == VNPU_RESIZE_CUBIC ? !f32_finite(at->cubic_a) : at->cubic_a != 0)
		return bad(k, OFF(attr.resize.cubic_a));
	if (crop ? !f32_finite(at->extrapolation) : at->extrapolation != 0)
		return bad(k, OFF(attr.resize.extrapolation));
	for (i = 0; i < 4; i++)
		if (crop ? !f32_finite(at->roi[i]) : at->roi[i] != 0)
			return bad(k, OFF(attr.resize.roi) + 4u * (uint32_t)i);
	if (x->rank != 4)
		return bad(k, TOFF(0, rank));
	if (y->rank != 4)
		return bad(k, TOFF(3, rank));
	if (y->dims[0] != x->dims[0])
		return bad(k, DIM_OFF(3, 0));
	if (y->dims[3] != x->dims[3])
		return bad(k, DIM_OFF(3, 3));
	for (i = 0; i < VNPU_OP_SLOTS; i += VNPU_OP_SLOT_OUT) {
		if (c->t[i].dtype == VNPU_DT_INT32)
			return bad(k, TOFF(i, dtype));
		if (c->t[i].quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(i, quant));
	}
	/* Work units: taps read per output element (< 2^40 * 16). */
	k->info->macs = (uint64_t)y->dims[0] * y->dims[1] * y->dims[2] * y->dims[3];
	k->info->macs *= at->mode == VNPU_RESIZE_NEAREST ? 1 :
			 at->mode == VNPU_RESIZE_LINEAR ? 4 : 16;
	return 0;
}

static int ref_resize(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_resize *at = &c->attr.resize;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t idx[4] = { 0 };
	bool raw = at->mode == VNPU_RESIZE_NEAREST && vnpu_copy_raw(x, y);
	float ext = f32_from_bits(at->extrapolation);

	do {
		struct vnpu_resize_taps th, tw;
		uint8_t *py = tv_at(y, idx);
		float acc = 0.0f;
		uint32_t i, j;

		vnpu_resize_taps(at, 0, idx[1], x->dims[1], y->dims[1], &th);
		vnpu_resize_taps(at, 1, idx[2], x->dims[2], y->dims[2], &tw);
		if (vnpu_run_tick(rc, (uint64_t)th.n * tw.n + 1))
			return -ECANCELED;
		if (!th.n || !tw.n) {
			vnpu_st(y, py, ext, 0, c->round);
			continue;
		}
		if (raw) {
			memcpy(py, tv_at(x, (const uint32_t[]){ idx[0], th.idx[0],
								tw.idx[0], idx[3] }),
			       y->esize);
			continue;
		}
		/* Along W first, then H: the order ops.rst fixes. */
		for (i = 0; i < th.n; i++) {
			float row = 0.0f;

			for (j = 0; j < tw.n; j++)
				row += tw.w[j] * vnpu_ld(x, tv_at(x, (const uint32_t[]){
					idx[0], th.idx[i], tw.idx[j], idx[3] }), 0);
			acc += th.w[i] * row;
		}
		vnpu_st(y, py, vnpu_resize_nan(acc), 0, c->round);
	} while (idx_next(idx, y->dims, 4));
	return 0;
}
