/* SPDX-License-Identifier: MIT */
/*
 * A small reader/writer for NumPy's .npy format (versions 1.0, 2.0, 3.0),
 * shared by npu-run and the model tools.  Only C-order, little-endian
 * arrays of the types below are accepted: that is what numpy and
 * onnxruntime-node produce on every machine this project runs on, and
 * refusing the rest keeps the reader small enough to trust with hostile
 * files.
 */
#ifndef VNPU_NPY_H
#define VNPU_NPY_H

#include <stddef.h>
#include <stdint.h>

/* Values are only ever appended: the model tools store them. */
enum npy_type {
	NPY_F32, NPY_F16, NPY_I8, NPY_U8, NPY_I32, NPY_I64, NPY_BOOL,
	NPY_F64, NPY_I16, NPY_U16, NPY_U32, NPY_U64,
};

#define NPY_MAX_RANK 8

struct npy_array {
	enum npy_type type;
	int rank;			/* 0 (a scalar) .. NPY_MAX_RANK */
	int64_t dims[NPY_MAX_RANK];
	void *data;			/* malloc'd by npy_load, never NULL after it */
	size_t bytes;			/* element count times element size */
};

/*
 * Read @path into @out.  Returns 0, or a negative errno: -EINVAL for a
 * malformed file (bad magic, header, shape, or a data size that does not
 * match the shape), -ENOTSUP for a valid file this reader does not handle
 * (big-endian, Fortran order, other dtypes), -EFBIG for arrays beyond the
 * reader's size limit, -ENOMEM, or the error of the failing I/O call.
 * On failure @out is left zeroed.
 */
int npy_load(const char *path, struct npy_array *out);

/*
 * Write @a to @path, atomically (a temporary file in the same directory is
 * renamed over @path).  Returns 0 or a negative errno; -EINVAL when @a is
 * inconsistent (rank, dims, bytes).
 */
int npy_save(const char *path, const struct npy_array *a);

/* Release the data of an array from npy_load; safe on a zeroed array. */
void npy_free(struct npy_array *a);

#endif /* VNPU_NPY_H */
