/* SPDX-License-Identifier: MIT */
/*
 * libnpu-onnx: import an ONNX model into an npu_graph (graph.h).
 *
 * A separate small library (libnpu-onnx.a, linked with -lprotobuf-c), so
 * that libnpu itself never depends on protobuf.
 *
 *   - Initializers and Constant nodes become static values; integer
 *     "shape arithmetic" (Shape, Gather, Concat, Cast, Unsqueeze, ... on
 *     constants) is evaluated during import and never reaches the graph.
 *   - Opsets 1 to 18 of the default domain.  Each op is imported by an
 *     operator registry: a lowering to device ops where one applies
 *     (opset 7 on, or the op's first opset when it has not changed
 *     since), else the op's CPU kernel (npu/kernel.h), which implements
 *     its ONNX semantics for every dtype; custom operators add kernels
 *     for ops of the application's own domains (struct npu_onnx_op).
 *   - Dynamic dimensions (dim_param, or no dim_value) are bound with
 *     shapes given at load time; every output shape is inferred.  A
 *     model that takes several shapes is parsed once
 *     (npu_onnx_source_load()) and imported for each
 *     (npu_onnx_specialize(), below).
 *   - Metadata ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 *     Dropout in inference) become RESHAPE nodes, which cost nothing.
 *   - A node whose inputs are all constants is folded at import (its
 *     kernel runs once), within npu_onnx_options.max_const_bytes.
 *   - Anything else the graph cannot express fails with a message that
 *     names the node and its op.
 *
 * The input is hostile: malformed protobuf, wrong types, cycles, dangling
 * names and absurd dimensions are errors, never crashes.  Nothing is
 * printed; errors come back as a negative errno plus a message.
 */
#ifndef NPU_ONNX_H
#define NPU_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "npu/npu.h"
#include "npu/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct npu_onnx_model;

/* A shape for graph input @name (e.g. from npu-run --shape). */
struct npu_onnx_shape {
	const char *name;
	uint32_t rank;
	int64_t dims[NPU_TENSOR_MAX_RANK];
};

struct npu_onnx_tensor;
struct npu_onnx_op;

/* Load options; zero-initialise. */
struct npu_onnx_options {
	const struct npu_onnx_shape *shapes;
	size_t num_shapes;
	/* Dynamic dimensions nobody bound become 1 instead of an error. */
	int unbound_dims_are_one;
	/*
	 * Graph inputs fixed at load: the input named constants[i].name
	 * becomes a constant like an initializer (its data is copied), so
	 * shape-like inputs (Slice's starts, Pad's pads, Resize's sizes, all
	 * int64, which no device op reads) can be given as files.
	 */
	const struct npu_onnx_tensor *constants;
	size_t num_constants;
	/*
	 * Budgets a model file cannot exceed, whatever it asks for; a model
	 * over one fails with -E2BIG and a message naming the node, the op
	 * and the field below.  Fields are only ever appended after @size,
	 * which the caller sets to sizeof(struct npu_onnx_options) when it
	 * sets any of them; a @size of 0 (a caller that predates them) and a
	 * limit of 0 both mean the default.
	 */
	uint32_t size;
	/* protobuf messages inside messages (the ModelProto is 1), <= 1000 */
	uint32_t max_nesting;
	/* nodes in the model's graph */
	uint32_t max_nodes;
	uint32_t reserved;	/* zero */
	/* bytes of all the constants import computes (folding), in total */
	uint64_t max_const_bytes;
	/* bytes of any one tensor whose shape import infers or is given */
	uint64_t max_value_bytes;
	/*
	 * Custom operators (below): a node whose domain and op type match
	 * one runs its kernel.  They take precedence over the built-in ops,
	 * so an application can also replace one of those.  Since 1.5.
	 */
	const struct npu_onnx_op *const *custom_ops;
	size_t num_custom_ops;
	/*
	 * Values of graph inputs known at load (name, dtype, shape and data;
	 * since 1.5).  Unlike @constants they stay inputs: the importer uses
	 * an input's value only where a node needs it to know a shape (a
	 * Range's limit, a Resize's scales, a TopK's k), and then the model
	 * is only valid for that value: npu_onnx_input_fixed() says which
	 * inputs were fixed so, and a caller must bind the same data to them.
	 */
	const struct npu_onnx_tensor *values;
	size_t num_values;
	/*
	 * How quantized results round (npu/ops.h enum npu_rounding; since
	 * 1.6): NPU_ROUND_ONNX (0), onnxruntime's float multiplier with ties
	 * to even, which ONNX's QuantizeLinear and QLinear* ops define; or
	 * NPU_ROUND_TFLITE, TFLite's fixed-point multiplier, for comparing
	 * with TFLite's integer kernels.  Documentation/quantization.rst.
	 */
	uint32_t rounding;
	uint32_t reserved2;	/* zero */
};

#define NPU_ONNX_DEFAULT_MAX_NESTING		64u
#define NPU_ONNX_LIMIT_MAX_NESTING		1000u
#define NPU_ONNX_DEFAULT_MAX_NODES		(1u << 20)
#define NPU_ONNX_DEFAULT_MAX_CONST_BYTES	(64ull << 20)
#define NPU_ONNX_DEFAULT_MAX_VALUE_BYTES	(1ull << 30)

/*
 * Import the model in @data (@size bytes).  On failure *@err (if not
 * NULL) receives an English message (@err_size bytes at most) naming the
 * node, op, value or field at fault.  -EBADMSG: not a well-formed
 * ONNX protobuf; -E2BIG: over one of the budgets of npu_onnx_options;
 * -ENOTSUP: an opset out of range; -ELOOP: a cycle; -EINVAL: anything
 * else the importer refuses.  Time and memory grow linearly with @size
 * and the budgets.
 */
int npu_onnx_load(const void *data, size_t size,
		  const struct npu_onnx_options *opts,
		  struct npu_onnx_model **out, char *err, size_t err_size);
int npu_onnx_load_file(const char *path, const struct npu_onnx_options *opts,
		       struct npu_onnx_model **out, char *err, size_t err_size);
void npu_onnx_free(struct npu_onnx_model *m);

/* The graph; owned by the model. */
struct npu_graph *npu_onnx_graph(struct npu_onnx_model *m);

/*
 * An input or output of the model.  A dimension may be 0 (an empty
 * tensor: no bytes); above rank 6 the shape is the folded one
 * (npu_onnx_tensor_load()).
 */
struct npu_onnx_io {
	const char *name;
	uint32_t value;		/* graph value id */
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
};

size_t npu_onnx_num_inputs(const struct npu_onnx_model *m);
size_t npu_onnx_num_outputs(const struct npu_onnx_model *m);
int npu_onnx_input(const struct npu_onnx_model *m, size_t i,
		   struct npu_onnx_io *io);
int npu_onnx_output(const struct npu_onnx_model *m, size_t i,
		    struct npu_onnx_io *io);

/*
 * 1 when input @i's value was fixed at load (npu_onnx_options.values),
 * 0 when any value may be bound, -EINVAL for a bad index.  Since 1.5.
 */
int npu_onnx_input_fixed(const struct npu_onnx_model *m, size_t i);

/* The default-domain opset the model imports, 0 when it imports none. */
int64_t npu_onnx_opset(const struct npu_onnx_model *m);

/*
 * Which dimensions of an input or output the model file leaves dynamic
 * (since 1.7).  Extensible (npu.h "ABI rules"): NPU_ONNX_DIMS_INFO_INIT,
 * then npu_onnx_input_dims() or npu_onnx_output_dims() fill
 * min(@size, sizeof) bytes of it.
 *
 * @dynamic: bit k set when dimension k is dynamic: the file gives it a
 *	dim_param or no dim_value (an input whose value was fixed at load
 *	has none).  An output the file declares no shape for has every
 *	dimension dynamic when an input has one.
 * @param: dimension k's dim_param when it is dynamic ("" when it has
 *	none), NULL when it is not; owned by the model.
 */
struct npu_onnx_dims_info {
	uint32_t size;		/* sizeof(struct npu_onnx_dims_info) */
	uint32_t dynamic;
	const char *param[NPU_TENSOR_MAX_RANK];
};

#define NPU_ONNX_DIMS_INFO_INIT	{ .size = sizeof(struct npu_onnx_dims_info) }

/* 0, or -EINVAL for a bad index or @info. */
int npu_onnx_input_dims(const struct npu_onnx_model *m, size_t i,
			struct npu_onnx_dims_info *info);
int npu_onnx_output_dims(const struct npu_onnx_model *m, size_t i,
			 struct npu_onnx_dims_info *info);

/* ---- Dynamic shapes: one model file, many input shapes (since 1.7) ---- */

/*
 * A model file parsed, checked (the protobuf's wire check, opsets,
 * budgets, names, the node order) and its initializers decoded, once.
 * npu_onnx_specialize() then imports it for a set of input shapes: shape
 * inference, the folding of shape arithmetic (Shape, Gather, Concat, ...)
 * and the graph are what an import redoes; the protobuf and the decoded
 * initializers are shared by every import, never copied per shape (the
 * graph copies what its nodes read, as npu_graph_add_value() does).  The
 * device's commands have shapes in them, so each model is compiled on
 * its own; a caller keeps the runtimes of the shapes it meets (npu.Model
 * keeps a few, Documentation/onnx.rst).
 *
 * npu_onnx_source_load() takes the options npu_onnx_load() takes, and
 * copies them with the arrays they point to (shapes, constants, values,
 * the list of custom ops), except the custom ops themselves, which must
 * outlive the source.  Its errors are npu_onnx_load()'s for a file that
 * cannot be read, parsed or checked; an error of shapes comes from
 * npu_onnx_specialize().
 *
 * npu_onnx_specialize(): the model for input shapes @shapes (its
 * @num_shapes entries name graph inputs; an input it does not name takes
 * the shape the load's options gave, else the one the file declares),
 * with the load's budgets and constants; the same errors as
 * npu_onnx_load(), naming the node, op and reason where a shape does not
 * fit the model (a Reshape whose element counts no longer match, a Conv
 * input smaller than its kernel), and -EINVAL naming a shape for a name
 * that is no input.  The model does not refer to @src, which may be
 * freed first.  A source is only read: imports of one source may run on
 * several threads at once.
 *
 * npu_onnx_source_imports(): how many npu_onnx_specialize() calls have
 * imported @src, failed ones included (a cache's callers can so check
 * that a shape they met before imports nothing).
 */
struct npu_onnx_source;

int npu_onnx_source_load(const void *data, size_t size,
			 const struct npu_onnx_options *opts,
			 struct npu_onnx_source **out, char *err, size_t err_size);
int npu_onnx_source_load_file(const char *path, const struct npu_onnx_options *opts,
			      struct npu_onnx_source **out, char *err, size_t err_size);
void npu_onnx_source_free(struct npu_onnx_source *src);
int npu_onnx_specialize(const struct npu_onnx_source *src,
			const struct npu_onnx_shape *shapes, size_t num_shapes,
			struct npu_onnx_model **out, char *err, size_t err_size);
uint64_t npu_onnx_source_imports(const struct npu_onnx_source *src);

/* ---- Operators with a CPU kernel: custom operators (since 1.5) ------- */

/*
 * The node being imported, as npu_onnx_op.create sees it; valid during
 * that call only.
 */
struct npu_onnx_node;

/*
 * An ONNX operator run by a CPU kernel (npu/kernel.h).  Extensible
 * (npu.h "ABI rules"): NPU_ONNX_OP_INIT, then fill.  Every ONNX op of
 * libnpu-onnx that has no device op is one of these, so a custom op gets
 * exactly what the built-in ones get: shape inference (the kernel's
 * infer), folding when its inputs are constants, a place in the graph's
 * CPU segments, the CPU path's limits, and messages naming the node.
 *
 * @domain: the node's domain ("" or "ai.onnx" is the default domain)
 * @op_type: the node's op type
 * @since_version, @until_version: opsets of @domain the entry applies to
 *	(0: no bound); the model's opset_import gives the node's
 * @kernel: must outlive every model and runtime that uses it
 * @create: parse the node's attributes into the kernel's state for that
 *	node (NULL: state NULL); 0, or -EINVAL with a reason in @err (a
 *	create() that fails frees what it allocated: *@state is ignored).
 *	The state then belongs to the graph (kernel->release frees it).
 * @opaque: passed to @create
 */
struct npu_onnx_op {
	uint32_t size;		/* sizeof(struct npu_onnx_op) */
	const char *domain;
	const char *op_type;
	int64_t since_version;
	int64_t until_version;
	const struct npu_kernel *kernel;
	int (*create)(const struct npu_onnx_node *node, void *opaque,
		      void **state, char *err, size_t err_size);
	void *opaque;
};

#define NPU_ONNX_OP_INIT	{ .size = sizeof(struct npu_onnx_op) }

/*
 * Plugins: a shared object that provides custom ops exports
 *
 *   const struct npu_onnx_op *const *npu_onnx_plugin_ops(size_t *count);
 *
 * returning its ops (static, valid while it is loaded) and their count.
 * npu-run --custom-ops FILE.so loads one with dlopen() and passes its
 * ops in npu_onnx_options.custom_ops; other programs can do the same.
 */
#define NPU_ONNX_PLUGIN_SYMBOL	"npu_onnx_plugin_ops"
typedef const struct npu_onnx_op *const *(*npu_onnx_plugin_fn)(size_t *count);
/* Defined by a plugin, never by libnpu-onnx. */
const struct npu_onnx_op *const *npu_onnx_plugin_ops(size_t *count);

/* The node's op type, name ("" if unnamed), domain and its opset. */
const char *npu_onnx_node_op_type(const struct npu_onnx_node *n);
const char *npu_onnx_node_name(const struct npu_onnx_node *n);
int64_t npu_onnx_node_opset(const struct npu_onnx_node *n);
/* Inputs and outputs the node lists, absent optional ones included. */
size_t npu_onnx_node_num_inputs(const struct npu_onnx_node *n);
size_t npu_onnx_node_num_outputs(const struct npu_onnx_node *n);

/*
 * The node's attribute @name: 0 with its value, -ENOENT when the node has
 * none of that name, -EINVAL when it has another type.  Arrays point into
 * the model (valid during create()) and are never NULL, even when empty;
 * npu_onnx_attr_string() copies at most @size - 1 bytes plus a NUL,
 * -ERANGE if it does not fit.
 */
int npu_onnx_attr_int(const struct npu_onnx_node *n, const char *name,
		      int64_t *v);
int npu_onnx_attr_float(const struct npu_onnx_node *n, const char *name,
			float *v);
int npu_onnx_attr_ints(const struct npu_onnx_node *n, const char *name,
		       const int64_t **v, size_t *count);
int npu_onnx_attr_floats(const struct npu_onnx_node *n, const char *name,
			 const float **v, size_t *count);
int npu_onnx_attr_string(const struct npu_onnx_node *n, const char *name,
			 char *buf, size_t size);
/*
 * A list of strings (RNN's activations): element @index copied as
 * npu_onnx_attr_string() copies, *@count (if not NULL) set to the list's
 * length; -ERANGE also for an @index past the end.
 */
int npu_onnx_attr_strings(const struct npu_onnx_node *n, const char *name,
			  size_t index, char *buf, size_t size, size_t *count);

/*
 * The built-in operators, for tools and documentation (npu-run
 * --list-ops): entry @i of npu_onnx_builtin_count(), one per (domain, op
 * type), ONNX's own domain first, then by domain and op type.  Fill min(@info->size, sizeof)
 * bytes; -ERANGE past the end.
 *
 * @device: a lowering to device ops exists (from opset @device_since);
 *	whether a node runs on the device still depends on its dtypes,
 *	attributes and the device's limits
 * @cpu: a CPU kernel exists, for opsets @cpu_since to @cpu_until (0: no
 *	bound); it takes every form the lowering does not
 */
struct npu_onnx_op_info {
	uint32_t size;		/* sizeof(struct npu_onnx_op_info) */
	const char *op_type;
	int device;
	int64_t device_since;
	int cpu;
	int64_t cpu_since, cpu_until;
	const char *cpu_kernel;	/* the kernel's name, NULL without one */
	/* since 1.6: "" for ONNX's own domain, else e.g. "com.microsoft" */
	const char *domain;
};

#define NPU_ONNX_OP_INFO_INIT	{ .size = sizeof(struct npu_onnx_op_info) }

size_t npu_onnx_builtin_count(void);
int npu_onnx_builtin(size_t i, struct npu_onnx_op_info *info);

/*
 * A serialized TensorProto (ONNX's test_data_set_N/input_K.pb) read into
 * dense native data of its npu_dtype (int64 as NPU_DTYPE_INT64 since 1.5;
 * NPU_ONNX_INT64 is kept as its old name).  A dimension may be 0 (no
 * data, @bytes 0, @data still allocated); a tensor of rank 7 or 8 comes
 * folded, its dimensions from the sixth on merged into the sixth, as the
 * importer holds an input or output of that rank (Documentation/onnx.rst).
 */
#define NPU_ONNX_INT64	NPU_DTYPE_INT64
struct npu_onnx_tensor {
	char name[128];
	int dtype;		/* enum npu_dtype */
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	void *data;		/* malloc'd */
	uint64_t bytes;
};

int npu_onnx_tensor_load(const void *data, size_t size,
			 struct npu_onnx_tensor *t, char *err, size_t err_size);
void npu_onnx_tensor_free(struct npu_onnx_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* NPU_ONNX_H */
