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

/*
 * One command buffer submitted on two queues: a busy job (copies back and
 * forth between two 4 MiB buffers) on @qa, then on @qb.  Reset must refuse
 * while either is in flight, whichever finishes first, and succeed once
 * both did; destroying it with a job in flight must be safe.
 */
static void reset_two_queues(struct npu_context *ctx, struct npu_queue *qa,
			     struct npu_queue *qb)
{
	const uint64_t len = 4 << 20;
	struct npu_buffer *x = NULL, *y = NULL, *bufs[2];
	struct npu_fence *fa = NULL, *fb = NULL, *fc = NULL;
	struct npu_cmdbuf *cb = NULL;
	int i, ret, busy_both, busy_one = -1, sa, sb;

	ret = npu_buffer_alloc(ctx, len, 0, &x);
	if (!ret)
		ret = npu_buffer_alloc(ctx, len, 0, &y);
	if (!ret)
		ret = npu_cmdbuf_create(ctx, 64 * 1024, &cb);
	for (i = 0; !ret && i < 64; i++) {
		ret = i & 1 ? npu_cmdbuf_copy(cb, npu_buffer_va(x), npu_buffer_va(y), len) :
			      npu_cmdbuf_copy(cb, npu_buffer_va(y), npu_buffer_va(x), len);
		if (!ret)
			ret = npu_cmdbuf_barrier(cb);
	}
	bufs[0] = x;
	bufs[1] = y;
	if (!ret)
		ret = npu_submit(qa, cb, bufs, 2, NULL, 0, &fa);
	if (!ret)
		ret = npu_submit(qb, cb, NULL, 0, NULL, 0, &fb);
	if (ret) {
		tap_ok(0, "two-queue command buffer: setup %s", npu_strerror(ret));
		goto out;
	}
	busy_both = npu_cmdbuf_reset(cb);
	/* Whichever job finishes first, reset waits for the other. */
	while (npu_fence_is_signaled(fa) == 0 && npu_fence_is_signaled(fb) == 0)
		;
	sa = npu_fence_is_signaled(fa);
	sb = npu_fence_is_signaled(fb);
	if (sa != sb)
		busy_one = npu_cmdbuf_reset(cb);
	tap_ok(busy_both == -EBUSY, "reset with jobs on two queues in flight is -EBUSY (%s)",
	       npu_strerror(busy_both));
	if (sa != sb)
		tap_ok(busy_one == -EBUSY,
		       "reset after the job on queue %c finished, the other not, is -EBUSY (%s)",
		       sa ? 'a' : 'b', npu_strerror(busy_one));
	else
		tap_skip("both finished together", "reset with one of two jobs done");
	ret = npu_fence_wait(fa, npu_deadline_ns(60 * SEC));
	if (!ret)
		ret = npu_fence_wait(fb, npu_deadline_ns(60 * SEC));
	tap_ok(!ret && !npu_fence_error(fa) && !npu_fence_error(fb),
	       "both jobs of the shared command buffer ok (%s)", npu_strerror(ret));
	ret = npu_cmdbuf_reset(cb);
	TAP_RET(ret, 0, "reset once both finished");

	/* Destroy with a job in flight: the job still completes. */
	ret = npu_cmdbuf_copy(cb, npu_buffer_va(y), npu_buffer_va(x), len);
	if (!ret)
		ret = npu_submit(qa, cb, bufs, 2, NULL, 0, &fc);
	npu_cmdbuf_destroy(cb);
	cb = NULL;
	if (!ret)
		ret = npu_fence_wait(fc, npu_deadline_ns(60 * SEC));
	tap_ok(!ret && !npu_fence_error(fc),
	       "a job whose command buffer was destroyed in flight completes ok (%s)",
	       npu_strerror(ret ? ret : npu_fence_error(fc)));
out:
	npu_fence_free(fa);
	npu_fence_free(fb);
	npu_fence_free(fc);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(x);
	npu_buffer_free(y);
}

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

	if (nq >= 2)
		reset_two_queues(ctx, qs[0], qs[1]);
	else
		tap_skip("one hardware queue", "one command buffer on two queues");

	npu_buffer_free(out);
	for (i = 0; i < nq; i++)
		npu_queue_destroy(qs[i]);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return tap_done();
}
