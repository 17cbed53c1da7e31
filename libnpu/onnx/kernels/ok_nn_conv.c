// SPDX-License-Identifier: MIT
/*
 * Conv and ConvTranspose of any spatial rank (1 to 4 axes), groups,
 * strides, dilations, pads and auto_pad, in the input's float type: an
 * im2col (col2im for the transpose) over a chunk of positions feeding
 * the blocked GEMM, accumulating in float for float32/16 as onnxruntime
 * does and in double for float64.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

/* Elements of the column buffer: chunks of output positions keep it this small. */
#define OK_CONV_COL_ELEMS	(1u << 20)

static int conv_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_conv_state *s = ok_state_alloc(sizeof(*s));
	const int64_t *v;
	size_t n, i;
	int rc;

	(void)opaque;
	if (!s)
		return -ENOMEM;
	rc = ok_window_parse(node, &s->w, false, err, err_size);
	s->group = ok_attr_i(node, "group", 1);
	if (!rc && (s->group < 1 || s->group > UINT32_MAX))
		rc = ok_fail(err, err_size, "attribute group (%lld) must be at least 1",
			     (long long)s->group);
	if (!rc && !npu_onnx_attr_ints(node, "output_padding", &v, &n)) {
		if (n > OK_NN_MAX_SPATIAL)
			rc = ok_fail(err, err_size, "attribute output_padding has %zu values", n);
		for (i = 0; !rc && i < n; i++) {
			if (v[i] < 0 || v[i] > (1 << 30))
				rc = ok_fail(err, err_size, "output_padding %lld is out of range",
					     (long long)v[i]);
			s->output_padding[i] = v[i];
		}
		s->n_output_padding = (uint32_t)n;
	}
	if (!rc && !npu_onnx_attr_ints(node, "output_shape", &v, &n)) {
		if (n > NPU_TENSOR_MAX_RANK)
			rc = ok_fail(err, err_size, "attribute output_shape has %zu values", n);
		for (i = 0; !rc && i < n; i++) {
			if (v[i] < 1 || v[i] > UINT32_MAX)
				rc = ok_fail(err, err_size, "output_shape %lld is out of range",
					     (long long)v[i]);
			s->output_shape[i] = v[i];
		}
		s->n_output_shape = (uint32_t)n;
	}
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int check_inputs(const struct ok_conv_state *s, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, bool transpose,
			uint32_t *kernel, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = num_inputs > 0 ? in[0] : NULL;
	const struct npu_kernel_tensor *w = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *b = num_inputs > 2 ? in[2] : NULL;
	uint64_t group = (uint64_t)s->group, c, m;
	uint32_t i;

	if (!x || !w)
		return ok_fail(err, err_size, "inputs X and W are required");
	if (!ok_is_float(x->dtype))
		return ok_fail(err, err_size, "X must be a float type, not %s",
			       ok_dtype_name(x->dtype));
	if (w->dtype != x->dtype)
		return ok_fail(err, err_size, "W is %s but X is %s", ok_dtype_name(w->dtype),
			       ok_dtype_name(x->dtype));
	if (x->rank < 3)
		return ok_fail(err, err_size, "X has rank %u, needs N, C and a spatial axis",
			       x->rank);
	if (w->rank != x->rank)
		return ok_fail(err, err_size, "W has rank %u but X has rank %u", w->rank, x->rank);
	c = x->dims[1];
	if (c % group)
		return ok_fail(err, err_size, "X's %llu channels do not divide into %llu groups",
			       (unsigned long long)c, (unsigned long long)group);
	if (transpose) {
		if (w->dims[0] != c)
			return ok_fail(err, err_size, "W's dimension 0 (%u) is not X's channels (%llu)",
				       w->dims[0], (unsigned long long)c);
		m = (uint64_t)w->dims[1] * group;
	} else {
		m = w->dims[0];
		if (w->dims[1] != c / group)
			return ok_fail(err, err_size,
				       "W's dimension 1 (%u) is not X's channels per group (%llu)",
				       w->dims[1], (unsigned long long)(c / group));
		if (m % group)
			return ok_fail(err, err_size,
				       "W's %llu output channels do not divide into %llu groups",
				       (unsigned long long)m, (unsigned long long)group);
	}
	if (m > UINT32_MAX)
		return ok_fail(err, err_size, "too many output channels");
	if (b) {
		if (b->dtype != x->dtype)
			return ok_fail(err, err_size, "B is %s but X is %s", ok_dtype_name(b->dtype),
				       ok_dtype_name(x->dtype));
		if (b->rank != 1 || b->dims[0] != m)
			return ok_fail(err, err_size, "B must be a vector of the %llu output channels",
				       (unsigned long long)m);
	}
	for (i = 0; i + 2 < x->rank; i++) {
		kernel[i] = w->dims[2 + i];
		if (s->w.n_kernel == x->rank - 2 && s->w.kernel[i] != w->dims[2 + i])
			return ok_fail(err, err_size,
				       "kernel_shape[%u] (%lld) is not W's spatial extent %u", i,
				       (long long)s->w.kernel[i], w->dims[2 + i]);
	}
	return 0;
}

static int conv_geom(const struct ok_conv_state *s, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, struct ok_geom *g,
		     char *err, size_t err_size)
{
	uint32_t kernel[OK_NN_MAX_SPATIAL];
	int rc = check_inputs(s, num_inputs, in, false, kernel, err, err_size);

	return rc ? rc : ok_window_geom(&s->w, in[0], kernel, g, err, err_size);
}

/*
 * ConvTranspose's geometry: output extents from output_shape, auto_pad or
 * pads, and the pads that place the input on them: an odd total pad
 * leaves its extra unit at the end for SAME_UPPER, at the beginning
 * otherwise (the spec's rule, and onnxruntime's).
 */
static int conv_transpose_geom(const struct ok_conv_state *s, size_t num_inputs,
			       const struct npu_kernel_tensor *const *in, struct ok_geom *g,
			       char *err, size_t err_size)
{
	const struct ok_window *w = &s->w;
	uint32_t kernel[OK_NN_MAX_SPATIAL], n, i;
	int rc = check_inputs(s, num_inputs, in, true, kernel, err, err_size);

	if (rc)
		return rc;
	n = in[0]->rank - 2;
	if ((w->n_kernel && w->n_kernel != n) || (w->n_strides && w->n_strides != n) ||
	    (w->n_dilations && w->n_dilations != n) || (w->n_pads && w->n_pads != 2 * n) ||
	    (s->n_output_padding && s->n_output_padding != n))
		return ok_fail(err, err_size,
			       "kernel_shape, strides, dilations, pads and output_padding must give one value per spatial axis (%u)",
			       n);
	if (s->n_output_shape && s->n_output_shape != n && s->n_output_shape != n + 2)
		return ok_fail(err, err_size, "output_shape has %u values for %u spatial axes",
			       s->n_output_shape, n);
	g->n = n;
	for (i = 0; i < n; i++) {
		int64_t x = in[0]->dims[2 + i], k = kernel[i];
		int64_t st = w->n_strides ? w->strides[i] : 1;
		int64_t d = w->n_dilations ? w->dilations[i] : 1;
		int64_t op = s->n_output_padding ? s->output_padding[i] : 0;
		int64_t full = (x - 1) * st + op + (k - 1) * d + 1, pb = 0, pe = 0, out;

		if (op >= st && op >= d)
			return ok_fail(err, err_size,
				       "output_padding[%u] (%lld) must be below the stride or the dilation",
				       i, (long long)op);
		if (s->n_output_shape || w->auto_pad == OK_PAD_SAME_UPPER ||
		    w->auto_pad == OK_PAD_SAME_LOWER) {
			int64_t total;

			if (s->n_output_shape)
				out = s->output_shape[s->n_output_shape - n + i];
			else
				out = x * st;
			total = full - out;
			if (total < 0)
				total = 0;
			if (w->auto_pad == OK_PAD_SAME_UPPER) {
				pb = total / 2;
				pe = total - total / 2;
			} else {
				pb = total - total / 2;
				pe = total / 2;
			}
		} else {
			if (w->auto_pad == OK_PAD_NOTSET && w->n_pads) {
				pb = w->pads[i];
				pe = w->pads[n + i];
			}
			out = full - pb - pe;
		}
		if (out < 1 || out > UINT32_MAX)
			return ok_fail(err, err_size, "spatial axis %u's output extent %lld is out of range",
				       i, (long long)out);
		g->in[i] = (uint32_t)x;
		g->out[i] = (uint32_t)out;
		g->kernel[i] = (uint32_t)k;
		g->stride[i] = (uint32_t)st;
		g->dilation[i] = (uint32_t)d;
		g->pad_begin[i] = pb;
		g->pad_end[i] = pe;
	}
	return 0;
}

static int set_output(const struct npu_kernel_tensor *x, uint64_t m, const struct ok_geom *g,
		      size_t num_outputs, struct npu_kernel_tensor *const *out, char *err,
		      size_t err_size)
{
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t i;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	dims[0] = x->dims[0];
	dims[1] = m;
	for (i = 0; i < g->n; i++)
		dims[2 + i] = g->out[i];
	return ok_nn_out_shape(out[0], x->dtype, x->rank, dims, err, err_size);
}

static int conv_infer(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_conv_state *s = state;
	struct ok_geom g;
	int rc = conv_geom(s, num_inputs, in, &g, err, err_size);

	return rc ? rc : set_output(in[0], in[1]->dims[0], &g, num_outputs, out, err, err_size);
}

static int conv_transpose_infer(const void *state, size_t num_inputs,
				const struct npu_kernel_tensor *const *in, size_t num_outputs,
				struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_conv_state *s = state;
	struct ok_geom g;
	int rc = conv_transpose_geom(s, num_inputs, in, &g, err, err_size);

	return rc ? rc : set_output(in[0], (uint64_t)in[1]->dims[1] * (uint64_t)s->group, &g,
				    num_outputs, out, err, err_size);
}

static uint64_t spatial(const uint32_t *d, uint32_t n)
{
	uint64_t p = 1;
	uint32_t i;

	for (i = 0; i < n; i++)
		p *= d[i];
	return p;
}

/* MACs of either form: every output channel of a group meets every input channel of it. */
static uint64_t conv_work_of(const struct npu_kernel_tensor *x, const struct npu_kernel_tensor *w,
			     const struct npu_kernel_tensor *y, uint64_t group, bool transpose)
{
	uint64_t kprod = 1, work;
	uint32_t i;

	for (i = 2; i < w->rank; i++)
		kprod *= w->dims[i];
	/* Conv: N * M * out * C/g * K; ConvTranspose: N * C * in * M/g * K. */
	if (transpose)
		work = ok_nn_mul_sat(ok_nn_mul_sat(x->elems, w->dims[1]), kprod);
	else
		work = ok_nn_mul_sat(ok_nn_mul_sat(y->elems, x->dims[1] / group), kprod);
	return ok_nn_add_sat(work, ok_nn_add_sat(x->elems, 2 * y->elems));
}

static uint64_t conv_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	const struct ok_conv_state *s = state;

	(void)num_inputs;
	(void)num_outputs;
	return conv_work_of(in[0], in[1], out[0], (uint64_t)s->group, false);
}

static uint64_t conv_transpose_work(const void *state, size_t num_inputs,
				    const struct npu_kernel_tensor *const *in, size_t num_outputs,
				    const struct npu_kernel_tensor *const *out)
{
	const struct ok_conv_state *s = state;

	(void)num_inputs;
	(void)num_outputs;
	return conv_work_of(in[0], in[1], out[0], (uint64_t)s->group, true);
}

/*
 * One row of the column matrix: input channel plane @src, kernel tap
 * @tap (a multi-index), output positions [p0, p0 + count).  Taps in the
 * pads read zero.
 */
#define CONV_IM2COL(T)								\
static void im2col_##T(const struct ok_geom *g, const T *src, const uint32_t *tap, \
		       uint64_t p0, size_t count, T *dst)			\
{										\
	uint32_t o[OK_NN_MAX_SPATIAL], d, n = g->n;				\
	int64_t base[OK_NN_MAX_SPATIAL];					\
	uint64_t in_stride[OK_NN_MAX_SPATIAL], rest = p0, s = 1;		\
	size_t j;								\
										\
	for (d = n; d-- > 0;) {							\
		o[d] = (uint32_t)(rest % g->out[d]);				\
		rest /= g->out[d];						\
		base[d] = (int64_t)tap[d] * g->dilation[d] - g->pad_begin[d];	\
		in_stride[d] = s;						\
		s *= g->in[d];							\
	}									\
	for (j = 0; j < count; j++) {						\
		uint64_t idx = 0;						\
		bool inside = true;						\
										\
		for (d = 0; d < n; d++) {					\
			int64_t c = (int64_t)o[d] * g->stride[d] + base[d];	\
										\
			if (c < 0 || c >= g->in[d]) {				\
				inside = false;					\
				break;						\
			}							\
			idx += (uint64_t)c * in_stride[d];			\
		}								\
		dst[j] = inside ? src[idx] : (T)0;				\
		for (d = n; d-- > 0;) {						\
			if (++o[d] < g->out[d])					\
				break;						\
			o[d] = 0;						\
		}								\
	}									\
}

/* The transpose's scatter: the column row of tap @tap over input positions [p0, p0 + count) adds into plane @dst. */
#define CONV_COL2IM(T)								\
static void col2im_##T(const struct ok_geom *g, const T *src, const uint32_t *tap, \
		       uint64_t p0, size_t count, T *dst)			\
{										\
	uint32_t x[OK_NN_MAX_SPATIAL], d, n = g->n;				\
	int64_t base[OK_NN_MAX_SPATIAL];					\
	uint64_t out_stride[OK_NN_MAX_SPATIAL], rest = p0, s = 1;		\
	size_t j;								\
										\
	for (d = n; d-- > 0;) {							\
		x[d] = (uint32_t)(rest % g->in[d]);				\
		rest /= g->in[d];						\
		base[d] = (int64_t)tap[d] * g->dilation[d] - g->pad_begin[d];	\
		out_stride[d] = s;						\
		s *= g->out[d];							\
	}									\
	for (j = 0; j < count; j++) {						\
		uint64_t idx = 0;						\
		bool inside = true;						\
										\
		for (d = 0; d < n; d++) {					\
			int64_t c = (int64_t)x[d] * g->stride[d] + base[d];	\
										\
			if (c < 0 || c >= g->out[d]) {				\
				inside = false;					\
				break;						\
			}							\
			idx += (uint64_t)c * out_stride[d];			\
		}								\
		if (inside)							\
			dst[idx] += src[j];					\
		for (d = n; d-- > 0;) {						\
			if (++x[d] < g->in[d])					\
				break;						\
			x[d] = 0;						\
		}								\
	}									\
}

static void tap_of(const struct ok_geom *g, uint64_t r, uint32_t *tap)
{
	uint32_t d;

	for (d = g->n; d-- > 0;) {
		tap[d] = (uint32_t)(r % g->kernel[d]);
		r /= g->kernel[d];
	}
}

/*
 * One whole convolution in type T: the inputs converted (or used in place
 * when already T), each image and group an im2col chunk times W's rows.
 */
#define CONV_RUN(T, LOAD, STORE, GEMM)						\
CONV_IM2COL(T)									\
CONV_COL2IM(T)									\
static int conv_run_##T(const struct ok_geom *g, uint64_t group, bool transpose, \
			const struct npu_kernel_tensor *xt,			\
			const struct npu_kernel_tensor *wt,			\
			const struct npu_kernel_tensor *bt,			\
			struct npu_kernel_tensor *yt, struct npu_kernel_call *call) \
{										\
	uint64_t batch = xt->dims[0], c = xt->dims[1], m = yt->dims[1];		\
	uint64_t cg = c / group, mg = m / group;				\
	uint64_t in_sp = spatial(g->in, g->n), out_sp = spatial(g->out, g->n);	\
	uint64_t kprod = spatial(g->kernel, g->n);				\
	uint64_t rows = transpose ? mg * kprod : cg * kprod;			\
	uint64_t positions = transpose ? in_sp : out_sp, chunk;			\
	bool own_x = xt->dtype != NPU_DTYPE_FP32 && xt->dtype != NPU_DTYPE_FP64; \
	T *w = NULL, *x = NULL, *y = NULL, *col = NULL, *bias = NULL;		\
	uint64_t n, gi, p0, r;							\
	int rc = -ENOMEM;							\
										\
	chunk = OK_CONV_COL_ELEMS / rows;					\
	if (chunk < 1)								\
		chunk = 1;							\
	if (chunk > positions)							\
		chunk = positions;						\
	w = malloc(wt->elems * sizeof(T));					\
	x = own_x ? malloc(c * in_sp * sizeof(T)) : NULL;			\
	y = malloc(m * out_sp * sizeof(T));					\
	col = malloc(rows * chunk * sizeof(T));					\
	bias = calloc(m, sizeof(T));						\
	if (!w || (own_x && !x) || !y || !col || !bias)				\
		goto out;							\
	LOAD(wt, 0, wt->elems, w);						\
	if (bt)									\
		LOAD(bt, 0, m, bias);						\
	for (n = 0; n < batch; n++) {						\
		const T *xn;							\
										\
		if (own_x) {							\
			LOAD(xt, n * c * in_sp, c * in_sp, x);			\
			xn = x;							\
		} else {							\
			xn = (const T *)xt->data + n * c * in_sp;		\
		}								\
		for (r = 0; r < m; r++) {					\
			uint64_t p;						\
										\
			for (p = 0; p < out_sp; p++)				\
				y[r * out_sp + p] = transpose ? (T)0 : bias[r];	\
		}								\
		for (gi = 0; gi < group; gi++) {				\
			for (p0 = 0; p0 < positions; p0 += chunk) {		\
				size_t cnt = positions - p0 < chunk ? positions - p0 : chunk; \
				uint32_t tap[OK_NN_MAX_SPATIAL];		\
										\
				if (!transpose) {				\
					for (r = 0; r < rows; r++) {		\
						tap_of(g, r % kprod, tap);	\
						im2col_##T(g, xn + (gi * cg + r / kprod) * in_sp, \
							   tap, p0, cnt, col + r * cnt); \
					}					\
					rc = npu_kernel_poll(call, rows * cnt);	\
					if (rc)					\
						goto out;			\
					/* Y[mg, cnt] += W_g[mg, rows] * col[rows, cnt] */ \
					rc = GEMM(call, mg, cnt, rows, w + gi * mg * rows, rows, 1, \
						  col, cnt, 1, y + gi * mg * out_sp + p0, out_sp); \
				} else {				\
					memset(col, 0, rows * cnt * sizeof(T)); \
					/* col[rows, cnt] = W_g^T[rows, cg] * X_g[cg, cnt] */ \
					rc = GEMM(call, rows, cnt, cg, w + gi * cg * rows, 1, rows, \
						  xn + gi * cg * in_sp + p0, in_sp, 1, col, cnt); \
					if (rc)					\
						goto out;			\
					for (r = 0; r < rows; r++) {		\
						tap_of(g, r % kprod, tap);	\
						col2im_##T(g, col + r * cnt, tap, p0, cnt, \
							   y + (gi * mg + r / kprod) * out_sp); \
					}					\
					rc = npu_kernel_poll(call, rows * cnt);	\
				}						\
				if (rc)						\
					goto out;				\
			}							\
		}								\
		if (transpose)							\
			for (r = 0; r < m; r++) {				\
				uint64_t p;					\
										\
				for (p = 0; p < out_sp; p++)			\
					y[r * out_sp + p] += bias[r];		\
			}							\
		STORE(yt, n * m * out_sp, m * out_sp, y);			\
	}									\
	rc = 0;									\
out:										\
	free(w);								\
	free(x);								\
	free(y);								\
	free(col);								\
	free(bias);								\
	return rc;								\
}

typedef double f64;
CONV_RUN(float, ok_load_f32, ok_store_f32, ok_gemm_f32)
CONV_RUN(f64, ok_load_f64, ok_store_f64, ok_gemm_f64)

static int run_either(const struct ok_geom *g, uint64_t group, bool transpose,
		      const struct npu_kernel_tensor *const *in, size_t num_inputs,
		      struct npu_kernel_tensor *y, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *b = num_inputs > 2 ? in[2] : NULL;

	if (in[0]->dtype == NPU_DTYPE_FP64)
		return conv_run_f64(g, group, transpose, in[0], in[1], b, y, call);
	return conv_run_float(g, group, transpose, in[0], in[1], b, y, call);
}

static int conv_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    size_t num_outputs, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	const struct ok_conv_state *s = state;
	struct ok_geom g;
	char err[160];

	(void)num_outputs;
	if (conv_geom(s, num_inputs, in, &g, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	return run_either(&g, (uint64_t)s->group, false, in, num_inputs, out[0], call);
}

static int conv_transpose_run(const void *state, size_t num_inputs,
			      const struct npu_kernel_tensor *const *in, size_t num_outputs,
			      struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_conv_state *s = state;
	struct ok_geom g;
	char err[160];

	(void)num_outputs;
	if (conv_transpose_geom(s, num_inputs, in, &g, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	return run_either(&g, (uint64_t)s->group, true, in, num_inputs, out[0], call);
}

const struct npu_kernel ok_kernel_conv = {
	.size = sizeof(struct npu_kernel),
	.name = "Conv",
	.infer = conv_infer,
	.work = conv_work,
	.run = conv_run,
	.release = ok_state_free,
};

const struct npu_kernel ok_kernel_conv_transpose = {
	.size = sizeof(struct npu_kernel),
	.name = "ConvTranspose",
	.infer = conv_transpose_infer,
	.work = conv_transpose_work,
	.run = conv_transpose_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_conv = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Conv",
	.since_version = 1,
	.kernel = &ok_kernel_conv,
	.create = conv_create,
};

const struct npu_onnx_op ok_op_conv_transpose = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "ConvTranspose",
	.since_version = 1,
	.kernel = &ok_kernel_conv_transpose,
	.create = conv_create,
};
