// SPDX-License-Identifier: MIT
/*
 * Silero VAD's preprocessing: a WAV file to the model's window at 16 kHz.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vad.h"

/* espeak-ng's sentences are seconds long; refuse anything absurd. */
#define VAD_MAX_BYTES (64u << 20)

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n == cap) {
			unsigned char *nb;

			if (cap >= VAD_MAX_BYTES) {
				ret = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(b, cap);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
		}
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (got == 0) {
			if (ferror(f))
				ret = -EIO;
			break;
		}
	}
	fclose(f);
	if (ret) {
		free(b);
		return ret;
	}
	*buf = b;
	*len = n;
	return 0;
}

int vad_load_wav(const char *path, struct vad_audio *out)
{
	const unsigned char *fmt = NULL, *data = NULL;
	unsigned char *buf = NULL;
	size_t len = 0, pos, data_len = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = read_file(path, &buf, &len);
	if (ret)
		return ret;
	ret = -EINVAL;
	if (len < 12 || memcmp(buf, "RIFF", 4) || memcmp(buf + 8, "WAVE", 4))
		goto out;
	/* espeak-ng writes a RIFF size of its own guess when it streams:
	 * the chunks are walked within the file as it is. */
	for (pos = 12; pos + 8 <= len;) {
		uint32_t size = le32(buf + pos + 4);
		size_t avail = len - pos - 8;

		if (!memcmp(buf + pos, "fmt ", 4) && size >= 16 && size <= avail)
			fmt = buf + pos + 8;
		else if (!memcmp(buf + pos, "data", 4)) {
			data = buf + pos + 8;
			/* A streamed data chunk may claim more than was written. */
			data_len = size <= avail ? size : avail;
			break;
		}
		if (size > avail)
			goto out;
		pos += 8 + (size_t)size + (size & 1);
	}
	if (!fmt || !data || le16(fmt) != 1 || le16(fmt + 2) != 1 || le16(fmt + 14) != 16 ||
	    le32(fmt + 4) == 0 || le32(fmt + 4) > 384000)
		goto out;
	out->count = data_len / 2;
	out->rate = (int)le32(fmt + 4);
	out->samples = malloc((out->count ? out->count : 1) * sizeof(float));
	if (!out->samples) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < out->count; i++)
		out->samples[i] = (float)(int16_t)le16(data + 2 * i) / 32768.0f;
	ret = 0;
out:
	free(buf);
	return ret;
}

int vad_resample(const struct vad_audio *in, int rate, struct vad_audio *out)
{
	size_t n;

	memset(out, 0, sizeof(*out));
	if (rate <= 0 || in->rate <= 0 || in->count == 0)
		return -EINVAL;
	n = (size_t)((double)in->count * rate / in->rate);
	out->samples = malloc((n ? n : 1) * sizeof(float));
	if (!out->samples)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double t = (double)i * in->rate / rate;
		size_t k = (size_t)t;
		float f = (float)(t - (double)k);
		float b = k + 1 < in->count ? in->samples[k + 1] : in->samples[k];

		out->samples[i] = in->samples[k] + f * (b - in->samples[k]);
	}
	out->count = n;
	out->rate = rate;
	return 0;
}

void vad_audio_free(struct vad_audio *a)
{
	free(a->samples);
	memset(a, 0, sizeof(*a));
}

static int alloc_array(struct npy_array *a, enum npy_type type, size_t elem, int rank,
		       const int64_t *dims)
{
	size_t count = 1;

	memset(a, 0, sizeof(*a));
	a->type = type;
	a->rank = rank;
	for (int i = 0; i < rank; i++) {
		a->dims[i] = dims[i];
		count *= (size_t)dims[i];
	}
	a->bytes = count * elem;
	a->data = calloc(count, elem);
	return a->data ? 0 : -ENOMEM;
}

int vad_prepare(const struct vad_audio *audio, int start_ms, struct npy_array *input,
		struct npy_array *state, struct npy_array *sr)
{
	static const int64_t in_dims[2] = { 1, VAD_WINDOW };
	static const int64_t state_dims[3] = { 2, 1, VAD_STATE };
	size_t start;
	int ret;

	if (audio->rate != VAD_RATE || start_ms < 0)
		return -EINVAL;
	start = (size_t)start_ms * VAD_RATE / 1000;
	if (start > audio->count || audio->count - start < VAD_WINDOW)
		return -ERANGE;
	ret = alloc_array(input, NPY_F32, sizeof(float), 2, in_dims);
	if (!ret)
		ret = alloc_array(state, NPY_F32, sizeof(float), 3, state_dims);
	if (!ret)
		ret = alloc_array(sr, NPY_I64, sizeof(int64_t), 0, NULL);
	if (ret) {
		npy_free(input);
		npy_free(state);
		npy_free(sr);
		return ret;
	}
	memcpy(input->data, audio->samples + start, VAD_WINDOW * sizeof(float));
	*(int64_t *)sr->data = VAD_RATE;
	return 0;
}
