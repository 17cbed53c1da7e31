// SPDX-License-Identifier: MIT
/*
 * Resize (opsets 10 to 19) and Upsample (7, 9) over any number of axes:
 * nearest, linear and cubic, every coordinate_transformation_mode and
 * nearest_mode, exclude_outside, extrapolation, antialias, axes and
 * keep_aspect_ratio_policy.  Each of these modes weighs input samples
 * along each axis independently, so the tensor is resized one axis at a
 * time: every output coordinate of an axis is a short list of (input
 * index, weight) taps, in double.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

/* An axis may shrink at most this much with antialias: bounds its taps. */
#define OK_RESIZE_MAX_TAPS	4096

static int pick(const char *v, const char *const *names, int n, const char *attr, int *out,
		char *err, size_t err_size)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	return ok_fail(err, err_size, "%s \"%s\" is not supported", attr, v);
}

static int string_attr(const struct npu_onnx_node *node, const char *name, const char *def,
		       char *buf, size_t size, char *err, size_t err_size)
{
	int rc = npu_onnx_attr_string(node, name, buf, size);

	if (rc == -ENOENT) {
		snprintf(buf, size, "%s", def);
		return 0;
	}
	if (rc)
		return ok_fail(err, err_size, "attribute %s is not a known string", name);
	return 0;
}

static int resize_create_common(const struct npu_onnx_node *node, bool upsample, void **state,
				char *err, size_t err_size)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	static const char *const coords[] = {
		"half_pixel", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
		"align_corners", "tf_crop_and_resize", "half_pixel_symmetric",
	};
	static const char *const nearest[] = {
		"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
	};
	static const char *const aspects[] = { "stretch", "not_larger", "not_smaller" };
	struct ok_resize_state *s = ok_state_alloc(sizeof(*s));
	char buf[64];
	int v = 0, rc;

	if (!s)
		return -ENOMEM;
	s->opset = npu_onnx_node_opset(node);
	s->upsample = upsample;
	rc = string_attr(node, "mode", "nearest", buf, sizeof(buf), err, err_size);
	if (!rc && !strcmp(buf, "bilinear") && (upsample || s->opset < 11))
		snprintf(buf, sizeof(buf), "linear");
	if (!rc && !(rc = pick(buf, modes, 3, "mode", &v, err, err_size)))
		s->mode = v;
	if (!rc && (upsample || s->opset < 11) && s->mode == OK_RESIZE_CUBIC)
		rc = ok_fail(err, err_size, "mode cubic needs Resize of opset 11 or later");
	if (upsample || s->opset < 11) {
		s->coord = OK_COORD_ASYMMETRIC;
		s->nearest = OK_NEAREST_SIMPLE;
		s->cubic_a = -0.75f;
	} else {
		if (!rc)
			rc = string_attr(node, "coordinate_transformation_mode", "half_pixel", buf,
					 sizeof(buf), err, err_size);
		if (!rc && !(rc = pick(buf, coords, 7, "coordinate_transformation_mode", &v, err,
				       err_size)))
			s->coord = v;
		if (!rc)
			rc = string_attr(node, "nearest_mode", "round_prefer_floor", buf, sizeof(buf),
					 err, err_size);
		if (!rc && !(rc = pick(buf, nearest, 4, "nearest_mode", &v, err, err_size)))
			s->nearest = v;
		if (!rc)
			rc = string_attr(node, "keep_aspect_ratio_policy", "stretch", buf,
					 sizeof(buf), err, err_size);
		if (!rc && !(rc = pick(buf, aspects, 3, "keep_aspect_ratio_policy", &v, err,
				       err_size)))
			s->aspect = v;
		s->cubic_a = ok_attr_f(node, "cubic_coeff_a", -0.75f);
		s->exclude_outside = ok_attr_i(node, "exclude_outside", 0) != 0;
		s->extrapolation = ok_attr_f(node, "extrapolation_value", 0.0f);
		s->antialias = ok_attr_i(node, "antialias", 0) != 0;
	}
	if (!rc && !upsample) {
		const int64_t *axes;
		size_t n, i;

		if (!npu_onnx_attr_ints(node, "axes", &axes, &n)) {
			if (n > NPU_TENSOR_MAX_RANK)
				rc = ok_fail(err, err_size, "attribute axes has %zu values", n);
			for (i = 0; !rc && i < n; i++)
				s->axes[i] = axes[i];
			s->n_axes = (uint32_t)n;
		}
	}
	if (!rc && upsample && s->opset < 9) {
		const float *sc;
		size_t n, i;

		if (npu_onnx_attr_floats(node, "scales", &sc, &n))
			rc = ok_fail(err, err_size, "attribute scales is required");
		else if (n > NPU_TENSOR_MAX_RANK)
			rc = ok_fail(err, err_size, "attribute scales has %zu values", n);
		for (i = 0; !rc && i < n; i++)
			s->scales[i] = sc[i];
		s->n_scales = (uint32_t)n;
	}
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int resize_create(const struct npu_onnx_node *node, void *opaque, void **state,
			 char *err, size_t err_size)
{
	(void)opaque;
	return resize_create_common(node, false, state, err, err_size);
}

static int upsample_create(const struct npu_onnx_node *node, void *opaque, void **state,
			   char *err, size_t err_size)
{
	(void)opaque;
	return resize_create_common(node, true, state, err, err_size);
}

/* The resolved plan: per axis, output extent, scale and the roi's start and end. */
struct resize_plan {
	uint32_t rank;
	uint32_t in[NPU_TENSOR_MAX_RANK], out[NPU_TENSOR_MAX_RANK];
	double scale[NPU_TENSOR_MAX_RANK];
	double roi_start[NPU_TENSOR_MAX_RANK], roi_end[NPU_TENSOR_MAX_RANK];
};

static const struct npu_kernel_tensor *opt_input(size_t num_inputs,
						 const struct npu_kernel_tensor *const *in,
						 size_t i)
{
	if (i >= num_inputs || !in[i] || !in[i]->elems)
		return NULL;
	return in[i];
}

/*
 * The plan from the inputs; @need_roi: read the roi's values (run time,
 * or infer when it is constant).
 */
static int plan_of(const struct ok_resize_state *s, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, bool need_roi,
		   struct resize_plan *p, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = num_inputs ? in[0] : NULL, *roi, *scales, *sizes;
	uint32_t axis_of[NPU_TENSOR_MAX_RANK], n_axes, i;
	double sc[NPU_TENSOR_MAX_RANK];
	int64_t sz[NPU_TENSOR_MAX_RANK];
	bool have_sizes = false;

	if (!x)
		return ok_fail(err, err_size, "input X is required");
	if (x->dtype == NPU_DTYPE_BOOL)
		return ok_fail(err, err_size, "X must be numeric, not bool");
	if (x->rank < 1)
		return ok_fail(err, err_size, "X must have rank 1 or more");
	p->rank = x->rank;
	if (s->upsample || s->opset < 11) {
		roi = NULL;
		scales = s->upsample && s->opset < 9 ? NULL : opt_input(num_inputs, in, 1);
		sizes = NULL;
		if (!scales && !(s->upsample && s->opset < 9))
			return ok_fail(err, err_size, "input scales is required");
	} else {
		roi = opt_input(num_inputs, in, 1);
		scales = opt_input(num_inputs, in, 2);
		sizes = opt_input(num_inputs, in, 3);
	}
	if (s->n_axes) {
		bool seen[NPU_TENSOR_MAX_RANK] = { false };

		for (i = 0; i < s->n_axes; i++) {
			if (ok_axis(s->axes[i], x->rank, &axis_of[i], "axis", err, err_size))
				return -EINVAL;
			if (seen[axis_of[i]])
				return ok_fail(err, err_size, "axis %lld is repeated",
					       (long long)s->axes[i]);
			seen[axis_of[i]] = true;
		}
		n_axes = s->n_axes;
	} else {
		for (i = 0; i < x->rank; i++)
			axis_of[i] = i;
		n_axes = x->rank;
	}
	for (i = 0; i < x->rank; i++) {
		p->in[i] = p->out[i] = x->dims[i];
		p->scale[i] = 1.0;
		p->roi_start[i] = 0.0;
		p->roi_end[i] = 1.0;
	}
	if (scales && sizes)
		return ok_fail(err, err_size, "only one of scales and sizes may be given");
	if (s->upsample && s->opset < 9) {
		if (s->n_scales != x->rank)
			return ok_fail(err, err_size, "scales has %u values for rank %u",
				       s->n_scales, x->rank);
		for (i = 0; i < x->rank; i++)
			sc[i] = s->scales[i];
	} else if (scales) {
		if (!scales->data)
			return ok_fail(err, err_size, "scales must be a constant");
		if (!ok_is_float(scales->dtype))
			return ok_fail(err, err_size, "scales must be float, not %s",
				       ok_dtype_name(scales->dtype));
		if (scales->elems != n_axes)
			return ok_fail(err, err_size, "scales has %llu values for %u axes",
				       (unsigned long long)scales->elems, n_axes);
		for (i = 0; i < n_axes; i++)
			sc[i] = (float)ok_get_f(scales, i);
	} else if (sizes) {
		size_t cnt;

		if (sizes->dtype != NPU_DTYPE_INT64)
			return ok_fail(err, err_size, "sizes must be int64, not %s",
				       ok_dtype_name(sizes->dtype));
		if (ok_read_ints(sizes, sz, NPU_TENSOR_MAX_RANK, &cnt, "sizes", err, err_size))
			return -EINVAL;
		if (cnt != n_axes)
			return ok_fail(err, err_size, "sizes has %zu values for %u axes", cnt, n_axes);
		have_sizes = true;
	} else {
		return ok_fail(err, err_size, "one of scales and sizes is required");
	}
	if (have_sizes) {
		double r = s->aspect == OK_ASPECT_NOT_LARGER ? INFINITY : 0.0;

		for (i = 0; i < n_axes; i++) {
			if (sz[i] < 1 || sz[i] > UINT32_MAX)
				return ok_fail(err, err_size, "sizes[%u] (%lld) is out of range", i,
					       (long long)sz[i]);
			if (s->aspect != OK_ASPECT_STRETCH) {
				double q = (double)(float)((float)sz[i] / (float)x->dims[axis_of[i]]);

				r = s->aspect == OK_ASPECT_NOT_LARGER ? fmin(r, q) : fmax(r, q);
			}
		}
		for (i = 0; i < n_axes; i++) {
			uint32_t a = axis_of[i];

			if (s->aspect == OK_ASPECT_STRETCH) {
				p->out[a] = (uint32_t)sz[i];
				p->scale[a] = (float)sz[i] / (float)x->dims[a];
			} else {
				double o = round(r * x->dims[a]);

				if (o < 1 || o > UINT32_MAX)
					return ok_fail(err, err_size, "axis %u's output extent is out of range",
						       a);
				p->out[a] = (uint32_t)o;
				p->scale[a] = r;
			}
		}
	} else {
		for (i = 0; i < n_axes; i++) {
			uint32_t a = axis_of[i];
			double o;

			if (!(sc[i] > 0) || !isfinite(sc[i]))
				return ok_fail(err, err_size, "scale %g of axis %u must be positive", sc[i],
					       a);
			if (s->upsample && sc[i] < 1)
				return ok_fail(err, err_size, "Upsample's scale %g of axis %u is below 1",
					       sc[i], a);
			o = floor((double)(float)((float)x->dims[a] * (float)sc[i]));
			if (o < 1 || o > UINT32_MAX)
				return ok_fail(err, err_size,
					       "axis %u's output extent (%g) is out of range", a, o);
			p->out[a] = (uint32_t)o;
			p->scale[a] = sc[i];
		}
	}
	if (s->coord == OK_COORD_TF_CROP_AND_RESIZE) {
		if (!roi)
			return ok_fail(err, err_size, "tf_crop_and_resize needs the input roi");
		if (roi->elems != 2 * n_axes)
			return ok_fail(err, err_size, "roi has %llu values for %u axes",
				       (unsigned long long)roi->elems, n_axes);
		if (!ok_is_float(roi->dtype))
			return ok_fail(err, err_size, "roi must be float, not %s",
				       ok_dtype_name(roi->dtype));
		if (need_roi && roi->data)
			for (i = 0; i < n_axes; i++) {
				p->roi_start[axis_of[i]] = ok_get_f(roi, i);
				p->roi_end[axis_of[i]] = ok_get_f(roi, n_axes + i);
			}
	}
	if (s->antialias && s->mode != OK_RESIZE_NEAREST)
		for (i = 0; i < x->rank; i++)
			if (p->scale[i] < 1 && (s->mode == OK_RESIZE_CUBIC ? 4 : 2) / p->scale[i] + 1 >
						       OK_RESIZE_MAX_TAPS)
				return ok_fail(err, err_size,
					       "antialias over axis %u's scale %g needs too many taps", i,
					       p->scale[i]);
	return 0;
}

static int resize_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	struct resize_plan p;
	uint32_t i;
	int rc = plan_of(state, num_inputs, in, false, &p, err, err_size);

	if (rc)
		return rc;
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	for (i = 0; i < p.rank; i++)
		dims[i] = p.out[i];
	return ok_nn_out_shape(out[0], in[0]->dtype, p.rank, dims, err, err_size);
}

static uint32_t taps_per_output(const struct ok_resize_state *s, double scale)
{
	uint32_t base = s->mode == OK_RESIZE_NEAREST ? 1 : s->mode == OK_RESIZE_LINEAR ? 2 : 4;

	if (s->antialias && s->mode != OK_RESIZE_NEAREST && scale < 1)
		return (uint32_t)ceil(base / scale) + 2;
	return base;
}

static uint64_t resize_work(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    const struct npu_kernel_tensor *const *out)
{
	struct resize_plan p;
	uint64_t w = in[0]->elems, elems = in[0]->elems;
	uint32_t a;

	(void)num_outputs;
	if (plan_of(state, num_inputs, in, false, &p, NULL, 0))
		return UINT64_MAX;
	/* Axis by axis, each intermediate element sums its taps. */
	for (a = 0; a < p.rank; a++) {
		elems = elems / p.in[a] * p.out[a];
		w = ok_nn_add_sat(w, ok_nn_mul_sat(elems, taps_per_output(state, p.scale[a])));
	}
	return ok_nn_add_sat(w, out[0]->elems);
}

/* Output coordinate @x of axis @a in the input's coordinates. */
static double original_coord(const struct ok_resize_state *s, const struct resize_plan *p,
			     uint32_t a, uint32_t x)
{
	double scale = p->scale[a], in = p->in[a], out = p->out[a];

	switch (s->coord) {
	case OK_COORD_HALF_PIXEL:
		return (x + 0.5) / scale - 0.5;
	case OK_COORD_HALF_PIXEL_SYMMETRIC: {
		double adjustment = out / (scale * in), center = in / 2;

		return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
	}
	case OK_COORD_PYTORCH_HALF_PIXEL:
		return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
	case OK_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5) / scale;
	case OK_COORD_ALIGN_CORNERS:
		return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
	case OK_COORD_TF_CROP_AND_RESIZE:
		if (out > 1)
			return p->roi_start[a] * (in - 1) +
			       x * (p->roi_end[a] - p->roi_start[a]) * (in - 1) / (out - 1);
		return 0.5 * (p->roi_start[a] + p->roi_end[a]) * (in - 1);
	case OK_COORD_ASYMMETRIC:
	default:
		return x / scale;
	}
}

static int64_t nearest_index(const struct ok_resize_state *s, double v, double scale)
{
	double f = floor(v);

	switch (s->nearest) {
	case OK_NEAREST_ROUND_PREFER_FLOOR:
		return (int64_t)(v - f == 0.5 ? f : round(v));
	case OK_NEAREST_ROUND_PREFER_CEIL:
		return (int64_t)(v - f == 0.5 ? f + 1 : round(v));
	case OK_NEAREST_FLOOR:
		return (int64_t)f;
	case OK_NEAREST_CEIL:
		return (int64_t)ceil(v);
	case OK_NEAREST_SIMPLE:
	default:
		return (int64_t)(scale < 1 ? ceil(v) : f);
	}
}

static double cubic_weight(double a, double d)
{
	d = fabs(d);
	if (d <= 1)
		return ((a + 2) * d - (a + 3)) * d * d + 1;
	if (d < 2)
		return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
	return 0;
}

/* One axis: for each output coordinate, @per taps (index, weight) and whether it extrapolates. */
struct axis_taps {
	uint32_t per;
	uint32_t *idx;
	double *w;
	bool *outside;
};

static void clamp_idx(int64_t i, uint32_t n, uint32_t *out)
{
	*out = (uint32_t)(i < 0 ? 0 : i >= n ? n - 1 : i);
}

static int axis_taps_of(const struct ok_resize_state *s, const struct resize_plan *p, uint32_t a,
			struct axis_taps *t)
{
	uint32_t n = p->in[a], o, k;
	double scale = p->scale[a];

	t->per = taps_per_output(s, scale);
	t->idx = calloc((size_t)p->out[a] * t->per, sizeof(*t->idx));
	t->w = calloc((size_t)p->out[a] * t->per, sizeof(*t->w));
	t->outside = calloc(p->out[a], sizeof(*t->outside));
	if (!t->idx || !t->w || !t->outside)
		return -ENOMEM;
	for (o = 0; o < p->out[a]; o++) {
		double x = original_coord(s, p, a, o), f, sum = 0;
		uint32_t *idx = t->idx + (size_t)o * t->per;
		double *w = t->w + (size_t)o * t->per;

		if (s->coord == OK_COORD_TF_CROP_AND_RESIZE && (x < 0 || x > n - 1))
			t->outside[o] = true;
		if (!isfinite(x))
			x = 0;
		/* Far beyond the input every index clamps to an edge anyway. */
		x = fmax(-4.0 - n, fmin(x, 2.0 * n + 4));
		if (s->mode == OK_RESIZE_NEAREST) {
			clamp_idx(nearest_index(s, x, scale), n, &idx[0]);
			w[0] = 1;
			continue;
		}
		if (s->antialias && scale < 1) {
			/* The filter widens by 1/scale; its weights are normalised. */
			double support = (s->mode == OK_RESIZE_CUBIC ? 2.0 : 1.0) / scale;
			int64_t lo = (int64_t)floor(x - support) + 1, i;

			for (k = 0, i = lo; k < t->per; k++, i++) {
				double d = (i - x) * scale;
				double wt = s->mode == OK_RESIZE_CUBIC ? cubic_weight(s->cubic_a, d) :
									 fmax(0.0, 1 - fabs(d));

				if (i < 0 || i >= n)
					wt = 0;
				clamp_idx(i, n, &idx[k]);
				w[k] = wt;
				sum += wt;
			}
			for (k = 0; k < t->per && sum != 0; k++)
				w[k] /= sum;
			continue;
		}
		if (s->mode == OK_RESIZE_LINEAR) {
			double xc = fmax(0.0, fmin(x, n - 1.0));

			f = floor(xc);
			clamp_idx((int64_t)f, n, &idx[0]);
			clamp_idx((int64_t)f + 1, n, &idx[1]);
			w[1] = xc - f;
			w[0] = 1 - w[1];
			continue;
		}
		f = floor(x);
		for (k = 0; k < 4; k++) {
			int64_t i = (int64_t)f - 1 + k;
			double wt = cubic_weight(s->cubic_a, x - (double)i);

			if (s->exclude_outside && (i < 0 || i >= n))
				wt = 0;
			clamp_idx(i, n, &idx[k]);
			w[k] = wt;
			sum += wt;
		}
		if (s->exclude_outside && sum != 0)
			for (k = 0; k < 4; k++)
				w[k] /= sum;
	}
	return 0;
}

static void axis_taps_free(struct axis_taps *t)
{
	free(t->idx);
	free(t->w);
	free(t->outside);
}

/* Whether the taps of an axis give each output its own input sample. */
static bool is_identity(const struct axis_taps *t, uint32_t n)
{
	uint32_t o, k;

	for (o = 0; o < n; o++) {
		double self = 0;

		for (k = 0; k < t->per; k++) {
			double w = t->w[(size_t)o * t->per + k];

			if (t->idx[(size_t)o * t->per + k] == o)
				self += w;
			else if (w != 0)
				return false;
		}
		if (self != 1)
			return false;
	}
	return true;
}

static int resize_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_resize_state *s = state;
	struct axis_taps taps[NPU_TENSOR_MAX_RANK] = { 0 };
	uint32_t dims[NPU_TENSOR_MAX_RANK], a;
	struct npu_kernel_tensor *y = out[0];
	double *cur = NULL, *next = NULL;
	struct resize_plan p;
	uint64_t elems;
	char err[160];
	int rc;

	(void)num_outputs;
	if (plan_of(s, num_inputs, in, true, &p, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	elems = in[0]->elems;
	cur = malloc(elems * sizeof(double));
	if (!cur)
		return -ENOMEM;
	ok_load_f64(in[0], 0, elems, cur);
	memcpy(dims, in[0]->dims, sizeof(dims));
	rc = 0;
	for (a = 0; a < p.rank && !rc; a++) {
		uint64_t outer = 1, inner = 1, o, q, k, e, next_elems, work = 0;
		const struct axis_taps *t = &taps[a];
		uint32_t d;

		rc = axis_taps_of(s, &p, a, &taps[a]);
		if (rc)
			break;
		if (p.in[a] == p.out[a] && is_identity(t, p.out[a]))
			continue;
		for (d = 0; d < a; d++)
			outer *= dims[d];
		for (d = a + 1; d < p.rank; d++)
			inner *= dims[d];
		next_elems = outer * p.out[a] * inner;
		next = calloc(next_elems, sizeof(double));
		if (!next) {
			rc = -ENOMEM;
			break;
		}
		for (q = 0; q < outer && !rc; q++) {
			const double *src = cur + q * p.in[a] * inner;
			double *dst = next + q * p.out[a] * inner;

			for (o = 0; o < p.out[a]; o++) {
				double *row = dst + o * inner;

				for (k = 0; k < t->per; k++) {
					double w = t->w[o * t->per + k];
					const double *from = src + (uint64_t)t->idx[o * t->per + k] * inner;

					if (w == 0)
						continue;
					for (e = 0; e < inner; e++)
						row[e] += w * from[e];
				}
			}
			work += p.out[a] * inner * t->per;
			if (work >= OK_POLL_EVERY) {
				rc = npu_kernel_poll(call, work);
				work = 0;
			}
		}
		free(cur);
		cur = next;
		next = NULL;
		dims[a] = p.out[a];
	}
	if (!rc && s->coord == OK_COORD_TF_CROP_AND_RESIZE) {
		/* An output whose coordinate on any axis falls outside the roi's input. */
		uint32_t idx[NPU_TENSOR_MAX_RANK] = { 0 };
		uint64_t q;

		for (q = 0; q < y->elems; q++) {
			bool outside = false;

			for (a = 0; a < p.rank; a++)
				if (taps[a].outside && taps[a].outside[idx[a]])
					outside = true;
			if (outside)
				cur[q] = s->extrapolation;
			for (a = p.rank; a-- > 0;) {
				if (++idx[a] < p.out[a])
					break;
				idx[a] = 0;
			}
		}
	}
	if (!rc) {
		if (ok_is_float(y->dtype)) {
			ok_store_f64(y, 0, y->elems, cur);
		} else {
			uint64_t q;

			/* Integers round to nearest and saturate at their range. */
			for (q = 0; q < y->elems; q++) {
				double v = nearbyint(cur[q]);

				if (y->dtype == NPU_DTYPE_UINT8)
					v = fmin(255, fmax(0, v));
				else if (y->dtype == NPU_DTYPE_INT8)
					v = fmin(127, fmax(-128, v));
				ok_set_f(y, q, v);
			}
		}
	}
	for (a = 0; a < p.rank; a++)
		axis_taps_free(&taps[a]);
	free(cur);
	free(next);
	return rc;
}

const struct npu_kernel ok_kernel_resize = {
	.size = sizeof(struct npu_kernel),
	.name = "Resize",
	.infer = resize_infer,
	.work = resize_work,
	.run = resize_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_resize = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Resize",
	.since_version = 10,
	.kernel = &ok_kernel_resize,
	.create = resize_create,
};

const struct npu_onnx_op ok_op_upsample = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Upsample",
	.since_version = 7,
	.kernel = &ok_kernel_resize,
	.create = upsample_create,
};
