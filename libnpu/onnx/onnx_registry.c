// SPDX-License-Identifier: MIT
/*
 * The operator registry: which handler imports a node.
 *
 * An ONNX op has up to two implementations here:
 *
 *   - a lowering (onnx_ops.c, onnx_move.c, onnx_meta.c): graph nodes the
 *     device can run (CONV2D, GEMM, COPY, ...) or a constant folded at
 *     import;
 *   - a CPU kernel (kernels/ok_*.c, or an application's custom op): a
 *     struct npu_onnx_op, the same interface applications use, with the
 *     op's full semantics for every dtype and attribute form.
 *
 * The lowering is tried first when it can apply (the node's runtime
 * inputs have dtypes a device op takes); when it refuses the node before
 * adding anything to the graph (a form the device has no op for) or
 * cannot apply, the kernel runs the node.  A custom op registered for a
 * (domain, op type) takes precedence over both.
 *
 * The tables are sorted once (pthread_once) and searched by binary
 * search, so a lookup costs O(log n) string compares, whatever the
 * number of ops.  Ops of other domains than ONNX's (com.microsoft's
 * QLinear* contrib ops, which onnxruntime's tools write) have their own
 * lowering table and are told apart from default-domain kernels by the
 * kernel's domain.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "ok_util.h"

/* The lowering handles runtime inputs of any dtype (metadata ops). */
#define L_ANY_DTYPE	(1u << 0)
/* The lowering only folds constants: it applies when every input is one. */
#define L_CONST_ONLY	(1u << 1)
/* The lowering writes every output (Split), not only the first. */
#define L_ALL_OUTPUTS	(1u << 2)
/*
 * A sequence op (onnx_seq.c): it reads or writes sequences, which only
 * the importer holds, and nothing else may read one.
 */
#define L_SEQUENCE	(1u << 3)

struct lowering {
	const char *op_type;
	int (*fn)(struct nctx *c);
	unsigned int flags;
	/*
	 * Folds the node when every input is a constant, with what kernels
	 * cannot hold (empty tensors, rank above 6): shape arithmetic.
	 */
	int (*fold)(struct nctx *c);
	/*
	 * The first opset whose semantics the lowering implements: mostly
	 * LOWERING_DEFAULT_SINCE (7), because opsets 1 to 6 had legacy forms (Add's broadcast
	 * attribute, BatchNormalization's spatial, ...); ops unchanged since
	 * an older opset say so.
	 */
	int64_t since;
};

#define LOWERING_DEFAULT_SINCE	7

#define UNARY(name, act) \
	static int l_##name(struct nctx *c) { return oi_op_unary_act(c, act); }
UNARY(relu, NPU_ACT_RELU)
UNARY(leaky_relu, NPU_ACT_LEAKY_RELU)
UNARY(sigmoid, NPU_ACT_SIGMOID)
UNARY(tanh, NPU_ACT_TANH)
UNARY(clip, NPU_ACT_CLIP)
UNARY(hard_sigmoid, NPU_ACT_HARD_SIGMOID)
UNARY(hard_swish, NPU_ACT_HARD_SWISH)
UNARY(sqrt, NPU_ACT_SQRT)
UNARY(reciprocal, NPU_ACT_RECIPROCAL)
UNARY(exp, NPU_ACT_EXP)
UNARY(log, NPU_ACT_LOG)
UNARY(abs, NPU_ACT_ABS)
UNARY(neg, NPU_ACT_NEG)
#undef UNARY

#define REDUCE(name, kind) \
	static int l_##name(struct nctx *c) { return oi_op_reduce(c, kind); }
REDUCE(reduce_mean, NPU_REDUCE_MEAN)
REDUCE(reduce_sum, NPU_REDUCE_SUM)
REDUCE(reduce_max, NPU_REDUCE_MAX)
REDUCE(reduce_min, NPU_REDUCE_MIN)
REDUCE(reduce_l2, NPU_REDUCE_L2)
REDUCE(reduce_sum_square, NPU_REDUCE_SUM_SQUARE)
#undef REDUCE

static int l_max(struct nctx *c) { return oi_op_minmax(c, true); }
static int l_min(struct nctx *c) { return oi_op_minmax(c, false); }
/* A QDQ unit onnxruntime fuses is its QLinear op (oi_qdq_unit()). */
static int l_avg_pool(struct nctx *c)
{
	int ret = oi_qdq_unit(c);

	return ret <= 0 ? ret : oi_op_pool(c, NPU_POOL_AVG, false);
}

static int l_global_avg_pool(struct nctx *c)
{
	int ret = oi_qdq_unit(c);

	return ret <= 0 ? ret : oi_op_pool(c, NPU_POOL_AVG, true);
}

static int l_global_max_pool(struct nctx *c) { return oi_op_pool(c, NPU_POOL_MAX, true); }
static int l_depth_to_space(struct nctx *c) { return oi_op_space_depth(c, true); }
static int l_space_to_depth(struct nctx *c) { return oi_op_space_depth(c, false); }

/* A used second output (Indices, mask) has no device op: the kernel's. */
static bool second_output_used(const struct nctx *c)
{
	const Onnx__NodeProto *n = c->n;

	return n->n_output > 1 && n->output[1] && *n->output[1] &&
	       oi_name_used(c->im, n->output[1]);
}

static int l_max_pool(struct nctx *c)
{
	if (second_output_used(c))
		return oi_fail(c->im, "the Indices output is not supported");
	if (oi_attr_i(c, "storage_order", 0))
		return oi_fail(c->im, "storage_order 1 is not supported");
	return oi_op_pool(c, NPU_POOL_MAX, false);
}

static int l_dropout(struct nctx *c)
{
	if (second_output_used(c))
		return oi_fail(c->im, "the mask output is not supported");
	return oi_op_meta(c);
}

/* Sorted by op type (strcmp order): checked when the index is built. */
static const struct lowering lowerings[] = {
	{ "Abs", l_abs, 0, NULL, 6 },
	{ "Add", oi_op_binary, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "AveragePool", l_avg_pool, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "BatchNormalization", oi_op_batchnorm, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Cast", oi_op_cast, 0, oi_op_const, LOWERING_DEFAULT_SINCE },
	{ "Clip", l_clip, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Concat", oi_op_concat, 0, oi_op_const, LOWERING_DEFAULT_SINCE },
	{ "ConcatFromSequence", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "Constant", oi_op_const, L_ANY_DTYPE, NULL, 1 },
	{ "ConstantOfShape", oi_op_const, L_ANY_DTYPE, NULL, LOWERING_DEFAULT_SINCE },
	{ "Conv", oi_op_conv, 0, NULL, 1 },
	{ "ConvInteger", oi_op_conv_integer, 0, NULL, 10 },
	{ "ConvTranspose", oi_op_conv_transpose, 0, NULL, 1 },
	{ "DepthToSpace", l_depth_to_space, 0, NULL, 1 },
	{ "DequantizeLinear", oi_op_dequantize, 0, NULL, 10 },
	{ "Div", oi_op_binary, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Dropout", l_dropout, L_ANY_DTYPE, NULL, LOWERING_DEFAULT_SINCE },
	{ "Exp", l_exp, 0, NULL, 6 },
	{ "Expand", oi_op_expand, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Flatten", oi_op_meta, L_ANY_DTYPE, NULL, 1 },
	{ "Gather", oi_op_const, L_CONST_ONLY, NULL, LOWERING_DEFAULT_SINCE },
	{ "Gemm", oi_op_gemm, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "GlobalAveragePool", l_global_avg_pool, 0, NULL, 1 },
	{ "GlobalMaxPool", l_global_max_pool, 0, NULL, 1 },
	{ "HardSigmoid", l_hard_sigmoid, 0, NULL, 6 },
	{ "HardSwish", l_hard_swish, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Identity", oi_op_meta, L_ANY_DTYPE, NULL, 1 },
	{ "If", oi_op_if, L_ANY_DTYPE, NULL, 1 },
	{ "LayerNormalization", oi_op_layernorm, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "LeakyRelu", l_leaky_relu, 0, NULL, 6 },
	{ "Log", l_log, 0, NULL, 6 },
	{ "Loop", oi_op_loop, L_ANY_DTYPE, NULL, 1 },
	{ "MatMul", oi_op_matmul, 0, NULL, 1 },
	{ "MatMulInteger", oi_op_matmul_integer, 0, NULL, 10 },
	{ "Max", l_max, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "MaxPool", l_max_pool, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Min", l_min, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Mul", oi_op_binary, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Neg", l_neg, 0, NULL, 6 },
	{ "Pad", oi_op_pad, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Pow", oi_op_binary, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "QLinearConv", oi_op_qlinear_conv, 0, NULL, 10 },
	{ "QLinearMatMul", oi_op_qlinear_matmul, 0, NULL, 10 },
	{ "QuantizeLinear", oi_op_quantize, 0, NULL, 10 },
	{ "Reciprocal", l_reciprocal, 0, NULL, 6 },
	{ "ReduceL2", l_reduce_l2, 0, NULL, 1 },
	{ "ReduceMax", l_reduce_max, 0, NULL, 1 },
	{ "ReduceMean", l_reduce_mean, 0, NULL, 1 },
	{ "ReduceMin", l_reduce_min, 0, NULL, 1 },
	{ "ReduceSum", l_reduce_sum, 0, NULL, 1 },
	{ "ReduceSumSquare", l_reduce_sum_square, 0, NULL, 1 },
	{ "Relu", l_relu, 0, NULL, 6 },
	{ "Reshape", oi_op_meta, L_ANY_DTYPE, NULL, 5 },
	{ "Resize", oi_op_resize, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Scan", oi_op_scan, L_ANY_DTYPE, NULL, 8 },
	{ "SequenceAt", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "SequenceConstruct", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "SequenceEmpty", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "SequenceErase", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "SequenceInsert", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "SequenceLength", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "Shape", oi_op_const, L_ANY_DTYPE, NULL, 1 },
	{ "Sigmoid", l_sigmoid, 0, NULL, 6 },
	{ "Slice", oi_op_slice, 0, oi_op_const, LOWERING_DEFAULT_SINCE },
	{ "Softmax", oi_op_softmax, 0, NULL, 1 },
	{ "SpaceToDepth", l_space_to_depth, 0, NULL, 1 },
	{ "Split", oi_op_split, L_ALL_OUTPUTS, NULL, LOWERING_DEFAULT_SINCE },
	{ "SplitToSequence", oi_op_sequence, L_SEQUENCE, NULL, 11 },
	{ "Sqrt", l_sqrt, 0, NULL, 6 },
	{ "Squeeze", oi_op_meta, L_ANY_DTYPE, NULL, 1 },
	{ "Sub", oi_op_binary, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Tanh", l_tanh, 0, NULL, 6 },
	{ "Tile", oi_op_tile, 0, NULL, LOWERING_DEFAULT_SINCE },
	{ "Transpose", oi_op_transpose, 0, NULL, 1 },
	{ "Unsqueeze", oi_op_meta, L_ANY_DTYPE, NULL, 1 },
};

#define NUM_LOWERINGS (sizeof(lowerings) / sizeof(lowerings[0]))

#define MS_DOMAIN	"com.microsoft"

/* com.microsoft's ops with a device lowering, sorted like lowerings[]. */
static const struct lowering ms_lowerings[] = {
	{ "", NULL, 0, NULL, 1 },	/* keeps the table non-empty */
};

#define NUM_MS_LOWERINGS (sizeof(ms_lowerings) / sizeof(ms_lowerings[0]))

/* ---- The built-in kernels, sorted by op type then opset -------------------- */

static const struct npu_onnx_op *const *const families[] = {
	ok_ops_math, ok_ops_index, ok_ops_reduce, ok_ops_nn, ok_ops_seq, ok_ops_quant,
	ok_ops_misc,
};

static const struct npu_onnx_op **kernels;
static size_t num_kernels;
static bool tables_ok;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static bool default_domain(const char *d)
{
	return !d || !*d || !strcmp(d, "ai.onnx");
}

/* "" for ONNX's own domain, whichever way it is spelt. */
static const char *domain_key(const char *d)
{
	return default_domain(d) ? "" : d;
}

static int by_op(const void *a, const void *b)
{
	const struct npu_onnx_op *x = *(const struct npu_onnx_op *const *)a;
	const struct npu_onnx_op *y = *(const struct npu_onnx_op *const *)b;
	int r = strcmp(x->op_type, y->op_type);

	if (!r)
		r = strcmp(domain_key(x->domain), domain_key(y->domain));
	if (r)
		return r;
	return (x->since_version > y->since_version) - (x->since_version < y->since_version);
}

static void build_index(void)
{
	size_t f, k, n = 0;

	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (k = 0; families[f][k]; k++)
			n++;
	kernels = malloc((n ? n : 1) * sizeof(*kernels));
	if (!kernels)
		return;
	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (k = 0; families[f][k]; k++)
			kernels[num_kernels++] = families[f][k];
	qsort(kernels, num_kernels, sizeof(*kernels), by_op);
	for (k = 1; k < NUM_LOWERINGS; k++)
		if (strcmp(lowerings[k - 1].op_type, lowerings[k].op_type) >= 0)
			return;
	for (k = 1; k < NUM_MS_LOWERINGS; k++)
		if (strcmp(ms_lowerings[k - 1].op_type, ms_lowerings[k].op_type) >= 0)
			return;
	tables_ok = true;
}

static bool in_range(const struct npu_onnx_op *op, int64_t opset)
{
	return (!op->since_version || opset >= op->since_version) &&
	       (!op->until_version || opset <= op->until_version);
}

static bool same_domain(const char *a, const char *b)
{
	if (default_domain(a) || default_domain(b))
		return default_domain(a) && default_domain(b);
	return !strcmp(a, b);
}

static const struct npu_onnx_op *find_custom(const struct imp *im, const char *domain,
					     const char *op_type, int64_t opset)
{
	const struct npu_onnx_options *o = im->opts;
	size_t i;

	if (!o || o->size < offsetof(struct npu_onnx_options, num_custom_ops) +
			    sizeof(o->num_custom_ops))
		return NULL;
	for (i = 0; i < o->num_custom_ops; i++) {
		const struct npu_onnx_op *op = o->custom_ops[i];

		if (op && op->op_type && !strcmp(op->op_type, op_type) &&
		    same_domain(op->domain, domain) && in_range(op, opset))
			return op;
	}
	return NULL;
}

static const struct npu_onnx_op *find_kernel(const char *domain, const char *op_type,
					     int64_t opset)
{
	size_t lo = 0, hi = num_kernels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(kernels[mid]->op_type, op_type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < num_kernels && !strcmp(kernels[lo]->op_type, op_type); lo++)
		if (same_domain(kernels[lo]->domain, domain) && in_range(kernels[lo], opset))
			return kernels[lo];
	return NULL;
}

static const struct lowering *find_lowering(const char *domain, const char *op_type)
{
	const struct lowering *tab = lowerings;
	size_t lo = 0, hi = NUM_LOWERINGS;

	if (!default_domain(domain)) {
		if (strcmp(domain, MS_DOMAIN))
			return NULL;
		tab = ms_lowerings;
		hi = NUM_MS_LOWERINGS;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(tab[mid].op_type, op_type);

		if (!r)
			return tab[mid].fn ? &tab[mid] : NULL;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool device_dtype(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP16 || dt == NPU_DTYPE_BF16 ||
	       dt == NPU_DTYPE_INT8 || dt == NPU_DTYPE_UINT8 || dt == NPU_DTYPE_INT32;
}

static bool all_const(const struct nctx *c)
{
	size_t i;

	for (i = 0; i < c->nin; i++)
		if (c->in[i] && !c->in[i]->is_const)
			return false;
	return true;
}

/* Can the lowering take the node as it stands? */
static bool lowering_applies(const struct nctx *c, const struct lowering *l)
{
	size_t i;

	/* most lowerings write the first output only (Mean, Indices, mask: kernels) */
	for (i = 1; i < c->n->n_output && !(l->flags & L_ALL_OUTPUTS); i++)
		if (c->n->output[i] && *c->n->output[i] && oi_name_used(c->im, c->n->output[i]))
			return false;

	for (i = 0; i < c->nin; i++) {
		const struct sym *s = c->in[i];

		if (!s)
			continue;
		if (s->is_const)
			continue;
		if (l->flags & L_CONST_ONLY)
			return false;
		if (!(l->flags & L_ANY_DTYPE) && !device_dtype(s->dtype))
			return false;
	}
	return true;
}

/*
 * Why @n has neither a custom op, a kernel nor a lowering at @opset (the
 * default domain's; another domain's is looked up here), in the words
 * every refusal of an unknown op uses, whether or not its inputs could
 * be imported.
 */
int oi_fail_unknown(struct imp *im, const Onnx__NodeProto *n, int64_t opset)
{
	const char *t = n->op_type ? n->op_type : "";
	const struct lowering *low;
	bool kernel = false;
	size_t i;

	pthread_once(&index_once, build_index);
	low = find_lowering(n->domain, t);
	for (i = 0; i < num_kernels && !kernel; i++)
		kernel = same_domain(kernels[i]->domain, n->domain) &&
			 !strcmp(kernels[i]->op_type, t);
	if (!default_domain(n->domain)) {
		if (!low && !kernel)
			return oi_fail(im, "domain '%s' is not supported (no built-in or custom op %s in it)",
				       n->domain, t);
		opset = oi_domain_opset(im, n->domain);
	} else if (opset < 1) {
		return oi_fail(im, "op of the default ONNX domain, which the model does not import (its opset_import has no '' or 'ai.onnx' entry)");
	}
	if (!low && !kernel)
		return oi_fail(im, "op not supported by libnpu yet");
	if (low && opset < low->since)
		return oi_fail(im, "op not supported by libnpu at opset %" PRId64 " (its lowering starts at opset %" PRId64 ")",
			       opset, low->since);
	return oi_fail(im, "op not supported by libnpu at opset %" PRId64, opset);
}

bool oi_op_known(struct imp *im, const Onnx__NodeProto *n, int64_t opset)
{
	const char *t = n->op_type ? n->op_type : "";
	const struct lowering *low;

	pthread_once(&index_once, build_index);
	if (!tables_ok)
		return true;
	if (!default_domain(n->domain))
		opset = oi_domain_opset(im, n->domain);
	low = find_lowering(n->domain, t);
	return find_custom(im, n->domain, t, opset) || find_kernel(n->domain, t, opset) ||
	       (low && opset >= low->since);
}

/*
 * The lowering if it applies, else (or when it refuses the node before
 * adding anything) the kernel.  A refusal that left nothing behind is
 * tried once more with the node's known input values fixed
 * (npu_onnx_options.values), for ops whose output shape depends on them.
 */
static int import_with(struct nctx *c, const struct lowering *low,
		       const struct npu_onnx_op *kop, bool may_fix)
{
	struct imp *im = c->im;
	size_t syms = im->nsyms, nodes = npu_graph_num_nodes(im->m->g);
	char lowering_err[384] = "";
	int ret = -EINVAL;

	/*
	 * On constants the kernel folds the node at import, so shapes that
	 * depend on it are known; lowerings of metadata ops fold by themselves.
	 */
	im->fold_refused = false;
	if (low && low->fold && all_const(c)) {
		ret = low->fold(c);
		if (ret != -EINVAL || !kop || im->nsyms != syms ||
		    npu_graph_num_nodes(im->m->g) != nodes)
			return ret;
		im->node = c->n;
		if (im->err && im->err_size)
			snprintf(lowering_err, sizeof(lowering_err), "%s", im->err);
		im->fold_refused = true;
		low = NULL;
	}
	if (low && kop && !(low->flags & (L_ANY_DTYPE | L_CONST_ONLY)) && all_const(c))
		low = NULL;
	if (low && (!kop || lowering_applies(c, low))) {
		ret = low->fn(c);
		if (!ret || ret != -EINVAL || im->nsyms != syms ||
		    npu_graph_num_nodes(im->m->g) != nodes)
			return ret;
		im->node = c->n;
		if (im->err && im->err_size)
			snprintf(lowering_err, sizeof(lowering_err), "%s", im->err);
		/* on constants a lowering is a fold (Gather's, L_CONST_ONLY) */
		im->fold_refused = all_const(c);
		/*
		 * Parameters the caller gave (QLinearConv's scales, Clip's
		 * bounds, Resize's scales) are constants to the device: the
		 * lowering again with them fixed, before the kernel.
		 */
		if (may_fix && kop) {
			int fixed = oi_fix_inputs(c, 1, c->nin);

			if (fixed < 0)
				return fixed;
			if (fixed && lowering_applies(c, low)) {
				ret = low->fn(c);
				if (!ret || ret != -EINVAL || im->nsyms != syms ||
				    npu_graph_num_nodes(im->m->g) != nodes)
					return ret;
				im->node = c->n;
			}
		}
	}
	if (kop) {
		im->kernel_input_refused = false;
		ret = oi_kernel_node(c, kop);
		/*
		 * The kernel reports its own reason, unless what it refused was
		 * a constant it cannot hold: then the lowering's says more.
		 */
		if (ret == -EINVAL && im->kernel_input_refused && *lowering_err)
			snprintf(im->err, im->err_size, "%s", lowering_err);
		if (ret != -EINVAL || im->nsyms != syms ||
		    npu_graph_num_nodes(im->m->g) != nodes)
			return ret;
	}
	if (may_fix) {
		/*
		 * The parameters first (Resize's scales, TopK's k: inputs 1
		 * on), so the data stays a runtime input where it can; the
		 * data itself only when the shape depends on it (NonZero).
		 */
		int fixed = oi_fix_inputs(c, 1, c->nin);

		if (fixed < 0)
			return fixed;
		if (fixed) {
			ret = import_with(c, low, kop, false);
			if (ret != -EINVAL || im->nsyms != syms ||
			    npu_graph_num_nodes(im->m->g) != nodes)
				return ret;
		}
		fixed = oi_fix_inputs(c, 0, 1);
		if (fixed < 0)
			return fixed;
		if (fixed)
			return import_with(c, low, kop, false);
	}
	return ret;
}

static int import_node_as(struct nctx *c, const char *t, int64_t opset);

/*
 * An output a lowering made empty (a dimension of 0) becomes a constant of
 * no elements, as a kernel's does (onnx_kernel.c): its readers fold or
 * skip it and never put an empty operand on the device; compile drops the
 * node that writes it.
 */
static int outputs_empty_const(struct nctx *c)
{
	size_t i;
	int ret;

	for (i = 0; i < c->n->n_output; i++) {
		struct sym *s = c->n->output[i] && *c->n->output[i] ?
				oi_lookup(c->im, c->n->output[i]) : NULL;

		if (!s || s->is_const || !s->rank || oi_elems(s->rank, s->dims))
			continue;
		ret = oi_set_empty(c->im, s, s->dtype, s->rank, s->dims);
		if (ret)
			return ret;
	}
	return 0;
}

int oi_import_node(struct imp *im, const Onnx__NodeProto *n, int64_t opset)
{
	struct nctx c = { .im = im, .n = n, .opset = opset };
	const char *t = n->op_type ? n->op_type : "";
	struct sym fp16_inputs[NPU_KERNEL_MAX_INPUTS];
	const struct lowering *seq;
	enum oi_fp16_mode fp16;
	struct oi_rank rk;
	size_t i;
	int ret;

	im->node = n;
	pthread_once(&index_once, build_index);
	if (!tables_ok)
		return kernels ? oi_fail(im, "the operator registry is not sorted") : oi_nomem(im);
	if (oi_qdq_done(im, n))
		return 0;
	c.name = n->name && *n->name ? n->name :
		 (n->n_output && n->output[0] ? n->output[0] : "");
	if (n->n_input > NPU_KERNEL_MAX_INPUTS)
		return oi_fail(im, "%zu inputs, at most %d are supported", n->n_input,
			       NPU_KERNEL_MAX_INPUTS);
	if (n->n_output > NPU_KERNEL_MAX_OUTPUTS)
		return oi_fail(im, "%zu outputs, at most %d are supported", n->n_output,
			       NPU_KERNEL_MAX_OUTPUTS);
	/*
	 * Every ONNX op has at least one output (some optional, named ""), so
	 * the lowerings may read n->output[0]; a node without one is malformed.
	 */
	if (!n->n_output)
		return oi_fail(im, "no outputs: every ONNX op has at least one");
	c.nin = n->n_input;
	for (i = 0; i < n->n_input; i++) {
		if (!n->input[i] || !*n->input[i])
			continue;
		c.in[i] = oi_lookup(im, n->input[i]);
		if (!c.in[i])
			return oi_fail(im, "input '%s' is not defined", n->input[i]);
	}
	if (!default_domain(n->domain)) {
		opset = oi_domain_opset(im, n->domain);
		c.opset = opset;
	}
	seq = find_lowering(n->domain, t);
	if (seq && (seq->flags & L_SEQUENCE)) {
		if (opset < seq->since)
			return oi_fail(im, "op not supported by libnpu at opset %" PRId64 " (it starts at opset %" PRId64 ")",
				       opset, seq->since);
		return seq->fn(&c);
	}
	for (i = 0; i < c.nin; i++)
		if (c.in[i] && c.in[i]->seq)
			return oi_fail(im, "input '%s' is an ONNX sequence, which only the sequence ops take",
				       c.in[i]->name);
	ret = oi_rank_begin(&c, &rk);
	if (ret)
		return ret;
	ret = oi_fp16_begin(&c, fp16_inputs, &fp16);
	if (ret)
		return oi_rank_end(&c, &rk, ret);
	ret = import_node_as(&c, t, opset);
	if (!ret)
		ret = oi_fp16_end(&c, fp16);
	ret = oi_rank_end(&c, &rk, ret);
	return ret ? ret : outputs_empty_const(&c);
}

static int import_node_as(struct nctx *c, const char *t, int64_t opset)
{
	struct imp *im = c->im;
	const Onnx__NodeProto *n = c->n;
	const struct npu_onnx_op *kop;
	const struct lowering *low;
	struct sym *out;
	int ret;

	kop = find_custom(im, n->domain, t, opset);
	if (kop)
		return import_with(c, NULL, kop, true);
	kop = find_kernel(n->domain, t, opset);
	low = find_lowering(n->domain, t);
	if (low && opset < low->since)
		low = NULL;
	if (!low && !kop)
		return oi_fail_unknown(im, n, opset);
	ret = import_with(c, low, kop, true);
	/* remembered for the QDQ units reading it (onnx_quant.c) */
	if (!ret && default_domain(n->domain) && !strcmp(t, "DequantizeLinear") &&
	    n->n_output && n->output[0] && (out = oi_lookup(im, n->output[0])))
		out->dq = n;
	return ret;
}

/* ---- Enumeration: the union of lowerings and kernels, by op -------------- */

struct op_name {
	const char *domain;	/* "" for ONNX's */
	const char *op_type;
};

static struct op_name *op_names;
static size_t num_op_names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
	const struct op_name *x = a, *y = b;
	int r = strcmp(x->domain, y->domain);

	return r ? r : strcmp(x->op_type, y->op_type);
}

static void build_names(void)
{
	size_t i, n = 0;

	pthread_once(&index_once, build_index);
	op_names = malloc((NUM_LOWERINGS + NUM_MS_LOWERINGS + num_kernels + 1) *
			  sizeof(*op_names));
	if (!op_names)
		return;
	for (i = 0; i < NUM_LOWERINGS; i++)
		op_names[n++] = (struct op_name){ "", lowerings[i].op_type };
	for (i = 0; i < NUM_MS_LOWERINGS; i++)
		if (ms_lowerings[i].fn)
			op_names[n++] = (struct op_name){ MS_DOMAIN, ms_lowerings[i].op_type };
	for (i = 0; i < num_kernels; i++)
		op_names[n++] = (struct op_name){ domain_key(kernels[i]->domain),
						  kernels[i]->op_type };
	qsort(op_names, n, sizeof(*op_names), by_name);
	for (i = 0; i < n; i++)
		if (!num_op_names || by_name(&op_names[num_op_names - 1], &op_names[i]))
			op_names[num_op_names++] = op_names[i];
}

NPU_EXPORT_ONNX size_t npu_onnx_builtin_count(void)
{
	pthread_once(&names_once, build_names);
	return num_op_names;
}

NPU_EXPORT_ONNX int npu_onnx_builtin(size_t i, struct npu_onnx_op_info *info)
{
	struct npu_onnx_op_info o = NPU_ONNX_OP_INFO_INIT;
	const struct lowering *l;
	size_t lo = 0, hi, sz;

	if (!info || !info->size)
		return -EINVAL;
	if (i >= npu_onnx_builtin_count())
		return -ERANGE;
	o.op_type = op_names[i].op_type;
	o.domain = op_names[i].domain;
	l = find_lowering(o.domain, o.op_type);
	if (l) {
		o.device = 1;
		o.device_since = l->since;
	}
	hi = num_kernels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(kernels[mid]->op_type, o.op_type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < num_kernels && !strcmp(kernels[lo]->op_type, o.op_type); lo++) {
		const struct npu_onnx_op *k = kernels[lo];

		if (!same_domain(k->domain, o.domain))
			continue;
		if (!o.cpu) {
			o.cpu_since = k->since_version;
			o.cpu_kernel = k->kernel ? k->kernel->name : NULL;
		}
		o.cpu_until = o.cpu && !o.cpu_until ? 0 : k->until_version;
		o.cpu = 1;
	}
	sz = info->size < sizeof(o) ? info->size : sizeof(o);
	memcpy((char *)info + sizeof(o.size), (char *)&o + sizeof(o.size), sz - sizeof(o.size));
	return 0;
}
