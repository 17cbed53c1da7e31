// SPDX-License-Identifier: MIT
/*
 * Dispatch of compute commands: validate, bind every operand to host
 * memory through the device's memory callbacks, run the engine, write the
 * output back, and report the modelled cycles.
 *
 * Operands are bound whole: map() when the device can hand out a host
 * pointer for the span, else one read() into a bounce buffer (and one
 * write() back for the output), never page by page.  Nothing is written
 * to device memory unless the op succeeded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_exec.h"
#include "vnpu_hw.h"

struct binding {
	void *host[VNPU_OP_SLOTS];
	bool mapped[VNPU_OP_SLOTS];
	void *qp[VNPU_OP_SLOTS];
};

static int bind_slot(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info,
		     const struct vnpu_mem_ops *mem, void *opaque,
		     struct binding *b, int i)
{
	const struct vnpu_tensor_desc *d = &c->t[i];
	bool out = i == VNPU_OP_SLOT_OUT;
	uint64_t len = info->span[i];
	int ret;

	if (info->qbytes[i]) {
		b->qp[i] = malloc(info->qbytes[i]);
		if (!b->qp[i])
			return -ENOMEM;
		ret = mem->read(opaque, d->quant_va, b->qp[i], info->qbytes[i]);
		if (ret)
			return ret;
	}
	if (mem->map) {
		b->host[i] = mem->map(opaque, d->va, len, out);
		if (b->host[i]) {
			b->mapped[i] = true;
			return 0;
		}
	}
	b->host[i] = malloc(len);
	if (!b->host[i])
		return -ENOMEM;
	/*
	 * A dense output is overwritten entirely; a strided one has gaps
	 * that the write-back must preserve, so it is read first.
	 */
	if (out && !(d->flags & VNPU_TENSOR_STRIDED))
		return 0;
	return mem->read(opaque, d->va, b->host[i], len);
}

static void unbind(const struct vnpu_op_info *info,
		   const struct vnpu_mem_ops *mem, void *opaque,
		   struct binding *b, bool wrote)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool out = i == VNPU_OP_SLOT_OUT;

		if (b->mapped[i])
			mem->unmap(opaque, b->host[i], info->span[i], out,
				   out && !wrote ? 0 : info->span[i]);
		else
			free(b->host[i]);
		free(b->qp[i]);
	}
}

int vnpu_compute_exec(const void *cmd, uint32_t size,
		      const struct vnpu_mem_ops *mem, void *opaque,
		      uint64_t *cycles)
{
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	struct vnpu_op_bind ob;
	struct binding b;
	int i, ret;

	*cycles = 0;
	if (vnpu_op_check(cmd, size, &c, &info))
		return -EINVAL;
	memset(&b, 0, sizeof(b));
	memset(&ob, 0, sizeof(ob));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info.present >> i) & 1))
			continue;
		ret = bind_slot(&c, &info, mem, opaque, &b, i);
		if (ret)
			goto out;
		ob.data[i] = b.host[i];
		ob.qparams[i] = b.qp[i];
	}
	ret = vnpu_engine_run(&c, &info, &ob);
	if (!ret && !b.mapped[VNPU_OP_SLOT_OUT])
		ret = mem->write(opaque, c.t[VNPU_OP_SLOT_OUT].va,
				 b.host[VNPU_OP_SLOT_OUT],
				 info.span[VNPU_OP_SLOT_OUT]);
	if (!ret)
		*cycles = vnpu_engine_cycles(&c, &info);
out:
	unbind(&info, mem, opaque, &b, ret == 0);
	return ret;
}
