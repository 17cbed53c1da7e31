/* SPDX-License-Identifier: MIT */
/*
 * MediaPipe BlazeFace (the short-range "front" 128x128 and full-range
 * "back" 256x256 models, as converted for Barracuda by keijiro): input
 * preparation and the decoding of the raw outputs into faces.
 *
 * Input: [1, S, S, 3] float32, NHWC, RGB scaled to [-1, 1].
 * Outputs: per anchor a score logit and 16 regressors (box centre offset,
 * box size, six keypoint offsets, all in input pixels), for a 16x16 grid
 * with 2 anchors per cell followed by an 8x8 grid with 6: 896 anchors.
 * The ONNX names are Identity:0 / Identity_1:0 (scores of the two grids)
 * and Identity_2:0 / Identity_3:0 (their regressors).
 */
#ifndef VNPU_BLAZEFACE_H
#define VNPU_BLAZEFACE_H

#include "mimage.h"
#include "npy.h"

#define BLAZEFACE_KEYPOINTS 6
#define BLAZEFACE_ANCHORS 896
/* MediaPipe's face detection thresholds. */
#define BLAZEFACE_MIN_SCORE 0.5f
#define BLAZEFACE_NMS_IOU 0.3f

/* Everything in source image pixels; keypoints: right eye, left eye, nose
 * tip, mouth centre, right and left ear tragion (the subject's sides). */
struct blazeface_face {
	float x0, y0, x1, y1;
	float score;
	float kp[BLAZEFACE_KEYPOINTS][2];
};

/* The input tensor for an image, stretched to @size x @size. */
int blazeface_prepare(const struct mimage *img, int size, struct npy_array *input);

/*
 * Decode the four outputs (as from the model, in ONNX output order) into at
 * most @max faces, best first, after MediaPipe's weighted non-maximum
 * suppression.  Returns the number of faces or a negative errno (-EINVAL
 * when an output has the wrong type or size).
 */
int blazeface_decode(const struct npy_array *const out[4], int size, int img_w, int img_h,
		     struct blazeface_face *faces, int max);

float blazeface_iou(const struct blazeface_face *a, const struct blazeface_face *b);

void blazeface_annotate(struct mimage *img, const struct blazeface_face *faces, int n);

#endif /* VNPU_BLAZEFACE_H */
