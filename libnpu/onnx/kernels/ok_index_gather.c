// SPDX-License-Identifier: MIT
/* Gather, GatherElements and GatherND for every dtype, with negative indices. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_index.h"

/* One element of @esz bytes: the common sizes inline. */
static inline void copy_elem(char *dst, const char *src, size_t esz)
{
	switch (esz) {
	case 1: *dst = *src; break;
	case 2: memcpy(dst, src, 2); break;
	case 4: memcpy(dst, src, 4); break;
	case 8: memcpy(dst, src, 8); break;
	default: memcpy(dst, src, esz); break;
	}
}

/* Index @i of @idx normalised into [0, n), or a run error naming it. */
static uint64_t prod(const uint32_t *dims, uint32_t from, uint32_t to)
{
	uint64_t p = 1;

	for (; from < to; from++)
		p *= dims[from];
	return p;
}

/* ---- Gather -------------------------------------------------------------------- */

static int gather_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x, *idx;
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t axis, d, r = 0;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	x = in[0];
	idx = in[1];
	if (!x->rank)
		return ok_fail(err, err_size, "the data must have a rank of at least 1");
	e = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
	if (!e)
		e = ok_check_indices(idx, "indices", err, err_size);
	if (e)
		return e;
	if (x->rank + idx->rank - 1 > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "the output would have rank %u, above the limit of %d",
			       x->rank + idx->rank - 1, NPU_TENSOR_MAX_RANK);
	for (d = 0; d < axis; d++)
		dims[r++] = x->dims[d];
	for (d = 0; d < idx->rank; d++)
		dims[r++] = idx->dims[d];
	for (d = axis + 1; d < x->rank; d++)
		dims[r++] = x->dims[d];
	out[0]->dtype = x->dtype;
	return ok_set_shape64(out[0], r, dims, "the output", err, err_size);
}

static int gather_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *idx = in[1];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t outer, inner, n, o, j, *rows, pending = 0;
	char *dst = out[0]->data;
	uint32_t axis;
	int e = 0;

	(void)ni;
	(void)no;
	if (ok_axis(st->axis, x->rank, &axis, "axis", NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "axis %lld is out of range",
				       (long long)st->axis);
	outer = prod(x->dims, 0, axis);
	inner = prod(x->dims, axis + 1, x->rank) * esz;
	n = x->dims[axis];
	/* Checked and normalised once, reused for every outer block. */
	rows = malloc(idx->elems * sizeof(*rows));
	if (!rows)
		return npu_kernel_fail(call, -ENOMEM, "no memory for %llu indices",
				       (unsigned long long)idx->elems);
	for (j = 0; j < idx->elems && !e; j++)
		e = ok_fetch_index(idx, j, n, &rows[j], call);
	for (o = 0; o < outer && !e; o++) {
		const char *base = (const char *)x->data + o * n * inner;
		uint64_t at, end;

		/* In parts of OK_POLL_EVERY indices, so a deadline stops a long one. */
		for (at = 0; at < idx->elems && !e; at = end) {
			end = idx->elems - at < OK_POLL_EVERY ? idx->elems : at + OK_POLL_EVERY;
#define ROWS(SZ)							\
			for (j = at; j < end; j++, dst += (SZ))		\
				memcpy(dst, base + rows[j] * (SZ), (SZ));	\
			break
			switch (inner) {
			case 1: ROWS(1);
			case 2: ROWS(2);
			case 4: ROWS(4);
			case 8: ROWS(8);
			default: ROWS(inner);
			}
#undef ROWS
			e = ok_tick(call, &pending, (end - at) * (inner / esz + 1));
		}
	}
	free(rows);
	return e;
}

static int axis_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
		       size_t err_size)
{
	struct ok_axis_state *st;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = ok_attr_i(n, "axis", 0);
	*state = st;
	return 0;
}

static const struct npu_kernel gather_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Gather",
	.infer = gather_infer,
	.run = gather_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_gather = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Gather",
	.since_version = 1,
	.kernel = &gather_kernel,
	.create = axis_create,
};

/* ---- GatherElements -------------------------------------------------------------- */

static int gather_elements_infer(const void *state, size_t ni,
				 const struct npu_kernel_tensor *const *in, size_t no,
				 struct npu_kernel_tensor *const *out, char *err,
				 size_t err_size)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x, *idx;
	uint32_t axis;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	x = in[0];
	idx = in[1];
	if (!x->rank)
		return ok_fail(err, err_size, "the data must have a rank of at least 1");
	e = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
	if (!e)
		e = ok_check_indices(idx, "indices", err, err_size);
	if (e)
		return e;
	if (idx->rank != x->rank)
		return ok_fail(err, err_size, "indices has rank %u, the data rank %u", idx->rank,
			       x->rank);
	e = ok_check_elements_indices(idx, x, axis, err, err_size);
	if (e)
		return e;
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], idx->rank, idx->dims);
}

static int gather_elements_run(const void *state, size_t ni,
			       const struct npu_kernel_tensor *const *in, size_t no,
			       struct npu_kernel_tensor *const *out,
			       struct npu_kernel_call *call)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *idx = in[1];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t s[NPU_TENSOR_MAX_RANK], c[NPU_TENSOR_MAX_RANK] = { 0 }, base = 0, i, k, n,
		pending = 0;
	char *dst = out[0]->data;
	uint32_t axis, r = x->rank;
	int e;

	(void)ni;
	(void)no;
	if (ok_axis(st->axis, r, &axis, "axis", NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "axis %lld is out of range",
				       (long long)st->axis);
	ok_strides(x, s);
	n = x->dims[axis];
	/* base: the element's offset without its axis coordinate. */
	for (i = 0; i < idx->elems; i++) {
		e = ok_fetch_index(idx, i, n, &k, call);
		if (e)
			return e;
		copy_elem(dst, (const char *)x->data + (base + k * s[axis]) * esz, esz);
		dst += esz;
		ok_elements_step(c, &base, s, idx->dims, r, axis);
		e = ok_tick(call, &pending, 1);
		if (e)
			return e;
	}
	return 0;
}

static const struct npu_kernel gather_elements_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "GatherElements",
	.infer = gather_elements_infer,
	.run = gather_elements_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_gather_elements = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "GatherElements",
	.since_version = 11,
	.kernel = &gather_elements_kernel,
	.create = axis_create,
};

/* ---- GatherND -------------------------------------------------------------------- */

static int gather_nd_check(const struct ok_gather_nd_state *st, const struct npu_kernel_tensor *x,
			   const struct npu_kernel_tensor *idx, char *err, size_t err_size)
{
	int64_t b = st->batch_dims;
	uint32_t d, k;
	int e = ok_check_indices(idx, "indices", err, err_size);

	if (e)
		return e;
	if (!x->rank || !idx->rank)
		return ok_fail(err, err_size, "data and indices must have a rank of at least 1");
	if (b < 0 || b >= x->rank || b >= idx->rank)
		return ok_fail(err, err_size,
			       "batch_dims %lld is not below the ranks of the data (%u) and indices (%u)",
			       (long long)b, x->rank, idx->rank);
	for (d = 0; d < b; d++)
		if (x->dims[d] != idx->dims[d])
			return ok_fail(err, err_size,
				       "batch dimension %u differs: %u in the data, %u in indices", d,
				       x->dims[d], idx->dims[d]);
	k = idx->dims[idx->rank - 1];
	if (k < 1 || k > x->rank - b)
		return ok_fail(err, err_size,
			       "indices' last dimension (%u) is not within [1, %lld] (the data's rank less batch_dims)",
			       k, (long long)(x->rank - b));
	return 0;
}

static int gather_nd_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			   size_t no, struct npu_kernel_tensor *const *out, char *err,
			   size_t err_size)
{
	const struct ok_gather_nd_state *st = state;
	const struct npu_kernel_tensor *x, *idx;
	uint64_t dims[2 * NPU_TENSOR_MAX_RANK];
	uint32_t d, r = 0, k;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	x = in[0];
	idx = in[1];
	e = gather_nd_check(st, x, idx, err, err_size);
	if (e)
		return e;
	k = idx->dims[idx->rank - 1];
	for (d = 0; d + 1 < idx->rank; d++)
		dims[r++] = idx->dims[d];
	for (d = (uint32_t)st->batch_dims + k; d < x->rank; d++)
		dims[r++] = x->dims[d];
	out[0]->dtype = x->dtype;
	return ok_set_shape64(out[0], r, dims, "the output", err, err_size);
}

static int gather_nd_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			 size_t no, struct npu_kernel_tensor *const *out,
			 struct npu_kernel_call *call)
{
	const struct ok_gather_nd_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *idx = in[1];
	size_t esz = npu_dtype_size(x->dtype);
	uint32_t b = (uint32_t)st->batch_dims, k = idx->dims[idx->rank - 1], j;
	uint64_t s[NPU_TENSOR_MAX_RANK], batches, tuples, slice, bstride, bt, t, pending = 0;
	char *dst = out[0]->data;
	int e;

	(void)ni;
	(void)no;
	if (gather_nd_check(st, x, idx, NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "the indices do not match the data");
	ok_strides(x, s);
	batches = prod(x->dims, 0, b);
	tuples = prod(idx->dims, b, idx->rank - 1);
	slice = prod(x->dims, b + k, x->rank);
	bstride = prod(x->dims, b, x->rank);
	for (bt = 0; bt < batches; bt++)
		for (t = 0; t < tuples; t++) {
			uint64_t off = bt * bstride, at = (bt * tuples + t) * k, v;

			for (j = 0; j < k; j++) {
				e = ok_fetch_index(idx, at + j, x->dims[b + j], &v, call);
				if (e)
					return e;
				off += v * s[b + j];
			}
			memcpy(dst, (const char *)x->data + off * esz, slice * esz);
			dst += slice * esz;
			e = ok_tick(call, &pending, slice + k);
			if (e)
				return e;
		}
	return 0;
}

static int gather_nd_create(const struct npu_onnx_node *n, void *opaque, void **state,
			    char *err, size_t err_size)
{
	struct ok_gather_nd_state *st;

	(void)opaque;
	(void)err;
	(void)err_size;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->batch_dims = ok_attr_i(n, "batch_dims", 0);
	*state = st;
	return 0;
}

static const struct npu_kernel gather_nd_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "GatherND",
	.infer = gather_nd_infer,
	.run = gather_nd_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_gather_nd = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "GatherND",
	.since_version = 11,
	.kernel = &gather_nd_kernel,
	.create = gather_nd_create,
};
