// SPDX-License-Identifier: MIT
/*
 * npu-top against real load.  A child process keeps jobs in flight on the
 * device while `npu-top -b` samples from outside; its report must show
 * that load on the device row and on the child's own process row, and
 * fall back to an idle device once the child has exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define NPU_TOP		"./npu-top"
#define BUF_SIZE	(4u << 20)
#define IN_FLIGHT	8
#define SEC		1000000000ll
#define MAX_SAMPLES	8

struct dev_row {
	unsigned long long engines;
	double busy, jobs;
	unsigned long long queue, mem_kib;
	unsigned int clients;
};

struct proc_row {
	int pid;
	double busy, jobs;
	unsigned long long queue, mem_kib;
};

/* One `npu-top -b` report: the first device and one process's row. */
struct report {
	double interval_s;
	int seen_device;
	struct dev_row dev;
	int seen_proc;
	struct proc_row proc;
	unsigned int proc_rows;
};

/* Runs npu-top -b and parses up to MAX_SAMPLES reports of it. */
static int run_npu_top(const char *args, int pid, struct report *r, int max)
{
	char cmd[128], line[512];
	int n = -1, status;
	FILE *p;

	snprintf(cmd, sizeof(cmd), NPU_TOP " -b %s", args);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	memset(r, 0, sizeof(*r) * (size_t)max);
	while (fgets(line, sizeof(line), p)) {
		struct proc_row pr;
		char dev[16], pci[32], comm[32];
		unsigned int clients;
		double mcyc;

		printf("# %s", line);
		if (!strncmp(line, "npu-top ", 8)) {
			if (++n >= max)
				break;
			if (sscanf(line, "npu-top sample %*d interval %lf", &r[n].interval_s) != 1)
				r[n].interval_s = 0;
			continue;
		}
		if (n < 0)
			continue;
		if (!r[n].seen_device &&
		    sscanf(line, "accel%15s %31s %llu %lf %lf %llu %llu %u", dev, pci,
			   &r[n].dev.engines,
			   &r[n].dev.busy, &r[n].dev.jobs, &r[n].dev.queue,
			   &r[n].dev.mem_kib, &r[n].dev.clients) == 8) {
			r[n].seen_device = 1;
			continue;
		}
		if (sscanf(line, "%d accel%15s %u %lf %lf %llu %llu %lf %31s", &pr.pid, dev,
			   &clients, &pr.busy, &pr.jobs, &pr.queue, &pr.mem_kib, &mcyc,
			   comm) == 9) {
			r[n].proc_rows++;
			if (pr.pid == pid) {
				r[n].proc = pr;
				r[n].seen_proc = 1;
			}
		}
	}
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return n + 1 > max ? max : n + 1;
}

/* What the load has done so far, shared with the parent. */
struct load_counts {
	uint64_t submitted;
	uint64_t device_ns;	/* device time of its finished jobs */
};
static struct load_counts *load_counts;

/*
 * The load: fill a buffer and copy it, IN_FLIGHT jobs at a time, until the
 * parent closes @stop_fd.  One byte on @ready_fd once the first job is done.
 */
static int load(int ready_fd, int stop_fd)
{
	struct npu_device *dev = NULL;
	struct npu_context *ctx = NULL;
	struct npu_queue *q = NULL;
	struct npu_buffer *src = NULL, *dst = NULL, *used[2];
	struct npu_cmdbuf *cb[IN_FLIGHT] = { NULL };
	struct npu_fence *f[IN_FLIGHT] = { NULL };
	unsigned long i;
	int ret, k;

	ret = npu_device_open(0, &dev);
	if (!ret)
		ret = npu_context_create(dev, &ctx);
	if (!ret)
		ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	if (!ret)
		ret = npu_buffer_alloc(ctx, BUF_SIZE, 0, &src);
	if (!ret)
		ret = npu_buffer_alloc(ctx, BUF_SIZE, 0, &dst);
	for (k = 0; !ret && k < IN_FLIGHT; k++) {
		ret = npu_cmdbuf_create(ctx, 256, &cb[k]);
		if (!ret)
			ret = npu_cmdbuf_fill(cb[k], npu_buffer_va(src), BUF_SIZE, (uint32_t)k);
		if (!ret)
			ret = npu_cmdbuf_barrier(cb[k]);
		if (!ret)
			ret = npu_cmdbuf_copy(cb[k], npu_buffer_va(dst), npu_buffer_va(src),
					      BUF_SIZE);
	}
	used[0] = src;
	used[1] = dst;
	for (i = 0; !ret; i++) {
		char c;

		k = (int)(i % IN_FLIGHT);
		if (f[k]) {
			struct npu_job_status st = NPU_JOB_STATUS_INIT;

			ret = npu_fence_wait(f[k], npu_deadline_ns(60 * SEC));
			if (!ret)
				ret = npu_fence_status(f[k], &st);
			npu_fence_free(f[k]);
			f[k] = NULL;
			if (ret)
				break;
			__atomic_add_fetch(&load_counts->device_ns, st.duration_ns,
					   __ATOMIC_RELAXED);
			if (i == IN_FLIGHT && write(ready_fd, "r", 1) != 1)
				ret = -EPIPE;
		}
		/* The parent closes its end to stop us: read() then returns 0. */
		if (read(stop_fd, &c, 1) == 0)
			break;
		if (!ret)
			ret = npu_submit(q, cb[k], used, 2, NULL, 0, &f[k]);
		if (!ret)
			__atomic_add_fetch(&load_counts->submitted, 1, __ATOMIC_RELAXED);
	}
	for (k = 0; k < IN_FLIGHT; k++) {
		if (f[k]) {
			npu_fence_wait(f[k], npu_deadline_ns(60 * SEC));
			npu_fence_free(f[k]);
		}
		npu_cmdbuf_destroy(cb[k]);
	}
	npu_buffer_free(dst);
	npu_buffer_free(src);
	npu_queue_destroy(q);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	if (ret)
		fprintf(stderr, "load: %s\n", npu_strerror(ret));
	return ret ? 1 : 0;
}

static struct load_counts read_counts(void)
{
	return (struct load_counts){
		.submitted = __atomic_load_n(&load_counts->submitted, __ATOMIC_RELAXED),
		.device_ns = __atomic_load_n(&load_counts->device_ns, __ATOMIC_RELAXED),
	};
}

int main(void)
{
	struct report r[MAX_SAMPLES];
	int ready[2], stop[2], n, i, status, busy_all, jobs_all;
	unsigned long long queued, max_queue;
	struct load_counts before, after;
	double seen_jobs = 0, seen_engine_s = 0, load_s, job_s;
	pid_t child;
	char c;

	/* Before any load: one report, an idle device, no clients. */
	n = run_npu_top("-n 1 -d 0.5", -1, r, MAX_SAMPLES);
	tap_ok(n == 1, "npu-top -b -n 1 prints exactly one report (got %d)", n);
	tap_ok(n == 1 && r[0].seen_device && r[0].dev.busy == 0 && r[0].dev.jobs == 0 &&
	       r[0].dev.queue == 0 && r[0].dev.clients == 0 && !r[0].proc_rows,
	       "idle: device 0 at 0%% busy, 0 jobs/s, empty queue, no clients");

	if (pipe(ready) || pipe(stop))
		TAP_BAIL("pipe: %s", strerror(errno));
	load_counts = mmap(NULL, sizeof(*load_counts), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (load_counts == MAP_FAILED)
		TAP_BAIL("mmap: %s", strerror(errno));
	child = fork();
	if (child < 0)
		TAP_BAIL("fork: %s", strerror(errno));
	if (child == 0) {
		close(ready[0]);
		close(stop[1]);
		/* Non-blocking reads of the stop pipe between submits. */
		if (fcntl(stop[0], F_SETFL, O_NONBLOCK))
			_exit(1);
		_exit(load(ready[1], stop[0]));
	}
	close(ready[1]);
	close(stop[0]);
	if (read(ready[0], &c, 1) != 1)
		TAP_BAIL("the load process failed to start");

	before = read_counts();
	n = run_npu_top("-n 3 -d 0.5", child, r, MAX_SAMPLES);
	after = read_counts();
	tap_ok(n == 3, "npu-top -b -n 3 prints three reports under load (got %d)", n);
	busy_all = jobs_all = n > 0;
	queued = 0;
	for (i = 0; i < n; i++) {
		busy_all &= r[i].seen_device && r[i].dev.busy > 0 && r[i].dev.busy <= 100;
		jobs_all &= r[i].dev.jobs > 0 && r[i].dev.clients >= 1;
		if (r[i].dev.queue > queued)
			queued = r[i].dev.queue;
		seen_jobs += r[i].dev.jobs * r[i].interval_s;
		seen_engine_s += r[i].dev.busy / 100 * r[i].interval_s * (double)r[i].dev.engines;
	}
	tap_ok(busy_all, "loaded: device busy in (0, 100]%% in every report");
	tap_ok(jobs_all, "loaded: device jobs/s > 0 and its clients listed in every report");
	/*
	 * npu-top's sampling window lies within the time it ran, so its jobs
	 * can only be fewer than the load counted meanwhile (rates and
	 * intervals are printed rounded, hence the 2%); its start-up is short
	 * against three half-second intervals.
	 */
	tap_ok(after.submitted > before.submitted &&
	       seen_jobs <= 1.02 * (double)(after.submitted - before.submitted) &&
	       seen_jobs >= 0.5 * (double)(after.submitted - before.submitted),
	       "loaded: npu-top counted %.0f jobs, the load submitted %llu while it ran",
	       seen_jobs, (unsigned long long)(after.submitted - before.submitted));
	/*
	 * The same for BUSY%: engine time over its window against the device
	 * time of the load's jobs, which the load learns a few jobs late.
	 */
	load_s = (double)(after.device_ns - before.device_ns) / 1e9;
	job_s = after.submitted > before.submitted ?
		load_s / (double)(after.submitted - before.submitted) : 0;
	tap_ok(load_s > 0 && seen_engine_s <= 1.02 * load_s + IN_FLIGHT * job_s &&
	       seen_engine_s >= 0.5 * load_s,
	       "loaded: npu-top's busy time %.3f s matches the load's device time %.3f s",
	       seen_engine_s, load_s);
	/*
	 * The load waits for each job's hardware fence (DRM_VNPU_WAIT_JOB),
	 * while the driver counts a job as unfinished until its scheduler
	 * fence signals, which happens in a callback of the hardware fence's
	 * signalling, on the CPU that signals it.  A job the load already
	 * saw end and replaced can still count for that instant, at most
	 * one per engine whose job completes at the same time.
	 */
	max_queue = IN_FLIGHT + (n > 0 ? r[0].dev.engines : 1);
	tap_ok(queued >= 1 && queued <= max_queue,
	       "loaded: queue depth seen between 1 and %llu (max %llu)", max_queue, queued);
	tap_ok(n > 0 && r[n - 1].seen_proc && r[n - 1].proc.busy > 0 && r[n - 1].proc.jobs > 0,
	       "loaded: the load's own process row (pid %d) shows busy and jobs/s", (int)child);
	tap_ok(n > 0 && r[n - 1].seen_proc && r[n - 1].proc.mem_kib >= 2 * BUF_SIZE / 1024 &&
	       r[n - 1].dev.mem_kib == r[n - 1].proc.mem_kib,
	       "loaded: its buffers (>= %u KiB) counted for the process and the device",
	       2 * BUF_SIZE / 1024);
	tap_ok(n > 0 && r[n - 1].seen_proc &&
	       r[n - 1].proc.jobs == r[n - 1].dev.jobs,
	       "loaded: device jobs/s equals that of its only user process");

	close(stop[1]);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		tap_ok(0, "the load process exits cleanly");
	else
		tap_ok(1, "the load process exits cleanly");

	n = run_npu_top("-n 1 -d 0.5", -1, r, MAX_SAMPLES);
	tap_ok(n == 1 && r[0].seen_device && r[0].dev.busy == 0 && r[0].dev.jobs == 0 &&
	       r[0].dev.clients == 0 && r[0].dev.mem_kib == 0 && !r[0].proc_rows,
	       "after the load: idle again, no clients, no memory");

	n = system(NPU_TOP " -b -n 0 >/dev/null 2>&1");
	tap_ok(WIFEXITED(n) && WEXITSTATUS(n) == 2, "npu-top -n 0 is a usage error (exit 2)");

	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}
