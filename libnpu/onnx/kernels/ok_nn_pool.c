// SPDX-License-Identifier: MIT
/*
 * MaxPool (with its Indices), AveragePool, LpPool and their Global forms
 * over any number of spatial axes, and MaxUnpool.  One (N, C) plane at a
 * time is converted to double, which holds every dtype these ops take
 * exactly; each output visits only the taps of its window that fall
 * inside the input.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

static int pool_create_kind(const struct npu_onnx_node *node, void **state, enum ok_pool_kind kind,
			    bool global, char *err, size_t err_size)
{
	struct ok_pool_state *s = ok_state_alloc(sizeof(*s));
	int rc = 0;

	if (!s)
		return -ENOMEM;
	s->kind = kind;
	s->global = global;
	if (!global)
		rc = ok_window_parse(node, &s->w, true, err, err_size);
	s->count_include_pad = ok_attr_i(node, "count_include_pad", 0) != 0;
	s->storage_order = ok_attr_i(node, "storage_order", 0);
	s->p = ok_attr_i(node, "p", 2);
	if (!rc && s->storage_order != 0 && s->storage_order != 1)
		rc = ok_fail(err, err_size, "storage_order (%lld) must be 0 or 1",
			     (long long)s->storage_order);
	if (!rc && kind == OK_POOL_LP && (s->p < 1 || s->p > 1024))
		rc = ok_fail(err, err_size, "p (%lld) must be in [1, 1024]", (long long)s->p);
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

#define POOL_CREATE(name, kind, global)						\
static int name(const struct npu_onnx_node *node, void *opaque, void **state,	\
		char *err, size_t err_size)					\
{										\
	(void)opaque;								\
	return pool_create_kind(node, state, kind, global, err, err_size);	\
}
POOL_CREATE(max_pool_create, OK_POOL_MAX, false)
POOL_CREATE(average_pool_create, OK_POOL_AVERAGE, false)
POOL_CREATE(lp_pool_create, OK_POOL_LP, false)
POOL_CREATE(global_max_pool_create, OK_POOL_MAX, true)
POOL_CREATE(global_average_pool_create, OK_POOL_AVERAGE, true)
POOL_CREATE(global_lp_pool_create, OK_POOL_LP, true)

static int pool_geom(const struct ok_pool_state *s, const struct npu_kernel_tensor *x,
		     struct ok_geom *g, char *err, size_t err_size)
{
	uint32_t kernel[OK_NN_MAX_SPATIAL], i;

	if (x->rank < 3)
		return ok_fail(err, err_size, "X has rank %u, needs N, C and a spatial axis", x->rank);
	if (s->global) {
		g->n = x->rank - 2;
		for (i = 0; i < g->n; i++) {
			g->in[i] = g->kernel[i] = x->dims[2 + i];
			g->out[i] = g->stride[i] = g->dilation[i] = 1;
			g->pad_begin[i] = g->pad_end[i] = 0;
		}
		return 0;
	}
	if (s->w.n_kernel != x->rank - 2)
		return ok_fail(err, err_size, "kernel_shape has %u values for %u spatial axes",
			       s->w.n_kernel, x->rank - 2);
	for (i = 0; i < s->w.n_kernel; i++)
		kernel[i] = (uint32_t)s->w.kernel[i];
	return ok_window_geom(&s->w, x, kernel, g, err, err_size);
}

static int pool_infer(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_pool_state *s = state;
	const struct npu_kernel_tensor *x = num_inputs ? in[0] : NULL;
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	struct ok_geom g;
	uint32_t i;
	int rc;

	if (!x)
		return ok_fail(err, err_size, "input X is required");
	if (!ok_is_float(x->dtype) &&
	    !(s->kind == OK_POOL_MAX && (x->dtype == NPU_DTYPE_INT8 || x->dtype == NPU_DTYPE_UINT8)))
		return ok_fail(err, err_size, "X must be a float type%s, not %s",
			       s->kind == OK_POOL_MAX ? ", int8 or uint8" : "",
			       ok_dtype_name(x->dtype));
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	if (num_outputs > 1 && out[1] && s->kind != OK_POOL_MAX)
		return ok_fail(err, err_size, "only MaxPool has a second output");
	rc = pool_geom(s, x, &g, err, err_size);
	if (rc)
		return rc;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (i = 0; i < g.n; i++)
		dims[2 + i] = g.out[i];
	rc = ok_nn_out_shape(out[0], x->dtype, x->rank, dims, err, err_size);
	if (!rc && num_outputs > 1 && out[1])
		rc = ok_nn_out_shape(out[1], NPU_DTYPE_INT64, x->rank, dims, err, err_size);
	return rc;
}

static uint64_t pool_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	const struct ok_pool_state *s = state;
	uint64_t kprod = 1;
	uint32_t i;

	(void)num_inputs;
	(void)num_outputs;
	if (s->global)
		return ok_nn_add_sat(in[0]->elems, out[0]->elems);
	for (i = 0; i < s->w.n_kernel; i++)
		kprod = ok_nn_mul_sat(kprod, (uint64_t)s->w.kernel[i]);
	return ok_nn_add_sat(ok_nn_mul_sat(out[0]->elems, kprod), in[0]->elems);
}

/* Taps [lo, hi) of a window starting at @start whose positions start + k * d lie in [first, end). */
static void tap_range(int64_t start, int64_t d, int64_t k, int64_t first, int64_t end,
		      int64_t *lo, int64_t *hi)
{
	int64_t l = 0, h;

	if (start < first)
		l = (first - start + d - 1) / d;
	if (start >= end) {
		h = 0;
	} else {
		h = (end - 1 - start) / d + 1;
		if (h > k)
			h = k;
	}
	*lo = l;
	*hi = h > l ? h : l;
}

/*
 * onnxruntime's max starts from the dtype's lowest value and takes only
 * greater ones: NaNs are skipped, and a window of NaNs or -infinities
 * gives that lowest value (and no index).
 */
static double lowest_of(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DTYPE_FP64: return -DBL_MAX;
	case NPU_DTYPE_FP16: return -65504.0;
	case NPU_DTYPE_BF16: return -3.38953139e38;
	case NPU_DTYPE_INT8: return -128.0;
	case NPU_DTYPE_UINT8: return 0.0;
	default: return -FLT_MAX;
	}
}

static int pool_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    size_t num_outputs, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	const struct ok_pool_state *s = state;
	const struct npu_kernel_tensor *xt = in[0];
	struct npu_kernel_tensor *yt = out[0];
	struct npu_kernel_tensor *it = num_outputs > 1 ? out[1] : NULL;
	uint64_t in_sp = 1, out_sp = 1, planes, plane, col_stride[OK_NN_MAX_SPATIAL];
	uint64_t in_stride[OK_NN_MAX_SPATIAL], cs = 1;
	double *x = NULL, *y = NULL, p = (double)s->p, lowest = lowest_of(xt->dtype);
	struct ok_geom g;
	char err[160];
	uint32_t d, n;
	int rc;

	(void)num_inputs;
	if (pool_geom(s, xt, &g, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	n = g.n;
	for (d = n; d-- > 0;) {
		in_stride[d] = in_sp;
		in_sp *= g.in[d];
		out_sp *= g.out[d];
	}
	for (d = 0; d < n; d++) {
		col_stride[d] = cs;
		cs *= g.in[d];
	}
	planes = (uint64_t)xt->dims[0] * xt->dims[1];
	x = malloc(in_sp * sizeof(double));
	y = malloc(out_sp * sizeof(double));
	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	rc = 0;
	for (plane = 0; plane < planes && !rc; plane++) {
		uint32_t o[OK_NN_MAX_SPATIAL] = { 0 };
		uint64_t q, work = 0;

		ok_load_f64(xt, plane * in_sp, in_sp, x);
		for (q = 0; q < out_sp; q++) {
			int64_t lo[OK_NN_MAX_SPATIAL], hi[OK_NN_MAX_SPATIAL];
			int64_t start[OK_NN_MAX_SPATIAL], k[OK_NN_MAX_SPATIAL];
			uint64_t taps = 1, padded = 1, best_at = 0;
			double acc = s->kind == OK_POOL_MAX ? lowest : 0.0;
			bool found = false, empty = false;

			for (d = 0; d < n; d++) {
				int64_t plo, phi;

				start[d] = (int64_t)o[d] * g.stride[d] - g.pad_begin[d];
				tap_range(start[d], g.dilation[d], g.kernel[d], 0, g.in[d], &lo[d], &hi[d]);
				tap_range(start[d], g.dilation[d], g.kernel[d], -g.pad_begin[d],
					  (int64_t)g.in[d] + g.pad_end[d], &plo, &phi);
				padded *= (uint64_t)(phi - plo);
				taps *= (uint64_t)(hi[d] - lo[d]);
				k[d] = lo[d];
				if (hi[d] <= lo[d])
					empty = true;
			}
			while (!empty) {
				uint64_t idx = 0;
				double v;

				for (d = 0; d < n; d++)
					idx += (uint64_t)(start[d] + k[d] * g.dilation[d]) * in_stride[d];
				v = x[idx];
				switch (s->kind) {
				case OK_POOL_MAX:
					if (v > acc) {
						acc = v;
						best_at = idx;
						found = true;
					}
					break;
				case OK_POOL_AVERAGE:
					acc += v;
					break;
				case OK_POOL_LP:
					acc += s->p == 1 ? fabs(v) : s->p == 2 ? v * v : pow(fabs(v), p);
					break;
				}
				for (d = n; d-- > 0;) {
					if (++k[d] < hi[d])
						break;
					k[d] = lo[d];
				}
				if (d == UINT32_MAX)
					break;
			}
			work += taps + 1;
			if (s->kind == OK_POOL_AVERAGE)
				acc = taps ? acc / (double)(s->count_include_pad ? padded : taps) : 0.0;
			else if (s->kind == OK_POOL_LP)
				acc = s->p == 1 ? acc : s->p == 2 ? sqrt(acc) : pow(acc, 1.0 / p);
			y[q] = acc;
			if (it) {
				int64_t flat = (int64_t)(plane * in_sp);

				if (s->storage_order) {
					/* Column-major over the spatial axes, as onnxruntime numbers them. */
					uint64_t rest = best_at, cm = 0;

					for (d = n; d-- > 0;) {
						cm += (rest % g.in[d]) * col_stride[d];
						rest /= g.in[d];
					}
					flat += (int64_t)cm;
				} else {
					flat += (int64_t)best_at;
				}
				((int64_t *)it->data)[plane * out_sp + q] = found ? flat : -1;
			}
			for (d = n; d-- > 0;) {
				if (++o[d] < g.out[d])
					break;
				o[d] = 0;
			}
			if (work >= OK_POLL_EVERY) {
				rc = npu_kernel_poll(call, work);
				work = 0;
				if (rc)
					break;
			}
		}
		ok_store_f64(yt, plane * out_sp, out_sp, y);
	}
	free(x);
	free(y);
	return rc;
}

const struct npu_kernel ok_kernel_pool = {
	.size = sizeof(struct npu_kernel),
	.name = "Pool",
	.infer = pool_infer,
	.work = pool_work,
	.run = pool_run,
	.release = ok_state_free,
};

#define POOL_OP(sym, type, create_fn)						\
const struct npu_onnx_op sym = {						\
	.size = sizeof(struct npu_onnx_op),					\
	.domain = "",								\
	.op_type = type,							\
	.since_version = 1,							\
	.kernel = &ok_kernel_pool,						\
	.create = create_fn,							\
}
POOL_OP(ok_op_max_pool, "MaxPool", max_pool_create);
POOL_OP(ok_op_average_pool, "AveragePool", average_pool_create);
POOL_OP(ok_op_lp_pool, "LpPool", lp_pool_create);
POOL_OP(ok_op_global_max_pool, "GlobalMaxPool", global_max_pool_create);
POOL_OP(ok_op_global_average_pool, "GlobalAveragePool", global_average_pool_create);
POOL_OP(ok_op_global_lp_pool, "GlobalLpPool", global_lp_pool_create);

/* ---- MaxUnpool ------------------------------------------------------------------ */

static int max_unpool_create(const struct npu_onnx_node *node, void *opaque, void **state,
			     char *err, size_t err_size)
{
	struct ok_unpool_state *s = ok_state_alloc(sizeof(*s));
	int rc;

	(void)opaque;
	if (!s)
		return -ENOMEM;
	rc = ok_window_parse(node, &s->w, true, err, err_size);
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int max_unpool_infer(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_unpool_state *s = state;
	const struct npu_kernel_tensor *x = num_inputs > 0 ? in[0] : NULL;
	const struct npu_kernel_tensor *ind = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *shape = num_inputs > 2 ? in[2] : NULL;
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t i, n;

	if (!x || !ind)
		return ok_fail(err, err_size, "inputs X and I are required");
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	if (!ok_is_float(x->dtype))
		return ok_fail(err, err_size, "X must be a float type, not %s", ok_dtype_name(x->dtype));
	if (ind->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "I must be int64, not %s", ok_dtype_name(ind->dtype));
	if (x->rank < 3)
		return ok_fail(err, err_size, "X has rank %u, needs N, C and a spatial axis", x->rank);
	if (ind->rank != x->rank || memcmp(ind->dims, x->dims, x->rank * sizeof(x->dims[0])))
		return ok_fail(err, err_size, "I must have X's shape");
	n = x->rank - 2;
	if (s->w.n_kernel != n || (s->w.n_strides && s->w.n_strides != n) ||
	    (s->w.n_pads && s->w.n_pads != 2 * n))
		return ok_fail(err, err_size,
			       "kernel_shape, strides and pads must give one value per spatial axis (%u)",
			       n);
	if (shape) {
		int64_t v[NPU_TENSOR_MAX_RANK];
		size_t cnt;
		int rc = ok_read_ints(shape, v, NPU_TENSOR_MAX_RANK, &cnt, "output_shape", err,
				      err_size);

		if (rc)
			return rc;
		if (cnt != x->rank)
			return ok_fail(err, err_size, "output_shape has %zu values for rank %u", cnt,
				       x->rank);
		for (i = 0; i < cnt; i++) {
			if (v[i] < 1)
				return ok_fail(err, err_size, "output_shape[%u] (%lld) must be positive",
					       i, (long long)v[i]);
			dims[i] = (uint64_t)v[i];
		}
		if (dims[0] != x->dims[0] || dims[1] != x->dims[1])
			return ok_fail(err, err_size, "output_shape must keep X's N and C");
	} else {
		dims[0] = x->dims[0];
		dims[1] = x->dims[1];
		for (i = 0; i < n; i++) {
			int64_t st = s->w.n_strides ? s->w.strides[i] : 1;
			int64_t pads = s->w.n_pads ? s->w.pads[i] + s->w.pads[n + i] : 0;
			int64_t o = ((int64_t)x->dims[2 + i] - 1) * st + s->w.kernel[i] - pads;

			if (o < 1)
				return ok_fail(err, err_size, "spatial axis %u's output extent %lld is not positive",
					       i, (long long)o);
			dims[2 + i] = (uint64_t)o;
		}
	}
	return ok_nn_out_shape(out[0], x->dtype, x->rank, dims, err, err_size);
}

static int max_unpool_run(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0], *ind = in[1];
	struct npu_kernel_tensor *y = out[0];
	size_t es = npu_dtype_size(x->dtype);
	const int64_t *idx = ind->data;
	uint64_t i;
	int rc;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	memset(y->data, 0, y->elems * es);
	for (i = 0; i < x->elems; i++) {
		if (idx[i] < 0 || (uint64_t)idx[i] >= y->elems)
			return npu_kernel_fail(call, -EINVAL,
					       "index %lld is out of range [0, %llu)",
					       (long long)idx[i], (unsigned long long)y->elems);
		memcpy((char *)y->data + (uint64_t)idx[i] * es, (const char *)x->data + i * es, es);
		if ((i + 1) % OK_POLL_EVERY == 0) {
			rc = npu_kernel_poll(call, OK_POLL_EVERY);
			if (rc)
				return rc;
		}
	}
	return 0;
}

const struct npu_kernel ok_kernel_max_unpool = {
	.size = sizeof(struct npu_kernel),
	.name = "MaxUnpool",
	.infer = max_unpool_infer,
	.run = max_unpool_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_max_unpool = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "MaxUnpool",
	.since_version = 9,
	.kernel = &ok_kernel_max_unpool,
	.create = max_unpool_create,
};
