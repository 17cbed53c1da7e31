/* SPDX-License-Identifier: MIT */
/*
 * PP-OCR (PaddleOCR) around its three models, following PaddleOCR's own
 * pre- and postprocessing (tools/infer/predict_{det,cls,rec}.py):
 *
 *  det  (ch_PP-OCRv4_det): [1, 3, H, W], H and W multiples of 32, BGR,
 *       (x / 255 - ImageNet mean) / std; out: [1, 1, H, W] text probability.
 *       DB postprocess: threshold the map, one min-area rectangle per
 *       connected region, scored by the mean probability over the region
 *       and grown by the "unclip" distance (DB learns shrunk text kernels).
 *  cls  (ch_ppocr_mobile_v2.0_cls): [N, 3, 48, 192] crops of the lines,
 *       (x / 255 - 0.5) / 0.5; out: [N, 2] softmax over {0, 180} degrees.
 *  rec  (ch_PP-OCRv4_rec): [N, 3, 48, W] crops, same scaling; out:
 *       [N, W / 8, 6625] softmax over {CTC blank, ppocr_keys_v1.txt, ' '}.
 */
#ifndef VNPU_PPOCR_H
#define VNPU_PPOCR_H

#include "mimage.h"
#include "npy.h"

#define PPOCR_MAX_BOXES 256
#define PPOCR_LINE_H 48
#define PPOCR_CLS_W 192
/* PaddleOCR's default recognition width; wider lines widen the batch. */
#define PPOCR_REC_MIN_W 320
#define PPOCR_REC_MAX_W 2048
/* PaddleOCR's defaults. */
#define PPOCR_DET_THRESH 0.3f
#define PPOCR_DET_BOX_THRESH 0.6f
#define PPOCR_DET_UNCLIP 1.5f
#define PPOCR_CLS_THRESH 0.9f
#define PPOCR_MAX_TEXT 512

/* A text line: corners clockwise from the top left, source image pixels. */
struct ppocr_box {
	float pt[4][2];
	float score;
	int rotated;		/* cls said 180 degrees: the crop is turned */
	float cls_score;
	char text[PPOCR_MAX_TEXT];
	float text_score;
};

struct ppocr_keys {
	char **key;		/* key[i] is class i + 1 (class 0 is the CTC blank) */
	int n;
	char *buf;
};

/* The det input: the image scaled so its longer side is @long_side_to
 * (0: kept), then each side rounded to a multiple of 32. */
int ppocr_det_prepare(const struct mimage *img, int long_side_to, struct npy_array *input);

/* DB postprocess of the det output for an image of @img_w x @img_h: boxes
 * sorted in reading order.  Returns their number or a negative errno. */
int ppocr_det_boxes(const struct npy_array *prob, int img_w, int img_h,
		    struct ppocr_box *boxes, int max);

/* The cls input for the boxes: [n, 3, 48, 192]. */
int ppocr_cls_prepare(const struct mimage *img, const struct ppocr_box *boxes, int n,
		      struct npy_array *input);
/* Record the cls decisions from its output [n, 2]. */
int ppocr_cls_apply(const struct npy_array *out, struct ppocr_box *boxes, int n);

/* The rec input for the boxes, turned as cls decided: [n, 3, 48, W]. */
int ppocr_rec_prepare(const struct mimage *img, const struct ppocr_box *boxes, int n,
		      struct npy_array *input);
/* CTC greedy decoding of the rec output into each box's text (UTF-8). */
int ppocr_rec_decode(const struct npy_array *out, const struct ppocr_keys *keys,
		     struct ppocr_box *boxes, int n);

int ppocr_keys_load(const char *path, struct ppocr_keys *keys);
void ppocr_keys_free(struct ppocr_keys *keys);

void ppocr_annotate(struct mimage *img, const struct ppocr_box *boxes, int n);

#endif /* VNPU_PPOCR_H */
