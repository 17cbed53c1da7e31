// SPDX-License-Identifier: MIT
/*
 * Nodes the importer makes itself and imports like the model's own: an
 * unrolled Loop's Gathers and stacks (onnx_loop.c), a predicated If's
 * Wheres (onnx_control.c), a sequence's Slices and Concats (onnx_seq.c).
 * Going through oi_import_node() gives them every lowering, kernel, rank
 * and float16 rule a model's node gets, so what they compute lands on
 * the device where it can.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

/* Inputs per Concat a stack is built of (the importer's node limit). */
#define STACK_FANIN	64u

char *oi_name_fmt(const char *tag, size_t k, const char *name)
{
	size_t len = strlen(tag) + strlen(name) + 32;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s#%zu/%s", tag, k, name);
	return s;
}

char *oi_name_fmt_i(const char *tag, size_t k, const char *what, size_t i)
{
	char w[48];

	snprintf(w, sizeof(w), "%s%zu", what, i);
	return oi_name_fmt(tag, k, w);
}

int oi_const_sym(struct imp *im, const char *name, const int64_t *v, size_t n, bool scalar,
		 int dt)
{
	struct sym *s;
	int ret = oi_add_sym(im, name, &s);

	if (ret)
		return ret;
	ret = scalar ? ctensor_scalar_i(v[0], &s->c) : ctensor_vec_i(v, n, &s->c);
	if (ret)
		return oi_nomem(im);
	s->c.dt = dt;
	s->is_const = true;
	return 0;
}

int oi_synth(struct nctx *c, const char *op, const char *const *ins, size_t nin,
	     const char *out, const char *attr, int64_t attr_v)
{
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = { &a };
	char *outs[1] = { (char *)out };
	int ret;

	n.op_type = (char *)op;
	n.name = (char *)out;
	n.input = (char **)ins;
	n.n_input = nin;
	n.output = outs;
	n.n_output = 1;
	if (attr) {
		a.name = (char *)attr;
		a.has_type = true;
		a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a.has_i = true;
		a.i = attr_v;
		n.attribute = attrs;
		n.n_attribute = 1;
	}
	ret = oi_import_node(c->im, &n, c->opset);
	c->im->node = c->n;
	return ret;
}

int oi_shape_of(struct imp *im, const char *name, uint32_t *rank, int64_t *dims)
{
	const struct sym *s = oi_lookup(im, name);

	if (!s)
		return oi_fail(im, "'%s' is not computed by any node", name);
	if (s->seq)
		return oi_fail(im, "'%s' is a sequence, not a tensor", name);
	oi_model_shape(s, rank, dims);
	return 0;
}

int oi_stack(struct nctx *c, char *const *names, size_t count, int64_t axis, bool new_axis,
	     const char *out)
{
	struct imp *im = c->im;
	char **level = calloc(count ? count : 1, sizeof(*level));
	size_t i, j, n = count, round = 0;
	int ret = 0;

	if (!level)
		return oi_nomem(im);
	if (!count)
		ret = oi_fail(im, "nothing to concatenate");
	/* each value reshaped with its new axis of 1; a Concat takes them as they are */
	for (i = 0; i < count && !ret; i++) {
		int64_t dims[CT_MAX_RANK], shape[CT_MAX_RANK + 1];
		int64_t at = axis;
		const char *ins[2];
		uint32_t rank, k;
		char *shape_name;

		ret = oi_shape_of(im, names[i], &rank, dims);
		if (ret)
			break;
		if (!new_axis) {
			if (at < -(int64_t)rank || at >= (int64_t)rank) {
				ret = oi_fail(im, "axis %" PRId64 " is outside [%d, %u] for rank-%u tensors",
					      axis, -(int)rank, rank ? rank - 1 : 0, rank);
				break;
			}
			level[i] = strdup(count == 1 ? out : names[i]);
			if (!level[i])
				ret = oi_nomem(im);
			else if (count == 1)
				ret = oi_synth(c, "Identity", (const char *const *)&names[i], 1, out,
					       NULL, 0);
			continue;
		}
		if (at < 0)
			at += rank + 1;
		if (at < 0 || at > rank || rank >= NPU_TENSOR_MAX_RANK) {
			ret = oi_fail(im, "stacking rank-%u values along axis %" PRId64 " is not supported",
				      rank, axis);
			break;
		}
		for (k = 0, j = 0; k <= rank; k++)
			shape[k] = k == at ? 1 : dims[j++];
		axis = at;
		shape_name = oi_name_fmt(out, i, "stack_shape");
		level[i] = count == 1 ? strdup(out) : oi_name_fmt(out, i, "stack_in");
		ret = shape_name && level[i] ?
		      oi_const_sym(im, shape_name, shape, rank + 1, false, OT_INT64) : oi_nomem(im);
		ins[0] = names[i];
		ins[1] = shape_name;
		if (!ret)
			ret = oi_synth(c, "Reshape", ins, 2, level[i], NULL, 0);
		free(shape_name);
	}
	/* then Concats of at most STACK_FANIN inputs, level by level */
	while (!ret && n > 1) {
		size_t groups = (n + STACK_FANIN - 1) / STACK_FANIN;

		round++;
		for (i = 0; i < groups && !ret; i++) {
			size_t first = i * STACK_FANIN, m = n - first < STACK_FANIN ? n - first : STACK_FANIN;
			char *name = groups == 1 ? strdup(out) : oi_name_fmt_i(out, round, "stack", i);

			ret = name ? oi_synth(c, "Concat", (const char *const *)&level[first], m, name,
					      "axis", axis) : oi_nomem(im);
			for (j = first; j < first + m; j++) {
				free(level[j]);
				level[j] = NULL;
			}
			level[i] = name;
		}
		n = groups;
	}
	for (i = 0; i < count; i++)
		free(level[i]);
	free(level);
	return ret;
}
