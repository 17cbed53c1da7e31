// SPDX-License-Identifier: MIT
/*
 * Every vnpu ioctl: its success path, and for each bad input the exact
 * errno the uapi header documents.
 */
#include "vnpu_t.h"

static void test_query(int fd)
{
	struct drm_vnpu_device_info info;
	struct drm_vnpu_query q = { .param = DRM_VNPU_QUERY_DEVICE_INFO };
	unsigned char big[sizeof(info) + 16];
	unsigned int i;
	int zero = 1;

	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0 && q.size == sizeof(info),
	     "QUERY size 0 reports the struct size (%u)", q.size);

	memset(&info, 0xa5, sizeof(info));
	q.size = sizeof(info);
	q.data = (uintptr_t)&info;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0 && q.size == sizeof(info),
	     "QUERY fills device info");
	t_ok(info.pci_vendor == VNPU_PCI_VENDOR_ID && info.pci_device == VNPU_PCI_DEVICE_ID,
	     "QUERY ids %04x:%04x", info.pci_vendor, info.pci_device);
	t_ok(info.num_queues >= 1 && info.num_queues <= VNPU_NUM_QUEUES &&
	     info.va_start < info.va_end && info.max_bo_size >= 4096 &&
	     info.max_cmd_size == VNPU_CMD_MAX_BUFFER && info.pad == 0 &&
	     (info.caps & DRM_VNPU_CAP_MMU) && (info.caps & DRM_VNPU_CAP_TIMELINE_SYNCOBJ),
	     "QUERY geometry plausible: %u queues, va [%#llx, %#llx)",
	     info.num_queues, (unsigned long long)info.va_start,
	     (unsigned long long)info.va_end);

	/* Older caller: prefix only. */
	memset(big, 0xa5, sizeof(big));
	q.size = 8;
	q.data = (uintptr_t)big;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0 && q.size == 8 && big[8] == 0xa5,
	     "QUERY with a short size copies a prefix");
	/* Newer caller: trailing bytes zeroed. */
	memset(big, 0xa5, sizeof(big));
	q.size = sizeof(big);
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0 && q.size == sizeof(info),
	     "QUERY with a larger size returns the kernel's size");
	for (i = sizeof(info); i < sizeof(big); i++)
		zero &= big[i] == 0;
	t_ok(zero, "QUERY zeroes a newer caller's trailing bytes");

	q = (struct drm_vnpu_query){ .param = 7, .size = sizeof(info), .data = (uintptr_t)&info };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == -EINVAL, "QUERY unknown param: EINVAL");
	q = (struct drm_vnpu_query){ .size = sizeof(info), .data = (uintptr_t)&info, .pad = 1 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == -EINVAL, "QUERY nonzero pad: EINVAL");
	q = (struct drm_vnpu_query){ .size = sizeof(info), .data = 8 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == -EFAULT, "QUERY bad pointer: EFAULT");
}

static void test_bo(int fd)
{
	struct drm_vnpu_bo_create c = { .size = 5000 };
	struct drm_vnpu_bo_info i = {};
	struct drm_gem_close cl = {};
	struct t_bo a, b;

	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c) == 0 && c.size == 8192 &&
	     c.handle && c.va && c.va % 4096 == 0,
	     "BO_CREATE rounds 5000 to 8192, va %#llx", (unsigned long long)c.va);
	i.handle = c.handle;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i) == 0 && i.va == c.va &&
	     i.size == 8192 && i.mmap_offset, "BO_INFO returns va, size, mmap offset");
	cl.handle = c.handle;
	t_ok(drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &cl) == 0, "GEM_CLOSE");

	T_REQUIRE(t_bo_new(fd, 4096, 0, &a) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, DRM_VNPU_BO_DEVICE_READONLY, &b) == 0);
	t_ok(a.va + a.size <= b.va || b.va + b.size <= a.va, "BOs do not overlap in VA");
	t_ok(b.va != a.va + a.size && a.va != b.va + b.size,
	     "a guard page separates neighbouring BOs");

	c = (struct drm_vnpu_bo_create){ .size = 0 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c) == -EINVAL, "BO_CREATE size 0: EINVAL");
	c = (struct drm_vnpu_bo_create){ .size = 4096, .flags = 1u << 5 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c) == -EINVAL, "BO_CREATE unknown flag: EINVAL");
	c = (struct drm_vnpu_bo_create){ .size = 1ull << 40 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c) == -E2BIG, "BO_CREATE huge size: E2BIG");
	c = (struct drm_vnpu_bo_create){ .size = ~0ull };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c) == -E2BIG,
	     "BO_CREATE size that would overflow rounding: E2BIG");

	i = (struct drm_vnpu_bo_info){ .handle = 0xdead };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i) == -ENOENT, "BO_INFO bad handle: ENOENT");
	i = (struct drm_vnpu_bo_info){ .handle = a.handle, .pad = 1 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i) == -EINVAL, "BO_INFO nonzero pad: EINVAL");
}

static void test_submit_wait_status(int fd)
{
	struct drm_vnpu_job_status st;
	struct drm_vnpu_submit s;
	struct drm_vnpu_wait w;
	struct drm_vnpu_sync sync = {};
	struct t_bo cmd, data;
	uint32_t bos[2];
	uint32_t syncobj, tl;
	uint64_t id, pt = 0;
	size_t n;
	int ret;

	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	T_REQUIRE(t_bo_new(fd, 4096, 0, &data) == 0);
	bos[0] = cmd.handle;
	bos[1] = data.handle;

	n = t_cmd_write(cmd.map, data.va, 0x1122334455667788ull);
	ret = t_run(fd, cmd.va, n, 0, bos, 2, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)data.map == 0x1122334455667788ull,
	     "SUBMIT + WAIT + JOB_STATUS: WRITE_VALUE lands (state %d)", ret);
	t_ok(st.duration_ns > 0 || st.cycles > 0, "JOB_STATUS reports device time/cycles");

	/* WAIT on a BO. */
	*(uint64_t *)data.map = 0;
	t_cmd_write(cmd.map, data.va, 42);
	T_REQUIRE(t_submit(fd, cmd.va, n, 1, bos, 2, &id) == 0);
	w = (struct drm_vnpu_wait){ .type = DRM_VNPU_WAIT_BO, .id = data.handle,
				    .timeout_ns = t_now_ns() + 60000000000ll };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == 0 && *(uint64_t *)data.map == 42,
	     "WAIT on a BO waits for the job writing it");

	/* Every priority works. */
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n, .queue = 2,
				      .priority = DRM_VNPU_PRIORITY_HIGH,
				      .bo_handles = (uintptr_t)bos, .bo_count = 2 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 && t_wait_job(fd, s.job_id, 60) == 0,
	     "SUBMIT at high priority");
	s.priority = DRM_VNPU_PRIORITY_LOW;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 && t_wait_job(fd, s.job_id, 60) == 0,
	     "SUBMIT at low priority");

	/* Binary out-syncobj, then used as an in-fence. */
	T_REQUIRE(drmSyncobjCreate(fd, 0, &syncobj) == 0);
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n, .queue = 0,
				      .bo_handles = (uintptr_t)bos, .bo_count = 2,
				      .out_syncobj = syncobj };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0, "SUBMIT with binary out-syncobj");
	t_ok(drmSyncobjWait(fd, &syncobj, 1, t_now_ns() + 60000000000ll, 0, NULL) == 0,
	     "binary out-syncobj signals");
	sync.handle = syncobj;
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	s.out_syncobj = 0;
	s.queue = 3;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 && t_wait_job(fd, s.job_id, 60) == 0,
	     "SUBMIT with a binary in-syncobj");

	/* Timeline out-syncobj. */
	T_REQUIRE(drmSyncobjCreate(fd, 0, &tl) == 0);
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n, .queue = 1,
				      .bo_handles = (uintptr_t)bos, .bo_count = 2,
				      .out_syncobj = tl, .out_point = 5 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0, "SUBMIT with timeline point 5");
	pt = 5;
	t_ok(drmSyncobjTimelineWait(fd, &tl, &pt, 1, t_now_ns() + 60000000000ll,
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL) == 0,
	     "timeline point 5 signals");
	sync = (struct drm_vnpu_sync){ .handle = tl, .point = 5 };
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n, .queue = 2,
				      .in_syncs = (uintptr_t)&sync, .in_sync_count = 1 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 && t_wait_job(fd, s.job_id, 60) == 0,
	     "SUBMIT waiting on timeline point 5");

	/* Bad input, one field at a time. */
#define BAD_SUBMIT(field, value, err, what) do {				\
	s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n,		\
				      .bo_handles = (uintptr_t)bos, .bo_count = 2 }; \
	s.field = value;							\
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == (err), "SUBMIT %s: %s", what, #err); \
} while (0)
	BAD_SUBMIT(queue, 4, -EINVAL, "queue out of range");
	BAD_SUBMIT(priority, 3, -EINVAL, "unknown priority");
	BAD_SUBMIT(flags, 1, -EINVAL, "unknown flag");
	BAD_SUBMIT(pad, 1, -EINVAL, "nonzero pad");
	BAD_SUBMIT(cmd_size, 0, -EINVAL, "zero-sized command buffer");
	BAD_SUBMIT(cmd_size, 12, -EINVAL, "command size not a multiple of 8");
	BAD_SUBMIT(cmd_va, cmd.va + 4, -EINVAL, "misaligned command VA");
	BAD_SUBMIT(cmd_va, ~7ull, -EINVAL, "command range overflowing u64");
	BAD_SUBMIT(cmd_size, VNPU_CMD_MAX_BUFFER + 8, -E2BIG, "command buffer too large");
	BAD_SUBMIT(bo_count, 4097, -E2BIG, "too many BOs");
	BAD_SUBMIT(in_sync_count, 0xffffffffu, -E2BIG, "too many in-syncs");
	BAD_SUBMIT(bo_handles, 8, -EFAULT, "bad BO array pointer");
	BAD_SUBMIT(out_point, 3, -EINVAL, "out_point without out_syncobj");
	BAD_SUBMIT(out_syncobj, 0xdead, -ENOENT, "unknown out-syncobj");
	bos[1] = 0xdead;
	BAD_SUBMIT(bo_count, 2, -ENOENT, "unknown BO handle");
	bos[1] = data.handle;
	sync = (struct drm_vnpu_sync){ .handle = 0xdead };
	BAD_SUBMIT(in_sync_count, 1, -EFAULT, "bad in-sync pointer");
	s.in_syncs = (uintptr_t)&sync;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == -ENOENT, "SUBMIT unknown in-syncobj: ENOENT");
	sync = (struct drm_vnpu_sync){ .handle = syncobj, .flags = 1 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == -EINVAL, "SUBMIT in-sync flag: EINVAL");

	w = (struct drm_vnpu_wait){ .type = 2, .timeout_ns = t_now_ns() };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == -EINVAL, "WAIT unknown type: EINVAL");
	w = (struct drm_vnpu_wait){ .pad = 1, .id = id, .timeout_ns = t_now_ns() };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == -EINVAL, "WAIT nonzero pad: EINVAL");
	w = (struct drm_vnpu_wait){ .id = 1ull << 40, .timeout_ns = t_now_ns() };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == -ENOENT, "WAIT unknown job: ENOENT");
	w = (struct drm_vnpu_wait){ .type = DRM_VNPU_WAIT_BO, .id = 0xdead, .timeout_ns = t_now_ns() };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == -ENOENT, "WAIT unknown BO: ENOENT");

	/* A job blocked on a never-signalled syncobj: WAIT must time out. */
	{
		uint32_t never;

		T_REQUIRE(drmSyncobjCreate(fd, 0, &never) == 0);
		T_REQUIRE(drmSyncobjTimelineSignal(fd, &never, &(uint64_t){ 1 }, 1) == 0);
		sync = (struct drm_vnpu_sync){ .handle = never, .point = 1 };
		s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n,
					      .in_syncs = (uintptr_t)&sync, .in_sync_count = 1 };
		t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 &&
		     t_wait_job(fd, s.job_id, 30) == 0,
		     "in-fence already signalled: job runs");
		w = (struct drm_vnpu_wait){ .id = s.job_id, .timeout_ns = t_now_ns() - 1 };
		t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w) == 0,
		     "WAIT with a past deadline on a finished job succeeds");
	}
	{
		int64_t t0;

		/* A deadline already past when the job cannot be done yet. */
		s = (struct drm_vnpu_submit){ .cmd_va = cmd.va, .cmd_size = n,
					      .bo_handles = (uintptr_t)bos, .bo_count = 2 };
		T_REQUIRE(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0);
		t0 = t_now_ns();
		w = (struct drm_vnpu_wait){ .id = s.job_id, .timeout_ns = t0 };
		ret = t_ioctl(fd, DRM_IOCTL_VNPU_WAIT, &w);
		t_ok(ret == -ETIME || ret == 0, "WAIT with an expired deadline: ETIME or done (%d)", ret);
		t_ok(t_wait_job(fd, s.job_id, 60) == 0, "then the job completes");
	}

	t_ok(t_job_status(fd, 1ull << 40, &st) == -ENOENT, "JOB_STATUS unknown id: ENOENT");
	t_ok(t_job_status(fd, 0, &st) == -ENOENT, "JOB_STATUS id 0: ENOENT");
	st = (struct drm_vnpu_job_status){ .job_id = id, .pad = 1 };
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_JOB_STATUS, &st) == -EINVAL, "JOB_STATUS nonzero pad: EINVAL");

	/* A malformed command stream fails only that job. */
	memset(cmd.map, 0, 16);
	((struct vnpu_cmd_hdr *)cmd.map)->opcode = 0x3f;
	((struct vnpu_cmd_hdr *)cmd.map)->size = 16;
	ret = t_run(fd, cmd.va, 16, 0, bos, 2, &st);
	t_ok(ret == DRM_VNPU_JOB_CMD_ERROR, "bad opcode: job state CMD_ERROR (%d)", ret);

	/* Writing a read-only BO faults. */
	{
		struct t_bo ro;

		T_REQUIRE(t_bo_new(fd, 4096, DRM_VNPU_BO_DEVICE_READONLY, &ro) == 0);
		n = t_cmd_write(cmd.map, ro.va, 1);
		ret = t_run(fd, cmd.va, n, 0, bos, 2, &st);
		t_ok(ret == DRM_VNPU_JOB_MMU_FAULT && st.fault_va == ro.va &&
		     (st.fault_flags & DRM_VNPU_FAULT_WRITE),
		     "device write to a read-only BO: MMU_FAULT at its VA (%d)", ret);
	}
}

static void test_prime(int fd)
{
	struct drm_vnpu_job_status st;
	struct drm_vnpu_bo_info i = {};
	struct t_bo cmd, shared;
	uint32_t imp;
	int fd2, dmabuf, ret;
	size_t n;

	T_REQUIRE(t_bo_new(fd, 4096, 0, &shared) == 0);
	t_ok(drmPrimeHandleToFD(fd, shared.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf) == 0,
	     "PRIME export");
	fd2 = t_open();
	T_REQUIRE(fd2 >= 0);
	t_ok(drmPrimeFDToHandle(fd2, dmabuf, &imp) == 0, "PRIME import into another file");
	i.handle = imp;
	t_ok(t_ioctl(fd2, DRM_IOCTL_VNPU_BO_INFO, &i) == 0 && i.va && i.size == 4096,
	     "BO_INFO maps the import into the importer's space");

	T_REQUIRE(t_bo_new(fd2, 4096, 0, &cmd) == 0);
	n = t_cmd_write(cmd.map, i.va, 0xfeedull);
	ret = t_run(fd2, cmd.va, n, 0, (uint32_t[]){ cmd.handle, imp }, 2, &st);
	t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)shared.map == 0xfeedull,
	     "importer's job writes the exporter's pages");
	close(dmabuf);
	close(fd2);
}

int main(void)
{
	int fd = t_open();

	T_REQUIRE(fd >= 0);
	{
		drmVersionPtr v = drmGetVersion(fd);

		t_ok(v && !strcmp(v->name, "vnpu"), "driver name is vnpu");
		drmFreeVersion(v);
	}
	test_query(fd);
	test_bo(fd);
	test_submit_wait_status(fd);
	test_prime(fd);
	close(fd);
	return t_done();
}
