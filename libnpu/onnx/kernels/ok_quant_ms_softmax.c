// SPDX-License-Identifier: MIT
/*
 * com.microsoft's QLinearSoftmax, with onnxruntime's CPU arithmetic (see
 * ok_quant_ms.c for why it matters), which is its own and not a
 * dequantize-softmax-quantize:
 *
 * A table of 256 floats holds exp((i - 255 + shift) * x_scale), computed
 * in double and then rounded to float, where shift = max(0, log(FLT_MAX
 * / D) - 5) / x_scale keeps a sum of D of them finite (D the length of
 * the reduced run).  Every element of a run reads the entry 255 - (max -
 * x), so the run's largest code reads the last; x_zero_point plays no
 * part (it cancels out of a softmax), nor do the codes' offsets.  The
 * run's entries are summed in float in order, and an output is
 * nearbyintf(entry * floor(1 / y_scale) / sum) + y_zero_point: for
 * uint8 capped at 255, for int8 cast to int8 after a cap at 255, so that
 * 128..255 wrap to negative codes (a probability of 1 with y_zp = -128
 * gives -128).  That wrap is onnxruntime's; we keep it so the two agree.
 * So is its answer for a run of one element under a y_scale below about
 * 1/148: the largest entry, FLT_MAX / (D * e^5), times floor(1 /
 * y_scale) is infinite, which onnxruntime converts as x86-64 does, to 0
 * for uint8 (through a 64-bit integer; the output is y_zero_point) and
 * to INT32_MIN for int8, whose sum with y_zero_point wraps (the output is
 * -1 for a negative y_zero_point, y_zero_point otherwise).  The
 * arithmetic is vnpu_qlinear_softmax_*(), the device's SOFTMAX with
 * VNPU_ROUND_ORT_QLINEAR.
 *
 * Before opset 13 (the node's opset attribute) the run is everything
 * from the axis on, from 13 the one axis; the axis is -1 by default for
 * both, as com.microsoft's schema gives it.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_quant.h"
#include "../../../ops/vnpu_ref_qlinear.h"

enum { SM_X, SM_X_SCALE, SM_X_ZP, SM_Y_SCALE, SM_Y_ZP };

static const struct npu_kernel_tensor *opt_in(size_t num_inputs,
					      const struct npu_kernel_tensor *const *in,
					      size_t i)
{
	return i < num_inputs ? in[i] : NULL;
}

/* Elements before the run, in it, and after it (the run's stride). */
struct run_geom {
	uint64_t outer, len, inner;
};

static int run_geom(const struct ok_ms_softmax_state *st, const struct npu_kernel_tensor *x,
		    struct run_geom *g, char *err, size_t err_size)
{
	uint32_t axis, d;
	int ret;

	ret = ok_axis(st->axis, x->rank, &axis, "axis", err, err_size);
	if (ret)
		return ret;
	g->outer = 1;
	g->len = 1;
	g->inner = 1;
	for (d = 0; d < axis; d++)
		g->outer *= x->dims[d];
	for (d = axis; d < x->rank; d++) {
		if (st->opset >= 13 && d > axis)
			g->inner *= x->dims[d];
		else
			g->len *= x->dims[d];
	}
	return 0;
}

/* A usable scale: onnxruntime computes garbage for the others. */
static int check_positive(float s, const char *what, char *err, size_t err_size)
{
	if (!(s > 0.0f) || isinf(s))
		return ok_fail(err, err_size, "%s is %g: a softmax needs a positive finite scale",
			       what, (double)s);
	return 0;
}

static int sm_infer(const void *state, size_t num_inputs,
		    const struct npu_kernel_tensor *const *in, size_t num_outputs,
		    struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct ok_ms_softmax_state *st = state;
	const struct npu_kernel_tensor *x = opt_in(num_inputs, in, SM_X);
	const struct npu_kernel_tensor *x_scale = opt_in(num_inputs, in, SM_X_SCALE);
	const struct npu_kernel_tensor *y_scale = opt_in(num_inputs, in, SM_Y_SCALE);
	struct run_geom g;
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "Y is required");
	if (!x)
		return ok_fail(err, err_size, "X is required");
	if (!ok_ms_is_q8(x->dtype))
		return ok_fail(err, err_size, "X must be uint8 or int8, not %s",
			       ok_dtype_name(x->dtype));
	if (!x->rank)
		return ok_fail(err, err_size, "X must have a rank of at least 1");
	ret = ok_ms_check_scale(x_scale, "X_scale", err, err_size);
	if (!ret)
		ret = ok_ms_check_scale(y_scale, "y_scale", err, err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(opt_in(num_inputs, in, SM_X_ZP), x->dtype,
					     "x_zero_point", err, err_size);
	if (!ret)
		ret = ok_ms_check_zero_point(opt_in(num_inputs, in, SM_Y_ZP), x->dtype,
					     "y_zero_point", err, err_size);
	if (!ret && x_scale->data)
		ret = check_positive(ok_ms_scale(x_scale), "X_scale", err, err_size);
	if (!ret && y_scale->data)
		ret = check_positive(ok_ms_scale(y_scale), "y_scale", err, err_size);
	if (!ret)
		ret = run_geom(st, x, &g, err, err_size);
	if (ret)
		return ret;
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank, x->dims);
}

static int sm_run(const void *state, size_t num_inputs,
		  const struct npu_kernel_tensor *const *in, size_t num_outputs,
		  struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct ok_ms_softmax_state *st = state;
	const struct npu_kernel_tensor *x = in[SM_X];
	struct npu_kernel_tensor *y = out[0];
	float x_scale = ok_ms_scale(in[SM_X_SCALE]), y_scale = ok_ms_scale(in[SM_Y_SCALE]);
	int32_t y_zp = ok_ms_zero_point(opt_in(num_inputs, in, SM_Y_ZP));
	uint64_t o, i, k, pending = 0;
	struct vnpu_qlinear_softmax f;
	struct run_geom g;
	char why[128];
	int ret;

	(void)num_outputs;
	if (check_positive(x_scale, "X_scale", why, sizeof(why)) ||
	    check_positive(y_scale, "y_scale", why, sizeof(why)))
		return npu_kernel_fail(call, -EDOM, "%s", why);
	run_geom(st, x, &g, NULL, 0);
	vnpu_qlinear_softmax_init(&f, x_scale, y_scale, y_zp, g.len,
				  y->dtype == NPU_DTYPE_INT8);
	for (o = 0; o < g.outer; o++) {
		for (i = 0; i < g.inner; i++) {
			uint64_t base = o * g.len * g.inner + i;
			int32_t max = INT32_MIN;
			float sum = 0.0f;

			for (k = 0; k < g.len; k++) {
				int32_t v = ok_ms_q8(x, base + k * g.inner);

				max = v > max ? v : max;
			}
			for (k = 0; k < g.len; k++)
				sum += vnpu_qlinear_softmax_e(&f, max,
							      ok_ms_q8(x, base + k * g.inner));
			for (k = 0; k < g.len; k++) {
				float e = vnpu_qlinear_softmax_e(&f, max,
								 ok_ms_q8(x, base + k * g.inner));

				((uint8_t *)y->data)[base + k * g.inner] =
					vnpu_qlinear_softmax_q(&f, e, sum);
			}
			ret = ok_tick(call, &pending, 3 * g.len);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int sm_create(const struct npu_onnx_node *node, void *opaque, void **state, char *err,
		     size_t err_size)
{
	struct ok_ms_softmax_state *st;
	int64_t opset;

	(void)opaque;
	if (npu_onnx_attr_int(node, "opset", &opset))
		return ok_fail(err, err_size,
			       "attribute opset (of the Softmax it replaces) is required");
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->opset = opset;
	/* the schema's default, whatever the opset (onnxruntime's code reads otherwise) */
	st->axis = ok_attr_i(node, "axis", -1);
	*state = st;
	return 0;
}

const struct npu_kernel ok_kernel_qlinear_softmax = {
	.size = sizeof(struct npu_kernel),
	.name = "QLinearSoftmax",
	.infer = sm_infer,
	.run = sm_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_qlinear_softmax = {
	.size = sizeof(struct npu_onnx_op),
	.domain = OK_MS_DOMAIN,
	.op_type = "QLinearSoftmax",
	.since_version = 1,
	.kernel = &ok_kernel_qlinear_softmax,
	.create = sm_create,
};
