// SPDX-License-Identifier: MIT
/*
 * Ops that select by values: ReverseSequence, and the ones whose output
 * shape depends on their input's values (Compress, NonZero, Unique),
 * which therefore need that input to be a constant: the importer then
 * folds them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_index.h"

#define VALUES_MUST_BE_CONSTANT \
	"the output shape depends on the input's values, which must be constant"

/* ---- ReverseSequence ----------------------------------------------------------- */

static int revseq_axes(const struct ok_reverse_sequence_state *st, char *err, size_t err_size)
{
	if (!((st->batch_axis == 0 && st->time_axis == 1) ||
	      (st->batch_axis == 1 && st->time_axis == 0)))
		return ok_fail(err, err_size,
			       "batch_axis (%lld) and time_axis (%lld) must be 0 and 1 in some order",
			       (long long)st->batch_axis, (long long)st->time_axis);
	return 0;
}

static int revseq_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	const struct ok_reverse_sequence_state *st = state;
	const struct npu_kernel_tensor *x, *len;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	x = in[0];
	len = in[1];
	e = revseq_axes(st, err, err_size);
	if (e)
		return e;
	if (x->rank < 2)
		return ok_fail(err, err_size, "the input must have a rank of at least 2, not %u",
			       x->rank);
	e = ok_check_indices(len, "sequence_lens", err, err_size);
	if (e)
		return e;
	if (len->rank != 1 || len->dims[0] != x->dims[st->batch_axis])
		return ok_fail(err, err_size,
			       "sequence_lens must be 1-D of the batch's length %u",
			       x->dims[st->batch_axis]);
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

static int revseq_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_reverse_sequence_state *st = state;
	const struct npu_kernel_tensor *x = in[0], *len = in[1];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t s[NPU_TENSOR_MAX_RANK], inner, b, t, pending = 0;
	uint64_t batch = x->dims[st->batch_axis], steps = x->dims[st->time_axis];
	uint64_t sb, stt;
	int e;

	(void)ni;
	(void)no;
	ok_strides(x, s);
	inner = s[1];
	sb = s[st->batch_axis];
	stt = s[st->time_axis];
	for (b = 0; b < batch; b++) {
		int64_t n = ok_index_at(len, b);

		if (n < 0 || n > (int64_t)steps)
			return npu_kernel_fail(call, -EINVAL,
					       "sequence_lens[%llu] (%lld) is out of range [0, %llu]",
					       (unsigned long long)b, (long long)n,
					       (unsigned long long)steps);
		for (t = 0; t < steps; t++) {
			uint64_t from = t < (uint64_t)n ? (uint64_t)n - 1 - t : t;

			memcpy((char *)out[0]->data + (b * sb + t * stt) * esz,
			       (const char *)x->data + (b * sb + from * stt) * esz, inner * esz);
			e = ok_tick(call, &pending, inner);
			if (e)
				return e;
		}
	}
	return 0;
}

static int revseq_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			 size_t err_size)
{
	struct ok_reverse_sequence_state axes, *st;
	int e;

	(void)opaque;
	axes.batch_axis = ok_attr_i(n, "batch_axis", 1);
	axes.time_axis = ok_attr_i(n, "time_axis", 0);
	e = revseq_axes(&axes, err, err_size);
	if (e)
		return e;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	*st = axes;
	*state = st;
	return 0;
}

static const struct npu_kernel revseq_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "ReverseSequence",
	.infer = revseq_infer,
	.run = revseq_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_reverse_sequence = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ReverseSequence",
	.since_version = 10,
	.kernel = &revseq_kernel,
	.create = revseq_create,
};

/* ---- Compress ---------------------------------------------------------------------- */

/* The kept count, with the condition checked against @limit slices. */
static int compress_count(const struct npu_kernel_tensor *cond, uint64_t limit,
			  uint64_t *count, char *err, size_t err_size)
{
	const uint8_t *c = cond->data;
	uint64_t i;

	if (cond->dtype != NPU_DTYPE_BOOL)
		return ok_fail(err, err_size, "condition must be bool, not %s",
			       ok_dtype_name(cond->dtype));
	if (cond->rank != 1)
		return ok_fail(err, err_size, "condition must be 1-D, not of rank %u", cond->rank);
	if (!c)
		return ok_fail(err, err_size, "condition must be a constant: " VALUES_MUST_BE_CONSTANT);
	*count = 0;
	for (i = 0; i < cond->elems; i++) {
		if (!c[i])
			continue;
		if (i >= limit)
			return ok_fail(err, err_size,
				       "condition selects index %llu, but there are only %llu",
				       (unsigned long long)i, (unsigned long long)limit);
		++*count;
	}
	if (!*count)
		return ok_fail(err, err_size,
			       "condition selects nothing: an empty output is not supported");
	return 0;
}

static int compress_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			  size_t no, struct npu_kernel_tensor *const *out, char *err,
			  size_t err_size)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x;
	uint64_t dims[NPU_TENSOR_MAX_RANK], count;
	uint32_t axis = 0, d;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	x = in[0];
	if (st->has_axis) {
		if (!x->rank)
			return ok_fail(err, err_size, "a scalar has no axis to compress");
		e = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
		if (e)
			return e;
	}
	e = compress_count(in[1], st->has_axis ? x->dims[axis] : x->elems, &count, err,
			   err_size);
	if (e)
		return e;
	out[0]->dtype = x->dtype;
	if (!st->has_axis)
		return ok_set_shape64(out[0], 1, &count, "the output", err, err_size);
	for (d = 0; d < x->rank; d++)
		dims[d] = d == axis ? count : x->dims[d];
	return ok_set_shape64(out[0], x->rank, dims, "the output", err, err_size);
}

static int compress_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out,
			struct npu_kernel_call *call)
{
	const struct ok_axis_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	const uint8_t *c = in[1]->data;
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t outer = 1, inner = 1, n, o, a, pending = 0;
	char *dst = out[0]->data;
	uint32_t axis = 0, d;
	int e;

	(void)ni;
	(void)no;
	if (st->has_axis) {
		if (ok_axis(st->axis, x->rank, &axis, "axis", NULL, 0))
			return npu_kernel_fail(call, -EINVAL, "axis %lld is out of range",
					       (long long)st->axis);
		for (d = 0; d < axis; d++)
			outer *= x->dims[d];
		for (d = axis + 1; d < x->rank; d++)
			inner *= x->dims[d];
		n = x->dims[axis];
	} else {
		n = x->elems;
	}
	if (in[1]->elems < n)
		n = in[1]->elems;
	for (o = 0; o < outer; o++) {
		const char *src = (const char *)x->data +
				  o * (st->has_axis ? x->dims[axis] : n) * inner * esz;

		for (a = 0; a < n; a++) {
			if (!c[a])
				continue;
			memcpy(dst, src + a * inner * esz, inner * esz);
			dst += inner * esz;
		}
		e = ok_tick(call, &pending, n * inner);
		if (e)
			return e;
	}
	return 0;
}

static int compress_create(const struct npu_onnx_node *n, void *opaque, void **state,
			   char *err, size_t err_size)
{
	struct ok_axis_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->has_axis = !npu_onnx_attr_int(n, "axis", &st->axis);
	*state = st;
	return 0;
}

static const struct npu_kernel compress_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Compress",
	.infer = compress_infer,
	.run = compress_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_compress = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Compress",
	.since_version = 9,
	.kernel = &compress_kernel,
	.create = compress_create,
};

/* ---- NonZero ------------------------------------------------------------------------- */

static bool is_nonzero(const struct npu_kernel_tensor *t, uint64_t i, size_t esz)
{
	const unsigned char *p;
	size_t k;

	/* -0.0 is zero; NaN is not */
	if (ok_is_float(t->dtype))
		return ok_get_f(t, i) != 0;
	p = (const unsigned char *)t->data + i * esz;
	for (k = 0; k < esz; k++)
		if (p[k])
			return true;
	return false;
}

static int nonzero_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			 size_t no, struct npu_kernel_tensor *const *out, char *err,
			 size_t err_size)
{
	const struct npu_kernel_tensor *x;
	size_t esz;
	uint64_t dims[2], i, nnz = 0;

	OK_NEED_IO(ni, in, 1, no, out, true);
	x = in[0];
	esz = npu_dtype_size(x->dtype);
	(void)state;
	if (!x->data)
		return ok_fail(err, err_size, VALUES_MUST_BE_CONSTANT);
	for (i = 0; i < x->elems; i++)
		nnz += is_nonzero(x, i, esz);
	if (!nnz)
		return ok_fail(err, err_size,
			       "the input has no non-zero element: an empty output is not supported");
	/* A scalar counts as a 1-D tensor of one element, as in numpy. */
	dims[0] = x->rank ? x->rank : 1;
	dims[1] = nnz;
	out[0]->dtype = NPU_DTYPE_INT64;
	return ok_set_shape64(out[0], 2, dims, "the output", err, err_size);
}

static int nonzero_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		       size_t no, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t nnz = out[0]->dims[1], c[NPU_TENSOR_MAX_RANK] = { 0 }, i, col = 0, pending = 0;
	int64_t *o = out[0]->data;
	uint32_t d;
	int e;

	(void)state;
	(void)ni;
	(void)no;
	for (i = 0; i < x->elems; i++) {
		if (is_nonzero(x, i, esz)) {
			if (col >= nnz)
				return npu_kernel_fail(call, -EINVAL,
						       "the input has more non-zero elements than inferred");
			for (d = 0; d < x->rank; d++)
				o[d * nnz + col] = (int64_t)c[d];
			if (!x->rank)
				o[col] = 0;
			col++;
		}
		for (d = x->rank; d-- > 0;) {
			if (++c[d] < x->dims[d])
				break;
			c[d] = 0;
		}
		e = ok_tick(call, &pending, 1);
		if (e)
			return e;
	}
	return 0;
}

static const struct npu_kernel nonzero_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "NonZero",
	.infer = nonzero_infer,
	.run = nonzero_run,
};

const struct npu_onnx_op ok_op_nonzero = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "NonZero",
	.since_version = 9,
	.kernel = &nonzero_kernel,
};

/* ---- Unique ------------------------------------------------------------------------- */

/*
 * The input seen as @n items (elements, or slices along the axis) of
 * @outer x @inner elements each, item a's being at (o * n + a) * inner + j.
 */
struct items {
	const struct npu_kernel_tensor *x;
	uint64_t n, outer, inner;
};

static int elem_cmp(const struct npu_kernel_tensor *t, uint64_t i, uint64_t k)
{
	if (ok_is_float(t->dtype)) {
		double a = ok_get_f(t, i), b = ok_get_f(t, k);

		/* NaNs sort last and equal each other */
		if (isnan(a) || isnan(b))
			return isnan(a) - isnan(b);
		return (a > b) - (a < b);
	}
	if (t->dtype == NPU_DTYPE_UINT64) {
		uint64_t a = ok_get_u(t, i), b = ok_get_u(t, k);

		return (a > b) - (a < b);
	}
	{
		int64_t a = ok_get_i(t, i), b = ok_get_i(t, k);

		return (a > b) - (a < b);
	}
}

static int item_cmp(const struct items *it, uint64_t a, uint64_t b)
{
	uint64_t o, j;
	int c;

	for (o = 0; o < it->outer; o++)
		for (j = 0; j < it->inner; j++) {
			c = elem_cmp(it->x, (o * it->n + a) * it->inner + j,
				     (o * it->n + b) * it->inner + j);
			if (c)
				return c;
		}
	return 0;
}

/* By value, then by position: each group of equals starts at its first occurrence. */
static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	int c = item_cmp(ctx, a, b);

	return c ? c : (a > b) - (a < b);
}

static int by_first(const void *pa, const void *pb, void *ctx)
{
	const uint64_t *first = ctx;
	uint64_t a = first[*(const uint64_t *)pa], b = first[*(const uint64_t *)pb];

	return (a > b) - (a < b);
}

/*
 * The unique items: *@num of them, @first[g] the first occurrence of
 * group g in output order, @group[i] item i's group.  @first, @group and
 * @order hold n values each.
 */
static int unique_groups(const struct ok_unique_state *st, const struct items *it,
			 uint64_t *first, uint64_t *group, uint64_t *order, uint64_t *num)
{
	uint64_t i, g = 0, *rank_of;

	for (i = 0; i < it->n; i++)
		order[i] = i;
	qsort_r(order, it->n, sizeof(*order), order_cmp, (void *)it);
	/* group[] temporarily holds each item's group in sorted order. */
	for (i = 0; i < it->n; i++) {
		if (i && item_cmp(it, order[i - 1], order[i]))
			g++;
		if (!i || item_cmp(it, order[i - 1], order[i]))
			first[g] = order[i];
		group[order[i]] = g;
	}
	*num = it->n ? g + 1 : 0;
	if (st->sorted)
		return 0;
	/* Unsorted: groups in order of their first occurrence. */
	rank_of = malloc(*num * sizeof(*rank_of));
	if (!rank_of)
		return -ENOMEM;
	for (i = 0; i < *num; i++)
		order[i] = i;
	qsort_r(order, *num, sizeof(*order), by_first, first);
	for (i = 0; i < *num; i++)
		rank_of[order[i]] = i;
	for (i = 0; i < it->n; i++)
		group[i] = rank_of[group[i]];
	for (i = 0; i < *num; i++)
		order[rank_of[i]] = first[i];
	memcpy(first, order, *num * sizeof(*first));
	free(rank_of);
	return 0;
}

static int unique_items(const struct ok_unique_state *st, const struct npu_kernel_tensor *x,
			struct items *it, uint32_t *axis, char *err, size_t err_size)
{
	uint32_t d;
	int e;

	it->x = x;
	it->outer = 1;
	it->inner = 1;
	it->n = x->elems;
	if (!st->has_axis)
		return 0;
	if (!x->rank)
		return ok_fail(err, err_size, "a scalar has no axis");
	e = ok_axis(st->axis, x->rank, axis, "axis", err, err_size);
	if (e)
		return e;
	for (d = 0; d < *axis; d++)
		it->outer *= x->dims[d];
	for (d = *axis + 1; d < x->rank; d++)
		it->inner *= x->dims[d];
	it->n = x->dims[*axis];
	return 0;
}

/* Groups computed into fresh arrays (freed with unique_free). */
struct unique_result {
	uint64_t *first, *group, *order, num;
};

static void unique_free(struct unique_result *r)
{
	free(r->first);
	free(r->group);
	free(r->order);
}

static int unique_compute(const struct ok_unique_state *st, const struct items *it,
			  struct unique_result *r)
{
	r->first = malloc(it->n * sizeof(uint64_t));
	r->group = malloc(it->n * sizeof(uint64_t));
	r->order = malloc(it->n * sizeof(uint64_t));
	if (!r->first || !r->group || !r->order)
		return -ENOMEM;
	return unique_groups(st, it, r->first, r->group, r->order, &r->num);
}

static int unique_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	const struct ok_unique_state *st = state;
	const struct npu_kernel_tensor *x;
	struct unique_result r = { 0 };
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	struct items it;
	uint32_t axis = 0, d;
	size_t k;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, false);
	x = in[0];
	if (!x->data)
		return ok_fail(err, err_size, VALUES_MUST_BE_CONSTANT);
	e = unique_items(st, x, &it, &axis, err, err_size);
	if (e)
		return e;
	e = unique_compute(st, &it, &r);
	unique_free(&r);
	if (e)
		return ok_fail(err, err_size, "no memory to find the unique values");
	if (out[0]) {
		out[0]->dtype = x->dtype;
		if (st->has_axis) {
			for (d = 0; d < x->rank; d++)
				dims[d] = d == axis ? r.num : x->dims[d];
			e = ok_set_shape64(out[0], x->rank, dims, "Y", err, err_size);
		} else {
			e = ok_set_shape64(out[0], 1, &r.num, "Y", err, err_size);
		}
		if (e)
			return e;
	}
	for (k = 1; k < no && k < 4; k++) {
		if (!out[k])
			continue;
		out[k]->dtype = NPU_DTYPE_INT64;
		e = ok_set_shape64(out[k], 1, k == 2 ? &it.n : &r.num, "an output", err,
				   err_size);
		if (e)
			return e;
	}
	return 0;
}

static int unique_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	const struct ok_unique_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	size_t esz = npu_dtype_size(x->dtype);
	struct unique_result r = { 0 };
	struct items it;
	uint64_t g, o, i;
	uint32_t axis = 0;
	int e;

	(void)ni;
	if (unique_items(st, x, &it, &axis, NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "axis %lld is out of range",
				       (long long)st->axis);
	e = unique_compute(st, &it, &r);
	if (e) {
		unique_free(&r);
		return npu_kernel_fail(call, e, "no memory to find the unique values");
	}
	if (out[0]) {
		char *dst = out[0]->data;

		for (o = 0; o < it.outer; o++)
			for (g = 0; g < r.num; g++) {
				memcpy(dst, (const char *)x->data +
					    (o * it.n + r.first[g]) * it.inner * esz,
				       it.inner * esz);
				dst += it.inner * esz;
			}
	}
	if (no > 1 && out[1])
		for (g = 0; g < r.num; g++)
			((int64_t *)out[1]->data)[g] = (int64_t)r.first[g];
	if (no > 2 && out[2])
		for (i = 0; i < it.n; i++)
			((int64_t *)out[2]->data)[i] = (int64_t)r.group[i];
	if (no > 3 && out[3]) {
		int64_t *cnt = out[3]->data;

		memset(cnt, 0, r.num * sizeof(*cnt));
		for (i = 0; i < it.n; i++)
			cnt[r.group[i]]++;
	}
	unique_free(&r);
	return npu_kernel_poll(call, x->elems);
}

/* A sort: n log n comparisons of whole items. */
static uint64_t unique_work(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			    size_t no, const struct npu_kernel_tensor *const *out)
{
	uint64_t n = in[0]->elems, lg = 1;

	(void)state;
	(void)ni;
	(void)no;
	(void)out;
	while (lg < 64 && (1ull << lg) < n)
		lg++;
	return n * (lg + 1);
}

static int unique_create(const struct npu_onnx_node *n, void *opaque, void **state,
			 char *err, size_t err_size)
{
	struct ok_unique_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->sorted = ok_attr_i(n, "sorted", 1) != 0;
	st->has_axis = !npu_onnx_attr_int(n, "axis", &st->axis);
	*state = st;
	return 0;
}

static const struct npu_kernel unique_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Unique",
	.infer = unique_infer,
	.work = unique_work,
	.run = unique_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_unique = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Unique",
	.since_version = 11,
	.kernel = &unique_kernel,
	.create = unique_create,
};
