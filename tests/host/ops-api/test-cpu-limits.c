// SPDX-License-Identifier: MIT
/*
 * The CPU path's bounds (struct npu_cpu_limits, libnpu 1.4): an op beyond
 * the work or byte limit is refused before any of it runs, with a message
 * naming the op, the limit and the counted work; one at the limit runs;
 * the deadline and the cancel callback stop an op part-way, on the
 * reference and on the engine; and the graph runtime's CPU segments obey
 * the same limits, npu_runtime_cancel() and a run deadline, naming the
 * node in npu_runtime_error().
 *
 * The two refused ops are issue 20's: before 1.4 each kept
 * npu_op_run_cpu() busy for minutes.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "fake_dev.h"
#include "npu/graph.h"
#include "npu_ops_cpu.h"

#define MSG_MAX	384

struct host_t {
	struct npu_tensor *t;
	void *mem;
	uint64_t span;
};

static struct host_t host_tensor(enum npu_dtype dt, uint32_t rank,
				 const uint32_t *dims, unsigned int seed)
{
	struct host_t h;

	h.t = tensor(dt, rank, dims);
	h.span = span_of(h.t);
	h.mem = malloc(h.span);
	assert_non_null(h.mem);
	if (dt == NPU_DTYPE_FP32)
		fill_f32(h.mem, h.span / 4, seed);
	else
		memset(h.mem, 0, h.span);
	assert_int_equal(npu_tensor_bind_host(h.t, h.mem, h.span), 0);
	return h;
}

static void host_free(struct host_t *h)
{
	npu_tensor_free(h->t);
	free(h->mem);
}

/*
 * A MAX pool with a @kh x @kw window over fp32 X [1,@xh,@xw,@c], padded
 * so that the output is one window: [1,1,1,@c].
 */
struct pool_case {
	struct host_t x, y;
	struct npu_op *op;
};

static void pool_make(struct pool_case *pc, uint32_t kh, uint32_t kw,
		      uint32_t xh, uint32_t xw, uint32_t c)
{
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	const struct npu_tensor *in[1];
	uint32_t xd[4] = { 1, xh, xw, c }, yd[4] = { 1, 1, 1, c };

	p.kind = NPU_OP_POOL2D;
	p.pool.kind = NPU_POOL_MAX;
	p.pool.kernel[0] = kh;
	p.pool.kernel[1] = kw;
	p.pool.stride[0] = p.pool.stride[1] = 1;
	p.pool.pad[0] = (kh - xh) / 2;
	p.pool.pad[2] = kh - xh - p.pool.pad[0];
	p.pool.pad[1] = (kw - xw) / 2;
	p.pool.pad[3] = kw - xw - p.pool.pad[1];
	pc->x = host_tensor(NPU_DTYPE_FP32, 4, xd, 1);
	pc->y = host_tensor(NPU_DTYPE_FP32, 4, yd, 2);
	in[0] = pc->x.t;
	assert_int_equal(npu_op_create(&p, in, 1, pc->y.t, &pc->op), 0);
}

static void pool_free(struct pool_case *pc)
{
	npu_op_free(pc->op);
	host_free(&pc->x);
	host_free(&pc->y);
}

static void expect_msg(const char *got, const char *fmt, ...)
{
	char want[MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	assert_string_equal(got, want);
}

/* ---- Refused before anything runs ------------------------------------ */

/*
 * MaxPool with a 65535 x 65535 window over 64 channels: 64 * 65535^2
 * window taps, beyond the device's kernel limit, so the CPU's; it ran on
 * the reference for minutes.
 */
static void test_maxpool_65535_window_refused(void **state)
{
	const uint64_t work = 64ull * 65535 * 65535;
	struct pool_case pc;
	enum npu_op_where where = 0;
	char err[MSG_MAX];
	void *before;

	(void)state;
	pool_make(&pc, 65535, 65535, 1, 1, 64);
	assert_int_equal(npu_op_supported(pc.op, NULL), 0);
	assert_int_equal(npu__op_work(pc.op), work);
	before = malloc(pc.y.span);
	assert_non_null(before);
	memcpy(before, pc.y.mem, pc.y.span);

	assert_int_equal(npu_op_run_cpu(pc.op), -E2BIG);
	assert_int_equal(npu_op_run_cpu_limits(pc.op, NULL, err, sizeof(err)), -E2BIG);
	expect_msg(err, "POOL2D: %llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
		   (unsigned long long)work, (unsigned long long)NPU_CPU_DEFAULT_MAX_WORK);
	assert_int_equal(npu_op_run(pc.op, NULL, NPU_TIMEOUT_INFINITE, &where), -E2BIG);
	assert_int_equal(where, 0);
	/* Nothing ran: the output keeps its bytes. */
	assert_memory_equal(pc.y.mem, before, pc.y.span);
	free(before);
	pool_free(&pc);
}

/*
 * ConvTranspose with a 1024 x 64 kernel over a 512 x 512 input: beyond
 * the device's work limit, so it went to the reference, which took
 * minutes.
 */
static void test_convt_1024x64_kernel_refused(void **state)
{
	uint32_t xd[4] = { 1, 512, 512, 1 }, wd[4] = { 1, 1024, 64, 1 };
	uint32_t yd[4] = { 1, 512 + 1023, 512 + 63, 1 };
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	struct host_t x, w, y;
	const struct npu_tensor *in[2];
	struct npu_op *op;
	char err[MSG_MAX];
	uint64_t work;

	(void)state;
	p.kind = NPU_OP_CONV_TRANSPOSE;
	p.conv_transpose.stride[0] = p.conv_transpose.stride[1] = 1;
	p.conv_transpose.dilation[0] = p.conv_transpose.dilation[1] = 1;
	p.conv_transpose.groups = 1;
	x = host_tensor(NPU_DTYPE_FP32, 4, xd, 3);
	w = host_tensor(NPU_DTYPE_FP32, 4, wd, 4);
	y = host_tensor(NPU_DTYPE_FP32, 4, yd, 5);
	in[0] = x.t;
	in[1] = w.t;
	assert_int_equal(npu_op_create(&p, in, 2, y.t, &op), 0);
	/* ops.rst "Work units": at least every input pixel times every tap. */
	work = npu__op_work(op);
	assert_true(work >= 512ull * 512 * 1024 * 64);
	assert_true(work > NPU_CPU_DEFAULT_MAX_WORK);

	assert_int_equal(npu_op_run_cpu(op), -E2BIG);
	assert_int_equal(npu_op_run_cpu_limits(op, NULL, err, sizeof(err)), -E2BIG);
	expect_msg(err, "CONV_TRANSPOSE: %llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
		   (unsigned long long)work, (unsigned long long)NPU_CPU_DEFAULT_MAX_WORK);
	npu_op_free(op);
	host_free(&x);
	host_free(&w);
	host_free(&y);
}

/* ---- At the limit it runs ---------------------------------------------- */

/*
 * A 2048-tap column pool (beyond the device's kernel limit: the
 * reference runs it) at exactly its work and byte count runs and is
 * right; one unit or byte less is refused.
 */
static void test_pool_at_limit_runs(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct pool_case pc;
	char err[MSG_MAX];
	const float *x, *y;
	uint64_t bytes;
	uint32_t h, ch;

	(void)state;
	pool_make(&pc, 2048, 1, 2048, 1, 4);
	assert_int_equal(npu_op_supported(pc.op, NULL), 0);
	assert_int_equal(npu__op_work(pc.op), 4 * 2048);
	bytes = pc.x.span + pc.y.span;

	lim.max_work = 4 * 2048 - 1;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), -E2BIG);
	expect_msg(err, "POOL2D: 8192 work units exceed the CPU path's limit of 8191 (npu_cpu_limits.max_work)");
	lim.max_work = 4 * 2048;
	lim.max_bytes = bytes - 1;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), -E2BIG);
	expect_msg(err, "POOL2D: operands of %llu bytes exceed the CPU path's limit of %llu (npu_cpu_limits.max_bytes)",
		   (unsigned long long)bytes, (unsigned long long)bytes - 1);
	lim.max_bytes = bytes;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* The whole column is the window: Y is each channel's maximum. */
	x = pc.x.mem;
	y = pc.y.mem;
	for (ch = 0; ch < 4; ch++) {
		float m = -INFINITY;

		for (h = 0; h < 2048; h++)
			m = fmaxf(m, x[h * 4 + ch]);
		assert_true(y[ch] == m);
	}
	pool_free(&pc);
}

/* The same on the engine's path: a GEMM the device itself could take. */
static void test_gemm_at_limit_runs(void **state)
{
	uint32_t ad[2] = { 4, 8 }, bd[2] = { 8, 4 }, yd[2] = { 4, 4 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	const struct npu_tensor *in[2];
	struct host_t a, b, y;
	struct npu_op *op;
	char err[MSG_MAX];
	const float *av, *bv, *yv;
	int i, j, k;

	(void)state;
	p.kind = NPU_OP_GEMM;
	a = host_tensor(NPU_DTYPE_FP32, 2, ad, 6);
	b = host_tensor(NPU_DTYPE_FP32, 2, bd, 7);
	y = host_tensor(NPU_DTYPE_FP32, 2, yd, 8);
	in[0] = a.t;
	in[1] = b.t;
	assert_int_equal(npu_op_create(&p, in, 2, y.t, &op), 0);
	/* M x N x (K + 1) + one batch's setup (ops.rst, "Work units") */
	assert_int_equal(npu__op_work(op), 4 * 4 * (8 + 1) + VNPU_WORK_GEMM_BATCH);
	lim.max_work = 207;
	assert_int_equal(npu_op_run_cpu_limits(op, &lim, err, sizeof(err)), -E2BIG);
	expect_msg(err, "GEMM: 208 work units exceed the CPU path's limit of 207 (npu_cpu_limits.max_work)");
	lim.max_work = 208;
	assert_int_equal(npu_op_run_cpu_limits(op, &lim, err, sizeof(err)), 0);
	av = a.mem;
	bv = b.mem;
	yv = y.mem;
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++) {
			double s = 0;

			for (k = 0; k < 8; k++)
				s += (double)av[i * 8 + k] * bv[k * 4 + j];
			assert_true(fabs(yv[i * 4 + j] - s) <= 1e-5 * (1 + fabs(s)));
		}
	npu_op_free(op);
	host_free(&a);
	host_free(&b);
	host_free(&y);
}

/* ---- Stopped part-way ------------------------------------------------- */

struct canceller {
	atomic_uint calls;
	unsigned int stop_at;	/* return true from this call on; 0: never */
};

static bool cancel_cb(void *opaque)
{
	struct canceller *c = opaque;
	unsigned int n = atomic_fetch_add(&c->calls, 1) + 1;

	return c->stop_at && n >= c->stop_at;
}

/*
 * 64 windows of 4096 x 4096 taps: 2^30 units, within the default limit,
 * seconds on the reference.
 */
#define LONG_POOL_WORK	(64ull * 4096 * 4096)

/*
 * The reference polls while it runs: the callback's third call (the
 * first is before the op starts) stops it, and nothing polls after.
 */
static void test_cancel_stops_reference(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct canceller c = { .stop_at = 3 };
	struct pool_case pc;
	char err[MSG_MAX];

	(void)state;
	pool_make(&pc, 4096, 4096, 1, 1, 64);
	assert_int_equal(npu__op_work(pc.op), LONG_POOL_WORK);
	lim.cancel = cancel_cb;
	lim.cancel_opaque = &c;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), -ECANCELED);
	assert_int_equal(atomic_load(&c.calls), 3);
	expect_msg(err, "POOL2D of %llu work units: cancelled", LONG_POOL_WORK);
	pool_free(&pc);
}

/*
 * The engine polls too: a 2^31-MAC GEMM within the device's limits runs
 * on the engine, and the callback's second call stops it.
 */
static void test_cancel_stops_engine(void **state)
{
	uint32_t ad[2] = { 512, 2048 }, bd[2] = { 2048, 2048 }, yd[2] = { 512, 2048 };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	struct canceller c = { .stop_at = 2 };
	const struct npu_tensor *in[2];
	struct host_t a, b, y;
	struct npu_op *op;
	char err[MSG_MAX];

	(void)state;
	p.kind = NPU_OP_GEMM;
	a = host_tensor(NPU_DTYPE_FP32, 2, ad, 9);
	b = host_tensor(NPU_DTYPE_FP32, 2, bd, 10);
	y = host_tensor(NPU_DTYPE_FP32, 2, yd, 11);
	in[0] = a.t;
	in[1] = b.t;
	assert_int_equal(npu_op_create(&p, in, 2, y.t, &op), 0);
	lim.cancel = cancel_cb;
	lim.cancel_opaque = &c;
	assert_int_equal(npu_op_run_cpu_limits(op, &lim, err, sizeof(err)), -ECANCELED);
	assert_int_equal(atomic_load(&c.calls), 2);
	expect_msg(err, "GEMM of %llu work units: cancelled",
		   512ull * 2048 * (2048 + 1) + VNPU_WORK_GEMM_BATCH);
	npu_op_free(op);
	host_free(&a);
	host_free(&b);
	host_free(&y);
}

static void test_deadline(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct pool_case pc;
	char err[MSG_MAX];
	void *before;

	(void)state;
	pool_make(&pc, 4096, 4096, 1, 1, 64);
	before = malloc(pc.y.span);
	assert_non_null(before);
	memcpy(before, pc.y.mem, pc.y.span);
	/* A deadline already passed: nothing runs. */
	lim.deadline_ns = npu_time_ns() - 1;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), -ETIME);
	expect_msg(err, "POOL2D of %llu work units: stopped at the deadline (npu_cpu_limits.deadline_ns)",
		   LONG_POOL_WORK);
	assert_memory_equal(pc.y.mem, before, pc.y.span);
	/* One that passes while the op runs. */
	lim.deadline_ns = npu_deadline_ns(5 * 1000000);
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, err, sizeof(err)), -ETIME);
	expect_msg(err, "POOL2D of %llu work units: stopped at the deadline (npu_cpu_limits.deadline_ns)",
		   LONG_POOL_WORK);
	/* npu_op_run()'s deadline bounds its CPU path. */
	assert_int_equal(npu_op_run(pc.op, NULL, npu_deadline_ns(5 * 1000000), NULL), -ETIME);
	free(before);
	pool_free(&pc);
}

static void test_limits_struct(void **state)
{
	struct {
		struct npu_cpu_limits l;
		uint64_t newer;
	} big = { .l = NPU_CPU_LIMITS_INIT };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct pool_case pc;

	(void)state;
	pool_make(&pc, 2, 2, 1, 1, 1);
	lim.flags = 1;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, NULL, 0), -EINVAL);
	lim.flags = 0;
	lim.size = 0;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, NULL, 0), -EINVAL);
	/* An older caller's prefix: the missing fields are the defaults. */
	lim.size = offsetof(struct npu_cpu_limits, max_bytes);
	lim.max_work = 4;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, NULL, 0), 0);
	lim.max_work = 3;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &lim, NULL, 0), -E2BIG);
	/* A newer caller's: unknown fields must be zero. */
	big.l.size = sizeof(big);
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &big.l, NULL, 0), 0);
	big.newer = 1;
	assert_int_equal(npu_op_run_cpu_limits(pc.op, &big.l, NULL, 0), -E2BIG);
	assert_int_equal(npu_op_run_cpu_limits(NULL, NULL, NULL, 0), -EINVAL);
	pool_free(&pc);
}

/* ---- The graph runtime's CPU segments --------------------------------- */

struct pool_graph {
	struct npu_graph *g;
	struct npu_runtime *rt;
	float *x, *y;
};

/*
 * X [1,1,1,64] -> MaxPool @k x @k ("pool") -> Y, compiled for the CPU;
 * X static (a constant the compiler folds) when @fold.
 */
static int pool_graph_make(struct pool_graph *pg, uint32_t k, bool fold)
{
	uint32_t dims[4] = { 1, 1, 1, 64 };
	struct npu_value_desc vx = NPU_VALUE_DESC_INIT, vy = NPU_VALUE_DESC_INIT;
	struct npu_node_desc nd = NPU_NODE_DESC_INIT;
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	uint32_t ix, iy;
	void *data[2];
	uint32_t ids[2];
	int ret;

	memset(pg, 0, sizeof(*pg));
	pg->x = calloc(64, sizeof(float));
	pg->y = calloc(64, sizeof(float));
	assert_non_null(pg->x);
	assert_non_null(pg->y);
	fill_f32(pg->x, 64, 12);
	assert_int_equal(npu_graph_create(&pg->g), 0);
	vx.name = "x";
	vx.dtype = NPU_DTYPE_FP32;
	vx.rank = 4;
	memcpy(vx.dims, dims, sizeof(dims));
	vx.flags = fold ? 0 : NPU_VALUE_INPUT;
	vx.data = fold ? pg->x : NULL;
	vy = vx;
	vy.name = "y";
	vy.flags = NPU_VALUE_OUTPUT;
	vy.data = NULL;
	assert_int_equal(npu_graph_add_value(pg->g, &vx, &ix), 0);
	assert_int_equal(npu_graph_add_value(pg->g, &vy, &iy), 0);
	p.kind = NPU_OP_POOL2D;
	p.pool.kind = NPU_POOL_MAX;
	p.pool.kernel[0] = p.pool.kernel[1] = k;
	p.pool.stride[0] = p.pool.stride[1] = 1;
	p.pool.pad[0] = p.pool.pad[1] = (k - 1) / 2;
	p.pool.pad[2] = p.pool.pad[3] = k - 1 - (k - 1) / 2;
	nd.name = "pool";
	nd.kind = NPU_NODE_OP;
	nd.op = &p;
	nd.num_inputs = 1;
	nd.inputs = &ix;
	nd.output = iy;
	assert_int_equal(npu_graph_add_node(pg->g, &nd, NULL), 0);
	ret = npu_graph_compile(pg->g, NULL, 0, &pg->rt);
	if (ret)
		return ret;
	ids[0] = ix;
	ids[1] = iy;
	data[0] = pg->x;
	data[1] = pg->y;
	assert_int_equal(npu_runtime_setup(pg->rt, fold ? 0 : 1, ids, data), 0);
	assert_int_equal(npu_runtime_setup(pg->rt, 1, &ids[1], &data[1]), 0);
	return 0;
}

static void pool_graph_free(struct pool_graph *pg)
{
	npu_runtime_free(pg->rt);
	npu_graph_free(pg->g);
	free(pg->x);
	free(pg->y);
}

static void test_graph_refuses_node(void **state)
{
	struct pool_graph pg;

	(void)state;
	assert_int_equal(pool_graph_make(&pg, 65535, false), 0);
	assert_int_equal(npu_runtime_run(pg.rt, NULL, NPU_TIMEOUT_INFINITE), -E2BIG);
	expect_msg(npu_runtime_error(pg.rt),
		   "node 'pool' (POOL2D) on the CPU: POOL2D: %llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
		   64ull * 65535 * 65535, (unsigned long long)NPU_CPU_DEFAULT_MAX_WORK);
	pool_graph_free(&pg);
}

/* Constant folding runs on the CPU path too, within its defaults. */
static void test_graph_refuses_fold(void **state)
{
	struct pool_graph pg;

	(void)state;
	assert_int_equal(pool_graph_make(&pg, 65535, true), -E2BIG);
	expect_msg(npu_graph_error(pg.g),
		   "node pool (POOL2D): folding its constant output: POOL2D: %llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
		   64ull * 65535 * 65535, (unsigned long long)NPU_CPU_DEFAULT_MAX_WORK);
	pool_graph_free(&pg);
}

static void test_graph_limits_raised(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct pool_graph pg;
	int i;

	(void)state;
	assert_int_equal(pool_graph_make(&pg, 3, false), 0);
	/* 64 outputs of 9 taps. */
	lim.max_work = 64 * 9 - 1;
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, &lim), 0);
	assert_int_equal(npu_runtime_run(pg.rt, NULL, NPU_TIMEOUT_INFINITE), -E2BIG);
	lim.max_work = 64 * 9;
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, &lim), 0);
	assert_int_equal(npu_runtime_run(pg.rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_string_equal(npu_runtime_error(pg.rt), "");
	/* A 3 x 3 window over one pixel is the pixel. */
	for (i = 0; i < 64; i++)
		assert_true(pg.y[i] == pg.x[i]);
	lim.flags = 1;
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, &lim), -EINVAL);
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, NULL), 0);
	pool_graph_free(&pg);
}

struct run_arg {
	struct npu_runtime *rt;
	int ret;
};

static void *run_thread(void *opaque)
{
	struct run_arg *a = opaque;

	a->ret = npu_runtime_run(a->rt, NULL, NPU_TIMEOUT_INFINITE);
	return NULL;
}

/*
 * npu_runtime_cancel() from another thread stops the CPU op where it is:
 * the caller's callback (which never says stop itself) shows the op has
 * started polling before the cancel goes in.
 */
static void test_graph_cancel(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct canceller c = { .stop_at = 0 };
	struct pool_graph pg;
	struct run_arg a;
	pthread_t th;

	(void)state;
	assert_int_equal(pool_graph_make(&pg, 4096, false), 0);
	lim.cancel = cancel_cb;
	lim.cancel_opaque = &c;
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, &lim), 0);
	a.rt = pg.rt;
	a.ret = 1;
	assert_int_equal(pthread_create(&th, NULL, run_thread, &a), 0);
	while (atomic_load(&c.calls) < 3)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	assert_int_equal(npu_runtime_cancel(pg.rt), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(a.ret, -ECANCELED);
	expect_msg(npu_runtime_error(pg.rt),
		   "node 'pool' (POOL2D) on the CPU: POOL2D of %llu work units: cancelled",
		   LONG_POOL_WORK);
	pool_graph_free(&pg);
}

static void test_graph_deadline(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct pool_graph pg;

	(void)state;
	assert_int_equal(pool_graph_make(&pg, 4096, false), 0);
	lim.deadline_ns = npu_deadline_ns(5 * 1000000);
	assert_int_equal(npu_runtime_set_cpu_limits(pg.rt, &lim), 0);
	assert_int_equal(npu_runtime_run(pg.rt, NULL, NPU_TIMEOUT_INFINITE), -ETIME);
	expect_msg(npu_runtime_error(pg.rt),
		   "node 'pool' (POOL2D) on the CPU: POOL2D of %llu work units: stopped at the deadline (npu_cpu_limits.deadline_ns)",
		   LONG_POOL_WORK);
	/* Past the deadline the next run does not start the node at all. */
	assert_int_equal(npu_runtime_run(pg.rt, NULL, NPU_TIMEOUT_INFINITE), -ETIME);
	assert_string_equal(npu_runtime_error(pg.rt),
			    "node 'pool' (POOL2D): the deadline passed before it started");
	pool_graph_free(&pg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maxpool_65535_window_refused),
		cmocka_unit_test(test_convt_1024x64_kernel_refused),
		cmocka_unit_test(test_pool_at_limit_runs),
		cmocka_unit_test(test_gemm_at_limit_runs),
		cmocka_unit_test(test_cancel_stops_reference),
		cmocka_unit_test(test_cancel_stops_engine),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_limits_struct),
		cmocka_unit_test(test_graph_refuses_node),
		cmocka_unit_test(test_graph_refuses_fold),
		cmocka_unit_test(test_graph_limits_raised),
		cmocka_unit_test(test_graph_cancel),
		cmocka_unit_test(test_graph_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
