// SPDX-License-Identifier: MIT
/*
 * Malformed compute commands: every one must be refused with -EINVAL (or
 * -EFAULT for an unbacked address) by vnpu_compute_exec() without a single
 * byte of device memory changing, and by the reference alike.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

#define MEM_SIZE	(1u << 20)

static struct flat f;
static uint8_t *snapshot;

/* A valid int8 GEMM [2,3] x [3,4] -> [2,4] with per-channel B and bias. */
static void good_gemm(struct vnpu_cmd_compute *c)
{
	static const uint32_t da[2] = { 2, 3 }, db[2] = { 3, 4 }, dy[2] = { 2, 4 };
	static const uint32_t dbias = 4;
	float s = 0.01f;
	int32_t z = 0;
	uint8_t *q;
	int i;

	flat_reset(&f);
	cmd_init(c, VNPU_OP_GEMM);
	c->t[0] = tdesc(VNPU_DT_INT8, 2, da);
	tquant(&c->t[0], 0.02f, -3);
	c->t[1] = tdesc(VNPU_DT_INT8, 2, db);
	c->t[1].quant = VNPU_QUANT_CHANNEL;
	c->t[1].quant_axis = 1;
	c->t[2] = tdesc(VNPU_DT_INT32, 1, &dbias);
	c->t[3] = tdesc(VNPU_DT_UINT8, 2, dy);
	tquant(&c->t[3], 0.05f, 128);
	c->act = VNPU_ACT_RELU;
	for (i = 0; i < 4; i++)
		c->t[i].va = flat_alloc(&f, 64);
	c->t[1].quant_va = flat_alloc(&f, 32);
	q = flat_host(&f, c->t[1].quant_va);
	for (i = 0; i < 4; i++) {
		memcpy(q + 4 * i, &s, 4);
		memcpy(q + 16 + 4 * i, &z, 4);
	}
	memcpy(snapshot, f.mem, MEM_SIZE);
}

static void expect(const struct vnpu_cmd_compute *c, int err, const char *what)
{
	uint64_t cycles = 77;
	int ret;

	memcpy(snapshot, f.mem, MEM_SIZE);
	ret = flat_exec(&f, c, sizeof(*c), &cycles);
	if (ret != err) {
		fprintf(stderr, "%s: got %d, want %d\n", what, ret, err);
		fail();
	}
	assert_int_equal(f.maps, 0);
	if (err) {
		assert_int_equal(cycles, 0);
		assert_memory_equal(snapshot, f.mem, MEM_SIZE);
		if (err == -EINVAL)
			assert_int_equal(flat_ref(&f, c), -EINVAL);
	}
}

#define BAD(stmt) do { \
		struct vnpu_cmd_compute c; \
		good_gemm(&c); \
		stmt; \
		expect(&c, -EINVAL, #stmt); \
	} while (0)

static void test_good(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	good_gemm(&c);
	expect(&c, 0, "valid gemm");
	f.allow_map = false;
	expect(&c, 0, "valid gemm, bounce buffers");
	f.allow_map = true;
}

static void test_header(void **state)
{
	struct vnpu_cmd_compute cc;
	uint64_t cycles;

	(void)state;
	BAD(c.hdr.opcode = VNPU_OP_LAST + 1);
	BAD(c.hdr.opcode = 0x3f);
	BAD(c.hdr.opcode = 0x7f);
	BAD(c.hdr.flags = 1);
	BAD(c.hdr.size = 8);
	BAD(c.reserved0 = 1);
	BAD(c.act = VNPU_ACT_COUNT);
	BAD(c.round = VNPU_ROUND_ORT_QLINEAR);	/* not GEMM's */
	BAD(c.round = VNPU_ROUND_ORT_QLINEAR + 1);
	BAD(c.act_alpha = f2u(0.1f));		/* alpha without leaky relu */
	BAD(c.act = VNPU_ACT_LEAKY_RELU; c.act_alpha = f2u(NAN));
	BAD(c.attr.gemm.flags = 4);
	BAD(c.attr.gemm.reserved[10] = 1);
	/* A wrong command size is caught before the bytes are read. */
	good_gemm(&cc);
	assert_int_equal(flat_exec(&f, &cc, sizeof(cc) - 8, &cycles), -EINVAL);
	assert_int_equal(flat_exec(&f, &cc, 0, &cycles), -EINVAL);
}

static void test_tensor(void **state)
{
	(void)state;
	BAD(c.t[0].dtype = 0);
	BAD(c.t[0].dtype = VNPU_DT_COUNT);
	BAD(c.t[0].rank = 0);
	BAD(c.t[0].rank = VNPU_MAX_RANK + 1);
	BAD(c.t[0].dims[1] = 0);
	BAD(c.t[0].dims[2] = 5);			/* beyond rank */
	BAD(c.t[0].strides[0] = 3);			/* strides without the flag */
	BAD(c.t[0].flags = 2);
	BAD(c.t[0].reserved[2] = 1);
	BAD(c.t[2].va += 2);				/* int32 misaligned */
	BAD(c.t[0].va = 1ull << 48);			/* beyond the VA space */
	BAD(c.t[0].va = (1ull << 48) - 4);		/* runs past it */
	BAD(c.t[3].va = ~0ull - 3);
	/* Shape products overflowing 64 bits and the element cap. */
	BAD(c.t[0].rank = 6; c.t[0].dims[2] = 0xffffffff; c.t[0].dims[3] = 0xffffffff;
	    c.t[0].dims[4] = 0xffffffff; c.t[0].dims[5] = 3);
	BAD(c.t[3].rank = 4; c.t[3].dims[0] = 1u << 20; c.t[3].dims[1] = 1u << 20;
	    c.t[3].dims[2] = 2; c.t[3].dims[3] = 4);
	/* Strided span that overflows, and one beyond the byte cap. */
	BAD(c.t[0].flags = VNPU_TENSOR_STRIDED; c.t[0].strides[0] = ~0ull; c.t[0].strides[1] = 1);
	BAD(c.t[0].flags = VNPU_TENSOR_STRIDED; c.t[0].strides[0] = 1ull << 33; c.t[0].strides[1] = 1);
	/* Quantization fields. */
	BAD(c.t[0].quant = VNPU_QUANT_NONE);
	BAD(c.t[0].quant = 3);
	BAD(c.t[0].scale = f2u(0.0f));
	BAD(c.t[0].scale = f2u(-1.0f));
	BAD(c.t[0].scale = f2u(INFINITY));
	BAD(c.t[0].scale = f2u(NAN));
	BAD(c.t[0].zero_point = 128);
	BAD(c.t[3].zero_point = -1);
	BAD(c.t[0].quant_axis = 1);
	BAD(c.t[0].quant_va = 64);
	BAD(c.t[1].quant_axis = 2);
	BAD(c.t[1].quant_axis = 0);		/* not the N axis */
	BAD(c.t[1].quant_va = 0);
	BAD(c.t[1].quant_va += 2);
	BAD(c.t[1].scale = f2u(1.0f));
	BAD(c.t[1].quant_va = (1ull << 48) - 8);
	BAD(c.t[2].quant = VNPU_QUANT_TENSOR; c.t[2].scale = f2u(1.0f));
}

static void test_shapes(void **state)
{
	(void)state;
	BAD(c.t[1].dims[0] = 4);		/* K mismatch */
	BAD(c.t[3].dims[1] = 5);		/* N mismatch */
	BAD(c.t[3].dims[0] = 1);		/* M mismatch */
	BAD(c.t[2].dims[0] = 3);		/* bias length */
	BAD(c.t[2].dtype = VNPU_DT_FP32);	/* float bias on a quantized gemm */
	BAD(c.t[0].rank = 1; c.t[0].dims[1] = 0);
	BAD(memset(&c.t[1], 0, sizeof(c.t[1])));	/* required slot absent */
	BAD(memset(&c.t[3], 0, sizeof(c.t[3])));
	BAD(c.t[0].dtype = VNPU_DT_FP32; c.t[0].quant = 0; c.t[0].scale = 0;
	    c.t[0].zero_point = 0);		/* float x int8 */
	BAD(c.t[3].dtype = VNPU_DT_INT32; c.t[3].quant = 0; c.t[3].scale = 0;
	    c.t[3].zero_point = 0);		/* int32 out with an activation */
	/* Op-specific: slots an op does not take must be empty. */
	BAD(c.hdr.opcode = VNPU_OP_ACTIVATION);
	BAD(c.hdr.opcode = VNPU_OP_ELTWISE);
	BAD(c.hdr.opcode = VNPU_OP_CONV2D);
}

static void test_other_ops(void **state)
{
	static const uint32_t dx[4] = { 1, 5, 5, 3 }, dw[4] = { 4, 3, 3, 3 };
	static const uint32_t dy[4] = { 1, 3, 3, 4 };
	struct vnpu_cmd_compute c;
	int i;

	(void)state;
#define CONV(...) do { \
		flat_reset(&f); \
		cmd_init(&c, VNPU_OP_CONV2D); \
		c.t[0] = tdesc(VNPU_DT_FP32, 4, dx); \
		c.t[1] = tdesc(VNPU_DT_FP32, 4, dw); \
		c.t[3] = tdesc(VNPU_DT_FP32, 4, dy); \
		for (i = 0; i < 4; i++) \
			if (c.t[i].dtype) \
				c.t[i].va = flat_alloc(&f, 512); \
		c.attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1, .stride_w = 1, \
			.dilation_h = 1, .dilation_w = 1, .groups = 1 }; \
		__VA_ARGS__; \
	} while (0)
	CONV((void)0);
	expect(&c, 0, "valid conv");
	CONV(c.attr.conv.groups = 0);
	expect(&c, -EINVAL, "groups 0");
	CONV(c.attr.conv.groups = 2);
	expect(&c, -EINVAL, "groups not dividing C");
	CONV(c.attr.conv.stride_h = 0);
	expect(&c, -EINVAL, "stride 0");
	CONV(c.attr.conv.dilation_w = 0);
	expect(&c, -EINVAL, "dilation 0");
	CONV(c.attr.conv.pad_top = 1);
	expect(&c, -EINVAL, "output height mismatch");
	CONV(c.attr.conv.pad_top = 0xffffffff);
	expect(&c, -EINVAL, "huge padding");
	CONV(c.attr.conv.dilation_h = 3);
	expect(&c, -EINVAL, "dilated kernel larger than input");
	CONV(c.attr.conv.reserved[0] = 1);
	expect(&c, -EINVAL, "conv reserved");
	CONV(c.t[1].dims[3] = 2);
	expect(&c, -EINVAL, "weight channels");
	CONV(c.t[1].dtype = VNPU_DT_INT8; tquant(&c.t[1], 1.0f, 0));
	expect(&c, -EINVAL, "mixed float and int8");

	/* Pooling: pad >= kernel could leave a window without elements. */
	CONV(c.hdr.opcode = VNPU_OP_POOL2D; memset(&c.t[1], 0, sizeof(c.t[1]));
	     c.t[3].dims[3] = 3; c.attr.pool = (struct vnpu_attr_pool2d){
		.kind = VNPU_POOL_MAX, .kernel_h = 3, .kernel_w = 3, .stride_h = 1,
		.stride_w = 1 });
	expect(&c, 0, "valid pool");
	c.attr.pool.pad_top = 3;
	expect(&c, -EINVAL, "pool pad >= kernel");
	c.attr.pool.pad_top = 0;
	c.attr.pool.flags = VNPU_POOL_COUNT_INCLUDE_PAD;
	expect(&c, -EINVAL, "count_include_pad on max pool");
	c.attr.pool.flags = 0;
	c.attr.pool.kind = 3;
	expect(&c, -EINVAL, "pool kind");
	c.attr.pool.kind = VNPU_POOL_GLOBAL_AVG;
	expect(&c, -EINVAL, "global pool with a kernel");
	c.act = VNPU_ACT_RELU;
	c.attr.pool.kind = VNPU_POOL_MAX;
	expect(&c, -EINVAL, "activation on a pool");

	/* Softmax / layer norm / conversions. */
	CONV(c.hdr.opcode = VNPU_OP_SOFTMAX; memset(&c.t[1], 0, sizeof(c.t[1]));
	     memcpy(c.t[3].dims, dx, sizeof(dx)); memset(&c.attr, 0, sizeof(c.attr)));
	expect(&c, 0, "valid softmax");
	c.attr.softmax.axis = 4;
	expect(&c, -EINVAL, "softmax axis");
	c.hdr.opcode = VNPU_OP_LAYERNORM;
	c.attr.layernorm.axis = 3;
	c.attr.layernorm.epsilon = f2u(-1.0f);
	expect(&c, -EINVAL, "negative epsilon");
	c.attr.layernorm.epsilon = f2u(1e-5f);
	expect(&c, 0, "valid layernorm");
	c.t[3].dims[3] = 2;
	expect(&c, -EINVAL, "layernorm shape");
	c.t[3].dims[3] = 3;
	c.hdr.opcode = VNPU_OP_QUANTIZE;
	memset(&c.attr, 0, sizeof(c.attr));
	expect(&c, -EINVAL, "quantize to float");
	c.t[3].dtype = VNPU_DT_INT8;
	tquant(&c.t[3], 0.1f, 0);
	expect(&c, 0, "valid quantize");
	c.hdr.opcode = VNPU_OP_DEQUANTIZE;
	expect(&c, -EINVAL, "dequantize from float");
	c.hdr.opcode = VNPU_OP_ELTWISE;
	expect(&c, -EINVAL, "eltwise without b");
}

/* A valid QLinearAdd: int8 [2, 3, 4] + [4] -> [2, 3, 4]. */
static void good_qlinear(struct vnpu_cmd_compute *c)
{
	static const uint32_t da[3] = { 2, 3, 4 }, db[1] = { 4 };
	int i;

	flat_reset(&f);
	cmd_init(c, VNPU_OP_ELTWISE);
	c->round = VNPU_ROUND_ORT_QLINEAR;
	c->attr.eltwise.kind = VNPU_ELTWISE_ADD;
	c->t[0] = tdesc(VNPU_DT_INT8, 3, da);
	tquant(&c->t[0], 0.02f, -3);
	c->t[1] = tdesc(VNPU_DT_INT8, 1, db);
	tquant(&c->t[1], 0.05f, 7);
	c->t[3] = tdesc(VNPU_DT_INT8, 3, da);
	tquant(&c->t[3], 0.04f, 1);
	for (i = 0; i < 4; i++)
		if (c->t[i].dtype)
			c->t[i].va = flat_alloc(&f, 64);
}

/* Refused by the executor and the reference, the checker naming field @off. */
static void expect_at(const struct vnpu_cmd_compute *c, uint32_t off, const char *what)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	expect(c, -EINVAL, what);
	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), -EINVAL);
	if (info.err_off != off) {
		fprintf(stderr, "%s: refused at byte %u, want %u\n", what, info.err_off, off);
		fail();
	}
}

/*
 * VNPU_ROUND_ORT_QLINEAR is onnxruntime's QLinearAdd/QLinearMul: every
 * command it cannot be is refused at the field that makes it so.
 */
static void test_qlinear(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	good_qlinear(&c);
	expect(&c, 0, "valid QLinearAdd");
	c.attr.eltwise.kind = VNPU_ELTWISE_MUL;
	expect(&c, 0, "valid QLinearMul");
	c.t[0].dtype = c.t[1].dtype = c.t[3].dtype = VNPU_DT_UINT8;
	c.t[0].zero_point = 3;
	c.t[1].zero_point = 255;
	c.t[3].zero_point = 128;
	expect(&c, 0, "valid uint8 QLinearMul");

	good_qlinear(&c);
	c.attr.eltwise.kind = VNPU_ELTWISE_SUB;
	expect_at(&c, VNPU_CMD_OFF(round), "QLinear SUB");
	good_qlinear(&c);
	c.attr.eltwise.kind = VNPU_ELTWISE_MAX;
	expect_at(&c, VNPU_CMD_OFF(round), "QLinear MAX");
	good_qlinear(&c);
	c.act = VNPU_ACT_RELU;
	expect_at(&c, VNPU_CMD_OFF(act), "QLinear with an activation");
	good_qlinear(&c);
	c.t[1].dtype = VNPU_DT_UINT8;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, dtype), "QLinear int8 + uint8");
	good_qlinear(&c);
	c.t[3].dtype = VNPU_DT_UINT8;
	c.t[3].zero_point = 0;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinear int8 into uint8");
	good_qlinear(&c);
	c.t[0] = tdesc(VNPU_DT_FP32, c.t[0].rank, c.t[0].dims);
	c.t[0].va = flat_alloc(&f, 128);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinear with a float A");
	good_qlinear(&c);
	c.t[3] = tdesc(VNPU_DT_FP32, c.t[3].rank, c.t[3].dims);
	c.t[3].va = flat_alloc(&f, 128);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinear into float");
	good_qlinear(&c);
	c.t[1].quant = VNPU_QUANT_CHANNEL;
	c.t[1].scale = 0;
	c.t[1].zero_point = 0;
	c.t[1].quant_axis = 0;
	c.t[1].quant_va = flat_alloc(&f, 32);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, quant), "QLinear per channel");

	/* other ops and the CPU-only ones do not take it */
	good_qlinear(&c);
	c.hdr.opcode = VNPU_OP_REQUANTIZE;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	c.attr.eltwise.kind = 0;
	expect_at(&c, VNPU_CMD_OFF(round), "QLinear rounding on REQUANTIZE");
}

/* A valid QLinearAveragePool: uint8 [1, 5, 4, 3], 3 x 2 window, stride 2. */
static void good_qpool(struct vnpu_cmd_compute *c)
{
	static const uint32_t dx[4] = { 1, 5, 4, 3 }, dy[4] = { 1, 2, 2, 3 };

	flat_reset(&f);
	cmd_init(c, VNPU_OP_POOL2D);
	c->round = VNPU_ROUND_ORT_QLINEAR;
	c->attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG, .kernel_h = 3,
		.kernel_w = 2, .stride_h = 2, .stride_w = 2 };
	c->t[0] = tdesc(VNPU_DT_UINT8, 4, dx);
	tquant(&c->t[0], 0.4f, 3);
	c->t[3] = tdesc(VNPU_DT_UINT8, 4, dy);
	tquant(&c->t[3], 0.4f, 3);
	c->t[0].va = flat_alloc(&f, 64);
	c->t[3].va = flat_alloc(&f, 64);
}

/*
 * POOL2D with VNPU_ROUND_ORT_QLINEAR is QLinearAveragePool or
 * QLinearGlobalAveragePool: anything else is refused at its field.
 */
static void test_qlinear_pool(void **state)
{
	static const uint32_t dg[4] = { 1, 1, 1, 3 };
	struct vnpu_cmd_compute c;

	(void)state;
	good_qpool(&c);
	expect(&c, 0, "valid QLinearAveragePool");
	c.attr.pool.flags = VNPU_POOL_COUNT_INCLUDE_PAD;
	c.attr.pool.pad_top = c.attr.pool.pad_bottom = 1;
	c.t[3].dims[1] = 3;
	expect(&c, 0, "valid QLinearAveragePool counting padding");
	good_qpool(&c);
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_GLOBAL_AVG };
	memcpy(c.t[3].dims, dg, sizeof(dg));
	expect(&c, 0, "valid QLinearGlobalAveragePool");
	c.t[0].dtype = c.t[3].dtype = VNPU_DT_INT8;
	c.t[0].zero_point = (uint32_t)-5;
	expect(&c, 0, "valid int8 QLinearGlobalAveragePool");

	good_qpool(&c);
	c.attr.pool.kind = VNPU_POOL_MAX;
	expect_at(&c, VNPU_CMD_OFF(round), "QLinear max pool");
	good_qpool(&c);
	c.attr.pool.dilation_w = 2;
	c.t[3].dims[2] = 1;
	expect_at(&c, VNPU_CMD_OFF(attr.pool.dilation_w), "QLinear dilated pool");
	good_qpool(&c);
	c.attr.pool.dilation_h = 2;
	c.t[3].dims[1] = 1;
	expect_at(&c, VNPU_CMD_OFF(attr.pool.dilation_h), "QLinear dilated pool rows");
	good_qpool(&c);
	c.t[3].dtype = VNPU_DT_INT8;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(3, dtype), "QLinear pool uint8 into int8");
	good_qpool(&c);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, c.t[0].dims);
	c.t[0].va = flat_alloc(&f, 256);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinear pool of floats");
	good_qpool(&c);
	c.t[3] = tdesc(VNPU_DT_FP32, 4, c.t[3].dims);
	c.t[3].va = flat_alloc(&f, 256);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(3, dtype), "QLinear pool into float");
	good_qpool(&c);
	c.t[0] = tdesc(VNPU_DT_FP16, 4, c.t[0].dims);
	c.t[0].va = flat_alloc(&f, 256);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinear pool of float16");
}

/* SOFTMAX with VNPU_ROUND_ORT_QLINEAR is QLinearSoftmax: 8-bit X and Y of one dtype. */
static void test_qlinear_softmax(void **state)
{
	static const uint32_t d[2] = { 3, 10 };
	struct vnpu_cmd_compute c;

	(void)state;
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.round = VNPU_ROUND_ORT_QLINEAR;
	c.attr.softmax.axis = 1;
	c.t[0] = tdesc(VNPU_DT_UINT8, 2, d);
	tquant(&c.t[0], 0.1f, 3);
	c.t[3] = tdesc(VNPU_DT_UINT8, 2, d);
	tquant(&c.t[3], 1.0f / 256.0f, 0);
	c.t[0].va = flat_alloc(&f, 64);
	c.t[3].va = flat_alloc(&f, 64);
	expect(&c, 0, "valid QLinearSoftmax");
	c.t[3].dtype = VNPU_DT_INT8;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(3, dtype), "QLinearSoftmax uint8 into int8");
	c.t[0].dtype = VNPU_DT_INT8;
	expect(&c, 0, "valid int8 QLinearSoftmax");
	c.t[3] = tdesc(VNPU_DT_FP32, 2, d);
	c.t[3].va = flat_alloc(&f, 128);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(3, dtype), "QLinearSoftmax into float");
	c.t[0] = tdesc(VNPU_DT_FP32, 2, d);
	c.t[0].va = flat_alloc(&f, 128);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, dtype), "QLinearSoftmax of floats");
	c.hdr.opcode = VNPU_OP_LAYERNORM;
	expect_at(&c, VNPU_CMD_OFF(round), "QLinear rounding on LAYERNORM");
}

/* LUT: the table must be 256 of Y's codes, described as Y is. */
static void test_lut(void **state)
{
	static const uint32_t d[2] = { 3, 10 }, dt = VNPU_LUT_ENTRIES;
	struct vnpu_cmd_compute c, good;

	(void)state;
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_LUT);
	c.t[0] = tdesc(VNPU_DT_INT8, 2, d);
	tquant(&c.t[0], 0.1f, 3);
	c.t[1] = tdesc(VNPU_DT_UINT8, 1, &dt);
	tquant(&c.t[1], 0.5f, 7);
	c.t[3] = tdesc(VNPU_DT_UINT8, 2, d);
	tquant(&c.t[3], 0.5f, 7);
	c.t[0].va = flat_alloc(&f, 64);
	c.t[1].va = flat_alloc(&f, 256);
	c.t[3].va = flat_alloc(&f, 64);
	good = c;
	expect(&c, 0, "valid LUT");
	c.t[3].va = c.t[0].va;
	c.t[3].dtype = c.t[1].dtype = VNPU_DT_INT8;
	expect(&c, 0, "valid LUT in place");
	c = good;
	c.t[1].dims[0] = VNPU_LUT_ENTRIES - 1;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, dims), "LUT table of 255");
	c = good;
	c.t[1].dtype = VNPU_DT_INT8;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, dtype), "LUT table of another dtype");
	c = good;
	tquant(&c.t[1], 0.25f, 7);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, scale), "LUT table of another scale");
	c = good;
	c.t[1].zero_point = 8;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, zero_point), "LUT table of another zero point");
	c = good;
	c.round = VNPU_ROUND_TFLITE;
	expect_at(&c, VNPU_CMD_OFF(round), "LUT with TFLite rounding");
	c = good;
	c.act = VNPU_ACT_RELU;
	expect_at(&c, VNPU_CMD_OFF(act), "LUT with an activation");
	c = good;
	c.attr.raw[3] = 1;
	expect_at(&c, VNPU_CMD_OFF(attr.lut.reserved[3]), "LUT attribute");
	c = good;
	c.t[3].dims[1] = 9;
	expect_at(&c, VNPU_CMD_TENSOR_OFF(3, dims) + 4, "LUT Y of another shape");
	c = good;
	c.t[0].quant = VNPU_QUANT_CHANNEL;
	c.t[0].scale = 0;
	c.t[0].zero_point = 0;
	c.t[0].quant_va = flat_alloc(&f, 64);
	expect_at(&c, VNPU_CMD_TENSOR_OFF(0, quant), "LUT of a per-channel X");
	c = good;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	expect_at(&c, VNPU_CMD_TENSOR_OFF(1, va), "LUT without a table");
}

/* Per-channel arrays are read at run time; bad contents still -EINVAL. */
static void test_channel_arrays(void **state)
{
	struct vnpu_cmd_compute c;
	float bad[] = { 0.0f, -1.0f, INFINITY, NAN };
	int32_t zbad = 200;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		good_gemm(&c);
		memcpy((uint8_t *)flat_host(&f, c.t[1].quant_va) + 8, &bad[i], 4);
		expect(&c, -EINVAL, "bad per-channel scale");
	}
	good_gemm(&c);
	memcpy((uint8_t *)flat_host(&f, c.t[1].quant_va) + 16 + 12, &zbad, 4);
	expect(&c, -EINVAL, "per-channel zero point out of range");
}

/* Addresses inside the VA space but not backed: the callbacks fault. */
static void test_fault(void **state)
{
	struct vnpu_cmd_compute c;

	(void)state;
	good_gemm(&c);
	c.t[0].va = FLAT_BASE + MEM_SIZE - 4;
	expect(&c, -EFAULT, "input past the memory");
	good_gemm(&c);
	c.t[3].va = 0x1000;
	f.allow_map = false;
	expect(&c, -EFAULT, "output unbacked, bounce path");
	f.allow_map = true;
	good_gemm(&c);
	c.t[1].quant_va = FLAT_BASE + MEM_SIZE;
	expect(&c, -EFAULT, "per-channel array unbacked");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_tensor),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_other_ops),
		cmocka_unit_test(test_qlinear),
		cmocka_unit_test(test_qlinear_pool),
		cmocka_unit_test(test_qlinear_softmax),
		cmocka_unit_test(test_lut),
		cmocka_unit_test(test_channel_arrays),
		cmocka_unit_test(test_fault),
	};
	int ret;

	flat_init(&f, MEM_SIZE);
	snapshot = malloc(MEM_SIZE);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(snapshot);
	free(f.mem);
	return ret;
}
