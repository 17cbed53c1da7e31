// SPDX-License-Identifier: MIT
/*
 * ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
 *
 * One walk of the input in order adds each element into the accumulator
 * of its output element.  Integer inputs accumulate in 64-bit integers
 * (wrapping, as onnxruntime's do) so that int64 sums stay exact; floats,
 * and the logarithmic and root reductions of integers, in doubles.
 * noop_with_empty_axes with no axes copies the input, as the spec words
 * it and as onnxruntime does for an empty axes tensor: ReduceSumSquare
 * does not square then.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_reduce.h"

/* Which of the input's axes are reduced. */
static int reduce_mask(const struct ok_reduce_state *s, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, bool *mask,
		       char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	int64_t axes[NPU_TENSOR_MAX_RANK];
	size_t n = 0, i;
	uint32_t d;
	int rc;

	if (s->axes_input) {
		if (num_inputs > 1 && in[1]) {
			if (in[1]->rank > 1)
				return ok_fail(err, err_size, "axes must be 1-D, not of rank %u",
					       in[1]->rank);
			rc = ok_read_ints(in[1], axes, NPU_TENSOR_MAX_RANK, &n, "axes", err,
					  err_size);
			if (rc)
				return rc;
		}
	} else {
		n = s->num_axes;
		memcpy(axes, s->axes, n * sizeof(axes[0]));
	}
	for (d = 0; d < x->rank; d++)
		mask[d] = n == 0 && !(s->axes_input && s->noop_with_empty_axes);
	for (i = 0; i < n; i++) {
		rc = ok_axis(axes[i], x->rank, &d, "axis", err, err_size);
		if (rc)
			return rc;
		if (mask[d])
			return ok_fail(err, err_size, "axis %lld is listed twice",
				       (long long)axes[i]);
		mask[d] = true;
	}
	return 0;
}

/* noop_with_empty_axes in effect: no axes at all, not even "all of them". */
static bool reduce_is_noop(const struct ok_reduce_state *s, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in)
{
	if (!s->axes_input || !s->noop_with_empty_axes)
		return false;
	return num_inputs < 2 || !in[1] || in[1]->elems == 0;
}

static bool reduce_in_integers(const struct ok_reduce_state *s, enum npu_dtype dt)
{
	if (ok_is_float(dt))
		return false;
	return s->kind != OK_REDUCE_L2 && s->kind != OK_REDUCE_LOG_SUM &&
	       s->kind != OK_REDUCE_LOG_SUM_EXP;
}

static int reduce_shape(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_reduce_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	bool mask[NPU_TENSOR_MAX_RANK];
	uint32_t dims[NPU_TENSOR_MAX_RANK], rank = 0, d;
	int rc;

	(void)num_outputs;
	if (!x)
		return ok_fail(err, err_size, "the data input is missing");
	rc = ok_red_check_numeric("the data", x->dtype, err, err_size);
	if (rc)
		return rc;
	if (!s->axes_input && num_inputs > 1 && in[1])
		return ok_fail(err, err_size,
			       "this opset takes axes as an attribute, not as an input");
	rc = reduce_mask(s, num_inputs, in, mask, err, err_size);
	if (rc)
		return rc;
	for (d = 0; d < x->rank; d++) {
		if (!mask[d])
			dims[rank++] = x->dims[d];
		else if (s->keepdims)
			dims[rank++] = 1;
	}
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], rank, dims);
}

OK_RED_INFER(reduce_infer, reduce_shape, false)

static uint64_t reduce_work(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    const struct npu_kernel_tensor *const *out)
{
	const struct ok_reduce_state *s = state;

	(void)num_inputs;
	(void)num_outputs;
	/* LogSumExp walks its input twice */
	return in[0]->elems * (s->kind == OK_REDUCE_LOG_SUM_EXP ? 2 : 1) + out[0]->elems;
}

/* Output strides as seen from the input's axes: 0 along reduced ones. */
static void reduce_strides(const struct npu_kernel_tensor *x, const bool *mask, uint64_t *ostride)
{
	uint64_t st = 1;
	uint32_t d;

	for (d = x->rank; d-- > 0;) {
		ostride[d] = mask[d] ? 0 : st;
		if (!mask[d])
			st *= x->dims[d];
	}
}

/* The next input element's output index *o, counters in @ctr. */
static inline void reduce_advance(const struct npu_kernel_tensor *x, const uint64_t *ostride,
				  uint32_t *ctr, uint64_t *o)
{
	uint32_t d;

	for (d = x->rank; d-- > 0;) {
		if (++ctr[d] < x->dims[d]) {
			*o += ostride[d];
			return;
		}
		*o -= ostride[d] * (x->dims[d] - 1);
		ctr[d] = 0;
	}
}

static int reduce_run_int(const struct ok_reduce_state *s, const struct npu_kernel_tensor *x,
			  const uint64_t *ostride, uint64_t count, struct npu_kernel_tensor *y,
			  struct npu_kernel_call *call)
{
	uint32_t ctr[NPU_TENSOR_MAX_RANK] = { 0 };
	uint64_t *acc, i, o = 0, done = 0;
	int64_t init = 0;
	int rc = 0;

	acc = malloc(y->elems * sizeof(*acc));
	if (!acc)
		return npu_kernel_fail(call, -ENOMEM, "no memory for %llu accumulators",
				       (unsigned long long)y->elems);
	if (s->kind == OK_REDUCE_PROD)
		init = 1;
	else if (s->kind == OK_REDUCE_MAX)
		init = INT64_MIN;
	else if (s->kind == OK_REDUCE_MIN)
		init = INT64_MAX;
	for (i = 0; i < y->elems; i++)
		acc[i] = (uint64_t)init;
	for (i = 0; i < x->elems; i++) {
		int64_t v = ok_get_i(x, i);
		uint64_t u = (uint64_t)v;

		switch (s->kind) {
		case OK_REDUCE_MAX:
			if (v > (int64_t)acc[o])
				acc[o] = u;
			break;
		case OK_REDUCE_MIN:
			if (v < (int64_t)acc[o])
				acc[o] = u;
			break;
		case OK_REDUCE_PROD:
			acc[o] *= u;
			break;
		case OK_REDUCE_L1:
			acc[o] += v < 0 ? -u : u;
			break;
		case OK_REDUCE_SUM_SQUARE:
			acc[o] += u * u;
			break;
		default:
			acc[o] += u;
			break;
		}
		reduce_advance(x, ostride, ctr, &o);
		rc = ok_tick(call, &done, 1);
		if (rc)
			goto out;
	}
	for (i = 0; i < y->elems; i++) {
		int64_t v = (int64_t)acc[i];

		/* count >= 1 (reduce_run) and fits: no overflow */
		if (s->kind == OK_REDUCE_MEAN)
			v /= (int64_t)count;
		ok_set_i(y, i, v);
	}
out:
	free(acc);
	return rc;
}

static int reduce_run_float(const struct ok_reduce_state *s, const struct npu_kernel_tensor *x,
			    const uint64_t *ostride, uint64_t count, struct npu_kernel_tensor *y,
			    struct npu_kernel_call *call)
{
	uint32_t ctr[NPU_TENSOR_MAX_RANK] = { 0 };
	double *acc, *top = NULL, init = 0;
	uint64_t i, o = 0, done = 0;
	int rc = 0;

	acc = malloc(y->elems * sizeof(*acc));
	if (s->kind == OK_REDUCE_LOG_SUM_EXP)
		top = malloc(y->elems * sizeof(*top));
	if (!acc || (s->kind == OK_REDUCE_LOG_SUM_EXP && !top)) {
		rc = npu_kernel_fail(call, -ENOMEM, "no memory for %llu accumulators",
				     (unsigned long long)y->elems);
		goto out;
	}
	if (s->kind == OK_REDUCE_PROD)
		init = 1;
	else if (s->kind == OK_REDUCE_MAX)
		init = -INFINITY;
	else if (s->kind == OK_REDUCE_MIN)
		init = INFINITY;
	for (i = 0; i < y->elems; i++)
		acc[i] = init;
	if (top) {
		/* exp(x - max) cannot overflow */
		for (i = 0; i < y->elems; i++)
			top[i] = -INFINITY;
		for (i = 0; i < x->elems; i++) {
			double v = ok_red_get(x, i);

			if (v > top[o] || isnan(v))
				top[o] = v;
			reduce_advance(x, ostride, ctr, &o);
			rc = ok_tick(call, &done, 1);
			if (rc)
				goto out;
		}
		for (i = 0; i < y->elems; i++)
			if (!isfinite(top[i]))
				top[i] = isnan(top[i]) ? top[i] : 0;
	}
	for (i = 0; i < x->elems; i++) {
		double v = ok_red_get(x, i);

		switch (s->kind) {
		case OK_REDUCE_MAX:
			if (v > acc[o] || isnan(v))
				acc[o] = v;
			break;
		case OK_REDUCE_MIN:
			if (v < acc[o] || isnan(v))
				acc[o] = v;
			break;
		case OK_REDUCE_PROD:
			acc[o] *= v;
			break;
		case OK_REDUCE_L1:
			acc[o] += fabs(v);
			break;
		case OK_REDUCE_L2:
		case OK_REDUCE_SUM_SQUARE:
			acc[o] += v * v;
			break;
		case OK_REDUCE_LOG_SUM_EXP:
			acc[o] += exp(v - top[o]);
			break;
		default:
			acc[o] += v;
			break;
		}
		reduce_advance(x, ostride, ctr, &o);
		rc = ok_tick(call, &done, 1);
		if (rc)
			goto out;
	}
	for (i = 0; i < y->elems; i++) {
		double v = acc[i];

		switch (s->kind) {
		case OK_REDUCE_MEAN:
			v /= (double)count;
			break;
		case OK_REDUCE_L2:
			v = sqrt(v);
			break;
		case OK_REDUCE_LOG_SUM:
			v = log(v);
			break;
		case OK_REDUCE_LOG_SUM_EXP:
			v = top[i] + log(v);
			break;
		default:
			break;
		}
		ok_red_set(y, i, v);
	}
out:
	free(top);
	free(acc);
	return rc;
}

static int reduce_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_reduce_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t ostride[NPU_TENSOR_MAX_RANK], count = 1;
	bool mask[NPU_TENSOR_MAX_RANK];
	char err[160];
	uint32_t d;

	(void)num_outputs;
	if (reduce_mask(s, num_inputs, in, mask, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	if (reduce_is_noop(s, num_inputs, in)) {
		memcpy(out[0]->data, x->data, x->elems * npu_dtype_size(x->dtype));
		return 0;
	}
	reduce_strides(x, mask, ostride);
	for (d = 0; d < x->rank; d++)
		if (mask[d])
			count *= x->dims[d];
	if (reduce_in_integers(s, x->dtype)) {
		/* A float mean of nothing is NaN; an integer one has no value. */
		if (s->kind == OK_REDUCE_MEAN && !count && out[0]->elems)
			return npu_kernel_fail(call, -EDOM,
					       "the mean of integers over an empty axis has no value");
		return reduce_run_int(s, x, ostride, count, out[0], call);
	}
	return reduce_run_float(s, x, ostride, count, out[0], call);
}

#define REDUCE_KERNEL(k, op_type)                                              \
	[k] = {                                                                \
		.size = sizeof(struct npu_kernel),                             \
		.name = op_type,                                               \
		.infer = reduce_infer,                                         \
		.work = reduce_work,                                           \
		.run = reduce_run,                                             \
		.release = ok_state_free,                                      \
	}

const struct npu_kernel ok_reduce_kernels[10] = {
	REDUCE_KERNEL(OK_REDUCE_SUM, "ReduceSum"),
	REDUCE_KERNEL(OK_REDUCE_MEAN, "ReduceMean"),
	REDUCE_KERNEL(OK_REDUCE_MAX, "ReduceMax"),
	REDUCE_KERNEL(OK_REDUCE_MIN, "ReduceMin"),
	REDUCE_KERNEL(OK_REDUCE_PROD, "ReduceProd"),
	REDUCE_KERNEL(OK_REDUCE_L1, "ReduceL1"),
	REDUCE_KERNEL(OK_REDUCE_L2, "ReduceL2"),
	REDUCE_KERNEL(OK_REDUCE_LOG_SUM, "ReduceLogSum"),
	REDUCE_KERNEL(OK_REDUCE_LOG_SUM_EXP, "ReduceLogSumExp"),
	REDUCE_KERNEL(OK_REDUCE_SUM_SQUARE, "ReduceSumSquare"),
};

/*
 * Axes became an input in opset 13 for ReduceSum and in opset 18 for
 * the others; noop_with_empty_axes came with them.
 */
static int reduce_create(const struct npu_onnx_node *node, void *opaque, void **state,
			 char *err, size_t err_size)
{
	enum ok_reduce_kind kind = (enum ok_reduce_kind)(uintptr_t)opaque;
	int64_t since = kind == OK_REDUCE_SUM ? 13 : 18;
	struct ok_reduce_state *s;
	const int64_t *axes;
	size_t n = 0;

	s = ok_state_alloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->kind = kind;
	s->keepdims = ok_attr_i(node, "keepdims", 1) != 0;
	s->axes_input = npu_onnx_node_opset(node) >= since;
	if (s->axes_input) {
		s->noop_with_empty_axes = ok_attr_i(node, "noop_with_empty_axes", 0) != 0;
	} else if (npu_onnx_attr_ints(node, "axes", &axes, &n) == 0) {
		if (n > NPU_TENSOR_MAX_RANK) {
			ok_state_free(s);
			return ok_fail(err, err_size, "axes has %zu values, at most %d are possible",
				       n, NPU_TENSOR_MAX_RANK);
		}
		memcpy(s->axes, axes, n * sizeof(*axes));
		s->num_axes = (uint32_t)n;
	}
	*state = s;
	return 0;
}

#define REDUCE_ENTRY(var, type, k)                                             \
	const struct npu_onnx_op var = {                                       \
		.size = sizeof(struct npu_onnx_op),                            \
		.domain = "",                                                  \
		.op_type = type,                                               \
		.since_version = 1,                                            \
		.kernel = &ok_reduce_kernels[k],                               \
		.create = reduce_create,                                       \
		.opaque = (void *)(uintptr_t)(k),                              \
	}

REDUCE_ENTRY(ok_op_reduce_sum, "ReduceSum", OK_REDUCE_SUM);
REDUCE_ENTRY(ok_op_reduce_mean, "ReduceMean", OK_REDUCE_MEAN);
REDUCE_ENTRY(ok_op_reduce_max, "ReduceMax", OK_REDUCE_MAX);
REDUCE_ENTRY(ok_op_reduce_min, "ReduceMin", OK_REDUCE_MIN);
REDUCE_ENTRY(ok_op_reduce_prod, "ReduceProd", OK_REDUCE_PROD);
REDUCE_ENTRY(ok_op_reduce_l1, "ReduceL1", OK_REDUCE_L1);
REDUCE_ENTRY(ok_op_reduce_l2, "ReduceL2", OK_REDUCE_L2);
REDUCE_ENTRY(ok_op_reduce_log_sum, "ReduceLogSum", OK_REDUCE_LOG_SUM);
REDUCE_ENTRY(ok_op_reduce_log_sum_exp, "ReduceLogSumExp", OK_REDUCE_LOG_SUM_EXP);
REDUCE_ENTRY(ok_op_reduce_sum_square, "ReduceSumSquare", OK_REDUCE_SUM_SQUARE);
