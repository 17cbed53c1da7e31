/* SPDX-License-Identifier: MIT */
/* The benchmark's peer libraries (bench-peers.c): one thread each. */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stdbool.h>
#include <stdint.h>

/* Timing policy of every case: best of PEER_REPS batches of >= this. */
#define PEER_REPS		5
#define PEER_MIN_SECONDS	0.03

/*
 * One NHWC convolution in the engine's layouts: X [1][h][w][ci], W
 * [co][kh][kw][ci/groups], Y [1][oh][ow][co], bias [co]; ReLU.  int8:
 * X and Y uint8 with zero point 0, W int8 with zero point 0, int32 bias.
 */
struct peer_conv {
	uint32_t h, w, ci, co, kh, kw, sh, sw, pt, pl, pb, pr, groups, oh, ow;
	bool int8;
	float xs, ws, ys;
	const float *x_f32, *w_f32, *b_f32;
	const uint8_t *x_u8;
	const int8_t *w_s8;
	const int32_t *b_s32;
	float *y_f32;		/* outputs, written by the peer */
	uint8_t *y_u8;
};

enum peer_xnn_kind { PEER_XNN_F32, PEER_XNN_QS8, PEER_XNN_QU8 };

void peers_init(void);
/* Process CPU seconds (all threads) since some fixed point. */
double bench_cpu_now(void);
/* CPU seconds per call of @fn(@arg), best of several batches. */
double peer_time(void (*fn)(void *), void *arg);
/* Process CPU seconds per wall second of the last peer_time(). */
extern double peer_cpu_per_wall;
/* Seconds per run; the output is left in @p's y. */
double peer_xnn_conv(const struct peer_conv *p, enum peer_xnn_kind kind);
double peer_dnnl_conv(const struct peer_conv *p);

#endif
