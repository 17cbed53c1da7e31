// SPDX-License-Identifier: MIT
/*
 * Every compute op through libnpu -> vnpu.ko -> the device, checked
 * against the reference implementation (ops/vnpu_ref.c, compiled into
 * this test) run in the guest on the same inputs, over the op's command
 * untiled.  Not against npu_op_run_cpu(): libnpu's CPU path runs the
 * device's own compute engine, so a fault in one of its kernels would
 * show on both sides.
 *
 * Tolerances: integer outputs (int8, uint8, int32) must be bit-exact.
 * Float outputs of GEMM/CONV2D/CONV_TRANSPOSE may differ by accumulation
 * order (the device uses blocked kernels; CONV_TRANSPOSE runs its stride
 * phases through the CONV2D kernels): |dev - ref| <= 1e-4 * (1 + |ref|) for
 * fp32, 4e-3 * (1 + |ref|) for fp16/bf16 (one storage ulp).  Other ops
 * are bit-identical to the reference (ops.rst, "Tolerances"; NaN
 * payloads aside) and must match bit for bit, except where they call
 * libm (sigmoid, tanh, GELU, exp, log, pow, softmax): the device's libm
 * runs on the host CPU and this test's on the emulated guest CPU, and
 * glibc picks a function's implementation by CPU features, so those get
 * 1e-5 * (1 + |ref|) (fp32) or 4e-3 * (1 + |ref|) (fp16/bf16).
 *
 * COPY runs over strided views too (transpositions, up to 6 MB, past
 * the engine's abort polls): there device and reference must agree bit
 * for bit.
 *
 * Then one int8 GEMM of 2^33 MACs, twice the device's CMD_MACS limit, runs
 * through libnpu's tiling as several commands each within every limit,
 * checked at 64 sampled outputs against the reference computing just
 * those (the guest CPU is emulated: the full reference would take long).
 *
 * Then malformed compute commands, each its own job, must end as
 * NPU_JOB_CMD_ERROR with fault_va the byte offset of the field the
 * device's checker (vnpu_op_check(), shared through libnpu.a) names (the
 * harness fails on any kernel warning).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "vnpu/vnpu_hw_ops.h"
/* The device's checker and the reference ops, compiled into this test. */
#include "vnpu_ref.h"
#include "npu-ref-run.h"

static int ntest, nfail;

__attribute__((format(printf, 2, 3)))
static int tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	nfail += !ok;
	return ok;
}

static struct npu_context *ctx;
static struct npu_queue *queue;
static uint32_t rng = 12345;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* ---- Test case description ----------------------------------------------- */

#define Q_NONE	0
#define Q_TENSOR 1
#define Q_CHAN	2

struct tspec {
	enum npu_dtype dt;	/* 0: slot absent */
	uint32_t rank;
	uint32_t dims[6];
	int quant;
	float scale;
	int32_t zp;
	uint32_t axis;
};

struct tcase {
	const char *name;
	struct npu_op_params p;
	struct tspec t[4];	/* inputs 0..2, output 3 */
	size_t min_cmds;	/* > 1 for a tiling case */
};

struct ttensor {
	struct npu_tensor *t;
	struct npu_buffer *b;
	void *map;
	uint64_t span;
};

static int make_tensor(const struct tspec *s, struct ttensor *tt, bool fill)
{
	float sc[4096];
	int32_t zp[4096];
	uint64_t i, n;
	int ret;

	memset(tt, 0, sizeof(*tt));
	ret = npu_tensor_create(s->dt, s->rank, s->dims, &tt->t);
	if (ret)
		return ret;
	if (s->quant == Q_TENSOR)
		ret = npu_tensor_set_quant(tt->t, s->scale, s->zp);
	if (s->quant == Q_CHAN) {
		for (i = 0; i < s->dims[s->axis]; i++) {
			sc[i] = s->scale * (float)(1 + i % 7);
			zp[i] = s->dt == NPU_DTYPE_INT8 ? (int32_t)(i % 9) - 4 :
							  (int32_t)(i % 13) + 120;
		}
		ret = npu_tensor_set_quant_channel(tt->t, s->axis, sc, zp);
	}
	if (ret)
		return ret;
	ret = npu_tensor_span(tt->t, &tt->span);
	if (ret)
		return ret;
	ret = npu_buffer_alloc(ctx, tt->span, 0, &tt->b);
	if (!ret)
		ret = npu_buffer_map(tt->b, &tt->map);
	if (!ret)
		ret = npu_tensor_bind_buffer(tt->t, tt->b, 0);
	if (ret || !fill)
		return ret;
	n = tt->span / npu_dtype_size(s->dt);
	for (i = 0; i < n; i++) {
		float f = (float)((int32_t)(rnd() % 2001) - 1000) / 500.0f;

		switch (s->dt) {
		case NPU_DTYPE_FP32:
			((float *)tt->map)[i] = f;
			break;
		case NPU_DTYPE_FP16:	/* small integers / 64: exact in fp16 */
			((uint16_t *)tt->map)[i] = (uint16_t)(0x2400 + rnd() % 0x1400) |
						   (uint16_t)(rnd() & 0x8000);
			break;
		case NPU_DTYPE_BF16:
			((uint16_t *)tt->map)[i] = (uint16_t)(0x3e00 + rnd() % 0x180) |
						   (uint16_t)(rnd() & 0x8000);
			break;
		case NPU_DTYPE_INT32:
			((int32_t *)tt->map)[i] = (int32_t)(rnd() % 20001) - 10000;
			break;
		default:
			((uint8_t *)tt->map)[i] = (uint8_t)rnd();
			break;
		}
	}
	return 0;
}

static void free_tensor(struct ttensor *tt)
{
	npu_tensor_free(tt->t);
	npu_buffer_free(tt->b);
}

static float h2f(uint16_t h, bool bf)
{
	uint32_t u;
	float f;

	if (bf) {
		u = (uint32_t)h << 16;
		memcpy(&f, &u, 4);
		return f;
	}
	/* fp16 -> fp32 by scaling: exact for normals and subnormals. */
	f = ldexpf((float)(h & 0x3ff) + ((h >> 10) & 0x1f ? 1024.0f : 0.0f),
		   ((h >> 10) & 0x1f ? (int)((h >> 10) & 0x1f) : 1) - 25);
	return h & 0x8000 ? -f : f;
}

static bool is_float(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP16 || dt == NPU_DTYPE_BF16;
}

/* How closely a float output must follow the reference (see the top). */
enum cmp_rule {
	CMP_EXACT,	/* bit for bit, any NaN for any NaN */
	CMP_LIBM,	/* the same arithmetic around another libm */
	CMP_SUM,	/* GEMM/CONV2D/CONV_TRANSPOSE: another order of summation */
};

static const char *const cmp_names[] = { "bit for bit", "within 1e-5 (libm)",
					 "within 1e-4 (summation order)" };

static enum cmp_rule cmp_rule(const struct npu_op_params *p)
{
	if (p->kind == NPU_OP_GEMM || p->kind == NPU_OP_CONV2D ||
	    p->kind == NPU_OP_CONV_TRANSPOSE)
		return CMP_SUM;
	if (p->kind == NPU_OP_SOFTMAX ||
	    (p->kind == NPU_OP_ELTWISE && p->eltwise.kind == NPU_ELTWISE_POW))
		return CMP_LIBM;
	switch (p->act) {
	case NPU_ACT_SIGMOID:
	case NPU_ACT_TANH:
	case NPU_ACT_GELU:
	case NPU_ACT_EXP:
	case NPU_ACT_LOG:
		return CMP_LIBM;
	default:
		return CMP_EXACT;
	}
}

/* Compare device output @a with reference output @b; returns mismatches. */
static uint64_t compare(const struct tspec *s, const void *a, const void *b,
		       uint64_t span, enum cmp_rule rule, double *maxerr)
{
	uint64_t i, n = span / npu_dtype_size(s->dt), bad = 0;
	size_t es = npu_dtype_size(s->dt);
	double tol;

	*maxerr = 0;
	if (!is_float(s->dt)) {
		const uint8_t *x = a, *y = b;

		for (i = 0; i < span; i++)
			bad += x[i] != y[i];
		return bad;
	}
	tol = s->dt == NPU_DTYPE_FP32 ? (rule == CMP_SUM ? 1e-4 : 1e-5) : 4e-3;
	for (i = 0; i < n; i++) {
		double x, y, e;

		if (s->dt == NPU_DTYPE_FP32) {
			x = ((const float *)a)[i];
			y = ((const float *)b)[i];
		} else {
			x = h2f(((const uint16_t *)a)[i], s->dt == NPU_DTYPE_BF16);
			y = h2f(((const uint16_t *)b)[i], s->dt == NPU_DTYPE_BF16);
		}
		e = fabs(x - y);
		if (rule == CMP_EXACT) {
			if (!(isnan(x) && isnan(y)) &&
			    memcmp((const uint8_t *)a + i * es, (const uint8_t *)b + i * es, es))
				bad++;
		} else if (isnan(x) != isnan(y) || e > tol * (1.0 + fabs(y))) {
			bad++;
		}
		if (e > *maxerr)
			*maxerr = e;
	}
	return bad;
}

static void run_case(const struct tcase *c)
{
	struct ttensor in[3], out_dev, out_ref;
	const struct npu_tensor *ins[3] = { NULL, NULL, NULL };
	struct npu_op *op_dev = NULL, *op_ref = NULL;
	enum npu_op_where where = 0;
	size_t nin = 0, i;
	uint64_t bad;
	double maxerr;
	int ret = 0;
	enum cmp_rule rule = cmp_rule(&c->p);
	/* The reference runs the op untiled: libnpu's tiling is checked too. */
	struct npu_op_params pref = c->p;

	memset(in, 0, sizeof(in));
	memset(&out_dev, 0, sizeof(out_dev));
	memset(&out_ref, 0, sizeof(out_ref));
	for (i = 0; i < 3 && !ret; i++) {
		if (!c->t[i].dt)
			continue;
		ret = make_tensor(&c->t[i], &in[i], true);
		ins[i] = in[i].t;
		nin = i + 1;
	}
	if (!ret)
		ret = make_tensor(&c->t[3], &out_dev, false);
	if (!ret)
		ret = make_tensor(&c->t[3], &out_ref, false);
	if (!ret) {
		/* Poison: every element must be written by both paths. */
		memset(out_dev.map, 0x7f, out_dev.span);
		memset(out_ref.map, 0x7f, out_ref.span);
		ret = npu_op_create(&c->p, ins, nin, out_dev.t, &op_dev);
	}
	pref.max_tile_bytes = 0;
	if (!ret)
		ret = npu_op_create(&pref, ins, nin, out_ref.t, &op_ref);
	if (ret) {
		tap(0, "%s # setup: %s", c->name, npu_strerror(ret));
		goto out;
	}
	if (npu_op_supported(op_dev, NULL) != 1 ||
	    npu_op_num_commands(op_dev) < (c->min_cmds ? c->min_cmds : 1)) {
		const char *why = "tiling";

		npu_op_supported(op_dev, &why);
		tap(0, "%s # not on the device: %s (%zu commands)", c->name, why,
		    npu_op_num_commands(op_dev));
		goto out;
	}
	ret = npu_op_run(op_dev, queue, npu_deadline_ns(60000000000ll), &where);
	if (ret || where != NPU_OP_RAN_DEVICE) {
		tap(0, "%s # device run: %s", c->name, npu_strerror(ret));
		goto out;
	}
	ret = npu_ref_run(op_ref);
	if (ret) {
		tap(0, "%s # reference run: %s", c->name, npu_strerror(ret));
		goto out;
	}
	bad = compare(&c->t[3], out_dev.map, out_ref.map, out_dev.span, rule, &maxerr);
	tap(!bad, "%s: %zu command(s), %llu mismatches vs the reference (%s), max |err| %.3g",
	    c->name, npu_op_num_commands(op_dev), (unsigned long long)bad,
	    is_float(c->t[3].dt) ? cmp_names[rule] : "bit for bit", maxerr);
out:
	npu_op_free(op_dev);
	npu_op_free(op_ref);
	for (i = 0; i < 3; i++)
		free_tensor(&in[i]);
	free_tensor(&out_dev);
	free_tensor(&out_ref);
}

#define F32(...)	{ .dt = NPU_DTYPE_FP32, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ } }
#define F16(...)	{ .dt = NPU_DTYPE_FP16, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ } }
#define BF16(...)	{ .dt = NPU_DTYPE_BF16, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ } }
#define I32(...)	{ .dt = NPU_DTYPE_INT32, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ } }
#define U8(s, z, ...)	{ .dt = NPU_DTYPE_UINT8, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ }, .quant = Q_TENSOR, .scale = (s), .zp = (z) }
#define I8(s, z, ...)	{ .dt = NPU_DTYPE_INT8, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ }, .quant = Q_TENSOR, .scale = (s), .zp = (z) }
#define U8C(s, ax, ...)	{ .dt = NPU_DTYPE_UINT8, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ }, .quant = Q_CHAN, .scale = (s), .axis = (ax) }
#define I8C(s, ax, ...)	{ .dt = NPU_DTYPE_INT8, .rank = sizeof((uint32_t[]){ __VA_ARGS__ }) / 4, .dims = { __VA_ARGS__ }, .quant = Q_CHAN, .scale = (s), .axis = (ax) }
#define NONE		{ 0 }

#define CONV(sh, sw, dh, dw, pt, pl, pb, pr, g) \
	.conv = { .stride = { sh, sw }, .dilation = { dh, dw }, .pad = { pt, pl, pb, pr }, .groups = g }
#define CONVT(sh, sw, dh, dw, pt, pl, pb, pr, g, oph, opw) \
	.conv_transpose = { .stride = { sh, sw }, .dilation = { dh, dw }, \
			    .pad = { pt, pl, pb, pr }, .groups = g, .output_pad = { oph, opw } }

static const struct tcase cases[] = {
	{ "gemm fp32 33x47x29 + bias, relu",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .act = NPU_ACT_RELU },
	  { F32(33, 47), F32(47, 29), F32(29), F32(33, 29) } },
	{ "gemm fp32 batched broadcast [2,1,17,8]x[3,8,9]",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
	  { F32(2, 1, 17, 8), F32(3, 8, 9), NONE, F32(2, 3, 17, 9) } },
	{ "gemm fp32 transA transB, gelu",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .act = NPU_ACT_GELU,
	    .gemm.flags = NPU_GEMM_TRANS_A | NPU_GEMM_TRANS_B },
	  { F32(40, 19), F32(23, 40), NONE, F32(19, 23) } },
	{ "gemm fp16 in, fp32 out",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
	  { F16(16, 64), F16(64, 24), NONE, F32(16, 24) } },
	{ "gemm bf16 in, bf16 out",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
	  { BF16(12, 32), BF16(32, 20), NONE, BF16(12, 20) } },
	{ "gemm u8 x i8 per-channel -> u8, int32 bias, relu6",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .act = NPU_ACT_RELU6 },
	  { U8(0.02f, 128, 31, 70), I8C(0.004f, 1, 70, 45), I32(45), U8(0.05f, 10, 31, 45) } },
	{ "gemm i8 x i8 transB -> int32 accumulators",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .gemm.flags = NPU_GEMM_TRANS_B },
	  { I8(0.1f, -3, 20, 100), I8(0.1f, 2, 37, 100), I32(37), I32(20, 37) } },
	{ "gemm u8 tflite rounding -> i8",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .round = NPU_ROUND_TFLITE },
	  { U8(0.03f, 100, 64, 64), U8(0.02f, 120, 64, 64), I32(64), I8(0.4f, -5, 64, 64) } },
	{ "gemm u8 -> fp32 out (dequantizing epilogue), sigmoid",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .act = NPU_ACT_SIGMOID },
	  { U8(0.01f, 128, 8, 50), I8(0.01f, 0, 50, 16), NONE, F32(8, 16) } },
	{ "gemm fp32 tiled along M and N (max_tile_bytes 8 KiB)",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .max_tile_bytes = 8192 },
	  { F32(100, 16), F32(16, 90), F32(90), F32(100, 90) }, 4 },
	{ "gemm u8 per-channel tiled along N (per-tile channel arrays)",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .gemm.flags = NPU_GEMM_TRANS_B, .max_tile_bytes = 1024 },
	  { U8(0.02f, 128, 24, 32), I8C(0.004f, 0, 96, 32), I32(96), U8C(0.05f, 1, 24, 96) }, 4 },
	{ "conv2d fp32 3x3 pad 1 + bias",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, CONV(1, 1, 1, 1, 1, 1, 1, 1, 1) },
	  { F32(1, 16, 16, 8), F32(12, 3, 3, 8), F32(12), F32(1, 16, 16, 12) } },
	{ "conv2d fp32 stride 2 dilation 2 asymmetric pad, leaky relu",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .act = NPU_ACT_LEAKY_RELU, .act_alpha = 0.1f,
	    CONV(2, 2, 2, 2, 2, 1, 1, 2, 1) },
	  { F32(2, 13, 11, 3), F32(4, 3, 3, 3), NONE, F32(2, 6, 5, 4) } },
	{ "conv2d u8 x i8 per-channel depthwise (groups 8), stride 2",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, CONV(2, 2, 1, 1, 1, 1, 1, 1, 8) },
	  { U8(0.02f, 120, 1, 10, 10, 8), I8C(0.01f, 0, 8, 3, 3, 1), I32(8), U8(0.03f, 128, 1, 5, 5, 8) } },
	{ "conv2d u8 grouped (groups 2), relu, tflite",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .act = NPU_ACT_RELU, .round = NPU_ROUND_TFLITE,
	    CONV(1, 1, 1, 1, 0, 0, 0, 0, 2) },
	  { U8(0.02f, 120, 1, 9, 9, 16), I8(0.01f, 0, 32, 3, 3, 8), I32(32), U8(0.1f, 20, 1, 7, 7, 32) } },
	{ "conv2d fp32 tiled along output rows",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .max_tile_bytes = 2048, CONV(1, 1, 1, 1, 1, 1, 1, 1, 1) },
	  { F32(1, 24, 8, 4), F32(6, 3, 3, 4), F32(6), F32(1, 24, 8, 6) }, 3 },
	{ "pool2d max fp32 3x3 stride 2 pad 1",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL2D, .pool = { .kind = NPU_POOL_MAX, .kernel = { 3, 3 },
	    .stride = { 2, 2 }, .pad = { 1, 1, 1, 1 } } },
	  { F32(2, 9, 9, 5), NONE, NONE, F32(2, 5, 5, 5) } },
	{ "pool2d avg u8 count_include_pad",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL2D, .pool = { .kind = NPU_POOL_AVG, .count_include_pad = true,
	    .kernel = { 2, 3 }, .stride = { 1, 2 }, .pad = { 1, 1, 0, 1 } } },
	  { U8(0.1f, 7, 1, 6, 7, 3), NONE, NONE, U8(0.1f, 7, 1, 6, 4, 3) } },
	{ "pool2d global avg fp32",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL2D, .pool.kind = NPU_POOL_GLOBAL_AVG },
	  { F32(3, 7, 5, 6), NONE, NONE, F32(3, 1, 1, 6) } },
	{ "eltwise add fp32 broadcast, tanh",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .act = NPU_ACT_TANH, .eltwise.kind = NPU_ELTWISE_ADD },
	  { F32(4, 1, 6), F32(5, 1), NONE, F32(4, 5, 6) } },
	{ "eltwise sub u8 quantized",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_SUB },
	  { U8(0.05f, 100, 8, 9), U8(0.07f, 30, 8, 9), NONE, U8(0.1f, 128, 8, 9) } },
	{ "eltwise mul i8 per-channel, relu",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .act = NPU_ACT_RELU, .eltwise.kind = NPU_ELTWISE_MUL },
	  { I8C(0.05f, 1, 6, 7), I8(0.05f, 0, 7), NONE, I8(0.02f, -10, 6, 7) } },
	{ "activation relu fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
	  { F32(1000), NONE, NONE, F32(1000) } },
	{ "activation relu6 fp16", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU6 },
	  { F16(10, 50), NONE, NONE, F16(10, 50) } },
	{ "activation leaky relu fp32",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_LEAKY_RELU, .act_alpha = 0.01f },
	  { F32(3, 333), NONE, NONE, F32(3, 333) } },
	{ "activation sigmoid u8", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_SIGMOID },
	  { U8(0.05f, 128, 700), NONE, NONE, U8(1.0f / 256, 0, 700) } },
	{ "activation tanh fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_TANH },
	  { F32(2, 2, 2, 2, 2, 31), NONE, NONE, F32(2, 2, 2, 2, 2, 31) } },
	{ "activation gelu bf16", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_GELU },
	  { BF16(256), NONE, NONE, BF16(256) } },
	{ "softmax fp32 middle axis", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_SOFTMAX, .softmax.axis = 1 },
	  { F32(4, 37, 3), NONE, NONE, F32(4, 37, 3) } },
	{ "softmax u8 last axis", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_SOFTMAX, .softmax.axis = 1 },
	  { U8(0.1f, 128, 16, 10), NONE, NONE, U8(1.0f / 256, 0, 16, 10) } },
	{ "layernorm fp32 axis 1 with gamma and beta",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_LAYERNORM, .layernorm = { .axis = 1, .epsilon = 1e-5f } },
	  { F32(6, 4, 12), F32(4, 12), F32(4, 12), F32(6, 4, 12) } },
	{ "layernorm u8 axis 0 no affine",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_LAYERNORM, .layernorm = { .axis = 0, .epsilon = 1e-3f } },
	  { U8(0.1f, 100, 50), NONE, NONE, U8(0.05f, 128, 50) } },
	{ "quantize fp32 -> i8 per-channel",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_QUANTIZE },
	  { F32(8, 33), NONE, NONE, I8C(0.01f, 0, 8, 33) } },
	{ "quantize fp32 -> u8 tflite rounding",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_QUANTIZE, .round = NPU_ROUND_TFLITE },
	  { F32(500), NONE, NONE, U8(0.0078125f, 128, 500) } },
	{ "dequantize u8 per-channel -> fp32",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_DEQUANTIZE },
	  { U8C(0.02f, 2, 3, 4, 5), NONE, NONE, F32(3, 4, 5) } },
	{ "requantize i8 -> u8 tflite",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REQUANTIZE, .round = NPU_ROUND_TFLITE },
	  { I8(0.03f, 3, 999), NONE, NONE, U8(0.07f, 120, 999) } },
	{ "requantize u8 per-channel -> i8",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_REQUANTIZE },
	  { U8C(0.03f, 1, 10, 12), NONE, NONE, I8(0.05f, 0, 10, 12) } },
	{ "conv_transpose fp32 4x4 stride 2 pad 1 + bias, hard swish",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE, .act = NPU_ACT_HARD_SWISH,
	    CONVT(2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0) },
	  { F32(2, 12, 10, 16), F32(16, 4, 4, 8), F32(8), F32(2, 24, 20, 8) } },
	{ "conv_transpose fp32 groups 2 dilation 2 output padding, hard sigmoid",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE, .act = NPU_ACT_HARD_SIGMOID,
	    .act_alpha = 0.2f, .act_beta = 0.5f, CONVT(3, 2, 2, 1, 0, 1, 2, 0, 2, 1, 1) },
	  { F32(1, 5, 6, 6), F32(6, 3, 2, 5), NONE, F32(1, 16, 12, 10) } },
	{ "conv_transpose u8 x i8 per-channel -> u8, int32 bias, relu",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE, .act = NPU_ACT_RELU,
	    CONVT(2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0) },
	  { U8(0.02f, 120, 1, 7, 7, 12), I8C(0.01f, 3, 12, 2, 2, 9), I32(9),
	    U8(0.05f, 100, 1, 14, 14, 9) } },
	{ "conv_transpose fp16 1-D (H = 1), stride 4",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE, CONVT(1, 4, 1, 1, 0, 0, 0, 0, 1, 0, 0) },
	  { F16(1, 1, 20, 4), F16(4, 1, 8, 3), NONE, F32(1, 1, 84, 3) } },
	{ "conv2d fp32 3x3 + bias, fused hard sigmoid",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .act = NPU_ACT_HARD_SIGMOID, .act_alpha = 1.0f / 6,
	    .act_beta = 0.5f, CONV(1, 1, 1, 1, 1, 1, 1, 1, 1) },
	  { F32(1, 12, 12, 8), F32(16, 3, 3, 8), F32(16), F32(1, 12, 12, 16) } },
	{ "conv2d fp32 3x3 + scale/shift [2,CO] (folded batchnorm), relu",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .act = NPU_ACT_RELU, CONV(1, 1, 1, 1, 1, 1, 1, 1, 1) },
	  { F32(1, 12, 12, 8), F32(16, 3, 3, 8), F32(2, 16), F32(1, 12, 12, 16) } },
	{ "conv2d fp16 depthwise + scale/shift [2,C], hard swish",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .act = NPU_ACT_HARD_SWISH, CONV(2, 2, 1, 1, 1, 1, 1, 1, 24) },
	  { F16(1, 15, 15, 24), F16(24, 3, 3, 1), BF16(2, 24), F16(1, 8, 8, 24) } },
	{ "conv_transpose fp32 + scale/shift [2,CO]",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE, CONVT(2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0) },
	  { F32(1, 6, 6, 8), F32(8, 2, 2, 12), F32(2, 12), F32(1, 12, 12, 12) } },
	{ "gemm fp32 + scale/shift [2,N], tiled along M and N (8 KiB)",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .max_tile_bytes = 8192 },
	  { F32(100, 16), F32(16, 90), F32(2, 90), F32(100, 90) }, 4 },
	{ "gemm fp32 + bias, fused hard swish",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM, .act = NPU_ACT_HARD_SWISH },
	  { F32(30, 40), F32(40, 20), F32(20), F32(30, 20) } },
	{ "reduce mean fp32 over H, W (LayerNorm's mean)",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce = { .kind = NPU_REDUCE_MEAN, .axes = 6 } },
	  { F32(2, 9, 11, 7), NONE, NONE, F32(2, 1, 1, 7) } },
	{ "reduce sum fp32 last axis",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce = { .kind = NPU_REDUCE_SUM, .axes = 4 } },
	  { F32(5, 6, 300), NONE, NONE, F32(5, 6, 1) } },
	{ "reduce max u8 over axes 0 and 2",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce = { .kind = NPU_REDUCE_MAX, .axes = 5 } },
	  { U8(0.1f, 3, 4, 5, 6), NONE, NONE, U8(0.1f, 3, 1, 5, 1) } },
	{ "reduce l2 fp16 -> fp32, all axes",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce = { .kind = NPU_REDUCE_L2, .axes = 3 } },
	  { F16(17, 19), NONE, NONE, F32(1, 1) } },
	{ "reduce min fp32 first axis",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_REDUCE, .reduce = { .kind = NPU_REDUCE_MIN, .axes = 1 } },
	  { F32(64, 3), NONE, NONE, F32(1, 3) } },
	{ "eltwise div fp32 broadcast",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_DIV },
	  { F32(6, 7, 8), F32(8), NONE, F32(6, 7, 8) } },
	{ "eltwise max u8 quantized",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MAX },
	  { U8(0.05f, 100, 9, 10), U8(0.07f, 30, 10), NONE, U8(0.1f, 128, 9, 10) } },
	{ "eltwise min fp16",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MIN },
	  { F16(33, 2), F16(33, 1), NONE, F16(33, 2) } },
	{ "eltwise pow fp32 (scalar exponent)",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_POW },
	  { F32(400), F32(1), NONE, F32(400) } },
	{ "activation sqrt fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_SQRT },
	  { F32(300), NONE, NONE, F32(300) } },
	{ "activation reciprocal fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RECIPROCAL },
	  { F32(300), NONE, NONE, F32(300) } },
	{ "activation exp u8 -> fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_EXP },
	  { U8(0.02f, 128, 300), NONE, NONE, F32(300) } },
	{ "activation log fp32", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_LOG },
	  { F32(300), NONE, NONE, F32(300) } },
	{ "activation abs i8", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_ABS },
	  { I8(0.05f, 0, 300), NONE, NONE, I8(0.05f, 0, 300) } },
	{ "activation neg bf16", { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_NEG },
	  { BF16(300), NONE, NONE, BF16(300) } },
	{ "activation hard sigmoid fp32",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_HARD_SIGMOID, .act_alpha = 0.5f,
	    .act_beta = 0.6f },
	  { F32(300), NONE, NONE, F32(300) } },
	{ "activation scale+shift [2,C] (batchnorm NHWC) fp32, relu",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
	  { F32(2, 5, 6, 24), F32(2, 24), NONE, F32(2, 5, 6, 24) } },
	{ "activation scale+shift [2,C,1,1] (batchnorm NCHW) fp16",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_ACTIVATION },
	  { F16(2, 8, 5, 6), F32(2, 8, 1, 1), NONE, F16(2, 8, 5, 6) } },
	{ "activation scale+shift u8 -> u8, hard swish",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_HARD_SWISH },
	  { U8(0.02f, 128, 1, 7, 7, 16), BF16(2, 16), NONE, U8(0.01f, 100, 1, 7, 7, 16) } },
	{ "copy fp32 -> fp16 into a constant border (pad)",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy = { .border = NPU_COPY_BORDER_CONSTANT,
					   .fill = -2.5f, .offset = { 1, 2, 0 } } },
	  { F32(7, 9, 5), NONE, NONE, F16(10, 12, 5) } },
	{ "copy bf16 reflect, dims read backwards",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy = { .border = NPU_COPY_BORDER_REFLECT,
					   .offset = { 3, -1 }, .reverse = 2 } },
	  { BF16(6, 40), NONE, NONE, BF16(13, 37) } },
	{ "copy u8 -> i8 requantized, edge border",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy = { .border = NPU_COPY_BORDER_EDGE,
					   .offset = { 0, 4, 4, 0 } } },
	  { U8(0.05f, 100, 1, 16, 16, 8), NONE, NONE, I8(0.04f, -3, 1, 24, 24, 8) } },
	{ "copy int32 wrap (tile) 3x",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy = { .border = NPU_COPY_BORDER_WRAP } },
	  { I32(5, 33), NONE, NONE, I32(15, 99) } },
	{ "copy fp32 into a window, border kept (concat part)",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy = { .offset = { 0, 17 } } },
	  { F32(64, 30), NONE, NONE, F32(64, 80) } },
	{ "resize fp32 bilinear half_pixel 2x",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_RESIZE, .resize = { .mode = NPU_RESIZE_LINEAR } },
	  { F32(2, 17, 23, 8), NONE, NONE, F32(2, 34, 46, 8) } },
	{ "resize u8 nearest asymmetric, scale 0.6",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_RESIZE, .resize = { .coord = NPU_RESIZE_ASYMMETRIC,
					       .nearest = NPU_RESIZE_FLOOR,
					       .scale = { 0.6f, 0.6f } } },
	  { U8(0.1f, 7, 1, 40, 33, 3), NONE, NONE, U8(0.1f, 7, 1, 24, 19, 3) } },
	{ "resize i8 bilinear pytorch_half_pixel, requantized",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_RESIZE, .resize = { .mode = NPU_RESIZE_LINEAR,
					       .coord = NPU_RESIZE_PYTORCH_HALF_PIXEL } },
	  { I8(0.05f, 3, 1, 12, 9, 16), NONE, NONE, I8(0.06f, -5, 1, 1, 31, 16) } },
	{ "resize fp16 cubic align_corners, exclude_outside",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_RESIZE, .resize = { .mode = NPU_RESIZE_CUBIC,
					       .coord = NPU_RESIZE_ALIGN_CORNERS,
					       .cubic_a = -0.5f, .exclude_outside = true } },
	  { F16(1, 9, 7, 5), NONE, NONE, F16(1, 20, 13, 5) } },
	{ "copy fp32 reflect pad, tiled (max_tile_bytes 64 KiB)",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY, .max_tile_bytes = 65536,
	    .copy = { .border = NPU_COPY_BORDER_REFLECT, .offset = { 30, 20 } } },
	  { F32(40, 50), NONE, NONE, F32(300, 300) }, 4 },
	{ "copy fp32 into a window, X narrowed per tile (max_tile_bytes 64 KiB)",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY, .max_tile_bytes = 65536,
	    .copy = { .offset = { -50, 40 }, .reverse = 1 } },
	  { F32(500, 200), NONE, NONE, F32(400, 300) }, 4 },
	{ "resize fp32 bilinear, tiled by batch (max_tile_bytes 64 KiB)",
	  { .size = sizeof(struct npu_op_params), .kind = NPU_OP_RESIZE, .max_tile_bytes = 65536,
	    .resize = { .mode = NPU_RESIZE_LINEAR } },
	  { F32(4, 20, 20, 8), NONE, NONE, F32(4, 40, 40, 8) }, 4 },
	{ "resize bf16 -> fp32 tf_crop_and_resize",
	  { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_RESIZE, .resize = { .mode = NPU_RESIZE_LINEAR,
					       .coord = NPU_RESIZE_TF_CROP_AND_RESIZE,
					       .extrapolation = 10.0f,
					       .roi = { -0.2f, 0.1f, 0.7f, 1.3f } } },
	  { BF16(3, 10, 11, 4), NONE, NONE, F32(3, 8, 9, 4) } },
};

/* ---- COPY over strided views ------------------------------------------------ */

/*
 * A transposition of an @rows x @cols fp32 matrix (X through element
 * strides), with dims read backwards per @reverse, on the device and on the
 * CPU: bit-identical.  Large ones cross the engine's abort polls.
 */
static void run_copy_transpose(uint32_t rows, uint32_t cols, uint32_t reverse,
			       enum npu_dtype ydt)
{
	const struct tspec xs = F32(rows, cols);
	struct tspec ys = F32(cols, rows);
	struct ttensor x, ydev, yref;
	struct npu_tensor *view = NULL;
	const struct npu_tensor *in[1];
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_COPY, .copy.reverse = reverse };
	struct npu_op *od = NULL, *oc = NULL;
	enum npu_op_where where = 0;
	double maxerr;
	uint64_t bad;
	int ret;

	ys.dt = ydt;
	memset(&x, 0, sizeof(x));
	memset(&ydev, 0, sizeof(ydev));
	memset(&yref, 0, sizeof(yref));
	ret = make_tensor(&xs, &x, true);
	if (!ret)
		ret = make_tensor(&ys, &ydev, false);
	if (!ret)
		ret = make_tensor(&ys, &yref, false);
	if (!ret)
		ret = npu_tensor_create(NPU_DTYPE_FP32, 2, (uint32_t[]){ cols, rows }, &view);
	if (!ret)
		ret = npu_tensor_set_strides(view, (uint64_t[]){ 1, cols });
	if (!ret)
		ret = npu_tensor_bind_buffer(view, x.b, 0);
	in[0] = view;
	if (!ret)
		ret = npu_op_create(&p, in, 1, ydev.t, &od);
	if (!ret)
		ret = npu_op_create(&p, in, 1, yref.t, &oc);
	if (!ret)
		ret = npu_op_run(od, queue, npu_deadline_ns(60000000000ll), &where);
	if (!ret && where != NPU_OP_RAN_DEVICE)
		ret = -ENOTSUP;
	if (!ret)
		ret = npu_ref_run(oc);
	if (ret) {
		tap(0, "copy transpose %ux%u # %s", rows, cols, npu_strerror(ret));
	} else {
		bad = compare(&ys, ydev.map, yref.map, ydev.span, CMP_EXACT, &maxerr);
		tap(!bad && !memcmp(ydev.map, yref.map, ydev.span),
		    "copy transpose %ux%u fp32 -> dtype %d, reverse %#x: %llu mismatches vs the reference",
		    rows, cols, ydt, reverse, (unsigned long long)bad);
	}
	npu_op_free(od);
	npu_op_free(oc);
	npu_tensor_free(view);
	free_tensor(&x);
	free_tensor(&ydev);
	free_tensor(&yref);
}

/* ---- Beyond one command: 2^33 MACs ------------------------------------------ */

#define BIG	2048u
#define SAMPLES	64

/* Y[i][j] of the big GEMM by the reference: a 1 x K x 1 GEMM over views. */
static int sample_ref(const struct ttensor *a, const struct ttensor *b,
		      const struct ttensor *bias, const struct tspec *ys,
		      uint32_t i, uint32_t j, uint8_t *out)
{
	const struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM };
	struct npu_tensor *ta = NULL, *tb = NULL, *tc = NULL, *ty = NULL;
	const struct npu_tensor *in[3];
	struct npu_buffer *yb = NULL;
	struct npu_op *op = NULL;
	void *ymap = NULL;
	int ret;

	ret = npu_tensor_create(NPU_DTYPE_UINT8, 2, (uint32_t[]){ 1, BIG }, &ta);
	if (!ret)
		ret = npu_tensor_create(NPU_DTYPE_INT8, 2, (uint32_t[]){ BIG, 1 }, &tb);
	if (!ret)
		ret = npu_tensor_create(NPU_DTYPE_INT32, 1, (uint32_t[]){ 1 }, &tc);
	if (!ret)
		ret = npu_tensor_create(NPU_DTYPE_UINT8, 2, (uint32_t[]){ 1, 1 }, &ty);
	if (!ret)
		ret = npu_tensor_set_quant(ta, 0.02f, 128);
	if (!ret)
		ret = npu_tensor_set_quant(tb, 0.03f, 0);
	if (!ret)
		ret = npu_tensor_set_quant(ty, ys->scale, ys->zp);
	/* Column j of B: K elements BIG apart. */
	if (!ret)
		ret = npu_tensor_set_strides(tb, (uint64_t[]){ BIG, 1 });
	if (!ret)
		ret = npu_tensor_bind_buffer(ta, a->b, (uint64_t)i * BIG);
	if (!ret)
		ret = npu_tensor_bind_buffer(tb, b->b, j);
	if (!ret)
		ret = npu_tensor_bind_buffer(tc, bias->b, 4ull * j);
	/* One uint8, in a buffer: npu_ref_run() finds operands in the op's buffers. */
	if (!ret)
		ret = npu_buffer_alloc(ctx, 64, 0, &yb);
	if (!ret)
		ret = npu_buffer_map(yb, &ymap);
	if (!ret)
		ret = npu_tensor_bind_buffer(ty, yb, 0);
	in[0] = ta;
	in[1] = tb;
	in[2] = tc;
	if (!ret)
		ret = npu_op_create(&p, in, 3, ty, &op);
	if (!ret)
		ret = npu_ref_run(op);
	if (!ret)
		*out = *(const uint8_t *)ymap;
	npu_op_free(op);
	npu_buffer_free(yb);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(tc);
	npu_tensor_free(ty);
	return ret;
}

static void run_big_gemm(void)
{
	const struct tspec sa = U8(0.02f, 128, BIG, BIG), sb = I8(0.03f, 0, BIG, BIG);
	const struct tspec sc = I32(BIG), sy = U8(2.0f, 128, BIG, BIG);
	const struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM };
	struct ttensor a, b, c, y;
	const struct npu_tensor *ins[3];
	struct npu_cmdbuf *host = NULL;
	struct npu_op *op = NULL;
	enum npu_op_where where = 0;
	size_t ncmd = 0, i, within = 0, bad = 0;
	int64_t t0, t1;
	int ret;

	memset(&y, 0, sizeof(y));
	ret = make_tensor(&sa, &a, true);
	if (!ret)
		ret = make_tensor(&sb, &b, true);
	if (!ret)
		ret = make_tensor(&sc, &c, true);
	if (!ret)
		ret = make_tensor(&sy, &y, false);
	ins[0] = a.t;
	ins[1] = b.t;
	ins[2] = c.t;
	if (!ret)
		ret = npu_op_create(&p, ins, 3, y.t, &op);
	if (ret) {
		tap(0, "gemm 2048^3 int8 # setup: %s", npu_strerror(ret));
		goto out;
	}
	ncmd = npu_op_num_commands(op);
	tap(npu_op_supported(op, NULL) == 1 && ncmd >= 2,
	    "gemm 2048^3 int8 (2^33 MACs) is split for the device: %zu commands", ncmd);
	/* Each command within the device's limits by its own checker. */
	ret = npu_cmdbuf_create(NULL, ncmd * sizeof(struct vnpu_cmd_compute), &host);
	if (!ret)
		ret = npu_op_encode(op, host);
	for (i = 0; !ret && i < ncmd; i++) {
		struct vnpu_cmd_compute cc;
		struct vnpu_op_info info;

		within += !vnpu_op_check((const uint8_t *)npu_cmdbuf_data(host) +
					 i * sizeof(cc), sizeof(cc), &cc, &info);
	}
	tap(!ret && within == ncmd, "each of the %zu commands is within every limit (%zu are)",
	    ncmd, within);

	memset(y.map, 0x7f, y.span);
	t0 = npu_time_ns();
	ret = npu_op_run(op, queue, npu_deadline_ns(300000000000ll), &where);
	t1 = npu_time_ns();
	if (!tap(!ret && where == NPU_OP_RAN_DEVICE, "gemm 2048^3 int8 runs on the device: %s (%.2f s)",
		 npu_strerror(ret), (double)(t1 - t0) / 1e9))
		goto out;
	for (i = 0; i < SAMPLES; i++) {
		/* Corners and the middle (tile edges), then random elements. */
		static const uint32_t fixed[] = { 0, 1, BIG / 2 - 1, BIG / 2, BIG - 1 };
		uint32_t r = i < 25 ? fixed[i / 5] : rnd() % BIG;
		uint32_t col = i < 25 ? fixed[i % 5] : rnd() % BIG;
		uint8_t want = 0, got = ((uint8_t *)y.map)[(size_t)r * BIG + col];

		ret = sample_ref(&a, &b, &c, &sy, r, col, &want);
		if (ret || want != got) {
			if (bad++ < 5)
				printf("#   Y[%u][%u]: device %u, reference %u (%s)\n", r, col, got,
				       want, npu_strerror(ret));
		}
	}
	tap(!bad, "gemm 2048^3 int8: %d sampled outputs match the reference (%zu differ)",
	    SAMPLES, bad);
out:
	npu_cmdbuf_destroy(host);
	npu_op_free(op);
	free_tensor(&a);
	free_tensor(&b);
	free_tensor(&c);
	free_tensor(&y);
}

/* ---- Malformed commands ---------------------------------------------------- */

struct bad_case {
	const char *name;
	void (*mutate)(struct vnpu_cmd_compute *c, uint64_t spare_va);
};

static void m_opcode(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->hdr.opcode = VNPU_OP_LAST + 1; }
static void m_reserved0(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->reserved0 = 1; }
static void m_act(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->act = VNPU_ACT_COUNT; }
static void m_alpha(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->act_alpha = 0x3f800000; }
static void m_round(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->round = 7; }
static void m_attr(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->attr.gemm.reserved[3] = 1; }
static void m_flags(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->attr.gemm.flags = 0x10; }
static void m_dtype(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dtype = VNPU_DT_COUNT; }
static void m_rank0(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].rank = 0; }
static void m_rank7(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[1].rank = 7; }
static void m_dim0(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[1].dims[0] = 0; }
static void m_shape(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[3].dims[1] += 1; }
static void m_tail_dim(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dims[5] = 3; }
static void m_align(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].va += 2; }
static void m_va_top(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].va = (1ull << 48) - 8; }
static void m_stride_ovf(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].flags = VNPU_TENSOR_STRIDED; c->t[0].strides[0] = 1ull << 62; c->t[0].strides[1] = 1; }
static void m_stride_dense(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].strides[0] = 4; }
static void m_tflags(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[3].flags = 0x80; }
static void m_treserved(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[1].reserved[2] = 1; }
static void m_quant_float(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].quant = VNPU_QUANT_TENSOR; c->t[0].scale = 0x3f800000; }
static void m_int8_noquant(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dtype = VNPU_DT_INT8; c->t[1].dtype = VNPU_DT_INT8; }
static void m_bad_scale(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dtype = VNPU_DT_INT8; c->t[1].dtype = VNPU_DT_INT8; c->t[0].quant = c->t[1].quant = VNPU_QUANT_TENSOR; c->t[0].scale = 0x7fc00000; c->t[1].scale = 0x3f800000; }
static void m_bad_zp(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dtype = VNPU_DT_INT8; c->t[1].dtype = VNPU_DT_INT8; c->t[0].quant = c->t[1].quant = VNPU_QUANT_TENSOR; c->t[0].scale = c->t[1].scale = 0x3f800000; c->t[0].zero_point = 200; }
static void m_chan_novamap(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dtype = VNPU_DT_UINT8; c->t[1].dtype = VNPU_DT_INT8; c->t[0].quant = VNPU_QUANT_TENSOR; c->t[0].scale = 0x3f800000; c->t[1].quant = VNPU_QUANT_CHANNEL; c->t[1].quant_axis = 1; c->t[1].quant_va = 0; }
/* Per-channel arrays that hold a negative scale: rejected after reading them. */
static void m_chan_badscale(struct vnpu_cmd_compute *c, uint64_t v) { m_chan_novamap(c, v); c->t[1].quant_va = v; }
static void m_missing_b(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; memset(&c->t[1], 0, sizeof(c->t[1])); }
static void m_extra_slot(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[2] = c->t[3]; c->hdr.opcode = VNPU_OP_ACTIVATION; memset(&c->t[1], 0, sizeof(c->t[1])); }
static void m_bias_dtype(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[2] = c->t[3]; c->t[2].rank = 1; c->t[2].dims[0] = c->t[3].dims[1]; c->t[2].dims[1] = 0; c->t[2].dtype = VNPU_DT_INT32; }
static void m_conv_attrs(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->hdr.opcode = VNPU_OP_CONV2D; }
/* Beyond a command limit: shapes only, refused before any memory is read. */
static void m_reduction(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dims[1] = c->t[1].dims[0] = VNPU_LIMIT_REDUCTION + 1; }
static void m_elems(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dims[0] = c->t[3].dims[0] = VNPU_LIMIT_TENSOR_ELEMS / 16 + 1; }
/* 8192 x 256 x 4096: 2^33 MACs, every operand and their sum within limits. */
static void m_macs(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[0].dims[0] = c->t[3].dims[0] = 8192; c->t[1].dims[1] = c->t[3].dims[1] = 4096; c->t[0].dims[1] = c->t[1].dims[0] = 256; }

/* The GEMM command as a valid COPY: X [8,16] into Y [8,4], border kept. */
static void copy_base(struct vnpu_cmd_compute *c)
{
	c->hdr.opcode = VNPU_OP_COPY;
	memset(&c->t[1], 0, sizeof(c->t[1]));
	memset(&c->attr, 0, sizeof(c->attr));
}
static void m_copy_border(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->attr.copy.border = VNPU_COPY_BORDER_WRAP + 1; }
static void m_copy_fill(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->attr.copy.fill = 0x3f800000; }
static void m_copy_offset(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->attr.copy.offset[4] = 1; }
static void m_copy_reverse(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->attr.copy.reverse = 1u << 2; }
static void m_copy_rank(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->t[3].rank = 3; c->t[3].dims[2] = 1; }
static void m_copy_int32(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->t[0].dtype = VNPU_DT_INT32; }
static void m_copy_reserved(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->attr.copy.reserved[1] = 1; }
static void m_resize_mode(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->hdr.opcode = VNPU_OP_RESIZE; c->attr.resize.mode = 3; }
static void m_resize_scale(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->hdr.opcode = VNPU_OP_RESIZE; c->attr.resize.scale_w = 0x7fc00000; }
static void m_resize_roi(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->hdr.opcode = VNPU_OP_RESIZE; c->attr.resize.roi[2] = 0x3f800000; }
static void m_resize_rank(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; copy_base(c); c->hdr.opcode = VNPU_OP_RESIZE; }
/* GEMM with B [16, 4] as its scale/shift: [2, N] needs dims[0] 2. */
static void m_gemm_affine(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->t[2] = c->t[1]; }
/* ACTIVATION in place on Y with B [16, 4] as its scale/shift: P needs dims[0] 2. */
static void m_act_affine(struct vnpu_cmd_compute *c, uint64_t v) { (void)v; c->hdr.opcode = VNPU_OP_ACTIVATION; c->t[0] = c->t[3]; }

static const struct bad_case bad_cases[] = {
	{ "unknown compute opcode", m_opcode },
	{ "reserved0 set", m_reserved0 },
	{ "activation out of range", m_act },
	{ "act_alpha without leaky relu", m_alpha },
	{ "rounding mode out of range", m_round },
	{ "attribute reserved word set", m_attr },
	{ "unknown gemm flag", m_flags },
	{ "dtype out of range", m_dtype },
	{ "rank 0", m_rank0 },
	{ "rank 7", m_rank7 },
	{ "zero extent", m_dim0 },
	{ "output shape mismatch", m_shape },
	{ "extent beyond rank", m_tail_dim },
	{ "misaligned va", m_align },
	{ "operand beyond the VA space", m_va_top },
	{ "stride overflow", m_stride_ovf },
	{ "strides on a dense tensor", m_stride_dense },
	{ "unknown tensor flag", m_tflags },
	{ "tensor reserved set", m_treserved },
	{ "quantization on a float tensor", m_quant_float },
	{ "int8 without quantization", m_int8_noquant },
	{ "NaN scale", m_bad_scale },
	{ "zero point out of range", m_bad_zp },
	{ "per-channel without quant_va", m_chan_novamap },
	{ "per-channel array with a negative scale", m_chan_badscale },
	{ "missing required operand", m_missing_b },
	{ "operand in a slot the op does not take", m_extra_slot },
	{ "int32 bias for a float gemm", m_bias_dtype },
	{ "gemm operands under a conv2d opcode", m_conv_attrs },
	{ "GEMM K beyond REDUCTION", m_reduction },
	{ "operand beyond TENSOR_ELEMS", m_elems },
	{ "work beyond CMD_MACS", m_macs },
	{ "copy: undefined border", m_copy_border },
	{ "copy: fill without a constant border", m_copy_fill },
	{ "copy: offset beyond the rank", m_copy_offset },
	{ "copy: reversed dim beyond the rank", m_copy_reverse },
	{ "copy: ranks differ", m_copy_rank },
	{ "copy: int32 into fp32", m_copy_int32 },
	{ "copy: reserved attribute word", m_copy_reserved },
	{ "resize: undefined mode", m_resize_mode },
	{ "resize: NaN scale", m_resize_scale },
	{ "resize: roi without crop_and_resize", m_resize_roi },
	{ "resize: 2-D operands", m_resize_rank },
	{ "activation: scale/shift not [2, ...]", m_act_affine },
	{ "gemm: scale/shift not [2, N]", m_gemm_affine },
};

static void run_bad_cases(void)
{
	const struct tspec sa = F32(8, 16), sb = F32(16, 4), sy = F32(8, 4);
	struct ttensor a, b, y, spare;
	const struct npu_tensor *ins[2];
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_cmdbuf *host = NULL;
	struct npu_op *op = NULL;
	struct vnpu_cmd_compute good;
	size_t i;
	int ret;

	ret = make_tensor(&sa, &a, true);
	if (!ret)
		ret = make_tensor(&sb, &b, true);
	if (!ret)
		ret = make_tensor(&sy, &y, false);
	if (!ret)
		ret = make_tensor(&(struct tspec)F32(64), &spare, false);
	ins[0] = a.t;
	ins[1] = b.t;
	if (!ret)
		ret = npu_op_create(&p, ins, 2, y.t, &op);
	if (!ret)
		ret = npu_cmdbuf_create(NULL, sizeof(good), &host);
	if (!ret)
		ret = npu_op_encode(op, host);
	if (ret) {
		tap(0, "malformed commands # setup: %s", npu_strerror(ret));
		return;
	}
	memcpy(&good, npu_cmdbuf_data(host), sizeof(good));
	/* Scales then zero points: scale[1] negative. */
	((float *)spare.map)[0] = 1.0f;
	((float *)spare.map)[1] = -1.0f;
	for (i = 2; i < 64; i++)
		((float *)spare.map)[i] = i < 4 ? 1.0f : 0.0f;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct vnpu_cmd_compute c = good;
		struct npu_buffer *bufs[4] = { a.b, b.b, y.b, spare.b };
		struct npu_job_status st = NPU_JOB_STATUS_INIT;
		struct npu_cmdbuf *cb = NULL;
		struct npu_fence *f = NULL;

		struct vnpu_cmd_compute cc;
		struct vnpu_op_info info;
		uint64_t want;

		bad_cases[i].mutate(&c, npu_buffer_va(spare.b));
		/*
		 * Where the device's checker finds the fault; the one command
		 * it passes holds bad per-channel values, which the engine
		 * reports at their quant_va once it has read them.
		 */
		want = vnpu_op_check(&c, sizeof(c), &cc, &info) ? info.err_off :
		       VNPU_CMD_TENSOR_OFF(1, quant_va);
		ret = npu_cmdbuf_create(ctx, 2 * sizeof(c), &cb);
		if (!ret)
			ret = npu_cmdbuf_raw(cb, &c, sizeof(c));
		/* A good command after the bad one must not run. */
		if (!ret)
			ret = npu_cmdbuf_raw(cb, &good, sizeof(good));
		if (!ret)
			ret = npu_submit(queue, cb, bufs, 4, NULL, 0, &f);
		if (!ret)
			ret = npu_fence_wait(f, npu_deadline_ns(30000000000ll));
		if (!ret)
			ret = npu_fence_status(f, &st);
		if (ret)
			tap(0, "malformed: %s # %s", bad_cases[i].name, npu_strerror(ret));
		else if (!tap(st.state == NPU_JOB_CMD_ERROR && st.fault_va == want &&
			      npu_fence_error(f) == NPU_ERR_JOB_CMD_ERROR,
			      "malformed: %s -> %s at offset %llu", bad_cases[i].name,
			      npu_job_state_name(st.state),
			      (unsigned long long)st.fault_va))
			printf("#   want cmd-error at offset %llu\n", (unsigned long long)want);
		npu_fence_free(f);
		npu_cmdbuf_destroy(cb);
	}
	/* The context still works after all of that. */
	memset(y.map, 0, y.span);
	ret = npu_op_run(op, queue, npu_deadline_ns(30000000000ll), NULL);
	tap(!ret, "context still runs a good op after %zu command errors: %s",
	    sizeof(bad_cases) / sizeof(bad_cases[0]), npu_strerror(ret));
	npu_op_free(op);
	npu_cmdbuf_destroy(host);
	free_tensor(&a);
	free_tensor(&b);
	free_tensor(&y);
	free_tensor(&spare);
}

int main(void)
{
	struct npu_device *dev = NULL;
	size_t i;
	int ret;

	ret = npu_device_open(0, &dev);
	if (!ret)
		ret = npu_context_create(dev, &ctx);
	if (!ret)
		ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &queue);
	if (ret) {
		printf("1..0 # SKIP no vnpu device: %s\n", npu_strerror(ret));
		return 1;
	}
	printf("# oracle: the reference implementation (vnpu_ref_run(), ops/vnpu_ref.c) on the guest CPU, not libnpu's CPU path (the device's own engine)\n");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	run_copy_transpose(37, 53, 0, NPU_DTYPE_FP32);
	run_copy_transpose(61, 29, 3, NPU_DTYPE_BF16);
	run_copy_transpose(1024, 1536, 1, NPU_DTYPE_FP32);
	run_big_gemm();
	run_bad_cases();
	printf("1..%d\n", ntest);
	npu_queue_destroy(queue);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return nfail ? 1 : 0;
}
