// SPDX-License-Identifier: MIT
/*
 * Transposing COPY commands (ONNX Transpose as libnpu lowers it: Y dense
 * or row-padded, X a permuted view of a dense tensor), engine against
 * reference byte for byte over the whole memory, gaps included, for
 * 1-, 2- and 4-byte elements.  The shapes are drawn so that each of the
 * engine's transposing kernels (ops/vnpu_engine_move.c) gets cases, and
 * each case's kernel family is asserted from the run's path record:
 *
 * - 8 x 8 register blocks, both loop orders (strides of powers of two
 *   on either side), with ragged edges;
 * - 3-channel pixels into planes and back, bytes and 4-byte elements;
 * - fewer than 8 planes of 4-byte elements gathered from pixels;
 * - Y in X's memory order (the dims permuted, the layout kept): one
 *   block moved whole.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

#define MEM_SIZE	(24u << 20)

static struct flat mem, ref;
static uint64_t rs = 0xb7e151628aed2a6bull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

static const uint8_t dts[] = { VNPU_DT_INT8, VNPU_DT_UINT8, VNPU_DT_FP16, VNPU_DT_FP32,
			       VNPU_DT_INT32 };

/*
 * Y = X transposed by @perm (Y's dim d is X's dim perm[d]), X dense of
 * dims @xd; Y's rows padded by up to @pad elements.  Returns the path
 * the engine took.
 */
static enum vnpu_eng_path one(uint8_t dt, int r, const uint32_t *xd, const int *perm,
			      uint32_t pad, bool same_layout)
{
	struct vnpu_cmd_compute c;
	uint32_t yd[VNPU_MAX_RANK];
	uint64_t xst[VNPU_MAX_RANK], n = 1, ny, used, i, cycles;
	uint32_t es = vnpu_dtype_size(dt);
	int d;

	xst[r - 1] = 1;
	for (d = r - 2; d >= 0; d--)
		xst[d] = xst[d + 1] * xd[d + 1];
	for (d = 0; d < r; d++) {
		yd[d] = xd[perm[d]];
		n *= xd[d];
	}
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(dt, r, yd);
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	for (d = 0; d < r; d++)
		c.t[0].strides[d] = xst[perm[d]];
	c.t[3] = tdesc(dt, r, yd);
	ny = n;
	if (same_layout) {
		/* Y keeps X's memory order under the permuted dims: one block. */
		c.t[3].flags = VNPU_TENSOR_STRIDED;
		for (d = 0; d < r; d++)
			c.t[3].strides[d] = c.t[0].strides[d];
	} else if (pad) {
		uint64_t st = 1;

		c.t[3].flags = VNPU_TENSOR_STRIDED;
		for (d = r - 1; d >= 0; d--) {
			c.t[3].strides[d] = st;
			st = st * yd[d] + (d == r - 1 ? rnd(pad + 1) : 0);
		}
		ny = st;
	}
	if (dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8) {
		tquant(&c.t[0], 0.25f, dt == VNPU_DT_INT8 ? -3 : 17);
		tquant(&c.t[3], 0.25f, dt == VNPU_DT_INT8 ? -3 : 17);
	}
	flat_reset(&mem);
	c.t[0].va = flat_alloc(&mem, n * es);
	c.t[3].va = flat_alloc(&mem, ny * es);
	assert_true(c.t[0].va && c.t[3].va);
	used = mem.next + 256;
	for (i = 0; i < used; i++)
		mem.mem[i] = (uint8_t)rnd(256);
	memcpy(ref.mem, mem.mem, used);
	assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), 0);
	assert_int_equal(flat_ref(&ref, &c), 0);
	if (memcmp(mem.mem, ref.mem, used)) {
		for (i = 0; i < used && mem.mem[i] == ref.mem[i]; i++)
			;
		fprintf(stderr, "dtype %u rank %d perm", dt, r);
		for (d = 0; d < r; d++)
			fprintf(stderr, " %d(%u)", perm[d], xd[perm[d]]);
		fprintf(stderr, ": byte %llu differs\n", (unsigned long long)i);
		fail();
	}
	return flat_engine.res.path;
}

static void shuffle(int *perm, int r)
{
	int i;

	for (i = 0; i < r; i++)
		perm[i] = i;
	for (i = r - 1; i > 0; i--) {
		int j = (int)rnd((uint32_t)i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Random permutations of random shapes: blocks with ragged edges. */
static void test_random_perms(void **state)
{
	unsigned int t, tiled = 0;

	(void)state;
	for (t = 0; t < 1500; t++) {
		int r = 2 + (int)rnd(4), perm[VNPU_MAX_RANK], d;
		uint32_t xd[VNPU_MAX_RANK];
		uint8_t dt = dts[rnd(sizeof(dts))];

		for (d = 0; d < r; d++)
			xd[d] = 1 + rnd(r > 3 ? 12 : 40);
		/* Powers of two: rows a cache set apart on either side. */
		if (rnd(4) == 0)
			for (d = 0; d < r; d++)
				xd[d] = 1u << rnd(r > 3 ? 4 : 7);
		shuffle(perm, r);
		tiled += one(dt, r, xd, perm, rnd(3) ? 0 : 9, false) == VNPU_ENG_TRANSPOSE;
	}
	printf("# %u of 1500 cases took the transposing tiles\n", tiled);
	assert_true(tiled > 500);
}

/* NHWC <-> NCHW of 1..8 channels, every element size, odd widths. */
static void test_pixels_planes(void **state)
{
	unsigned int t;

	(void)state;
	for (t = 0; t < 800; t++) {
		uint32_t xd[4] = { 1 + rnd(2), 1 + rnd(20), 1 + rnd(70), 1 + rnd(8) };
		static const int to_nchw[4] = { 0, 3, 1, 2 }, to_nhwc[4] = { 0, 2, 3, 1 };
		uint8_t dt = dts[rnd(sizeof(dts))];
		enum vnpu_eng_path p;
		uint32_t tmp;

		if (t % 2)
			xd[3] = 3;	/* RGB: the shuffle kernels */
		if (xd[2] < 2)
			xd[2] = 2;
		if (t % 4 < 2) {
			p = one(dt, 4, xd, to_nchw, rnd(2) ? 0 : 5, false);
		} else {
			/* Planes into pixels: X is [N, C, H, W]. */
			tmp = xd[3];
			xd[3] = xd[2];
			xd[2] = xd[1];
			xd[1] = tmp;
			p = one(dt, 4, xd, to_nhwc, rnd(2) ? 0 : 5, false);
		}
		/* One channel, or one pixel per row, is no transposition. */
		if ((t % 4 < 2 ? xd[3] : xd[1]) > 1 && xd[1] * xd[2] > 1)
			assert_int_equal(p, VNPU_ENG_TRANSPOSE);
	}
}

/*
 * Y in X's own memory order under the permuted dims (libnpu's CPU path
 * lowers Transpose so): the copy is one dense block, moved whole.
 */
static void test_same_layout(void **state)
{
	unsigned int t;

	(void)state;
	for (t = 0; t < 300; t++) {
		int r = 1 + (int)rnd(5), perm[VNPU_MAX_RANK], d;
		uint32_t xd[VNPU_MAX_RANK];

		for (d = 0; d < r; d++)
			xd[d] = 1 + rnd(r > 3 ? 8 : 30);
		shuffle(perm, r);
		assert_int_equal(one(dts[rnd(sizeof(dts))], r, xd, perm, 0, true), VNPU_ENG_COPY);
	}
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
		cmocka_unit_test(test_random_perms),
		cmocka_unit_test(test_pixels_planes),
		cmocka_unit_test(test_same_layout),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
