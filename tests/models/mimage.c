// SPDX-License-Identifier: MIT
/*
 * libpng's simplified API does the format conversions (grey, palette,
 * 16-bit and alpha all become 8-bit RGB) without setjmp error handling.
 */
#include "mimage.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mimage_alloc(struct mimage *img, int w, int h)
{
	memset(img, 0, sizeof(*img));
	if (w <= 0 || h <= 0)
		return -EINVAL;
	if (w > MIMAGE_MAX_SIDE || h > MIMAGE_MAX_SIDE)
		return -EFBIG;
	img->rgb = calloc((size_t)w * (size_t)h, 3);
	if (!img->rgb)
		return -ENOMEM;
	img->w = w;
	img->h = h;
	return 0;
}

int mimage_copy(struct mimage *dst, const struct mimage *src)
{
	int ret = mimage_alloc(dst, src->w, src->h);

	if (!ret)
		memcpy(dst->rgb, src->rgb, (size_t)src->w * (size_t)src->h * 3);
	return ret;
}

void mimage_free(struct mimage *img)
{
	if (!img)
		return;
	free(img->rgb);
	memset(img, 0, sizeof(*img));
}

int mimage_load_png(const char *path, struct mimage *img)
{
	png_image pi;
	FILE *f;
	int ret;

	memset(img, 0, sizeof(*img));
	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	/* Opened here so a missing file says so rather than "bad PNG". */
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (!png_image_begin_read_from_stdio(&pi, f)) {
		ret = -EINVAL;
		goto out;
	}
	if (pi.width > MIMAGE_MAX_SIDE || pi.height > MIMAGE_MAX_SIDE) {
		png_image_free(&pi);
		ret = -EFBIG;
		goto out;
	}
	ret = mimage_alloc(img, (int)pi.width, (int)pi.height);
	if (ret) {
		png_image_free(&pi);
		goto out;
	}
	pi.format = PNG_FORMAT_RGB;
	if (!png_image_finish_read(&pi, NULL, img->rgb, 0, NULL)) {
		png_image_free(&pi);
		mimage_free(img);
		ret = -EINVAL;
	}
out:
	fclose(f);
	return ret;
}

int mimage_save_png(const char *path, const struct mimage *img)
{
	png_image pi;

	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	pi.width = (png_uint_32)img->w;
	pi.height = (png_uint_32)img->h;
	pi.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_file(&pi, path, 0, img->rgb, 0, NULL))
		return -EIO;
	return 0;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void mimage_sample(const struct mimage *img, float x, float y, float out[3])
{
	float fx, fy;
	int x0, y0, x1, y1;
	const uint8_t *a, *b, *c, *d;

	/* Clamp first: far-away coordinates (from a wild box) must not
	 * overflow the int conversion. */
	x = fminf(fmaxf(x, 0.0f), (float)(img->w - 1));
	y = fminf(fmaxf(y, 0.0f), (float)(img->h - 1));
	x0 = (int)x;
	y0 = (int)y;
	fx = x - (float)x0;
	fy = y - (float)y0;
	x1 = clampi(x0 + 1, 0, img->w - 1);
	y1 = clampi(y0 + 1, 0, img->h - 1);
	a = img->rgb + ((size_t)y0 * (size_t)img->w + (size_t)x0) * 3;
	b = img->rgb + ((size_t)y0 * (size_t)img->w + (size_t)x1) * 3;
	c = img->rgb + ((size_t)y1 * (size_t)img->w + (size_t)x0) * 3;
	d = img->rgb + ((size_t)y1 * (size_t)img->w + (size_t)x1) * 3;
	for (int k = 0; k < 3; k++) {
		float top = (float)a[k] + ((float)b[k] - (float)a[k]) * fx;
		float bot = (float)c[k] + ((float)d[k] - (float)c[k]) * fx;

		out[k] = top + (bot - top) * fy;
	}
}

/*
 * Average n x n samples spread evenly over the source footprint of each
 * output pixel: (ox, oy) + (du, dv) * t for t in [0, 1).
 */
static void sample_footprint(const struct mimage *img, float ox, float oy, float dux, float duy,
			     float dvx, float dvy, int n, float out[3])
{
	float acc[3] = { 0, 0, 0 }, px[3];

	for (int j = 0; j < n; j++) {
		float tv = ((float)j + 0.5f) / (float)n;

		for (int i = 0; i < n; i++) {
			float tu = ((float)i + 0.5f) / (float)n;

			mimage_sample(img, ox + dux * tu + dvx * tv - 0.5f,
				      oy + duy * tu + dvy * tv - 0.5f, px);
			for (int k = 0; k < 3; k++)
				acc[k] += px[k];
		}
	}
	for (int k = 0; k < 3; k++)
		out[k] = acc[k] / (float)(n * n);
}

static int footprint_samples(float len)
{
	int n = (int)ceilf(len);

	return n < 1 ? 1 : n > 16 ? 16 : n;
}

void mimage_resize(const struct mimage *img, int w, int h, float *out)
{
	float sx = (float)img->w / (float)w, sy = (float)img->h / (float)h;
	int n = footprint_samples(fmaxf(sx, sy));

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			sample_footprint(img, (float)x * sx, (float)y * sy, sx, 0, 0, sy, n,
					 out + ((size_t)y * (size_t)w + (size_t)x) * 3);
}

void mimage_warp(const struct mimage *img, const float p0[2], const float p1[2],
		 const float p3[2], int w, int h, float *out)
{
	/* OpenCV's warpPerspective() convention, which PaddleOCR crops with:
	 * output pixel (x, y) samples p0 + x * (p1 - p0) / w + y * (p3 - p0) / h. */
	float ux = (p1[0] - p0[0]) / (float)w, uy = (p1[1] - p0[1]) / (float)w;
	float vx = (p3[0] - p0[0]) / (float)h, vy = (p3[1] - p0[1]) / (float)h;

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			mimage_sample(img, p0[0] + ux * (float)x + vx * (float)y,
				      p0[1] + uy * (float)x + vy * (float)y,
				      out + ((size_t)y * (size_t)w + (size_t)x) * 3);
}

/* One axis of OpenCV's INTER_LINEAR: the source position of a destination
 * pixel centre, split into a clamped index pair and a weight. */
static void linear_tap(int d, int sn, int dn, int *i0, int *i1, float *f)
{
	float s = ((float)d + 0.5f) * (float)sn / (float)dn - 0.5f;
	int i;

	if (s < 0)
		s = 0;
	i = (int)s;
	if (i > sn - 1)
		i = sn - 1;
	*i0 = i;
	*i1 = i + 1 < sn ? i + 1 : sn - 1;
	*f = s - (float)i;
	if (*f > 1)
		*f = 1;
}

void mimage_resize_f32(const float *src, int sw, int sh, float *dst, int dw, int dh)
{
	for (int y = 0; y < dh; y++) {
		int y0, y1;
		float fy;

		linear_tap(y, sh, dh, &y0, &y1, &fy);
		for (int x = 0; x < dw; x++) {
			const float *a, *b, *c, *d;
			int x0, x1;
			float fx;

			linear_tap(x, sw, dw, &x0, &x1, &fx);
			a = src + ((size_t)y0 * (size_t)sw + (size_t)x0) * 3;
			b = src + ((size_t)y0 * (size_t)sw + (size_t)x1) * 3;
			c = src + ((size_t)y1 * (size_t)sw + (size_t)x0) * 3;
			d = src + ((size_t)y1 * (size_t)sw + (size_t)x1) * 3;
			for (int k = 0; k < 3; k++) {
				float top = a[k] + (b[k] - a[k]) * fx, bot = c[k] + (d[k] - c[k]) * fx;

				dst[((size_t)y * (size_t)dw + (size_t)x) * 3 + (size_t)k] =
					top + (bot - top) * fy;
			}
		}
	}
}

static void put(struct mimage *img, int x, int y, const uint8_t color[3])
{
	if (x < 0 || y < 0 || x >= img->w || y >= img->h)
		return;
	memcpy(img->rgb + ((size_t)y * (size_t)img->w + (size_t)x) * 3, color, 3);
}

void mimage_line(struct mimage *img, float x0, float y0, float x1, float y1,
		 const uint8_t color[3])
{
	const float lim = 4.0f * MIMAGE_MAX_SIDE;
	float len;
	int steps;

	if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
		return;
	/* A wild box from a broken model is drawn clipped, never overflows. */
	x0 = fminf(fmaxf(x0, -lim), lim);
	y0 = fminf(fmaxf(y0, -lim), lim);
	x1 = fminf(fmaxf(x1, -lim), lim);
	y1 = fminf(fmaxf(y1, -lim), lim);
	len = fmaxf(fabsf(x1 - x0), fabsf(y1 - y0));
	steps = (int)ceilf(len);
	for (int i = 0; i <= steps; i++) {
		float t = steps ? (float)i / (float)steps : 0.0f;
		int x = (int)lroundf(x0 + (x1 - x0) * t), y = (int)lroundf(y0 + (y1 - y0) * t);

		/* Two pixels wide, so the boxes stay visible on large images. */
		put(img, x, y, color);
		put(img, x + 1, y, color);
		put(img, x, y + 1, color);
	}
}

void mimage_dot(struct mimage *img, float x, float y, int radius, const uint8_t color[3])
{
	int cx, cy;

	if (!isfinite(x) || !isfinite(y) || fabsf(x) > 1e6f || fabsf(y) > 1e6f)
		return;
	cx = (int)lroundf(x);
	cy = (int)lroundf(y);
	for (int dy = -radius; dy <= radius; dy++)
		for (int dx = -radius; dx <= radius; dx++)
			if (dx * dx + dy * dy <= radius * radius)
				put(img, cx + dx, cy + dy, color);
}
