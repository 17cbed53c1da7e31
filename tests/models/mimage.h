/* SPDX-License-Identifier: MIT */
/*
 * The little image handling the model pipelines need: PNG in and out
 * (libpng), sampling for resizes and rotated crops, and drawing for the
 * annotated results.  Images are 8-bit RGB, rows top to bottom.
 */
#ifndef VNPU_MIMAGE_H
#define VNPU_MIMAGE_H

#include <stdint.h>

/* Larger than any test image, small enough that w * h * 3 cannot overflow
 * and a hostile PNG header cannot make us allocate gigabytes. */
#define MIMAGE_MAX_SIDE 8192

struct mimage {
	int w, h;
	uint8_t *rgb;	/* w * h * 3 bytes */
};

/* 0 or a negative errno (-EINVAL for a broken PNG, -EFBIG beyond MIMAGE_MAX_SIDE). */
int mimage_load_png(const char *path, struct mimage *img);
int mimage_save_png(const char *path, const struct mimage *img);
int mimage_alloc(struct mimage *img, int w, int h);
int mimage_copy(struct mimage *dst, const struct mimage *src);
void mimage_free(struct mimage *img);

/*
 * Colour at (x, y) in pixel coordinates (pixel centres at integers),
 * bilinearly interpolated, the border replicated outside the image.
 */
void mimage_sample(const struct mimage *img, float x, float y, float out[3]);

/*
 * Resize to @w x @h into @out (float, HWC, 0..255).  Downscaling averages
 * n x n bilinear samples per output pixel, n the scale factor rounded up,
 * so small text and faces survive the reduction.
 */
void mimage_resize(const struct mimage *img, int w, int h, float *out);

/*
 * Warp the parallelogram with corners @p0 (maps to the output's top left),
 * @p1 (top right) and @p3 (bottom left) into an @w x @h float HWC crop,
 * bilinearly sampled as OpenCV's warpPerspective() does.
 */
void mimage_warp(const struct mimage *img, const float p0[2], const float p1[2],
		 const float p3[2], int w, int h, float *out);

/* Resize float HWC (3 channels) images as OpenCV's INTER_LINEAR resize(). */
void mimage_resize_f32(const float *src, int sw, int sh, float *dst, int dw, int dh);

void mimage_line(struct mimage *img, float x0, float y0, float x1, float y1,
		 const uint8_t color[3]);
void mimage_dot(struct mimage *img, float x, float y, int radius, const uint8_t color[3]);

#endif /* VNPU_MIMAGE_H */
