// SPDX-License-Identifier: MIT
/*
 * Data movement in graphs: COPY nodes and the TRANSPOSE, CONCAT and SLICE
 * node kinds, all NPU_OP_COPY over strided views.
 *
 * A value's view has its logical (graph) dims and the strides of the way
 * compile stores it: row-major, or [N,H,W,C] for a 4-D [N,C,H,W] value
 * the layout plan keeps NHWC.  Data movement therefore works on either
 * storage without a transpose of its own, and the layout plan may store
 * its operands NHWC whenever the convolutions around them want that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

bool npu__node_is_move(const struct gnode *n)
{
	return n->kind == NPU_NODE_TRANSPOSE || n->kind == NPU_NODE_CONCAT ||
	       n->kind == NPU_NODE_SLICE ||
	       (n->kind == NPU_NODE_OP && n->op.kind == NPU_OP_COPY);
}

/* Element strides of value @v's logical dims in its storage. */
static void storage_strides(const struct gvalue *v, uint64_t *st)
{
	uint64_t s = 1;
	int i;

	if (v->nhwc && v->rank == 4) {
		st[1] = 1;
		st[3] = v->dims[1];
		st[2] = (uint64_t)v->dims[3] * v->dims[1];
		st[0] = st[2] * v->dims[2];
		return;
	}
	for (i = (int)v->rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= v->dims[i];
	}
}

/*
 * A tensor over value @v seen as @rank dims @dims with element strides
 * @st (NULL: the value's own dims and storage), bound as @b says.
 */
static int view(const struct gvalue *v, uint32_t rank, const uint32_t *dims,
		const uint64_t *st, const struct gbind *b, struct npu_tensor **out)
{
	static const uint32_t one = 1;
	uint64_t own[NPU_TENSOR_MAX_RANK];
	struct npu_tensor *t;
	int ret;

	if (!dims) {
		rank = v->rank;
		dims = v->dims;
		storage_strides(v, own);
		st = own;
	}
	if (!rank) {
		rank = 1;
		dims = &one;
		st = NULL;
	}
	ret = npu_tensor_create(v->dtype, rank, dims, &t);
	if (!ret && st)
		ret = npu_tensor_set_strides(t, st);
	if (!ret && (v->scale > 0.0f || v->chq))
		ret = npu__value_set_quant(t, v, NULL);
	/* unquantized 8-bit values move bit for bit, like ONNX's */
	else if (!ret && (v->dtype == NPU_DTYPE_INT8 || v->dtype == NPU_DTYPE_UINT8))
		ret = npu_tensor_set_quant(t, 1.0f, 0);
	if (!ret)
		ret = b->buf ? npu_tensor_bind_buffer(t, b->buf, b->offset) :
			       npu_tensor_bind_host(t, b->host,
							     npu__tensor_span(t));
	if (ret) {
		npu_tensor_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static int copy_op(struct npu_graph *g, const struct gnode *n,
		   const struct npu_op_params *p, struct npu_tensor *x,
		   struct npu_tensor *y, struct npu_op **op)
{
	const struct npu_tensor *in[1] = { x };
	int ret = npu__op_create(p, in, 1, y, op);

	if (ret == -EINVAL)
		npu__graph_fail(g, "node %s (%s): shapes, dtypes or parameters COPY does not define",
				n->name, npu__node_op_name(n));
	return ret;
}

static int fail_operand(struct npu_graph *g, const struct gnode *n, int ret)
{
	if (ret == -EINVAL || ret == -EOVERFLOW) {
		npu__graph_fail(g, "node %s (%s): a value cannot be an operand", n->name,
				npu__node_op_name(n));
		return -EINVAL;
	}
	return ret;
}

/* COPY: X and Y of one rank, each through its storage's view. */
static int make_copy(struct npu_graph *g, const struct gnode *n,
		     const struct gbind *bin, const struct gbind *bout,
		     struct npu_op **op)
{
	const struct gvalue *x = &g->v[n->in[0]], *y = &g->v[n->out];
	struct npu_tensor *tx = NULL, *ty = NULL;
	int ret;

	if (n->num_inputs != 1)
		return npu__graph_fail(g, "node %s (COPY): takes one input", n->name);
	if (x->rank != y->rank)
		return npu__graph_fail(g, "node %s (COPY): X has rank %u, the output %u", n->name,
				       x->rank, y->rank);
	ret = view(x, 0, NULL, NULL, &bin[0], &tx);
	if (!ret)
		ret = view(y, 0, NULL, NULL, bout, &ty);
	if (!ret)
		ret = copy_op(g, n, &n->op, tx, ty, op);
	else
		ret = fail_operand(g, n, ret);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	return ret;
}

static int make_transpose(struct npu_graph *g, const struct gnode *n,
			  const struct gbind *bin, const struct gbind *bout,
			  struct npu_op **op)
{
	const struct gvalue *x = &g->v[n->in[0]], *y = &g->v[n->out];
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	uint64_t xs[NPU_TENSOR_MAX_RANK], vs[NPU_TENSOR_MAX_RANK];
	uint32_t vd[NPU_TENSOR_MAX_RANK], seen = 0, d;
	struct npu_tensor *tx = NULL, *ty = NULL;
	int ret;

	if (n->num_inputs != 1 || x->rank != y->rank || x->dtype != y->dtype)
		return npu__graph_fail(g, "node %s (TRANSPOSE): one input of the output's rank and dtype",
				       n->name);
	storage_strides(x, xs);
	for (d = 0; d < x->rank; d++) {
		uint32_t from = n->perm[d];

		if (from >= x->rank || (seen & (1u << from)))
			return npu__graph_fail(g, "node %s (TRANSPOSE): perm is no permutation of 0..%u",
					       n->name, x->rank - 1);
		seen |= 1u << from;
		if (x->dims[from] != y->dims[d])
			return npu__graph_fail(g, "node %s (TRANSPOSE): output dim %u is %u, X's dim %u is %u",
					       n->name, d, y->dims[d], from, x->dims[from]);
		vd[d] = x->dims[from];
		vs[d] = xs[from];
	}
	ret = view(x, x->rank, vd, vs, &bin[0], &tx);
	if (!ret)
		ret = view(y, 0, NULL, NULL, bout, &ty);
	if (!ret)
		ret = copy_op(g, n, &p, tx, ty, op);
	else
		ret = fail_operand(g, n, ret);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	return ret;
}

/*
 * SLICE: X seen from its first element read, with strides of |step|;
 * negative steps start the view at the lowest element and read it
 * backwards (COPY's reverse bits).
 */
static int make_slice(struct npu_graph *g, const struct gnode *n,
		      const struct gbind *bin, const struct gbind *bout,
		      struct npu_op **op)
{
	const struct gvalue *x = &g->v[n->in[0]], *y = &g->v[n->out];
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	uint64_t xs[NPU_TENSOR_MAX_RANK], vs[NPU_TENSOR_MAX_RANK], eoff = 0;
	struct npu_tensor *tx = NULL, *ty = NULL;
	struct gbind b = bin[0];
	uint32_t d;
	int ret;

	if (n->num_inputs != 1 || x->rank != y->rank || x->dtype != y->dtype || !x->rank)
		return npu__graph_fail(g, "node %s (SLICE): one input of the output's rank and dtype",
				       n->name);
	storage_strides(x, xs);
	for (d = 0; d < x->rank; d++) {
		int64_t step = n->step[d], first = n->perm[d];
		int64_t last = first + (int64_t)(y->dims[d] - 1) * step;

		if (!step || first >= x->dims[d] || last < 0 || last >= x->dims[d])
			return npu__graph_fail(g, "node %s (SLICE): dim %u reads outside X (start %lld, step %lld, %u elements of %u)",
					       n->name, d, (long long)first, (long long)step,
					       y->dims[d], x->dims[d]);
		vs[d] = xs[d] * (uint64_t)(step < 0 ? -step : step);
		eoff += (uint64_t)(step < 0 ? last : first) * xs[d];
		if (step < 0)
			p.copy.reverse |= 1u << d;
	}
	eoff *= npu_dtype_size(x->dtype);
	if (b.buf)
		b.offset += eoff;
	else
		b.host = (uint8_t *)b.host + eoff;
	ret = view(x, x->rank, y->dims, vs, &b, &tx);
	if (!ret)
		ret = view(y, 0, NULL, NULL, bout, &ty);
	if (!ret)
		ret = copy_op(g, n, &p, tx, ty, op);
	else
		ret = fail_operand(g, n, ret);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	return ret;
}

/* CONCAT: input k is one COPY into the output, offset along the axis. */
static int make_concat(struct npu_graph *g, const struct gnode *n,
		       const struct gbind *bin, const struct gbind *bout,
		       struct npu_op **ops, size_t *count)
{
	const struct gvalue *y = &g->v[n->out];
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	struct npu_tensor *ty = NULL;
	uint64_t at = 0;
	uint32_t k, d;
	int ret = 0;

	if (n->axis >= y->rank)
		return npu__graph_fail(g, "node %s (CONCAT): axis %u, the output has rank %u",
				       n->name, n->axis, y->rank);
	for (k = 0; k < n->num_inputs; k++) {
		const struct gvalue *x;

		if (n->in[k] == NPU_VALUE_NONE)
			return npu__graph_fail(g, "node %s (CONCAT): input %u is absent", n->name, k);
		x = &g->v[n->in[k]];
		if (x->rank != y->rank || x->dtype != y->dtype)
			return npu__graph_fail(g, "node %s (CONCAT): input %u's rank or dtype differs from the output's",
					       n->name, k);
		for (d = 0; d < y->rank; d++)
			if (d != n->axis && x->dims[d] != y->dims[d])
				return npu__graph_fail(g, "node %s (CONCAT): input %u's dim %u is %u, the output's %u",
						       n->name, k, d, x->dims[d], y->dims[d]);
		at += x->dims[n->axis];
	}
	if (at != y->dims[n->axis] || at > INT32_MAX)
		return npu__graph_fail(g, "node %s (CONCAT): the inputs add up to %llu along axis %u, the output has %u",
				       n->name, (unsigned long long)at, n->axis, y->dims[n->axis]);
	ret = view(y, 0, NULL, NULL, bout, &ty);
	if (ret)
		return fail_operand(g, n, ret);
	at = 0;
	for (k = 0; k < n->num_inputs && !ret; k++) {
		const struct gvalue *x = &g->v[n->in[k]];
		struct npu_tensor *tx = NULL;

		/* the other inputs' parts are left as they are (KEEP) */
		p.copy.offset[n->axis] = (int32_t)at;
		ops[k] = NULL;
		ret = view(x, 0, NULL, NULL, &bin[k], &tx);
		if (!ret)
			ret = copy_op(g, n, &p, tx, ty, &ops[k]);
		else
			ret = fail_operand(g, n, ret);
		npu_tensor_free(tx);
		at += x->dims[n->axis];
	}
	npu_tensor_free(ty);
	if (ret) {
		while (k-- > 0) {
			npu_op_free(ops[k]);
			ops[k] = NULL;
		}
		return ret;
	}
	*count = n->num_inputs;
	return 0;
}

int npu__graph_make_ops(struct npu_graph *g, const struct gnode *n,
			const struct gbind *bind_in, const struct gbind *bind_out,
			struct npu_op **ops, size_t *count)
{
	uint32_t k;
	int ret;

	*count = 0;
	/* Device ops and libnpu ops take the device's dtypes only. */
	for (k = 0; k <= n->num_inputs && npu__node_has_ops(n); k++) {
		uint32_t v = k < n->num_inputs ? n->in[k] : n->out;

		if (v != NPU_VALUE_NONE && !npu__dtype_is_device(g->v[v].dtype))
			return npu__graph_fail(g, "node %s (%s): value %s is %s, a host-only dtype that only kernel nodes take",
					       n->name, npu__node_op_name(n), g->v[v].name,
					       npu__dtype_name(g->v[v].dtype));
	}
	switch (n->kind) {
	case NPU_NODE_TRANSPOSE:
		ret = make_transpose(g, n, bind_in, bind_out, &ops[0]);
		break;
	case NPU_NODE_CONCAT:
		return make_concat(g, n, bind_in, bind_out, ops, count);
	case NPU_NODE_SLICE:
		ret = make_slice(g, n, bind_in, bind_out, &ops[0]);
		break;
	case NPU_NODE_OP:
		if (n->op.kind == NPU_OP_COPY)
			ret = make_copy(g, n, bind_in, bind_out, &ops[0]);
		else
			ret = npu__graph_make_op(g, n, bind_in, bind_out, &ops[0]);
		break;
	default:
		return -EINVAL;
	}
	if (!ret)
		*count = 1;
	return ret;
}
