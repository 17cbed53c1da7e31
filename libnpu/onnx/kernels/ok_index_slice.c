// SPDX-License-Identifier: MIT
/* Slice for every dtype: starts, ends, axes and steps clamped as ONNX says, a strided view. */
#include <errno.h>
#include <string.h>

#include "ok_index.h"

/* Where each axis starts, how far it steps and how many elements it keeps. */
struct slice_plan {
	int64_t start[NPU_TENSOR_MAX_RANK], step[NPU_TENSOR_MAX_RANK];
	uint64_t count[NPU_TENSOR_MAX_RANK];
};

static int read_list(const struct npu_kernel_tensor *const *in, size_t ni, size_t i,
		     int64_t *v, size_t *n, const char *what, char *err, size_t err_size)
{
	if (i >= ni || !in[i]) {
		*n = SIZE_MAX;	/* absent */
		return 0;
	}
	if (in[i]->rank != 1)
		return ok_fail(err, err_size, "%s must be 1-D, not of rank %u", what, in[i]->rank);
	return ok_read_ints(in[i], v, NPU_TENSOR_MAX_RANK, n, what, err, err_size);
}

static void clamp_axis(uint64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first,
		       uint64_t *count)
{
	int64_t d = (int64_t)dim;

	if (start < 0)
		start += d;
	if (end < 0)
		end += d;
	if (step > 0) {
		start = start < 0 ? 0 : start > d ? d : start;
		end = end < 0 ? 0 : end > d ? d : end;
		*count = end > start ? ((uint64_t)(end - start) - 1) / (uint64_t)step + 1 : 0;
	} else {
		uint64_t mag = (uint64_t)0 - (uint64_t)step;

		start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
		end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
		*count = start > end ? ((uint64_t)(start - end) - 1) / mag + 1 : 0;
	}
	*first = start;
}

static int slice_plan(const struct ok_slice_state *st, size_t ni,
		      const struct npu_kernel_tensor *const *in, struct slice_plan *p,
		      char *err, size_t err_size)
{
	int64_t starts[NPU_TENSOR_MAX_RANK], ends[NPU_TENSOR_MAX_RANK],
		axes[NPU_TENSOR_MAX_RANK], steps[NPU_TENSOR_MAX_RANK];
	const struct npu_kernel_tensor *x = in[0];
	bool seen[NPU_TENSOR_MAX_RANK] = { false };
	size_t n, ne, na, ns, k;
	uint32_t d;
	int e;

	if (st->from_inputs) {
		if (ni < 3 || !in[1] || !in[2])
			return ok_fail(err, err_size, "starts and ends are required");
		e = read_list(in, ni, 1, starts, &n, "starts (the output's shape depends on it)",
			      err, err_size);
		if (!e)
			e = read_list(in, ni, 2, ends, &ne, "ends", err, err_size);
		if (!e)
			e = read_list(in, ni, 3, axes, &na, "axes", err, err_size);
		if (!e)
			e = read_list(in, ni, 4, steps, &ns, "steps", err, err_size);
		if (e)
			return e;
	} else {
		n = ne = st->num;
		na = st->has_axes ? st->num : SIZE_MAX;
		ns = SIZE_MAX;
		memcpy(starts, st->starts, sizeof(starts));
		memcpy(ends, st->ends, sizeof(ends));
		memcpy(axes, st->axes, sizeof(axes));
	}
	if (ne != n || (na != SIZE_MAX && na != n) || (ns != SIZE_MAX && ns != n))
		return ok_fail(err, err_size,
			       "starts, ends, axes and steps must have the same length (%zu, %zu)",
			       n, ne);
	if (n > x->rank)
		return ok_fail(err, err_size, "starts has %zu values for an input of rank %u", n,
			       x->rank);
	for (d = 0; d < x->rank; d++) {
		p->start[d] = 0;
		p->step[d] = 1;
		p->count[d] = x->dims[d];
	}
	for (k = 0; k < n; k++) {
		int64_t step = ns == SIZE_MAX ? 1 : steps[k];
		uint32_t axis = (uint32_t)k;

		if (na != SIZE_MAX) {
			e = ok_axis(axes[k], x->rank, &axis, "an axis", err, err_size);
			if (e)
				return e;
		}
		if (seen[axis])
			return ok_fail(err, err_size, "axis %u is sliced twice", axis);
		seen[axis] = true;
		if (!step)
			return ok_fail(err, err_size, "steps[%zu] is 0", k);
		clamp_axis(x->dims[axis], starts[k], ends[k], step, &p->start[axis],
			   &p->count[axis]);
		/* One element needs no step: a huge one would overflow its byte stride. */
		p->step[axis] = p->count[axis] <= 1 ? 1 : step;
	}
	return 0;
}

static int slice_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out, char *err,
		       size_t err_size)
{
	struct slice_plan p;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	e = slice_plan(state, ni, in, &p, err, err_size);
	if (e)
		return e;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape64(out[0], in[0]->rank, p.count, "the output", err, err_size);
}

static int slice_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	uint64_t s[NPU_TENSOR_MAX_RANK];
	size_t esz = npu_dtype_size(x->dtype);
	struct ok_view v = { .rank = x->rank };
	struct slice_plan p;
	int64_t offset = 0;
	char err[160];
	uint32_t d;
	int e;

	(void)no;
	e = slice_plan(state, ni, in, &p, err, sizeof(err));
	if (e)
		return npu_kernel_fail(call, e, "%s", err);
	ok_strides(x, s);
	for (d = 0; d < x->rank; d++) {
		offset += p.start[d] * (int64_t)s[d];
		v.dims[d] = p.count[d];
		v.stride[d] = p.step[d] * (int64_t)s[d];
	}
	return ok_view_copy(out[0]->data, (const char *)x->data + offset * (int64_t)esz, esz, &v,
			    call);
}

static int slice_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			size_t err_size)
{
	struct ok_slice_state attrs = { 0 }, *st;
	const int64_t *starts, *ends, *axes;
	size_t ns, ne, na;

	(void)opaque;
	if (npu_onnx_node_opset(n) >= 10) {
		attrs.from_inputs = true;
	} else {
		if (npu_onnx_attr_ints(n, "starts", &starts, &ns) ||
		    npu_onnx_attr_ints(n, "ends", &ends, &ne))
			return ok_fail(err, err_size, "the starts and ends attributes are required");
		attrs.has_axes = !npu_onnx_attr_ints(n, "axes", &axes, &na);
		if (ns != ne || (attrs.has_axes && na != ns))
			return ok_fail(err, err_size,
				       "starts, ends and axes must have the same length");
		if (ns > NPU_TENSOR_MAX_RANK)
			return ok_fail(err, err_size,
				       "starts has %zu values, above the rank limit of %d", ns,
				       NPU_TENSOR_MAX_RANK);
		attrs.num = (uint32_t)ns;
		memcpy(attrs.starts, starts, ns * sizeof(*starts));
		memcpy(attrs.ends, ends, ns * sizeof(*ends));
		if (attrs.has_axes)
			memcpy(attrs.axes, axes, ns * sizeof(*axes));
	}
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	*st = attrs;
	*state = st;
	return 0;
}

static const struct npu_kernel slice_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Slice",
	.infer = slice_infer,
	.run = slice_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_slice = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Slice",
	.since_version = 1,
	.kernel = &slice_kernel,
	.create = slice_create,
};
