// SPDX-License-Identifier: MIT
/*
 * npu_group_add_device() over CPU copies: a Probe kernel failing with
 * -EIO stands for a device failing.  A copy that left is replaced by a
 * new one which answers the next requests with one runtime's bytes;
 * a group every copy had left (its requests failing -ENODEV) comes back
 * with one added; the graph the group was made from may be freed before.
 * Pipelines refuse it, and a group full of devices says -ENOSPC.
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

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/kernel.h"

#define ROWS	4
#define K	16
#define COLS	8
#define REQUESTS 16

static atomic_int fail_always;

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
	int always = atomic_load(&fail_always);

	(void)state; (void)nin; (void)nout;
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

/* y = Probe(x . W) */
static struct npu_graph *make_graph(uint32_t *x, uint32_t *y)
{
	struct npu_op_params gemm = { .size = sizeof(gemm), .kind = NPU_OP_GEMM };
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	struct npu_kernel_node_desc kn = NPU_KERNEL_NODE_DESC_INIT;
	struct npu_graph *g;
	uint32_t w, h;
	unsigned int i, seed = 3;

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

static float xs[REQUESTS][ROWS * K], ys[REQUESTS][ROWS * COLS], want[REQUESTS][ROWS * COLS];

static void reference(struct npu_graph *g, uint32_t vx, uint32_t vy)
{
	struct npu_runtime *rt;
	unsigned int r, i;

	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	for (r = 0; r < REQUESTS; r++) {
		for (i = 0; i < ROWS * K; i++)
			xs[r][i] = (float)((r * 13 + i * 3) % 17) / 4.0f - 2.0f;
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
						   (void *[]){ xs[r], want[r] }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	}
	npu_runtime_free(rt);
}

/* Submit every request and wait: each outcome in @err, its device in @dev. */
static void stream(struct npu_group *grp, uint32_t vx, uint32_t vy, int *err, uint32_t *dev)
{
	uint64_t t[REQUESTS];
	unsigned int r;

	memset(ys, 0, sizeof(ys));
	for (r = 0; r < REQUESTS; r++) {
		/*
		 * With failing devices, every device may have left before the
		 * last request is submitted: that request's answer is -ENODEV
		 * at once.
		 */
		err[r] = npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
					  (void *[]){ xs[r], ys[r] }, &t[r]);
		assert_true(err[r] == 0 || err[r] == -ENODEV);
	}
	for (r = 0; r < REQUESTS; r++) {
		struct npu_group_result res = NPU_GROUP_RESULT_INIT;

		if (err[r]) {
			dev[r] = UINT32_MAX;
			continue;
		}
		err[r] = npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, &res);
		dev[r] = res.device;
	}
}

/* Every copy leaves; one added afterwards answers everything, right. */
static void test_group_comes_back(void **state)
{
	struct npu_group_device_stats ds = NPU_GROUP_DEVICE_STATS_INIT;
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_context *none[2] = { NULL };
	struct npu_group *grp;
	struct npu_graph *g;
	uint32_t vx, vy, dev[REQUESTS];
	int err[REQUESTS];
	unsigned int r;
	uint64_t ticket;
	size_t index = 99;

	(void)state;
	g = make_graph(&vx, &vy);
	reference(g, vx, vy);
	assert_int_equal(npu_group_create(g, none, 2, NULL, &grp), 0);
	/* the group keeps its own copy of the graph */
	npu_graph_free(g);
	atomic_store(&fail_always, -EIO);
	stream(grp, vx, vy, err, dev);
	for (r = 0; r < REQUESTS; r++)
		assert_true(err[r] == -ENODEV);
	assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
					  (void *[]){ xs[0], ys[0] }, &ticket), -ENODEV);
	assert_int_equal(npu_group_get_stats(grp, &st), 0);
	assert_int_equal(st.active_devices, 0);

	atomic_store(&fail_always, 0);
	assert_int_equal(npu_group_add_device(grp, NULL, &index), 0);
	assert_int_equal(index, 2);
	assert_int_equal(npu_group_num_devices(grp), 3);
	stream(grp, vx, vy, err, dev);
	for (r = 0; r < REQUESTS; r++) {
		assert_int_equal(err[r], 0);
		assert_int_equal(dev[r], 2);
		assert_memory_equal(ys[r], want[r], sizeof(ys[r]));
	}
	assert_int_equal(npu_group_get_device_stats(grp, 2, &ds), 0);
	assert_int_equal(ds.state, NPU_GROUP_DEVICE_ACTIVE);
	assert_int_equal(ds.completed, REQUESTS);
	assert_int_equal(npu_group_get_device_stats(grp, 0, &ds), 0);
	assert_int_equal(ds.state, NPU_GROUP_DEVICE_LEFT);
	assert_int_equal(npu_group_get_stats(grp, &st), 0);
	assert_int_equal(st.active_devices, 1);
	npu_group_free(grp);
}

/* Added devices share the work with the ones still there. */
static void test_added_device_shares(void **state)
{
	struct npu_context *none[1] = { NULL };
	struct npu_group *grp;
	struct npu_graph *g;
	uint32_t vx, vy, dev[REQUESTS];
	int err[REQUESTS];
	unsigned int r;
	size_t index;

	(void)state;
	atomic_store(&fail_always, 0);
	g = make_graph(&vx, &vy);
	reference(g, vx, vy);
	assert_int_equal(npu_group_create(g, none, 1, NULL, &grp), 0);
	npu_graph_free(g);
	for (r = 0; r < 3; r++) {
		assert_int_equal(npu_group_add_device(grp, NULL, &index), 0);
		assert_int_equal(index, r + 1);
	}
	stream(grp, vx, vy, err, dev);
	for (r = 0; r < REQUESTS; r++) {
		assert_int_equal(err[r], 0);
		assert_true(dev[r] < 4);
		assert_memory_equal(ys[r], want[r], sizeof(ys[r]));
	}
	npu_group_free(grp);
}

static void test_arguments(void **state)
{
	struct npu_context *none[2] = { NULL };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group *grp;
	struct npu_graph *g;
	uint32_t vx, vy;
	size_t index, i;
	int ret = 0;

	(void)state;
	atomic_store(&fail_always, 0);
	assert_int_equal(npu_group_add_device(NULL, NULL, &index), -EINVAL);
	g = make_graph(&vx, &vy);
	o.flags = NPU_GROUP_PIPELINE;
	assert_int_equal(npu_group_create(g, none, 2, &o, &grp), 0);
	assert_int_equal(npu_group_add_device(grp, NULL, &index), -EINVAL);
	npu_group_free(grp);
	assert_int_equal(npu_group_create(g, none, 1, NULL, &grp), 0);
	npu_graph_free(g);
	/* 256 devices at most; @index may be NULL */
	for (i = 1; i < 256 && !ret; i++)
		ret = npu_group_add_device(grp, NULL, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(npu_group_num_devices(grp), 256);
	assert_int_equal(npu_group_add_device(grp, NULL, &index), -ENOSPC);
	npu_group_free(grp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_comes_back),
		cmocka_unit_test(test_added_device_shares),
		cmocka_unit_test(test_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
