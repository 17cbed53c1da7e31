// SPDX-License-Identifier: MIT
/*
 * The graph API on the host (no device: everything on the CPU fallback):
 * results against straightforward C written here, the compiler's folds,
 * fusions and arena reuse as the profile reports them, rebinding without
 * recompiling, and the errors for broken graphs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/resource.h>

#include "npu/npu.h"

static uint32_t val(struct npu_graph *g, const char *name, enum npu_dtype dt,
		    uint32_t rank, const uint32_t *dims, uint32_t flags,
		    const void *data)
{
	struct npu_value_desc d = { .size = sizeof(d), .name = name, .dtype = dt,
				    .rank = rank, .flags = flags, .data = data };
	uint32_t id;

	memcpy(d.dims, dims, 4ull * rank);
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

static uint32_t node(struct npu_graph *g, const char *name,
		     const struct npu_op_params *p, uint32_t nin,
		     const uint32_t *in, uint32_t out)
{
	struct npu_node_desc d = { .size = sizeof(d), .name = name,
				   .kind = NPU_NODE_OP, .op = p, .num_inputs = nin,
				   .inputs = in, .output = out };
	uint32_t id;

	assert_int_equal(npu_graph_add_node(g, &d, &id), 0);
	return id;
}

static float frand(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = frand(&seed);
}

static void assert_close(const float *got, const float *want, size_t n, float tol)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i]))))
			fail_msg("element %zu: got %g, want %g", i, got[i], want[i]);
	}
}

static enum npu_node_where where(struct npu_runtime *rt, uint32_t n)
{
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

	assert_int_equal(npu_runtime_node_profile(rt, n, &p), 0);
	return p.where;
}

/*
 * MLP: x[2,8] -> MatMul W1[8,16] -> Add b1 -> Relu -> MatMul W2[16,4]
 * -> Add b2 -> Softmax.  The Adds become GEMM biases, the Relu the first
 * GEMM's activation.
 */
static void test_mlp(void **state)
{
	static const uint32_t dx[2] = { 2, 8 }, dw1[2] = { 8, 16 }, db1[1] = { 16 },
		dh[2] = { 2, 16 }, dw2[2] = { 16, 4 }, db2[2] = { 1, 4 }, dy[2] = { 2, 4 };
	float w1[128], b1[16], w2[64], b2[4], x[16], y[8], want[8], h[32];
	struct npu_op_params gemm = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		relu = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
		smax = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_SOFTMAX, .softmax.axis = 1 };
	uint32_t vx, vw1, vb1, vh0, vh1, vh2, vw2, vb2, vz0, vz1, vy, n[6];
	struct npu_runtime *rt;
	struct npu_graph *g;
	size_t segs, dsegs;
	int i, j, k;

	(void)state;
	fill(w1, 128, 1);
	fill(b1, 16, 2);
	fill(w2, 64, 3);
	fill(b2, 4, 4);
	fill(x, 16, 5);
	for (i = 0; i < 2; i++) {
		float s = 0, mx = -INFINITY;

		for (j = 0; j < 16; j++) {
			float a = b1[j];

			for (k = 0; k < 8; k++)
				a += x[i * 8 + k] * w1[k * 16 + j];
			h[i * 16 + j] = a > 0 ? a : 0;
		}
		for (j = 0; j < 4; j++) {
			float a = b2[j];

			for (k = 0; k < 16; k++)
				a += h[i * 16 + k] * w2[k * 4 + j];
			want[i * 4 + j] = a;
			mx = a > mx ? a : mx;
		}
		for (j = 0; j < 4; j++)
			s += want[i * 4 + j] = expf(want[i * 4 + j] - mx);
		for (j = 0; j < 4; j++)
			want[i * 4 + j] /= s;
	}

	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, dx, NPU_VALUE_INPUT, NULL);
	vw1 = val(g, "w1", NPU_DTYPE_FP32, 2, dw1, 0, w1);
	vb1 = val(g, "b1", NPU_DTYPE_FP32, 1, db1, 0, b1);
	vh0 = val(g, "h0", NPU_DTYPE_FP32, 2, dh, 0, NULL);
	vh1 = val(g, "h1", NPU_DTYPE_FP32, 2, dh, 0, NULL);
	vh2 = val(g, "h2", NPU_DTYPE_FP32, 2, dh, 0, NULL);
	vw2 = val(g, "w2", NPU_DTYPE_FP32, 2, dw2, 0, w2);
	vb2 = val(g, "b2", NPU_DTYPE_FP32, 2, db2, 0, b2);
	vz0 = val(g, "z0", NPU_DTYPE_FP32, 2, dy, 0, NULL);
	vz1 = val(g, "z1", NPU_DTYPE_FP32, 2, dy, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, dy, NPU_VALUE_OUTPUT, NULL);
	n[0] = node(g, "mm1", &gemm, 2, (uint32_t[]){ vx, vw1 }, vh0);
	n[1] = node(g, "add1", &add, 2, (uint32_t[]){ vh0, vb1 }, vh1);
	n[2] = node(g, "relu", &relu, 1, &vh1, vh2);
	n[3] = node(g, "mm2", &gemm, 2, (uint32_t[]){ vh2, vw2 }, vz0);
	n[4] = node(g, "add2", &add, 2, (uint32_t[]){ vb2, vz0 }, vz1);
	n[5] = node(g, "softmax", &smax, 1, &vz1, vy);
	/* a GEMM is device-capable from shapes alone */
	assert_int_equal(npu_graph_node_supported(g, n[0], NULL, 0, NULL), 1);

	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, want, 8, 1e-5f);

	assert_int_equal(where(rt, n[0]), NPU_WHERE_CPU);
	assert_int_equal(where(rt, n[1]), NPU_WHERE_FUSED);
	assert_int_equal(where(rt, n[2]), NPU_WHERE_FUSED);
	assert_int_equal(where(rt, n[4]), NPU_WHERE_FUSED);
	assert_int_equal(where(rt, n[5]), NPU_WHERE_CPU);
	{
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		npu_runtime_node_profile(rt, n[2], &p);
		assert_int_equal(p.fused_into, n[0]);
		npu_runtime_node_profile(rt, n[0], &p);
		assert_int_equal(p.macs, 2 * 16 * 8);
		assert_string_equal(p.op, "GEMM");
	}
	/* three ops left, one CPU segment */
	segs = npu_runtime_num_segments(rt, &dsegs);
	assert_int_equal(segs, 1);
	assert_int_equal(dsegs, 0);
	/* x and h0 are dead when z0 and y live: the arena reuses them */
	assert_true(npu_runtime_arena_bytes(rt) < (16 + 32 + 8 + 8) * 4);
	assert_int_equal(npu_runtime_static_bytes(rt) >= (128 + 16 + 64 + 4) * 4, 1);

	/* rebinding: another input and output, same runtime */
	{
		float x2[16], y2[8];

		memcpy(x2, x, sizeof(x2));
		memset(y2, 0, sizeof(y2));
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x2, y2 }), 0);
		assert_int_equal(npu_runtime_run_async(rt, NULL), 0);
		assert_int_equal(npu_runtime_wait(rt, NPU_TIMEOUT_INFINITE), 0);
		assert_close(y2, want, 8, 1e-5f);
	}
	/* an unknown id binds nothing */
	assert_int_equal(npu_runtime_setup(rt, 1, (uint32_t[]){ vh0 }, (void *[]){ x }),
			 -EINVAL);
	npu_runtime_free(rt);
}

/*
 * NCHW convolution with a BatchNormalization after it, folded into the
 * weights and bias, and a RESHAPE that costs nothing.
 */
static void test_conv_bn(void **state)
{
	enum { N = 1, C = 3, H = 6, W = 5, CO = 4, K = 3 };
	static const uint32_t dx[4] = { N, C, H, W }, dw[4] = { CO, C, K, K },
		dc[1] = { CO }, dy[4] = { N, CO, H, W }, dr[2] = { CO, H * W };
	float x[N * C * H * W], w[CO * C * K * K], sc[CO], bi[CO], mean[CO], var[CO];
	float y[CO * H * W], want[CO * H * W];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D,
		.conv = { .stride = { 1, 1 }, .dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 },
			  .groups = 1 } };
	struct npu_node_desc bn = { .size = sizeof(struct npu_node_desc),
		.name = "bn", .kind = NPU_NODE_BATCHNORM,
				    .epsilon = 1e-5f, .num_inputs = 5 };
	struct npu_node_desc rs = { .size = sizeof(struct npu_node_desc),
		.name = "flat", .kind = NPU_NODE_RESHAPE,
				    .num_inputs = 1 };
	uint32_t vx, vw, vs, vb, vm, vv, vc, vbn, vy, ncv, nbn, nrs, in[5];
	struct npu_node_desc cd = { .size = sizeof(struct npu_node_desc),
		.name = "conv", .kind = NPU_NODE_OP,
				    .flags = NPU_NODE_NCHW, .num_inputs = 2 };
	struct npu_runtime *rt;
	struct npu_graph *g;
	int co, ci, oy, ox, ky, kx, i;

	(void)state;
	fill(x, sizeof(x) / 4, 11);
	fill(w, sizeof(w) / 4, 12);
	fill(sc, CO, 13);
	fill(bi, CO, 14);
	fill(mean, CO, 15);
	fill(var, CO, 16);
	for (i = 0; i < CO; i++)
		var[i] = fabsf(var[i]) + 0.5f;
	for (co = 0; co < CO; co++) {
		float s = sc[co] / sqrtf(var[co] + 1e-5f);

		for (oy = 0; oy < H; oy++) {
			for (ox = 0; ox < W; ox++) {
				float a = 0;

				for (ci = 0; ci < C; ci++)
					for (ky = 0; ky < K; ky++)
						for (kx = 0; kx < K; kx++) {
							int iy = oy + ky - 1, ix = ox + kx - 1;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							a += x[(ci * H + iy) * W + ix] *
							     w[((co * C + ci) * K + ky) * K + kx];
						}
				want[(co * H + oy) * W + ox] = (a - mean[co]) * s + bi[co];
			}
		}
	}
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	vs = val(g, "scale", NPU_DTYPE_FP32, 1, dc, 0, sc);
	vb = val(g, "bias", NPU_DTYPE_FP32, 1, dc, 0, bi);
	vm = val(g, "mean", NPU_DTYPE_FP32, 1, dc, 0, mean);
	vv = val(g, "var", NPU_DTYPE_FP32, 1, dc, 0, var);
	vc = val(g, "c", NPU_DTYPE_FP32, 4, dy, 0, NULL);
	vbn = val(g, "b", NPU_DTYPE_FP32, 4, dy, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, dr, NPU_VALUE_OUTPUT, NULL);
	cd.op = &conv;
	cd.inputs = (uint32_t[]){ vx, vw };
	cd.output = vc;
	assert_int_equal(npu_graph_add_node(g, &cd, &ncv), 0);
	in[0] = vc; in[1] = vs; in[2] = vb; in[3] = vm; in[4] = vv;
	bn.inputs = in;
	bn.output = vbn;
	assert_int_equal(npu_graph_add_node(g, &bn, &nbn), 0);
	rs.inputs = &vbn;
	rs.output = vy;
	assert_int_equal(npu_graph_add_node(g, &rs, &nrs), 0);
	assert_int_equal(npu_graph_node_supported(g, ncv, NULL, 0, NULL), 1);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, want, CO * H * W, 1e-4f);
	assert_int_equal(where(rt, ncv), NPU_WHERE_CPU);
	assert_int_equal(where(rt, nbn), NPU_WHERE_FUSED);
	assert_int_equal(where(rt, nrs), NPU_WHERE_ELIDED);
	npu_runtime_free(rt);
}

/*
 * x * a + b after an NCHW convolution, a a constant scalar and b one
 * value per output channel (PP-OCRv4's learnable affine blocks): both
 * fold into the conv's weights and bias.  With the conv's result also a
 * graph output, or a MUL by a per-element constant, nothing folds.
 */
static void conv_affine_case(bool conv_out_read, bool per_element)
{
	enum { C = 2, H = 4, W = 5, CO = 3 };
	static const uint32_t dx[4] = { 1, C, H, W }, dw[4] = { CO, C, 1, 1 },
		d1[1] = { 1 }, db[4] = { 1, CO, 1, 1 }, dy[4] = { 1, CO, H, W };
	float x[C * H * W], w[CO * C], a = 0.75f, b[CO] = { 0.5f, -1.0f, 2.0f };
	float ae[CO * H * W], conv_y[CO * H * W], y[CO * H * W], want[CO * H * W];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D,
		.conv = { .stride = { 1, 1 }, .dilation = { 1, 1 }, .groups = 1 } },
		mul = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_node_desc nd = { .size = sizeof(struct npu_node_desc), .kind = NPU_NODE_OP,
				    .num_inputs = 2 };
	uint32_t vx, vw, va, vb, vc, vm, vy, ncv, nmul, nadd;
	struct npu_runtime *rt;
	struct npu_graph *g;
	int co, ci, p;

	fill(x, C * H * W, 21);
	fill(w, CO * C, 22);
	fill(ae, CO * H * W, 23);
	for (co = 0; co < CO; co++)
		for (p = 0; p < H * W; p++) {
			float acc = 0.0f;

			for (ci = 0; ci < C; ci++)
				acc += x[ci * H * W + p] * w[co * C + ci];
			conv_y[co * H * W + p] = acc;
			want[co * H * W + p] = acc * (per_element ? ae[co * H * W + p] : a) + b[co];
		}
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	va = per_element ? val(g, "a", NPU_DTYPE_FP32, 4, dy, 0, ae) :
			   val(g, "a", NPU_DTYPE_FP32, 1, d1, 0, &a);
	vb = val(g, "b", NPU_DTYPE_FP32, 4, db, 0, b);
	vc = val(g, "c", NPU_DTYPE_FP32, 4, dy, conv_out_read ? NPU_VALUE_OUTPUT : 0, NULL);
	vm = val(g, "m", NPU_DTYPE_FP32, 4, dy, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, dy, NPU_VALUE_OUTPUT, NULL);
	nd.name = "conv";
	nd.flags = NPU_NODE_NCHW;
	nd.op = &conv;
	nd.inputs = (uint32_t[]){ vx, vw };
	nd.output = vc;
	assert_int_equal(npu_graph_add_node(g, &nd, &ncv), 0);
	nd.name = "mul";
	nd.flags = 0;
	nd.op = &mul;
	nd.inputs = (uint32_t[]){ va, vc };
	nd.output = vm;
	assert_int_equal(npu_graph_add_node(g, &nd, &nmul), 0);
	nd.name = "add";
	nd.op = &add;
	nd.inputs = (uint32_t[]){ vm, vb };
	nd.output = vy;
	assert_int_equal(npu_graph_add_node(g, &nd, &nadd), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	/* c is bound only when it is an output */
	assert_int_equal(npu_runtime_setup(rt, conv_out_read ? 3 : 2, (uint32_t[]){ vx, vy, vc },
					   (void *[]){ x, y, ae }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, want, CO * H * W, 1e-5f);
	if (conv_out_read)
		assert_close(ae, conv_y, CO * H * W, 1e-5f);
	assert_int_equal(where(rt, ncv), NPU_WHERE_CPU);
	if (conv_out_read || per_element) {
		assert_int_equal(where(rt, nmul), NPU_WHERE_CPU);
	} else {
		assert_int_equal(where(rt, nmul), NPU_WHERE_FUSED);
		assert_int_equal(where(rt, nadd), NPU_WHERE_FUSED);
	}
	npu_runtime_free(rt);
}

static void test_conv_affine_fold(void **state)
{
	(void)state;
	conv_affine_case(false, false);
	conv_affine_case(true, false);
	conv_affine_case(false, true);
}

/* Constant subgraphs fold; a divide by a constant becomes a multiply. */
static void test_fold_and_div(void **state)
{
	static const uint32_t d4[1] = { 4 };
	float a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 }, two[4] = { 2, 2, 2, 2 };
	float x[4] = { 8, -6, 4, 2 }, y[4];
	struct npu_op_params add = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_node_desc div = { .size = sizeof(struct npu_node_desc),
		.name = "div", .kind = NPU_NODE_DIV, .num_inputs = 2 };
	uint32_t va, vb, vk, vx, vt, vy, vtwo, nk, nd, na;
	struct npu_runtime *rt;
	struct npu_graph *g;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	va = val(g, "a", NPU_DTYPE_FP32, 1, d4, 0, a);
	vb = val(g, "b", NPU_DTYPE_FP32, 1, d4, 0, b);
	vtwo = val(g, "two", NPU_DTYPE_FP32, 1, d4, 0, two);
	vk = val(g, "k", NPU_DTYPE_FP32, 1, d4, 0, NULL);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d4, NPU_VALUE_INPUT, NULL);
	vt = val(g, "t", NPU_DTYPE_FP32, 1, d4, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d4, NPU_VALUE_OUTPUT, NULL);
	nk = node(g, "k = a + b", &add, 2, (uint32_t[]){ va, vb }, vk);
	div.inputs = (uint32_t[]){ vx, vtwo };
	div.output = vt;
	assert_int_equal(npu_graph_add_node(g, &div, &nd), 0);
	na = node(g, "y = t + k", &add, 2, (uint32_t[]){ vt, vk }, vy);
	assert_int_equal(npu_graph_node_supported(g, nd, NULL, 0, NULL), 1);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, (float[]){ 15, 19, 35, 45 }, 4, 0);
	assert_int_equal(where(rt, nk), NPU_WHERE_FOLDED);
	assert_int_equal(where(rt, nd), NPU_WHERE_CPU);
	assert_int_equal(where(rt, na), NPU_WHERE_CPU);
	npu_runtime_free(rt);
}

/*
 * Per-channel weights and the quantization step: X (fp32) -> QUANTIZE ->
 * DEQUANTIZE -> ADD of a constant -> QUANTIZE -> integer GEMM with
 * per-column weights -> RELU keeping its quantization -> DEQUANTIZE.
 * Expected values are worked out by hand from ops.rst's formulas.
 */
static void test_quantized(void **state)
{
	static const uint32_t d14[2] = { 1, 4 }, d42[2] = { 4, 2 }, d12[2] = { 1, 2 };
	static const int8_t w[8] = { 1, -2, 2, 0, -1, 4, 3, -6 };	/* [K=4, N=2] */
	static const float ws[2] = { 0.5f, 0.25f }, bad_scale[2] = { 0.5f, -1.0f };
	float x[4] = { 1.0f, -1.0f, 0.5f, 2.0f }, one[4] = { 1, 1, 1, 1 }, y[2];
	struct npu_value_desc wd = NPU_VALUE_DESC_INIT, got = NPU_VALUE_DESC_INIT;
	struct npu_op_params q = { .size = sizeof(q), .kind = NPU_OP_QUANTIZE };
	struct npu_op_params dq = { .size = sizeof(dq), .kind = NPU_OP_DEQUANTIZE };
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_op_params gemm = { .size = sizeof(gemm), .kind = NPU_OP_GEMM };
	struct npu_op_params relu = { .size = sizeof(relu), .kind = NPU_OP_ACTIVATION,
				      .act = NPU_ACT_RELU };
	uint32_t vx, vq, vd, vone, va, vaq, vw, vg, vr, vy, nadd, naq, nrelu;
	struct npu_runtime *rt;
	struct npu_graph *g;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	/* per-channel fields are checked */
	wd.name = "w";
	wd.dtype = NPU_DTYPE_INT8;
	wd.rank = 2;
	memcpy(wd.dims, d42, sizeof(d42));
	wd.data = w;
	wd.quant_axis = 1;
	wd.num_channels = 2;
	wd.channel_scales = bad_scale;
	assert_int_equal(npu_graph_add_value(g, &wd, &vw), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "channel 1's scale"));
	wd.channel_scales = ws;
	wd.quant_axis = 0;
	assert_int_equal(npu_graph_add_value(g, &wd, &vw), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "do not fit its shape"));
	wd.quant_axis = 1;
	wd.data = NULL;
	assert_int_equal(npu_graph_add_value(g, &wd, &vw), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "static values only"));
	wd.data = w;
	assert_int_equal(npu_graph_add_value(g, &wd, &vw), 0);
	assert_int_equal(npu_graph_get_value(g, vw, &got), 0);
	assert_int_equal(got.num_channels, 2);
	assert_int_equal(got.quant_axis, 1);
	assert_true(got.channel_scales[1] == 0.25f && got.channel_zero_points[1] == 0);

	vx = val(g, "x", NPU_DTYPE_FP32, 2, d14, NPU_VALUE_INPUT, NULL);
	vone = val(g, "one", NPU_DTYPE_FP32, 2, d14, 0, one);
	vq = val(g, "xq", NPU_DTYPE_INT8, 2, d14, 0, NULL);
	vd = val(g, "xd", NPU_DTYPE_FP32, 2, d14, 0, NULL);
	va = val(g, "a", NPU_DTYPE_FP32, 2, d14, 0, NULL);
	vaq = val(g, "aq", NPU_DTYPE_INT8, 2, d14, 0, NULL);
	vg = val(g, "g", NPU_DTYPE_INT8, 2, d12, 0, NULL);
	vr = val(g, "r", NPU_DTYPE_INT8, 2, d12, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, d12, NPU_VALUE_OUTPUT, NULL);
	{
		/* quantization of the 8-bit values: xq 0.5/-1, aq 0.25/0, g and r 1/-3 */
		struct npu_value_desc v = NPU_VALUE_DESC_INIT;
		uint32_t ids[4] = { vq, vaq, vg, vr };
		float sc[4] = { 0.5f, 0.25f, 1.0f, 1.0f };
		int32_t zp[4] = { -1, 0, -3, -3 };
		size_t i;

		npu_graph_free(g);
		assert_int_equal(npu_graph_create(&g), 0);
		assert_int_equal(npu_graph_add_value(g, &wd, &vw), 0);
		vx = val(g, "x", NPU_DTYPE_FP32, 2, d14, NPU_VALUE_INPUT, NULL);
		vone = val(g, "one", NPU_DTYPE_FP32, 2, d14, 0, one);
		vd = val(g, "xd", NPU_DTYPE_FP32, 2, d14, 0, NULL);
		va = val(g, "a", NPU_DTYPE_FP32, 2, d14, 0, NULL);
		vy = val(g, "y", NPU_DTYPE_FP32, 2, d12, NPU_VALUE_OUTPUT, NULL);
		for (i = 0; i < 4; i++) {
			v.dtype = NPU_DTYPE_INT8;
			v.rank = 2;
			memcpy(v.dims, i < 2 ? d14 : d12, sizeof(d14));
			v.scale = sc[i];
			v.zero_point = zp[i];
			assert_int_equal(npu_graph_add_value(g, &v, &ids[i]), 0);
		}
		vq = ids[0];
		vaq = ids[1];
		vg = ids[2];
		vr = ids[3];
	}
	node(g, "q", &q, 1, &vx, vq);
	node(g, "dq", &dq, 1, &vq, vd);
	nadd = node(g, "add", &add, 2, (uint32_t[]){ vd, vone }, va);
	naq = node(g, "aq", &q, 1, &va, vaq);
	node(g, "gemm", &gemm, 2, (uint32_t[]){ vaq, vw }, vg);
	nrelu = node(g, "relu", &relu, 1, &vg, vr);
	node(g, "out", &dq, 1, &vr, vy);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	/*
	 * xq = rint(x / 0.5) - 1 = { 1, -3, 0, 3 }; add: (xq + 1) * 0.5 + 1 =
	 * { 2, 0, 1.5, 3 }; aq = rint(a / 0.25) = { 8, 0, 6, 12 };
	 * acc[n] = sum aq[k] * w[k][n]: { 8 + 0 - 6 + 36, -16 + 0 + 24 - 72 }
	 * = { 38, -64 }; M[n] = 0.25 * ws[n] / 1: { 0.125, 0.0625 };
	 * g = rint(acc * M) - 3 = { 4.75 -> 5, -4 } - 3 = { 2, -7 }; ReLU
	 * clamps at zy = -3: { 2, -3 }; y = (r + 3) * 1 = { 5, 0 }.
	 */
	assert_close(y, (float[]){ 5, 0 }, 2, 0);
	/* the ADD took 8-bit X and wrote 8-bit aq; ReLU is the GEMM's clamp */
	assert_int_equal(where(rt, nadd), NPU_WHERE_CPU);
	assert_int_equal(where(rt, naq), NPU_WHERE_FUSED);
	assert_int_equal(where(rt, nrelu), NPU_WHERE_FUSED);
	npu_runtime_free(rt);
}

static void test_errors(void **state)
{
	static const uint32_t d2[2] = { 2, 3 }, d3[2] = { 4, 5 };
	struct npu_op_params relu = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
		gemm = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_runtime *rt = NULL;
	struct npu_graph *g;
	uint32_t va, vb, vc, vx, vy, vs;
	float k[6] = { 0 };

	(void)state;
	/* a cycle: a = relu(b), b = relu(a) */
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	va = val(g, "a", NPU_DTYPE_FP32, 2, d2, 0, NULL);
	vb = val(g, "b", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_OUTPUT, NULL);
	node(g, "first", &relu, 1, &vb, va);
	node(g, "second", &relu, 1, &va, vb);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -ELOOP);
	assert_non_null(strstr(npu_graph_error(g), "cycle"));
	assert_null(rt);
	/* a value written twice, a static output, an input written */
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){
		.size = sizeof(struct npu_node_desc),
			.kind = NPU_NODE_OP, .op = &relu, .num_inputs = 1, .inputs = &vx,
		.output = va }, NULL), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "already written"));
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){
		.size = sizeof(struct npu_node_desc),
			.kind = NPU_NODE_OP, .op = &relu, .num_inputs = 1, .inputs = &va,
		.output = vx }, NULL), -EINVAL);
	assert_int_equal(npu_graph_add_value(g, &(struct npu_value_desc){
		.size = sizeof(struct npu_value_desc),
			.dtype = NPU_DTYPE_FP32, .rank = 1, .dims = { 6 },
		.flags = NPU_VALUE_OUTPUT, .data = k }, &vs), -EINVAL);
	/* overflowing shapes; an empty one is a value that holds no bytes */
	assert_int_equal(npu_graph_add_value(g, &(struct npu_value_desc){
		.size = sizeof(struct npu_value_desc), .dtype = NPU_DTYPE_FP32, .rank = 4,
		.dims = { UINT32_MAX, UINT32_MAX, UINT32_MAX, 4 } }, &vs), -EOVERFLOW);
	assert_int_equal(npu_graph_add_value(g, &(struct npu_value_desc){
		.size = sizeof(struct npu_value_desc),
			.dtype = NPU_DTYPE_FP32, .rank = 2, .dims = { 0, 4 } }, &vs), 0);
	npu_graph_free(g);

	/* read but never written; and shapes the op set rejects */
	assert_int_equal(npu_graph_create(&g), 0);
	va = val(g, "ghost", NPU_DTYPE_FP32, 2, d2, 0, NULL);
	vb = val(g, "out", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_OUTPUT, NULL);
	node(g, "reader", &relu, 1, &va, vb);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -ENOENT);
	assert_non_null(strstr(npu_graph_error(g), "ghost"));
	npu_graph_free(g);

	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	vc = val(g, "w", NPU_DTYPE_FP32, 2, d3, 0, (float[20]){ 0 });
	vy = val(g, "y", NPU_DTYPE_FP32, 2, d3, NPU_VALUE_OUTPUT, NULL);
	node(g, "bad-gemm", &gemm, 2, (uint32_t[]){ vx, vc }, vy);
	assert_int_equal(npu_graph_node_supported(g, 0, NULL, 0, NULL), -EINVAL);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "bad-gemm"));
	npu_graph_free(g);

	/* a divisor known only at run time: ELTWISE DIV; shapes still checked */
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	va = val(g, "d", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_OUTPUT, NULL);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){
		.size = sizeof(struct npu_node_desc),
			.name = "divide", .kind = NPU_NODE_DIV, .num_inputs = 2,
		.inputs = (uint32_t[]){ vx, va }, .output = vy }, NULL), 0);
	assert_int_equal(npu_graph_node_supported(g, 0, NULL, 0, NULL), 1);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_runtime_free(rt);
	npu_graph_free(g);
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	va = val(g, "d", NPU_DTYPE_FP32, 2, d3, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_OUTPUT, NULL);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){
		.size = sizeof(struct npu_node_desc),
			.name = "divide", .kind = NPU_NODE_DIV, .num_inputs = 2,
		.inputs = (uint32_t[]){ vx, va }, .output = vy }, NULL), 0);
	assert_int_equal(npu_graph_node_supported(g, 0, NULL, 0, NULL), -EINVAL);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "divide"));
	npu_graph_free(g);

	/* NULLs */
	assert_int_equal(npu_graph_create(NULL), -EINVAL);
	assert_int_equal(npu_graph_compile(NULL, NULL, 0, &rt), -EINVAL);
	assert_int_equal(npu_runtime_run(NULL, NULL, 0), -EINVAL);
	npu_graph_free(NULL);
	npu_runtime_free(NULL);
	assert_string_equal(npu_node_where_name(NPU_WHERE_FUSED), "fused");
}

/*
 * LayerNorm as exporters spell it: ReduceMean, Sub, Pow 2, ReduceMean,
 * Add eps, Sqrt, Div, Mul gamma, Add beta over the last dim of [3,5]
 * becomes one LAYERNORM; every other node of the pattern is fused in.
 */
static void test_layernorm_rewrite(void **state)
{
	static const uint32_t dx[2] = { 3, 5 }, dm[2] = { 3, 1 }, d1[1] = { 1 }, d5[1] = { 5 };
	struct npu_op_params mean = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_REDUCE,
				      .reduce = { .kind = NPU_REDUCE_MEAN, .axes = 2 } };
	struct npu_op_params sub = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_SUB },
		pw = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_POW },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		mul = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL },
		dv = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_DIV },
		sq = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_SQRT };
	float x[15], y[15], want[15], gamma[5] = { 1, 2, -1, 0.5f, 3 };
	float beta[5] = { 0, 1, 2, -3, 0.25f }, two = 2, eps = 1e-5f;
	uint32_t vx, m1, dd, p2, m2, a, s, q, g1, vy, vg, vb, v2, ve, nodes[9], i, k;
	struct npu_runtime *rt;
	struct npu_graph *g;

	(void)state;
	fill(x, 15, 7);
	for (i = 0; i < 3; i++) {
		double mu = 0, var = 0;

		for (k = 0; k < 5; k++)
			mu += x[i * 5 + k] / 5.0;
		for (k = 0; k < 5; k++)
			var += (x[i * 5 + k] - mu) * (x[i * 5 + k] - mu) / 5.0;
		for (k = 0; k < 5; k++)
			want[i * 5 + k] = (float)((x[i * 5 + k] - mu) / sqrt(var + eps) * gamma[k] +
						  beta[k]);
	}
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 2, dx, NPU_VALUE_INPUT, NULL);
	v2 = val(g, "two", NPU_DTYPE_FP32, 1, d1, 0, &two);
	ve = val(g, "eps", NPU_DTYPE_FP32, 1, d1, 0, &eps);
	vg = val(g, "gamma", NPU_DTYPE_FP32, 1, d5, 0, gamma);
	vb = val(g, "beta", NPU_DTYPE_FP32, 1, d5, 0, beta);
	m1 = val(g, "m1", NPU_DTYPE_FP32, 2, dm, 0, NULL);
	dd = val(g, "d", NPU_DTYPE_FP32, 2, dx, 0, NULL);
	p2 = val(g, "p", NPU_DTYPE_FP32, 2, dx, 0, NULL);
	m2 = val(g, "m2", NPU_DTYPE_FP32, 2, dm, 0, NULL);
	a = val(g, "a", NPU_DTYPE_FP32, 2, dm, 0, NULL);
	s = val(g, "s", NPU_DTYPE_FP32, 2, dm, 0, NULL);
	q = val(g, "q", NPU_DTYPE_FP32, 2, dx, 0, NULL);
	g1 = val(g, "g", NPU_DTYPE_FP32, 2, dx, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 2, dx, NPU_VALUE_OUTPUT, NULL);
	nodes[0] = node(g, "mean", &mean, 1, &vx, m1);
	nodes[1] = node(g, "sub", &sub, 2, (uint32_t[]){ vx, m1 }, dd);
	nodes[2] = node(g, "pow", &pw, 2, (uint32_t[]){ dd, v2 }, p2);
	nodes[3] = node(g, "var", &mean, 1, &p2, m2);
	nodes[4] = node(g, "add-eps", &add, 2, (uint32_t[]){ m2, ve }, a);
	nodes[5] = node(g, "sqrt", &sq, 1, &a, s);
	nodes[6] = node(g, "div", &dv, 2, (uint32_t[]){ dd, s }, q);
	nodes[7] = node(g, "gamma", &mul, 2, (uint32_t[]){ q, vg }, g1);
	nodes[8] = node(g, "beta", &add, 2, (uint32_t[]){ g1, vb }, vy);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	for (i = 0; i < 8; i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		assert_int_equal(npu_runtime_node_profile(rt, nodes[i], &p), 0);
		assert_int_equal(p.where, NPU_WHERE_FUSED);
		assert_int_equal(p.fused_into, nodes[8]);
	}
	assert_int_equal(where(rt, nodes[8]), NPU_WHERE_CPU);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, want, 15, 1e-5f);
	npu_runtime_free(rt);
}

/*
 * HardSwish as exporters spell it, x * clip(x + 3, 0, 6) / 6, becomes one
 * HARD_SWISH activation (the Div by 6 first becomes a MUL by 1/6).
 */
static void test_hardswish_rewrite(void **state)
{
	static const uint32_t d6[1] = { 6 }, d1[1] = { 1 };
	struct npu_op_params add = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		mul = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL },
		clip = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_CLIP,
			 .clip = { .min = 0.0f, .max = 6.0f } };
	struct npu_node_desc div = { .size = sizeof(struct npu_node_desc),
		.name = "div", .kind = NPU_NODE_DIV, .num_inputs = 2 };
	float x[6] = { -5, -3, -1, 0, 1.5f, 4 }, y[6], want[6], three = 3, six = 6;
	uint32_t vx, v3, v6, va, vc, vm, vy, nodes[4], i;
	struct npu_runtime *rt;
	struct npu_graph *g;

	(void)state;
	for (i = 0; i < 6; i++)
		want[i] = x[i] * fminf(fmaxf(x[i] + 3, 0), 6) / 6;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d6, NPU_VALUE_INPUT, NULL);
	v3 = val(g, "three", NPU_DTYPE_FP32, 1, d1, 0, &three);
	v6 = val(g, "six", NPU_DTYPE_FP32, 1, d1, 0, &six);
	va = val(g, "a", NPU_DTYPE_FP32, 1, d6, 0, NULL);
	vc = val(g, "c", NPU_DTYPE_FP32, 1, d6, 0, NULL);
	vm = val(g, "m", NPU_DTYPE_FP32, 1, d6, 0, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d6, NPU_VALUE_OUTPUT, NULL);
	nodes[0] = node(g, "add", &add, 2, (uint32_t[]){ vx, v3 }, va);
	nodes[1] = node(g, "clip", &clip, 1, &va, vc);
	nodes[2] = node(g, "mul", &mul, 2, (uint32_t[]){ vx, vc }, vm);
	div.inputs = (uint32_t[]){ vm, v6 };
	div.output = vy;
	assert_int_equal(npu_graph_add_node(g, &div, &nodes[3]), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	for (i = 0; i < 3; i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		assert_int_equal(npu_runtime_node_profile(rt, nodes[i], &p), 0);
		assert_int_equal(p.where, NPU_WHERE_FUSED);
		assert_int_equal(p.fused_into, nodes[3]);
	}
	assert_int_equal(where(rt, nodes[3]), NPU_WHERE_CPU);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, want, 6, 1e-6f);
	npu_runtime_free(rt);
}

/* An unbound input is refused; dead nodes are dropped. */
static void test_bind_and_dead(void **state)
{
	static const uint32_t d[1] = { 3 };
	struct npu_op_params relu = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
		sig = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_SIGMOID };
	float x[3] = { -1, 0, 2 }, y[3];
	uint32_t vx, vy, vd, nd;
	struct npu_runtime *rt;
	struct npu_graph *g;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 1, d, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 1, d, NPU_VALUE_OUTPUT, NULL);
	vd = val(g, "unused", NPU_DTYPE_FP32, 1, d, 0, NULL);
	node(g, "relu", &relu, 1, &vx, vy);
	nd = node(g, "dead", &sig, 1, &vx, vd);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_int_equal(where(rt, nd), NPU_WHERE_ELIDED);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), -EINVAL);
	assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y }), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y, (float[]){ 0, 0, 2 }, 3, 0);
	npu_runtime_free(rt);
}

/*
 * The layout plan: values between NCHW convolutions and layout-free ops
 * are stored NHWC (with per-channel constants permuted to match); the
 * result must be what the plain NCHW plan gives.
 */
static void test_layout_plan(void **state)
{
	enum { C = 4, H = 5, W = 6 };
	static const uint32_t dx[4] = { 1, C, H, W }, dw[4] = { C, C, 3, 3 },
		dd[4] = { C, 1, 3, 3 }, dk[3] = { C, 1, 1 };
	float x[C * H * W], w[C * C * 9], wd[C * 9], k[C], y1[C * H * W], y2[C * H * W];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .conv = { .stride = { 1, 1 },
			.dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .groups = 1 } },
		dwc = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_CONV2D, .conv = { .stride = { 1, 1 },
			.dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .groups = C } },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		mul = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_MUL },
		sig = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_SIGMOID };
	uint32_t vx, vy, vw, vd, vk, t[5];
	struct npu_runtime *rt[2];
	struct npu_graph *g;
	int i;

	(void)state;
	fill(x, sizeof(x) / 4, 51);
	fill(w, sizeof(w) / 4, 52);
	fill(wd, sizeof(wd) / 4, 53);
	fill(k, C, 54);
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_OUTPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	vd = val(g, "wd", NPU_DTYPE_FP32, 4, dd, 0, wd);
	vk = val(g, "k", NPU_DTYPE_FP32, 3, dk, 0, k);
	for (i = 0; i < 5; i++)
		t[i] = val(g, "t", NPU_DTYPE_FP32, 4, dx, 0, NULL);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ vx, vw }, .output = t[0] }, NULL), 0);
	node(g, "sigmoid", &sig, 1, &t[0], t[1]);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &dwc, .num_inputs = 2,
		.inputs = (uint32_t[]){ t[1], vd }, .output = t[2] }, NULL), 0);
	node(g, "residual", &add, 2, (uint32_t[]){ t[2], t[1] }, t[3]);
	node(g, "channel-scale", &mul, 2, (uint32_t[]){ vk, t[3] }, t[4]);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ t[4], vw }, .output = vy }, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt[0]), 0);
	assert_int_equal(npu_graph_compile(g, NULL, NPU_COMPILE_NCHW_ONLY, &rt[1]), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt[0], 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y1 }), 0);
	assert_int_equal(npu_runtime_setup(rt[1], 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y2 }), 0);
	assert_int_equal(npu_runtime_run(rt[0], NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_int_equal(npu_runtime_run(rt[1], NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_close(y1, y2, C * H * W, 1e-6f);
	npu_runtime_free(rt[0]);
	npu_runtime_free(rt[1]);
}

/*
 * A QDQ model's float units: convolutions between per-tensor QUANTIZE and
 * DEQUANTIZE, which the NHWC plan stores NHWC too (an NCHW value there
 * sent the float convolutions to their strided paths).  Both plans must
 * give the same bytes.
 */
static void test_layout_plan_qdq(void **state)
{
	enum { C = 4, H = 5, W = 6 };
	static const uint32_t dx[4] = { 1, C, H, W }, dw[4] = { C, C, 3, 3 };
	float x[C * H * W], w[C * C * 9], y1[C * H * W], y2[C * H * W];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .conv = { .stride = { 1, 1 },
			.dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .groups = 1 } },
		q = { .size = sizeof(q), .kind = NPU_OP_QUANTIZE },
		dq = { .size = sizeof(dq), .kind = NPU_OP_DEQUANTIZE };
	struct npu_value_desc qd = NPU_VALUE_DESC_INIT;
	uint32_t vx, vy, vw, t0, tq, td;
	struct npu_runtime *rt[2];
	struct npu_graph *g;

	(void)state;
	fill(x, sizeof(x) / 4, 61);
	fill(w, sizeof(w) / 4, 62);
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_OUTPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	t0 = val(g, "c", NPU_DTYPE_FP32, 4, dx, 0, NULL);
	td = val(g, "cd", NPU_DTYPE_FP32, 4, dx, 0, NULL);
	qd.name = "cq";
	qd.dtype = NPU_DTYPE_INT8;
	qd.rank = 4;
	memcpy(qd.dims, dx, sizeof(dx));
	qd.scale = 0.05f;
	qd.zero_point = 3;
	assert_int_equal(npu_graph_add_value(g, &qd, &tq), 0);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ vx, vw }, .output = t0 }, NULL), 0);
	node(g, "q", &q, 1, &t0, tq);
	node(g, "dq", &dq, 1, &tq, td);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ td, vw }, .output = vy }, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt[0]), 0);
	assert_int_equal(npu_graph_compile(g, NULL, NPU_COMPILE_NCHW_ONLY, &rt[1]), 0);
	npu_graph_free(g);
	assert_int_equal(npu_runtime_setup(rt[0], 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y1 }), 0);
	assert_int_equal(npu_runtime_setup(rt[1], 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x, y2 }), 0);
	assert_int_equal(npu_runtime_run(rt[0], NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_int_equal(npu_runtime_run(rt[1], NULL, NPU_TIMEOUT_INFINITE), 0);
	assert_memory_equal(y1, y2, sizeof(y1));
	npu_runtime_free(rt[0]);
	npu_runtime_free(rt[1]);
}

/*
 * Data movement, as BlazeFace's exporter writes it: an NHWC input
 * transposed to NCHW, a 1x1 convolution, channels appended from a
 * constant (CONCAT), a constant-bordered pad and a crop (COPY), and the
 * transpose back.  Both layout plans must give what C computes here: with
 * the NHWC plan the moves work on views of NHWC storage.
 */
static void test_data_movement(void **state)
{
	enum { H = 5, W = 7, C = 3, E = 2, CO = C + E };
	static const uint32_t dx[4] = { 1, H, W, C }, dt[4] = { 1, C, H, W },
		dw[4] = { C, C, 1, 1 }, dk[4] = { 1, E, H, W }, dc[4] = { 1, CO, H, W },
		dp[4] = { 1, CO, H + 2, W + 2 }, dy[4] = { 1, H, W, CO };
	float x[H * W * C], w[C * C], k[E * H * W], y[2][H * W * CO], want[H * W * CO];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .conv = { .stride = { 1, 1 },
			.dilation = { 1, 1 }, .groups = 1 } },
		pad = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_COPY, .copy = { .border = NPU_COPY_BORDER_CONSTANT,
			.fill = 0.5f, .offset = { 0, 0, 1, 1 } } },
		crop = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct npu_node_desc tr = { .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_TRANSPOSE, .num_inputs = 1,
				    .transpose.perm = { 0, 3, 1, 2 } };
	uint32_t vx, vy, vw, vk, t[5];
	struct npu_runtime *rt[2];
	struct npu_graph *g;
	int i, h, x0, c, j;

	(void)state;
	fill(x, sizeof(x) / 4, 61);
	fill(w, sizeof(w) / 4, 62);
	fill(k, sizeof(k) / 4, 63);
	/* y[h][w][c]: the padded map's top-left H x W window */
	for (h = 0; h < H; h++)
		for (x0 = 0; x0 < W; x0++)
			for (c = 0; c < CO; c++) {
				float v = 0.5f;

				if (h && x0 && c < C) {
					v = 0.0f;
					for (j = 0; j < C; j++)
						v += w[c * C + j] * x[((h - 1) * W + x0 - 1) * C + j];
				} else if (h && x0) {
					v = k[((c - C) * H + h - 1) * W + x0 - 1];
				}
				want[(h * W + x0) * CO + c] = v;
			}
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, dy, NPU_VALUE_OUTPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	vk = val(g, "k", NPU_DTYPE_FP32, 4, dk, 0, k);
	t[0] = val(g, "t0", NPU_DTYPE_FP32, 4, dt, 0, NULL);
	t[1] = val(g, "t1", NPU_DTYPE_FP32, 4, dt, 0, NULL);
	t[2] = val(g, "t2", NPU_DTYPE_FP32, 4, dc, 0, NULL);
	t[3] = val(g, "t3", NPU_DTYPE_FP32, 4, dp, 0, NULL);
	t[4] = val(g, "t4", NPU_DTYPE_FP32, 4, dc, 0, NULL);
	tr.inputs = &vx;
	tr.output = t[0];
	assert_int_equal(npu_graph_add_node(g, &tr, NULL), 0);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ t[0], vw }, .output = t[1] }, NULL), 0);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){
		.size = sizeof(struct npu_node_desc),
			.kind = NPU_NODE_CONCAT, .concat.axis = 1, .num_inputs = 2,
		.inputs = (uint32_t[]){ t[1], vk }, .output = t[2] }, NULL), 0);
	node(g, "pad", &pad, 1, &t[2], t[3]);
	node(g, "crop", &crop, 1, &t[3], t[4]);
	memcpy(tr.transpose.perm, (uint32_t[]){ 0, 2, 3, 1 }, 16);
	tr.inputs = &t[4];
	tr.output = vy;
	assert_int_equal(npu_graph_add_node(g, &tr, NULL), 0);
	for (i = 0; i < 6; i++)
		assert_int_equal(npu_graph_node_supported(g, (uint32_t)i, NULL, 0, NULL), 1);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt[0]), 0);
	assert_int_equal(npu_graph_compile(g, NULL, NPU_COMPILE_NCHW_ONLY, &rt[1]), 0);
	npu_graph_free(g);
	for (i = 0; i < 2; i++) {
		assert_int_equal(npu_runtime_setup(rt[i], 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x, y[i] }), 0);
		assert_int_equal(npu_runtime_run(rt[i], NULL, NPU_TIMEOUT_INFINITE), 0);
		assert_close(y[i], want, H * W * CO, 1e-6f);
		assert_int_equal(where(rt[i], 2), NPU_WHERE_CPU);
		npu_runtime_free(rt[i]);
	}
}

/*
 * SLICE with negative and non-unit steps, of a value the NHWC plan stores
 * NHWC (a convolution's result): y[c][h][w] = t[C-1-c][h][1+2w].
 */
static void test_slice_steps(void **state)
{
	enum { H = 3, W = 7, C = 4, WO = 3 };
	static const uint32_t dx[4] = { 1, C, H, W }, dw[4] = { C, C, 1, 1 },
		dy[4] = { 1, C, H, WO };
	float x[C * H * W], w[C * C], y[2][C * H * WO], want[C * H * WO];
	struct npu_op_params conv = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .conv = { .stride = { 1, 1 },
			.dilation = { 1, 1 }, .groups = 1 } };
	struct npu_node_desc sl = { .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_SLICE, .num_inputs = 1,
				    .slice = { .start = { 0, C - 1, 0, 1 },
					       .step = { 1, -1, 1, 2 } } };
	uint32_t vx, vy, vw, t;
	struct npu_runtime *rt[2];
	struct npu_graph *g;
	int i, c, h, x0, j;

	(void)state;
	fill(x, sizeof(x) / 4, 71);
	fill(w, sizeof(w) / 4, 72);
	for (c = 0; c < C; c++)
		for (h = 0; h < H; h++)
			for (x0 = 0; x0 < WO; x0++) {
				float v = 0.0f;

				for (j = 0; j < C; j++)
					v += w[(C - 1 - c) * C + j] * x[(j * H + h) * W + 1 + 2 * x0];
				want[(c * H + h) * WO + x0] = v;
			}
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, dx, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, dy, NPU_VALUE_OUTPUT, NULL);
	vw = val(g, "w", NPU_DTYPE_FP32, 4, dw, 0, w);
	t = val(g, "t", NPU_DTYPE_FP32, 4, dx, 0, NULL);
	assert_int_equal(npu_graph_add_node(g, &(struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_OP,
		.flags = NPU_NODE_NCHW, .op = &conv, .num_inputs = 2,
		.inputs = (uint32_t[]){ vx, vw }, .output = t }, NULL), 0);
	sl.inputs = &t;
	sl.output = vy;
	assert_int_equal(npu_graph_add_node(g, &sl, NULL), 0);
	assert_int_equal(npu_graph_node_supported(g, 1, NULL, 0, NULL), 1);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt[0]), 0);
	assert_int_equal(npu_graph_compile(g, NULL, NPU_COMPILE_NCHW_ONLY, &rt[1]), 0);
	npu_graph_free(g);
	for (i = 0; i < 2; i++) {
		assert_int_equal(npu_runtime_setup(rt[i], 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x, y[i] }), 0);
		assert_int_equal(npu_runtime_run(rt[i], NULL, NPU_TIMEOUT_INFINITE), 0);
		assert_close(y[i], want, C * H * WO, 1e-6f);
		npu_runtime_free(rt[i]);
	}
}

/* Data-movement nodes whose shapes do not fit are refused at compile. */
static void test_data_movement_errors(void **state)
{
	static const uint32_t d23[2] = { 2, 3 }, d32[2] = { 3, 2 }, d33[2] = { 3, 3 },
		d25[2] = { 2, 5 };
	struct npu_node_desc n = { .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_TRANSPOSE, .num_inputs = 1 };
	struct npu_runtime *rt = NULL;
	struct npu_graph *g;
	uint32_t a, b, y;

	(void)state;
	/* perm repeats an axis */
	assert_int_equal(npu_graph_create(&g), 0);
	a = val(g, "a", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_INPUT, NULL);
	y = val(g, "y", NPU_DTYPE_FP32, 2, d32, NPU_VALUE_OUTPUT, NULL);
	n.inputs = &a;
	n.output = y;
	n.transpose.perm[0] = 1;
	n.transpose.perm[1] = 1;
	assert_int_equal(npu_graph_add_node(g, &n, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "TRANSPOSE"));
	assert_int_equal(npu_graph_node_supported(g, 0, NULL, 0, NULL), -EINVAL);
	npu_graph_free(g);
	/* concatenated dims do not add up, or another dim differs */
	assert_int_equal(npu_graph_create(&g), 0);
	a = val(g, "a", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_INPUT, NULL);
	b = val(g, "b", NPU_DTYPE_FP32, 2, d33, NPU_VALUE_INPUT, NULL);
	y = val(g, "y", NPU_DTYPE_FP32, 2, d25, NPU_VALUE_OUTPUT, NULL);
	n = (struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_CONCAT, .num_inputs = 2,
				    .inputs = (uint32_t[]){ a, b }, .output = y,
				    .concat.axis = 1 };
	assert_int_equal(npu_graph_add_node(g, &n, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "CONCAT"));
	npu_graph_free(g);
	/* a slice reading past X's end */
	assert_int_equal(npu_graph_create(&g), 0);
	a = val(g, "a", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_INPUT, NULL);
	y = val(g, "y", NPU_DTYPE_FP32, 2, d23, NPU_VALUE_OUTPUT, NULL);
	n = (struct npu_node_desc){ .size = sizeof(struct npu_node_desc),
		.kind = NPU_NODE_SLICE, .num_inputs = 1, .inputs = &a,
				    .output = y, .slice = { .start = { 0, 1 }, .step = { 1, 1 } } };
	assert_int_equal(npu_graph_add_node(g, &n, NULL), 0);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "reads outside X"));
	npu_graph_free(g);
}

/*
 * The graph API's structs carry their size (npu.h "ABI rules"); a node
 * points to its op's parameters, so npu_op_params can grow without moving
 * npu_node_desc's later fields (before 1.3 it was embedded by value and
 * none of these structs had a size).
 */
static void test_extensible_structs(void **state)
{
	const uint32_t d2[2] = { 2, 3 };
	struct npu_op_params relu = { .size = sizeof(relu), .kind = NPU_OP_ACTIVATION,
				      .act = NPU_ACT_RELU };
	struct npu_value_desc v = NPU_VALUE_DESC_INIT;
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	struct npu_node_profile prof = NPU_NODE_PROFILE_INIT;
	struct npu_device_limits lim = { 0 };
	struct {
		struct npu_node_desc n;
		uint32_t newer[4];
	} bign;
	uint8_t small[offsetof(struct npu_value_desc, rank) + 8];
	struct npu_runtime *rt = NULL;
	struct npu_graph *g;
	uint32_t x, y, id;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	v.dtype = NPU_DTYPE_FP32;
	v.rank = 2;
	memcpy(v.dims, d2, sizeof(d2));
	v.flags = NPU_VALUE_INPUT;
	v.size = 0;
	assert_int_equal(npu_graph_add_value(g, &v, &x), -EINVAL);
	assert_non_null(strstr(npu_graph_error(g), "size"));
	v.size = sizeof(v);
	assert_int_equal(npu_graph_add_value(g, &v, &x), 0);
	v.flags = NPU_VALUE_OUTPUT;
	assert_int_equal(npu_graph_add_value(g, &v, &y), 0);

	/* get_value: an older caller's prefix only, size says how much */
	memset(small, 0xa5, sizeof(small));
	((struct npu_value_desc *)(void *)small)->size = sizeof(small) - 8;
	assert_int_equal(npu_graph_get_value(g, y, (void *)small), 0);
	assert_int_equal(((struct npu_value_desc *)(void *)small)->dtype, NPU_DTYPE_FP32);
	assert_int_equal(small[sizeof(small) - 1], 0xa5);

	n.kind = NPU_NODE_OP;
	n.num_inputs = 1;
	n.inputs = &x;
	n.output = y;
	assert_int_equal(npu_graph_add_node(g, &n, &id), -EINVAL);	/* no op */
	relu.size = 0;
	n.op = &relu;
	assert_int_equal(npu_graph_add_node(g, &n, &id), -EINVAL);
	relu.size = sizeof(relu);
	memset(&bign, 0, sizeof(bign));
	bign.n = n;
	bign.n.size = sizeof(bign);
	bign.newer[3] = 1;
	assert_int_equal(npu_graph_add_node(g, &bign.n, &id), -E2BIG);
	bign.newer[3] = 0;
	assert_int_equal(npu_graph_add_node(g, &bign.n, &id), 0);

	/* limits of an older, shorter struct: the rest are the defaults */
	assert_int_equal(npu_graph_node_supported(g, id, &lim,
						  offsetof(struct npu_device_limits, cmd_bytes),
						  NULL), 1);
	assert_int_equal(npu_graph_node_supported(g, id, &lim, 0, NULL), -EINVAL);

	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	prof.size = 0;
	assert_int_equal(npu_runtime_node_profile(rt, 0, &prof), -EINVAL);
	prof.size = offsetof(struct npu_node_profile, op);
	prof.op = "untouched";
	assert_int_equal(npu_runtime_node_profile(rt, 0, &prof), 0);
	assert_string_equal(prof.op, "untouched");
	prof.size = sizeof(prof);
	assert_int_equal(npu_runtime_node_profile(rt, 0, &prof), 0);
	assert_string_equal(prof.op, "ACTIVATION");
	npu_runtime_free(rt);
	npu_graph_free(g);
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/*
 * Compiling costs memory for what the compiler keeps, not for the values
 * the graph declares: a 211-byte model declaring a 1 GiB input made the
 * CPU compile zero a 1 GiB arena (fuzz-onnx, out of memory).  The arena
 * is there, but untouched until a run writes it.
 */
static void test_large_values_cost_nothing_until_used(void **state)
{
	static const uint32_t d[4] = { 1, 2, 1u << 26, 2 };
	struct npu_op_params relu = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU };
	struct npu_runtime *rt;
	struct npu_graph *g;
	uint32_t vx, vy;
	long before;

	(void)state;
	assert_int_equal(npu_graph_create(&g), 0);
	vx = val(g, "x", NPU_DTYPE_FP32, 4, d, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", NPU_DTYPE_FP32, 4, d, NPU_VALUE_OUTPUT, NULL);
	node(g, "relu", &relu, 1, &vx, vy);
	before = peak_rss_kib();
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	npu_graph_free(g);
	assert_true(npu_runtime_arena_bytes(rt) >= 1ull << 30);
	if (peak_rss_kib() - before > 64 << 10)
		fail_msg("compiling a graph with 1 GiB values raised the peak RSS by %ld KiB",
			 peak_rss_kib() - before);
	npu_runtime_free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mlp),
		cmocka_unit_test(test_extensible_structs),
		cmocka_unit_test(test_conv_bn),
		cmocka_unit_test(test_conv_affine_fold),
		cmocka_unit_test(test_fold_and_div),
		cmocka_unit_test(test_quantized),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_layernorm_rewrite),
		cmocka_unit_test(test_hardswish_rewrite),
		cmocka_unit_test(test_bind_and_dead),
		cmocka_unit_test(test_layout_plan),
		cmocka_unit_test(test_layout_plan_qdq),
		cmocka_unit_test(test_data_movement),
		cmocka_unit_test(test_slice_steps),
		cmocka_unit_test(test_data_movement_errors),
		cmocka_unit_test(test_large_values_cost_nothing_until_used),
	};

	return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
