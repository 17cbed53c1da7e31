// SPDX-License-Identifier: MIT
/*
 * Softmax, LogSoftmax and Hardmax.  Before opset 13 they work on the
 * input coerced to 2-D at axis (default 1): each row is everything from
 * axis on.  From opset 13 they work along axis alone (default -1).
 * Softmax subtracts the row's maximum first so exp() never overflows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ok_reduce.h"

enum softmax_form {
	FORM_SOFTMAX,
	FORM_LOG_SOFTMAX,
	FORM_HARDMAX,
};

/* Each row is @n elements @inner apart; @outer * @inner rows. */
static int softmax_rows(const struct ok_softmax_state *s, const struct npu_kernel_tensor *x,
			uint64_t *outer, uint64_t *n, uint64_t *inner, char *err, size_t err_size)
{
	uint32_t axis, d;
	int rc;

	if (s->flatten) {
		/* the 2-D coercion takes an axis in [-rank, rank] */
		if (s->axis < -(int64_t)x->rank || s->axis > (int64_t)x->rank)
			return ok_fail(err, err_size, "axis %lld is out of range [-%u, %u]",
				       (long long)s->axis, x->rank, x->rank);
		axis = (uint32_t)(s->axis < 0 ? s->axis + x->rank : s->axis);
		*outer = 1;
		*n = 1;
		for (d = 0; d < x->rank; d++) {
			if (d < axis)
				*outer *= x->dims[d];
			else
				*n *= x->dims[d];
		}
		*inner = 1;
		return 0;
	}
	rc = ok_axis(s->axis, x->rank, &axis, "axis", err, err_size);
	if (rc)
		return rc;
	ok_red_split(x, axis, outer, n, inner);
	return 0;
}

static int softmax_shape(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	uint64_t outer, n, inner;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	rc = ok_red_check_float("the input", x->dtype, err, err_size);
	if (rc)
		return rc;
	rc = softmax_rows(state, x, &outer, &n, &inner, err, err_size);
	if (rc)
		return rc;
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

OK_RED_INFER(softmax_infer, softmax_shape, false)

static int softmax_run_form(enum softmax_form form, const void *state,
			    const struct npu_kernel_tensor *const *in,
			    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	struct npu_kernel_tensor *y = out[0];
	uint64_t outer, n, inner, o, i, j, done = 0;
	double *row;
	char err[128];
	int rc = 0;

	if (softmax_rows(state, x, &outer, &n, &inner, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	/* each row once through exp(), kept here between the sum and the division */
	row = malloc(n * sizeof(*row));
	if (!row)
		return npu_kernel_fail(call, -ENOMEM, "no memory for a row of %llu values",
				       (unsigned long long)n);
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			uint64_t base = o * n * inner + i, best = 0;
			double top, sum = 0, lsum;

			for (j = 0; j < n; j++) {
				row[j] = ok_red_get(x, base + j * inner);
				if ((rc = ok_tick(call, &done, 1)))
					goto out;
			}
			top = row[0];
			for (j = 1; j < n; j++) {
				if (row[j] > top) {
					top = row[j];
					best = j;
				}
			}
			if (form == FORM_HARDMAX) {
				for (j = 0; j < n; j++)
					ok_red_set(y, base + j * inner, j == best);
				continue;
			}
			for (j = 0; j < n; j++) {
				row[j] -= top;
				if (form == FORM_SOFTMAX)
					row[j] = exp(row[j]);
				sum += form == FORM_SOFTMAX ? row[j] : exp(row[j]);
				if ((rc = ok_tick(call, &done, 1)))
					goto out;
			}
			lsum = log(sum);
			for (j = 0; j < n; j++) {
				ok_red_set(y, base + j * inner,
					   form == FORM_SOFTMAX ? row[j] / sum : row[j] - lsum);
				if ((rc = ok_tick(call, &done, 1)))
					goto out;
			}
		}
	}
out:
	free(row);
	return rc;
}

static int softmax_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, size_t num_outputs,
		       struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_inputs;
	(void)num_outputs;
	return softmax_run_form(FORM_SOFTMAX, state, in, out, call);
}

static int logsoftmax_run(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_inputs;
	(void)num_outputs;
	return softmax_run_form(FORM_LOG_SOFTMAX, state, in, out, call);
}

static int hardmax_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, size_t num_outputs,
		       struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_inputs;
	(void)num_outputs;
	return softmax_run_form(FORM_HARDMAX, state, in, out, call);
}

const struct npu_kernel ok_softmax_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Softmax",
	.infer = softmax_infer,
	.work = ok_red_work_3_passes,
	.run = softmax_run,
	.release = ok_state_free,
};

const struct npu_kernel ok_logsoftmax_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "LogSoftmax",
	.infer = softmax_infer,
	.work = ok_red_work_3_passes,
	.run = logsoftmax_run,
	.release = ok_state_free,
};

const struct npu_kernel ok_hardmax_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Hardmax",
	.infer = softmax_infer,
	.work = ok_red_work_3_passes,
	.run = hardmax_run,
	.release = ok_state_free,
};

static int softmax_create(const struct npu_onnx_node *node, void *opaque, void **state,
			  char *err, size_t err_size)
{
	struct ok_softmax_state *s = ok_state_alloc(sizeof(*s));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!s)
		return -ENOMEM;
	s->flatten = npu_onnx_node_opset(node) < 13;
	s->axis = ok_attr_i(node, "axis", s->flatten ? 1 : -1);
	*state = s;
	return 0;
}

const struct npu_onnx_op ok_op_softmax = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Softmax",
	.since_version = 1,
	.kernel = &ok_softmax_kernel,
	.create = softmax_create,
};

const struct npu_onnx_op ok_op_logsoftmax = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "LogSoftmax",
	.since_version = 1,
	.kernel = &ok_logsoftmax_kernel,
	.create = softmax_create,
};

const struct npu_onnx_op ok_op_hardmax = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Hardmax",
	.since_version = 1,
	.kernel = &ok_hardmax_kernel,
	.create = softmax_create,
};
