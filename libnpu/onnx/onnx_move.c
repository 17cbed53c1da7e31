// SPDX-License-Identifier: MIT
/*
 * ONNX data movement into graph nodes: Transpose, Concat and Slice with
 * steps (their own node kinds), Slice, Split, Pad, Expand, Tile and Cast
 * (one COPY node each), DepthToSpace and SpaceToDepth (a TRANSPOSE
 * between two RESHAPEs) and Resize (RESIZE over NCHW).  Each handler
 * infers the
 * output shape from constant attributes and inputs; anything only known
 * at run time is refused with the reason.  Shape arithmetic on constants
 * (Concat, Slice, Cast of int64 tensors) never gets here: onnx_meta.c
 * evaluates it at import.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

#define MAX_R	NPU_TENSOR_MAX_RANK

/*
 * Constant integer input @i into @v (at most @max values): *@n is their
 * count, -1 when the input is absent or empty (ONNX's way of leaving an
 * optional input out).
 */
static int const_ints(struct nctx *c, size_t i, const char *what, int64_t *v,
		      size_t max, int *n)
{
	const struct sym *s = i < c->nin ? c->in[i] : NULL;
	uint64_t k;

	*n = -1;
	if (!s || (s->is_const && !s->c.n))
		return 0;
	if (!s->is_const || ct_is_float(&s->c) || s->c.rank > 1)
		return oi_fail(c->im, "%s must be a constant 1-D integer tensor", what);
	if (s->c.n > max)
		return oi_fail(c->im, "%s has %" PRIu64 " values, at most %zu are supported", what,
			       s->c.n, max);
	for (k = 0; k < s->c.n; k++)
		v[k] = s->c.i[k];
	*n = (int)s->c.n;
	return 0;
}

/* Constant float input @i (absent or empty: *@n = -1). */
static int const_floats(struct nctx *c, size_t i, const char *what, double *v,
			size_t max, int *n)
{
	const struct sym *s = i < c->nin ? c->in[i] : NULL;
	uint64_t k;

	*n = -1;
	if (!s || (s->is_const && !s->c.n))
		return 0;
	if (!s->is_const || s->c.rank > 1)
		return oi_fail(c->im, "%s must be a constant 1-D tensor", what);
	if (s->c.n > max)
		return oi_fail(c->im, "%s has %" PRIu64 " values, at most %zu are supported", what,
			       s->c.n, max);
	for (k = 0; k < s->c.n; k++)
		v[k] = ctensor_get(&s->c, k);
	*n = (int)s->c.n;
	return 0;
}

static int norm_axis(struct nctx *c, int64_t a, uint32_t rank, uint32_t *out)
{
	if (a < -(int64_t)rank || a >= (int64_t)rank)
		return oi_fail(c->im, "axis %" PRId64 " out of range for rank %u", a, rank);
	*out = (uint32_t)(a < 0 ? a + rank : a);
	return 0;
}

/* X as a runtime or static graph value with its shape and dtype. */
static int input_x(struct nctx *c, size_t i, uint32_t *id, uint32_t *r,
		   uint32_t *dims, enum npu_dtype *dt)
{
	struct sym *x = NULL;
	int ret = oi_need_in(c, i, &x);

	if (!ret)
		ret = oi_sym_shape(c, x, r, dims);
	if (!ret)
		ret = oi_value_of(c->im, x, id);
	if (ret)
		return ret;
	*dt = oi_sym_dtype(x);
	if (!*dt)
		return oi_fail(c->im, "input %zu's element type has no device dtype", i);
	if (*r > MAX_R)
		return oi_fail(c->im, "rank %u above %d", *r, MAX_R);
	return 0;
}

/* One COPY node from @in into the node's output. */
static int emit_copy(struct nctx *c, const struct npu_op_params *p, uint32_t in,
		     enum npu_dtype dt, uint32_t r, const uint32_t *dims)
{
	struct oi_node d = { .kind = NPU_NODE_OP, .op = *p };

	d.op.kind = NPU_OP_COPY;
	return oi_emit(c, &d, &in, 1, dt, r ? r : 1, r ? dims : (const uint32_t[]){ 1 });
}

/* A scalar (rank 0) value is moved as one element of rank 1. */
static int rank1(struct nctx *c, uint32_t *in, enum npu_dtype dt, uint32_t *r,
		 uint32_t *dims)
{
	if (*r)
		return 0;
	*r = 1;
	dims[0] = 1;
	return oi_reshape_tmp(c, *in, dt, 1, dims, in);
}

int oi_op_transpose(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_TRANSPOSE };
	uint32_t in, r, xd[8], yd[MAX_R], i, seen = 0;
	enum npu_dtype dt;
	int64_t perm[8];
	int ret = input_x(c, 0, &in, &r, xd, &dt), n;

	if (ret)
		return ret;
	n = oi_attr_ints(c, "perm", perm, 8);
	if (n < 0) {
		for (i = 0; i < r; i++)
			perm[i] = r - 1 - i;
	} else if (n != (int)r) {
		return oi_fail(c->im, "perm has %d values for rank %u", n, r);
	}
	for (i = 0; i < r; i++) {
		if (perm[i] < 0 || perm[i] >= r || (seen & (1u << perm[i])))
			return oi_fail(c->im, "perm is no permutation of 0..%u", r - 1);
		seen |= 1u << perm[i];
		d.transpose.perm[i] = (uint32_t)perm[i];
		yd[i] = xd[perm[i]];
	}
	if (r < 2)	/* nothing moves */
		d.kind = NPU_NODE_RESHAPE;
	return oi_emit(c, &d, &in, 1, dt, r, yd);
}

/* Inputs one graph node takes (npu_node_desc.num_inputs, graph.h). */
#define NODE_MAX_INPUTS	8u

int oi_op_concat(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_CONCAT };
	uint32_t in[NPU_KERNEL_MAX_INPUTS], len[NPU_KERNEL_MAX_INPUTS];
	uint32_t r = 0, yd[8], xd[8], ri, k, i, axis = 0, nin = 0;
	enum npu_dtype dt = 0, dti;
	uint64_t sum = 0;
	int ret;

	if (!c->nin)
		return oi_fail(c->im, "no inputs");
	for (k = 0; k < c->nin; k++) {
		/*
		 * An empty part adds nothing; its rank and other dimensions
		 * are not checked, as onnxruntime does not.
		 */
		if (oi_is_empty_const(c->in[k]))
			continue;
		ret = input_x(c, k, &in[nin], &ri, xd, &dti);
		if (ret)
			return ret;
		if (!nin) {
			r = ri;
			dt = dti;
			memcpy(yd, xd, sizeof(yd));
			if (!r)
				return oi_fail(c->im, "scalar inputs");
			ret = norm_axis(c, oi_attr_i(c, "axis", 0), r, &axis);
			if (ret)
				return ret;
		}
		if (ri != r || dti != dt)
			return oi_fail(c->im, "input %u's rank or element type differs from input 0's", k);
		for (i = 0; i < r; i++)
			if (i != axis && xd[i] != yd[i])
				return oi_fail(c->im, "input %u's dim %u is %u, input 0's %u", k, i,
					       xd[i], yd[i]);
		sum += xd[axis];
		len[nin++] = xd[axis];
	}
	if (!nin)	/* every part empty: the kernel makes the empty result */
		return oi_fail(c->im, "every input is empty");
	if (sum > INT32_MAX)
		return oi_fail(c->im, "the output's dim %u would be %" PRIu64, axis, sum);
	d.name = c->name;
	d.concat.axis = axis;
	/* more inputs than a node takes: concatenated in groups first */
	while (nin > NODE_MAX_INPUTS) {
		uint32_t groups = (nin + NODE_MAX_INPUTS - 1) / NODE_MAX_INPUTS, g;

		for (g = 0; g < groups; g++) {
			uint32_t first = g * NODE_MAX_INPUTS, m = nin - first, part = 0;

			m = m < NODE_MAX_INPUTS ? m : NODE_MAX_INPUTS;
			for (k = first; k < first + m; k++)
				part += len[k];
			yd[axis] = part;
			ret = oi_tmp_value(c->im, dt, r, yd, &d.output);
			if (ret)
				return ret;
			d.inputs = &in[first];
			d.num_inputs = m;
			ret = oi_add_node(c->im, &d);
			if (ret)
				return ret;
			in[g] = d.output;
			len[g] = part;
		}
		nin = groups;
	}
	yd[axis] = (uint32_t)sum;
	if (nin == 1)
		d.kind = NPU_NODE_RESHAPE;
	return oi_emit(c, &d, in, nin, dt, r, yd);
}

/* ONNX Slice's clamped first index and element count for one axis. */
static void slice_axis(int64_t start, int64_t end, int64_t step, uint32_t dim,
		       int64_t *first, uint64_t *count)
{
	int64_t n = dim;

	if (start < 0)
		start += n;
	if (end < 0)
		end += n;
	if (step > 0) {
		start = start < 0 ? 0 : start > n ? n : start;
		end = end < 0 ? 0 : end > n ? n : end;
		*count = end > start ? (uint64_t)((end - start + step - 1) / step) : 0;
	} else {
		start = start < 0 ? 0 : start > n - 1 ? n - 1 : start;
		end = end < -1 ? -1 : end > n - 1 ? n - 1 : end;
		*count = start > end ? (uint64_t)((start - end - step - 1) / -step) : 0;
	}
	*first = start;
}

static int64_t clamp32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < -(int64_t)INT32_MAX ? -(int64_t)INT32_MAX : v;
}

int oi_op_slice(struct nctx *c)
{
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	struct oi_node sl = { .kind = NPU_NODE_SLICE };
	bool unit = true;
	int64_t st[8], en[8], ax[8], sp[8], first;
	uint32_t in, r, xd[8], yd[8], i, a = 0, done = 0;
	enum npu_dtype dt;
	uint64_t cnt;
	int ret = input_x(c, 0, &in, &r, xd, &dt), n, ne, na, ns;

	if (ret)
		return ret;
	if (!r)
		return oi_fail(c->im, "a scalar input");
	if (c->opset < 10) {
		n = oi_attr_ints(c, "starts", st, 8);
		ne = oi_attr_ints(c, "ends", en, 8);
		na = oi_attr_ints(c, "axes", ax, 8);
		ns = -1;
	} else {
		ret = const_ints(c, 1, "starts", st, 8, &n);
		if (!ret)
			ret = const_ints(c, 2, "ends", en, 8, &ne);
		if (!ret)
			ret = const_ints(c, 3, "axes", ax, 8, &na);
		if (!ret)
			ret = const_ints(c, 4, "steps", sp, 8, &ns);
		if (ret)
			return ret;
	}
	if (n < 0 || ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
		return oi_fail(c->im, "starts, ends, axes and steps must be given and agree in length");
	memcpy(yd, xd, sizeof(yd));
	for (i = 0; i < r; i++)
		sl.slice.step[i] = 1;
	for (i = 0; i < (uint32_t)n; i++) {
		int64_t step = ns >= 0 ? sp[i] : 1;

		ret = norm_axis(c, na >= 0 ? ax[i] : i, r, &a);
		if (ret)
			return ret;
		if (done & (1u << a))
			return oi_fail(c->im, "axis %u is sliced twice", a);
		done |= 1u << a;
		if (!step || step < -(int64_t)INT32_MAX || step > INT32_MAX)
			return oi_fail(c->im, "bad step %" PRId64 " of axis %u", step, a);
		slice_axis(clamp32(st[i]), clamp32(en[i]), step, xd[a], &first, &cnt);
		if (!cnt)
			return oi_fail(c->im, "the slice of axis %u is empty", a);
		yd[a] = (uint32_t)cnt;
		/* unit steps: X[first] lands at output 0, a crop */
		p.copy.offset[a] = (int32_t)-first;
		sl.slice.start[a] = (uint32_t)first;
		sl.slice.step[a] = (int32_t)step;
		unit &= step == 1;
	}
	if (!unit)
		return oi_emit(c, &sl, &in, 1, dt, r, yd);
	return emit_copy(c, &p, in, dt, r, yd);
}

int oi_op_split(struct nctx *c)
{
	struct oi_node d = { .kind = NPU_NODE_OP };
	uint32_t in, r, xd[8], yd[8], axis = 0;
	int64_t split[64];
	enum npu_dtype dt;
	uint64_t at = 0, k, nout = c->n->n_output;
	int ret = input_x(c, 0, &in, &r, xd, &dt), n;

	if (ret)
		return ret;
	if (!r)
		return oi_fail(c->im, "a scalar input");
	ret = norm_axis(c, oi_attr_i(c, "axis", 0), r, &axis);
	if (ret)
		return ret;
	if (!nout || nout > 64)
		return oi_fail(c->im, "%" PRIu64 " outputs, 1 to 64 are supported", nout);
	if (c->opset < 13) {
		n = oi_attr_ints(c, "split", split, 64);
		if (n == -2)
			return oi_fail(c->im, "too many split values");
	} else {
		ret = const_ints(c, 1, "split", split, 64, &n);
		if (ret)
			return ret;
	}
	if (n < 0) {
		if (xd[axis] % nout)
			return oi_fail(c->im, "dim %u (%u) does not split into %" PRIu64 " equal parts",
				       axis, xd[axis], nout);
		for (k = 0; k < nout; k++)
			split[k] = xd[axis] / nout;
	} else if ((uint64_t)n != nout) {
		return oi_fail(c->im, "%d split sizes for %" PRIu64 " outputs", n, nout);
	}
	for (k = 0; k < nout; k++) {
		if (split[k] < 1 || (uint64_t)split[k] > xd[axis] - at)
			return oi_fail(c->im, "split size %" PRId64 " of output %" PRIu64 " does not fit",
				       split[k], k);
		at += (uint64_t)split[k];
	}
	if (at != xd[axis])
		return oi_fail(c->im, "the split sizes add up to %" PRIu64 ", not %u", at, xd[axis]);
	memcpy(yd, xd, sizeof(yd));
	d.op.kind = NPU_OP_COPY;
	d.name = c->name;
	d.inputs = &in;
	d.num_inputs = 1;
	for (k = 0, at = 0; k < nout; k++) {
		const char *name = c->n->output[k];
		struct sym *o;

		yd[axis] = (uint32_t)split[k];
		d.op.copy.offset[axis] = -(int32_t)at;
		at += (uint64_t)split[k];
		if (!name || !*name)
			continue;
		ret = oi_add_sym(c->im, name, &o);
		if (!ret)
			ret = oi_new_value(c->im, o, dt, r, yd);
		if (ret)
			return ret;
		d.output = o->value;
		ret = oi_add_node(c->im, &d);
		if (ret)
			return ret;
	}
	return 0;
}

int oi_op_pad(struct nctx *c)
{
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	uint32_t in, r, xd[8], yd[8], i;
	int64_t pads[16], axes[8], full[16] = { 0 };
	double value[1] = { 0.0 };
	char mode[16] = "constant";
	enum npu_dtype dt;
	int ret = input_x(c, 0, &in, &r, xd, &dt), n, na = -1, nv = -1;

	if (ret)
		return ret;
	if (!r)
		return oi_fail(c->im, "a scalar input");
	oi_attr_s(c, "mode", mode, sizeof(mode));
	if (c->opset < 11) {
		n = oi_attr_ints(c, "pads", pads, 16);
		value[0] = oi_attr_f(c, "value", 0.0f);
	} else {
		ret = const_ints(c, 1, "pads", pads, 16, &n);
		if (!ret)
			ret = const_floats(c, 2, "constant_value", value, 1, &nv);
		if (!ret)
			ret = const_ints(c, 3, "axes", axes, 8, &na);
		if (ret)
			return ret;
	}
	if (na < 0) {
		if (n != 2 * (int)r)
			return oi_fail(c->im, "%d pads for rank %u", n, r);
		memcpy(full, pads, 16ull * r);
	} else {
		if (n != 2 * na)
			return oi_fail(c->im, "%d pads for %d axes", n, na);
		for (i = 0; i < (uint32_t)na; i++) {
			uint32_t a = 0;

			ret = norm_axis(c, axes[i], r, &a);
			if (ret)
				return ret;
			full[a] = pads[i];
			full[r + a] = pads[na + i];
		}
	}
	if (!strcmp(mode, "constant"))
		p.copy.border = NPU_COPY_BORDER_CONSTANT;
	else if (!strcmp(mode, "edge"))
		p.copy.border = NPU_COPY_BORDER_EDGE;
	else if (!strcmp(mode, "reflect"))
		p.copy.border = NPU_COPY_BORDER_REFLECT;
	else if (!strcmp(mode, "wrap"))
		p.copy.border = NPU_COPY_BORDER_WRAP;
	else
		return oi_fail(c->im, "mode '%s' unknown", mode);
	if (p.copy.border == NPU_COPY_BORDER_CONSTANT) {
		if (isnan(value[0]) && dt != NPU_DTYPE_FP32 && dt != NPU_DTYPE_FP16 &&
		    dt != NPU_DTYPE_BF16)
			return oi_fail(c->im, "a NaN fill of an integer tensor");
		p.copy.fill = (float)value[0];
	}
	for (i = 0; i < r; i++) {
		/* only pads in int32 range are added: no int64 overflow */
		bool in_range = full[i] >= INT32_MIN && full[i] <= INT32_MAX &&
				full[r + i] >= INT32_MIN && full[r + i] <= INT32_MAX;
		int64_t o = in_range ? (int64_t)xd[i] + full[i] + full[r + i] : 0;

		if (!in_range || o < 1 || o > UINT32_MAX)
			return oi_fail(c->im, "pads %" PRId64 ", %" PRId64 " of axis %u (dim %u) give no valid dimension",
				       full[i], full[r + i], i, xd[i]);
		/* a negative pad crops: X lands before the output's start */
		if (full[i] + (int64_t)xd[i] <= 0 || full[i] >= o)
			return oi_fail(c->im, "axis %u is cropped away", i);
		yd[i] = (uint32_t)o;
		p.copy.offset[i] = (int32_t)full[i];
	}
	if (p.copy.border == NPU_COPY_BORDER_REFLECT)
		for (i = 0; i < r; i++)
			if ((full[i] > 0 || full[r + i] > 0) && xd[i] < 2)
				return oi_fail(c->im, "reflect padding of an axis of one element");
	return emit_copy(c, &p, in, dt, r, yd);
}

int oi_op_expand(struct nctx *c)
{
	struct npu_op_params p = { .kind = NPU_OP_COPY, .copy.border = NPU_COPY_BORDER_EDGE };
	uint32_t in, r, xd[8], sd[8], yd[8], xr[8], ry, i;
	int64_t shape[8];
	enum npu_dtype dt;
	int ret = input_x(c, 0, &in, &r, xd, &dt), n;

	if (!ret)
		ret = const_ints(c, 1, "shape", shape, 8, &n);
	if (ret)
		return ret;
	if (n < 0)
		return oi_fail(c->im, "shape is required");
	for (i = 0; i < (uint32_t)n; i++) {
		if (shape[i] < 1 || shape[i] > UINT32_MAX)
			return oi_fail(c->im, "bad shape value %" PRId64, shape[i]);
		sd[i] = (uint32_t)shape[i];
	}
	ret = oi_broadcast(c, r, xd, (uint32_t)n, sd, &ry, yd);
	if (ret)
		return ret;
	if (ry > MAX_R)
		return oi_fail(c->im, "rank %u above %d", ry, MAX_R);
	/* X gets leading ones; its dims of one then repeat (EDGE). */
	for (i = 0; i < ry; i++)
		xr[i] = i < ry - r ? 1 : xd[i - (ry - r)];
	if (ry != r || !r)
		ret = oi_reshape_tmp(c, in, dt, ry ? ry : 1, ry ? xr : (const uint32_t[]){ 1 }, &in);
	return ret ? ret : emit_copy(c, &p, in, dt, ry, yd);
}

int oi_op_tile(struct nctx *c)
{
	struct npu_op_params p = { .kind = NPU_OP_COPY, .copy.border = NPU_COPY_BORDER_WRAP };
	uint32_t in, r, xd[8], yd[8], i;
	int64_t rep[8];
	enum npu_dtype dt;
	int ret = input_x(c, 0, &in, &r, xd, &dt), n;

	if (!ret)
		ret = const_ints(c, 1, "repeats", rep, 8, &n);
	if (ret)
		return ret;
	if (n != (int)r || !r)
		return oi_fail(c->im, "repeats must have one value per dim of X (rank %u)", r);
	for (i = 0; i < r; i++) {
		if (rep[i] < 1 || rep[i] > UINT32_MAX || (uint64_t)rep[i] * xd[i] > UINT32_MAX)
			return oi_fail(c->im, "bad repeat %" PRId64 " of dim %u", rep[i], i);
		yd[i] = (uint32_t)(rep[i] * xd[i]);
	}
	return emit_copy(c, &p, in, dt, r, yd);
}

/*
 * DepthToSpace and SpaceToDepth: X reshaped to 6-D, transposed, and the
 * result reshaped to the output: one COPY, the reshapes are free.
 */
int oi_op_space_depth(struct nctx *c, bool to_space)
{
	struct oi_node d = { .kind = NPU_NODE_TRANSPOSE, .name = c->name };
	struct oi_node rs = { .kind = NPU_NODE_RESHAPE };
	uint32_t in, r, xd[8], x6[6], y6[6], yd[4], i, mid, t;
	int64_t b = oi_attr_i(c, "blocksize", 0);
	static const uint32_t dcr[6] = { 0, 3, 4, 1, 5, 2 };
	static const uint32_t crd[6] = { 0, 1, 4, 2, 5, 3 };
	static const uint32_t s2d[6] = { 0, 3, 5, 1, 2, 4 };
	char mode[8] = "DCR";
	const uint32_t *perm;
	enum npu_dtype dt;
	uint64_t bb;
	int ret = input_x(c, 0, &in, &r, xd, &dt);

	if (ret)
		return ret;
	if (r != 4)
		return oi_fail(c->im, "X must be 4-D [N,C,H,W]");
	if (b < 1 || b > 65535)
		return oi_fail(c->im, "bad blocksize %" PRId64, b);
	bb = (uint64_t)b * (uint64_t)b;
	oi_attr_s(c, "mode", mode, sizeof(mode));
	if (to_space) {
		if (xd[1] % bb)
			return oi_fail(c->im, "C (%u) is not a multiple of blocksize^2", xd[1]);
		if ((uint64_t)xd[2] * b > UINT32_MAX || (uint64_t)xd[3] * b > UINT32_MAX)
			return oi_fail(c->im, "the output is too large");
		if (!strcmp(mode, "CRD")) {
			memcpy(x6, (uint32_t[]){ xd[0], xd[1] / (uint32_t)bb, (uint32_t)b, (uint32_t)b,
						 xd[2], xd[3] }, sizeof(x6));
			perm = crd;
		} else if (!strcmp(mode, "DCR")) {
			memcpy(x6, (uint32_t[]){ xd[0], (uint32_t)b, (uint32_t)b, xd[1] / (uint32_t)bb,
						 xd[2], xd[3] }, sizeof(x6));
			perm = dcr;
		} else {
			return oi_fail(c->im, "mode '%s' unknown", mode);
		}
		memcpy(yd, (uint32_t[]){ xd[0], xd[1] / (uint32_t)bb, xd[2] * (uint32_t)b,
					 xd[3] * (uint32_t)b }, sizeof(yd));
	} else {
		if (xd[2] % b || xd[3] % b)
			return oi_fail(c->im, "H and W (%u, %u) are not multiples of blocksize", xd[2],
				       xd[3]);
		if ((uint64_t)xd[1] * bb > UINT32_MAX)
			return oi_fail(c->im, "the output is too large");
		memcpy(x6, (uint32_t[]){ xd[0], xd[1], xd[2] / (uint32_t)b, (uint32_t)b,
					 xd[3] / (uint32_t)b, (uint32_t)b }, sizeof(x6));
		perm = s2d;
		memcpy(yd, (uint32_t[]){ xd[0], xd[1] * (uint32_t)bb, xd[2] / (uint32_t)b,
					 xd[3] / (uint32_t)b }, sizeof(yd));
	}
	for (i = 0; i < 6; i++) {
		y6[i] = x6[perm[i]];
		d.transpose.perm[i] = perm[i];
	}
	ret = oi_reshape_tmp(c, in, dt, 6, x6, &mid);
	if (!ret)
		ret = oi_tmp_value(c->im, dt, 6, y6, &t);
	if (ret)
		return ret;
	d.inputs = &mid;
	d.num_inputs = 1;
	d.output = t;
	ret = oi_add_node(c->im, &d);
	return ret ? ret : oi_emit(c, &rs, &t, 1, dt, 4, yd);
}

int oi_op_cast(struct nctx *c)
{
	struct npu_op_params p = { .kind = NPU_OP_COPY };
	struct oi_node rs = { .kind = NPU_NODE_RESHAPE };
	int64_t to = oi_attr_i(c, "to", 0);
	uint32_t in, r, xd[8];
	enum npu_dtype dt, dto;
	int ret = input_x(c, 0, &in, &r, xd, &dt);

	if (ret)
		return ret;
	switch (to) {
	case OT_FLOAT: dto = NPU_DTYPE_FP32; break;
	case OT_FLOAT16: dto = NPU_DTYPE_FP16; break;
	case OT_BFLOAT16: dto = NPU_DTYPE_BF16; break;
	case OT_INT8: dto = NPU_DTYPE_INT8; break;
	case OT_UINT8: dto = NPU_DTYPE_UINT8; break;
	case OT_INT32: dto = NPU_DTYPE_INT32; break;
	default:
		return oi_fail(c->im, "casting a runtime tensor to ONNX type %" PRId64 " is not supported",
			       to);
	}
	/*
	 * A float16 value is a float32 one here, and a cast between them
	 * none, as in onnxruntime (oi_widen_fp16()).
	 */
	if (dto == NPU_DTYPE_FP16 && dt == NPU_DTYPE_FP32)
		dto = NPU_DTYPE_FP32;
	if (dto == dt)
		return oi_emit(c, &rs, &in, 1, dt, r, xd);
	if (dt == NPU_DTYPE_INT32 || dto == NPU_DTYPE_INT32)
		return oi_fail(c->im, "int32 converts to no other type on the device");
	/*
	 * ONNX truncates floats towards zero into integers; COPY quantizes
	 * (rounds to nearest) and saturates.
	 */
	if (dto == NPU_DTYPE_INT8 || dto == NPU_DTYPE_UINT8)
		if (dt != NPU_DTYPE_INT8 && dt != NPU_DTYPE_UINT8)
			return oi_fail(c->im, "casting floats to 8-bit integers (truncation) is not supported");
	ret = rank1(c, &in, dt, &r, xd);
	if (!ret)
		ret = emit_copy(c, &p, in, dto, r, xd);
	/* an 8-bit integer made float16: computed on in float32 */
	if (!ret && dto == NPU_DTYPE_FP16)
		ret = oi_widen_fp16(c->im, oi_lookup(c->im, c->n->output[0]));
	return ret;
}

int oi_op_resize(struct nctx *c)
{
	static const char *const coords[] = {
		"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
		"tf_half_pixel_for_nn", "tf_crop_and_resize",
	};
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
	};
	struct oi_node d = { .kind = NPU_NODE_OP, .flags = NPU_NODE_NCHW };
	uint32_t in, r, xd[8], yd[4], i;
	double sc[8], roi[8];
	int64_t sizes[8];
	char policy[32];

	/* opset 18's forms have no device op: the Resize kernel's */
	if (oi_attr_i(c, "antialias", 0) || oi_attr(c, "axes") ||
	    (oi_attr_s(c, "keep_aspect_ratio_policy", policy, sizeof(policy)) &&
	     strcmp(policy, "stretch")))
		return oi_fail(c->im, "antialias, axes and keep_aspect_ratio_policy have no device op");
	char s[32];
	enum npu_dtype dt;
	int ret = input_x(c, 0, &in, &r, xd, &dt), nsc = -1, nroi = -1, nsz = -1;

	if (ret)
		return ret;
	if (r != 4)
		return oi_fail(c->im, "only 4-D [N,C,H,W] inputs are supported");
	if (c->opset < 11) {
		ret = const_floats(c, 1, "scales", sc, 8, &nsc);
	} else {
		ret = const_floats(c, 1, "roi", roi, 8, &nroi);
		if (!ret)
			ret = const_floats(c, 2, "scales", sc, 8, &nsc);
		if (!ret)
			ret = const_ints(c, 3, "sizes", sizes, 8, &nsz);
	}
	if (ret)
		return ret;
	if ((nsc < 0) == (nsz < 0))
		return oi_fail(c->im, "exactly one of scales and sizes must be given");
	if (oi_attr(c, "axes"))
		return oi_fail(c->im, "the axes attribute is not supported");
	if (oi_attr_s(c, "keep_aspect_ratio_policy", s, sizeof(s)) && strcmp(s, "stretch"))
		return oi_fail(c->im, "keep_aspect_ratio_policy '%s' is not supported", s);
	if ((nsc >= 0 && nsc != 4) || (nsz >= 0 && nsz != 4))
		return oi_fail(c->im, "scales or sizes must have 4 values");
	yd[0] = xd[0];
	yd[1] = xd[1];
	d.op.kind = NPU_OP_RESIZE;
	for (i = 0; i < 4; i++) {
		double v;

		if (nsc >= 0) {
			if (!(sc[i] > 0.0) || sc[i] > 65536.0)
				return oi_fail(c->im, "bad scale %g", sc[i]);
			if (i < 2 && sc[i] != 1.0)
				return oi_fail(c->im, "resizing N or C is not supported");
			v = floor(xd[i] * sc[i]);
			if (i >= 2)
				d.op.resize.scale[i - 2] = (float)sc[i];
		} else {
			v = (double)sizes[i];
			if (i < 2 && sizes[i] != xd[i])
				return oi_fail(c->im, "resizing N or C is not supported");
		}
		if (v < 1 || v > UINT32_MAX)
			return oi_fail(c->im, "output dim %u would be %g", i, v);
		if (i >= 2)
			yd[i] = (uint32_t)v;
	}
	d.op.resize.mode = NPU_RESIZE_NEAREST;
	if (oi_attr_s(c, "mode", s, sizeof(s))) {
		if (!strcmp(s, "linear") || !strcmp(s, "bilinear"))
			d.op.resize.mode = NPU_RESIZE_LINEAR;
		else if (!strcmp(s, "cubic") || !strcmp(s, "bicubic"))
			d.op.resize.mode = NPU_RESIZE_CUBIC;
		else if (strcmp(s, "nearest"))
			return oi_fail(c->im, "mode '%s' unknown", s);
	}
	/* opset 10 knew only the asymmetric transformation */
	d.op.resize.coord = c->opset < 11 ? NPU_RESIZE_ASYMMETRIC : NPU_RESIZE_HALF_PIXEL;
	if (c->opset >= 11 && oi_attr_s(c, "coordinate_transformation_mode", s, sizeof(s))) {
		for (i = 0; i < sizeof(coords) / sizeof(coords[0]) && strcmp(s, coords[i]); i++)
			;
		if (i == sizeof(coords) / sizeof(coords[0]))
			return oi_fail(c->im, "coordinate_transformation_mode '%s' unknown", s);
		d.op.resize.coord = (enum npu_resize_coord)i;
	}
	if (d.op.resize.mode == NPU_RESIZE_NEAREST) {
		d.op.resize.nearest = c->opset < 11 ? NPU_RESIZE_FLOOR : NPU_RESIZE_ROUND_PREFER_FLOOR;
		if (c->opset >= 11 && oi_attr_s(c, "nearest_mode", s, sizeof(s))) {
			for (i = 0; i < sizeof(nearest) / sizeof(nearest[0]) && strcmp(s, nearest[i]); i++)
				;
			if (i == sizeof(nearest) / sizeof(nearest[0]))
				return oi_fail(c->im, "nearest_mode '%s' unknown", s);
			d.op.resize.nearest = (enum npu_resize_nearest)i;
		}
	}
	if (d.op.resize.mode == NPU_RESIZE_CUBIC) {
		d.op.resize.cubic_a = oi_attr_f(c, "cubic_coeff_a", -0.75f);
		d.op.resize.exclude_outside = oi_attr_i(c, "exclude_outside", 0) != 0;
	}
	if (d.op.resize.coord == NPU_RESIZE_TF_CROP_AND_RESIZE) {
		if (nroi != 8)
			return oi_fail(c->im, "tf_crop_and_resize needs a roi of 8 values");
		d.op.resize.extrapolation = oi_attr_f(c, "extrapolation_value", 0.0f);
		d.op.resize.roi[0] = (float)roi[2];
		d.op.resize.roi[1] = (float)roi[3];
		d.op.resize.roi[2] = (float)roi[6];
		d.op.resize.roi[3] = (float)roi[7];
	}
	return oi_emit(c, &d, &in, 1, dt, 4, yd);
}
