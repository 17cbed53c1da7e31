// SPDX-License-Identifier: MIT
/*
 * Allocation failures on the driver's paths (make check-debug's kernel).
 *
 * Every allocation the kernel makes for one step (open, BO creation,
 * submit, wait) is failed in turn, with the fault-injection framework's
 * per-task countdown: writing N to /proc/thread-self/fail-nth fails the
 * N-th allocation this thread makes through failslab or fail_page_alloc;
 * reading 0 back afterwards says it happened, anything else that the step
 * made fewer than N allocations.  So N = 1, 2, ... walks one failure
 * through every allocation site the step reaches, in vnpu.ko and in the
 * DRM core it calls.  Each step must then either succeed or fail with a
 * clean errno, with nothing half done: the device keeps working and a job
 * that was accepted completes with its result.  Leaks show up in the
 * kmemleak scan at the end of the suite (t-zzz-kmemleak.sh); splats fail
 * the boot.
 *
 * Only the step's own syscall runs with the countdown armed: a failed page
 * fault in user memory would kill the test, not exercise the driver.
 */
#include <fcntl.h>
#include <stdbool.h>

#include "vnpu_t.h"

#define FI_ROOT		"/sys/kernel/debug"
#define DATA_SIZE	(256 * 1024)
/* No step of this driver comes near this many allocations. */
#define MAX_NTH		400

enum step { STEP_OPEN, STEP_BO, STEP_SUBMIT, STEP_WAIT, STEPS };
static const char *const step_name[STEPS] = { "open", "BO creation", "submit", "wait" };

static int fail_nth_fd = -1;

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

static int fi_set(const char *attr, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), FI_ROOT "/%s/%s", attr, file);
	return write_str(path, val);
}

/* Let the countdown reach sleeping and order-0 allocations too. */
static int fi_setup(void)
{
	int ret = 0;

	ret |= fi_set("failslab", "ignore-gfp-wait", "N");
	ret |= fi_set("failslab", "verbose", "0");
	ret |= fi_set("fail_page_alloc", "ignore-gfp-wait", "N");
	ret |= fi_set("fail_page_alloc", "ignore-gfp-highmem", "N");
	ret |= fi_set("fail_page_alloc", "min-order", "0");
	ret |= fi_set("fail_page_alloc", "verbose", "0");
	return ret;
}

static void arm(int nth)
{
	char v[16];
	int len = snprintf(v, sizeof(v), "%d", nth);

	T_REQUIRE(pwrite(fail_nth_fd, v, len, 0) == len);
}

/* Disarm; true if the armed failure was injected. */
static bool disarm(void)
{
	char v[16] = "";
	ssize_t n = pread(fail_nth_fd, v, sizeof(v) - 1, 0);

	T_REQUIRE(pwrite(fail_nth_fd, "0", 1, 0) == 1);
	return n > 0 && atoi(v) == 0;
}

static bool clean_errno(int e)
{
	return e == -ENOMEM || e == -ENOSPC || e == -EAGAIN || e == -EINTR;
}

struct pass {
	int ret;		/* of the step under injection */
	bool injected;		/* its nth allocation existed and failed */
	bool bad_errno;
	bool lost;		/* an accepted job did not complete correctly */
};

/*
 * One pass: run the steps before @inject plainly, @inject with the N-th
 * allocation failing, the rest plainly, and check the outcome.
 */
static struct pass one_pass(enum step inject, int nth, uint64_t value)
{
	struct drm_vnpu_bo_create cc = { .size = 4096 };
	struct drm_vnpu_bo_create dc = { .size = DATA_SIZE };
	struct drm_vnpu_bo_info info = {};
	struct drm_vnpu_job_status st;
	struct pass p = { 0 };
	uint64_t *out, id = 0;
	int fd, ret = 0;
	uint32_t bos[2];
	void *cmap;
	size_t n;

#define STEP(s, expr) do {						\
	if (inject == (s))						\
		arm(nth);						\
	ret = (expr);							\
	if (inject == (s)) {						\
		p.injected = disarm();					\
		p.ret = ret;						\
		p.bad_errno = ret && !clean_errno(ret);			\
	}								\
} while (0)

	STEP(STEP_OPEN, (fd = t_open()) < 0 ? -errno : 0);
	if (ret)
		return p;
	STEP(STEP_BO, t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &cc) ?:
		      t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &dc));
	if (ret)
		goto out;

	info.handle = cc.handle;
	T_REQUIRE(!t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &info));
	cmap = mmap(NULL, cc.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
	T_REQUIRE(cmap != MAP_FAILED);
	/* The data BO is never touched by the CPU: submit must get its pages. */
	n = t_cmd_write(cmap, dc.va + DATA_SIZE - 8, value);
	munmap(cmap, cc.size);
	bos[0] = cc.handle;
	bos[1] = dc.handle;

	STEP(STEP_SUBMIT, t_submit(fd, cc.va, n, 0, bos, 2, &id));
	if (ret)
		goto out;
	STEP(STEP_WAIT, t_wait_job(fd, id, 60));
	if (ret)
		T_REQUIRE(!t_wait_job(fd, id, 60));
	T_REQUIRE(!t_job_status(fd, id, &st));
	info.handle = dc.handle;
	T_REQUIRE(!t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &info));
	out = mmap(NULL, dc.size, PROT_READ, MAP_SHARED, fd, info.mmap_offset);
	T_REQUIRE(out != MAP_FAILED);
	p.lost = st.state != DRM_VNPU_JOB_OK || out[DATA_SIZE / 8 - 1] != value;
	munmap(out, dc.size);
out:
	close(fd);
	return p;
#undef STEP
}

int main(void)
{
	struct pass p;
	int s;

	/*
	 * Only check-debug runs this (check-guest leaves it out: Debian's
	 * kernel has no fault injection), so a kernel without it is not the
	 * debug kernel the layer means.
	 */
	if (access(FI_ROOT "/failslab", F_OK) || access(FI_ROOT "/fail_page_alloc", F_OK) ||
	    access("/proc/thread-self/fail-nth", F_OK)) {
		printf("not ok 1 - kernel without failslab/fail_page_alloc/fail-nth "
		       "(the debug kernel must have them)\n1..1\n");
		return 1;
	}
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	T_REQUIRE(fail_nth_fd >= 0);
	t_ok(!fi_setup(), "failslab and fail_page_alloc reach sleeping allocations");

	for (s = 0; s < STEPS; s++) {
		int nth, sites = 0, refused = 0, bad = 0, lost = 0;

		for (nth = 1; nth <= MAX_NTH; nth++) {
			p = one_pass(s, nth, 0x5eed0000ull + nth);
			if (p.bad_errno) {
				printf("# %s, allocation %d failed: step returned %d\n",
				       step_name[s], nth, p.ret);
				bad++;
			}
			lost += p.lost;
			if (!p.injected)
				break;
			sites++;
			refused += !!p.ret;
		}
		printf("# %s: %d allocations, each failed once: %d refused the step, %d absorbed\n",
		       step_name[s], sites, refused, sites - refused);
		t_ok((sites > 0 || s == STEP_WAIT) && nth <= MAX_NTH, "%s: every one of its %d allocations was failed",
		     step_name[s], sites);
		t_ok(!bad, "%s: every failure is a clean errno", step_name[s]);
		t_ok(!lost, "%s: every accepted job completed with its result", step_name[s]);
	}

	p = one_pass(STEPS, 0, 0xfeedfaceull);
	t_ok(!p.lost, "the device works after %d kinds of injected failure", STEPS);
	return t_done();
}
