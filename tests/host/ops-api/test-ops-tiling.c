// SPDX-License-Identifier: MIT
/*
 * libnpu's device commands against the command limits a device reports
 * (hw-spec.rst, "Command limits"): an op beyond them is split into
 * commands that each pass the device's own check with those limits and
 * together compute exactly what the untiled op computes on the CPU; an op
 * no split can fit runs on the CPU, with a reason naming the limit.
 */
#include <math.h>

#include "fake_dev.h"
#include "npu_tile.h"

#define CMD_SIZE	sizeof(struct vnpu_cmd_compute)

/* A context whose device reports @l (reported = 1). */
static struct npu_context *limited_ctx(const struct npu_device_limits *l)
{
	struct npu_context *ctx = fake_ctx();

	ctx->limits = *l;
	ctx->limits.reported = 1;
	return ctx;
}

/* Interface 1.1's values, for a test to lower one or two of them. */
static struct npu_device_limits v11(void)
{
	struct npu_device_limits l = {
		.reported = 1,
		.tensor_elems = VNPU_LIMIT_TENSOR_ELEMS,
		.tensor_bytes = VNPU_LIMIT_TENSOR_BYTES,
		.cmd_bytes = VNPU_LIMIT_CMD_BYTES,
		.cmd_macs = VNPU_LIMIT_CMD_MACS,
		.reduction = VNPU_LIMIT_REDUCTION,
		.kernel_dim = VNPU_LIMIT_KERNEL_DIM,
		.channels = VNPU_LIMIT_CHANNELS,
	};

	return l;
}

static void to_op_limits(const struct npu_device_limits *l,
			 struct vnpu_op_limits *o)
{
	o->tensor_elems = l->tensor_elems;
	o->tensor_bytes = l->tensor_bytes;
	o->cmd_bytes = l->cmd_bytes;
	o->cmd_macs = l->cmd_macs;
	o->reduction = l->reduction;
	o->kernel_dim = (uint32_t)l->kernel_dim;
	o->channels = (uint32_t)l->channels;
}

/*
 * Encode @op and check every command with the device's checker against
 * @l; returns the stream (caller destroys it), the command count, and the
 * total work units and output elements so a test can see the tiles cover
 * the op exactly once.
 */
static struct npu_cmdbuf *encode_checked(const struct npu_op *op,
					 const struct npu_device_limits *l,
					 size_t *ncmd, uint64_t *work,
					 uint64_t *out_elems)
{
	struct vnpu_op_limits lim;
	struct npu_cmdbuf *cb = NULL;
	size_t i;

	to_op_limits(l, &lim);
	*ncmd = npu_op_num_commands(op);
	assert_true(*ncmd > 0);
	assert_int_equal(npu_cmdbuf_create(NULL, *ncmd * CMD_SIZE, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), 0);
	assert_int_equal(npu_cmdbuf_size(cb), *ncmd * CMD_SIZE);
	*work = 0;
	*out_elems = 0;
	for (i = 0; i < *ncmd; i++) {
		const uint8_t *p = (const uint8_t *)npu_cmdbuf_data(cb) + i * CMD_SIZE;
		struct vnpu_cmd_compute c;
		struct vnpu_op_info info;
		uint64_t e = 1;
		int d;

		assert_int_equal(vnpu_op_check_limits(p, CMD_SIZE, &c, &info, &lim), 0);
		assert_true(info.macs <= l->cmd_macs);
		for (d = 0; d < c.t[3].rank; d++)
			e *= c.t[3].dims[d];
		/*
		 * A GEMM's work units also count its epilogue and its
		 * batches' setup, which tiling multiplies: count its MACs.
		 */
		if (c.hdr.opcode == VNPU_OP_GEMM)
			*work += e * c.t[0].dims[c.t[0].rank -
				(c.attr.gemm.flags & VNPU_GEMM_TRANS_A ? 2 : 1)];
		else
			*work += info.macs;
		*out_elems += e;
	}
	return cb;
}

/* Buffers and tensors of one GEMM test: A, B, bias, and two Ys. */
struct gemm_fix {
	struct npu_context *ctx;
	struct npu_tensor *a, *b, *c, *y, *y2;
	struct npu_buffer *ba, *bb, *bc, *by, *by2;
	size_t ybytes;
};

static void gemm_fix_init(struct gemm_fix *f, struct npu_context *ctx,
			  bool quant, uint32_t ra, const uint32_t *ad,
			  uint32_t rb, const uint32_t *bd, uint32_t ry,
			  const uint32_t *yd)
{
	enum npu_dtype dt = quant ? NPU_DTYPE_UINT8 : NPU_DTYPE_FP32;
	uint32_t n = yd[ry - 1];
	size_t ea, eb;

	memset(f, 0, sizeof(*f));
	f->ctx = ctx;
	f->a = tensor(dt, ra, ad);
	f->b = tensor(dt, rb, bd);
	f->c = tensor(quant ? NPU_DTYPE_INT32 : NPU_DTYPE_FP32, 1, &n);
	f->y = tensor(dt, ry, yd);
	f->y2 = tensor(dt, ry, yd);
	if (quant) {
		npu_tensor_set_quant(f->a, 0.02f, 100);
		npu_tensor_set_quant(f->b, 0.03f, 7);
		npu_tensor_set_quant(f->y, 0.5f, 3);
		npu_tensor_set_quant(f->y2, 0.5f, 3);
	}
	f->ba = fake_buf(ctx, span_of(f->a));
	f->bb = fake_buf(ctx, span_of(f->b));
	f->bc = fake_buf(ctx, span_of(f->c));
	f->by = fake_buf(ctx, span_of(f->y));
	f->by2 = fake_buf(ctx, span_of(f->y2));
	f->ybytes = span_of(f->y);
	ea = span_of(f->a) / npu_dtype_size(dt);
	eb = span_of(f->b) / npu_dtype_size(dt);
	if (quant) {
		fill_u8(f->ba->map, ea, 1);
		fill_u8(f->bb->map, eb, 2);
		for (uint32_t i = 0; i < n; i++)
			((int32_t *)f->bc->map)[i] = (int32_t)(i * 37) - 300;
	} else {
		fill_f32(f->ba->map, ea, 1);
		fill_f32(f->bb->map, eb, 2);
		fill_f32(f->bc->map, n, 3);
	}
	memset(f->by->map, 0xa5, f->by->size);
	memset(f->by2->map, 0x5a, f->by2->size);
	assert_int_equal(npu_tensor_bind_buffer(f->a, f->ba, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->b, f->bb, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->c, f->bc, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->y, f->by, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->y2, f->by2, 0), 0);
}

/* The op into Y, and the same op into Y2. */
static void gemm_fix_ops(struct gemm_fix *f, const struct npu_op_params *p,
			 struct npu_op **op, struct npu_op **op2)
{
	const struct npu_tensor *in[3] = { f->a, f->b, f->c };

	assert_int_equal(npu_op_create(p, in, 3, f->y, op), 0);
	assert_int_equal(npu_op_create(p, in, 3, f->y2, op2), 0);
}

static void gemm_fix_fini(struct gemm_fix *f)
{
	npu_tensor_free(f->a);
	npu_tensor_free(f->b);
	npu_tensor_free(f->c);
	npu_tensor_free(f->y);
	npu_tensor_free(f->y2);
	free(f->ba);
	free(f->bb);
	free(f->bc);
	free(f->by);
	free(f->by2);
	free(f->ctx);
}

/*
 * MACs above CMD_MACS: split along M and N into commands that each fit
 * every limit, cover the output once and reproduce the CPU bit for bit.
 */
static void test_gemm_split_by_macs(void **state)
{
	enum { M = 37, K = 16, N = 29 };
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .act = NPU_ACT_RELU };
	uint64_t work, elems, min_cmds;
	struct npu_op *op, *cpu;
	struct npu_cmdbuf *cb;
	struct gemm_fix f;
	size_t ncmd;
	int q;

	(void)state;
	l.cmd_macs = 4096;
	min_cmds = ((uint64_t)M * N * K + l.cmd_macs - 1) / l.cmd_macs;
	for (q = 0; q < 2; q++) {
		arena_used = 0;
		gemm_fix_init(&f, limited_ctx(&l), q, 2, (uint32_t[]){ M, K },
			      2, (uint32_t[]){ K, N }, 2, (uint32_t[]){ M, N });
		gemm_fix_ops(&f, &p, &op, &cpu);
		assert_int_equal(npu_op_supported(op, NULL), 1);
		cb = encode_checked(op, &l, &ncmd, &work, &elems);
		/* Every MAC and output element exactly once... */
		assert_int_equal(work, (uint64_t)M * N * K);
		assert_int_equal(elems, (uint64_t)M * N);
		/* ...in few commands: halving never more than doubles them. */
		assert_true(ncmd >= min_cmds && ncmd <= 2 * min_cmds);
		assert_int_equal(exec_stream(cb, VNPU_OP_GEMM), (int)ncmd);
		assert_int_equal(npu_op_run_cpu(cpu), 0);
		assert_memory_equal(f.by->map, f.by2->map, f.ybytes);
		npu_cmdbuf_destroy(cb);
		npu_op_free(op);
		npu_op_free(cpu);
		gemm_fix_fini(&f);
	}
}

/*
 * TENSOR_ELEMS so small that M and N tiles of 1 are not enough: the batch
 * axis is split too, and a B broadcast along it is not sliced.
 */
static void test_gemm_split_batch(void **state)
{
	enum { BATCH = 6, M = 2, K = 8, N = 3 };
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_op *op, *cpu;
	struct npu_cmdbuf *cb;
	uint64_t work, elems;
	struct gemm_fix f;
	size_t ncmd, i;

	(void)state;
	arena_used = 0;
	l.tensor_elems = 10;	/* one row of A (K = 8), not two */
	gemm_fix_init(&f, limited_ctx(&l), false, 3, (uint32_t[]){ BATCH, M, K },
		      3, (uint32_t[]){ 1, K, N }, 3, (uint32_t[]){ BATCH, M, N });
	gemm_fix_ops(&f, &p, &op, &cpu);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	cb = encode_checked(op, &l, &ncmd, &work, &elems);
	assert_int_equal(ncmd, BATCH * M * N);
	assert_int_equal(work, (uint64_t)BATCH * M * N * K);
	for (i = 0; i < ncmd; i++) {
		struct vnpu_cmd_compute c;

		memcpy(&c, (const uint8_t *)npu_cmdbuf_data(cb) + i * CMD_SIZE, CMD_SIZE);
		assert_int_equal(c.t[0].dims[0], 1);
		/* The broadcast B keeps its one batch entry at its own address. */
		assert_int_equal(c.t[1].dims[0], 1);
		assert_true(c.t[1].va >= f.bb->va && c.t[1].va < f.bb->va + K * N * 4);
	}
	assert_int_equal(exec_stream(cb, VNPU_OP_GEMM), (int)ncmd);
	assert_int_equal(npu_op_run_cpu(cpu), 0);
	assert_memory_equal(f.by->map, f.by2->map, f.ybytes);
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);
	npu_op_free(cpu);
	gemm_fix_fini(&f);
}

/*
 * K above REDUCTION: no split helps (K is never split), so an int8
 * requantized GEMM goes to the CPU with the limit named, and the CPU
 * gives what a device without that limit computes.
 */
static void test_gemm_k_beyond_reduction(void **state)
{
	enum { M = 5, K = 40, N = 7 };
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_GEMM, .act = NPU_ACT_RELU6 };
	const struct npu_tensor *in[3];
	enum npu_op_where where = 0;
	struct npu_op *op, *dev;
	struct npu_cmdbuf *cb;
	struct gemm_fix f;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	l.reduction = K - 1;
	gemm_fix_init(&f, limited_ctx(&l), true, 2, (uint32_t[]){ M, K },
		      2, (uint32_t[]){ K, N }, 2, (uint32_t[]){ M, N });
	in[0] = f.a;
	in[1] = f.b;
	in[2] = f.c;
	assert_int_equal(npu_op_create(&p, in, 3, f.y, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "REDUCTION"));
	assert_non_null(strstr(why, "GEMM K"));
	assert_int_equal(npu_op_num_commands(op), 0);
	assert_int_equal(npu_cmdbuf_create(NULL, 4096, &cb), 0);
	assert_int_equal(npu_op_encode(op, cb), -ENOTSUP);
	npu_cmdbuf_destroy(cb);
	assert_int_equal(npu_op_run(op, NULL, 0, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_CPU);

	/* With K within REDUCTION the same op is one device command. */
	f.ctx->limits.reduction = K;
	assert_int_equal(npu_op_create(&p, in, 3, f.y2, &dev), 0);
	assert_int_equal(npu_op_num_commands(dev), 1);
	assert_int_equal(npu_cmdbuf_create(NULL, CMD_SIZE, &cb), 0);
	assert_int_equal(npu_op_encode(dev, cb), 0);
	assert_int_equal(exec_stream(cb, VNPU_OP_GEMM), 1);
	assert_memory_equal(f.by->map, f.by2->map, f.ybytes);
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);
	npu_op_free(dev);
	gemm_fix_fini(&f);
}

/* More tiles than one command buffer holds: the CPU, with that reason. */
static void test_gemm_too_many_commands(void **state)
{
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_GEMM };
	struct npu_op *op, *op2;
	struct gemm_fix f;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	/* At most 8 outputs of K = 8 a command: 8 x 9 + one batch's 64. */
	l.cmd_macs = 8 * 9 + VNPU_WORK_GEMM_BATCH;
	gemm_fix_init(&f, limited_ctx(&l), false, 2, (uint32_t[]){ 16, 8 },
		      2, (uint32_t[]){ 8, 16 }, 2, (uint32_t[]){ 16, 16 });
	/* 256 outputs in tiles of 8 or fewer: 32 commands at least. */
	f.ctx->info.max_cmd_size = 16 * CMD_SIZE;
	gemm_fix_ops(&f, &p, &op, &op2);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "command buffer"));
	npu_op_free(op);
	npu_op_free(op2);
	f.ctx->info.max_cmd_size = 64 * CMD_SIZE;
	gemm_fix_ops(&f, &p, &op, &op2);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_true(npu_op_num_commands(op) >= 32 && npu_op_num_commands(op) <= 64);
	npu_op_free(op);
	npu_op_free(op2);
	gemm_fix_fini(&f);
}

struct conv_fix {
	struct npu_context *ctx;
	struct npu_tensor *x, *w, *y, *y2;
	struct npu_buffer *bx, *bw, *by, *by2;
};

enum { CN = 3, CH = 11, CW = 6, CC = 4, CO = 5, CK = 3 };
enum { COH = (CH + 1 + 1 - CK) / 2 + 1, COW = CW + 2 - CK + 1 };

/* NHWC X [3,11,6,4], W [5,3,3,4], stride 2 x 1, pad 1: Y [3,6,6,5]. */
static void conv_fix_init(struct conv_fix *f, struct npu_context *ctx,
			  uint32_t kh)
{
	memset(f, 0, sizeof(*f));
	f->ctx = ctx;
	f->x = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CN, CH, CW, CC });
	f->w = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CO, kh, CK, CC });
	f->y = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CN, COH, COW, CO });
	f->y2 = tensor(NPU_DTYPE_FP32, 4, (uint32_t[]){ CN, COH, COW, CO });
	f->bx = fake_buf(ctx, span_of(f->x));
	f->bw = fake_buf(ctx, span_of(f->w));
	f->by = fake_buf(ctx, span_of(f->y));
	f->by2 = fake_buf(ctx, span_of(f->y));
	fill_f32(f->bx->map, CN * CH * CW * CC, 21);
	fill_f32(f->bw->map, CO * kh * CK * CC, 22);
	assert_int_equal(npu_tensor_bind_buffer(f->x, f->bx, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->w, f->bw, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->y, f->by, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(f->y2, f->by2, 0), 0);
}

static int conv_fix_op(struct conv_fix *f, const struct npu_tensor *y,
		       struct npu_op **op)
{
	const struct npu_tensor *in[2] = { f->x, f->w };
	struct npu_op_params p = {
		.size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D, .act = NPU_ACT_TANH,
		.conv = { .stride = { 2, 1 }, .dilation = { 1, 1 },
			  .pad = { 1, 1, 1, 1 }, .groups = 1 },
	};

	return npu_op_create(&p, in, 2, y, op);
}

static void conv_fix_fini(struct conv_fix *f)
{
	npu_tensor_free(f->x);
	npu_tensor_free(f->w);
	npu_tensor_free(f->y);
	npu_tensor_free(f->y2);
	free(f->bx);
	free(f->bw);
	free(f->by);
	free(f->by2);
	free(f->ctx);
}

/* CMD_MACS below one image's work: split along batch and output rows. */
static void test_conv_split_by_macs(void **state)
{
	struct npu_device_limits l = v11();
	uint64_t total = (uint64_t)CN * COH * COW * CO * CK * CK * CC;
	uint64_t work, elems;
	struct npu_op *op, *cpu;
	struct npu_cmdbuf *cb;
	struct conv_fix f;
	size_t ncmd;

	(void)state;
	arena_used = 0;
	l.cmd_macs = total / CN / 3;	/* a third of one image */
	conv_fix_init(&f, limited_ctx(&l), CK);
	assert_int_equal(conv_fix_op(&f, f.y, &op), 0);
	assert_int_equal(conv_fix_op(&f, f.y2, &cpu), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	cb = encode_checked(op, &l, &ncmd, &work, &elems);
	assert_int_equal(work, total);
	assert_int_equal(elems, (uint64_t)CN * COH * COW * CO);
	assert_true(ncmd >= 3 * CN && ncmd <= 6 * CN);
	assert_int_equal(exec_stream(cb, VNPU_OP_CONV2D), (int)ncmd);
	assert_int_equal(npu_op_run_cpu(cpu), 0);
	assert_memory_equal(f.by->map, f.by2->map, span_of(f.y));
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);
	npu_op_free(cpu);
	conv_fix_fini(&f);
}

/* Limits no row or batch split changes: the CPU, the limit named. */
static void test_conv_unsplittable(void **state)
{
	static const struct {
		uint64_t red, kdim, bytes;
		const char *name;
	} cases[] = {
		{ CK * CK * CC - 1, 0, 0, "REDUCTION" },
		{ 0, CK - 1, 0, "KERNEL_DIM" },
		/* The weights are never split. */
		{ 0, 0, CO * CK * CK * CC * 4 - 4, "TENSOR_BYTES" },
	};
	struct npu_op *op;
	struct conv_fix f;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npu_device_limits l = v11();

		arena_used = 0;
		if (cases[i].red)
			l.reduction = cases[i].red;
		if (cases[i].kdim)
			l.kernel_dim = cases[i].kdim;
		if (cases[i].bytes)
			l.tensor_bytes = cases[i].bytes;
		conv_fix_init(&f, limited_ctx(&l), CK);
		assert_int_equal(conv_fix_op(&f, f.y, &op), 0);
		why = NULL;
		assert_int_equal(npu_op_supported(op, &why), 0);
		assert_non_null(strstr(why, cases[i].name));
		assert_int_equal(npu_op_num_commands(op), 0);
		npu_op_free(op);
		conv_fix_fini(&f);
	}
}

/* Per-channel weights with more output channels than CHANNELS. */
static void test_conv_channels(void **state)
{
	struct npu_device_limits l = v11();
	float scales[CO] = { 0.1f, 0.2f, 0.3f, 0.4f, 0.5f };
	struct npu_context *ctx;
	struct npu_tensor *x, *w, *y;
	struct npu_buffer *bx, *bw, *by;
	const struct npu_tensor *in[2];
	struct npu_op_params p = {
		.size = sizeof(struct npu_op_params), .kind = NPU_OP_CONV2D,
		.conv = { .stride = { 1, 1 }, .dilation = { 1, 1 }, .groups = 1 },
	};
	struct npu_op *op;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	l.channels = CO - 1;
	ctx = limited_ctx(&l);
	x = tensor(NPU_DTYPE_UINT8, 4, (uint32_t[]){ 1, 4, 4, CC });
	w = tensor(NPU_DTYPE_INT8, 4, (uint32_t[]){ CO, 1, 1, CC });
	y = tensor(NPU_DTYPE_UINT8, 4, (uint32_t[]){ 1, 4, 4, CO });
	npu_tensor_set_quant(x, 0.1f, 128);
	assert_int_equal(npu_tensor_set_quant_channel(w, 0, scales, NULL), 0);
	npu_tensor_set_quant(y, 0.2f, 0);
	bx = fake_buf(ctx, span_of(x));
	bw = fake_buf(ctx, span_of(w));
	by = fake_buf(ctx, span_of(y));
	npu_tensor_bind_buffer(x, bx, 0);
	npu_tensor_bind_buffer(w, bw, 0);
	npu_tensor_bind_buffer(y, by, 0);
	in[0] = x;
	in[1] = w;
	assert_int_equal(npu_op_create(&p, in, 2, y, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "CHANNELS"));
	npu_op_free(op);
	npu_tensor_free(x);
	npu_tensor_free(w);
	npu_tensor_free(y);
	free(bx);
	free(bw);
	free(by);
	free(ctx);
}

/* An op that is never split, beyond a limit: the CPU, the limit named. */
static void test_softmax_beyond_reduction(void **state)
{
	struct npu_device_limits l = v11();
	struct npu_context *ctx;
	struct npu_tensor *x, *y;
	struct npu_buffer *bx, *by;
	const struct npu_tensor *in[1];
	struct npu_op_params p = { .size = sizeof(struct npu_op_params),
		.kind = NPU_OP_SOFTMAX, .softmax.axis = 1 };
	struct npu_op *op;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	l.reduction = 15;
	ctx = limited_ctx(&l);
	x = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 16 });
	y = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 3, 16 });
	bx = fake_buf(ctx, span_of(x));
	by = fake_buf(ctx, span_of(y));
	fill_f32(bx->map, 48, 5);
	npu_tensor_bind_buffer(x, bx, 0);
	npu_tensor_bind_buffer(y, by, 0);
	in[0] = x;
	assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "REDUCTION"));
	assert_non_null(strstr(why, "cannot be split"));
	npu_op_free(op);

	/* An axis of 16 within a REDUCTION of 16: one command. */
	ctx->limits.reduction = 16;
	assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	assert_int_equal(npu_op_num_commands(op), 1);
	npu_op_free(op);
	npu_tensor_free(x);
	npu_tensor_free(y);
	free(bx);
	free(by);
	free(ctx);
}

/*
 * COPY beyond TENSOR_BYTES: tiles of the output, X narrowed to what lands
 * in each (KEEP, CONSTANT) or whole (EDGE, REFLECT, WRAP), every command
 * within the limits, together the CPU's result bit for bit, the border
 * kept where KEEP says so.  An X too large for a border that reads all of
 * it goes to the CPU, the limit named.
 */
static void test_copy_split(void **state)
{
	static const struct {
		uint32_t border, reverse, xd[3];
		int32_t off[3];
	} cases[] = {
		{ VNPU_COPY_BORDER_KEEP, 0, { 37, 23, 5 }, { 3, -2, 0 } },
		{ VNPU_COPY_BORDER_KEEP, 5, { 37, 23, 5 }, { -40, 3, 0 } },
		{ VNPU_COPY_BORDER_CONSTANT, 2, { 37, 23, 5 }, { 6, 2, 0 } },
		{ VNPU_COPY_BORDER_EDGE, 1, { 7, 6, 5 }, { 9, -1, 0 } },
		{ VNPU_COPY_BORDER_REFLECT, 3, { 7, 6, 5 }, { 2, 4, 0 } },
		{ VNPU_COPY_BORDER_WRAP, 0, { 7, 6, 5 }, { -3, 0, 0 } },
	};
	const uint32_t yd[3] = { 41, 29, 5 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npu_device_limits l = v11();
		struct npu_op_params p = { .size = sizeof(struct npu_op_params),
			.kind = NPU_OP_COPY };
		struct npu_context *ctx;
		struct npu_tensor *x, *y, *y2;
		struct npu_buffer *bx, *by, *by2;
		const struct npu_tensor *in[1];
		struct npu_op *op, *cpu;
		struct npu_cmdbuf *cb;
		uint64_t work, elems;
		size_t ncmd;

		arena_used = 0;
		l.tensor_bytes = 4096;
		ctx = limited_ctx(&l);
		p.copy.border = cases[i].border;
		p.copy.reverse = cases[i].reverse;
		p.copy.fill = cases[i].border == VNPU_COPY_BORDER_CONSTANT ? -7.5f : 0.0f;
		memcpy(p.copy.offset, cases[i].off, sizeof(cases[i].off));
		x = tensor(NPU_DTYPE_FP32, 3, cases[i].xd);
		y = tensor(NPU_DTYPE_FP32, 3, yd);
		y2 = tensor(NPU_DTYPE_FP32, 3, yd);
		bx = fake_buf(ctx, span_of(x));
		by = fake_buf(ctx, span_of(y));
		by2 = fake_buf(ctx, span_of(y2));
		fill_f32(bx->map, span_of(x) / 4, 9);
		fill_f32(by->map, span_of(y) / 4, 4);
		memcpy(by2->map, by->map, span_of(y));
		npu_tensor_bind_buffer(x, bx, 0);
		npu_tensor_bind_buffer(y, by, 0);
		npu_tensor_bind_buffer(y2, by2, 0);
		in[0] = x;
		assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
		assert_int_equal(npu_op_create(&p, in, 1, y2, &cpu), 0);
		assert_int_equal(npu_op_supported(op, NULL), 1);
		cb = encode_checked(op, &l, &ncmd, &work, &elems);
		assert_true(ncmd >= 6);
		assert_int_equal(elems, (uint64_t)yd[0] * yd[1] * yd[2]);
		assert_int_equal(exec_stream(cb, VNPU_OP_COPY), (int)ncmd);
		assert_int_equal(npu_op_run_cpu(cpu), 0);
		assert_memory_equal(by->map, by2->map, span_of(y));
		npu_cmdbuf_destroy(cb);
		npu_op_free(op);
		npu_op_free(cpu);
		npu_tensor_free(x);
		npu_tensor_free(y);
		npu_tensor_free(y2);
		free(bx);
		free(by);
		free(by2);
		free(ctx);
	}
}

/*
 * RESIZE beyond CMD_MACS: split along batch and channels, bit for bit the
 * CPU's result.  Channel tiles of NHWC still span whole images, so one
 * image beyond TENSOR_BYTES cannot be split.
 */
static void test_resize_split(void **state)
{
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_RESIZE,
				   .resize = { .mode = NPU_RESIZE_CUBIC, .cubic_a = -0.75f,
					       .coord = NPU_RESIZE_ALIGN_CORNERS } };
	const uint32_t xd[4] = { 3, 6, 5, 24 }, yd[4] = { 3, 11, 9, 24 };
	struct npu_context *ctx;
	struct npu_tensor *x, *y, *y2;
	struct npu_buffer *bx, *by, *by2;
	const struct npu_tensor *in[1];
	struct npu_op *op, *cpu;
	struct npu_cmdbuf *cb;
	uint64_t work, elems;
	const char *why = NULL;
	size_t ncmd;

	(void)state;
	arena_used = 0;
	l.cmd_macs = 10000;	/* one image is 38016 */
	ctx = limited_ctx(&l);
	x = tensor(NPU_DTYPE_FP32, 4, xd);
	y = tensor(NPU_DTYPE_FP32, 4, yd);
	y2 = tensor(NPU_DTYPE_FP32, 4, yd);
	bx = fake_buf(ctx, span_of(x));
	by = fake_buf(ctx, span_of(y));
	by2 = fake_buf(ctx, span_of(y2));
	fill_f32(bx->map, span_of(x) / 4, 3);
	npu_tensor_bind_buffer(x, bx, 0);
	npu_tensor_bind_buffer(y, by, 0);
	npu_tensor_bind_buffer(y2, by2, 0);
	in[0] = x;
	assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
	assert_int_equal(npu_op_create(&p, in, 1, y2, &cpu), 0);
	assert_int_equal(npu_op_supported(op, NULL), 1);
	cb = encode_checked(op, &l, &ncmd, &work, &elems);
	assert_true(ncmd >= 12);
	assert_int_equal(elems, (uint64_t)yd[0] * yd[1] * yd[2] * yd[3]);
	assert_int_equal(work, 16 * elems);
	assert_int_equal(exec_stream(cb, VNPU_OP_RESIZE), (int)ncmd);
	assert_int_equal(npu_op_run_cpu(cpu), 0);
	assert_memory_equal(by->map, by2->map, span_of(y));
	npu_cmdbuf_destroy(cb);
	npu_op_free(op);
	npu_op_free(cpu);

	/* Y's images span 9504 bytes: no split gets them below 4096. */
	ctx->limits.cmd_macs = VNPU_LIMIT_CMD_MACS;
	ctx->limits.tensor_bytes = 4096;
	assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "TENSOR_BYTES"));
	npu_op_free(op);
	npu_tensor_free(x);
	npu_tensor_free(y);
	npu_tensor_free(y2);
	free(bx);
	free(by);
	free(by2);
	free(ctx);
}

/* REFLECT reads all of X: an X beyond TENSOR_BYTES cannot be split. */
static void test_copy_unsplittable(void **state)
{
	struct npu_device_limits l = v11();
	struct npu_op_params p = { .size = sizeof(struct npu_op_params), .kind = NPU_OP_COPY,
				   .copy.border = NPU_COPY_BORDER_REFLECT };
	struct npu_context *ctx;
	struct npu_tensor *x, *y;
	struct npu_buffer *bx, *by;
	const struct npu_tensor *in[1];
	struct npu_op *op;
	const char *why = NULL;

	(void)state;
	arena_used = 0;
	l.tensor_bytes = 4096;
	ctx = limited_ctx(&l);
	x = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 40, 40 });
	y = tensor(NPU_DTYPE_FP32, 2, (uint32_t[]){ 44, 44 });
	bx = fake_buf(ctx, span_of(x));
	by = fake_buf(ctx, span_of(y));
	npu_tensor_bind_buffer(x, bx, 0);
	npu_tensor_bind_buffer(y, by, 0);
	in[0] = x;
	assert_int_equal(npu_op_create(&p, in, 1, y, &op), 0);
	assert_int_equal(npu_op_supported(op, &why), 0);
	assert_non_null(strstr(why, "TENSOR_BYTES"));
	npu_op_free(op);
	npu_tensor_free(x);
	npu_tensor_free(y);
	free(bx);
	free(by);
	free(ctx);
}

/*
 * What libnpu plans with: the reported limits, interface 1.1's where none
 * are reported (a 1.0 device, or no device at all), TENSOR_BYTES lowered
 * by max_tile_bytes but never raised.
 */
static void test_planning_limits(void **state)
{
	struct npu_device_limits none = { 0 }, l = v11(), e;
	struct vnpu_op_limits o;

	(void)state;
	npu__op_limits(NULL, 0, &o);
	assert_memory_equal(&o, &vnpu_op_limits_device, sizeof(o));
	npu__op_limits(&none, 0, &o);
	assert_memory_equal(&o, &vnpu_op_limits_device, sizeof(o));
	npu__limits_effective(&none, &e);
	assert_int_equal(e.reported, 0);
	assert_int_equal(e.cmd_macs, VNPU_LIMIT_CMD_MACS);
	assert_int_equal(e.channels, VNPU_LIMIT_CHANNELS);

	npu__op_limits(&none, 4096, &o);
	assert_int_equal(o.tensor_bytes, 4096);
	assert_int_equal(o.cmd_bytes, VNPU_LIMIT_CMD_BYTES);
	npu__op_limits(&none, 1ull << 40, &o);
	assert_int_equal(o.tensor_bytes, VNPU_LIMIT_TENSOR_BYTES);

	l.cmd_macs = 1000;
	l.kernel_dim = 7;
	npu__op_limits(&l, 0, &o);
	assert_int_equal(o.cmd_macs, 1000);
	assert_int_equal(o.kernel_dim, 7);
	assert_int_equal(o.reduction, VNPU_LIMIT_REDUCTION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_split),
		cmocka_unit_test(test_copy_unsplittable),
		cmocka_unit_test(test_resize_split),
		cmocka_unit_test(test_gemm_split_by_macs),
		cmocka_unit_test(test_gemm_split_batch),
		cmocka_unit_test(test_gemm_k_beyond_reduction),
		cmocka_unit_test(test_gemm_too_many_commands),
		cmocka_unit_test(test_conv_split_by_macs),
		cmocka_unit_test(test_conv_unsplittable),
		cmocka_unit_test(test_conv_channels),
		cmocka_unit_test(test_softmax_beyond_reduction),
		cmocka_unit_test(test_planning_limits),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
