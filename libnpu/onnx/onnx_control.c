// SPDX-License-Identifier: MIT
/*
 * Control flow whose path is known at import: an If whose condition is a
 * constant (exporters branch on a shape or a sample rate the importer has
 * folded) is its chosen branch, imported inline.  The branch's nodes
 * read the enclosing graph's names directly, its initializers become
 * constants, and its outputs become the If's outputs, so the branch
 * joins the one partitioned graph like any other nodes: its convolutions
 * run on the device, its LSTM on the CPU.  Loop and Scan are unrolled
 * the same way where import knows their iteration counts (onnx_loop.c);
 * an If on a runtime condition needs a graph runtime that executes
 * subgraphs, which libnpu does not have yet, and is refused by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

static const Onnx__GraphProto *branch_of(const struct nctx *c, const char *name)
{
	const Onnx__AttributeProto *a = oi_attr(c, name);

	return a ? a->g : NULL;
}

/* The If's output @k is the branch's output @from (a constant or a value). */
static int alias_output(struct nctx *c, const char *to, const char *from)
{
	struct imp *im = c->im;
	struct sym *src = oi_lookup(im, from), *dst;
	int ret;

	if (!src)
		return oi_fail(im, "the branch's output '%s' is not computed by any of its nodes",
			       from);
	if (src->poisoned)
		return oi_fail(im, "the branch's output '%s' comes from a refused node", from);
	ret = oi_add_sym(im, to, &dst);
	if (ret)
		return ret;
	/* oi_add_sym may move the table: look the source up again */
	src = oi_lookup(im, from);
	if (src->is_const) {
		ret = ctensor_copy(&src->c, &dst->c, &im->consts);
		if (ret)
			return oi_fold_fail(im, ret);
		dst->is_const = true;
		return 0;
	}
	dst->value = src->value;
	dst->dtype = src->dtype;
	dst->rank = src->rank;
	memcpy(dst->dims, src->dims, sizeof(dst->dims));
	return 0;
}

int oi_op_if(struct nctx *c)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *node = c->n;
	const Onnx__GraphProto *outer = im->gp, *b;
	struct sym *cond = c->nin ? c->in[0] : NULL;
	size_t *order = NULL, i;
	int ret;

	if (!cond || !cond->is_const)
		return oi_fail(im, "an If whose condition is only known at run time is not supported (no subgraph execution yet)");
	if (cond->c.n != 1)
		return oi_fail(im, "the condition has %llu elements, not one",
			       (unsigned long long)cond->c.n);
	b = branch_of(c, ctensor_get(&cond->c, 0) != 0 ? "then_branch" : "else_branch");
	if (!b)
		return oi_fail(im, "the %s attribute (a graph) is missing",
			       ctensor_get(&cond->c, 0) != 0 ? "then_branch" : "else_branch");
	if (b->n_output != node->n_output)
		return oi_fail(im, "the branch has %zu outputs, the If %zu", b->n_output,
			       node->n_output);
	if (b->n_sparse_initializer)
		return oi_fail(im, "the branch's sparse initializers are not supported");
	if (b->n_node > im->lim.max_nodes)
		return oi_fail(im, "the branch has %zu nodes, over the limit of %u (npu_onnx_options.max_nodes)",
			       b->n_node, im->lim.max_nodes);
	for (i = 0; i < b->n_initializer; i++) {
		const Onnx__TensorProto *tp = b->initializer[i];
		struct sym *s;

		ret = oi_add_sym(im, tp->name, &s);
		if (ret)
			return ret;
		ret = ctensor_from_proto(tp, &s->c, im->err, im->err_size);
		if (ret)
			return ret == -ENOMEM ? oi_nomem(im) :
			       oi_fail(im, "the branch's initializer '%s' is malformed", tp->name);
		s->is_const = true;
	}
	/* the branch's nodes, ordered and imported as the graph's are */
	im->gp = b;
	ret = oi_order_nodes(im, &order);
	if (!ret)
		ret = oi_import_nodes(im, order, c->opset);
	im->gp = outer;
	im->node = node;
	free(order);
	if (ret)
		return ret;
	for (i = 0; i < node->n_output && !ret; i++) {
		if (!node->output[i] || !*node->output[i])
			continue;
		if (!b->output[i]->name)
			return oi_fail(im, "the branch's output %zu has no name", i);
		ret = alias_output(c, node->output[i], b->output[i]->name);
	}
	return ret;
}
