/* SPDX-License-Identifier: MIT */
/*
 * The float SOFTMAX's arithmetic (Documentation/ops.rst, "SOFTMAX"): its
 * exponential and the order of its sum.  The reference (vnpu_ref.c) and
 * the engine's scalar tails call these; the engine's vector kernels
 * (vnpu_engine_nn.c) do the same IEEE operations lane by lane, so all
 * agree bit for bit on every host.  libm's expf() cannot be that
 * definition: glibc picks an implementation per CPU at load time and no
 * vector version reproduces it.
 *
 * Every includer must be compiled without floating-point contraction
 * (ISO C mode or -ffp-contract=off): a fused multiply-add rounds once
 * where the vector code rounds twice.
 */
#ifndef VNPU_REF_SOFTMAX_H
#define VNPU_REF_SOFTMAX_H

#include <stdint.h>
#include <string.h>

/*
 * Partial sums of a row: element i goes into sum i % 8, in index order;
 * vnpu_softmax_sum8() then adds the eight.  One vector of eight lanes
 * holds them, so the sum costs one addition per eight elements instead of
 * a chain of dependent ones.
 */
#define VNPU_SOFTMAX_LANES	8

/*
 * exp(x) in binary32 within 2 units in the last place (ops.rst
 * "SOFTMAX"; test-ops-nn measures it against libm's over every input the
 * softmax can take).  x = k*ln2 + r with k = x*log2(e) rounded to an
 * integer and ln2 in two parts (k*LN2_HI is exact), |r| <= ln2/2; e^r by
 * its Taylor series to degree 7 (remainder < 6e-9 relative) by Horner,
 * each step a product and a sum rounded apart (no fmaf(): without FMA
 * hardware that is a slow libm call); then times 2^(k/2) and 2^(k - k/2), two normal floats,
 * so one rounding makes a subnormal result and 2^128 needs no special
 * case.  Inputs are clamped to [-104, 88.8] first (beyond them the
 * result is 0 or +inf anyway); NaN stays NaN.
 */
#define VNPU_SOFTMAX_EXP_LO	(-104.0f)
#define VNPU_SOFTMAX_EXP_HI	88.8f
/* Adding and subtracting it rounds |z| < 2^22 to an integer, ties to even. */
#define VNPU_SOFTMAX_SHIFT	0x1.8p23f
#define VNPU_SOFTMAX_LOG2E	0x1.715476p0f
/* ln2 = LN2_HI + LN2_LO; LN2_HI has 15 significant bits. */
#define VNPU_SOFTMAX_LN2_HI	0x1.62e4p-1f
#define VNPU_SOFTMAX_LN2_LO	0x1.7f7d1cp-20f

/* 1/k! for k = 7 down to 2: Horner's order. */
static const float vnpu_softmax_exp_c[6] = {
	1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 1.0f / 2,
};

static inline float vnpu_softmax_exp(float x)
{
	float kf, r, p, s1, s2;
	int32_t k, k1;
	uint32_t b1, b2;
	int i;

	if (x != x)
		return x + x;
	if (x < VNPU_SOFTMAX_EXP_LO)
		x = VNPU_SOFTMAX_EXP_LO;
	if (x > VNPU_SOFTMAX_EXP_HI)
		x = VNPU_SOFTMAX_EXP_HI;
	kf = x * VNPU_SOFTMAX_LOG2E;
	kf = kf + VNPU_SOFTMAX_SHIFT;
	kf = kf - VNPU_SOFTMAX_SHIFT;
	r = x - kf * VNPU_SOFTMAX_LN2_HI;
	r = r - kf * VNPU_SOFTMAX_LN2_LO;
	p = vnpu_softmax_exp_c[0];
	for (i = 1; i < 6; i++)
		p = p * r + vnpu_softmax_exp_c[i];
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	/* k in [-150, 128]: both halves are normal exponents. */
	k = (int32_t)kf;
	k1 = k >> 1;
	b1 = (uint32_t)(k1 + 127) << 23;
	b2 = (uint32_t)(k - k1 + 127) << 23;
	memcpy(&s1, &b1, sizeof(s1));
	memcpy(&s2, &b2, sizeof(s2));
	return p * s1 * s2;
}

/* The row's sum from its partial sums, in this tree. */
static inline float vnpu_softmax_sum8(const float s[VNPU_SOFTMAX_LANES])
{
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

#endif
