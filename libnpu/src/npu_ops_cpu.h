/* SPDX-License-Identifier: MIT */
/*
 * The op API's CPU path: the device's compute engine over host memory,
 * with the reference implementation for what the engine does not take.
 */
#ifndef NPU_OPS_CPU_H
#define NPU_OPS_CPU_H

#include <stdbool.h>

#include "vnpu_ref.h"

struct npu_op;

/*
 * Run @cmd (validated by vnpu_ref_check(), placeholder addresses) over the
 * host operands @bind: through the engine (ops/vnpu_engine*.c, driven by
 * vnpu_compute_exec()) when the command is one the device itself could
 * take, else through the reference.  0 or a negative errno.
 */
int npu__cpu_exec(const struct vnpu_cmd_compute *cmd,
		  const struct vnpu_op_bind *bind);

/*
 * npu_op_run_cpu() with a choice of implementation: @reference runs the
 * reference alone (the oracle the host tests compare the fast path with).
 */
int npu__op_run_host(const struct npu_op *op, bool reference);

#endif /* NPU_OPS_CPU_H */
