// SPDX-License-Identifier: MIT
/*
 * TfIdfVectorizer of int32/int64 tokens (string pools have no dtype
 * here): counts the pool's n-grams in each row, an n-gram of length n
 * with skip s being x[i], x[i + s + 1], .., x[i + (n - 1)(s + 1)], for
 * every s up to max_skip_count; unigrams count once, whatever the skip,
 * as in onnxruntime.  TF, IDF (weight where the count is not 0) or TFIDF
 * (count times weight), weights by output column.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_seq.h"

void ok_tfidf_release(void *state)
{
	struct ok_tfidf_state *st = state;

	if (!st)
		return;
	free(st->ngram_counts);
	free(st->ngram_indexes);
	free(st->pool);
	free(st->weights);
	free(st);
}

/* The pool's n-grams of length @n: *@first (their ordinal) and *@count. */
static bool pool_range(const struct ok_tfidf_state *st, int64_t n, size_t *start,
		       size_t *first, size_t *count)
{
	size_t ord = 0, i, end;

	if (n < 1 || (size_t)n > st->n_counts)
		return false;
	for (i = 0; i < (size_t)n - 1; i++) {
		end = i + 1 < st->n_counts ? (size_t)st->ngram_counts[i + 1] : st->n_pool;
		ord += (end - (size_t)st->ngram_counts[i]) / (i + 1);
	}
	*start = (size_t)st->ngram_counts[n - 1];
	end = (size_t)n < st->n_counts ? (size_t)st->ngram_counts[n] : st->n_pool;
	*first = ord;
	*count = (end - *start) / (size_t)n;
	return true;
}

static int tfidf_infer(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, size_t num_outputs,
		       struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_tfidf_state *st = state;
	const struct npu_kernel_tensor *x = num_inputs ? in[0] : NULL;
	uint32_t dims[2];

	if (!x || num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "X and Y are required");
	if (x->dtype != NPU_DTYPE_INT32 && x->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "X must be int32 or int64, not %s",
			       ok_dtype_name(x->dtype));
	if (x->rank != 1 && x->rank != 2)
		return ok_fail(err, err_size, "X must be [C] or [N, C], not of rank %u", x->rank);
	out[0]->dtype = NPU_DTYPE_FP32;
	if (x->rank == 1) {
		dims[0] = (uint32_t)st->out_len;
		return ok_set_shape(out[0], 1, dims);
	}
	dims[0] = x->dims[0];
	dims[1] = (uint32_t)st->out_len;
	return ok_set_shape(out[0], 2, dims);
}

static uint64_t tfidf_work(const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in, size_t num_outputs,
			   const struct npu_kernel_tensor *const *out)
{
	const struct ok_tfidf_state *st = state;
	uint64_t w;

	(void)num_inputs;
	(void)num_outputs;
	/* each start, skip and length compares against the pool's n-grams */
	if (__builtin_mul_overflow(in[0]->elems, (uint64_t)(st->max_skip + 1), &w) ||
	    __builtin_mul_overflow(w, (uint64_t)st->max_gram, &w) ||
	    __builtin_mul_overflow(w, (uint64_t)st->n_pool + 1, &w) ||
	    __builtin_add_overflow(w, out[0]->elems, &w))
		return UINT64_MAX;
	return w;
}

static int tfidf_run(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_tfidf_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	float *y = out[0]->data;
	uint32_t rows = x->rank == 2 ? x->dims[0] : 1, row;
	uint64_t cols = x->rank == 2 ? x->dims[1] : x->dims[0], work = 0;
	uint64_t *counts;
	int ret = 0;

	(void)num_inputs;
	(void)num_outputs;
	counts = calloc((size_t)st->out_len, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	for (row = 0; row < rows; row++) {
		const uint64_t base = (uint64_t)row * cols;
		int64_t skip, start_n = st->min_gram, n;
		uint64_t i, col;

		memset(counts, 0, (size_t)st->out_len * sizeof(*counts));
		for (skip = 0; skip <= st->max_skip; skip++) {
			for (n = start_n; n <= st->max_gram; n++) {
				size_t pstart, first, cnt, g;
				uint64_t span = (uint64_t)(n - 1) * (uint64_t)(skip + 1);

				if (!pool_range(st, n, &pstart, &first, &cnt) || span >= cols)
					continue;
				for (i = 0; i + span < cols; i++) {
					for (g = 0; g < cnt; g++) {
						const int64_t *p = st->pool + pstart + g * (size_t)n;
						int64_t m;

						for (m = 0; m < n; m++)
							if (ok_get_i(x, base + i + (uint64_t)m * (skip + 1)) != p[m])
								break;
						if (m == n)
							counts[st->ngram_indexes[first + g]]++;
					}
					work += cnt + 1;
				}
				if (work >= OK_POLL_EVERY) {
					ret = npu_kernel_poll(call, work);
					if (ret)
						goto out;
					work = 0;
				}
			}
			/* unigrams do not depend on the skip: count them once */
			if (start_n == 1 && ++start_n > st->max_gram)
				break;
		}
		for (col = 0; col < (uint64_t)st->out_len; col++) {
			float w = st->weights ? st->weights[col] : 1, v;

			switch (st->mode) {
			case OK_TFIDF_TF: v = (float)counts[col]; break;
			case OK_TFIDF_IDF: v = counts[col] ? w : 0; break;
			default: v = (float)counts[col] * w; break;
			}
			y[(uint64_t)row * st->out_len + col] = v;
		}
	}
out:
	free(counts);
	return ret;
}

const struct npu_kernel ok_kernel_tfidf_vectorizer = {
	.size = sizeof(struct npu_kernel),
	.name = "TfIdfVectorizer",
	.infer = tfidf_infer,
	.work = tfidf_work,
	.run = tfidf_run,
	.release = ok_tfidf_release,
};

static int copy_ints(const struct npu_onnx_node *node, const char *name, int64_t **dst,
		     size_t *n, char *err, size_t err_size)
{
	const int64_t *v;

	if (npu_onnx_attr_ints(node, name, &v, n) || !*n)
		return ok_fail(err, err_size, "%s is required", name);
	*dst = malloc(*n * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, v, *n * sizeof(**dst));
	return 0;
}

/* The attributes agree: ordered counts, whole n-grams, an index for each. */
static int tfidf_validate(struct ok_tfidf_state *st, char *err, size_t err_size)
{
	size_t i, total = 0;

	if (st->min_gram < 1 || st->max_gram < st->min_gram || st->max_skip < 0 ||
	    st->max_gram > 64 || st->max_skip > 1024)
		return ok_fail(err, err_size,
			       "need 1 <= min_gram_length (%lld) <= max_gram_length (%lld) <= 64 and 0 <= max_skip_count (%lld) <= 1024",
			       (long long)st->min_gram, (long long)st->max_gram,
			       (long long)st->max_skip);
	for (i = 0; i < st->n_counts; i++) {
		int64_t start = st->ngram_counts[i];
		int64_t end = i + 1 < st->n_counts ? st->ngram_counts[i + 1] : (int64_t)st->n_pool;

		if (start < 0 || end < start || end > (int64_t)st->n_pool ||
		    (end - start) % (int64_t)(i + 1))
			return ok_fail(err, err_size,
				       "ngram_counts[%zu] (%lld) does not start whole %zu-grams of the pool",
				       i, (long long)start, i + 1);
		total += (size_t)(end - start) / (i + 1);
	}
	if (st->n_indexes != total)
		return ok_fail(err, err_size, "ngram_indexes has %zu values, the pool has %zu n-grams",
			       st->n_indexes, total);
	st->out_len = 0;
	for (i = 0; i < st->n_indexes; i++) {
		if (st->ngram_indexes[i] < 0 || st->ngram_indexes[i] >= (1 << 24))
			return ok_fail(err, err_size, "ngram_indexes[%zu] (%lld) is out of range [0, %d)",
				       i, (long long)st->ngram_indexes[i], 1 << 24);
		if (st->ngram_indexes[i] + 1 > st->out_len)
			st->out_len = st->ngram_indexes[i] + 1;
	}
	if (st->weights && st->n_weights != (size_t)st->out_len)
		return ok_fail(err, err_size, "weights has %zu values for %lld output columns",
			       st->n_weights, (long long)st->out_len);
	return 0;
}

static int tfidf_create(const struct npu_onnx_node *node, void *opaque, void **state,
			char *err, size_t err_size)
{
	struct ok_tfidf_state *st = ok_state_alloc(sizeof(*st));
	char mode[16], probe[4];
	const float *w;
	int ret;

	(void)opaque;
	if (!st)
		return -ENOMEM;
	if (npu_onnx_attr_string(node, "pool_strings", probe, sizeof(probe)) != -ENOENT) {
		ret = ok_fail(err, err_size, "string pools are not supported (no string tensors)");
		goto fail;
	}
	if (npu_onnx_attr_string(node, "mode", mode, sizeof(mode))) {
		ret = ok_fail(err, err_size, "mode must be TF, IDF or TFIDF");
		goto fail;
	}
	if (!strcmp(mode, "TF")) {
		st->mode = OK_TFIDF_TF;
	} else if (!strcmp(mode, "IDF")) {
		st->mode = OK_TFIDF_IDF;
	} else if (!strcmp(mode, "TFIDF")) {
		st->mode = OK_TFIDF_TFIDF;
	} else {
		ret = ok_fail(err, err_size, "mode \"%s\" is not TF, IDF or TFIDF", mode);
		goto fail;
	}
	st->min_gram = ok_attr_i(node, "min_gram_length", 0);
	st->max_gram = ok_attr_i(node, "max_gram_length", 0);
	st->max_skip = ok_attr_i(node, "max_skip_count", 0);
	ret = copy_ints(node, "ngram_counts", &st->ngram_counts, &st->n_counts, err, err_size);
	if (!ret)
		ret = copy_ints(node, "ngram_indexes", &st->ngram_indexes, &st->n_indexes, err,
				err_size);
	if (!ret)
		ret = copy_ints(node, "pool_int64s", &st->pool, &st->n_pool, err, err_size);
	if (ret)
		goto fail;
	if (!npu_onnx_attr_floats(node, "weights", &w, &st->n_weights) && st->n_weights) {
		st->weights = malloc(st->n_weights * sizeof(*w));
		if (!st->weights) {
			ret = -ENOMEM;
			goto fail;
		}
		memcpy(st->weights, w, st->n_weights * sizeof(*w));
	}
	ret = tfidf_validate(st, err, err_size);
	if (ret)
		goto fail;
	*state = st;
	return 0;
fail:
	ok_tfidf_release(st);
	return ret;
}

const struct npu_onnx_op ok_op_tfidf_vectorizer = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "TfIdfVectorizer",
	.since_version = 9,
	.kernel = &ok_kernel_tfidf_vectorizer,
	.create = tfidf_create,
};
