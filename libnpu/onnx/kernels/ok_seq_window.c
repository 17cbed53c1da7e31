// SPDX-License-Identifier: MIT
/*
 * HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (opset
 * 17): tables whose shape is an input's value, so those inputs must be
 * constants; the values are computed in double and stored in
 * output_datatype (integers truncate toward zero, as onnxruntime casts).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ok_seq.h"

/* Longest window or matrix side infer accepts: bounds the output. */
#define MAX_LEN		(1u << 24)

/* ONNX's TensorProto.DataType numbers of the dtypes the tables may take. */
static bool dtype_of_onnx(int64_t t, enum npu_dtype *dt)
{
	switch (t) {
	case 1: *dt = NPU_DTYPE_FP32; return true;
	case 2: *dt = NPU_DTYPE_UINT8; return true;
	case 3: *dt = NPU_DTYPE_INT8; return true;
	case 4: *dt = NPU_DTYPE_UINT16; return true;
	case 5: *dt = NPU_DTYPE_INT16; return true;
	case 6: *dt = NPU_DTYPE_INT32; return true;
	case 7: *dt = NPU_DTYPE_INT64; return true;
	case 10: *dt = NPU_DTYPE_FP16; return true;
	case 11: *dt = NPU_DTYPE_FP64; return true;
	case 12: *dt = NPU_DTYPE_UINT32; return true;
	case 13: *dt = NPU_DTYPE_UINT64; return true;
	case 16: *dt = NPU_DTYPE_BF16; return true;
	}
	return false;
}

static int output_dtype(const struct npu_onnx_node *node, enum npu_dtype *dt, char *err,
			size_t err_size)
{
	int64_t t = ok_attr_i(node, "output_datatype", 1);

	if (!dtype_of_onnx(t, dt))
		return ok_fail(err, err_size, "output_datatype %lld is not a numeric type",
			       (long long)t);
	return 0;
}

/* A constant scalar integer input, within [@lo, MAX_LEN]. */
static int const_len(const struct npu_kernel_tensor *t, const char *what, int64_t lo,
		     int64_t *v, char *err, size_t err_size)
{
	if (!t)
		return ok_fail(err, err_size, "%s is required", what);
	if (t->dtype != NPU_DTYPE_INT32 && t->dtype != NPU_DTYPE_INT64)
		return ok_fail(err, err_size, "%s must be int32 or int64, not %s", what,
			       ok_dtype_name(t->dtype));
	if (t->elems != 1)
		return ok_fail(err, err_size, "%s must be a scalar", what);
	if (!t->data)
		return ok_fail(err, err_size,
			       "the output shape depends on %s's value, which must be constant", what);
	*v = ok_get_i(t, 0);
	if (*v < lo || *v > MAX_LEN)
		return ok_fail(err, err_size, "%s %lld is out of range [%lld, %u]", what,
			       (long long)*v, (long long)lo, MAX_LEN);
	return 0;
}

/* ---- The windows ------------------------------------------------------------------ */

static int win_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_window_state *st = state;
	uint32_t len;
	int64_t n;
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "the output is required");
	ret = const_len(num_inputs ? in[0] : NULL, "size", 1, &n, err, err_size);
	if (ret)
		return ret;
	len = (uint32_t)n;
	out[0]->dtype = st->dtype;
	return ok_set_shape(out[0], 1, &len);
}

static int win_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_window_state *st = state;
	struct npu_kernel_tensor *y = out[0];
	uint64_t n = y->elems, i;
	/* a symmetric window of one sample has no period: it is 1, as numpy's */
	double den = st->periodic ? (double)n : (double)n - 1;
	int ret;

	(void)num_inputs;
	(void)in;
	(void)num_outputs;
	for (i = 0; i < n; i++) {
		double a = den > 0 ? 2 * M_PI * (double)i / den : 0, v;

		switch (st->kind) {
		case OK_WIN_HANN:
			v = 0.5 - 0.5 * cos(a);
			break;
		case OK_WIN_HAMMING:
			v = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
			break;
		default:
			v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
			break;
		}
		if (den <= 0)
			v = 1;
		ok_set_f(y, i, v);
		if ((i + 1) % OK_POLL_EVERY == 0) {
			ret = npu_kernel_poll(call, OK_POLL_EVERY);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* One kernel per op only for its name: the state says which window. */
#define WINDOW_KERNEL(var, nm)				\
	const struct npu_kernel var = {			\
		.size = sizeof(struct npu_kernel),	\
		.name = nm,				\
		.infer = win_infer,			\
		.run = win_run,				\
		.release = ok_state_free,		\
	}

WINDOW_KERNEL(ok_kernel_hann_window, "HannWindow");
WINDOW_KERNEL(ok_kernel_hamming_window, "HammingWindow");
WINDOW_KERNEL(ok_kernel_blackman_window, "BlackmanWindow");

static int win_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_window_state *st = ok_state_alloc(sizeof(*st));
	int ret;

	if (!st)
		return -ENOMEM;
	st->kind = *(const enum ok_window_kind *)opaque;
	st->periodic = ok_attr_i(node, "periodic", 1) != 0;
	ret = output_dtype(node, &st->dtype, err, err_size);
	if (ret) {
		ok_state_free(st);
		return ret;
	}
	*state = st;
	return 0;
}

static const enum ok_window_kind win_hann = OK_WIN_HANN, win_hamming = OK_WIN_HAMMING,
				 win_blackman = OK_WIN_BLACKMAN;

const struct npu_onnx_op ok_op_hann_window = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "HannWindow",
	.since_version = 17,
	.kernel = &ok_kernel_hann_window,
	.create = win_create,
	.opaque = (void *)&win_hann,
};

const struct npu_onnx_op ok_op_hamming_window = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "HammingWindow",
	.since_version = 17,
	.kernel = &ok_kernel_hamming_window,
	.create = win_create,
	.opaque = (void *)&win_hamming,
};

const struct npu_onnx_op ok_op_blackman_window = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "BlackmanWindow",
	.since_version = 17,
	.kernel = &ok_kernel_blackman_window,
	.create = win_create,
	.opaque = (void *)&win_blackman,
};

/* ---- MelWeightMatrix -------------------------------------------------------------- */

/*
 * Inputs: num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
 * upper_edge_hertz; output [dft_length / 2 + 1, num_mel_bins].
 */
static int mel_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_mel_state *st = state;
	uint32_t dims[2];
	int64_t bins, dft;
	size_t i;
	int ret;

	if (num_inputs < 5 || num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "the 5 inputs and the output are required");
	for (i = 0; i < 5; i++) {
		if (!in[i] || in[i]->elems != 1)
			return ok_fail(err, err_size, "input %zu must be a scalar", i);
		if (i < 3 && ok_is_float(in[i]->dtype))
			return ok_fail(err, err_size, "input %zu must be an integer, not %s", i,
				       ok_dtype_name(in[i]->dtype));
		if (i >= 3 && !ok_is_float(in[i]->dtype))
			return ok_fail(err, err_size, "input %zu must be a float, not %s", i,
				       ok_dtype_name(in[i]->dtype));
	}
	ret = const_len(in[0], "num_mel_bins", 1, &bins, err, err_size);
	if (!ret)
		ret = const_len(in[1], "dft_length", 1, &dft, err, err_size);
	if (ret)
		return ret;
	dims[0] = (uint32_t)(dft / 2 + 1);
	dims[1] = (uint32_t)bins;
	if ((uint64_t)dims[0] * dims[1] > MAX_LEN)
		return ok_fail(err, err_size, "the %u x %u matrix is too large", dims[0], dims[1]);
	out[0]->dtype = st->dtype;
	return ok_set_shape(out[0], 2, dims);
}

static int mel_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	struct npu_kernel_tensor *y = out[0];
	const uint32_t rows = y->dims[0], bins = y->dims[1];
	const int64_t dft = ok_get_i(in[1], 0), rate = ok_get_i(in[2], 0);
	const double lo = ok_get_f(in[3], 0), hi = ok_get_f(in[4], 0);
	double lo_mel, hi_mel, step;
	int64_t edge[3];
	uint32_t m, j;
	int ret;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	if (rate <= 0)
		return npu_kernel_fail(call, -EINVAL, "sample_rate %lld must be positive",
				       (long long)rate);
	if (!(lo >= 0 && hi > lo && isfinite(hi)))
		return npu_kernel_fail(call, -EINVAL,
				       "the edges %g and %g Hz must satisfy 0 <= lower < upper", lo,
				       hi);
	lo_mel = 2595 * log10(1 + lo / 700);
	hi_mel = 2595 * log10(1 + hi / 700);
	step = (hi_mel - lo_mel) / (bins + 2);
	memset(y->data, 0, y->elems * npu_dtype_size(y->dtype));
	for (m = 0; m < bins; m++) {
		int k;

		/* the triangle's three corners, as spectrogram bins */
		for (k = 0; k < 3; k++) {
			double hz = 700 * (pow(10, ((m + k) * step + lo_mel) / 2595) - 1);
			double e = floor((double)(dft + 1) * hz / (double)rate);

			if (!(e >= 0 && e < rows))
				return npu_kernel_fail(call, -EINVAL,
						       "mel bin %u falls on spectrogram bin %g, out of range [0, %u): upper_edge_hertz is above sample_rate / 2",
						       m, e, rows);
			edge[k] = (int64_t)e;
		}
		if (edge[1] == edge[0]) {
			ok_set_f(y, (uint64_t)edge[1] * bins + m, 1);
		} else {
			for (j = (uint32_t)edge[0]; j <= edge[1]; j++)
				ok_set_f(y, (uint64_t)j * bins + m,
					 (double)(j - edge[0]) / (double)(edge[1] - edge[0]));
		}
		for (j = (uint32_t)edge[1]; j < edge[2]; j++)
			ok_set_f(y, (uint64_t)j * bins + m,
				 (double)(edge[2] - j) / (double)(edge[2] - edge[1]));
		ret = npu_kernel_poll(call, rows);
		if (ret)
			return ret;
	}
	return 0;
}

const struct npu_kernel ok_kernel_mel_weight_matrix = {
	.size = sizeof(struct npu_kernel),
	.name = "MelWeightMatrix",
	.infer = mel_infer,
	.run = mel_run,
	.release = ok_state_free,
};

static int mel_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_mel_state *st = ok_state_alloc(sizeof(*st));
	int ret;

	(void)opaque;
	if (!st)
		return -ENOMEM;
	ret = output_dtype(node, &st->dtype, err, err_size);
	if (ret) {
		ok_state_free(st);
		return ret;
	}
	*state = st;
	return 0;
}

const struct npu_onnx_op ok_op_mel_weight_matrix = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "MelWeightMatrix",
	.since_version = 17,
	.kernel = &ok_kernel_mel_weight_matrix,
	.create = mel_create,
};
