// SPDX-License-Identifier: MIT
/*
 * The CPU path of an op beyond the device's command limits
 * (src/npu_ops_cpu.c): it runs the tiles npu_tile.c splits the op into,
 * one engine command each, as the device runs them, not the reference
 * over the whole op.  Each case asserts which path ran (the run's trace),
 * that on a device context the CPU ran as many commands as
 * npu_op_encode() emits, and compares the result with the reference
 * (integer outputs the same bytes, float ones within ops.rst's
 * tolerances).  An op no split fits still runs on the reference, and
 * says why; the CPU limits hold for the whole op across its tiles.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_dev.h"
#include "npu_ops_cpu.h"

struct tdesc {
	enum npu_dtype dt;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	float scale;		/* per-tensor quantization when > 0 */
	int32_t zp;
	int chan_axis;		/* per-channel along this axis when >= 0 */
};

#define T(...)	{ __VA_ARGS__, .chan_axis = -1 }
#define F32(r, ...)	T(.dt = NPU_DTYPE_FP32, .rank = (r), .dims = { __VA_ARGS__ })
#define I32(r, ...)	T(.dt = NPU_DTYPE_INT32, .rank = (r), .dims = { __VA_ARGS__ })
#define Q(dt_, s, z, r, ...) \
	T(.dt = NPU_DTYPE_##dt_, .rank = (r), .dims = { __VA_ARGS__ }, .scale = (s), .zp = (z))
#define QC(dt_, ax, r, ...) \
	{ .dt = NPU_DTYPE_##dt_, .rank = (r), .dims = { __VA_ARGS__ }, .chan_axis = (ax) }

struct tcase {
	const char *name;
	struct npu_op_params p;
	size_t nin;
	struct tdesc in[3];
	struct tdesc out;
	double tol;		/* relative float tolerance (ops.rst) */
	/*
	 * Operands in a (fake) device's buffers, so the op has commands
	 * (not with per-channel arrays, which fake_dev.h cannot upload).
	 */
	bool device;
};

static uint32_t rng = 4242;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static float rndf(float lo, float hi)
{
	return lo + (hi - lo) * (float)(rnd() >> 8) / (float)(1u << 24);
}

static void fill(const struct tdesc *d, void *mem, uint64_t span)
{
	uint64_t i;

	switch (d->dt) {
	case NPU_DTYPE_FP32:
		for (i = 0; i < span / 4; i++)
			((float *)mem)[i] = rndf(-1.0f, 1.0f);
		break;
	case NPU_DTYPE_INT32:
		for (i = 0; i < span / 4; i++)
			((int32_t *)mem)[i] = (int32_t)(rnd() % 2001) - 1000;
		break;
	default:
		for (i = 0; i < span; i++)
			((uint8_t *)mem)[i] = (uint8_t)rnd();
		break;
	}
}

/*
 * A tensor of @d with random contents, in a buffer of @ctx (returned in
 * *@buf) when @ctx is not NULL.
 */
static struct npu_tensor *make(const struct tdesc *d, struct npu_context *ctx,
			       void **mem, struct npu_buffer **buf)
{
	struct npu_tensor *t = tensor(d->dt, d->rank, d->dims);
	uint64_t span, i;

	if (d->chan_axis >= 0) {
		uint32_t n = d->dims[d->chan_axis];
		float *s = calloc(n, sizeof(*s));
		int32_t *z = calloc(n, sizeof(*z));

		assert_non_null(s);
		assert_non_null(z);
		for (i = 0; i < n; i++)
			s[i] = rndf(0.002f, 0.02f);
		assert_int_equal(npu_tensor_set_quant_channel(t, (uint32_t)d->chan_axis,
							      s, z), 0);
		free(s);
		free(z);
	} else if (d->scale > 0) {
		assert_int_equal(npu_tensor_set_quant(t, d->scale, d->zp), 0);
	}
	assert_int_equal(npu_tensor_span(t, &span), 0);
	if (ctx) {
		struct npu_buffer *b = fake_buf(ctx, span);

		*mem = b->map;
		*buf = b;
		assert_int_equal(npu_tensor_bind_buffer(t, b, 0), 0);
	} else {
		*mem = malloc(span);
		assert_non_null(*mem);
		assert_int_equal(npu_tensor_bind_host(t, *mem, span), 0);
	}
	fill(d, *mem, span);
	return t;
}

static void compare(const char *name, enum npu_dtype dt, double tol,
		    const void *ref, const void *got, uint64_t span)
{
	uint64_t i, bad = 0;
	double worst = 0;

	if (dt != NPU_DTYPE_FP32) {
		if (memcmp(ref, got, span))
			fail_msg("%s: the tiled run's bytes differ from the reference's",
				 name);
		return;
	}
	for (i = 0; i < span / 4; i++) {
		double r = ((const float *)ref)[i], f = ((const float *)got)[i];
		double err = fabs(r - f) / (1.0 + fabs(r));

		if (err > worst)
			worst = err;
		bad += !(err <= tol);
	}
	if (bad)
		fail_msg("%s: %llu of %llu elements beyond %g (worst %g)", name,
			 (unsigned long long)bad, (unsigned long long)(span / 4),
			 tol, worst);
}

struct built {
	struct npu_tensor *in[3], *out;
	void *mem[3], *omem;
	struct npu_buffer *buf[4];
	struct npu_context *ctx;
	struct npu_op *op;
	uint64_t span;
};

static void build(const struct tcase *c, struct built *b)
{
	struct npu_op_params p = c->p;
	size_t i;
	int ret;

	memset(b, 0, sizeof(*b));
	arena_used = 0;
	p.size = sizeof(p);
	if (c->device)
		b->ctx = fake_ctx();
	for (i = 0; i < c->nin; i++)
		if (c->in[i].rank)
			b->in[i] = make(&c->in[i], b->ctx, &b->mem[i],
					 &b->buf[i]);
	b->out = make(&c->out, b->ctx, &b->omem, &b->buf[3]);
	assert_int_equal(npu_tensor_span(b->out, &b->span), 0);
	ret = npu_op_create(&p, (const struct npu_tensor *const *)b->in, c->nin,
			    b->out, &b->op);
	if (ret)
		fail_msg("%s: npu_op_create: %d", c->name, ret);
}

static void unbuild(const struct tcase *c, struct built *b)
{
	size_t i;

	npu_op_free(b->op);
	for (i = 0; i < 3; i++) {
		npu_tensor_free(b->in[i]);
		if (!c->device)
			free(b->mem[i]);
	}
	npu_tensor_free(b->out);
	if (!c->device)
		free(b->omem);
	/* Fake buffers and contexts are the test's, not reference counted. */
	for (i = 0; i < 4; i++)
		free(b->buf[i]);
	free(b->ctx);
}

/* The CPU path with @lim (NULL: the defaults), recording what ran. */
static int run_cpu(const struct npu_op *op, const struct npu_cpu_limits *lim,
		   struct npu_cpu_trace *tr, char *err, size_t err_size)
{
	struct npu_cpu_run run;

	assert_int_equal(npu__cpu_run_init(&run, lim, err, err_size), 0);
	run.trace = tr;
	return npu__op_run_host(op, false, &run);
}

/*
 * Run @c on the reference and on the CPU path; the CPU path must have run
 * more than one engine command (as many as the device's, on a device
 * context) and no reference.
 */
static void run_tiled(const struct tcase *c)
{
	struct npu_cpu_trace tr;
	struct built b;
	void *ref;
	char err[256] = "";
	int ret;

	build(c, &b);
	ref = malloc(b.span);
	assert_non_null(ref);
	/* COPY with the KEEP border leaves elements: both start alike. */
	memset(b.omem, 0x5a, b.span);
	assert_int_equal(npu__op_run_host(b.op, true, NULL), 0);
	memcpy(ref, b.omem, b.span);
	memset(b.omem, 0x5a, b.span);
	ret = run_cpu(b.op, NULL, &tr, err, sizeof(err));
	if (ret)
		fail_msg("%s: %d %s", c->name, ret, err);
	if (tr.reference)
		fail_msg("%s: ran on the reference (%s)", c->name,
			 tr.why ? tr.why : "no reason");
	if (tr.engine_cmds < 2)
		fail_msg("%s: %zu engine command(s), not tiles", c->name,
			 tr.engine_cmds);
	if (c->device && tr.engine_cmds != npu_op_num_commands(b.op))
		fail_msg("%s: %zu tiles on the CPU, %zu device commands", c->name,
			 tr.engine_cmds, npu_op_num_commands(b.op));
	compare(c->name, c->out.dt, c->tol, ref, b.omem, b.span);
	free(ref);
	unbuild(c, &b);
}

static const struct tcase conv_fp32 = {
	"conv2d fp32 3x3, relu, tiles of 8 KiB",
	{ .kind = NPU_OP_CONV2D, .act = NPU_ACT_RELU, .max_tile_bytes = 8192,
	  .conv = { .stride = { 1, 1 }, .dilation = { 1, 1 },
		    .pad = { 1, 1, 1, 1 }, .groups = 1 } }, 3,
	{ F32(4, 2, 20, 17, 8), F32(4, 16, 3, 3, 8), F32(1, 16) },
	F32(4, 2, 20, 17, 16), 1e-5, true,
};

static void test_tiled_ops(void **state)
{
	static const struct tcase c[] = {
		{ "conv2d fp32 5x5 stride 2 on host memory, tiles of 6 KiB",
		  { .kind = NPU_OP_CONV2D, .max_tile_bytes = 6144,
		    .conv = { .stride = { 2, 2 }, .dilation = { 1, 1 },
			      .pad = { 2, 1, 2, 1 }, .groups = 1 } }, 2,
		  { F32(4, 1, 31, 12, 6), F32(4, 10, 5, 5, 6) },
		  F32(4, 1, 16, 5, 10), 1e-5, false },
		{ "conv2d int8 per channel, dilated, tiles of 768 bytes",
		  { .kind = NPU_OP_CONV2D, .max_tile_bytes = 768,
		    .conv = { .stride = { 1, 1 }, .dilation = { 2, 2 },
			      .pad = { 1, 1, 1, 1 }, .groups = 1 } }, 3,
		  { Q(INT8, 0.03f, -5, 4, 2, 14, 12, 6), QC(INT8, 0, 4, 10, 3, 3, 6), I32(1, 10) },
		  Q(INT8, 0.1f, 3, 4, 2, 12, 10, 10), 0, false },
		{ "gemm uint8 x int8 per channel along N, tiles of 1 KiB",
		  { .kind = NPU_OP_GEMM, .gemm.flags = NPU_GEMM_TRANS_B,
		    .max_tile_bytes = 1024 }, 3,
		  { Q(UINT8, 0.02f, 128, 2, 33, 70), QC(INT8, 0, 2, 90, 70), I32(1, 90) },
		  Q(UINT8, 0.05f, 100, 2, 33, 90), 0, false },
		{ "gemm fp32 batched, tiles of 4 KiB",
		  { .kind = NPU_OP_GEMM, .max_tile_bytes = 4096 }, 2,
		  { F32(3, 3, 21, 40), F32(3, 3, 40, 19) }, F32(3, 3, 21, 19), 1e-5, true },
		{ "copy fp32 constant border, tiles of 1 KiB",
		  { .kind = NPU_OP_COPY, .max_tile_bytes = 1024,
		    .copy = { .border = NPU_COPY_BORDER_CONSTANT, .fill = 0.25f,
			      .offset = { 0, 2, 3, 0 }, .reverse = 2 } }, 1,
		  { F32(4, 1, 30, 20, 4) }, F32(4, 1, 34, 25, 4), 0, true },
		{ "copy uint8 keep border, reversed, tiles of 256 bytes",
		  { .kind = NPU_OP_COPY, .max_tile_bytes = 256,
		    .copy = { .border = NPU_COPY_BORDER_KEEP,
			      .offset = { 1, 3, 0 }, .reverse = 4 } }, 1,
		  { Q(UINT8, 0.1f, 7, 3, 2, 20, 30) }, Q(UINT8, 0.1f, 7, 3, 4, 26, 30), 0, true },
		{ "resize linear fp32 per batch",
		  { .kind = NPU_OP_RESIZE, .max_tile_bytes = 16 * 16 * 12 * 4,
		    .resize = { .mode = NPU_RESIZE_LINEAR,
				.coord = NPU_RESIZE_HALF_PIXEL } }, 1,
		  { F32(4, 3, 8, 8, 12) }, F32(4, 3, 16, 16, 12), 1e-5, true },
	};
	size_t i;

	(void)state;
	run_tiled(&conv_fp32);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		run_tiled(&c[i]);
}

/*
 * With no max_tile_bytes: a uint8 copy of more elements than the
 * device's TENSOR_ELEMS limit (2^26) takes two commands.
 */
static void test_default_limits(void **state)
{
	static const struct tcase c = {
		"copy uint8 beyond TENSOR_ELEMS, reversed rows",
		{ .kind = NPU_OP_COPY,
		  .copy = { .border = NPU_COPY_BORDER_CONSTANT, .reverse = 2 } }, 1,
		{ Q(UINT8, 0.1f, 7, 3, 1, 8200, 8200) }, Q(UINT8, 0.1f, 7, 3, 1, 8200, 8200), 0, false,
	};

	(void)state;
	run_tiled(&c);
}

/* A GEMM whose K exceeds REDUCTION has no split: the reference, saying so. */
static void test_unsplittable(void **state)
{
	static const struct tcase c = {
		"gemm fp32 K beyond REDUCTION",
		{ .kind = NPU_OP_GEMM }, 2,
		{ F32(2, 2, 65537), F32(2, 65537, 3) }, F32(2, 2, 3), 1e-5, false,
	};
	struct npu_cpu_trace tr;
	struct built b;

	(void)state;
	build(&c, &b);
	assert_int_equal(run_cpu(b.op, NULL, &tr, NULL, 0), 0);
	assert_true(tr.reference);
	assert_int_equal(tr.engine_cmds, 0);
	assert_non_null(tr.why);
	assert_non_null(strstr(tr.why, "REDUCTION"));
	unbuild(&c, &b);
}

/*
 * A band of output rows of one image is one dense block of X and of Y,
 * and is described so: the engine's convolution kernels take dense
 * operands, and strided ones went to its generic path (four times
 * slower, bench.rst "Ops beyond the command limits").
 */
static void test_row_bands_dense(void **state)
{
	static const struct tcase c = {
		"conv2d fp32 3x3, one image, tiles of 8 KiB",
		{ .kind = NPU_OP_CONV2D, .max_tile_bytes = 8192,
		  .conv = { .stride = { 1, 1 }, .dilation = { 1, 1 },
			    .pad = { 1, 1, 1, 1 }, .groups = 1 } }, 2,
		{ F32(4, 1, 40, 17, 8), F32(4, 16, 3, 3, 8) },
		F32(4, 1, 40, 17, 16), 1e-5, true,
	};
	struct npu_cmdbuf *cb = NULL;
	struct built b;
	size_t i, n;

	(void)state;
	build(&c, &b);
	n = npu_op_num_commands(b.op);
	assert_true(n > 2);
	assert_int_equal(npu_cmdbuf_create(NULL, n * sizeof(struct vnpu_cmd_compute),
					   &cb), 0);
	assert_int_equal(npu_op_encode(b.op, cb), 0);
	for (i = 0; i < n; i++) {
		struct vnpu_cmd_compute cmd;

		memcpy(&cmd, (const uint8_t *)npu_cmdbuf_data(cb) + i * sizeof(cmd),
		       sizeof(cmd));
		assert_false(cmd.t[0].flags & VNPU_TENSOR_STRIDED);
		assert_false(cmd.t[3].flags & VNPU_TENSOR_STRIDED);
	}
	npu_cmdbuf_destroy(cb);
	unbuild(&c, &b);
	run_tiled(&c);
}

/* The whole op's work counts against max_work before any tile runs. */
static void test_work_limit_whole_op(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_cpu_trace tr;
	struct built b;
	char err[256] = "";
	uint8_t *before;

	(void)state;
	build(&conv_fp32, &b);
	before = malloc(b.span);
	assert_non_null(before);
	memcpy(before, b.omem, b.span);
	/* Each tile is far below this; the op is one unit above it. */
	lim.max_work = npu__op_work(b.op) - 1;
	assert_int_equal(run_cpu(b.op, &lim, &tr, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "max_work"));
	assert_int_equal(tr.engine_cmds, 0);
	assert_false(tr.reference);
	assert_memory_equal(before, b.omem, b.span);
	free(before);
	unbuild(&conv_fp32, &b);
}

static int polls;

static bool cancel_on_second_poll(void *opaque)
{
	(void)opaque;
	return ++polls >= 2;
}

/* The cancel callback is polled between tiles: not every tile runs. */
static void test_cancel_between_tiles(void **state)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_cpu_trace tr;
	struct built b;
	char err[256] = "";

	(void)state;
	build(&conv_fp32, &b);
	assert_true(npu_op_num_commands(b.op) > 2);
	polls = 0;
	lim.cancel = cancel_on_second_poll;
	assert_int_equal(run_cpu(b.op, &lim, &tr, err, sizeof(err)), -ECANCELED);
	assert_non_null(strstr(err, "cancelled"));
	assert_true(tr.engine_cmds < npu_op_num_commands(b.op));
	assert_false(tr.reference);
	unbuild(&conv_fp32, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiled_ops),
		cmocka_unit_test(test_default_limits),
		cmocka_unit_test(test_unsplittable),
		cmocka_unit_test(test_row_bands_dense),
		cmocka_unit_test(test_work_limit_whole_op),
		cmocka_unit_test(test_cancel_between_tiles),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
