// SPDX-License-Identifier: MIT
/*
 * com.microsoft's QLinearGlobalAveragePool and QLinearAveragePool, with
 * onnxruntime's CPU arithmetic (see ok_quant_ms.c for why it matters).
 *
 * The global pool never leaves integers until the end: per channel, an
 * int32 sum of the codes less x_zp times the image size (which wraps as
 * MLAS's does), then one float multiplier, x_scale / (y_scale *
 * image_size), applied by MLAS's requantization (multiply, clamp around
 * y_zp, round half to even): vnpu_qlinear_gap_q(), the device's POOL2D
 * GLOBAL_AVG with VNPU_ROUND_ORT_QLINEAR.  MLAS refuses an image of 2^24
 * elements or more, and a multiplier below 2^-32 or from 256 up (every
 * output would be the same code); so do we, with onnxruntime's reasons.
 *
 * The windowed pool is float all along: every code is dequantized
 * (x_scale * (x - x_zp)), each window summed in float in row-major order
 * from 0, divided by its count as a float, and quantized as y / y_scale
 * + y_zp rounded half to even, then clamped (not clamped first, as
 * QuantizeLinear is): vnpu_qlinear_avg_q(), the device's POOL2D AVG with
 * VNPU_ROUND_ORT_QLINEAR.  A window that covers the whole image without
 * padding is the global pool instead, in onnxruntime as here, integer
 * arithmetic and range checks included.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"
#include "../../../ops/vnpu_ref_qlinear.h"

enum { P_X, P_X_SCALE, P_X_ZP, P_Y_SCALE, P_Y_ZP };

#define GAP_MAX_IMAGE	0x1000000u

static const struct npu_kernel_tensor *opt_in(size_t num_inputs,
					      const struct npu_kernel_tensor *const *in,
					      size_t i)
{
	return i < num_inputs ? in[i] : NULL;
}

/* X's shape seen as N, C, D1..Dn whatever its layout. */
static void nchw_view(const struct ok_ms_pool_state *st, const struct npu_kernel_tensor *x,
		      struct npu_kernel_tensor *v)
{
	uint32_t d;

	*v = *x;
	v->data = NULL;
	if (!st->channels_last)
		return;
	v->dims[1] = x->dims[x->rank - 1];
	for (d = 2; d < x->rank; d++)
		v->dims[d] = x->dims[d - 1];
}

/* An NCHW shape @dims back into @st's layout. */
static void from_nchw(const struct ok_ms_pool_state *st, uint32_t rank, uint32_t *dims)
{
	uint32_t c = dims[1], d;

	if (!st->channels_last)
		return;
	for (d = 1; d + 1 < rank; d++)
		dims[d] = dims[d + 1];
	dims[rank - 1] = c;
}

static int check_params(size_t num_inputs, const struct npu_kernel_tensor *const *in,
			bool zero_points_required, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = opt_in(num_inputs, in, P_X);
	const struct npu_kernel_tensor *x_zp = opt_in(num_inputs, in, P_X_ZP);
	const struct npu_kernel_tensor *y_zp = opt_in(num_inputs, in, P_Y_ZP);
	int ret;

	if (!x)
		return ok_fail(err, err_size, "X is required");
	if (!ok_ms_is_q8(x->dtype))
		return ok_fail(err, err_size, "X must be uint8 or int8, not %s",
			       ok_dtype_name(x->dtype));
	if (x->rank < 3)
		return ok_fail(err, err_size, "X has rank %u, needs N, C and a spatial axis",
			       x->rank);
	if (zero_points_required && (!x_zp || !y_zp))
		return ok_fail(err, err_size, "x_zero_point and y_zero_point are required");
	ret = ok_ms_check_scale(opt_in(num_inputs, in, P_X_SCALE), "x_scale", err, err_size);
	if (!ret)
		ret = ok_ms_check_scale(opt_in(num_inputs, in, P_Y_SCALE), "y_scale", err,
					err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(x_zp, x->dtype, "x_zero_point", err, err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(y_zp, x->dtype, "y_zero_point", err, err_size);
	return ret;
}

/* MLAS's multiplier of the global pool, and its refusals. */
static int gap_multiplier(float x_scale, float y_scale, uint64_t image, float *out,
			  char *err, size_t err_size)
{
	float m;

	if (image >= GAP_MAX_IMAGE)
		return ok_fail(err, err_size,
			       "an image of %llu elements per channel is beyond onnxruntime's limit of 2^24 - 1",
			       (unsigned long long)image);
	m = x_scale / (y_scale * (float)image);
	if (!(m >= 0x1.0p-32f && m < 256.0f))
		return ok_fail(err, err_size,
			       "x_scale / (y_scale * %llu) = %g is out of onnxruntime's range [2^-32, 256): every output would be the same",
			       (unsigned long long)image, (double)m);
	*out = m;
	return 0;
}

/* The global pool of an NCHW-viewed @x into @y (same layout as @x). */
static int gap_compute(const struct ok_ms_pool_state *st, const struct npu_kernel_tensor *x,
		       float x_scale, int32_t x_zp, float y_scale, int32_t y_zp,
		       struct npu_kernel_tensor *y, struct npu_kernel_call *call)
{
	struct npu_kernel_tensor v;
	uint64_t image = 1, n, c, i, pending = 0;
	struct vnpu_qlinear_gap f;
	int32_t lo, hi;
	float m;
	char why[160];
	uint32_t d;
	int ret;

	nchw_view(st, x, &v);
	for (d = 2; d < v.rank; d++)
		image *= v.dims[d];
	if (gap_multiplier(x_scale, y_scale, image, &m, why, sizeof(why)))
		return npu_kernel_fail(call, -EDOM, "%s", why);
	ok_quant_range(y->dtype, &lo, &hi);
	vnpu_qlinear_gap_init(&f, x_scale, x_zp, y_scale, y_zp, (uint32_t)image, lo, hi);
	for (n = 0; n < v.dims[0]; n++) {
		for (c = 0; c < v.dims[1]; c++) {
			/* uint32 wraps like MLAS's int32 lanes, without UB */
			uint32_t acc = 0;
			uint64_t base, step, out;

			if (st->channels_last) {
				base = n * image * v.dims[1] + c;
				step = v.dims[1];
				out = n * v.dims[1] + c;
			} else {
				base = (n * v.dims[1] + c) * image;
				step = 1;
				out = base / image;
			}
			for (i = 0; i < image; i++)
				acc += (uint32_t)ok_ms_q8(x, base + i * step);
			ok_set_i(y, out, vnpu_qlinear_gap_q(&f, acc));
			ret = ok_tick(call, &pending, image);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- QLinearGlobalAveragePool -------------------------------------------- */

static int gap_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_ms_pool_state *st = state;
	struct npu_kernel_tensor v;
	uint32_t dims[NPU_TENSOR_MAX_RANK], d;
	uint64_t image = 1;
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	ret = check_params(num_inputs, in, true, err, err_size);
	if (ret)
		return ret;
	nchw_view(st, in[P_X], &v);
	for (d = 2; d < v.rank; d++)
		image *= v.dims[d];
	if (in[P_X_SCALE]->data && in[P_Y_SCALE]->data) {
		float m;

		ret = gap_multiplier(ok_ms_scale(in[P_X_SCALE]), ok_ms_scale(in[P_Y_SCALE]),
				     image, &m, err, err_size);
	} else if (image >= GAP_MAX_IMAGE) {
		ret = ok_fail(err, err_size,
			      "an image of %llu elements per channel is beyond onnxruntime's limit of 2^24 - 1",
			      (unsigned long long)image);
	}
	if (ret)
		return ret;
	dims[0] = v.dims[0];
	dims[1] = v.dims[1];
	for (d = 2; d < v.rank; d++)
		dims[d] = 1;
	from_nchw(st, v.rank, dims);
	out[0]->dtype = v.dtype;
	return ok_set_shape(out[0], v.rank, dims);
}

static int gap_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)num_inputs;
	(void)num_outputs;
	return gap_compute(state, in[P_X], ok_ms_scale(in[P_X_SCALE]),
			   ok_ms_zero_point(in[P_X_ZP]), ok_ms_scale(in[P_Y_SCALE]),
			   ok_ms_zero_point(in[P_Y_ZP]), out[0], call);
}

static int gap_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_ms_pool_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->channels_last = ok_attr_i(node, "channels_last", 0) != 0;
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qlinear_global_average_pool = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearGlobalAveragePool",
	.infer = gap_infer,
	.run = gap_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_global_average_pool = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearGlobalAveragePool",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_global_average_pool,
	.create = gap_create,
};

/* ---- QLinearAveragePool ----------------------------------------------------- */

static int avg_geom(const struct ok_ms_pool_state *st, const struct npu_kernel_tensor *x,
		    struct npu_kernel_tensor *v, struct ok_geom *g, char *err, size_t err_size)
{
	uint32_t kernel[OK_NN_MAX_SPATIAL], i;

	nchw_view(st, x, v);
	if (st->w.n_kernel > 3)
		return ok_fail(err, err_size,
			       "a window of %u spatial axes: onnxruntime pools 1, 2 or 3",
			       st->w.n_kernel);
	for (i = 0; i < st->w.n_kernel; i++)
		kernel[i] = (uint32_t)st->w.kernel[i];
	return ok_window_geom(&st->w, v, kernel, g, err, err_size);
}

/* onnxruntime pools the whole image as the global pool does. */
static bool is_global(const struct npu_kernel_tensor *v, const struct ok_geom *g)
{
	uint32_t i;

	for (i = 0; i < g->n; i++)
		if (g->kernel[i] != v->dims[2 + i] || g->pad_begin[i] || g->pad_end[i])
			return false;
	return true;
}

static int avg_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_ms_pool_state *st = state;
	struct npu_kernel_tensor v;
	struct ok_geom g;
	uint32_t dims[NPU_TENSOR_MAX_RANK], i;
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	ret = check_params(num_inputs, in, false, err, err_size);
	if (!ret)
		ret = avg_geom(st, in[P_X], &v, &g, err, err_size);
	if (ret)
		return ret;
	if (is_global(&v, &g) && in[P_X_SCALE]->data && in[P_Y_SCALE]->data) {
		float m;
		uint64_t image = 1;

		for (i = 0; i < g.n; i++)
			image *= g.in[i];
		ret = gap_multiplier(ok_ms_scale(in[P_X_SCALE]), ok_ms_scale(in[P_Y_SCALE]),
				     image, &m, err, err_size);
		if (ret)
			return ret;
	}
	dims[0] = v.dims[0];
	dims[1] = v.dims[1];
	for (i = 0; i < g.n; i++)
		dims[2 + i] = g.out[i];
	from_nchw(st, v.rank, dims);
	out[0]->dtype = v.dtype;
	return ok_set_shape(out[0], v.rank, dims);
}

static uint64_t avg_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	const struct ok_ms_pool_state *st = state;
	uint64_t window = 1;
	uint32_t i;

	(void)num_inputs;
	(void)num_outputs;
	for (i = 0; i < st->w.n_kernel; i++)
		window *= (uint64_t)st->w.kernel[i];
	return in[P_X]->elems + out[0]->elems * window;
}

/* One output element: the window at @pos (spatial output indices) of channel plane @base. */
static float window_mean(const struct ok_ms_pool_state *st, const struct ok_geom *g,
			 const float *xf, uint64_t base, uint64_t step, const uint32_t *pos)
{
	int64_t start[3] = { 0, 0, 0 }, end[3] = { 1, 1, 1 };
	uint64_t in_dims[3] = { 1, 1, 1 }, count = 1, window = 1;
	int64_t h, w, d;
	float sum = 0.0f;
	uint32_t i;

	for (i = 0; i < g->n; i++) {
		int64_t s = (int64_t)pos[i] * g->stride[i] - g->pad_begin[i];
		int64_t e = s + g->kernel[i];

		if (e > g->in[i])
			e = g->in[i];
		if (s < 0)
			s = 0;
		start[i] = s;
		end[i] = e;
		in_dims[i] = g->in[i];
		count *= (uint64_t)(e - s);
		window *= g->kernel[i];
	}
	for (h = start[0]; h < end[0]; h++)
		for (w = start[1]; w < end[1]; w++)
			for (d = start[2]; d < end[2]; d++)
				sum += xf[base + ((h * in_dims[1] + w) * in_dims[2] + d) * step];
	return sum / (float)(st->count_include_pad ? window : count);
}

static int avg_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_ms_pool_state *st = state;
	const struct npu_kernel_tensor *x = in[P_X];
	struct npu_kernel_tensor *y = out[0], v;
	float x_scale = ok_ms_scale(in[P_X_SCALE]), y_scale = ok_ms_scale(in[P_Y_SCALE]);
	int32_t x_zp = ok_ms_zero_point(opt_in(num_inputs, in, P_X_ZP));
	int32_t y_zp = ok_ms_zero_point(opt_in(num_inputs, in, P_Y_ZP));
	uint64_t image = 1, pooled = 1, n, c, o, i, pending = 0;
	struct ok_geom g;
	int32_t lo, hi;
	float *xf;
	int ret;

	(void)num_outputs;
	ret = avg_geom(st, x, &v, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the input changed since infer");
	if (is_global(&v, &g))
		return gap_compute(st, x, x_scale, x_zp, y_scale, y_zp, y, call);
	xf = malloc(x->elems * sizeof(*xf));
	if (!xf)
		return -ENOMEM;
	for (i = 0; i < x->elems; i++)
		xf[i] = x_scale * (float)(ok_ms_q8(x, i) - x_zp);
	for (i = 0; i < g.n; i++) {
		image *= g.in[i];
		pooled *= g.out[i];
	}
	ok_quant_range(y->dtype, &lo, &hi);
	for (n = 0; n < v.dims[0]; n++) {
		for (c = 0; c < v.dims[1]; c++) {
			uint64_t base, step, y_base, y_step;

			if (st->channels_last) {
				base = n * image * v.dims[1] + c;
				step = v.dims[1];
				y_base = n * pooled * v.dims[1] + c;
				y_step = v.dims[1];
			} else {
				base = (n * v.dims[1] + c) * image;
				step = 1;
				y_base = (n * v.dims[1] + c) * pooled;
				y_step = 1;
			}
			for (o = 0; o < pooled; o++) {
				uint32_t pos[3] = { 0, 0, 0 };
				uint64_t rest = o;
				float mean;

				for (i = g.n; i-- > 0;) {
					pos[i] = (uint32_t)(rest % g.out[i]);
					rest /= g.out[i];
				}
				mean = window_mean(st, &g, xf, base, step, pos);
				ok_set_i(y, y_base + o * y_step,
					 vnpu_qlinear_avg_q(mean, y_scale, y_zp, lo, hi));
			}
			ret = ok_tick(call, &pending, pooled);
			if (ret)
				goto out;
		}
	}
out:
	free(xf);
	return ret;
}

static int avg_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_ms_pool_state *st = ok_state_alloc(sizeof(*st));
	uint32_t i;
	int ret;

	(void)opaque;
	if (!st)
		return -ENOMEM;
	ret = ok_window_parse(node, &st->w, true, err, err_size);
	for (i = 0; !ret && i < st->w.n_dilations; i++)
		if (st->w.dilations[i] != 1)
			ret = ok_fail(err, err_size,
				      "attribute dilations is not QLinearAveragePool's (onnxruntime ignores it)");
	if (ret) {
		free(st);
		return ret;
	}
	st->channels_last = ok_attr_i(node, "channels_last", 0) != 0;
	st->count_include_pad = ok_attr_i(node, "count_include_pad", 0) != 0;
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qlinear_average_pool = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearAveragePool",
	.infer = avg_infer,
	.work = avg_work,
	.run = avg_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_average_pool = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearAveragePool",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_average_pool,
	.create = avg_create,
};
