/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: rewrite an fp32 ONNX ModelProto into onnxruntime's QDQ
 * form, as quantize_static(quant_format=QDQ) writes it (qdq_quantizer.py
 * and its operator registry): QuantizeLinear/DequantizeLinear pairs on
 * activations, weights stored quantized behind a DequantizeLinear,
 * biases as int32.  The tensor and node names are onnxruntime's.
 */
#ifndef NPU_QUANTIZE_QDQ_H
#define NPU_QUANTIZE_QDQ_H

#include <stdbool.h>
#include <stddef.h>

#include "onnx.pb-c.h"
#include "npu-quantize-opset.h"
#include "npu-quantize-scale.h"

/*
 * What calibration knows of a tensor: 1 with its range when it is a
 * float activation that was calibrated, 0 otherwise.
 */
typedef int (*qq_range_fn)(void *ctx, const char *name, float *rmin, float *rmax);

struct qq_options {
	enum qz_type activation;	/* QZ_INT8 (default) or QZ_UINT8 */
	bool per_tensor;		/* weights per tensor, not per channel */
	bool reduce_range;		/* per-channel weights over 7 bits */
	const char *const *exclude;	/* node names left float */
	size_t num_exclude;
	qq_range_fn range;
	qo_shape_fn shape;	/* tensor shapes, for the opset upgrade */
	void *ctx;		/* of range and shape */
};

/* Per node of the input model: what became of it. */
struct qq_node_note {
	char *name;		/* node name, or "<op_type> #<index>" if unnamed */
	char *op_type;
	bool quantized;
	char *why;		/* why it stays float, NULL when quantized */
};

/* A tensor that got a QuantizeLinear/DequantizeLinear pair. */
struct qq_tensor_note {
	char *name;		/* the fp32 tensor's name in the input model */
	char *dq_output;	/* what the quantized model calls its dequantized value */
	float scale;
	int zero_point;
};

struct qq_result {
	struct qq_node_note *nodes;
	size_t num_nodes;
	struct qq_tensor_note *tensors;
	size_t num_tensors;
	size_t weights, biases;		/* initializers quantized */
	size_t biases_clipped;		/* bias values beyond int32, clipped */
	size_t weight_scales_raised;	/* channels whose scale the bias raised */
	long long opset_from, opset_to;	/* the default domain's opset */
};

/*
 * Rewrite @mp in place.  0, or a negative errno with a message in @err:
 * -EINVAL for a model this cannot quantize (not fp32, already quantized,
 * external data, per-channel on an old opset that cannot be raised),
 * -EDOM for a weight that is not finite, -ERANGE for a bias beyond int32,
 * -ENOMEM.  @res describes every node whatever the outcome.
 */
int qq_quantize(Onnx__ModelProto *mp, const struct qq_options *o, struct qq_result *res,
		char *err, size_t err_size);
void qq_result_free(struct qq_result *res);

/*
 * qq_quantize()'s checks of the model alone (fp32, not quantized, an
 * opset it can write @o's form in), without changing it: a refusal
 * before any calibration run.  0 or -EINVAL with a message.
 */
int qq_check(Onnx__ModelProto *mp, const struct qq_options *o, char *err, size_t err_size);

/*
 * The names of the model's float activations calibration must cover: the
 * inputs and outputs of the nodes of the op types quantize_static
 * quantizes that are not initializers (calibrate.py's
 * select_tensors_to_calibrate), each once.  NULL-terminated, malloc'd
 * array of pointers into @mp.
 */
const char **qq_tensors_to_calibrate(const Onnx__ModelProto *mp, size_t *count);

/* A new initializer holding a copy of @data (raw_data), NULL without memory. */
Onnx__TensorProto *qq_new_tensor(const char *name, int32_t type, const int64_t *dims,
				 size_t rank, const void *data, size_t bytes);

/* 1 when quantize_static quantizes nodes of @op_type by default. */
int qq_op_quantizable(const char *op_type);

#endif /* NPU_QUANTIZE_QDQ_H */
