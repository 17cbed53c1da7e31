/* SPDX-License-Identifier: MIT */
/*
 * The importer's state and helpers, shared by onnx_import.c (symbols,
 * graph values, the model), onnx_ops.c (compute ops) and onnx_meta.c
 * (metadata and constant ops, dispatch).
 */
#ifndef NPU_ONNX_IMPORT_H
#define NPU_ONNX_IMPORT_H

#include <stdbool.h>

#include "npu/onnx.h"
#include "onnx_internal.h"
#include "onnx.pb-c.h"

/* Constant inputs the caller binds (npu_onnx_options.constants) at most. */
#define MAX_CONST_ELEMS		(1ull << 26)
/* Graph nodes per ONNX node at most (DepthToSpace: RESHAPE, TRANSPOSE, RESHAPE). */
#define GRAPH_NODES_PER_NODE	4u

/* npu_onnx_options' budgets with the defaults filled in. */
struct oi_limits {
	uint32_t max_nesting, max_nodes;
	uint64_t max_value_bytes;
};

/*
 * Names to small integers: an open-addressing hash table over names the
 * model's protobuf owns (not copied).  glibc's hsearch() keeps one global
 * table and is not reentrant, and two imports may run at once.
 */
struct oi_names {
	const char **key;
	uint32_t *val;
	size_t cap;		/* a power of two, at least twice the entries */
	size_t n;
};

uint64_t oi_name_hash(const char *s);
int oi_names_init(struct oi_names *t, size_t max_entries);
void oi_names_free(struct oi_names *t);
/* The value of @name, or NULL. */
uint32_t *oi_names_get(const struct oi_names *t, const char *name);
/* Its value, added as @val if new; NULL when the table is full. */
uint32_t *oi_names_put(struct oi_names *t, const char *name, uint32_t val);

struct oi_seq;

struct sym {
	char *name;
	bool is_const;
	/* an initializer: @c is the source's decoded copy, shared by every import */
	bool borrowed;
	/* written by a node import refused: readers are skipped */
	bool poisoned;
	/* a graph input; fixed: its known value became its constant */
	bool graph_input, fixed;
	/*
	 * An empty graph input (a dimension of 0): it holds no data, so it is
	 * fixed to its constant of no elements whatever the caller binds.
	 */
	bool empty;
	/* a fixed input's static value for device ops (@value stays the input) */
	bool has_svalue;
	uint32_t svalue;
	struct ctensor c;		/* constant */
	uint32_t value;			/* graph value, NPU_VALUE_NONE if none */
	/* a constant's static value of its own dtype (a kernel's operand) */
	uint32_t kvalue;
	enum npu_dtype dtype;		/* of a graph value */
	/* made by this DequantizeLinear (a QDQ unit's input), else NULL */
	const Onnx__NodeProto *dq;
	/* a QuantizeLinear's output written by its fused QDQ unit */
	bool qdq_fused;
	/*
	 * A float16 value computed in float32 (oi_widen_fp16()): @value is
	 * its float32 copy, @fp16_value the float16 value itself (a graph
	 * input's, or a node's), which the model's inputs and outputs keep.
	 */
	bool widened;
	uint32_t fp16_value;
	/*
	 * Where onnxruntime rounds it (onnx_fp16.c): the model types it
	 * float16; it holds float16 values; a node wrote it, one that
	 * onnxruntime runs in float32 on float16 inputs; its rounded copy.
	 */
	bool fp16_typed, fp16_exact;
	bool fp16_by_node, fp16_needs_cast;
	bool has_rounded;
	uint32_t rounded_value;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	/*
	 * A value above libnpu's rank limit (onnx_rank.c): the model's rank
	 * and shape; @rank and @dims hold it folded.  0 for any other value.
	 */
	uint32_t lrank;
	uint32_t ldims[CT_MAX_RANK];
	/* an ONNX sequence (onnx_seq.c), owned; NULL for a tensor */
	struct oi_seq *seq;
};

/* Which dimensions of an input or output the model file leaves dynamic. */
struct oi_dyn {
	uint32_t mask;			/* bit k: dimension k */
	char *param[NPU_TENSOR_MAX_RANK];	/* its dim_param ("" for none), owned */
};

struct npu_onnx_model {
	struct npu_graph *g;
	int64_t opset;
	struct npu_onnx_io *in, *out;
	struct oi_dyn *in_dyn, *out_dyn;	/* max_in, max_out of them */
	size_t max_in, max_out;
	bool any_dynamic_in;		/* an input has a dynamic dimension */
	bool *in_fixed;			/* npu_onnx_input_fixed() */
	size_t num_in, num_out;
	char **names;			/* owned io names */
	size_t num_names;
};

/*
 * A model file parsed and checked once (npu_onnx_source_load()), then
 * imported for each set of input shapes (npu_onnx_specialize()): what
 * depends on no shape is here, read-only, shared by every import.
 */
struct npu_onnx_source {
	Onnx__ModelProto *mp;		/* the top graph's initializers' data dropped */
	int64_t opset;
	/* the caller's options, copied deep: shapes, constants and values owned */
	struct npu_onnx_options opts;
	bool owns_opts;			/* npu_onnx_load()'s borrows the caller's arrays */
	struct ctensor *inits;		/* the top graph's initializers, decoded */
	struct oi_names reads;		/* struct imp.reads */
	struct oi_names inputs;		/* the graph inputs that are no initializer */
	size_t *order;			/* the nodes in dependency order */
	/* imports done (npu_onnx_source_imports()), atomic: imports may run at once */
	uint64_t imports;
};

struct imp {
	struct npu_onnx_model *m;
	const struct npu_onnx_source *src;
	const struct npu_onnx_options *opts;
	struct oi_limits lim;
	struct cbudget consts;		/* npu_onnx_options.max_const_bytes */
	const Onnx__ModelProto *mp;
	const Onnx__GraphProto *gp;
	/*
	 * every name a node reads (READ_BY_NODE) or the graph outputs
	 * (GRAPH_OUTPUT); the source's, never written by an import
	 */
	struct oi_names reads;
	/*
	 * Symbols in blocks of SYM_BLOCK that never move, so a struct sym *
	 * (an nctx's inputs) stays valid while a node adds symbols.
	 */
	struct sym **blocks;
	size_t nsyms, nblocks;
	uint32_t *table;		/* hash: sym index + 1, 0 = empty */
	size_t tcap;
	char *err;
	size_t err_size;
	/* node being imported, for messages */
	const Onnx__NodeProto *node;
	unsigned int tmp_count;
	uint64_t fold_work;		/* kernels' work folding constants */
	/* every input with a known value is fixed (npu_onnx_load's retry) */
	bool fix_all;
	/* oi_kernel_node() refused a constant input, before its kernel ran */
	bool kernel_input_refused;
	/*
	 * The node's lowering folded its constants and refused them (a
	 * Gather's index out of range): the kernel must not accept an empty
	 * result it would not run (onnx_kernel.c).
	 */
	bool fold_refused;
	/* each tensor's reader: node index, or UINT32_MAX for several (onnx_quant.c) */
	struct oi_names readers;
	bool readers_built, readers_unsure;
	/* name -> index in opts->shapes of the last shape given for it */
	struct oi_names shape_index;
};

struct nctx {
	struct imp *im;
	const Onnx__NodeProto *n;
	int64_t opset;
	struct sym *in[NPU_KERNEL_MAX_INPUTS];	/* NULL when absent */
	size_t nin;
	const char *name;
};

/* What a kernel op's create() sees (npu/onnx.h). */
struct npu_onnx_node {
	const Onnx__NodeProto *n;
	int64_t opset;
};

/*
 * A node as the importer builds it: npu_node_desc with its op parameters
 * inline, which is easy to fill field by field.  oi_add_node() turns it
 * into the extensible npu_node_desc + npu_op_params pair of graph.h.
 */
struct oi_node {
	const char *name;
	enum npu_node_kind kind;
	uint32_t flags;
	struct npu_op_params op;	/* NPU_NODE_OP; its size is set on add */
	float epsilon;
	union {
		struct {
			uint32_t perm[NPU_TENSOR_MAX_RANK];
		} transpose;
		struct {
			uint32_t axis;
		} concat;
		struct {
			uint32_t start[NPU_TENSOR_MAX_RANK];
			int32_t step[NPU_TENSOR_MAX_RANK];
		} slice;
	};
	uint32_t num_inputs;
	const uint32_t *inputs;
	uint32_t output;
};

__attribute__((format(printf, 2, 3)))
int oi_fail(struct imp *im, const char *fmt, ...);
int oi_nomem(struct imp *im);
/*
 * The error of a constant fold (onnx_const.c): -EDQUOT (over the budget
 * of computed constants) as -E2BIG naming the limit, -ENOMEM, or the
 * message the fold left in im->err.
 */
int oi_fold_fail(struct imp *im, int ret);
/* -E2BIG unless a value of @dt and shape fits max_value_bytes. */
int oi_check_value_size(struct imp *im, const char *name, enum npu_dtype dt,
			uint32_t rank, const uint32_t *dims);
/* Elements of a shape; 0 when a dimension is (ONNX's empty tensors). */
uint64_t oi_elems(uint32_t rank, const uint32_t *dims);
/*
 * Make @s a constant of no elements of @dt and shape @dims (one of which
 * is 0).  A node's empty output is one: it is known without running the
 * node, and the nodes that read it fold or skip it.
 */
int oi_set_empty(struct imp *im, struct sym *s, enum npu_dtype dt, uint32_t rank,
		 const uint32_t *dims);
/* A constant of no elements (a dimension of 0). */
static inline bool oi_is_empty_const(const struct sym *s)
{
	return s && s->is_const && !s->c.n && s->c.rank;
}
struct sym *oi_lookup(struct imp *im, const char *name);
int oi_add_sym(struct imp *im, const char *name, struct sym **out);
int oi_new_value(struct imp *im, struct sym *s, enum npu_dtype dt,
		 uint32_t rank, const uint32_t *dims);
int oi_tmp_value(struct imp *im, enum npu_dtype dt, uint32_t rank,
		 const uint32_t *dims, uint32_t *id);
/* The same, quantized with (@scale, @zp) unless @scale is 0. */
int oi_new_qvalue(struct imp *im, struct sym *s, enum npu_dtype dt, float scale, int32_t zp,
		  uint32_t rank, const uint32_t *dims);
int oi_tmp_qvalue(struct imp *im, enum npu_dtype dt, float scale, int32_t zp, uint32_t rank,
		  const uint32_t *dims, uint32_t *id);
int oi_value_of(struct imp *im, struct sym *s, uint32_t *id);
int oi_add_node(struct imp *im, const struct oi_node *d);
int oi_widen_fp16(struct imp *im, struct sym *s);
int oi_convert_value(struct imp *im, const char *name, uint32_t in, enum npu_dtype from,
		     enum npu_dtype dt, uint32_t rank, const uint32_t *dims, uint32_t *out);
bool oi_is_graph_output(const struct imp *im, const char *name);
bool oi_is_read_by_fp16_node(const struct imp *im, const char *name);
bool oi_fp16_native(const Onnx__NodeProto *n);

/* How onnxruntime runs a node with float16 inputs (onnx_fp16.c). */
enum oi_fp16_mode {
	OI_FP16_NONE,		/* no float16 input */
	OI_FP16_FP32,		/* in float32, between conversions */
	OI_FP16_NATIVE,		/* its float16 kernel, on rounded inputs */
};

int oi_fp16_begin(struct nctx *c, struct sym *subs, enum oi_fp16_mode *mode);

/*
 * Values above the rank limit (onnx_rank.c; oi_fold_dims() is in
 * onnx_internal.h).  oi_rank_begin(): before a node is imported, refuse it if it cannot take
 * its inputs of a higher rank (naming the input and why), or fold what
 * it reads alike; oi_rank_end(): after (@status: the import's result,
 * returned when not 0), give its outputs the model's shapes.
 */
struct oi_rank {
	bool active, loss;
	uint32_t rank;
	int64_t dims[CT_MAX_RANK];
	/*
	 * A loss node imported as @node, which writes its loss to @folded
	 * (the physical shape) rather than to the model's output @out, which
	 * oi_rank_end() then reshapes it into.
	 */
	Onnx__NodeProto node;
	char *outputs[NPU_KERNEL_MAX_OUTPUTS];
	const Onnx__NodeProto *orig;
	char folded[280];
	/*
	 * An op along some axes imported as @node on its inputs with the
	 * dimensions it treats alike merged: group g is dimensions
	 * @group[g] to @group[g + 1] - 1, @touched when the op acts on it;
	 * each output k is written to @outputs[k] (malloc'd) and reshaped
	 * into the model's.  @inputs, @attrs: @node's, malloc'd; @attr the
	 * axis attribute rewritten, with @axes.
	 */
	bool grouped;
	uint32_t ngroups;
	uint32_t group[CT_MAX_RANK + 1];
	bool touched[CT_MAX_RANK];
	char **inputs;
	Onnx__AttributeProto attr, **attrs;
	int64_t axes[CT_MAX_RANK];
};

int oi_rank_begin(struct nctx *c, struct oi_rank *rk);
int oi_rank_end(struct nctx *c, struct oi_rank *rk, int status);
int oi_fp16_end(struct nctx *c, enum oi_fp16_mode mode);
/* npu_onnx_options.rounding: every op node the importer adds rounds so. */
enum npu_rounding oi_rounding(const struct imp *im);
const Onnx__AttributeProto *oi_attr(const struct nctx *c, const char *name);
int64_t oi_attr_i(const struct nctx *c, const char *name, int64_t def);
float oi_attr_f(const struct nctx *c, const char *name, float def);
int oi_attr_ints(const struct nctx *c, const char *name, int64_t *v, size_t max);
const char *oi_attr_s(const struct nctx *c, const char *name, char *buf, size_t size);
int oi_need_in(struct nctx *c, size_t i, struct sym **s);
int oi_out_sym(struct nctx *c, struct sym **s);
/* Does a node or the graph's outputs read tensor @name? */
bool oi_name_used(const struct imp *im, const char *name);
int oi_sym_shape(struct nctx *c, const struct sym *s, uint32_t *rank, uint32_t *dims);
enum npu_dtype oi_sym_dtype(const struct sym *s);
int oi_broadcast(struct nctx *c, uint32_t ra, const uint32_t *a, uint32_t rb,
		 const uint32_t *b, uint32_t *r, uint32_t *out);
int oi_emit(struct nctx *c, const struct oi_node *tmpl, const uint32_t *in,
	    uint32_t nin, enum npu_dtype dt, uint32_t rank, const uint32_t *dims);
int oi_reshape_tmp(struct nctx *c, uint32_t src, enum npu_dtype dt, uint32_t rank,
		   const uint32_t *dims, uint32_t *id);
int oi_op_binary(struct nctx *c);
int oi_op_unary_act(struct nctx *c, enum npu_activation act);
int oi_op_conv(struct nctx *c);
/*
 * Conv-like node @c's geometry from X @x and W @w (the attributes of
 * Conv, ConvInteger, QLinearConv): @op's CONV2D fields, X, W dims (1-D
 * seen as H = 1) and Y dims [N, CO, OH, OW].
 */
int oi_conv_geometry(struct nctx *c, struct sym *x, struct sym *w, struct npu_op_params *op,
		     uint32_t *xd, uint32_t *wd, uint32_t *yd, bool *one_d);
int oi_op_pool(struct nctx *c, enum npu_pool_kind kind, bool global);
int oi_op_matmul(struct nctx *c);
int oi_op_gemm(struct nctx *c);
int oi_op_softmax(struct nctx *c);
int oi_op_layernorm(struct nctx *c);
int oi_op_batchnorm(struct nctx *c);
int oi_op_minmax(struct nctx *c, bool is_max);
int oi_op_reduce(struct nctx *c, enum npu_reduce_kind kind);
int oi_op_conv_transpose(struct nctx *c);
/* ConvTranspose's geometry (X, W [C, CO/g, KH, KW], Y dims; @op's fields). */
int oi_conv_transpose_geometry(struct nctx *c, struct sym *x, struct sym *w,
			       struct npu_op_params *op, uint32_t *xd, uint32_t *wd, uint32_t *yd);
int oi_op_transpose(struct nctx *c);
int oi_op_concat(struct nctx *c);
int oi_op_slice(struct nctx *c);
int oi_op_split(struct nctx *c);
int oi_op_pad(struct nctx *c);
int oi_op_expand(struct nctx *c);
int oi_op_tile(struct nctx *c);
int oi_op_space_depth(struct nctx *c, bool to_space);
int oi_op_cast(struct nctx *c);
int oi_op_resize(struct nctx *c);
/* The ONNX TensorProto type of an npu_dtype (onnx_npu_dtype()'s inverse). */
int oi_onnx_of_dtype(enum npu_dtype dt);
/*
 * The static graph value of constant @s in its own dtype (int64 stays
 * int64), where oi_value_of() gives the device's dtypes.
 */
int oi_exact_value_of(struct imp *im, struct sym *s, uint32_t *id);
int oi_op_meta(struct nctx *c);
int oi_op_const(struct nctx *c);
/* The model's opset of @domain (opset_import), 0 if it imports none. */
int64_t oi_domain_opset(const struct imp *im, const char *domain);
/*
 * Make the node's runtime graph inputs @from to @to - 1 whose values the
 * caller gave (npu_onnx_options.values) its constants, so a shape that
 * depends on them can be known: the count fixed, or a negative errno.
 */
int oi_fix_inputs(struct nctx *c, size_t from, size_t to);
/* The nodes of im->gp in dependency order (subgraphs' reads included). */
int oi_order_nodes(struct imp *im, size_t **order_out);
/* Import im->gp's nodes in @order, reporting every refused one. */
int oi_import_nodes(struct imp *im, const size_t *order, int64_t opset);
/* If: its chosen branch inline, or both and a Where on a runtime condition (onnx_control.c). */
int oi_op_if(struct nctx *c);
int oi_op_loop(struct nctx *c);
int oi_op_scan(struct nctx *c);
/* Does the registry know @n's op at @opset (a custom op included)? */
bool oi_op_known(struct imp *im, const Onnx__NodeProto *n, int64_t opset);
int oi_fail_unknown(struct imp *im, const Onnx__NodeProto *n, int64_t opset);
/* Import one node: the registry (onnx_registry.c) picks its handler. */
int oi_import_node(struct imp *im, const Onnx__NodeProto *n, int64_t opset);
/* Quantized ONNX (onnx_quant.c). */
int oi_op_quantize(struct nctx *c);
int oi_op_dequantize(struct nctx *c);
int oi_op_qlinear_conv(struct nctx *c);
int oi_op_conv_integer(struct nctx *c);
int oi_op_qlinear_matmul(struct nctx *c);
int oi_op_matmul_integer(struct nctx *c);
/*
 * A QDQ unit (a Conv, ConvTranspose, MatMul or Gemm, or a Softmax, Add or
 * Mul, between DequantizeLinear inputs and one QuantizeLinear reader) as
 * onnxruntime runs it: one integer op (or its QLinear kernel) where
 * onnxruntime fuses the unit, the nodes as they are in float elsewhere.
 * 0 when done, 1 when the node is no such unit (import it as it is), or a
 * negative errno.
 */
int oi_qdq_unit(struct nctx *c);
/* Is @n a QuantizeLinear whose output its QDQ unit already wrote? */
bool oi_qdq_done(struct imp *im, const Onnx__NodeProto *n);
/*
 * The one node reading tensor @name, NULL for none, several (or one node
 * reading it twice) or a graph output.
 */
const Onnx__NodeProto *oi_single_reader(struct imp *im, const char *name);
/*
 * Parse and check @data into @src (zeroed by the caller), which keeps a
 * deep copy of @opts; on failure the caller frees what it holds with
 * oi_source_release().
 */
int oi_source_parse(struct npu_onnx_source *src, const void *data, size_t size,
		    const struct npu_onnx_options *opts, char *err, size_t err_size);
void oi_source_release(struct npu_onnx_source *src);
/*
 * @src's options into @dst: min(@src->size, sizeof) bytes, zero past
 * them; with @deep, copies of the arrays it points to (shapes and their
 * names, constants and values with their data, the custom ops' list),
 * which oi_options_release() frees.
 */
int oi_options_copy(struct npu_onnx_options *dst, const struct npu_onnx_options *src, bool deep);
void oi_options_release(struct npu_onnx_options *o);
/*
 * Import @src with input shapes @shapes (@num_shapes of them; the load's
 * options' own shapes for the inputs they do not name) into a new model.
 */
int oi_source_import(const struct npu_onnx_source *src, const struct npu_onnx_shape *shapes,
		     size_t num_shapes, struct npu_onnx_model **out, char *err, size_t err_size);

/*
 * Nodes the importer makes (onnx_synth.c).  oi_name_fmt(): "@tag#@k/@name",
 * a name of the importer's own (malloc'd); oi_name_fmt_i() appends @i to
 * @what.  oi_const_sym(): a new constant symbol, int64 (or @dt) scalar
 * @v[0] or vector @v[@n].  oi_synth(): import op @op reading @ins, writing
 * @out (also the node's name), with one int attribute unless @attr is
 * NULL, at @c's opset; messages name the made node.  oi_stack(): @out
 * the @count tensors @names concatenated along @axis, or stacked along a
 * new axis @axis with @new_axis, by Reshapes and Concats of at most 64
 * inputs.
 */
char *oi_name_fmt(const char *tag, size_t k, const char *name);
char *oi_name_fmt_i(const char *tag, size_t k, const char *what, size_t i);
int oi_const_sym(struct imp *im, const char *name, const int64_t *v, size_t n, bool scalar,
		 int dt);
int oi_synth(struct nctx *c, const char *op, const char *const *ins, size_t nin,
	     const char *out, const char *attr, int64_t attr_v);
/* The shape the model sees of tensor @name (up to CT_MAX_RANK dims). */
int oi_shape_of(struct imp *im, const char *name, uint32_t *rank, int64_t *dims);
int oi_stack(struct nctx *c, char *const *names, size_t count, int64_t axis, bool new_axis,
	     const char *out);

/* The shape the model sees of tensor @s: its own above the rank limit (onnx_rank.c). */
void oi_model_shape(const struct sym *s, uint32_t *rank, int64_t *dims);

/*
 * ONNX sequences (onnx_seq.c), resolved at import into the tensors they
 * hold.  oi_op_sequence() imports a sequence op (SequenceConstruct,
 * SequenceInsert, SequenceAt, SplitToSequence, ConcatFromSequence, ...);
 * oi_seq_copy() makes @dst the same sequence as @src (an If's or Loop's
 * output); oi_seq_free() frees a symbol's.
 */
int oi_op_sequence(struct nctx *c);
int oi_seq_copy(struct imp *im, struct sym *dst, const struct oi_seq *src);
void oi_seq_free(struct oi_seq *q);

/* Run @op's kernel for the node: a kernel node, or folded (onnx_kernel.c). */
int oi_kernel_node(struct nctx *c, const struct npu_onnx_op *op);

#endif /* NPU_ONNX_IMPORT_H */
