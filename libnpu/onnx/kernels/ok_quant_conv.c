// SPDX-License-Identifier: MIT
/*
 * ConvInteger and QLinearConv of any spatial rank (1 to 4): grouped,
 * strided, dilated, padded (explicitly or by auto_pad), with zero points
 * per tensor or per output channel, an int32 accumulator that wraps as
 * MLAS's does, and (QLinearConv) per-channel requantization with an
 * int32 bias.  Padding holds the input's zero point, so it adds nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"

#define SP	OK_QUANT_MAX_SPATIAL

struct qc_geom {
	uint32_t N, C, M, group, cg, mg;
	/* spatial axes right-aligned into SP, the leading ones of extent 1 */
	uint32_t in[SP], out[SP], k[SP], s[SP], d[SP];
	int64_t pb[SP];
	uint64_t in_sp, out_sp, k_sp;
};

/* Operands of either op, by role. */
struct qc_args {
	const struct npu_kernel_tensor *x, *w, *x_zp, *w_zp, *bias;
	const struct npu_kernel_tensor *x_scale, *w_scale, *y_scale, *y_zp;
};

static bool is_q8(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_UINT8 || dt == NPU_DTYPE_INT8;
}

static void args_of(bool qlinear, size_t n, const struct npu_kernel_tensor *const *in,
		    struct qc_args *a)
{
	memset(a, 0, sizeof(*a));
	a->x = in[0];
	if (qlinear) {
		a->x_scale = n > 1 ? in[1] : NULL;
		a->x_zp = n > 2 ? in[2] : NULL;
		a->w = n > 3 ? in[3] : NULL;
		a->w_scale = n > 4 ? in[4] : NULL;
		a->w_zp = n > 5 ? in[5] : NULL;
		a->y_scale = n > 6 ? in[6] : NULL;
		a->y_zp = n > 7 ? in[7] : NULL;
		a->bias = n > 8 ? in[8] : NULL;
	} else {
		a->w = n > 1 ? in[1] : NULL;
		a->x_zp = n > 2 ? in[2] : NULL;
		a->w_zp = n > 3 ? in[3] : NULL;
	}
}

static int qc_geom(const struct ok_qconv_state *st, const struct npu_kernel_tensor *x,
		   const struct npu_kernel_tensor *w, struct qc_geom *g, char *err,
		   size_t err_size)
{
	uint32_t r, i, o;

	if (x->rank < 3 || x->rank > 2 + SP)
		return ok_fail(err, err_size, "x must be N x C x D1.. of rank 3 to %d, not %u",
			       2 + SP, x->rank);
	if (w->rank != x->rank)
		return ok_fail(err, err_size, "w has rank %u, x has rank %u", w->rank, x->rank);
	r = x->rank - 2;
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->M = w->dims[0];
	if (st->group < 1 || st->group > (int64_t)g->C || g->C % st->group ||
	    g->M % st->group)
		return ok_fail(err, err_size,
			       "group %lld does not divide the %u input and %u output channels",
			       (long long)st->group, g->C, g->M);
	g->group = (uint32_t)st->group;
	g->cg = g->C / g->group;
	g->mg = g->M / g->group;
	if (w->dims[1] != g->cg)
		return ok_fail(err, err_size, "w has %u input channels per group, x has %u",
			       w->dims[1], g->cg);
	if (st->n_kernel && st->n_kernel != r)
		return ok_fail(err, err_size, "kernel_shape has %u values for %u spatial axes",
			       st->n_kernel, r);
	if ((st->n_strides && st->n_strides != r) || (st->n_dilations && st->n_dilations != r) ||
	    (st->n_pads && st->n_pads != 2 * r))
		return ok_fail(err, err_size,
			       "strides, dilations and pads must have %u, %u and %u values", r, r,
			       2 * r);
	g->in_sp = g->out_sp = g->k_sp = 1;
	for (o = 0; o < SP; o++) {
		int64_t in, k, s, d, pb = 0, pe = 0, ext, outv;

		if (o < SP - r) {
			g->in[o] = g->out[o] = g->k[o] = g->s[o] = g->d[o] = 1;
			g->pb[o] = 0;
			continue;
		}
		i = o - (SP - r);
		in = x->dims[2 + i];
		k = w->dims[2 + i];
		if (st->n_kernel && st->kernel[i] != k)
			return ok_fail(err, err_size, "kernel_shape[%u] is %lld, w has %lld", i,
				       (long long)st->kernel[i], (long long)k);
		s = st->n_strides ? st->strides[i] : 1;
		d = st->n_dilations ? st->dilations[i] : 1;
		if (s < 1 || d < 1 || s > UINT32_MAX || d > UINT32_MAX)
			return ok_fail(err, err_size, "strides and dilations must be positive");
		ext = (k - 1) * d + 1;
		switch (st->auto_pad) {
		case OK_QPAD_NOTSET:
			if (st->n_pads) {
				pb = st->pads[i];
				pe = st->pads[r + i];
			}
			if (pb < 0 || pe < 0 || pb > UINT32_MAX || pe > UINT32_MAX)
				return ok_fail(err, err_size, "pads must be non-negative");
			outv = in + pb + pe >= ext ? (in + pb + pe - ext) / s + 1 : 0;
			break;
		case OK_QPAD_VALID:
			outv = in >= ext ? (in - ext) / s + 1 : 0;
			break;
		default: {
			int64_t total;

			outv = (in + s - 1) / s;
			total = (outv - 1) * s + ext - in;
			if (total < 0)
				total = 0;
			pb = st->auto_pad == OK_QPAD_SAME_UPPER ? total / 2 : total - total / 2;
			break;
		}
		}
		if (outv < 1)
			return ok_fail(err, err_size,
				       "spatial axis %u: the window (%lld) is larger than the padded input (%lld)",
				       i, (long long)ext, (long long)(in + pb + pe));
		g->in[o] = (uint32_t)in;
		g->out[o] = (uint32_t)outv;
		g->k[o] = (uint32_t)k;
		g->s[o] = (uint32_t)s;
		g->d[o] = (uint32_t)d;
		g->pb[o] = pb;
		g->in_sp *= (uint64_t)in;
		g->out_sp *= (uint64_t)outv;
		g->k_sp *= (uint64_t)k;
	}
	return 0;
}

/* A scalar or per-output-channel parameter: 1 or M values. */
static int chan_param(const struct npu_kernel_tensor *p, const char *what,
		      enum npu_dtype want, uint32_t M, char *err, size_t err_size)
{
	if (p->dtype != want)
		return ok_fail(err, err_size, "%s must be %s, not %s", what,
			       ok_dtype_name(want), ok_dtype_name(p->dtype));
	if (p->elems == 1 && p->rank <= 1)
		return 0;
	if (p->rank == 1 && p->dims[0] == M)
		return 0;
	return ok_fail(err, err_size, "%s must be a scalar or have %u values (one per output channel)",
		       what, M);
}

static int one_param(const struct npu_kernel_tensor *p, const char *what,
		     enum npu_dtype want, char *err, size_t err_size)
{
	if (p->dtype != want || p->elems != 1 || p->rank > 1)
		return ok_fail(err, err_size, "%s must be one %s value", what,
			       ok_dtype_name(want));
	return 0;
}

static int qc_check(bool qlinear, const struct ok_qconv_state *st, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, struct npu_kernel_tensor *y,
		    struct qc_args *a, struct qc_geom *g, char *err, size_t err_size)
{
	uint32_t dims[NPU_TENSOR_MAX_RANK], r, i;
	int ret;

	args_of(qlinear, num_inputs, in, a);
	if (!a->x || !a->w || (qlinear && (!a->x_scale || !a->x_zp || !a->w_scale ||
					   !a->w_zp || !a->y_scale || !a->y_zp)))
		return ok_fail(err, err_size, qlinear ? "inputs 1 to 8 are required" :
						      "x and w are required");
	if (!is_q8(a->x->dtype) || !is_q8(a->w->dtype))
		return ok_fail(err, err_size, "x and w must be uint8 or int8, not %s and %s",
			       ok_dtype_name(a->x->dtype), ok_dtype_name(a->w->dtype));
	ret = qc_geom(st, a->x, a->w, g, err, err_size);
	if (ret)
		return ret;
	if (a->x_zp) {
		ret = one_param(a->x_zp, "x's zero point", a->x->dtype, err, err_size);
		if (ret)
			return ret;
	}
	if (a->w_zp) {
		ret = chan_param(a->w_zp, "w's zero point", a->w->dtype, g->M, err, err_size);
		if (ret)
			return ret;
	}
	r = a->x->rank - 2;
	dims[0] = g->N;
	dims[1] = g->M;
	for (i = 0; i < r; i++)
		dims[2 + i] = g->out[SP - r + i];
	ok_set_shape(y, a->x->rank, dims);
	if (!qlinear) {
		y->dtype = NPU_DTYPE_INT32;
		return 0;
	}
	ret = one_param(a->x_scale, "x's scale", NPU_DTYPE_FP32, err, err_size);
	if (!ret)
		ret = chan_param(a->w_scale, "w's scale", NPU_DTYPE_FP32, g->M, err, err_size);
	if (!ret)
		ret = one_param(a->y_scale, "y's scale", NPU_DTYPE_FP32, err, err_size);
	if (!ret && !is_q8(a->y_zp->dtype))
		ret = ok_fail(err, err_size, "y's zero point must be uint8 or int8, not %s",
			      ok_dtype_name(a->y_zp->dtype));
	if (!ret)
		ret = one_param(a->y_zp, "y's zero point", a->y_zp->dtype, err, err_size);
	if (!ret && a->bias && (a->bias->dtype != NPU_DTYPE_INT32 || a->bias->rank != 1 ||
				a->bias->dims[0] != g->M))
		ret = ok_fail(err, err_size, "the bias must be int32 of %u values", g->M);
	if (ret)
		return ret;
	y->dtype = a->y_zp->dtype;
	return 0;
}

static inline int32_t q8(const struct npu_kernel_tensor *t, uint64_t i)
{
	return t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
					    ((const uint8_t *)t->data)[i];
}

/*
 * acc[out_sp] += wv * xq over the window position @kp, xq being one input
 * channel less its zero point.
 */
static void accumulate(const struct qc_geom *g, const int32_t *xq, const uint32_t *kp,
		       uint32_t wv, uint32_t *acc)
{
	uint32_t o0, o1, o2, o3;
	uint64_t oi = 0;

	for (o0 = 0; o0 < g->out[0]; o0++) {
		int64_t i0 = (int64_t)o0 * g->s[0] + (int64_t)kp[0] * g->d[0] - g->pb[0];

		if (i0 < 0 || i0 >= g->in[0]) {
			oi += (uint64_t)g->out[1] * g->out[2] * g->out[3];
			continue;
		}
		for (o1 = 0; o1 < g->out[1]; o1++) {
			int64_t i1 = (int64_t)o1 * g->s[1] + (int64_t)kp[1] * g->d[1] - g->pb[1];

			if (i1 < 0 || i1 >= g->in[1]) {
				oi += (uint64_t)g->out[2] * g->out[3];
				continue;
			}
			for (o2 = 0; o2 < g->out[2]; o2++) {
				int64_t i2 = (int64_t)o2 * g->s[2] + (int64_t)kp[2] * g->d[2] - g->pb[2];
				const int32_t *row;
				int64_t i3 = (int64_t)kp[3] * g->d[3] - g->pb[3];

				if (i2 < 0 || i2 >= g->in[2]) {
					oi += g->out[3];
					continue;
				}
				row = xq + (((uint64_t)i0 * g->in[1] + (uint64_t)i1) * g->in[2] +
					    (uint64_t)i2) * g->in[3];
				for (o3 = 0; o3 < g->out[3]; o3++, oi++, i3 += g->s[3])
					if (i3 >= 0 && i3 < g->in[3])
						acc[oi] += wv * (uint32_t)row[i3];
			}
		}
	}
}

/*
 * Group by group, input channel by input channel: each channel less its
 * zero point is converted once and serves every output channel of the
 * group, whose accumulators are all live.
 */
static int qc_run(bool qlinear, const struct ok_qconv_state *st, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, struct npu_kernel_tensor *y,
		  struct npu_kernel_call *call)
{
	struct npu_kernel_tensor shape = *y;
	struct qc_args a;
	struct qc_geom g;
	uint32_t *acc, n, grp, mi, c, kp[SP];
	int32_t *xq, x_zp, lo = 0, hi = 0, y_zp = 0;
	float x_scale = 0, y_scale = 1;
	uint64_t work = 0, kk, o, i;
	int ret;

	ret = qc_check(qlinear, st, num_inputs, in, &shape, &a, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	acc = malloc((size_t)g.mg * g.out_sp * sizeof(*acc));
	xq = malloc((size_t)g.in_sp * sizeof(*xq));
	if (!acc || !xq) {
		ret = -ENOMEM;
		goto out;
	}
	x_zp = a.x_zp ? q8(a.x_zp, 0) : 0;
	if (qlinear) {
		ok_quant_range(y->dtype, &lo, &hi);
		x_scale = (float)ok_get_f(a.x_scale, 0);
		y_scale = (float)ok_get_f(a.y_scale, 0);
		y_zp = q8(a.y_zp, 0);
	}
	for (n = 0; n < g.N; n++) {
		for (grp = 0; grp < g.group; grp++) {
			memset(acc, 0, (size_t)g.mg * g.out_sp * sizeof(*acc));
			for (c = 0; c < g.cg; c++) {
				uint64_t x_off = ((uint64_t)n * g.C + (uint64_t)grp * g.cg + c) * g.in_sp;

				for (i = 0; i < g.in_sp; i++)
					xq[i] = q8(a.x, x_off + i) - x_zp;
				for (mi = 0; mi < g.mg; mi++) {
					uint32_t m = grp * g.mg + mi;
					int32_t w_zp = a.w_zp ? q8(a.w_zp, a.w_zp->elems == 1 ? 0 : m) : 0;
					uint64_t w_off = ((uint64_t)m * g.cg + c) * g.k_sp;

					for (kk = 0; kk < g.k_sp; kk++) {
						uint64_t rest = kk;
						int32_t wv = q8(a.w, w_off + kk) - w_zp;
						int d;

						if (!wv)
							continue;
						for (d = SP - 1; d >= 0; d--) {
							kp[d] = (uint32_t)(rest % g.k[d]);
							rest /= g.k[d];
						}
						accumulate(&g, xq, kp, (uint32_t)wv,
							   acc + (uint64_t)mi * g.out_sp);
					}
					ret = ok_tick(call, &work, g.k_sp * g.out_sp);
					if (ret)
						goto out;
				}
			}
			for (mi = 0; mi < g.mg; mi++) {
				uint32_t m = grp * g.mg + mi;
				uint64_t y_off = ((uint64_t)n * g.M + m) * g.out_sp;
				const uint32_t *am = acc + (uint64_t)mi * g.out_sp;
				float mult = 0;
				uint32_t bias = a.bias ? (uint32_t)((const int32_t *)a.bias->data)[m] : 0;

				if (qlinear)
					mult = x_scale * (float)ok_get_f(a.w_scale,
							a.w_scale->elems == 1 ? 0 : m) / y_scale;
				for (o = 0; o < g.out_sp; o++) {
					if (!qlinear)
						((int32_t *)y->data)[y_off + o] = (int32_t)am[o];
					else
						ok_set_i(y, y_off + o,
							 ok_requantize((int32_t)(am[o] + bias), mult,
								       y_zp, lo, hi));
				}
				work += g.out_sp;
			}
		}
	}
out:
	free(acc);
	free(xq);
	return ret;
}

static uint64_t qc_work_of(bool qlinear, const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in,
			   const struct npu_kernel_tensor *y)
{
	struct npu_kernel_tensor shape = *y;
	struct qc_args a;
	struct qc_geom g;

	if (qc_check(qlinear, state, num_inputs, in, &shape, &a, &g, NULL, 0))
		return y->elems;
	return (uint64_t)g.N * g.M * g.cg * g.k_sp * g.out_sp + y->elems;
}

static int qc_infer(bool qlinear, const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	struct qc_args a;
	struct qc_geom g;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "y is required");
	return qc_check(qlinear, state, num_inputs, in, out[0], &a, &g, err, err_size);
}

static int ci_infer(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	return qc_infer(false, state, num_inputs, in, num_outputs, out, err, err_size);
}

static int qlc_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	return qc_infer(true, state, num_inputs, in, num_outputs, out, err, err_size);
}

static uint64_t ci_work(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			const struct npu_kernel_tensor *const *out)
{
	(void)num_outputs;
	return qc_work_of(false, state, num_inputs, in, out[0]);
}

static uint64_t qlc_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	(void)num_outputs;
	return qc_work_of(true, state, num_inputs, in, out[0]);
}

static int ci_run(const void *state, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, size_t num_outputs,
		  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_outputs;
	return qc_run(false, state, num_inputs, in, out[0], call);
}

static int qlc_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_outputs;
	return qc_run(true, state, num_inputs, in, out[0], call);
}

static int read_ints(const struct npu_onnx_node *node, const char *name, int64_t *dst,
		     uint32_t max, uint32_t *count, char *err, size_t err_size)
{
	const int64_t *v;
	size_t n;

	*count = 0;
	if (npu_onnx_attr_ints(node, name, &v, &n))
		return 0;
	if (n > max)
		return ok_fail(err, err_size, "%s has %zu values, at most %u are supported",
			       name, n, max);
	memcpy(dst, v, n * sizeof(*v));
	*count = (uint32_t)n;
	return 0;
}

static int qc_create(const struct npu_onnx_node *node, void *opaque, void **state,
		     char *err, size_t err_size)
{
	struct ok_qconv_state *st;
	char pad[16] = "NOTSET";
	int ret;

	(void)opaque;
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->group = ok_attr_i(node, "group", 1);
	ret = npu_onnx_attr_string(node, "auto_pad", pad, sizeof(pad));
	if (ret && ret != -ENOENT) {
		ret = ok_fail(err, err_size, "auto_pad is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
		goto fail;
	}
	if (!strcmp(pad, "NOTSET")) {
		st->auto_pad = OK_QPAD_NOTSET;
	} else if (!strcmp(pad, "SAME_UPPER")) {
		st->auto_pad = OK_QPAD_SAME_UPPER;
	} else if (!strcmp(pad, "SAME_LOWER")) {
		st->auto_pad = OK_QPAD_SAME_LOWER;
	} else if (!strcmp(pad, "VALID")) {
		st->auto_pad = OK_QPAD_VALID;
	} else {
		ret = ok_fail(err, err_size, "auto_pad \"%s\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
			      pad);
		goto fail;
	}
	ret = read_ints(node, "kernel_shape", st->kernel, SP, &st->n_kernel, err, err_size);
	if (!ret)
		ret = read_ints(node, "strides", st->strides, SP, &st->n_strides, err, err_size);
	if (!ret)
		ret = read_ints(node, "dilations", st->dilations, SP, &st->n_dilations, err,
				err_size);
	if (!ret)
		ret = read_ints(node, "pads", st->pads, 2 * SP, &st->n_pads, err, err_size);
	if (ret)
		goto fail;
	*state = st;
	return 0;
fail:
	ok_state_free(st);
	return ret;
}

const struct npu_kernel ok_kernel_conv_integer = {
	.size = sizeof(struct npu_kernel),
	.name = "ConvInteger",
	.infer = ci_infer,
	.work = ci_work,
	.run = ci_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_conv_integer = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ConvInteger",
	.since_version = 10,
	.kernel = &ok_kernel_conv_integer,
	.create = qc_create,
};

const struct npu_kernel ok_kernel_qlinear_conv = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearConv",
	.infer = qlc_infer,
	.work = qlc_work,
	.run = qlc_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_conv = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "QLinearConv",
	.since_version = 10,
	.kernel = &ok_kernel_qlinear_conv,
	.create = qc_create,
};
