// SPDX-License-Identifier: MIT
/*
 * Data parallelism with npu_group on two devices: one graph (three GEMM
 * layers) compiled once per device, 48 requests with distinct inputs
 * streamed through the group.  Every output must be the very bytes a
 * runtime on device 0 alone gives for that input (and near a plain C
 * computation of the model), both devices must have answered requests,
 * none twice or after a failover.  A group made without contexts opens
 * both devices itself.
 */
#include "group.h"

#define REQUESTS	48
#define WINDOW		8

static float x[REQUESTS][G_ROWS * G_WIDTH], y[REQUESTS][G_ROWS * G_WIDTH],
	want[REQUESTS][G_ROWS * G_WIDTH];

int main(void)
{
	struct npu_group_result res[REQUESTS];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_group_device_stats ds[2];
	struct npu_context *ctx[2];
	struct npu_device *dev;
	struct npu_group *grp;
	struct g_model m;
	unsigned int i, wrong, failed = 0, once = 0;
	int err[REQUESTS], ret;
	float ref[G_ROWS * G_WIDTH], d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < 2; i++) {
		if (npu_device_open(i, &dev) || npu_context_create(dev, &ctx[i]))
			TAP_BAIL("open device %u", i);
		npu_device_close(dev);
	}
	g_model_build(&m);
	ret = g_one_device(&m, ctx[0], REQUESTS, x, want);
	TAP_RET(ret, 0, "device 0 alone answers %d requests", REQUESTS);
	if (ret)
		return tap_done();
	g_reference(&m, x[0], ref);
	d = g_max_diff(want[0], ref);
	tap_ok(d < 1e-3f, "and its answer is the model's (max abs diff %g from plain C)", d);

	ret = npu_group_create(m.graph, ctx, 2, NULL, &grp);
	TAP_RET(ret, 0, "a group of both devices compiles the graph once on each");
	if (ret)
		return tap_done();
	wrong = g_stream(grp, &m, REQUESTS, WINDOW, x, y, want, err, res, 0, NULL, NULL);
	for (i = 0; i < REQUESTS; i++) {
		failed += err[i] != 0;
		once += !err[i] && res[i].attempts == 1;
		if (err[i])
			printf("# request %u: %s\n", i, npu_strerror(err[i]));
	}
	tap_ok(!failed, "all %d requests answered (%u failed)", REQUESTS, failed);
	tap_ok(!wrong, "every output is device 0's bytes for its input (%u differ)", wrong);
	tap_ok(once == REQUESTS, "each on one device, no failover (%u)", once);
	for (i = 0; i < 2; i++) {
		ds[i] = (struct npu_group_device_stats)NPU_GROUP_DEVICE_STATS_INIT;
		npu_group_get_device_stats(grp, i, &ds[i]);
		printf("# device %u (accel%u): %llu requests, busy %.3f s\n", i, ds[i].minor,
		       (unsigned long long)ds[i].completed, ds[i].busy_ns / 1e9);
	}
	tap_ok(ds[0].completed > 0 && ds[1].completed > 0 &&
	       ds[0].completed + ds[1].completed == REQUESTS,
	       "both devices answered requests (%llu + %llu)",
	       (unsigned long long)ds[0].completed, (unsigned long long)ds[1].completed);
	tap_ok(ds[0].minor == 0 && ds[1].minor == 1, "on accel0 and accel1");
	npu_group_get_stats(grp, &st);
	tap_ok(st.submitted == REQUESTS && st.completed == REQUESTS && !st.failovers &&
	       st.active_devices == 2, "the group's counters agree");
	npu_group_free(grp);

	/* Without contexts: every vnpu device, opened by the group. */
	ret = npu_group_create(m.graph, NULL, 0, NULL, &grp);
	TAP_RET(ret, 0, "a group of every device");
	if (!ret) {
		tap_ok(npu_group_num_devices(grp) == 2, "has both (%zu)", npu_group_num_devices(grp));
		wrong = g_stream(grp, &m, 8, 4, x, y, want, err, res, 0, NULL, NULL);
		for (i = 0, failed = 0; i < 8; i++)
			failed += err[i] != 0;
		tap_ok(!failed && !wrong, "and answers with device 0's bytes (%u failed, %u differ)",
		       failed, wrong);
		npu_group_free(grp);
	}
	npu_graph_free(m.graph);
	npu_context_destroy(ctx[1]);
	npu_context_destroy(ctx[0]);
	return tap_done();
}
