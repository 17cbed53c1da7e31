// SPDX-License-Identifier: MIT
/*
 * The math family's table: elementwise math, comparison, logic, Where,
 * the activations, Clip, Cast/CastLike and Identity.  Each op is one
 * kernel named after it; create() parses the node's attributes into a
 * struct ok_math_state (ok_math.h) for the callbacks of the op's shape
 * (ok_math_unary.c, ok_math_binary.c, ok_math_select.c, ok_math_cast.c).
 */
#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ok_math.h"

/* name, id, first opset, callbacks */
#define OK_MATH_OPS(X)							\
	X(Abs, OKM_ABS, 1, unary)					\
	X(Neg, OKM_NEG, 1, unary)					\
	X(Sign, OKM_SIGN, 9, unary)					\
	X(Floor, OKM_FLOOR, 1, unary)					\
	X(Ceil, OKM_CEIL, 1, unary)					\
	X(Round, OKM_ROUND, 11, unary)					\
	X(Reciprocal, OKM_RECIPROCAL, 1, unary)				\
	X(Sqrt, OKM_SQRT, 1, unary)					\
	X(Exp, OKM_EXP, 1, unary)					\
	X(Log, OKM_LOG, 1, unary)					\
	X(Erf, OKM_ERF, 9, unary)					\
	X(Sin, OKM_SIN, 7, unary)					\
	X(Cos, OKM_COS, 7, unary)					\
	X(Tan, OKM_TAN, 7, unary)					\
	X(Asin, OKM_ASIN, 7, unary)					\
	X(Acos, OKM_ACOS, 7, unary)					\
	X(Atan, OKM_ATAN, 7, unary)					\
	X(Sinh, OKM_SINH, 9, unary)					\
	X(Cosh, OKM_COSH, 9, unary)					\
	X(Asinh, OKM_ASINH, 9, unary)					\
	X(Acosh, OKM_ACOSH, 9, unary)					\
	X(Atanh, OKM_ATANH, 9, unary)					\
	X(IsNaN, OKM_ISNAN, 9, unary)					\
	X(IsInf, OKM_ISINF, 10, unary)					\
	X(Not, OKM_NOT, 1, unary)					\
	X(BitwiseNot, OKM_BITWISE_NOT, 18, unary)			\
	X(Relu, OKM_RELU, 1, unary)					\
	X(LeakyRelu, OKM_LEAKY_RELU, 1, unary)				\
	X(Elu, OKM_ELU, 1, unary)					\
	X(Selu, OKM_SELU, 1, unary)					\
	X(Celu, OKM_CELU, 12, unary)					\
	X(Softplus, OKM_SOFTPLUS, 1, unary)				\
	X(Softsign, OKM_SOFTSIGN, 1, unary)				\
	X(Mish, OKM_MISH, 18, unary)					\
	X(ThresholdedRelu, OKM_THRESHOLDED_RELU, 10, unary)		\
	X(Gelu, OKM_GELU, 20, unary)					\
	X(HardSigmoid, OKM_HARD_SIGMOID, 1, unary)			\
	X(HardSwish, OKM_HARD_SWISH, 14, unary)				\
	X(Sigmoid, OKM_SIGMOID, 1, unary)				\
	X(Tanh, OKM_TANH, 1, unary)					\
	X(Shrink, OKM_SHRINK, 9, unary)					\
	X(Add, OKM_ADD, 7, binary)					\
	X(Sub, OKM_SUB, 7, binary)					\
	X(Mul, OKM_MUL, 7, binary)					\
	X(Div, OKM_DIV, 7, binary)					\
	X(Pow, OKM_POW, 7, binary)					\
	X(Mod, OKM_MOD, 10, binary)					\
	X(PRelu, OKM_PRELU, 7, binary)					\
	X(BitShift, OKM_BITSHIFT, 11, binary)				\
	X(BitwiseAnd, OKM_BITWISE_AND, 18, binary)			\
	X(BitwiseOr, OKM_BITWISE_OR, 18, binary)			\
	X(BitwiseXor, OKM_BITWISE_XOR, 18, binary)			\
	X(Equal, OKM_EQUAL, 7, binary)					\
	X(Greater, OKM_GREATER, 7, binary)				\
	X(Less, OKM_LESS, 7, binary)					\
	X(GreaterOrEqual, OKM_GREATER_EQUAL, 12, binary)		\
	X(LessOrEqual, OKM_LESS_EQUAL, 12, binary)			\
	X(And, OKM_AND, 7, binary)					\
	X(Or, OKM_OR, 7, binary)					\
	X(Xor, OKM_XOR, 7, binary)					\
	X(Max, OKM_MAX, 6, binary)					\
	X(Min, OKM_MIN, 6, binary)					\
	X(Sum, OKM_SUM, 6, binary)					\
	X(Mean, OKM_MEAN, 6, binary)					\
	X(Where, OKM_WHERE, 9, select)					\
	X(Clip, OKM_CLIP, 1, select)					\
	X(Cast, OKM_CAST, 6, cast)					\
	X(CastLike, OKM_CASTLIKE, 15, cast)				\
	X(Identity, OKM_IDENTITY, 1, cast)

static const char *const op_names[OKM_NUM_OPS] = {
#define NAME_OF(NAME, ID, SINCE, SHAPE) [ID] = #NAME,
	OK_MATH_OPS(NAME_OF)
#undef NAME_OF
};

const char *ok_math_op_name(enum ok_math_op op)
{
	return op < OKM_NUM_OPS && op_names[op] ? op_names[op] : "?";
}

bool ok_math_onnx_dtype(int64_t onnx, enum npu_dtype *dt)
{
	/* TensorProto.DataType */
	switch (onnx) {
	case 1: *dt = NPU_DTYPE_FP32; return true;
	case 2: *dt = NPU_DTYPE_UINT8; return true;
	case 3: *dt = NPU_DTYPE_INT8; return true;
	case 4: *dt = NPU_DTYPE_UINT16; return true;
	case 5: *dt = NPU_DTYPE_INT16; return true;
	case 6: *dt = NPU_DTYPE_INT32; return true;
	case 7: *dt = NPU_DTYPE_INT64; return true;
	case 9: *dt = NPU_DTYPE_BOOL; return true;
	case 10: *dt = NPU_DTYPE_FP16; return true;
	case 11: *dt = NPU_DTYPE_FP64; return true;
	case 12: *dt = NPU_DTYPE_UINT32; return true;
	case 13: *dt = NPU_DTYPE_UINT64; return true;
	case 16: *dt = NPU_DTYPE_BF16; return true;
	default: return false;
	}
}

static const char *onnx_type_words(int64_t onnx)
{
	switch (onnx) {
	case 8: return "string";
	case 14: return "complex64";
	case 15: return "complex128";
	case 17: case 18: case 19: case 20: return "a float8 type";
	case 21: case 22: return "a 4-bit integer type";
	default: return "an unknown type";
	}
}

/* A string attribute that must be one of two words: 0 or 1, or -EINVAL. */
static int choice(const struct npu_onnx_node *n, const char *attr, const char *def,
		  const char *zero, const char *one, bool *v, char *err, size_t err_size)
{
	char buf[32];
	int ret = npu_onnx_attr_string(n, attr, buf, sizeof(buf));

	if (ret == -ENOENT && def) {
		snprintf(buf, sizeof(buf), "%s", def);
	} else if (ret == -ENOENT) {
		return ok_fail(err, err_size, "%s needs the attribute %s",
			       npu_onnx_node_op_type(n), attr);
	} else if (ret) {
		return ok_fail(err, err_size, "%s's %s must be \"%s\" or \"%s\"",
			       npu_onnx_node_op_type(n), attr, zero, one);
	}
	if (!strcmp(buf, zero) || !strcmp(buf, one)) {
		*v = !strcmp(buf, one);
		return 0;
	}
	return ok_fail(err, err_size, "%s's %s must be \"%s\" or \"%s\", not \"%s\"",
		       npu_onnx_node_op_type(n), attr, zero, one, buf);
}

static int flag(const struct npu_onnx_node *n, const char *attr, int64_t def, bool *v,
		char *err, size_t err_size)
{
	int64_t i = ok_attr_i(n, attr, def);

	if (i != 0 && i != 1)
		return ok_fail(err, err_size, "%s's %s must be 0 or 1, not %lld",
			       npu_onnx_node_op_type(n), attr, (long long)i);
	*v = i;
	return 0;
}

static int parse(const struct npu_onnx_node *n, struct ok_math_state *s, char *err,
		 size_t err_size)
{
	int64_t to;
	int ret = 0;

	switch (s->op) {
	case OKM_LEAKY_RELU:
		s->alpha = ok_attr_f(n, "alpha", 0.01f);
		break;
	case OKM_ELU:
	case OKM_THRESHOLDED_RELU:
		s->alpha = ok_attr_f(n, "alpha", 1.0f);
		break;
	case OKM_CELU:
		s->alpha = ok_attr_f(n, "alpha", 1.0f);
		if (s->alpha == 0)
			return ok_fail(err, err_size, "Celu's alpha must not be 0");
		break;
	case OKM_SELU:
		s->alpha = ok_attr_f(n, "alpha", 1.67326319217681884765625f);
		s->gamma = ok_attr_f(n, "gamma", 1.05070102214813232421875f);
		break;
	case OKM_HARD_SIGMOID:
		s->alpha = ok_attr_f(n, "alpha", 0.2f);
		s->beta = ok_attr_f(n, "beta", 0.5f);
		break;
	case OKM_SHRINK:
		s->alpha = ok_attr_f(n, "lambd", 0.5f);
		s->beta = ok_attr_f(n, "bias", 0.0f);
		break;
	case OKM_GELU:
		ret = choice(n, "approximate", "none", "none", "tanh", &s->gelu_tanh, err,
			     err_size);
		break;
	case OKM_MOD:
		ret = flag(n, "fmod", 0, &s->fmod, err, err_size);
		break;
	case OKM_BITSHIFT:
		ret = choice(n, "direction", NULL, "LEFT", "RIGHT", &s->shift_right, err,
			     err_size);
		break;
	case OKM_ISINF:
		ret = flag(n, "detect_positive", 1, &s->detect_pos, err, err_size);
		if (!ret)
			ret = flag(n, "detect_negative", 1, &s->detect_neg, err, err_size);
		break;
	case OKM_CLIP:
		s->clip_attrs = npu_onnx_node_opset(n) < 11;
		s->clip_min = ok_attr_f(n, "min", -FLT_MAX);
		s->clip_max = ok_attr_f(n, "max", FLT_MAX);
		break;
	case OKM_CAST:
		if (npu_onnx_attr_int(n, "to", &to))
			return ok_fail(err, err_size, "Cast needs the integer attribute to");
		if (!ok_math_onnx_dtype(to, &s->to))
			return ok_fail(err, err_size, "Cast to %s (%lld) is not supported",
				       onnx_type_words(to), (long long)to);
		break;
	default:
		break;
	}
	return ret;
}

static int create(const struct npu_onnx_node *node, void *opaque, void **state,
		  char *err, size_t err_size)
{
	struct ok_math_state *s = ok_state_alloc(sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->op = *(const enum ok_math_op *)opaque;
	ret = parse(node, s, err, err_size);
	if (ret) {
		ok_state_free(s);
		return ret;
	}
	*state = s;
	return 0;
}

#define ENTRY(NAME, ID, SINCE, SHAPE)					\
	static const enum ok_math_op id_##NAME = ID;			\
	static const struct npu_kernel kernel_##NAME = {		\
		.size = sizeof(struct npu_kernel),			\
		.name = #NAME,						\
		.infer = ok_math_##SHAPE##_infer,			\
		.run = ok_math_##SHAPE##_run,				\
		.release = ok_state_free,				\
	};								\
	static const struct npu_onnx_op op_##NAME = {			\
		.size = sizeof(struct npu_onnx_op),			\
		.domain = "",						\
		.op_type = #NAME,					\
		.since_version = SINCE,					\
		.kernel = &kernel_##NAME,				\
		.create = create,					\
		.opaque = (void *)&id_##NAME,				\
	};
OK_MATH_OPS(ENTRY)
#undef ENTRY

const struct npu_onnx_op *const ok_ops_math[] = {
#define LIST(NAME, ID, SINCE, SHAPE) &op_##NAME,
	OK_MATH_OPS(LIST)
#undef LIST
	NULL,
};
