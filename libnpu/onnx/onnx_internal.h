/* SPDX-License-Identifier: MIT */
/* libnpu-onnx internals: constant tensors held by the importer. */
#ifndef NPU_ONNX_INTERNAL_H
#define NPU_ONNX_INTERNAL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPU_EXPORT_ONNX __attribute__((visibility("default")))

/* ONNX TensorProto.DataType values. */
enum {
	OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_UINT16 = 4, OT_INT16 = 5,
	OT_INT32 = 6, OT_INT64 = 7, OT_STRING = 8, OT_BOOL = 9, OT_FLOAT16 = 10,
	OT_DOUBLE = 11, OT_UINT32 = 12, OT_UINT64 = 13, OT_BFLOAT16 = 16,
};

#define CT_MAX_RANK	8

/*
 * A constant: float types are held as float (@f; float64 too, rounded),
 * integer and bool types as int64 (@i; uint64 above INT64_MAX wraps);
 * @dt remembers the ONNX type.
 */
struct ctensor {
	int dt;
	uint32_t rank;
	int64_t dims[CT_MAX_RANK];
	uint64_t n;
	float *f;
	int64_t *i;
};

struct Onnx__TensorProto;

/*
 * The bytes of constants import may compute in total
 * (npu_onnx_options.max_const_bytes).  Every fold checks its result's size
 * against it before allocating; past it the fold fails with -EDQUOT and
 * @want holds the total it would have reached.
 */
struct cbudget {
	uint64_t used, limit, want;
};

/* "float32", "int64", "bool", ...; "unknown" for a number ONNX lacks. */
const char *onnx_type_name(int onnx_type);
/* The npu_dtype of a loadable ONNX type, 0 for one graphs cannot hold. */
enum npu_dtype onnx_npu_dtype(int onnx_type);

bool ct_is_float(const struct ctensor *c);
double ctensor_get(const struct ctensor *c, uint64_t k);
void ctensor_free(struct ctensor *c);
/* @b (may be NULL: not counted) pays for the copy. */
int ctensor_copy(const struct ctensor *src, struct ctensor *dst, struct cbudget *b);
int ctensor_scaled(const struct ctensor *src, float k, struct ctensor *dst);
int ctensor_scalar_f(float v, struct ctensor *c);
int ctensor_scalar_i(int64_t v, struct ctensor *c);
int ctensor_vec_f(const float *v, size_t n, struct ctensor *c);
int ctensor_vec_i(const int64_t *v, size_t n, struct ctensor *c);
/* @v (one element) repeated over shape @dims (@rank values). */
int ctensor_fill(const struct ctensor *v, const int64_t *dims, uint64_t rank,
		 struct cbudget *b, struct ctensor *out);
/*
 * Every ONNX type but string, complex and the 8- and 4-bit floats, from
 * raw_data or its typed field; -EINVAL with a message in @err for
 * malformed or unsupported data.
 */
int ctensor_from_proto(const struct Onnx__TensorProto *tp, struct ctensor *c,
		       char *err, size_t err_size);

/*
 * Add, Sub, Mul, Div of constants with broadcasting; integers wrap as
 * ONNX's do, Div truncates, and INT64_MIN / -1 is refused as an overflow.
 */
int const_binary(const char *op, const struct ctensor *a,
		 const struct ctensor *b, struct cbudget *bud, struct ctensor *y,
		 char *err, size_t err_size);
/*
 * Gather, Concat, Cast, Slice of constants; @iattr: axis, to, opset.
 */
int const_op(const char *op, const struct ctensor *const *in, size_t nin,
	     const int64_t *iattr, struct cbudget *b, struct ctensor *y, char *err,
	     size_t err_size);

/*
 * @dims of @rank (at most CT_MAX_RANK) as libnpu holds them: above its
 * rank limit, the dimensions from the sixth on merged into the sixth
 * (onnx_rank.c); -EOVERFLOW when that one would exceed UINT32_MAX.
 */
int oi_fold_dims(uint32_t rank, const int64_t *dims, uint32_t *frank, uint32_t *fdims);

/* Read a whole file (at most 2 GiB). */
int onnx_read_file(const char *path, void **buf, size_t *len);

#endif /* NPU_ONNX_INTERNAL_H */
