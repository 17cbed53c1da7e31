// SPDX-License-Identifier: MIT
/*
 * Failover in a pipeline npu_group (NPU_GROUP_PIPELINE): a stream of
 * requests through two stages, stage 0 on device 0 and stage 1 on device
 * 1, while device 1 fails, three times.
 *
 *   1. Device 1 wedges: the fault injection hangs its next job and keeps
 *      the reset that follows from bringing it back, so the driver's job
 *      timeout ends the job and declares the device lost.
 *   2. Device 1 is unbound (PCI remove through sysfs) with requests on it.
 *   3. The same unbind under NPU_GROUP_NO_FAILOVER.
 *
 * In 1 and 2 every request must be answered once, with the bytes device
 * 0 alone gives: those queued or in flight between the stages run again,
 * the whole graph on device 0, as does every later one.  The failover is
 * counted (as many re-run requests as the group says) and device 1 is out
 * of the group with its error; in 3 the requests not yet answered must
 * fail instead (device 1's with its error, the rest with -ENODEV), and
 * none be answered wrong.  Nothing may hang: every wait has a deadline.  Device
 * 1 is bound again after each, and must come back as accel1.
 */
#include <fcntl.h>
#include <unistd.h>

#include "group.h"

#define REQUESTS	40
#define WINDOW		6
#define TRIGGER_AT	4

static float x[REQUESTS][G_ROWS * G_WIDTH], y[REQUESTS][G_ROWS * G_WIDTH],
	want[REQUESTS][G_ROWS * G_WIDTH];
static char pci1[256];

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int pci_of_accel1(void)
{
	char link[256];
	const char *slash;
	ssize_t n = readlink("/sys/class/accel/accel1/device", link, sizeof(link) - 1);

	if (n < 0)
		return -errno;
	link[n] = 0;
	slash = strrchr(link, '/');
	snprintf(pci1, sizeof(pci1), "%s", slash ? slash + 1 : link);
	return 0;
}

static int debugfs1(const char *file, const char *val)
{
	char path[384];

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", pci1, file);
	return write_file(path, val);
}

static void unbind1(void *arg)
{
	int *ret = arg;

	*ret = write_file("/sys/bus/pci/drivers/vnpu/unbind", pci1);
}

/* The next job on device 1 hangs, and the reset after it never ends. */
static void wedge1(void *arg)
{
	int *ret = arg;

	*ret = debugfs1("inject_wedge", "1");
	if (!*ret)
		*ret = debugfs1("inject_hang", "1");
}

/* Bind device 1 again (it may still be bound, lost): accel1 once more. */
static int rebind1(void)
{
	char path[128], link[256];
	int i;

	write_file("/sys/bus/pci/drivers/vnpu/unbind", pci1);
	if (write_file("/sys/bus/pci/drivers/vnpu/bind", pci1))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/accel/accel1/device");
	for (i = 0; i < 50; i++) {
		ssize_t n = readlink(path, link, sizeof(link) - 1);

		if (n > 0) {
			link[n] = 0;
			if (strstr(link, pci1) && access("/dev/accel/accel1", R_OK | W_OK) == 0)
				return 0;
		}
		usleep(100 * 1000);
	}
	return -1;
}

static int open_both(struct npu_context **ctx)
{
	struct npu_device *dev;
	int i, ret = 0;

	for (i = 0; i < 2 && !ret; i++) {
		ret = npu_device_open((uint32_t)i, &dev);
		if (!ret) {
			ret = npu_context_create(dev, &ctx[i]);
			npu_device_close(dev);
		}
	}
	return ret;
}

static bool device_error(int err)
{
	return NPU_ERR_IS_JOB(err) || err == -ENODEV || err == -EIO || err == -ECANCELED;
}

/*
 * One stream with device 1 failing through @fail after TRIGGER_AT
 * answers, under @flags; checks as the header says.
 */
static void phase(const char *what, const struct g_model *m, void (*fail)(void *),
		  uint32_t flags)
{
	struct npu_group_options o = NPU_GROUP_OPTIONS_INIT;
	struct npu_group_result res[REQUESTS];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_group_device_stats d0 = NPU_GROUP_DEVICE_STATS_INIT,
		d1 = NPU_GROUP_DEVICE_STATS_INIT;
	struct npu_context *ctx[2] = { NULL, NULL };
	struct npu_group *grp;
	unsigned int i, wrong, failed = 0, by_device = 0, rerun = 0;
	int err[REQUESTS], trig = 1, ret;
	int64_t t0;

	ret = open_both(ctx);
	if (!ret) {
		o.flags = NPU_GROUP_PIPELINE | flags;
		ret = npu_group_create(m->graph, ctx, 2, &o, &grp);
	}
	npu_context_destroy(ctx[0]);
	npu_context_destroy(ctx[1]);
	TAP_RET(ret, 0, "%s: a two-stage pipeline over both devices", what);
	if (ret)
		return;
	{
		struct npu_group_stage s0 = NPU_GROUP_STAGE_INIT;

		npu_group_get_stage(grp, 0, &s0);
		printf("# stage 0: %u nodes, stage 1 from node %u\n", s0.num_nodes, s0.num_nodes);
	}
	t0 = npu_time_ns();
	wrong = g_stream(grp, m, REQUESTS, WINDOW, x, y, want, err, res, TRIGGER_AT, fail, &trig);
	TAP_RET(trig, 0, "%s: device 1 made to fail after %d answers", what, TRIGGER_AT);
	for (i = 0; i < REQUESTS; i++) {
		failed += err[i] != 0;
		by_device += err[i] && device_error(err[i]);
		rerun += !err[i] && res[i].attempts > 1;
		if (err[i])
			printf("# request %u: %s (device %u)\n", i, npu_strerror(err[i]),
			       res[i].device);
	}
	npu_group_get_stats(grp, &st);
	npu_group_get_device_stats(grp, 0, &d0);
	npu_group_get_device_stats(grp, 1, &d1);
	printf("# %s: %.1f s; device 0: %llu answered; device 1: %llu answered, %llu failed, "
	       "state %d (%s); failovers %llu\n", what, (npu_time_ns() - t0) / 1e9,
	       (unsigned long long)d0.completed, (unsigned long long)d1.completed,
	       (unsigned long long)d1.failed, d1.state, npu_strerror(d1.error),
	       (unsigned long long)st.failovers);
	tap_ok(!wrong, "%s: no request answered with other bytes than device 0's (%u)", what,
	       wrong);
	if (flags & NPU_GROUP_NO_FAILOVER) {
		tap_ok(failed > 0 && by_device == failed,
		       "%s: the requests not yet answered fail (%u, %u of them with a device's error)",
		       what, failed, by_device);
		tap_ok(!st.failovers && !rerun, "%s: none is run again (%llu)", what,
		       (unsigned long long)st.failovers);
	} else {
		tap_ok(!failed, "%s: all %d requests answered (%u failed)", what, REQUESTS, failed);
		tap_ok(st.failovers > 0 && st.failovers == rerun,
		       "%s: the group says it re-ran %llu requests, %u results say so", what,
		       (unsigned long long)st.failovers, rerun);
		/* a stage's runs are not answers: the group's count is */
		tap_ok(st.completed == REQUESTS && st.failed == 0,
		       "%s: each answered once (%llu answered, %llu failed)", what,
		       (unsigned long long)st.completed, (unsigned long long)st.failed);
	}
	tap_ok(d1.state == NPU_GROUP_DEVICE_LEFT && device_error(d1.error) &&
	       d0.state == NPU_GROUP_DEVICE_ACTIVE && st.active_devices == 1,
	       "%s: device 1 left the group (%s), device 0 stays", what, npu_strerror(d1.error));
	if (flags & NPU_GROUP_NO_FAILOVER) {
		tap_ok(npu_group_submit(grp, 2, (uint32_t[]){ m->x, m->y },
					(void *[]){ x[0], y[0] }, &(uint64_t){ 0 }) == -ENODEV,
		       "%s: the group takes no more requests", what);
	} else {
		uint64_t t;
		struct npu_group_result r1 = NPU_GROUP_RESULT_INIT;

		memset(y[0], 0xa5, G_OUT_BYTES);
		ret = npu_group_submit(grp, 2, (uint32_t[]){ m->x, m->y },
				       (void *[]){ x[0], y[0] }, &t);
		if (!ret)
			ret = npu_group_wait(grp, t, npu_deadline_ns(300 * G_SEC), &r1);
		tap_ok(!ret && r1.device == 0 && !memcmp(y[0], want[0], G_OUT_BYTES),
		       "%s: a later request runs whole on device 0, right (%s)", what,
		       npu_strerror(ret));
	}
	npu_group_free(grp);
	tap_ok(rebind1() == 0, "%s: device 1 binds again as accel1", what);
}

int main(void)
{
	struct npu_device_info info = { 0 };
	struct npu_context *ctx[2] = { NULL, NULL };
	struct g_model m;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pci_of_accel1())
		TAP_BAIL("no accel1");
	g_model_build(&m);
	ret = open_both(ctx);
	if (!ret)
		ret = g_one_device(&m, ctx[0], REQUESTS, x, want);
	TAP_RET(ret, 0, "device 0 alone answers %d requests", REQUESTS);
	{
		struct npu_device *dev;

		if (!npu_device_open(1, &dev)) {
			npu_device_get_info(dev, &info, sizeof(info));
			npu_device_close(dev);
		}
	}
	npu_context_destroy(ctx[0]);
	npu_context_destroy(ctx[1]);
	if (ret)
		return tap_done();

	if (info.caps & NPU_CAP_FAULT_INJECT)
		phase("wedged", &m, wedge1, 0);
	else
		tap_skip("the device has no fault injection", "wedged: failover");
	phase("unbound", &m, unbind1, 0);
	phase("unbound, no failover", &m, unbind1, NPU_GROUP_NO_FAILOVER);
	npu_graph_free(m.graph);
	return tap_done();
}
