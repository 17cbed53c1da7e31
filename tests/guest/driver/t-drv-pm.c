// SPDX-License-Identifier: MIT
/*
 * Power management.  With runtime PM allowed (power/control = auto, which
 * the test sets and restores), an idle device autosuspends to D3hot, where
 * the model loses all its state, and the next SUBMIT brings it back with
 * its MMU, rings and contexts reprogrammed; BOs made before and during the
 * suspend work.  A running job keeps the device in D0 past the autosuspend
 * delay.  A system suspend (s2idle with pm_test=devices, when the kernel
 * has it) waits for the job in flight and the device runs jobs afterwards.
 *
 * Fails on a driver without runtime PM: the device never leaves D0.
 */
#include "vnpu_t.h"

static char dev_dir[256];

static int sysfs_read(const char *file, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dev_dir, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int write_sysfs(const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dev_dir, file);
	return write_file(path, val);
}

static int is_status(const char *want)
{
	char buf[64];

	return !sysfs_read("power/runtime_status", buf, sizeof(buf)) &&
	       !strcmp(buf, want);
}

/* Poll for runtime_status == @want for up to @ms. */
static int wait_status(const char *want, int ms)
{
	while (ms > 0) {
		if (is_status(want))
			return 1;
		usleep(50 * 1000);
		ms -= 50;
	}
	return is_status(want);
}

int main(void)
{
	struct drm_vnpu_job_status st;
	struct t_bo cmd, src, dst, late;
	struct t_bo bcmd;
	char buf[256], control[16];
	unsigned int busy;
	uint64_t id;
	size_t len;
	int fd, ret;

	T_REQUIRE(realpath("/sys/class/accel/accel0/device", dev_dir) != NULL);

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &bcmd) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &src) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &dst) == 0);
	memset(src.map, 0x5a, 4096);

	if (sysfs_read("power/runtime_status", buf, sizeof(buf))) {
		printf("ok 1 # SKIP kernel without runtime PM (CONFIG_PM)\n1..1\n");
		return 0;
	}
	/* Runtime PM is userspace policy (PCI default: on); allow it. */
	T_REQUIRE(!sysfs_read("power/control", control, sizeof(control)));
	T_REQUIRE(write_sysfs("power/control", "auto") == 0);
	t_ok(!sysfs_read("power/control", buf, sizeof(buf)) && !strcmp(buf, "auto"),
	     "runtime PM allowed (control=%s, was %s)", buf, control);

	len = t_cmd_copy(cmd.map, src.va, dst.va, 4096);
	ret = t_run(fd, cmd.va, len, 0, (uint32_t[]){ cmd.handle, src.handle, dst.handle },
		    3, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && ((uint8_t *)dst.map)[4095] == 0x5a,
	     "job before suspend runs (%d)", ret);

	/* Idle: autosuspend (1 s on an emulator) puts it in D3hot. */
	t_ok(wait_status("suspended", 20000), "idle device autosuspends");
	t_ok(!sysfs_read("power_state", buf, sizeof(buf)) && !strcmp(buf, "D3hot"),
	     "suspended device is in D3hot (%s)", buf);

	/* A BO made while suspended: its TLB invalidation waits for D0. */
	T_REQUIRE(t_bo_new(fd, 4096, 0, &late) == 0);
	t_ok(is_status("suspended"), "BO_CREATE does not wake the device");

	/* The device lost everything in D3hot: old BOs must still map. */
	memset(src.map, 0xa5, 4096);
	len = t_cmd_copy(cmd.map, src.va, dst.va, 4096);
	len += t_cmd_write((char *)cmd.map + len, late.va, 0x1234567890abcdefull);
	ret = t_run(fd, cmd.va, len, 1,
		    (uint32_t[]){ cmd.handle, src.handle, dst.handle, late.handle }, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && ((uint8_t *)dst.map)[0] == 0xa5 &&
	     *(uint64_t *)late.map == 0x1234567890abcdefull,
	     "SUBMIT resumes the device; BOs from before and during suspend work (%d)",
	     ret);
	t_ok(!sysfs_read("power_state", buf, sizeof(buf)) && !strcmp(buf, "D0"),
	     "device back in D0 (%s)", buf);

	/* A job longer than the autosuspend delay keeps the device up. */
	busy = t_busy_count(fd, &bcmd, src.va, dst.va, 1 << 20, 16, 3000000000ll);
	T_REQUIRE(wait_status("suspended", 20000));
	len = t_cmd_busy(bcmd.map, bcmd.size, src.va, dst.va, 1 << 20, busy);
	T_REQUIRE(t_submit(fd, bcmd.va, len, 0,
			   (uint32_t[]){ bcmd.handle, src.handle, dst.handle }, 3, &id) == 0);
	usleep(1500 * 1000);
	t_ok(is_status("active"), "device stays active while a job runs past the delay");
	t_ok(t_wait_job(fd, id, 120) == 0 && t_job_status(fd, id, &st) == 0 &&
	     st.state == DRM_VNPU_JOB_OK, "the long job completes (state %u)", st.state);
	t_ok(wait_status("suspended", 20000), "and the device suspends after it");

	/* debugfs register reads wake it up rather than reading all ones. */
	t_ok(t_debugfs_state("resets") >= 0, "debugfs state readable while suspended");

	/* System suspend with a job in flight: the suspend waits it out. */
	if (access("/sys/power/pm_test", W_OK) ||
	    sysfs_read("power/runtime_status", buf, sizeof(buf)) ||
	    write_file("/sys/power/pm_test", "devices")) {
		t_ok(1, "# SKIP system suspend: no pm_test (CONFIG_PM_DEBUG)");
	} else {
		int sret;

		write_file("/sys/module/suspend/parameters/pm_test_delay", "1");
		busy = busy / 3 ? busy / 3 : 1;
		len = t_cmd_busy(bcmd.map, bcmd.size, src.va, dst.va, 1 << 20, busy);
		T_REQUIRE(t_submit(fd, bcmd.va, len, 2,
				   (uint32_t[]){ bcmd.handle, src.handle, dst.handle }, 3,
				   &id) == 0);
		/* Returns after the whole suspend and resume cycle. */
		sret = write_file("/sys/power/state", "freeze");
		write_file("/sys/power/pm_test", "none");
		t_ok(sret == 0, "s2idle (pm_test=devices) suspend and resume (%d)", sret);
		t_ok(t_wait_job(fd, id, 120) == 0 && t_job_status(fd, id, &st) == 0 &&
		     st.state == DRM_VNPU_JOB_OK,
		     "job in flight at system suspend completes (state %u)", st.state);
		memset(src.map, 0x3c, 4096);
		len = t_cmd_copy(cmd.map, src.va, dst.va, 4096);
		ret = t_run(fd, cmd.va, len, 3,
			    (uint32_t[]){ cmd.handle, src.handle, dst.handle }, 3, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && ((uint8_t *)dst.map)[100] == 0x3c,
		     "job after system resume runs (%d)", ret);
	}
	close(fd);
	write_sysfs("power/control", control);
	return t_done();
}
