// SPDX-License-Identifier: MIT
/*
 * The scratch arena and the run context of vnpu_run.h.
 *
 * Written here rather than taken from a library because what it must
 * guarantee is narrow and unusual: a hard cap that no request size can
 * get past, release of a whole command's scratch in O(1), and memory
 * handed back to the OS between commands, with no locking (one arena per
 * engine thread).  glib's and glibc's allocators give none of the three.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vnpu_run.h"

/*
 * Under AddressSanitizer the arena poisons what is not handed out, so an
 * access past an allocation is caught as it would be with malloc: the
 * alignment slack after each block, and every byte of the previous
 * command's scratch until it is allocated again.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define arena_poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define arena_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define arena_poison(p, n)	((void)(p), (void)(n))
#define arena_unpoison(p, n)	((void)(p), (void)(n))
#endif

#define ARENA_ALIGN	64
/*
 * Kept resident across commands, so that the commands of a typical model
 * never fault pages in or pay for madvise() (measured: about 10 ms to
 * hand back 140 MiB).
 */
#define ARENA_KEEP	(64u << 20)

struct vnpu_arena {
	uint8_t *base;
	size_t cap;
	size_t used;
	size_t high;	/* bytes touched since the last trim */
	size_t peak;
	bool exhausted;
};

struct vnpu_arena *vnpu_arena_new(size_t cap)
{
	struct vnpu_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	cap = (cap + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
	/*
	 * Reserve address space only: pages are committed when a command
	 * first touches them, so an idle engine costs nothing.
	 */
	a->base = mmap(NULL, cap ? cap : ARENA_ALIGN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->base == MAP_FAILED) {
		free(a);
		return NULL;
	}
	a->cap = cap;
	return a;
}

void vnpu_arena_free(struct vnpu_arena *a)
{
	if (!a)
		return;
	munmap(a->base, a->cap ? a->cap : ARENA_ALIGN);
	free(a);
}

void *vnpu_arena_alloc(struct vnpu_arena *a, size_t size)
{
	size_t need;
	void *p;

	if (!size)
		size = 1;
	/* Round up without overflow: size is whatever a command implied. */
	if (size > a->cap - a->used ||
	    (need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1)) >
	    a->cap - a->used) {
		a->exhausted = true;
		return NULL;
	}
	p = a->base + a->used;
	arena_unpoison(p, size);
	arena_poison((uint8_t *)p + size, need - size);
	a->used += need;
	if (a->used > a->high)
		a->high = a->used;
	if (a->used > a->peak)
		a->peak = a->used;
	return p;
}

void vnpu_arena_reset(struct vnpu_arena *a)
{
	arena_poison(a->base, a->high);
	if (a->high > ARENA_KEEP) {
		/* Hand a large command's pages back; they read as zero later. */
		madvise(a->base + ARENA_KEEP, a->high - ARENA_KEEP, MADV_DONTNEED);
		a->high = ARENA_KEEP;
	}
	a->used = 0;
	a->exhausted = false;
}

size_t vnpu_arena_cap(const struct vnpu_arena *a)
{
	return a->cap;
}

size_t vnpu_arena_peak(const struct vnpu_arena *a)
{
	return a->peak;
}

bool vnpu_arena_exhausted(const struct vnpu_arena *a)
{
	return a->exhausted;
}

void *vnpu_run_alloc(struct vnpu_run_ctx *x, size_t size)
{
	if (x && x->arena)
		return vnpu_arena_alloc(x->arena, size);
	return malloc(size ? size : 1);
}

void *vnpu_run_calloc(struct vnpu_run_ctx *x, size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	p = vnpu_run_alloc(x, bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

void vnpu_run_free(struct vnpu_run_ctx *x, void *p)
{
	if (!x || !x->arena)
		free(p);
}

size_t vnpu_run_mark(const struct vnpu_run_ctx *x)
{
	return x && x->arena ? x->arena->used : 0;
}

void vnpu_run_release(struct vnpu_run_ctx *x, size_t mark)
{
	struct vnpu_arena *a = x ? x->arena : NULL;

	if (!a || mark > a->used)
		return;
	arena_poison(a->base + mark, a->used - mark);
	a->used = mark;
}
