// SPDX-License-Identifier: MIT
/*
 * Hostile compute commands: the command limits of hardware interface 1.1,
 * the byte offset a refusal names, self-overlapping outputs, the scratch
 * budget and abandoning a command part-way.  Each of the first group
 * crashed, hung or exhausted the host before the limits existed (the
 * GEMM below is the one from the security report: 32-bit packing sizes
 * wrapped to 0 and were then written 2^32 times).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

#define MEM_SIZE	(8u << 20)

#define OFF(field)	VNPU_CMD_OFF(field)
#define TOFF(slot, field)	VNPU_CMD_TENSOR_OFF(slot, field)
#define DIM_OFF(slot, d)	(TOFF(slot, dims) + 4u * (d))
#define STRIDE_OFF(slot, d)	(TOFF(slot, strides) + 8u * (d))

static struct flat f;
static uint8_t *snapshot;

/* vnpu_op_check() must refuse @c naming byte @off. */
static void refuse_at(const struct vnpu_cmd_compute *c, uint32_t off,
		      const char *what)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	if (vnpu_op_check(c, sizeof(*c), &cc, &info) != -EINVAL ||
	    info.err_off != off) {
		fprintf(stderr, "%s: want -EINVAL at %u, got err_off %u\n", what,
			off, info.err_off);
		fail();
	}
}

static void accept(const struct vnpu_cmd_compute *c, const char *what)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	if (vnpu_op_check(c, sizeof(*c), &cc, &info)) {
		fprintf(stderr, "%s: refused at %u\n", what, info.err_off);
		fail();
	}
}

/* Run through the engine: @err, and memory untouched unless it succeeded. */
static void exec_expect(const struct vnpu_cmd_compute *c, int err,
			const char *what)
{
	int ret;

	memcpy(snapshot, f.mem, MEM_SIZE);
	ret = flat_exec(&f, c, sizeof(*c), NULL);
	if (ret != err) {
		fprintf(stderr, "%s: got %d, want %d\n", what, ret, err);
		fail();
	}
	assert_int_equal(f.maps, 0);
	if (err)
		assert_memory_equal(snapshot, f.mem, MEM_SIZE);
}

static void gemm(struct vnpu_cmd_compute *c, uint8_t dt, uint32_t m,
		 uint32_t k, uint32_t n)
{
	uint32_t da[2] = { m, k }, db[2] = { k, n }, dy[2] = { m, n };
	int i;

	cmd_init(c, VNPU_OP_GEMM);
	c->t[0] = tdesc(dt, 2, da);
	c->t[1] = tdesc(dt, 2, db);
	c->t[3] = tdesc(dt, 2, dy);
	if (dt == VNPU_DT_INT8)
		for (i = 0; i < 4; i++)
			if (i != 2)
				tquant(&c->t[i], 0.05f, 1);
	/* Far apart in the VA space: only the check looks at them. */
	c->t[0].va = 1ull << 40;
	c->t[1].va = 2ull << 40;
	c->t[3].va = 3ull << 40;
}

/* The report's command: each operand spans one byte, dims wrap 32 bits. */
static void issue_gemm(struct vnpu_cmd_compute *c)
{
	flat_reset(&f);
	gemm(c, VNPU_DT_INT8, 1, 0xffffffffu, 1);
	c->t[0].flags = VNPU_TENSOR_STRIDED;
	c->t[1].flags = VNPU_TENSOR_STRIDED;
	c->t[0].va = flat_alloc(&f, 64);
	c->t[1].va = flat_alloc(&f, 64);
	c->t[3].va = flat_alloc(&f, 64);
}

static void test_issue_gemm(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	issue_gemm(&c);
	refuse_at(&c, DIM_OFF(0, 1), "A = [1, 2^32-1] broadcast");
	exec_expect(&c, -EINVAL, "the reported crash");
	assert_int_equal(flat_engine.res.err_off, DIM_OFF(0, 1));
	/* The engine is still fine afterwards. */
	issue_gemm(&c);
	c.t[0].dims[1] = 64;
	c.t[1].dims[0] = 64;
	exec_expect(&c, 0, "the same shape, small");
}

static void test_limits(void **state)
{
	uint32_t big[1] = { VNPU_LIMIT_TENSOR_ELEMS };
	struct vnpu_cmd_compute c;

	(void)state;
	/* TENSOR_ELEMS */
	cmd_init(&c, VNPU_OP_ACTIVATION);
	c.t[0] = tdesc(VNPU_DT_INT8, 1, big);
	tquant(&c.t[0], 1.0f, 0);
	c.t[3] = c.t[0];
	c.t[0].va = 1ull << 40;
	c.t[3].va = 2ull << 40;
	accept(&c, "elements at the limit");
	c.t[0].dims[0]++;
	refuse_at(&c, DIM_OFF(0, 0), "elements past the limit");

	/* TENSOR_BYTES: two fp32 elements a stride apart. */
	cmd_init(&c, VNPU_OP_ACTIVATION);
	big[0] = 2;
	c.t[0] = tdesc(VNPU_DT_FP32, 1, big);
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	c.t[0].strides[0] = VNPU_LIMIT_TENSOR_BYTES / 4 - 1;
	c.t[3] = tdesc(VNPU_DT_FP32, 1, big);
	c.t[0].va = 1ull << 40;
	c.t[3].va = 2ull << 40;
	accept(&c, "span at the limit");
	c.t[0].strides[0]++;
	refuse_at(&c, TOFF(0, strides), "span past the limit");
	/* A huge stride on a dim of extent 1 is refused too. */
	c.t[0].dims[0] = 1;
	c.t[3].dims[0] = 1;
	c.t[0].strides[0] = 1ull << 62;
	refuse_at(&c, STRIDE_OFF(0, 0), "stride beyond the span limit");

	/* CMD_BYTES: three 128 MiB operands. */
	cmd_init(&c, VNPU_OP_ELTWISE);
	big[0] = 1u << 25;
	c.t[0] = tdesc(VNPU_DT_FP32, 1, big);
	c.t[1] = c.t[0];
	c.t[3] = c.t[0];
	c.t[0].va = 1ull << 40;
	c.t[1].va = 2ull << 40;
	c.t[3].va = 3ull << 40;
	refuse_at(&c, 0, "bytes per command");
	c.t[0].dims[0] = c.t[1].dims[0] = c.t[3].dims[0] = 1u << 24;
	accept(&c, "192 MiB per command");

	/*
	 * CMD_MACS: M x N x (K + 1) + VNPU_WORK_GEMM_BATCH work units, so
	 * 2048 x 1022 x 2048 is 64 below 2^32 (the last 2^22 + 64 units
	 * are the epilogue's and the batch's), and K = 1023 is past it.
	 */
	gemm(&c, VNPU_DT_INT8, 2048, 1022, 2048);
	accept(&c, "MACs at the limit");
	gemm(&c, VNPU_DT_INT8, 2048, 1023, 2048);
	refuse_at(&c, 0, "MACs past the limit");
	/* Many tiny batches are counted at what they cost. */
	gemm(&c, VNPU_DT_INT8, 1, 1, 1);
	c.t[0].rank = c.t[1].rank = c.t[3].rank = 3;
	c.t[0].dims[2] = c.t[0].dims[1];
	c.t[0].dims[1] = c.t[0].dims[0];
	c.t[0].dims[0] = 1u << 16;
	c.t[1].dims[2] = c.t[1].dims[1];
	c.t[1].dims[1] = c.t[1].dims[0];
	c.t[1].dims[0] = 1u << 16;
	c.t[3].dims[2] = c.t[3].dims[1];
	c.t[3].dims[1] = c.t[3].dims[0];
	c.t[3].dims[0] = 1u << 16;
	{
		struct vnpu_cmd_compute cc;
		struct vnpu_op_info info;

		assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
		assert_int_equal(info.macs, (1u << 16) * (2 + VNPU_WORK_GEMM_BATCH));
	}

	/* REDUCTION: K. */
	gemm(&c, VNPU_DT_FP32, 1, VNPU_LIMIT_REDUCTION, 1);
	accept(&c, "K at the limit");
	gemm(&c, VNPU_DT_FP32, 1, VNPU_LIMIT_REDUCTION + 1, 1);
	refuse_at(&c, DIM_OFF(0, 1), "K past the limit");

	/* CHANNELS: per-channel B along N. */
	gemm(&c, VNPU_DT_INT8, 1, 4, VNPU_LIMIT_CHANNELS + 1);
	c.t[1].quant = VNPU_QUANT_CHANNEL;
	c.t[1].scale = 0;
	c.t[1].zero_point = 0;
	c.t[1].quant_axis = 1;
	c.t[1].quant_va = 4ull << 40;
	refuse_at(&c, TOFF(1, quant_axis), "per-channel array length");
	c.t[1].dims[1] = c.t[3].dims[1] = VNPU_LIMIT_CHANNELS;
	accept(&c, "per-channel array at the limit");
}

static void conv(struct vnpu_cmd_compute *c, uint32_t h, uint32_t kh,
		 uint32_t ci, uint32_t groups)
{
	uint32_t dx[4] = { 1, h, 1, ci }, dw[4] = { ci, kh, 1, ci / groups };
	uint32_t dy[4] = { 1, h - kh + 1, 1, ci };

	cmd_init(c, VNPU_OP_CONV2D);
	c->t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c->t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c->t[3] = tdesc(VNPU_DT_FP32, 4, dy);
	c->t[0].va = 1ull << 40;
	c->t[1].va = 2ull << 40;
	c->t[3].va = 3ull << 40;
	c->attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1, .stride_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = groups };
}

static void test_window_limits(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	conv(&c, 2000, VNPU_LIMIT_KERNEL_DIM, 1, 1);
	accept(&c, "kernel height at the limit");
	conv(&c, 2000, VNPU_LIMIT_KERNEL_DIM + 1, 1, 1);
	refuse_at(&c, DIM_OFF(1, 1), "kernel height past the limit");
	/* KH * C/groups: 1024 * 64 is the reduction limit, 1024 * 65 is not. */
	conv(&c, 1024, 1024, 64, 1);
	accept(&c, "conv reduction at the limit");
	conv(&c, 1024, 1024, 130, 2);
	refuse_at(&c, DIM_OFF(1, 3), "conv reduction past the limit");

	/* Pooling windows and global pooling count as reductions. */
	cmd_init(&c, VNPU_OP_POOL2D);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 512, 512, 1 });
	c.t[3] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 1, 1, 1 });
	c.t[0].va = 1ull << 40;
	c.t[3].va = 2ull << 40;
	c.attr.pool.kind = VNPU_POOL_GLOBAL_AVG;
	refuse_at(&c, DIM_OFF(0, 1), "global pool over 2^18 elements");
	c.t[0].dims[1] = 128;
	accept(&c, "global pool over 2^16 elements");
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_MAX,
		.kernel_h = VNPU_LIMIT_KERNEL_DIM + 1, .kernel_w = 1,
		.stride_h = 1, .stride_w = 1 };
	refuse_at(&c, OFF(attr.pool.kernel_h), "pool window past the limit");

	/* Softmax axis and layer-norm extent. */
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, VNPU_LIMIT_REDUCTION + 1 });
	c.t[3] = c.t[0];
	c.t[0].va = 1ull << 40;
	c.t[3].va = 2ull << 40;
	c.attr.softmax.axis = 1;
	refuse_at(&c, OFF(attr.softmax.axis), "softmax axis past the limit");
	c.attr.softmax.axis = 0;
	accept(&c, "softmax over a short axis");
	c.hdr.opcode = VNPU_OP_LAYERNORM;
	c.attr.layernorm.axis = 1;
	refuse_at(&c, OFF(attr.layernorm.axis), "layer norm extent past the limit");
}

/* The CPU fallback is not bound by the device's limits. */
static void test_host_limits(void **state)
{
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	gemm(&c, VNPU_DT_FP32, 1, VNPU_LIMIT_REDUCTION * 4, 1);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), 0);
	gemm(&c, VNPU_DT_INT8, 4096, 4096, 4096);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), -EINVAL);
	assert_int_equal(vnpu_ref_check(&c, sizeof(c), &cc, &info), 0);
}

static void test_error_offsets(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	accept(&c, "fp32 gemm");
	c.hdr.flags = 1;
	refuse_at(&c, OFF(hdr.flags), "header flags");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.round = 9;
	refuse_at(&c, OFF(round), "rounding");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.attr.gemm.reserved[5] = 1;
	refuse_at(&c, OFF(attr.gemm.reserved) + 20, "the sixth reserved word");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.t[1].reserved[1] = 1ull << 56;
	refuse_at(&c, TOFF(1, reserved) + 15, "B's reserved byte");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.t[3].dims[1] = 5;
	refuse_at(&c, DIM_OFF(3, 1), "N of Y");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.t[1].dims[0] = 7;
	refuse_at(&c, DIM_OFF(1, 0), "K of B");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	c.t[0].va += 2;
	refuse_at(&c, TOFF(0, va), "misaligned A");
	gemm(&c, VNPU_DT_FP32, 2, 3, 4);
	memset(&c.t[1], 0, sizeof(c.t[1]));
	refuse_at(&c, TOFF(1, va), "B absent");
}

static void test_self_overlap(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	gemm(&c, VNPU_DT_FP32, 4, 3, 4);
	c.t[3].flags = VNPU_TENSOR_STRIDED;
	c.t[3].strides[0] = 4;
	c.t[3].strides[1] = 1;
	accept(&c, "dense output, strides spelled out");
	c.t[3].strides[0] = 1;
	c.t[3].strides[1] = 4;
	accept(&c, "transposed output");
	c.t[3].strides[0] = 8;
	c.t[3].strides[1] = 1;
	accept(&c, "output with gaps");
	c.t[3].strides[1] = 2;
	accept(&c, "every other element of wider rows");
	c.t[3].strides[0] = 6;
	refuse_at(&c, STRIDE_OFF(3, 0), "row 1 starting on row 0's last element");
	c.t[3].strides[0] = 0;
	c.t[3].strides[1] = 1;
	refuse_at(&c, STRIDE_OFF(3, 0), "output rows on top of each other");
	c.t[3].strides[0] = 2;
	refuse_at(&c, STRIDE_OFF(3, 0), "output rows overlapping by half");
	c.t[3].strides[0] = 4;
	c.t[3].strides[1] = 0;
	refuse_at(&c, STRIDE_OFF(3, 1), "output columns on one element");
	/* Extent-1 dims may have any (bounded) stride, inputs may broadcast. */
	gemm(&c, VNPU_DT_FP32, 1, 3, 4);
	c.t[3].flags = VNPU_TENSOR_STRIDED;
	c.t[3].strides[1] = 1;
	accept(&c, "zero stride on an extent-1 output dim");
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	accept(&c, "broadcast input");
}

/* A valid command that needs more scratch than the arena has: -E2BIG. */
static void test_scratch_budget(void **state)
{
	struct vnpu_arena *small = vnpu_arena_new(64 << 10), *keep;
	struct vnpu_cmd_compute c;
	int i;

	(void)state;
	assert_non_null(small);
	flat_reset(&f);
	gemm(&c, VNPU_DT_FP32, 64, 64, 64);
	for (i = 0; i < 4; i++)
		if (i != 2)
			c.t[i].va = flat_alloc(&f, 64 * 64 * 4);
	f.allow_map = false;	/* bounce buffers: 48 KiB, then scratch */
	keep = flat_engine.arena;
	flat_engine.arena = small;
	exec_expect(&c, 0, "fits in 64 KiB");
	c.t[0].dims[0] = c.t[3].dims[0] = 128;
	c.t[3].va = flat_alloc(&f, 128 * 64 * 4);
	c.t[0].va = flat_alloc(&f, 128 * 64 * 4);
	exec_expect(&c, -E2BIG, "needs 96 KiB of bounce buffers");
	assert_true(vnpu_arena_peak(small) <= vnpu_arena_cap(small));
	/* The arena is whole again for the next command. */
	c.t[0].dims[0] = c.t[3].dims[0] = 64;
	exec_expect(&c, 0, "fits again");
	flat_engine.arena = keep;
	f.allow_map = true;
	vnpu_arena_free(small);
}

/*
 * A command's polls: at least one per VNPU_POLL_WORK work units on the
 * reference paths (@per = VNPU_POLL_WORK), one per kernel block on the
 * fast ones (@per up to VNPU_POLL_BLOCK).
 */
static void check_polls(const struct vnpu_cmd_compute *c, uint64_t per,
			const char *what)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	exec_expect(c, 0, what);
	if ((uint64_t)flat_engine.polls + 1 < info.macs / per) {
		fprintf(stderr, "%s: %u polls for %llu work units\n", what,
			flat_engine.polls, (unsigned long long)info.macs);
		fail();
	}
}

static void alloc_all(struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	int i;

	flat_reset(&f);
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (c->t[i].dtype)
			c->t[i].va = FLAT_BASE;
	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (c->t[i].dtype) {
			c->t[i].va = flat_alloc(&f, info.span[i]);
			assert_true(c->t[i].va != 0);
		}
}

/* fp32 softmax over [64, 2048] along @axis. */
static void softmax(struct vnpu_cmd_compute *c, uint32_t axis)
{
	static const uint32_t d[2] = { 64, 2048 };

	cmd_init(c, VNPU_OP_SOFTMAX);
	c->attr.softmax.axis = axis;
	c->t[0] = tdesc(VNPU_DT_FP32, 2, d);
	c->t[3] = tdesc(VNPU_DT_FP32, 2, d);
}

/* PP-OCR det's upsampling: fp32, 2x2 stride 2, 24 channels in, @co out. */
static void convt(struct vnpu_cmd_compute *c, uint32_t co)
{
	const uint32_t dx[4] = { 1, 48, 96, 24 }, dw[4] = { 24, 2, 2, co };
	const uint32_t dy[4] = { 1, 96, 192, co };

	cmd_init(c, VNPU_OP_CONV_TRANSPOSE);
	c->attr.convt.groups = 1;
	c->attr.convt.stride_h = c->attr.convt.stride_w = 2;
	c->attr.convt.dilation_h = c->attr.convt.dilation_w = 1;
	c->act = VNPU_ACT_SIGMOID;
	c->t[0] = tdesc(VNPU_DT_FP32, 4, dx);
	c->t[1] = tdesc(VNPU_DT_FP32, 4, dw);
	c->t[3] = tdesc(VNPU_DT_FP32, 4, dy);
}

/*
 * Every path polls in proportion to its work, so no stretch of a command
 * runs longer than about VNPU_POLL_WORK units without a chance to stop.
 */
static void test_poll_density(void **state)
{
	struct vnpu_cmd_compute c;
	int map;

	(void)state;
	for (map = 0; map < 2; map++) {
		f.allow_map = map;
		gemm(&c, VNPU_DT_INT8, 256, 512, 256);
		alloc_all(&c);
		check_polls(&c, 1u << 21, "int8 gemm");
		gemm(&c, VNPU_DT_FP32, 256, 512, 256);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_BLOCK, "fp32 gemm");
		conv(&c, 512, 9, 64, 1);
		c.t[0].dims[2] = c.t[3].dims[2] = 8;
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_BLOCK, "fp32 conv");
		conv(&c, 512, 9, 64, 64);
		c.t[0].dims[2] = c.t[3].dims[2] = 8;
		alloc_all(&c);
		/* The direct depthwise kernel polls per row segment of up to 2^21 taps. */
		check_polls(&c, 1u << 21, "depthwise conv");
		conv(&c, 128, 9, 64, 16);
		c.t[0].dims[2] = c.t[3].dims[2] = 32;
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "grouped conv (reference)");
		cmd_init(&c, VNPU_OP_POOL2D);
		c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 128, 128, 4 });
		c.t[3] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 112, 112, 4 });
		c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG,
			.kernel_h = 17, .kernel_w = 17, .stride_h = 1, .stride_w = 1 };
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "pooling (reference)");
		/* The per-element engine paths: one long row, and rows of C. */
		cmd_init(&c, VNPU_OP_ELTWISE);
		c.attr.eltwise.kind = VNPU_ELTWISE_DIV;
		c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 64, 64, 128 });
		c.t[1] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 128 });
		c.t[3] = c.t[0];
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "eltwise per-channel");
		c.t[1] = c.t[0];
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "eltwise same shape");
		cmd_init(&c, VNPU_OP_ACTIVATION);
		c.act = VNPU_ACT_SIGMOID;
		c.t[0] = tdesc(VNPU_DT_FP16, 2, (const uint32_t[]){ 3, 200000 });
		c.t[3] = tdesc(VNPU_DT_UINT8, 2, (const uint32_t[]){ 3, 200000 });
		tquant(&c.t[3], 1.0f / 255, 0);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "activation");
		softmax(&c, 0);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "softmax, outer axis");
		softmax(&c, 1);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "softmax, inner axis");
		/* One row as long as REDUCTION allows: polled inside the row. */
		cmd_init(&c, VNPU_OP_SOFTMAX);
		c.t[0] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ VNPU_LIMIT_REDUCTION });
		c.t[3] = c.t[0];
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "softmax, one row of 2^16");
		cmd_init(&c, VNPU_OP_LAYERNORM);
		c.attr.layernorm.epsilon = f2u(1e-5f);
		c.t[0] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ VNPU_LIMIT_REDUCTION });
		c.t[3] = c.t[0];
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_WORK, "layer norm, one row of 2^16");
		/* Its stride phases run on the CONV2D kernels: one poll per block. */
		convt(&c, 1);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_BLOCK, "narrow conv transpose");
		convt(&c, 24);
		alloc_all(&c);
		check_polls(&c, VNPU_POLL_BLOCK, "wide conv transpose");
	}
	f.allow_map = true;
}

/* Abandoned part-way: -ECANCELED, and a bounced output is never written. */
static void test_abort(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	f.allow_map = false;
	gemm(&c, VNPU_DT_FP32, 1024, 512, 512);
	alloc_all(&c);
	flat_engine.abort_after = 1;
	exec_expect(&c, -ECANCELED, "fp32 gemm, first poll");
	flat_engine.abort_after = 3;
	exec_expect(&c, -ECANCELED, "fp32 gemm, third poll");
	assert_int_equal(flat_engine.polls, 3);
	conv(&c, 128, 9, 64, 16);
	c.t[0].dims[2] = c.t[3].dims[2] = 32;
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "reference conv, third poll");
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 512, 512 });
	c.t[1] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 512 });
	c.t[3] = c.t[0];
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "eltwise, third poll");
	assert_int_equal(flat_engine.polls, 3);
	gemm(&c, VNPU_DT_INT8, 256, 512, 256);
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "int8 gemm, third poll");
	softmax(&c, 1);
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "softmax, third poll");
	assert_int_equal(flat_engine.polls, 3);
	convt(&c, 1);
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "narrow conv transpose, third poll");
	assert_int_equal(flat_engine.polls, 3);
	convt(&c, 24);
	alloc_all(&c);
	exec_expect(&c, -ECANCELED, "wide conv transpose, third poll");
	assert_int_equal(flat_engine.polls, 3);
	gemm(&c, VNPU_DT_INT8, 256, 512, 256);
	alloc_all(&c);
	flat_engine.abort_after = 0;
	exec_expect(&c, 0, "int8 gemm, not aborted");
	f.allow_map = true;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_gemm),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_window_limits),
		cmocka_unit_test(test_host_limits),
		cmocka_unit_test(test_error_offsets),
		cmocka_unit_test(test_self_overlap),
		cmocka_unit_test(test_scratch_budget),
		cmocka_unit_test(test_poll_density),
		cmocka_unit_test(test_abort),
	};
	int ret;

	flat_init(&f, MEM_SIZE);
	snapshot = malloc(MEM_SIZE);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(snapshot);
	free(f.mem);
	return ret;
}
