// SPDX-License-Identifier: MIT
/*
 * TLB invalidation against resets.  A child process keeps creating,
 * mapping and freeing BOs and opening and closing files (every one of
 * which invalidates the device TLB) while the parent provokes resets with
 * injected hangs, and frees the hung job's BOs while it hangs.  No
 * invalidation may time out (debugfs tlb_timeouts; a reset holds the MMU
 * lock while it re-initialises the MMU), no page may be leaked, and the
 * device works afterwards.  The harness fails the boot on any kernel
 * warning.
 */
#include <signal.h>
#include <sys/wait.h>

#include "vnpu_t.h"

#define ROUNDS	2

/* Churn until killed; exit 1 on the first unexpected error. */
static void churn(void)
{
	struct drm_gem_close gc = {};
	struct t_bo bo;
	int fd = -1, i;

	for (i = 0;; i++) {
		if (fd < 0) {
			fd = t_open();
			if (fd < 0)
				_exit(1);
		}
		if (t_bo_new(fd, 4096 << (i % 4), 0, &bo))
			_exit(1);
		munmap(bo.map, bo.size);
		gc.handle = bo.handle;
		if (ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc))
			_exit(1);
		/* Every 16th round frees the whole address space. */
		if (i % 16 == 15) {
			close(fd);
			fd = -1;
		}
	}
}

int main(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	struct drm_vnpu_job_status st;
	struct drm_gem_close gc = {};
	long long r0, t0, l0;
	struct t_bo cmd, data;
	uint32_t bos[2];
	int fd, r, ret, status;
	uint64_t id;
	pid_t pid;
	size_t n;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	if (!(info.caps & DRM_VNPU_CAP_FAULT_INJECT)) {
		printf("1..0 # SKIP needs fault injection\n");
		return 0;
	}
	r0 = t_debugfs_state("resets");
	t0 = t_debugfs_state("tlb_timeouts");
	l0 = t_debugfs_state("leaked_pages");
	t_ok(t0 >= 0 && l0 >= 0, "debugfs reports tlb_timeouts (%lld) and leaked_pages (%lld)",
	     t0, l0);

	pid = fork();
	T_REQUIRE(pid >= 0);
	if (pid == 0)
		churn();

	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	n = t_cmd_write(cmd.map, 0, 0);
	for (r = 0; r < ROUNDS; r++) {
		T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &data) == 0);
		t_cmd_write(cmd.map, data.va, r);
		bos[0] = cmd.handle;
		bos[1] = data.handle;
		T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
		T_REQUIRE(t_submit(fd, cmd.va, n, 0, bos, 2, &id) == 0);
		/* The job holds the BO; its last reference goes after the reset. */
		munmap(data.map, data.size);
		gc.handle = data.handle;
		T_REQUIRE(ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc) == 0);
		ret = t_wait_job(fd, id, 120);
		t_ok(ret == 0 && t_job_status(fd, id, &st) == 0 &&
		     st.state == DRM_VNPU_JOB_TIMEOUT,
		     "round %d: the hung job ends TIMEOUT (%d, state %u)", r, ret, st.state);
	}

	kill(pid, SIGKILL);
	T_REQUIRE(waitpid(pid, &status, 0) == pid);
	t_ok(WIFSIGNALED(status), "BO and file churn never failed during the resets");
	t_ok(t_debugfs_state("resets") >= r0 + ROUNDS, "%d resets happened", ROUNDS);
	t_ok(t_debugfs_state("tlb_timeouts") == t0,
	     "no TLB invalidation timed out (%lld)", t_debugfs_state("tlb_timeouts"));
	t_ok(t_debugfs_state("leaked_pages") == l0,
	     "no page leaked (%lld)", t_debugfs_state("leaked_pages"));

	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	n = t_cmd_write(cmd.map, data.va, 0x77);
	bos[1] = data.handle;
	ret = t_run(fd, cmd.va, n, 1 % info.num_queues, bos, 2, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)data.map == 0x77,
	     "the device works afterwards (%d)", ret);
	close(fd);
	return t_done();
}
