// SPDX-License-Identifier: MIT
/*
 * GEM_CLOSE racing SUBMIT: one thread submits jobs writing into fresh BOs
 * while another closes those BOs' handles as soon as they exist.  Each
 * SUBMIT either fails cleanly with -ENOENT (the handle was gone before the
 * lookup) or is accepted, and then the job ran with the BO held: it ends OK
 * and its write is in the BO's pages (still mapped by this process).  No
 * job may fault or write elsewhere, and nothing may oops (KASAN on the
 * debug kernel).
 */
#include <pthread.h>
#include <stdatomic.h>
#include "vnpu_t.h"

#define ROUNDS	400

static int fd;
static struct t_bo cmd;
static _Atomic uint32_t victim;		/* handle to close, 0 if none */
static _Atomic int stop;

static void *closer(void *unused)
{
	struct drm_gem_close c;
	uint32_t h;

	(void)unused;
	while (!atomic_load(&stop)) {
		h = atomic_exchange(&victim, 0);
		if (!h)
			continue;
		c = (struct drm_gem_close){ .handle = h };
		ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
	}
	return NULL;
}

int main(void)
{
	struct drm_vnpu_job_status st;
	int accepted = 0, refused = 0, bad_errno = 0, bad_job = 0, lost_write = 0;
	uint64_t ids[ROUNDS];
	struct t_bo bos[ROUNDS];
	int ok[ROUNDS];
	pthread_t th;
	int i, ret;

	fd = t_open();
	T_REQUIRE(fd >= 0);
	T_REQUIRE(t_bo_new(fd, 64 * 1024, 0, &cmd) == 0);
	T_REQUIRE(pthread_create(&th, NULL, closer, NULL) == 0);

	for (i = 0; i < ROUNDS; i++) {
		size_t off = (size_t)(i % 1024) * 64;
		size_t n;

		ok[i] = 0;
		T_REQUIRE(t_bo_new(fd, 4096, 0, &bos[i]) == 0);
		n = t_cmd_write((char *)cmd.map + off, bos[i].va, 0xc105e000ull + i);
		atomic_store(&victim, bos[i].handle);
		/* Vary the window so both orders happen. */
		if (i & 1)
			usleep(i % 7 * 10);
		ret = t_submit(fd, cmd.va + off, n, i % 4,
			       (uint32_t[]){ cmd.handle, bos[i].handle }, 2, &ids[i]);
		if (!ret) {
			accepted++;
			ok[i] = 1;
		} else if (ret == -ENOENT) {
			refused++;
		} else {
			bad_errno++;
			printf("# round %d: SUBMIT returned %d\n", i, ret);
		}
		/* The command buffer slot is reused after 1024 rounds only. */
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);

	for (i = 0; i < ROUNDS; i++) {
		if (!ok[i])
			continue;
		if (t_wait_job(fd, ids[i], 120) || t_job_status(fd, ids[i], &st) ||
		    st.state != DRM_VNPU_JOB_OK) {
			bad_job++;
			printf("# round %d: job state %u\n", i, st.state);
		} else if (*(volatile uint64_t *)bos[i].map != 0xc105e000ull + i) {
			lost_write++;
		}
	}
	for (i = 0; i < ROUNDS; i++)
		munmap(bos[i].map, bos[i].size);

	printf("# %d accepted, %d refused with ENOENT\n", accepted, refused);
	t_ok(bad_errno == 0, "every SUBMIT racing GEM_CLOSE succeeds or fails with ENOENT");
	t_ok(bad_job == 0, "every accepted job ends OK with its BO held");
	t_ok(lost_write == 0, "every accepted job's write landed in its BO");
	t_ok(accepted + refused == ROUNDS, "all %d rounds accounted for", ROUNDS);

	/* The file is still healthy. */
	{
		struct t_bo b;
		size_t n;

		T_REQUIRE(t_bo_new(fd, 4096, 0, &b) == 0);
		n = t_cmd_write(cmd.map, b.va, 42);
		ret = t_run(fd, cmd.va, n, 0, (uint32_t[]){ cmd.handle, b.handle }, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)b.map == 42,
		     "the file runs jobs after the race (%d)", ret);
	}
	close(fd);
	return t_done();
}
