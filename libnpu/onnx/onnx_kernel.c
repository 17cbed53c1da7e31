// SPDX-License-Identifier: MIT
/*
 * Nodes run by a CPU kernel (npu/kernel.h): a built-in ONNX op without a
 * device lowering, or an application's custom op.  The kernel's infer()
 * gives the outputs' dtypes and shapes; a node whose inputs are all
 * constants is folded here by running the kernel once (so shape
 * arithmetic on int64 tensors never reaches the graph), anything else
 * becomes an NPU_NODE_KERNEL graph node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "ok_util.h"

/* Work units all folds of one import may take together. */
#define FOLD_WORK_LIMIT		NPU_CPU_DEFAULT_MAX_WORK

int oi_onnx_of_dtype(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DTYPE_FP32: return OT_FLOAT;
	case NPU_DTYPE_FP16: return OT_FLOAT16;
	case NPU_DTYPE_BF16: return OT_BFLOAT16;
	case NPU_DTYPE_INT8: return OT_INT8;
	case NPU_DTYPE_UINT8: return OT_UINT8;
	case NPU_DTYPE_INT32: return OT_INT32;
	case NPU_DTYPE_INT64: return OT_INT64;
	case NPU_DTYPE_BOOL: return OT_BOOL;
	case NPU_DTYPE_FP64: return OT_DOUBLE;
	case NPU_DTYPE_INT16: return OT_INT16;
	case NPU_DTYPE_UINT16: return OT_UINT16;
	case NPU_DTYPE_UINT32: return OT_UINT32;
	case NPU_DTYPE_UINT64: return OT_UINT64;
	}
	return 0;
}

/* A constant's shape as a kernel tensor's; -EINVAL for what graphs cannot hold. */
static int const_shape(struct imp *im, const struct sym *s, struct npu_kernel_tensor *t)
{
	uint32_t i;

	if (s->c.rank > NPU_TENSOR_MAX_RANK)
		return oi_fail(im, "constant '%s' has rank %u, above %d", s->name, s->c.rank,
			       NPU_TENSOR_MAX_RANK);
	t->rank = s->c.rank;
	for (i = 0; i < s->c.rank; i++) {
		if (s->c.dims[i] > UINT32_MAX)
			return oi_fail(im, "constant '%s' has a huge dimension", s->name);
		t->dims[i] = (uint32_t)s->c.dims[i];
	}
	t->elems = s->c.n;
	return 0;
}

/* The constant's elements in @t->dtype, in a new buffer @t->data. */
static int const_data(struct imp *im, const struct sym *s, struct npu_kernel_tensor *t)
{
	size_t es = npu_dtype_size(t->dtype);
	uint64_t k;

	t->data = malloc(t->elems * es + 1);
	if (!t->data)
		return oi_nomem(im);
	for (k = 0; k < t->elems; k++) {
		if (ct_is_float(&s->c))
			ok_set_f(t, k, s->c.f[k]);
		else
			ok_set_i(t, k, s->c.i[k]);
	}
	return 0;
}

/* A static graph value of the constant's own dtype (a kernel's operand). */
static int kernel_value_of(struct imp *im, struct sym *s, const struct npu_kernel_tensor *t,
			   uint32_t *id)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	int ret;

	if (s->kvalue != NPU_VALUE_NONE) {
		*id = s->kvalue;
		return 0;
	}
	if (!t->data)
		return oi_fail(im, "constant '%s' has no data", s->name);
	d.name = s->name;
	d.dtype = t->dtype;
	d.rank = t->rank;
	memcpy(d.dims, t->dims, sizeof(d.dims));
	d.data = t->data;
	ret = oi_check_value_size(im, s->name, d.dtype, d.rank, d.dims);
	if (ret)
		return ret;
	ret = npu_graph_add_value(im->m->g, &d, &s->kvalue);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) :
			oi_fail(im, "constant '%s': %s", s->name, npu_graph_error(im->m->g));
	*id = s->kvalue;
	return 0;
}

int oi_exact_value_of(struct imp *im, struct sym *s, uint32_t *id)
{
	struct npu_kernel_tensor t = { 0 };
	int ret;

	if (s->kvalue != NPU_VALUE_NONE) {
		*id = s->kvalue;
		return 0;
	}
	t.dtype = onnx_npu_dtype(s->c.dt);
	if (!t.dtype)
		return oi_fail(im, "constant '%s' is of type %s, which is not supported", s->name,
			       onnx_type_name(s->c.dt));
	ret = const_shape(im, s, &t);
	if (!ret)
		ret = const_data(im, s, &t);
	if (!ret)
		ret = kernel_value_of(im, s, &t, id);
	free(t.data);
	return ret;
}

static int budget_take(struct cbudget *b, uint64_t bytes)
{
	if (b->used + bytes < b->used || b->used + bytes > b->limit) {
		b->want = b->used + bytes < b->used ? UINT64_MAX : b->used + bytes;
		return -EDQUOT;
	}
	b->used += bytes;
	return 0;
}

/* Output @t of a fold as the constant of symbol @s. */
static int fold_output(struct imp *im, struct sym *s, const struct npu_kernel_tensor *t)
{
	struct ctensor *c = &s->c;
	bool fl = ok_is_float(t->dtype);
	uint64_t k;
	uint32_t i;
	int ret;

	ret = budget_take(&im->consts, t->elems * (fl ? 4 : 8));
	if (ret)
		return oi_fold_fail(im, ret);
	c->dt = oi_onnx_of_dtype(t->dtype);
	c->rank = t->rank;
	for (i = 0; i < t->rank; i++)
		c->dims[i] = t->dims[i];
	c->n = t->elems;
	if (fl)
		c->f = malloc(t->elems * sizeof(float) + 1);
	else
		c->i = malloc(t->elems * sizeof(int64_t) + 1);
	if (fl ? !c->f : !c->i)
		return oi_nomem(im);
	for (k = 0; k < t->elems; k++) {
		if (fl)
			c->f[k] = (float)ok_get_f(t, k);
		else
			c->i[k] = ok_get_i(t, k);
	}
	s->is_const = true;
	return 0;
}

static uint64_t kernel_work(const struct npu_onnx_op *op, const void *state, size_t nin,
			    const struct npu_kernel_tensor *const *in, size_t nout,
			    const struct npu_kernel_tensor *const *out)
{
	uint64_t w = 0;
	size_t k;

	if (op->kernel->work)
		return op->kernel->work(state, nin, in, nout, out);
	for (k = 0; k < nin; k++)
		w += in[k] ? in[k]->elems : 0;
	for (k = 0; k < nout; k++)
		w += out[k] ? out[k]->elems : 0;
	return w;
}

struct kcall {
	struct npu_kernel_tensor tin[NPU_KERNEL_MAX_INPUTS];
	struct npu_kernel_tensor tout[NPU_KERNEL_MAX_OUTPUTS];
	struct npu_kernel_tensor *in[NPU_KERNEL_MAX_INPUTS];
	struct npu_kernel_tensor *out[NPU_KERNEL_MAX_OUTPUTS];
};

static void kcall_free(struct kcall *k, size_t nin, size_t nout)
{
	size_t i;

	for (i = 0; i < nin; i++)
		free(k->tin[i].data);
	for (i = 0; i < nout; i++)
		free(k->tout[i].data);
}

/* Run the kernel now: every input is a constant. */
static int fold(struct nctx *c, const struct npu_onnx_op *op, void *state, struct kcall *k,
		size_t nout)
{
	struct imp *im = c->im;
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	char msg[256] = "";
	uint64_t work;
	size_t i;
	int ret;

	work = kernel_work(op, state, c->nin, (const struct npu_kernel_tensor *const *)k->in,
			   nout, (const struct npu_kernel_tensor *const *)k->out);
	if (work > FOLD_WORK_LIMIT - im->fold_work)
		return oi_fail(im, "folding this node takes %llu work units, over the %llu left of the import's folding budget",
			       (unsigned long long)work,
			       (unsigned long long)(FOLD_WORK_LIMIT - im->fold_work));
	im->fold_work += work;
	for (i = 0; i < nout; i++) {
		if (!k->out[i])
			continue;
		k->tout[i].data = calloc(1, k->tout[i].elems * npu_dtype_size(k->tout[i].dtype) + 1);
		if (!k->tout[i].data)
			return oi_nomem(im);
	}
	lim.max_work = work ? work : 1;
	ret = npu_kernel_run(op->kernel, state, c->nin,
			     (const struct npu_kernel_tensor *const *)k->in, nout, k->out, &lim,
			     msg, sizeof(msg));
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) : oi_fail(im, "%s", msg);
	for (i = 0; i < nout; i++) {
		struct sym *s;

		if (!k->out[i])
			continue;
		ret = oi_add_sym(im, c->n->output[i], &s);
		if (!ret)
			ret = fold_output(im, s, &k->tout[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Add the NPU_NODE_KERNEL node; the graph takes @state. */
static int add_node(struct nctx *c, const struct npu_onnx_op *op, void *state,
		    struct kcall *k, size_t nout)
{
	struct imp *im = c->im;
	struct npu_kernel_node_desc d = NPU_KERNEL_NODE_DESC_INIT;
	uint32_t ins[NPU_KERNEL_MAX_INPUTS], outs[NPU_KERNEL_MAX_OUTPUTS];
	uint64_t max = (uint64_t)im->lim.max_nodes * GRAPH_NODES_PER_NODE;
	size_t i;
	int ret = 0;

	for (i = 0; i < c->nin && !ret; i++) {
		ins[i] = NPU_VALUE_NONE;
		if (!c->in[i])
			continue;
		if (c->in[i]->is_const)
			ret = kernel_value_of(im, c->in[i], &k->tin[i], &ins[i]);
		else
			ins[i] = c->in[i]->value;
	}
	for (i = 0; i < nout && !ret; i++) {
		struct sym *s = NULL;

		outs[i] = NPU_VALUE_NONE;
		if (!k->out[i])
			continue;
		ret = oi_add_sym(im, c->n->output[i], &s);
		if (!ret)
			ret = oi_new_value(im, s, k->tout[i].dtype, k->tout[i].rank,
					   k->tout[i].dims);
		outs[i] = s ? s->value : NPU_VALUE_NONE;
	}
	if (!ret && npu_graph_num_nodes(im->m->g) >= max)
		ret = oi_fail(im, "graph nodes would exceed %llu (npu_onnx_options.max_nodes)",
			      (unsigned long long)max);
	if (ret) {
		if (op->kernel->release)
			op->kernel->release(state);
		return ret;
	}
	d.name = c->name;
	d.kernel = op->kernel;
	d.state = state;
	d.num_inputs = (uint32_t)c->nin;
	d.inputs = ins;
	d.num_outputs = (uint32_t)nout;
	d.outputs = outs;
	ret = npu_graph_add_kernel_node(im->m->g, &d, NULL);
	if (ret)
		return ret == -ENOMEM ? oi_nomem(im) : oi_fail(im, "%s", npu_graph_error(im->m->g));
	/* a float16 result is computed on in float32 (oi_widen_fp16()) */
	for (i = 0; i < nout && !ret; i++)
		if (k->out[i])
			ret = oi_widen_fp16(im, oi_lookup(im, c->n->output[i]));
	return ret;
}

/* Every output the node has is empty: it has nothing to compute. */
static bool all_empty(const struct kcall *k, size_t nout)
{
	size_t i;

	for (i = 0; i < nout; i++)
		if (k->out[i] && k->out[i]->elems)
			return false;
	return true;
}

/*
 * The node's empty outputs as constants of no elements, so that the
 * nodes reading them fold or skip them; a kernel node that also has
 * outputs that are not empty keeps writing (nothing) to their values.
 */
static int empty_outputs(struct nctx *c, const struct kcall *k, size_t nout)
{
	struct imp *im = c->im;
	size_t i;
	int ret;

	for (i = 0; i < nout; i++) {
		const struct npu_kernel_tensor *t = k->out[i];
		struct sym *s;

		if (!t || t->elems)
			continue;
		s = oi_lookup(im, c->n->output[i]);
		ret = s ? 0 : oi_add_sym(im, c->n->output[i], &s);
		if (!ret)
			ret = oi_set_empty(im, s, t->dtype, t->rank, t->dims);
		if (ret)
			return ret;
	}
	return 0;
}

int oi_kernel_node(struct nctx *c, const struct npu_onnx_op *op)
{
	struct imp *im = c->im;
	struct npu_onnx_node node = { .n = c->n, .opset = c->opset };
	size_t nout = c->n->n_output, i;
	bool all_const = true;
	void *state = NULL;
	char msg[256] = "";
	struct kcall *k;
	int ret = 0;

	if (!op->kernel || !op->kernel->infer || !op->kernel->run)
		return oi_fail(im, "the op's kernel has no infer or run callback");
	if (!nout)
		return oi_fail(im, "no output");
	k = calloc(1, sizeof(*k));
	if (!k)
		return oi_nomem(im);
	for (i = 0; i < c->nin; i++) {
		struct sym *s = c->in[i];
		struct npu_kernel_tensor *t = &k->tin[i];

		if (!s)
			continue;
		k->in[i] = t;
		if (!s->is_const) {
			all_const = false;
			t->dtype = s->dtype;
			t->rank = s->rank;
			memcpy(t->dims, s->dims, sizeof(t->dims));
			t->elems = ok_elems(t);
			continue;
		}
		t->dtype = onnx_npu_dtype(s->c.dt);
		if (!t->dtype)
			ret = oi_fail(im, "constant '%s' is of type %s, which is not supported",
				      s->name, onnx_type_name(s->c.dt));
		if (!ret)
			ret = const_shape(im, s, t);
		if (!ret)
			ret = const_data(im, s, t);
		if (ret) {
			/* the constant, not the op, is what no kernel can take */
			im->kernel_input_refused = true;
			goto out;
		}
	}
	for (i = 0; i < nout; i++)
		if (c->n->output[i] && *c->n->output[i])
			k->out[i] = &k->tout[i];
	if (op->create) {
		ret = op->create(&node, op->opaque, &state, msg, sizeof(msg));
		if (ret) {
			ret = ret == -ENOMEM ? oi_nomem(im) :
			      oi_fail(im, "%s", *msg ? msg : "the op's create() refused the node");
			goto out;
		}
	}
	ret = op->kernel->infer(state, c->nin, (const struct npu_kernel_tensor *const *)k->in,
				nout, k->out, msg, sizeof(msg));
	if (ret) {
		ret = ret == -ENOMEM ? oi_nomem(im) :
		      oi_fail(im, "%s", *msg ? msg : "the op's infer() refused the node");
		goto release;
	}
	for (i = 0; i < nout; i++) {
		struct npu_kernel_tensor *t = k->out[i];

		if (!t)
			continue;
		if (!npu_dtype_size(t->dtype) || t->rank > NPU_TENSOR_MAX_RANK) {
			ret = oi_fail(im, "output %zu: the kernel inferred no valid dtype or rank", i);
			goto release;
		}
		t->elems = ok_elems(t);
		ret = oi_check_value_size(im, c->n->output[i], t->dtype, t->rank, t->dims);
		if (ret)
			goto release;
	}
	/*
	 * Nothing to compute, so the kernel does not run (kernels assume
	 * outputs that are not empty); the checks of its run are not made,
	 * but a fold of the same constants that refused them stands.
	 */
	if (all_empty(k, nout)) {
		if (all_const && im->fold_refused) {
			im->kernel_input_refused = true;
			ret = -EINVAL;
		} else {
			ret = empty_outputs(c, k, nout);
		}
		goto release;
	}
	if (all_const) {
		ret = fold(c, op, state, k, nout);
		goto release;
	}
	ret = add_node(c, op, state, k, nout);
	if (!ret)
		ret = empty_outputs(c, k, nout);
	goto out;
release:
	if (op->kernel->release)
		op->kernel->release(state);
out:
	kcall_free(k, c->nin, nout);
	free(k);
	return ret;
}
