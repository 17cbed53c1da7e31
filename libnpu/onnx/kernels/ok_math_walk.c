// SPDX-License-Identifier: MIT
/*
 * Walking a numpy broadcast row by row, so that the per-element loops of
 * the math kernels see only dense or repeated operands and no index
 * arithmetic.
 */
#include <stddef.h>
#include <stdint.h>

#include "ok_math.h"

void ok_walk_init(struct ok_walk *w, const struct npu_kernel_tensor *out,
		  size_t num_in, const struct npu_kernel_tensor *const *in)
{
	uint64_t st[OK_WALK_MAX_IN][NPU_TENSOR_MAX_RANK];
	uint64_t group = 1;	/* elements of the dimensions merged so far */
	uint32_t d, r = 0;
	size_t k;
	bool inner = true;

	w->num_in = num_in;
	for (k = 0; k < num_in; k++) {
		struct ok_bcast b;

		ok_bcast_init(&b, in[k], out);
		for (d = 0; d < out->rank; d++)
			st[k][d] = b.stride[d];
		w->step[k] = 0;
	}
	w->row = 1;
	/*
	 * From the innermost dimension out: a dimension of 1 is skipped; the
	 * next one joins the current group while every operand's stride is
	 * the group's stride times its size (0 stays 0 for a broadcast one).
	 */
	for (d = out->rank; d-- > 0;) {
		uint64_t n = out->dims[d];
		bool joins = true;

		if (n == 1)
			continue;
		if (inner && w->row == 1) {
			for (k = 0; k < num_in; k++)
				w->step[k] = st[k][d] ? 1 : 0;
		}
		for (k = 0; k < num_in && joins; k++) {
			uint64_t base = inner ? w->step[k] : w->stride[k][r - 1];

			joins = st[k][d] == base * group;
		}
		if (inner && joins) {
			w->row *= n;
			group *= n;
			continue;
		}
		if (!inner && joins) {
			w->dims[r - 1] *= n;
			group *= n;
			continue;
		}
		/* a new outer group, kept innermost-first until the end */
		inner = false;
		for (k = 0; k < num_in; k++)
			w->stride[k][r] = st[k][d];
		w->dims[r++] = n;
		group = n;
	}
	/* innermost last, as the counters of ok_walk_run() want them */
	for (d = 0; d < r / 2; d++) {
		uint64_t t = w->dims[d];

		w->dims[d] = w->dims[r - 1 - d];
		w->dims[r - 1 - d] = t;
		for (k = 0; k < num_in; k++) {
			t = w->stride[k][d];
			w->stride[k][d] = w->stride[k][r - 1 - d];
			w->stride[k][r - 1 - d] = t;
		}
	}
	w->rank = r;
}

int ok_walk_run(const struct ok_walk *w, const struct npu_kernel_tensor *out,
		const struct npu_kernel_tensor *const *in, ok_row_fn fn,
		const void *ctx, struct npu_kernel_call *call)
{
	uint64_t idx[NPU_TENSOR_MAX_RANK] = { 0 }, off[OK_WALK_MAX_IN] = { 0 };
	size_t osize = npu_dtype_size(out->dtype), isize[OK_WALK_MAX_IN];
	uint64_t o = 0, pending = 0;
	const void *p[OK_WALK_MAX_IN];
	size_t k;
	int ret;

	for (k = 0; k < w->num_in; k++)
		isize[k] = npu_dtype_size(in[k]->dtype);
	for (;;) {
		uint64_t done = 0;
		uint32_t d;

		while (done < w->row) {
			uint64_t n = w->row - done;

			if (n > OK_POLL_EVERY)
				n = OK_POLL_EVERY;
			for (k = 0; k < w->num_in; k++)
				p[k] = (const char *)in[k]->data +
				       (off[k] + done * w->step[k]) * isize[k];
			ret = fn(ctx, call, n, (char *)out->data + (o + done) * osize, p,
				 w->step);
			if (ret)
				return ret;
			done += n;
			ret = ok_tick(call, &pending, n);
			if (ret)
				return ret;
		}
		o += w->row;
		/* the next row: an odometer over the outer dimensions */
		for (d = w->rank; d-- > 0;) {
			if (++idx[d] < w->dims[d]) {
				for (k = 0; k < w->num_in; k++)
					off[k] += w->stride[k][d];
				break;
			}
			idx[d] = 0;
			for (k = 0; k < w->num_in; k++)
				off[k] -= w->stride[k][d] * (w->dims[d] - 1);
		}
		if (d == UINT32_MAX)
			break;
	}
	return pending ? npu_kernel_poll(call, pending) : 0;
}
