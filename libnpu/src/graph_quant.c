// SPDX-License-Identifier: MIT
/*
 * Compile step: quantized values stay quantized on the device.
 *
 * Every device op but GEMM, CONV2D and CONV_TRANSPOSE computes on
 * quantized operands by dequantizing them to binary32 ((q - zp) * scale,
 * what DEQUANTIZE computes), computing in binary32 and quantizing its
 * result with its own rounding rule (what QUANTIZE computes): ops.rst,
 * "Dtypes".  So DEQUANTIZE -> op -> QUANTIZE is the op alone, reading
 * the 8-bit values and writing the quantized one, to the bit: no float
 * tensor between them, a quarter of the bytes and two commands fewer.
 * A QDQ model (Quantize/DequantizeLinear around each op) is then int8
 * from end to end.
 *
 * The integer ops' own epilogue takes ReLU and ReLU6 as a clamp of the
 * requantized result (ops.rst, "Fused epilogue of quantized GEMM/CONV2D"),
 * which equals an ACTIVATION reading and writing the same quantization.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_compile.h"
#include "vnpu_ref.h"

/* Data movement nodes: their COPY ops convert as real numbers. */
static bool moves_data(const struct gnode *n)
{
	return n->kind == NPU_NODE_TRANSPOSE || n->kind == NPU_NODE_CONCAT ||
	       n->kind == NPU_NODE_SLICE;
}

/* Ops whose quantized semantics is dequantize, compute, quantize. */
static bool real_valued(const struct gnode *n)
{
	if (moves_data(n))
		return true;
	if (n->kind != NPU_NODE_OP)
		return false;
	switch (n->op.kind) {
	case NPU_OP_ELTWISE:
		/* onnxruntime's QLinear arithmetic reads and writes codes */
		return n->op.round != NPU_ROUND_ORT_QLINEAR;
	case NPU_OP_ACTIVATION:
	case NPU_OP_POOL2D:
	case NPU_OP_SOFTMAX:
	case NPU_OP_RESIZE:
	case NPU_OP_COPY:
		return true;
	default:
		return false;
	}
}

static bool per_tensor_8bit(const struct gvalue *v)
{
	return (v->dtype == NPU_DTYPE_INT8 || v->dtype == NPU_DTYPE_UINT8) &&
	       v->scale > 0.0f && !v->chq;
}

static bool plain_f32(const struct gvalue *v)
{
	return v->dtype == NPU_DTYPE_FP32 && v->scale == 0.0f && !v->chq;
}

static struct gnode *live_op(struct cstate *c, uint32_t id, enum npu_op_kind kind)
{
	struct gnode *n;

	if (id == NPU_VALUE_NONE || c->state[id] != N_ALIVE)
		return NULL;
	n = &c->w->n[id];
	if (n->kind != NPU_NODE_OP || n->op.kind != kind || n->op.act != NPU_ACT_NONE ||
	    n->num_inputs != 1)
		return NULL;
	return n;
}

/* Read the 8-bit inputs of DEQUANTIZE producers instead of their floats. */
static bool absorb_dequantize(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id];
	bool changed = false;
	uint32_t k;

	for (k = 0; k < n->num_inputs; k++) {
		uint32_t v = n->in[k];
		struct gnode *d;

		if (v == NPU_VALUE_NONE || !plain_f32(&w->v[v]))
			continue;
		d = live_op(c, w->v[v].producer, NPU_OP_DEQUANTIZE);
		if (!d || !per_tensor_8bit(&w->v[d->in[0]]))
			continue;
		n->in[k] = d->in[0];
		changed = true;
	}
	if (changed)
		npu__recount_node(c, id);
	return changed;
}

/* The QUANTIZE node that alone reads @n's fp32 result, or NULL. */
static struct gnode *quantize_reader(struct cstate *c, const struct gnode *n, uint32_t *qid)
{
	struct npu_graph *w = c->w;
	uint32_t y = n->out;
	struct gnode *q;

	if (!plain_f32(&w->v[y]) || c->consumers[y] != 1 || (w->v[y].flags & NPU_VALUE_OUTPUT))
		return NULL;
	*qid = c->readers_xor[y];
	q = live_op(c, *qid, NPU_OP_QUANTIZE);
	if (!q || q->in[0] != y || !per_tensor_8bit(&w->v[q->out]))
		return NULL;
	/* a COPY rounds by the default rule (npu_op_params.round is 0) */
	if (q->op.round != (moves_data(n) ? NPU_ROUND_ONNX : n->op.round))
		return NULL;
	return q;
}

/*
 * A TRANSPOSE, CONCAT or SLICE takes one dtype for its inputs and
 * output: it moves 8-bit values only when every input is a DEQUANTIZE's
 * of the dtype the QUANTIZE reading its result writes, or a float
 * constant (a QDQ model's padding zeros, folded at import), which
 * becomes that QUANTIZE's integers.
 */
static bool movable(struct cstate *c, const struct gnode *n)
{
	struct npu_graph *w = c->w;
	const struct gnode *q, *d;
	uint32_t k, qid;

	q = quantize_reader(c, n, &qid);
	if (!q)
		return false;
	for (k = 0; k < n->num_inputs; k++) {
		uint32_t v = n->in[k];

		if (v == NPU_VALUE_NONE || !plain_f32(&w->v[v]))
			return false;
		if (w->v[v].data)
			continue;
		d = live_op(c, w->v[v].producer, NPU_OP_DEQUANTIZE);
		if (!d || !per_tensor_8bit(&w->v[d->in[0]]) ||
		    w->v[d->in[0]].dtype != w->v[q->out].dtype)
			return false;
	}
	return true;
}

/*
 * Float constants read by data movement node @id as the integers its
 * QUANTIZE reader @y would make of them (vnpu_quantize_f: the rule the
 * COPY and QUANTIZE ops round by), in @y's quantization.
 */
static int quantize_statics(struct cstate *c, uint32_t id, uint32_t y, unsigned int round)
{
	struct npu_graph *w = c->w;
	uint32_t k;
	int ret;

	for (k = 0; k < w->n[id].num_inputs; k++) {
		uint32_t v = w->n[id].in[k], nid;
		struct gvalue like = w->v[y];
		const float *f = w->v[v].data;
		int32_t lo = like.dtype == NPU_DTYPE_INT8 ? -128 : 0;
		int32_t hi = like.dtype == NPU_DTYPE_INT8 ? 127 : 255;
		uint8_t *q;
		uint64_t i;

		if (!f)
			continue;
		q = malloc(w->v[v].elems ? w->v[v].elems : 1);
		if (!q)
			return -ENOMEM;
		for (i = 0; i < w->v[v].elems; i++)
			q[i] = (uint8_t)vnpu_quantize_f(f[i], like.scale, like.zero_point, lo, hi,
							round);
		like.chq = NULL;
		ret = npu__add_value_raw(c, &like, w->v[v].rank, w->v[v].dims, q, &nid);
		if (ret) {
			free(q);
			return ret;
		}
		w->n[id].in[k] = nid;
	}
	npu__recount_node(c, id);
	return 0;
}

/* Write the QUANTIZE reader's 8-bit output directly. */
static void absorb_quantize(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id], *q;
	uint32_t qid;

	q = quantize_reader(c, n, &qid);
	if (!q)
		return;
	n->out = q->out;
	w->v[q->out].producer = id;
	c->state[qid] = N_FUSED;
	c->fused_into[qid] = id;
	npu__recount_node(c, id);
	npu__recount_node(c, qid);
}

static bool same_quant(const struct gvalue *a, const struct gvalue *b)
{
	return a->dtype == b->dtype && a->scale == b->scale && a->zero_point == b->zero_point &&
	       a->rank == b->rank && !memcmp(a->dims, b->dims, 4ull * a->rank);
}

/* ReLU or ReLU6 on an integer GEMM/CONV2D's 8-bit result, same quantization. */
static void fuse_int_activation(struct cstate *c, uint32_t id)
{
	struct npu_graph *w = c->w;
	struct gnode *n = &w->n[id], *p;
	enum npu_activation act = n->op.act;
	uint32_t x = n->in[0], pid;

	if (n->kind != NPU_NODE_OP || n->op.kind != NPU_OP_ACTIVATION || n->num_inputs != 1)
		return;
	if (act == NPU_ACT_CLIP) {
		if (n->op.clip.min == 0.0f && n->op.clip.max == 6.0f)
			act = NPU_ACT_RELU6;
		else if (n->op.clip.min == 0.0f && isinf(n->op.clip.max) && n->op.clip.max > 0)
			act = NPU_ACT_RELU;
		else
			return;
	}
	if (act != NPU_ACT_RELU && act != NPU_ACT_RELU6)
		return;
	if (!per_tensor_8bit(&w->v[x]) || !same_quant(&w->v[x], &w->v[n->out]) ||
	    c->consumers[x] != 1 || (w->v[x].flags & NPU_VALUE_OUTPUT))
		return;
	pid = w->v[x].producer;
	if (pid == NPU_VALUE_NONE || c->state[pid] != N_ALIVE)
		return;
	p = &w->n[pid];
	if (p->kind != NPU_NODE_OP || p->op.act != NPU_ACT_NONE ||
	    (p->op.kind != NPU_OP_GEMM && p->op.kind != NPU_OP_CONV2D) ||
	    p->op.round != n->op.round ||
	    w->v[p->in[0]].dtype == NPU_DTYPE_FP32 || w->v[p->in[0]].scale == 0.0f)
		return;
	p->op.act = act;
	p->out = n->out;
	w->v[n->out].producer = pid;
	c->state[id] = N_FUSED;
	c->fused_into[id] = pid;
	npu__recount_node(c, pid);
	npu__recount_node(c, id);
}

int npu__fuse_quant(struct cstate *c)
{
	size_t i;
	int ret;

	npu__count_consumers(c);
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i], qid;

		if (c->state[id] != N_ALIVE || !real_valued(&c->w->n[id]))
			continue;
		if (moves_data(&c->w->n[id])) {
			if (!movable(c, &c->w->n[id]))
				continue;
			qid = c->readers_xor[c->w->n[id].out];
			ret = quantize_statics(c, id, c->w->n[qid].out, c->w->n[qid].op.round);
			if (ret)
				return ret;
		}
		absorb_dequantize(c, id);
		absorb_quantize(c, id);
	}
	for (i = 0; i < c->norder; i++) {
		uint32_t id = c->order[i];

		if (c->state[id] == N_ALIVE)
			fuse_int_activation(c, id);
	}
	return 0;
}
