// SPDX-License-Identifier: MIT
/*
 * A device that left an npu_group joins it again (npu_group_add_device):
 * a stream over two devices while device 1 wedges (the fault injection
 * hangs its next job and keeps the reset after it from bringing it
 * back; without fault injection it is unbound instead), so it leaves;
 * then device 1 is unbound and bound again, a context is made on it and
 * added to the group, which must take it as device 2 and spread a second
 * stream over device 0 and it: every request answered once, with the
 * bytes device 0 alone gives, none failed over.
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

static void wedge1(void *arg)
{
	int *ret = arg;

	*ret = debugfs1("inject_wedge", "1");
	if (!*ret)
		*ret = debugfs1("inject_hang", "1");
}

static void unbind1(void *arg)
{
	int *ret = arg;

	*ret = write_file("/sys/bus/pci/drivers/vnpu/unbind", pci1);
}

static int open_ctx(uint32_t index, struct npu_context **ctx)
{
	struct npu_device *dev;
	int ret = npu_device_open(index, &dev);

	if (!ret) {
		ret = npu_context_create(dev, ctx);
		npu_device_close(dev);
	}
	return ret;
}

/*
 * Bind device 1 again (it may still be bound, lost) and make a context
 * on it.  The group still holds the old binding's file, so its accel
 * minor is not free: the new binding gets another, found by PCI address.
 */
static int rebind1(struct npu_context **ctx, uint32_t *minor)
{
	struct npu_device_info info = { 0 };
	struct npu_device *dev;
	int i, ret = -ENODEV;

	write_file("/sys/bus/pci/drivers/vnpu/unbind", pci1);
	if (write_file("/sys/bus/pci/drivers/vnpu/bind", pci1))
		return -EIO;
	for (i = 0; i < 50 && ret; i++) {
		ret = npu_device_open_pci(pci1, &dev);
		if (ret) {
			usleep(100 * 1000);
			continue;
		}
		npu_device_get_info(dev, &info, sizeof(info));
		*minor = info.minor;
		ret = npu_context_create(dev, ctx);
		npu_device_close(dev);
	}
	return ret;
}

/*
 * Leave device 1 as the tests after this one find it, accel1: once the
 * group is freed nothing holds the first binding's minor, so binding
 * again takes it back.
 */
static int restore1(void)
{
	char was[sizeof(pci1)];
	int i;

	snprintf(was, sizeof(was), "%s", pci1);
	write_file("/sys/bus/pci/drivers/vnpu/unbind", was);
	if (write_file("/sys/bus/pci/drivers/vnpu/bind", was))
		return -EIO;
	for (i = 0; i < 50; i++) {
		if (!pci_of_accel1() && !strcmp(pci1, was))
			return 0;
		usleep(100 * 1000);
	}
	snprintf(pci1, sizeof(pci1), "%s", was);
	return -ENODEV;
}

int main(void)
{
	struct npu_group_result res[REQUESTS];
	struct npu_group_stats st = NPU_GROUP_STATS_INIT;
	struct npu_group_device_stats d0 = NPU_GROUP_DEVICE_STATS_INIT,
		d1 = NPU_GROUP_DEVICE_STATS_INIT, d2 = NPU_GROUP_DEVICE_STATS_INIT;
	struct npu_device_info info = { 0 };
	struct npu_context *ctx[2] = { NULL, NULL }, *again = NULL;
	struct npu_device *dev;
	struct npu_group *grp;
	struct g_model m;
	unsigned int i, wrong, failed = 0, rerun = 0;
	int err[REQUESTS], trig = 1, ret;
	size_t index = 0;
	uint32_t minor = UINT32_MAX;
	bool wedge;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pci_of_accel1())
		TAP_BAIL("no accel1");
	if (!npu_device_open(1, &dev)) {
		npu_device_get_info(dev, &info, sizeof(info));
		npu_device_close(dev);
	}
	wedge = info.caps & NPU_CAP_FAULT_INJECT;
	g_model_build(&m);
	ret = open_ctx(0, &ctx[0]);
	if (!ret)
		ret = open_ctx(1, &ctx[1]);
	if (!ret)
		ret = g_one_device(&m, ctx[0], REQUESTS, x, want);
	TAP_RET(ret, 0, "device 0 alone answers %d requests", REQUESTS);
	if (!ret)
		ret = npu_group_create(m.graph, ctx, 2, NULL, &grp);
	npu_context_destroy(ctx[0]);
	npu_context_destroy(ctx[1]);
	TAP_RET(ret, 0, "a group of both devices");
	if (ret)
		return tap_done();

	wrong = g_stream(grp, &m, REQUESTS, WINDOW, x, y, want, err, res, TRIGGER_AT,
			 wedge ? wedge1 : unbind1, &trig);
	for (i = 0; i < REQUESTS; i++)
		failed += err[i] != 0;
	npu_group_get_device_stats(grp, 1, &d1);
	TAP_RET(trig, 0, "device 1 %s after %d answers", wedge ? "wedged" : "unbound", TRIGGER_AT);
	tap_ok(!failed && !wrong, "every request answered right (%u failed, %u wrong)", failed,
	       wrong);
	tap_ok(d1.state == NPU_GROUP_DEVICE_LEFT, "device 1 left the group (%s)",
	       npu_strerror(d1.error));

	ret = rebind1(&again, &minor);
	TAP_RET(ret, 0, "device 1 (%s) binds again, as accel%u, and takes a context", pci1, minor);
	if (ret) {
		npu_group_free(grp);
		TAP_RET(restore1(), 0, "device 1 is accel1 again for the tests after this one");
		return tap_done();
	}
	ret = npu_group_add_device(grp, again, &index);
	npu_context_destroy(again);
	TAP_RET(ret, 0, "npu_group_add_device() takes it back");
	tap_ok(index == 2 && npu_group_num_devices(grp) == 3,
	       "as device 2 of 3 (%zu of %zu)", index, npu_group_num_devices(grp));

	npu_group_get_device_stats(grp, 0, &d0);
	npu_group_get_stats(grp, &st);
	{
		uint64_t before0 = d0.completed, failovers = st.failovers;

		failed = 0;
		wrong = g_stream(grp, &m, REQUESTS, WINDOW, x, y, want, err, res, 0, NULL, NULL);
		for (i = 0; i < REQUESTS; i++) {
			failed += err[i] != 0;
			rerun += !err[i] && res[i].attempts > 1;
			if (err[i])
				printf("# request %u: %s (device %u)\n", i, npu_strerror(err[i]),
				       res[i].device);
		}
		npu_group_get_device_stats(grp, 0, &d0);
		npu_group_get_device_stats(grp, 2, &d2);
		npu_group_get_stats(grp, &st);
		printf("# second stream: device 0 answered %llu, device 2 (accel%u) %llu\n",
		       (unsigned long long)(d0.completed - before0), d2.minor,
		       (unsigned long long)d2.completed);
		tap_ok(!failed && !wrong, "second stream: every request answered with device 0's"
		       " bytes (%u failed, %u wrong)", failed, wrong);
		tap_ok(d2.state == NPU_GROUP_DEVICE_ACTIVE && d2.completed > 0 &&
		       d0.completed - before0 + d2.completed == REQUESTS,
		       "the device that came back answers requests (%llu of %d)",
		       (unsigned long long)d2.completed, REQUESTS);
		tap_ok(!rerun && st.failovers == failovers && st.active_devices == 2,
		       "no failover, two devices active (%u active)", st.active_devices);
	}
	npu_group_free(grp);
	npu_graph_free(m.graph);
	TAP_RET(restore1(), 0, "device 1 (%s) is accel1 again for the tests after this one", pci1);
	return tap_done();
}
