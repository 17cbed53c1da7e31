// SPDX-License-Identifier: MIT
/*
 * npu-top: NPU usage per device and per process, in the spirit of top,
 * nvtop and intel-npu-smi.  Everything comes from DRM fdinfo
 * (Documentation/gpu/drm-usage-stats.rst): every open /dev/accel/accelN
 * file of every process we may inspect is one client, identified by its
 * drm-client-id, so a descriptor shared by dup() or fork() counts once.
 * Rates are the difference of two samples an interval apart.
 *
 * Interactive on a terminal ('q' quits, '+'/'-' change the interval);
 * -b prints plain text blocks for scripts, -n stops after N of them.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "npu/npu.h"

#define ACCEL_NODE_PREFIX "/dev/accel/accel"
#define MIN_INTERVAL_S 0.1
#define MAX_INTERVAL_S 3600.0

/* One DRM client of a vnpu device, as one fdinfo file describes it. */
struct client {
	char pdev[32];			/* drm-pdev: the device's PCI address */
	uint64_t id;			/* drm-client-id, unique per device */
	int pid;			/* first process seen holding it */
	char comm[32];
	uint32_t minor;			/* N of /dev/accel/accelN */
	uint64_t engine_ns;		/* drm-engine-npu */
	uint64_t capacity;		/* drm-engine-capacity-npu, 1 if absent */
	uint64_t cycles;		/* drm-cycles-npu */
	uint64_t mem_bytes;		/* drm-total-memory */
	uint64_t submitted;		/* vnpu-jobs-submitted */
	uint64_t unfinished;		/* vnpu-jobs-unfinished: queue depth */
};

struct sample {
	struct client *clients;
	size_t count, cap;
	struct timespec when;		/* CLOCK_MONOTONIC */
};

/*
 * What one process did on one device between two samples, over all its
 * clients there (libnpu opens one file per context, plus one for the
 * device itself).
 */
struct usage {
	int pid;
	uint32_t minor;
	const char *pdev, *comm;
	unsigned int clients;
	double engine_s;		/* device time, summed over engines */
	uint64_t capacity;
	double jobs_per_s, cycles_per_s;
	uint64_t queue, mem_bytes;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* "<uint>[ unit]" with an optional KiB/MiB (memory) or ns suffix. */
static bool parse_uint(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (!strncmp(end, "KiB", 3)) {
		if (v > UINT64_MAX / 1024)
			return false;
		v *= 1024;
	} else if (!strncmp(end, "MiB", 3)) {
		if (v > UINT64_MAX / (1024 * 1024))
			return false;
		v *= 1024 * 1024;
	}
	*out = v;
	return true;
}

/* Returns true when @path is the fdinfo of a vnpu client. */
static bool read_fdinfo(const char *path, struct client *c)
{
	char line[256];
	bool is_vnpu = false, has_id = false;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return false;
	c->capacity = 1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *val;

		if (!colon)
			continue;
		*colon = '\0';
		val = colon + 1;
		val[strcspn(val, "\n")] = '\0';
		while (isspace((unsigned char)*val))
			val++;
		if (!strcmp(line, "drm-driver"))
			is_vnpu = !strcmp(val, "vnpu");
		else if (!strcmp(line, "drm-client-id"))
			has_id = parse_uint(val, &c->id);
		else if (!strcmp(line, "drm-pdev"))
			snprintf(c->pdev, sizeof(c->pdev), "%s", val);
		else if (!strcmp(line, "drm-engine-npu"))
			parse_uint(val, &c->engine_ns);
		else if (!strcmp(line, "drm-engine-capacity-npu"))
			parse_uint(val, &c->capacity);
		else if (!strcmp(line, "drm-cycles-npu"))
			parse_uint(val, &c->cycles);
		else if (!strcmp(line, "drm-total-memory"))
			parse_uint(val, &c->mem_bytes);
		else if (!strcmp(line, "vnpu-jobs-submitted"))
			parse_uint(val, &c->submitted);
		else if (!strcmp(line, "vnpu-jobs-unfinished"))
			parse_uint(val, &c->unfinished);
	}
	fclose(f);
	if (!c->capacity)
		c->capacity = 1;
	return is_vnpu && has_id;
}

static struct client *find_client(const struct sample *s, const char *pdev, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		if (s->clients[i].id == id && !strcmp(s->clients[i].pdev, pdev))
			return &s->clients[i];
	return NULL;
}

static int add_client(struct sample *s, const struct client *c)
{
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct client *n;

		if (cap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(s->clients, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->clients = n;
		s->cap = cap;
	}
	s->clients[s->count++] = *c;
	return 0;
}

static void read_comm(int pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(comm, size, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, (int)size, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

static int scan_process(struct sample *s, int pid)
{
	char dir[64], path[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;	/* gone, or not ours to inspect */
	while ((e = readdir(d))) {
		struct client c = { .pid = pid };
		char *end;
		unsigned long minor;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, ACCEL_NODE_PREFIX, strlen(ACCEL_NODE_PREFIX)))
			continue;
		minor = strtoul(target + strlen(ACCEL_NODE_PREFIX), &end, 10);
		if (end == target + strlen(ACCEL_NODE_PREFIX) || *end || minor > UINT32_MAX)
			continue;
		c.minor = (uint32_t)minor;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, e->d_name);
		if (!read_fdinfo(path, &c) || find_client(s, c.pdev, c.id))
			continue;
		read_comm(pid, c.comm, sizeof(c.comm));
		ret = add_client(s, &c);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

static int take_sample(struct sample *s)
{
	struct dirent *e;
	DIR *proc;
	int ret = 0;

	s->count = 0;
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while (!ret && (e = readdir(proc))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		ret = scan_process(s, (int)pid);
	}
	closedir(proc);
	clock_gettime(CLOCK_MONOTONIC, &s->when);
	return ret;
}

/* Counters may step back briefly (drm-usage-stats.rst); no negative rates. */
static uint64_t grown(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

static double busy_pct(const struct usage *u, double dt)
{
	double pct = 100.0 * u->engine_s / (dt * (double)u->capacity);

	return pct > 100.0 ? 100.0 : pct;
}

/* Adds @c's activity since @prev to its process's entry in @u[*n]. */
static void account(struct usage *u, size_t *n, const struct client *c,
		    const struct sample *prev, double dt)
{
	const struct client *p = find_client(prev, c->pdev, c->id);
	struct client zero = { 0 };
	struct usage *e = NULL;
	size_t i;

	for (i = 0; i < *n; i++)
		if (u[i].pid == c->pid && u[i].minor == c->minor)
			e = &u[i];
	if (!e) {
		e = &u[(*n)++];
		*e = (struct usage){ .pid = c->pid, .minor = c->minor, .pdev = c->pdev,
				     .comm = c->comm, .capacity = c->capacity };
	}
	/* A client that appeared in between did all its work in between. */
	if (!p)
		p = &zero;
	e->clients++;
	e->engine_s += (double)grown(c->engine_ns, p->engine_ns) / 1e9;
	e->jobs_per_s += (double)grown(c->submitted, p->submitted) / dt;
	e->cycles_per_s += (double)grown(c->cycles, p->cycles) / dt;
	e->queue += c->unfinished;
	e->mem_bytes += c->mem_bytes;
}

static int by_busy_then_pid(const void *a, const void *b)
{
	const struct usage *x = a, *y = b;

	if (x->engine_s / (double)x->capacity != y->engine_s / (double)y->capacity)
		return x->engine_s / (double)x->capacity < y->engine_s / (double)y->capacity ?
		       1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

struct options {
	bool batch;
	long iterations;	/* 0: until stopped */
	double interval_s;
};

static int print_report(const struct sample *prev, const struct sample *cur,
			 const struct npu_device_info *devs, size_t ndevs,
			 long iteration, const struct options *o, int max_rows)
{
	double dt = seconds_between(&prev->when, &cur->when);
	struct usage *u = NULL;
	size_t i, j, nprocs = 0;
	int rows = 0;

	if (dt <= 0)
		dt = 1e-9;
	if (cur->count) {
		u = calloc(cur->count, sizeof(*u));
		if (!u)
			return -ENOMEM;
	}
	for (i = 0; u && i < cur->count; i++)
		account(u, &nprocs, &cur->clients[i], prev, dt);
	if (u)
		qsort(u, nprocs, sizeof(*u), by_busy_then_pid);

	printf("npu-top  sample %ld  interval %.2f s  %zu device%s  %zu client%s%s\n",
	       iteration, dt, ndevs, ndevs == 1 ? "" : "s", cur->count,
	       cur->count == 1 ? "" : "s",
	       o->batch ? "" : "   (q quits, +/- interval)");
	printf("%-8s %-13s %7s %6s %8s %6s %10s %7s\n", "DEVICE", "PCI", "ENGINES",
	       "BUSY%", "JOBS/S", "QUEUE", "MEM_KIB", "CLIENTS");
	for (i = 0; i < ndevs; i++) {
		const struct npu_device_info *d = &devs[i];
		struct usage dev = { .capacity = d->num_engines ? d->num_engines : 1 };
		char name[16];

		for (j = 0; u && j < nprocs; j++) {
			if (strcmp(u[j].pdev, d->pci_address))
				continue;
			dev.clients += u[j].clients;
			dev.engine_s += u[j].engine_s;
			dev.jobs_per_s += u[j].jobs_per_s;
			dev.queue += u[j].queue;
			dev.mem_bytes += u[j].mem_bytes;
		}
		snprintf(name, sizeof(name), "accel%" PRIu32, d->minor);
		printf("%-8s %-13s %7" PRIu64 " %6.1f %8.1f %6" PRIu64 " %10" PRIu64 " %7u\n",
		       name, d->pci_address, dev.capacity, busy_pct(&dev, dt),
		       dev.jobs_per_s, dev.queue, dev.mem_bytes / 1024, dev.clients);
	}

	printf("\n%7s %-8s %7s %6s %8s %6s %10s %8s  %s\n", "PID", "DEVICE", "CLIENTS",
	       "BUSY%", "JOBS/S", "QUEUE", "MEM_KIB", "MCYC/S", "COMMAND");
	for (i = 0; u && i < nprocs; i++) {
		char name[16];

		if (max_rows > 0 && rows++ >= max_rows)
			break;
		snprintf(name, sizeof(name), "accel%" PRIu32, u[i].minor);
		printf("%7d %-8s %7u %6.1f %8.1f %6" PRIu64 " %10" PRIu64 " %8.1f  %s\n",
		       u[i].pid, name, u[i].clients, busy_pct(&u[i], dt), u[i].jobs_per_s,
		       u[i].queue, u[i].mem_bytes / 1024, u[i].cycles_per_s / 1e6, u[i].comm);
	}
	free(u);
	return 0;
}

/* ---- interactive terminal ------------------------------------------------ */

static struct termios saved_termios;
static bool termios_saved;

static void restore_terminal(void)
{
	if (termios_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
	termios_saved = false;
	printf("\033[?25h");	/* cursor back */
	fflush(stdout);
}

static int raw_terminal(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_termios))
		return -errno;
	termios_saved = true;
	t = saved_termios;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	printf("\033[?25l");	/* no cursor flicker */
	return 0;
}

static int terminal_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 8)
		return 24;
	return ws.ws_row;
}

/*
 * Wait one interval; in interactive mode handle keys meanwhile.
 * Returns false when the user asked to quit.
 */
static bool wait_interval(struct options *o)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		double left;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char key;

		if (stop_requested)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = o->interval_s - seconds_between(&start, &now);
		if (left <= 0)
			return true;
		if (o->batch) {
			struct timespec ts = {
				.tv_sec = (time_t)left,
				.tv_nsec = (long)((left - (double)(time_t)left) * 1e9),
			};

			nanosleep(&ts, NULL);	/* EINTR: loop re-checks */
			continue;
		}
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		if (read(STDIN_FILENO, &key, 1) != 1)
			continue;
		if (key == 'q' || key == 'Q')
			return false;
		if (key == '+' && o->interval_s * 2 <= MAX_INTERVAL_S)
			o->interval_s *= 2;
		if (key == '-' && o->interval_s / 2 >= MIN_INTERVAL_S)
			o->interval_s /= 2;
	}
}

static void usage(FILE *to, const char *argv0)
{
	fprintf(to,
		"usage: %s [-b] [-n N] [-d SECONDS]\n"
		"NPU usage per vnpu device and per process, from DRM fdinfo.\n"
		"  -b, --batch          plain text for scripts (also when not on a terminal)\n"
		"  -n, --iterations N   stop after N reports (default: until stopped)\n"
		"  -d, --delay SECONDS  interval between samples, %.1f..%.0f (default 1)\n"
		"  -h, --help           this text\n"
		"Columns: BUSY%% engine time over wall time and engines; JOBS/S jobs\n"
		"submitted per second; QUEUE jobs submitted and not finished; MEM_KIB\n"
		"buffer memory; MCYC/S modelled device cycles per second.\n"
		"Processes of other users show only when run as root.\n",
		argv0, MIN_INTERVAL_S, MAX_INTERVAL_S);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	*o = (struct options){ .interval_s = 1.0 };
	while ((opt = getopt_long(argc, argv, "bn:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			o->batch = true;
			break;
		case 'n':
			errno = 0;
			o->iterations = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->iterations < 1) {
				fprintf(stderr, "npu-top: -n wants a positive count, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			o->interval_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o->interval_s >= MIN_INTERVAL_S) ||
			    o->interval_s > MAX_INTERVAL_S) {
				fprintf(stderr, "npu-top: -d wants %.1f..%.0f seconds, not '%s'\n",
					MIN_INTERVAL_S, MAX_INTERVAL_S, optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 1;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "npu-top: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sample samples[2] = { { 0 } }, *prev = &samples[0], *cur = &samples[1];
	struct npu_device_info *devs = NULL;
	struct npu_device_list *list;
	struct sigaction sa = { .sa_handler = on_signal };
	struct options o;
	size_t ndevs = 0;
	long iteration;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		o.batch = true;

	ret = npu_device_list(&list);
	if (!ret) {
		/* our own array, of the npu_device_info we were built with */
		ndevs = npu_device_list_count(list);
		devs = calloc(ndevs ? ndevs : 1, sizeof(*devs));
		ret = devs ? 0 : -ENOMEM;
		for (size_t i = 0; !ret && i < ndevs; i++)
			ret = npu_device_list_get_info(list, i, &devs[i], sizeof(devs[i]));
		npu_device_list_free(list);
	}
	if (ret) {
		free(devs);
		fprintf(stderr, "npu-top: listing devices: %s\n", npu_strerror(ret));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o.batch && raw_terminal()) {
		restore_terminal();
		o.batch = true;
	}

	ret = take_sample(prev);
	for (iteration = 1; !ret && (!o.iterations || iteration <= o.iterations); iteration++) {
		struct sample *t;

		if (!wait_interval(&o))
			break;
		ret = take_sample(cur);
		if (ret)
			break;
		if (!o.batch)
			printf("\033[H\033[2J");
		ret = print_report(prev, cur, devs, ndevs, iteration, &o,
				   o.batch ? 0 : terminal_rows() - (int)ndevs - 5);
		if (ret)
			break;
		if (o.batch && (!o.iterations || iteration < o.iterations))
			printf("\n");
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
	}
	if (!o.batch)
		restore_terminal();
	free(samples[0].clients);
	free(samples[1].clients);
	free(devs);
	if (ret) {
		fprintf(stderr, "npu-top: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
