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
#include "vnpu_ref.h"

struct npu_op;

/*
 * What bounds one CPU run: @lim with every default filled in (deadline
 * NPU_TIMEOUT_INFINITE for none), @err/@err_size the message buffer
 * (may be NULL/0).
 */
struct npu_cpu_run {
	struct npu_cpu_limits lim;
	char *err;
	size_t err_size;
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
 * Run @cmd (validated by vnpu_ref_check(), placeholder addresses) over the
 * host operands @bind: through the engine (ops/vnpu_engine*.c, driven by
 * vnpu_compute_exec()) when the command is one the device itself could
 * take, else through the reference.  0 or a negative errno: -E2BIG beyond
 * @run's work or byte limit (nothing runs), -ETIME at its deadline,
 * -ECANCELED when its cancel callback said stop; the message is in
 * @run->err.
 */
int npu__cpu_exec(const struct vnpu_cmd_compute *cmd,
		  const struct vnpu_op_bind *bind, const struct npu_cpu_run *run);

/*
 * npu_op_run_cpu() with a choice of implementation: @reference runs the
 * reference alone (the oracle the host tests compare the fast path with).
 * @run NULL: the default limits, no message.
 */
int npu__op_run_host(const struct npu_op *op, bool reference,
		     const struct npu_cpu_run *run);

#endif /* NPU_OPS_CPU_H */
