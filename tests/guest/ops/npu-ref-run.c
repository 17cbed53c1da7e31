// SPDX-License-Identifier: MIT
/*
 * vnpu_ref_run() over the command stream of a libnpu op: the device's
 * checker binds each command as the device would, and the reference runs
 * it on the guest CPU over the op's buffers.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "npu/npu.h"
#include "npu-ref-run.h"
#include "vnpu/vnpu_hw_ops.h"
#include "vnpu_ref.h"

/* Operands of one command live in at most its slots' buffers plus the op's own. */
#define MAX_BUFS	16

/* Host address of the @len bytes at device VA @va in one of @op's buffers. */
static uint8_t *op_host(const struct npu_op *op, uint64_t va, uint64_t len)
{
	struct npu_buffer *bufs[MAX_BUFS];
	size_t n = npu_op_buffers(op, bufs, MAX_BUFS), i;
	void *map;

	for (i = 0; i < n && i < MAX_BUFS; i++) {
		uint64_t base = npu_buffer_va(bufs[i]), size = npu_buffer_size(bufs[i]);

		if (va < base || va - base > size || len > size - (va - base))
			continue;
		if (npu_buffer_map(bufs[i], &map))
			return NULL;
		return (uint8_t *)map + (va - base);
	}
	return NULL;
}

int npu_ref_run(const struct npu_op *op)
{
	size_t ncmd = npu_op_num_commands(op), i;
	struct npu_cmdbuf *cb = NULL;
	int ret, s;

	if (!ncmd)
		return -ENOTSUP;
	ret = npu_cmdbuf_create(NULL, ncmd * sizeof(struct vnpu_cmd_compute), &cb);
	if (!ret)
		ret = npu_op_encode(op, cb);
	for (i = 0; !ret && i < ncmd; i++) {
		struct vnpu_cmd_compute cc;
		struct vnpu_op_info info;
		struct vnpu_op_bind bind;

		if (vnpu_op_check((const uint8_t *)npu_cmdbuf_data(cb) + i * sizeof(cc),
				  sizeof(cc), &cc, &info)) {
			ret = -EINVAL;
			break;
		}
		memset(&bind, 0, sizeof(bind));
		for (s = 0; !ret && s < VNPU_OP_SLOTS; s++) {
			bool chan = cc.t[s].quant == VNPU_QUANT_CHANNEL;

			if (!((info.present >> s) & 1))
				continue;
			bind.data[s] = op_host(op, cc.t[s].va, info.span[s]);
			if (chan)
				bind.qparams[s] = op_host(op, cc.t[s].quant_va, info.qbytes[s]);
			if (!bind.data[s] || (chan && !bind.qparams[s]))
				ret = -EFAULT;
		}
		if (!ret)
			ret = vnpu_ref_run(&cc, &bind);
	}
	npu_cmdbuf_destroy(cb);
	return ret;
}
