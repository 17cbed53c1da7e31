// SPDX-License-Identifier: MIT
/*
 * TensorProto loading (libnpu/onnx/onnx_const.c): every ONNX data type
 * but string and the 8- and 4-bit floats, from raw_data and from each
 * typed field ONNX keeps it in, read by npu_onnx_tensor_load() (test
 * data, npu-run's --input and --expect) into its native npu_dtype with
 * the exact bits, and by ctensor_from_proto() (the importer's
 * initializers) with the ONNX type kept; folded integer arithmetic and
 * Cast of such constants wrap within their type.  The expected values are
 * written out by hand here, bit patterns included.  Hostile tensors
 * (data shorter or longer than the dims, values in another type's field,
 * out-of-range values, huge or negative dims) must be refused with the
 * message below, never read past their data (ASan watches).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

/* One case: an ONNX type, three elements as native bytes, and values. */
struct tcase {
	int onnx_type;
	enum npu_dtype dtype;
	size_t es;
	uint8_t native[24];	/* three elements, little endian */
	/* ctensor_from_proto()'s view: floats as float, the rest as int64 */
	float f[3];
	int64_t i[3];
};

#define LE16(v) (uint8_t)(v), (uint8_t)((v) >> 8)
#define LE32(v) LE16(v), LE16((v) >> 16)
#define LE64(v) LE32(v), LE32((uint64_t)(v) >> 32)

static const struct tcase cases[] = {
	/* 1.5, -2, +inf */
	{ OT_FLOAT, NPU_DTYPE_FP32, 4, { LE32(0x3fc00000u), LE32(0xc0000000u), LE32(0x7f800000u) },
	  { 1.5f, -2.0f, INFINITY }, { 0 } },
	{ OT_UINT8, NPU_DTYPE_UINT8, 1, { 0, 255, 7 }, { 0 }, { 0, 255, 7 } },
	{ OT_INT8, NPU_DTYPE_INT8, 1, { 0x80, 0x7f, 0xff }, { 0 }, { -128, 127, -1 } },
	{ OT_UINT16, NPU_DTYPE_UINT16, 2, { LE16(0), LE16(65535), LE16(300) }, { 0 },
	  { 0, 65535, 300 } },
	{ OT_INT16, NPU_DTYPE_INT16, 2, { LE16(0x8000), LE16(0x7fff), LE16(0xfffe) }, { 0 },
	  { -32768, 32767, -2 } },
	{ OT_INT32, NPU_DTYPE_INT32, 4, { LE32(0x80000000u), LE32(0x7fffffffu), LE32(0xfffffffdu) },
	  { 0 }, { INT32_MIN, INT32_MAX, -3 } },
	/* 2^53 + 1 has no double: exact only if never held as one */
	{ OT_INT64, NPU_DTYPE_INT64, 8,
	  { LE64(0x8000000000000000ull), LE64(0x7fffffffffffffffull), LE64(0x20000000000001ull) },
	  { 0 }, { INT64_MIN, INT64_MAX, 9007199254740993ll } },
	{ OT_BOOL, NPU_DTYPE_BOOL, 1, { 0, 1, 1 }, { 0 }, { 0, 1, 1 } },
	/* 1, -2, 2^-24 (the smallest subnormal) */
	{ OT_FLOAT16, NPU_DTYPE_FP16, 2, { LE16(0x3c00), LE16(0xc000), LE16(0x0001) },
	  { 1.0f, -2.0f, 5.9604644775390625e-08f }, { 0 } },
	/* 0.1, -1e300 (no float: -inf when held as one), 2^53 */
	{ OT_DOUBLE, NPU_DTYPE_FP64, 8,
	  { LE64(0x3fb999999999999aull), LE64(0xfe37e43c8800759cull), LE64(0x4340000000000000ull) },
	  { 0.1f, -INFINITY, 9007199254740992.0f }, { 0 } },
	{ OT_UINT32, NPU_DTYPE_UINT32, 4, { LE32(0), LE32(0xffffffffu), LE32(5) }, { 0 },
	  { 0, 4294967295ll, 5 } },
	/* the ctensor holds uint64 above INT64_MAX wrapped */
	{ OT_UINT64, NPU_DTYPE_UINT64, 8,
	  { LE64(0), LE64(0xffffffffffffffffull), LE64(0x8000000000000000ull) }, { 0 },
	  { 0, -1, INT64_MIN } },
	/* 1, -2, -inf */
	{ OT_BFLOAT16, NPU_DTYPE_BF16, 2, { LE16(0x3f80), LE16(0xc000), LE16(0xff80) },
	  { 1.0f, -2.0f, -INFINITY }, { 0 } },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static bool is_float(int t)
{
	return t == OT_FLOAT || t == OT_FLOAT16 || t == OT_DOUBLE || t == OT_BFLOAT16;
}

/* Element @k of @c's native bytes, sign-extended like its type. */
static uint64_t native_elem(const struct tcase *c, size_t k)
{
	uint64_t u = 0;
	size_t b;

	for (b = 0; b < c->es; b++)
		u |= (uint64_t)c->native[k * c->es + b] << (8 * b);
	if ((c->onnx_type == OT_INT8 || c->onnx_type == OT_INT16 || c->onnx_type == OT_INT32) &&
	    (u >> (8 * c->es - 1)) & 1)
		u |= ~0ull << (8 * c->es);
	return u;
}

/* @tp's data in the typed field ONNX uses for @c's type. */
static void fill_typed(Onnx__TensorProto *tp, const struct tcase *c, void *store)
{
	size_t k;

	switch (c->onnx_type) {
	case OT_FLOAT:
		tp->n_float_data = 3;
		tp->float_data = store;
		for (k = 0; k < 3; k++) {
			uint32_t x = (uint32_t)native_elem(c, k);

			memcpy(&tp->float_data[k], &x, 4);
		}
		break;
	case OT_DOUBLE:
		tp->n_double_data = 3;
		tp->double_data = store;
		for (k = 0; k < 3; k++) {
			uint64_t x = native_elem(c, k);

			memcpy(&tp->double_data[k], &x, 8);
		}
		break;
	case OT_INT64:
		tp->n_int64_data = 3;
		tp->int64_data = store;
		for (k = 0; k < 3; k++)
			tp->int64_data[k] = (int64_t)native_elem(c, k);
		break;
	case OT_UINT32: case OT_UINT64:
		tp->n_uint64_data = 3;
		tp->uint64_data = store;
		for (k = 0; k < 3; k++)
			tp->uint64_data[k] = native_elem(c, k);
		break;
	default:
		/* 8- and 16-bit integers, int32, bool, 16-bit floats' bits */
		tp->n_int32_data = 3;
		tp->int32_data = store;
		for (k = 0; k < 3; k++)
			tp->int32_data[k] = (int32_t)(int64_t)native_elem(c, k);
		break;
	}
}

static uint8_t *pack_tensor(const Onnx__TensorProto *tp, size_t *len)
{
	uint8_t *buf;

	*len = onnx__tensor_proto__get_packed_size(tp);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	onnx__tensor_proto__pack(tp, buf);
	return buf;
}

/* @tp must load as @c through both readers, exactly. */
static void check_loads(const Onnx__TensorProto *tp, const struct tcase *c, const char *how)
{
	struct npu_onnx_tensor t;
	struct ctensor ct = { 0 };
	char err[256] = "";
	size_t len, k;
	uint8_t *buf = pack_tensor(tp, &len);
	int ret;

	ret = npu_onnx_tensor_load(buf, len, &t, err, sizeof(err));
	if (ret)
		fail_msg("%s %s: %d %s", onnx_type_name(c->onnx_type), how, ret, err);
	assert_string_equal(t.name, "t");
	assert_int_equal(t.dtype, c->dtype);
	assert_int_equal(t.rank, 1);
	assert_int_equal(t.dims[0], 3);
	assert_int_equal(t.bytes, 3 * c->es);
	if (memcmp(t.data, c->native, 3 * c->es))
		fail_msg("%s %s: the native bits differ", onnx_type_name(c->onnx_type), how);
	npu_onnx_tensor_free(&t);
	free(buf);

	ret = ctensor_from_proto(tp, &ct, err, sizeof(err));
	if (ret)
		fail_msg("%s %s (initializer): %d %s", onnx_type_name(c->onnx_type), how, ret, err);
	assert_int_equal(ct.dt, c->onnx_type);
	assert_int_equal(ct.rank, 1);
	assert_int_equal(ct.dims[0], 3);
	assert_int_equal(ct.n, 3);
	assert_int_equal(ct_is_float(&ct), is_float(c->onnx_type));
	for (k = 0; k < 3; k++) {
		if (is_float(c->onnx_type)) {
			if (memcmp(&ct.f[k], &c->f[k], sizeof(float)))
				fail_msg("%s %s (initializer): element %zu is %g, want %g",
					 onnx_type_name(c->onnx_type), how, k, (double)ct.f[k],
					 (double)c->f[k]);
		} else if (ct.i[k] != c->i[k]) {
			fail_msg("%s %s (initializer): element %zu is %lld, want %lld",
				 onnx_type_name(c->onnx_type), how, k, (long long)ct.i[k],
				 (long long)c->i[k]);
		}
	}
	ctensor_free(&ct);
}

static void test_raw_data(void **state)
{
	size_t j;

	(void)state;
	for (j = 0; j < NCASES; j++) {
		Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
		int64_t dims[1] = { 3 };

		tp.name = "t";
		tp.has_data_type = 1;
		tp.data_type = cases[j].onnx_type;
		tp.n_dims = 1;
		tp.dims = dims;
		tp.has_raw_data = 1;
		tp.raw_data.len = 3 * cases[j].es;
		tp.raw_data.data = (uint8_t *)cases[j].native;
		check_loads(&tp, &cases[j], "from raw_data");
	}
}

static void test_typed_fields(void **state)
{
	size_t j;

	(void)state;
	for (j = 0; j < NCASES; j++) {
		Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
		int64_t dims[1] = { 3 };
		uint64_t store[3];

		tp.name = "t";
		tp.has_data_type = 1;
		tp.data_type = cases[j].onnx_type;
		tp.n_dims = 1;
		tp.dims = dims;
		fill_typed(&tp, &cases[j], store);
		check_loads(&tp, &cases[j], "from its typed field");
	}
}

/* A raw_data bool byte other than 0 is true, and stored as 1. */
static void test_bool_bytes(void **state)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[1] = { 3 };
	uint8_t raw[3] = { 0, 2, 255 };
	struct npu_onnx_tensor t;
	char err[256] = "";
	size_t len;
	uint8_t *buf;

	(void)state;
	tp.has_data_type = 1;
	tp.data_type = OT_BOOL;
	tp.n_dims = 1;
	tp.dims = dims;
	tp.has_raw_data = 1;
	tp.raw_data.len = 3;
	tp.raw_data.data = raw;
	buf = pack_tensor(&tp, &len);
	assert_int_equal(npu_onnx_tensor_load(buf, len, &t, err, sizeof(err)), 0);
	assert_memory_equal(t.data, "\0\1\1", 3);
	npu_onnx_tensor_free(&t);
	free(buf);
}

/* A scalar (rank 0) and an empty tensor load too. */
static void test_scalar_and_empty(void **state)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	int64_t v = -5, dims[2] = { 4, 0 };
	struct npu_onnx_tensor t;
	char err[256] = "";
	size_t len;
	uint8_t *buf;

	(void)state;
	tp.has_data_type = 1;
	tp.data_type = OT_INT64;
	tp.n_int64_data = 1;
	tp.int64_data = &v;
	buf = pack_tensor(&tp, &len);
	assert_int_equal(npu_onnx_tensor_load(buf, len, &t, err, sizeof(err)), 0);
	assert_int_equal(t.rank, 0);
	assert_int_equal(t.bytes, 8);
	assert_memory_equal(t.data, &v, 8);
	npu_onnx_tensor_free(&t);
	free(buf);

	tp.n_int64_data = 0;
	tp.n_dims = 2;
	tp.dims = dims;
	buf = pack_tensor(&tp, &len);
	assert_int_equal(npu_onnx_tensor_load(buf, len, &t, err, sizeof(err)), 0);
	assert_int_equal(t.rank, 2);
	assert_int_equal(t.bytes, 0);
	npu_onnx_tensor_free(&t);
	free(buf);
}

/*
 * @tp must be refused by npu_onnx_tensor_load(), and by
 * ctensor_from_proto() too unless @tensor_only, with @msg in the message.
 */
static void refused_as(const Onnx__TensorProto *tp, int want, const char *msg, bool tensor_only)
{
	struct npu_onnx_tensor t;
	struct ctensor ct = { 0 };
	char err[256] = "";
	size_t len;
	uint8_t *buf = pack_tensor(tp, &len);
	int ret;

	ret = npu_onnx_tensor_load(buf, len, &t, err, sizeof(err));
	free(buf);
	if (ret != want || !strstr(err, msg))
		fail_msg("want %d \"%s\", got %d \"%s\"", want, msg, ret, err);
	assert_null(t.data);
	err[0] = '\0';
	ret = ctensor_from_proto(tp, &ct, err, sizeof(err));
	if (!tensor_only && (ret != want || !strstr(err, msg)))
		fail_msg("initializer: want %d \"%s\", got %d \"%s\"", want, msg, ret, err);
	if (!ret)
		ctensor_free(&ct);
}

static void refused(const Onnx__TensorProto *tp, int want, const char *msg)
{
	refused_as(tp, want, msg, false);
}

static void test_hostile(void **state)
{
	Onnx__TensorProto tp;
	int64_t dims[9] = { 3, 1, 1, 1, 1, 1, 1, 1, 1 }, big[3] = { 1ll << 20, 1ll << 20, 1ll << 20 };
	int64_t neg[2] = { 2, -1 }, i64[3] = { 1, 2, 3 };
	int32_t i32[3] = { 0, 300, 1 };
	uint64_t u64[3] = { 0, 1ull << 32, 1 };
	float f32[3] = { 1, 2, 3 };
	uint8_t raw[32] = { 0 };

	(void)state;
#define RESET(type) do { \
		tp = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT; \
		tp.has_data_type = 1; tp.data_type = (type); tp.n_dims = 1; tp.dims = dims; \
	} while (0)

	/* raw_data one byte short of three int64, then one byte over */
	RESET(OT_INT64);
	tp.has_raw_data = 1;
	tp.raw_data.data = raw;
	tp.raw_data.len = 23;
	refused(&tp, -EINVAL, "23 bytes of raw_data for 3 int64 elements (24 bytes)");
	tp.raw_data.len = 25;
	refused(&tp, -EINVAL, "25 bytes of raw_data for 3 int64 elements (24 bytes)");
	RESET(OT_FLOAT16);
	tp.has_raw_data = 1;
	tp.raw_data.data = raw;
	tp.raw_data.len = 5;
	refused(&tp, -EINVAL, "5 bytes of raw_data for 3 float16 elements (6 bytes)");

	/* a typed field with too few or too many values */
	RESET(OT_UINT16);
	tp.n_int32_data = 2;
	tp.int32_data = i32;
	refused(&tp, -EINVAL, "2 values in int32_data for 3 uint16 elements");
	RESET(OT_DOUBLE);
	tp.n_double_data = 0;
	refused(&tp, -EINVAL, "0 values in double_data for 3 float64 elements");
	RESET(OT_UINT64);
	tp.n_dims = 0;	/* a scalar */
	tp.n_uint64_data = 3;
	tp.uint64_data = u64;
	refused(&tp, -EINVAL, "3 values in uint64_data for 1 uint64 elements");

	/* values in another type's field, or in two places */
	RESET(OT_INT64);
	tp.n_float_data = 3;
	tp.float_data = f32;
	refused(&tp, -EINVAL, "int64 values belong in int64_data or raw_data, not float_data");
	RESET(OT_BOOL);
	tp.n_int64_data = 3;
	tp.int64_data = i64;
	refused(&tp, -EINVAL, "bool values belong in int32_data or raw_data, not int64_data");
	RESET(OT_FLOAT);
	tp.n_float_data = 3;
	tp.float_data = f32;
	tp.has_raw_data = 1;
	tp.raw_data.data = raw;
	tp.raw_data.len = 12;
	refused(&tp, -EINVAL, "the tensor has both raw_data and float_data");

	/* values out of their type's range in a wider field */
	RESET(OT_UINT8);
	tp.n_int32_data = 3;
	tp.int32_data = i32;
	refused(&tp, -EINVAL, "int32_data value 300 of element 1 is out of range for uint8");
	RESET(OT_BOOL);
	i32[1] = 2;
	tp.n_int32_data = 3;
	tp.int32_data = i32;
	refused(&tp, -EINVAL, "int32_data value 2 of element 1 is out of range for bool");
	RESET(OT_FLOAT16);
	i32[1] = -1;
	tp.n_int32_data = 3;
	tp.int32_data = i32;
	refused(&tp, -EINVAL, "int32_data value -1 of element 1 is out of range for float16");
	RESET(OT_UINT32);
	tp.n_uint64_data = 3;
	tp.uint64_data = u64;
	refused(&tp, -EINVAL, "uint64_data value 4294967296 of element 1 is out of range for uint32");

	/* types that do not load, named in words */
	RESET(OT_STRING);
	refused(&tp, -EINVAL, "string tensors are not supported");
	RESET(17);
	refused(&tp, -EINVAL, "float8e4m3fn tensors are not supported");
	RESET(14);
	refused(&tp, -EINVAL, "complex64 tensors are not supported");
	RESET(99);
	refused(&tp, -EINVAL, "data type 99 is not an ONNX type");
	RESET(OT_FLOAT);
	tp.has_data_type = 0;
	refused(&tp, -EINVAL, "the tensor has no data type");

	/* shapes: negative, overflowing, above the ranks */
	RESET(OT_FLOAT);
	tp.n_dims = 2;
	tp.dims = neg;
	refused(&tp, -EINVAL, "dimension 1 is negative (-1)");
	RESET(OT_FLOAT);
	tp.n_dims = 3;
	tp.dims = big;
	refused(&tp, -EINVAL, "dimension 1 (1048576) makes more than 2147483648 elements");
	RESET(OT_FLOAT);
	tp.n_dims = 9;
	refused(&tp, -EINVAL, "rank 9 is above 8");
	/*
	 * rank 7 [3, 1, 1, 1, 1, 2, 4]: read folded, as the importer holds a
	 * value of that rank, [3, 1, 1, 1, 1, 8]
	 */
	RESET(OT_FLOAT);
	{
		int64_t d7[7] = { 3, 1, 1, 1, 1, 2, 4 };
		float f24[24] = { 0 };
		struct npu_onnx_tensor t;
		char err[256];
		uint8_t *buf;
		size_t len;

		f24[23] = 5.0f;
		tp.n_dims = 7;
		tp.dims = d7;
		tp.n_float_data = 24;
		tp.float_data = f24;
		buf = pack_tensor(&tp, &len);
		assert_int_equal(npu_onnx_tensor_load(buf, len, &t, err, sizeof(err)), 0);
		assert_int_equal(t.rank, 6);
		assert_int_equal(t.dims[0], 3);
		assert_int_equal(t.dims[4], 1);
		assert_int_equal(t.dims[5], 8);
		assert_int_equal(t.bytes, sizeof(f24));
		assert_memory_equal(t.data, f24, sizeof(f24));
		npu_onnx_tensor_free(&t);
		free(buf);
	}
#undef RESET
}

/*
 * ONNX's sequence and optional test data (SequenceProto, OptionalProto)
 * look like a TensorProto with segments: named for what they are.
 */
static void test_sequence_file(void **state)
{
	Onnx__TensorProto el = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[1] = { 2 };
	float v[2] = { 1, 2 };
	uint8_t buf[256], *inner;
	size_t n = 0, len;
	struct npu_onnx_tensor t;
	char err[256] = "";
	int k, ret;

	(void)state;
	el.has_data_type = 1;
	el.data_type = OT_FLOAT;
	el.n_dims = 1;
	el.dims = dims;
	el.n_float_data = 2;
	el.float_data = v;
	inner = pack_tensor(&el, &len);
	assert_true(len < 100);
	/* name = 1: "seq", elem_type = 2: TENSOR, tensor_values = 3 twice */
	memcpy(buf, "\x0a\x03seq\x10\x01", 7);
	n = 7;
	for (k = 0; k < 2; k++) {
		buf[n++] = 0x1a;
		buf[n++] = (uint8_t)len;
		memcpy(buf + n, inner, len);
		n += len;
	}
	free(inner);
	ret = npu_onnx_tensor_load(buf, n, &t, err, sizeof(err));
	assert_int_equal(ret, -ENOTSUP);
	assert_string_equal(err, "'seq' is an ONNX sequence or optional (2 tensor elements), not a tensor: only tensors are supported");
	/* an empty optional: a name and elem_type UNDEFINED */
	ret = npu_onnx_tensor_load("\x0a\x03opt\x10\x00", 7, &t, err, sizeof(err));
	assert_int_equal(ret, -ENOTSUP);
	assert_string_equal(err, "'opt' is an ONNX sequence or optional (0 undefined elements), not a tensor: only tensors are supported");
	/* a truncated one is malformed, not a sequence */
	ret = npu_onnx_tensor_load(buf, 20, &t, err, sizeof(err));
	assert_int_equal(ret, -EBADMSG);
}

/* A 1-element integer constant of ONNX type @dt. */
static void scalar_of(int dt, int64_t v, struct ctensor *c)
{
	assert_int_equal(ctensor_vec_i(&v, 1, c), 0);
	c->dt = dt;
}

static int64_t fold(const char *op, int dt, int64_t x, int64_t z, int want_ret)
{
	struct ctensor a, b, y = { 0 };
	char err[256] = "";
	int64_t v;
	int ret;

	scalar_of(dt, x, &a);
	scalar_of(dt, z, &b);
	ret = const_binary(op, &a, &b, NULL, &y, err, sizeof(err));
	ctensor_free(&a);
	ctensor_free(&b);
	if (ret != want_ret)
		fail_msg("%s %s: %d %s, want %d", onnx_type_name(dt), op, ret, err, want_ret);
	if (ret)
		return 0;
	assert_int_equal(y.dt, dt);
	v = y.i[0];
	ctensor_free(&y);
	return v;
}

/*
 * Folded integer arithmetic and Cast wrap within the constant's type, as
 * ONNX's ops do, and uint64 (held as its bits) divides unsigned.
 */
static void test_const_wraps(void **state)
{
	const struct ctensor *in[1];
	const int64_t cast_to_u8[3] = { 0, OT_UINT8, 13 };
	struct ctensor x, y = { 0 };
	char err[256] = "";

	(void)state;
	assert_int_equal(fold("Add", OT_UINT8, 200, 100, 0), 44);
	assert_int_equal(fold("Mul", OT_INT8, 100, 2, 0), -56);
	assert_int_equal(fold("Sub", OT_UINT16, 0, 1, 0), 65535);
	assert_int_equal(fold("Div", OT_INT32, INT32_MIN, -1, 0), INT32_MIN);
	/* (2^64 - 2) / 2 and 2^63 / (2^64 - 1), unsigned */
	assert_int_equal(fold("Div", OT_UINT64, -2, 2, 0), INT64_MAX);
	assert_int_equal(fold("Div", OT_UINT64, INT64_MIN, -1, 0), 0);
	fold("Div", OT_INT64, INT64_MIN, -1, -EINVAL);

	scalar_of(OT_INT64, 300, &x);
	in[0] = &x;
	assert_int_equal(const_op("Cast", in, 1, cast_to_u8, NULL, &y, err, sizeof(err)), 0);
	assert_int_equal(y.dt, OT_UINT8);
	assert_int_equal(y.i[0], 44);
	ctensor_free(&x);
	ctensor_free(&y);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(onnx_type_name(OT_FLOAT), "float32");
	assert_string_equal(onnx_type_name(OT_INT64), "int64");
	assert_string_equal(onnx_type_name(OT_BOOL), "bool");
	assert_string_equal(onnx_type_name(OT_DOUBLE), "float64");
	assert_string_equal(onnx_type_name(OT_BFLOAT16), "bfloat16");
	assert_string_equal(onnx_type_name(0), "undefined");
	assert_string_equal(onnx_type_name(-1), "unknown");
	assert_string_equal(onnx_type_name(1000), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_data),
		cmocka_unit_test(test_typed_fields),
		cmocka_unit_test(test_bool_bytes),
		cmocka_unit_test(test_scalar_and_empty),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_sequence_file),
		cmocka_unit_test(test_const_wraps),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
