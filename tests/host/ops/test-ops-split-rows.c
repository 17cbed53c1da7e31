// SPDX-License-Identifier: MIT
/*
 * vnpu_compute_split() on the ops that count elements or window taps
 * (ELTWISE, ACTIVATION, QUANTIZE, DEQUANTIZE, REQUANTIZE, POOL2D) and on
 * batched GEMMs, cut by their batches: each output element of a band is
 * computed from exactly the operand elements it used in the whole
 * command, by the same arithmetic (a batch's product as whole as before),
 * so the parts run one by one through the engine must write the whole
 * command's bytes, on fp32 as on 8-bit operands.  Operands that broadcast along the cut, and
 * per-channel arrays across it, stay whole; those that vary along it in a
 * way a band cannot follow leave the command whole.  test-ops-split.c
 * covers GEMM and CONV2D.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_split.h"

#define MEM_SIZE	(64u << 20)

static struct flat f;
static uint64_t rs = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

static uint64_t elems(const struct vnpu_tensor_desc *t)
{
	uint64_t n = 1;
	unsigned int i;

	for (i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

/* @t at a new VA, filled with random values (fp32 within +-10). */
static void place(struct vnpu_tensor_desc *t, bool fill)
{
	uint64_t n = elems(t), bytes = n * vnpu_dtype_size(t->dtype), i;
	uint8_t *p;

	t->va = flat_alloc(&f, bytes);
	assert_true(t->va);
	if (!fill)
		return;
	p = flat_host(&f, t->va);
	if (t->dtype == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			float v = ((float)rnd(20001) - 10000.0f) / 997.0f;

			memcpy(p + 4 * i, &v, 4);
		}
	} else {
		for (i = 0; i < bytes; i++)
			p[i] = (uint8_t)rnd(256);
	}
}

/* Per-channel scales and zero points along @axis of @t, in its range. */
static void per_channel(struct vnpu_tensor_desc *t, unsigned int axis)
{
	uint32_t n = t->dims[axis], i;
	uint64_t va = flat_alloc(&f, 8ull * n);
	uint8_t *p = flat_host(&f, va);

	for (i = 0; i < n; i++) {
		float s = 0.002f * (1 + rnd(50));
		int32_t z = (int32_t)rnd(21) - 10 +
			    (t->dtype == VNPU_DT_UINT8 ? 128 : 0);

		memcpy(p + 4 * i, &s, 4);
		memcpy(p + 4ull * n + 4 * i, &z, 4);
	}
	t->quant = VNPU_QUANT_CHANNEL;
	t->quant_axis = (uint8_t)axis;
	t->quant_va = va;
}

static uint64_t span_of(const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	return info.span[VNPU_OP_SLOT_OUT];
}

/*
 * Run @c whole, then its parts (at most @max, no work floor) one by one:
 * the same bytes, bands in order tiling the output, the same parts for the
 * same command every time.  Returns the number of parts.
 */
static unsigned int whole_vs_parts(const struct vnpu_cmd_compute *c,
				   unsigned int max)
{
	static struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
	static struct vnpu_cmd_compute again[VNPU_SPLIT_MAX_PARTS];
	const struct vnpu_tensor_desc *y = &c->t[VNPU_OP_SLOT_OUT];
	uint64_t span = span_of(c), cycles = 0, whole_cycles = 0, covered = 0;
	uint8_t *out = flat_host(&f, y->va), *want = malloc(span);
	unsigned int n, i;

	assert_non_null(want);
	memset(out, 0xa5, span);
	assert_int_equal(flat_exec(&f, c, sizeof(*c), &whole_cycles), 0);
	memcpy(want, out, span);
	n = vnpu_compute_split_min(c, sizeof(*c), max, 1, parts, &cycles);
	if (n) {
		assert_int_equal(vnpu_compute_split_min(c, sizeof(*c), max, 1,
							again, &cycles), n);
		assert_memory_equal(again, parts, n * sizeof(parts[0]));
		assert_true(n >= 2 && n <= max);
		assert_int_equal(cycles, whole_cycles);
		memset(out, 0x5a, span);
		for (i = 0; i < n; i++) {
			assert_int_equal(parts[i].t[VNPU_OP_SLOT_OUT].va,
					 y->va + covered);
			covered += span_of(&parts[i]);
			assert_int_equal(flat_exec(&f, &parts[i], sizeof(parts[i]),
						   NULL), 0);
		}
		assert_int_equal(covered, span);
		if (memcmp(out, want, span)) {
			uint64_t b = 0;

			while (out[b] == want[b])
				b++;
			free(want);
			fail_msg("op 0x%x cut in %u: byte %llu of %llu differs",
				 c->hdr.opcode, n, (unsigned long long)b,
				 (unsigned long long)span);
		}
	}
	free(want);
	return n;
}

/* Random Y dims of rank 1..4, sometimes with leading 1s, up to ~40k. */
static unsigned int random_dims(uint32_t *dims)
{
	unsigned int rank = 1 + rnd(4), i;

	for (i = 0; i < rank; i++)
		dims[i] = 1 + rnd(i + 1 == rank ? 40 : 14);
	if (rank > 1 && rnd(2))
		dims[0] = 1;
	if (rank > 2 && rnd(3) == 0)
		dims[1] = 1;
	return rank;
}

/*
 * An operand broadcasting to @ydims numpy-style: a random rank up to Y's,
 * each dim Y's or 1.
 */
static struct vnpu_tensor_desc broadcast_of(uint8_t dt, unsigned int yrank,
					    const uint32_t *ydims)
{
	unsigned int rank = 1 + rnd(yrank), i;
	uint32_t dims[VNPU_MAX_RANK];

	for (i = 0; i < rank; i++) {
		uint32_t yd = ydims[yrank - rank + i];

		dims[i] = rnd(3) ? yd : 1;
	}
	return tdesc(dt, (int)rank, dims);
}

static void test_eltwise_random(void **state)
{
	static const uint8_t q8[] = { VNPU_DT_INT8, VNPU_DT_UINT8 };
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 600; iter++) {
		struct vnpu_cmd_compute c;
		uint32_t dims[VNPU_MAX_RANK];
		unsigned int rank = random_dims(dims), mode = rnd(3);
		uint8_t dt = mode == 0 ? VNPU_DT_FP32 : q8[rnd(2)];

		flat_reset(&f);
		cmd_init(&c, VNPU_OP_ELTWISE);
		c.attr.eltwise.kind = rnd(6);
		c.t[3] = tdesc(dt, (int)rank, dims);
		/* Either operand may be the broadcast one, or neither. */
		switch (rnd(3)) {
		case 0:
			c.t[0] = c.t[3];
			c.t[1] = broadcast_of(dt, rank, dims);
			break;
		case 1:
			c.t[0] = broadcast_of(dt, rank, dims);
			c.t[1] = c.t[3];
			break;
		default:
			c.t[0] = c.t[3];
			c.t[1] = c.t[3];
			break;
		}
		if (dt != VNPU_DT_FP32) {
			tquant(&c.t[0], 0.05f, (int32_t)rnd(9) - 4 + (dt == VNPU_DT_UINT8 ? 128 : 0));
			tquant(&c.t[1], 0.03f, (int32_t)rnd(9) - 4 + (dt == VNPU_DT_UINT8 ? 128 : 0));
			tquant(&c.t[3], 0.07f, dt == VNPU_DT_UINT8 ? 120 : -2);
			if (mode == 2) {
				/* onnxruntime's QLinearAdd / QLinearMul arithmetic */
				c.round = VNPU_ROUND_ORT_QLINEAR;
				c.attr.eltwise.kind = rnd(2) ? VNPU_ELTWISE_ADD :
							       VNPU_ELTWISE_MUL;
			}
		}
		c.act = c.round != VNPU_ROUND_ORT_QLINEAR && rnd(2) ?
			VNPU_ACT_RELU : VNPU_ACT_NONE;
		place(&c.t[0], true);
		place(&c.t[1], true);
		place(&c.t[3], false);
		if (whole_vs_parts(&c, 2 + rnd(7)))
			cut++;
	}
	/* Most shapes have an axis longer than 1 to cut along. */
	assert_true(cut > 300);
}

static void test_activation_random(void **state)
{
	static const uint8_t acts[] = {
		VNPU_ACT_RELU, VNPU_ACT_SIGMOID, VNPU_ACT_HARD_SWISH, VNPU_ACT_CLIP,
	};
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 300; iter++) {
		struct vnpu_cmd_compute c;
		uint32_t h = 1 + rnd(30), w = 1 + rnd(20), ch = 1 + rnd(24);

		flat_reset(&f);
		cmd_init(&c, VNPU_OP_ACTIVATION);
		c.act = acts[rnd(4)];
		if (c.act == VNPU_ACT_CLIP) {
			c.attr.activation.clip_min = f2u(-2.0f);
			c.attr.activation.clip_max = f2u(3.5f);
		}
		c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, h, w, ch });
		c.t[3] = c.t[0];
		if (rnd(2)) {
			/* BatchNormalization: [2, C] scale and shift along C */
			c.t[1] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, ch });
			place(&c.t[1], true);
		}
		place(&c.t[0], true);
		place(&c.t[3], false);
		if (whole_vs_parts(&c, 2 + rnd(7)))
			cut++;
	}
	assert_true(cut > 200);
}

/* The conversions, per tensor and per channel along C. */
static void test_convert_random(void **state)
{
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 300; iter++) {
		static const uint16_t ops[] = {
			VNPU_OP_QUANTIZE, VNPU_OP_DEQUANTIZE, VNPU_OP_REQUANTIZE,
		};
		struct vnpu_cmd_compute c;
		uint32_t dims[VNPU_MAX_RANK];
		unsigned int rank = random_dims(dims);
		uint16_t op = ops[rnd(3)];
		bool chan = rnd(2);

		flat_reset(&f);
		cmd_init(&c, op);
		c.t[0] = tdesc(op == VNPU_OP_QUANTIZE ? VNPU_DT_FP32 : VNPU_DT_INT8,
			       (int)rank, dims);
		c.t[3] = tdesc(op == VNPU_OP_DEQUANTIZE ? VNPU_DT_FP32 : VNPU_DT_UINT8,
			       (int)rank, dims);
		place(&c.t[0], true);
		place(&c.t[3], false);
		if (op != VNPU_OP_QUANTIZE) {
			if (chan)
				per_channel(&c.t[0], rank - 1);
			else
				tquant(&c.t[0], 0.04f, 3);
		}
		if (op != VNPU_OP_DEQUANTIZE) {
			if (chan)
				per_channel(&c.t[3], rank - 1);
			else
				tquant(&c.t[3], 0.05f, 128);
		}
		if (whole_vs_parts(&c, 2 + rnd(7)))
			cut++;
	}
	assert_true(cut > 100);
}

static uint32_t pool_out(uint32_t in, uint32_t k, uint32_t s, uint32_t d,
			 uint32_t p0, uint32_t p1)
{
	int64_t ext = (int64_t)d * (k - 1) + 1, num = (int64_t)in + p0 + p1 - ext;

	return num < 0 ? 0 : (uint32_t)(num / s + 1);
}

static void test_pool_random(void **state)
{
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 400; iter++) {
		struct vnpu_cmd_compute c;
		uint32_t n = rnd(4) ? 1 : 2 + rnd(2), h = 1 + rnd(24), w = 1 + rnd(16);
		uint32_t ch = 1 + rnd(20), kh = 1 + rnd(4), kw = 1 + rnd(3);
		uint32_t sh = 1 + rnd(3), sw = 1 + rnd(2), dh = rnd(3), dw = rnd(2);
		uint32_t pt = rnd(kh), pb = rnd(kh), pl = rnd(kw), pr = rnd(kw);
		uint32_t oh = pool_out(h, kh, sh, dh ? dh : 1, pt, pb);
		uint32_t ow = pool_out(w, kw, sw, dw ? dw : 1, pl, pr);
		uint8_t dt = rnd(2) ? VNPU_DT_FP32 : VNPU_DT_UINT8;

		if (!oh || !ow)
			continue;
		flat_reset(&f);
		cmd_init(&c, VNPU_OP_POOL2D);
		c.attr.pool = (struct vnpu_attr_pool2d){
			.kind = rnd(2) ? VNPU_POOL_MAX : VNPU_POOL_AVG,
			.kernel_h = kh, .kernel_w = kw,
			.stride_h = sh, .stride_w = sw,
			.pad_top = pt, .pad_left = pl,
			.pad_bottom = pb, .pad_right = pr,
		};
		c.attr.pool.dilation_h = dh;
		c.attr.pool.dilation_w = dw;
		if (c.attr.pool.kind == VNPU_POOL_AVG && rnd(2))
			c.attr.pool.flags = VNPU_POOL_COUNT_INCLUDE_PAD;
		c.t[0] = tdesc(dt, 4, (const uint32_t[]){ n, h, w, ch });
		c.t[3] = tdesc(dt, 4, (const uint32_t[]){ n, oh, ow, ch });
		if (dt != VNPU_DT_FP32) {
			tquant(&c.t[0], 0.1f, 128);
			tquant(&c.t[3], 0.07f, 120);
			/* onnxruntime's QLinearAveragePool: AVG, no dilation */
			if (c.attr.pool.kind == VNPU_POOL_AVG && dh <= 1 && dw <= 1)
				c.round = VNPU_ROUND_ORT_QLINEAR;
		}
		place(&c.t[0], true);
		place(&c.t[3], false);
		if (whole_vs_parts(&c, 2 + rnd(7)))
			cut++;
	}
	assert_true(cut > 100);
}

/* Batched GEMMs: batch dims broadcast either way, transposes, fp32 and int8. */
static void test_gemm_batch_random(void **state)
{
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 300; iter++) {
		struct vnpu_cmd_compute c;
		uint32_t nb = 1 + rnd(2), batch[2], m = 1 + rnd(24);
		uint32_t k = 1 + rnd(40), n = 1 + rnd(24), ad[4], bd[4], yd[4];
		uint32_t flags = rnd(4), i;
		bool q8 = rnd(2), ta = flags & VNPU_GEMM_TRANS_A;
		bool tb = flags & VNPU_GEMM_TRANS_B;
		unsigned int ra, rb;

		for (i = 0; i < nb; i++)
			batch[i] = 1 + rnd(5);
		/* A and B each take every batch dim, or a 1 there, or none. */
		ra = 2 + (rnd(3) ? nb : 0);
		rb = 2 + (ra == 2 || rnd(2) ? nb : 0);
		for (i = 0; i < nb; i++) {
			yd[i] = batch[i];
			if (ra > 2)
				ad[i] = rnd(4) ? batch[i] : 1;
			if (rb > 2)
				bd[i] = rnd(4) ? batch[i] : 1;
		}
		for (i = 0; i < nb; i++)
			yd[i] = (ra > 2 ? ad[i] : 1) > (rb > 2 ? bd[i] : 1) ?
				(ra > 2 ? ad[i] : 1) : (rb > 2 ? bd[i] : 1);
		ad[ra - 2] = ta ? k : m;
		ad[ra - 1] = ta ? m : k;
		bd[rb - 2] = tb ? n : k;
		bd[rb - 1] = tb ? k : n;
		yd[nb] = m;
		yd[nb + 1] = n;
		/* Unbatched products are cut by rows (test-ops-split.c). */
		if (yd[0] * yd[nb - 1] == 1)
			continue;
		flat_reset(&f);
		cmd_init(&c, VNPU_OP_GEMM);
		c.attr.gemm.flags = flags;
		c.t[0] = tdesc(q8 ? VNPU_DT_UINT8 : VNPU_DT_FP32, (int)ra, ad);
		c.t[1] = tdesc(q8 ? VNPU_DT_INT8 : VNPU_DT_FP32, (int)rb, bd);
		c.t[3] = tdesc(q8 ? VNPU_DT_INT8 : VNPU_DT_FP32, (int)nb + 2, yd);
		if (q8) {
			tquant(&c.t[0], 0.03f, 128);
			tquant(&c.t[1], 0.02f, 0);
			tquant(&c.t[3], 0.25f, 1);
		}
		place(&c.t[0], true);
		place(&c.t[1], true);
		place(&c.t[3], false);
		if (whole_vs_parts(&c, 2 + rnd(7)))
			cut++;
	}
	assert_true(cut > 100);
}

/* What must stay whole, and the floors the device's cut keeps to. */
static void test_rows_left_whole(void **state)
{
	struct vnpu_cmd_compute c, parts[VNPU_SPLIT_MAX_PARTS];
	uint64_t cycles;

	(void)state;
	/* NCHW BatchNormalization: P varies along C, the axis Y is cut by. */
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_ACTIVATION);
	c.act = VNPU_ACT_RELU;
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 16, 32, 32 });
	c.t[1] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 2, 16, 1, 1 });
	c.t[3] = c.t[0];
	place(&c.t[0], true);
	place(&c.t[1], true);
	place(&c.t[3], false);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts, &cycles), 0);
	/* With two images it is cut by image, P shared whole. */
	c.t[0].dims[0] = c.t[3].dims[0] = 2;
	place(&c.t[0], true);
	place(&c.t[3], false);
	assert_int_equal(whole_vs_parts(&c, 2), 2);

	/* Per-channel arrays along the cut axis. */
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_DEQUANTIZE);
	c.t[0] = tdesc(VNPU_DT_INT8, 2, (const uint32_t[]){ 64, 32 });
	c.t[3] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 64, 32 });
	place(&c.t[0], true);
	place(&c.t[3], false);
	per_channel(&c.t[0], 0);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts, &cycles), 0);

	/* Output over an input, even element for element. */
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 64, 32 });
	c.t[1] = c.t[0];
	c.t[3] = c.t[0];
	place(&c.t[0], true);
	place(&c.t[1], true);
	c.t[3].va = c.t[0].va;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts, &cycles), 0);
	/* Every dim 1 but the last: cut along it. */
	c.t[0] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 1, 1, 4096 });
	c.t[1] = c.t[0];
	c.t[3] = c.t[0];
	place(&c.t[0], true);
	place(&c.t[1], true);
	place(&c.t[3], false);
	assert_int_equal(whole_vs_parts(&c, 4), 4);

	/* GLOBAL_AVG sums every row into each output. */
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_POOL2D);
	c.attr.pool.kind = VNPU_POOL_GLOBAL_AVG;
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 64, 64, 8 });
	c.t[3] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 1, 1, 8 });
	place(&c.t[0], true);
	place(&c.t[3], false);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts, &cycles), 0);

	/*
	 * The device's floor: [1, 64, 64, 24] (98,304 elements) is less
	 * than two parts of VNPU_SPLIT_MIN_ELEMS; [1, 160, 160, 16]
	 * (409,600) is four parts per engine, at most six.
	 */
	flat_reset(&f);
	cmd_init(&c, VNPU_OP_ELTWISE);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 64, 64, 24 });
	c.t[1] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 24 });
	c.t[3] = c.t[0];
	place(&c.t[0], true);
	place(&c.t[1], true);
	place(&c.t[3], false);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 2, parts, &cycles), 0);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 160, 160, 16 });
	c.t[1] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 16 });
	c.t[3] = c.t[0];
	place(&c.t[0], true);
	place(&c.t[1], true);
	place(&c.t[3], false);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 1, parts, &cycles), 4);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 2, parts, &cycles), 6);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 16, parts, &cycles), 6);
	assert_int_equal(whole_vs_parts(&c, 6), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eltwise_random),
		cmocka_unit_test(test_activation_random),
		cmocka_unit_test(test_convert_random),
		cmocka_unit_test(test_pool_random),
		cmocka_unit_test(test_gemm_batch_random),
		cmocka_unit_test(test_rows_left_whole),
	};
	int ret;

	flat_init(&f, MEM_SIZE);
	ret = cmocka_run_group_tests_name("ops-split-rows", tests, NULL, NULL);
	free(f.mem);
	return ret;
}
