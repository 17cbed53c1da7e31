// SPDX-License-Identifier: MIT
/*
 * vnpu_compute_split(): the parts of a cut command, run one by one by the
 * engine, must write what the whole command writes (bit for bit on the
 * integer paths; on fp32, whose GEMM may pick another blocking for fewer
 * rows, within the rounding error bound of a K-term sum), each part must be valid on
 * its own, the bands must tile the output, and the same command must
 * always be cut the same way.  Commands that
 * must not be cut (strided or batched operands, an output overlapping an
 * input, too little work, other ops, invalid commands) are left whole.
 */
#include <float.h>
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
static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return n ? (uint32_t)((rs >> 16) % n) : 0;
}

/* Random bytes: any fp32 bit pattern but NaN/Inf-prone exponents. */
static uint64_t alloc_rand(uint8_t dt, uint64_t n)
{
	uint64_t bytes = n * vnpu_dtype_size(dt), va = flat_alloc(&f, bytes), i;
	uint8_t *p;

	assert_true(va);
	p = flat_host(&f, va);
	if (dt == VNPU_DT_FP32) {
		for (i = 0; i < n; i++) {
			float v = ((float)rnd(20001) - 10000.0f) / 997.0f;

			memcpy(p + 4 * i, &v, 4);
		}
	} else {
		for (i = 0; i < bytes; i++)
			p[i] = (uint8_t)rnd(256);
	}
	return va;
}

/* Per-channel scales and zero points for @n channels at a new VA. */
static uint64_t alloc_qchan(uint32_t n, bool zp)
{
	uint64_t va = flat_alloc(&f, 8ull * n);
	uint8_t *p = flat_host(&f, va);
	uint32_t i;

	for (i = 0; i < n; i++) {
		float s = 0.001f * (1 + rnd(50));
		int32_t z = zp ? (int32_t)rnd(21) - 10 : 0;

		memcpy(p + 4 * i, &s, 4);
		memcpy(p + 4ull * n + 4 * i, &z, 4);
	}
	return va;
}

static uint64_t span_of(const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	return info.span[VNPU_OP_SLOT_OUT];
}

/*
 * How far two fp32 results of @c may differ when they sum in different
 * orders: the whole command and its bands may (the GEMM under the engine
 * picks its kernels and blocking by shape), and each is within
 * gamma_K * sum|terms| of the exact sum (Higham, "Accuracy and Stability
 * of Numerical Algorithms", 3.1), so the two are within twice that;
 * gamma_K is taken as (K + 1) * FLT_EPSILON / 2 for K products plus the
 * bias.  sum|terms| is the reference on |X|, |W|, |B| without the
 * activation (ReLU cannot widen a difference).  A fixed tolerance cannot
 * hold: results near zero after cancelling large terms legitimately
 * differ in their leading digits.  Returns one bound per output element.
 */
static float *fp32_error_scale(const struct vnpu_cmd_compute *c, uint64_t span)
{
	struct vnpu_cmd_compute cc, ac = *c;
	struct vnpu_op_info info;
	uint8_t *saved[3] = { NULL, NULL, NULL };
	float *mag = malloc(span), *y;
	uint8_t *result = malloc(span);
	uint64_t k, i;
	unsigned int s;

	assert_non_null(mag);
	assert_non_null(result);
	assert_int_equal(vnpu_op_check(c, sizeof(*c), &cc, &info), 0);
	if (c->hdr.opcode == VNPU_OP_CONV2D)
		k = (uint64_t)c->t[1].dims[1] * c->t[1].dims[2] * c->t[1].dims[3];
	else
		k = c->t[0].dims[c->attr.gemm.flags & VNPU_GEMM_TRANS_A ? 0 : 1];
	for (s = 0; s < 3; s++) {
		float *p;

		if (!(info.present & (1u << s)))
			continue;
		assert_int_equal(c->t[s].dtype, VNPU_DT_FP32);
		p = flat_host(&f, c->t[s].va);
		saved[s] = malloc(info.span[s]);
		assert_non_null(saved[s]);
		memcpy(saved[s], p, info.span[s]);
		for (i = 0; i < info.span[s] / 4; i++)
			p[i] = fabsf(p[i]);
	}
	ac.act = VNPU_ACT_NONE;
	ac.act_alpha = 0;
	y = flat_host(&f, c->t[VNPU_OP_SLOT_OUT].va);
	memcpy(result, y, span);
	assert_int_equal(flat_ref(&f, &ac), 0);
	for (i = 0; i < span / 4; i++)
		mag[i] = (float)(k + 1) * FLT_EPSILON * y[i];
	memcpy(y, result, span);
	free(result);
	for (s = 0; s < 3; s++) {
		if (saved[s])
			memcpy(flat_host(&f, c->t[s].va), saved[s], info.span[s]);
		free(saved[s]);
	}
	return mag;
}

/*
 * Run @c whole, then cut into at most @max parts with floor @min_work and
 * each part on its own; both results must match byte for byte.  Returns
 * the number of parts.
 */
static unsigned int whole_vs_parts(const struct vnpu_cmd_compute *c,
				   unsigned int max, uint64_t min_work)
{
	static struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
	const struct vnpu_tensor_desc *y = &c->t[VNPU_OP_SLOT_OUT];
	uint64_t span = span_of(c), cycles = 0, whole_cycles = 0, covered = 0;
	uint8_t *out = flat_host(&f, y->va), *want;
	unsigned int n, i;

	want = malloc(span);
	assert_non_null(want);
	memset(out, 0xa5, span);
	assert_int_equal(flat_exec(&f, c, sizeof(*c), &whole_cycles), 0);
	memcpy(want, out, span);

	n = vnpu_compute_split_min(c, sizeof(*c), max, min_work, parts, &cycles);
	if (n) {
		static struct vnpu_cmd_compute again[VNPU_SPLIT_MAX_PARTS];

		/* Same command, same device: the same parts, every time. */
		assert_int_equal(vnpu_compute_split_min(c, sizeof(*c), max, min_work,
							again, &cycles), n);
		assert_memory_equal(again, parts, n * sizeof(parts[0]));
		assert_true(n >= 2 && n <= max && n <= VNPU_SPLIT_MAX_PARTS);
		/* The timing model charges the command, not its parts. */
		assert_int_equal(cycles, whole_cycles);
		memset(out, 0x5a, span);
		for (i = 0; i < n; i++) {
			const struct vnpu_tensor_desc *py = &parts[i].t[VNPU_OP_SLOT_OUT];
			uint64_t pspan = span_of(&parts[i]);

			/* Bands are contiguous, in order, and tile the output. */
			assert_int_equal(py->va, y->va + covered);
			covered += pspan;
			assert_int_equal(flat_exec(&f, &parts[i], sizeof(parts[i]),
						   NULL), 0);
		}
		assert_int_equal(covered, span);
		if (y->dtype == VNPU_DT_FP32) {
			float *mag = fp32_error_scale(c, span);

			for (i = 0; i < span / 4; i++) {
				float a, b, tol;

				memcpy(&a, out + 4 * i, 4);
				memcpy(&b, want + 4 * i, 4);
				tol = mag[i] + 1e-30f;
				if (!(fabsf(a - b) <= tol)) {
					free(mag);
					free(want);
					fail_msg("op 0x%x cut in %u: %g, whole %g at %u (bound %g)",
						 c->hdr.opcode, n, a, b, i, tol);
				}
			}
			free(mag);
		} else if (memcmp(out, want, span)) {
			uint64_t b = 0;

			while (out[b] == want[b])
				b++;
			free(want);
			fail_msg("op 0x%x dtype %u cut in %u: byte %llu of %llu differs",
				 c->hdr.opcode, c->t[1].dtype, n, (unsigned long long)b,
				 (unsigned long long)span);
		}
	}
	free(want);
	return n;
}

struct conv_shape {
	uint32_t n, h, w, c, co, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups;
};

static uint32_t conv_out(uint32_t in, uint32_t k, uint32_t s, uint32_t d,
			 uint32_t p0, uint32_t p1)
{
	int64_t ext = (int64_t)d * (k - 1) + 1, num = (int64_t)in + p0 + p1 - ext;

	return num < 0 ? 0 : (uint32_t)(num / s + 1);
}

/* A CONV2D command over fresh random operands; false if OH or OW is 0. */
static bool make_conv(struct vnpu_cmd_compute *c, const struct conv_shape *s,
		      bool q8, bool chan)
{
	uint32_t oh = conv_out(s->h, s->kh, s->sh, s->dh, s->pt, s->pb);
	uint32_t ow = conv_out(s->w, s->kw, s->sw, s->dw, s->pl, s->pr);
	uint8_t dt = q8 ? VNPU_DT_INT8 : VNPU_DT_FP32;

	if (!oh || !ow)
		return false;
	flat_reset(&f);
	cmd_init(c, VNPU_OP_CONV2D);
	c->t[0] = tdesc(q8 ? VNPU_DT_UINT8 : dt, 4,
			(const uint32_t[]){ s->n, s->h, s->w, s->c });
	c->t[0].va = alloc_rand(c->t[0].dtype, (uint64_t)s->n * s->h * s->w * s->c);
	c->t[1] = tdesc(dt, 4, (const uint32_t[]){ s->co, s->kh, s->kw,
						   s->c / s->groups });
	c->t[1].va = alloc_rand(dt, (uint64_t)s->co * s->kh * s->kw * (s->c / s->groups));
	c->t[2] = tdesc(q8 ? VNPU_DT_INT32 : VNPU_DT_FP32, 1,
			(const uint32_t[]){ s->co });
	c->t[2].va = alloc_rand(q8 ? VNPU_DT_INT8 : VNPU_DT_FP32, 4ull * s->co);
	if (q8) {
		/* Small int32 biases: the random bytes above were 4 per entry. */
		int32_t *b = flat_host(&f, c->t[2].va);
		uint32_t i;

		for (i = 0; i < s->co; i++)
			b[i] = (int32_t)rnd(2001) - 1000;
	}
	c->t[3] = tdesc(q8 ? VNPU_DT_INT8 : dt, 4,
			(const uint32_t[]){ s->n, oh, ow, s->co });
	c->t[3].va = flat_alloc(&f, (uint64_t)s->n * oh * ow * s->co * (q8 ? 1 : 4));
	if (q8) {
		tquant(&c->t[0], 0.02f, 7);
		if (chan) {
			c->t[1].quant = VNPU_QUANT_CHANNEL;
			c->t[1].quant_axis = 0;
			c->t[1].quant_va = alloc_qchan(s->co, false);
		} else {
			tquant(&c->t[1], 0.01f, 0);
		}
		tquant(&c->t[3], 0.5f, -3);
	}
	c->act = rnd(2) ? VNPU_ACT_RELU : VNPU_ACT_NONE;
	c->attr.conv = (struct vnpu_attr_conv2d){
		.stride_h = s->sh, .stride_w = s->sw,
		.dilation_h = s->dh, .dilation_w = s->dw,
		.pad_top = s->pt, .pad_left = s->pl,
		.pad_bottom = s->pb, .pad_right = s->pr, .groups = s->groups };
	return true;
}

static void make_gemm(struct vnpu_cmd_compute *c, uint32_t m, uint32_t k,
		      uint32_t n, bool q8, uint32_t flags)
{
	uint8_t dt = q8 ? VNPU_DT_INT8 : VNPU_DT_FP32;
	bool ta = flags & VNPU_GEMM_TRANS_A, tb = flags & VNPU_GEMM_TRANS_B;

	flat_reset(&f);
	cmd_init(c, VNPU_OP_GEMM);
	c->attr.gemm.flags = flags;
	c->t[0] = tdesc(q8 ? VNPU_DT_UINT8 : dt, 2,
			ta ? (const uint32_t[]){ k, m } : (const uint32_t[]){ m, k });
	c->t[0].va = alloc_rand(c->t[0].dtype, (uint64_t)m * k);
	c->t[1] = tdesc(dt, 2, tb ? (const uint32_t[]){ n, k } : (const uint32_t[]){ k, n });
	c->t[1].va = alloc_rand(dt, (uint64_t)k * n);
	c->t[3] = tdesc(dt, 2, (const uint32_t[]){ m, n });
	c->t[3].va = flat_alloc(&f, (uint64_t)m * n * (q8 ? 1 : 4));
	if (q8) {
		tquant(&c->t[0], 0.03f, 128);
		tquant(&c->t[1], 0.02f, 0);
		tquant(&c->t[3], 0.25f, 1);
	}
}

/* Random CONV2D shapes, fp32 and int8, including depthwise and grouped. */
static void test_conv_random(void **state)
{
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 400; iter++) {
		struct vnpu_cmd_compute c;
		struct conv_shape s = {
			.n = rnd(4) ? 1 : 1 + rnd(3),
			.h = 1 + rnd(24), .w = 1 + rnd(20),
			.kh = 1 + rnd(5), .kw = 1 + rnd(4),
			.sh = 1 + rnd(3), .sw = 1 + rnd(2),
			.dh = 1 + rnd(2), .dw = 1 + rnd(2),
		};
		bool q8 = rnd(2);

		s.pt = rnd(s.kh + 1);
		s.pb = rnd(s.kh + 1);
		s.pl = rnd(s.kw);
		s.pr = rnd(s.kw);
		switch (rnd(3)) {
		case 0:		/* depthwise, channel multiplier 1 or 2 */
			s.c = s.groups = 1 + rnd(24);
			s.co = s.c * (1 + rnd(2));
			break;
		case 1:
			s.groups = 1 + rnd(3);
			s.c = s.groups * (1 + rnd(6));
			s.co = s.groups * (1 + rnd(6));
			break;
		default:
			s.groups = 1;
			s.c = 1 + rnd(20);
			s.co = 1 + rnd(33);
			break;
		}
		if (!make_conv(&c, &s, q8, q8 && rnd(2)))
			continue;
		cut += whole_vs_parts(&c, 2 + rnd(VNPU_SPLIT_MAX_PARTS - 1), 1) != 0;
	}
	/* Nearly every shape has two rows or images to cut between. */
	assert_true(cut > 250);
}

static void test_gemm_random(void **state)
{
	unsigned int iter, cut = 0;

	(void)state;
	for (iter = 0; iter < 200; iter++) {
		struct vnpu_cmd_compute c;
		bool q8 = rnd(2);

		make_gemm(&c, 1 + rnd(70), 1 + rnd(90), 1 + rnd(70), q8,
			  rnd(2) ? VNPU_GEMM_TRANS_B : 0);
		cut += whole_vs_parts(&c, 2 + rnd(VNPU_SPLIT_MAX_PARTS - 1), 1) != 0;
	}
	assert_true(cut > 150);
}

/* With the device's floor: big layers are cut, small ones are not. */
static void test_floor(void **state)
{
	struct vnpu_cmd_compute c, parts[VNPU_SPLIT_MAX_PARTS];
	struct conv_shape big = { 1, 58, 58, 64, 64, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1 };
	struct conv_shape small = { 1, 16, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	uint64_t cycles;

	(void)state;
	assert_true(make_conv(&c, &big, false, false));
	assert_int_equal(whole_vs_parts(&c, 4, VNPU_SPLIT_MIN_WORK), 4);
	/* 115.6 M MACs: parts of about VNPU_SPLIT_PART_WORK, >= the engines. */
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 1, parts, &cycles), 6);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 2, parts, &cycles), 6);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 8, parts, &cycles), 8);
	assert_true(make_conv(&c, &small, false, false));
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 4, parts, &cycles), 0);
	make_gemm(&c, 512, 256, 256, true, 0);
	assert_int_equal(whole_vs_parts(&c, 16, VNPU_SPLIT_MIN_WORK), 16);
	/* 33.5 M MACs in 512 rows: two parts, however many engines. */
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 2, parts, &cycles), 2);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 16, parts, &cycles), 2);
	/* The same 33.5 M MACs in 128 rows: too few rows to share. */
	make_gemm(&c, 128, 512, 512, true, 0);
	assert_int_equal(vnpu_compute_split(&c, sizeof(c), 2, parts, &cycles), 0);
}

/* What must stay whole, however large. */
static void test_left_whole(void **state)
{
	struct vnpu_cmd_compute c, parts[VNPU_SPLIT_MAX_PARTS];
	struct conv_shape s = { 1, 30, 30, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	uint64_t cycles;

	(void)state;
	/* The reference: this one is cut. */
	assert_true(make_conv(&c, &s, false, false));
	assert_int_not_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						    &cycles), 0);
	/* Output over the input: parallel bands would read written rows. */
	c.t[3].va = c.t[0].va;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* Output over the weights. */
	assert_true(make_conv(&c, &s, false, false));
	c.t[3].va = c.t[1].va;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* A strided output. */
	assert_true(make_conv(&c, &s, false, false));
	c.t[3].flags = VNPU_TENSOR_STRIDED;
	c.t[3].strides[3] = 1;
	c.t[3].strides[2] = 8;
	c.t[3].strides[1] = 8 * 30;
	c.t[3].strides[0] = 8 * 30 * 30;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* Strided weights (the engine's slow path: not worth sharing). */
	assert_true(make_conv(&c, &s, false, false));
	c.t[1].flags = VNPU_TENSOR_STRIDED;
	c.t[1].strides[3] = 1;
	c.t[1].strides[2] = 8;
	c.t[1].strides[1] = 8 * 3;
	c.t[1].strides[0] = 8 * 3 * 3;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* Invalid: reported by the whole command, not by a part. */
	assert_true(make_conv(&c, &s, false, false));
	c.attr.conv.reserved[0] = 1;
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* A transposed A's rows are not contiguous. */
	make_gemm(&c, 64, 32, 16, false, VNPU_GEMM_TRANS_A);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/*
	 * A batched GEMM whose fp32 B every batch shares (the engine may run
	 * it as one taller product; other batched GEMMs are cut by batches,
	 * test-ops-split-rows.c).
	 */
	make_gemm(&c, 64, 32, 16, false, 0);
	c.t[0] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 2, 32, 32 });
	c.t[0].va = alloc_rand(VNPU_DT_FP32, 2 * 32 * 32);
	c.t[3] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 2, 32, 16 });
	c.t[3].va = flat_alloc(&f, 4 * 2 * 32 * 16);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/* One row: nothing to cut between. */
	make_gemm(&c, 1, 2048, 1024, false, 0);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
	/*
	 * An op with no cut: SOFTMAX reduces along its axis (the per-element
	 * ops and POOL2D, test-ops-split-rows.c).
	 */
	cmd_init(&c, VNPU_OP_SOFTMAX);
	c.attr.softmax.axis = 1;
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 64, 64 });
	c.t[0].va = alloc_rand(VNPU_DT_FP32, 64 * 64);
	c.t[3] = c.t[0];
	c.t[3].va = flat_alloc(&f, 4 * 64 * 64);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 4, 1, parts,
						&cycles), 0);
}

/*
 * A band whose windows lie wholly in the padding cannot be a command of
 * its own (its input would have no rows): such a command stays whole.
 */
static void test_all_padding_band(void **state)
{
	struct vnpu_cmd_compute c, parts[VNPU_SPLIT_MAX_PARTS];
	struct conv_shape s = { 1, 2, 4, 4, 4, 1, 1, 1, 1, 1, 1, 3, 0, 3, 0, 1 };
	uint64_t cycles;

	(void)state;
	assert_true(make_conv(&c, &s, false, false));
	assert_int_equal(c.t[3].dims[1], 8);
	assert_int_equal(vnpu_compute_split_min(&c, sizeof(c), 8, 1, parts,
						&cycles), 0);
	/* With the first band reaching real rows, it is cut. */
	assert_int_not_equal(vnpu_compute_split_min(&c, sizeof(c), 2, 1, parts,
						    &cycles), 0);
	assert_int_equal(whole_vs_parts(&c, 2, 1), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_random),
		cmocka_unit_test(test_gemm_random),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_left_whole),
		cmocka_unit_test(test_all_padding_band),
	};
	int ret;

	flat_init(&f, MEM_SIZE);
	ret = cmocka_run_group_tests_name("ops-split", tests, NULL, NULL);
	free(f.mem);
	return ret;
}
