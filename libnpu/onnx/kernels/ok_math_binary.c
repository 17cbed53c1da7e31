// SPDX-License-Identifier: MIT
/*
 * Elementwise ops of two or more broadcast tensors: arithmetic (Add ...
 * Pow, Mod, PRelu), bitwise and logical ops, comparisons, and the
 * variadic Max, Min, Sum and Mean.  float32/float64 and the integers run
 * in their own type (integers wrap modulo 2^bits, computed unsigned),
 * float16/bfloat16 through float32 in blocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ok_math.h"

#define BLOCK	1024u

static bool is_compare(enum ok_math_op op)
{
	return op >= OKM_EQUAL && op <= OKM_LESS_EQUAL;
}

static bool is_variadic(enum ok_math_op op)
{
	return op >= OKM_MAX && op <= OKM_MEAN;
}

static bool is_int(enum npu_dtype dt)
{
	return !ok_is_float(dt) && dt != NPU_DTYPE_BOOL;
}

static bool is_unsigned(enum npu_dtype dt)
{
	return is_int(dt) && !ok_is_signed(dt);
}

/* NULL if @op takes @dt, else what it takes, in words. */
static const char *refuses(enum ok_math_op op, enum npu_dtype dt)
{
	switch (op) {
	case OKM_BITSHIFT:
		return is_unsigned(dt) ? NULL : "unsigned integers";
	case OKM_BITWISE_AND:
	case OKM_BITWISE_OR:
	case OKM_BITWISE_XOR:
		return is_int(dt) ? NULL : "integers";
	case OKM_AND:
	case OKM_OR:
	case OKM_XOR:
		return dt == NPU_DTYPE_BOOL ? NULL : "bool";
	case OKM_EQUAL:
		return NULL;
	case OKM_SUM:
	case OKM_MEAN:
		return ok_is_float(dt) ? NULL : "float16, bfloat16, float32 or float64";
	default:
		return dt != NPU_DTYPE_BOOL ? NULL : "numbers (not bool)";
	}
}

int ok_math_binary_infer(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs, struct npu_kernel_tensor *const *out,
			 char *err, size_t err_size)
{
	const struct ok_math_state *s = state;
	const char *name = ok_math_op_name(s->op), *want;
	size_t k;
	int ret;

	if (is_variadic(s->op)) {
		if (num_inputs < 1)
			return ok_fail(err, err_size, "%s needs at least one input", name);
	} else if (num_inputs != 2) {
		return ok_fail(err, err_size, "%s takes two inputs, not %zu", name, num_inputs);
	}
	if (num_outputs != 1 || !out[0])
		return ok_fail(err, err_size, "%s has exactly one output, not %zu", name,
			       num_outputs);
	for (k = 0; k < num_inputs; k++) {
		if (!in[k])
			return ok_fail(err, err_size, "%s's input %zu is missing", name, k);
		/* Pow's exponent may be of any numeric type */
		if (k > 0 && in[k]->dtype != in[0]->dtype && s->op != OKM_POW)
			return ok_fail(err, err_size,
				       "%s's input %zu is %s, unlike input 0 (%s)", name, k,
				       ok_dtype_name(in[k]->dtype), ok_dtype_name(in[0]->dtype));
		want = refuses(s->op, in[k]->dtype);
		if (want)
			return ok_fail(err, err_size, "%s takes %s, not %s", name, want,
				       ok_dtype_name(in[k]->dtype));
	}
	if (s->op == OKM_MOD && ok_is_float(in[0]->dtype) && !s->fmod)
		return ok_fail(err, err_size,
			       "Mod of %s needs fmod=1 (fmod=0 is for integers)",
			       ok_dtype_name(in[0]->dtype));
	ret = ok_broadcast(num_inputs, in, out[0], err, err_size);
	if (ret)
		return ret;
	if (s->op == OKM_PRELU) {
		bool same = out[0]->rank == in[0]->rank &&
			    !memcmp(out[0]->dims, in[0]->dims, in[0]->rank * sizeof(uint32_t));

		if (!same)
			return ok_fail(err, err_size,
				       "PRelu's slope must broadcast to X's shape, not widen it");
	}
	out[0]->dtype = is_compare(s->op) ? NPU_DTYPE_BOOL : in[0]->dtype;
	return 0;
}

/*
 * The loop of a two-operand expression of x (operand a) and y (operand
 * b) over n elements, specialised on which operand repeats so that the
 * common cases vectorise.
 */
#define LOOP2(T, O, EXPR)						\
	do {								\
		const T *a_ = a, *b_ = b;				\
		uint64_t i_;						\
									\
		if (sa && sb) {						\
			for (i_ = 0; i_ < n; i_++) {			\
				T x = a_[i_], y = b_[i_];		\
				O[i_] = (EXPR);				\
			}						\
		} else if (sa) {					\
			T y = b_[0];					\
			for (i_ = 0; i_ < n; i_++) {			\
				T x = a_[i_];				\
				O[i_] = (EXPR);				\
			}						\
		} else if (sb) {					\
			T x = a_[0];					\
			for (i_ = 0; i_ < n; i_++) {			\
				T y = b_[i_];				\
				O[i_] = (EXPR);				\
			}						\
		} else {						\
			T x = a_[0], y = b_[0];				\
			for (i_ = 0; i_ < n; i_++)			\
				O[i_] = (EXPR);				\
		}							\
	} while (0)

#define COMPARE_CASES(T)						\
	case OKM_EQUAL: LOOP2(T, ob, x == y); break;			\
	case OKM_GREATER: LOOP2(T, ob, x > y); break;			\
	case OKM_LESS: LOOP2(T, ob, x < y); break;			\
	case OKM_GREATER_EQUAL: LOOP2(T, ob, x >= y); break;		\
	case OKM_LESS_EQUAL: LOOP2(T, ob, x <= y); break;

/* Floats: NaN propagates through Max and Min as numpy does. */
#define FLOAT_ROW(NAME, T, FN)						\
static void NAME(const struct ok_math_state *s, uint64_t n, void *out,	\
		 const void *a, uint64_t sa, const void *b, uint64_t sb) \
{									\
	T *o = out;							\
	uint8_t *ob = out;						\
									\
	switch (s->op) {						\
	case OKM_ADD: case OKM_SUM: case OKM_MEAN: LOOP2(T, o, x + y); break; \
	case OKM_SUB: LOOP2(T, o, x - y); break;			\
	case OKM_MUL: LOOP2(T, o, x * y); break;			\
	case OKM_DIV: LOOP2(T, o, x / y); break;			\
	case OKM_POW: LOOP2(T, o, FN(pow)(x, y)); break;		\
	case OKM_MOD: LOOP2(T, o, FN(fmod)(x, y)); break;		\
	case OKM_PRELU: LOOP2(T, o, x < 0 ? x * y : x); break;		\
	case OKM_MAX: LOOP2(T, o, x > y || x != x ? x : y); break;	\
	case OKM_MIN: LOOP2(T, o, x < y || x != x ? x : y); break;	\
	COMPARE_CASES(T)						\
	default: break;							\
	}								\
}

#define FN_F32(name)	name##f
#define FN_F64(name)	name
FLOAT_ROW(float_row_f32, float, FN_F32)
FLOAT_ROW(float_row_f64, double, FN_F64)

/*
 * x^e for integers, wrapping (e is a signed exponent's two's complement
 * when @e_negative); a negative e truncates 1/x^|e| toward 0.
 */
static uint64_t int_pow(int64_t x, uint64_t e, bool e_negative)
{
	uint64_t r = 1, b = (uint64_t)x, u;

	if (e_negative)
		return x == 1 ? 1 : x == -1 ? ((e & 1) ? (uint64_t)-1 : 1) : 0;
	for (u = e; u; u >>= 1) {
		if (u & 1)
			r *= b;
		b *= b;
	}
	return r;
}

/*
 * Integers: the arithmetic goes through uint64_t so that it wraps without
 * signed overflow; NEG(x) is x < 0 for signed types and false otherwise.
 * Division and Mod check each divisor.
 */
#define NEG_S(x)	((x) < 0)
#define NEG_U(x)	((void)(x), false)

#define INT_ROW(NAME, T, NEG, DT)						\
static int NAME(const struct ok_math_state *s, struct npu_kernel_call *call, \
		uint64_t n, void *out, const void *a, uint64_t sa,	\
		const void *b, uint64_t sb)				\
{									\
	const unsigned bits = sizeof(T) * 8;				\
	T *o = out;							\
	uint8_t *ob = out;						\
	uint64_t i;							\
									\
	switch (s->op) {						\
	case OKM_ADD: LOOP2(T, o, (T)((uint64_t)x + (uint64_t)y)); break; \
	case OKM_SUB: LOOP2(T, o, (T)((uint64_t)x - (uint64_t)y)); break; \
	case OKM_MUL: LOOP2(T, o, (T)((uint64_t)x * (uint64_t)y)); break; \
	case OKM_PRELU:							\
		LOOP2(T, o, NEG(x) ? (T)((uint64_t)x * (uint64_t)y) : x); \
		break;							\
	case OKM_MAX: LOOP2(T, o, x > y ? x : y); break;		\
	case OKM_MIN: LOOP2(T, o, x < y ? x : y); break;		\
	case OKM_POW: LOOP2(T, o, (T)int_pow((int64_t)x, (uint64_t)y, NEG(y))); break; \
	case OKM_BITWISE_AND: LOOP2(T, o, x & y); break;		\
	case OKM_BITWISE_OR: LOOP2(T, o, x | y); break;			\
	case OKM_BITWISE_XOR: LOOP2(T, o, x ^ y); break;		\
	case OKM_BITSHIFT:						\
		if (s->shift_right)					\
			LOOP2(T, o, (uint64_t)y >= bits ? 0 : (T)((uint64_t)x >> y)); \
		else							\
			LOOP2(T, o, (uint64_t)y >= bits ? 0 : (T)((uint64_t)x << y)); \
		break;							\
	COMPARE_CASES(T)						\
	case OKM_DIV:							\
	case OKM_MOD:							\
		for (i = 0; i < n; i++) {				\
			T x = ((const T *)a)[i * sa], y = ((const T *)b)[i * sb]; \
			T q;						\
									\
			if (y == 0)					\
				return npu_kernel_fail(call, -EDOM,	\
					"%s: integer division by zero",	\
					ok_math_op_name(s->op));	\
			if (NEG(y) && y == (T)-1) {			\
				if (s->op == OKM_MOD) {			\
					o[i] = 0;			\
					continue;			\
				}					\
				/* only the minimum negates to itself */ \
				if (NEG(x) && (T)(0 - (uint64_t)x) == x) \
					return npu_kernel_fail(call, -ERANGE, \
						"Div: %" PRId64 " / -1 overflows %s", \
						(int64_t)x, ok_dtype_name(DT)); \
				o[i] = (T)(0 - (uint64_t)x);		\
				continue;				\
			}						\
			if (s->op == OKM_DIV) {				\
				o[i] = x / y;				\
				continue;				\
			}						\
			q = x % y;					\
			/* fmod=0: the remainder takes the divisor's sign */ \
			if (!s->fmod && q != 0 && NEG(q) != NEG(y))	\
				q = (T)((uint64_t)q + (uint64_t)y);	\
			o[i] = q;					\
		}							\
		break;							\
	default:							\
		break;							\
	}								\
	return 0;							\
}

INT_ROW(int_row_i8, int8_t, NEG_S, NPU_DTYPE_INT8)
INT_ROW(int_row_i16, int16_t, NEG_S, NPU_DTYPE_INT16)
INT_ROW(int_row_i32, int32_t, NEG_S, NPU_DTYPE_INT32)
INT_ROW(int_row_i64, int64_t, NEG_S, NPU_DTYPE_INT64)
INT_ROW(int_row_u8, uint8_t, NEG_U, NPU_DTYPE_UINT8)
INT_ROW(int_row_u16, uint16_t, NEG_U, NPU_DTYPE_UINT16)
INT_ROW(int_row_u32, uint32_t, NEG_U, NPU_DTYPE_UINT32)
INT_ROW(int_row_u64, uint64_t, NEG_U, NPU_DTYPE_UINT64)

static void bool_row(const struct ok_math_state *s, uint64_t n, void *out,
		     const void *a, uint64_t sa, const void *b, uint64_t sb)
{
	uint8_t *o = out;

	switch (s->op) {
	case OKM_AND: LOOP2(uint8_t, o, x & y); break;
	case OKM_OR: LOOP2(uint8_t, o, x | y); break;
	case OKM_XOR: LOOP2(uint8_t, o, x ^ y); break;
	case OKM_EQUAL: LOOP2(uint8_t, o, x == y); break;
	default: break;
	}
}

static void half_load(enum npu_dtype dt, float *f, const uint16_t *h, uint64_t step,
		      uint64_t n)
{
	uint64_t i;

	if (!step)
		n = 1;
	for (i = 0; i < n; i++)
		f[i] = dt == NPU_DTYPE_FP16 ? ok_fp16_to_f32(h[i * step]) :
					      ok_bf16_to_f32(h[i * step]);
}

/* float16 and bfloat16 through the float32 loop, a block at a time */
static void half_row(const struct ok_math_state *s, enum npu_dtype dt, uint64_t n,
		     void *out, const uint16_t *a, uint64_t sa, const uint16_t *b,
		     uint64_t sb)
{
	float x[BLOCK], y[BLOCK], r[BLOCK];
	uint64_t done, m, i;

	for (done = 0; done < n; done += m) {
		m = n - done < BLOCK ? n - done : BLOCK;
		half_load(dt, x, a + done * sa, sa, m);
		half_load(dt, y, b + done * sb, sb, m);
		if (is_compare(s->op)) {
			float_row_f32(s, m, (uint8_t *)out + done, x, sa, y, sb);
			continue;
		}
		float_row_f32(s, m, r, x, sa, y, sb);
		for (i = 0; i < m; i++)
			((uint16_t *)out)[done + i] = dt == NPU_DTYPE_FP16 ?
				ok_f32_to_fp16(r[i]) : ok_f32_to_bf16(r[i]);
	}
}

/* Pow of a base and an exponent of different types, element by element. */
static void pow_mixed_row(uint64_t n, void *out, enum npu_dtype odt,
			  const void *a, enum npu_dtype adt, uint64_t sa,
			  const void *b, enum npu_dtype bdt, uint64_t sb)
{
	struct npu_kernel_tensor o = { .dtype = odt, .data = out };
	struct npu_kernel_tensor x = { .dtype = adt, .data = (void *)a };
	struct npu_kernel_tensor e = { .dtype = bdt, .data = (void *)b };
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (!ok_is_float(adt) && !ok_is_float(bdt)) {
			uint64_t u = ok_get_u(&e, i * sb);

			ok_set_i(&o, i, (int64_t)int_pow(ok_get_i(&x, i * sa), u,
							 ok_is_signed(bdt) && (int64_t)u < 0));
		} else {
			ok_set_f(&o, i, pow(ok_get_f(&x, i * sa), ok_get_f(&e, i * sb)));
		}
	}
}

struct binary_ctx {
	const struct ok_math_state *s;
	enum npu_dtype dt, edt;	/* operands, Pow's exponent */
};

static int binary_row(const void *ctx, struct npu_kernel_call *call, uint64_t n,
		      void *out, const void *const *in, const uint64_t *step)
{
	const struct binary_ctx *c = ctx;
	const struct ok_math_state *s = c->s;
	const void *a = in[0], *b = in[1];
	uint64_t sa = step[0], sb = step[1];

	if (s->op == OKM_POW && c->edt != c->dt) {
		pow_mixed_row(n, out, c->dt, a, c->dt, sa, b, c->edt, sb);
		return 0;
	}
	switch (c->dt) {
	case NPU_DTYPE_FP32: float_row_f32(s, n, out, a, sa, b, sb); return 0;
	case NPU_DTYPE_FP64: float_row_f64(s, n, out, a, sa, b, sb); return 0;
	case NPU_DTYPE_FP16:
	case NPU_DTYPE_BF16:
		half_row(s, c->dt, n, out, a, sa, b, sb);
		return 0;
	case NPU_DTYPE_BOOL: bool_row(s, n, out, a, sa, b, sb); return 0;
	case NPU_DTYPE_INT8: return int_row_i8(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_INT16: return int_row_i16(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_INT32: return int_row_i32(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_INT64: return int_row_i64(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_UINT8: return int_row_u8(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_UINT16: return int_row_u16(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_UINT32: return int_row_u32(s, call, n, out, a, sa, b, sb);
	case NPU_DTYPE_UINT64: return int_row_u64(s, call, n, out, a, sa, b, sb);
	}
	return 0;
}

static int copy_row(const void *ctx, struct npu_kernel_call *call, uint64_t n,
		    void *out, const void *const *in, const uint64_t *step)
{
	size_t size = *(const size_t *)ctx;
	uint64_t i;

	(void)call;
	if (step[0]) {
		memcpy(out, in[0], n * size);
		return 0;
	}
	for (i = 0; i < n; i++)
		memcpy((char *)out + i * size, in[0], size);
	return 0;
}

/* Mean's last step: the sum divided by the count, in the output's type. */
static int divide_by(struct npu_kernel_tensor *o, double count,
		     struct npu_kernel_call *call)
{
	uint64_t i, n = o->elems;
	int ret;

	for (i = 0; i < n; i++) {
		if (o->dtype == NPU_DTYPE_FP32)
			((float *)o->data)[i] /= (float)count;
		else if (o->dtype == NPU_DTYPE_FP64)
			((double *)o->data)[i] /= count;
		else
			ok_set_f(o, i, (double)(float)(ok_get_f(o, i) / count));
		if ((i + 1) % OK_POLL_EVERY == 0) {
			ret = npu_kernel_poll(call, OK_POLL_EVERY);
			if (ret)
				return ret;
		}
	}
	return npu_kernel_poll(call, n % OK_POLL_EVERY);
}

int ok_math_binary_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call)
{
	const struct ok_math_state *s = state;
	struct binary_ctx c = { .s = s, .dt = in[0]->dtype };
	const struct npu_kernel_tensor *ops[2];
	struct ok_walk w;
	size_t k;
	int ret;

	(void)num_outputs;
	if (num_inputs == 1) {
		size_t size = npu_dtype_size(in[0]->dtype);

		ok_walk_init(&w, out[0], 1, in);
		return ok_walk_run(&w, out[0], in, copy_row, &size, call);
	}
	c.edt = in[1]->dtype;
	ok_walk_init(&w, out[0], 2, in);
	ret = ok_walk_run(&w, out[0], in, binary_row, &c, call);
	/* the rest of a variadic op folds into the output */
	for (k = 2; !ret && k < num_inputs; k++) {
		ops[0] = out[0];
		ops[1] = in[k];
		ok_walk_init(&w, out[0], 2, ops);
		ret = ok_walk_run(&w, out[0], ops, binary_row, &c, call);
	}
	if (!ret && s->op == OKM_MEAN)
		ret = divide_by(out[0], (double)num_inputs, call);
	return ret;
}
