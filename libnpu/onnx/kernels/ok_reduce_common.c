// SPDX-License-Identifier: MIT
/* What the reduce family's kernels share: dtype checks and axis splits. */
#include "ok_reduce.h"

int ok_red_check_float(const char *what, enum npu_dtype dt, char *err, size_t err_size)
{
	if (ok_is_float(dt))
		return 0;
	return ok_fail(err, err_size, "%s must be float16, bfloat16, float32 or float64, not %s",
		       what, ok_dtype_name(dt));
}

int ok_red_check_numeric(const char *what, enum npu_dtype dt, char *err, size_t err_size)
{
	if (dt == NPU_DTYPE_BOOL || dt == NPU_DTYPE_UINT64 || ok_dtype_name(dt)[0] == '?')
		return ok_fail(err, err_size, "%s must be a float or an integer type other than uint64, not %s",
			       what, ok_dtype_name(dt));
	return 0;
}

uint64_t ok_red_work_3_passes(const void *state, size_t num_inputs,
			      const struct npu_kernel_tensor *const *in, size_t num_outputs,
			      const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	(void)out;
	return 3 * in[0]->elems;
}

void ok_red_split(const struct npu_kernel_tensor *t, uint32_t axis, uint64_t *outer,
		  uint64_t *n, uint64_t *inner)
{
	uint64_t o = 1, in = 1;
	uint32_t d;

	for (d = 0; d < axis; d++)
		o *= t->dims[d];
	for (d = axis + 1; d < t->rank; d++)
		in *= t->dims[d];
	*outer = o;
	*n = t->rank ? t->dims[axis] : 1;
	*inner = in;
}

int ok_red_need_io(size_t num_inputs, const struct npu_kernel_tensor *const *in,
		   size_t num_outputs, struct npu_kernel_tensor *const *out, bool out0_optional,
		   char *err, size_t err_size)
{
	if (num_inputs < 1 || !in[0])
		return ok_fail(err, err_size, "the first input is missing");
	if (!out0_optional && (num_outputs < 1 || !out[0]))
		return ok_fail(err, err_size, "the first output is missing");
	return 0;
}
