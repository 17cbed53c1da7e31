// SPDX-License-Identifier: MIT
/*
 * DFT (opset 17: axis attribute, dft_length input, inverse, onesided) and
 * STFT: direct transforms in double over a table of twiddles, of real
 * ([.., 1]) or complex ([.., 2]) float32/float64 signals.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_seq.h"

/* Longest transform: its n^2 work is bounded by the CPU path's max_work. */
#define MAX_DFT		(1u << 24)

static bool is_real_float(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_FP32 || dt == NPU_DTYPE_FP64;
}

/* A constant integer scalar within [1, MAX_DFT]. */
static int const_count(const struct npu_kernel_tensor *t, const char *what, uint32_t *v,
		       char *err, size_t err_size)
{
	int64_t x;

	if (t->dtype != NPU_DTYPE_INT32 && t->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "%s must be int32 or int64, not %s", what,
			       ok_dtype_name(t->dtype));
	if (t->elems != 1)
		return ok_fail(err, err_size, "%s must be a scalar", what);
	if (!t->data)
		return ok_fail(err, err_size,
			       "the output shape depends on %s's value, which must be constant", what);
	x = ok_get_i(t, 0);
	if (x < 1 || x > MAX_DFT)
		return ok_fail(err, err_size, "%s %lld is out of range [1, %u]", what,
			       (long long)x, MAX_DFT);
	*v = (uint32_t)x;
	return 0;
}

/* cos and sin of 2 pi m / n for m < n. */
static double *twiddles(uint32_t n)
{
	double *tw = malloc(2 * (size_t)n * sizeof(double));
	uint32_t m;

	if (!tw)
		return NULL;
	for (m = 0; m < n; m++) {
		tw[2 * m] = cos(2 * M_PI * m / n);
		tw[2 * m + 1] = sin(2 * M_PI * m / n);
	}
	return tw;
}

/*
 * X[k] = sum_j x[j] e^(-+2 pi i j k / n) for k < bins (scaled by 1 / n
 * when inverse); x is n complex values (re, im interleaved).
 */
static void transform(const double *x, uint32_t n, const double *tw, bool inverse,
		      uint32_t bins, double *out)
{
	double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / n : 1;
	uint32_t k, j;

	for (k = 0; k < bins; k++) {
		double re = 0, im = 0;
		uint64_t idx = 0;

		for (j = 0; j < n; j++) {
			double c = tw[2 * idx], s = sign * tw[2 * idx + 1];

			re += x[2 * j] * c - x[2 * j + 1] * s;
			im += x[2 * j] * s + x[2 * j + 1] * c;
			idx += k;
			if (idx >= n)
				idx %= n;
		}
		out[2 * k] = re * scale;
		out[2 * k + 1] = im * scale;
	}
}

/*
 * The buffers of one transform at a time: DFT and STFT both fill @sig
 * with a signal of @n points and write @bins of the result.
 */
struct fft_bufs {
	double *tw, *sig, *res;
	uint32_t n, bins;
};

/* -ENOMEM leaves what was allocated for fft_bufs_free(). */
static int fft_bufs_alloc(struct fft_bufs *b, uint32_t n, uint32_t bins)
{
	b->n = n;
	b->bins = bins;
	b->tw = twiddles(n);
	b->sig = calloc(2 * (size_t)n, sizeof(double));
	b->res = calloc(2 * (size_t)bins, sizeof(double));
	return b->tw && b->sig && b->res ? 0 : -ENOMEM;
}

static void fft_bufs_free(struct fft_bufs *b)
{
	free(b->tw);
	free(b->sig);
	free(b->res);
}

/*
 * Transform @b's signal into @y's complex bins, the first at element
 * @first, each @step elements after the last; then count the work.
 */
static int fft_into(struct fft_bufs *b, bool inverse, struct npu_kernel_tensor *y,
		    uint64_t first, uint64_t step, struct npu_kernel_call *call,
		    uint64_t *work)
{
	uint32_t k;

	transform(b->sig, b->n, b->tw, inverse, b->bins, b->res);
	for (k = 0; k < b->bins; k++) {
		ok_set_f(y, first + k * step, b->res[2 * k]);
		ok_set_f(y, first + k * step + 1, b->res[2 * k + 1]);
	}
	return ok_tick(call, work, (uint64_t)b->bins * b->n + b->n);
}

/* ---- DFT ---------------------------------------------------------------------- */

struct dft_geom {
	uint32_t axis, len, n, bins, comps;
	uint64_t outer, inner;
};

static int dft_check(const struct ok_dft_state *st, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, struct dft_geom *g,
		     char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	const struct npu_kernel_tensor *len = num_inputs > 1 ? in[1] : NULL;
	int64_t axis = st->axis;
	uint32_t d;
	int ret;

	if (!x)
		return ok_fail(err, err_size, "input is required");
	if (!is_real_float(x->dtype))
		return ok_fail(err, err_size, "input must be float32 or float64, not %s",
			       ok_dtype_name(x->dtype));
	if (x->rank < 3)
		return ok_fail(err, err_size,
			       "input must be [batch, signal.., 1 or 2] of rank 3 or more, not %u",
			       x->rank);
	g->comps = x->dims[x->rank - 1];
	if (g->comps != 1 && g->comps != 2)
		return ok_fail(err, err_size, "the last dimension must be 1 (real) or 2 (complex), not %u",
			       g->comps);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > (int64_t)x->rank - 2)
		return ok_fail(err, err_size, "axis %lld is out of range [%d, %u]",
			       (long long)st->axis, -(int)x->rank, x->rank - 2);
	g->axis = (uint32_t)axis;
	g->len = x->dims[g->axis];
	g->n = g->len;
	if (len) {
		ret = const_count(len, "dft_length", &g->n, err, err_size);
		if (ret)
			return ret;
	}
	g->bins = st->onesided ? g->n / 2 + 1 : g->n;
	g->outer = 1;
	g->inner = 1;
	for (d = 0; d < g->axis; d++)
		g->outer *= x->dims[d];
	for (d = g->axis + 1; d + 1 < x->rank; d++)
		g->inner *= x->dims[d];
	return 0;
}

static int dft_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	struct dft_geom g;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "the output is required");
	ret = dft_check(state, num_inputs, in, &g, err, err_size);
	if (ret)
		return ret;
	memcpy(dims, in[0]->dims, in[0]->rank * sizeof(dims[0]));
	dims[g.axis] = g.bins;
	dims[in[0]->rank - 1] = 2;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape(out[0], in[0]->rank, dims);
}

static uint64_t dft_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	struct dft_geom g;

	(void)num_outputs;
	if (dft_check(state, num_inputs, in, &g, NULL, 0))
		return out[0]->elems;
	return g.outer * g.inner * ((uint64_t)g.bins * g.n + g.n) + g.n;
}

static int dft_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_dft_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	struct npu_kernel_tensor *y = out[0];
	struct dft_geom g;
	struct fft_bufs b;
	uint64_t o, i, work = 0;
	uint32_t j;
	int ret;

	(void)num_outputs;
	ret = dft_check(st, num_inputs, in, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	ret = fft_bufs_alloc(&b, g.n, g.bins);
	for (o = 0; o < g.outer && !ret; o++) {
		for (i = 0; i < g.inner && !ret; i++) {
			/* dft_length pads with zeros or truncates */
			for (j = 0; j < g.n; j++) {
				uint64_t at = ((o * g.len + j) * g.inner + i) * g.comps;

				b.sig[2 * j] = j < g.len ? ok_get_f(x, at) : 0;
				b.sig[2 * j + 1] = j < g.len && g.comps == 2 ? ok_get_f(x, at + 1) : 0;
			}
			ret = fft_into(&b, st->inverse, y, (o * g.bins * g.inner + i) * 2,
				       g.inner * 2, call, &work);
		}
	}
	fft_bufs_free(&b);
	return ret;
}

const struct npu_kernel ok_kernel_dft = {
	.size = sizeof(struct npu_kernel),
	.name = "DFT",
	.infer = dft_infer,
	.work = dft_work,
	.run = dft_run,
	.release = ok_state_free,
};

static int dft_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_dft_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->inverse = ok_attr_i(node, "inverse", 0) != 0;
	st->onesided = ok_attr_i(node, "onesided", 0) != 0;
	st->axis = ok_attr_i(node, "axis", 1);
	*state = st;
	return 0;
}

/* Opset 20 moves axis to an input (and changes its default): not this kernel. */
const struct npu_onnx_op ok_op_dft = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "DFT",
	.since_version = 17,
	.until_version = 19,
	.kernel = &ok_kernel_dft,
	.create = dft_create,
};

/* ---- STFT --------------------------------------------------------------------- */

/* Inputs: signal [batch, length, 1|2], frame_step, window, frame_length. */
struct stft_geom {
	uint32_t batch, len, comps, step, flen, frames, bins;
};

static int stft_check(const struct ok_stft_state *st, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, struct stft_geom *g,
		      char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	const struct npu_kernel_tensor *step = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *win = num_inputs > 2 ? in[2] : NULL;
	const struct npu_kernel_tensor *flen = num_inputs > 3 ? in[3] : NULL;
	int ret;

	if (!x || !step)
		return ok_fail(err, err_size, "signal and frame_step are required");
	if (!is_real_float(x->dtype))
		return ok_fail(err, err_size, "signal must be float32 or float64, not %s",
			       ok_dtype_name(x->dtype));
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return ok_fail(err, err_size, "signal must be [batch, length, 1 or 2]");
	g->batch = x->dims[0];
	g->len = x->dims[1];
	g->comps = x->dims[2];
	ret = const_count(step, "frame_step", &g->step, err, err_size);
	if (ret)
		return ret;
	if (win && (win->rank != 1 || win->dtype != x->dtype))
		return ok_fail(err, err_size, "window must be 1-D of the signal's dtype");
	if (flen) {
		ret = const_count(flen, "frame_length", &g->flen, err, err_size);
		if (ret)
			return ret;
		if (win && win->dims[0] != g->flen)
			return ok_fail(err, err_size, "window has %u values, frame_length is %u",
				       win->dims[0], g->flen);
	} else if (win) {
		g->flen = win->dims[0];
	} else {
		return ok_fail(err, err_size, "window or frame_length is required");
	}
	if (g->flen > g->len)
		return ok_fail(err, err_size, "frame_length %u is longer than the signal (%u)",
			       g->flen, g->len);
	g->frames = (g->len - g->flen) / g->step + 1;
	g->bins = st->onesided ? g->flen / 2 + 1 : g->flen;
	return 0;
}

static int stft_infer(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	struct stft_geom g;
	uint32_t dims[4];
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "the output is required");
	ret = stft_check(state, num_inputs, in, &g, err, err_size);
	if (ret)
		return ret;
	dims[0] = g.batch;
	dims[1] = g.frames;
	dims[2] = g.bins;
	dims[3] = 2;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape(out[0], 4, dims);
}

static uint64_t stft_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	struct stft_geom g;

	(void)num_outputs;
	if (stft_check(state, num_inputs, in, &g, NULL, 0))
		return out[0]->elems;
	return (uint64_t)g.batch * g.frames * ((uint64_t)g.bins * g.flen + g.flen) + g.flen;
}

static int stft_run(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	const struct npu_kernel_tensor *win = num_inputs > 2 ? in[2] : NULL;
	struct npu_kernel_tensor *y = out[0];
	struct stft_geom g;
	struct fft_bufs bufs;
	uint64_t work = 0;
	uint32_t b, f, j;
	int ret;

	(void)num_outputs;
	ret = stft_check(state, num_inputs, in, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	ret = fft_bufs_alloc(&bufs, g.flen, g.bins);
	for (b = 0; b < g.batch && !ret; b++) {
		for (f = 0; f < g.frames && !ret; f++) {
			for (j = 0; j < g.flen; j++) {
				uint64_t at = ((uint64_t)b * g.len + (uint64_t)f * g.step + j) * g.comps;
				double w = win ? ok_get_f(win, j) : 1;

				bufs.sig[2 * j] = w * ok_get_f(x, at);
				bufs.sig[2 * j + 1] = g.comps == 2 ? w * ok_get_f(x, at + 1) : 0;
			}
			ret = fft_into(&bufs, false, y, ((uint64_t)b * g.frames + f) * g.bins * 2, 2,
				       call, &work);
		}
	}
	fft_bufs_free(&bufs);
	return ret;
}

const struct npu_kernel ok_kernel_stft = {
	.size = sizeof(struct npu_kernel),
	.name = "STFT",
	.infer = stft_infer,
	.work = stft_work,
	.run = stft_run,
	.release = ok_state_free,
};

static int stft_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_stft_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->onesided = ok_attr_i(node, "onesided", 1) != 0;
	*state = st;
	return 0;
}

const struct npu_onnx_op ok_op_stft = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "STFT",
	.since_version = 17,
	.kernel = &ok_kernel_stft,
	.create = stft_create,
};
