// SPDX-License-Identifier: MIT
/*
 * PCI unbind with open files, live mmaps and jobs in flight, then rebind.
 * The process sees clean errors: the jobs' fences (exported as sync files
 * before the unbind) signal with an error, every ioctl on the old files
 * fails with -ENODEV, the mmaps keep their contents, and closing
 * everything afterwards is quiet.  On the debug
 * kernel, DMA-API debugging checks at unbind that the driver released all
 * its DMA memory although the files still hold the DRM device.  Rebinding
 * gives a working device.  Rebinds the device, so it runs last (t-zz-*).
 */
#include <dirent.h>
#include <poll.h>
#include <linux/sync_file.h>
#include "vnpu_t.h"

#define BUSY_BYTES	(1 << 20)

static char pci[256];

static int pci_write(const char *what)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vnpu/%s", what);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, pci, strlen(pci)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The accel node of our PCI function, or -1: the minor may change. */
static int open_node(void)
{
	char dir[512], path[300];
	struct dirent *e;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/accel", pci);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "accel", 5)) {
			snprintf(path, sizeof(path), "/dev/accel/%s", e->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			break;
		}
	closedir(d);
	return fd;
}

static int open_node_wait(void)
{
	int i, fd = -1;

	for (i = 0; i < 50 && fd < 0; i++) {
		fd = open_node();
		if (fd < 0)
			usleep(100 * 1000);
	}
	return fd;
}

/* A job writing its finished fence to a new syncobj, exported as a sync file. */
static int submit_sync(int fd, uint64_t cmd_va, uint32_t len, uint32_t queue,
		       const uint32_t *bos, uint32_t nbos, int *sync_fd)
{
	struct drm_vnpu_submit s = {
		.cmd_va = cmd_va,
		.cmd_size = len,
		.queue = queue,
		.priority = DRM_VNPU_PRIORITY_NORMAL,
		.bo_handles = (uintptr_t)bos,
		.bo_count = nbos,
	};
	uint32_t syncobj;
	int ret;

	if (drmSyncobjCreate(fd, 0, &syncobj))
		return -errno;
	s.out_syncobj = syncobj;
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);
	if (!ret && drmSyncobjExportSyncFile(fd, syncobj, sync_fd))
		ret = -errno;
	drmSyncobjDestroy(fd, syncobj);
	return ret;
}

int main(void)
{
	struct drm_vnpu_bo_create bc = { .size = 4096 };
	struct drm_vnpu_bo_info bi = {};
	struct drm_vnpu_job_status st;
	struct t_bo cmd, src, dst, keep;
	int sync_fds[3];
	char link[256];
	unsigned int busy, failed = 0, signalled = 0, i;
	uint64_t id;
	ssize_t n;
	size_t len;
	int fd, fd2, nfd, ret;

	n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	T_REQUIRE(n > 0);
	link[n] = 0;
	snprintf(pci, sizeof(pci), "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);

	fd = t_open();
	T_REQUIRE(fd >= 0);
	fd2 = t_open();		/* an idle second file, never used before unbind */
	T_REQUIRE(fd2 >= 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, BUSY_BYTES, 0, &src) == 0);
	T_REQUIRE(t_bo_new(fd, BUSY_BYTES, 0, &dst) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &keep) == 0);
	memset(keep.map, 0x77, 4096);

	/* Two long jobs on queue 0 (one running, one queued), one on queue 1. */
	busy = t_busy_count(fd, &cmd, src.va, dst.va, BUSY_BYTES, 16, 4000000000ll);
	len = t_cmd_busy(cmd.map, cmd.size, src.va, dst.va, BUSY_BYTES, busy);
	for (i = 0; i < 3; i++)
		T_REQUIRE(submit_sync(fd, cmd.va, len, i == 2, (uint32_t[]){ cmd.handle,
				      src.handle, dst.handle }, 3, &sync_fds[i]) == 0);
	usleep(300 * 1000);

	ret = pci_write("unbind");
	t_ok(ret == 0, "unbind %s with files open and jobs running (%d)", pci, ret);
	T_REQUIRE(ret == 0);

	for (i = 0; i < 3; i++) {
		struct pollfd p = { .fd = sync_fds[i], .events = POLLIN };
		struct sync_file_info info = {};

		if (poll(&p, 1, 60000) == 1)
			signalled++;
		if (!ioctl(sync_fds[i], SYNC_IOC_FILE_INFO, &info) && info.status < 0)
			failed++;
		close(sync_fds[i]);
	}
	t_ok(signalled == 3, "every job's fence signals (%u of 3)", signalled);
	t_ok(failed == 3, "with an error: the jobs did not complete (%u of 3)", failed);

	ret = t_submit(fd, cmd.va, len, 0, (uint32_t[]){ cmd.handle }, 1, &id);
	t_ok(ret == -ENODEV, "SUBMIT fails with ENODEV (%d)", ret);
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &bc);
	t_ok(ret == -ENODEV, "BO_CREATE fails with ENODEV (%d)", ret);
	bi.handle = keep.handle;
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &bi);
	t_ok(ret == -ENODEV, "BO_INFO fails with ENODEV (%d)", ret);
	ret = t_job_status(fd, 1, &st);
	t_ok(ret == -ENODEV, "JOB_STATUS fails with ENODEV (%d)", ret);
	bc.size = 4096;
	ret = t_ioctl(fd2, DRM_IOCTL_VNPU_BO_CREATE, &bc);
	t_ok(ret == -ENODEV, "an idle file gets ENODEV too (%d)", ret);

	t_ok(((volatile uint8_t *)keep.map)[4095] == 0x77, "mmap still reads the BO");
	((volatile uint8_t *)keep.map)[0] = 0x78;
	t_ok(((volatile uint8_t *)keep.map)[0] == 0x78, "and writes it");

	/* Rebind while the old files are open: a second DRM device. */
	ret = pci_write("bind");
	nfd = open_node_wait();
	t_ok(ret == 0 && nfd >= 0, "rebind with the old files still open (%d)", ret);
	ret = t_submit(fd, cmd.va, len, 0, (uint32_t[]){ cmd.handle }, 1, &id);
	t_ok(ret == -ENODEV, "old file still ENODEV after rebind (%d)", ret);
	if (nfd >= 0) {
		struct t_bo c2, d2;

		T_REQUIRE(t_bo_new(nfd, 4096, 0, &c2) == 0);
		T_REQUIRE(t_bo_new(nfd, 4096, 0, &d2) == 0);
		len = t_cmd_write(c2.map, d2.va, 0xfeed);
		ret = t_run(nfd, c2.va, len, 0, (uint32_t[]){ c2.handle, d2.handle }, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)d2.map == 0xfeed,
		     "rebound device runs jobs (%d)", ret);
		close(nfd);
	}

	/* Closing the old files frees what is left of the old device. */
	munmap(keep.map, keep.size);
	munmap(cmd.map, cmd.size);
	munmap(src.map, src.size);
	munmap(dst.map, dst.size);
	close(fd);
	close(fd2);

	/* Leave the device as accel0 again, as the next boot stage expects. */
	ret = pci_write("unbind");
	if (!ret)
		ret = pci_write("bind");
	for (i = 0; i < 50 && access("/dev/accel/accel0", F_OK); i++)
		usleep(100 * 1000);
	t_ok(ret == 0 && !access("/dev/accel/accel0", F_OK),
	     "unbind and bind again once the old files are closed: accel0 (%d)", ret);
	nfd = t_open();
	T_REQUIRE(nfd >= 0);
	{
		struct t_bo c2, d2;

		T_REQUIRE(t_bo_new(nfd, 4096, 0, &c2) == 0);
		T_REQUIRE(t_bo_new(nfd, 4096, 0, &d2) == 0);
		len = t_cmd_write(c2.map, d2.va, 0xbeef);
		ret = t_run(nfd, c2.va, len, 1, (uint32_t[]){ c2.handle, d2.handle }, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)d2.map == 0xbeef,
		     "and runs jobs (%d)", ret);
	}
	close(nfd);
	return t_done();
}
