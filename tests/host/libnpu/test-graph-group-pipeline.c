// SPDX-License-Identifier: MIT
/*
 * npu_group with NPU_GROUP_PIPELINE (graph.h, "One graph split over
 * several devices") over CPU copies, so it runs without a device.  The
 * graph has a residual connection: h1 = x.W1 feeds both h2 = relu(h1.W2)
 * and r = h2 + h1, so a cut between W2's GEMM and the add hands two values
 * on, and a three-stage cut hands h1 past the middle stage.  Every
 * output of many requests, kept several deep, must be the bytes one
 * runtime of the whole graph gives, answered in submission order; stage
 * 0 must run the next request while the last stage still holds one; a
 * request's own error fails that request alone, a device's failure ends
 * the group; bad cuts and options are refused with a message.  A chain
 * of NCHW convolutions cut in the middle hands a 4-D value on (as its
 * NHWC twin) and must give the whole graph's bytes too.  Values handed
 * on live in the shared buffers (no CPU copy, counted), except where a
 * CPU kernel node reads one.
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
#include <time.h>

#include <cmocka.h>

#include "npu/npu.h"
#include "npu/kernel.h"

#define ROWS	4
#define K	16
#define SEC	1000000000ll

/* The Probe kernel (the last node) copies, fails once with @fail_once, or waits on @hold. */
static atomic_int fail_once, hold, probe_runs;

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
	int once = atomic_exchange(&fail_once, 0);
	struct timespec ms = { 0, 1000000 };

	(void)state; (void)nin; (void)nout;
	atomic_fetch_add(&probe_runs, 1);
	while (atomic_load(&hold))
		nanosleep(&ms, NULL);
	if (once)
		return npu_kernel_fail(call, once, "failing once, as asked");
	memcpy(out[0]->data, in[0]->data, in[0]->elems * sizeof(float));
	return 0;
}

static const struct npu_kernel probe = {
	.size = sizeof(struct npu_kernel),
	.name = "Probe",
	.infer = probe_infer,
	.run = probe_run,
};

static float w1[K * K], w2[K * K], w3[K * K];

struct model {
	struct npu_graph *g;
	uint32_t x, y, h1;		/* h1 is an output too */
	uint32_t node_mm2, node_add, node_mm3;
};

static uint32_t val(struct npu_graph *g, const char *name, uint32_t flags, const void *data)
{
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	uint32_t id;

	d.name = name;
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 2;
	d.dims[0] = data ? K : ROWS;
	d.dims[1] = K;
	d.flags = flags;
	d.data = data;
	assert_int_equal(npu_graph_add_value(g, &d, &id), 0);
	return id;
}

static uint32_t node(struct npu_graph *g, const char *name, const struct npu_op_params *op,
		     uint32_t a, uint32_t b, uint32_t out)
{
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	uint32_t id;

	n.name = name;
	n.kind = NPU_NODE_OP;
	n.op = op;
	n.num_inputs = 2;
	n.inputs = (uint32_t[]){ a, b };
	n.output = out;
	assert_int_equal(npu_graph_add_node(g, &n, &id), 0);
	return id;
}

/* y = Probe((relu(h1 W2) + h1) W3), h1 = x W1; h1 is an output as well. */
static void make_model(struct model *m)
{
	struct npu_op_params gemm = { .size = sizeof(gemm), .kind = NPU_OP_GEMM };
	struct npu_op_params relu_gemm = gemm;
	struct npu_op_params add = { .size = sizeof(add), .kind = NPU_OP_ELTWISE,
				     .eltwise.kind = NPU_ELTWISE_ADD };
	struct npu_kernel_node_desc kn = NPU_KERNEL_NODE_DESC_INIT;
	uint32_t vw1, vw2, vw3, h2, r, h3;
	unsigned int i, seed = 11;

	relu_gemm.act = NPU_ACT_RELU;
	for (i = 0; i < K * K; i++) {
		seed = seed * 1103515245u + 12345u;
		w1[i] = (float)(seed >> 16 & 0xff) / 128.0f - 1.0f;
		w2[i] = (float)(seed >> 8 & 0xff) / 128.0f - 1.0f;
		w3[i] = (float)(seed >> 20 & 0xff) / 128.0f - 1.0f;
	}
	assert_int_equal(npu_graph_create(&m->g), 0);
	m->x = val(m->g, "x", NPU_VALUE_INPUT, NULL);
	vw1 = val(m->g, "w1", 0, w1);
	vw2 = val(m->g, "w2", 0, w2);
	vw3 = val(m->g, "w3", 0, w3);
	m->h1 = val(m->g, "h1", NPU_VALUE_OUTPUT, NULL);
	h2 = val(m->g, "h2", 0, NULL);
	r = val(m->g, "r", 0, NULL);
	h3 = val(m->g, "h3", 0, NULL);
	m->y = val(m->g, "y", NPU_VALUE_OUTPUT, NULL);
	node(m->g, "mm1", &gemm, m->x, vw1, m->h1);
	m->node_mm2 = node(m->g, "mm2", &relu_gemm, m->h1, vw2, h2);
	m->node_add = node(m->g, "residual", &add, h2, m->h1, r);
	m->node_mm3 = node(m->g, "mm3", &gemm, r, vw3, h3);
	kn.name = "probe";
	kn.kernel = &probe;
	kn.num_inputs = 1;
	kn.inputs = &h3;
	kn.num_outputs = 1;
	kn.outputs = &m->y;
	assert_int_equal(npu_graph_add_kernel_node(m->g, &kn, NULL), 0);
}

static void input(float *x, unsigned int request)
{
	unsigned int i;

	for (i = 0; i < ROWS * K; i++)
		x[i] = (float)((request * 37 + i * 5) % 29) / 8.0f - 1.75f;
}

static void reset_probe(void)
{
	atomic_store(&fail_once, 0);
	atomic_store(&hold, 0);
	atomic_store(&probe_runs, 0);
}

static int pipeline_flags(struct npu_graph *g, size_t stages, const uint32_t *cuts,
			  uint32_t max_requests, uint32_t flags, struct npu_group **out)
{
	struct npu_context *none[4] = { NULL };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;

	o.flags = NPU_GROUP_PIPELINE | flags;
	o.max_requests = max_requests;
	o.num_cuts = cuts ? (uint32_t)stages - 1 : 0;
	o.cuts = cuts;
	return npu_group_create(g, none, stages, &o, out);
}

static int pipeline(struct npu_graph *g, size_t stages, const uint32_t *cuts,
		    uint32_t max_requests, struct npu_group **out)
{
	return pipeline_flags(g, stages, cuts, max_requests, 0, out);
}

#define REQUESTS	300
#define WINDOW		12

static float xs[REQUESTS][ROWS * K], ys[REQUESTS][ROWS * K], h1s[REQUESTS][ROWS * K],
	want_y[REQUESTS][ROWS * K], want_h1[REQUESTS][ROWS * K];

/* The whole graph on one runtime: the bytes every pipeline must give. */
static void reference(struct model *m)
{
	struct npu_runtime *rt;
	unsigned int r;

	assert_int_equal(npu_graph_compile(m->g, NULL, 0, &rt), 0);
	for (r = 0; r < REQUESTS; r++) {
		input(xs[r], r);
		assert_int_equal(npu_runtime_setup(rt, 3, (uint32_t[]){ m->x, m->y, m->h1 },
						   (void *[]){ xs[r], want_y[r], want_h1[r] }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	}
	npu_runtime_free(rt);
}

/*
 * Stream every request through @grp, @WINDOW deep; each must be the
 * reference's bytes, and when request r is answered every earlier one
 * must be answered already (in order).
 */
static void stream_and_check(struct npu_group *grp, struct model *m)
{
	static uint64_t t[REQUESTS];
	unsigned int sub = 0, r, e;

	memset(ys, 0xa5, sizeof(ys));
	memset(h1s, 0xa5, sizeof(h1s));
	for (r = 0; r < REQUESTS; r++) {
		struct npu_group_result res = NPU_GROUP_RESULT_INIT;

		while (sub < REQUESTS && sub < r + WINDOW) {
			assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m->h1, m->x, m->y },
							  (void *[]){ h1s[sub], xs[sub], ys[sub] },
							  &t[sub]), 0);
			sub++;
		}
		/* wait for the newest submitted first: all before it must be done too */
		if (r % WINDOW == 0) {
			struct npu_group_result last = NPU_GROUP_RESULT_INIT;

			e = sub - 1;
			assert_int_equal(npu_group_wait(grp, t[e], NPU_TIMEOUT_INFINITE, &last), 0);
			for (; r < e; r++) {
				assert_int_equal(npu_group_wait(grp, t[r], 0, &res), 0);
				assert_memory_equal(ys[r], want_y[r], sizeof(ys[r]));
				assert_memory_equal(h1s[r], want_h1[r], sizeof(h1s[r]));
			}
			res = last;
		} else {
			assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, &res), 0);
		}
		assert_int_equal(res.error, 0);
		assert_int_equal(res.attempts, 1);
		assert_memory_equal(ys[r], want_y[r], sizeof(ys[r]));
		assert_memory_equal(h1s[r], want_h1[r], sizeof(h1s[r]));
	}
}

/* A forced cut before the residual add: h1 and h2 both cross it. */
static void test_two_stages_residual(void **state)
{
	struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT, s1 = NPU_GROUP_STAGE_INIT;
	struct npu_group *grp;
	struct model m;

	(void)state;
	reset_probe();
	make_model(&m);
	reference(&m);
	assert_int_equal(pipeline(m.g, 2, &m.node_add, 0, &grp), 0);
	assert_int_equal(npu_group_num_stages(grp), 2);
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
	assert_int_equal(s0.first_node, 0);
	assert_int_equal(s0.num_nodes, 2);
	assert_int_equal(s1.first_node, m.node_add);
	assert_int_equal(s1.num_nodes, 3);
	assert_int_equal(s0.outputs_handed_on, 2);
	assert_int_equal(s1.inputs_handed_in, 2);
	assert_true(s0.handoff_bytes >= 2 * ROWS * K * sizeof(float));
	assert_int_equal(s0.macs, 2ull * ROWS * K * K);
	npu_graph_free(m.g);
	stream_and_check(grp, &m);
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
	assert_int_equal(s0.runs, REQUESTS);
	assert_int_equal(s1.runs, REQUESTS);
	/*
	 * Zero copy: h1 and h2 are written and read in the shared buffer; the
	 * CPU copies only x in, h1 out to the caller (an output too) and y out.
	 */
	assert_int_equal(s0.copied_bytes, 2ull * REQUESTS * ROWS * K * sizeof(float));
	assert_int_equal(s1.copied_bytes, 1ull * REQUESTS * ROWS * K * sizeof(float));
	assert_true(s0.zero_copy && s1.zero_copy);
	npu_group_free(grp);
}

/*
 * A handoff that a CPU kernel node reads (Probe, alone in stage 1) cannot
 * live in the shared buffer (a kernel's operands are arena offsets): that
 * stage copies it in, and the bytes are still the single runtime's.
 */
static void test_kernel_reads_handoff(void **state)
{
	struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT, s1 = NPU_GROUP_STAGE_INIT;
	struct npu_group *grp;
	struct model m;
	uint32_t cut;

	(void)state;
	reset_probe();
	make_model(&m);
	reference(&m);
	cut = m.node_mm3 + 1;
	assert_int_equal(pipeline(m.g, 2, &cut, 0, &grp), 0);
	npu_graph_free(m.g);
	stream_and_check(grp, &m);
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
	assert_true(s0.zero_copy);
	assert_false(s1.zero_copy);
	/* stage 0: x in, h1 out; stage 1: h3 in from the shared buffer, y out */
	assert_int_equal(s0.copied_bytes, 2ull * REQUESTS * ROWS * K * sizeof(float));
	assert_int_equal(s1.copied_bytes, 2ull * REQUESTS * ROWS * K * sizeof(float));
	npu_group_free(grp);
}

/* Three stages: h1 goes from stage 0 past stage 1 (mm2) to stage 2. */
static void test_three_stages_skip(void **state)
{
	struct npu_group_stage s1 = NPU_GROUP_STAGE_INIT, s2 = NPU_GROUP_STAGE_INIT;
	struct npu_group *grp;
	struct model m;

	(void)state;
	reset_probe();
	make_model(&m);
	reference(&m);
	assert_int_equal(pipeline(m.g, 3, (uint32_t[]){ m.node_mm2, m.node_add }, 0, &grp), 0);
	npu_graph_free(m.g);
	assert_int_equal(npu_group_get_stage(grp, 1, &s1), 0);
	assert_int_equal(npu_group_get_stage(grp, 2, &s2), 0);
	assert_int_equal(s1.inputs_handed_in, 1);
	assert_int_equal(s1.outputs_handed_on, 1);
	assert_int_equal(s2.inputs_handed_in, 2);
	stream_and_check(grp, &m);
	npu_group_free(grp);
}

/* Automatic cuts: even cost, every node in a stage, the same bytes. */
static void test_automatic_cuts(void **state)
{
	struct npu_group_stage s[2] = { NPU_GROUP_STAGE_INIT, NPU_GROUP_STAGE_INIT };
	struct npu_group *grp;
	struct model m;

	(void)state;
	reset_probe();
	make_model(&m);
	reference(&m);
	assert_int_equal(pipeline(m.g, 2, NULL, 0, &grp), 0);
	npu_graph_free(m.g);
	assert_int_equal(npu_group_get_stage(grp, 0, &s[0]), 0);
	assert_int_equal(npu_group_get_stage(grp, 1, &s[1]), 0);
	assert_int_equal(s[0].num_nodes + s[1].num_nodes, 5);
	/* three GEMMs of equal MACs: the cut leaves one or two on each side */
	assert_true(s[0].macs && s[1].macs);
	assert_int_equal(s[0].macs + s[1].macs, 3ull * ROWS * K * K);
	stream_and_check(grp, &m);
	npu_group_free(grp);
}

/* While the last stage holds request 0, stage 0 runs request 1. */
static void test_stages_overlap(void **state)
{
	struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT;
	struct npu_group *grp;
	struct model m;
	uint64_t t[3];
	unsigned int r, spins = 0;

	(void)state;
	reset_probe();
	make_model(&m);
	reference(&m);
	assert_int_equal(pipeline(m.g, 2, &m.node_add, 0, &grp), 0);
	npu_graph_free(m.g);
	atomic_store(&hold, 1);
	for (r = 0; r < 3; r++)
		assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m.x, m.y, m.h1 },
						  (void *[]){ xs[r], ys[r], h1s[r] }, &t[r]), 0);
	while (atomic_load(&probe_runs) < 1 || s0.runs < 2) {
		struct timespec ms = { 0, 1000000 };

		assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
		assert_true(++spins < 10000);	/* ten seconds */
		nanosleep(&ms, NULL);
	}
	/* request 0 is still in stage 1 */
	assert_int_equal(npu_group_wait(grp, t[0], 0, NULL), -ETIMEDOUT);
	atomic_store(&hold, 0);
	for (r = 0; r < 3; r++) {
		assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, NULL), 0);
		assert_memory_equal(ys[r], want_y[r], sizeof(ys[r]));
	}
	npu_group_free(grp);
}

/*
 * A request's own error fails it alone.  A device's (-EIO, stage 1's)
 * under NPU_GROUP_NO_FAILOVER fails its request and ends the group; by
 * default every request not yet answered runs again, the whole graph on
 * device 0, each answered once with the single runtime's bytes.
 */
static void device_failure(bool failover)
{
	struct npu_group_device_stats ds = NPU_GROUP_DEVICE_STATS_INIT;
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_group_result res = NPU_GROUP_RESULT_INIT;
	struct npu_group *grp;
	struct model m;
	uint64_t t[8];
	unsigned int r;

	reset_probe();
	make_model(&m);
	reference(&m);
	assert_int_equal(pipeline_flags(m.g, 2, &m.node_add, 0,
					 failover ? 0 : NPU_GROUP_NO_FAILOVER, &grp), 0);
	npu_graph_free(m.g);
	atomic_store(&fail_once, -EINVAL);
	for (r = 0; r < 2; r++)
		assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m.x, m.y, m.h1 },
						  (void *[]){ xs[r], ys[r], h1s[r] }, &t[r]), 0);
	assert_int_equal(npu_group_wait(grp, t[0], NPU_TIMEOUT_INFINITE, NULL), -EINVAL);
	assert_int_equal(npu_group_wait(grp, t[1], NPU_TIMEOUT_INFINITE, NULL), 0);
	assert_memory_equal(ys[1], want_y[1], sizeof(ys[1]));

	/* request 0 fails in stage 1 only once 1..5 are queued behind it */
	memset(ys, 0xa5, sizeof(ys));
	memset(h1s, 0xa5, sizeof(h1s));
	atomic_store(&hold, 1);
	atomic_store(&fail_once, -EIO);
	for (r = 0; r < 6; r++)
		assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m.x, m.y, m.h1 },
						  (void *[]){ xs[r], ys[r], h1s[r] }, &t[r]), 0);
	atomic_store(&hold, 0);
	if (!failover) {
		assert_int_equal(npu_group_wait(grp, t[0], NPU_TIMEOUT_INFINITE, NULL), -EIO);
		for (r = 1; r < 6; r++)
			assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, NULL),
					 -ENODEV);
		assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m.x, m.y, m.h1 },
						  (void *[]){ xs[0], ys[0], h1s[0] }, &t[0]),
				 -ENODEV);
	} else {
		for (r = 0; r < 6; r++) {
			assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, &res), 0);
			assert_memory_equal(ys[r], want_y[r], sizeof(ys[r]));
			assert_memory_equal(h1s[r], want_h1[r], sizeof(h1s[r]));
			/* answered once: the ticket is gone */
			assert_int_equal(npu_group_wait(grp, t[r], 0, NULL), -ENOENT);
			assert_int_equal(res.device, 0);
			if (r == 0)
				assert_int_equal(res.attempts, 2);
		}
		/* later requests run whole on device 0 */
		for (r = 6; r < 8; r++)
			assert_int_equal(npu_group_submit(grp, 3, (uint32_t[]){ m.x, m.y, m.h1 },
							  (void *[]){ xs[r], ys[r], h1s[r] }, &t[r]),
					 0);
		for (r = 6; r < 8; r++) {
			assert_int_equal(npu_group_wait(grp, t[r], NPU_TIMEOUT_INFINITE, &res), 0);
			assert_memory_equal(ys[r], want_y[r], sizeof(ys[r]));
			assert_int_equal(res.device, 0);
		}
	}
	assert_int_equal(npu_group_get_device_stats(grp, 1, &ds), 0);
	assert_int_equal(ds.state, NPU_GROUP_DEVICE_LEFT);
	assert_int_equal(ds.error, -EIO);
	assert_int_equal(npu_group_get_device_stats(grp, 0, &ds), 0);
	assert_int_equal(ds.state, NPU_GROUP_DEVICE_ACTIVE);
	assert_int_equal(npu_group_get_stats(grp, &st), 0);
	assert_int_equal(st.active_devices, 1);
	if (failover) {
		/* request 0, and any that had reached stage 1's queue, ran again */
		assert_true(st.failovers >= 1 && st.failovers <= 3);
		assert_int_equal(st.completed, 1 + 8);
		assert_int_equal(st.failed, 1);
	} else {
		assert_int_equal(st.failovers, 0);
	}
	npu_group_free(grp);
}

static void test_failures_no_failover(void **state)
{
	(void)state;
	device_failure(false);
}

static void test_failover(void **state)
{
	(void)state;
	device_failure(true);
}

#define CH	8
#define HW	12

/* y = conv(conv(conv(x))) over NCHW [1,CH,HW,HW], 3x3 kernels, pad 1; cut before @cut_at. */
static void test_nchw_convolutions(void **state)
{
	static float cw[3][CH * CH * 9], x[4][CH * HW * HW], y[4][CH * HW * HW],
		want[4][CH * HW * HW];
	struct npu_op_params conv = { .size = sizeof(conv), .kind = NPU_OP_CONV2D };
	struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT;
	struct npu_value_desc d = NPU_VALUE_DESC_INIT;
	struct npu_node_desc n = NPU_NODE_DESC_INIT;
	uint32_t vx, vy, w[3], h[2], node[3];
	struct npu_runtime *rt;
	struct npu_group *grp;
	struct npu_graph *g;
	unsigned int i, l, seed = 5;
	uint64_t t[4];

	(void)state;
	conv.act = NPU_ACT_RELU;
	conv.conv.stride[0] = conv.conv.stride[1] = 1;
	conv.conv.dilation[0] = conv.conv.dilation[1] = 1;
	conv.conv.groups = 1;
	for (i = 0; i < 4; i++)
		conv.conv.pad[i] = 1;
	assert_int_equal(npu_graph_create(&g), 0);
	d.dtype = NPU_DTYPE_FP32;
	d.rank = 4;
	memcpy(d.dims, (uint32_t[]){ 1, CH, HW, HW }, 4 * sizeof(uint32_t));
	d.name = "x";
	d.flags = NPU_VALUE_INPUT;
	assert_int_equal(npu_graph_add_value(g, &d, &vx), 0);
	d.flags = 0;
	d.name = "h";
	assert_int_equal(npu_graph_add_value(g, &d, &h[0]), 0);
	assert_int_equal(npu_graph_add_value(g, &d, &h[1]), 0);
	d.name = "y";
	d.flags = NPU_VALUE_OUTPUT;
	assert_int_equal(npu_graph_add_value(g, &d, &vy), 0);
	for (l = 0; l < 3; l++) {
		struct npu_value_desc wd = NPU_VALUE_DESC_INIT;

		for (i = 0; i < CH * CH * 9; i++) {
			seed = seed * 1103515245u + 12345u;
			cw[l][i] = (float)(seed >> 16 & 0xff) / 512.0f - 0.25f;
		}
		wd.name = "w";
		wd.dtype = NPU_DTYPE_FP32;
		wd.rank = 4;
		memcpy(wd.dims, (uint32_t[]){ CH, CH, 3, 3 }, 4 * sizeof(uint32_t));
		wd.data = cw[l];
		assert_int_equal(npu_graph_add_value(g, &wd, &w[l]), 0);
	}
	n.kind = NPU_NODE_OP;
	n.flags = NPU_NODE_NCHW;
	n.op = &conv;
	n.num_inputs = 2;
	for (l = 0; l < 3; l++) {
		n.name = "conv";
		n.inputs = (uint32_t[]){ l ? h[l - 1] : vx, w[l] };
		n.output = l < 2 ? h[l] : vy;
		assert_int_equal(npu_graph_add_node(g, &n, &node[l]), 0);
	}
	assert_int_equal(npu_graph_compile(g, NULL, 0, &rt), 0);
	for (i = 0; i < 4; i++) {
		for (l = 0; l < CH * HW * HW; l++)
			x[i][l] = (float)((l * 7 + i * 3) % 19) / 8.0f - 1.0f;
		assert_int_equal(npu_runtime_setup(rt, 2, (uint32_t[]){ vx, vy },
						   (void *[]){ x[i], want[i] }), 0);
		assert_int_equal(npu_runtime_run(rt, NULL, NPU_TIMEOUT_INFINITE), 0);
	}
	npu_runtime_free(rt);
	assert_int_equal(pipeline(g, 2, &node[1], 0, &grp), 0);
	npu_graph_free(g);
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_int_equal(s0.outputs_handed_on, 1);
	assert_int_equal(s0.handoff_bytes, CH * HW * HW * sizeof(float));
	for (i = 0; i < 4; i++)
		assert_int_equal(npu_group_submit(grp, 2, (uint32_t[]){ vx, vy },
						  (void *[]){ x[i], y[i] }, &t[i]), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(npu_group_wait(grp, t[i], NPU_TIMEOUT_INFINITE, NULL), 0);
		assert_memory_equal(y[i], want[i], sizeof(y[i]));
	}
	/* the NHWC twin is written and read in the shared buffer: only x in, y out */
	assert_int_equal(npu_group_get_stage(grp, 0, &s0), 0);
	assert_true(s0.zero_copy);
	assert_int_equal(s0.copied_bytes, 4ull * CH * HW * HW * sizeof(float));
	assert_int_equal(npu_group_get_stage(grp, 1, &s0), 0);
	assert_true(s0.zero_copy);
	assert_int_equal(s0.copied_bytes, 4ull * CH * HW * HW * sizeof(float));
	npu_group_free(grp);
}

static void expect_refused(struct npu_graph *g, size_t stages, const uint32_t *cuts,
			   uint32_t num_cuts, const char *words)
{
	struct npu_context *none[3] = { NULL };
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group *grp = NULL;

	o.flags = NPU_GROUP_PIPELINE;
	o.num_cuts = num_cuts;
	o.cuts = cuts;
	assert_int_equal(npu_group_create(g, none, stages, &o, &grp), -EINVAL);
	assert_null(grp);
	if (!strstr(npu_graph_error(g), words))
		fail_msg("'%s' does not say '%s'", npu_graph_error(g), words);
}

static void test_arguments(void **state)
{
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group_stage s = NPU_GROUP_STAGE_INIT;
	struct npu_context *none[2] = { NULL };
	struct npu_group *grp;
	struct model m;

	(void)state;
	make_model(&m);
	expect_refused(m.g, 1, NULL, 0, "two devices or more");
	expect_refused(m.g, 2, (uint32_t[]){ 1, 2 }, 2, "takes 1 cuts");
	expect_refused(m.g, 2, (uint32_t[]){ 99 }, 1, "node 99 is not in the graph");
	expect_refused(m.g, 2, (uint32_t[]){ 0 }, 1, "would be empty");
	expect_refused(m.g, 3, (uint32_t[]){ m.node_add, m.node_mm2 }, 2, "would be empty");
	/* cuts belong to pipelines only */
	o.num_cuts = 1;
	o.cuts = &m.node_add;
	assert_int_equal(npu_group_create(m.g, none, 2, &o, &grp), -EINVAL);
	/* a data-parallel group has no stages */
	assert_int_equal(npu_group_create(m.g, none, 2, NULL, &grp), 0);
	assert_int_equal(npu_group_num_stages(grp), 0);
	assert_int_equal(npu_group_get_stage(grp, 0, &s), -EINVAL);
	npu_group_free(grp);
	assert_int_equal(pipeline(m.g, 2, NULL, 0, &grp), 0);
	assert_int_equal(npu_group_get_stage(grp, 2, &s), -EINVAL);
	s.size = 0;
	assert_int_equal(npu_group_get_stage(grp, 0, &s), -EINVAL);
	/* an older caller's smaller struct gets only what it knows */
	s.size = offsetof(struct npu_group_stage, handoff_bytes);
	s.handoff_bytes = 77;
	assert_int_equal(npu_group_get_stage(grp, 0, &s), 0);
	assert_int_equal(s.handoff_bytes, 77);
	npu_group_free(grp);
	assert_int_equal(npu_group_num_stages(NULL), 0);
	npu_graph_free(m.g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_stages_residual),
		cmocka_unit_test(test_three_stages_skip),
		cmocka_unit_test(test_kernel_reads_handoff),
		cmocka_unit_test(test_automatic_cuts),
		cmocka_unit_test(test_stages_overlap),
		cmocka_unit_test(test_failures_no_failover),
		cmocka_unit_test(test_failover),
		cmocka_unit_test(test_nchw_convolutions),
		cmocka_unit_test(test_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
