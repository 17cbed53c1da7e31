// SPDX-License-Identifier: MIT
/*
 * If.  One whose condition is a constant (exporters branch on a shape or
 * a sample rate the importer has folded) is its chosen branch, imported
 * inline.  The branch's nodes read the enclosing graph's names directly,
 * its initializers become constants, and its outputs become the If's
 * outputs, so the branch joins the one partitioned graph like any other
 * nodes: its convolutions run on the device, its LSTM on the CPU.  Loop
 * and Scan are unrolled the same way where import knows their iteration
 * counts (onnx_loop.c).
 *
 * One whose condition only a run can tell (openWakeWord's classifiers run
 * a verifier network when the first one's score passes a threshold) is
 * predicated: both branches are imported inline and each output is
 * Where(condition, then's, else's).  libnpu's graphs are static, with no
 * runtime that could execute one subgraph or the other, and a select
 * gives the chosen branch's values exactly, at the cost of computing
 * both.  That is only sound where the branch not chosen can neither fail
 * nor change the output's shape, so it is refused, with the reason, when
 * the branches' outputs differ in shape or type, or when a branch reads
 * indices from runtime data (a Gather whose index is meant for the other
 * branch may be out of range).  A branch that fails on its data in
 * another way (an integer division by zero) fails the run even when not
 * chosen.
 */
#include <errno.h>
#include <stdio.h>
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
	if (src->seq)
		return oi_seq_copy(im, dst, src->seq);
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

/*
 * Ops that read indices from their input @index: run on the branch an If
 * did not choose, runtime indices may be out of range and fail the run,
 * so a predicated If takes them only with constant indices (a Gather of a
 * Shape, say, which import folds).
 */
static const struct {
	const char *op;
	size_t index;
} indexed_ops[] = {
	{ "Gather", 1 }, { "GatherElements", 1 }, { "GatherND", 1 }, { "Scatter", 1 },
	{ "ScatterElements", 1 }, { "ScatterND", 1 },
};

/*
 * The first node of imported branch @g reading runtime indices, NULL if
 * none.  In an If inside it, an index import never saw belongs to the
 * branch that If did not import (its condition was constant); in a Loop
 * or Scan body, renamed as it was unrolled, every indexed node counts.
 */
static const Onnx__NodeProto *runtime_indexed_node(struct imp *im, const Onnx__GraphProto *g,
						   bool in_body, unsigned int depth)
{
	size_t i, k, a;

	if (!g)
		return NULL;
	for (i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i], *inner;

		for (k = 0; k < sizeof(indexed_ops) / sizeof(indexed_ops[0]); k++) {
			const struct sym *idx;

			if (!n->op_type || strcmp(n->op_type, indexed_ops[k].op))
				continue;
			if (n->n_input <= indexed_ops[k].index)
				continue;
			idx = oi_lookup(im, n->input[indexed_ops[k].index]);
			if (in_body || (idx && !idx->is_const) || (!idx && !depth))
				return n;
		}
		for (a = 0; a < n->n_attribute && depth < 64; a++) {
			const Onnx__AttributeProto *at = n->attribute[a];
			bool body = in_body || !n->op_type || strcmp(n->op_type, "If");

			inner = runtime_indexed_node(im, at->g, body, depth + 1);
			for (k = 0; !inner && k < at->n_graphs; k++)
				inner = runtime_indexed_node(im, at->graphs[k], body, depth + 1);
			if (inner)
				return inner;
		}
	}
	return NULL;
}

/* Branch @b's initializers and nodes, imported into the enclosing graph. */
static int import_branch(struct nctx *c, const Onnx__GraphProto *b, const char *which)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *node = c->n;
	const Onnx__GraphProto *outer = im->gp;
	size_t *order = NULL, i;
	int ret;

	if (b->n_output != node->n_output)
		return oi_fail(im, "the %s has %zu outputs, the If %zu", which, b->n_output,
			       node->n_output);
	if (b->n_sparse_initializer)
		return oi_fail(im, "the %s's sparse initializers are not supported", which);
	if (b->n_node > im->lim.max_nodes)
		return oi_fail(im, "the %s has %zu nodes, over the limit of %u (npu_onnx_options.max_nodes)",
			       which, b->n_node, im->lim.max_nodes);
	for (i = 0; i < b->n_output; i++)
		if (!b->output[i]->name || !*b->output[i]->name)
			return oi_fail(im, "the %s's output %zu has no name", which, i);
	for (i = 0; i < b->n_initializer; i++) {
		const Onnx__TensorProto *tp = b->initializer[i];
		struct sym *s;

		ret = oi_add_sym(im, tp->name, &s);
		if (ret)
			return ret;
		ret = ctensor_from_proto(tp, &s->c, im->err, im->err_size);
		if (ret)
			return ret == -ENOMEM ? oi_nomem(im) :
			       oi_fail(im, "the %s's initializer '%s' is malformed", which, tp->name);
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
	return ret;
}

static char *derived_name(const char *base, const char *what)
{
	size_t len = strlen(base) + strlen(what) + 2;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s/%s", base, what);
	return s;
}

/* Output @k's two values have one shape and one type, or the If is refused. */
static int same_output_type(struct nctx *c, size_t k, const char *t, const char *e)
{
	struct imp *im = c->im;
	struct sym *a = oi_lookup(im, t), *b = oi_lookup(im, e);
	uint32_t ra, rb, da[NPU_TENSOR_MAX_RANK], db[NPU_TENSOR_MAX_RANK];
	int ret;

	if (!a || !b)
		return oi_fail(im, "the branch's output '%s' is not computed by any of its nodes",
			       a ? e : t);
	if (a->poisoned || b->poisoned)
		return oi_fail(im, "the branch's output '%s' comes from a refused node",
			       a->poisoned ? t : e);
	ret = oi_sym_shape(c, a, &ra, da);
	if (!ret)
		ret = oi_sym_shape(c, b, &rb, db);
	if (ret)
		return ret;
	if (oi_sym_dtype(a) != oi_sym_dtype(b))
		return oi_fail(im, "output %zu is %s in the then_branch and %s in the else_branch: an If on a runtime condition runs both branches and needs one type",
			       k, onnx_type_name(oi_onnx_of_dtype(oi_sym_dtype(a))),
			       onnx_type_name(oi_onnx_of_dtype(oi_sym_dtype(b))));
	if (ra != rb || memcmp(da, db, ra * sizeof(*da)))
		return oi_fail(im, "output %zu has another shape in each branch: an If on a runtime condition runs both branches and needs one shape",
			       k);
	return 0;
}

/* Both branches, each output selected by the condition at run time. */
static int predicate(struct nctx *c, struct sym *cond)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *node = c->n, *bad;
	const Onnx__GraphProto *t = branch_of(c, "then_branch"), *e = branch_of(c, "else_branch");
	uint32_t rank, dims[NPU_TENSOR_MAX_RANK];
	const char *cond_name = node->input[0];
	char *scalar = NULL, *shape = NULL;
	size_t i;
	int ret;

	if (!t || !e)
		return oi_fail(im, "the %s attribute (a graph) is missing",
			       t ? "else_branch" : "then_branch");
	ret = oi_sym_shape(c, cond, &rank, dims);
	if (ret)
		return ret;
	for (i = 0; i < rank; i++)
		if (dims[i] != 1)
			return oi_fail(im, "the condition has %u dimensions not all 1, not one element",
				       rank);
	ret = import_branch(c, t, "then_branch");
	if (!ret)
		ret = import_branch(c, e, "else_branch");
	if (ret)
		return ret;
	bad = runtime_indexed_node(im, t, false, 0);
	if (!bad)
		bad = runtime_indexed_node(im, e, false, 0);
	if (bad)
		return oi_fail(im, "an If whose condition is only known at run time runs both branches, and the %s '%s' in one reads runtime indices, which may be out of range where its branch is not chosen",
			       bad->op_type, bad->name && *bad->name ? bad->name : "(unnamed)");
	/* a condition [1] (or [1, 1]) would broadcast a scalar output to its rank */
	if (rank) {
		static const int64_t none[1];
		const char *ins[2];
		struct sym *s;

		scalar = derived_name(c->name, "condition");
		shape = derived_name(c->name, "condition_shape");
		if (!scalar || !shape) {
			ret = oi_nomem(im);
			goto out;
		}
		ret = oi_add_sym(im, shape, &s);
		if (ret)
			goto out;
		if (ctensor_vec_i(none, 0, &s->c)) {
			ret = oi_nomem(im);
			goto out;
		}
		s->is_const = true;
		ins[0] = cond_name;
		ins[1] = shape;
		ret = oi_synth(c, "Reshape", ins, 2, scalar, NULL, 0);
		if (ret)
			goto out;
		cond_name = scalar;
	}
	for (i = 0; i < node->n_output && !ret; i++) {
		const char *ins[3] = { cond_name, t->output[i]->name, e->output[i]->name };

		if (!node->output[i] || !*node->output[i])
			continue;
		ret = same_output_type(c, i, ins[1], ins[2]);
		if (!ret)
			ret = oi_synth(c, "Where", ins, 3, node->output[i], NULL, 0);
	}
out:
	free(scalar);
	free(shape);
	return ret;
}

int oi_op_if(struct nctx *c)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *node = c->n;
	struct sym *cond = c->nin ? c->in[0] : NULL;
	const char *which;
	const Onnx__GraphProto *b;
	size_t i;
	int ret;

	if (!cond)
		return oi_fail(im, "the condition input is missing");
	if (!cond->is_const)
		return predicate(c, cond);
	if (cond->c.n != 1)
		return oi_fail(im, "the condition has %llu elements, not one",
			       (unsigned long long)cond->c.n);
	which = ctensor_get(&cond->c, 0) != 0 ? "then_branch" : "else_branch";
	b = branch_of(c, which);
	if (!b)
		return oi_fail(im, "the %s attribute (a graph) is missing", which);
	ret = import_branch(c, b, which);
	for (i = 0; i < node->n_output && !ret; i++) {
		if (!node->output[i] || !*node->output[i])
			continue;
		ret = alias_output(c, node->output[i], b->output[i]->name);
	}
	return ret;
}
