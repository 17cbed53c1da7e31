// SPDX-License-Identifier: MIT
/*
 * Rows of per-tensor quantized 8-bit elements to and from reals, for the
 * engine kernels that compute a quantized op in binary32 as the reference
 * does (ELTWISE, ACTIVATION, QUANTIZE, DEQUANTIZE, POOL2D): vnpu_ld()'s
 * and vnpu_st()'s arithmetic, in loops the compiler vectorizes.  A call
 * per element (rintf() is a libm call below SSE4.1) was over half of a
 * quantized model's time on the CPU path.
 */
#include <math.h>

#include "vnpu_engine.h"

/*
 * Zero points up to this size keep q - zp, lo - zp and hi - zp exact in
 * binary32, which both directions rely on.
 */
#define Q8_ZP_MAX	(1 << 23)

bool vnpu_eng_q8_ok(const struct vnpu_tv *tv)
{
	return (tv->dtype == VNPU_DT_INT8 || tv->dtype == VNPU_DT_UINT8) &&
	       tv->quant != VNPU_QUANT_CHANNEL &&
	       tv->zp >= -Q8_ZP_MAX && tv->zp <= Q8_ZP_MAX;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void load_row(const uint8_t *p, bool is_signed, float scale,
		     int32_t zp, float *buf, uint32_t m)
{
	uint32_t j;

	if (is_signed)
		for (j = 0; j < m; j++)
			buf[j] = (float)((int32_t)(int8_t)p[j] - zp) * scale;
	else
		for (j = 0; j < m; j++)
			buf[j] = (float)((int32_t)p[j] - zp) * scale;
}

void vnpu_eng_q8_load(const struct vnpu_tv *tv, const uint8_t *p, float *buf,
		      uint32_t m)
{
	load_row(p, tv->dtype == VNPU_DT_INT8, tv->scale, tv->zp, buf, m);
}

/*
 * vnpu_quantize_f() with VNPU_ROUND_ONNX: the same division and rounding;
 * the clamp to [lo, hi] moves before the zero point is added, to
 * [rlo, rhi] = [lo - zp, hi - zp], the same clamp because the rounded
 * value is an integer and both bounds are exact.  NaN rounds to 0 and so
 * lands on the clamped zero point, as there.
 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void store_row(uint8_t *p, int64_t st, const float *v, uint32_t m,
		      float scale, int32_t zp, float rlo, float rhi)
{
	uint32_t j;

#define Q8_STORE_LOOP(at)						\
	for (j = 0; j < m; j++) {					\
		float r = rintf(v[j] / scale);				\
									\
		r = r == r ? r : 0.0f;					\
		r = r < rlo ? rlo : r > rhi ? rhi : r;			\
		p[at] = (uint8_t)((int32_t)r + zp);			\
	}

	/* Apart, so that the dense case is not vectorized as a scatter. */
	if (st == 1)
		Q8_STORE_LOOP(j)
	else
		Q8_STORE_LOOP((int64_t)j * st)
#undef Q8_STORE_LOOP
}

void vnpu_eng_q8_store(const struct vnpu_tv *tv, uint8_t *p, int64_t st,
		       const float *v, uint32_t m, unsigned int round)
{
	int32_t lo = tv->dtype == VNPU_DT_INT8 ? -128 : 0;
	int32_t hi = tv->dtype == VNPU_DT_INT8 ? 127 : 255;
	uint32_t j;

	if (round == VNPU_ROUND_ONNX) {
		store_row(p, st, v, m, tv->scale, tv->zp, (float)(lo - tv->zp),
			  (float)(hi - tv->zp));
		return;
	}
	for (j = 0; j < m; j++)
		p[(int64_t)j * st] = (uint8_t)vnpu_quantize_f(v[j], tv->scale,
							      tv->zp, lo, hi,
							      round);
}
