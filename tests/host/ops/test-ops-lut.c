// SPDX-License-Identifier: MIT
/*
 * LUT's vector kernel (elt_lut_avx2() in ops/vnpu_engine_elt.c): the
 * engine against the reference byte for byte over the whole memory, for
 * INT8 and UINT8 X, random tables, rows from 1 to a few thousand bytes
 * (every code, ragged tails), in place and apart, a strided T, and
 * layouts the kernel must leave to the scalar loop; each case's path is
 * asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

#define MEM_SIZE	(4u << 20)

static struct flat mem, ref;
static uint64_t rs = 0x452821e638d01377ull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

/* Returns the engine's path.  @xgap: X's elements that far apart plus one. */
static enum vnpu_eng_path one(uint8_t xdt, uint8_t ydt, int r, const uint32_t *d,
			      bool in_place, uint32_t xgap, uint32_t tstride)
{
	struct vnpu_cmd_compute c;
	uint64_t nx = 1, ny = 1, used, i, cycles;
	uint32_t tdim = VNPU_LUT_ENTRIES;
	int k;

	cmd_init(&c, VNPU_OP_LUT);
	c.t[0] = tdesc(xdt, r, d);
	tquant(&c.t[0], 0.5f, 3);
	c.t[3] = tdesc(ydt, r, d);
	tquant(&c.t[3], 0.125f, -7 + (ydt == VNPU_DT_UINT8 ? 20 : 0));
	c.t[1] = tdesc(ydt, 1, &tdim);
	tquant(&c.t[1], 0.125f, c.t[3].zero_point);
	if (tstride > 1) {
		c.t[1].flags = VNPU_TENSOR_STRIDED;
		c.t[1].strides[0] = tstride;
	}
	for (k = 0; k < r; k++)
		ny *= d[k];
	nx = ny;
	if (xgap) {
		/* X's elements @xgap + 1 apart: no unit-stride row. */
		uint64_t st = xgap + 1;

		c.t[0].flags = VNPU_TENSOR_STRIDED;
		for (k = r - 1; k >= 0; k--) {
			c.t[0].strides[k] = st;
			st *= d[k];
		}
		nx = st;
	}
	flat_reset(&mem);
	c.t[0].va = flat_alloc(&mem, nx);
	c.t[1].va = flat_alloc(&mem, (uint64_t)VNPU_LUT_ENTRIES * (tstride ? tstride : 1));
	if (in_place && !xgap && xdt == ydt) {
		c.t[3].va = c.t[0].va;
	} else {
		in_place = false;
		c.t[3].va = flat_alloc(&mem, ny);
	}
	assert_true(c.t[0].va && c.t[1].va && c.t[3].va);
	used = mem.next + 128;
	for (i = 0; i < used; i++)
		mem.mem[i] = (uint8_t)rnd(256);
	memcpy(ref.mem, mem.mem, used);
	assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), 0);
	assert_int_equal(flat_ref(&ref, &c), 0);
	if (memcmp(mem.mem, ref.mem, used)) {
		for (i = 0; i < used && mem.mem[i] == ref.mem[i]; i++)
			;
		fprintf(stderr, "lut %u->%u rank %d in_place %d gap %u: byte %llu differs\n",
			xdt, ydt, r, in_place, xgap, (unsigned long long)i);
		fail();
	}
	return flat_engine.res.path;
}

static void test_lut_vector(void **state)
{
	static const uint8_t dts[2] = { VNPU_DT_INT8, VNPU_DT_UINT8 };
	unsigned int t, vec = 0;

	(void)state;
	for (t = 0; t < 1200; t++) {
		uint32_t d[3] = { 1 + rnd(3), 1 + rnd(4), 1 + rnd(t % 3 ? 200 : 5000) };
		uint8_t xdt = dts[rnd(2)], ydt = dts[rnd(2)];
		uint32_t gap = rnd(4) ? 0 : 1 + rnd(3);
		enum vnpu_eng_path p;

		p = one(xdt, ydt, 3, d, rnd(3) == 0, gap, rnd(4) ? 1 : 1 + rnd(3));
		if (!__builtin_cpu_supports("avx2"))
			assert_int_equal(p, VNPU_ENG_LUT);
		else if (gap)
			assert_int_equal(p, VNPU_ENG_LUT);
		else
			/* Dense: one collapsed row of all the elements. */
			assert_int_equal(p, (uint64_t)d[0] * d[1] * d[2] >= 32 ?
					    VNPU_ENG_LUT_AVX2 : VNPU_ENG_LUT);
		vec += p == VNPU_ENG_LUT_AVX2;
	}
	printf("# %u of 1200 cases took the vector kernel\n", vec);
	if (__builtin_cpu_supports("avx2"))
		assert_true(vec > 600);
}

static int setup(void **state)
{
	(void)state;
	flat_init(&mem, MEM_SIZE);
	flat_init(&ref, MEM_SIZE);
	return mem.mem && ref.mem ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(mem.mem);
	free(ref.mem);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lut_vector),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
