// SPDX-License-Identifier: MIT
/*
 * vnpu-models: the pre- and postprocessing of the real-model pipelines as
 * steps on .npy files, so any runner (onnxruntime-node on the host at build
 * time, npu-run on the device in the guest) can sit between them.
 *
 * Tensor files are named after the ONNX tensor, every character outside
 * [A-Za-z0-9._-] replaced by '_' ("Identity:0" -> Identity_0.npy).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blazeface.h"
#include "mimage.h"
#include "npy.h"
#include "ppocr.h"
#include "vad.h"
#include "yolo.h"

/*
 * How close a device run must come to onnxruntime: every element within
 * MODELS_ATOL * max(1, the largest |reference| in the tensor) +
 * MODELS_RTOL * |its reference|.  Both compute in fp32, in another order
 * (tiling, accumulation, fused epilogues); rounding then moves an element
 * in proportion to the magnitudes that were summed into it, which the
 * tensor's largest value stands for.  Measured on these models,
 * onnxruntime with and without its graph optimisations (fusions that
 * reorder the arithmetic the way a device does) differ by at most 1.6e-5
 * of that scale (det's probabilities; 2.4e-4 absolute on BlazeFace back's
 * logits, which reach 284): the bound leaves a factor of 60.
 */
#define MODELS_ATOL 1e-3
#define MODELS_RTOL 1e-3
/* The task-level checks: issue 12's, for the face against onnxruntime's. */
#define MODELS_FACE_MIN_SCORE 0.8f
#define MODELS_FACE_MIN_IOU 0.9f
/* Text boxes may move by a pixel when a map value crosses the threshold. */
#define MODELS_BOX_TOLERANCE 1.0f
/* Silero's own threshold for speech (vad-web's positiveSpeechThreshold). */
#define MODELS_SPEECH_MIN_PROB 0.5f
/* Ultralytics' predict defaults. */
#define MODELS_YOLO_CONF 0.25f
#define MODELS_YOLO_IOU 0.7f
/* The astronaut is found as a person at least this sure (onnxruntime:
 * see Documentation/models.rst), and every detection lands where
 * onnxruntime's does. */
#define MODELS_PERSON_MIN_SCORE 0.5f
#define MODELS_DETECTION_MIN_IOU 0.9f
/*
 * An int8 model against onnxruntime running the same QDQ file (issue 22):
 * the same integers on 99.9% of the elements, and at most one step apart
 * elsewhere.  Both requantize in float (scale products rounded half to
 * even), but a sum that lands within a rounding error of a half step can
 * round either way when the two compute the float product in a different
 * order.
 */
#define MODELS_Q_MIN_EQUAL 0.999
#define MODELS_Q_MAX_STEPS 1

static const char *const blazeface_outputs[4] = {
	"Identity_0.npy", "Identity_1_0.npy", "Identity_2_0.npy", "Identity_3_0.npy"
};

static int usage(void)
{
	fprintf(stderr,
		"usage: vnpu-models COMMAND ...\n"
		"  blazeface-prep IMAGE SIZE OUT.npy\n"
		"  blazeface-post IMAGE SIZE OUTDIR [--annotate PNG]\n"
		"  blazeface-check IMAGE SIZE OUTDIR REFDIR [--task-only] [--annotate PNG]\n"
		"  ocr-det-prep IMAGE LONGSIDE OUT.npy\n"
		"  ocr-cls-prep IMAGE DET.npy OUT.npy\n"
		"  ocr-rec-prep IMAGE DET.npy CLS.npy OUT.npy\n"
		"  ocr-post IMAGE KEYS DET.npy CLS.npy REC.npy [--annotate PNG]\n"
		"  ocr-check IMAGE KEYS DET CLS REC REF_DET REF_CLS REF_REC [--task-only]\n"
		"            [--annotate PNG]\n"
		"  vad-prep WAV START_MS INDIR\n"
		"  vad-check OUTDIR REFDIR\n"
		"  yolo-prep IMAGE SIZE OUT.npy\n"
		"  yolo-check IMAGE SIZE OUTDIR REFDIR\n"
		"  compare A.npy B.npy\n"
		"  compare-q A.npy B.npy SCALE\n"
		"OUTDIR/REFDIR hold a model's outputs, one TENSOR.npy each; the *-check\n"
		"commands hold a run (on the NPU) against onnxruntime's reference and\n"
		"exit 1 when an output is out of tolerance or a task-level check fails;\n"
		"--task-only checks the task alone (an int8 run against fp32's reference).\n"
		"compare-q counts a dequantized output's differences in steps of SCALE.\n");
	return 2;
}

static void complain(const char *what, const char *path, int err)
{
	fprintf(stderr, "vnpu-models: %s %s: %s\n", what, path, strerror(-err));
}

/* complain() for a command's exit status */
static int fail(const char *what, const char *path, int err)
{
	complain(what, path, err);
	return 1;
}

static int parse_int(const char *s, int lo, int hi, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return -EINVAL;
	*v = (int)x;
	return 0;
}

static const char *annotate_arg(int argc, char **argv, int first)
{
	for (int i = first; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--annotate"))
			return argv[i + 1];
	return NULL;
}

static int has_flag(int argc, char **argv, int first, const char *flag)
{
	for (int i = first; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

static int save(const char *path, struct npy_array *a)
{
	int ret = npy_save(path, a);

	npy_free(a);
	return ret ? fail("writing", path, ret) : 0;
}

static int cmd_blazeface_prep(int argc, char **argv)
{
	struct mimage img;
	struct npy_array in;
	int size, ret;

	if (argc != 5 || parse_int(argv[3], 1, 4096, &size))
		return usage();
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = blazeface_prepare(&img, size, &in);
	mimage_free(&img);
	if (ret)
		return fail("preparing", argv[2], ret);
	return save(argv[4], &in);
}

static int cmd_blazeface_post(int argc, char **argv)
{
	struct npy_array outs[4] = { 0 };
	const struct npy_array *op[4];
	struct blazeface_face faces[16];
	const char *png = annotate_arg(argc, argv, 5);
	struct mimage img;
	char path[4096];
	int size, n, ret, rc = 1;

	if (argc < 5 || parse_int(argv[3], 1, 4096, &size))
		return usage();
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", argv[4], blazeface_outputs[i]);
		ret = npy_load(path, &outs[i]);
		if (ret) {
			complain("reading", path, ret);
			goto out;
		}
		op[i] = &outs[i];
	}
	n = blazeface_decode(op, size, img.w, img.h, faces, 16);
	if (n < 0) {
		complain("decoding", argv[4], n);
		goto out;
	}
	printf("faces: %d\n", n);
	for (int i = 0; i < n; i++) {
		printf("face %d: score %.3f box %.1f %.1f %.1f %.1f keypoints", i, faces[i].score,
		       faces[i].x0, faces[i].y0, faces[i].x1, faces[i].y1);
		for (int k = 0; k < BLAZEFACE_KEYPOINTS; k++)
			printf(" %.1f,%.1f", faces[i].kp[k][0], faces[i].kp[k][1]);
		printf("\n");
	}
	rc = 0;
	if (png) {
		blazeface_annotate(&img, faces, n);
		ret = mimage_save_png(png, &img);
		if (ret)
			rc = fail("writing", png, ret);
	}
out:
	for (int i = 0; i < 4; i++)
		npy_free(&outs[i]);
	mimage_free(&img);
	return rc;
}

static int cmd_ocr_det_prep(int argc, char **argv)
{
	struct mimage img;
	struct npy_array in;
	int side, ret;

	if (argc != 5 || parse_int(argv[3], 0, 8192, &side))
		return usage();
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = ppocr_det_prepare(&img, side, &in);
	mimage_free(&img);
	if (ret)
		return fail("preparing", argv[2], ret);
	return save(argv[4], &in);
}

/*
 * Load the image and the det output and find the boxes, then the cls
 * decisions when @cls is given.  Returns the number of boxes or -1.
 */
static int ocr_boxes(const char *image, const char *det, const char *cls, struct mimage *img,
		     struct ppocr_box *boxes)
{
	struct npy_array a;
	int n, ret;

	ret = mimage_load_png(image, img);
	if (ret) {
		complain("reading", image, ret);
		return -1;
	}
	ret = npy_load(det, &a);
	if (ret) {
		mimage_free(img);
		complain("reading", det, ret);
		return -1;
	}
	n = ppocr_det_boxes(&a, img->w, img->h, boxes, PPOCR_MAX_BOXES);
	npy_free(&a);
	if (n <= 0) {
		mimage_free(img);
		if (n == 0)
			fprintf(stderr, "vnpu-models: %s: no text found\n", det);
		else
			complain("decoding", det, n);
		return -1;
	}
	if (!cls)
		return n;
	ret = npy_load(cls, &a);
	if (!ret) {
		ret = ppocr_cls_apply(&a, boxes, n);
		npy_free(&a);
	}
	if (ret) {
		mimage_free(img);
		complain("reading", cls, ret);
		return -1;
	}
	return n;
}

static int cmd_ocr_cls_prep(int argc, char **argv)
{
	static struct ppocr_box boxes[PPOCR_MAX_BOXES];
	struct mimage img;
	struct npy_array in;
	int n, ret;

	if (argc != 5)
		return usage();
	n = ocr_boxes(argv[2], argv[3], NULL, &img, boxes);
	if (n < 0)
		return 1;
	ret = ppocr_cls_prepare(&img, boxes, n, &in);
	mimage_free(&img);
	if (ret)
		return fail("preparing", argv[2], ret);
	return save(argv[4], &in);
}

static int cmd_ocr_rec_prep(int argc, char **argv)
{
	static struct ppocr_box boxes[PPOCR_MAX_BOXES];
	struct mimage img;
	struct npy_array in;
	int n, ret;

	if (argc != 6)
		return usage();
	n = ocr_boxes(argv[2], argv[3], argv[4], &img, boxes);
	if (n < 0)
		return 1;
	ret = ppocr_rec_prepare(&img, boxes, n, &in);
	mimage_free(&img);
	if (ret)
		return fail("preparing", argv[2], ret);
	return save(argv[5], &in);
}

static int cmd_ocr_post(int argc, char **argv)
{
	static struct ppocr_box boxes[PPOCR_MAX_BOXES];
	const char *png = annotate_arg(argc, argv, 7);
	struct ppocr_keys keys;
	struct npy_array rec;
	struct mimage img;
	int n, ret, rc = 0;

	if (argc < 7)
		return usage();
	ret = ppocr_keys_load(argv[3], &keys);
	if (ret)
		return fail("reading", argv[3], ret);
	n = ocr_boxes(argv[2], argv[4], argv[5], &img, boxes);
	if (n < 0) {
		ppocr_keys_free(&keys);
		return 1;
	}
	ret = npy_load(argv[6], &rec);
	if (!ret) {
		ret = ppocr_rec_decode(&rec, &keys, boxes, n);
		npy_free(&rec);
	}
	ppocr_keys_free(&keys);
	if (ret) {
		mimage_free(&img);
		return fail("decoding", argv[6], ret);
	}
	printf("lines: %d\n", n);
	for (int i = 0; i < n; i++)
		printf("line %d: box %.0f,%.0f %.0f,%.0f %.0f,%.0f %.0f,%.0f score %.3f "
		       "%s (cls %.3f) text %.3f \"%s\"\n", i,
		       boxes[i].pt[0][0], boxes[i].pt[0][1], boxes[i].pt[1][0], boxes[i].pt[1][1],
		       boxes[i].pt[2][0], boxes[i].pt[2][1], boxes[i].pt[3][0], boxes[i].pt[3][1],
		       boxes[i].score, boxes[i].rotated ? "turned" : "upright", boxes[i].cls_score,
		       boxes[i].text_score, boxes[i].text);
	if (png) {
		ppocr_annotate(&img, boxes, n);
		ret = mimage_save_png(png, &img);
		if (ret)
			rc = fail("writing", png, ret);
	}
	mimage_free(&img);
	return rc;
}

/*
 * Largest |a - b| and whether every element is within the tolerance
 * (b the reference).  Returns 0, or -EINVAL when the arrays differ in type
 * or shape.
 */
static int diff_arrays(const struct npy_array *a, const struct npy_array *b, double *maxd,
		       int *within)
{
	const float *x = a->data, *y = b->data;
	size_t n = a->bytes / sizeof(float);
	double scale = 1, atol;

	if (a->type != NPY_F32 || b->type != NPY_F32 || a->rank != b->rank ||
	    a->bytes != b->bytes || memcmp(a->dims, b->dims, sizeof(a->dims[0]) * (size_t)a->rank))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (fabs((double)y[i]) > scale)
			scale = fabs((double)y[i]);
	/* A non-finite reference leaves no meaningful scale: exact only. */
	atol = isfinite(scale) ? MODELS_ATOL * scale : 0;
	*maxd = 0;
	*within = 1;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)x[i] - (double)y[i]);

		/* NaN anywhere is an infinite difference. */
		if (isnan(d))
			d = INFINITY;
		if (d > *maxd)
			*maxd = d;
		if (!(d <= atol + MODELS_RTOL * fabs((double)y[i])))
			*within = 0;
	}
	return 0;
}

/* Load and diff two files, printing the result under @label. */
static int diff_files(const char *label, const char *path, const char *ref, double *maxd)
{
	struct npy_array a, b;
	int ret, within = 0;

	ret = npy_load(path, &a);
	if (ret) {
		complain("reading", path, ret);
		return -1;
	}
	ret = npy_load(ref, &b);
	if (ret) {
		npy_free(&a);
		complain("reading", ref, ret);
		return -1;
	}
	ret = diff_arrays(&a, &b, maxd, &within);
	npy_free(&a);
	npy_free(&b);
	if (ret) {
		fprintf(stderr, "vnpu-models: %s and %s differ in type or shape\n", path, ref);
		return -1;
	}
	printf("%s: max abs diff %g%s\n", label, *maxd, within ? "" : " (out of tolerance)");
	return within ? 0 : -1;
}

static int cmd_compare(int argc, char **argv)
{
	double maxd;

	if (argc != 4)
		return usage();
	return diff_files(argv[2], argv[2], argv[3], &maxd) ? 1 : 0;
}

/*
 * An int8 model's output as its last DequantizeLinear wrote it: every value
 * is (q - zero point) * SCALE, so a difference divided by SCALE is a whole
 * number of quantization steps (rounded: both sides are float products).
 * The run matches when at least MODELS_Q_MIN_EQUAL of the elements are
 * equal and none is more than MODELS_Q_MAX_STEPS steps off.
 */
static int cmd_compare_q(int argc, char **argv)
{
	struct npy_array a, b;
	const float *x, *y;
	size_t n, equal = 0;
	double scale, maxs = 0;
	char *end;
	int ret, ok;

	if (argc != 5)
		return usage();
	errno = 0;
	scale = strtod(argv[4], &end);
	if (errno || end == argv[4] || *end || !isfinite(scale) || !(scale > 0)) {
		fprintf(stderr, "vnpu-models: compare-q: scale '%s' is not a positive number\n",
			argv[4]);
		return 2;
	}
	ret = npy_load(argv[2], &a);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = npy_load(argv[3], &b);
	if (ret) {
		npy_free(&a);
		return fail("reading", argv[3], ret);
	}
	if (a.type != NPY_F32 || b.type != NPY_F32 || a.rank != b.rank || a.bytes != b.bytes ||
	    memcmp(a.dims, b.dims, sizeof(a.dims[0]) * (size_t)a.rank)) {
		fprintf(stderr, "vnpu-models: %s and %s differ in type or shape\n", argv[2], argv[3]);
		npy_free(&a);
		npy_free(&b);
		return 1;
	}
	x = a.data;
	y = b.data;
	n = a.bytes / sizeof(float);
	for (size_t i = 0; i < n; i++) {
		double steps = nearbyint(fabs((double)x[i] - (double)y[i]) / scale);

		if (isnan(steps))
			steps = INFINITY;
		if (steps == 0)
			equal++;
		if (steps > maxs)
			maxs = steps;
	}
	npy_free(&a);
	npy_free(&b);
	ok = (double)equal >= MODELS_Q_MIN_EQUAL * (double)n && maxs <= MODELS_Q_MAX_STEPS;
	printf("%s: %zu of %zu elements equal, max diff %g steps%s\n", argv[2], equal, n, maxs,
	       ok ? "" : " (out of tolerance)");
	return ok ? 0 : 1;
}

static int cmd_blazeface_check(int argc, char **argv)
{
	struct npy_array outs[2][4];
	const struct npy_array *op[2][4];
	struct blazeface_face faces[2][16];
	const char *png = annotate_arg(argc, argv, 6);
	int task_only = has_flag(argc, argv, 6, "--task-only");
	double maxd = 0;
	struct mimage img;
	char path[2][4096];
	int size, n[2], ret, ok = 1;

	if (argc < 6 || parse_int(argv[3], 1, 4096, &size))
		return usage();
	memset(outs, 0, sizeof(outs));
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	for (int i = 0; i < 4; i++) {
		double d = 0;

		for (int r = 0; r < 2; r++) {
			snprintf(path[r], sizeof(path[r]), "%s/%s", argv[4 + r], blazeface_outputs[i]);
			ret = npy_load(path[r], &outs[r][i]);
			if (ret) {
				complain("reading", path[r], ret);
				ok = 0;
				goto out;
			}
			op[r][i] = &outs[r][i];
		}
		if (diff_files(blazeface_outputs[i], path[0], path[1], &d) && !task_only)
			ok = 0;
		maxd = fmax(maxd, d);
	}
	for (int r = 0; r < 2; r++) {
		n[r] = blazeface_decode(op[r], size, img.w, img.h, faces[r], 16);
		if (n[r] < 0) {
			complain("decoding", argv[4 + r], n[r]);
			ok = 0;
			goto out;
		}
	}
	for (int i = 0; i < n[0]; i++)
		printf("face %d: score %.3f box %.1f %.1f %.1f %.1f\n", i, faces[0][i].score,
		       faces[0][i].x0, faces[0][i].y0, faces[0][i].x1, faces[0][i].y1);
	if (n[0] < 1 || n[1] < 1) {
		printf("check: no face found (%d here, %d in the reference)\n", n[0], n[1]);
		ok = 0;
	} else {
		float iou = blazeface_iou(&faces[0][0], &faces[1][0]);

		printf("check: best face score %.3f (reference %.3f), IoU with the reference %.3f\n",
		       faces[0][0].score, faces[1][0].score, iou);
		if (!(faces[0][0].score >= MODELS_FACE_MIN_SCORE) || !(iou >= MODELS_FACE_MIN_IOU))
			ok = 0;
	}
	if (png) {
		blazeface_annotate(&img, faces[0], n[0] > 0 ? n[0] : 0);
		ret = mimage_save_png(png, &img);
		if (ret) {
			complain("writing", png, ret);
			ok = 0;
		}
		else
			printf("annotated: %s\n", png);
	}
out:
	printf("blazeface-check: %s, max abs diff %g\n", ok ? "PASS" : "FAIL", maxd);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 4; i++)
			npy_free(&outs[r][i]);
	mimage_free(&img);
	return ok ? 0 : 1;
}

/* The whole OCR pipeline's result from one set of det, cls, rec outputs. */
static int ocr_read(const char *image, const struct ppocr_keys *keys, char *const files[3],
		    struct mimage *img, struct ppocr_box *boxes)
{
	struct npy_array rec;
	int n, ret;

	n = ocr_boxes(image, files[0], files[1], img, boxes);
	if (n < 0)
		return -1;
	ret = npy_load(files[2], &rec);
	if (!ret) {
		ret = ppocr_rec_decode(&rec, keys, boxes, n);
		npy_free(&rec);
	}
	if (ret) {
		mimage_free(img);
		complain("decoding", files[2], ret);
		return -1;
	}
	return n;
}

static int cmd_ocr_check(int argc, char **argv)
{
	static struct ppocr_box boxes[2][PPOCR_MAX_BOXES];
	static const char *const stage[3] = { "det", "cls", "rec" };
	const char *png = annotate_arg(argc, argv, 10);
	int task_only = has_flag(argc, argv, 10, "--task-only");
	struct ppocr_keys keys;
	struct mimage img[2];
	double maxd = 0;
	int n[2], ok = 1, ret;

	if (argc < 10)
		return usage();
	ret = ppocr_keys_load(argv[3], &keys);
	if (ret)
		return fail("reading", argv[3], ret);
	for (int s = 0; s < 3; s++) {
		double d = 0;

		/* cls and rec inputs come from this run's own boxes; they equal
		 * the reference's inputs exactly when the boxes agree. */
		if (diff_files(stage[s], argv[4 + s], argv[7 + s], &d) && !task_only)
			ok = 0;
		maxd = fmax(maxd, d);
	}
	n[0] = ocr_read(argv[2], &keys, argv + 4, &img[0], boxes[0]);
	n[1] = n[0] < 0 ? -1 : ocr_read(argv[2], &keys, argv + 7, &img[1], boxes[1]);
	ppocr_keys_free(&keys);
	if (n[0] < 0 || n[1] < 0) {
		if (n[0] >= 0)
			mimage_free(&img[0]);
		printf("ocr-check: FAIL, max abs diff %g\n", maxd);
		return 1;
	}
	printf("lines: %d (reference %d)\n", n[0], n[1]);
	if (n[0] != n[1])
		ok = 0;
	for (int i = 0; i < n[0]; i++) {
		const struct ppocr_box *b = &boxes[0][i], *r = i < n[1] ? &boxes[1][i] : NULL;
		float moved = 0;

		for (int k = 0; r && k < 4; k++)
			moved = fmaxf(moved, hypotf(b->pt[k][0] - r->pt[k][0], b->pt[k][1] - r->pt[k][1]));
		printf("line %d: %s (cls %.3f) \"%s\"\n", i, b->rotated ? "turned" : "upright",
		       b->cls_score, b->text);
		if (!r || !(moved <= MODELS_BOX_TOLERANCE) || b->rotated != r->rotated ||
		    strcmp(b->text, r->text)) {
			printf("check: line %d differs from the reference: box moved %.1f px, %s, \"%s\"\n",
			       i, moved, r && r->rotated ? "turned" : "upright", r ? r->text : "");
			ok = 0;
		}
	}
	if (png) {
		ppocr_annotate(&img[0], boxes[0], n[0]);
		ret = mimage_save_png(png, &img[0]);
		if (ret) {
			complain("writing", png, ret);
			ok = 0;
		}
		else
			printf("annotated: %s\n", png);
	}
	mimage_free(&img[0]);
	mimage_free(&img[1]);
	printf("ocr-check: %s, max abs diff %g\n", ok ? "PASS" : "FAIL", maxd);
	return ok ? 0 : 1;
}

static int cmd_vad_prep(int argc, char **argv)
{
	struct vad_audio wav, audio;
	struct npy_array in[3];
	static const char *const names[3] = { "input.npy", "state.npy", "sr.npy" };
	char path[4096];
	int start_ms, ret;

	if (argc != 5 || parse_int(argv[3], 0, 3600 * 1000, &start_ms))
		return usage();
	ret = vad_load_wav(argv[2], &wav);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = vad_resample(&wav, VAD_RATE, &audio);
	vad_audio_free(&wav);
	if (!ret) {
		ret = vad_prepare(&audio, start_ms, &in[0], &in[1], &in[2]);
		vad_audio_free(&audio);
	}
	if (ret)
		return fail("preparing", argv[2], ret);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", argv[4], names[i]);
		if (save(path, &in[i])) {
			for (int j = i + 1; j < 3; j++)
				npy_free(&in[j]);
			return 1;
		}
	}
	return 0;
}

/* Both outputs against onnxruntime's, and the window heard as speech. */
static int cmd_vad_check(int argc, char **argv)
{
	static const char *const names[2] = { "output.npy", "stateN.npy" };
	char path[4096], ref[4096];
	struct npy_array prob;
	double maxd, worst = 0;
	int ok = 1, ret;

	if (argc != 4)
		return usage();
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", argv[2], names[i]);
		snprintf(ref, sizeof(ref), "%s/%s", argv[3], names[i]);
		/* Unread files leave it infinite: no difference is known. */
		maxd = INFINITY;
		if (diff_files(names[i], path, ref, &maxd))
			ok = 0;
		if (maxd > worst)
			worst = maxd;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[2], names[0]);
	ret = npy_load(path, &prob);
	if (ret)
		return fail("reading", path, ret);
	if (prob.type != NPY_F32 || prob.bytes != sizeof(float)) {
		fprintf(stderr, "vnpu-models: %s is not one probability\n", path);
		ok = 0;
	} else {
		float p = *(const float *)prob.data;

		printf("speech probability %.4f (speech from %.2f)\n", p, MODELS_SPEECH_MIN_PROB);
		if (!(p >= MODELS_SPEECH_MIN_PROB)) {
			printf("check: the window is speech, the model says %.4f\n", p);
			ok = 0;
		}
	}
	npy_free(&prob);
	printf("vad-check: %s, max abs diff %g\n", ok ? "PASS" : "FAIL", worst);
	return ok ? 0 : 1;
}

static int cmd_yolo_prep(int argc, char **argv)
{
	struct yolo_letterbox lb;
	struct mimage img;
	struct npy_array in;
	int size, ret;

	if (argc != 5 || parse_int(argv[3], 32, 4096, &size))
		return usage();
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = yolo_prepare(&img, size, &in, &lb);
	mimage_free(&img);
	if (ret)
		return fail("preparing", argv[2], ret);
	return save(argv[4], &in);
}

/* Decode OUTDIR/output0.npy, printing the detections under @label. */
static int yolo_read(const char *label, const char *dir, const struct yolo_letterbox *lb,
		     struct yolo_detection *dets)
{
	char path[4096];
	struct npy_array out;
	int n, ret;

	snprintf(path, sizeof(path), "%s/output0.npy", dir);
	ret = npy_load(path, &out);
	if (ret) {
		complain("reading", path, ret);
		return ret;
	}
	n = yolo_decode(&out, lb, MODELS_YOLO_CONF, MODELS_YOLO_IOU, dets, YOLO_MAX_DETECTIONS);
	npy_free(&out);
	if (n < 0) {
		complain("decoding", path, n);
		return n;
	}
	for (int i = 0; i < n; i++)
		printf("%s: %s %.3f at (%.0f, %.0f)-(%.0f, %.0f)\n", label,
		       yolo_class_name(dets[i].cls), dets[i].score, dets[i].box[0], dets[i].box[1],
		       dets[i].box[2], dets[i].box[3]);
	return n;
}

static int cmd_yolo_check(int argc, char **argv)
{
	static struct yolo_detection got[YOLO_MAX_DETECTIONS], want[YOLO_MAX_DETECTIONS];
	struct yolo_letterbox lb;
	struct mimage img;
	struct npy_array in;
	char path[4096], ref[4096];
	double maxd = INFINITY;
	int size, ret, ngot, nwant, ok, person = 0;

	if (argc != 6 || parse_int(argv[3], 32, 4096, &size))
		return usage();
	/* The letterbox of the image as yolo-prep made it. */
	ret = mimage_load_png(argv[2], &img);
	if (ret)
		return fail("reading", argv[2], ret);
	ret = yolo_prepare(&img, size, &in, &lb);
	mimage_free(&img);
	npy_free(&in);
	if (ret)
		return fail("preparing", argv[2], ret);
	snprintf(path, sizeof(path), "%s/output0.npy", argv[4]);
	snprintf(ref, sizeof(ref), "%s/output0.npy", argv[5]);
	ok = diff_files("output0.npy", path, ref, &maxd) == 0;
	ngot = yolo_read("npu", argv[4], &lb, got);
	nwant = yolo_read("onnxruntime", argv[5], &lb, want);
	if (ngot < 0 || nwant < 0) {
		printf("yolo-check: FAIL, max abs diff %g\n", maxd);
		return 1;
	}
	if (ngot != nwant) {
		printf("check: %d detections, onnxruntime %d\n", ngot, nwant);
		ok = 0;
	}
	for (int i = 0; i < ngot && i < nwant; i++) {
		float iou = yolo_iou(got[i].box, want[i].box);

		if (got[i].cls != want[i].cls || iou < MODELS_DETECTION_MIN_IOU) {
			printf("check: detection %d is %s (IoU %.3f with onnxruntime's %s)\n", i,
			       yolo_class_name(got[i].cls), iou, yolo_class_name(want[i].cls));
			ok = 0;
		}
	}
	for (int i = 0; i < ngot; i++)
		if (got[i].cls == 0 && got[i].score >= MODELS_PERSON_MIN_SCORE)
			person = 1;
	if (!person) {
		printf("check: no person at score >= %.2f\n", MODELS_PERSON_MIN_SCORE);
		ok = 0;
	}
	printf("yolo-check: %s, max abs diff %g\n", ok ? "PASS" : "FAIL", maxd);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "blazeface-prep", cmd_blazeface_prep },
		{ "blazeface-post", cmd_blazeface_post },
		{ "ocr-det-prep", cmd_ocr_det_prep },
		{ "ocr-cls-prep", cmd_ocr_cls_prep },
		{ "ocr-rec-prep", cmd_ocr_rec_prep },
		{ "ocr-post", cmd_ocr_post },
		{ "blazeface-check", cmd_blazeface_check },
		{ "ocr-check", cmd_ocr_check },
		{ "yolo-prep", cmd_yolo_prep },
		{ "yolo-check", cmd_yolo_check },
		{ "vad-prep", cmd_vad_prep },
		{ "vad-check", cmd_vad_check },
		{ "compare", cmd_compare },
		{ "compare-q", cmd_compare_q },
	};

	if (argc < 2)
		return usage();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc, argv);
	return usage();
}
