/* SPDX-License-Identifier: MIT */
/*
 * The reduce family of the ONNX CPU kernels: reductions, arg/top-k,
 * softmax forms, normalizations, losses and Det.  Each op's per-node
 * state is declared here so that the unit tests can fill one directly
 * and call the kernels through npu_kernel_run().
 */
#ifndef NPU_ONNX_OK_REDUCE_H
#define NPU_ONNX_OK_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "ok_util.h"

/* ---- Reduce* ------------------------------------------------------------------ */

enum ok_reduce_kind {
	OK_REDUCE_SUM,
	OK_REDUCE_MEAN,
	OK_REDUCE_MAX,
	OK_REDUCE_MIN,
	OK_REDUCE_PROD,
	OK_REDUCE_L1,
	OK_REDUCE_L2,
	OK_REDUCE_LOG_SUM,
	OK_REDUCE_LOG_SUM_EXP,
	OK_REDUCE_SUM_SQUARE,
};

struct ok_reduce_state {
	enum ok_reduce_kind kind;
	bool keepdims;
	bool noop_with_empty_axes;
	/* the opset takes axes as input 1 rather than as an attribute */
	bool axes_input;
	uint32_t num_axes;		/* of the attribute; 0: all */
	int64_t axes[NPU_TENSOR_MAX_RANK];
};

extern const struct npu_kernel ok_reduce_kernels[10];	/* by enum ok_reduce_kind */

/* ---- ArgMax, ArgMin, TopK, Hardmax --------------------------------------------- */

struct ok_arg_state {
	bool is_max;
	bool keepdims;
	bool select_last_index;
	int64_t axis;
};

extern const struct npu_kernel ok_argmax_kernel, ok_argmin_kernel;

struct ok_topk_state {
	bool k_input;		/* opset 10+: k is input 1 */
	bool largest;
	bool sorted;
	int64_t k;		/* the attribute before opset 10 */
	int64_t axis;
};

extern const struct npu_kernel ok_topk_kernel;

/* Softmax, LogSoftmax and Hardmax share the axis rules of their opset. */
struct ok_softmax_state {
	/* before opset 13: the input is coerced to 2-D [d0*..*d(axis-1), rest] */
	bool flatten;
	int64_t axis;
};

extern const struct npu_kernel ok_softmax_kernel, ok_logsoftmax_kernel, ok_hardmax_kernel;

/* ---- Normalizations ---------------------------------------------------------------- */

struct ok_norm_state {
	int64_t axis;		/* LayerNormalization, LpNormalization */
	float epsilon;
	int64_t p;		/* LpNormalization: 1 or 2 */
	int64_t num_groups;	/* GroupNormalization */
	bool group_scale_per_channel;	/* GroupNormalization 21+ */
	uint32_t num_axes;	/* MeanVarianceNormalization */
	int64_t axes[NPU_TENSOR_MAX_RANK];
	/* LRN */
	int64_t size;
	float alpha, beta, bias;
	/* BatchNormalization */
	float momentum;
	bool training_mode;
	bool spatial;		/* before opset 9 */
};

extern const struct npu_kernel ok_layernorm_kernel, ok_instancenorm_kernel,
	ok_groupnorm_kernel, ok_lpnorm_kernel, ok_mvn_kernel, ok_lrn_kernel,
	ok_batchnorm_kernel;

/* ---- Losses ------------------------------------------------------------------------- */

enum ok_loss_reduction {
	OK_LOSS_NONE,
	OK_LOSS_SUM,
	OK_LOSS_MEAN,
};

struct ok_loss_state {
	enum ok_loss_reduction reduction;
	bool has_ignore_index;
	int64_t ignore_index;
};

extern const struct npu_kernel ok_sce_kernel, ok_nll_kernel;

/* ---- Det ------------------------------------------------------------------------------- */

extern const struct npu_kernel ok_det_kernel;

/* ---- The registry's entries ------------------------------------------------------------ */

extern const struct npu_onnx_op ok_op_reduce_sum, ok_op_reduce_mean, ok_op_reduce_max,
	ok_op_reduce_min, ok_op_reduce_prod, ok_op_reduce_l1, ok_op_reduce_l2,
	ok_op_reduce_log_sum, ok_op_reduce_log_sum_exp, ok_op_reduce_sum_square;
extern const struct npu_onnx_op ok_op_argmax, ok_op_argmin, ok_op_topk, ok_op_hardmax;
extern const struct npu_onnx_op ok_op_softmax, ok_op_logsoftmax;
extern const struct npu_onnx_op ok_op_layernorm, ok_op_instancenorm, ok_op_groupnorm,
	ok_op_lpnorm, ok_op_mvn, ok_op_lrn, ok_op_batchnorm;
extern const struct npu_onnx_op ok_op_sce, ok_op_nll;
extern const struct npu_onnx_op ok_op_det;

/* ---- Shared by the family's files ------------------------------------------------------- */

/* Every float type; or every numeric type but UINT64, which int64 accumulators cannot hold. */
int ok_red_check_float(const char *what, enum npu_dtype dt, char *err, size_t err_size);
int ok_red_check_numeric(const char *what, enum npu_dtype dt, char *err, size_t err_size);

/*
 * Input 0, and output 0 unless @out0_optional, present: a model may leave
 * any input or output name empty.
 */
int ok_red_need_io(size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out, bool out0_optional,
		   char *err, size_t err_size);

/* The kernel's infer @name: ok_red_need_io(), then @shape (an infer of the same type). */
#define OK_RED_INFER(name, shape, out0_optional)                                        \
	static int name(const void *state, size_t num_inputs,                           \
			const struct npu_kernel_tensor *const *in, size_t num_outputs,  \
			struct npu_kernel_tensor *const *out, char *err, size_t err_size) \
	{                                                                               \
		int rc = ok_red_need_io(num_inputs, in, num_outputs, out, out0_optional, \
					err, err_size);                                 \
                                                                                        \
		return rc ? rc : shape(state, num_inputs, in, num_outputs, out, err,    \
				       err_size);                                       \
	}

/*
 * The work of three passes over the first input, the .work of kernels
 * that find one statistic (a max or mean), then a second (a sum of
 * exponentials or a variance), then write every output element.
 */
uint64_t ok_red_work_3_passes(const void *state, size_t num_inputs,
			      const struct npu_kernel_tensor *const *in, size_t num_outputs,
			      const struct npu_kernel_tensor *const *out);

/* A tensor's [outer, n, inner] split around @axis. */
void ok_red_split(const struct npu_kernel_tensor *t, uint32_t axis, uint64_t *outer,
		  uint64_t *n, uint64_t *inner);

/*
 * ok_get_f/ok_set_f with float32, the common case, inline: a call and a
 * switch per element tripled the cost of a sum.
 */
static inline double ok_red_get(const struct npu_kernel_tensor *t, uint64_t i)
{
	if (t->dtype == NPU_DTYPE_FP32)
		return ((const float *)t->data)[i];
	return ok_get_f(t, i);
}

static inline void ok_red_set(struct npu_kernel_tensor *t, uint64_t i, double v)
{
	if (t->dtype == NPU_DTYPE_FP32)
		((float *)t->data)[i] = (float)v;
	else
		ok_set_f(t, i, v);
}

#endif /* NPU_ONNX_OK_REDUCE_H */
