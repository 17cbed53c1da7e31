// SPDX-License-Identifier: MIT
/*
 * Per-job outcomes on one queue across ring wraps: malformed-command,
 * MMU-faulting and good jobs interleaved (so the previous user of every
 * completion slot had another outcome), some interrupts lost so records
 * pile up.  Each job must report its own state and fault_va.
 */
#include "vnpu_t.h"

#define N	600

/* Submit with one optional in-syncobj and out-syncobj (binary). */
static int submit_sync(int fd, uint64_t va, uint32_t size, uint32_t queue,
		       uint32_t in, uint32_t out, uint64_t *id)
{
	struct drm_vnpu_sync s = { .handle = in };
	struct drm_vnpu_submit a = {
		.cmd_va = va,
		.cmd_size = size,
		.queue = queue,
		.priority = DRM_VNPU_PRIORITY_NORMAL,
		.in_sync_count = in ? 1 : 0,
		.in_syncs = (uintptr_t)&s,
		.out_syncobj = out,
	};
	int ret = t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &a);

	*id = a.job_id;
	return ret;
}

static int job_state(int fd, uint64_t id)
{
	struct drm_vnpu_job_status st;

	return t_job_status(fd, id, &st) ? -1 : (int)st.state;
}

/* What job @k does: 0 OK, 1 CMD_ERROR, 2 MMU fault (twice only: no ban). */
static int kind(unsigned int k)
{
	if (k == 2 || k == 403)
		return 2;
	return k % 3 == 0 ? 1 : 0;
}

int main(void)
{
	struct drm_vnpu_job_status st;
	struct t_bo cmd, out;
	uint64_t ids[N], want_va;
	unsigned int k, i, bad = 0;
	uint32_t want;
	int fd;
	size_t n;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_bo_new(fd, N * 64, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, N * 8, 0, &out) == 0);
	/* Lost interrupts need fault injection; without it records still wrap. */
	t_debugfs_write("inject_lost_irq", "100");

	for (k = 0; k < N; k++) {
		char *c = (char *)cmd.map + k * 64;

		n = 0;
		switch (kind(k)) {
		case 0:
			n = t_cmd_write(c, out.va + k * 8, k + 1);
			break;
		case 1:
			/* k % 5 NOPs, then an undefined opcode at offset 8 * (k % 5). */
			for (i = 0; i < k % 5; i++) {
				struct vnpu_cmd_hdr nop = { .opcode = VNPU_CMD_NOP, .size = 8 };

				memcpy(c + n, &nop, 8);
				n += 8;
			}
			{
				struct vnpu_cmd_hdr badop = { .opcode = 0x3f, .size = 8 };

				memcpy(c + n, &badop, 8);
				n += 8;
			}
			break;
		case 2:
			/* Below the first VA handed out: never mapped. */
			n = t_cmd_write(c, 0x1000 + k * 8, k);
			break;
		}
		T_REQUIRE(t_submit(fd, cmd.va + k * 64, n, 1, (uint32_t[]){ cmd.handle,
				   out.handle }, 2, &ids[k]) == 0);
	}
	T_REQUIRE(t_wait_job(fd, ids[N - 1], 300) == 0);

	for (k = 0; k < N; k++) {
		int ok;

		if (t_wait_job(fd, ids[k], 60) || t_job_status(fd, ids[k], &st)) {
			bad++;
			continue;
		}
		switch (kind(k)) {
		case 0:
			ok = st.state == DRM_VNPU_JOB_OK && st.fault_va == 0 &&
			     ((uint64_t *)out.map)[k] == k + 1;
			break;
		case 1:
			want = DRM_VNPU_JOB_CMD_ERROR;
			want_va = 8 * (k % 5);
			ok = st.state == want && st.fault_va == want_va;
			break;
		default:
			ok = st.state == DRM_VNPU_JOB_MMU_FAULT &&
			     st.fault_va == 0x1000 + k * 8 &&
			     (st.fault_flags & DRM_VNPU_FAULT_WRITE);
			break;
		}
		if (!ok) {
			if (bad < 5)
				printf("# job %u: state %u fault_va %#llx\n", k, st.state,
				       (unsigned long long)st.fault_va);
			bad++;
		}
	}
	t_ok(bad == 0, "%u interleaved jobs each report their own state and fault_va (%u wrong)",
	     N, bad);
	/* Waited for: the dependency check below reuses its command buffer. */
	t_ok(t_run(fd, cmd.va + 64, 24, 1, NULL, 0, &st) == DRM_VNPU_JOB_OK,
	     "two MMU faults do not ban the file");
	t_debugfs_write("inject_lost_irq", "0");

	/*
	 * A job whose dependency (on another queue) failed ends ABORTED
	 * without running: drm_sched 6.12 does not propagate the error.
	 */
	{
		struct vnpu_cmd_hdr badop = { .opcode = 0x3f, .size = 8 };
		uint64_t a, b;
		uint32_t syn;

		T_REQUIRE(drmSyncobjCreate(fd, 0, &syn) == 0);
		memcpy(cmd.map, &badop, 8);
		((uint64_t *)out.map)[0] = 0;
		t_cmd_write((char *)cmd.map + 64, out.va, 77);
		T_REQUIRE(submit_sync(fd, cmd.va, 8, 0, 0, syn, &a) == 0);
		T_REQUIRE(submit_sync(fd, cmd.va + 64, 24, 2, syn, 0, &b) == 0);
		int wr = t_wait_job(fd, b, 60), sa = job_state(fd, a), sb = job_state(fd, b);

		t_ok(wr == 0 && sa == DRM_VNPU_JOB_CMD_ERROR && sb == DRM_VNPU_JOB_ABORTED &&
		     ((uint64_t *)out.map)[0] == 0,
		     "a job whose dependency failed is ABORTED and does not run (wait %d, %d, %d, %llu)",
		     wr, sa, sb, (unsigned long long)((uint64_t *)out.map)[0]);
		drmSyncobjDestroy(fd, syn);
	}
	close(fd);

	/*
	 * Jobs a file queued before it was banned end ABORTED: one waits for
	 * a slow job on another queue while three MMU faults ban the file.
	 */
	{
		struct t_bo c3, o3, src, dst;
		uint64_t slow, x;
		uint32_t syn;
		int fd3 = t_open();

		T_REQUIRE(fd3 >= 0);
		T_REQUIRE(t_bo_new(fd3, 1 << 20, 0, &c3) == 0);
		T_REQUIRE(t_bo_new(fd3, 4096, 0, &o3) == 0);
		T_REQUIRE(t_bo_new(fd3, 4 << 20, 0, &src) == 0);
		T_REQUIRE(t_bo_new(fd3, 4 << 20, 0, &dst) == 0);
		T_REQUIRE(drmSyncobjCreate(fd3, 0, &syn) == 0);
		n = t_cmd_busy((char *)c3.map + 4096, c3.size - 4096, src.va, dst.va,
			       4 << 20, 400);
		t_cmd_write(c3.map, 0x10, 1);
		t_cmd_write((char *)c3.map + 64, o3.va, 99);
		T_REQUIRE(submit_sync(fd3, c3.va + 4096, n, 3, 0, syn, &slow) == 0);
		/*
		 * Queued before the faults: submitted after them, the third
		 * fault can ban the file first and SUBMIT rightly fails.
		 */
		T_REQUIRE(submit_sync(fd3, c3.va + 64, 24, 1, syn, 0, &x) == 0);
		for (i = 0; i < 3; i++)
			T_REQUIRE(t_submit(fd3, c3.va, 24, 0, NULL, 0, NULL) == 0);
		int wr = t_wait_job(fd3, x, 120), sx = job_state(fd3, x);

		t_ok(wr == 0 && sx == DRM_VNPU_JOB_ABORTED && ((uint64_t *)o3.map)[0] == 0,
		     "a job queued before its file was banned is ABORTED (wait %d, state %d)",
		     wr, sx);
		close(fd3);
	}
	return t_done();
}
