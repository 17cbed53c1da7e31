// SPDX-License-Identifier: MIT
/*
 * The CPU path of the op API runs the device's own compute engine
 * (ops/vnpu_engine*.c, compiled into libnpu from its one source by
 * libnpu/Makefile), not the reference: the engine computes what the
 * reference computes (bit for bit on integer paths, within ops.rst's
 * tolerances on float ones) with blocked SIMD kernels, several times
 * faster on the ops models spend their time in.  The reference stays for
 * what the engine does not take: the CPU-only ops and commands beyond the
 * device's command limits, which vnpu_compute_exec() rejects.
 *
 * vnpu_compute_exec() reaches operands through memory callbacks keyed by
 * device address.  Each slot gets an address range of its own here, and
 * the callbacks map it straight onto the operand's host memory, so
 * nothing is copied: the same map() path the device takes for guest RAM.
 */
#include <errno.h>
#include <string.h>

#include "npu_ops_cpu.h"
#include "vnpu_exec.h"
#include "vnpu_hw.h"

/*
 * Slot i's data lives at (i + 1) << 40 and its per-channel arrays half a
 * range above: far apart enough for any span vnpu_op_check() accepts
 * (< 2^32 bytes), and all within the device's 48-bit address space.
 */
#define SLOT_VA(i)	((uint64_t)((i) + 1) << 40)
#define SLOT_QVA(i)	(SLOT_VA(i) + (1ull << 39))

struct host_mem {
	const struct vnpu_op_bind *bind;
	struct vnpu_op_info info;
};

/* Host address of [@va, @va + @len) in slot data or arrays, else NULL. */
static uint8_t *host_at(const struct host_mem *m, uint64_t va, uint64_t len)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		uint64_t off;

		if (!((m->info.present >> i) & 1))
			continue;
		if (va >= SLOT_VA(i) && va < SLOT_QVA(i)) {
			off = va - SLOT_VA(i);
			if (off > m->info.span[i] || len > m->info.span[i] - off)
				return NULL;
			return (uint8_t *)m->bind->data[i] + off;
		}
		if (va >= SLOT_QVA(i) && va < SLOT_VA(i + 1)) {
			off = va - SLOT_QVA(i);
			if (!m->bind->qparams[i] || off > m->info.qbytes[i] ||
			    len > m->info.qbytes[i] - off)
				return NULL;
			/* Arrays are only ever read (mem_read()). */
			return (uint8_t *)m->bind->qparams[i] + off;
		}
	}
	return NULL;
}

static int mem_read(void *opaque, uint64_t va, void *buf, uint64_t len)
{
	const uint8_t *p = host_at(opaque, va, len);

	if (!p)
		return -EFAULT;
	memmove(buf, p, len);
	return 0;
}

static int mem_write(void *opaque, uint64_t va, const void *buf, uint64_t len)
{
	uint8_t *p = host_at(opaque, va, len);

	if (!p)
		return -EFAULT;
	memmove(p, buf, len);
	return 0;
}

static void *mem_map(void *opaque, uint64_t va, uint64_t len, bool is_write)
{
	(void)is_write;
	return host_at(opaque, va, len);
}

static void mem_unmap(void *opaque, void *host, uint64_t len, bool is_write,
		      uint64_t access_len)
{
	(void)opaque, (void)host, (void)len, (void)is_write, (void)access_len;
}

static const struct vnpu_mem_ops host_mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.map = mem_map,
	.unmap = mem_unmap,
};

int npu__cpu_exec(const struct vnpu_cmd_compute *cmd,
		  const struct vnpu_op_bind *bind)
{
	/* No arena: the caller owns the memory and the time (vnpu_run.h). */
	static const struct vnpu_engine_cfg cfg = { NULL, VNPU_I8_AUTO };
	struct vnpu_compute_result res;
	struct vnpu_cmd_compute c, cc;
	struct host_mem m = { .bind = bind };
	int i, ret;

	if (cmd->hdr.opcode < VNPU_CMD_COMPUTE_FIRST ||
	    cmd->hdr.opcode > VNPU_CMD_COMPUTE_LAST)
		return vnpu_ref_run(cmd, bind);
	if (vnpu_ref_check(cmd, sizeof(*cmd), &cc, &m.info))
		return -EINVAL;
	c = *cmd;
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((m.info.present >> i) & 1))
			continue;
		if (!bind->data[i])
			return -EINVAL;
		c.t[i].va = SLOT_VA(i);
		if (m.info.qbytes[i])
			c.t[i].quant_va = SLOT_QVA(i);
	}
	ret = vnpu_compute_exec(&c, sizeof(c), &host_mem_ops, &m, &cfg, &res);
	/*
	 * -EINVAL: beyond the device's command limits (the host's are far
	 * larger), or a per-channel array with a bad value, which the
	 * reference reports in turn.
	 */
	if (ret == -EINVAL)
		return vnpu_ref_run(cmd, bind);
	return ret;
}
