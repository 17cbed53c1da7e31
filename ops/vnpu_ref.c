// SPDX-License-Identifier: MIT
/*
 * Reference semantics of the vnpu compute ops.  Written for clarity, not
 * speed: every op walks its output with full index vectors and reads
 * operands through vnpu_ld()/vnpu_st(), so strides, broadcasting, dtypes
 * and quantization are handled in one place.  Documentation/ops.rst is the
 * prose version; where the two disagree this file is the bug.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_ref.h"

#define MAX_ELEMS	(1ull << 40)

/* ---- dtype helpers --------------------------------------------------- */

uint32_t vnpu_dtype_size(unsigned int dtype)
{
	switch (dtype) {
	case VNPU_DT_FP32:
	case VNPU_DT_INT32:
		return 4;
	case VNPU_DT_FP16:
	case VNPU_DT_BF16:
		return 2;
	case VNPU_DT_INT8:
	case VNPU_DT_UINT8:
		return 1;
	default:
		return 0;
	}
}

static bool dt_is_float(unsigned int dt)
{
	return dt == VNPU_DT_FP32 || dt == VNPU_DT_FP16 || dt == VNPU_DT_BF16;
}

static bool dt_is_q8(unsigned int dt)
{
	return dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8;
}

static int32_t dt_min(unsigned int dt)
{
	return dt == VNPU_DT_INT8 ? -128 : dt == VNPU_DT_UINT8 ? 0 : INT32_MIN;
}

static int32_t dt_max(unsigned int dt)
{
	return dt == VNPU_DT_INT8 ? 127 : dt == VNPU_DT_UINT8 ? 255 : INT32_MAX;
}

static float f32_from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

float vnpu_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;

	if (exp == 0x1f)
		return f32_from_bits(sign | 0x7f800000 | (man << 13));
	if (exp == 0) {
		/* Subnormal: man * 2^-24 is exact in binary32. */
		float v = (float)man * 0x1p-24f;

		return sign ? -v : v;
	}
	return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t vnpu_f32_to_fp16(float f)
{
	uint32_t u = f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t a = u & 0x7fffffff;

	if (a > 0x7f800000)
		return sign | 0x7e00 | (uint16_t)((a >> 13) & 0x3ff);
	if (a >= 0x477ff000)	/* rounds to >= 65520: overflow to inf */
		return sign | 0x7c00;
	if (a < 0x38800000) {
		/*
		 * Result is subnormal (or zero): scale so the fp16 subnormal
		 * unit is 1 and let the FPU round to nearest even.
		 */
		float v = f32_from_bits(a) * 0x1p24f;

		return sign | (uint16_t)lrintf(v);
	}
	/* Normal: round the 13 dropped mantissa bits to nearest even. */
	a += 0xfff + ((a >> 13) & 1);
	return sign | (uint16_t)((a - 0x38000000) >> 13);
}

float vnpu_bf16_to_f32(uint16_t h)
{
	return f32_from_bits((uint32_t)h << 16);
}

uint16_t vnpu_f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);	/* keep NaN quiet */
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* ---- Rounding and requantization ------------------------------------ */

static float round_f(float v, unsigned int round)
{
	return round == VNPU_ROUND_TFLITE ? roundf(v) : rintf(v);
}

int32_t vnpu_quantize_f(float v, float scale, int32_t zp, int32_t lo,
			int32_t hi, unsigned int round)
{
	float r;
	int64_t q;

	if (isnan(v))
		return zp < lo ? lo : zp > hi ? hi : zp;
	r = round_f(v / scale, round);
	/* Clamp before the conversion: out-of-range float->int is UB. */
	if (r > 0x1p40f)
		r = 0x1p40f;
	if (r < -0x1p40f)
		r = -0x1p40f;
	q = (int64_t)r + zp;
	return q < lo ? lo : q > hi ? hi : (int32_t)q;
}

struct vnpu_qmul vnpu_qmul_from_double(double m)
{
	struct vnpu_qmul q = { 0, 0 };
	int exp;
	double frac;
	int64_t fixed;

	if (!(m > 0.0) || !isfinite(m))
		return q;
	frac = frexp(m, &exp);	/* m = frac * 2^exp, frac in [0.5, 1) */
	fixed = llround(frac * 2147483648.0);
	if (fixed == (1ll << 31)) {
		fixed /= 2;
		exp++;
	}
	if (exp < -31)
		return q;	/* underflows to a zero multiplier */
	if (exp > 30)
		exp = 30;	/* saturates anyway; keeps the shift defined */
	q.mult = (int32_t)fixed;
	q.shift = exp;
	return q;
}

/* round(a * b / 2^31), ties away from zero, saturating the one overflow. */
static int32_t srdhm(int32_t a, int32_t b)
{
	int64_t ab, nudge;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	ab = (int64_t)a * b;
	nudge = ab >= 0 ? (1ll << 30) : 1 - (1ll << 30);
	return (int32_t)((ab + nudge) / (1ll << 31));
}

/* x / 2^e rounded to nearest, ties away from zero. */
static int32_t rdbpot(int32_t x, int e)
{
	int32_t mask, rem, thr;

	if (e <= 0)
		return x;
	mask = (int32_t)((1u << e) - 1);
	rem = x & mask;
	thr = (mask >> 1) + (x < 0);
	return (x >> e) + (rem > thr);
}

int32_t vnpu_qmul_apply(int32_t x, struct vnpu_qmul q)
{
	int64_t l = x;

	if (q.shift > 0) {
		l *= (int64_t)1 << q.shift;
		l = l > INT32_MAX ? INT32_MAX : l < INT32_MIN ? INT32_MIN : l;
	}
	return rdbpot(srdhm((int32_t)l, q.mult), q.shift < 0 ? -q.shift : 0);
}

/* ---- Activations ------------------------------------------------------ */

float vnpu_act(unsigned int act, float alpha, float x)
{
	switch (act) {
	case VNPU_ACT_RELU:
		return x > 0.0f ? x : 0.0f;
	case VNPU_ACT_RELU6:
		return x > 6.0f ? 6.0f : x > 0.0f ? x : 0.0f;
	case VNPU_ACT_LEAKY_RELU:
		return x >= 0.0f ? x : x * alpha;
	case VNPU_ACT_SIGMOID:
		return 1.0f / (1.0f + expf(-x));
	case VNPU_ACT_TANH:
		return tanhf(x);
	case VNPU_ACT_GELU:
		return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
	default:
		return x;
	}
}

float vnpu_clip(float lo, float hi, float x)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* ---- Tensor views ----------------------------------------------------- */

void vnpu_tv_init(struct vnpu_tv *tv, const struct vnpu_tensor_desc *d,
		  void *data, const void *qparams)
{
	int64_t st = 1;
	int i;

	memset(tv, 0, sizeof(*tv));
	tv->p = data;
	tv->dtype = d->dtype;
	tv->rank = d->rank;
	tv->quant = d->quant;
	tv->axis = d->quant_axis;
	tv->esize = vnpu_dtype_size(d->dtype);
	for (i = d->rank - 1; i >= 0; i--) {
		tv->dims[i] = d->dims[i];
		if (d->flags & VNPU_TENSOR_STRIDED) {
			tv->st[i] = (int64_t)d->strides[i];
		} else {
			tv->st[i] = st;
			st *= d->dims[i];
		}
	}
	tv->scale = f32_from_bits(d->scale);
	tv->zp = d->zero_point;
	if (d->quant == VNPU_QUANT_CHANNEL)
		tv->qarr = qparams;
}

float vnpu_tv_scale(const struct vnpu_tv *tv, uint32_t ch)
{
	float s;

	if (tv->quant != VNPU_QUANT_CHANNEL)
		return tv->scale;
	memcpy(&s, tv->qarr + 4 * (size_t)ch, 4);
	return s;
}

int32_t vnpu_tv_zp(const struct vnpu_tv *tv, uint32_t ch)
{
	int32_t z;

	if (tv->quant != VNPU_QUANT_CHANNEL)
		return tv->zp;
	memcpy(&z, tv->qarr + 4 * ((size_t)tv->dims[tv->axis] + ch), 4);
	return z;
}

int vnpu_tv_check_quant(const struct vnpu_tv *tv)
{
	uint32_t c;

	if (tv->quant != VNPU_QUANT_CHANNEL)
		return 0;
	if (!tv->qarr)
		return -EINVAL;
	for (c = 0; c < tv->dims[tv->axis]; c++) {
		float s = vnpu_tv_scale(tv, c);
		int32_t z = vnpu_tv_zp(tv, c);

		if (!(s > 0.0f) || !isfinite(s) || z < dt_min(tv->dtype) ||
		    z > dt_max(tv->dtype))
			return -EINVAL;
	}
	return 0;
}

float vnpu_ld(const struct vnpu_tv *tv, const uint8_t *p, uint32_t ch)
{
	uint16_t h;
	float f;
	int32_t i;

	switch (tv->dtype) {
	case VNPU_DT_FP32:
		memcpy(&f, p, 4);
		return f;
	case VNPU_DT_FP16:
		memcpy(&h, p, 2);
		return vnpu_fp16_to_f32(h);
	case VNPU_DT_BF16:
		memcpy(&h, p, 2);
		return vnpu_bf16_to_f32(h);
	case VNPU_DT_INT8:
		return (float)((int32_t)(int8_t)*p - vnpu_tv_zp(tv, ch)) *
		       vnpu_tv_scale(tv, ch);
	case VNPU_DT_UINT8:
		return (float)((int32_t)*p - vnpu_tv_zp(tv, ch)) *
		       vnpu_tv_scale(tv, ch);
	case VNPU_DT_INT32:
		memcpy(&i, p, 4);
		return (float)i;
	}
	return 0.0f;
}

void vnpu_st(const struct vnpu_tv *tv, uint8_t *p, float v, uint32_t ch,
	     unsigned int round)
{
	uint16_t h;
	int32_t q;

	switch (tv->dtype) {
	case VNPU_DT_FP32:
		memcpy(p, &v, 4);
		break;
	case VNPU_DT_FP16:
		h = vnpu_f32_to_fp16(v);
		memcpy(p, &h, 2);
		break;
	case VNPU_DT_BF16:
		h = vnpu_f32_to_bf16(v);
		memcpy(p, &h, 2);
		break;
	case VNPU_DT_INT8:
	case VNPU_DT_UINT8:
		q = vnpu_quantize_f(v, vnpu_tv_scale(tv, ch), vnpu_tv_zp(tv, ch),
				    dt_min(tv->dtype), dt_max(tv->dtype), round);
		*p = (uint8_t)q;
		break;
	case VNPU_DT_INT32:
		q = vnpu_quantize_f(v, 1.0f, 0, INT32_MIN, INT32_MAX, round);
		memcpy(p, &q, 4);
		break;
	}
}

static int32_t ld_raw(const struct vnpu_tv *tv, const uint8_t *p)
{
	int32_t i;

	if (tv->dtype == VNPU_DT_INT8)
		return (int8_t)*p;
	if (tv->dtype == VNPU_DT_UINT8)
		return *p;
	memcpy(&i, p, 4);
	return i;
}

static uint8_t *tv_at(const struct vnpu_tv *tv, const uint32_t *idx)
{
	int64_t off = 0;
	int i;

	for (i = 0; i < tv->rank; i++)
		off += (int64_t)idx[i] * tv->st[i];
	return tv->p + off * tv->esize;
}

/*
 * Address of the element of @tv that numpy broadcasting pairs with output
 * index @idx of rank @rank (dims right-aligned, size-1 dims repeat).
 */
static uint8_t *tv_at_bcast(const struct vnpu_tv *tv, const uint32_t *idx,
			    int rank)
{
	int64_t off = 0;
	int i, lead = rank - tv->rank;

	for (i = 0; i < tv->rank; i++)
		if (tv->dims[i] != 1)
			off += (int64_t)idx[lead + i] * tv->st[i];
	return tv->p + off * tv->esize;
}

/* Advance @idx over @dims (row-major); false after the last element. */
static bool idx_next(uint32_t *idx, const uint32_t *dims, int rank)
{
	int i;

	for (i = rank - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return true;
		idx[i] = 0;
	}
	return false;
}

/* ---- Epilogue --------------------------------------------------------- */

void vnpu_epi_init(struct vnpu_epi *e, const struct vnpu_cmd_compute *cmd,
		   const struct vnpu_tv *a, const struct vnpu_tv *b,
		   const struct vnpu_tv *y, uint32_t n)
{
	float sa = a->scale, sb = vnpu_tv_scale(b, n);

	memset(e, 0, sizeof(*e));
	e->act = cmd->act;
	e->round = cmd->round;
	e->alpha = f32_from_bits(cmd->act_alpha);
	e->in_scale = sa * sb;
	if (y->dtype == VNPU_DT_INT32) {
		e->mode = VNPU_EPI_INT32;
		return;
	}
	if (!dt_is_q8(y->dtype) || (e->act != VNPU_ACT_NONE &&
				    e->act != VNPU_ACT_RELU &&
				    e->act != VNPU_ACT_RELU6)) {
		e->mode = VNPU_EPI_FLOAT;
		return;
	}
	e->mode = VNPU_EPI_REQUANT;
	e->out_scale = vnpu_tv_scale(y, n);
	e->out_zp = vnpu_tv_zp(y, n);
	e->lo = dt_min(y->dtype);
	e->hi = dt_max(y->dtype);
	if (e->act != VNPU_ACT_NONE && e->out_zp > e->lo)
		e->lo = e->out_zp;
	if (e->act == VNPU_ACT_RELU6) {
		int32_t six = vnpu_quantize_f(6.0f, e->out_scale, e->out_zp,
					      e->lo, e->hi, e->round);

		if (six < e->hi)
			e->hi = six;
	}
	e->fmult = e->in_scale / e->out_scale;
	e->qmul = vnpu_qmul_from_double((double)sa * (double)sb /
					(double)e->out_scale);
}

void vnpu_epi_store(const struct vnpu_epi *e, const struct vnpu_tv *y,
		    uint8_t *p, int32_t acc, uint32_t ych)
{
	int64_t q;

	switch (e->mode) {
	case VNPU_EPI_INT32:
		memcpy(p, &acc, 4);
		return;
	case VNPU_EPI_FLOAT:
		vnpu_st(y, p, vnpu_act(e->act, e->alpha, (float)acc * e->in_scale),
			ych, e->round);
		return;
	}
	if (e->round == VNPU_ROUND_TFLITE) {
		q = (int64_t)vnpu_qmul_apply(acc, e->qmul) + e->out_zp;
		*p = (uint8_t)(q < e->lo ? e->lo : q > e->hi ? e->hi : q);
	} else {
		*p = (uint8_t)vnpu_round_sat((float)acc * e->fmult, e->out_zp,
					     e->lo, e->hi);
	}
}

/* ---- Validation -------------------------------------------------------- */

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* @raw_int: int8/uint8 may be unquantized (CPU-only integer ops). */
static int check_tensor(const struct vnpu_tensor_desc *d, uint64_t *span,
			uint64_t *qbytes, bool raw_int)
{
	uint64_t elems = 1, last = 0, bytes, t;
	uint32_t es = vnpu_dtype_size(d->dtype);
	float s;
	int i;

	if (!es || d->rank < 1 || d->rank > VNPU_MAX_RANK ||
	    (d->flags & ~VNPU_TENSOR_STRIDED) ||
	    !all_zero(d->reserved, sizeof(d->reserved)) || d->va % es)
		return -EINVAL;
	for (i = 0; i < VNPU_MAX_RANK; i++) {
		if (i >= d->rank) {
			if (d->dims[i] || d->strides[i])
				return -EINVAL;
			continue;
		}
		if (!d->dims[i] || __builtin_mul_overflow(elems, d->dims[i], &elems))
			return -EINVAL;
		if (!(d->flags & VNPU_TENSOR_STRIDED)) {
			if (d->strides[i])
				return -EINVAL;
			continue;
		}
		if (__builtin_mul_overflow((uint64_t)(d->dims[i] - 1),
					   d->strides[i], &t) ||
		    __builtin_add_overflow(last, t, &last))
			return -EINVAL;
	}
	if (elems > MAX_ELEMS)
		return -EINVAL;
	if (!(d->flags & VNPU_TENSOR_STRIDED))
		last = elems - 1;
	if (__builtin_add_overflow(last, 1, &bytes) ||
	    __builtin_mul_overflow(bytes, es, &bytes) ||
	    bytes > VNPU_MAX_TENSOR_BYTES ||
	    d->va >= (1ull << VNPU_VA_BITS) ||
	    bytes > (1ull << VNPU_VA_BITS) - d->va)
		return -EINVAL;
	*span = bytes;
	*qbytes = 0;

	switch (d->quant) {
	case VNPU_QUANT_NONE:
		if ((dt_is_q8(d->dtype) && !raw_int) || d->quant_axis || d->scale ||
		    d->zero_point || d->quant_va)
			return -EINVAL;
		break;
	case VNPU_QUANT_TENSOR:
		s = f32_from_bits(d->scale);
		if (!dt_is_q8(d->dtype) || d->quant_axis || d->quant_va ||
		    !(s > 0.0f) || !isfinite(s) ||
		    d->zero_point < dt_min(d->dtype) ||
		    d->zero_point > dt_max(d->dtype))
			return -EINVAL;
		break;
	case VNPU_QUANT_CHANNEL:
		if (!dt_is_q8(d->dtype) || d->quant_axis >= d->rank ||
		    d->scale || d->zero_point || !d->quant_va ||
		    d->quant_va % 4)
			return -EINVAL;
		*qbytes = 8ull * d->dims[d->quant_axis];
		if (d->quant_va >= (1ull << VNPU_VA_BITS) ||
		    *qbytes > (1ull << VNPU_VA_BITS) - d->quant_va)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* Operands an op takes: bit i required, bit (8 + i) optional. */
static uint32_t op_slots(unsigned int op)
{
	switch (op) {
	case VNPU_OP_GEMM:
	case VNPU_OP_CONV2D:
		return 0x0b | 0x400;
	case VNPU_OP_ELTWISE:
		return 0x0b;
	case VNPU_OP_LAYERNORM:
		return 0x09 | 0x600;
	default:
		return 0x09;
	}
}

static bool same_dims(const struct vnpu_tensor_desc *a,
		      const struct vnpu_tensor_desc *b)
{
	return a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, sizeof(a->dims));
}

/* Is @o's channel quantization (if any) along dimension @axis? */
static bool chan_axis_ok(const struct vnpu_tensor_desc *o, unsigned int axis)
{
	return o->quant != VNPU_QUANT_CHANNEL || o->quant_axis == axis;
}

static bool is_bias(const struct vnpu_tensor_desc *b, uint32_t n, bool quant)
{
	return b->rank == 1 && b->dims[0] == n &&
	       (quant ? b->dtype == VNPU_DT_INT32 : dt_is_float(b->dtype));
}

/* Shared dtype rules of GEMM and CONV2D; sets info->quantized. */
static int check_mm_types(const struct vnpu_cmd_compute *c, unsigned int b_axis,
			  unsigned int y_axis, struct vnpu_op_info *info)
{
	const struct vnpu_tensor_desc *a = &c->t[0], *b = &c->t[1], *y = &c->t[3];

	if (dt_is_float(a->dtype) && dt_is_float(b->dtype)) {
		info->quantized = false;
		if (y->dtype == VNPU_DT_INT32)
			return -EINVAL;
	} else if (dt_is_q8(a->dtype) && dt_is_q8(b->dtype)) {
		info->quantized = true;
		if (a->quant != VNPU_QUANT_TENSOR || !chan_axis_ok(b, b_axis))
			return -EINVAL;
		if (y->dtype == VNPU_DT_INT32 && c->act != VNPU_ACT_NONE)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (!chan_axis_ok(y, y_axis))
		return -EINVAL;
	return 0;
}

static int check_gemm(const struct vnpu_cmd_compute *c, struct vnpu_op_info *info)
{
	const struct vnpu_tensor_desc *a = &c->t[0], *b = &c->t[1], *y = &c->t[3];
	bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;
	bool tb = c->attr.gemm.flags & VNPU_GEMM_TRANS_B;
	uint32_t m, k, kb, n;
	uint64_t batch = 1;
	int i, r = y->rank;

	if ((c->attr.gemm.flags & ~3u) ||
	    !all_zero(c->attr.gemm.reserved, sizeof(c->attr.gemm.reserved)))
		return -EINVAL;
	if (a->rank < 2 || b->rank < 2 || r != (a->rank > b->rank ? a->rank : b->rank))
		return -EINVAL;
	m = a->dims[a->rank - (ta ? 1 : 2)];
	k = a->dims[a->rank - (ta ? 2 : 1)];
	kb = b->dims[b->rank - (tb ? 1 : 2)];
	n = b->dims[b->rank - (tb ? 2 : 1)];
	if (k != kb || y->dims[r - 2] != m || y->dims[r - 1] != n)
		return -EINVAL;
	for (i = 0; i < r - 2; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		uint32_t da = ia >= 0 ? a->dims[ia] : 1;
		uint32_t db = ib >= 0 ? b->dims[ib] : 1;
		uint32_t d = da > db ? da : db;

		if ((da != 1 && da != d) || (db != 1 && db != d) || y->dims[i] != d)
			return -EINVAL;
		batch *= d;
	}
	if (check_mm_types(c, b->rank - (tb ? 2 : 1), r - 1, info))
		return -EINVAL;
	if ((info->present & 4) && !is_bias(&c->t[2], n, info->quantized))
		return -EINVAL;
	/* Each factor is below 2^40 (MAX_ELEMS), but the product may not be. */
	if (__builtin_mul_overflow(batch * m, (uint64_t)n, &info->macs) ||
	    __builtin_mul_overflow(info->macs, (uint64_t)k, &info->macs))
		return -EINVAL;
	return 0;
}

/* Output extent of a window op; 0 if the window never fits. */
static uint32_t win_out(uint32_t in, uint32_t pa, uint32_t pb, uint32_t k,
			uint32_t dil, uint32_t stride)
{
	uint64_t ext = (uint64_t)in + pa + pb;
	uint64_t ek = (uint64_t)(k - 1) * dil + 1;

	if (ek > ext)
		return 0;
	return (uint32_t)((ext - ek) / stride + 1);
}

#define MAX_PAD		(1u << 16)
#define MAX_KSTRIDE	(1u << 16)

static int check_conv(const struct vnpu_cmd_compute *c, struct vnpu_op_info *info)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	const struct vnpu_tensor_desc *x = &c->t[0], *w = &c->t[1], *y = &c->t[3];
	uint32_t g = at->groups, oh, ow;

	if (!all_zero(at->reserved, sizeof(at->reserved)) || x->rank != 4 ||
	    w->rank != 4 || y->rank != 4 || !g || !at->stride_h ||
	    !at->stride_w || !at->dilation_h || !at->dilation_w ||
	    at->stride_h > MAX_KSTRIDE || at->stride_w > MAX_KSTRIDE ||
	    at->dilation_h > MAX_KSTRIDE || at->dilation_w > MAX_KSTRIDE ||
	    at->pad_top > MAX_PAD || at->pad_bottom > MAX_PAD ||
	    at->pad_left > MAX_PAD || at->pad_right > MAX_PAD)
		return -EINVAL;
	if (x->dims[3] % g || w->dims[0] % g || w->dims[3] != x->dims[3] / g)
		return -EINVAL;
	oh = win_out(x->dims[1], at->pad_top, at->pad_bottom, w->dims[1],
		     at->dilation_h, at->stride_h);
	ow = win_out(x->dims[2], at->pad_left, at->pad_right, w->dims[2],
		     at->dilation_w, at->stride_w);
	if (!oh || !ow || y->dims[0] != x->dims[0] || y->dims[1] != oh ||
	    y->dims[2] != ow || y->dims[3] != w->dims[0])
		return -EINVAL;
	if (check_mm_types(c, 0, 3, info))
		return -EINVAL;
	if ((info->present & 4) && !is_bias(&c->t[2], w->dims[0], info->quantized))
		return -EINVAL;
	if (__builtin_mul_overflow((uint64_t)y->dims[0] * oh * ow,
				   (uint64_t)w->dims[0] * w->dims[1] * w->dims[2] *
				   w->dims[3], &info->macs))
		return -EINVAL;
	return 0;
}

/* A pool dilation field: 0 (older commands) means 1. */
static uint32_t pool_dil(uint32_t d)
{
	return d ? d : 1;
}

static int check_pool(const struct vnpu_cmd_compute *c)
{
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	uint32_t dh = pool_dil(at->dilation_h), dw = pool_dil(at->dilation_w);
	uint64_t ekh, ekw;

	if (x->rank != 4 ||
	    y->rank != 4 || at->kind > VNPU_POOL_GLOBAL_AVG ||
	    (at->flags & ~VNPU_POOL_COUNT_INCLUDE_PAD) ||
	    y->dims[0] != x->dims[0] || y->dims[3] != x->dims[3])
		return -EINVAL;
	if (at->kind == VNPU_POOL_GLOBAL_AVG)
		return (at->flags || at->kernel_h || at->kernel_w ||
			at->stride_h || at->stride_w || at->pad_top ||
			at->pad_left || at->pad_bottom || at->pad_right ||
			at->dilation_h || at->dilation_w ||
			y->dims[1] != 1 || y->dims[2] != 1) ? -EINVAL : 0;
	if (!at->kernel_h || !at->kernel_w || !at->stride_h || !at->stride_w ||
	    at->kernel_h > MAX_KSTRIDE || at->kernel_w > MAX_KSTRIDE ||
	    at->stride_h > MAX_KSTRIDE || at->stride_w > MAX_KSTRIDE ||
	    dh > MAX_KSTRIDE || dw > MAX_KSTRIDE)
		return -EINVAL;
	/*
	 * pad < dilated extent keeps every window overlapping the input;
	 * without dilation that also puts a real element in each window.
	 */
	ekh = (uint64_t)(at->kernel_h - 1) * dh + 1;
	ekw = (uint64_t)(at->kernel_w - 1) * dw + 1;
	if (at->pad_top >= ekh || at->pad_bottom >= ekh ||
	    at->pad_left >= ekw || at->pad_right >= ekw)
		return -EINVAL;
	if (y->dims[1] != win_out(x->dims[1], at->pad_top, at->pad_bottom,
				  at->kernel_h, dh, at->stride_h) ||
	    y->dims[2] != win_out(x->dims[2], at->pad_left, at->pad_right,
				  at->kernel_w, dw, at->stride_w))
		return -EINVAL;
	if (at->kind == VNPU_POOL_MAX && at->flags)
		return -EINVAL;
	return 0;
}

static bool bcast_ok(const struct vnpu_tensor_desc *a,
		     const struct vnpu_tensor_desc *y)
{
	int i, lead = y->rank - a->rank;

	if (lead < 0)
		return false;
	for (i = 0; i < a->rank; i++)
		if (a->dims[i] != 1 && a->dims[i] != y->dims[lead + i])
			return false;
	return true;
}

/* ELTWISE's attributes and shapes: y is the broadcast shape of a and b. */
static int check_eltwise_shapes(const struct vnpu_cmd_compute *c)
{
	const struct vnpu_tensor_desc *y = &c->t[3];
	int i;

	if (c->attr.eltwise.kind > VNPU_ELTWISE_MUL ||
	    !all_zero(c->attr.eltwise.reserved,
		      sizeof(c->attr.eltwise.reserved)) ||
	    c->t[0].rank > y->rank || c->t[1].rank > y->rank ||
	    !bcast_ok(&c->t[0], y) || !bcast_ok(&c->t[1], y))
		return -EINVAL;
	for (i = 0; i < y->rank; i++) {
		int ia = i - (y->rank - c->t[0].rank);
		int ib = i - (y->rank - c->t[1].rank);
		uint32_t da = ia >= 0 ? c->t[0].dims[ia] : 1;
		uint32_t db = ib >= 0 ? c->t[1].dims[ib] : 1;

		if (y->dims[i] != (da > db ? da : db))
			return -EINVAL;
	}
	return 0;
}

static int check_ops(const struct vnpu_cmd_compute *c, struct vnpu_op_info *info)
{
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	const struct vnpu_attr_layernorm *ln = &c->attr.layernorm;
	unsigned int op = c->hdr.opcode;
	bool fused = op == VNPU_OP_GEMM || op == VNPU_OP_CONV2D ||
		     op == VNPU_OP_ELTWISE || op == VNPU_OP_ACTIVATION;
	float f;
	int i;

	if ((!fused && c->act) ||
	    (c->act == VNPU_ACT_CLIP && op != VNPU_OP_ACTIVATION))
		return -EINVAL;
	/* Int32 operands only exist as GEMM/CONV2D biases and accumulators. */
	if (op != VNPU_OP_GEMM && op != VNPU_OP_CONV2D)
		for (i = 0; i < VNPU_OP_SLOTS; i++)
			if (((info->present >> i) & 1) &&
			    c->t[i].dtype == VNPU_DT_INT32)
				return -EINVAL;
	/* Every per-channel axis must stay a channel of the output. */
	if (op != VNPU_OP_GEMM && op != VNPU_OP_CONV2D && op != VNPU_OP_ELTWISE &&
	    op != VNPU_OP_LAYERNORM) {
		if (!same_dims(x, y) && op != VNPU_OP_POOL2D)
			return -EINVAL;
		if ((op == VNPU_OP_POOL2D || op == VNPU_OP_SOFTMAX) &&
		    (x->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL))
			return -EINVAL;
	}
	info->macs = 1;
	for (i = 0; i < y->rank; i++)
		info->macs *= y->dims[i];

	switch (op) {
	case VNPU_OP_GEMM:
		return check_gemm(c, info);
	case VNPU_OP_CONV2D:
		return check_conv(c, info);
	case VNPU_OP_POOL2D:
		return check_pool(c);
	case VNPU_OP_ELTWISE:
		if (check_eltwise_shapes(c))
			return -EINVAL;
		for (i = 0; i < 2; i++)
			if (c->t[i].quant == VNPU_QUANT_CHANNEL &&
			    (y->rank - c->t[i].rank + c->t[i].quant_axis >= y->rank ||
			     c->t[i].dims[c->t[i].quant_axis] !=
			     y->dims[y->rank - c->t[i].rank + c->t[i].quant_axis]))
				return -EINVAL;
		return 0;
	case VNPU_OP_ACTIVATION:
		if (c->act == VNPU_ACT_CLIP) {
			float lo = f32_from_bits(c->attr.activation.clip_min);
			float hi = f32_from_bits(c->attr.activation.clip_max);

			return (lo <= hi && /* false for NaN */
				all_zero(c->attr.activation.reserved,
					 sizeof(c->attr.activation.reserved))) ?
			       0 : -EINVAL;
		}
		return all_zero(&c->attr, sizeof(c->attr)) ? 0 : -EINVAL;
	case VNPU_OP_SOFTMAX:
		if (c->attr.softmax.axis >= x->rank ||
		    !all_zero(c->attr.softmax.reserved,
			      sizeof(c->attr.softmax.reserved)))
			return -EINVAL;
		return 0;
	case VNPU_OP_LAYERNORM:
		f = f32_from_bits(ln->epsilon);
		if (ln->axis >= x->rank || !same_dims(x, y) || !(f >= 0.0f) ||
		    !isfinite(f) || !all_zero(ln->reserved, sizeof(ln->reserved)) ||
		    x->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL)
			return -EINVAL;
		for (i = 1; i <= 2; i++) {
			const struct vnpu_tensor_desc *g = &c->t[i];

			if (!((info->present >> i) & 1))
				continue;
			if (g->rank != x->rank - ln->axis ||
			    memcmp(g->dims, x->dims + ln->axis, 4u * g->rank) ||
			    g->quant == VNPU_QUANT_CHANNEL)
				return -EINVAL;
		}
		return 0;
	case VNPU_OP_QUANTIZE:
		if (!dt_is_float(x->dtype) || !dt_is_q8(y->dtype))
			return -EINVAL;
		break;
	case VNPU_OP_DEQUANTIZE:
		if (!dt_is_q8(x->dtype) || !dt_is_float(y->dtype))
			return -EINVAL;
		break;
	case VNPU_OP_REQUANTIZE:
		if (!dt_is_q8(x->dtype) || !dt_is_q8(y->dtype))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* The conversions: per-channel axes of x and y must agree. */
	if (!all_zero(&c->attr, sizeof(c->attr)) ||
	    (x->quant == VNPU_QUANT_CHANNEL && y->quant == VNPU_QUANT_CHANNEL &&
	     x->quant_axis != y->quant_axis))
		return -EINVAL;
	return 0;
}

int vnpu_op_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		  struct vnpu_op_info *info)
{
	uint32_t slots;
	float alpha;
	int i;

	memset(info, 0, sizeof(*info));
	if (size != sizeof(*cc))
		return -EINVAL;
	memcpy(cc, cmd, sizeof(*cc));
	if (cc->hdr.size != sizeof(*cc) || cc->hdr.flags ||
	    cc->hdr.opcode < VNPU_OP_GEMM || cc->hdr.opcode > VNPU_OP_LAST ||
	    cc->reserved0 || cc->act >= VNPU_ACT_COUNT ||
	    cc->round > VNPU_ROUND_TFLITE)
		return -EINVAL;
	alpha = f32_from_bits(cc->act_alpha);
	if (cc->act == VNPU_ACT_LEAKY_RELU ? !isfinite(alpha) : cc->act_alpha != 0)
		return -EINVAL;
	slots = op_slots(cc->hdr.opcode);
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool present = !all_zero(&cc->t[i], sizeof(cc->t[i]));

		if (present != !!(slots & (1u << i)) && !(slots & (0x100u << i)))
			return -EINVAL;
		if (!present)
			continue;
		if (check_tensor(&cc->t[i], &info->span[i], &info->qbytes[i],
				 false))
			return -EINVAL;
		info->present |= 1u << i;
	}
	return check_ops(cc, info);
}


/* ---- CPU-only ops: validation ------------------------------------------- */

_Static_assert(sizeof(struct vnpu_ref_attr_pool3d) <=
	       sizeof(((struct vnpu_cmd_compute *)0)->attr), "pool3d attrs");

static int check_pool3d(const struct vnpu_cmd_compute *c, uint64_t xspan)
{
	struct vnpu_ref_attr_pool3d at;
	const struct vnpu_tensor_desc *x = &c->t[0], *ind = &c->t[2];
	const struct vnpu_tensor_desc *y = &c->t[3];
	uint64_t xelems;
	int i;

	memcpy(&at, c->attr.raw, sizeof(at));
	if (!all_zero((const uint8_t *)c->attr.raw + sizeof(at),
		      sizeof(c->attr) - sizeof(at)) || at.reserved ||
	    x->rank != 5 || y->rank != 5 ||
	    (at.kind != VNPU_POOL_MAX && at.kind != VNPU_POOL_AVG) ||
	    (at.flags & ~VNPU_POOL_COUNT_INCLUDE_PAD) ||
	    (at.kind == VNPU_POOL_MAX && at.flags) ||
	    y->dims[0] != x->dims[0] || y->dims[4] != x->dims[4] ||
	    x->dtype == VNPU_DT_INT32 || y->dtype == VNPU_DT_INT32 ||
	    x->quant == VNPU_QUANT_CHANNEL || y->quant == VNPU_QUANT_CHANNEL)
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		uint64_t ek = (uint64_t)(at.kernel[i] - 1) * at.dilation[i] + 1;

		if (!at.kernel[i] || !at.stride[i] || !at.dilation[i] ||
		    at.pad_begin[i] >= ek || at.pad_end[i] >= ek ||
		    y->dims[1 + i] != win_out(x->dims[1 + i], at.pad_begin[i],
					      at.pad_end[i], at.kernel[i],
					      at.dilation[i], at.stride[i]))
			return -EINVAL;
	}
	if (!ind->rank)
		return 0;
	/* Every offset into X must be representable in the INT32 indices. */
	xelems = xspan / vnpu_dtype_size(x->dtype);
	if (at.kind != VNPU_POOL_MAX || ind->dtype != VNPU_DT_INT32 ||
	    ind->quant != VNPU_QUANT_NONE || !same_dims(ind, y) ||
	    xelems > (uint64_t)INT32_MAX + 1)
		return -EINVAL;
	return 0;
}

static int check_cpu_op(const struct vnpu_cmd_compute *c,
			struct vnpu_op_info *info)
{
	unsigned int op = c->hdr.opcode;
	bool ints = op == VNPU_REF_OP_INT_ELTWISE;
	uint32_t slots = ints ? 0x0b : 0x09 | 0x400;
	int i;

	if (c->hdr.size != sizeof(*c) || c->hdr.flags || c->reserved0 ||
	    c->act || c->act_alpha || c->round > VNPU_ROUND_TFLITE)
		return -EINVAL;
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool present = !all_zero(&c->t[i], sizeof(c->t[i]));

		if (present != !!(slots & (1u << i)) && !(slots & (0x100u << i)))
			return -EINVAL;
		if (!present)
			continue;
		if (check_tensor(&c->t[i], &info->span[i], &info->qbytes[i], ints))
			return -EINVAL;
		info->present |= 1u << i;
	}
	info->macs = 1;
	for (i = 0; i < c->t[3].rank; i++)
		info->macs *= c->t[3].dims[i];
	if (op == VNPU_REF_OP_POOL3D)
		return check_pool3d(c, info->span[0]);
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		const struct vnpu_tensor_desc *d = &c->t[i];

		if (!((info->present >> i) & 1))
			continue;
		if (d->dtype != c->t[3].dtype || d->quant != VNPU_QUANT_NONE ||
		    (d->dtype != VNPU_DT_INT8 && d->dtype != VNPU_DT_UINT8 &&
		     d->dtype != VNPU_DT_INT32))
			return -EINVAL;
	}
	return check_eltwise_shapes(c);
}

int vnpu_ref_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		   struct vnpu_op_info *info)
{
	uint16_t opcode;

	memset(info, 0, sizeof(*info));
	if (size != sizeof(*cc))
		return -EINVAL;
	memcpy(&opcode, (const uint8_t *)cmd +
	       offsetof(struct vnpu_cmd_compute, hdr.opcode), sizeof(opcode));
	if (opcode < VNPU_REF_OP_CPU_FIRST || opcode > VNPU_REF_OP_CPU_LAST)
		return vnpu_op_check(cmd, size, cc, info);
	memcpy(cc, cmd, sizeof(*cc));
	return check_cpu_op(cc, info);
}

/* ---- The ops ------------------------------------------------------------ */

static uint32_t chan_of(const struct vnpu_tv *tv, const uint32_t *idx, int rank)
{
	if (tv->quant != VNPU_QUANT_CHANNEL)
		return 0;
	return idx[rank - tv->rank + tv->axis];
}

static void ref_gemm(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     bool quant)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *bias = &t[2], *y = &t[3];
	bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;
	bool tb = c->attr.gemm.flags & VNPU_GEMM_TRANS_B;
	int r = y->rank, ra = a->rank, rb = b->rank;
	uint32_t m = y->dims[r - 2], n = y->dims[r - 1];
	uint32_t k = a->dims[ra - (ta ? 2 : 1)];
	int64_t sam = a->st[ra - (ta ? 1 : 2)], sak = a->st[ra - (ta ? 2 : 1)];
	int64_t sbk = b->st[rb - (tb ? 1 : 2)], sbn = b->st[rb - (tb ? 2 : 1)];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int32_t za = a->zp;
	float alpha = f32_from_bits(c->act_alpha);

	do {
		/* idx walks y; a and b broadcast over the batch dims only. */
		uint32_t ia[VNPU_MAX_RANK] = { 0 }, ib[VNPU_MAX_RANK] = { 0 };
		uint32_t i, j, kk;
		uint8_t *pa, *pb;
		int d;

		for (d = 0; d < ra - 2; d++)
			ia[d] = a->dims[d] == 1 ? 0 : idx[r - ra + d];
		for (d = 0; d < rb - 2; d++)
			ib[d] = b->dims[d] == 1 ? 0 : idx[r - rb + d];
		pa = tv_at(a, ia);
		pb = tv_at(b, ib);
		for (i = 0; i < m; i++) {
			for (j = 0; j < n; j++) {
				uint8_t *py;

				idx[r - 2] = i;
				idx[r - 1] = j;
				py = tv_at(y, idx);
				if (quant) {
					int32_t zb = vnpu_tv_zp(b, j);
					uint32_t acc = 0;
					struct vnpu_epi e;

					for (kk = 0; kk < k; kk++)
						acc += (uint32_t)((ld_raw(a, pa + (i * sam + kk * sak) * a->esize) - za) *
								  (ld_raw(b, pb + (kk * sbk + j * sbn) * b->esize) - zb));
					if (bias->p)
						acc += (uint32_t)ld_raw(bias, bias->p + j * bias->st[0] * 4);
					vnpu_epi_init(&e, c, a, b, y, j);
					vnpu_epi_store(&e, y, py, (int32_t)acc, j);
				} else {
					float acc = 0.0f;

					for (kk = 0; kk < k; kk++)
						acc += vnpu_ld(a, pa + (i * sam + kk * sak) * a->esize, 0) *
						       vnpu_ld(b, pb + (kk * sbk + j * sbn) * b->esize, 0);
					if (bias->p)
						acc += vnpu_ld(bias, bias->p + j * bias->st[0] * bias->esize, 0);
					vnpu_st(y, py, vnpu_act(c->act, alpha, acc),
						chan_of(y, idx, r), c->round);
				}
			}
		}
		idx[r - 2] = m - 1;
		idx[r - 1] = n - 1;
	} while (idx_next(idx, y->dims, r));
}

static void ref_conv(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     bool quant)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t cig = w->dims[3], cog = w->dims[0] / at->groups;
	uint32_t idx[4] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);

	do {
		uint32_t b = idx[0], oy = idx[1], ox = idx[2], co = idx[3];
		uint32_t g = co / cog, ky, kx, ci;
		uint32_t acc = 0;
		float facc = 0.0f;

		for (ky = 0; ky < w->dims[1]; ky++) {
			int64_t iy = (int64_t)oy * at->stride_h - at->pad_top +
				     (int64_t)ky * at->dilation_h;

			if (iy < 0 || iy >= x->dims[1])
				continue;
			for (kx = 0; kx < w->dims[2]; kx++) {
				int64_t ix = (int64_t)ox * at->stride_w -
					     at->pad_left +
					     (int64_t)kx * at->dilation_w;

				if (ix < 0 || ix >= x->dims[2])
					continue;
				for (ci = 0; ci < cig; ci++) {
					uint32_t xi[4] = { b, (uint32_t)iy, (uint32_t)ix,
							   g * cig + ci };
					uint32_t wi[4] = { co, ky, kx, ci };

					if (quant)
						acc += (uint32_t)((ld_raw(x, tv_at(x, xi)) - x->zp) *
								  (ld_raw(w, tv_at(w, wi)) - vnpu_tv_zp(w, co)));
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
			vnpu_epi_init(&e, c, x, w, y, co);
			vnpu_epi_store(&e, y, tv_at(y, idx), (int32_t)acc, co);
		} else {
			if (bias->p)
				facc += vnpu_ld(bias, bias->p + co * bias->st[0] * bias->esize, 0);
			vnpu_st(y, tv_at(y, idx), vnpu_act(c->act, alpha, facc),
				y->quant == VNPU_QUANT_CHANNEL ? co : 0, c->round);
		}
	} while (idx_next(idx, y->dims, 4));
}

static void ref_pool(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	bool global = at->kind == VNPU_POOL_GLOBAL_AVG;
	uint32_t kh = global ? x->dims[1] : at->kernel_h;
	uint32_t kw = global ? x->dims[2] : at->kernel_w;
	uint32_t sh = global ? 1 : at->stride_h, sw = global ? 1 : at->stride_w;
	uint32_t dh = pool_dil(at->dilation_h), dw = pool_dil(at->dilation_w);
	uint32_t idx[4] = { 0 };

	do {
		float acc = at->kind == VNPU_POOL_MAX ? -INFINITY : 0.0f;
		uint32_t cnt = 0, ky, kx;

		for (ky = 0; ky < kh; ky++) {
			int64_t iy = (int64_t)idx[1] * sh - at->pad_top +
				     (int64_t)ky * dh;

			for (kx = 0; kx < kw; kx++) {
				int64_t ix = (int64_t)idx[2] * sw - at->pad_left +
					     (int64_t)kx * dw;
				uint32_t xi[4] = { idx[0], (uint32_t)iy, (uint32_t)ix, idx[3] };
				float v;

				if (iy < 0 || iy >= x->dims[1] || ix < 0 ||
				    ix >= x->dims[2])
					continue;
				v = vnpu_ld(x, tv_at(x, xi), 0);
				cnt++;
				if (at->kind == VNPU_POOL_MAX)
					acc = v > acc || isnan(v) ? v : acc;
				else
					acc += v;
			}
		}
		if (at->kind != VNPU_POOL_MAX) {
			if (at->flags & VNPU_POOL_COUNT_INCLUDE_PAD)
				cnt = kh * kw;
			/* Only dilated windows can miss the input entirely. */
			acc = cnt ? acc / (float)cnt : 0.0f;
		}
		vnpu_st(y, tv_at(y, idx), acc, 0, c->round);
	} while (idx_next(idx, y->dims, 4));
}

static void ref_eltwise(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);
	int r = y->rank;

	do {
		float va = vnpu_ld(a, tv_at_bcast(a, idx, r), chan_of(a, idx, r));
		float vb = vnpu_ld(b, tv_at_bcast(b, idx, r), chan_of(b, idx, r));
		float v = c->attr.eltwise.kind == VNPU_ELTWISE_ADD ? va + vb :
			  c->attr.eltwise.kind == VNPU_ELTWISE_SUB ? va - vb : va * vb;

		vnpu_st(y, tv_at(y, idx), vnpu_act(c->act, alpha, v),
			chan_of(y, idx, r), c->round);
	} while (idx_next(idx, y->dims, r));
}

/* ACTIVATION, QUANTIZE, DEQUANTIZE: y = act(real(x)), converted. */
static void ref_unary(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);
	float lo = f32_from_bits(c->attr.activation.clip_min);
	float hi = f32_from_bits(c->attr.activation.clip_max);
	int r = y->rank;

	do {
		float v = vnpu_ld(x, tv_at(x, idx), chan_of(x, idx, r));

		v = c->act == VNPU_ACT_CLIP ? vnpu_clip(lo, hi, v) :
		    vnpu_act(c->act, alpha, v);
		vnpu_st(y, tv_at(y, idx), v, chan_of(y, idx, r), c->round);
	} while (idx_next(idx, y->dims, r));
}

static void ref_requant(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = y->rank;

	do {
		uint32_t cx = chan_of(x, idx, r), cy = chan_of(y, idx, r);
		float sx = vnpu_tv_scale(x, cx), sy = vnpu_tv_scale(y, cy);
		int32_t zy = vnpu_tv_zp(y, cy);
		int32_t d = ld_raw(x, tv_at(x, idx)) - vnpu_tv_zp(x, cx);
		int64_t q;

		if (c->round == VNPU_ROUND_TFLITE) {
			q = (int64_t)vnpu_qmul_apply(d, vnpu_qmul_from_double((double)sx / (double)sy)) + zy;
			q = q < dt_min(y->dtype) ? dt_min(y->dtype) :
			    q > dt_max(y->dtype) ? dt_max(y->dtype) : q;
		} else {
			q = vnpu_round_sat((float)d * (sx / sy), zy,
					   dt_min(y->dtype), dt_max(y->dtype));
		}
		*tv_at(y, idx) = (uint8_t)q;
	} while (idx_next(idx, y->dims, r));
}

/* Visit every index of @dims with dimension @axis.. pinned to 0. */
static bool outer_next(uint32_t *idx, const uint32_t *dims, int axis)
{
	return axis > 0 && idx_next(idx, dims, axis);
}

static int ref_softmax(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax], i;
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = x->rank, d;
	float *e = malloc(sizeof(float) * n);

	if (!e)
		return -ENOMEM;
	/* The softmax axis goes innermost: iterate the others, then it. */
	do {
		float mx = -INFINITY, sum = 0.0f;

		for (i = 0; i < n; i++) {
			idx[ax] = i;
			e[i] = vnpu_ld(x, tv_at(x, idx), 0);
			mx = e[i] > mx ? e[i] : mx;
		}
		for (i = 0; i < n; i++) {
			e[i] = expf(e[i] - mx);
			sum += e[i];
		}
		for (i = 0; i < n; i++) {
			idx[ax] = i;
			vnpu_st(y, tv_at(y, idx), e[i] / sum, 0, c->round);
		}
		idx[ax] = 0;
		for (d = r - 1; d >= 0; d--) {
			if (d == (int)ax)
				continue;
			if (++idx[d] < x->dims[d])
				break;
			idx[d] = 0;
		}
	} while (d >= 0);
	free(e);
	return 0;
}

static void ref_layernorm(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *x = &t[0], *g = &t[1], *bt = &t[2], *y = &t[3];
	int ax = c->attr.layernorm.axis, r = x->rank;
	float eps = f32_from_bits(c->attr.layernorm.epsilon);
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	uint64_t cnt = 1;
	int d;

	for (d = ax; d < r; d++)
		cnt *= x->dims[d];
	do {
		uint32_t in[VNPU_MAX_RANK];
		double sum = 0.0, sq = 0.0;
		float mean, rstd;

		/* Statistics in double: the reference should not lose bits. */
		memcpy(in, idx, sizeof(in));
		do {
			double v = vnpu_ld(x, tv_at(x, in), 0);

			sum += v;
		} while (idx_next(in + ax, x->dims + ax, r - ax));
		mean = (float)(sum / (double)cnt);
		do {
			double v = (double)vnpu_ld(x, tv_at(x, in), 0) - mean;

			sq += v * v;
		} while (idx_next(in + ax, x->dims + ax, r - ax));
		rstd = (float)(1.0 / sqrt(sq / (double)cnt + eps));
		do {
			float v = (vnpu_ld(x, tv_at(x, in), 0) - mean) * rstd;

			if (g->p)
				v *= vnpu_ld(g, tv_at(g, in + ax), 0);
			if (bt->p)
				v += vnpu_ld(bt, tv_at(bt, in + ax), 0);
			vnpu_st(y, tv_at(y, in), v, 0, c->round);
		} while (idx_next(in + ax, x->dims + ax, r - ax));
	} while (outer_next(idx, x->dims, ax));
}

/* ---- CPU-only ops --------------------------------------------------------- */

static void ref_int_eltwise(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = y->rank;

	do {
		/* Unsigned arithmetic: wrapping is the defined result. */
		uint32_t va = (uint32_t)ld_raw(a, tv_at_bcast(a, idx, r));
		uint32_t vb = (uint32_t)ld_raw(b, tv_at_bcast(b, idx, r));
		uint32_t v = c->attr.eltwise.kind == VNPU_ELTWISE_ADD ? va + vb :
			     c->attr.eltwise.kind == VNPU_ELTWISE_SUB ? va - vb :
			     va * vb;
		uint8_t *py = tv_at(y, idx);

		if (y->dtype == VNPU_DT_INT32)
			memcpy(py, &v, 4);
		else
			*py = (uint8_t)v;
	} while (idx_next(idx, y->dims, r));
}

static void ref_pool3d(const struct vnpu_cmd_compute *c, struct vnpu_tv *t)
{
	struct vnpu_ref_attr_pool3d at;
	struct vnpu_tv *x = &t[0], *ind = &t[2], *y = &t[3];
	uint32_t idx[5] = { 0 };
	bool max;
	int i;

	memcpy(&at, c->attr.raw, sizeof(at));
	max = at.kind == VNPU_POOL_MAX;
	do {
		float acc = max ? -INFINITY : 0.0f;
		int64_t best = -1, org[3];
		uint32_t cnt = 0, k[3] = { 0 };

		for (i = 0; i < 3; i++)
			org[i] = (int64_t)idx[1 + i] * at.stride[i] - at.pad_begin[i];
		do {
			uint32_t xi[5] = { idx[0], 0, 0, 0, idx[4] };
			bool inside = true;
			uint8_t *p;
			float v;

			for (i = 0; i < 3; i++) {
				int64_t pos = org[i] + (int64_t)k[i] * at.dilation[i];

				inside = inside && pos >= 0 && pos < x->dims[1 + i];
				xi[1 + i] = (uint32_t)pos;
			}
			if (!inside)
				continue;
			p = tv_at(x, xi);
			v = vnpu_ld(x, p, 0);
			cnt++;
			if (!max) {
				acc += v;
			} else if (best < 0 || v > acc || (isnan(v) && !isnan(acc))) {
				acc = v;
				best = (p - x->p) / x->esize;
			}
		} while (idx_next(k, (const uint32_t[]){ at.kernel[0], at.kernel[1],
							 at.kernel[2] }, 3));
		if (!max) {
			if (at.flags & VNPU_POOL_COUNT_INCLUDE_PAD)
				cnt = (uint32_t)at.kernel[0] * at.kernel[1] * at.kernel[2];
			acc = cnt ? acc / (float)cnt : 0.0f;
		}
		vnpu_st(y, tv_at(y, idx), acc, 0, c->round);
		if (ind->p) {
			int32_t b32 = (int32_t)best;

			memcpy(tv_at(ind, idx), &b32, 4);
		}
	} while (idx_next(idx, y->dims, 5));
}

int vnpu_ref_run(const struct vnpu_cmd_compute *cmd,
		 const struct vnpu_op_bind *bind)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	struct vnpu_tv t[VNPU_OP_SLOTS];
	int i;

	if (vnpu_ref_check(cmd, sizeof(*cmd), &c, &info))
		return -EINVAL;
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool present = (info.present >> i) & 1;

		if (present && !bind->data[i])
			return -EINVAL;
		vnpu_tv_init(&t[i], &c.t[i], present ? bind->data[i] : NULL,
			     bind->qparams[i]);
		if (present && vnpu_tv_check_quant(&t[i]))
			return -EINVAL;
	}
	switch (c.hdr.opcode) {
	case VNPU_OP_GEMM:
		ref_gemm(&c, t, info.quantized);
		break;
	case VNPU_OP_CONV2D:
		ref_conv(&c, t, info.quantized);
		break;
	case VNPU_OP_POOL2D:
		ref_pool(&c, t);
		break;
	case VNPU_OP_ELTWISE:
		ref_eltwise(&c, t);
		break;
	case VNPU_OP_SOFTMAX:
		return ref_softmax(&c, t);
	case VNPU_OP_LAYERNORM:
		ref_layernorm(&c, t);
		break;
	case VNPU_OP_REQUANTIZE:
		ref_requant(&c, t);
		break;
	case VNPU_REF_OP_INT_ELTWISE:
		ref_int_eltwise(&c, t);
		break;
	case VNPU_REF_OP_POOL3D:
		ref_pool3d(&c, t);
		break;
	default:	/* ACTIVATION, QUANTIZE, DEQUANTIZE */
		ref_unary(&c, t);
		break;
	}
	return 0;
}
