// SPDX-License-Identifier: MIT
/*
 * Ops that make or mask values by their position: Trilu, CumSum, Range,
 * OneHot, EyeLike, and the shape queries Shape and Size.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ok_index.h"

/* A scalar (or one-element) integer input at run time. */
static int scalar_int(const struct npu_kernel_tensor *t, const char *what, int64_t *v,
		      char *err, size_t err_size)
{
	if (t->elems != 1 || t->rank > 1)
		return ok_fail(err, err_size, "%s must be a scalar, not of %llu values", what,
			       (unsigned long long)t->elems);
	if (ok_is_float(t->dtype))
		return ok_fail(err, err_size, "%s must be an integer, not %s", what,
			       ok_dtype_name(t->dtype));
	if (t->data)
		*v = ok_get_i(t, 0);
	return 0;
}

/* ---- Trilu ---------------------------------------------------------------------- */

static int trilu_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	int64_t k = 0;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	(void)state;
	if (in[0]->rank < 2)
		return ok_fail(err, err_size, "the input must have a rank of at least 2, not %u",
			       in[0]->rank);
	if (ni > 1 && in[1]) {
		e = scalar_int(in[1], "k", &k, err, err_size);
		if (e)
			return e;
	}
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape(out[0], in[0]->rank, in[0]->dims);
}

static int trilu_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	const struct ok_trilu_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], mats, m, i,
		pending = 0;
	const char *src = x->data;
	char *dst = out[0]->data;
	int64_t k = 0;
	int e;

	(void)no;
	if (ni > 1 && in[1])
		k = ok_get_i(in[1], 0);
	/* Beyond these, every row keeps all or nothing. */
	if (k > (int64_t)cols)
		k = (int64_t)cols;
	if (k < -(int64_t)rows)
		k = -(int64_t)rows;
	mats = x->elems / (rows * cols);
	for (m = 0; m < mats; m++)
		for (i = 0; i < rows; i++) {
			int64_t edge = (int64_t)i + k;	/* the diagonal's column in row i */
			uint64_t split;

			if (st->upper) {
				/* keep columns j >= i + k */
				split = edge < 0 ? 0 : edge > (int64_t)cols ? cols : (uint64_t)edge;
				memset(dst, 0, split * esz);
				memcpy(dst + split * esz, src + split * esz, (cols - split) * esz);
			} else {
				/* keep columns j <= i + k */
				split = edge + 1 < 0 ? 0 : edge + 1 > (int64_t)cols ? cols
						 : (uint64_t)(edge + 1);
				memcpy(dst, src, split * esz);
				memset(dst + split * esz, 0, (cols - split) * esz);
			}
			src += cols * esz;
			dst += cols * esz;
			e = ok_tick(call, &pending, cols);
			if (e)
				return e;
		}
	return 0;
}

static int trilu_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			size_t err_size)
{
	struct ok_trilu_state *st;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->upper = ok_attr_i(n, "upper", 1) != 0;
	*state = st;
	return 0;
}

static const struct npu_kernel trilu_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Trilu",
	.infer = trilu_infer,
	.run = trilu_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_trilu = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Trilu",
	.since_version = 14,
	.kernel = &trilu_kernel,
	.create = trilu_create,
};

/* ---- CumSum ------------------------------------------------------------------------- */

typedef void (*add_fn)(void *dst, const void *a, const void *b);

#define ADD_INT(N, T)								\
	static void add_##N(void *dst, const void *a, const void *b)		\
	{									\
		T x, y;								\
		memcpy(&x, a, sizeof(x));					\
		memcpy(&y, b, sizeof(y));					\
		x = (T)((uint64_t)x + (uint64_t)y);				\
		memcpy(dst, &x, sizeof(x));					\
	}
#define ADD_FLOAT(N, T)								\
	static void add_##N(void *dst, const void *a, const void *b)		\
	{									\
		T x, y;								\
		memcpy(&x, a, sizeof(x));					\
		memcpy(&y, b, sizeof(y));					\
		x += y;								\
		memcpy(dst, &x, sizeof(x));					\
	}
#define ADD_HALF(N, TO, FROM)							\
	static void add_##N(void *dst, const void *a, const void *b)		\
	{									\
		uint16_t x, y;							\
		memcpy(&x, a, 2);						\
		memcpy(&y, b, 2);						\
		x = FROM(TO(x) + TO(y));					\
		memcpy(dst, &x, 2);						\
	}

ADD_INT(i32, int32_t)
ADD_INT(u32, uint32_t)
ADD_INT(i64, int64_t)
ADD_INT(u64, uint64_t)
ADD_FLOAT(f32, float)
ADD_FLOAT(f64, double)
ADD_HALF(f16, ok_fp16_to_f32, ok_f32_to_fp16)
ADD_HALF(bf16, ok_bf16_to_f32, ok_f32_to_bf16)

static add_fn cumsum_adder(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DTYPE_INT32: return add_i32;
	case NPU_DTYPE_UINT32: return add_u32;
	case NPU_DTYPE_INT64: return add_i64;
	case NPU_DTYPE_UINT64: return add_u64;
	case NPU_DTYPE_FP32: return add_f32;
	case NPU_DTYPE_FP64: return add_f64;
	case NPU_DTYPE_FP16: return add_f16;
	case NPU_DTYPE_BF16: return add_bf16;
	default: return NULL;
	}
}

static int cumsum_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	int64_t a = 0;
	uint32_t axis;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	(void)state;
	if (!cumsum_adder(in[0]->dtype))
		return ok_fail(err, err_size,
			       "CumSum takes int32, int64, uint32, uint64 and float types, not %s",
			       ok_dtype_name(in[0]->dtype));
	if (!in[0]->rank)
		return ok_fail(err, err_size, "the input must have a rank of at least 1");
	if (ni < 2 || !in[1])
		return ok_fail(err, err_size, "the axis input is required");
	e = scalar_int(in[1], "axis", &a, err, err_size);
	if (!e && in[1]->data)
		e = ok_axis(a, in[0]->rank, &axis, "axis", err, err_size);
	if (e)
		return e;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape(out[0], in[0]->rank, in[0]->dims);
}

static int cumsum_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_cumsum_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	add_fn add = cumsum_adder(x->dtype);
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t outer = 1, inner = 1, n, o, a, j, pending = 0;
	uint32_t axis, d;
	char err[96];
	int e;

	(void)ni;
	(void)no;
	if (ok_axis(ok_get_i(in[1], 0), x->rank, &axis, "axis", err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	for (d = 0; d < axis; d++)
		outer *= x->dims[d];
	for (d = axis + 1; d < x->rank; d++)
		inner *= x->dims[d];
	n = x->dims[axis];
	for (o = 0; o < outer; o++) {
		const char *src = (const char *)x->data + o * n * inner * esz;
		char *dst = (char *)out[0]->data + o * n * inner * esz;

		for (a = 0; a < n; a++) {
			/* Walk the axis forwards or backwards; prev is the step before. */
			uint64_t cur = st->reverse ? n - 1 - a : a, prev = st->reverse ? cur + 1 : cur - 1;
			char *row = dst + cur * inner * esz;

			if (!a) {
				if (st->exclusive)
					memset(row, 0, inner * esz);
				else
					memcpy(row, src + cur * inner * esz, inner * esz);
				continue;
			}
			for (j = 0; j < inner; j++)
				add(row + j * esz, dst + (prev * inner + j) * esz,
				    src + ((st->exclusive ? prev : cur) * inner + j) * esz);
			e = ok_tick(call, &pending, inner);
			if (e)
				return e;
		}
	}
	return 0;
}

static int cumsum_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			 size_t err_size)
{
	struct ok_cumsum_state *st;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->exclusive = ok_attr_i(n, "exclusive", 0) != 0;
	st->reverse = ok_attr_i(n, "reverse", 0) != 0;
	*state = st;
	return 0;
}

static const struct npu_kernel cumsum_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "CumSum",
	.infer = cumsum_infer,
	.run = cumsum_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_cumsum = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "CumSum",
	.since_version = 11,
	.kernel = &cumsum_kernel,
	.create = cumsum_create,
};

/* ---- Range ----------------------------------------------------------------------- */

static int range_count(const struct npu_kernel_tensor *const *in, uint64_t *count, char *err,
		       size_t err_size)
{
	static const char *const names[] = { "start", "limit", "delta" };
	enum npu_dtype dt = in[0]->dtype;
	int k;

	if (dt != NPU_DTYPE_FP32 && dt != NPU_DTYPE_FP64 && dt != NPU_DTYPE_INT16 &&
	    dt != NPU_DTYPE_INT32 && dt != NPU_DTYPE_INT64)
		return ok_fail(err, err_size,
			       "Range takes float32, float64, int16, int32 and int64, not %s",
			       ok_dtype_name(dt));
	for (k = 0; k < 3; k++) {
		if (in[k]->dtype != dt)
			return ok_fail(err, err_size, "%s is %s, start is %s", names[k],
				       ok_dtype_name(in[k]->dtype), ok_dtype_name(dt));
		if (in[k]->elems != 1 || in[k]->rank > 1)
			return ok_fail(err, err_size, "%s must be a scalar", names[k]);
		if (!in[k]->data)
			return ok_fail(err, err_size,
				       "%s must be a constant: the output's length depends on its value",
				       names[k]);
	}
	if (ok_is_float(dt)) {
		double start = ok_get_f(in[0], 0), limit = ok_get_f(in[1], 0),
		       delta = ok_get_f(in[2], 0), n;

		if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
			return ok_fail(err, err_size, "start, limit and delta must be finite and delta not 0");
		n = ceil((limit - start) / delta);
		if (!(n <= UINT32_MAX))
			return ok_fail(err, err_size, "the output would have %g elements, above %u",
				       n, UINT32_MAX);
		*count = n > 0 ? (uint64_t)n : 0;
	} else {
		int64_t start = ok_get_i(in[0], 0), limit = ok_get_i(in[1], 0),
			delta = ok_get_i(in[2], 0);

		if (!delta)
			return ok_fail(err, err_size, "delta is 0");
		if (delta > 0)
			*count = limit > start ? ((uint64_t)limit - (uint64_t)start - 1) /
						 (uint64_t)delta + 1 : 0;
		else
			*count = start > limit ? ((uint64_t)start - (uint64_t)limit - 1) /
						 ((uint64_t)0 - (uint64_t)delta) + 1 : 0;
	}
	return 0;
}

static int range_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	uint64_t n;
	int e;

	OK_NEED_IO(ni, in, 3, no, out, true);
	(void)state;
	if (ni != 3 || !in[0] || !in[1] || !in[2])
		return ok_fail(err, err_size, "Range takes start, limit and delta");
	e = range_count(in, &n, err, err_size);
	if (e)
		return e;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape64(out[0], 1, &n, "the output", err, err_size);
}

static int range_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	uint64_t n = out[0]->elems, i, pending = 0;
	int e;

	(void)state;
	(void)ni;
	(void)no;
	/* onnxruntime accumulates in the element type: so do we. */
#define RANGE(T)								\
	do {									\
		T v = *(const T *)in[0]->data, d = *(const T *)in[2]->data;	\
		T *o = out[0]->data;						\
		for (i = 0; i < n; i++) {					\
			o[i] = v;						\
			v = (T)(v + d);						\
			if ((e = ok_tick(call, &pending, 1)))			\
				return e;					\
		}								\
	} while (0)
	switch (out[0]->dtype) {
	case NPU_DTYPE_FP32: RANGE(float); break;
	case NPU_DTYPE_FP64: RANGE(double); break;
	case NPU_DTYPE_INT16: RANGE(int16_t); break;
	case NPU_DTYPE_INT32: RANGE(int32_t); break;
	default: {
		/* int64: start + i * delta stays within [start, limit): no overflow */
		int64_t v = *(const int64_t *)in[0]->data, d = *(const int64_t *)in[2]->data;
		int64_t *o = out[0]->data;

		for (i = 0; i < n; i++) {
			o[i] = (int64_t)((uint64_t)v + i * (uint64_t)d);
			if ((e = ok_tick(call, &pending, 1)))
				return e;
		}
		break;
	}
	}
#undef RANGE
	return 0;
}

static const struct npu_kernel range_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Range",
	.infer = range_infer,
	.run = range_run,
};

const struct npu_onnx_op ok_op_range = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Range",
	.since_version = 11,
	.kernel = &range_kernel,
};

/* ---- OneHot ------------------------------------------------------------------- */

static int onehot_depth(const struct npu_kernel_tensor *t, uint64_t *depth, char *err,
			size_t err_size)
{
	double d;

	if (t->elems != 1 || t->rank > 1)
		return ok_fail(err, err_size, "depth must be one value, not %llu",
			       (unsigned long long)t->elems);
	if (!t->data)
		return ok_fail(err, err_size,
			       "depth must be a constant: the output's shape depends on its value");
	d = ok_is_float(t->dtype) ? trunc(ok_get_f(t, 0)) : (double)ok_get_i(t, 0);
	if (!(d >= 1 && d <= UINT32_MAX))
		return ok_fail(err, err_size, "depth %g is not within [1, %u]", d, UINT32_MAX);
	*depth = (uint64_t)d;
	return 0;
}

static int onehot_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	const struct ok_onehot_state *st = state;
	const struct npu_kernel_tensor *idx;
	uint64_t depth, dims[NPU_TENSOR_MAX_RANK + 1];
	uint32_t axis, d, r = 0;
	int e;

	OK_NEED_IO(ni, in, 3, no, out, true);
	idx = in[0];
	e = onehot_depth(in[1], &depth, err, err_size);
	if (e)
		return e;
	if (in[2]->elems != 2 || in[2]->rank != 1)
		return ok_fail(err, err_size, "values must be 1-D of 2 elements (off, on)");
	if (idx->rank + 1 > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "the output would have rank %u, above the limit of %d",
			       idx->rank + 1, NPU_TENSOR_MAX_RANK);
	e = ok_axis(st->axis, idx->rank + 1, &axis, "axis", err, err_size);
	if (e)
		return e;
	for (d = 0; d <= idx->rank; d++)
		dims[r++] = d == axis ? depth : idx->dims[d < axis ? d : d - 1];
	out[0]->dtype = in[2]->dtype;
	return ok_set_shape64(out[0], r, dims, "the output", err, err_size);
}

static int onehot_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_onehot_state *st = state;
	const struct npu_kernel_tensor *idx = in[0];
	size_t esz = npu_dtype_size(out[0]->dtype);
	const char *off = in[2]->data, *on = off + esz;
	uint64_t depth, inner = 1, i, pending = 0;
	char *dst = out[0]->data;
	uint32_t axis, d;
	int e;

	(void)ni;
	(void)no;
	if (onehot_depth(in[1], &depth, NULL, 0) ||
	    ok_axis(st->axis, idx->rank + 1, &axis, "axis", NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "depth or axis does not match the output");
	for (d = axis; d < idx->rank; d++)
		inner *= idx->dims[d];
	for (i = 0; i < out[0]->elems; i++) {
		memcpy(dst + i * esz, off, esz);
		e = ok_tick(call, &pending, 1);
		if (e)
			return e;
	}
	for (i = 0; i < idx->elems; i++) {
		uint64_t o = i / inner, j = i % inner;
		int64_t v;

		if (ok_is_float(idx->dtype)) {
			double f = trunc(ok_get_f(idx, i));

			v = f >= -(double)depth && f < (double)depth ? (int64_t)f : INT64_MAX;
		} else {
			v = ok_get_i(idx, i);
		}
		if (v < 0 && v >= -(int64_t)depth)
			v += (int64_t)depth;
		/* Out-of-range indices leave their row all off, as onnxruntime does. */
		if (v >= 0 && v < (int64_t)depth)
			memcpy(dst + ((o * depth + (uint64_t)v) * inner + j) * esz, on, esz);
		e = ok_tick(call, &pending, 1);
		if (e)
			return e;
	}
	return 0;
}

static int onehot_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			 size_t err_size)
{
	struct ok_onehot_state *st;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = ok_attr_i(n, "axis", -1);
	*state = st;
	return 0;
}

static const struct npu_kernel onehot_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "OneHot",
	.infer = onehot_infer,
	.run = onehot_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_onehot = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "OneHot",
	.since_version = 9,
	.kernel = &onehot_kernel,
	.create = onehot_create,
};

/* ---- EyeLike ------------------------------------------------------------------ */

static int eyelike_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			 size_t no, struct npu_kernel_tensor *const *out, char *err,
			 size_t err_size)
{
	const struct ok_eyelike_state *st = state;

	OK_NEED_IO(ni, in, 1, no, out, true);
	if (in[0]->rank != 2)
		return ok_fail(err, err_size, "the input must be 2-D, not of rank %u", in[0]->rank);
	out[0]->dtype = st->has_dtype ? st->dtype : in[0]->dtype;
	return ok_set_shape(out[0], 2, in[0]->dims);
}

static int eyelike_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call)
{
	const struct ok_eyelike_state *st = state;
	uint64_t rows = out[0]->dims[0], cols = out[0]->dims[1], i;
	int64_t k = st->k;

	(void)ni;
	(void)no;
	(void)in;
	memset(out[0]->data, 0, out[0]->elems * npu_dtype_size(out[0]->dtype));
	if (k >= (int64_t)cols || k <= -(int64_t)rows)
		return npu_kernel_poll(call, out[0]->elems);
	for (i = k < 0 ? (uint64_t)-k : 0; i < rows && (int64_t)i + k < (int64_t)cols; i++)
		ok_set_i(out[0], i * cols + (uint64_t)((int64_t)i + k), 1);
	return npu_kernel_poll(call, out[0]->elems);
}

static int eyelike_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			  size_t err_size)
{
	struct ok_eyelike_state *st;
	int64_t dt;
	int mapped = 0;

	(void)opaque;
	if (!npu_onnx_attr_int(n, "dtype", &dt)) {
		mapped = ok_onnx_dtype(dt);
		if (mapped < 0)
			return ok_fail(err, err_size, "dtype %lld is not a supported tensor type",
				       (long long)dt);
	}
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->k = ok_attr_i(n, "k", 0);
	st->has_dtype = mapped > 0;
	st->dtype = (enum npu_dtype)mapped;
	*state = st;
	return 0;
}

static const struct npu_kernel eyelike_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "EyeLike",
	.infer = eyelike_infer,
	.run = eyelike_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_eyelike = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "EyeLike",
	.since_version = 9,
	.kernel = &eyelike_kernel,
	.create = eyelike_create,
};

/* ---- Shape and Size ---------------------------------------------------------------- */

static void shape_range(const struct ok_shape_state *st, uint32_t rank, int64_t *first,
			int64_t *last)
{
	int64_t r = rank, s = st->start, e = st->has_end ? st->end : r;

	if (s < 0)
		s += r;
	if (e < 0)
		e += r;
	*first = s < 0 ? 0 : s > r ? r : s;
	*last = e < 0 ? 0 : e > r ? r : e;
}

static int shape_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	int64_t first, last;
	uint64_t n;

	OK_NEED_IO(ni, in, 1, no, out, true);
	shape_range(state, in[0]->rank, &first, &last);
	n = last > first ? (uint64_t)(last - first) : 0;
	out[0]->dtype = NPU_DTYPE_INT64;
	return ok_set_shape64(out[0], 1, &n, "the output", err, err_size);
}

static int shape_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	int64_t first, last, d, *o = out[0]->data;

	(void)ni;
	(void)no;
	(void)call;
	shape_range(state, in[0]->rank, &first, &last);
	for (d = first; d < last; d++)
		*o++ = in[0]->dims[d];
	return 0;
}

static int shape_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			size_t err_size)
{
	struct ok_shape_state *st;
	int64_t end;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->start = ok_attr_i(n, "start", 0);
	st->has_end = !npu_onnx_attr_int(n, "end", &end);
	st->end = st->has_end ? end : 0;
	*state = st;
	return 0;
}

/* The input's values are never read: its work is the output's. */
static uint64_t shape_work(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			   size_t no, const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)ni;
	(void)in;
	(void)no;
	return out[0]->elems;
}

static const struct npu_kernel shape_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Shape",
	.infer = shape_infer,
	.work = shape_work,
	.run = shape_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_shape = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Shape",
	.since_version = 1,
	.kernel = &shape_kernel,
	.create = shape_create,
};

static int size_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out, char *err,
		      size_t err_size)
{
	OK_NEED_IO(ni, in, 1, no, out, true);

	(void)state;
	(void)in;
	(void)err;
	(void)err_size;
	out[0]->dtype = NPU_DTYPE_INT64;
	return ok_set_shape(out[0], 0, NULL);
}

static int size_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		    size_t no, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	(void)state;
	(void)ni;
	(void)no;
	(void)call;
	*(int64_t *)out[0]->data = (int64_t)in[0]->elems;
	return 0;
}

static const struct npu_kernel size_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Size",
	.infer = size_infer,
	.work = shape_work,
	.run = size_run,
};

const struct npu_onnx_op ok_op_size = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Size",
	.since_version = 1,
	.kernel = &size_kernel,
};
