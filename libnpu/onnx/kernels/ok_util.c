// SPDX-License-Identifier: MIT
/* Element access, broadcasting and attribute helpers of the ONNX CPU kernels. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ok_util.h"

bool ok_is_float(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP16 || dt == NPU_DTYPE_BF16 ||
	       dt == NPU_DTYPE_FP64;
}

bool ok_is_signed(enum npu_dtype dt)
{
	return ok_is_float(dt) || dt == NPU_DTYPE_INT8 || dt == NPU_DTYPE_INT16 ||
	       dt == NPU_DTYPE_INT32 || dt == NPU_DTYPE_INT64;
}

const char *ok_dtype_name(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DTYPE_FP32: return "float32";
	case NPU_DTYPE_FP16: return "float16";
	case NPU_DTYPE_BF16: return "bfloat16";
	case NPU_DTYPE_INT8: return "int8";
	case NPU_DTYPE_UINT8: return "uint8";
	case NPU_DTYPE_INT32: return "int32";
	case NPU_DTYPE_INT64: return "int64";
	case NPU_DTYPE_BOOL: return "bool";
	case NPU_DTYPE_FP64: return "float64";
	case NPU_DTYPE_INT16: return "int16";
	case NPU_DTYPE_UINT16: return "uint16";
	case NPU_DTYPE_UINT32: return "uint32";
	case NPU_DTYPE_UINT64: return "uint64";
	}
	return "?";
}

double ok_get_f(const struct npu_kernel_tensor *t, uint64_t i)
{
	const void *p = t->data;

	switch (t->dtype) {
	case NPU_DTYPE_FP32: return ((const float *)p)[i];
	case NPU_DTYPE_FP16: return ok_fp16_to_f32(((const uint16_t *)p)[i]);
	case NPU_DTYPE_BF16: return ok_bf16_to_f32(((const uint16_t *)p)[i]);
	case NPU_DTYPE_FP64: return ((const double *)p)[i];
	case NPU_DTYPE_INT8: return ((const int8_t *)p)[i];
	case NPU_DTYPE_UINT8: return ((const uint8_t *)p)[i];
	case NPU_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
	case NPU_DTYPE_INT16: return ((const int16_t *)p)[i];
	case NPU_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case NPU_DTYPE_INT32: return ((const int32_t *)p)[i];
	case NPU_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	case NPU_DTYPE_INT64: return (double)((const int64_t *)p)[i];
	case NPU_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
	}
	return 0;
}

static int64_t f_to_i64(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

int64_t ok_get_i(const struct npu_kernel_tensor *t, uint64_t i)
{
	const void *p = t->data;

	switch (t->dtype) {
	case NPU_DTYPE_INT8: return ((const int8_t *)p)[i];
	case NPU_DTYPE_UINT8: return ((const uint8_t *)p)[i];
	case NPU_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
	case NPU_DTYPE_INT16: return ((const int16_t *)p)[i];
	case NPU_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case NPU_DTYPE_INT32: return ((const int32_t *)p)[i];
	case NPU_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	case NPU_DTYPE_INT64: return ((const int64_t *)p)[i];
	case NPU_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
	default:
		return f_to_i64(ok_get_f(t, i));
	}
}

uint64_t ok_get_u(const struct npu_kernel_tensor *t, uint64_t i)
{
	if (t->dtype == NPU_DTYPE_UINT64)
		return ((const uint64_t *)t->data)[i];
	return (uint64_t)ok_get_i(t, i);
}

void ok_set_i(struct npu_kernel_tensor *t, uint64_t i, int64_t v)
{
	void *p = t->data;

	switch (t->dtype) {
	case NPU_DTYPE_FP32: ((float *)p)[i] = (float)v; break;
	case NPU_DTYPE_FP16: ((uint16_t *)p)[i] = ok_f32_to_fp16((float)v); break;
	case NPU_DTYPE_BF16: ((uint16_t *)p)[i] = ok_f32_to_bf16((float)v); break;
	case NPU_DTYPE_FP64: ((double *)p)[i] = (double)v; break;
	case NPU_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case NPU_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPU_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case NPU_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; break;
	case NPU_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case NPU_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	case NPU_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case NPU_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
	case NPU_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	}
}

void ok_set_f(struct npu_kernel_tensor *t, uint64_t i, double v)
{
	void *p = t->data;

	switch (t->dtype) {
	case NPU_DTYPE_FP32: ((float *)p)[i] = (float)v; break;
	case NPU_DTYPE_FP16: ((uint16_t *)p)[i] = ok_f32_to_fp16((float)v); break;
	case NPU_DTYPE_BF16: ((uint16_t *)p)[i] = ok_f32_to_bf16((float)v); break;
	case NPU_DTYPE_FP64: ((double *)p)[i] = v; break;
	case NPU_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case NPU_DTYPE_UINT64:
		if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) {
			((uint64_t *)p)[i] = (uint64_t)v;
			break;
		}
		ok_set_i(t, i, f_to_i64(v));
		break;
	default:
		ok_set_i(t, i, isfinite(v) ? f_to_i64(v) : 0);
		break;
	}
}

/* ---- Shapes ---------------------------------------------------------------- */

uint64_t ok_elems(const struct npu_kernel_tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

int ok_set_shape(struct npu_kernel_tensor *t, uint32_t rank, const uint32_t *dims)
{
	uint32_t i;

	if (rank > NPU_TENSOR_MAX_RANK)
		return -EINVAL;
	t->rank = rank;
	for (i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	t->elems = ok_elems(t);
	return 0;
}

int ok_fail(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int ok_broadcast(size_t n, const struct npu_kernel_tensor *const *in,
		 struct npu_kernel_tensor *out, char *err, size_t err_size)
{
	uint32_t rank = 0, dims[NPU_TENSOR_MAX_RANK], d;
	size_t k;

	for (k = 0; k < n; k++)
		if (in[k] && in[k]->rank > rank)
			rank = in[k]->rank;
	for (d = 0; d < rank; d++)
		dims[d] = 1;
	for (k = 0; k < n; k++) {
		const struct npu_kernel_tensor *t = in[k];

		if (!t)
			continue;
		for (d = 0; d < t->rank; d++) {
			uint32_t o = rank - t->rank + d, v = t->dims[d];

			if (v == dims[o] || v == 1)
				continue;
			if (dims[o] != 1)
				return ok_fail(err, err_size,
					       "input %zu's dimension %u (%u) does not broadcast with %u",
					       k, d, v, dims[o]);
			dims[o] = v;
		}
	}
	return ok_set_shape(out, rank, dims);
}

void ok_strides(const struct npu_kernel_tensor *t, uint64_t *stride)
{
	uint64_t s = 1;
	uint32_t d;

	for (d = t->rank; d-- > 0;) {
		stride[d] = s;
		s *= t->dims[d];
	}
}

void ok_bcast_init(struct ok_bcast *b, const struct npu_kernel_tensor *t,
		   const struct npu_kernel_tensor *out)
{
	uint64_t s = 1;
	uint32_t d;

	b->rank = out->rank;
	for (d = out->rank; d-- > 0;) {
		uint32_t td = d + t->rank >= out->rank ? d + t->rank - out->rank : UINT32_MAX;

		b->dims[d] = out->dims[d];
		if (td == UINT32_MAX || t->dims[td] == 1) {
			b->stride[d] = 0;
		} else {
			b->stride[d] = s;
		}
		if (td != UINT32_MAX)
			s *= t->dims[td];
	}
}

uint64_t ok_bcast_index(const struct ok_bcast *b, uint64_t i)
{
	uint64_t idx = 0;
	uint32_t d;

	for (d = b->rank; d-- > 0;) {
		idx += (i % b->dims[d]) * b->stride[d];
		i /= b->dims[d];
	}
	return idx;
}

int ok_axis(int64_t axis, uint32_t rank, uint32_t *out, const char *what,
	    char *err, size_t err_size)
{
	if (axis < -(int64_t)rank || axis >= (int64_t)rank)
		return ok_fail(err, err_size, "%s %lld is out of range [-%u, %u)", what,
			       (long long)axis, rank, rank);
	*out = (uint32_t)(axis < 0 ? axis + rank : axis);
	return 0;
}

int ok_read_ints(const struct npu_kernel_tensor *t, int64_t *v, size_t max,
		 size_t *n, const char *what, char *err, size_t err_size)
{
	uint64_t i, cnt;

	if (!t->data)
		return ok_fail(err, err_size, "%s must be a constant", what);
	if (ok_is_float(t->dtype))
		return ok_fail(err, err_size, "%s must be integers, not %s", what,
			       ok_dtype_name(t->dtype));
	cnt = ok_elems(t);
	if (cnt > max)
		return ok_fail(err, err_size, "%s has %llu values, at most %zu are supported",
			       what, (unsigned long long)cnt, max);
	for (i = 0; i < cnt; i++)
		v[i] = ok_get_i(t, i);
	*n = (size_t)cnt;
	return 0;
}

/* ---- Attributes -------------------------------------------------------------- */

int64_t ok_attr_i(const struct npu_onnx_node *n, const char *name, int64_t def)
{
	int64_t v;

	return npu_onnx_attr_int(n, name, &v) ? def : v;
}

float ok_attr_f(const struct npu_onnx_node *n, const char *name, float def)
{
	float v;

	return npu_onnx_attr_float(n, name, &v) ? def : v;
}

void *ok_state_alloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

void ok_state_free(void *state)
{
	free(state);
}
