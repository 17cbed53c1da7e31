#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Inputs of the audio models that vnpu-models does not prepare (numpy):
#   audio-prep.py vad-v4 VAD_IN_DIR OUT_DIR
#       Silero VAD v4's inputs: v5's window and sample rate (vad-prep's),
#       and a fresh LSTM state, h and c [2, 1, 64] of zeros
#   audio-prep.py oww-audio WAV OUT.npy
#       openWakeWord's melspectrogram input: WAV at 16 kHz (linear
#       interpolation), int16-scaled floats as openWakeWord feeds them,
#       between a second of silence before and after, [1, samples]
#   audio-prep.py oww-windows MEL.npy END OUT.npy
#       the embedding model's input: the mel frames scaled as openWakeWord
#       does (x / 10 + 2), 16 windows of 76 frames, 8 apart, the last
#       ending at frame END, [16, 76, 32, 1]
#   audio-prep.py oww-features EMBEDDING.npy OUT.npy
#       the classifier's input: the 16 embeddings [16, 1, 1, 96] as one
#       sequence [1, 16, 96]
import os
import shutil
import sys
import wave

import numpy as np

WINDOWS, WINDOW, STRIDE = 16, 76, 8


def vad_v4(src, out):
    os.makedirs(out, exist_ok=True)
    for f in ('input.npy', 'sr.npy'):
        shutil.copyfile(os.path.join(src, f), os.path.join(out, f))
    for f in ('h.npy', 'c.npy'):
        np.save(os.path.join(out, f), np.zeros((2, 1, 64), np.float32))


def oww_audio(path, out):
    with wave.open(path) as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit('%s: not 16-bit mono' % path)
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), '<i2').astype(np.float64)
    n = len(x) * 16000 // rate
    y = np.interp(np.arange(n) * rate / 16000, np.arange(len(x)), x)
    y = np.concatenate([np.zeros(16000), y, np.zeros(16000)])
    np.save(out, y[None, :].astype(np.float32))


def oww_windows(mel, end, out):
    m = np.load(mel)
    m = m.reshape(m.shape[-2], m.shape[-1]) / 10 + 2
    first = end - WINDOW - (WINDOWS - 1) * STRIDE
    if first < 0 or end > m.shape[0]:
        sys.exit('%s: %d frames, no 16 windows end at %d' % (mel, m.shape[0], end))
    w = np.stack([m[first + i * STRIDE:first + i * STRIDE + WINDOW] for i in range(WINDOWS)])
    np.save(out, w[..., None].astype(np.float32))


def oww_features(emb, out):
    e = np.load(emb)
    np.save(out, e.reshape(1, WINDOWS, -1).astype(np.float32))


kind = sys.argv[1] if len(sys.argv) > 1 else ''
if kind == 'vad-v4' and len(sys.argv) == 4:
    vad_v4(sys.argv[2], sys.argv[3])
elif kind == 'oww-audio' and len(sys.argv) == 4:
    oww_audio(sys.argv[2], sys.argv[3])
elif kind == 'oww-windows' and len(sys.argv) == 5:
    oww_windows(sys.argv[2], int(sys.argv[3]), sys.argv[4])
elif kind == 'oww-features' and len(sys.argv) == 4:
    oww_features(sys.argv[2], sys.argv[3])
else:
    sys.exit('usage: audio-prep.py vad-v4 VAD_IN_DIR OUT_DIR | oww-audio WAV OUT.npy | '
             'oww-windows MEL.npy END OUT.npy | oww-features EMBEDDING.npy OUT.npy')
