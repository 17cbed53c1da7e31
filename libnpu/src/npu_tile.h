/* SPDX-License-Identifier: MIT */
/*
 * Splitting one op into device commands that each stay within the
 * device's command limits (hw-spec.rst, "Command limits").  Pure: no
 * device, no buffers; npu_ops.c turns a plan into real commands, and
 * npu_ops_cpu.c runs the same plan on the host, one engine command per
 * tile.
 */
#ifndef NPU_TILE_H
#define NPU_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "npu/npu.h"
#include "vnpu_ref.h"

/*
 * One tile: the command, and for each slot the first channel its
 * per-channel arrays start at (channels are sliced along with the data).
 */
struct npu_tile {
	struct vnpu_cmd_compute c;
	uint32_t qstart[VNPU_OP_SLOTS];
};

struct npu_plan {
	struct npu_tile *t;
	size_t n, cap;
};

/*
 * The limits to plan with: the context's reported ones (interface 1.1's
 * for any not reported, and for @ctx NULL), with TENSOR_BYTES lowered to
 * @max_tile_bytes when that is smaller and not 0.
 */
void npu__op_limits(const struct npu_device_limits *reported,
		    uint64_t max_tile_bytes, struct vnpu_op_limits *lim);

/*
 * Plan @full (placeholder addresses) as commands within @lim, at most
 * @max_cmds of them: GEMM split along its outermost batch axis, M and N;
 * CONV2D along batch and output rows; COPY along its output's three
 * outermost dims; RESIZE along batch and channels; any other op as one
 * command.
 * 0, -ENOMEM, or -E2BIG with *@why a static English reason naming the
 * limit no split satisfies.
 */
int npu__plan(const struct vnpu_cmd_compute *full,
	      const struct vnpu_op_limits *lim, size_t max_cmds,
	      struct npu_plan *p, const char **why);

/*
 * The device's own check of one finished command against @lim: 0, or
 * -E2BIG with *@why naming the limit it breaks.
 */
int npu__check_cmd(const struct vnpu_cmd_compute *c,
		   const struct vnpu_op_limits *lim, const char **why);

#endif /* NPU_TILE_H */
