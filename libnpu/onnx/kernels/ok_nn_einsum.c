// SPDX-License-Identifier: MIT
/*
 * Einsum: any equation of letters and one ellipsis per term, explicit or
 * implicit output, a letter repeated in a term walks a diagonal, letters
 * missing from the output are summed.  One loop over every label's
 * values: the output's labels outside, the summed ones inside, each
 * operand's offset following its strides (a repeated label's strides
 * add up, a broadcast ellipsis axis has stride 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

/* Labels: 52 letters, then the ellipsis' axes, right-aligned. */
#define ELL_BASE	52
#define MAX_LABELS	(ELL_BASE + NPU_TENSOR_MAX_RANK)

struct einsum_plan {
	uint32_t n_in;
	uint32_t n_labels;			/* output labels first */
	uint32_t n_out;
	uint32_t size[MAX_LABELS];		/* by label */
	uint32_t loop_size[MAX_LABELS];		/* in loop order */
	uint32_t out_rank;
	uint64_t out_dims[NPU_TENSOR_MAX_RANK];
	/* stride[i][l]: operand i's step for label l (order of the loop). */
	uint64_t (*stride)[MAX_LABELS];
};

static int letter_id(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

/* One term's labels: -1 marks where the ellipsis stands. */
struct term {
	int labels[NPU_TENSOR_MAX_RANK + 1];
	uint32_t n;
	bool ellipsis;
};

static int parse_term(const char **p, const char *end, struct term *t, char *err,
		      size_t err_size)
{
	const char *s = *p;

	t->n = 0;
	t->ellipsis = false;
	while (s < end && *s != ',' && *s != '-') {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (*s == '.') {
			if (t->ellipsis || end - s < 3 || s[1] != '.' || s[2] != '.')
				return ok_fail(err, err_size,
					       "equation: a term has a stray '.' or two ellipses");
			t->ellipsis = true;
			if (t->n > NPU_TENSOR_MAX_RANK)
				return ok_fail(err, err_size, "equation: a term is too long");
			t->labels[t->n++] = -1;
			s += 3;
			continue;
		}
		if (letter_id(*s) < 0)
			return ok_fail(err, err_size, "equation: '%c' is not a letter", *s);
		if (t->n > NPU_TENSOR_MAX_RANK)
			return ok_fail(err, err_size, "equation: a term has more than %d labels",
				       NPU_TENSOR_MAX_RANK);
		t->labels[t->n++] = letter_id(*s);
		s++;
	}
	*p = s;
	return 0;
}

static int plan_of(const char *eq, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   struct einsum_plan *pl, char *err, size_t err_size)
{
	const char *p = eq, *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
	struct term terms[NPU_KERNEL_MAX_INPUTS], out;
	int count[MAX_LABELS] = { 0 }, order[MAX_LABELS];
	bool in_out[MAX_LABELS] = { false };
	uint32_t ell_rank = 0, n = 0, i, j, l;

	memset(pl->size, 0, sizeof(pl->size));
	for (;;) {
		int rc;

		if (n >= NPU_KERNEL_MAX_INPUTS)
			return ok_fail(err, err_size, "equation: too many terms");
		rc = parse_term(&p, end, &terms[n], err, err_size);
		if (rc)
			return rc;
		n++;
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p != end)
			return ok_fail(err, err_size, "equation: unexpected '%c'", *p);
		break;
	}
	if (n != num_inputs)
		return ok_fail(err, err_size, "equation has %u terms for %zu inputs", n, num_inputs);
	for (i = 0; i < n; i++) {
		const struct npu_kernel_tensor *t = in[i];
		uint32_t letters = terms[i].n - terms[i].ellipsis, e;

		if (!t)
			return ok_fail(err, err_size, "input %u is absent", i);
		if (t->dtype != in[0]->dtype)
			return ok_fail(err, err_size, "input %u is %s but input 0 is %s", i,
				       ok_dtype_name(t->dtype), ok_dtype_name(in[0]->dtype));
		if (t->rank < letters || (!terms[i].ellipsis && t->rank != letters))
			return ok_fail(err, err_size, "input %u has rank %u for %u labels", i,
				       t->rank, letters);
		e = t->rank - letters;
		if (e > ell_rank)
			ell_rank = e;
	}
	/* Sizes, with size-1 ellipsis axes broadcasting. */
	for (i = 0; i < n; i++) {
		const struct npu_kernel_tensor *t = in[i];
		uint32_t e = t->rank - (terms[i].n - terms[i].ellipsis), ax = 0;

		for (j = 0; j < terms[i].n; j++) {
			uint32_t k;

			if (terms[i].labels[j] >= 0) {
				l = (uint32_t)terms[i].labels[j];
				if (pl->size[l] && pl->size[l] != t->dims[ax])
					return ok_fail(err, err_size,
						       "label '%c' has extents %u and %u",
						       l < 26 ? 'a' + l : 'A' + l - 26, pl->size[l],
						       t->dims[ax]);
				pl->size[l] = t->dims[ax++];
				count[l]++;
				continue;
			}
			for (k = 0; k < e; k++, ax++) {
				l = ELL_BASE + ell_rank - e + k;
				if (pl->size[l] > 1 && t->dims[ax] != 1 && pl->size[l] != t->dims[ax])
					return ok_fail(err, err_size,
						       "the ellipsis' axes (%u and %u) do not broadcast",
						       pl->size[l], t->dims[ax]);
				if (t->dims[ax] > pl->size[l])
					pl->size[l] = t->dims[ax];
				count[l]++;
			}
		}
	}
	for (l = ELL_BASE; l < ELL_BASE + ell_rank; l++)
		if (!pl->size[l])
			pl->size[l] = 1;
	/* The output's labels. */
	pl->n_out = 0;
	if (arrow) {
		p = arrow + 2;
		if (parse_term(&p, eq + strlen(eq), &out, err, err_size))
			return -EINVAL;
		if (*p)
			return ok_fail(err, err_size, "equation: unexpected '%c' in the output", *p);
		for (j = 0; j < out.n; j++) {
			if (out.labels[j] < 0) {
				for (l = ELL_BASE; l < ELL_BASE + ell_rank; l++) {
					order[pl->n_out++] = (int)l;
					in_out[l] = true;
				}
				continue;
			}
			l = (uint32_t)out.labels[j];
			if (!count[l])
				return ok_fail(err, err_size, "output label '%c' is in no input",
					       l < 26 ? 'a' + l : 'A' + l - 26);
			if (in_out[l])
				return ok_fail(err, err_size, "output label '%c' is repeated",
					       l < 26 ? 'a' + l : 'A' + l - 26);
			in_out[l] = true;
			order[pl->n_out++] = (int)l;
		}
	} else {
		for (l = ELL_BASE; l < ELL_BASE + ell_rank; l++) {
			order[pl->n_out++] = (int)l;
			in_out[l] = true;
		}
		/* Implicit: the letters seen once, in ASCII order (capitals first). */
		for (l = 26; l < 52; l++)
			if (count[l] == 1) {
				order[pl->n_out++] = (int)l;
				in_out[l] = true;
			}
		for (l = 0; l < 26; l++)
			if (count[l] == 1) {
				order[pl->n_out++] = (int)l;
				in_out[l] = true;
			}
	}
	if (pl->n_out > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "the output would have rank %u, above %d", pl->n_out,
			       NPU_TENSOR_MAX_RANK);
	pl->out_rank = pl->n_out;
	for (j = 0; j < pl->n_out; j++)
		pl->out_dims[j] = pl->size[order[j]];
	pl->n_labels = pl->n_out;
	for (l = 0; l < MAX_LABELS; l++)
		if (count[l] && !in_out[l])
			order[pl->n_labels++] = (int)l;
	pl->n_in = n;
	if (!pl->stride)
		return 0;
	/* Strides in loop order; a label repeated in a term adds its axes' strides. */
	for (i = 0; i < n; i++) {
		uint64_t st[NPU_TENSOR_MAX_RANK], by_label[MAX_LABELS] = { 0 };
		uint32_t e = in[i]->rank - (terms[i].n - terms[i].ellipsis), ax = 0, k;

		ok_strides(in[i], st);
		for (j = 0; j < terms[i].n; j++) {
			if (terms[i].labels[j] >= 0) {
				by_label[terms[i].labels[j]] += st[ax++];
				continue;
			}
			for (k = 0; k < e; k++, ax++)
				if (in[i]->dims[ax] != 1)
					by_label[ELL_BASE + ell_rank - e + k] += st[ax];
		}
		for (j = 0; j < pl->n_labels; j++)
			pl->stride[i][j] = by_label[order[j]];
	}
	for (j = 0; j < pl->n_labels; j++)
		pl->loop_size[j] = pl->size[order[j]];
	return 0;
}

static int einsum_create(const struct npu_onnx_node *node, void *opaque, void **state,
			 char *err, size_t err_size)
{
	struct ok_einsum_state *s = ok_state_alloc(sizeof(*s));
	int rc;

	(void)opaque;
	if (!s)
		return -ENOMEM;
	rc = npu_onnx_attr_string(node, "equation", s->equation, sizeof(s->equation));
	if (rc) {
		free(s);
		return ok_fail(err, err_size, "attribute equation is %s",
			       rc == -ERANGE ? "too long" : "required");
	}
	*state = s;
	return 0;
}

static int einsum_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_einsum_state *s = state;
	struct einsum_plan pl = { .stride = NULL };
	int rc;

	if (num_inputs < 1)
		return ok_fail(err, err_size, "Einsum needs an input");
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Output is required");
	rc = plan_of(s->equation, num_inputs, in, &pl, err, err_size);
	if (rc)
		return rc;
	if (in[0]->dtype == NPU_DTYPE_BOOL)
		return ok_fail(err, err_size, "Einsum does not take bool");
	return ok_nn_out_shape(out[0], in[0]->dtype, pl.out_rank, pl.out_dims, err, err_size);
}

static uint64_t einsum_work(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    const struct npu_kernel_tensor *const *out)
{
	const struct ok_einsum_state *s = state;
	struct einsum_plan pl = { .stride = NULL };
	uint64_t w = 1;
	uint32_t l;

	(void)num_outputs;
	(void)out;
	if (plan_of(s->equation, num_inputs, in, &pl, NULL, 0))
		return UINT64_MAX;
	for (l = 0; l < MAX_LABELS; l++)
		if (pl.size[l])
			w = ok_nn_mul_sat(w, pl.size[l]);
	return ok_nn_mul_sat(w, num_inputs);
}

/* The next combination of the labels [lo, hi) of the loop, the last one fastest. */
static void advance(const struct einsum_plan *pl, uint64_t *off, uint32_t *idx, uint32_t lo,
		    uint32_t hi)
{
	uint32_t l, i;

	for (l = hi; l-- > lo;) {
		for (i = 0; i < pl->n_in; i++)
			off[i] += pl->stride[i][l];
		if (++idx[l] < pl->loop_size[l])
			return;
		for (i = 0; i < pl->n_in; i++)
			off[i] -= pl->stride[i][l] * pl->loop_size[l];
		idx[l] = 0;
	}
}

static int einsum_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_einsum_state *s = state;
	struct einsum_plan pl;
	struct npu_kernel_tensor *y = out[0];
	uint64_t off[NPU_KERNEL_MAX_INPUTS] = { 0 }, q, inner = 1, work = 0;
	uint32_t idx[MAX_LABELS] = { 0 }, i, l;
	enum ok_wtype wt = ok_wtype_of(in[0]->dtype);
	char err[160];
	int rc = 0;

	(void)num_outputs;
	pl.stride = calloc(num_inputs, sizeof(*pl.stride));
	if (!pl.stride)
		return -ENOMEM;
	if (plan_of(s->equation, num_inputs, in, &pl, err, sizeof(err))) {
		free(pl.stride);
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	}
	for (l = pl.n_out; l < pl.n_labels; l++)
		inner *= pl.loop_size[l];
	for (q = 0; q < y->elems && !rc; q++) {
		double accf = 0;
		uint64_t acci = 0, t;

		for (t = 0; t < inner; t++) {
			if (wt == OK_WT_INT) {
				uint64_t v = 1;

				for (i = 0; i < pl.n_in; i++)
					v *= ok_get_u(in[i], off[i]);
				acci += v;
			} else {
				double v = 1;

				for (i = 0; i < pl.n_in; i++)
					v *= ok_get_f(in[i], off[i]);
				accf += v;
			}
			advance(&pl, off, idx, pl.n_out, pl.n_labels);
		}
		advance(&pl, off, idx, 0, pl.n_out);
		if (wt == OK_WT_INT)
			ok_set_i(y, q, (int64_t)acci);
		else
			ok_set_f(y, q, accf);
		work += inner * pl.n_in;
		if (work >= OK_POLL_EVERY) {
			rc = npu_kernel_poll(call, work);
			work = 0;
		}
	}
	free(pl.stride);
	return rc;
}

const struct npu_kernel ok_kernel_einsum = {
	.size = sizeof(struct npu_kernel),
	.name = "Einsum",
	.infer = einsum_infer,
	.work = einsum_work,
	.run = einsum_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_einsum = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Einsum",
	.since_version = 12,
	.kernel = &ok_kernel_einsum,
	.create = einsum_create,
};
