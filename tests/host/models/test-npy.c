// SPDX-License-Identifier: MIT
/*
 * The .npy reader/writer (libnpu/tools/npy.c) against files written the
 * way numpy writes them, and against hostile ones: every malformed header
 * must give a negative errno, never a crash or a huge allocation (this
 * runs under ASan/UBSan).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npy.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char dir[PATH_MAX];
static char path[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/npy-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/a.npy", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_bytes(const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/*
 * A version 1.0 file with @header as the dict (padded as numpy pads it)
 * followed by @data_len bytes of data.
 */
static void write_npy(const char *header, size_t data_len)
{
	size_t hl = strlen(header), total = (10 + hl + 1 + 63) / 64 * 64;
	unsigned char *buf = calloc(1, total + data_len);

	assert_non_null(buf);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)((total - 10) & 0xff);
	buf[9] = (unsigned char)((total - 10) >> 8);
	memcpy(buf + 10, header, hl);
	memset(buf + 10 + hl, ' ', total - 11 - hl);
	buf[total - 1] = '\n';
	for (size_t i = 0; i < data_len; i++)
		buf[total + i] = (unsigned char)i;
	write_bytes(buf, total + data_len);
	free(buf);
}

static int load_header(const char *header, size_t data_len)
{
	struct npy_array a;
	int ret;

	write_npy(header, data_len);
	ret = npy_load(path, &a);
	if (ret == 0) {
		assert_non_null(a.data);
		npy_free(&a);
	} else {
		assert_null(a.data);
		assert_int_equal(a.rank, 0);
	}
	return ret;
}

static void test_numpy_written(void **state)
{
	struct npy_array a;

	(void)state;
	/* Byte for byte what numpy.save writes for np.arange(6, dtype='<f4').reshape(2, 3). */
	write_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
	assert_int_equal(npy_load(path, &a), 0);
	assert_int_equal(a.type, NPY_F32);
	assert_int_equal(a.rank, 2);
	assert_int_equal(a.dims[0], 2);
	assert_int_equal(a.dims[1], 3);
	assert_int_equal(a.bytes, 24);
	assert_int_equal(((unsigned char *)a.data)[23], 23);
	npy_free(&a);
	assert_null(a.data);

	/* Keys in another order, double quotes, no trailing comma. */
	write_npy("{\"shape\": (5,), \"fortran_order\": False, \"descr\": \"|u1\"}", 5);
	assert_int_equal(npy_load(path, &a), 0);
	assert_int_equal(a.type, NPY_U8);
	assert_int_equal(a.rank, 1);
	assert_int_equal(a.dims[0], 5);
	npy_free(&a);

	/* A scalar, and an empty array. */
	assert_int_equal(load_header("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 8), 0);
	assert_int_equal(load_header("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 7), }", 0), 0);
	/* Fortran order of rank 1 is the same layout as C order. */
	assert_int_equal(load_header("{'descr': '<f2', 'fortran_order': True, 'shape': (3,), }", 6), 0);
	/* Python 2 numpy wrote longs with an L suffix. */
	assert_int_equal(load_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2L, 2L), }", 4), 0);
}

static void test_version2(void **state)
{
	const char *h = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
	size_t hl = strlen(h), total = (12 + hl + 1 + 63) / 64 * 64;
	unsigned char buf[256] = { 0 };
	struct npy_array a;

	(void)state;
	memcpy(buf, "\x93NUMPY\x02\x00", 8);
	buf[8] = (unsigned char)(total - 12);
	memcpy(buf + 12, h, hl);
	memset(buf + 12 + hl, ' ', total - 13 - hl);
	buf[total - 1] = '\n';
	write_bytes(buf, total + 12);
	assert_int_equal(npy_load(path, &a), 0);
	assert_int_equal(a.type, NPY_I32);
	assert_int_equal(a.dims[0], 3);
	npy_free(&a);
}

static void test_roundtrip(void **state)
{
	static const enum npy_type types[] = { NPY_F32, NPY_F16, NPY_I8, NPY_U8,
					       NPY_I32, NPY_I64, NPY_BOOL, NPY_F64,
					       NPY_I16, NPY_U16, NPY_U32, NPY_U64 };
	static const size_t sizes[] = { 4, 2, 1, 1, 4, 8, 1, 8, 2, 2, 4, 8 };

	(void)state;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (int rank = 0; rank <= NPY_MAX_RANK; rank++) {
			struct npy_array a = { .type = types[t], .rank = rank }, b;
			size_t n = 1;

			for (int i = 0; i < rank; i++) {
				a.dims[i] = 1 + (i % 3);
				n *= (size_t)a.dims[i];
			}
			a.bytes = n * sizes[t];
			a.data = malloc(a.bytes);
			assert_non_null(a.data);
			for (size_t i = 0; i < a.bytes; i++)
				((unsigned char *)a.data)[i] = (unsigned char)(i * 7 + t);
			assert_int_equal(npy_save(path, &a), 0);
			assert_int_equal(npy_load(path, &b), 0);
			assert_int_equal(b.type, a.type);
			assert_int_equal(b.rank, rank);
			assert_memory_equal(b.dims, a.dims, sizeof(a.dims[0]) * (size_t)rank);
			assert_int_equal(b.bytes, a.bytes);
			assert_memory_equal(b.data, a.data, a.bytes);
			npy_free(&b);
			free(a.data);
		}
	}
}

static void test_save_file_format(void **state)
{
	float v[3] = { 1, 2, 3 };
	struct npy_array a = { .type = NPY_F32, .rank = 1, .dims = { 3 }, .data = v, .bytes = 12 };
	char buf[128];
	struct stat st;
	/* numpy pads the preamble and header to a multiple of 64 bytes so the
	 * data is aligned: 10 + 58 bytes become 128. */
	FILE *f;

	(void)state;
	assert_int_equal(npy_save(path, &a), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 128 + 12);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, 128, f), 128);
	fclose(f);
	assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
	assert_memory_equal(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
			    strlen("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
	assert_int_equal(buf[127], '\n');
	assert_int_equal(buf[126], ' ');
}

static void test_save_rejects(void **state)
{
	char v[16] = { 0 };
	struct npy_array a = { .type = NPY_F32, .rank = 1, .dims = { 4 }, .data = v, .bytes = 16 };

	(void)state;
	unlink(path);
	assert_int_equal(npy_save(path, NULL), -EINVAL);
	a.bytes = 15;
	assert_int_equal(npy_save(path, &a), -EINVAL);
	a.bytes = 16;
	a.rank = NPY_MAX_RANK + 1;
	assert_int_equal(npy_save(path, &a), -EINVAL);
	a.rank = 1;
	a.dims[0] = -4;
	assert_int_equal(npy_save(path, &a), -EINVAL);
	a.dims[0] = 4;
	a.type = (enum npy_type)99;
	assert_int_equal(npy_save(path, &a), -EINVAL);
	a.type = NPY_F32;
	a.data = NULL;
	assert_int_equal(npy_save(path, &a), -EINVAL);
	a.data = v;
	a.rank = 3;
	a.dims[0] = INT64_MAX;
	a.dims[1] = INT64_MAX;
	a.dims[2] = 4;
	assert_int_equal(npy_save(path, &a), -EFBIG);
	/* Nothing was left behind by the failures. */
	assert_int_equal(access(path, F_OK), -1);
	snprintf(v, sizeof(v), "x");
	a.rank = 1;
	a.dims[0] = 4;
	assert_int_equal(npy_save("/nonexistent-dir/a.npy", &a), -ENOENT);
}

static void test_malformed_headers(void **state)
{
	static const struct {
		const char *header;
		size_t data;
		int err;
	} cases[] = {
		{ "", 0, -EINVAL },
		{ "{", 0, -EINVAL },
		{ "{}", 0, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False}", 4, -EINVAL },
		{ "{'descr': '<f4', 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4, -EINVAL },
		{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} trailing", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': 1}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2}", 8, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 8, -EINVAL },
		{ "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", 4, -EINVAL },
		/* data size disagrees with the shape */
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 4, -EINVAL },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 12, -EINVAL },
		/* valid, but not handled */
		{ "{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", 4, -ENOTSUP },
		{ "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", 8, -ENOTSUP },
		{ "{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", 12, -ENOTSUP },
		{ "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4, -ENOTSUP },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16, -ENOTSUP },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4, -ENOTSUP },
		/* huge: overflowing dims, overflowing products, beyond the size cap */
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 4, -EFBIG },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", 4, -EFBIG },
		{ "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 4, -EFBIG },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536)}", 4, -EFBIG },
		{ "{'descr': '|u1', 'fortran_order': False, 'shape': (1073741825,)}", 4, -EFBIG },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = load_header(cases[i].header, cases[i].data);

		if (ret != cases[i].err)
			fail_msg("case %zu (%s): got %d, want %d", i, cases[i].header, ret, cases[i].err);
	}
}

static void test_malformed_preamble(void **state)
{
	unsigned char buf[128];
	struct npy_array a;

	(void)state;
	/* empty and truncated files */
	write_bytes("", 0);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	write_bytes("\x93NUMP", 5);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	/* wrong magic */
	write_bytes("\x93NUMPZ\x01\x00\x00\x00", 10);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	/* unknown versions */
	write_bytes("\x93NUMPY\x04\x00\x10\x00", 10);
	assert_int_equal(npy_load(path, &a), -ENOTSUP);
	write_bytes("\x93NUMPY\x01\x01\x10\x00", 10);
	assert_int_equal(npy_load(path, &a), -ENOTSUP);
	/* zero-length header, header longer than the file */
	write_bytes("\x93NUMPY\x01\x00\x00\x00", 10);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	write_bytes("\x93NUMPY\x01\x00\xff\x7f{}", 12);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	/* a 2.0 header claiming 4 GiB */
	write_bytes("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	/* a NUL inside the header */
	memcpy(buf, "\x93NUMPY\x01\x00\x06\x00{}\0  \n", 16);
	write_bytes(buf, 16);
	assert_int_equal(npy_load(path, &a), -EINVAL);
	/* not a regular file, missing file */
	assert_int_equal(npy_load(dir, &a), -EINVAL);
	snprintf((char *)buf, sizeof(buf), "%s/none.npy", dir);
	assert_int_equal(npy_load((char *)buf, &a), -ENOENT);
	assert_int_equal(npy_load(NULL, &a), -EINVAL);
	assert_int_equal(npy_load(path, NULL), -EINVAL);
	npy_free(NULL);
}

/* Random byte damage to a valid file: any result but a crash is fine, and a
 * successful load must still be self-consistent. */
static void test_random_damage(void **state)
{
	float v[12];
	struct npy_array a = { .type = NPY_F32, .rank = 3, .dims = { 2, 3, 2 }, .data = v,
			       .bytes = sizeof(v) }, b;
	unsigned char orig[512], buf[sizeof(orig)];
	unsigned int seed = 12345;
	size_t flen, hdr_len;
	int loaded = 0;
	FILE *f;

	(void)state;
	memset(v, 0, sizeof(v));
	assert_int_equal(npy_save(path, &a), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	flen = fread(orig, 1, sizeof(orig), f);
	fclose(f);
	assert_true(flen > sizeof(v) && flen < sizeof(orig));
	hdr_len = flen - sizeof(v);
	for (int iter = 0; iter < 3000; iter++) {
		size_t len = flen;
		int ret;

		memcpy(buf, orig, flen);
		for (int k = 0; k < 1 + iter % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % hdr_len] = (unsigned char)(seed >> 20);
		}
		if (iter % 5 == 0) {
			seed = seed * 1103515245u + 12345u;
			len = (seed >> 8) % flen;
		}
		write_bytes(buf, len);
		ret = npy_load(path, &b);
		if (ret == 0) {
			size_t n = 1;

			for (int i = 0; i < b.rank; i++)
				n *= (size_t)b.dims[i];
			assert_int_equal(b.bytes, sizeof(v));
			assert_true(n <= b.bytes);
			npy_free(&b);
			loaded++;
		} else {
			assert_true(ret < 0);
		}
	}
	/* Damage to the padding leaves a valid file: the loop saw both kinds. */
	assert_true(loaded > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numpy_written),
		cmocka_unit_test(test_version2),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_save_file_format),
		cmocka_unit_test(test_save_rejects),
		cmocka_unit_test(test_malformed_headers),
		cmocka_unit_test(test_malformed_preamble),
		cmocka_unit_test(test_random_damage),
	};

	return cmocka_run_group_tests_name("npy", tests, setup, teardown);
}
