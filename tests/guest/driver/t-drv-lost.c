// SPDX-License-Identifier: MIT
/*
 * A device that does not come back from a reset.  A hang makes the
 * timeout reset the device, which the fault injection leaves wedged
 * (STATUS never READY): the driver must give up, declare the device
 * lost and end every job (the hung one TIMEOUT or DEVICE_LOST, the ones
 * behind it never OK), and from then on refuse new work with -ENODEV
 * while still answering WAIT and JOB_STATUS for old jobs.  Rebinding the
 * PCI driver resets the device again and gives a working one.  The
 * harness fails the boot on any kernel warning.
 */
#include <limits.h>

#include "vnpu_t.h"

static int job_state(int fd, uint64_t id)
{
	struct drm_vnpu_job_status st;

	return t_job_status(fd, id, &st) ? -1 : (int)st.state;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -errno;
}

/* The PCI address of accel0, e.g. "0000:00:03.0". */
static int pci_name(char *buf, size_t len)
{
	char link[PATH_MAX];
	const char *slash;
	ssize_t n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);

	if (n < 0)
		return -errno;
	link[n] = 0;
	slash = strrchr(link, '/');
	slash = slash ? slash + 1 : link;
	if (strlen(slash) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, slash, strlen(slash) + 1);
	return 0;
}

int main(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	struct drm_vnpu_bo_create bc = { .size = 4096 };
	struct drm_vnpu_job_status st;
	uint64_t hung, behind, other;
	struct t_bo cmd, data;
	char pci[64];
	int fd, fd2, ret, sh, sb, so, i;
	uint32_t bos[2];
	size_t n;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	if (!(info.caps & DRM_VNPU_CAP_FAULT_INJECT)) {
		printf("1..0 # SKIP needs fault injection\n");
		return 0;
	}
	T_REQUIRE(pci_name(pci, sizeof(pci)) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	n = t_cmd_write(cmd.map, data.va, 1);
	t_ok(t_run(fd, cmd.va, n, 0, bos, 2, &st) == DRM_VNPU_JOB_OK, "a job runs before");

	T_REQUIRE(t_debugfs_write("inject_wedge", "1") == 0);
	T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
	T_REQUIRE(t_submit(fd, cmd.va, n, 0, bos, 2, &hung) == 0);
	T_REQUIRE(t_submit(fd, cmd.va, n, 0, bos, 2, &behind) == 0);
	T_REQUIRE(t_submit(fd, cmd.va, n, info.num_queues > 1 ? 1 : 0, bos, 2, &other) == 0);

	ret = t_wait_job(fd, hung, 300);
	sh = job_state(fd, hung);
	t_ok(ret == 0 && (sh == DRM_VNPU_JOB_TIMEOUT || sh == DRM_VNPU_JOB_DEVICE_LOST),
	     "the hung job ends when the device does not come back (%d, state %d)", ret, sh);
	t_ok(t_wait_job(fd, behind, 60) == 0 && t_wait_job(fd, other, 60) == 0,
	     "every other job ends too");
	sb = job_state(fd, behind);
	so = job_state(fd, other);
	t_ok(sb == DRM_VNPU_JOB_ABORTED || sb == DRM_VNPU_JOB_DEVICE_LOST,
	     "the job queued behind it is ABORTED or DEVICE_LOST, never run (state %d)", sb);
	t_ok(so == DRM_VNPU_JOB_OK || so == DRM_VNPU_JOB_ABORTED ||
	     so == DRM_VNPU_JOB_DEVICE_LOST,
	     "the job on another queue finished before, or ended with the device (state %d)", so);

	t_ok(t_submit(fd, cmd.va, n, 0, bos, 2, NULL) == -ENODEV, "SUBMIT on a lost device: -ENODEV");
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &bc) == -ENODEV,
	     "BO_CREATE on a lost device: -ENODEV");
	t_ok(job_state(fd, hung) == sh, "JOB_STATUS still answers for old jobs");
	t_ok(t_debugfs_state("lost") == 1, "debugfs says the device is lost");

	/* Rebind: probe resets the device, which the wedge no longer holds. */
	munmap(cmd.map, cmd.size);
	munmap(data.map, data.size);
	close(fd);
	ret = write_file("/sys/bus/pci/drivers/vnpu/unbind", pci);
	if (!ret)
		ret = write_file("/sys/bus/pci/drivers/vnpu/bind", pci);
	t_ok(ret == 0, "unbind and bind %s (%d)", pci, ret);
	for (i = 0, fd2 = -1; i < 50 && fd2 < 0; i++) {
		fd2 = t_open();
		if (fd2 < 0)
			usleep(100000);
	}
	T_REQUIRE(fd2 >= 0);
	T_REQUIRE(t_bo_new(fd2, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd2, 4096, 0, &data) == 0);
	n = t_cmd_write(cmd.map, data.va, 7);
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	t_ok(t_run(fd2, cmd.va, n, 0, bos, 2, &st) == DRM_VNPU_JOB_OK &&
	     *(volatile uint64_t *)data.map == 7, "the rebound device runs jobs");
	t_ok(t_debugfs_state("lost") == 0, "and is not lost");
	close(fd2);
	return t_done();
}
