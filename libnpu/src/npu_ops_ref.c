// SPDX-License-Identifier: MIT
/*
 * The reference implementation the device engine is checked against,
 * compiled into libnpu from its one source (ops/vnpu_ref.c) rather than
 * copied, so the two cannot drift.  The CPU path (npu_ops_cpu.c) runs it
 * for what the engine does not take, the engine falls back on it for ops
 * it has no fast kernel for, and the host tests use it as the oracle.
 * -fvisibility=hidden and libnpu.map keep its vnpu_* symbols internal.
 */
#include "../../ops/vnpu_ref.c"
/* The reference's scratch and abort context (a no-op without an arena). */
#include "../../ops/vnpu_run.c"
