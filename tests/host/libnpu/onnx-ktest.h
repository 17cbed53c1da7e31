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
/* The rank of a dims array, for kt_tensor(). */
#define KT_RANK(dims) ((uint32_t)(sizeof(dims) / sizeof(uint32_t)))
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

/* ---- Kernel calls on caller-owned tensors ----------------------------------- */

/*
 * One kernel call: inputs point into the test's own arrays, outputs are
 * allocated by kt_call_run() and freed by kt_call_done().  A NULL inp[]
 * or outp[] entry is an optional input or output left out.
 */
#define KT_CALL_IN 6
#define KT_CALL_OUT 5
struct kt_call {
	struct npu_kernel_tensor in[KT_CALL_IN];
	const struct npu_kernel_tensor *inp[KT_CALL_IN];
	size_t nin;
	struct npu_kernel_tensor out[KT_CALL_OUT];
	struct npu_kernel_tensor *outp[KT_CALL_OUT];
	size_t nout;
	char err[256];
};

/* Input @i of @c: @data (not copied) of @dims. */
void kt_call_in(struct kt_call *c, size_t i, enum npu_dtype dt, uint32_t rank,
		const uint32_t *dims, const void *data);
int kt_call_infer(const struct npu_kernel *k, const void *state, struct kt_call *c);
/* infer, then run on outputs allocated as infer shapes them. */
int kt_call_run_limits(const struct npu_kernel *k, const void *state, struct kt_call *c,
		       const struct npu_cpu_limits *limits);
int kt_call_run(const struct npu_kernel *k, const void *state, struct kt_call *c);
void kt_call_done(struct kt_call *c);
/* @rc is -EINVAL and @c's message names @part. */
void kt_call_expect_err(int rc, const struct kt_call *c, const char *part);

void kt_expect_shape(const struct npu_kernel_tensor *t, enum npu_dtype dt, uint32_t rank,
		     const uint32_t *dims);
/* @t's @n elements, read as ok_get_f() reads them, are @want within @tol relative. */
void kt_expect_f(const struct npu_kernel_tensor *t, const double *want, size_t n, double tol);

/* A cancel callback that stops a run at its first poll. */
bool kt_cancel_now(void *opaque);

/* ---- One-node models through npu_onnx_load() ---------------------------- */

/* A new attribute of node @n (at most 8). */
Onnx__AttributeProto *kt_new_attr(struct mb *b, Onnx__NodeProto *n, const char *name,
				  Onnx__AttributeProto__AttributeType type);
void kt_attr_s(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v);
/* A model's only output of ONNX type @elem. */
void kt_output_of(struct mb *b, const char *name, int elem);
/*
 * A string attribute with its type left unset (as the importer's
 * nodef() leaves every type): the importer goes by the field set.
 */
void kt_attr_string(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v);
/* Load @b, run it once on @ins (the graph's inputs in order) into @outs. */
void kt_run_model(struct mb *b, size_t nin, void *const *ins, size_t nout, void *const *outs);
/* Compile and run @m: its first input (if any) from @x, its first output into @y. */
void kt_run_raw(struct npu_onnx_model *m, const void *x, void *y, size_t y_bytes);

/* Load @b (which it frees), then kt_run_raw() the model once and free it. */
void kt_load_run(struct mb *b, const void *x, void *y, size_t y_bytes);

#endif /* ONNX_KTEST_H */
