// SPDX-License-Identifier: MIT
/*
 * Engine paths for the per-element ops: ELTWISE (numpy broadcasting) and
 * ACTIVATION, QUANTIZE, DEQUANTIZE (y = act(x), converted).
 *
 * The reference walks Y one element at a time with a full index vector
 * and a dtype switch per load and store.  Here the dims of Y are first
 * collapsed: size-1 dims vanish, and neighbours merge wherever every
 * operand steps through them as through one dim (a dense tensor becomes
 * one long row, a [C] operand broadcast over NHWC becomes rows of C with
 * an outer stride of 0).  The innermost collapsed dim is then processed
 * in chunks: operands are read in place when they are fp32 with a unit
 * stride, held in a register when they broadcast along the row (stride
 * 0), and converted into a small buffer otherwise (fp16/bf16 through the
 * reference's converters, dense 8-bit by vnpu_engine_q8.c's rows, strided
 * 8-bit through a 256-entry table of vnpu_ld()'s own results); the op
 * runs as one plain loop per kind and activation (vectorized where it
 * can be), and the result goes straight into an fp32 Y with a unit
 * stride, an 8-bit one through vnpu_engine_q8.c, else through the
 * reference's conversions.
 *
 * Every element is computed with the reference's arithmetic in the same
 * order (eltwise_f(), vnpu_act_ab(), vnpu_quantize_f()), so the results
 * are bit-identical to it; only which NaN a NaN result is may differ.
 * Per-channel quantized operands stay on the reference path.  ELTWISE
 * with VNPU_ROUND_ORT_QLINEAR works on the codes themselves, through
 * tables of the reference's own per-element functions (vnpu_ref_qlinear.h)
 * or their operations vectorized in the same order (elt_qlinear_row()).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_ref_qlinear.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Elements per chunk: three chunk buffers stay in L1. */
#define ELT_CHUNK	1024

/* Y and up to three inputs (X, scale, shift) over the collapsed dims of Y. */
#define ELT_MAX_OPS	4

struct elt_plan {
	int nr;				/* collapsed rank, >= 1 */
	uint32_t d[VNPU_MAX_RANK];	/* collapsed extents */
	int64_t s[ELT_MAX_OPS][VNPU_MAX_RANK];	/* element strides */
};

/*
 * Collapse Y's dims for operands @ops (ops[0] is Y; the others broadcast
 * to it numpy-style, right-aligned, a dim of extent 1 repeating).
 */
static void elt_plan_init(struct elt_plan *p, const struct vnpu_tv *const *ops,
			  int nops)
{
	const struct vnpu_tv *y = ops[0];
	int r = y->rank, i, k, n = 0, m;

	for (i = 0; i < r; i++) {
		if (y->dims[i] == 1)
			continue;
		p->d[n] = y->dims[i];
		for (k = 0; k < nops; k++) {
			const struct vnpu_tv *t = ops[k];
			int ti = i - (r - t->rank);

			p->s[k][n] = ti >= 0 && t->dims[ti] != 1 ? t->st[ti] : 0;
		}
		n++;
	}
	if (!n) {
		p->d[0] = 1;
		for (k = 0; k < nops; k++)
			p->s[k][0] = 0;
		p->nr = 1;
		return;
	}
	/*
	 * Merge dim i into the collapsed dim m outside it when every
	 * operand's stride of m is i's stride times i's extent.  Extents
	 * multiply to at most Y's element count, strides stay below the
	 * operand spans: no overflow.
	 */
	for (m = 0, i = 1; i < n; i++) {
		bool merge = true;

		for (k = 0; k < nops; k++)
			if (p->s[k][m] != p->s[k][i] * (int64_t)p->d[i])
				merge = false;
		if (merge) {
			p->d[m] *= p->d[i];
		} else {
			m++;
			p->d[m] = p->d[i];
		}
		for (k = 0; k < nops; k++)
			p->s[k][m] = p->s[k][i];
	}
	p->nr = m + 1;
}

/* The reference's real value of every byte of a per-tensor 8-bit operand. */
static void elt_lut(const struct vnpu_tv *tv, float *lut)
{
	uint32_t i;

	for (i = 0; i < 256; i++) {
		uint8_t b = (uint8_t)i;

		lut[i] = vnpu_ld(tv, &b, 0);
	}
}

/*
 * Elements off + j * st (j < @m) of @tv as reals: the operand itself when
 * it is fp32 with a unit stride, else converted into @buf.
 */
static const float *elt_load(const struct vnpu_tv *tv, const float *lut,
			     int64_t off, int64_t st, uint32_t m, float *buf)
{
	const uint8_t *p = tv->p;
	uint16_t h;
	uint32_t j;

	switch (tv->dtype) {
	case VNPU_DT_FP32: {
		const float *f = (const float *)(const void *)p + off;

		if (st == 1)
			return f;
		for (j = 0; j < m; j++)
			buf[j] = f[(int64_t)j * st];
		break;
	}
	case VNPU_DT_FP16:
		for (j = 0; j < m; j++) {
			memcpy(&h, p + (off + (int64_t)j * st) * 2, 2);
			buf[j] = vnpu_fp16_to_f32(h);
		}
		break;
	case VNPU_DT_BF16:
		for (j = 0; j < m; j++) {
			memcpy(&h, p + (off + (int64_t)j * st) * 2, 2);
			buf[j] = vnpu_bf16_to_f32(h);
		}
		break;
	default:	/* INT8, UINT8, per tensor */
		if (st == 1 && vnpu_eng_q8_ok(tv)) {
			vnpu_eng_q8_load(tv, p + off, buf, m);
			break;
		}
		for (j = 0; j < m; j++)
			buf[j] = lut[p[off + (int64_t)j * st]];
		break;
	}
	return buf;
}

/* One element of @tv as a real (a row that broadcasts it). */
static float elt_load1(const struct vnpu_tv *tv, const float *lut, int64_t off)
{
	float v;

	elt_load(tv, lut, off, 0, 1, &v);
	return v;
}

/* Store @m reals at elements off + j * st of @y, converted as vnpu_st(). */
static void elt_store(const struct vnpu_tv *y, int64_t off, int64_t st,
		      const float *v, uint32_t m, unsigned int round)
{
	uint8_t *p = y->p;
	int32_t lo = y->dtype == VNPU_DT_INT8 ? -128 : 0;
	int32_t hi = y->dtype == VNPU_DT_INT8 ? 127 : 255;
	uint16_t h;
	uint32_t j;

	switch (y->dtype) {
	case VNPU_DT_FP32: {
		float *f = (float *)(void *)p + off;

		if (f == v)
			return;
		for (j = 0; j < m; j++)
			f[(int64_t)j * st] = v[j];
		break;
	}
	case VNPU_DT_FP16:
		for (j = 0; j < m; j++) {
			h = vnpu_f32_to_fp16(v[j]);
			memcpy(p + (off + (int64_t)j * st) * 2, &h, 2);
		}
		break;
	case VNPU_DT_BF16:
		for (j = 0; j < m; j++) {
			h = vnpu_f32_to_bf16(v[j]);
			memcpy(p + (off + (int64_t)j * st) * 2, &h, 2);
		}
		break;
	default:	/* INT8, UINT8, per tensor */
		if (vnpu_eng_q8_ok(y)) {
			vnpu_eng_q8_store(y, p + off, st, v, m, round);
			break;
		}
		for (j = 0; j < m; j++)
			p[off + (int64_t)j * st] = (uint8_t)
				vnpu_quantize_f(v[j], y->scale, y->zp, lo, hi,
						round);
		break;
	}
}

/*
 * The reference's eltwise_f() per kind, one loop each so that the cheap
 * kinds vectorize.  @a or @b NULL: that operand is the scalar @av / @bv.
 */
#define ELT_ADD(x, y)	((x) + (y))
#define ELT_SUB(x, y)	((x) - (y))
#define ELT_MUL(x, y)	((x) * (y))
#define ELT_DIV(x, y)	((x) / (y))
#define ELT_MAX(x, y)	(isnan(x) || isnan(y) ? (x) + (y) : (x) > (y) ? (x) : (y))
#define ELT_MIN(x, y)	(isnan(x) || isnan(y) ? (x) + (y) : (x) < (y) ? (x) : (y))
#define ELT_POW(x, y)	vnpu_pow((x), (y))

/* elt_activate()'s ReLU, fused into the loop when @relu (a constant). */
static inline float elt_post(float v, const bool relu)
{
	return relu ? (v > 0.0f ? v : 0.0f) : v;
}

#define ELT_LOOPS(F)							\
	do {								\
		if (a && b)						\
			for (j = 0; j < m; j++)				\
				o[j] = elt_post(F(a[j], b[j]), relu);	\
		else if (b)						\
			for (j = 0; j < m; j++)				\
				o[j] = elt_post(F(av, b[j]), relu);	\
		else							\
			for (j = 0; j < m; j++)				\
				o[j] = elt_post(F(a[j], bv), relu);	\
	} while (0)

/* Then ReLU when @relu: one pass, not a second over the chunk. */
static inline __attribute__((always_inline))
void elt_binary_body(unsigned int kind, const float *a, float av,
		     const float *b, float bv, float *o, uint32_t m, const bool relu)
{
	uint32_t j;

	switch (kind) {
	case VNPU_ELTWISE_ADD:
		ELT_LOOPS(ELT_ADD);
		break;
	case VNPU_ELTWISE_SUB:
		ELT_LOOPS(ELT_SUB);
		break;
	case VNPU_ELTWISE_MUL:
		ELT_LOOPS(ELT_MUL);
		break;
	case VNPU_ELTWISE_DIV:
		ELT_LOOPS(ELT_DIV);
		break;
	case VNPU_ELTWISE_MAX:
		ELT_LOOPS(ELT_MAX);
		break;
	case VNPU_ELTWISE_MIN:
		ELT_LOOPS(ELT_MIN);
		break;
	default:
		ELT_LOOPS(ELT_POW);
		break;
	}
}

/*
 * ACTIVATION's affine step, o[j] = x[j] * s[j] + t[j] as the reference
 * computes it; @s or @t NULL: the scalar @sv / @tv.  @x may be @o.
 */
static void elt_affine(const float *x, const float *s, float sv,
		       const float *t, float tv, float *o, uint32_t m)
{
	uint32_t j;

	if (s && t)
		for (j = 0; j < m; j++)
			o[j] = x[j] * s[j] + t[j];
	else if (s)
		for (j = 0; j < m; j++)
			o[j] = x[j] * s[j] + tv;
	else if (t)
		for (j = 0; j < m; j++)
			o[j] = x[j] * sv + t[j];
	else
		for (j = 0; j < m; j++)
			o[j] = x[j] * sv + tv;
}

struct elt_act {
	unsigned int act;
	float alpha, beta;	/* LEAKY_RELU, HARD_SIGMOID */
	float lo, hi;		/* CLIP */
};

/*
 * o[j] = act(x[j]) with vnpu_act_ab()'s (or vnpu_clip()'s) arithmetic,
 * written out for the functions cheap enough that a call per element
 * would dominate; @x may be @o.
 */
static inline __attribute__((always_inline))
void elt_activate_body(const struct elt_act *f, const float *x, float *o, uint32_t m)
{
	float alpha = f->alpha, beta = f->beta, lo = f->lo, hi = f->hi, t;
	uint32_t j;

	switch (f->act) {
	case VNPU_ACT_NONE:
		if (o != x)
			memmove(o, x, 4ull * m);
		break;
	case VNPU_ACT_RELU:
		for (j = 0; j < m; j++)
			o[j] = x[j] > 0.0f ? x[j] : 0.0f;
		break;
	case VNPU_ACT_RELU6:
		for (j = 0; j < m; j++)
			o[j] = x[j] > 6.0f ? 6.0f : x[j] > 0.0f ? x[j] : 0.0f;
		break;
	case VNPU_ACT_LEAKY_RELU:
		for (j = 0; j < m; j++)
			o[j] = x[j] >= 0.0f ? x[j] : x[j] * alpha;
		break;
	case VNPU_ACT_SIGMOID:
		for (j = 0; j < m; j++)
			o[j] = 1.0f / (1.0f + expf(-x[j]));
		break;
	case VNPU_ACT_HARD_SIGMOID:
		for (j = 0; j < m; j++) {
			t = alpha * x[j] + beta;
			o[j] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
		}
		break;
	case VNPU_ACT_HARD_SWISH:
		for (j = 0; j < m; j++) {
			t = x[j] * (1.0f / 6.0f) + 0.5f;
			o[j] = x[j] * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
		}
		break;
	case VNPU_ACT_RECIPROCAL:
		for (j = 0; j < m; j++)
			o[j] = 1.0f / x[j];
		break;
	case VNPU_ACT_ABS:
		for (j = 0; j < m; j++)
			o[j] = fabsf(x[j]);
		break;
	case VNPU_ACT_NEG:
		for (j = 0; j < m; j++)
			o[j] = -x[j];
		break;
	case VNPU_ACT_CLIP:
		for (j = 0; j < m; j++)
			o[j] = x[j] < lo ? lo : x[j] > hi ? hi : x[j];
		break;
	default:	/* TANH, GELU, SQRT, EXP, LOG: a libm call each anyway */
		for (j = 0; j < m; j++)
			o[j] = vnpu_act_ab(f->act, alpha, beta, x[j]);
		break;
	}
}

/*
 * elt_binary_body() and elt_activate_body() once more for AVX2: the
 * library is built for baseline x86-64, where GCC vectorizes these loops
 * 4 wide, and a residual Add + ReLU over 400k floats took 1.3 cycles an
 * element (blazeface-back: a fifth of the model).  Only the vector width
 * differs (no FMA contraction, -ffp-contract=off): the same operations
 * in the same order, so the same bits.
 */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2")))
static void elt_binary_avx2(unsigned int kind, const float *a, float av,
			    const float *b, float bv, float *o, uint32_t m)
{
	elt_binary_body(kind, a, av, b, bv, o, m, false);
}

__attribute__((target("avx2")))
static void elt_binary_relu_avx2(unsigned int kind, const float *a, float av,
				 const float *b, float bv, float *o, uint32_t m)
{
	elt_binary_body(kind, a, av, b, bv, o, m, true);
}

__attribute__((target("avx2")))
static void elt_activate_avx2(const struct elt_act *f, const float *x, float *o, uint32_t m)
{
	elt_activate_body(f, x, o, m);
}

static bool elt_math_avx2(void)
{
	static int have = -1;

	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx2");
	}
	return have;
}
#else
static void elt_binary_avx2(unsigned int kind, const float *a, float av,
			    const float *b, float bv, float *o, uint32_t m)
{
	elt_binary_body(kind, a, av, b, bv, o, m, false);
}

static void elt_binary_relu_avx2(unsigned int kind, const float *a, float av,
				 const float *b, float bv, float *o, uint32_t m)
{
	elt_binary_body(kind, a, av, b, bv, o, m, true);
}

static void elt_activate_avx2(const struct elt_act *f, const float *x, float *o, uint32_t m)
{
	elt_activate_body(f, x, o, m);
}

static bool elt_math_avx2(void)
{
	return false;
}
#endif

static void elt_binary(unsigned int kind, const float *a, float av,
		       const float *b, float bv, float *o, uint32_t m)
{
	if (elt_math_avx2())
		elt_binary_avx2(kind, a, av, b, bv, o, m);
	else
		elt_binary_body(kind, a, av, b, bv, o, m, false);
}

static void elt_binary_relu(unsigned int kind, const float *a, float av,
			    const float *b, float bv, float *o, uint32_t m)
{
	if (elt_math_avx2())
		elt_binary_relu_avx2(kind, a, av, b, bv, o, m);
	else
		elt_binary_body(kind, a, av, b, bv, o, m, true);
}

static void elt_activate(const struct elt_act *f, const float *x, float *o, uint32_t m)
{
	if (elt_math_avx2())
		elt_activate_avx2(f, x, o, m);
	else
		elt_activate_body(f, x, o, m);
}

/*
 * ELTWISE with VNPU_ROUND_ORT_QLINEAR works on the codes themselves (no
 * reals in between) with vnpu_ref_qlinear.h's arithmetic.  Rows of a
 * dense Y whose operands have unit or zero strides go eight elements at
 * a time through AVX2 when the CPU has it, with the reference's binary32
 * operations in its order: VFMADD rounds once as fmaf() does, and
 * VCVTPS2DQ rounds in the current rounding mode as rintf() does, and
 * turns NaN and values beyond int32 into INT32_MIN, which the clamp sends
 * to the low bound as vnpu_qlinear_sat() does.  Otherwise, where one
 * operand is a single code along a row (a constant, a scalar, a channel's
 * value over NCHW), each output is a function of one byte: the row reads
 * a table of the reference's 256 results.
 */
struct elt_qlinear {
	bool mul, is_signed, simd;
	int32_t lo, hi;
	struct vnpu_qlinear_add add;
	struct vnpu_qlinear_mul prod;
	int lut_key;		/* elt_qlinear_lut()'s key of lut[], or -1 */
	uint8_t lut[256];
};

/*
 * A row at least this long builds a table when it has none for its fixed
 * code: the 256 reference evaluations then cost less than the row's own.
 */
#define ELT_QLUT_MIN	256

static inline int32_t elt_code(uint8_t b, bool is_signed)
{
	return is_signed ? (int32_t)(int8_t)b : (int32_t)b;
}

/* The reference's output byte for operand codes @va and @vb. */
static inline uint8_t elt_qlinear_q(const struct elt_qlinear *q, int32_t va,
				    int32_t vb)
{
	float v = q->mul ? vnpu_qlinear_mul_f(&q->prod, va, vb) :
		  vnpu_qlinear_add_f(&q->add, va, vb);

	return (uint8_t)vnpu_qlinear_sat(v, q->lo, q->hi);
}

/*
 * q->lut[byte]: the output when the operand that moves holds @byte and
 * the other (A if @a_fixed, else B) holds @code.
 */
static void elt_qlinear_lut(struct elt_qlinear *q, bool a_fixed, uint8_t code)
{
	int key = code | (int)a_fixed << 8;
	int32_t c = elt_code(code, q->is_signed), v;
	uint32_t i;

	if (q->lut_key == key)
		return;
	for (i = 0; i < 256; i++) {
		v = elt_code((uint8_t)i, q->is_signed);
		q->lut[i] = a_fixed ? elt_qlinear_q(q, c, v) : elt_qlinear_q(q, v, c);
	}
	q->lut_key = key;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * y[j] = lut[x[j]] for 32 bytes at a time, the 256-byte table as 16
 * rows of 16 in registers: VPSHUFB looks every byte's low nibble up in
 * each row (within 128-bit lanes, so each row fills both), and a blend
 * keeps the row its high nibble names.  Returns the bytes done.
 */
__attribute__((target("avx2")))
static uint32_t elt_lut_avx2(const uint8_t *lut, const uint8_t *x, uint8_t *y, uint32_t m)
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i row[16];
	uint32_t j;
	int h;

	for (h = 0; h < 16; h++)
		row[h] = _mm256_broadcastsi128_si256(
			_mm_loadu_si128((const __m128i *)(const void *)(lut + 16 * h)));
	for (j = 0; j + 32 <= m; j += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
		__m256i lo = _mm256_and_si256(v, nib);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
		__m256i r = _mm256_shuffle_epi8(row[0], lo);

		for (h = 1; h < 16; h++)
			r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(row[h], lo),
					       _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)h)));
		_mm256_storeu_si256((__m256i *)(void *)(y + j), r);
	}
	return j;
}

static bool elt_lut_have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#else
static uint32_t elt_lut_avx2(const uint8_t *lut, const uint8_t *x, uint8_t *y, uint32_t m)
{
	(void)lut, (void)x, (void)y, (void)m;
	return 0;
}

static bool elt_lut_have_avx2(void)
{
	return false;
}
#endif

static void elt_lut_row(const uint8_t *lut, const uint8_t *x, int64_t sx,
			uint8_t *y, int64_t sy, uint32_t m)
{
	uint32_t j;

	if (sx == 1 && sy == 1)
		for (j = 0; j < m; j++)
			y[j] = lut[x[j]];
	else
		for (j = 0; j < m; j++)
			y[(int64_t)j * sy] = lut[x[(int64_t)j * sx]];
}

/* Any strides; the FMA clone makes fmaf() an instruction, not a call. */
__attribute__((target_clones("arch=haswell", "default")))
static void elt_qlinear_row_any(const struct elt_qlinear *q, const uint8_t *a,
				int64_t sa, const uint8_t *b, int64_t sb,
				uint8_t *y, int64_t sy, uint32_t m)
{
	uint32_t j;

	for (j = 0; j < m; j++)
		y[(int64_t)j * sy] = elt_qlinear_q(q, elt_code(a[(int64_t)j * sa], q->is_signed),
						   elt_code(b[(int64_t)j * sb], q->is_signed));
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ELT_AVX2	__attribute__((target("avx2,fma")))

/* Eight codes from @p, or eight copies of *p when @st is 0. */
ELT_AVX2 static inline __m256i elt_codes8(const uint8_t *p, int64_t st,
					  bool is_signed)
{
	__m128i b;

	if (!st)
		return _mm256_set1_epi32(elt_code(*p, is_signed));
	b = _mm_loadl_epi64((const __m128i *)(const void *)p);
	return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

/* Eight outputs already clamped to [lo, hi], stored as bytes. */
ELT_AVX2 static inline void elt_store8(uint8_t *y, __m256i r, bool is_signed)
{
	__m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r),
				    _mm256_extracti128_si256(r, 1));

	w = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
	_mm_storel_epi64((__m128i *)(void *)y, w);
}

struct elt_qlinear_v {
	__m256 ra, rb, fixed, ratio, zy;
	__m256i za, zb, lo, hi;
};

/* Eight outputs from eight codes of each operand, clamped to [lo, hi]. */
ELT_AVX2 static inline __m256i elt_qlinear8(const struct elt_qlinear_v *k, bool mul,
					    __m256i va, __m256i vb)
{
	__m256 v;

	if (mul) {
		__m256i prod = _mm256_mullo_epi32(_mm256_sub_epi32(va, k->za),
						  _mm256_sub_epi32(vb, k->zb));

		v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(prod), k->ratio), k->zy);
	} else {
		v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(vb), k->rb, k->fixed);
		v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(va), k->ra, v);
	}
	return _mm256_min_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(v), k->lo), k->hi);
}

/* @sa and @sb 0 or 1, Y dense. */
ELT_AVX2 static void elt_qlinear_row_avx2(const struct elt_qlinear *q,
					  const uint8_t *a, int64_t sa,
					  const uint8_t *b, int64_t sb,
					  uint8_t *y, uint32_t m)
{
	const struct elt_qlinear_v k = {
		.ra = _mm256_set1_ps(q->add.ra), .rb = _mm256_set1_ps(q->add.rb),
		.fixed = _mm256_set1_ps(q->add.fixed),
		.ratio = _mm256_set1_ps(q->prod.ratio), .zy = _mm256_set1_ps(q->prod.zy),
		.za = _mm256_set1_epi32(q->prod.za), .zb = _mm256_set1_epi32(q->prod.zb),
		.lo = _mm256_set1_epi32(q->lo), .hi = _mm256_set1_epi32(q->hi),
	};
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	bool sg = q->is_signed, mul = q->mul;
	uint32_t j;

	/* 32 at a time: four vectors packed to bytes with one store */
	for (j = 0; j + 32 <= m; j += 32) {
		__m256i r[4], w01, w23;
		int i;

		for (i = 0; i < 4; i++)
			r[i] = elt_qlinear8(&k, mul, elt_codes8(a + (j + 8 * i) * sa, sa, sg),
					    elt_codes8(b + (j + 8 * i) * sb, sb, sg));
		w01 = _mm256_packs_epi32(r[0], r[1]);
		w23 = _mm256_packs_epi32(r[2], r[3]);
		w01 = sg ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
		_mm256_storeu_si256((__m256i *)(void *)(y + j),
				    _mm256_permutevar8x32_epi32(w01, order));
	}
	for (; j + 8 <= m; j += 8)
		elt_store8(y + j, elt_qlinear8(&k, mul, elt_codes8(a + j * sa, sa, sg),
					       elt_codes8(b + j * sb, sb, sg)), sg);
	for (; j < m; j++)
		y[j] = elt_qlinear_q(q, elt_code(a[j * sa], sg), elt_code(b[j * sb], sg));
}

static bool elt_have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static bool elt_have_avx2(void)
{
	return false;
}
#endif

/*
 * One row of @m outputs; the strides are in elements (bytes).  The
 * vector rows are the faster where both serve (32 outputs per store).
 */
static void elt_qlinear_row(struct elt_qlinear *q, const uint8_t *a, int64_t sa,
			    const uint8_t *b, int64_t sb, uint8_t *y, int64_t sy,
			    uint32_t m)
{
	bool a_fixed = !sa;

#if defined(__x86_64__) && defined(__GNUC__)
	if (q->simd && sy == 1 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
		elt_qlinear_row_avx2(q, a, sa, b, sb, y, m);
		return;
	}
#endif
	if ((!sa || !sb) &&
	    (m >= ELT_QLUT_MIN || q->lut_key == ((a_fixed ? *a : *b) | (int)a_fixed << 8))) {
		elt_qlinear_lut(q, a_fixed, a_fixed ? *a : *b);
		if (a_fixed)
			elt_lut_row(q->lut, b, sb, y, sy, m);
		else
			elt_lut_row(q->lut, a, sa, y, sy, m);
		return;
	}
	elt_qlinear_row_any(q, a, sa, b, sb, y, sy, m);
}

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

bool vnpu_eng_elt_ok(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info)
{
	unsigned int op = c->hdr.opcode;
	int i;

	if (op != VNPU_OP_ELTWISE && op != VNPU_OP_ACTIVATION &&
	    op != VNPU_OP_QUANTIZE && op != VNPU_OP_DEQUANTIZE)
		return false;
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (((info->present >> i) & 1) &&
		    c->t[i].quant == VNPU_QUANT_CHANNEL)
			return false;
	return true;
}

/* What every chunk of a command shares. */
struct elt_cmd {
	const struct vnpu_cmd_compute *c;
	bool binary, affine;
	int nops;
	struct elt_act f;
	float lut[2][256];	/* 8-bit X / A, B: vnpu_ld() of each byte */
};

/*
 * One chunk of @m elements of Y: operand k from ops[k] at element o[k],
 * step in[k] (Y is ops[0]), through buffers @buf.
 */
static void elt_chunk(const struct elt_cmd *e, const struct vnpu_tv *const *ops,
		      const int64_t *o, const int64_t *in, uint32_t m,
		      float (*buf)[ELT_CHUNK])
{
	const struct vnpu_tv *y = ops[0];
	const float *a, *b = NULL;
	float av = 0.0f, bv = 0.0f, *out;

	out = y->dtype == VNPU_DT_FP32 && in[0] == 1 ?
	      (float *)(void *)y->p + o[0] : buf[0];
	if (!e->binary) {
		a = elt_load(ops[1], e->lut[0], o[1], in[1], m, buf[1]);
		if (e->affine) {
			const float *s = NULL, *u = NULL;
			float sv = 0.0f, uv = 0.0f;

			if (in[2])
				s = elt_load(ops[2], NULL, o[2], in[2], m, buf[2]);
			else
				sv = elt_load1(ops[2], NULL, o[2]);
			if (in[3])
				u = elt_load(ops[3], NULL, o[3], in[3], m, buf[3]);
			else
				uv = elt_load1(ops[3], NULL, o[3]);
			elt_affine(a, s, sv, u, uv, out, m);
			a = out;
		}
		elt_activate(&e->f, a, out, m);
		elt_store(y, o[0], in[0], out, m, e->c->round);
		return;
	}
	/* A row that broadcasts an operand holds it in a register. */
	if (in[1] || !in[2])
		a = elt_load(ops[1], e->lut[0], o[1], in[1], m, buf[1]);
	else
		a = NULL, av = elt_load1(ops[1], e->lut[0], o[1]);
	if (in[2])
		b = elt_load(ops[2], e->lut[1], o[2], in[2], m, buf[2]);
	else
		bv = elt_load1(ops[2], e->lut[1], o[2]);
	if (e->f.act == VNPU_ACT_RELU) {
		elt_binary_relu(e->c->attr.eltwise.kind, a, av, b, bv, out, m);
	} else {
		elt_binary(e->c->attr.eltwise.kind, a, av, b, bv, out, m);
		if (e->f.act != VNPU_ACT_NONE)
			elt_activate(&e->f, out, out, m);
	}
	elt_store(y, o[0], in[0], out, m, e->c->round);
}

/*
 * A row along which a single operand moves and that operand is 8-bit is
 * a function of one byte: elt_chunk() run once over the 256 bytes, the
 * other operands at their values in the row, gives every output of the
 * row (each element's arithmetic depends on its own operands only), and
 * the row reads them from that table.  Built for rows at least
 * ELT_BYTES_MIN long, and reused while the other operands hold the same
 * values (a long row's chunks, a constant's rows).
 */
#define ELT_BYTES_MIN	256

struct elt_bytes {
	int k;				/* the moving operand; 0: no table */
	uint32_t fixed[ELT_MAX_OPS];	/* binary32 bits of the others */
	uint8_t out[256 * 4];		/* Y's bytes for each byte of operand k */
};

/* The operand that alone moves along the row, if 8-bit, else 0. */
static int elt_bytes_operand(const struct elt_cmd *e, const struct vnpu_tv *const *ops,
			     const int64_t *in)
{
	int k, moving = 0;

	for (k = 1; k < e->nops; k++) {
		if (!in[k])
			continue;
		if (moving)
			return 0;
		moving = k;
	}
	if (!moving || (ops[moving]->dtype != VNPU_DT_INT8 &&
			ops[moving]->dtype != VNPU_DT_UINT8))
		return 0;
	/*
	 * Into a wider Y a lookup is slower than the vector rows of a cheap
	 * op (a DEQUANTIZE); only a libm call per element costs more.
	 */
	if (ops[0]->esize == 1)
		return moving;
	switch (e->f.act) {
	case VNPU_ACT_SIGMOID:
	case VNPU_ACT_TANH:
	case VNPU_ACT_GELU:
	case VNPU_ACT_SQRT:
	case VNPU_ACT_EXP:
	case VNPU_ACT_LOG:
		return moving;
	default:
		return e->binary && e->c->attr.eltwise.kind == VNPU_ELTWISE_POW ? moving : 0;
	}
}

/*
 * Y for a chunk of @m elements of a row of @n from @bt, (re)built for
 * operand @k if the other operands' values differ from the table's; false
 * (nothing done) when there is no table for them and the row is too short
 * to build one.
 */
static bool elt_bytes_row(const struct elt_cmd *e, struct elt_bytes *bt, int k,
			  const struct vnpu_tv *const *ops, const int64_t *o,
			  const int64_t *in, uint32_t m, uint32_t n,
			  float (*buf)[ELT_CHUNK])
{
	const struct vnpu_tv *y = ops[0];
	uint32_t fixed[ELT_MAX_OPS] = { 0 }, es = y->esize, j;
	const uint8_t *x = ops[k]->p + o[k];
	uint8_t *py = y->p + o[0] * (int64_t)es;
	int i;

	for (i = 1; i < e->nops; i++) {
		float v;

		if (i == k)
			continue;
		v = elt_load1(ops[i], i < 3 ? e->lut[i - 1] : NULL, o[i]);
		memcpy(&fixed[i], &v, 4);
	}
	if (bt->k != k || memcmp(bt->fixed, fixed, sizeof(fixed))) {
		const struct vnpu_tv *tops[ELT_MAX_OPS];
		struct vnpu_tv xt = *ops[k], yt = *y;
		int64_t to[ELT_MAX_OPS], tin[ELT_MAX_OPS] = { 1 };
		uint8_t codes[256];

		if (n < ELT_BYTES_MIN)
			return false;
		for (j = 0; j < 256; j++)
			codes[j] = (uint8_t)j;
		memcpy(tops, ops, sizeof(tops));
		memcpy(to, o, sizeof(to));
		xt.p = codes;
		yt.p = bt->out;
		tops[k] = &xt;
		tops[0] = &yt;
		to[k] = to[0] = 0;
		tin[k] = 1;
		elt_chunk(e, tops, to, tin, 256, buf);
		bt->k = k;
		memcpy(bt->fixed, fixed, sizeof(fixed));
	}
	if (es == 1 && in[k] == 1 && in[0] == 1)
		for (j = 0; j < m; j++)
			py[j] = bt->out[x[j]];
	else if (es == 1)
		for (j = 0; j < m; j++)
			py[(int64_t)j * in[0]] = bt->out[x[(int64_t)j * in[k]]];
	else if (es == 2)
		for (j = 0; j < m; j++)
			memcpy(py + (int64_t)j * in[0] * 2, bt->out + x[(int64_t)j * in[k]] * 2, 2);
	else
		for (j = 0; j < m; j++)
			memcpy(py + (int64_t)j * in[0] * 4, bt->out + x[(int64_t)j * in[k]] * 4, 4);
	return true;
}

/*
 * Short rows that did not merge because an operand's row repeats from one
 * row to the next (a [C] operand over NHWC: stride 0 across rows, unit
 * or any stride along them) cost a chunk's overhead each.  They go
 * ELT_CHUNK / n at a time instead: every other operand steps through the
 * two innermost dims as through one (or not at all), and each repeating
 * operand is read from its row laid out that many times over.
 */
struct elt_group {
	uint32_t rows;			/* rows per chunk; 0: no grouping */
	int64_t st[ELT_MAX_OPS];	/* the repeating operands' inner strides */
	struct vnpu_tv tile[ELT_MAX_OPS];
	uint8_t *buf;			/* their tiles, ELT_CHUNK * 4 bytes each */
};

/*
 * Group the two innermost dims of @p if that pays; @in the inner strides,
 * turned into those of the merged dim.  The tiles' memory comes from
 * @rc; without it nothing changes.
 */
static void elt_group_init(struct elt_group *g, struct elt_plan *p,
			   const struct vnpu_tv *const *ops, int nops, int64_t *in,
			   struct vnpu_run_ctx *rc)
{
	int nr = p->nr, k, repeating = 0;
	uint32_t n = p->d[nr - 1];

	g->rows = 0;
	if (nr < 2 || n > ELT_CHUNK / 2)
		return;
	for (k = 0; k < nops; k++) {
		int64_t outer = p->s[k][nr - 2];

		if (outer == (int64_t)n * in[k])
			continue;
		if (k == 0 || outer != 0)
			return;
		repeating++;
	}
	if (!repeating)
		return;
	g->buf = vnpu_run_alloc(rc, (size_t)ELT_MAX_OPS * ELT_CHUNK * 4);
	if (!g->buf)
		return;
	g->rows = ELT_CHUNK / n < p->d[nr - 2] ? ELT_CHUNK / n : p->d[nr - 2];
	for (k = 0; k < nops; k++) {
		g->st[k] = 0;
		if (p->s[k][nr - 2] == (int64_t)n * in[k])
			continue;
		g->st[k] = in[k];
		g->tile[k] = *ops[k];
		g->tile[k].p = g->buf + (size_t)k * ELT_CHUNK * 4;
		in[k] = 1;
	}
	p->d[nr - 2] *= n;
	for (k = 0; k < nops; k++)
		p->s[k][nr - 2] = in[k];
	p->nr = nr - 1;
}

/* The repeating operands' tiles for the rows whose offsets are @off. */
static void elt_group_fill(const struct elt_group *g, const struct vnpu_tv *const *ops,
			   int nops, const int64_t *off, uint32_t n)
{
	uint32_t r, j;
	int k;

	for (k = 1; k < nops; k++) {
		uint32_t es = ops[k]->esize;

		if (!g->st[k])
			continue;
		for (j = 0; j < n; j++)
			memcpy(g->tile[k].p + (size_t)j * es,
			       ops[k]->p + (off[k] + (int64_t)j * g->st[k]) * es, es);
		for (r = 1; r < g->rows; r++)
			memcpy(g->tile[k].p + (size_t)r * n * es, g->tile[k].p, (size_t)n * es);
	}
}

static int elt_done(struct elt_group *g, struct vnpu_run_ctx *rc, int ret)
{
	if (g->rows)
		vnpu_run_free(rc, g->buf);
	return ret;
}

int vnpu_eng_elt(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		 struct vnpu_run_ctx *rc)
{
	bool binary = c->hdr.opcode == VNPU_OP_ELTWISE;
	bool affine = !binary && t[1].p;
	struct vnpu_tv sc, sh;
	const struct vnpu_tv *ops[ELT_MAX_OPS] = { &t[3], &t[0], &t[1], &sh };
	int nops = binary ? 3 : affine ? 4 : 2, nr, i, k;
	struct elt_plan p;
	struct elt_cmd e = {
		.c = c,
		.binary = binary,
		.affine = affine,
		.nops = nops,
		.f = {
			.act = c->act,
			.alpha = bits_f32(c->act_alpha),
			.beta = vnpu_act_beta(c),
			.lo = bits_f32(c->attr.activation.clip_min),
			.hi = bits_f32(c->attr.activation.clip_max),
		},
	};
	float buf[ELT_MAX_OPS][ELT_CHUNK] __attribute__((aligned(64)));
	uint32_t idx[VNPU_MAX_RANK] = { 0 }, n, j0, m;
	int64_t off[ELT_MAX_OPS] = { 0 }, in[ELT_MAX_OPS];
	const struct vnpu_tv *y = &t[3];
	struct elt_bytes bt = { .k = 0 };
	struct elt_qlinear q = {
		.mul = c->attr.eltwise.kind == VNPU_ELTWISE_MUL,
		.is_signed = y->dtype == VNPU_DT_INT8,
		.lut_key = -1,
		.lo = y->dtype == VNPU_DT_INT8 ? -128 : 0,
		.hi = y->dtype == VNPU_DT_INT8 ? 127 : 255,
	};
	bool qlinear = binary && c->round == VNPU_ROUND_ORT_QLINEAR;
	const struct vnpu_tv *rops[ELT_MAX_OPS];
	struct elt_group g;
	uint32_t row, step;
	int bytes_k;

	if (qlinear) {
		q.simd = elt_have_avx2();
		vnpu_qlinear_add_init(&q.add, t[0].scale, t[0].zp, t[1].scale, t[1].zp,
				      y->scale, y->zp);
		vnpu_qlinear_mul_init(&q.prod, t[0].scale, t[0].zp, t[1].scale, t[1].zp,
				      y->scale, y->zp);
	}
	if (affine) {
		vnpu_affine_views(&t[1], &sc, &sh);
		ops[2] = &sc;
	}
	for (k = 1; k < nops && k < 3; k++)
		if (ops[k]->dtype == VNPU_DT_INT8 || ops[k]->dtype == VNPU_DT_UINT8)
			elt_lut(ops[k], e.lut[k - 1]);
	elt_plan_init(&p, ops, nops);
	for (k = 0; k < nops; k++)
		in[k] = p.s[k][p.nr - 1];
	row = p.d[p.nr - 1];
	elt_group_init(&g, &p, ops, nops, in, rc);
	nr = p.nr;
	n = p.d[nr - 1];
	step = g.rows ? g.rows * row : ELT_CHUNK;
	memcpy(rops, ops, sizeof(rops));
	for (k = 0; k < nops; k++)
		if (g.rows && g.st[k])
			rops[k] = &g.tile[k];
	bytes_k = qlinear ? 0 : elt_bytes_operand(&e, rops, in);
	for (;;) {
		if (g.rows)
			elt_group_fill(&g, ops, nops, off, row);
		for (j0 = 0; j0 < n; j0 += m) {
			int64_t o[ELT_MAX_OPS];

			m = n - j0 < step ? n - j0 : step;
			if (vnpu_run_tick(rc, m))
				return elt_done(&g, rc, -ECANCELED);
			for (k = 0; k < nops; k++)
				o[k] = rops[k] != ops[k] ? 0 : off[k] + (int64_t)j0 * in[k];
			if (qlinear) {
				elt_qlinear_row(&q, rops[1]->p + o[1], in[1], rops[2]->p + o[2],
						in[2], y->p + o[0], in[0], m);
				continue;
			}
			if (bytes_k && elt_bytes_row(&e, &bt, bytes_k, rops, o, in, m, n, buf))
				continue;
			elt_chunk(&e, rops, o, in, m, buf);
		}
		/* Next row: offsets follow the outer indices incrementally. */
		for (i = nr - 2; i >= 0; i--) {
			if (++idx[i] < p.d[i]) {
				for (k = 0; k < nops; k++)
					off[k] += p.s[k][i];
				break;
			}
			for (k = 0; k < nops; k++)
				off[k] -= p.s[k][i] * (int64_t)(p.d[i] - 1);
			idx[i] = 0;
		}
		if (i < 0)
			return elt_done(&g, rc, 0);
	}
}

/*
 * LUT: Y's dims collapsed with X's as for the other per-element ops, then
 * each row is a byte lookup in the table re-indexed by X's raw byte (the
 * INT8 offset of 128 folded into it), which is exactly what the reference
 * reads.  Rows of unit stride on both sides take elt_lut_avx2() (16
 * shuffles and blends per 32 bytes, about twice the scalar loop's speed
 * measured), the rest a scalar loop.
 */
int vnpu_eng_lut(const struct vnpu_cmd_compute *c, struct vnpu_tv *t,
		 struct vnpu_run_ctx *rc)
{
	const struct vnpu_tv *ops[2] = { &t[3], &t[0] };
	const struct vnpu_tv *x = &t[0], *tb = &t[1], *y = &t[3];
	uint32_t idx[VNPU_MAX_RANK] = { 0 }, n, j0, m, i;
	int64_t off[2] = { 0, 0 };
	uint8_t table[VNPU_LUT_ENTRIES];
	uint8_t flip = x->dtype == VNPU_DT_INT8 ? 0x80 : 0;
	struct elt_plan p;
	bool simd = elt_lut_have_avx2(), dense;
	int d;

	(void)c;
	for (i = 0; i < VNPU_LUT_ENTRIES; i++)
		table[i] = tb->p[(int64_t)(i ^ flip) * tb->st[0]];
	elt_plan_init(&p, ops, 2);
	n = p.d[p.nr - 1];
	dense = p.s[0][p.nr - 1] == 1 && p.s[1][p.nr - 1] == 1;
	if (simd && dense && n >= 32 && rc)
		rc->path = VNPU_ENG_LUT_AVX2;
	for (;;) {
		for (j0 = 0; j0 < n; j0 += m) {
			const uint8_t *xp = x->p + off[1] + (int64_t)j0 * p.s[1][p.nr - 1];
			uint8_t *yp = y->p + off[0] + (int64_t)j0 * p.s[0][p.nr - 1];
			uint32_t done = 0;

			m = n - j0 < ELT_CHUNK * 4 ? n - j0 : ELT_CHUNK * 4;
			if (vnpu_run_tick(rc, m))
				return -ECANCELED;
			/* X over Y in place reads each vector before writing it. */
			if (simd && dense)
				done = elt_lut_avx2(table, xp, yp, m);
			elt_lut_row(table, xp + done, p.s[1][p.nr - 1], yp + done,
				    p.s[0][p.nr - 1], m - done);
		}
		for (d = p.nr - 2; d >= 0; d--) {
			if (++idx[d] < p.d[d]) {
				off[0] += p.s[0][d];
				off[1] += p.s[1][d];
				break;
			}
			off[0] -= p.s[0][d] * (int64_t)(p.d[d] - 1);
			off[1] -= p.s[1][d] * (int64_t)(p.d[d] - 1);
			idx[d] = 0;
		}
		if (d < 0)
			return 0;
	}
}
