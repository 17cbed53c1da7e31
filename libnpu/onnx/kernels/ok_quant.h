/* SPDX-License-Identifier: MIT */
/*
 * The quant family of ONNX CPU kernels (ok_quant*.c): QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv, and com.microsoft's QLinear* ops and
 * QGemm that onnxruntime's optimizer writes (ok_quant_ms*.c).  They are
 * the reference the int8 device path is compared with, so they compute
 * exactly what onnxruntime's CPU provider (MLAS) computes: the division
 * x / scale in float32, clamping to the output range before rounding
 * half to even, requantization as a float32 multiplier (x_scale *
 * w_scale / y_scale, in that order).
 * Private to the family and its tests (tests/host/libnpu/onnx-kquant.c
 * fills these states directly).
 */
#ifndef NPU_ONNX_OK_QUANT_H
#define NPU_ONNX_OK_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "ok_nn.h"
#include "ok_util.h"

#define OK_QUANT_MAX_SPATIAL	(NPU_TENSOR_MAX_RANK - 2)

/* QuantizeLinear and DequantizeLinear. */
struct ok_qdq_state {
	int64_t axis;		/* of a per-axis scale (default 1) */
	bool per_axis;		/* opset >= 13: a 1-D scale may be per axis */
};

enum ok_quant_pad {
	OK_QPAD_NOTSET,
	OK_QPAD_SAME_UPPER,
	OK_QPAD_SAME_LOWER,
	OK_QPAD_VALID,
};

/* ConvInteger and QLinearConv; a count of 0: the attribute is absent. */
struct ok_qconv_state {
	enum ok_quant_pad auto_pad;
	int64_t group;
	uint32_t n_kernel, n_strides, n_dilations, n_pads;
	int64_t kernel[OK_QUANT_MAX_SPATIAL];
	int64_t strides[OK_QUANT_MAX_SPATIAL];
	int64_t dilations[OK_QUANT_MAX_SPATIAL];
	int64_t pads[2 * OK_QUANT_MAX_SPATIAL];	/* begins, then ends */
};

/*
 * MLAS's requantization of an int32 accumulator: float(acc) * multiplier
 * clamped to the output range around @zero_point, rounded half to even.
 */
int32_t ok_requantize(int32_t acc, float multiplier, int32_t zero_point,
		      int32_t lo, int32_t hi);
/* MLAS's QuantizeLinear of one value: saturate(round(x / scale) + zp). */
int32_t ok_quantize_f32(float x, float scale, int32_t zero_point, int32_t lo,
			int32_t hi);
/* The range of a quantized dtype; false if @dt is not one. */
bool ok_quant_range(enum npu_dtype dt, int32_t *lo, int32_t *hi);

/* ---- com.microsoft's quantized ops (ok_quant_ms*.c) ------------------------ */

#define OK_MS_DOMAIN	"com.microsoft"

struct ok_ms_leaky_relu_state {
	float alpha;
};

struct ok_ms_concat_state {
	int64_t axis;
};

/* QLinearGlobalAveragePool, and QLinearAveragePool's window. */
struct ok_ms_pool_state {
	bool channels_last;	/* N, D1..Dn, C */
	struct ok_window w;
	bool count_include_pad;
};

struct ok_ms_gemm_state {
	float alpha;
	bool trans_a, trans_b;
};

/* QLinearSoftmax: @opset is the node's attribute, the Softmax it replaces. */
struct ok_ms_softmax_state {
	int64_t opset, axis;
};

static inline int32_t ok_ms_q8(const struct npu_kernel_tensor *t, uint64_t i)
{
	return t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
					    ((const uint8_t *)t->data)[i];
}

bool ok_ms_is_q8(enum npu_dtype dt);
/*
 * A scale: one float32, as a scalar or a 1-D tensor of one value (what
 * onnxruntime accepts); a zero point: the same, of dtype @want, or absent.
 */
int ok_ms_check_scale(const struct npu_kernel_tensor *t, const char *what, char *err,
		      size_t err_size);
int ok_ms_check_zero_point(const struct npu_kernel_tensor *t, enum npu_dtype want,
			   const char *what, char *err, size_t err_size);
float ok_ms_scale(const struct npu_kernel_tensor *t);
int32_t ok_ms_zero_point(const struct npu_kernel_tensor *t);	/* 0 when absent */
/* x86's float to int32 conversion: half to even, INT32_MIN when out of range or NaN. */
int32_t ok_ms_cvt(float v);
/* MLAS's logistic, as its FMA3 kernel computes it. */
float ok_ms_logistic(float x);
/* The 256-entry table of a lookup op (@fn: 0 sigmoid, 1 leaky relu, 2 identity). */
void ok_ms_build_table(uint8_t table[256], enum npu_dtype dt, float x_scale, int32_t x_zp,
		       float y_scale, int32_t y_zp, int fn, float alpha);

extern const struct npu_onnx_op ok_op_qlinear_add, ok_op_qlinear_mul, ok_op_qlinear_sigmoid,
	ok_op_qlinear_leaky_relu, ok_op_qlinear_concat, ok_op_qlinear_global_average_pool,
	ok_op_qlinear_average_pool, ok_op_qgemm, ok_op_qlinear_softmax;
extern const struct npu_kernel ok_kernel_qlinear_add, ok_kernel_qlinear_mul,
	ok_kernel_qlinear_sigmoid, ok_kernel_qlinear_leaky_relu, ok_kernel_qlinear_concat,
	ok_kernel_qlinear_global_average_pool, ok_kernel_qlinear_average_pool, ok_kernel_qgemm,
	ok_kernel_qlinear_softmax;

/* ---- The ops (ok_ops_quant[] lists them) ---------------------------------- */

extern const struct npu_onnx_op ok_op_quantize_linear;
extern const struct npu_onnx_op ok_op_dequantize_linear;
extern const struct npu_onnx_op ok_op_dynamic_quantize_linear;
extern const struct npu_onnx_op ok_op_matmul_integer;
extern const struct npu_onnx_op ok_op_qlinear_matmul;
extern const struct npu_onnx_op ok_op_conv_integer;
extern const struct npu_onnx_op ok_op_qlinear_conv;

/* The kernels, for tests that run them directly. */
extern const struct npu_kernel ok_kernel_quantize_linear;
extern const struct npu_kernel ok_kernel_dequantize_linear;
extern const struct npu_kernel ok_kernel_dynamic_quantize_linear;
extern const struct npu_kernel ok_kernel_matmul_integer;
extern const struct npu_kernel ok_kernel_qlinear_matmul;
extern const struct npu_kernel ok_kernel_conv_integer;
extern const struct npu_kernel ok_kernel_qlinear_conv;

#endif /* NPU_ONNX_OK_QUANT_H */
