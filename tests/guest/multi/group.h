/* SPDX-License-Identifier: MIT */
/*
 * What the npu_group guest tests share: a graph with real device work
 * (three GEMM + bias + ReLU layers, weights drawn from a fixed seed),
 * distinct inputs per request, the bytes one runtime on device 0 gives
 * for each, and a stream of requests kept @window deep.
 */
#ifndef VNPU_MULTI_GROUP_H
#define VNPU_MULTI_GROUP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "tap.h"

#define G_ROWS		32
#define G_WIDTH		192
#define G_LAYERS	3
#define G_IN_BYTES	(G_ROWS * G_WIDTH * sizeof(float))
#define G_OUT_BYTES	(G_ROWS * G_WIDTH * sizeof(float))
#define G_SEC		1000000000ll

struct g_model {
	struct npu_graph *graph;
	uint32_t x, y;
	float *w[G_LAYERS], *b[G_LAYERS];
};

static inline float g_rand(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return (float)(*seed >> 8) / (float)(1u << 24) - 0.5f;
}

static inline uint32_t g_value(struct npu_graph *g, const char *name, uint32_t rank,
			       const uint32_t *dims, uint32_t flags, const void *data)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id = NPU_VALUE_NONE;

	d.name = name;
	d.dtype = NPU_DTYPE_FP32;
	d.rank = rank;
	memcpy(d.dims, dims, rank * sizeof(*dims));
	d.flags = flags;
	d.data = data;
	if (npu_graph_add_value(g, &d, &id))
		TAP_BAIL("add value %s: %s", name, npu_graph_error(g));
	return id;
}

static inline void g_node(struct npu_graph *g, const char *name,
			  const struct npu_op_params *op, uint32_t nin, const uint32_t *in,
			  uint32_t out)
{
	struct npu_node_desc n = NPU_NODE_DESC_INIT;

	n.name = name;
	n.kind = NPU_NODE_OP;
	n.op = op;
	n.num_inputs = nin;
	n.inputs = in;
	n.output = out;
	if (npu_graph_add_node(g, &n, NULL))
		TAP_BAIL("add node %s: %s", name, npu_graph_error(g));
}

/* y = relu(...relu(relu(x W0 + b0) W1 + b1)... ) */
static inline void g_model_build(struct g_model *m)
{
	static const uint32_t act[2] = { G_ROWS, G_WIDTH }, wd[2] = { G_WIDTH, G_WIDTH },
		bd[1] = { G_WIDTH };
	struct npu_op_params gemm = { .size = sizeof(gemm), .kind = NPU_OP_GEMM };
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_op_params relu = { .size = sizeof(relu), .kind = NPU_OP_ACTIVATION,
				      .act = NPU_ACT_RELU };
	uint32_t seed = 2024, prev, l, i;
	char name[32];

	if (npu_graph_create(&m->graph))
		TAP_BAIL("npu_graph_create");
	m->x = prev = g_value(m->graph, "x", 2, act, NPU_VALUE_INPUT, NULL);
	for (l = 0; l < G_LAYERS; l++) {
		uint32_t w, b, mm, sum, out;

		m->w[l] = malloc(G_WIDTH * G_WIDTH * sizeof(float));
		m->b[l] = malloc(G_WIDTH * sizeof(float));
		if (!m->w[l] || !m->b[l])
			TAP_BAIL("out of memory");
		for (i = 0; i < G_WIDTH * G_WIDTH; i++)
			m->w[l][i] = g_rand(&seed) * 0.2f;
		for (i = 0; i < G_WIDTH; i++)
			m->b[l][i] = g_rand(&seed) * 0.1f;
		snprintf(name, sizeof(name), "w%u", l);
		w = g_value(m->graph, name, 2, wd, 0, m->w[l]);
		snprintf(name, sizeof(name), "b%u", l);
		b = g_value(m->graph, name, 1, bd, 0, m->b[l]);
		mm = g_value(m->graph, "mm", 2, act, 0, NULL);
		sum = g_value(m->graph, "sum", 2, act, 0, NULL);
		out = g_value(m->graph, "out", 2, act,
			      l == G_LAYERS - 1 ? NPU_VALUE_OUTPUT : 0, NULL);
		g_node(m->graph, "gemm", &gemm, 2, (uint32_t[]){ prev, w }, mm);
		g_node(m->graph, "bias", &add, 2, (uint32_t[]){ mm, b }, sum);
		g_node(m->graph, "relu", &relu, 1, &sum, out);
		prev = out;
	}
	m->y = prev;
}

/* Input of request @r: distinct per request. */
static inline void g_input(float *x, unsigned int r)
{
	uint32_t seed = 77 + r * 7919u, i;

	for (i = 0; i < G_ROWS * G_WIDTH; i++)
		x[i] = g_rand(&seed) * 2.0f;
}

/* The same model in plain C, for a request's expected values. */
static inline void g_reference(const struct g_model *m, const float *x, float *y)
{
	static float a[G_ROWS * G_WIDTH], t[G_ROWS * G_WIDTH];
	unsigned int l, r, c, k;

	memcpy(a, x, sizeof(a));
	for (l = 0; l < G_LAYERS; l++) {
		for (r = 0; r < G_ROWS; r++)
			for (c = 0; c < G_WIDTH; c++) {
				float s = 0;

				for (k = 0; k < G_WIDTH; k++)
					s += a[r * G_WIDTH + k] * m->w[l][k * G_WIDTH + c];
				s += m->b[l][c];
				t[r * G_WIDTH + c] = s > 0 ? s : 0;
			}
		memcpy(a, t, sizeof(a));
	}
	memcpy(y, a, sizeof(a));
}

/* Largest |got - want| over one output. */
static inline float g_max_diff(const float *got, const float *want)
{
	float d = 0;
	unsigned int i;

	for (i = 0; i < G_ROWS * G_WIDTH; i++) {
		float e = got[i] > want[i] ? got[i] - want[i] : want[i] - got[i];

		if (!(e <= d))
			d = e;
	}
	return d;
}

/*
 * @n requests' inputs in @x and the bytes a runtime compiled for @ctx
 * alone gives for each, in @want (one device's answer).
 */
static inline int g_one_device(const struct g_model *m, struct npu_context *ctx, unsigned int n,
			       float (*x)[G_ROWS * G_WIDTH], float (*want)[G_ROWS * G_WIDTH])
{
	struct npu_runtime *rt;
	struct npu_queue *q;
	unsigned int r;
	int ret = npu_graph_compile(m->graph, ctx, 0, &rt);

	if (ret)
		return ret;
	ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	for (r = 0; r < n && !ret; r++) {
		g_input(x[r], r);
		ret = npu_runtime_setup(rt, 2, (uint32_t[]){ m->x, m->y },
					(void *[]){ x[r], want[r] });
		if (!ret)
			ret = npu_runtime_run(rt, q, npu_deadline_ns(120 * G_SEC));
	}
	npu_queue_destroy(q);
	npu_runtime_free(rt);
	return ret;
}

/*
 * @n requests through @grp, at most @window in flight; after @trigger_at
 * requests are answered, @trigger(@arg) runs once (NULL: never).  Each
 * outcome in @err, each result in @res.  Returns how many were answered
 * with bytes other than @want's.
 */
static inline unsigned int g_stream(struct npu_group *grp, const struct g_model *m,
				    unsigned int n, unsigned int window,
				    float (*x)[G_ROWS * G_WIDTH], float (*y)[G_ROWS * G_WIDTH],
				    float (*want)[G_ROWS * G_WIDTH], int *err,
				    struct npu_group_result *res, unsigned int trigger_at,
				    void (*trigger)(void *), void *arg)
{
	uint64_t *t = calloc(n, sizeof(*t));
	unsigned int sent = 0, done = 0, wrong = 0;

	if (!t)
		TAP_BAIL("out of memory");
	while (done < n) {
		while (sent < n && sent < done + window) {
			memset(y[sent], 0xa5, G_OUT_BYTES);
			err[sent] = npu_group_submit(grp, 2, (uint32_t[]){ m->x, m->y },
						     (void *[]){ x[sent], y[sent] }, &t[sent]);
			sent++;
		}
		res[done] = (struct npu_group_result)NPU_GROUP_RESULT_INIT;
		if (!err[done])
			err[done] = npu_group_wait(grp, t[done], npu_deadline_ns(300 * G_SEC),
						   &res[done]);
		if (!err[done] && memcmp(y[done], want[done], G_OUT_BYTES))
			wrong++;
		done++;
		if (trigger && done == trigger_at)
			trigger(arg);
	}
	free(t);
	return wrong;
}

#endif /* VNPU_MULTI_GROUP_H */
