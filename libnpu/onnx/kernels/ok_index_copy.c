// SPDX-License-Identifier: MIT
/* The index family's shared pieces: the strided byte copy, index and shape checks. */
#include <errno.h>
#include <string.h>

#include "ok_index.h"

/* One row of @n elements @stride elements apart; sizes the compiler can inline. */
static void copy_row(char *dst, const char *src, size_t esz, uint64_t n, int64_t stride)
{
	uint64_t i;

	if (stride == 1) {
		memcpy(dst, src, n * esz);
		return;
	}
#define ROW(SZ)								\
	for (i = 0; i < n; i++, dst += SZ, src += stride * (SZ))	\
		memcpy(dst, src, SZ);					\
	return
	switch (esz) {
	case 1: ROW(1);
	case 2: ROW(2);
	case 4: ROW(4);
	case 8: ROW(8);
	}
#undef ROW
	for (i = 0; i < n; i++, dst += esz, src += stride * (int64_t)esz)
		memcpy(dst, src, esz);
}

int ok_view_copy(void *dst, const void *src, size_t elem_size, const struct ok_view *v,
		 struct npu_kernel_call *call)
{
	uint64_t dims[OK_VIEW_MAX_RANK], idx[OK_VIEW_MAX_RANK] = { 0 }, pending = 0, n;
	int64_t stride[OK_VIEW_MAX_RANK], inner;
	const char *s = src;
	char *d = dst;
	uint32_t r = 0, k;
	int e;

	/* Ones go; a dimension contiguous with the next one merges into it. */
	for (k = 0; k < v->rank; k++) {
		if (v->dims[k] == 1)
			continue;
		if (r && stride[r - 1] == v->stride[k] * (int64_t)v->dims[k]) {
			dims[r - 1] *= v->dims[k];
			stride[r - 1] = v->stride[k];
			continue;
		}
		dims[r] = v->dims[k];
		stride[r] = v->stride[k];
		r++;
	}
	if (!r) {
		memcpy(d, s, elem_size);
		return 0;
	}
	n = dims[r - 1];
	inner = stride[r - 1];
	for (;;) {
		uint64_t at, part;

		/* A long row is copied in parts, so a deadline stops it. */
		for (at = 0; at < n; at += part) {
			part = n - at < OK_POLL_EVERY ? n - at : OK_POLL_EVERY;
			copy_row(d, s + (int64_t)at * inner * (int64_t)elem_size, elem_size, part,
				 inner);
			d += part * elem_size;
			e = ok_tick(call, &pending, part);
			if (e)
				return e;
		}
		/* Next row: an odometer over the outer dimensions. */
		for (k = r - 1; k-- > 0;) {
			s += stride[k] * (int64_t)elem_size;
			if (++idx[k] < dims[k])
				break;
			s -= stride[k] * (int64_t)(dims[k] * elem_size);
			idx[k] = 0;
		}
		if (k == UINT32_MAX)
			break;
	}
	return 0;
}

int ok_need_io(size_t ni, const struct npu_kernel_tensor *const *in, size_t required,
	       size_t no, struct npu_kernel_tensor *const *out, bool need_out0, char *err,
	       size_t err_size)
{
	size_t i;

	for (i = 0; i < required; i++)
		if (i >= ni || !in[i])
			return ok_fail(err, err_size, "input %zu is missing (the op needs %zu)", i,
				       required);
	if (need_out0 && (!no || !out[0]))
		return ok_fail(err, err_size, "output 0 is missing");
	return 0;
}

int ok_check_indices(const struct npu_kernel_tensor *t, const char *what, char *err,
		     size_t err_size)
{
	if (t->dtype != NPU_DTYPE_INT32 && t->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "%s must be int32 or int64, not %s", what,
			       ok_dtype_name(t->dtype));
	return 0;
}

int ok_fetch_index(const struct npu_kernel_tensor *idx, uint64_t i, uint64_t n,
		   uint64_t *out, struct npu_kernel_call *call)
{
	int64_t v = ok_index_at(idx, i);

	if (v < -(int64_t)n || v >= (int64_t)n)
		return npu_kernel_fail(call, -EINVAL,
				       "index %lld (at %llu) is out of range [-%llu, %llu)",
				       (long long)v, (unsigned long long)i,
				       (unsigned long long)n, (unsigned long long)n);
	*out = (uint64_t)(v < 0 ? v + (int64_t)n : v);
	return 0;
}

int ok_check_elements_indices(const struct npu_kernel_tensor *idx,
			      const struct npu_kernel_tensor *x, uint32_t axis, char *err,
			      size_t err_size)
{
	uint32_t d;

	for (d = 0; d < x->rank; d++)
		if (d != axis && idx->dims[d] > x->dims[d])
			return ok_fail(err, err_size,
				       "indices' dimension %u (%u) is above the data's (%u)", d,
				       idx->dims[d], x->dims[d]);
	return 0;
}

int ok_set_shape64(struct npu_kernel_tensor *t, uint32_t rank, const uint64_t *dims,
		   const char *what, char *err, size_t err_size)
{
	uint32_t d32[NPU_TENSOR_MAX_RANK], i;
	uint64_t elems = 1;

	if (rank > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "%s would have rank %u, above the limit of %d",
			       what, rank, NPU_TENSOR_MAX_RANK);
	for (i = 0; i < rank; i++) {
		if (dims[i] > UINT32_MAX)
			return ok_fail(err, err_size,
				       "%s's dimension %u (%llu) is above %u", what, i,
				       (unsigned long long)dims[i], UINT32_MAX);
		d32[i] = (uint32_t)dims[i];
		if (__builtin_mul_overflow(elems, dims[i], &elems))
			return ok_fail(err, err_size, "%s would have more than 2^64 elements", what);
	}
	return ok_set_shape(t, rank, d32);
}

int ok_onnx_dtype(int64_t onnx_type)
{
	switch (onnx_type) {
	case 1: return NPU_DTYPE_FP32;
	case 2: return NPU_DTYPE_UINT8;
	case 3: return NPU_DTYPE_INT8;
	case 4: return NPU_DTYPE_UINT16;
	case 5: return NPU_DTYPE_INT16;
	case 6: return NPU_DTYPE_INT32;
	case 7: return NPU_DTYPE_INT64;
	case 9: return NPU_DTYPE_BOOL;
	case 10: return NPU_DTYPE_FP16;
	case 11: return NPU_DTYPE_FP64;
	case 12: return NPU_DTYPE_UINT32;
	case 13: return NPU_DTYPE_UINT64;
	case 16: return NPU_DTYPE_BF16;
	}
	return -1;
}

int ok_reduction_attr(const struct npu_onnx_node *n, enum ok_reduction *out, char *err,
		      size_t err_size)
{
	static const char *const names[] = { "none", "add", "mul", "max", "min" };
	char buf[16];
	int r = npu_onnx_attr_string(n, "reduction", buf, sizeof(buf));
	size_t i;

	*out = OK_REDUCE_NONE;
	if (r == -ENOENT)
		return 0;
	if (r)
		return ok_fail(err, err_size, "the reduction attribute is not a short string");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(buf, names[i])) {
			*out = (enum ok_reduction)i;
			return 0;
		}
	return ok_fail(err, err_size,
		       "reduction \"%s\" is not one of none, add, mul, max and min", buf);
}
