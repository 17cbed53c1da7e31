// SPDX-License-Identifier: MIT
/* Helpers of the ONNX CPU kernels' tests: see onnx-ktest.h. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "kernels/ok_util.h"
#include "onnx-ktest.h"

/* ---- Tensors on the heap, freed at the end of each test ---------------------- */

static struct npu_kernel_tensor *kt_pool[64];
static size_t kt_npool;

struct npu_kernel_tensor *kt_tensor(enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
				    const void *data)
{
	struct npu_kernel_tensor *t = calloc(1, sizeof(*t));
	size_t bytes;

	assert_non_null(t);
	assert_true(kt_npool < 64);
	kt_pool[kt_npool++] = t;
	t->dtype = dt;
	t->rank = rank;
	t->elems = 1;
	for (uint32_t i = 0; i < rank; i++) {
		t->dims[i] = dims[i];
		t->elems *= dims[i];
	}
	bytes = t->elems * npu_dtype_size(dt);
	t->data = calloc(1, bytes);
	assert_non_null(t->data);
	if (data)
		memcpy(t->data, data, bytes);
	return t;
}

int kt_teardown(void **unused)
{
	(void)unused;
	while (kt_npool) {
		kt_npool--;
		free(kt_pool[kt_npool]->data);
		free(kt_pool[kt_npool]);
	}
	return 0;
}

char kt_msg[256];

/* ---- Running a kernel ------------------------------------------------------- */

int kt_run(const struct npu_kernel *k, const void *st, size_t nin,
	   struct npu_kernel_tensor **in, size_t nout, struct npu_kernel_tensor **out,
	   const struct npu_cpu_limits *lim)
{
	int ret;

	kt_msg[0] = 0;
	for (size_t i = 0; i < nout; i++) {
		if (!out[i])
			continue;
		memset(out[i], 0, sizeof(*out[i]));
	}
	ret = k->infer(st, nin, (const struct npu_kernel_tensor *const *)in, nout, out, kt_msg,
		       sizeof(kt_msg));
	if (ret)
		return ret;
	for (size_t i = 0; i < nout; i++) {
		if (!out[i])
			continue;
		out[i]->data = calloc(1, out[i]->elems * npu_dtype_size(out[i]->dtype));
		assert_non_null(out[i]->data);
	}
	ret = npu_kernel_run(k, st, nin, (const struct npu_kernel_tensor *const *)in, nout,
			     out, lim, kt_msg, sizeof(kt_msg));
	return ret;
}

void kt_free_out(struct npu_kernel_tensor *t)
{
	free(t->data);
	t->data = NULL;
}

void kt_expect_fail(int ret, const char *part)
{
	assert_int_equal(ret, -EINVAL);
	if (!strstr(kt_msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", kt_msg, part);
}

/* ---- Limits ---------------------------------------------------------------- */

int kt_polls;

bool kt_cancel_after_first(void *opaque)
{
	(void)opaque;
	return ++kt_polls > 1;
}

/* ---- Kernel calls on caller-owned tensors ----------------------------------- */

void kt_call_in(struct kt_call *c, size_t i, enum npu_dtype dt, uint32_t rank,
		const uint32_t *dims, const void *data)
{
	struct npu_kernel_tensor *t = &c->in[i];
	uint32_t d;

	assert_true(i < KT_CALL_IN);
	memset(t, 0, sizeof(*t));
	t->dtype = dt;
	t->rank = rank;
	t->elems = 1;
	for (d = 0; d < rank; d++) {
		t->dims[d] = dims[d];
		t->elems *= dims[d];
	}
	t->data = (void *)data;
	c->inp[i] = t;
	if (i + 1 > c->nin)
		c->nin = i + 1;
}

int kt_call_infer(const struct npu_kernel *k, const void *state, struct kt_call *c)
{
	c->err[0] = 0;
	return k->infer(state, c->nin, c->inp, c->nout, c->outp, c->err, sizeof(c->err));
}

int kt_call_run_limits(const struct npu_kernel *k, const void *state, struct kt_call *c,
		       const struct npu_cpu_limits *limits)
{
	size_t o;
	int rc = kt_call_infer(k, state, c);

	if (rc)
		return rc;
	for (o = 0; o < c->nout; o++) {
		if (!c->outp[o])
			continue;
		/* a test may run one call twice: the first run's output goes */
		free(c->out[o].data);
		/* an empty output still gets a buffer, so NULL means calloc failed */
		c->out[o].data = calloc(c->out[o].elems ? c->out[o].elems : 1,
					npu_dtype_size(c->out[o].dtype));
		assert_non_null(c->out[o].data);
	}
	return npu_kernel_run(k, state, c->nin, c->inp, c->nout, c->outp, limits, c->err,
			      sizeof(c->err));
}

int kt_call_run(const struct npu_kernel *k, const void *state, struct kt_call *c)
{
	return kt_call_run_limits(k, state, c, NULL);
}

void kt_call_done(struct kt_call *c)
{
	size_t o;

	for (o = 0; o < KT_CALL_OUT; o++) {
		free(c->out[o].data);
		c->out[o].data = NULL;
	}
}

void kt_call_expect_err(int rc, const struct kt_call *c, const char *part)
{
	assert_int_equal(rc, -EINVAL);
	if (!strstr(c->err, part)) {
		print_error("message \"%s\" lacks \"%s\"\n", c->err, part);
		fail();
	}
}

void kt_expect_shape(const struct npu_kernel_tensor *t, enum npu_dtype dt, uint32_t rank,
		     const uint32_t *dims)
{
	uint32_t d;

	assert_int_equal(t->dtype, dt);
	assert_int_equal(t->rank, rank);
	for (d = 0; d < rank; d++)
		assert_int_equal(t->dims[d], dims[d]);
}

void kt_expect_f(const struct npu_kernel_tensor *t, const double *want, size_t n, double tol)
{
	size_t i;

	assert_int_equal(t->elems, n);
	for (i = 0; i < n; i++) {
		double got = ok_get_f(t, i);

		if (!(fabs(got - want[i]) <= tol * (1 + fabs(want[i])))) {
			print_error("element %zu: got %.9g, want %.9g\n", i, got, want[i]);
			fail();
		}
	}
}

bool kt_cancel_now(void *opaque)
{
	(void)opaque;
	return true;
}

/* ---- One-node models ------------------------------------------------------- */

Onnx__AttributeProto *kt_new_attr(struct mb *b, Onnx__NodeProto *n, const char *name,
				  Onnx__AttributeProto__AttributeType type)
{
	Onnx__AttributeProto *at = keep(b, calloc(1, sizeof(*at)));

	onnx__attribute_proto__init(at);
	at->name = (char *)name;
	at->has_type = 1;
	at->type = type;
	assert_true(n->n_attribute < 8);
	n->attribute[n->n_attribute++] = at;
	return at;
}

void kt_attr_s(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *at =
		kt_new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	at->has_s = 1;
	at->s.data = (uint8_t *)v;
	at->s.len = strlen(v);
}

void kt_output_of(struct mb *b, const char *name, int elem)
{
	b->outs[b->g.n_output++] = vinfo(b, name, elem, 0, NULL);
}

void kt_run_raw(struct npu_onnx_model *m, const void *x, void *y, size_t y_bytes)
{
	struct npu_runtime *rt = NULL;
	struct npu_onnx_io in = { 0 }, out = { 0 };
	uint32_t ids[2];
	void *ptrs[2];
	size_t n = 0;

	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	if (npu_onnx_num_inputs(m)) {
		assert_int_equal(npu_onnx_input(m, 0, &in), 0);
		ids[n] = in.value;
		ptrs[n++] = (void *)x;
	}
	assert_int_equal(npu_onnx_output(m, 0, &out), 0);
	ids[n] = out.value;
	ptrs[n++] = y;
	assert_int_equal(npu_runtime_value_bytes(rt, out.value), y_bytes);
	assert_int_equal(npu_runtime_setup(rt, n, ids, ptrs), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
}

void kt_attr_string(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *at = keep(b, calloc(1, sizeof(*at)));

	onnx__attribute_proto__init(at);
	at->name = (char *)name;
	at->has_s = 1;
	at->s.data = (uint8_t *)v;
	at->s.len = strlen(v);
	n->attribute[n->n_attribute++] = at;
}

void kt_run_model(struct mb *b, size_t nin, void *const *ins, size_t nout, void *const *outs)
{
	struct npu_onnx_model *m = load(b, NULL, 0, NULL);
	uint32_t values[8];
	void *bufs[8];
	struct npu_onnx_io io;
	struct npu_runtime *rt;
	size_t i, k = 0;

	for (i = 0; i < nin; i++) {
		assert_int_equal(npu_onnx_input(m, i, &io), 0);
		values[k] = io.value;
		bufs[k++] = ins[i];
	}
	for (i = 0; i < nout; i++) {
		assert_int_equal(npu_onnx_output(m, i, &io), 0);
		values[k] = io.value;
		bufs[k++] = outs[i];
	}
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	assert_int_equal(npu_runtime_setup(rt, (uint32_t)k, values, bufs), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
	npu_onnx_free(m);
}

void kt_load_run(struct mb *b, const void *x, void *y, size_t y_bytes)
{
	struct npu_onnx_model *m = load(b, NULL, 0, NULL);

	mb_free(b);
	kt_run_raw(m, x, y, y_bytes);
	npu_onnx_free(m);
}
