// SPDX-License-Identifier: MIT
/*
 * Fence ordering over 1000 jobs spread over every queue.  Job k copies
 * slot k-1 to slot k, so any job that runs before its predecessor copies
 * a zero and breaks the chain.  Once ordered by a timeline syncobj
 * (explicit sync), once by listing the shared BO (implicit sync).
 */
#include "vnpu_t.h"

#define JOBS	1000
#define MAGIC	0x0123456789abcdefull

static void chain(int fd, uint32_t queues, int implicit)
{
	struct t_bo cmd, slots;
	uint32_t tl = 0, bos[2];
	uint64_t last = 0, pt;
	int k, bad = -1, ret = 0;
	uint64_t *v;

	T_REQUIRE(t_bo_new(fd, JOBS * 32, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, JOBS * 8, 0, &slots) == 0);
	bos[0] = cmd.handle;
	bos[1] = slots.handle;
	memset(slots.map, 0, JOBS * 8);
	if (!implicit)
		T_REQUIRE(drmSyncobjCreate(fd, 0, &tl) == 0);

	for (k = 0; k < JOBS && !ret; k++) {
		char *c = (char *)cmd.map + k * 32;
		struct drm_vnpu_sync in = { .handle = tl, .point = k };
		struct drm_vnpu_submit s = {
			.cmd_va = cmd.va + k * 32,
			.queue = k % queues,
			.priority = k % 3,
		};

		if (k == 0)
			s.cmd_size = t_cmd_write(c, slots.va, MAGIC);
		else
			s.cmd_size = t_cmd_copy(c, slots.va + (k - 1) * 8,
						slots.va + k * 8, 8);
		if (implicit) {
			s.bo_handles = (uintptr_t)bos;
			s.bo_count = 2;
		} else {
			if (k) {
				s.in_syncs = (uintptr_t)&in;
				s.in_sync_count = 1;
			}
			s.out_syncobj = tl;
			s.out_point = k + 1;
		}
		ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);
		last = s.job_id;
	}
	t_ok(!ret, "%s: %d jobs submitted over %u queues", implicit ? "implicit" : "timeline",
	     k, queues);
	t_ok(t_wait_job(fd, last, 300) == 0, "%s: last job completes", implicit ? "implicit" : "timeline");
	if (!implicit) {
		pt = JOBS;
		t_ok(drmSyncobjTimelineWait(fd, &tl, &pt, 1, t_now_ns() + 60000000000ll, 0,
					    NULL) == 0, "timeline reaches point %d", JOBS);
	}
	v = slots.map;
	for (k = 0; k < JOBS; k++) {
		if (v[k] != MAGIC) {
			bad = k;
			break;
		}
	}
	t_ok(bad < 0, "%s: every slot carries the value in order (first bad %d)",
	     implicit ? "implicit" : "timeline", bad);
}

int main(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	int fd = t_open();
	int64_t t0;

	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	t0 = t_now_ns();
	chain(fd, info.num_queues, 0);
	chain(fd, info.num_queues, 1);
	printf("# %d chained jobs in %.2f s\n", 2 * JOBS, (t_now_ns() - t0) / 1e9);

	/* Independent jobs on every queue at once: each writes its own slot. */
	{
		struct t_bo cmd, out;
		uint64_t ids[JOBS];
		int k, ok = 1;

		T_REQUIRE(t_bo_new(fd, JOBS * 24, 0, &cmd) == 0);
		T_REQUIRE(t_bo_new(fd, JOBS * 8, 0, &out) == 0);
		for (k = 0; k < JOBS; k++) {
			size_t n = t_cmd_write((char *)cmd.map + k * 24, out.va + k * 8,
					       (uint64_t)k * 7 + 1);

			ok &= t_submit(fd, cmd.va + k * 24, n, k % info.num_queues, NULL, 0,
				       &ids[k]) == 0;
		}
		for (k = 0; k < JOBS; k++)
			ok &= t_wait_job(fd, ids[k], 120) == 0;
		for (k = 0; k < JOBS; k++)
			ok &= ((uint64_t *)out.map)[k] == (uint64_t)k * 7 + 1;
		t_ok(ok, "%d independent jobs on %u queues all land", JOBS, info.num_queues);
	}
	close(fd);
	return t_done();
}
