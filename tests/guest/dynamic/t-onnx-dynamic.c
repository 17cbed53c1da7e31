// SPDX-License-Identifier: MIT
/*
 * Dynamic shapes on the device: each model of dynamic-data/cases.txt
 * (gen-dynamic.py: a symbolic batch, a symbolic image size) parsed once
 * (npu_onnx_source_load()), imported for each case's input shape
 * (npu_onnx_specialize()) and compiled for the device; every runtime is
 * kept, run once in order, then run again in the same order with only
 * its arrays bound, so runtimes of several shapes live side by side and
 * a shape met before imports nothing.  Every output is checked against
 * numpy's, and each runtime must have device segments.
 *
 *   t-onnx-dynamic [--cpu] [DATA_DIR]    (default ./dynamic-data)
 *
 * --cpu runs the same on the CPU path (for a host without a device).
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "npu/onnx.h"
#include "tap.h"

#define MAX_CASES	16
#define MAX_OUTS	4

struct run_case {
	char model[64];
	struct npu_onnx_shape shape;
	char input[64];
	size_t nout;
	char output[MAX_OUTS][64];
	float *x, *want[MAX_OUTS], *got[MAX_OUTS];
	uint64_t nx, ny[MAX_OUTS];
	struct npu_runtime *rt;
	uint32_t ids[1 + MAX_OUTS];
};

static const char *dir = "dynamic-data";

/* @path's floats, exactly @n of them. */
static float *read_floats(const char *name, uint64_t n)
{
	char path[512];
	float *buf = malloc(n * sizeof(float) + 1);
	FILE *f;
	size_t got = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f || !buf)
		TAP_BAIL("%s: %s", path, strerror(errno));
	got = fread(buf, sizeof(float), n + 1, f);
	fclose(f);
	if (got != n)
		TAP_BAIL("%s: %zu floats, expected %llu", path, got, (unsigned long long)n);
	return buf;
}

static size_t read_cases(struct run_case *c)
{
	char path[512], line[1024];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cases.txt", dir);
	f = fopen(path, "r");
	if (!f)
		TAP_BAIL("%s: %s", path, strerror(errno));
	while (n < MAX_CASES && fgets(line, sizeof(line), f)) {
		char *tok = strtok(line, " \n");
		uint32_t k;

		if (!tok)
			continue;
		memset(&c[n], 0, sizeof(c[n]));
		snprintf(c[n].model, sizeof(c[n].model), "%s", tok);
		c[n].shape.name = "x";
		c[n].shape.rank = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
		if (c[n].shape.rank > NPU_TENSOR_MAX_RANK)
			TAP_BAIL("%s: rank %u", path, c[n].shape.rank);
		for (k = 0; k < c[n].shape.rank; k++)
			c[n].shape.dims[k] = strtoll(strtok(NULL, " \n"), NULL, 10);
		snprintf(c[n].input, sizeof(c[n].input), "%s", strtok(NULL, " \n"));
		c[n].nout = strtoul(strtok(NULL, " \n"), NULL, 10);
		if (c[n].nout > MAX_OUTS)
			TAP_BAIL("%s: %zu outputs", path, c[n].nout);
		for (k = 0; k < c[n].nout; k++)
			snprintf(c[n].output[k], sizeof(c[n].output[k]), "%s", strtok(NULL, " \n"));
		n++;
	}
	fclose(f);
	return n;
}

static char *shape_str(const struct npu_onnx_shape *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t k = 0; k < s->rank; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", k ? "x" : "",
					(long long)s->dims[k]);
	return buf;
}

/* Import @c's shape from @src, compile it and read its data; 0 or a reason printed. */
static int prepare(struct npu_onnx_source *src, struct npu_context *ctx, struct run_case *c)
{
	struct npu_onnx_model *m = NULL;
	struct npu_onnx_io io;
	char err[512] = "";
	size_t dev = 0;
	int r = npu_onnx_specialize(src, &c->shape, 1, &m, err, sizeof(err));

	if (r) {
		printf("#   npu_onnx_specialize: %s (%s)\n", err, npu_strerror(r));
		return r;
	}
	if (npu_onnx_num_outputs(m) != c->nout) {
		printf("#   %zu outputs, cases.txt has %zu\n", npu_onnx_num_outputs(m), c->nout);
		npu_onnx_free(m);
		return -EINVAL;
	}
	r = npu_graph_compile(npu_onnx_graph(m), ctx, 0, &c->rt);
	if (r) {
		printf("#   npu_graph_compile: %s\n", npu_graph_error(npu_onnx_graph(m)));
		npu_onnx_free(m);
		return r;
	}
	npu_onnx_input(m, 0, &io);
	c->ids[0] = io.value;
	c->nx = npu_runtime_value_bytes(c->rt, io.value) / sizeof(float);
	c->x = read_floats(c->input, c->nx);
	for (size_t k = 0; k < c->nout; k++) {
		npu_onnx_output(m, k, &io);
		c->ids[1 + k] = io.value;
		c->ny[k] = npu_runtime_value_bytes(c->rt, io.value) / sizeof(float);
		c->want[k] = read_floats(c->output[k], c->ny[k]);
		c->got[k] = calloc(c->ny[k] + 1, sizeof(float));
		if (!c->got[k])
			TAP_BAIL("out of memory");
	}
	npu_onnx_free(m);
	npu_runtime_num_segments(c->rt, &dev);
	if (ctx && !dev) {
		printf("#   no device segment: the model ran on the CPU path\n");
		return -ENODEV;
	}
	return 0;
}

/* Bind @c's arrays, run, compare: the largest error, or -1 for a failed run. */
static double run_and_check(struct run_case *c, struct npu_queue *q)
{
	void *data[1 + MAX_OUTS];
	double worst = 0;
	int r;

	data[0] = c->x;
	for (size_t k = 0; k < c->nout; k++) {
		memset(c->got[k], 0xff, c->ny[k] * sizeof(float));	/* NaN until written */
		data[1 + k] = c->got[k];
	}
	r = npu_runtime_setup(c->rt, 1 + c->nout, c->ids, data);
	if (!r)
		r = npu_runtime_run(c->rt, q, NPU_TIMEOUT_INFINITE);
	if (r) {
		printf("#   run: %s (%s)\n", npu_runtime_error(c->rt), npu_strerror(r));
		return -1;
	}
	for (size_t k = 0; k < c->nout; k++)
		for (uint64_t i = 0; i < c->ny[k]; i++) {
			double e = fabs((double)c->got[k][i] - c->want[k][i]) /
				   (1.0 + fabs((double)c->want[k][i]));

			if (!(e <= worst))	/* NaN too */
				worst = isnan(e) ? INFINITY : e;
		}
	return worst;
}

int main(int argc, char **argv)
{
	struct npu_device *dev = NULL;
	struct npu_context *ctx = NULL;
	struct npu_queue *q = NULL;
	static struct run_case cases[MAX_CASES];
	bool cpu = false;
	size_t n, i;
	int r;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--cpu"))
			cpu = true;
		else
			dir = argv[i];
	}
	if (!cpu) {
		r = npu_device_open(0, &dev);
		if (!r)
			r = npu_context_create(dev, &ctx);
		if (!r)
			r = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
		if (r)
			TAP_BAIL("device 0: %s", npu_strerror(r));
	}
	n = read_cases(cases);
	for (i = 0; i < n;) {
		struct npu_onnx_source *src = NULL;
		char err[512] = "", path[512], sh[64];
		size_t first = i, j;

		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].model);
		r = npu_onnx_source_load_file(path, NULL, &src, err, sizeof(err));
		if (r)
			TAP_BAIL("%s: %s", path, err);
		for (; i < n && !strcmp(cases[i].model, cases[first].model); i++)
			tap_ok(!prepare(src, ctx, &cases[i]), "%s %s: imported and compiled%s",
			       cases[i].model, shape_str(&cases[i].shape, sh, sizeof(sh)),
			       cpu ? " (CPU path)" : " for the device");
		/* each shape in turn, then again: runtimes side by side, no import */
		for (int pass = 0; pass < 2; pass++)
			for (j = first; j < i; j++) {
				double e = cases[j].rt ? run_and_check(&cases[j], q) : -1;

				if (!tap_ok(e >= 0 && e <= 1e-4, "%s %s, run %d: outputs match numpy",
					    cases[j].model,
					    shape_str(&cases[j].shape, sh, sizeof(sh)), pass + 1))
					printf("#   largest relative error %g\n", e);
			}
		TAP_RET((int)npu_onnx_source_imports(src), (int)(i - first),
			"%s: one import per shape, none for a shape run again", cases[first].model);
		npu_onnx_source_free(src);
	}
	for (i = 0; i < n; i++) {
		npu_runtime_free(cases[i].rt);
		free(cases[i].x);
		for (size_t k = 0; k < cases[i].nout; k++) {
			free(cases[i].want[k]);
			free(cases[i].got[k]);
		}
	}
	if (q)
		npu_queue_destroy(q);
	if (ctx)
		npu_context_destroy(ctx);
	if (dev)
		npu_device_close(dev);
	return tap_done();
}
