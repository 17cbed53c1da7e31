/* SPDX-License-Identifier: MIT */
/*
 * The math family's private interface: the state every one of its nodes
 * carries, the kernels' callbacks, and the broadcast walker the
 * multi-input ops share.
 */
#ifndef NPU_ONNX_OK_MATH_H
#define NPU_ONNX_OK_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ok_util.h"

enum ok_math_op {
	/* one input, same shape out */
	OKM_ABS, OKM_NEG, OKM_SIGN, OKM_FLOOR, OKM_CEIL, OKM_ROUND,
	OKM_RECIPROCAL, OKM_SQRT, OKM_EXP, OKM_LOG, OKM_ERF,
	OKM_SIN, OKM_COS, OKM_TAN, OKM_ASIN, OKM_ACOS, OKM_ATAN,
	OKM_SINH, OKM_COSH, OKM_ASINH, OKM_ACOSH, OKM_ATANH,
	OKM_ISNAN, OKM_ISINF, OKM_NOT, OKM_BITWISE_NOT,
	OKM_RELU, OKM_LEAKY_RELU, OKM_ELU, OKM_SELU, OKM_CELU, OKM_SOFTPLUS,
	OKM_SOFTSIGN, OKM_MISH, OKM_THRESHOLDED_RELU, OKM_GELU,
	OKM_HARD_SIGMOID, OKM_HARD_SWISH, OKM_SIGMOID, OKM_TANH, OKM_SHRINK,
	/* two inputs, broadcast */
	OKM_ADD, OKM_SUB, OKM_MUL, OKM_DIV, OKM_POW, OKM_MOD, OKM_PRELU,
	OKM_BITSHIFT, OKM_BITWISE_AND, OKM_BITWISE_OR, OKM_BITWISE_XOR,
	OKM_EQUAL, OKM_GREATER, OKM_LESS, OKM_GREATER_EQUAL, OKM_LESS_EQUAL,
	OKM_AND, OKM_OR, OKM_XOR,
	/* one or more inputs, broadcast */
	OKM_MAX, OKM_MIN, OKM_SUM, OKM_MEAN,
	/* the rest */
	OKM_WHERE, OKM_CLIP, OKM_CAST, OKM_CASTLIKE, OKM_IDENTITY,
	OKM_NUM_OPS
};

/*
 * A node's attributes, whichever its op: parsed once by create(), read
 * only afterwards.  Unused fields stay zero.
 */
struct ok_math_state {
	enum ok_math_op op;
	/*
	 * LeakyRelu, Elu, Celu, ThresholdedRelu: alpha; Selu: alpha, gamma;
	 * HardSigmoid: alpha, beta; Shrink: lambd as alpha, bias as beta.
	 */
	float alpha, beta, gamma;
	bool fmod;		/* Mod */
	bool shift_right;	/* BitShift: direction "RIGHT" */
	bool detect_pos, detect_neg;	/* IsInf */
	bool gelu_tanh;		/* Gelu: approximate "tanh" */
	/* Clip before opset 11: the bounds are attributes, not inputs. */
	bool clip_attrs;
	float clip_min, clip_max;
	enum npu_dtype to;	/* Cast */
};

/* The callbacks, by the shape of the op; each switches on state->op. */
int ok_math_unary_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in,
			size_t num_outputs, struct npu_kernel_tensor *const *out,
			char *err, size_t err_size);
int ok_math_unary_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in,
		      size_t num_outputs, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call);
int ok_math_binary_infer(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs, struct npu_kernel_tensor *const *out,
			 char *err, size_t err_size);
int ok_math_binary_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call);
int ok_math_select_infer(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs, struct npu_kernel_tensor *const *out,
			 char *err, size_t err_size);
int ok_math_select_run(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       struct npu_kernel_call *call);
int ok_math_cast_infer(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in,
		       size_t num_outputs, struct npu_kernel_tensor *const *out,
		       char *err, size_t err_size);
int ok_math_cast_run(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in,
		     size_t num_outputs, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call);

/* The op's ONNX name, for messages. */
const char *ok_math_op_name(enum ok_math_op op);

/* ONNX's TensorProto data type number as an npu_dtype; false if none. */
bool ok_math_onnx_dtype(int64_t onnx, enum npu_dtype *dt);

/* ---- Walking a broadcast: ok_math_walk.c -------------------------------- */

#define OK_WALK_MAX_IN	3

/*
 * The output of a broadcast op as rows: the innermost run of dimensions
 * that every operand walks either densely or not at all (step 1 or 0),
 * repeated over the outer dimensions.  Same-shape operands are one row.
 */
struct ok_walk {
	size_t num_in;
	uint32_t rank;			/* outer dimensions, innermost last */
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint64_t stride[OK_WALK_MAX_IN][NPU_TENSOR_MAX_RANK];
	uint64_t row;			/* elements of one row */
	uint64_t step[OK_WALK_MAX_IN];	/* 0 or 1 */
};

/*
 * One piece of a row: @n output elements at @out, operand k's elements
 * at in[k] advancing by step[k] (0 or 1).  Returns 0 or
 * npu_kernel_fail()'s result.
 */
typedef int (*ok_row_fn)(const void *ctx, struct npu_kernel_call *call,
			 uint64_t n, void *out, const void *const *in,
			 const uint64_t *step);

void ok_walk_init(struct ok_walk *w, const struct npu_kernel_tensor *out,
		  size_t num_in, const struct npu_kernel_tensor *const *in);
/*
 * Call @fn over the whole output in pieces of at most OK_POLL_EVERY
 * elements, polling after each; @out and in[k] are the tensors' data.
 */
int ok_walk_run(const struct ok_walk *w, const struct npu_kernel_tensor *out,
		const struct npu_kernel_tensor *const *in, ok_row_fn fn,
		const void *ctx, struct npu_kernel_call *call);

#endif /* NPU_ONNX_OK_MATH_H */
