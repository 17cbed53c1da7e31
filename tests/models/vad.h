/* SPDX-License-Identifier: MIT */
/*
 * Silero VAD (@ricky0123/vad-web's silero_vad_v5.onnx): one 32 ms window of
 * 16 kHz speech in, the probability that it is speech out.  The speech is
 * espeak-ng's, which writes 16-bit mono WAV at its own rate (22050 Hz).
 */
#ifndef VNPU_MODELS_VAD_H
#define VNPU_MODELS_VAD_H

#include <stddef.h>

#include "npy.h"

#define VAD_RATE 16000
#define VAD_WINDOW 512		/* samples per call, fixed by the model at 16 kHz */
#define VAD_STATE 128		/* the LSTM's width: state is [2, 1, 128] */

struct vad_audio {
	float *samples;		/* in [-1, 1) */
	size_t count;
	int rate;
};

/*
 * Read a RIFF/WAVE file of 16-bit PCM, mono.  Returns 0, -EINVAL for a file
 * that is not one (every chunk size is checked against the file's), or
 * the failing call's error.
 */
int vad_load_wav(const char *path, struct vad_audio *out);

/* @in resampled to @rate by linear interpolation (it only ever goes down
 * from espeak-ng's 22050 Hz, whose content ends below 8 kHz).  0 or
 * -ENOMEM / -EINVAL. */
int vad_resample(const struct vad_audio *in, int rate, struct vad_audio *out);

void vad_audio_free(struct vad_audio *a);

/*
 * The model's three inputs for the window starting @start_ms into @audio
 * (already at VAD_RATE), fresh state: input [1, 512] float, state
 * [2, 1, 128] zeros, sr the int64 scalar 16000.  -ERANGE when the window
 * does not fit in the audio.
 */
int vad_prepare(const struct vad_audio *audio, int start_ms, struct npy_array *input,
		struct npy_array *state, struct npy_array *sr);

#endif /* VNPU_MODELS_VAD_H */
