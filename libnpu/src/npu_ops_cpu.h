/* SPDX-License-Identifier: MIT */
/*
 * The op API's CPU path: the device's compute engine over host memory,
 * with the reference implementation for what the engine does not take,
 * bounded in work, bytes and time (struct npu_cpu_limits).
 */
#ifndef NPU_OPS_CPU_H
#define NPU_OPS_CPU_H

#include <stdbool.h>
#include <stddef.h>

#include "npu/ops.h"
#include "npu_tile.h"
#include "vnpu_ref.h"

struct npu_op;

/*
 * Which implementation ran one CPU run (filled when npu_cpu_run.trace is
 * set): @engine_cmds commands through the engine, one per tile;
 * @reference true when the reference ran the whole op instead, with
 * @why saying why when it was too large for a device command and could
 * not be split (NULL for an op only the reference implements).
 */
struct npu_cpu_trace {
	size_t engine_cmds;
	bool reference;
	const char *why;
};

/*
 * What bounds one CPU run: @lim with every default filled in (deadline
 * NPU_TIMEOUT_INFINITE for none), @err/@err_size the message buffer
 * (may be NULL/0).
 */
struct npu_cpu_run {
	struct npu_cpu_limits lim;
	char *err;
	size_t err_size;
	struct npu_cpu_trace *trace;	/* NULL: not recorded */
};

/*
 * @run from the caller's @limits (NULL: the defaults).  -EINVAL for a
 * size of 0 or unknown flags, -E2BIG for unknown non-zero fields.
 */
int npu__cpu_run_init(struct npu_cpu_run *run,
		      const struct npu_cpu_limits *limits, char *err,
		      size_t err_size);

/* "GEMM", "POOL2D", ... for a command's opcode. */
const char *npu__cpu_op_name(unsigned int opcode);

/*
 * How the CPU path runs an op that one engine command cannot take: the
 * device's tiles (npu__plan() against the engine's command limits, with
 * placeholder addresses relative to the untiled command's), or none and
 * @why when no split fits, so the reference runs it whole.  Both empty
 * for an op one command takes.
 */
struct npu_cpu_tiles {
	struct npu_plan plan;
	const char *why;
};

/*
 * Run @cmd (validated by vnpu_ref_check(), placeholder addresses) over the
 * host operands @bind: through the engine (ops/vnpu_engine*.c, driven by
 * vnpu_compute_exec()) when the command is one the device itself could
 * take, one command per tile of @tiles (may be NULL) when it is beyond
 * the device's command limits, else through the reference.  The work and
 * byte limits apply to the whole op, before the first tile.  0 or a
 * negative errno: -E2BIG beyond @run's work or byte limit (nothing runs),
 * -ETIME at its deadline, -ECANCELED when its cancel callback said stop;
 * the message is in @run->err.
 */
int npu__cpu_exec(const struct vnpu_cmd_compute *cmd,
		  const struct vnpu_op_bind *bind,
		  const struct npu_cpu_tiles *tiles,
		  const struct npu_cpu_run *run);

/*
 * npu_op_run_cpu() with a choice of implementation: @reference runs the
 * reference alone (the oracle the host tests compare the fast path with).
 * @run NULL: the default limits, no message.
 */
int npu__op_run_host(const struct npu_op *op, bool reference,
		     const struct npu_cpu_run *run);

#endif /* NPU_OPS_CPU_H */
