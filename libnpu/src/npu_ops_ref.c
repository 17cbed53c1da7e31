// SPDX-License-Identifier: MIT
/*
 * The CPU fallback of the op API is the reference implementation the
 * device engine is checked against, compiled into libnpu from its one
 * source (ops/vnpu_ref.c) rather than copied, so the two cannot drift.
 * -fvisibility=hidden and libnpu.map keep its vnpu_* symbols internal.
 */
#include "../../ops/vnpu_ref.c"
/* The reference's scratch and abort context (a no-op without an arena). */
#include "../../ops/vnpu_run.c"
