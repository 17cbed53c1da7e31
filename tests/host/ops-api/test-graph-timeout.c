// SPDX-License-Identifier: MIT
/*
 * A graph run's deadline and cancel on the device path, without a device:
 * this program defines the libdrm calls libnpu makes (drmIoctl, the
 * syncobj calls), which take precedence over libdrm.so's, so the library
 * talks to the fake kernel below (tests/host/libnpu/test-submit.c's, with
 * waits that block until their deadline).  Jobs do not run; a test
 * decides when each one finishes.
 *
 * npu_runtime_wait()'s -ETIMEDOUT leaves the run in flight, and
 * npu_runtime_error() then names what was running: the device segment
 * whose job has not finished.  npu_runtime_cancel() keeps the segments
 * after it from starting.  A kernel node between device segments waits
 * for the job before it and sees its operands in the device buffers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <xf86drm.h>

#include "npu_internal.h"
#include "npu/graph.h"
#include "npu/kernel.h"

/* ---- The fake kernel ------------------------------------------------------ */

#define MAX_OBJS	256
#define BO_SLOT		(1u << 20)	/* memfd bytes per BO */

static struct {
	uint32_t next_bo, next_sync;
	atomic_uint next_job;
	atomic_bool signalled[MAX_OBJS];	/* by syncobj handle */
	uint32_t job_sync[MAX_OBJS];		/* by job id */
	uint64_t bo_size[MAX_OBJS];		/* by GEM handle */
	pthread_mutex_t lock;			/* the worker submits too */
	atomic_uint blocked;			/* waits without a deadline */
} k;

/* Until @handle signals or the absolute @deadline passes. */
static bool wait_signalled(uint32_t handle, int64_t deadline)
{
	if (deadline == NPU_TIMEOUT_INFINITE)
		atomic_fetch_add(&k.blocked, 1);
	while (!atomic_load(&k.signalled[handle])) {
		if (npu_time_ns() >= deadline)
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
	return true;
}

int drmIoctl(int fd, unsigned long request, void *arg)
{
	int ret = 0;

	(void)fd;
	pthread_mutex_lock(&k.lock);
	if (request == DRM_IOCTL_VNPU_BO_CREATE) {
		struct drm_vnpu_bo_create *c = arg;

		assert_true(k.next_bo + 1 < MAX_OBJS && c->size <= BO_SLOT);
		c->handle = ++k.next_bo;
		c->size = (c->size + 4095) & ~4095ull;
		c->va = 0x100000000ull + (uint64_t)c->handle * BO_SLOT;
		k.bo_size[c->handle] = c->size;
	} else if (request == DRM_IOCTL_VNPU_BO_INFO) {
		struct drm_vnpu_bo_info *i = arg;

		i->mmap_offset = (uint64_t)(i->handle - 1) * BO_SLOT;
		i->va = 0x100000000ull + (uint64_t)i->handle * BO_SLOT;
		i->size = k.bo_size[i->handle];
	} else if (request == DRM_IOCTL_VNPU_SUBMIT) {
		struct drm_vnpu_submit *s = arg;

		assert_true(k.next_job + 1 < MAX_OBJS && s->out_syncobj);
		s->job_id = atomic_load(&k.next_job) + 1;
		k.job_sync[s->job_id] = s->out_syncobj;
		atomic_store(&k.next_job, (unsigned int)s->job_id);
	} else if (request == DRM_IOCTL_VNPU_JOB_STATUS) {
		struct drm_vnpu_job_status *js = arg;

		js->state = atomic_load(&k.signalled[k.job_sync[js->job_id]]) ?
			    DRM_VNPU_JOB_OK : DRM_VNPU_JOB_PENDING;
	} else if (request == DRM_IOCTL_VNPU_WAIT) {
		struct drm_vnpu_wait *w = arg;
		uint32_t sync = w->id && w->id <= k.next_job ? k.job_sync[w->id] : 0;

		pthread_mutex_unlock(&k.lock);
		if (!sync) {
			errno = ENOENT;
			return -1;
		}
		if (wait_signalled(sync, w->timeout_ns))
			return 0;
		errno = ETIME;
		return -1;
	} else {
		errno = ENOTTY;
		ret = -1;
	}
	pthread_mutex_unlock(&k.lock);
	return ret;
}

int drmSyncobjCreate(int fd, uint32_t flags, uint32_t *handle)
{
	(void)fd;
	(void)flags;
	pthread_mutex_lock(&k.lock);
	assert_true(k.next_sync + 1 < MAX_OBJS);
	*handle = ++k.next_sync;
	atomic_store(&k.signalled[*handle], false);
	pthread_mutex_unlock(&k.lock);
	return 0;
}

int drmSyncobjDestroy(int fd, uint32_t handle)
{
	(void)fd;
	(void)handle;
	return 0;
}

int drmSyncobjWait(int fd, uint32_t *handles, unsigned int num_handles,
		   int64_t timeout_nsec, unsigned int flags,
		   uint32_t *first_signaled)
{
	unsigned int i;

	(void)fd;
	(void)flags;
	/* libnpu waits for one fence at a time here. */
	assert_int_equal(num_handles, 1);
	for (i = 0; i < num_handles; i++)
		if (!wait_signalled(handles[i], timeout_nsec))
			return -ETIME;
	if (first_signaled)
		*first_signaled = 0;
	return 0;
}

int drmSyncobjTimelineWait(int fd, uint32_t *handles, uint64_t *points,
			   unsigned int num_handles, int64_t timeout_nsec,
			   unsigned int flags, uint32_t *first_signaled)
{
	(void)points;
	return drmSyncobjWait(fd, handles, num_handles, timeout_nsec, flags,
			      first_signaled);
}

/* Finish every job submitted so far. */
static void finish_all(void)
{
	unsigned int j, n = atomic_load(&k.next_job);

	for (j = 1; j <= n; j++)
		atomic_store(&k.signalled[k.job_sync[j]], true);
}

/* A context on a memfd, so BO mappings are real shared memory. */
static struct npu_context *ctx;

static int setup(void **state)
{
	(void)state;
	memset(&k, 0, sizeof(k));
	pthread_mutex_init(&k.lock, NULL);
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
	pthread_mutex_destroy(&k.lock);
	return 0;
}

/* ---- Graphs --------------------------------------------------------------- */

static uint32_t val(struct npu_graph *g, const char *name, enum npu_dtype dt,
		    uint32_t rank, const uint32_t *dims, uint32_t flags,
		    const void *data)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = name;
	d.dtype = dt;
	d.rank = rank;
	d.flags = flags;
	d.data = data;
	memcpy(d.dims, dims, 4ull * rank);
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

static void node(struct npu_graph *g, const char *name,
		 const struct npu_op_params *p, uint32_t nin, const uint32_t *in,
		 uint32_t out)
{
	struct npu_node_desc d = NPU_NODE_DESC_INIT;

	d.name = name;
	d.kind = NPU_NODE_OP;
	d.op = p;
	d.num_inputs = nin;
	d.inputs = in;
	d.output = out;
	assert_int_equal(npu_graph_add_node(g, &d, NULL), 0);
}

struct dev_graph {
	struct npu_graph *g;
	struct npu_runtime *rt;
	struct npu_queue *q;
	float x[8], y[8];
};

/*
 * x [1,8] -> GEMM "fc" (device) -> h; with @cpu_tail, h is then pooled
 * by "pool", a 2048-tap window the device cannot take (beyond its kernel
 * limit), so the run has a CPU segment after the device one and runs on
 * a worker thread.
 */
static void dev_graph_make(struct dev_graph *dg, bool cpu_tail)
{
	static const float w[64] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	uint32_t d2[2] = { 1, 8 }, d88[2] = { 8, 8 }, d4[4] = { 1, 1, 1, 8 };
	struct npu_op_params gemm = NPU_OP_PARAMS_INIT, pool = NPU_OP_PARAMS_INIT;
	uint32_t ix, iw, ih, iy, in[2], ids[2];
	void *data[2];

	memset(dg, 0, sizeof(*dg));
	assert_int_equal(npu_graph_create(&dg->g), 0);
	ix = val(dg->g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	iw = val(dg->g, "w", NPU_DTYPE_FP32, 2, d88, 0, w);
	ih = val(dg->g, "h", NPU_DTYPE_FP32, cpu_tail ? 4 : 2, cpu_tail ? d4 : d2,
		 cpu_tail ? 0 : NPU_VALUE_OUTPUT, NULL);
	gemm.kind = NPU_OP_GEMM;
	in[0] = ix;
	in[1] = iw;
	if (cpu_tail) {
		/* GEMM writes [1,8]: view it as NHWC [1,1,1,8] for the pool. */
		uint32_t ig = val(dg->g, "g", NPU_DTYPE_FP32, 2, d2, 0, NULL);
		struct npu_node_desc r = NPU_NODE_DESC_INIT;

		node(dg->g, "fc", &gemm, 2, in, ig);
		r.name = "view";
		r.kind = NPU_NODE_RESHAPE;
		r.num_inputs = 1;
		r.inputs = &ig;
		r.output = ih;
		assert_int_equal(npu_graph_add_node(dg->g, &r, NULL), 0);
		iy = val(dg->g, "y", NPU_DTYPE_FP32, 4, d4, NPU_VALUE_OUTPUT, NULL);
		pool.kind = NPU_OP_POOL2D;
		pool.pool.kind = NPU_POOL_MAX;
		pool.pool.kernel[0] = 2048;
		pool.pool.kernel[1] = 1;
		pool.pool.stride[0] = pool.pool.stride[1] = 1;
		pool.pool.pad[0] = 1023;
		pool.pool.pad[2] = 1024;
		node(dg->g, "pool", &pool, 1, &ih, iy);
	} else {
		node(dg->g, "fc", &gemm, 2, in, ih);
		iy = ih;
	}
	assert_int_equal(npu_graph_compile(dg->g, ctx, 0, &dg->rt), 0);
	assert_int_equal(npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &dg->q), 0);
	ids[0] = ix;
	ids[1] = iy;
	data[0] = dg->x;
	data[1] = dg->y;
	assert_int_equal(npu_runtime_setup(dg->rt, 2, ids, data), 0);
}

static void dev_graph_free(struct dev_graph *dg)
{
	npu_runtime_free(dg->rt);
	npu_queue_destroy(dg->q);
	npu_graph_free(dg->g);
}

static size_t device_segments(struct npu_runtime *rt)
{
	size_t dev = 0;

	npu_runtime_num_segments(rt, &dev);
	return dev;
}

/* Device segments only: the run is the caller's, its wait times out. */
static void test_wait_timeout_names_segment(void **state)
{
	struct dev_graph dg;

	(void)state;
	dev_graph_make(&dg, false);
	assert_int_equal(device_segments(dg.rt), 1);
	assert_int_equal(npu_runtime_run(dg.rt, dg.q, npu_deadline_ns(2000000)), -ETIMEDOUT);
	assert_string_equal(npu_runtime_error(dg.rt),
			    "device segment 0, nodes 'fc' (GEMM) to 'fc' (GEMM), was running");
	/* Still in flight: the job finishing ends it. */
	finish_all();
	assert_int_equal(npu_runtime_wait(dg.rt, NPU_TIMEOUT_INFINITE), 0);
	/* It succeeded after all. */
	assert_string_equal(npu_runtime_error(dg.rt), "");
	dev_graph_free(&dg);
}

/*
 * A device segment, then a CPU one: the worker waits for the device job.
 * The caller's wait times out naming that segment; cancelled, the run
 * ends with -ECANCELED once the job is done, without starting the CPU
 * node.
 */
static void test_cancel_between_segments(void **state)
{
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
	struct dev_graph dg;
	uint32_t pool_node = 2;

	(void)state;
	dev_graph_make(&dg, true);
	assert_int_equal(device_segments(dg.rt), 1);
	assert_int_equal(npu_runtime_node_profile(dg.rt, pool_node, &p), 0);
	assert_int_equal(p.where, NPU_WHERE_CPU);
	assert_int_equal(npu_runtime_run_async(dg.rt, dg.q), 0);
	/* The worker waits for the device job before the CPU node. */
	while (!atomic_load(&k.blocked))
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	assert_int_equal(npu_runtime_wait(dg.rt, npu_deadline_ns(2000000)), -ETIMEDOUT);
	assert_string_equal(npu_runtime_error(dg.rt),
			    "device segment 0, nodes 'fc' (GEMM) to 'fc' (GEMM), was running");
	assert_int_equal(npu_runtime_cancel(dg.rt), 0);
	finish_all();
	assert_int_equal(npu_runtime_wait(dg.rt, NPU_TIMEOUT_INFINITE), -ECANCELED);
	assert_string_equal(npu_runtime_error(dg.rt),
			    "node 'pool' (POOL2D): cancelled before it started");
	dev_graph_free(&dg);
}

/*
 * Tally: t = s + x (int64 [8]: a static int64 and the graph input), and
 * h = g (fp32 [1,8], the device's GEMM result, passed on to the next).
 */
static atomic_uint tally_runs;

static int tally_infer(const void *state, size_t nin,
		       const struct npu_kernel_tensor *const *in, size_t nout,
		       struct npu_kernel_tensor *const *out, char *err, size_t size)
{
	(void)state, (void)nin, (void)nout, (void)err, (void)size;
	*out[0] = *in[0];
	*out[1] = *in[1];
	out[0]->data = out[1]->data = NULL;
	return 0;
}

static int tally_run(const void *state, size_t nin,
		     const struct npu_kernel_tensor *const *in, size_t nout,
		     struct npu_kernel_tensor *const *out, struct npu_kernel_call *call)
{
	const int64_t *s = in[1]->data;
	const float *x = in[2]->data;
	int64_t *t = out[1]->data;
	int i;

	(void)state, (void)nin, (void)nout, (void)call;
	memcpy(out[0]->data, in[0]->data, 32);
	for (i = 0; i < 8; i++)
		t[i] = s[i] + (int64_t)x[i];
	atomic_fetch_add(&tally_runs, 1);
	return 0;
}

static const struct npu_kernel tally_kernel = {
	.size = sizeof(struct npu_kernel), .name = "Tally",
	.infer = tally_infer, .run = tally_run,
};

/*
 * x -> GEMM "fc1" (device) -> g -> Tally (CPU, with static s and x) ->
 * h -> GEMM "fc2" (device) -> y, and Tally's t is a graph output: three
 * segments; the kernel runs only once the first job is done, and reads
 * the statics and the input where the device has them.
 */
static void test_kernel_between_device_segments(void **state)
{
	static const float w[64] = { 1 };
	static const int64_t s[8] = { 10, -20, 30, 1ll << 40, 0, 5, 6, 7 };
	uint32_t d2[2] = { 1, 8 }, d88[2] = { 8, 8 }, d8[1] = { 8 };
	struct npu_op_params gemm = NPU_OP_PARAMS_INIT;
	struct npu_kernel_node_desc kd = NPU_KERNEL_NODE_DESC_INIT;
	struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
	uint32_t ix, iw, ig, is, ih, it, iy, in[3], outs[2], kn;
	float x[8] = { 1, 2, 3, 4, 5, 6, 7, -8 }, y[8];
	int64_t t[8];
	struct npu_graph *g;
	struct npu_runtime *rt;
	struct npu_queue *q;
	size_t dev = 0;
	int i;

	(void)state;
	atomic_store(&tally_runs, 0);
	assert_int_equal(npu_graph_create(&g), 0);
	ix = val(g, "x", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_INPUT, NULL);
	iw = val(g, "w", NPU_DTYPE_FP32, 2, d88, 0, w);
	ig = val(g, "g", NPU_DTYPE_FP32, 2, d2, 0, NULL);
	is = val(g, "s", NPU_DTYPE_INT64, 1, d8, 0, s);
	ih = val(g, "h", NPU_DTYPE_FP32, 2, d2, 0, NULL);
	it = val(g, "t", NPU_DTYPE_INT64, 1, d8, NPU_VALUE_OUTPUT, NULL);
	iy = val(g, "y", NPU_DTYPE_FP32, 2, d2, NPU_VALUE_OUTPUT, NULL);
	gemm.kind = NPU_OP_GEMM;
	in[0] = ix;
	in[1] = iw;
	node(g, "fc1", &gemm, 2, in, ig);
	in[0] = ig;
	in[1] = is;
	in[2] = ix;
	outs[0] = ih;
	outs[1] = it;
	kd.name = "tally";
	kd.kernel = &tally_kernel;
	kd.num_inputs = 3;
	kd.inputs = in;
	kd.num_outputs = 2;
	kd.outputs = outs;
	assert_int_equal(npu_graph_add_kernel_node(g, &kd, &kn), 0);
	in[0] = ih;
	in[1] = iw;
	node(g, "fc2", &gemm, 2, in, iy);
	assert_int_equal(npu_graph_compile(g, ctx, 0, &rt), 0);
	assert_int_equal(npu_runtime_num_segments(rt, &dev), 3);
	assert_int_equal(dev, 2);
	assert_int_equal(npu_runtime_node_profile(rt, kn, &p), 0);
	assert_int_equal(p.where, NPU_WHERE_CPU);
	assert_int_equal(p.segment, 1);
	assert_string_equal(p.op, "Tally");
	assert_int_equal(npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q), 0);
	assert_int_equal(npu_runtime_setup(rt, 3, (uint32_t[]){ ix, it, iy },
					   (void *const[]){ x, t, y }), 0);
	assert_int_equal(npu_runtime_run_async(rt, q), 0);
	/* the worker waits for fc1's job: the kernel has not run */
	while (!atomic_load(&k.blocked))
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	assert_int_equal(atomic_load(&tally_runs), 0);
	assert_int_equal(atomic_load(&k.next_job), 1);
	finish_all();
	/* then the kernel runs and fc2's job follows it */
	while (atomic_load(&k.next_job) < 2)
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	assert_int_equal(atomic_load(&tally_runs), 1);
	finish_all();
	assert_int_equal(npu_runtime_wait(rt, NPU_TIMEOUT_INFINITE), 0);
	for (i = 0; i < 8; i++)
		assert_true(t[i] == s[i] + (int64_t)x[i]);
	npu_runtime_free(rt);
	npu_queue_destroy(q);
	npu_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wait_timeout_names_segment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_between_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_between_device_segments, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
