// SPDX-License-Identifier: MIT
/*
 * NonMaxSuppression: per batch and class, boxes scoring above
 * score_threshold in descending score order (ties by index), each kept
 * unless its IoU with a kept box of the class is above iou_threshold, at
 * most max_output_boxes_per_class; IoU in float32 with onnxruntime's
 * rules (corners in either order, empty boxes overlap nothing).  The
 * output's length is the count of kept boxes, so every input must be a
 * constant: infer() runs the selection to learn it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ok_seq.h"

struct nms_args {
	const struct npu_kernel_tensor *boxes, *scores;
	int64_t max_out;
	float iou, score;
	bool has_score;
	uint32_t batches, classes, n;
};

static int nms_args(size_t num_inputs, const struct npu_kernel_tensor *const *in,
		    struct nms_args *a, char *err, size_t err_size)
{
	const struct npu_kernel_tensor *mo = num_inputs > 2 ? in[2] : NULL;
	const struct npu_kernel_tensor *iou = num_inputs > 3 ? in[3] : NULL;
	const struct npu_kernel_tensor *sc = num_inputs > 4 ? in[4] : NULL;
	size_t i;

	memset(a, 0, sizeof(*a));
	a->boxes = in[0];
	a->scores = num_inputs > 1 ? in[1] : NULL;
	if (!a->boxes || !a->scores)
		return ok_fail(err, err_size, "boxes and scores are required");
	if (a->boxes->dtype != NPU_DTYPE_FP32 || a->scores->dtype != NPU_DTYPE_FP32)
		return ok_fail(err, err_size, "boxes and scores must be float32, not %s and %s",
			       ok_dtype_name(a->boxes->dtype), ok_dtype_name(a->scores->dtype));
	if (a->boxes->rank != 3 || a->boxes->dims[2] != 4)
		return ok_fail(err, err_size, "boxes must be [batches, boxes, 4]");
	a->batches = a->boxes->dims[0];
	a->n = a->boxes->dims[1];
	if (a->scores->rank != 3 || a->scores->dims[0] != a->batches ||
	    a->scores->dims[2] != a->n)
		return ok_fail(err, err_size, "scores must be [%u, classes, %u]", a->batches, a->n);
	a->classes = a->scores->dims[1];
	if (mo && (mo->dtype != NPU_DTYPE_INT64 || mo->elems != 1))
		return ok_fail(err, err_size, "max_output_boxes_per_class must be one int64");
	if ((iou && (iou->dtype != NPU_DTYPE_FP32 || iou->elems != 1)) ||
	    (sc && (sc->dtype != NPU_DTYPE_FP32 || sc->elems != 1)))
		return ok_fail(err, err_size, "iou_threshold and score_threshold must be one float32");
	for (i = 0; i < num_inputs && i < 5; i++)
		if (in[i] && !in[i]->data)
			return ok_fail(err, err_size,
				       "the output shape depends on the input's values, which must be constant");
	a->max_out = mo ? ok_get_i(mo, 0) : 0;
	a->iou = iou ? ((const float *)iou->data)[0] : 0;
	if (!(a->iou >= 0 && a->iou <= 1))
		return ok_fail(err, err_size, "iou_threshold %g is out of range [0, 1]", a->iou);
	a->has_score = sc != NULL;
	a->score = sc ? ((const float *)sc->data)[0] : 0;
	return 0;
}

/* The extent of box @i: x and y ranges, ordered. */
static void extent(const float *b, bool center, float *x0, float *x1, float *y0, float *y1)
{
	if (center) {
		float hw = b[2] / 2, hh = b[3] / 2;

		*x0 = b[0] - hw;
		*x1 = b[0] + hw;
		*y0 = b[1] - hh;
		*y1 = b[1] + hh;
	} else {
		*y0 = fminf(b[0], b[2]);
		*y1 = fmaxf(b[0], b[2]);
		*x0 = fminf(b[1], b[3]);
		*x1 = fmaxf(b[1], b[3]);
	}
}

static bool suppresses(const float *a, const float *b, bool center, float threshold)
{
	float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1, ix0, ix1, iy0, iy1, inter, ua, ub, uni;

	extent(a, center, &ax0, &ax1, &ay0, &ay1);
	extent(b, center, &bx0, &bx1, &by0, &by1);
	ix0 = fmaxf(ax0, bx0);
	ix1 = fminf(ax1, bx1);
	iy0 = fmaxf(ay0, by0);
	iy1 = fminf(ay1, by1);
	if (ix1 <= ix0 || iy1 <= iy0)
		return false;
	inter = (ix1 - ix0) * (iy1 - iy0);
	ua = (ax1 - ax0) * (ay1 - ay0);
	ub = (bx1 - bx0) * (by1 - by0);
	uni = ua + ub - inter;
	if (!(inter > 0) || !(ua > 0) || !(ub > 0) || !(uni > 0))
		return false;
	return inter / uni > threshold;
}

struct cand {
	float score;
	uint32_t index;
};

static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/*
 * Run the selection; with @out (room for @cap boxes of 3 int64) store
 * the first @cap kept.  The number kept in *@kept.
 */
static int nms_select(const struct ok_nms_state *st, const struct nms_args *a,
		      int64_t *out, uint64_t cap, uint64_t *kept,
		      struct npu_kernel_call *call)
{
	const float *boxes = a->boxes->data, *scores = a->scores->data;
	struct cand *c = malloc((a->n ? a->n : 1) * sizeof(*c));
	uint32_t *sel = malloc((a->n ? a->n : 1) * sizeof(*sel));
	uint32_t b, k, i, j, nc, ns;
	uint64_t total = 0, work = 0;
	int ret = 0;

	if (!c || !sel) {
		ret = -ENOMEM;
		goto out;
	}
	for (b = 0; b < a->batches && a->max_out > 0; b++) {
		for (k = 0; k < a->classes; k++) {
			const float *s = scores + ((uint64_t)b * a->classes + k) * a->n;

			for (i = 0, nc = 0; i < a->n; i++)
				/* a NaN score orders against nothing: never a candidate */
				if (!isnan(s[i]) && (!a->has_score || s[i] > a->score)) {
					c[nc].score = s[i];
					c[nc++].index = i;
				}
			qsort(c, nc, sizeof(*c), cand_cmp);
			for (i = 0, ns = 0; i < nc && ns < a->max_out; i++) {
				const float *bi = boxes + ((uint64_t)b * a->n + c[i].index) * 4;
				bool keep = true;

				for (j = 0; j < ns && keep; j++)
					keep = !suppresses(boxes + ((uint64_t)b * a->n + sel[j]) * 4, bi,
							   st->center_point_box, a->iou);
				work += ns + 1;
				if (!keep)
					continue;
				sel[ns++] = c[i].index;
				if (out && total < cap) {
					out[3 * total] = b;
					out[3 * total + 1] = k;
					out[3 * total + 2] = c[i].index;
				}
				total++;
			}
			work += (uint64_t)a->n * 4;
			if (call && work >= OK_POLL_EVERY) {
				ret = npu_kernel_poll(call, work);
				if (ret)
					goto out;
				work = 0;
			}
		}
	}
	*kept = total;
out:
	free(c);
	free(sel);
	return ret;
}

static int nms_infer(const void *state, size_t num_inputs,
		     const struct npu_kernel_tensor *const *in, size_t num_outputs,
		     struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	struct nms_args a;
	uint64_t kept = 0;
	uint32_t dims[2];
	int ret;

	if (num_outputs < 1 || !out[0])
		return ok_fail(err, err_size, "selected_indices is required");
	ret = nms_args(num_inputs, in, &a, err, err_size);
	if (ret)
		return ret;
	ret = nms_select(state, &a, NULL, 0, &kept, NULL);
	if (ret)
		return ok_fail(err, err_size, "out of memory");
	if (!kept)
		return ok_fail(err, err_size,
			       "no box is selected: empty outputs are not supported");
	dims[0] = (uint32_t)kept;
	dims[1] = 3;
	out[0]->dtype = NPU_DTYPE_INT64;
	return ok_set_shape(out[0], 2, dims);
}

static uint64_t nms_work(const void *state, size_t num_inputs,
			 const struct npu_kernel_tensor *const *in, size_t num_outputs,
			 const struct npu_kernel_tensor *const *out)
{
	(void)state;
	(void)num_outputs;
	(void)out;
	/* sorting and each box against the kept ones, at most n^2 per class */
	(void)num_inputs;
	if (num_inputs < 2 || !in[0] || !in[1] || in[0]->rank != 3)
		return 1;
	return in[1]->elems * ((uint64_t)in[0]->dims[1] + 4) + 1;
}

static int nms_run(const void *state, size_t num_inputs,
		   const struct npu_kernel_tensor *const *in, size_t num_outputs,
		   struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	struct nms_args a;
	uint64_t kept = 0;
	char err[128];
	int ret;

	(void)num_outputs;
	ret = nms_args(num_inputs, in, &a, err, sizeof(err));
	if (ret)
		return npu_kernel_fail(call, ret, "%s", err);
	ret = nms_select(state, &a, out[0]->data, out[0]->elems / 3, &kept, call);
	if (!ret && kept != out[0]->dims[0])
		return npu_kernel_fail(call, -EINVAL,
				       "%llu boxes are selected, the output has room for %u",
				       (unsigned long long)kept, out[0]->dims[0]);
	return ret;
}

const struct npu_kernel ok_kernel_non_max_suppression = {
	.size = sizeof(struct npu_kernel),
	.name = "NonMaxSuppression",
	.infer = nms_infer,
	.work = nms_work,
	.run = nms_run,
	.release = ok_state_free,
};

static int nms_create(const struct npu_onnx_node *node, void *opaque, void **state,
		      char *err, size_t err_size)
{
	struct ok_nms_state *st;
	int64_t cpb = ok_attr_i(node, "center_point_box", 0);

	(void)opaque;
	if (cpb != 0 && cpb != 1)
		return ok_fail(err, err_size, "center_point_box must be 0 or 1, not %lld",
			       (long long)cpb);
	st = ok_state_alloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->center_point_box = cpb;
	*state = st;
	return 0;
}

const struct npu_onnx_op ok_op_non_max_suppression = {
	.size = sizeof(struct npu_onnx_op),
	.domain = "",
	.op_type = "NonMaxSuppression",
	.since_version = 10,
	.kernel = &ok_kernel_non_max_suppression,
	.create = nms_create,
};
