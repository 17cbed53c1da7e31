// SPDX-License-Identifier: MIT
/*
 * The seq family of ONNX CPU kernels (libnpu/onnx/kernels/ok_seq*.c) run
 * directly through npu_kernel_run(): RNN, GRU and LSTM against their
 * equations evaluated here step by step, the windows, DFT and STFT
 * against values worked out by hand, MelWeightMatrix's triangles,
 * NonMaxSuppression and TfIdfVectorizer on the ONNX specification's
 * examples, every infer() refusal and a poll.
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
#include "npu/kernel.h"
#include "npu/onnx.h"
#include "kernels/ok_seq.h"
#include "onnx-ktest.h"

/* Pool tensors: of a dims array, and scalars. */
#define T(dt, dims, data) kt_tensor(dt, KT_RANK(dims), dims, data)
#define S(dt, data) kt_tensor(dt, 0, NULL, data)

/* @t as infer sees a value computed at run time: no data. */
static void not_constant(struct npu_kernel_tensor *t)
{
	free(t->data);
	t->data = NULL;
}

static void expect_close(const float *got, const double *want, size_t n, double tol)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabs(got[i] - want[i]) <= tol))
			fail_msg("element %zu: %.9g, want %.9g", i, got[i], want[i]);
}

static double sigm(double x)
{
	return 1 / (1 + exp(-x));
}

/* ---- RNN ------------------------------------------------------------------------- */

static void test_rnn_forward(void **unused)
{
	/*
	 * H = 2, I = 1, 2 steps, batch 1, Tanh:
	 * h_t = tanh(W x_t + R h_(t-1) + Wb + Rb), from initial_h.
	 */
	static const float x[] = { 1, -2 }, w[] = { 0.5f, -0.25f };
	static const float r[] = { 0.1f, 0.2f, -0.3f, 0.4f }, b[] = { 0.1f, 0.2f, 0.05f, -0.1f };
	static const float h0[] = { 0.3f, -0.6f };
	struct ok_rnn_state st;
	uint32_t dx[] = { 2, 1, 1 }, dw[] = { 1, 2, 1 }, dr[] = { 1, 2, 2 }, db[] = { 1, 4 },
		 dh[] = { 1, 1, 2 };
	struct npu_kernel_tensor y, yh, *in[6] = { T(NPU_DTYPE_FP32, dx, x), T(NPU_DTYPE_FP32, dw, w),
						  T(NPU_DTYPE_FP32, dr, r), T(NPU_DTYPE_FP32, db, b),
						  NULL, T(NPU_DTYPE_FP32, dh, h0) };
	struct npu_kernel_tensor *out[2] = { &y, &yh };
	double h[2] = { h0[0], h0[1] }, want[4];

	(void)unused;
	for (int t = 0; t < 2; t++) {
		double n0 = tanh(w[0] * x[t] + r[0] * h[0] + r[1] * h[1] + b[0] + b[2]);
		double n1 = tanh(w[1] * x[t] + r[2] * h[0] + r[3] * h[1] + b[1] + b[3]);

		h[0] = n0;
		h[1] = n1;
		want[2 * t] = n0;
		want[2 * t + 1] = n1;
	}
	ok_rnn_defaults(&st, OK_RNN);
	assert_int_equal(kt_run(&ok_kernel_rnn, &st, 6, in, 2, out, NULL), 0);
	assert_int_equal(y.rank, 4);
	assert_int_equal(y.dims[0], 2);
	assert_int_equal(y.dims[1], 1);
	assert_int_equal(y.dims[3], 2);
	expect_close(y.data, want, 4, 1e-6);
	expect_close(yh.data, want + 2, 2, 1e-6);
	kt_free_out(&y);
	kt_free_out(&yh);
	/* hidden_size disagreeing with R, and a W of the wrong shape */
	st.hidden_size = 3;
	kt_expect_fail(kt_run(&ok_kernel_rnn, &st, 6, in, 2, out, NULL),
		    "hidden_size is 3 but R is [.., .., 2]");
	st.hidden_size = 0;
	in[1] = T(NPU_DTYPE_FP32, dr, r);
	kt_expect_fail(kt_run(&ok_kernel_rnn, &st, 6, in, 2, out, NULL), "W must be [1, 2, 1]");
	in[1] = T(NPU_DTYPE_FP64, dw, NULL);
	kt_expect_fail(kt_run(&ok_kernel_rnn, &st, 6, in, 2, out, NULL), "W is float64, X is float32");
}

static void test_rnn_bidirectional_lengths(void **unused)
{
	/*
	 * H = 1, I = 1, seq 3, batch 2 with lengths (3, 1), Relu, no bias:
	 * forward h = relu(w x + r h); the reverse direction (w', r') starts
	 * at each entry's last valid step.  Steps past a length are zeros in Y.
	 */
	static const float x[] = { 1, 5, 2, 0, 3, 0 };	/* [seq 3, batch 2, 1] */
	static const float w[] = { 1, 2 }, r[] = { 0.5f, 0.25f };
	static const int32_t lens[] = { 3, 1 };
	struct ok_rnn_state st;
	uint32_t dx[] = { 3, 2, 1 }, dw[] = { 2, 1, 1 }, dr[] = { 2, 1, 1 }, dl[] = { 2 };
	struct npu_kernel_tensor y, yh, *in[5] = { T(NPU_DTYPE_FP32, dx, x), T(NPU_DTYPE_FP32, dw, w),
						  T(NPU_DTYPE_FP32, dr, r), NULL,
						  T(NPU_DTYPE_INT32, dl, lens) };
	struct npu_kernel_tensor *out[2] = { &y, &yh };
	/* Y [seq, dir, batch, 1] */
	double want[12] = { 0 }, hf, hr;

	(void)unused;
	/* batch 0, forward: 1, 2 + 0.5, 3 + 1.25 */
	hf = 1; want[0] = hf;
	hf = 2 + 0.5 * hf; want[4] = hf;
	hf = 3 + 0.5 * hf; want[8] = hf;
	/* batch 0, reverse: t = 2, 1, 0 */
	hr = 2 * 3; want[10] = hr;
	hr = 2 * 2 + 0.25 * hr; want[6] = hr;
	hr = 2 * 1 + 0.25 * hr; want[2] = hr;
	/* batch 1, length 1: only t = 0, both directions */
	want[1] = 5;
	want[3] = 10;
	ok_rnn_defaults(&st, OK_RNN);
	st.direction = OK_DIR_BIDIRECTIONAL;
	st.funcs[0][0].act = OK_ACT_RELU;
	st.funcs[1][0].act = OK_ACT_RELU;
	assert_int_equal(kt_run(&ok_kernel_rnn, &st, 5, in, 2, out, NULL), 0);
	expect_close(y.data, want, 12, 1e-6);
	{
		/* Y_h [dir, batch, 1]: forward last, reverse at t = 0 */
		double wh[4] = { want[8], 5, want[2], 10 };

		expect_close(yh.data, wh, 4, 1e-6);
	}
	kt_free_out(&y);
	kt_free_out(&yh);
	/* layout 1 (batch major) gives the same numbers, transposed */
	{
		static const float xb[] = { 1, 2, 3, 5, 0, 0 };	/* [batch 2, seq 3, 1] */
		double wb[12];

		st.batch_major = true;
		in[0] = T(NPU_DTYPE_FP32, dx, xb);
		in[0]->dims[0] = 2;
		in[0]->dims[1] = 3;
		assert_int_equal(kt_run(&ok_kernel_rnn, &st, 5, in, 2, out, NULL), 0);
		assert_int_equal(y.dims[0], 2);
		assert_int_equal(y.dims[1], 3);
		assert_int_equal(y.dims[2], 2);
		/* Y [batch, seq, dir, 1] from [seq, dir, batch, 1] */
		for (int b = 0; b < 2; b++)
			for (int t = 0; t < 3; t++)
				for (int d = 0; d < 2; d++)
					wb[(b * 3 + t) * 2 + d] = want[(t * 2 + d) * 2 + b];
		expect_close(y.data, wb, 12, 1e-6);
		kt_free_out(&y);
		kt_free_out(&yh);
		st.batch_major = false;
		in[0] = T(NPU_DTYPE_FP32, dx, x);
	}
	/* a length out of range fails the run, naming it */
	{
		static const int32_t bad[] = { 4, 1 };

		in[4] = T(NPU_DTYPE_INT32, dl, bad);
		assert_int_equal(kt_run(&ok_kernel_rnn, &st, 5, in, 2, out, NULL), -EINVAL);
		assert_non_null(strstr(kt_msg, "sequence_lens[0] is 4, out of range [0, 3]"));
		kt_free_out(&y);
		kt_free_out(&yh);
	}
}

/* ---- GRU ------------------------------------------------------------------------- */

static void gru_case(bool lbr)
{
	/* H = 1, I = 1, 2 steps; gates z, r, h */
	static const double x[] = { 0.5, -1 };
	static const double w[] = { 0.3, -0.2, 0.7 }, r[] = { 0.4, 0.6, -0.5 };
	static const double b[] = { 0.1, -0.1, 0.2, 0.05, 0.15, -0.25 };
	struct ok_rnn_state st;
	uint32_t dx[] = { 2, 1, 1 }, dw[] = { 1, 3, 1 }, db[] = { 1, 6 };
	struct npu_kernel_tensor y, yh, *in[4] = { T(NPU_DTYPE_FP64, dx, x), T(NPU_DTYPE_FP64, dw, w),
						  T(NPU_DTYPE_FP64, dw, r), T(NPU_DTYPE_FP64, db, b) };
	struct npu_kernel_tensor *out[2] = { &y, &yh };
	double h = 0, want[2];

	for (int t = 0; t < 2; t++) {
		double z = sigm(w[0] * x[t] + r[0] * h + b[0] + b[3]);
		double rr = sigm(w[1] * x[t] + r[1] * h + b[1] + b[4]);
		double c = lbr ? tanh(w[2] * x[t] + rr * (r[2] * h + b[5]) + b[2]) :
				 tanh(w[2] * x[t] + r[2] * (rr * h) + b[5] + b[2]);

		h = (1 - z) * c + z * h;
		want[t] = h;
	}
	ok_rnn_defaults(&st, OK_GRU);
	st.linear_before_reset = lbr;
	assert_int_equal(kt_run(&ok_kernel_gru, &st, 4, in, 2, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_FP64);
	for (int t = 0; t < 2; t++)
		assert_true(fabs(((double *)y.data)[t] - want[t]) < 1e-12);
	assert_true(fabs(((double *)yh.data)[0] - want[1]) < 1e-12);
	kt_free_out(&y);
	kt_free_out(&yh);
}

static void test_gru(void **unused)
{
	(void)unused;
	gru_case(false);
	gru_case(true);
}

/* ---- LSTM ------------------------------------------------------------------------ */

static void lstm_case(bool peep, bool input_forget, double clip)
{
	/* H = 1, I = 1, 2 steps; gates i, o, f, c; peepholes i, o, f */
	static const float x[] = { 1, -0.5f };
	static const float w[] = { 0.2f, 0.4f, -0.3f, 0.9f }, r[] = { 0.5f, -0.6f, 0.7f, 0.1f };
	static const float b[] = { 0.1f, 0, -0.1f, 0.2f, 0, 0.3f, 0, -0.2f };
	static const float p[] = { 0.25f, -0.5f, 0.75f }, h0 = 0.2f, c0 = -0.4f;
	struct ok_rnn_state st;
	uint32_t dx[] = { 2, 1, 1 }, dw[] = { 1, 4, 1 }, db[] = { 1, 8 }, dp[] = { 1, 3 },
		 ds[] = { 1, 1, 1 };
	struct npu_kernel_tensor y, yh, yc, *in[8] = {
		T(NPU_DTYPE_FP32, dx, x), T(NPU_DTYPE_FP32, dw, w), T(NPU_DTYPE_FP32, dw, r),
		T(NPU_DTYPE_FP32, db, b), NULL, T(NPU_DTYPE_FP32, ds, &h0),
		T(NPU_DTYPE_FP32, ds, &c0), peep ? T(NPU_DTYPE_FP32, dp, p) : NULL };
	struct npu_kernel_tensor *out[3] = { &y, &yh, &yc };
	double h = h0, c = c0, want[2];

#define CL(v) (clip > 0 ? fmax(-clip, fmin(clip, (v))) : (v))
	for (int t = 0; t < 2; t++) {
		double pi = peep ? p[0] : 0, po = peep ? p[1] : 0, pf = peep ? p[2] : 0;
		double i = sigm(CL(w[0] * x[t] + r[0] * h + b[0] + b[4] + pi * c));
		double f = input_forget ? 1 - i : sigm(CL(w[2] * x[t] + r[2] * h + b[2] + b[6] + pf * c));
		double g = tanh(CL(w[3] * x[t] + r[3] * h + b[3] + b[7]));
		double o;

		c = f * c + i * g;
		o = sigm(CL(w[1] * x[t] + r[1] * h + b[1] + b[5] + po * c));
		h = o * tanh(c);
		want[t] = h;
	}
#undef CL
	ok_rnn_defaults(&st, OK_LSTM);
	st.input_forget = input_forget;
	st.clip = clip;
	assert_int_equal(kt_run(&ok_kernel_lstm, &st, 8, in, 3, out, NULL), 0);
	expect_close(y.data, want, 2, 1e-6);
	expect_close(yh.data, want + 1, 1, 1e-6);
	expect_close(yc.data, &c, 1, 1e-6);
	kt_free_out(&y);
	kt_free_out(&yh);
	kt_free_out(&yc);
}

static void test_lstm(void **unused)
{
	(void)unused;
	lstm_case(false, false, 0);
	lstm_case(true, false, 0);
	lstm_case(true, true, 0);
	lstm_case(true, false, 0.1);
}

/* f(x) of each activation, from its ONNX definition */
static double act_ref(enum ok_rnn_act act, double al, double be, double x)
{
	switch (act) {
	case OK_ACT_RELU: return x > 0 ? x : 0;
	case OK_ACT_TANH: return tanh(x);
	case OK_ACT_SIGMOID: return sigm(x);
	case OK_ACT_AFFINE: return al * x + be;
	case OK_ACT_LEAKY_RELU: return x < 0 ? al * x : x;
	case OK_ACT_THRESHOLDED_RELU: return x > al ? x : 0;
	case OK_ACT_SCALED_TANH: return al * tanh(be * x);
	case OK_ACT_HARD_SIGMOID: return fmax(0, fmin(1, al * x + be));
	case OK_ACT_ELU: return x < 0 ? al * (exp(x) - 1) : x;
	case OK_ACT_SOFTSIGN: return x / (1 + fabs(x));
	case OK_ACT_SOFTPLUS: return log(1 + exp(x));
	}
	return NAN;
}

static void test_rnn_activations(void **unused)
{
	/* an RNN of H = I = 1, W = 1, R = 0 applies f to each input value */
	static const float x[] = { -2.5f, -0.5f, 0, 0.7f, 3 };
	static const float one = 1, zero = 0;
	static const char *const names[] = { "Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
					     "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
					     "Softsign", "Softplus" };
	uint32_t dx[] = { 5, 1, 1 }, dw[] = { 1, 1, 1 };
	struct npu_kernel_tensor y, *in[3] = { T(NPU_DTYPE_FP32, dx, x), T(NPU_DTYPE_FP32, dw, &one),
					       T(NPU_DTYPE_FP32, dw, &zero) };
	struct npu_kernel_tensor *out[1] = { &y };
	struct ok_rnn_state st;
	struct ok_rnn_func f;
	bool a, b;

	(void)unused;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		double want[5];

		ok_rnn_defaults(&st, OK_RNN);
		assert_true(ok_rnn_act_parse(names[k], &st.funcs[0][0], &a, &b));
		/* alpha and beta as activation_alpha/beta would give them */
		if (a)
			st.funcs[0][0].alpha = 0.75;
		if (b)
			st.funcs[0][0].beta = 0.25;
		for (int i = 0; i < 5; i++)
			want[i] = act_ref(st.funcs[0][0].act, st.funcs[0][0].alpha,
					  st.funcs[0][0].beta, x[i]);
		assert_int_equal(kt_run(&ok_kernel_rnn, &st, 3, in, 1, out, NULL), 0);
		expect_close(y.data, want, 5, 1e-6);
		kt_free_out(&y);
	}
	/* names are case-insensitive, as onnxruntime reads them */
	assert_true(ok_rnn_act_parse("leakyrelu", &f, &a, &b));
	assert_int_equal(f.act, OK_ACT_LEAKY_RELU);
	assert_true(f.alpha == 0.01 && a && !b);
	assert_true(ok_rnn_act_parse("HardSigmoid", &f, &a, &b));
	assert_true(f.alpha == 0.2 && f.beta == 0.5 && a && b);
	assert_false(ok_rnn_act_parse("Swish", &f, &a, &b));
}

/* ---- Windows and MelWeightMatrix -------------------------------------------------- */

static void window(enum ok_window_kind kind, bool periodic, enum npu_dtype dt, int64_t n,
		   struct npu_kernel_tensor *y)
{
	struct ok_window_state st = { .kind = kind, .periodic = periodic, .dtype = dt };
	struct npu_kernel_tensor *in[1] = { S(NPU_DTYPE_INT64, &n) };
	struct npu_kernel_tensor *out[1] = { y };
	const struct npu_kernel *k = kind == OK_WIN_HANN ? &ok_kernel_hann_window :
				     kind == OK_WIN_HAMMING ? &ok_kernel_hamming_window :
							      &ok_kernel_blackman_window;

	assert_int_equal(kt_run(k, &st, 1, in, 1, out, NULL), 0);
	assert_int_equal(y->dims[0], n);
}

static void test_windows(void **unused)
{
	static const double hann_p4[] = { 0, 0.5, 1, 0.5 }, hann_s5[] = { 0, 0.5, 1, 0.5, 0 };
	static const double hamming_p2[] = { 4.0 / 46, 1 }, blackman_s3[] = { 0, 1, 0 };
	static const int32_t hann_i4[] = { 0, 0, 1, 0 };
	struct ok_window_state st = { .kind = OK_WIN_HANN, .periodic = true, .dtype = NPU_DTYPE_FP32 };
	struct npu_kernel_tensor y, *in[1], *out[1] = { &y };
	int64_t zero = 0;

	(void)unused;
	window(OK_WIN_HANN, true, NPU_DTYPE_FP32, 4, &y);
	expect_close(y.data, hann_p4, 4, 1e-7);
	kt_free_out(&y);
	window(OK_WIN_HANN, false, NPU_DTYPE_FP32, 5, &y);
	expect_close(y.data, hann_s5, 5, 1e-7);
	kt_free_out(&y);
	window(OK_WIN_HAMMING, true, NPU_DTYPE_FP32, 2, &y);
	expect_close(y.data, hamming_p2, 2, 1e-7);
	kt_free_out(&y);
	window(OK_WIN_BLACKMAN, false, NPU_DTYPE_FP32, 3, &y);
	expect_close(y.data, blackman_s3, 3, 1e-7);
	kt_free_out(&y);
	window(OK_WIN_HANN, true, NPU_DTYPE_INT32, 4, &y);
	assert_memory_equal(y.data, hann_i4, sizeof(hann_i4));
	kt_free_out(&y);
	/* the size must be a constant, positive scalar */
	in[0] = S(NPU_DTYPE_INT64, &zero);
	kt_expect_fail(kt_run(&ok_kernel_hann_window, &st, 1, in, 1, out, NULL),
		    "size 0 is out of range [1, 16777216]");
	not_constant(in[0]);
	kt_expect_fail(kt_run(&ok_kernel_hann_window, &st, 1, in, 1, out, NULL),
		    "the output shape depends on size's value, which must be constant");
}

static void test_mel_weight_matrix(void **unused)
{
	/*
	 * 2 mel bins over 0..8000 Hz at 16 kHz, dft_length 16: the mel
	 * points 0, 710, 1420, 2130 are 0, 614.5, 1768.5, 3935.4 Hz, so
	 * spectrogram bins floor(17 hz / 16000) = 0, 0, 1, 4.  Triangle 0 is
	 * (0, 0, 1): 1 at bin 0; triangle 1 is (0, 1, 4): 0, 1, 2/3, 1/3.
	 */
	static const double want[18] = { 1, 0, 0, 1, 0, 2.0 / 3, 0, 1.0 / 3 };
	struct ok_mel_state st = { .dtype = NPU_DTYPE_FP32 };
	int64_t bins = 2, dft = 16, rate = 16000;
	float lo = 0, hi = 8000, hi_bad = 9000;
	struct npu_kernel_tensor y, *in[5] = { S(NPU_DTYPE_INT64, &bins), S(NPU_DTYPE_INT64, &dft),
					       S(NPU_DTYPE_INT64, &rate), S(NPU_DTYPE_FP32, &lo),
					       S(NPU_DTYPE_FP32, &hi) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_mel_weight_matrix, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[0], 9);
	assert_int_equal(y.dims[1], 2);
	expect_close(y.data, want, 18, 1e-6);
	kt_free_out(&y);
	/* an upper edge beyond Nyquist lands outside the spectrogram */
	in[4] = S(NPU_DTYPE_FP32, &hi_bad);
	rate = 8000;
	in[2] = S(NPU_DTYPE_INT64, &rate);
	assert_int_equal(kt_run(&ok_kernel_mel_weight_matrix, &st, 5, in, 1, out, NULL), -EINVAL);
	assert_non_null(strstr(kt_msg, "out of range [0, 9)"));
	kt_free_out(&y);
	in[3] = S(NPU_DTYPE_INT64, &dft);
	kt_expect_fail(kt_run(&ok_kernel_mel_weight_matrix, &st, 5, in, 1, out, NULL),
		    "input 3 must be a float, not int64");
}

/* ---- DFT and STFT ---------------------------------------------------------------- */

static void test_dft(void **unused)
{
	/* [1, 2, 3, 4]: 10, -2 + 2i, -2, -2 - 2i */
	static const float x[] = { 1, 2, 3, 4 };
	static const double want[] = { 10, 0, -2, 2, -2, 0, -2, -2 };
	static const double back[] = { 1, 0, 2, 0, 3, 0, 4, 0 };
	/* zero-padded to 8: X[0] = 10, X[4] = 1 - 2 + 3 - 4 = -2 */
	struct ok_dft_state st = { .axis = 1 };
	uint32_t dx[] = { 1, 4, 1 }, dc[] = { 1, 4, 2 };
	int64_t len8 = 8;
	struct npu_kernel_tensor y, *in[2] = { T(NPU_DTYPE_FP32, dx, x), NULL };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[1], 4);
	assert_int_equal(y.dims[2], 2);
	expect_close(y.data, want, 8, 1e-5);
	/* the inverse of the complex result is the signal */
	st.inverse = true;
	in[0] = T(NPU_DTYPE_FP32, dc, y.data);
	kt_free_out(&y);
	assert_int_equal(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, NULL), 0);
	expect_close(y.data, back, 8, 1e-5);
	kt_free_out(&y);
	/* onesided, dft_length 8 */
	st.inverse = false;
	st.onesided = true;
	in[0] = T(NPU_DTYPE_FP32, dx, x);
	in[1] = S(NPU_DTYPE_INT64, &len8);
	assert_int_equal(kt_run(&ok_kernel_dft, &st, 2, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[1], 5);
	assert_true(fabs(((float *)y.data)[0] - 10) < 1e-5);
	assert_true(fabs(((float *)y.data)[8] + 2) < 1e-5);
	kt_free_out(&y);
	/* errors */
	not_constant(in[1]);
	kt_expect_fail(kt_run(&ok_kernel_dft, &st, 2, in, 1, out, NULL),
		    "depends on dft_length's value, which must be constant");
	st.axis = 2;
	kt_expect_fail(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, NULL),
		    "axis 2 is out of range [-3, 1]");
	st.axis = 1;
	dx[2] = 3;
	in[0] = T(NPU_DTYPE_FP32, dx, NULL);
	kt_expect_fail(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, NULL),
		    "the last dimension must be 1 (real) or 2 (complex), not 3");
}

static void test_stft(void **unused)
{
	/*
	 * 1..8 in frames of 4 every 4: [1, 2, 3, 4] gives 10, -2 + 2i, -2;
	 * [5, 6, 7, 8] gives 26, -2 + 2i, -2.  With the window (0, 1, 1, 0)
	 * the first frame is [0, 2, 3, 0]: 5, -3 - 2i, 1.
	 */
	static const float x[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, win[] = { 0, 1, 1, 0 };
	static const double want[] = { 10, 0, -2, 2, -2, 0, 26, 0, -2, 2, -2, 0 };
	static const double want_w[] = { 5, 0, -3, -2, 1, 0 };
	struct ok_stft_state st = { .onesided = true };
	uint32_t dx[] = { 1, 8, 1 }, dw[] = { 4 };
	int64_t step = 4, flen = 4, flen_bad = 5;
	struct npu_kernel_tensor y, *in[4] = { T(NPU_DTYPE_FP32, dx, x), S(NPU_DTYPE_INT64, &step),
					       NULL, S(NPU_DTYPE_INT64, &flen) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_stft, &st, 4, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[1], 2);
	assert_int_equal(y.dims[2], 3);
	expect_close(y.data, want, 12, 1e-5);
	kt_free_out(&y);
	in[2] = T(NPU_DTYPE_FP32, dw, win);
	in[3] = NULL;
	assert_int_equal(kt_run(&ok_kernel_stft, &st, 3, in, 1, out, NULL), 0);
	expect_close(y.data, want_w, 6, 1e-5);
	kt_free_out(&y);
	in[3] = S(NPU_DTYPE_INT64, &flen_bad);
	kt_expect_fail(kt_run(&ok_kernel_stft, &st, 4, in, 1, out, NULL),
		    "window has 4 values, frame_length is 5");
	in[2] = NULL;
	in[3] = NULL;
	kt_expect_fail(kt_run(&ok_kernel_stft, &st, 4, in, 1, out, NULL),
		    "window or frame_length is required");
}

/* ---- NonMaxSuppression ------------------------------------------------------------ */

static void test_nms(void **unused)
{
	/* ONNX's suppress_by_IOU example, then its center_point_box form */
	static const float boxes[] = { 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
				       0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101 };
	static const float centers[] = { 0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 0.4f, 1, 1,
					 0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1 };
	static const float scores[] = { 0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f };
	static const int64_t want[] = { 0, 0, 3, 0, 0, 0, 0, 0, 5 };
	int64_t max_out = 3, two = 2;
	float iou = 0.5f, score = 0, high = 0.99f, bad_iou = 1.5f;
	struct ok_nms_state st = { 0 };
	uint32_t db[] = { 1, 6, 4 }, ds[] = { 1, 1, 6 };
	struct npu_kernel_tensor y, *in[5] = { T(NPU_DTYPE_FP32, db, boxes), T(NPU_DTYPE_FP32, ds, scores),
					       S(NPU_DTYPE_INT64, &max_out), S(NPU_DTYPE_FP32, &iou),
					       S(NPU_DTYPE_FP32, &score) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	assert_int_equal(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(y.dtype, NPU_DTYPE_INT64);
	assert_int_equal(y.dims[0], 3);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	st.center_point_box = true;
	in[0] = T(NPU_DTYPE_FP32, db, centers);
	assert_int_equal(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL), 0);
	assert_memory_equal(y.data, want, sizeof(want));
	kt_free_out(&y);
	/* the limit per class */
	in[2] = S(NPU_DTYPE_INT64, &two);
	assert_int_equal(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL), 0);
	assert_int_equal(y.dims[0], 2);
	assert_memory_equal(y.data, want, 6 * sizeof(int64_t));
	kt_free_out(&y);
	/* an output shorter than the selection is refused, never overrun */
	{
		uint32_t d13[] = { 1, 3 };
		struct npu_kernel_tensor *small = T(NPU_DTYPE_INT64, d13, NULL);

		assert_int_equal(npu_kernel_run(&ok_kernel_non_max_suppression, &st, 5,
						(const struct npu_kernel_tensor *const *)in, 1,
						&small, NULL, kt_msg, sizeof(kt_msg)), -EINVAL);
		assert_non_null(strstr(kt_msg, "2 boxes are selected, the output has room for 1"));
	}
	/* errors */
	in[4] = S(NPU_DTYPE_FP32, &high);
	kt_expect_fail(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL),
		    "no box is selected: empty outputs are not supported");
	in[4] = S(NPU_DTYPE_FP32, &score);
	in[3] = S(NPU_DTYPE_FP32, &bad_iou);
	kt_expect_fail(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL),
		    "iou_threshold 1.5 is out of range [0, 1]");
	in[3] = S(NPU_DTYPE_FP32, &iou);
	not_constant(in[1]);
	kt_expect_fail(kt_run(&ok_kernel_non_max_suppression, &st, 5, in, 1, out, NULL),
		    "the output shape depends on the input's values, which must be constant");
}

/* ---- TfIdfVectorizer --------------------------------------------------------------- */

static int64_t tf_counts[] = { 0, 4 }, tf_indexes[] = { 0, 1, 2, 3, 4, 5, 6 };
static int64_t tf_pool[] = { 2, 3, 5, 4, 5, 6, 7, 8, 6, 7 };

static void tfidf_state(struct ok_tfidf_state *st, int64_t min, int64_t max, int64_t skip)
{
	memset(st, 0, sizeof(*st));
	st->mode = OK_TFIDF_TF;
	st->min_gram = min;
	st->max_gram = max;
	st->max_skip = skip;
	st->ngram_counts = tf_counts;
	st->n_counts = 2;
	st->ngram_indexes = tf_indexes;
	st->n_indexes = 7;
	st->pool = tf_pool;
	st->n_pool = 10;
	st->out_len = 7;
}

static void test_tfidf(void **unused)
{
	/* ONNX's examples: batch of bigrams without skips; uni- and bigrams with skips up to 5 */
	static const int32_t xb[] = { 1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8 };
	static const double want_b[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1 };
	static const int64_t x1[] = { 1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8 };
	static const double want_s5[] = { 0, 3, 1, 0, 1, 3, 1 };
	static float weights[] = { 1, 2, 3, 4, 5, 6, 7 };
	static const double want_idf[] = { 0, 2, 3, 0, 5, 6, 7 };
	static const double want_tfidf[] = { 0, 6, 3, 0, 5, 18, 7 };
	struct ok_tfidf_state st;
	uint32_t db[] = { 2, 6 }, d1[] = { 12 };
	struct npu_kernel_tensor y, *in[1] = { T(NPU_DTYPE_INT32, db, xb) };
	struct npu_kernel_tensor *out[1] = { &y };

	(void)unused;
	tfidf_state(&st, 2, 2, 0);
	assert_int_equal(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL), 0);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.dims[1], 7);
	expect_close(y.data, want_b, 14, 0);
	kt_free_out(&y);
	tfidf_state(&st, 1, 2, 5);
	in[0] = T(NPU_DTYPE_INT64, d1, x1);
	assert_int_equal(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL), 0);
	assert_int_equal(y.rank, 1);
	expect_close(y.data, want_s5, 7, 0);
	kt_free_out(&y);
	st.weights = weights;
	st.n_weights = 7;
	st.mode = OK_TFIDF_IDF;
	assert_int_equal(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL), 0);
	expect_close(y.data, want_idf, 7, 0);
	kt_free_out(&y);
	st.mode = OK_TFIDF_TFIDF;
	assert_int_equal(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL), 0);
	expect_close(y.data, want_tfidf, 7, 0);
	kt_free_out(&y);
	in[0] = T(NPU_DTYPE_FP32, d1, NULL);
	kt_expect_fail(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL),
		    "X must be int32 or int64, not float32");
	/* a work count that would wrap saturates: the run is refused, not started */
	in[0] = T(NPU_DTYPE_INT64, d1, x1);
	st.n_pool = SIZE_MAX / 2;
	assert_int_equal(kt_run(&ok_kernel_tfidf_vectorizer, &st, 1, in, 1, out, NULL), -E2BIG);
	kt_free_out(&y);
}

/* ---- Limits ------------------------------------------------------------------------ */

static void test_limits(void **unused)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct ok_dft_state st = { .axis = 1 };
	uint32_t dx[] = { 1, 4096, 1 };
	struct npu_kernel_tensor y, *in[1] = { T(NPU_DTYPE_FP32, dx, NULL) };
	struct npu_kernel_tensor *out[1] = { &y };
	struct ok_rnn_state rs;
	uint32_t rx[] = { 64, 1, 64 }, rw[] = { 1, 256, 64 };
	struct npu_kernel_tensor *rin[3] = { T(NPU_DTYPE_FP32, rx, NULL), T(NPU_DTYPE_FP32, rw, NULL),
					     T(NPU_DTYPE_FP32, rw, NULL) };

	(void)unused;
	/* a 4096-point transform is 2^24 work units: over a limit of 2^20 */
	lim.max_work = 1u << 20;
	assert_int_equal(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, &lim), -E2BIG);
	kt_free_out(&y);
	lim.max_work = 0;
	lim.cancel = kt_cancel_after_first;
	kt_polls = 0;
	assert_int_equal(kt_run(&ok_kernel_dft, &st, 1, in, 1, out, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_free_out(&y);
	ok_rnn_defaults(&rs, OK_LSTM);
	kt_polls = 0;
	assert_int_equal(kt_run(&ok_kernel_lstm, &rs, 3, rin, 1, out, &lim), -ECANCELED);
	assert_true(kt_polls >= 2);
	kt_free_out(&y);
}

/* ---- One-node models through npu_onnx_load(): create() end to end ------------- */

static void attr_ints(struct mb *b, Onnx__NodeProto *n, const char *name, const int64_t *v,
		      size_t count)
{
	Onnx__AttributeProto *at = kt_new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	at->n_ints = count;
	at->ints = (int64_t *)v;
}

/* A list of one string, as activations or pool_strings. */
static void attr_strings1(struct mb *b, Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *at = kt_new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);

	at->n_strings = 1;
	at->strings = keep(b, calloc(1, sizeof(*at->strings)));
	at->strings[0].data = (uint8_t *)v;
	at->strings[0].len = strlen(v);
}

static void attr_floats(struct mb *b, Onnx__NodeProto *n, const char *name, const float *v,
			size_t count)
{
	Onnx__AttributeProto *at = kt_new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);

	at->n_floats = count;
	at->floats = (float *)v;
}


static void test_load_rnn(void **unused)
{
	/*
	 * A bidirectional RNN from its string attribute: seq 2, batch 1,
	 * H = I = 1, Tanh.  Forward: h1 = tanh(w x0), h2 = tanh(w x1 + r h1);
	 * reverse: g1 = tanh(w' x1), g0 = tanh(w' x0 + r' g1).  Y_h = (h2, g0).
	 */
	static const int64_t dx[] = { 2, 1, 1 }, dw[] = { 2, 1, 1 };
	static const float x[] = { 0.5f, -1 }, w[] = { 0.8f, -0.6f }, r[] = { 0.3f, 0.9f };
	double h1 = tanh(0.8 * 0.5), h2 = tanh(0.8 * -1 + 0.3 * h1);
	double g1 = tanh(-0.6 * -1), g0 = tanh(-0.6 * 0.5 + 0.9 * g1);
	const double want[] = { h2, g0 };
	Onnx__NodeProto *n;
	float y[2];
	struct mb b;

	(void)unused;
	/* opset 1's RNN is the same op */
	for (int opset = 14; opset > 0; opset -= 13) {
		mb_init(&b, opset);
		input(&b, "x", 3, dx);
		init_f(&b, "w", 3, dw, w, 2);
		init_f(&b, "r", 3, dw, r, 2);
		output(&b, "yh");
		n = nodef(&b, "RNN", "rnn", "x,w,r", "yall,yh", "hidden_size=i:1", NULL);
		kt_attr_s(&b, n, "direction", "bidirectional");
		kt_load_run(&b, x, y, sizeof(y));
		expect_close(y, want, 2, 1e-6);
	}
	/* refusals of create(): a direction, a list of activations */
	mb_init(&b, 14);
	input(&b, "x", 3, dx);
	init_f(&b, "w", 3, dw, w, 2);
	init_f(&b, "r", 3, dw, r, 2);
	output(&b, "yh");
	n = nodef(&b, "GRU", "gru", "x,w,r", "yall,yh", NULL);
	kt_attr_s(&b, n, "direction", "sideways");
	load(&b, NULL, -EINVAL,
	     "node 'gru' (GRU): direction \"sideways\" is not forward, reverse or bidirectional");
	n->n_attribute = 0;
	attr_strings1(&b, n, "activations", "Relu");
	load(&b, NULL, -EINVAL, "node 'gru' (GRU): activations lists 1 functions, 2 expected");
	n->n_attribute = 0;
	attr_strings1(&b, n, "activations", "Swish");
	kt_attr_s(&b, n, "direction", "bidirectional");
	load(&b, NULL, -EINVAL, "activations lists 1 functions, 4 expected");
	mb_free(&b);
}

/*
 * activations from the node: one function shared by both directions
 * (Relu), and one per direction with alphas taken in order (LeakyRelu
 * 0.1 forward, 0.2 reverse), each checked where its slope shows.
 */
static void test_load_rnn_activations(void **unused)
{
	static const int64_t dx[] = { 2, 1, 1 }, dw[] = { 2, 1, 1 };
	static const float w[] = { 0.8f, -0.6f }, r[] = { 0.3f, 0.9f }, alphas[] = { 0.1f, 0.2f };
	static const char *const leaky[] = { "LeakyRelu", "LeakyRelu" };
	int c;

	(void)unused;
	for (c = 0; c < 3; c++) {
		/* c 0: Relu; c 1, 2: LeakyRelu with the forward (1) or reverse (2) slope showing */
		const float x[2] = { 0.5f, c == 2 ? 1.0f : -1.0f };
		double a_f = c ? 0.1 : 0, a_r = c ? 0.2 : 0, h1, h2, g1, g0;
		Onnx__AttributeProto *at;
		Onnx__NodeProto *n;
		double want[2];
		float y[2];
		struct mb b;

#define LR(v, a) ((v) > 0 ? (v) : (a) * (v))
		h1 = LR(0.8 * x[0], a_f);
		h2 = LR(0.8 * x[1] + 0.3 * h1, a_f);
		g1 = LR(-0.6 * x[1], a_r);
		g0 = LR(-0.6 * x[0] + 0.9 * g1, a_r);
#undef LR
		want[0] = h2;
		want[1] = g0;
		mb_init(&b, 14);
		input(&b, "x", 3, dx);
		init_f(&b, "w", 3, dw, w, 2);
		init_f(&b, "r", 3, dw, r, 2);
		output(&b, "yh");
		n = nodef(&b, "RNN", "rnn", "x,w,r", "yall,yh", "hidden_size=i:1", NULL);
		kt_attr_s(&b, n, "direction", "bidirectional");
		if (!c) {
			attr_strings1(&b, n, "activations", "Relu");
		} else {
			at = kt_new_attr(&b, n, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
			at->n_strings = 2;
			at->strings = keep(&b, calloc(2, sizeof(*at->strings)));
			for (int k = 0; k < 2; k++) {
				at->strings[k].data = (uint8_t *)leaky[k];
				at->strings[k].len = strlen(leaky[k]);
			}
			attr_floats(&b, n, "activation_alpha", alphas, 2);
		}
		kt_load_run(&b, x, y, sizeof(y));
		expect_close(y, want, 2, 1e-6);
	}
}

static void test_load_window_dft(void **unused)
{
	/* a symmetric Hann window of 5 as int32, folded at import */
	static const int64_t five = 5, dx[] = { 1, 4, 1 };
	static const int32_t want[] = { 0, 0, 1, 0, 0 };
	static const float x[] = { 1, 2, 3, 4 };
	static const double want_dft[] = { 10, 0, -2, 2, -2, 0 };
	int32_t y[5];
	float yd[6];
	struct mb b;

	(void)unused;
	mb_init(&b, 17);
	init_i64(&b, "n", &five, 1);
	kt_output_of(&b, "y", 6);
	nodef(&b, "HannWindow", "hann", "n", "y", "periodic=i:0", "output_datatype=i:6", NULL);
	kt_load_run(&b, NULL, y, sizeof(y));
	assert_memory_equal(y, want, sizeof(want));
	mb_init(&b, 17);
	init_i64(&b, "n", &five, 1);
	kt_output_of(&b, "y", 6);
	nodef(&b, "HammingWindow", "ham", "n", "y", "output_datatype=i:8", NULL);
	load(&b, NULL, -EINVAL, "node 'ham' (HammingWindow): output_datatype 8 is not a numeric type");
	mb_free(&b);
	/* DFT, onesided from the node */
	mb_init(&b, 17);
	input(&b, "x", 3, dx);
	output(&b, "y");
	nodef(&b, "DFT", "dft", "x", "y", "onesided=i:1", NULL);
	kt_load_run(&b, x, yd, sizeof(yd));
	expect_close(yd, want_dft, 6, 1e-5);
}

static void test_load_tfidf_nms(void **unused)
{
	static const int64_t dx[] = { 12 };
	static const int64_t x[] = { 1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8 };
	static const double want[] = { 0, 3, 1, 0, 1, 3, 1 };
	struct npu_onnx_model *m;
	Onnx__NodeProto *n;
	float y[7];
	struct mb b;

	(void)unused;
	for (int i = 0; i < 3; i++) {
		mb_init(&b, 9);
		b.ins[b.g.n_input++] = vinfo(&b, "x", 7, 1, dx);
		output(&b, "y");
		n = nodef(&b, "TfIdfVectorizer", "tf", "x", "y", "min_gram_length=i:1",
			  "max_gram_length=i:2", "max_skip_count=i:5", NULL);
		kt_attr_s(&b, n, "mode", i == 1 ? "BM25" : "TF");
		attr_ints(&b, n, "ngram_counts", tf_counts, 2);
		attr_ints(&b, n, "ngram_indexes", tf_indexes, 7);
		attr_ints(&b, n, "pool_int64s", tf_pool, 10);
		if (i == 2)
			attr_strings1(&b, n, "pool_strings", "a");
		if (i == 1) {
			load(&b, NULL, -EINVAL,
			     "node 'tf' (TfIdfVectorizer): mode \"BM25\" is not TF, IDF or TFIDF");
		} else if (i == 2) {
			load(&b, NULL, -EINVAL,
			     "node 'tf' (TfIdfVectorizer): string pools are not supported");
		} else {
			m = load(&b, NULL, 0, NULL);
			kt_run_raw(m, x, y, sizeof(y));
			expect_close(y, want, 7, 0);
			npu_onnx_free(m);
		}
		mb_free(&b);
	}
	{
		static const int64_t db[] = { 1, 1, 4 }, ds[] = { 1, 1, 1 };
		static const float box[] = { 0, 0, 1, 1 }, score = 1;

		mb_init(&b, 11);
		init_f(&b, "b", 3, db, box, 4);
		init_f(&b, "s", 3, ds, &score, 1);
		kt_output_of(&b, "y", 7);
		nodef(&b, "NonMaxSuppression", "nms", "b,s", "y", "center_point_box=i:2", NULL);
		load(&b, NULL, -EINVAL,
		     "node 'nms' (NonMaxSuppression): center_point_box must be 0 or 1, not 2");
		mb_free(&b);
	}
}

static void test_table(void **unused)
{
	const struct npu_onnx_op *const *p;
	size_t n = 0;

	(void)unused;
	for (p = ok_ops_seq; *p; p++, n++) {
		assert_int_equal((*p)->size, sizeof(struct npu_onnx_op));
		assert_string_equal((*p)->domain, "");
		assert_string_equal((*p)->kernel->name, (*p)->op_type);
	}
	assert_int_equal(n, 11);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rnn_forward, kt_teardown),
		cmocka_unit_test_teardown(test_rnn_bidirectional_lengths, kt_teardown),
		cmocka_unit_test_teardown(test_gru, kt_teardown),
		cmocka_unit_test_teardown(test_lstm, kt_teardown),
		cmocka_unit_test_teardown(test_rnn_activations, kt_teardown),
		cmocka_unit_test_teardown(test_windows, kt_teardown),
		cmocka_unit_test_teardown(test_mel_weight_matrix, kt_teardown),
		cmocka_unit_test_teardown(test_dft, kt_teardown),
		cmocka_unit_test_teardown(test_stft, kt_teardown),
		cmocka_unit_test_teardown(test_nms, kt_teardown),
		cmocka_unit_test_teardown(test_tfidf, kt_teardown),
		cmocka_unit_test_teardown(test_limits, kt_teardown),
		cmocka_unit_test(test_load_rnn),
		cmocka_unit_test(test_load_rnn_activations),
		cmocka_unit_test(test_load_window_dft),
		cmocka_unit_test(test_load_tfidf_nms),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
