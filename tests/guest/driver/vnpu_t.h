/* SPDX-License-Identifier: MIT */
/*
 * Tiny TAP and ioctl helpers shared by the driver's guest tests.  Tests
 * talk to the uapi directly (not through libnpu) so every errno the
 * driver documents can be provoked and checked.
 */
#ifndef VNPU_T_H
#define VNPU_T_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include "vnpu_accel.h"
#include "vnpu/vnpu_hw.h"

static int t_num, t_failed;

static inline void t_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	t_num++;
	printf("%sok %d - ", cond ? "" : "not ", t_num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		t_failed++;
}

/* A check that cannot be judged in this run, and why. */
static inline void t_skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++t_num, what, why);
	fflush(stdout);
}

static inline int t_done(void)
{
	printf("1..%d\n", t_num);
	return t_failed ? 1 : 0;
}

/* Fatal setup failure: report and stop. */
#define T_REQUIRE(cond) do {						\
	if (!(cond)) {							\
		printf("not ok %d - %s:%d: %s (errno %d)\n", ++t_num,	\
		       __FILE__, __LINE__, #cond, errno);		\
		printf("1..%d\n", t_num);				\
		exit(1);						\
	}								\
} while (0)

/* ioctl returning -errno, 0 on success. */
static inline int t_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

static inline int t_open(void)
{
	const char *path = getenv("VNPU_DEV") ? getenv("VNPU_DEV") : "/dev/accel/accel0";

	return open(path, O_RDWR | O_CLOEXEC);
}

static inline int64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

struct t_bo {
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
};

static inline int t_bo_new(int fd, uint64_t size, uint32_t flags, struct t_bo *bo)
{
	struct drm_vnpu_bo_create c = { .size = size, .flags = flags };
	struct drm_vnpu_bo_info i = {};
	int ret = t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c);

	if (ret)
		return ret;
	i.handle = c.handle;
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->va = c.va;
	bo->size = c.size;
	bo->map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       i.mmap_offset);
	return bo->map == MAP_FAILED ? -errno : 0;
}

/* Append a WRITE_VALUE; returns bytes written. */
static inline size_t t_cmd_write(void *buf, uint64_t dst_va, uint64_t value)
{
	struct vnpu_cmd_write_value c = {
		.hdr = { .opcode = VNPU_CMD_WRITE_VALUE, .size = sizeof(c) },
		.dst_va = dst_va,
		.value = value,
	};

	memcpy(buf, &c, sizeof(c));
	return sizeof(c);
}

static inline size_t t_cmd_copy(void *buf, uint64_t src_va, uint64_t dst_va,
			 uint64_t size)
{
	struct vnpu_cmd_copy c = {
		.hdr = { .opcode = VNPU_CMD_COPY, .size = sizeof(c) },
		.src_va = src_va,
		.dst_va = dst_va,
		.size = size,
	};

	memcpy(buf, &c, sizeof(c));
	return sizeof(c);
}

static inline int t_submit(int fd, uint64_t cmd_va, uint32_t cmd_size, uint32_t queue,
		    const uint32_t *bos, uint32_t nbos, uint64_t *job_id)
{
	struct drm_vnpu_submit s = {
		.cmd_va = cmd_va,
		.cmd_size = cmd_size,
		.queue = queue,
		.priority = DRM_VNPU_PRIORITY_NORMAL,
		.bo_handles = (uintptr_t)bos,
		.bo_count = nbos,
	};
	int ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);

	if (!ret && job_id)
		*job_id = s.job_id;
	return ret;
}

static inline int t_wait_job(int fd, uint64_t job_id, int64_t timeout_s)
{
	struct drm_vnpu_wait w = {
		.type = DRM_VNPU_WAIT_JOB,
		.id = job_id,
		.timeout_ns = t_now_ns() + timeout_s * 1000000000ll,
	};

	return t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w);
}

static inline int t_job_status(int fd, uint64_t job_id, struct drm_vnpu_job_status *st)
{
	memset(st, 0, sizeof(*st));
	st->job_id = job_id;
	return t_ioctl(fd, DRM_IOCTL_VNPU_JOB_STATUS, st);
}

/* Submit, wait and return the job's final state (or -errno). */
static inline int t_run(int fd, uint64_t cmd_va, uint32_t cmd_size, uint32_t queue,
		 const uint32_t *bos, uint32_t nbos, struct drm_vnpu_job_status *st)
{
	uint64_t id;
	int ret = t_submit(fd, cmd_va, cmd_size, queue, bos, nbos, &id);

	if (ret)
		return ret;
	ret = t_wait_job(fd, id, 120);
	if (ret)
		return ret;
	ret = t_job_status(fd, id, st);
	return ret ? ret : (int)st->state;
}

/* The device's debugfs directory is named after its PCI address. */
static inline int t_debugfs_write(const char *file, const char *val)
{
	char link[256], path[512];
	const char *pci;
	ssize_t n;
	int fd, ret = 0;

	n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	pci = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", pci, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Append a FILL of @size bytes at @dst_va with @pattern; returns bytes. */
static inline size_t t_cmd_fill(void *buf, uint64_t dst_va, uint64_t size,
				uint32_t pattern)
{
	struct vnpu_cmd_fill c = {
		.hdr = { .opcode = VNPU_CMD_FILL, .size = sizeof(c) },
		.dst_va = dst_va,
		.size = size,
		.pattern = pattern,
	};

	memcpy(buf, &c, sizeof(c));
	return sizeof(c);
}

/* A numeric line "@key: N" of the device's debugfs state, or -1. */
static inline long long t_debugfs_state(const char *key)
{
	char link[256], path[512], buf[8192], pat[64];
	const char *pci, *p;
	ssize_t n;
	int fd;

	n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = 0;
	pci = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/state", pci);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	snprintf(pat, sizeof(pat), "%s: ", key);
	p = strstr(buf, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

/*
 * A long job for recovery tests: COPY @bytes from @src_va to @dst_va
 * @count times, written to @buf (at most @cap bytes); returns bytes.
 */
static inline size_t t_cmd_busy(void *buf, size_t cap, uint64_t src_va,
				uint64_t dst_va, uint64_t bytes, unsigned int count)
{
	size_t n = 0;

	while (count-- && n + sizeof(struct vnpu_cmd_copy) <= cap)
		n += t_cmd_copy((char *)buf + n, src_va, dst_va, bytes);
	return n;
}

/*
 * How many COPYs of @bytes make a job last about @ns of device time:
 * measured with a job of @probe of them.  At least 1.
 */
static inline unsigned int t_busy_count(int fd, struct t_bo *cmd, uint64_t src_va,
					uint64_t dst_va, uint64_t bytes,
					unsigned int probe, int64_t ns)
{
	struct drm_vnpu_job_status st;
	size_t n = t_cmd_busy(cmd->map, cmd->size, src_va, dst_va, bytes, probe);
	int64_t per, best = INT64_MAX;
	int i;

	/*
	 * The fastest of three probes: a probe slowed by a busy host would
	 * size a job that finishes too early once the host is quiet, and
	 * the timing windows the tests rely on are tighter on that side.
	 */
	for (i = 0; i < 3; i++) {
		if (t_run(fd, cmd->va, n, 0, NULL, 0, &st) != DRM_VNPU_JOB_OK)
			return 1;
		if ((int64_t)st.duration_ns < best)
			best = st.duration_ns;
	}
	per = best / probe;
	if (per <= 0)
		per = 1;
	return ns / per > 0 ? ns / per : 1;
}

#endif /* VNPU_T_H */
