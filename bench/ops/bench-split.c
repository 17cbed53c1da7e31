// SPDX-License-Identifier: MIT
/*
 * Scaling of one large command over the device's engines: the command run
 * whole on one engine thread, against its parts (vnpu_compute_split(), one
 * per engine) shared by 2 engine threads the way the QEMU device shares
 * them (qemu-device/vnpu-engine.c): each thread with its own scratch
 * arena, taking the next part until none is left.  Memory is flat host
 * memory (the device's map() path), so the figures are the engine's, not
 * the MMU's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "vnpu_engine.h"
#include "vnpu_exec.h"
#include "vnpu_split.h"

#define BASE		0x100000ull
#define MEM_BYTES	(96ull << 20)
#define ENGINES		2

static uint8_t *mem;
static uint64_t mem_next;

static void *at(uint64_t va, uint64_t len)
{
	if (va < BASE || va - BASE > MEM_BYTES || len > MEM_BYTES - (va - BASE))
		return NULL;
	return mem + (va - BASE);
}

static int m_read(void *o, uint64_t va, void *buf, uint64_t len)
{
	void *p = at(va, len);

	(void)o;
	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

static int m_write(void *o, uint64_t va, const void *buf, uint64_t len)
{
	void *p = at(va, len);

	(void)o;
	if (!p)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}

static void *m_map(void *o, uint64_t va, uint64_t len, bool w)
{
	(void)o, (void)w;
	return at(va, len);
}

static void m_unmap(void *o, void *h, uint64_t len, bool w, uint64_t al)
{
	(void)o, (void)h, (void)len, (void)w, (void)al;
}

static const struct vnpu_mem_ops ops = { m_read, m_write, m_map, m_unmap, NULL };

static uint64_t m_alloc(uint64_t len, bool is_float)
{
	uint64_t va = BASE + mem_next, i;
	uint8_t *p = mem + mem_next;

	mem_next += (len + 4095) & ~4095ull;
	if (mem_next > MEM_BYTES) {
		fprintf(stderr, "bench-split: memory exhausted\n");
		exit(1);
	}
	for (i = 0; i < len; i += is_float ? 4 : 1) {
		if (is_float) {
			float v = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;

			memcpy(p + i, &v, 4);
		} else {
			p[i] = (uint8_t)(i * 2654435761u >> 13);
		}
	}
	return va;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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

static void quant(struct vnpu_tensor_desc *d, float s, int32_t zp)
{
	d->quant = VNPU_QUANT_TENSOR;
	memcpy(&d->scale, &s, 4);
	d->zero_point = zp;
}

struct engine {
	pthread_t thread;
	struct vnpu_engine_cfg cfg;
};

static struct engine eng[ENGINES];

/* One shared command: its parts and the next one to take. */
static struct {
	struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
	unsigned int n;
	atomic_uint next;
	atomic_int failed;
} job;

static void run_parts(struct engine *e)
{
	struct vnpu_compute_result res;
	unsigned int i;

	while ((i = atomic_fetch_add(&job.next, 1)) < job.n)
		if (vnpu_compute_exec(&job.parts[i], sizeof(job.parts[i]), &ops,
				      NULL, &e->cfg, &res))
			atomic_store(&job.failed, 1);
}

static void *helper(void *arg)
{
	run_parts(arg);
	return NULL;
}

/*
 * Seconds for one run of @c: whole on one thread (@threads 0), or cut for
 * a 2-engine device and shared by @threads threads (1: the other engine
 * is busy elsewhere and this one runs every part).
 */
static double run_once(const struct vnpu_cmd_compute *c, unsigned int threads)
{
	struct vnpu_compute_result res;
	uint64_t cycles;
	double t0 = now();
	unsigned int i;

	if (!threads) {
		if (vnpu_compute_exec(c, sizeof(*c), &ops, NULL, &eng[0].cfg, &res))
			atomic_store(&job.failed, 1);
		return now() - t0;
	}
	/* The device cuts when the job reaches it, so the cut is timed too. */
	job.n = vnpu_compute_split(c, sizeof(*c), ENGINES, job.parts, &cycles);
	if (!job.n) {
		fprintf(stderr, "bench-split: command not cut\n");
		exit(1);
	}
	atomic_store(&job.next, 0);
	for (i = 1; i < threads; i++)
		pthread_create(&eng[i].thread, NULL, helper, &eng[i]);
	run_parts(&eng[0]);
	for (i = 1; i < threads; i++)
		pthread_join(eng[i].thread, NULL);
	return now() - t0;
}

/* Median of 9 runs after a warm-up, in seconds. */
static double median_time(const struct vnpu_cmd_compute *c, unsigned int threads)
{
	double t[9], x;
	int i, j;

	run_once(c, threads);
	for (i = 0; i < 9; i++) {
		x = run_once(c, threads);
		for (j = i; j > 0 && t[j - 1] > x; j--)
			t[j] = t[j - 1];
		t[j] = x;
	}
	if (atomic_load(&job.failed)) {
		fprintf(stderr, "bench-split: the engine failed a command\n");
		exit(1);
	}
	return t[4];
}

static void report(const char *name, const struct vnpu_cmd_compute *c,
		   double *worst)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	double t1, tc, t2;
	uint64_t cycles;

	if (vnpu_op_check(c, sizeof(*c), &cc, &info)) {
		fprintf(stderr, "bench-split: %s: invalid command\n", name);
		exit(1);
	}
	t1 = median_time(c, 0);
	tc = median_time(c, 1);
	t2 = median_time(c, ENGINES);
	printf("%-34s %3u %9.3f %9.3f %9.3f %7.2fx %6.2fx\n", name,
	       vnpu_compute_split(c, sizeof(*c), ENGINES, job.parts, &cycles),
	       t1 * 1e3, tc * 1e3, t2 * 1e3, t1 / t2, tc / t1);
	if (t1 / t2 < *worst)
		*worst = t1 / t2;
}

static void conv(struct vnpu_cmd_compute *c, bool q8, uint32_t hw, uint32_t ci,
		 uint32_t co, uint32_t k, uint32_t stride, uint32_t groups)
{
	uint8_t dt = q8 ? VNPU_DT_INT8 : VNPU_DT_FP32;
	uint32_t esz = q8 ? 1 : 4, pad = k / 2, oh = (hw + 2 * pad - k) / stride + 1;

	mem_next = 0;
	memset(c, 0, sizeof(*c));
	c->hdr.opcode = VNPU_OP_CONV2D;
	c->hdr.size = sizeof(*c);
	c->act = VNPU_ACT_RELU;
	c->t[0] = td(q8 ? VNPU_DT_UINT8 : dt, 4, (const uint32_t[]){ 1, hw, hw, ci },
		     m_alloc((uint64_t)hw * hw * ci * esz, !q8));
	c->t[1] = td(dt, 4, (const uint32_t[]){ co, k, k, ci / groups },
		     m_alloc((uint64_t)co * k * k * (ci / groups) * esz, !q8));
	c->t[3] = td(dt, 4, (const uint32_t[]){ 1, oh, oh, co },
		     m_alloc((uint64_t)oh * oh * co * esz, false));
	if (q8) {
		quant(&c->t[0], 0.02f, 128);
		quant(&c->t[1], 0.01f, 0);
		quant(&c->t[3], 0.05f, 0);
	}
	c->attr.conv = (struct vnpu_attr_conv2d){ .stride_h = stride,
		.stride_w = stride, .dilation_h = 1, .dilation_w = 1,
		.pad_top = pad, .pad_left = pad, .pad_bottom = pad,
		.pad_right = pad, .groups = groups };
}

static void gemm(struct vnpu_cmd_compute *c, bool q8, uint32_t n)
{
	uint8_t dt = q8 ? VNPU_DT_INT8 : VNPU_DT_FP32;
	uint32_t esz = q8 ? 1 : 4;

	mem_next = 0;
	memset(c, 0, sizeof(*c));
	c->hdr.opcode = VNPU_OP_GEMM;
	c->hdr.size = sizeof(*c);
	c->t[0] = td(q8 ? VNPU_DT_UINT8 : dt, 2, (const uint32_t[]){ n, n },
		     m_alloc((uint64_t)n * n * esz, !q8));
	c->t[1] = td(dt, 2, (const uint32_t[]){ n, n },
		     m_alloc((uint64_t)n * n * esz, !q8));
	c->t[3] = td(dt, 2, (const uint32_t[]){ n, n },
		     m_alloc((uint64_t)n * n * esz, false));
	if (q8) {
		quant(&c->t[0], 0.02f, 128);
		quant(&c->t[1], 0.01f, 0);
		quant(&c->t[3], 0.5f, 0);
	}
}

int main(void)
{
	struct vnpu_cmd_compute c;
	double worst = 1e30;
	unsigned int i;

	/* The engine's own sgemm calls stay on their engine's thread. */
	openblas_set_num_threads(1);
	mem = calloc(1, MEM_BYTES);
	if (!mem)
		return 1;
	for (i = 0; i < ENGINES; i++) {
		eng[i].cfg.arena = vnpu_arena_new(512ull << 20);
		eng[i].cfg.i8_kernel = VNPU_I8_AUTO;
		if (!eng[i].cfg.arena)
			return 1;
	}
	printf("vnpu split bench: one command on a 1-engine device (whole), and "
	       "cut for a %d-engine device (vnpu_compute_split) with its parts "
	       "on 1 thread (the other engine busy) and on %d; ms, median of 9\n",
	       ENGINES, ENGINES);
	printf("%-34s %3s %9s %9s %9s %8s %7s\n", "command", "cut", "whole",
	       "cut 1T", "cut 2T", "scaling", "cost");
	conv(&c, false, 56, 64, 64, 3, 1, 1);
	report("conv fp32 3x3 56x56x64->64", &c, &worst);
	conv(&c, true, 56, 64, 64, 3, 1, 1);
	report("conv int8 3x3 56x56x64->64", &c, &worst);
	conv(&c, false, 28, 128, 128, 1, 1, 1);
	report("conv fp32 1x1 28x28x128->128", &c, &worst);
	conv(&c, false, 112, 64, 64, 3, 1, 64);
	report("dwconv fp32 3x3 112x112x64", &c, &worst);
	conv(&c, true, 160, 16, 32, 3, 2, 1);
	report("conv int8 3x3/2 160x160x16->32", &c, &worst);
	gemm(&c, false, 1024);
	report("gemm fp32 1024", &c, &worst);
	gemm(&c, true, 1024);
	report("gemm int8 1024", &c, &worst);
	printf("split scaling 1 -> %d engines: worst %.2fx over these commands\n",
	       ENGINES, worst);
	printf("(scaling: whole / cut 2T; cost: cut 1T / whole, what cutting "
	       "costs when no engine helps)\n");
	for (i = 0; i < ENGINES; i++)
		vnpu_arena_free(eng[i].cfg.arena);
	free(mem);
	return 0;
}
