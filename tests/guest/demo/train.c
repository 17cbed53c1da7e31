// SPDX-License-Identifier: MIT
/*
 * Train the demo's classifier on the host at build time: an MLP
 * 784-H-10 with ReLU, softmax cross-entropy, minibatch SGD with momentum,
 * on Fashion-MNIST's 60000 training images (pixels / 255).
 *
 * Deterministic: one thread, a fixed-seed xorshift PRNG for the
 * initialisation and the per-epoch shuffle, and a fixed summation order,
 * so the same compiler and flags give the same weights on every build.
 *
 *   train OUT.bin [hidden] [epochs] [seed]
 */
#define DEMO_HOST
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmnist.h"

#define IN	784
#define NC	DEMO_CLASSES
#define BATCH	32
#define LR	0.02f
#define MOMENTUM 0.9f

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Uniform in [-1, 1) from the top 24 bits: exact in binary32. */
static float rng_sym(void)
{
	return (float)(rng_next() >> 40) / 8388608.0f - 1.0f;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		fprintf(stderr, "train: out of memory\n");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	uint32_t hidden = argc > 2 ? (uint32_t)atoi(argv[2]) : 128;
	uint32_t epochs = argc > 3 ? (uint32_t)atoi(argv[3]) : 5;
	uint32_t seed = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 20261122;
	uint32_t ntrain, inner, nlab, one, e, i, j, k, b, s;
	unsigned char *img, *lab;
	float *w1, *b1, *w2, *b2, *vw1, *vb1, *vw2, *vb2;
	float *gw1, *gb1, *gw2, *gb2, *x, *h, *dh;
	uint32_t *order;
	struct demo_fp32_hdr hdr;
	double t0, loss = 0.0;
	FILE *f;

	if (argc < 2 || hidden < 1 || hidden > 4096 || epochs < 1 || epochs > 100) {
		fprintf(stderr, "usage: train OUT.bin [hidden 1..4096] [epochs 1..100] [seed]\n");
		return 2;
	}
	img = idx_load("train-images-idx3-ubyte.gz", 3, &ntrain, &inner);
	lab = idx_load("train-labels-idx1-ubyte.gz", 1, &nlab, &one);
	if (inner != IN || nlab != ntrain) {
		fprintf(stderr, "train: unexpected dataset shape\n");
		return 1;
	}
	t0 = now_s();
	rng_state = 0x9e3779b97f4a7c15ull ^ seed;
	w1 = xcalloc((size_t)IN * hidden, 4);
	vw1 = xcalloc((size_t)IN * hidden, 4);
	gw1 = xcalloc((size_t)IN * hidden, 4);
	b1 = xcalloc(hidden, 4);
	vb1 = xcalloc(hidden, 4);
	gb1 = xcalloc(hidden, 4);
	w2 = xcalloc((size_t)hidden * NC, 4);
	vw2 = xcalloc((size_t)hidden * NC, 4);
	gw2 = xcalloc((size_t)hidden * NC, 4);
	b2 = xcalloc(NC, 4);
	vb2 = xcalloc(NC, 4);
	gb2 = xcalloc(NC, 4);
	x = xcalloc(IN, 4);
	h = xcalloc(hidden, 4);
	dh = xcalloc(hidden, 4);
	order = xcalloc(ntrain, 4);

	/* He-uniform initialisation: variance 2 / fan_in. */
	for (i = 0; i < IN * hidden; i++)
		w1[i] = rng_sym() * sqrtf(6.0f / IN);
	for (i = 0; i < hidden * NC; i++)
		w2[i] = rng_sym() * sqrtf(6.0f / (float)hidden);
	for (i = 0; i < ntrain; i++)
		order[i] = i;

	for (e = 0; e < epochs; e++) {
		/* Step decay: the last epoch at a tenth of the rate. */
		float lr = e + 1 == epochs && epochs > 1 ? LR * 0.1f : LR;

		for (i = ntrain - 1; i > 0; i--) {
			uint32_t r = (uint32_t)(rng_next() % (i + 1)), t = order[i];

			order[i] = order[r];
			order[r] = t;
		}
		loss = 0.0;
		for (b = 0; b < ntrain; b += BATCH) {
			uint32_t nb = ntrain - b < BATCH ? ntrain - b : BATCH;

			memset(gw1, 0, (size_t)IN * hidden * 4);
			memset(gb1, 0, hidden * 4);
			memset(gw2, 0, (size_t)hidden * NC * 4);
			memset(gb2, 0, NC * 4);
			for (s = 0; s < nb; s++) {
				const unsigned char *px = img + (size_t)order[b + s] * IN;
				uint32_t y = lab[order[b + s]];
				float z[NC], p[NC], mx, sum = 0.0f;

				for (i = 0; i < IN; i++)
					x[i] = px[i] / 255.0f;
				memcpy(h, b1, hidden * 4);
				/* Most pixels are 0: skip their rows. */
				for (i = 0; i < IN; i++) {
					const float *wr = w1 + (size_t)i * hidden;

					if (px[i])
						for (j = 0; j < hidden; j++)
							h[j] += x[i] * wr[j];
				}
				for (j = 0; j < hidden; j++)
					h[j] = h[j] > 0.0f ? h[j] : 0.0f;
				for (k = 0; k < NC; k++) {
					z[k] = b2[k];
					for (j = 0; j < hidden; j++)
						z[k] += h[j] * w2[j * NC + k];
				}
				mx = z[0];
				for (k = 1; k < NC; k++)
					mx = z[k] > mx ? z[k] : mx;
				for (k = 0; k < NC; k++) {
					p[k] = expf(z[k] - mx);
					sum += p[k];
				}
				loss += log(sum) - (z[y] - mx);
				/* dL/dz = softmax - onehot, averaged over the batch. */
				for (k = 0; k < NC; k++)
					p[k] = (p[k] / sum - (k == y ? 1.0f : 0.0f)) / (float)nb;
				for (j = 0; j < hidden; j++) {
					float d = 0.0f;

					for (k = 0; k < NC; k++) {
						gw2[j * NC + k] += h[j] * p[k];
						d += w2[j * NC + k] * p[k];
					}
					dh[j] = h[j] > 0.0f ? d : 0.0f;
				}
				for (k = 0; k < NC; k++)
					gb2[k] += p[k];
				for (j = 0; j < hidden; j++)
					gb1[j] += dh[j];
				for (i = 0; i < IN; i++) {
					float *gr = gw1 + (size_t)i * hidden;

					if (px[i])
						for (j = 0; j < hidden; j++)
							gr[j] += x[i] * dh[j];
				}
			}
			for (i = 0; i < IN * hidden; i++) {
				vw1[i] = MOMENTUM * vw1[i] - lr * gw1[i];
				w1[i] += vw1[i];
			}
			for (j = 0; j < hidden; j++) {
				vb1[j] = MOMENTUM * vb1[j] - lr * gb1[j];
				b1[j] += vb1[j];
			}
			for (i = 0; i < hidden * NC; i++) {
				vw2[i] = MOMENTUM * vw2[i] - lr * gw2[i];
				w2[i] += vw2[i];
			}
			for (k = 0; k < NC; k++) {
				vb2[k] = MOMENTUM * vb2[k] - lr * gb2[k];
				b2[k] += vb2[k];
			}
		}
		loss /= ntrain;
		fprintf(stderr, "train: epoch %u/%u lr %.3f loss %.4f (%.1f s)\n",
			e + 1, epochs, lr, loss, now_s() - t0);
	}

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, DEMO_FP32_MAGIC, 8);
	hdr.in_dim = IN;
	hdr.hidden = hidden;
	hdr.classes = NC;
	hdr.seed = seed;
	hdr.epochs = epochs;
	hdr.batch = BATCH;
	hdr.train_images = ntrain;
	hdr.lr = LR;
	hdr.train_seconds = (float)(now_s() - t0);
	hdr.final_loss = (float)loss;
	f = fopen(argv[1], "wb");
	if (!f || fwrite(&hdr, sizeof(hdr), 1, f) != 1 ||
	    fwrite(w1, 4, (size_t)IN * hidden, f) != (size_t)IN * hidden ||
	    fwrite(b1, 4, hidden, f) != hidden ||
	    fwrite(w2, 4, (size_t)hidden * NC, f) != (size_t)hidden * NC ||
	    fwrite(b2, 4, NC, f) != NC || fclose(f)) {
		fprintf(stderr, "train: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
