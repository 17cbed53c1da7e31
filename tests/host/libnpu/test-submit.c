// SPDX-License-Identifier: MIT
/*
 * Submission, fences and job outcomes without a device: this program
 * defines the libdrm calls libnpu makes (drmIoctl, the syncobj calls), and
 * a definition in the executable takes precedence over libdrm.so's, so the
 * library's objects (linked in) talk to the fake kernel below.  Jobs do
 * not run; a test decides when each one finishes and with what outcome,
 * which a real device cannot be made to do on demand (the driver orders
 * jobs that share a buffer).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <xf86drm.h>

#include "npu_internal.h"

/* ---- The fake kernel ------------------------------------------------------ */

#define MAX_OBJS	256
#define BO_SLOT		(1u << 20)	/* memfd bytes per BO */

static struct {
	uint32_t next_bo, next_sync;
	uint64_t next_job;
	bool signalled[MAX_OBJS];	/* by syncobj handle */
	uint32_t job_state[MAX_OBJS];	/* by job id */
	uint32_t job_sync[MAX_OBJS];	/* by job id */
	uint64_t bo_size[MAX_OBJS];	/* by GEM handle */
	/* SUBMIT: 0 queue the job; else finish it at once in this state */
	uint32_t auto_state;
	int submit_errno;		/* SUBMIT fails with it when set */
} k;

int drmIoctl(int fd, unsigned long request, void *arg)
{
	(void)fd;
	if (request == DRM_IOCTL_VNPU_BO_CREATE) {
		struct drm_vnpu_bo_create *c = arg;

		assert_true(k.next_bo + 1 < MAX_OBJS && c->size <= BO_SLOT);
		c->handle = ++k.next_bo;
		c->size = (c->size + 4095) & ~4095ull;
		c->va = 0x100000000ull + (uint64_t)c->handle * BO_SLOT;
		k.bo_size[c->handle] = c->size;
		return 0;
	}
	if (request == DRM_IOCTL_VNPU_BO_INFO) {
		struct drm_vnpu_bo_info *i = arg;

		i->mmap_offset = (uint64_t)(i->handle - 1) * BO_SLOT;
		i->va = 0x100000000ull + (uint64_t)i->handle * BO_SLOT;
		i->size = k.bo_size[i->handle];
		return 0;
	}
	if (request == DRM_IOCTL_VNPU_SUBMIT) {
		struct drm_vnpu_submit *s = arg;

		if (k.submit_errno) {
			errno = k.submit_errno;
			return -1;
		}
		assert_true(k.next_job + 1 < MAX_OBJS && s->out_syncobj);
		s->job_id = ++k.next_job;
		k.job_sync[s->job_id] = s->out_syncobj;
		k.job_state[s->job_id] = DRM_VNPU_JOB_PENDING;
		if (k.auto_state) {
			k.job_state[s->job_id] = k.auto_state;
			k.signalled[s->out_syncobj] = true;
		}
		return 0;
	}
	if (request == DRM_IOCTL_VNPU_JOB_STATUS) {
		struct drm_vnpu_job_status *js = arg;

		js->state = k.job_state[js->job_id];
		js->fault_va = 0x1234;
		js->fault_flags = DRM_VNPU_FAULT_WRITE;
		js->cycles = 77;
		return 0;
	}
	if (request == DRM_IOCTL_VNPU_WAIT) {
		struct drm_vnpu_wait *w = arg;

		/* Like the syncobj wait below: the deadline passes at once. */
		assert_int_equal(w->type, DRM_VNPU_WAIT_JOB);
		if (!w->id || w->id > k.next_job) {
			errno = ENOENT;
			return -1;
		}
		if (k.signalled[k.job_sync[w->id]])
			return 0;
		errno = ETIME;
		return -1;
	}
	errno = ENOTTY;
	return -1;
}

int drmSyncobjCreate(int fd, uint32_t flags, uint32_t *handle)
{
	(void)fd;
	(void)flags;
	assert_true(k.next_sync + 1 < MAX_OBJS);
	*handle = ++k.next_sync;
	k.signalled[*handle] = false;
	return 0;
}

int drmSyncobjDestroy(int fd, uint32_t handle)
{
	(void)fd;
	(void)handle;
	return 0;
}

/* Never blocks: the deadline "passes" at once for an unsignalled fence. */
int drmSyncobjWait(int fd, uint32_t *handles, unsigned int num_handles,
		   int64_t timeout_nsec, unsigned int flags,
		   uint32_t *first_signaled)
{
	unsigned int i, done = 0;

	(void)fd;
	(void)timeout_nsec;
	for (i = 0; i < num_handles; i++) {
		if (k.signalled[handles[i]]) {
			if (!done++ && first_signaled)
				*first_signaled = i;
		}
	}
	if (flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL ? done == num_handles : done)
		return 0;
	return -ETIME;
}

int drmSyncobjTimelineWait(int fd, uint32_t *handles, uint64_t *points,
			   unsigned int num_handles, int64_t timeout_nsec,
			   unsigned int flags, uint32_t *first_signaled)
{
	(void)points;
	return drmSyncobjWait(fd, handles, num_handles, timeout_nsec, flags,
			      first_signaled);
}

/* Finish job @f with DRM_VNPU_JOB_* @state. */
static void finish(const struct npu_fence *f, uint32_t state)
{
	k.job_state[f->job_id] = state;
	k.signalled[k.job_sync[f->job_id]] = true;
}

/* A context on a memfd, so BO mappings are real shared memory. */
static struct npu_context *ctx;

static int setup(void **state)
{
	(void)state;
	memset(&k, 0, sizeof(k));
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -1;
	/* Never dropped to zero: the test closes the fd itself. */
	atomic_init(&ctx->refs, 1000);
	ctx->fd = memfd_create("fake-npu", 0);
	if (ctx->fd < 0 || ftruncate(ctx->fd, (off_t)MAX_OBJS * BO_SLOT))
		return -1;
	ctx->info.caps = NPU_CAP_COMPUTE | NPU_CAP_MMU;
	ctx->info.num_queues = 4;
	ctx->info.max_cmd_size = 1 << 20;
	ctx->info.va_bits = 48;
	pthread_mutex_init(&ctx->lock, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(ctx->fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->handles);
	free(ctx);
	return 0;
}

/* ---- Tests ---------------------------------------------------------------- */

/*
 * One command buffer submitted on two queues.  Before 1.3 reset looked at
 * the last submission only, so once the second queue's job finished it
 * reset (and let the caller rewrite) a buffer the first queue's job was
 * still reading: the second assertion below failed.
 */
static void test_reset_two_queues(void **state)
{
	struct npu_queue *q0, *q1;
	struct npu_cmdbuf *cb;
	struct npu_fence *f0, *f1, *f2;

	(void)state;
	assert_int_equal(npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q0), 0);
	assert_int_equal(npu_queue_create(ctx, 1, NPU_PRIORITY_NORMAL, &q1), 0);
	assert_int_equal(npu_cmdbuf_create(ctx, 256, &cb), 0);
	assert_int_equal(npu_cmdbuf_write_value(cb, 0x1000, 1), 0);
	assert_int_equal(npu_submit(q0, cb, NULL, 0, NULL, 0, &f0), 0);
	assert_int_equal(npu_submit(q1, cb, NULL, 0, NULL, 0, &f1), 0);
	assert_int_equal(npu_cmdbuf_reset(cb), -EBUSY);

	/* the later job, on the other queue, finishes first */
	finish(f1, DRM_VNPU_JOB_OK);
	assert_int_equal(npu_fence_is_signaled(f1), 1);
	assert_int_equal(npu_fence_is_signaled(f0), 0);
	assert_int_equal(npu_cmdbuf_reset(cb), -EBUSY);
	assert_int_equal(npu_cmdbuf_size(cb), 24);

	finish(f0, DRM_VNPU_JOB_OK);
	assert_int_equal(npu_cmdbuf_reset(cb), 0);
	assert_int_equal(npu_cmdbuf_size(cb), 0);
	assert_int_equal(cb->num_inflight, 0);

	/*
	 * Destroy while a job is in flight: no wait, nothing leaks (ASan),
	 * and the fence the caller holds stays usable.
	 */
	assert_int_equal(npu_cmdbuf_write_value(cb, 0x1000, 2), 0);
	assert_int_equal(npu_submit(q0, cb, NULL, 0, NULL, 0, &f2), 0);
	npu_cmdbuf_destroy(cb);
	assert_int_equal(npu_fence_wait(f2, 0), -ETIMEDOUT);
	finish(f2, DRM_VNPU_JOB_OK);
	assert_int_equal(npu_fence_wait(f2, 0), 0);
	npu_fence_free(f0);
	npu_fence_free(f1);
	npu_fence_free(f2);
	npu_queue_destroy(q0);
	npu_queue_destroy(q1);
}

/* Finished jobs are forgotten on the next submit: tracking stays small. */
static void test_inflight_pruned(void **state)
{
	struct npu_queue *q;
	struct npu_cmdbuf *cb;
	struct npu_fence *f;
	int i;

	(void)state;
	assert_int_equal(npu_queue_create(ctx, 2, NPU_PRIORITY_LOW, &q), 0);
	assert_int_equal(npu_cmdbuf_create(ctx, 64, &cb), 0);
	assert_int_equal(npu_cmdbuf_nop(cb, 8), 0);
	for (i = 0; i < 50; i++) {
		assert_int_equal(npu_submit(q, cb, NULL, 0, NULL, 0, &f), 0);
		finish(f, DRM_VNPU_JOB_OK);
		npu_fence_free(f);
	}
	assert_true(cb->num_inflight <= 1);
	assert_true(cb->cap_inflight <= 4);
	assert_int_equal(npu_cmdbuf_reset(cb), 0);
	npu_cmdbuf_destroy(cb);
	npu_queue_destroy(q);
}

/*
 * npu_fence_wait() says whether the job finished, never how: 0 for a
 * faulted job, -ETIMEDOUT for the deadline (-ETIME before 1.3).  The
 * outcome is NPU_ERR_JOB_* (before 1.3 -EFAULT and -EIO, which a failing
 * ioctl returns too).
 */
static void test_wait_and_outcome(void **state)
{
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	struct {
		struct npu_job_status st;
		uint8_t newer[8];
	} big;
	uint8_t small[offsetof(struct npu_job_status, fault_va) + 8];
	struct npu_queue *q;
	struct npu_cmdbuf *cb;
	struct npu_fence *f, *g;
	size_t first = 9;

	(void)state;
	assert_int_equal(npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q), 0);
	assert_int_equal(npu_cmdbuf_create(ctx, 64, &cb), 0);
	assert_int_equal(npu_cmdbuf_nop(cb, 8), 0);
	assert_int_equal(npu_submit(q, cb, NULL, 0, NULL, 0, &f), 0);
	assert_int_equal(npu_submit(q, cb, NULL, 0, NULL, 0, &g), 0);

	assert_int_equal(npu_fence_wait(f, npu_deadline_ns(1000)), -ETIMEDOUT);
	assert_int_equal(npu_fence_is_signaled(f), 0);
	assert_int_equal(npu_fence_error(f), NPU_ERR_JOB_PENDING);
	assert_int_equal(npu_fence_wait_many((struct npu_fence *[]){ f, g }, 2,
					     false, 0, &first), -ETIMEDOUT);

	finish(f, DRM_VNPU_JOB_MMU_FAULT);
	assert_int_equal(npu_fence_wait(f, NPU_TIMEOUT_INFINITE), 0);
	assert_int_equal(npu_fence_wait_many((struct npu_fence *[]){ g, f }, 2,
					     false, 0, &first), 0);
	assert_int_equal(first, 1);
	assert_int_equal(npu_fence_error(f), NPU_ERR_JOB_MMU_FAULT);
	assert_true(NPU_ERR_IS_JOB(npu_fence_error(f)));
	assert_int_equal(npu_fence_status(f, &st), 0);
	assert_int_equal(st.size, sizeof(st));
	assert_int_equal(st.state, NPU_JOB_MMU_FAULT);
	assert_true(st.fault_write && st.fault_va == 0x1234 && st.cycles == 77);

	/* an older caller's status: only its prefix is written */
	memset(small, 0xa5, sizeof(small));
	((struct npu_job_status *)(void *)small)->size = sizeof(small) - 8;
	assert_int_equal(npu_fence_status(f, (void *)small), 0);
	assert_int_equal(((struct npu_job_status *)(void *)small)->state,
			 NPU_JOB_MMU_FAULT);
	assert_int_equal(small[sizeof(small) - 1], 0xa5);
	/* a newer caller's: its fields we do not know read zero */
	memset(&big, 0xa5, sizeof(big));
	big.st.size = sizeof(big);
	assert_int_equal(npu_fence_status(f, &big.st), 0);
	assert_int_equal(big.st.size, sizeof(st));
	assert_int_equal(big.newer[7], 0);

	finish(g, DRM_VNPU_JOB_DMA_ERROR);
	assert_int_equal(npu_fence_wait(g, 0), 0);
	assert_int_equal(npu_fence_error(g), NPU_ERR_JOB_DMA_ERROR);
	assert_int_not_equal(npu_fence_error(g), -EIO);

	npu_fence_free(f);
	npu_fence_free(g);
	npu_cmdbuf_destroy(cb);
	npu_queue_destroy(q);
}

/*
 * npu_op_run() tells a job's outcome (NPU_ERR_JOB_*) from a failed call
 * (a negative errno): the same -EFAULT before 1.3 for an MMU fault of the
 * job and for an ioctl that failed with EFAULT.
 */
static void test_op_run_outcome(void **state)
{
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	struct npu_tensor *ta, *tb, *ty;
	const struct npu_tensor *in[2];
	enum npu_op_where where = 0;
	struct npu_buffer *buf;
	struct npu_queue *q;
	struct npu_op *op;
	const uint32_t d[2] = { 4, 4 };
	void *map;

	(void)state;
	assert_int_equal(npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q), 0);
	assert_int_equal(npu_buffer_alloc(ctx, 4096, 0, &buf), 0);
	assert_int_equal(npu_buffer_map(buf, &map), 0);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, d, &ta), 0);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, d, &tb), 0);
	assert_int_equal(npu_tensor_create(NPU_DTYPE_FP32, 2, d, &ty), 0);
	assert_int_equal(npu_tensor_bind_buffer(ta, buf, 0), 0);
	assert_int_equal(npu_tensor_bind_buffer(tb, buf, 64), 0);
	assert_int_equal(npu_tensor_bind_buffer(ty, buf, 128), 0);
	in[0] = ta;
	in[1] = tb;
	p.kind = NPU_OP_GEMM;
	assert_int_equal(npu_op_create(&p, in, 2, ty, &op), 0);
	npu_tensor_free(ta);
	npu_tensor_free(tb);
	npu_tensor_free(ty);
	npu_buffer_free(buf);
	assert_int_equal(npu_op_supported(op, NULL), 1);

	k.auto_state = DRM_VNPU_JOB_OK;
	assert_int_equal(npu_op_run(op, q, NPU_TIMEOUT_INFINITE, &where), 0);
	assert_int_equal(where, NPU_OP_RAN_DEVICE);

	k.auto_state = DRM_VNPU_JOB_MMU_FAULT;
	assert_int_equal(npu_op_run(op, q, NPU_TIMEOUT_INFINITE, NULL),
			 NPU_ERR_JOB_MMU_FAULT);
	k.auto_state = DRM_VNPU_JOB_CMD_ERROR;
	assert_int_equal(npu_op_run(op, q, NPU_TIMEOUT_INFINITE, NULL),
			 NPU_ERR_JOB_CMD_ERROR);
	k.auto_state = DRM_VNPU_JOB_TIMEOUT;
	assert_int_equal(npu_op_run(op, q, NPU_TIMEOUT_INFINITE, NULL),
			 NPU_ERR_JOB_TIMEOUT);

	/* the ioctl itself failing is an errno, not a job outcome */
	k.submit_errno = EFAULT;
	assert_int_equal(npu_op_run(op, q, NPU_TIMEOUT_INFINITE, NULL), -EFAULT);
	k.submit_errno = 0;

	/* a job still running at the deadline */
	k.auto_state = 0;
	assert_int_equal(npu_op_run(op, q, npu_deadline_ns(1000), NULL), -ETIMEDOUT);

	npu_op_free(op);
	npu_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reset_two_queues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_and_outcome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_op_run_outcome, setup, teardown),
	};

	return cmocka_run_group_tests_name("libnpu-submit", tests, NULL, NULL);
}
