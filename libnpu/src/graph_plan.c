// SPDX-License-Identifier: MIT
/*
 * The arena plan: offsets for the storage of every internal value, so
 * that values whose lifetimes do not overlap share memory.
 */
#include <stdlib.h>

#include "graph_compile.h"

static int by_size_desc(const void *a, const void *b)
{
	const struct lifetime *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->root < y->root ? -1 : x->root > y->root;
}

static int by_offset(const void *a, const void *b)
{
	const struct lifetime *const *x = a, *const *y = b;

	return (*x)->offset < (*y)->offset ? -1 : (*x)->offset > (*y)->offset;
}

/*
 * Offsets for the internal values' storage roots: biggest first, each at
 * the lowest offset free for the whole of its lifetime (a value's last
 * reader and the next value's writer are different steps, so an op never
 * writes over its own inputs).
 */
int npu__plan_arena(struct lifetime *lt, size_t n, uint64_t *total)
{
	const struct lifetime **placed = malloc((n ? n : 1) * sizeof(*placed));
	size_t i, j, np = 0;
	uint64_t end = 0;

	if (!placed)
		return -ENOMEM;
	qsort(lt, n, sizeof(*lt), by_size_desc);
	for (i = 0; i < n; i++) {
		size_t nc = 0;
		uint64_t off = 0;

		for (j = 0; j < np; j++)
			if (placed[j]->first <= lt[i].last && lt[i].first <= placed[j]->last)
				nc++;
		{
			const struct lifetime **cl = malloc((nc ? nc : 1) * sizeof(*cl));
			size_t m = 0;

			if (!cl) {
				free(placed);
				return -ENOMEM;
			}
			for (j = 0; j < np; j++)
				if (placed[j]->first <= lt[i].last && lt[i].first <= placed[j]->last)
					cl[m++] = placed[j];
			qsort(cl, m, sizeof(*cl), by_offset);
			for (j = 0; j < m; j++) {
				if (off + lt[i].bytes <= cl[j]->offset)
					break;
				if (cl[j]->offset + cl[j]->bytes > off)
					off = npu__align_up(cl[j]->offset + cl[j]->bytes, ARENA_ALIGN);
			}
			free(cl);
		}
		lt[i].offset = off;
		if (off + lt[i].bytes > end)
			end = off + lt[i].bytes;
		placed[np++] = &lt[i];
	}
	free(placed);
	*total = end;
	return 0;
}
