/* SPDX-License-Identifier: MIT */
/*
 * npu-quantize: sample inputs and model runs through libnpu.
 *
 * A sample directory holds one subdirectory per sample, each with one
 * .npy file per model input named after the input (characters outside
 * [A-Za-z0-9._-] replaced by '_', as npu-run names files); a model with a
 * single input may instead have one .npy file per sample directly in the
 * directory.  Samples are taken in name order.
 */
#ifndef NPU_QUANTIZE_RUN_H
#define NPU_QUANTIZE_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "npu/npu.h"
#include "npu/onnx.h"
#include "onnx.pb-c.h"

struct qr_samples {
	char *root;
	char **names;		/* entries of @root, sorted */
	size_t count;
	bool flat;		/* .npy files, not subdirectories */
};

/* Up to @max samples (0: all) of @dir; -ENOENT when it has none. */
int qr_samples_find(const char *dir, size_t max, struct qr_samples *out, char *err,
		    size_t err_size);
void qr_samples_free(struct qr_samples *s);

/*
 * The shapes in sample 0's files of the model's inputs with dynamic
 * dimensions, which bind them (every sample must then have them);
 * *@shapes is malloc'd, its names point into @mp.
 */
int qr_samples_shapes(const Onnx__ModelProto *mp, const struct qr_samples *s,
		      struct npu_onnx_shape **shapes, size_t *count, char *err, size_t err_size);

struct qr_model;

/*
 * @mp imported (npu_onnx_load) with the tensors @extra as further outputs,
 * and compiled for the CPU, or the NPU when @device; with @bind, memory
 * for every output is allocated and bound (else the model only tells
 * the outputs' sizes, qr_output_bytes()).
 */
int qr_model_open(Onnx__ModelProto *mp, const char *const *extra, size_t num_extra,
		  const struct npu_onnx_shape *shapes, size_t num_shapes, bool device, bool bind,
		  struct qr_model **out, char *err, size_t err_size);
void qr_model_close(struct qr_model *m);

/* Bind sample @i's files to the inputs (checked against them) and run. */
int qr_model_run(struct qr_model *m, const struct qr_samples *s, size_t i, char *err,
		 size_t err_size);

size_t qr_model_num_outputs(const struct qr_model *m);
/* Output @i after a run: its name, dtype, element count and data. */
const char *qr_output_name(const struct qr_model *m, size_t i);
enum npu_dtype qr_output_dtype(const struct qr_model *m, size_t i);
size_t qr_output_count(const struct qr_model *m, size_t i);
uint64_t qr_output_bytes(const struct qr_model *m, size_t i);
/* Its rank, with its dims in @dims (up to NPU_TENSOR_MAX_RANK). */
int qr_output_shape(const struct qr_model *m, size_t i, int64_t *dims);
const void *qr_output_data(const struct qr_model *m, size_t i);
/* The index of output @name, or -1. */
long qr_output_find(const struct qr_model *m, const char *name);

#endif /* NPU_QUANTIZE_RUN_H */
