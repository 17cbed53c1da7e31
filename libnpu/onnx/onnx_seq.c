// SPDX-License-Identifier: MIT
/*
 * ONNX sequences (onnx/defs/sequence) resolved at import.
 *
 * libnpu's graphs hold tensors only, and a sequence whose structure (its
 * length, and the positions read from it) import knows is nothing but a
 * list of tensors: SequenceConstruct, SequenceInsert, SequenceErase and
 * SequenceEmpty edit the list, SequenceLength is a constant, SequenceAt
 * is the tensor at its position, SplitToSequence a list of slices of its
 * input and ConcatFromSequence a Concat (or a stack) of the list.  The
 * tensors are made by Slice, Identity, Reshape and Concat nodes
 * imported like the model's own (onnx_synth.c), so the runtime only ever
 * sees tensors and their ops land on the device where they can.
 *
 * A SplitToSequence's slices are cut when a node reads them, so a
 * sequence of which only the length or one tensor is used costs nothing
 * more; its length is known even when its split sizes are runtime data.
 * What a run would have to tell (a position, the length a runtime scalar
 * split gives) is refused, naming the node and the input, as are
 * positions out of range and tensors of another type than the
 * sequence's; so are sequences as a model's inputs or outputs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

/* Tensors one sequence may hold: each is a symbol and maybe a node. */
#define MAX_SEQ_LEN	4096u

/*
 * A tensor of a sequence: symbol @s, or while @s is NULL, the slice
 * [@start, @start + @len) along @axis of @src (that dimension, of 1,
 * dropped with @squeeze); @len < 0 when the size is runtime data.
 */
struct oi_seq_elem {
	struct sym *s;
	struct sym *src;
	uint32_t axis;
	bool squeeze;
	int64_t start, len;
};

struct oi_seq {
	int elem_type;		/* ONNX TensorProto type of every tensor */
	size_t n;
	struct oi_seq_elem *e;
	/* the SplitToSequence input holding runtime split sizes, for messages */
	const char *runtime_split;
};

void oi_seq_free(struct oi_seq *q)
{
	if (!q)
		return;
	free(q->e);
	free(q);
}

/* A new sequence of @n tensors (room for one more) of @elem_type. */
static struct oi_seq *seq_new(int elem_type, size_t n)
{
	struct oi_seq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->e = calloc(n + 1, sizeof(*q->e));
	if (!q->e) {
		free(q);
		return NULL;
	}
	q->elem_type = elem_type;
	q->n = n;
	return q;
}

int oi_seq_copy(struct imp *im, struct sym *dst, const struct oi_seq *src)
{
	struct oi_seq *q = seq_new(src->elem_type, src->n);

	if (!q)
		return oi_nomem(im);
	memcpy(q->e, src->e, src->n * sizeof(*q->e));
	q->runtime_split = src->runtime_split;
	dst->seq = q;
	return 0;
}

/* The ONNX type of tensor @s as the model types it. */
static int tensor_type(const struct sym *s)
{
	if (s->is_const)
		return s->c.dt;
	if (s->widened || s->fp16_typed)
		return OT_FLOAT16;
	return oi_onnx_of_dtype(s->dtype);
}

/* Output 0 of the node, holding sequence @q (taken). */
static int seq_out(struct nctx *c, struct oi_seq *q)
{
	struct sym *o;
	int ret;

	if (!q)
		return oi_nomem(c->im);
	ret = oi_out_sym(c, &o);
	if (ret) {
		oi_seq_free(q);
		return ret;
	}
	o->seq = q;
	return 0;
}

static int seq_in(struct nctx *c, size_t i, struct oi_seq **q)
{
	const struct sym *s = i < c->nin ? c->in[i] : NULL;

	if (!s)
		return oi_fail(c->im, "input %zu (a sequence) is required", i);
	if (!s->seq)
		return oi_fail(c->im, "input %zu ('%s') is a tensor, not a sequence", i, s->name);
	*q = s->seq;
	return 0;
}

static int tensor_in(struct nctx *c, size_t i, struct sym **s)
{
	*s = i < c->nin ? c->in[i] : NULL;
	if (!*s)
		return oi_fail(c->im, "input %zu (a tensor) is required", i);
	if ((*s)->seq)
		return oi_fail(c->im, "input %zu ('%s') is a sequence, not a tensor", i, (*s)->name);
	return 0;
}

/*
 * Integer input @i (int32 or int64, as the spec types positions and
 * splits): a constant, or a graph input whose value the caller gave
 * (npu_onnx_options.values).  *@s is NULL when the input is absent;
 * -EAGAIN (no message) when only a run can tell it.
 */
static int int_in(struct nctx *c, size_t i, const char *what, struct sym **s)
{
	int ret;

	*s = i < c->nin ? c->in[i] : NULL;
	if (!*s)
		return 0;
	if ((*s)->seq)
		return oi_fail(c->im, "the %s ('%s') is a sequence, not a tensor", what, (*s)->name);
	if (!(*s)->is_const) {
		ret = oi_fix_inputs(c, i, i + 1);
		if (ret < 0)
			return ret;
		*s = c->in[i];
	}
	if ((*s)->is_const ? (*s)->c.dt != OT_INT32 && (*s)->c.dt != OT_INT64 :
	    (*s)->dtype != NPU_DTYPE_INT32 && (*s)->dtype != NPU_DTYPE_INT64)
		return oi_fail(c->im, "the %s ('%s') is %s, not int32 or int64", what, (*s)->name,
			       onnx_type_name(tensor_type(*s)));
	return (*s)->is_const ? 0 : -EAGAIN;
}

/*
 * The position input @i, in [-@n, @n - 1] (or [-@n, @n] with @end_ok, an
 * insertion), as an index from the front; @def when absent.
 */
static int position(struct nctx *c, size_t i, size_t n, bool end_ok, size_t def, size_t *pos)
{
	struct sym *s;
	int64_t p, hi = (int64_t)n - (end_ok ? 0 : 1);
	int ret = int_in(c, i, "position", &s);

	if (ret == -EAGAIN)
		return oi_fail(c->im, "the position ('%s') is runtime data: import resolves a sequence into its tensors, so the positions read from it must be constants",
			       s->name);
	if (ret)
		return ret;
	if (!s) {
		*pos = def;
		return 0;
	}
	if (s->c.rank)
		return oi_fail(c->im, "the position ('%s') has rank %u, not a scalar", s->name,
			       s->c.rank);
	p = s->c.i[0];
	if (p < -(int64_t)n || p > hi) {
		if (!n && !end_ok)
			return oi_fail(c->im, "position %" PRId64 " of an empty sequence", p);
		return oi_fail(c->im, "position %" PRId64 " is outside [%" PRId64 ", %" PRId64 "] for a sequence of %zu tensors",
			       p, -(int64_t)n, hi, n);
	}
	*pos = (size_t)(p < 0 ? p + (int64_t)n : p);
	return 0;
}

/*
 * @ret of a node made for this one: a refusal is this node's, saying
 * which of its parts refused what (the made node's name is the importer's).
 */
static int made(struct nctx *c, const char *what, int ret)
{
	struct imp *im = c->im;
	char inner[384];
	const char *r;

	if (ret != -EINVAL || !im->err || !im->err_size)
		return ret;
	/* "node 'NAME' (OP): REASON" */
	r = !strncmp(im->err, "node ", 5) ? strstr(im->err, "): ") : NULL;
	snprintf(inner, sizeof(inner), "%s", r ? r + 3 : im->err);
	im->node = c->n;
	return oi_fail(im, "its %s: %s", what, inner);
}

/*
 * Tensor @k of @q as a symbol: cut from its source when not yet (named
 * @name, "<node>#k/seq_elem" when NULL), and remembered in @q.
 */
static int materialize(struct nctx *c, struct oi_seq *q, size_t k, const char *name,
		       struct sym **out)
{
	struct imp *im = c->im;
	struct oi_seq_elem *e = &q->e[k];
	int64_t start = e->start, end = e->start + e->len, axis = e->axis;
	char *nm = name ? strdup(name) : oi_name_fmt(c->name, k, "seq_elem");
	char *starts = oi_name_fmt(c->name, k, "seq_starts");
	char *ends = oi_name_fmt(c->name, k, "seq_ends");
	char *axes = oi_name_fmt(c->name, k, "seq_axes");
	char *cut = oi_name_fmt(c->name, k, "seq_cut");
	char *shape = oi_name_fmt(c->name, k, "seq_shape");
	int64_t dims[CT_MAX_RANK];
	const char *ins[4];
	uint32_t rank, i;
	int ret = 0;

	if (e->s) {
		*out = e->s;
		goto done;
	}
	if (!nm || !starts || !ends || !axes || !cut || !shape) {
		ret = oi_nomem(im);
		goto done;
	}
	if (e->len < 0) {
		ret = oi_fail(im, "tensor %zu of the sequence has a size only a run can tell (the split sizes '%s' are runtime data)",
			      k, q->runtime_split ? q->runtime_split : "?");
		goto done;
	}
	ret = oi_const_sym(im, starts, &start, 1, false, OT_INT64);
	if (!ret)
		ret = oi_const_sym(im, ends, &end, 1, false, OT_INT64);
	if (!ret)
		ret = oi_const_sym(im, axes, &axis, 1, false, OT_INT64);
	ins[0] = e->src->name;
	ins[1] = starts;
	ins[2] = ends;
	ins[3] = axes;
	if (!ret)
		ret = made(c, "Slice", oi_synth(c, "Slice", ins, 4, e->squeeze ? cut : nm, NULL, 0));
	if (!ret && e->squeeze) {
		/* a Reshape: Squeeze's axes are an attribute before opset 13, an input after */
		oi_model_shape(e->src, &rank, dims);
		for (i = e->axis; i + 1 < rank; i++)
			dims[i] = dims[i + 1];
		ret = oi_const_sym(im, shape, dims, rank - 1, false, OT_INT64);
		ins[0] = cut;
		ins[1] = shape;
		if (!ret)
			ret = made(c, "Reshape", oi_synth(c, "Reshape", ins, 2, nm, NULL, 0));
	}
	if (!ret) {
		e->s = oi_lookup(im, nm);
		*out = e->s;
		if (!e->s)
			ret = oi_fail(im, "tensor %zu of the sequence was not made", k);
	}
done:
	free(nm);
	free(starts);
	free(ends);
	free(axes);
	free(cut);
	free(shape);
	return ret;
}

/* SplitToSequence: the slices of input 0 along axis, one a tensor. */
static int split_to_sequence(struct nctx *c)
{
	struct imp *im = c->im;
	int64_t dims[CT_MAX_RANK], axis = oi_attr_i(c, "axis", 0), d, at = 0, size = 1;
	bool keepdims = oi_attr_i(c, "keepdims", 1) != 0, scalar = false;
	struct sym *x = NULL, *split = NULL;
	struct oi_seq *q = NULL;
	uint32_t rank;
	size_t n, k;
	int ret = tensor_in(c, 0, &x);

	if (ret)
		return ret;
	oi_model_shape(x, &rank, dims);
	if (!rank)
		return oi_fail(im, "input 'input' ('%s') is a scalar: there is no axis to split", x->name);
	if (axis < -(int64_t)rank || axis >= (int64_t)rank)
		return oi_fail(im, "axis %" PRId64 " is outside [%d, %u] for input '%s' of rank %u",
			       axis, -(int)rank, rank - 1, x->name, rank);
	if (axis < 0)
		axis += rank;
	d = dims[axis];
	ret = int_in(c, 1, "split", &split);
	if (ret && ret != -EAGAIN)
		return ret;
	if (split && (split->is_const ? split->c.rank : split->rank) > 1)
		return oi_fail(im, "the split ('%s') has rank %u, not 0 or 1",
			       split->name, split->is_const ? split->c.rank : split->rank);
	if (ret == -EAGAIN) {
		if (!split->rank)
			return oi_fail(im, "the split ('%s') is a runtime scalar: how many tensors the sequence holds only a run can tell",
				       split->name);
		n = split->dims[0];
	} else if (!split) {
		n = (size_t)d;		/* one a tensor, its axis dropped without keepdims */
	} else if (!split->c.rank) {
		scalar = true;
		size = split->c.i[0];
		if (size < 1)
			return oi_fail(im, "the split ('%s') is %" PRId64 ": a size must be positive",
				       split->name, size);
		n = (size_t)(d / size + (d % size != 0));
	} else {
		n = (size_t)split->c.n;
	}
	if (n > MAX_SEQ_LEN)
		return oi_fail(im, "the sequence would hold %zu tensors, above the %u import resolves",
			       n, MAX_SEQ_LEN);
	for (k = 0; ret != -EAGAIN && split && !scalar && k < n; k++) {
		if (split->c.i[k] < 0)
			return oi_fail(im, "split size %zu is %" PRId64 ": sizes cannot be negative", k,
				       split->c.i[k]);
		if (__builtin_add_overflow(at, split->c.i[k], &at) || at > d)
			return oi_fail(im, "the split sizes add up to more than dimension %" PRId64 " (%" PRId64 ") of input '%s'",
				       axis, d, x->name);
	}
	if (ret != -EAGAIN && split && !scalar && at != d)
		return oi_fail(im, "the split sizes add up to %" PRId64 ", not dimension %" PRId64 " (%" PRId64 ") of input '%s'",
			       at, axis, d, x->name);
	q = seq_new(tensor_type(x), n);
	if (!q)
		return oi_nomem(im);
	if (ret == -EAGAIN)
		q->runtime_split = split->name;
	for (k = 0, at = 0; k < n; k++) {
		struct oi_seq_elem *e = &q->e[k];

		e->src = x;
		e->axis = (uint32_t)axis;
		e->start = at;
		if (ret == -EAGAIN)
			e->len = -1;
		else if (!split)
			e->len = 1;
		else if (scalar)
			e->len = d - at < size ? d - at : size;
		else
			e->len = split->c.i[k];
		e->squeeze = !split && !keepdims;
		if (e->len > 0)
			at += e->len;
	}
	return seq_out(c, q);
}

/*
 * ConcatFromSequence: its tensors concatenated, or stacked with new_axis.
 * The slices it cuts are remembered in the input's sequence: the same
 * tensors, whoever reads them next.
 */
static int concat_from_sequence(struct nctx *c)
{
	const Onnx__AttributeProto *a = oi_attr(c, "axis");
	bool new_axis = oi_attr_i(c, "new_axis", 0) != 0;
	struct oi_seq *q = NULL;
	char **names;
	size_t k;
	int ret = seq_in(c, 0, &q);

	if (ret)
		return ret;
	if (!a || !a->has_i)
		return oi_fail(c->im, "the axis attribute is required");
	if (!q->n)
		return oi_fail(c->im, "the sequence is empty: there is no tensor to concatenate");
	names = calloc(q->n, sizeof(*names));
	if (!names)
		return oi_nomem(c->im);
	for (k = 0; k < q->n && !ret; k++) {
		struct sym *s;

		ret = materialize(c, q, k, NULL, &s);
		if (!ret && !(names[k] = strdup(s->name)))
			ret = oi_nomem(c->im);
	}
	if (!ret)
		ret = made(c, new_axis ? "stack" : "Concat",
			   oi_stack(c, names, q->n, a->i, new_axis, c->n->output[0]));
	for (k = 0; k < q->n; k++)
		free(names[k]);
	free(names);
	return ret;
}

static int sequence_empty(struct nctx *c)
{
	int64_t dt = oi_attr_i(c, "dtype", OT_FLOAT);

	if (dt < 0 || dt > INT32_MAX || !onnx_npu_dtype((int)dt))
		return oi_fail(c->im, "dtype %" PRId64 " (%s) is not a tensor type libnpu holds", dt,
			       onnx_type_name(dt < 0 || dt > INT32_MAX ? 0 : (int)dt));
	return seq_out(c, seq_new((int)dt, 0));
}

static int sequence_construct(struct nctx *c)
{
	struct oi_seq *q = NULL;
	struct sym *s, *first = NULL;
	size_t k;
	int ret;

	if (!c->nin)
		return oi_fail(c->im, "no inputs: a SequenceConstruct takes at least one tensor");
	if (c->nin > MAX_SEQ_LEN)
		return oi_fail(c->im, "%zu tensors, above the %u import resolves", c->nin, MAX_SEQ_LEN);
	for (k = 0; k < c->nin; k++) {
		ret = tensor_in(c, k, &s);
		if (ret)
			return ret;
		if (!first)
			first = s;
		else if (tensor_type(s) != tensor_type(first))
			return oi_fail(c->im, "input %zu ('%s') is %s, input 0 ('%s') %s: a sequence's tensors have one type",
				       k, s->name, onnx_type_name(tensor_type(s)), first->name,
				       onnx_type_name(tensor_type(first)));
	}
	q = seq_new(tensor_type(first), c->nin);
	for (k = 0; q && k < c->nin; k++)
		q->e[k].s = c->in[k];
	return seq_out(c, q);
}

static int sequence_insert(struct nctx *c)
{
	struct oi_seq *src = NULL, *q;
	struct sym *t;
	size_t pos;
	int ret = seq_in(c, 0, &src);

	if (!ret)
		ret = tensor_in(c, 1, &t);
	if (ret)
		return ret;
	if (tensor_type(t) != src->elem_type)
		return oi_fail(c->im, "the tensor '%s' is %s, the sequence's tensors %s",
			       t->name, onnx_type_name(tensor_type(t)), onnx_type_name(src->elem_type));
	if (src->n >= MAX_SEQ_LEN)
		return oi_fail(c->im, "the sequence would hold more than the %u tensors import resolves",
			       MAX_SEQ_LEN);
	ret = position(c, 2, src->n, true, src->n, &pos);
	if (ret)
		return ret;
	q = seq_new(src->elem_type, src->n + 1);
	if (!q)
		return oi_nomem(c->im);
	q->runtime_split = src->runtime_split;
	memcpy(q->e, src->e, pos * sizeof(*q->e));
	q->e[pos].s = t;
	memcpy(q->e + pos + 1, src->e + pos, (src->n - pos) * sizeof(*q->e));
	return seq_out(c, q);
}

static int sequence_erase(struct nctx *c)
{
	struct oi_seq *src = NULL, *q;
	size_t pos;
	int ret = seq_in(c, 0, &src);

	if (ret)
		return ret;
	if (!src->n)
		return oi_fail(c->im, "the sequence is empty: there is no tensor to erase");
	ret = position(c, 1, src->n, false, src->n - 1, &pos);
	if (ret)
		return ret;
	q = seq_new(src->elem_type, src->n - 1);
	if (!q)
		return oi_nomem(c->im);
	q->runtime_split = src->runtime_split;
	memcpy(q->e, src->e, pos * sizeof(*q->e));
	memcpy(q->e + pos, src->e + pos + 1, (src->n - pos - 1) * sizeof(*q->e));
	return seq_out(c, q);
}

/* SequenceAt: the tensor itself, cut into the output, or an Identity of it. */
static int sequence_at(struct nctx *c)
{
	struct oi_seq *q = NULL;
	struct sym *s;
	const char *in;
	size_t pos;
	int ret = seq_in(c, 0, &q);

	if (!ret && (c->nin < 2 || !c->in[1]))
		ret = oi_fail(c->im, "input 1 (the position) is required");
	if (!ret)
		ret = position(c, 1, q->n, false, 0, &pos);
	if (ret)
		return ret;
	if (!q->e[pos].s)
		return materialize(c, q, pos, c->n->output[0], &s);
	in = q->e[pos].s->name;
	return made(c, "Identity", oi_synth(c, "Identity", &in, 1, c->n->output[0], NULL, 0));
}

static int sequence_length(struct nctx *c)
{
	struct oi_seq *q = NULL;
	int64_t n;
	int ret = seq_in(c, 0, &q);

	if (ret)
		return ret;
	n = (int64_t)q->n;
	return oi_const_sym(c->im, c->n->output[0], &n, 1, true, OT_INT64);
}

static const struct {
	const char *op;
	int (*fn)(struct nctx *c);
} seq_ops[] = {
	{ "ConcatFromSequence", concat_from_sequence },
	{ "SequenceAt", sequence_at },
	{ "SequenceConstruct", sequence_construct },
	{ "SequenceEmpty", sequence_empty },
	{ "SequenceErase", sequence_erase },
	{ "SequenceInsert", sequence_insert },
	{ "SequenceLength", sequence_length },
	{ "SplitToSequence", split_to_sequence },
};

int oi_op_sequence(struct nctx *c)
{
	const char *t = c->n->op_type ? c->n->op_type : "";
	size_t i;

	if (!c->n->n_output || !c->n->output[0] || !*c->n->output[0])
		return oi_fail(c->im, "no output");
	for (i = 0; i < sizeof(seq_ops) / sizeof(seq_ops[0]); i++)
		if (!strcmp(t, seq_ops[i].op))
			return seq_ops[i].fn(c);
	return oi_fail(c->im, "not a sequence op");
}
