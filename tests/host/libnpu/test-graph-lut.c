// SPDX-License-Identifier: MIT
/*
 * The compiler's table-lookup fold (graph_lut.c) on the host: random
 * chains of pointwise ops between QUANTIZE/DEQUANTIZE pairs, as QDQ
 * models spell activations, compiled with the fold and without it
 * (NPU_COMPILE_NO_LUT) must give the same bytes for every input code,
 * with fewer nodes left to run when the fold applies; values read outside
 * a chain (graph outputs, a second branch) must still come out as the
 * unfolded graph computes them.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"

enum { D0 = 3, D1 = 4, D2 = 37, ELEMS = D0 * D1 * D2 };
static const uint32_t dims[3] = { D0, D1, D2 };

struct gen {
	struct npu_graph *g;
	uint64_t s;
	uint32_t outs[8];
	enum npu_dtype out_dt[8];
	uint32_t nouts;
	unsigned int names;
	/* scalar constants stay alive until the graph is compiled */
	float consts[64];
	uint32_t nconsts;
};

static uint32_t rnd(struct gen *r, uint32_t n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return (uint32_t)((r->s >> 16) % n);
}

static float rndf(struct gen *r, float lo, float hi)
{
	return lo + (hi - lo) * (float)rnd(r, 1u << 20) / (float)(1u << 20);
}

static const char *name(struct gen *r)
{
	static char buf[64][16];
	char *b = buf[r->names++ % 64];

	snprintf(b, 16, "v%u", r->names);
	return b;
}

static uint32_t fval(struct gen *r, uint32_t flags)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = name(r);
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 3;
	memcpy(d.dims, dims, sizeof(dims));
	d.flags = flags;
	assert_int_equal(npu_graph_add_value(r->g, &d, &id), 0);
	return id;
}

static uint32_t qval(struct gen *r, enum npu_dtype dt, uint32_t flags)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = name(r);
	d.dtype = dt;
	d.rank = 3;
	memcpy(d.dims, dims, sizeof(dims));
	d.flags = flags;
	d.scale = rndf(r, 0.004f, 0.08f);
	d.zero_point = dt == NPU_DTYPE_INT8 ? (int32_t)rnd(r, 256) - 128 : (int32_t)rnd(r, 256);
	assert_int_equal(npu_graph_add_value(r->g, &d, &id), 0);
	return id;
}

static uint32_t konst(struct gen *r, float f)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	assert_true(r->nconsts < 64);
	r->consts[r->nconsts] = f;
	d.name = name(r);
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 1;
	d.dims[0] = 1;
	d.data = &r->consts[r->nconsts++];
	assert_int_equal(npu_graph_add_value(r->g, &d, &id), 0);
	return id;
}

static void op(struct gen *r, const struct npu_op_params *p, uint32_t nin,
	       const uint32_t *in, uint32_t out)
{
	struct npu_node_desc d = { .size = sizeof(d), .name = name(r), .kind = NPU_NODE_OP,
				   .op = p, .num_inputs = nin, .inputs = in, .output = out };

	assert_int_equal(npu_graph_add_node(r->g, &d, NULL), 0);
}

static uint32_t quantize(struct gen *r, uint32_t f, enum npu_dtype dt, uint32_t flags)
{
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_QUANTIZE };
	uint32_t q = qval(r, dt, flags);

	op(r, &p, 1, &f, q);
	return q;
}

static uint32_t dequantize(struct gen *r, uint32_t q)
{
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_DEQUANTIZE };
	uint32_t f = fval(r, 0);

	op(r, &p, 1, &q, f);
	return f;
}

static uint32_t eltwise(struct gen *r, enum npu_eltwise_kind k, uint32_t a, uint32_t b)
{
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_ELTWISE,
				   .eltwise = { .kind = k } };
	uint32_t y = fval(r, 0);

	op(r, &p, 2, (uint32_t[]){ a, b }, y);
	return y;
}

static uint32_t act(struct gen *r, const struct npu_op_params *p, uint32_t x)
{
	uint32_t y = fval(r, 0);

	op(r, p, 1, &x, y);
	return y;
}

/* HardSwish as exporters spell it: x * clip(x + 3, 0, 6) / 6. */
static uint32_t hardswish(struct gen *r, uint32_t x)
{
	struct npu_op_params clip = { .size = sizeof(clip), .kind = NPU_OP_ACTIVATION,
				      .act = NPU_ACT_CLIP, .clip = { 0.0f, 6.0f } };
	uint32_t a = eltwise(r, NPU_ELTWISE_ADD, x, konst(r, 3.0f));
	uint32_t c = act(r, &clip, a);

	return eltwise(r, NPU_ELTWISE_MUL, x, eltwise(r, NPU_ELTWISE_DIV, c, konst(r, 6.0f)));
}

/* One random pointwise step on float @cur; @x is the chain's input, dequantized. */
static uint32_t step(struct gen *r, uint32_t cur, uint32_t x)
{
	static const enum npu_activation acts[] = {
		NPU_ACT_RELU, NPU_ACT_RELU6, NPU_ACT_LEAKY_RELU, NPU_ACT_SIGMOID,
		NPU_ACT_TANH, NPU_ACT_GELU, NPU_ACT_CLIP, NPU_ACT_HARD_SIGMOID,
		NPU_ACT_HARD_SWISH, NPU_ACT_SQRT, NPU_ACT_RECIPROCAL, NPU_ACT_EXP,
		NPU_ACT_LOG, NPU_ACT_ABS, NPU_ACT_NEG,
	};
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_ACTIVATION };
	enum npu_eltwise_kind k = (enum npu_eltwise_kind)rnd(r, 7);
	uint32_t c;

	switch (rnd(r, 6)) {
	case 0:		/* a scalar on either side, specials included */
		c = konst(r, rnd(r, 8) ? rndf(r, -4.0f, 4.0f) :
			     rnd(r, 2) ? 0.0f : rnd(r, 2) ? INFINITY : NAN);
		return rnd(r, 2) ? eltwise(r, k, cur, c) : eltwise(r, k, c, cur);
	case 1:		/* the chain's input again */
		return rnd(r, 2) ? eltwise(r, k, cur, x) : eltwise(r, k, x, cur);
	case 2:
		return hardswish(r, cur);
	case 3:		/* through 8 bits and back */
		return dequantize(r, quantize(r, cur, rnd(r, 2) ? NPU_DTYPE_INT8 :
					      NPU_DTYPE_UINT8, 0));
	default:
		p.act = acts[rnd(r, sizeof(acts) / sizeof(acts[0]))];
		if (p.act == NPU_ACT_LEAKY_RELU || p.act == NPU_ACT_HARD_SIGMOID)
			p.act_alpha = rndf(r, 0.01f, 0.5f);
		if (p.act == NPU_ACT_HARD_SIGMOID)
			p.act_beta = rndf(r, 0.2f, 0.8f);
		if (p.act == NPU_ACT_CLIP) {
			p.clip.min = rndf(r, -2.0f, 0.5f);
			p.clip.max = p.clip.min + rndf(r, 0.0f, 6.0f);
		}
		return act(r, &p, cur);
	}
}

static void add_out(struct gen *r, uint32_t v, enum npu_dtype dt)
{
	r->outs[r->nouts] = v;
	r->out_dt[r->nouts++] = dt;
}

/*
 * Chains from 8-bit input @xq: each DEQUANTIZE, a few steps, QUANTIZE to
 * an output.  With @leak an intermediate result is an output too, or
 * feeds a second chain.
 */
static void chain(struct gen *r, uint32_t xq, bool leak)
{
	uint32_t x = dequantize(r, xq), cur = x, n = 1 + rnd(r, 5), i, mid = 0;
	enum npu_dtype dt = rnd(r, 2) ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8;

	for (i = 0; i < n; i++) {
		cur = step(r, cur, x);
		if (leak && i == n / 2) {
			if (rnd(r, 2)) {
				/* the float value read outside the chain: as 8 bits */
				mid = quantize(r, cur, NPU_DTYPE_INT8, NPU_VALUE_OUTPUT);
				add_out(r, mid, NPU_DTYPE_INT8);
				cur = dequantize(r, mid);
			} else {
				uint32_t side = step(r, cur, x);

				add_out(r, quantize(r, side, NPU_DTYPE_UINT8, NPU_VALUE_OUTPUT),
					NPU_DTYPE_UINT8);
			}
		}
	}
	add_out(r, quantize(r, cur, dt, NPU_VALUE_OUTPUT), dt);
}

/* Nodes a runtime runs (neither fused nor elided), and its LUT nodes. */
static size_t live_nodes(struct npu_runtime *rt, size_t *luts)
{
	size_t i, n = 0;

	*luts = 0;
	for (i = 0; i < npu_runtime_num_nodes(rt); i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		assert_int_equal(npu_runtime_node_profile(rt, (uint32_t)i, &p), 0);
		if (p.where != NPU_WHERE_DEVICE && p.where != NPU_WHERE_CPU)
			continue;
		n++;
		if (!strcmp(p.op, "LUT"))
			(*luts)++;
	}
	return n;
}

static void run(struct npu_runtime *rt, uint32_t xq, const uint8_t *x, struct gen *r,
		uint8_t (*y)[ELEMS])
{
	uint32_t ids[9];
	void *ptr[9];
	uint32_t i;

	ids[0] = xq;
	ptr[0] = (void *)x;
	for (i = 0; i < r->nouts; i++) {
		ids[i + 1] = r->outs[i];
		ptr[i + 1] = y[i];
		memset(y[i], 0x5a, ELEMS);
	}
	assert_int_equal(npu_runtime_setup(rt, r->nouts + 1, ids, ptr), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
}

/*
 * Random chains, every input code (each appears several times, in
 * varying places): folded and unfolded give the same bytes.
 */
static void test_random_chains(void **state)
{
	struct gen r = { .s = 0x243f6a8885a308d3ull };
	size_t folded_graphs = 0, dropped = 0;
	unsigned int it;

	(void)state;
	for (it = 0; it < 300; it++) {
		enum npu_dtype xdt = rnd(&r, 2) ? NPU_DTYPE_INT8 : NPU_DTYPE_UINT8;
		static uint8_t x[ELEMS], y[2][8][ELEMS];
		struct npu_runtime *rt[2];
		size_t n[2], luts[2];
		uint32_t xq, i, k;

		r.nouts = 0;
		r.nconsts = 0;
		assert_int_equal(npu_graph_create(&r.g), 0);
		xq = qval(&r, xdt, NPU_VALUE_INPUT);
		for (k = 1 + rnd(&r, 2); k > 0; k--)
			chain(&r, xq, rnd(&r, 3) == 0);
		assert_int_equal(npu_graph_compile(r.g, NULL, 0, &rt[0]), 0);
		assert_int_equal(npu_graph_compile(r.g, NULL, NPU_COMPILE_NO_LUT, &rt[1]), 0);
		npu_graph_free(r.g);
		for (i = 0; i < ELEMS; i++)
			x[i] = (uint8_t)(i * 7 + it);
		run(rt[0], xq, x, &r, y[0]);
		run(rt[1], xq, x, &r, y[1]);
		for (i = 0; i < r.nouts; i++)
			for (k = 0; k < ELEMS; k++)
				if (y[0][i][k] != y[1][i][k])
					fail_msg("graph %u output %u element %u (x %u): folded %u, unfolded %u",
						 it, i, k, x[k], y[0][i][k], y[1][i][k]);
		n[0] = live_nodes(rt[0], &luts[0]);
		n[1] = live_nodes(rt[1], &luts[1]);
		assert_int_equal(luts[1], 0);
		assert_true(n[0] <= n[1]);
		if (luts[0]) {
			folded_graphs++;
			/* every LUT stands for at least two nodes */
			assert_true(n[1] - n[0] >= luts[0]);
			dropped += n[1] - n[0];
		}
		npu_runtime_free(rt[0]);
		npu_runtime_free(rt[1]);
	}
	printf("# %zu of 300 graphs folded, %zu nodes fewer in all\n", folded_graphs, dropped);
	assert_true(folded_graphs >= 150);
}

/*
 * HardSwish and HardSigmoid in QDQ form, int8 in and out: one LUT node
 * each, where the unfolded graph runs four and two ops, equal bytes for
 * all 256 codes.
 */
static void test_qdq_forms(void **state)
{
	int form;

	(void)state;
	for (form = 0; form < 4; form++) {
		struct gen r = { .s = 0x13198a2e03707344ull + (uint64_t)form };
		struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_ACTIVATION };
		static uint8_t x[ELEMS], y[2][8][ELEMS];
		struct npu_runtime *rt[2];
		size_t n[2], luts[2];
		uint32_t xq, f, i;

		assert_int_equal(npu_graph_create(&r.g), 0);
		xq = qval(&r, NPU_DTYPE_INT8, NPU_VALUE_INPUT);
		f = dequantize(&r, xq);
		switch (form) {
		case 0:
			f = hardswish(&r, f);
			break;
		case 1:		/* HardSigmoid spelled out, then Mul: PP-OCR's HardSwish */
			p.act = NPU_ACT_HARD_SIGMOID;
			p.act_alpha = 0.2f;
			p.act_beta = 0.5f;
			f = eltwise(&r, NPU_ELTWISE_MUL, f, act(&r, &p, f));
			break;
		case 2:		/* Sigmoid through 8 bits, then Mul: SiLU */
			p.act = NPU_ACT_SIGMOID;
			f = eltwise(&r, NPU_ELTWISE_MUL, f,
				    dequantize(&r, quantize(&r, act(&r, &p, f), NPU_DTYPE_UINT8, 0)));
			break;
		default:	/* LeakyRelu then Clip, each through 8 bits */
			p.act = NPU_ACT_LEAKY_RELU;
			p.act_alpha = 0.1f;
			f = dequantize(&r, quantize(&r, act(&r, &p, f), NPU_DTYPE_INT8, 0));
			memset(&p, 0, sizeof(p));
			p.size = sizeof(p);
			p.kind = NPU_OP_ACTIVATION;
			p.act = NPU_ACT_CLIP;
			p.clip.min = -1.0f;
			p.clip.max = 1.0f;
			f = act(&r, &p, f);
			break;
		}
		add_out(&r, quantize(&r, f, NPU_DTYPE_INT8, NPU_VALUE_OUTPUT), NPU_DTYPE_INT8);
		assert_int_equal(npu_graph_compile(r.g, NULL, 0, &rt[0]), 0);
		assert_int_equal(npu_graph_compile(r.g, NULL, NPU_COMPILE_NO_LUT, &rt[1]), 0);
		npu_graph_free(r.g);
		for (i = 0; i < ELEMS; i++)
			x[i] = (uint8_t)i;
		run(rt[0], xq, x, &r, y[0]);
		run(rt[1], xq, x, &r, y[1]);
		assert_memory_equal(y[0][0], y[1][0], ELEMS);
		n[0] = live_nodes(rt[0], &luts[0]);
		n[1] = live_nodes(rt[1], &luts[1]);
		assert_int_equal(n[0], 1);
		assert_int_equal(luts[0], 1);
		assert_true(n[1] >= 2);
		npu_runtime_free(rt[0]);
		npu_runtime_free(rt[1]);
	}
}

/*
 * An intermediate 8-bit value that is a graph output cannot vanish: the
 * chain folds into two LUTs around it (x -> mid -> y), and mid's bytes
 * are the unfolded graph's.
 */
static void test_shared_value(void **state)
{
	struct gen r = { .s = 0xa4093822299f31d0ull };
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_ACTIVATION,
				   .act = NPU_ACT_TANH };
	static uint8_t x[ELEMS], y[2][8][ELEMS];
	struct npu_runtime *rt[2];
	size_t n[2], luts[2];
	uint32_t xq, f, mid, i;

	(void)state;
	assert_int_equal(npu_graph_create(&r.g), 0);
	xq = qval(&r, NPU_DTYPE_UINT8, NPU_VALUE_INPUT);
	f = dequantize(&r, xq);
	f = eltwise(&r, NPU_ELTWISE_SUB, f, konst(&r, 1.5f));
	f = act(&r, &p, f);
	mid = quantize(&r, f, NPU_DTYPE_INT8, NPU_VALUE_OUTPUT);
	add_out(&r, mid, NPU_DTYPE_INT8);
	f = dequantize(&r, mid);
	f = eltwise(&r, NPU_ELTWISE_MUL, f, f);
	f = eltwise(&r, NPU_ELTWISE_ADD, f, konst(&r, 0.25f));
	add_out(&r, quantize(&r, f, NPU_DTYPE_UINT8, NPU_VALUE_OUTPUT), NPU_DTYPE_UINT8);
	assert_int_equal(npu_graph_compile(r.g, NULL, 0, &rt[0]), 0);
	assert_int_equal(npu_graph_compile(r.g, NULL, NPU_COMPILE_NO_LUT, &rt[1]), 0);
	npu_graph_free(r.g);
	for (i = 0; i < ELEMS; i++)
		x[i] = (uint8_t)(255 - i);
	run(rt[0], xq, x, &r, y[0]);
	run(rt[1], xq, x, &r, y[1]);
	assert_memory_equal(y[0][0], y[1][0], ELEMS);
	assert_memory_equal(y[0][1], y[1][1], ELEMS);
	n[0] = live_nodes(rt[0], &luts[0]);
	n[1] = live_nodes(rt[1], &luts[1]);
	assert_int_equal(luts[0], 2);
	assert_int_equal(n[0], 2);
	assert_int_equal(n[1], 4);
	npu_runtime_free(rt[0]);
	npu_runtime_free(rt[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qdq_forms),
		cmocka_unit_test(test_shared_value),
		cmocka_unit_test(test_random_chains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
