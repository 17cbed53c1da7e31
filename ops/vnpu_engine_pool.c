// SPDX-License-Identifier: MIT
/*
 * POOL2D on NHWC with unit channel stride, fp32 or per-tensor 8-bit
 * (taps read as vnpu_ld() reads them, the result stored as vnpu_st()
 * stores it, a row of channels at a time): for each output position,
 * the window's taps are visited in the reference's order (rows, then
 * columns) but a whole row of channels at a time, so the compiler
 * vectorizes over channels and the result is the reference's, bit for
 * bit: the same comparisons (NaN wins) for MAX, the same sums in the same
 * order and the same division for AVG.  The reference pays a generic
 * element load per tap; this is the difference between about 1 ms and a
 * few tens of microseconds for a BlazeFace pooling layer.
 *
 * With VNPU_ROUND_ORT_QLINEAR (vnpu_ref_qlinear.h) AVG stores each mean
 * as QLinearAveragePool rounds it, and GLOBAL_AVG sums the codes of a
 * row of channels in integers, as the reference does one at a time.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_ref_qlinear.h"

/* Channels accumulated per pass: the accumulators stay in L1. */
#define POOL_CHUNK	1024

static bool pool_dtype_ok(const struct vnpu_tv *tv)
{
	return (tv->dtype == VNPU_DT_FP32 && tv->quant == VNPU_QUANT_NONE) ||
	       vnpu_eng_q8_ok(tv);
}

bool vnpu_eng_pool_ok(const struct vnpu_cmd_compute *c,
		      const struct vnpu_tv *t)
{
	const struct vnpu_tv *x = &t[0], *y = &t[VNPU_OP_SLOT_OUT];

	return c->hdr.opcode == VNPU_OP_POOL2D &&
	       pool_dtype_ok(x) && pool_dtype_ok(y) &&
	       x->st[3] == 1 && y->st[3] == 1;
}

static uint32_t dil(uint32_t d)
{
	return d ? d : 1;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void max_taps(float *acc, const float *x, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		acc[i] = x[i] > acc[i] || x[i] != x[i] ? x[i] : acc[i];
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void sum_taps(float *acc, const float *x, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		acc[i] += x[i];
}

/*
 * MAX over 8-bit codes: dequantizing is increasing in the code (the scale
 * is positive), so the largest code of a window dequantizes to the
 * largest value, and one dequantization per output replaces one per tap.
 */
__attribute__((target_clones("avx2", "default")))
static void max_codes_u8(uint8_t *acc, const uint8_t *x, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		acc[i] = x[i] > acc[i] ? x[i] : acc[i];
}

__attribute__((target_clones("avx2", "default")))
static void max_codes_s8(int8_t *acc, const int8_t *x, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		acc[i] = x[i] > acc[i] ? x[i] : acc[i];
}

__attribute__((target_clones("avx2", "default")))
static void sum_codes(uint32_t *acc, const uint8_t *x, bool is_signed, uint32_t n)
{
	uint32_t i;

	if (is_signed)
		for (i = 0; i < n; i++)
			acc[i] += (uint32_t)(int32_t)(int8_t)x[i];
	else
		for (i = 0; i < n; i++)
			acc[i] += x[i];
}

/* GLOBAL_AVG with VNPU_ROUND_ORT_QLINEAR: 8-bit X and Y (check_pool_qlinear()). */
static int gap_qlinear(const struct vnpu_tv *x, const struct vnpu_tv *y,
		       struct vnpu_run_ctx *rc)
{
	bool is_signed = x->dtype == VNPU_DT_INT8;
	uint32_t ch = y->dims[3], n, iy, ix, c0, i;
	uint32_t acc[POOL_CHUNK];
	struct vnpu_qlinear_gap f;

	vnpu_qlinear_gap_init(&f, x->scale, x->zp, y->scale, y->zp, x->dims[1] * x->dims[2],
			      is_signed ? -128 : 0, is_signed ? 127 : 255);
	for (n = 0; n < y->dims[0]; n++) {
		for (c0 = 0; c0 < ch; c0 += POOL_CHUNK) {
			uint32_t w = ch - c0 < POOL_CHUNK ? ch - c0 : POOL_CHUNK;
			uint8_t *yp = y->p + n * y->st[0] + c0;

			if (vnpu_run_tick(rc, w))
				return -ECANCELED;
			memset(acc, 0, (size_t)w * sizeof(acc[0]));
			for (iy = 0; iy < x->dims[1]; iy++) {
				if (vnpu_run_tick(rc, (uint64_t)x->dims[2] * w))
					return -ECANCELED;
				for (ix = 0; ix < x->dims[2]; ix++)
					sum_codes(acc, x->p + n * x->st[0] + iy * x->st[1] +
						  ix * x->st[2] + c0, is_signed, w);
			}
			for (i = 0; i < w; i++)
				yp[i] = (uint8_t)vnpu_qlinear_gap_q(&f, acc[i]);
		}
	}
	return 0;
}

int vnpu_eng_pool(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		  struct vnpu_run_ctx *rc)
{
	const struct vnpu_attr_pool2d *at = &c->attr.pool;
	const struct vnpu_tv *x = &t[0], *y = &t[VNPU_OP_SLOT_OUT];
	bool global = at->kind == VNPU_POOL_GLOBAL_AVG;
	bool is_max = at->kind == VNPU_POOL_MAX;
	uint32_t kh = global ? x->dims[1] : at->kernel_h;
	uint32_t kw = global ? x->dims[2] : at->kernel_w;
	uint32_t sh = global ? 1 : at->stride_h, sw = global ? 1 : at->stride_w;
	uint32_t dh = dil(at->dilation_h), dw = dil(at->dilation_w);
	uint32_t ch = y->dims[3], n, oy, ox, c0, ky, kx, i;
	bool xq = x->dtype != VNPU_DT_FP32, yq = y->dtype != VNPU_DT_FP32;
	size_t xes = xq ? 1 : 4, yes = yq ? 1 : 4;
	float acc[POOL_CHUNK], taps[POOL_CHUNK];
	uint8_t codes[POOL_CHUNK];
	bool max_q8 = is_max && xq, x_signed = x->dtype == VNPU_DT_INT8;
	bool qlinear = c->round == VNPU_ROUND_ORT_QLINEAR;
	int32_t lo = y->dtype == VNPU_DT_INT8 ? -128 : 0, hi = lo + 255;
	/*
	 * MAX between one quantization on both sides (quantizers give a
	 * MaxPool's output its input's): the largest code is the output's
	 * own, (q - zp) * s / s rounding back to q - zp for any rounding
	 * mode, unless (q - zp) * s could overflow or lose bits.
	 */
	bool same_codes = max_q8 && y->dtype == x->dtype && y->scale == x->scale &&
			  y->zp == x->zp && isnormal(x->scale) && isfinite(x->scale * 256.0f);

	if (qlinear && global)
		return gap_qlinear(x, y, rc);
	for (n = 0; n < y->dims[0]; n++) {
		for (oy = 0; oy < y->dims[1]; oy++) {
			for (ox = 0; ox < y->dims[2]; ox++) {
				uint8_t *yp = y->p + (n * y->st[0] + oy * y->st[1] +
						      ox * y->st[2]) * yes;

				for (c0 = 0; c0 < ch; c0 += POOL_CHUNK) {
					uint32_t w = ch - c0 < POOL_CHUNK ? ch - c0 : POOL_CHUNK;
					uint32_t cnt = 0;

					/* The output write; each window row below polls. */
					if (vnpu_run_tick(rc, w))
						return -ECANCELED;

					if (max_q8)
						memset(codes, x_signed ? 0x80 : 0, w);
					else
						for (i = 0; i < w; i++)
							acc[i] = is_max ? -INFINITY : 0.0f;
					for (ky = 0; ky < kh; ky++) {
						int64_t iy = (int64_t)oy * sh - at->pad_top +
							     (int64_t)ky * dh;

						/*
						 * A window can be 2^16 taps of 1024
						 * channels: a row of it at a time,
						 * at most 2^20 units between polls.
						 */
						if (vnpu_run_tick(rc, (uint64_t)kw * w))
							return -ECANCELED;
						if (iy < 0 || iy >= x->dims[1])
							continue;
						for (kx = 0; kx < kw; kx++) {
							int64_t ix = (int64_t)ox * sw -
								     at->pad_left +
								     (int64_t)kx * dw;
							const uint8_t *xb;
							const float *xp;

							if (ix < 0 || ix >= x->dims[2])
								continue;
							xb = x->p + (n * x->st[0] + iy * x->st[1] +
								     ix * x->st[2] + c0) * xes;
							cnt++;
							if (max_q8) {
								if (x_signed)
									max_codes_s8((int8_t *)codes,
										     (const int8_t *)xb, w);
								else
									max_codes_u8(codes, xb, w);
								continue;
							}
							if (xq) {
								vnpu_eng_q8_load(x, xb, taps, w);
								xp = taps;
							} else {
								xp = (const float *)(const void *)xb;
							}
							if (is_max)
								max_taps(acc, xp, w);
							else
								sum_taps(acc, xp, w);
						}
					}
					if (same_codes && cnt) {
						memcpy(yp + c0, codes, w);
						continue;
					}
					if (max_q8 && cnt)
						vnpu_eng_q8_load(x, codes, acc, w);
					else if (max_q8)
						for (i = 0; i < w; i++)
							acc[i] = -INFINITY;
					if (!is_max) {
						float d;

						if (at->flags & VNPU_POOL_COUNT_INCLUDE_PAD)
							cnt = kh * kw;
						d = (float)cnt;
						for (i = 0; i < w; i++)
							acc[i] = cnt ? acc[i] / d : 0.0f;
					}
					if (qlinear)
						for (i = 0; i < w; i++)
							yp[c0 + i] = (uint8_t)vnpu_qlinear_avg_q(
								acc[i], y->scale, y->zp, lo, hi);
					else if (yq)
						vnpu_eng_q8_store(y, yp + c0, 1, acc, w,
								  c->round);
					else
						memcpy(yp + c0 * 4, acc, (size_t)w * 4);
				}
			}
		}
	}
	return 0;
}
