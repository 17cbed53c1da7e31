// SPDX-License-Identifier: MIT
/*
 * The op API's CPU path (npu_op_run_cpu(): the device's compute engine
 * over host memory, src/npu_ops_cpu.c) against the reference it replaced
 * as the fallback (npu__op_run_host(op, true, NULL)), on every op kind: integer
 * outputs must be the same bytes, float ones within the tolerances of
 * Documentation/ops.rst.  The ops run on host tensors, as the graph
 * runtime's CPU segments and `npu-run --cpu` run them.
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
	bool positive;		/* float inputs in (0, 2] rather than [-1, 1] */
};

#define T(...)	{ __VA_ARGS__, .chan_axis = -1 }

struct tcase {
	const char *name;
	struct npu_op_params p;
	size_t nin;
	struct tdesc in[3];
	struct tdesc out;
	double tol;		/* relative float tolerance */
};

static uint32_t rng = 12345;

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

static struct npu_tensor *make(const struct tdesc *d, void **mem)
{
	struct npu_tensor *t = tensor(d->dt, d->rank, d->dims);
	uint64_t span, i;

	if (d->chan_axis >= 0) {
		uint32_t n = d->dims[d->chan_axis];
		float *s = calloc(n, sizeof(*s));
		int32_t *z = calloc(n, sizeof(*z));

		assert_non_null(s);
		assert_non_null(z);
		for (i = 0; i < n; i++) {
			s[i] = rndf(0.002f, 0.02f);
			/* Weights are symmetric (ONNX's per-channel int8). */
			z[i] = d->dt == NPU_DTYPE_UINT8 ? 120 + (int32_t)(rnd() % 16) : 0;
		}
		assert_int_equal(npu_tensor_set_quant_channel(t, (uint32_t)d->chan_axis,
							      s, z), 0);
		free(s);
		free(z);
	} else if (d->scale > 0) {
		assert_int_equal(npu_tensor_set_quant(t, d->scale, d->zp), 0);
	}
	assert_int_equal(npu_tensor_span(t, &span), 0);
	*mem = malloc(span);
	assert_non_null(*mem);
	switch (d->dt) {
	case NPU_DTYPE_FP32:
		for (i = 0; i < span / 4; i++)
			((float *)*mem)[i] = d->positive ? rndf(0.01f, 2.0f) : rndf(-1.0f, 1.0f);
		break;
	case NPU_DTYPE_INT32:
		/* Biases, and the operands of wrapping integer arithmetic. */
		for (i = 0; i < span / 4; i++)
			((int32_t *)*mem)[i] = (int32_t)(rnd() % 2001) - 1000;
		break;
	default:
		for (i = 0; i < span; i++)
			((uint8_t *)*mem)[i] = (uint8_t)rnd();
		break;
	}
	assert_int_equal(npu_tensor_bind_host(t, *mem, span), 0);
	return t;
}

static void compare(const struct tcase *c, const void *ref, const void *fast,
		    uint64_t span)
{
	uint64_t i, bad = 0;
	double worst = 0;

	if (c->out.dt != NPU_DTYPE_FP32) {
		if (memcmp(ref, fast, span))
			fail_msg("%s: the CPU path's bytes differ from the reference's",
				 c->name);
		return;
	}
	for (i = 0; i < span / 4; i++) {
		double r = ((const float *)ref)[i], f = ((const float *)fast)[i];
		double err;

		if (isnan(r) || isnan(f)) {
			bad += isnan(r) != isnan(f);
			continue;
		}
		if (isinf(r) || isinf(f)) {
			bad += r != f;
			continue;
		}
		err = fabs(r - f) / (1.0 + fabs(r));
		if (err > worst)
			worst = err;
		bad += err > c->tol;
	}
	if (bad)
		fail_msg("%s: %llu of %llu elements beyond %g (worst %g)", c->name,
			 (unsigned long long)bad, (unsigned long long)(span / 4), c->tol,
			 worst);
}

static void run_case(const struct tcase *c)
{
	struct npu_tensor *in[3] = { NULL, NULL, NULL }, *out;
	void *mem[3] = { NULL, NULL, NULL }, *omem, *ref, *init;
	struct npu_op_params p = c->p;
	struct npu_op *op;
	uint64_t span;
	size_t i;
	int ret;

	/* The table leaves the ABI size out; every case is this version's. */
	p.size = sizeof(p);
	for (i = 0; i < c->nin; i++)
		if (c->in[i].rank)
			in[i] = make(&c->in[i], &mem[i]);
	out = make(&c->out, &omem);
	assert_int_equal(npu_tensor_span(out, &span), 0);
	ret = npu_op_create(&p, (const struct npu_tensor *const *)in, c->nin, out, &op);
	if (ret)
		fail_msg("%s: npu_op_create: %d", c->name, ret);
	/* Both runs start from the same output bytes (COPY may keep some). */
	init = malloc(span);
	ref = malloc(span);
	assert_non_null(init);
	assert_non_null(ref);
	memcpy(init, omem, span);
	assert_int_equal(npu__op_run_host(op, true, NULL), 0);
	memcpy(ref, omem, span);
	memcpy(omem, init, span);
	assert_int_equal(npu_op_run_cpu(op), 0);
	compare(c, ref, omem, span);
	npu_op_free(op);
	for (i = 0; i < 3; i++) {
		npu_tensor_free(in[i]);
		free(mem[i]);
	}
	npu_tensor_free(out);
	free(omem);
	free(ref);
	free(init);
}

static void run_cases(const struct tcase *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		run_case(&c[i]);
}

#define F32(r, ...)	T(.dt = NPU_DTYPE_FP32, .rank = (r), .dims = { __VA_ARGS__ })
#define F32P(r, ...)	T(.dt = NPU_DTYPE_FP32, .rank = (r), .dims = { __VA_ARGS__ }, \
			  .positive = true)
#define I32(r, ...)	T(.dt = NPU_DTYPE_INT32, .rank = (r), .dims = { __VA_ARGS__ })
#define Q(dt_, s, z, r, ...) \
	T(.dt = NPU_DTYPE_##dt_, .rank = (r), .dims = { __VA_ARGS__ }, .scale = (s), .zp = (z))
#define QC(dt_, ax, r, ...) \
	{ .dt = NPU_DTYPE_##dt_, .rank = (r), .dims = { __VA_ARGS__ }, .chan_axis = (ax) }
#define NONE	{ .rank = 0 }

static void test_gemm(void **state)
{
	static const struct tcase c[] = {
		{ "gemm fp32 + bias, relu",
		  { .kind = NPU_OP_GEMM, .act = NPU_ACT_RELU }, 3,
		  { F32(2, 67, 45), F32(2, 45, 39), F32(1, 39) }, F32(2, 67, 39), 1e-5 },
		{ "gemm fp32 batched, B transposed",
		  { .kind = NPU_OP_GEMM, .gemm.flags = NPU_GEMM_TRANS_B }, 2,
		  { F32(3, 2, 17, 130), F32(2, 29, 130) }, F32(3, 2, 17, 29), 1e-5 },
		{ "gemm uint8 x int8 per channel -> uint8",
		  { .kind = NPU_OP_GEMM }, 3,
		  { Q(UINT8, 0.02f, 128, 2, 33, 70), QC(INT8, 1, 2, 70, 41), I32(1, 41) },
		  Q(UINT8, 0.05f, 100, 2, 33, 41), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_conv(void **state)
{
	static const struct tcase c[] = {
		{ "conv2d fp32 3x3 stride 2, relu6",
		  { .kind = NPU_OP_CONV2D, .act = NPU_ACT_RELU6,
		    .conv = { .stride = { 2, 2 }, .dilation = { 1, 1 },
			      .pad = { 1, 1, 1, 1 }, .groups = 1 } }, 3,
		  { F32(4, 1, 13, 11, 8), F32(4, 16, 3, 3, 8), F32(1, 16) },
		  F32(4, 1, 7, 6, 16), 1e-5 },
		{ "conv2d fp32 depthwise 5x5",
		  { .kind = NPU_OP_CONV2D,
		    .conv = { .stride = { 1, 1 }, .dilation = { 1, 1 },
			      .pad = { 2, 2, 2, 2 }, .groups = 24 } }, 2,
		  { F32(4, 1, 9, 10, 24), F32(4, 24, 5, 5, 1) },
		  F32(4, 1, 9, 10, 24), 1e-5 },
		{ "conv2d int8 per channel, dilated",
		  { .kind = NPU_OP_CONV2D,
		    .conv = { .stride = { 1, 1 }, .dilation = { 2, 2 },
			      .pad = { 0, 0, 0, 0 }, .groups = 1 } }, 3,
		  { Q(INT8, 0.03f, -5, 4, 2, 12, 12, 6), QC(INT8, 0, 4, 10, 3, 3, 6), I32(1, 10) },
		  Q(INT8, 0.1f, 3, 4, 2, 8, 8, 10), 0 },
		{ "conv_transpose fp32 stride 2",
		  { .kind = NPU_OP_CONV_TRANSPOSE,
		    .conv_transpose = { .stride = { 2, 2 }, .dilation = { 1, 1 },
					.groups = 1 } }, 2,
		  { F32(4, 1, 5, 4, 6), F32(4, 6, 2, 2, 5) }, F32(4, 1, 10, 8, 5), 1e-5 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_pool(void **state)
{
	static const struct tcase c[] = {
		{ "pool2d max fp32 3x3 stride 2",
		  { .kind = NPU_OP_POOL2D,
		    .pool = { .kind = NPU_POOL_MAX, .kernel = { 3, 3 }, .stride = { 2, 2 },
			      .pad = { 1, 1, 1, 1 } } }, 1,
		  { F32(4, 2, 11, 9, 5) }, F32(4, 2, 6, 5, 5), 0 },
		{ "pool2d avg uint8",
		  { .kind = NPU_OP_POOL2D,
		    .pool = { .kind = NPU_POOL_AVG, .kernel = { 2, 2 }, .stride = { 2, 2 } } }, 1,
		  { Q(UINT8, 0.1f, 10, 4, 1, 8, 8, 7) }, Q(UINT8, 0.1f, 10, 4, 1, 4, 4, 7), 0 },
		{ "pool2d global average fp32",
		  { .kind = NPU_OP_POOL2D,
		    .pool = { .kind = NPU_POOL_GLOBAL_AVG } }, 1,
		  { F32(4, 2, 7, 6, 33) }, F32(4, 2, 1, 1, 33), 1e-5 },
		{ "pool3d max fp32 (CPU only)",
		  { .kind = NPU_OP_POOL3D,
		    .pool3d = { .kind = NPU_POOL_MAX, .kernel = { 2, 2, 2 },
				.stride = { 2, 2, 2 } } }, 1,
		  { F32(5, 1, 4, 6, 6, 3) }, F32(5, 1, 2, 3, 3, 3), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_eltwise(void **state)
{
	static const struct tcase c[] = {
		{ "eltwise add fp32 broadcast, sigmoid",
		  { .kind = NPU_OP_ELTWISE, .act = NPU_ACT_SIGMOID,
		    .eltwise.kind = NPU_ELTWISE_ADD }, 2,
		  { F32(3, 2, 5, 37), F32(1, 37) }, F32(3, 2, 5, 37), 1e-6 },
		{ "eltwise mul fp32",
		  { .kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL }, 2,
		  { F32(2, 19, 23), F32(2, 19, 1) }, F32(2, 19, 23), 1e-6 },
		{ "eltwise div fp32",
		  { .kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_DIV }, 2,
		  { F32(2, 7, 31), F32P(2, 7, 31) }, F32(2, 7, 31), 1e-6 },
		{ "eltwise pow fp32",
		  { .kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_POW }, 2,
		  { F32P(2, 7, 31), F32(1, 1) }, F32(2, 7, 31), 1e-6 },
		{ "eltwise max int8 quantized",
		  { .kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MAX }, 2,
		  { Q(INT8, 0.05f, 0, 2, 9, 17), Q(INT8, 0.07f, 4, 2, 9, 17) },
		  Q(INT8, 0.06f, -2, 2, 9, 17), 0 },
		{ "eltwise sub int32 wrapping (CPU only)",
		  { .kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_SUB }, 2,
		  { I32(2, 6, 7), I32(2, 6, 7) }, I32(2, 6, 7), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_activation(void **state)
{
	struct tcase c = {
		"activation", { .kind = NPU_OP_ACTIVATION }, 1,
		{ F32(2, 5, 97) }, F32(2, 5, 97), 1e-6,
	};
	int a;

	(void)state;
	for (a = NPU_ACT_RELU; a <= NPU_ACT_NEG; a++) {
		memset(&c.p, 0, sizeof(c.p));
		c.p.kind = NPU_OP_ACTIVATION;
		c.p.act = (enum npu_activation)a;
		if (a == NPU_ACT_LEAKY_RELU)
			c.p.act_alpha = 0.1f;
		if (a == NPU_ACT_CLIP) {
			c.p.clip.min = -0.5f;
			c.p.clip.max = 0.25f;
		}
		if (a == NPU_ACT_HARD_SIGMOID) {
			c.p.act_alpha = 0.2f;
			c.p.act_beta = 0.5f;
		}
		c.in[0].positive = a == NPU_ACT_SQRT || a == NPU_ACT_LOG ||
				   a == NPU_ACT_RECIPROCAL;
		run_case(&c);
	}
	/* With a per-channel scale and shift (a folded BatchNormalization). */
	memset(&c.p, 0, sizeof(c.p));
	c.p.kind = NPU_OP_ACTIVATION;
	c.p.act = NPU_ACT_RELU;
	c.nin = 2;
	c.in[0] = (struct tdesc)F32(4, 1, 6, 5, 12);
	c.in[1] = (struct tdesc)F32(2, 2, 12);
	c.out = (struct tdesc)F32(4, 1, 6, 5, 12);
	run_case(&c);
}

static void test_norm(void **state)
{
	static const struct tcase c[] = {
		{ "softmax fp32 last axis",
		  { .kind = NPU_OP_SOFTMAX, .softmax.axis = 1 }, 1,
		  { F32(2, 4, 133) }, F32(2, 4, 133), 1e-5 },
		{ "softmax fp32 middle axis",
		  { .kind = NPU_OP_SOFTMAX, .softmax.axis = 1 }, 1,
		  { F32(3, 3, 25, 4) }, F32(3, 3, 25, 4), 1e-5 },
		{ "layernorm fp32 with gamma and beta",
		  { .kind = NPU_OP_LAYERNORM, .layernorm = { .axis = 1, .epsilon = 1e-5f } }, 3,
		  { F32(2, 6, 48), F32(1, 48), F32(1, 48) }, F32(2, 6, 48), 1e-5 },
		{ "reduce mean over H and W",
		  { .kind = NPU_OP_REDUCE,
		    .reduce = { .kind = NPU_REDUCE_MEAN, .axes = 0x6 } }, 1,
		  { F32(4, 2, 5, 6, 3) }, F32(4, 2, 1, 1, 3), 1e-5 },
		{ "reduce max over C",
		  { .kind = NPU_OP_REDUCE,
		    .reduce = { .kind = NPU_REDUCE_MAX, .axes = 0x8 } }, 1,
		  { F32(4, 2, 5, 6, 3) }, F32(4, 2, 5, 6, 1), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_quant(void **state)
{
	static const struct tcase c[] = {
		{ "quantize fp32 -> int8", { .kind = NPU_OP_QUANTIZE }, 1,
		  { F32(2, 9, 41) }, Q(INT8, 0.01f, 3, 2, 9, 41), 0 },
		{ "dequantize uint8 -> fp32", { .kind = NPU_OP_DEQUANTIZE }, 1,
		  { Q(UINT8, 0.02f, 128, 2, 9, 41) }, F32(2, 9, 41), 0 },
		{ "requantize int8 -> uint8", { .kind = NPU_OP_REQUANTIZE }, 1,
		  { Q(INT8, 0.02f, -3, 2, 9, 41) }, Q(UINT8, 0.03f, 120, 2, 9, 41), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_move(void **state)
{
	static const struct tcase c[] = {
		{ "copy fp32 -> uint8 padded, constant border",
		  { .kind = NPU_OP_COPY,
		    .copy = { .border = NPU_COPY_BORDER_CONSTANT, .fill = 0.5f,
			      .offset = { 0, 2, 1, 0 } } }, 1,
		  { F32(4, 1, 6, 7, 3) }, Q(UINT8, 0.01f, 20, 4, 1, 10, 9, 3), 0 },
		{ "copy fp32 reflect, reversed",
		  { .kind = NPU_OP_COPY,
		    .copy = { .border = NPU_COPY_BORDER_REFLECT, .offset = { 0, 1, 1, 0 },
			      .reverse = 0x4 } }, 1,
		  { F32(4, 1, 5, 5, 2) }, F32(4, 1, 7, 7, 2), 0 },
		{ "resize fp32 linear half-pixel",
		  { .kind = NPU_OP_RESIZE,
		    .resize = { .mode = NPU_RESIZE_LINEAR, .coord = NPU_RESIZE_HALF_PIXEL } }, 1,
		  { F32(4, 1, 5, 6, 3) }, F32(4, 1, 10, 12, 3), 1e-6 },
		{ "resize fp32 cubic align-corners",
		  { .kind = NPU_OP_RESIZE,
		    .resize = { .mode = NPU_RESIZE_CUBIC, .coord = NPU_RESIZE_ALIGN_CORNERS,
				.cubic_a = -0.75f } }, 1,
		  { F32(4, 1, 4, 4, 2) }, F32(4, 1, 9, 7, 2), 1e-6 },
		{ "resize uint8 nearest",
		  { .kind = NPU_OP_RESIZE, .resize = { .mode = NPU_RESIZE_NEAREST } }, 1,
		  { Q(UINT8, 0.1f, 5, 4, 1, 3, 5, 4) }, Q(UINT8, 0.1f, 5, 4, 1, 6, 10, 4), 0 },
	};

	(void)state;
	run_cases(c, sizeof(c) / sizeof(c[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_eltwise),
		cmocka_unit_test(test_activation),
		cmocka_unit_test(test_norm),
		cmocka_unit_test(test_quant),
		cmocka_unit_test(test_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
