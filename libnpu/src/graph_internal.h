/* SPDX-License-Identifier: MIT */
/*
 * Graph internals shared by graph_build.c (values, nodes, support query),
 * graph_compile.c (rewrites, arena plan, partition) and graph_run.c.
 */
#ifndef NPU_GRAPH_INTERNAL_H
#define NPU_GRAPH_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>

#include "npu_internal.h"
#include "npu/graph.h"
#include "npu/kernel.h"
#include "vnpu/vnpu_hw_ops.h"

#define GNODE_MAX_INPUTS	8

/* Bit of gnode.flags, never public: W was packed from OIHW to OHWI. */
#define GNODE_W_PACKED	(1u << 31)

/* Per-channel quantization of a value along @axis: @n scales, zero points. */
struct gchq {
	uint32_t axis, n;
	float *scale;
	int32_t *zp;
};

struct gchq *npu__chq_new(uint32_t axis, uint32_t n, const float *scale,
			  const int32_t *zp);
void npu__chq_free(struct gchq *q);
/*
 * Give @t @v's quantization, per tensor or per channel; @axis_map maps
 * @v's dims to @t's (NULL: the same), for views that permute them.
 */
struct npu_tensor;
struct gvalue;
int npu__value_set_quant(struct npu_tensor *t, const struct gvalue *v,
			 const uint32_t *axis_map);

struct gvalue {
	char *name;			/* never NULL ("" if unnamed) */
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t flags;			/* NPU_VALUE_* */
	float scale;
	int32_t zero_point;
	/* per-channel quantization (static weights), owned; NULL if none */
	struct gchq *chq;
	void *data;			/* static values: owned copy */
	uint64_t elems;
	uint64_t bytes;
	uint32_t producer;		/* node index or NPU_VALUE_NONE */
	/* compile's working copy borrows the user graph's names and data */
	bool name_borrowed, data_borrowed;
	/*
	 * Compile's layout plan: this 4-D [N,C,H,W] value is stored as
	 * [N,H,W,C], because only layout-free ops and NCHW convolutions and
	 * pools touch it.
	 */
	bool nhwc;
};

/*
 * A kernel node's kernel and state.  Shared by the graph, compile's
 * working copies and every runtime compiled from the graph, because the
 * graph may be freed before its runtimes: the last one to let go calls
 * release.
 */
struct gkernel {
	struct npu_kernel k;		/* the caller's table, size-versioned */
	void *state;
	atomic_uint refs;
};

struct gkernel *npu__gkernel_get(struct gkernel *gk);
void npu__gkernel_put(struct gkernel *gk);

struct gnode {
	char *name;
	enum npu_node_kind kind;
	uint32_t flags;
	struct npu_op_params op;
	float epsilon;
	uint32_t perm[NPU_TENSOR_MAX_RANK];	/* TRANSPOSE */
	uint32_t axis;				/* CONCAT */
	int32_t step[NPU_TENSOR_MAX_RANK];	/* SLICE; its start is perm */
	uint32_t num_inputs;
	uint32_t in[GNODE_MAX_INPUTS];
	uint32_t out;
	/*
	 * NPU_NODE_KERNEL: its @kin inputs then @kout outputs in @kv (owned,
	 * NPU_VALUE_NONE where absent).  Its num_inputs is 0 and in[] unused,
	 * so a pass that knows only fixed nodes sees no inputs rather than
	 * reading past in[]; @out is its first present output.
	 */
	struct gkernel *kern;
	uint32_t kin, kout;
	uint32_t *kv;
};

/* A node's inputs and outputs, whatever its kind. */
static inline uint32_t npu__node_num_inputs(const struct gnode *n)
{
	return n->kind == NPU_NODE_KERNEL ? n->kin : n->num_inputs;
}

static inline const uint32_t *npu__node_inputs(const struct gnode *n)
{
	return n->kind == NPU_NODE_KERNEL ? n->kv : n->in;
}

static inline uint32_t npu__node_num_outputs(const struct gnode *n)
{
	return n->kind == NPU_NODE_KERNEL ? n->kout : 1;
}

static inline const uint32_t *npu__node_outputs(const struct gnode *n)
{
	return n->kind == NPU_NODE_KERNEL ? n->kv + n->kin : &n->out;
}

struct npu_graph {
	struct gvalue *v;
	size_t nv, cap_v;
	struct gnode *n;
	size_t nn, cap_n;
	char err[256];
	char reason[256];		/* npu_graph_node_supported() */
};

__attribute__((format(printf, 2, 3)))
int npu__graph_fail(struct npu_graph *g, const char *fmt, ...);

/* Room for one more node in @g->n. */
int npu__graph_reserve_node(struct npu_graph *g);

/* Append a value/node without the public checks (compile's rewrites). */
int npu__graph_push_value(struct npu_graph *g, const struct npu_value_desc *d,
			  void *owned_data, uint32_t *id);

/* "CONV2D", "RESHAPE", ... for a node. */
const char *npu__node_op_name(const struct gnode *n);

/*
 * A tensor for value @v (NCHW-viewed as NHWC when @nchw and rank 4), bound
 * at (@buf, @offset) or to @host.
 */
int npu__graph_tensor(const struct gvalue *v, bool nchw,
		      struct npu_buffer *buf, uint64_t offset, void *host,
		      struct npu_tensor **out);

/*
 * Create node @n's op over tensors for its values, each bound as @bind
 * says (value index -> buffer + offset or host pointer).  The graph
 * error says why on -EINVAL.
 */
struct gbind {
	struct npu_buffer *buf;
	uint64_t offset;
	void *host;
};
int npu__graph_make_op(struct npu_graph *g, const struct gnode *n,
		       const struct gbind *bind_in, const struct gbind *bind_out,
		       struct npu_op **out);

/*
 * The ops node @n runs as (COPY, TRANSPOSE, CONCAT, SLICE and every other OP
 * node): at most @max into @ops, *@count of them; on failure none are
 * left.  CONCAT is one op per input, everything else one.
 */
#define GNODE_MAX_OPS	GNODE_MAX_INPUTS
int npu__graph_make_ops(struct npu_graph *g, const struct gnode *n,
			const struct gbind *bind_in, const struct gbind *bind_out,
			struct npu_op **ops, size_t *count);

/* Nodes that become ops (OP, TRANSPOSE, CONCAT, SLICE). */
static inline bool npu__node_has_ops(const struct gnode *n)
{
	return n->kind == NPU_NODE_OP || n->kind == NPU_NODE_TRANSPOSE ||
	       n->kind == NPU_NODE_CONCAT || n->kind == NPU_NODE_SLICE;
}

/* ---- Kernel nodes (graph_kernel.c) --------------------------------- */

struct npu_cpu_run;

/* A dtype the device and the op API take (the host-only ones are not). */
static inline bool npu__dtype_is_device(enum npu_dtype d)
{
	return d >= NPU_DTYPE_FP32 && d <= NPU_DTYPE_INT32;
}

/* "fp32", "int64", ... */
const char *npu__dtype_name(enum npu_dtype dtype);

/* The view of value @v a kernel gets, its data at @data. */
void npu__kernel_tensor(const struct gvalue *v, void *data,
			struct npu_kernel_tensor *t);

/*
 * Run @k within @run's limits: its work and bytes checked first (-E2BIG),
 * then @run's deadline and cancel while it runs (npu_kernel_poll()).
 * The message, without the node's name, is in @run->err.
 */
int npu__kernel_exec(const struct npu_kernel *k, const void *state,
		     size_t nin, const struct npu_kernel_tensor *const *in,
		     size_t nout, struct npu_kernel_tensor *const *out,
		     const struct npu_cpu_run *run);

/* Fold kernel node @n of working graph @w: its outputs become static. */
int npu__fold_kernel(struct npu_graph *w, const struct gnode *n);

/*
 * The step of kernel node @n: its static operands are at @off[value] in
 * the statics, the others at @off[@root[value]] in the arena.
 */
struct rkernel;
int npu__rkernel_create(const struct npu_graph *w, const struct gnode *n,
			const uint32_t *root, const uint64_t *off,
			struct rkernel **out);

/* Data movement that sees its values through views of any layout. */
bool npu__node_is_move(const struct gnode *n);

/* ---- Compiled runtime ---------------------------------------------- */

struct rnode {
	char *name;
	const char *op;
	enum npu_node_where where;
	uint32_t fused_into;
	uint32_t segment;
	const char *cpu_reason;
	uint64_t macs;
	uint64_t cycles;
	uint64_t time_ns;
};

/*
 * A kernel node's run: its kernel, and views of its operands whose @data
 * each run points into the arena or the statics (@where, @offset).
 */
enum rk_where { RK_ABSENT, RK_ARENA, RK_STATIC };

struct rkernel {
	struct gkernel *kern;		/* referenced */
	uint32_t nin, nout;
	struct npu_kernel_tensor *t;	/* nin + nout */
	struct npu_kernel_tensor **pt;	/* into @t, NULL where absent */
	uint8_t *where;			/* enum rk_where, per operand */
	uint64_t *offset;
};

void npu__rkernel_free(struct rkernel *rk);

/* One op (or kernel) in execution order; @node is the graph node it reports to. */
struct rstep {
	struct npu_op *op;
	struct rkernel *kern;		/* a kernel node's step: no @op */
	uint32_t node;
	bool device;
	struct npu_cmdbuf *prof_cb;	/* profiling: the op alone */
	struct npu_fence *prof_fence;
};

struct rseg {
	bool device;
	size_t first, count;		/* steps */
	struct npu_cmdbuf *cb;
	struct npu_buffer **bufs;
	size_t num_bufs;
	struct npu_fence *fence;
};

/* An external input or output (or a constant output, @konst). */
struct rio {
	uint32_t id;
	bool input;
	uint64_t offset;		/* in the arena */
	uint64_t bytes;
	void *user;
	const void *konst;
};

struct npu_runtime {
	struct npu_context *ctx;	/* referenced; NULL: host only */
	bool device;			/* device segments exist */
	struct rnode *nodes;
	size_t num_nodes;
	struct rstep *steps;
	size_t num_steps;
	struct rseg *segs;
	size_t num_segs, num_dev_segs;
	struct npu_buffer *arena_buf, *static_buf;
	void *arena_host, *static_host;	/* host-only mode */
	uint64_t arena_bytes, static_bytes;
	/* static_buf/static_host belong to this blob, shared (graph_compile.c) */
	struct gstatics *statics;
	struct rio *io;
	size_t num_io;
	uint64_t *value_bytes;
	size_t num_values;
	bool profiling;
	/* bytes runs copied between the callers' memory and the arena */
	atomic_uint_fast64_t copied_bytes;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_live;		/* started and not yet joined */
	bool done;
	int result;
	struct npu_queue *q;

	/* Bounds of the CPU segments (size 0: the defaults). */
	struct npu_cpu_limits cpu_limits;
	atomic_bool cancel;		/* npu_runtime_cancel() */
	/* 1 + the step running on the caller's or worker thread, or 0 */
	atomic_size_t running;
	/* 1 + the device segment whose fence the worker waits for, or 0 */
	atomic_size_t waiting_seg;
	char err[384];			/* the last run's failure, under @lock */
	char err_out[384];		/* npu_runtime_error()'s copy */
};

/*
 * An external input or output that npu__graph_compile_bound() places in
 * the caller's memory instead of the arena: @offset into @buf (a buffer
 * of the compiling context), or @host for a host-only compile.  A run
 * copies it neither in nor out (its npu_runtime_setup() binding is
 * ignored): whoever shares that memory writes or reads it directly, and a
 * device job that uses it lists @buf, so the driver orders it after
 * every other job writing the buffer (implicit fences).
 */
struct gbound {
	uint32_t id;
	struct npu_buffer *buf;
	uint64_t offset;
	void *host;
};

/*
 * npu_graph_compile() with @bound values.  -ENOTSUP (no message) where
 * one cannot be bound: a kernel node touches it, or it shares its
 * storage (a RESHAPE) with an external value not bound.
 */
int npu__graph_compile_bound(struct npu_graph *g, struct npu_context *ctx, uint32_t flags,
			     const struct gbound *bound, size_t num_bound,
			     struct npu_runtime **out);

/* Where the arena is mapped (device or host). */
int npu__runtime_arena(struct npu_runtime *rt, uint8_t **p);

/* Where the statics are mapped (device or host). */
int npu__runtime_statics(struct npu_runtime *rt, uint8_t **p);

/*
 * Runtimes whose statics (weights) are the same bytes, on the host or on
 * one context, share one read-only copy (the runtimes of one ONNX model
 * imported for several shapes, above all): how many such copies are
 * alive, for tests.
 */
uint64_t npu__statics_alive(void);

/* Run kernel step @rk of @rt within @run (message in @run->err). */
int npu__rkernel_run(struct npu_runtime *rt, struct rkernel *rk,
		     const struct npu_cpu_run *run);

/* Multiply-accumulates of node @n (GEMM, CONV2D, CONV_TRANSPOSE; else 0). */
uint64_t npu__node_macs(const struct npu_graph *g, const struct gnode *n);

/* ---- Pipeline stages (graph_pipeline.c, npu_group) ------------------ */

/* A gpipe_io's memory is the caller's, not a stage's handoff buffer. */
#define GPIPE_CALLER	UINT32_MAX

/*
 * A value a stage binds: an input (the caller's, or handed in by stage
 * @stage at @offset of its handoff buffer) or an output (the caller's,
 * or handed on at @offset of this stage's buffer, and copied to the
 * caller's output too when @to_caller).
 */
struct gpipe_io {
	uint32_t id;
	bool input;
	bool to_caller;
	uint32_t stage;			/* GPIPE_CALLER: the caller's memory */
	uint64_t offset;
	uint64_t bytes;
};

struct gpipe_stage {
	struct npu_graph *graph;	/* owned; compiled, then freed */
	uint32_t first_node;		/* in the original graph */
	uint32_t num_nodes;
	uint64_t macs, cost;
	struct gpipe_io *io;
	size_t num_io;
	uint32_t handoffs_in, handoffs_out;
	uint64_t handoff_bytes;		/* of this stage's handoff buffer */
};

struct gpipe {
	struct gpipe_stage *st;
	size_t num_stages;
};

/*
 * Split @g into @stages stages, cut before nodes @cuts[0..stages-2] (in
 * the graph's order) or, with @cuts NULL, where the cost says and the
 * bits stay those of @g compiled whole with @compile_flags.  -EINVAL
 * with npu_graph_error(@g) saying why.
 */
int npu__pipeline_split(struct npu_graph *g, size_t stages, const uint32_t *cuts,
			uint32_t compile_flags, struct gpipe *pl);
void npu__pipeline_free(struct gpipe *pl);

/* A copy of @g owning everything, for a group that compiles it again later. */
int npu__graph_clone(const struct npu_graph *g, struct npu_graph **out);

#endif /* NPU_GRAPH_INTERNAL_H */
