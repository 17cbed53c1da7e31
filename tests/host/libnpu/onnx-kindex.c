// SPDX-License-Identifier: MIT
/*
 * The index and data-movement kernels (libnpu/onnx/kernels/ok_index*.c)
 * through npu_kernel_run(): each op's infer and run on the ONNX spec's
 * examples or small cases computed by hand or by a naive loop written
 * here, every refusal with its message, run-time index errors, and a
 * cancelled run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/kernel.h"
#include "npu/npu.h"
#include "npu/onnx.h"
#include "onnx.pb-c.h"
#include "onnx-ktest.h"
#include "kernels/ok_index.h"

#define MAXT 16

static struct npu_kernel_tensor ten(enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
				    const void *data)
{
	struct npu_kernel_tensor t = { .dtype = dt, .rank = rank, .data = (void *)data };
	uint32_t d;

	t.elems = 1;
	for (d = 0; d < rank; d++) {
		t.dims[d] = dims[d];
		t.elems *= dims[d];
	}
	return t;
}

#define DIMS(...) ((const uint32_t[]){ __VA_ARGS__ })
#define RANK(...) ((uint32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(uint32_t)))
/* A tensor of dims ..., data @p. */
#define T(dt, p, ...) ten(dt, RANK(__VA_ARGS__), DIMS(__VA_ARGS__), p)
/* A scalar. */
#define S(dt, p) ten(dt, 0, NULL, p)
#define I64(...) ((const int64_t[]){ __VA_ARGS__ })
#define I32(...) ((const int32_t[]){ __VA_ARGS__ })
#define F32(...) ((const float[]){ __VA_ARGS__ })
#define U8(...) ((const uint8_t[]){ __VA_ARGS__ })
/* An absent optional input or output. */
#define NONE ((struct npu_kernel_tensor){ 0 })

static char err[256];

/*
 * Infer (inputs' data visible, as for constants) then run @op's kernel;
 * the outputs' data are allocated and must be freed with done().
 */
static int go_ex(const struct npu_onnx_op *op, const void *st, size_t ni,
		 struct npu_kernel_tensor *in, size_t no, struct npu_kernel_tensor *out,
		 const struct npu_cpu_limits *lim)
{
	const struct npu_kernel_tensor *ip[MAXT] = { NULL };
	struct npu_kernel_tensor *opp[MAXT] = { NULL };
	size_t k;
	int r;

	err[0] = 0;
	for (k = 0; k < ni; k++)
		ip[k] = in[k].dtype ? &in[k] : NULL;
	for (k = 0; k < no; k++) {
		opp[k] = out[k].dtype || out[k].elems ? &out[k] : NULL;
		out[k] = (struct npu_kernel_tensor){ 0 };
		out[k].data = NULL;
	}
	r = op->kernel->infer(st, ni, ip, no, opp, err, sizeof(err));
	if (r)
		return r;
	for (k = 0; k < no; k++) {
		if (!opp[k])
			continue;
		/* an empty output still gets a buffer: NULL is calloc() failing */
		out[k].data = calloc(out[k].elems ? out[k].elems : 1, npu_dtype_size(out[k].dtype));
		assert_non_null(out[k].data);
	}
	return npu_kernel_run(op->kernel, st, ni, ip, no, opp, lim, err, sizeof(err));
}

/* Every output present (a marker only go_ex reads). */
static void want_outputs(struct npu_kernel_tensor *out, size_t no)
{
	size_t k;

	for (k = 0; k < no; k++)
		out[k] = (struct npu_kernel_tensor){ .elems = 1 };
}

static int go(const struct npu_onnx_op *op, const void *st, size_t ni,
	      struct npu_kernel_tensor *in, size_t no, struct npu_kernel_tensor *out)
{
	want_outputs(out, no);
	return go_ex(op, st, ni, in, no, out, NULL);
}

static void done(struct npu_kernel_tensor *out, size_t no)
{
	size_t k;

	for (k = 0; k < no; k++) {
		free(out[k].data);
		out[k].data = NULL;
	}
}

/* @o has dims ... and the bytes of @want. */
static void check_out(const struct npu_kernel_tensor *o, enum npu_dtype dt, uint32_t rank,
		      const uint32_t *dims, const void *want)
{
	uint32_t d;

	assert_int_equal(o->dtype, dt);
	assert_int_equal(o->rank, rank);
	for (d = 0; d < rank; d++)
		assert_int_equal(o->dims[d], dims[d]);
	assert_memory_equal(o->data, want, o->elems * npu_dtype_size(dt));
}

#define CHECK(o, dt, want, ...) check_out(o, dt, RANK(__VA_ARGS__), DIMS(__VA_ARGS__), want)

/* @o is empty, of dims ... (one of them 0). */
static void check_empty(const struct npu_kernel_tensor *o, enum npu_dtype dt, uint32_t rank,
			const uint32_t *dims)
{
	uint32_t d;

	assert_int_equal(o->dtype, dt);
	assert_int_equal(o->elems, 0);
	assert_int_equal(o->rank, rank);
	for (d = 0; d < rank; d++)
		assert_int_equal(o->dims[d], dims[d]);
}

#define CHECK_EMPTY(o, dt, ...) check_empty(o, dt, RANK(__VA_ARGS__), DIMS(__VA_ARGS__))

/* Expect infer or run to fail with -EINVAL and @part in the message. */
static void refused(int r, const char *part)
{
	assert_int_equal(r, -EINVAL);
	if (!strstr(err, part))
		fail_msg("message \"%s\" lacks \"%s\"", err, part);
}

static int64_t *iota64(size_t n)
{
	int64_t *p = malloc(n * sizeof(*p));
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = (int64_t)i * 7 - 3;
	return p;
}

/* ---- Transpose ------------------------------------------------------------------ */

static void test_transpose(void **s)
{
	struct ok_transpose_state st = { 0 };
	struct npu_kernel_tensor in[1], out[1];
	uint16_t h[6] = { 1, 2, 3, 4, 5, 6 };
	uint32_t dims[6] = { 2, 3, 1, 4, 2, 3 }, perm[6] = { 3, 0, 5, 1, 4, 2 };
	uint64_t is[6], os[6], n = 2 * 3 * 1 * 4 * 2 * 3, i;
	int64_t *x = iota64(n), *want = malloc(n * sizeof(*want));
	int d;

	(void)s;
	/* default: axes reversed, on a 2-byte type */
	in[0] = T(NPU_DTYPE_FP16, h, 2, 3);
	assert_int_equal(go(&ok_op_transpose, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP16, ((uint16_t[]){ 1, 4, 2, 5, 3, 6 }), 3, 2);
	done(out, 1);

	/* rank 6 int64 against a naive loop over the output's coordinates */
	st.num_perm = 6;
	for (d = 0; d < 6; d++)
		st.perm[d] = perm[d];
	in[0] = ten(NPU_DTYPE_INT64, 6, dims, x);
	is[5] = 1;
	for (d = 5; d > 0; d--)
		is[d - 1] = is[d] * dims[d];
	os[5] = 1;
	for (d = 5; d > 0; d--)
		os[d - 1] = os[d] * dims[perm[d]];
	for (i = 0; i < n; i++) {
		uint64_t src = 0;

		for (d = 0; d < 6; d++)
			src += (i / os[d] % dims[perm[d]]) * is[perm[d]];
		want[i] = x[src];
	}
	assert_int_equal(go(&ok_op_transpose, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, want, 4, 2, 3, 3, 2, 1);
	done(out, 1);

	st.perm[2] = 0;
	refused(go(&ok_op_transpose, &st, 1, in, 1, out), "not a permutation");
	st.num_perm = 2;
	refused(go(&ok_op_transpose, &st, 1, in, 1, out), "perm has 2 values for an input of rank 6");
	free(x);
	free(want);
}

/* Cancels from the second poll on: the first is npu_kernel_run()'s own, before the run. */
static bool cancel_second(void *opaque)
{
	int *calls = opaque;

	return ++*calls >= 2;
}

/* Cancel @op's run at its first poll; its message says how far it got. */
static void cancel_run(const struct npu_onnx_op *op, const void *st, size_t ni,
		       struct npu_kernel_tensor *in, size_t no, struct npu_kernel_tensor *out,
		       const char *want)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	int calls = 0;

	lim.cancel = cancel_second;
	lim.cancel_opaque = &calls;
	want_outputs(out, no);
	assert_int_equal(go_ex(op, st, ni, in, no, out, &lim), -ECANCELED);
	if (!strstr(err, want))
		fail_msg("message \"%s\" lacks \"%s\"", err, want);
	done(out, no);
}

/* Runs poll every OK_POLL_EVERY (8192) elements, inside long rows too. */
static void test_cancel(void **s)
{
	struct ok_transpose_state st = { 0 };
	struct ok_axis_state gst = { 0 };
	struct ok_pad_state pst = { .from_inputs = true, .mode = OK_PAD_EDGE };
	struct ok_onehot_state ost = { .axis = -1 };
	struct npu_kernel_tensor in[3], out[1];
	int64_t *x = iota64(1 << 18), *zeros = calloc(1 << 18, sizeof(int64_t));

	(void)s;
	/* rows of 256 strided elements: the poll after 32 of them */
	in[0] = T(NPU_DTYPE_INT64, x, 256, 1024);
	cancel_run(&ok_op_transpose, &st, 1, in, 1, out, "cancelled after 8192 of");
	/* one row of 2^18 (Expand of one element) */
	in[0] = T(NPU_DTYPE_INT64, x, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(1 << 18), 1);
	cancel_run(&ok_op_expand, NULL, 2, in, 1, out, "cancelled after 8192 of");
	/* Gather of 2^18 indices from one row */
	in[1] = T(NPU_DTYPE_INT64, zeros, 1 << 18);
	cancel_run(&ok_op_gather, &gst, 2, in, 1, out, "cancelled after 16384 of");
	/* Pad's one long row */
	in[1] = T(NPU_DTYPE_INT64, I64(0, 1 << 18), 2);
	cancel_run(&ok_op_pad, &pst, 2, in, 1, out, "cancelled after 8192 of");
	/* OneHot's fill of its output */
	in[0] = T(NPU_DTYPE_INT64, x, 1);
	in[1] = S(NPU_DTYPE_INT64, I64(1 << 18));
	in[2] = T(NPU_DTYPE_INT64, I64(0, 1), 2);
	cancel_run(&ok_op_onehot, &ost, 3, in, 1, out, "cancelled after 8192 of");
	free(x);
	free(zeros);
}

/* ---- Concat and Split --------------------------------------------------------------- */

static void test_concat(void **s)
{
	struct ok_axis_state st = { .axis = -1 };
	struct npu_kernel_tensor in[3], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3, 4), 2, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(5, 6), 2, 1);
	in[2] = T(NPU_DTYPE_INT64, I64(7, 8, 9, 10), 2, 2);
	assert_int_equal(go(&ok_op_concat, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 2, 5, 7, 8, 3, 4, 6, 9, 10), 2, 5);
	done(out, 1);

	st.axis = 0;
	refused(go(&ok_op_concat, &st, 3, in, 1, out), "input 1's dimension 1 is 1, input 0's is 2");
	st.axis = 2;
	refused(go(&ok_op_concat, &st, 3, in, 1, out), "axis 2 is out of range [-2, 2)");
	st.axis = 1;
	in[1] = T(NPU_DTYPE_INT32, I32(5, 6), 2, 1);
	refused(go(&ok_op_concat, &st, 3, in, 1, out), "input 1 is int32, input 0 is int64");
}

static void test_split(void **s)
{
	struct ok_split_state st = { .axis = 0 };
	struct npu_kernel_tensor in[2], out[3];
	const int64_t x[7] = { 1, 2, 3, 4, 5, 6, 7 };

	(void)s;
	/* opset 18's num_outputs: the last part is shorter */
	st.num_outputs = 3;
	in[0] = T(NPU_DTYPE_INT64, x, 7);
	assert_int_equal(go(&ok_op_split, &st, 1, in, 3, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 2, 3), 3);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(4, 5, 6), 3);
	CHECK(&out[2], NPU_DTYPE_INT64, I64(7), 1);
	done(out, 3);

	/* opset 13's split input, along axis 1 */
	st.num_outputs = 0;
	st.axis = 1;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3, 4, 5, 6), 2, 3);
	in[1] = T(NPU_DTYPE_INT64, I64(1, 2), 2);
	assert_int_equal(go(&ok_op_split, &st, 2, in, 2, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 4), 2, 1);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(2, 3, 5, 6), 2, 2);
	done(out, 2);

	/* the attribute of opset < 13 */
	st.num_split = 2;
	st.split[0] = 2;
	st.split[1] = 1;
	assert_int_equal(go(&ok_op_split, &st, 1, in, 2, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 2, 4, 5), 2, 2);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(3, 6), 2, 1);
	done(out, 2);

	/* even parts */
	st.num_split = 0;
	refused(go(&ok_op_split, &st, 1, in, 2, out), "length 3 does not split into 2 equal parts");
	in[1] = T(NPU_DTYPE_INT64, I64(1, 1), 2);
	refused(go(&ok_op_split, &st, 2, in, 2, out), "split sums to 2, the axis' length is 3");
	/* a part of 0: an empty output (ONNX allows them) */
	in[1] = T(NPU_DTYPE_INT64, I64(3, 0), 2);
	assert_int_equal(go(&ok_op_split, &st, 2, in, 2, out), 0);
	CHECK_EMPTY(&out[1], NPU_DTYPE_INT64, 2, 0);
	done(out, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(3, -1), 2);
	refused(go(&ok_op_split, &st, 2, in, 2, out), "split[1] (-1) is not within [0, 3]");
	in[1] = T(NPU_DTYPE_INT64, NULL, 2);
	refused(go(&ok_op_split, &st, 2, in, 2, out), "must be a constant");
}

/* ---- Slice ----------------------------------------------------------------------- */

static void test_slice(void **s)
{
	struct ok_slice_state st = { .from_inputs = true };
	struct npu_kernel_tensor in[5], out[1];
	const int32_t x[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };

	(void)s;
	/* spec example: data [[1,2,3,4],[5,6,7,8]], starts [1,0], ends [2,3], steps [1,2] */
	in[0] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 4, 5, 6, 7, 8), 2, 4);
	in[1] = T(NPU_DTYPE_INT64, I64(1, 0), 2);
	in[2] = T(NPU_DTYPE_INT64, I64(2, 3), 2);
	in[3] = T(NPU_DTYPE_INT64, I64(0, 1), 2);
	in[4] = T(NPU_DTYPE_INT64, I64(1, 2), 2);
	assert_int_equal(go(&ok_op_slice, &st, 5, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(5, 7), 1, 2);
	done(out, 1);

	/* negative steps from a clamped end, ends past the axis, negative axes */
	in[0] = T(NPU_DTYPE_INT32, x, 3, 4);
	in[1] = T(NPU_DTYPE_INT64, I64(INT64_MAX, 1), 2);
	in[2] = T(NPU_DTYPE_INT64, I64(INT64_MIN, INT64_MAX), 2);
	in[3] = T(NPU_DTYPE_INT64, I64(-1, 0), 2);
	in[4] = T(NPU_DTYPE_INT64, I64(-2, 1), 2);
	assert_int_equal(go(&ok_op_slice, &st, 5, in, 1, out), 0);
	/* rows 1 and 2, columns 3 and 1 */
	CHECK(&out[0], NPU_DTYPE_INT32, I32(7, 5, 11, 9), 2, 2);
	done(out, 1);

	/* numpy's x[:, ::-1]: the end clamps to -1, so column 0 is kept */
	in[1] = T(NPU_DTYPE_INT64, I64(-1), 1);
	in[2] = T(NPU_DTYPE_INT64, I64(INT64_MIN), 1);
	in[3] = T(NPU_DTYPE_INT64, I64(1), 1);
	in[4] = T(NPU_DTYPE_INT64, I64(-1), 1);
	assert_int_equal(go(&ok_op_slice, &st, 5, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8), 3, 4);
	done(out, 1);

	/* a step far beyond the axis keeps its start alone */
	in[1] = T(NPU_DTYPE_INT64, I64(1, -1), 2);
	in[2] = T(NPU_DTYPE_INT64, I64(INT64_MAX, INT64_MIN), 2);
	in[3] = T(NPU_DTYPE_INT64, I64(0, 1), 2);
	in[4] = T(NPU_DTYPE_INT64, I64(INT64_MAX, INT64_MIN), 2);
	assert_int_equal(go(&ok_op_slice, &st, 5, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(7), 1, 1);
	done(out, 1);

	/* steps absent, axes absent */
	in[1] = T(NPU_DTYPE_INT64, I64(-2), 1);
	in[2] = T(NPU_DTYPE_INT64, I64(-1), 1);
	assert_int_equal(go(&ok_op_slice, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(4, 5, 6, 7), 1, 4);
	done(out, 1);

	in[2] = T(NPU_DTYPE_INT64, I64(-2), 1);
	assert_int_equal(go(&ok_op_slice, &st, 3, in, 1, out), 0);
	CHECK_EMPTY(&out[0], NPU_DTYPE_INT32, 0, 4);
	done(out, 1);
	in[2] = T(NPU_DTYPE_INT64, NULL, 1);
	refused(go(&ok_op_slice, &st, 3, in, 1, out), "ends must be a constant");
	in[2] = T(NPU_DTYPE_INT64, I64(3), 1);
	in[3] = T(NPU_DTYPE_INT64, I64(0), 1);
	in[4] = T(NPU_DTYPE_INT64, I64(0), 1);
	refused(go(&ok_op_slice, &st, 5, in, 1, out), "steps[0] is 0");
	in[3] = T(NPU_DTYPE_INT64, I64(0, 0), 2);
	refused(go(&ok_op_slice, &st, 4, in, 1, out), "must have the same length");

	/* opset < 10: attributes */
	st = (struct ok_slice_state){ .num = 1, .has_axes = true, .starts = { 1 },
				      .ends = { 1000 }, .axes = { 1 } };
	assert_int_equal(go(&ok_op_slice, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(1, 2, 3, 5, 6, 7, 9, 10, 11), 3, 3);
	done(out, 1);
}

/* ---- Pad --------------------------------------------------------------------------- */

static void test_pad(void **s)
{
	struct ok_pad_state st = { .from_inputs = true };
	struct npu_kernel_tensor in[4], out[1];
	const int64_t x[6] = { 1, 2, 3, 4, 5, 6 };	/* [[1,2,3],[4,5,6]] */

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, x, 2, 3);
	in[1] = T(NPU_DTYPE_INT64, I64(0, 1, 1, 2), 4);
	in[2] = S(NPU_DTYPE_INT64, I64(-9));
	assert_int_equal(go(&ok_op_pad, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64,
	      I64(-9, 1, 2, 3, -9, -9, -9, 4, 5, 6, -9, -9, -9, -9, -9, -9, -9, -9), 3, 6);
	done(out, 1);

	st.mode = OK_PAD_REFLECT;
	in[1] = T(NPU_DTYPE_INT64, I64(0, 2, 0, 1), 4);
	assert_int_equal(go(&ok_op_pad, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5), 2, 6);
	done(out, 1);

	st.mode = OK_PAD_EDGE;
	assert_int_equal(go(&ok_op_pad, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6), 2, 6);
	done(out, 1);

	st.mode = OK_PAD_WRAP;
	assert_int_equal(go(&ok_op_pad, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4), 2, 6);
	done(out, 1);

	/* negative pads crop; opset 18's axes */
	st.mode = OK_PAD_CONSTANT;
	in[1] = T(NPU_DTYPE_INT64, I64(-1, 1), 2);
	in[2] = NONE;
	in[3] = T(NPU_DTYPE_INT64, I64(-1), 1);
	assert_int_equal(go(&ok_op_pad, &st, 4, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 0, 5, 6, 0), 2, 3);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT64, I64(-2, -1), 2);
	refused(go(&ok_op_pad, &st, 4, in, 1, out), "leave no output");
	in[1] = T(NPU_DTYPE_INT64, I64(1, 1, 1), 3);
	refused(go(&ok_op_pad, &st, 2, in, 1, out), "pads has 3 values, 4 were expected");
	in[1] = T(NPU_DTYPE_INT64, NULL, 4);
	refused(go(&ok_op_pad, &st, 2, in, 1, out), "must be a constant");
	in[1] = T(NPU_DTYPE_INT64, I64(0, 0, 0, 0), 4);
	in[2] = S(NPU_DTYPE_FP32, F32(1));
	refused(go(&ok_op_pad, &st, 3, in, 1, out), "constant_value is float32, the data int64");

	/* opset < 11: attributes, a float value stored in the data's type */
	st = (struct ok_pad_state){ .num_pads = 2, .pads = { 1, 0 }, .value = 7.0f };
	in[0] = T(NPU_DTYPE_INT32, I32(1, 2), 2);
	assert_int_equal(go(&ok_op_pad, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(7, 1, 2), 3);
	done(out, 1);
}

/* ---- Expand, Tile, DepthToSpace, SpaceToDepth ------------------------------------------ */

static void test_expand_tile(void **s)
{
	struct npu_kernel_tensor in[2], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3), 3, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(2, 1, 2), 3);
	assert_int_equal(go(&ok_op_expand, NULL, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 2, 3, 2);
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(2, 4), 2);
	refused(go(&ok_op_expand, NULL, 2, in, 1, out),
		"the input's dimension 0 (3) does not broadcast to 2");
	in[1] = T(NPU_DTYPE_INT64, NULL, 2);
	refused(go(&ok_op_expand, NULL, 2, in, 1, out), "must be a constant");

	in[0] = T(NPU_DTYPE_BOOL, U8(1, 0, 0, 1), 2, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(2, 2), 2);
	assert_int_equal(go(&ok_op_tile, NULL, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_BOOL, U8(1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1), 4, 4);
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(1, 0), 2);
	refused(go(&ok_op_tile, NULL, 2, in, 1, out), "repeats[1] (0) is not within");
	/* 2^31 x 2^31 x 2^31 elements: each dimension fits, their product does not */
	in[0] = T(NPU_DTYPE_BOOL, U8(1), 1, 1, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(1ll << 31, 1ll << 31, 1ll << 31), 3);
	refused(go(&ok_op_tile, NULL, 2, in, 1, out), "the output would have more than 2^64 elements");
	in[0] = T(NPU_DTYPE_BOOL, U8(1, 0, 0, 1), 2, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(1), 1);
	refused(go(&ok_op_tile, NULL, 2, in, 1, out), "repeats has 1 values for an input of rank 2");
}

static void test_depth_space(void **s)
{
	struct ok_block_state st = { .blocksize = 2 };
	struct npu_kernel_tensor in[1], out[1], back[1];
	float x[48];
	int i;
	/* Operators.md's DepthToSpace examples */
	static const float dcr[48] = {
		0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17,
		27, 39, 28, 40, 29, 41, 6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44,
		9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47 };
	static const float crd[48] = {
		0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11,
		15, 21, 16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44,
		27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47 };

	(void)s;
	for (i = 0; i < 48; i++)
		x[i] = (float)i;
	in[0] = T(NPU_DTYPE_FP32, x, 1, 8, 2, 3);
	assert_int_equal(go(&ok_op_depth_to_space, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, dcr, 1, 2, 4, 6);
	/* SpaceToDepth undoes DCR */
	assert_int_equal(go(&ok_op_space_to_depth, &st, 1, out, 1, back), 0);
	CHECK(&back[0], NPU_DTYPE_FP32, x, 1, 8, 2, 3);
	done(back, 1);
	done(out, 1);
	st.crd = true;
	assert_int_equal(go(&ok_op_depth_to_space, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, crd, 1, 2, 4, 6);
	done(out, 1);

	/* SpaceToDepth of [[a b] [c d]]: one pixel of four channels */
	in[0] = T(NPU_DTYPE_INT64, I64(10, 11, 12, 13), 1, 1, 2, 2);
	assert_int_equal(go(&ok_op_space_to_depth, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(10, 11, 12, 13), 1, 4, 1, 1);
	done(out, 1);

	st.blocksize = 3;
	refused(go(&ok_op_depth_to_space, &st, 1, in, 1, out), "not a multiple of blocksize^2");
	refused(go(&ok_op_space_to_depth, &st, 1, in, 1, out), "must be multiples of blocksize 3");
	st.blocksize = 0;
	refused(go(&ok_op_space_to_depth, &st, 1, in, 1, out), "blocksize 0 is not within");
	in[0] = T(NPU_DTYPE_INT64, I64(10, 11, 12, 13), 1, 2, 2);
	refused(go(&ok_op_space_to_depth, &st, 1, in, 1, out), "must be 4-D");
}

/* ---- Gather family ------------------------------------------------------------------- */

static void test_gather(void **s)
{
	struct ok_axis_state st = { 0 };
	struct npu_kernel_tensor in[2], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_FP32, F32(1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f), 3, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(0, 1, 1, 2), 2, 2);
	assert_int_equal(go(&ok_op_gather, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f), 2, 2,
	      2);
	done(out, 1);

	/* axis 1, int32 indices, a negative one */
	st.axis = 1;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3, 4, 5, 6, 7, 8, 9), 3, 3);
	in[1] = T(NPU_DTYPE_INT32, I32(0, -1), 1, 2);
	assert_int_equal(go(&ok_op_gather, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 3, 4, 6, 7, 9), 3, 1, 2);
	done(out, 1);

	/* a scalar index drops the axis */
	in[1] = S(NPU_DTYPE_INT64, I64(2));
	assert_int_equal(go(&ok_op_gather, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(3, 6, 9), 3);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT64, I64(0, 3), 2);
	refused(go(&ok_op_gather, &st, 2, in, 1, out), "index 3 (at 1) is out of range [-3, 3)");
	done(out, 1);
	in[1] = T(NPU_DTYPE_FP32, F32(0), 1);
	refused(go(&ok_op_gather, &st, 2, in, 1, out), "indices must be int32 or int64, not float32");
	st.axis = -3;
	refused(go(&ok_op_gather, &st, 2, in, 1, out), "axis -3 is out of range [-2, 2)");
}

static void test_gather_elements(void **s)
{
	struct ok_axis_state st = { .axis = 1 };
	struct npu_kernel_tensor in[2], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 4), 2, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(0, 0, 1, 0), 2, 2);
	assert_int_equal(go(&ok_op_gather_elements, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(1, 1, 4, 3), 2, 2);
	done(out, 1);

	st.axis = 0;
	in[0] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 4, 5, 6, 7, 8, 9), 3, 3);
	in[1] = T(NPU_DTYPE_INT32, I32(-1, -2, 0, -2, 0, 0), 2, 3);
	assert_int_equal(go(&ok_op_gather_elements, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(7, 5, 3, 4, 2, 3), 2, 3);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 2, 0, 0), 2, 3);
	refused(go(&ok_op_gather_elements, &st, 2, in, 1, out), "index 3 (at 2) is out of range [-3, 3)");
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT32, I32(1, 2, 0, 2, 0, 0, 1, 1), 2, 4);
	refused(go(&ok_op_gather_elements, &st, 2, in, 1, out),
		"indices' dimension 1 (4) is above the data's (3)");
	in[1] = T(NPU_DTYPE_INT32, I32(1, 2), 2);
	refused(go(&ok_op_gather_elements, &st, 2, in, 1, out), "indices has rank 1, the data rank 2");
}

static void test_gather_nd(void **s)
{
	struct ok_gather_nd_state st = { 0 };
	struct npu_kernel_tensor in[2], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, I64(0, 1, 2, 3), 2, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(0, 0, 1, 1), 2, 2);
	assert_int_equal(go(&ok_op_gather_nd, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 3), 2);
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT64, I64(1, 0), 2, 1);
	assert_int_equal(go(&ok_op_gather_nd, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 0, 1), 2, 2);
	done(out, 1);

	st.batch_dims = 1;
	in[0] = T(NPU_DTYPE_INT64, I64(0, 1, 2, 3, 4, 5, 6, 7), 2, 2, 2);
	in[1] = T(NPU_DTYPE_INT32, I32(1, -2), 2, 1);
	assert_int_equal(go(&ok_op_gather_nd, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 4, 5), 2, 2);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT32, I32(1, 2), 2, 1);
	refused(go(&ok_op_gather_nd, &st, 2, in, 1, out), "index 2 (at 1) is out of range [-2, 2)");
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT32, I32(1, 0, 1, 0, 1, 0), 2, 3);
	refused(go(&ok_op_gather_nd, &st, 2, in, 1, out), "indices' last dimension (3) is not within [1, 2]");
	in[1] = T(NPU_DTYPE_INT32, I32(1, 0, 1), 3, 1);
	refused(go(&ok_op_gather_nd, &st, 2, in, 1, out), "batch dimension 0 differs");
	st.batch_dims = 2;
	refused(go(&ok_op_gather_nd, &st, 2, in, 1, out), "batch_dims 2 is not below");
}

/* ---- Scatter family ------------------------------------------------------------------ */

static void test_scatter_elements(void **s)
{
	struct ok_scatter_state st = { 0 };
	struct npu_kernel_tensor in[3], out[1];
	const float zeros[9] = { 0 };

	(void)s;
	in[0] = T(NPU_DTYPE_FP32, zeros, 3, 3);
	in[1] = T(NPU_DTYPE_INT64, I64(1, 0, 2, 0, 2, 1), 2, 3);
	in[2] = T(NPU_DTYPE_FP32, F32(1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f), 2, 3);
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f), 3, 3);
	done(out, 1);

	/* axis 1, a negative index; the deprecated Scatter is the same op */
	st.axis = 1;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3, 4, 5), 1, 5);
	in[1] = T(NPU_DTYPE_INT32, I32(1, -2), 1, 2);
	in[2] = T(NPU_DTYPE_INT64, I64(11, 21), 1, 2);
	assert_int_equal(go(&ok_op_scatter, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 11, 3, 21, 5), 1, 5);
	done(out, 1);

	/* reductions over a duplicated index */
	in[1] = T(NPU_DTYPE_INT32, I32(1, 1), 1, 2);
	in[2] = T(NPU_DTYPE_INT64, I64(10, -7), 1, 2);
	st.reduction = OK_REDUCE_ADD;
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 5, 3, 4, 5), 1, 5);
	done(out, 1);
	st.reduction = OK_REDUCE_MUL;
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, -140, 3, 4, 5), 1, 5);
	done(out, 1);
	st.reduction = OK_REDUCE_MAX;
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 10, 3, 4, 5), 1, 5);
	done(out, 1);
	st.reduction = OK_REDUCE_MIN;
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, -7, 3, 4, 5), 1, 5);
	done(out, 1);

	/* int8 multiplication wraps instead of overflowing */
	in[0] = T(NPU_DTYPE_INT8, ((const int8_t[]){ 100, 1 }), 1, 2);
	in[1] = T(NPU_DTYPE_INT64, I64(0), 1, 1);
	in[2] = T(NPU_DTYPE_INT8, ((const int8_t[]){ 3 }), 1, 1);
	st.reduction = OK_REDUCE_MUL;
	assert_int_equal(go(&ok_op_scatter_elements, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT8, ((const int8_t[]){ 44, 1 }), 1, 2);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT64, I64(-3), 1, 1);
	refused(go(&ok_op_scatter_elements, &st, 3, in, 1, out), "index -3 (at 0) is out of range [-2, 2)");
	done(out, 1);
	in[2] = T(NPU_DTYPE_INT16, ((const int16_t[]){ 3 }), 1, 1);
	refused(go(&ok_op_scatter_elements, &st, 3, in, 1, out), "updates are int16, the data int8");
	in[2] = T(NPU_DTYPE_INT8, ((const int8_t[]){ 3, 4 }), 1, 2);
	refused(go(&ok_op_scatter_elements, &st, 3, in, 1, out), "updates' dimension 1 (2) differs");
}

static void test_scatter_nd(void **s)
{
	struct ok_scatter_state st = { 0 };
	struct npu_kernel_tensor in[3], out[1];
	const int64_t x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, x, 8);
	in[1] = T(NPU_DTYPE_INT64, I64(4, 3, 1, 7), 4, 1);
	in[2] = T(NPU_DTYPE_INT64, I64(9, 10, 11, 12), 4);
	assert_int_equal(go(&ok_op_scatter_nd, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 11, 3, 10, 9, 6, 7, 12), 8);
	done(out, 1);

	/* slices of rows, add over a duplicate, a negative index */
	st.reduction = OK_REDUCE_ADD;
	in[0] = T(NPU_DTYPE_INT64, x, 4, 2);
	in[1] = T(NPU_DTYPE_INT32, I32(-1, 3), 2, 1);
	in[2] = T(NPU_DTYPE_INT64, I64(10, 20, 100, 200), 2, 2);
	assert_int_equal(go(&ok_op_scatter_nd, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 2, 3, 4, 5, 6, 117, 228), 4, 2);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT32, I32(0, 4), 2, 1);
	refused(go(&ok_op_scatter_nd, &st, 3, in, 1, out), "index 4 (at 1) is out of range [-4, 4) of axis 0");
	done(out, 1);
	in[2] = T(NPU_DTYPE_INT64, I64(10, 20), 2);
	refused(go(&ok_op_scatter_nd, &st, 3, in, 1, out), "updates have rank 1, 2 was expected");
	in[1] = T(NPU_DTYPE_INT32, I32(0, 1, 1), 1, 3);
	refused(go(&ok_op_scatter_nd, &st, 3, in, 1, out), "indices' last dimension (3) is not within [1, 2]");
}

/* ---- Trilu, CumSum, Range, OneHot, EyeLike, Shape, Size -------------------------------- */

static void test_trilu(void **s)
{
	struct ok_trilu_state st = { .upper = true };
	struct npu_kernel_tensor in[2], out[1];
	const int64_t x[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };	/* 2 x (2 x 3) */

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, x, 2, 2, 3);
	assert_int_equal(go(&ok_op_trilu, &st, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12), 2, 2, 3);
	done(out, 1);
	in[1] = S(NPU_DTYPE_INT64, I64(1));
	assert_int_equal(go(&ok_op_trilu, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 2, 3, 0, 0, 6, 0, 8, 9, 0, 0, 12), 2, 2, 3);
	done(out, 1);
	st.upper = false;
	in[1] = S(NPU_DTYPE_INT64, I64(-1));
	assert_int_equal(go(&ok_op_trilu, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 0, 0, 4, 0, 0, 0, 0, 0, 10, 0, 0), 2, 2, 3);
	done(out, 1);
	/* k far beyond the matrix keeps everything */
	in[1] = S(NPU_DTYPE_INT64, I64(INT64_MAX));
	assert_int_equal(go(&ok_op_trilu, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, x, 2, 2, 3);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT64, I64(1, 2), 2);
	refused(go(&ok_op_trilu, &st, 2, in, 1, out), "k must be a scalar");
	in[0] = T(NPU_DTYPE_INT64, x, 12);
	refused(go(&ok_op_trilu, &st, 1, in, 1, out), "rank of at least 2");
}

static void test_cumsum(void **s)
{
	struct ok_cumsum_state st = { 0 };
	struct npu_kernel_tensor in[2], out[1];
	const int64_t five = 5;

	(void)s;
	in[0] = T(NPU_DTYPE_FP64, ((const double[]){ 1, 2, 3, 4, 5 }), 5);
	in[1] = S(NPU_DTYPE_INT32, I32(0));
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP64, ((const double[]){ 1, 3, 6, 10, 15 }), 5);
	done(out, 1);
	st.exclusive = true;
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP64, ((const double[]){ 0, 1, 3, 6, 10 }), 5);
	done(out, 1);
	st.reverse = true;
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP64, ((const double[]){ 14, 12, 9, 5, 0 }), 5);
	done(out, 1);
	st.exclusive = false;
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP64, ((const double[]){ 15, 14, 12, 9, 5 }), 5);
	done(out, 1);

	/* int64 along axis -1 of a matrix; wraps instead of overflowing */
	st.reverse = false;
	in[0] = T(NPU_DTYPE_INT64, I64(1, 2, 3, INT64_MAX, 1, 0), 2, 3);
	in[1] = S(NPU_DTYPE_INT64, I64(-1));
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(1, 3, 6, INT64_MAX, INT64_MIN, INT64_MIN), 2, 3);
	done(out, 1);
	/* axis 0 of the same matrix */
	in[0] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 4, 5, 6), 2, 3);
	in[1] = S(NPU_DTYPE_INT64, I64(0));
	assert_int_equal(go(&ok_op_cumsum, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(1, 2, 3, 5, 7, 9), 2, 3);
	done(out, 1);

	in[1] = S(NPU_DTYPE_INT64, I64(2));
	refused(go(&ok_op_cumsum, &st, 2, in, 1, out), "axis 2 is out of range [-2, 2)");
	/* an axis known at run time only is checked there */
	{
		const struct npu_kernel_tensor *ip[2] = { &in[0], &in[1] };
		struct npu_kernel_tensor o = { .dtype = NPU_DTYPE_INT32, .rank = 2,
					       .dims = { 2, 3 }, .elems = 6 };
		struct npu_kernel_tensor *op = &o;
		int32_t buf[6];

		o.data = buf;
		in[1].data = NULL;
		assert_int_equal(ok_op_cumsum.kernel->infer(&st, 2, ip, 1, &op, err, sizeof(err)), 0);
		in[1].data = (void *)&five;
		refused(npu_kernel_run(ok_op_cumsum.kernel, &st, 2, ip, 1, &op, NULL, err,
				       sizeof(err)), "axis 5 is out of range");
	}
	in[0] = T(NPU_DTYPE_INT8, ((const int8_t[]){ 1 }), 1);
	refused(go(&ok_op_cumsum, &st, 2, in, 1, out), "not int8");
}

static void test_range(void **s)
{
	struct npu_kernel_tensor in[3], out[1];

	(void)s;
	in[0] = S(NPU_DTYPE_INT32, I32(3));
	in[1] = S(NPU_DTYPE_INT32, I32(9));
	in[2] = S(NPU_DTYPE_INT32, I32(3));
	assert_int_equal(go(&ok_op_range, NULL, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(3, 6), 2);
	done(out, 1);
	in[0] = S(NPU_DTYPE_FP32, F32(10));
	in[1] = S(NPU_DTYPE_FP32, F32(4));
	in[2] = S(NPU_DTYPE_FP32, F32(-3));
	assert_int_equal(go(&ok_op_range, NULL, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(10, 7), 2);
	done(out, 1);
	/* the whole int64 range in two steps: no overflow */
	in[0] = S(NPU_DTYPE_INT64, I64(INT64_MIN));
	in[1] = S(NPU_DTYPE_INT64, I64(INT64_MAX));
	in[2] = S(NPU_DTYPE_INT64, I64(INT64_MAX));
	assert_int_equal(go(&ok_op_range, NULL, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(INT64_MIN, -1, INT64_MAX - 1), 3);
	done(out, 1);

	in[2] = S(NPU_DTYPE_INT64, I64(0));
	refused(go(&ok_op_range, NULL, 3, in, 1, out), "delta is 0");
	in[2] = S(NPU_DTYPE_INT64, I64(1));
	refused(go(&ok_op_range, NULL, 3, in, 1, out), "above 4294967295");
	in[2] = S(NPU_DTYPE_INT64, I64(-1));
	assert_int_equal(go(&ok_op_range, NULL, 3, in, 1, out), 0);
	CHECK_EMPTY(&out[0], NPU_DTYPE_INT64, 0);
	done(out, 1);
	in[1] = S(NPU_DTYPE_INT64, NULL);
	refused(go(&ok_op_range, NULL, 3, in, 1, out),
		"limit must be a constant: the output's length depends on its value");
	in[1] = S(NPU_DTYPE_INT32, I32(1));
	refused(go(&ok_op_range, NULL, 3, in, 1, out), "limit is int32, start is int64");
	in[0] = S(NPU_DTYPE_UINT8, U8(1));
	refused(go(&ok_op_range, NULL, 3, in, 1, out), "not uint8");
}

static void test_onehot(void **s)
{
	struct ok_onehot_state st = { .axis = -1 };
	struct npu_kernel_tensor in[3], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, I64(0, -1, 3), 3);
	in[1] = S(NPU_DTYPE_FP32, F32(3.7f));	/* depth truncates to 3 */
	in[2] = T(NPU_DTYPE_INT32, I32(5, 9), 2);
	assert_int_equal(go(&ok_op_onehot, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(9, 5, 5, 5, 5, 9, 5, 5, 5), 3, 3);
	done(out, 1);
	st.axis = 0;
	in[0] = T(NPU_DTYPE_FP32, F32(0.5f, -1.0f, 2.0f), 3);
	assert_int_equal(go(&ok_op_onehot, &st, 3, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(9, 5, 5, 5, 5, 5, 5, 9, 9), 3, 3);
	done(out, 1);

	in[1] = S(NPU_DTYPE_INT64, I64(0));
	refused(go(&ok_op_onehot, &st, 3, in, 1, out), "depth 0 is not within");
	in[1] = S(NPU_DTYPE_INT64, NULL);
	refused(go(&ok_op_onehot, &st, 3, in, 1, out), "depth must be a constant");
	in[1] = S(NPU_DTYPE_INT64, I64(2));
	in[2] = T(NPU_DTYPE_INT32, I32(5, 9, 1), 3);
	refused(go(&ok_op_onehot, &st, 3, in, 1, out), "values must be 1-D of 2 elements");
	in[2] = T(NPU_DTYPE_INT32, I32(5, 9), 2);
	st.axis = 2;
	refused(go(&ok_op_onehot, &st, 3, in, 1, out), "axis 2 is out of range [-2, 2)");
}

static void test_eyelike_shape_size(void **s)
{
	struct ok_eyelike_state ey = { .k = 1, .has_dtype = true, .dtype = NPU_DTYPE_INT64 };
	struct ok_shape_state sh = { 0 };
	struct npu_kernel_tensor in[1], out[1];
	const float x[24] = { 0 };

	(void)s;
	in[0] = T(NPU_DTYPE_FP32, x, 3, 4);
	assert_int_equal(go(&ok_op_eyelike, &ey, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1), 3, 4);
	done(out, 1);
	ey = (struct ok_eyelike_state){ .k = -1 };
	assert_int_equal(go(&ok_op_eyelike, &ey, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0), 3, 4);
	done(out, 1);
	ey.k = 4;
	assert_int_equal(go(&ok_op_eyelike, &ey, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, x, 3, 4);
	done(out, 1);

	in[0] = T(NPU_DTYPE_FP32, x, 2, 3, 4);
	refused(go(&ok_op_eyelike, &ey, 1, in, 1, out), "must be 2-D");
	assert_int_equal(go(&ok_op_shape, &sh, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 4), 3);
	done(out, 1);
	sh = (struct ok_shape_state){ .start = 1, .end = -1, .has_end = true };
	assert_int_equal(go(&ok_op_shape, &sh, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(3), 1);
	done(out, 1);
	sh = (struct ok_shape_state){ .start = -10 };
	assert_int_equal(go(&ok_op_shape, &sh, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 3, 4), 3);
	done(out, 1);
	sh = (struct ok_shape_state){ .start = 2, .end = 2, .has_end = true };
	assert_int_equal(go(&ok_op_shape, &sh, 1, in, 1, out), 0);
	CHECK_EMPTY(&out[0], NPU_DTYPE_INT64, 0);
	done(out, 1);
	assert_int_equal(go(&ok_op_size, NULL, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(24));
	done(out, 1);
}

/* ---- ReverseSequence, Compress, NonZero, Unique ---------------------------------------- */

static void test_reverse_sequence(void **s)
{
	struct ok_reverse_sequence_state st = { .batch_axis = 1, .time_axis = 0 };
	struct npu_kernel_tensor in[2], out[1];
	const int64_t x[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, x, 4, 4);
	in[1] = T(NPU_DTYPE_INT64, I64(4, 3, 2, 1), 4);
	assert_int_equal(go(&ok_op_reverse_sequence, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15),
	      4, 4);
	done(out, 1);
	st = (struct ok_reverse_sequence_state){ .batch_axis = 0, .time_axis = 1 };
	in[1] = T(NPU_DTYPE_INT32, I32(1, 2, 3, 4), 4);
	assert_int_equal(go(&ok_op_reverse_sequence, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12),
	      4, 4);
	done(out, 1);

	in[1] = T(NPU_DTYPE_INT32, I32(1, 2, 5, 4), 4);
	refused(go(&ok_op_reverse_sequence, &st, 2, in, 1, out),
		"sequence_lens[2] (5) is out of range [0, 4]");
	done(out, 1);
	in[1] = T(NPU_DTYPE_INT32, I32(1, 2, 3), 3);
	refused(go(&ok_op_reverse_sequence, &st, 2, in, 1, out), "of the batch's length 4");
	st.time_axis = 2;
	refused(go(&ok_op_reverse_sequence, &st, 2, in, 1, out), "must be 0 and 1");
}

static void test_compress(void **s)
{
	struct ok_axis_state st = { .axis = 0, .has_axis = true };
	struct npu_kernel_tensor in[2], out[1];
	const int64_t x[6] = { 1, 2, 3, 4, 5, 6 };	/* [[1,2],[3,4],[5,6]] */

	(void)s;
	in[0] = T(NPU_DTYPE_INT64, x, 3, 2);
	in[1] = T(NPU_DTYPE_BOOL, U8(0, 1, 1), 3);
	assert_int_equal(go(&ok_op_compress, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(3, 4, 5, 6), 2, 2);
	done(out, 1);
	st.axis = 1;
	in[1] = T(NPU_DTYPE_BOOL, U8(0, 1), 2);
	assert_int_equal(go(&ok_op_compress, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 4, 6), 3, 1);
	done(out, 1);
	/* flattened, with a condition shorter than the input */
	st.has_axis = false;
	in[1] = T(NPU_DTYPE_BOOL, U8(0, 1, 0, 0, 1), 5);
	assert_int_equal(go(&ok_op_compress, &st, 2, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 5), 2);
	done(out, 1);

	/* the data need not be constant: only the condition */
	in[0].data = NULL;
	in[1] = T(NPU_DTYPE_BOOL, NULL, 5);
	refused(go(&ok_op_compress, &st, 2, in, 1, out), "which must be constant");
	in[1] = T(NPU_DTYPE_BOOL, U8(0, 0), 2);
	refused(go(&ok_op_compress, &st, 2, in, 1, out), "selects nothing");
	in[1] = T(NPU_DTYPE_BOOL, U8(0, 0, 0, 0, 0, 0, 1), 7);
	refused(go(&ok_op_compress, &st, 2, in, 1, out), "condition selects index 6, but there are only 6");
	in[1] = T(NPU_DTYPE_INT64, I64(1), 1);
	refused(go(&ok_op_compress, &st, 2, in, 1, out), "condition must be bool, not int64");
}

static void test_nonzero(void **s)
{
	struct npu_kernel_tensor in[1], out[1];

	(void)s;
	in[0] = T(NPU_DTYPE_FP32, F32(1, -0.0f, 2, 3), 2, 2);
	assert_int_equal(go(&ok_op_nonzero, NULL, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 1, 1, 0, 0, 1), 2, 3);
	done(out, 1);
	in[0] = T(NPU_DTYPE_INT64, I64(0, 0, 5, 0, 1 << 20), 5);
	assert_int_equal(go(&ok_op_nonzero, NULL, 1, in, 1, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(2, 4), 1, 2);
	done(out, 1);

	in[0] = T(NPU_DTYPE_INT64, I64(0, 0), 2);
	refused(go(&ok_op_nonzero, NULL, 1, in, 1, out), "no non-zero element");
	in[0] = T(NPU_DTYPE_INT64, NULL, 2);
	refused(go(&ok_op_nonzero, NULL, 1, in, 1, out),
		"the output shape depends on the input's values, which must be constant");
}

static void test_unique(void **s)
{
	struct ok_unique_state st = { .sorted = true };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	struct npu_kernel_tensor in[1], out[4];
	const float x[6] = { 2, 1, 1, 3, 4, 3 };

	(void)s;
	in[0] = T(NPU_DTYPE_FP32, x, 6);
	assert_int_equal(go(&ok_op_unique, &st, 1, in, 4, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(1, 2, 3, 4), 4);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(1, 0, 3, 4), 4);
	CHECK(&out[2], NPU_DTYPE_INT64, I64(1, 0, 0, 2, 3, 2), 6);
	CHECK(&out[3], NPU_DTYPE_INT64, I64(2, 1, 2, 1), 4);
	done(out, 4);
	st.sorted = false;
	assert_int_equal(go(&ok_op_unique, &st, 1, in, 4, out), 0);
	CHECK(&out[0], NPU_DTYPE_FP32, F32(2, 1, 3, 4), 4);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(0, 1, 3, 4), 4);
	CHECK(&out[2], NPU_DTYPE_INT64, I64(0, 1, 1, 2, 3, 2), 6);
	CHECK(&out[3], NPU_DTYPE_INT64, I64(1, 2, 2, 1), 4);
	done(out, 4);

	/* slices along axis 1 of a 2x4x2 tensor */
	st = (struct ok_unique_state){ .sorted = true, .has_axis = true, .axis = 1 };
	in[0] = T(NPU_DTYPE_INT64, I64(1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1), 2, 4, 2);
	assert_int_equal(go(&ok_op_unique, &st, 1, in, 4, out), 0);
	CHECK(&out[0], NPU_DTYPE_INT64, I64(0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1), 2, 3, 2);
	CHECK(&out[1], NPU_DTYPE_INT64, I64(1, 0, 2), 3);
	CHECK(&out[2], NPU_DTYPE_INT64, I64(1, 0, 2, 0), 4);
	CHECK(&out[3], NPU_DTYPE_INT64, I64(2, 1, 1), 3);
	done(out, 4);

	/* only Y wanted */
	st = (struct ok_unique_state){ .sorted = true, .has_axis = true, .axis = 0 };
	in[0] = T(NPU_DTYPE_INT32, I32(1, 0, 0, 1, 0, 0, 2, 3, 4), 3, 3);
	want_outputs(out, 1);
	assert_int_equal(go_ex(&ok_op_unique, &st, 1, in, 1, out, NULL), 0);
	CHECK(&out[0], NPU_DTYPE_INT32, I32(1, 0, 0, 2, 3, 4), 2, 3);
	done(out, 1);

	/* the work of a sort: 6 elements x (log2 8 + 1) */
	lim.max_work = 23;
	in[0] = T(NPU_DTYPE_FP32, x, 6);
	st = (struct ok_unique_state){ .sorted = true };
	want_outputs(out, 4);
	assert_int_equal(go_ex(&ok_op_unique, &st, 1, in, 4, out, &lim), -E2BIG);
	assert_non_null(strstr(err, "24 work units exceed"));
	done(out, 4);

	in[0].data = NULL;
	refused(go(&ok_op_unique, &st, 1, in, 4, out), "which must be constant");
	in[0] = T(NPU_DTYPE_INT32, I32(1, 0, 0, 1, 0, 0, 2, 3, 4), 3, 3);
	st = (struct ok_unique_state){ .sorted = true, .has_axis = true, .axis = 2 };
	refused(go(&ok_op_unique, &st, 1, in, 4, out), "axis 2 is out of range [-2, 2)");
}

/* ---- create(): attributes and opsets through the importer --------------------------------- */

#define ONNX_INT64 7

/* An int64 graph input or output of @rank dims. */
static void io64(struct mb *b, bool is_input, const char *name, int rank, const int64_t *dims)
{
	if (is_input)
		b->ins[b->g.n_input++] = vinfo(b, name, ONNX_INT64, rank, dims);
	else
		b->outs[b->g.n_output++] = vinfo(b, name, ONNX_INT64, rank, dims);
}

/* An int64 initializer of @d0 x @d1. */
static void init_i64_2d(struct mb *b, const char *name, const int64_t *data, int64_t d0,
			int64_t d1)
{
	Onnx__TensorProto *t;

	init_i64(b, name, data, (size_t)(d0 * d1));
	t = b->inits[b->g.n_initializer - 1];
	t->n_dims = 2;
	t->dims = keep(b, calloc(2, sizeof(int64_t)));
	t->dims[0] = d0;
	t->dims[1] = d1;
}

/* One int64 input x of @xd, one int64 output y of @yd, through node @n's op at @opset. */
static void one_node(struct mb *b, int64_t opset, int xr, const int64_t *xd, int yr,
		     const int64_t *yd)
{
	mb_init(b, opset);
	io64(b, true, "x", xr, xd);
	io64(b, false, "y", yr, yd);
}

static void test_create_movement(void **unused)
{
	static const int64_t d23[] = { 2, 3 }, d32[] = { 3, 2 }, d6[] = { 6 }, d4[] = { 4 },
		d2[] = { 2 }, d22[] = { 2, 2 }, d1422[] = { 1, 4, 2, 2 }, d1144[] = { 1, 1, 4, 4 },
		d21[] = { 2, 1 };
	int64_t x[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }, y[16], z[16];
	Onnx__NodeProto *n;
	struct mb b;

	(void)unused;
	/* Transpose's perm */
	one_node(&b, 13, 2, d23, 2, d32);
	nodef(&b, "Transpose", "t", "x", "y", "perm=ints:1,0", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 4, 2, 5, 3, 6), 6 * 8);
	mb_free(&b);

	/* Split-11's split attribute */
	one_node(&b, 11, 1, d6, 1, d4);
	io64(&b, false, "z", 1, d2);
	nodef(&b, "Split", "s", "x", "y,z", "split=ints:4,2", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 2, (void *[]){ y, z });
	assert_memory_equal(y, I64(1, 2, 3, 4), 4 * 8);
	assert_memory_equal(z, I64(5, 6), 2 * 8);
	mb_free(&b);

	/* Slice-9's attributes: a negative axis */
	one_node(&b, 9, 2, d23, 2, d22);
	nodef(&b, "Slice", "sl", "x", "y", "starts=ints:1", "ends=ints:100", "axes=ints:-1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(2, 3, 5, 6), 4 * 8);
	mb_free(&b);

	/* Pad-2's pads and value attributes; Pad-11's reflect mode */
	one_node(&b, 2, 1, d2, 1, d4);
	nodef(&b, "Pad", "p", "x", "y", "pads=ints:1,1", "value=f:-3", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(-3, 1, 2, -3), 4 * 8);
	mb_free(&b);
	one_node(&b, 11, 1, d2, 1, d6);
	init_i64(&b, "pads", I64(2, 2), 2);
	n = nodef(&b, "Pad", "p", "x,pads", "y", NULL);
	kt_attr_string(&b, n, "mode", "edge");
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 1, 1, 2, 2, 2), 6 * 8);
	n->attribute[0]->s.data = (uint8_t *)"wrap";
	n->attribute[0]->s.len = 4;
	load(&b, NULL, -EINVAL, "mode \"wrap\" is not one of constant, reflect and edge");
	mb_free(&b);

	/* DepthToSpace's CRD mode, SpaceToDepth's blocksize */
	one_node(&b, 13, 4, d1422, 4, d1144);
	n = nodef(&b, "DepthToSpace", "d", "x", "y", "blocksize=i:2", NULL);
	kt_attr_string(&b, n, "mode", "CRD");
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	/* channel c*4 + b1*2 + b2 goes to (2h + b1, 2w + b2) */
	assert_memory_equal(y, I64(1, 5, 2, 6, 9, 13, 10, 14, 3, 7, 4, 8, 11, 15, 12, 16),
			    16 * 8);
	mb_free(&b);

	/* Concat's axis, Gather's axis (int64 data, not a constant) */
	one_node(&b, 13, 2, d21, 2, d22);
	nodef(&b, "Concat", "c", "x,x", "y", "axis=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 1, 2, 2), 4 * 8);
	mb_free(&b);
	one_node(&b, 13, 2, d23, 2, d21);
	init_i64(&b, "i", I64(-1), 1);
	nodef(&b, "Gather", "g", "x,i", "y", "axis=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(3, 6), 2 * 8);
	mb_free(&b);

	/* Tile with a repeats initializer */
	one_node(&b, 13, 1, d2, 1, d4);
	init_i64(&b, "r", I64(2), 1);
	nodef(&b, "Tile", "t", "x,r", "y", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 2, 1, 2), 4 * 8);
	mb_free(&b);
}

static void test_create_index(void **unused)
{
	static const int64_t d5[] = { 5 }, d2[] = { 2 }, d15[] = { 1, 5 },
		d23[] = { 2, 3 }, d33[] = { 3, 3 }, d22[] = { 2, 2 };
	int64_t x[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, y[9], hot[2] = { 1, 0 };
	Onnx__NodeProto *n;
	struct mb b;

	(void)unused;
	/* ScatterElements-16's reduction and axis; a bad reduction */
	one_node(&b, 16, 2, d15, 2, d15);
	init_i64_2d(&b, "u", I64(0, 0), 1, 2);
	init_i64_2d(&b, "i", I64(4, 4), 1, 2);
	n = nodef(&b, "ScatterElements", "se", "x,i,u", "y", "axis=i:1", NULL);
	kt_attr_string(&b, n, "reduction", "mul");
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 2, 3, 4, 0), 5 * 8);
	n->attribute[1]->s.data = (uint8_t *)"avg";
	load(&b, NULL, -EINVAL, "reduction \"avg\" is not one of none, add, mul, max and min");
	mb_free(&b);

	/* CumSum's exclusive and reverse */
	one_node(&b, 14, 1, d5, 1, d5);
	init_i64(&b, "a", I64(0), 1);
	nodef(&b, "CumSum", "cs", "x,a", "y", "exclusive=i:1", "reverse=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(14, 12, 9, 5, 0), 5 * 8);
	mb_free(&b);

	/* EyeLike's dtype (int64 from a float input) and k */
	mb_init(&b, 13);
	input(&b, "x", 2, d23);
	io64(&b, false, "y", 2, d23);
	nodef(&b, "EyeLike", "e", "x", "y", "dtype=i:7", "k=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ (float[6]){ 0 } }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(0, 1, 0, 0, 0, 1), 6 * 8);
	mb_free(&b);

	/* Trilu's upper=0 */
	one_node(&b, 14, 2, d33, 2, d33);
	nodef(&b, "Trilu", "tr", "x", "y", "upper=i:0", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(1, 0, 0, 4, 5, 0, 7, 8, 9), 9 * 8);
	mb_free(&b);

	/* ReverseSequence's axes: batch first; bad axes refused */
	one_node(&b, 10, 2, d23, 2, d23);
	init_i64(&b, "l", I64(3, 2), 2);
	nodef(&b, "ReverseSequence", "rs", "x,l", "y", "batch_axis=i:0", "time_axis=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(3, 2, 1, 5, 4, 6), 6 * 8);
	mb_free(&b);
	one_node(&b, 10, 2, d23, 2, d23);
	init_i64(&b, "l", I64(3, 2), 2);
	nodef(&b, "ReverseSequence", "rs", "x,l", "y", "batch_axis=i:0", "time_axis=i:0", NULL);
	load(&b, NULL, -EINVAL, "batch_axis (0) and time_axis (0) must be 0 and 1 in some order");
	mb_free(&b);

	/* OneHot's axis 0 */
	one_node(&b, 11, 1, d2, 2, d22);
	init_i64(&b, "d", I64(2), 1);
	init_i64(&b, "v", I64(0, 7), 2);
	nodef(&b, "OneHot", "oh", "x,d,v", "y", "axis=i:0", NULL);
	kt_run_model(&b, 1, (void *[]){ hot }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(0, 7, 7, 0), 4 * 8);
	mb_free(&b);

	/* GatherND's batch_dims */
	one_node(&b, 12, 2, d22, 1, d2);
	init_i64_2d(&b, "i", I64(1, 0), 2, 1);
	nodef(&b, "GatherND", "gn", "x,i", "y", "batch_dims=i:1", NULL);
	kt_run_model(&b, 1, (void *[]){ x }, 1, (void *[]){ y });
	assert_memory_equal(y, I64(2, 3), 2 * 8);
	mb_free(&b);
}

/* ---- The family's table ------------------------------------------------------------------- */

static void test_table(void **s)
{
	const struct npu_onnx_op *const *p;
	size_t n = 0;

	(void)s;
	for (p = ok_ops_index; *p; p++, n++) {
		assert_int_equal((*p)->size, sizeof(struct npu_onnx_op));
		assert_string_equal((*p)->domain, "");
		assert_string_equal((*p)->kernel->name, (*p)->op_type);
		assert_non_null((*p)->kernel->infer);
		assert_non_null((*p)->kernel->run);
	}
	assert_int_equal(n, 26);
}

/* A model may leave out any input or output: every op says which, none reads it. */
static void test_missing_io(void **s)
{
	static const uint64_t zero_state[64];
	const struct npu_onnx_op *const *p;
	struct npu_kernel_tensor x = T(NPU_DTYPE_INT64, I64(1, 2), 2), o = { 0 };
	const struct npu_kernel_tensor *in[1] = { NULL };
	struct npu_kernel_tensor *out[2] = { NULL, &o };
	struct mb b;
	static const int64_t d2[] = { 2 };

	(void)s;
	for (p = ok_ops_index; *p; p++) {
		const struct npu_kernel *k = (*p)->kernel;

		err[0] = 0;
		assert_int_equal(k->infer(zero_state, 0, NULL, 1, out + 1, err, sizeof(err)), -EINVAL);
		if (!strstr(err, "input 0 is missing"))
			fail_msg("%s: \"%s\"", (*p)->op_type, err);
		err[0] = 0;
		assert_int_equal(k->infer(zero_state, 1, in, 1, out + 1, err, sizeof(err)), -EINVAL);
		if (!strstr(err, "input 0 is missing"))
			fail_msg("%s: \"%s\"", (*p)->op_type, err);
	}
	/* output 0 absent, output 1 present */
	in[0] = &x;
	refused(ok_op_transpose.kernel->infer(zero_state, 1, in, 2, out, err, sizeof(err)),
		"output 0 is missing");

	/* through the importer: a Gather without its indices */
	one_node(&b, 13, 1, d2, 1, d2);
	nodef(&b, "Gather", "g", "x", "y", NULL);
	load(&b, NULL, -EINVAL, "input 1 is missing (the op needs 2)");
	mb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_concat),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_pad),
		cmocka_unit_test(test_expand_tile),
		cmocka_unit_test(test_depth_space),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_gather_elements),
		cmocka_unit_test(test_gather_nd),
		cmocka_unit_test(test_scatter_elements),
		cmocka_unit_test(test_scatter_nd),
		cmocka_unit_test(test_trilu),
		cmocka_unit_test(test_cumsum),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_onehot),
		cmocka_unit_test(test_eyelike_shape_size),
		cmocka_unit_test(test_reverse_sequence),
		cmocka_unit_test(test_compress),
		cmocka_unit_test(test_nonzero),
		cmocka_unit_test(test_unique),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_missing_io),
		cmocka_unit_test(test_create_movement),
		cmocka_unit_test(test_create_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
