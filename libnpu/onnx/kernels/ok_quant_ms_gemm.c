// SPDX-License-Identifier: MIT
/*
 * com.microsoft's QGemm: Y = alpha * A' * B' + C of 8-bit A and B (A'
 * and B' transposed or not) with zero points, C an int32 bias already in
 * the accumulator's scale, Y either requantized to 8 bits or float.
 *
 * onnxruntime's arithmetic: the bias and the products of the centred
 * integers sum in an int32 accumulator (wrapping, as MLAS's lanes do),
 * and one float multiplier per output column, alpha * a_scale *
 * b_scale[j] (then / y_scale when there is one, in that order), scales
 * it: MLAS's requantization (ok_requantize: multiply, clamp around y_zp,
 * round half to even) for an 8-bit Y, a plain product for a float Y.
 *
 * One difference is left on purpose: onnxruntime's kernel for uint8 A and
 * int8 B on x86-64 without VNNI (AVX2's VPMADDUBSW) adds the raw
 * products two by two in saturating int16, so where a[k] * b[k] +
 * a[k+1] * b[k+1] (k even, before the zero points) passes 32767 it
 * computes a different sum from the exact one, here and on every other
 * CPU.  onnxruntime documents that saturation and its quantizer avoids
 * it with 7-bit weights (reduce_range), for which the two agree; we
 * compute the exact sum, which is the operator's meaning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"

enum { G_A, G_A_SCALE, G_A_ZP, G_B, G_B_SCALE, G_B_ZP, G_C, G_Y_SCALE, G_Y_ZP };

static const struct npu_kernel_tensor *opt_in(size_t num_inputs,
					      const struct npu_kernel_tensor *const *in,
					      size_t i)
{
	return i < num_inputs ? in[i] : NULL;
}

struct gemm_geom {
	uint32_t M, N, K;
};

/* b_scale and b_zero_point: one value, or one per column of Y. */
static int check_b_param(const struct npu_kernel_tensor *t, enum npu_dtype want,
			 const char *what, uint32_t N, char *err, size_t err_size)
{
	if (!t)
		return ok_fail(err, err_size, "%s is required", what);
	if (t->dtype != want)
		return ok_fail(err, err_size, "%s must be %s, not %s", what, ok_dtype_name(want),
			       ok_dtype_name(t->dtype));
	if (t->rank == 0 || (t->rank == 1 && (t->dims[0] == 1 || t->dims[0] == N)))
		return 0;
	return ok_fail(err, err_size,
		       "%s must be a scalar or a 1-D tensor of 1 or N = %u values (it has rank %u and %llu values)",
		       what, N, t->rank, (unsigned long long)t->elems);
}

/* C: a scalar, (1), (N), (1, 1), (1, N), (M, 1) or (M, N). */
static int check_bias(const struct npu_kernel_tensor *c, const struct gemm_geom *g, char *err,
		      size_t err_size)
{
	if (c->dtype != NPU_DTYPE_INT32)
		return ok_fail(err, err_size, "C must be int32, not %s", ok_dtype_name(c->dtype));
	if (c->elems == 1 && c->rank <= 2)
		return 0;
	if (c->rank == 1 && c->dims[0] == g->N)
		return 0;
	if (c->rank == 2 && (c->dims[0] == 1 || c->dims[0] == g->M) &&
	    (c->dims[1] == 1 || c->dims[1] == g->N))
		return 0;
	return ok_fail(err, err_size,
		       "C of rank %u and %llu values does not broadcast to Y's %u x %u", c->rank,
		       (unsigned long long)c->elems, g->M, g->N);
}

static int gemm_check(const struct ok_ms_gemm_state *st, size_t num_inputs,
		      const struct npu_kernel_tensor *const *in, struct gemm_geom *g, char *err,
		      size_t err_size)
{
	const struct npu_kernel_tensor *a = opt_in(num_inputs, in, G_A);
	const struct npu_kernel_tensor *b = opt_in(num_inputs, in, G_B);
	const struct npu_kernel_tensor *c = opt_in(num_inputs, in, G_C);
	const struct npu_kernel_tensor *y_scale = opt_in(num_inputs, in, G_Y_SCALE);
	const struct npu_kernel_tensor *y_zp = opt_in(num_inputs, in, G_Y_ZP);
	const struct npu_kernel_tensor *b_scale = opt_in(num_inputs, in, G_B_SCALE);
	const struct npu_kernel_tensor *b_zp = opt_in(num_inputs, in, G_B_ZP);
	uint32_t kb;
	int ret;

	if (!a || !b)
		return ok_fail(err, err_size, "A and B are required");
	if (!ok_ms_is_q8(a->dtype) || !ok_ms_is_q8(b->dtype))
		return ok_fail(err, err_size, "A and B must be uint8 or int8, not %s and %s",
			       ok_dtype_name(a->dtype), ok_dtype_name(b->dtype));
	if (a->dtype == NPU_DTYPE_INT8 && b->dtype != NPU_DTYPE_INT8)
		return ok_fail(err, err_size, "an int8 A needs an int8 B, not %s",
			       ok_dtype_name(b->dtype));
	if (a->rank != 2 || b->rank != 2)
		return ok_fail(err, err_size, "A and B must be matrices, not of ranks %u and %u",
			       a->rank, b->rank);
	g->M = st->trans_a ? a->dims[1] : a->dims[0];
	g->K = st->trans_a ? a->dims[0] : a->dims[1];
	kb = st->trans_b ? b->dims[1] : b->dims[0];
	g->N = st->trans_b ? b->dims[0] : b->dims[1];
	if (kb != g->K)
		return ok_fail(err, err_size, "A' has %u columns but B' has %u rows", g->K, kb);
	ret = ok_ms_check_scale(opt_in(num_inputs, in, G_A_SCALE), "a_scale", err, err_size);
	if (!ret && !opt_in(num_inputs, in, G_A_ZP))
		ret = ok_fail(err, err_size, "a_zero_point is required");
	if (!ret)
		ret = ok_ms_check_zero_point(in[G_A_ZP], a->dtype, "a_zero_point", err, err_size);
	if (!ret)
		ret = check_b_param(b_scale, NPU_DTYPE_FP32, "b_scale", g->N, err, err_size);
	if (!ret)
		ret = check_b_param(b_zp, b->dtype, "b_zero_point", g->N, err, err_size);
	if (ret)
		return ret;
	if (b_scale->rank != b_zp->rank || b_scale->elems != b_zp->elems)
		return ok_fail(err, err_size,
			       "b_scale (%llu values) and b_zero_point (%llu values) must have one shape",
			       (unsigned long long)b_scale->elems, (unsigned long long)b_zp->elems);
	if (c) {
		ret = check_bias(c, g, err, err_size);
		if (ret)
			return ret;
	}
	if (y_scale) {
		ret = ok_ms_check_scale(y_scale, "y_scale", err, err_size);
		if (ret)
			return ret;
	}
	if (y_zp) {
		if (!y_scale)
			return ok_fail(err, err_size, "y_zero_point needs a y_scale");
		if (y_zp->dtype != a->dtype)
			return ok_fail(err, err_size, "y_zero_point is %s, A is %s",
				       ok_dtype_name(y_zp->dtype), ok_dtype_name(a->dtype));
		return ok_ms_check_zero_point(y_zp, a->dtype, "y_zero_point", err, err_size);
	}
	return 0;
}

static int qgemm_infer(const void *state, size_t num_inputs,
		       const struct npu_kernel_tensor *const *in, size_t num_outputs,
		       struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *y_zp = opt_in(num_inputs, in, G_Y_ZP);
	struct gemm_geom g;
	uint32_t dims[2];
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	ret = gemm_check(state, num_inputs, in, &g, err, err_size);
	if (ret)
		return ret;
	dims[0] = g.M;
	dims[1] = g.N;
	out[0]->dtype = y_zp ? y_zp->dtype : NPU_DTYPE_FP32;
	return ok_set_shape(out[0], 2, dims);
}

static uint64_t qgemm_work(const void *state, size_t num_inputs,
			   const struct npu_kernel_tensor *const *in, size_t num_outputs,
			   const struct npu_kernel_tensor *const *out)
{
	struct gemm_geom g;

	(void)num_outputs;
	if (gemm_check(state, num_inputs, in, &g, NULL, 0))
		return out[0]->elems;
	return (uint64_t)g.M * g.N * g.K + (uint64_t)g.K * g.N + out[0]->elems;
}

static uint32_t bias_at(const struct npu_kernel_tensor *c, uint32_t i, uint32_t j)
{
	uint64_t row = 0, col = 0;

	if (c->elems == 1)
		return ((const uint32_t *)c->data)[0];
	if (c->rank == 1) {
		col = j;
	} else {
		row = c->dims[0] == 1 ? 0 : i;
		col = c->dims[1] == 1 ? 0 : j;
	}
	return ((const uint32_t *)c->data)[row * (c->rank == 2 ? c->dims[1] : c->dims[0]) + col];
}

static int qgemm_run(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_ms_gemm_state *st = state;
	const struct npu_kernel_tensor *a = in[G_A], *b = in[G_B], *b_scale = in[G_B_SCALE];
	const struct npu_kernel_tensor *b_zp = in[G_B_ZP], *c = opt_in(num_inputs, in, G_C);
	const struct npu_kernel_tensor *y_scale = opt_in(num_inputs, in, G_Y_SCALE);
	const struct npu_kernel_tensor *y_zp = opt_in(num_inputs, in, G_Y_ZP);
	struct npu_kernel_tensor *y = out[0];
	float a_scale = ok_ms_scale(in[G_A_SCALE]), *scales = NULL;
	int32_t a_zp = ok_ms_zero_point(in[G_A_ZP]), *bq = NULL, *aq = NULL, lo = 0, hi = 0;
	int32_t z = y_zp ? ok_ms_zero_point(y_zp) : 0;
	uint32_t *acc = NULL, i, j, k;
	struct gemm_geom g;
	uint64_t work = 0;
	int ret;

	(void)num_outputs;
	ret = gemm_check(st, num_inputs, in, &g, NULL, 0);
	if (ret)
		return npu_kernel_fail(call, ret, "the operands changed since infer");
	bq = malloc((size_t)g.K * g.N * sizeof(*bq));
	aq = malloc((size_t)g.K * sizeof(*aq));
	acc = malloc((size_t)g.N * sizeof(*acc));
	scales = malloc((size_t)g.N * sizeof(*scales));
	if (!bq || !aq || !acc || !scales) {
		ret = -ENOMEM;
		goto out;
	}
	for (j = 0; j < g.N; j++) {
		uint64_t p = b_scale->elems == 1 ? 0 : j;

		scales[j] = st->alpha * a_scale * ((const float *)b_scale->data)[p];
		if (y_scale)
			scales[j] /= ok_ms_scale(y_scale);
	}
	for (k = 0; k < g.K; k++)
		for (j = 0; j < g.N; j++) {
			uint64_t at = st->trans_b ? (uint64_t)j * g.K + k : (uint64_t)k * g.N + j;

			bq[(size_t)k * g.N + j] = ok_ms_q8(b, at) -
						  ok_ms_q8(b_zp, b_zp->elems == 1 ? 0 : j);
		}
	if (y_zp)
		ok_quant_range(y->dtype, &lo, &hi);
	for (i = 0; i < g.M; i++) {
		for (k = 0; k < g.K; k++) {
			uint64_t at = st->trans_a ? (uint64_t)k * g.M + i : (uint64_t)i * g.K + k;

			aq[k] = ok_ms_q8(a, at) - a_zp;
		}
		for (j = 0; j < g.N; j++)
			acc[j] = c ? bias_at(c, i, j) : 0;
		/* uint32 sums wrap like MLAS's int32 accumulators, without UB */
		for (k = 0; k < g.K; k++) {
			const int32_t *brow = bq + (size_t)k * g.N;
			uint32_t av = (uint32_t)aq[k];

			for (j = 0; j < g.N; j++)
				acc[j] += av * (uint32_t)brow[j];
		}
		for (j = 0; j < g.N; j++) {
			uint64_t at = (uint64_t)i * g.N + j;

			if (y_zp)
				ok_set_i(y, at, ok_requantize((int32_t)acc[j], scales[j], z, lo, hi));
			else
				((float *)y->data)[at] = (float)(int32_t)acc[j] * scales[j];
		}
		work += (uint64_t)g.N * g.K + g.N;
		if (work >= OK_POLL_EVERY) {
			ret = npu_kernel_poll(call, work);
			if (ret)
				goto out;
			work = 0;
		}
	}
out:
	free(bq);
	free(aq);
	free(acc);
	free(scales);
	return ret;
}

static int qgemm_create(const struct npu_onnx_node *node, void *opaque, void **state,
			char *err, size_t err_size)
{
	struct ok_ms_gemm_state *st = ok_state_alloc(sizeof(*st));

	(void)opaque;
	(void)err;
	(void)err_size;
	if (!st)
		return -ENOMEM;
	st->alpha = ok_attr_f(node, "alpha", 1.0f);
	st->trans_a = ok_attr_i(node, "transA", 0) != 0;
	st->trans_b = ok_attr_i(node, "transB", 0) != 0;
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qgemm = {
	.size = sizeof(struct npu_kernel),
	.name = "QGemm",
	.infer = qgemm_infer,
	.work = qgemm_work,
	.run = qgemm_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qgemm = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QGemm",
	.since_version = 1,
	.kernel = &ok_kernel_qgemm,
	.create = qgemm_create,
};
