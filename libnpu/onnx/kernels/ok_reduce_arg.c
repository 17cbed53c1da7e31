// SPDX-License-Identifier: MIT
/*
 * ArgMax, ArgMin and TopK: positions along one axis.  Integers compare
 * as int64 (exact), floats as doubles; ties go to the lower index, as in
 * onnxruntime (ArgMax/ArgMin's select_last_index picks the higher one).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_reduce.h"

/* ---- ArgMax, ArgMin ---------------------------------------------------------- */

static int arg_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_arg_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint32_t axis, dims[NPU_TENSOR_MAX_RANK], rank = 0, d;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	rc = ok_red_check_numeric("the data", x->dtype, err, err_size);
	if (rc)
		return rc;
	rc = ok_axis(s->axis, x->rank, &axis, "axis", err, err_size);
	if (rc)
		return rc;
	for (d = 0; d < x->rank; d++) {
		if (d != axis)
			dims[rank++] = x->dims[d];
		else if (s->keepdims)
			dims[rank++] = 1;
	}
	out[0]->dtype = NPU_DTYPE_INT64;
	return ok_set_shape(out[0], rank, dims);
}

OK_RED_INFER(arg_infer, arg_shape, false)

static int arg_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_arg_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	bool floats = ok_is_float(x->dtype);
	uint64_t outer, n, inner, o, i, j, done = 0;
	int64_t *y = out[0]->data;
	uint32_t axis = (uint32_t)(s->axis < 0 ? s->axis + x->rank : s->axis);
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	ok_red_split(x, axis, &outer, &n, &inner);
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			uint64_t base = o * n * inner + i, best = 0;
			double bf = floats ? ok_red_get(x, base) : 0;
			int64_t bi = floats ? 0 : ok_get_i(x, base);

			for (j = 1; j < n; j++) {
				uint64_t at = base + j * inner;
				bool take;

				if (floats) {
					double v = ok_red_get(x, at);

					if (s->select_last_index)
						take = s->is_max ? v >= bf : v <= bf;
					else
						take = s->is_max ? v > bf : v < bf;
					if (take)
						bf = v;
				} else {
					int64_t v = ok_get_i(x, at);

					if (s->select_last_index)
						take = s->is_max ? v >= bi : v <= bi;
					else
						take = s->is_max ? v > bi : v < bi;
					if (take)
						bi = v;
				}
				if (take)
					best = j;
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
			y[o * inner + i] = (int64_t)best;
		}
	}
	return 0;
}

const struct npu_kernel ok_argmax_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "ArgMax",
	.infer = arg_infer,
	.run = arg_run,
	.release = ok_state_free,
};

const struct npu_kernel ok_argmin_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "ArgMin",
	.infer = arg_infer,
	.run = arg_run,
	.release = ok_state_free,
};

static int arg_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_arg_state *s = ok_state_alloc(sizeof(*s));

	(void)err;
	(void)err_size;
	if (!s)
		return -ENOMEM;
	s->is_max = opaque != NULL;
	s->axis = ok_attr_i(node, "axis", 0);
	s->keepdims = ok_attr_i(node, "keepdims", 1) != 0;
	s->select_last_index = ok_attr_i(node, "select_last_index", 0) != 0;
	*state = s;
	return 0;
}

const struct npu_onnx_op ok_op_argmax = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ArgMax",
	.since_version = 1,
	.kernel = &ok_argmax_kernel,
	.create = arg_create,
	.opaque = (void *)&ok_op_argmax,
};

const struct npu_onnx_op ok_op_argmin = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ArgMin",
	.since_version = 1,
	.kernel = &ok_argmin_kernel,
	.create = arg_create,
};

/* ---- TopK --------------------------------------------------------------------- */

struct topk_item {
	union {
		double f;
		int64_t i;
	} key;
	uint64_t index;
};

/* NaN sorts above every number so that the order stays total. */
static int cmp_f(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

static int topk_by_index(const struct topk_item *a, const struct topk_item *b)
{
	return (a->index > b->index) - (a->index < b->index);
}

static int topk_largest_f(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	int c = cmp_f(b->key.f, a->key.f);

	return c ? c : topk_by_index(a, b);
}

static int topk_smallest_f(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	int c = cmp_f(a->key.f, b->key.f);

	return c ? c : topk_by_index(a, b);
}

static int topk_largest_i(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	int c = (b->key.i > a->key.i) - (b->key.i < a->key.i);

	return c ? c : topk_by_index(a, b);
}

static int topk_smallest_i(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	int c = (a->key.i > b->key.i) - (a->key.i < b->key.i);

	return c ? c : topk_by_index(a, b);
}

static int topk_k(const struct ok_topk_state *s, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, int64_t *k, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *kt;

	if (!s->k_input) {
		*k = s->k;
		return 0;
	}
	kt = num_inputs > 1 ? in[1] : NULL;
	if (!kt)
		return ok_fail(err, err_size, "the K input is missing");
	if (kt->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "K must be int64, not %s", ok_dtype_name(kt->dtype));
	if (kt->elems != 1 || kt->rank > 1)
		return ok_fail(err, err_size, "K must hold one value, not %llu",
			       (unsigned long long)kt->elems);
	if (!kt->data)
		return ok_fail(err, err_size,
			       "K must be a constant: the outputs' shape depends on it");
	*k = *(const int64_t *)kt->data;
	return 0;
}

static int topk_shape(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_topk_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint32_t axis, dims[NPU_TENSOR_MAX_RANK];
	int64_t k;
	size_t o;
	int rc;

	rc = ok_red_check_numeric("the data", x->dtype, err, err_size);
	if (rc)
		return rc;
	rc = ok_axis(s->axis, x->rank, &axis, "axis", err, err_size);
	if (rc)
		return rc;
	rc = topk_k(s, num_inputs, in, &k, err, err_size);
	if (rc)
		return rc;
	if (k < 0)
		return ok_fail(err, err_size, "k (%lld) is negative", (long long)k);
	if (k == 0)
		return ok_fail(err, err_size, "k is 0: empty outputs are not supported");
	if (k > x->dims[axis])
		return ok_fail(err, err_size, "k (%lld) is above the axis' length %u",
			       (long long)k, x->dims[axis]);
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = (uint32_t)k;
	for (o = 0; o < num_outputs && o < 2; o++) {
		if (!out[o])
			continue;
		out[o]->dtype = o == 0 ? x->dtype : NPU_DTYPE_INT64;
		rc = ok_set_shape(out[o], x->rank, dims);
		if (rc)
			return rc;
	}
	return 0;
}

OK_RED_INFER(topk_infer, topk_shape, true)

static uint64_t topk_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	const struct ok_topk_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t log = 1;
	int64_t k;

	(void)num_outputs;
	(void)out;
	if (topk_k(s, num_inputs, in, &k, NULL, 0) || k < 1)
		k = x->elems;
	while (log < 63 && (1ull << log) < (uint64_t)k)
		log++;
	/* a heap of k for every slice's element, then the sort of k */
	return x->elems * (log + 1);
}

/* Restore the heap below @i: its root is the worst item kept (the last in order). */
static void topk_sift_down(struct topk_item *h, uint64_t n, uint64_t i,
			   int (*cmp)(const void *, const void *))
{
	for (;;) {
		uint64_t l = 2 * i + 1, r = l + 1, w = i;
		struct topk_item t;

		if (l < n && cmp(&h[l], &h[w]) > 0)
			w = l;
		if (r < n && cmp(&h[r], &h[w]) > 0)
			w = r;
		if (w == i)
			return;
		t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static int topk_run(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_topk_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	struct npu_kernel_tensor *vals = num_outputs > 0 ? out[0] : NULL;
	struct npu_kernel_tensor *idx = num_outputs > 1 ? out[1] : NULL;
	uint32_t axis = (uint32_t)(s->axis < 0 ? s->axis + x->rank : s->axis);
	size_t esize = npu_dtype_size(x->dtype);
	int (*cmp)(const void *, const void *);
	bool floats = ok_is_float(x->dtype);
	uint64_t outer, n, inner, o, i, j, k, done = 0;
	struct topk_item *heap, item;
	int64_t kk;
	char err[128];
	int rc = 0;

	if (topk_k(s, num_inputs, in, &kk, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	k = (uint64_t)kk;
	if (s->largest)
		cmp = floats ? topk_largest_f : topk_largest_i;
	else
		cmp = floats ? topk_smallest_f : topk_smallest_i;
	ok_red_split(x, axis, &outer, &n, &inner);
	heap = malloc(k * sizeof(*heap));
	if (!heap)
		return npu_kernel_fail(call, -ENOMEM, "no memory to keep %llu values",
				       (unsigned long long)k);
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			uint64_t base = o * n * inner + i, obase = o * k * inner + i;

			for (j = 0; j < n; j++) {
				if (floats)
					item.key.f = ok_red_get(x, base + j * inner);
				else
					item.key.i = ok_get_i(x, base + j * inner);
				item.index = j;
				if (j < k) {
					heap[j] = item;
					if (j == k - 1) {
						uint64_t h;

						for (h = k / 2; h-- > 0;)
							topk_sift_down(heap, k, h, cmp);
					}
				} else if (cmp(&item, &heap[0]) < 0) {
					/* a tie keeps the lower index already held */
					heap[0] = item;
					topk_sift_down(heap, k, 0, cmp);
				}
				if ((rc = ok_tick(call, &done, 1)))
					goto out;
			}
			/* sorted=0 leaves the order open: sorted is one valid answer */
			qsort(heap, k, sizeof(*heap), cmp);
			for (j = 0; j < k; j++) {
				uint64_t at = obase + j * inner;

				if (vals)
					memcpy((char *)vals->data + at * esize,
					       (const char *)x->data +
						       (base + heap[j].index * inner) * esize,
					       esize);
				if (idx)
					((int64_t *)idx->data)[at] = (int64_t)heap[j].index;
			}
			if ((rc = ok_tick(call, &done, k)))
				goto out;
		}
	}
out:
	free(heap);
	return rc;
}

const struct npu_kernel ok_topk_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "TopK",
	.infer = topk_infer,
	.work = topk_work,
	.run = topk_run,
	.release = ok_state_free,
};

static int topk_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_topk_state *s = ok_state_alloc(sizeof(*s));
	int64_t opset = npu_onnx_node_opset(node);

	(void)opaque;
	if (!s)
		return -ENOMEM;
	s->axis = ok_attr_i(node, "axis", -1);
	s->k_input = opset >= 10;
	s->largest = ok_attr_i(node, "largest", 1) != 0;
	s->sorted = ok_attr_i(node, "sorted", 1) != 0;
	if (!s->k_input && npu_onnx_attr_int(node, "k", &s->k)) {
		ok_state_free(s);
		return ok_fail(err, err_size, "the k attribute is missing");
	}
	*state = s;
	return 0;
}

const struct npu_onnx_op ok_op_topk = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "TopK",
	.since_version = 1,
	.kernel = &ok_topk_kernel,
	.create = topk_create,
};
