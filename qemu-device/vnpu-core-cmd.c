/*
 * vnpu queue and command-stream validation: ring setup, descriptors and
 * the v1 commands.  Plain C11, shared by the QEMU device (vnpu.c,
 * vnpu-engine.c) and the host unit tests; see vnpu-core.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include "vnpu-core.h"

VnpuRingErr vnpu_ring_check(uint64_t ring, uint64_t compl, uint32_t size)
{
    if (size < VNPU_RING_MIN_ENTRIES || size > VNPU_RING_MAX_ENTRIES ||
        (size & (size - 1))) {
        return VNPU_RING_ERR_SIZE;
    }
    if ((ring | compl) & (VNPU_RING_ALIGN - 1)) {
        return VNPU_RING_ERR_ALIGN;
    }
    if (vnpu_range_wraps(ring, (uint64_t)size * VNPU_DESC_SIZE) ||
        vnpu_range_wraps(compl, (uint64_t)size * VNPU_COMPL_SIZE)) {
        return VNPU_RING_ERR_WRAP;
    }
    return VNPU_RING_OK;
}

const char *vnpu_ring_strerror(VnpuRingErr err)
{
    switch (err) {
    case VNPU_RING_OK:
        return "ring setup valid";
    case VNPU_RING_ERR_SIZE:
        return "ring size not a power of two in range";
    case VNPU_RING_ERR_ALIGN:
        return "ring base not 64-byte aligned";
    case VNPU_RING_ERR_WRAP:
        return "ring wraps the address space";
    }
    return "unknown ring error";
}

void vnpu_desc_decode(const void *raw, struct vnpu_hw_desc *d)
{
    const uint8_t *b = raw;
    unsigned i;

    d->ctx_id = vnpu_ld32_le(b + 0);
    d->flags = vnpu_ld32_le(b + 4);
    d->cmd_va = vnpu_ld64_le(b + 8);
    d->cmd_size = vnpu_ld32_le(b + 16);
    d->reserved0 = vnpu_ld32_le(b + 20);
    d->seq = vnpu_ld64_le(b + 24);
    for (i = 0; i < 4; i++) {
        d->reserved[i] = vnpu_ld64_le(b + 32 + 8 * i);
    }
}

bool vnpu_desc_valid(const struct vnpu_hw_desc *d)
{
    unsigned i;

    if (d->flags || d->reserved0) {
        return false;
    }
    for (i = 0; i < 4; i++) {
        if (d->reserved[i]) {
            return false;
        }
    }
    return d->ctx_id < VNPU_MAX_CONTEXTS && d->cmd_size >= 8 &&
           d->cmd_size % 8 == 0 && d->cmd_size <= VNPU_CMD_MAX_BUFFER &&
           d->cmd_va % 8 == 0;
}

static VnpuCmdErr vnpu_cmd_decode_copy(const uint8_t *p, VnpuCmd *cmd)
{
    uint64_t src = vnpu_ld64_le(p + 8);
    uint64_t dst = vnpu_ld64_le(p + 16);
    uint64_t len = vnpu_ld64_le(p + 24);

    if (vnpu_range_wraps(src, len) || vnpu_range_wraps(dst, len)) {
        return VNPU_CMD_ERR_WRAP;
    }
    /* Last bytes, not ends: a range may end exactly at 2^64. */
    if (len && src <= dst + (len - 1) && dst <= src + (len - 1)) {
        return VNPU_CMD_ERR_OVERLAP;
    }
    cmd->u.copy.src = src;
    cmd->u.copy.dst = dst;
    cmd->u.copy.len = len;
    return VNPU_CMD_OK;
}

static VnpuCmdErr vnpu_cmd_decode_fill(const uint8_t *p, VnpuCmd *cmd)
{
    uint64_t dst = vnpu_ld64_le(p + 8);
    uint64_t len = vnpu_ld64_le(p + 16);

    if (vnpu_ld32_le(p + 28)) {
        return VNPU_CMD_ERR_RESERVED;
    }
    if ((dst | len) & 3) {
        return VNPU_CMD_ERR_ALIGN;
    }
    if (vnpu_range_wraps(dst, len)) {
        return VNPU_CMD_ERR_WRAP;
    }
    cmd->u.fill.dst = dst;
    cmd->u.fill.len = len;
    cmd->u.fill.pattern = vnpu_ld32_le(p + 24);
    return VNPU_CMD_OK;
}

static VnpuCmdErr vnpu_cmd_decode_store(const uint8_t *p, VnpuCmd *cmd,
                                        bool has_value)
{
    uint64_t dst = vnpu_ld64_le(p + 8);

    if (dst & 7) {
        return VNPU_CMD_ERR_ALIGN;
    }
    cmd->u.store.dst = dst;
    cmd->u.store.value = has_value ? vnpu_ld64_le(p + 16) : 0;
    return VNPU_CMD_OK;
}

VnpuCmdErr vnpu_cmd_decode(const uint8_t *buf, uint32_t size, uint32_t off,
                           VnpuCmd *cmd)
{
    const uint8_t *p;
    uint16_t flags;
    uint32_t want;

    memset(cmd, 0, sizeof(*cmd));
    cmd->off = off;
    if (off > size || size - off < sizeof(struct vnpu_cmd_hdr)) {
        return VNPU_CMD_ERR_TRUNCATED;
    }
    p = buf + off;
    cmd->opcode = vnpu_ld16_le(p);
    flags = vnpu_ld16_le(p + 2);
    cmd->size = vnpu_ld32_le(p + 4);
    if (cmd->size < sizeof(struct vnpu_cmd_hdr) || cmd->size % 8 ||
        cmd->size > size - off) {
        return VNPU_CMD_ERR_SIZE;
    }
    if (flags) {
        return VNPU_CMD_ERR_FLAGS;
    }

    switch (cmd->opcode) {
    case VNPU_CMD_NOP:
        return VNPU_CMD_OK;
    case VNPU_CMD_COPY:
        want = sizeof(struct vnpu_cmd_copy);
        break;
    case VNPU_CMD_FILL:
        want = sizeof(struct vnpu_cmd_fill);
        break;
    case VNPU_CMD_WRITE_VALUE:
        want = sizeof(struct vnpu_cmd_write_value);
        break;
    case VNPU_CMD_TIMESTAMP:
        want = sizeof(struct vnpu_cmd_timestamp);
        break;
    case VNPU_CMD_BARRIER:
        want = sizeof(struct vnpu_cmd_barrier);
        break;
    default:
        if (cmd->opcode >= VNPU_CMD_COMPUTE_FIRST &&
            cmd->opcode <= VNPU_CMD_COMPUTE_LAST) {
            return VNPU_CMD_OK;
        }
        return VNPU_CMD_ERR_OPCODE;
    }
    if (cmd->size != want) {
        return VNPU_CMD_ERR_CMD_SIZE;
    }

    switch (cmd->opcode) {
    case VNPU_CMD_COPY:
        return vnpu_cmd_decode_copy(p, cmd);
    case VNPU_CMD_FILL:
        return vnpu_cmd_decode_fill(p, cmd);
    case VNPU_CMD_WRITE_VALUE:
        return vnpu_cmd_decode_store(p, cmd, true);
    case VNPU_CMD_TIMESTAMP:
        return vnpu_cmd_decode_store(p, cmd, false);
    default:
        return VNPU_CMD_OK;
    }
}

const char *vnpu_cmd_strerror(VnpuCmdErr err)
{
    switch (err) {
    case VNPU_CMD_OK:
        return "valid command";
    case VNPU_CMD_ERR_TRUNCATED:
        return "truncated header";
    case VNPU_CMD_ERR_SIZE:
        return "bad command size";
    case VNPU_CMD_ERR_FLAGS:
        return "flags not zero";
    case VNPU_CMD_ERR_OPCODE:
        return "unknown opcode";
    case VNPU_CMD_ERR_CMD_SIZE:
        return "wrong size for this command";
    case VNPU_CMD_ERR_RESERVED:
        return "reserved field not zero";
    case VNPU_CMD_ERR_ALIGN:
        return "address or size misaligned";
    case VNPU_CMD_ERR_WRAP:
        return "range wraps the address space";
    case VNPU_CMD_ERR_OVERLAP:
        return "COPY ranges overlap";
    }
    return "unknown command error";
}

uint64_t vnpu_dma_cycles(uint64_t bytes)
{
    /* ceil(bytes / 32) without overflowing near 2^64 */
    return bytes / VNPU_MODEL_DRAM_BYTES_PER_CYCLE +
           (bytes % VNPU_MODEL_DRAM_BYTES_PER_CYCLE != 0);
}

uint64_t vnpu_cmd_cycles(const VnpuCmd *cmd)
{
    uint64_t len;

    switch (cmd->opcode) {
    case VNPU_CMD_COPY:
        /* ceil(2 * len / 32), computed so that 2 * len cannot overflow */
        len = cmd->u.copy.len;
        return len / (VNPU_MODEL_DRAM_BYTES_PER_CYCLE / 2) +
               (len % (VNPU_MODEL_DRAM_BYTES_PER_CYCLE / 2) != 0);
    case VNPU_CMD_FILL:
        return vnpu_dma_cycles(cmd->u.fill.len);
    case VNPU_CMD_WRITE_VALUE:
    case VNPU_CMD_TIMESTAMP:
        return vnpu_dma_cycles(sizeof(uint64_t));
    default:
        return 0;
    }
}
