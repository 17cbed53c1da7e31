// SPDX-License-Identifier: MIT
/*
 * Post-training quantization of the demo MLP to the int8 scheme the NPU's
 * quantized GEMM runs (Documentation/demo.rst "Quantization"):
 *
 *   input    uint8 pixels as they are: scale 1/255, zero point 0, which
 *            is exactly the x = pixel / 255 the model was trained on;
 *   weights  int8, symmetric (zero point 0), one scale per output channel:
 *            s[n] = max_k |w[k][n]| / 127;
 *   biases   int32 in the accumulator's scale s_in * s_w[n];
 *   hidden   int8 after the fused ReLU, one scale for the tensor from
 *            calibration: the largest activation over the training images,
 *            mapped onto all 256 codes (zero point -128);
 *   logits   the int32 accumulators of layer 2 (accumulator plus bias),
 *            which the guest dequantizes with acc * (s_h * s_w2[n]) before
 *            the argmax: each class has its own weight scale.
 *
 * It then evaluates the fp32 model and its own integer simulation of the
 * quantized one (the ONNX rounding rule of Documentation/ops.rst, written
 * here independently of ops/) on the first N test images, and writes the
 * model and those N images for the guest.
 *
 *   quantize FP32.bin MODEL.bin DATA.bin N
 */
#define DEMO_HOST
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmnist.h"

#define IN	784
#define NC	DEMO_CLASSES

static uint32_t H;
static float *w1, *b1, *w2, *b2;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "quantize: out of memory\n");
		exit(1);
	}
	return p;
}

static void fp32_hidden(const unsigned char *px, float *h)
{
	uint32_t i, j;

	memcpy(h, b1, H * 4);
	for (i = 0; i < IN; i++)
		if (px[i])
			for (j = 0; j < H; j++)
				h[j] += px[i] / 255.0f * w1[(size_t)i * H + j];
	for (j = 0; j < H; j++)
		h[j] = h[j] > 0.0f ? h[j] : 0.0f;
}

static uint32_t fp32_predict(const unsigned char *px, float *h)
{
	uint32_t j, k, best = 0;
	float z[NC];

	fp32_hidden(px, h);
	for (k = 0; k < NC; k++) {
		z[k] = b2[k];
		for (j = 0; j < H; j++)
			z[k] += h[j] * w2[j * NC + k];
		if (z[k] > z[best])
			best = k;
	}
	return best;
}

/* Symmetric per-output-channel int8 weights of a [K][N] matrix. */
static void quant_weights(const float *w, uint32_t kdim, uint32_t n,
			  int8_t *q, float *scale)
{
	uint32_t i, j;

	for (j = 0; j < n; j++) {
		float amax = 0.0f;

		for (i = 0; i < kdim; i++)
			amax = fmaxf(amax, fabsf(w[(size_t)i * n + j]));
		/* An all-zero channel still needs a valid (positive) scale. */
		scale[j] = amax > 0.0f ? amax / 127.0f : 1.0f;
		for (i = 0; i < kdim; i++) {
			float v = rintf(w[(size_t)i * n + j] / scale[j]);

			q[(size_t)i * n + j] = (int8_t)fmaxf(-127.0f, fminf(127.0f, v));
		}
	}
}

static int32_t quant_bias(float b, float sacc)
{
	double v = rint((double)b / (double)sacc);

	if (v > INT32_MAX)
		return INT32_MAX;
	if (v < INT32_MIN)
		return INT32_MIN;
	return (int32_t)v;
}

int main(int argc, char **argv)
{
	struct demo_fp32_hdr fh;
	struct demo_model_hdr mh;
	struct demo_data_hdr dh;
	unsigned char *train, *test, *tlab;
	uint32_t ntrain, ntest, nlab, inner, one, n, i, j, k;
	uint32_t fp32_eval = 0, fp32_all = 0, int8_eval = 0;
	float *hbuf, *s1, *s2, hmax = 0.0f;
	int8_t *q1, *q2, *hq;
	int32_t *bq1, *bq2;
	FILE *f;

	if (argc != 5 || atoi(argv[4]) < 1) {
		fprintf(stderr, "usage: quantize FP32.bin MODEL.bin DATA.bin N\n");
		return 2;
	}
	n = (uint32_t)atoi(argv[4]);
	f = fopen(argv[1], "rb");
	if (!f || fread(&fh, sizeof(fh), 1, f) != 1 ||
	    memcmp(fh.magic, DEMO_FP32_MAGIC, 8) || fh.in_dim != IN ||
	    fh.classes != NC || fh.hidden < 1 || fh.hidden > 4096) {
		fprintf(stderr, "quantize: %s is not a demo fp32 model\n", argv[1]);
		return 1;
	}
	H = fh.hidden;
	w1 = xmalloc((size_t)IN * H * 4);
	b1 = xmalloc(H * 4);
	w2 = xmalloc((size_t)H * NC * 4);
	b2 = xmalloc(NC * 4);
	if (fread(w1, 4, (size_t)IN * H, f) != (size_t)IN * H ||
	    fread(b1, 4, H, f) != H || fread(w2, 4, (size_t)H * NC, f) != (size_t)H * NC ||
	    fread(b2, 4, NC, f) != NC) {
		fprintf(stderr, "quantize: %s is truncated\n", argv[1]);
		return 1;
	}
	fclose(f);

	train = idx_load("train-images-idx3-ubyte.gz", 3, &ntrain, &inner);
	test = idx_load("t10k-images-idx3-ubyte.gz", 3, &ntest, &one);
	tlab = idx_load("t10k-labels-idx1-ubyte.gz", 1, &nlab, &one);
	if (inner != IN || nlab != ntest || n > ntest) {
		fprintf(stderr, "quantize: unexpected dataset shape or N > %u\n", ntest);
		return 1;
	}
	hbuf = xmalloc(H * 4);

	/* Calibration: the hidden activation range over the training set. */
	for (i = 0; i < ntrain; i++) {
		fp32_hidden(train + (size_t)i * IN, hbuf);
		for (j = 0; j < H; j++)
			hmax = fmaxf(hmax, hbuf[j]);
	}
	for (i = 0; i < ntest; i++) {
		uint32_t ok = fp32_predict(test + (size_t)i * IN, hbuf) == tlab[i];

		fp32_all += ok;
		if (i < n)
			fp32_eval += ok;
	}

	memset(&mh, 0, sizeof(mh));
	memcpy(mh.magic, DEMO_MODEL_MAGIC, 8);
	mh.in_dim = IN;
	mh.hidden = H;
	mh.classes = NC;
	mh.seed = fh.seed;
	mh.epochs = fh.epochs;
	mh.batch = fh.batch;
	mh.train_images = fh.train_images;
	mh.calib_images = ntrain;
	mh.in_scale = 1.0f / 255.0f;
	mh.in_zp = 0;
	mh.h_scale = hmax > 0.0f ? hmax / 255.0f : 1.0f;
	mh.h_zp = -128;
	mh.eval_images = n;
	mh.fp32_correct_eval = fp32_eval;
	mh.fp32_correct_t10k = fp32_all;
	mh.t10k_images = ntest;
	mh.train_seconds = fh.train_seconds;

	s1 = xmalloc(H * 4);
	s2 = xmalloc(NC * 4);
	q1 = xmalloc((size_t)IN * H);
	q2 = xmalloc((size_t)H * NC);
	bq1 = xmalloc(H * 4);
	bq2 = xmalloc(NC * 4);
	hq = xmalloc(H);
	quant_weights(w1, IN, H, q1, s1);
	quant_weights(w2, H, NC, q2, s2);
	for (j = 0; j < H; j++)
		bq1[j] = quant_bias(b1[j], mh.in_scale * s1[j]);
	for (k = 0; k < NC; k++)
		bq2[k] = quant_bias(b2[k], mh.h_scale * s2[k]);

	/*
	 * Integer simulation, as the NPU's ONNX rounding rule defines it:
	 * M = (s_in * s_w[n]) / s_h in binary32, q = rint((float)acc * M) + zp,
	 * clamped to [zp, 127] by the fused ReLU.  Accumulators wrap mod 2^32.
	 */
	for (i = 0; i < n; i++) {
		const unsigned char *px = test + (size_t)i * IN;
		uint32_t best = 0;
		float z[NC];

		for (j = 0; j < H; j++) {
			uint32_t acc = (uint32_t)bq1[j];
			float m = mh.in_scale * s1[j] / mh.h_scale;
			float v;

			for (k = 0; k < IN; k++)
				acc += (uint32_t)((int32_t)(px[k] - mh.in_zp) * q1[(size_t)k * H + j]);
			v = rintf((float)(int32_t)acc * m) + (float)mh.h_zp;
			hq[j] = (int8_t)fmaxf((float)mh.h_zp, fminf(127.0f, v));
		}
		for (k = 0; k < NC; k++) {
			uint32_t acc = (uint32_t)bq2[k];

			for (j = 0; j < H; j++)
				acc += (uint32_t)((hq[j] - mh.h_zp) * q2[j * NC + k]);
			z[k] = (float)(int32_t)acc * (mh.h_scale * s2[k]);
			if (z[k] > z[best])
				best = k;
		}
		int8_eval += best == tlab[i];
	}
	mh.int8_correct_eval = int8_eval;

	f = fopen(argv[2], "wb");
	if (!f || fwrite(&mh, sizeof(mh), 1, f) != 1 ||
	    fwrite(s1, 4, H, f) != H || fwrite(q1, 1, (size_t)IN * H, f) != (size_t)IN * H ||
	    fwrite(bq1, 4, H, f) != H || fwrite(s2, 4, NC, f) != NC ||
	    fwrite(q2, 1, (size_t)H * NC, f) != (size_t)H * NC ||
	    fwrite(bq2, 4, NC, f) != NC || fclose(f)) {
		fprintf(stderr, "quantize: cannot write %s\n", argv[2]);
		return 1;
	}
	memset(&dh, 0, sizeof(dh));
	memcpy(dh.magic, DEMO_DATA_MAGIC, 8);
	dh.count = n;
	dh.rows = 28;
	dh.cols = 28;
	f = fopen(argv[3], "wb");
	if (!f || fwrite(&dh, sizeof(dh), 1, f) != 1 ||
	    fwrite(test, IN, n, f) != n || fwrite(tlab, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "quantize: cannot write %s\n", argv[3]);
		return 1;
	}
	printf("demo model: MLP %u-%u-%u, %u epochs (seed %u) in %.1f s, loss %.4f\n",
	       IN, H, NC, fh.epochs, fh.seed, fh.train_seconds, fh.final_loss);
	printf("  fp32 accuracy: %.2f%% on t10k (%u), %.2f%% on its first %u\n",
	       100.0 * fp32_all / ntest, ntest, 100.0 * fp32_eval / n, n);
	printf("  int8 (host simulation): %.2f%% on the first %u; hidden scale %.6g (max %.4g)\n",
	       100.0 * int8_eval / n, n, mh.h_scale, hmax);
	return 0;
}
