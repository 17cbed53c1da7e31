// SPDX-License-Identifier: MIT
/*
 * The float SOFTMAX's own arithmetic (ops/vnpu_ref_softmax.h) and the
 * engine's vector kernels for it:
 *
 * - the exponential against libm's binary64 exp() over a million
 *   inputs spread across its whole domain, every input near the
 *   underflow and overflow edges, and the special values;
 * - the reference against the documented definition (max, that
 *   exponential, eight partial sums in index order, their tree, one
 *   division), written here from the header's functions;
 * - the engine against the reference bit for bit, on rows and columns
 *   whose values span every binary32 exponent (subnormals, infinities
 *   and NaNs included), with each case's kernel asserted: the AVX2 rows
 *   along a contiguous axis, the columns across a dense inner block, and
 *   short last-axis rows eight at a time.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_ref_softmax.h"

static struct flat f;
static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

static float from_bits(uint32_t b)
{
	float v;

	memcpy(&v, &b, 4);
	return v;
}

static uint32_t to_bits(float v)
{
	uint32_t b;

	memcpy(&b, &v, 4);
	return b;
}

/* |got - e^x| in units of the last place of e^x as a binary32. */
static double exp_ulps(float x, float got)
{
	double t = exp((double)x), ulp;
	int e;

	if (t > FLT_MAX)
		return isinf(got) && got > 0 ? 0.0 : 1e9;
	frexp(t, &e);
	ulp = ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
	return fabs((double)got - t) / ulp;
}

/* Measured over every binary32 in [-110, 90]: at most 1.221 units. */
#define EXP_MAX_ULPS	1.25

static void test_exp_accuracy(void **state)
{
	static const float lo_edge = -87.5f, hi_edge = 88.8f;
	double worst = 0.0, u;
	float x, worst_x = 0.0f;
	uint32_t i, b;

	(void)state;
	for (i = 0; i < (1u << 20); i++) {
		/* Uniform bits: every exponent of the domain, not just large |x|. */
		x = from_bits(rnd(1u << 31) | (rnd(2) ? 0x80000000u : 0));
		if (!(x >= VNPU_SOFTMAX_EXP_LO && x <= VNPU_SOFTMAX_EXP_HI))
			continue;
		u = exp_ulps(x, vnpu_softmax_exp(x));
		if (u > worst) {
			worst = u;
			worst_x = x;
		}
	}
	/* Every input where results turn subnormal, underflow and overflow. */
	for (b = to_bits(lo_edge); b <= to_bits(VNPU_SOFTMAX_EXP_LO); b++) {
		x = from_bits(b);
		u = exp_ulps(x, vnpu_softmax_exp(x));
		if (u > worst) {
			worst = u;
			worst_x = x;
		}
	}
	for (b = to_bits(88.0f); b <= to_bits(hi_edge); b++) {
		x = from_bits(b);
		u = exp_ulps(x, vnpu_softmax_exp(x));
		if (u > worst) {
			worst = u;
			worst_x = x;
		}
	}
	printf("# exp: worst %.4f units at %a\n", worst, (double)worst_x);
	assert_true(worst <= EXP_MAX_ULPS);

	assert_true(isnan(vnpu_softmax_exp(NAN)));
	assert_true(vnpu_softmax_exp(-INFINITY) == 0.0f);
	assert_true(vnpu_softmax_exp(-200.0f) == 0.0f);
	assert_true(isinf(vnpu_softmax_exp(INFINITY)));
	assert_true(isinf(vnpu_softmax_exp(89.0f)));
	assert_true(vnpu_softmax_exp(0.0f) == 1.0f);
	assert_true(vnpu_softmax_exp(-0.0f) == 1.0f);
	assert_true(vnpu_softmax_exp(-1e-40f) == 1.0f);
	/* Either side of overflow; a subnormal result. */
	assert_true(vnpu_softmax_exp(88.72283f) >= 0x1.fffcp127f &&
		    vnpu_softmax_exp(88.72283f) <= FLT_MAX);
	assert_true(isinf(vnpu_softmax_exp(88.7229f)));
	assert_true(vnpu_softmax_exp(-103.0f) > 0.0f &&
		    vnpu_softmax_exp(-103.0f) < FLT_MIN);
}

/* A value of any exponent: what rows of logits never hold, but may. */
static float wild(void)
{
	static const float sp[] = { INFINITY, -INFINITY, NAN, -0.0f, 0.0f };

	switch (rnd(8)) {
	case 0:
		return rnd(8) ? -from_bits(rnd(0x7f800000u)) : sp[rnd(5)];
	case 1:
		return from_bits(rnd(0x42c80000u)) * (rnd(2) ? 1.0f : -1.0f);
	default:
		/* Model-like logits: a spread of about 30 around zero. */
		return ((float)rnd(1u << 24) / (float)(1u << 24) - 0.5f) * 60.0f;
	}
}

/* The documented definition, from the header, for a dense row. */
static void softmax_def(const float *x, float *y, uint32_t n)
{
	float mx = -INFINITY, part[VNPU_SOFTMAX_LANES] = { 0 }, sum;
	uint32_t i;

	for (i = 0; i < n; i++)
		mx = x[i] > mx ? x[i] : mx;
	for (i = 0; i < n; i++)
		part[i % VNPU_SOFTMAX_LANES] += vnpu_softmax_exp(x[i] - mx);
	sum = vnpu_softmax_sum8(part);
	for (i = 0; i < n; i++)
		y[i] = vnpu_softmax_exp(x[i] - mx) / sum;
}

static void same_bits(const float *a, const float *b, uint64_t n, const char *what)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (isnan(a[i]) && isnan(b[i]))
			continue;
		if (to_bits(a[i]) != to_bits(b[i])) {
			fprintf(stderr, "%s: element %llu: %a != %a\n", what,
				(unsigned long long)i, (double)a[i], (double)b[i]);
			fail();
		}
	}
}

static void test_reference_definition(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 300; it++) {
		uint32_t n = 1 + rnd(it % 3 ? 40 : 5000), i;
		struct vnpu_cmd_compute c;
		float *x, *want;

		flat_reset(&f);
		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.t[0] = tdesc(VNPU_DT_FP32, 1, &n);
		c.t[3] = c.t[0];
		c.t[0].va = flat_alloc(&f, 4ull * n);
		c.t[3].va = flat_alloc(&f, 4ull * n);
		assert_true(c.t[0].va && c.t[3].va);
		x = flat_host(&f, c.t[0].va);
		for (i = 0; i < n; i++)
			x[i] = wild();
		want = malloc(4ull * n);
		assert_non_null(want);
		softmax_def(x, want, n);
		assert_int_equal(flat_ref(&f, &c), 0);
		same_bits(want, flat_host(&f, c.t[3].va), n, "reference vs definition");
		free(want);
	}
}

/*
 * One engine-vs-reference case; @want_path the kernel it must take on
 * a host with AVX2 (the scalar rows otherwise).
 */
static void one_case(int r, const uint32_t *d, uint32_t ax, const uint64_t *xst,
		     bool in_place, enum vnpu_eng_path want_path)
{
	struct vnpu_cmd_compute c;
	uint64_t nx = 1, ny = 1, i, cycles;
	float *ref, *x0;
	int k;

	flat_reset(&f);
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.attr.softmax.axis = ax;
	c.t[0] = tdesc(VNPU_DT_FP32, r, d);
	c.t[3] = tdesc(VNPU_DT_FP32, r, d);
	for (k = 0; k < r; k++)
		ny *= d[k];
	nx = ny;
	if (xst) {
		c.t[0].flags = VNPU_TENSOR_STRIDED;
		nx = 1;
		for (k = 0; k < r; k++) {
			c.t[0].strides[k] = xst[k];
			nx += (uint64_t)(d[k] - 1) * xst[k];
		}
	}
	c.t[0].va = flat_alloc(&f, 4 * nx);
	assert_true(c.t[0].va != 0);
	if (in_place) {
		c.t[3] = c.t[0];
		ny = nx;
	} else {
		c.t[3].va = flat_alloc(&f, 4 * ny);
		assert_true(c.t[3].va != 0);
	}
	x0 = malloc(4 * nx);
	ref = malloc(4 * ny);
	assert_non_null(x0);
	assert_non_null(ref);
	for (i = 0; i < nx; i++)
		x0[i] = wild();
	memcpy(flat_host(&f, c.t[0].va), x0, 4 * nx);
	if (!in_place)
		memset(flat_host(&f, c.t[3].va), 0x7f, 4 * ny);
	assert_int_equal(flat_ref(&f, &c), 0);
	memcpy(ref, flat_host(&f, c.t[3].va), 4 * ny);
	memcpy(flat_host(&f, c.t[0].va), x0, 4 * nx);
	if (!in_place)
		memset(flat_host(&f, c.t[3].va), 0x7f, 4 * ny);
	assert_int_equal(flat_exec(&f, &c, sizeof(c), &cycles), 0);
	same_bits(ref, flat_host(&f, c.t[3].va), ny, "engine vs reference");
	if (__builtin_cpu_supports("avx2"))
		assert_int_equal(flat_engine.res.path, want_path);
	else
		assert_int_equal(flat_engine.res.path, VNPU_ENG_SOFTMAX);
	free(x0);
	free(ref);
}

/* Rows along a unit-stride axis, or gathered along a strided one. */
static void test_engine_rows(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 400; it++) {
		uint32_t d[3] = { 1 + rnd(4), 1 + rnd(3), 1 + rnd(it % 4 ? 70 : 9000) };
		uint64_t st[3] = { 0, 0, 1 };

		if (rnd(3) == 0) {
			/* Axis last, X's rows strided by 1..3 elements. */
			st[2] = 1 + rnd(3);
			st[1] = st[2] * d[2] + rnd(5);
			st[0] = st[1] * d[1] + rnd(5);
			one_case(3, d, 2, st, rnd(4) == 0, VNPU_ENG_SOFTMAX_AVX2);
		} else {
			one_case(3, d, 2, NULL, rnd(4) == 0, VNPU_ENG_SOFTMAX_AVX2);
		}
	}
}

/* An outer axis over a dense inner block of at least 8: the columns. */
static void test_engine_columns(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 400; it++) {
		uint32_t d[4] = { 1 + rnd(3), 1 + rnd(it % 4 ? 60 : 5000), 1 + rnd(6), 1 + rnd(40) };
		uint32_t ax = 1;
		uint64_t st[4];

		if (d[1] > 60)
			d[0] = d[2] = 1;	/* a long axis: a few MB at most */
		if (d[2] * d[3] < 8)
			d[3] = 8 + rnd(9);
		if (rnd(3) == 0) {
			/* The axis and the outer dim strided; the inner block dense. */
			st[3] = 1;
			st[2] = d[3];
			st[1] = (uint64_t)d[2] * d[3] + rnd(20);
			st[0] = st[1] * d[1] + rnd(20);
			one_case(4, d, ax, st, rnd(4) == 0, VNPU_ENG_SOFTMAX_COLS);
		} else {
			one_case(4, d, ax, NULL, rnd(4) == 0, VNPU_ENG_SOFTMAX_COLS);
		}
	}
}

/* Rows shorter than 8 along the last axis: eight neighbours gathered. */
static void test_engine_short_rows(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 300; it++) {
		uint32_t d[3] = { 1 + rnd(3), 8 + rnd(it % 4 ? 40 : 3000), 1 + rnd(7) };
		uint64_t st[3];

		if (rnd(3) == 0) {
			/* Rows apart by more than their length; elements strided. */
			st[2] = 1 + rnd(2);
			st[1] = st[2] * d[2] + rnd(4);
			st[0] = st[1] * d[1] + rnd(4);
			one_case(3, d, 2, st, rnd(4) == 0, VNPU_ENG_SOFTMAX_COLS);
		} else {
			one_case(3, d, 2, NULL, rnd(4) == 0, VNPU_ENG_SOFTMAX_COLS);
		}
	}
}

/*
 * An outer axis whose inner block is not dense, or too narrow: the rows
 * (gathered) take it, still bit for bit.
 */
static void test_engine_columns_refused(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 200; it++) {
		uint32_t d[3] = { 1 + rnd(3), 1 + rnd(50), 1 + rnd(7) };
		uint64_t st[3];

		if (it % 2) {
			one_case(3, d, 1, NULL, rnd(4) == 0, VNPU_ENG_SOFTMAX_AVX2);
			continue;
		}
		d[2] = 8 + rnd(20);
		st[2] = 2;
		st[1] = 2ull * d[2];
		st[0] = st[1] * d[1];
		one_case(3, d, 1, st, false, VNPU_ENG_SOFTMAX_AVX2);
	}
}

static int setup(void **state)
{
	(void)state;
	flat_init(&f, 64u << 20);
	return f.mem ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(f.mem);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exp_accuracy),
		cmocka_unit_test(test_reference_definition),
		cmocka_unit_test(test_engine_rows),
		cmocka_unit_test(test_engine_columns),
		cmocka_unit_test(test_engine_short_rows),
		cmocka_unit_test(test_engine_columns_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
