// SPDX-License-Identifier: MIT
/*
 * The graph API on the device: graphs compiled for the device run as one
 * job per device segment and give what the same graph compiled for the
 * CPU gives (fp32 within 1e-5 relative; the device engine and the
 * reference differ only in summation order); device and CPU segments
 * interleave; rebinding, async runs and per-node profiles work.
 *
 *   1. MLP (MatMul, Add, Relu, MatMul, Add, Softmax): fused to three ops,
 *      all on the device, one device segment.
 *   2. A BlazeFace-style block on NCHW values: 5x5 conv + BatchNorm
 *      (folded) + ReLU, depthwise 3x3 conv, residual Add, ReLU, max pool,
 *      global average pool, Gemm head.
 *   3. A CPU-only op (3-D pooling) between two GEMMs: device, CPU and
 *      device segments, chained by the worker.
 *   4. Profiling: per-node modelled cycles and device time.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu/npu.h"
#include "tap.h"

static struct npu_context *ctx;
static struct npu_queue *queue;

static uint32_t val(struct npu_graph *g, const char *name, uint32_t rank,
		    const uint32_t *dims, uint32_t flags, const float *data)
{
	struct npu_value_desc d = { .size = sizeof(struct npu_value_desc),
		.name = name, .dtype = NPU_DTYPE_FP32,
				    .rank = rank, .flags = flags, .data = data };
	uint32_t id = NPU_VALUE_NONE;

	memcpy(d.dims, dims, 4ull * rank);
	if (npu_graph_add_value(g, &d, &id))
		TAP_BAIL("value %s: %s", name, npu_graph_error(g));
	return id;
}

static uint32_t node(struct npu_graph *g, const char *name, enum npu_node_kind kind,
		     uint32_t flags, const struct npu_op_params *p, uint32_t nin,
		     const uint32_t *in, uint32_t out)
{
	struct npu_node_desc d = { .size = sizeof(struct npu_node_desc),
		.name = name, .kind = kind, .flags = flags,
				   .num_inputs = nin, .inputs = in, .output = out,
				   .epsilon = 1e-3f };
	uint32_t id = 0;

	if (p)
		d.op = p;
	if (npu_graph_add_node(g, &d, &id))
		TAP_BAIL("node %s: %s", name, npu_graph_error(g));
	return id;
}

static void fill(float *p, size_t n, unsigned int seed, float scale)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * scale;
	}
}

static float max_rel_diff(const float *a, const float *b, size_t n)
{
	float m = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		float d = fabsf(a[i] - b[i]) / (1.0f + fabsf(b[i]));

		if (!(d <= m))
			m = isnan(d) ? INFINITY : d;
	}
	return m;
}

/*
 * Compile @g for the device and for the CPU, run both on @x, compare @n
 * output floats; the device runtime is returned for more checks.
 */
static struct npu_runtime *both(struct npu_graph *g, const char *what, uint32_t vx,
				const float *x, uint32_t vy, float *y, size_t n)
{
	struct npu_runtime *dev = NULL, *cpu = NULL;
	float *ycpu = calloc(n, sizeof(float));
	float d;
	int ret;

	ret = npu_graph_compile(g, ctx, 0, &dev);
	if (!tap_ok(ret == 0, "%s: compiles for the device", what))
		printf("#   %s: %s\n", npu_strerror(ret), npu_graph_error(g));
	ret = npu_graph_compile(g, NULL, 0, &cpu);
	if (!tap_ok(ret == 0, "%s: compiles for the CPU", what))
		printf("#   %s: %s\n", npu_strerror(ret), npu_graph_error(g));
	if (!dev || !cpu || !ycpu)
		TAP_BAIL("%s: cannot continue", what);
	npu_runtime_setup(dev, 2, (uint32_t[]){ vx, vy }, (void *[]){ (void *)x, y });
	npu_runtime_setup(cpu, 2, (uint32_t[]){ vx, vy }, (void *[]){ (void *)x, ycpu });
	TAP_RET(npu_runtime_run(dev, queue, npu_deadline_ns(60000000000ll)), 0,
		"%s: runs on the device", what);
	TAP_RET(npu_runtime_run(cpu, NULL, NPU_TIMEOUT_INFINITE), 0, "%s: runs on the CPU", what);
	d = max_rel_diff(y, ycpu, n);
	if (!tap_ok(d <= 1e-5f, "%s: device matches the CPU fallback (max rel diff %g)", what, d))
		printf("#   y[0] %g vs %g\n", y[0], ycpu[0]);
	npu_runtime_free(cpu);
	free(ycpu);
	return dev;
}

static size_t count_where(struct npu_runtime *rt, enum npu_node_where w)
{
	size_t i, n = 0;

	for (i = 0; i < npu_runtime_num_nodes(rt); i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		npu_runtime_node_profile(rt, (uint32_t)i, &p);
		if (p.where == w)
			n++;
		if (p.where == NPU_WHERE_CPU)
			printf("#   %s (%s) on the CPU: %s\n", p.name, p.op,
			       p.cpu_reason ? p.cpu_reason : "?");
	}
	return n;
}

static void test_mlp(void)
{
	enum { B = 4, I = 64, H = 128, O = 10 };
	static float w1[I * H], b1[H], w2[H * O], b2[O], x[B * I], y[B * O], x2[B * I];
	struct npu_op_params gemm = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		relu = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
		smax = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_SOFTMAX, .softmax.axis = 1 };
	uint32_t vx, vy, vw1, vb1, vw2, vb2, t[4];
	struct npu_runtime *rt;
	struct npu_graph *g;
	size_t segs, dsegs;
	float y2[B * O], ycheck[B * O];

	fill(w1, I * H, 1, 0.2f);
	fill(b1, H, 2, 0.1f);
	fill(w2, H * O, 3, 0.2f);
	fill(b2, O, 4, 0.1f);
	fill(x, B * I, 5, 1.0f);
	fill(x2, B * I, 6, 1.0f);
	if (npu_graph_create(&g))
		TAP_BAIL("graph");
	vx = val(g, "x", 2, (uint32_t[]){ B, I }, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", 2, (uint32_t[]){ B, O }, NPU_VALUE_OUTPUT, NULL);
	vw1 = val(g, "w1", 2, (uint32_t[]){ I, H }, 0, w1);
	vb1 = val(g, "b1", 1, (uint32_t[]){ H }, 0, b1);
	vw2 = val(g, "w2", 2, (uint32_t[]){ H, O }, 0, w2);
	vb2 = val(g, "b2", 1, (uint32_t[]){ O }, 0, b2);
	t[0] = val(g, "h0", 2, (uint32_t[]){ B, H }, 0, NULL);
	t[1] = val(g, "h1", 2, (uint32_t[]){ B, H }, 0, NULL);
	t[2] = val(g, "h2", 2, (uint32_t[]){ B, H }, 0, NULL);
	t[3] = val(g, "z0", 2, (uint32_t[]){ B, O }, 0, NULL);
	{
		uint32_t z1 = val(g, "z1", 2, (uint32_t[]){ B, O }, 0, NULL);

		node(g, "fc1", NPU_NODE_OP, 0, &gemm, 2, (uint32_t[]){ vx, vw1 }, t[0]);
		node(g, "bias1", NPU_NODE_OP, 0, &add, 2, (uint32_t[]){ t[0], vb1 }, t[1]);
		node(g, "relu", NPU_NODE_OP, 0, &relu, 1, &t[1], t[2]);
		node(g, "fc2", NPU_NODE_OP, 0, &gemm, 2, (uint32_t[]){ t[2], vw2 }, t[3]);
		node(g, "bias2", NPU_NODE_OP, 0, &add, 2, (uint32_t[]){ t[3], vb2 }, z1);
		node(g, "softmax", NPU_NODE_OP, 0, &smax, 1, &z1, vy);
	}
	rt = both(g, "mlp", vx, x, vy, y, B * O);
	tap_ok(count_where(rt, NPU_WHERE_DEVICE) == 3 && count_where(rt, NPU_WHERE_FUSED) == 3,
	       "mlp: 3 ops on the device, 3 nodes fused into them");
	segs = npu_runtime_num_segments(rt, &dsegs);
	tap_ok(segs == 1 && dsegs == 1, "mlp: one device segment (%zu segments, %zu device)",
	       segs, dsegs);

	/* rebinding and an async run: same runtime, new input */
	memcpy(ycheck, y, sizeof(y));
	TAP_RET(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy }, (void *[]){ x2, y2 }), 0,
		"mlp: rebinds input and output");
	TAP_RET(npu_runtime_run_async(rt, queue), 0, "mlp: run_async");
	TAP_RET(npu_runtime_run_async(rt, queue), -EBUSY, "mlp: a second run while one is in flight");
	TAP_RET(npu_runtime_wait(rt, npu_deadline_ns(60000000000ll)), 0, "mlp: wait");
	tap_ok(memcmp(y2, ycheck, sizeof(y2)) != 0, "mlp: the new input gave a new output");
	npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy }, (void *[]){ x, y2 });
	TAP_RET(npu_runtime_run(rt, queue, npu_deadline_ns(60000000000ll)), 0, "mlp: run again");
	tap_ok(!memcmp(y2, ycheck, sizeof(y2)), "mlp: same input, bit-identical output");

	/* 4. profiling */
	{
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;

		TAP_RET(npu_runtime_set_profiling(rt, true), 0, "profile: on");
		TAP_RET(npu_runtime_run(rt, queue, npu_deadline_ns(60000000000ll)), 0,
			"profile: run");
		npu_runtime_node_profile(rt, 0, &p);
		tap_ok(p.where == NPU_WHERE_DEVICE && p.device_cycles > 0 && p.time_ns > 0 &&
		       p.macs == (uint64_t)B * I * H,
		       "profile: fc1 on the device, %llu cycles, %llu ns, %llu MACs",
		       (unsigned long long)p.device_cycles, (unsigned long long)p.time_ns,
		       (unsigned long long)p.macs);
		tap_ok(!memcmp(y2, ycheck, sizeof(y2)), "profile: results unchanged");
	}
	npu_runtime_free(rt);
	npu_graph_free(g);
}

static void test_blazeface_block(void)
{
	enum { N = 1, C = 3, H = 32, W = 32, F = 16, CLS = 4 };
	static float x[N * C * H * W], w0[F * C * 25], bn[4][F], wd[F * 9], bd[F],
		fc[CLS * F], fcb[CLS], y[N * CLS];
	struct npu_op_params conv5 = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV2D, .conv = {
			.stride = { 2, 2 }, .dilation = { 1, 1 }, .pad = { 1, 1, 2, 2 }, .groups = 1 } },
		dw = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D, .conv = {
			.stride = { 1, 1 }, .dilation = { 1, 1 }, .pad = { 1, 1, 1, 1 }, .groups = F } },
		add = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ELTWISE, .eltwise.kind = NPU_ELTWISE_ADD },
		relu = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_RELU },
		mp = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_POOL2D, .pool = { .kind = NPU_POOL_MAX, .kernel = { 2, 2 },
			.stride = { 2, 2 } } },
		gap = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_POOL2D, .pool = { .kind = NPU_POOL_GLOBAL_AVG } },
		gemm = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_GEMM, .gemm.flags = NPU_GEMM_TRANS_B };
	const uint32_t d16[4] = { N, F, H / 2, W / 2 }, d8[4] = { N, F, H / 4, W / 4 };
	uint32_t vx, vy, v[16], k;
	struct npu_runtime *rt;
	struct npu_graph *g;
	int i;

	fill(x, sizeof(x) / 4, 21, 1.0f);
	fill(w0, sizeof(w0) / 4, 22, 0.3f);
	for (i = 0; i < 4; i++)
		fill(bn[i], F, 23 + (unsigned int)i, 0.5f);
	for (i = 0; i < F; i++)
		bn[3][i] = fabsf(bn[3][i]) + 0.5f;	/* variance */
	fill(wd, sizeof(wd) / 4, 27, 0.3f);
	fill(bd, F, 28, 0.1f);
	fill(fc, sizeof(fc) / 4, 29, 0.3f);
	fill(fcb, CLS, 30, 0.1f);
	if (npu_graph_create(&g))
		TAP_BAIL("graph");
	vx = val(g, "x", 4, (uint32_t[]){ N, C, H, W }, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", 2, (uint32_t[]){ N, CLS }, NPU_VALUE_OUTPUT, NULL);
	v[0] = val(g, "w0", 4, (uint32_t[]){ F, C, 5, 5 }, 0, w0);
	for (k = 0; k < 4; k++)
		v[1 + k] = val(g, "bn", 1, (uint32_t[]){ F }, 0, bn[k]);
	v[5] = val(g, "wd", 4, (uint32_t[]){ F, 1, 3, 3 }, 0, wd);
	v[6] = val(g, "bd", 1, (uint32_t[]){ F }, 0, bd);
	v[7] = val(g, "fc", 2, (uint32_t[]){ CLS, F }, 0, fc);
	v[8] = val(g, "fcb", 1, (uint32_t[]){ CLS }, 0, fcb);
	v[9] = val(g, "c0", 4, d16, 0, NULL);
	v[10] = val(g, "b0", 4, d16, 0, NULL);
	v[11] = val(g, "r0", 4, d16, 0, NULL);
	v[12] = val(g, "d0", 4, d16, 0, NULL);
	v[13] = val(g, "s0", 4, d16, 0, NULL);
	v[14] = val(g, "r1", 4, d16, 0, NULL);
	v[15] = val(g, "p0", 4, d8, 0, NULL);
	{
		uint32_t gp = val(g, "gap", 4, (uint32_t[]){ N, F, 1, 1 }, 0, NULL);
		uint32_t fl = val(g, "flat", 2, (uint32_t[]){ N, F }, 0, NULL);

		node(g, "conv0", NPU_NODE_OP, NPU_NODE_NCHW, &conv5, 2,
		     (uint32_t[]){ vx, v[0] }, v[9]);
		node(g, "bn0", NPU_NODE_BATCHNORM, 0, NULL, 5,
		     (uint32_t[]){ v[9], v[1], v[2], v[3], v[4] }, v[10]);
		node(g, "relu0", NPU_NODE_OP, 0, &relu, 1, &v[10], v[11]);
		node(g, "dwconv", NPU_NODE_OP, NPU_NODE_NCHW, &dw, 3,
		     (uint32_t[]){ v[11], v[5], v[6] }, v[12]);
		node(g, "residual", NPU_NODE_OP, 0, &add, 2, (uint32_t[]){ v[12], v[11] }, v[13]);
		node(g, "relu1", NPU_NODE_OP, 0, &relu, 1, &v[13], v[14]);
		node(g, "maxpool", NPU_NODE_OP, NPU_NODE_NCHW, &mp, 1, &v[14], v[15]);
		node(g, "gap", NPU_NODE_OP, NPU_NODE_NCHW, &gap, 1, &v[15], gp);
		node(g, "flatten", NPU_NODE_RESHAPE, 0, NULL, 1, &gp, fl);
		node(g, "head", NPU_NODE_OP, 0, &gemm, 3, (uint32_t[]){ fl, v[7], v[8] }, vy);
	}
	rt = both(g, "blazeface block", vx, x, vy, y, N * CLS);
	tap_ok(count_where(rt, NPU_WHERE_CPU) == 0 && count_where(rt, NPU_WHERE_DEVICE) == 6 &&
	       count_where(rt, NPU_WHERE_FUSED) == 3 && count_where(rt, NPU_WHERE_ELIDED) == 1,
	       "blazeface block: 6 ops, all on the device (bn0, relu0, relu1 fused, flatten elided)");
	npu_runtime_free(rt);
	npu_graph_free(g);
}

static void test_mixed_segments(void)
{
	enum { M = 8, K = 16 };
	static float w[K * K], x[M * K], y[M * K];
	struct npu_op_params gemm = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM },
		p3 = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_POOL3D, .pool3d = { .kind = NPU_POOL_MAX,
			.kernel = { 1, 1, 1 }, .stride = { 1, 1, 1 } } };
	const uint32_t d2[2] = { M, K }, d5[5] = { 1, 1, M, K, 1 };
	uint32_t vx, vy, vw, a, b, c, d;
	struct npu_runtime *rt;
	struct npu_graph *g;
	size_t segs, dsegs;

	fill(w, K * K, 41, 0.25f);
	fill(x, M * K, 42, 1.0f);
	if (npu_graph_create(&g))
		TAP_BAIL("graph");
	vx = val(g, "x", 2, d2, NPU_VALUE_INPUT, NULL);
	vy = val(g, "y", 2, d2, NPU_VALUE_OUTPUT, NULL);
	vw = val(g, "w", 2, (uint32_t[]){ K, K }, 0, w);
	a = val(g, "a", 2, d2, 0, NULL);
	b = val(g, "a5", 5, d5, 0, NULL);
	c = val(g, "p5", 5, d5, 0, NULL);
	d = val(g, "p", 2, d2, 0, NULL);
	node(g, "mm1", NPU_NODE_OP, 0, &gemm, 2, (uint32_t[]){ vx, vw }, a);
	node(g, "to5d", NPU_NODE_RESHAPE, 0, NULL, 1, &a, b);
	node(g, "pool3d", NPU_NODE_OP, 0, &p3, 1, &b, c);
	node(g, "to2d", NPU_NODE_RESHAPE, 0, NULL, 1, &c, d);
	node(g, "mm2", NPU_NODE_OP, 0, &gemm, 2, (uint32_t[]){ d, vw }, vy);
	rt = both(g, "mixed", vx, x, vy, y, M * K);
	segs = npu_runtime_num_segments(rt, &dsegs);
	tap_ok(segs == 3 && dsegs == 2, "mixed: device, CPU, device segments (%zu, %zu)",
	       segs, dsegs);
	{
		const char *why = NULL;
		int sup = npu_graph_node_supported(g, 2, NULL, 0, &why);

		tap_ok(sup == 0 && why, "mixed: the support query says 3-D pooling is CPU only: %s",
		       why ? why : "(no reason)");
	}
	npu_runtime_free(rt);
	npu_graph_free(g);
}

int main(void)
{
	struct npu_device *dev = NULL;
	int ret;

	ret = npu_device_open(0, &dev);
	if (ret)
		TAP_BAIL("open: %s", npu_strerror(ret));
	ret = npu_context_create(dev, &ctx);
	if (ret)
		TAP_BAIL("context: %s", npu_strerror(ret));
	ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &queue);
	if (ret)
		TAP_BAIL("queue: %s", npu_strerror(ret));
	test_mlp();
	test_blazeface_block();
	test_mixed_segments();
	npu_queue_destroy(queue);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return tap_done();
}
