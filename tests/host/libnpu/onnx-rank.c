// SPDX-License-Identifier: MIT
/*
 * Tensors above libnpu's rank limit of 6, which ONNX allows: a rank-8
 * elementwise chain and rank-7 loss ops, held with their last dimensions
 * merged, against plain loops; ops that cannot take such a tensor refuse
 * it naming the node, the op and the input.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/graph.h"
#include "npu/onnx.h"
#include "onnx-build.h"
#include "onnx-ktest.h"
#include "onnx.pb-c.h"

/* Compile for the CPU, bind inputs then outputs in order, run. */
static void run(struct npu_onnx_model *m, void *const *in, void *const *out)
{
	size_t ni = npu_onnx_num_inputs(m), no = npu_onnx_num_outputs(m), i;
	struct npu_runtime *rt = NULL;
	uint32_t ids[8];
	void *data[8];

	assert_true(ni + no <= 8);
	assert_int_equal(npu_graph_compile(npu_onnx_graph(m), NULL, 0, &rt), 0);
	for (i = 0; i < ni + no; i++) {
		struct npu_onnx_io io;

		if (i < ni)
			assert_int_equal(npu_onnx_input(m, i, &io), 0);
		else
			assert_int_equal(npu_onnx_output(m, i - ni, &io), 0);
		ids[i] = io.value;
		data[i] = i < ni ? in[i] : out[i - ni];
	}
	assert_int_equal(npu_runtime_setup(rt, ni + no, ids, data), 0);
	assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	npu_runtime_free(rt);
}

static void expect_io(const struct npu_onnx_io *io, uint32_t rank, const uint32_t *dims)
{
	uint32_t k;

	assert_int_equal(io->rank, rank);
	for (k = 0; k < rank; k++)
		assert_int_equal(io->dims[k], dims[k]);
}

/*
 * y = -x * x + 0.5 over x of rank 8; the input and output are held (and
 * described) with dimensions 6 to 8 merged: [2,1,2,1,2, 1*2*3].
 */
static void test_rank8_elementwise(void **state)
{
	static const int64_t dx[8] = { 2, 1, 2, 1, 2, 1, 2, 3 }, d1[1] = { 1 };
	static const uint32_t held[6] = { 2, 1, 2, 1, 2, 6 };
	float x[48], y[48], half = 0.5f;
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct mb b;
	int k;

	(void)state;
	for (k = 0; k < 48; k++)
		x[k] = (float)(k % 7) * 0.5f - 1.25f;
	mb_init(&b, 13);
	input(&b, "x", 8, dx);
	init_f(&b, "half", 1, d1, &half, 1);
	nodef(&b, "Neg", NULL, "x", "n", (const char *)NULL);
	nodef(&b, "Mul", NULL, "n,x", "p", (const char *)NULL);
	nodef(&b, "Add", NULL, "p,half", "y", (const char *)NULL);
	output(&b, "y");
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_input(m, 0, &io), 0);
	expect_io(&io, 6, held);
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	expect_io(&io, 6, held);
	run(m, (void *[]){ x }, (void *[]){ y });
	for (k = 0; k < 48; k++)
		assert_true(y[k] == -x[k] * x[k] + 0.5f);
	npu_onnx_free(m);
	mb_free(&b);
}

/* X [N=2, C=3, 1, 2, 1, 2, 2], the target [2, 1, 2, 1, 2, 2]: 16 positions. */
#define NLL_N 2
#define NLL_C 3
#define NLL_S 8
static const int64_t nll_dx[7] = { NLL_N, NLL_C, 1, 2, 1, 2, 2 };
static const int64_t nll_dt[6] = { NLL_N, 1, 2, 1, 2, 2 };

static void nll_data(float *x, int64_t *t)
{
	int k;

	for (k = 0; k < NLL_N * NLL_C * NLL_S; k++)
		x[k] = (float)((k * 5) % 11) * 0.25f - 1.0f;
	for (k = 0; k < NLL_N * NLL_S; k++)
		t[k] = (k * 7) % NLL_C;
}

/*
 * NegativeLogLikelihoodLoss of rank 7 without reduction ([2, 1, 2, 1, 2,
 * 2], the model's shape: it fits), then with weights and the mean, and
 * SoftmaxCrossEntropyLoss's log_prob (rank 7, held merged).
 */
static void test_rank7_loss(void **state)
{
	static const uint32_t dloss[6] = { 2, 1, 2, 1, 2, 2 }, dlogp[6] = { 2, 3, 1, 2, 1, 4 };
	static const float w[NLL_C] = { 0.5f, 2.0f, 1.0f };
	float x[NLL_N * NLL_C * NLL_S], none[NLL_N * NLL_S], mean, logp[NLL_N * NLL_C * NLL_S];
	float sce;
	int64_t t[NLL_N * NLL_S];
	double num = 0, den = 0, sce_sum = 0;
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	struct mb b;
	int n, s, c;

	(void)state;
	nll_data(x, t);
	mb_init(&b, 13);
	input(&b, "x", 7, nll_dx);
	b.ins[b.g.n_input++] = vinfo(&b, "t", 7, 6, nll_dt);
	init_f(&b, "w", 1, (const int64_t[]){ NLL_C }, w, NLL_C);
	kt_attr_s(&b, nodef(&b, "NegativeLogLikelihoodLoss", NULL, "x,t", "none", (const char *)NULL),
		  "reduction", "none");
	nodef(&b, "NegativeLogLikelihoodLoss", NULL, "x,t,w", "mean", (const char *)NULL);
	nodef(&b, "SoftmaxCrossEntropyLoss", NULL, "x,t", "sce,logp", (const char *)NULL);
	output(&b, "none");
	output(&b, "mean");
	output(&b, "sce");
	output(&b, "logp");
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	expect_io(&io, 6, dloss);
	assert_int_equal(npu_onnx_output(m, 1, &io), 0);
	assert_int_equal(io.rank, 0);
	assert_int_equal(npu_onnx_output(m, 3, &io), 0);
	expect_io(&io, 6, dlogp);
	run(m, (void *[]){ x, t }, (void *[]){ none, &mean, &sce, logp });
	for (n = 0; n < NLL_N; n++)
		for (s = 0; s < NLL_S; s++) {
			int64_t k = t[n * NLL_S + s];
			float xv = x[(n * NLL_C + k) * NLL_S + s];
			double mx = -INFINITY, se = 0;

			assert_true(none[n * NLL_S + s] == -xv);
			num += -(double)w[k] * xv;
			den += w[k];
			for (c = 0; c < NLL_C; c++)
				mx = fmax(mx, x[(n * NLL_C + c) * NLL_S + s]);
			for (c = 0; c < NLL_C; c++)
				se += exp(x[(n * NLL_C + c) * NLL_S + s] - mx);
			for (c = 0; c < NLL_C; c++) {
				double lp = x[(n * NLL_C + c) * NLL_S + s] - mx - log(se);

				assert_true(fabs(logp[(n * NLL_C + c) * NLL_S + s] - lp) < 1e-5);
			}
			sce_sum += -(x[(n * NLL_C + k) * NLL_S + s] - mx - log(se));
		}
	assert_true(fabs(mean - num / den) < 1e-5);
	assert_true(fabs(sce - sce_sum / (NLL_N * NLL_S)) < 1e-5);
	npu_onnx_free(m);
	mb_free(&b);
}

/* Ops that would mix the merged dimensions refuse, saying which and why. */
static void test_rank7_refused(void **state)
{
	static const int64_t d2[1] = { 2 };
	static const float two[2] = { 1, 2 };
	struct mb b;

	(void)state;
	mb_init(&b, 13);
	input(&b, "x", 7, nll_dx);
	nodef(&b, "Transpose", NULL, "x", "y", "perm=ints:1,0,2,3,4,5,6", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL,
	     "node 'y' (Transpose): input 'x' has rank 7, above libnpu's limit of 6, which only elementwise ops and the loss ops take");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 7, nll_dx);
	init_f(&b, "b", 1, d2, two, 2);
	nodef(&b, "Add", "add", "x,b", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "node 'add' (Add): input 1 broadcasts against input 'x' of rank 7");
	mb_free(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank8_elementwise),
		cmocka_unit_test(test_rank7_loss),
		cmocka_unit_test(test_rank7_refused),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-rank", tests, NULL, NULL);
}
