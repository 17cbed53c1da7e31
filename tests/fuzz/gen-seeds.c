// SPDX-License-Identifier: MIT
/*
 * Seed corpus of the engine fuzz target: the command shapes the host tests
 * use (tests/host/ops/test-ops-diff.c's random GEMM, CONV2D incl.
 * depthwise and grouped, POOL2D, ELTWISE, ACTIVATION, SOFTMAX, LAYERNORM
 * and the conversions; test-ops-validate.c's hand-written commands and a
 * few of its malformed ones) plus the crash of the "Hostile command
 * streams" issue, in fuzz-engine.h's input format.  Deterministic: the
 * same files every run.
 *
 * usage: gen-seeds DIR [REGRESS_DIR]
 * With REGRESS_DIR, also writes there the hand-made reproducers of engine
 * bugs (the fuzzer's own finds are committed there as they come).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_ref.h"
#include "fuzz-engine.h"

static const char *dir, *regress_dir;
static unsigned int n_files, n_valid;

#define VALID	1	/* must pass vnpu_op_check() */
#define REGRESS	2	/* a reproducer: to REGRESS_DIR */

static void emit(const char *name, const struct fz_hdr *h,
		 const struct vnpu_cmd_compute *c, int flags)
{
	struct vnpu_cmd_compute cc;
	struct vnpu_op_info info;
	char path[4096];
	bool ok = vnpu_op_check(c, sizeof(*c), &cc, &info) == 0;
	FILE *f;

	if ((flags & VALID) && !ok) {
		fprintf(stderr, "gen-seeds: %s: rejected at offset %u\n", name,
			info.err_off);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", flags & REGRESS ? regress_dir : dir,
		 name);
	f = fopen(path, "wb");
	if (!f || fwrite(h, FZ_HDR, 1, f) != 1 || fwrite(c, FZ_CMD, 1, f) != 1 ||
	    fclose(f)) {
		perror(path);
		exit(1);
	}
	if (!(flags & REGRESS)) {
		n_files++;
		n_valid += ok;
	}
}

static void hdr_init(struct fz_hdr *h, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	h->seed = seed;
}

static void cmd_init(struct vnpu_cmd_compute *c, uint16_t op)
{
	memset(c, 0, sizeof(*c));
	c->hdr.opcode = op;
	c->hdr.size = FZ_CMD;
}

static void tq(struct vnpu_tensor_desc *d, float s, int32_t zp)
{
	d->quant = VNPU_QUANT_TENSOR;
	d->scale = fz_f2u(s);
	d->zero_point = zp;
}

/* test-ops-validate.c's good_gemm: int8 [2,3] x [3,4], per-channel B. */
static void good_gemm(struct vnpu_cmd_compute *c)
{
	static const uint32_t da[2] = { 2, 3 }, db[2] = { 3, 4 }, dy[2] = { 2, 4 };
	static const uint32_t dbias = 4;
	int i;

	cmd_init(c, VNPU_OP_GEMM);
	fz_desc(&c->t[0], VNPU_DT_INT8, 2, da);
	tq(&c->t[0], 0.02f, -3);
	fz_desc(&c->t[1], VNPU_DT_INT8, 2, db);
	c->t[1].quant = VNPU_QUANT_CHANNEL;
	c->t[1].quant_axis = 1;
	fz_desc(&c->t[2], VNPU_DT_INT32, 1, &dbias);
	fz_desc(&c->t[3], VNPU_DT_UINT8, 2, dy);
	tq(&c->t[3], 0.05f, 128);
	c->act = VNPU_ACT_RELU;
	for (i = 0; i < 4; i++)
		c->t[i].va = FZ_BASE + 64 * (uint64_t)i;
	c->t[1].quant_va = FZ_BASE + 256;
}

/* test-ops-validate.c's CONV(): fp32 [1,5,5,3] * [4,3,3,3] -> [1,3,3,4]. */
static void good_conv(struct vnpu_cmd_compute *c)
{
	static const uint32_t dx[4] = { 1, 5, 5, 3 }, dw[4] = { 4, 3, 3, 3 };
	static const uint32_t dy[4] = { 1, 3, 3, 4 };

	cmd_init(c, VNPU_OP_CONV2D);
	fz_desc(&c->t[0], VNPU_DT_FP32, 4, dx);
	fz_desc(&c->t[1], VNPU_DT_FP32, 4, dw);
	fz_desc(&c->t[3], VNPU_DT_FP32, 4, dy);
	c->t[0].va = FZ_BASE;
	c->t[1].va = FZ_BASE + 512;
	c->t[3].va = FZ_BASE + 1024;
	c->attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1, .stride_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = 1 };
}

static void hand_written(void)
{
	struct vnpu_cmd_compute c;
	struct fz_hdr h;

	hdr_init(&h, 1);
	good_gemm(&c);
	emit("valid-gemm-i8-perchannel", &h, &c, VALID);
	h.mode = FZ_M_BOUNCE;
	emit("valid-gemm-i8-bounce", &h, &c, VALID);
	h.mode = 0;

	good_conv(&c);
	emit("valid-conv-f32", &h, &c, VALID);

	/*
	 * CONV_TRANSPOSE's phase path (vnpu_engine_convt.c): a detection
	 * head's 2x2 stride-2 upsampling to one sigmoid map (all four phases
	 * one conv), and an int8 4x4 stride-2 pad-1 GAN-style upsampling
	 * (each phase its own window, so its own conv).
	 */
	cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
	{
		static const uint32_t dx[4] = { 1, 6, 8, 8 }, dw[4] = { 8, 2, 2, 1 };
		static const uint32_t dy[4] = { 1, 12, 16, 1 };

		fz_desc(&c.t[0], VNPU_DT_FP32, 4, dx);
		fz_desc(&c.t[1], VNPU_DT_FP32, 4, dw);
		fz_desc(&c.t[3], VNPU_DT_FP32, 4, dy);
		c.t[0].va = FZ_BASE;
		c.t[1].va = FZ_BASE + 1536;
		c.t[3].va = FZ_BASE + 2048;
		c.act = VNPU_ACT_SIGMOID;
		c.attr.convt = (struct vnpu_attr_conv_transpose){ .stride_h = 2,
			.stride_w = 2, .dilation_h = 1, .dilation_w = 1, .groups = 1 };
	}
	emit("valid-convt-f32-merged-phases", &h, &c, VALID);
	cmd_init(&c, VNPU_OP_CONV_TRANSPOSE);
	{
		static const uint32_t dx[4] = { 1, 4, 5, 6 }, dw[4] = { 6, 4, 4, 8 };
		static const uint32_t dy[4] = { 1, 8, 10, 8 };

		fz_desc(&c.t[0], VNPU_DT_INT8, 4, dx);
		fz_desc(&c.t[1], VNPU_DT_INT8, 4, dw);
		fz_desc(&c.t[3], VNPU_DT_UINT8, 4, dy);
		tq(&c.t[0], 0.02f, 3);
		tq(&c.t[1], 0.01f, -2);
		tq(&c.t[3], 0.1f, 128);
		c.t[0].va = FZ_BASE;
		c.t[1].va = FZ_BASE + 256;
		c.t[3].va = FZ_BASE + 1280;
		c.act = VNPU_ACT_RELU;
		c.attr.convt = (struct vnpu_attr_conv_transpose){ .stride_h = 2,
			.stride_w = 2, .dilation_h = 1, .dilation_w = 1, .pad_top = 1,
			.pad_left = 1, .pad_bottom = 1, .pad_right = 1, .groups = 1 };
	}
	emit("valid-convt-i8-phases", &h, &c, VALID);

	good_conv(&c);
	c.hdr.opcode = VNPU_OP_POOL2D;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	c.t[3].dims[3] = 3;
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_MAX,
		.kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1 };
	emit("valid-pool-max", &h, &c, VALID);

	good_conv(&c);
	c.hdr.opcode = VNPU_OP_SOFTMAX;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	memcpy(c.t[3].dims, c.t[0].dims, sizeof(c.t[0].dims));
	memset(&c.attr, 0, sizeof(c.attr));
	emit("valid-softmax", &h, &c, VALID);
	c.hdr.opcode = VNPU_OP_LAYERNORM;
	c.attr.layernorm.axis = 3;
	c.attr.layernorm.epsilon = fz_f2u(1e-5f);
	emit("valid-layernorm", &h, &c, VALID);
	c.hdr.opcode = VNPU_OP_QUANTIZE;
	memset(&c.attr, 0, sizeof(c.attr));
	c.t[3].dtype = VNPU_DT_INT8;
	tq(&c.t[3], 0.1f, 0);
	emit("valid-quantize", &h, &c, VALID);

	/*
	 * onnxruntime's QLinearAdd (the broadcast operand second) and
	 * QLinearMul, whose mutations reach the VNPU_ROUND_ORT_QLINEAR checks.
	 */
	cmd_init(&c, VNPU_OP_ELTWISE);
	{
		static const uint32_t da[3] = { 2, 3, 4 }, db[1] = { 4 };

		c.round = VNPU_ROUND_ORT_QLINEAR;
		c.attr.eltwise.kind = VNPU_ELTWISE_ADD;
		fz_desc(&c.t[0], VNPU_DT_INT8, 3, da);
		fz_desc(&c.t[1], VNPU_DT_INT8, 1, db);
		fz_desc(&c.t[3], VNPU_DT_INT8, 3, da);
		tq(&c.t[0], 0.324f, -46);
		tq(&c.t[1], 0.462f, 76);
		tq(&c.t[3], 0.516f, -84);
		c.t[0].va = FZ_BASE;
		c.t[1].va = FZ_BASE + 64;
		c.t[3].va = FZ_BASE + 128;
	}
	emit("valid-eltwise-qlinear-add", &h, &c, VALID);
	c.attr.eltwise.kind = VNPU_ELTWISE_MUL;
	c.t[0].dtype = c.t[1].dtype = c.t[3].dtype = VNPU_DT_UINT8;
	c.t[0].zero_point = 82;
	c.t[1].zero_point = 204;
	c.t[3].zero_point = 44;
	emit("valid-eltwise-qlinear-mul-u8", &h, &c, VALID);
	c.attr.eltwise.kind = VNPU_ELTWISE_SUB;
	emit("bad-eltwise-qlinear-sub", &h, &c, 0);

	/*
	 * onnxruntime's QLinearAveragePool, QLinearGlobalAveragePool and
	 * QLinearSoftmax arithmetic, and a MAX pool the mode is refused for.
	 */
	good_conv(&c);
	c.hdr.opcode = VNPU_OP_POOL2D;
	c.round = VNPU_ROUND_ORT_QLINEAR;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	c.t[3].dims[3] = 3;
	c.t[0].dtype = c.t[3].dtype = VNPU_DT_UINT8;
	tq(&c.t[0], 0.4f, 3);
	tq(&c.t[3], 0.4f, 3);
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_AVG,
		.kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1 };
	emit("valid-pool-qlinear-avg-u8", &h, &c, VALID);
	c.attr.pool.kind = VNPU_POOL_MAX;
	emit("bad-pool-qlinear-max", &h, &c, 0);
	c.t[0].dtype = c.t[3].dtype = VNPU_DT_INT8;
	tq(&c.t[0], 0.25f, -7);
	tq(&c.t[3], 0.1f, 5);
	c.t[3].dims[1] = c.t[3].dims[2] = 1;
	c.attr.pool = (struct vnpu_attr_pool2d){ .kind = VNPU_POOL_GLOBAL_AVG };
	emit("valid-pool-qlinear-global-avg-i8", &h, &c, VALID);

	good_conv(&c);
	c.hdr.opcode = VNPU_OP_SOFTMAX;
	c.round = VNPU_ROUND_ORT_QLINEAR;
	memset(&c.t[1], 0, sizeof(c.t[1]));
	memcpy(c.t[3].dims, c.t[0].dims, sizeof(c.t[0].dims));
	memset(&c.attr, 0, sizeof(c.attr));
	c.t[0].dtype = c.t[3].dtype = VNPU_DT_UINT8;
	tq(&c.t[0], 0.05f, 128);
	tq(&c.t[3], 1.0f / 256, 0);
	emit("valid-softmax-qlinear-u8", &h, &c, VALID);

	/* A few of test-ops-validate.c's malformed commands. */
	good_gemm(&c);
	c.t[0].flags = VNPU_TENSOR_STRIDED;
	c.t[0].strides[0] = ~0ull;
	c.t[0].strides[1] = 1;
	emit("bad-stride-overflow", &h, &c, 0);
	good_gemm(&c);
	c.t[0].rank = 6;
	c.t[0].dims[2] = c.t[0].dims[3] = c.t[0].dims[4] = 0xffffffff;
	c.t[0].dims[5] = 3;
	emit("bad-dims-overflow", &h, &c, 0);
	good_gemm(&c);
	c.t[3].va = ~0ull - 3;
	emit("bad-va", &h, &c, 0);
	good_conv(&c);
	c.attr.conv.pad_top = 0xffffffff;
	emit("bad-conv-pad", &h, &c, 0);

	/*
	 * The crash: int8 GEMM, A [1, 0xffffffff] and B [0xffffffff, 1]
	 * both STRIDED with all-zero strides (tiny spans, 2^32 - 1 MACs).
	 */
	cmd_init(&c, VNPU_OP_GEMM);
	{
		static const uint32_t da[2] = { 1, 0xffffffff }, db[2] = { 0xffffffff, 1 };
		static const uint32_t dy[2] = { 1, 1 };

		fz_desc(&c.t[0], VNPU_DT_INT8, 2, da);
		fz_desc(&c.t[1], VNPU_DT_INT8, 2, db);
		fz_desc(&c.t[3], VNPU_DT_INT32, 2, dy);
		c.t[0].flags = c.t[1].flags = VNPU_TENSOR_STRIDED;
		tq(&c.t[0], 0.02f, 0);
		tq(&c.t[1], 0.02f, 0);
		c.t[0].va = FZ_BASE;
		c.t[1].va = FZ_BASE + 64;
		c.t[3].va = FZ_BASE + 128;
	}
	emit("issue-gemm-i8-zero-strides", &h, &c, 0);
	if (regress_dir)
		emit("issue-gemm-i8-zero-strides", &h, &c, REGRESS);
}

/*
 * Reproducers of engine bugs found by fuzzing, made by hand so they stay
 * readable.  Each must pass once the bug is fixed.
 */
static void regressions(void)
{
	struct vnpu_cmd_compute c;
	struct fz_hdr h;

	/*
	 * Depthwise CONV2D whose every window tap lies in the padding
	 * (ix = 3 * ox - 65536 + 3 * kx is never 0 for W = 1): eng_dwconv
	 * walks all 32 x 1024 taps of each of 42668 output pixels but
	 * accounts only 2 work units per pixel, so its 2.8e9 units get two
	 * polls of the abort callback, seconds apart.  Stopped at the second.
	 */
	{
		static const uint32_t dx[4] = { 1, 32, 1, 2 }, dw[4] = { 2, 32, 1024, 1 };
		static const uint32_t dy[4] = { 1, 1, 42668, 2 };

		hdr_init(&h, 3);
		h.abort_after = 2;
		cmd_init(&c, VNPU_OP_CONV2D);
		fz_desc(&c.t[0], VNPU_DT_INT8, 4, dx);
		fz_desc(&c.t[1], VNPU_DT_INT8, 4, dw);
		fz_desc(&c.t[3], VNPU_DT_INT8, 4, dy);
		tq(&c.t[0], 0.02f, 0);
		tq(&c.t[1], 0.02f, 0);
		tq(&c.t[3], 0.05f, 0);
		c.attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1,
			.stride_w = 3, .dilation_h = 1, .dilation_w = 3,
			.pad_left = 65536, .pad_right = 65536, .groups = 2 };
		c.t[0].va = FZ_BASE;
		c.t[1].va = FZ_BASE + 4096;
		c.t[3].va = FZ_BASE + 65536;
		emit("dwconv-padding-taps-unpolled", &h, &c, VALID | REGRESS);
	}
}

/*
 * Commands long enough to poll the abort callback, stopped at poll
 * @abort_after: every engine path's cancellation (beyond the fuzz target's
 * work budget, it stops every command at the first poll anyway).
 */
static void cancel_seeds(void)
{
	static const struct {
		const char *name;
		uint8_t dt, out, abort_after;
		uint32_t m, k, n;	/* GEMM; for CONV2D: H = W = m, C = k, CO = n */
		uint32_t groups;	/* CONV2D when non-zero */
	} s[] = {
		{ "cancel-gemm-f32", VNPU_DT_FP32, VNPU_DT_FP32, 1, 256, 256, 256, 0 },
		{ "cancel-gemm-f32-mid", VNPU_DT_FP32, VNPU_DT_FP32, 3, 128, 256, 128, 0 },
		{ "cancel-gemm-i8", VNPU_DT_INT8, VNPU_DT_INT8, 1, 512, 512, 512, 0 },
		{ "cancel-gemm-u8-mid", VNPU_DT_UINT8, VNPU_DT_INT32, 4, 128, 256, 128, 0 },
		{ "cancel-conv-f32", VNPU_DT_FP32, VNPU_DT_FP32, 1, 32, 64, 64, 1 },
		{ "cancel-conv-i8", VNPU_DT_INT8, VNPU_DT_UINT8, 2, 32, 64, 64, 1 },
		{ "cancel-dwconv-i8", VNPU_DT_INT8, VNPU_DT_INT8, 2, 64, 64, 64, 64 },
		{ "cancel-dwconv-f32", VNPU_DT_FP32, VNPU_DT_FP32, 2, 48, 64, 64, 64 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct vnpu_cmd_compute c;
		struct fz_hdr h;
		uint64_t r = 0xca9ce1 + i;
		uint32_t a[4], b[4], y[4];
		int rank = s[i].groups ? 4 : 2;

		hdr_init(&h, 100 + i);
		h.abort_after = s[i].abort_after;
		cmd_init(&c, s[i].groups ? VNPU_OP_CONV2D : VNPU_OP_GEMM);
		if (s[i].groups) {
			uint32_t hw = s[i].m, ci = s[i].k, co = s[i].n;

			a[0] = 1, a[1] = hw, a[2] = hw, a[3] = ci;
			b[0] = co, b[1] = 3, b[2] = 3, b[3] = ci / s[i].groups;
			y[0] = 1, y[1] = hw, y[2] = hw, y[3] = co;
			c.attr.conv = (struct vnpu_attr_conv2d){ .stride_h = 1,
				.stride_w = 1, .dilation_h = 1, .dilation_w = 1,
				.pad_top = 1, .pad_left = 1, .pad_bottom = 1,
				.pad_right = 1, .groups = s[i].groups };
		} else {
			a[0] = s[i].m, a[1] = s[i].k;
			b[0] = s[i].k, b[1] = s[i].n;
			y[0] = s[i].m, y[1] = s[i].n;
		}
		fz_desc(&c.t[0], s[i].dt, rank, a);
		fz_desc(&c.t[1], s[i].dt, rank, b);
		fz_desc(&c.t[3], s[i].out, rank, y);
		if (fz_is_q8(s[i].dt)) {
			tq(&c.t[0], 0.02f, 1);
			tq(&c.t[1], 0.01f, 2);
		}
		if (fz_is_q8(s[i].out))
			tq(&c.t[3], 0.5f, 3);
		h.mode = i % 2 ? FZ_M_BOUNCE : 0;
		fz_layout(&c, &r);
		emit(s[i].name, &h, &c, VALID);
	}
}

static const char *const op_names[VNPU_OP_LAST - VNPU_OP_GEMM + 1] = {
	"gemm", "conv", "pool", "eltwise", "activation", "softmax", "layernorm",
	"quantize", "dequantize", "requantize", "copy", "resize",
	[VNPU_OP_CONV_TRANSPOSE - VNPU_OP_GEMM] = "convt",
	[VNPU_OP_REDUCE - VNPU_OP_GEMM] = "reduce",
	[VNPU_OP_LUT - VNPU_OP_GEMM] = "lut",
};
_Static_assert(sizeof(op_names) / sizeof(op_names[0]) ==
	       VNPU_OP_LAST - VNPU_OP_GEMM + 1, "a seed name per opcode");

int main(int argc, char **argv)
{
	unsigned int op, i;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s DIR [REGRESS_DIR]\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	regress_dir = argc == 3 ? argv[2] : NULL;
	if (regress_dir)
		regressions();
	hand_written();
	cancel_seeds();
	for (op = VNPU_OP_GEMM; op <= VNPU_OP_LAST; op++) {
		bool mm = op == VNPU_OP_GEMM || op == VNPU_OP_CONV2D;
		unsigned int n = mm ? 16 : 6;

		if (!op_names[op - VNPU_OP_GEMM])
			continue;	/* an opcode this tree does not define */
		for (i = 0; i < n; i++) {
			uint64_t r = 0x5eed0000ull + op * 1000 + i;
			struct vnpu_cmd_compute c;
			struct fz_hdr h;
			char name[64];
			bool big = mm && i >= 12;

			hdr_init(&h, fz_next(&r));
			/* Every way to run: bounce, raw data, each int8 kernel, aborts. */
			h.mode = (uint8_t)((i % 3 == 1 ? FZ_M_BOUNCE : 0) |
					   (i % 5 == 4 ? FZ_M_RAW : 0));
			h.kernel = (uint8_t)(i % 4);
			h.misalign = (uint8_t)(i % 2 ? i : 0);
			if (i % 7 == 6)		/* a small scratch arena */
				h.arena = (uint8_t)(FZ_ARENA_SMALL | (i * 37 % 128));
			else if (i % 4 == 3)	/* the device's, else malloc */
				h.arena = FZ_ARENA_DEVICE;
			if (big && i % 2)
				h.abort_after = (uint8_t)(1 + i % 3);
			fz_gen(&c, &r, op, big);
			snprintf(name, sizeof(name), "%s-%02u", op_names[op - VNPU_OP_GEMM], i);
			emit(name, &h, &c, 0);
		}
	}
	printf("gen-seeds: %u inputs (%u valid commands) in %s\n", n_files,
	       n_valid, dir);
	return 0;
}
