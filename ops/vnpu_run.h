/* SPDX-License-Identifier: MIT */
/*
 * What one compute command may use and must obey while it runs: a scratch
 * memory budget (the engine's arena), a way to be abandoned part-way (the
 * device's abort flag), and the int8 kernel to run.  The reference and
 * the engine take the same context, so a command the engine hands to the
 * reference is bounded in the same way.
 *
 * Every command accepted by vnpu_op_check() is bounded in work by the
 * command limits (vnpu_hw_ops.h); this context makes sure that work can be
 * stopped after any VNPU_POLL_WORK units of it, and that its scratch never
 * exceeds the arena.
 */
#ifndef VNPU_RUN_H
#define VNPU_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Work units (ops.rst, "Work units": a MAC, a window tap, an element
 * moved) between two polls of the abort callback.  A unit costs at most
 * ~60 ns (ops.rst, "Cost of a work unit": an int8 tanh or a layer norm
 * over one element), so 2^13 units is under half a millisecond: a device
 * reset never waits a millisecond for abandoned work.  The fast
 * kernels work in indivisible blocks and poll after each one instead:
 * at most VNPU_POLL_BLOCK units (an fp32 sgemm block, ~1.5 ms; an int8
 * register block sweep is 1.5 M MACs, well under a millisecond).
 */
#define VNPU_POLL_WORK		(1u << 13)
/*
 * Elements of one row (SOFTMAX, LAYERNORM) between two ticks: a row may
 * be 2^16 elements of three passes, ~2 ms, too long to run unpolled.
 */
#define VNPU_ROW_CHUNK		4096u
#define VNPU_POLL_BLOCK		(1u << 26)

/* ---- Scratch arena ---------------------------------------------------- */

/*
 * One engine's scratch memory: bounce buffers, packed operands, im2col
 * rows.  A bump allocator over one reservation of @cap bytes: allocation
 * is a pointer increment, a command's scratch is released at once by
 * vnpu_arena_reset(), and no allocation can ever exceed @cap whatever a
 * command asks for.  Pages are committed on first touch, and reset hands
 * back to the OS whatever one command used beyond a small resident part.
 * One arena serves one thread at a time.
 */
struct vnpu_arena;

/* NULL if @cap bytes of address space cannot be reserved. */
struct vnpu_arena *vnpu_arena_new(size_t cap);
void vnpu_arena_free(struct vnpu_arena *a);
/* 64-byte aligned, uninitialised; NULL (and ->exhausted) past the cap. */
void *vnpu_arena_alloc(struct vnpu_arena *a, size_t size);
/* Release everything allocated since the last reset. */
void vnpu_arena_reset(struct vnpu_arena *a);
size_t vnpu_arena_cap(const struct vnpu_arena *a);
/* Largest total in use between two resets since the arena was made. */
size_t vnpu_arena_peak(const struct vnpu_arena *a);
/* An allocation failed since the last reset: the command needed more. */
bool vnpu_arena_exhausted(const struct vnpu_arena *a);

/* ---- int8 GEMM kernels ------------------------------------------------ */

enum vnpu_i8_kernel {
	VNPU_I8_AUTO = -1,	/* the best one this CPU has */
	VNPU_I8_GENERIC,	/* portable C */
	VNPU_I8_AVX2,		/* int16 widening + vpmaddwd */
	VNPU_I8_VNNI,		/* AVX-512 vpdpbusd */
	VNPU_I8_NKERNELS
};

bool vnpu_i8_kernel_available(enum vnpu_i8_kernel k);
/* "generic", "avx2", "avx512-vnni"; "auto" for VNPU_I8_AUTO. */
const char *vnpu_i8_kernel_id(enum vnpu_i8_kernel k);
/* The kernel @id names, or -EINVAL. */
int vnpu_i8_kernel_parse(const char *id, enum vnpu_i8_kernel *k);
/* @want if the CPU has it, else the best one it has. */
enum vnpu_i8_kernel vnpu_i8_kernel_resolve(enum vnpu_i8_kernel want);

/* ---- Run context ------------------------------------------------------- */

/*
 * Which of the engine's kernels ran a command (vnpu_engine_run() records
 * it in the run context).  Tests count these to show that their random
 * cases reach each kernel: a case that falls back to the reference only
 * compares the reference with itself.
 */
enum vnpu_eng_path {
	VNPU_ENG_NONE,		/* not run, or rejected before any kernel */
	VNPU_ENG_REF,		/* vnpu_ref_run_ctx(): the reference itself */
	VNPU_ENG_COPY,		/* vnpu_eng_copy() */
	VNPU_ENG_ELT,		/* vnpu_eng_elt(): per-element ops */
	VNPU_ENG_POOL,		/* vnpu_eng_pool() */
	VNPU_ENG_RESIZE,	/* vnpu_eng_resize() */
	VNPU_ENG_CONVT,		/* vnpu_eng_convt() */
	VNPU_ENG_REDUCE,	/* vnpu_eng_reduce() */
	VNPU_ENG_LUT,		/* vnpu_eng_lut() */
	VNPU_ENG_SOFTMAX,	/* vnpu_eng_softmax{,_qlinear}() */
	VNPU_ENG_DW,		/* vnpu_eng_dw(): direct depthwise rows */
	VNPU_ENG_DW_GENERAL,	/* per-pixel depthwise, any channel multiplier */
	VNPU_ENG_GEMM_F32,	/* sgemm with the fused epilogue */
	VNPU_ENG_GEMM_I8,	/* the packed int8 GEMM */
	VNPU_ENG_CONV_F32,	/* vnpu_eng_conv_f32(): direct AVX-512 */
	VNPU_ENG_CONV_I8,	/* vnpu_eng_conv_i8(): direct VNNI */
	VNPU_ENG_IM2COL_F32,	/* im2col + sgemm */
	VNPU_ENG_IM2COL_I8,	/* im2col + the int8 GEMM */
	VNPU_ENG_CONVT_PHASES,	/* vnpu_eng_convt_phases(): CONV2D kernels */
	VNPU_ENG_SOFTMAX_AVX2,	/* vnpu_eng_softmax(), its AVX2 rows */
	VNPU_ENG_SOFTMAX_COLS,	/* vnpu_eng_softmax(), eight rows across an inner dim */
	VNPU_ENG_TRANSPOSE,	/* vnpu_eng_copy(), its transposing tiles */
	VNPU_ENG_LUT_AVX2,	/* vnpu_eng_lut(), its byte shuffles */
	VNPU_ENG_CONV_I8_BYTES,	/* vnpu_eng_conv_i8(): AVX2, 7-bit weights */
	VNPU_ENG_NPATHS
};

/**
 * struct vnpu_run_ctx - one command's execution context.
 * @arena: scratch budget; NULL means plain malloc() (host tools and
 *	libnpu's CPU fallback, where the caller owns the memory anyway)
 * @aborted: polled at least every VNPU_POLL_WORK work units; once it
 *	returns true the command stops where it is and its run returns
 *	-ECANCELED.  NULL: never.
 * @opaque: @aborted's argument
 * @i8_kernel: int8 GEMM kernel (VNPU_I8_AUTO: the best available)
 * @work: units done since the last poll (the runner's bookkeeping)
 * @stopped: @aborted has returned true
 * @path: set by vnpu_engine_run(): the kernel that produced the output
 *	(written once per command, read by nothing in the engine)
 */
struct vnpu_run_ctx {
	struct vnpu_arena *arena;
	bool (*aborted)(void *opaque);
	void *opaque;
	enum vnpu_i8_kernel i8_kernel;
	uint64_t work;
	bool stopped;
	enum vnpu_eng_path path;
};

/*
 * Account @work units; poll when VNPU_POLL_WORK have accumulated.  True
 * when the command must stop.  @x may be NULL (never stops).
 */
static inline bool vnpu_run_tick(struct vnpu_run_ctx *x, uint64_t work)
{
	if (!x)
		return false;
	if (x->stopped)
		return true;
	x->work += work;
	if (x->work < VNPU_POLL_WORK)
		return false;
	/*
	 * What a small tick carried past the interval counts towards the
	 * next poll (else ticks of a few hundred units would stretch the
	 * interval by up to their size); a block's worth is dropped.
	 */
	x->work = x->work < 2 * VNPU_POLL_WORK ? x->work - VNPU_POLL_WORK : 0;
	if (x->aborted && x->aborted(x->opaque))
		x->stopped = true;
	return x->stopped;
}

/* Scratch from the arena (or malloc without one); NULL on failure. */
void *vnpu_run_alloc(struct vnpu_run_ctx *x, size_t size);
/* Zeroed scratch; @n * @size checked for overflow. */
void *vnpu_run_calloc(struct vnpu_run_ctx *x, size_t n, size_t size);
/* Give back what vnpu_run_alloc() returned (a no-op for arena memory). */
void vnpu_run_free(struct vnpu_run_ctx *x, void *p);
/*
 * The arena's fill level (0 without one), and the release of every arena
 * block allocated since: the scratch of a finished sub-run that a command
 * repeats many times (vnpu_eng_convt_phases()), which would otherwise
 * pile up until the command ends.  Without an arena, vnpu_run_free() has
 * already given those blocks back and the release does nothing.
 */
size_t vnpu_run_mark(const struct vnpu_run_ctx *x);
void vnpu_run_release(struct vnpu_run_ctx *x, size_t mark);

#endif /* VNPU_RUN_H */
