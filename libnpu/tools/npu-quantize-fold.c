// SPDX-License-Identifier: MIT
/* npu-quantize: the model's preparation (see npu-quantize-fold.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu-quantize-fold.h"
#include "npu-quantize-qdq.h"

#define T_FLOAT	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static bool default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx");
}

static Onnx__TensorProto *find_init(const Onnx__GraphProto *g, const char *name)
{
	size_t i;

	for (i = 0; name && *name && i < g->n_initializer; i++)
		if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
			return g->initializer[i];
	return NULL;
}

/* Nodes reading @name (subgraphs included), and whether a graph output is it. */
static size_t readers(const Onnx__GraphProto *g, const char *name)
{
	size_t i, j, n = 0;

	for (i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *nd = g->node[i];

		for (j = 0; j < nd->n_input; j++)
			n += !strcmp(nd->input[j], name);
		for (j = 0; j < nd->n_attribute; j++) {
			size_t k;

			if (nd->attribute[j]->g)
				n += readers(nd->attribute[j]->g, name);
			for (k = 0; k < nd->attribute[j]->n_graphs; k++)
				n += readers(nd->attribute[j]->graphs[k], name);
		}
	}
	for (i = 0; i < g->n_output; i++)
		n += g->output[i]->name && !strcmp(g->output[i]->name, name);
	return n;
}

/* A float initializer's element count, -1 unless its data is inline and whole. */
static long long count_of(const Onnx__TensorProto *t)
{
	long long n = 1;
	size_t i;

	if (!t || t->data_type != T_FLOAT ||
	    (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return -1;
	for (i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || (t->dims[i] && n > (1ll << 40) / t->dims[i]))
			return -1;
		n *= t->dims[i];
	}
	if (t->has_raw_data && t->raw_data.len)
		return t->raw_data.len == (size_t)n * 4 ? n : -1;
	return t->n_float_data == (size_t)n ? n : -1;
}

/* The floats of @t, read or written in place whichever field holds them. */
static float get(const Onnx__TensorProto *t, long long i)
{
	float v;

	if (t->has_raw_data && t->raw_data.len) {
		memcpy(&v, t->raw_data.data + i * 4, 4);
		return v;
	}
	return t->float_data[i];
}

static void put(Onnx__TensorProto *t, long long i, float v)
{
	if (t->has_raw_data && t->raw_data.len)
		memcpy(t->raw_data.data + i * 4, &v, 4);
	else
		t->float_data[i] = v;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float def)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i]->f;
	return def;
}

static long long attr_i(const Onnx__NodeProto *n, const char *name, long long def)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i]->i;
	return def;
}

static Onnx__NodeProto *producer(const Onnx__GraphProto *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n_node; i++)
		if (g->node[i]->n_output && !strcmp(g->node[i]->output[0], name))
			return g->node[i];
	return NULL;
}

/* A bias of zeros for a Conv without one, named after its output. */
static int add_bias(Onnx__GraphProto *g, Onnx__NodeProto *conv, long long c)
{
	char name[512];
	float *zeros = calloc((size_t)c + 1, sizeof(*zeros));
	int64_t dim = c;
	Onnx__TensorProto *t, **a;
	char **in;
	int k = 0;

	do
		snprintf(name, sizeof(name), k ? "%s_bias_%d" : "%s_bias", conv->output[0], k);
	while (++k < 1000 && (find_init(g, name) || readers(g, name)));
	t = zeros ? qq_new_tensor(name, T_FLOAT, &dim, 1, zeros, (size_t)c * 4) : NULL;
	free(zeros);
	a = t ? realloc(g->initializer, (g->n_initializer + 1) * sizeof(*a)) : NULL;
	in = a ? realloc(conv->input, 3 * sizeof(*in)) : NULL;
	if (a)
		g->initializer = a;
	if (in)
		conv->input = in;
	if (!in || !(in[2] = strdup(name))) {
		if (t)
			onnx__tensor_proto__free_unpacked(t, NULL);
		return -ENOMEM;
	}
	if (conv->n_input < 3)
		conv->n_input = 3;
	g->initializer[g->n_initializer++] = t;
	return 0;
}

/* Initializer @t and the graph input old models list for it, removed and freed. */
static void drop_init(Onnx__GraphProto *g, Onnx__TensorProto *t, const char *name)
{
	size_t j;

	for (j = 0; j < g->n_initializer; j++)
		if (g->initializer[j] == t) {
			memmove(&g->initializer[j], &g->initializer[j + 1],
				(g->n_initializer - j - 1) * sizeof(*g->initializer));
			g->n_initializer--;
			break;
		}
	for (j = 0; j < g->n_input; j++)
		if (g->input[j]->name && !strcmp(g->input[j]->name, name)) {
			onnx__value_info_proto__free_unpacked(g->input[j], NULL);
			memmove(&g->input[j], &g->input[j + 1], (g->n_input - j - 1) * sizeof(*g->input));
			g->n_input--;
			break;
		}
	onnx__tensor_proto__free_unpacked(t, NULL);
}

/* Node @i removed, the Conv @conv writing its output instead. */
static void take_output(Onnx__GraphProto *g, size_t i, Onnx__NodeProto *conv)
{
	Onnx__NodeProto *n = g->node[i];
	char *out = conv->output[0];

	conv->output[0] = n->output[0];
	n->output[0] = out;
	onnx__node_proto__free_unpacked(n, NULL);
	memmove(&g->node[i], &g->node[i + 1], (g->n_node - i - 1) * sizeof(*g->node));
	g->n_node--;
}

/*
 * The Conv whose weight (and bias, when it has one) the node reading
 * @name alone may rewrite: @name is its output read by nothing else,
 * its weight and bias float initializers read by it only.
 */
static Onnx__NodeProto *foldable_conv(const Onnx__GraphProto *g, const char *name,
				      Onnx__TensorProto **w, Onnx__TensorProto **b, long long *c)
{
	Onnx__NodeProto *conv = producer(g, name);

	if (!conv || !default_domain(conv) || strcmp(conv->op_type, "Conv") ||
	    conv->n_input < 2 || readers(g, name) != 1)
		return NULL;
	*w = find_init(g, conv->input[1]);
	if (count_of(*w) <= 0 || (*w)->n_dims < 2 || readers(g, conv->input[1]) != 1)
		return NULL;
	*c = (*w)->dims[0];
	*b = NULL;
	if (conv->n_input >= 3 && *conv->input[2]) {
		*b = find_init(g, conv->input[2]);
		if (count_of(*b) != *c || readers(g, conv->input[2]) != 1)
			return NULL;
	}
	return conv;
}

/*
 * A constant a Conv's output of rank @rank can take per channel: one
 * value, or [C, 1, ...] (rank - 1 dims) or [1, C, 1, ...] (rank dims).
 * Its element count (1 or @c), or 0.
 */
static long long per_channel(const Onnx__TensorProto *t, size_t rank, long long c)
{
	long long n = count_of(t);
	size_t i, at;

	if (n == 1)
		return 1;
	if (n != c)
		return 0;
	if (t->n_dims == rank - 1)
		at = 0;
	else if (t->n_dims == rank && t->dims[0] == 1)
		at = 1;
	else
		return 0;
	for (i = 0; i < t->n_dims; i++)
		if (i != at && t->dims[i] != 1)
			return 0;
	return c;
}

/* ConvMulFusion and ConvAddFusion: a Conv's output times or plus a constant. */
static int fold_affine(Onnx__GraphProto *g, size_t *folded)
{
	size_t i;

	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i], *conv = NULL;
		Onnx__TensorProto *w, *b, *k = NULL;
		long long c = 0, kn = 0, per, e, ch;
		bool mul;
		int side, at = 0;

		if (!default_domain(n) || n->n_input != 2 || n->n_output != 1 ||
		    (strcmp(n->op_type, "Mul") && strcmp(n->op_type, "Add")))
			continue;
		mul = !strcmp(n->op_type, "Mul");
		/* the Conv's output on either side */
		for (side = 0; side < 2 && !conv; side++) {
			conv = foldable_conv(g, n->input[side], &w, &b, &c);
			k = conv ? find_init(g, n->input[!side]) : NULL;
			kn = k && readers(g, n->input[!side]) == 1 ? per_channel(k, w->n_dims, c) : 0;
			if (!kn)
				conv = NULL;
			else
				at = !side;
		}
		if (!conv)
			continue;
		if (!b) {
			if (add_bias(g, conv, c))
				return -ENOMEM;
			b = find_init(g, conv->input[2]);
		}
		per = count_of(w) / c;
		for (ch = 0; ch < c; ch++) {
			float v = get(k, kn == 1 ? 0 : ch);

			if (mul) {
				for (e = 0; e < per; e++)
					put(w, ch * per + e, get(w, ch * per + e) * v);
				put(b, ch, get(b, ch) * v);
			} else {
				put(b, ch, get(b, ch) + v);
			}
		}
		{
			char *kname = strdup(n->input[at]);

			take_output(g, i, conv);
			if (kname)
				drop_init(g, k, kname);
			free(kname);
		}
		i--;
		(*folded)++;
	}
	return 0;
}

int qf_fuse_conv(Onnx__ModelProto *mp, size_t *folded, char *err, size_t err_size)
{
	Onnx__GraphProto *g = mp->graph;
	size_t i, k, before;

	*folded = 0;
	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *bn = g->node[i], *conv;
		Onnx__TensorProto *w, *b = NULL, *p[4];
		long long c, wn, per, e;
		float eps;

		if (!default_domain(bn) || strcmp(bn->op_type, "BatchNormalization") ||
		    bn->n_input != 5 || bn->n_output != 1 || attr_i(bn, "training_mode", 0))
			continue;
		conv = producer(g, bn->input[0]);
		if (!conv || !default_domain(conv) || strcmp(conv->op_type, "Conv") ||
		    conv->n_input < 2 || readers(g, bn->input[0]) != 1)
			continue;
		w = find_init(g, conv->input[1]);
		wn = count_of(w);
		if (wn <= 0 || w->n_dims < 2 || readers(g, conv->input[1]) != 1)
			continue;
		c = w->dims[0];
		if (conv->n_input >= 3 && *conv->input[2]) {
			b = find_init(g, conv->input[2]);
			if (count_of(b) != c || readers(g, conv->input[2]) != 1)
				continue;
		}
		for (k = 0; k < 4; k++) {
			p[k] = find_init(g, bn->input[k + 1]);
			if (count_of(p[k]) != c || readers(g, bn->input[k + 1]) != 1)
				break;
		}
		if (k < 4)
			continue;
		if (!b) {
			if (add_bias(g, conv, c)) {
				snprintf(err, err_size, "out of memory");
				return -ENOMEM;
			}
			b = find_init(g, conv->input[2]);
		}
		eps = attr_f(bn, "epsilon", 1e-5f);
		per = wn / c;
		for (k = 0; k < (size_t)c; k++) {
			float f = get(p[0], (long long)k) / sqrtf(get(p[3], (long long)k) + eps);

			for (e = 0; e < per; e++)
				put(w, (long long)k * per + e, get(w, (long long)k * per + e) * f);
			put(b, (long long)k, (get(b, (long long)k) - get(p[2], (long long)k)) * f +
			    get(p[1], (long long)k));
		}
		/* the Conv writes the normalization's output; it and its inputs go */
		for (k = 0; k < 4; k++)
			drop_init(g, p[k], bn->input[k + 1]);
		take_output(g, i, conv);
		i--;
		(*folded)++;
	}
	/* Conv, Mul, Add as paddle2onnx writes a normalization: to a fixed point */
	do {
		before = *folded;
		if (fold_affine(g, folded)) {
			snprintf(err, err_size, "out of memory");
			return -ENOMEM;
		}
	} while (*folded != before);
	return 0;
}

int qf_constants_to_initializers(Onnx__ModelProto *mp, size_t *count)
{
	Onnx__GraphProto *g = mp->graph;
	size_t i, j, k = 0;
	Onnx__TensorProto **a;

	*count = 0;
	a = realloc(g->initializer, (g->n_initializer + g->n_node + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	g->initializer = a;
	for (i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		Onnx__AttributeProto *v = NULL;
		Onnx__TensorProto *t;
		char *name;

		if (default_domain(n) && !strcmp(n->op_type, "Constant") && n->n_output == 1 &&
		    n->n_attribute == 1 && n->attribute[0]->name &&
		    !strcmp(n->attribute[0]->name, "value") && n->attribute[0]->t)
			v = n->attribute[0];
		if (!v || find_init(g, n->output[0])) {
			g->node[k++] = n;
			continue;
		}
		/* the tensor moves from the node to the graph, named as the output was */
		t = v->t;
		v->t = NULL;
		name = strdup(n->output[0]);
		if (!name) {
			v->t = t;
			for (j = i; j < g->n_node; j++)
				g->node[k++] = g->node[j];
			g->n_node = k;
			return -ENOMEM;
		}
		free(t->name);
		t->name = name;
		g->initializer[g->n_initializer++] = t;
		onnx__node_proto__free_unpacked(n, NULL);
		(*count)++;
	}
	g->n_node = k;
	return 0;
}
