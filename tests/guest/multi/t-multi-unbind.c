// SPDX-License-Identifier: MIT
/*
 * Losing one of two devices.  Device 1 is unbound (PCI remove through
 * sysfs) while jobs run on it and device 0 streams jobs of its own; the
 * two share a BO each way as dma-bufs.  Device 0 keeps working
 * throughout, with every result right; device 1's jobs end, each done
 * or failed with -ENODEV (which ones the hardware finished before the
 * remove stopped it depends on how long the remove takes), and its files
 * get -ENODEV; the BO device 0 imported from device 1 keeps its pages
 * (shmem, not device memory), so jobs on device 0 still read and write
 * it, even one that was waiting for a device 1 job on it when device 1
 * went; device 1's old mapping of it still shows them.  On the debug
 * kernel, DMA-API debugging checks that none of device 1's imports kept
 * a DMA mapping past the unbind.  With everything of the old device 1
 * closed, binding it again gives a working device.
 */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/sync_file.h>
#include "multi.h"

#define BUSY_BYTES	(1u << 20)
#define BUSY_NS		4000000000ll
#define SLOT		(256u << 10)	/* command bytes per device 1 job */
#define SHARED_BYTES	(64u << 10)
#define STREAM_MAX	100000

static char pci1[256];

static int pci_write(const char *what)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vnpu/%s", what);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, pci1, strlen(pci1)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Device 1's accel node once bound again (its minor may differ), or -1. */
static int open_rebound(char *name, size_t len)
{
	char dir[512], path[300];
	int i, fd = -1;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/accel", pci1);
	for (i = 0; i < 50 && fd < 0; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (!strncmp(e->d_name, "accel", 5)) {
				snprintf(name, len, "%s", e->d_name);
				snprintf(path, sizeof(path), "/dev/accel/%s", e->d_name);
				fd = open(path, O_RDWR | O_CLOEXEC);
				break;
			}
		if (d)
			closedir(d);
		if (fd < 0)
			usleep(100 * 1000);
	}
	return fd;
}

/*
 * Child: jobs on device 0, one after the other, each checked, until
 * @stop is readable.  Exit status: 0 when every one was right.
 */
static int stream(int stop)
{
	struct drm_vnpu_job_status st;
	struct pollfd p = { .fd = stop, .events = POLLIN };
	struct t_bo cmd, dst;
	unsigned int n, bad = 0;
	int fd = m_open(0);

	if (fd < 0 || t_bo_new(fd, 4096, 0, &cmd) || t_bo_new(fd, 4096, 0, &dst))
		return 2;
	for (n = 0; n < STREAM_MAX && poll(&p, 1, 0) == 0; n++) {
		uint64_t v = 0x5700000000000000ull | n;
		size_t len = t_cmd_write(cmd.map, dst.va, v);
		int ret = t_run(fd, cmd.va, len, n & 1, (uint32_t[]){ cmd.handle, dst.handle },
				2, &st);

		if (ret != DRM_VNPU_JOB_OK || *(volatile uint64_t *)dst.map != v) {
			if (!bad)
				printf("# device 0 stream: job %u: state %d\n", n, ret);
			bad++;
		}
	}
	printf("# device 0 stream: %u jobs, %u wrong\n", n, bad);
	return bad || !n ? 1 : 0;
}

/* A job whose finished fence comes back as a sync file. */
static int submit_sync(int fd, uint64_t cmd_va, size_t len, uint32_t queue,
		       const uint32_t *bos, uint32_t nbos, int *sync_file)
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
	if (!ret && drmSyncobjExportSyncFile(fd, syncobj, sync_file))
		ret = -errno;
	drmSyncobjDestroy(fd, syncobj);
	return ret;
}

static unsigned int count_not(const void *p, size_t bytes, uint32_t want)
{
	const uint32_t *w = p;
	unsigned int bad = 0;
	size_t k;

	for (k = 0; k < bytes / 4; k++)
		bad += w[k] != want;
	return bad;
}

int main(void)
{
	static const char *const what[] = {
		"queue 0: busy, then FILL of the BO device 0 imported",
		"queue 0: busy, then FILL of the BO imported from device 0",
		"queue 1: busy",
	};
	struct t_bo cmd0, local0, lost0 = {}, kept0, cmd1, src1, dst1, lost1, kept1 = {};
	int fd0, fd1, nfd, stop[2], sync_files[3], ret, status;
	unsigned int i, busy, ended = 0, clean = 0, lost = 0;
	char node[256];
	uint64_t id, id2;
	size_t len;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_REQUIRE(m_pci_of(1, pci1, sizeof(pci1)) == 0);
	fd0 = m_open(0);
	fd1 = m_open(1);
	T_REQUIRE(fd0 >= 0 && fd1 >= 0);
	T_REQUIRE(t_bo_new(fd0, 64 << 10, 0, &cmd0) == 0);
	T_REQUIRE(t_bo_new(fd0, SHARED_BYTES, 0, &local0) == 0);
	T_REQUIRE(t_bo_new(fd1, 3 * SLOT, 0, &cmd1) == 0);
	T_REQUIRE(t_bo_new(fd1, BUSY_BYTES, 0, &src1) == 0);
	T_REQUIRE(t_bo_new(fd1, BUSY_BYTES, 0, &dst1) == 0);
	/* lost1: device 1's BO, imported on device 0 as lost0; kept0 the reverse. */
	T_REQUIRE(t_bo_new(fd1, SHARED_BYTES, 0, &lost1) == 0);
	memset(lost1.map, 0x10, SHARED_BYTES);
	T_REQUIRE(m_share(fd1, &lost1, fd0, &lost0) == 0);
	T_REQUIRE(t_bo_new(fd0, SHARED_BYTES, 0, &kept0) == 0);
	T_REQUIRE(m_share(fd0, &kept0, fd1, &kept1) == 0);

	busy = t_busy_count(fd1, &cmd1, src1.va, dst1.va, BUSY_BYTES, 16, BUSY_NS);
	if (busy > (SLOT - 64) / sizeof(struct vnpu_cmd_copy))
		busy = (SLOT - 64) / sizeof(struct vnpu_cmd_copy);
	T_REQUIRE(pipe(stop) == 0);
	child = fork();
	T_REQUIRE(child >= 0);
	if (!child) {
		close(stop[1]);
		_exit(stream(stop[0]));
	}
	close(stop[0]);

	/* Three jobs on device 1, each in its own slot of cmd1. */
	for (i = 0; i < 3; i++) {
		char *p = (char *)cmd1.map + i * SLOT;
		uint32_t bos[] = { cmd1.handle, src1.handle, dst1.handle,
				   i == 0 ? lost1.handle : kept1.handle };

		len = t_cmd_busy(p, SLOT - 64, src1.va, dst1.va, BUSY_BYTES, busy);
		if (i == 0)
			len += t_cmd_fill(p + len, lost1.va, SHARED_BYTES, 0x44444444);
		else if (i == 1)
			len += t_cmd_fill(p + len, kept1.va, SHARED_BYTES, 0x66666666);
		T_REQUIRE(submit_sync(fd1, cmd1.va + i * SLOT, len, i == 2, bos,
				      i == 2 ? 3 : 4, &sync_files[i]) == 0);
	}
	/* Waits, through the shared reservation, for device 1's first job. */
	len = t_cmd_fill(cmd0.map, lost0.va, SHARED_BYTES, 0x55555555);
	len += t_cmd_copy((char *)cmd0.map + len, lost0.va, local0.va, SHARED_BYTES);
	T_REQUIRE(t_submit(fd0, cmd0.va, len, 0, (uint32_t[]){ cmd0.handle, lost0.handle,
			   local0.handle }, 3, &id) == 0);
	usleep(300 * 1000);

	ret = pci_write("unbind");
	t_ok(ret == 0, "unbind device 1 (%s) with jobs running on both devices (%d)", pci1, ret);
	T_REQUIRE(ret == 0);

	for (i = 0; i < 3; i++) {
		struct pollfd p = { .fd = sync_files[i], .events = POLLIN };
		struct sync_file_info info = {};

		if (poll(&p, 1, 60000) == 1 && !ioctl(sync_files[i], SYNC_IOC_FILE_INFO, &info)) {
			ended++;
			clean += info.status == 1 || info.status == -ENODEV;
			lost += info.status == -ENODEV;
			printf("# device 1 job %u (%s): fence status %d\n", i, what[i], info.status);
		}
		close(sync_files[i]);
	}
	t_ok(ended == 3, "device 1's jobs all end (%u of 3)", ended);
	t_ok(clean == 3, "each done or failed with ENODEV (%u of 3)", clean);
	/* The second waits behind the first's BUSY_NS: the remove caught it. */
	t_ok(lost > 0, "the unbind caught work in flight: %u failed", lost);

	ret = m_finish(fd0, id);
	t_ok(ret == DRM_VNPU_JOB_OK && !count_not(local0.map, SHARED_BYTES, 0x55555555),
	     "device 0's job on device 1's BO, queued behind device 1's job on it, runs (%d)",
	     ret);

	ret = t_submit(fd1, cmd1.va, 8, 0, NULL, 0, &id2);
	t_ok(ret == -ENODEV, "device 1's file gets ENODEV (%d)", ret);

	len = t_cmd_fill(cmd0.map, lost0.va, SHARED_BYTES, 0x88888888);
	len += t_cmd_fill((char *)cmd0.map + len, kept0.va, SHARED_BYTES, 0x77777777);
	len += t_cmd_copy((char *)cmd0.map + len, lost0.va, local0.va, SHARED_BYTES);
	ret = t_submit(fd0, cmd0.va, len, 1, (uint32_t[]){ cmd0.handle, lost0.handle,
		       local0.handle, kept0.handle }, 4, &id);
	if (!ret)
		ret = m_finish(fd0, id);
	t_ok(ret == DRM_VNPU_JOB_OK && !count_not(local0.map, SHARED_BYTES, 0x88888888) &&
	     !count_not(kept0.map, SHARED_BYTES, 0x77777777),
	     "after the unbind, device 0 writes and reads the BO it imported from device 1 "
	     "and its own BO device 1 had imported (%d)", ret);
	t_ok(!count_not(lost0.map, SHARED_BYTES, 0x88888888) &&
	     !count_not(lost1.map, SHARED_BYTES, 0x88888888),
	     "device 0's and device 1's old mappings of that BO show the same pages");

	if (write(stop[1], "s", 1) != 1)
		kill(child, SIGKILL);
	close(stop[1]);
	T_REQUIRE(waitpid(child, &status, 0) == child);
	t_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	     "device 0 ran a stream of jobs all through, every one right (exit %d)",
	     WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	/* Everything of the old device 1 goes, so its minor is free again. */
	m_bo_close(fd0, &lost0);
	munmap(lost1.map, lost1.size);
	munmap(kept1.map, kept1.size);
	munmap(cmd1.map, cmd1.size);
	munmap(src1.map, src1.size);
	munmap(dst1.map, dst1.size);
	close(fd1);

	ret = pci_write("bind");
	nfd = open_rebound(node, sizeof(node));
	t_ok(ret == 0 && nfd >= 0 && !strcmp(node, "accel1"),
	     "device 1 binds again as accel1 (%d, %s)", ret, nfd >= 0 ? node : "no node");
	if (nfd >= 0) {
		struct drm_vnpu_job_status st;
		struct t_bo c, d;

		T_REQUIRE(t_bo_new(nfd, 4096, 0, &c) == 0);
		T_REQUIRE(t_bo_new(nfd, 4096, 0, &d) == 0);
		len = t_cmd_write(c.map, d.va, 0xfeed);
		ret = t_run(nfd, c.va, len, 0, (uint32_t[]){ c.handle, d.handle }, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)d.map == 0xfeed,
		     "and runs jobs (%d)", ret);
		close(nfd);
	}
	len = t_cmd_fill(cmd0.map, kept0.va, SHARED_BYTES, 0x99999999);
	ret = t_submit(fd0, cmd0.va, len, 0, (uint32_t[]){ cmd0.handle, kept0.handle }, 2, &id);
	if (!ret)
		ret = m_finish(fd0, id);
	t_ok(ret == DRM_VNPU_JOB_OK && !count_not(kept0.map, SHARED_BYTES, 0x99999999),
	     "device 0 still runs jobs (%d)", ret);
	close(fd0);
	return t_done();
}
