// SPDX-License-Identifier: MIT
/*
 * Kernel nodes (npu/kernel.h) in graphs compiled for the host: kernels of
 * host-only dtypes mixed with libnpu ops, several outputs, graph inputs
 * and outputs a kernel reads and writes directly, folding, dead nodes,
 * infer's check, the kernel's own error message, the CPU limits (work,
 * deadline, cancel), the state's single release, and arena reuse between
 * kernel values.  Every expected result is computed here in plain C.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/kernel.h"

/* ---- Graph helpers --------------------------------------------------------- */

static uint32_t val(struct npu_graph *g, const char *name, enum npu_dtype dt,
		    uint32_t rank, const uint32_t *dims, uint32_t flags,
		    const void *data)
{
	struct npu_value_desc d = { .size = sizeof(d), .name = name, .dtype = dt,
				    .rank = rank, .flags = flags, .data = data };
	uint32_t id;

	memcpy(d.dims, dims, 4ull * rank);
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

static uint32_t op_node(struct npu_graph *g, const char *name,
			const struct npu_op_params *p, uint32_t nin,
			const uint32_t *in, uint32_t out)
{
	struct npu_node_desc d = { .size = sizeof(d), .name = name,
				   .kind = NPU_NODE_OP, .op = p, .num_inputs = nin,
				   .inputs = in, .output = out };
	uint32_t id;

	assert_int_equal(npu_graph_add_node(g, &d, &id), 0);
	return id;
}

static uint32_t reshape_node(struct npu_graph *g, const char *name, uint32_t in,
			     uint32_t out)
{
	struct npu_node_desc d = { .size = sizeof(d), .name = name,
				   .kind = NPU_NODE_RESHAPE, .num_inputs = 1,
				   .inputs = &in, .output = out };
	uint32_t id;

	assert_int_equal(npu_graph_add_node(g, &d, &id), 0);
	return id;
}

/* Per-node state: how often run and release were called. */
struct kstate {
	int runs;
	int *released;		/* counts releases, outlives the state */
	int64_t k;		/* TopK's k, Spin's iterations */
	uint32_t expect[3];	/* Stamp: its inputs' stamps */
	uint32_t stamp[2];	/* Stamp: its outputs' */
};

static void kstate_release(void *state)
{
	struct kstate *s = state;

	(*s->released)++;
	free(s);
}

static struct kstate *kstate_new(int *released, int64_t k)
{
	struct kstate *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->released = released;
	s->k = k;
	return s;
}

static int add_kernel(struct npu_graph *g, const char *name,
		      const struct npu_kernel *k, void *state, uint32_t nin,
		      const uint32_t *in, uint32_t nout, const uint32_t *out,
		      uint32_t *id)
{
	struct npu_kernel_node_desc d = NPU_KERNEL_NODE_DESC_INIT;

	d.name = name;
	d.kernel = k;
	d.state = state;
	d.num_inputs = nin;
	d.inputs = in;
	d.num_outputs = nout;
	d.outputs = out;
	return npu_graph_add_kernel_node(g, &d, id);
}

static struct npu_node_profile profile(struct npu_runtime *rt, uint32_t n)
{
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

	assert_int_equal(npu_runtime_node_profile(rt, n, &p), 0);
	return p;
}

static void shape(struct npu_kernel_tensor *t, enum npu_dtype dt, uint32_t rank,
		  const uint32_t *dims)
{
	uint32_t i;

	t->dtype = dt;
	t->rank = rank;
	t->elems = 1;
	for (i = 0; i < rank; i++) {
		t->dims[i] = dims[i];
		t->elems *= dims[i];
	}
}

/* ---- Kernels ---------------------------------------------------------------- */

/* ArgMax over the last axis: fp32 [N, C] -> int64 [N]. */
static int argmax_infer(const void *state, size_t nin,
			const struct npu_kernel_tensor *const *in, size_t nout,
			struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state;
	if (nin != 1 || nout != 1 || !in[0] || in[0]->rank != 2 ||
	    in[0]->dtype != NPU_DTYPE_FP32) {
		snprintf(err, size, "needs one fp32 [N, C] input");
		return -EINVAL;
	}
	shape(out[0], NPU_DTYPE_INT64, 1, in[0]->dims);
	return 0;
}

static int argmax_run(const void *state, size_t nin,
		      const struct npu_kernel_tensor *const *in, size_t nout,
		      struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const float *x = in[0]->data;
	int64_t *y = out[0]->data;
	uint32_t n, c, nr = in[0]->dims[0], nc = in[0]->dims[1];

	(void)state, (void)nin, (void)nout, (void)call;
	((struct kstate *)state)->runs++;
	for (n = 0; n < nr; n++) {
		y[n] = 0;
		for (c = 1; c < nc; c++)
			if (x[n * nc + c] > x[n * nc + y[n]])
				y[n] = c;
	}
	return 0;
}

static const struct npu_kernel argmax_kernel = {
	.size = sizeof(struct npu_kernel), .name = "ArgMax",
	.infer = argmax_infer, .run = argmax_run, .release = kstate_release,
};

/* int64 [..] -> bool [..]: x is odd. */
static int odd_infer(const void *state, size_t nin,
		     const struct npu_kernel_tensor *const *in, size_t nout,
		     struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state, (void)err, (void)size, (void)nin, (void)nout;
	shape(out[0], NPU_DTYPE_BOOL, in[0]->rank, in[0]->dims);
	return 0;
}

static int odd_run(const void *state, size_t nin,
		   const struct npu_kernel_tensor *const *in, size_t nout,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const int64_t *x = in[0]->data;
	uint8_t *y = out[0]->data;
	uint64_t i;

	(void)state, (void)nin, (void)nout, (void)call;
	for (i = 0; i < in[0]->elems; i++)
		y[i] = (uint8_t)(x[i] & 1);
	return 0;
}

static const struct npu_kernel odd_kernel = {
	.size = sizeof(struct npu_kernel), .name = "IsOdd",
	.infer = odd_infer, .run = odd_run,
};

/* int64 a, bool b (same shape) -> fp64 a * 0.5 + b. */
static int widen_infer(const void *state, size_t nin,
		       const struct npu_kernel_tensor *const *in, size_t nout,
		       struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state, (void)nin, (void)nout;
	if (in[0]->dtype != NPU_DTYPE_INT64 || in[1]->dtype != NPU_DTYPE_BOOL ||
	    in[0]->elems != in[1]->elems) {
		snprintf(err, size, "needs int64 and bool of one size");
		return -EINVAL;
	}
	shape(out[0], NPU_DTYPE_FP64, in[0]->rank, in[0]->dims);
	return 0;
}

static int widen_run(const void *state, size_t nin,
		     const struct npu_kernel_tensor *const *in, size_t nout,
		     struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const int64_t *a = in[0]->data;
	const uint8_t *b = in[1]->data;
	double *y = out[0]->data;
	uint64_t i;

	(void)state, (void)nin, (void)nout, (void)call;
	for (i = 0; i < out[0]->elems; i++)
		y[i] = (double)a[i] * 0.5 + b[i];
	return 0;
}

static const struct npu_kernel widen_kernel = {
	.size = sizeof(struct npu_kernel), .name = "Widen",
	.infer = widen_infer, .run = widen_run,
};

/*
 * Row min, its index and max of fp32 [N, C]: three outputs, fp32 [N],
 * int64 [N], fp32 [N]; any of them may be absent.
 */
static int minmax_infer(const void *state, size_t nin,
			const struct npu_kernel_tensor *const *in, size_t nout,
			struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state, (void)nin, (void)err, (void)size;
	assert_int_equal(nout, 3);
	if (out[0])
		shape(out[0], NPU_DTYPE_FP32, 1, in[0]->dims);
	if (out[1])
		shape(out[1], NPU_DTYPE_INT64, 1, in[0]->dims);
	if (out[2])
		shape(out[2], NPU_DTYPE_FP32, 1, in[0]->dims);
	return 0;
}

static int minmax_run(const void *state, size_t nin,
		      const struct npu_kernel_tensor *const *in, size_t nout,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const float *x = in[0]->data;
	uint32_t n, c, nr = in[0]->dims[0], nc = in[0]->dims[1];

	(void)state, (void)nin, (void)nout, (void)call;
	((struct kstate *)state)->runs++;
	for (n = 0; n < nr; n++) {
		uint32_t lo = 0, hi = 0;

		for (c = 1; c < nc; c++) {
			if (x[n * nc + c] < x[n * nc + lo])
				lo = c;
			if (x[n * nc + c] > x[n * nc + hi])
				hi = c;
		}
		if (out[0])
			((float *)out[0]->data)[n] = x[n * nc + lo];
		if (out[1])
			((int64_t *)out[1]->data)[n] = lo;
		if (out[2])
			((float *)out[2]->data)[n] = x[n * nc + hi];
	}
	return 0;
}

static const struct npu_kernel minmax_kernel = {
	.size = sizeof(struct npu_kernel), .name = "MinMax",
	.infer = minmax_infer, .run = minmax_run, .release = kstate_release,
};

/*
 * TopK of fp32 [C] along its axis, k from the state: fails as ONNX's
 * TopK does for an axis out of range (the second input, int64 scalar).
 */
static int topk_infer(const void *state, size_t nin,
		      const struct npu_kernel_tensor *const *in, size_t nout,
		      struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	uint32_t k = (uint32_t)((const struct kstate *)state)->k;

	(void)nin, (void)nout, (void)err, (void)size, (void)in;
	shape(out[0], NPU_DTYPE_FP32, 1, &k);
	return 0;
}

static int topk_run(const void *state, size_t nin,
		    const struct npu_kernel_tensor *const *in, size_t nout,
		    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	int64_t axis = *(const int64_t *)in[1]->data, r = in[0]->rank;
	const float *x = in[0]->data;
	float *y = out[0]->data;
	uint64_t i;

	(void)state, (void)nin, (void)nout;
	if (axis < -r || axis >= r)
		return npu_kernel_fail(call, -EINVAL, "index %lld is out of range [%lld, %lld)",
				       (long long)axis, (long long)-r, (long long)r);
	for (i = 0; i < out[0]->elems; i++)
		y[i] = x[i];
	return 0;
}

static const struct npu_kernel topk_kernel = {
	.size = sizeof(struct npu_kernel), .name = "TopK",
	.infer = topk_infer, .run = topk_run, .release = kstate_release,
};

/*
 * Spin: copies fp32 [N] after state->k iterations of busy work, polling
 * every 1000; its work is the iterations.  A poll that never stops it
 * would make the test run for minutes, never hang it.
 */
static int same_infer(const void *state, size_t nin,
		      const struct npu_kernel_tensor *const *in, size_t nout,
		      struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state, (void)nin, (void)nout, (void)err, (void)size;
	shape(out[0], in[0]->dtype, in[0]->rank, in[0]->dims);
	return 0;
}

static uint64_t spin_work(const void *state, size_t nin,
			  const struct npu_kernel_tensor *const *in, size_t nout,
			  const struct npu_kernel_tensor *const *out)
{
	(void)nin, (void)in, (void)nout, (void)out;
	return (uint64_t)((const struct kstate *)state)->k;
}

static volatile uint64_t spin_sink;

static int spin_run(const void *state, size_t nin,
		    const struct npu_kernel_tensor *const *in, size_t nout,
		    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	int64_t i, n = ((const struct kstate *)state)->k;
	int ret;

	(void)nin, (void)nout;
	for (i = 0; i < n; i++) {
		spin_sink += (uint64_t)i;
		if (i % 1000 == 999 && (ret = npu_kernel_poll(call, 1000)))
			return ret;
	}
	memcpy(out[0]->data, in[0]->data, in[0]->elems * 4);
	return 0;
}

static const struct npu_kernel spin_kernel = {
	.size = sizeof(struct npu_kernel), .name = "Spin",
	.infer = same_infer, .work = spin_work, .run = spin_run,
	.release = kstate_release,
};

/* ---- Tests -------------------------------------------------------------------- */

/*
 * x fp32 [3, 4] -> ADD bias (a libnpu op) -> ArgMax (int64 [3]) ->
 * RESHAPE [3, 1] -> IsOdd (bool) -> Widen(int64, bool) -> fp64 [3, 1],
 * compiled for the host only.
 */
static void test_mixed_dtypes(void **unused)
{
	static const uint32_t d34[2] = { 3, 4 }, d3[1] = { 3 }, d31[2] = { 3, 1 };
	static const float bias[4] = { 0.0f, 10.0f, 0.0f, -10.0f };
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	float x[12] = { 1, 2, 3, 4, 9, -3, 5, 50, 0, -20, 7, 1 };
	double y[3], want[3];
	int released = 0;
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, vb, vs, vi, vr, vo, vy, kam, kodd, kw, in[2];
	struct npu_node_profile p;
	const char *reason = NULL;
	int n;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d34, NPU_VALUE_INPUT, NULL);
	vb = val(g, "bias", NPU_DTYPE_FP32, 1, d34 + 1, 0, bias);
	vs = val(g, "s", NPU_DTYPE_FP32, 2, d34, 0, NULL);
	vi = val(g, "idx", NPU_DTYPE_INT64, 1, d3, 0, NULL);
	vr = val(g, "idx2", NPU_DTYPE_INT64, 2, d31, 0, NULL);
	vo = val(g, "odd", NPU_DTYPE_BOOL, 2, d31, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP64, 2, d31, NPU_VALUE_OUTPUT, NULL);
	in[0] = vx;
	in[1] = vb;
	op_node(g, "add", &add, 2, in, vs);
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, &vs, 1, &vi, &kam), 0);
	reshape_node(g, "rs", vi, vr);
	assert_int_equal(add_kernel(g, "odd", &odd_kernel, NULL, 1, &vr, 1, &vo, &kodd), 0);
	in[0] = vr;
	in[1] = vo;
	assert_int_equal(add_kernel(g, "widen", &widen_kernel, NULL, 2, in, 1, &vy, &kw), 0);
	assert_int_equal(npu_graph_node_supported(g, kam, NULL, 0, &reason), 0);
	assert_string_equal(reason, "a CPU kernel");

	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, 1, &vx, (void *const[]){ x }), 0);
	assert_int_equal(npu_runtime_setup(rt, 1, &vy, (void *const[]){ y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	for (n = 0; n < 3; n++) {
		int c, best = 0;

		for (c = 1; c < 4; c++)
			if (x[n * 4 + c] + bias[c] > x[n * 4 + best] + bias[best])
				best = c;
		want[n] = best * 0.5 + (best & 1);
		assert_true(y[n] == want[n]);
	}
	p = profile(rt, kam);
	assert_string_equal(p.op, "ArgMax");
	assert_int_equal(p.where, NPU_WHERE_CPU);
	assert_string_equal(p.cpu_reason, "a CPU kernel");
	assert_string_equal(profile(rt, kw).op, "Widen");
	npu_runtime_free(rt);
	npu_graph_free(g);
	assert_int_equal(released, 1);
}

/*
 * MinMax reads graph input x directly and writes a graph output (row
 * max) and a value a libnpu op reads (row min); its middle output is
 * absent.
 */
static void test_multi_output_io(void **unused)
{
	static const uint32_t d25[2] = { 2, 5 }, d2[1] = { 2 };
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	float x[10] = { 3, -1, 4, 1, -5, 9, 2, 6, 5, 3 }, mx[2], twice[2];
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, vmin, vmax, v2, outs[3], in[2], id;
	struct kstate *s;
	int released = 0;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d25, NPU_VALUE_INPUT, NULL);
	vmin = val(g, "min", NPU_DTYPE_FP32, 1, d2, 0, NULL);
	vmax = val(g, "max", NPU_DTYPE_FP32, 1, d2, NPU_VALUE_OUTPUT, NULL);
	v2 = val(g, "twice_min", NPU_DTYPE_FP32, 1, d2, NPU_VALUE_OUTPUT, NULL);
	outs[0] = vmin;
	outs[1] = NPU_VALUE_NONE;
	outs[2] = vmax;
	s = kstate_new(&released, 0);
	assert_int_equal(add_kernel(g, "mm", &minmax_kernel, s, 1, &vx, 3, outs, &id), 0);
	in[0] = vmin;
	in[1] = vmin;
	op_node(g, "twice", &add, 2, in, v2);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	/* the graph goes first: the runtime keeps the state */
	npu_graph_free(g);
	assert_int_equal(released, 0);
	assert_int_equal(npu_runtime_setup(rt, 3, (uint32_t[]){ vx, vmax, v2 },
					   (void *const[]){ x, mx, twice }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_true(mx[0] == 4.0f && mx[1] == 9.0f);
	assert_true(twice[0] == -10.0f && twice[1] == 4.0f);
	x[0] = 100.0f;
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_true(mx[0] == 100.0f);
	assert_int_equal(s->runs, 2);
	npu_runtime_free(rt);
	assert_int_equal(released, 1);
}

/*
 * A kernel whose inputs are all static runs once, at compile, and its
 * outputs become constants; one whose outputs nothing needs is dropped.
 * Both states are released once.
 */
static void test_fold_and_dead(void **unused)
{
	static const uint32_t d23[2] = { 2, 3 }, d2[1] = { 2 };
	static const float c[6] = { 1, 7, 2, 8, 0, -1 };
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vc, vi, vx, vd, kf, kd;
	struct kstate *sf, *sd;
	int64_t idx[2];
	int released = 0;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vc = val(g, "c", NPU_DTYPE_FP32, 2, d23, 0, c);
	vi = val(g, "idx", NPU_DTYPE_INT64, 1, d2, NPU_VALUE_OUTPUT, NULL);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_INPUT, NULL);
	vd = val(g, "unused", NPU_DTYPE_INT64, 1, d2, 0, NULL);
	sf = kstate_new(&released, 0);
	sd = kstate_new(&released, 0);
	assert_int_equal(add_kernel(g, "folded", &argmax_kernel, sf, 1, &vc, 1, &vi, &kf), 0);
	assert_int_equal(add_kernel(g, "dead", &argmax_kernel, sd, 1, &vx, 1, &vd, &kd), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(sf->runs, 1);
	assert_int_equal(profile(rt, kf).where, NPU_WHERE_FOLDED);
	assert_int_equal(profile(rt, kd).where, NPU_WHERE_ELIDED);
	assert_int_equal(npu_runtime_setup(rt, 1, &vi, (void *const[]){ idx }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_true(idx[0] == 1 && idx[1] == 0);
	assert_int_equal(sf->runs, 1);
	assert_int_equal(sd->runs, 0);
	npu_runtime_free(rt);
	assert_int_equal(released, 0);
	npu_graph_free(g);
	assert_int_equal(released, 2);
}

/* infer's result must be the output values' dtypes and shapes. */
static void test_infer_mismatch(void **unused)
{
	static const uint32_t d23[2] = { 2, 3 }, d3[1] = { 3 };
	struct npu_graph *g;
	uint32_t vx, vi, vf, vs, outs[2];
	int released = 0;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_INPUT, NULL);
	vi = val(g, "idx", NPU_DTYPE_INT64, 1, d3, 0, NULL);
	vf = val(g, "f", NPU_DTYPE_FP32, 1, d3, 0, NULL);
	vs = val(g, "static", NPU_DTYPE_FP32, 1, d3, 0, (float[3]){ 0 });
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, &vx, 1, &vi, NULL), -EINVAL);
	assert_string_equal(npu_graph_error(g),
			    "node 'am' (ArgMax): output 0 (idx): the kernel infers int64 [2], the value is int64 [3]");
	assert_int_equal(released, 1);
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, &vx, 1, &vf, NULL), -EINVAL);
	assert_string_equal(npu_graph_error(g),
			    "node 'am' (ArgMax): output 0 (f): the kernel infers int64 [2], the value is fp32 [3]");
	/* infer's own refusal, and the operand checks */
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, &vi, 1, &vf, NULL), -EINVAL);
	assert_string_equal(npu_graph_error(g), "node 'am' (ArgMax): needs one fp32 [N, C] input");
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, &vx, 1, &vs, NULL), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "writes static or input value static"));
	outs[0] = NPU_VALUE_NONE;
	outs[1] = NPU_VALUE_NONE;
	assert_int_equal(add_kernel(g, "mm", &minmax_kernel, kstate_new(&released, 0),
				    1, &vx, 2, outs, NULL), -EINVAL);
	assert_string_equal(npu_graph_error(g), "node 'mm' (MinMax): no output is present");
	assert_int_equal(add_kernel(g, "am", &argmax_kernel, kstate_new(&released, 0),
				    1, (uint32_t[]){ 99 }, 1, &vi, NULL), -EINVAL);
	assert_int_equal(npu_graph_add_kernel_node(g, NULL, NULL), -EINVAL);
	assert_int_equal(released, 6);
	assert_int_equal(npu_graph_num_nodes(g), 0);
	/* a kernel node only through its own call */
	{
		struct npu_node_desc d = NPU_NODE_DESC_INIT;

		d.kind = NPU_NODE_KERNEL;
		d.num_inputs = 1;
		d.inputs = &vx;
		d.output = vf;
		assert_int_equal(npu_graph_add_node(g, &d, NULL), -EINVAL);
	}
	npu_graph_free(g);
}

/* The kernel's npu_kernel_fail() message, prefixed with the node. */
static void test_kernel_error(void **unused)
{
	static const uint32_t d3[1] = { 3 }, d2[1] = { 2 };
	static const int64_t bad_axis = 9;
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, va, vy, in[2];
	float x[3] = { 1, 2, 3 }, y[2];
	int released = 0;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d3, NPU_VALUE_INPUT, NULL);
	va = val(g, "axis", NPU_DTYPE_INT64, 0, d3, 0, &bad_axis);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d2, NPU_VALUE_OUTPUT, NULL);
	in[0] = vx;
	in[1] = va;
	assert_int_equal(add_kernel(g, "x", &topk_kernel, kstate_new(&released, 2), 2, in,
				    1, &vy, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *const[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -EINVAL);
	assert_string_equal(npu_runtime_error(rt),
			    "node 'x' (TopK): index 9 is out of range [-1, 1)");
	npu_runtime_free(rt);
	npu_graph_free(g);

	/* the same failure while folding fails the compile */
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d3, 0, x);
	va = val(g, "axis", NPU_DTYPE_INT64, 0, d3, 0, &bad_axis);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d2, NPU_VALUE_OUTPUT, NULL);
	in[0] = vx;
	in[1] = va;
	assert_int_equal(add_kernel(g, "x", &topk_kernel, kstate_new(&released, 2), 2, in,
				    1, &vy, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_string_equal(npu_graph_error(g),
			    "node 'x' (TopK): index 9 is out of range [-1, 1)");
	npu_graph_free(g);
	assert_int_equal(released, 2);
}

static int cancel_polls;

static bool cancel_after_some(void *opaque)
{
	(void)opaque;
	return ++cancel_polls > 20;
}

/* A graph of one Spin node of @iters iterations on x fp32 [4]. */
static struct npu_runtime *spin_graph(int64_t iters, int *released, float *x, float *y)
{
	static const uint32_t d4[1] = { 4 };
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, vy;

	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d4, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d4, NPU_VALUE_OUTPUT, NULL);
	assert_int_equal(add_kernel(g, "spin", &spin_kernel, kstate_new(released, iters),
				    1, &vx, 1, &vy, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *const[]){ x, y }), 0);
	return rt;
}

/* Cancel and deadline reach a kernel through npu_kernel_poll(). */
static void test_cancel_deadline(void **unused)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
	struct npu_runtime *rt;
	int released = 0;
	int64_t t0;

	(void)unused;
	/* 10^12 iterations: hours if nothing stopped it */
	rt = spin_graph(1000000000000ll, &released, x, y);
	lim.max_work = UINT64_MAX;
	lim.cancel = cancel_after_some;
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -ECANCELED);
	assert_non_null(strstr(npu_runtime_error(rt), "node 'spin' (Spin): cancelled after "));
	assert_int_equal(cancel_polls, 21);

	lim.cancel = NULL;
	lim.deadline_ns = npu_deadline_ns(50000000);
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	t0 = npu_time_ns();
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -ETIME);
	assert_true(npu_time_ns() - t0 < 30ll * 1000000000);
	assert_non_null(strstr(npu_runtime_error(rt),
			       "node 'spin' (Spin): stopped at the deadline (npu_cpu_limits.deadline_ns)"));
	npu_runtime_free(rt);
	assert_int_equal(released, 1);
}

static void *cancel_soon(void *arg)
{
	struct timespec ts = { 0, 20000000 };

	nanosleep(&ts, NULL);
	npu_runtime_cancel(arg);
	return NULL;
}

/* npu_runtime_cancel() from another thread stops a kernel mid-run. */
static void test_runtime_cancel(void **unused)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
	struct npu_runtime *rt;
	pthread_t th;
	int released = 0;

	(void)unused;
	rt = spin_graph(1000000000000ll, &released, x, y);
	lim.max_work = UINT64_MAX;
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	assert_int_equal(pthread_create(&th, NULL, cancel_soon, rt), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -ECANCELED);
	pthread_join(th, NULL);
	assert_non_null(strstr(npu_runtime_error(rt), "node 'spin' (Spin): cancelled after "));
	npu_runtime_free(rt);
	assert_int_equal(released, 1);
}

/* The kernel's work() against max_work, before it runs. */
static void test_max_work(void **unused)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
	struct npu_runtime *rt;
	int released = 0;

	(void)unused;
	rt = spin_graph(5000, &released, x, y);
	lim.max_work = 4999;
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -E2BIG);
	assert_string_equal(npu_runtime_error(rt),
			    "node 'spin' (Spin): 5000 work units exceed the CPU path's limit of 4999 (npu_cpu_limits.max_work)");
	assert_true(y[0] == 0.0f);
	lim.max_work = 5000;
	lim.max_bytes = 31;	/* x and y: 32 bytes */
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -E2BIG);
	assert_non_null(strstr(npu_runtime_error(rt), "operands of 32 bytes exceed"));
	lim.max_bytes = 32;
	assert_int_equal(npu_runtime_set_cpu_limits(rt, &lim), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_memory_equal(x, y, sizeof(x));
	/* the kernel's time is in the profile */
	{
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		assert_int_equal(npu_runtime_node_profile(rt, 0, &p), 0);
		assert_string_equal(p.op, "Spin");
		assert_true(p.time_ns > 0);
	}
	npu_runtime_free(rt);
	assert_int_equal(released, 1);
}

/* npu_kernel_run(): a kernel on host tensors, without a graph. */
static void test_kernel_run(void **unused)
{
	static const uint32_t d23[2] = { 2, 3 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	float x[6] = { 1, 7, 2, 8, 0, -1 };
	int64_t idx[2] = { -1, -1 };
	struct npu_kernel_tensor tx, ti;
	const struct npu_kernel_tensor *in[1] = { &tx };
	struct npu_kernel_tensor *out[1] = { &ti };
	struct kstate s = { 0 };
	char err[128];

	(void)unused;
	memset(&tx, 0, sizeof(tx));
	memset(&ti, 0, sizeof(ti));
	shape(&tx, NPU_DTYPE_FP32, 2, d23);
	tx.data = x;
	shape(&ti, NPU_DTYPE_INT64, 1, d23);
	ti.data = idx;
	assert_int_equal(npu_kernel_run(&argmax_kernel, &s, 1, in, 1, out, NULL, err,
					sizeof(err)), 0);
	assert_true(idx[0] == 1 && idx[1] == 0);
	assert_string_equal(err, "");
	/* default work: one unit per element of inputs and outputs, 8 */
	lim.max_work = 7;
	assert_int_equal(npu_kernel_run(&argmax_kernel, &s, 1, in, 1, out, &lim, err,
					sizeof(err)), -E2BIG);
	assert_string_equal(err, "8 work units exceed the CPU path's limit of 7 (npu_cpu_limits.max_work)");
	assert_int_equal(s.runs, 1);
	ti.elems = 3;
	assert_int_equal(npu_kernel_run(&argmax_kernel, &s, 1, in, 1, out, NULL, err,
					sizeof(err)), -EINVAL);
	assert_string_equal(err, "output 0: elems is 3, its dims make 2");
	assert_int_equal(npu_kernel_run(NULL, &s, 1, in, 1, out, NULL, NULL, 0), -EINVAL);
	/* without a call, as a kernel's own helpers may be tested */
	assert_int_equal(npu_kernel_poll(NULL, 1), -EINVAL);
	assert_int_equal(npu_kernel_fail(NULL, -ERANGE, "x"), -ERANGE);
	assert_int_equal(npu_kernel_fail(NULL, 0, "x"), -EINVAL);
}

/*
 * Stamp kernels check that every input still holds its writer's pattern
 * and fill each output with their own: a chain with values live across
 * several steps shows the arena never lets live kernel values overlap,
 * while it does reuse the memory of dead ones.
 */
static void stamp_fill(const struct npu_kernel_tensor *t, uint32_t stamp)
{
	uint64_t i;

	for (i = 0; i < t->elems; i++)
		((uint64_t *)t->data)[i] = ((uint64_t)stamp << 32) | i;
}

static int stamp_infer(const void *state, size_t nin,
		       const struct npu_kernel_tensor *const *in, size_t nout,
		       struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	static const uint32_t d[1] = { 256 };
	size_t i;

	(void)state, (void)nin, (void)in, (void)err, (void)size;
	for (i = 0; i < nout; i++)
		shape(out[i], NPU_DTYPE_UINT64, 1, d);
	return 0;
}

/* Value v's pattern is stamp 100 + v, the graph input's 99. */
static int stamp_run(const void *state, size_t nin,
		     const struct npu_kernel_tensor *const *in, size_t nout,
		     struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct kstate *s = state;
	size_t i, j;

	for (i = 0; i < nin; i++) {
		const uint64_t *p = in[i]->data;
		uint32_t want = s->expect[i];

		for (j = 0; j < in[i]->elems; j++)
			if (p[j] != (((uint64_t)want << 32) | j))
				return npu_kernel_fail(call, -EIO, "input %zu: element %zu overwritten",
						       i, j);
	}
	for (i = 0; i < nout; i++)
		stamp_fill(out[i], s->stamp[i]);
	return 0;
}

static const struct npu_kernel stamp_kernel = {
	.size = sizeof(struct npu_kernel), .name = "Stamp",
	.infer = stamp_infer, .run = stamp_run, .release = kstate_release,
};

static void test_arena_reuse(void **unused)
{
	static const uint32_t d[1] = { 256 };
	/* node -> inputs (value indices, -1 for the graph input) and outputs */
	static const struct { int in[3], nin, out[2], nout; } chain[] = {
		{ { -1 }, 1, { 0, 1 }, 2 },
		{ { 0 }, 1, { 2 }, 1 },
		{ { 2 }, 1, { 3, 10 }, 2 },	/* v10: written, never read */
		{ { 3, 1 }, 2, { 4 }, 1 },	/* v1 live since node 0 */
		{ { 4 }, 1, { 5, 6 }, 2 },
		{ { 5 }, 1, { 7 }, 1 },
		{ { 7, 6, 4 }, 3, { 8 }, 1 },
		{ { 8 }, 1, { 9 }, 1 },		/* v9: the graph output */
	};
	uint64_t x[256], y[256];
	uint32_t v[11], vx, i, k;
	struct npu_graph *g;
	struct npu_runtime *rt;
	int released = 0;

	(void)unused;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_UINT64, 1, d, NPU_VALUE_INPUT, NULL);
	for (i = 0; i < 11; i++) {
		char name[8];

		snprintf(name, sizeof(name), "v%u", i);
		v[i] = val(g, name, NPU_DTYPE_UINT64, 1, d, i == 9 ? NPU_VALUE_OUTPUT : 0, NULL);
	}
	for (i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		struct kstate *s = kstate_new(&released, 0);
		uint32_t in[3], out[2];

		for (k = 0; k < (uint32_t)chain[i].nin; k++) {
			in[k] = chain[i].in[k] < 0 ? vx : v[chain[i].in[k]];
			s->expect[k] = (uint32_t)(100 + chain[i].in[k]);
		}
		for (k = 0; k < (uint32_t)chain[i].nout; k++) {
			out[k] = v[chain[i].out[k]];
			s->stamp[k] = (uint32_t)(100 + chain[i].out[k]);
		}
		assert_int_equal(add_kernel(g, "stamp", &stamp_kernel, s,
					    (uint32_t)chain[i].nin, in, (uint32_t)chain[i].nout,
					    out, NULL), 0);
	}
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	/* 12 values of 2 KiB; at most 4 are live at once (v4, v5, v6, v7) */
	assert_true(npu_runtime_arena_bytes(rt) <= 6 * sizeof(x));
	for (i = 0; i < 256; i++)
		x[i] = 99ull << 32 | i;
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, v[9] },
					   (void *const[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_string_equal(npu_runtime_error(rt), "");
	for (i = 0; i < 256; i++)
		assert_true(y[i] == ((109ull << 32) | i));
	npu_runtime_free(rt);
	npu_graph_free(g);
	assert_int_equal(released, 8);
}

/*
 * NCHW convolutions around a kernel: the layout plan would store the
 * values between them NHWC, but the kernel must see them in the graph's
 * own dense NCHW order, as it writes them.  Identity 1x1 convolutions
 * and a copying kernel make y == x only if both sides agree.
 */
static void test_layout_around_kernel(void **unused)
{
	static const uint32_t d[4] = { 1, 3, 2, 4 }, dw[4] = { 3, 3, 1, 1 };
	static const float w[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
	struct npu_op_params conv = { .size = sizeof(conv), .kind = NPU_OP_CONV2D,
		.conv = { .stride = { 1, 1 }, .dilation = { 1, 1 }, .groups = 1 } };
	struct npu_node_desc nd = NPU_NODE_DESC_INIT;
	float x[24], y[24];
	struct npu_graph *g;
	struct npu_runtime *rt;
	uint32_t vx, vw, vv, vu, vy, in[2];
	int released = 0, i;

	(void)unused;
	for (i = 0; i < 24; i++)
		x[i] = (float)i;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, d, NPU_VALUE_INPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	vv = val(g, "v", NPU_DTYPE_FP32, 4, d, 0, NULL);
	vu = val(g, "u", NPU_DTYPE_FP32, 4, d, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, d, NPU_VALUE_OUTPUT, NULL);
	nd.kind = NPU_NODE_OP;
	nd.flags = NPU_NODE_NCHW;
	nd.op = &conv;
	nd.num_inputs = 2;
	nd.inputs = in;
	in[0] = vx;
	in[1] = vw;
	nd.name = "conv1";
	nd.output = vv;
	assert_int_equal(npu_graph_add_node(g, &nd, NULL), 0);
	assert_int_equal(add_kernel(g, "copy", &spin_kernel, kstate_new(&released, 0),
				    1, &vv, 1, &vu, NULL), 0);
	in[0] = vu;
	nd.name = "conv2";
	nd.output = vy;
	assert_int_equal(npu_graph_add_node(g, &nd, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *const[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_memory_equal(x, y, sizeof(x));
	npu_runtime_free(rt);
	npu_graph_free(g);
	assert_int_equal(released, 1);
}

/* Device ops keep refusing host-only dtypes, with the reason. */
static void test_device_ops_refuse_host_dtypes(void **unused)
{
	static const uint32_t d4[1] = { 4 };
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_graph *g;
	struct npu_runtime *rt;
	struct npu_tensor *t;
	uint32_t va, vb, in[2];

	(void)unused;
	assert_int_equal(npu_dtype_size(NPU_DTYPE_INT64), 8);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_BOOL), 1);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_FP64), 8);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_INT16), 2);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_UINT16), 2);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_UINT32), 4);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_UINT64), 8);
	assert_int_equal(npu_dtype_size((enum npu_dtype)14), 0);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_INT64, 1, d4, &t), -EINVAL);
	assert_int_equal(npu_graph_create(&g), 0);
	va = val(g, "a", NPU_DTYPE_INT64, 1, d4, NPU_VALUE_INPUT, NULL);
	vb = val(g, "b", NPU_DTYPE_INT64, 1, d4, NPU_VALUE_OUTPUT, NULL);
	in[0] = va;
	in[1] = va;
	op_node(g, "add", &add, 2, in, vb);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_string_equal(npu_graph_error(g),
			    "node add (ELTWISE): value a is int64, a host-only dtype that only kernel nodes take");
	npu_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mixed_dtypes),
		cmocka_unit_test(test_multi_output_io),
		cmocka_unit_test(test_fold_and_dead),
		cmocka_unit_test(test_infer_mismatch),
		cmocka_unit_test(test_kernel_error),
		cmocka_unit_test(test_cancel_deadline),
		cmocka_unit_test(test_runtime_cancel),
		cmocka_unit_test(test_max_work),
		cmocka_unit_test(test_kernel_run),
		cmocka_unit_test(test_arena_reuse),
		cmocka_unit_test(test_layout_around_kernel),
		cmocka_unit_test(test_device_ops_refuse_host_dtypes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
