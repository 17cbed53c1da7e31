// SPDX-License-Identifier: MIT
#include "ppocr.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PaddleOCR feeds OpenCV's BGR images: channel 0 is blue. */
static const float det_mean[3] = { 0.485f, 0.456f, 0.406f };
static const float det_std[3] = { 0.229f, 0.224f, 0.225f };
/* PaddleOCR's DB minimum box side, in det map pixels. */
#define DET_MIN_SIDE 3.0f
#define DET_MAX_SIDE 8192

static void set_nchw(struct npy_array *a, int64_t n, int64_t c, int64_t h, int64_t w, float *data)
{
	a->type = NPY_F32;
	a->rank = 4;
	a->dims[0] = n;
	a->dims[1] = c;
	a->dims[2] = h;
	a->dims[3] = w;
	a->data = data;
	a->bytes = (size_t)(n * c * h * w) * sizeof(float);
}

/* HWC RGB 0..255 -> one CHW BGR image of a batch, (x / 255 - mean) / std,
 * into a plane of width @stride (the rest stays zero: PaddleOCR's padding). */
static void to_chw_bgr(const float *hwc, int w, int h, int stride, const float mean[3],
		       const float std[3], float *chw)
{
	size_t plane = (size_t)h * (size_t)stride;

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < 3; c++) {
				float v = hwc[((size_t)y * (size_t)w + (size_t)x) * 3 + (size_t)(2 - c)];

				chw[(size_t)c * plane + (size_t)y * (size_t)stride + (size_t)x] =
					(v / 255.0f - mean[c]) / std[c];
			}
}

static int round32(float v)
{
	int r = (int)lroundf(v / 32.0f) * 32;

	return r < 32 ? 32 : r;
}

int ppocr_det_prepare(const struct mimage *img, int long_side_to, struct npy_array *input)
{
	float ratio = 1.0f, *hwc, *chw;
	int long_side = img->w > img->h ? img->w : img->h, w, h;
	size_t n;

	memset(input, 0, sizeof(*input));
	if (long_side_to < 0 || long_side_to > DET_MAX_SIDE)
		return -EINVAL;
	if (long_side_to)
		ratio = (float)long_side_to / (float)long_side;
	w = round32((float)img->w * ratio);
	h = round32((float)img->h * ratio);
	if (w > DET_MAX_SIDE || h > DET_MAX_SIDE)
		return -EFBIG;
	n = (size_t)w * (size_t)h * 3;
	hwc = malloc(n * sizeof(float));
	chw = calloc(n, sizeof(float));
	if (!hwc || !chw) {
		free(hwc);
		free(chw);
		return -ENOMEM;
	}
	mimage_resize(img, w, h, hwc);
	to_chw_bgr(hwc, w, h, w, det_mean, det_std, chw);
	free(hwc);
	set_nchw(input, 1, 3, h, w, chw);
	return 0;
}

/* ---- DB postprocess --------------------------------------------------------- */

struct pt {
	float x, y;
};

static float cross(struct pt o, struct pt a, struct pt b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

static int pt_cmp(const void *pa, const void *pb)
{
	const struct pt *a = pa, *b = pb;

	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return (a->y > b->y) - (a->y < b->y);
}

/* Andrew's monotone chain; @p is sorted in place, the hull written to @h
 * (room for n + 1), counter-clockwise.  Returns its size. */
static int convex_hull(struct pt *p, int n, struct pt *h)
{
	int k = 0;

	qsort(p, (size_t)n, sizeof(*p), pt_cmp);
	if (n < 3) {
		memcpy(h, p, (size_t)n * sizeof(*p));
		return n;
	}
	for (int i = 0; i < n; i++) {
		while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0)
			k--;
		h[k++] = p[i];
	}
	for (int i = n - 2, t = k + 1; i >= 0; i--) {
		while (k >= t && cross(h[k - 2], h[k - 1], p[i]) <= 0)
			k--;
		h[k++] = p[i];
	}
	return k - 1;
}

struct rect {
	struct pt c;		/* centre */
	struct pt u, v;		/* unit axes */
	float hu, hv;		/* half extents along them */
};

/* The minimum-area enclosing rectangle: one side lies on a hull edge. */
static int min_area_rect(const struct pt *h, int n, struct rect *r)
{
	float best = INFINITY;

	memset(r, 0, sizeof(*r));
	if (n < 3)
		return -1;
	for (int i = 0; i < n; i++) {
		struct pt a = h[i], b = h[(i + 1) % n], u, v;
		float len = hypotf(b.x - a.x, b.y - a.y), lo_u = INFINITY, hi_u = -INFINITY;
		float lo_v = INFINITY, hi_v = -INFINITY, area;

		if (len <= 0)
			continue;
		u.x = (b.x - a.x) / len;
		u.y = (b.y - a.y) / len;
		v.x = -u.y;
		v.y = u.x;
		for (int j = 0; j < n; j++) {
			float pu = (h[j].x - a.x) * u.x + (h[j].y - a.y) * u.y;
			float pv = (h[j].x - a.x) * v.x + (h[j].y - a.y) * v.y;

			lo_u = fminf(lo_u, pu);
			hi_u = fmaxf(hi_u, pu);
			lo_v = fminf(lo_v, pv);
			hi_v = fmaxf(hi_v, pv);
		}
		area = (hi_u - lo_u) * (hi_v - lo_v);
		if (area < best) {
			float mu = (lo_u + hi_u) / 2, mv = (lo_v + hi_v) / 2;

			best = area;
			r->u = u;
			r->v = v;
			r->hu = (hi_u - lo_u) / 2;
			r->hv = (hi_v - lo_v) / 2;
			r->c.x = a.x + u.x * mu + v.x * mv;
			r->c.y = a.y + u.y * mu + v.y * mv;
		}
	}
	return isfinite(best) ? 0 : -1;
}

/* Corners in PaddleOCR's order (get_mini_boxes): of the two leftmost, the
 * upper is the top left and the lower the bottom left; likewise right. */
static void rect_corners(const struct rect *r, struct pt out[4])
{
	struct pt p[4];

	for (int i = 0; i < 4; i++) {
		float su = (i == 0 || i == 3) ? -1.0f : 1.0f, sv = i < 2 ? -1.0f : 1.0f;

		p[i].x = r->c.x + su * r->hu * r->u.x + sv * r->hv * r->v.x;
		p[i].y = r->c.y + su * r->hu * r->u.y + sv * r->hv * r->v.y;
	}
	qsort(p, 4, sizeof(p[0]), pt_cmp);
	out[0] = p[0].y <= p[1].y ? p[0] : p[1];
	out[3] = p[0].y <= p[1].y ? p[1] : p[0];
	out[1] = p[2].y <= p[3].y ? p[2] : p[3];
	out[2] = p[2].y <= p[3].y ? p[3] : p[2];
}

static int box_cmp(const void *pa, const void *pb)
{
	const struct ppocr_box *a = pa, *b = pb;

	if (a->pt[0][1] != b->pt[0][1])
		return a->pt[0][1] < b->pt[0][1] ? -1 : 1;
	return (a->pt[0][0] > b->pt[0][0]) - (a->pt[0][0] < b->pt[0][0]);
}

/* PaddleOCR's reading order: top to bottom, and left to right for boxes
 * whose tops are within 10 pixels (one line split in several boxes). */
static void sort_reading_order(struct ppocr_box *boxes, int n)
{
	qsort(boxes, (size_t)n, sizeof(*boxes), box_cmp);
	for (int i = 0; i + 1 < n; i++)
		for (int j = i; j >= 0; j--) {
			if (fabsf(boxes[j + 1].pt[0][1] - boxes[j].pt[0][1]) < 10 &&
			    boxes[j + 1].pt[0][0] < boxes[j].pt[0][0]) {
				struct ppocr_box t = boxes[j];

				boxes[j] = boxes[j + 1];
				boxes[j + 1] = t;
			} else {
				break;
			}
		}
}

int ppocr_det_boxes(const struct npy_array *prob, int img_w, int img_h,
		    struct ppocr_box *boxes, int max)
{
	const float *p;
	int w, h, nbox = 0, ret = 0;
	uint8_t *seen = NULL;
	int32_t *queue = NULL;
	struct pt *pts = NULL, *hull = NULL;
	int32_t *row_min = NULL, *row_max = NULL;

	if (!prob || prob->type != NPY_F32 || prob->rank != 4 || prob->dims[0] != 1 ||
	    prob->dims[1] != 1 || prob->dims[2] < 1 || prob->dims[3] < 1 ||
	    prob->dims[2] > DET_MAX_SIDE || prob->dims[3] > DET_MAX_SIDE || !prob->data ||
	    img_w <= 0 || img_h <= 0 || max < 0)
		return -EINVAL;
	h = (int)prob->dims[2];
	w = (int)prob->dims[3];
	if (prob->bytes != (size_t)w * (size_t)h * sizeof(float))
		return -EINVAL;
	p = prob->data;
	seen = calloc((size_t)w * (size_t)h, 1);
	queue = malloc((size_t)w * (size_t)h * sizeof(*queue));
	row_min = malloc((size_t)h * sizeof(*row_min));
	row_max = malloc((size_t)h * sizeof(*row_max));
	pts = malloc((size_t)h * 2 * sizeof(*pts));
	hull = malloc(((size_t)h * 2 + 1) * sizeof(*hull));
	if (!seen || !queue || !row_min || !row_max || !pts || !hull) {
		ret = -ENOMEM;
		goto out;
	}

	for (int start = 0; start < w * h; start++) {
		int qh = 0, qt = 0, ymin = h, ymax = -1, npts = 0, nh;
		double sum = 0;
		long edges = 0;
		struct rect r;
		float sx, sy, d, score;
		struct pt c[4];

		if (seen[start] || !(p[start] > PPOCR_DET_THRESH))
			continue;
		/* One 8-connected region of the thresholded map, the way
		 * findContours() delimits the regions PaddleOCR boxes. */
		seen[start] = 1;
		queue[qt++] = start;
		while (qh < qt) {
			int i = queue[qh++], x = i % w, y = i / w;

			sum += p[i];
			/* The region's outline length: its pixel sides that face
			 * the background (4-neighbours above the threshold are
			 * necessarily in the same 8-connected region). */
			edges += x == 0 || !(p[i - 1] > PPOCR_DET_THRESH);
			edges += x == w - 1 || !(p[i + 1] > PPOCR_DET_THRESH);
			edges += y == 0 || !(p[i - w] > PPOCR_DET_THRESH);
			edges += y == h - 1 || !(p[i + w] > PPOCR_DET_THRESH);

			if (ymax < 0) {
				ymin = ymax = y;
				row_min[y] = INT32_MAX;
				row_max[y] = -1;
			}
			while (y < ymin) {
				ymin--;
				row_min[ymin] = INT32_MAX;
				row_max[ymin] = -1;
			}
			while (y > ymax) {
				ymax++;
				row_min[ymax] = INT32_MAX;
				row_max[ymax] = -1;
			}
			if (x < row_min[y])
				row_min[y] = x;
			if (x > row_max[y])
				row_max[y] = x;
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					int nx = x + dx, ny = y + dy, j;

					if (nx < 0 || ny < 0 || nx >= w || ny >= h)
						continue;
					j = ny * w + nx;
					if (seen[j] || !(p[j] > PPOCR_DET_THRESH))
						continue;
					seen[j] = 1;
					queue[qt++] = j;
				}
		}
		if (nbox >= max)
			continue;
		/* The extreme pixels of each row span the region's hull. */
		for (int y = ymin; y <= ymax; y++) {
			if (row_max[y] < 0)
				continue;
			pts[npts++] = (struct pt){ (float)row_min[y], (float)y };
			if (row_max[y] != row_min[y])
				pts[npts++] = (struct pt){ (float)row_max[y], (float)y };
		}
		nh = convex_hull(pts, npts, hull);
		if (min_area_rect(hull, nh, &r))
			continue;
		if (2 * fminf(r.hu, r.hv) < DET_MIN_SIDE)
			continue;
		/* PaddleOCR's "slow" score: the mean over the region itself, not
		 * over its rectangle, which a curved or slanted line on a
		 * photographed page fills only in part. */
		score = (float)(sum / qt);
		if (score < PPOCR_DET_BOX_THRESH)
			continue;
		/* Unclip: DB predicts the text shrunk by area * (1 - 0.4^2) /
		 * perimeter; grow it back by area * ratio / perimeter.  Area and
		 * perimeter are the region's own, as PaddleOCR's polygon mode
		 * takes them: the rectangle's would count the bow of a line on
		 * a curved page as text height, and the grown box would then
		 * reach into the neighbouring lines.  Offsetting the rectangle
		 * keeps it a rectangle (pyclipper's rounded corners do not
		 * change its min-area rectangle). */
		d = (float)qt * PPOCR_DET_UNCLIP / (float)edges;
		r.hu += d;
		r.hv += d;
		if (2 * fminf(r.hu, r.hv) < DET_MIN_SIDE + 2)
			continue;
		rect_corners(&r, c);
		sx = (float)img_w / (float)w;
		sy = (float)img_h / (float)h;
		for (int k = 0; k < 4; k++) {
			boxes[nbox].pt[k][0] = fminf(fmaxf(c[k].x * sx, 0), (float)img_w);
			boxes[nbox].pt[k][1] = fminf(fmaxf(c[k].y * sy, 0), (float)img_h);
		}
		/* PaddleOCR drops boxes that clipping left at most 3 pixels wide. */
		if (hypotf(boxes[nbox].pt[0][0] - boxes[nbox].pt[1][0],
			   boxes[nbox].pt[0][1] - boxes[nbox].pt[1][1]) <= 3 ||
		    hypotf(boxes[nbox].pt[0][0] - boxes[nbox].pt[3][0],
			   boxes[nbox].pt[0][1] - boxes[nbox].pt[3][1]) <= 3)
			continue;
		boxes[nbox].score = score;
		boxes[nbox].rotated = 0;
		boxes[nbox].cls_score = 0;
		boxes[nbox].text[0] = '\0';
		boxes[nbox].text_score = 0;
		nbox++;
	}
	sort_reading_order(boxes, nbox);
	ret = nbox;
out:
	free(seen);
	free(queue);
	free(row_min);
	free(row_max);
	free(pts);
	free(hull);
	return ret;
}

/* ---- line crops ------------------------------------------------------------- */

/*
 * The crop of a box as PaddleOCR's get_rotate_crop_image() takes it: as
 * wide as its longer horizontal edge, as tall as its longer vertical one,
 * turned a quarter counter-clockwise when it stands more than 1.5 times
 * taller than wide (vertical text), and half a turn when cls said so.
 * Gives the source points of the crop's top left, top right and bottom
 * left corners and its size.
 */
static void line_geometry(const struct ppocr_box *b, float p0[2], float p1[2], float p3[2],
			  float *cw, float *ch)
{
	const float (*q)[2] = b->pt;
	float w = fmaxf(hypotf(q[0][0] - q[1][0], q[0][1] - q[1][1]),
			hypotf(q[3][0] - q[2][0], q[3][1] - q[2][1]));
	float h = fmaxf(hypotf(q[0][0] - q[3][0], q[0][1] - q[3][1]),
			hypotf(q[1][0] - q[2][0], q[1][1] - q[2][1]));
	int c0 = 0, c1 = 1, c3 = 3;

	w = fmaxf(floorf(w), 1);
	h = fmaxf(floorf(h), 1);
	if (h / w >= 1.5f) {
		float t = w;

		c0 = 1;
		c1 = 2;
		c3 = 0;
		w = h;
		h = t;
	}
	if (b->rotated) {
		/* The opposite corners of the same crop. */
		c0 = (c0 + 2) % 4;
		c1 = (c1 + 2) % 4;
		c3 = (c3 + 2) % 4;
	}
	memcpy(p0, q[c0], sizeof(float) * 2);
	memcpy(p1, q[c1], sizeof(float) * 2);
	memcpy(p3, q[c3], sizeof(float) * 2);
	*cw = w;
	*ch = h;
}

static const float line_mean[3] = { 0.5f, 0.5f, 0.5f };
static const float line_std[3] = { 0.5f, 0.5f, 0.5f };

/*
 * Each line cropped at the source resolution, then scaled to 48 pixels
 * high keeping its aspect, at most @width wide, left-aligned in a zeroed
 * [n, 3, 48, width] batch: PaddleOCR's two steps, since the classifier in
 * particular is sensitive to how the lines are resampled.
 */
static int lines_prepare(const struct mimage *img, const struct ppocr_box *boxes, int n,
			 int width, struct npy_array *input)
{
	size_t per = (size_t)3 * PPOCR_LINE_H * (size_t)width;
	float *batch, *crop = NULL, *line;

	batch = calloc((size_t)n * per, sizeof(float));
	line = malloc((size_t)PPOCR_LINE_H * (size_t)width * 3 * sizeof(float));
	if (!batch || !line)
		goto nomem;
	for (int i = 0; i < n; i++) {
		float p0[2], p1[2], p3[2], cw, ch;
		int rw;

		line_geometry(&boxes[i], p0, p1, p3, &cw, &ch);
		rw = (int)fminf(ceilf((float)PPOCR_LINE_H * cw / ch), (float)width);
		if (rw < 1)
			rw = 1;
		/* Box corners are clipped to the image: the crop is no larger. */
		crop = malloc((size_t)cw * (size_t)ch * 3 * sizeof(float));
		if (!crop)
			goto nomem;
		mimage_warp(img, p0, p1, p3, (int)cw, (int)ch, crop);
		mimage_resize_f32(crop, (int)cw, (int)ch, line, rw, PPOCR_LINE_H);
		free(crop);
		crop = NULL;
		to_chw_bgr(line, rw, PPOCR_LINE_H, width, line_mean, line_std, batch + (size_t)i * per);
	}
	free(line);
	set_nchw(input, n, 3, PPOCR_LINE_H, width, batch);
	return 0;
nomem:
	free(batch);
	free(line);
	return -ENOMEM;
}

int ppocr_cls_prepare(const struct mimage *img, const struct ppocr_box *boxes, int n,
		      struct npy_array *input)
{
	memset(input, 0, sizeof(*input));
	if (n <= 0 || n > PPOCR_MAX_BOXES)
		return -EINVAL;
	return lines_prepare(img, boxes, n, PPOCR_CLS_W, input);
}

int ppocr_cls_apply(const struct npy_array *out, struct ppocr_box *boxes, int n)
{
	const float *p;

	if (!out || out->type != NPY_F32 || out->rank != 2 || out->dims[0] != n ||
	    out->dims[1] != 2 || out->bytes != (size_t)n * 2 * sizeof(float))
		return -EINVAL;
	p = out->data;
	for (int i = 0; i < n; i++) {
		int label = p[2 * i + 1] > p[2 * i];

		boxes[i].cls_score = p[2 * i + label];
		/* Only a confident "180" turns the line (PaddleOCR's cls_thresh). */
		boxes[i].rotated = label == 1 && boxes[i].cls_score > PPOCR_CLS_THRESH;
	}
	return 0;
}

int ppocr_rec_prepare(const struct mimage *img, const struct ppocr_box *boxes, int n,
		      struct npy_array *input)
{
	float ratio = (float)PPOCR_REC_MIN_W / PPOCR_LINE_H;
	int width;

	memset(input, 0, sizeof(*input));
	if (n <= 0 || n > PPOCR_MAX_BOXES)
		return -EINVAL;
	/* One width for the batch: the widest line's, as PaddleOCR batches. */
	for (int i = 0; i < n; i++) {
		float p0[2], p1[2], p3[2], cw, ch;

		line_geometry(&boxes[i], p0, p1, p3, &cw, &ch);
		ratio = fmaxf(ratio, cw / ch);
	}
	width = (int)fminf((float)PPOCR_LINE_H * ratio, PPOCR_REC_MAX_W);
	return lines_prepare(img, boxes, n, width, input);
}

int ppocr_rec_decode(const struct npy_array *out, const struct ppocr_keys *keys,
		     struct ppocr_box *boxes, int n)
{
	int64_t steps, classes;
	const float *p;

	if (!out || !keys || out->type != NPY_F32 || out->rank != 3 || out->dims[0] != n)
		return -EINVAL;
	steps = out->dims[1];
	classes = out->dims[2];
	/* blank + the keys + the space PP-OCR adds at the end */
	if (classes != (int64_t)keys->n + 2 || steps < 1 || steps > 65536 ||
	    out->bytes != (size_t)n * (size_t)steps * (size_t)classes * sizeof(float))
		return -EINVAL;
	p = out->data;
	for (int i = 0; i < n; i++) {
		size_t len = 0;
		int64_t prev = -1;
		double conf = 0;
		int kept = 0;

		boxes[i].text[0] = '\0';
		for (int64_t t = 0; t < steps; t++) {
			const float *row = p + ((size_t)i * (size_t)steps + (size_t)t) * (size_t)classes;
			int64_t best = 0;
			const char *ch;
			size_t cl;

			for (int64_t c = 1; c < classes; c++)
				if (row[c] > row[best])
					best = c;
			/* CTC: a class repeated over steps is one character, the
			 * blank separates real repeats. */
			if (best == prev || best == 0) {
				prev = best;
				continue;
			}
			prev = best;
			ch = best <= keys->n ? keys->key[best - 1] : " ";
			cl = strlen(ch);
			if (len + cl >= sizeof(boxes[i].text))
				break;
			memcpy(boxes[i].text + len, ch, cl + 1);
			len += cl;
			conf += row[best];
			kept++;
		}
		boxes[i].text_score = kept ? (float)(conf / kept) : 0.0f;
	}
	return 0;
}

int ppocr_keys_load(const char *path, struct ppocr_keys *keys)
{
	FILE *f;
	long size;
	char *s;
	int n = 0;

	memset(keys, 0, sizeof(*keys));
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || size > (1 << 22) ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EINVAL;
	}
	keys->buf = malloc((size_t)size + 1);
	if (!keys->buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(keys->buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		ppocr_keys_free(keys);
		return -EIO;
	}
	fclose(f);
	keys->buf[size] = '\0';
	for (s = keys->buf; *s; s++)
		n += *s == '\n';
	if (size && keys->buf[size - 1] != '\n')
		n++;
	keys->key = calloc((size_t)n + 1, sizeof(char *));
	if (!keys->key) {
		ppocr_keys_free(keys);
		return -ENOMEM;
	}
	for (s = keys->buf; *s && keys->n < n;) {
		char *e = strchr(s, '\n');

		if (e)
			*e = '\0';
		if (e && e > s && e[-1] == '\r')
			e[-1] = '\0';
		keys->key[keys->n++] = s;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

void ppocr_keys_free(struct ppocr_keys *keys)
{
	free(keys->key);
	free(keys->buf);
	memset(keys, 0, sizeof(*keys));
}

void ppocr_annotate(struct mimage *img, const struct ppocr_box *boxes, int n)
{
	static const uint8_t upright[3] = { 0, 96, 255 }, turned[3] = { 255, 0, 160 };

	for (int i = 0; i < n; i++) {
		const float (*q)[2] = boxes[i].pt;

		for (int k = 0; k < 4; k++)
			mimage_line(img, q[k][0], q[k][1], q[(k + 1) % 4][0], q[(k + 1) % 4][1],
				    boxes[i].rotated ? turned : upright);
	}
}
