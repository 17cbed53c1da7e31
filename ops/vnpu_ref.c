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
#include "vnpu_ref_qlinear.h"
#include "vnpu_ref_softmax.h"

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
	return vnpu_act_ab(act, alpha, 0.0f, x);
}

float vnpu_act_beta(const struct vnpu_cmd_compute *c)
{
	return c->act == VNPU_ACT_HARD_SIGMOID ?
	       f32_from_bits(c->attr.raw[VNPU_ACT_BETA_WORD]) : 0.0f;
}

float vnpu_act_ab(unsigned int act, float alpha, float beta, float x)
{
	float t;

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
	case VNPU_ACT_HARD_SIGMOID:
		/* Written as a clamp so that NaN stays NaN. */
		t = alpha * x + beta;
		return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
	case VNPU_ACT_HARD_SWISH:
		/* ONNX's fixed alpha 1/6 as the binary32 nearest it. */
		t = x * (1.0f / 6.0f) + 0.5f;
		return x * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
	case VNPU_ACT_SQRT:
		return sqrtf(x);
	case VNPU_ACT_RECIPROCAL:
		return 1.0f / x;
	case VNPU_ACT_EXP:
		return expf(x);
	case VNPU_ACT_LOG:
		return logf(x);
	case VNPU_ACT_ABS:
		return fabsf(x);
	case VNPU_ACT_NEG:
		return -x;
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
	e->beta = vnpu_act_beta(cmd);
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
		vnpu_st(y, p, vnpu_act_ab(e->act, e->alpha, e->beta,
					  (float)acc * e->in_scale),
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

bool vnpu_bias_at(const struct vnpu_tv *bias, uint32_t n, float *scale,
		  float *shift)
{
	const uint8_t *p;

	if (bias->rank == 1) {
		*scale = 1.0f;
		*shift = vnpu_ld(bias, bias->p + (int64_t)n * bias->st[0] *
				 bias->esize, 0);
		return false;
	}
	p = bias->p + (int64_t)n * bias->st[1] * bias->esize;
	*scale = vnpu_ld(bias, p, 0);
	*shift = vnpu_ld(bias, p + bias->st[0] * bias->esize, 0);
	return true;
}

float vnpu_bias_apply(const struct vnpu_tv *bias, uint32_t n, float acc)
{
	float scale, shift;

	if (!bias->p)
		return acc;
	/* A plain bias adds, with no multiply by 1 (the same result). */
	if (vnpu_bias_at(bias, n, &scale, &shift))
		return acc * scale + shift;
	return acc + shift;
}

/* ---- Validation -------------------------------------------------------- */

const struct vnpu_op_limits vnpu_op_limits_device = {
	.tensor_elems = VNPU_LIMIT_TENSOR_ELEMS,
	.tensor_bytes = VNPU_LIMIT_TENSOR_BYTES,
	.cmd_bytes = VNPU_LIMIT_CMD_BYTES,
	.cmd_macs = VNPU_LIMIT_CMD_MACS,
	.reduction = VNPU_LIMIT_REDUCTION,
	.kernel_dim = VNPU_LIMIT_KERNEL_DIM,
	.channels = VNPU_LIMIT_CHANNELS,
};

/*
 * The CPU fallback runs on memory its caller allocated, so only the
 * reference's own arithmetic bounds it: element offsets stay far below
 * 2^63 and every size fits a size_t.
 */
const struct vnpu_op_limits vnpu_op_limits_host = {
	.tensor_elems = 1ull << 40,
	.tensor_bytes = 1ull << 32,
	.cmd_bytes = 1ull << 34,
	.cmd_macs = UINT64_MAX,
	.reduction = UINT64_MAX,
	.kernel_dim = 1u << 16,
	.channels = UINT32_MAX,
};

/* Byte offsets of the fields a failed check names (hw-spec, CMD_ERROR). */
#define OFF(field)	VNPU_CMD_OFF(field)
#define TOFF(slot, field)	VNPU_CMD_TENSOR_OFF(slot, field)
#define DIM_OFF(slot, d)	(TOFF(slot, dims) + 4u * (uint32_t)(d))
#define STRIDE_OFF(slot, d)	(TOFF(slot, strides) + 8u * (uint32_t)(d))

#define MAX_PAD		(1u << 16)
#define MAX_KSTRIDE	(1u << 16)

struct chk {
	const struct vnpu_cmd_compute *c;
	struct vnpu_op_info *info;
	const struct vnpu_op_limits *lim;
};

/* Record the first offending field; every check returns through here. */
static int bad(const struct chk *k, uint32_t off)
{
	k->info->err_off = off;
	return -EINVAL;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* Offset of the first non-zero byte of @p (known not all zero). */
static uint32_t first_nonzero(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t i;

	for (i = 0; i + 1 < n && !b[i]; i++)
		;
	return i;
}

/*
 * An output must not overlap itself: ordered by stride, each dimension of
 * extent > 1 must start past the last element of the ones inside it.
 * (Sufficient, not necessary; hw-spec "Command limits" states this rule.)
 */
static int check_no_self_overlap(const struct chk *k, int slot)
{
	const struct vnpu_tensor_desc *d = &k->c->t[slot];
	int order[VNPU_MAX_RANK], n = 0, i, j;
	uint64_t reach;

	if (!(d->flags & VNPU_TENSOR_STRIDED))
		return 0;
	for (i = 0; i < d->rank; i++) {
		if (d->dims[i] == 1)
			continue;
		if (!d->strides[i])
			return bad(k, STRIDE_OFF(slot, i));
		/* Insertion sort by stride: at most six entries. */
		for (j = n; j > 0 && d->strides[order[j - 1]] > d->strides[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	reach = 1;	/* elements covered by the dims visited so far */
	for (j = 0; j < n; j++) {
		i = order[j];
		if (d->strides[i] < reach)
			return bad(k, STRIDE_OFF(slot, i));
		/* Bounded by the span check: (dims - 1) * stride fits. */
		reach = d->strides[i] * d->dims[i];
	}
	return 0;
}

/* @raw_int: int8/uint8 may be unquantized (CPU-only integer ops). */
static int check_tensor(const struct chk *k, int slot, bool raw_int)
{
	const struct vnpu_tensor_desc *d = &k->c->t[slot];
	const struct vnpu_op_limits *lim = k->lim;
	uint64_t elems = 1, last = 0, bytes, t;
	uint32_t es = vnpu_dtype_size(d->dtype);
	float s;
	int i;

	if (!es)
		return bad(k, TOFF(slot, dtype));
	if (d->rank < 1 || d->rank > VNPU_MAX_RANK)
		return bad(k, TOFF(slot, rank));
	if (d->flags & ~VNPU_TENSOR_STRIDED)
		return bad(k, TOFF(slot, flags));
	if (!all_zero(d->reserved, sizeof(d->reserved)))
		return bad(k, TOFF(slot, reserved) +
			   first_nonzero(d->reserved, sizeof(d->reserved)));
	if (d->va % es)
		return bad(k, TOFF(slot, va));
	for (i = 0; i < VNPU_MAX_RANK; i++) {
		if (i >= d->rank) {
			if (d->dims[i])
				return bad(k, DIM_OFF(slot, i));
			if (d->strides[i])
				return bad(k, STRIDE_OFF(slot, i));
			continue;
		}
		if (!d->dims[i] ||
		    __builtin_mul_overflow(elems, d->dims[i], &elems) ||
		    elems > lim->tensor_elems)
			return bad(k, DIM_OFF(slot, i));
		if (!(d->flags & VNPU_TENSOR_STRIDED)) {
			if (d->strides[i])
				return bad(k, STRIDE_OFF(slot, i));
			continue;
		}
		/*
		 * No stride may address past the span limit, even on a dim
		 * of extent 1, so every element offset the engines form
		 * from strides stays far inside int64_t.
		 */
		if (d->strides[i] > lim->tensor_bytes / es ||
		    __builtin_mul_overflow((uint64_t)(d->dims[i] - 1),
					   d->strides[i], &t) ||
		    __builtin_add_overflow(last, t, &last))
			return bad(k, STRIDE_OFF(slot, i));
	}
	if (!(d->flags & VNPU_TENSOR_STRIDED))
		last = elems - 1;
	if (__builtin_add_overflow(last, 1, &bytes) ||
	    __builtin_mul_overflow(bytes, es, &bytes) ||
	    bytes > lim->tensor_bytes)
		return bad(k, d->flags & VNPU_TENSOR_STRIDED ?
			   TOFF(slot, strides) : TOFF(slot, dims));
	if (d->va >= (1ull << VNPU_VA_BITS) ||
	    bytes > (1ull << VNPU_VA_BITS) - d->va)
		return bad(k, TOFF(slot, va));
	k->info->span[slot] = bytes;
	k->info->qbytes[slot] = 0;

	switch (d->quant) {
	case VNPU_QUANT_NONE:
		if (dt_is_q8(d->dtype) && !raw_int)
			return bad(k, TOFF(slot, quant));
		if (d->quant_axis)
			return bad(k, TOFF(slot, quant_axis));
		if (d->scale)
			return bad(k, TOFF(slot, scale));
		if (d->zero_point)
			return bad(k, TOFF(slot, zero_point));
		if (d->quant_va)
			return bad(k, TOFF(slot, quant_va));
		break;
	case VNPU_QUANT_TENSOR:
		s = f32_from_bits(d->scale);
		if (!dt_is_q8(d->dtype))
			return bad(k, TOFF(slot, quant));
		if (d->quant_axis)
			return bad(k, TOFF(slot, quant_axis));
		if (d->quant_va)
			return bad(k, TOFF(slot, quant_va));
		if (!(s > 0.0f) || !isfinite(s))
			return bad(k, TOFF(slot, scale));
		if (d->zero_point < dt_min(d->dtype) ||
		    d->zero_point > dt_max(d->dtype))
			return bad(k, TOFF(slot, zero_point));
		break;
	case VNPU_QUANT_CHANNEL:
		if (!dt_is_q8(d->dtype))
			return bad(k, TOFF(slot, quant));
		if (d->quant_axis >= d->rank ||
		    d->dims[d->quant_axis] > lim->channels)
			return bad(k, TOFF(slot, quant_axis));
		if (d->scale)
			return bad(k, TOFF(slot, scale));
		if (d->zero_point)
			return bad(k, TOFF(slot, zero_point));
		k->info->qbytes[slot] = 8ull * d->dims[d->quant_axis];
		if (!d->quant_va || d->quant_va % 4 ||
		    d->quant_va >= (1ull << VNPU_VA_BITS) ||
		    k->info->qbytes[slot] > (1ull << VNPU_VA_BITS) - d->quant_va)
			return bad(k, TOFF(slot, quant_va));
		break;
	default:
		return bad(k, TOFF(slot, quant));
	}
	if (slot == VNPU_OP_SLOT_OUT)
		return check_no_self_overlap(k, slot);
	return 0;
}

/* Operands an op takes: bit i required, bit (8 + i) optional. */
static uint32_t op_slots(unsigned int op)
{
	switch (op) {
	case VNPU_OP_GEMM:
	case VNPU_OP_CONV2D:
	case VNPU_OP_CONV_TRANSPOSE:
		return 0x0b | 0x400;
	case VNPU_OP_ELTWISE:
		return 0x0b;
	case VNPU_OP_ACTIVATION:
		return 0x09 | 0x200;
	case VNPU_OP_LAYERNORM:
		return 0x09 | 0x600;
	case VNPU_OP_LUT:
		return 0x0b;
	default:
		return 0x09;
	}
}

/* Offset of the first dim where @a and @b (slots) differ, or -1. */
static int dims_differ(const struct chk *k, int sa, int sb)
{
	const struct vnpu_tensor_desc *a = &k->c->t[sa], *b = &k->c->t[sb];
	int i;

	if (a->rank != b->rank)
		return (int)TOFF(sb, rank);
	for (i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return (int)DIM_OFF(sb, i);
	return -1;
}

/* Is @o's channel quantization (if any) along dimension @axis? */
static bool chan_axis_ok(const struct vnpu_tensor_desc *o, unsigned int axis)
{
	return o->quant != VNPU_QUANT_CHANNEL || o->quant_axis == axis;
}

static int check_bias(const struct chk *k, uint32_t n)
{
	const struct vnpu_tensor_desc *b = &k->c->t[2];
	bool quant = k->info->quantized;

	if (!(k->info->present & 4))
		return 0;
	if (b->rank == 2 && !quant) {
		/* [2, N]: a per-channel scale and shift in place of a bias. */
		if (b->dims[0] != 2)
			return bad(k, DIM_OFF(2, 0));
		if (b->dims[1] != n || n > k->lim->channels)
			return bad(k, DIM_OFF(2, 1));
		if (!dt_is_float(b->dtype))
			return bad(k, TOFF(2, dtype));
		return 0;
	}
	if (b->rank != 1)
		return bad(k, TOFF(2, rank));
	if (b->dims[0] != n)
		return bad(k, DIM_OFF(2, 0));
	if (quant ? b->dtype != VNPU_DT_INT32 : !dt_is_float(b->dtype))
		return bad(k, TOFF(2, dtype));
	return 0;
}

/* Shared dtype rules of GEMM and CONV2D; sets info->quantized. */
static int check_mm_types(const struct chk *k, unsigned int b_axis,
			  unsigned int y_axis)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_tensor_desc *a = &c->t[0], *b = &c->t[1], *y = &c->t[3];

	if (dt_is_float(a->dtype) && dt_is_float(b->dtype)) {
		k->info->quantized = false;
		if (y->dtype == VNPU_DT_INT32)
			return bad(k, TOFF(3, dtype));
	} else if (dt_is_q8(a->dtype) && dt_is_q8(b->dtype)) {
		k->info->quantized = true;
		if (a->quant != VNPU_QUANT_TENSOR)
			return bad(k, TOFF(0, quant));
		if (!chan_axis_ok(b, b_axis))
			return bad(k, TOFF(1, quant_axis));
		if (y->dtype == VNPU_DT_INT32 && c->act != VNPU_ACT_NONE)
			return bad(k, OFF(act));
	} else {
		return bad(k, TOFF(1, dtype));
	}
	if (!chan_axis_ok(y, y_axis))
		return bad(k, TOFF(3, quant_axis));
	return 0;
}

static int check_gemm(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_tensor_desc *a = &c->t[0], *b = &c->t[1], *y = &c->t[3];
	bool ta = c->attr.gemm.flags & VNPU_GEMM_TRANS_A;
	bool tb = c->attr.gemm.flags & VNPU_GEMM_TRANS_B;
	int ra = a->rank, rb = b->rank, r = y->rank, i, ret;
	uint32_t m, kk, kb, n;
	uint64_t batch = 1;

	if (c->attr.gemm.flags & ~3u)
		return bad(k, OFF(attr.gemm.flags));
	if (!all_zero(c->attr.gemm.reserved, sizeof(c->attr.gemm.reserved)))
		return bad(k, OFF(attr.gemm.reserved) +
			   first_nonzero(c->attr.gemm.reserved,
					 sizeof(c->attr.gemm.reserved)));
	if (ra < 2)
		return bad(k, TOFF(0, rank));
	if (rb < 2)
		return bad(k, TOFF(1, rank));
	if (r != (ra > rb ? ra : rb))
		return bad(k, TOFF(3, rank));
	m = a->dims[ra - (ta ? 1 : 2)];
	kk = a->dims[ra - (ta ? 2 : 1)];
	kb = b->dims[rb - (tb ? 1 : 2)];
	n = b->dims[rb - (tb ? 2 : 1)];
	if (kk > k->lim->reduction)
		return bad(k, DIM_OFF(0, ra - (ta ? 2 : 1)));
	if (kk != kb)
		return bad(k, DIM_OFF(1, rb - (tb ? 1 : 2)));
	if (y->dims[r - 2] != m)
		return bad(k, DIM_OFF(3, r - 2));
	if (y->dims[r - 1] != n)
		return bad(k, DIM_OFF(3, r - 1));
	for (i = 0; i < r - 2; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		uint32_t da = ia >= 0 ? a->dims[ia] : 1;
		uint32_t db = ib >= 0 ? b->dims[ib] : 1;
		uint32_t d = da > db ? da : db;

		if (da != 1 && da != d)
			return bad(k, DIM_OFF(0, ia));
		if (db != 1 && db != d)
			return bad(k, DIM_OFF(1, ib));
		if (y->dims[i] != d)
			return bad(k, DIM_OFF(3, i));
		batch *= d;	/* <= y's element count, checked already */
	}
	ret = check_mm_types(k, rb - (tb ? 2 : 1), r - 1);
	if (ret)
		return ret;
	ret = check_bias(k, n);
	if (ret)
		return ret;
	/*
	 * batch * m * n is y's element count; times k may overflow.  Each
	 * output element also costs its epilogue and each batch its own
	 * setup (operand packing, a kernel call): 17952 batches of 1x1x1
	 * took 2.6 us each, 65x a MAC's cost (ops.rst, "Work units").
	 */
	if (__builtin_mul_overflow(batch * m * n, (uint64_t)kk + 1, &k->info->macs) ||
	    __builtin_add_overflow(k->info->macs, batch * VNPU_WORK_GEMM_BATCH,
				   &k->info->macs))
		return bad(k, 0);
	return 0;
}

/* Output extent of a window op; 0 if the window never fits. */
static uint32_t win_out(uint32_t in, uint32_t pa, uint32_t pb, uint32_t kd,
			uint32_t dil, uint32_t stride)
{
	uint64_t ext = (uint64_t)in + pa + pb;
	uint64_t ek = (uint64_t)(kd - 1) * dil + 1;

	if (ek > ext)
		return 0;
	return (uint32_t)((ext - ek) / stride + 1);
}

/* A stride, dilation or pad field of a window op. */
static int check_window_field(const struct chk *k, uint32_t v, uint32_t off,
			      bool zero_ok, uint32_t max)
{
	if ((!v && !zero_ok) || v > max)
		return bad(k, off);
	return 0;
}

static int check_conv(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	const struct vnpu_tensor_desc *x = &c->t[0], *w = &c->t[1], *y = &c->t[3];
	uint32_t g = at->groups, oh, ow;
	uint64_t red, out;
	int ret;

	if (!all_zero(at->reserved, sizeof(at->reserved)))
		return bad(k, OFF(attr.conv.reserved) +
			   first_nonzero(at->reserved, sizeof(at->reserved)));
	if (x->rank != 4)
		return bad(k, TOFF(0, rank));
	if (w->rank != 4)
		return bad(k, TOFF(1, rank));
	if (y->rank != 4)
		return bad(k, TOFF(3, rank));
	if ((ret = check_window_field(k, at->stride_h, OFF(attr.conv.stride_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->stride_w, OFF(attr.conv.stride_w), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->dilation_h, OFF(attr.conv.dilation_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->dilation_w, OFF(attr.conv.dilation_w), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->pad_top, OFF(attr.conv.pad_top), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_left, OFF(attr.conv.pad_left), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_bottom, OFF(attr.conv.pad_bottom), true, MAX_PAD)) ||
	    (ret = check_window_field(k, at->pad_right, OFF(attr.conv.pad_right), true, MAX_PAD)))
		return ret;
	if (!g || x->dims[3] % g || w->dims[0] % g)
		return bad(k, OFF(attr.conv.groups));
	if (w->dims[3] != x->dims[3] / g)
		return bad(k, DIM_OFF(1, 3));
	if (w->dims[1] > k->lim->kernel_dim)
		return bad(k, DIM_OFF(1, 1));
	if (w->dims[2] > k->lim->kernel_dim)
		return bad(k, DIM_OFF(1, 2));
	/* Each factor is at most 2^32, the three together past 2^64 never. */
	red = (uint64_t)w->dims[1] * w->dims[2];
	if (__builtin_mul_overflow(red, (uint64_t)w->dims[3], &red) ||
	    red > k->lim->reduction)
		return bad(k, DIM_OFF(1, 3));
	oh = win_out(x->dims[1], at->pad_top, at->pad_bottom, w->dims[1],
		     at->dilation_h, at->stride_h);
	ow = win_out(x->dims[2], at->pad_left, at->pad_right, w->dims[2],
		     at->dilation_w, at->stride_w);
	if (y->dims[0] != x->dims[0])
		return bad(k, DIM_OFF(3, 0));
	if (!oh || y->dims[1] != oh)
		return bad(k, DIM_OFF(3, 1));
	if (!ow || y->dims[2] != ow)
		return bad(k, DIM_OFF(3, 2));
	if (y->dims[3] != w->dims[0])
		return bad(k, DIM_OFF(3, 3));
	ret = check_mm_types(k, 0, 3);
	if (ret)
		return ret;
	ret = check_bias(k, w->dims[0]);
	if (ret)
		return ret;
	/* y's element count (checked) times the reduction (checked). */
	out = (uint64_t)y->dims[0] * oh * ow * y->dims[3];
	if (__builtin_mul_overflow(out, red, &k->info->macs))
		return bad(k, 0);
	return 0;
}

/* A pool dilation field: 0 (older commands) means 1. */
static uint32_t pool_dil(uint32_t d)
{
	return d ? d : 1;
}

/*
 * POOL2D with VNPU_ROUND_ORT_QLINEAR: onnxruntime's QLinearAveragePool and
 * QLinearGlobalAveragePool average X and Y of one 8-bit dtype, each with
 * one scale and zero point; QLinearAveragePool has no dilations.
 */
static int check_pool_qlinear(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	int i;

	if (at->kind != VNPU_POOL_AVG && at->kind != VNPU_POOL_GLOBAL_AVG)
		return bad(k, OFF(round));
	for (i = 0; i < VNPU_OP_SLOTS; i += VNPU_OP_SLOT_OUT) {
		const struct vnpu_tensor_desc *t = &c->t[i];

		if ((t->dtype != VNPU_DT_INT8 && t->dtype != VNPU_DT_UINT8) ||
		    t->dtype != c->t[0].dtype)
			return bad(k, TOFF(i, dtype));
		if (t->quant != VNPU_QUANT_TENSOR)
			return bad(k, TOFF(i, quant));
	}
	if (pool_dil(at->dilation_h) != 1)
		return bad(k, OFF(attr.pool.dilation_h));
	if (pool_dil(at->dilation_w) != 1)
		return bad(k, OFF(attr.pool.dilation_w));
	return 0;
}

static int check_pool(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	uint32_t dh = pool_dil(at->dilation_h), dw = pool_dil(at->dilation_w);
	uint64_t ekh, ekw, taps;
	int ret;

	if (x->rank != 4)
		return bad(k, TOFF(0, rank));
	if (y->rank != 4)
		return bad(k, TOFF(3, rank));
	if (at->kind > VNPU_POOL_GLOBAL_AVG)
		return bad(k, OFF(attr.pool.kind));
	if ((at->flags & ~VNPU_POOL_COUNT_INCLUDE_PAD) ||
	    (at->kind == VNPU_POOL_MAX && at->flags))
		return bad(k, OFF(attr.pool.flags));
	if (c->round == VNPU_ROUND_ORT_QLINEAR && (ret = check_pool_qlinear(k)))
		return ret;
	if (y->dims[0] != x->dims[0])
		return bad(k, DIM_OFF(3, 0));
	if (y->dims[3] != x->dims[3])
		return bad(k, DIM_OFF(3, 3));
	if (at->kind == VNPU_POOL_GLOBAL_AVG) {
		/* Everything after kind must be zero. */
		const uint8_t *rest = (const uint8_t *)&at->flags;
		size_t n = sizeof(*at) - offsetof(struct vnpu_attr_pool2d, flags);

		if (!all_zero(rest, n))
			return bad(k, OFF(attr.pool.flags) + first_nonzero(rest, n));
		if (y->dims[1] != 1)
			return bad(k, DIM_OFF(3, 1));
		if (y->dims[2] != 1)
			return bad(k, DIM_OFF(3, 2));
		taps = (uint64_t)x->dims[1] * x->dims[2];
		if (taps > k->lim->reduction)
			return bad(k, DIM_OFF(0, 1));
		k->info->macs = k->info->macs * taps;
		return 0;
	}
	if ((ret = check_window_field(k, at->kernel_h, OFF(attr.pool.kernel_h), false, k->lim->kernel_dim)) ||
	    (ret = check_window_field(k, at->kernel_w, OFF(attr.pool.kernel_w), false, k->lim->kernel_dim)) ||
	    (ret = check_window_field(k, at->stride_h, OFF(attr.pool.stride_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, at->stride_w, OFF(attr.pool.stride_w), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, dh, OFF(attr.pool.dilation_h), false, MAX_KSTRIDE)) ||
	    (ret = check_window_field(k, dw, OFF(attr.pool.dilation_w), false, MAX_KSTRIDE)))
		return ret;
	taps = (uint64_t)at->kernel_h * at->kernel_w;
	if (taps > k->lim->reduction)
		return bad(k, OFF(attr.pool.kernel_w));
	/*
	 * pad < dilated extent keeps every window overlapping the input;
	 * without dilation that also puts a real element in each window.
	 */
	ekh = (uint64_t)(at->kernel_h - 1) * dh + 1;
	ekw = (uint64_t)(at->kernel_w - 1) * dw + 1;
	if (at->pad_top >= ekh)
		return bad(k, OFF(attr.pool.pad_top));
	if (at->pad_bottom >= ekh)
		return bad(k, OFF(attr.pool.pad_bottom));
	if (at->pad_left >= ekw)
		return bad(k, OFF(attr.pool.pad_left));
	if (at->pad_right >= ekw)
		return bad(k, OFF(attr.pool.pad_right));
	if (y->dims[1] != win_out(x->dims[1], at->pad_top, at->pad_bottom,
				  at->kernel_h, dh, at->stride_h))
		return bad(k, DIM_OFF(3, 1));
	if (y->dims[2] != win_out(x->dims[2], at->pad_left, at->pad_right,
				  at->kernel_w, dw, at->stride_w))
		return bad(k, DIM_OFF(3, 2));
	/* Output elements (< 2^40) times taps (< 2^20): no overflow. */
	k->info->macs *= taps;
	return 0;
}

/* Offset of the first dim of slot @s that does not broadcast to y, or -1. */
static int bcast_bad(const struct chk *k, int s)
{
	const struct vnpu_tensor_desc *a = &k->c->t[s], *y = &k->c->t[3];
	int i, lead = y->rank - a->rank;

	if (lead < 0)
		return (int)TOFF(s, rank);
	for (i = 0; i < a->rank; i++)
		if (a->dims[i] != 1 && a->dims[i] != y->dims[lead + i])
			return (int)DIM_OFF(s, i);
	return -1;
}

/* ELTWISE's attributes and shapes: y is the broadcast shape of a and b. */
static int check_eltwise_shapes(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	const struct vnpu_tensor_desc *y = &c->t[3];
	int i, off;

	if (c->attr.eltwise.kind > VNPU_ELTWISE_POW)
		return bad(k, OFF(attr.eltwise.kind));
	if (!all_zero(c->attr.eltwise.reserved, sizeof(c->attr.eltwise.reserved)))
		return bad(k, OFF(attr.eltwise.reserved) +
			   first_nonzero(c->attr.eltwise.reserved,
					 sizeof(c->attr.eltwise.reserved)));
	for (i = 0; i < 2; i++) {
		off = bcast_bad(k, i);
		if (off >= 0)
			return bad(k, (uint32_t)off);
	}
	for (i = 0; i < y->rank; i++) {
		int ia = i - (y->rank - c->t[0].rank);
		int ib = i - (y->rank - c->t[1].rank);
		uint32_t da = ia >= 0 ? c->t[0].dims[ia] : 1;
		uint32_t db = ib >= 0 ? c->t[1].dims[ib] : 1;

		if (y->dims[i] != (da > db ? da : db))
			return bad(k, DIM_OFF(3, i));
	}
	return 0;
}

/*
 * ELTWISE with VNPU_ROUND_ORT_QLINEAR: onnxruntime's QLinearAdd and
 * QLinearMul take three 8-bit tensors of one dtype, each with one scale
 * and zero point, and have no activation.
 */
static int check_qlinear(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	unsigned int kind = c->attr.eltwise.kind;
	int i;

	if (kind != VNPU_ELTWISE_ADD && kind != VNPU_ELTWISE_MUL)
		return bad(k, OFF(round));
	if (c->act)
		return bad(k, OFF(act));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		const struct vnpu_tensor_desc *t = &c->t[i];

		if (i == 2)
			continue;
		if ((t->dtype != VNPU_DT_INT8 && t->dtype != VNPU_DT_UINT8) ||
		    t->dtype != c->t[3].dtype)
			return bad(k, TOFF(i, dtype));
		if (t->quant != VNPU_QUANT_TENSOR)
			return bad(k, TOFF(i, quant));
	}
	return 0;
}

/*
 * ACTIVATION's optional t1, P [2, ...]: the scale P[0] and shift P[1],
 * float, each broadcasting to X numpy-style and at most CHANNELS
 * elements (a per-channel affine: BatchNormalization in one command).
 */
static int check_affine(const struct chk *k)
{
	const struct vnpu_tensor_desc *p = &k->c->t[1], *x = &k->c->t[0];
	uint64_t n = 1;
	int i, lead = x->rank - (p->rank - 1);

	if (!dt_is_float(p->dtype))
		return bad(k, TOFF(1, dtype));
	if (p->rank < 2 || lead < 0)
		return bad(k, TOFF(1, rank));
	if (p->dims[0] != 2)
		return bad(k, DIM_OFF(1, 0));
	for (i = 1; i < p->rank; i++) {
		if (p->dims[i] != 1 && p->dims[i] != x->dims[lead + i - 1])
			return bad(k, DIM_OFF(1, i));
		n *= p->dims[i];	/* <= P's element count, checked */
	}
	if (n > k->lim->channels)
		return bad(k, TOFF(1, dims));
	return 0;
}

/* Data-movement ops: their checks and reference (uses the helpers above). */
#include "vnpu_ref_move.c"
/* Ops whose code lives in their own files, #included at the end. */
static int check_convt(const struct chk *k);
static int check_reduce(const struct chk *k);
static int check_lut(const struct chk *k);

static int check_ops(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	struct vnpu_op_info *info = k->info;
	const struct vnpu_tensor_desc *x = &c->t[0], *y = &c->t[3];
	const struct vnpu_attr_layernorm *ln = &c->attr.layernorm;
	unsigned int op = c->hdr.opcode;
	bool fused = op == VNPU_OP_GEMM || op == VNPU_OP_CONV2D ||
		     op == VNPU_OP_ELTWISE || op == VNPU_OP_ACTIVATION ||
		     op == VNPU_OP_CONV_TRANSPOSE;
	uint64_t ext;
	float f;
	int i, off;

	if ((!fused && c->act) ||
	    ((c->act == VNPU_ACT_CLIP || c->act >= VNPU_ACT_SQRT) &&
	     op != VNPU_OP_ACTIVATION))
		return bad(k, OFF(act));
	if (c->round == VNPU_ROUND_ORT_QLINEAR && op != VNPU_OP_ELTWISE &&
	    op != VNPU_OP_POOL2D && op != VNPU_OP_SOFTMAX)
		return bad(k, OFF(round));
	if (op == VNPU_OP_COPY)
		return check_copy(k);
	if (op == VNPU_OP_RESIZE)
		return check_resize(k);
	/* Int32 operands only exist as GEMM/CONV2D biases and accumulators. */
	if (op != VNPU_OP_GEMM && op != VNPU_OP_CONV2D &&
	    op != VNPU_OP_CONV_TRANSPOSE)
		for (i = 0; i < VNPU_OP_SLOTS; i++)
			if (((info->present >> i) & 1) &&
			    c->t[i].dtype == VNPU_DT_INT32)
				return bad(k, TOFF(i, dtype));
	/* Every per-channel axis must stay a channel of the output. */
	if (op != VNPU_OP_GEMM && op != VNPU_OP_CONV2D && op != VNPU_OP_ELTWISE &&
	    op != VNPU_OP_LAYERNORM && op != VNPU_OP_CONV_TRANSPOSE &&
	    op != VNPU_OP_REDUCE) {
		if (op != VNPU_OP_POOL2D && (off = dims_differ(k, 0, 3)) >= 0)
			return bad(k, (uint32_t)off);
		if ((op == VNPU_OP_POOL2D || op == VNPU_OP_SOFTMAX) &&
		    x->quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(0, quant));
		if ((op == VNPU_OP_POOL2D || op == VNPU_OP_SOFTMAX) &&
		    y->quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(3, quant));
	}
	/* Output elements: below 2^40 for any limits (check_tensor). */
	info->macs = 1;
	for (i = 0; i < y->rank; i++)
		info->macs *= y->dims[i];

	switch (op) {
	case VNPU_OP_GEMM:
		return check_gemm(k);
	case VNPU_OP_CONV2D:
		return check_conv(k);
	case VNPU_OP_CONV_TRANSPOSE:
		return check_convt(k);
	case VNPU_OP_REDUCE:
		return check_reduce(k);
	case VNPU_OP_LUT:
		return check_lut(k);
	case VNPU_OP_POOL2D:
		return check_pool(k);
	case VNPU_OP_ELTWISE:
		if ((i = check_eltwise_shapes(k)))
			return i;
		for (i = 0; i < 2; i++) {
			const struct vnpu_tensor_desc *t = &c->t[i];
			int yax = y->rank - t->rank + t->quant_axis;

			if (t->quant == VNPU_QUANT_CHANNEL &&
			    (yax >= y->rank || t->dims[t->quant_axis] != y->dims[yax]))
				return bad(k, TOFF(i, quant_axis));
		}
		if (c->round == VNPU_ROUND_ORT_QLINEAR)
			return check_qlinear(k);
		return 0;
	case VNPU_OP_ACTIVATION:
		if ((info->present & 2) && (i = check_affine(k)))
			return i;
		if (c->act == VNPU_ACT_CLIP) {
			float lo = f32_from_bits(c->attr.activation.clip_min);
			float hi = f32_from_bits(c->attr.activation.clip_max);

			if (!(lo <= hi))	/* false for NaN too */
				return bad(k, OFF(attr.activation.clip_min));
			if (!all_zero(c->attr.activation.reserved,
				      sizeof(c->attr.activation.reserved)))
				return bad(k, OFF(attr.activation.reserved) +
					   first_nonzero(c->attr.activation.reserved,
							 sizeof(c->attr.activation.reserved)));
			return 0;
		}
		if (!all_zero(&c->attr, sizeof(c->attr)))
			return bad(k, OFF(attr) +
				   first_nonzero(&c->attr, sizeof(c->attr)));
		return 0;
	case VNPU_OP_SOFTMAX:
		if (c->attr.softmax.axis >= x->rank ||
		    x->dims[c->attr.softmax.axis] > k->lim->reduction)
			return bad(k, OFF(attr.softmax.axis));
		if (!all_zero(c->attr.softmax.reserved,
			      sizeof(c->attr.softmax.reserved)))
			return bad(k, OFF(attr.softmax.reserved) +
				   first_nonzero(c->attr.softmax.reserved,
						 sizeof(c->attr.softmax.reserved)));
		/* QLinearSoftmax: X and Y of one 8-bit dtype, per tensor */
		for (i = 0; c->round == VNPU_ROUND_ORT_QLINEAR && i < VNPU_OP_SLOTS;
		     i += VNPU_OP_SLOT_OUT) {
			if ((c->t[i].dtype != VNPU_DT_INT8 && c->t[i].dtype != VNPU_DT_UINT8) ||
			    c->t[i].dtype != x->dtype)
				return bad(k, TOFF(i, dtype));
			if (c->t[i].quant != VNPU_QUANT_TENSOR)
				return bad(k, TOFF(i, quant));
		}
		return 0;
	case VNPU_OP_LAYERNORM:
		f = f32_from_bits(ln->epsilon);
		if (ln->axis >= x->rank)
			return bad(k, OFF(attr.layernorm.axis));
		for (ext = 1, i = ln->axis; i < x->rank; i++)
			ext *= x->dims[i];	/* <= elements of x */
		if (ext > k->lim->reduction)
			return bad(k, OFF(attr.layernorm.axis));
		if ((off = dims_differ(k, 0, 3)) >= 0)
			return bad(k, (uint32_t)off);
		if (!(f >= 0.0f) || !isfinite(f))
			return bad(k, OFF(attr.layernorm.epsilon));
		if (!all_zero(ln->reserved, sizeof(ln->reserved)))
			return bad(k, OFF(attr.layernorm.reserved) +
				   first_nonzero(ln->reserved, sizeof(ln->reserved)));
		if (x->quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(0, quant));
		if (y->quant == VNPU_QUANT_CHANNEL)
			return bad(k, TOFF(3, quant));
		for (i = 1; i <= 2; i++) {
			const struct vnpu_tensor_desc *g = &c->t[i];

			if (!((info->present >> i) & 1))
				continue;
			if (g->rank != x->rank - (int)ln->axis)
				return bad(k, TOFF(i, rank));
			if (memcmp(g->dims, x->dims + ln->axis, 4u * g->rank))
				return bad(k, TOFF(i, dims));
			if (g->quant == VNPU_QUANT_CHANNEL)
				return bad(k, TOFF(i, quant));
		}
		return 0;
	case VNPU_OP_QUANTIZE:
		if (!dt_is_float(x->dtype))
			return bad(k, TOFF(0, dtype));
		if (!dt_is_q8(y->dtype))
			return bad(k, TOFF(3, dtype));
		break;
	case VNPU_OP_DEQUANTIZE:
		if (!dt_is_q8(x->dtype))
			return bad(k, TOFF(0, dtype));
		if (!dt_is_float(y->dtype))
			return bad(k, TOFF(3, dtype));
		break;
	case VNPU_OP_REQUANTIZE:
		if (!dt_is_q8(x->dtype))
			return bad(k, TOFF(0, dtype));
		if (!dt_is_q8(y->dtype))
			return bad(k, TOFF(3, dtype));
		break;
	default:
		return bad(k, OFF(hdr.opcode));
	}
	/* The conversions take no attributes. */
	if (!all_zero(&c->attr, sizeof(c->attr)))
		return bad(k, OFF(attr) + first_nonzero(&c->attr, sizeof(c->attr)));
	/* The conversions: per-channel axes of x and y must agree. */
	if (x->quant == VNPU_QUANT_CHANNEL && y->quant == VNPU_QUANT_CHANNEL &&
	    x->quant_axis != y->quant_axis)
		return bad(k, TOFF(3, quant_axis));
	return 0;
}

/* The limits on a whole command, once its operands and work are known. */
static int check_totals(const struct chk *k)
{
	uint64_t bytes = 0;
	int i;

	/* Each term is below 2^48 (a VA range): the sum cannot wrap. */
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		bytes += k->info->span[i] + k->info->qbytes[i];
	if (bytes > k->lim->cmd_bytes || k->info->macs > k->lim->cmd_macs)
		return bad(k, 0);
	return 0;
}

/* Slots present and each one well formed; @slots as op_slots(). */
static int check_slots(const struct chk *k, uint32_t slots, bool raw_int)
{
	int i, ret;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool present = !all_zero(&k->c->t[i], sizeof(k->c->t[i]));

		if (present != !!(slots & (1u << i)) && !(slots & (0x100u << i)))
			return bad(k, TOFF(i, va));
		if (!present)
			continue;
		ret = check_tensor(k, i, raw_int);
		if (ret)
			return ret;
		k->info->present |= 1u << i;
	}
	return 0;
}

int vnpu_op_check_limits(const void *cmd, uint32_t size,
			 struct vnpu_cmd_compute *cc, struct vnpu_op_info *info,
			 const struct vnpu_op_limits *lim)
{
	struct chk k = { cc, info, lim };
	float alpha;
	int ret;

	memset(info, 0, sizeof(*info));
	if (size != sizeof(*cc))
		return bad(&k, OFF(hdr.size));
	memcpy(cc, cmd, sizeof(*cc));
	if (cc->hdr.size != sizeof(*cc))
		return bad(&k, OFF(hdr.size));
	if (cc->hdr.flags)
		return bad(&k, OFF(hdr.flags));
	if (cc->hdr.opcode < VNPU_OP_GEMM || cc->hdr.opcode > VNPU_OP_LAST)
		return bad(&k, OFF(hdr.opcode));
	if (cc->act >= VNPU_ACT_COUNT)
		return bad(&k, OFF(act));
	if (cc->round > VNPU_ROUND_ORT_QLINEAR)
		return bad(&k, OFF(round));
	if (cc->reserved0)
		return bad(&k, OFF(reserved0));
	alpha = f32_from_bits(cc->act_alpha);
	if (cc->act == VNPU_ACT_LEAKY_RELU || cc->act == VNPU_ACT_HARD_SIGMOID ?
	    !isfinite(alpha) : cc->act_alpha != 0)
		return bad(&k, OFF(act_alpha));
	ret = check_slots(&k, op_slots(cc->hdr.opcode), false);
	if (!ret && cc->act == VNPU_ACT_HARD_SIGMOID) {
		/*
		 * The op's own checks see the beta word as reserved (zero),
		 * which it is for every other activation.
		 */
		struct vnpu_cmd_compute nobeta = *cc;
		struct chk kb = { &nobeta, info, lim };

		if (!isfinite(vnpu_act_beta(cc)))
			return bad(&k, OFF(attr.raw[VNPU_ACT_BETA_WORD]));
		nobeta.attr.raw[VNPU_ACT_BETA_WORD] = 0;
		ret = check_ops(&kb);
	} else if (!ret) {
		ret = check_ops(&k);
	}
	if (!ret)
		ret = check_totals(&k);
	return ret;
}

int vnpu_op_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		  struct vnpu_op_info *info)
{
	return vnpu_op_check_limits(cmd, size, cc, info, &vnpu_op_limits_device);
}


/* ---- CPU-only ops: validation ------------------------------------------- */

_Static_assert(sizeof(struct vnpu_ref_attr_pool3d) <=
	       sizeof(((struct vnpu_cmd_compute *)0)->attr), "pool3d attrs");

static int check_pool3d(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	struct vnpu_ref_attr_pool3d at;
	const struct vnpu_tensor_desc *x = &c->t[0], *ind = &c->t[2];
	const struct vnpu_tensor_desc *y = &c->t[3];
	uint64_t xelems, taps = 1;
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
		return bad(k, OFF(attr));
	for (i = 0; i < 3; i++) {
		uint64_t ek = (uint64_t)(at.kernel[i] - 1) * at.dilation[i] + 1;

		if (!at.kernel[i] || !at.stride[i] || !at.dilation[i] ||
		    at.pad_begin[i] >= ek || at.pad_end[i] >= ek ||
		    y->dims[1 + i] != win_out(x->dims[1 + i], at.pad_begin[i],
					      at.pad_end[i], at.kernel[i],
					      at.dilation[i], at.stride[i]))
			return bad(k, OFF(attr));
		taps *= at.kernel[i];
	}
	if (taps > k->lim->reduction)
		return bad(k, OFF(attr));
	k->info->macs *= taps;	/* < 2^40 * 2^48: no overflow */
	if (!ind->rank)
		return 0;
	/* Every offset into X must be representable in the INT32 indices. */
	xelems = k->info->span[0] / vnpu_dtype_size(x->dtype);
	if (at.kind != VNPU_POOL_MAX || ind->dtype != VNPU_DT_INT32 ||
	    ind->quant != VNPU_QUANT_NONE || dims_differ(k, 3, 2) >= 0 ||
	    xelems > (uint64_t)INT32_MAX + 1)
		return bad(k, TOFF(2, dims));
	return 0;
}

static int check_cpu_op(const struct chk *k)
{
	const struct vnpu_cmd_compute *c = k->c;
	struct vnpu_op_info *info = k->info;
	unsigned int op = c->hdr.opcode;
	bool ints = op == VNPU_REF_OP_INT_ELTWISE;
	int i, ret;

	if (c->hdr.size != sizeof(*c) || c->hdr.flags || c->reserved0 ||
	    c->act || c->act_alpha || c->round > VNPU_ROUND_TFLITE)
		return bad(k, 0);
	ret = check_slots(k, ints ? 0x0b : 0x09 | 0x400, ints);
	if (ret)
		return ret;
	info->macs = 1;
	for (i = 0; i < c->t[3].rank; i++)
		info->macs *= c->t[3].dims[i];
	if (op == VNPU_REF_OP_POOL3D) {
		ret = check_pool3d(k);
	} else {
		for (i = 0; i < VNPU_OP_SLOTS && !ret; i++) {
			const struct vnpu_tensor_desc *d = &c->t[i];

			if (!((info->present >> i) & 1))
				continue;
			if (d->dtype != c->t[3].dtype || d->quant != VNPU_QUANT_NONE ||
			    (d->dtype != VNPU_DT_INT8 && d->dtype != VNPU_DT_UINT8 &&
			     d->dtype != VNPU_DT_INT32))
				ret = bad(k, TOFF(i, dtype));
		}
		if (!ret)
			ret = check_eltwise_shapes(k);
	}
	return ret ? ret : check_totals(k);
}

int vnpu_ref_check(const void *cmd, uint32_t size, struct vnpu_cmd_compute *cc,
		   struct vnpu_op_info *info)
{
	struct chk k = { cc, info, &vnpu_op_limits_host };
	uint16_t opcode;

	memset(info, 0, sizeof(*info));
	if (size != sizeof(*cc))
		return bad(&k, OFF(hdr.size));
	memcpy(&opcode, (const uint8_t *)cmd +
	       offsetof(struct vnpu_cmd_compute, hdr.opcode), sizeof(opcode));
	if (opcode < VNPU_REF_OP_CPU_FIRST || opcode > VNPU_REF_OP_CPU_LAST)
		return vnpu_op_check_limits(cmd, size, cc, info,
					    &vnpu_op_limits_host);
	memcpy(cc, cmd, sizeof(*cc));
	return check_cpu_op(&k);
}

/* ---- The ops ------------------------------------------------------------ */

static uint32_t chan_of(const struct vnpu_tv *tv, const uint32_t *idx, int rank)
{
	if (tv->quant != VNPU_QUANT_CHANNEL)
		return 0;
	return idx[rank - tv->rank + tv->axis];
}

static int ref_gemm(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    bool quant, struct vnpu_run_ctx *rc)
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
	float beta = vnpu_act_beta(c);

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

				if (vnpu_run_tick(rc, (uint64_t)k + 1))
					return -ECANCELED;
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
					acc = vnpu_bias_apply(bias, j, acc);
					vnpu_st(y, py, vnpu_act_ab(c->act, alpha, beta, acc),
						chan_of(y, idx, r), c->round);
				}
			}
		}
		idx[r - 2] = m - 1;
		idx[r - 1] = n - 1;
	} while (idx_next(idx, y->dims, r));
	return 0;
}

static int ref_conv(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		    bool quant, struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_conv2d *at = &c->attr.conv;
	struct vnpu_tv *x = &t[0], *w = &t[1], *bias = &t[2], *y = &t[3];
	uint32_t cig = w->dims[3], cog = w->dims[0] / at->groups;
	uint32_t idx[4] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);
	float beta = vnpu_act_beta(c);

	do {
		uint32_t b = idx[0], oy = idx[1], ox = idx[2], co = idx[3];
		uint32_t g = co / cog, ky, kx, ci;
		uint32_t acc = 0;
		float facc = 0.0f;

		if (vnpu_run_tick(rc, (uint64_t)w->dims[1] * w->dims[2] * cig + 1))
			return -ECANCELED;

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
			facc = vnpu_bias_apply(bias, co, facc);
			vnpu_st(y, tv_at(y, idx), vnpu_act_ab(c->act, alpha, beta, facc),
				y->quant == VNPU_QUANT_CHANNEL ? co : 0, c->round);
		}
	} while (idx_next(idx, y->dims, 4));
	return 0;
}

/*
 * POOL2D GLOBAL_AVG with VNPU_ROUND_ORT_QLINEAR (check_pool_qlinear()):
 * each channel's codes summed as integers, never as reals.
 */
static int ref_gap_qlinear(struct vnpu_tv *t, struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t idx[4] = { 0 }, img = x->dims[1] * x->dims[2];
	struct vnpu_qlinear_gap f;

	vnpu_qlinear_gap_init(&f, x->scale, x->zp, y->scale, y->zp, img,
			      dt_min(y->dtype), dt_max(y->dtype));
	do {
		uint32_t sum = 0, iy, ix;

		if (vnpu_run_tick(rc, (uint64_t)img + 1))
			return -ECANCELED;
		for (iy = 0; iy < x->dims[1]; iy++) {
			for (ix = 0; ix < x->dims[2]; ix++) {
				uint32_t xi[4] = { idx[0], iy, ix, idx[3] };

				sum += (uint32_t)ld_raw(x, tv_at(x, xi));
			}
		}
		*tv_at(y, idx) = (uint8_t)vnpu_qlinear_gap_q(&f, sum);
	} while (idx_next(idx, y->dims, 4));
	return 0;
}

static int ref_pool(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                    struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	struct vnpu_tv *x = &t[0], *y = &t[3];
	bool global = at->kind == VNPU_POOL_GLOBAL_AVG;
	uint32_t kh = global ? x->dims[1] : at->kernel_h;
	uint32_t kw = global ? x->dims[2] : at->kernel_w;
	uint32_t sh = global ? 1 : at->stride_h, sw = global ? 1 : at->stride_w;
	uint32_t dh = pool_dil(at->dilation_h), dw = pool_dil(at->dilation_w);
	uint32_t idx[4] = { 0 };
	bool qlinear = c->round == VNPU_ROUND_ORT_QLINEAR;

	if (qlinear && global)
		return ref_gap_qlinear(t, rc);
	do {
		float acc = at->kind == VNPU_POOL_MAX ? -INFINITY : 0.0f;
		uint32_t cnt = 0, ky, kx;

		if (vnpu_run_tick(rc, (uint64_t)kh * kw + 1))
			return -ECANCELED;

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
		if (qlinear)
			*tv_at(y, idx) = (uint8_t)vnpu_qlinear_avg_q(acc, y->scale, y->zp,
								     dt_min(y->dtype),
								     dt_max(y->dtype));
		else
			vnpu_st(y, tv_at(y, idx), acc, 0, c->round);
	} while (idx_next(idx, y->dims, 4));
	return 0;
}

float vnpu_pow(float a, float b)
{
	/* The exponents models use most, exact and cheap. */
	if (b == 2.0f)
		return a * a;
	if (b == 0.5f)
		return a == -INFINITY ? INFINITY : sqrtf(a) + 0.0f;
	return powf(a, b);
}

static float eltwise_f(unsigned int kind, float a, float b)
{
	switch (kind) {
	case VNPU_ELTWISE_ADD:
		return a + b;
	case VNPU_ELTWISE_SUB:
		return a - b;
	case VNPU_ELTWISE_MUL:
		return a * b;
	case VNPU_ELTWISE_DIV:
		return a / b;
	case VNPU_ELTWISE_MAX:
		return isnan(a) || isnan(b) ? a + b : a > b ? a : b;
	case VNPU_ELTWISE_MIN:
		return isnan(a) || isnan(b) ? a + b : a < b ? a : b;
	default:
		return vnpu_pow(a, b);
	}
}

/* ELTWISE ADD or MUL with VNPU_ROUND_ORT_QLINEAR (check_qlinear()). */
static int ref_qlinear(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		       struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	bool mul = c->attr.eltwise.kind == VNPU_ELTWISE_MUL;
	int32_t lo = dt_min(y->dtype), hi = dt_max(y->dtype);
	struct vnpu_qlinear_add fa;
	struct vnpu_qlinear_mul fm;
	int r = y->rank;

	vnpu_qlinear_add_init(&fa, a->scale, a->zp, b->scale, b->zp, y->scale, y->zp);
	vnpu_qlinear_mul_init(&fm, a->scale, a->zp, b->scale, b->zp, y->scale, y->zp);
	do {
		int32_t va, vb;
		float v;

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		va = ld_raw(a, tv_at_bcast(a, idx, r));
		vb = ld_raw(b, tv_at_bcast(b, idx, r));
		v = mul ? vnpu_qlinear_mul_f(&fm, va, vb) : vnpu_qlinear_add_f(&fa, va, vb);
		*tv_at(y, idx) = (uint8_t)vnpu_qlinear_sat(v, lo, hi);
	} while (idx_next(idx, y->dims, r));
	return 0;
}

static int ref_eltwise(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                       struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);
	float beta = vnpu_act_beta(c);
	int r = y->rank;

	if (c->round == VNPU_ROUND_ORT_QLINEAR)
		return ref_qlinear(c, t, rc);
	do {
		float va, vb, v;

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		va = vnpu_ld(a, tv_at_bcast(a, idx, r), chan_of(a, idx, r));
		vb = vnpu_ld(b, tv_at_bcast(b, idx, r), chan_of(b, idx, r));
		v = eltwise_f(c->attr.eltwise.kind, va, vb);
		vnpu_st(y, tv_at(y, idx), vnpu_act_ab(c->act, alpha, beta, v),
			chan_of(y, idx, r), c->round);
	} while (idx_next(idx, y->dims, r));
	return 0;
}

void vnpu_affine_views(const struct vnpu_tv *p, struct vnpu_tv *scale,
		       struct vnpu_tv *shift)
{
	int i;

	*scale = *p;
	scale->rank = (uint8_t)(p->rank - 1);
	for (i = 0; i < scale->rank; i++) {
		scale->dims[i] = p->dims[i + 1];
		scale->st[i] = p->st[i + 1];
	}
	for (; i < VNPU_MAX_RANK; i++) {
		scale->dims[i] = 0;
		scale->st[i] = 0;
	}
	*shift = *scale;
	shift->p = p->p + p->st[0] * p->esize;
}

/*
 * ACTIVATION, QUANTIZE, DEQUANTIZE: y = act(real(x)), converted; with
 * ACTIVATION's P, y = act(real(x) * scale + shift).
 */
static int ref_unary(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                     struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3], sc, sh;
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	float alpha = f32_from_bits(c->act_alpha);
	float beta = vnpu_act_beta(c);
	float lo = f32_from_bits(c->attr.activation.clip_min);
	float hi = f32_from_bits(c->attr.activation.clip_max);
	bool affine = t[1].p != NULL;
	int r = y->rank;

	if (affine)
		vnpu_affine_views(&t[1], &sc, &sh);
	do {
		float v;

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		v = vnpu_ld(x, tv_at(x, idx), chan_of(x, idx, r));
		if (affine)
			v = v * vnpu_ld(&sc, tv_at_bcast(&sc, idx, r), 0) +
			    vnpu_ld(&sh, tv_at_bcast(&sh, idx, r), 0);
		v = c->act == VNPU_ACT_CLIP ? vnpu_clip(lo, hi, v) :
		    vnpu_act_ab(c->act, alpha, beta, v);
		vnpu_st(y, tv_at(y, idx), v, chan_of(y, idx, r), c->round);
	} while (idx_next(idx, y->dims, r));
	return 0;
}

static int ref_requant(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                       struct vnpu_run_ctx *rc)
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

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;

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
	return 0;
}

/* Visit every index of @dims with dimension @axis.. pinned to 0. */
static bool outer_next(uint32_t *idx, const uint32_t *dims, int axis)
{
	return axis > 0 && idx_next(idx, dims, axis);
}

/*
 * Count one element of a row towards the next tick, ticking every
 * VNPU_ROW_CHUNK; the caller ticks what is left at the row's end.  True
 * once the command is stopped.
 */
static bool row_poll(struct vnpu_run_ctx *rc, uint32_t *k)
{
	if (++*k < VNPU_ROW_CHUNK)
		return false;
	*k = 0;
	return vnpu_run_tick(rc, VNPU_ROW_CHUNK);
}

/* SOFTMAX with VNPU_ROUND_ORT_QLINEAR: on the codes, a table of exponentials. */
static int ref_softmax_qlinear(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
			       struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax], i;
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	struct vnpu_qlinear_softmax *f = vnpu_run_alloc(rc, sizeof(*f));
	int r = x->rank, d;

	if (!f)
		return -ENOMEM;
	vnpu_qlinear_softmax_init(f, x->scale, y->scale, y->zp, n, x->dtype == VNPU_DT_INT8);
	do {
		int32_t mx = INT32_MIN;
		float sum = 0.0f;

		if (vnpu_run_tick(rc, 3 * (uint64_t)n)) {
			vnpu_run_free(rc, f);
			return -ECANCELED;
		}
		for (i = 0; i < n; i++) {
			int32_t q;

			idx[ax] = i;
			q = ld_raw(x, tv_at(x, idx));
			mx = q > mx ? q : mx;
		}
		for (i = 0; i < n; i++) {
			idx[ax] = i;
			sum += vnpu_qlinear_softmax_e(f, mx, ld_raw(x, tv_at(x, idx)));
		}
		for (i = 0; i < n; i++) {
			idx[ax] = i;
			*tv_at(y, idx) = vnpu_qlinear_softmax_q(
				f, vnpu_qlinear_softmax_e(f, mx, ld_raw(x, tv_at(x, idx))), sum);
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
	vnpu_run_free(rc, f);
	return 0;
}

static int ref_softmax(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		       struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *x = &t[0], *y = &t[3];
	uint32_t ax = c->attr.softmax.axis, n = x->dims[ax], i;
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = x->rank, d;
	float *e;

	if (c->round == VNPU_ROUND_ORT_QLINEAR)
		return ref_softmax_qlinear(c, t, rc);
	e = vnpu_run_alloc(rc, sizeof(float) * n);
	if (!e)
		return -ENOMEM;
	/* The softmax axis goes innermost: iterate the others, then it. */
	do {
		float mx = -INFINITY, sum, part[VNPU_SOFTMAX_LANES] = { 0 };
		uint32_t k = 0;

		/* Each pass polls every VNPU_ROW_CHUNK elements. */
		for (i = 0; i < n; i++) {
			if (row_poll(rc, &k))
				goto stopped;
			idx[ax] = i;
			e[i] = vnpu_ld(x, tv_at(x, idx), 0);
			mx = e[i] > mx ? e[i] : mx;
		}
		for (i = 0; i < n; i++) {
			if (row_poll(rc, &k))
				goto stopped;
			e[i] = vnpu_softmax_exp(e[i] - mx);
			part[i % VNPU_SOFTMAX_LANES] += e[i];
		}
		sum = vnpu_softmax_sum8(part);
		for (i = 0; i < n; i++) {
			if (row_poll(rc, &k))
				goto stopped;
			idx[ax] = i;
			vnpu_st(y, tv_at(y, idx), e[i] / sum, 0, c->round);
		}
		if (vnpu_run_tick(rc, k))
			goto stopped;
		idx[ax] = 0;
		for (d = r - 1; d >= 0; d--) {
			if (d == (int)ax)
				continue;
			if (++idx[d] < x->dims[d])
				break;
			idx[d] = 0;
		}
	} while (d >= 0);
	vnpu_run_free(rc, e);
	return 0;
stopped:
	vnpu_run_free(rc, e);
	return -ECANCELED;
}

static int ref_layernorm(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                         struct vnpu_run_ctx *rc)
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
		uint32_t in[VNPU_MAX_RANK], k = 0;
		double sum = 0.0, sq = 0.0;
		float mean, rstd;

		/*
		 * Statistics in double: the reference should not lose bits.
		 * Each pass polls every VNPU_ROW_CHUNK elements.
		 */
		memcpy(in, idx, sizeof(in));
		do {
			double v = vnpu_ld(x, tv_at(x, in), 0);

			if (row_poll(rc, &k))
				return -ECANCELED;
			sum += v;
		} while (idx_next(in + ax, x->dims + ax, r - ax));
		mean = (float)(sum / (double)cnt);
		do {
			double v = (double)vnpu_ld(x, tv_at(x, in), 0) - mean;

			if (row_poll(rc, &k))
				return -ECANCELED;
			sq += v * v;
		} while (idx_next(in + ax, x->dims + ax, r - ax));
		rstd = (float)(1.0 / sqrt(sq / (double)cnt + eps));
		do {
			float v = (vnpu_ld(x, tv_at(x, in), 0) - mean) * rstd;

			if (row_poll(rc, &k))
				return -ECANCELED;

			if (g->p)
				v *= vnpu_ld(g, tv_at(g, in + ax), 0);
			if (bt->p)
				v += vnpu_ld(bt, tv_at(bt, in + ax), 0);
			vnpu_st(y, tv_at(y, in), v, 0, c->round);
		} while (idx_next(in + ax, x->dims + ax, r - ax));
		if (vnpu_run_tick(rc, k))
			return -ECANCELED;
	} while (outer_next(idx, x->dims, ax));
	return 0;
}

/* ---- CPU-only ops --------------------------------------------------------- */

/*
 * a^b modulo 2^32; a negative b gives the truncated 1 / a^|b|: 1 for
 * a == 1, +-1 for a == -1, else 0 (and 0 for a == 0, not a trap).
 */
static uint32_t int_pow(int32_t a, int32_t b)
{
	uint32_t base = (uint32_t)a, v = 1;
	int64_t e = b;

	if (e < 0)
		return a == 1 ? 1 : a == -1 ? (e % 2 ? (uint32_t)-1 : 1) : 0;
	for (; e; e >>= 1) {
		if (e & 1)
			v *= base;
		base *= base;
	}
	return v;
}

static int ref_int_eltwise(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                           struct vnpu_run_ctx *rc)
{
	struct vnpu_tv *a = &t[0], *b = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	int r = y->rank;

	do {
		/* Unsigned arithmetic: wrapping is the defined result. */
		int32_t sa = ld_raw(a, tv_at_bcast(a, idx, r));
		int32_t sb = ld_raw(b, tv_at_bcast(b, idx, r));
		uint32_t va = (uint32_t)sa, vb = (uint32_t)sb, v;
		uint8_t *py = tv_at(y, idx);

		switch (c->attr.eltwise.kind) {
		case VNPU_ELTWISE_ADD:
			v = va + vb;
			break;
		case VNPU_ELTWISE_SUB:
			v = va - vb;
			break;
		case VNPU_ELTWISE_MUL:
			v = va * vb;
			break;
		case VNPU_ELTWISE_DIV:
			/* Truncating; x / 0 is 0 and INT32_MIN / -1 wraps. */
			v = sb ? (uint32_t)(int64_t)((int64_t)sa / sb) : 0;
			break;
		case VNPU_ELTWISE_MAX:
			v = (uint32_t)(sa > sb ? sa : sb);
			break;
		case VNPU_ELTWISE_MIN:
			v = (uint32_t)(sa < sb ? sa : sb);
			break;
		default:
			v = int_pow(sa, sb);
			break;
		}

		if (vnpu_run_tick(rc, 1))
			return -ECANCELED;
		if (y->dtype == VNPU_DT_INT32)
			memcpy(py, &v, 4);
		else
			*py = (uint8_t)v;
	} while (idx_next(idx, y->dims, r));
	return 0;
}

static int ref_pool3d(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
                      struct vnpu_run_ctx *rc)
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

		if (vnpu_run_tick(rc, (uint64_t)at.kernel[0] * at.kernel[1] * at.kernel[2]))
			return -ECANCELED;

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
	return 0;
}

static int ref_convt(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		     bool quant, struct vnpu_run_ctx *rc);
static int ref_reduce(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		      struct vnpu_run_ctx *rc);
static int ref_lut(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		   struct vnpu_run_ctx *rc);

int vnpu_ref_run_ctx(const struct vnpu_cmd_compute *cmd,
		     const struct vnpu_op_bind *bind, struct vnpu_run_ctx *rc)
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
		return ref_gemm(&c, t, info.quantized, rc);
	case VNPU_OP_CONV2D:
		return ref_conv(&c, t, info.quantized, rc);
	case VNPU_OP_CONV_TRANSPOSE:
		return ref_convt(&c, t, info.quantized, rc);
	case VNPU_OP_REDUCE:
		return ref_reduce(&c, t, rc);
	case VNPU_OP_LUT:
		return ref_lut(&c, t, rc);
	case VNPU_OP_POOL2D:
		return ref_pool(&c, t, rc);
	case VNPU_OP_ELTWISE:
		return ref_eltwise(&c, t, rc);
	case VNPU_OP_SOFTMAX:
		return ref_softmax(&c, t, rc);
	case VNPU_OP_LAYERNORM:
		return ref_layernorm(&c, t, rc);
	case VNPU_OP_REQUANTIZE:
		return ref_requant(&c, t, rc);
	case VNPU_OP_COPY:
		return ref_copy(&c, t, rc);
	case VNPU_OP_RESIZE:
		return ref_resize(&c, t, rc);
	case VNPU_REF_OP_INT_ELTWISE:
		return ref_int_eltwise(&c, t, rc);
	case VNPU_REF_OP_POOL3D:
		return ref_pool3d(&c, t, rc);
	default:	/* ACTIVATION, QUANTIZE, DEQUANTIZE */
		return ref_unary(&c, t, rc);
	}
}

int vnpu_ref_run(const struct vnpu_cmd_compute *cmd,
		 const struct vnpu_op_bind *bind)
{
	return vnpu_ref_run_ctx(cmd, bind, NULL);
}

#include "vnpu_ref_convt.c"
#include "vnpu_ref_reduce.c"
#include "vnpu_ref_lut.c"
