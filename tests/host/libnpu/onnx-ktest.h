/* SPDX-License-Identifier: MIT */
/*
 * What the ONNX CPU kernels' tests (onnx-k*.c) share: building kernel
 * tensors and running kernels through npu_kernel_run().
 */
#ifndef ONNX_KTEST_H
#define ONNX_KTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu/kernel.h"
#include "npu/onnx.h"
#include "onnx-build.h"
#include "onnx.pb-c.h"

/*
 * A tensor on the heap holding a copy of @data (zeros if NULL); the
 * test's teardown, kt_teardown(), frees it.
 */
struct npu_kernel_tensor *kt_tensor(enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
				    const void *data);
#define T(dt, dims, data) kt_tensor(dt, sizeof(dims) / sizeof(uint32_t), dims, data)
#define S(dt, data) kt_tensor(dt, 0, NULL, data)
int kt_teardown(void **unused);

/* The message of the last kt_run() (or of a caller's own infer/run). */
extern char kt_msg[256];

/*
 * infer, allocate the outputs as infer shaped them, run; the result of
 * whichever failed.  NULL entries of @out are outputs left out.
 */
int kt_run(const struct npu_kernel *k, const void *st, size_t nin,
	   struct npu_kernel_tensor **in, size_t nout, struct npu_kernel_tensor **out,
	   const struct npu_cpu_limits *lim);
/* Frees an output kt_run() allocated, so the tensor can be run into again. */
void kt_free_out(struct npu_kernel_tensor *t);
/* @ret is -EINVAL and kt_msg names @part. */
void kt_expect_fail(int ret, const char *part);

/*
 * A cancel callback that lets the first poll pass: a run stopped by it
 * started and then polled again.  kt_polls counts its calls.
 */
extern int kt_polls;
bool kt_cancel_after_first(void *opaque);

/* ---- One-node models through npu_onnx_load() ---------------------------- */

/* A new attribute of node @n (at most 8). */
Onnx__AttributeProto *kt_new_attr(struct mb *b, Onnx__NodeProto *n, const char *name,
				  Onnx__AttributeProto__AttributeType type);
void kt_attr_s(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v);
/* A model's only output of ONNX type @elem. */
void kt_output_of(struct mb *b, const char *name, int elem);
/* Compile and run @m: its first input (if any) from @x, its first output into @y. */
void kt_run_raw(struct npu_onnx_model *m, const void *x, void *y, size_t y_bytes);

#endif /* ONNX_KTEST_H */
