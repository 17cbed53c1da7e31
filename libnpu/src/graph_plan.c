// SPDX-License-Identifier: MIT
/*
 * The arena plan: offsets for the storage of every internal value, so
 * that values whose lifetimes do not overlap share memory.
 *
 * Two planners.  The first places the biggest value first, each at the
 * lowest offset free for the whole of its lifetime: it gives the smallest
 * arenas for real models, and its cost is the number of pairs of values
 * that are live at the same time (a chain of n ops has about n such pairs).
 * A graph with many values live at once (a value read by thousands of
 * nodes, thousands of parallel branches) has up to n^2/2 pairs; beyond a
 * budget the second planner sweeps over time instead and reuses freed
 * blocks first-fit, at a cost that does not depend on the pairs.
 *
 * Lifetimes are closed intervals of step positions: a value's last reader
 * and the next value's writer are different steps, so two values overlap
 * when they share a step and an op never writes over its own inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_compile.h"

/*
 * The device computes on an operand in place only when its bytes are one
 * physically contiguous run; otherwise it copies the operand through a
 * bounce buffer on every command (Documentation/bench.rst, "Where the
 * device time goes").  The driver backs a device arena with 2 MiB huge
 * pages that are rarely neighbours, so the first planner keeps every
 * value of at most that size inside one of them; a bigger value is
 * bounced anyway.  The arena grows by the gaps this leaves, only once it
 * is larger than one huge page.  The second planner, for graphs too wide
 * for the first, places values without this rule.
 */
#define PLAN_RUN_BYTES		(2u << 20)

/* Overlapping pairs the first planner may visit: 16 MB of adjacency. */
#define PLAN_PAIRS_BASE		(1u << 20)
#define PLAN_PAIRS_PER_VALUE	8u

static int by_size_desc(const void *a, const void *b)
{
	const struct lifetime *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->root < y->root ? -1 : x->root > y->root;
}

/*
 * A lifetime's index in the size order and a key to sort it by: the size
 * order breaks ties, so every order below is total and the same on every
 * libc.
 */
struct keyed {
	uint64_t key;
	uint32_t idx;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Step positions start at -1 (graph inputs). */
static uint64_t step_key(int64_t step)
{
	return (uint64_t)(step + 1);
}

/*
 * @ord: the lifetimes by first step.  A pair (ord[i], ord[j]), i < j,
 * overlaps exactly when ord[j] starts no later than ord[i] ends, so the
 * scans below visit each overlapping pair once and nothing else.
 * Counts at most @budget + 1 of them.
 */
static uint64_t count_pairs(const struct lifetime *lt, const struct keyed *ord,
			    size_t n, uint64_t budget)
{
	uint64_t pairs = 0;
	size_t i, j;

	for (i = 0; i < n && pairs <= budget; i++)
		for (j = i + 1; j < n && lt[ord[j].idx].first <= lt[ord[i].idx].last &&
		     pairs <= budget; j++)
			pairs++;
	return pairs;
}

/* @off, or the next huge-page boundary if @bytes would cross one there. */
static uint64_t within_run(uint64_t off, uint64_t bytes)
{
	if (bytes && bytes <= PLAN_RUN_BYTES &&
	    off / PLAN_RUN_BYTES != (off + bytes - 1) / PLAN_RUN_BYTES)
		return npu__align_up(off, PLAN_RUN_BYTES);
	return off;
}

static int plan_by_size(struct lifetime *lt, const struct keyed *ord, size_t n,
			uint64_t pairs, uint64_t *total)
{
	size_t *start = calloc(n + 1, sizeof(*start));
	size_t *fill = calloc(n + 1, sizeof(*fill));
	uint32_t *adj = malloc((pairs ? pairs : 1) * 2 * sizeof(*adj));
	struct keyed *cl = malloc((n ? n : 1) * sizeof(*cl));
	uint8_t *placed = calloc(n ? n : 1, 1);
	uint64_t end = 0;
	size_t i, j;
	int ret = -ENOMEM;

	if (!start || !fill || !adj || !cl || !placed)
		goto out;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n && lt[ord[j].idx].first <= lt[ord[i].idx].last; j++) {
			start[ord[i].idx + 1]++;
			start[ord[j].idx + 1]++;
		}
	for (i = 0; i < n; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n && lt[ord[j].idx].first <= lt[ord[i].idx].last; j++) {
			uint32_t a = ord[i].idx, b = ord[j].idx;

			adj[start[a] + fill[a]++] = b;
			adj[start[b] + fill[b]++] = a;
		}
	/* @lt is by size: place in index order, among the placed overlaps. */
	for (i = 0; i < n; i++) {
		uint64_t off = within_run(0, lt[i].bytes);
		size_t m = 0, k;

		for (k = start[i]; k < start[i + 1]; k++)
			if (placed[adj[k]])
				cl[m++] = (struct keyed){ lt[adj[k]].offset, adj[k] };
		qsort(cl, m, sizeof(*cl), by_key);
		for (k = 0; k < m; k++) {
			const struct lifetime *p = &lt[cl[k].idx];

			if (off + lt[i].bytes <= p->offset)
				break;
			if (p->offset + p->bytes > off)
				off = within_run(npu__align_up(p->offset + p->bytes,
							       ARENA_ALIGN),
						 lt[i].bytes);
		}
		lt[i].offset = off;
		if (off + lt[i].bytes > end)
			end = off + lt[i].bytes;
		placed[i] = 1;
	}
	*total = end;
	ret = 0;
out:
	free(start);
	free(fill);
	free(adj);
	free(cl);
	free(placed);
	return ret;
}
/* Free blocks of the arena below its top, by offset, never adjacent. */
struct free_list {
	uint64_t *off, *len;
	size_t n;
};

static void free_block(struct free_list *f, uint64_t off, uint64_t len)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && f->off[lo - 1] + f->len[lo - 1] == off) {
		f->len[lo - 1] += len;
		if (lo < f->n && off + len == f->off[lo]) {
			f->len[lo - 1] += f->len[lo];
			memmove(&f->off[lo], &f->off[lo + 1], (f->n - lo - 1) * sizeof(*f->off));
			memmove(&f->len[lo], &f->len[lo + 1], (f->n - lo - 1) * sizeof(*f->len));
			f->n--;
		}
		return;
	}
	if (lo < f->n && off + len == f->off[lo]) {
		f->off[lo] = off;
		f->len[lo] += len;
		return;
	}
	memmove(&f->off[lo + 1], &f->off[lo], (f->n - lo) * sizeof(*f->off));
	memmove(&f->len[lo + 1], &f->len[lo], (f->n - lo) * sizeof(*f->len));
	f->off[lo] = off;
	f->len[lo] = len;
	f->n++;
}

static uint64_t take_block(struct free_list *f, uint64_t len, uint64_t *top)
{
	uint64_t off;
	size_t i;

	for (i = 0; i < f->n && f->len[i] < len; i++)
		;
	if (i < f->n) {
		off = f->off[i];
		f->off[i] += len;
		f->len[i] -= len;
		if (!f->len[i]) {
			memmove(&f->off[i], &f->off[i + 1], (f->n - i - 1) * sizeof(*f->off));
			memmove(&f->len[i], &f->len[i + 1], (f->n - i - 1) * sizeof(*f->len));
			f->n--;
		}
		return off;
	}
	/* Grow the top, from the last free block if it ends there. */
	if (f->n && f->off[f->n - 1] + f->len[f->n - 1] == *top) {
		off = f->off[--f->n];
		*top = off + len;
		return off;
	}
	off = *top;
	*top += len;
	return off;
}

static int plan_by_time(struct lifetime *lt, const struct keyed *ord, size_t n,
			uint64_t *total)
{
	struct keyed *by_end = malloc((n ? n : 1) * sizeof(*by_end));
	struct free_list f = {
		.off = malloc((n + 1) * sizeof(*f.off)),
		.len = malloc((n + 1) * sizeof(*f.len)),
	};
	uint64_t top = 0, end = 0;
	size_t i, e = 0;
	int ret = -ENOMEM;

	if (!by_end || !f.off || !f.len)
		goto out;
	for (i = 0; i < n; i++)
		by_end[i] = (struct keyed){ step_key(lt[i].last), (uint32_t)i };
	qsort(by_end, n, sizeof(*by_end), by_key);
	for (i = 0; i < n; i++) {
		struct lifetime *l = &lt[ord[i].idx];

		/* Blocks of values that ended before this one starts. */
		while (e < n && lt[by_end[e].idx].last < l->first) {
			const struct lifetime *d = &lt[by_end[e++].idx];

			free_block(&f, d->offset, npu__align_up(d->bytes, ARENA_ALIGN));
		}
		l->offset = take_block(&f, npu__align_up(l->bytes, ARENA_ALIGN), &top);
		if (l->offset + l->bytes > end)
			end = l->offset + l->bytes;
	}
	*total = end;
	ret = 0;
out:
	free(by_end);
	free(f.off);
	free(f.len);
	return ret;
}

int npu__plan_arena(struct lifetime *lt, size_t n, uint64_t *total)
{
	uint64_t budget = PLAN_PAIRS_BASE + (uint64_t)PLAN_PAIRS_PER_VALUE * n;
	struct keyed *ord;
	uint64_t pairs;
	size_t i;
	int ret;

	*total = 0;
	if (n >= UINT32_MAX)
		return -E2BIG;
	ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!ord)
		return -ENOMEM;
	qsort(lt, n, sizeof(*lt), by_size_desc);
	for (i = 0; i < n; i++)
		ord[i] = (struct keyed){ step_key(lt[i].first), (uint32_t)i };
	qsort(ord, n, sizeof(*ord), by_key);
	pairs = count_pairs(lt, ord, n, budget);
	if (pairs <= budget)
		ret = plan_by_size(lt, ord, n, pairs, total);
	else
		ret = plan_by_time(lt, ord, n, total);
	free(ord);
	return ret;
}
