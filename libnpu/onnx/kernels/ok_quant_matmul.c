// SPDX-License-Identifier: MIT
/*
 * MatMulInteger and QLinearMatMul: numpy matmul of uint8/int8 operands
 * with zero points per tensor, per row of A or per column of B, an int32
 * accumulator that wraps as MLAS's does, and (QLinearMatMul) MLAS's
 * requantization of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"

/* A matmul's geometry: batches broadcast, then M x K times K x N. */
struct mm_geom {
	uint32_t M, N, K;
	uint64_t batches;
	struct ok_bcast a_batch, b_batch;
	struct npu_kernel_tensor b_batch_shape;
};

/* How a quantization parameter of A (rows) or B (columns) is laid out. */
enum qp_mode {
	QP_TENSOR,	/* one value */
	QP_VECTOR,	/* per row of A, per column of B */
	QP_BATCH,	/* B's [batch..., 1, N]: per batch and column */
};

static bool is_q8(enum npu_dtype dt)
{
	return dt == NPU_DTYPE_UINT8 || dt == NPU_DTYPE_INT8;
}

static void batch_shape(const struct npu_kernel_tensor *t, struct npu_kernel_tensor *b)
{
	uint32_t r = t->rank >= 2 ? t->rank - 2 : 0;

	memset(b, 0, sizeof(*b));
	ok_set_shape(b, r, t->dims);
}

/* Output shape of A x B into @y; the geometry into @g. */
static int mm_geom(const struct npu_kernel_tensor *a, const struct npu_kernel_tensor *b,
		   struct npu_kernel_tensor *y, struct mm_geom *g, char *err,
		   size_t err_size)
{
	struct npu_kernel_tensor ab, bb, yb;
	const struct npu_kernel_tensor *both[2] = { &ab, &bb };
	uint32_t dims[NPU_TENSOR_MAX_RANK + 2], rank, kb;
	int ret;

	if (a->rank < 1 || b->rank < 1)
		return ok_fail(err, err_size, "A and B must have a rank of at least 1");
	g->M = a->rank == 1 ? 1 : a->dims[a->rank - 2];
	g->K = a->dims[a->rank - 1];
	kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
	g->N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
	if (kb != g->K)
		return ok_fail(err, err_size, "A has %u columns but B has %u rows", g->K, kb);
	batch_shape(a, &ab);
	batch_shape(b, &bb);
	memset(&yb, 0, sizeof(yb));
	ret = ok_broadcast(2, both, &yb, err, err_size);
	if (ret)
		return ret;
	rank = yb.rank;
	memcpy(dims, yb.dims, rank * sizeof(dims[0]));
	if (a->rank > 1)
		dims[rank++] = g->M;
	if (b->rank > 1)
		dims[rank++] = g->N;
	if (rank > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "the output's rank %u is above %d", rank,
			       NPU_TENSOR_MAX_RANK);
	ok_set_shape(y, rank, dims);
	g->batches = yb.elems;
	ok_bcast_init(&g->a_batch, &ab, &yb);
	ok_bcast_init(&g->b_batch, &bb, &yb);
	g->b_batch_shape = bb;
	return 0;
}

/*
 * A quantization parameter @p of @what: one value, one per row of A
 * (@len = M, @batched NULL) or per column of B (@len = N, @batched the
 * batch shape of B for the [batch..., 1, N] form).
 */
static int qp_resolve(const struct npu_kernel_tensor *p, const char *what,
		      enum npu_dtype want, uint32_t len,
		      const struct npu_kernel_tensor *batched, enum qp_mode *mode,
		      char *err, size_t err_size)
{
	uint32_t d;

	if (p->dtype != want)
		return ok_fail(err, err_size, "%s must be %s, not %s", what,
			       ok_dtype_name(want), ok_dtype_name(p->dtype));
	if (p->elems == 1) {
		*mode = QP_TENSOR;
		return 0;
	}
	if (p->rank == 1 && p->dims[0] == len) {
		*mode = QP_VECTOR;
		return 0;
	}
	if (batched && p->rank == batched->rank + 2 && p->dims[p->rank - 2] == 1 &&
	    p->dims[p->rank - 1] == len) {
		for (d = 0; d < batched->rank; d++)
			if (p->dims[d] != batched->dims[d])
				break;
		if (d == batched->rank) {
			*mode = QP_BATCH;
			return 0;
		}
	}
	return ok_fail(err, err_size,
		       "%s must be a scalar or have %u values (it has %llu)", what, len,
		       (unsigned long long)p->elems);
}

static uint64_t qp_index(enum qp_mode mode, uint64_t batch, uint32_t len, uint32_t i)
{
	switch (mode) {
	case QP_TENSOR: return 0;
	case QP_VECTOR: return i;
	case QP_BATCH: return batch * len + i;
	}
	return 0;
}

static inline int32_t q8(const struct npu_kernel_tensor *t, uint64_t i)
{
	return t->dtype == NPU_DTYPE_INT8 ? ((const int8_t *)t->data)[i] :
					    ((const uint8_t *)t->data)[i];
}

/* Operands of either op, by role. */
struct mm_args {
	const struct npu_kernel_tensor *a, *b, *a_zp, *b_zp;
	const struct npu_kernel_tensor *a_scale, *b_scale, *y_scale, *y_zp;
	enum qp_mode a_zp_mode, b_zp_mode, a_scale_mode, b_scale_mode;
};

static void args_of(bool qlinear, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, struct mm_args *m)
{
	memset(m, 0, sizeof(*m));
	if (qlinear) {
		m->a = in[0];
		m->a_scale = num_inputs > 1 ? in[1] : NULL;
		m->a_zp = num_inputs > 2 ? in[2] : NULL;
		m->b = num_inputs > 3 ? in[3] : NULL;
		m->b_scale = num_inputs > 4 ? in[4] : NULL;
		m->b_zp = num_inputs > 5 ? in[5] : NULL;
		m->y_scale = num_inputs > 6 ? in[6] : NULL;
		m->y_zp = num_inputs > 7 ? in[7] : NULL;
	} else {
		m->a = in[0];
		m->b = num_inputs > 1 ? in[1] : NULL;
		m->a_zp = num_inputs > 2 ? in[2] : NULL;
		m->b_zp = num_inputs > 3 ? in[3] : NULL;
	}
}

static int mm_check(bool qlinear, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in,
		    struct npu_kernel_tensor *y, struct mm_args *m, struct mm_geom *g,
		    char *err, size_t err_size)
{
	int ret;

	args_of(qlinear, num_inputs, in, m);
	if (!m->a || !m->b || (qlinear && (!m->a_scale || !m->a_zp || !m->b_scale ||
					   !m->b_zp || !m->y_scale || !m->y_zp)))
		return ok_fail(err, err_size, qlinear ? "all 8 inputs are required" :
						      "A and B are required");
	if (!is_q8(m->a->dtype) || !is_q8(m->b->dtype))
		return ok_fail(err, err_size, "A and B must be uint8 or int8, not %s and %s",
			       ok_dtype_name(m->a->dtype), ok_dtype_name(m->b->dtype));
	ret = mm_geom(m->a, m->b, y, g, err, err_size);
	if (ret)
		return ret;
	if (m->a_zp) {
		ret = qp_resolve(m->a_zp, "A's zero point", m->a->dtype, g->M, NULL,
				 &m->a_zp_mode, err, err_size);
		if (ret)
			return ret;
	}
	if (m->b_zp) {
		ret = qp_resolve(m->b_zp, "B's zero point", m->b->dtype, g->N,
				 &g->b_batch_shape, &m->b_zp_mode, err, err_size);
		if (ret)
			return ret;
	}
	if (!qlinear) {
		y->dtype = NPU_DTYPE_INT32;
		return 0;
	}
	ret = qp_resolve(m->a_scale, "A's scale", NPU_DTYPE_FP32, g->M, NULL,
			 &m->a_scale_mode, err, err_size);
	if (!ret)
		ret = qp_resolve(m->b_scale, "B's scale", NPU_DTYPE_FP32, g->N,
				 &g->b_batch_shape, &m->b_scale_mode, err, err_size);
	if (ret)
		return ret;
	if (m->y_scale->dtype != NPU_DTYPE_FP32 || m->y_scale->elems != 1)
		return ok_fail(err, err_size, "the output's scale must be one float32");
	if (!is_q8(m->y_zp->dtype) || m->y_zp->elems != 1)
		return ok_fail(err, err_size,
			       "the output's zero point must be one uint8 or int8");
	y->dtype = m->y_zp->dtype;
	return 0;
}

/* The output is named as each op's spec names it: Y for MatMulInteger, y for QLinearMatMul. */
static int mm_infer(bool qlinear, size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    size_t num_outputs, struct npu_kernel_tensor *const *out, char *err,
		    size_t err_size)
{
	struct mm_args m;
	struct mm_geom g;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "%s is required", qlinear ? "y" : "Y");
	return mm_check(qlinear, num_inputs, in, out[0], &m, &g, err, err_size);
}

static int mi_infer(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	(void)state;
	return mm_infer(false, num_inputs, in, num_outputs, out, err, err_size);
}

static int qmm_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	(void)state;
	return mm_infer(true, num_inputs, in, num_outputs, out, err, err_size);
}

static uint64_t mm_work_of(bool qlinear, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in,
			   const struct npu_kernel_tensor *y)
{
	struct npu_kernel_tensor shape = *y;
	struct mm_args m;
	struct mm_geom g;

	if (mm_check(qlinear, num_inputs, in, &shape, &m, &g, NULL, 0))
		return y->elems;
	/* MACs, plus B's conversion per batch and each output's epilogue */
	return g.batches * ((uint64_t)g.M * g.N * g.K + (uint64_t)g.K * g.N) + y->elems;
}

static uint64_t mi_work(const void *state, size_t num_inputs,
			const struct npu_kernel_tensor *const *in, size_t num_outputs,
			const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_outputs;
	return mm_work_of(false, num_inputs, in, out[0]);
}

static uint64_t qmm_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_outputs;
	return mm_work_of(true, num_inputs, in, out[0]);
}

static int mm_run(bool qlinear, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, struct npu_kernel_tensor *y,
		  struct npu_kernel_call *call)
{
	struct npu_kernel_tensor shape = *y;
	struct mm_args m;
	struct mm_geom g;
	int32_t *bq = NULL, *aq = NULL, lo = 0, hi = 0, y_zp = 0;
	uint32_t *acc = NULL;
	float y_scale = 1.0f;
	uint64_t t, work = 0;
	int ret;

	ret = mm_check(qlinear, num_inputs, in, &shape, &m, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	bq = malloc((size_t)g.K * g.N * sizeof(*bq));
	aq = malloc((size_t)g.K * sizeof(*aq));
	acc = malloc((size_t)g.N * sizeof(*acc));
	if (!bq || !aq || !acc) {
		ret = -ENOMEM;
		goto out;
	}
	if (qlinear) {
		ok_quant_range(y->dtype, &lo, &hi);
		y_scale = (float)ok_get_f(m.y_scale, 0);
		y_zp = (int32_t)ok_get_i(m.y_zp, 0);
	}
	for (t = 0; t < g.batches; t++) {
		uint64_t ab = ok_bcast_index(&g.a_batch, t), bb = ok_bcast_index(&g.b_batch, t);
		const uint64_t a_off = ab * g.M * g.K, b_off = bb * g.K * g.N;
		uint32_t i, j, k;

		for (k = 0; k < g.K; k++)
			for (j = 0; j < g.N; j++) {
				int32_t z = m.b_zp ? q8(m.b_zp, qp_index(m.b_zp_mode, bb, g.N, j)) : 0;

				bq[(size_t)k * g.N + j] = q8(m.b, b_off + (uint64_t)k * g.N + j) - z;
			}
		for (i = 0; i < g.M; i++) {
			int32_t z = m.a_zp ? q8(m.a_zp, qp_index(m.a_zp_mode, 0, g.M, i)) : 0;
			uint64_t y_off = (t * g.M + i) * g.N;

			for (k = 0; k < g.K; k++)
				aq[k] = q8(m.a, a_off + (uint64_t)i * g.K + k) - z;
			memset(acc, 0, (size_t)g.N * sizeof(*acc));
			/* uint32 sums wrap like MLAS's int32 accumulators, without UB */
			for (k = 0; k < g.K; k++) {
				const int32_t *brow = bq + (size_t)k * g.N;
				uint32_t av = (uint32_t)aq[k];

				for (j = 0; j < g.N; j++)
					acc[j] += av * (uint32_t)brow[j];
			}
			for (j = 0; j < g.N; j++) {
				int32_t v = (int32_t)acc[j];

				if (qlinear) {
					float a_s = (float)ok_get_f(m.a_scale,
						qp_index(m.a_scale_mode, 0, g.M, i));
					float b_s = (float)ok_get_f(m.b_scale,
						qp_index(m.b_scale_mode, bb, g.N, j));

					ok_set_i(y, y_off + j,
						 ok_requantize(v, a_s * b_s / y_scale, y_zp, lo, hi));
				} else {
					((int32_t *)y->data)[y_off + j] = v;
				}
			}
			work += (uint64_t)g.N * g.K + g.N;
			if (work >= OK_POLL_EVERY) {
				ret = npu_kernel_poll(call, work);
				if (ret)
					goto out;
				work = 0;
			}
		}
	}
out:
	free(bq);
	free(aq);
	free(acc);
	return ret;
}

static int mi_run(const void *state, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, size_t num_outputs,
		  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)state;
	(void)num_outputs;
	return mm_run(false, num_inputs, in, out[0], call);
}

static int qmm_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	(void)state;
	(void)num_outputs;
	return mm_run(true, num_inputs, in, out[0], call);
}

const struct npu_kernel ok_kernel_matmul_integer = {
	.size = sizeof(struct npu_kernel),
	.name = "MatMulInteger",
	.infer = mi_infer,
	.work = mi_work,
	.run = mi_run,
};

const struct npu_onnx_op ok_op_matmul_integer = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "MatMulInteger",
	.since_version = 10,
	.kernel = &ok_kernel_matmul_integer,
};

const struct npu_kernel ok_kernel_qlinear_matmul = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearMatMul",
	.infer = qmm_infer,
	.work = qmm_work,
	.run = qmm_run,
};

const struct npu_onnx_op ok_op_qlinear_matmul = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "QLinearMatMul",
	.since_version = 10,
	.kernel = &ok_kernel_qlinear_matmul,
};
