// SPDX-License-Identifier: MIT
/*
 * Command builder: byte-exact encoding of every command against the
 * hardware interface, and every bounds/argument check.  Host-only command
 * buffers (no context) need no device.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "npu_internal.h"

static struct npu_cmdbuf *new_cb(size_t cap)
{
	struct npu_cmdbuf *cb = NULL;

	assert_int_equal(npu_cmdbuf_create(NULL, cap, &cb), 0);
	assert_non_null(cb);
	return cb;
}

static uint64_t le64_at(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)base + off, 8);
	return le64toh(v);
}

static uint32_t le32_at(const void *base, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)base + off, 4);
	return le32toh(v);
}

static uint16_t le16_at(const void *base, size_t off)
{
	uint16_t v;

	memcpy(&v, (const uint8_t *)base + off, 2);
	return le16toh(v);
}

static void check_hdr(const void *p, uint16_t opcode, uint32_t size)
{
	assert_int_equal(le16_at(p, 0), opcode);
	assert_int_equal(le16_at(p, 2), 0);
	assert_int_equal(le32_at(p, 4), size);
}

static void test_create(void **state)
{
	struct npu_cmdbuf *cb = NULL;

	(void)state;
	assert_int_equal(npu_cmdbuf_create(NULL, 0, &cb), -EINVAL);
	assert_int_equal(npu_cmdbuf_create(NULL, 64, NULL), -EINVAL);
	assert_int_equal(npu_cmdbuf_create(NULL, VNPU_CMD_MAX_BUFFER + 1, &cb),
			 -E2BIG);
	assert_null(cb);

	cb = new_cb(13);
	assert_int_equal(npu_cmdbuf_capacity(cb), 16);	/* rounded to 8 */
	assert_int_equal(npu_cmdbuf_size(cb), 0);
	assert_non_null(npu_cmdbuf_data(cb));
	npu_cmdbuf_destroy(cb);

	cb = new_cb(VNPU_CMD_MAX_BUFFER);
	assert_int_equal(npu_cmdbuf_capacity(cb), VNPU_CMD_MAX_BUFFER);
	npu_cmdbuf_destroy(cb);
	npu_cmdbuf_destroy(NULL);

	assert_int_equal(npu_cmdbuf_size(NULL), 0);
	assert_int_equal(npu_cmdbuf_capacity(NULL), 0);
	assert_null(npu_cmdbuf_data(NULL));
}

static void test_encode_all(void **state)
{
	struct npu_cmdbuf *cb = new_cb(4096);
	const uint8_t *d;
	size_t off = 0;

	(void)state;
	assert_int_equal(npu_cmdbuf_nop(cb, 8), 0);
	assert_int_equal(npu_cmdbuf_nop(cb, 24), 0);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x200000, 0x100000, 0x1234), 0);
	assert_int_equal(npu_cmdbuf_fill(cb, 0x300000, 64, 0xdeadbeef), 0);
	assert_int_equal(npu_cmdbuf_write_value(cb, 0x400008,
						0x0123456789abcdefull), 0);
	assert_int_equal(npu_cmdbuf_timestamp(cb, 0x500010), 0);
	assert_int_equal(npu_cmdbuf_barrier(cb), 0);

	d = npu_cmdbuf_data(cb);
	check_hdr(d + off, VNPU_CMD_NOP, 8);
	off += 8;
	check_hdr(d + off, VNPU_CMD_NOP, 24);
	assert_int_equal(le64_at(d, off + 8), 0);	/* padding is zeroed */
	assert_int_equal(le64_at(d, off + 16), 0);
	off += 24;

	assert_int_equal(sizeof(struct vnpu_cmd_copy), 32);
	check_hdr(d + off, VNPU_CMD_COPY, 32);
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_copy, src_va)),
			 0x100000);
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_copy, dst_va)),
			 0x200000);
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_copy, size)),
			 0x1234);
	off += 32;

	check_hdr(d + off, VNPU_CMD_FILL, sizeof(struct vnpu_cmd_fill));
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_fill, dst_va)),
			 0x300000);
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_fill, size)), 64);
	assert_int_equal(le32_at(d, off + offsetof(struct vnpu_cmd_fill, pattern)),
			 0xdeadbeef);
	assert_int_equal(le32_at(d, off + offsetof(struct vnpu_cmd_fill, reserved)),
			 0);
	off += sizeof(struct vnpu_cmd_fill);

	check_hdr(d + off, VNPU_CMD_WRITE_VALUE,
		  sizeof(struct vnpu_cmd_write_value));
	assert_int_equal(le64_at(d, off + offsetof(struct vnpu_cmd_write_value,
						    dst_va)), 0x400008);
	assert_true(le64_at(d, off + offsetof(struct vnpu_cmd_write_value,
					      value)) == 0x0123456789abcdefull);
	off += sizeof(struct vnpu_cmd_write_value);

	check_hdr(d + off, VNPU_CMD_TIMESTAMP, sizeof(struct vnpu_cmd_timestamp));
	assert_int_equal(le64_at(d, off + 8), 0x500010);
	off += sizeof(struct vnpu_cmd_timestamp);

	check_hdr(d + off, VNPU_CMD_BARRIER, 8);
	off += 8;

	assert_int_equal(npu_cmdbuf_size(cb), off);
	assert_int_equal(off % 8, 0);
	npu_cmdbuf_destroy(cb);
}

/* A failing append must leave size and contents untouched. */
static void test_full(void **state)
{
	struct npu_cmdbuf *cb = new_cb(40);
	uint8_t before[40];

	(void)state;
	assert_int_equal(npu_cmdbuf_copy(cb, 0x2000, 0x1000, 8), 0);
	assert_int_equal(npu_cmdbuf_size(cb), 32);
	memcpy(before, npu_cmdbuf_data(cb), 32);

	assert_int_equal(npu_cmdbuf_copy(cb, 0x2000, 0x1000, 8), -ENOSPC);
	assert_int_equal(npu_cmdbuf_fill(cb, 0x2000, 8, 1), -ENOSPC);
	assert_int_equal(npu_cmdbuf_write_value(cb, 0x2000, 1), -ENOSPC);
	assert_int_equal(npu_cmdbuf_timestamp(cb, 0x2000), -ENOSPC);
	assert_int_equal(npu_cmdbuf_nop(cb, 16), -ENOSPC);
	assert_int_equal(npu_cmdbuf_size(cb), 32);
	assert_memory_equal(npu_cmdbuf_data(cb), before, 32);

	/* Exactly filling the last 8 bytes works. */
	assert_int_equal(npu_cmdbuf_barrier(cb), 0);
	assert_int_equal(npu_cmdbuf_size(cb), 40);
	assert_int_equal(npu_cmdbuf_barrier(cb), -ENOSPC);
	assert_int_equal(npu_cmdbuf_nop(cb, 8), -ENOSPC);

	assert_int_equal(npu_cmdbuf_reset(cb), 0);
	assert_int_equal(npu_cmdbuf_size(cb), 0);
	assert_int_equal(npu_cmdbuf_barrier(cb), 0);
	npu_cmdbuf_destroy(cb);
}

static void test_invalid(void **state)
{
	struct npu_cmdbuf *cb = new_cb(4096);
	const uint64_t top = 1ull << VNPU_VA_BITS;

	(void)state;
	/* NULL builder */
	assert_int_equal(npu_cmdbuf_nop(NULL, 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(NULL, 0, 8, 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_fill(NULL, 0, 8, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_write_value(NULL, 0, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_timestamp(NULL, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_barrier(NULL), -EINVAL);
	assert_int_equal(npu_cmdbuf_raw(NULL, "", 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_reset(NULL), -EINVAL);

	/* NOP sizes */
	assert_int_equal(npu_cmdbuf_nop(cb, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_nop(cb, 4), -EINVAL);
	assert_int_equal(npu_cmdbuf_nop(cb, 12), -EINVAL);

	/* COPY: zero size, overlap in either direction, VA range */
	assert_int_equal(npu_cmdbuf_copy(cb, 0x2000, 0x1000, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1000, 0x1000, 16), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1008, 0x1000, 16), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1000, 0x1008, 16), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1010, 0x1000, 16), 0); /* adjacent */
	assert_int_equal(npu_cmdbuf_copy(cb, top, 0x1000, 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, top - 8, 0x1000, 16), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1000, top - 4, 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, 0x1000, ~0ull - 3, 8), -EINVAL);
	assert_int_equal(npu_cmdbuf_copy(cb, top - 8, 0x1000, 8), 0); /* last 8 */

	/* FILL: zero, not a multiple of 4, wrap-around */
	assert_int_equal(npu_cmdbuf_fill(cb, 0x1000, 0, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_fill(cb, 0x1000, 6, 0), -EINVAL);
	assert_int_equal(npu_cmdbuf_fill(cb, ~0ull - 3, 8, 0), -EINVAL);

	/* WRITE_VALUE / TIMESTAMP: alignment and range */
	assert_int_equal(npu_cmdbuf_write_value(cb, 0x1004, 1), -EINVAL);
	assert_int_equal(npu_cmdbuf_write_value(cb, top, 1), -EINVAL);
	assert_int_equal(npu_cmdbuf_timestamp(cb, 0x1001), -EINVAL);
	assert_int_equal(npu_cmdbuf_timestamp(cb, top), -EINVAL);

	/* Only the accepted commands were appended: 2 copies of 32 bytes. */
	assert_int_equal(npu_cmdbuf_size(cb), 64);
	npu_cmdbuf_destroy(cb);
}

static void test_raw(void **state)
{
	struct npu_cmdbuf *cb = new_cb(64);
	uint8_t cmd[24];
	struct vnpu_cmd_hdr hdr;

	(void)state;
	memset(cmd, 0xa5, sizeof(cmd));
	hdr.opcode = htole16(VNPU_CMD_COMPUTE_FIRST);
	hdr.flags = 0;
	hdr.size = htole32(sizeof(cmd));
	memcpy(cmd, &hdr, sizeof(hdr));
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), 0);
	assert_memory_equal(npu_cmdbuf_data(cb), cmd, sizeof(cmd));

	hdr.opcode = htole16(VNPU_CMD_COMPUTE_LAST);
	memcpy(cmd, &hdr, sizeof(hdr));
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), 0);

	/* 16 bytes left: a 24-byte command does not fit */
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), -ENOSPC);

	/* header size must match the length passed */
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, 16), -EINVAL);
	/* non-compute opcodes have their own builders */
	hdr.opcode = htole16(VNPU_CMD_COPY);
	memcpy(cmd, &hdr, sizeof(hdr));
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), -EINVAL);
	hdr.opcode = htole16(VNPU_CMD_COMPUTE_LAST + 1);
	memcpy(cmd, &hdr, sizeof(hdr));
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), -EINVAL);
	/* flags must be zero in v1 */
	hdr.opcode = htole16(VNPU_CMD_COMPUTE_FIRST);
	hdr.flags = htole16(1);
	memcpy(cmd, &hdr, sizeof(hdr));
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, sizeof(cmd)), -EINVAL);
	/* size: below a header, not a multiple of 8, NULL */
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, 4), -EINVAL);
	assert_int_equal(npu_cmdbuf_raw(cb, cmd, 20), -EINVAL);
	assert_int_equal(npu_cmdbuf_raw(cb, NULL, 24), -EINVAL);

	assert_int_equal(npu_cmdbuf_size(cb), 48);
	npu_cmdbuf_destroy(cb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_encode_all),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_raw),
	};

	return cmocka_run_group_tests_name("libnpu-cmdbuf", tests, NULL, NULL);
}
