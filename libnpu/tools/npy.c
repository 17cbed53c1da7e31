// SPDX-License-Identifier: MIT
/*
 * .npy reader/writer.  The header is a Python dict literal; rather than a
 * general literal parser this accepts exactly the grammar numpy writes
 * (three keys, any order, a string, a bool and a tuple of integers), which
 * is all that is needed and leaves nothing ambiguous for hostile input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* mkstemp, fchmod under -std=c11 */
#endif
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* numpy itself refuses headers above 10 000 bytes by default. */
#define NPY_MAX_HEADER 65536u
/* Far above any model tensor here, low enough that a lying header cannot
 * make a small guest allocate its memory away. */
#define NPY_MAX_BYTES ((size_t)1 << 30)
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

static const struct {
	const char *descr[3];	/* spellings numpy uses for little-endian */
	enum npy_type type;
	size_t size;
} npy_types[] = {
	{ { "<f4" }, NPY_F32, 4 },
	{ { "<f2" }, NPY_F16, 2 },
	{ { "|i1", "<i1" }, NPY_I8, 1 },
	{ { "|u1", "<u1" }, NPY_U8, 1 },
	{ { "<i4" }, NPY_I32, 4 },
	{ { "<i8" }, NPY_I64, 8 },
	{ { "|b1", "<b1" }, NPY_BOOL, 1 },
	{ { "<f8" }, NPY_F64, 8 },
	{ { "<i2" }, NPY_I16, 2 },
	{ { "<u2" }, NPY_U16, 2 },
	{ { "<u4" }, NPY_U32, 4 },
	{ { "<u8" }, NPY_U64, 8 },
};

static size_t npy_elem_size(enum npy_type t)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (npy_types[i].type == t)
			return npy_types[i].size;
	return 0;
}

/* ---- header parsing ----------------------------------------------------- */

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool accept(struct cursor *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A quoted string without escapes (no key or dtype numpy writes has any). */
static int parse_str(struct cursor *c, char *buf, size_t cap)
{
	char q;
	size_t n = 0;

	skip_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return -EINVAL;
	q = *c->p++;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\\' || n + 1 >= cap)
			return -EINVAL;
		buf[n++] = *c->p++;
	}
	if (c->p >= c->end)
		return -EINVAL;
	c->p++;
	buf[n] = '\0';
	return 0;
}

static int parse_bool(struct cursor *c, bool *v)
{
	skip_ws(c);
	if ((size_t)(c->end - c->p) >= 4 && !memcmp(c->p, "True", 4)) {
		c->p += 4;
		*v = true;
		return 0;
	}
	if ((size_t)(c->end - c->p) >= 5 && !memcmp(c->p, "False", 5)) {
		c->p += 5;
		*v = false;
		return 0;
	}
	return -EINVAL;
}

static int parse_dim(struct cursor *c, int64_t *v)
{
	int64_t x = 0;
	bool any = false;

	skip_ws(c);
	/* numpy may write Python 2 longs as "3L"; digits only otherwise. */
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *c->p - '0', &x))
			return -EFBIG;
		c->p++;
		any = true;
	}
	if (!any)
		return -EINVAL;
	if (c->p < c->end && *c->p == 'L')
		c->p++;
	*v = x;
	return 0;
}

/* "()", "(n,)", "(a, b)", "(a, b,)" */
static int parse_shape(struct cursor *c, int64_t *dims, int *rank)
{
	int r = 0, ret;

	if (!accept(c, '('))
		return -EINVAL;
	if (accept(c, ')')) {
		*rank = 0;
		return 0;
	}
	for (;;) {
		if (r == NPY_MAX_RANK)
			return -ENOTSUP;
		ret = parse_dim(c, &dims[r]);
		if (ret)
			return ret;
		r++;
		if (accept(c, ')'))
			break;
		if (!accept(c, ','))
			return -EINVAL;
		if (accept(c, ')'))
			break;
	}
	/* Python's one-tuple needs its trailing comma: "(3)" is not a shape. */
	*rank = r;
	return 0;
}

static int parse_descr(const char *s, enum npy_type *type)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		for (size_t j = 0; j < 3 && npy_types[i].descr[j]; j++)
			if (!strcmp(s, npy_types[i].descr[j])) {
				*type = npy_types[i].type;
				return 0;
			}
	return -ENOTSUP;
}

static int parse_header(const char *h, size_t len, struct npy_array *a)
{
	struct cursor c = { h, h + len };
	bool have_descr = false, have_order = false, have_shape = false, fortran = false;
	char key[32], descr[16];
	int ret;

	if (!accept(&c, '{'))
		return -EINVAL;
	while (!accept(&c, '}')) {
		ret = parse_str(&c, key, sizeof(key));
		if (ret)
			return ret;
		if (!accept(&c, ':'))
			return -EINVAL;
		if (!strcmp(key, "descr") && !have_descr) {
			skip_ws(&c);
			/* Structured dtypes are lists: valid, but not ours. */
			if (c.p < c.end && *c.p == '[')
				return -ENOTSUP;
			ret = parse_str(&c, descr, sizeof(descr));
			have_descr = true;
		} else if (!strcmp(key, "fortran_order") && !have_order) {
			ret = parse_bool(&c, &fortran);
			have_order = true;
		} else if (!strcmp(key, "shape") && !have_shape) {
			ret = parse_shape(&c, a->dims, &a->rank);
			have_shape = true;
		} else {
			return -EINVAL;	/* unknown or repeated key */
		}
		if (ret)
			return ret;
		if (!accept(&c, ',')) {
			if (!accept(&c, '}'))
				return -EINVAL;
			break;
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return -EINVAL;
	if (!have_descr || !have_order || !have_shape)
		return -EINVAL;
	/* Only now that the syntax is known good: unsupported is not malformed. */
	ret = parse_descr(descr, &a->type);
	if (ret)
		return ret;
	/* A Fortran-order array of rank <= 1 has the same bytes as C order. */
	if (fortran && a->rank > 1)
		return -ENOTSUP;
	return 0;
}

static int array_bytes(const struct npy_array *a, size_t *bytes)
{
	size_t n = npy_elem_size(a->type);

	if (!n || a->rank < 0 || a->rank > NPY_MAX_RANK)
		return -EINVAL;
	for (int i = 0; i < a->rank; i++) {
		if (a->dims[i] < 0)
			return -EINVAL;
		if ((uint64_t)a->dims[i] > SIZE_MAX || __builtin_mul_overflow(n, (size_t)a->dims[i], &n))
			return -EFBIG;
	}
	*bytes = n;
	return 0;
}

/* ---- I/O ------------------------------------------------------------------ */

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EINVAL;	/* truncated */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int load_fd(int fd, struct npy_array *a)
{
	unsigned char pre[12];
	size_t hlen, pre_len, bytes;
	struct stat st;
	char *hdr;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	ret = read_full(fd, pre, 10);
	if (ret)
		return ret;
	if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN))
		return -EINVAL;
	switch (pre[6]) {
	case 1:
		hlen = pre[8] | (size_t)pre[9] << 8;
		pre_len = 10;
		break;
	case 2:
	case 3:	/* 3.0 only allows UTF-8 in field names, which we reject anyway */
		ret = read_full(fd, pre + 10, 2);
		if (ret)
			return ret;
		hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
		pre_len = 12;
		break;
	default:
		return -ENOTSUP;
	}
	if (pre[7] != 0)
		return -ENOTSUP;
	if (hlen == 0 || hlen > NPY_MAX_HEADER)
		return -EINVAL;
	hdr = malloc(hlen);
	if (!hdr)
		return -ENOMEM;
	ret = read_full(fd, hdr, hlen);
	if (!ret && memchr(hdr, '\0', hlen))
		ret = -EINVAL;
	if (!ret)
		ret = parse_header(hdr, hlen, a);
	free(hdr);
	if (ret)
		return ret;
	ret = array_bytes(a, &bytes);
	if (ret)
		return ret;
	if (bytes > NPY_MAX_BYTES)
		return -EFBIG;
	/* The file must hold exactly the data the shape promises: checking
	 * before allocating keeps a lying header from costing memory. */
	if ((uint64_t)st.st_size != pre_len + hlen + bytes)
		return -EINVAL;
	a->data = malloc(bytes ? bytes : 1);
	if (!a->data)
		return -ENOMEM;
	a->bytes = bytes;
	return read_full(fd, a->data, bytes);
}

int npy_load(const char *path, struct npy_array *out)
{
	struct npy_array a;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = load_fd(fd, &a);
	close(fd);
	if (ret) {
		free(a.data);
		return ret;
	}
	*out = a;
	return 0;
}

static const char *descr_of(enum npy_type t)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (npy_types[i].type == t)
			return npy_types[i].descr[0];
	return NULL;
}

int npy_save(const char *path, const struct npy_array *a)
{
	char hdr[256 + NPY_MAX_RANK * 24], tmp[PATH_MAX];
	size_t bytes, len, total;
	const char *descr;
	int n, fd, ret;

	if (!path || !a)
		return -EINVAL;
	descr = descr_of(a->type);
	if (!descr)
		return -EINVAL;
	ret = array_bytes(a, &bytes);
	if (ret)
		return ret;
	if (bytes != a->bytes || (bytes && !a->data))
		return -EINVAL;

	/* Leave room for the 10-byte preamble; numpy pads to 64 bytes. */
	n = snprintf(hdr + 10, sizeof(hdr) - 10, "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     descr);
	len = 10 + (size_t)n;
	for (int i = 0; i < a->rank; i++) {
		n = snprintf(hdr + len, sizeof(hdr) - len, "%lld,%s", (long long)a->dims[i],
			     i + 1 < a->rank ? " " : "");
		len += (size_t)n;
	}
	/* "(3,)" keeps the one-tuple comma; drop it for higher ranks. */
	if (a->rank > 1)
		len--;
	n = snprintf(hdr + len, sizeof(hdr) - len, "), }");
	len += (size_t)n;
	total = (len + 1 + 63) / 64 * 64;
	memset(hdr + len, ' ', total - 1 - len);
	hdr[total - 1] = '\n';
	memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
	hdr[6] = 1;
	hdr[7] = 0;
	hdr[8] = (char)((total - 10) & 0xff);
	hdr[9] = (char)((total - 10) >> 8);

	n = snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	ret = write_full(fd, hdr, total);
	if (!ret)
		ret = write_full(fd, a->data, bytes);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

void npy_free(struct npy_array *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof(*a));
}
