// SPDX-License-Identifier: MIT
/*
 * MatMul (numpy's matmul: 1-D operands, broadcast batch axes) and Gemm
 * (alpha, beta, transA/B, a C that broadcasts), in float for float32 and
 * the 16-bit floats, double for float64, and modulo 2^64 for integers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_nn.h"

/* MatMul's and Gemm's types: 8- and 16-bit integers are MatMulInteger's and QLinear*'s. */
static bool numeric(enum npu_dtype dt)
{
	return ok_is_float(dt) || dt == NPU_DTYPE_INT32 || dt == NPU_DTYPE_INT64 ||
	       dt == NPU_DTYPE_UINT32 || dt == NPU_DTYPE_UINT64;
}

/* ---- MatMul ------------------------------------------------------------------ */

/* The operands as batches of matrices: A [.., M, K], B [.., K, N], Y [.., M, N]. */
struct mm_shape {
	uint32_t batch_rank;
	uint32_t batch[NPU_TENSOR_MAX_RANK];
	uint64_t a_stride[NPU_TENSOR_MAX_RANK], b_stride[NPU_TENSOR_MAX_RANK];
	uint64_t m, k, n, batches;
};

static int mm_shape_of(const struct npu_kernel_tensor *a, const struct npu_kernel_tensor *b,
		       struct mm_shape *s, uint64_t *ydims, uint32_t *yrank, char *err,
		       size_t err_size)
{
	uint32_t ar = a->rank, br = b->rank, abr, bbr, d, r = 0;
	uint64_t ka, kb, as = 1, bs = 1;

	if (ar < 1 || br < 1)
		return ok_fail(err, err_size, "MatMul's operands must have rank 1 or more");
	s->m = ar >= 2 ? a->dims[ar - 2] : 1;
	ka = a->dims[ar - 1];
	kb = br >= 2 ? b->dims[br - 2] : b->dims[0];
	s->n = br >= 2 ? b->dims[br - 1] : 1;
	if (ka != kb)
		return ok_fail(err, err_size, "A's inner dimension %llu is not B's %llu",
			       (unsigned long long)ka, (unsigned long long)kb);
	s->k = ka;
	abr = ar >= 2 ? ar - 2 : 0;
	bbr = br >= 2 ? br - 2 : 0;
	s->batch_rank = abr > bbr ? abr : bbr;
	s->batches = 1;
	for (d = s->batch_rank; d-- > 0;) {
		uint32_t da = d + abr >= s->batch_rank ? a->dims[d + abr - s->batch_rank] : 1;
		uint32_t db = d + bbr >= s->batch_rank ? b->dims[d + bbr - s->batch_rank] : 1;

		if (da != db && da != 1 && db != 1)
			return ok_fail(err, err_size, "batch dimensions %u and %u do not broadcast",
				       da, db);
		s->batch[d] = da > db ? da : db;
		s->a_stride[d] = da == 1 ? 0 : as;
		s->b_stride[d] = db == 1 ? 0 : bs;
		if (d + abr >= s->batch_rank)
			as *= da;
		if (d + bbr >= s->batch_rank)
			bs *= db;
		s->batches *= s->batch[d];
	}
	for (d = 0; d < s->batch_rank; d++)
		ydims[r++] = s->batch[d];
	if (ar >= 2)
		ydims[r++] = s->m;
	if (br >= 2)
		ydims[r++] = s->n;
	*yrank = r;
	return 0;
}

static int matmul_infer(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	uint64_t ydims[NPU_TENSOR_MAX_RANK + 2];
	struct mm_shape s;
	uint32_t yrank;
	int rc;

	(void)state;
	if (num_inputs < 2 || !in[0] || !in[1] || num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "MatMul takes inputs A and B and an output Y");
	if (in[0]->dtype != in[1]->dtype)
		return ok_fail(err, err_size, "A is %s but B is %s", ok_dtype_name(in[0]->dtype),
			       ok_dtype_name(in[1]->dtype));
	if (!numeric(in[0]->dtype))
		return ok_fail(err, err_size, "MatMul does not take %s",
			       ok_dtype_name(in[0]->dtype));
	rc = mm_shape_of(in[0], in[1], &s, ydims, &yrank, err, err_size);
	return rc ? rc : ok_nn_out_shape(out[0], in[0]->dtype, yrank, ydims, err, err_size);
}

static uint64_t matmul_work(const void *state, size_t num_inputs,
			    const struct npu_kernel_tensor *const *in, size_t num_outputs,
			    const struct npu_kernel_tensor *const *out)
{
	uint32_t ar = in[0]->rank;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	/* Every output element is a dot product of K terms. */
	return ok_nn_add_sat(ok_nn_mul_sat(out[0]->elems, in[0]->dims[ar - 1]),
			     ok_nn_add_sat(in[0]->elems, in[1]->elems));
}

/*
 * One batched product in type T: each batch's A and B converted (or used
 * in place when already T), C zeroed and accumulated.
 */
#define MATMUL_RUN(T, LOAD, STORE, GEMM, NATIVE)				\
static int matmul_run_##T(const struct mm_shape *s, const struct npu_kernel_tensor *at, \
			  const struct npu_kernel_tensor *bt, struct npu_kernel_tensor *yt, \
			  struct npu_kernel_call *call)				\
{										\
	uint64_t mk = s->m * s->k, kn = s->k * s->n, mn = s->m * s->n, b;	\
	bool native = at->dtype == NATIVE;					\
	T *a = native ? NULL : malloc(mk * sizeof(T));				\
	T *bb = native ? NULL : malloc(kn * sizeof(T));				\
	T *c = malloc(mn * sizeof(T));						\
	int rc = -ENOMEM;							\
										\
	if ((!native && (!a || !bb)) || !c)					\
		goto out;							\
	for (b = 0; b < s->batches; b++) {					\
		uint64_t ao = 0, bo = 0, rest = b;				\
		const T *ap, *bp;						\
		uint32_t d;							\
										\
		for (d = s->batch_rank; d-- > 0;) {				\
			uint64_t i = rest % s->batch[d];			\
										\
			rest /= s->batch[d];					\
			ao += i * s->a_stride[d];				\
			bo += i * s->b_stride[d];				\
		}								\
		if (native) {							\
			ap = (const T *)at->data + ao * mk;			\
			bp = (const T *)bt->data + bo * kn;			\
		} else {							\
			LOAD(at, ao * mk, mk, a);				\
			LOAD(bt, bo * kn, kn, bb);				\
			ap = a;							\
			bp = bb;						\
		}								\
		memset(c, 0, mn * sizeof(T));					\
		rc = GEMM(call, s->m, s->n, s->k, ap, s->k, 1, bp, s->n, 1, c, s->n); \
		if (rc)								\
			goto out;						\
		STORE(yt, b * mn, mn, c);					\
	}									\
	rc = 0;									\
out:										\
	free(a);								\
	free(bb);								\
	free(c);								\
	return rc;								\
}

typedef double f64;
typedef uint64_t u64;
MATMUL_RUN(float, ok_load_f32, ok_store_f32, ok_gemm_f32, NPU_DTYPE_FP32)
MATMUL_RUN(f64, ok_load_f64, ok_store_f64, ok_gemm_f64, NPU_DTYPE_FP64)
MATMUL_RUN(u64, ok_load_u64, ok_store_u64, ok_gemm_u64, NPU_DTYPE_UINT64)

static int matmul_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		      size_t num_outputs, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	uint64_t ydims[NPU_TENSOR_MAX_RANK + 2];
	struct mm_shape s;
	uint32_t yrank;
	char err[160];

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	if (mm_shape_of(in[0], in[1], &s, ydims, &yrank, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	switch (ok_wtype_of(in[0]->dtype)) {
	case OK_WT_F32:
		return matmul_run_float(&s, in[0], in[1], out[0], call);
	case OK_WT_F64:
		return matmul_run_f64(&s, in[0], in[1], out[0], call);
	default:
		return matmul_run_u64(&s, in[0], in[1], out[0], call);
	}
}

const struct npu_kernel ok_kernel_matmul = {
	.size = sizeof(struct npu_kernel),
	.name = "MatMul",
	.infer = matmul_infer,
	.work = matmul_work,
	.run = matmul_run,
};

const struct npu_onnx_op ok_op_matmul = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "MatMul",
	.since_version = 1,
	.kernel = &ok_kernel_matmul,
};

/* ---- Gemm -------------------------------------------------------------------- */

static int gemm_create(const struct npu_onnx_node *node, void *opaque, void **state,
		       char *err, size_t err_size)
{
	struct ok_gemm_state *s = ok_state_alloc(sizeof(*s));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!s)
		return -ENOMEM;
	s->alpha = ok_attr_f(node, "alpha", 1.0f);
	s->beta = ok_attr_f(node, "beta", 1.0f);
	s->trans_a = ok_attr_i(node, "transA", 0) != 0;
	s->trans_b = ok_attr_i(node, "transB", 0) != 0;
	*state = s;
	return 0;
}

static int gemm_dims(const struct ok_gemm_state *s, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, uint64_t *m, uint64_t *k,
		     uint64_t *n, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *a = num_inputs > 0 ? in[0] : NULL;
	const struct npu_kernel_tensor *b = num_inputs > 1 ? in[1] : NULL;
	const struct npu_kernel_tensor *c = num_inputs > 2 ? in[2] : NULL;
	uint64_t kb;
	uint32_t d;

	if (!a || !b)
		return ok_fail(err, err_size, "inputs A and B are required");
	if (a->rank != 2 || b->rank != 2)
		return ok_fail(err, err_size, "A and B must be matrices, not of rank %u and %u",
			       a->rank, b->rank);
	if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
		return ok_fail(err, err_size, "A, B and C must have one dtype (%s, %s%s%s)",
			       ok_dtype_name(a->dtype), ok_dtype_name(b->dtype), c ? ", " : "",
			       c ? ok_dtype_name(c->dtype) : "");
	if (!numeric(a->dtype))
		return ok_fail(err, err_size, "Gemm does not take %s", ok_dtype_name(a->dtype));
	*m = s->trans_a ? a->dims[1] : a->dims[0];
	*k = s->trans_a ? a->dims[0] : a->dims[1];
	kb = s->trans_b ? b->dims[1] : b->dims[0];
	*n = s->trans_b ? b->dims[0] : b->dims[1];
	if (*k != kb)
		return ok_fail(err, err_size, "A's inner dimension %llu is not B's %llu",
			       (unsigned long long)*k, (unsigned long long)kb);
	if (c) {
		if (c->rank > 2)
			return ok_fail(err, err_size, "C has rank %u, above 2", c->rank);
		for (d = 0; d < c->rank; d++) {
			uint64_t want = d + 2 - c->rank == 0 ? *m : *n;

			if (c->dims[d] != 1 && c->dims[d] != want)
				return ok_fail(err, err_size,
					       "C's dimension %u (%u) does not broadcast to %llu", d,
					       c->dims[d], (unsigned long long)want);
		}
	}
	return 0;
}

static int gemm_infer(const void *state, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, size_t num_outputs,
		      struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	uint64_t m, k, n, dims[2];
	int rc = gemm_dims(state, num_inputs, in, &m, &k, &n, err, err_size);

	if (rc)
		return rc;
	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "output Y is required");
	dims[0] = m;
	dims[1] = n;
	return ok_nn_out_shape(out[0], in[0]->dtype, 2, dims, err, err_size);
}

static uint64_t gemm_work(const void *state, size_t num_inputs,
			  const struct npu_kernel_tensor *const *in, size_t num_outputs,
			  const struct npu_kernel_tensor *const *out)
{
	const struct ok_gemm_state *s = state;
	uint64_t k = s->trans_a ? in[0]->dims[0] : in[0]->dims[1];

	(void)num_inputs;
	(void)num_outputs;
	return ok_nn_add_sat(ok_nn_mul_sat(out[0]->elems, k + 2),
			     ok_nn_add_sat(in[0]->elems, in[1]->elems));
}

/* A float coefficient applied to integers: truncated, saturating, NaN as 0. */
static uint64_t int_coef(float v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2e18f)
		return (uint64_t)INT64_MAX;
	if (v <= -9.2e18f)
		return (uint64_t)INT64_MIN;
	return (uint64_t)(int64_t)v;
}

/* C's element for output (i, j), broadcast. */
static uint64_t c_index(const struct npu_kernel_tensor *c, uint64_t i, uint64_t j)
{
	if (c->rank == 0)
		return 0;
	if (c->rank == 1)
		return c->dims[0] == 1 ? 0 : j;
	return (c->dims[0] == 1 ? 0 : i * c->dims[1]) + (c->dims[1] == 1 ? 0 : j);
}

#define GEMM_RUN(T, LOAD, GEMM)							\
static int gemm_run_##T(const struct ok_gemm_state *s, uint64_t m, uint64_t k, uint64_t n, \
			const struct npu_kernel_tensor *at, const struct npu_kernel_tensor *bt, \
			T *acc, struct npu_kernel_call *call)			\
{										\
	T *a = malloc(at->elems * sizeof(T)), *b = malloc(bt->elems * sizeof(T)); \
	int rc = -ENOMEM;							\
										\
	if (a && b) {								\
		LOAD(at, 0, at->elems, a);					\
		LOAD(bt, 0, bt->elems, b);					\
		rc = GEMM(call, m, n, k, a, s->trans_a ? 1 : k, s->trans_a ? m : 1, \
			  b, s->trans_b ? 1 : n, s->trans_b ? k : 1, acc, n);	\
	}									\
	free(a);								\
	free(b);								\
	return rc;								\
}
GEMM_RUN(float, ok_load_f32, ok_gemm_f32)
GEMM_RUN(f64, ok_load_f64, ok_gemm_f64)
GEMM_RUN(u64, ok_load_u64, ok_gemm_u64)

static int gemm_run(const void *state, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    size_t num_outputs, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	const struct ok_gemm_state *s = state;
	const struct npu_kernel_tensor *c = num_inputs > 2 ? in[2] : NULL;
	struct npu_kernel_tensor *y = out[0];
	enum ok_wtype wt = ok_wtype_of(in[0]->dtype);
	uint64_t m, k, n, i, j;
	size_t es = wt == OK_WT_F32 ? sizeof(float) : 8;
	char err[160];
	void *acc;
	int rc;

	(void)num_outputs;
	if (gemm_dims(s, num_inputs, in, &m, &k, &n, err, sizeof(err)))
		return npu_kernel_fail(call, -EINVAL, "%s", err);
	acc = calloc(m * n, es);
	if (!acc)
		return -ENOMEM;
	rc = wt == OK_WT_F32 ? gemm_run_float(s, m, k, n, in[0], in[1], acc, call) :
	     wt == OK_WT_F64 ? gemm_run_f64(s, m, k, n, in[0], in[1], acc, call) :
			       gemm_run_u64(s, m, k, n, in[0], in[1], acc, call);
	for (i = 0; !rc && i < m; i++)
		for (j = 0; j < n; j++) {
			uint64_t o = i * n + j;

			if (wt == OK_WT_F32) {
				float v = s->alpha * ((float *)acc)[o];

				if (c && s->beta != 0.0f)
					v += s->beta * (float)ok_get_f(c, c_index(c, i, j));
				ok_set_f(y, o, v);
			} else if (wt == OK_WT_F64) {
				double v = (double)s->alpha * ((double *)acc)[o];

				if (c && s->beta != 0.0f)
					v += (double)s->beta * ok_get_f(c, c_index(c, i, j));
				ok_set_f(y, o, v);
			} else {
				/* Integer alpha and beta keep integers exact, as onnxruntime's. */
				uint64_t v = ((uint64_t *)acc)[o] * int_coef(s->alpha);

				if (c)
					v += (uint64_t)ok_get_i(c, c_index(c, i, j)) *
					     int_coef(s->beta);
				ok_set_i(y, o, (int64_t)v);
			}
		}
	free(acc);
	return rc;
}

const struct npu_kernel ok_kernel_gemm = {
	.size = sizeof(struct npu_kernel),
	.name = "Gemm",
	.infer = gemm_infer,
	.work = gemm_work,
	.run = gemm_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_gemm = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Gemm",
	.since_version = 1,
	.kernel = &ok_kernel_gemm,
	.create = gemm_create,
};
