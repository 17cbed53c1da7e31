/* SPDX-License-Identifier: MIT */
/*
 * libnpu CPU kernels: ops that are not libnpu ops, run by the graph
 * runtime in its CPU segments.  Since libnpu 1.5 (symbol version NPU_1.5).
 *
 * Model
 *
 *   A kernel is a table of callbacks (struct npu_kernel) that an
 *   application, a runtime or a front end defines: its own custom ops,
 *   and libnpu-onnx's ONNX ops that have no device op (TopK, NonZero,
 *   the loss functions, ...), which are written against this same
 *   interface.  A graph node of kind NPU_NODE_KERNEL runs one kernel with
 *   an opaque per-node @state (its attributes, parsed once by whoever
 *   adds the node): npu_graph_add_kernel_node() (graph.h).
 *
 *   A kernel node has up to NPU_KERNEL_MAX_INPUTS inputs and up to
 *   NPU_KERNEL_MAX_OUTPUTS outputs (absent optional ones of either are
 *   NPU_VALUE_NONE; at least one output is present), of
 *   any dtype of ops.h, the host-only ones (INT64, BOOL, FP64, ...)
 *   included.  Its inputs and outputs are dense row-major host memory:
 *   the runtime places kernel nodes in CPU segments, maps their operands
 *   and orders them after the device jobs that write their inputs.
 *
 *   npu_graph_add_kernel_node() calls @infer to check the node (its
 *   output values must have the dtypes and shapes it infers); compile
 *   folds a node whose inputs are all static (one without inputs too) by
 *   calling @run once, drops one whose outputs nothing needs, and
 *   otherwise the runtime calls @run in every run.
 *
 * Callbacks
 *
 *   Each callback receives arrays of pointers to struct npu_kernel_tensor
 *   (never an array of structs, so the struct may grow); an absent
 *   optional input or output is a NULL pointer.  @state is the node's: callbacks
 *   must treat it as read-only, because runtimes compiled from one graph
 *   share it and may run on different threads at once.
 *
 *   @infer (required) fills each present output's dtype, rank and dims
 *   (which start zeroed) from the inputs' (whose @data is set for static
 *   inputs only, so shape-like inputs such as axes can be read when they
 *   are constants) and returns 0, or -EINVAL with an English reason in
 *   @err.
 *
 *   @work (optional) returns the work units of one run (the CPU path's
 *   max_work limit, ops.h struct npu_cpu_limits); without it a node costs
 *   one unit per element of its inputs and outputs.  The operands' bytes
 *   count against max_bytes.  Both are checked before @run starts.
 *
 *   @run computes the outputs.  A kernel whose time grows with its input
 *   calls npu_kernel_poll() every few milliseconds of work, and returns
 *   its non-zero result at once (the run was cancelled or passed its
 *   deadline).  It returns 0, or a negative errno with
 *   npu_kernel_fail() saying why ("index 7 is out of range [-3, 3)");
 *   the runtime reports it after the node, "node 'k' (TopK): index 7 is
 *   out of range [-3, 3)".
 *
 *   @release (optional) frees @state when the graph and every runtime
 *   compiled from it are gone.
 *
 * Errors are negative errnos; nothing is printed.
 */
#ifndef NPU_KERNEL_H
#define NPU_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_KERNEL_MAX_INPUTS	64
#define NPU_KERNEL_MAX_OUTPUTS	64

/*
 * One operand of a kernel.  Written by libnpu, read by the kernel (and
 * by @infer for the outputs' dtype, rank and dims); fields are only ever
 * appended.
 */
struct npu_kernel_tensor {
	enum npu_dtype dtype;
	uint32_t rank;				/* 0: a scalar */
	/*
	 * 0 in an empty tensor (elems 0): a kernel may get an empty input
	 * beside outputs that are not; a node whose outputs are all empty
	 * is never run.
	 */
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint64_t elems;				/* product of dims */
	/*
	 * Dense, row-major, native endianness; NULL in @infer for an input
	 * that is not static and for every output.
	 */
	void *data;
	/* INT8/UINT8 values with per-tensor quantization, else 0 and 0. */
	float scale;
	int32_t zero_point;
};

/* A run in progress, for npu_kernel_poll() and npu_kernel_fail(). */
struct npu_kernel_call;

struct npu_kernel {
	uint32_t size;		/* sizeof(struct npu_kernel) */
	/* For messages and profiles, e.g. "TopK" or "com.example::Swish". */
	const char *name;
	int (*infer)(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in,
		     size_t num_outputs, struct npu_kernel_tensor *const *out,
		     char *err, size_t err_size);
	uint64_t (*work)(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in,
			 size_t num_outputs,
			 const struct npu_kernel_tensor *const *out);
	int (*run)(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call);
	void (*release)(void *state);
};

#define NPU_KERNEL_INIT		{ .size = sizeof(struct npu_kernel) }

/*
 * Report @work_done units of work since the last poll; 0 to go on, or
 * -ETIME (the run's deadline passed) or -ECANCELED
 * (npu_runtime_cancel()), which @run returns at once.  Cheap: call it
 * every few thousand elements.
 */
int npu_kernel_poll(struct npu_kernel_call *call, uint64_t work_done);

/*
 * Record why @run fails (the runtime prefixes the node's name) and
 * return @error, a negative errno: return npu_kernel_fail(call, -EINVAL,
 * "index %lld is out of range", v);
 */
__attribute__((format(printf, 3, 4)))
int npu_kernel_fail(struct npu_kernel_call *call, int error,
		    const char *fmt, ...);

/*
 * Run @kernel once on host memory, outside any graph: @in and @out as the
 * callbacks get them (NULL where absent, every other @data set, outputs'
 * dtypes and shapes as @infer would give them: @infer is not called; the
 * caller allocates), within @limits (NULL: the defaults; max_work bounds
 * @work's count, -E2BIG before anything runs).  For tests and tools.
 * @err (if not NULL) receives the failure's message.
 */
int npu_kernel_run(const struct npu_kernel *kernel, const void *state,
		   size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out,
		   const struct npu_cpu_limits *limits, char *err,
		   size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* NPU_KERNEL_H */
