/* SPDX-License-Identifier: MIT */
/*
 * YOLOv8 detection (Ultralytics' yolov8n.onnx, 80 COCO classes), pre- and
 * postprocessed as Ultralytics' own predictor does: the image letterboxed
 * into a square (grey 114 padding), RGB in [0, 1], NCHW; the output
 * [1, 4 + 80, N] decoded from centre/size boxes and class scores, then
 * per-class non-maximum suppression.
 */
#ifndef VNPU_MODELS_YOLO_H
#define VNPU_MODELS_YOLO_H

#include "mimage.h"
#include "npy.h"

#define YOLO_CLASSES 80
#define YOLO_MAX_DETECTIONS 300	/* Ultralytics' max_det */

struct yolo_detection {
	float box[4];		/* x0, y0, x1, y1 in image pixels */
	float score;
	int cls;
};

/* The letterbox: image pixel = (input pixel - pad) / scale. */
struct yolo_letterbox {
	float scale, pad_x, pad_y;
};

/* COCO's name for class @cls, "?" outside 0..79. */
const char *yolo_class_name(int cls);

/* The model's [1, 3, size, size] input for @img.  0 or -ENOMEM/-EINVAL. */
int yolo_prepare(const struct mimage *img, int size, struct npy_array *input,
		 struct yolo_letterbox *lb);

/*
 * Decode @out ([1, 4 + YOLO_CLASSES, N] float) into at most @max
 * detections, best first: class score >= @conf, then per class, boxes
 * overlapping a better one with IoU > @iou dropped.  Returns the count or
 * -EINVAL for an output of another shape.
 */
int yolo_decode(const struct npy_array *out, const struct yolo_letterbox *lb, float conf,
		float iou, struct yolo_detection *dets, int max);

float yolo_iou(const float a[4], const float b[4]);

#endif /* VNPU_MODELS_YOLO_H */
