// SPDX-License-Identifier: MIT
/*
 * bench-cost: how well the work units vnpu_op_check() counts for a
 * command bound the time it takes (ops.rst, "Work units" and "Cost of a
 * work unit").  The device limits a command's units (VNPU_LIMIT_CMD_MACS),
 * not its time: an op whose time is not proportional to its units lets a
 * guest keep an engine busy for minutes, and abandoned work hold it after
 * a reset.
 *
 * For every device op, the benchmark runs hand-made adversarial commands
 * (huge kernels over tiny outputs, extreme strides and dilations,
 * padding-only windows, zero broadcast strides, borders) and random ones
 * (the fuzzer's generator, shapes scaled up), each through the engine and
 * the reference, and prints per op the largest CPU time per counted unit
 * and the command that produced it, the longest CPU time between two
 * polls of the abort callback, and the time from an abort to the run's
 * return for the op's worst command.
 *
 *   bench-cost [-n RANDOM_PER_OP] [-t SECONDS_PER_RUN] [-o OP] [-v]
 *
 * Output, one line per op and a summary (plain text, no goals):
 *   cost <op> engine <ns>/unit [<case>] ref <ns>/unit [<case>] (ceiling <ns>)
 *	small-command <us>; poll-gap <ms> [<case>]; after an abort: unwind
 *	<ms> CPU, return <ms> wall
 *   cost-longest <s>: the longest legal command (CMD_MACS units at the
 *	worst engine ratio)
 * A ratio marked '>' comes from a run stopped at the time limit: a lower
 * bound.  Commands below MIN_UNITS units are timed too but reported apart
 * (their time is the fixed cost of a command, not of its units).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "vnpu_cost.h"
#include "vnpu_engine.h"
#include "vnpu_ref.h"
#include "fuzz-engine.h"

/* Units below which a command's time is its fixed cost. */
#define MIN_UNITS	(1u << 16)
/* Random commands are scaled up to at most this many units. */
#define RANDOM_UNITS	(1u << 26)

static double run_limit_s = 2.0;
static int verbose;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- One run, polled ---------------------------------------------------- */

struct poll_state {
	atomic_bool stop;		/* set by another thread */
	uint64_t deadline;		/* CPU ns of this thread */
	uint64_t last, max_gap;		/* CPU ns */
	uint64_t polls;
	uint64_t seen;			/* CPU ns: the poll that saw stop */
	bool timed_out;
};

static bool poll_cb(void *o)
{
	struct poll_state *p = o;
	uint64_t t = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	if (t - p->last > p->max_gap)
		p->max_gap = t - p->last;
	p->last = t;
	p->polls++;
	if (t > p->deadline)
		p->timed_out = true;
	if (!p->seen && atomic_load(&p->stop))
		p->seen = t;
	return p->timed_out || p->seen;
}

struct operands {
	struct vnpu_op_bind b;
	void *mem[VNPU_OP_SLOTS], *q[VNPU_OP_SLOTS];
};

static void fill_bytes(uint8_t *p, uint64_t n, uint64_t *r, unsigned int dt)
{
	uint64_t i;

	if (fz_is_float(dt)) {
		for (i = 0; i + fz_esize(dt) <= n; i += fz_esize(dt)) {
			float f = fz_rndf(r, -1.0f, 1.0f);
			uint16_t h;

			if (dt == VNPU_DT_FP32) {
				memcpy(p + i, &f, 4);
			} else {
				h = dt == VNPU_DT_FP16 ? vnpu_f32_to_fp16(f) :
				    vnpu_f32_to_bf16(f);
				memcpy(p + i, &h, 2);
			}
		}
		return;
	}
	if (dt == VNPU_DT_INT32) {
		for (i = 0; i + 4 <= n; i += 4) {
			int32_t v = (int32_t)fz_rnd(r, 2001) - 1000;

			memcpy(p + i, &v, 4);
		}
		return;
	}
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)fz_next(r);
}

static int operands_new(struct operands *o, const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info)
{
	uint64_t r = 0x1234;
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		o->mem[i] = malloc(info->span[i] ? info->span[i] : 1);
		if (!o->mem[i])
			return -ENOMEM;
		fill_bytes(o->mem[i], info->span[i], &r, c->t[i].dtype);
		o->b.data[i] = o->mem[i];
		if (info->qbytes[i]) {
			uint64_t ch = info->qbytes[i] / 8, k;
			float s = 0.01f;
			int32_t z = 0;

			o->q[i] = malloc(info->qbytes[i]);
			if (!o->q[i])
				return -ENOMEM;
			for (k = 0; k < ch; k++) {
				memcpy((uint8_t *)o->q[i] + 4 * k, &s, 4);
				memcpy((uint8_t *)o->q[i] + 4 * (ch + k), &z, 4);
			}
			o->b.qparams[i] = o->q[i];
		}
	}
	return 0;
}

static void operands_free(struct operands *o)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		free(o->mem[i]);
		free(o->q[i]);
	}
}

struct run {
	const struct vnpu_cmd_compute *c;
	const struct vnpu_op_info *info;
	struct operands *o;
	bool ref;
	struct poll_state ps;
	uint64_t cpu_ns, t_return;	/* t_return: CLOCK_MONOTONIC */
	uint64_t unwind;		/* CPU ns from the stop seen to return */
	int ret;
};

static void *run_thread(void *arg)
{
	struct run *rn = arg;
	struct vnpu_run_ctx x = {
		.aborted = poll_cb, .opaque = &rn->ps, .i8_kernel = VNPU_I8_AUTO,
	};
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	rn->ps.last = t0;
	rn->ps.deadline = t0 + (uint64_t)(run_limit_s * 1e9);
	rn->ret = rn->ref ? vnpu_ref_run_ctx(rn->c, &rn->o->b, &x) :
		  vnpu_engine_run(rn->c, rn->info, &rn->o->b, &x);
	rn->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	rn->unwind = rn->ps.seen ? rn->cpu_ns + t0 - rn->ps.seen : 0;
	rn->t_return = clock_ns(CLOCK_MONOTONIC);
	if (rn->ps.polls && rn->cpu_ns + t0 - rn->ps.last > rn->ps.max_gap)
		rn->ps.max_gap = rn->cpu_ns + t0 - rn->ps.last;
	return NULL;
}

static void run_once(struct run *rn)
{
	memset(&rn->ps, 0, sizeof(rn->ps));
	run_thread(rn);
}

/*
 * Start @rn in a thread, abort it after @after_ms, and return the wall
 * time from the abort to its return (ms); -1 if it finished first.
 */
static double abort_latency(struct run *rn, double after_ms)
{
	struct timespec ts = { 0, (long)(after_ms * 1e6) };
	pthread_t th;
	uint64_t t_abort;

	memset(&rn->ps, 0, sizeof(rn->ps));
	rn->t_return = 0;
	if (pthread_create(&th, NULL, run_thread, rn))
		return -1;
	nanosleep(&ts, NULL);
	t_abort = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&rn->ps.stop, true);
	pthread_join(th, NULL);
	if (rn->ret != -ECANCELED || rn->t_return < t_abort)
		return -1;
	return (rn->t_return - t_abort) / 1e6;
}

/* ---- Commands ------------------------------------------------------------ */

/* Dense operands at VAs far apart; then the device's check. */
static int finish(struct vnpu_cmd_compute *c, struct vnpu_cmd_compute *cc,
		  struct vnpu_op_info *info)
{
	int i;

	c->hdr.size = sizeof(*c);
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		struct vnpu_tensor_desc *d = &c->t[i];

		if (!fz_present(d))
			continue;
		d->flags &= ~VNPU_TENSOR_STRIDED;
		memset(d->strides, 0, sizeof(d->strides));
		d->va = (uint64_t)(i + 1) << 36;
		if (d->quant == VNPU_QUANT_CHANNEL)
			d->quant_va = ((uint64_t)(i + 1) << 36) + (1ull << 34);
	}
	return vnpu_op_check(c, sizeof(*c), cc, info);
}

static struct vnpu_tensor_desc desc(uint8_t dt, int rank, uint32_t d0,
				    uint32_t d1, uint32_t d2, uint32_t d3)
{
	struct vnpu_tensor_desc d;
	uint32_t dims[4] = { d0, d1, d2, d3 };

	fz_desc(&d, dt, rank, dims);
	return d;
}

static void qdesc(struct vnpu_tensor_desc *d)
{
	d->quant = VNPU_QUANT_TENSOR;
	d->scale = fz_f2u(0.02f);
	d->zero_point = d->dtype == VNPU_DT_INT8 ? 3 : 128;
}

struct ccase {
	char name[96];
	struct vnpu_cmd_compute c;
};

#define MAX_CASES	64
static struct ccase cases[MAX_CASES];
static int ncases;

static struct vnpu_cmd_compute *add(unsigned int op, const char *name)
{
	struct ccase *k = &cases[ncases++];

	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->c.hdr.opcode = (uint16_t)op;
	return &k->c;
}

static uint64_t seed = 20261126;

/* Y from X, W and the attributes (the fuzzer's shape rules). */
static void fix(struct vnpu_cmd_compute *c)
{
	uint64_t r = seed;

	fz_fix_shapes(c, &r);
}

static void convt(const char *name, uint8_t dt, uint32_t h, uint32_t w,
		  uint32_t ch, uint32_t kh, uint32_t kw, uint32_t cog,
		  uint32_t g, uint32_t s, uint32_t d, uint32_t pad)
{
	struct vnpu_cmd_compute *c = add(VNPU_OP_CONV_TRANSPOSE, name);
	struct vnpu_attr_conv_transpose *at = &c->attr.convt;

	c->t[0] = desc(dt, 4, 1, h, w, ch);
	c->t[1] = desc(dt, 4, ch, kh, kw, cog);
	c->t[3] = desc(dt, 4, 1, 1, 1, 1);
	at->groups = g;
	at->stride_h = at->stride_w = s;
	at->dilation_h = at->dilation_w = d;
	at->pad_top = at->pad_left = at->pad_bottom = at->pad_right = pad;
	fix(c);
}

static void conv(const char *name, uint8_t dt, uint32_t h, uint32_t w,
		 uint32_t ch, uint32_t co, uint32_t kh, uint32_t kw, uint32_t g,
		 uint32_t s, uint32_t d, uint32_t pad)
{
	struct vnpu_cmd_compute *c = add(VNPU_OP_CONV2D, name);
	struct vnpu_attr_conv2d *at = &c->attr.conv;

	c->t[0] = desc(dt, 4, 1, h, w, ch);
	c->t[1] = desc(dt, 4, co, kh, kw, ch / g);
	c->t[3] = desc(dt, 4, 1, 1, 1, co);
	if (dt == VNPU_DT_INT8) {
		qdesc(&c->t[0]);
		qdesc(&c->t[1]);
		qdesc(&c->t[3]);
	}
	at->groups = g;
	at->stride_h = at->stride_w = s;
	at->dilation_h = at->dilation_w = d;
	at->pad_top = at->pad_left = at->pad_bottom = at->pad_right = pad;
	fix(c);
}

static void pool(const char *name, uint8_t dt, unsigned int kind,
		 uint32_t h, uint32_t w, uint32_t ch, uint32_t k, uint32_t s,
		 uint32_t d, uint32_t pad, uint32_t flags)
{
	struct vnpu_cmd_compute *c = add(VNPU_OP_POOL2D, name);
	struct vnpu_attr_pool2d *at = &c->attr.pool;

	c->t[0] = desc(dt, 4, 1, h, w, ch);
	c->t[3] = desc(dt, 4, 1, 1, 1, ch);
	if (dt == VNPU_DT_INT8) {
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
	}
	at->kind = kind;
	at->flags = flags;
	if (kind != VNPU_POOL_GLOBAL_AVG) {
		at->kernel_h = at->kernel_w = k;
		at->stride_h = at->stride_w = s;
		at->dilation_h = at->dilation_w = d;
		at->pad_top = at->pad_left = at->pad_bottom = at->pad_right = pad;
	}
	fix(c);
}

static void gemm(const char *name, uint8_t dt, uint32_t batch, uint32_t m,
		 uint32_t k, uint32_t n, uint32_t flags)
{
	struct vnpu_cmd_compute *c = add(VNPU_OP_GEMM, name);
	bool ta = flags & VNPU_GEMM_TRANS_A, tb = flags & VNPU_GEMM_TRANS_B;

	c->t[0] = desc(dt, 3, batch, ta ? k : m, ta ? m : k, 0);
	c->t[1] = desc(dt, 2, tb ? n : k, tb ? k : n, 0, 0);
	c->t[3] = desc(dt, 3, batch, m, n, 0);
	if (dt == VNPU_DT_INT8) {
		qdesc(&c->t[0]);
		qdesc(&c->t[1]);
		qdesc(&c->t[3]);
	}
	c->attr.gemm.flags = flags;
	fix(c);
}

/* Unary ops on X [a, b, c, d] (Y the same shape, @ydt). */
static struct vnpu_cmd_compute *unary(unsigned int op, const char *name,
				      uint8_t dt, uint8_t ydt, uint32_t a,
				      uint32_t b, uint32_t cc, uint32_t d)
{
	struct vnpu_cmd_compute *c = add(op, name);

	c->t[0] = desc(dt, 4, a, b, cc, d);
	c->t[3] = desc(ydt, 4, a, b, cc, d);
	if (fz_is_q8(dt))
		qdesc(&c->t[0]);
	if (fz_is_q8(ydt))
		qdesc(&c->t[3]);
	return c;
}

static void build_cases(unsigned int op)
{
	struct vnpu_cmd_compute *c;
	const uint8_t F = VNPU_DT_FP32, H = VNPU_DT_FP16, Q = VNPU_DT_INT8;

	ncases = 0;
	switch (op) {
	case VNPU_OP_CONV_TRANSPOSE:
		/* The command at 1/256 of its output: 1088 taps scanned per pixel. */
		convt("tall kernel, one input pixel, fp16", H, 1, 1, 1, 1024, 64, 1, 1, 1, 1, 0);
		convt("tall kernel, 2x2 input, fp16", H, 2, 2, 1, 1024, 64, 1, 1, 1, 1, 0);
		/* The command itself: Y [1,65536,1024,1], 67 M units. */
		convt("the issue's command, strides 64512 and 960", H, 2, 2, 1, 1024, 64, 1, 1,
		      1, 1, 0);
		c = &cases[ncases - 1].c;
		c->attr.convt.stride_h = 64512;
		c->attr.convt.stride_w = 960;
		fix(c);
		convt("tall kernel, fp32 rows", F, 1, 1, 1, 1024, 64, 1, 1, 1, 1, 0);
		convt("dilation 1000, 1024 channels, fp32 narrow", F, 1, 1, 1024, 1, 64, 1, 1, 1, 1000, 0);
		convt("dilation 997 stride 1000, fp32", F, 1, 4, 8, 1, 8, 4, 1, 1000, 997, 0);
		convt("stride 65536 sparse output, fp16", H, 1, 2, 4, 1, 4, 4, 1, 65536, 1, 0);
		convt("padding eats the taps, fp32", F, 64, 64, 8, 64, 64, 1, 1, 1, 1, 60);
		convt("groups 2, CO 65538 (reference path)", H, 1, 1, 2, 8, 8, 32769, 2, 1, 1, 0);
		convt("groups 2, CO 65538, 16x16 kernel (reference path)", H, 1, 1, 2, 16, 16, 32769, 2, 1, 1, 0);
		convt("int8 tall kernel", Q, 1, 1, 1, 256, 64, 4, 1, 1, 1, 0);
		/* int8 needs quantization on all three. */
		c = &cases[ncases - 1].c;
		qdesc(&c->t[0]);
		qdesc(&c->t[1]);
		qdesc(&c->t[3]);
		convt("plain 3x3 stride 2, 64 channels, fp32", F, 32, 32, 64, 3, 3, 64, 1, 2, 1, 1);
		break;
	case VNPU_OP_CONV2D:
		conv("huge kernel, 1x1 output", F, 1024, 64, 1, 1, 1024, 64, 1, 1, 1, 0);
		conv("padding-only windows, 1x1 kernel", F, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2000);
		conv("padding-only windows, int8", Q, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2000);
		conv("dilation 60000 over padding", F, 2, 2, 1, 1, 2, 2, 1, 1, 60000, 30000);
		conv("stride 65536", F, 1, 1, 4, 4, 3, 3, 1, 65536, 1, 1);
		conv("depthwise 1024 channels, kernel 64", F, 64, 64, 1024, 1024, 64, 1, 1024, 1, 1, 32);
		conv("int8 huge kernel", Q, 256, 256, 1, 1, 256, 256, 1, 1, 1, 0);
		conv("plain 3x3, 64 channels", F, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1);
		break;
	case VNPU_OP_POOL2D:
		pool("max 1024x64 window, 1x1 output", F, VNPU_POOL_MAX, 1024, 64, 64, 64, 1, 1, 0, 0);
		pool("max, window mostly padding", F, VNPU_POOL_MAX, 2, 2, 64, 255, 1, 1, 254, 0);
		pool("avg count-include-pad, padding", F, VNPU_POOL_AVG, 2, 2, 64, 255, 1, 1, 254,
		     VNPU_POOL_COUNT_INCLUDE_PAD);
		pool("max dilation 4096, int8", Q, VNPU_POOL_MAX, 8193, 8193, 1, 3, 1, 4096, 0, 0);
		pool("max stride 65536", H, VNPU_POOL_MAX, 4, 4, 64, 2, 65536, 1, 0, 0);
		pool("global avg 256x256", F, VNPU_POOL_GLOBAL_AVG, 256, 256, 64, 0, 0, 0, 0, 0);
		pool("avg 3x3 int8", Q, VNPU_POOL_AVG, 56, 56, 64, 3, 1, 1, 1, 0);
		break;
	case VNPU_OP_GEMM:
		gemm("K 1, wide output", F, 1, 4096, 1, 4096, 0);
		gemm("M 1 N 1, K 65536", F, 1, 1, 65536, 1, 0);
		gemm("batch 65536 of 1x1x1", F, 65536, 1, 1, 1, 0);
		gemm("int8 K 1", Q, 1, 4096, 1, 4096, 0);
		gemm("fp16 transposed", H, 4, 64, 256, 64, VNPU_GEMM_TRANS_A | VNPU_GEMM_TRANS_B);
		gemm("plain 256^3", F, 1, 256, 256, 256, 0);
		gemm("plain 1024^3", F, 1, 1024, 1024, 1024, 0);
		break;
	case VNPU_OP_ELTWISE:
		c = add(op, "outer product by broadcast, pow");
		c->t[0] = desc(F, 4, 256, 1, 16, 1);
		c->t[1] = desc(F, 4, 1, 256, 1, 16);
		c->t[3] = desc(F, 4, 256, 256, 16, 16);
		c->attr.eltwise.kind = VNPU_ELTWISE_POW;
		c = add(op, "pow fp16, rank-4 broadcast");
		c->t[0] = desc(H, 4, 16, 1, 256, 1);
		c->t[1] = desc(H, 4, 1, 64, 1, 64);
		c->t[3] = desc(H, 4, 16, 64, 256, 64);
		c->attr.eltwise.kind = VNPU_ELTWISE_POW;
		c = add(op, "int8 div, broadcast");
		c->t[0] = desc(Q, 4, 16, 1, 256, 1);
		c->t[1] = desc(Q, 4, 1, 64, 1, 64);
		c->t[3] = desc(Q, 4, 16, 64, 256, 64);
		qdesc(&c->t[0]);
		qdesc(&c->t[1]);
		qdesc(&c->t[3]);
		c->attr.eltwise.kind = VNPU_ELTWISE_DIV;
		c = add(op, "one scalar against 2^24, max");
		c->t[0] = desc(F, 4, 256, 256, 16, 16);
		c->t[1] = desc(F, 1, 1, 0, 0, 0);
		c->t[3] = desc(F, 4, 256, 256, 16, 16);
		c->attr.eltwise.kind = VNPU_ELTWISE_MAX;
		break;
	case VNPU_OP_ACTIVATION:
		c = unary(op, "gelu fp16", H, H, 64, 256, 256, 4);
		c->act = VNPU_ACT_GELU;
		c = unary(op, "log bf16", VNPU_DT_BF16, VNPU_DT_BF16, 64, 256, 256, 4);
		c->act = VNPU_ACT_LOG;
		c = unary(op, "tanh int8", Q, Q, 64, 256, 256, 4);
		c->act = VNPU_ACT_TANH;
		c = unary(op, "sigmoid fp32", F, F, 64, 256, 256, 4);
		c->act = VNPU_ACT_SIGMOID;
		break;
	case VNPU_OP_SOFTMAX:
		c = unary(op, "axis of 1, 2^24 rows", F, F, 1, 4096, 4096, 1);
		c->attr.softmax.axis = 3;
		c = unary(op, "axis 65536", H, H, 1, 16, 16, 65536);
		c->attr.softmax.axis = 3;
		c = unary(op, "outer axis, int8", Q, Q, 256, 256, 16, 16);
		c->attr.softmax.axis = 0;
		break;
	case VNPU_OP_LAYERNORM:
		c = unary(op, "extent 1, 2^24 rows", F, F, 1, 4096, 4096, 1);
		c->attr.layernorm.axis = 3;
		c = unary(op, "extent 65536 fp16", H, H, 1, 16, 16, 65536);
		c->attr.layernorm.axis = 1;
		c->t[0].dims[1] = 1;
		c->t[3].dims[1] = 1;
		break;
	case VNPU_OP_QUANTIZE:
		unary(op, "fp16 to int8", H, Q, 64, 256, 256, 16);
		break;
	case VNPU_OP_DEQUANTIZE:
		unary(op, "int8 to bf16", Q, VNPU_DT_BF16, 64, 256, 256, 16);
		break;
	case VNPU_OP_REQUANTIZE:
		c = unary(op, "uint8 to int8", VNPU_DT_UINT8, Q, 64, 256, 256, 16);
		break;
	case VNPU_OP_COPY:
		c = add(op, "one element reflected into 2^24");
		c->t[0] = desc(F, 4, 1, 1, 1, 1);
		c->t[3] = desc(F, 4, 256, 256, 16, 16);
		c->attr.copy.border = VNPU_COPY_BORDER_REFLECT;
		c->attr.copy.offset[1] = INT32_MIN;
		c->attr.copy.offset[2] = INT32_MAX;
		c = add(op, "wrap with far offsets, reversed, int8");
		c->t[0] = desc(Q, 4, 3, 5, 7, 11);
		c->t[3] = desc(Q, 4, 256, 256, 16, 16);
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
		c->attr.copy.border = VNPU_COPY_BORDER_WRAP;
		c->attr.copy.offset[0] = -2000000000;
		c->attr.copy.offset[3] = 1999999999;
		c->attr.copy.reverse = 0xf;
		c = add(op, "edge border, fp16 to fp32");
		c->t[0] = desc(H, 4, 2, 2, 2, 2);
		c->t[3] = desc(F, 4, 256, 256, 16, 16);
		c->attr.copy.border = VNPU_COPY_BORDER_EDGE;
		c->attr.copy.offset[1] = 100;
		c = add(op, "keep, window off the output");
		c->t[0] = desc(F, 4, 256, 256, 16, 16);
		c->t[3] = desc(F, 4, 256, 256, 16, 16);
		c->attr.copy.offset[1] = 300;
		c = add(op, "channel slice");
		c->t[0] = desc(F, 4, 1, 256, 256, 256);
		c->t[3] = desc(F, 4, 1, 256, 256, 1);
		c->attr.copy.offset[3] = -100;
		break;
	case VNPU_OP_RESIZE:
		c = add(op, "cubic 1x1 to 4096x4096");
		c->t[0] = desc(F, 4, 1, 1, 1, 1);
		c->t[3] = desc(F, 4, 1, 4096, 4096, 1);
		c->attr.resize.mode = VNPU_RESIZE_CUBIC;
		c->attr.resize.cubic_a = fz_f2u(-0.75f);
		c->attr.resize.flags = VNPU_RESIZE_EXCLUDE_OUTSIDE;
		c = add(op, "linear 8192x8192 down to 1x1, fp16");
		c->t[0] = desc(H, 4, 1, 8192, 8192, 1);
		c->t[3] = desc(H, 4, 1, 1, 1, 1);
		c->attr.resize.mode = VNPU_RESIZE_LINEAR;
		c = add(op, "nearest int8 upscale, 1 channel");
		c->t[0] = desc(Q, 4, 1, 3, 3, 1);
		c->t[3] = desc(Q, 4, 1, 4096, 4096, 1);
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
		c->attr.resize.coord = VNPU_RESIZE_ASYMMETRIC;
		c = add(op, "crop-and-resize mostly extrapolated");
		c->t[0] = desc(F, 4, 1, 4, 4, 16);
		c->t[3] = desc(F, 4, 1, 1024, 1024, 16);
		c->attr.resize.mode = VNPU_RESIZE_CUBIC;
		c->attr.resize.cubic_a = fz_f2u(-0.5f);
		c->attr.resize.coord = VNPU_RESIZE_TF_CROP_AND_RESIZE;
		c->attr.resize.roi[0] = fz_f2u(-100.0f);
		c->attr.resize.roi[1] = fz_f2u(-100.0f);
		c->attr.resize.roi[2] = fz_f2u(100.0f);
		c->attr.resize.roi[3] = fz_f2u(100.0f);
		break;
	case VNPU_OP_REDUCE:
		c = add(op, "nothing reduced but a 1, 2^24 outputs");
		c->t[0] = desc(F, 4, 4096, 4096, 1, 1);
		c->t[3] = desc(F, 4, 4096, 4096, 1, 1);
		c->attr.reduce.axes = 0x8;
		c = add(op, "all of 2^16 into one, fp16");
		c->t[0] = desc(H, 4, 16, 16, 16, 16);
		c->t[3] = desc(H, 4, 1, 1, 1, 1);
		c->attr.reduce.axes = 0xf;
		c->attr.reduce.kind = VNPU_REDUCE_L2;
		c = add(op, "outer axis, strided rows, int8");
		c->t[0] = desc(Q, 4, 65536, 16, 16, 1);
		c->t[3] = desc(Q, 4, 1, 16, 16, 1);
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
		c->attr.reduce.axes = 0x1;
		c->attr.reduce.kind = VNPU_REDUCE_MEAN;
		break;
	case VNPU_OP_LUT:
		c = add(op, "2^24 int8 codes to uint8, dense");
		c->t[0] = desc(Q, 4, 16, 1024, 1024, 1);
		c->t[3] = desc(VNPU_DT_UINT8, 4, 16, 1024, 1024, 1);
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
		c->t[1] = desc(VNPU_DT_UINT8, 1, VNPU_LUT_ENTRIES, 0, 0, 0);
		qdesc(&c->t[1]);
		c = add(op, "4096x4096 int8 to int8");
		c->t[0] = desc(Q, 4, 1, 4096, 4096, 1);
		c->t[3] = desc(Q, 4, 1, 4096, 4096, 1);
		qdesc(&c->t[0]);
		qdesc(&c->t[3]);
		c->t[1] = desc(Q, 1, VNPU_LUT_ENTRIES, 0, 0, 0);
		qdesc(&c->t[1]);
		break;
	default:
		break;
	}
}

/* A random command of @op: the fuzzer's generator, one input dim scaled up. */
static bool random_case(unsigned int op, uint64_t *r, struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	int tries;

	for (tries = 0; tries < 50; tries++) {
		uint32_t j, f = 1u << fz_rnd(r, 7);
		struct vnpu_tensor_desc *x;

		fz_gen(c, r, op, fz_rnd(r, 2));
		x = &c->t[0];
		j = fz_rnd(r, x->rank);
		if ((uint64_t)x->dims[j] * f < (1u << 20))
			x->dims[j] *= f;
		fz_fix_shapes(c, r);
		if (finish(c, &cc, &info) == 0 && info.macs <= RANDOM_UNITS)
			return true;
	}
	return false;
}

/* ---- Measuring ------------------------------------------------------------ */

static const char *op_name(unsigned int op)
{
	static const char *const n[] = {
		"gemm", "conv2d", "pool2d", "eltwise", "activation", "softmax",
		"layernorm", "quantize", "dequantize", "requantize", "copy",
		"resize", "conv_transpose", "reduce", "lut",
	};

	return n[op - VNPU_OP_GEMM];
}

struct worst {
	double ns;		/* per unit */
	bool lower;		/* from a run stopped at the limit */
	char what[160];
	struct vnpu_cmd_compute c;
	bool ref;
};

struct op_result {
	struct worst eng, ref, fixed;
	double gap_ms;		/* longest CPU time between two polls */
	char gap_what[200];
	struct worst gap;	/* the command with that gap */
};

static void note(struct worst *w, double ns, bool lower, const char *what,
		 const struct vnpu_cmd_compute *c, bool ref)
{
	if (ns <= w->ns)
		return;
	w->ns = ns;
	w->lower = lower;
	w->c = *c;
	w->ref = ref;
	snprintf(w->what, sizeof(w->what), "%s", what);
}

static void measure(const char *name, struct vnpu_cmd_compute *c,
		    struct op_result *res)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	struct operands o;
	char what[160];
	int side;

	if (finish(c, &cc, &info)) {
		printf("  refused: %s (offset %u)\n", name, info.err_off);
		return;
	}
	if (operands_new(&o, &cc, &info)) {
		printf("  no memory for: %s\n", name);
		operands_free(&o);
		return;
	}
	for (side = 0; side < 2; side++) {
		struct run rn = { .c = &cc, .info = &info, .o = &o, .ref = side };
		double ns;
		bool lower;

		run_once(&rn);
		lower = rn.ret == -ECANCELED;
		ns = (double)rn.cpu_ns / (double)(info.macs ? info.macs : 1);
		snprintf(what, sizeof(what), "%s, %llu units, %s%.1f ms", name,
			 (unsigned long long)info.macs, lower ? "stopped at " : "",
			 rn.cpu_ns / 1e6);
		if (verbose)
			printf("  %-9s %s%9.2f ns/unit  gap %7.2f ms  %s%s\n",
			       side ? "reference" : "engine", lower ? ">" : " ", ns,
			       rn.ps.max_gap / 1e6, what,
			       rn.ret && !lower ? " (failed)" : "");
		if (rn.ret && !lower)
			continue;
		if (info.macs < MIN_UNITS)
			note(&res->fixed, rn.cpu_ns / 1e3, lower, what, &cc, side);
		else
			note(side ? &res->ref : &res->eng, ns, lower, what, &cc, side);
		if (rn.ps.max_gap / 1e6 > res->gap_ms) {
			res->gap_ms = rn.ps.max_gap / 1e6;
			res->gap.c = cc;
			res->gap.ref = side;
			res->gap.ns = 1;
			snprintf(res->gap_what, sizeof(res->gap_what), "%s: %s",
				 side ? "reference" : "engine", what);
		}
	}
	operands_free(&o);
}

/*
 * Abort @w's command part-way a few times: the longest wall time from the
 * abort to the return (which includes this host's scheduling), and the
 * longest CPU time from the poll that saw it to the return (the unwind).
 */
static void worst_abort(const struct worst *w, double *wall_ms, double *unwind_ms)
{
	struct vnpu_cmd_compute cc, c = w->c;
	struct vnpu_op_info info;
	struct operands o;
	int i;

	*wall_ms = *unwind_ms = -1;
	if (!w->ns || finish(&c, &cc, &info) || operands_new(&o, &cc, &info))
		return;
	for (i = 0; i < 5; i++) {
		struct run rn = { .c = &cc, .info = &info, .o = &o, .ref = w->ref };
		double ms = abort_latency(&rn, 1.0 + 3.0 * i);

		if (ms > *wall_ms)
			*wall_ms = ms;
		if (ms >= 0 && rn.unwind / 1e6 > *unwind_ms)
			*unwind_ms = rn.unwind / 1e6;
	}
	operands_free(&o);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-cost [-n random-per-op] [-t seconds-per-run] "
		"[-o op] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int op, only = 0;
	int nrandom = 12, opt, i;
	double worst_eng = 0;
	const char *worst_op = "";

	while ((opt = getopt(argc, argv, "n:t:o:v")) != -1) {
		switch (opt) {
		case 'n':
			nrandom = atoi(optarg);
			break;
		case 't':
			run_limit_s = atof(optarg);
			break;
		case 'o':
			for (op = VNPU_OP_GEMM; op <= VNPU_OP_LAST; op++)
				if (!strcmp(optarg, op_name(op)))
					only = op;
			if (!only)
				usage();
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	openblas_set_num_threads(1);
	printf("bench-cost: CPU ns per work unit (ops.rst), engine and reference, "
	       "commands of >= %u units; %d random per op; runs stopped after %.1f s\n",
	       MIN_UNITS, nrandom, run_limit_s);
	for (op = VNPU_OP_GEMM; op <= VNPU_OP_LAST; op++) {
		struct op_result res;
		uint64_t r = seed + op;
		double wall, unwind;

		if (only && op != only)
			continue;
		memset(&res, 0, sizeof(res));
		if (verbose)
			printf("%s:\n", op_name(op));
		build_cases(op);
		for (i = 0; i < ncases; i++)
			measure(cases[i].name, &cases[i].c, &res);
		for (i = 0; i < nrandom; i++) {
			struct vnpu_cmd_compute c;
			char name[48];

			if (!random_case(op, &r, &c))
				continue;
			snprintf(name, sizeof(name), "random #%d", i);
			measure(name, &c, &res);
		}
		worst_abort(&res.gap, &wall, &unwind);
		printf("cost %s engine %s%.2f ns/unit [%s] ref %s%.2f ns/unit [%s] "
		       "(ceiling %u, vnpu_cost.h) "
		       "small-command %.1f us; poll-gap %.3f ms [%s]; after an abort: "
		       "unwind %.3f ms CPU, return %.3f ms wall\n",
		       op_name(op), res.eng.lower ? ">" : "", res.eng.ns, res.eng.what,
		       res.ref.lower ? ">" : "", res.ref.ns, res.ref.what,
		       vnpu_cost_unit_ns(op),
		       res.fixed.ns, res.gap_ms, res.gap_what, unwind, wall);
		fflush(stdout);
		if (res.eng.ns > worst_eng) {
			worst_eng = res.eng.ns;
			worst_op = op_name(op);
		}
	}
	printf("cost-longest: %.0f s (%llu units at %.2f ns/unit, %s)\n",
	       worst_eng * (double)VNPU_LIMIT_CMD_MACS / 1e9,
	       (unsigned long long)VNPU_LIMIT_CMD_MACS, worst_eng, worst_op);
	return 0;
}
