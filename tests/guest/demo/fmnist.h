/* SPDX-License-Identifier: MIT */
/*
 * The demo's file formats, shared by the host trainer/quantizer and the
 * guest program, plus (host only) a reader for the IDX files of Debian's
 * dataset-fashion-mnist.
 *
 * Both files are little-endian and start with a fixed header; every
 * count in them is checked against the file size before use.
 *
 * Model file (demo-mlp.bin): struct demo_model_hdr, then
 *   float   w1_scale[hidden]          per output channel of layer 1
 *   int8    w1[in_dim][hidden]        B of GEMM 1, [K, N] row-major
 *   int32   b1[hidden]                bias in scale in_scale * w1_scale[n]
 *   float   w2_scale[classes]
 *   int8    w2[hidden][classes]
 *   int32   b2[classes]               bias in scale h_scale * w2_scale[n]
 *
 * Test set file (demo-t10k.bin): struct demo_data_hdr, then
 *   uint8   images[count][rows * cols]  raw pixels, row-major
 *   uint8   labels[count]
 */
#ifndef DEMO_FMNIST_H
#define DEMO_FMNIST_H

#include <stdint.h>

#define DEMO_MODEL_MAGIC	"VNPUMLP1"
#define DEMO_DATA_MAGIC		"VNPUFMN1"
#define DEMO_CLASSES		10

struct demo_model_hdr {
	char magic[8];
	uint32_t in_dim;		/* 784 */
	uint32_t hidden;
	uint32_t classes;		/* 10 */
	uint32_t seed;			/* training PRNG seed */
	uint32_t epochs;
	uint32_t batch;			/* SGD minibatch */
	uint32_t train_images;		/* images trained on */
	uint32_t calib_images;		/* images used for calibration */
	/* input: uint8 pixels, real = (q - in_zp) * in_scale */
	float in_scale;
	int32_t in_zp;
	/* hidden activations after ReLU: int8, per tensor */
	float h_scale;
	int32_t h_zp;
	/* measured on the host at build time */
	uint32_t eval_images;		/* first N of t10k, as in the data file */
	uint32_t fp32_correct_eval;	/* fp32 model on those N */
	uint32_t int8_correct_eval;	/* the trainer's own int8 simulation */
	uint32_t fp32_correct_t10k;	/* fp32 model on all 10000 */
	uint32_t t10k_images;
	float train_seconds;
	uint32_t reserved[4];		/* zero */
};

struct demo_data_hdr {
	char magic[8];
	uint32_t count;
	uint32_t rows;
	uint32_t cols;
	uint32_t reserved;		/* zero */
};

static const char *const demo_class_names[DEMO_CLASSES] = {
	"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
	"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
};

#ifdef DEMO_HOST
/*
 * The trainer's fp32 output (host only, cached in the build dir):
 * struct demo_fp32_hdr, then float w1[in_dim][hidden], b1[hidden],
 * w2[hidden][classes], b2[classes].
 */
#define DEMO_FP32_MAGIC		"VNPUF32M"

struct demo_fp32_hdr {
	char magic[8];
	uint32_t in_dim, hidden, classes;
	uint32_t seed, epochs, batch, train_images;
	float lr;
	float train_seconds;
	float final_loss;		/* mean loss of the last epoch */
};

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define FMNIST_DIR "/usr/share/datasets/fashion-mnist"

static uint32_t idx_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/*
 * Read a gzipped IDX file of unsigned bytes: magic 0x0000080N, N big-endian
 * dimensions, data.  Returns the data (malloc'd) and its outer count, and
 * the product of the inner dimensions in *@inner; exits on any error since
 * the build cannot go on without its data.
 */
static unsigned char *idx_load(const char *name, uint32_t ndim,
			       uint32_t *count, uint32_t *inner)
{
	char path[512];
	unsigned char hdr[16];
	unsigned char *data;
	uint64_t total;
	uint32_t i;
	gzFile f;

	snprintf(path, sizeof(path), "%s/%s", FMNIST_DIR, name);
	f = gzopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: cannot open (install dataset-fashion-mnist)\n", path);
		exit(1);
	}
	if (gzread(f, hdr, 4 + 4 * ndim) != (int)(4 + 4 * ndim) ||
	    idx_be32(hdr) != (0x800u | ndim)) {
		fprintf(stderr, "%s: not an IDX ubyte file of rank %u\n", path, ndim);
		exit(1);
	}
	*count = idx_be32(hdr + 4);
	*inner = 1;
	for (i = 1; i < ndim; i++)
		*inner *= idx_be32(hdr + 4 + 4 * i);
	total = (uint64_t)*count * *inner;
	if (!*count || total > (1u << 30)) {
		fprintf(stderr, "%s: implausible size\n", path);
		exit(1);
	}
	data = malloc(total);
	if (!data || gzread(f, data, (unsigned int)total) != (int)total) {
		fprintf(stderr, "%s: short read\n", path);
		exit(1);
	}
	gzclose(f);
	return data;
}
#endif /* DEMO_HOST */

#endif /* DEMO_FMNIST_H */
