// SPDX-License-Identifier: MIT
/*
 * The importer's operator registry and custom operators (npu/onnx.h
 * struct npu_onnx_op): an application's kernel for an op of its own
 * domain runs in the graph's CPU segment, folds on constants, can
 * replace a built-in op, and every refusal names the node and the
 * reason.  The expected values are computed here with plain C formulas,
 * not by any libnpu code.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dlfcn.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "npu/kernel.h"
#include "npu/onnx.h"
#include "onnx-build.h"

/* ---- A custom op: com.example::Swish, y = x * sigmoid(beta * x) ---------- */

struct swish {
	float beta;
};

static int released, created;

static int swish_infer(const void *state, size_t nin, const struct npu_kernel_tensor *const *in,
		       size_t nout, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	(void)state;
	if (nin != 1 || !in[0] || nout != 1 || !out[0]) {
		snprintf(err, err_size, "Swish takes one input and one output");
		return -EINVAL;
	}
	if (in[0]->dtype != NPU_DTYPE_FP32) {
		snprintf(err, err_size, "Swish takes float32 only");
		return -EINVAL;
	}
	out[0]->dtype = NPU_DTYPE_FP32;
	out[0]->rank = in[0]->rank;
	memcpy(out[0]->dims, in[0]->dims, sizeof(out[0]->dims));
	return 0;
}

static int swish_run(const void *state, size_t nin, const struct npu_kernel_tensor *const *in,
		     size_t nout, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	const struct swish *s = state;
	const float *x = in[0]->data;
	float *y = out[0]->data;
	uint64_t i;

	(void)nin;
	(void)nout;
	for (i = 0; i < in[0]->elems; i++) {
		if (isnan(x[i]))
			return npu_kernel_fail(call, -EDOM, "element %llu is NaN",
					       (unsigned long long)i);
		y[i] = x[i] / (1.0f + expf(-s->beta * x[i]));
	}
	return 0;
}

static void swish_release(void *state)
{
	released++;
	free(state);
}

static const struct npu_kernel swish_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "com.example::Swish",
	.infer = swish_infer,
	.run = swish_run,
	.release = swish_release,
};

static int swish_create(const struct npu_onnx_node *node, void *opaque, void **state,
			char *err, size_t err_size)
{
	struct swish *s;
	float beta = 1.0f;
	int ret = npu_onnx_attr_float(node, "beta", &beta);

	(void)opaque;
	if (ret && ret != -ENOENT) {
		snprintf(err, err_size, "beta must be a float");
		return -EINVAL;
	}
	if (!(beta > 0)) {
		snprintf(err, err_size, "beta %g must be positive", beta);
		return -EINVAL;
	}
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->beta = beta;
	*state = s;
	created++;
	return 0;
}

static const struct npu_onnx_op swish_op = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "com.example",
	.op_type = "Swish",
	.kernel = &swish_kernel,
	.create = swish_create,
};

static const struct npu_onnx_op *const custom[] = { &swish_op };

static struct npu_onnx_options with_custom(void)
{
	struct npu_onnx_options o = { .size = sizeof(o) };

	o.custom_ops = custom;
	o.num_custom_ops = 1;
	return o;
}

static float swish_ref(float x, float beta)
{
	return (float)(x / (1.0 + exp(-(double)beta * x)));
}

/* Import, compile for the CPU and run: y for x. */
static void run_model(struct npu_onnx_model *m, const float *x, size_t nx, float *y, size_t ny,
		      int want_run, const char *run_msg)
{
	struct npu_runtime *rt = NULL;
	struct npu_onnx_io in = { 0 }, out = { 0 };
	uint32_t ids[2];
	void *ptrs[2];
	int ret;

	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	if (nx) {
		assert_int_equal(npu_onnx_input(m, 0, &in), 0);
		ids[0] = in.value;
		ptrs[0] = (void *)x;
	}
	assert_int_equal(npu_onnx_output(m, 0, &out), 0);
	ids[nx ? 1 : 0] = out.value;
	ptrs[nx ? 1 : 0] = y;
	assert_int_equal(npu_runtime_value_bytes(rt, out.value), ny * sizeof(float));
	assert_int_equal(npu_runtime_setup(rt, nx ? 2 : 1, ids, ptrs), 0);
	ret = npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE);
	assert_int_equal(ret, want_run);
	if (run_msg) {
		if (!strstr(npu_runtime_error(rt), run_msg))
			fail_msg("run error '%s' lacks '%s'", npu_runtime_error(rt), run_msg);
	}
	npu_runtime_free(rt);
}

static void test_custom_op_runs(void **st)
{
	static const int64_t dims[2] = { 2, 3 };
	static const float x[6] = { -3, -1, 0, 0.5f, 2, 7 };
	struct npu_onnx_options o = with_custom();
	struct npu_onnx_model *m;
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
	struct npu_runtime *rt;
	float y[6];
	struct mb b;
	size_t i;

	(void)st;
	released = created = 0;
	mb_init(&b, 13);
	input(&b, "x", 2, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", "beta=f:1.5", NULL)->domain = "com.example";
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	run_model(m, x, 6, y, 6, 0, NULL);
	for (i = 0; i < 6; i++)
		assert_float_equal(y[i], swish_ref(x[i], 1.5f), 1e-6);
	/* the node is a kernel node in a CPU segment, named after the kernel */
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_node_profile(rt, 0, &p), 0);
	assert_string_equal(p.op, "com.example::Swish");
	assert_int_equal(p.where, NPU_WHERE_CPU);
	npu_runtime_free(rt);
	assert_int_equal(created, 1);
	assert_int_equal(released, 0);
	npu_onnx_free(m);
	assert_int_equal(released, 1);

	/* a model that imports only its own domain, not ONNX's */
	mb_init(&b, 1);
	b.os.domain = "com.example";
	input(&b, "x", 2, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", "beta=f:1.5", NULL)->domain = "com.example";
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	assert_int_equal(npu_onnx_opset(m), 0);
	run_model(m, x, 6, y, 6, 0, NULL);
	for (i = 0; i < 6; i++)
		assert_float_equal(y[i], swish_ref(x[i], 1.5f), 1e-6);
	npu_onnx_free(m);
}

static void test_custom_op_unregistered(void **st)
{
	static const int64_t dims[1] = { 4 };
	struct mb b;

	(void)st;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", NULL)->domain = "com.example";
	load(&b, NULL, -EINVAL,
	     "node 'sw' (Swish): domain 'com.example' is not supported (no built-in or custom op Swish in it)");
	mb_free(&b);
}

static void test_custom_op_create_refuses(void **st)
{
	static const int64_t dims[1] = { 4 };
	struct npu_onnx_options o = with_custom();
	struct mb b;

	(void)st;
	released = created = 0;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", "beta=f:-2", NULL)->domain = "com.example";
	load(&b, &o, -EINVAL, "node 'sw' (Swish): beta -2 must be positive");
	mb_free(&b);
	assert_int_equal(created, 0);
}

static void test_custom_op_infer_refuses(void **st)
{
	static const int64_t dims[1] = { 4 };
	struct npu_onnx_options o = with_custom();
	struct mb b;

	(void)st;
	released = created = 0;
	mb_init(&b, 13);
	b.ins[b.g.n_input++] = vinfo(&b, "x", 7 /* int64 */, 1, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", NULL)->domain = "com.example";
	load(&b, &o, -EINVAL, "node 'sw' (Swish): Swish takes float32 only");
	mb_free(&b);
	/* the state create() made is released although the node was refused */
	assert_int_equal(created, 1);
	assert_int_equal(released, 1);
}

/* On a constant input the kernel runs at import: the node is folded. */
static void test_custom_op_folds(void **st)
{
	static const int64_t dims[1] = { 3 };
	static const float c[3] = { -1, 0, 4 };
	struct npu_onnx_options o = with_custom();
	struct npu_onnx_model *m;
	float y[3];
	struct mb b;
	size_t i;

	(void)st;
	released = created = 0;
	mb_init(&b, 13);
	init_f(&b, "c", 1, dims, c, 3);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "c", "y", NULL)->domain = "com.example";
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	assert_int_equal(released, 1);		/* folded: state already gone */
	run_model(m, NULL, 0, y, 3, 0, NULL);
	for (i = 0; i < 3; i++)
		assert_float_equal(y[i], swish_ref(c[i], 1.0f), 1e-6);
	npu_onnx_free(m);
}

/* The kernel's run-time error reaches npu_runtime_error() with the node's name. */
static void test_custom_op_run_error(void **st)
{
	static const int64_t dims[1] = { 2 };
	float x[2] = { 1, NAN }, y[2];
	struct npu_onnx_options o = with_custom();
	struct npu_onnx_model *m;
	struct mb b;

	(void)st;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", NULL)->domain = "com.example";
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	run_model(m, x, 2, y, 2, -EDOM, "element 1 is NaN");
	npu_onnx_free(m);
}

/* A custom op for a default-domain op type replaces the built-in one. */
static void test_custom_op_replaces_builtin(void **st)
{
	static const int64_t dims[1] = { 3 };
	static const float x[3] = { -2, 0, 3 };
	static const struct npu_onnx_op relu_as_swish = {
		.size = sizeof(struct npu_onnx_op),
		.domain = "",
		.op_type = "Relu",
		.kernel = &swish_kernel,
		.create = swish_create,
	};
	static const struct npu_onnx_op *const ops[] = { &relu_as_swish };
	struct npu_onnx_options o = { .size = sizeof(o), .custom_ops = ops, .num_custom_ops = 1 };
	struct npu_onnx_model *m;
	float y[3];
	struct mb b;
	size_t i;

	(void)st;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "Relu", "r", "x", "y", NULL);
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	run_model(m, x, 3, y, 3, 0, NULL);
	for (i = 0; i < 3; i++)
		assert_float_equal(y[i], swish_ref(x[i], 1.0f), 1e-6);
	npu_onnx_free(m);
}

/* An op nobody implements is refused, naming the node and op. */
static void test_unknown_op(void **st)
{
	static const int64_t dims[1] = { 3 };
	struct mb b;

	(void)st;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "NoSuchOp", "n1", "x", "y", NULL);
	load(&b, NULL, -EINVAL, "node 'n1' (NoSuchOp): op not supported by libnpu yet");
	mb_free(&b);
}

/*
 * Every refused node is reported in one pass, the first one first;
 * nodes that only read a refused node's outputs are not blamed.
 */
static void test_every_refusal_reported(void **st)
{
	static const int64_t dims[1] = { 3 };
	char err[512];
	struct npu_onnx_model *m = NULL;
	uint8_t *buf;
	size_t len;
	struct mb b;

	(void)st;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	output(&b, "z");
	nodef(&b, "NoSuchOp", "first", "x", "a", NULL);
	nodef(&b, "Relu", "reads_a", "a", "b2", NULL);
	nodef(&b, "Relu", "reads_b", "b2", "y", NULL);
	nodef(&b, "OtherMissingOp", "second", "x", "z", NULL);
	buf = pack(&b, &len);
	assert_int_equal(npu_onnx_load(buf, len, NULL, &m, err, sizeof(err)), -EINVAL);
	assert_null(m);
	free(buf);
	mb_free(&b);
	if (strncmp(err, "node 'first' (NoSuchOp): op not supported by libnpu yet; also node 'second' (OtherMissingOp): op not supported by libnpu yet (2 nodes refused)",
		    sizeof(err)))
		fail_msg("message: %s", err);
}

/*
 * A 1-D Conv and MaxPool ([N, C, L]) lower to the device's 2-D ops as
 * [N, C, 1, L] (every graph node is one the device takes), and compute
 * what a direct 1-D loop here computes.
 */
static void test_conv1d_on_device(void **st)
{
	static const int64_t xdims[3] = { 1, 2, 9 }, wdims[3] = { 3, 2, 3 };
	float x[18], w[18], conv[3][5], want[3][2], y[6];
	struct npu_onnx_model *m;
	struct npu_graph *g;
	struct mb b;
	size_t i, n;
	int co, l, ci, k;

	(void)st;
	for (i = 0; i < 18; i++) {
		x[i] = (float)((int)(i * 7 % 11) - 5) / 4.0f;
		w[i] = (float)((int)(i * 5 % 9) - 4) / 8.0f;
	}
	/* conv: pads 1 and 1, stride 2, dilation 1: 9 + 2 - 3 = 8 / 2 + 1 = 5 outputs */
	for (co = 0; co < 3; co++)
		for (l = 0; l < 5; l++) {
			float a = 0;

			for (ci = 0; ci < 2; ci++)
				for (k = 0; k < 3; k++) {
					int p = l * 2 + k - 1;

					if (p >= 0 && p < 9)
						a += x[ci * 9 + p] * w[co * 6 + ci * 3 + k];
				}
			conv[co][l] = a;
		}
	/* max pool: kernel 3, stride 2, no pads: (5 - 3) / 2 + 1 = 2 outputs */
	for (co = 0; co < 3; co++)
		for (l = 0; l < 2; l++) {
			float mx = conv[co][l * 2];

			for (k = 1; k < 3; k++)
				mx = fmaxf(mx, conv[co][l * 2 + k]);
			want[co][l] = mx;
		}
	mb_init(&b, 13);
	input(&b, "x", 3, xdims);
	init_f(&b, "w", 3, wdims, w, 18);
	output(&b, "y");
	nodef(&b, "Conv", "c1", "x,w", "t", "pads=ints:1,1", "strides=ints:2", NULL);
	nodef(&b, "MaxPool", "p1", "t", "y", "kernel_shape=ints:3", "strides=ints:2", NULL);
	m = load(&b, NULL, 0, NULL);
	mb_free(&b);
	g = npu_onnx_graph(m);
	n = npu_graph_num_nodes(g);
	for (i = 0; i < n; i++) {
		const char *why = NULL;

		if (npu_graph_node_supported(g, (uint32_t)i, NULL, 0, &why) != 1)
			fail_msg("graph node %zu does not run on the device: %s", i, why ? why : "");
	}
	run_model(m, x, 18, y, 6, 0, NULL);
	for (co = 0; co < 3; co++)
		for (l = 0; l < 2; l++)
			assert_float_equal(y[co * 2 + l], want[co][l], 1e-5);
	npu_onnx_free(m);
}

/* Scalar float tensors for npu_onnx_options.values. */
static struct npu_onnx_tensor scalar(const char *name, float *v)
{
	struct npu_onnx_tensor t = { .dtype = NPU_DTYPE_FP32, .rank = 0, .data = v,
				     .bytes = sizeof(*v) };

	snprintf(t.name, sizeof(t.name), "%s", name);
	return t;
}

/*
 * A Range whose limit is a graph input: refused without its value, and
 * with it (npu_onnx_options.values) the input is fixed, reported so, and
 * the model computes the range; also when the value reaches the Range
 * through another node (import retries with every known input fixed).
 */
static void test_known_values(void **st)
{
	static float start = 0.5f, limit = 5, delta = 1.5f, neg = -5;
	struct npu_onnx_tensor vals[3] = { scalar("start", &start), scalar("limit", &limit),
					   scalar("delta", &delta) };
	struct npu_onnx_options o = { .size = sizeof(o), .values = vals, .num_values = 3 };
	const float want[3] = { 0.5f, 2, 3.5f };
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct npu_runtime *rt;
	float y[3];
	int pass;
	size_t i;

	(void)st;
	for (pass = 0; pass < 2; pass++) {
		struct mb b;

		mb_init(&b, 13);
		b.ins[b.g.n_input++] = vinfo(&b, "start", 1, 0, NULL);
		b.ins[b.g.n_input++] = vinfo(&b, "limit", 1, 0, NULL);
		b.ins[b.g.n_input++] = vinfo(&b, "delta", 1, 0, NULL);
		output(&b, "y");
		if (pass) {
			/* the limit reaches the Range through a Neg */
			vals[1] = scalar("limit", &neg);
			nodef(&b, "Neg", "n", "limit", "l2", NULL);
			nodef(&b, "Range", "r", "start,l2,delta", "y", NULL);
		} else {
			nodef(&b, "Range", "r", "start,limit,delta", "y", NULL);
		}
		load(&b, NULL, -EINVAL, "(Range): ");
		m = load(&b, &o, 0, NULL);
		mb_free(&b);
		assert_int_equal(npu_onnx_num_inputs(m), 3);
		for (i = 0; i < 3; i++)
			assert_int_equal(npu_onnx_input_fixed(m, i), 1);
		assert_int_equal(npu_onnx_output(m, 0, &io), 0);
		assert_int_equal(io.rank, 1);
		assert_int_equal(io.dims[0], 3);
		assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
		{
			uint32_t ids[4];
			void *ptrs[4] = { &start, pass ? (void *)&neg : (void *)&limit, &delta, y };

			for (i = 0; i < 3; i++) {
				struct npu_onnx_io in;

				assert_int_equal(npu_onnx_input(m, i, &in), 0);
				ids[i] = in.value;
			}
			ids[3] = io.value;
			assert_int_equal(npu_runtime_setup(rt, 4, ids, ptrs), 0);
		}
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
		for (i = 0; i < 3; i++)
			assert_float_equal(y[i], want[i], 1e-6);
		npu_runtime_free(rt);
		npu_onnx_free(m);
	}
}

/* A branch graph of one node, reading the enclosing graph's @in. */
static Onnx__GraphProto *branch(struct mb *b, Onnx__NodeProto *n, const char *out)
{
	Onnx__GraphProto *g = keep(b, calloc(1, sizeof(*g)));
	Onnx__NodeProto **nodes = keep(b, calloc(1, sizeof(*nodes)));
	Onnx__ValueInfoProto **outs = keep(b, calloc(1, sizeof(*outs)));

	onnx__graph_proto__init(g);
	nodes[0] = n;
	g->n_node = 1;
	g->node = nodes;
	outs[0] = vinfo(b, out, 1, 0, NULL);
	g->n_output = 1;
	g->output = outs;
	return g;
}

static void attr_graph(struct mb *b, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
	Onnx__AttributeProto *a = keep(b, calloc(1, sizeof(*a)));
	Onnx__AttributeProto **all = keep(b, calloc(n->n_attribute + 1, sizeof(*all)));

	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	a->g = g;
	memcpy(all, n->attribute, n->n_attribute * sizeof(*all));
	all[n->n_attribute++] = a;
	n->attribute = all;
}

/*
 * An If whose condition is a constant is its branch, imported inline:
 * the branch reads the enclosing graph's x, an inner If picks its own
 * branch, and the chosen path's ops run (Relu vs Neg, Sigmoid vs Tanh
 * tell which ran).  A runtime condition is refused in words.
 */
static void test_if_constant_condition(void **st)
{
	static const int64_t dims[1] = { 4 };
	static const float x[4] = { -2, -0.5f, 0.5f, 2 };
	int outer, inner;

	(void)st;
	for (outer = 0; outer < 2; outer++)
		for (inner = 0; inner < 2; inner++) {
			struct npu_onnx_model *m;
			Onnx__NodeProto *iff, *in_if, *sg, *th, *ng;
			float y[4];
			struct mb b;
			size_t i;

			mb_init(&b, 13);
			input(&b, "x", 1, dims);
			init_i64(&b, "c_outer", (const int64_t[]){ outer }, 1);
			init_i64(&b, "c_inner", (const int64_t[]){ inner }, 1);
			output(&b, "y");
			/* the branches' nodes first; none of them is a node of the graph */
			sg = nodef(&b, "Sigmoid", "sg", "x", "s_out", NULL);
			th = nodef(&b, "Tanh", "th", "x", "h_out", NULL);
			ng = nodef(&b, "Neg", "ng", "x", "e_out", NULL);
			in_if = nodef(&b, "If", "if_inner", "b_inner", "t_out", NULL);
			attr_graph(&b, in_if, "then_branch", branch(&b, sg, "s_out"));
			attr_graph(&b, in_if, "else_branch", branch(&b, th, "h_out"));
			b.g.n_node = 0;
			nodef(&b, "Cast", "co", "c_outer", "b_outer", "to=i:9", NULL);
			nodef(&b, "Cast", "ci", "c_inner", "b_inner", "to=i:9", NULL);
			/* then: the inner If (Sigmoid or Tanh of x); else: Neg(x) */
			iff = nodef(&b, "If", "if_outer", "b_outer", "y", NULL);
			attr_graph(&b, iff, "then_branch", branch(&b, in_if, "t_out"));
			attr_graph(&b, iff, "else_branch", branch(&b, ng, "e_out"));
			m = load(&b, NULL, 0, NULL);
			mb_free(&b);
			run_model(m, x, 4, y, 4, 0, NULL);
			for (i = 0; i < 4; i++) {
				float want = !outer ? -x[i] : inner ? 1.0f / (1.0f + expf(-x[i])) :
					     tanhf(x[i]);

				assert_float_equal(y[i], want, 1e-6);
			}
			npu_onnx_free(m);
		}
	/*
	 * A condition only a run can tell (the sign of x's sum, a [1]
	 * tensor): both branches run and Where selects, so each input gets
	 * its own branch's result.
	 */
	{
		static const float above[4] = { -2, -0.5f, 0.5f, 3 }, below[4] = { -2, -0.5f, 0.5f, 1 };
		static const int64_t one[1] = { 1 };
		static const float zero[1] = { 0 };
		const float *xs[2] = { above, below };
		struct npu_onnx_model *m;
		Onnx__NodeProto *iff, *n1, *n2;
		struct mb b;
		float y[4];
		size_t k, i;

		mb_init(&b, 13);
		input(&b, "x", 1, dims);
		init_f(&b, "zero", 1, one, zero, 1);
		output(&b, "y");
		n1 = nodef(&b, "Neg", "n1", "x", "a_out", NULL);
		n2 = nodef(&b, "Tanh", "n2", "x", "b_out", NULL);
		b.g.n_node = 0;
		nodef(&b, "ReduceSum", "sum", "x", "s", "keepdims=i:0", NULL);
		nodef(&b, "Greater", "gt", "s,zero", "c", NULL);
		iff = nodef(&b, "If", "if_rt", "c", "y", NULL);
		attr_graph(&b, iff, "then_branch", branch(&b, n1, "a_out"));
		attr_graph(&b, iff, "else_branch", branch(&b, n2, "b_out"));
		m = load(&b, NULL, 0, NULL);
		mb_free(&b);
		for (k = 0; k < 2; k++) {
			run_model(m, xs[k], 4, y, 4, 0, NULL);
			for (i = 0; i < 4; i++)
				assert_float_equal(y[i], k ? tanhf(xs[k][i]) : -xs[k][i], 1e-6);
		}
		npu_onnx_free(m);
	}
}

/*
 * The plugin of Documentation/custom-ops.rst, compiled from the page into
 * NPU_DOC_DIR, loaded as npu-run loads plugins, runs a model.
 */
static void test_doc_plugin(void **st)
{
	static const int64_t dims[1] = { 5 };
	static const float x[5] = { -4, -0.5f, 0, 1, 6 };
	struct npu_onnx_options o = { .size = sizeof(o) };
	const struct npu_onnx_op *const *ops;
	npu_onnx_plugin_fn get;
	struct npu_onnx_model *m;
	size_t count = 0, i;
	void *so;
	float y[5];
	struct mb b;

	(void)st;
	so = dlopen(NPU_DOC_DIR "/libswish.so", RTLD_NOW | RTLD_LOCAL);
	if (!so)
		fail_msg("%s", dlerror());
	*(void **)&get = dlsym(so, NPU_ONNX_PLUGIN_SYMBOL);
	assert_non_null(get);
	ops = get(&count);
	assert_int_equal(count, 1);
	o.custom_ops = ops;
	o.num_custom_ops = count;
	mb_init(&b, 13);
	input(&b, "x", 1, dims);
	output(&b, "y");
	nodef(&b, "Swish", "sw", "x", "y", "beta=f:0.75", NULL)->domain = "com.example";
	m = load(&b, &o, 0, NULL);
	mb_free(&b);
	run_model(m, x, 5, y, 5, 0, NULL);
	for (i = 0; i < 5; i++)
		assert_float_equal(y[i], swish_ref(x[i], 0.75f), 1e-6);
	npu_onnx_free(m);
	dlclose(so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_custom_op_runs),
		cmocka_unit_test(test_custom_op_unregistered),
		cmocka_unit_test(test_custom_op_create_refuses),
		cmocka_unit_test(test_custom_op_infer_refuses),
		cmocka_unit_test(test_custom_op_folds),
		cmocka_unit_test(test_custom_op_run_error),
		cmocka_unit_test(test_custom_op_replaces_builtin),
		cmocka_unit_test(test_unknown_op),
		cmocka_unit_test(test_every_refusal_reported),
		cmocka_unit_test(test_conv1d_on_device),
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_if_constant_condition),
		cmocka_unit_test(test_doc_plugin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
