// SPDX-License-Identifier: MIT
/*
 * Where npu_group's automatic pipeline cuts go (graph.h, "One graph
 * split over several devices"), over CPU copies.  A stage's cost is the
 * cycles the device's timing model (ops.rst, "Timing model") charges
 * for the commands its nodes compile to: checked against that formula
 * for a GEMM and an EXP of known shapes.  For random chains of GEMMs,
 * fused GEMM+ReLU pairs, EXPs and residual adds, the running cost at
 * every position is read back from groups cut there by hand, and each
 * automatic cut must be within 1/32 of the total of the best position
 * that does not split a fused pair (the documented tolerance), never
 * between a fused pair, crossing the fewest bytes within that and of
 * those the nearest its target, and every output the bytes one runtime
 * of the whole graph gives.
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
#include "vnpu/vnpu_hw.h"
#include "vnpu/vnpu_hw_ops.h"

#define ROWS		8
#define MAX_NODES	14
#define MAX_VALUES	(2 * MAX_NODES + 2)
#define GRAPHS		24
#define REQUESTS	3

static unsigned int seed = 7;

static unsigned int rnd(unsigned int n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 8) % n;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

struct chain {
	struct npu_graph *g;
	uint32_t x, y;
	size_t nn;
	uint32_t width[MAX_VALUES];	/* of each value, by id */
	bool unsafe[MAX_NODES + 1];	/* a cut before node p splits a fused pair */
	float *weights[MAX_NODES];
};

static uint32_t value(struct chain *c, uint32_t width, uint32_t flags)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = "v";
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 2;
	d.dims[0] = ROWS;
	d.dims[1] = width;
	d.flags = flags;
	assert_int_equal(npu_graph_add_value(c->g, &d, &id), 0);
	assert_true(id < MAX_VALUES);
	c->width[id] = width;
	return id;
}

static uint32_t add_node(struct chain *c, const struct npu_op_params *op, size_t nin,
			 const uint32_t *in, uint32_t out)
{
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	uint32_t id;

	n.name = "n";
	n.kind = NPU_NODE_OP;
	n.op = op;
	n.num_inputs = (uint32_t)nin;
	n.inputs = in;
	n.output = out;
	assert_int_equal(npu_graph_add_node(c->g, &n, &id), 0);
	assert_int_equal(id, c->nn);
	c->nn++;
	return id;
}

/* y = x W; W's values small enough that EXPs after it stay finite. */
static uint32_t gemm(struct chain *c, uint32_t x, uint32_t width, uint32_t out_flags)
{
	struct npu_op_params op = { .size = sizeof(op), .kind = NPU_OP_GEMM };
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t in = c->width[x], w, y, i;
	float *data = malloc(sizeof(float) * in * width);

	assert_non_null(data);
	for (i = 0; i < in * width; i++)
		data[i] = ((float)rnd(256) / 128.0f - 1.0f) / (float)in;
	d.name = "w";
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 2;
	d.dims[0] = in;
	d.dims[1] = width;
	d.data = data;
	assert_int_equal(npu_graph_add_value(c->g, &d, &w), 0);
	/* the graph keeps its own copy */
	c->weights[c->nn] = data;
	y = value(c, width, out_flags);
	add_node(c, &op, 2, (uint32_t[]){ x, w }, y);
	return y;
}

static uint32_t activation(struct chain *c, uint32_t x, enum npu_activation act,
			   uint32_t out_flags)
{
	struct npu_op_params op = { .size = sizeof(op), .kind = NPU_OP_ACTIVATION, .act = act };
	uint32_t y = value(c, c->width[x], out_flags);

	add_node(c, &op, 1, &x, y);
	return y;
}

static uint32_t residual(struct chain *c, uint32_t a, uint32_t b, uint32_t out_flags)
{
	struct npu_op_params op = { .size = sizeof(op), .kind = NPU_OP_ELTWISE,
				    .eltwise.kind = NPU_ELTWISE_ADD };
	uint32_t y = value(c, c->width[a], out_flags);

	add_node(c, &op, 2, (uint32_t[]){ a, b }, y);
	return y;
}

/*
 * A random chain of at least @min nodes: blocks of a GEMM (of a random
 * width, cheap or expensive), a GEMM whose only reader is a ReLU (which
 * compile merges into it), an EXP (special-function lanes, never
 * merged) or an add of an earlier value of the same width.  @uniform:
 * every value of one width, so that many cuts cross as many bytes.
 */
static void make_chain(struct chain *c, size_t min, bool uniform)
{
	static const uint32_t widths[] = { 8, 16, 32, 64, 128 };
	uint32_t cur, seen[MAX_VALUES], nseen = 0;

	memset(c, 0, sizeof(*c));
	assert_int_equal(npu_graph_create(&c->g), 0);
	c->x = cur = value(c, uniform ? 64 : widths[rnd(5)], NPU_VALUE_INPUT);
	seen[nseen++] = cur;
	/* room for a block of two and the last node */
	while (c->nn + 3 <= MAX_NODES) {
		unsigned int kind = rnd(4);
		uint32_t k, other = UINT32_MAX;

		if (kind == 3)
			for (k = 0; k + 1 < nseen; k++)
				if (c->width[seen[k]] == c->width[cur] && rnd(2))
					other = seen[k];
		if (kind == 0 || (kind == 3 && other == UINT32_MAX)) {
			cur = gemm(c, cur, uniform ? 64 : widths[rnd(5)], 0);
		} else if (kind == 1) {
			cur = gemm(c, cur, uniform ? 64 : widths[rnd(5)], 0);
			c->unsafe[c->nn] = true;	/* between the GEMM and its ReLU */
			cur = activation(c, cur, NPU_ACT_RELU, 0);
		} else if (kind == 2) {
			cur = activation(c, cur, NPU_ACT_EXP, 0);
		} else {
			cur = residual(c, cur, other, 0);
		}
		seen[nseen++] = cur;
		if (c->nn >= min && rnd(3) == 0)
			break;
	}
	/* a plain last node, so the graph output is not a merged pair's */
	c->y = value(c, c->width[cur], NPU_VALUE_OUTPUT);
	add_node(c, &(struct npu_op_params){ .size = sizeof(struct npu_op_params),
					     .kind = NPU_OP_ACTIVATION, .act = NPU_ACT_ABS },
		 1, &cur, c->y);
}

static void free_chain(struct chain *c)
{
	size_t i;

	npu_graph_free(c->g);
	for (i = 0; i < MAX_NODES; i++)
		free(c->weights[i]);
}

static int group(struct npu_graph *g, size_t stages, const uint32_t *cuts,
		 struct npu_group **out)
{
	struct npu_context *none[3] = { NULL };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;

	o.flags = NPU_GROUP_PIPELINE;
	o.max_requests = 4;
	o.num_cuts = cuts ? (uint32_t)stages - 1 : 0;
	o.cuts = cuts;
	return npu_group_create(g, none, stages, &o, out);
}

/* A GEMM then an EXP, cut between them: each stage costs what ops.rst's formula says. */
static void test_cost_is_the_timing_model(void **state)
{
	struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT, s1 = NPU_GROUP_STAGE_INIT;
	struct npu_group *grp;
	struct chain c;
	uint32_t h;
	/* fp32: a quarter of the int8 MAC rate */
	const uint64_t k = 64, n = 128, macs = ROWS * k * n, rate = VNPU_MODEL_MACS_PER_CYCLE / 4;
	uint64_t gemm_cycles, exp_cycles;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(npu_graph_create(&c.g), 0);
	c.x = value(&c, (uint32_t)k, NPU_VALUE_INPUT);
	h = gemm(&c, c.x, (uint32_t)n, 0);
	c.y = activation(&c, h, NPU_ACT_EXP, NPU_VALUE_OUTPUT);
	assert_int_equal(group(c.g, 2, (uint32_t[]){ 1 }, &grp), 0);
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
	/* every operand's bytes move once: X, W and Y */
	gemm_cycles = max_u64(div_up(macs, rate),
			      div_up(4 * (ROWS * k + k * n + ROWS * n),
				     VNPU_MODEL_DRAM_BYTES_PER_CYCLE));
	/* EXP on the special-function lanes, or reading and writing its bytes */
	exp_cycles = max_u64(div_up(ROWS * n, VNPU_MODEL_SFU_ELEMS_PER_CYCLE),
			     div_up(2 * 4 * ROWS * n, VNPU_MODEL_DRAM_BYTES_PER_CYCLE));
	assert_int_equal(s0.cost, gemm_cycles);
	assert_int_equal(s1.cost, exp_cycles);
	assert_int_equal(s0.macs, macs);
	npu_group_free(grp);
	free_chain(&c);
}

/*
 * @prefix[p]: the cost of nodes 0..p-1, and @cross[p] the bytes handed
 * on, from a group cut by hand before p.
 */
static void prefix_costs(struct chain *c, uint64_t *prefix, uint64_t *cross)
{
	uint64_t total = 0;
	uint32_t p;

	prefix[0] = 0;
	for (p = 1; p < c->nn; p++) {
		struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT, s1 = NPU_GROUP_STAGE_INIT;
		struct npu_group *grp;

		assert_int_equal(group(c->g, 2, &p, &grp), 0);
		assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
		assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
		npu_group_free(grp);
		prefix[p] = s0.cost;
		cross[p] = s0.handoff_bytes;
		/* a pair split by hand runs as two commands: another total */
		if (!c->unsafe[p]) {
			if (total)
				assert_int_equal(s0.cost + s1.cost, total);
			total = s0.cost + s1.cost;
		}
	}
	prefix[c->nn] = total;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Every request through @grp gives what @rt (the whole graph) gives. */
static void same_bytes(struct chain *c, struct npu_group *grp, struct npu_runtime *rt)
{
	size_t in = (size_t)ROWS * c->width[c->x], out = (size_t)ROWS * c->width[c->y], i;
	float *x = malloc(REQUESTS * in * sizeof(float));
	float *y = malloc(REQUESTS * out * sizeof(float));
	float *want = malloc(out * sizeof(float));
	uint64_t t[REQUESTS];
	unsigned int r;

	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(want);
	for (i = 0; i < REQUESTS * in; i++)
		x[i] = (float)rnd(1024) / 256.0f - 2.0f;
	for (r = 0; r < REQUESTS; r++)
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ c->x, c->y },
						  (void *[]){ x + r * in, y + r * out }, &t[r]), 0);
	for (r = 0; r < REQUESTS; r++) {
		assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, NULL), 0);
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ c->x, c->y },
						   (void *[]){ x + r * in, want }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
		assert_memory_equal(y + r * out, want, out * sizeof(float));
	}
	free(x);
	free(y);
	free(want);
}

static void check_auto(struct chain *c, const uint64_t *prefix, const uint64_t *cross,
		       size_t stages, struct npu_runtime *rt)
{
	struct npu_group *grp;
	uint64_t total = prefix[c->nn], sum = 0;
	uint32_t start[4], k, p;

	assert_int_equal(group(c->g, stages, NULL, &grp), 0);
	start[0] = 0;
	for (k = 0; k < stages; k++) {
		struct npu_group_stage s = NPU_GROUP_STAGE_INIT;

		assert_int_equal(npu_group_get_stage(grp, k, &s), 0);
		assert_int_equal(s.first_node, start[k]);
		start[k + 1] = start[k] + s.num_nodes;
		/* nodes were added in order, so the stage's cost is a prefix difference */
		assert_int_equal(s.cost, prefix[start[k + 1]] - prefix[start[k]]);
		sum += s.cost;
	}
	assert_int_equal(start[stages], c->nn);
	assert_int_equal(sum, total);
	for (k = 1; k < stages; k++) {
		uint64_t target = total / stages * k + total % stages * k / stages, best = UINT64_MAX;
		uint32_t hi = (uint32_t)(c->nn - (stages - k));

		assert_false(c->unsafe[start[k]]);
		for (p = start[k - 1] + 1; p <= hi; p++)
			if (!c->unsafe[p] && dist(prefix[p], target) < best)
				best = dist(prefix[p], target);
		if (dist(prefix[start[k]], target) > best + total / 32)
			fail_msg("cut %u before node %u: cost %llu, %llu from its target %llu;"
				 " the best cut is %llu from it (total %llu)", k, start[k],
				 (unsigned long long)prefix[start[k]],
				 (unsigned long long)dist(prefix[start[k]], target),
				 (unsigned long long)target, (unsigned long long)best,
				 (unsigned long long)total);
		if (stages != 2)
			continue;
		/*
		 * Within that slack the fewest bytes cross (every value here is
		 * a multiple of the 64-byte handoff alignment), and of the cuts
		 * crossing as few, the one nearest the target.
		 */
		for (p = 1; p < c->nn; p++) {
			if (c->unsafe[p] || dist(prefix[p], target) > best + total / 32)
				continue;
			if (cross[p] < cross[start[1]] ||
			    (cross[p] == cross[start[1]] &&
			     dist(prefix[p], target) < dist(prefix[start[1]], target)))
				fail_msg("cut before node %u (%llu bytes, %llu from the target)"
					 " where node %u gives %llu bytes, %llu from it", start[1],
					 (unsigned long long)cross[start[1]],
					 (unsigned long long)dist(prefix[start[1]], target), p,
					 (unsigned long long)cross[p],
					 (unsigned long long)dist(prefix[p], target));
		}
	}
	same_bytes(c, grp, rt);
	npu_group_free(grp);
}

static void test_random_chains(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < GRAPHS; i++) {
		uint64_t prefix[MAX_NODES + 1], cross[MAX_NODES + 1];
		struct npu_runtime *rt;
		struct chain c;

		make_chain(&c, 4 + rnd(6), i % 2);
		assert_int_equal(npu_graph_compile(c.g, NULL, 0, &rt), 0);
		prefix_costs(&c, prefix, cross);
		check_auto(&c, prefix, cross, 2, rt);
		if (c.nn >= 4)
			check_auto(&c, prefix, cross, 3, rt);
		npu_runtime_free(rt);
		free_chain(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_is_the_timing_model),
		cmocka_unit_test(test_random_chains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
