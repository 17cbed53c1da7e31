/* SPDX-License-Identifier: MIT */
/*
 * The seq family of ONNX CPU kernels (ok_seq*.c): the recurrent layers
 * (RNN, GRU, LSTM), signal processing (DFT, STFT, the Hann, Hamming and
 * Blackman windows, MelWeightMatrix), NonMaxSuppression and
 * TfIdfVectorizer.  Private to the family and its tests
 * (tests/host/libnpu/onnx-kseq.c fills these states directly).
 */
#ifndef NPU_ONNX_OK_SEQ_H
#define NPU_ONNX_OK_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#include "ok_util.h"

/* ---- RNN, GRU, LSTM ---------------------------------------------------------- */

enum ok_rnn_kind { OK_RNN, OK_GRU, OK_LSTM };

enum ok_rnn_act {
	OK_ACT_RELU, OK_ACT_TANH, OK_ACT_SIGMOID, OK_ACT_AFFINE,
	OK_ACT_LEAKY_RELU, OK_ACT_THRESHOLDED_RELU, OK_ACT_SCALED_TANH,
	OK_ACT_HARD_SIGMOID, OK_ACT_ELU, OK_ACT_SOFTSIGN, OK_ACT_SOFTPLUS,
};

struct ok_rnn_func {
	enum ok_rnn_act act;
	double alpha, beta;
};

enum ok_rnn_dir { OK_DIR_FORWARD, OK_DIR_REVERSE, OK_DIR_BIDIRECTIONAL };

/* Activations per direction: RNN 1 (f), GRU 2 (f, g), LSTM 3 (f, g, h). */
#define OK_RNN_MAX_FUNCS	3

struct ok_rnn_state {
	enum ok_rnn_kind kind;
	enum ok_rnn_dir direction;
	int64_t hidden_size;		/* 0: from R's shape */
	/* [direction][function]; the reverse direction's in [1] */
	struct ok_rnn_func funcs[2][OK_RNN_MAX_FUNCS];
	double clip;			/* <= 0: no clipping */
	bool linear_before_reset;	/* GRU */
	bool input_forget;		/* LSTM */
	bool batch_major;		/* layout 1 (opset 14) */
};

/* The default activations of @kind in both directions. */
void ok_rnn_defaults(struct ok_rnn_state *st, enum ok_rnn_kind kind);
/*
 * An activation by its ONNX name (case-insensitive, as onnxruntime reads
 * it) and its default alpha and beta; false if unknown.  @uses_alpha and
 * @uses_beta say which of activation_alpha/activation_beta it consumes.
 */
bool ok_rnn_act_parse(const char *name, struct ok_rnn_func *f, bool *uses_alpha,
		      bool *uses_beta);

/* ---- Windows, DFT, STFT, MelWeightMatrix --------------------------------------- */

enum ok_window_kind { OK_WIN_HANN, OK_WIN_HAMMING, OK_WIN_BLACKMAN };

struct ok_window_state {
	enum ok_window_kind kind;
	bool periodic;
	enum npu_dtype dtype;		/* output_datatype */
};

struct ok_mel_state {
	enum npu_dtype dtype;		/* output_datatype */
};

struct ok_dft_state {
	bool inverse, onesided;
	int64_t axis;			/* the attribute (opset 17, default 1) */
};

struct ok_stft_state {
	bool onesided;
};

/* ---- NonMaxSuppression, TfIdfVectorizer ------------------------------------------ */

struct ok_nms_state {
	bool center_point_box;
};

enum ok_tfidf_mode { OK_TFIDF_TF, OK_TFIDF_IDF, OK_TFIDF_TFIDF };

/* Attribute arrays are copies owned by the state (freed by its release). */
struct ok_tfidf_state {
	enum ok_tfidf_mode mode;
	int64_t min_gram, max_gram, max_skip;
	size_t n_counts, n_indexes, n_pool, n_weights;
	int64_t *ngram_counts;		/* start of each n-gram length in the pool */
	int64_t *ngram_indexes;		/* output column of each pool n-gram */
	int64_t *pool;			/* pool_int64s */
	float *weights;			/* NULL: all 1 */
	int64_t out_len;		/* max(ngram_indexes) + 1 */
};

void ok_tfidf_release(void *state);

/* ---- The ops (ok_ops_seq[] lists them) ---------------------------------------- */

extern const struct npu_onnx_op ok_op_rnn, ok_op_gru, ok_op_lstm;
extern const struct npu_onnx_op ok_op_hann_window, ok_op_hamming_window,
	ok_op_blackman_window, ok_op_mel_weight_matrix;
extern const struct npu_onnx_op ok_op_dft, ok_op_stft;
extern const struct npu_onnx_op ok_op_non_max_suppression, ok_op_tfidf_vectorizer;

extern const struct npu_kernel ok_kernel_rnn, ok_kernel_gru, ok_kernel_lstm;
extern const struct npu_kernel ok_kernel_hann_window, ok_kernel_hamming_window,
	ok_kernel_blackman_window;
extern const struct npu_kernel ok_kernel_mel_weight_matrix;
extern const struct npu_kernel ok_kernel_dft;
extern const struct npu_kernel ok_kernel_stft;
extern const struct npu_kernel ok_kernel_non_max_suppression;
extern const struct npu_kernel ok_kernel_tfidf_vectorizer;

#endif /* NPU_ONNX_OK_SEQ_H */
