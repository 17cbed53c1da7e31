// SPDX-License-Identifier: MIT
/*
 * YOLOv8's letterbox, box decoding and NMS (ultralytics/engine/predictor.py,
 * ultralytics/utils/ops.py non_max_suppression).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo.h"

static const char *const coco_names[YOLO_CLASSES] = {
	"person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
	"traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat",
	"dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack",
	"umbrella", "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball",
	"kite", "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket",
	"bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
	"sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair",
	"couch", "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse",
	"remote", "keyboard", "cell phone", "microwave", "oven", "toaster", "sink",
	"refrigerator", "book", "clock", "vase", "scissors", "teddy bear", "hair drier",
	"toothbrush",
};

const char *yolo_class_name(int cls)
{
	return cls >= 0 && cls < YOLO_CLASSES ? coco_names[cls] : "?";
}

int yolo_prepare(const struct mimage *img, int size, struct npy_array *input,
		 struct yolo_letterbox *lb)
{
	int side = img->w > img->h ? img->w : img->h, w, h, px, py;
	size_t plane = (size_t)size * (size_t)size;
	float *hwc, *chw;

	memset(input, 0, sizeof(*input));
	if (size <= 0 || size > MIMAGE_MAX_SIDE || img->w <= 0 || img->h <= 0)
		return -EINVAL;
	lb->scale = (float)size / (float)side;
	w = (int)lroundf((float)img->w * lb->scale);
	h = (int)lroundf((float)img->h * lb->scale);
	px = (size - w) / 2;
	py = (size - h) / 2;
	lb->pad_x = (float)px;
	lb->pad_y = (float)py;
	hwc = malloc((size_t)w * (size_t)h * 3 * sizeof(float));
	chw = malloc(plane * 3 * sizeof(float));
	if (!hwc || !chw) {
		free(hwc);
		free(chw);
		return -ENOMEM;
	}
	mimage_resize(img, w, h, hwc);
	for (size_t i = 0; i < plane * 3; i++)
		chw[i] = 114.0f / 255.0f;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < 3; c++)
				chw[(size_t)c * plane + (size_t)(y + py) * (size_t)size +
				    (size_t)(x + px)] =
					hwc[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)c] / 255.0f;
	free(hwc);
	input->type = NPY_F32;
	input->rank = 4;
	input->dims[0] = 1;
	input->dims[1] = 3;
	input->dims[2] = size;
	input->dims[3] = size;
	input->data = chw;
	input->bytes = plane * 3 * sizeof(float);
	return 0;
}

float yolo_iou(const float a[4], const float b[4])
{
	float iw = fminf(a[2], b[2]) - fmaxf(a[0], b[0]);
	float ih = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
	float inter, uni;

	if (iw <= 0 || ih <= 0)
		return 0;
	inter = iw * ih;
	uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
	return uni > 0 ? inter / uni : 0;
}

static int by_score(const void *pa, const void *pb)
{
	const struct yolo_detection *a = pa, *b = pb;

	return (a->score < b->score) - (a->score > b->score);
}

int yolo_decode(const struct npy_array *out, const struct yolo_letterbox *lb, float conf,
		float iou, struct yolo_detection *dets, int max)
{
	const float *p = out->data;
	struct yolo_detection *cand;
	size_t n, count = 0;
	int kept = 0;

	if (out->type != NPY_F32 || out->rank != 3 || out->dims[0] != 1 ||
	    out->dims[1] != 4 + YOLO_CLASSES || out->dims[2] <= 0 || max < 0)
		return -EINVAL;
	n = (size_t)out->dims[2];
	cand = malloc(n * sizeof(*cand));
	if (!cand)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		float best = -INFINITY, cx = p[i], cy = p[n + i], w = p[2 * n + i], h = p[3 * n + i];
		int cls = 0;

		for (int c = 0; c < YOLO_CLASSES; c++)
			if (p[(4 + (size_t)c) * n + i] > best) {
				best = p[(4 + (size_t)c) * n + i];
				cls = c;
			}
		/* NaN scores fail this too. */
		if (!(best >= conf))
			continue;
		cand[count].box[0] = (cx - w / 2 - lb->pad_x) / lb->scale;
		cand[count].box[1] = (cy - h / 2 - lb->pad_y) / lb->scale;
		cand[count].box[2] = (cx + w / 2 - lb->pad_x) / lb->scale;
		cand[count].box[3] = (cy + h / 2 - lb->pad_y) / lb->scale;
		cand[count].score = best;
		cand[count].cls = cls;
		count++;
	}
	qsort(cand, count, sizeof(*cand), by_score);
	for (size_t i = 0; i < count && kept < max; i++) {
		int drop = 0;

		for (int k = 0; k < kept && !drop; k++)
			drop = dets[k].cls == cand[i].cls && yolo_iou(dets[k].box, cand[i].box) > iou;
		if (!drop)
			dets[kept++] = cand[i];
	}
	free(cand);
	return kept;
}
