// SPDX-License-Identifier: MIT
/*
 * debugfs raw_rtt: the driver's bare doorbell->IRQ probe.  Checks that it
 * validates its input, returns ordered, plausible figures while another
 * process keeps queue 0 (the probe's queue) full of real jobs, that those
 * jobs all complete correctly beside it, and that a probe the device
 * hangs on or whose interrupt is lost ends in an error instead of a
 * stuck reader, leaving the device usable.
 */
#include <signal.h>
#include <sys/wait.h>

#include "vnpu_t.h"

#define BATCH		300	/* more than the ring holds */
#define MAX_RTT_NS	5000000000ll
#define CMD		((int)sizeof(struct vnpu_cmd_write_value))

static char dir[512];

static int debugfs_dir(void)
{
	char link[256];
	const char *pci;
	ssize_t n;

	n = readlink("/sys/class/accel/accel0/device", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	pci = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(dir, sizeof(dir), "/sys/kernel/debug/accel/%s", pci);
	return access(dir, R_OK) ? -errno : 0;
}

/* Read a whole debugfs file; returns bytes or -errno. */
static ssize_t read_file(const char *name, char *buf, size_t size)
{
	char path[600];
	ssize_t n, len = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	if (n < 0)
		len = -errno;
	close(fd);
	if (len >= 0)
		buf[len] = 0;
	return len;
}

static int64_t field(const char *text, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s: ", key);
	p = strstr(text, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

struct rtt {
	int64_t samples, min, med, p99, max, total;
};

static int measure(int n, struct rtt *r)
{
	char buf[1024], val[16];
	ssize_t len;
	int ret;

	snprintf(val, sizeof(val), "%d", n);
	ret = t_debugfs_write("raw_rtt", val);
	if (ret)
		return ret;
	len = read_file("raw_rtt", buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	r->samples = field(buf, "samples");
	r->min = field(buf, "min_ns");
	r->med = field(buf, "median_ns");
	r->p99 = field(buf, "p99_ns");
	r->max = field(buf, "max_ns");
	r->total = field(buf, "total_ns");
	return 0;
}

static int sane(const struct rtt *r, int n)
{
	return r->samples == n && r->min > 0 && r->min <= r->med &&
	       r->med <= r->p99 && r->p99 <= r->max && r->max < MAX_RTT_NS &&
	       r->total >= r->min * n && r->total <= r->max * n;
}

static int64_t resets(void)
{
	char buf[4096];

	if (read_file("state", buf, sizeof(buf)) < 0)
		return -1;
	return field(buf, "resets");
}

/*
 * Keep queue 0 saturated with WRITE_VALUE jobs until the parent says stop;
 * exit 0 only if every job completed OK and wrote its value.
 */
static int load(volatile int *stop, volatile int *jobs)
{
	uint64_t ids[BATCH];
	struct t_bo cmd, dst;
	uint64_t *out;
	int fd, i, round;

	fd = t_open();
	if (fd < 0 || t_bo_new(fd, BATCH * CMD, 0, &cmd) ||
	    t_bo_new(fd, BATCH * 8, 0, &dst))
		return 2;
	out = dst.map;
	for (i = 0; i < BATCH; i++)
		t_cmd_write((char *)cmd.map + CMD * i, dst.va + 8 * i, 0);

	for (round = 1; !*stop; round++) {
		uint32_t bos[2] = { cmd.handle, dst.handle };

		for (i = 0; i < BATCH; i++) {
			struct vnpu_cmd_write_value *c =
				(void *)((char *)cmd.map + CMD * i);

			c->value = ((uint64_t)round << 32) | i;
		}
		for (i = 0; i < BATCH; i++)
			if (t_submit(fd, cmd.va + CMD * i, CMD, 0, bos, 2,
				     &ids[i]))
				return 3;
		for (i = 0; i < BATCH; i++) {
			struct drm_vnpu_job_status st;

			if (t_wait_job(fd, ids[i], 120) ||
			    t_job_status(fd, ids[i], &st) ||
			    st.state != DRM_VNPU_JOB_OK)
				return 4;
			if (out[i] != (((uint64_t)round << 32) | (uint64_t)i))
				return 5;
		}
		*jobs += BATCH;
	}
	close(fd);
	return 0;
}

int main(void)
{
	volatile int *shared;
	struct rtt r;
	int64_t r0;
	pid_t pid;
	int ret, status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = debugfs_dir();
	if (ret) {
		t_ok(0, "debugfs directory %s: %s", dir, strerror(-ret));
		return t_done();
	}
	r0 = resets();

	t_ok(t_debugfs_write("raw_rtt", "0") == -EINVAL, "raw_rtt rejects 0 round trips");
	t_ok(t_debugfs_write("raw_rtt", "100001") == -EINVAL, "raw_rtt rejects more than 100000");
	t_ok(t_debugfs_write("raw_rtt", "ten") == -EINVAL, "raw_rtt rejects a non-number");

	ret = measure(20, &r);
	t_ok(!ret && sane(&r, 20),
	     "idle device: 20 round trips, min %lld median %lld p99 %lld max %lld ns (%s)",
	     (long long)r.min, (long long)r.med, (long long)r.p99,
	     (long long)r.max, ret ? strerror(-ret) : "read ok");

	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(shared != MAP_FAILED);
	pid = fork();
	T_REQUIRE(pid >= 0);
	if (!pid)
		_exit(load(&shared[0], &shared[1]));
	/* Let the loader fill the ring before probing beside it. */
	while (!shared[1] && waitpid(pid, &status, WNOHANG) == 0)
		usleep(1000);

	ret = measure(100, &r);
	t_ok(!ret && sane(&r, 100),
	     "beside a full queue: 100 round trips, min %lld median %lld p99 %lld ns (%s)",
	     (long long)r.min, (long long)r.med, (long long)r.p99,
	     ret ? strerror(-ret) : "read ok");
	shared[0] = 1;
	T_REQUIRE(waitpid(pid, &status, 0) == pid);
	t_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	     "%d concurrent jobs on the probe's queue all completed and wrote their values (status %#x)",
	     shared[1], status);
	t_ok(resets() == r0, "no reset happened (resets %lld -> %lld)",
	     (long long)r0, (long long)resets());

	/* The interrupt goes missing: the probe ends, without a reset. */
	T_REQUIRE(t_debugfs_write("inject_lost_irq", "1") == 0);
	ret = measure(1, &r);
	t_ok(ret == -ETIMEDOUT, "lost interrupt: read fails with ETIMEDOUT (%s)",
	     strerror(-ret));
	t_ok(resets() == r0, "lost interrupt: completion found without a reset");

	/* The device hangs on the probe: it resets and reports the error. */
	T_REQUIRE(t_debugfs_write("inject_hang", "1") == 0);
	ret = measure(1, &r);
	t_ok(ret == -ETIMEDOUT, "hung probe: read fails with ETIMEDOUT (%s)",
	     strerror(-ret));
	t_ok(resets() == r0 + 1, "hung probe: device was reset once");

	ret = measure(10, &r);
	t_ok(!ret && sane(&r, 10), "after the reset: 10 round trips, median %lld ns (%s)",
	     (long long)r.med, ret ? strerror(-ret) : "read ok");
	return t_done();
}
