// SPDX-License-Identifier: MIT
/*
 * ONNX ops that belong to no family: Dropout with its mask output (the
 * importer's lowering handles Dropout without one as a RESHAPE).
 */
#include <errno.h>
#include <string.h>

#include "ok_util.h"

struct dropout {
	float ratio;		/* opset < 12: the attribute */
	bool legacy_training;	/* opset < 7: is_test = 0 */
};

/*
 * Inference, or training with a ratio of 0: y = x and a mask of ones.
 * Training with a ratio above 0 draws random numbers, which nothing can
 * compare with a reference, so it is refused.
 */
static int dropout_infer(const void *state, size_t nin, const struct npu_kernel_tensor *const *in,
			 size_t nout, struct npu_kernel_tensor *const *out, char *err,
			 size_t err_size)
{
	const struct dropout *d = state;
	bool training = d->legacy_training;
	double ratio = d->ratio;

	if (nin < 1 || !in[0] || nout < 1)
		return ok_fail(err, err_size, "Dropout needs its data input and output");
	if (nin > 1 && in[1]) {
		if (!in[1]->data || in[1]->elems != 1)
			return ok_fail(err, err_size, "ratio must be a constant scalar");
		ratio = ok_get_f(in[1], 0);
	}
	if (nin > 2 && in[2]) {
		if (!in[2]->data || in[2]->elems != 1)
			return ok_fail(err, err_size, "training_mode must be a constant scalar");
		training = ok_get_i(in[2], 0) != 0;
	}
	if (!(ratio >= 0 && ratio < 1))
		return ok_fail(err, err_size, "ratio %g is outside [0, 1)", ratio);
	if (training && ratio > 0)
		return ok_fail(err, err_size,
			       "training-mode dropout with ratio %g is random, which is not supported",
			       ratio);
	if (out[0]) {
		out[0]->dtype = in[0]->dtype;
		ok_set_shape(out[0], in[0]->rank, in[0]->dims);
	}
	if (nout > 1 && out[1]) {
		out[1]->dtype = NPU_DTYPE_BOOL;
		ok_set_shape(out[1], in[0]->rank, in[0]->dims);
	}
	return 0;
}

static int dropout_run(const void *state, size_t nin, const struct npu_kernel_tensor *const *in,
		       size_t nout, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call)
{
	(void)state;
	(void)nin;
	(void)call;
	if (out[0])
		memcpy(out[0]->data, in[0]->data, in[0]->elems * npu_dtype_size(in[0]->dtype));
	if (nout > 1 && out[1])
		memset(out[1]->data, 1, out[1]->elems);
	return 0;
}

static const struct npu_kernel k_dropout = {
	.size = sizeof(struct npu_kernel),
	.name = "Dropout",
	.infer = dropout_infer,
	.run = dropout_run,
	.release = ok_state_free,
};

static int dropout_create(const struct npu_onnx_node *node, void *opaque, void **state,
			  char *err, size_t err_size)
{
	struct dropout *d = ok_state_alloc(sizeof(*d));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!d)
		return -ENOMEM;
	d->ratio = npu_onnx_node_opset(node) < 12 ? ok_attr_f(node, "ratio", 0.5f) : 0.5f;
	d->legacy_training = npu_onnx_node_opset(node) < 7 && ok_attr_i(node, "is_test", 0) == 0;
	*state = d;
	return 0;
}

static const struct npu_onnx_op op_dropout = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Dropout",
	.kernel = &k_dropout,
	.create = dropout_create,
};

const struct npu_onnx_op *const ok_ops_misc[] = {
	&op_dropout,
	NULL,
};
