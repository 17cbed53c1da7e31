// SPDX-License-Identifier: MIT
/* Helpers of the ONNX CPU kernels' tests: see onnx-ktest.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
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
