// SPDX-License-Identifier: MIT
/*
 * A reset never runs an innocent job twice.  One queue hangs (fault
 * injection) while another queue's job is on the other engine: that job
 * first COPYs a source, then FILLs the source, then keeps the engine busy
 * past the timeout.  Replayed from the start after the reset it would copy
 * the fill pattern.  It must either complete with the right data (ran
 * once) or report ABORTED; jobs that had not started when the reset hit
 * run once afterwards, and the hung job reports TIMEOUT.
 */
#include "vnpu_t.h"

#define PAT		0x5a5a5a5au
#define BUSY_BYTES	(4ull << 20)

static int job_state(int fd, uint64_t id)
{
	struct drm_vnpu_job_status st;

	return t_job_status(fd, id, &st) ? -1 : (int)st.state;
}

/* COPY 64 bytes from @src to @src + 64, then FILL @src; returns bytes. */
static size_t once_cmds(void *buf, uint64_t src)
{
	size_t n = t_cmd_copy(buf, src, src + 64, 64);

	return n + t_cmd_fill((char *)buf + n, src, 64, PAT);
}

static void once_init(void *p, uint32_t seed)
{
	uint32_t *w = p;
	int i;

	for (i = 0; i < 16; i++) {
		w[i] = seed + i;
		w[16 + i] = 0;
	}
}

/* 1: ran once; 0: not at all; -1: the replay pattern (ran twice). */
static int once_result(const void *p, uint32_t seed)
{
	const uint32_t *w = p;
	int i, good = 1, none = 1, twice = 1;

	for (i = 0; i < 16; i++) {
		good &= w[16 + i] == seed + i && w[i] == PAT;
		none &= w[16 + i] == 0 && w[i] == seed + i;
		twice &= w[16 + i] == PAT;
	}
	return good ? 1 : twice ? -1 : none ? 0 : -2;
}

int main(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	struct t_bo cmd, data, bsrc, bdst;
	uint64_t guilty, victim, behind_guilty, behind_victim;
	long long timeout_ms, r0;
	char *d;
	unsigned int busy;
	int fd, st, res, ret;
	size_t n;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	if (!(info.caps & DRM_VNPU_CAP_FAULT_INJECT) || info.num_engines < 2 ||
	    info.num_queues < 2) {
		printf("1..0 # SKIP needs fault injection, 2 engines, 2 queues\n");
		return 0;
	}
	timeout_ms = t_debugfs_state("timeout_ms");
	T_REQUIRE(timeout_ms > 0);
	T_REQUIRE(t_bo_new(fd, 1 << 20, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	T_REQUIRE(t_bo_new(fd, BUSY_BYTES, 0, &bsrc) == 0);
	T_REQUIRE(t_bo_new(fd, BUSY_BYTES, 0, &bdst) == 0);
	d = data.map;

	/*
	 * The victim starts 0.6 timeouts after the hung job and runs about
	 * one timeout: it is on its engine when the hung job's timeout fires,
	 * and its own timeout, counted from its start, comes later.
	 */
	busy = t_busy_count(fd, &cmd, bsrc.va, bdst.va, BUSY_BYTES, 64,
			    timeout_ms * 1000000ll);

	/* Command buffers: 0 the hung job, 256 the two behind, 4096 the victim. */
	n = once_cmds((char *)cmd.map + 4096, data.va);
	n += t_cmd_busy((char *)cmd.map + 4096 + n, cmd.size - 4096 - n,
			bsrc.va, bdst.va, BUSY_BYTES, busy);
	once_init(d, 1000);
	once_init(d + 128, 2000);
	once_init(d + 256, 3000);
	once_cmds((char *)cmd.map + 256, data.va + 128);
	once_cmds((char *)cmd.map + 256 + 64, data.va + 256);
	t_cmd_write(cmd.map, data.va + 512, 7);

	r0 = t_debugfs_state("resets");
	T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
	T_REQUIRE(t_submit(fd, cmd.va, 24, 0, NULL, 0, &guilty) == 0);
	T_REQUIRE(t_submit(fd, cmd.va + 256, 64, 0, NULL, 0, &behind_guilty) == 0);
	/* The hang holds one engine; the victim takes the other. */
	usleep(timeout_ms * 600);
	T_REQUIRE(t_submit(fd, cmd.va + 4096, n, 1, NULL, 0, &victim) == 0);
	T_REQUIRE(t_submit(fd, cmd.va + 256 + 64, 64, 1, NULL, 0, &behind_victim) == 0);

	ret = t_wait_job(fd, guilty, 120);
	st = job_state(fd, guilty);
	t_ok(ret == 0 && st == DRM_VNPU_JOB_TIMEOUT, "hung job reports TIMEOUT (%d)", st);
	t_ok(t_wait_job(fd, victim, 180) == 0, "the job running at the reset ends");
	st = job_state(fd, victim);
	res = once_result(d, 1000);
	t_ok(res != -1, "the job running at the reset was not replayed from the start");
	t_ok((st == DRM_VNPU_JOB_OK && res == 1) || st == DRM_VNPU_JOB_ABORTED,
	     "it either ran once and reports OK or reports ABORTED (state %d, data %d)",
	     st, res);
	t_ok(t_wait_job(fd, behind_guilty, 120) == 0 &&
	     job_state(fd, behind_guilty) == DRM_VNPU_JOB_OK && once_result(d + 128, 2000) == 1,
	     "the job queued behind the hung one runs once after the reset");
	t_ok(t_wait_job(fd, behind_victim, 120) == 0 &&
	     job_state(fd, behind_victim) == DRM_VNPU_JOB_OK && once_result(d + 256, 3000) == 1,
	     "the job queued behind the cut-off one runs once after the reset");
	t_ok(t_debugfs_state("resets") == r0 + 1, "exactly one reset (%lld -> %lld)", r0,
	     t_debugfs_state("resets"));
	{
		struct drm_vnpu_job_status js;

		t_ok(t_run(fd, cmd.va, 24, 1, NULL, 0, &js) == DRM_VNPU_JOB_OK,
		     "the device works after the reset");
	}
	close(fd);
	return t_done();
}
