// SPDX-License-Identifier: MIT
/*
 * Argument validation of every public entry point that can be reached
 * without a device, error strings, and the small helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "npu_internal.h"
#include "vnpu/vnpu_hw_ops.h"

static void test_strerror(void **state)
{
	static const int errs[] = {
		EPERM, ENOENT, EINTR, EIO, EBADF, EAGAIN, ENOMEM, EACCES,
		EFAULT, EBUSY, EXDEV, ENODEV, EINVAL, ENOSPC, E2BIG, ENODATA,
		ETIME, EPROTO, EOPNOTSUPP, ETIMEDOUT, ECANCELED, ENOTTY,
		EOVERFLOW,
	};
	size_t i;

	(void)state;
	assert_string_equal(npu_strerror(0), "success");
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *neg = npu_strerror(-errs[i]);

		assert_non_null(neg);
		assert_string_not_equal(neg, "unknown error");
		/* sign does not matter */
		assert_ptr_equal(neg, npu_strerror(errs[i]));
	}
	/* the NPU meanings, not libc's */
	assert_non_null(strstr(npu_strerror(-ETIMEDOUT), "deadline"));
	assert_non_null(strstr(npu_strerror(-ETIME), "deadline"));
	/* job outcomes are not errnos any more: no errno says "MMU" */
	assert_null(strstr(npu_strerror(-EFAULT), "MMU"));
	assert_null(strstr(npu_strerror(-EIO), "DMA"));
	assert_string_equal(npu_strerror(-123456), "unknown error");
	assert_string_equal(npu_strerror(INT32_MIN + 1), "unknown error");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(npu_cap_name(NPU_CAP_MMU), "mmu");
	assert_string_equal(npu_cap_name(NPU_CAP_COMPUTE), "compute");
	assert_string_equal(npu_cap_name(NPU_CAP_TIMESTAMP), "timestamp");
	assert_string_equal(npu_cap_name(NPU_CAP_FAULT_INJECT), "fault-inject");
	assert_string_equal(npu_cap_name(NPU_CAP_CYCLE_MODEL), "cycle-model");
	assert_string_equal(npu_cap_name(NPU_CAP_TIMELINE_SYNCOBJ),
			    "timeline-syncobj");
	assert_null(npu_cap_name(0));
	assert_null(npu_cap_name(NPU_CAP_MMU | NPU_CAP_COMPUTE));
	assert_null(npu_cap_name(1ull << 20));

	/* the public values are the uapi's */
	assert_int_equal(NPU_CAP_MMU, DRM_VNPU_CAP_MMU);
	assert_int_equal(NPU_CAP_COMPUTE, DRM_VNPU_CAP_COMPUTE);
	assert_int_equal(NPU_CAP_TIMESTAMP, DRM_VNPU_CAP_TIMESTAMP);
	assert_int_equal(NPU_CAP_FAULT_INJECT, DRM_VNPU_CAP_FAULT_INJECT);
	assert_int_equal(NPU_CAP_CYCLE_MODEL, DRM_VNPU_CAP_CYCLE_MODEL);
	assert_int_equal(NPU_BUFFER_DEVICE_READONLY, DRM_VNPU_BO_DEVICE_READONLY);

	assert_string_equal(npu_job_state_name(NPU_JOB_PENDING), "pending");
	assert_string_equal(npu_job_state_name(NPU_JOB_OK), "ok");
	assert_string_equal(npu_job_state_name(NPU_JOB_MMU_FAULT), "mmu-fault");
	assert_string_equal(npu_job_state_name(NPU_JOB_CMD_ERROR), "cmd-error");
	assert_string_equal(npu_job_state_name(NPU_JOB_TIMEOUT), "timeout");
	assert_string_equal(npu_job_state_name(NPU_JOB_ABORTED), "aborted");
	assert_string_equal(npu_job_state_name(NPU_JOB_DEVICE_LOST),
			    "device-lost");
	assert_string_equal(npu_job_state_name(NPU_JOB_DMA_ERROR), "dma-error");
	assert_string_equal(npu_job_state_name((enum npu_job_state)42), "unknown");
}

static void test_time(void **state)
{
	int64_t a, b, d;

	(void)state;
	a = npu_time_ns();
	usleep(1000);
	b = npu_time_ns();
	assert_true(b - a >= 1000000);

	d = npu_deadline_ns(5000000000ll);
	assert_true(d >= b + 5000000000ll);
	assert_true(d < npu_time_ns() + 6000000000ll);
	assert_true(npu_deadline_ns(NPU_TIMEOUT_INFINITE) == NPU_TIMEOUT_INFINITE);
	assert_true(npu_deadline_ns(INT64_MAX - 1) == NPU_TIMEOUT_INFINITE);
	/* a past or zero delay is "now": a poll */
	assert_true(npu_deadline_ns(-5) <= npu_time_ns());
	assert_true(npu_deadline_ns(0) >= b);
}

static void test_device_args(void **state)
{
	struct npu_device *dev = NULL;
	struct npu_device_info info;

	(void)state;
	assert_int_equal(npu_device_list(NULL), -EINVAL);
	assert_int_equal(npu_device_open(0, NULL), -EINVAL);
	assert_int_equal(npu_device_open_pci(NULL, &dev), -EINVAL);
	assert_int_equal(npu_device_open_pci("0000:00:04.0", NULL), -EINVAL);
	assert_int_equal(npu_device_open_pci("not-an-address", &dev), -EINVAL);
	assert_int_equal(npu_device_open_pci("0000:00:04", &dev), -EINVAL);
	assert_null(dev);
	/* The build host has no accel devices: nothing to open. */
	if (access("/sys/class/accel", F_OK)) {
		assert_int_equal(npu_device_open(0, &dev), -ENODEV);
		assert_int_equal(npu_device_open_pci("00:04.0", &dev), -ENODEV);
		assert_null(dev);
	}
	assert_int_equal(npu_device_get_info(NULL, &info, sizeof(info)), -EINVAL);
	npu_device_close(NULL);
	npu_device_list_free(NULL);
}

/*
 * QUERY answers of each driver generation: 1.0's 72 bytes end before the
 * limits, 1.1 reports zeros for a 1.0 device and values for a 1.1 one.
 * npu_device_get_limits() gives the reported values or interface 1.1's,
 * copying only the size the caller knows.
 */
static void test_query_limits(void **state)
{
	struct drm_vnpu_device_info di;
	struct npu_device_info info;
	struct npu_device_limits lim, out;
	struct npu_device dev;
	size_t v10 = offsetof(struct drm_vnpu_device_info, limit_tensor_elems);

	(void)state;
	assert_int_equal(v10, 72);
	memset(&di, 0, sizeof(di));
	di.hw_version = 0x10001;
	di.caps = DRM_VNPU_CAP_COMPUTE;
	di.limit_tensor_elems = 1000;
	di.limit_tensor_bytes = 4000;
	di.limit_cmd_bytes = 16000;
	di.limit_cmd_macs = 1ull << 33;
	di.limit_reduction = 300;
	di.limit_kernel_dim = 7;
	di.limit_channels = 99;
	/* Too short to say even what the device can do. */
	assert_int_equal(npu__info_from_query(&di, 8, &info, &lim), -EPROTO);

	memset(&lim, 0xff, sizeof(lim));
	assert_int_equal(npu__info_from_query(&di, v10, &info, &lim), 0);
	assert_int_equal(info.caps, DRM_VNPU_CAP_COMPUTE);
	assert_int_equal(lim.reported, 0);
	assert_int_equal(lim.tensor_elems, 0);
	assert_int_equal(lim.cmd_macs, 0);

	assert_int_equal(npu__info_from_query(&di, sizeof(di), &info, &lim), 0);
	assert_int_equal(lim.reported, 1);
	assert_int_equal(lim.tensor_elems, 1000);
	assert_int_equal(lim.tensor_bytes, 4000);
	assert_int_equal(lim.cmd_bytes, 16000);
	assert_int_equal(lim.cmd_macs, 1ull << 33);
	assert_int_equal(lim.reduction, 300);
	assert_int_equal(lim.kernel_dim, 7);
	assert_int_equal(lim.channels, 99);
	assert_int_equal(npu__info_from_query(&di, sizeof(di), &info, NULL), 0);

	memset(&dev, 0, sizeof(dev));
	dev.limits = lim;
	assert_int_equal(npu_device_get_limits(NULL, &out, sizeof(out)), -EINVAL);
	assert_int_equal(npu_device_get_limits(&dev, NULL, sizeof(out)), -EINVAL);
	assert_int_equal(npu_device_get_limits(&dev, &out, 0), -EINVAL);
	assert_int_equal(npu_device_get_limits(&dev, &out, sizeof(out)), 0);
	assert_memory_equal(&out, &lim, sizeof(out));
	/* A caller that knows only the first fields gets only those. */
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(npu_device_get_limits(&dev, &out,
					       offsetof(struct npu_device_limits, tensor_bytes)), 0);
	assert_int_equal(out.tensor_elems, 1000);
	assert_int_equal(out.tensor_bytes, 0xababababababababull);

	/* A 1.1 driver on a 1.0 device: zeros, so not reported. */
	di.limit_tensor_elems = 0;
	assert_int_equal(npu__info_from_query(&di, sizeof(di), &info, &dev.limits), 0);
	assert_int_equal(dev.limits.reported, 0);
	assert_int_equal(npu_device_get_limits(&dev, &out, sizeof(out)), 0);
	assert_int_equal(out.reported, 0);
	assert_int_equal(out.tensor_elems, VNPU_LIMIT_TENSOR_ELEMS);
	assert_int_equal(out.tensor_bytes, VNPU_LIMIT_TENSOR_BYTES);
	assert_int_equal(out.cmd_bytes, VNPU_LIMIT_CMD_BYTES);
	assert_true(out.cmd_macs == VNPU_LIMIT_CMD_MACS);
	assert_int_equal(out.reduction, VNPU_LIMIT_REDUCTION);
	assert_int_equal(out.kernel_dim, VNPU_LIMIT_KERNEL_DIM);
	assert_int_equal(out.channels, VNPU_LIMIT_CHANNELS);
}

static void test_context_args(void **state)
{
	struct npu_context *ctx = NULL;

	(void)state;
	assert_int_equal(npu_context_create(NULL, &ctx), -EINVAL);
	assert_null(ctx);
	assert_int_equal(npu_context_fd(NULL), -EINVAL);
	npu_context_destroy(NULL);
}

static void test_buffer_args(void **state)
{
	struct npu_buffer *buf = NULL;
	void *p = NULL;
	int fd = -1;

	(void)state;
	assert_int_equal(npu_buffer_alloc(NULL, 4096, 0, &buf), -EINVAL);
	assert_int_equal(npu_buffer_import(NULL, 0, &buf), -EINVAL);
	assert_null(buf);
	assert_int_equal(npu_buffer_map(NULL, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(npu_buffer_export(NULL, &fd), -EINVAL);
	assert_int_equal(fd, -1);
	assert_int_equal(npu_buffer_wait_idle(NULL, 0), -EINVAL);
	assert_int_equal(npu_buffer_va(NULL), 0);
	assert_int_equal(npu_buffer_size(NULL), 0);
	assert_int_equal(npu_buffer_handle(NULL), 0);
	npu_buffer_free(NULL);
}

static void test_submit_args(void **state)
{
	struct npu_queue *q = NULL;
	struct npu_fence *f = NULL;
	struct npu_cmdbuf *cb;
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	struct npu_fence fake = { .job_id = 0 };
	size_t first;
	int fd = -1;

	(void)state;
	assert_int_equal(npu_queue_create(NULL, 0, NPU_PRIORITY_NORMAL, &q),
			 -EINVAL);
	assert_null(q);
	npu_queue_destroy(NULL);

	/* a host-only command buffer cannot be submitted */
	assert_int_equal(npu_cmdbuf_create(NULL, 64, &cb), 0);
	assert_int_equal(npu_cmdbuf_nop(cb, 8), 0);
	assert_int_equal(npu_submit(NULL, cb, NULL, 0, NULL, 0, &f), -EINVAL);
	assert_null(f);
	npu_cmdbuf_destroy(cb);

	assert_int_equal(npu_fence_wait(NULL, 0), -EINVAL);
	assert_int_equal(npu_fence_wait_many(NULL, 1, true, 0, &first), -EINVAL);
	assert_int_equal(npu_fence_wait_many(&f, 0, true, 0, &first), -EINVAL);
	assert_int_equal(npu_fence_wait_many(&f, 1, true, 0, &first), -EINVAL);
	assert_int_equal(npu_fence_is_signaled(NULL), -EINVAL);
	assert_int_equal(npu_fence_export_sync_file(NULL, &fd), -EINVAL);
	assert_int_equal(npu_fence_import_sync_file(NULL, 0, &f), -EINVAL);
	assert_int_equal(npu_fence_status(NULL, &st), -EINVAL);
	assert_int_equal(npu_fence_error(NULL), -EINVAL);
	/* an imported fence has no status; the size is checked first */
	assert_int_equal(npu_fence_status(&fake, &st), -ENODATA);
	st.size = 0;
	assert_int_equal(npu_fence_status(&fake, &st), -EINVAL);
	npu_fence_free(NULL);
}

/* npu_version() is the headers' version, and the Makefile's (abi-tests). */
static void test_version(void **state)
{
	char want[32];

	(void)state;
	snprintf(want, sizeof(want), "%d.%d.%d", NPU_VERSION_MAJOR,
		 NPU_VERSION_MINOR, NPU_VERSION_PATCH);
	assert_string_equal(npu_version(), want);
	assert_string_equal(npu_version(), "1.9.0");
	assert_int_equal(npu_version_check(NPU_VERSION_MAJOR, NPU_VERSION_MINOR), 0);
	assert_int_equal(npu_version_check(1, 0), 0);
	assert_int_equal(npu_version_check(1, NPU_VERSION_MINOR + 1), -ENOTSUP);
	assert_int_equal(npu_version_check(2, 0), -ENOTSUP);
	assert_int_equal(npu_version_check(0, 9), -ENOTSUP);
}

/*
 * Job outcomes are a range of their own, below every errno (the kernel's
 * MAX_ERRNO is 4095), so "the job faulted" never reads as "the call
 * failed with -EFAULT" (before 1.3 npu_fence_error() and npu_op_run()
 * returned -EFAULT, -EIO, ... for job outcomes).
 */
static void test_job_errors(void **state)
{
	static const enum npu_job_state bad[] = {
		NPU_JOB_PENDING, NPU_JOB_MMU_FAULT, NPU_JOB_CMD_ERROR,
		NPU_JOB_TIMEOUT, NPU_JOB_ABORTED, NPU_JOB_DEVICE_LOST,
		NPU_JOB_DMA_ERROR,
	};
	size_t i;

	(void)state;
	assert_int_equal(npu__job_error(NPU_JOB_OK), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = npu__job_error(bad[i]);

		assert_int_equal(e, NPU_ERR_JOB(bad[i]));
		assert_true(e < -4095);
		assert_true(NPU_ERR_IS_JOB(e));
		assert_int_equal(NPU_ERR_JOB_STATE(e), bad[i]);
		assert_non_null(strstr(npu_strerror(e), "job"));
		assert_string_not_equal(npu_strerror(e), "unknown error");
	}
	assert_int_equal(NPU_ERR_JOB_MMU_FAULT, NPU_ERR_JOB(NPU_JOB_MMU_FAULT));
	assert_int_equal(NPU_ERR_JOB_DMA_ERROR, NPU_ERR_JOB(NPU_JOB_DMA_ERROR));
	assert_int_equal(NPU_ERR_JOB_PENDING, NPU_ERR_JOB(NPU_JOB_PENDING));
	assert_non_null(strstr(npu_strerror(NPU_ERR_JOB_MMU_FAULT), "MMU"));
	assert_non_null(strstr(npu_strerror(NPU_ERR_JOB_DMA_ERROR), "DMA"));
	assert_false(NPU_ERR_IS_JOB(-EFAULT));
	assert_false(NPU_ERR_IS_JOB(-EIO));
	assert_false(NPU_ERR_IS_JOB(0));
	assert_false(NPU_ERR_IS_JOB(-4095));
}

/*
 * The extensible-struct rules (npu.h "ABI rules"), as every entry point
 * applies them through these two helpers.
 */
static void test_struct_rules(void **state)
{
	struct s2 {
		uint32_t size;
		uint32_t a;
		uint64_t b;
	} k, src;
	uint8_t big[sizeof(struct s2) + 8];

	(void)state;
	/* an older caller's smaller struct: the missing field reads zero */
	memset(&k, 0xff, sizeof(k));
	src = (struct s2){ .size = 8, .a = 7, .b = 99 };
	assert_int_equal(npu__struct_in(&k, sizeof(k), &src, src.size), 0);
	assert_int_equal(k.a, 7);
	assert_int_equal(k.b, 0);
	/* a newer caller's larger struct: fine while the unknown tail is 0 */
	memset(big, 0, sizeof(big));
	src = (struct s2){ .size = sizeof(big), .a = 1, .b = 2 };
	memcpy(big, &src, sizeof(src));
	assert_int_equal(npu__struct_in(&k, sizeof(k), big, sizeof(big)), 0);
	assert_int_equal(k.b, 2);
	big[sizeof(big) - 1] = 1;
	assert_int_equal(npu__struct_in(&k, sizeof(k), big, sizeof(big)), -E2BIG);
	/* no size: a caller that forgot to set it */
	assert_int_equal(npu__struct_in(&k, sizeof(k), &src, 0), -EINVAL);

	/* out: min(size) bytes, the caller's tail beyond ours zeroed */
	memset(big, 0xa5, sizeof(big));
	npu__struct_out(big, 8, &src, sizeof(src));
	assert_int_equal(big[8], 0xa5);
	npu__struct_out(big, sizeof(big), &src, sizeof(src));
	assert_int_equal(big[sizeof(big) - 1], 0);
	assert_memory_equal(big, &src, sizeof(src));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_device_args),
		cmocka_unit_test(test_query_limits),
		cmocka_unit_test(test_context_args),
		cmocka_unit_test(test_buffer_args),
		cmocka_unit_test(test_submit_args),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_job_errors),
		cmocka_unit_test(test_struct_rules),
	};

	return cmocka_run_group_tests_name("libnpu-api", tests, NULL, NULL);
}
