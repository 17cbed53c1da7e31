// SPDX-License-Identifier: MIT
/*
 * libnpu with two devices: npu_device_list() has both, a buffer of
 * device 0 is exported and imported into a context of device 1, which
 * copies what device 0's job wrote (the job's fence passed over as a
 * sync_file), and npu_buffer_wait_idle() on the exporter's buffer waits
 * for device 1's write to it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "npu/npu.h"
#include "tap.h"

#define SIZE	(1u << 20)
#define PAGE	4096u
#define SEC	1000000000ll
#define REPLY	0x0dd0c0de0dd0c0deull

static uint32_t pattern(uint32_t page)
{
	return 0x7ea00000u ^ (page * 2654435761u);
}

struct side {
	struct npu_device *dev;
	struct npu_context *ctx;
	struct npu_queue *q;
};

static int side_open(uint32_t index, struct side *s)
{
	int ret = npu_device_open(index, &s->dev);

	if (!ret)
		ret = npu_context_create(s->dev, &s->ctx);
	if (!ret)
		ret = npu_queue_create(s->ctx, 0, NPU_PRIORITY_NORMAL, &s->q);
	return ret;
}

int main(void)
{
	struct npu_buffer *buf0, *imp1, *local1, *bufs[2];
	struct npu_fence *f0, *in1, *f1, *f2;
	struct npu_cmdbuf *cb0, *cb1;
	struct npu_device_list *list;
	struct side d0, d1;
	uint32_t *m0, *l1, p, i;
	int ret, dmabuf, sync_file, bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = npu_device_list(&list);
	TAP_RET(ret, 0, "npu_device_list");
	if (ret)
		return tap_done();
	tap_ok(npu_device_list_count(list) == 2, "it lists two devices (%zu)",
	       npu_device_list_count(list));
	npu_device_list_free(list);
	if (side_open(0, &d0) || side_open(1, &d1))
		TAP_BAIL("open both devices");

	if (npu_buffer_alloc(d0.ctx, SIZE, 0, &buf0) || npu_buffer_map(buf0, (void **)&m0) ||
	    npu_cmdbuf_create(d0.ctx, (SIZE / PAGE) * 32 + 64, &cb0))
		TAP_BAIL("device 0 buffers");
	memset(m0, 0, SIZE);
	for (p = 0; p < SIZE / PAGE; p++)
		if (npu_cmdbuf_fill(cb0, npu_buffer_va(buf0) + p * PAGE, PAGE, pattern(p)))
			TAP_BAIL("device 0 commands");
	ret = npu_submit(d0.q, cb0, &buf0, 1, NULL, 0, &f0);
	TAP_RET(ret, 0, "device 0 fills its buffer, page by page");
	if (ret)
		return tap_done();

	ret = npu_buffer_export(buf0, &dmabuf);
	TAP_RET(ret, 0, "export it");
	if (ret)
		return tap_done();
	ret = npu_buffer_import(d1.ctx, dmabuf, &imp1);
	close(dmabuf);
	TAP_RET(ret, 0, "import it into a context of device 1");
	if (ret)
		return tap_done();
	ret = npu_fence_export_sync_file(f0, &sync_file);
	if (!ret)
		ret = npu_fence_import_sync_file(d1.ctx, sync_file, &in1);
	TAP_RET(ret, 0, "device 0's fence becomes a fence of device 1's context");
	if (ret)
		return tap_done();
	close(sync_file);

	if (npu_buffer_alloc(d1.ctx, SIZE, 0, &local1) || npu_buffer_map(local1, (void **)&l1) ||
	    npu_cmdbuf_create(d1.ctx, 4096, &cb1))
		TAP_BAIL("device 1 buffers");
	memset(l1, 0, SIZE);
	npu_cmdbuf_copy(cb1, npu_buffer_va(local1), npu_buffer_va(imp1), SIZE);
	bufs[0] = imp1;
	bufs[1] = local1;
	ret = npu_submit(d1.q, cb1, bufs, 2, &in1, 1, &f1);
	if (!ret)
		ret = npu_fence_wait(f1, npu_deadline_ns(60 * SEC));
	TAP_RET(ret, 0, "device 1 copies the imported buffer once device 0 is done");
	TAP_RET(npu_fence_error(f1), 0, "its job ends well");
	for (i = 0; i < SIZE / 4; i++)
		bad += l1[i] != pattern(i * 4 / PAGE);
	tap_ok(!bad, "device 1 read device 0's data (%d bad words)", bad);

	/* A long job on device 1 whose last command writes the shared buffer. */
	npu_cmdbuf_reset(cb1);
	for (p = 0; p < 64; p++)
		npu_cmdbuf_copy(cb1, npu_buffer_va(local1), npu_buffer_va(imp1), SIZE);
	npu_cmdbuf_barrier(cb1);
	npu_cmdbuf_write_value(cb1, npu_buffer_va(imp1), REPLY);
	ret = npu_submit(d1.q, cb1, bufs, 2, NULL, 0, &f2);
	TAP_RET(ret, 0, "device 1 writes the shared buffer");
	ret = npu_buffer_wait_idle(buf0, npu_deadline_ns(60 * SEC));
	TAP_RET(ret, 0, "waiting on the exporter's buffer for idle");
	tap_ok(*(volatile uint64_t *)m0 == REPLY,
	       "waits for device 1's job: device 0's mapping shows its write");
	npu_fence_wait(f2, npu_deadline_ns(60 * SEC));

	npu_fence_free(f2);
	npu_fence_free(f1);
	npu_fence_free(in1);
	npu_fence_free(f0);
	npu_cmdbuf_destroy(cb1);
	npu_cmdbuf_destroy(cb0);
	npu_buffer_free(local1);
	npu_buffer_free(imp1);
	npu_buffer_free(buf0);
	npu_queue_destroy(d1.q);
	npu_queue_destroy(d0.q);
	npu_context_destroy(d1.ctx);
	npu_context_destroy(d0.ctx);
	npu_device_close(d1.dev);
	npu_device_close(d0.dev);
	return tap_done();
}
