// SPDX-License-Identifier: MIT
/*
 * Pad for every dtype, in its modes constant, reflect, edge and wrap;
 * negative pads crop.  Each output axis gets a table of the input index
 * it reads (or -1: the constant), so the copy itself is runs of memcpy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_index.h"

struct pad_plan {
	int64_t begin[NPU_TENSOR_MAX_RANK], end[NPU_TENSOR_MAX_RANK];
	uint64_t dims[NPU_TENSOR_MAX_RANK];
};

static int pad_plan(const struct ok_pad_state *st, size_t ni,
		    const struct npu_kernel_tensor *const *in, struct pad_plan *p, char *err,
		    size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	int64_t pads[2 * NPU_TENSOR_MAX_RANK], axes[NPU_TENSOR_MAX_RANK];
	bool seen[NPU_TENSOR_MAX_RANK] = { false };
	size_t np, na = x->rank, k;
	uint32_t d;
	int e;

	if (st->from_inputs) {
		if (ni < 2 || !in[1])
			return ok_fail(err, err_size, "the pads input is required");
		e = ok_read_ints(in[1], pads, 2 * NPU_TENSOR_MAX_RANK, &np,
				 "pads (the output's shape depends on it)", err, err_size);
		if (e)
			return e;
		if (ni > 3 && in[3]) {
			e = ok_read_ints(in[3], axes, NPU_TENSOR_MAX_RANK, &na,
					 "axes (the output's shape depends on it)", err, err_size);
			if (e)
				return e;
		}
	} else {
		np = st->num_pads;
		memcpy(pads, st->pads, sizeof(pads));
	}
	if (ni <= 3 || !in[3] || !st->from_inputs)
		for (k = 0; k < x->rank; k++)
			axes[k] = (int64_t)k;
	if (np != 2 * na)
		return ok_fail(err, err_size, "pads has %zu values, %zu were expected (2 per axis)",
			       np, 2 * na);
	for (d = 0; d < x->rank; d++) {
		p->begin[d] = 0;
		p->end[d] = 0;
	}
	for (k = 0; k < na; k++) {
		uint32_t axis;

		e = ok_axis(axes[k], x->rank, &axis, "an axis", err, err_size);
		if (e)
			return e;
		if (seen[axis])
			return ok_fail(err, err_size, "axis %u is padded twice", axis);
		seen[axis] = true;
		p->begin[axis] = pads[k];
		p->end[axis] = pads[k + na];
	}
	for (d = 0; d < x->rank; d++) {
		int64_t b = p->begin[d], en = p->end[d], n = x->dims[d];

		if (b > UINT32_MAX || en > UINT32_MAX || b < -n || en < -n || n + b + en < 1)
			return ok_fail(err, err_size,
				       "pads %lld and %lld of axis %u (length %lld) leave no output, or too much",
				       (long long)b, (long long)en, d, (long long)n);
		p->dims[d] = (uint64_t)(n + b + en);
	}
	return 0;
}

static int pad_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out, char *err,
		     size_t err_size)
{
	struct pad_plan p;
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	e = pad_plan(state, ni, in, &p, err, err_size);
	if (e)
		return e;
	if (ni > 2 && in[2] && in[2]->dtype != in[0]->dtype)
		return ok_fail(err, err_size, "constant_value is %s, the data %s",
			       ok_dtype_name(in[2]->dtype), ok_dtype_name(in[0]->dtype));
	if (ni > 2 && in[2] && in[2]->elems != 1)
		return ok_fail(err, err_size, "constant_value must be one value, not %llu",
			       (unsigned long long)in[2]->elems);
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape64(out[0], in[0]->rank, p.dims, "the output", err, err_size);
}

/* The input index output index @o of an axis of length @n reads, or -1. */
static int64_t source_index(enum ok_pad_mode mode, int64_t o, int64_t begin, int64_t n)
{
	int64_t i = o - begin, period;

	if (i >= 0 && i < n)
		return i;
	switch (mode) {
	case OK_PAD_CONSTANT:
		return -1;
	case OK_PAD_EDGE:
		return i < 0 ? 0 : n - 1;
	case OK_PAD_WRAP:
		return ((i % n) + n) % n;
	case OK_PAD_REFLECT:
		if (n == 1)
			return 0;
		period = 2 * (n - 1);
		i = ((i % period) + period) % period;
		return i < n ? i : period - i;
	}
	return -1;
}

static int pad_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		   size_t no, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	const struct ok_pad_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	size_t esz = npu_dtype_size(x->dtype);
	uint64_t s[NPU_TENSOR_MAX_RANK], idx[NPU_TENSOR_MAX_RANK] = { 0 }, total = 0, pending = 0;
	int64_t *map[NPU_TENSOR_MAX_RANK], *tables;
	unsigned char value[16] = { 0 };
	uint32_t rank = x->rank, d, last;
	const char *src = x->data;
	char *dst = out[0]->data, err[160];
	struct pad_plan p;
	int e;

	(void)no;
	e = pad_plan(st, ni, in, &p, err, sizeof(err));
	if (e)
		return npu_kernel_fail(call, e, "%s", err);
	if (ni > 2 && in[2]) {
		memcpy(value, in[2]->data, esz);
	} else if (!st->from_inputs && st->value != 0) {
		struct npu_kernel_tensor v = { .dtype = x->dtype, .data = value };

		ok_set_f(&v, 0, st->value);
	}
	if (!rank) {
		memcpy(dst, src, esz);
		return 0;
	}
	for (d = 0; d < rank; d++)
		total += p.dims[d];
	tables = malloc(total * sizeof(*tables));
	if (!tables)
		return npu_kernel_fail(call, -ENOMEM, "no memory for the pad tables");
	total = 0;
	for (d = 0; d < rank; d++) {
		uint64_t o;

		map[d] = tables + total;
		for (o = 0; o < p.dims[d]; o++)
			map[d][o] = source_index(st->mode, (int64_t)o, p.begin[d], x->dims[d]);
		total += p.dims[d];
	}
	ok_strides(x, s);
	last = rank - 1;
	for (;;) {
		uint64_t n = p.dims[last], o = 0, base = 0;
		bool constant = false;

		for (d = 0; d < last; d++) {
			if (map[d][idx[d]] < 0)
				constant = true;
			else
				base += (uint64_t)map[d][idx[d]] * s[d];
		}
		while (o < n) {
			int64_t m = constant ? -1 : map[last][o];
			uint64_t run = 1;

			if (m < 0) {
				memcpy(dst, value, esz);
			} else {
				/* A run of consecutive input elements is one memcpy. */
				while (o + run < n && map[last][o + run] == m + (int64_t)run)
					run++;
				memcpy(dst, src + (base + (uint64_t)m) * esz, run * esz);
			}
			dst += run * esz;
			o += run;
			e = ok_tick(call, &pending, run);
			if (e)
				goto out;
		}
		for (d = last; d-- > 0;) {
			if (++idx[d] < p.dims[d])
				break;
			idx[d] = 0;
		}
		if (d == UINT32_MAX)
			break;
	}
out:
	free(tables);
	return e;
}

static int pad_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
		      size_t err_size)
{
	static const char *const modes[] = { "constant", "reflect", "edge", "wrap" };
	struct ok_pad_state attrs = { 0 }, *st;
	char mode[16] = "constant";
	const int64_t *pads;
	size_t np, k;
	int r;

	(void)opaque;
	r = npu_onnx_attr_string(n, "mode", mode, sizeof(mode));
	if (r && r != -ENOENT)
		return ok_fail(err, err_size, "mode is not one of constant, reflect, edge and wrap");
	for (k = 0; k < 4; k++)
		if (!strcmp(mode, modes[k]))
			break;
	/* wrap is opset 19's */
	if (k == 4 || (k == OK_PAD_WRAP && npu_onnx_node_opset(n) < 19))
		return ok_fail(err, err_size, "mode \"%s\" is not one of constant, reflect and edge%s",
			       mode, npu_onnx_node_opset(n) >= 19 ? " and wrap" : "");
	attrs.mode = (enum ok_pad_mode)k;
	if (npu_onnx_node_opset(n) >= 11) {
		attrs.from_inputs = true;
	} else {
		/* Pad-1 named them paddings */
		if (npu_onnx_attr_ints(n, "pads", &pads, &np) &&
		    npu_onnx_attr_ints(n, "paddings", &pads, &np))
			return ok_fail(err, err_size, "the pads attribute is required");
		if (np > 2 * NPU_TENSOR_MAX_RANK)
			return ok_fail(err, err_size, "pads has %zu values, at most %d are supported",
				       np, 2 * NPU_TENSOR_MAX_RANK);
		attrs.num_pads = (uint32_t)np;
		memcpy(attrs.pads, pads, np * sizeof(*pads));
		attrs.value = ok_attr_f(n, "value", 0.0f);
	}
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	*st = attrs;
	*state = st;
	return 0;
}

static const struct npu_kernel pad_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Pad",
	.infer = pad_infer,
	.run = pad_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_pad = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Pad",
	.since_version = 1,
	.kernel = &pad_kernel,
	.create = pad_create,
};
