// SPDX-License-Identifier: MIT
/*
 * Dispatch of compute commands: validate, bind every operand to host
 * memory through the device's memory callbacks, run the engine, write the
 * output back, and report the modelled cycles.
 *
 * Operands are bound whole: map() when the device can hand out a host
 * pointer for the span, else one read() into a bounce buffer (and one
 * write() back for the output), never page by page.  An output bounced
 * through write() is written only if the op succeeded; a mapped output is
 * written in place and may be partly written when the command fails or
 * is aborted (vnpu_exec.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu_engine.h"
#include "vnpu_exec.h"
#include "vnpu_hw.h"

#ifndef VNPU_NO_BLAS
#include <cblas.h>
#endif

void vnpu_compute_init(void)
{
#ifndef VNPU_NO_BLAS
	/*
	 * One command runs on one engine thread; the device gets its
	 * parallelism from its engines (and from sharing a large command
	 * among them).  OpenBLAS's own threads would only compete with them
	 * for the host's cores, and while idle they spin in sched_yield():
	 * a profile of QEMU running blazeface-back showed a third of its CPU
	 * time there.
	 */
	openblas_set_num_threads(1);
#endif
}

struct binding {
	void *host[VNPU_OP_SLOTS];
	bool mapped[VNPU_OP_SLOTS];
	void *qp[VNPU_OP_SLOTS];
};

/*
 * Bounce buffers come from the run context's arena, so no guest value
 * sizes a host allocation beyond it: vnpu_op_check() has already bounded
 * every span by the command limits, and the arena bounds their sum.
 */
static int bind_slot(const struct vnpu_cmd_compute *c,
		     const struct vnpu_op_info *info,
		     const struct vnpu_mem_ops *mem, void *opaque,
		     struct vnpu_run_ctx *rc, struct binding *b, int i)
{
	const struct vnpu_tensor_desc *d = &c->t[i];
	bool out = i == VNPU_OP_SLOT_OUT;
	uint64_t len = info->span[i];
	int ret;

	if (info->qbytes[i]) {
		b->qp[i] = vnpu_run_alloc(rc, info->qbytes[i]);
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
	b->host[i] = vnpu_run_alloc(rc, len);
	if (!b->host[i])
		return -ENOMEM;
	/*
	 * A dense output is overwritten entirely; a strided one has gaps
	 * that the write-back must preserve, so it is read first, as is the
	 * output of a COPY that leaves its border as it is.
	 */
	if (out && !(d->flags & VNPU_TENSOR_STRIDED) &&
	    !(c->hdr.opcode == VNPU_OP_COPY &&
	      c->attr.copy.border == VNPU_COPY_BORDER_KEEP))
		return 0;
	return mem->read(opaque, d->va, b->host[i], len);
}

static void unbind(const struct vnpu_op_info *info,
		   const struct vnpu_mem_ops *mem, void *opaque,
		   struct vnpu_run_ctx *rc, struct binding *b, bool wrote)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bool out = i == VNPU_OP_SLOT_OUT;

		if (b->mapped[i])
			mem->unmap(opaque, b->host[i], info->span[i], out,
				   out && !wrote ? 0 : info->span[i]);
		else
			vnpu_run_free(rc, b->host[i]);
		vnpu_run_free(rc, b->qp[i]);
	}
}

int vnpu_compute_exec(const void *cmd, uint32_t size,
		      const struct vnpu_mem_ops *mem, void *opaque,
		      const struct vnpu_engine_cfg *cfg,
		      struct vnpu_compute_result *res)
{
	struct vnpu_run_ctx rc = {
		.arena = cfg ? cfg->arena : NULL,
		.aborted = mem->aborted,
		.opaque = opaque,
		.i8_kernel = cfg ? cfg->i8_kernel : VNPU_I8_AUTO,
	};
	struct vnpu_cmd_compute c;
	struct vnpu_op_info info;
	struct vnpu_op_bind ob;
	struct binding b;
	int i, ret;

	memset(res, 0, sizeof(*res));
	if (vnpu_op_check(cmd, size, &c, &info)) {
		res->err_off = info.err_off;
		return -EINVAL;
	}
	memset(&b, 0, sizeof(b));
	memset(&ob, 0, sizeof(ob));
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info.present >> i) & 1))
			continue;
		ret = bind_slot(&c, &info, mem, opaque, &rc, &b, i);
		if (ret)
			goto out;
		ob.data[i] = b.host[i];
		ob.qparams[i] = b.qp[i];
		if (b.qp[i]) {
			struct vnpu_tv tv;

			/* Array contents are data: checked once read. */
			vnpu_tv_init(&tv, &c.t[i], b.host[i], b.qp[i]);
			if (vnpu_tv_check_quant(&tv)) {
				res->err_off = VNPU_CMD_TENSOR_OFF(i, quant_va);
				ret = -EINVAL;
				goto out;
			}
		}
	}
	ret = vnpu_engine_run(&c, &info, &ob, &rc);
	res->path = rc.path;
	/* Nothing of an abandoned command reaches memory through write(). */
	if (!ret && !b.mapped[VNPU_OP_SLOT_OUT])
		ret = mem->write(opaque, c.t[VNPU_OP_SLOT_OUT].va,
				 b.host[VNPU_OP_SLOT_OUT],
				 info.span[VNPU_OP_SLOT_OUT]);
	if (!ret)
		res->cycles = vnpu_engine_cycles(&c, &info);
out:
	unbind(&info, mem, opaque, &rc, &b, ret == 0);
	if (ret == -ENOMEM && rc.arena && vnpu_arena_exhausted(rc.arena))
		ret = -E2BIG;
	if (rc.arena)
		vnpu_arena_reset(rc.arena);
	return ret;
}
