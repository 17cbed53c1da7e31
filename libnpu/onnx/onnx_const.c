// SPDX-License-Identifier: MIT
/*
 * Constant tensors of the ONNX importer: decoding TensorProtos, and the
 * integer "shape arithmetic" exporters emit (Shape -> Gather -> Concat ->
 * Reshape), evaluated at import time.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu/onnx.h"
#include "onnx_internal.h"
#include "onnx_wire.h"
#include "onnx.pb-c.h"

#define MAX_ELEMS	(1ull << 31)

__attribute__((format(printf, 3, 4)))
static int cfail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err && size) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

bool ct_is_float(const struct ctensor *c)
{
	return c->f != NULL;
}

double ctensor_get(const struct ctensor *c, uint64_t k)
{
	if (k >= c->n)
		return NAN;
	return c->f ? c->f[k] : (double)c->i[k];
}

void ctensor_free(struct ctensor *c)
{
	free(c->f);
	free(c->i);
	c->f = NULL;
	c->i = NULL;
}

/* Product of @a and @b, false on overflow. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/*
 * Storage for @n elements, paid from @b when not NULL: -E2BIG past
 * MAX_ELEMS, -EDQUOT past the budget, both before allocating.
 */
static int alloc_like(struct ctensor *c, bool fl, uint64_t n, struct cbudget *b)
{
	uint64_t bytes;

	if (b) {
		if (!mul_ok(n, fl ? sizeof(float) : sizeof(int64_t), &bytes))
			bytes = UINT64_MAX;
		if (bytes > b->limit - b->used) {
			b->want = bytes > UINT64_MAX - b->used ? UINT64_MAX : b->used + bytes;
			return -EDQUOT;
		}
	}
	if (n > MAX_ELEMS)
		return -E2BIG;
	if (b)
		b->used += bytes;
	c->n = n;
	c->f = NULL;
	c->i = NULL;
	if (fl)
		c->f = calloc(n ? n : 1, sizeof(float));
	else
		c->i = calloc(n ? n : 1, sizeof(int64_t));
	return (fl ? (void *)c->f : (void *)c->i) ? 0 : -ENOMEM;
}

int ctensor_copy(const struct ctensor *src, struct ctensor *dst, struct cbudget *b)
{
	struct ctensor c = *src;
	int ret = alloc_like(&c, src->f != NULL, src->n, b);

	if (ret)
		return ret;
	if (src->f)
		memcpy(c.f, src->f, src->n * sizeof(float));
	else
		memcpy(c.i, src->i, src->n * sizeof(int64_t));
	*dst = c;
	return 0;
}

int ctensor_scaled(const struct ctensor *src, float k, struct ctensor *dst)
{
	uint64_t j;
	int ret = ctensor_copy(src, dst, NULL);

	if (ret || !dst->f)
		return ret;
	for (j = 0; j < dst->n; j++)
		dst->f[j] *= k;
	return 0;
}

int ctensor_scalar_f(float v, struct ctensor *c)
{
	memset(c, 0, sizeof(*c));
	c->dt = OT_FLOAT;
	if (alloc_like(c, true, 1, NULL))
		return -ENOMEM;
	c->f[0] = v;
	return 0;
}

int ctensor_scalar_i(int64_t v, struct ctensor *c)
{
	memset(c, 0, sizeof(*c));
	c->dt = OT_INT64;
	if (alloc_like(c, false, 1, NULL))
		return -ENOMEM;
	c->i[0] = v;
	return 0;
}

int ctensor_vec_f(const float *v, size_t n, struct ctensor *c)
{
	memset(c, 0, sizeof(*c));
	c->dt = OT_FLOAT;
	c->rank = 1;
	c->dims[0] = (int64_t)n;
	if (alloc_like(c, true, n, NULL))
		return -ENOMEM;
	if (n)
		memcpy(c->f, v, n * sizeof(float));
	return 0;
}

int ctensor_vec_i(const int64_t *v, size_t n, struct ctensor *c)
{
	memset(c, 0, sizeof(*c));
	c->dt = OT_INT64;
	c->rank = 1;
	c->dims[0] = (int64_t)n;
	if (alloc_like(c, false, n, NULL))
		return -ENOMEM;
	if (n)
		memcpy(c->i, v, n * sizeof(int64_t));
	return 0;
}

int ctensor_fill(const struct ctensor *v, const int64_t *dims, uint64_t rank,
		 struct cbudget *b, struct ctensor *out)
{
	uint64_t n = 1, k;
	struct ctensor c = { .dt = v->dt };
	int ret;

	if (rank > CT_MAX_RANK)
		return -EINVAL;
	for (k = 0; k < rank; k++) {
		if (dims[k] < 0)
			return -EINVAL;
		if (!mul_ok(n, (uint64_t)dims[k], &n))
			return -E2BIG;
		c.dims[k] = dims[k];
	}
	c.rank = (uint32_t)rank;
	ret = alloc_like(&c, v->f != NULL, n, b);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		if (c.f)
			c.f[k] = v->f[0];
		else
			c.i[k] = v->i[0];
	}
	*out = c;
	return 0;
}

static float half_to_float(uint16_t h)
{
	uint32_t s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
	float v;

	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 1024), (int)e - 25);
	return s ? -v : v;
}

static size_t raw_size(int dt)
{
	switch (dt) {
	case OT_FLOAT: case OT_INT32: case OT_UINT32: return 4;
	case OT_DOUBLE: case OT_INT64: case OT_UINT64: return 8;
	case OT_FLOAT16: case OT_INT16: case OT_UINT16: case OT_BFLOAT16: return 2;
	case OT_INT8: case OT_UINT8: case OT_BOOL: return 1;
	}
	return 0;
}

static bool dt_float(int dt)
{
	return dt == OT_FLOAT || dt == OT_DOUBLE || dt == OT_FLOAT16 || dt == OT_BFLOAT16;
}

/* Element @k of little-endian raw data of type @dt. */
static void raw_get(const uint8_t *p, int dt, uint64_t k, float *f, int64_t *i)
{
	size_t es = raw_size(dt);
	uint64_t u = 0;
	size_t b;

	for (b = 0; b < es; b++)
		u |= (uint64_t)p[k * es + b] << (8 * b);
	switch (dt) {
	case OT_FLOAT: { uint32_t x = (uint32_t)u; memcpy(f, &x, 4); break; }
	case OT_DOUBLE: { double d; memcpy(&d, &u, 8); *f = (float)d; break; }
	case OT_FLOAT16: *f = half_to_float((uint16_t)u); break;
	case OT_BFLOAT16: { uint32_t x = (uint32_t)u << 16; memcpy(f, &x, 4); break; }
	case OT_INT8: *i = (int8_t)u; break;
	case OT_INT16: *i = (int16_t)u; break;
	case OT_INT32: *i = (int32_t)u; break;
	case OT_INT64: *i = (int64_t)u; break;
	case OT_UINT64: *i = (int64_t)u; break;
	default: *i = (int64_t)u; break;
	}
}

int ctensor_from_proto(const Onnx__TensorProto *tp, struct ctensor *out,
		       char *err, size_t err_size)
{
	struct ctensor c = { 0 };
	uint64_t n = 1, k;
	bool fl;
	int ret;

	if (!tp->has_data_type || !raw_size(tp->data_type))
		return cfail(err, err_size, "data type %d is not supported", tp->data_type);
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return cfail(err, err_size, "external data is not supported");
	if (tp->segment)
		return cfail(err, err_size, "segmented tensors are not supported");
	if (tp->n_dims > CT_MAX_RANK)
		return cfail(err, err_size, "rank %zu is above %d", tp->n_dims, CT_MAX_RANK);
	c.dt = tp->data_type;
	c.rank = (uint32_t)tp->n_dims;
	for (k = 0; k < tp->n_dims; k++) {
		if (tp->dims[k] < 0 || (tp->dims[k] && n > MAX_ELEMS / (uint64_t)tp->dims[k]))
			return cfail(err, err_size, "bad or huge dimension %" PRId64, tp->dims[k]);
		n *= (uint64_t)tp->dims[k];
		c.dims[k] = tp->dims[k];
	}
	fl = dt_float(c.dt);
	/* the data must match the shape exactly: that bounds every allocation */
	if (tp->has_raw_data) {
		if (tp->raw_data.len != n * raw_size(c.dt))
			return cfail(err, err_size, "%zu bytes of raw data for %" PRIu64 " elements",
				     tp->raw_data.len, n);
	} else if (c.dt == OT_FLOAT) {
		if (tp->n_float_data != n)
			goto count;
	} else if (c.dt == OT_DOUBLE) {
		if (tp->n_double_data != n)
			goto count;
	} else if (c.dt == OT_INT64) {
		if (tp->n_int64_data != n)
			goto count;
	} else if (c.dt == OT_UINT32 || c.dt == OT_UINT64) {
		if (tp->n_uint64_data != n)
			goto count;
	} else if (tp->n_int32_data != n) {
		goto count;
	}
	ret = alloc_like(&c, fl, n, NULL);
	if (ret)
		return ret == -E2BIG ? cfail(err, err_size, "too many elements") : ret;
	for (k = 0; k < n; k++) {
		float f = 0;
		int64_t i = 0;

		if (tp->has_raw_data) {
			raw_get(tp->raw_data.data, c.dt, k, &f, &i);
		} else if (c.dt == OT_FLOAT) {
			f = tp->float_data[k];
		} else if (c.dt == OT_DOUBLE) {
			f = (float)tp->double_data[k];
		} else if (c.dt == OT_INT64) {
			i = tp->int64_data[k];
		} else if (c.dt == OT_UINT32 || c.dt == OT_UINT64) {
			i = (int64_t)tp->uint64_data[k];
		} else if (c.dt == OT_FLOAT16) {
			f = half_to_float((uint16_t)tp->int32_data[k]);
		} else if (c.dt == OT_BFLOAT16) {
			uint32_t x = (uint32_t)tp->int32_data[k] << 16;

			memcpy(&f, &x, 4);
		} else {
			i = tp->int32_data[k];
		}
		if (fl)
			c.f[k] = f;
		else
			c.i[k] = i;
	}
	*out = c;
	return 0;
count:
	return cfail(err, err_size, "the element count does not match the shape");
}

/* ---- Constant evaluation ---------------------------------------------------- */

int const_binary(const char *op, const struct ctensor *a, const struct ctensor *b,
		 struct cbudget *bud, struct ctensor *y, char *err, size_t err_size)
{
	struct ctensor c = { 0 };
	uint32_t r = a->rank > b->rank ? a->rank : b->rank, k;
	int64_t ia[CT_MAX_RANK], ib[CT_MAX_RANK];
	uint64_t n = 1, e;
	bool fl = ct_is_float(a) || ct_is_float(b);
	int ret;

	if (ct_is_float(a) != ct_is_float(b))
		return cfail(err, err_size, "mixed float and integer constants");
	for (k = 0; k < r; k++) {
		int64_t x = k + a->rank >= r ? a->dims[k + a->rank - r] : 1;
		int64_t z = k + b->rank >= r ? b->dims[k + b->rank - r] : 1;

		if (x != z && x != 1 && z != 1)
			return cfail(err, err_size, "constant shapes do not broadcast");
		c.dims[k] = x == 1 ? z : x;
		if (!mul_ok(n, (uint64_t)c.dims[k], &n))
			return cfail(err, err_size, "too many elements");
	}
	c.rank = r;
	c.dt = a->dt;
	ret = alloc_like(&c, fl, n, bud);
	if (ret)
		return ret == -E2BIG ? cfail(err, err_size, "too many elements") : ret;
	for (e = 0; e < n; e++) {
		uint64_t rem = e, oa = 0, ob = 0, sa = 1, sb = 1;

		/* row-major index -> the operands' broadcast offsets */
		for (k = r; k-- > 0;) {
			uint64_t d = (uint64_t)c.dims[k], x = rem % d;
			int64_t da = k + a->rank >= r ? a->dims[k + a->rank - r] : 1;
			int64_t db = k + b->rank >= r ? b->dims[k + b->rank - r] : 1;

			rem /= d;
			ia[k] = da == 1 ? 0 : (int64_t)x;
			ib[k] = db == 1 ? 0 : (int64_t)x;
			oa += (uint64_t)ia[k] * sa;
			ob += (uint64_t)ib[k] * sb;
			sa *= (uint64_t)da;
			sb *= (uint64_t)db;
		}
		if (fl) {
			float x = a->f[oa], z = b->f[ob];

			c.f[e] = !strcmp(op, "Add") ? x + z : !strcmp(op, "Sub") ? x - z :
				 !strcmp(op, "Mul") ? x * z : x / z;
		} else {
			int64_t x = a->i[oa], z = b->i[ob];

			if (!strcmp(op, "Div") && z == 0) {
				ctensor_free(&c);
				return cfail(err, err_size, "integer division by zero");
			}
			if (!strcmp(op, "Div") && x == INT64_MIN && z == -1) {
				ctensor_free(&c);
				return cfail(err, err_size,
					     "integer overflow: %" PRId64 " / -1 does not fit in int64",
					     x);
			}
			/* wrapping, as ONNX integer arithmetic */
			c.i[e] = !strcmp(op, "Add") ? (int64_t)((uint64_t)x + (uint64_t)z) :
				 !strcmp(op, "Sub") ? (int64_t)((uint64_t)x - (uint64_t)z) :
				 !strcmp(op, "Mul") ? (int64_t)((uint64_t)x * (uint64_t)z) : x / z;
		}
	}
	*y = c;
	return 0;
}

static int norm_axis(int64_t axis, uint32_t rank, uint32_t *out)
{
	if (axis < -(int64_t)rank || axis >= (int64_t)rank)
		return -EINVAL;
	*out = (uint32_t)(axis < 0 ? axis + rank : axis);
	return 0;
}

static int c_gather(const struct ctensor *x, const struct ctensor *idx, int64_t axis_a,
		    struct cbudget *b, struct ctensor *y, char *err, size_t es)
{
	struct ctensor c = { .dt = x->dt };
	uint64_t outer = 1, inner = 1, n, o, j, q;
	uint32_t axis, k, r = 0;
	int64_t d;
	int ret;

	if (!idx || ct_is_float(idx))
		return cfail(err, es, "Gather indices must be integers");
	if (norm_axis(axis_a, x->rank, &axis))
		return cfail(err, es, "Gather axis out of range");
	if (x->rank - 1 + idx->rank > CT_MAX_RANK)
		return cfail(err, es, "Gather result rank too large");
	for (k = 0; k < axis; k++) {
		if (!mul_ok(outer, (uint64_t)x->dims[k], &outer))
			return cfail(err, es, "too many elements");
		c.dims[r++] = x->dims[k];
	}
	for (k = 0; k < idx->rank; k++)
		c.dims[r++] = idx->dims[k];
	for (k = axis + 1; k < x->rank; k++) {
		if (!mul_ok(inner, (uint64_t)x->dims[k], &inner))
			return cfail(err, es, "too many elements");
		c.dims[r++] = x->dims[k];
	}
	c.rank = r;
	/* every index is checked once, whatever the other dims */
	d = x->dims[axis];
	for (j = 0; j < idx->n; j++)
		if (idx->i[j] < -d || idx->i[j] >= d)
			return cfail(err, es, "Gather index %" PRId64 " out of range for a dimension of %" PRId64,
				     idx->i[j], d);
	if (!mul_ok(outer, idx->n, &n) || !mul_ok(n, inner, &n))
		return cfail(err, es, "too many elements");
	ret = alloc_like(&c, ct_is_float(x), n, b);
	if (ret)
		return ret == -E2BIG ? cfail(err, es, "too many elements") : ret;
	/* an empty result copies nothing: the loops below run n times */
	for (o = 0; n && o < outer; o++) {
		for (j = 0; j < idx->n; j++) {
			int64_t v = idx->i[j] < 0 ? idx->i[j] + d : idx->i[j];

			for (q = 0; q < inner; q++) {
				uint64_t src = (o * (uint64_t)d + (uint64_t)v) * inner + q;
				uint64_t dst = (o * idx->n + j) * inner + q;

				if (c.f)
					c.f[dst] = x->f[src];
				else
					c.i[dst] = x->i[src];
			}
		}
	}
	*y = c;
	return 0;
}

static int c_concat(const struct ctensor *const *in, size_t nin, int64_t axis_a,
		    struct cbudget *b, struct ctensor *y, char *err, size_t es)
{
	struct ctensor c = { 0 };
	uint64_t outer = 1, inner = 1, o, pos = 0, total = 0, n;
	uint32_t axis, k;
	size_t j;
	int ret;

	if (!nin || !in[0])
		return cfail(err, es, "Concat needs inputs");
	if (norm_axis(axis_a, in[0]->rank, &axis))
		return cfail(err, es, "Concat axis out of range");
	for (j = 0; j < nin; j++) {
		if (!in[j] || in[j]->rank != in[0]->rank ||
		    ct_is_float(in[j]) != ct_is_float(in[0]))
			return cfail(err, es, "Concat inputs differ in rank or type");
		for (k = 0; k < in[0]->rank; k++)
			if (k != axis && in[j]->dims[k] != in[0]->dims[k])
				return cfail(err, es, "Concat inputs differ in shape");
		if (__builtin_add_overflow(total, (uint64_t)in[j]->dims[axis], &total))
			return cfail(err, es, "too many elements");
	}
	c = *in[0];
	for (k = 0; k < axis; k++)
		if (!mul_ok(outer, (uint64_t)c.dims[k], &outer))
			return cfail(err, es, "too many elements");
	for (k = axis + 1; k < c.rank; k++)
		if (!mul_ok(inner, (uint64_t)c.dims[k], &inner))
			return cfail(err, es, "too many elements");
	if (total > INT64_MAX || !mul_ok(outer, total, &n) || !mul_ok(n, inner, &n))
		return cfail(err, es, "too many elements");
	c.dims[axis] = (int64_t)total;
	ret = alloc_like(&c, ct_is_float(in[0]), n, b);
	if (ret)
		return ret == -E2BIG ? cfail(err, es, "too many elements") : ret;
	for (o = 0; n && o < outer; o++) {
		for (j = 0; j < nin; j++) {
			uint64_t cnt = (uint64_t)in[j]->dims[axis] * inner;

			if (c.f)
				memcpy(c.f + pos, in[j]->f + o * cnt, cnt * sizeof(float));
			else
				memcpy(c.i + pos, in[j]->i + o * cnt, cnt * sizeof(int64_t));
			pos += cnt;
		}
	}
	*y = c;
	return 0;
}

static int c_cast(const struct ctensor *x, int64_t to, struct cbudget *b, struct ctensor *y,
		  char *err, size_t es)
{
	struct ctensor c = *x;
	bool fl;
	uint64_t k;
	int ret;

	if (to > INT32_MAX || to < 0 || !raw_size((int)to))
		return cfail(err, es, "Cast to type %" PRId64 " is not supported", to);
	fl = dt_float((int)to);
	c.dt = (int)to;
	ret = alloc_like(&c, fl, x->n, b);
	if (ret)
		return ret;
	for (k = 0; k < x->n; k++) {
		if (fl)
			c.f[k] = x->f ? x->f[k] : (float)x->i[k];
		else if (x->f) {
			float v = x->f[k];

			if (!(v > -9.2e18f && v < 9.2e18f)) {
				ctensor_free(&c);
				return cfail(err, es, "Cast of an out-of-range float");
			}
			c.i[k] = to == OT_BOOL ? v != 0 : (int64_t)v;
		} else {
			c.i[k] = to == OT_BOOL ? x->i[k] != 0 : x->i[k];
		}
	}
	*y = c;
	return 0;
}

/*
 * ONNX Slice of one axis of @d elements: the first index and the count.
 * Starts and ends are clamped as the operator's definition says (to
 * [0, d] going forwards, [-1, d - 1] backwards); the count is a division,
 * never a walk, so steps near INT64_MAX or INT64_MIN neither overflow nor
 * loop.
 */
static void slice_range(int64_t start, int64_t end, int64_t step, int64_t d,
			int64_t *first, uint64_t *count)
{
	if (start < 0)
		start = start < -d ? 0 : start + d;
	if (end < 0)
		end = end < -d ? -1 : end + d;
	if (step > 0) {
		start = start > d ? d : start;
		end = end < 0 ? 0 : end > d ? d : end;
		*count = end > start ? (uint64_t)(end - start - 1) / (uint64_t)step + 1 : 0;
	} else {
		start = start > d - 1 ? d - 1 : start;
		end = end > d - 1 ? d - 1 : end;
		/* -step as unsigned: INT64_MIN has no positive int64 */
		*count = start > end ?
			 (uint64_t)(start - end - 1) / (0 - (uint64_t)step) + 1 : 0;
	}
	*first = start;
}

/* Slice of a 1-D constant (opset >= 10: starts/ends/axes/steps inputs). */
static int c_slice(const struct ctensor *const *in, size_t nin, int64_t opset,
		   struct cbudget *b, struct ctensor *y, char *err, size_t es)
{
	const struct ctensor *x = in[0];
	struct ctensor c = { 0 };
	int64_t step = 1, first;
	uint64_t cnt, k;
	int ret;

	if (opset < 10 || nin < 3 || !in[1] || !in[2])
		return cfail(err, es, "Slice needs starts and ends inputs (opset 10+)");
	if (x->rank != 1 || in[1]->n != 1 || in[2]->n != 1 || ct_is_float(in[1]) ||
	    ct_is_float(in[2]))
		return cfail(err, es, "only 1-D constant Slice is supported");
	if (nin > 3 && in[3] && (in[3]->n != 1 || ct_is_float(in[3]) ||
				 (in[3]->i[0] != 0 && in[3]->i[0] != -1)))
		return cfail(err, es, "only axis 0");
	if (nin > 4 && in[4]) {
		if (in[4]->n != 1 || ct_is_float(in[4]) || in[4]->i[0] == 0)
			return cfail(err, es, "bad steps");
		step = in[4]->i[0];
	}
	slice_range(in[1]->i[0], in[2]->i[0], step, x->dims[0], &first, &cnt);
	c = *x;
	c.dims[0] = (int64_t)cnt;
	ret = alloc_like(&c, ct_is_float(x), cnt, b);
	if (ret)
		return ret;
	/* |k * step| < d for every k < cnt: no overflow */
	for (k = 0; k < cnt; k++) {
		int64_t at = first + (int64_t)k * step;

		if (c.f)
			c.f[k] = x->f[at];
		else
			c.i[k] = x->i[at];
	}
	*y = c;
	return 0;
}

int const_op(const char *op, const struct ctensor *const *in, size_t nin,
	     const int64_t *iattr, struct cbudget *b, struct ctensor *y, char *err,
	     size_t err_size)
{
	if (!nin || !in[0])
		return cfail(err, err_size, "missing input");
	if (!strcmp(op, "Gather"))
		return c_gather(in[0], nin > 1 ? in[1] : NULL, iattr[0], b, y, err, err_size);
	if (!strcmp(op, "Concat"))
		return c_concat(in, nin, iattr[0], b, y, err, err_size);
	if (!strcmp(op, "Cast"))
		return c_cast(in[0], iattr[1], b, y, err, err_size);
	if (!strcmp(op, "Slice"))
		return c_slice(in, nin, iattr[2], b, y, err, err_size);
	return cfail(err, err_size, "op not supported by libnpu yet");
}

int onnx_read_file(const char *path, void **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;
	int ret = 0;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		ret = -EIO;
		goto out;
	}
	if ((unsigned long)n > (1ul << 31)) {
		ret = -EFBIG;
		goto out;
	}
	b = malloc((size_t)n + 1);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		ret = -EIO;
		goto out;
	}
	*buf = b;
	*len = (size_t)n;
out:
	fclose(f);
	return ret;
}

/* ---- Test tensors (input_K.pb) ------------------------------------------- */

NPU_EXPORT_ONNX int npu_onnx_tensor_load(const void *data, size_t size,
					 struct npu_onnx_tensor *t, char *err,
					 size_t err_size)
{
	Onnx__TensorProto *tp;
	struct ctensor c;
	uint64_t k;
	int ret;
	size_t es;

	if (!t || (!data && size))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	{
		/* the same checks as a model's, before protobuf-c recurses */
		const struct onnx_wire_limits wl = {
			.max_depth = NPU_ONNX_DEFAULT_MAX_NESTING,
			.max_unpacked = 8 * (uint64_t)size + ((uint64_t)ONNX_WIRE_SLACK_MIB << 20),
		};

		ret = onnx_wire_check(data, size, &onnx__tensor_proto__descriptor, &wl, err,
				      err_size);
		if (ret)
			return ret;
	}
	tp = onnx__tensor_proto__unpack(NULL, size, data);
	if (!tp) {
		cfail(err, err_size, "not a valid TensorProto");
		return -EBADMSG;
	}
	ret = ctensor_from_proto(tp, &c, err, err_size);
	if (tp->name)
		snprintf(t->name, sizeof(t->name), "%s", tp->name);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (ret)
		return ret;
	if (c.rank > NPU_TENSOR_MAX_RANK) {
		ctensor_free(&c);
		return cfail(err, err_size, "rank %u above %d", c.rank, NPU_TENSOR_MAX_RANK);
	}
	switch (c.dt) {
	case OT_FLOAT: case OT_DOUBLE: case OT_FLOAT16: case OT_BFLOAT16:
		t->dtype = NPU_DTYPE_FP32; break;
	case OT_INT8: t->dtype = NPU_DTYPE_INT8; break;
	case OT_UINT8: case OT_BOOL: t->dtype = NPU_DTYPE_UINT8; break;
	case OT_INT32: t->dtype = NPU_DTYPE_INT32; break;
	case OT_INT64: t->dtype = NPU_ONNX_INT64; break;
	default:
		ctensor_free(&c);
		return cfail(err, err_size, "element type %d is not supported", c.dt);
	}
	t->rank = c.rank;
	for (k = 0; k < c.rank; k++) {
		if (c.dims[k] > UINT32_MAX) {
			ctensor_free(&c);
			return cfail(err, err_size, "huge dimension");
		}
		t->dims[k] = (uint32_t)c.dims[k];
	}
	es = t->dtype == NPU_ONNX_INT64 ? 8 : npu_dtype_size((enum npu_dtype)t->dtype);
	t->bytes = c.n * es;
	t->data = malloc(t->bytes ? t->bytes : 1);
	if (!t->data) {
		ctensor_free(&c);
		return -ENOMEM;
	}
	for (k = 0; k < c.n; k++) {
		switch (t->dtype) {
		case NPU_DTYPE_FP32: ((float *)t->data)[k] = c.f[k]; break;
		case NPU_DTYPE_INT32: ((int32_t *)t->data)[k] = (int32_t)c.i[k]; break;
		case NPU_ONNX_INT64: ((int64_t *)t->data)[k] = c.i[k]; break;
		default: ((uint8_t *)t->data)[k] = (uint8_t)c.i[k]; break;
		}
	}
	ctensor_free(&c);
	return 0;
}

NPU_EXPORT_ONNX void npu_onnx_tensor_free(struct npu_onnx_tensor *t)
{
	if (t) {
		free(t->data);
		t->data = NULL;
	}
}
