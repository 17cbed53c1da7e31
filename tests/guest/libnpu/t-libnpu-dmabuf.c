// SPDX-License-Identifier: MIT
/*
 * Two processes share device memory: the producer fills a buffer with
 * the device and, without waiting, sends its dma-buf and the job's fence
 * (a sync_file) over a unix socket with SCM_RIGHTS.  The consumer imports
 * both, runs a job that waits on the fence and copies the shared buffer
 * into its own, verifies every byte, writes a reply into the shared
 * buffer with the device, and the producer verifies that reply.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npu/npu.h"
#include "tap.h"

#define SIZE		(1u << 20)
#define PAGE		4096u
#define SEC		1000000000ll
#define REPLY_OFF	(SIZE - 8)
#define REPLY		0x600dda7a600dda7aull

static uint32_t pattern(uint32_t page)
{
	return 0x5eed0000u ^ (page * 2654435761u);
}

static int send_fds(int sock, int *fds, int n)
{
	char byte = 'F', cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fds(int sock, int *fds, int n)
{
	char byte, cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(n * sizeof(int)))
		return -EPROTO;
	memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
	return 0;
}

/* Child.  Exit status: 0 ok, else the step that failed. */
static int producer(int sock)
{
	struct npu_context *ctx;
	struct npu_device *dev;
	struct npu_buffer *buf;
	struct npu_cmdbuf *cb;
	struct npu_queue *q;
	struct npu_fence *f;
	uint64_t *map;
	int fds[2], ret;
	uint32_t p;
	char ack;

	if (npu_device_open(0, &dev) || npu_context_create(dev, &ctx) ||
	    npu_queue_create(ctx, 0, NPU_PRIORITY_NORMAL, &q))
		return 2;
	if (npu_buffer_alloc(ctx, SIZE, 0, &buf) ||
	    npu_buffer_map(buf, (void **)&map))
		return 3;
	memset(map, 0, SIZE);
	if (npu_cmdbuf_create(ctx, (SIZE / PAGE) * 32 + 64, &cb))
		return 4;
	for (p = 0; p < SIZE / PAGE; p++)
		if (npu_cmdbuf_fill(cb, npu_buffer_va(buf) + p * PAGE, PAGE,
				    pattern(p)))
			return 5;
	ret = npu_submit(q, cb, &buf, 1, NULL, 0, &f);
	if (ret) {
		printf("# producer submit: %s\n", npu_strerror(ret));
		return 6;
	}
	if (npu_buffer_export(buf, &fds[0]) ||
	    npu_fence_export_sync_file(f, &fds[1]))
		return 7;
	if (send_fds(sock, fds, 2))
		return 8;
	close(fds[0]);
	close(fds[1]);

	if (read(sock, &ack, 1) != 1 || ack != 'D')
		return 9;
	if (map[REPLY_OFF / 8] != REPLY) {
		printf("# producer sees 0x%llx at the reply offset\n",
		       (unsigned long long)map[REPLY_OFF / 8]);
		return 10;
	}
	npu_fence_free(f);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(buf);
	npu_queue_destroy(q);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return 0;
}

int main(void)
{
	struct npu_buffer *shared, *local, *bufs[2];
	struct npu_context *ctx;
	struct npu_device *dev;
	struct npu_fence *in, *f;
	struct npu_cmdbuf *cb;
	struct npu_queue *q;
	int sv[2], fds[2], ret, status, bad = 0;
	uint32_t *lm;
	uint32_t i;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		TAP_BAIL("socketpair");
	pid = fork();
	if (pid < 0)
		TAP_BAIL("fork");
	if (!pid) {
		close(sv[0]);
		_exit(producer(sv[1]));
	}
	close(sv[1]);

	ret = npu_device_open(0, &dev);
	if (!ret)
		ret = npu_context_create(dev, &ctx);
	if (!ret)
		ret = npu_queue_create(ctx, 1, NPU_PRIORITY_HIGH, &q);
	if (ret)
		TAP_BAIL("consumer setup: %s", npu_strerror(ret));

	ret = recv_fds(sv[0], fds, 2);
	TAP_RET(ret, 0, "received dma-buf and sync_file over SCM_RIGHTS");
	if (ret)
		goto out;
	ret = npu_buffer_import(ctx, fds[0], &shared);
	TAP_RET(ret, 0, "import the producer's dma-buf");
	if (ret)
		goto out;
	tap_ok(npu_buffer_size(shared) == SIZE, "imported size %llu",
	       (unsigned long long)npu_buffer_size(shared));
	ret = npu_fence_import_sync_file(ctx, fds[1], &in);
	TAP_RET(ret, 0, "import the producer's fence");
	if (ret)
		goto out;
	close(fds[0]);
	close(fds[1]);

	if (npu_buffer_alloc(ctx, SIZE, 0, &local) ||
	    npu_buffer_map(local, (void **)&lm) ||
	    npu_cmdbuf_create(ctx, 256, &cb))
		TAP_BAIL("consumer buffers");
	memset(lm, 0, SIZE);
	/* Copy everything but the reply word, then write the reply. */
	npu_cmdbuf_copy(cb, npu_buffer_va(local), npu_buffer_va(shared),
			REPLY_OFF);
	npu_cmdbuf_barrier(cb);
	npu_cmdbuf_write_value(cb, npu_buffer_va(shared) + REPLY_OFF, REPLY);
	bufs[0] = shared;
	bufs[1] = local;
	ret = npu_submit(q, cb, bufs, 2, &in, 1, &f);
	TAP_RET(ret, 0, "submit a job waiting on the producer's fence");
	if (ret)
		goto out;
	ret = npu_fence_wait(f, npu_deadline_ns(60 * SEC));
	TAP_RET(ret, 0, "consumer job finished");
	TAP_RET(npu_fence_error(f), 0, "consumer job ok");
	for (i = 0; i < REPLY_OFF / 4; i++)
		bad += lm[i] != pattern(i * 4 / PAGE);
	tap_ok(!bad, "consumer sees the producer's data (%d bad words)", bad);
	npu_fence_free(f);
	npu_fence_free(in);
	npu_cmdbuf_destroy(cb);
	npu_buffer_free(local);
	npu_buffer_free(shared);
out:
	if (write(sv[0], "D", 1) != 1)
		printf("# cannot signal the producer\n");
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "producer sees the consumer's device write (exit %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	npu_queue_destroy(q);
	npu_context_destroy(ctx);
	npu_device_close(dev);
	return tap_done();
}
