/* SPDX-License-Identifier: MIT */
/*
 * What the ONNX CPU kernels (libnpu/onnx/kernels/ok_*.c) share: element
 * access of any dtype, numpy broadcasting, axes, reading shape-like
 * static inputs, and the tables each family exports to the registry.
 *
 * The kernels are the ONNX ops libnpu has no device op for, plus the CPU
 * form of ops that have one for the dtypes and attributes the device
 * does not take.  Each is written against npu/kernel.h exactly as an
 * application's custom op is, and each is the one definition of its op's
 * semantics: the importer folds constants with it, the graph runtime
 * runs it, the tests compare it with ONNX's expected outputs.
 */
#ifndef NPU_ONNX_OK_UTIL_H
#define NPU_ONNX_OK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "npu/kernel.h"
#include "npu/onnx.h"

/* Element counts between npu_kernel_poll() calls. */
#define OK_POLL_EVERY	8192u

/* ---- Families: NULL-terminated tables of built-in ops ------------------- */

/* Elementwise math, comparison, logic, Where, activations, Cast, Clip. */
extern const struct npu_onnx_op *const ok_ops_math[];
/* Indexing and data movement: Gather*, Scatter*, Trilu, CumSum, Range, ... */
extern const struct npu_onnx_op *const ok_ops_index[];
/* Reductions, arg/top-k, softmax forms, normalizations, losses. */
extern const struct npu_onnx_op *const ok_ops_reduce[];
/* Convolutions and pooling of any rank, MatMul/Gemm forms, Einsum, Resize, GridSample. */
extern const struct npu_onnx_op *const ok_ops_nn[];
/* RNN/GRU/LSTM, DFT/STFT and windows, NonMaxSuppression, TfIdfVectorizer. */
extern const struct npu_onnx_op *const ok_ops_seq[];
/* Quantization: QuantizeLinear, DequantizeLinear, QLinear*, *Integer. */
extern const struct npu_onnx_op *const ok_ops_quant[];
/* Ops of no family (Dropout with its mask). */
extern const struct npu_onnx_op *const ok_ops_misc[];

/* ---- dtypes ------------------------------------------------------------------ */

bool ok_is_float(enum npu_dtype dt);	/* FP16, BF16, FP32, FP64 */
bool ok_is_signed(enum npu_dtype dt);	/* float types and INT8..INT64 */
/* "float32", "int64", "bool", ...: ONNX's names in words; "?" if unknown. */
const char *ok_dtype_name(enum npu_dtype dt);

/* Element @i as a double (integers above 2^53 lose low bits). */
double ok_get_f(const struct npu_kernel_tensor *t, uint64_t i);
/* Element @i as an int64 (floats truncate toward zero, saturating). */
int64_t ok_get_i(const struct npu_kernel_tensor *t, uint64_t i);
/*
 * Store @v as element @i: float types round to nearest even; integer
 * types take the value truncated toward zero and wrapped modulo 2^bits
 * (NaN and infinities as 0); BOOL stores v != 0.
 */
void ok_set_f(struct npu_kernel_tensor *t, uint64_t i, double v);
/* Store @v, wrapped modulo 2^bits; float types convert; BOOL stores v != 0. */
void ok_set_i(struct npu_kernel_tensor *t, uint64_t i, int64_t v);
/* For UINT64 beyond INT64_MAX. */
uint64_t ok_get_u(const struct npu_kernel_tensor *t, uint64_t i);

/*
 * float16 and bfloat16 <-> float32, round to nearest even; inline, as
 * every 16-bit element a kernel touches goes through them.
 */
static inline float ok_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
	float f;

	if (exp == 0x1f) {
		u = sign | 0x7f800000u | (man << 13);
	} else if (exp) {
		u = sign | ((exp + 112) << 23) | (man << 13);
	} else {
		/* subnormal: man * 2^-24, exact in binary32 */
		f = (float)man * 5.9604644775390625e-8f;
		return sign ? -f : f;
	}
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t ok_f32_to_fp16(float f)
{
	uint32_t u, sign, man;
	int exp;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)(sign | 0x7e00);
	exp = (int)((u >> 23) & 0xff) - 127;
	man = u & 0x7fffff;
	if (exp > 15)
		return (uint16_t)(sign | 0x7c00);
	if (exp >= -14) {
		uint32_t h = ((uint32_t)(exp + 15) << 10) | (man >> 13), rest = man & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;	/* may carry into the exponent: still right */
		return (uint16_t)(sign | h);
	}
	if (exp < -25)
		return (uint16_t)sign;
	{
		/* subnormal: the value in units of 2^-24, ties to even */
		uint32_t m = man | 0x800000, shift = (uint32_t)(-exp - 1), q = m >> shift;
		uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);

		if (rest > half || (rest == half && (q & 1)))
			q++;
		return (uint16_t)(sign | q);
	}
}

static inline float ok_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t ok_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* ---- Shapes ------------------------------------------------------------------- */

/* Set t's rank and dims (and elems); -EINVAL if rank > NPU_TENSOR_MAX_RANK. */
int ok_set_shape(struct npu_kernel_tensor *t, uint32_t rank, const uint32_t *dims);
uint64_t ok_elems(const struct npu_kernel_tensor *t);

/*
 * numpy broadcasting of the present tensors in @in (NULLs skipped) into
 * @out's rank and dims; -EINVAL with a message in @err when they do not
 * broadcast.
 */
int ok_broadcast(size_t n, const struct npu_kernel_tensor *const *in,
		 struct npu_kernel_tensor *out, char *err, size_t err_size);

/*
 * Walking an output in order while following a broadcast input: strides
 * of @t as seen from @out's shape (0 where @t broadcasts).
 */
struct ok_bcast {
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint64_t stride[NPU_TENSOR_MAX_RANK];
};
void ok_bcast_init(struct ok_bcast *b, const struct npu_kernel_tensor *t,
		   const struct npu_kernel_tensor *out);
/* Index into @t of output element @i. */
uint64_t ok_bcast_index(const struct ok_bcast *b, uint64_t i);

/*
 * An axis attribute or input in [-rank, rank) normalised into *@out;
 * -EINVAL with a message naming @what otherwise.
 */
int ok_axis(int64_t axis, uint32_t rank, uint32_t *out, const char *what,
	    char *err, size_t err_size);

/*
 * A static integer input (a shape-like input such as axes, pads, k) as
 * int64s: at most @max, *@n of them.  -EINVAL with a message naming
 * @what when it is not static, not an integer type or too long.
 */
int ok_read_ints(const struct npu_kernel_tensor *t, int64_t *v, size_t max,
		 size_t *n, const char *what, char *err, size_t err_size);

/* Row-major strides of @t's shape, in elements. */
void ok_strides(const struct npu_kernel_tensor *t, uint64_t *stride);

/* ---- Attributes ------------------------------------------------------------------ */

/* npu_onnx_attr_int/float with a default for an absent attribute. */
int64_t ok_attr_i(const struct npu_onnx_node *n, const char *name, int64_t def);
float ok_attr_f(const struct npu_onnx_node *n, const char *name, float def);

/* snprintf into @err (may be NULL) and return -EINVAL. */
__attribute__((format(printf, 3, 4)))
int ok_fail(char *err, size_t err_size, const char *fmt, ...);

/*
 * A per-node state of plain old data, zeroed, @size bytes, and a release
 * that frees it: most kernels' state is a small struct of attributes.
 */
void *ok_state_alloc(size_t size);
void ok_state_free(void *state);

/* ---- Polling --------------------------------------------------------------------- */

/*
 * Count @n units of work; poll when OK_POLL_EVERY have accumulated, so a
 * long run polls about as often whatever its loops' shapes.
 */
static inline int ok_tick(struct npu_kernel_call *call, uint64_t *pending, uint64_t n)
{
	*pending += n;
	if (*pending >= OK_POLL_EVERY) {
		int r = npu_kernel_poll(call, *pending);

		*pending = 0;
		return r;
	}
	return 0;
}

#endif /* NPU_ONNX_OK_UTIL_H */
