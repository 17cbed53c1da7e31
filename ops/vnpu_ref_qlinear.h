/* SPDX-License-Identifier: MIT */
/*
 * onnxruntime's QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
 * QLinearAveragePool and QLinearSoftmax arithmetic (ELTWISE, POOL2D and SOFTMAX with
 * VNPU_ROUND_ORT_QLINEAR, Documentation/ops.rst "Rounding"), as
 * onnxruntime's CPU provider (MLAS) computes it on x86-64 with AVX2 and
 * FMA, operation by operation in binary32.  Users compare int8 models
 * with onnxruntime bit for bit, and the real-number formula (dequantize,
 * add, requantize) rounds differently often enough to show.
 *
 * Static inline so that one source serves every build that needs it: the
 * reference (vnpu_ref.c), the engine (vnpu_engine_elt.c,
 * vnpu_engine_pool.c), the device and libnpu's com.microsoft kernels
 * (ok_quant_ms.c, ok_quant_ms_pool.c, ok_quant_ms_softmax.c), which live in a library
 * that cannot reach the engine's hidden symbols.  Every includer must be
 * compiled without floating-point contraction (ISO C mode or
 * -ffp-contract=off): MLAS's separate multiplies and adds must not fuse.
 */
#ifndef VNPU_REF_QLINEAR_H
#define VNPU_REF_QLINEAR_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * QLinearAdd keeps two ratios and a bias holding the zero points:
 * y = fma(a, ra, fma(b, rb, fixed)), rounded once.  MLAS runs its first
 * operand along a span and folds the second into the inner fma, so which
 * operand is A decides the rounding; the command's A is MLAS's first.
 */
struct vnpu_qlinear_add {
	float ra, rb, fixed;
};

static inline void vnpu_qlinear_add_init(struct vnpu_qlinear_add *f, float sa,
					 int32_t za, float sb, int32_t zb,
					 float sy, int32_t zy)
{
	f->ra = sa / sy;
	f->rb = sb / sy;
	f->fixed = (float)zy - (f->ra * (float)za + f->rb * (float)zb);
}

static inline float vnpu_qlinear_add_f(const struct vnpu_qlinear_add *f,
				       int32_t a, int32_t b)
{
	return fmaf((float)a, f->ra, fmaf((float)b, f->rb, f->fixed));
}

/*
 * QLinearMul: the exact integer product, converted, times one ratio
 * (sa * sb first, then / sy), plus the output zero point: two roundings,
 * no fma (MLAS has only an SSE2 form of it).
 */
struct vnpu_qlinear_mul {
	float ratio, zy;
	int32_t za, zb;
};

static inline void vnpu_qlinear_mul_init(struct vnpu_qlinear_mul *f, float sa,
					 int32_t za, float sb, int32_t zb,
					 float sy, int32_t zy)
{
	f->ratio = sa * sb / sy;
	f->zy = (float)zy;
	f->za = za;
	f->zb = zb;
}

static inline float vnpu_qlinear_mul_f(const struct vnpu_qlinear_mul *f,
				       int32_t a, int32_t b)
{
	/* |a - za|, |b - zb| <= 255: the product is exact in int32 */
	return (float)((a - f->za) * (b - f->zb)) * f->ratio + f->zy;
}

/*
 * MLAS's conversion (CVTPS2DQ, half to even) and then the 8-bit clamp:
 * a NaN or a value beyond int32 converts to INT32_MIN, so it saturates
 * low, as onnxruntime's does.
 */
static inline int32_t vnpu_qlinear_sat(float v, int32_t lo, int32_t hi)
{
	int32_t q;

	if (!(v >= -2147483648.0f && v < 2147483648.0f))
		return lo;
	q = (int32_t)rintf(v);
	return q < lo ? lo : q > hi ? hi : q;
}

/*
 * Which operand onnxruntime's broadcast loop treats as the scalar of its
 * innermost span, from the two shapes alone (right-aligned, numpy
 * style): it walks from the innermost axis, skips axes where both are 1
 * (but not the last it can look at), and the first axis left decides;
 * an operand of extent 1 there is the scalar, A first.  When it is A,
 * onnxruntime calls MLAS with B first: B is the command's A.
 */
enum vnpu_qlinear_scalar {
	VNPU_QLINEAR_SCALAR_NONE,
	VNPU_QLINEAR_SCALAR_A,
	VNPU_QLINEAR_SCALAR_B,
};

static inline enum vnpu_qlinear_scalar
vnpu_qlinear_scalar_side(uint32_t ra, const uint32_t *da, uint32_t rb,
			 const uint32_t *db)
{
	uint32_t common = ra < rb ? ra : rb, i;
	bool a_moves = false, b_moves = false;

	if (ra == 0)
		return VNPU_QLINEAR_SCALAR_A;
	if (rb == 0) {
		a_moves = da[ra - 1] > 1;
	} else {
		for (i = 0; i < common; i++) {
			uint32_t x = da[ra - 1 - i], y = db[rb - 1 - i];

			if (x <= 1 && y <= 1 && i + 1 < common)
				continue;
			a_moves = x > 1;
			b_moves = y > 1;
			break;
		}
	}
	if (!a_moves)
		return VNPU_QLINEAR_SCALAR_A;
	return b_moves ? VNPU_QLINEAR_SCALAR_NONE : VNPU_QLINEAR_SCALAR_B;
}

/*
 * QLinearGlobalAveragePool (MLAS qlgavgpool.cpp, then its requantization):
 * each channel's codes summed in int32 lanes that start from -zx * N and
 * wrap, the sum converted to binary32 and multiplied by one ratio,
 * sx / (sy * (float)N) (the product rounded first), clamped to
 * [lo - zy, hi - zy] (MAXPS: NaN becomes the low bound), converted half to
 * even, and only then offset by zy.  Rounding before the zero point is
 * added matters at ties when zy is odd.  The caller sums the codes
 * modulo 2^32 (uint32_t) and hands that sum in.
 */
struct vnpu_qlinear_gap {
	float ratio, lo, hi;
	uint32_t bias;
	int32_t zy;
};

static inline void vnpu_qlinear_gap_init(struct vnpu_qlinear_gap *f, float sx, int32_t zx,
					 float sy, int32_t zy, uint32_t n, int32_t lo,
					 int32_t hi)
{
	f->ratio = sx / (sy * (float)n);
	f->bias = (uint32_t)-zx * n;
	f->lo = (float)(lo - zy);
	f->hi = (float)(hi - zy);
	f->zy = zy;
}

static inline int32_t vnpu_qlinear_gap_q(const struct vnpu_qlinear_gap *f, uint32_t sum)
{
	/* GCC and Clang define the conversion modulo 2^32, as the lanes wrap */
	float v = (float)(int32_t)(sum + f->bias) * f->ratio;

	v = v > f->lo ? v : f->lo;
	v = v < f->hi ? v : f->hi;
	return (int32_t)rintf(v) + f->zy;
}

/*
 * QLinearAveragePool (onnxruntime's qlinear_pool.cc): the window's mean is
 * the float pool's (codes dequantized as (float)(q - zx) * sx, summed in
 * row-major order from 0, divided by the count), then
 * nearbyintf(mean / sy + zy): the zero point is added before rounding,
 * unlike QuantizeLinear.  std::min then std::max clamp it: NaN becomes
 * the low bound.
 */
static inline int32_t vnpu_qlinear_avg_q(float mean, float sy, int32_t zy, int32_t lo,
					 int32_t hi)
{
	float v = nearbyintf(mean / sy + (float)zy);

	v = (float)hi < v ? (float)hi : v;
	v = (float)lo < v ? v : (float)lo;
	return (int32_t)v;
}

/*
 * QLinearSoftmax (onnxruntime's qlinear_softmax.cc), along a run of @len
 * codes: a table of exp((i - 255 + shift) * sx), computed in double and
 * rounded to float, shift = max(0, log(FLT_MAX / len) - 5) / sx keeping
 * a sum of len entries finite.  Each code reads entry 255 - (max - q),
 * max the run's largest code (zx cancels out); the entries are summed in
 * float in order, and an output is nearbyintf(e * floor(1 / sy) / sum)
 * + zy, capped at 255 and, for int8, then taken modulo 256: 128..255
 * wrap to negative codes, as onnxruntime's do.  An infinite quotient (a
 * run of one under a y scale below about 1/148) converts as x86-64's
 * does: through int64 to 0 for uint8, to INT32_MIN for int8.
 */
struct vnpu_qlinear_softmax {
	float table[256];
	float y_mul;
	int32_t zy;
	bool is_signed;
};

static inline void vnpu_qlinear_softmax_init(struct vnpu_qlinear_softmax *f, float sx,
					     float sy, int32_t zy, uint64_t len,
					     bool is_signed)
{
	double shift = log((double)(FLT_MAX / (float)len));
	int k;

	shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)sx;
	for (k = 0; k < 256; k++)
		f->table[k] = (float)exp(((double)k - 255.0 + shift) * (double)sx);
	f->y_mul = floorf(1.0f / sy);
	f->zy = zy;
	f->is_signed = is_signed;
}

/* The table entry of code @q in a run whose largest code is @max. */
static inline float vnpu_qlinear_softmax_e(const struct vnpu_qlinear_softmax *f,
					   int32_t max, int32_t q)
{
	return f->table[255 - (max - q)];
}

/* The output byte of entry @e in a run whose entries sum to @sum. */
static inline uint8_t vnpu_qlinear_softmax_q(const struct vnpu_qlinear_softmax *f,
					     float e, float sum)
{
	float r = nearbyintf(e * f->y_mul / sum);
	int32_t raw, q;

	if (r < 2147483648.0f)
		raw = (int32_t)r;
	else
		raw = f->is_signed ? INT32_MIN : 0;
	q = (int32_t)((uint32_t)raw + (uint32_t)f->zy);
	return (uint8_t)(q > 255 ? 255 : q);
}

#endif /* VNPU_REF_QLINEAR_H */
