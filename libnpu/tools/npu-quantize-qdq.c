// SPDX-License-Identifier: MIT
/*
 * npu-quantize: the QDQ rewrite (see npu-quantize-qdq.h).
 *
 * It follows qdq_quantizer.py's two phases: the nodes are visited in
 * order and each op's quantizer (the registry) asks for tensors to be
 * quantized: activations, weights (per channel or not), biases, or
 * outputs that share their input's parameters; then the requests are
 * carried out.  New nodes are placed next to the node they belong to,
 * so the graph stays topologically sorted.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu-quantize-qdq.h"

#define T_FLOAT	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define T_UINT8	ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define T_INT8	ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define T_INT32	ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define DQ_OUT	"_DequantizeLinear_Output"

enum want_kind { W_ACTIVATION, W_WEIGHT };

/* One entry of qdq_quantizer's tensors_to_quantize. */
struct want {
	char *name;
	enum want_kind kind;
	int axis;		/* per-channel axis, -1 for per tensor */
	char *provider;		/* shares this tensor's parameters */
	long at;		/* the node that asked first */
	bool done;
};

struct bias_want {
	char *bias, *input, *weight;
	long at;
};

/* quantized_value_map: a tensor already given its DequantizeLinear. */
struct qval {
	char *name;
	char *scale_name, *zp_name;
	float *scales;
	size_t num_scales;
	int zero_point;
};

/* A new node and where it goes: before (-1) or after (+1) node @pos. */
struct pend {
	Onnx__NodeProto *n;
	long pos;
	int side;
	long seq;
};

struct st {
	Onnx__ModelProto *mp;
	Onnx__GraphProto *gp;
	const struct qq_options *o;
	struct qq_result *res;
	long long opset;
	size_t num_orig;
	long cur;		/* the node being visited */
	bool *removed;
	char **why;		/* per original node: why it stays float */
	struct want *w;
	size_t nw, cw;
	struct bias_want *b;
	size_t nb, cb;
	struct qval *qv;
	size_t nqv, cqv;
	struct pend *p;
	size_t np, cp;
	char **drop;		/* float initializers replaced by quantized ones */
	size_t ndrop, cdrop;
	char *err;
	size_t err_size;
};

static int fail(struct st *s, int ret, const char *fmt, ...)
{
	va_list ap;

	if (s->err && s->err_size) {
		va_start(ap, fmt);
		vsnprintf(s->err, s->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int nomem(struct st *s)
{
	return fail(s, -ENOMEM, "out of memory");
}

static char *cat2(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = malloc(la + lb + 1);

	if (r) {
		memcpy(r, a, la);
		memcpy(r + la, b, lb + 1);
	}
	return r;
}

/* Grow @*arr of @*cap elements of @size to hold @n + 1. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	q = realloc(*arr, c * size);
	if (!q)
		return -ENOMEM;
	*arr = q;
	*cap = c;
	return 0;
}

/* ---- lookups ----------------------------------------------------------- */

static long find_init(const struct st *s, const char *name)
{
	size_t i;

	if (!name || !*name)
		return -1;
	for (i = 0; i < s->gp->n_initializer; i++)
		if (s->gp->initializer[i]->name && !strcmp(s->gp->initializer[i]->name, name))
			return (long)i;
	return -1;
}

static bool is_float_init(const struct st *s, const char *name)
{
	long i = find_init(s, name);

	return i >= 0 && s->gp->initializer[i]->data_type == T_FLOAT;
}

static bool in_list(Onnx__ValueInfoProto **v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i]->name && !strcmp(v[i]->name, name))
			return true;
	return false;
}

static bool is_graph_output(const struct st *s, const char *name)
{
	return in_list(s->gp->output, s->gp->n_output, name);
}

static bool is_graph_input(const struct st *s, const char *name)
{
	return in_list(s->gp->input, s->gp->n_input, name) && find_init(s, name) < 0;
}

/* Nodes reading @name, removed ones too (onnxruntime removes them last). */
static size_t num_consumers(const struct st *s, const char *name)
{
	size_t i, j, n = 0;

	for (i = 0; i < s->num_orig; i++)
		for (j = 0; j < s->gp->node[i]->n_input; j++)
			if (!strcmp(s->gp->node[i]->input[j], name)) {
				n++;
				break;
			}
	return n;
}

static long producer(const struct st *s, const char *name)
{
	size_t i, j;

	for (i = 0; i < s->num_orig; i++)
		if (!s->removed[i])
			for (j = 0; j < s->gp->node[i]->n_output; j++)
				if (!strcmp(s->gp->node[i]->output[j], name))
					return (long)i;
	return -1;
}

static struct want *find_want(struct st *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nw; i++)
		if (!s->w[i].done && !strcmp(s->w[i].name, name))
			return &s->w[i];
	return NULL;
}

static struct qval *find_qval(struct st *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nqv; i++)
		if (!strcmp(s->qv[i].name, name))
			return &s->qv[i];
	return NULL;
}

static bool calibrated(const struct st *s, const char *name, float *lo, float *hi)
{
	float a, b;

	return s->o->range(s->o->ctx, name, lo ? lo : &a, hi ? hi : &b) == 1;
}

/* _is_tensor_quantizable(): a float initializer or a float activation. */
static bool quantizable(const struct st *s, const char *name)
{
	if (!name || !*name)
		return false;
	if (find_init(s, name) >= 0)
		return is_float_init(s, name);
	return calibrated(s, name, NULL, NULL);
}

static int attr_int(const Onnx__NodeProto *n, const char *name, long long def)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return (int)n->attribute[i]->i;
	return (int)def;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

/* ---- requests (the op quantizers' calls) ------------------------------- */

static int want_add(struct st *s, const char *name, enum want_kind kind, int axis,
		    const char *provider, bool overwrite)
{
	struct want *w = find_want(s, name);

	if (w && !overwrite)
		return 0;
	if (!w) {
		if (grow((void **)&s->w, &s->cw, s->nw, sizeof(*s->w)))
			return nomem(s);
		w = &s->w[s->nw++];
		memset(w, 0, sizeof(*w));
		w->name = strdup(name);
		w->at = -1;
		if (!w->name)
			return nomem(s);
	}
	free(w->provider);
	w->provider = provider ? strdup(provider) : NULL;
	if (provider && !w->provider)
		return nomem(s);
	w->kind = kind;
	w->axis = axis;
	return 0;
}

static int quantize_activation(struct st *s, const char *name, const char *provider)
{
	int ret;

	if (!quantizable(s, name))
		return 0;
	ret = want_add(s, name, W_ACTIVATION, -1, provider, provider != NULL);
	if (!ret && find_want(s, name)->at < 0)
		find_want(s, name)->at = s->cur;
	return ret;
}

static int quantize_weight(struct st *s, const char *name, int axis)
{
	int ret;

	if (axis >= 0) {
		/* per channel only ever applies to initializers */
		if (!is_float_init(s, name))
			return 0;
		ret = want_add(s, name, W_WEIGHT, axis, NULL, true);
	} else {
		if (!quantizable(s, name))
			return 0;
		ret = want_add(s, name, W_WEIGHT, -1, NULL, false);
	}
	if (!ret && find_want(s, name)->at < 0)
		find_want(s, name)->at = s->cur;
	return ret;
}

static int quantize_bias(struct st *s, const char *bias, const char *input, const char *weight)
{
	struct bias_want *b;

	if (!is_float_init(s, bias))
		return 0;
	if (grow((void **)&s->b, &s->cb, s->nb, sizeof(*s->b)))
		return nomem(s);
	b = &s->b[s->nb++];
	b->bias = strdup(bias);
	b->input = strdup(input);
	b->weight = strdup(weight);
	b->at = s->cur;
	return b->bias && b->input && b->weight ? 0 : nomem(s);
}

static bool is_quantized(struct st *s, const char *name)
{
	return find_want(s, name) || find_qval(s, name);
}

/* The axis of a weight of rank @rank, or -1 (per tensor). */
static int weight_axis(const struct st *s, const char *name, int axis)
{
	long i = find_init(s, name);

	if (s->o->per_tensor || i < 0)
		return -1;
	return axis < (int)s->gp->initializer[i]->n_dims ? axis : -1;
}

static void rename_outputs(struct st *s, const char *from, const char *to)
{
	size_t i, j;

	for (i = 0; i < s->num_orig; i++)
		for (j = 0; j < s->gp->node[i]->n_output; j++)
			if (!strcmp(s->gp->node[i]->output[j], from)) {
				char *d = strdup(to);

				if (d) {
					free(s->gp->node[i]->output[j]);
					s->gp->node[i]->output[j] = d;
				}
			}
}

/* try_replacing_upstream_output(): a Relu or Clip folded into its producer. */
static bool fold_activation(struct st *s, const Onnx__NodeProto *n)
{
	const char *up = n->input[0], *out = n->output[0];
	struct want *w;

	if (!calibrated(s, out, NULL, NULL) || num_consumers(s, up) != 1 ||
	    is_graph_output(s, up) || is_graph_input(s, up) || producer(s, up) < 0)
		return false;
	rename_outputs(s, up, out);
	w = find_want(s, up);
	if (w)
		w->done = true;
	return true;
}

static const char *const direct_8bit[] = {
	"Reshape", "Transpose", "Squeeze", "Unsqueeze", "AveragePool", "Slice", NULL,
};

/* quantize_static's default op types (QLinearOpsRegistry + QDQRegistry). */
static const char *const default_ops[] = {
	"ArgMax", "AveragePool", "BatchNormalization", "Clip", "Concat", "Conv",
	"ConvTranspose", "EmbedLayerNormalization", "Gather", "GatherElements", "Gemm",
	"GlobalAveragePool", "InstanceNormalization", "LayerNormalization", "LeakyRelu",
	"MatMul", "MaxPool", "Mul", "Add", "Pad", "Relu", "Reshape", "Resize", "Sigmoid",
	"Slice", "Softmax", "Split", "Squeeze", "Transpose", "Unsqueeze", "Where", NULL,
};

/* Of those, the ones whose onnxruntime quantizer this tool does not reproduce. */
static const char *const not_reproduced[] = {
	"Gather", "GatherElements", "Where", "Pad", "BatchNormalization",
	"InstanceNormalization", "LayerNormalization", "EmbedLayerNormalization", NULL,
};

static bool in_names(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

int qq_op_quantizable(const char *op_type)
{
	return op_type && in_names(default_ops, op_type);
}

static char *node_label(const Onnx__NodeProto *n, size_t i)
{
	char buf[256];

	if (n->name && *n->name)
		return strdup(n->name);
	snprintf(buf, sizeof(buf), "%s #%zu", n->op_type ? n->op_type : "?", i);
	return strdup(buf);
}

static bool excluded(const struct st *s, const Onnx__NodeProto *n)
{
	size_t i;

	for (i = 0; i < s->o->num_exclude; i++)
		if (n->name && !strcmp(n->name, s->o->exclude[i]))
			return true;
	return false;
}

static int set_why(struct st *s, size_t i, const char *why)
{
	if (s->why[i])
		return 0;
	s->why[i] = strdup(why);
	return s->why[i] ? 0 : nomem(s);
}

/* One node: its op's quantizer from the registry (registry.py). */
static int visit(struct st *s, size_t i)
{
	Onnx__NodeProto *n = s->gp->node[i];
	const char *op = n->op_type ? n->op_type : "";
	size_t j;
	int ret = 0;

	s->cur = (long)i;
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return set_why(s, i, "not of the default ONNX domain");
	if (!in_names(default_ops, op))
		return set_why(s, i, "onnxruntime's quantize_static leaves this op float");
	if (excluded(s, n))
		return set_why(s, i, "excluded (--exclude)");
	if (in_names(not_reproduced, op))
		return set_why(s, i, "left float: npu-quantize does not reproduce onnxruntime's quantizer of this op");

	if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose")) {
		if (n->n_input < 2)
			return set_why(s, i, "malformed: fewer than 2 inputs");
		ret = quantize_activation(s, n->input[0], NULL);
		if (!ret)
			ret = quantize_activation(s, n->output[0], NULL);
		if (!ret)
			ret = quantize_weight(s, n->input[1],
					      weight_axis(s, n->input[1], !strcmp(op, "Conv") ? 0 : 1));
		if (!ret && n->n_input >= 3 && *n->input[2])
			ret = quantize_bias(s, n->input[2], n->input[0], n->input[1]);
	} else if (!strcmp(op, "Gemm")) {
		const Onnx__AttributeProto *beta = attr(n, "beta");

		if (n->n_input < 2)
			return set_why(s, i, "malformed: fewer than 2 inputs");
		ret = quantize_activation(s, n->input[0], NULL);
		if (!ret)
			ret = quantize_activation(s, n->output[0], NULL);
		if (!ret)
			ret = quantize_weight(s, n->input[1],
					      weight_axis(s, n->input[1], attr_int(n, "transB", 0) ? 0 : 1));
		/* a beta other than 1 would be lost: onnxruntime resets it to 1 */
		if (!ret && n->n_input >= 3 && *n->input[2] && (!beta || beta->f == 1.0f))
			ret = quantize_bias(s, n->input[2], n->input[0], n->input[1]);
	} else if (!strcmp(op, "MatMul")) {
		for (j = 0; !ret && j < n->n_input + n->n_output; j++) {
			const char *t = j < n->n_input ? n->input[j] : n->output[j - n->n_input];

			if (find_init(s, t) >= 0)
				ret = quantize_weight(s, t, weight_axis(s, t, 1));
			else
				ret = quantize_activation(s, t, NULL);
		}
	} else if (!strcmp(op, "Relu") || !strcmp(op, "Clip")) {
		if (!n->n_input || !n->n_output)
			return set_why(s, i, "malformed: no input or output");
		if (fold_activation(s, n)) {
			s->removed[i] = true;
			ret = set_why(s, i, "folded into the QuantizeLinear of its input's producer");
		} else {
			ret = quantize_activation(s, n->input[0], NULL);
		}
		if (!ret)
			ret = quantize_activation(s, n->output[0], NULL);
	} else if (in_names(direct_8bit, op) || (!strcmp(op, "MaxPool") && s->opset >= 12)) {
		/* only where the input is already quantized; the output shares it */
		if (n->n_input && n->n_output && is_quantized(s, n->input[0]))
			ret = quantize_activation(s, n->output[0], n->input[0]);
	} else if (!strcmp(op, "Resize") && s->opset >= 11) {
		ret = quantize_activation(s, n->input[0], NULL);
		if (!ret && n->n_output)
			ret = quantize_activation(s, n->output[0], n->input[0]);
	} else if (!strcmp(op, "Split")) {
		if (!is_quantized(s, n->input[0]))
			ret = quantize_activation(s, n->input[0], NULL);
		for (j = 0; !ret && j < n->n_output; j++)
			ret = quantize_activation(s, n->output[j], n->input[0]);
	} else {
		/* QDQOperatorBase: every float input and output */
		for (j = 0; !ret && j < n->n_input; j++)
			ret = quantize_activation(s, n->input[j], NULL);
		for (j = 0; !ret && j < n->n_output; j++)
			ret = quantize_activation(s, n->output[j], NULL);
	}
	return ret;
}

/* ---- building the new tensors and nodes --------------------------------- */

Onnx__TensorProto *qq_new_tensor(const char *name, int32_t type, const int64_t *dims,
				 size_t rank, const void *data, size_t bytes)
{
	Onnx__TensorProto *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	onnx__tensor_proto__init(t);
	t->name = strdup(name);
	t->has_data_type = 1;
	t->data_type = type;
	t->n_dims = rank;
	t->dims = rank ? malloc(rank * sizeof(*t->dims)) : NULL;
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = malloc(bytes ? bytes : 1);
	if (!t->name || (rank && !t->dims) || !t->raw_data.data) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return NULL;
	}
	if (rank)
		memcpy(t->dims, dims, rank * sizeof(*dims));
	memcpy(t->raw_data.data, data, bytes);
	return t;
}

static int add_init(struct st *s, Onnx__TensorProto *t)
{
	Onnx__TensorProto **a;

	if (!t)
		return nomem(s);
	a = realloc(s->gp->initializer, (s->gp->n_initializer + 1) * sizeof(*a));
	if (!a) {
		onnx__tensor_proto__free_unpacked(t, NULL);
		return nomem(s);
	}
	s->gp->initializer = a;
	a[s->gp->n_initializer++] = t;
	return 0;
}

/* A zero point as the bytes of its type. */
static void zp_bytes(int32_t type, const int32_t *zp, size_t n, void *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (type == T_UINT8)
			((uint8_t *)out)[i] = (uint8_t)zp[i];
		else if (type == T_INT8)
			((int8_t *)out)[i] = (int8_t)zp[i];
		else
			((int32_t *)out)[i] = zp[i];
	}
}

static int add_scale_zp(struct st *s, const char *scale_name, const char *zp_name,
			const float *scales, const int32_t *zps, size_t n, int32_t zp_type,
			bool vector)
{
	size_t esz = zp_type == T_INT32 ? 4 : 1;
	int64_t dim = (int64_t)n;
	void *zb = malloc(n * esz + 1);
	int ret;

	if (!zb)
		return nomem(s);
	zp_bytes(zp_type, zps, n, zb);
	ret = add_init(s, qq_new_tensor(scale_name, T_FLOAT, &dim, vector ? 1 : 0, scales,
				     n * sizeof(float)));
	if (!ret)
		ret = add_init(s, qq_new_tensor(zp_name, zp_type, &dim, vector ? 1 : 0, zb, n * esz));
	free(zb);
	return ret;
}

static Onnx__NodeProto *new_node(const char *op, const char *name, const char *const *in,
				 size_t nin, const char *out, int axis)
{
	Onnx__NodeProto *n = calloc(1, sizeof(*n));
	size_t i;
	bool ok;

	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = strdup(op);
	n->name = strdup(name);
	n->input = calloc(nin, sizeof(char *));
	n->output = calloc(1, sizeof(char *));
	ok = n->op_type && n->name && n->input && n->output;
	if (n->input) {
		n->n_input = nin;
		for (i = 0; i < nin; i++)
			ok &= (n->input[i] = strdup(in[i])) != NULL;
	}
	if (n->output) {
		n->n_output = 1;
		ok &= (n->output[0] = strdup(out)) != NULL;
	}
	if (ok && axis >= 0) {
		Onnx__AttributeProto *a = malloc(sizeof(*a));

		n->attribute = malloc(sizeof(*n->attribute));
		if (a && n->attribute) {
			onnx__attribute_proto__init(a);
			a->name = strdup("axis");
			a->has_type = 1;
			a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
			a->has_i = 1;
			a->i = axis;
			n->attribute[0] = a;
			n->n_attribute = 1;
			ok = a->name != NULL;
		} else {
			free(a);
			ok = false;
		}
	}
	if (!ok) {
		onnx__node_proto__free_unpacked(n, NULL);
		return NULL;
	}
	return n;
}

static int place(struct st *s, Onnx__NodeProto *n, long pos, int side)
{
	if (!n)
		return nomem(s);
	if (grow((void **)&s->p, &s->cp, s->np, sizeof(*s->p))) {
		onnx__node_proto__free_unpacked(n, NULL);
		return nomem(s);
	}
	s->p[s->np] = (struct pend){ .n = n, .pos = pos, .side = side, .seq = (long)s->np };
	s->np++;
	return 0;
}

static int add_qval(struct st *s, const char *name, const char *scale_name, const char *zp_name,
		    const float *scales, size_t n, int zp)
{
	struct qval *q;

	if (grow((void **)&s->qv, &s->cqv, s->nqv, sizeof(*s->qv)))
		return nomem(s);
	q = &s->qv[s->nqv];
	memset(q, 0, sizeof(*q));
	q->name = strdup(name);
	q->scale_name = strdup(scale_name);
	q->zp_name = strdup(zp_name);
	q->scales = malloc(n * sizeof(float) + 1);
	q->num_scales = n;
	q->zero_point = zp;
	if (!q->name || !q->scale_name || !q->zp_name || !q->scales) {
		free(q->name);
		free(q->scale_name);
		free(q->zp_name);
		free(q->scales);
		return nomem(s);
	}
	memcpy(q->scales, scales, n * sizeof(float));
	s->nqv++;
	return 0;
}

static int note_tensor(struct st *s, const char *name, const char *dq_output, float scale, int zp)
{
	struct qq_result *r = s->res;
	struct qq_tensor_note *t = realloc(r->tensors, (r->num_tensors + 1) * sizeof(*t));

	if (!t)
		return nomem(s);
	r->tensors = t;
	t = &r->tensors[r->num_tensors];
	t->name = strdup(name);
	t->dq_output = strdup(dq_output);
	t->scale = scale;
	t->zero_point = zp;
	if (!t->name || !t->dq_output) {
		free(t->name);
		free(t->dq_output);
		return nomem(s);
	}
	r->num_tensors++;
	return 0;
}

static void replace_inputs(struct st *s, const char *from, const char *to)
{
	size_t i, j;

	for (i = 0; i < s->num_orig; i++)
		for (j = 0; j < s->gp->node[i]->n_input; j++)
			if (!strcmp(s->gp->node[i]->input[j], from)) {
				char *d = strdup(to);

				if (d) {
					free(s->gp->node[i]->input[j]);
					s->gp->node[i]->input[j] = d;
				}
			}
}

/* Initializer @name, and the graph input old models list for it, removed. */
static void remove_init(struct st *s, const char *name)
{
	long t = find_init(s, name);
	size_t j, k;

	if (t < 0)
		return;
	onnx__tensor_proto__free_unpacked(s->gp->initializer[t], NULL);
	memmove(&s->gp->initializer[t], &s->gp->initializer[t + 1],
		(s->gp->n_initializer - (size_t)t - 1) * sizeof(*s->gp->initializer));
	s->gp->n_initializer--;
	for (j = 0, k = 0; j < s->gp->n_input; j++) {
		if (s->gp->input[j]->name && !strcmp(s->gp->input[j]->name, name))
			onnx__value_info_proto__free_unpacked(s->gp->input[j], NULL);
		else
			s->gp->input[k++] = s->gp->input[j];
	}
	s->gp->n_input = k;
}

static int drop_later(struct st *s, const char *name)
{
	if (grow((void **)&s->drop, &s->cdrop, s->ndrop, sizeof(*s->drop)))
		return nomem(s);
	s->drop[s->ndrop] = strdup(name);
	return s->drop[s->ndrop++] ? 0 : nomem(s);
}

/* _add_qdq_pair_for_activation() */
static int qdq_activation(struct st *s, const char *t, const char *scale_name,
			  const char *zp_name, float scale, int zp)
{
	char *q_in = NULL, *dq_out = NULL, *q_out = cat2(t, "_QuantizeLinear_Output");
	char *q_name = cat2(t, "_QuantizeLinear"), *dq_name = cat2(t, "_DequantizeLinear");
	const char *in[3];
	long pos;
	int ret;

	if (is_graph_output(s, t)) {
		q_in = cat2(t, "_QuantizeLinear_Input");
		dq_out = strdup(t);
		if (q_in)
			rename_outputs(s, t, q_in);
	} else {
		q_in = strdup(t);
		dq_out = cat2(t, "_DequantizeLinear_Output");
		if (dq_out)
			replace_inputs(s, t, dq_out);
	}
	if (!q_in || !dq_out || !q_out || !q_name || !dq_name) {
		ret = nomem(s);
		goto out;
	}
	pos = producer(s, q_in);
	in[0] = q_in;
	in[1] = scale_name;
	in[2] = zp_name;
	ret = place(s, new_node("QuantizeLinear", q_name, in, 3, q_out, -1), pos, 1);
	in[0] = q_out;
	if (!ret)
		ret = place(s, new_node("DequantizeLinear", dq_name, in, 3, dq_out, -1), pos, 1);
	if (!ret)
		ret = add_qval(s, t, scale_name, zp_name, &scale, 1, zp);
	if (!ret)
		ret = note_tensor(s, t, dq_out, scale, zp);
out:
	free(q_in);
	free(dq_out);
	free(q_out);
	free(q_name);
	free(dq_name);
	return ret;
}

/* The float data of an initializer, copied. */
static int init_floats(struct st *s, const Onnx__TensorProto *t, float **out, size_t *n)
{
	size_t i, count = 1;

	for (i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || (t->dims[i] && count > SIZE_MAX / 4 / (size_t)t->dims[i]))
			return fail(s, -EINVAL, "initializer '%s': bad dimensions", t->name);
		count *= (size_t)t->dims[i];
	}
	if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return fail(s, -EINVAL, "initializer '%s': external data is not supported", t->name);
	*out = malloc(count * sizeof(float) + 1);
	if (!*out)
		return nomem(s);
	if (t->has_raw_data && t->raw_data.len) {
		if (t->raw_data.len != count * sizeof(float))
			goto bad;
		memcpy(*out, t->raw_data.data, count * sizeof(float));
	} else if (t->n_float_data == count) {
		memcpy(*out, t->float_data, count * sizeof(float));
	} else if (count) {
		goto bad;
	}
	*n = count;
	return 0;
bad:
	free(*out);
	*out = NULL;
	return fail(s, -EINVAL, "initializer '%s': its data does not match its shape", t->name);
}

static int act_params(struct st *s, const char *name, float *scale, int32_t *zp);

/*
 * The smallest scale the bias of weight @w can have: onnxruntime's
 * quantize_static (from 1.20) raises a weight's scale where the bias scale,
 * input scale x weight scale, is too small for the bias to fit in int32
 * (a near-silent input calibrates to a tiny scale), to 1.0001 x the
 * bias's range over int32's symmetric range, in float64; per output
 * channel for per-channel weights, over the whole bias otherwise.  Fills
 * @min_scale (@channels entries, or 1) and @in_scale; 0 when @w has no float
 * bias or its input no scale yet, 1 when @min_scale is filled.
 */
static int bias_scale_floor(struct st *s, const struct want *w, size_t channels,
			    double *min_scale, float *in_scale)
{
	const double qrange = 4294967294.0;	/* INT32_MAX - (INT32_MIN + 1) */
	struct bias_want *b = NULL;
	struct qval *iq;
	float *data = NULL;
	size_t i, n;
	int32_t izp;
	double m = 0;
	int ret;

	for (i = 0; i < s->nb && !b; i++)
		if (!strcmp(s->b[i].weight, w->name))
			b = &s->b[i];
	if (!b || !is_float_init(s, b->bias))
		return 0;
	iq = find_qval(s, b->input);
	if (iq) {
		*in_scale = iq->scales[0];
	} else {
		ret = act_params(s, b->input, in_scale, &izp);
		if (ret <= 0)
			return ret;
	}
	ret = init_floats(s, s->gp->initializer[find_init(s, b->bias)], &data, &n);
	if (ret)
		return ret;
	if (channels > 1 && n != channels) {
		free(data);
		return 0;
	}
	for (i = 0; i < n; i++) {
		double a = fabs((double)data[i]);

		if (channels > 1)
			min_scale[i] = 1.0001 * 2.0 * a / qrange;
		else if (a > m)
			m = a;
	}
	if (channels <= 1)
		min_scale[0] = 1.0001 * 2.0 * m / qrange;
	free(data);
	return 1;
}

/* _add_qdq_pair_for_initializer(): the weight stored quantized, one DequantizeLinear. */
static int qdq_initializer(struct st *s, const struct want *w)
{
	const Onnx__TensorProto *t = s->gp->initializer[find_init(s, w->name)];
	size_t n, channels = 1, outer = 1, inner = 1, c, o, k, i;
	enum qz_type qt;
	float *data = NULL, *scales = NULL, *tmp = NULL, in_scale = 0;
	double *min_scale = NULL;
	bool has_floor = false;
	int32_t *zps = NULL;
	uint8_t *q = NULL, *qtmp = NULL;
	char *qn = cat2(w->name, "_quantized"), *sn = cat2(w->name, "_scale");
	char *zn = cat2(w->name, "_zero_point"), *dn = cat2(w->name, "_DequantizeLinear");
	char *dout = cat2(w->name, "_DequantizeLinear_Output");
	const char *in[3];
	int ret;

	if (!qn || !sn || !zn || !dn || !dout) {
		ret = nomem(s);
		goto out;
	}
	ret = init_floats(s, t, &data, &n);
	if (ret)
		goto out;
	if (w->axis >= 0) {
		/* per channel is always int8, whatever the activations are */
		qt = QZ_INT8;
		channels = (size_t)t->dims[w->axis];
		for (i = 0; i < (size_t)w->axis; i++)
			outer *= (size_t)t->dims[i];
		for (i = (size_t)w->axis + 1; i < t->n_dims; i++)
			inner *= (size_t)t->dims[i];
	} else {
		qt = w->kind == W_WEIGHT ? QZ_INT8 : s->o->activation;
		outer = 1;
		inner = n;
	}
	scales = malloc((channels + 1) * sizeof(*scales));
	min_scale = calloc(channels + 1, sizeof(*min_scale));
	zps = malloc((channels + 1) * sizeof(*zps));
	q = malloc(n + 1);
	tmp = malloc((outer * inner + 1) * sizeof(*tmp));
	qtmp = malloc(outer * inner + 1);
	if (!scales || !min_scale || !zps || !q || !tmp || !qtmp) {
		ret = nomem(s);
		goto out;
	}
	if (w->kind == W_WEIGHT) {
		ret = bias_scale_floor(s, w, w->axis >= 0 ? channels : 1, min_scale, &in_scale);
		if (ret < 0)
			goto out;
		has_floor = ret;
		ret = 0;
	}
	for (c = 0; c < (w->axis >= 0 ? channels : 1); c++) {
		for (o = 0, k = 0; o < outer; o++)
			for (i = 0; i < inner; i++)
				tmp[k++] = data[(o * channels + (w->axis >= 0 ? c : 0)) * inner + i];
		/*
		 * int8 weights are symmetric (WeightSymmetric's default for int8);
		 * a float operand quantized as an activation is symmetric when the
		 * activations are int8, the weights' type, else asymmetric
		 */
		/* reduce_range reaches per-channel weights only, as in onnxruntime */
		ret = qz_weights(tmp, outer * inner, 1, qt, qt == QZ_INT8,
				 w->axis >= 0 && s->o->reduce_range, &scales[c], &zps[c], qtmp, 1);
		if (ret) {
			ret = fail(s, ret, "initializer '%s' has a value that is not finite", w->name);
			goto out;
		}
		if (has_floor && (double)in_scale * scales[c] < min_scale[c] &&
		    (double)in_scale * scales[c] > 0.0) {
			int32_t cmin, cmax;

			scales[c] = (float)(min_scale[c] / in_scale);
			qz_range(qt, false, &cmin, &cmax);
			for (k = 0; k < outer * inner; k++) {
				int32_t v = qz_quantize(tmp[k], scales[c], zps[c], cmin, cmax);

				if (qt == QZ_UINT8)
					qtmp[k] = (uint8_t)v;
				else
					((int8_t *)qtmp)[k] = (int8_t)v;
			}
			s->res->weight_scales_raised++;
		}
		for (o = 0, k = 0; o < outer; o++)
			for (i = 0; i < inner; i++)
				q[(o * channels + (w->axis >= 0 ? c : 0)) * inner + i] = qtmp[k++];
	}
	ret = add_init(s, qq_new_tensor(qn, qt == QZ_UINT8 ? T_UINT8 : T_INT8, t->dims, t->n_dims, q, n));
	if (!ret)
		ret = add_scale_zp(s, sn, zn, scales, zps, w->axis >= 0 ? channels : 1,
				   qt == QZ_UINT8 ? T_UINT8 : T_INT8, w->axis >= 0);
	if (ret)
		goto out;
	replace_inputs(s, w->name, dout);
	in[0] = qn;
	in[1] = sn;
	in[2] = zn;
	ret = place(s, new_node("DequantizeLinear", dn, in, 3, dout, w->axis), w->at, -1);
	if (!ret)
		ret = add_qval(s, w->name, sn, zn, scales, w->axis >= 0 ? channels : 1, zps[0]);
	if (!ret)
		ret = drop_later(s, w->name);
	if (!ret)
		s->res->weights++;
out:
	free(data);
	free(scales);
	free(min_scale);
	free(zps);
	free(q);
	free(tmp);
	free(qtmp);
	free(qn);
	free(sn);
	free(zn);
	free(dn);
	free(dout);
	return ret;
}

/*
 * A tensor's calibrated range as adjust_tensor_ranges() leaves it: a
 * Softmax's output is [0, 1]; the input of a Relu or Clip that only they
 * read takes their output's range.
 */
static bool adjusted_range(struct st *s, const char *name, float *lo, float *hi)
{
	bool found = calibrated(s, name, lo, hi);
	size_t i;

	for (i = 0; found && i < s->num_orig; i++) {
		const Onnx__NodeProto *n = s->gp->node[i];
		const char *op = n->op_type ? n->op_type : "";
		float a, b;

		if ((n->domain && *n->domain && strcmp(n->domain, "ai.onnx")) || excluded(s, n) ||
		    !n->n_input || !n->n_output)
			continue;
		if (!strcmp(op, "Softmax") && !strcmp(n->output[0], name)) {
			*lo = 0;
			*hi = 1;
		} else if ((!strcmp(op, "Relu") || !strcmp(op, "Clip")) &&
			   !strcmp(n->input[0], name) && num_consumers(s, name) == 1 &&
			   calibrated(s, n->output[0], &a, &b)) {
			*lo = a;
			*hi = b;
		}
	}
	return found;
}

/* The activation parameters of a calibrated range (calc_quant_params). */
static int act_params(struct st *s, const char *name, float *scale, int32_t *zp)
{
	int32_t qmin, qmax;
	float lo, hi;

	if (!adjusted_range(s, name, &lo, &hi))
		return 0;
	qz_range(s->o->activation, false, &qmin, &qmax);
	if (qz_scale_zp(lo, hi, qmin, qmax, false, scale, zp))
		return fail(s, -EDOM, "tensor '%s': calibration range [%g, %g] is not finite",
			    name, lo, hi);
	return 1;
}

static int quantize_normal(struct st *s)
{
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < s->nw; i++) {
		struct want *w = &s->w[i];
		char *sn, *zn;
		float scale;
		int32_t zp;

		if (w->done || w->provider || find_qval(s, w->name))
			continue;
		w->done = true;
		if (find_init(s, w->name) >= 0) {
			ret = qdq_initializer(s, w);
			continue;
		}
		ret = act_params(s, w->name, &scale, &zp);
		if (ret <= 0)
			continue;
		ret = 0;
		sn = cat2(w->name, "_scale");
		zn = cat2(w->name, "_zero_point");
		ret = sn && zn ? 0 : nomem(s);
		if (!ret)
			ret = add_scale_zp(s, sn, zn, &scale, &zp, 1,
					   s->o->activation == QZ_UINT8 ? T_UINT8 : T_INT8, false);
		if (!ret)
			ret = qdq_activation(s, w->name, sn, zn, scale, zp);
		free(sn);
		free(zn);
	}
	return ret;
}

/* _quantize_sharing_param_tensors(): until no provider is left to wait for. */
static int quantize_shared(struct st *s)
{
	bool progress = true;
	size_t i;
	int ret = 0;

	while (progress && !ret) {
		progress = false;
		for (i = 0; !ret && i < s->nw; i++) {
			struct want *w = &s->w[i];
			struct qval *p;
			char *sn, *zn;

			if (w->done || !w->provider || !(p = find_qval(s, w->provider)))
				continue;
			w->done = true;
			progress = true;
			if (find_qval(s, w->name))
				continue;
			sn = strdup(p->scale_name);
			zn = strdup(p->zp_name);
			ret = sn && zn ? qdq_activation(s, w->name, sn, zn, p->scales[0], p->zero_point)
				       : nomem(s);
			free(sn);
			free(zn);
		}
	}
	return ret;
}

/* _quantize_bias_tensors() */
static int quantize_biases(struct st *s)
{
	size_t i, k, n;
	int ret = 0;

	for (i = 0; !ret && i < s->nb; i++) {
		struct bias_want *b = &s->b[i];
		struct qval *wq = find_qval(s, b->weight), *iq = find_qval(s, b->input);
		float in_scale, *data = NULL, *bs = NULL;
		int32_t *q = NULL, *zp = NULL, izp;
		char *qn = NULL, *sn = NULL, *zn = NULL, *dn = NULL;
		long ti;
		const char *in[3];

		if (find_qval(s, b->bias) || !wq || find_init(s, b->weight) < 0)
			continue;
		if (iq) {
			in_scale = iq->scales[0];
		} else {
			ret = act_params(s, b->input, &in_scale, &izp);
			if (ret <= 0)
				continue;
			ret = 0;
		}
		ti = find_init(s, b->bias);
		ret = init_floats(s, s->gp->initializer[ti], &data, &n);
		if (ret)
			break;
		if (wq->num_scales > 1 && wq->num_scales != n) {
			free(data);
			continue;
		}
		bs = malloc((wq->num_scales + 1) * sizeof(*bs));
		zp = calloc(wq->num_scales + 1, sizeof(*zp));
		q = malloc((n + 1) * sizeof(*q));
		qn = cat2(b->bias, "_quantized");
		sn = qn ? cat2(qn, "_scale") : NULL;
		zn = qn ? cat2(qn, "_zero_point") : NULL;
		dn = cat2(b->bias, "_DequantizeLinear");
		if (!bs || !zp || !q || !sn || !zn || !dn) {
			ret = nomem(s);
			goto next;
		}
		for (k = 0; k < wq->num_scales; k++)
			bs[k] = qz_bias_scale(in_scale, wq->scales[k]);
		for (k = 0; !ret && k < n; k++) {
			int r = qz_bias(data[k], bs[wq->num_scales > 1 ? k : 0], &q[k]);

			if (r == -EDOM)
				ret = fail(s, -EDOM, "bias '%s' has a value that is not finite", b->bias);
			else if (r)
				s->res->biases_clipped++;
		}
		if (ret)
			goto next;
		ret = add_init(s, qq_new_tensor(qn, T_INT32, s->gp->initializer[ti]->dims,
					     s->gp->initializer[ti]->n_dims, q, n * 4));
		if (ret)
			goto next;
		/*
		 * The scale is always 1-D, as onnxruntime writes it; so is the
		 * zero point, which onnxruntime makes a scalar per tensor: the
		 * ONNX spec wants the two of one shape.
		 */
		ret = add_scale_zp(s, sn, zn, bs, zp, wq->num_scales, T_INT32, true);
		if (ret)
			goto next;
		in[0] = qn;
		in[1] = sn;
		in[2] = zn;
		ret = place(s, new_node("DequantizeLinear", dn, in, 3, b->bias,
					wq->num_scales > 1 ? 0 : -1), b->at, -1);
		if (!ret)
			ret = add_qval(s, b->bias, sn, zn, bs, wq->num_scales, 0);
		/* its name now names the DequantizeLinear's output */
		if (!ret) {
			remove_init(s, b->bias);
			s->res->biases++;
		}
next:
		free(data);
		free(bs);
		free(zp);
		free(q);
		free(qn);
		free(sn);
		free(zn);
		free(dn);
	}
	return ret;
}

/* ---- opset, cleanup, assembly ------------------------------------------- */

/*
 * The opset the QDQ form needs: 13 for DequantizeLinear's axis (per
 * channel), else 10; below that onnxruntime converts to 11, and so does
 * this.
 */
static long long target_opset(const struct st *s, long long from)
{
	if (!s->o->per_tensor && from < 13)
		return 13;
	return from < 10 ? 11 : from;
}

static int check_opset(struct st *s, bool upgrade)
{
	Onnx__OperatorSetIdProto *os = qo_default_opset(s->mp);
	long long from = os ? os->version : 1, to = target_opset(s, from);
	int ret;

	s->opset = from;
	s->res->opset_from = s->res->opset_to = from;
	if (to == from)
		return 0;
	if (!os)
		return fail(s, -EINVAL, "the model imports no opset of the default domain");
	ret = upgrade ? qo_upgrade(s->mp, to, s->o->shape, s->o->ctx, s->err, s->err_size) :
			qo_check(s->mp, to, NULL, NULL, s->err, s->err_size);
	if (ret == -EINVAL) {
		size_t l = s->err ? strlen(s->err) : 0;

		if (s->err && l < s->err_size)
			snprintf(s->err + l, s->err_size - l,
				 " (the QDQ form needs opset %lld; the model's is %lld%s)", to, from,
				 to == 13 && from >= 10 ? "; --per-tensor needs no more than 10" : "");
	}
	if (ret || !upgrade)
		return ret;
	s->opset = to;
	s->res->opset_to = to;
	return 0;
}

static bool read_anywhere(const Onnx__GraphProto *g, const char *name);

static bool node_reads(const Onnx__NodeProto *n, const char *name)
{
	size_t j, k;

	for (j = 0; j < n->n_input; j++)
		if (!strcmp(n->input[j], name))
			return true;
	for (j = 0; j < n->n_attribute; j++) {
		if (n->attribute[j]->g && read_anywhere(n->attribute[j]->g, name))
			return true;
		for (k = 0; k < n->attribute[j]->n_graphs; k++)
			if (read_anywhere(n->attribute[j]->graphs[k], name))
				return true;
	}
	return false;
}

static bool read_anywhere(const Onnx__GraphProto *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n_node; i++)
		if (node_reads(g->node[i], name))
			return true;
	return in_list(g->output, g->n_output, name);
}

/* clean_initializers(), for the float weights this replaced only. */
static void drop_replaced(struct st *s)
{
	size_t i;

	for (i = 0; i < s->ndrop; i++)
		if (!read_anywhere(s->gp, s->drop[i]))
			remove_init(s, s->drop[i]);
}

static int cmp_pend(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int assemble(struct st *s)
{
	size_t total = s->np, i, k = 0, p = 0;
	Onnx__NodeProto **nodes;

	for (i = 0; i < s->num_orig; i++)
		total += !s->removed[i];
	nodes = malloc((total + 1) * sizeof(*nodes));
	if (!nodes)
		return nomem(s);
	qsort(s->p, s->np, sizeof(*s->p), cmp_pend);
	while (p < s->np && s->p[p].pos < 0)
		nodes[k++] = s->p[p++].n;
	for (i = 0; i < s->num_orig; i++) {
		while (p < s->np && s->p[p].pos == (long)i && s->p[p].side < 0)
			nodes[k++] = s->p[p++].n;
		if (!s->removed[i])
			nodes[k++] = s->gp->node[i];
		else
			onnx__node_proto__free_unpacked(s->gp->node[i], NULL);
		while (p < s->np && s->p[p].pos == (long)i)
			nodes[k++] = s->p[p++].n;
	}
	free(s->gp->node);
	s->gp->node = nodes;
	s->gp->n_node = k;
	s->np = 0;
	return 0;
}

/* The model must be fp32 and not quantized already. */
static int check_model(struct st *s)
{
	size_t i;

	for (i = 0; i < s->gp->n_node; i++) {
		const char *op = s->gp->node[i]->op_type ? s->gp->node[i]->op_type : "";

		if (strstr(op, "QuantizeLinear") || strstr(op, "QLinear") ||
		    strstr(op, "Integer"))
			return fail(s, -EINVAL, "node '%s' (%s): the model is quantized already",
				    s->gp->node[i]->name ? s->gp->node[i]->name : "", op);
	}
	for (i = 0; i < s->gp->n_initializer; i++) {
		int32_t t = s->gp->initializer[i]->data_type;

		if (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
		    t == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
		    t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
			return fail(s, -EINVAL,
				    "initializer '%s' is %s: npu-quantize takes fp32 models only",
				    s->gp->initializer[i]->name,
				    t == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? "float64" :
				    t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? "float16" : "bfloat16");
	}
	for (i = 0; i < s->gp->n_input; i++) {
		const Onnx__TypeProto *tp = s->gp->input[i]->type;

		if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
		    tp->tensor_type->has_elem_type &&
		    (tp->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
		     tp->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
		     tp->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16))
			return fail(s, -EINVAL, "input '%s' is not float32: npu-quantize takes fp32 models only",
				    s->gp->input[i]->name);
	}
	return 0;
}

static bool reads_dq(const Onnx__NodeProto *n, const struct qq_result *r)
{
	size_t j, k;

	for (j = 0; j < n->n_input; j++) {
		size_t l = strlen(n->input[j]);

		if (l > strlen(DQ_OUT) && !strcmp(n->input[j] + l - strlen(DQ_OUT), DQ_OUT))
			return true;
		for (k = 0; k < r->num_tensors; k++)
			if (!strcmp(r->tensors[k].dq_output, n->input[j]))
				return true;
	}
	return false;
}

int qq_check(Onnx__ModelProto *mp, const struct qq_options *o, char *err, size_t err_size)
{
	struct qq_result res = { 0 };
	struct st s = { .mp = mp, .gp = mp->graph, .o = o, .res = &res, .err = err,
			.err_size = err_size };
	int ret;

	if (!s.gp)
		return fail(&s, -EINVAL, "the model has no graph");
	ret = check_model(&s);
	if (!ret)
		ret = check_opset(&s, false);
	return ret;
}

int qq_quantize(Onnx__ModelProto *mp, const struct qq_options *o, struct qq_result *res,
		char *err, size_t err_size)
{
	struct st s = { .mp = mp, .gp = mp->graph, .o = o, .res = res, .err = err,
			.err_size = err_size };
	size_t i;
	int ret;

	memset(res, 0, sizeof(*res));
	if (err && err_size)
		err[0] = 0;
	if (!s.gp)
		return fail(&s, -EINVAL, "the model has no graph");
	s.num_orig = s.gp->n_node;
	ret = check_model(&s);
	if (!ret)
		ret = check_opset(&s, true);
	if (ret)
		return ret;
	s.num_orig = s.gp->n_node;
	s.removed = calloc(s.num_orig + 1, sizeof(*s.removed));
	s.why = calloc(s.num_orig + 1, sizeof(*s.why));
	res->nodes = calloc(s.num_orig + 1, sizeof(*res->nodes));
	if (!s.removed || !s.why || !res->nodes) {
		ret = nomem(&s);
		goto out;
	}
	/* the notes keep the names the input model gives */
	for (i = 0; i < s.num_orig; i++) {
		res->nodes[i].name = node_label(s.gp->node[i], i);
		res->nodes[i].op_type = strdup(s.gp->node[i]->op_type ? s.gp->node[i]->op_type : "");
		if (!res->nodes[i].name || !res->nodes[i].op_type) {
			ret = nomem(&s);
			goto out;
		}
	}
	res->num_nodes = s.num_orig;
	for (i = 0; !ret && i < s.num_orig; i++)
		ret = visit(&s, i);
	if (!ret)
		ret = quantize_normal(&s);
	if (!ret)
		ret = quantize_shared(&s);
	if (!ret)
		ret = quantize_biases(&s);
	if (ret)
		goto out;
	for (i = 0; i < s.num_orig; i++) {
		struct qq_node_note *nn = &res->nodes[i];

		/* a float op reads dequantized values too: onnxruntime rewires every consumer */
		nn->quantized = !s.removed[i] && !s.why[i] && reads_dq(s.gp->node[i], res);
		if (!nn->quantized || s.removed[i]) {
			nn->why = s.why[i] ? s.why[i] :
				  strdup("no input of it is quantized (onnxruntime quantizes this op only after a quantized one)");
			s.why[i] = NULL;
			if (!nn->why) {
				ret = nomem(&s);
				goto out;
			}
		}
	}
	ret = assemble(&s);
	if (ret)
		goto out;
	drop_replaced(&s);
	free(mp->producer_name);
	mp->producer_name = strdup("npu-quantize");
out:
	for (i = 0; i < s.np; i++)
		onnx__node_proto__free_unpacked(s.p[i].n, NULL);
	free(s.p);
	for (i = 0; i < s.nw; i++) {
		free(s.w[i].name);
		free(s.w[i].provider);
	}
	free(s.w);
	for (i = 0; i < s.nb; i++) {
		free(s.b[i].bias);
		free(s.b[i].input);
		free(s.b[i].weight);
	}
	free(s.b);
	for (i = 0; i < s.nqv; i++) {
		free(s.qv[i].name);
		free(s.qv[i].scale_name);
		free(s.qv[i].zp_name);
		free(s.qv[i].scales);
	}
	free(s.qv);
	for (i = 0; i < s.ndrop; i++)
		free(s.drop[i]);
	free(s.drop);
	if (s.why)
		for (i = 0; i < s.num_orig; i++)
			free(s.why[i]);
	free(s.why);
	free(s.removed);
	return ret;
}

void qq_result_free(struct qq_result *res)
{
	size_t i;

	for (i = 0; i < res->num_nodes; i++) {
		free(res->nodes[i].name);
		free(res->nodes[i].op_type);
		free(res->nodes[i].why);
	}
	free(res->nodes);
	for (i = 0; i < res->num_tensors; i++) {
		free(res->tensors[i].name);
		free(res->tensors[i].dq_output);
	}
	free(res->tensors);
	memset(res, 0, sizeof(*res));
}

const char **qq_tensors_to_calibrate(const Onnx__ModelProto *mp, size_t *count)
{
	const Onnx__GraphProto *g = mp->graph;
	size_t i, j, k, n = 0, cap = 1;
	const char **names;

	*count = 0;
	if (!g)
		return calloc(1, sizeof(*names));
	for (i = 0; i < g->n_node; i++)
		cap += g->node[i]->n_input + g->node[i]->n_output;
	names = calloc(cap, sizeof(*names));
	if (!names)
		return NULL;
	for (i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *nd = g->node[i];

		if (!qq_op_quantizable(nd->op_type))
			continue;
		for (j = 0; j < nd->n_input + nd->n_output; j++) {
			const char *t = j < nd->n_input ? nd->input[j] : nd->output[j - nd->n_input];
			bool dup = !*t;

			for (k = 0; !dup && k < g->n_initializer; k++)
				dup = g->initializer[k]->name && !strcmp(g->initializer[k]->name, t);
			for (k = 0; !dup && k < n; k++)
				dup = !strcmp(names[k], t);
			if (!dup)
				names[n++] = t;
		}
	}
	*count = n;
	return names;
}
