// SPDX-License-Identifier: MIT
/*
 * Jobs spread round-robin over every hardware queue while reusing a small
 * ring of command buffers, so one BO is used by jobs on different queues
 * (cross-scheduler implicit dependencies) with many jobs in flight.  This
 * is npu-bench's multi-queue throughput phase as a test: every job must
 * complete ok and its WRITE_VALUE land.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "npu/npu.h"
#include "tap.h"

#define JOBS	2000
#define DEPTH	32
#define SEC	1000000000ll

int main(void)
{
	struct npu_fence *ring[DEPTH] = { 0 };
	struct npu_cmdbuf *cbs[DEPTH];
	struct npu_device_info info;
	struct npu_queue *qs[8];
	struct npu_context *ctx;
	struct npu_device *dev;
	struct npu_buffer *out;
	uint64_t *m;
	int i, nq, ret, failed = 0, bad = 0, submitted = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = npu_device_open(0, &dev);
	if (!ret)
		ret = npu_context_create(dev, &ctx);
	if (ret)
		TAP_BAIL("open: %s", npu_strerror(ret));
	npu_device_get_info(dev, &info, sizeof(info));
	nq = info.num_queues < 8 ? (int)info.num_queues : 8;
	for (i = 0; i < nq; i++)
		if ((ret = npu_queue_create(ctx, (uint32_t)i, NPU_PRIORITY_NORMAL,
					    &qs[i])))
			TAP_BAIL("queue %d: %s", i, npu_strerror(ret));
	if (npu_buffer_alloc(ctx, JOBS * 8, 0, &out) ||
	    npu_buffer_map(out, (void **)&m))
		TAP_BAIL("buffer");
	memset(m, 0, JOBS * 8);
	for (i = 0; i < DEPTH; i++)
		if (npu_cmdbuf_create(ctx, 64, &cbs[i]))
			TAP_BAIL("cmdbuf");

	for (i = 0; i < JOBS; i++) {
		int k = i % DEPTH;

		if (ring[k]) {
			if (npu_fence_wait(ring[k], npu_deadline_ns(30 * SEC)) ||
			    npu_fence_error(ring[k]))
				failed++;
			npu_fence_free(ring[k]);
			ring[k] = NULL;
		}
		npu_cmdbuf_reset(cbs[k]);
		npu_cmdbuf_write_value(cbs[k], npu_buffer_va(out) + 8u * i,
				       0xabc00000ull + (uint64_t)i);
		/* Only the command BO is listed: queues share it, not out. */
		ret = npu_submit(qs[i % nq], cbs[k], NULL, 0, NULL, 0, &ring[k]);
		if (ret) {
			printf("# job %d: %s\n", i, npu_strerror(ret));
			break;
		}
		submitted++;
	}
	for (i = 0; i < DEPTH; i++) {
		if (ring[i] && (npu_fence_wait(ring[i], npu_deadline_ns(30 * SEC)) ||
				npu_fence_error(ring[i])))
			failed++;
		npu_fence_free(ring[i]);
		npu_cmdbuf_destroy(cbs[i]);
	}
	tap_ok(submitted == JOBS, "%d jobs submitted over %d queues", submitted,
	       nq);
	tap_ok(!failed, "every job completed ok (%d failed)", failed);
	for (i = 0; i < submitted; i++)
		bad += m[i] != 0xabc00000ull + (uint64_t)i;
	tap_ok(!bad, "every job's write landed (%d missing)", bad);

	npu_buffer_free(out);
	for (i = 0; i < nq; i++)
		npu_queue_destroy(qs[i]);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return tap_done();
}
