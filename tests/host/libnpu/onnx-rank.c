// SPDX-License-Identifier: MIT
/*
 * Tensors above libnpu's rank limit of 6, which ONNX allows: a rank-8
 * elementwise chain, rank-7 loss ops, metadata ops and ops along axes
 * (the dimensions they treat alike merged), held with their last
 * dimensions merged, against plain loops; ops that cannot take such a
 * tensor refuse it naming the node, the op and the input.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
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

/* X [2, 3, 2, 1, 2, 1, 2]: 48 elements, 7 dimensions. */
static const int64_t ax_d[7] = { 2, 3, 2, 1, 2, 1, 2 };

/* The offset of index @i (7 values) in a row-major tensor of dims @d. */
static size_t off7(const int64_t *d, const int *i)
{
	size_t o = 0;
	int k;

	for (k = 0; k < 7; k++)
		o = o * (size_t)d[k] + (size_t)i[k];
	return o;
}

/* Step index @i through dims @d; false after the last. */
static bool next7(const int64_t *d, int *i)
{
	int k;

	for (k = 6; k >= 0; k--) {
		if (++i[k] < d[k])
			return true;
		i[k] = 0;
	}
	return false;
}

/*
 * On X of rank 7: Softmax along axis 1, ReduceSum over axes 1 and 2
 * (kept), ArgMax along the last axis (dropped), and Shape, each against
 * loops over the model's shape.
 */
static void test_rank7_along_axes(void **state)
{
	static const int64_t axes12[2] = { 1, 2 };
	static const uint32_t held_sm[6] = { 2, 3, 2, 1, 2, 2 }, held_am[6] = { 2, 3, 2, 1, 2, 1 };
	static const int64_t rd[7] = { 2, 1, 1, 1, 2, 1, 2 };
	float x[48], sm[48], rs[8];
	int64_t am[24], shp[7];
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	int i[7] = { 0 };
	struct mb b;
	int k;

	(void)state;
	for (k = 0; k < 48; k++)
		x[k] = (float)((k * 11) % 13) * 0.25f - 1.5f;
	mb_init(&b, 13);
	input(&b, "x", 7, ax_d);
	init_i64(&b, "axes", axes12, 2);
	nodef(&b, "Softmax", "sm", "x", "sm", "axis=i:1", (const char *)NULL);
	nodef(&b, "ReduceSum", "rs", "x,axes", "rs", (const char *)NULL);
	nodef(&b, "ArgMax", "am", "x", "am", "axis=i:-1", "keepdims=i:0", (const char *)NULL);
	nodef(&b, "Shape", "shp", "x", "shp", (const char *)NULL);
	output(&b, "sm");
	output(&b, "rs");
	b.outs[b.g.n_output++] = vinfo(&b, "am", 7, 0, NULL);
	b.outs[b.g.n_output++] = vinfo(&b, "shp", 7, 0, NULL);
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_output(m, 0, &io), 0);
	expect_io(&io, 6, held_sm);
	assert_int_equal(npu_onnx_output(m, 2, &io), 0);
	expect_io(&io, 6, held_am);
	run(m, (void *[]){ x }, (void *[]){ sm, rs, am, shp });
	for (k = 0; k < 7; k++)
		assert_int_equal(shp[k], ax_d[k]);
	do {
		int j[7];
		double se = 0, sum = 0;
		int c, best = 0;

		memcpy(j, i, sizeof(j));
		for (c = 0; c < 3; c++) {
			j[1] = c;
			se += exp(x[off7(ax_d, j)]);
		}
		assert_true(fabs(sm[off7(ax_d, i)] - exp(x[off7(ax_d, i)]) / se) < 1e-6);
		if (!i[1] && !i[2]) {
			int r[7];

			for (c = 0; c < 6; c++) {
				j[1] = c / 2;
				j[2] = c % 2;
				sum += x[off7(ax_d, j)];
			}
			memcpy(r, i, sizeof(r));
			assert_true(fabs(rs[off7(rd, r)] - sum) < 1e-5);
		}
		if (!i[6]) {
			memcpy(j, i, sizeof(j));
			j[6] = 1;
			best = x[off7(ax_d, j)] > x[off7(ax_d, i)];
			assert_int_equal(am[off7(ax_d, i) / 2], best);
		}
	} while (next7(ax_d, i));
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * GatherElements along axis 1 with rank-7 indices (made by Unsqueeze
 * from rank 6), Slice of axis 1, and a Reshape to rank 3 then Unsqueeze
 * back to rank 7, against loops.
 */
static void test_rank7_gather_slice_reshape(void **state)
{
	static const int64_t td[6] = { 2, 2, 1, 2, 1, 2 }, one[1] = { 1 }, three[1] = { 3 };
	static const int64_t gd[7] = { 2, 1, 2, 1, 2, 1, 2 }, sd[7] = { 2, 2, 2, 1, 2, 1, 2 };
	static const int64_t to3[3] = { 2, 3, 8 };
	static const uint32_t held_u[6] = { 1, 1, 2, 1, 3, 8 };
	static const int64_t uaxes[4] = { 0, 1, 3, 5 };
	float x[48], g[16], sl[32], u[48];
	int64_t t[16];
	struct npu_onnx_model *m;
	struct npu_onnx_io io;
	int i[7] = { 0 };
	struct mb b;
	int k;

	(void)state;
	for (k = 0; k < 48; k++)
		x[k] = (float)k * 0.5f - 3.0f;
	for (k = 0; k < 16; k++)
		t[k] = (k * 5) % 3;
	mb_init(&b, 13);
	input(&b, "x", 7, ax_d);
	b.ins[b.g.n_input++] = vinfo(&b, "t", 7, 6, td);
	init_i64(&b, "one", one, 1);
	init_i64(&b, "three", three, 1);
	init_i64(&b, "to3", to3, 3);
	init_i64(&b, "uaxes", uaxes, 4);
	nodef(&b, "Unsqueeze", "ut", "t,one", "idx", (const char *)NULL);
	nodef(&b, "GatherElements", "ge", "x,idx", "g", "axis=i:1", (const char *)NULL);
	nodef(&b, "Slice", "sl", "x,one,three,one", "sl", (const char *)NULL);
	nodef(&b, "Reshape", "r3", "x,to3", "x3", (const char *)NULL);
	nodef(&b, "Unsqueeze", "u7", "x3,uaxes", "u", (const char *)NULL);
	output(&b, "g");
	output(&b, "sl");
	output(&b, "u");
	m = load(&b, NULL, 0, NULL);
	assert_int_equal(npu_onnx_output(m, 2, &io), 0);
	expect_io(&io, 6, held_u);
	run(m, (void *[]){ x, t }, (void *[]){ g, sl, u });
	assert_memory_equal(u, x, sizeof(x));
	do {
		int j[7];

		memcpy(j, i, sizeof(j));
		if (!i[1]) {
			j[1] = (int)t[off7(gd, i)];
			assert_true(g[off7(gd, i)] == x[off7(ax_d, j)]);
		}
		if (i[1] >= 1) {
			j[1] = i[1] - 1;
			assert_true(sl[off7(sd, j)] == x[off7(ax_d, i)]);
		}
	} while (next7(ax_d, i));
	npu_onnx_free(m);
	mb_free(&b);
}

/*
 * Split of axis 1 into [1, 2] and Concat of the pieces the other way
 * round, on X of rank 7: the first piece and the rotated X against loops.
 */
static void test_rank7_split_concat(void **state)
{
	static const int64_t sizes[2] = { 1, 2 }, ad[7] = { 2, 1, 2, 1, 2, 1, 2 };
	float x[48], a[16], r[48];
	struct npu_onnx_model *m;
	int i[7] = { 0 };
	struct mb b;
	int k;

	(void)state;
	for (k = 0; k < 48; k++)
		x[k] = (float)k;
	mb_init(&b, 13);
	input(&b, "x", 7, ax_d);
	init_i64(&b, "sizes", sizes, 2);
	nodef(&b, "Split", "split", "x,sizes", "a,bb", "axis=i:1", (const char *)NULL);
	nodef(&b, "Concat", "cat", "bb,a", "r", "axis=i:1", (const char *)NULL);
	output(&b, "a");
	output(&b, "r");
	m = load(&b, NULL, 0, NULL);
	run(m, (void *[]){ x }, (void *[]){ a, r });
	do {
		int j[7];

		memcpy(j, i, sizeof(j));
		if (!i[1])
			assert_true(a[off7(ad, i)] == x[off7(ax_d, i)]);
		j[1] = (i[1] + 2) % 3;
		assert_true(r[off7(ax_d, j)] == x[off7(ax_d, i)]);
	} while (next7(ax_d, i));
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
	     "node 'y' (Transpose): input 'x' has rank 7, above libnpu's limit of 6, which only elementwise, metadata,");
	mb_free(&b);

	mb_init(&b, 13);
	input(&b, "x", 7, nll_dx);
	init_f(&b, "b", 1, d2, two, 2);
	nodef(&b, "Add", "add", "x,b", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL, "node 'add' (Add): input 1 broadcasts against input 'x' of rank 7");
	mb_free(&b);

	/* a Slice of every other axis leaves nothing to merge */
	mb_init(&b, 13);
	input(&b, "x", 7, nll_dx);
	init_i64(&b, "z4", (const int64_t[]){ 0, 0, 0, 0 }, 4);
	init_i64(&b, "e4", (const int64_t[]){ 1, 1, 1, 1 }, 4);
	init_i64(&b, "a4", (const int64_t[]){ 0, 2, 4, 6 }, 4);
	nodef(&b, "Slice", "sl", "x,z4,e4,a4", "y", (const char *)NULL);
	output(&b, "y");
	load(&b, NULL, -EINVAL,
	     "node 'sl' (Slice): input 'x' has rank 7, above libnpu's limit of 6, and keeps 7 dimensions even with those it treats alike merged");
	mb_free(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank8_elementwise),
		cmocka_unit_test(test_rank7_loss),
		cmocka_unit_test(test_rank7_along_axes),
		cmocka_unit_test(test_rank7_gather_slice_reshape),
		cmocka_unit_test(test_rank7_split_concat),
		cmocka_unit_test(test_rank7_refused),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("onnx-rank", tests, NULL, NULL);
}
