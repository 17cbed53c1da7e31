// SPDX-License-Identifier: MIT
/*
 * LayerNormalization, InstanceNormalization, GroupNormalization,
 * LpNormalization, MeanVarianceNormalization, LRN and
 * BatchNormalization.  Statistics are taken in doubles, the variance as
 * the mean of squared deviations (population variance, as ONNX's
 * reference and onnxruntime use), whatever the stash type asks: it only
 * ever asks for at least float32.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_reduce.h"

static int need_input(size_t num_inputs, const struct npu_kernel_tensor *const *in, size_t i,
		      const char *what, char *err, size_t err_size)
{
	if (num_inputs <= i || !in[i])
		return ok_fail(err, err_size, "the %s input is missing", what);
	return ok_red_check_float(what, in[i]->dtype, err, err_size);
}

/* A per-channel parameter: [@count] values. */
static int check_vector(const struct npu_kernel_tensor *t, const char *what, uint64_t count,
			char *err, size_t err_size)
{
	int rc = ok_red_check_float(what, t->dtype, err, err_size);

	if (rc)
		return rc;
	if (t->rank != 1 || t->dims[0] != count)
		return ok_fail(err, err_size, "the %s must be 1-D of %llu values", what,
			       (unsigned long long)count);
	return 0;
}

static int same_shape_out(const struct npu_kernel_tensor *x, struct npu_kernel_tensor *y)
{
	y->dtype = x->dtype;
	return ok_set_shape(y, x->rank, x->dims);
}

/* Mean and 1/sqrt(variance + epsilon) of @n values @stride apart from @base. */
static int moments(const struct npu_kernel_tensor *x, uint64_t base, uint64_t n,
		   uint64_t stride, double epsilon, double *mean, double *inv_std,
		   struct npu_kernel_call *call, uint64_t *done)
{
	double sum = 0, dev = 0;
	uint64_t j;
	int rc;

	for (j = 0; j < n; j++) {
		sum += ok_red_get(x, base + j * stride);
		if ((rc = ok_tick(call, done, 1)))
			return rc;
	}
	*mean = sum / (double)n;
	for (j = 0; j < n; j++) {
		double d = ok_red_get(x, base + j * stride) - *mean;

		dev += d * d;
		if ((rc = ok_tick(call, done, 1)))
			return rc;
	}
	*inv_std = 1 / sqrt(dev / (double)n + epsilon);
	return 0;
}

/* ---- LayerNormalization ------------------------------------------------------- */

/* Scale or B broadcast to the normalized dimensions X.shape[axis:]. */
static int layernorm_param(const struct npu_kernel_tensor *x, uint32_t axis,
			   const struct npu_kernel_tensor *p, const char *what, char *err,
			   size_t err_size)
{
	uint32_t norm_rank = x->rank - axis, d;
	int rc = ok_red_check_float(what, p->dtype, err, err_size);

	if (rc)
		return rc;
	if (p->rank > norm_rank)
		return ok_fail(err, err_size,
			       "the %s has rank %u, above the %u normalized dimensions", what,
			       p->rank, norm_rank);
	for (d = 0; d < p->rank; d++) {
		uint32_t xd = x->dims[x->rank - p->rank + d];

		if (p->dims[d] != xd && p->dims[d] != 1)
			return ok_fail(err, err_size,
				       "the %s's dimension %u (%u) does not broadcast to %u", what,
				       d, p->dims[d], xd);
	}
	return 0;
}

static int layernorm_shape(const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in, size_t num_outputs,
			   struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint32_t axis, dims[NPU_TENSOR_MAX_RANK], d;
	size_t o;
	int rc;

	rc = ok_red_check_float("X", x->dtype, err, err_size);
	if (rc)
		return rc;
	rc = ok_axis(s->axis, x->rank, &axis, "axis", err, err_size);
	if (rc)
		return rc;
	if (num_inputs < 2 || !in[1])
		return ok_fail(err, err_size, "the Scale input is missing");
	rc = layernorm_param(x, axis, in[1], "Scale", err, err_size);
	if (rc)
		return rc;
	if (num_inputs > 2 && in[2]) {
		rc = layernorm_param(x, axis, in[2], "B", err, err_size);
		if (rc)
			return rc;
	}
	rc = same_shape_out(x, out[0]);
	if (rc)
		return rc;
	for (d = 0; d < x->rank; d++)
		dims[d] = d < axis ? x->dims[d] : 1;
	for (o = 1; o < num_outputs && o < 3; o++) {
		if (!out[o])
			continue;
		out[o]->dtype = x->dtype == NPU_DTYPE_FP64 ? NPU_DTYPE_FP64 : NPU_DTYPE_FP32;
		rc = ok_set_shape(out[o], x->rank, dims);
		if (rc)
			return rc;
	}
	return 0;
}

OK_RED_INFER(layernorm_infer, layernorm_shape, false)

/* @p (broadcast to the last @n elements' shape) expanded into @v. */
static void expand_param(const struct npu_kernel_tensor *x, uint32_t axis,
			 const struct npu_kernel_tensor *p, double def, double *v, uint64_t n)
{
	struct npu_kernel_tensor shape = { .rank = x->rank - axis };
	struct ok_bcast b;
	uint64_t j;

	if (!p) {
		for (j = 0; j < n; j++)
			v[j] = def;
		return;
	}
	memcpy(shape.dims, x->dims + axis, shape.rank * sizeof(shape.dims[0]));
	ok_bcast_init(&b, p, &shape);
	for (j = 0; j < n; j++)
		v[j] = ok_red_get(p, ok_bcast_index(&b, j));
}

static int layernorm_run(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	struct npu_kernel_tensor *mean_out = num_outputs > 1 ? out[1] : NULL;
	struct npu_kernel_tensor *inv_out = num_outputs > 2 ? out[2] : NULL;
	uint32_t axis = (uint32_t)(s->axis < 0 ? s->axis + x->rank : s->axis);
	uint64_t outer = 1, n, r, j, done = 0;
	double *scale, *bias;
	uint32_t d;
	int rc = 0;

	for (d = 0; d < axis; d++)
		outer *= x->dims[d];
	n = x->elems / outer;
	scale = malloc(2 * n * sizeof(*scale));
	if (!scale)
		return npu_kernel_fail(call, -ENOMEM, "no memory for %llu parameters",
				       (unsigned long long)n);
	bias = scale + n;
	expand_param(x, axis, in[1], 1, scale, n);
	expand_param(x, axis, num_inputs > 2 ? in[2] : NULL, 0, bias, n);
	for (r = 0; r < outer; r++) {
		double mean, inv_std;

		rc = moments(x, r * n, n, 1, s->epsilon, &mean, &inv_std, call, &done);
		if (rc)
			break;
		for (j = 0; j < n && !rc; j++) {
			ok_red_set(out[0], r * n + j,
				 (ok_red_get(x, r * n + j) - mean) * inv_std * scale[j] + bias[j]);
			rc = ok_tick(call, &done, 1);
		}
		if (rc)
			break;
		if (mean_out)
			ok_red_set(mean_out, r, mean);
		if (inv_out)
			ok_red_set(inv_out, r, inv_std);
	}
	free(scale);
	return rc;
}

const struct npu_kernel ok_layernorm_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "LayerNormalization",
	.infer = layernorm_infer,
	.work = ok_red_work_3_passes,
	.run = layernorm_run,
	.release = ok_state_free,
};

/* ---- InstanceNormalization, GroupNormalization ------------------------------------- */

static int channels_input(const struct npu_kernel_tensor *x, char *err, size_t err_size)
{
	int rc = ok_red_check_float("the input", x->dtype, err, err_size);

	if (rc)
		return rc;
	if (x->rank < 2)
		return ok_fail(err, err_size, "the input must be [N, C, ...], not of rank %u",
			       x->rank);
	return 0;
}

static int instancenorm_shape(const void *state, size_t num_inputs,
			      const struct npu_kernel_tensor *const *in, size_t num_outputs,
			      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	int rc;

	(void)state;
	(void)num_outputs;
	rc = channels_input(x, err, err_size);
	if (!rc)
		rc = need_input(num_inputs, in, 1, "scale", err, err_size);
	if (!rc)
		rc = need_input(num_inputs, in, 2, "B", err, err_size);
	if (!rc)
		rc = check_vector(in[1], "scale", x->dims[1], err, err_size);
	if (!rc)
		rc = check_vector(in[2], "B", x->dims[1], err, err_size);
	if (rc)
		return rc;
	return same_shape_out(x, out[0]);
}

OK_RED_INFER(instancenorm_infer, instancenorm_shape, false)

static int instancenorm_run(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t C = x->dims[1], D = x->elems / (x->dims[0] * C), r, j, done = 0;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	for (r = 0; r < x->dims[0] * C; r++) {
		double mean, inv_std, scale = ok_red_get(in[1], r % C), bias = ok_red_get(in[2], r % C);

		rc = moments(x, r * D, D, 1, s->epsilon, &mean, &inv_std, call, &done);
		if (rc)
			return rc;
		for (j = 0; j < D; j++) {
			ok_red_set(out[0], r * D + j,
				 (ok_red_get(x, r * D + j) - mean) * inv_std * scale + bias);
			if ((rc = ok_tick(call, &done, 1)))
				return rc;
		}
	}
	return 0;
}

const struct npu_kernel ok_instancenorm_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "InstanceNormalization",
	.infer = instancenorm_infer,
	.work = ok_red_work_3_passes,
	.run = instancenorm_run,
	.release = ok_state_free,
};

static int groupnorm_shape(const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in, size_t num_outputs,
			   struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t params;
	int rc;

	(void)num_outputs;
	rc = channels_input(x, err, err_size);
	if (rc)
		return rc;
	if (s->num_groups < 1 || x->dims[1] % s->num_groups)
		return ok_fail(err, err_size,
			       "num_groups (%lld) must divide the %u channels",
			       (long long)s->num_groups, x->dims[1]);
	params = s->group_scale_per_channel ? x->dims[1] : (uint64_t)s->num_groups;
	rc = need_input(num_inputs, in, 1, "scale", err, err_size);
	if (!rc)
		rc = need_input(num_inputs, in, 2, "bias", err, err_size);
	if (!rc)
		rc = check_vector(in[1], "scale", params, err, err_size);
	if (!rc)
		rc = check_vector(in[2], "bias", params, err, err_size);
	if (rc)
		return rc;
	return same_shape_out(x, out[0]);
}

OK_RED_INFER(groupnorm_infer, groupnorm_shape, false)

static int groupnorm_run(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t G = (uint64_t)s->num_groups, C = x->dims[1];
	uint64_t D = x->elems / (x->dims[0] * C), per = C / G * D, r, j, done = 0;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	for (r = 0; r < x->dims[0] * G; r++) {
		double mean, inv_std;

		rc = moments(x, r * per, per, 1, s->epsilon, &mean, &inv_std, call, &done);
		if (rc)
			return rc;
		for (j = 0; j < per; j++) {
			uint64_t p = s->group_scale_per_channel ? (r % G) * (C / G) + j / D : r % G;

			ok_red_set(out[0], r * per + j,
				 (ok_red_get(x, r * per + j) - mean) * inv_std * ok_red_get(in[1], p) +
					 ok_red_get(in[2], p));
			if ((rc = ok_tick(call, &done, 1)))
				return rc;
		}
	}
	return 0;
}

const struct npu_kernel ok_groupnorm_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "GroupNormalization",
	.infer = groupnorm_infer,
	.work = ok_red_work_3_passes,
	.run = groupnorm_run,
	.release = ok_state_free,
};

/* ---- LpNormalization ------------------------------------------------------------ */

static int lpnorm_shape(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_norm_state *s = state;
	uint32_t axis;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	rc = ok_red_check_float("the input", in[0]->dtype, err, err_size);
	if (rc)
		return rc;
	if (s->p != 1 && s->p != 2)
		return ok_fail(err, err_size, "p must be 1 or 2, not %lld", (long long)s->p);
	rc = ok_axis(s->axis, in[0]->rank, &axis, "axis", err, err_size);
	if (rc)
		return rc;
	return same_shape_out(in[0], out[0]);
}

OK_RED_INFER(lpnorm_infer, lpnorm_shape, false)

static int lpnorm_run(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint32_t axis = (uint32_t)(s->axis < 0 ? s->axis + x->rank : s->axis);
	uint64_t outer, n, inner, o, i, j, done = 0;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	ok_red_split(x, axis, &outer, &n, &inner);
	for (o = 0; o < outer; o++) {
		for (i = 0; i < inner; i++) {
			uint64_t base = o * n * inner + i;
			double norm = 0;

			for (j = 0; j < n; j++) {
				double v = ok_red_get(x, base + j * inner);

				norm += s->p == 1 ? fabs(v) : v * v;
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
			if (s->p == 2)
				norm = sqrt(norm);
			/* an all-zero vector stays zero rather than becoming NaNs */
			for (j = 0; j < n; j++) {
				double v = ok_red_get(x, base + j * inner);

				ok_red_set(out[0], base + j * inner, norm != 0 ? v / norm : v);
				if ((rc = ok_tick(call, &done, 1)))
					return rc;
			}
		}
	}
	return 0;
}

const struct npu_kernel ok_lpnorm_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "LpNormalization",
	.infer = lpnorm_infer,
	.work = ok_red_work_3_passes,
	.run = lpnorm_run,
	.release = ok_state_free,
};

/* ---- MeanVarianceNormalization ------------------------------------------------------- */

static int mvn_mask(const struct ok_norm_state *s, const struct npu_kernel_tensor *x, bool *mask,
		    char *err, size_t err_size)
{
	uint32_t d, i;
	int rc;

	memset(mask, 0, NPU_TENSOR_MAX_RANK * sizeof(*mask));
	for (i = 0; i < s->num_axes; i++) {
		rc = ok_axis(s->axes[i], x->rank, &d, "axis", err, err_size);
		if (rc)
			return rc;
		if (mask[d])
			return ok_fail(err, err_size, "axis %lld is listed twice",
				       (long long)s->axes[i]);
		mask[d] = true;
	}
	return 0;
}

static int mvn_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	bool mask[NPU_TENSOR_MAX_RANK];
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	rc = ok_red_check_float("the input", in[0]->dtype, err, err_size);
	if (!rc)
		rc = mvn_mask(state, in[0], mask, err, err_size);
	if (rc)
		return rc;
	return same_shape_out(in[0], out[0]);
}

OK_RED_INFER(mvn_infer, mvn_shape, false)

/* The index of element @i's statistics: its coordinates along the axes kept. */
static uint64_t mvn_group(const struct npu_kernel_tensor *x, const bool *mask, uint64_t i)
{
	uint64_t g = 0, mul = 1;
	uint32_t d;

	for (d = x->rank; d-- > 0;) {
		uint64_t c = i % x->dims[d];

		i /= x->dims[d];
		if (!mask[d]) {
			g += c * mul;
			mul *= x->dims[d];
		}
	}
	return g;
}

static int mvn_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	uint64_t groups = 1, count = 1, i, done = 0;
	bool mask[NPU_TENSOR_MAX_RANK];
	double *sum, *sq;
	char err[128];
	uint32_t d;
	int rc = 0;

	(void)num_inputs;
	(void)num_outputs;
	if (mvn_mask(state, x, mask, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	for (d = 0; d < x->rank; d++) {
		if (mask[d])
			count *= x->dims[d];
		else
			groups *= x->dims[d];
	}
	sum = calloc(2 * groups, sizeof(*sum));
	if (!sum)
		return npu_kernel_fail(call, -ENOMEM, "no memory for %llu statistics",
				       (unsigned long long)groups);
	sq = sum + groups;
	for (i = 0; i < x->elems; i++) {
		uint64_t g = mvn_group(x, mask, i);

		sum[g] += ok_red_get(x, i);
		if ((rc = ok_tick(call, &done, 1)))
			goto out;
	}
	for (i = 0; i < groups; i++)
		sum[i] /= (double)count;
	for (i = 0; i < x->elems; i++) {
		uint64_t g = mvn_group(x, mask, i);
		double dv = ok_red_get(x, i) - sum[g];

		sq[g] += dv * dv;
		if ((rc = ok_tick(call, &done, 1)))
			goto out;
	}
	/* onnxruntime's epsilon, added to the standard deviation */
	for (i = 0; i < groups; i++)
		sq[i] = sqrt(sq[i] / (double)count) + 1e-9;
	for (i = 0; i < x->elems; i++) {
		uint64_t g = mvn_group(x, mask, i);

		ok_red_set(out[0], i, (ok_red_get(x, i) - sum[g]) / sq[g]);
		if ((rc = ok_tick(call, &done, 1)))
			goto out;
	}
out:
	free(sum);
	return rc;
}

const struct npu_kernel ok_mvn_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "MeanVarianceNormalization",
	.infer = mvn_infer,
	.work = ok_red_work_3_passes,
	.run = mvn_run,
	.release = ok_state_free,
};

/* ---- LRN ------------------------------------------------------------------------------ */

static int lrn_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_norm_state *s = state;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	rc = channels_input(in[0], err, err_size);
	if (rc)
		return rc;
	if (s->size < 1)
		return ok_fail(err, err_size, "size must be positive, not %lld", (long long)s->size);
	return same_shape_out(in[0], out[0]);
}

OK_RED_INFER(lrn_infer, lrn_shape, false)

static uint64_t lrn_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	const struct ok_norm_state *s = state;
	uint64_t window = (uint64_t)s->size < in[0]->dims[1] ? (uint64_t)s->size : in[0]->dims[1];

	(void)num_inputs;
	(void)num_outputs;
	(void)out;
	return in[0]->elems * (window + 1);
}

/* Each element over the sum of squares of its channel window [c - (size-1)/2, c + size/2]. */
static int lrn_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	int64_t C = x->dims[1], before = (s->size - 1) / 2, after = s->size / 2;
	uint64_t D = x->elems / (x->dims[0] * (uint64_t)C), n, d, done = 0;
	int64_t c, k;
	int rc;

	(void)num_inputs;
	(void)num_outputs;
	for (n = 0; n < x->dims[0]; n++) {
		for (c = 0; c < C; c++) {
			int64_t lo = c - before > 0 ? c - before : 0;
			int64_t hi = after < C - 1 - c ? c + after : C - 1;

			for (d = 0; d < D; d++) {
				uint64_t at = (n * (uint64_t)C + (uint64_t)c) * D + d;
				double sq = 0;

				for (k = lo; k <= hi; k++) {
					double v = ok_red_get(x, (n * (uint64_t)C + (uint64_t)k) * D + d);

					sq += v * v;
				}
				ok_red_set(out[0], at,
					 ok_red_get(x, at) / pow(s->bias + s->alpha / (double)s->size * sq,
							       s->beta));
				if ((rc = ok_tick(call, &done, (uint64_t)(hi - lo) + 2)))
					return rc;
			}
		}
	}
	return 0;
}

const struct npu_kernel ok_lrn_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "LRN",
	.infer = lrn_infer,
	.work = lrn_work,
	.run = lrn_run,
	.release = ok_state_free,
};

/* ---- BatchNormalization ------------------------------------------------------------------ */

static int batchnorm_shape(const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in, size_t num_outputs,
			   struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	static const char *const names[] = { "X", "scale", "B", "input_mean", "input_var" };
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t count;
	size_t i;
	int rc;

	rc = channels_input(x, err, err_size);
	if (rc)
		return rc;
	/* before opset 9, spatial=0 takes one parameter per channel and position */
	count = s->spatial ? x->dims[1] : x->elems / x->dims[0];
	for (i = 1; i < 5; i++) {
		rc = need_input(num_inputs, in, i, names[i], err, err_size);
		if (rc)
			return rc;
		if (in[i]->elems != count || (s->spatial && in[i]->rank != 1))
			return ok_fail(err, err_size, "%s must hold %llu values, not %llu", names[i],
				       (unsigned long long)count,
				       (unsigned long long)in[i]->elems);
	}
	rc = same_shape_out(x, out[0]);
	if (rc)
		return rc;
	for (i = 1; i < num_outputs; i++) {
		if (!out[i])
			continue;
		if (!s->training_mode)
			return ok_fail(err, err_size,
				       "output %zu exists in training mode only", i);
		if (i > 4)
			return ok_fail(err, err_size, "BatchNormalization has at most 5 outputs");
		out[i]->dtype = in[i < 3 ? i + 2 : i]->dtype;
		rc = ok_set_shape(out[i], in[3]->rank, in[3]->dims);
		if (rc)
			return rc;
	}
	return 0;
}

OK_RED_INFER(batchnorm_infer, batchnorm_shape, false)

static int batchnorm_run(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_norm_state *s = state;
	const struct npu_kernel_tensor *x = in[0];
	uint64_t N = x->dims[0], C = x->dims[1], D = x->elems / (N * C), P, p, n, j, done = 0;
	double *mean, *var;
	int rc = 0;

	(void)num_inputs;
	/* parameters: per channel, or per channel and position (spatial=0) */
	P = s->spatial ? C : C * D;
	mean = malloc(2 * P * sizeof(*mean));
	if (!mean)
		return npu_kernel_fail(call, -ENOMEM, "no memory for %llu statistics",
				       (unsigned long long)P);
	var = mean + P;
	for (p = 0; p < P; p++) {
		mean[p] = ok_red_get(in[3], p);
		var[p] = ok_red_get(in[4], p);
	}
	if (s->training_mode) {
		/* the batch's own statistics over N and the positions */
		uint64_t per = s->spatial ? D : 1, cnt = N * per;
		size_t o;

		for (p = 0; p < P; p++) {
			double sum = 0, dev = 0, m;
			uint64_t c = s->spatial ? p : p / D, d0 = s->spatial ? 0 : p % D;

			for (n = 0; n < N; n++) {
				for (j = 0; j < per; j++) {
					sum += ok_red_get(x, (n * C + c) * D + d0 + j);
					if ((rc = ok_tick(call, &done, 1)))
						goto out;
				}
			}
			m = sum / (double)cnt;
			for (n = 0; n < N; n++) {
				for (j = 0; j < per; j++) {
					double dv = ok_red_get(x, (n * C + c) * D + d0 + j) - m;

					dev += dv * dv;
					if ((rc = ok_tick(call, &done, 1)))
						goto out;
				}
			}
			for (o = 1; o < num_outputs && o < 5; o++) {
				if (!out[o])
					continue;
				if (o == 1)
					ok_red_set(out[o], p, mean[p] * s->momentum + m * (1 - s->momentum));
				else if (o == 2)
					ok_red_set(out[o], p, var[p] * s->momentum +
							    dev / (double)cnt * (1 - s->momentum));
				else
					ok_red_set(out[o], p, o == 3 ? m : dev / (double)cnt);
			}
			mean[p] = m;
			var[p] = dev / (double)cnt;
		}
	}
	for (n = 0; n < N; n++) {
		for (j = 0; j < C * D; j++) {
			uint64_t at = n * C * D + j, c = j / D;
			uint64_t pi = s->spatial ? c : j;

			ok_red_set(out[0], at,
				 (ok_red_get(x, at) - mean[pi]) / sqrt(var[pi] + s->epsilon) *
						 ok_red_get(in[1], pi) +
					 ok_red_get(in[2], pi));
			if ((rc = ok_tick(call, &done, 1)))
				goto out;
		}
	}
out:
	free(mean);
	return rc;
}

const struct npu_kernel ok_batchnorm_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "BatchNormalization",
	.infer = batchnorm_infer,
	.work = ok_red_work_3_passes,
	.run = batchnorm_run,
	.release = ok_state_free,
};

/* ---- The ops' attributes ---------------------------------------------------------------------- */

enum norm_op {
	NORM_LAYER,
	NORM_INSTANCE,
	NORM_GROUP,
	NORM_LP,
	NORM_MVN,
	NORM_LRN,
	NORM_BATCH,
};

static int norm_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	enum norm_op op = (enum norm_op)(uintptr_t)opaque;
	struct ok_norm_state *s = ok_state_alloc(sizeof(*s));
	int64_t opset = npu_onnx_node_opset(node);
	const int64_t *axes;
	size_t n;

	if (!s)
		return -ENOMEM;
	s->epsilon = ok_attr_f(node, "epsilon", 1e-5f);
	s->axis = ok_attr_i(node, "axis", op == NORM_LAYER || op == NORM_LP ? -1 : 1);
	s->p = ok_attr_i(node, "p", 2);
	s->num_groups = ok_attr_i(node, "num_groups", 0);
	s->group_scale_per_channel = opset >= 21;
	s->size = ok_attr_i(node, "size", 0);
	s->alpha = ok_attr_f(node, "alpha", 1e-4f);
	s->beta = ok_attr_f(node, "beta", 0.75f);
	s->bias = ok_attr_f(node, "bias", 1.0f);
	s->momentum = ok_attr_f(node, "momentum", 0.9f);
	s->spatial = opset >= 9 || ok_attr_i(node, "spatial", 1) != 0;
	if (op == NORM_BATCH)
		s->training_mode = opset >= 14 ? ok_attr_i(node, "training_mode", 0) != 0
					       : npu_onnx_node_num_outputs(node) > 1;
	if (op == NORM_MVN) {
		static const int64_t def[] = { 0, 2, 3 };

		if (npu_onnx_attr_ints(node, "axes", &axes, &n)) {
			axes = def;
			n = 3;
		}
		if (n > NPU_TENSOR_MAX_RANK) {
			ok_state_free(s);
			return ok_fail(err, err_size, "axes has %zu values, at most %d are possible",
				       n, NPU_TENSOR_MAX_RANK);
		}
		memcpy(s->axes, axes, n * sizeof(*axes));
		s->num_axes = (uint32_t)n;
	}
	if (op == NORM_GROUP && npu_onnx_attr_int(node, "num_groups", &s->num_groups)) {
		ok_state_free(s);
		return ok_fail(err, err_size, "the num_groups attribute is missing");
	}
	if (op == NORM_LRN && npu_onnx_attr_int(node, "size", &s->size)) {
		ok_state_free(s);
		return ok_fail(err, err_size, "the size attribute is missing");
	}
	*state = s;
	return 0;
}

#define NORM_ENTRY(var, type, since, k, op)                                    \
	const struct npu_onnx_op var = {                                       \
		.size = sizeof(struct npu_onnx_op),                            \
		.domain = "",                                                  \
		.op_type = type,                                               \
		.since_version = since,                                        \
		.kernel = &k,                                                  \
		.create = norm_create,                                         \
		.opaque = (void *)(uintptr_t)(op),                             \
	}

NORM_ENTRY(ok_op_layernorm, "LayerNormalization", 17, ok_layernorm_kernel, NORM_LAYER);
NORM_ENTRY(ok_op_instancenorm, "InstanceNormalization", 1, ok_instancenorm_kernel, NORM_INSTANCE);
NORM_ENTRY(ok_op_groupnorm, "GroupNormalization", 18, ok_groupnorm_kernel, NORM_GROUP);
NORM_ENTRY(ok_op_lpnorm, "LpNormalization", 1, ok_lpnorm_kernel, NORM_LP);
NORM_ENTRY(ok_op_mvn, "MeanVarianceNormalization", 9, ok_mvn_kernel, NORM_MVN);
NORM_ENTRY(ok_op_lrn, "LRN", 1, ok_lrn_kernel, NORM_LRN);
NORM_ENTRY(ok_op_batchnorm, "BatchNormalization", 1, ok_batchnorm_kernel, NORM_BATCH);
