// SPDX-License-Identifier: MIT
/* npu-quantize: opset upgrade (see npu-quantize-opset.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu-quantize-opset.h"
#include "npu-quantize-qdq.h"

#define T_FLOAT	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define T_INT64	ONNX__TENSOR_PROTO__DATA_TYPE__INT64

static const struct {
	const char *op;
	int64_t since;
} refused[] = {
	{ "Upsample", 10 }, { "Resize", 11 }, { "Scatter", 11 },
};

Onnx__OperatorSetIdProto *qo_default_opset(Onnx__ModelProto *mp)
{
	size_t i;

	for (i = 0; i < mp->n_opset_import; i++) {
		const char *d = mp->opset_import[i]->domain;

		if (!d || !*d || !strcmp(d, "ai.onnx"))
			return mp->opset_import[i];
	}
	return NULL;
}

static bool default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx");
}

static Onnx__AttributeProto *find_attr(const Onnx__NodeProto *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

static void drop_attr(Onnx__NodeProto *n, const char *name)
{
	size_t i, k = 0;

	for (i = 0; i < n->n_attribute; i++) {
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			onnx__attribute_proto__free_unpacked(n->attribute[i], NULL);
		else
			n->attribute[k++] = n->attribute[i];
	}
	n->n_attribute = k;
}

static bool is_softmax(const char *op)
{
	return !strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax") || !strcmp(op, "Hardmax");
}

static const char *label(const Onnx__NodeProto *n)
{
	return n->name && *n->name ? n->name : n->output && n->n_output ? n->output[0] : "";
}

/* Before 13 these work on the input flattened to 2-D at @axis. */
static int check_softmax(const Onnx__NodeProto *n, qo_shape_fn shape, void *ctx, char *err,
			 size_t err_size)
{
	const Onnx__AttributeProto *a = find_attr(n, "axis");
	int64_t dims[16], axis = a ? a->i : 1, k, rest = 1;
	int rank;

	if (!shape || !n->n_input)
		return 0;
	rank = shape(ctx, n->input[0], dims, 16);
	if (rank < 0) {
		snprintf(err, err_size, "node '%s' (%s): its input's shape is unknown, so its meaning at opset 13 cannot be checked",
			 label(n), n->op_type);
		return -EINVAL;
	}
	if (axis < 0)
		axis += rank;
	for (k = axis + 1; k < rank; k++)
		rest *= dims[k];
	if (axis < 0 || axis >= rank || rest != 1) {
		snprintf(err, err_size,
			 "node '%s' (%s): axis %lld of a rank-%d input means another thing at opset 13 (a softmax over all the axes from it on, before)",
			 label(n), n->op_type, (long long)(a ? a->i : 1), rank);
		return -EINVAL;
	}
	return 0;
}

int qo_check(Onnx__ModelProto *mp, int64_t to, qo_shape_fn shape, void *ctx, char *err,
	     size_t err_size)
{
	Onnx__OperatorSetIdProto *os = qo_default_opset(mp);
	int64_t from = os ? os->version : 1;
	size_t i, k;

	for (i = 0; i < mp->graph->n_node; i++) {
		const Onnx__NodeProto *n = mp->graph->node[i];
		const char *op = n->op_type ? n->op_type : "";

		if (!default_domain(n))
			continue;
		for (k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
			if (!strcmp(op, refused[k].op) && from < refused[k].since && to >= refused[k].since) {
				snprintf(err, err_size,
					 "node '%s' (%s): the op changed at opset %lld, and npu-quantize does not convert it from the model's opset %lld to %lld",
					 label(n), op, (long long)refused[k].since, (long long)from,
					 (long long)to);
				return -EINVAL;
			}
		if (is_softmax(op) && from < 13 && to >= 13) {
			int ret = check_softmax(n, shape, ctx, err, err_size);

			if (ret)
				return ret;
		}
	}
	return 0;
}

static int add_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	Onnx__TensorProto **a;

	if (!t)
		return -ENOMEM;
	a = realloc(g->initializer, (g->n_initializer + 1) * sizeof(*a));
	if (!a) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return -ENOMEM;
	}
	g->initializer = a;
	a[g->n_initializer++] = t;
	return 0;
}

/* A name no tensor of @g has: <output>_<what>, numbered if need be. */
static char *fresh_name(const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *what)
{
	char buf[512];
	size_t i, k;

	for (k = 0;; k++) {
		bool taken = false;

		if (k)
			snprintf(buf, sizeof(buf), "%s_%s_%zu", label(n), what, k);
		else
			snprintf(buf, sizeof(buf), "%s_%s", label(n), what);
		for (i = 0; i < g->n_initializer && !taken; i++)
			taken = g->initializer[i]->name && !strcmp(g->initializer[i]->name, buf);
		for (i = 0; i < g->n_node && !taken; i++) {
			size_t j;

			for (j = 0; j < g->node[i]->n_output && !taken; j++)
				taken = !strcmp(g->node[i]->output[j], buf);
		}
		if (!taken)
			return strdup(buf);
	}
}

/* Input @slot of @n set to @name ("" for an absent optional input). */
static int set_input(Onnx__NodeProto *n, size_t slot, const char *name)
{
	char *d = strdup(name);

	if (!d)
		return -ENOMEM;
	if (slot >= n->n_input) {
		char **in = realloc(n->input, (slot + 1) * sizeof(*in));
		size_t i;

		if (!in) {
			free(d);
			return -ENOMEM;
		}
		n->input = in;
		for (i = n->n_input; i < slot; i++)
			if (!(in[i] = strdup(""))) {
				n->n_input = i;
				free(d);
				return -ENOMEM;
			}
		n->n_input = slot + 1;
	} else {
		free(n->input[slot]);
	}
	n->input[slot] = d;
	return 0;
}

enum attr_kind { A_INTS, A_FLOAT, A_INT_AS_1D };

/* Attribute @attr of @n moved to input @slot as an initializer. */
static int move_attr(Onnx__GraphProto *g, Onnx__NodeProto *n, const char *attr, size_t slot,
		     enum attr_kind kind)
{
	Onnx__AttributeProto *a = find_attr(n, attr);
	char *name;
	int64_t dim;
	int ret;

	if (!a)
		return slot < n->n_input ? 0 : set_input(n, slot, "");
	name = fresh_name(g, n, attr);
	if (!name)
		return -ENOMEM;
	dim = kind == A_INTS ? (int64_t)a->n_ints : 1;
	if (kind == A_FLOAT)
		ret = add_init(g, qq_new_tensor(name, T_FLOAT, NULL, 0, &a->f, sizeof(float)));
	else if (kind == A_INT_AS_1D)
		ret = add_init(g, qq_new_tensor(name, T_INT64, &dim, 1, &a->i, 8));
	else
		ret = add_init(g, qq_new_tensor(name, T_INT64, &dim, 1, a->ints, a->n_ints * 8));
	if (!ret)
		ret = set_input(n, slot, name);
	free(name);
	if (!ret)
		drop_attr(n, attr);
	return ret;
}

static int convert(Onnx__GraphProto *g, Onnx__NodeProto *n, int64_t from, int64_t to)
{
	const char *op = n->op_type;
	int ret = 0;

#define CROSSES(v)	(from < (v) && to >= (v))
	if (!strcmp(op, "Slice") && CROSSES(10)) {
		ret = move_attr(g, n, "starts", 1, A_INTS);
		if (!ret)
			ret = move_attr(g, n, "ends", 2, A_INTS);
		if (!ret && find_attr(n, "axes"))
			ret = move_attr(g, n, "axes", 3, A_INTS);
	} else if (!strcmp(op, "TopK") && CROSSES(10)) {
		if (find_attr(n, "k"))
			ret = move_attr(g, n, "k", 1, A_INT_AS_1D);
	} else if (!strcmp(op, "Clip") && CROSSES(11)) {
		bool has_max = find_attr(n, "max");

		ret = move_attr(g, n, "min", 1, A_FLOAT);
		if (!ret && has_max)
			ret = move_attr(g, n, "max", 2, A_FLOAT);
		/* no max: no absent trailing input either */
		if (!ret && !has_max && n->n_input == 2 && !*n->input[1]) {
			free(n->input[1]);
			n->n_input = 1;
		}
	} else if (!strcmp(op, "Pad") && CROSSES(11)) {
		ret = move_attr(g, n, "pads", 1, A_INTS);
		if (!ret && find_attr(n, "value"))
			ret = move_attr(g, n, "value", 2, A_FLOAT);
	} else if ((!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
		    !strcmp(op, "ReduceSum")) && CROSSES(13)) {
		if (find_attr(n, "axes"))
			ret = move_attr(g, n, "axes", 1, A_INTS);
	} else if (!strcmp(op, "Split") && CROSSES(13)) {
		if (find_attr(n, "split"))
			ret = move_attr(g, n, "split", 1, A_INTS);
	} else if (is_softmax(op) && CROSSES(13) && !find_attr(n, "axis")) {
		/* the default axis was 1 and is -1 now: write it down */
		Onnx__AttributeProto *a = malloc(sizeof(*a));
		Onnx__AttributeProto **l = realloc(n->attribute, (n->n_attribute + 1) * sizeof(*l));

		if (l)
			n->attribute = l;
		if (!a || !l) {
			free(a);
			return -ENOMEM;
		}
		onnx__attribute_proto__init(a);
		a->name = strdup("axis");
		a->has_type = 1;
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = 1;
		l[n->n_attribute++] = a;
		if (!a->name)
			return -ENOMEM;
	}
#undef CROSSES
	return ret;
}

int qo_upgrade(Onnx__ModelProto *mp, int64_t to, qo_shape_fn shape, void *ctx, char *err,
	       size_t err_size)
{
	Onnx__OperatorSetIdProto *os = qo_default_opset(mp);
	int64_t from = os ? os->version : 1;
	size_t i;
	int ret;

	if (!os || from >= to)
		return 0;
	ret = qo_check(mp, to, shape, ctx, err, err_size);
	if (ret)
		return ret;
	for (i = 0; i < mp->graph->n_node; i++) {
		Onnx__NodeProto *n = mp->graph->node[i];

		if (!default_domain(n) || !n->op_type)
			continue;
		ret = convert(mp->graph, n, from, to);
		if (ret) {
			snprintf(err, err_size, "node '%s' (%s): out of memory", label(n), n->op_type);
			return ret;
		}
	}
	os->version = to;
	return 0;
}
