// SPDX-License-Identifier: MIT
/* ONNX CPU kernels: see ok_util.h for the family. */
#include <stddef.h>

#include "ok_seq.h"

const struct npu_onnx_op *const ok_ops_seq[] = {
	&ok_op_rnn,
	&ok_op_gru,
	&ok_op_lstm,
	&ok_op_dft,
	&ok_op_stft,
	&ok_op_hann_window,
	&ok_op_hamming_window,
	&ok_op_blackman_window,
	&ok_op_mel_weight_matrix,
	&ok_op_non_max_suppression,
	&ok_op_tfidf_vectorizer,
	NULL,
};
