// SPDX-License-Identifier: MIT
/*
 * Det: the determinant of each [M, M] matrix of a [*, M, M] input, by
 * Gaussian elimination with partial pivoting in doubles.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ok_reduce.h"

static int det_shape(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *x = in[0];
	int rc;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	rc = ok_red_check_float("the input", x->dtype, err, err_size);
	if (rc)
		return rc;
	if (x->rank < 2)
		return ok_fail(err, err_size, "the input must be [*, M, M], not of rank %u",
			       x->rank);
	if (x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return ok_fail(err, err_size, "the matrices are %ux%u, not square",
			       x->dims[x->rank - 2], x->dims[x->rank - 1]);
	out[0]->dtype = x->dtype;
	return ok_set_shape(out[0], x->rank - 2, x->dims);
}

OK_RED_INFER(det_infer, det_shape, false)

static uint64_t det_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	uint64_t m = in[0]->dims[in[0]->rank - 1];

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	(void)out;
	/* elimination: about m^3/3 multiply-adds per matrix, m^2 elements each */
	return in[0]->elems * (m / 3 + 1);
}

static int det_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const struct npu_kernel_tensor *x = in[0];
	uint64_t m = x->dims[x->rank - 1], mm = m * m, b, i, j, k, done = 0;
	double *a;
	int rc = 0;

	(void)state;
	(void)num_inputs;
	(void)num_outputs;
	a = malloc(mm * sizeof(*a));
	if (!a)
		return npu_kernel_fail(call, -ENOMEM, "no memory for a %llux%llu matrix",
				       (unsigned long long)m, (unsigned long long)m);
	for (b = 0; b < x->elems / mm; b++) {
		double det = 1;

		for (i = 0; i < mm; i++)
			a[i] = ok_red_get(x, b * mm + i);
		for (k = 0; k < m && det != 0; k++) {
			uint64_t piv = k;

			for (i = k + 1; i < m; i++)
				if (fabs(a[i * m + k]) > fabs(a[piv * m + k]))
					piv = i;
			if (a[piv * m + k] == 0) {
				det = 0;
				break;
			}
			if (piv != k) {
				for (j = 0; j < m; j++) {
					double t = a[k * m + j];

					a[k * m + j] = a[piv * m + j];
					a[piv * m + j] = t;
				}
				det = -det;
			}
			det *= a[k * m + k];
			for (i = k + 1; i < m; i++) {
				double f = a[i * m + k] / a[k * m + k];

				for (j = k + 1; j < m; j++)
					a[i * m + j] -= f * a[k * m + j];
			}
			rc = ok_tick(call, &done, (m - k) * (m - k));
			if (rc)
				goto out;
		}
		ok_red_set(out[0], b, det);
	}
out:
	free(a);
	return rc;
}

const struct npu_kernel ok_det_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Det",
	.infer = det_infer,
	.work = det_work,
	.run = det_run,
};

const struct npu_onnx_op ok_op_det = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Det",
	.since_version = 11,
	.kernel = &ok_det_kernel,
};
