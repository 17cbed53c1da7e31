// SPDX-License-Identifier: MIT
/*
 * The memory-bound commands against what their bytes cost: each case's
 * best-of-7 thread CPU time through vnpu_compute_exec() (flat host
 * memory, the device's map() path), next to the best of 7 memcpy()s of
 * as many bytes as the command reads once and writes once, and their
 * ratio.  SOFTMAX, transposing and channel-slice COPYs, LUT and ELTWISE,
 * in the shapes real models give them (ops.rst quotes these lines).
 * Thread CPU time, so a loaded host slows the figures less than wall
 * time would; say the load when quoting them.  An argument keeps only
 * the cases whose name contains it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops-test-util.h"

#define RUNS	7

static struct flat f;
static const char *only;

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* @c, against a memcpy() of @bytes (what it reads once, what it writes). */
static void run(const char *name, const struct vnpu_cmd_compute *c, size_t bytes)
{
	double best = 1e30, copy = 1e30, t;
	uint8_t *a, *b;
	uint64_t cycles;
	int i;

	if (only && !strstr(name, only))
		return;
	a = malloc(bytes + 64);
	b = malloc(bytes + 64);
	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	memset(a, 1, bytes);
	memset(b, 2, bytes);
	for (i = 0; i < RUNS; i++) {
		int ret;

		t = cpu_now();
		ret = flat_exec(&f, c, sizeof(*c), &cycles);
		t = cpu_now() - t;
		if (ret) {
			printf("%-44s error %d\n", name, ret);
			goto out;
		}
		best = t < best ? t : best;
	}
	for (i = 0; i < RUNS; i++) {
		t = cpu_now();
		memcpy(b, a, bytes);
		__asm__ volatile("" : : "r"(b) : "memory");
		t = cpu_now() - t;
		copy = t < copy ? t : copy;
	}
	printf("%-44s %10.1f us  memcpy %8.1f us  x%5.2f\n", name, best * 1e6, copy * 1e6,
	       best / copy);
out:
	free(a);
	free(b);
}

static void fill(uint64_t va, size_t n, bool real)
{
	uint8_t *p = flat_host(&f, va);
	float *q = flat_host(&f, va);
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t h = (uint32_t)(i * 2654435761u) >> 13;

		if (real)
			q[i] = (float)(h % 1000) / 100.0f - 5.0f;
		else
			p[i] = (uint8_t)h;
	}
}

static void softmax(const char *name, int r, const uint32_t *d, uint32_t axis)
{
	struct vnpu_cmd_compute c;
	size_t n = 1;
	int k;

	for (k = 0; k < r; k++)
		n *= d[k];
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.attr.softmax.axis = axis;
	c.t[0] = tdesc(VNPU_DT_FP32, r, d);
	c.t[3] = c.t[0];
	c.t[0].va = flat_alloc(&f, 4 * n);
	c.t[3].va = flat_alloc(&f, 4 * n);
	fill(c.t[0].va, n, true);
	run(name, &c, 4 * n);
}

/* Y dense = X (dense, dims @xd) with Y's dim d X's dim perm[d]. */
static void transpose(const char *name, uint8_t dt, int r, const uint32_t *xd,
		      const int *perm)
{
	struct vnpu_cmd_compute c;
	uint32_t yd[VNPU_MAX_RANK], es = vnpu_dtype_size(dt);
	uint64_t xs[VNPU_MAX_RANK];
	size_t n = 1;
	int k;

	xs[r - 1] = 1;
	for (k = r - 2; k >= 0; k--)
		xs[k] = xs[k + 1] * xd[k + 1];
	for (k = 0; k < r; k++) {
		yd[k] = xd[perm[k]];
		n *= xd[k];
	}
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(dt, r, yd);
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	for (k = 0; k < r; k++)
		c.t[0].strides[k] = xs[perm[k]];
	c.t[3] = tdesc(dt, r, yd);
	if (es == 1) {
		tquant(&c.t[0], 0.1f, 0);
		tquant(&c.t[3], 0.1f, 0);
	}
	c.t[0].va = flat_alloc(&f, n * es);
	c.t[3].va = flat_alloc(&f, n * es);
	fill(c.t[0].va, n * es, false);
	run(name, &c, n * es);
}

/* One Concat part: NHWC [1, 48, 96, 24] into channels 24..47 of 96. */
static void concat_part(const char *name, uint8_t dt)
{
	static const uint32_t d[4] = { 1, 24, 48, 96 };
	struct vnpu_cmd_compute c;
	uint32_t es = vnpu_dtype_size(dt);

	flat_reset(&f);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(dt, 4, d);
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	c.t[0].strides[0] = 48 * 96 * 24;
	c.t[0].strides[1] = 1;
	c.t[0].strides[2] = 96 * 24;
	c.t[0].strides[3] = 24;
	c.t[3] = c.t[0];
	c.t[3].strides[0] = 48 * 96 * 96;
	c.t[3].strides[2] = 96 * 96;
	c.t[3].strides[3] = 96;
	if (es == 1) {
		tquant(&c.t[0], 0.1f, 0);
		tquant(&c.t[3], 0.1f, 0);
	}
	c.t[0].va = flat_alloc(&f, (uint64_t)es * 48 * 96 * 24);
	c.t[3].va = flat_alloc(&f, (uint64_t)es * 48 * 96 * 96) + 24 * es;
	fill(c.t[0].va, (size_t)es * 48 * 96 * 24, false);
	run(name, &c, (size_t)es * 48 * 96 * 24);
}

static void lut(const char *name, uint8_t dt)
{
	const uint32_t n = 1u << 20, tn = VNPU_LUT_ENTRIES;
	struct vnpu_cmd_compute c;

	flat_reset(&f);
	cmd_init(&c, VNPU_OP_LUT);
	c.t[0] = tdesc(dt, 1, &n);
	tquant(&c.t[0], 0.1f, 0);
	c.t[1] = tdesc(dt, 1, &tn);
	tquant(&c.t[1], 0.1f, 3);
	c.t[3] = tdesc(dt, 1, &n);
	tquant(&c.t[3], 0.1f, 3);
	c.t[0].va = flat_alloc(&f, n);
	c.t[1].va = flat_alloc(&f, tn);
	c.t[3].va = flat_alloc(&f, n);
	fill(c.t[0].va, n, false);
	fill(c.t[1].va, tn, false);
	run(name, &c, n);
}

/* Y = A + B, A dense [1, 64, 64, 96], B of dims @bd (broadcast). */
static void eltwise(const char *name, const uint32_t *bd, unsigned int act)
{
	static const uint32_t d[4] = { 1, 64, 64, 96 };
	struct vnpu_cmd_compute c;
	size_t n = 64 * 64 * 96, nb = (size_t)bd[0] * bd[1] * bd[2] * bd[3];

	flat_reset(&f);
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.attr.eltwise.kind = VNPU_ELTWISE_ADD;
	c.act = (uint8_t)act;
	c.t[0] = tdesc(VNPU_DT_FP32, 4, d);
	c.t[1] = tdesc(VNPU_DT_FP32, 4, bd);
	c.t[3] = c.t[0];
	c.t[0].va = flat_alloc(&f, 4 * n);
	c.t[1].va = flat_alloc(&f, 4 * nb);
	c.t[3].va = flat_alloc(&f, 4 * n);
	fill(c.t[0].va, n, true);
	fill(c.t[1].va, nb, true);
	/* Reads two operands (one if B is small), writes one. */
	run(name, &c, 4 * n * (nb == n ? 2 : 1));
}

int main(int argc, char **argv)
{
	static const int to_nchw[4] = { 0, 3, 1, 2 }, to_nhwc[4] = { 0, 2, 3, 1 };

	if (argc > 1)
		only = argv[1];
	flat_init(&f, 128u << 20);
	if (!f.mem)
		return 1;
	printf("vnpu memory-bound ops: best of %d, thread CPU time; memcpy of the bytes read once\n",
	       RUNS);
	softmax("softmax fp32 [973,6625] last axis", 2, (const uint32_t[]){ 973, 6625 }, 1);
	softmax("softmax fp32 [16,4096,64] axis 1", 3, (const uint32_t[]){ 16, 4096, 64 }, 1);
	softmax("softmax fp32 [262144,2] last axis", 2, (const uint32_t[]){ 262144, 2 }, 1);
	transpose("transpose fp32 NHWC->NCHW 256x256x3", VNPU_DT_FP32, 4,
		  (const uint32_t[]){ 1, 256, 256, 3 }, to_nchw);
	transpose("transpose int8 NHWC->NCHW 256x256x3", VNPU_DT_INT8, 4,
		  (const uint32_t[]){ 1, 256, 256, 3 }, to_nchw);
	transpose("transpose fp32 NCHW->NHWC 3x256x256", VNPU_DT_FP32, 4,
		  (const uint32_t[]){ 1, 3, 256, 256 }, to_nhwc);
	transpose("transpose int8 NCHW->NHWC 3x256x256", VNPU_DT_INT8, 4,
		  (const uint32_t[]){ 1, 3, 256, 256 }, to_nhwc);
	transpose("transpose int8 NCHW->NHWC 64x64x64", VNPU_DT_INT8, 4,
		  (const uint32_t[]){ 1, 64, 64, 64 }, to_nhwc);
	transpose("transpose int8 NHWC->NCHW 64x64x64", VNPU_DT_INT8, 4,
		  (const uint32_t[]){ 1, 64, 64, 64 }, to_nchw);
	transpose("transpose fp16 NCHW->NHWC 64x64x64", VNPU_DT_FP16, 4,
		  (const uint32_t[]){ 1, 64, 64, 64 }, to_nhwc);
	transpose("transpose fp32 NCHW->NHWC 64x64x64", VNPU_DT_FP32, 4,
		  (const uint32_t[]){ 1, 64, 64, 64 }, to_nhwc);
	transpose("transpose fp32 1024x1024", VNPU_DT_FP32, 2,
		  (const uint32_t[]){ 1024, 1024 }, (const int[]){ 1, 0 });
	concat_part("concat part fp32 24 of 96 channels 48x96", VNPU_DT_FP32);
	concat_part("concat part int8 24 of 96 channels 48x96", VNPU_DT_INT8);
	lut("lut int8 2^20", VNPU_DT_INT8);
	lut("lut uint8 2^20", VNPU_DT_UINT8);
	eltwise("eltwise add fp32 64x64x96", (const uint32_t[]){ 1, 64, 64, 96 }, VNPU_ACT_NONE);
	eltwise("eltwise add+relu fp32 64x64x96", (const uint32_t[]){ 1, 64, 64, 96 }, VNPU_ACT_RELU);
	eltwise("eltwise add fp32 64x64x96 + [96]", (const uint32_t[]){ 1, 1, 1, 96 }, VNPU_ACT_NONE);
	eltwise("eltwise add fp32 64x64x96 + [64,64,1]", (const uint32_t[]){ 1, 64, 64, 1 },
		VNPU_ACT_NONE);
	free(f.mem);
	return 0;
}
