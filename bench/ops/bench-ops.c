// SPDX-License-Identifier: MIT
/*
 * Host benchmark of the device compute engine: commands run through
 * vnpu_compute_exec() over a flat device memory (the map() path the QEMU
 * device takes for contiguous guest RAM); the engine's own fp32 GEMM
 * kernel (vnpu_sgemm(), libnpu's CPU path) and its int8 GEMM against
 * OpenBLAS sgemm of the same shape, and convolutions against XNNPACK and
 * oneDNN (bench-peers.c).  Every output a ratio is computed from is
 * checked first: the GEMMs against the reference (vnpu_ref_run()), the
 * peers' convolutions against the engine's.
 *
 * The engine runs one command on one thread (the device parallelizes
 * across its worker threads, not inside a command), so every peer is
 * pinned to one thread.  Times are process CPU time, best of several
 * batches: the host's cores are shared, and CPU time is what a
 * descheduled process does not accumulate.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "bench-peers.h"
#include "vnpu_engine.h"
#include "vnpu_exec.h"
#include "vnpu_sgemm.h"

#define BASE	0x100000ull

struct flat {
	uint8_t *mem;
	uint64_t size, next;
};

static int f_read(void *o, uint64_t va, void *buf, uint64_t len)
{
	struct flat *f = o;

	if (va < BASE || va - BASE > f->size || len > f->size - (va - BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (va - BASE), len);
	return 0;
}

static int f_write(void *o, uint64_t va, const void *buf, uint64_t len)
{
	struct flat *f = o;

	if (va < BASE || va - BASE > f->size || len > f->size - (va - BASE))
		return -EFAULT;
	memcpy(f->mem + (va - BASE), buf, len);
	return 0;
}

static void *f_map(void *o, uint64_t va, uint64_t len, bool w)
{
	struct flat *f = o;

	(void)w;
	if (va < BASE || va - BASE > f->size || len > f->size - (va - BASE))
		return NULL;
	return f->mem + (va - BASE);
}

static void f_unmap(void *o, void *h, uint64_t len, bool w, uint64_t al)
{
	(void)o, (void)h, (void)len, (void)w, (void)al;
}

static const struct vnpu_mem_ops flat_ops = { f_read, f_write, f_map, f_unmap, NULL };
/* The device's scratch arena, at its default size, as each engine has one. */
static struct vnpu_engine_cfg engine_cfg = { NULL, VNPU_I8_AUTO };

static uint64_t f_alloc(struct flat *f, uint64_t len)
{
	uint64_t va = BASE + f->next;

	f->next += (len + 4095) & ~4095ull;
	if (f->next > f->size) {
		fprintf(stderr, "bench memory exhausted\n");
		exit(1);
	}
	return va;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t f2u(float v)
{
	uint32_t u;

	memcpy(&u, &v, 4);
	return u;
}

static void fill(struct flat *f, uint64_t va, uint64_t len, bool is_float)
{
	uint8_t *p = f->mem + (va - BASE);
	uint64_t i;

	for (i = 0; i < len; i += is_float ? 4 : 1) {
		if (is_float) {
			float v = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;

			memcpy(p + i, &v, 4);
		} else {
			p[i] = (uint8_t)(i * 2654435761u >> 13);
		}
	}
}

static struct vnpu_tensor_desc td(uint8_t dt, int rank, const uint32_t *dims,
				  uint64_t va)
{
	struct vnpu_tensor_desc d;
	int i;

	memset(&d, 0, sizeof(d));
	d.dtype = dt;
	d.rank = (uint8_t)rank;
	d.va = va;
	for (i = 0; i < rank; i++)
		d.dims[i] = dims[i];
	return d;
}

static void q(struct vnpu_tensor_desc *d, float s, int32_t zp)
{
	d->quant = VNPU_QUANT_TENSOR;
	d->scale = f2u(s);
	d->zero_point = zp;
}

/* CPU seconds per run of @c: best of several batches of at least 0.2 s. */
static double time_cmd(struct flat *f, const struct vnpu_cmd_compute *c,
		       uint64_t *cycles)
{
	struct vnpu_compute_result res;
	double best = 1e30;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		double t0 = bench_cpu_now(), t;
		int n = 0;

		do {
			if (vnpu_compute_exec(c, sizeof(*c), &flat_ops, f,
					      &engine_cfg, &res)) {
				fprintf(stderr, "engine rejected the command\n");
				exit(1);
			}
			*cycles = res.cycles;
			n++;
			t = bench_cpu_now() - t0;
		} while (t < 0.2);
		if (t / n < best)
			best = t / n;
	}
	return best;
}

/* @ours: vnpu_sgemm(), else OpenBLAS. */
static double time_sgemm(bool ours, int m, int n, int k, const float *a,
			 const float *b, float *y)
{
	double best = 1e30;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		double t0 = bench_cpu_now(), t;
		int cnt = 0;

		do {
			if (!ours)
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
					    m, n, k, 1.0f, a, k, b, n, 0.0f, y, n);
			else if (vnpu_sgemm(false, false, m, n, k, a, k, b, n, y, n)) {
				fprintf(stderr, "vnpu_sgemm: out of memory\n");
				exit(1);
			}
			cnt++;
			t = bench_cpu_now() - t0;
		} while (t < 0.2);
		if (t / cnt < best)
			best = t / cnt;
	}
	return best;
}

/* OpenBLAS sgemm rate for an m x n x k product, in GFLOP/s. */
static double blas_rate(int m, int n, int k, int threads)
{
	float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
	float *y = malloc(sizeof(float) * m * n);
	double t;
	int i;

	for (i = 0; i < m * k; i++)
		a[i] = (float)(i % 7) - 3.0f;
	for (i = 0; i < k * n; i++)
		b[i] = (float)(i % 5) - 2.0f;
	openblas_set_num_threads(threads);
	t = time_sgemm(false, m, n, k, a, b, y);
	openblas_set_num_threads(1);
	free(a);
	free(b);
	free(y);
	return 2.0 * m * n * k / t * 1e-9;
}

/* Only the benchmarks whose name contains argv[1], when given. */
static const char *only;

static bool wanted(const char *name)
{
	return !only || strstr(name, only);
}

/*
 * The ratio lines: per class, the worst engine / peer speed ratio over
 * the cases whose outputs were checked, or why there is none.  A class
 * with no valid measurement prints "ratio <name>: ERROR <why>", never a
 * number (scripts/bench-summary.py counts that line as not met).
 */
enum { R_GEMM_F32, R_GEMM_I8, R_CONV_I8, R_CONV_F32, R_DW_I8, R_DW_F32, R_N };
static const struct {
	const char *name;
	const char *goal;
} ratio_lines[R_N] = {
	[R_GEMM_F32] = { "gemm-fp32-vnpu-sgemm-vs-openblas", ">= 1.0" },
	[R_GEMM_I8] = { "gemm-int8-engine-vs-openblas-fp32", ">= 4.0" },
	[R_CONV_I8] = { "conv-int8-vs-best-peer", ">= 1.0" },
	[R_CONV_F32] = { "conv-fp32-vs-best-peer", ">= 1.0" },
	[R_DW_I8] = { "dwconv-int8-vs-best-peer", ">= 1.0" },
	[R_DW_F32] = { "dwconv-fp32-vs-best-peer", ">= 1.0" },
};
static double worst[R_N];
static unsigned int measured[R_N];
static char ratio_error[R_N][256];

static void note_ratio(int cls, double r)
{
	if (!measured[cls]++ || r < worst[cls])
		worst[cls] = r;
}

/* The class's line becomes an error; the first reason is kept. */
__attribute__((format(printf, 2, 3)))
static void note_error(int cls, const char *fmt, ...)
{
	va_list ap;

	if (ratio_error[cls][0])
		return;
	va_start(ap, fmt);
	vsnprintf(ratio_error[cls], sizeof(ratio_error[cls]), fmt, ap);
	va_end(ap);
}

static void print_ratios(void)
{
	int cls;

	for (cls = 0; cls < R_N; cls++) {
		const char *name = ratio_lines[cls].name;

		if (ratio_error[cls][0])
			printf("ratio %s: ERROR %s\n", name, ratio_error[cls]);
		else if (!measured[cls])
			printf("ratio %s: ERROR no case measured\n", name);
		else if (!isfinite(worst[cls]) || worst[cls] <= 0)
			printf("ratio %s: ERROR invalid measurement %g\n", name,
			       worst[cls]);
		else
			printf("ratio %s: %.2fx (goal %sx)\n", name, worst[cls],
			       ratio_lines[cls].goal);
	}
}

/* The reference's output of @c (vnpu_ref_run()), in a buffer of its own. */
static void *ref_output(struct flat *f, const struct vnpu_cmd_compute *c,
			size_t bytes)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct vnpu_op_bind b;
	void *y = malloc(bytes);
	int i;

	if (!y || vnpu_op_check(c, sizeof(*c), &cc, &info)) {
		fprintf(stderr, "reference: command refused or out of memory\n");
		exit(1);
	}
	memset(&b, 0, sizeof(b));
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if ((info.present >> i) & 1)
			b.data[i] = f->mem + (c->t[i].va - BASE);
	b.data[3] = y;
	if (vnpu_ref_run(&cc, &b)) {
		fprintf(stderr, "reference: run failed\n");
		exit(1);
	}
	return y;
}

/*
 * Elements of an s x s GEMM output @got outside the tolerance of the
 * reference's @ref (Documentation/ops.rst, "Tolerances"): int8 bit-exact;
 * fp32, for inputs in [-1, 1], |got - ref| <= 2e-5 (K + 1) + 2e-6 |ref|.
 * The first such element is described in @why.
 */
static size_t gemm_mismatches(bool int8, uint32_t s, const void *got,
			      const void *ref, char *why, size_t len)
{
	size_t i, n = (size_t)s * s, bad = 0;

	for (i = 0; i < n; i++) {
		bool ok;
		double g, r;

		if (int8) {
			g = ((const int8_t *)got)[i];
			r = ((const int8_t *)ref)[i];
			ok = g == r;
		} else {
			g = ((const float *)got)[i];
			r = ((const float *)ref)[i];
			ok = fabs(g - r) <= 2e-5 * (s + 1) + 2e-6 * fabs(r);
		}
		if (!ok && !bad++)
			snprintf(why, len, "first at [%zu][%zu]: %g, reference %g",
				 i / s, i % s, g, r);
	}
	return bad;
}

/*
 * GEMM s x s x s against OpenBLAS sgemm on one thread.  fp32: the
 * engine's own kernel, vnpu_sgemm() (the engine's fp32 GEMM in libnpu's
 * CPU path; the QEMU device's engine calls OpenBLAS itself, so timing its
 * command would compare OpenBLAS with itself).  int8: the engine's GEMM
 * command (its int8 kernel) against the fp32 sgemm a user would otherwise
 * run.  The timed kernel's output is held against the reference's first;
 * a mismatch makes the class's ratio line an error.
 */
static void bench_gemm(struct flat *f, uint32_t s, bool int8)
{
	uint32_t da[2] = { s, s };
	size_t ybytes = (size_t)s * s * (int8 ? 1 : 4), bad;
	int cls = int8 ? R_GEMM_I8 : R_GEMM_F32;
	struct vnpu_cmd_compute c;
	struct vnpu_compute_result res;
	uint64_t cycles = 0;
	double t, b1, rate;
	char name[64], why[128];
	void *yref, *y;

	snprintf(name, sizeof(name), "gemm %s %ux%ux%u", int8 ? "int8" : "fp32", s, s, s);
	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_GEMM;
	c.hdr.size = sizeof(c);
	if (int8) {
		c.t[0] = td(VNPU_DT_UINT8, 2, da, f_alloc(f, (uint64_t)s * s));
		c.t[1] = td(VNPU_DT_INT8, 2, da, f_alloc(f, (uint64_t)s * s));
		c.t[3] = td(VNPU_DT_INT8, 2, da, f_alloc(f, (uint64_t)s * s));
		q(&c.t[0], 0.02f, 128);
		q(&c.t[1], 0.01f, 0);
		q(&c.t[3], 0.5f, -3);
		c.act = VNPU_ACT_RELU;
	} else {
		c.t[0] = td(VNPU_DT_FP32, 2, da, f_alloc(f, 4ull * s * s));
		c.t[1] = td(VNPU_DT_FP32, 2, da, f_alloc(f, 4ull * s * s));
		c.t[3] = td(VNPU_DT_FP32, 2, da, f_alloc(f, 4ull * s * s));
	}
	fill(f, c.t[0].va, (uint64_t)s * s * (int8 ? 1 : 4), !int8);
	fill(f, c.t[1].va, (uint64_t)s * s * (int8 ? 1 : 4), !int8);
	yref = ref_output(f, &c, ybytes);
	y = f->mem + (c.t[3].va - BASE);
	if (int8) {
		if (vnpu_compute_exec(&c, sizeof(c), &flat_ops, f, &engine_cfg, &res)) {
			fprintf(stderr, "engine rejected the command\n");
			exit(1);
		}
	} else if (vnpu_sgemm(false, false, s, s, s, (const float *)(f->mem + (c.t[0].va - BASE)),
			      s, (const float *)(f->mem + (c.t[1].va - BASE)), s, y, s)) {
		fprintf(stderr, "vnpu_sgemm: out of memory\n");
		exit(1);
	}
	bad = gemm_mismatches(int8, s, y, yref, why, sizeof(why));
	free(yref);
	if (bad) {
		printf("%-34s output differs from the reference in %zu of %u elements, %s\n",
		       name, bad, s * s, why);
		note_error(cls, "%s: %s output differs from the reference in %zu of %u elements, %s",
			   name, int8 ? "the engine's" : "vnpu_sgemm's", bad, s * s, why);
		return;
	}
	if (int8) {
		t = time_cmd(f, &c, &cycles);
	} else {
		float *a = (float *)(f->mem + (c.t[0].va - BASE));
		float *b = (float *)(f->mem + (c.t[1].va - BASE));

		t = time_sgemm(true, s, s, s, a, b, y);
	}
	b1 = blas_rate(s, s, s, 1);
	rate = 2.0 * s * s * s / t * 1e-9;
	if (int8)
		printf("%-34s %8.1f GOP/s    engine, x%.2f vs OpenBLAS sgemm 1T (%.1f)  "
		       "model %.3f ms  output = reference\n", name, rate, rate / b1, b1,
		       (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
	else
		printf("%-34s %8.1f GFLOP/s  vnpu_sgemm, x%.2f vs OpenBLAS sgemm 1T (%.1f)  "
		       "output within tolerance of the reference\n", name, rate, rate / b1, b1);
	note_ratio(cls, rate / b1);
}

/*
 * Convolution layer shapes.  The model rows are the distinct Conv layers
 * of the real ONNX files in $VNPU_CACHE/models (read with Debian's
 * python3-onnx 1.12 and its shape inference; PP-OCR det at a 1x3x192x384
 * input, rec at 1x3x48x320), the heaviest of each kind per model: the
 * first (3-channel) conv, the 1x1 convs, and every depthwise variant
 * (kernel, stride).  ONNX pads [top, left, bottom, right] map to pt, pl,
 * pb, pr.
 */
/*
 * Without VNNI, oneDNN's u8 x s8 convolutions multiply with vpmaddubsw,
 * whose int16 sums of two products saturate once |x * w| pairs pass
 * 32767: with uint8 inputs, full 8-bit weights give it outputs that are
 * not the convolution (measured on an AVX2 host: every differing output
 * equals oneDNN's result with int16-saturated pair sums).  oneDNN's
 * documentation advises 7-bit weights there, so every int8 case draws
 * weights in [-64, 63] for the engine and every peer, on every host.
 */
#define INT8_CONV_WEIGHTS_WHY \
	"int8 conv: weights in [-64, 63] for engine and peers alike: oneDNN " \
	"without VNNI (vpmaddubsw) saturates int16 sums of two uint8 x int8 " \
	"products, as its documentation warns; engine output = reference first"

struct conv_case {
	const char *tag;
	uint32_t h, w, ci, co, kh, kw, sh, sw, pt, pl, pb, pr, groups;
	uint32_t planar;	/* the engine's X NCHW (channel planes), not NHWC */
};

static const struct conv_case conv_cases[] = {
	/* classic */
	{ "classic", 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },
	{ "classic", 28, 28, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },
	{ "classic", 14, 14, 256, 256, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "classic", 56, 56, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1, 128, 0 },
	{ "classic", 56, 56, 128, 128, 3, 3, 2, 2, 0, 0, 1, 1, 128, 0 },
	/* BlazeFace front 128x128 */
	{ "bf-front", 128, 128, 3, 24, 5, 5, 2, 2, 1, 1, 2, 2, 1, 0 },
	{ "bf-front", 64, 64, 24, 28, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-front", 16, 16, 80, 88, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-front", 8, 8, 96, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-front", 64, 64, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, 0 },
	{ "bf-front", 64, 64, 28, 28, 3, 3, 2, 2, 0, 0, 1, 1, 28, 0 },
	{ "bf-front", 16, 16, 88, 88, 3, 3, 2, 2, 0, 0, 1, 1, 88, 0 },
	{ "bf-front", 8, 8, 96, 96, 3, 3, 1, 1, 1, 1, 1, 1, 96, 0 },
	/* BlazeFace back 256x256 */
	{ "bf-back", 256, 256, 3, 24, 5, 5, 2, 2, 1, 1, 2, 2, 1, 0 },
	{ "bf-back", 128, 128, 24, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-back", 32, 32, 48, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-back", 16, 16, 96, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "bf-back", 128, 128, 24, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, 0 },
	{ "bf-back", 128, 128, 24, 24, 3, 3, 2, 2, 0, 0, 1, 1, 24, 0 },
	{ "bf-back", 32, 32, 48, 48, 3, 3, 1, 1, 1, 1, 1, 1, 48, 0 },
	{ "bf-back", 16, 16, 96, 96, 3, 3, 1, 1, 1, 1, 1, 1, 96, 0 },
	/* PP-OCRv4 det at 192x384 */
	{ "ocr-det", 192, 384, 3, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0 },
	{ "ocr-det", 96, 192, 16, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-det", 12, 24, 192, 192, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-det", 6, 12, 384, 384, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-det", 48, 96, 96, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },
	{ "ocr-det", 96, 192, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16, 0 },
	{ "ocr-det", 96, 192, 32, 32, 3, 3, 2, 2, 1, 1, 1, 1, 32, 0 },
	{ "ocr-det", 12, 24, 192, 192, 5, 5, 1, 1, 2, 2, 2, 2, 192, 0 },
	{ "ocr-det", 12, 24, 192, 192, 5, 5, 2, 2, 2, 2, 2, 2, 192, 0 },
	{ "ocr-det", 6, 12, 384, 384, 5, 5, 1, 1, 2, 2, 2, 2, 384, 0 },
	/* PP-OCRv4 rec at 48x320 */
	{ "ocr-rec", 48, 320, 3, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0 },
	{ "ocr-rec", 24, 160, 64, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-rec", 12, 80, 240, 240, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-rec", 6, 80, 480, 480, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-rec", 1, 40, 480, 60, 1, 3, 1, 1, 0, 1, 0, 1, 1, 0 },
	{ "ocr-rec", 24, 160, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64, 0 },
	{ "ocr-rec", 24, 160, 64, 64, 3, 3, 2, 1, 1, 1, 1, 1, 64, 0 },
	{ "ocr-rec", 12, 160, 128, 128, 3, 3, 1, 2, 1, 1, 1, 1, 128, 0 },
	{ "ocr-rec", 12, 80, 240, 240, 5, 5, 1, 1, 2, 2, 2, 2, 240, 0 },
	{ "ocr-rec", 6, 80, 480, 480, 5, 5, 2, 1, 2, 2, 2, 2, 480, 0 },
	/*
	 * PP-OCR's direction classifier (ch_ppocr_mobile_v2.0_cls) as
	 * npu-run --cpu runs it on its 7-image input: each conv's batch of 7
	 * as one image 7 times as tall (NHWC dense: the same rows), and its
	 * first conv's X the model's NCHW input (planar), as the CPU path
	 * hands it.  Hard swish follows most of them (see the paths line).
	 */
	{ "ocr-cls", 48 * 7, 192, 3, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
	{ "ocr-cls", 24 * 7, 96, 8, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 12 * 7, 96, 8, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 6 * 7, 96, 8, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 6 * 7, 96, 32, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 3 * 7, 96, 16, 88, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 3 * 7, 96, 88, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 2 * 7, 96, 32, 200, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 2 * 7, 96, 200, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
	{ "ocr-cls", 7, 1, 200, 50, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0 },
};

struct eng_call {
	struct flat *f;
	const struct vnpu_cmd_compute *c;
};

static void eng_run_fn(void *arg)
{
	struct eng_call *e = arg;
	struct vnpu_compute_result res;

	if (vnpu_compute_exec(e->c, sizeof(*e->c), &flat_ops, e->f, &engine_cfg,
			      &res)) {
		fprintf(stderr, "engine rejected the command\n");
		exit(1);
	}
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/*
 * Peer output against the engine's: int8 within one step (the libraries
 * round the scaled sum in their own order), fp32 within a relative 1e-4
 * of the output's magnitude.  A mismatch makes the class's ratio line an
 * error: a peer timed on something else is no comparison.
 */
static bool check_peer(int cls, const char *name, const char *peer, bool int8,
		       const void *eng, const void *got, size_t n)
{
	size_t i, bad = 0;
	double big = 1e-6;

	if (!int8)
		for (i = 0; i < n; i++)
			big = fmax(big, fabs(((const float *)eng)[i]));
	for (i = 0; i < n; i++) {
		if (int8) {
			int d = (int)((const uint8_t *)eng)[i] - ((const uint8_t *)got)[i];

			bad += d > 1 || d < -1;
		} else {
			double d = fabs((double)((const float *)eng)[i] - ((const float *)got)[i]);

			bad += !(d <= 1e-4 * big);
		}
	}
	if (bad) {
		printf("%s: %s output differs from the engine's in %zu of %zu\n",
		       name, peer, bad, n);
		note_error(cls, "%s: %s output differs from the engine's in %zu of %zu",
			   name, peer, bad, n);
	}
	return !bad;
}

/*
 * An fp32 conv's time on the kernel the engine picks for it and on
 * im2col + sgemm (what it runs with the int8 kernel forced to the
 * generic one, which leaves no direct kernel), with ReLU and with hard
 * swish: the rule vnpu_eng_conv_f32_ok() applies is held to these.  The
 * im2col side's sgemm is OpenBLAS here; libnpu's CPU path links
 * vnpu_sgemm() instead.
 */
static void bench_conv_paths(struct flat *f, struct vnpu_cmd_compute *c,
			     const char *name)
{
	static const struct {
		uint8_t act;
		const char *name;
	} acts[] = { { VNPU_ACT_RELU, "relu" }, { VNPU_ACT_HARD_SWISH, "hard_swish" } };
	struct eng_call ec = { f, c };
	struct vnpu_compute_result res;
	enum vnpu_i8_kernel keep = engine_cfg.i8_kernel;
	unsigned int a;

	printf("%-46s paths:", name);
	for (a = 0; a < sizeof(acts) / sizeof(acts[0]); a++) {
		double td, ti;
		enum vnpu_eng_path path;

		c->act = acts[a].act;
		engine_cfg.i8_kernel = keep;
		if (vnpu_compute_exec(c, sizeof(*c), &flat_ops, f, &engine_cfg, &res))
			exit(1);
		path = res.path;
		td = peer_time(eng_run_fn, &ec);
		engine_cfg.i8_kernel = VNPU_I8_GENERIC;
		if (vnpu_compute_exec(c, sizeof(*c), &flat_ops, f, &engine_cfg, &res))
			exit(1);
		ti = peer_time(eng_run_fn, &ec);
		printf(" %s %s %.3f ms, im2col %.3f ms, x%.2f%s", acts[a].name,
		       path == VNPU_ENG_CONV_F32 ? "direct" :
		       path == VNPU_ENG_IM2COL_F32 ? "im2col" : "other", td * 1e3,
		       ti * 1e3, ti / td, a + 1 < sizeof(acts) / sizeof(acts[0]) ? ";" : "\n");
	}
	engine_cfg.i8_kernel = keep;
	c->act = VNPU_ACT_RELU;
}

static void bench_conv_case(struct flat *f, const struct conv_case *cc, bool int8)
{
	uint32_t oh = (cc->h + cc->pt + cc->pb - cc->kh) / cc->sh + 1;
	uint32_t ow = (cc->w + cc->pl + cc->pr - cc->kw) / cc->sw + 1;
	uint32_t cig = cc->ci / cc->groups, es = int8 ? 1 : 4;
	uint32_t dx[4] = { 1, cc->h, cc->w, cc->ci }, dw[4] = { cc->co, cc->kh, cc->kw, cig };
	uint32_t dy[4] = { 1, oh, ow, cc->co }, nb = cc->co, seed = 12345;
	size_t xn = (size_t)cc->h * cc->w * cc->ci, wn = (size_t)cc->co * cc->kh * cc->kw * cig;
	size_t yn = (size_t)oh * ow * cc->co, i, bad;
	bool dw_ = cc->groups > 1 && cc->groups == cc->ci && cc->co == cc->ci;
	double flops = 2.0 * oh * ow * cc->co * cc->kh * cc->kw * cig;
	int cls = int8 ? (dw_ ? R_DW_I8 : R_CONV_I8) : (dw_ ? R_DW_F32 : R_CONV_F32);
	double te, tx, tx2 = INFINITY, tdn, best, ratio;
	bool same = true;
	struct vnpu_cmd_compute c;
	struct peer_conv p;
	struct eng_call ec = { f, &c };
	char name[96];
	void *ypeer;
	uint8_t *ye;

	snprintf(name, sizeof(name), "%s %s %s %ux%ux%u->%u k%ux%u s%ux%u%s%s", int8 ? "int8" : "fp32",
		 dw_ ? "dw" : "conv", cc->tag, cc->h, cc->w, cc->ci, cc->co, cc->kh, cc->kw,
		 cc->sh, cc->sw, cc->pt + cc->pl + cc->pb + cc->pr ? "" : " p0",
		 cc->planar && !int8 ? " nchw" : "");
	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_CONV2D;
	c.hdr.size = sizeof(c);
	c.attr.conv = (struct vnpu_attr_conv2d){ cc->sh, cc->sw, 1, 1, cc->pt, cc->pl,
		cc->pb, cc->pr, cc->groups, { 0 } };
	c.t[0] = td(int8 ? VNPU_DT_UINT8 : VNPU_DT_FP32, 4, dx, f_alloc(f, xn * es));
	c.t[1] = td(int8 ? VNPU_DT_INT8 : VNPU_DT_FP32, 4, dw, f_alloc(f, wn * es));
	c.t[2] = td(int8 ? VNPU_DT_INT32 : VNPU_DT_FP32, 1, &nb, f_alloc(f, 4ull * cc->co));
	c.t[3] = td(int8 ? VNPU_DT_UINT8 : VNPU_DT_FP32, 4, dy, f_alloc(f, yn * es));
	memset(&p, 0, sizeof(p));
	p = (struct peer_conv){ cc->h, cc->w, cc->ci, cc->co, cc->kh, cc->kw, cc->sh, cc->sw,
		cc->pt, cc->pl, cc->pb, cc->pr, cc->groups, oh, ow, int8, 0, 0, 0,
		NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	if (int8) {
		uint8_t *x = f->mem + (c.t[0].va - BASE);
		int8_t *w = (int8_t *)(f->mem + (c.t[1].va - BASE));
		int32_t *b = (int32_t *)(f->mem + (c.t[2].va - BASE));

		for (i = 0; i < xn; i++)
			x[i] = (uint8_t)lcg(&seed);
		/* 7-bit weights: see INT8_CONV_WEIGHTS_WHY. */
		for (i = 0; i < wn; i++)
			w[i] = (int8_t)((int)(lcg(&seed) % 128) - 64);
		for (i = 0; i < cc->co; i++)
			b[i] = (int32_t)(lcg(&seed) % 20001) - 10000;
		/* An output scale that keeps most sums inside uint8. */
		p.xs = 0.02f;
		p.ws = 0.01f;
		p.ys = p.xs * p.ws * sqrtf((float)(cc->kh * cc->kw * cig)) * 75.0f;
		q(&c.t[0], p.xs, 0);
		q(&c.t[1], p.ws, 0);
		q(&c.t[3], p.ys, 0);
		p.x_u8 = x;
		p.w_s8 = w;
		p.b_s32 = b;
	} else {
		float *x = (float *)(f->mem + (c.t[0].va - BASE));
		float *w = (float *)(f->mem + (c.t[1].va - BASE));
		float *b = (float *)(f->mem + (c.t[2].va - BASE));

		for (i = 0; i < xn; i++)
			x[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
		if (cc->planar) {
			/* The peers keep NHWC x; the engine reads a planar copy. */
			float *xp = (float *)(f->mem + (f_alloc(f, xn * es) - BASE));
			size_t hw = (size_t)cc->h * cc->w;

			c.t[0].va = (uint64_t)((uint8_t *)xp - f->mem) + BASE;
			c.t[0].flags = VNPU_TENSOR_STRIDED;
			c.t[0].strides[0] = xn;
			c.t[0].strides[1] = cc->w;
			c.t[0].strides[2] = 1;
			c.t[0].strides[3] = hw;
			for (i = 0; i < xn; i++)
				xp[(i % cc->ci) * hw + i / cc->ci] = x[i];
		}
		for (i = 0; i < wn; i++)
			w[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
		for (i = 0; i < cc->co; i++)
			b[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
		p.x_f32 = x;
		p.w_f32 = w;
		p.b_f32 = b;
	}
	c.act = VNPU_ACT_RELU;
	te = peer_time(eng_run_fn, &ec);
	ye = f->mem + (c.t[3].va - BASE);
	if (int8) {
		/* The peers are held against the engine: the engine against the reference. */
		uint8_t *yref = ref_output(f, &c, yn);

		for (i = 0, bad = 0; i < yn; i++)
			bad += ye[i] != yref[i];
		free(yref);
		if (bad) {
			printf("%s: engine output differs from the reference in %zu of %zu\n",
			       name, bad, yn);
			note_error(cls, "%s: engine output differs from the reference in %zu of %zu",
				   name, bad, yn);
			return;
		}
	}
	if (getenv("VNPU_BENCH_NO_PEERS")) {
		/* For profiling the engine alone: no peer, so no ratio. */
		printf("%-46s eng %8.3f ms %6.1f GF/s\n", name, te * 1e3, flops / te * 1e-9);
		note_error(cls, "not measured: VNPU_BENCH_NO_PEERS set, the peers did not run");
		if (!int8 && !dw_)
			bench_conv_paths(f, &c, name);
		return;
	}
	ypeer = malloc(yn * es);
	p.y_f32 = ypeer;
	p.y_u8 = ypeer;
	if (int8) {
		tx = peer_xnn_conv(&p, PEER_XNN_QS8);
		same &= check_peer(cls, name, "XNNPACK qs8", true, ye, ypeer, yn);
		tx2 = peer_xnn_conv(&p, PEER_XNN_QU8);
		same &= check_peer(cls, name, "XNNPACK qu8", true, ye, ypeer, yn);
	} else {
		tx = peer_xnn_conv(&p, PEER_XNN_F32);
		same &= check_peer(cls, name, "XNNPACK f32", false, ye, ypeer, yn);
	}
	tdn = peer_dnnl_conv(&p);
	same &= check_peer(cls, name, "oneDNN", int8, ye, ypeer, yn);
	free(ypeer);
	if (!same)
		return;
	best = fmin(fmin(tx, tx2), tdn);
	ratio = best / te;
	note_ratio(cls, ratio);
	printf("%-46s eng %8.3f ms %6.1f GF/s | xnn%s %8.3f ms", name, te * 1e3,
	       flops / te * 1e-9, int8 ? "-qs8" : "", tx * 1e3);
	if (int8)
		printf(" qu8 %8.3f ms", tx2 * 1e3);
	printf(" | dnnl %8.3f ms | best peer %6.1f GF/s  x%.2f\n", tdn * 1e3,
	       flops / best * 1e-9, ratio);
	if (!int8 && !dw_)
		bench_conv_paths(f, &c, name);
}

/* Bytes per second of plain memcpy over @bytes, the baseline of COPY. */
static double memcpy_rate(struct flat *f, uint64_t src, uint64_t dst,
			  uint64_t bytes)
{
	double best = 1e30;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		double t0 = now(), t;
		int n = 0;

		do {
			memcpy(f->mem + (dst - BASE), f->mem + (src - BASE), bytes);
			n++;
			t = now() - t0;
		} while (t < 0.2);
		if (t / n < best)
			best = t / n;
	}
	return 2.0 * (double)bytes / best;
}

/*
 * COPY: bytes read plus written per second, against memcpy of the output's
 * size (read + write) on the same memory.
 */
static void bench_copy(struct flat *f, const char *name, uint8_t xdt,
		       uint8_t ydt, uint32_t rows, uint32_t cols, bool transpose,
		       uint32_t border, uint32_t pad)
{
	uint32_t dx[2] = { transpose ? cols : rows, transpose ? rows : cols };
	uint32_t dy[2] = { dx[0] + 2 * pad, dx[1] + 2 * pad };
	uint32_t xes = vnpu_dtype_size(xdt), yes = vnpu_dtype_size(ydt);
	uint64_t xb = (uint64_t)rows * cols * xes, yb = (uint64_t)dy[0] * dy[1] * yes;
	struct vnpu_cmd_compute c;
	uint64_t cycles;
	double t, base;

	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_COPY;
	c.hdr.size = sizeof(c);
	c.t[0] = td(xdt, 2, dx, f_alloc(f, xb));
	c.t[3] = td(ydt, 2, dy, f_alloc(f, yb));
	if (transpose) {
		c.t[0].flags = VNPU_TENSOR_STRIDED;
		c.t[0].strides[0] = 1;
		c.t[0].strides[1] = cols;
	}
	c.attr.copy.border = border;
	c.attr.copy.offset[0] = (int32_t)pad;
	c.attr.copy.offset[1] = (int32_t)pad;
	if (xdt == VNPU_DT_UINT8)
		q(&c.t[0], 0.02f, 128);
	if (ydt == VNPU_DT_UINT8)
		q(&c.t[3], 0.02f, 128);
	fill(f, c.t[0].va, xb, xdt == VNPU_DT_FP32);
	t = time_cmd(f, &c, &cycles);
	base = memcpy_rate(f, c.t[0].va, c.t[3].va, yb < xb ? yb : xb);
	printf("%-34s %8.2f GB/s  x%.2f vs memcpy (%.2f GB/s)  %.3f ms  model %.3f ms\n",
	       name, (double)(xb + yb) / t * 1e-9, (double)(xb + yb) / t / base,
	       base * 1e-9, t * 1e3, (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
}

/* RESIZE NHWC [1,h,w,ch] -> [1,2h,2w,ch]: output elements per second. */
static void bench_resize(struct flat *f, const char *name, uint8_t dt,
			 uint32_t mode, uint32_t h, uint32_t w, uint32_t ch)
{
	uint32_t dx[4] = { 1, h, w, ch }, dy[4] = { 1, 2 * h, 2 * w, ch };
	uint32_t es = vnpu_dtype_size(dt);
	uint64_t xb = (uint64_t)h * w * ch * es, yb = 4 * xb;
	struct vnpu_cmd_compute c;
	uint64_t cycles;
	double t;

	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_RESIZE;
	c.hdr.size = sizeof(c);
	c.t[0] = td(dt, 4, dx, f_alloc(f, xb));
	c.t[3] = td(dt, 4, dy, f_alloc(f, yb));
	if (dt == VNPU_DT_UINT8) {
		q(&c.t[0], 0.02f, 128);
		q(&c.t[3], 0.02f, 128);
	}
	c.attr.resize.mode = mode;
	if (mode == VNPU_RESIZE_CUBIC)
		c.attr.resize.cubic_a = f2u(-0.75f);
	fill(f, c.t[0].va, xb, dt == VNPU_DT_FP32);
	t = time_cmd(f, &c, &cycles);
	printf("%-34s %8.1f Melem/s  %.2f GB/s  %.3f ms  model %.3f ms\n", name,
	       (double)(yb / es) / t * 1e-6, (double)(xb + yb) / t * 1e-9, t * 1e3,
	       (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
}

/* Seconds per vnpu_ref_run() of @c over @f (the path without the engine). */
static double time_ref(struct flat *f, const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct vnpu_op_bind b;
	double t0 = now(), t;
	int i, n = 0;

	if (vnpu_op_check(c, sizeof(*c), &cc, &info))
		exit(1);
	memset(&b, 0, sizeof(b));
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if ((info.present >> i) & 1)
			b.data[i] = f->mem + (c->t[i].va - BASE);
	do {
		if (vnpu_ref_run(&cc, &b))
			exit(1);
		n++;
		t = now() - t0;
	} while (t < 0.3);
	return t / n;
}

/*
 * ConvTranspose, the 2x upsampling of a detection neck (k2 s2) and a
 * k4 s2 p1 one: rate, and speed-up over the reference.  ReLU, fused into
 * the conv kernels the stride phases run on.
 */
static void bench_convt(struct flat *f, uint32_t hw, uint32_t ci, uint32_t co,
			uint32_t k, bool int8)
{
	uint32_t p = k > 2 ? 1 : 0, oh = (hw - 1) * 2 + k - 2 * p;
	uint32_t dx[4] = { 1, hw, hw, ci }, dw[4] = { ci, k, k, co };
	uint32_t dy[4] = { 1, oh, oh, co }, es = int8 ? 1 : 4;
	struct vnpu_cmd_compute c;
	uint64_t cycles;
	double t, tr, flops = 2.0 * hw * hw * ci * k * k * co;
	char name[64];

	snprintf(name, sizeof(name), "convt %s %ux%ux%u->%u k%u s2",
		 int8 ? "int8" : "fp32", hw, hw, ci, co, k);
	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_CONV_TRANSPOSE;
	c.hdr.size = sizeof(c);
	c.attr.convt = (struct vnpu_attr_conv_transpose){ 2, 2, 1, 1, p, p, p, p, 1,
		0, 0, 0 };
	c.t[0] = td(int8 ? VNPU_DT_UINT8 : VNPU_DT_FP32, 4, dx, f_alloc(f, (uint64_t)hw * hw * ci * es));
	c.t[1] = td(int8 ? VNPU_DT_INT8 : VNPU_DT_FP32, 4, dw, f_alloc(f, (uint64_t)co * k * k * ci * es));
	c.t[3] = td(int8 ? VNPU_DT_UINT8 : VNPU_DT_FP32, 4, dy, f_alloc(f, (uint64_t)oh * oh * co * es));
	if (int8) {
		q(&c.t[0], 0.02f, 128);
		q(&c.t[1], 0.01f, 0);
		q(&c.t[3], 0.5f, 0);
	}
	c.act = VNPU_ACT_RELU;
	fill(f, c.t[0].va, (uint64_t)hw * hw * ci * es, !int8);
	fill(f, c.t[1].va, (uint64_t)co * k * k * ci * es, !int8);
	t = time_cmd(f, &c, &cycles);
	tr = time_ref(f, &c);
	printf("%-34s %8.1f G(FL)OP/s  %.3f ms  x%.1f vs reference  model %.3f ms\n",
	       name, flops / t * 1e-9, t * 1e3, tr / t,
	       (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
}

/* REDUCE fp32: GB/s of input read, and speed-up over the reference. */
static void bench_reduce(struct flat *f, const char *what, int rank,
			 const uint32_t *dims, uint32_t axes, uint32_t kind)
{
	uint32_t dy[VNPU_MAX_RANK];
	struct vnpu_cmd_compute c;
	uint64_t cycles, n = 1, ny = 1;
	double t, tr;
	char name[64];
	int i;

	snprintf(name, sizeof(name), "reduce %s", what);
	if (!wanted(name))
		return;
	for (i = 0; i < rank; i++) {
		dy[i] = (axes >> i) & 1 ? 1 : dims[i];
		n *= dims[i];
		ny *= dy[i];
	}
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_REDUCE;
	c.hdr.size = sizeof(c);
	c.attr.reduce.kind = kind;
	c.attr.reduce.axes = axes;
	c.t[0] = td(VNPU_DT_FP32, rank, dims, f_alloc(f, 4 * n));
	c.t[3] = td(VNPU_DT_FP32, rank, dy, f_alloc(f, 4 * ny));
	fill(f, c.t[0].va, 4 * n, true);
	t = time_cmd(f, &c, &cycles);
	tr = time_ref(f, &c);
	printf("%-34s %8.2f GB/s  %.3f ms  x%.1f vs reference  model %.3f ms\n",
	       name, 4.0 * n / t * 1e-9, t * 1e3, tr / t,
	       (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
}

/*
 * ELTWISE / ACTIVATION fp32 over a 1x64x64x64 NHWC tensor (the size of
 * the elementwise ops of PP-OCR's classifier): Melem/s, GB/s of operand
 * bytes read and written, and speed-up over the reference.  @chan: B is
 * a [C] vector broadcast over N, H, W; @kind < 0: ACTIVATION @act, with
 * @chan a per-channel scale and shift.
 */
static void bench_elt(struct flat *f, const char *what, int kind,
		      unsigned int act, bool chan)
{
	uint32_t d[4] = { 1, 64, 64, 64 }, n = 64 * 64 * 64;
	struct vnpu_cmd_compute c;
	uint64_t cycles, bytes;
	double t, tr;
	char name[64];

	snprintf(name, sizeof(name), "%s fp32 64x64x64", what);
	if (!wanted(name))
		return;
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP32, 4, d, f_alloc(f, 4ull * n));
	c.t[3] = td(VNPU_DT_FP32, 4, d, f_alloc(f, 4ull * n));
	fill(f, c.t[0].va, 4ull * n, true);
	bytes = 8ull * n;
	if (kind >= 0) {
		c.hdr.opcode = VNPU_OP_ELTWISE;
		c.attr.eltwise.kind = (uint32_t)kind;
		c.t[1] = chan ? td(VNPU_DT_FP32, 1, d + 3, f_alloc(f, 4ull * d[3])) :
			 td(VNPU_DT_FP32, 4, d, f_alloc(f, 4ull * n));
		fill(f, c.t[1].va, chan ? 4ull * d[3] : 4ull * n, true);
		bytes += chan ? 4ull * d[3] : 4ull * n;
	} else {
		c.hdr.opcode = VNPU_OP_ACTIVATION;
		c.act = (uint8_t)act;
		if (chan) {
			/* A batch normalization: P [2, C] scale and shift. */
			uint32_t dp[2] = { 2, d[3] };

			c.t[1] = td(VNPU_DT_FP32, 2, dp, f_alloc(f, 8ull * d[3]));
			fill(f, c.t[1].va, 8ull * d[3], true);
		}
	}
	t = time_cmd(f, &c, &cycles);
	tr = time_ref(f, &c);
	printf("%-34s %8.1f Melem/s  %.2f GB/s  %.3f ms  x%.1f vs reference  model %.3f ms\n",
	       name, n / t * 1e-6, bytes / t * 1e-9, t * 1e3, tr / t,
	       (double)cycles / (VNPU_MODEL_CLOCK_MHZ * 1e3));
}

/*
 * Abort latency: the longest stretch a command runs between two polls of
 * the abort flag is how long a reset can take to stop it.  Each case is
 * one of the largest commands the limits allow on one engine path.
 */
struct gap {
	double last, max;
	unsigned int polls;
};

static struct gap gap;

static bool gap_poll(void *opaque)
{
	double t = now();

	(void)opaque;
	if (t - gap.last > gap.max)
		gap.max = t - gap.last;
	gap.last = t;
	gap.polls++;
	return false;
}

static const struct vnpu_mem_ops gap_ops = { f_read, f_write, f_map, f_unmap,
					     gap_poll };

static void gap_case(struct flat *f, const char *name,
		     struct vnpu_cmd_compute *c)
{
	struct vnpu_compute_result res;
	double t0;
	int i, ret;

	if (!wanted("abort") && !wanted(name))
		return;
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (c->t[i].dtype)
			fill(f, c->t[i].va, 1u << 20, c->t[i].dtype == VNPU_DT_FP32);
	memset(&gap, 0, sizeof(gap));
	t0 = now();
	gap.last = t0;
	ret = vnpu_compute_exec(c, sizeof(*c), &gap_ops, f, &engine_cfg, &res);
	gap_poll(NULL);
	printf("abort gap %-32s max %6.3f ms over %5u polls, command %8.1f ms%s\n",
	       name, gap.max * 1e3, gap.polls, (now() - t0) * 1e3,
	       ret ? " (refused!)" : "");
}

static void bench_abort_gap(struct flat *f)
{
	struct vnpu_cmd_compute c;
	uint32_t s;

	/* Fault every page in first: a first touch is not the engine's gap. */
	memset(f->mem, 0x3f, f->size);	/* 0.75f, 1.8 in fp16: no denormals */
	/* GEMM at CMD_MACS: 2048 x 1024 x 2048, fp32 (sgemm blocks) and int8. */
	for (s = 0; s < 2; s++) {
		f->next = 0;
		memset(&c, 0, sizeof(c));
		c.hdr.opcode = VNPU_OP_GEMM;
		c.hdr.size = sizeof(c);
		c.t[0] = td(s ? VNPU_DT_INT8 : VNPU_DT_FP32, 2,
			    (const uint32_t[]){ 2048, 1024 }, f_alloc(f, 8u << 20));
		c.t[1] = td(s ? VNPU_DT_INT8 : VNPU_DT_FP32, 2,
			    (const uint32_t[]){ 1024, 2048 }, f_alloc(f, 8u << 20));
		c.t[3] = td(s ? VNPU_DT_INT8 : VNPU_DT_FP32, 2,
			    (const uint32_t[]){ 2048, 2048 }, f_alloc(f, 16u << 20));
		if (s) {
			q(&c.t[0], 0.02f, 0);
			q(&c.t[1], 0.01f, 0);
			q(&c.t[3], 0.5f, 0);
		}
		gap_case(f, s ? "gemm int8 2^32 MACs" : "gemm fp32 2^32 MACs", &c);
	}
	/* The reference path: a pooling window of REDUCTION taps. */
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_POOL2D;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 271, 271, 4 },
		    f_alloc(f, 4u * 271 * 271 * 4));
	c.t[3] = td(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 16, 16, 4 },
		    f_alloc(f, 4u * 16 * 16 * 4));
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG,
		.kernel_h = 256, .kernel_w = 256, .stride_h = 1, .stride_w = 1 };
	gap_case(f, "avg pool 256x256 window (ref)", &c);
	/* Softmax over the longest axis, and a depthwise conv of 2^16 channels. */
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_SOFTMAX;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP32, 2, (const uint32_t[]){ 64, 65536 },
		    f_alloc(f, 16u << 20));
	c.t[3] = td(VNPU_DT_FP32, 2, (const uint32_t[]){ 64, 65536 },
		    f_alloc(f, 16u << 20));
	c.attr.softmax.axis = 1;
	gap_case(f, "softmax 64 x 2^16 (ref)", &c);
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_CONV2D;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 8, 8, 65536 },
		    f_alloc(f, 16u << 20));
	c.t[1] = td(VNPU_DT_FP32, 4, (const uint32_t[]){ 65536, 3, 3, 1 },
		    f_alloc(f, 9u * 65536 * 4));
	c.t[3] = td(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 6, 6, 65536 },
		    f_alloc(f, 36u * 65536 * 4));
	c.attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1, .stride_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = 65536 };
	gap_case(f, "depthwise 3x3 x 2^16 channels", &c);
	/*
	 * The slowest unit of work: an fp16 conv on the reference path whose
	 * weights lie 512 bytes apart, one cache miss per multiply, over a
	 * window of the full REDUCTION.
	 */
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_CONV2D;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP16, 4, (const uint32_t[]){ 1, 35, 35, 64 },
		    f_alloc(f, 2u * 35 * 35 * 64));
	c.t[1] = td(VNPU_DT_FP16, 4, (const uint32_t[]){ 1, 32, 32, 64 },
		    f_alloc(f, 32u << 20));
	c.t[1].flags = VNPU_TENSOR_STRIDED;
	c.t[1].strides[3] = 256;
	c.t[1].strides[2] = 256 * 64;
	c.t[1].strides[1] = 256 * 64 * 32;
	c.t[1].strides[0] = 256 * 64 * 32 * 32;
	c.t[3] = td(VNPU_DT_FP16, 4, (const uint32_t[]){ 1, 4, 4, 1 },
		    f_alloc(f, 64));
	c.attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1, .stride_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = 1 };
	gap_case(f, "conv fp16 strided W (ref)", &c);
	/* One row of 2^23 fp32 -> fp16 conversions, and a wide-channel resize. */
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_COPY;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP32, 1, (const uint32_t[]){ 1u << 23 }, f_alloc(f, 32u << 20));
	c.t[3] = td(VNPU_DT_FP16, 1, (const uint32_t[]){ 1u << 23 }, f_alloc(f, 16u << 20));
	gap_case(f, "copy one 2^23 fp32->fp16 row", &c);
	f->next = 0;
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_RESIZE;
	c.hdr.size = sizeof(c);
	c.t[0] = td(VNPU_DT_FP16, 4, (const uint32_t[]){ 1, 2, 2, 1u << 20 }, f_alloc(f, 8u << 20));
	c.t[3] = td(VNPU_DT_FP16, 4, (const uint32_t[]){ 1, 3, 3, 1u << 20 }, f_alloc(f, 18u << 20));
	c.attr.resize.mode = VNPU_RESIZE_CUBIC;
	c.attr.resize.cubic_a = f2u(-0.75f);
	gap_case(f, "resize cubic fp16 2^20 channels", &c);
}

int main(int argc, char **argv)
{
	struct flat f = { .size = 64u << 20 };
	size_t i;

	/*
	 * OpenBLAS starts its thread pool when it is loaded, and the idle
	 * workers spin in sched_yield() on the other core: measured, 40% of
	 * the process's CPU time while the engine ran.  One-thread runs are
	 * what is compared, so restart with OpenBLAS (and OpenMP, for
	 * oneDNN) limited to one thread from the start.
	 */
	if (!getenv("OPENBLAS_NUM_THREADS") || !getenv("OMP_NUM_THREADS")) {
		setenv("OPENBLAS_NUM_THREADS", "1", 1);
		setenv("OMP_NUM_THREADS", "1", 1);
		execv("/proc/self/exe", argv);
		perror("re-exec of bench-ops");
		return 1;
	}
	peers_init();
	if (argc > 1)
		only = argv[1];
	f.mem = calloc(1, f.size);
	if (!f.mem)
		return 1;
	engine_cfg.arena = vnpu_arena_new(512ull << 20);
	if (!engine_cfg.arena)
		return 1;
	bench_convt(&f, 48, 96, 96, 2, false);
	bench_convt(&f, 24, 64, 64, 4, false);
	bench_convt(&f, 48, 96, 96, 2, true);
	/* A detection head's single map, and a GAN-style int8 k4 s2 p1. */
	bench_convt(&f, 96, 24, 1, 2, false);
	bench_convt(&f, 24, 64, 64, 4, true);
	bench_elt(&f, "eltwise add", VNPU_ELTWISE_ADD, 0, false);
	bench_elt(&f, "eltwise mul", VNPU_ELTWISE_MUL, 0, false);
	bench_elt(&f, "eltwise div", VNPU_ELTWISE_DIV, 0, false);
	bench_elt(&f, "eltwise add [C]", VNPU_ELTWISE_ADD, 0, true);
	bench_elt(&f, "eltwise mul [C]", VNPU_ELTWISE_MUL, 0, true);
	bench_elt(&f, "eltwise div [C]", VNPU_ELTWISE_DIV, 0, true);
	bench_elt(&f, "activation sigmoid", -1, VNPU_ACT_SIGMOID, false);
	bench_elt(&f, "activation hard_swish", -1, VNPU_ACT_HARD_SWISH, false);
	bench_elt(&f, "batchnorm [C] relu", -1, VNPU_ACT_RELU, true);
	bench_reduce(&f, "mean fp32 last axis 1024x768", 2,
		     (const uint32_t[]){ 1024, 768 }, 2, VNPU_REDUCE_MEAN);
	bench_reduce(&f, "mean fp32 HxW 56x56x128", 4,
		     (const uint32_t[]){ 1, 56, 56, 128 }, 6, VNPU_REDUCE_MEAN);
	bench_reduce(&f, "max fp32 first axis 512x1024", 2,
		     (const uint32_t[]){ 512, 1024 }, 1, VNPU_REDUCE_MAX);
	openblas_set_num_threads(1);
	printf("vnpu ops bench: engine 1 thread, int8 kernel %s, OpenBLAS %s\n",
	       vnpu_i8_kernel_id(vnpu_i8_kernel_resolve(VNPU_I8_AUTO)),
	       openblas_get_config());
	bench_gemm(&f, 256, false);
	bench_gemm(&f, 512, false);
	bench_gemm(&f, 1024, false);
	bench_gemm(&f, 256, true);
	bench_gemm(&f, 512, true);
	bench_gemm(&f, 1024, true);
	printf("conv: best of %d batches of >= %.2f s each; peers XNNPACK (no "
	       "threadpool) and oneDNN (OpenMP, 1 thread); x = engine speed / "
	       "faster peer's\n", PEER_REPS, PEER_MIN_SECONDS);
	printf("%s\n", INT8_CONV_WEIGHTS_WHY);
	for (i = 0; i < sizeof(conv_cases) / sizeof(conv_cases[0]); i++) {
		bench_conv_case(&f, &conv_cases[i], false);
		bench_conv_case(&f, &conv_cases[i], true);
	}
	bench_copy(&f, "copy fp32 16 MiB dense", VNPU_DT_FP32, VNPU_DT_FP32,
		   2048, 2048, false, VNPU_COPY_BORDER_KEEP, 0);
	bench_copy(&f, "copy fp32 2048x2048 transpose", VNPU_DT_FP32, VNPU_DT_FP32,
		   2048, 2048, true, VNPU_COPY_BORDER_KEEP, 0);
	bench_copy(&f, "copy fp32->fp16 2048x2048", VNPU_DT_FP32, VNPU_DT_FP16,
		   2048, 2048, false, VNPU_COPY_BORDER_KEEP, 0);
	bench_copy(&f, "copy u8 2048x2048 pad 16 reflect", VNPU_DT_UINT8,
		   VNPU_DT_UINT8, 2048, 2048, false, VNPU_COPY_BORDER_REFLECT, 16);
	bench_resize(&f, "resize fp32 nearest 128x128x64 2x", VNPU_DT_FP32,
		     VNPU_RESIZE_NEAREST, 128, 128, 64);
	bench_resize(&f, "resize fp32 linear 128x128x64 2x", VNPU_DT_FP32,
		     VNPU_RESIZE_LINEAR, 128, 128, 64);
	bench_resize(&f, "resize u8 linear 128x128x64 2x", VNPU_DT_UINT8,
		     VNPU_RESIZE_LINEAR, 128, 128, 64);
	bench_resize(&f, "resize fp32 cubic 128x128x64 2x", VNPU_DT_FP32,
		     VNPU_RESIZE_CUBIC, 128, 128, 64);
	bench_abort_gap(&f);
	free(f.mem);
	if (!only)
		print_ratios();
	return 0;
}
