// SPDX-License-Identifier: MIT
/*
 * The graph compiler at scale: a 100,000-node chain, a value read by
 * 10,000 nodes, 10,000 values live at once, and a 20,000-node chain of
 * 4-D BATCHNORMs (each rewritten into two layout-free ops, whose NHWC
 * layout the graph's output undoes from the end back to the start).
 * The arena plans are
 * checked by a checker of their own (nothing from the planner's
 * bookkeeping): no two values live at the same step share a byte, and
 * every value lies inside the arena.  The compiled graphs run on the CPU
 * and their results are checked against arithmetic done here, so a value
 * overwritten while still live shows up as a wrong number.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "graph_compile.h"

#define CHAIN	100000u
#define WIDE	10000u
#define BN_CHAIN	20000u

/* ---- The checker -------------------------------------------------------- */

struct span {
	int64_t first, last;
	uint64_t off, bytes;
};

static int span_by_first(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Every pair of lifetimes that share a step, found by sorting on the first
 * step (a pair overlaps when the later one starts before the earlier one
 * ends), must be disjoint in the arena; every value ends inside it.
 */
static void check_plan(const struct lifetime *want, size_t n,
		       const struct lifetime *got, uint64_t total)
{
	struct span *s = calloc(n ? n : 1, sizeof(*s));
	uint32_t *seen = calloc(n ? n : 1, sizeof(*seen));
	size_t i, j, pairs = 0;

	assert_non_null(s);
	assert_non_null(seen);
	/* The plan is for the lifetimes asked for: the same roots, once each. */
	for (i = 0; i < n; i++) {
		uint32_t r = got[i].root;

		assert_true(r < n);
		assert_int_equal(seen[r]++, 0);
		assert_int_equal(got[i].first, want[r].first);
		assert_int_equal(got[i].last, want[r].last);
		assert_int_equal(got[i].bytes, want[r].bytes);
		assert_int_equal(got[i].offset % 64, 0);
		assert_true(got[i].offset + got[i].bytes <= total);
		s[i] = (struct span){ got[i].first, got[i].last, got[i].offset, got[i].bytes };
	}
	qsort(s, n, sizeof(*s), span_by_first);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n && s[j].first <= s[i].last; j++) {
			/* an empty value shares no byte with anything */
			bool apart = !s[i].bytes || !s[j].bytes ||
				     s[i].off + s[i].bytes <= s[j].off ||
				     s[j].off + s[j].bytes <= s[i].off;

			if (!apart)
				fail_msg("steps [%lld,%lld] at %llu+%llu and [%lld,%lld] at %llu+%llu overlap",
					 (long long)s[i].first, (long long)s[i].last,
					 (unsigned long long)s[i].off, (unsigned long long)s[i].bytes,
					 (long long)s[j].first, (long long)s[j].last,
					 (unsigned long long)s[j].off, (unsigned long long)s[j].bytes);
			pairs++;
		}
	print_message("# %zu values, %zu live pairs, arena %llu bytes\n", n, pairs,
		      (unsigned long long)total);
	free(s);
	free(seen);
}

/* Plan @want (root i at index i) and check the result. */
static uint64_t plan_and_check(const struct lifetime *want, size_t n)
{
	struct lifetime *lt = malloc((n ? n : 1) * sizeof(*lt));
	uint64_t total = 0;

	assert_non_null(lt);
	memcpy(lt, want, n * sizeof(*lt));
	assert_int_equal(npu__plan_arena(lt, n, &total), 0);
	check_plan(want, n, lt, total);
	free(lt);
	return total;
}

static uint64_t sizes(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1 + ((*seed >> 8) % 4096);
}

static uint64_t aligned(uint64_t b)
{
	return (b + 63) / 64 * 64;
}

/* ---- Plans -------------------------------------------------------------- */

/*
 * Values of up to 2 MiB never cross a 2 MiB boundary of the arena (the
 * device's huge pages, graph_plan.c), whatever their sizes and
 * lifetimes; bigger ones may.  Sizes up to 3 MiB, random windows.
 */
static void test_plan_runs(void **state)
{
	const uint64_t run = 2u << 20;
	const size_t n = 300;
	struct lifetime *want = calloc(n, sizeof(*want));
	struct lifetime *lt = malloc(n * sizeof(*lt));
	unsigned int seed = 7;
	uint64_t total = 0;
	size_t i, crossing = 0;

	(void)state;
	assert_non_null(want);
	assert_non_null(lt);
	for (i = 0; i < n; i++) {
		int64_t first, len;

		seed = seed * 1103515245u + 12345u;
		first = (int64_t)((seed >> 8) % 200) - 1;
		seed = seed * 1103515245u + 12345u;
		len = (int64_t)((seed >> 8) % 8);
		seed = seed * 1103515245u + 12345u;
		want[i] = (struct lifetime){ .root = (uint32_t)i, .first = first,
					     .last = first + len,
					     .bytes = 1 + (seed >> 4) % (3u << 20) };
	}
	memcpy(lt, want, n * sizeof(*lt));
	assert_int_equal(npu__plan_arena(lt, n, &total), 0);
	check_plan(want, n, lt, total);
	for (i = 0; i < n; i++) {
		bool crosses = lt[i].offset / run !=
			       (lt[i].offset + lt[i].bytes - 1) / run;

		if (crosses && lt[i].bytes <= run)
			fail_msg("a value of %llu bytes at %llu crosses a 2 MiB boundary",
				 (unsigned long long)lt[i].bytes,
				 (unsigned long long)lt[i].offset);
		crossing += crosses;
	}
	print_message("# %zu values, %zu of them (all over 2 MiB) across a boundary\n",
		      n, crossing);
	free(want);
	free(lt);
}

/* Value i written by step i, read by step i + 1 (and one by i + 2). */
static void test_plan_chain(void **state)
{
	struct lifetime *want = calloc(CHAIN, sizeof(*want));
	unsigned int seed = 1;
	uint64_t total, biggest = 0;
	size_t i;

	(void)state;
	assert_non_null(want);
	for (i = 0; i < CHAIN; i++) {
		want[i] = (struct lifetime){ .root = (uint32_t)i, .first = (int64_t)i,
					     .last = (int64_t)i + 1 + (i % 3 == 0),
					     .bytes = sizes(&seed) };
		if (aligned(want[i].bytes) > biggest)
			biggest = aligned(want[i].bytes);
	}
	total = plan_and_check(want, CHAIN);
	/* at most three values live at once: memory is reused, not stacked */
	assert_true(total <= 8 * biggest);
	free(want);
}

/*
 * WIDE values live from their step to the end (all of them at once, as
 * the branches of a graph summed at the end), between short-lived ones.
 */
static void test_plan_wide(void **state)
{
	size_t n = 2 * WIDE, i;
	struct lifetime *want = calloc(n, sizeof(*want));
	unsigned int seed = 2;
	uint64_t total, live = 0;

	(void)state;
	assert_non_null(want);
	for (i = 0; i < n; i++) {
		bool longlived = i % 2 == 0;

		want[i] = (struct lifetime){ .root = (uint32_t)i, .first = (int64_t)i,
					     .last = longlived ? (int64_t)n : (int64_t)i + 1,
					     .bytes = sizes(&seed) };
		if (longlived)
			live += want[i].bytes;
	}
	total = plan_and_check(want, n);
	assert_true(total >= live);
	free(want);
}

/* Random lifetimes, short and long, including graph inputs (step -1). */
static void test_plan_random(void **state)
{
	static const int64_t spans[] = { 2, 50, 5000 };
	size_t n = 20000, i, k;
	struct lifetime *want = calloc(n, sizeof(*want));
	unsigned int seed = 3;

	(void)state;
	assert_non_null(want);
	for (k = 0; k < sizeof(spans) / sizeof(spans[0]); k++) {
		for (i = 0; i < n; i++) {
			int64_t first = (int64_t)(sizes(&seed) * 5) - 1;

			want[i] = (struct lifetime){ .root = (uint32_t)i, .first = first,
						     .last = first + (int64_t)(sizes(&seed) %
									(uint64_t)spans[k]),
						     .bytes = sizes(&seed) % 7 ? sizes(&seed) : 0 };
		}
		plan_and_check(want, n);
	}
	free(want);
}

/* ---- Compiled graphs ---------------------------------------------------- */

static uint32_t value(struct npu_graph *g, const char *name, uint32_t flags,
		      const void *data, uint32_t rank, const uint32_t *dims)
{
	struct npu_value_desc d = { .size = sizeof(d), .name = name,
				    .dtype = NPU_DTYPE_FP32, .rank = rank,
				    .flags = flags, .data = data };
	uint32_t id;

	memcpy(d.dims, dims, rank * sizeof(*dims));
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

/* [1, elems] */
static uint32_t val(struct npu_graph *g, const char *name, uint32_t flags,
		    const void *data, uint32_t elems)
{
	return value(g, name, flags, data, 2, (const uint32_t[]){ 1, elems });
}

static void node(struct npu_graph *g, const char *name, enum npu_eltwise_kind kind,
		 uint32_t a, uint32_t b, uint32_t out)
{
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_ELTWISE,
				   .eltwise.kind = kind };
	struct npu_node_desc d = { .size = sizeof(d), .name = name,
				   .kind = NPU_NODE_OP, .op = &p, .num_inputs = 2,
				   .inputs = (uint32_t[]){ a, b }, .output = out };
	uint32_t id;

	assert_int_equal(npu_graph_add_node(g, &d, &id), 0);
}

static void run(struct npu_graph *g, uint32_t vx, uint32_t vy, float *x, float *y)
{
	struct npu_runtime *rt;

	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	print_message("# arena %llu bytes\n", (unsigned long long)npu_runtime_arena_bytes(rt));
	npu_runtime_free(rt);
}

/*
 * v[i+1] = v[i] - v[i-1] from v[0] = x, v[1] = 2x: three values live at
 * each step, and the sequence repeats every six steps exactly in floats
 * (x, 2x, x, -x, -2x, -x, x, ...).
 */
static void test_compile_chain(void **state)
{
	static const float period[6] = { 1, 2, 1, -1, -2, -1 };
	struct npu_graph *g;
	uint32_t vx, vtwo, prev, cur;
	float two[4] = { 2, 2, 2, 2 }, x[4] = { 1, -3, 0.5f, 7 }, y[4];
	char name[32];
	size_t i;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_VALUE_INPUT, NULL, 4);
	vtwo = val(g, "two", 0, two, 4);
	prev = vx;
	cur = val(g, "v1", 0, NULL, 4);
	node(g, "double", NPU_ELTWISE_MUL, vx, vtwo, cur);
	for (i = 2; i <= CHAIN; i++) {
		uint32_t nxt;

		snprintf(name, sizeof(name), "v%zu", i);
		nxt = val(g, name, i == CHAIN ? NPU_VALUE_OUTPUT : 0, NULL, 4);
		node(g, name, NPU_ELTWISE_SUB, cur, prev, nxt);
		prev = cur;
		cur = nxt;
	}
	run(g, vx, cur, x, y);
	for (i = 0; i < 4; i++)
		assert_true(y[i] == period[CHAIN % 6] * x[i]);
	npu_graph_free(g);
}

/*
 * x read by WIDE nodes, b[i] = x + i % 8, each a graph output and all of
 * them live until an adder chain sums them: WIDE * x + WIDE / 8 * 28,
 * exact in floats for these integers.  The WIDE + 2 inputs and outputs
 * are bound in one call, in reverse order.
 */
static void test_compile_wide(void **state)
{
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, *b = calloc(WIDE, sizeof(*b)), *ids = calloc(WIDE + 2, sizeof(*ids));
	uint32_t acc, first_c = 0;
	float *c = calloc(WIDE, sizeof(*c)), *bo = calloc(WIDE, sizeof(*bo));
	float x[1] = { 3 }, y[1];
	void **ptrs = calloc(WIDE + 2, sizeof(*ptrs));
	char name[32];
	size_t i;

	(void)state;
	assert_true(b && ids && c && bo && ptrs);
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_VALUE_INPUT, NULL, 1);
	for (i = 0; i < WIDE; i++) {
		uint32_t vc;

		c[i] = (float)(i % 8);
		snprintf(name, sizeof(name), "c%zu", i);
		vc = val(g, name, 0, &c[i], 1);
		if (!i)
			first_c = vc;
		snprintf(name, sizeof(name), "b%zu", i);
		b[i] = val(g, name, NPU_VALUE_OUTPUT, NULL, 1);
		node(g, name, NPU_ELTWISE_ADD, vx, vc, b[i]);
	}
	acc = b[0];
	for (i = 1; i < WIDE; i++) {
		uint32_t nxt;

		snprintf(name, sizeof(name), "s%zu", i);
		nxt = val(g, name, i == WIDE - 1 ? NPU_VALUE_OUTPUT : 0, NULL, 1);
		node(g, name, NPU_ELTWISE_ADD, acc, b[i], nxt);
		acc = nxt;
	}
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	for (i = 0; i < WIDE; i++) {
		ids[WIDE - 1 - i] = b[i];
		ptrs[WIDE - 1 - i] = &bo[i];
	}
	ids[WIDE] = acc;
	ptrs[WIDE] = y;
	ids[WIDE + 1] = vx;
	ptrs[WIDE + 1] = x;
	assert_int_equal(npu_runtime_setup(rt, WIDE + 2, ids, ptrs), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	print_message("# arena %llu bytes\n", (unsigned long long)npu_runtime_arena_bytes(rt));
	for (i = 0; i < WIDE; i++)
		assert_true(bo[i] == x[0] + c[i]);
	assert_true(y[0] == (float)WIDE * x[0] + WIDE / 8 * 28);
	/* a constant's id, last of many: refused */
	ids[WIDE + 1] = first_c;
	assert_int_equal(npu_runtime_setup(rt, WIDE + 2, ids, ptrs), -EINVAL);
	npu_runtime_free(rt);
	npu_graph_free(g);
	free(b);
	free(ids);
	free(c);
	free(bo);
	free(ptrs);
}

/*
 * BATCHNORM with scale -1, mean 0, var 1 and epsilon 0 negates exactly:
 * BN_CHAIN of them leave x as it was (an even count).
 */
static void test_compile_bn_chain(void **state)
{
	static const uint32_t dims[4] = { 1, 2, 2, 2 };
	float scale[2] = { -1, -1 }, zero[2] = { 0, 0 }, one[2] = { 1, 1 };
	float x[8] = { 1, -2, 3, -4, 5.5f, -6, 7, 0.25f }, y[8];
	struct npu_graph *g;
	uint32_t vx, vs, vb, vm, vv, cur;
	char name[32];
	size_t i;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = value(g, "x", NPU_VALUE_INPUT, NULL, 4, dims);
	vs = value(g, "scale", 0, scale, 1, &dims[1]);
	vb = value(g, "bias", 0, zero, 1, &dims[1]);
	vm = value(g, "mean", 0, zero, 1, &dims[1]);
	vv = value(g, "var", 0, one, 1, &dims[1]);
	cur = vx;
	for (i = 0; i < BN_CHAIN; i++) {
		struct npu_node_desc bn = { .size = sizeof(bn), .name = name,
					    .kind = NPU_NODE_BATCHNORM, .num_inputs = 5,
					    .inputs = (uint32_t[]){ cur, vs, vb, vm, vv } };
		uint32_t id;

		snprintf(name, sizeof(name), "bn%zu", i);
		bn.output = value(g, name, i == BN_CHAIN - 1 ? NPU_VALUE_OUTPUT : 0, NULL, 4, dims);
		assert_int_equal(npu_graph_add_node(g, &bn, &id), 0);
		cur = bn.output;
	}
	run(g, vx, cur, x, y);
	assert_memory_equal(x, y, sizeof(x));
	npu_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_chain),
		cmocka_unit_test(test_plan_runs),
		cmocka_unit_test(test_plan_wide),
		cmocka_unit_test(test_plan_random),
		cmocka_unit_test(test_compile_chain),
		cmocka_unit_test(test_compile_wide),
		cmocka_unit_test(test_compile_bn_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
