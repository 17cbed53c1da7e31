/* SPDX-License-Identifier: MIT */
/*
 * libnpu graph API: build a graph of ops once, compile it for a device (or
 * for the CPU alone), then run it many times.  Since libnpu 1.2 (symbol
 * version NPU_1.2).
 *
 * Model
 *
 *   An npu_graph holds values and nodes.  A value is a tensor description
 *   (dtype, shape, optional per-tensor quantization) that is one of
 *
 *     - an external input (NPU_VALUE_INPUT) or output (NPU_VALUE_OUTPUT),
 *       given memory by npu_runtime_setup();
 *     - a static value (weights, constants): its elements are copied into
 *       the graph when the value is added;
 *     - an internal tensor, which the compiler places in one arena.
 *
 *   A node reads input values and writes one output value.  Most nodes
 *   are one libnpu op (NPU_NODE_OP with struct npu_op_params, the same
 *   parameters and rules as npu_op_create()), so every op kind libnpu
 *   gains is a graph node with no change here.  A few node kinds only
 *   exist in graphs, because the compiler removes or rewrites them:
 *   RESHAPE (the same elements under another shape: no work at all),
 *   BATCHNORM (folded into the convolution before it, else turned into a
 *   multiply and an add), DIV (by a static divisor: a multiply; by a
 *   runtime one: ELTWISE DIV), and
 *   TRANSPOSE, CONCAT and SLICE (COPY ops over strided views of their
 *   values).
 *
 *   Data movement is NPU_OP_COPY: an OP node with params.copy reads a
 *   dense X of the output's rank, so Pad (any border), Slice with unit
 *   steps (negative offsets crop), Expand (EDGE border over dims of 1),
 *   Tile (WRAP) and Cast are one node each; Transpose and Concat are the
 *   node kinds above.  NPU_OP_RESIZE with NPU_NODE_NCHW resizes H and W
 *   of NCHW values; CONV2D and CONV_TRANSPOSE with NPU_NODE_NCHW take
 *   ONNX's layouts.
 *
 *   npu_graph_compile() turns a graph into an npu_runtime:
 *
 *     - constant folding: nodes whose inputs are all static run once, on
 *       the CPU, and their outputs become static;
 *     - rewrites: an ADD of a static per-channel vector after GEMM,
 *       CONV2D or CONV_TRANSPOSE into the op's bias; BATCHNORM into the
 *       preceding CONV2D's or CONV_TRANSPOSE's weights and bias; DIV by a
 *       constant into MUL; LayerNorm spelled out (REDUCE MEAN, SUB, POW 2,
 *       REDUCE MEAN, ADD eps, SQRT, DIV, then optionally MUL gamma and
 *       ADD beta over the trailing dims) into one LAYERNORM; HardSwish
 *       spelled out (ADD 3, CLIP [0, 6], MUL by x, MUL by 1/6) into one
 *       HARD_SWISH activation; and a
 *       following RELU, RELU6 (or CLIP to [0, 6]), LEAKY_RELU, SIGMOID,
 *       TANH, GELU, HARD_SIGMOID or HARD_SWISH into the op's fused
 *       activation;
 *     - quantized values stay quantized (since 1.6): an op between a
 *       DEQUANTIZE and a QUANTIZE reads and writes the 8-bit values
 *       itself (the same bits: ops dequantize, compute in binary32 and
 *       quantize), and a RELU or RELU6 keeping its input's quantization
 *       becomes the clamp of an integer GEMM's or CONV2D's epilogue;
 *     - nodes whose output no graph output needs are dropped;
 *     - every internal value gets a place in one arena buffer, reused by
 *       values whose lifetimes do not overlap; RESHAPE outputs share
 *       their input's place;
 *     - static values are uploaded once, into one read-only buffer, and
 *       NCHW convolution weights are packed into the device's layout;
 *     - internal values between NCHW convolutions, pools and layout-free
 *       ops are stored NHWC, so no op works on strided views there;
 *     - partitioning: runs of consecutive nodes the device can take form
 *       device segments, one command buffer each (many ops per job);
 *       the rest form CPU segments, run with the reference ops.
 *
 *   npu_runtime_setup() binds host memory to the external inputs and
 *   outputs; it may be called again at any time between runs without
 *   recompiling.  npu_runtime_run_async() starts a run: device segments
 *   are chained with fences, CPU segments run in between on a worker
 *   thread; npu_runtime_wait() waits for it.  npu_runtime_run() does both.
 *
 * Layout
 *
 *   Values are dense, row-major.  CONV2D, POOL2D and RESIZE nodes are
 *   NHWC as in ops.h, unless the node has NPU_NODE_NCHW: then X and Y are
 *   [N,C,H,W] and W is [CO, C/groups, KH, KW] (ONNX's layout); the
 *   compiler makes strided NHWC views of them, so no transpose runs.
 *   COPY, TRANSPOSE, CONCAT and SLICE see their values through views, so
 *   the compiler may store their operands NHWC like a convolution's.
 *
 * Thread safety
 *
 *   npu_graph    Not thread-safe; may be freed once compiled.
 *   npu_runtime  One run at a time: setup, run and wait must not race
 *                each other.  Different runtimes are independent.
 *
 * Errors are negative errnos; nothing is printed.  Functions that refuse
 * a graph can say why: npu_graph_error() returns a static or graph-owned
 * English message naming the node.
 */
#ifndef NPU_GRAPH_H
#define NPU_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

struct npu_context;
struct npu_queue;
struct npu_graph;
struct npu_runtime;

/* No value: an absent optional node input. */
#define NPU_VALUE_NONE		UINT32_MAX

#define NPU_VALUE_INPUT		(1u << 0)
#define NPU_VALUE_OUTPUT	(1u << 1)

/*
 * A value.  Extensible (npu.h "ABI rules"): NPU_VALUE_DESC_INIT, then
 * fill.  @rank is 0..NPU_TENSOR_MAX_RANK
 * (0: a scalar of one element).  @data (static values only, dense, native
 * endianness) is copied.  @scale > 0 quantizes an INT8/UINT8 value per
 * tensor; 0 leaves it unquantized.
 *
 * Since 1.6, a static INT8/UINT8 value (convolution or GEMM weights) may
 * instead be quantized per channel along @quant_axis: @num_channels
 * (== dims[@quant_axis], at most npu_device_limits.channels) scales in
 * @channel_scales (finite, > 0) and zero points in @channel_zero_points
 * (NULL: all 0; each within the dtype), both copied; @scale must then be
 * 0.  npu_graph_get_value() returns the graph's copies.
 */
struct npu_value_desc {
	uint32_t size;			/* sizeof(struct npu_value_desc) */
	const char *name;		/* optional, copied; for messages */
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t flags;			/* NPU_VALUE_* */
	const void *data;
	float scale;
	int32_t zero_point;
	/* since 1.6 */
	uint32_t quant_axis;
	uint32_t num_channels;		/* 0: not per channel */
	const float *channel_scales;
	const int32_t *channel_zero_points;
};

#define NPU_VALUE_DESC_INIT	{ .size = sizeof(struct npu_value_desc) }

enum npu_node_kind {
	NPU_NODE_OP = 0,	/* one libnpu op: @op */
	NPU_NODE_RESHAPE,	/* in: X; same element count and dtype */
	/*
	 * in: X [N,C,...], scale, bias, mean, var (each [C], static);
	 * y = (x - mean) / sqrt(var + epsilon) * scale + bias.
	 */
	NPU_NODE_BATCHNORM,
	NPU_NODE_DIV,		/* in: A, B; numpy broadcasting */
	/*
	 * in: X; output dim d is X's dim transpose.perm[d] (a permutation
	 * of 0..rank-1).  One COPY of a strided view of X.
	 */
	NPU_NODE_TRANSPOSE,
	/*
	 * in: X0, X1, ... (up to 8, one dtype, equal dims but concat.axis);
	 * the output joins them along concat.axis: one COPY per input into
	 * its slice of the output.
	 */
	NPU_NODE_CONCAT,
	/*
	 * in: X of the output's rank; output element i along dim d is X's
	 * element slice.start[d] + i * slice.step[d] (step != 0, negative
	 * reads backwards; every element read must lie in X).  One COPY of a
	 * strided view of X: Slice with any steps.
	 */
	NPU_NODE_SLICE,
	/*
	 * A CPU kernel (kernel.h), added with npu_graph_add_kernel_node()
	 * only: any number of inputs and outputs of any dtype.  Since 1.5.
	 */
	NPU_NODE_KERNEL,
	NPU_NODE_KIND_COUNT,
};

/*
 * CONV2D/CONV_TRANSPOSE/POOL2D/RESIZE: values are NCHW (CONV2D's W [CO,
 * C/groups, KH, KW], CONV_TRANSPOSE's [C, CO/groups, KH, KW]).
 */
#define NPU_NODE_NCHW		(1u << 0)

/*
 * A node.  Extensible (npu.h "ABI rules"): NPU_NODE_DESC_INIT, then fill.
 * @op points to the op's own extensible parameters (copied), so either
 * struct can grow on its own.
 */
struct npu_node_desc {
	uint32_t size;			/* sizeof(struct npu_node_desc) */
	const char *name;		/* optional, copied; for messages */
	enum npu_node_kind kind;
	uint32_t flags;			/* NPU_NODE_* */
	const struct npu_op_params *op;	/* NPU_NODE_OP, else NULL */
	float epsilon;			/* NPU_NODE_BATCHNORM */
	union {
		struct {
			uint32_t perm[NPU_TENSOR_MAX_RANK];
		} transpose;		/* NPU_NODE_TRANSPOSE */
		struct {
			uint32_t axis;
		} concat;		/* NPU_NODE_CONCAT */
		struct {
			uint32_t start[NPU_TENSOR_MAX_RANK];
			int32_t step[NPU_TENSOR_MAX_RANK];
		} slice;		/* NPU_NODE_SLICE */
	};
	uint32_t num_inputs;		/* at most 8 */
	const uint32_t *inputs;		/* value ids; NPU_VALUE_NONE if absent */
	uint32_t output;
};

#define NPU_NODE_DESC_INIT	{ .size = sizeof(struct npu_node_desc) }

int npu_graph_create(struct npu_graph **out);
void npu_graph_free(struct npu_graph *g);

/* Add a value; *@id receives its id (ids count up from 0). */
int npu_graph_add_value(struct npu_graph *g, const struct npu_value_desc *v,
			uint32_t *id);

/*
 * Add a node; *@id (if not NULL) receives its index.  Checks what it can
 * alone: value ids exist, the output is neither static nor an input nor
 * written by another node.  Shapes and attributes are checked by compile.
 */
int npu_graph_add_node(struct npu_graph *g, const struct npu_node_desc *n,
		       uint32_t *id);

/* ---- Kernel nodes (since 1.5, NPU_1.5) ------------------------------ */

struct npu_kernel;

/*
 * A node running a CPU kernel (kernel.h).  Extensible (npu.h "ABI
 * rules"): NPU_KERNEL_NODE_DESC_INIT, then fill.  @kernel must stay valid
 * while the graph or a runtime compiled from it exists (a static table);
 * the graph takes @state (even when the call fails) and releases it with
 * @kernel->release once the graph and its runtimes are freed.
 */
struct npu_kernel_node_desc {
	uint32_t size;			/* sizeof(struct npu_kernel_node_desc) */
	const char *name;		/* optional, copied; for messages */
	const struct npu_kernel *kernel;
	void *state;
	uint32_t num_inputs;		/* <= NPU_KERNEL_MAX_INPUTS */
	const uint32_t *inputs;		/* NPU_VALUE_NONE if absent */
	uint32_t num_outputs;		/* 1..NPU_KERNEL_MAX_OUTPUTS */
	const uint32_t *outputs;
};

#define NPU_KERNEL_NODE_DESC_INIT { .size = sizeof(struct npu_kernel_node_desc) }

/*
 * Add a kernel node; *@id (if not NULL) receives its index.  Checks that
 * @kernel has infer and run, the value ids, that no output is static, a
 * graph input, written by another node, listed twice or read by the node
 * itself, and runs @kernel->infer: -EINVAL (npu_graph_error() says why,
 * naming the node and the kernel) when any fails or infer's dtypes and
 * shapes differ from the output values'.  Compile folds the node when its
 * inputs are all static and drops it when nothing needs its outputs;
 * npu_graph_node_supported() says 0, "a CPU kernel".
 */
int npu_graph_add_kernel_node(struct npu_graph *g,
			      const struct npu_kernel_node_desc *d,
			      uint32_t *id);

size_t npu_graph_num_values(const struct npu_graph *g);
size_t npu_graph_num_nodes(const struct npu_graph *g);

/*
 * The value's description, min(@v->size, sizeof) bytes of it; its name
 * and data stay owned by the graph.
 */
int npu_graph_get_value(const struct npu_graph *g, uint32_t id,
			struct npu_value_desc *v);

/*
 * Why the last call on @g failed, naming the node or value; "" when it
 * did not.  Valid until the next call on @g.
 */
const char *npu_graph_error(const struct npu_graph *g);

/*
 * Support query from shapes and dtypes alone (what a delegate's
 * IsNodeSupported needs): 1 when a device with @limits of @limits_size
 * bytes (NULL: the defaults of npu_device_limits; smaller: an older
 * caller's, missing limits are the defaults) takes node @id as it stands, 0 when it
 * runs on the CPU, with the reason in *@reason (static or graph-owned,
 * valid until the graph changes), or a negative errno when the node
 * itself is invalid (npu_graph_error() says why).  RESHAPE is "supported"
 * (it does nothing); so are BATCHNORM and DIV when compile can rewrite
 * them into device ops.
 */
int npu_graph_node_supported(struct npu_graph *g, uint32_t id,
			     const struct npu_device_limits *limits,
			     size_t limits_size, const char **reason);

/* Run everything on the CPU even with a context (npu_graph_compile()). */
#define NPU_COMPILE_CPU_ONLY	(1u << 0)
/*
 * Keep every value in the graph's layout: no NHWC storage for values
 * between NCHW convolutions (slower; for comparing the two plans).
 */
#define NPU_COMPILE_NCHW_ONLY	(1u << 1)
/*
 * Keep chains of 8-bit pointwise ops as they are instead of folding each
 * into one table lookup (NPU_OP_LUT; the same bits, more commands; for
 * comparing the two plans).  Since 1.9.
 */
#define NPU_COMPILE_NO_LUT	(1u << 2)

/*
 * Compile @g for @ctx (NULL: the CPU only, no device at all).  The graph
 * is not needed afterwards.  -EINVAL (npu_graph_error() says which node
 * and why) for shapes or parameters the op set does not define, -ELOOP
 * for a cycle, -ENOENT for an output no node writes.
 */
int npu_graph_compile(struct npu_graph *g, struct npu_context *ctx,
		      uint32_t flags, struct npu_runtime **out);
void npu_runtime_free(struct npu_runtime *rt);

/*
 * Bind host memory to the external inputs and outputs: @data[i] for
 * value @ids[i], dense, npu_runtime_value_bytes() long.  Every input and
 * output must be bound before a run; binding again replaces the pointer.
 */
int npu_runtime_setup(struct npu_runtime *rt, size_t count,
		      const uint32_t *ids, void *const *data);

/* Bytes of value @id, 0 for an unknown id. */
uint64_t npu_runtime_value_bytes(const struct npu_runtime *rt, uint32_t id);

/*
 * Start a run: inputs are read from their bound memory now, outputs are
 * written by the time npu_runtime_wait() returns 0.  The runtime keeps a
 * reference on @q (until its next run or npu_runtime_free()), so the
 * caller may destroy the queue at any time.  @q may be NULL for a
 * runtime compiled without a context.  -EBUSY while a run is in flight.
 */
int npu_runtime_run_async(struct npu_runtime *rt, struct npu_queue *q);

/*
 * Wait for the run started last: 0, -ETIMEDOUT if @deadline_ns passes
 * first (call again later), NPU_ERR_JOB_* when a device job did not
 * succeed (npu.h), or a negative errno (a failed call, a CPU op's error).
 */
int npu_runtime_wait(struct npu_runtime *rt, int64_t deadline_ns);

/* run_async + wait. */
int npu_runtime_run(struct npu_runtime *rt, struct npu_queue *q,
		    int64_t deadline_ns);

/* ---- Bounding a run (since 1.4, NPU_1.4) ---------------------------- */

/*
 * The limits of the CPU segments' ops in later runs (ops.h, struct
 * npu_cpu_limits; NULL: the defaults, which apply until this is called).
 * The deadline and cancel callback bound a whole run: past the deadline,
 * or once @cancel says so, the op running on the CPU stops and no further
 * segment starts.  A run that ends so returns -ETIME (deadline) or
 * -ECANCELED; an op beyond max_work or max_bytes fails the run with
 * -E2BIG before it starts.  npu_runtime_error() names the node.  -EBUSY
 * while a run is in flight.
 */
int npu_runtime_set_cpu_limits(struct npu_runtime *rt,
			       const struct npu_cpu_limits *limits);

/*
 * Stop the run in flight, from any thread: the CPU op running stops at
 * its next poll (milliseconds), no further segment starts, and the run
 * ends with -ECANCELED (npu_runtime_wait()).  A device job already
 * submitted runs to its end.  No effect without a run in flight.
 */
int npu_runtime_cancel(struct npu_runtime *rt);

/*
 * Why the last run failed or, after npu_runtime_wait() returned
 * -ETIMEDOUT, what was running then, naming the node and op ("node 'up3'
 * (CONV_TRANSPOSE) on the CPU: stopped at the deadline"); "" when the
 * last run succeeded.  Valid until the next call on @rt.
 */
const char *npu_runtime_error(struct npu_runtime *rt);

/* ---- Introspection and profiling ------------------------------------ */

enum npu_node_where {
	NPU_WHERE_DEVICE = 1,	/* in a device segment */
	NPU_WHERE_CPU,		/* in a CPU segment */
	NPU_WHERE_FOLDED,	/* computed at compile time (constant) */
	NPU_WHERE_FUSED,	/* merged into another node (@fused_into) */
	NPU_WHERE_ELIDED,	/* no work: RESHAPE, or not needed */
};

/* Name of an npu_node_where ("device", "cpu", ...), never NULL. */
const char *npu_node_where_name(enum npu_node_where w);

/* Extensible (npu.h "ABI rules"): NPU_NODE_PROFILE_INIT. */
struct npu_node_profile {
	uint32_t size;		/* sizeof(struct npu_node_profile) */
	const char *name;	/* the node's name, or "" */
	const char *op;		/* "CONV2D", "RESHAPE", ... */
	enum npu_node_where where;
	uint32_t fused_into;	/* node index, for NPU_WHERE_FUSED */
	uint32_t segment;	/* for DEVICE and CPU */
	const char *cpu_reason;	/* for CPU: why not the device */
	uint64_t macs;		/* multiply-accumulates (GEMM, CONV2D) */
	/* of the last profiled run (npu_runtime_set_profiling()) */
	uint64_t device_cycles;	/* modelled cycles of the node's job */
	uint64_t time_ns;	/* measured: device job time or CPU time */
};

#define NPU_NODE_PROFILE_INIT	{ .size = sizeof(struct npu_node_profile) }

/* Nodes of the graph the runtime was compiled from (same indices). */
size_t npu_runtime_num_nodes(const struct npu_runtime *rt);

/* Segments: device ones are one job each. */
size_t npu_runtime_num_segments(const struct npu_runtime *rt,
				size_t *device_segments);

/* Arena bytes (internal values) and static bytes (weights). */
uint64_t npu_runtime_arena_bytes(const struct npu_runtime *rt);
uint64_t npu_runtime_static_bytes(const struct npu_runtime *rt);

/*
 * With @on, later runs submit every device node as its own job so its
 * cycles and time can be read (slower; results are the same).
 */
int npu_runtime_set_profiling(struct npu_runtime *rt, bool on);

/* Fill min(@p->size, sizeof) bytes of node @node's profile. */
int npu_runtime_node_profile(const struct npu_runtime *rt, uint32_t node,
			     struct npu_node_profile *p);

/* ---- One graph on several devices (since 1.7, NPU_1.7) -------------- */

/*
 * An npu_group runs independent requests of one graph on several devices
 * at once (data parallelism): the graph is compiled once per device, each
 * copy with its own weights and arena in that device's context, and a
 * worker thread per device takes the next queued request whenever its
 * device is free.  A request binds every external input and output of
 * the graph, as npu_runtime_setup() does; its outputs are the bytes a
 * runtime compiled for any one of the devices gives (every vnpu device
 * computes the same bits).
 *
 * Failover.  When a request fails because of its device, with a device
 * job outcome (NPU_ERR_JOB_*: the device faulted, hung and was reset,
 * was lost) or with -ENODEV, -EIO or -ECANCELED (the device was unbound
 * or unplugged, the context banned), the device is taken out of rotation
 * for good and the request is queued again, ahead of the others, for a
 * device still in it.  The request then completes as if nothing had
 * happened: its outputs are written once, by the run that succeeded (a
 * failed run writes none), and its struct npu_group_result says how many
 * devices it took (@attempts > 1).  npu_group_get_stats() counts these
 * re-runs and npu_group_get_device_stats() says which device left and
 * why.  When the last device leaves, every request not yet answered
 * fails with -ENODEV, and so does every later npu_group_submit().  A
 * request is never tried twice on one device, so one that makes every
 * device fail ends after at most one attempt per device.  Other errors
 * (a CPU op's, -ENOMEM, ...) are the request's own: it fails with them
 * and the device stays.  NPU_GROUP_NO_FAILOVER makes a device's failure
 * the request's too (the device still leaves).
 *
 * A device that hangs is not waited out by the group: the driver's job
 * timeout resets it and fails the job (NPU_ERR_JOB_TIMEOUT), which is a
 * failover like any other.
 *
 * Thread safety: every npu_group_*() call may come from any thread,
 * except npu_group_free(), which must not race the others.  The runtimes
 * npu_group_runtime() returns are for introspection only.
 */
struct npu_group;

/* A device's failure fails the request instead of re-running it. */
#define NPU_GROUP_NO_FAILOVER		(1u << 0)
/* Since 1.8: split the graph into one stage per device (see below). */
#define NPU_GROUP_PIPELINE		(1u << 1)

/*
 * Options of npu_group_create().  Extensible (npu.h "ABI rules"):
 * struct npu_group_options o = NPU_GROUP_OPTIONS_INIT; then fill.
 */
struct npu_group_options {
	uint32_t size;			/* sizeof(struct npu_group_options) */
	uint32_t flags;			/* NPU_GROUP_* */
	uint32_t compile_flags;		/* npu_graph_compile()'s, every copy */
	uint32_t hw_queue;		/* each device's queue, NORMAL priority */
	/*
	 * Requests submitted and not yet waited for, at most (0: 64;
	 * at most 65536).  npu_group_submit() returns -EAGAIN beyond it.
	 */
	uint32_t max_requests;
	/*
	 * Since 1.8, NPU_GROUP_PIPELINE only: @num_cuts (0: chosen by cost;
	 * else the number of devices less one) node ids, each the first
	 * node of the next stage, in the graph's order.
	 */
	uint32_t num_cuts;
	const uint32_t *cuts;
};

#define NPU_GROUP_OPTIONS_INIT	{ .size = sizeof(struct npu_group_options) }

/*
 * Compile @g once for each of the @count contexts in @ctxs (a NULL entry
 * is a CPU-only copy, run on the host) and start a worker per copy.  With
 * @ctxs NULL and @count 0 the group opens every vnpu device
 * (npu_device_list() order) and creates a context on each: -ENODEV when
 * there is none.  @opts may be NULL (the defaults).  The group references
 * the contexts, so the caller may destroy them; @g is not needed
 * afterwards.  On a compile error npu_graph_error(@g) says why.
 */
int npu_group_create(struct npu_graph *g, struct npu_context *const *ctxs, size_t count, const struct npu_group_options *opts, struct npu_group **out);

/*
 * Stop the workers, after the requests they are running (not the queued
 * ones, which are dropped), and free everything.  Accepts NULL.
 */
void npu_group_free(struct npu_group *group);

/* Devices of the group (one per compiled copy), left ones included. */
size_t npu_group_num_devices(const struct npu_group *group);

/*
 * The runtime of device @index, for introspection (segments, arena,
 * profile): the group runs it, so the caller must not run, set up or free
 * it.  NULL for a bad index.
 */
const struct npu_runtime *npu_group_runtime(const struct npu_group *group, size_t index);

/*
 * Queue one request: @data[i] bound to value @ids[i], for every external
 * input and output of the graph, each exactly once (-EINVAL otherwise).
 * The memory must stay valid, and the inputs unchanged, until
 * npu_group_wait() returns the request's outcome: a failover reads the
 * inputs again.  *@ticket receives the request's ticket.  -EAGAIN when
 * max_requests are not yet waited for, -ENODEV when no device is left.
 */
int npu_group_submit(struct npu_group *group, size_t count, const uint32_t *ids, void *const *data, uint64_t *ticket);

/*
 * What became of one request (npu_group_wait()).  Extensible (npu.h "ABI
 * rules"): NPU_GROUP_RESULT_INIT.
 */
struct npu_group_result {
	uint32_t size;			/* sizeof(struct npu_group_result) */
	int32_t error;			/* npu_group_wait()'s return */
	uint32_t device;		/* the device that answered, or tried last */
	uint32_t attempts;		/* devices it ran on; > 1: failed over */
	uint64_t queued_ns;		/* from submit to a device taking it */
	uint64_t run_ns;		/* on the device that answered */
};

#define NPU_GROUP_RESULT_INIT	{ .size = sizeof(struct npu_group_result) }

/*
 * Wait for request @ticket: 0 once its outputs are written; the request's
 * error (a negative errno, or NPU_ERR_JOB_* under NPU_GROUP_NO_FAILOVER);
 * -ENODEV when every device left before it was answered.  Any of these
 * ends the request and frees its ticket.  -ETIMEDOUT when @deadline_ns
 * passes first (the request goes on; wait again), -ENOENT for a ticket
 * that is not pending.  @result (may be NULL) receives min(@result->size,
 * sizeof) bytes of the outcome.
 */
int npu_group_wait(struct npu_group *group, uint64_t ticket, int64_t deadline_ns, struct npu_group_result *result);

/* A device's place in the group. */
enum npu_group_device_state {
	NPU_GROUP_DEVICE_ACTIVE = 1,	/* takes requests */
	NPU_GROUP_DEVICE_LEFT = 2,	/* failed; out of rotation for good */
};

/* Extensible (npu.h "ABI rules"): NPU_GROUP_DEVICE_STATS_INIT. */
struct npu_group_device_stats {
	uint32_t size;			/* sizeof(struct npu_group_device_stats) */
	enum npu_group_device_state state;
	int32_t error;			/* LEFT: the failure that took it out */
	uint32_t minor;			/* accel minor; UINT32_MAX: CPU copy */
	uint64_t completed;		/* requests it answered */
	uint64_t failed;		/* requests that failed on it */
	uint64_t busy_ns;		/* time spent running requests */
};

#define NPU_GROUP_DEVICE_STATS_INIT { .size = sizeof(struct npu_group_device_stats) }

/* Fill min(@st->size, sizeof) bytes of device @index's counters. */
int npu_group_get_device_stats(const struct npu_group *group, size_t index, struct npu_group_device_stats *st);

/* Extensible (npu.h "ABI rules"): NPU_GROUP_STATS_INIT. */
struct npu_group_stats {
	uint32_t size;			/* sizeof(struct npu_group_stats) */
	uint32_t active_devices;
	uint64_t submitted;
	uint64_t completed;		/* answered, 0 */
	uint64_t failed;		/* ended with an error */
	uint64_t failovers;		/* re-runs after a device failed */
};

#define NPU_GROUP_STATS_INIT	{ .size = sizeof(struct npu_group_stats) }

/* Fill min(@st->size, sizeof) bytes of the group's counters. */
int npu_group_get_stats(const struct npu_group *group, struct npu_group_stats *st);

/* ---- Pipelines, and devices joining a group (since 1.8, NPU_1.8) ---- */

/*
 * Pipeline.  With NPU_GROUP_PIPELINE, npu_group_create() splits the graph
 * into as many stages as it has devices: runs of consecutive nodes (in an
 * order where each node follows what it reads), stage k compiled for
 * device k alone.  The cuts go where the stages' cost (the cycles the
 * device's timing model charges for the commands their nodes compile
 * to) is even, and among near-even cuts (within 1/32 of the total)
 * where the fewest bytes cross, never between nodes compile merges into
 * one (an activation into its convolution, a spelled-out LayerNorm);
 * npu_group_options.cuts forces them (a forced cut that splits merged
 * nodes gives outputs that differ from one device's by rounding).
 *
 * Every value that crosses a cut (several may: a skip connection adds
 * one) is handed on through a buffer allocated on the producing device,
 * exported as a dma-buf and imported into each later stage's context, so
 * both devices map the same pages; the producing stage's jobs write it
 * there and the next stage's jobs read it there (zero copy, ordered by
 * the buffer's implicit fences), except where a CPU kernel node reads or
 * writes it (npu_group_stage.zero_copy).  A request flows through the stages in
 * order; each stage runs the next request as soon as it has handed one
 * on, so with two devices stage 0 runs request i+1 while stage 1 runs
 * request i.  A stage starts a request once the stage before has
 * finished it (its fences have signalled and its outputs are in the
 * shared buffer).  Requests are answered in the order they were
 * submitted, with the bytes one runtime of the whole graph gives (every
 * vnpu device computes the same bits, a stage's graph is the original's
 * nodes on the original's values, and a 4-D value crosses in the NHWC
 * layout compile gives it in the whole graph).
 *
 * Requests run on every stage's device, so when one fails because of its
 * device (as above) the device leaves and the group runs whole graphs
 * from then on: its failed request and every one not yet answered run
 * again from the start, in submission order, the whole graph compiled
 * for each device left; none is answered twice or lost, a re-run one's
 * npu_group_result.attempts is above 1 and npu_group_stats.failovers
 * counts them.  With NPU_GROUP_NO_FAILOVER the failed request fails with
 * the device's error and every request not yet answered, and every later
 * npu_group_submit(), with -ENODEV.
 */

/* Extensible (npu.h "ABI rules"): NPU_GROUP_STAGE_INIT. */
struct npu_group_stage {
	uint32_t size;			/* sizeof(struct npu_group_stage) */
	uint32_t first_node;		/* node id of the stage's first node */
	uint32_t num_nodes;
	uint32_t inputs_handed_in;	/* values from earlier stages */
	uint32_t outputs_handed_on;	/* values for later stages */
	uint64_t handoff_bytes;		/* of its shared buffer, per request */
	uint64_t macs;			/* multiply-accumulates */
	uint64_t cost;			/* modelled device cycles per request */
	uint64_t runs;			/* requests it has run */
	uint64_t busy_ns;		/* time spent running them */
	/*
	 * Bytes the CPU copied for its runs: the caller's inputs into its
	 * arena and its outputs out, plus, unless @zero_copy, the values
	 * handed in and on, between its arena and the shared buffers.
	 */
	uint64_t copied_bytes;
	/* its jobs write and read the values handed on in the shared buffers */
	bool zero_copy;
};

#define NPU_GROUP_STAGE_INIT	{ .size = sizeof(struct npu_group_stage) }

/*
 * Add a device to a data-parallel group (since 1.8): compile the graph
 * (the group keeps a copy of it for this) for @ctx (NULL: a CPU copy),
 * make its queue and start its worker, which takes queued requests at
 * once.  This is how a device that left comes back, as a new index
 * (*@index, may be NULL), once it works again (reset, or unbound and
 * bound again: a context on the new binding); it also revives a group
 * every device had left.  -EINVAL for a pipeline group, -ENOSPC beyond
 * 256 devices, else compile's or the queue's error.
 */
int npu_group_add_device(struct npu_group *group, struct npu_context *ctx, size_t *index);

/* Stages of a pipeline group: its devices; 0 for a data-parallel group. */
size_t npu_group_num_stages(const struct npu_group *group);

/*
 * Fill min(@st->size, sizeof) bytes of stage @index's description and
 * counters.  -EINVAL for a bad index or a data-parallel group.
 */
int npu_group_get_stage(const struct npu_group *group, size_t index, struct npu_group_stage *st);

#ifdef __cplusplus
}
#endif

#endif /* NPU_GRAPH_H */
