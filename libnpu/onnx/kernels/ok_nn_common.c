// SPDX-License-Identifier: MIT
/*
 * What the nn kernels share: sliding-window attributes and geometry
 * (Conv, ConvTranspose, the pools), conversion of any dtype into the
 * type a kernel computes in, and a plain blocked matrix product.
 */
#include <errno.h>
#include <string.h>

#include "ok_nn.h"

/* Attribute values above this are refused: they fit every product below. */
#define OK_WINDOW_MAX	(1ll << 30)

static int read_ints(const struct npu_onnx_node *node, const char *name, int64_t *dst,
		     uint32_t max, uint32_t *count, int64_t min, char *err, size_t err_size)
{
	const int64_t *v;
	size_t n, i;
	int rc = npu_onnx_attr_ints(node, name, &v, &n);

	*count = 0;
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return ok_fail(err, err_size, "attribute %s must be a list of integers", name);
	if (n > max)
		return ok_fail(err, err_size, "attribute %s has %zu values, at most %u are supported",
			       name, n, max);
	for (i = 0; i < n; i++) {
		if (v[i] < min || v[i] > OK_WINDOW_MAX)
			return ok_fail(err, err_size, "attribute %s's value %lld is out of range [%lld, %lld]",
				       name, (long long)v[i], (long long)min,
				       (long long)OK_WINDOW_MAX);
		dst[i] = v[i];
	}
	*count = (uint32_t)n;
	return 0;
}

int ok_window_parse(const struct npu_onnx_node *node, struct ok_window *w,
		    bool pooling, char *err, size_t err_size)
{
	char pad[32] = "NOTSET";
	int rc = npu_onnx_attr_string(node, "auto_pad", pad, sizeof(pad));

	if (rc && rc != -ENOENT)
		return ok_fail(err, err_size, "attribute auto_pad must be a short string");
	if (!strcmp(pad, "NOTSET") || !pad[0])
		w->auto_pad = OK_PAD_NOTSET;
	else if (!strcmp(pad, "SAME_UPPER"))
		w->auto_pad = OK_PAD_SAME_UPPER;
	else if (!strcmp(pad, "SAME_LOWER"))
		w->auto_pad = OK_PAD_SAME_LOWER;
	else if (!strcmp(pad, "VALID"))
		w->auto_pad = OK_PAD_VALID;
	else
		return ok_fail(err, err_size,
			       "auto_pad \"%s\" is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", pad);
	rc = read_ints(node, "kernel_shape", w->kernel, OK_NN_MAX_SPATIAL, &w->n_kernel, 1,
		       err, err_size);
	if (!rc)
		rc = read_ints(node, "strides", w->strides, OK_NN_MAX_SPATIAL, &w->n_strides, 1,
			       err, err_size);
	if (!rc)
		rc = read_ints(node, "dilations", w->dilations, OK_NN_MAX_SPATIAL,
			       &w->n_dilations, 1, err, err_size);
	if (!rc)
		rc = read_ints(node, "pads", w->pads, 2 * OK_NN_MAX_SPATIAL, &w->n_pads, 0,
			       err, err_size);
	if (rc)
		return rc;
	if (w->n_pads % 2)
		return ok_fail(err, err_size, "attribute pads has %u values, not two per spatial axis",
			       w->n_pads);
	w->ceil_mode = ok_attr_i(node, "ceil_mode", 0) != 0;
	if (pooling && !w->n_kernel)
		return ok_fail(err, err_size, "attribute kernel_shape is required");
	return 0;
}

static int check_count(uint32_t have, uint32_t want, const char *name, char *err,
		       size_t err_size)
{
	if (have && have != want)
		return ok_fail(err, err_size, "attribute %s has %u values for %u spatial axes", name,
			       have, want);
	return 0;
}

int ok_window_geom(const struct ok_window *w, const struct npu_kernel_tensor *x,
		   const uint32_t *kernel, struct ok_geom *g, char *err, size_t err_size)
{
	uint32_t n, i;
	int rc;

	if (x->rank < 3)
		return ok_fail(err, err_size, "input X has rank %u, needs N, C and a spatial axis",
			       x->rank);
	n = x->rank - 2;
	rc = check_count(w->n_kernel, n, "kernel_shape", err, err_size);
	if (!rc)
		rc = check_count(w->n_strides, n, "strides", err, err_size);
	if (!rc)
		rc = check_count(w->n_dilations, n, "dilations", err, err_size);
	if (!rc)
		rc = check_count(w->n_pads / 2, n, "pads", err, err_size);
	if (rc)
		return rc;
	g->n = n;
	for (i = 0; i < n; i++) {
		int64_t in = x->dims[2 + i], k = kernel[i];
		int64_t s = w->n_strides ? w->strides[i] : 1;
		int64_t d = w->n_dilations ? w->dilations[i] : 1;
		int64_t dk = (k - 1) * d + 1, pb = 0, pe = 0, out, span;

		if (k < 1 || k > OK_WINDOW_MAX)
			return ok_fail(err, err_size, "kernel extent %lld of spatial axis %u is out of range",
				       (long long)k, i);
		switch (w->auto_pad) {
		case OK_PAD_NOTSET:
			if (w->n_pads) {
				pb = w->pads[i];
				pe = w->pads[n + i];
			}
			/* fall through */
		case OK_PAD_VALID:
			span = in + pb + pe - dk;
			if (span < 0)
				return ok_fail(err, err_size,
					       "spatial axis %u: the window (%lld with dilation) is larger than the padded input (%lld)",
					       i, (long long)dk, (long long)(in + pb + pe));
			if (w->ceil_mode) {
				out = (span + s - 1) / s + 1;
				/* A last window starting in the end padding is dropped. */
				if ((out - 1) * s >= in + pb)
					out--;
			} else {
				out = span / s + 1;
			}
			break;
		default: {
			int64_t total;

			out = (in + s - 1) / s;
			total = (out - 1) * s + dk - in;
			if (total < 0)
				total = 0;
			pb = w->auto_pad == OK_PAD_SAME_UPPER ? total / 2 : total - total / 2;
			pe = total - pb;
			break;
		}
		}
		if (out < 1 || out > UINT32_MAX)
			return ok_fail(err, err_size, "spatial axis %u's output extent %lld is out of range",
				       i, (long long)out);
		g->in[i] = (uint32_t)in;
		g->out[i] = (uint32_t)out;
		g->kernel[i] = (uint32_t)k;
		g->stride[i] = (uint32_t)s;
		g->dilation[i] = (uint32_t)d;
		g->pad_begin[i] = pb;
		g->pad_end[i] = pe;
	}
	return 0;
}

/* ---- Working types ------------------------------------------------------------- */

enum ok_wtype ok_wtype_of(enum npu_dtype dt)
{
	if (dt == NPU_DTYPE_FP64)
		return OK_WT_F64;
	if (ok_is_float(dt))
		return OK_WT_F32;
	return OK_WT_INT;
}

void ok_load_f32(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, float *dst)
{
	uint64_t i;

	switch (t->dtype) {
	case NPU_DTYPE_FP32:
		memcpy(dst, (const float *)t->data + off, n * sizeof(float));
		return;
	case NPU_DTYPE_FP16:
		for (i = 0; i < n; i++)
			dst[i] = ok_fp16_to_f32(((const uint16_t *)t->data)[off + i]);
		return;
	default:
		for (i = 0; i < n; i++)
			dst[i] = (float)ok_get_f(t, off + i);
		return;
	}
}

void ok_load_f64(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, double *dst)
{
	uint64_t i;

	if (t->dtype == NPU_DTYPE_FP64) {
		memcpy(dst, (const double *)t->data + off, n * sizeof(double));
		return;
	}
	for (i = 0; i < n; i++)
		dst[i] = ok_get_f(t, off + i);
}

void ok_load_u64(const struct npu_kernel_tensor *t, uint64_t off, uint64_t n, uint64_t *dst)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		dst[i] = ok_get_u(t, off + i);
}

void ok_store_f32(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const float *src)
{
	uint64_t i;

	if (t->dtype == NPU_DTYPE_FP32) {
		memcpy((float *)t->data + off, src, n * sizeof(float));
		return;
	}
	for (i = 0; i < n; i++)
		ok_set_f(t, off + i, src[i]);
}

void ok_store_f64(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const double *src)
{
	uint64_t i;

	if (t->dtype == NPU_DTYPE_FP64) {
		memcpy((double *)t->data + off, src, n * sizeof(double));
		return;
	}
	for (i = 0; i < n; i++)
		ok_set_f(t, off + i, src[i]);
}

void ok_store_u64(struct npu_kernel_tensor *t, uint64_t off, uint64_t n, const uint64_t *src)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		ok_set_i(t, off + i, (int64_t)src[i]);
}

/* ---- GEMM ------------------------------------------------------------------------ */

/* Columns of C per block: a block's rows of B stay in cache across C's rows. */
#define OK_GEMM_BLOCK_N	256

/*
 * Four rows of C at a time share each load of B's row, and every C
 * element still sums its K terms in order, so blocking changes no
 * rounding.  Integers multiply and add modulo 2^64, which is each
 * integer dtype's wrapping arithmetic once the result is truncated to its
 * width.
 */
#define OK_VEC(T)	T __attribute__((vector_size(32)))
#define OK_VEC_LANES(T)	(32 / sizeof(T))

#define OK_GEMM_BODY(T)								\
	size_t j0, i, k, j;							\
	int rc;									\
										\
	for (j0 = 0; j0 < N; j0 += OK_GEMM_BLOCK_N) {				\
		size_t jn = N - j0 < OK_GEMM_BLOCK_N ? N - j0 : OK_GEMM_BLOCK_N; \
										\
		for (i = 0; i < M;) {						\
			if (b_col == 1 && M - i >= 4) {				\
				T *restrict c0 = C + i * ldc + j0;		\
				T *restrict c1 = c0 + ldc, *restrict c2 = c1 + ldc; \
				T *restrict c3 = c2 + ldc;			\
										\
				for (k = 0; k < K; k++) {			\
					const T *restrict b = B + k * b_row + j0; \
					const T *a = A + i * a_row + k * a_col;	\
					T a0 = a[0], a1 = a[a_row], a2 = a[2 * a_row], \
					  a3 = a[3 * a_row];			\
										\
					/* 32-byte vectors: lanes are separate C elements. */ \
					for (j = 0; j + OK_VEC_LANES(T) <= jn; j += OK_VEC_LANES(T)) { \
						OK_VEC(T) bv, v0, v1, v2, v3;	\
										\
						memcpy(&bv, b + j, sizeof(bv));	\
						memcpy(&v0, c0 + j, sizeof(v0)); \
						memcpy(&v1, c1 + j, sizeof(v1)); \
						memcpy(&v2, c2 + j, sizeof(v2)); \
						memcpy(&v3, c3 + j, sizeof(v3)); \
						v0 += a0 * bv;			\
						v1 += a1 * bv;			\
						v2 += a2 * bv;			\
						v3 += a3 * bv;			\
						memcpy(c0 + j, &v0, sizeof(v0)); \
						memcpy(c1 + j, &v1, sizeof(v1)); \
						memcpy(c2 + j, &v2, sizeof(v2)); \
						memcpy(c3 + j, &v3, sizeof(v3)); \
					}					\
					for (; j < jn; j++) {			\
						T bj = b[j];			\
										\
						c0[j] += a0 * bj;		\
						c1[j] += a1 * bj;		\
						c2[j] += a2 * bj;		\
						c3[j] += a3 * bj;		\
					}					\
				}						\
				rc = npu_kernel_poll(call, (uint64_t)K * jn * 4); \
				i += 4;						\
			} else {						\
				T *c = C + i * ldc + j0;			\
										\
				for (k = 0; k < K; k++) {			\
					T a = A[i * a_row + k * a_col];		\
					const T *b = B + k * b_row + j0 * b_col; \
										\
					for (j = 0; j < jn; j++)		\
						c[j] += a * b[j * b_col];	\
				}						\
				rc = npu_kernel_poll(call, (uint64_t)K * jn);	\
				i++;						\
			}							\
			if (rc)							\
				return rc;					\
		}								\
	}									\
	return 0;

int ok_gemm_f32(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const float *A, size_t a_row, size_t a_col,
		const float *B, size_t b_row, size_t b_col, float *C, size_t ldc)
{
	OK_GEMM_BODY(float)
}

int ok_gemm_f64(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const double *A, size_t a_row, size_t a_col,
		const double *B, size_t b_row, size_t b_col, double *C, size_t ldc)
{
	OK_GEMM_BODY(double)
}

int ok_gemm_u64(struct npu_kernel_call *call, size_t M, size_t N, size_t K,
		const uint64_t *A, size_t a_row, size_t a_col,
		const uint64_t *B, size_t b_row, size_t b_col, uint64_t *C, size_t ldc)
{
	OK_GEMM_BODY(uint64_t)
}

/* ---- Shapes and work ------------------------------------------------------------- */

int ok_nn_out_shape(struct npu_kernel_tensor *t, enum npu_dtype dtype, uint32_t rank,
		    const uint64_t *dims, char *err, size_t err_size)
{
	uint32_t d32[NPU_TENSOR_MAX_RANK], i;
	uint64_t elems = 1;

	if (rank > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "the output would have rank %u, above %d", rank,
			       NPU_TENSOR_MAX_RANK);
	for (i = 0; i < rank; i++) {
		if (dims[i] == 0)
			return ok_fail(err, err_size,
				       "the output's dimension %u would be 0: empty tensors are not supported",
				       i);
		if (dims[i] > UINT32_MAX || __builtin_mul_overflow(elems, dims[i], &elems) ||
		    elems > OK_NN_MAX_ELEMS)
			return ok_fail(err, err_size,
				       "the output's dimension %u (%llu) makes it too large", i,
				       (unsigned long long)dims[i]);
		d32[i] = (uint32_t)dims[i];
	}
	t->dtype = dtype;
	return ok_set_shape(t, rank, d32);
}

uint64_t ok_nn_mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t ok_nn_add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
