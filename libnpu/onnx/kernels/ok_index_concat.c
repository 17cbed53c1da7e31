// SPDX-License-Identifier: MIT
/* Concat and Split for every dtype: blocks of bytes along one axis. */
#include <errno.h>
#include <string.h>

#include "ok_index.h"

/* Elements before and after @axis. */
static void outer_inner(const struct npu_kernel_tensor *t, uint32_t axis, uint64_t *outer,
			uint64_t *inner)
{
	uint32_t d;

	*outer = 1;
	*inner = 1;
	for (d = 0; d < axis; d++)
		*outer *= t->dims[d];
	for (d = axis + 1; d < t->rank; d++)
		*inner *= t->dims[d];
}

/* ---- Concat ------------------------------------------------------------------ */

static int concat_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *a;
	uint64_t dims[NPU_TENSOR_MAX_RANK], sum = 0;
	uint32_t axis, d;
	size_t k;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	a = in[0];
	if (!ni || !a)
		return ok_fail(err, err_size, "Concat needs at least one input");
	if (!a->rank)
		return ok_fail(err, err_size, "the inputs must have a rank of at least 1");
	e = ok_axis(st->axis, a->rank, &axis, "axis", err, err_size);
	if (e)
		return e;
	for (k = 0; k < ni; k++) {
		const struct npu_kernel_tensor *t = in[k];

		if (!t)
			return ok_fail(err, err_size, "input %zu is missing", k);
		if (t->dtype != a->dtype)
			return ok_fail(err, err_size, "input %zu is %s, input 0 is %s", k,
				       ok_dtype_name(t->dtype), ok_dtype_name(a->dtype));
		if (t->rank != a->rank)
			return ok_fail(err, err_size, "input %zu has rank %u, input 0 rank %u",
				       k, t->rank, a->rank);
		for (d = 0; d < a->rank; d++)
			if (d != axis && t->dims[d] != a->dims[d])
				return ok_fail(err, err_size,
					       "input %zu's dimension %u is %u, input 0's is %u",
					       k, d, t->dims[d], a->dims[d]);
		sum += t->dims[axis];
	}
	for (d = 0; d < a->rank; d++)
		dims[d] = d == axis ? sum : a->dims[d];
	out[0]->dtype = a->dtype;
	return ok_set_shape64(out[0], a->rank, dims, "the output", err, err_size);
}

static int concat_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_axis_state *st = state;
	size_t esz = npu_dtype_size(out[0]->dtype), k;
	uint64_t outer, inner, o, pending = 0;
	char *dst = out[0]->data;
	uint32_t axis;
	int e;

	(void)no;
	if (ok_axis(st->axis, out[0]->rank, &axis, "axis", NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "axis does not match the inputs");
	outer_inner(out[0], axis, &outer, &inner);
	for (o = 0; o < outer; o++)
		for (k = 0; k < ni; k++) {
			uint64_t n = in[k]->dims[axis] * inner;

			memcpy(dst, (const char *)in[k]->data + o * n * esz, n * esz);
			dst += n * esz;
			e = ok_tick(call, &pending, n);
			if (e)
				return e;
		}
	return 0;
}

static int concat_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			 size_t err_size)
{
	struct ok_axis_state *st;
	int64_t axis;

	(void)opaque;
	if (npu_onnx_attr_int(n, "axis", &axis)) {
		/* Concat-1 defaulted to 1; from opset 4 on the attribute is required. */
		if (npu_onnx_node_opset(n) >= 4)
			return ok_fail(err, err_size, "the axis attribute is required");
		axis = 1;
	}
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = axis;
	*state = st;
	return 0;
}

static const struct npu_kernel concat_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Concat",
	.infer = concat_infer,
	.run = concat_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_concat = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Concat",
	.since_version = 1,
	.kernel = &concat_kernel,
	.create = concat_create,
};

/* ---- Split --------------------------------------------------------------------------- */

/* The size of each of the @no outputs along @axis. */
static int split_sizes(const struct ok_split_state *st, size_t ni,
		       const struct npu_kernel_tensor *const *in, size_t no, uint32_t *axis,
		       uint64_t *size, char *err, size_t err_size)
{
	int64_t v[OK_MAX_SPLITS];
	uint64_t dim, sum = 0;
	size_t n = 0, k;
	int e;

	if (!no || no > OK_MAX_SPLITS)
		return ok_fail(err, err_size, "Split has %zu outputs, not within [1, %d]", no,
			       OK_MAX_SPLITS);
	e = ok_axis(st->axis, in[0]->rank, axis, "axis", err, err_size);
	if (e)
		return e;
	dim = in[0]->dims[*axis];
	if (ni > 1 && in[1]) {
		e = ok_read_ints(in[1], v, OK_MAX_SPLITS, &n,
				 "split (the outputs' shapes depend on it)", err, err_size);
		if (e)
			return e;
	} else if (st->num_split) {
		n = st->num_split;
		memcpy(v, st->split, n * sizeof(v[0]));
	} else if (st->num_outputs) {
		uint64_t chunk;

		if (st->num_outputs != (int64_t)no)
			return ok_fail(err, err_size, "num_outputs is %lld but the node has %zu outputs",
				       (long long)st->num_outputs, no);
		chunk = (dim + no - 1) / no;
		for (k = 0; k < no; k++) {
			size[k] = dim - sum < chunk ? dim - sum : chunk;
			sum += size[k];
		}
		return 0;
	} else {
		if (dim % no)
			return ok_fail(err, err_size,
				       "the axis' length %llu does not split into %zu equal parts",
				       (unsigned long long)dim, no);
		for (k = 0; k < no; k++)
			size[k] = dim / no;
		return 0;
	}
	if (n != no)
		return ok_fail(err, err_size, "split has %zu values but the node has %zu outputs",
			       n, no);
	for (k = 0; k < n; k++) {
		if (v[k] < 0 || (uint64_t)v[k] > dim)
			return ok_fail(err, err_size, "split[%zu] (%lld) is not within [0, %llu]",
				       k, (long long)v[k], (unsigned long long)dim);
		size[k] = (uint64_t)v[k];
		sum += size[k];
	}
	if (sum != dim)
		return ok_fail(err, err_size, "split sums to %llu, the axis' length is %llu",
			       (unsigned long long)sum, (unsigned long long)dim);
	return 0;
}

static int split_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	uint64_t size[OK_MAX_SPLITS], dims[NPU_TENSOR_MAX_RANK];
	uint32_t axis, d;
	size_t k;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, false);

	if (!in[0]->rank)
		return ok_fail(err, err_size, "the input must have a rank of at least 1");
	e = split_sizes(state, ni, in, no, &axis, size, err, err_size);
	if (e)
		return e;
	for (k = 0; k < no; k++) {
		if (!out[k])
			continue;
		for (d = 0; d < in[0]->rank; d++)
			dims[d] = d == axis ? size[k] : in[0]->dims[d];
		out[k]->dtype = in[0]->dtype;
		e = ok_set_shape64(out[k], in[0]->rank, dims, "an output", err, err_size);
		if (e)
			return e;
	}
	return 0;
}

static int split_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	uint64_t size[OK_MAX_SPLITS], outer, inner, o, pending = 0;
	size_t esz = npu_dtype_size(in[0]->dtype), k;
	const char *src = in[0]->data;
	char err[128];
	uint32_t axis;
	int e;

	e = split_sizes(state, ni, in, no, &axis, size, err, sizeof(err));
	if (e)
		return npu_kernel_fail(call, e, "%s", err);
	outer_inner(in[0], axis, &outer, &inner);
	for (o = 0; o < outer; o++)
		for (k = 0; k < no; k++) {
			uint64_t n = size[k] * inner;

			if (out[k])
				memcpy((char *)out[k]->data + o * n * esz, src, n * esz);
			src += n * esz;
			e = ok_tick(call, &pending, n);
			if (e)
				return e;
		}
	return 0;
}

static int split_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			size_t err_size)
{
	struct ok_split_state *st;
	const int64_t *split;
	size_t count = 0;

	(void)opaque;
	if (npu_onnx_attr_ints(n, "split", &split, &count))
		count = 0;
	if (count > OK_MAX_SPLITS)
		return ok_fail(err, err_size, "split has %zu values, at most %d are supported",
			       count, OK_MAX_SPLITS);
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->axis = ok_attr_i(n, "axis", 0);
	st->num_split = (uint32_t)count;
	if (count)
		memcpy(st->split, split, count * sizeof(*split));
	st->num_outputs = ok_attr_i(n, "num_outputs", 0);
	*state = st;
	return 0;
}

static const struct npu_kernel split_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Split",
	.infer = split_infer,
	.run = split_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_split = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Split",
	.since_version = 1,
	.kernel = &split_kernel,
	.create = split_create,
};
