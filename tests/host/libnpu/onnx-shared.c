// SPDX-License-Identifier: MIT
/*
 * Runtimes specialised from one ONNX source share one read-only copy of
 * their weights: two batch sizes of a MatMul + Add + Relu model hold one
 * copy, each stays correct (against plain loops) after the other is
 * freed, and the copy goes with the last; a model of other weights gets
 * its own.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "npu/onnx.h"
#include "onnx-build.h"
#include "onnx.pb-c.h"

/* libnpu's count of live shared weight copies (graph_internal.h). */
uint64_t npu__statics_alive(void);

#define K 4
#define N 3

static float w_of(int k, int n, float scale)
{
	return scale * (float)((k * N + n) % 5) - 1.0f;
}

/* y = relu(x @ W + b) over x [batch, K], batch dynamic. */
static struct npu_onnx_source *source(float scale)
{
	static const int64_t dx[2] = { -1, K }, dw[2] = { K, N }, db[1] = { N };
	float w[K * N], bias[N] = { 0.5f, -0.25f, 0.0f };
	struct npu_onnx_source *src = NULL;
	char err[256];
	uint8_t *buf;
	struct mb b;
	size_t len;
	int k, n;

	for (k = 0; k < K; k++)
		for (n = 0; n < N; n++)
			w[k * N + n] = w_of(k, n, scale);
	mb_init(&b, 13);
	b.ins[b.g.n_input++] = vinfo(&b, "x", 1, 2, dx);
	init_f(&b, "w", 2, dw, w, K * N);
	init_f(&b, "b", 1, db, bias, N);
	nodef(&b, "MatMul", "mm", "x,w", "m", (const char *)NULL);
	nodef(&b, "Add", "add", "m,b", "a", (const char *)NULL);
	nodef(&b, "Relu", "relu", "a", "y", (const char *)NULL);
	output(&b, "y");
	buf = pack(&b, &len);
	if (npu_onnx_source_load(buf, len, NULL, &src, err, sizeof(err)))
		fail_msg("source: %s", err);
	free(buf);
	mb_free(&b);
	return src;
}

static struct npu_runtime *compile(struct npu_onnx_source *src, int64_t batch,
				   uint32_t *vx, uint32_t *vy)
{
	struct npu_onnx_shape sh = { .name = "x", .rank = 2, .dims = { batch, K } };
	struct npu_onnx_model *m = NULL;
	struct npu_runtime *rt = NULL;
	struct npu_onnx_io io;
	char err[256];

	if (npu_onnx_specialize(src, &sh, 1, &m, err, sizeof(err)))
		fail_msg("batch %lld: %s", (long long)batch, err);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	assert_int_equal(npu_onnx_input(m, 0, &io), 0);
	*vx = io.value;
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	*vy = io.value;
	npu_onnx_free(m);	/* the runtime needs neither model nor graph */
	return rt;
}

/* Run @rt on a batch of @batch rows and check it against loops. */
static void check_run(struct npu_runtime *rt, uint32_t vx, uint32_t vy, int batch, float scale)
{
	static const float bias[N] = { 0.5f, -0.25f, 0.0f };
	float x[8 * K], y[8 * N];
	int r, k, n;

	assert_true(batch <= 8);
	for (k = 0; k < batch * K; k++)
		x[k] = (float)(k % 7) * 0.25f - 0.5f;
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy }, (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	for (r = 0; r < batch; r++)
		for (n = 0; n < N; n++) {
			float a = bias[n];

			for (k = 0; k < K; k++)
				a += x[r * K + k] * w_of(k, n, scale);
			a = a > 0 ? a : 0;
			if (!(y[r * N + n] - a < 1e-5f && a - y[r * N + n] < 1e-5f))
				fail_msg("batch %d row %d col %d: %g, want %g", batch, r, n,
					 (double)y[r * N + n], (double)a);
		}
}

static void test_shared_weights(void **state)
{
	struct npu_onnx_source *src = source(0.5f), *other = source(0.75f);
	struct npu_runtime *r1, *r3, *ro;
	uint32_t x1, y1, x3, y3, xo, yo;
	uint64_t base = npu__statics_alive();

	(void)state;
	r1 = compile(src, 1, &x1, &y1);
	r3 = compile(src, 3, &x3, &y3);
	npu_onnx_source_free(src);
	/* one copy for both batch sizes */
	assert_int_equal(npu__statics_alive(), base + 1);
	ro = compile(other, 3, &xo, &yo);
	npu_onnx_source_free(other);
	/* other weights: a copy of their own */
	assert_int_equal(npu__statics_alive(), base + 2);
	check_run(r1, x1, y1, 1, 0.5f);
	check_run(r3, x3, y3, 3, 0.5f);
	check_run(ro, xo, yo, 3, 0.75f);
	npu_runtime_free(r1);
	assert_int_equal(npu__statics_alive(), base + 2);
	/* the weights outlive the runtime that made them */
	check_run(r3, x3, y3, 3, 0.5f);
	npu_runtime_free(r3);
	assert_int_equal(npu__statics_alive(), base + 1);
	check_run(ro, xo, yo, 3, 0.75f);
	npu_runtime_free(ro);
	assert_int_equal(npu__statics_alive(), base);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_weights),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-shared", tests, NULL, NULL);
}
