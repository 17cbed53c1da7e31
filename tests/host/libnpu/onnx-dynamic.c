// SPDX-License-Identifier: MIT
/*
 * Dynamic shapes (npu_onnx_source_load(), npu_onnx_specialize()): one
 * parsed model imported for several input shapes, each run on the CPU
 * path and every output checked against the same arithmetic written out
 * here in plain loops; a shape the model cannot take refused with the
 * node and op; the budgets of the load kept; the dynamic dimensions
 * reported.
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
#include <cmocka.h>
#include "npu/npu.h"
#include "npu/onnx.h"
#include "onnx.pb-c.h"
#include "onnx-build.h"

/* Deterministic inputs that are not all one value. */
static float wave(size_t i, float k)
{
	return sinf(0.37f * (float)i + k) * 2.0f;
}

/* The parsed model of @b; the packed bytes are freed before it is used. */
static struct npu_onnx_source *source(struct mb *b, const struct npu_onnx_options *o)
{
	struct npu_onnx_source *src = NULL;
	char err[512];
	size_t len;
	uint8_t *buf = pack(b, &len);

	assert_int_equal(npu_onnx_source_load(buf, len, o, &src, err, sizeof(err)), 0);
	free(buf);
	return src;
}

/*
 * Import @src for input "x" of shape @dims, run it on the CPU path with
 * @x and return output 0 in @y (@ny elements expected).
 */
static void run_shape(struct npu_onnx_source *src, uint32_t rank, const int64_t *dims,
		      const float *x, float *y, size_t ny)
{
	struct npu_onnx_shape sh = { .name = "x", .rank = rank };
	struct npu_onnx_model *m = NULL;
	struct npu_runtime *rt = NULL;
	struct npu_onnx_io in, out;
	uint64_t before = npu_onnx_source_imports(src);
	char err[512] = "";
	size_t k, n = 1;

	memcpy(sh.dims, dims, sizeof(int64_t) * rank);
	if (npu_onnx_specialize(src, &sh, 1, &m, err, sizeof(err)))
		fail_msg("specialize: %s", err);
	assert_int_equal(npu_onnx_source_imports(src), before + 1);
	assert_int_equal(npu_onnx_input(m, 0, &in), 0);
	assert_int_equal(npu_onnx_output(m, 0, &out), 0);
	assert_int_equal(in.rank, rank);
	for (k = 0; k < rank; k++)
		assert_int_equal(in.dims[k], dims[k]);
	for (k = 0; k < out.rank; k++)
		n *= out.dims[k];
	assert_int_equal(n, ny);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	npu_onnx_free(m);	/* the runtime needs neither the model nor its graph */
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ in.value, out.value },
					   (void *[]){ (void *)x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
}

/*
 * x [N, 2, 2] -> Reshape to [N, 4] (the target computed from Shape(x), a
 * fold that differs per shape) -> MatMul W [4, 3] -> Add b [3] -> Relu.
 */
static void batch_model(struct mb *b)
{
	static const int64_t xd[] = { -1, 2, 2 }, wd[] = { 4, 3 }, bd[] = { 3 };
	static float w[12], bias[3];
	static const int64_t zero[] = { 0 }, four[] = { 4 };

	for (size_t i = 0; i < 12; i++)
		w[i] = wave(i, 1.0f);
	for (size_t i = 0; i < 3; i++)
		bias[i] = wave(i, 2.0f);
	mb_init(b, 13);
	input(b, "x", 3, xd);
	init_f(b, "w", 2, wd, w, 12);
	init_f(b, "bias", 1, bd, bias, 3);
	init_i64(b, "zero", zero, 1);
	init_i64(b, "four", four, 1);
	nodef(b, "Shape", "shape", "x", "s", NULL);
	nodef(b, "Gather", "batch", "s,zero", "n", "axis=i:0", NULL);
	nodef(b, "Concat", "target", "n,four", "t", "axis=i:0", NULL);
	nodef(b, "Reshape", "flatten", "x,t", "f", NULL);
	nodef(b, "MatMul", "mm", "f,w", "p", NULL);
	nodef(b, "Add", "add", "p,bias", "q", NULL);
	nodef(b, "Relu", "relu", "q", "y", NULL);
	output(b, "y");
}

static void batch_reference(const float *x, size_t n, float *y)
{
	for (size_t r = 0; r < n; r++)
		for (size_t j = 0; j < 3; j++) {
			float acc = 0.0f;

			for (size_t k = 0; k < 4; k++)
				acc += x[r * 4 + k] * wave(k * 3 + j, 1.0f);
			acc += wave(j, 2.0f);
			y[r * 3 + j] = acc > 0.0f ? acc : 0.0f;
		}
}

static void check_close(const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i])))
			fail_msg("element %zu: %g, expected %g", i, got[i], want[i]);
}

static void test_batch(void **state)
{
	static const int64_t batches[] = { 1, 3, 7, 3, 1 };
	struct npu_onnx_source *src;
	struct mb b;

	(void)state;
	batch_model(&b);
	src = source(&b, NULL);
	mb_free(&b);
	assert_int_equal(npu_onnx_source_imports(src), 0);
	for (size_t t = 0; t < sizeof(batches) / sizeof(batches[0]); t++) {
		size_t n = (size_t)batches[t];
		float *x = calloc(n * 4, sizeof(float)), *y = calloc(n * 3, sizeof(float));
		float *want = calloc(n * 3, sizeof(float));

		assert_non_null(x);
		assert_non_null(y);
		assert_non_null(want);
		for (size_t i = 0; i < n * 4; i++)
			x[i] = wave(i, (float)t);
		run_shape(src, 3, (const int64_t[]){ batches[t], 2, 2 }, x, y, n * 3);
		batch_reference(x, n, want);
		check_close(y, want, n * 3);
		free(x);
		free(y);
		free(want);
	}
	assert_int_equal(npu_onnx_source_imports(src), 5);
	npu_onnx_source_free(src);
}

/* x [1, 1, H, W] -> Conv W [2, 1, 3, 3] pads 1 -> Relu -> y [1, 2, H, W]. */
static void spatial_model(struct mb *b)
{
	static const int64_t xd[] = { 1, 1, -1, -1 }, wd[] = { 2, 1, 3, 3 };
	static float w[18];

	for (size_t i = 0; i < 18; i++)
		w[i] = wave(i, 0.5f);
	mb_init(b, 13);
	input(b, "x", 4, xd);
	init_f(b, "w", 4, wd, w, 18);
	nodef(b, "Conv", "conv", "x,w", "c", "pads=ints:1,1,1,1", NULL);
	nodef(b, "Relu", "relu", "c", "y", NULL);
	output(b, "y");
}

static void spatial_reference(const float *x, size_t h, size_t w, float *y)
{
	for (size_t co = 0; co < 2; co++)
		for (size_t i = 0; i < h; i++)
			for (size_t j = 0; j < w; j++) {
				float acc = 0.0f;

				for (size_t ki = 0; ki < 3; ki++)
					for (size_t kj = 0; kj < 3; kj++) {
						long si = (long)i + (long)ki - 1, sj = (long)j + (long)kj - 1;

						if (si < 0 || sj < 0 || si >= (long)h || sj >= (long)w)
							continue;
						acc += x[(size_t)si * w + (size_t)sj] *
						       wave(co * 9 + ki * 3 + kj, 0.5f);
					}
				y[(co * h + i) * w + j] = acc > 0.0f ? acc : 0.0f;
			}
}

static void test_spatial(void **state)
{
	static const int64_t hw[][2] = { { 5, 5 }, { 8, 6 }, { 3, 9 }, { 5, 5 } };
	struct npu_onnx_source *src;
	struct mb b;

	(void)state;
	spatial_model(&b);
	src = source(&b, NULL);
	mb_free(&b);
	for (size_t t = 0; t < sizeof(hw) / sizeof(hw[0]); t++) {
		size_t h = (size_t)hw[t][0], w = (size_t)hw[t][1];
		float *x = calloc(h * w, sizeof(float)), *y = calloc(2 * h * w, sizeof(float));
		float *want = calloc(2 * h * w, sizeof(float));

		assert_non_null(x);
		assert_non_null(y);
		assert_non_null(want);
		for (size_t i = 0; i < h * w; i++)
			x[i] = wave(i, 3.0f + (float)t);
		run_shape(src, 4, (const int64_t[]){ 1, 1, hw[t][0], hw[t][1] }, x, y, 2 * h * w);
		spatial_reference(x, h, w, want);
		check_close(y, want, 2 * h * w);
		free(x);
		free(y);
		free(want);
	}
	npu_onnx_source_free(src);
}

/* The import's own message for shapes the model cannot take. */
static void expect_refused(struct npu_onnx_source *src, const struct npu_onnx_shape *sh,
			   size_t n, int want, const char *const *parts)
{
	struct npu_onnx_model *m = NULL;
	char err[512] = "";

	assert_int_equal(npu_onnx_specialize(src, sh, n, &m, err, sizeof(err)), want);
	assert_null(m);
	for (; *parts; parts++)
		if (!strstr(err, *parts))
			fail_msg("'%s' not in \"%s\"", *parts, err);
}

static void test_refused_shapes(void **state)
{
	static const int64_t xd[] = { -1, 3 }, to[] = { 2, 6 };
	struct npu_onnx_shape sh = { .name = "x", .rank = 2, .dims = { 4, 3 } };
	struct npu_onnx_options o = { .size = sizeof(o), .max_value_bytes = 4096 };
	struct npu_onnx_source *src;
	struct npu_onnx_model *m = NULL;
	char err[256];
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 2, xd);
	init_i64(&b, "to", to, 2);
	nodef(&b, "Reshape", "to_2x6", "x,to", "y", NULL);
	output(&b, "y");
	src = source(&b, &o);
	mb_free(&b);
	/* 4 x 3 = 2 x 6 imports */
	assert_int_equal(npu_onnx_specialize(src, &sh, 1, &m, err, sizeof(err)), 0);
	npu_onnx_free(m);
	sh.dims[0] = 5;
	expect_refused(src, &sh, 1, -EINVAL,
		       (const char *const[]){ "to_2x6", "Reshape", NULL });
	/* a static dimension keeps its size */
	sh.dims[0] = 4;
	sh.dims[1] = 5;
	expect_refused(src, &sh, 1, -EINVAL,
		       (const char *const[]){ "input 'x'", "dimension 1 is 3, not 5", NULL });
	/* the load's budgets hold for every shape */
	sh.dims[0] = 1024;
	sh.dims[1] = 3;
	expect_refused(src, &sh, 1, -E2BIG,
		       (const char *const[]){ "max_value_bytes", NULL });
	sh.name = "nope";
	expect_refused(src, &sh, 1, -EINVAL, (const char *const[]){ "no input 'nope'", NULL });
	/* an initializer is no input to shape */
	sh.name = "to";
	expect_refused(src, &sh, 1, -EINVAL, (const char *const[]){ "no input 'to'", NULL });
	/* the model without shapes: its load's, none, so the dynamic dimension is refused */
	expect_refused(src, NULL, 0, -EINVAL,
		       (const char *const[]){ "input 'x'", "dynamic ('N')", NULL });
	assert_int_equal(npu_onnx_specialize(src, NULL, 1, &m, err, sizeof(err)), -EINVAL);
	assert_int_equal(npu_onnx_specialize(NULL, &sh, 1, &m, err, sizeof(err)), -EINVAL);
	npu_onnx_source_free(src);
}

static void test_load_shapes_and_dims_info(void **state)
{
	struct npu_onnx_shape load_shape = { .name = "x", .rank = 3, .dims = { 2, 2, 2 } };
	struct npu_onnx_options o = { .shapes = &load_shape, .num_shapes = 1 };
	struct npu_onnx_dims_info di = NPU_ONNX_DIMS_INFO_INIT;
	struct npu_onnx_source *src;
	struct npu_onnx_model *m = NULL;
	struct npu_onnx_io io;
	char err[256];
	struct mb b;

	(void)state;
	batch_model(&b);
	src = source(&b, &o);
	mb_free(&b);
	/* the source keeps its own copy of the load's shapes */
	load_shape.dims[0] = 99;
	load_shape.name = "changed";
	assert_int_equal(npu_onnx_specialize(src, NULL, 0, &m, err, sizeof(err)), 0);
	assert_int_equal(npu_onnx_input(m, 0, &io), 0);
	assert_int_equal(io.dims[0], 2);
	assert_int_equal(npu_onnx_input_dims(m, 0, &di), 0);
	assert_int_equal(di.dynamic, 1u);
	assert_string_equal(di.param[0], "N");
	assert_null(di.param[1]);
	/* y is declared with no shape, and x has a dynamic dimension */
	assert_int_equal(npu_onnx_output_dims(m, 0, &di), 0);
	assert_int_equal(di.dynamic, 3u);
	assert_string_equal(di.param[0], "");
	assert_int_equal(npu_onnx_input_dims(m, 1, &di), -EINVAL);
	di.size = 2;
	assert_int_equal(npu_onnx_input_dims(m, 0, &di), -EINVAL);
	npu_onnx_free(m);
	npu_onnx_source_free(src);
}

/* npu_onnx_load() reports the same dynamic dimensions (one import, no source kept). */
static void test_load_reports_dims(void **state)
{
	struct npu_onnx_shape sh = { .name = "x", .rank = 4, .dims = { 1, 1, 4, 4 } };
	struct npu_onnx_options o = { .shapes = &sh, .num_shapes = 1 };
	struct npu_onnx_dims_info di = NPU_ONNX_DIMS_INFO_INIT;
	struct npu_onnx_model *m;
	struct mb b;

	(void)state;
	spatial_model(&b);
	m = load(&b, &o, 0, NULL);
	assert_int_equal(npu_onnx_input_dims(m, 0, &di), 0);
	assert_int_equal(di.dynamic, 0xcu);
	npu_onnx_free(m);
	mb_free(&b);
}

/* One thread's import of a shared source (no cmocka call: it is not thread-safe). */
struct import_job {
	const struct npu_onnx_source *src;
	int64_t batch;
	int ret;
	struct npu_onnx_model *m;
	char err[256];
};

static void *import_thread(void *arg)
{
	struct import_job *j = arg;
	struct npu_onnx_shape sh = { .name = "x", .rank = 3, .dims = { j->batch, 2, 2 } };

	for (int k = 0; k < 8 && !j->ret; k++) {
		npu_onnx_free(j->m);
		j->m = NULL;
		j->ret = npu_onnx_specialize(j->src, &sh, 1, &j->m, j->err, sizeof(j->err));
	}
	return NULL;
}

/* A source is only read: imports of it run on several threads at once. */
static void test_threads(void **state)
{
	struct import_job jobs[4];
	pthread_t th[4];
	struct npu_onnx_source *src;
	struct mb b;

	(void)state;
	batch_model(&b);
	src = source(&b, NULL);
	mb_free(&b);
	for (size_t t = 0; t < 4; t++) {
		jobs[t] = (struct import_job){ .src = src, .batch = (int64_t)t * 3 + 1 };
		assert_int_equal(pthread_create(&th[t], NULL, import_thread, &jobs[t]), 0);
	}
	for (size_t t = 0; t < 4; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	assert_int_equal(npu_onnx_source_imports(src), 32);
	for (size_t t = 0; t < 4; t++) {
		size_t n = (size_t)jobs[t].batch;
		float *x = calloc(n * 4, sizeof(float)), *y = calloc(n * 3, sizeof(float));
		float *want = calloc(n * 3, sizeof(float));
		struct npu_runtime *rt = NULL;
		struct npu_onnx_io in, out;

		if (jobs[t].ret)
			fail_msg("thread %zu: %s", t, jobs[t].err);
		assert_non_null(x);
		assert_non_null(y);
		assert_non_null(want);
		for (size_t i = 0; i < n * 4; i++)
			x[i] = wave(i, 5.0f + (float)t);
		assert_int_equal(npu_onnx_input(jobs[t].m, 0, &in), 0);
		assert_int_equal(npu_onnx_output(jobs[t].m, 0, &out), 0);
		assert_int_equal(out.dims[0], n);
		assert_int_equal(npu_graph_compile(npu_onnx_graph(jobs[t].m), NULL, 0, &rt), 0);
		npu_onnx_free(jobs[t].m);
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ in.value, out.value },
						   (void *[]){ x, y }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
		npu_runtime_free(rt);
		batch_reference(x, n, want);
		check_close(y, want, n * 3);
		free(x);
		free(y);
		free(want);
	}
	npu_onnx_source_free(src);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_spatial),
		cmocka_unit_test(test_refused_shapes),
		cmocka_unit_test(test_load_shapes_and_dims_info),
		cmocka_unit_test(test_load_reports_dims),
		cmocka_unit_test(test_threads),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-dynamic", tests, NULL, NULL);
}
