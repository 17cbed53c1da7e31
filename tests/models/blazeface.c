// SPDX-License-Identifier: MIT
#include "blazeface.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The two anchor grids: cells per row and anchors per cell. */
static const struct {
	int cells, anchors;
} grids[2] = { { 16, 2 }, { 8, 6 } };

int blazeface_prepare(const struct mimage *img, int size, struct npy_array *input)
{
	size_t n;
	float *px;

	memset(input, 0, sizeof(*input));
	if (size <= 0 || size > 4096)
		return -EINVAL;
	n = (size_t)size * (size_t)size * 3;
	px = malloc(n * sizeof(float));
	if (!px)
		return -ENOMEM;
	mimage_resize(img, size, size, px);
	for (size_t i = 0; i < n; i++)
		px[i] = px[i] / 127.5f - 1.0f;
	input->type = NPY_F32;
	input->rank = 4;
	input->dims[0] = 1;
	input->dims[1] = size;
	input->dims[2] = size;
	input->dims[3] = 3;
	input->data = px;
	input->bytes = n * sizeof(float);
	return 0;
}

static int f32_count(const struct npy_array *a, size_t n)
{
	return a && a->type == NPY_F32 && a->data && a->bytes == n * sizeof(float);
}

float blazeface_iou(const struct blazeface_face *a, const struct blazeface_face *b)
{
	float iw = fminf(a->x1, b->x1) - fmaxf(a->x0, b->x0);
	float ih = fminf(a->y1, b->y1) - fmaxf(a->y0, b->y0);
	float inter, uni;

	if (iw <= 0 || ih <= 0)
		return 0;
	inter = iw * ih;
	uni = (a->x1 - a->x0) * (a->y1 - a->y0) + (b->x1 - b->x0) * (b->y1 - b->y0) - inter;
	return uni > 0 ? inter / uni : 0;
}

/* Box corners then keypoints, as one vector for the weighted mean. */
#define FACE_VALUES (4 + 2 * BLAZEFACE_KEYPOINTS)

static void face_to_values(const struct blazeface_face *f, float v[FACE_VALUES])
{
	v[0] = f->x0;
	v[1] = f->y0;
	v[2] = f->x1;
	v[3] = f->y1;
	for (int k = 0; k < BLAZEFACE_KEYPOINTS; k++) {
		v[4 + 2 * k] = f->kp[k][0];
		v[5 + 2 * k] = f->kp[k][1];
	}
}

static void values_to_face(const float v[FACE_VALUES], struct blazeface_face *f)
{
	f->x0 = v[0];
	f->y0 = v[1];
	f->x1 = v[2];
	f->y1 = v[3];
	for (int k = 0; k < BLAZEFACE_KEYPOINTS; k++) {
		f->kp[k][0] = v[4 + 2 * k];
		f->kp[k][1] = v[5 + 2 * k];
	}
}

static int by_score_desc(const void *pa, const void *pb)
{
	const struct blazeface_face *a = pa, *b = pb;

	return (a->score < b->score) - (a->score > b->score);
}

int blazeface_decode(const struct npy_array *const out[4], int size, int img_w, int img_h,
		     struct blazeface_face *faces, int max)
{
	struct blazeface_face *cand;
	float sx = (float)img_w, sy = (float)img_h, inv = 1.0f / (float)size;
	int ncand = 0, nout = 0;

	if (size <= 0 || img_w <= 0 || img_h <= 0 || max < 0)
		return -EINVAL;
	for (int g = 0; g < 2; g++) {
		size_t n = (size_t)grids[g].cells * (size_t)grids[g].cells * (size_t)grids[g].anchors;

		if (!f32_count(out[g], n) || !f32_count(out[2 + g], n * 16))
			return -EINVAL;
	}
	cand = calloc(BLAZEFACE_ANCHORS, sizeof(*cand));
	if (!cand)
		return -ENOMEM;

	for (int g = 0; g < 2; g++) {
		const float *score = out[g]->data, *reg = out[2 + g]->data;
		int cells = grids[g].cells, i = 0;

		for (int cy = 0; cy < cells; cy++) {
			for (int cx = 0; cx < cells; cx++) {
				/* Anchors are unit-sized, centred in their cell: the
				 * regressors are plain pixel offsets and sizes. */
				float ax = ((float)cx + 0.5f) / (float)cells;
				float ay = ((float)cy + 0.5f) / (float)cells;

				for (int a = 0; a < grids[g].anchors; a++, i++) {
					const float *r = reg + (size_t)i * 16;
					/* MediaPipe clips the logit before the sigmoid. */
					float logit = fminf(fmaxf(score[i], -100.0f), 100.0f);
					float s = 1.0f / (1.0f + expf(-logit));
					struct blazeface_face *f;
					float cxn, cyn, w, h;

					if (!(s >= BLAZEFACE_MIN_SCORE))
						continue;
					f = &cand[ncand++];
					cxn = ax + r[0] * inv;
					cyn = ay + r[1] * inv;
					w = r[2] * inv;
					h = r[3] * inv;
					f->x0 = (cxn - w / 2) * sx;
					f->x1 = (cxn + w / 2) * sx;
					f->y0 = (cyn - h / 2) * sy;
					f->y1 = (cyn + h / 2) * sy;
					f->score = s;
					for (int k = 0; k < BLAZEFACE_KEYPOINTS; k++) {
						f->kp[k][0] = (ax + r[4 + 2 * k] * inv) * sx;
						f->kp[k][1] = (ay + r[5 + 2 * k] * inv) * sy;
					}
				}
			}
		}
	}

	/* Weighted NMS: each surviving face is the score-weighted mean of all
	 * candidates overlapping the best remaining one, which steadies the
	 * box far better than keeping the single best candidate. */
	qsort(cand, (size_t)ncand, sizeof(*cand), by_score_desc);
	for (int i = 0; i < ncand && nout < max; i++) {
		float acc[FACE_VALUES] = { 0 }, vals[FACE_VALUES], wsum = 0;

		if (cand[i].score < 0)
			continue;	/* already merged */
		for (int j = i; j < ncand; j++) {
			float w = cand[j].score;

			if (w < 0 || (j != i && blazeface_iou(&cand[i], &cand[j]) <= BLAZEFACE_NMS_IOU))
				continue;
			face_to_values(&cand[j], vals);
			for (int k = 0; k < FACE_VALUES; k++)
				acc[k] += w * vals[k];
			wsum += w;
			if (j != i)
				cand[j].score = -1;
		}
		for (int k = 0; k < FACE_VALUES; k++)
			acc[k] /= wsum;
		values_to_face(acc, &faces[nout]);
		faces[nout++].score = cand[i].score;
	}
	free(cand);
	return nout;
}

void blazeface_annotate(struct mimage *img, const struct blazeface_face *faces, int n)
{
	static const uint8_t box[3] = { 0, 255, 0 }, kp[3] = { 255, 32, 32 };

	for (int i = 0; i < n; i++) {
		const struct blazeface_face *f = &faces[i];

		mimage_line(img, f->x0, f->y0, f->x1, f->y0, box);
		mimage_line(img, f->x1, f->y0, f->x1, f->y1, box);
		mimage_line(img, f->x1, f->y1, f->x0, f->y1, box);
		mimage_line(img, f->x0, f->y1, f->x0, f->y0, box);
		for (int k = 0; k < BLAZEFACE_KEYPOINTS; k++)
			mimage_dot(img, f->kp[k][0], f->kp[k][1], 3, kp);
	}
}
