// SPDX-License-Identifier: MIT
/*
 * Dispatch of compute commands to the op implementations.  Until an opcode
 * is implemented it is rejected like any unknown command, which is also
 * what the device must do for opcodes of a later hardware version.
 */
#include <errno.h>

#include "vnpu_exec.h"
#include "vnpu_hw.h"

int vnpu_compute_exec(const void *cmd, uint32_t size,
		      const struct vnpu_mem_ops *mem, void *opaque,
		      uint64_t *cycles)
{
	(void)cmd;
	(void)size;
	(void)mem;
	(void)opaque;
	*cycles = 0;
	return -EINVAL;
}
