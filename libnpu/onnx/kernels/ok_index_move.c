// SPDX-License-Identifier: MIT
/*
 * Transpose, Expand, Tile, DepthToSpace and SpaceToDepth for every dtype:
 * each output is one strided view of its input (ok_view_copy).
 */
#include <errno.h>
#include <string.h>

#include "ok_index.h"

static void input_strides(const struct npu_kernel_tensor *t, int64_t *stride)
{
	uint64_t s[NPU_TENSOR_MAX_RANK];
	uint32_t d;

	ok_strides(t, s);
	for (d = 0; d < t->rank; d++)
		stride[d] = (int64_t)s[d];
}

static int copy_view(const struct npu_kernel_tensor *in, struct npu_kernel_tensor *out,
		     const struct ok_view *v, struct npu_kernel_call *call)
{
	return ok_view_copy(out->data, in->data, npu_dtype_size(in->dtype), v, call);
}

/* ---- Transpose -------------------------------------------------------------- */

static int transpose_perm(const struct ok_transpose_state *st,
			  const struct npu_kernel_tensor *in, uint32_t *perm, char *err,
			  size_t err_size)
{
	bool seen[NPU_TENSOR_MAX_RANK] = { false };
	uint32_t d;

	if (!st->num_perm) {
		for (d = 0; d < in->rank; d++)
			perm[d] = in->rank - 1 - d;
		return 0;
	}
	if (st->num_perm != in->rank)
		return ok_fail(err, err_size, "perm has %u values for an input of rank %u",
			       st->num_perm, in->rank);
	for (d = 0; d < in->rank; d++) {
		int64_t p = st->perm[d];

		if (p < 0 || p >= in->rank || seen[p])
			return ok_fail(err, err_size,
				       "perm is not a permutation of [0, %u): %lld at %u",
				       in->rank, (long long)p, d);
		seen[p] = true;
		perm[d] = (uint32_t)p;
	}
	return 0;
}

static int transpose_infer(const void *state, size_t ni,
			   const struct npu_kernel_tensor *const *in, size_t no,
			   struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	uint32_t perm[NPU_TENSOR_MAX_RANK], dims[NPU_TENSOR_MAX_RANK], d;
	int r;

	OK_NEED_IO(ni, in, 1, no, out, true);
	r = transpose_perm(state, in[0], perm, err, err_size);
	if (r)
		return r;
	for (d = 0; d < in[0]->rank; d++)
		dims[d] = in[0]->dims[perm[d]];
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape(out[0], in[0]->rank, dims);
}

static int transpose_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			 size_t no, struct npu_kernel_tensor *const *out,
			 struct npu_kernel_call *call)
{
	uint32_t perm[NPU_TENSOR_MAX_RANK], d;
	int64_t stride[NPU_TENSOR_MAX_RANK];
	struct ok_view v = { .rank = in[0]->rank };

	(void)ni;
	(void)no;
	if (transpose_perm(state, in[0], perm, NULL, 0))
		return npu_kernel_fail(call, -EINVAL, "perm does not match the input");
	input_strides(in[0], stride);
	for (d = 0; d < v.rank; d++) {
		v.dims[d] = in[0]->dims[perm[d]];
		v.stride[d] = stride[perm[d]];
	}
	return copy_view(in[0], out[0], &v, call);
}

static int transpose_create(const struct npu_onnx_node *n, void *opaque, void **state,
			    char *err, size_t err_size)
{
	struct ok_transpose_state *st;
	const int64_t *perm;
	size_t count;

	(void)opaque;
	if (npu_onnx_attr_ints(n, "perm", &perm, &count))
		count = 0;
	if (count > NPU_TENSOR_MAX_RANK)
		return ok_fail(err, err_size, "perm has %zu values, above the rank limit of %d",
			       count, NPU_TENSOR_MAX_RANK);
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->num_perm = (uint32_t)count;
	if (count)
		memcpy(st->perm, perm, count * sizeof(*perm));
	*state = st;
	return 0;
}

static const struct npu_kernel transpose_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Transpose",
	.infer = transpose_infer,
	.run = transpose_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_transpose = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Transpose",
	.since_version = 1,
	.kernel = &transpose_kernel,
	.create = transpose_create,
};

/* ---- Expand ------------------------------------------------------------------ */

/* The output's shape: the input's and @shape's broadcast both ways. */
static int expand_shape(const struct npu_kernel_tensor *const *in, uint32_t *rank,
			uint64_t *dims, char *err, size_t err_size)
{
	int64_t shape[NPU_TENSOR_MAX_RANK];
	size_t n, k;
	uint32_t r;
	int e;

	e = ok_read_ints(in[1], shape, NPU_TENSOR_MAX_RANK, &n,
			 "shape (the output's rank is its length)", err, err_size);
	if (e)
		return e;
	if (in[1]->rank != 1)
		return ok_fail(err, err_size, "shape must be 1-D, not of rank %u", in[1]->rank);
	r = in[0]->rank > n ? in[0]->rank : (uint32_t)n;
	for (k = 0; k < r; k++) {
		uint64_t a = 1, b = 1;
		int64_t ai = (int64_t)k - (int64_t)(r - in[0]->rank);
		int64_t bi = (int64_t)k - (int64_t)(r - n);

		if (ai >= 0)
			a = in[0]->dims[ai];
		if (bi >= 0) {
			if (shape[bi] < 0)
				return ok_fail(err, err_size, "shape[%lld] (%lld) is negative",
					       (long long)bi, (long long)shape[bi]);
			b = (uint64_t)shape[bi];
		}
		if (a != b && a != 1 && b != 1)
			return ok_fail(err, err_size,
				       "the input's dimension %lld (%llu) does not broadcast to %llu",
				       (long long)ai, (unsigned long long)a,
				       (unsigned long long)b);
		dims[k] = a == 1 ? b : a;
	}
	*rank = r;
	return 0;
}

static int expand_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
			size_t no, struct npu_kernel_tensor *const *out, char *err,
			size_t err_size)
{
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t rank = 0;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	(void)state;
	e = expand_shape(in, &rank, dims, err, err_size);
	if (e)
		return e;
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape64(out[0], rank, dims, "the output", err, err_size);
}

static int expand_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out,
		      struct npu_kernel_call *call)
{
	int64_t stride[NPU_TENSOR_MAX_RANK];
	struct ok_view v = { .rank = out[0]->rank };
	uint32_t d, lead = out[0]->rank - in[0]->rank;

	(void)state;
	(void)ni;
	(void)no;
	input_strides(in[0], stride);
	for (d = 0; d < v.rank; d++) {
		v.dims[d] = out[0]->dims[d];
		v.stride[d] = d < lead || in[0]->dims[d - lead] == 1 ? 0 : stride[d - lead];
	}
	return copy_view(in[0], out[0], &v, call);
}

static const struct npu_kernel expand_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Expand",
	.infer = expand_infer,
	.run = expand_run,
};

const struct npu_onnx_op ok_op_expand = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Expand",
	.since_version = 8,
	.kernel = &expand_kernel,
};

/* ---- Tile ------------------------------------------------------------------------ */

static int tile_repeats(const struct npu_kernel_tensor *const *in, int64_t *rep, char *err,
			size_t err_size)
{
	size_t n, k;
	int e = ok_read_ints(in[1], rep, NPU_TENSOR_MAX_RANK, &n,
			     "repeats (the output's shape depends on it)", err, err_size);

	if (e)
		return e;
	if (n != in[0]->rank)
		return ok_fail(err, err_size, "repeats has %zu values for an input of rank %u",
			       n, in[0]->rank);
	for (k = 0; k < n; k++)
		if (rep[k] < 1 || rep[k] > UINT32_MAX)
			return ok_fail(err, err_size,
				       "repeats[%zu] (%lld) is not within [1, %u]%s", k,
				       (long long)rep[k], UINT32_MAX,
				       rep[k] == 0 ? " (an empty output is not supported)" : "");
	return 0;
}

static int tile_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		      size_t no, struct npu_kernel_tensor *const *out, char *err,
		      size_t err_size)
{
	int64_t rep[NPU_TENSOR_MAX_RANK];
	uint64_t dims[NPU_TENSOR_MAX_RANK];
	uint32_t d;
	int e;

	OK_NEED_IO(ni, in, 2, no, out, true);
	(void)state;
	e = tile_repeats(in, rep, err, err_size);
	if (e)
		return e;
	for (d = 0; d < in[0]->rank; d++)
		dims[d] = in[0]->dims[d] * (uint64_t)rep[d];
	out[0]->dtype = in[0]->dtype;
	return ok_set_shape64(out[0], in[0]->rank, dims, "the output", err, err_size);
}

static int tile_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		    size_t no, struct npu_kernel_tensor *const *out,
		    struct npu_kernel_call *call)
{
	int64_t stride[NPU_TENSOR_MAX_RANK];
	struct ok_view v = { .rank = 2 * in[0]->rank };
	uint32_t d;

	(void)state;
	(void)ni;
	(void)no;
	input_strides(in[0], stride);
	/* Output axis d is (repeat, position): a view of twice the rank. */
	for (d = 0; d < in[0]->rank; d++) {
		v.dims[2 * d] = out[0]->dims[d] / in[0]->dims[d];
		v.stride[2 * d] = 0;
		v.dims[2 * d + 1] = in[0]->dims[d];
		v.stride[2 * d + 1] = stride[d];
	}
	return copy_view(in[0], out[0], &v, call);
}

static const struct npu_kernel tile_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "Tile",
	.infer = tile_infer,
	.run = tile_run,
};

const struct npu_onnx_op ok_op_tile = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "Tile",
	.since_version = 6,
	.kernel = &tile_kernel,
};

/* ---- DepthToSpace and SpaceToDepth ------------------------------------------------ */

static int block_check(const struct ok_block_state *st, const struct npu_kernel_tensor *in,
		       char *err, size_t err_size)
{
	if (in->rank != 4)
		return ok_fail(err, err_size, "the input must be 4-D (N, C, H, W), not of rank %u",
			       in->rank);
	if (st->blocksize < 1 || st->blocksize > 65535)
		return ok_fail(err, err_size, "blocksize %lld is not within [1, 65535]",
			       (long long)st->blocksize);
	return 0;
}

static int d2s_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out, char *err,
		     size_t err_size)
{
	const struct ok_block_state *st = state;
	const struct npu_kernel_tensor *x;
	uint64_t bs, dims[4];
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	x = in[0];
	e = block_check(st, x, err, err_size);
	if (e)
		return e;
	bs = (uint64_t)st->blocksize;
	if (x->dims[1] % (bs * bs))
		return ok_fail(err, err_size,
			       "the channels (%u) are not a multiple of blocksize^2 (%llu)",
			       x->dims[1], (unsigned long long)(bs * bs));
	dims[0] = x->dims[0];
	dims[1] = x->dims[1] / (bs * bs);
	dims[2] = x->dims[2] * bs;
	dims[3] = x->dims[3] * bs;
	out[0]->dtype = x->dtype;
	return ok_set_shape64(out[0], 4, dims, "the output", err, err_size);
}

static int d2s_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		   size_t no, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	const struct ok_block_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	int64_t s[4], bs = st->blocksize, c = x->dims[1] / (bs * bs);
	struct ok_view v = { .rank = 6 };

	(void)ni;
	(void)no;
	input_strides(x, s);
	/* Output order (n, c, h, b1, w, b2). */
	v.dims[0] = x->dims[0];
	v.stride[0] = s[0];
	v.dims[1] = (uint64_t)c;
	v.dims[2] = x->dims[2];
	v.stride[2] = s[2];
	v.dims[3] = (uint64_t)bs;
	v.dims[4] = x->dims[3];
	v.stride[4] = s[3];
	v.dims[5] = (uint64_t)bs;
	if (st->crd) {
		/* channel = (c * bs + b1) * bs + b2 */
		v.stride[1] = bs * bs * s[1];
		v.stride[3] = bs * s[1];
		v.stride[5] = s[1];
	} else {
		/* channel = (b1 * bs + b2) * C' + c */
		v.stride[1] = s[1];
		v.stride[3] = bs * c * s[1];
		v.stride[5] = c * s[1];
	}
	return copy_view(x, out[0], &v, call);
}

static int s2d_infer(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		     size_t no, struct npu_kernel_tensor *const *out, char *err,
		     size_t err_size)
{
	const struct ok_block_state *st = state;
	const struct npu_kernel_tensor *x;
	uint64_t bs, dims[4];
	int e;

	OK_NEED_IO(ni, in, 1, no, out, true);
	x = in[0];
	e = block_check(st, x, err, err_size);
	if (e)
		return e;
	bs = (uint64_t)st->blocksize;
	if (x->dims[2] % bs || x->dims[3] % bs)
		return ok_fail(err, err_size,
			       "the height (%u) and width (%u) must be multiples of blocksize %llu",
			       x->dims[2], x->dims[3], (unsigned long long)bs);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1] * bs * bs;
	dims[2] = x->dims[2] / bs;
	dims[3] = x->dims[3] / bs;
	out[0]->dtype = x->dtype;
	return ok_set_shape64(out[0], 4, dims, "the output", err, err_size);
}

static int s2d_run(const void *state, size_t ni, const struct npu_kernel_tensor *const *in,
		   size_t no, struct npu_kernel_tensor *const *out,
		   struct npu_kernel_call *call)
{
	const struct ok_block_state *st = state;
	const struct npu_kernel_tensor *x = in[0];
	int64_t s[4], bs = st->blocksize;
	struct ok_view v = { .rank = 6 };

	(void)ni;
	(void)no;
	input_strides(x, s);
	/* Output channel (b1 * bs + b2) * C + c: order (n, b1, b2, c, h', w'). */
	v.dims[0] = x->dims[0];
	v.stride[0] = s[0];
	v.dims[1] = (uint64_t)bs;
	v.stride[1] = s[2];
	v.dims[2] = (uint64_t)bs;
	v.stride[2] = s[3];
	v.dims[3] = x->dims[1];
	v.stride[3] = s[1];
	v.dims[4] = x->dims[2] / (uint64_t)bs;
	v.stride[4] = bs * s[2];
	v.dims[5] = x->dims[3] / (uint64_t)bs;
	v.stride[5] = bs * s[3];
	return copy_view(x, out[0], &v, call);
}

static int block_create(const struct npu_onnx_node *n, void *opaque, void **state, char *err,
			size_t err_size)
{
	struct ok_block_state *st;
	char mode[8] = "DCR";
	int64_t bs;

	(void)opaque;
	if (npu_onnx_attr_int(n, "blocksize", &bs))
		return ok_fail(err, err_size, "the blocksize attribute is required");
	if (!strcmp(npu_onnx_node_op_type(n), "DepthToSpace")) {
		int r = npu_onnx_attr_string(n, "mode", mode, sizeof(mode));

		if (r && r != -ENOENT)
			return ok_fail(err, err_size, "mode must be DCR or CRD");
		if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
			return ok_fail(err, err_size, "mode \"%s\" is not DCR or CRD", mode);
	}
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->blocksize = bs;
	st->crd = !strcmp(mode, "CRD");
	*state = st;
	return 0;
}

static const struct npu_kernel d2s_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "DepthToSpace",
	.infer = d2s_infer,
	.run = d2s_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_depth_to_space = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "DepthToSpace",
	.since_version = 1,
	.kernel = &d2s_kernel,
	.create = block_create,
};

static const struct npu_kernel s2d_kernel = {
	.size = sizeof(struct npu_kernel),
	.name = "SpaceToDepth",
	.infer = s2d_infer,
	.run = s2d_run,
	.release = ok_state_free,
};

const struct npu_onnx_op ok_op_space_to_depth = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "SpaceToDepth",
	.since_version = 1,
	.kernel = &s2d_kernel,
	.create = block_create,
};
