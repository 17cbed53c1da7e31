// SPDX-License-Identifier: MIT
/*
 * Recovery, driven by the device's fault injection through debugfs:
 * a hung job is blamed (TIMEOUT) while innocent jobs on every queue are
 * resubmitted and complete; injected DMA errors and lost interrupts; a
 * context that keeps faulting is banned without affecting others.
 */
#include "vnpu_t.h"

static int resets(void)
{
	return (int)t_debugfs_state("resets");
}

int main(void)
{
	struct drm_vnpu_device_info info = {};
	struct drm_vnpu_query q = { .size = sizeof(info), .data = (uintptr_t)&info };
	struct drm_vnpu_job_status st;
	struct t_bo cmd, out;
	uint64_t guilty, innocent[8];
	int fd, fd2, i, r0, ret, ok;
	size_t n;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0);
	if (!(info.caps & DRM_VNPU_CAP_FAULT_INJECT)) {
		printf("1..0 # SKIP device without fault injection\n");
		return 0;
	}
	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &out) == 0);
	for (i = 0; i < 9; i++)
		t_cmd_write((char *)cmd.map + i * 24, out.va + i * 8, 100 + i);

	/* 1. Hang: guilty job times out, innocents complete. */
	r0 = resets();
	T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
	T_REQUIRE(t_submit(fd, cmd.va, 24, 0, NULL, 0, &guilty) == 0);
	usleep(500000);
	fd2 = t_open();
	T_REQUIRE(fd2 >= 0);
	for (i = 0; i < 8; i++)
		T_REQUIRE(t_submit(fd, cmd.va + (i + 1) * 24, 24, i % info.num_queues,
				   NULL, 0, &innocent[i]) == 0);
	t_ok(t_wait_job(fd, guilty, 120) == 0, "hung job ends (after the timeout)");
	ret = t_job_status(fd, guilty, &st);
	t_ok(ret == 0 && st.state == DRM_VNPU_JOB_TIMEOUT, "hung job reports TIMEOUT (%u)",
	     st.state);
	ok = 1;
	for (i = 0; i < 8; i++) {
		ok &= t_wait_job(fd, innocent[i], 120) == 0;
		ok &= t_job_status(fd, innocent[i], &st) == 0 && st.state == DRM_VNPU_JOB_OK;
		ok &= ((uint64_t *)out.map)[i + 1] == (uint64_t)(101 + i);
	}
	t_ok(ok, "8 innocent jobs on every queue complete with their results");
	t_ok(resets() == r0 + 1, "exactly one device reset (%d -> %d)", r0, resets());
	t_ok(t_run(fd, cmd.va, 24, 1, NULL, 0, &st) == DRM_VNPU_JOB_OK,
	     "the device works after the reset");
	close(fd2);

	/* 2. Injected DMA error fails only that job. */
	T_REQUIRE(t_debugfs_write("inject_dma_error", "1") == 0);
	ret = t_run(fd, cmd.va, 24, 2, NULL, 0, &st);
	t_ok(ret == DRM_VNPU_JOB_DMA_ERROR, "injected DMA error reports DMA_ERROR (%d)", ret);
	t_ok(t_run(fd, cmd.va, 24, 2, NULL, 0, &st) == DRM_VNPU_JOB_OK, "next job is fine");

	/* 3. A lost completion interrupt is recovered without a reset. */
	r0 = resets();
	T_REQUIRE(t_debugfs_write("inject_lost_irq", "1") == 0);
	((uint64_t *)out.map)[0] = 0;
	ret = t_run(fd, cmd.va, 24, 3, NULL, 0, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && ((uint64_t *)out.map)[0] == 100,
	     "job whose interrupt was lost still completes OK (%d)", ret);
	t_ok(resets() == r0, "no reset for a lost interrupt");

	/* 4. Three MMU faults ban the context; other files are unaffected. */
	fd2 = t_open();
	T_REQUIRE(fd2 >= 0);
	{
		struct t_bo c2;

		T_REQUIRE(t_bo_new(fd2, 4096, 0, &c2) == 0);
		n = t_cmd_write(c2.map, 0x10, 1);	/* below va_start: unmapped */
		for (i = 0; i < 3; i++) {
			ret = t_run(fd2, c2.va, n, i % info.num_queues, NULL, 0, &st);
			t_ok(ret == DRM_VNPU_JOB_MMU_FAULT && st.fault_va == 0x10,
			     "fault %d: MMU_FAULT at 0x10 (%d)", i + 1, ret);
		}
		t_ok(t_submit(fd2, c2.va, n, 0, NULL, 0, NULL) == -ECANCELED,
		     "context banned after 3 faults: ECANCELED");
	}
	close(fd2);
	t_ok(t_run(fd, cmd.va, 24, 0, NULL, 0, &st) == DRM_VNPU_JOB_OK,
	     "other file still submits");

	/* 5. Closing a file with jobs in flight is safe. */
	fd2 = t_open();
	T_REQUIRE(fd2 >= 0);
	{
		struct t_bo c2, o2;

		T_REQUIRE(t_bo_new(fd2, 4096, 0, &c2) == 0);
		T_REQUIRE(t_bo_new(fd2, 4096, 0, &o2) == 0);
		n = t_cmd_write(c2.map, o2.va, 5);
		ok = 1;
		for (i = 0; i < 200; i++)
			ok &= t_submit(fd2, c2.va, n, i % info.num_queues,
				       (uint32_t[]){ c2.handle, o2.handle }, 2, NULL) == 0;
		munmap(c2.map, 4096);
		munmap(o2.map, 4096);
		close(fd2);
		t_ok(ok, "200 jobs queued, file closed while they run");
	}
	t_ok(t_run(fd, cmd.va, 24, 0, NULL, 0, &st) == DRM_VNPU_JOB_OK,
	     "device still works after the close");
	close(fd);
	return t_done();
}
