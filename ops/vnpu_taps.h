/* SPDX-License-Identifier: MIT */
/*
 * The kernel taps that reach one output coordinate of a transposed
 * convolution, found by arithmetic instead of by trying every tap.
 *
 * Along one axis, tap t of output coordinate o reads input coordinate
 * i = (o + pad - t * dil) / stride when that division is exact and
 * 0 <= i < in.  Exactness is a congruence t * dil = o + pad (mod stride),
 * whose solutions (if any) are one residue modulo stride / gcd(dil,
 * stride); the input range bounds t to an interval.  So the taps are an
 * arithmetic progression, computed in a few divisions whatever the kernel
 * size: the work of an output coordinate is its taps, never the kernel
 * (a 1024-tap kernel scanned per output pixel made a legal command run
 * for minutes while it was counted as a few million work units).
 */
#ifndef VNPU_TAPS_H
#define VNPU_TAPS_H

#include <stdint.h>

/* One axis of a CONV_TRANSPOSE: its attributes and what is derived once. */
struct vnpu_taps_axis {
	uint32_t k, dil, stride, in, pad;
	uint32_t g;		/* gcd(dil, stride) */
	uint32_t period;	/* stride / g: distance between solutions */
	uint32_t istep;		/* dil / g: input step between solutions */
	uint32_t inv;		/* (dil / g)^-1 modulo period (0 if period 1) */
};

/* The taps of one output coordinate: t = first + j * period, j < n. */
struct vnpu_taps {
	uint32_t first, n, period;
	uint32_t ifirst, istep;	/* input coordinate of tap first, decreasing */
};

static inline uint32_t vnpu_gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* @a^-1 modulo @m for coprime @a, @m >= 2 (extended Euclid). */
static inline uint32_t vnpu_modinv32(uint32_t a, uint32_t m)
{
	int64_t t = 0, nt = 1, r = m, nr = a % m;

	while (nr) {
		int64_t q = r / nr, tmp;

		tmp = t - q * nt;
		t = nt;
		nt = tmp;
		tmp = r - q * nr;
		r = nr;
		nr = tmp;
	}
	return (uint32_t)(t < 0 ? t + m : t);
}

/* @k, @dil, @stride, @in >= 1 (the validator's rules). */
static inline void vnpu_taps_axis_init(struct vnpu_taps_axis *a, uint32_t k,
				       uint32_t dil, uint32_t stride,
				       uint32_t in, uint32_t pad)
{
	a->k = k;
	a->dil = dil;
	a->stride = stride;
	a->in = in;
	a->pad = pad;
	a->g = vnpu_gcd32(dil, stride);
	a->period = stride / a->g;
	a->istep = dil / a->g;
	a->inv = a->period > 1 ? vnpu_modinv32(a->istep % a->period, a->period) : 0;
}

/* The taps of output coordinate @o along @a, in increasing t; n may be 0. */
static inline void vnpu_taps_of(const struct vnpu_taps_axis *a, uint32_t o,
				struct vnpu_taps *t)
{
	/* Below 2^33 and 2^49: every term fits an int64_t. */
	int64_t base = (int64_t)o + a->pad;
	int64_t lo_num = base - (int64_t)(a->in - 1) * a->stride;
	uint32_t r = (uint32_t)(base % a->stride), t0;
	int64_t hi, lo, first;

	t->n = 0;
	t->period = a->period;
	t->istep = a->istep;
	t->first = t->ifirst = 0;
	if (r % a->g)
		return;
	/* t * (dil/g) = r/g (mod period); both factors below 2^16. */
	t0 = (uint32_t)((uint64_t)(r / a->g) * a->inv % a->period);
	hi = base / a->dil;			/* input coordinate >= 0 */
	if (hi > (int64_t)a->k - 1)
		hi = (int64_t)a->k - 1;
	lo = lo_num <= 0 ? 0 : (lo_num + a->dil - 1) / a->dil;	/* < in */
	if (lo > hi)
		return;
	first = lo + ((int64_t)t0 - lo % a->period + a->period) % a->period;
	if (first > hi)
		return;
	t->first = (uint32_t)first;
	t->n = (uint32_t)((hi - first) / a->period + 1);
	t->ifirst = (uint32_t)((base - first * (int64_t)a->dil) / a->stride);
}

#endif /* VNPU_TAPS_H */
