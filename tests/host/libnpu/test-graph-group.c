// SPDX-License-Identifier: MIT
/*
 * npu_group (graph.h, "One graph on several devices") with CPU copies of
 * a graph, so it runs without a device: requests spread over the copies
 * give the bytes one runtime gives, and a kernel node that fails on
 * command stands for a device failing: -EIO once (the request re-runs on
 * the other copy, which is counted, and the failed copy leaves), the
 * same under NPU_GROUP_NO_FAILOVER (the request fails), -ENODEV on every
 * copy (no copy left: -ENODEV for the request and later submits), and a
 * request's own error (-EINVAL: the copy stays).  Then the argument and
 * ABI checks, the request limit, a wait's deadline and stale tickets.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/kernel.h"

#define ROWS	4
#define K	16
#define COLS	8
#define SEC	1000000000ll

/*
 * What the Probe kernel does on its next runs: copy its input (0), fail
 * once with @fail_once, fail every time with @fail_always, or block
 * until @hold is cleared.
 */
static atomic_int fail_once, fail_always, hold, probe_runs;

static int probe_infer(const void *state, size_t nin,
		       const struct npu_kernel_tensor *const *in, size_t nout,
		       struct npu_kernel_tensor *const *out, char *err, size_t err_size)
{
	(void)state; (void)nin; (void)nout; (void)err; (void)err_size;
	out[0]->dtype = in[0]->dtype;
	out[0]->rank = in[0]->rank;
	memcpy(out[0]->dims, in[0]->dims, sizeof(out[0]->dims));
	return 0;
}

static int probe_run(const void *state, size_t nin, const struct npu_kernel_tensor *const *in,
		     size_t nout, struct npu_kernel_tensor *const *out,
		     struct npu_kernel_call *call)
{
	int once = atomic_exchange(&fail_once, 0), always = atomic_load(&fail_always);

	(void)state; (void)nin; (void)nout;
	atomic_fetch_add(&probe_runs, 1);
	while (atomic_load(&hold))
		sched_yield();
	if (once)
		return npu_kernel_fail(call, once, "failing once, as asked");
	if (always)
		return npu_kernel_fail(call, always, "failing, as asked");
	memcpy(out[0]->data, in[0]->data, in[0]->elems * sizeof(float));
	return 0;
}

static const struct npu_kernel probe = {
	.size = sizeof(struct npu_kernel),
	.name = "Probe",
	.infer = probe_infer,
	.run = probe_run,
};

static float weights[K * COLS];

static uint32_t val(struct npu_graph *g, const char *name, uint32_t rows, uint32_t cols,
		    uint32_t flags, const void *data)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = name;
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 2;
	d.dims[0] = rows;
	d.dims[1] = cols;
	d.flags = flags;
	d.data = data;
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

/* y = Probe(x . W): ids of x and y in *@x, *@y. */
static struct npu_graph *make_graph(uint32_t *x, uint32_t *y)
{
	struct npu_op_params gemm = { .size = sizeof(gemm), .kind = NPU_OP_GEMM };
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	struct npu_kernel_node_desc kn = NPU_KERNEL_NODE_DESC_INIT;
	struct npu_graph *g;
	uint32_t w, h;
	unsigned int i, seed = 7;

	for (i = 0; i < K * COLS; i++) {
		seed = seed * 1103515245u + 12345u;
		weights[i] = (float)(seed >> 16 & 0xff) / 64.0f - 2.0f;
	}
	assert_int_equal(npu_graph_create(&g), 0);
	*x = val(g, "x", ROWS, K, NPU_VALUE_INPUT, NULL);
	w = val(g, "w", K, COLS, 0, weights);
	h = val(g, "h", ROWS, COLS, 0, NULL);
	*y = val(g, "y", ROWS, COLS, NPU_VALUE_OUTPUT, NULL);
	n.name = "mm";
	n.kind = NPU_NODE_OP;
	n.op = &gemm;
	n.num_inputs = 2;
	n.inputs = (uint32_t[]){ *x, w };
	n.output = h;
	assert_int_equal(npu_graph_add_node(g, &n, NULL), 0);
	kn.name = "probe";
	kn.kernel = &probe;
	kn.num_inputs = 1;
	kn.inputs = &h;
	kn.num_outputs = 1;
	kn.outputs = y;
	assert_int_equal(npu_graph_add_kernel_node(g, &kn, NULL), 0);
	return g;
}

static void input(float *x, unsigned int request)
{
	unsigned int i;

	for (i = 0; i < ROWS * K; i++)
		x[i] = (float)((request * 31 + i * 7) % 23) / 8.0f - 1.0f;
}

static void reset_probe(void)
{
	atomic_store(&fail_once, 0);
	atomic_store(&fail_always, 0);
	atomic_store(&hold, 0);
	atomic_store(&probe_runs, 0);
}

static struct npu_group *cpu_group(struct npu_graph *g, size_t copies, uint32_t flags,
				   uint32_t max_requests)
{
	struct npu_context *none[4] = { NULL };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group *grp;

	o.flags = flags;
	o.max_requests = max_requests;
	assert_int_equal(npu_group_create(g, none, copies, &o, &grp), 0);
	assert_int_equal(npu_group_num_devices(grp), copies);
	return grp;
}

#define REQUESTS 24

/* Every request's output is one runtime's bytes for its input. */
static void test_spread_matches_one_runtime(void **state)
{
	static float x[REQUESTS][ROWS * K], y[REQUESTS][ROWS * COLS], want[ROWS * COLS];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_runtime *rt;
	struct npu_group *grp;
	struct npu_graph *g;
	uint64_t t[REQUESTS], answered = 0;
	uint32_t vx, vy;
	unsigned int r, d;

	(void)state;
	reset_probe();
	g = make_graph(&vx, &vy);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	grp = cpu_group(g, 3, 0, 0);
	npu_graph_free(g);
	for (r = 0; r < REQUESTS; r++) {
		input(x[r], r);
		memset(y[r], 0xff, sizeof(y[r]));
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vy, vx },
						  (void *[]){ y[r], x[r] }, &t[r]), 0);
	}
	for (r = 0; r < REQUESTS; r++) {
		struct npu_group_result res = NPU_GROUP_RESULT_INIT;

		assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, &res), 0);
		assert_int_equal(res.error, 0);
		assert_int_equal(res.attempts, 1);
		assert_true(res.device < 3);
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x[r], want }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
		assert_memory_equal(y[r], want, sizeof(want));
	}
	for (d = 0; d < 3; d++) {
		struct npu_group_device_stats ds = NPU_GROUP_DEVICE_STATS_INIT;

		assert_int_equal(npu_group_get_device_stats(grp, d, &ds), 0);
		assert_int_equal(ds.state, NPU_GROUP_DEVICE_ACTIVE);
		assert_int_equal(ds.minor, UINT32_MAX);
		assert_int_equal(ds.failed, 0);
		answered += ds.completed;
	}
	assert_int_equal(answered, REQUESTS);
	assert_int_equal(npu_group_get_stats(grp, &st), 0);
	assert_int_equal(st.submitted, REQUESTS);
	assert_int_equal(st.completed, REQUESTS);
	assert_int_equal(st.failed + st.failovers, 0);
	assert_int_equal(st.active_devices, 3);
	npu_group_free(grp);
	npu_runtime_free(rt);
}

/*
 * Requests on a two-copy group while the next probe run fails with
 * @error: each request's outcome in @err, the group's counters in @st,
 * the copies' in @ds.
 */
static void run_with_failure(uint32_t flags, int error, bool always, int *err,
			     struct npu_group_result *res, struct npu_group_stats *st,
			     struct npu_group_device_stats *ds, float (*y)[ROWS * COLS],
			     float (*want)[ROWS * COLS])
{
	static float x[8][ROWS * K];
	struct npu_runtime *rt;
	struct npu_group *grp;
	struct npu_graph *g;
	uint64_t t[8];
	uint32_t vx, vy;
	unsigned int r;

	reset_probe();
	g = make_graph(&vx, &vy);
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	grp = cpu_group(g, 2, flags, 0);
	npu_graph_free(g);
	for (r = 0; r < 8; r++) {
		input(x[r], r);
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x[r], want[r] }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
		memset(y[r], 0, sizeof(y[r]));
	}
	atomic_store(&probe_runs, 0);
	if (always)
		atomic_store(&fail_always, error);
	else
		atomic_store(&fail_once, error);
	for (r = 0; r < 8; r++) {
		int ret = npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
					   (void *[]){ x[r], y[r] }, &t[r]);

		/* once no copy is left, submits fail at once */
		if (ret) {
			assert_int_equal(ret, -ENODEV);
			err[r] = ret;
			res[r].attempts = 0;
			t[r] = 0;
		}
	}
	for (r = 0; r < 8; r++) {
		if (!t[r])
			continue;
		res[r] = (struct npu_group_result)NPU_GROUP_RESULT_INIT;
		err[r] = npu_group_wait(grp, t[r], npu_deadline_ns(60 * SEC), &res[r]);
		assert_int_equal(err[r], res[r].error);
	}
	assert_int_equal(npu_group_get_stats(grp, st), 0);
	for (r = 0; r < 2; r++) {
		ds[r] = (struct npu_group_device_stats)NPU_GROUP_DEVICE_STATS_INIT;
		assert_int_equal(npu_group_get_device_stats(grp, r, &ds[r]), 0);
	}
	npu_group_free(grp);
	npu_runtime_free(rt);
}

static void test_failover(void **state)
{
	static float y[8][ROWS * COLS], want[8][ROWS * COLS];
	struct npu_group_result res[8];
	struct npu_group_device_stats ds[2];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	int err[8], r, twice = 0;

	(void)state;
	run_with_failure(0, -EIO, false, err, res, &st, ds, y, want);
	for (r = 0; r < 8; r++) {
		assert_int_equal(err[r], 0);
		assert_memory_equal(y[r], want[r], sizeof(want[r]));
		twice += res[r].attempts == 2;
	}
	assert_int_equal(twice, 1);
	assert_int_equal(st.failovers, 1);
	assert_int_equal(st.completed, 8);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.active_devices, 1);
	/* the copy that failed left, with its error, and answered no more */
	r = ds[0].state == NPU_GROUP_DEVICE_LEFT ? 0 : 1;
	assert_int_equal(ds[r].state, NPU_GROUP_DEVICE_LEFT);
	assert_int_equal(ds[r].error, -EIO);
	assert_int_equal(ds[r].failed, 1);
	assert_int_equal(ds[!r].state, NPU_GROUP_DEVICE_ACTIVE);
	assert_int_equal(ds[!r].failed, 0);
	assert_int_equal(ds[0].completed + ds[1].completed, 8);
}

static void test_no_failover(void **state)
{
	static float y[8][ROWS * COLS], want[8][ROWS * COLS];
	struct npu_group_result res[8];
	struct npu_group_device_stats ds[2];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	int err[8], r, failed = 0;

	(void)state;
	run_with_failure(NPU_GROUP_NO_FAILOVER, -EIO, false, err, res, &st, ds, y, want);
	for (r = 0; r < 8; r++) {
		if (err[r]) {
			assert_int_equal(err[r], -EIO);
			failed++;
			continue;
		}
		assert_memory_equal(y[r], want[r], sizeof(want[r]));
	}
	assert_int_equal(failed, 1);
	assert_int_equal(st.failovers, 0);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.active_devices, 1);
}

static void test_every_copy_fails(void **state)
{
	static float y[8][ROWS * COLS], want[8][ROWS * COLS];
	struct npu_group_result res[8];
	struct npu_group_device_stats ds[2];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	int err[8], r;

	(void)state;
	run_with_failure(0, -ENODEV, true, err, res, &st, ds, y, want);
	for (r = 0; r < 8; r++) {
		assert_int_equal(err[r], -ENODEV);
		/* never twice on one copy: two copies, at most two attempts */
		assert_true(res[r].attempts <= 2);
	}
	assert_int_equal(st.active_devices, 0);
	assert_int_equal(st.completed, 0);
	assert_int_equal(ds[0].state, NPU_GROUP_DEVICE_LEFT);
	assert_int_equal(ds[1].state, NPU_GROUP_DEVICE_LEFT);
	assert_int_equal(ds[0].error, -ENODEV);
	assert_true(atomic_load(&probe_runs) <= 2);
}

static void test_request_error_keeps_the_copy(void **state)
{
	static float y[8][ROWS * COLS], want[8][ROWS * COLS];
	struct npu_group_result res[8];
	struct npu_group_device_stats ds[2];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	int err[8], r, failed = 0;

	(void)state;
	run_with_failure(0, -EINVAL, false, err, res, &st, ds, y, want);
	for (r = 0; r < 8; r++)
		failed += err[r] == -EINVAL;
	assert_int_equal(failed, 1);
	assert_int_equal(st.failovers, 0);
	assert_int_equal(st.active_devices, 2);
	assert_int_equal(ds[0].state, NPU_GROUP_DEVICE_ACTIVE);
	assert_int_equal(ds[1].state, NPU_GROUP_DEVICE_ACTIVE);
}

static void test_arguments(void **state)
{
	struct npu_context *none[2] = { NULL, NULL };
	struct npu_group_device_stats ds = NPU_GROUP_DEVICE_STATS_INIT;
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct {
		struct npu_group_options o;
		uint64_t extra;
	} big = { .o = NPU_GROUP_OPTIONS_INIT };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group *grp = NULL;
	struct npu_graph *g;
	float x[ROWS * K] = { 0 }, y[ROWS * COLS];
	uint64_t t;
	uint32_t vx, vy;

	(void)state;
	reset_probe();
	g = make_graph(&vx, &vy);
	assert_int_equal(npu_group_create(NULL, none, 2, NULL, &grp), -EINVAL);
	assert_int_equal(npu_group_create(g, none, 2, NULL, NULL), -EINVAL);
	assert_int_equal(npu_group_create(g, none, 0, NULL, &grp), -EINVAL);
	assert_int_equal(npu_group_create(g, NULL, 2, NULL, &grp), -EINVAL);
	o.size = 0;
	assert_int_equal(npu_group_create(g, none, 2, &o, &grp), -EINVAL);
	o.size = sizeof(o);
	o.flags = 1u << 30;
	assert_int_equal(npu_group_create(g, none, 2, &o, &grp), -EINVAL);
	o.flags = 0;
	o.max_requests = 65537;
	assert_int_equal(npu_group_create(g, none, 2, &o, &grp), -EINVAL);
	/* a newer caller's options: unknown bytes must be zero */
	big.o.size = sizeof(big);
	big.extra = 1;
	assert_int_equal(npu_group_create(g, none, 2, &big.o, &grp), -E2BIG);
	big.extra = 0;
	assert_int_equal(npu_group_create(g, none, 2, &big.o, &grp), 0);
	assert_null(npu_group_runtime(grp, 2));
	assert_non_null(npu_group_runtime(grp, 1));
	assert_int_equal(npu_group_get_device_stats(grp, 2, &ds), -EINVAL);
	npu_group_free(grp);

	grp = cpu_group(g, 2, 0, 2);
	npu_graph_free(g);
	/* every input and output, each once */
	assert_int_equal(npu_group_submit(grp, 1, &vx, (void *[]){ x }, &t), -EINVAL);
	assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vx },
					  (void *[]){ x, x }, &t), -EINVAL);
	assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy + 1 },
					  (void *[]){ x, y }, &t), -EINVAL);
	assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
					  (void *[]){ x, NULL }, &t), -EINVAL);
	assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
					  (void *[]){ x, y }, NULL), -EINVAL);
	assert_int_equal(npu_group_wait(grp, 12345, 0, NULL), -ENOENT);

	/* the request limit, and a wait that passes its deadline */
	{
		uint64_t t1, t2, t3;
		struct npu_group_result res = NPU_GROUP_RESULT_INIT;

		atomic_store(&hold, 1);
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x, y }, &t1), 0);
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x, y }, &t2), 0);
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x, y }, &t3), -EAGAIN);
		assert_int_equal(npu_group_wait(grp, t1, npu_deadline_ns(10000000), &res),
				 -ETIMEDOUT);
		atomic_store(&hold, 0);
		assert_int_equal(npu_group_wait(grp, t1, NPU_TIMEOUT_INFINITE, &res), 0);
		assert_int_equal(npu_group_wait(grp, t1, NPU_TIMEOUT_INFINITE, &res), -ENOENT);
		/* a slot's next ticket is not the last one's */
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x, y }, &t3), 0);
		assert_true(t3 != t1 && t3 != t2);
		assert_int_equal(npu_group_wait(grp, t1, NPU_TIMEOUT_INFINITE, NULL), -ENOENT);
		assert_int_equal(npu_group_wait(grp, t2, NPU_TIMEOUT_INFINITE, NULL), 0);
		assert_int_equal(npu_group_wait(grp, t3, NPU_TIMEOUT_INFINITE, NULL), 0);
	}
	/* an older caller's smaller struct gets only its fields */
	{
		struct npu_group_stats small;

		memset(&small, 0xee, sizeof(small));
		small.size = offsetof(struct npu_group_stats, submitted);
		assert_int_equal(npu_group_get_stats(grp, &small), 0);
		assert_int_equal(small.active_devices, 2);
		assert_true(small.submitted == 0xeeeeeeeeeeeeeeeeull);
	}
	st.size = 0;
	assert_int_equal(npu_group_get_stats(grp, &st), -EINVAL);
	npu_group_free(grp);
	npu_group_free(NULL);
	assert_int_equal(npu_group_num_devices(NULL), 0);
}

/* Freeing a group with requests queued and running does not wait for them all. */
static void test_free_with_requests_queued(void **state)
{
	static float x[16][ROWS * K], y[16][ROWS * COLS];
	struct npu_group *grp;
	struct npu_graph *g;
	uint32_t vx, vy;
	uint64_t t;
	int r;

	(void)state;
	reset_probe();
	g = make_graph(&vx, &vy);
	grp = cpu_group(g, 2, 0, 0);
	npu_graph_free(g);
	for (r = 0; r < 16; r++)
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x[r], y[r] }, &t), 0);
	npu_group_free(grp);
	assert_true(atomic_load(&probe_runs) <= 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_matches_one_runtime),
		cmocka_unit_test(test_failover),
		cmocka_unit_test(test_no_failover),
		cmocka_unit_test(test_every_copy_fails),
		cmocka_unit_test(test_request_error_keeps_the_copy),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_free_with_requests_queued),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
