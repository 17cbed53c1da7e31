// SPDX-License-Identifier: MIT
/*
 * Float16 models, computed where onnxruntime's CPU provider rounds them.
 *
 * onnxruntime on x86-64 has float16 kernels only for the ops in
 * native_ops[] below; a node of any other op with float16 inputs runs
 * its float32 kernel between conversions it inserts (insert_cast_
 * transformer.cc).  Two of its rules then decide where a value rounds:
 *
 *  - A float16-capable node whose float16 inputs all come from such
 *    converted nodes, and which feeds a node and no graph output, is
 *    converted too ("isolated": IsIsolatedFp16Node()).
 *  - Every float32 -> float16 -> float32 pair of casts is dropped, the
 *    model's own Cast nodes included (RemoveDuplicateCastTransformer).
 *
 * So a float16 model is computed in float32, and a value rounds to
 * float16 only where a node onnxruntime runs in float16 reads it, or a
 * graph output typed float16 is made of it; a Cast between float32 and
 * float16 rounds nothing.  libnpu computes in float32 the same way
 * (oi_widen_fp16()) and rounds exactly there: oi_fp16_begin() gives the
 * inputs of a node onnxruntime runs in float16 their rounded values,
 * bind_output() rounds the outputs.  Measured on onnxruntime 1.20.1
 * (tests/host/fp16 checks the models there bit for bit); rounding every
 * node's result instead was up to 1.3e-3 off on a [0, 1] output.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"
#include "onnx_internal.h"

/*
 * Ops whose CPU kernels take float16 on x86-64 in onnxruntime 1.20.1:
 * those of the ONNX backend tests that run a float16 input with no cast
 * inserted (the others got two or more).  Sorted, for bsearch().
 */
static const char *const native_ops[] = {
	"Cast", "CastLike", "Clip", "Compress", "Concat", "Expand", "Flatten", "Gather",
	"GatherElements", "GatherND", "Identity", "IsNaN", "Max", "Min", "Mod", "Reshape",
	"ReverseSequence", "Round", "Scatter", "ScatterElements", "ScatterND", "Shape",
	"Shrink", "Sign", "Slice", "Split", "Squeeze", "Transpose", "Unsqueeze",
};

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static bool is_default_domain(const Onnx__NodeProto *n)
{
	return !n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx");
}

static bool named(const Onnx__NodeProto *n, const char *op)
{
	return n->op_type && !strcmp(n->op_type, op);
}

bool oi_fp16_native(const Onnx__NodeProto *n)
{
	return is_default_domain(n) && n->op_type &&
	       bsearch(n->op_type, native_ops, sizeof(native_ops) / sizeof(native_ops[0]),
		       sizeof(native_ops[0]), by_name);
}

static bool float_dtype(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP16;
}

/* The model types @s float16. */
static bool typed(const struct sym *s)
{
	return s->fp16_typed || (s->is_const && s->c.dt == OT_FLOAT16);
}

/* @s holds float16 values (it needs no rounding). */
static bool exact(const struct sym *s)
{
	return s->fp16_exact || (s->is_const && s->c.dt == OT_FLOAT16);
}

/*
 * Whether onnxruntime runs a float16-capable node on its float16 kernel:
 * when it makes a graph output, or one of its float16 outputs is read by
 * a node that has a float16 kernel too.  Otherwise it is "isolated"
 * between nodes that run in float32, and runs in float32 as well.
 * (Measured on 1.20.1, which differs from the rule of IsIsolatedFp16Node()
 * in onnxruntime's sources of other versions: a Concat of an Add's result
 * and an initializer, read by a Mul, runs in float32 there; read by a
 * Reshape, in float16.)  A file's nodes are in topological order, so
 * when onnxruntime looks at a node, none of its readers has been made
 * float32 yet: whether they have float16 kernels decides.
 */
static bool runs_in_fp16(const struct nctx *c)
{
	const Onnx__NodeProto *n = c->n;
	size_t i;

	if (c->im->gp->n_node <= 1)
		return true;
	for (i = 0; i < n->n_output; i++) {
		if (!n->output[i] || !*n->output[i])
			continue;
		if (oi_is_graph_output(c->im, n->output[i]))
			return true;
		if (named(n, "Shape") || named(n, "IsNaN") ||
		    (named(n, "Cast") && oi_attr_i(c, "to", 0) != OT_FLOAT16))
			continue;
		if (oi_is_read_by_fp16_node(c->im, n->output[i]))
			return true;
	}
	return false;
}

/* A float32 value @in rounded to float16 and back, in a new value *@out. */
static int round_value(struct imp *im, const struct sym *s, uint32_t in, uint32_t *out)
{
	uint32_t half;
	int ret = oi_convert_value(im, s->name, in, NPU_DTYPE_FP32, NPU_DTYPE_FP16, s->rank,
				   s->dims, &half);

	return ret ? ret : oi_convert_value(im, s->name, half, NPU_DTYPE_FP16, NPU_DTYPE_FP32,
					    s->rank, s->dims, out);
}

/* @s's values rounded to float16, once however many nodes read them so. */
static int rounded(struct imp *im, struct sym *s, uint32_t *out)
{
	uint32_t in;
	int ret;

	if (s->has_rounded) {
		*out = s->rounded_value;
		return 0;
	}
	in = s->value;
	if (s->is_const) {
		ret = oi_exact_value_of(im, s, &in);
		if (ret)
			return ret;
	}
	ret = round_value(im, s, in, out);
	if (ret)
		return ret;
	s->has_rounded = true;
	s->rounded_value = *out;
	return 0;
}

int oi_fp16_begin(struct nctx *c, struct sym *subs, enum oi_fp16_mode *mode)
{
	bool any = false;
	size_t i;
	int ret;

	*mode = OI_FP16_NONE;
	for (i = 0; i < c->nin; i++)
		any |= c->in[i] && typed(c->in[i]);
	if (!any)
		return 0;
	*mode = oi_fp16_native(c->n) && runs_in_fp16(c) ? OI_FP16_NATIVE : OI_FP16_FP32;
	/*
	 * A Cast between the two float types rounds nothing (the pairs
	 * onnxruntime drops); Shape and IsNaN read no value that rounding
	 * changes.
	 */
	if (*mode != OI_FP16_NATIVE || named(c->n, "Cast") || named(c->n, "CastLike") ||
	    named(c->n, "Shape") || named(c->n, "IsNaN"))
		return 0;
	for (i = 0; i < c->nin; i++) {
		struct sym *s = c->in[i];
		uint32_t r;

		if (!s || !typed(s) || exact(s) ||
		    !(s->is_const ? oi_sym_dtype(s) == NPU_DTYPE_FP32 : float_dtype(s->dtype)))
			continue;
		ret = rounded(c->im, s, &r);
		if (ret)
			return ret;
		subs[i] = *s;
		subs[i].is_const = false;
		subs[i].value = r;
		subs[i].dtype = NPU_DTYPE_FP32;
		subs[i].fp16_exact = true;
		c->in[i] = &subs[i];
	}
	return 0;
}

int oi_fp16_end(struct nctx *c, enum oi_fp16_mode mode)
{
	const Onnx__NodeProto *n = c->n;
	int64_t to = named(n, "Cast") ? oi_attr_i(c, "to", 0) : 0;
	size_t i;
	int ret;

	for (i = 0; i < n->n_output; i++) {
		struct sym *o = n->output[i] && *n->output[i] ? oi_lookup(c->im, n->output[i]) : NULL;
		bool fl;

		if (!o)
			continue;
		o->fp16_by_node = true;
		o->fp16_needs_cast = mode == OI_FP16_FP32;
		fl = o->is_const ? oi_sym_dtype(o) == NPU_DTYPE_FP32 : float_dtype(o->dtype);
		if (named(n, "Cast"))
			o->fp16_typed = to == OT_FLOAT16;
		else
			o->fp16_typed = o->widened || (mode != OI_FP16_NONE && fl);
		o->fp16_exact = o->widened ||
				(mode == OI_FP16_NATIVE && fl && !named(n, "Cast") && !named(n, "CastLike"));
		/* the one native op whose float16 result is not one of its inputs' values */
		if (mode == OI_FP16_NATIVE && named(n, "Shrink") && !o->is_const && fl) {
			uint32_t r;

			ret = round_value(c->im, o, o->value, &r);
			if (ret)
				return ret;
			o->value = r;
		}
	}
	return 0;
}
