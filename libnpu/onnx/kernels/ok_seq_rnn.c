// SPDX-License-Identifier: MIT
/*
 * RNN, GRU and LSTM: forward, reverse and bidirectional, every activation
 * of the ONNX list with activation_alpha/beta, clip, sequence_lens,
 * initial states, peepholes, input_forget, linear_before_reset, both
 * layouts (opset 14), every optional output; float32 and float64, both
 * computed in double.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ok_seq.h"

/* Gates per kind, in the order of W, R and B. */
static uint32_t gates_of(enum ok_rnn_kind k)
{
	return k == OK_RNN ? 1 : k == OK_GRU ? 3 : 4;
}

static const char *kind_name(enum ok_rnn_kind k)
{
	return k == OK_RNN ? "RNN" : k == OK_GRU ? "GRU" : "LSTM";
}

static const struct {
	const char *name;
	enum ok_rnn_act act;
	bool alpha, beta;
	double def_alpha, def_beta;
} acts[] = {
	{ "Relu", OK_ACT_RELU, false, false, 0, 0 },
	{ "Tanh", OK_ACT_TANH, false, false, 0, 0 },
	{ "Sigmoid", OK_ACT_SIGMOID, false, false, 0, 0 },
	{ "Affine", OK_ACT_AFFINE, true, true, 1, 0 },
	{ "LeakyRelu", OK_ACT_LEAKY_RELU, true, false, 0.01, 0 },
	{ "ThresholdedRelu", OK_ACT_THRESHOLDED_RELU, true, false, 1, 0 },
	{ "ScaledTanh", OK_ACT_SCALED_TANH, true, true, 1, 1 },
	{ "HardSigmoid", OK_ACT_HARD_SIGMOID, true, true, 0.2, 0.5 },
	{ "Elu", OK_ACT_ELU, true, false, 1, 0 },
	{ "Softsign", OK_ACT_SOFTSIGN, false, false, 0, 0 },
	{ "Softplus", OK_ACT_SOFTPLUS, false, false, 0, 0 },
};

bool ok_rnn_act_parse(const char *name, struct ok_rnn_func *f, bool *uses_alpha,
		      bool *uses_beta)
{
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (!strcasecmp(name, acts[i].name)) {
			f->act = acts[i].act;
			f->alpha = acts[i].def_alpha;
			f->beta = acts[i].def_beta;
			*uses_alpha = acts[i].alpha;
			*uses_beta = acts[i].beta;
			return true;
		}
	return false;
}

void ok_rnn_defaults(struct ok_rnn_state *st, enum ok_rnn_kind kind)
{
	static const enum ok_rnn_act def[3][OK_RNN_MAX_FUNCS] = {
		[OK_RNN] = { OK_ACT_TANH },
		[OK_GRU] = { OK_ACT_SIGMOID, OK_ACT_TANH },
		[OK_LSTM] = { OK_ACT_SIGMOID, OK_ACT_TANH, OK_ACT_TANH },
	};
	int d, f;

	memset(st, 0, sizeof(*st));
	st->kind = kind;
	for (d = 0; d < 2; d++)
		for (f = 0; f < OK_RNN_MAX_FUNCS; f++)
			st->funcs[d][f].act = def[kind][f];
}

static double act(const struct ok_rnn_func *f, double x)
{
	switch (f->act) {
	case OK_ACT_RELU: return x > 0 ? x : 0;
	case OK_ACT_TANH: return tanh(x);
	case OK_ACT_SIGMOID: return 1 / (1 + exp(-x));
	case OK_ACT_AFFINE: return f->alpha * x + f->beta;
	case OK_ACT_LEAKY_RELU: return x >= 0 ? x : f->alpha * x;
	case OK_ACT_THRESHOLDED_RELU: return x > f->alpha ? x : 0;
	case OK_ACT_SCALED_TANH: return f->alpha * tanh(f->beta * x);
	case OK_ACT_HARD_SIGMOID: return fmax(0, fmin(1, f->alpha * x + f->beta));
	case OK_ACT_ELU: return x >= 0 ? x : f->alpha * (exp(x) - 1);
	case OK_ACT_SOFTSIGN: return x / (1 + fabs(x));
	case OK_ACT_SOFTPLUS: return log1p(exp(-fabs(x))) + fmax(x, 0);
	}
	return x;
}

/* ---- Shapes ------------------------------------------------------------------ */

struct rnn_dims {
	uint32_t seq, batch, input, hidden, dirs, gates;
};

/* Inputs by role; absent optional ones NULL. */
struct rnn_args {
	const struct npu_kernel_tensor *x, *w, *r, *b, *lens, *h0, *c0, *p;
};

static void args_of(size_t n, const struct npu_kernel_tensor *const *in, struct rnn_args *a)
{
	const struct npu_kernel_tensor *v[8] = { 0 };
	size_t i;

	for (i = 0; i < n && i < 8; i++)
		v[i] = in[i];
	a->x = v[0];
	a->w = v[1];
	a->r = v[2];
	a->b = v[3];
	a->lens = v[4];
	a->h0 = v[5];
	a->c0 = v[6];
	a->p = v[7];
}

static int expect_shape(const struct npu_kernel_tensor *t, const char *what, uint32_t rank,
			const uint32_t *dims, enum npu_dtype dt, char *err, size_t err_size)
{
	uint32_t i;

	if (t->dtype != dt)
		return ok_fail(err, err_size, "%s is %s, X is %s", what, ok_dtype_name(t->dtype),
			       ok_dtype_name(dt));
	if (t->rank != rank)
		goto bad;
	for (i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			goto bad;
	return 0;
bad:
	if (rank == 1)
		return ok_fail(err, err_size, "%s must be [%u]", what, dims[0]);
	if (rank == 2)
		return ok_fail(err, err_size, "%s must be [%u, %u]", what, dims[0], dims[1]);
	return ok_fail(err, err_size, "%s must be [%u, %u, %u]", what, dims[0], dims[1], dims[2]);
}

static int rnn_check(const struct ok_rnn_state *st, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, struct rnn_args *a,
		     struct rnn_dims *d, char *err, size_t err_size)
{
	enum npu_dtype dt;
	uint32_t dims[3];
	int ret;

	args_of(num_inputs, in, a);
	if (!a->x || !a->w || !a->r)
		return ok_fail(err, err_size, "X, W and R are required");
	if (st->kind != OK_LSTM && (a->c0 || a->p))
		return ok_fail(err, err_size, "%s has no initial_c nor P", kind_name(st->kind));
	dt = a->x->dtype;
	if (dt != NPU_DTYPE_FP32 && dt != NPU_DTYPE_FP64)
		return ok_fail(err, err_size, "X must be float32 or float64, not %s",
			       ok_dtype_name(dt));
	if (a->x->rank != 3)
		return ok_fail(err, err_size, "X must have rank 3, not %u", a->x->rank);
	d->seq = a->x->dims[st->batch_major ? 1 : 0];
	d->batch = a->x->dims[st->batch_major ? 0 : 1];
	d->input = a->x->dims[2];
	d->dirs = st->direction == OK_DIR_BIDIRECTIONAL ? 2 : 1;
	d->gates = gates_of(st->kind);
	if (a->r->rank != 3)
		return ok_fail(err, err_size, "R must have rank 3, not %u", a->r->rank);
	d->hidden = a->r->dims[2];
	if (st->hidden_size && st->hidden_size != d->hidden)
		return ok_fail(err, err_size, "hidden_size is %lld but R is [.., .., %u]",
			       (long long)st->hidden_size, d->hidden);
	if ((uint64_t)d->gates * d->hidden > UINT32_MAX)
		return ok_fail(err, err_size, "hidden_size %u is too large", d->hidden);
	dims[0] = d->dirs;
	dims[1] = d->gates * d->hidden;
	dims[2] = d->input;
	ret = expect_shape(a->w, "W", 3, dims, dt, err, err_size);
	if (ret)
		return ret;
	dims[2] = d->hidden;
	ret = expect_shape(a->r, "R", 3, dims, dt, err, err_size);
	if (ret)
		return ret;
	if (a->b) {
		dims[1] = 2 * d->gates * d->hidden;
		ret = expect_shape(a->b, "B", 2, dims, dt, err, err_size);
		if (ret)
			return ret;
	}
	if (a->lens) {
		if (a->lens->dtype != NPU_DTYPE_INT32 && a->lens->dtype != NPU_DTYPE_INT64)
			return ok_fail(err, err_size, "sequence_lens must be int32, not %s",
				       ok_dtype_name(a->lens->dtype));
		if (a->lens->rank != 1 || a->lens->dims[0] != d->batch)
			return ok_fail(err, err_size, "sequence_lens must be [%u]", d->batch);
	}
	dims[0] = st->batch_major ? d->batch : d->dirs;
	dims[1] = st->batch_major ? d->dirs : d->batch;
	dims[2] = d->hidden;
	if (a->h0) {
		ret = expect_shape(a->h0, "initial_h", 3, dims, dt, err, err_size);
		if (ret)
			return ret;
	}
	if (a->c0) {
		ret = expect_shape(a->c0, "initial_c", 3, dims, dt, err, err_size);
		if (ret)
			return ret;
	}
	if (a->p) {
		dims[0] = d->dirs;
		dims[1] = 3 * d->hidden;
		ret = expect_shape(a->p, "P", 2, dims, dt, err, err_size);
		if (ret)
			return ret;
	}
	return 0;
}

static int rnn_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_rnn_state *st = state;
	struct rnn_args a;
	struct rnn_dims d;
	uint32_t dims[4];
	size_t k;
	int ret;

	ret = rnn_check(st, num_inputs, in, &a, &d, err, err_size);
	if (ret)
		return ret;
	if (num_outputs > (st->kind == OK_LSTM ? 3u : 2u))
		return ok_fail(err, err_size, "%s has at most %u outputs", kind_name(st->kind),
			       st->kind == OK_LSTM ? 3 : 2);
	for (k = 0; k < num_outputs; k++) {
		if (!out[k])
			continue;
		out[k]->dtype = a.x->dtype;
		if (k == 0) {
			if (st->batch_major) {
				dims[0] = d.batch;
				dims[1] = d.seq;
			} else {
				dims[0] = d.seq;
				dims[1] = d.dirs;
			}
			dims[2] = st->batch_major ? d.dirs : d.batch;
			dims[3] = d.hidden;
			ok_set_shape(out[k], 4, dims);
		} else {
			dims[0] = st->batch_major ? d.batch : d.dirs;
			dims[1] = st->batch_major ? d.dirs : d.batch;
			dims[2] = d.hidden;
			ok_set_shape(out[k], 3, dims);
		}
	}
	return 0;
}

static uint64_t rnn_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	struct rnn_args a;
	struct rnn_dims d;

	(void)num_outputs;
	if (rnn_check(state, num_inputs, in, &a, &d, NULL, 0))
		return out[0] ? out[0]->elems : 1;
	return (uint64_t)d.seq * d.batch * d.dirs * d.gates * d.hidden *
	       ((uint64_t)d.input + d.hidden + 4) + a.w->elems + a.r->elems;
}

/* ---- Running ------------------------------------------------------------------- */

/* One direction's parameters as doubles, and the scratch of one step. */
struct rnn_dir {
	double *w, *r, *wb, *rb, *p;	/* p: i, o, f peepholes */
	double *x, *h, *c, *g, *rh;
};

static void load(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, double *dst)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		dst[i] = ok_get_f(t, off + i);
}

static double clipv(const struct ok_rnn_state *st, double v)
{
	if (st->clip > 0)
		v = fmax(-st->clip, fmin(st->clip, v));
	return v;
}

/* g[j] += M[j, :] . v for j < rows; M is rows x cols, row-major. */
static void matvec(double *g, const double *m, const double *v, uint32_t rows, uint32_t cols)
{
	uint32_t j, k;

	for (j = 0; j < rows; j++) {
		const double *row = m + (uint64_t)j * cols;
		double s = 0;

		for (k = 0; k < cols; k++)
			s += row[k] * v[k];
		g[j] += s;
	}
}

/* One time step of one batch entry: h (and c) updated in place. */
static void step(const struct ok_rnn_state *st, const struct rnn_dims *d, struct rnn_dir *p,
		 const struct ok_rnn_func *fn)
{
	const uint32_t H = d->hidden;
	uint32_t j;
	double *g = p->g;

	for (j = 0; j < d->gates * H; j++)
		g[j] = p->wb[j];
	matvec(g, p->w, p->x, d->gates * H, d->input);
	if (st->kind == OK_RNN) {
		matvec(g, p->r, p->h, H, H);
		for (j = 0; j < H; j++)
			p->h[j] = act(&fn[0], clipv(st, g[j] + p->rb[j]));
		return;
	}
	if (st->kind == OK_GRU) {
		double *z = g, *r = g + H, *hh = g + 2 * H, *rh = p->rh;

		/* z and r: x and h parts; the candidate's h part below */
		matvec(z, p->r, p->h, 2 * H, H);
		for (j = 0; j < 2 * H; j++)
			z[j] = act(&fn[0], clipv(st, z[j] + p->rb[j]));
		if (st->linear_before_reset) {
			for (j = 0; j < H; j++)
				rh[j] = p->rb[2 * H + j];
			matvec(rh, p->r + (uint64_t)2 * H * H, p->h, H, H);
			for (j = 0; j < H; j++)
				hh[j] += r[j] * rh[j];
		} else {
			double *tmp = rh + H;

			for (j = 0; j < H; j++) {
				tmp[j] = r[j] * p->h[j];
				hh[j] += p->rb[2 * H + j];
			}
			matvec(hh, p->r + (uint64_t)2 * H * H, tmp, H, H);
		}
		for (j = 0; j < H; j++) {
			double cand = act(&fn[1], clipv(st, hh[j]));

			p->h[j] = (1 - z[j]) * cand + z[j] * p->h[j];
		}
		return;
	}
	/* LSTM: gates i, o, f, c */
	matvec(g, p->r, p->h, 4 * H, H);
	for (j = 0; j < H; j++) {
		double gi = g[j] + p->rb[j], go = g[H + j] + p->rb[H + j];
		double gf = g[2 * H + j] + p->rb[2 * H + j], gc = g[3 * H + j] + p->rb[3 * H + j];
		double i, f, o, cand, c;

		if (p->p) {
			gi += p->p[j] * p->c[j];
			gf += p->p[2 * H + j] * p->c[j];
		}
		i = act(&fn[0], clipv(st, gi));
		f = st->input_forget ? 1 - i : act(&fn[0], clipv(st, gf));
		cand = act(&fn[1], clipv(st, gc));
		c = f * p->c[j] + i * cand;
		if (p->p)
			go += p->p[H + j] * c;
		o = act(&fn[0], clipv(st, go));
		p->c[j] = c;
		p->h[j] = o * act(&fn[2], c);
	}
}

static int rnn_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_rnn_state *st = state;
	struct npu_kernel_tensor *y = num_outputs > 0 ? out[0] : NULL;
	struct npu_kernel_tensor *yh = num_outputs > 1 ? out[1] : NULL;
	struct npu_kernel_tensor *yc = num_outputs > 2 ? out[2] : NULL;
	struct rnn_args a;
	struct rnn_dims d;
	struct rnn_dir p;
	uint64_t GH, work = 0;
	double *buf;
	size_t total;
	uint32_t dir, b, s, j, H;
	int ret;

	ret = rnn_check(st, num_inputs, in, &a, &d, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	H = d.hidden;
	GH = (uint64_t)d.gates * H;
	for (b = 0; b < d.batch && a.lens; b++) {
		int64_t len = ok_get_i(a.lens, b);

		if (len < 0 || len > d.seq)
			return npu_kernel_fail(call, -EINVAL,
					       "sequence_lens[%u] is %lld, out of range [0, %u]", b,
					       (long long)len, d.seq);
	}
	total = GH * d.input + GH * H + 2 * GH + 3 * (uint64_t)H + d.input + 2 * (uint64_t)H +
		GH + 2 * (uint64_t)H;
	buf = calloc(total, sizeof(double));
	if (!buf)
		return -ENOMEM;
	p.w = buf;
	p.r = p.w + GH * d.input;
	p.wb = p.r + GH * H;
	p.rb = p.wb + GH;
	p.p = a.p ? p.rb + GH : NULL;
	p.x = p.rb + GH + 3 * (uint64_t)H;
	p.h = p.x + d.input;
	p.c = p.h + H;
	p.g = p.c + H;
	p.rh = p.g + GH;
	if (y)
		memset(y->data, 0, y->elems * npu_dtype_size(y->dtype));
	for (dir = 0; dir < d.dirs; dir++) {
		bool reverse = st->direction == OK_DIR_REVERSE || dir == 1;

		load(a.w, dir * GH * d.input, GH * d.input, p.w);
		load(a.r, dir * GH * H, GH * H, p.r);
		if (a.b) {
			load(a.b, dir * 2 * GH, GH, p.wb);
			load(a.b, dir * 2 * GH + GH, GH, p.rb);
		} else {
			memset(p.wb, 0, 2 * GH * sizeof(double));
		}
		if (a.p)
			load(a.p, dir * 3 * (uint64_t)H, 3 * (uint64_t)H, p.p);
		for (b = 0; b < d.batch; b++) {
			uint32_t len = a.lens ? (uint32_t)ok_get_i(a.lens, b) : d.seq;
			/* initial_h, Y_h, Y_c: [dirs, batch, H] or [batch, dirs, H] */
			uint64_t hoff = ((st->batch_major ? (uint64_t)b * d.dirs + dir :
							    (uint64_t)dir * d.batch + b)) * H;

			if (a.h0)
				load(a.h0, hoff, H, p.h);
			else
				memset(p.h, 0, H * sizeof(double));
			if (a.c0)
				load(a.c0, hoff, H, p.c);
			else
				memset(p.c, 0, H * sizeof(double));
			for (s = 0; s < len; s++) {
				uint32_t t = reverse ? len - 1 - s : s;
				uint64_t xoff = (st->batch_major ? (uint64_t)b * d.seq + t :
								   (uint64_t)t * d.batch + b) * d.input;

				load(a.x, xoff, d.input, p.x);
				step(st, &d, &p, st->funcs[st->direction == OK_DIR_REVERSE ? 0 : dir]);
				if (y) {
					/* Y: [seq, dirs, batch, H] or [batch, seq, dirs, H] */
					uint64_t yoff = (st->batch_major ?
						((uint64_t)b * d.seq + t) * d.dirs + dir :
						((uint64_t)t * d.dirs + dir) * d.batch + b) * H;

					for (j = 0; j < H; j++)
						ok_set_f(y, yoff + j, p.h[j]);
				}
				ret = ok_tick(call, &work, GH * ((uint64_t)d.input + H + 4));
				if (ret)
					goto out;
			}
			/* a batch entry of length 0 has no last state: zeros, as onnxruntime */
			for (j = 0; j < H; j++) {
				if (yh)
					ok_set_f(yh, hoff + j, len ? p.h[j] : 0);
				if (yc)
					ok_set_f(yc, hoff + j, len ? p.c[j] : 0);
			}
		}
	}
out:
	free(buf);
	return ret;
}

/* One kernel per op only for its name: the state says which it computes. */
#define RNN_KERNEL(var, nm)				\
	const struct npu_kernel var = {			\
		.size = sizeof(struct npu_kernel),	\
		.name = nm,				\
		.infer = rnn_infer,			\
		.work = rnn_work,			\
		.run = rnn_run,				\
		.release = ok_state_free,		\
	}

RNN_KERNEL(ok_kernel_rnn, "RNN");
RNN_KERNEL(ok_kernel_gru, "GRU");
RNN_KERNEL(ok_kernel_lstm, "LSTM");

/* ---- create() --------------------------------------------------------------------- */

/*
 * activations: the functions of each direction in order (forward's, then
 * reverse's), taking their alpha and beta in turn from activation_alpha
 * and activation_beta, each of which only lists the values the functions
 * that use one consume.  A bidirectional node may also list one direction's
 * functions, used for both, as onnxruntime accepts.
 */
static int parse_activations(const struct npu_onnx_node *node, struct ok_rnn_state *st,
			     enum ok_rnn_kind kind, char *err, size_t err_size)
{
	size_t per = kind == OK_RNN ? 1 : kind == OK_GRU ? 2 : 3;
	size_t dirs = st->direction == OK_DIR_BIDIRECTIONAL ? 2 : 1;
	size_t count = 0, na = 0, nb = 0, ia = 0, ib = 0, i;
	const float *alpha = NULL, *beta = NULL;
	char name[32];
	int ret;

	ret = npu_onnx_attr_strings(node, "activations", 0, name, sizeof(name), &count);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EINVAL)
		return ok_fail(err, err_size, "activations must be a list of strings");
	if (count != per * dirs && !(dirs == 2 && count == per))
		return ok_fail(err, err_size, "activations lists %zu functions, %zu expected",
			       count, per * dirs);
	if (npu_onnx_attr_floats(node, "activation_alpha", &alpha, &na) == -EINVAL ||
	    npu_onnx_attr_floats(node, "activation_beta", &beta, &nb) == -EINVAL)
		return ok_fail(err, err_size, "activation_alpha and activation_beta must be floats");
	for (i = 0; i < per * dirs; i++) {
		struct ok_rnn_func *f = &st->funcs[i / per][i % per];
		bool ua, ub;

		ret = npu_onnx_attr_strings(node, "activations", i % count, name, sizeof(name),
					    NULL);
		if (ret || !ok_rnn_act_parse(name, f, &ua, &ub))
			return ok_fail(err, err_size, "activation %zu (\"%s\") is not an RNN function",
				       i, ret ? "?" : name);
		/* a repeated set takes the same values again */
		if (i == count) {
			ia = 0;
			ib = 0;
		}
		if (ua && ia < na)
			f->alpha = alpha[ia++];
		if (ub && ib < nb)
			f->beta = beta[ib++];
	}
	return 0;
}

static int rnn_create_kind(const struct npu_onnx_node *node, enum ok_rnn_kind kind,
			   void **state, char *err, size_t err_size)
{
	struct ok_rnn_state *st = ok_state_alloc(sizeof(*st));
	char dir[32] = "forward";
	float clip;
	int ret;

	if (!st)
		return -ENOMEM;
	ok_rnn_defaults(st, kind);
	st->hidden_size = ok_attr_i(node, "hidden_size", 0);
	if (st->hidden_size < 0 || st->hidden_size > UINT32_MAX / 4) {
		ret = ok_fail(err, err_size, "hidden_size %lld is out of range",
			      (long long)st->hidden_size);
		goto fail;
	}
	ret = npu_onnx_attr_string(node, "direction", dir, sizeof(dir));
	if (ret && ret != -ENOENT) {
		ret = ok_fail(err, err_size, "direction must be a string");
		goto fail;
	}
	if (!strcmp(dir, "forward")) {
		st->direction = OK_DIR_FORWARD;
	} else if (!strcmp(dir, "reverse")) {
		st->direction = OK_DIR_REVERSE;
	} else if (!strcmp(dir, "bidirectional")) {
		st->direction = OK_DIR_BIDIRECTIONAL;
	} else {
		ret = ok_fail(err, err_size,
			      "direction \"%s\" is not forward, reverse or bidirectional", dir);
		goto fail;
	}
	if (!npu_onnx_attr_float(node, "clip", &clip)) {
		if (!(clip > 0)) {
			ret = ok_fail(err, err_size, "clip must be positive, not %g", clip);
			goto fail;
		}
		st->clip = clip;
	}
	st->linear_before_reset = ok_attr_i(node, "linear_before_reset", 0) != 0;
	st->input_forget = ok_attr_i(node, "input_forget", 0) != 0;
	st->batch_major = ok_attr_i(node, "layout", 0) != 0;
	ret = parse_activations(node, st, kind, err, err_size);
	if (ret)
		goto fail;
	*state = st;
	return 0;
fail:
	ok_state_free(st);
	return ret;
}

static int rnn_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	return rnn_create_kind(node, *(const enum ok_rnn_kind *)opaque, state, err, err_size);
}

/*
 * Opsets 1 to 6 differ only by output_sequence (whether Y is wanted,
 * which the node's outputs say anyway) and GRU-1's lack of
 * linear_before_reset (default 0): one kernel serves every opset.
 */
static const enum ok_rnn_kind kind_rnn = OK_RNN, kind_gru = OK_GRU, kind_lstm = OK_LSTM;

const struct npu_onnx_op ok_op_rnn = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "RNN",
	.since_version = 1,
	.kernel = &ok_kernel_rnn,
	.create = rnn_create,
	.opaque = (void *)&kind_rnn,
};

const struct npu_onnx_op ok_op_gru = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "GRU",
	.since_version = 1,
	.kernel = &ok_kernel_gru,
	.create = rnn_create,
	.opaque = (void *)&kind_gru,
};

const struct npu_onnx_op ok_op_lstm = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "LSTM",
	.since_version = 1,
	.kernel = &ok_kernel_lstm,
	.create = rnn_create,
	.opaque = (void *)&kind_lstm,
};
