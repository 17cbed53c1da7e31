// SPDX-License-Identifier: MIT
/*
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is
 * LogSoftmax along axis 1 followed by the former).
 *
 * Input [N, C, d1, ...], target [N, d1, ...] of class indices, weight
 * [C] optional.  Each target element's loss is -input[n, target, d...]
 * times the class' weight (1 without weights); a target equal to
 * ignore_index costs 0 and weighs 0.  "mean" divides the sum by the sum
 * of the weights of the targets not ignored, as the ONNX reference does,
 * so ignored targets do not dilute the mean.  A target outside [0, C)
 * that is not ignore_index is an error of the run.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_reduce.h"

static int loss_infer(bool softmax, const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_loss_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	const struct npu_kernel_tensor *t = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *w = num_inputs > 2 ? in[2] : NULL;
	const char *xname = softmax ? "the scores" : "the input";
	const char *xof = softmax ? "the scores'" : "the input's";
	uint32_t d;
	int rc;

	rc = ok_red_check_float(xname, x->dtype, err, err_size);
	if (rc)
		return rc;
	if (x->rank < 2)
		return ok_fail(err, err_size, "%s must be [N, C, ...], not of rank %u", xname,
			       x->rank);
	if (!t)
		return ok_fail(err, err_size, "the target input is missing");
	if (t->dtype != NPU_DTYPE_INT32 && t->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "the target must be int32 or int64, not %s",
			       ok_dtype_name(t->dtype));
	if (t->rank != x->rank - 1)
		return ok_fail(err, err_size, "the target has rank %u, not %s rank minus one (%u)",
			       t->rank, xof, x->rank - 1);
	for (d = 0; d < t->rank; d++)
		if (t->dims[d] != x->dims[d ? d + 1 : 0])
			return ok_fail(err, err_size,
				       "the target's dimension %u is %u, not %s %u", d,
				       t->dims[d], xof, x->dims[d ? d + 1 : 0]);
	if (w) {
		if (w->dtype != x->dtype)
			return ok_fail(err, err_size, "the weight is %s, not %s like %s",
				       ok_dtype_name(w->dtype), ok_dtype_name(x->dtype), xname);
		if (w->rank != 1 || w->dims[0] != x->dims[1])
			return ok_fail(err, err_size,
				       "the weight must be [C] = [%u], one per class", x->dims[1]);
	}
	out[0]->dtype = x->dtype;
	if (s->reduction == OK_LOSS_NONE)
		rc = ok_set_shape(out[0], t->rank, t->dims);
	else
		rc = ok_set_shape(out[0], 0, NULL);
	if (rc)
		return rc;
	if (num_outputs > 1 && out[1]) {
		if (!softmax)
			return ok_fail(err, err_size, "NegativeLogLikelihoodLoss has one output");
		out[1]->dtype = x->dtype;
		return ok_set_shape(out[1], x->rank, x->dims);
	}
	return 0;
}

static int sce_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	return loss_infer(true, state, num_inputs, in, num_outputs, out, err, err_size);
}

OK_RED_INFER(sce_infer, sce_shape, false)

static int nll_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	return loss_infer(false, state, num_inputs, in, num_outputs, out, err, err_size);
}

OK_RED_INFER(nll_infer, nll_shape, false)

static uint64_t loss_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	(void)out;
	/* SCE's log-softmax: a max, a sum of exponentials and the values */
	return 3 * in[0]->elems + in[1]->elems;
}

/* Log-softmax of @x along axis 1 into @lp ([N, C, D] as @x). */
static int log_softmax_axis1(const struct npu_kernel_tensor *x, uint64_t N, uint64_t C,
			     uint64_t D, double *lp, struct npu_kernel_call *call)
{
	uint64_t n, c, d, done = 0;
	int rc;

	for (n = 0; n < N; n++) {
		for (d = 0; d < D; d++) {
			uint64_t base = n * C * D + d;
			double top = -INFINITY, sum = 0, lse;

			for (c = 0; c < C; c++) {
				lp[base + c * D] = ok_red_get(x, base + c * D);
				if (lp[base + c * D] > top)
					top = lp[base + c * D];
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
			for (c = 0; c < C; c++) {
				sum += exp(lp[base + c * D] - top);
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
			lse = top + log(sum);
			for (c = 0; c < C; c++) {
				lp[base + c * D] -= lse;
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
		}
	}
	return 0;
}

static int loss_run(bool softmax, const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_loss_state *s = state;
	const struct npu_kernel_tensor *x = in[0], *t = in[1];
	const struct npu_kernel_tensor *w = num_inputs > 2 ? in[2] : NULL;
	struct npu_kernel_tensor *logp = num_outputs > 1 ? out[1] : NULL;
	uint64_t N = x->dims[0], C = x->dims[1], D = x->elems / (N * C), n, d, i, done = 0;
	double *lp = NULL, sum = 0, wsum = 0;
	int rc = 0;

	if (softmax) {
		lp = malloc(x->elems * sizeof(*lp));
		if (!lp)
			return npu_kernel_fail(call, -ENOMEM, "no memory for %llu log-probabilities",
					       (unsigned long long)x->elems);
		rc = log_softmax_axis1(x, N, C, D, lp, call);
		if (rc)
			goto out;
		if (logp)
			for (i = 0; i < x->elems; i++)
				ok_red_set(logp, i, lp[i]);
	}
	for (n = 0; n < N; n++) {
		for (d = 0; d < D; d++) {
			uint64_t at = n * D + d, from;
			int64_t cls = ok_get_i(t, at);
			double loss = 0, weight = 0;

			if (!(s->has_ignore_index && cls == s->ignore_index)) {
				if (cls < 0 || (uint64_t)cls >= C) {
					rc = npu_kernel_fail(call, -EINVAL,
							     "target %lld (element %llu) is out of the classes' range [0, %llu)",
							     (long long)cls, (unsigned long long)at,
							     (unsigned long long)C);
					goto out;
				}
				from = n * C * D + (uint64_t)cls * D + d;
				weight = w ? ok_red_get(w, (uint64_t)cls) : 1;
				loss = -(lp ? lp[from] : ok_red_get(x, from)) * weight;
			}
			if (s->reduction == OK_LOSS_NONE)
				ok_red_set(out[0], at, loss);
			sum += loss;
			wsum += weight;
			if ((rc = ok_tick(call, &done, 1)))
				goto out;
		}
	}
	if (s->reduction == OK_LOSS_SUM)
		ok_red_set(out[0], 0, sum);
	else if (s->reduction == OK_LOSS_MEAN)
		ok_red_set(out[0], 0, sum / wsum);
out:
	free(lp);
	return rc;
}

static int sce_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	return loss_run(true, state, num_inputs, in, num_outputs, out, call);
}

static int nll_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	return loss_run(false, state, num_inputs, in, num_outputs, out, call);
}

const struct npu_kernel ok_sce_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "SoftmaxCrossEntropyLoss",
	.infer = sce_infer,
	.work = loss_work,
	.run = sce_run,
	.release = ok_state_free,
};

const struct npu_kernel ok_nll_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "NegativeLogLikelihoodLoss",
	.infer = nll_infer,
	.work = loss_work,
	.run = nll_run,
	.release = ok_state_free,
};

static int loss_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_loss_state *s;
	char red[16] = "mean";
	int rc;

	(void)opaque;
	rc = npu_onnx_attr_string(node, "reduction", red, sizeof(red));
	if (rc && rc != -ENOENT)
		return ok_fail(err, err_size, "reduction must be none, sum or mean");
	s = ok_state_alloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (!strcmp(red, "none")) {
		s->reduction = OK_LOSS_NONE;
	} else if (!strcmp(red, "sum")) {
		s->reduction = OK_LOSS_SUM;
	} else if (!strcmp(red, "mean")) {
		s->reduction = OK_LOSS_MEAN;
	} else {
		ok_state_free(s);
		return ok_fail(err, err_size, "reduction must be none, sum or mean, not \"%s\"", red);
	}
	s->has_ignore_index = npu_onnx_attr_int(node, "ignore_index", &s->ignore_index) == 0;
	*state = s;
	return 0;
}

const struct npu_onnx_op ok_op_sce = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "SoftmaxCrossEntropyLoss",
	.since_version = 12,
	.kernel = &ok_sce_kernel,
	.create = loss_create,
};

const struct npu_onnx_op ok_op_nll = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "NegativeLogLikelihoodLoss",
	.since_version = 12,
	.kernel = &ok_nll_kernel,
	.create = loss_create,
};
