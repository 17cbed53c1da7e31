// SPDX-License-Identifier: MIT
/*
 * libnpu op API on the host: argument and descriptor validation, the CPU
 * fallback against naive loops written here, and device encoding
 * including tiling.  Encoded commands are executed with the reference
 * implementation over a flat arena standing in for device memory, and
 * must reproduce the untiled CPU result bit for bit.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "fake_dev.h"

/* ---- Tensors ---------------------------------------------------------------- */

static void test_tensor_validation(void **state)
{
	uint32_t dims[7] = { 2, 3, 4, 1, 1, 1, 1 }, zero[2] = { 2, 0 };
	struct npu_tensor *t = NULL;
	float scales[3] = { 0.5f, 1.0f, 2.0f }, bad[3] = { 0.5f, -1.0f, 1.0f };
	int32_t zps[3] = { 0, 5, 300 };
	uint64_t huge[3] = { UINT64_MAX / 2, 1, 1 };
	float f;

	(void)state;
	assert_int_equal(npu_tensor_create(0, 1, dims, &t), -EINVAL);
	assert_int_equal(npu_tensor_create(99, 1, dims, &t), -EINVAL);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 0, dims, &t), -EINVAL);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 7, dims, &t), -EINVAL);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, zero, &t), -EINVAL);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, NULL, &t), -EINVAL);
	assert_null(t);

	t = tensor(NPU_DTYPE_FP32, 3, dims);
	assert_int_equal(span_of(t), 2 * 3 * 4 * 4);
	/* Quantization is for int8/uint8 only. */
	assert_int_equal(npu_tensor_set_quant(t, 1.0f, 0), -EINVAL);
	assert_int_equal(npu_tensor_set_strides(t, huge), -EOVERFLOW);
	assert_int_equal(npu_tensor_bind_host(t, (uint8_t *)&f + 1, 96), -EINVAL);
	npu_tensor_free(t);

	t = tensor(NPU_DTYPE_UINT8, 2, (uint32_t[]){ 4, 3 });
	assert_int_equal(npu_tensor_set_quant(t, 0.0f, 0), -EINVAL);
	assert_int_equal(npu_tensor_set_quant(t, NAN, 0), -EINVAL);
	assert_int_equal(npu_tensor_set_quant(t, INFINITY, 0), -EINVAL);
	assert_int_equal(npu_tensor_set_quant(t, 1.0f, 256), -EINVAL);
	assert_int_equal(npu_tensor_set_quant(t, 1.0f, -1), -EINVAL);
	assert_int_equal(npu_tensor_set_quant(t, 0.25f, 255), 0);
	assert_int_equal(npu_tensor_set_quant_channel(t, 2, scales, NULL), -EINVAL);
	assert_int_equal(npu_tensor_set_quant_channel(t, 1, bad, NULL), -EINVAL);
	assert_int_equal(npu_tensor_set_quant_channel(t, 1, scales, zps), -EINVAL);
	zps[2] = 255;
	assert_int_equal(npu_tensor_set_quant_channel(t, 1, scales, zps), 0);
	/* Strides: [4,3] with row stride 5 spans 3*5+2+1 = 18 bytes. */
	assert_int_equal(npu_tensor_set_strides(t, (uint64_t[]){ 5, 1 }), 0);
	assert_int_equal(span_of(t), 18);
	assert_int_equal(npu_tensor_set_strides(t, NULL), 0);
	assert_int_equal(span_of(t), 12);
	npu_tensor_free(t);
	npu_tensor_free(NULL);
	assert_int_equal(npu_dtype_size(NPU_DTYPE_BF16), 2);
	assert_int_equal(npu_dtype_size(0), 0);
}

static void test_bind_buffer_range(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_buffer *b = fake_buf(ctx, 4096);
	struct npu_tensor *t = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 1024 });

	(void)state;
	assert_int_equal(npu_tensor_bind_buffer(t, b, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(t, b, 4), -ERANGE);
	assert_int_equal(npu_tensor_bind_buffer(t, b, 2), -EINVAL);
	assert_int_equal(npu_tensor_bind_buffer(t, b, UINT64_MAX - 3), -ERANGE);
	npu_tensor_free(t);
	free(b);
	free(ctx);
}

/* ---- Op validation ----------------------------------------------------------- */

static void test_op_validation(void **state)
{
	float a[6], b[6], y[4];
	struct npu_tensor *ta = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	struct npu_tensor *tb = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 });
	struct npu_tensor *bad = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	const struct npu_tensor *in[2] = { ta, tb };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_op *op = NULL;

	(void)state;
	/* Unbound tensors. */
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	npu_tensor_bind_host(ta, a, sizeof(a));
	npu_tensor_bind_host(tb, b, sizeof(b));
	npu_tensor_bind_host(ty, y, sizeof(y));
	npu_tensor_bind_host(bad, y, sizeof(y));
	assert_int_equal(npu_op_create(NULL, in, 2, ty, &op), -EINVAL);
	assert_int_equal(npu_op_create(&p, in, 4, ty, &op), -EINVAL);
	assert_int_equal(npu_op_create(&p, in, 2, NULL, &op), -EINVAL);
	/* Shape mismatch: Y must be [M, N]. */
	assert_int_equal(npu_op_create(&p, in, 2, bad, &op), -EINVAL);
	/* Missing required B. */
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	/* Unknown kind, activation, rounding, GEMM flag. */
	p.kind = NPU_OP_KIND_COUNT;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.kind = NPU_OP_GEMM;
	p.act = 42;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act = NPU_ACT_NONE;
	p.round = 2;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.round = NPU_ROUND_ONNX;
	p.gemm.flags = 4;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.gemm.flags = 0;
	/* A slope without leaky ReLU, a non-finite slope with it. */
	p.act_alpha = 0.1f;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act = NPU_ACT_LEAKY_RELU;
	p.act_alpha = INFINITY;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act = NPU_ACT_NONE;
	p.act_alpha = 0.0f;
	/* A field of another op kind. */
	p.conv.groups = 1;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.conv.groups = 0;
	assert_null(op);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_non_null(op);
	npu_op_free(op);
	assert_int_equal(npu_op_supported(NULL, NULL), -EINVAL);
	assert_int_equal(npu_op_run_cpu(NULL), -EINVAL);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(ty);
	npu_tensor_free(bad);
}

/* ---- CPU fallback against naive loops ----------------------------------------- */

static void test_cpu_gemm_float(void **state)
{
	enum { M = 5, K = 7, N = 3 };
	float a[M * K], b[K * N], bias[N], y[M * N];
	struct npu_tensor *ta = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ M, K });
	struct npu_tensor *tb = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ K, N });
	struct npu_tensor *tc = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ N });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ M, N });
	const struct npu_tensor *in[3] = { ta, tb, tc };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .act = NPU_ACT_RELU };
	enum npu_op_where where = 0;
	struct npu_op *op;
	const char *why = NULL;
	int i, j, k;

	(void)state;
	fill_f32(a, M * K, 1);
	fill_f32(b, K * N, 2);
	fill_f32(bias, N, 3);
	npu_tensor_bind_host(ta, a, sizeof(a));
	npu_tensor_bind_host(tb, b, sizeof(b));
	npu_tensor_bind_host(tc, bias, sizeof(bias));
	npu_tensor_bind_host(ty, y, sizeof(y));
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_string_equal(why, "an operand is in host memory");
	assert_int_equal(npu_op_num_commands(op), 0);
	assert_int_equal(npu_op_buffers(op, NULL, 0), 0);
	assert_int_equal(npu_op_run(op, NULL, 0, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_CPU);
	for (i = 0; i < M; i++) {
		for (j = 0; j < N; j++) {
			float acc = 0.0f;

			for (k = 0; k < K; k++)
				acc += a[i * K + k] * b[k * N + j];
			acc += bias[j];
			acc = acc > 0 ? acc : 0;
			assert_float_equal(y[i * N + j], acc, 1e-5);
		}
	}
	npu_op_free(op);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(tc);
	npu_tensor_free(ty);
}

/* uint8 x int8 (per-channel zero points) to the raw int32 accumulator. */
static void test_cpu_gemm_int8_acc(void **state)
{
	enum { M = 4, K = 9, N = 6 };
	uint8_t a[M * K];
	int8_t b[K * N];
	int32_t bias[N], y[M * N];
	float sb[N];
	int32_t zb[N];
	struct npu_tensor *ta = tensor(NPU_DTYPE_UINT8, 2, (uint32_t[]){ M, K });
	struct npu_tensor *tb = tensor(NPU_DTYPE_INT8, 2, (uint32_t[]){ K, N });
	struct npu_tensor *tc = tensor(NPU_DTYPE_INT32, 1, (uint32_t[]){ N });
	struct npu_tensor *ty = tensor(NPU_DTYPE_INT32, 2, (uint32_t[]){ M, N });
	const struct npu_tensor *in[3] = { ta, tb, tc };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_op *op;
	int i, j, k;

	(void)state;
	fill_u8(a, sizeof(a), 5);
	fill_u8((uint8_t *)b, sizeof(b), 6);
	for (j = 0; j < N; j++) {
		bias[j] = j * 1000 - 2500;
		sb[j] = 0.01f * (float)(j + 1);
		zb[j] = j - 3;
	}
	assert_int_equal(npu_tensor_set_quant(ta, 0.5f, 128), 0);
	assert_int_equal(npu_tensor_set_quant_channel(tb, 1, sb, zb), 0);
	npu_tensor_bind_host(ta, a, sizeof(a));
	npu_tensor_bind_host(tb, b, sizeof(b));
	npu_tensor_bind_host(tc, bias, sizeof(bias));
	npu_tensor_bind_host(ty, y, sizeof(y));
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	assert_int_equal(npu_op_run_cpu(op), 0);
	for (i = 0; i < M; i++) {
		for (j = 0; j < N; j++) {
			int32_t acc = bias[j];

			for (k = 0; k < K; k++)
				acc += ((int32_t)a[i * K + k] - 128) *
				       ((int32_t)b[k * N + j] - zb[j]);
			assert_int_equal(y[i * N + j], acc);
		}
	}
	npu_op_free(op);
	/* Per-channel zero points must be along B's N axis. */
	assert_int_equal(npu_tensor_set_quant_channel(tb, 0,
		(float[K]){ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, NULL), 0);
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), -EINVAL);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(tc);
	npu_tensor_free(ty);
}

/* NCHW data described as NHWC through strides, as the ONNX runner does. */
static void test_cpu_conv_strided_nchw(void **state)
{
	enum { C = 3, H = 6, W = 5, CO = 2, KH = 3, KW = 2 };
	enum { OH = (H + 1 + 1 - KH) / 2 + 1, OW = (W + 0 + 1 - KW) / 1 + 1 };
	float x[C * H * W], w[CO * C * KH * KW], y[CO * OH * OW];
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, H, W, C });
	struct npu_tensor *tw = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CO, KH, KW, C });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, OH, OW, CO });
	const struct npu_tensor *in[2] = { tx, tw };
	struct npu_op_params p = {
		.size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D,
		.conv = { .stride = { 2, 1 }, .dilation = { 1, 1 },
			  .pad = { 1, 0, 1, 1 }, .groups = 1 },
	};
	struct npu_op *op;
	int co, oy, ox, c, ky, kx;

	(void)state;
	fill_f32(x, C * H * W, 7);
	fill_f32(w, CO * C * KH * KW, 8);
	npu_tensor_set_strides(tx, (uint64_t[]){ C * H * W, W, 1, H * W });
	npu_tensor_set_strides(tw, (uint64_t[]){ C * KH * KW, KW, 1, KH * KW });
	npu_tensor_set_strides(ty, (uint64_t[]){ CO * OH * OW, OW, 1, OH * OW });
	npu_tensor_bind_host(tx, x, sizeof(x));
	npu_tensor_bind_host(tw, w, sizeof(w));
	npu_tensor_bind_host(ty, y, sizeof(y));
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_run_cpu(op), 0);
	for (co = 0; co < CO; co++)
		for (oy = 0; oy < OH; oy++)
			for (ox = 0; ox < OW; ox++) {
				float acc = 0.0f;

				for (c = 0; c < C; c++)
					for (ky = 0; ky < KH; ky++)
						for (kx = 0; kx < KW; kx++) {
							int iy = oy * 2 - 1 + ky, ix = ox + kx;

							if (iy < 0 || iy >= H || ix < 0 || ix >= W)
								continue;
							acc += x[(c * H + iy) * W + ix] *
							       w[((co * C + c) * KH + ky) * KW + kx];
						}
				assert_float_equal(y[(co * OH + oy) * OW + ox], acc, 1e-5);
			}
	npu_op_free(op);
	npu_tensor_free(tx);
	npu_tensor_free(tw);
	npu_tensor_free(ty);
}

/* ---- Encoding and tiling ------------------------------------------------------ */

struct gemm_case {
	uint32_t m, k, n, flags;
	bool quant;
	uint64_t tile;
};

static void run_tiled_gemm(const struct gemm_case *g)
{
	struct npu_context *ctx = fake_ctx();
	enum npu_dtype dt = g->quant ? NPU_DTYPE_UINT8 : NPU_DTYPE_FP32;
	enum npu_dtype bdt = g->quant ? NPU_DTYPE_INT32 : NPU_DTYPE_FP32;
	size_t es = npu_dtype_size(dt);
	uint32_t ad[2] = { g->m, g->k }, bd[2] = { g->k, g->n };
	struct npu_tensor *ta, *tb, *tc, *ty, *ty2;
	struct npu_buffer *ba, *bb, *bc, *by, *by2, *list[8];
	const struct npu_tensor *in[3];
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .act = NPU_ACT_RELU };
	struct npu_op *op, *ref;
	struct npu_cmdbuf *cb;
	size_t i, ncmd;

	if (g->flags & NPU_GEMM_TRANS_A) {
		ad[0] = g->k;
		ad[1] = g->m;
	}
	if (g->flags & NPU_GEMM_TRANS_B) {
		bd[0] = g->n;
		bd[1] = g->k;
	}
	ta = tensor(dt, 2, ad);
	tb = tensor(dt, 2, bd);
	tc = tensor(bdt, 1, &g->n);
	ty = tensor(dt, 2, (uint32_t[]){ g->m, g->n });
	ty2 = tensor(dt, 2, (uint32_t[]){ g->m, g->n });
	if (g->quant) {
		npu_tensor_set_quant(ta, 0.02f, 100);
		npu_tensor_set_quant(tb, 0.03f, 7);
		npu_tensor_set_quant(ty, 0.5f, 3);
		npu_tensor_set_quant(ty2, 0.5f, 3);
	}
	ba = fake_buf(ctx, span_of(ta));
	bb = fake_buf(ctx, span_of(tb));
	bc = fake_buf(ctx, span_of(tc));
	by = fake_buf(ctx, span_of(ty));
	by2 = fake_buf(ctx, span_of(ty));
	if (g->quant) {
		fill_u8(ba->map, (size_t)g->m * g->k, 1);
		fill_u8(bb->map, (size_t)g->k * g->n, 2);
		for (i = 0; i < g->n; i++)
			((int32_t *)bc->map)[i] = (int32_t)(i * 37) - 300;
	} else {
		fill_f32(ba->map, (size_t)g->m * g->k, 1);
		fill_f32(bb->map, (size_t)g->k * g->n, 2);
		fill_f32(bc->map, g->n, 3);
	}
	memset(by->map, 0xa5, by->size);
	memset(by2->map, 0x5a, by2->size);
	assert_int_equal(npu_tensor_bind_buffer(ta, ba, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(tb, bb, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(tc, bc, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(ty, by, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(ty2, by2, 0), 0);
	in[0] = ta;
	in[1] = tb;
	in[2] = tc;
	p.gemm.flags = g->flags;
	p.max_tile_bytes = g->tile;
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	ncmd = npu_op_num_commands(op);
	assert_true(ncmd > 1);
	assert_int_equal(npu_op_buffers(op, list, 8), 4);

	/* All commands or none. */
	assert_int_equal(npu_cmdbuf_create(NULL, (ncmd - 1) * sizeof(struct vnpu_cmd_compute) + 8, &cb), 0);
	assert_int_equal(npu_cmdbuf_nop(cb, 8), 0);
	assert_int_equal(npu_op_encode(op, cb), -ENOSPC);
	assert_int_equal(npu_cmdbuf_size(cb), 8);
	npu_cmdbuf_destroy(cb);

	assert_int_equal(npu_cmdbuf_create(NULL, ncmd * sizeof(struct vnpu_cmd_compute), &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	assert_int_equal(npu_cmdbuf_size(cb), ncmd * sizeof(struct vnpu_cmd_compute));
	for (i = 0; i < ncmd; i++) {
		struct vnpu_cmd_compute c;

		memcpy(&c, (const uint8_t *)npu_cmdbuf_data(cb) + i * sizeof(c), sizeof(c));
		assert_int_equal(c.act, VNPU_ACT_RELU);
		assert_int_equal(c.attr.gemm.flags, g->flags);
		/* Each tile's output lies inside Y. */
		assert_true(c.t[3].va >= by->va && c.t[3].va < by->va + (uint64_t)g->m * g->n * es);
	}
	assert_int_equal(exec_stream(cb, VNPU_OP_GEMM), (int)ncmd);
	npu_cmdbuf_destroy(cb);

	/* The same op untiled, through the CPU path, into the second Y. */
	p.max_tile_bytes = 0;
	assert_int_equal(npu_op_create(&p, in, 3, ty2, &ref), 0);
	assert_int_equal(npu_op_num_commands(ref), 1);
	assert_int_equal(npu_op_run_cpu(ref), 0);
	assert_memory_equal(by->map, by2->map, (size_t)g->m * g->n * es);

	npu_op_free(op);
	npu_op_free(ref);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(tc);
	npu_tensor_free(ty);
	npu_tensor_free(ty2);
	free(ba);
	free(bb);
	free(bc);
	free(by);
	free(by2);
	free(ctx);
}

static void test_tiled_gemm(void **state)
{
	static const struct gemm_case cases[] = {
		/*
		 * Splitting N of a row-major B does not shorten its span
		 * (K is never split), so each limit leaves room for B.
		 */
		{ 37, 16, 29, 0, false, 2048 },
		{ 37, 16, 29, NPU_GEMM_TRANS_A | NPU_GEMM_TRANS_B, false, 2600 },
		{ 64, 40, 33, NPU_GEMM_TRANS_B, true, 256 },
		{ 9, 300, 5, 0, true, 1600 },	/* A is the limit */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		arena_used = 0;
		run_tiled_gemm(&cases[i]);
	}
}

static void test_tiled_conv(void **state)
{
	enum { N = 1, H = 17, W = 9, C = 4, CO = 5, KH = 3, KW = 3 };
	enum { OH = (H + 2 + 1 - (2 * (KH - 1) + 1)) / 2 + 1, OW = (W + 2 - KW) / 1 + 1 };
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ N, H, W, C });
	struct npu_tensor *tw = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CO, KH, KW, C });
	struct npu_tensor *tc = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ CO });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ N, OH, OW, CO });
	struct npu_buffer *bx, *bw, *bc, *by, *by2;
	const struct npu_tensor *in[3] = { tx, tw, tc };
	struct npu_op_params p = {
		.size = sizeof(struct npu_op_params),
			.kind = NPU_OP_CONV2D, .act = NPU_ACT_LEAKY_RELU, .act_alpha = 0.125f,
		.max_tile_bytes = 1024,
		.conv = { .stride = { 2, 1 }, .dilation = { 2, 1 },
			  .pad = { 2, 1, 1, 1 }, .groups = 1 },
	};
	struct npu_op *op, *ref;
	struct npu_cmdbuf *cb;
	size_t ncmd;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, span_of(tx));
	bw = fake_buf(ctx, span_of(tw));
	bc = fake_buf(ctx, span_of(tc));
	by = fake_buf(ctx, span_of(ty));
	by2 = fake_buf(ctx, span_of(ty));
	fill_f32(bx->map, N * H * W * C, 11);
	fill_f32(bw->map, CO * KH * KW * C, 12);
	fill_f32(bc->map, CO, 13);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(tw, bw, 0);
	npu_tensor_bind_buffer(tc, bc, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	ncmd = npu_op_num_commands(op);
	assert_true(ncmd > 2);
	assert_int_equal(npu_cmdbuf_create(NULL, ncmd * sizeof(struct vnpu_cmd_compute), &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	assert_int_equal(exec_stream(cb, VNPU_OP_CONV2D), (int)ncmd);
	npu_cmdbuf_destroy(cb);

	npu_tensor_bind_buffer(ty, by2, 0);
	p.max_tile_bytes = 0;
	assert_int_equal(npu_op_create(&p, in, 3, ty, &ref), 0);
	assert_int_equal(npu_op_num_commands(ref), 1);
	assert_int_equal(npu_op_run_cpu(ref), 0);
	assert_memory_equal(by->map, by2->map, N * OH * OW * CO * 4);

	/* Weights alone above the limit: cannot be split, CPU only. */
	npu_op_free(op);
	p.max_tile_bytes = 256;
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 0);
	npu_op_free(op);
	npu_op_free(ref);
	npu_tensor_free(tx);
	npu_tensor_free(tw);
	npu_tensor_free(tc);
	npu_tensor_free(ty);
	free(bx);
	free(bw);
	free(bc);
	free(by);
	free(by2);
	free(ctx);
}

static void test_untileable_and_exdev(void **state)
{
	struct npu_context *c1 = fake_ctx(), *c2 = fake_ctx();
	struct npu_tensor *ta = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 8, 64 });
	struct npu_tensor *tb = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 64 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 8, 64 });
	struct npu_buffer *ba, *bb, *by, *bother;
	const struct npu_tensor *in[2] = { ta, tb };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_ELTWISE,
				   .eltwise.kind = NPU_ELTWISE_SUB };
	struct npu_op *op;
	struct npu_cmdbuf *cb;
	const char *why = NULL;
	enum npu_op_where where = 0;
	float *a, *b, *y;
	int i;

	(void)state;
	arena_used = 0;
	ba = fake_buf(c1, 8 * 64 * 4);
	bb = fake_buf(c1, 64 * 4);
	by = fake_buf(c1, 8 * 64 * 4);
	bother = fake_buf(c2, 8 * 64 * 4);
	a = ba->map;
	b = bb->map;
	y = by->map;
	fill_f32(a, 8 * 64, 1);
	fill_f32(b, 64, 2);
	npu_tensor_bind_buffer(ta, ba, 0);
	npu_tensor_bind_buffer(tb, bb, 0);
	npu_tensor_bind_buffer(ty, bother, 0);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EXDEV);
	npu_tensor_bind_buffer(ty, by, 0);

	/* Fits: one command, bit-exact descriptor of the broadcast B. */
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_num_commands(op), 1);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	{
		struct vnpu_cmd_compute c;

		memcpy(&c, npu_cmdbuf_data(cb), sizeof(c));
		assert_int_equal(c.hdr.opcode, VNPU_OP_ELTWISE);
		assert_int_equal(c.hdr.flags, 0);
		assert_int_equal(c.attr.eltwise.kind, VNPU_ELTWISE_SUB);
		assert_int_equal(c.t[1].va, bb->va);
		assert_int_equal(c.t[1].rank, 1);
		assert_int_equal(c.t[1].dims[0], 64);
		assert_int_equal(c.t[1].flags, 0);
		assert_int_equal(c.t[1].dtype, VNPU_DT_FP32);
		assert_int_equal(c.t[2].rank, 0);
		assert_int_equal(c.t[3].va, by->va);
	}
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);

	/* Beyond the limit and not splittable: the CPU takes it. */
	p.max_tile_bytes = 1024;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "cannot be split"));
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), -ENOTSUP);
	assert_int_equal(npu_cmdbuf_size(cb), 0);
	npu_cmdbuf_destroy(cb);
	assert_int_equal(npu_op_run(op, NULL, 0, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_CPU);
	for (i = 0; i < 8 * 64; i++)
		assert_true(y[i] == a[i] - b[i % 64]);
	npu_op_free(op);

	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(ty);
	free(ba);
	free(bb);
	free(by);
	free(bother);
	free(c1);
	free(c2);
}

/* No compute capability: everything falls back. */
static void test_no_compute_cap(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 16 });
	struct npu_buffer *b;
	const struct npu_tensor *in[1] = { tx };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_TANH };
	struct npu_op *op;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	ctx->info.caps = NPU_CAP_MMU;
	b = fake_buf(ctx, 64);
	npu_tensor_bind_buffer(tx, b, 0);
	assert_int_equal(npu_op_create(&p, in, 1, tx, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_string_equal(why, "the device has no compute engine");
	npu_op_free(op);
	npu_tensor_free(tx);
	free(b);
	free(ctx);
}

/* CLIP: encoded with its bounds, runs on the device; bounds are CLIP's. */
static void test_clip(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 6 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 6 });
	const struct npu_tensor *in[1] = { tx };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ACTIVATION, .act = NPU_ACT_CLIP,
				   .clip = { -1.0f, 2.0f } };
	struct npu_buffer *bx, *by;
	struct vnpu_cmd_compute c;
	struct npu_cmdbuf *cb;
	struct npu_op *op;
	float *x, *y;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, 64);
	by = fake_buf(ctx, 64);
	x = bx->map;
	y = by->map;
	memcpy(x, (float[]){ -5.0f, -1.0f, 0.0f, 1.5f, 2.0f, 9.0f }, 24);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	memcpy(&c, npu_cmdbuf_data(cb), sizeof(c));
	assert_int_equal(c.act, VNPU_ACT_CLIP);
	assert_int_equal(c.attr.activation.clip_min, 0xbf800000u);
	assert_int_equal(c.attr.activation.clip_max, 0x40000000u);
	assert_int_equal(exec_stream(cb, VNPU_OP_ACTIVATION), 1);
	assert_true(y[0] == -1.0f && y[1] == -1.0f && y[2] == 0.0f &&
		    y[3] == 1.5f && y[4] == 2.0f && y[5] == 2.0f);
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);

	/* crossed or NaN bounds; bounds without CLIP; CLIP fused elsewhere */
	p.clip.min = 3.0f;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p.clip.min = NAN;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p.clip.min = -1.0f;
	p.act = NPU_ACT_RELU;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p = (struct npu_op_params){ .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_ELTWISE, .act = NPU_ACT_CLIP,
				    .clip = { -1.0f, 1.0f } };
	assert_int_equal(npu_op_create(&p, (const struct npu_tensor *[]){ tx, tx },
				       2, ty, &op), -EINVAL);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	free(bx);
	free(by);
	free(ctx);
}

/* Pool dilations reach the device command; 0 stays the old encoding. */
static void test_pool_dilation(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 4, 4, 2 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 2, 2 });
	const struct npu_tensor *in[1] = { tx };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL2D, .pool = {
		.kind = NPU_POOL_MAX, .kernel = { 2, 2 }, .stride = { 1, 1 },
		.dilation = { 2, 2 } } };
	struct npu_buffer *bx, *by;
	struct vnpu_cmd_compute c;
	struct npu_cmdbuf *cb;
	struct npu_op *op;
	float *x, *y;
	int i;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, 128);
	by = fake_buf(ctx, 64);
	x = bx->map;
	y = by->map;
	for (i = 0; i < 32; i++)
		x[i] = (float)((i * 11) % 32);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), 0);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	memcpy(&c, npu_cmdbuf_data(cb), sizeof(c));
	assert_int_equal(c.attr.pool.dilation_h, 2);
	assert_int_equal(c.attr.pool.dilation_w, 2);
	assert_int_equal(exec_stream(cb, VNPU_OP_POOL2D), 1);
	/* y[oy][ox][ch] = max over x[oy + 2i][ox + 2j][ch] */
	for (i = 0; i < 8; i++) {
		int oy = i / 4, ox = (i / 2) % 2, ch = i % 2, a, b;
		float m = -INFINITY;

		for (a = 0; a < 2; a++)
			for (b = 0; b < 2; b++) {
				float v = x[((oy + 2 * a) * 4 + ox + 2 * b) * 2 + ch];

				m = v > m ? v : m;
			}
		assert_true(y[i] == m);
	}
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);
	/* Without dilation the output would be 3x3: 2x2 no longer matches. */
	p.pool.dilation[0] = p.pool.dilation[1] = 0;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	free(bx);
	free(by);
	free(ctx);
}

/* Unquantized integer ELTWISE: wrapping, and on the CPU with a reason. */
static void test_int_eltwise_cpu(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *ta = tensor(NPU_DTYPE_UINT8, 1, (uint32_t[]){ 4 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_UINT8, 1, (uint32_t[]){ 4 });
	const struct npu_tensor *in[2] = { ta, ta };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_ELTWISE,
				   .eltwise.kind = NPU_ELTWISE_MUL };
	enum npu_op_where where = 0;
	struct npu_buffer *ba, *by;
	struct npu_cmdbuf *cb;
	const char *why = NULL;
	struct npu_op *op;
	uint8_t *a, *y;

	(void)state;
	arena_used = 0;
	ba = fake_buf(ctx, 4);
	by = fake_buf(ctx, 4);
	a = ba->map;
	y = by->map;
	memcpy(a, (uint8_t[]){ 3, 16, 17, 255 }, 4);
	npu_tensor_bind_buffer(ta, ba, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "wrapping integer arithmetic"));
	assert_int_equal(npu_op_num_commands(op), 0);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), -ENOTSUP);
	npu_cmdbuf_destroy(cb);
	assert_int_equal(npu_op_run(op, NULL, 0, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_CPU);
	assert_true(y[0] == 9 && y[1] == 0 && y[2] == 33 && y[3] == 1);
	npu_op_free(op);
	/* a quantized output keeps the saturating device ELTWISE rules */
	assert_int_equal(npu_tensor_set_quant(ty, 1.0f, 0), 0);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	npu_tensor_free(ta);
	npu_tensor_free(ty);
	free(ba);
	free(by);
	free(ctx);
}

/*
 * COPY and RESIZE through the API: parameters checked by the device's
 * rules, one device command each, and the CPU path's results.
 */
static void test_copy_resize_api(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 2, 2, 1 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 4, 4, 1 });
	struct npu_tensor *ti = tensor(NPU_DTYPE_INT32, 4, (uint32_t[]){ 1, 2, 2, 1 });
	const struct npu_tensor *in[1] = { tx };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY };
	struct npu_buffer *bx, *by, *bi;
	struct npu_op *op;
	float *x, *y;
	int i;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, 16);
	by = fake_buf(ctx, 64);
	bi = fake_buf(ctx, 16);
	x = bx->map;
	y = by->map;
	memcpy(x, (float[]){ 1, 2, 3, 4 }, 16);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	npu_tensor_bind_buffer(ti, bi, 0);

	/* A fill without the constant border, int32 into fp32, a bad mode. */
	p.copy.fill = 1.0f;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p.copy.fill = 0.0f;
	in[0] = ti;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	in[0] = tx;
	p.copy.border = NPU_COPY_BORDER_WRAP + 1;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);

	/* Pad by one with the edge: one command, and the CPU's numbers. */
	p.copy.border = NPU_COPY_BORDER_EDGE;
	p.copy.offset[1] = p.copy.offset[2] = 1;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_op_num_commands(op), 1);
	assert_int_equal(npu_op_run_cpu(op), 0);
	for (i = 0; i < 16; i++) {
		int r = i / 4 - 1, c = i % 4 - 1;

		r = r < 0 ? 0 : r > 1 ? 1 : r;
		c = c < 0 ? 0 : c > 1 ? 1 : c;
		assert_true(y[i] == x[r * 2 + c]);
	}
	npu_op_free(op);

	/* RESIZE: a cubic coefficient for LINEAR is refused; nearest 2x. */
	p = (struct npu_op_params)NPU_OP_PARAMS_INIT;
	p.kind = NPU_OP_RESIZE;
	p.resize.mode = NPU_RESIZE_LINEAR;
	p.resize.cubic_a = -0.75f;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p.resize.mode = NPU_RESIZE_NEAREST;
	p.resize.cubic_a = 0.0f;
	p.resize.scale[0] = -1.0f;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	p.resize.scale[0] = 0.0f;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_op_run_cpu(op), 0);
	for (i = 0; i < 16; i++)
		assert_true(y[i] == x[(i / 8) * 2 + (i % 4) / 2]);
	npu_op_free(op);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	npu_tensor_free(ti);
	free(bx);
	free(by);
	free(bi);
	free(ctx);
}

/*
 * CONV_TRANSPOSE, REDUCE and HARD_SIGMOID through the op API: parameter
 * validation, one device command each (run here by the reference over
 * the arena), and the CPU path giving the same bytes.
 */
static void test_convt_reduce_hsig(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 3, 3, 2 });
	struct npu_tensor *tw = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 2, 2, 2, 3 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 6, 6, 3 });
	struct npu_tensor *tr = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ 1, 6, 1, 1 });
	const struct npu_tensor *in[2] = { tx, tw };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_CONV_TRANSPOSE,
				   .act = NPU_ACT_HARD_SIGMOID, .act_alpha = 0.25f,
				   .act_beta = 0.5f,
				   .conv_transpose = { .stride = { 2, 2 },
						       .dilation = { 1, 1 },
						       .groups = 1 } };
	struct npu_op_params r = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_REDUCE,
				   .reduce = { .kind = NPU_REDUCE_L2, .axes = 0xd } };
	struct npu_buffer *bx, *bw, *by, *br;
	struct npu_cmdbuf *cb;
	struct npu_op *op, *rop;
	float *dev = malloc(4 * 108), *devr = malloc(4 * 6);
	int i;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, 4 * 18);
	bw = fake_buf(ctx, 4 * 24);
	by = fake_buf(ctx, 4 * 108);
	br = fake_buf(ctx, 4 * 6);
	fill_f32(bx->map, 18, 3);
	fill_f32(bw->map, 24, 4);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(tw, bw, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	npu_tensor_bind_buffer(tr, br, 0);
	/* Fields of other ops and stray activation parameters are refused. */
	p.conv_transpose.output_pad[0] = 2;	/* >= stride and dilation */
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.conv_transpose.output_pad[0] = 0;
	p.act_beta = NAN;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act_beta = 0.5f;
	p.act = NPU_ACT_RELU;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act = NPU_ACT_HARD_SIGMOID;
	r.conv_transpose.groups = 1;
	assert_int_equal(npu_op_create(&r, in, 1, tr, &rop), -EINVAL);
	r.conv_transpose.groups = 0;
	r.reduce.kind = NPU_REDUCE_L2;
	r.reduce.axes = 0xd;
	r.act = NPU_ACT_SQRT;	/* REDUCE takes no activation */
	assert_int_equal(npu_op_create(&r, (const struct npu_tensor *[]){ ty }, 1, tr,
				       &rop), -EINVAL);
	r.act = NPU_ACT_NONE;

	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_op_num_commands(op), 1);
	assert_int_equal(npu_op_create(&r, (const struct npu_tensor *[]){ ty }, 1, tr,
				       &rop), 0);
	assert_int_equal(npu_op_supported(rop, NULL), 1);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	assert_int_equal(exec_stream(cb, VNPU_OP_CONV_TRANSPOSE), 1);
	npu_cmdbuf_destroy(cb);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(rop, cb), 0);
	assert_int_equal(exec_stream(cb, VNPU_OP_REDUCE), 1);
	npu_cmdbuf_destroy(cb);
	memcpy(dev, by->map, 4 * 108);
	memcpy(devr, br->map, 4 * 6);
	for (i = 0; i < 108; i++)
		assert_true(dev[i] >= 0.0f && dev[i] <= 1.0f);
	memset(by->map, 0, 4 * 108);
	memset(br->map, 0, 4 * 6);
	assert_int_equal(npu_op_run_cpu(op), 0);
	assert_int_equal(npu_op_run_cpu(rop), 0);
	assert_memory_equal(dev, by->map, 4 * 108);
	assert_memory_equal(devr, br->map, 4 * 6);
	/* L2 over N, W, C of a [0, 1] tensor: within sqrt(18) of zero. */
	for (i = 0; i < 6; i++)
		assert_true(devr[i] > 0.0f && devr[i] <= sqrtf(18.0f));
	npu_op_free(op);
	npu_op_free(rop);
	npu_tensor_free(tx);
	npu_tensor_free(tw);
	npu_tensor_free(ty);
	npu_tensor_free(tr);
	free(dev);
	free(devr);
	free(bx);
	free(bw);
	free(by);
	free(br);
	free(ctx);
}

/*
 * LUT through the op API: no parameters accepted, one device command
 * (run here by the reference over the arena) whose bytes are the
 * table's entries at each int8 code + 128, and the CPU path's the same.
 */
static void test_lut(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_tensor *tx = tensor(NPU_DTYPE_INT8, 2, (uint32_t[]){ 16, 16 });
	struct npu_tensor *tt = tensor(NPU_DTYPE_UINT8, 1, (uint32_t[]){ 256 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_UINT8, 2, (uint32_t[]){ 16, 16 });
	const struct npu_tensor *in[2] = { tx, tt };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_LUT };
	struct npu_buffer *bx, *bt, *by;
	struct npu_cmdbuf *cb;
	uint8_t *x, *tab, dev[256];
	struct npu_op *op;
	int i;

	(void)state;
	arena_used = 0;
	bx = fake_buf(ctx, 256);
	bt = fake_buf(ctx, 256);
	by = fake_buf(ctx, 256);
	x = bx->map;
	tab = bt->map;
	for (i = 0; i < 256; i++) {
		x[i] = (uint8_t)(i * 37 + 11);
		tab[i] = (uint8_t)(i * i + 3);
	}
	assert_int_equal(npu_tensor_set_quant(tx, 0.1f, -3), 0);
	assert_int_equal(npu_tensor_set_quant(tt, 0.02f, 17), 0);
	assert_int_equal(npu_tensor_set_quant(ty, 0.02f, 17), 0);
	npu_tensor_bind_buffer(tx, bx, 0);
	npu_tensor_bind_buffer(tt, bt, 0);
	npu_tensor_bind_buffer(ty, by, 0);
	p.act = NPU_ACT_RELU;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act = NPU_ACT_NONE;
	p.eltwise.kind = NPU_ELTWISE_SUB;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.eltwise.kind = 0;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_op_num_commands(op), 1);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	assert_int_equal(exec_stream(cb, VNPU_OP_LUT), 1);
	npu_cmdbuf_destroy(cb);
	memcpy(dev, by->map, 256);
	for (i = 0; i < 256; i++)
		assert_int_equal(dev[i], tab[(uint8_t)(x[i] ^ 0x80)]);
	memset(by->map, 0, 256);
	assert_int_equal(npu_op_run_cpu(op), 0);
	assert_memory_equal(dev, by->map, 256);
	npu_op_free(op);
	npu_tensor_free(tx);
	npu_tensor_free(tt);
	npu_tensor_free(ty);
	free(bx);
	free(bt);
	free(by);
	free(ctx);
}

/* POOL3D with indices over an NCDHW tensor described through strides. */
static void test_pool3d_cpu(void **state)
{
	/* NCDHW [1, 2, 2, 3, 3] seen as NDHWC [1, 2, 3, 3, 2] */
	uint32_t dx[5] = { 1, 2, 3, 3, 2 }, dy[5] = { 1, 1, 2, 2, 2 };
	uint64_t sx[5] = { 36, 9, 3, 1, 18 }, sy[5] = { 8, 4, 2, 1, 4 };
	struct npu_tensor *tx = tensor(NPU_DTYPE_FP32, 5, dx);
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 5, dy);
	struct npu_tensor *ti = tensor(NPU_DTYPE_INT32, 5, dy);
	const struct npu_tensor *in[3] = { tx, NULL, ti };
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_POOL3D, .pool3d = {
		.kind = NPU_POOL_MAX, .kernel = { 2, 2, 2 }, .stride = { 1, 1, 1 } } };
	enum npu_op_where where = 0;
	const char *why = NULL;
	struct npu_op *op;
	float x[36], y[8];
	int32_t ind[8];
	int i;

	(void)state;
	for (i = 0; i < 36; i++)
		x[i] = (float)((i * 7) % 36);
	assert_int_equal(npu_tensor_set_strides(tx, sx), 0);
	assert_int_equal(npu_tensor_set_strides(ty, sy), 0);
	assert_int_equal(npu_tensor_set_strides(ti, sy), 0);
	npu_tensor_bind_host(tx, x, sizeof(x));
	npu_tensor_bind_host(ty, y, sizeof(y));
	npu_tensor_bind_host(ti, ind, sizeof(ind));
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "indices"));
	assert_int_equal(npu_op_run(op, NULL, 0, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_CPU);
	/* every output is x at its index, and the largest of its window */
	for (i = 0; i < 8; i++) {
		int c = i / 4, oh = (i / 2) % 2, ow = i % 2, d, h, w;
		float m = -INFINITY;

		for (d = 0; d < 2; d++)
			for (h = 0; h < 2; h++)
				for (w = 0; w < 2; w++) {
					float v = x[c * 18 + d * 9 + (oh + h) * 3 + ow + w];

					m = v > m ? v : m;
				}
		assert_true(y[i] == m);
		assert_true(ind[i] >= 0 && ind[i] < 36 && x[ind[i]] == m);
	}
	npu_op_free(op);
	/* indices are MAX's only; kernels beyond 16 bits are refused */
	p.pool3d.kind = NPU_POOL_AVG;
	assert_int_equal(npu_op_create(&p, in, 3, ty, &op), -EINVAL);
	p.pool3d.kind = NPU_POOL_MAX;
	p.pool3d.kernel[0] = 70000;
	assert_int_equal(npu_op_create(&p, in, 1, ty, &op), -EINVAL);
	npu_tensor_free(tx);
	npu_tensor_free(ty);
	npu_tensor_free(ti);
}

/* ---- ABI review fixes (libnpu 1.3) ----------------------------------------- */

/*
 * A span that does not fit in 64 bits is an error at creation, not a
 * wrapped value (before 1.3 [2^32-1, 2^32-1] FP32 was created and
 * npu_tensor_span() returned its byte count modulo 2^64).
 */
static void test_span_overflow(void **state)
{
	const uint32_t wide[2] = { UINT32_MAX, UINT32_MAX };
	const uint32_t huge[3] = { UINT32_MAX, UINT32_MAX, 2 };
	struct npu_tensor *t = NULL;
	uint64_t span = 7;

	(void)state;
	/* elements fit (2^64 - 2^33 + 1), bytes do not */
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, wide, &t), -EOVERFLOW);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 3, huge, &t), -EOVERFLOW);
	assert_null(t);
	/* a byte tensor of as many elements still fits */
	assert_int_equal(npu_tensor_create(NPU_DTYPE_UINT8, 2, wide, &t), 0);
	assert_int_equal(npu_tensor_span(t, &span), 0);
	assert_true(span == (uint64_t)UINT32_MAX * UINT32_MAX);
	/* strides reaching past 2^64 are refused and change nothing */
	assert_int_equal(npu_tensor_set_strides(t, (uint64_t[]){ UINT64_MAX / 2, 4 }),
			 -EOVERFLOW);
	assert_int_equal(npu_tensor_span(t, &span), 0);
	assert_true(span == (uint64_t)UINT32_MAX * UINT32_MAX);
	assert_int_equal(npu_tensor_span(t, NULL), -EINVAL);
	assert_int_equal(npu_tensor_span(NULL, &span), -EINVAL);
	npu_tensor_free(t);
}

/* Host memory is bound with its length, checked against the span. */
static void test_bind_host_len(void **state)
{
	float mem[12];
	struct npu_tensor *t = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 4 });

	(void)state;
	assert_int_equal(npu_tensor_bind_host(t, mem, sizeof(mem) - 1), -ERANGE);
	assert_int_equal(npu_tensor_bind_host(t, mem, 0), -ERANGE);
	assert_int_equal(npu_tensor_bind_host(t, NULL, sizeof(mem)), -EINVAL);
	assert_int_equal(npu_tensor_bind_host(t, mem, sizeof(mem)), 0);
	/* a strided view needs only its span: rows of 5 over 3 rows */
	assert_int_equal(npu_tensor_set_strides(t, (uint64_t[]){ 5, 1 }), 0);
	assert_int_equal(npu_tensor_bind_host(t, mem, 4 * (2 * 5 + 4) - 4), -ERANGE);
	assert_int_equal(npu_tensor_bind_host(t, mem, 4 * (2 * 5 + 4)), 0);
	npu_tensor_free(t);
}

/*
 * struct npu_op_params carries its size: 0 is refused (a caller that did
 * not initialise it), an older caller's smaller struct has its missing
 * fields zero, a newer caller's larger one is fine while the fields this
 * library does not know are zero, else -E2BIG.
 */
static void test_op_params_size(void **state)
{
	float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 0, 0, 1, 1, 1 }, y[4];
	struct npu_tensor *ta = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	struct npu_tensor *tb = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 });
	const struct npu_tensor *in[2] = { ta, tb };
	struct {
		struct npu_op_params p;
		uint64_t newer[2];
	} big;
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	struct npu_op *op = NULL;

	(void)state;
	assert_int_equal(p.size, sizeof(p));
	npu_tensor_bind_host(ta, a, sizeof(a));
	npu_tensor_bind_host(tb, b, sizeof(b));
	npu_tensor_bind_host(ty, y, sizeof(y));
	p.kind = NPU_OP_GEMM;
	p.size = 0;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	assert_null(op);

	/* an older, shorter struct: act_beta (the last field) reads zero */
	p.size = offsetof(struct npu_op_params, act_beta);
	p.act_beta = 1.0f;	/* beyond its size: must not be seen */
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(npu_op_run_cpu(op), 0);
	assert_true(y[0] == 4 && y[3] == 11);
	npu_op_free(op);
	op = NULL;
	/* with the full size the stray act_beta is an invalid attribute */
	p.size = sizeof(p);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), -EINVAL);
	p.act_beta = 0.0f;

	memset(&big, 0, sizeof(big));
	big.p = p;
	big.p.size = sizeof(big);
	assert_int_equal(npu_op_create(&big.p, in, 2, ty, &op), 0);
	npu_op_free(op);
	op = NULL;
	big.newer[1] = 1;
	assert_int_equal(npu_op_create(&big.p, in, 2, ty, &op), -E2BIG);
	assert_null(op);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(ty);
}

/*
 * A buffer of its own memory (mmap'ed like a real mapping) whose last
 * reference really frees it, as npu_buffer_free() does for a device one.
 */
static struct npu_buffer *own_buf(struct npu_context *ctx, uint64_t size)
{
	struct npu_buffer *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	atomic_init(&b->refs, 1);
	npu__context_get(ctx);
	b->ctx = ctx;
	b->size = size;
	b->va = ARENA_VA;
	b->map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(b->map != MAP_FAILED);
	pthread_mutex_init(&b->map_lock, NULL);
	return b;
}

/*
 * ops.h promises an op keeps its buffers alive.  Before 1.3 it kept raw
 * pointers: freeing the buffer (and the tensors) before running the op
 * was a heap-use-after-free that ASan reports here.  Now the tensor and
 * the op hold references and the memory goes with the op.
 */
static void test_buffer_lifetime(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_buffer *buf = own_buf(ctx, 4096), *got[4];
	struct npu_tensor *ta = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 3 });
	struct npu_tensor *tb = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 2 });
	struct npu_tensor *ty = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 2, 2 });
	const struct npu_tensor *in[2] = { ta, tb };
	struct npu_op_params p = { .size = sizeof(p), .kind = NPU_OP_GEMM };
	struct npu_op *op = NULL;
	float *m = buf->map, y[4];
	int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		m[i] = (float)(i + 1);			/* A at 0 */
		m[64 + i] = (float)(i % 3 == 0);	/* B at 256 */
	}
	assert_int_equal(npu_tensor_bind_buffer(ta, buf, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(tb, buf, 256), 0);
	assert_int_equal(npu_tensor_bind_buffer(ty, buf, 512), 0);
	assert_int_equal(atomic_load(&buf->refs), 4);
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	assert_int_equal(atomic_load(&buf->refs), 5);	/* one for the op */

	/* every other holder goes first */
	npu_buffer_free(buf);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(ty);
	assert_int_equal(atomic_load(&buf->refs), 1);

	assert_int_equal(npu_op_buffers(op, got, 4), 1);
	assert_ptr_equal(got[0], buf);
	assert_int_equal(npu_buffer_va(got[0]), ARENA_VA);
	assert_int_equal(npu_op_run_cpu(op), 0);
	memcpy(y, m + 128, sizeof(y));
	/* A [[1,2,3],[4,5,6]] x B [[1,0],[0,1],[0,0]] (B[i][j] = (2i+j)%3==0) */
	assert_true(y[0] == 1 && y[1] == 2 && y[2] == 4 && y[3] == 5);
	npu_op_free(op);	/* the last reference: unmapped and freed */
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

/* Rebinding a tensor moves its reference; freeing it drops it. */
static void test_tensor_rebind_refs(void **state)
{
	struct npu_context *ctx = fake_ctx();
	struct npu_buffer *b1 = own_buf(ctx, 4096), *b2 = own_buf(ctx, 4096);
	struct npu_tensor *t = tensor(NPU_DTYPE_FP32, 1, (uint32_t[]){ 4 });
	float host[4];

	(void)state;
	assert_int_equal(npu_tensor_bind_buffer(t, b1, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(t, b1, 16), 0);
	assert_int_equal(atomic_load(&b1->refs), 2);
	assert_int_equal(npu_tensor_bind_buffer(t, b2, 0), 0);
	assert_int_equal(atomic_load(&b1->refs), 1);
	assert_int_equal(atomic_load(&b2->refs), 2);
	/* a failed bind keeps the old one */
	assert_int_equal(npu_tensor_bind_buffer(t, b1, 4092), -ERANGE);
	assert_int_equal(atomic_load(&b2->refs), 2);
	assert_int_equal(npu_tensor_bind_host(t, host, sizeof(host)), 0);
	assert_int_equal(atomic_load(&b2->refs), 1);
	npu_buffer_free(b1);
	assert_int_equal(npu_tensor_bind_buffer(t, b2, 0), 0);
	npu_buffer_free(b2);	/* the tensor's reference keeps it */
	((float *)b2->map)[3] = 2.5f;
	npu_tensor_free(t);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensor_validation),
		cmocka_unit_test(test_span_overflow),
		cmocka_unit_test(test_bind_host_len),
		cmocka_unit_test(test_op_params_size),
		cmocka_unit_test(test_buffer_lifetime),
		cmocka_unit_test(test_tensor_rebind_refs),
		cmocka_unit_test(test_bind_buffer_range),
		cmocka_unit_test(test_op_validation),
		cmocka_unit_test(test_cpu_gemm_float),
		cmocka_unit_test(test_cpu_gemm_int8_acc),
		cmocka_unit_test(test_cpu_conv_strided_nchw),
		cmocka_unit_test(test_tiled_gemm),
		cmocka_unit_test(test_tiled_conv),
		cmocka_unit_test(test_untileable_and_exdev),
		cmocka_unit_test(test_no_compute_cap),
		cmocka_unit_test(test_clip),
		cmocka_unit_test(test_pool_dilation),
		cmocka_unit_test(test_int_eltwise_cpu),
		cmocka_unit_test(test_pool3d_cpu),
		cmocka_unit_test(test_convt_reduce_hsig),
		cmocka_unit_test(test_lut),
		cmocka_unit_test(test_copy_resize_api),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
