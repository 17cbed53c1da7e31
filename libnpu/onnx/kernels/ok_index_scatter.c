// SPDX-License-Identifier: MIT
/*
 * ScatterElements (and its deprecated name Scatter) and ScatterND for
 * every dtype, with the reductions none, add, mul, max and min.  The
 * output starts as a copy of the data; each update then replaces or
 * combines with its element.  Integer arithmetic wraps, as onnxruntime's
 * does, without signed overflow.
 */
#include <errno.h>
#include <string.h>

#include "ok_index.h"

typedef void (*combine_fn)(void *dst, const void *src);

#define LOAD2(T)				\
	T a, b;					\
	memcpy(&a, dst, sizeof(a));		\
	memcpy(&b, src, sizeof(b))
#define STORE(v)				\
	do {					\
		a = (v);			\
		memcpy(dst, &a, sizeof(a));	\
	} while (0)

#define INT_OPS(N, T)										\
	static void add_##N(void *dst, const void *src) { LOAD2(T); STORE((T)((uint64_t)a + (uint64_t)b)); } \
	static void mul_##N(void *dst, const void *src) { LOAD2(T); STORE((T)((uint64_t)a * (uint64_t)b)); } \
	static void max_##N(void *dst, const void *src) { LOAD2(T); STORE(b > a ? b : a); }	\
	static void min_##N(void *dst, const void *src) { LOAD2(T); STORE(b < a ? b : a); }
#define FLOAT_OPS(N, T)										\
	static void add_##N(void *dst, const void *src) { LOAD2(T); STORE(a + b); }		\
	static void mul_##N(void *dst, const void *src) { LOAD2(T); STORE(a * b); }		\
	static void max_##N(void *dst, const void *src) { LOAD2(T); STORE(b > a ? b : a); }	\
	static void min_##N(void *dst, const void *src) { LOAD2(T); STORE(b < a ? b : a); }
/* Storage-only halves: computed in float, rounded back. */
#define HALF_OPS(N, TO, FROM)									\
	static float get_##N(const void *p) { uint16_t h; memcpy(&h, p, 2); return TO(h); }	\
	static void put_##N(void *p, float f) { uint16_t h = FROM(f); memcpy(p, &h, 2); }	\
	static void add_##N(void *dst, const void *src) { put_##N(dst, get_##N(dst) + get_##N(src)); } \
	static void mul_##N(void *dst, const void *src) { put_##N(dst, get_##N(dst) * get_##N(src)); } \
	static void max_##N(void *dst, const void *src) { float a = get_##N(dst), b = get_##N(src); put_##N(dst, b > a ? b : a); } \
	static void min_##N(void *dst, const void *src) { float a = get_##N(dst), b = get_##N(src); put_##N(dst, b < a ? b : a); }

INT_OPS(i8, int8_t)
INT_OPS(u8, uint8_t)
INT_OPS(i16, int16_t)
INT_OPS(u16, uint16_t)
INT_OPS(i32, int32_t)
INT_OPS(u32, uint32_t)
INT_OPS(i64, int64_t)
INT_OPS(u64, uint64_t)
FLOAT_OPS(f32, float)
FLOAT_OPS(f64, double)
HALF_OPS(f16, ok_fp16_to_f32, ok_f32_to_fp16)
HALF_OPS(bf16, ok_bf16_to_f32, ok_f32_to_bf16)

/* bool: add is or, mul is and, as for max and min. */
static void or_b(void *dst, const void *src)
{
	*(uint8_t *)dst = *(uint8_t *)dst || *(const uint8_t *)src;
}

static void and_b(void *dst, const void *src)
{
	*(uint8_t *)dst = *(uint8_t *)dst && *(const uint8_t *)src;
}

#define OPS(N) { add_##N, mul_##N, max_##N, min_##N }

/* NULL for OK_REDUCE_NONE: a plain copy. */
static combine_fn combiner(enum npu_dtype dt, enum ok_reduction r)
{
	static const combine_fn i8[4] = OPS(i8), u8[4] = OPS(u8), i16[4] = OPS(i16),
		u16[4] = OPS(u16), i32[4] = OPS(i32), u32[4] = OPS(u32), i64[4] = OPS(i64),
		u64[4] = OPS(u64), f32[4] = OPS(f32), f64[4] = OPS(f64), f16[4] = OPS(f16),
		bf16[4] = OPS(bf16), b[4] = { or_b, and_b, or_b, and_b };
	const combine_fn *t = NULL;

	if (r == OK_REDUCE_NONE)
		return NULL;
	switch (dt) {
	case NPU_DTYPE_INT8: t = i8; break;
	case NPU_DTYPE_UINT8: t = u8; break;
	case NPU_DTYPE_INT16: t = i16; break;
	case NPU_DTYPE_UINT16: t = u16; break;
	case NPU_DTYPE_INT32: t = i32; break;
	case NPU_DTYPE_UINT32: t = u32; break;
	case NPU_DTYPE_INT64: t = i64; break;
	case NPU_DTYPE_UINT64: t = u64; break;
	case NPU_DTYPE_FP32: t = f32; break;
	case NPU_DTYPE_FP64: t = f64; break;
	case NPU_DTYPE_FP16: t = f16; break;
	case NPU_DTYPE_BF16: t = bf16; break;
	case NPU_DTYPE_BOOL: t = b; break;
	}
	return t ? t[r - OK_REDUCE_ADD] : NULL;
}

static void apply(char *dst, const char *src, size_t esz, combine_fn f)
{
	if (f)
		f(dst, src);
	else
		memcpy(dst, src, esz);
}

static int check_updates(const struct npu_kernel_tensor *x, const struct npu_kernel_tensor *upd,
			 char *err, size_t err_size)
{
	if (upd->dtype != x->dtype)
		return ok_fail(err, err_size, "updates are %s, the data %s",
			       ok_dtype_name(upd->dtype), ok_dtype_name(x->dtype));
	return 0;
}

/* ---- ScatterElements ------------------------------------------------------------ */

static int scatter_elements_infer(const void *state, size_t ni,
				  const struct npu_kernel_tensor *const *in, size_t no,
				  struct npu_kernel_tensor *const *out, char *err,
				  size_t err_size)
{
	const struct ok_scatter_state *st = state;
	const struct npu_kernel_tensor *x, *idx, *upd;
	uint32_t axis, d;
	int e;

	OK_NEED_IO(ni, in, 3, no, out, true);
	x = in[0];
	idx = in[1];
	upd = in[2];
	if (!x->rank)
		return ok_fail(err, err_size, "the data must have a rank of at least 1");
	e = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
	if (!e)
		e = ok_check_indices(idx, "indices", err, err_size);
	if (!e)
		e = check_updates(x, upd, err, err_size);
	if (e)
		return e;
	if (idx->rank != x->rank || upd->rank != x->rank)
		return ok_fail(err, err_size,
			       "indices (rank %u) and updates (rank %u) must have the data's rank %u",
			       idx->rank, upd->rank, x->rank);
	for (d = 0; d < x->rank; d++)
		if (upd->dims[d] != idx->dims[d])
			return ok_fail(err, err_size,
				       "updates' dimension %u (%u) differs from indices' (%u)", d,
				       upd->dims[d], idx->dims[d]);
	e = ok_check_elements_indices(idx, x, axis, err, err_size);
	if (e)
		return e;
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

static int scatter_elements_run(const void *state, size_t ni,
				const struct npu_kernel_tensor *const *in, size_t no,
				struct npu_kernel_tensor *const *out,
				struct npu_kernel_call *call)
{
	const struct ok_scatter_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *idx = in[1], *upd = in[2];
	size_t esz = npu_dtype_size(x->dtype);
	combine_fn f = combiner(x->dtype, st->reduction);
	uint64_t s[NPU_TENSOR_MAX_RANK], c[NPU_TENSOR_MAX_RANK] = { 0 }, base = 0, i, k, n,
		pending = 0;
	const char *src = upd->data;
	char *dst = out[0]->data;
	uint32_t axis, r = x->rank;
	int e;

	(void)ni;
	(void)no;
	if (ok_axis(st->axis, r, &axis, "axis", NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "axis %lld is out of range",
				       (long long)st->axis);
	memcpy(dst, x->data, x->elems * esz);
	ok_strides(x, s);
	n = x->dims[axis];
	for (i = 0; i < idx->elems; i++, src += esz) {
		e = ok_fetch_index(idx, i, n, &k, call);
		if (e)
			return e;
		apply(dst + (base + k * s[axis]) * esz, src, esz, f);
		ok_elements_step(c, &base, s, idx->dims, r, axis);
		e = ok_tick(call, &pending, 1);
		if (e)
			return e;
	}
	return 0;
}

static int scatter_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			  size_t err_size)
{
	struct ok_scatter_state *st;
	enum ok_reduction red;
	int e;

	(void)opaque;
	e = ok_reduction_attr(n, &red, err, err_size);
	if (e)
		return e;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = ok_attr_i(n, "axis", 0);
	st->reduction = red;
	*state = st;
	return 0;
}

static const struct npu_kernel scatter_elements_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "ScatterElements",
	.infer = scatter_elements_infer,
	.run = scatter_elements_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_scatter_elements = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ScatterElements",
	.since_version = 11,
	.kernel = &scatter_elements_kernel,
	.create = scatter_create,
};

static const struct npu_kernel scatter_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Scatter",
	.infer = scatter_elements_infer,
	.run = scatter_elements_run,
	.release = ok_state_free,
};

/* Scatter-9 is ScatterElements-11 under its first name. */
const struct npu_onnx_op ok_op_scatter = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Scatter",
	.since_version = 9,
	.until_version = 10,
	.kernel = &scatter_kernel,
	.create = scatter_create,
};

/* ---- ScatterND ---------------------------------------------------------------------- */

static int scatter_nd_infer(const void *state, size_t ni,
			    const struct npu_kernel_tensor *const *in, size_t no,
			    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x, *idx, *upd;
	uint32_t k, d, want;
	int e;

	OK_NEED_IO(ni, in, 3, no, out, true);
	x = in[0];
	idx = in[1];
	upd = in[2];
	(void)state;
	e = ok_check_indices(idx, "indices", err, err_size);
	if (!e)
		e = check_updates(x, upd, err, err_size);
	if (e)
		return e;
	if (!x->rank || !idx->rank)
		return ok_fail(err, err_size, "data and indices must have a rank of at least 1");
	k = idx->dims[idx->rank - 1];
	if (k < 1 || k > x->rank)
		return ok_fail(err, err_size,
			       "indices' last dimension (%u) is not within [1, %u] (the data's rank)",
			       k, x->rank);
	want = idx->rank - 1 + x->rank - k;
	if (upd->rank != want)
		return ok_fail(err, err_size, "updates have rank %u, %u was expected", upd->rank,
			       want);
	for (d = 0; d < want; d++) {
		uint32_t w = d + 1 < idx->rank ? idx->dims[d] : x->dims[d - (idx->rank - 1) + k];

		if (upd->dims[d] != w)
			return ok_fail(err, err_size,
				       "updates' dimension %u is %u, %u was expected", d,
				       upd->dims[d], w);
	}
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

static int scatter_nd_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			  size_t no, struct npu_kernel_tensor *const *out,
			  struct npu_kernel_call *call)
{
	const struct ok_scatter_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *idx = in[1], *upd = in[2];
	size_t esz = npu_dtype_size(x->dtype);
	combine_fn f = combiner(x->dtype, st->reduction);
	uint32_t k = idx->dims[idx->rank - 1], j;
	uint64_t s[NPU_TENSOR_MAX_RANK], tuples = idx->elems / k, slice = 1, t, m, pending = 0;
	const char *src = upd->data;
	char *dst = out[0]->data;
	int e;

	(void)ni;
	(void)no;
	memcpy(dst, x->data, x->elems * esz);
	ok_strides(x, s);
	for (j = k; j < x->rank; j++)
		slice *= x->dims[j];
	for (t = 0; t < tuples; t++) {
		uint64_t off = 0;

		for (j = 0; j < k; j++) {
			int64_t v = ok_index_at(idx, t * k + j), n = x->dims[j];

			if (v < -n || v >= n)
				return npu_kernel_fail(call, -EINVAL,
						       "index %lld (at %llu) is out of range [-%lld, %lld) of axis %u",
						       (long long)v,
						       (unsigned long long)(t * k + j),
						       (long long)n, (long long)n, j);
			off += (uint64_t)(v < 0 ? v + n : v) * s[j];
		}
		if (!f) {
			memcpy(dst + off * esz, src, slice * esz);
		} else {
			for (m = 0; m < slice; m++)
				f(dst + (off + m) * esz, src + m * esz);
		}
		src += slice * esz;
		e = ok_tick(call, &pending, slice + k);
		if (e)
			return e;
	}
	return 0;
}

static const struct npu_kernel scatter_nd_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "ScatterND",
	.infer = scatter_nd_infer,
	.run = scatter_nd_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_scatter_nd = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ScatterND",
	.since_version = 11,
	.kernel = &scatter_nd_kernel,
	.create = scatter_create,
};
