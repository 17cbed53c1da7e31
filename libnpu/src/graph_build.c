// SPDX-License-Identifier: MIT
/*
 * Graph building: values, nodes, and the support query.
 *
 * A graph only records; shapes and attributes are checked by the op
 * layer when compile (or the support query) creates the ops, so the two
 * can never disagree about what is valid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

int npu__graph_fail(struct npu_graph *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err, sizeof(g->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

NPU_EXPORT int npu_graph_create(struct npu_graph **out)
{
	if (!out)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* Where each dim of a 4-D [N,C,H,W] (or OIHW) value lands in its NHWC view. */
static const uint32_t nchw_to_nhwc[4] = { 0, 3, 1, 2 };

struct gchq *npu__chq_new(uint32_t axis, uint32_t n, const float *scale,
			  const int32_t *zp)
{
	struct gchq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->axis = axis;
	q->n = n;
	q->scale = malloc(n * sizeof(*q->scale) + 1);
	q->zp = calloc(n + 1, sizeof(*q->zp));
	if (!q->scale || !q->zp) {
		npu__chq_free(q);
		return NULL;
	}
	memcpy(q->scale, scale, n * sizeof(*q->scale));
	if (zp)
		memcpy(q->zp, zp, n * sizeof(*q->zp));
	return q;
}

void npu__chq_free(struct gchq *q)
{
	if (!q)
		return;
	free(q->scale);
	free(q->zp);
	free(q);
}

int npu__value_set_quant(struct npu_tensor *t, const struct gvalue *v,
			 const uint32_t *axis_map)
{
	if (v->chq)
		return npu_tensor_set_quant_channel(t, axis_map ? axis_map[v->chq->axis] :
							       v->chq->axis,
						    v->chq->scale, v->chq->zp);
	if (v->scale > 0.0f)
		return npu_tensor_set_quant(t, v->scale, v->zero_point);
	return 0;
}

/* Per-channel quantization of a new value (npu_graph_add_value). */
static int check_chq(struct npu_graph *g, const struct npu_value_desc *d)
{
	const char *name = d->name ? d->name : "";
	int32_t lo = d->dtype == NPU_DTYPE_INT8 ? -128 : 0;
	int32_t hi = d->dtype == NPU_DTYPE_INT8 ? 127 : 255;
	uint32_t i;

	if (!d->num_channels)
		return d->channel_scales || d->channel_zero_points || d->quant_axis ?
			npu__graph_fail(g, "value %s: channel quantization fields without num_channels",
					name) : 0;
	if (d->dtype != NPU_DTYPE_INT8 && d->dtype != NPU_DTYPE_UINT8)
		return npu__graph_fail(g, "value %s: per-channel quantization needs INT8 or UINT8",
				       name);
	if (!d->data)
		return npu__graph_fail(g, "value %s: per-channel quantization is for static values only",
				       name);
	if (d->scale != 0.0f)
		return npu__graph_fail(g, "value %s: both a per-tensor scale and per-channel scales",
				       name);
	if (d->quant_axis >= d->rank || d->dims[d->quant_axis] != d->num_channels ||
	    !d->channel_scales)
		return npu__graph_fail(g, "value %s: %u channel scales along axis %u do not fit its shape",
				       name, d->num_channels, d->quant_axis);
	for (i = 0; i < d->num_channels; i++) {
		if (!(d->channel_scales[i] > 0.0f) || d->channel_scales[i] > 3.4e38f)
			return npu__graph_fail(g, "value %s: channel %u's scale %g is not finite and positive",
					       name, i, (double)d->channel_scales[i]);
		if (d->channel_zero_points &&
		    (d->channel_zero_points[i] < lo || d->channel_zero_points[i] > hi))
			return npu__graph_fail(g, "value %s: channel %u's zero point %d is outside [%d, %d]",
					       name, i, d->channel_zero_points[i], lo, hi);
	}
	return 0;
}

NPU_EXPORT void npu_graph_free(struct npu_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nv; i++) {
		if (!g->v[i].name_borrowed)
			free(g->v[i].name);
		if (!g->v[i].data_borrowed)
			free(g->v[i].data);
		npu__chq_free(g->v[i].chq);
	}
	for (i = 0; i < g->nn; i++) {
		free(g->n[i].name);
		free(g->n[i].kv);
		npu__gkernel_put(g->n[i].kern);
	}
	free(g->v);
	free(g->n);
	free(g);
}

static char *dup_name(const char *s)
{
	return strdup(s ? s : "");
}

int npu__graph_push_value(struct npu_graph *g, const struct npu_value_desc *d,
			  void *owned_data, uint32_t *id)
{
	struct gvalue *v;
	uint64_t elems = 1, bytes;
	size_t es = npu_dtype_size(d->dtype);
	uint32_t i;

	if (!es || d->rank > NPU_TENSOR_MAX_RANK ||
	    (d->flags & ~(NPU_VALUE_INPUT | NPU_VALUE_OUTPUT)))
		return -EINVAL;
	/*
	 * A dimension may be 0 (ONNX's empty tensors): such a value holds no
	 * bytes, and compile drops the nodes that would only write it.
	 */
	for (i = 0; i < d->rank; i++)
		if (__builtin_mul_overflow(elems, d->dims[i], &elems))
			return -EOVERFLOW;
	/* Element offsets are signed 64-bit in the device's descriptors. */
	if (__builtin_mul_overflow(elems, es, &bytes) || bytes > INT64_MAX / 2)
		return -EOVERFLOW;
	if (g->nv >= UINT32_MAX - 1)
		return -ENOSPC;
	if (g->nv == g->cap_v) {
		size_t cap = g->cap_v ? 2 * g->cap_v : 16;
		struct gvalue *nvp = realloc(g->v, cap * sizeof(*nvp));

		if (!nvp)
			return -ENOMEM;
		g->v = nvp;
		g->cap_v = cap;
	}
	v = &g->v[g->nv];
	memset(v, 0, sizeof(*v));
	v->name = dup_name(d->name);
	if (!v->name)
		return -ENOMEM;
	v->dtype = d->dtype;
	v->rank = d->rank;
	memcpy(v->dims, d->dims, sizeof(v->dims));
	for (i = d->rank; i < NPU_TENSOR_MAX_RANK; i++)
		v->dims[i] = 0;
	v->flags = d->flags;
	v->scale = d->scale;
	v->zero_point = d->zero_point;
	v->elems = elems;
	v->bytes = bytes;
	v->data = owned_data;
	v->producer = NPU_VALUE_NONE;
	*id = (uint32_t)g->nv++;
	return 0;
}

NPU_EXPORT int npu_graph_add_value(struct npu_graph *g,
				   const struct npu_value_desc *d, uint32_t *id)
{
	struct npu_value_desc vd;
	uint32_t vid;
	void *copy = NULL;
	int ret;

	if (!g)
		return -EINVAL;
	g->err[0] = 0;
	if (!d || !id)
		return npu__graph_fail(g, "no value description");
	ret = npu__struct_in(&vd, sizeof(vd), d, d->size);
	if (ret)
		return ret == -E2BIG ?
			(npu__graph_fail(g, "value: fields this libnpu does not know"), ret) :
			npu__graph_fail(g, "value: no size (NPU_VALUE_DESC_INIT)");
	d = &vd;
	if (d->data && d->flags)
		return npu__graph_fail(g, "value %s: a static value cannot be a graph input or output",
				       d->name ? d->name : "");
	if (d->scale != 0.0f &&
	    (!(d->scale > 0.0f) || d->scale > 3.4e38f ||
	     (d->dtype != NPU_DTYPE_INT8 && d->dtype != NPU_DTYPE_UINT8)))
		return npu__graph_fail(g, "value %s: bad quantization", d->name ? d->name : "");
	ret = check_chq(g, d);
	if (ret)
		return ret;
	ret = npu__graph_push_value(g, d, NULL, &vid);
	if (ret)
		return ret == -EINVAL ?
			npu__graph_fail(g, "value %s: bad dtype, rank or flags", d->name ? d->name : "") :
			(npu__graph_fail(g, "value %s: shape too large", d->name ? d->name : ""), ret);
	if (d->data) {
		copy = malloc(g->v[vid].bytes ? g->v[vid].bytes : 1);
		if (!copy) {
			free(g->v[vid].name);
			g->nv--;
			return -ENOMEM;
		}
		memcpy(copy, d->data, g->v[vid].bytes);
		g->v[vid].data = copy;
	}
	if (d->num_channels) {
		g->v[vid].chq = npu__chq_new(d->quant_axis, d->num_channels, d->channel_scales,
					     d->channel_zero_points);
		if (!g->v[vid].chq) {
			free(g->v[vid].name);
			free(copy);
			g->nv--;
			return -ENOMEM;
		}
	}
	*id = vid;
	return 0;
}

int npu__graph_reserve_node(struct npu_graph *g)
{
	if (g->nn >= UINT32_MAX - 1)
		return -ENOSPC;
	if (g->nn == g->cap_n) {
		size_t cap = g->cap_n ? 2 * g->cap_n : 16;
		struct gnode *nn = realloc(g->n, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		g->n = nn;
		g->cap_n = cap;
	}
	return 0;
}

NPU_EXPORT int npu_graph_add_node(struct npu_graph *g,
				  const struct npu_node_desc *d, uint32_t *id)
{
	struct npu_node_desc nd;
	struct npu_op_params op;
	const char *nm;
	struct gnode *n;
	uint32_t i;
	int ret;

	if (!g)
		return -EINVAL;
	g->err[0] = 0;
	if (!d)
		return npu__graph_fail(g, "no node description");
	ret = npu__struct_in(&nd, sizeof(nd), d, d->size);
	if (ret)
		return ret == -E2BIG ?
			(npu__graph_fail(g, "node: fields this libnpu does not know"), ret) :
			npu__graph_fail(g, "node: no size (NPU_NODE_DESC_INIT)");
	d = &nd;
	nm = d->name ? d->name : "";
	memset(&op, 0, sizeof(op));
	if (d->kind == NPU_NODE_OP && !d->op)
		return npu__graph_fail(g, "node %s: an OP node needs op parameters", nm);
	if (d->op) {
		ret = npu__struct_in(&op, sizeof(op), d->op, d->op->size);
		if (ret)
			return ret == -E2BIG ?
				(npu__graph_fail(g, "node %s: op fields this libnpu does not know", nm), ret) :
				npu__graph_fail(g, "node %s: op parameters without size (NPU_OP_PARAMS_INIT)", nm);
		op.size = sizeof(op);
	}
	if ((unsigned int)d->kind >= NPU_NODE_KIND_COUNT)
		return npu__graph_fail(g, "node %s: unknown kind %u", nm, (unsigned int)d->kind);
	if (d->kind == NPU_NODE_KERNEL)
		return npu__graph_fail(g, "node %s: kernel nodes are added with npu_graph_add_kernel_node()",
				       nm);
	if (d->flags & ~NPU_NODE_NCHW)
		return npu__graph_fail(g, "node %s: unknown flags", nm);
	if (!d->num_inputs || d->num_inputs > GNODE_MAX_INPUTS || !d->inputs)
		return npu__graph_fail(g, "node %s: needs 1 to %d inputs", nm, GNODE_MAX_INPUTS);
	if (d->inputs[0] == NPU_VALUE_NONE)
		return npu__graph_fail(g, "node %s: its first input is required", nm);
	for (i = 0; i < d->num_inputs; i++)
		if (d->inputs[i] != NPU_VALUE_NONE && d->inputs[i] >= g->nv)
			return npu__graph_fail(g, "node %s: input %u is no value", nm, i);
	if (d->output >= g->nv)
		return npu__graph_fail(g, "node %s: the output is no value", nm);
	if (g->v[d->output].data || (g->v[d->output].flags & NPU_VALUE_INPUT))
		return npu__graph_fail(g, "node %s: writes static or input value %s", nm,
				       g->v[d->output].name);
	if (g->v[d->output].producer != NPU_VALUE_NONE)
		return npu__graph_fail(g, "node %s: value %s is already written by node %s", nm,
				       g->v[d->output].name,
				       g->n[g->v[d->output].producer].name);
	ret = npu__graph_reserve_node(g);
	if (ret)
		return ret;
	n = &g->n[g->nn];
	memset(n, 0, sizeof(*n));
	n->name = dup_name(d->name);
	if (!n->name)
		return -ENOMEM;
	n->kind = d->kind;
	n->flags = d->flags;
	n->op = op;
	n->epsilon = d->epsilon;
	if (d->kind == NPU_NODE_TRANSPOSE)
		memcpy(n->perm, d->transpose.perm, sizeof(n->perm));
	if (d->kind == NPU_NODE_CONCAT)
		n->axis = d->concat.axis;
	if (d->kind == NPU_NODE_SLICE) {
		memcpy(n->perm, d->slice.start, sizeof(n->perm));
		memcpy(n->step, d->slice.step, sizeof(n->step));
	}
	n->num_inputs = d->num_inputs;
	for (i = 0; i < GNODE_MAX_INPUTS; i++)
		n->in[i] = i < d->num_inputs ? d->inputs[i] : NPU_VALUE_NONE;
	n->out = d->output;
	g->v[d->output].producer = (uint32_t)g->nn;
	if (id)
		*id = (uint32_t)g->nn;
	g->nn++;
	return 0;
}

NPU_EXPORT size_t npu_graph_num_values(const struct npu_graph *g)
{
	return g ? g->nv : 0;
}

NPU_EXPORT size_t npu_graph_num_nodes(const struct npu_graph *g)
{
	return g ? g->nn : 0;
}

NPU_EXPORT int npu_graph_get_value(const struct npu_graph *g, uint32_t id,
				   struct npu_value_desc *d)
{
	struct npu_value_desc vd;
	const struct gvalue *v;

	if (!g || !d || id >= g->nv)
		return -EINVAL;
	if (!d->size)
		return -EINVAL;
	v = &g->v[id];
	memset(&vd, 0, sizeof(vd));
	vd.size = d->size < sizeof(vd) ? d->size : sizeof(vd);
	vd.name = v->name;
	vd.dtype = v->dtype;
	vd.rank = v->rank;
	memcpy(vd.dims, v->dims, sizeof(vd.dims));
	vd.flags = v->flags;
	vd.data = v->data;
	vd.scale = v->scale;
	vd.zero_point = v->zero_point;
	if (v->chq) {
		vd.quant_axis = v->chq->axis;
		vd.num_channels = v->chq->n;
		vd.channel_scales = v->chq->scale;
		vd.channel_zero_points = v->chq->zp;
	}
	npu__struct_out(d, d->size, &vd, sizeof(vd));
	return 0;
}

NPU_EXPORT const char *npu_graph_error(const struct npu_graph *g)
{
	return g ? g->err : "";
}

const char *npu__node_op_name(const struct gnode *n)
{
	static const char *const ops[NPU_OP_KIND_COUNT] = {
		[NPU_OP_GEMM] = "GEMM", [NPU_OP_CONV2D] = "CONV2D",
		[NPU_OP_POOL2D] = "POOL2D", [NPU_OP_ELTWISE] = "ELTWISE",
		[NPU_OP_ACTIVATION] = "ACTIVATION", [NPU_OP_SOFTMAX] = "SOFTMAX",
		[NPU_OP_LAYERNORM] = "LAYERNORM", [NPU_OP_QUANTIZE] = "QUANTIZE",
		[NPU_OP_DEQUANTIZE] = "DEQUANTIZE",
		[NPU_OP_REQUANTIZE] = "REQUANTIZE", [NPU_OP_POOL3D] = "POOL3D",
		[NPU_OP_COPY] = "COPY", [NPU_OP_RESIZE] = "RESIZE",
		[NPU_OP_CONV_TRANSPOSE] = "CONV_TRANSPOSE",
		[NPU_OP_REDUCE] = "REDUCE", [NPU_OP_LUT] = "LUT",
	};

	switch (n->kind) {
	case NPU_NODE_OP:
		if ((unsigned int)n->op.kind < NPU_OP_KIND_COUNT && ops[n->op.kind])
			return ops[n->op.kind];
		return "OP?";
	case NPU_NODE_RESHAPE:
		return "RESHAPE";
	case NPU_NODE_BATCHNORM:
		return "BATCHNORM";
	case NPU_NODE_DIV:
		return "DIV";
	case NPU_NODE_TRANSPOSE:
		return "TRANSPOSE";
	case NPU_NODE_CONCAT:
		return "CONCAT";
	case NPU_NODE_SLICE:
		return "SLICE";
	case NPU_NODE_KERNEL:
		return n->kern->k.name ? n->kern->k.name : "KERNEL";
	default:
		return "?";
	}
}

int npu__graph_tensor(const struct gvalue *v, bool nchw,
		      struct npu_buffer *buf, uint64_t offset, void *host,
		      struct npu_tensor **out)
{
	static const uint32_t one = 1;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint64_t st[NPU_TENSOR_MAX_RANK];
	struct npu_tensor *t;
	int ret;

	if (v->nhwc && v->rank == 4) {
		/* stored as [N,H,W,C] (compile's layout plan): dense */
		dims[0] = v->dims[0];
		dims[1] = v->dims[2];
		dims[2] = v->dims[3];
		dims[3] = v->dims[1];
		ret = npu_tensor_create(v->dtype, 4, dims, &t);
	} else if (nchw && v->rank == 4) {
		/* [N,C,H,W] memory seen as [N,H,W,C]. */
		dims[0] = v->dims[0];
		dims[1] = v->dims[2];
		dims[2] = v->dims[3];
		dims[3] = v->dims[1];
		st[0] = (uint64_t)v->dims[1] * v->dims[2] * v->dims[3];
		st[1] = v->dims[3];
		st[2] = 1;
		st[3] = (uint64_t)v->dims[2] * v->dims[3];
		ret = npu_tensor_create(v->dtype, 4, dims, &t);
		if (!ret)
			ret = npu_tensor_set_strides(t, st);
	} else {
		ret = npu_tensor_create(v->dtype, v->rank ? v->rank : 1,
					v->rank ? v->dims : &one, &t);
	}
	if (ret)
		return ret;
	ret = npu__value_set_quant(t, v, v->rank == 4 && (v->nhwc || nchw) ? nchw_to_nhwc : NULL);
	if (!ret)
		ret = buf ? npu_tensor_bind_buffer(t, buf, offset) :
			    npu_tensor_bind_host(t, host, npu__tensor_span(t));
	if (ret) {
		npu_tensor_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

/*
 * Weights in ONNX's layout seen in the op's, for the support query before
 * packing: CONV2D's OIHW as OHWI, CONV_TRANSPOSE's [C, CO/groups, KH, KW]
 * as [C, KH, KW, CO/groups]; both move dim 1 last.
 */
static int oihw_view(const struct gvalue *v, const struct gbind *b,
		     struct npu_tensor **out)
{
	uint32_t dims[4] = { v->dims[0], v->dims[2], v->dims[3], v->dims[1] };
	uint64_t st[4] = { (uint64_t)v->dims[1] * v->dims[2] * v->dims[3],
			   v->dims[3], 1, (uint64_t)v->dims[2] * v->dims[3] };
	struct npu_tensor *t;
	int ret = npu_tensor_create(v->dtype, 4, dims, &t);

	if (ret)
		return ret;
	ret = npu_tensor_set_strides(t, st);
	if (!ret)
		ret = npu__value_set_quant(t, v, nchw_to_nhwc);
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

int npu__graph_make_op(struct npu_graph *g, const struct gnode *n,
		       const struct gbind *bind_in, const struct gbind *bind_out,
		       struct npu_op **out)
{
	struct npu_tensor *in[GNODE_MAX_INPUTS] = { 0 }, *y = NULL;
	const struct gvalue *vo = &g->v[n->out];
	bool nchw = (n->flags & NPU_NODE_NCHW) &&
		    (n->op.kind == NPU_OP_CONV2D || n->op.kind == NPU_OP_POOL2D ||
		     n->op.kind == NPU_OP_RESIZE ||
		     n->op.kind == NPU_OP_CONV_TRANSPOSE);
	uint32_t i, nin = n->num_inputs;
	int ret = 0;

	if (n->kind != NPU_NODE_OP)
		return -EINVAL;
	if (nchw) {
		if (vo->rank != 4 || g->v[n->in[0]].rank != 4)
			return npu__graph_fail(g, "node %s (%s): NCHW needs 4-D X and Y", n->name,
					       npu__node_op_name(n));
	}
	if (nin > 3)
		return npu__graph_fail(g, "node %s (%s): %u inputs, ops take at most 3", n->name,
				       npu__node_op_name(n), nin);
	for (i = 0; i < nin && !ret; i++) {
		const struct gvalue *v;

		if (n->in[i] == NPU_VALUE_NONE)
			continue;
		v = &g->v[n->in[i]];
		if (nchw && i == 1 && !(n->flags & GNODE_W_PACKED)) {
			if (v->rank != 4)
				return npu__graph_fail(g, "node %s (%s): W must be 4-D", n->name,
						       npu__node_op_name(n));
			ret = oihw_view(v, &bind_in[i], &in[i]);
		} else {
			ret = npu__graph_tensor(v, nchw && i == 0, bind_in[i].buf,
						bind_in[i].offset, bind_in[i].host, &in[i]);
		}
	}
	if (!ret)
		ret = npu__graph_tensor(vo, nchw, bind_out->buf, bind_out->offset,
					bind_out->host, &y);
	if (!ret) {
		ret = npu__op_create(&n->op, (const struct npu_tensor *const *)in,
				    nin, y, out);
		if (ret == -EINVAL)
			npu__graph_fail(g, "node %s (%s): shapes, dtypes or parameters the op set does not define",
					n->name, npu__node_op_name(n));
	} else if (ret == -EINVAL || ret == -EOVERFLOW) {
		npu__graph_fail(g, "node %s (%s): a value cannot be an operand", n->name,
				npu__node_op_name(n));
		ret = -EINVAL;
	}
	for (i = 0; i < nin; i++)
		npu_tensor_free(in[i]);
	npu_tensor_free(y);
	return ret;
}

uint64_t npu__node_macs(const struct npu_graph *g, const struct gnode *n)
{
	const struct gvalue *y = &g->v[n->out], *a, *w;
	uint64_t k;

	if (n->kind != NPU_NODE_OP)
		return 0;
	switch (n->op.kind) {
	case NPU_OP_GEMM:
		a = &g->v[n->in[0]];
		if (a->rank < 2)
			return 0;
		k = (n->op.gemm.flags & NPU_GEMM_TRANS_A) ? a->dims[a->rank - 2] :
							     a->dims[a->rank - 1];
		return y->elems * k;
	case NPU_OP_CONV2D:
		w = &g->v[n->in[1]];
		if (w->rank != 4)
			return 0;
		/* KH*KW*C/groups in either weight layout */
		return y->elems * (w->elems / w->dims[0]);
	case NPU_OP_CONV_TRANSPOSE:
		/* every input element meets KH*KW*CO/groups taps */
		w = &g->v[n->in[1]];
		if (w->rank != 4)
			return 0;
		return g->v[n->in[0]].elems * (w->elems / w->dims[0]);
	default:
		return 0;
	}
}

/* ---- Support query ------------------------------------------------------ */

/*
 * A context and a buffer that exist only so the op layer can plan device
 * commands: nothing is ever submitted or mapped.  Per-tensor quantization
 * is all a graph value carries, so planning allocates no buffer.
 */
struct query_dev {
	struct npu_context ctx;
	struct npu_buffer buf;
};

static void query_dev_init(struct query_dev *q,
			   const struct npu_device_limits *lim)
{
	memset(q, 0, sizeof(*q));
	atomic_init(&q->ctx.refs, 1);
	q->ctx.fd = -1;
	q->ctx.info.caps = NPU_CAP_COMPUTE;
	q->ctx.info.max_cmd_size = VNPU_CMD_MAX_BUFFER;
	if (lim)
		q->ctx.limits = *lim;
	pthread_mutex_init(&q->ctx.lock, NULL);
	/* Ours: the tensors' and ops' references never drop the last one. */
	atomic_init(&q->buf.refs, 1);
	q->buf.ctx = &q->ctx;
	q->buf.size = 1ull << 48;
	q->buf.va = 1ull << 32;
	pthread_mutex_init(&q->buf.map_lock, NULL);
}

static bool float_dtype(enum npu_dtype d)
{
	return d == NPU_DTYPE_FP32 || d == NPU_DTYPE_FP16 || d == NPU_DTYPE_BF16;
}

NPU_EXPORT int npu_graph_node_supported(struct npu_graph *g, uint32_t id,
					const struct npu_device_limits *limits,
					size_t limits_size, const char **reason)
{
	struct npu_device_limits lim;
	struct gbind bind[GNODE_MAX_INPUTS], bout;
	struct query_dev *q;
	struct gnode *n, as_div;
	struct npu_op *ops[GNODE_MAX_OPS] = { 0 };
	const char *why = NULL;
	size_t nops = 0;
	uint32_t i;
	int ret;

	if (!g)
		return -EINVAL;
	g->err[0] = 0;
	if (limits) {
		/* Limits an older caller does not know are the defaults (0). */
		ret = npu__struct_in(&lim, sizeof(lim), limits, limits_size);
		if (ret)
			return ret;
		limits = &lim;
	}
	if (id >= g->nn)
		return npu__graph_fail(g, "no node %u", id);
	n = &g->n[id];
	switch (n->kind) {
	case NPU_NODE_KERNEL:
		if (reason)
			*reason = "a CPU kernel";
		return 0;
	case NPU_NODE_RESHAPE:
		if (g->v[n->in[0]].elems != g->v[n->out].elems ||
		    g->v[n->in[0]].dtype != g->v[n->out].dtype)
			return npu__graph_fail(g, "node %s (RESHAPE): element count or dtype differs",
					       n->name);
		return 1;
	case NPU_NODE_BATCHNORM:
		if (!float_dtype(g->v[n->in[0]].dtype)) {
			if (reason)
				*reason = "BATCHNORM of a non-float tensor";
			return 0;
		}
		return 1;
	case NPU_NODE_DIV:
		if (n->num_inputs == 2 && n->in[1] != NPU_VALUE_NONE &&
		    g->v[n->in[1]].data && g->v[n->in[1]].dtype == NPU_DTYPE_FP32)
			return 1;	/* a MUL by the reciprocals */
		break;		/* ELTWISE DIV, as compile makes it */
	default:
		break;
	}
	q = malloc(sizeof(*q));
	if (!q)
		return -ENOMEM;
	query_dev_init(q, limits);
	for (i = 0; i < GNODE_MAX_INPUTS; i++)
		bind[i] = (struct gbind){ .buf = &q->buf };
	bout = (struct gbind){ .buf = &q->buf };
	if (n->kind == NPU_NODE_DIV) {
		as_div = *n;
		as_div.kind = NPU_NODE_OP;
		memset(&as_div.op, 0, sizeof(as_div.op));
		as_div.op.kind = NPU_OP_ELTWISE;
		as_div.op.eltwise.kind = NPU_ELTWISE_DIV;
		n = &as_div;
	}
	ret = npu__graph_make_ops(g, n, bind, &bout, ops, &nops);
	/* a node of several ops is the device's if all of them are */
	for (i = 0; !ret && i < nops; i++) {
		ret = npu_op_supported(ops[i], &why);
		if (ret == 0 && why) {
			snprintf(g->reason, sizeof(g->reason), "%s", why);
			if (reason)
				*reason = g->reason;
		}
	}
	for (i = 0; i < nops; i++)
		npu_op_free(ops[i]);
	pthread_mutex_destroy(&q->buf.map_lock);
	pthread_mutex_destroy(&q->ctx.lock);
	free(q);
	return ret;
}
