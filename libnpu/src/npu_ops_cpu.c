// SPDX-License-Identifier: MIT
/*
 * The CPU path of the op API runs the device's own compute engine
 * (ops/vnpu_engine*.c, compiled into libnpu from its one source by
 * libnpu/Makefile), not the reference: the engine computes what the
 * reference computes (bit for bit on integer paths, within ops.rst's
 * tolerances on float ones) with blocked SIMD kernels, several times
 * faster on the ops models spend their time in.  An op beyond the
 * device's command limits, which vnpu_compute_exec() rejects, runs as the
 * device runs it: as the tiles npu_tile.c splits it into, one engine
 * command each.  The reference stays for what the engine does not take:
 * the CPU-only ops, and ops no split brings within the limits (a GEMM
 * whose K exceeds REDUCTION, ...).
 *
 * vnpu_compute_exec() reaches operands through memory callbacks keyed by
 * device address.  Each slot gets an address range of its own here, and
 * the callbacks map it straight onto the operand's host memory, so
 * nothing is copied: the same map() path the device takes for guest RAM.
 *
 * The host's memory and time are bounded the way the device's are: the
 * command checker counts the work (ops.rst "Work units") and the bytes,
 * which struct npu_cpu_limits caps before anything runs, and the engine
 * and the reference poll an abort callback while they run, here wired to
 * the caller's deadline and cancel callback.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_ops_cpu.h"
#include "vnpu_exec.h"
#include "vnpu_hw.h"

/*
 * Slot i's data lives at (i + 1) << 40 and its per-channel arrays half a
 * range above: far apart enough for any span vnpu_op_check() accepts
 * (< 2^32 bytes), and all within the device's 48-bit address space.
 */
#define SLOT_VA(i)	((uint64_t)((i) + 1) << 40)
#define SLOT_QVA(i)	(SLOT_VA(i) + (1ull << 39))

struct host_mem {
	const struct vnpu_op_bind *bind;
	struct vnpu_op_info info;
	const struct npu_cpu_limits *lim;
	int stop;	/* -ETIME or -ECANCELED once the run must stop */
};

/* Host address of [@va, @va + @len) in slot data or arrays, else NULL. */
static uint8_t *host_at(const struct host_mem *m, uint64_t va, uint64_t len)
{
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		uint64_t off;

		if (!((m->info.present >> i) & 1))
			continue;
		if (va >= SLOT_VA(i) && va < SLOT_QVA(i)) {
			off = va - SLOT_VA(i);
			if (off > m->info.span[i] || len > m->info.span[i] - off)
				return NULL;
			return (uint8_t *)m->bind->data[i] + off;
		}
		if (va >= SLOT_QVA(i) && va < SLOT_VA(i + 1)) {
			off = va - SLOT_QVA(i);
			if (!m->bind->qparams[i] || off > m->info.qbytes[i] ||
			    len > m->info.qbytes[i] - off)
				return NULL;
			/* Arrays are only ever read (mem_read()). */
			return (uint8_t *)m->bind->qparams[i] + off;
		}
	}
	return NULL;
}

static int mem_read(void *opaque, uint64_t va, void *buf, uint64_t len)
{
	const uint8_t *p = host_at(opaque, va, len);

	if (!p)
		return -EFAULT;
	memmove(buf, p, len);
	return 0;
}

static int mem_write(void *opaque, uint64_t va, const void *buf, uint64_t len)
{
	uint8_t *p = host_at(opaque, va, len);

	if (!p)
		return -EFAULT;
	memmove(p, buf, len);
	return 0;
}

static void *mem_map(void *opaque, uint64_t va, uint64_t len, bool is_write)
{
	(void)is_write;
	return host_at(opaque, va, len);
}

static void mem_unmap(void *opaque, void *host, uint64_t len, bool is_write,
		      uint64_t access_len)
{
	(void)opaque, (void)host, (void)len, (void)is_write, (void)access_len;
}

/* The engine's and the reference's abort poll. */
static bool run_stopped(void *opaque)
{
	struct host_mem *m = opaque;

	if (m->stop)
		return true;
	if (m->lim->cancel && m->lim->cancel(m->lim->cancel_opaque))
		m->stop = -ECANCELED;
	else if (m->lim->deadline_ns != NPU_TIMEOUT_INFINITE &&
		 npu_time_ns() >= m->lim->deadline_ns)
		m->stop = -ETIME;
	return m->stop != 0;
}

static const struct vnpu_mem_ops host_mem_ops = {
	.read = mem_read,
	.write = mem_write,
	.map = mem_map,
	.unmap = mem_unmap,
	.aborted = run_stopped,
};

int npu__cpu_run_init(struct npu_cpu_run *run,
		      const struct npu_cpu_limits *limits, char *err,
		      size_t err_size)
{
	int ret;

	memset(run, 0, sizeof(*run));
	if (err && err_size)
		err[0] = '\0';
	if (limits) {
		ret = npu__struct_in(&run->lim, sizeof(run->lim), limits,
				     limits->size);
		if (ret)
			return ret;
		if (run->lim.flags)
			return -EINVAL;
	}
	run->lim.size = sizeof(run->lim);
	if (!run->lim.max_work)
		run->lim.max_work = NPU_CPU_DEFAULT_MAX_WORK;
	if (!run->lim.max_bytes)
		run->lim.max_bytes = NPU_CPU_DEFAULT_MAX_BYTES;
	if (!run->lim.deadline_ns)
		run->lim.deadline_ns = NPU_TIMEOUT_INFINITE;
	run->err = err;
	run->err_size = err_size;
	return 0;
}

const char *npu__cpu_op_name(unsigned int opcode)
{
	static const char *const names[] = {
		[VNPU_OP_GEMM - VNPU_OP_GEMM] = "GEMM",
		[VNPU_OP_CONV2D - VNPU_OP_GEMM] = "CONV2D",
		[VNPU_OP_POOL2D - VNPU_OP_GEMM] = "POOL2D",
		[VNPU_OP_ELTWISE - VNPU_OP_GEMM] = "ELTWISE",
		[VNPU_OP_ACTIVATION - VNPU_OP_GEMM] = "ACTIVATION",
		[VNPU_OP_SOFTMAX - VNPU_OP_GEMM] = "SOFTMAX",
		[VNPU_OP_LAYERNORM - VNPU_OP_GEMM] = "LAYERNORM",
		[VNPU_OP_QUANTIZE - VNPU_OP_GEMM] = "QUANTIZE",
		[VNPU_OP_DEQUANTIZE - VNPU_OP_GEMM] = "DEQUANTIZE",
		[VNPU_OP_REQUANTIZE - VNPU_OP_GEMM] = "REQUANTIZE",
		[VNPU_OP_COPY - VNPU_OP_GEMM] = "COPY",
		[VNPU_OP_RESIZE - VNPU_OP_GEMM] = "RESIZE",
		[VNPU_OP_CONV_TRANSPOSE - VNPU_OP_GEMM] = "CONV_TRANSPOSE",
		[VNPU_OP_REDUCE - VNPU_OP_GEMM] = "REDUCE",
		[VNPU_OP_LUT - VNPU_OP_GEMM] = "LUT",
	};

	if (opcode == VNPU_REF_OP_INT_ELTWISE)
		return "ELTWISE";
	if (opcode == VNPU_REF_OP_POOL3D)
		return "POOL3D";
	if (opcode >= VNPU_OP_GEMM &&
	    opcode - VNPU_OP_GEMM < sizeof(names) / sizeof(names[0]))
		return names[opcode - VNPU_OP_GEMM];
	return "unknown op";
}

__attribute__((format(printf, 3, 4)))
static int fail(const struct npu_cpu_run *run, int ret, const char *fmt, ...)
{
	va_list ap;

	if (run->err && run->err_size) {
		va_start(ap, fmt);
		vsnprintf(run->err, run->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/*
 * Channels [@start, @start + @n) of a per-channel array pair of @total
 * channels (scales, then zero points), laid out as a command of @n
 * channels reads them: what npu_ops.c uploads for a device tile.
 */
static void slice_channels(uint8_t *dst, const uint8_t *src, uint32_t total,
			   uint32_t start, uint32_t n)
{
	memcpy(dst, src + 4ull * start, 4ull * n);
	memcpy(dst + 4ull * n, src + 4ull * (total + start), 4ull * n);
}

/*
 * One tile @t of @full through the engine, over @full's operands: the
 * tile's addresses are offsets into them, and its per-channel arrays a
 * slice of theirs (copied into @qbuf, room for every slot's arrays).
 */
static int exec_tile(const struct vnpu_cmd_compute *full,
		     const struct npu_tile *t, const struct vnpu_op_bind *bind,
		     struct host_mem *m, uint8_t *qbuf)
{
	/* No arena: the caller owns the memory (vnpu_run.h). */
	static const struct vnpu_engine_cfg cfg = { NULL, VNPU_I8_AUTO };
	const struct vnpu_op_info whole = m->info;
	struct vnpu_compute_result res;
	struct vnpu_cmd_compute c = t->c;
	struct vnpu_op_bind tb = *bind;
	uint64_t qoff = 0;
	int i, ret;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		const struct vnpu_tensor_desc *fd = &full->t[i];
		struct vnpu_tensor_desc *d = &c.t[i];
		uint32_t total, n;

		if (!((m->info.present >> i) & 1))
			continue;
		d->va = SLOT_VA(i) + (t->c.t[i].va - fd->va);
		if (!m->info.qbytes[i])
			continue;
		d->quant_va = SLOT_QVA(i);
		total = fd->dims[fd->quant_axis];
		n = d->dims[d->quant_axis];
		if (!t->qstart[i] && n == total)
			continue;
		slice_channels(qbuf + qoff, bind->qparams[i], total,
			       t->qstart[i], n);
		tb.qparams[i] = qbuf + qoff;
		m->info.qbytes[i] = 8ull * n;
		qoff += 8ull * n;
	}
	m->bind = &tb;
	ret = vnpu_compute_exec(&c, sizeof(c), &host_mem_ops, m, &cfg, &res);
	m->bind = bind;
	m->info = whole;
	return ret;
}

int npu__cpu_exec(const struct vnpu_cmd_compute *cmd,
		  const struct vnpu_op_bind *bind,
		  const struct npu_cpu_tiles *tiles,
		  const struct npu_cpu_run *run)
{
	struct vnpu_cmd_compute cc;
	struct host_mem m = { .bind = bind, .lim = &run->lim };
	struct vnpu_run_ctx rc = {
		.aborted = run_stopped,
		.opaque = &m,
		.i8_kernel = VNPU_I8_AUTO,
	};
	const char *name = npu__cpu_op_name(cmd->hdr.opcode);
	struct npu_cpu_trace scratch, *tr = run->trace ? run->trace : &scratch;
	struct npu_tile whole;
	const struct npu_tile *t = &whole;
	size_t n = 1, k;
	uint64_t bytes = 0, qbytes = 0;
	uint8_t *qbuf = NULL;
	int i, ret;

	memset(tr, 0, sizeof(*tr));
	if (vnpu_ref_check(cmd, sizeof(*cmd), &cc, &m.info))
		return fail(run, -EINVAL, "%s: not a valid command", name);
	/* Each term is below 2^48 (the checker's VA bound): no wrap. */
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		bytes += m.info.span[i] + m.info.qbytes[i];
		qbytes += m.info.qbytes[i];
	}
	/* The whole op's work and bytes, however many tiles it runs as. */
	if (m.info.macs > run->lim.max_work)
		return fail(run, -E2BIG, "%s: %llu work units exceed the CPU path's limit of %llu (npu_cpu_limits.max_work)",
			    name, (unsigned long long)m.info.macs,
			    (unsigned long long)run->lim.max_work);
	if (bytes > run->lim.max_bytes)
		return fail(run, -E2BIG, "%s: operands of %llu bytes exceed the CPU path's limit of %llu (npu_cpu_limits.max_bytes)",
			    name, (unsigned long long)bytes,
			    (unsigned long long)run->lim.max_bytes);
	/* A run already past its deadline or cancelled starts nothing. */
	if (run_stopped(&m)) {
		ret = m.stop;
		goto out;
	}
	if (cmd->hdr.opcode < VNPU_CMD_COMPUTE_FIRST ||
	    cmd->hdr.opcode > VNPU_CMD_COMPUTE_LAST)
		goto reference;
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if (((m.info.present >> i) & 1) && !bind->data[i])
			return fail(run, -EINVAL, "%s: operand %d has no memory",
				    name, i);
	if (tiles && tiles->why) {
		tr->why = tiles->why;
		goto reference;
	}
	if (tiles && tiles->plan.n) {
		t = tiles->plan.t;
		n = tiles->plan.n;
		/* Tiles' arrays are slices: never more than the op's. */
		qbuf = qbytes ? malloc(qbytes) : NULL;
		if (qbytes && !qbuf)
			return fail(run, -ENOMEM, "%s: %s", name,
				    npu_strerror(-ENOMEM));
	} else {
		memset(&whole, 0, sizeof(whole));
		whole.c = *cmd;
	}
	for (k = 0, ret = 0; k < n && !ret; k++) {
		/* The engine polls within a tile; this, between them. */
		if (k && run_stopped(&m)) {
			ret = -ECANCELED;
			break;
		}
		ret = exec_tile(cmd, &t[k], bind, &m, qbuf);
		if (!ret)
			tr->engine_cmds++;
	}
	free(qbuf);
	/*
	 * -EINVAL: beyond the device's command limits (the host's are
	 * npu_cpu_limits, checked above), or a per-channel array with a bad
	 * value, which the reference reports in turn.  The reference
	 * rewrites every element a tile may have written.
	 */
	if (ret != -EINVAL)
		goto out;
reference:
	tr->reference = true;
	ret = vnpu_ref_run_ctx(cmd, bind, &rc);
out:
	/* The engine and the reference say -ECANCELED for any abort. */
	if (ret == -ECANCELED && m.stop)
		ret = m.stop;
	if (!ret)
		return 0;
	if (ret == -ETIME)
		return fail(run, ret, "%s of %llu work units: stopped at the deadline (npu_cpu_limits.deadline_ns)",
			    name, (unsigned long long)m.info.macs);
	if (ret == -ECANCELED)
		return fail(run, ret, "%s of %llu work units: cancelled",
			    name, (unsigned long long)m.info.macs);
	return fail(run, ret, "%s: %s", name, npu_strerror(ret));
}
