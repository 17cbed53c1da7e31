/* SPDX-License-Identifier: MIT */
/*
 * The oracle the guest tests check the device against: the reference
 * implementation (vnpu_ref_run(), ops/vnpu_ref.c, compiled into the test)
 * run on the guest CPU.  Not npu_op_run_cpu(): libnpu's CPU path runs the
 * device's own compute engine, so a fault in one of its kernels would
 * show on both sides of the comparison.
 */
#ifndef NPU_REF_RUN_H
#define NPU_REF_RUN_H

#include "npu/npu.h"

/*
 * Run every command @op encodes through the reference, reading and
 * writing the op's device buffers through their mappings (every operand
 * must be bound to a buffer).  0, -ENOTSUP (the op has no device
 * commands), -EINVAL (a command the checker refuses), -EFAULT (an operand
 * outside the op's buffers), -ENOMEM, or the reference's error.
 */
int npu_ref_run(const struct npu_op *op);

#endif /* NPU_REF_RUN_H */
