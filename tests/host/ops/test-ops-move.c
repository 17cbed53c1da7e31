// SPDX-License-Identifier: MIT
/*
 * COPY and RESIZE, the data-movement commands: their validation (every refusal names
 * the field), the reference against an independent model of the
 * semantics written here from ops.rst (index arithmetic done differently:
 * borders by repeated folding, reversal on the output side), and the
 * engine against the reference over thousands of random shapes, layouts,
 * borders and dtype conversions, bit for bit, including the bytes around
 * and between the output's elements.  RESIZE's model follows ONNX's
 * reference algorithm (neighbours by distance in the edge-padded axis).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"
#include "vnpu_engine.h"

#define MEM_SIZE	(16u << 20)

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return n ? (uint32_t)((r->s >> 16) % n) : 0;
}

#define OFF(f)		VNPU_CMD_OFF(f)
#define TOFF(s, f)	VNPU_CMD_TENSOR_OFF(s, f)

static struct flat mem;

static int setup(void **state)
{
	(void)state;
	flat_init(&mem, MEM_SIZE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(mem.mem);
	return 0;
}

/* A well-formed fp32 copy of a [2,3] X into a [4,5] Y at (1,1). */
static void base_cmd(struct vnpu_cmd_compute *c)
{
	cmd_init(c, VNPU_OP_COPY);
	c->t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 2, 3 });
	c->t[3] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 4, 5 });
	c->t[0].va = FLAT_BASE;
	c->t[3].va = FLAT_BASE + 4096;
	c->attr.copy.offset[0] = 1;
	c->attr.copy.offset[1] = 1;
}

static uint32_t check_off(const struct vnpu_cmd_compute *c)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;

	if (!vnpu_op_check(c, sizeof(*c), &cc, &info))
		return UINT32_MAX;
	return info.err_off;
}

static void test_validate(void **state)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	struct vnpu_cmd_compute cc;

	(void)state;
	base_cmd(&c);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	assert_int_equal(info.macs, 6);		/* KEEP: only X's elements */
	c.attr.copy.border = VNPU_COPY_BORDER_CONSTANT;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	assert_int_equal(info.macs, 20);	/* a border: all of Y */

	base_cmd(&c);
	c.attr.copy.border = VNPU_COPY_BORDER_WRAP + 1;
	assert_int_equal(check_off(&c), OFF(attr.copy.border));
	base_cmd(&c);
	c.attr.copy.fill = f2u(1.0f);	/* a fill without CONSTANT */
	assert_int_equal(check_off(&c), OFF(attr.copy.fill));
	base_cmd(&c);
	c.attr.copy.reserved[2] = 1;
	assert_int_equal(check_off(&c), OFF(attr.copy.reserved) + 8);
	base_cmd(&c);
	c.attr.copy.offset[2] = -1;	/* beyond the rank */
	assert_int_equal(check_off(&c), OFF(attr.copy.offset) + 8);
	base_cmd(&c);
	c.attr.copy.reverse = 4;
	assert_int_equal(check_off(&c), OFF(attr.copy.reverse));
	base_cmd(&c);
	c.t[3] = tdesc(VNPU_DT_FP32, 3, (const uint32_t[]){ 4, 5, 1 });
	c.t[3].va = FLAT_BASE + 4096;
	assert_int_equal(check_off(&c), TOFF(3, rank));
	base_cmd(&c);
	c.t[0].dtype = VNPU_DT_INT32;	/* int32 converts to nothing else */
	assert_int_equal(check_off(&c), TOFF(3, dtype));
	base_cmd(&c);
	c.t[3].dtype = VNPU_DT_INT8;
	c.t[3].quant = VNPU_QUANT_CHANNEL;
	c.t[3].quant_axis = 1;
	c.t[3].quant_va = FLAT_BASE + 8192;
	assert_int_equal(check_off(&c), TOFF(3, quant));
	base_cmd(&c);
	c.act = VNPU_ACT_RELU;		/* no fused activation */
	assert_int_equal(check_off(&c), OFF(act));
	base_cmd(&c);
	c.t[1] = c.t[0];		/* no second input */
	assert_int_equal(check_off(&c), TOFF(1, va));
	/* Offsets at the int32 extremes are valid: X just misses Y. */
	base_cmd(&c);
	c.attr.copy.offset[0] = INT32_MIN;
	c.attr.copy.offset[1] = INT32_MAX;
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	assert_int_equal(info.macs, 0);
	/* An output overlapping itself is refused as for every op. */
	base_cmd(&c);
	c.t[3].flags = VNPU_TENSOR_STRIDED;
	c.t[3].strides[0] = 1;
	c.t[3].strides[1] = 1;
	assert_int_not_equal(check_off(&c), UINT32_MAX);
}

/* ---- The independent model --------------------------------------------- */

/* Fold @s into [0, n) the long way: one reflection or wrap at a time. */
static bool model_src(int64_t s, uint32_t n, unsigned int border, int64_t *out)
{
	if (s >= 0 && s < n) {
		*out = s;
		return true;
	}
	switch (border) {
	case VNPU_COPY_BORDER_EDGE:
		*out = s < 0 ? 0 : n - 1;
		return true;
	case VNPU_COPY_BORDER_WRAP:
		while (s < 0)
			s += n;
		while (s >= n)
			s -= n;
		*out = s;
		return true;
	case VNPU_COPY_BORDER_REFLECT:
		if (n == 1) {
			*out = 0;
			return true;
		}
		while (s < 0 || s >= n)
			s = s < 0 ? -s : 2 * ((int64_t)n - 1) - s;
		*out = s;
		return true;
	}
	return false;
}

/*
 * fp32 X (dense, dims xd) copied into fp32 Y (dense, dims yd) by @c, into
 * @want, which holds Y's previous contents.
 */
static void model_copy(const struct vnpu_cmd_compute *c, const float *x,
		       float *want)
{
	const struct vnpu_tensor_desc *xd = &c->t[0], *yd = &c->t[3];
	const struct vnpu_attr_copy *at = &c->attr.copy;
	uint64_t n = 1, i;
	int r = yd->rank, d;
	float fill;

	memcpy(&fill, &at->fill, 4);
	for (d = 0; d < r; d++)
		n *= yd->dims[d];
	for (i = 0; i < n; i++) {
		uint64_t rem = i, xo = 0, xs = 1;
		int64_t yi[VNPU_MAX_RANK];
		bool in = true;

		for (d = r - 1; d >= 0; d--) {
			yi[d] = (int64_t)(rem % yd->dims[d]);
			rem /= yd->dims[d];
		}
		for (d = r - 1; d >= 0; d--) {
			int64_t s;

			if (!model_src(yi[d] - at->offset[d], xd->dims[d],
				       at->border, &s)) {
				in = false;
				break;
			}
			if ((at->reverse >> d) & 1)
				s = xd->dims[d] - 1 - s;
			xo += (uint64_t)s * xs;
			xs *= xd->dims[d];
		}
		if (in)
			want[i] = x[xo];
		else if (at->border == VNPU_COPY_BORDER_CONSTANT)
			want[i] = fill;
	}
}

static void test_ref_vs_model(void **state)
{
	struct rng r = { 0x243f6a8885a308d3ull };
	unsigned int t;

	(void)state;
	for (t = 0; t < 3000; t++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[VNPU_MAX_RANK], yd[VNPU_MAX_RANK];
		uint64_t xn = 1, yn = 1, i;
		int rank = 1 + (int)rnd(&r, VNPU_MAX_RANK), d;
		float *x, *y, *want;

		for (d = 0; d < rank; d++) {
			yd[d] = 1 + rnd(&r, rank > 3 ? 3 : 6);
			xd[d] = 1 + rnd(&r, yd[d] + 2);
			xn *= xd[d];
			yn *= yd[d];
		}
		cmd_init(&c, VNPU_OP_COPY);
		c.t[0] = tdesc(VNPU_DT_FP32, rank, xd);
		c.t[3] = tdesc(VNPU_DT_FP32, rank, yd);
		c.attr.copy.border = rnd(&r, VNPU_COPY_BORDER_WRAP + 1);
		if (c.attr.copy.border == VNPU_COPY_BORDER_CONSTANT)
			c.attr.copy.fill = f2u((float)rnd(&r, 100) - 50.0f);
		for (d = 0; d < rank; d++)
			c.attr.copy.offset[d] = (int32_t)rnd(&r, yd[d] + xd[d] + 5) -
						(int32_t)xd[d] - 2;
		c.attr.copy.reverse = rnd(&r, 1u << rank);
		flat_reset(&mem);
		c.t[0].va = flat_alloc(&mem, xn * 4);
		c.t[3].va = flat_alloc(&mem, yn * 4);
		x = flat_host(&mem, c.t[0].va);
		y = flat_host(&mem, c.t[3].va);
		want = malloc(yn * 4);
		assert_non_null(want);
		for (i = 0; i < xn; i++)
			x[i] = (float)i;
		for (i = 0; i < yn; i++)
			y[i] = want[i] = -1000.0f - (float)i;
		model_copy(&c, x, want);
		assert_int_equal(flat_ref(&mem, &c), 0);
		if (memcmp(y, want, yn * 4)) {
			fprintf(stderr, "case %u: rank %d border %u\n", t, rank,
				c.attr.copy.border);
			fail();
		}
		free(want);
	}
}

/* Worked examples from the ONNX operator documentation. */
static void test_ref_examples(void **state)
{
	static const float pad_in[6] = { 1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f };
	static const float reflect_want[12] = {
		1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f,
	};
	struct vnpu_cmd_compute c;
	float *y;
	uint16_t *h;
	uint8_t *q;
	int i;

	(void)state;
	/* Pad [3,2] by two columns on the left, reflect: ONNX's example. */
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 3, 2 });
	c.t[3] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 3, 4 });
	c.t[0].va = flat_alloc(&mem, sizeof(pad_in));
	c.t[3].va = flat_alloc(&mem, sizeof(reflect_want));
	memcpy(flat_host(&mem, c.t[0].va), pad_in, sizeof(pad_in));
	c.attr.copy.border = VNPU_COPY_BORDER_REFLECT;
	c.attr.copy.offset[1] = 2;
	assert_int_equal(flat_ref(&mem, &c), 0);
	y = flat_host(&mem, c.t[3].va);
	/* Reflect pads [1.2, 1.0] | ... : row 0 is 1.0 1.2 1.0 1.2. */
	assert_memory_equal(y, reflect_want, sizeof(reflect_want));

	/* A transpose through X's strides with fp32 -> fp16 conversion. */
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 3, 2 });
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	c.t[0].strides[0] = 1;
	c.t[0].strides[1] = 3;
	c.t[3] = tdesc(VNPU_DT_FP16, 2, (const uint32_t[]){ 3, 2 });
	c.t[0].va = flat_alloc(&mem, sizeof(pad_in));
	c.t[3].va = flat_alloc(&mem, 12);
	memcpy(flat_host(&mem, c.t[0].va), pad_in, sizeof(pad_in));
	assert_int_equal(flat_ref(&mem, &c), 0);
	h = flat_host(&mem, c.t[3].va);
	for (i = 0; i < 6; i++)
		assert_int_equal(h[i], vnpu_f32_to_fp16(pad_in[(i % 2) * 3 + i / 2]));

	/* float -> uint8 quantization with the fill quantized too. */
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 4 });
	c.t[3] = tdesc(VNPU_DT_UINT8, 1, (const uint32_t[]){ 6 });
	tquant(&c.t[3], 0.5f, 10);
	c.t[0].va = flat_alloc(&mem, 16);
	c.t[3].va = flat_alloc(&mem, 6);
	memcpy(flat_host(&mem, c.t[0].va), (const float[]){ -1.0f, 0.25f, 0.75f, 200.0f }, 16);
	c.attr.copy.border = VNPU_COPY_BORDER_CONSTANT;
	c.attr.copy.fill = f2u(1.0f);
	c.attr.copy.offset[0] = 1;
	assert_int_equal(flat_ref(&mem, &c), 0);
	q = flat_host(&mem, c.t[3].va);
	/* 1/0.5+10 = 12; -1 -> 8; 0.25 -> 10.5 -> 10 (even); 0.75 -> 11.5 -> 12. */
	assert_memory_equal(q, ((const uint8_t[]){ 12, 8, 10, 12, 255, 12 }), 6);

	/* Equal dtypes move bits: a signalling NaN and -0 survive. */
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 2 });
	c.t[3] = tdesc(VNPU_DT_FP32, 1, (const uint32_t[]){ 2 });
	c.t[0].va = flat_alloc(&mem, 8);
	c.t[3].va = flat_alloc(&mem, 8);
	memcpy(flat_host(&mem, c.t[0].va), (const uint32_t[]){ 0x7f800001u, 0x80000000u }, 8);
	assert_int_equal(flat_ref(&mem, &c), 0);
	assert_memory_equal(flat_host(&mem, c.t[3].va),
			    ((const uint32_t[]){ 0x7f800001u, 0x80000000u }), 8);
}

/* ---- Engine against reference ----------------------------------------- */

static const uint8_t dts[] = {
	VNPU_DT_FP32, VNPU_DT_FP16, VNPU_DT_BF16, VNPU_DT_INT8, VNPU_DT_UINT8,
	VNPU_DT_INT32,
};

/* Random quantization for 8-bit tensors; @like copies another's. */
static void rnd_quant(struct rng *r, struct vnpu_tensor_desc *d,
		      const struct vnpu_tensor_desc *like)
{
	if (d->dtype != VNPU_DT_INT8 && d->dtype != VNPU_DT_UINT8)
		return;
	if (like && like->dtype == d->dtype && rnd(r, 2)) {
		d->quant = VNPU_QUANT_TENSOR;
		d->scale = like->scale;
		d->zero_point = like->zero_point;
		return;
	}
	tquant(d, 0.01f + (float)rnd(r, 100) / 64.0f,
	       (d->dtype == VNPU_DT_INT8 ? -128 : 0) + (int32_t)rnd(r, 256));
}

/*
 * A random layout for @d: a permutation of its dims in memory, gaps, and
 * (inputs only) zero strides that broadcast; returns the span in elements.
 */
static uint64_t rnd_layout(struct rng *r, struct vnpu_tensor_desc *d, bool input)
{
	int perm[VNPU_MAX_RANK], i, j, t;
	uint64_t st = 1, last = 0;

	if (!rnd(r, 3)) {
		uint64_t n = 1;

		for (i = 0; i < d->rank; i++)
			n *= d->dims[i];
		return n;
	}
	for (i = 0; i < d->rank; i++)
		perm[i] = i;
	for (i = d->rank - 1; i > 0 && (input || rnd(r, 2)); i--) {
		j = (int)rnd(r, (uint32_t)i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	d->flags = VNPU_TENSOR_STRIDED;
	for (i = d->rank - 1; i >= 0; i--) {
		int k = perm[i];

		d->strides[k] = input && !rnd(r, 6) ? 0 : st;
		st = st * d->dims[k] + rnd(r, 3);
	}
	for (i = 0; i < d->rank; i++)
		last += (uint64_t)(d->dims[i] - 1) * d->strides[i];
	return last + 1;
}

static void test_engine_vs_ref(void **state)
{
	struct rng r = { 0x13198a2e03707344ull };
	struct flat ref;
	unsigned int t, raw = 0;

	(void)state;
	flat_init(&ref, MEM_SIZE);
	for (t = 0; t < 4000; t++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[VNPU_MAX_RANK], yd[VNPU_MAX_RANK];
		int rank = 1 + (int)rnd(&r, VNPU_MAX_RANK), d;
		uint64_t xs, ys, cycles, used, i;
		uint8_t xdt = dts[rnd(&r, sizeof(dts))], ydt;

		ydt = rnd(&r, 2) || xdt == VNPU_DT_INT32 ? xdt :
		      dts[rnd(&r, sizeof(dts) - 1)];
		for (d = 0; d < rank; d++) {
			uint32_t m = rank > 4 ? 4 : rank > 2 ? 9 : 70;

			yd[d] = 1 + rnd(&r, m);
			xd[d] = 1 + rnd(&r, yd[d] + 3);
		}
		cmd_init(&c, VNPU_OP_COPY);
		c.round = (uint8_t)rnd(&r, 2);
		c.t[0] = tdesc(xdt, rank, xd);
		c.t[3] = tdesc(ydt, rank, yd);
		rnd_quant(&r, &c.t[0], NULL);
		rnd_quant(&r, &c.t[3], &c.t[0]);
		c.attr.copy.border = rnd(&r, VNPU_COPY_BORDER_WRAP + 1);
		if (c.attr.copy.border == VNPU_COPY_BORDER_CONSTANT)
			c.attr.copy.fill = f2u(rnd(&r, 4) ? (float)rnd(&r, 64) / 8.0f - 4.0f :
					       rnd(&r, 2) ? NAN : -INFINITY);
		for (d = 0; d < rank; d++)
			c.attr.copy.offset[d] = (int32_t)rnd(&r, yd[d] + xd[d] + 3) -
						(int32_t)xd[d] - 1;
		c.attr.copy.reverse = rnd(&r, 1u << rank);
		flat_reset(&mem);
		xs = rnd_layout(&r, &c.t[0], true);
		ys = rnd_layout(&r, &c.t[3], false);
		c.t[0].va = flat_alloc(&mem, xs * vnpu_dtype_size(xdt));
		c.t[3].va = flat_alloc(&mem, ys * vnpu_dtype_size(ydt));
		used = mem.next + 4096;
		for (i = 0; i < used; i++)
			mem.mem[i] = (uint8_t)rnd(&r, 256);
		/* Fewer NaN payload games in 16-bit floats: keep them finite. */
		if (xdt == VNPU_DT_FP16 || xdt == VNPU_DT_BF16)
			for (i = 0; i < xs; i++)
				((uint8_t *)flat_host(&mem, c.t[0].va))[2 * i + 1] &= 0x3f;
		memcpy(ref.mem, mem.mem, used);
		mem.allow_map = rnd(&r, 2);
		raw += xdt == ydt;
		assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), 0);
		assert_true(cycles > 0);
		assert_int_equal(flat_ref(&ref, &c), 0);
		if (memcmp(mem.mem, ref.mem, used)) {
			for (i = 0; i < used && mem.mem[i] == ref.mem[i]; i++)
				;
			fprintf(stderr, "case %u: rank %d %u->%u border %u rev %x: byte %llu\n",
				t, rank, xdt, ydt, c.attr.copy.border,
				c.attr.copy.reverse, (unsigned long long)i);
			fail();
		}
	}
	assert_true(raw > 1000);
	free(ref.mem);
}

/*
 * Concat's parts in NHWC memory seen as NCHW views (PaddleOCR's det
 * neck): X and Y both contiguous along a dimension that is not their
 * innermost, so the engine moves runs of it; Y holding other parts
 * around the one written (KEEP), any element size, engine and reference
 * byte for byte.
 */
static void test_engine_channel_slices(void **state)
{
	static const uint8_t sdts[] = { VNPU_DT_FP32, VNPU_DT_FP16, VNPU_DT_INT8 };
	struct rng r = { 0x452821e638d01377ull };
	struct flat ref;
	unsigned int t;

	(void)state;
	flat_init(&ref, MEM_SIZE);
	for (t = 0; t < 600; t++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[VNPU_MAX_RANK], yd[VNPU_MAX_RANK];
		int rank = 2 + (int)rnd(&r, 3), k = (int)rnd(&r, (uint32_t)rank - 1), d;
		uint8_t dt = sdts[rnd(&r, sizeof(sdts))];
		uint64_t xs = 1, ys = 1, sx = 1, sy = 1, cycles, used, i;

		for (d = 0; d < rank; d++) {
			xd[d] = 1 + rnd(&r, d == k ? 40 : 12);
			yd[d] = xd[d];
		}
		yd[k] = xd[k] + rnd(&r, 3 * xd[k] + 1);
		cmd_init(&c, VNPU_OP_COPY);
		c.t[0] = tdesc(dt, rank, xd);
		c.t[3] = tdesc(dt, rank, yd);
		if (dt == VNPU_DT_INT8) {
			tquant(&c.t[0], 0.5f, 3);
			tquant(&c.t[3], 0.5f, 3);
		}
		c.attr.copy.border = VNPU_COPY_BORDER_KEEP;
		c.attr.copy.offset[k] = (int32_t)rnd(&r, yd[k] - xd[k] + 1);
		/* Dimension k innermost in memory, the rest in their order. */
		c.t[0].flags = c.t[3].flags = VNPU_TENSOR_STRIDED;
		c.t[0].strides[k] = c.t[3].strides[k] = 1;
		sx = xd[k] + rnd(&r, 2);
		sy = yd[k];
		for (d = rank - 1; d >= 0; d--) {
			if (d == k)
				continue;
			c.t[0].strides[d] = sx;
			c.t[3].strides[d] = sy;
			sx *= xd[d];
			sy *= yd[d];
		}
		xs = sx;
		ys = sy;
		flat_reset(&mem);
		c.t[0].va = flat_alloc(&mem, xs * vnpu_dtype_size(dt));
		c.t[3].va = flat_alloc(&mem, ys * vnpu_dtype_size(dt));
		used = mem.next + 4096;
		for (i = 0; i < used; i++)
			mem.mem[i] = (uint8_t)rnd(&r, 256);
		memcpy(ref.mem, mem.mem, used);
		mem.allow_map = rnd(&r, 2);
		assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), 0);
		assert_int_equal(flat_ref(&ref, &c), 0);
		if (memcmp(mem.mem, ref.mem, used)) {
			fprintf(stderr, "slices case %u: rank %d k %d dt %u\n", t, rank, k, dt);
			fail();
		}
	}
	free(ref.mem);
}

/* A copy the abort flag stops ends -ECANCELED with nothing written. */
static void test_abort(void **state)
{
	struct vnpu_cmd_compute c;
	uint64_t cycles;
	uint8_t *y;

	(void)state;
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_COPY);
	c.t[0] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 1024, 1024 });
	c.t[3] = tdesc(VNPU_DT_FP32, 2, (const uint32_t[]){ 1024, 1024 });
	c.t[0].flags = VNPU_TENSOR_STRIDED;	/* a transpose: no memcpy rows */
	c.t[0].strides[0] = 1;
	c.t[0].strides[1] = 1024;
	c.t[0].va = flat_alloc(&mem, 4u << 20);
	c.t[3].va = flat_alloc(&mem, 4u << 20);
	y = flat_host(&mem, c.t[3].va);
	memset(y, 0x5a, 4u << 20);
	mem.allow_map = false;
	flat_engine.abort_after = 2;
	flat_engine.polls = 0;
	assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), -ECANCELED);
	flat_engine.abort_after = 0;
	assert_int_equal(y[0], 0x5a);
	assert_int_equal(y[(4u << 20) - 1], 0x5a);
}

/* ---- RESIZE -------------------------------------------------------------- */

static void resize_base(struct vnpu_cmd_compute *c, uint8_t dt)
{
	cmd_init(c, VNPU_OP_RESIZE);
	c->t[0] = tdesc(dt, 4, (const uint32_t[]){ 1, 4, 5, 3 });
	c->t[3] = tdesc(dt, 4, (const uint32_t[]){ 1, 8, 2, 3 });
	c->t[0].va = FLAT_BASE;
	c->t[3].va = FLAT_BASE + 4096;
}

static void test_resize_validate(void **state)
{
	struct vnpu_cmd_compute c, cc;
	struct vnpu_op_info info;

	(void)state;
	resize_base(&c, VNPU_DT_FP32);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	assert_int_equal(info.macs, 48);
	c.attr.resize.mode = VNPU_RESIZE_CUBIC;
	c.attr.resize.cubic_a = f2u(-0.75f);
	assert_int_equal(vnpu_op_check(&c, sizeof(c), &cc, &info), 0);
	assert_int_equal(info.macs, 48 * 16);

#define RBAD(stmt, off) do {						\
		resize_base(&c, VNPU_DT_FP32);				\
		stmt;							\
		assert_int_equal(check_off(&c), (off));			\
	} while (0)
	RBAD(c.attr.resize.mode = 3, OFF(attr.resize.mode));
	RBAD(c.attr.resize.coord = 6, OFF(attr.resize.coord));
	RBAD(c.attr.resize.nearest = 4, OFF(attr.resize.nearest));
	RBAD((c.attr.resize.mode = VNPU_RESIZE_LINEAR, c.attr.resize.nearest = 1),
	     OFF(attr.resize.nearest));
	RBAD(c.attr.resize.flags = VNPU_RESIZE_EXCLUDE_OUTSIDE, OFF(attr.resize.flags));
	RBAD(c.attr.resize.scale_h = f2u(-2.0f), OFF(attr.resize.scale_h));
	RBAD(c.attr.resize.scale_w = f2u(INFINITY), OFF(attr.resize.scale_w));
	RBAD(c.attr.resize.cubic_a = f2u(-0.5f), OFF(attr.resize.cubic_a));
	RBAD((c.attr.resize.mode = VNPU_RESIZE_CUBIC, c.attr.resize.cubic_a = f2u(NAN)),
	     OFF(attr.resize.cubic_a));
	RBAD(c.attr.resize.extrapolation = f2u(1.0f), OFF(attr.resize.extrapolation));
	RBAD(c.attr.resize.roi[3] = f2u(1.0f), OFF(attr.resize.roi) + 12);
	RBAD((c.attr.resize.coord = VNPU_RESIZE_TF_CROP_AND_RESIZE,
	      c.attr.resize.roi[1] = f2u(NAN)), OFF(attr.resize.roi) + 4);
	RBAD(c.t[3].dims[3] = 4, TOFF(3, dims) + 12);
	RBAD(c.t[3].dims[0] = 2, TOFF(3, dims));
	RBAD((c.t[0].dtype = c.t[3].dtype = VNPU_DT_INT32), TOFF(0, dtype));
	RBAD((c.t[3].rank = 3, c.t[3].dims[3] = 0), TOFF(3, rank));
#undef RBAD
}

/*
 * ONNX's reference algorithm, written the way its Python is: neighbours
 * are the n positions nearest to x in the edge-padded axis, coefficients
 * from the fractional part with 0 taken as 1.  Weights over X's indices
 * (double), or false for the extrapolation value.
 */
static bool model_weights(const struct vnpu_attr_resize *at, int axis,
			  uint32_t o, uint32_t in, uint32_t out, double *w)
{
	float fs = axis ? *(const float *)&at->scale_w : *(const float *)&at->scale_h;
	double s = fs != 0.0f ? fs : (double)out / in, x = o, r, c[4], sum;
	float fa, a0, a1;
	int n, pad, k, pos[4], used[128] = { 0 };

	memcpy(&fa, &at->cubic_a, 4);
	memcpy(&a0, &at->roi[axis], 4);
	memcpy(&a1, &at->roi[2 + axis], 4);
	/* length_resized is length_original * scale, as ONNX's Python has it. */
	switch (at->coord) {
	case VNPU_RESIZE_HALF_PIXEL: x = (x + 0.5) / s - 0.5; break;
	case VNPU_RESIZE_ASYMMETRIC: x = x / s; break;
	case VNPU_RESIZE_ALIGN_CORNERS: x = in * s == 1 ? 0 : x * (in - 1) / (in * s - 1); break;
	case VNPU_RESIZE_PYTORCH_HALF_PIXEL: x = in * s > 1 ? (x + 0.5) / s - 0.5 : 0; break;
	case VNPU_RESIZE_TF_HALF_PIXEL_FOR_NN: x = (x + 0.5) / s; break;
	default:
		x = in * s > 1 ? (double)a0 * (in - 1) + x * ((double)a1 - a0) * (in - 1) / (in * s - 1) :
		    0.5 * ((double)a0 + a1) * (in - 1);
		if (x < 0 || x > in - 1)
			return false;
	}
	r = x - floor(x);
	if (r == 0)
		r = 1;
	if (at->mode == VNPU_RESIZE_NEAREST) {
		n = 2;
		if (x == floor(x)) {
			c[0] = 0; c[1] = 1;
		} else {
			bool hi = at->nearest == VNPU_RESIZE_ROUND_PREFER_FLOOR ? r > 0.5 :
				  at->nearest == VNPU_RESIZE_ROUND_PREFER_CEIL ? r >= 0.5 :
				  at->nearest == VNPU_RESIZE_CEIL;

			c[0] = !hi; c[1] = hi;
		}
	} else if (at->mode == VNPU_RESIZE_LINEAR) {
		n = 2;
		c[0] = 1 - r; c[1] = r;
	} else {
		double A = fa;

		n = 4;
		c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
		c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
		c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
		c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
	}
	/*
	 * The n padded positions nearest x + pad, lower first on ties,
	 * sorted.  ONNX pads by ceil(n / 2), which only matters for sources
	 * further outside than any real Resize reaches; ops.rst defines the
	 * padding as unbounded, so pad far.
	 */
	pad = 32;
	for (k = 0; k < n; k++) {
		int p, best = -1;
		double bd = 0;

		for (p = 0; p < (int)in + 2 * pad; p++) {
			/* Not x + pad - p: x + pad may round onto an integer. */
			double d = fabs(x - (p - pad));

			if (!used[p] && (best < 0 || d < bd)) {
				best = p;
				bd = d;
			}
		}
		used[best] = 1;
		pos[k] = best;
	}
	for (k = 1; k < n; k++) {	/* sort ascending */
		int v = pos[k], j = k;

		for (; j > 0 && pos[j - 1] > v; j--)
			pos[j] = pos[j - 1];
		pos[j] = v;
	}
	if (at->flags & VNPU_RESIZE_EXCLUDE_OUTSIDE) {
		double kept[4];

		for (sum = 0, k = 0; k < n; k++) {
			kept[k] = pos[k] - pad < 0 || pos[k] - pad >= (int)in ? 0 : c[k];
			sum += kept[k];
		}
		/* ops.rst: a window wholly outside keeps its weights. */
		for (k = 0; k < n && sum != 0; k++)
			c[k] = kept[k] / sum;
	}
	memset(w, 0, sizeof(double) * in);
	for (k = 0; k < n; k++) {
		int i = pos[k] - pad;

		w[i < 0 ? 0 : i >= (int)in ? (int)in - 1 : i] += c[k];
	}
	return true;
}

/* Random RESIZE attributes; shapes small enough for the model. */
static void rnd_resize(struct rng *r, struct vnpu_cmd_compute *c, uint32_t *xd,
		       uint32_t *yd)
{
	struct vnpu_attr_resize *at = &c->attr.resize;
	int k;

	at->mode = rnd(r, 3);
	at->coord = rnd(r, 6);
	if (at->mode == VNPU_RESIZE_NEAREST)
		at->nearest = rnd(r, 4);
	if (at->mode == VNPU_RESIZE_CUBIC) {
		at->cubic_a = f2u(rnd(r, 2) ? -0.75f : -0.5f);
		at->flags = rnd(r, 2) ? VNPU_RESIZE_EXCLUDE_OUTSIDE : 0;
	}
	xd[0] = yd[0] = 1 + rnd(r, 2);
	xd[3] = yd[3] = 1 + rnd(r, 5);
	for (k = 1; k <= 2; k++) {
		xd[k] = 1 + rnd(r, 9);
		yd[k] = 1 + rnd(r, 19);
		if (rnd(r, 2))	/* an explicit scale, not always out / in */
			(k == 1 ? &at->scale_h : &at->scale_w)[0] =
				f2u((float)yd[k] / (float)xd[k] * (rnd(r, 2) ? 1.0f : 0.9f));
	}
	if (at->coord == VNPU_RESIZE_TF_CROP_AND_RESIZE) {
		at->extrapolation = f2u(rnd(r, 2) ? 10.0f : 0.0f);
		for (k = 0; k < 2; k++) {
			at->roi[k] = f2u((float)rnd(r, 8) / 10.0f - 0.2f);
			at->roi[2 + k] = f2u((float)rnd(r, 8) / 10.0f + 0.5f);
		}
	}
}

static void test_resize_ref_vs_model(void **state)
{
	struct rng r = { 0xa4093822299f31d0ull };
	unsigned int t;

	(void)state;
	for (t = 0; t < 3000; t++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[4], yd[4], b, oy, ox, ch, i, j;
		double wh[16], ww[16];
		float *x, *y, ext;

		cmd_init(&c, VNPU_OP_RESIZE);
		rnd_resize(&r, &c, xd, yd);
		c.t[0] = tdesc(VNPU_DT_FP32, 4, xd);
		c.t[3] = tdesc(VNPU_DT_FP32, 4, yd);
		flat_reset(&mem);
		c.t[0].va = flat_alloc(&mem, 4ull * xd[0] * xd[1] * xd[2] * xd[3]);
		c.t[3].va = flat_alloc(&mem, 4ull * yd[0] * yd[1] * yd[2] * yd[3]);
		x = flat_host(&mem, c.t[0].va);
		y = flat_host(&mem, c.t[3].va);
		for (i = 0; i < xd[0] * xd[1] * xd[2] * xd[3]; i++)
			x[i] = (float)rnd(&r, 2001) / 100.0f - 10.0f;
		assert_int_equal(flat_ref(&mem, &c), 0);
		memcpy(&ext, &c.attr.resize.extrapolation, 4);
		for (b = 0; b < yd[0]; b++)
		for (oy = 0; oy < yd[1]; oy++)
		for (ox = 0; ox < yd[2]; ox++) {
			bool inh = model_weights(&c.attr.resize, 0, oy, xd[1], yd[1], wh);
			bool inw = model_weights(&c.attr.resize, 1, ox, xd[2], yd[2], ww);

			for (ch = 0; ch < yd[3]; ch++) {
				double want = 0;
				float got = y[((b * yd[1] + oy) * yd[2] + ox) * yd[3] + ch];

				for (i = 0; i < xd[1]; i++)
					for (j = 0; j < xd[2]; j++)
						want += wh[i] * ww[j] *
							x[((b * xd[1] + i) * xd[2] + j) * xd[3] + ch];
				if (!inh || !inw)
					want = ext;
				if (!(fabs(got - want) <= 1e-5 * (1 + fabs(want)))) {
					fprintf(stderr, "case %u mode %u coord %u: y[%u][%u][%u][%u] %g want %g (x %ux%u y %ux%u, scales %#x %#x)\n",
						t, c.attr.resize.mode, c.attr.resize.coord,
						b, oy, ox, ch, got, want, xd[1], xd[2], yd[1], yd[2],
						c.attr.resize.scale_h, c.attr.resize.scale_w);

					fail();
				}
			}
		}
	}
}

/* ONNX's documented examples: nearest 2x3 and linear align_corners 2x. */
static void test_resize_examples(void **state)
{
	static const float lin_want[16] = {
		1.0f, 4.0f / 3, 5.0f / 3, 2.0f,
		5.0f / 3, 2.0f, 7.0f / 3, 8.0f / 3,
		7.0f / 3, 8.0f / 3, 3.0f, 10.0f / 3,
		3.0f, 10.0f / 3, 11.0f / 3, 4.0f,
	};
	struct vnpu_cmd_compute c;
	const float in[4] = { 1, 2, 3, 4 };
	float *y;
	int i;

	(void)state;
	flat_reset(&mem);
	cmd_init(&c, VNPU_OP_RESIZE);
	c.attr.resize.scale_h = f2u(2.0f);
	c.attr.resize.scale_w = f2u(3.0f);
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 2, 2, 1 });
	c.t[3] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 4, 6, 1 });
	c.t[0].va = flat_alloc(&mem, 16);
	c.t[3].va = flat_alloc(&mem, 96);
	memcpy(flat_host(&mem, c.t[0].va), in, 16);
	assert_int_equal(flat_ref(&mem, &c), 0);
	y = flat_host(&mem, c.t[3].va);
	for (i = 0; i < 24; i++)
		assert_true(y[i] == in[(i / 6 / 2) * 2 + (i % 6) / 3]);

	cmd_init(&c, VNPU_OP_RESIZE);
	c.attr.resize.mode = VNPU_RESIZE_LINEAR;
	c.attr.resize.coord = VNPU_RESIZE_ALIGN_CORNERS;
	c.t[0] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 2, 2, 1 });
	c.t[3] = tdesc(VNPU_DT_FP32, 4, (const uint32_t[]){ 1, 4, 4, 1 });
	c.t[0].va = flat_alloc(&mem, 16);
	c.t[3].va = flat_alloc(&mem, 64);
	memcpy(flat_host(&mem, c.t[0].va), in, 16);
	assert_int_equal(flat_ref(&mem, &c), 0);
	y = flat_host(&mem, c.t[3].va);
	for (i = 0; i < 16; i++)
		assert_true(fabsf(y[i] - lin_want[i]) < 1e-6f);
}

static void test_resize_engine_vs_ref(void **state)
{
	struct rng r = { 0x082efa98ec4e6c89ull };
	struct flat ref;
	unsigned int t;

	(void)state;
	flat_init(&ref, MEM_SIZE);
	for (t = 0; t < 3000; t++) {
		struct vnpu_cmd_compute c;
		uint32_t xd[4], yd[4];
		uint8_t xdt = dts[rnd(&r, sizeof(dts) - 1)], ydt;
		uint64_t xs, ys, used, i, cycles;

		ydt = rnd(&r, 2) ? xdt : dts[rnd(&r, sizeof(dts) - 1)];
		cmd_init(&c, VNPU_OP_RESIZE);
		c.round = (uint8_t)rnd(&r, 2);
		rnd_resize(&r, &c, xd, yd);
		c.t[0] = tdesc(xdt, 4, xd);
		c.t[3] = tdesc(ydt, 4, yd);
		rnd_quant(&r, &c.t[0], NULL);
		rnd_quant(&r, &c.t[3], &c.t[0]);
		flat_reset(&mem);
		xs = rnd_layout(&r, &c.t[0], true);
		ys = rnd_layout(&r, &c.t[3], false);
		c.t[0].va = flat_alloc(&mem, xs * vnpu_dtype_size(xdt));
		c.t[3].va = flat_alloc(&mem, ys * vnpu_dtype_size(ydt));
		used = mem.next + 4096;
		for (i = 0; i < used; i++)
			mem.mem[i] = (uint8_t)rnd(&r, 256);
		/* Random float bits: NaNs and infinities meet in the sums too. */
		memcpy(ref.mem, mem.mem, used);
		mem.allow_map = rnd(&r, 2);
		assert_int_equal(flat_exec(&mem, &c, sizeof(c), &cycles), 0);
		assert_true(cycles > 0);
		assert_int_equal(flat_ref(&ref, &c), 0);
		if (memcmp(mem.mem, ref.mem, used)) {
			for (i = 0; i < used && mem.mem[i] == ref.mem[i]; i++)
				;
			fprintf(stderr, "case %u: mode %u coord %u %u->%u: byte %llu\n",
				t, c.attr.resize.mode, c.attr.resize.coord, xdt, ydt,
				(unsigned long long)i);
			fail();
		}
	}
	free(ref.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_ref_vs_model),
		cmocka_unit_test(test_ref_examples),
		cmocka_unit_test(test_engine_vs_ref),
		cmocka_unit_test(test_engine_channel_slices),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_resize_validate),
		cmocka_unit_test(test_resize_ref_vs_model),
		cmocka_unit_test(test_resize_examples),
		cmocka_unit_test(test_resize_engine_vs_ref),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
