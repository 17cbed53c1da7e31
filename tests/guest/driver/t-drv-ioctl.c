// SPDX-License-Identifier: MIT
/*
 * Every vnpu ioctl: its success path, and for each bad input the exact
 * errno the uapi header documents.
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "vnpu_t.h"
#include "vnpu/vnpu_hw_ops.h"


/* Raise or drop CAP_SYS_NICE in the effective set (permitted keeps it). */
static int t_cap_sys_nice(int on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint32_t bit = 1u << (CAP_SYS_NICE % 32);

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[CAP_SYS_NICE / 32].effective |= bit;
	else
		d[CAP_SYS_NICE / 32].effective &= ~bit;
	return (int)syscall(SYS_capset, &h, d);
}

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
	     (info.caps & DRM_VNPU_CAP_MMU),
	     "QUERY geometry plausible: %u queues, va [%#llx, %#llx)",
	     info.num_queues, (unsigned long long)info.va_start,
	     (unsigned long long)info.va_end);

	t_ok(!(info.caps & ~(DRM_VNPU_CAP_MMU | DRM_VNPU_CAP_COMPUTE |
			     DRM_VNPU_CAP_TIMESTAMP | DRM_VNPU_CAP_FAULT_INJECT |
			     DRM_VNPU_CAP_CYCLE_MODEL)),
	     "QUERY caps has only documented bits (%#llx)",
	     (unsigned long long)info.caps);
	{
		uint64_t timeline = 0;

		/* The feature is the DRM core's to report, not a vnpu cap bit. */
		t_ok(!drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &timeline) && timeline == 1,
		     "the DRM core reports timeline syncobjs");
	}

	/* Hardware interface 1.1: the command limits, as vnpu_hw_ops.h has them. */
	t_ok(info.hw_version >= VNPU_HW_VERSION(1, 1),
	     "QUERY hw_version %#x is 1.1 or later", info.hw_version);
	t_ok(info.limit_tensor_elems == VNPU_LIMIT_TENSOR_ELEMS &&
	     info.limit_tensor_bytes == VNPU_LIMIT_TENSOR_BYTES &&
	     info.limit_cmd_bytes == VNPU_LIMIT_CMD_BYTES &&
	     info.limit_cmd_macs == VNPU_LIMIT_CMD_MACS &&
	     info.limit_reduction == VNPU_LIMIT_REDUCTION &&
	     info.limit_kernel_dim == VNPU_LIMIT_KERNEL_DIM &&
	     info.limit_channels == VNPU_LIMIT_CHANNELS,
	     "QUERY limits: elems %u bytes %u cmd_bytes %u macs %llu reduction %u kernel %u channels %u",
	     info.limit_tensor_elems, info.limit_tensor_bytes, info.limit_cmd_bytes,
	     (unsigned long long)info.limit_cmd_macs, info.limit_reduction,
	     info.limit_kernel_dim, info.limit_channels);

	/* A caller built against the 1.0 header: exactly its 72 bytes. */
	memset(big, 0xa5, sizeof(big));
	q.size = offsetof(struct drm_vnpu_device_info, limit_tensor_elems);
	q.data = (uintptr_t)big;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_QUERY, &q) == 0 && q.size == 72 &&
	     !memcmp(big, &info, 72) && big[72] == 0xa5,
	     "QUERY with the 1.0 size (72) gets the same prefix, nothing more");

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

	/* A handle listed twice counts once (it used to fail with -EALREADY). */
	{
		uint32_t dup[3] = { cmd.handle, data.handle, cmd.handle };

		*(uint64_t *)data.map = 0;
		t_cmd_write(cmd.map, data.va, 0x55);
		ret = t_run(fd, cmd.va, n, 0, dup, 3, &st);
		t_ok(ret == DRM_VNPU_JOB_OK && *(uint64_t *)data.map == 0x55,
		     "SUBMIT with a BO handle listed twice runs the job (%d)", ret);
	}

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
	/* HIGH overtakes everyone else's jobs: it takes CAP_SYS_NICE. */
	T_REQUIRE(t_cap_sys_nice(0) == 0);
	s.priority = DRM_VNPU_PRIORITY_HIGH;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == -EACCES,
	     "SUBMIT at high priority without CAP_SYS_NICE: EACCES");
	s.priority = DRM_VNPU_PRIORITY_NORMAL;
	t_ok(t_ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s) == 0 && t_wait_job(fd, s.job_id, 60) == 0,
	     "SUBMIT at normal priority without CAP_SYS_NICE");
	T_REQUIRE(t_cap_sys_nice(1) == 0);

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

/* A GEMM descriptor: dense, fp32 unless @dt says otherwise. */
static struct vnpu_tensor_desc t_desc(uint64_t va, uint8_t dt, uint32_t d0,
				      uint32_t d1)
{
	struct vnpu_tensor_desc d = {
		.va = va, .dtype = dt, .rank = 2, .dims = { d0, d1 },
	};

	return d;
}

static struct vnpu_tensor_desc t_q8(struct vnpu_tensor_desc d)
{
	d.quant = VNPU_QUANT_TENSOR;
	d.scale = 0x3c23d70a;	/* 0.01f */
	return d;
}

/*
 * Compute commands beyond the command limits, each behind a NOP so the
 * offset is the buffer's, not the command's: the job ends CMD_ERROR and
 * fault_va names the offending field.
 */
static void test_cmd_limits(int fd)
{
	const uint32_t big_k = VNPU_LIMIT_REDUCTION + 1;
	struct drm_vnpu_job_status st;
	struct vnpu_cmd_compute c;
	struct vnpu_cmd_hdr nop = { .opcode = VNPU_CMD_NOP, .size = 16 };
	struct t_bo cmd, a, b, y;
	uint32_t bos[4];
	int ret;

	T_REQUIRE(t_bo_new(fd, 4096, 0, &cmd) == 0);
	/* Room for 2048 x 2048 int8 and a K x 1 fp32 column. */
	T_REQUIRE(t_bo_new(fd, 4ull << 20, 0, &a) == 0);
	T_REQUIRE(t_bo_new(fd, 4ull << 20, 0, &b) == 0);
	T_REQUIRE(t_bo_new(fd, 4ull << 20, 0, &y) == 0);
	bos[0] = cmd.handle;
	bos[1] = a.handle;
	bos[2] = b.handle;
	bos[3] = y.handle;
	memset(cmd.map, 0, 16);
	memcpy(cmd.map, &nop, sizeof(nop));

	/* GEMM K one past REDUCTION: A's K extent is at fault. */
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_GEMM;
	c.hdr.size = sizeof(c);
	c.t[0] = t_desc(a.va, VNPU_DT_FP32, 1, big_k);
	c.t[1] = t_desc(b.va, VNPU_DT_FP32, big_k, 1);
	c.t[3] = t_desc(y.va, VNPU_DT_FP32, 1, 1);
	memcpy((char *)cmd.map + 16, &c, sizeof(c));
	ret = t_run(fd, cmd.va, 16 + sizeof(c), 0, bos, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_CMD_ERROR && st.fault_va == 16 + VNPU_CMD_TENSOR_OFF(0, dims[1]),
	     "GEMM K %u > REDUCTION: CMD_ERROR at A's K extent (state %d, fault_va %llu, want %u)",
	     big_k, ret, (unsigned long long)st.fault_va, 16 + VNPU_CMD_TENSOR_OFF(0, dims[1]));

	/* CONV2D kernel one row past KERNEL_DIM: W's KH is at fault. */
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_CONV2D;
	c.hdr.size = sizeof(c);
	c.attr.conv.stride_h = c.attr.conv.stride_w = 1;
	c.attr.conv.dilation_h = c.attr.conv.dilation_w = 1;
	c.attr.conv.groups = 1;
	c.t[0] = (struct vnpu_tensor_desc){ .va = a.va, .dtype = VNPU_DT_FP32, .rank = 4,
		.dims = { 1, VNPU_LIMIT_KERNEL_DIM + 1, 1, 1 } };
	c.t[1] = (struct vnpu_tensor_desc){ .va = b.va, .dtype = VNPU_DT_FP32, .rank = 4,
		.dims = { 1, VNPU_LIMIT_KERNEL_DIM + 1, 1, 1 } };
	c.t[3] = (struct vnpu_tensor_desc){ .va = y.va, .dtype = VNPU_DT_FP32, .rank = 4,
		.dims = { 1, 1, 1, 1 } };
	memcpy((char *)cmd.map + 16, &c, sizeof(c));
	ret = t_run(fd, cmd.va, 16 + sizeof(c), 0, bos, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_CMD_ERROR && st.fault_va == 16 + VNPU_CMD_TENSOR_OFF(1, dims[1]),
	     "CONV2D KH %u > KERNEL_DIM: CMD_ERROR at W's KH (state %d, fault_va %llu, want %u)",
	     VNPU_LIMIT_KERNEL_DIM + 1, ret, (unsigned long long)st.fault_va,
	     16 + VNPU_CMD_TENSOR_OFF(1, dims[1]));

	/*
	 * 2048^3 int8 MACs, twice CMD_MACS, with every operand well within
	 * its own limits: no single field is at fault, so the command's
	 * first byte is.
	 */
	memset(&c, 0, sizeof(c));
	c.hdr.opcode = VNPU_OP_GEMM;
	c.hdr.size = sizeof(c);
	c.t[0] = t_q8(t_desc(a.va, VNPU_DT_INT8, 2048, 2048));
	c.t[1] = t_q8(t_desc(b.va, VNPU_DT_INT8, 2048, 2048));
	c.t[3] = t_q8(t_desc(y.va, VNPU_DT_INT8, 2048, 2048));
	memcpy((char *)cmd.map + 16, &c, sizeof(c));
	ret = t_run(fd, cmd.va, 16 + sizeof(c), 0, bos, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_CMD_ERROR && st.fault_va == 16,
	     "GEMM of 2^33 MACs > CMD_MACS: CMD_ERROR at the command (state %d, fault_va %llu)",
	     ret, (unsigned long long)st.fault_va);

	/*
	 * At 1023 rows it is the largest within CMD_MACS (M x N x (K + 1)
	 * plus one batch's setup work units, ops.rst "Work units") and runs;
	 * at 1024 it is just past it.
	 */
	c.t[0].dims[0] = 1024;
	c.t[3].dims[0] = 1024;
	memcpy((char *)cmd.map + 16, &c, sizeof(c));
	ret = t_run(fd, cmd.va, 16 + sizeof(c), 0, bos, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_CMD_ERROR && st.fault_va == 16,
	     "GEMM of 1024 x 2048 x 2048 just past CMD_MACS: CMD_ERROR (state %d)", ret);
	c.t[0].dims[0] = 1023;
	c.t[3].dims[0] = 1023;
	memcpy((char *)cmd.map + 16, &c, sizeof(c));
	ret = t_run(fd, cmd.va, 16 + sizeof(c), 0, bos, 4, &st);
	t_ok(ret == DRM_VNPU_JOB_OK,
	     "GEMM of 1023 x 2048 x 2048, the largest within CMD_MACS, runs (state %d)", ret);
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
	test_cmd_limits(fd);
	test_prime(fd);
	close(fd);
	return t_done();
}
