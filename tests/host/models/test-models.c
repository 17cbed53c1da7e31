// SPDX-License-Identifier: MIT
/*
 * The real-model pipelines (tests/models) on onnxruntime's reference
 * outputs: the same pre- and postprocessing code that runs in the guest on
 * the device's outputs must find the astronaut's face and read page.png
 * here.  The expectations are a human's reading of the two images (the
 * face's box and landmarks, the page's printed lines), not the pipeline's
 * own output.  Also: the cached model inputs are exactly what the current
 * preprocessing produces (so stale references cannot pass), and hostile
 * tensors are refused without a crash (ASan/UBSan).
 *
 * The references come from `make models` under $VNPU_CACHE/models, a
 * prerequisite of `make check-host`.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blazeface.h"
#include "mimage.h"
#include "npy.h"
#include "ppocr.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char models[PATH_MAX];

/* ---- ground truth ----------------------------------------------------------- */

/* astronaut.png, read off the image: the face from forehead to chin and
 * cheek to cheek, and the centres of the eyes (image left first), the nose
 * tip and the mouth. */
static const float face_box[4] = { 183, 78, 268, 172 };
static const float face_kp[4][2] = { { 203, 102 }, { 248, 103 }, { 225, 127 }, { 225, 146 } };
/* Within a tenth of the face's width. */
#define KEYPOINT_TOLERANCE 10.0f
#define FACE_MIN_IOU 0.7f
#define FACE_MIN_SCORE 0.8f

/* page.png's printed lines, top to bottom (the text cut off at the bottom
 * edge is not a line a reader could read). */
static const char *const page_lines[] = {
	"Region-based segmentation",
	"Let us first determine markers of the coins and the",
	"background. These markers are pixels that we can label",
	"unambiguously as either object or background. Here,",
	"the markers are found at the two extreme parts of the",
	"histogram of grey values:",
	">>> markers = np.zeros_like(coins)",
};
#define PAGE_LINES (int)(sizeof(page_lines) / sizeof(page_lines[0]))
/*
 * The Chinese PP-OCRv4 recogniser reads English words but drops most word
 * spaces and may give CJK full-width punctuation: compare without spaces
 * and with full-width forms folded to ASCII; allow 1 error in 10 chars.
 */
#define MAX_CHAR_ERROR_RATE 0.1

/* ---- helpers ------------------------------------------------------------------ */

static int setup(void **state)
{
	const char *cache = getenv("VNPU_CACHE"), *home = getenv("HOME");

	(void)state;
	if (cache && *cache)
		snprintf(models, sizeof(models), "%s/models", cache);
	else
		snprintf(models, sizeof(models), "%s/.cache/vnpu/models", home ? home : "/");
	return 0;
}

static void model_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", models, rel);
}

/* Load a cached file; without it (no `make models`) the test fails rather
 * than pass having checked nothing. */
static void load_ref(const char *rel, struct npy_array *a)
{
	char path[PATH_MAX];
	int ret;

	model_path(path, sizeof(path), rel);
	if (access(path, R_OK))
		fail_msg("%s missing: run `make models`", path);
	ret = npy_load(path, a);
	if (ret)
		fail_msg("%s: %s", path, strerror(-ret));
}

static void load_image(const char *name, struct mimage *img)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/images/%s", models, name);
	if (access(path, R_OK))
		fail_msg("%s missing: run `make models`", path);
	ret = mimage_load_png(path, img);
	if (ret)
		fail_msg("%s: %s", path, strerror(-ret));
}

static void assert_same_array(const struct npy_array *a, const struct npy_array *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->rank, b->rank);
	assert_memory_equal(a->dims, b->dims, sizeof(a->dims[0]) * (size_t)a->rank);
	assert_int_equal(a->bytes, b->bytes);
	assert_memory_equal(a->data, b->data, a->bytes);
}

/* ---- BlazeFace ------------------------------------------------------------------ */

static void check_blazeface(const char *model, int size)
{
	static const char *const outs[4] = { "Identity_0", "Identity_1_0", "Identity_2_0",
					     "Identity_3_0" };
	struct npy_array o[4], in, prepared;
	const struct npy_array *op[4];
	struct blazeface_face faces[8], truth;
	struct mimage img;
	char rel[256];
	int n;

	load_image("astronaut.png", &img);
	snprintf(rel, sizeof(rel), "ref/%s/in/input_0.npy", model);
	load_ref(rel, &in);
	assert_int_equal(blazeface_prepare(&img, size, &prepared), 0);
	assert_same_array(&prepared, &in);
	npy_free(&prepared);
	npy_free(&in);

	for (int i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "ref/%s/out/%s.npy", model, outs[i]);
		load_ref(rel, &o[i]);
		op[i] = &o[i];
	}
	n = blazeface_decode(op, size, img.w, img.h, faces, 8);
	print_message("# %s: %d face(s), best score %.3f box %.1f,%.1f %.1f,%.1f\n", model, n,
		      n > 0 ? faces[0].score : 0.0f, n > 0 ? faces[0].x0 : 0.0f,
		      n > 0 ? faces[0].y0 : 0.0f, n > 0 ? faces[0].x1 : 0.0f,
		      n > 0 ? faces[0].y1 : 0.0f);
	/* One person in the picture. */
	assert_int_equal(n, 1);
	assert_true(faces[0].score >= FACE_MIN_SCORE);
	truth.x0 = face_box[0];
	truth.y0 = face_box[1];
	truth.x1 = face_box[2];
	truth.y1 = face_box[3];
	print_message("# %s: IoU with the labelled face %.3f\n", model, blazeface_iou(&faces[0], &truth));
	assert_true(blazeface_iou(&faces[0], &truth) >= FACE_MIN_IOU);
	for (int k = 0; k < 4; k++) {
		float d = hypotf(faces[0].kp[k][0] - face_kp[k][0], faces[0].kp[k][1] - face_kp[k][1]);

		if (!(d <= KEYPOINT_TOLERANCE))
			fail_msg("%s: keypoint %d at %.1f,%.1f is %.1f px from the label", model, k,
				 faces[0].kp[k][0], faces[0].kp[k][1], d);
	}
	/* The ears are outside the eyes, on their own sides. */
	assert_true(faces[0].kp[4][0] < faces[0].kp[0][0]);
	assert_true(faces[0].kp[5][0] > faces[0].kp[1][0]);

	for (int i = 0; i < 4; i++)
		npy_free(&o[i]);
	mimage_free(&img);
}

static void test_blazeface_front(void **state)
{
	(void)state;
	check_blazeface("blazeface-front", 128);
}

static void test_blazeface_back(void **state)
{
	(void)state;
	check_blazeface("blazeface-back", 256);
}

/* ---- PP-OCR ------------------------------------------------------------------ */

/* Decode UTF-8 into code points, dropping spaces and folding the full-width
 * ASCII forms (U+FF01..U+FF5E) and the ideographic space. */
static int normalise(const char *s, uint32_t *out, int max)
{
	int n = 0;

	while (*s && n < max) {
		const unsigned char *u = (const unsigned char *)s;
		uint32_t c;
		int len;

		if (u[0] < 0x80) {
			c = u[0];
			len = 1;
		} else if ((u[0] & 0xe0) == 0xc0 && u[1]) {
			c = (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
			len = 2;
		} else if ((u[0] & 0xf0) == 0xe0 && u[1] && u[2]) {
			c = (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
			len = 3;
		} else if ((u[0] & 0xf8) == 0xf0 && u[1] && u[2] && u[3]) {
			c = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
			    (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
			len = 4;
		} else {
			c = 0xfffd;
			len = 1;
		}
		s += len;
		if (c >= 0xff01 && c <= 0xff5e)
			c -= 0xfee0;
		if (c == ' ' || c == 0x3000)
			continue;
		out[n++] = c;
	}
	return n;
}

static int edit_distance(const uint32_t *a, int na, const uint32_t *b, int nb)
{
	int *row = calloc((size_t)nb + 1, sizeof(int)), d;

	assert_non_null(row);
	for (int j = 0; j <= nb; j++)
		row[j] = j;
	for (int i = 1; i <= na; i++) {
		int diag = row[0];

		row[0] = i;
		for (int j = 1; j <= nb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	d = row[nb];
	free(row);
	return d;
}

static void test_ppocr(void **state)
{
	static struct ppocr_box boxes[PPOCR_MAX_BOXES];
	struct npy_array det_in, det_out, cls_in, cls_out, rec_in, rec_out, prepared;
	struct ppocr_keys keys;
	struct mimage img;
	char path[PATH_MAX];
	int n, ret;

	(void)state;
	load_image("page.png", &img);
	load_ref("ref/ppocr-det/in/x.npy", &det_in);
	load_ref("ref/ppocr-det/out/sigmoid_0.tmp_0.npy", &det_out);
	load_ref("ref/ppocr-cls/in/x.npy", &cls_in);
	load_ref("ref/ppocr-cls/out/softmax_0.tmp_0.npy", &cls_out);
	load_ref("ref/ppocr-rec/in/x.npy", &rec_in);
	load_ref("ref/ppocr-rec/out/softmax_11.tmp_0.npy", &rec_out);
	model_path(path, sizeof(path), "ppocr/ppocr_keys_v1.txt");
	ret = ppocr_keys_load(path, &keys);
	if (ret)
		fail_msg("%s: %s", path, strerror(-ret));
	/* Class 0 is CTC's blank, the last one the space PP-OCR appends. */
	assert_int_equal(rec_out.dims[2], keys.n + 2);

	/* The det input keeps the page's scale, each side rounded to 32. */
	assert_int_equal(ppocr_det_prepare(&img, 0, &prepared), 0);
	assert_int_equal(prepared.dims[2] % 32, 0);
	assert_int_equal(prepared.dims[3] % 32, 0);
	assert_same_array(&prepared, &det_in);
	npy_free(&prepared);

	/* det: one box per printed line, in reading order */
	n = ppocr_det_boxes(&det_out, img.w, img.h, boxes, PPOCR_MAX_BOXES);
	print_message("# ppocr-det: %d boxes\n", n);
	assert_int_equal(n, PAGE_LINES);
	for (int i = 1; i < n; i++)
		assert_true(boxes[i].pt[0][1] > boxes[i - 1].pt[0][1]);

	/* cls: every line upright */
	assert_int_equal(ppocr_cls_prepare(&img, boxes, n, &prepared), 0);
	assert_same_array(&prepared, &cls_in);
	npy_free(&prepared);
	assert_int_equal(ppocr_cls_apply(&cls_out, boxes, n), 0);
	for (int i = 0; i < n; i++)
		if (boxes[i].rotated)
			fail_msg("line %d classified as turned (score %.3f)", i, boxes[i].cls_score);

	/* rec: the page's text */
	assert_int_equal(ppocr_rec_prepare(&img, boxes, n, &prepared), 0);
	assert_same_array(&prepared, &rec_in);
	npy_free(&prepared);
	assert_int_equal(ppocr_rec_decode(&rec_out, &keys, boxes, n), 0);
	for (int i = 0; i < n; i++) {
		uint32_t got[PPOCR_MAX_TEXT], want[PPOCR_MAX_TEXT];
		int ng = normalise(boxes[i].text, got, PPOCR_MAX_TEXT);
		int nw = normalise(page_lines[i], want, PPOCR_MAX_TEXT);
		int d = edit_distance(got, ng, want, nw);

		print_message("# line %d: \"%s\" (%d edits)\n", i, boxes[i].text, d);
		if (d > MAX_CHAR_ERROR_RATE * nw)
			fail_msg("line %d: read \"%s\", printed \"%s\"", i, boxes[i].text, page_lines[i]);
	}

	ppocr_keys_free(&keys);
	npy_free(&det_in);
	npy_free(&det_out);
	npy_free(&cls_in);
	npy_free(&cls_out);
	npy_free(&rec_in);
	npy_free(&rec_out);
	mimage_free(&img);
}

/* ---- hostile tensors --------------------------------------------------------- */

static void f32_array(struct npy_array *a, int rank, const int64_t *dims)
{
	size_t n = 1;

	memset(a, 0, sizeof(*a));
	a->type = NPY_F32;
	a->rank = rank;
	for (int i = 0; i < rank; i++) {
		a->dims[i] = dims[i];
		n *= (size_t)dims[i];
	}
	a->bytes = n * sizeof(float);
	a->data = calloc(n ? n : 1, sizeof(float));
	assert_non_null(a->data);
}

static void test_blazeface_rejects(void **state)
{
	static const int64_t s16[3] = { 1, 512, 1 }, s8[3] = { 1, 384, 1 };
	static const int64_t b16[3] = { 1, 512, 16 }, b8[3] = { 1, 384, 16 };
	struct npy_array o[4];
	const struct npy_array *op[4] = { &o[0], &o[1], &o[2], &o[3] };
	struct blazeface_face faces[4];
	unsigned int seed = 7;
	float *p;

	(void)state;
	f32_array(&o[0], 3, s16);
	f32_array(&o[1], 3, s8);
	f32_array(&o[2], 3, b16);
	f32_array(&o[3], 3, b8);
	/* swapped outputs, wrong type, bad sizes */
	op[0] = &o[1];
	assert_int_equal(blazeface_decode(op, 128, 512, 512, faces, 4), -EINVAL);
	op[0] = &o[0];
	o[2].type = NPY_I32;
	assert_int_equal(blazeface_decode(op, 128, 512, 512, faces, 4), -EINVAL);
	o[2].type = NPY_F32;
	assert_int_equal(blazeface_decode(op, 0, 512, 512, faces, 4), -EINVAL);
	assert_int_equal(blazeface_decode(op, 128, 0, 512, faces, 4), -EINVAL);
	/* all logits 0: score 0.5 everywhere, every anchor a candidate */
	assert_true(blazeface_decode(op, 128, 512, 512, faces, 4) >= 1);
	/* NaN, infinities and huge regressors must not crash or hang */
	p = o[0].data;
	p[0] = NAN;
	p[1] = INFINITY;
	p = o[2].data;
	for (int i = 0; i < 512 * 16; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = i % 7 == 0 ? NAN : (float)(int)(seed >> 8) * 1e30f;
	}
	assert_true(blazeface_decode(op, 128, 512, 512, faces, 4) >= 0);
	assert_int_equal(blazeface_decode(op, 128, 512, 512, faces, 0), 0);
	{
		struct mimage img;

		assert_int_equal(mimage_alloc(&img, 64, 64), 0);
		blazeface_annotate(&img, faces, blazeface_decode(op, 128, 512, 512, faces, 4));
		mimage_free(&img);
	}
	for (int i = 0; i < 4; i++)
		npy_free(&o[i]);
}

static void test_ppocr_rejects(void **state)
{
	static const int64_t map[4] = { 1, 1, 64, 96 }, bad[4] = { 1, 2, 64, 96 };
	static struct ppocr_box boxes[PPOCR_MAX_BOXES];
	struct npy_array a, rec;
	struct ppocr_keys keys = { 0 };
	unsigned int seed = 99;
	struct mimage img;
	float *p;
	int n;

	(void)state;
	f32_array(&a, 4, bad);
	assert_int_equal(ppocr_det_boxes(&a, 100, 100, boxes, PPOCR_MAX_BOXES), -EINVAL);
	npy_free(&a);
	f32_array(&a, 4, map);
	a.bytes -= 4;
	assert_int_equal(ppocr_det_boxes(&a, 100, 100, boxes, PPOCR_MAX_BOXES), -EINVAL);
	a.bytes += 4;
	/* random noise, NaNs, a map full of text: bounded output, no crash */
	for (int round = 0; round < 20; round++) {
		p = a.data;
		for (int i = 0; i < 64 * 96; i++) {
			seed = seed * 1103515245u + 12345u;
			p[i] = round == 0 ? 1.0f : (seed >> 16) % 13 == 0 ? NAN : (float)((seed >> 8) & 0xff) / 255.0f;
		}
		n = ppocr_det_boxes(&a, 1000, 30, boxes, 8);
		assert_true(n >= 0 && n <= 8);
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 4; k++) {
				assert_true(boxes[i].pt[k][0] >= 0 && boxes[i].pt[k][0] <= 1000);
				assert_true(boxes[i].pt[k][1] >= 0 && boxes[i].pt[k][1] <= 30);
			}
		if (round == 0)
			assert_int_equal(n, 1);	/* the whole map is one region */
		if (n > 0) {
			struct npy_array in;

			assert_int_equal(mimage_alloc(&img, 1000, 30), 0);
			assert_int_equal(ppocr_cls_prepare(&img, boxes, n, &in), 0);
			npy_free(&in);
			assert_int_equal(ppocr_rec_prepare(&img, boxes, n, &in), 0);
			assert_true(in.dims[3] >= PPOCR_REC_MIN_W && in.dims[3] <= PPOCR_REC_MAX_W);
			npy_free(&in);
			ppocr_annotate(&img, boxes, n);
			mimage_free(&img);
		}
	}
	npy_free(&a);

	/* cls and rec outputs of the wrong shape */
	{
		static const int64_t cls_bad[2] = { 3, 3 }, rec_shape[3] = { 2, 10, 5 };

		f32_array(&a, 2, cls_bad);
		assert_int_equal(ppocr_cls_apply(&a, boxes, 3), -EINVAL);
		npy_free(&a);
		f32_array(&rec, 3, rec_shape);
		keys.n = 4;	/* 4 keys + blank + space = 6 classes, not 5 */
		assert_int_equal(ppocr_rec_decode(&rec, &keys, boxes, 2), -EINVAL);
		npy_free(&rec);
	}
	/* no file, not a PNG, a PNG header claiming 100000 x 100000 pixels */
	assert_int_equal(ppocr_keys_load("/nonexistent/keys.txt", &keys), -ENOENT);
	assert_int_equal(mimage_load_png("/nonexistent/a.png", &img), -ENOENT);
	{
		static const unsigned char huge[] = {
			0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
			0, 0, 0, 13, 'I', 'H', 'D', 'R',
			0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0, 8, 2, 0, 0, 0,
			0x27, 0x30, 0x9c, 0x9f,	/* CRC of the IHDR chunk */
			0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x35, 0xaf, 0x06, 0x1e,
		};
		char tmpl[] = "/tmp/vnpu-png-XXXXXX";
		int fd = mkstemp(tmpl);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not a png", 9), 9);
		close(fd);
		assert_int_equal(mimage_load_png(tmpl, &img), -EINVAL);
		fd = open(tmpl, O_WRONLY | O_TRUNC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, huge, sizeof(huge)), (ssize_t)sizeof(huge));
		close(fd);
		/* refused from the header, before any allocation */
		assert_int_equal(mimage_load_png(tmpl, &img), -EFBIG);
		assert_null(img.rgb);
		unlink(tmpl);
	}
}

static void test_ctc_decode(void **state)
{
	/* Steps a a _ a b b space (_ the blank): the repeats merge, the blank
	 * keeps the second "a" apart. */
	static const int seq[7] = { 1, 1, 0, 1, 2, 2, 4 };
	static const int64_t shape[3] = { 1, 7, 5 };
	static struct ppocr_box box;
	char keybuf[] = "a\nb\nc\n";
	char *keyv[3] = { keybuf, keybuf + 2, keybuf + 4 };
	struct ppocr_keys keys = { .key = keyv, .n = 3 };
	struct npy_array out;
	float *p;

	(void)state;
	keybuf[1] = keybuf[3] = keybuf[5] = '\0';
	f32_array(&out, 3, shape);
	p = out.data;
	for (int t = 0; t < 7; t++)
		p[t * 5 + seq[t]] = 0.9f;
	assert_int_equal(ppocr_rec_decode(&out, &keys, &box, 1), 0);
	assert_string_equal(box.text, "aab ");
	assert_true(fabsf(box.text_score - 0.9f) < 1e-6f);
	npy_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blazeface_front),
		cmocka_unit_test(test_blazeface_back),
		cmocka_unit_test(test_ppocr),
		cmocka_unit_test(test_blazeface_rejects),
		cmocka_unit_test(test_ppocr_rejects),
		cmocka_unit_test(test_ctc_decode),
	};

	return cmocka_run_group_tests_name("models", tests, setup, NULL);
}
