// SPDX-License-Identifier: MIT
/*
 * Sampling an image at computed coordinates: GridSample (any number of
 * spatial axes for nearest and linear, 2-D for cubic; zeros, border and
 * reflection padding) and RoiAlign (avg and max), with onnxruntime's
 * rounding and edge rules.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

/* ---- GridSample -------------------------------------------------------------------- */

static int grid_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_grid_state *s = ok_state_alloc(sizeof(*s));
	char mode[32] = "", pad[32] = "";
	int rc;

	(void)opaque;
	if (!s)
		return -ENOMEM;
	rc = npu_onnx_attr_string(node, "mode", mode, sizeof(mode));
	if (rc == -ENOENT)
		strcpy(mode, npu_onnx_node_opset(node) >= 20 ? "linear" : "bilinear");
	rc = npu_onnx_attr_string(node, "padding_mode", pad, sizeof(pad));
	if (rc == -ENOENT)
		strcpy(pad, "zeros");
	s->align_corners = ok_attr_i(node, "align_corners", 0) != 0;
	rc = 0;
	if (!strcmp(mode, "bilinear") || !strcmp(mode, "linear"))
		s->mode = OK_GRID_LINEAR;
	else if (!strcmp(mode, "nearest"))
		s->mode = OK_GRID_NEAREST;
	else if (!strcmp(mode, "bicubic") || !strcmp(mode, "cubic"))
		s->mode = OK_GRID_CUBIC;
	else
		rc = ok_fail(err, err_size, "mode \"%s\" is not linear, nearest or cubic", mode);
	if (!rc) {
		if (!strcmp(pad, "zeros"))
			s->padding = OK_GRID_ZEROS;
		else if (!strcmp(pad, "border"))
			s->padding = OK_GRID_BORDER;
		else if (!strcmp(pad, "reflection"))
			s->padding = OK_GRID_REFLECTION;
		else
			rc = ok_fail(err, err_size,
				     "padding_mode \"%s\" is not zeros, border or reflection", pad);
	}
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int grid_infer(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_grid_state *s = state;
	const struct npu_kernel_tensor *x = num_inputs > 0 ? in[0] : NULL;
	const struct npu_kernel_tensor *grid = num_inputs > 1 ? in[1] : NULL;
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t n, i;

	if (!x || !grid)
		return ok_fail(err, err_size, "inputs X and grid are required");
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	if (!ok_is_float(x->dtype) || !ok_is_float(grid->dtype))
		return ok_fail(err, err_size, "X and grid must be float types, not %s and %s",
			       ok_dtype_name(x->dtype), ok_dtype_name(grid->dtype));
	if (x->rank < 3)
		return ok_fail(err, err_size, "X has rank %u, needs N, C and a spatial axis", x->rank);
	n = x->rank - 2;
	if (grid->rank != x->rank || grid->dims[0] != x->dims[0] || grid->dims[x->rank - 1] != n)
		return ok_fail(err, err_size,
			       "grid must be [N, spatial..., %u] for X of rank %u with N %u", n, x->rank,
			       x->dims[0]);
	if (s->mode == OK_GRID_CUBIC && n != 2)
		return ok_fail(err, err_size, "cubic sampling is defined for 2 spatial axes, not %u", n);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (i = 0; i < n; i++)
		dims[2 + i] = grid->dims[1 + i];
	return ok_nn_out_shape(out[0], x->dtype, x->rank, dims, err, err_size);
}

static uint64_t grid_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	const struct ok_grid_state *s = state;
	uint32_t n = in[0]->rank - 2;
	uint64_t taps = s->mode == OK_GRID_NEAREST ? 1 : s->mode == OK_GRID_CUBIC ? 16 : 1ull << n;

	(void)num_inputs;
	(void)num_outputs;
	return ok_nn_add_sat(ok_nn_mul_sat(out[0]->elems, taps + 1), in[1]->elems);
}

/* onnxruntime's reflection of @x into [lo, hi] by the nearer border, repeatedly. */
static double reflect(double x, double lo, double hi)
{
	double range = hi - lo, d, r;
	double n;

	if (range <= 0)
		return lo;
	if (x < lo) {
		d = lo - x;
		n = floor(d / range);
		r = d - n * range;
		return fmod(n, 2) == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		d = x - hi;
		n = floor(d / range);
		r = d - n * range;
		return fmod(n, 2) == 0 ? hi - r : lo + r;
	}
	return x;
}

struct grid_ctx {
	const struct ok_grid_state *s;
	uint32_t n;
	uint32_t in[OK_NN_MAX_SPATIAL];
	uint64_t stride[OK_NN_MAX_SPATIAL];
	double lo[OK_NN_MAX_SPATIAL], hi[OK_NN_MAX_SPATIAL];
};

/* The plane's sample at integer position @pos under the padding mode. */
static double pixel(const struct grid_ctx *g, const double *plane, const int64_t *pos)
{
	uint64_t idx = 0;
	uint32_t d;

	for (d = 0; d < g->n; d++) {
		int64_t p = pos[d];

		if (p < 0 || p >= g->in[d]) {
			if (g->s->padding == OK_GRID_ZEROS)
				return 0;
			if (g->s->padding == OK_GRID_BORDER) {
				p = p < 0 ? 0 : (int64_t)g->in[d] - 1;
			} else {
				p = (int64_t)reflect((double)p, g->lo[d], g->hi[d]);
				if (p < 0)
					p = 0;
				if (p >= g->in[d])
					p = (int64_t)g->in[d] - 1;
			}
		}
		idx += (uint64_t)p * g->stride[d];
	}
	return plane[idx];
}

static double cubic_coef(double d)
{
	const double a = -0.75;

	d = fabs(d);
	if (d <= 1)
		return ((a + 2) * d - (a + 3)) * d * d + 1;
	if (d < 2)
		return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
	return 0;
}

static double sample(const struct grid_ctx *g, const double *plane, const double *coord)
{
	const struct ok_grid_state *s = g->s;
	double c[OK_NN_MAX_SPATIAL], f[OK_NN_MAX_SPATIAL], acc = 0;
	int64_t pos[OK_NN_MAX_SPATIAL];
	uint32_t d, corner;

	for (d = 0; d < g->n; d++) {
		double v = coord[d];

		if (s->mode == OK_GRID_NEAREST)
			v = nearbyint(v);
		if (v < g->lo[d] || v > g->hi[d]) {
			if (s->padding == OK_GRID_BORDER)
				v = fmin(fmax(v, 0), g->in[d] - 1.0);
			else if (s->padding == OK_GRID_REFLECTION)
				v = reflect(v, g->lo[d], g->hi[d]);
		}
		/* Far outside, every tap is padding anyway: keep the casts defined. */
		c[d] = fmin(fmax(v, -8.0 - g->in[d]), 2.0 * g->in[d] + 8);
		f[d] = floor(c[d]);
	}
	if (s->mode == OK_GRID_NEAREST) {
		for (d = 0; d < g->n; d++)
			pos[d] = (int64_t)c[d];
		return pixel(g, plane, pos);
	}
	if (s->mode == OK_GRID_LINEAR) {
		for (corner = 0; corner < (1u << g->n); corner++) {
			double w = 1;

			for (d = 0; d < g->n; d++) {
				bool high = corner >> d & 1;

				pos[d] = (int64_t)f[d] + high;
				w *= high ? c[d] - f[d] : 1 - (c[d] - f[d]);
			}
			acc += w * pixel(g, plane, pos);
		}
		return acc;
	}
	/* Cubic, two axes: 4 x 4 taps around the coordinate. */
	{
		int64_t i, j;

		for (i = 0; i < 4; i++)
			for (j = 0; j < 4; j++) {
				pos[0] = (int64_t)f[0] - 1 + i;
				pos[1] = (int64_t)f[1] - 1 + j;
				acc += cubic_coef(c[0] - (double)pos[0]) *
				       cubic_coef(c[1] - (double)pos[1]) * pixel(g, plane, pos);
			}
		return acc;
	}
}

static int grid_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    size_t num_outputs, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	const struct ok_grid_state *s = state;
	const struct npu_kernel_tensor *x = in[0], *grid = in[1];
	struct npu_kernel_tensor *y = out[0];
	struct grid_ctx g = { .s = s, .n = x->rank - 2 };
	uint64_t in_sp = 1, out_sp = 1, nb, ch, q, work = 0;
	double *plane, *coords;
	uint32_t d;
	int rc = 0;

	(void)num_inputs;
	(void)num_outputs;
	for (d = g.n; d-- > 0;) {
		g.in[d] = x->dims[2 + d];
		g.stride[d] = in_sp;
		in_sp *= g.in[d];
		out_sp *= y->dims[2 + d];
		g.lo[d] = s->align_corners ? 0 : -0.5;
		g.hi[d] = s->align_corners ? g.in[d] - 1.0 : g.in[d] - 0.5;
	}
	plane = malloc(in_sp * sizeof(double));
	coords = malloc(out_sp * g.n * sizeof(double));
	if (!plane || !coords) {
		free(plane);
		free(coords);
		return -ENOMEM;
	}
	for (nb = 0; nb < x->dims[0] && !rc; nb++) {
		/* Grid component j is the coordinate of the j-th spatial axis from the last. */
		for (q = 0; q < out_sp; q++)
			for (d = 0; d < g.n; d++) {
				double v = ok_get_f(grid, (nb * out_sp + q) * g.n + (g.n - 1 - d));

				coords[q * g.n + d] = s->align_corners ? (v + 1) / 2 * (g.in[d] - 1) :
									 ((v + 1) * g.in[d] - 1) / 2;
			}
		for (ch = 0; ch < x->dims[1] && !rc; ch++) {
			uint64_t base = (nb * x->dims[1] + ch);

			ok_load_f64(x, base * in_sp, in_sp, plane);
			for (q = 0; q < out_sp; q++) {
				ok_set_f(y, base * out_sp + q, sample(&g, plane, coords + q * g.n));
				if (++work >= OK_POLL_EVERY / 8) {
					rc = npu_kernel_poll(call, work * 8);
					work = 0;
					if (rc)
						break;
				}
			}
		}
	}
	free(plane);
	free(coords);
	return rc;
}

const struct npu_kernel ok_kernel_grid_sample = {
	.size = sizeof(struct npu_kernel),
	.name = "GridSample",
	.infer = grid_infer,
	.work = grid_work,
	.run = grid_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_grid_sample = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "GridSample",
	.since_version = 16,
	.kernel = &ok_kernel_grid_sample,
	.create = grid_create,
};

/* ---- RoiAlign ------------------------------------------------------------------------ */

/* Samples per bin above this are refused: an roi's size is data. */
#define OK_ROI_MAX_SAMPLES	(1u << 20)

static int roi_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_roi_state *s = ok_state_alloc(sizeof(*s));
	char mode[16] = "avg", ctm[32] = "";
	int rc;

	(void)opaque;
	if (!s)
		return -ENOMEM;
	rc = npu_onnx_attr_string(node, "mode", mode, sizeof(mode));
	if (rc && rc != -ENOENT)
		strcpy(mode, "?");
	rc = npu_onnx_attr_string(node, "coordinate_transformation_mode", ctm, sizeof(ctm));
	if (rc == -ENOENT)
		strcpy(ctm, npu_onnx_node_opset(node) >= 16 ? "half_pixel" : "output_half_pixel");
	s->out_h = ok_attr_i(node, "output_height", 1);
	s->out_w = ok_attr_i(node, "output_width", 1);
	s->sampling_ratio = ok_attr_i(node, "sampling_ratio", 0);
	s->spatial_scale = ok_attr_f(node, "spatial_scale", 1.0f);
	rc = 0;
	if (!strcmp(mode, "avg") || !strcmp(mode, "max"))
		s->max_mode = !strcmp(mode, "max");
	else
		rc = ok_fail(err, err_size, "mode \"%s\" is not avg or max", mode);
	if (!rc && (!strcmp(ctm, "half_pixel") || !strcmp(ctm, "output_half_pixel")))
		s->half_pixel = !strcmp(ctm, "half_pixel");
	else if (!rc)
		rc = ok_fail(err, err_size,
			     "coordinate_transformation_mode \"%s\" is not half_pixel or output_half_pixel",
			     ctm);
	if (!rc && (s->out_h < 1 || s->out_w < 1 || s->out_h > UINT32_MAX || s->out_w > UINT32_MAX))
		rc = ok_fail(err, err_size, "output_height and output_width must be positive");
	if (!rc && (s->sampling_ratio < 0 || s->sampling_ratio > 1024))
		rc = ok_fail(err, err_size, "sampling_ratio (%lld) is out of range [0, 1024]",
			     (long long)s->sampling_ratio);
	if (!rc && !isfinite(s->spatial_scale))
		rc = ok_fail(err, err_size, "spatial_scale must be finite");
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int roi_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_roi_state *s = state;
	const struct npu_kernel_tensor *x = num_inputs > 0 ? in[0] : NULL;
	const struct npu_kernel_tensor *rois = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *bi = num_inputs > 2 ? in[2] : NULL;
	uint64_t dims[4];

	if (!x || !rois || !bi)
		return ok_fail(err, err_size, "inputs X, rois and batch_indices are required");
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	if (!ok_is_float(x->dtype) || rois->dtype != x->dtype)
		return ok_fail(err, err_size, "X and rois must have one float type, not %s and %s",
			       ok_dtype_name(x->dtype), ok_dtype_name(rois->dtype));
	if (bi->dtype != NPU_DTYPE_INT64 && bi->dtype != NPU_DTYPE_INT32)
		return ok_fail(err, err_size, "batch_indices must be int64, not %s",
			       ok_dtype_name(bi->dtype));
	if (x->rank != 4)
		return ok_fail(err, err_size, "X must be N, C, H, W, not of rank %u", x->rank);
	if (rois->rank != 2 || rois->dims[1] != 4)
		return ok_fail(err, err_size, "rois must be [num_rois, 4]");
	if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
		return ok_fail(err, err_size, "batch_indices must have one value per roi (%u)",
			       rois->dims[0]);
	dims[0] = rois->dims[0];
	dims[1] = x->dims[1];
	dims[2] = (uint64_t)s->out_h;
	dims[3] = (uint64_t)s->out_w;
	return ok_nn_out_shape(out[0], x->dtype, 4, dims, err, err_size);
}

/* One bilinear sample of onnxruntime's RoiAlign: up to four weighted corners. */
struct roi_tap {
	uint64_t pos[4];
	double w[4];
};

static void roi_tap_at(double y, double x, uint32_t h, uint32_t w, struct roi_tap *t)
{
	int64_t yl, xl, yh, xh;
	double ly, lx;

	memset(t, 0, sizeof(*t));
	if (y < -1.0 || y > h || x < -1.0 || x > w)
		return;
	if (y <= 0)
		y = 0;
	if (x <= 0)
		x = 0;
	yl = (int64_t)y;
	xl = (int64_t)x;
	if (yl >= (int64_t)h - 1) {
		yh = yl = (int64_t)h - 1;
		y = (double)yl;
	} else {
		yh = yl + 1;
	}
	if (xl >= (int64_t)w - 1) {
		xh = xl = (int64_t)w - 1;
		x = (double)xl;
	} else {
		xh = xl + 1;
	}
	ly = y - yl;
	lx = x - xl;
	t->pos[0] = (uint64_t)(yl * w + xl);
	t->pos[1] = (uint64_t)(yl * w + xh);
	t->pos[2] = (uint64_t)(yh * w + xl);
	t->pos[3] = (uint64_t)(yh * w + xh);
	t->w[0] = (1 - ly) * (1 - lx);
	t->w[1] = (1 - ly) * lx;
	t->w[2] = ly * (1 - lx);
	t->w[3] = ly * lx;
}

static uint64_t roi_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	const struct ok_roi_state *s = state;
	uint64_t per = s->sampling_ratio ? (uint64_t)(s->sampling_ratio * s->sampling_ratio) : 4;

	(void)num_inputs;
	(void)num_outputs;
	/* Adaptive sampling depends on the rois: counted as 2 x 2, polled as it goes. */
	return ok_nn_add_sat(ok_nn_mul_sat(out[0]->elems, per * 4), in[0]->elems);
}

static int roi_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	const struct ok_roi_state *s = state;
	const struct npu_kernel_tensor *x = in[0], *rois = in[1], *bi = in[2];
	struct npu_kernel_tensor *y = out[0];
	uint32_t c = x->dims[1], h = x->dims[2], w = x->dims[3];
	uint64_t r, plane = (uint64_t)h * w, work = 0;
	double offset = s->half_pixel ? 0.5 : 0.0;
	double *img = malloc(plane * sizeof(double));
	int rc = 0;

	(void)num_inputs;
	(void)num_outputs;
	if (!img)
		return -ENOMEM;
	for (r = 0; r < rois->dims[0] && !rc; r++) {
		int64_t b = ok_get_i(bi, r);
		double x1 = ok_get_f(rois, r * 4) * s->spatial_scale - offset;
		double y1 = ok_get_f(rois, r * 4 + 1) * s->spatial_scale - offset;
		double x2 = ok_get_f(rois, r * 4 + 2) * s->spatial_scale - offset;
		double y2 = ok_get_f(rois, r * 4 + 3) * s->spatial_scale - offset;
		double rw = x2 - x1, rh = y2 - y1, bh, bw, gh_f, gw_f;
		uint64_t gh, gw, count, ph, pw, ch, iy, ix;

		if (b < 0 || b >= x->dims[0]) {
			rc = npu_kernel_fail(call, -EINVAL, "batch index %lld of roi %llu is out of range [0, %u)",
					     (long long)b, (unsigned long long)r, x->dims[0]);
			break;
		}
		if (!isfinite(rw) || !isfinite(rh) || !isfinite(x1) || !isfinite(y1)) {
			rc = npu_kernel_fail(call, -EINVAL, "roi %llu is not finite",
					     (unsigned long long)r);
			break;
		}
		if (!s->half_pixel) {
			rw = fmax(rw, 1.0);
			rh = fmax(rh, 1.0);
		}
		bh = rh / (double)s->out_h;
		bw = rw / (double)s->out_w;
		gh_f = s->sampling_ratio ? (double)s->sampling_ratio : ceil(rh / (double)s->out_h);
		gw_f = s->sampling_ratio ? (double)s->sampling_ratio : ceil(rw / (double)s->out_w);
		gh_f = fmax(gh_f, 0);
		gw_f = fmax(gw_f, 0);
		if (gh_f * gw_f > OK_ROI_MAX_SAMPLES) {
			rc = npu_kernel_fail(call, -EINVAL,
					     "roi %llu needs %g samples per bin, above %u",
					     (unsigned long long)r, gh_f * gw_f, OK_ROI_MAX_SAMPLES);
			break;
		}
		gh = (uint64_t)gh_f;
		gw = (uint64_t)gw_f;
		count = gh * gw > 1 ? gh * gw : 1;
		for (ch = 0; ch < c && !rc; ch++) {
			ok_load_f64(x, ((uint64_t)b * c + ch) * plane, plane, img);
			for (ph = 0; ph < (uint64_t)s->out_h && !rc; ph++)
				for (pw = 0; pw < (uint64_t)s->out_w; pw++) {
					double acc = 0;
					bool first = true;

					for (iy = 0; iy < gh; iy++)
						for (ix = 0; ix < gw; ix++) {
							double yy = y1 + ph * bh + (iy + 0.5) * bh / (double)gh;
							double xx = x1 + pw * bw + (ix + 0.5) * bw / (double)gw;
							struct roi_tap tap, *t = &tap;
							double v;

							roi_tap_at(yy, xx, h, w, t);
							if (s->max_mode) {
								v = fmax(fmax(t->w[0] * img[t->pos[0]],
									      t->w[1] * img[t->pos[1]]),
									 fmax(t->w[2] * img[t->pos[2]],
									      t->w[3] * img[t->pos[3]]));
								acc = first ? v : fmax(acc, v);
								first = false;
							} else {
								acc += t->w[0] * img[t->pos[0]] +
								       t->w[1] * img[t->pos[1]] +
								       t->w[2] * img[t->pos[2]] +
								       t->w[3] * img[t->pos[3]];
							}
						}
					if (!s->max_mode)
						acc /= (double)count;
					ok_set_f(y, ((r * c + ch) * (uint64_t)s->out_h + ph) * (uint64_t)s->out_w + pw,
						 acc);
					work += gh * gw * 4 + 1;
					if (work >= OK_POLL_EVERY) {
						rc = npu_kernel_poll(call, work);
						work = 0;
						if (rc)
							break;
					}
				}
		}
	}
	free(img);
	return rc;
}

const struct npu_kernel ok_kernel_roi_align = {
	.size = sizeof(struct npu_kernel),
	.name = "RoiAlign",
	.infer = roi_infer,
	.work = roi_work,
	.run = roi_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_roi_align = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "RoiAlign",
	.since_version = 10,
	.kernel = &ok_kernel_roi_align,
	.create = roi_create,
};
