// SPDX-License-Identifier: MIT
/*
 * Containment: one user cannot lock the others out.  A process holding
 * 300 open files (more than the device has context ids) takes no context
 * id and no page tables, so another file still creates BOs and runs jobs;
 * an open file has no job records until it submits; and one file cannot
 * queue more than DRM_VNPU_MAX_UNFINISHED_JOBS jobs: SUBMIT beyond that
 * fails with -EAGAIN, and works again once jobs finished.  A job whose
 * explicit dependency failed does not run, even on the dependency's queue.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "vnpu_t.h"

#define HOG_FDS		300

static void test_fresh_file(void)
{
	struct drm_vnpu_job_status st;
	int fd = t_open();

	T_REQUIRE(fd >= 0);
	t_ok(t_job_status(fd, 1, &st) == -ENOENT,
	     "JOB_STATUS on a file that never submitted: -ENOENT");
	t_ok(t_wait_job(fd, 1, 1) == -ENOENT,
	     "WAIT on a file that never submitted: -ENOENT");
	close(fd);
}

/* Another process holds HOG_FDS idle files; this one still works. */
static void test_many_files(void)
{
	struct drm_vnpu_job_status st;
	int ready[2], quit[2], fd, n = 0, ret;
	struct t_bo cmd, data;
	uint32_t bos[2];
	size_t len;
	pid_t pid;
	char c;

	T_REQUIRE(pipe(ready) == 0 && pipe(quit) == 0);
	pid = fork();
	T_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { HOG_FDS + 64, HOG_FDS + 64 };
		int i;

		close(ready[0]);
		close(quit[1]);
		setrlimit(RLIMIT_NOFILE, &rl);
		for (i = 0; i < HOG_FDS; i++) {
			if (t_open() < 0)
				break;
			n++;
		}
		if (write(ready[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		/* Hold them until the parent is done. */
		if (read(quit[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(quit[0]);
	T_REQUIRE(read(ready[0], &n, sizeof(n)) == sizeof(n));
	t_ok(n == HOG_FDS, "one process opens %d files (%d)", HOG_FDS, n);

	fd = t_open();
	t_ok(fd >= 0, "another file opens while they are held (errno %d)",
	     fd < 0 ? errno : 0);
	if (fd >= 0) {
		ret = t_bo_new(fd, 4096, 0, &cmd);
		if (!ret)
			ret = t_bo_new(fd, 4096, 0, &data);
		t_ok(ret == 0, "it creates BOs (%d)", ret);
		if (!ret) {
			bos[0] = cmd.handle;
			bos[1] = data.handle;
			len = t_cmd_write(cmd.map, data.va, 0xc0ffeeull);
			ret = t_run(fd, cmd.va, len, 0, bos, 2, &st);
			t_ok(ret == DRM_VNPU_JOB_OK &&
			     *(uint64_t *)data.map == 0xc0ffeeull,
			     "and runs a job (%d)", ret);
		} else {
			t_ok(0, "and runs a job (no BOs)");
		}
		close(fd);
	} else {
		t_ok(0, "it creates BOs (no file)");
		t_ok(0, "and runs a job (no file)");
	}
	c = 'q';
	T_REQUIRE(write(quit[1], &c, 1) == 1);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(quit[1]);
}

static int job_state(int fd, uint64_t id)
{
	struct drm_vnpu_job_status st;

	return t_job_status(fd, id, &st) ? -1 : (int)st.state;
}

/*
 * Jobs that wait for a blocked one on another queue pile up in their
 * entity; the file's limit stops them.  The blocker hangs (fault
 * injection) until the timeout resets the device, so the jobs behind it
 * then end ABORTED; without fault injection it is a long job.
 */
static void test_queue_limit(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	struct drm_vnpu_sync in = {};
	struct drm_vnpu_submit s;
	struct t_bo cmd, data, src, dst;
	uint64_t busy_id, last = 0;
	unsigned int busy, queued = 1;
	uint32_t syncobj, bos[2];
	int fd, ret = 0, state, hang;
	long long timeout_ms, t0;
	size_t n, w;

	/* Non-blocking first, to count; then blocking. */
	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(fcntl(fd, F_SETFL, O_NONBLOCK) == 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &src) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &dst) == 0);
	T_REQUIRE(drmSyncobjCreate(fd, 0, &syncobj) == 0);

	hang = !!(info.caps & DRM_VNPU_CAP_FAULT_INJECT);
	timeout_ms = t_debugfs_state("timeout_ms");
	if (hang || timeout_ms <= 0) {
		n = t_cmd_write((char *)cmd.map + 4096, data.va + 8, 2);
	} else {
		/* Most of a timeout of device time. */
		busy = t_busy_count(fd, &cmd, src.va, dst.va, 1 << 20, 32,
				    timeout_ms * 800000ll);
		n = t_cmd_busy((char *)cmd.map + 4096, cmd.size - 4096, src.va,
			       dst.va, 1 << 20, busy);
	}
	w = t_cmd_write(cmd.map, data.va, 1);
	bos[0] = cmd.handle;
	bos[1] = data.handle;

	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va + 4096, .cmd_size = n,
				      .queue = 0,
				      .priority = DRM_VNPU_PRIORITY_NORMAL,
				      .out_syncobj = syncobj };
	if (hang)
		T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0);
	busy_id = s.job_id;

	in.handle = syncobj;
	t0 = t_now_ns();
	while (queued < DRM_VNPU_MAX_UNFINISHED_JOBS + 16) {
		s = (struct drm_vnpu_submit){
			.cmd_va = cmd.va, .cmd_size = w,
			.queue = info.num_queues > 1 ? 1 : 0,
			.priority = DRM_VNPU_PRIORITY_NORMAL,
			.in_syncs = (uintptr_t)&in, .in_sync_count = 1 };
		/* Not drmIoctl(): it retries -EAGAIN. */
		ret = ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) ? -errno : 0;
		if (ret)
			break;
		last = s.job_id;
		queued++;
	}
	state = job_state(fd, busy_id);
	printf("# %u SUBMITs in %lld ms\n", queued, (t_now_ns() - t0) / 1000000);
	t_ok(ret == -EAGAIN && queued == DRM_VNPU_MAX_UNFINISHED_JOBS,
	     "O_NONBLOCK: SUBMIT beyond %d unfinished jobs fails with -EAGAIN (%d after %u)",
	     DRM_VNPU_MAX_UNFINISHED_JOBS, ret, queued);
	t_ok(state == DRM_VNPU_JOB_PENDING,
	     "the blocking job was still running then (state %d)", state);

	/* Blocking: SUBMIT waits until a job finished (the reset ends them). */
	T_REQUIRE(fcntl(fd, F_SETFL, 0) == 0);
	if (ret == -EAGAIN) {
		t0 = t_now_ns();
		ret = ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) ? -errno : 0;
		state = job_state(fd, busy_id);
		t_ok(ret == 0 && state != DRM_VNPU_JOB_PENDING,
		     "blocking SUBMIT waits until a job finished (%d, %lld ms, state %d)",
		     ret, (t_now_ns() - t0) / 1000000, state);
		if (!ret)
			last = s.job_id;
	} else {
		t_ok(0, "blocking SUBMIT waits until a job finished (no limit hit)");
	}

	t_ok(last && t_wait_job(fd, last, 300) == 0 &&
	     job_state(fd, last - 1) == (hang ? DRM_VNPU_JOB_ABORTED : DRM_VNPU_JOB_OK),
	     "the queued jobs all end (%s)", hang ? "ABORTED behind the hang" : "OK");
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = w,
				      .queue = 0,
				      .priority = DRM_VNPU_PRIORITY_NORMAL,
				      .bo_handles = (uintptr_t)bos, .bo_count = 2 };
	ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);
	t_ok(ret == 0 && t_wait_job(fd, s.job_id, 60) == 0 &&
	     job_state(fd, s.job_id) == DRM_VNPU_JOB_OK,
	     "SUBMIT works again once they finished (%d)", ret);
	drmSyncobjDestroy(fd, syncobj);
	close(fd);
}

/*
 * A job whose explicit dependency failed ends ABORTED and does not run,
 * also when both are on the same queue (where drm_sched would let the
 * dependent onto the ring as soon as the dependency started) and through
 * a timeline point (a chain node, whose own status is not the job's).
 * The dependency runs a while, then faults; the dependent would write a
 * marker.
 */
static void test_failed_dependency(bool timeline)
{
	struct drm_vnpu_sync in = { .point = timeline ? 5 : 0 };
	struct drm_vnpu_submit a, b;
	struct t_bo cmd, data, src, dst;
	volatile uint64_t *marker;
	unsigned int busy;
	uint32_t syncobj, bos[4];
	size_t n, w;
	int sa, sb;

	int fd = t_open();

	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &src) == 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &dst) == 0);
	T_REQUIRE(drmSyncobjCreate(fd, 0, &syncobj) == 0);
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	bos[2] = src.handle;
	bos[3] = dst.handle;
	marker = data.map;
	*marker = 0;

	/* ~50 ms of copies, then a write to a VA nothing maps. */
	busy = t_busy_count(fd, &cmd, src.va, dst.va, 1 << 20, 8, 50000000);
	n = t_cmd_busy((char *)cmd.map + 4096, cmd.size - 8192, src.va, dst.va,
		       1 << 20, busy);
	n += t_cmd_write((char *)cmd.map + 4096 + n, 0x7f0000000000ull, 1);
	w = t_cmd_write(cmd.map, data.va, 0xab);

	a = (struct drm_vnpu_submit){ .cmd_va = cmd.va + 4096, .cmd_size = n,
				      .queue = 0, .priority = DRM_VNPU_PRIORITY_NORMAL,
				      .bo_handles = (uintptr_t)bos, .bo_count = 4,
				      .out_syncobj = syncobj,
				      .out_point = timeline ? 5 : 0 };
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &a) == 0);
	in.handle = syncobj;
	b = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = w,
				      .queue = 0, .priority = DRM_VNPU_PRIORITY_NORMAL,
				      .in_syncs = (uintptr_t)&in, .in_sync_count = 1 };
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &b) == 0);
	T_REQUIRE(t_wait_job(fd, b.job_id, 60) == 0);
	sa = job_state(fd, a.job_id);
	sb = job_state(fd, b.job_id);
	t_ok(sa == DRM_VNPU_JOB_MMU_FAULT && sb == DRM_VNPU_JOB_ABORTED && *marker == 0,
	     "same queue, %s syncobj: a job behind a faulting dependency ends ABORTED without running (states %d, %d, marker %#llx)",
	     timeline ? "timeline" : "binary", sa, sb, (unsigned long long)*marker);
	drmSyncobjDestroy(fd, syncobj);
	close(fd);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_fresh_file();
	test_many_files();
	test_queue_limit();
	test_failed_dependency(false);
	test_failed_dependency(true);
	return t_done();
}
