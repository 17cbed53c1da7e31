// SPDX-License-Identifier: MIT
/*
 * Every libnpu API function against the real driver and device, with
 * its documented errors: discovery, open by index and PCI address,
 * contexts, buffers (alloc, map, export/import), every command of the
 * hardware interface checked by reading memory back, queues and
 * priorities, fences (wait, wait-many, sync_file out and in), and job
 * status for MMU faults, read-only violations, command errors and bans.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu/npu.h"
#include "tap.h"
#include "vnpu/vnpu_hw_ops.h"

#define SEC 1000000000ll

static struct npu_device *dev;
static struct npu_device_info info;

static struct npu_context *new_ctx(void)
{
	struct npu_context *ctx;
	int ret = npu_context_create(dev, &ctx);

	if (ret)
		TAP_BAIL("npu_context_create: %s", npu_strerror(ret));
	return ctx;
}

static struct npu_buffer *new_buf(struct npu_context *ctx, uint64_t size,
				  uint32_t flags, void **map)
{
	struct npu_buffer *buf;
	int ret = npu_buffer_alloc(ctx, size, flags, &buf);

	if (ret)
		TAP_BAIL("npu_buffer_alloc(%llu): %s", (unsigned long long)size,
			 npu_strerror(ret));
	if (map && (ret = npu_buffer_map(buf, map)))
		TAP_BAIL("npu_buffer_map: %s", npu_strerror(ret));
	return buf;
}

static struct npu_cmdbuf *new_cb(struct npu_context *ctx)
{
	struct npu_cmdbuf *cb;
	int ret = npu_cmdbuf_create(ctx, 4096, &cb);

	if (ret)
		TAP_BAIL("npu_cmdbuf_create: %s", npu_strerror(ret));
	return cb;
}

/* Submit, wait up to 30 s, read the status; returns the wait result. */
static int run(struct npu_queue *q, struct npu_cmdbuf *cb,
	       struct npu_buffer **bufs, size_t n, struct npu_job_status *st)
{
	struct npu_fence *f;
	int ret;

	ret = npu_submit(q, cb, bufs, n, NULL, 0, &f);
	if (ret)
		return ret;
	ret = npu_fence_wait(f, npu_deadline_ns(30 * SEC));
	if (!ret && st)
		ret = npu_fence_status(f, st);
	npu_fence_free(f);
	return ret;
}

/* The command limits the device reports: hardware interface 1.1's. */
static void test_limits(void)
{
	struct npu_device_limits l, small;

	TAP_RET(npu_device_get_limits(dev, &l, sizeof(l)), 0,
		"npu_device_get_limits");
	tap_ok(l.reported == 1 && info.hw_version >= 0x10001,
	       "hw %u.%u reports its command limits", info.hw_version >> 16,
	       info.hw_version & 0xffff);
	tap_ok(l.tensor_elems == VNPU_LIMIT_TENSOR_ELEMS &&
	       l.tensor_bytes == VNPU_LIMIT_TENSOR_BYTES &&
	       l.cmd_bytes == VNPU_LIMIT_CMD_BYTES &&
	       l.cmd_macs == VNPU_LIMIT_CMD_MACS &&
	       l.reduction == VNPU_LIMIT_REDUCTION &&
	       l.kernel_dim == VNPU_LIMIT_KERNEL_DIM &&
	       l.channels == VNPU_LIMIT_CHANNELS,
	       "limits are vnpu_hw_ops.h's: elems %llu bytes %llu cmd %llu macs %llu red %llu kdim %llu ch %llu",
	       (unsigned long long)l.tensor_elems,
	       (unsigned long long)l.tensor_bytes,
	       (unsigned long long)l.cmd_bytes, (unsigned long long)l.cmd_macs,
	       (unsigned long long)l.reduction, (unsigned long long)l.kernel_dim,
	       (unsigned long long)l.channels);
	memset(&small, 0xa5, sizeof(small));
	TAP_RET(npu_device_get_limits(dev, &small, 16), 0,
		"get_limits, short size");
	tap_ok(small.reported == 1 && small.tensor_elems == l.tensor_elems &&
	       small.tensor_bytes == 0xa5a5a5a5a5a5a5a5ull,
	       "short get_limits copies a prefix only");
	TAP_RET(npu_device_get_limits(dev, &small, 0), -EINVAL,
		"get_limits, zero size");
	TAP_RET(npu_device_get_limits(NULL, &small, sizeof(small)), -EINVAL,
		"get_limits, no device");
}

static void test_discovery(void)
{
	struct npu_device_info first, small;
	struct npu_device_list *list;
	struct npu_device *d2;
	char shortaddr[32];
	size_t n = 0;
	int ret;

	ret = npu_device_list(&list);
	TAP_RET(ret, 0, "npu_device_list");
	if (!ret)
		n = npu_device_list_count(list);
	if (ret || !n)
		TAP_BAIL("no vnpu device (%zu)", n);
	TAP_RET(npu_device_list_get_info(list, 0, &first, sizeof(first)), 0,
		"npu_device_list_get_info(0)");
	TAP_RET(npu_device_list_get_info(list, n, &first, sizeof(first)), -ERANGE,
		"npu_device_list_get_info one past the end");
	memset(&small, 0xa5, sizeof(small));
	TAP_RET(npu_device_list_get_info(list, 0, &small, 8), 0,
		"npu_device_list_get_info, short size");
	tap_ok(small.index == 0 && small.minor == first.minor &&
	       small.node[0] == (char)0xa5, "a short list entry copies a prefix only");
	tap_ok(first.pci_vendor == 0x1234 && first.pci_device == 0x4e50,
	       "device 0 is 1234:4e50 (%04x:%04x)", first.pci_vendor,
	       first.pci_device);
	tap_ok(first.query_error == 0 && first.num_queues > 0 &&
	       (first.caps & NPU_CAP_MMU), "device 0 answered QUERY (%s)",
	       npu_strerror(first.query_error));
	tap_ok(!strcmp(first.driver, "vnpu"), "bound driver is vnpu");

	ret = npu_device_open(0, &dev);
	TAP_RET(ret, 0, "npu_device_open(0)");
	if (ret)
		TAP_BAIL("cannot open device 0");
	TAP_RET(npu_device_get_info(dev, &info, sizeof(info)), 0,
		"npu_device_get_info");
	tap_ok(!strcmp(info.pci_address, first.pci_address) &&
	       info.caps == first.caps, "info matches the listing");
	tap_ok(info.va_start < info.va_end && info.max_bo_size &&
	       info.max_cmd_size >= 4096 && info.va_bits == 48,
	       "device limits are sane");

	memset(&small, 0xa5, sizeof(small));
	TAP_RET(npu_device_get_info(dev, &small, 8), 0, "get_info, short size");
	tap_ok(small.index == 0 && small.minor == info.minor &&
	       small.node[0] == (char)0xa5, "short get_info copies a prefix only");
	TAP_RET(npu_device_get_info(dev, &small, 0), -EINVAL,
		"get_info, zero size");
	test_limits();

	ret = npu_device_open_pci(first.pci_address, &d2);
	TAP_RET(ret, 0, "npu_device_open_pci(%s)", first.pci_address);
	npu_device_close(d2);
	/* "0000:00:04.0" -> "00:04.0" */
	snprintf(shortaddr, sizeof(shortaddr), "%.26s", first.pci_address + 5);
	ret = npu_device_open_pci(shortaddr, &d2);
	TAP_RET(ret, 0, "npu_device_open_pci(%s) without domain", shortaddr);
	npu_device_close(d2);
	TAP_RET(npu_device_open_pci("0000:1f:1f.7", &d2), -ENODEV,
		"open_pci of an absent device");
	TAP_RET(npu_device_open_pci("zz", &d2), -EINVAL,
		"open_pci of a malformed address");
	TAP_RET(npu_device_open((uint32_t)n, &d2), -ENODEV,
		"open of index %zu (one past the end)", n);
	npu_device_list_free(list);
}

static void test_buffers(void)
{
	struct npu_context *ctx = new_ctx(), *ctx2 = new_ctx();
	struct npu_buffer *b, *b2;
	void *p, *p2;
	int ret;

	tap_ok(npu_context_fd(ctx) >= 0 && npu_context_fd(ctx2) >= 0 &&
	       npu_context_fd(ctx) != npu_context_fd(ctx2),
	       "contexts have their own fds");

	TAP_RET(npu_buffer_alloc(ctx, 0, 0, &b), -EINVAL, "alloc of 0 bytes");
	TAP_RET(npu_buffer_alloc(ctx, 4096, 0x80, &b), -EINVAL,
		"alloc with unknown flag");
	TAP_RET(npu_buffer_alloc(ctx, info.max_bo_size + 1, 0, &b), -E2BIG,
		"alloc above max_bo_size");

	ret = npu_buffer_alloc(ctx, 5000, 0, &b);
	TAP_RET(ret, 0, "alloc 5000 bytes");
	if (ret)
		return;
	tap_ok(npu_buffer_size(b) == 8192, "size rounded to pages (%llu)",
	       (unsigned long long)npu_buffer_size(b));
	tap_ok(npu_buffer_va(b) >= info.va_start &&
	       npu_buffer_va(b) + 8192 <= info.va_end &&
	       !(npu_buffer_va(b) & 4095), "va 0x%llx inside the device range",
	       (unsigned long long)npu_buffer_va(b));
	tap_ok(npu_buffer_handle(b) != 0, "buffer has a GEM handle");

	TAP_RET(npu_buffer_map(b, &p), 0, "map");
	TAP_RET(npu_buffer_map(b, &p2), 0, "map again");
	tap_ok(p == p2, "second map returns the same mapping");
	memset(p, 0x5a, 8192);
	tap_ok(((uint8_t *)p)[8191] == 0x5a, "mapping is writable end to end");
	TAP_RET(npu_buffer_wait_idle(b, npu_deadline_ns(SEC)), 0,
		"wait_idle on an idle buffer");

	/* Same VA numbers in two contexts are two address spaces. */
	b2 = new_buf(ctx2, 4096, 0, NULL);
	tap_ok(npu_buffer_va(b2) >= info.va_start, "second context allocates");
	npu_buffer_free(b2);

	/* Objects outlive the destroy call of what they came from. */
	npu_context_destroy(ctx);
	memset(p, 0x11, 16);
	tap_ok(((uint8_t *)p)[15] == 0x11,
	       "buffer stays usable after its context handle is destroyed");
	npu_buffer_free(b);
	npu_context_destroy(ctx2);
}

static void test_commands(void)
{
	struct npu_context *ctx = new_ctx();
	struct npu_buffer *src, *dst, *misc, *bufs[3];
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	struct npu_cmdbuf *cb = new_cb(ctx);
	struct npu_queue *q;
	uint8_t *s, *d;
	uint64_t *m;
	size_t i;
	int ret, bad = 0;

	src = new_buf(ctx, 65536, 0, (void **)&s);
	dst = new_buf(ctx, 65536, 0, (void **)&d);
	misc = new_buf(ctx, 4096, 0, (void **)&m);
	bufs[0] = src;
	bufs[1] = dst;
	bufs[2] = misc;
	for (i = 0; i < 65536; i++)
		s[i] = (uint8_t)(i * 7 + 3);
	memset(d, 0, 65536);
	memset(m, 0, 4096);

	ret = npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	TAP_RET(ret, 0, "queue_create");
	if (ret)
		TAP_BAIL("no queue");

	/* COPY 60000 bytes, then FILL a tail, WRITE_VALUE, 2 TIMESTAMPs. */
	npu_cmdbuf_timestamp(cb, npu_buffer_va(misc) + 16);
	npu_cmdbuf_nop(cb, 32);
	npu_cmdbuf_copy(cb, npu_buffer_va(dst), npu_buffer_va(src), 60000);
	npu_cmdbuf_barrier(cb);
	npu_cmdbuf_fill(cb, npu_buffer_va(dst) + 60000, 5536, 0xcafef00d);
	npu_cmdbuf_write_value(cb, npu_buffer_va(misc), 0x1122334455667788ull);
	npu_cmdbuf_timestamp(cb, npu_buffer_va(misc) + 24);
	ret = run(q, cb, bufs, 3, &st);
	TAP_RET(ret, 0, "job with every command completes");
	tap_ok(!ret && st.state == NPU_JOB_OK, "job state ok (%s)",
	       npu_job_state_name(st.state));
	tap_ok(!memcmp(d, s, 60000), "COPY moved 60000 bytes");
	for (i = 60000; i < 65536; i += 4) {
		uint32_t v;

		memcpy(&v, d + i, 4);
		bad += v != 0xcafef00d;
	}
	tap_ok(!bad, "FILL wrote the pattern (%d bad words)", bad);
	tap_ok(m[0] == 0x1122334455667788ull, "WRITE_VALUE stored the value");
	tap_ok(m[2] && m[3] >= m[2], "TIMESTAMPs ordered (%llu, %llu)",
	       (unsigned long long)m[2], (unsigned long long)m[3]);
	tap_ok(st.duration_ns > 0 || st.cycles > 0,
	       "status reports device time (%llu ns, %llu cycles)",
	       (unsigned long long)st.duration_ns,
	       (unsigned long long)st.cycles);

	/* A job only listing the command buffer itself. */
	TAP_RET(npu_cmdbuf_reset(cb), 0, "reset after completion");
	tap_ok(npu_cmdbuf_size(cb) == 0, "reset empties the buffer");
	npu_cmdbuf_nop(cb, 8);
	ret = run(q, cb, NULL, 0, &st);
	tap_ok(!ret && st.state == NPU_JOB_OK, "single NOP job");

	/* Duplicate buffers in the list are fine. */
	npu_cmdbuf_reset(cb);
	npu_cmdbuf_write_value(cb, npu_buffer_va(misc) + 8, 42);
	bufs[0] = misc;
	bufs[1] = misc;
	ret = run(q, cb, bufs, 2, &st);
	tap_ok(!ret && st.state == NPU_JOB_OK && m[1] == 42,
	       "buffer listed twice");

	npu_queue_destroy(q);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(src);
	npu_buffer_free(dst);
	npu_buffer_free(misc);
	npu_context_destroy(ctx);
}

static void test_queues(void)
{
	struct npu_context *ctx = new_ctx();
	struct npu_buffer *out;
	struct npu_cmdbuf *cb = new_cb(ctx);
	struct npu_queue *q;
	uint64_t *m;
	uint32_t hw;
	int prio, ret, ok = 1;

	out = new_buf(ctx, 4096, 0, (void **)&m);
	TAP_RET(npu_queue_create(ctx, info.num_queues, NPU_PRIORITY_NORMAL, &q),
		-EINVAL, "queue index num_queues rejected");
	TAP_RET(npu_queue_create(ctx, 0, (enum npu_priority)3, &q), -EINVAL,
		"unknown priority rejected");
	TAP_RET(npu_queue_create(ctx, 0, NPU_PRIORITY_LOW, NULL), -EINVAL,
		"NULL out pointer rejected");

	for (hw = 0; hw < info.num_queues; hw++) {
		for (prio = NPU_PRIORITY_LOW; prio <= NPU_PRIORITY_HIGH; prio++) {
			struct npu_job_status st = NPU_JOB_STATUS_INIT;
			uint64_t val = 0x100u * hw + (unsigned int)prio;

			ret = npu_queue_create(ctx, hw, (enum npu_priority)prio, &q);
			if (ret) {
				ok = 0;
				printf("# queue %u prio %d: %s\n", hw, prio,
				       npu_strerror(ret));
				continue;
			}
			npu_cmdbuf_reset(cb);
			npu_cmdbuf_write_value(cb, npu_buffer_va(out), val);
			ret = run(q, cb, &out, 1, &st);
			if (ret || st.state != NPU_JOB_OK || m[0] != val) {
				ok = 0;
				printf("# queue %u prio %d: %s state %s\n", hw,
				       prio, npu_strerror(ret),
				       npu_job_state_name(st.state));
			}
			npu_queue_destroy(q);
		}
	}
	tap_ok(ok, "a job runs on each of %u queues at each priority",
	       info.num_queues);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(out);
	npu_context_destroy(ctx);
}

static void test_submit_errors(void)
{
	struct npu_context *ctx = new_ctx(), *other = new_ctx();
	struct npu_cmdbuf *cb = new_cb(ctx), *cb_other = new_cb(other), *big;
	struct npu_buffer *b_other = new_buf(other, 4096, 0, NULL);
	struct npu_buffer **many;
	struct npu_fence *f = NULL, *f_other;
	struct npu_queue *q, *q_other;

	npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	npu_queue_create(other, 0, NPU_PRIORITY_NORMAL, &q_other);

	TAP_RET(npu_submit(q, cb, NULL, 0, NULL, 0, &f), -EINVAL,
		"submit of an empty command buffer");
	npu_cmdbuf_nop(cb, 8);
	TAP_RET(npu_submit(q, NULL, NULL, 0, NULL, 0, &f), -EINVAL,
		"submit without command buffer");
	TAP_RET(npu_submit(q, cb, NULL, 1, NULL, 0, &f), -EINVAL,
		"buffer count without array");
	{
		struct npu_buffer *nul = NULL;

		TAP_RET(npu_submit(q, cb, &nul, 1, NULL, 0, &f), -EINVAL,
			"NULL buffer in the list");
	}
	npu_cmdbuf_nop(cb_other, 8);
	TAP_RET(npu_submit(q, cb_other, NULL, 0, NULL, 0, &f), -EXDEV,
		"command buffer of another context");
	TAP_RET(npu_submit(q, cb, &b_other, 1, NULL, 0, &f), -EXDEV,
		"buffer of another context");
	TAP_RET(npu_submit(q_other, cb_other, NULL, 0, NULL, 0, &f_other), 0,
		"submit in the other context");
	TAP_RET(npu_submit(q, cb, NULL, 0, &f_other, 1, &f), -EXDEV,
		"wait fence of another context");
	many = calloc(NPU_SUBMIT_MAX_ENTRIES, sizeof(*many));
	TAP_RET(npu_submit(q, cb, many, NPU_SUBMIT_MAX_ENTRIES, NULL, 0, &f),
		-E2BIG, "too many buffers");
	free(many);
	tap_ok(f == NULL, "failed submits leave *fence alone");

	TAP_RET(npu_cmdbuf_create(ctx, (size_t)info.max_cmd_size + 8, &big),
		-E2BIG, "command buffer above max_cmd_size");
	TAP_RET(npu_submit(q, cb, NULL, 0, NULL, 0, NULL), 0,
		"submit without asking for a fence");
	TAP_RET(npu_buffer_wait_idle(b_other, npu_deadline_ns(10 * SEC)), 0,
		"wait_idle on a buffer of another context's queue");

	npu_fence_wait(f_other, NPU_TIMEOUT_INFINITE);
	npu_fence_free(f_other);
	npu_queue_destroy(q);
	npu_queue_destroy(q_other);
	npu_cmdbuf_destroy(cb);
	npu_cmdbuf_destroy(cb_other);
	npu_buffer_free(b_other);
	npu_context_destroy(ctx);
	npu_context_destroy(other);
}

static void test_fences(void)
{
	struct npu_context *ctx = new_ctx(), *ctx2 = new_ctx();
	struct npu_cmdbuf *cbs[8], *cb2 = new_cb(ctx2);
	struct npu_fence *f[8], *in, *g;
	struct npu_buffer *out = new_buf(ctx, 4096, 0, NULL);
	struct npu_buffer *out2;
	struct npu_queue *q, *q2;
	struct pollfd pfd;
	uint64_t *m2;
	size_t first = 99, i;
	int fd, ret, ok = 1;

	out2 = new_buf(ctx2, 4096, 0, (void **)&m2);
	npu_queue_create(ctx, 1 % info.num_queues, NPU_PRIORITY_HIGH, &q);
	npu_queue_create(ctx2, 0, NPU_PRIORITY_NORMAL, &q2);
	for (i = 0; i < 8; i++) {
		cbs[i] = new_cb(ctx);
		npu_cmdbuf_write_value(cbs[i], npu_buffer_va(out) + 8 * i, i);
		ret = npu_submit(q, cbs[i], &out, 1, i ? &f[i - 1] : NULL,
				 i ? 1 : 0, &f[i]);
		if (ret) {
			ok = 0;
			printf("# submit %zu: %s\n", i, npu_strerror(ret));
			f[i] = NULL;
		}
	}
	tap_ok(ok, "8 chained submissions");
	if (!ok)
		TAP_BAIL("cannot submit");

	ret = npu_fence_wait_many(f, 8, false, npu_deadline_ns(30 * SEC), &first);
	TAP_RET(ret, 0, "wait_many(any)");
	tap_ok(first < 8, "wait_many(any) reports a signalled fence (%zu)", first);
	TAP_RET(npu_fence_wait_many(f, 8, true, npu_deadline_ns(30 * SEC), NULL),
		0, "wait_many(all)");
	for (i = 0; i < 8; i++)
		ok &= npu_fence_is_signaled(f[i]) == 1 && !npu_fence_error(f[i]);
	tap_ok(ok, "all 8 fences signalled with ok status");
	TAP_RET(npu_fence_wait(f[7], 0), 0, "wait with a past deadline on a "
		"signalled fence");

	/* sync_file out of ctx, in to ctx2 as a dependency. */
	ret = npu_fence_export_sync_file(f[7], &fd);
	TAP_RET(ret, 0, "export sync_file");
	if (!ret) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		tap_ok(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN),
		       "exported sync_file polls as signalled");
		ret = npu_fence_import_sync_file(ctx2, fd, &in);
		TAP_RET(ret, 0, "import sync_file");
		close(fd);
		if (!ret) {
			struct npu_job_status st = NPU_JOB_STATUS_INIT;

			TAP_RET(npu_fence_status(in, &st), -ENODATA,
				"imported fence has no job status");
			TAP_RET(npu_fence_wait(in, npu_deadline_ns(SEC)), 0,
				"wait on the imported fence");
			npu_cmdbuf_write_value(cb2, npu_buffer_va(out2), 77);
			ret = npu_submit(q2, cb2, &out2, 1, &in, 1, &g);
			TAP_RET(ret, 0, "submit waiting on an imported fence");
			if (!ret) {
				npu_fence_wait(g, npu_deadline_ns(30 * SEC));
				tap_ok(m2[0] == 77 && !npu_fence_error(g),
				       "dependent job ran");
				/* binary fences export too */
				ret = npu_fence_export_sync_file(g, &fd);
				TAP_RET(ret, 0, "export of a second-queue fence");
				if (!ret)
					close(fd);
				npu_fence_free(g);
			}
			npu_fence_free(in);
		}
	}
	TAP_RET(npu_fence_import_sync_file(ctx2, 0, &in), -EINVAL,
		"import of a non-sync_file fd");
	TAP_RET(npu_fence_wait_many(f, 2, true, 0, NULL) == 0 ? 0 : -1, 0,
		"wait_many on signalled fences with a past deadline");
	{
		struct npu_fence *mixed[2] = { f[0], NULL };
		struct npu_fence *g2;

		npu_cmdbuf_reset(cb2);
		npu_cmdbuf_nop(cb2, 8);
		npu_submit(q2, cb2, NULL, 0, NULL, 0, &g2);
		mixed[1] = g2;
		TAP_RET(npu_fence_wait_many(mixed, 2, true, 0, NULL), -EXDEV,
			"wait_many across contexts");
		npu_fence_wait(g2, NPU_TIMEOUT_INFINITE);
		npu_fence_free(g2);
	}

	for (i = 0; i < 8; i++) {
		npu_fence_free(f[i]);
		npu_cmdbuf_destroy(cbs[i]);
	}
	/* Queue destroyed before its last fence is freed: fence still works. */
	npu_cmdbuf_reset(cb2);
	npu_cmdbuf_nop(cb2, 8);
	ret = npu_submit(q2, cb2, NULL, 0, NULL, 0, &g);
	npu_queue_destroy(q2);
	if (!ret) {
		TAP_RET(npu_fence_wait(g, npu_deadline_ns(30 * SEC)), 0,
			"fence outlives its queue");
		npu_fence_free(g);
	}
	npu_queue_destroy(q);
	npu_cmdbuf_destroy(cb2);
	npu_buffer_free(out);
	npu_buffer_free(out2);
	npu_context_destroy(ctx);
	npu_context_destroy(ctx2);
}

static void test_dmabuf_local(void)
{
	struct npu_context *a = new_ctx(), *b = new_ctx();
	struct npu_buffer *src, *imp, *imp2, *dst, *bufs[2];
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	struct npu_cmdbuf *cb = new_cb(b);
	struct npu_queue *q;
	uint8_t *s, *d, *ip;
	int fd, ret, i;

	src = new_buf(a, 16384, 0, (void **)&s);
	dst = new_buf(b, 16384, 0, (void **)&d);
	for (i = 0; i < 16384; i++)
		s[i] = (uint8_t)(i ^ 0x3c);
	ret = npu_buffer_export(src, &fd);
	TAP_RET(ret, 0, "dma-buf export");
	if (ret)
		return;
	ret = npu_buffer_import(b, fd, &imp);
	TAP_RET(ret, 0, "dma-buf import into another context");
	if (ret)
		return;
	tap_ok(npu_buffer_size(imp) == 16384 && npu_buffer_va(imp),
	       "import has size and device va");
	ret = npu_buffer_import(b, fd, &imp2);
	TAP_RET(ret, 0, "second import of the same dma-buf");
	if (!ret) {
		tap_ok(npu_buffer_handle(imp2) == npu_buffer_handle(imp),
		       "both imports share the GEM handle");
		npu_buffer_free(imp2);
	}
	/* The first import must survive freeing the second. */
	ret = npu_buffer_map(imp, (void **)&ip);
	TAP_RET(ret, 0, "map the import");
	if (!ret)
		tap_ok(!memcmp(ip, s, 16384), "import maps the exporter's pages");

	npu_queue_create(b, 0, NPU_PRIORITY_NORMAL, &q);
	npu_cmdbuf_copy(cb, npu_buffer_va(dst), npu_buffer_va(imp), 16384);
	bufs[0] = imp;
	bufs[1] = dst;
	ret = run(q, cb, bufs, 2, &st);
	tap_ok(!ret && st.state == NPU_JOB_OK && !memcmp(d, s, 16384),
	       "device copy out of an imported buffer");

	TAP_RET(npu_buffer_import(b, -1, &imp2), -EINVAL, "import fd -1");
	TAP_RET(npu_buffer_import(b, 0, &imp2) < 0 ? 0 : 1, 0,
		"import of a non-dma-buf fd fails");
	close(fd);
	npu_queue_destroy(q);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(imp);
	npu_buffer_free(dst);
	npu_buffer_free(src);
	npu_context_destroy(a);
	npu_context_destroy(b);
}

/* Faults are contained per context; three MMU faults ban it. */
static void test_faults(void)
{
	struct npu_context *ctx = new_ctx(), *good = new_ctx();
	struct npu_buffer *gone, *ro, *gbuf, *wbuf;
	struct npu_job_status st = NPU_JOB_STATUS_INIT;
	struct npu_cmdbuf *cb = new_cb(ctx), *gcb = new_cb(good);
	struct npu_queue *q, *gq;
	struct npu_fence *f;
	uint64_t va_gone, *gm;
	/* A whole compute command's size, so only its opcode is at fault. */
	struct vnpu_cmd_compute raw = {
		.hdr = { .opcode = VNPU_CMD_COMPUTE_LAST, .size = sizeof(raw) },
	};
	int ret, i;

	npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q);
	npu_queue_create(good, 0, NPU_PRIORITY_NORMAL, &gq);
	gbuf = new_buf(good, 4096, 0, (void **)&gm);

	/* A freed buffer's VA is unmapped. */
	gone = new_buf(ctx, 4096, 0, NULL);
	va_gone = npu_buffer_va(gone);
	npu_buffer_free(gone);
	npu_cmdbuf_write_value(cb, va_gone + 8, 1);
	ret = run(q, cb, NULL, 0, &st);
	tap_ok(!ret && st.state == NPU_JOB_MMU_FAULT,
	       "write to an unmapped VA faults (%s, %s)", npu_strerror(ret),
	       npu_job_state_name(st.state));
	tap_ok(st.fault_va == va_gone + 8 && st.fault_write,
	       "fault va 0x%llx (want 0x%llx), write %d",
	       (unsigned long long)st.fault_va,
	       (unsigned long long)(va_gone + 8), st.fault_write);

	ro = new_buf(ctx, 4096, NPU_BUFFER_DEVICE_READONLY, NULL);
	npu_cmdbuf_reset(cb);
	npu_cmdbuf_fill(cb, npu_buffer_va(ro), 64, 0);
	ret = npu_submit(q, cb, &ro, 1, NULL, 0, &f);
	TAP_RET(ret, 0, "submit a write to a read-only buffer");
	if (!ret) {
		npu_fence_wait(f, npu_deadline_ns(30 * SEC));
		TAP_RET(npu_fence_error(f), NPU_ERR_JOB_MMU_FAULT,
			"device write to a read-only buffer faults");
		npu_fence_free(f);
	}

	/* An opcode in the compute range no op engine implements. */
	npu_cmdbuf_reset(cb);
	npu_cmdbuf_nop(cb, 16);
	npu_cmdbuf_raw(cb, &raw, sizeof(raw));
	ret = run(q, cb, NULL, 0, &st);
	tap_ok(!ret && st.state == NPU_JOB_CMD_ERROR &&
	       st.fault_va == 16 + VNPU_CMD_OFF(hdr.opcode),
	       "unknown compute opcode is a command error at its opcode, offset 16 "
	       "(%s, offset %llu)", npu_job_state_name(st.state),
	       (unsigned long long)st.fault_va);

	/*
	 * A read fault: the third MMU fault of this context.  Freed VAs get
	 * reused, so take a fresh one after the last allocation.
	 */
	wbuf = new_buf(ctx, 4096, 0, NULL);
	gone = new_buf(ctx, 4096, 0, NULL);
	va_gone = npu_buffer_va(gone);
	npu_buffer_free(gone);
	npu_cmdbuf_reset(cb);
	npu_cmdbuf_copy(cb, npu_buffer_va(wbuf), va_gone, 64);
	ret = run(q, cb, &wbuf, 1, &st);
	tap_ok(!ret && st.state == NPU_JOB_MMU_FAULT &&
	       st.fault_va == va_gone && !st.fault_write,
	       "read of an unmapped VA faults as a read (%s, 0x%llx, write %d)",
	       npu_job_state_name(st.state), (unsigned long long)st.fault_va,
	       st.fault_write);

	/* The ban is set when the fault completes; allow a job in flight. */
	npu_cmdbuf_reset(cb);
	npu_cmdbuf_nop(cb, 8);
	ret = npu_submit(q, cb, NULL, 0, NULL, 0, &f);
	for (i = 0; i < 3 && ret == 0; i++) {
		npu_fence_wait(f, npu_deadline_ns(30 * SEC));
		npu_fence_free(f);
		ret = npu_submit(q, cb, NULL, 0, NULL, 0, &f);
	}
	TAP_RET(ret, -ECANCELED, "context banned after three MMU faults");
	npu_buffer_free(wbuf);

	npu_cmdbuf_write_value(gcb, npu_buffer_va(gbuf), 9);
	ret = run(gq, gcb, &gbuf, 1, &st);
	tap_ok(!ret && st.state == NPU_JOB_OK && gm[0] == 9,
	       "another context keeps working");

	npu_queue_destroy(q);
	npu_queue_destroy(gq);
	npu_cmdbuf_destroy(cb);
	npu_cmdbuf_destroy(gcb);
	npu_buffer_free(ro);
	npu_buffer_free(gbuf);
	npu_context_destroy(ctx);
	npu_context_destroy(good);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_discovery();
	test_buffers();
	test_commands();
	test_queues();
	test_submit_errors();
	test_fences();
	test_dmabuf_local();
	test_faults();
	npu_device_close(dev);
	return tap_done();
}
