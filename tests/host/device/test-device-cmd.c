/*
 * Command-stream decoding of the v1 commands, descriptor rules and ring
 * validation: every valid form and every malformed form, with the exact
 * error and the offset the completion record would carry.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "device-test.h"

#define BUF_MAX 512

typedef struct Stream {
    uint8_t b[BUF_MAX];
    uint32_t len;
} Stream;

static void put(Stream *s, uint32_t off, uint64_t v, unsigned bytes)
{
    unsigned i;

    assert_true(off + bytes <= BUF_MAX);
    for (i = 0; i < bytes; i++) {
        s->b[off + i] = (uint8_t)(v >> (8 * i));
    }
}

/* Append a command; returns its offset.  @words follow the header. */
static uint32_t emit(Stream *s, uint16_t op, uint16_t flags, uint32_t size,
                     unsigned nwords, const uint64_t *words)
{
    uint32_t off = s->len;
    unsigned i;

    put(s, off, op, 2);
    put(s, off + 2, flags, 2);
    put(s, off + 4, size, 4);
    for (i = 0; i < nwords; i++) {
        put(s, off + 8 + 8 * i, words[i], 8);
    }
    s->len += 8 + 8 * nwords;
    return off;
}

static uint32_t emit_copy(Stream *s, uint64_t src, uint64_t dst, uint64_t n)
{
    const uint64_t w[] = { src, dst, n };

    return emit(s, VNPU_CMD_COPY, 0, 32, 3, w);
}

static uint32_t emit_fill(Stream *s, uint64_t dst, uint64_t n, uint32_t pat,
                          uint32_t reserved)
{
    const uint64_t w[] = { dst, n, pat | (uint64_t)reserved << 32 };

    return emit(s, VNPU_CMD_FILL, 0, 32, 3, w);
}

static uint32_t emit_wv(Stream *s, uint64_t dst, uint64_t value)
{
    const uint64_t w[] = { dst, value };

    return emit(s, VNPU_CMD_WRITE_VALUE, 0, 24, 2, w);
}

static uint32_t emit_ts(Stream *s, uint64_t dst)
{
    return emit(s, VNPU_CMD_TIMESTAMP, 0, 16, 1, &dst);
}

/*
 * Run the stream the way the engine does: decode in order until the end or
 * the first error.  Returns the error, its offset in *@off and how many
 * commands decoded before it in *@count.
 */
static VnpuCmdErr run(const Stream *s, uint32_t *off, unsigned *count,
                      VnpuCmd *last)
{
    uint32_t o = 0;
    unsigned n = 0;
    VnpuCmdErr err = VNPU_CMD_OK;

    while (o < s->len) {
        err = vnpu_cmd_decode(s->b, s->len, o, last);
        assert_int_equal(last->off, o);
        if (err != VNPU_CMD_OK) {
            break;
        }
        o += last->size;
        n++;
    }
    *off = o;
    *count = n;
    return err;
}

/* A stream of one command: expect @want at offset @want_off. */
static void expect(const Stream *s, VnpuCmdErr want, uint32_t want_off)
{
    uint32_t off;
    unsigned n;
    VnpuCmd c;

    assert_int_equal(run(s, &off, &n, &c), want);
    assert_int_equal(off, want_off);
    assert_non_null(vnpu_cmd_strerror(want));
}

/* Prefix @s with two valid commands so offsets are not trivially zero. */
static void prefix(Stream *s)
{
    memset(s, 0, sizeof(*s));
    emit(s, VNPU_CMD_NOP, 0, 8, 0, NULL);
    emit(s, VNPU_CMD_BARRIER, 0, 8, 0, NULL);
}

#define PFX 16u

/* ---- valid forms --------------------------------------------------------- */

static void test_valid_stream(void **state)
{
    Stream s = { 0 };
    const uint64_t junk[] = { UINT64_MAX, 0x1234 };
    VnpuCmd c[8];
    uint32_t off = 0;
    unsigned i = 0;

    (void)state;
    emit(&s, VNPU_CMD_NOP, 0, 8, 0, NULL);
    emit(&s, VNPU_CMD_NOP, 0, 24, 2, junk);     /* padding, payload ignored */
    emit_copy(&s, 0x1000, 0x2000, 0x1000);      /* adjacent, no overlap */
    emit_fill(&s, 0x3004, 0x20, 0xdeadbeef, 0);
    emit_wv(&s, 0x4008, 0x0123456789abcdefull);
    emit_ts(&s, 0xfffffffffff8ull);
    emit(&s, VNPU_CMD_BARRIER, 0, 8, 0, NULL);
    emit(&s, VNPU_CMD_COMPUTE_FIRST, 0, 16, 1, junk);

    while (off < s.len) {
        assert_true(i < 8);
        assert_int_equal(vnpu_cmd_decode(s.b, s.len, off, &c[i]), VNPU_CMD_OK);
        off += c[i++].size;
    }
    assert_int_equal(i, 8);
    assert_int_equal(off, s.len);

    assert_int_equal(c[0].opcode, VNPU_CMD_NOP);
    assert_int_equal(c[0].size, 8);
    assert_int_equal(c[1].size, 24);
    assert_int_equal(c[2].opcode, VNPU_CMD_COPY);
    assert_int_equal(c[2].off, 32);
    assert_int_equal(c[2].u.copy.src, 0x1000);
    assert_int_equal(c[2].u.copy.dst, 0x2000);
    assert_int_equal(c[2].u.copy.len, 0x1000);
    assert_int_equal(c[3].opcode, VNPU_CMD_FILL);
    assert_int_equal(c[3].u.fill.dst, 0x3004);
    assert_int_equal(c[3].u.fill.len, 0x20);
    assert_int_equal(c[3].u.fill.pattern, 0xdeadbeef);
    assert_int_equal(c[4].opcode, VNPU_CMD_WRITE_VALUE);
    assert_int_equal(c[4].u.store.dst, 0x4008);
    assert_int_equal(c[4].u.store.value, 0x0123456789abcdefull);
    assert_int_equal(c[5].opcode, VNPU_CMD_TIMESTAMP);
    assert_int_equal(c[5].u.store.dst, 0xfffffffffff8ull);
    assert_int_equal(c[5].size, 16);
    assert_int_equal(c[6].opcode, VNPU_CMD_BARRIER);
    assert_int_equal(c[7].opcode, VNPU_CMD_COMPUTE_FIRST);
    assert_int_equal(c[7].off, s.len - 16);
}

static void test_valid_edge_cases(void **state)
{
    Stream s;

    (void)state;
    /* zero-length COPY and FILL, even with equal or wrapping-start VAs */
    prefix(&s);
    emit_copy(&s, 0x5000, 0x5000, 0);
    emit_copy(&s, UINT64_MAX, 0, 0);
    emit_fill(&s, 0, 0, 0, 0);
    emit_fill(&s, UINT64_MAX - 3, 0, 1, 0);
    /* COPY with odd addresses and size: any alignment is fine */
    emit_copy(&s, 0x1001, 0x2003, 7);
    /* ranges ending exactly at 2^64 do not wrap */
    emit_copy(&s, UINT64_MAX - 15, UINT64_MAX - 31, 16);
    emit_fill(&s, UINT64_MAX - 7, 8, 0, 0);
    /* a one-byte gap each way is not an overlap */
    emit_copy(&s, 0x1000, 0x1010, 0x10);
    emit_copy(&s, 0x1010, 0x1000, 0x10);
    /* the highest compute opcode passes the header checks */
    emit(&s, VNPU_CMD_COMPUTE_LAST, 0, 8, 0, NULL);
    expect(&s, VNPU_CMD_OK, s.len);
}

/* ---- malformed forms ------------------------------------------------------ */

static void test_bad_opcode(void **state)
{
    static const uint16_t ops[] = { 0x06, 0x07, 0x3f, 0x80, 0x100, 0xffff };
    unsigned i;
    Stream s;

    (void)state;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        prefix(&s);
        emit(&s, ops[i], 0, 8, 0, NULL);
        emit(&s, VNPU_CMD_NOP, 0, 8, 0, NULL);
        expect(&s, VNPU_CMD_ERR_OPCODE, PFX);
    }
}

static void test_bad_header_size(void **state)
{
    /* not a multiple of 8, smaller than the header */
    static const uint32_t sizes[] = { 0, 1, 4, 7, 9, 12, 31, 33 };
    unsigned i;
    Stream s;

    (void)state;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        prefix(&s);
        emit(&s, VNPU_CMD_NOP, 0, sizes[i], 4, (uint64_t[4]){ 0 });
        expect(&s, VNPU_CMD_ERR_SIZE, PFX);
    }
    /* past the buffer's end, by one word and by a u32 that would wrap */
    prefix(&s);
    emit(&s, VNPU_CMD_NOP, 0, 24, 1, (uint64_t[1]){ 0 });
    expect(&s, VNPU_CMD_ERR_SIZE, PFX);
    prefix(&s);
    emit(&s, VNPU_CMD_NOP, 0, 0xfffffff8u, 0, NULL);
    expect(&s, VNPU_CMD_ERR_SIZE, PFX);
    /* a COPY whose header says 32 but whose buffer ends early */
    prefix(&s);
    emit(&s, VNPU_CMD_COPY, 0, 32, 2, (uint64_t[2]){ 0x1000, 0x2000 });
    expect(&s, VNPU_CMD_ERR_SIZE, PFX);
    /* the size rule comes before the flags rule */
    prefix(&s);
    emit(&s, VNPU_CMD_NOP, 1, 12, 1, (uint64_t[1]){ 0 });
    expect(&s, VNPU_CMD_ERR_SIZE, PFX);
}

/* A v1 command whose size is a valid multiple of 8 but not its own. */
static void test_wrong_command_size(void **state)
{
    static const struct {
        uint16_t op;
        uint32_t good;
    } cmds[] = {
        { VNPU_CMD_COPY, 32 }, { VNPU_CMD_FILL, 32 },
        { VNPU_CMD_WRITE_VALUE, 24 }, { VNPU_CMD_TIMESTAMP, 16 },
        { VNPU_CMD_BARRIER, 8 },
    };
    static const uint64_t zero[8];
    unsigned i;
    uint32_t sz;
    Stream s;

    (void)state;
    for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        for (sz = 8; sz <= 40; sz += 8) {
            prefix(&s);
            emit(&s, cmds[i].op, 0, sz, (sz - 8) / 8, zero);
            expect(&s, sz == cmds[i].good ? VNPU_CMD_OK : VNPU_CMD_ERR_CMD_SIZE,
                   sz == cmds[i].good ? s.len : PFX);
        }
    }
}

static void test_flags_not_zero(void **state)
{
    static const uint16_t ops[] = {
        VNPU_CMD_NOP, VNPU_CMD_COPY, VNPU_CMD_FILL, VNPU_CMD_WRITE_VALUE,
        VNPU_CMD_TIMESTAMP, VNPU_CMD_BARRIER, VNPU_CMD_COMPUTE_FIRST, 0x99,
    };
    static const uint32_t sizes[] = { 8, 32, 32, 24, 16, 8, 8, 8 };
    static const uint64_t zero[3];
    unsigned i, bit;
    Stream s;

    (void)state;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        for (bit = 0; bit < 16; bit++) {
            prefix(&s);
            emit(&s, ops[i], 1u << bit, sizes[i], (sizes[i] - 8) / 8, zero);
            expect(&s, VNPU_CMD_ERR_FLAGS, PFX);
        }
    }
}

static void test_fill_rules(void **state)
{
    static const uint32_t reserved[] = { 1, 0x80000000u, UINT32_MAX };
    unsigned i;
    Stream s;

    (void)state;
    for (i = 0; i < 3; i++) {
        prefix(&s);
        emit_fill(&s, 0x1000, 16, 0, reserved[i]);
        expect(&s, VNPU_CMD_ERR_RESERVED, PFX);
    }
    for (i = 1; i < 4; i++) {
        prefix(&s);
        emit_fill(&s, 0x1000 + i, 16, 0, 0);
        expect(&s, VNPU_CMD_ERR_ALIGN, PFX);
        prefix(&s);
        emit_fill(&s, 0x1000, 16 + i, 0, 0);
        expect(&s, VNPU_CMD_ERR_ALIGN, PFX);
    }
    /* wrap: 8 bytes from 2^64 - 4, and a huge aligned size */
    prefix(&s);
    emit_fill(&s, UINT64_MAX - 3, 8, 0, 0);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
    prefix(&s);
    emit_fill(&s, 0x1000, UINT64_MAX - 3, 0, 0);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
    /* reserved is checked first, then alignment, then wrap */
    prefix(&s);
    emit_fill(&s, UINT64_MAX, 3, 0, 1);
    expect(&s, VNPU_CMD_ERR_RESERVED, PFX);
    prefix(&s);
    emit_fill(&s, UINT64_MAX, 3, 0, 0);
    expect(&s, VNPU_CMD_ERR_ALIGN, PFX);
}

static void test_store_alignment(void **state)
{
    unsigned i;
    Stream s;

    (void)state;
    for (i = 1; i < 8; i++) {
        prefix(&s);
        emit_wv(&s, 0x2000 + i, 1);
        expect(&s, VNPU_CMD_ERR_ALIGN, PFX);
        prefix(&s);
        emit_ts(&s, 0x2000 + i);
        expect(&s, VNPU_CMD_ERR_ALIGN, PFX);
    }
    prefix(&s);
    emit_wv(&s, 1ull << 63, 1);
    emit_ts(&s, UINT64_MAX);
    expect(&s, VNPU_CMD_ERR_ALIGN, PFX + 24);
}

static void test_copy_wrap(void **state)
{
    Stream s;

    (void)state;
    prefix(&s);
    emit_copy(&s, UINT64_MAX - 7, 0x1000, 9);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
    prefix(&s);
    emit_copy(&s, 0x1000, UINT64_MAX, 2);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
    prefix(&s);
    emit_copy(&s, 0x1000, 0x2000, UINT64_MAX);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
    /* wrap is reported before overlap */
    prefix(&s);
    emit_copy(&s, UINT64_MAX - 1, UINT64_MAX - 1, 4);
    expect(&s, VNPU_CMD_ERR_WRAP, PFX);
}

static void test_copy_overlap(void **state)
{
    static const struct {
        uint64_t src, dst, len;
    } bad[] = {
        { 0x1000, 0x1000, 1 },          /* identical */
        { 0x1000, 0x1001, 0x10 },       /* dst starts inside src */
        { 0x1001, 0x1000, 0x10 },       /* src starts inside dst */
        { 0x1000, 0x100f, 0x10 },       /* last byte of src = first of dst */
        { 0x100f, 0x1000, 0x10 },
        { UINT64_MAX - 15, UINT64_MAX - 15, 16 },   /* at the very top */
        { UINT64_MAX - 15, UINT64_MAX - 16, 16 },
    };
    unsigned i;
    Stream s;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        prefix(&s);
        emit_copy(&s, bad[i].src, bad[i].dst, bad[i].len);
        expect(&s, VNPU_CMD_ERR_OVERLAP, PFX);
    }
}

/* The error is the first bad command's; commands before it decoded. */
static void test_error_offset_in_stream(void **state)
{
    Stream s = { 0 };
    uint32_t off, bad;
    unsigned n;
    VnpuCmd c;

    (void)state;
    emit_wv(&s, 0x1000, 1);
    emit_copy(&s, 0x2000, 0x3000, 8);
    emit(&s, VNPU_CMD_NOP, 0, 32, 3, (uint64_t[3]){ 0 });
    bad = emit_fill(&s, 0x4002, 4, 0, 0);
    emit(&s, 0x3f, 0, 8, 0, NULL);
    assert_int_equal(run(&s, &off, &n, &c), VNPU_CMD_ERR_ALIGN);
    assert_int_equal(off, bad);
    assert_int_equal(off, 24 + 32 + 32);
    assert_int_equal(n, 3);
}

/* A header needs 8 bytes; the engine never asks past the end. */
static void test_truncated(void **state)
{
    uint8_t b[16] = { 0 };
    VnpuCmd c;

    (void)state;
    assert_int_equal(vnpu_cmd_decode(b, 12, 8, &c), VNPU_CMD_ERR_TRUNCATED);
    assert_int_equal(c.off, 8);
    assert_int_equal(vnpu_cmd_decode(b, 16, 16, &c), VNPU_CMD_ERR_TRUNCATED);
    assert_int_equal(vnpu_cmd_decode(b, 16, 24, &c), VNPU_CMD_ERR_TRUNCATED);
    assert_int_equal(vnpu_cmd_decode(b, 16, UINT32_MAX, &c),
                     VNPU_CMD_ERR_TRUNCATED);
    assert_int_equal(vnpu_cmd_decode(b, 0, 0, &c), VNPU_CMD_ERR_TRUNCATED);
}

static void test_cycles(void **state)
{
    VnpuCmd c = { 0 };

    (void)state;
    c.opcode = VNPU_CMD_NOP;
    assert_int_equal(vnpu_cmd_cycles(&c), 0);
    c.opcode = VNPU_CMD_BARRIER;
    assert_int_equal(vnpu_cmd_cycles(&c), 0);
    c.opcode = VNPU_CMD_WRITE_VALUE;
    assert_int_equal(vnpu_cmd_cycles(&c), 1);
    c.opcode = VNPU_CMD_TIMESTAMP;
    assert_int_equal(vnpu_cmd_cycles(&c), 1);
    /* COPY moves 2 x size bytes: ceil(2 * size / 32) */
    c.opcode = VNPU_CMD_COPY;
    c.u.copy.len = 0;
    assert_int_equal(vnpu_cmd_cycles(&c), 0);
    c.u.copy.len = 1;
    assert_int_equal(vnpu_cmd_cycles(&c), 1);
    c.u.copy.len = 16;
    assert_int_equal(vnpu_cmd_cycles(&c), 1);
    c.u.copy.len = 17;
    assert_int_equal(vnpu_cmd_cycles(&c), 2);
    c.u.copy.len = 1 << 20;
    assert_int_equal(vnpu_cmd_cycles(&c), 65536);
    c.u.copy.len = UINT64_MAX;      /* 2 * size would overflow */
    assert_int_equal(vnpu_cmd_cycles(&c), (UINT64_MAX >> 4) + 1);
    c.opcode = VNPU_CMD_FILL;
    c.u.fill.len = 32;
    assert_int_equal(vnpu_cmd_cycles(&c), 1);
    c.u.fill.len = 36;
    assert_int_equal(vnpu_cmd_cycles(&c), 2);
    assert_int_equal(vnpu_dma_cycles(UINT64_MAX), (UINT64_MAX >> 5) + 1);
}

/* ---- descriptors ------------------------------------------------------------ */

static void desc_raw(uint8_t raw[64], uint32_t ctx, uint32_t flags,
                     uint64_t va, uint32_t size, uint32_t res0, uint64_t seq)
{
    Stream s = { 0 };

    put(&s, 0, ctx, 4);
    put(&s, 4, flags, 4);
    put(&s, 8, va, 8);
    put(&s, 16, size, 4);
    put(&s, 20, res0, 4);
    put(&s, 24, seq, 8);
    memcpy(raw, s.b, 64);
}

static bool desc_ok(const uint8_t raw[64])
{
    struct vnpu_hw_desc d;

    vnpu_desc_decode(raw, &d);
    return vnpu_desc_valid(&d);
}

static void test_descriptor(void **state)
{
    uint8_t raw[64];
    struct vnpu_hw_desc d;
    unsigned i;

    (void)state;
    desc_raw(raw, 255, 0, 0x0000fffffffffff8ull, VNPU_CMD_MAX_BUFFER, 0,
             0x8877665544332211ull);
    vnpu_desc_decode(raw, &d);
    assert_int_equal(d.ctx_id, 255);
    assert_int_equal(d.cmd_va, 0x0000fffffffffff8ull);
    assert_int_equal(d.cmd_size, VNPU_CMD_MAX_BUFFER);
    assert_int_equal(d.seq, 0x8877665544332211ull);
    assert_true(vnpu_desc_valid(&d));

    desc_raw(raw, 0, 0, 0, 8, 0, 0);
    assert_true(desc_ok(raw));
    /* each must-be-zero word, each bit position of it */
    for (i = 0; i < 32; i++) {
        desc_raw(raw, 0, 1u << i, 0x1000, 8, 0, 0);
        assert_false(desc_ok(raw));
        desc_raw(raw, 0, 0, 0x1000, 8, 1u << i, 0);
        assert_false(desc_ok(raw));
    }
    for (i = 32; i < 64; i++) {
        desc_raw(raw, 0, 0, 0x1000, 8, 0, 0);
        raw[i] = 0x80;
        assert_false(desc_ok(raw));
    }
    /* ctx id, size and alignment rules */
    desc_raw(raw, 256, 0, 0x1000, 8, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, UINT32_MAX, 0, 0x1000, 8, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, 0, 0, 0x1000, 0, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, 0, 0, 0x1000, 4, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, 0, 0, 0x1000, 20, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, 0, 0, 0x1000, VNPU_CMD_MAX_BUFFER + 8, 0, 0);
    assert_false(desc_ok(raw));
    desc_raw(raw, 0, 0, 0x1000, UINT32_MAX - 7, 0, 0);
    assert_false(desc_ok(raw));
    for (i = 1; i < 8; i++) {
        desc_raw(raw, 0, 0, 0x1000 + i, 8, 0, 0);
        assert_false(desc_ok(raw));
    }
}

/* ---- rings ---------------------------------------------------------------- */

static void test_ring_size(void **state)
{
    static const uint32_t bad[] = { 0, 3, 6, 100, 4095, 4097, 6144, UINT32_MAX };
    uint32_t size;
    unsigned bit;

    (void)state;
    for (bit = 0; bit < 32; bit++) {
        size = 1u << bit;
        assert_int_equal(vnpu_ring_check(0x10000, 0x20000, size),
                         size >= 2 && size <= 4096 ? VNPU_RING_OK :
                         VNPU_RING_ERR_SIZE);
    }
    for (bit = 0; bit < sizeof(bad) / sizeof(bad[0]); bit++) {
        assert_int_equal(vnpu_ring_check(0x10000, 0x20000, bad[bit]),
                         VNPU_RING_ERR_SIZE);
    }
    /* size is checked before alignment */
    assert_int_equal(vnpu_ring_check(0x10001, 0x20000, 3), VNPU_RING_ERR_SIZE);
    assert_non_null(vnpu_ring_strerror(VNPU_RING_ERR_SIZE));
}

static void test_ring_alignment(void **state)
{
    unsigned i;

    (void)state;
    for (i = 1; i < 64; i++) {
        assert_int_equal(vnpu_ring_check(0x10000 + i, 0x20000, 16),
                         VNPU_RING_ERR_ALIGN);
        assert_int_equal(vnpu_ring_check(0x10000, 0x20000 + i, 16),
                         VNPU_RING_ERR_ALIGN);
    }
    assert_int_equal(vnpu_ring_check(0x10040, 0x200c0, 16), VNPU_RING_OK);
    /* rings need not be page aligned, nor disjoint (that is the driver's) */
    assert_int_equal(vnpu_ring_check(0x40, 0x40, 2), VNPU_RING_OK);
}

static void test_ring_wrap(void **state)
{
    uint64_t top = 0ull - 4096 * 64;    /* a 4096-entry ring ending at 2^64 */

    (void)state;
    assert_int_equal(vnpu_ring_check(top, 0x1000, 4096), VNPU_RING_OK);
    assert_int_equal(vnpu_ring_check(0x1000, top, 4096), VNPU_RING_OK);
    assert_int_equal(vnpu_ring_check(top + 64, 0x1000, 4096),
                     VNPU_RING_ERR_WRAP);
    assert_int_equal(vnpu_ring_check(0x1000, top + 64, 4096),
                     VNPU_RING_ERR_WRAP);
    assert_int_equal(vnpu_ring_check(0xffffffffffffffc0ull, 0x1000, 2),
                     VNPU_RING_ERR_WRAP);
    assert_int_equal(vnpu_ring_check(0xffffffffffffff80ull, 0x1000, 2),
                     VNPU_RING_OK);
}

static void test_ring_tail(void **state)
{
    (void)state;
    assert_true(vnpu_ring_tail_valid(2, 0));
    assert_true(vnpu_ring_tail_valid(2, 1));
    assert_false(vnpu_ring_tail_valid(2, 2));
    assert_true(vnpu_ring_tail_valid(4096, 4095));
    assert_false(vnpu_ring_tail_valid(4096, 4096));
    assert_false(vnpu_ring_tail_valid(4096, UINT32_MAX));
    /* a queue never set up (size 0) accepts no TAIL */
    assert_false(vnpu_ring_tail_valid(0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_stream),
        cmocka_unit_test(test_valid_edge_cases),
        cmocka_unit_test(test_bad_opcode),
        cmocka_unit_test(test_bad_header_size),
        cmocka_unit_test(test_wrong_command_size),
        cmocka_unit_test(test_flags_not_zero),
        cmocka_unit_test(test_fill_rules),
        cmocka_unit_test(test_store_alignment),
        cmocka_unit_test(test_copy_wrap),
        cmocka_unit_test(test_copy_overlap),
        cmocka_unit_test(test_error_offset_in_stream),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_cycles),
        cmocka_unit_test(test_descriptor),
        cmocka_unit_test(test_ring_size),
        cmocka_unit_test(test_ring_alignment),
        cmocka_unit_test(test_ring_wrap),
        cmocka_unit_test(test_ring_tail),
    };

    return cmocka_run_group_tests_name("device-cmd", tests, NULL, NULL);
}
