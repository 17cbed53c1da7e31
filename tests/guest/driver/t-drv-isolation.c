// SPDX-License-Identifier: MIT
/*
 * Two processes cannot reach each other's memory through the device.
 * Process A fills a BO with a secret; process B (separate fd, separate
 * context) runs a job copying from A's VA and must get an MMU fault, not
 * A's data.  A's own handle numbers mean nothing in B either.
 */
#include <sys/wait.h>
#include "vnpu_t.h"

#define SECRET 0x5ec2e75ec2e75ec2ull

int main(void)
{
	int pipe_ab[2], pipe_ba[2];
	struct t_bo pad, secret;
	pid_t pid;
	int fd, status;

	T_REQUIRE(pipe(pipe_ab) == 0 && pipe(pipe_ba) == 0);
	fflush(stdout);
	pid = fork();
	T_REQUIRE(pid >= 0);

	if (pid == 0) {
		/* Process B: report results to A as a small struct. */
		struct { uint64_t va; uint32_t handle; } msg;
		struct drm_vnpu_job_status st;
		struct drm_vnpu_bo_info info = {};
		struct t_bo cmd, dst;
		int res[4] = { -1, -1, -1, -1 };
		int fdb = t_open();
		size_t n;
		int ret;

		if (fdb < 0 || read(pipe_ab[0], &msg, sizeof(msg)) != sizeof(msg))
			_exit(2);
		if (t_bo_new(fdb, 4096, 0, &cmd) || t_bo_new(fdb, 4096, 0, &dst))
			_exit(3);
		/* Copy 8 bytes from A's VA into our own BO. */
		n = t_cmd_copy(cmd.map, msg.va, dst.va, 8);
		res[0] = t_run(fdb, cmd.va, n, 0, (uint32_t[]){ cmd.handle, dst.handle },
			       2, &st);
		res[1] = st.fault_va == msg.va && !(st.fault_flags & DRM_VNPU_FAULT_WRITE);
		res[2] = *(uint64_t *)dst.map != SECRET;
		/* A's handle is not valid in B's file (or names B's own BO). */
		info.handle = msg.handle;
		ret = t_ioctl(fdb, DRM_IOCTL_VNPU_BO_INFO, &info);
		res[3] = ret == -ENOENT ||
			 (!ret && (info.va == cmd.va || info.va == dst.va));
		if (write(pipe_ba[1], res, sizeof(res)) != sizeof(res))
			_exit(4);
		_exit(0);
	}

	fd = t_open();
	T_REQUIRE(fd >= 0);
	/*
	 * Every file's VA space starts at the same address, so a padding BO
	 * puts the secret at a VA that nothing maps in B's smaller space.
	 */
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &pad) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &secret) == 0);
	*(uint64_t *)secret.map = SECRET;
	{
		struct { uint64_t va; uint32_t handle; } msg = { secret.va, secret.handle };
		int res[4];

		T_REQUIRE(write(pipe_ab[1], &msg, sizeof(msg)) == sizeof(msg));
		T_REQUIRE(read(pipe_ba[0], res, sizeof(res)) == sizeof(res));
		t_ok(res[0] == DRM_VNPU_JOB_MMU_FAULT,
		     "B's job reading A's VA ends in MMU_FAULT (state %d)", res[0]);
		t_ok(res[1] == 1, "fault reported at A's VA, as a read");
		t_ok(res[2] == 1, "B's buffer never received A's secret");
		t_ok(res[3] == 1, "A's handle number is unknown in B or names B's own BO");
	}
	T_REQUIRE(waitpid(pid, &status, 0) == pid);
	t_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process B exited cleanly");

	/* Two files of the same process are isolated the same way. */
	{
		struct drm_vnpu_job_status st;
		struct t_bo cmd, dst;
		int fd2 = t_open();
		size_t n;
		int ret;

		T_REQUIRE(fd2 >= 0);
		T_REQUIRE(t_bo_new(fd2, 4096, 0, &cmd) == 0);
		T_REQUIRE(t_bo_new(fd2, 4096, 0, &dst) == 0);
		n = t_cmd_write(cmd.map, secret.va, 0xbad);
		ret = t_run(fd2, cmd.va, n, 1, (uint32_t[]){ cmd.handle }, 1, &st);
		t_ok(ret == DRM_VNPU_JOB_MMU_FAULT && *(uint64_t *)secret.map == SECRET,
		     "second fd writing the first fd's VA faults; secret intact (%d)", ret);
		close(fd2);
	}
	/* A's own context still works after B's faults. */
	{
		struct drm_vnpu_job_status st;
		struct t_bo cmd;
		size_t n;

		T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
		n = t_cmd_copy(cmd.map, secret.va, secret.va + 8, 8);
		t_ok(t_run(fd, cmd.va, n, 2, (uint32_t[]){ cmd.handle, secret.handle }, 2,
			   &st) == DRM_VNPU_JOB_OK &&
		     ((uint64_t *)secret.map)[1] == SECRET,
		     "the owner's job still reads its BO");
	}
	close(fd);
	return t_done();
}
