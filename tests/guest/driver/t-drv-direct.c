// SPDX-License-Identifier: MIT
/*
 * Jobs SUBMIT writes to the ring itself (kernel/vnpu_ring.c,
 * vnpu_job_run_direct()): back-to-back jobs of one queue, some written
 * by SUBMIT and some by run_job once the direct ones fill their slots,
 * must still run in submission order; WAIT on such a job must not return
 * before its outcome is recorded; and a submitter killed with jobs that
 * drm_sched has not seen yet must leave no job behind and the device
 * usable.
 */
#include <signal.h>
#include <sys/wait.h>

#include "vnpu_t.h"

#define JOBS		200
#define CMD		((uint32_t)sizeof(struct vnpu_cmd_write_value))

/* Job i writes i + 1 to the shared slot and to its own one. */
static int test_order(int fd)
{
	struct t_bo cmd, data;
	struct drm_vnpu_job_status st;
	uint64_t ids[JOBS], *out;
	uint32_t bos[2];
	int i, ret, bad_state = 0, bad_slot = 0;

	T_REQUIRE(!t_bo_new(fd, JOBS * 2 * CMD, 0, &cmd));
	T_REQUIRE(!t_bo_new(fd, 4096, 0, &data));
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	out = data.map;
	memset(out, 0, 4096);
	for (i = 0; i < JOBS; i++) {
		char *c = (char *)cmd.map + (size_t)i * 2 * CMD;

		t_cmd_write(c, data.va, (uint64_t)i + 1);
		t_cmd_write(c + CMD, data.va + 8 + 8 * (uint64_t)i, (uint64_t)i + 1);
	}
	for (i = 0; i < JOBS; i++) {
		ret = t_submit(fd, cmd.va + (uint64_t)i * 2 * CMD, 2 * CMD, 0,
			       bos, 2, &ids[i]);
		if (ret) {
			t_ok(0, "submit %d of %d back to back: %s", i, JOBS, strerror(-ret));
			return -1;
		}
	}
	ret = t_wait_job(fd, ids[JOBS - 1], 60);
	t_ok(!ret, "last of %d back-to-back jobs finished (%s)", JOBS,
	     ret ? strerror(-ret) : "ok");
	for (i = 0; i < JOBS; i++) {
		if (t_job_status(fd, ids[i], &st) || st.state != DRM_VNPU_JOB_OK)
			bad_state++;
		if (out[1 + i] != (uint64_t)i + 1)
			bad_slot++;
	}
	t_ok(!bad_state, "every back-to-back job ended OK (%d did not)", bad_state);
	t_ok(!bad_slot, "every job wrote its own slot (%d missing)", bad_slot);
	t_ok(out[0] == JOBS, "the shared slot holds the last job's value (%llu, want %d): "
	     "submission order kept", (unsigned long long)out[0], JOBS);
	munmap(cmd.map, cmd.size);
	munmap(data.map, data.size);
	return 0;
}

/* WAIT returns only once JOB_STATUS has the outcome. */
static void test_wait_status(int fd)
{
	struct t_bo cmd, data;
	struct drm_vnpu_job_status st;
	uint32_t bos[2];
	uint64_t id;
	int i, pending = 0, failed = 0;

	T_REQUIRE(!t_bo_new(fd, 4096, 0, &cmd));
	T_REQUIRE(!t_bo_new(fd, 4096, 0, &data));
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	t_cmd_write(cmd.map, data.va, 7);
	for (i = 0; i < JOBS; i++) {
		if (t_submit(fd, cmd.va, CMD, 0, bos, 2, &id) || t_wait_job(fd, id, 60) ||
		    t_job_status(fd, id, &st)) {
			failed++;
			continue;
		}
		if (st.state == DRM_VNPU_JOB_PENDING)
			pending++;
		else if (st.state != DRM_VNPU_JOB_OK)
			failed++;
	}
	t_ok(!pending && !failed, "%d jobs: JOB_STATUS right after WAIT never PENDING "
	     "(%d were), all OK (%d were not)", JOBS, pending, failed);
	munmap(cmd.map, cmd.size);
	munmap(data.map, data.size);
}

/* A child floods queue 0 and is killed with its jobs still in flight. */
static void test_killed(void)
{
	struct drm_vnpu_job_status st;
	int round, status, fd, ok = 1, live = -1, t;

	for (round = 0; round < 5 && ok; round++) {
		pid_t pid = fork();

		T_REQUIRE(pid >= 0);
		if (!pid) {
			struct t_bo cmd, data;
			uint32_t bos[2];
			int cfd = t_open(), i;

			if (cfd < 0 || t_bo_new(cfd, 4096, 0, &cmd) ||
			    t_bo_new(cfd, 4096, 0, &data))
				_exit(2);
			bos[0] = cmd.handle;
			bos[1] = data.handle;
			t_cmd_write(cmd.map, data.va, 1);
			for (i = 0; i < 100 + 37 * round; i++)
				t_submit(cfd, cmd.va, CMD, 0, bos, 2, NULL);
			kill(getpid(), SIGKILL);
			_exit(3);
		}
		T_REQUIRE(waitpid(pid, &status, 0) == pid);
		ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
		/* The child's jobs finish or are killed and then released. */
		for (t = 0; t < 300; t++) {
			live = (int)t_debugfs_state("live_jobs");
			if (live <= 0)
				break;
			usleep(100000);
		}
		ok = ok && live == 0;
	}
	t_ok(ok, "5 submitters killed with jobs in flight: no job left (live_jobs %d)",
	     live);

	fd = t_open();
	T_REQUIRE(fd >= 0);
	{
		struct t_bo cmd, data;
		uint32_t bos[2];

		T_REQUIRE(!t_bo_new(fd, 4096, 0, &cmd));
		T_REQUIRE(!t_bo_new(fd, 4096, 0, &data));
		bos[0] = cmd.handle;
		bos[1] = data.handle;
		t_cmd_write(cmd.map, data.va, 42);
		t_ok(t_run(fd, cmd.va, CMD, 0, bos, 2, &st) == DRM_VNPU_JOB_OK &&
		     *(uint64_t *)data.map == 42,
		     "queue 0 runs jobs after the killed submitters");
	}
	close(fd);
}

int main(void)
{
	int fd = t_open();

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_REQUIRE(fd >= 0);
	test_order(fd);
	test_wait_status(fd);
	close(fd);
	test_killed();
	return t_done();
}
