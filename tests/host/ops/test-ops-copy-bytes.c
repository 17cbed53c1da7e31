// SPDX-License-Identifier: MIT
/*
 * COPY of an 8-bit X that converts (another scale or zero point, another
 * dtype): the engine reads a table of the reference's result for each
 * byte once the copy is long enough.  Held against the reference byte for
 * byte: every byte value into every dtype, both roundings, copies just
 * below and above the table's length, every border, reversed and
 * transposed reads, and Concat's parts; every command on the engine's own
 * copy path.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops-test-util.h"

struct env {
	struct flat f;
	uint64_t r;
};

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)((*s >> 11) % n);
}

static int setup(void **state)
{
	static struct env e;

	flat_init(&e.f, 16ull << 20);
	e.r = 0x2545f4914f6cdd1dull;
	*state = &e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	free(e->f.mem);
	return 0;
}

static uint64_t elems(const struct vnpu_tensor_desc *d)
{
	uint64_t n = 1;
	int k;

	for (k = 0; k < d->rank; k++)
		n *= d->dims[k];
	return n;
}

/* The command's X (placed) and Y (not yet); X's bytes from @codes or random. */
static void put_x(struct env *e, struct vnpu_tensor_desc *d, const uint8_t *codes)
{
	uint64_t n = elems(d), i;
	uint8_t *p;

	d->va = flat_alloc(&e->f, n);
	assert_true(d->va != 0);
	p = flat_host(&e->f, d->va);
	for (i = 0; i < n; i++)
		p[i] = codes ? codes[i] : (uint8_t)rnd(&e->r, 256);
}

/*
 * Run @c on the engine and on the reference, each into its own Y, both
 * first filled with the same bytes (BORDER_KEEP leaves them), and compare.
 */
static void same_as_ref(struct env *e, struct vnpu_cmd_compute *c, const char *what)
{
	struct vnpu_cmd_compute r = *c;
	uint64_t n = elems(&c->t[3]) * vnpu_dtype_size(c->t[3].dtype), i;
	uint8_t *pe, *pr;

	c->t[3].va = flat_alloc(&e->f, n);
	r.t[3].va = flat_alloc(&e->f, n);
	assert_true(c->t[3].va && r.t[3].va);
	pe = flat_host(&e->f, c->t[3].va);
	pr = flat_host(&e->f, r.t[3].va);
	for (i = 0; i < n; i++)
		pe[i] = pr[i] = (uint8_t)rnd(&e->r, 256);
	if (flat_exec(&e->f, c, sizeof(*c), NULL)) {
		fprintf(stderr, "# %s: the engine refused it\n", what);
		fail();
	}
	assert_int_equal(flat_engine.res.path, VNPU_ENG_COPY);
	assert_int_equal(flat_ref(&e->f, &r), 0);
	for (i = 0; i < n; i++)
		if (pe[i] != pr[i]) {
			fprintf(stderr, "# %s: byte %llu of Y is 0x%02x, the reference's 0x%02x\n",
				what, (unsigned long long)i, pe[i], pr[i]);
			fail();
		}
}

static const uint8_t x_dts[2] = { VNPU_DT_UINT8, VNPU_DT_INT8 };
static const uint8_t y_dts[5] = { VNPU_DT_UINT8, VNPU_DT_INT8, VNPU_DT_FP32, VNPU_DT_FP16,
				  VNPU_DT_BF16 };

static const char *dt_name(uint8_t dt)
{
	switch (dt) {
	case VNPU_DT_UINT8: return "uint8";
	case VNPU_DT_INT8: return "int8";
	case VNPU_DT_FP32: return "fp32";
	case VNPU_DT_FP16: return "fp16";
	default: return "bf16";
	}
}

/*
 * Quantization of an 8-bit Y: scales that round many bytes to ties and
 * that saturate at both ends, zero points at the dtype's ends.
 */
static void y_quant(struct env *e, struct vnpu_tensor_desc *d)
{
	static const float scales[] = { 0.01f, 0.02f, 0.5f, 1.0f, 2.0f, 1e-6f, 300.0f };
	int32_t lo = d->dtype == VNPU_DT_INT8 ? -128 : 0;

	if (d->dtype != VNPU_DT_INT8 && d->dtype != VNPU_DT_UINT8)
		return;
	tquant(d, scales[rnd(&e->r, sizeof(scales) / sizeof(scales[0]))],
	       rnd(&e->r, 3) ? lo + (int32_t)rnd(&e->r, 256) : lo + 255 * (int32_t)rnd(&e->r, 2));
}

/* Every byte, 256 times over, into every dtype with both roundings. */
static void test_copy_every_byte(void **state)
{
	static const uint32_t d[2] = { 256, 256 };
	static uint8_t codes[65536];
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	int xd, yd, round, i;
	char what[128];

	for (i = 0; i < 65536; i++)
		codes[i] = (uint8_t)i;
	for (xd = 0; xd < 2; xd++)
		for (yd = 0; yd < 5; yd++)
			for (round = 0; round < 2; round++)
				for (i = 0; i < 6; i++) {
					flat_reset(&e->f);
					cmd_init(&c, VNPU_OP_COPY);
					c.round = (uint8_t)round;
					c.t[0] = tdesc(x_dts[xd], 2, d);
					tquant(&c.t[0], i & 1 ? 0.5f : 0.0173f,
					       xd ? -128 + (int32_t)rnd(&e->r, 256) :
					       (int32_t)rnd(&e->r, 256));
					c.t[3] = tdesc(y_dts[yd], 2, d);
					y_quant(e, &c.t[3]);
					put_x(e, &c.t[0], codes);
					snprintf(what, sizeof(what), "%s to %s, rounding %d",
						 dt_name(x_dts[xd]), dt_name(y_dts[yd]), round);
					same_as_ref(e, &c, what);
				}
}

/*
 * Slices, pads with every border (a pad's fill converted as Y's), reads
 * reversed, transposed through X's strides, and Concat's parts (a slice
 * of Y at an offset, the rest kept), of 1 to a few thousand elements.
 */
static void test_copy_shapes(void **state)
{
	struct env *e = *state;
	struct vnpu_cmd_compute c;
	int i, k;
	char what[160];

	for (i = 0; i < 600; i++) {
		uint32_t dx[3], dy[3];
		uint8_t xdt = x_dts[rnd(&e->r, 2)], ydt = y_dts[rnd(&e->r, 5)];
		bool big = rnd(&e->r, 2);

		for (k = 0; k < 3; k++) {
			dx[k] = 1 + rnd(&e->r, big ? 20 : 6);
			dy[k] = dx[k];
		}
		flat_reset(&e->f);
		cmd_init(&c, VNPU_OP_COPY);
		c.round = (uint8_t)rnd(&e->r, 2);
		c.attr.copy.border = rnd(&e->r, 5);
		if (c.attr.copy.border == VNPU_COPY_BORDER_CONSTANT)
			c.attr.copy.fill = f2u(rnd(&e->r, 2) ? 1.5f : -1e6f);
		for (k = 0; k < 3; k++) {
			switch (rnd(&e->r, 3)) {
			case 0:		/* pad or Concat's part */
				dy[k] = dx[k] + rnd(&e->r, 5);
				c.attr.copy.offset[k] = (int32_t)rnd(&e->r, dy[k] - dx[k] + 1);
				break;
			case 1:		/* slice */
				dy[k] = 1 + rnd(&e->r, dx[k]);
				c.attr.copy.offset[k] = -(int32_t)rnd(&e->r, dx[k] - dy[k] + 1);
				break;
			default:
				break;
			}
			if (rnd(&e->r, 4) == 0)
				c.attr.copy.reverse |= 1u << k;
		}
		c.t[0] = tdesc(xdt, 3, dx);
		tquant(&c.t[0], 0.001f + (float)rnd(&e->r, 100) * 0.01f,
		       (xdt == VNPU_DT_INT8 ? -128 : 0) + (int32_t)rnd(&e->r, 256));
		if (rnd(&e->r, 3) == 0) {
			/* X read transposed: its first two dims swapped in memory */
			c.t[0].flags = VNPU_TENSOR_STRIDED;
			c.t[0].strides[2] = 1;
			c.t[0].strides[0] = dx[2];
			c.t[0].strides[1] = (uint64_t)dx[2] * dx[0];
		}
		c.t[3] = tdesc(ydt, 3, dy);
		y_quant(e, &c.t[3]);
		put_x(e, &c.t[0], NULL);
		snprintf(what, sizeof(what),
			 "%s %ux%ux%u to %s %ux%ux%u, border %u, reverse %u, rounding %u",
			 dt_name(xdt), dx[0], dx[1], dx[2], dt_name(ydt), dy[0], dy[1], dy[2],
			 c.attr.copy.border, c.attr.copy.reverse, c.round);
		same_as_ref(e, &c, what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_every_byte),
		cmocka_unit_test(test_copy_shapes),
	};

	return cmocka_run_group_tests_name("ops-copy-bytes", tests, setup, teardown);
}
