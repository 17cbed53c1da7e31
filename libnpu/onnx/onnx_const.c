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

static float bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

const char *onnx_type_name(int onnx_type)
{
	static const char *const names[] = {
		[0] = "undefined", [OT_FLOAT] = "float32", [OT_UINT8] = "uint8",
		[OT_INT8] = "int8", [OT_UINT16] = "uint16", [OT_INT16] = "int16",
		[OT_INT32] = "int32", [OT_INT64] = "int64", [OT_STRING] = "string",
		[OT_BOOL] = "bool", [OT_FLOAT16] = "float16", [OT_DOUBLE] = "float64",
		[OT_UINT32] = "uint32", [OT_UINT64] = "uint64", [14] = "complex64",
		[15] = "complex128", [OT_BFLOAT16] = "bfloat16", [17] = "float8e4m3fn",
		[18] = "float8e4m3fnuz", [19] = "float8e5m2", [20] = "float8e5m2fnuz",
		[21] = "uint4", [22] = "int4", [23] = "float4e2m1",
	};

	if (onnx_type < 0 || (size_t)onnx_type >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[onnx_type];
}

/* Bytes of one element of @dt, 0 for a type constants cannot hold. */
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

static bool dt_signed(int dt)
{
	return dt == OT_INT8 || dt == OT_INT16 || dt == OT_INT32 || dt == OT_INT64;
}

/* The typed fields of TensorProto, in the order of its .proto. */
enum tp_field { TF_FLOAT, TF_INT32, TF_STRING, TF_INT64, TF_DOUBLE, TF_UINT64, TF_COUNT };

static const char *const tp_field_name[TF_COUNT] = {
	"float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data",
};

/* The field ONNX keeps values of @dt in when there is no raw_data. */
static enum tp_field tp_field_of(int dt)
{
	switch (dt) {
	case OT_FLOAT: return TF_FLOAT;
	case OT_INT64: return TF_INT64;
	case OT_DOUBLE: return TF_DOUBLE;
	case OT_UINT32: case OT_UINT64: return TF_UINT64;
	default: return TF_INT32;	/* the 8- and 16-bit types, int32, bool */
	}
}

static size_t tp_field_count(const Onnx__TensorProto *tp, enum tp_field f)
{
	switch (f) {
	case TF_FLOAT: return tp->n_float_data;
	case TF_INT32: return tp->n_int32_data;
	case TF_STRING: return tp->n_string_data;
	case TF_INT64: return tp->n_int64_data;
	case TF_DOUBLE: return tp->n_double_data;
	case TF_UINT64: return tp->n_uint64_data;
	case TF_COUNT: break;
	}
	return 0;
}

/*
 * The range of a value of @dt held in int32_data or uint64_data (wider
 * than the type): 16-bit floats as their bit patterns, bool as 0 or 1.
 */
static void typed_range(int dt, int64_t *lo, int64_t *hi)
{
	*lo = 0;
	switch (dt) {
	case OT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
	case OT_UINT8: *hi = UINT8_MAX; break;
	case OT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case OT_UINT16: case OT_FLOAT16: case OT_BFLOAT16: *hi = UINT16_MAX; break;
	case OT_BOOL: *hi = 1; break;
	case OT_UINT32: *hi = UINT32_MAX; break;
	default: *lo = INT64_MIN; *hi = INT64_MAX; break;
	}
}

/*
 * Check that @tp holds exactly the elements its dims promise, in raw_data
 * or in the one typed field of its type, every value within its type;
 * *@count receives the element count.  Nothing is read beyond what the
 * checks have bounded.
 */
static int tp_check(const Onnx__TensorProto *tp, uint64_t *count, char *err, size_t es)
{
	int dt = tp->data_type;
	uint64_t n = 1, k;
	enum tp_field want, f;
	size_t have;

	if (!tp->has_data_type || dt == 0)
		return cfail(err, es, "the tensor has no data type");
	if (!raw_size(dt)) {
		if (!strcmp(onnx_type_name(dt), "unknown"))
			return cfail(err, es, "data type %d is not an ONNX type", dt);
		return cfail(err, es, "%s tensors are not supported", onnx_type_name(dt));
	}
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return cfail(err, es, "external data is not supported");
	if (tp->segment)
		return cfail(err, es, "segmented tensors are not supported");
	if (tp->n_dims > CT_MAX_RANK)
		return cfail(err, es, "rank %zu is above %d", tp->n_dims, CT_MAX_RANK);
	for (k = 0; k < tp->n_dims; k++) {
		if (tp->dims[k] < 0)
			return cfail(err, es, "dimension %" PRIu64 " is negative (%" PRId64 ")", k,
				     tp->dims[k]);
		if (tp->dims[k] && n > MAX_ELEMS / (uint64_t)tp->dims[k])
			return cfail(err, es, "dimension %" PRIu64 " (%" PRId64 ") makes more than %llu elements",
				     k, tp->dims[k], MAX_ELEMS);
		n *= (uint64_t)tp->dims[k];
	}
	want = tp_field_of(dt);
	for (f = 0; f < TF_COUNT; f++) {
		if (!tp_field_count(tp, f) || (f == want && !tp->has_raw_data))
			continue;
		if (tp->has_raw_data)
			return cfail(err, es, "the tensor has both raw_data and %s", tp_field_name[f]);
		return cfail(err, es, "%s values belong in %s or raw_data, not %s",
			     onnx_type_name(dt), tp_field_name[want], tp_field_name[f]);
	}
	/* the data must match the shape exactly: that bounds every read */
	if (tp->has_raw_data) {
		if (tp->raw_data.len != n * raw_size(dt))
			return cfail(err, es, "%zu bytes of raw_data for %" PRIu64 " %s elements (%" PRIu64 " bytes)",
				     tp->raw_data.len, n, onnx_type_name(dt), n * raw_size(dt));
		*count = n;
		return 0;
	}
	have = tp_field_count(tp, want);
	if (have != n)
		return cfail(err, es, "%zu values in %s for %" PRIu64 " %s elements",
			     have, tp_field_name[want], n, onnx_type_name(dt));
	if (want == TF_INT32 || dt == OT_UINT32) {
		int64_t lo, hi;

		typed_range(dt, &lo, &hi);
		for (k = 0; k < n; k++) {
			bool bad = want == TF_INT32 ?
				   tp->int32_data[k] < lo || tp->int32_data[k] > hi :
				   tp->uint64_data[k] > (uint64_t)hi;

			if (bad)
				return cfail(err, es, "%s value %" PRId64 " of element %" PRIu64 " is out of range for %s",
					     tp_field_name[want],
					     want == TF_INT32 ? (int64_t)tp->int32_data[k] :
					     (int64_t)tp->uint64_data[k], k, onnx_type_name(dt));
		}
	}
	*count = n;
	return 0;
}

/*
 * Element @k of a checked TensorProto as the bits of its type, in the low
 * bytes, sign-extended for signed integers; bool is 0 or 1.
 */
static uint64_t tp_bits(const Onnx__TensorProto *tp, uint64_t k)
{
	int dt = tp->data_type;
	size_t es = raw_size(dt), b;
	uint64_t u = 0;

	if (tp->has_raw_data) {
		const uint8_t *p = tp->raw_data.data + k * es;

		for (b = 0; b < es; b++)
			u |= (uint64_t)p[b] << (8 * b);
		if (dt_signed(dt) && es < 8 && (u >> (8 * es - 1)) & 1)
			u |= ~0ull << (8 * es);
		return dt == OT_BOOL ? u != 0 : u;
	}
	switch (tp_field_of(dt)) {
	case TF_FLOAT: {
		uint32_t x;

		memcpy(&x, &tp->float_data[k], 4);
		return x;
	}
	case TF_DOUBLE:
		memcpy(&u, &tp->double_data[k], 8);
		return u;
	case TF_INT64: return (uint64_t)tp->int64_data[k];
	case TF_UINT64: return tp->uint64_data[k];
	default:
		/* in range (tp_check): 16-bit floats are their bit patterns */
		return (uint64_t)(int64_t)tp->int32_data[k];
	}
}

/* A float type's element bits as a double. */
static double float_bits_value(int dt, uint64_t u)
{
	switch (dt) {
	case OT_FLOAT: {
		uint32_t x = (uint32_t)u;
		float f;

		memcpy(&f, &x, 4);
		return f;
	}
	case OT_DOUBLE: {
		double d;

		memcpy(&d, &u, 8);
		return d;
	}
	case OT_FLOAT16: return half_to_float((uint16_t)u);
	default: return bf16_to_float((uint16_t)u);
	}
}

int ctensor_from_proto(const Onnx__TensorProto *tp, struct ctensor *out,
		       char *err, size_t err_size)
{
	struct ctensor c = { 0 };
	uint64_t n, k;
	bool fl;
	int ret;

	ret = tp_check(tp, &n, err, err_size);
	if (ret)
		return ret;
	c.dt = tp->data_type;
	c.rank = (uint32_t)tp->n_dims;
	for (k = 0; k < tp->n_dims; k++)
		c.dims[k] = tp->dims[k];
	fl = dt_float(c.dt);
	ret = alloc_like(&c, fl, n, NULL);
	if (ret)
		return ret == -E2BIG ? cfail(err, err_size, "too many elements") : ret;
	for (k = 0; k < n; k++) {
		uint64_t u = tp_bits(tp, k);

		/* float64 is held as float32, uint64 above INT64_MAX wraps */
		if (fl)
			c.f[k] = (float)float_bits_value(c.dt, u);
		else
			c.i[k] = (int64_t)u;
	}
	*out = c;
	return 0;
}

/* ---- Constant evaluation ---------------------------------------------------- */

/* @v as an integer of type @dt holds it: ONNX's Cast and arithmetic wrap. */
static int64_t wrap_int(int dt, int64_t v)
{
	switch (dt) {
	case OT_INT8: return (int8_t)(uint8_t)v;
	case OT_UINT8: return (uint8_t)v;
	case OT_INT16: return (int16_t)(uint16_t)v;
	case OT_UINT16: return (uint16_t)v;
	case OT_INT32: return (int32_t)(uint32_t)v;
	case OT_UINT32: return (uint32_t)v;
	case OT_BOOL: return v != 0;
	default: return v;
	}
}


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
			/* uint64 is held as its bits: it divides unsigned */
			bool u64 = c.dt == OT_UINT64;

			if (!strcmp(op, "Div") && z == 0) {
				ctensor_free(&c);
				return cfail(err, err_size, "integer division by zero");
			}
			if (!strcmp(op, "Div") && !u64 && x == INT64_MIN && z == -1) {
				ctensor_free(&c);
				return cfail(err, err_size,
					     "integer overflow: %" PRId64 " / -1 does not fit in int64",
					     x);
			}
			/* wrapping within the type, as ONNX integer arithmetic */
			c.i[e] = wrap_int(c.dt,
					  !strcmp(op, "Add") ? (int64_t)((uint64_t)x + (uint64_t)z) :
					  !strcmp(op, "Sub") ? (int64_t)((uint64_t)x - (uint64_t)z) :
					  !strcmp(op, "Mul") ? (int64_t)((uint64_t)x * (uint64_t)z) :
					  u64 ? (int64_t)((uint64_t)x / (uint64_t)z) : x / z);
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

/* binary32 to binary16 and back, to nearest even, as Cast rounds */
static float round_to_half(float f)
{
	uint32_t u, sign, mant, r;
	int e;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	e = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	if (((u >> 23) & 0xff) == 0xff)
		return f;
	if (e >= 31)
		return sign ? -INFINITY : INFINITY;
	if (e <= 0) {
		uint32_t shift = (uint32_t)(14 - e), full = mant | 0x800000, rest;

		if (shift > 24)
			return half_to_float((uint16_t)sign);
		r = full >> shift;
		rest = full & ((1u << shift) - 1);
		if (rest > (1u << (shift - 1)) || (rest == (1u << (shift - 1)) && (r & 1)))
			r++;
		return half_to_float((uint16_t)(sign | r));
	}
	r = ((uint32_t)e << 10) | (mant >> 13);
	if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (r & 1)))
		r++;
	return half_to_float((uint16_t)(sign | r));
}

static float round_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return f;
	u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&f, &u, 4);
	return f;
}

static int c_cast(const struct ctensor *x, int64_t to, struct cbudget *b, struct ctensor *y,
		  char *err, size_t es)
{
	struct ctensor c = *x;
	bool fl;
	uint64_t k;
	int ret;

	if (to > INT32_MAX || to < 0 || !raw_size((int)to))
		return cfail(err, es, "Cast to %s (type %" PRId64 ") is not supported",
			     onnx_type_name(to > INT32_MAX || to < 0 ? -1 : (int)to), to);
	fl = dt_float((int)to);
	c.dt = (int)to;
	ret = alloc_like(&c, fl, x->n, b);
	if (ret)
		return ret;
	for (k = 0; k < x->n; k++) {
		if (fl) {
			float v = x->f ? x->f[k] : (float)x->i[k];

			c.f[k] = to == OT_FLOAT16 ? round_to_half(v) :
				 to == OT_BFLOAT16 ? round_to_bf16(v) : v;
		} else if (x->f) {
			float v = x->f[k];

			if (to == OT_BOOL) {
				c.i[k] = v != 0;
				continue;
			}
			if (!(v > -9.2e18f && v < 9.2e18f)) {
				ctensor_free(&c);
				return cfail(err, es, "Cast of %g to %s is out of range", (double)v,
					     onnx_type_name((int)to));
			}
			c.i[k] = wrap_int((int)to, (int64_t)v);
		} else {
			c.i[k] = wrap_int((int)to, x->i[k]);
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

/* A protobuf varint at *@p before @end; false when malformed. */
static bool wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift;

	*v = 0;
	for (shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * ONNX's sequence and optional test data (SequenceProto, OptionalProto
 * of onnx-data.proto, which Debian's onnx.proto lacks) share one layout:
 * name = 1 (a string), elem_type = 2, the elements in fields 3 to 7.  A
 * file that is not a valid TensorProto but has exactly that layout is
 * named as what it is; *@elems counts fields 3 to 7.
 */
static bool seq_or_optional(const uint8_t *p, size_t size, char *name, size_t name_size,
			    uint64_t *elem_type, uint64_t *elems)
{
	const uint8_t *end = p + size;
	bool have_name = false, have_type = false;

	*elems = 0;
	while (p < end) {
		uint64_t key, len;

		if (!wire_varint(&p, end, &key))
			return false;
		if ((key >> 3) == 2 && (key & 7) == 0) {
			if (have_type || !wire_varint(&p, end, elem_type) || *elem_type > 5)
				return false;
			have_type = true;
			continue;
		}
		if ((key & 7) != 2 || (key >> 3) < 1 || (key >> 3) > 7 ||
		    !wire_varint(&p, end, &len) || len > (uint64_t)(end - p))
			return false;
		if ((key >> 3) == 1) {
			uint64_t k;

			if (have_name || !len)
				return false;
			for (k = 0; k < len; k++)
				if (p[k] < 0x20 || p[k] > 0x7e)
					return false;
			snprintf(name, name_size, "%.*s", (int)(len < 100 ? len : 100), (const char *)p);
			have_name = true;
		} else {
			(*elems)++;
		}
		p += len;
	}
	return have_name && have_type;
}

static int not_a_tensor(const void *data, size_t size, int ret, char *err, size_t err_size)
{
	static const char *const kinds[] = {
		"undefined", "tensor", "sparse tensor", "sequence", "map", "optional",
	};
	uint64_t elem_type = 0, elems;
	char name[104];

	if (!seq_or_optional(data, size, name, sizeof(name), &elem_type, &elems))
		return ret;
	cfail(err, err_size,
	      "'%s' is an ONNX sequence or optional (%" PRIu64 " %s element%s), not a tensor: only tensors are supported",
	      name, elems, kinds[elem_type], elems == 1 ? "" : "s");
	return -ENOTSUP;
}

enum npu_dtype onnx_npu_dtype(int dt)
{
	switch (dt) {
	case OT_FLOAT: return NPU_DTYPE_FP32;
	case OT_UINT8: return NPU_DTYPE_UINT8;
	case OT_INT8: return NPU_DTYPE_INT8;
	case OT_UINT16: return NPU_DTYPE_UINT16;
	case OT_INT16: return NPU_DTYPE_INT16;
	case OT_INT32: return NPU_DTYPE_INT32;
	case OT_INT64: return NPU_DTYPE_INT64;
	case OT_BOOL: return NPU_DTYPE_BOOL;
	case OT_FLOAT16: return NPU_DTYPE_FP16;
	case OT_DOUBLE: return NPU_DTYPE_FP64;
	case OT_UINT32: return NPU_DTYPE_UINT32;
	case OT_UINT64: return NPU_DTYPE_UINT64;
	case OT_BFLOAT16: return NPU_DTYPE_BF16;
	}
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_tensor_load(const void *data, size_t size,
					 struct npu_onnx_tensor *t, char *err,
					 size_t err_size)
{
	Onnx__TensorProto *tp;
	uint64_t n, k;
	size_t es;
	int ret;

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
			return not_a_tensor(data, size, ret, err, err_size);
	}
	tp = onnx__tensor_proto__unpack(NULL, size, data);
	if (!tp) {
		cfail(err, err_size, "not a valid TensorProto");
		return -EBADMSG;
	}
	ret = tp_check(tp, &n, err, err_size);
	if (!ret && tp->n_dims > CT_MAX_RANK)
		ret = cfail(err, err_size, "rank %zu is above the limit of %d", tp->n_dims,
			    CT_MAX_RANK);
	for (k = 0; !ret && k < tp->n_dims; k++)
		if (tp->dims[k] > UINT32_MAX)
			ret = cfail(err, err_size, "dimension %" PRIu64 " (%" PRId64 ") is above %u",
				    k, tp->dims[k], UINT32_MAX);
	/* above libnpu's rank, folded as the importer holds such an input */
	if (!ret && oi_fold_dims((uint32_t)tp->n_dims, tp->dims, &t->rank, t->dims))
		ret = cfail(err, err_size, "its dimensions from the sixth on hold more than %u elements",
			    UINT32_MAX);
	if (ret) {
		onnx__tensor_proto__free_unpacked(tp, NULL);
		return not_a_tensor(data, size, ret, err, err_size);
	}
	if (tp->name)
		snprintf(t->name, sizeof(t->name), "%s", tp->name);
	t->dtype = onnx_npu_dtype(tp->data_type);
	es = npu_dtype_size((enum npu_dtype)t->dtype);
	t->bytes = n * es;
	t->data = malloc(t->bytes ? t->bytes : 1);
	if (!t->data) {
		onnx__tensor_proto__free_unpacked(tp, NULL);
		return -ENOMEM;
	}
	/* elements keep their bits: no rounding, uint64 and int64 exact */
	for (k = 0; k < n; k++) {
		uint64_t u = tp_bits(tp, k);
		uint8_t *p = (uint8_t *)t->data + k * es;

		switch (es) {
		case 1: *p = (uint8_t)u; break;
		case 2: { uint16_t v = (uint16_t)u; memcpy(p, &v, 2); break; }
		case 4: { uint32_t v = (uint32_t)u; memcpy(p, &v, 4); break; }
		default: memcpy(p, &u, 8); break;
		}
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return 0;
}

NPU_EXPORT_ONNX void npu_onnx_tensor_free(struct npu_onnx_tensor *t)
{
	if (t) {
		free(t->data);
		t->data = NULL;
	}
}
