// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the device compute engine: every byte of a compute
 * command is attacker input (hw-spec.rst, "Command limits"), so the engine
 * must never misbehave whatever the command says, and must compute what
 * the reference computes for every command it accepts.
 *
 * One input (fuzz-engine.h) is a command plus how to run it: over which
 * fake device memory contents, with map() or bounce buffers, which int8
 * kernel, what scratch memory (the heap, the device's arena or a tiny
 * one), and whether the abort callback stops it part-way.  Mapped spans
 * and heap scratch are exact-size heap blocks, so ASan sees any access
 * past them.  For each input:
 *
 *  - vnpu_op_check() runs on everything, and must agree with itself and
 *    with vnpu_ref_check(); a rejected command must be refused by
 *    vnpu_compute_exec() with the same err_off without one memory access;
 *  - an accepted command is executed over a 1 MiB flat memory; past a
 *    small work budget, the abort callback stops it at its first poll,
 *    which it must reach.  Every memory callback must stay inside the
 *    operand spans (writes inside the output), every map be unmapped, the
 *    arena be reset, and no byte outside the output span change (none at
 *    all unless it succeeded, when the output was bounced), nor any gap
 *    of a strided output;
 *  - -ECANCELED exactly when the abort callback said stop; -EFAULT exactly
 *    when an access failed; -EINVAL only for a bad per-channel array, as
 *    the reference finds too;
 *  - cut into bands for the device's engines (vnpu_compute_split()), an
 *    accepted command gives parts that are valid commands, whose outputs
 *    tile its output in order and whose every operand lies inside the
 *    whole command's: sharing a command never reaches other memory;
 *  - the CPU time of a command that runs to the end stays within a
 *    generous multiple of its counted work units times the cost per unit
 *    ops.rst documents for its op (vnpu_cost.h), and no stretch between
 *    two polls of the abort callback is long: work a count does not see
 *    is a hang a guest can start;
 *  - on success, within a smaller budget, the reference runs over a copy
 *    of the same memory: integer results bit-exact, float GEMM/CONV2D/
 *    CONV_TRANSPOSE within Documentation/ops.rst's tolerances, every other op
 *    bit-identical (the engine runs the reference code for them).
 *
 * Any violation, and any ASan/UBSan report, is a crash.  The custom
 * mutator keeps commands mostly well formed (valid opcodes, present slots,
 * VAs inside the memory, consistent shapes) while it mutates dims, strides,
 * dtypes, quantization, attributes and flags, and sometimes bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "vnpu_cost.h"
#include "vnpu_engine.h"
#include "vnpu_exec.h"
#include "vnpu_ref.h"
#include "vnpu_split.h"
#include "fuzz-engine.h"

/*
 * Work units (ops.rst) an input may run to completion: in the engine (for
 * GEMM, whose every path is a fast kernel; other ops may run the
 * reference code, at ~80 ns a unit under ASan), and in the reference.
 */
#define ENGINE_MACS	(1ull << 22)
#define ENGINE_MACS_REF	(1ull << 20)
#define REF_MACS	(1ull << 19)
#define ARENA_BYTES	(96ull << 20)
/*
 * Longest the engine may run without polling the abort callback, in CPU
 * time of this (ASan) build: ops.rst promises a poll every VNPU_POLL_WORK
 * units on the element paths (under half a millisecond natively) and
 * every block of at most VNPU_POLL_BLOCK units in the fast kernels (an
 * sgemm block, about a millisecond; BLAS is not instrumented), so 50 ms
 * is far past any correct path, sanitizers and a loaded host included.
 */
#define POLL_GAP_NS	50000000ull
/*
 * A finished command's CPU time may be at most COST_FLOOR_NS (the fixed
 * cost of a command: maps, arena setup, under sanitizers; 10 ms was
 * exceeded by noise alone on a loaded 2-core host, 10.4 ms for 150 units
 * that took 1 ms on the rerun) plus COST_SLACK times its work units at
 * vnpu_cost.h's documented cost of a unit and its bytes at COST_BYTE_PS:
 * sanitizers cost 3-10x, the slack covers that and noise; a count that
 * misses the work is off by orders of magnitude.
 */
#define COST_FLOOR_NS	50000000ull
#define COST_SLACK	20u
/*
 * Bytes cost too: a bounced operand is copied in full, whatever the work
 * (a COPY of one element from a strided 100 MiB span), and so are the
 * per-channel arrays.  COST_BYTE_PS is a generous ceiling for a byte
 * moved under the sanitizers, page faults included, in picoseconds.
 */
#define COST_BYTE_PS	1000u

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed);

static uint8_t *mem;	/* what the engine runs over */
static uint8_t *refm;	/* what the reference runs over */
static uint8_t *tmpl;	/* the background every input starts from */
static uint8_t *orig;	/* mem as filled for this input */
static uint8_t *mask;	/* output element bytes */
static struct vnpu_arena *arena;	/* the device's: ARENA_BYTES */
static void *arena_base;

/* What the inputs did (printed at exit with FUZZ_ENGINE_STATS=1). */
static struct {
	uint64_t inputs, rejected, accepted, executed, compared;
	uint64_t tolerant, skipped_values, overlapping, big, split;
	uint64_t ret[8];	/* 0, EINVAL, E2BIG, EFAULT, ECANCELED */
	uint64_t ops[VNPU_OP_LAST - VNPU_OP_GEMM + 1];
	uint64_t err_off[FZ_CMD];
	uint64_t big_ns_max, big_macs_at_max;	/* slowest first-poll abort */
	uint64_t ns_max, macs_at_max;		/* slowest input */
	unsigned int op_at_max;
	uint64_t unit_ns_max;			/* CPU ns per unit, finished runs */
	unsigned int op_at_unit_max;
} st;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* This thread's CPU time: immune to preemption (OpenBLAS runs inline). */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void print_stats(void)
{
	static const char *const rn[] = { "ok", "EINVAL", "E2BIG", "EFAULT", "ECANCELED" };
	unsigned int i;

	fprintf(stderr, "fuzz-engine: %llu inputs, %llu rejected, %llu accepted, "
		"%llu over budget (aborted at the first poll), "
		"%llu executed, %llu compared (%llu with "
		"tolerance, %llu values skipped, %llu overlapping), %llu cut "
		"into bands\n",
		(unsigned long long)st.inputs, (unsigned long long)st.rejected,
		(unsigned long long)st.accepted, (unsigned long long)st.big,
		(unsigned long long)st.executed, (unsigned long long)st.compared,
		(unsigned long long)st.tolerant, (unsigned long long)st.skipped_values,
		(unsigned long long)st.overlapping, (unsigned long long)st.split);
	for (i = 0; i < 5; i++)
		fprintf(stderr, "  %s %llu", rn[i], (unsigned long long)st.ret[i]);
	fprintf(stderr, "\n  executed per op:");
	for (i = 0; i <= VNPU_OP_LAST - VNPU_OP_GEMM; i++)
		fprintf(stderr, " 0x%x:%llu", VNPU_OP_GEMM + i, (unsigned long long)st.ops[i]);
	fprintf(stderr, "\n  slowest first-poll abort: %.1f ms (%llu work units)",
		st.big_ns_max / 1e6, (unsigned long long)st.big_macs_at_max);
	fprintf(stderr, "\n  slowest input: %.1f ms (op 0x%x, %llu work units)",
		st.ns_max / 1e6, st.op_at_max, (unsigned long long)st.macs_at_max);
	fprintf(stderr, "\n  most CPU per work unit: %llu ns (op 0x%x)",
		(unsigned long long)st.unit_ns_max, st.op_at_unit_max);
	fprintf(stderr, "\n  rejected at (offset:count):");
	for (i = 0; i < FZ_CMD; i++)
		if (st.err_off[i] * 200 > st.rejected)
			fprintf(stderr, " %u:%llu", i, (unsigned long long)st.err_off[i]);
	fprintf(stderr, "\n");
}

/* ---- Failure reports --------------------------------------------------- */

static const struct vnpu_cmd_compute *cur_cmd;

static void dump_desc(int i, const struct vnpu_tensor_desc *d)
{
	int k;

	fprintf(stderr, "  t%d: va 0x%llx dt %u rank %u q %u ax %u fl 0x%x dims",
		i, (unsigned long long)d->va, d->dtype, d->rank, d->quant,
		d->quant_axis, d->flags);
	for (k = 0; k < VNPU_MAX_RANK; k++)
		fprintf(stderr, " %u", d->dims[k]);
	fprintf(stderr, " strides");
	for (k = 0; k < VNPU_MAX_RANK; k++)
		fprintf(stderr, " %llu", (unsigned long long)d->strides[k]);
	fprintf(stderr, " scale 0x%08x zp %d qva 0x%llx\n", d->scale,
		d->zero_point, (unsigned long long)d->quant_va);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bug(const char *fmt, ...)
{
	va_list ap;
	int i;

	fprintf(stderr, "fuzz-engine: BUG: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (cur_cmd) {
		const struct vnpu_cmd_compute *c = cur_cmd;

		fprintf(stderr, "  op 0x%x act %u round %u alpha 0x%08x attr",
			c->hdr.opcode, c->act, c->round, c->act_alpha);
		for (i = 0; i < 12; i++)
			fprintf(stderr, " %u", c->attr.raw[i]);
		fprintf(stderr, "\n");
		for (i = 0; i < VNPU_OP_SLOTS; i++)
			if (fz_present(&c->t[i]))
				dump_desc(i, &c->t[i]);
	}
	abort();
}

#define CHECK(cond, ...) do { if (!(cond)) bug(__VA_ARGS__); } while (0)

/* ---- The fake device memory -------------------------------------------- */

struct region {
	uint64_t va, len;
};

#define MAX_MAPS	8

struct mapping {
	uint8_t *p;
	uint64_t va, len;
	bool w;
};

struct fzmem {
	bool allow_map, strict;		/* strict: no access allowed at all */
	struct region rd[2 * VNPU_OP_SLOTS];	/* readable */
	int nrd;
	struct region wr;		/* the output span */
	struct mapping map[MAX_MAPS];
	int maps;
	unsigned int reads, writes, faults, calls;
	bool out_mapped;
	unsigned int polls, abort_after;
	bool abort_said;
	uint64_t t_poll, max_gap;	/* CPU ns: last poll, longest gap */
};

static struct fzmem fm;

static bool in_mem(uint64_t va, uint64_t len)
{
	return va >= FZ_BASE && va - FZ_BASE <= FZ_MEM &&
	       len <= FZ_MEM - (va - FZ_BASE);
}

static bool inside(const struct region *r, uint64_t va, uint64_t len)
{
	return va >= r->va && va - r->va <= r->len && len <= r->len - (va - r->va);
}

static void check_access(uint64_t va, uint64_t len, bool w)
{
	int i;

	fm.calls++;
	CHECK(!fm.strict, "memory %s of a rejected command at 0x%llx",
	      w ? "write" : "read", (unsigned long long)va);
	if (w) {
		CHECK(inside(&fm.wr, va, len), "write outside the output: 0x%llx+%llu",
		      (unsigned long long)va, (unsigned long long)len);
		return;
	}
	for (i = 0; i < fm.nrd; i++)
		if (inside(&fm.rd[i], va, len))
			return;
	bug("read outside every operand: 0x%llx+%llu", (unsigned long long)va,
	    (unsigned long long)len);
}

static int m_read(void *o, uint64_t va, void *buf, uint64_t len)
{
	(void)o;
	check_access(va, len, false);
	fm.reads++;
	if (!in_mem(va, len)) {
		fm.faults++;
		return -EFAULT;
	}
	memcpy(buf, mem + (va - FZ_BASE), len);
	return 0;
}

static int m_write(void *o, uint64_t va, const void *buf, uint64_t len)
{
	(void)o;
	check_access(va, len, true);
	fm.writes++;
	if (!in_mem(va, len)) {
		fm.faults++;
		return -EFAULT;
	}
	memcpy(mem + (va - FZ_BASE), buf, len);
	return 0;
}

/*
 * A mapping is a heap copy of exactly the span, so that ASan catches any
 * access past it (on the device, past the span is other guest memory, or
 * no memory at all); an output's copy is written back at unmap, and an
 * input's must come back unchanged.
 */
static void *m_map(void *o, uint64_t va, uint64_t len, bool w)
{
	struct mapping *mp;

	(void)o;
	check_access(va, len, w);
	if (!fm.allow_map || !in_mem(va, len))
		return NULL;
	CHECK(fm.maps < MAX_MAPS, "more than %d maps at once", MAX_MAPS);
	mp = &fm.map[fm.maps++];
	mp->va = va;
	mp->len = len;
	mp->w = w;
	mp->p = malloc(len ? len : 1);
	if (!mp->p)
		abort();
	memcpy(mp->p, mem + (va - FZ_BASE), len);
	if (w)
		fm.out_mapped = true;
	return mp->p;
}

static void m_unmap(void *o, void *h, uint64_t len, bool w, uint64_t al)
{
	uint64_t off;
	int i;

	(void)o;
	for (i = 0; i < fm.maps && fm.map[i].p != h; i++)
		;
	CHECK(i < fm.maps, "unmap of a pointer never mapped");
	CHECK(len == fm.map[i].len && w == fm.map[i].w,
	      "unmap (len %llu, write %d) unlike its map (len %llu, write %d)",
	      (unsigned long long)len, w, (unsigned long long)fm.map[i].len,
	      fm.map[i].w);
	CHECK(al <= len, "unmap access_len %llu > len %llu",
	      (unsigned long long)al, (unsigned long long)len);
	off = fm.map[i].va - FZ_BASE;
	if (w)
		memcpy(mem + off, h, al);
	else
		CHECK(!memcmp(h, orig + off, len), "engine wrote to an input mapping");
	free(h);
	fm.map[i] = fm.map[--fm.maps];
}

static void poll_gap(void)
{
	uint64_t t = cpu_ns();

	if (t - fm.t_poll > fm.max_gap)
		fm.max_gap = t - fm.t_poll;
	fm.t_poll = t;
}

static bool m_aborted(void *o)
{
	(void)o;
	poll_gap();
	fm.polls++;
	if (fm.abort_after && fm.polls >= fm.abort_after)
		fm.abort_said = true;
	return fm.abort_said;
}

static const struct vnpu_mem_ops mops = {
	.read = m_read, .write = m_write, .map = m_map, .unmap = m_unmap,
	.aborted = m_aborted,
};

/* ---- Memory contents --------------------------------------------------- */

static uint64_t hull_lo, hull_hi;	/* offsets filled for this input */

static bool clip(uint64_t va, uint64_t len, uint64_t *off, uint64_t *n)
{
	if (va < FZ_BASE || va - FZ_BASE >= FZ_MEM || !len)
		return false;
	*off = va - FZ_BASE;
	*n = len < FZ_MEM - *off ? len : FZ_MEM - *off;
	if (*off < hull_lo)
		hull_lo = *off;
	if (*off + *n > hull_hi)
		hull_hi = *off + *n;
	return true;
}

static void fill_raw(uint64_t va, uint64_t len, uint64_t *r)
{
	uint64_t off, n, i, v = 0;

	if (!clip(va, len, &off, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!(i & 7))
			v = fz_next(r);
		mem[off + i] = (uint8_t)(v >> (8 * (i & 7)));
	}
}

/* Values an operand of @dt typically holds: floats in [-1, 1]. */
static void fill_tame(uint64_t va, uint64_t len, unsigned int dt, uint64_t *r)
{
	uint32_t es = fz_esize(dt);
	uint64_t off, n, i;

	if (!clip(va, len, &off, &n))
		return;
	if (!fz_is_float(dt) && dt != VNPU_DT_INT32) {
		fill_raw(va, len, r);
		return;
	}
	for (i = 0; i + es <= n; i += es) {
		uint8_t *p = mem + off + i;
		float f = fz_rndf(r, -1.0f, 1.0f);
		uint16_t h;
		int32_t v;

		switch (dt) {
		case VNPU_DT_FP32:
			memcpy(p, &f, 4);
			break;
		case VNPU_DT_FP16:
			h = vnpu_f32_to_fp16(f);
			memcpy(p, &h, 2);
			break;
		case VNPU_DT_BF16:
			h = vnpu_f32_to_bf16(f);
			memcpy(p, &h, 2);
			break;
		default:	/* INT32 biases */
			v = (int32_t)fz_rnd(r, 40001) - 20000;
			if (fz_rnd(r, 50) == 0)
				v = fz_rnd(r, 2) ? INT32_MAX - 5 : INT32_MIN + 5;
			memcpy(p, &v, 4);
		}
	}
}

/* Per-channel arrays: valid scales and zero points, now and then not. */
static void fill_qarr(const struct vnpu_tensor_desc *d, uint64_t qbytes,
		      uint64_t *r)
{
	uint64_t off, n, ch = qbytes / 8, i;
	int32_t lo = d->dtype == VNPU_DT_INT8 ? -128 : 0;

	if (!clip(d->quant_va, qbytes, &off, &n))
		return;
	for (i = 0; i < ch; i++) {
		float s = fz_rndf(r, 0.002f, 0.05f);
		int32_t z = fz_rnd(r, 2) ? 0 : lo + (int32_t)fz_rnd(r, 256);

		if (fz_rnd(r, 64 * (uint32_t)ch) == 0)
			s = fz_rnd(r, 2) ? 0.0f : NAN;
		if (fz_rnd(r, 64 * (uint32_t)ch) == 0)
			z = 256;
		if (4 * i + 4 <= n)
			memcpy(mem + off + 4 * i, &s, 4);
		if (4 * (ch + i) + 4 <= n)
			memcpy(mem + off + 4 * (ch + i), &z, 4);
	}
}

static void fill(const struct fz_hdr *h, const struct vnpu_cmd_compute *c,
		 const struct vnpu_op_info *info, const uint8_t *extra,
		 size_t nextra)
{
	uint64_t r = h->seed ^ 0x5eed5eed5eed5eedull, off, n;
	int i;

	hull_lo = FZ_MEM;
	hull_hi = 0;
	fill_raw(c->t[3].va, info->span[3], &r);	/* stale output contents */
	for (i = 0; i < 3; i++) {
		if (!((info->present >> i) & 1))
			continue;
		if (h->mode & FZ_M_RAW)
			fill_raw(c->t[i].va, info->span[i], &r);
		else
			fill_tame(c->t[i].va, info->span[i], c->t[i].dtype, &r);
	}
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!info->qbytes[i])
			continue;
		if (h->mode & FZ_M_RAWQ)
			fill_raw(c->t[i].quant_va, info->qbytes[i], &r);
		else
			fill_qarr(&c->t[i], info->qbytes[i], &r);
	}
	if (nextra && clip(FZ_BASE + h->data_off % FZ_MEM, nextra, &off, &n))
		memcpy(mem + off, extra, n);
	if (hull_lo > hull_hi)
		hull_lo = hull_hi = 0;
}

static void restore(void)
{
	memcpy(mem + hull_lo, tmpl + hull_lo, hull_hi - hull_lo);
	memcpy(refm + hull_lo, tmpl + hull_lo, hull_hi - hull_lo);
	memcpy(orig + hull_lo, tmpl + hull_lo, hull_hi - hull_lo);
}

/* @m equals the input's memory everywhere but [@skip_lo, @skip_hi). */
static void check_unchanged(const uint8_t *m, uint64_t skip_lo, uint64_t skip_hi,
			    const char *who)
{
	uint64_t segs[3][2] = {
		{ 0, hull_lo }, { hull_lo, hull_hi }, { hull_hi, FZ_MEM },
	};
	int s;

	for (s = 0; s < 3; s++) {
		const uint8_t *want = s == 1 ? orig : tmpl;
		uint64_t a = segs[s][0], b = segs[s][1], x;

		for (x = a; x < b;) {
			uint64_t e = b;

			if (x < skip_hi && skip_lo < b) {
				if (x < skip_lo) {
					e = skip_lo;
				} else {
					x = skip_hi;
					continue;
				}
			}
			if (memcmp(m + x, want + x, e - x)) {
				uint64_t i;

				for (i = x; i < e && m[i] == want[i]; i++)
					;
				bug("%s changed memory outside the output at offset 0x%llx",
				    who, (unsigned long long)i);
			}
			x = e;
		}
	}
}

/* ---- Differential check ----------------------------------------------- */

static bool overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl)
{
	return al && bl && a < b + bl && b < a + al;
}

/* Every float input element (and gap) is finite and within [-1, 1]. */
static bool tame_inputs(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info)
{
	int i;

	for (i = 0; i < 3; i++) {
		const struct vnpu_tensor_desc *d = &c->t[i];
		struct vnpu_tv tv;
		uint64_t p;

		if (!((info->present >> i) & 1))
			continue;
		if (!fz_is_float(d->dtype))
			continue;
		vnpu_tv_init(&tv, d, NULL, NULL);
		for (p = 0; p < info->span[i]; p += tv.esize) {
			float v = vnpu_ld(&tv, orig + (d->va - FZ_BASE) + p, 0);

			if (!(fabsf(v) <= 1.0f))
				return false;
		}
	}
	return true;
}

static float rel_tol(unsigned int dt)
{
	return dt == VNPU_DT_FP16 ? 2e-3f : dt == VNPU_DT_BF16 ? 1.6e-2f : 2e-6f;
}

static uint32_t reduction(const struct vnpu_cmd_compute *c)
{
	const struct vnpu_tensor_desc *a = &c->t[0], *w = &c->t[1];

	if (c->hdr.opcode == VNPU_OP_GEMM)
		return a->dims[a->rank - (c->attr.gemm.flags & VNPU_GEMM_TRANS_A ? 2 : 1)];
	/* W [C, KH, KW, CO/groups]: each output sums KH * KW * C/groups terms. */
	if (c->hdr.opcode == VNPU_OP_CONV_TRANSPOSE)
		return w->dims[1] * w->dims[2] * (a->dims[3] / c->attr.convt.groups);
	return w->dims[1] * w->dims[2] * w->dims[3];
}

/*
 * Walk the output's elements: compare engine and reference results when
 * @cmp, mark element bytes, then check that the gaps kept their contents.
 */
static void check_output(const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info, bool cmp)
{
	const struct vnpu_tensor_desc *y = &c->t[3];
	/* fp32 CONV_TRANSPOSE runs on the CONV2D kernels (ops.rst), in their order. */
	bool mm = c->hdr.opcode == VNPU_OP_GEMM || c->hdr.opcode == VNPU_OP_CONV2D ||
		  (c->hdr.opcode == VNPU_OP_CONV_TRANSPOSE &&
		   c->t[0].dtype == VNPU_DT_FP32 && c->t[1].dtype == VNPU_DT_FP32 &&
		   c->t[3].dtype == VNPU_DT_FP32);
	bool tol = mm && !info->quantized, values = cmp;
	uint64_t yo = y->va - FZ_BASE, i;
	uint32_t idx[VNPU_MAX_RANK] = { 0 };
	float abs_tol = 0.0f;
	struct vnpu_tv tv;
	int k;

	if (tol) {
		float alpha, amp = 1.0f;

		memcpy(&alpha, &c->act_alpha, 4);
		if (c->act == VNPU_ACT_LEAKY_RELU && fabsf(alpha) > 1.0f)
			amp = fabsf(alpha);
		if (c->act >= VNPU_ACT_SIGMOID)
			amp = 1.25f;
		abs_tol = 2e-5f * (float)(reduction(c) + 1) * amp;
		/* ops.rst's tolerance holds for inputs in [-1, 1], sane slopes. */
		if (values && (amp > 1e6f || !tame_inputs(c, info)))
			values = false;
		st.tolerant += values;
		st.skipped_values += cmp && !values;
	}
	vnpu_tv_init(&tv, y, NULL, y->quant == VNPU_QUANT_CHANNEL ?
		     orig + (y->quant_va - FZ_BASE) : NULL);
	memset(mask + yo, 0, info->span[3]);
	for (;;) {
		int64_t off = 0;
		uint32_t ch = y->quant == VNPU_QUANT_CHANNEL ? idx[y->quant_axis] : 0;
		const uint8_t *a, *b;

		for (k = 0; k < y->rank; k++)
			off += (int64_t)idx[k] * tv.st[k];
		off *= tv.esize;
		CHECK(off >= 0 && (uint64_t)off + tv.esize <= info->span[3],
		      "output element outside its span");
		memset(mask + yo + off, 1, tv.esize);
		a = mem + yo + off;
		b = refm + yo + off;
		if (values && memcmp(a, b, tv.esize)) {
			float va = vnpu_ld(&tv, a, ch), vb = vnpu_ld(&tv, b, ch), t;

			/*
			 * Which NaN a float op returns is unspecified (ops.rst,
			 * "Tolerances"): vector code may commute an operation.
			 */
			if (!tol && !(!fz_is_q8(y->dtype) && isnan(va) && isnan(vb)))
				bug("engine and reference differ at output byte %lld: "
				    "%g vs %g (bits %02x.. vs %02x..)", (long long)off,
				    va, vb, *a, *b);
			if (fz_is_q8(y->dtype)) {
				/* One step, plus the float error in steps. */
				int qa = y->dtype == VNPU_DT_INT8 ? (int8_t)*a : *a;
				int qb = y->dtype == VNPU_DT_INT8 ? (int8_t)*b : *b;
				double steps = 1.0 + ((double)abs_tol + fabs((double)vb) * 2e-6) /
						     (double)vnpu_tv_scale(&tv, ch);

				if (!(abs(qa - qb) <= steps))
					bug("engine and reference differ at output byte %lld: "
					    "%d vs %d (tolerance %g steps, K %u)", (long long)off,
					    qa, qb, steps, reduction(c));
			} else {
				t = abs_tol + fabsf(vb) * rel_tol(y->dtype);
				if (!(fabsf(va - vb) <= t) && !(isnan(va) && isnan(vb)) &&
				    !(isinf(vb) && va == vb))
					bug("engine and reference differ at output byte %lld: "
					    "%.9g vs %.9g (tolerance %g, K %u)", (long long)off,
					    va, vb, t, reduction(c));
			}
		}
		for (k = y->rank - 1; k >= 0; k--) {
			if (++idx[k] < y->dims[k])
				break;
			idx[k] = 0;
		}
		if (k < 0)
			break;
	}
	for (i = 0; i < info->span[3]; i++) {
		if (mask[yo + i])
			continue;
		CHECK(mem[yo + i] == orig[yo + i],
		      "engine changed a gap of the output at byte %llu",
		      (unsigned long long)i);
		CHECK(!cmp || refm[yo + i] == orig[yo + i],
		      "reference changed a gap of the output at byte %llu",
		      (unsigned long long)i);
	}
}

static void run_ref(const struct vnpu_cmd_compute *c,
		    const struct vnpu_op_info *info)
{
	struct vnpu_op_bind b;
	int i, ret;

	memset(&b, 0, sizeof(b));
	memcpy(refm + hull_lo, orig + hull_lo, hull_hi - hull_lo);
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		b.data[i] = refm + (c->t[i].va - FZ_BASE);
		if (info->qbytes[i])
			b.qparams[i] = refm + (c->t[i].quant_va - FZ_BASE);
	}
	ret = vnpu_ref_run(c, &b);
	CHECK(ret == 0, "engine succeeded, reference returned %d", ret);
}

/* ---- The target -------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint64_t r = 0x7e3f1a2b3c4d5e6full;
	uint32_t i;

	(void)argc;
	(void)argv;
	openblas_set_num_threads(1);
	mem = malloc(FZ_MEM);
	refm = malloc(FZ_MEM);
	tmpl = malloc(FZ_MEM);
	orig = malloc(FZ_MEM);
	mask = malloc(FZ_MEM);
	if (!mem || !refm || !tmpl || !orig || !mask)
		abort();
	arena = vnpu_arena_new(ARENA_BYTES);
	if (!arena)
		abort();
	arena_base = vnpu_arena_alloc(arena, 1);
	vnpu_arena_reset(arena);
	if (getenv("FUZZ_ENGINE_STATS"))
		atexit(print_stats);
	for (i = 0; i < FZ_MEM; i += 8) {
		uint64_t v = fz_next(&r);

		memcpy(tmpl + i, &v, 8);
	}
	memcpy(mem, tmpl, FZ_MEM);
	memcpy(refm, tmpl, FZ_MEM);
	memcpy(orig, tmpl, FZ_MEM);
	return 0;
}

/* The input's arena: none, the device's, or a small one made for it. */
static struct vnpu_arena *arena_get(const struct fz_hdr *h, bool big,
				    void **base)
{
	struct vnpu_arena *a;

	*base = NULL;
	if (!(h->arena & FZ_ARENA_SMALL)) {
		if (!(h->arena & FZ_ARENA_DEVICE) && !big)
			return NULL;
		*base = arena_base;
		return arena;
	}
	a = vnpu_arena_new(fz_arena_cap(h->arena));
	if (!a)
		abort();
	*base = vnpu_arena_alloc(a, 1);
	vnpu_arena_reset(a);
	return a;
}

/* Reset, with nothing left allocated; then released if it was made. */
static void arena_put(struct vnpu_arena *a, void *base)
{
	void *p;

	if (!a)
		return;
	p = vnpu_arena_alloc(a, 1);
	CHECK(p == base && !vnpu_arena_exhausted(a),
	      "arena not reset after the command");
	vnpu_arena_reset(a);
	if (a != arena)
		vnpu_arena_free(a);
}

static void set_regions(const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info)
{
	int i;

	fm.nrd = 0;
	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		fm.rd[fm.nrd++] = (struct region){ c->t[i].va, info->span[i] };
		if (info->qbytes[i])
			fm.rd[fm.nrd++] = (struct region){ c->t[i].quant_va,
							   info->qbytes[i] };
	}
	fm.wr = (struct region){ c->t[3].va, info->span[3] };
}

/* @off is the quant_va field of a slot with per-channel arrays. */
static bool names_qarr(const struct vnpu_op_info *info, uint32_t off)
{
	const uint32_t t0 = offsetof(struct vnpu_cmd_compute, t);
	const uint32_t ds = sizeof(struct vnpu_tensor_desc);

	return off >= t0 && off < t0 + VNPU_OP_SLOTS * ds &&
	       (off - t0) % ds == offsetof(struct vnpu_tensor_desc, quant_va) &&
	       info->qbytes[(off - t0) / ds];
}

static void run_accepted(const struct fz_hdr *h, const void *cmd, uint32_t csize,
			 const struct vnpu_cmd_compute *c,
			 const struct vnpu_op_info *info, const uint8_t *extra,
			 size_t nextra)
{
	struct vnpu_engine_cfg cfg = { NULL, VNPU_I8_AUTO };
	struct vnpu_compute_result res;
	void *abase;
	bool all_in = true, ovl = false, outmem, big;
	uint64_t yva = c->t[3].va, yspan = info->span[3], ylo, yhi, t0, cpu0;
	uint64_t cost_ns;
	int i, j, ret;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		if (!((info->present >> i) & 1))
			continue;
		if (!in_mem(c->t[i].va, info->span[i]) ||
		    (info->qbytes[i] && !in_mem(c->t[i].quant_va, info->qbytes[i])))
			all_in = false;
		if (i < 3 && overlap(c->t[i].va, info->span[i], yva, yspan))
			ovl = true;
		if (info->qbytes[i] &&
		    overlap(c->t[i].quant_va, info->qbytes[i], yva, yspan))
			ovl = true;
	}
	(void)vnpu_engine_cycles(c, info);
	/*
	 * Past the budget, the abort callback stops the command at its first
	 * poll (or its abort_after-th, up to the fourth): that bounds the work
	 * (hw-spec.rst: a poll at least every VNPU_POLL_BLOCK units), and
	 * checks that the command does poll.
	 */
	big = info->macs > (c->hdr.opcode == VNPU_OP_GEMM ? ENGINE_MACS :
			    ENGINE_MACS_REF);
	st.big += big;

	fill(h, c, info, extra, nextra);
	memcpy(orig + hull_lo, mem + hull_lo, hull_hi - hull_lo);
	memset(&fm, 0, sizeof(fm));
	set_regions(c, info);
	fm.allow_map = !(h->mode & FZ_M_BOUNCE);
	fm.abort_after = !big ? h->abort_after :
			 h->abort_after ? 1 + (h->abort_after - 1u) % 4 : 1;
	j = h->kernel % 4;
	cfg.arena = arena_get(h, big, &abase);
	cfg.i8_kernel = vnpu_i8_kernel_resolve(j == 0 ? VNPU_I8_AUTO :
					       (enum vnpu_i8_kernel)(j - 1));

	t0 = now_ns();
	fm.t_poll = cpu_ns();
	cpu0 = fm.t_poll;
	ret = vnpu_compute_exec(cmd, csize, &mops, NULL, &cfg, &res);
	poll_gap();
	cpu0 = cpu_ns() - cpu0;
	t0 = now_ns() - t0;
	if (big && t0 > st.big_ns_max) {
		st.big_ns_max = t0;
		st.big_macs_at_max = info->macs;
	}
	st.executed++;
	st.ops[c->hdr.opcode - VNPU_OP_GEMM]++;
	st.ret[ret == 0 ? 0 : ret == -EINVAL ? 1 : ret == -E2BIG ? 2 :
	       ret == -EFAULT ? 3 : ret == -ECANCELED ? 4 : 5]++;

	CHECK(fm.maps == 0, "%d maps left mapped", fm.maps);
	arena_put(cfg.arena, abase);
	CHECK(ret == 0 || ret == -EINVAL || ret == -E2BIG || ret == -EFAULT ||
	      ret == -ECANCELED, "unexpected return %d", ret);
	CHECK((ret == -ECANCELED) == fm.abort_said,
	      "returned %d, abort callback said %d after %u polls", ret,
	      fm.abort_said, fm.polls);
	CHECK((ret == -EFAULT) == (fm.faults > 0),
	      "returned %d after %u failed accesses", ret, fm.faults);
	CHECK(ret != -EFAULT || !all_in, "-EFAULT with every operand backed");
	CHECK(ret == 0 ? res.cycles > 0 : res.cycles == 0,
	      "returned %d with %llu cycles", ret, (unsigned long long)res.cycles);
	if (ret == -EINVAL)	/* only a per-channel array can still be bad */
		CHECK(names_qarr(info, res.err_off),
		      "-EINVAL at offset %u for a checked command", res.err_off);
	CHECK(ret != 0 || all_in, "success with an operand outside memory");
	CHECK(ret != 0 || !big || info->macs <= 2 * (uint64_t)VNPU_POLL_BLOCK,
	      "%llu work units ran without one poll of the abort callback",
	      (unsigned long long)info->macs);
	CHECK(fm.max_gap < POLL_GAP_NS,
	      "%.0f ms of CPU without a poll of the abort callback (%u polls, "
	      "%llu work units)", fm.max_gap / 1e6, fm.polls,
	      (unsigned long long)info->macs);
	cost_ns = 0;
	for (i = 0; i < VNPU_OP_SLOTS; i++)
		if ((info->present >> i) & 1)
			cost_ns += info->span[i] + info->qbytes[i];
	cost_ns = COST_FLOOR_NS + (uint64_t)COST_SLACK *
		  (vnpu_cost_unit_ns(c->hdr.opcode) * info->macs +
		   cost_ns * COST_BYTE_PS / 1000);
	if (ret == 0 && cpu0 > st.unit_ns_max * (info->macs ? info->macs : 1)) {
		st.unit_ns_max = cpu0 / (info->macs ? info->macs : 1);
		st.op_at_unit_max = c->hdr.opcode;
	}
	CHECK(ret != 0 || cpu0 <= cost_ns,
	      "%.1f ms of CPU for %llu work units: over %.1f ms, %u times the "
	      "%u ns a unit of op 0x%x may cost (ops.rst) and its bytes, plus %.0f ms",
	      cpu0 / 1e6, (unsigned long long)info->macs, cost_ns / 1e6,
	      COST_SLACK, vnpu_cost_unit_ns(c->hdr.opcode), c->hdr.opcode,
	      COST_FLOOR_NS / 1e6);

	/* Where the engine may have written. */
	outmem = in_mem(yva, yspan);
	ylo = outmem ? yva - FZ_BASE : 0;
	yhi = outmem ? ylo + yspan : 0;
	if (ret && !fm.out_mapped)
		ylo = yhi = 0;		/* a bounced output is written on success only */
	check_unchanged(mem, ylo, yhi, "engine");

	if (ret == -EINVAL && all_in && info->macs <= REF_MACS) {
		struct vnpu_op_bind b;

		memset(&b, 0, sizeof(b));
		memcpy(refm + hull_lo, orig + hull_lo, hull_hi - hull_lo);
		for (i = 0; i < VNPU_OP_SLOTS; i++) {
			if (!((info->present >> i) & 1))
				continue;
			b.data[i] = refm + (c->t[i].va - FZ_BASE);
			if (info->qbytes[i])
				b.qparams[i] = refm + (c->t[i].quant_va - FZ_BASE);
		}
		CHECK(vnpu_ref_run(c, &b) == -EINVAL,
		      "engine refused a per-channel array the reference takes");
		check_unchanged(refm, 0, 0, "reference");
	}
	if (ret == 0 && all_in && info->macs <= REF_MACS) {
		bool cmp = !ovl;

		st.overlapping += ovl;
		if (cmp) {
			st.compared++;
			run_ref(c, info);
			check_unchanged(refm, ylo, yhi, "reference");
		}
		check_output(c, info, cmp);
	}
	restore();
}

static bool within(uint64_t va, uint64_t len, uint64_t outer, uint64_t olen)
{
	return va >= outer && len <= olen && va - outer <= olen - len;
}

/* The bands vnpu_compute_split() cuts @c into (checked) for the engines. */
static void check_split(const struct fz_hdr *h, const void *cmd, uint32_t csize,
			const struct vnpu_cmd_compute *c,
			const struct vnpu_op_info *info)
{
	static struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
	struct vnpu_cmd_compute pc;
	struct vnpu_op_info pi;
	uint64_t cycles = 0, next = c->t[3].va, macs = 0;
	unsigned int n, i, j;

	n = vnpu_compute_split_min(cmd, csize, 2 + h->kernel % 15, 1, parts,
				   &cycles);
	if (!n)
		return;
	st.split++;
	CHECK(n >= 2 && n <= VNPU_SPLIT_MAX_PARTS, "cut into %u parts", n);
	CHECK(cycles == vnpu_engine_cycles(c, info), "cut changes the cycles");
	for (i = 0; i < n; i++) {
		CHECK(vnpu_op_check(&parts[i], sizeof(parts[i]), &pc, &pi) == 0,
		      "part %u of %u is refused at offset %u", i, n, pi.err_off);
		CHECK(pi.present == info->present, "part %u has other slots", i);
		CHECK(parts[i].t[3].va == next, "part %u's output is not next", i);
		next += pi.span[3];
		macs += pi.macs;
		for (j = 0; j < VNPU_OP_SLOTS; j++) {
			if (!((pi.present >> j) & 1))
				continue;
			CHECK(within(parts[i].t[j].va, pi.span[j], c->t[j].va,
				     info->span[j]),
			      "part %u slot %u reaches outside the command's", i, j);
			CHECK(parts[i].t[j].quant_va == c->t[j].quant_va &&
			      pi.qbytes[j] == info->qbytes[j],
			      "part %u slot %u has other per-channel arrays", i, j);
		}
	}
	CHECK(next == c->t[3].va + info->span[3], "the parts leave output uncovered");
	CHECK(macs >= info->macs, "the parts do less work than the command");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t in[FZ_MAX_LEN];
	static struct vnpu_cmd_compute raw_cmd;
	struct vnpu_cmd_compute cc, cc2, rc;
	struct vnpu_op_info info, info2, rinfo;
	struct vnpu_compute_result res;
	struct vnpu_engine_cfg cfg = { NULL, VNPU_I8_AUTO };
	void *abase;
	const uint8_t *extra = in + FZ_HDR + FZ_CMD;
	size_t nextra = 0;
	struct fz_hdr h;
	uint32_t csize;
	uint64_t t0;
	uint8_t *cbuf, *cmd;
	int ck, ret;

	st.inputs++;
	memset(in, 0, sizeof(in));
	memcpy(in, data, size < FZ_MAX_LEN ? size : FZ_MAX_LEN);
	if (size > FZ_HDR + FZ_CMD)
		nextra = (size < FZ_MAX_LEN ? size : FZ_MAX_LEN) - FZ_HDR - FZ_CMD;
	memcpy(&h, in, FZ_HDR);
	csize = h.size ? h.size % 2048 : FZ_CMD;

	/* The command exactly @csize bytes long, at any alignment. */
	cbuf = malloc(csize + 64);
	if (!cbuf)
		abort();
	cmd = cbuf + h.misalign % 64;
	memset(cmd, 0, csize);
	memcpy(cmd, in + FZ_HDR, csize < FZ_CMD ? csize : FZ_CMD);
	memcpy(&raw_cmd, in + FZ_HDR, FZ_CMD);
	cur_cmd = &raw_cmd;

	ck = vnpu_op_check(cmd, csize, &cc, &info);
	if (ck) {
		CHECK(ck == -EINVAL, "vnpu_op_check returned %d", ck);
		CHECK(info.err_off < FZ_CMD, "err_off %u", info.err_off);
		/* Refused before a single memory access. */
		memset(&fm, 0, sizeof(fm));
		fm.strict = true;
		cfg.arena = arena_get(&h, false, &abase);
		ret = vnpu_compute_exec(cmd, csize, &mops, NULL, &cfg, &res);
		CHECK(ret == -EINVAL, "rejected command returned %d", ret);
		CHECK(res.err_off == info.err_off, "err_off %u, check said %u",
		      res.err_off, info.err_off);
		CHECK(res.cycles == 0 && fm.calls == 0 && fm.polls == 0,
		      "rejected command touched memory or polled");
		arena_put(cfg.arena, abase);
		free(cbuf);
		st.rejected++;
		st.err_off[info.err_off]++;
		return 0;
	}
	cur_cmd = &cc;
	st.accepted++;
	/* Deterministic, and what the host CPU fallback accepts is a superset. */
	CHECK(vnpu_op_check(&cc, sizeof(cc), &cc2, &info2) == 0 &&
	      !memcmp(&info, &info2, sizeof(info)), "check not idempotent");
	CHECK(vnpu_ref_check(&cc, sizeof(cc), &rc, &rinfo) == 0,
	      "device accepts what the host check refuses (err_off %u)",
	      rinfo.err_off);
	CHECK(rinfo.present == info.present && rinfo.macs == info.macs &&
	      rinfo.quantized == info.quantized &&
	      !memcmp(rinfo.span, info.span, sizeof(info.span)) &&
	      !memcmp(rinfo.qbytes, info.qbytes, sizeof(info.qbytes)),
	      "vnpu_ref_check describes the command differently");
	CHECK((info.present & 9) == 9, "accepted without input or output");
	CHECK(info.macs <= VNPU_LIMIT_CMD_MACS, "macs %llu past the limit",
	      (unsigned long long)info.macs);

	check_split(&h, cmd, csize, &cc, &info);
	t0 = now_ns();
	run_accepted(&h, cmd, csize, &cc, &info, extra, nextra);
	t0 = now_ns() - t0;
	if (t0 > st.ns_max) {
		st.ns_max = t0;
		st.macs_at_max = info.macs;
		st.op_at_max = cc.hdr.opcode;
	}
	free(cbuf);
	cur_cmd = NULL;
	return 0;
}

/* ---- Structure-aware mutator ------------------------------------------ */

static const uint32_t dim_vals[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128,
	129, 255, 256, 257, 511, 1023, 1024, 1025, 4095, 4096, 65535, 65536,
	65537, 1u << 20, 1u << 26, (1u << 26) + 1, 1u << 31, 0x7fffffff,
	0xffffffff,
};

static const uint64_t stride_vals[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 63, 64, 65, 255, 256, 1023, 1024, 4096, 65536,
	1u << 20, 1u << 25, 1u << 27, 1ull << 31, 1ull << 32, 1ull << 33,
	1ull << 40, 1ull << 47, 1ull << 48, 1ull << 62, 1ull << 63,
	0x7fffffffffffffffull, UINT64_MAX - 1, UINT64_MAX,
};

static const uint32_t f32_vals[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3a83126f,
	0x358637bd, 0x0da24260, 0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff,
	0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x3c23d70a,
	0x2edbe6ff, 0x4f000000, 0xcf000000, 0x5f000000, 0x477fe000, 0x3e99999a,
};

static const int32_t zp_vals[] = {
	-129, -128, -127, -1, 0, 1, 127, 128, 254, 255, 256, INT32_MIN, INT32_MAX,
};

#define PICK(r, arr) ((arr)[fz_rnd((r), sizeof(arr) / sizeof((arr)[0]))])

static uint32_t pick_dim(uint64_t *r, uint32_t cur)
{
	switch (fz_rnd(r, 4)) {
	case 0:
		return PICK(r, dim_vals);
	case 1:
		return cur + fz_rnd(r, 3) - 1;
	case 2:
		return 1 + fz_rnd(r, 16);
	default:
		return 1 + fz_rnd(r, 300);
	}
}

static uint64_t pick_stride(uint64_t *r, uint64_t cur)
{
	switch (fz_rnd(r, 3)) {
	case 0:
		return PICK(r, stride_vals);
	case 1:
		return cur + fz_rnd(r, 3) - 1;
	default:
		return fz_rnd(r, 64);
	}
}

static uint32_t pick_f32(uint64_t *r)
{
	return fz_rnd(r, 2) ? PICK(r, f32_vals) : fz_f2u(fz_rndf(r, -2.0f, 2.0f));
}

static uint64_t pick_va(uint64_t *r, uint64_t cur, uint32_t es)
{
	static const uint64_t odd[] = {
		0, 1, 4, FZ_BASE - 64, FZ_BASE + FZ_MEM, FZ_BASE + FZ_MEM - 4,
		(1ull << 48) - 64, 1ull << 48, UINT64_MAX - 3, 0x1000,
	};

	if (!es)
		es = 1;
	switch (fz_rnd(r, 6)) {
	case 0:
		return PICK(r, odd);
	case 1:
		return cur + (int64_t)(fz_rnd(r, 9) - 4) * es;
	case 2:
		return cur + fz_rnd(r, 2);
	default:
		return FZ_BASE + fz_rnd(r, FZ_MEM) / es * es;
	}
}

static void mut_tensor(struct vnpu_cmd_compute *c, uint64_t *r)
{
	int s = (int)fz_rnd(r, VNPU_OP_SLOTS);
	struct vnpu_tensor_desc *d = &c->t[s];
	uint32_t es = fz_esize(d->dtype);
	int j = (int)fz_rnd(r, d->rank >= 1 && d->rank <= VNPU_MAX_RANK ?
			    d->rank : VNPU_MAX_RANK);

	switch (fz_rnd(r, 14)) {
	case 0:
		d->dtype = (uint8_t)(fz_rnd(r, 8) ? 1 + fz_rnd(r, 6) : fz_rnd(r, 256));
		if (fz_rnd(r, 2))
			fz_fix_quant(d, r, true);
		break;
	case 1:
		if (fz_rnd(r, 4))
			fz_set_rank(d, 1 + (int)fz_rnd(r, VNPU_MAX_RANK));
		else
			d->rank = (uint8_t)fz_rnd(r, 9);
		break;
	case 2:
		d->quant = (uint8_t)fz_rnd(r, 4);
		if (d->quant == VNPU_QUANT_CHANNEL && fz_rnd(r, 2)) {
			d->scale = 0;
			d->zero_point = 0;
		}
		break;
	case 3:
		d->quant_axis = (uint8_t)fz_rnd(r, d->rank + 1u);
		break;
	case 4:
		d->flags = fz_rnd(r, 4) ? fz_rnd(r, 2) : 1u << fz_rnd(r, 32);
		if (d->flags == VNPU_TENSOR_STRIDED)
			fz_restride(d, r, s == VNPU_OP_SLOT_OUT);
		else
			memset(d->strides, 0, sizeof(d->strides));
		break;
	case 5:
		d->dims[j] = pick_dim(r, d->dims[j]);
		break;
	case 6:
		d->flags |= VNPU_TENSOR_STRIDED;
		d->strides[j] = pick_stride(r, d->strides[j]);
		break;
	case 7:
		d->va = pick_va(r, d->va, es);
		break;
	case 8:
		d->scale = pick_f32(r);
		break;
	case 9:
		d->zero_point = fz_rnd(r, 2) ? PICK(r, zp_vals) :
				(int32_t)fz_rnd(r, 384) - 128;
		break;
	case 10:
		d->quant_va = pick_va(r, d->quant_va, 4);
		break;
	case 11:
		if (fz_rnd(r, 4) == 0)
			d->reserved[fz_rnd(r, 3)] = 1ull << fz_rnd(r, 64);
		else
			d->dims[j] = d->dims[j] ? d->dims[j] * 2 : 1;
		break;
	case 12:
		if (d->rank >= 2 && d->rank <= VNPU_MAX_RANK) {
			int a = (int)fz_rnd(r, d->rank), b = (int)fz_rnd(r, d->rank);
			uint32_t t = d->dims[a];
			uint64_t u = d->strides[a];

			d->dims[a] = d->dims[b];
			d->dims[b] = t;
			d->strides[a] = d->strides[b];
			d->strides[b] = u;
		}
		break;
	default:
		d->dims[j] = fz_rnd(r, 2) ? 1 : d->dims[j] + 1;
		break;
	}
}

static void mut_attr(struct vnpu_cmd_compute *c, uint64_t *r)
{
	uint32_t w = fz_rnd(r, 12);

	switch (fz_rnd(r, 4)) {
	case 0:
		c->attr.raw[w] = PICK(r, dim_vals);
		break;
	case 1:
		c->attr.raw[w] = pick_f32(r);
		break;
	case 2:
		/* The fields ops use: strides, dilations, pads, kernel, groups. */
		c->attr.raw[fz_rnd(r, 10)] = fz_rnd(r, 6);
		break;
	default:
		c->attr.raw[fz_rnd(r, 10)] = fz_rnd(r, 3) ? 1 + fz_rnd(r, 8) :
					     fz_rnd(r, 70000);
	}
}

static void mut_misc(struct vnpu_cmd_compute *c, uint64_t *r)
{
	switch (fz_rnd(r, 8)) {
	case 0:
		c->act = (uint8_t)(fz_rnd(r, 8) ? fz_rnd(r, VNPU_ACT_COUNT + 1) :
				   fz_rnd(r, 256));
		if (c->act == VNPU_ACT_LEAKY_RELU && fz_rnd(r, 2))
			c->act_alpha = fz_f2u(fz_rndf(r, -2.0f, 2.0f));
		else if (c->act != VNPU_ACT_LEAKY_RELU && fz_rnd(r, 2))
			c->act_alpha = 0;
		break;
	case 1:
		c->round = (uint8_t)fz_rnd(r, 3);
		break;
	case 2:
		c->act_alpha = pick_f32(r);
		break;
	case 3:
		c->hdr.opcode = (uint16_t)(fz_rnd(r, 8) ? VNPU_OP_GEMM + fz_rnd(r, VNPU_OP_LAST - VNPU_OP_GEMM + 1) :
					   fz_rnd(r, 0x10000));
		break;
	case 4:
		if (fz_rnd(r, 2))
			c->hdr.flags = (uint16_t)(1u << fz_rnd(r, 16));
		else
			c->hdr.size = fz_rnd(r, 2) ? FZ_CMD + fz_rnd(r, 9) - 4 :
				      fz_rnd(r, 0xffffffffu);
		break;
	case 5:
		c->reserved0 = (uint16_t)(1u << fz_rnd(r, 16));
		break;
	case 6:
		c->attr.activation.clip_min = pick_f32(r);
		break;
	default:
		c->attr.activation.clip_max = pick_f32(r);
		break;
	}
}

static void mut_slots(struct vnpu_cmd_compute *c, uint64_t *r)
{
	int a = (int)fz_rnd(r, VNPU_OP_SLOTS), b = (int)fz_rnd(r, VNPU_OP_SLOTS);
	struct vnpu_tensor_desc t;

	switch (fz_rnd(r, 3)) {
	case 0:
		memset(&c->t[a], 0, sizeof(c->t[a]));
		break;
	case 1:
		c->t[a] = c->t[b];
		break;
	default:
		t = c->t[a];
		c->t[a] = c->t[b];
		c->t[b] = t;
	}
}

/* Coherent dtypes for the op: the float family or the quantized one. */
static void mut_retype(struct vnpu_cmd_compute *c, uint64_t *r)
{
	bool q = fz_rnd(r, 2);
	int i;

	for (i = 0; i < VNPU_OP_SLOTS; i++) {
		struct vnpu_tensor_desc *d = &c->t[i];

		if (!fz_present(d))
			continue;
		if (i == 2 && (c->hdr.opcode == VNPU_OP_GEMM ||
			       c->hdr.opcode == VNPU_OP_CONV2D))
			d->dtype = q ? VNPU_DT_INT32 : fz_fdt(r);
		else if (i == 3 && fz_rnd(r, 3) == 0)
			d->dtype = fz_rnd(r, 2) ? fz_fdt(r) : fz_q8(r);
		else
			d->dtype = q ? fz_q8(r) : fz_fdt(r);
		if (i == 3 && q && fz_rnd(r, 8) == 0)
			d->dtype = VNPU_DT_INT32;
		fz_fix_quant(d, r, true);
	}
	if (c->t[3].dtype == VNPU_DT_INT32) {
		c->act = 0;
		c->act_alpha = 0;
	}
}

static void mut_hdr(struct fz_hdr *h, uint64_t *r)
{
	switch (fz_rnd(r, 8)) {
	case 7:
		h->arena = (uint8_t)(fz_rnd(r, 4) ? fz_rnd(r, 2) * FZ_ARENA_DEVICE :
				     FZ_ARENA_SMALL | fz_rnd(r, 128));
		break;
	case 0:
		h->mode ^= (uint8_t)(1u << fz_rnd(r, 3));
		break;
	case 1:
		h->kernel = (uint8_t)fz_rnd(r, 4);
		break;
	case 2:
		h->abort_after = (uint8_t)(fz_rnd(r, 3) ? 0 : 1 + fz_rnd(r, 16));
		break;
	case 3:
		h->misalign = (uint8_t)fz_rnd(r, 64);
		break;
	case 4:
		h->size = fz_rnd(r, 8) ? 0 : fz_rnd(r, 2) ? FZ_CMD + fz_rnd(r, 9) - 4 :
			  fz_rnd(r, 2048);
		break;
	case 5:
		h->seed = fz_next(r);
		break;
	default:
		h->data_off = fz_rnd(r, FZ_MEM);
		break;
	}
}

/* One round of structured mutations. */
static void mutate(struct fz_hdr *h, struct vnpu_cmd_compute *c, uint64_t *r)
{
	int n, i;

	switch (fz_rnd(r, 12)) {
	case 0:
		fz_gen(c, r, VNPU_OP_GEMM + fz_rnd(r, VNPU_OP_LAST - VNPU_OP_GEMM + 1), fz_rnd(r, 4) == 0);
		break;
	case 1:
		mut_hdr(h, r);
		break;
	case 2:
		fz_fix_shapes(c, r);
		fz_layout(c, r);
		break;
	case 3:
		fz_layout(c, r);
		break;
	default:
		n = 1 + (int)fz_rnd(r, 3);
		for (i = 0; i < n; i++) {
			switch (fz_rnd(r, 10)) {
			case 0:
			case 1:
			case 2:
			case 3:
				mut_tensor(c, r);
				break;
			case 4:
			case 5:
				mut_attr(c, r);
				break;
			case 6:
				mut_misc(c, r);
				break;
			case 7:
				mut_slots(c, r);
				break;
			case 8:
				mut_retype(c, r);
				break;
			default:
				mut_hdr(h, r);
				break;
			}
		}
		if (fz_rnd(r, 2) == 0) {
			fz_fix_shapes(c, r);
			if (fz_rnd(r, 4))
				fz_layout(c, r);
		}
	}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	uint64_t r = seed * 0x2545f4914f6cdd1dull + size;
	struct vnpu_cmd_compute c, c0, cc;
	struct vnpu_op_info info;
	struct fz_hdr h, h0;
	int t, tries;

	if (max_size < FZ_HDR + FZ_CMD)
		return LLVMFuzzerMutate(data, size, max_size);
	if (size < FZ_HDR + FZ_CMD) {
		memset(data + size, 0, FZ_HDR + FZ_CMD - size);
		size = FZ_HDR + FZ_CMD;
	}
	switch (fz_rnd(&r, 20)) {
	case 0:		/* bytes, anywhere */
		return LLVMFuzzerMutate(data, size, max_size);
	case 1:		/* bytes of the command only */
		LLVMFuzzerMutate(data + FZ_HDR, FZ_CMD, FZ_CMD);
		return size;
	case 2:		/* the trailing data */
		return FZ_HDR + FZ_CMD +
		       LLVMFuzzerMutate(data + FZ_HDR + FZ_CMD, size - FZ_HDR - FZ_CMD,
					max_size - FZ_HDR - FZ_CMD < FZ_DATA_MAX ?
					max_size - FZ_HDR - FZ_CMD : FZ_DATA_MAX);
	default:
		break;
	}
	memcpy(&h0, data, FZ_HDR);
	memcpy(&c0, data + FZ_HDR, FZ_CMD);
	/*
	 * Half the time insist (within a few tries) on a command the device
	 * accepts, so that most inputs reach the engine; the rest probe the
	 * checker.
	 */
	tries = fz_rnd(&r, 2) ? 8 : 1;
	for (t = 0; t < tries; t++) {
		h = h0;
		c = c0;
		mutate(&h, &c, &r);
		if (vnpu_op_check(&c, FZ_CMD, &cc, &info) == 0)
			break;
	}
	memcpy(data, &h, FZ_HDR);
	memcpy(data + FZ_HDR, &c, FZ_CMD);
	return size;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed)
{
	uint64_t r = seed * 0x9e3779b97f4a7c15ull;
	struct vnpu_cmd_compute a, b;
	size_t n = s1 < max_out ? s1 : max_out;

	if (n < FZ_HDR + FZ_CMD || s2 < FZ_HDR + FZ_CMD) {
		memcpy(out, d1, n);
		return n;
	}
	memcpy(out, d1, n);
	memcpy(&a, d1 + FZ_HDR, FZ_CMD);
	memcpy(&b, d2 + FZ_HDR, FZ_CMD);
	switch (fz_rnd(&r, 4)) {
	case 0:
		a.attr = b.attr;
		break;
	case 1:
		memcpy(out, d2, FZ_HDR);
		break;
	default: {
		int i = (int)fz_rnd(&r, VNPU_OP_SLOTS);

		a.t[i] = b.t[fz_rnd(&r, 2) ? i : (int)fz_rnd(&r, VNPU_OP_SLOTS)];
		if (fz_rnd(&r, 2))
			fz_fix_shapes(&a, &r);
	}
	}
	memcpy(out + FZ_HDR, &a, FZ_CMD);
	return n;
}
