// SPDX-License-Identifier: MIT
/*
 * The importer's name tables (struct oi_names): node outputs to their
 * producers, and the names nodes read, so that ordering the nodes and
 * asking who reads a name take constant time per name instead of a scan
 * of the graph (100,000 chained nodes took 102 s that way).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

/* FNV-1a, finalized: the one hash of every name table of the importer. */
uint64_t oi_name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	/*
	 * FNV's low bits, which pick the slot, vary little across names
	 * like t1 ... t99999: murmur3's finalizer spreads the high ones.
	 */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

int oi_names_init(struct oi_names *t, size_t max_entries)
{
	size_t cap = 16;

	memset(t, 0, sizeof(*t));
	while (cap < 2 * max_entries) {
		if (cap > SIZE_MAX / 4 / sizeof(*t->key))
			return -ENOMEM;
		cap *= 2;
	}
	t->key = calloc(cap, sizeof(*t->key));
	t->val = calloc(cap, sizeof(*t->val));
	if (!t->key || !t->val) {
		oi_names_free(t);
		return -ENOMEM;
	}
	t->cap = cap;
	return 0;
}

void oi_names_free(struct oi_names *t)
{
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof(*t));
}

/* The slot of @name, or the empty slot where it would go. */
static size_t slot(const struct oi_names *t, const char *name)
{
	size_t i = oi_name_hash(name) & (t->cap - 1);

	while (t->key[i] && strcmp(t->key[i], name))
		i = (i + 1) & (t->cap - 1);
	return i;
}

uint32_t *oi_names_get(const struct oi_names *t, const char *name)
{
	size_t i;

	if (!t->cap || !name)
		return NULL;
	i = slot(t, name);
	return t->key[i] ? &t->val[i] : NULL;
}

uint32_t *oi_names_put(struct oi_names *t, const char *name, uint32_t val)
{
	size_t i;

	if (!t->cap || !name)
		return NULL;
	i = slot(t, name);
	if (!t->key[i]) {
		/* half empty at least, so that every probe ends */
		if (2 * (t->n + 1) > t->cap)
			return NULL;
		t->n++;
		t->key[i] = name;
		t->val[i] = val;
	}
	return &t->val[i];
}
