/*
 * Randomised robustness test for the vnpu device model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * For VNPU_FUZZ_SECONDS (default 10) the test throws random register
 * writes, doorbells, descriptors, command buffers, page-table edits,
 * fault injections and resets at the device, from a fixed seed
 * (VNPU_FUZZ_SEED, default 0x5eed) so a failure can be replayed.  The
 * inputs are biased towards almost-valid ones, which reach deeper into
 * the device than pure noise: compute commands are built whole (576
 * bytes) from plausible descriptors pointing into mapped memory, then
 * mutated in their dims, strides, dtypes, quantization and attributes.  Afterwards QEMU must still be alive, the
 * device must identify itself and a fresh, well-formed job must complete
 * correctly.
 */
#include "vnpu-qtest.h"

#define FZ_CTXS         4
#define FZ_VA_BASE      0x100000ull
#define FZ_PAGES        8       /* mapped per context */
#define FZ_CMD_MAX      2048    /* a few compute commands; one page */

typedef struct Fuzz {
    VnpuT *t;
    GRand *rnd;
    uint64_t ctx_pa[FZ_CTXS][FZ_PAGES];
    /*
     * Where the context entries' roots and the leaf PTEs live, found once
     * at setup: the device may scribble over the tables during the storm,
     * so the test never walks them again.
     */
    uint64_t ctx_root[FZ_CTXS];
    uint64_t ctx_leaf[FZ_CTXS][FZ_PAGES];
    uint64_t scratch;           /* some RAM for bypass-mode addresses */
    uint64_t n_mmio, n_jobs, n_cmdbufs, n_pte, n_inject, n_reset, n_reads;
    uint64_t n_compute;
} Fuzz;

static uint32_t fz_u32(Fuzz *f)
{
    return g_rand_int(f->rnd);
}

static uint64_t fz_u64(Fuzz *f)
{
    return ((uint64_t)fz_u32(f) << 32) | fz_u32(f);
}

static unsigned fz_below(Fuzz *f, unsigned n)
{
    return g_rand_int_range(f->rnd, 0, n);
}

/* Mostly plausible values, sometimes extreme ones. */
static uint64_t fz_size(Fuzz *f)
{
    switch (fz_below(f, 8)) {
    case 0:
        return 0;
    case 1:
        return fz_u64(f);
    case 2:
        return UINT64_MAX - fz_below(f, 64);
    case 3:
        return (uint64_t)fz_below(f, 64) << 20;
    default:
        return fz_below(f, 3 * VNPU_PAGE_SIZE) & ~(uint64_t)fz_below(f, 8);
    }
}

/* A VA the current context probably maps, or garbage. */
static uint64_t fz_addr(Fuzz *f)
{
    switch (fz_below(f, 8)) {
    case 0:
        return fz_u64(f);
    case 1:
        return f->scratch + fz_below(f, 8 * VNPU_PAGE_SIZE);
    case 2:
        return (1ull << VNPU_VA_BITS) - fz_below(f, 4096);
    default:
        return (FZ_VA_BASE + fz_below(f, FZ_PAGES * VNPU_PAGE_SIZE)) &
               ~(uint64_t)fz_below(f, 8);
    }
}

#ifdef VT_HAVE_OPS
/* ---- structure-aware compute commands ------------------------------------ */

enum { FZ_FLOAT, FZ_Q8, FZ_ANY };

static unsigned fz_esize(uint8_t dt)
{
    return dt == VNPU_DT_FP32 || dt == VNPU_DT_INT32 ? 4 :
           dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8 ? 1 : 2;
}

static uint8_t fz_dtype(Fuzz *f, int kind)
{
    static const uint8_t fl[] = { VNPU_DT_FP32, VNPU_DT_FP32, VNPU_DT_FP16,
                                  VNPU_DT_BF16 };
    static const uint8_t q8[] = { VNPU_DT_INT8, VNPU_DT_UINT8 };

    if (kind == FZ_ANY) {
        kind = fz_below(f, 2) ? FZ_FLOAT : FZ_Q8;
    }
    return kind == FZ_FLOAT ? fl[fz_below(f, ARRAY_SIZE(fl))] :
                              q8[fz_below(f, ARRAY_SIZE(q8))];
}

/*
 * A valid descriptor of dtype @dt and shape @dims somewhere in the mapped
 * pages: dense, or strided with gaps, or (an input) broadcast along a dim.
 */
static void fz_place(Fuzz *f, struct vnpu_tensor_desc *d, uint8_t dt,
                     unsigned rank, const uint32_t *dims, bool out)
{
    unsigned es = fz_esize(dt), i;
    bool strided = fz_below(f, 3) == 0;
    uint64_t st[VNPU_MAX_RANK], last = 0, span, room, off;

    for (i = rank; i-- > 0;) {
        st[i] = i == rank - 1 ? 1 : st[i + 1] * dims[i + 1];
        if (strided && fz_below(f, 3) == 0) {
            st[i] += fz_below(f, 3);
        }
    }
    if (strided && !out && fz_below(f, 3) == 0) {
        st[fz_below(f, rank)] = 0;
    }
    for (i = 0; i < rank; i++) {
        last += (uint64_t)(dims[i] - 1) * st[i];
    }
    span = (last + 1) * es;
    room = (uint64_t)FZ_PAGES * VNPU_PAGE_SIZE;
    off = span < room ? fz_below(f, room - span + 1) & ~(uint64_t)(es - 1) : 0;
    vt_td(d, FZ_VA_BASE + off, dt, rank, dims, strided ? st : NULL);
    if (dt == VNPU_DT_INT8 || dt == VNPU_DT_UINT8) {
        vt_td_quant(d, 0.01f * (1 + fz_below(f, 100)),
                    dt == VNPU_DT_INT8 ? (int)fz_below(f, 256) - 128 :
                                         (int)fz_below(f, 256));
    }
}

static void fz_shape(Fuzz *f, unsigned rank, uint32_t *dims)
{
    unsigned i;

    for (i = 0; i < rank; i++) {
        dims[i] = 1 + fz_below(f, 6);
    }
}

static uint32_t fz_win_out(uint32_t in, uint32_t pa, uint32_t pb, uint32_t k,
                           uint32_t stride)
{
    return in + pa + pb >= k ? (in + pa + pb - k) / stride + 1 : 0;
}

static void fz_gemm(Fuzz *f, struct vnpu_cmd_compute *c)
{
    uint32_t m = 1 + fz_below(f, 16), k = 1 + fz_below(f, 16);
    uint32_t n = 1 + fz_below(f, 16), fl = fz_below(f, 4);
    uint32_t ad[2] = { fl & 1 ? k : m, fl & 1 ? m : k };
    uint32_t bd[2] = { fl & 2 ? n : k, fl & 2 ? k : n }, yd[2] = { m, n };
    bool q = fz_below(f, 2);

    c->attr.gemm.flags = cpu_to_le32(fl);
    fz_place(f, &c->t[0], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 2, ad, false);
    fz_place(f, &c->t[1], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 2, bd, false);
    if (fz_below(f, 2)) {
        fz_place(f, &c->t[2], q ? VNPU_DT_INT32 : VNPU_DT_FP32, 1, &n, false);
        c->t[2].quant = 0, c->t[2].scale = 0, c->t[2].zero_point = 0;
    }
    if (q && fz_below(f, 3) == 0) {
        fz_place(f, &c->t[3], VNPU_DT_INT32, 2, yd, true);
    } else {
        fz_place(f, &c->t[3], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 2, yd, true);
        c->act = fz_below(f, VNPU_ACT_CLIP);
    }
}

static void fz_conv(Fuzz *f, struct vnpu_cmd_compute *c)
{
    uint32_t kh = 1 + fz_below(f, 3), kw = 1 + fz_below(f, 3);
    uint32_t ch = 1 + fz_below(f, 4), dw = fz_below(f, 3) == 0;
    uint32_t co = dw ? ch : 1 + fz_below(f, 4), sh = 1 + fz_below(f, 2);
    uint32_t sw = 1 + fz_below(f, 2), pt = fz_below(f, 2), pl = fz_below(f, 2);
    uint32_t xd[4] = { 1, kh + fz_below(f, 5), kw + fz_below(f, 5), ch };
    uint32_t wd[4] = { co, kh, kw, dw ? 1 : ch };
    uint32_t yd[4] = { 1, fz_win_out(xd[1], pt, pt, kh, sh),
                       fz_win_out(xd[2], pl, pl, kw, sw), co };
    bool q = fz_below(f, 2);

    c->attr.conv.stride_h = cpu_to_le32(sh);
    c->attr.conv.stride_w = cpu_to_le32(sw);
    c->attr.conv.dilation_h = c->attr.conv.dilation_w = cpu_to_le32(1);
    c->attr.conv.pad_top = c->attr.conv.pad_bottom = cpu_to_le32(pt);
    c->attr.conv.pad_left = c->attr.conv.pad_right = cpu_to_le32(pl);
    c->attr.conv.groups = cpu_to_le32(dw ? ch : 1);
    fz_place(f, &c->t[0], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 4, xd, false);
    fz_place(f, &c->t[1], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 4, wd, false);
    fz_place(f, &c->t[3], fz_dtype(f, q ? FZ_Q8 : FZ_FLOAT), 4, yd, true);
    c->act = fz_below(f, VNPU_ACT_CLIP);
}

static void fz_pool(Fuzz *f, struct vnpu_cmd_compute *c)
{
    uint32_t kind = fz_below(f, 3), kh = 1 + fz_below(f, 3);
    uint32_t kw = 1 + fz_below(f, 3), sh = 1 + fz_below(f, 2);
    uint32_t sw = 1 + fz_below(f, 2), pt = fz_below(f, kh), pl = fz_below(f, kw);
    uint32_t xd[4] = { 1 + fz_below(f, 2), kh + fz_below(f, 5),
                       kw + fz_below(f, 5), 1 + fz_below(f, 4) };
    uint32_t yd[4] = { xd[0], 1, 1, xd[3] };

    c->attr.pool.kind = cpu_to_le32(kind);
    if (kind != VNPU_POOL_GLOBAL_AVG) {
        c->attr.pool.kernel_h = cpu_to_le32(kh);
        c->attr.pool.kernel_w = cpu_to_le32(kw);
        c->attr.pool.stride_h = cpu_to_le32(sh);
        c->attr.pool.stride_w = cpu_to_le32(sw);
        c->attr.pool.pad_top = c->attr.pool.pad_bottom = cpu_to_le32(pt);
        c->attr.pool.pad_left = c->attr.pool.pad_right = cpu_to_le32(pl);
        if (kind == VNPU_POOL_AVG) {
            c->attr.pool.flags = cpu_to_le32(fz_below(f, 2));
        }
        yd[1] = fz_win_out(xd[1], pt, pt, kh, sh);
        yd[2] = fz_win_out(xd[2], pl, pl, kw, sw);
    }
    fz_place(f, &c->t[0], fz_dtype(f, FZ_ANY), 4, xd, false);
    fz_place(f, &c->t[3], fz_dtype(f, FZ_ANY), 4, yd, true);
}

/* ELTWISE (with broadcasting) and the single-input ops. */
static void fz_elementwise(Fuzz *f, struct vnpu_cmd_compute *c, uint16_t op)
{
    unsigned rank = 1 + fz_below(f, 4), i;
    uint32_t yd[VNPU_MAX_RANK], xd[VNPU_MAX_RANK], bd[VNPU_MAX_RANK];
    int xk = op == VNPU_OP_DEQUANTIZE || op == VNPU_OP_REQUANTIZE ? FZ_Q8 :
             op == VNPU_OP_QUANTIZE ? FZ_FLOAT : FZ_ANY;
    int yk = op == VNPU_OP_QUANTIZE || op == VNPU_OP_REQUANTIZE ? FZ_Q8 :
             op == VNPU_OP_DEQUANTIZE ? FZ_FLOAT : FZ_ANY;
    uint32_t axis = fz_below(f, rank);
    float eps = 1e-5f, lo = -1.0f, hi = 6.0f;

    fz_shape(f, rank, yd);
    memcpy(xd, yd, sizeof(yd));
    memcpy(bd, yd, sizeof(yd));
    if (op == VNPU_OP_ELTWISE) {
        for (i = 0; i < rank; i++) {
            if (fz_below(f, 4) == 0) {
                xd[i] = 1;
            } else if (fz_below(f, 4) == 0) {
                bd[i] = 1;
            }
        }
        c->attr.eltwise.kind = cpu_to_le32(fz_below(f, 3));
        c->act = fz_below(f, VNPU_ACT_CLIP);
        fz_place(f, &c->t[1], fz_dtype(f, FZ_ANY), rank, bd, false);
    } else if (op == VNPU_OP_ACTIVATION) {
        c->act = 1 + fz_below(f, VNPU_ACT_CLIP);
        if (c->act == VNPU_ACT_CLIP) {
            memcpy(&c->attr.activation.clip_min, &lo, 4);
            memcpy(&c->attr.activation.clip_max, &hi, 4);
        }
    } else if (op == VNPU_OP_SOFTMAX) {
        c->attr.softmax.axis = cpu_to_le32(axis);
    } else if (op == VNPU_OP_RESIZE) {
        c->attr.resize.mode = cpu_to_le32(fz_below(f, VNPU_RESIZE_CUBIC + 1));
        c->attr.resize.coord = cpu_to_le32(fz_below(f, VNPU_RESIZE_TF_CROP_AND_RESIZE));
        if (c->attr.resize.mode == cpu_to_le32(VNPU_RESIZE_CUBIC)) {
            float a = -0.75f;

            memcpy(&c->attr.resize.cubic_a, &a, 4);
        }
        /* H and W may change; ranks other than 4 are refused. */
        if (rank == 4) {
            yd[1] = 1 + fz_below(f, 2 * yd[1]);
            yd[2] = 1 + fz_below(f, 2 * yd[2]);
        }
    } else if (op == VNPU_OP_COPY) {
        c->attr.copy.border = cpu_to_le32(fz_below(f, VNPU_COPY_BORDER_WRAP + 1));
        for (i = 0; i < rank; i++) {
            c->attr.copy.offset[i] = (int32_t)cpu_to_le32(fz_below(f, 3) - 1);
        }
        c->attr.copy.reverse = cpu_to_le32(fz_below(f, 1u << rank));
    } else if (op == VNPU_OP_LAYERNORM) {
        c->attr.layernorm.axis = cpu_to_le32(axis);
        memcpy(&c->attr.layernorm.epsilon, &eps, 4);
        for (i = 1; i <= 2; i++) {
            if (fz_below(f, 2)) {
                fz_place(f, &c->t[i], fz_dtype(f, FZ_FLOAT), rank - axis,
                         yd + axis, false);
            }
        }
    }
    fz_place(f, &c->t[0], fz_dtype(f, xk), rank, xd, false);
    fz_place(f, &c->t[3], fz_dtype(f, yk), rank, yd, true);
}

/* Break the valid command in one or two places, the way a bug would. */
static void fz_mutate(Fuzz *f, struct vnpu_cmd_compute *c)
{
    struct vnpu_tensor_desc *d = &c->t[fz_below(f, VNPU_OP_SLOTS)];
    unsigned n = 1 + fz_below(f, 2), i, dim = fz_below(f, VNPU_MAX_RANK);

    for (i = 0; i < n; i++) {
        switch (fz_below(f, 8)) {
        case 0:
            d->dims[dim] = cpu_to_le32(fz_below(f, 2) ? fz_u32(f) :
                                       fz_below(f, 2) ? 0xffffffffu :
                                       VNPU_LIMIT_REDUCTION + 1);
            break;
        case 1:
            d->flags = cpu_to_le32(VNPU_TENSOR_STRIDED);
            d->strides[dim] = cpu_to_le64(fz_below(f, 2) ? fz_u64(f) :
                                          fz_below(f, 2) ? 0 :
                                          VNPU_LIMIT_TENSOR_BYTES);
            break;
        case 2:
            d->dtype = fz_below(f, VNPU_DT_COUNT + 1);
            break;
        case 3:
            d->quant = fz_below(f, 4);
            d->quant_axis = fz_below(f, VNPU_MAX_RANK + 1);
            d->quant_va = cpu_to_le64((FZ_VA_BASE + fz_below(f, FZ_PAGES *
                                       VNPU_PAGE_SIZE)) & ~3ull);
            break;
        case 4:
            c->attr.raw[fz_below(f, ARRAY_SIZE(c->attr.raw))] =
                cpu_to_le32(fz_below(f, 2) ? fz_u32(f) : fz_below(f, 8));
            break;
        case 5:
            d->rank = fz_below(f, VNPU_MAX_RANK + 2);
            break;
        case 6:
            d->va = cpu_to_le64(fz_addr(f));
            break;
        default:
            ((uint8_t *)c)[8 + fz_below(f, sizeof(*c) - 8)] = fz_u32(f);
            break;
        }
    }
}

/*
 * A whole compute command: a valid encoding of a random op over tensors
 * in the context's mapped pages (whose contents, per-channel arrays
 * included, are whatever the storm left there), broken half of the time.
 */
static void fz_compute(Fuzz *f, VtCmds *b)
{
    uint16_t op = VNPU_OP_GEMM + fz_below(f, VNPU_OP_LAST - VNPU_OP_GEMM + 1);
    struct vnpu_cmd_compute *c = vt_compute(b, op);

    switch (op) {
    case VNPU_OP_GEMM:
        fz_gemm(f, c);
        break;
    case VNPU_OP_CONV2D:
        fz_conv(f, c);
        break;
    case VNPU_OP_POOL2D:
        fz_pool(f, c);
        break;
    default:
        fz_elementwise(f, c, op);
        break;
    }
    c->round = fz_below(f, 4) == 0;
    if (fz_below(f, 2)) {
        fz_mutate(f, c);
    }
    f->n_compute++;
}
#endif

static uint32_t fz_cmdbuf(Fuzz *f, uint8_t *buf)
{
    VtCmds b = { 0 };
    unsigned n = 1 + fz_below(f, 8), i;

    for (i = 0; i < n; i++) {
#ifdef VT_HAVE_OPS
        if (fz_below(f, 3) == 0) {
            fz_compute(f, &b);
            goto next;
        }
#endif
        switch (fz_below(f, 9)) {
        case 0:
            vt_nop(&b);
            break;
        case 1:
            vt_copy(&b, fz_addr(f), fz_addr(f), fz_size(f));
            break;
        case 2:
            vt_fill(&b, fz_addr(f), fz_size(f), fz_u32(f));
            break;
        case 3:
            vt_write_value(&b, fz_addr(f), fz_u64(f));
            break;
        case 4:
            vt_timestamp(&b, fz_addr(f));
            break;
        case 5:
            vt_barrier(&b);
            break;
        case 6: {
            /* A compute opcode with random body. */
            uint32_t sz = 8 * (1 + fz_below(f, 24));
            uint8_t *p = vt_cmd(&b, VNPU_CMD_COMPUTE_FIRST + fz_below(f, 64),
                                sz);
            unsigned k;

            for (k = 8; k < sz; k++) {
                p[k] = fz_u32(f);
            }
            break;
        }
        default: {
            /* Raw noise, possibly with a lying header. */
            uint32_t sz = 8 * (1 + fz_below(f, 6));
            uint8_t *p = vt_cmd(&b, fz_below(f, 0x90), sz);
            unsigned k;

            for (k = 2; k < sz; k++) {
                if (fz_below(f, 3) == 0) {
                    p[k] = fz_u32(f);
                }
            }
            break;
        }
        }
#ifdef VT_HAVE_OPS
next:
#endif
        /* Room for one more command of any kind (576-byte compute). */
        if (b.len > FZ_CMD_MAX - 832) {
            break;
        }
    }
    memcpy(buf, b.buf, b.len);
    return b.len;
}

static void fz_mmio(Fuzz *f)
{
    VnpuT *t = f->t;
    uint32_t reg, val;

    switch (fz_below(f, 4)) {
    case 0:
        reg = fz_below(f, VNPU_BAR_REGS_SIZE / 4) * 4;
        break;
    case 1:
        reg = fz_below(f, 0xd0 / 4) * 4;
        break;
    default:
        reg = VNPU_REG_QUEUE(fz_below(f, VNPU_NUM_QUEUES),
                             fz_below(f, 0x34 / 4) * 4);
        break;
    }
    switch (fz_below(f, 4)) {
    case 0:
        val = fz_u32(f);
        break;
    case 1:
        val = 1u << fz_below(f, 32);
        break;
    default:
        val = fz_below(f, 20);
        break;
    }
    /*
     * Arming hangs and wedges must stay rare or every engine is stuck
     * until reset, or every reset leaves the device down.
     */
    if (reg == VNPU_REG_DEBUG_INJECT_HANG || reg == VNPU_REG_DEBUG_INJECT_WEDGE ||
        reg == VNPU_REG_CONTROL) {
        val &= 3;
    }
    if (fz_below(f, 4) == 0) {
        vt_rd(t, reg);
        f->n_reads++;
    } else {
        vt_wr(t, reg, val);
        f->n_mmio++;
    }
}

static void fz_job(Fuzz *f)
{
    VnpuT *t = f->t;
    unsigned q = fz_below(f, VNPU_NUM_QUEUES);
    uint32_t ctx = fz_below(f, 10) ? fz_below(f, FZ_CTXS) : fz_u32(f);
    uint32_t size = vt_qrd(t, q, VNPU_QREG_RING_SIZE);
    uint32_t slot = vt_qrd(t, q, VNPU_QREG_TAIL);
    struct vnpu_hw_desc d = { 0 };
    uint8_t buf[FZ_CMD_MAX];
    uint32_t len = fz_cmdbuf(f, buf);
    unsigned page = fz_below(f, FZ_PAGES);
    uint64_t cmd_va = FZ_VA_BASE + page * VNPU_PAGE_SIZE;

    /* Command buffer: in a mapped page of ctx (or at its PA in bypass). */
    if (ctx < FZ_CTXS && len <= VNPU_PAGE_SIZE) {
        qtest_memwrite(t->qts, f->ctx_pa[ctx][page], buf, len);
        if (!(vt_rd(t, VNPU_REG_MMU_CONTROL) & VNPU_MMU_CONTROL_ENABLE)) {
            cmd_va = f->ctx_pa[ctx][page];
        }
    }
    f->n_cmdbufs++;

    d.ctx_id = cpu_to_le32(ctx);
    d.cmd_va = cpu_to_le64(fz_below(f, 10) ? cmd_va : fz_addr(f));
    d.cmd_size = cpu_to_le32(fz_below(f, 10) ? len : fz_u32(f));
    d.seq = cpu_to_le64(fz_u64(f));
    if (fz_below(f, 10) == 0) {
        d.flags = cpu_to_le32(fz_u32(f));
    }
    if (fz_below(f, 10) == 0) {
        d.reserved[fz_below(f, 4)] = fz_u64(f);
    }
    if (size >= VNPU_RING_MIN_ENTRIES && size <= VNPU_RING_MAX_ENTRIES &&
        t->ring[q]) {
        uint64_t ring = vt_qrd(t, q, VNPU_QREG_RING_LO) |
                        (uint64_t)vt_qrd(t, q, VNPU_QREG_RING_HI) << 32;

        /* Only write where we know there is RAM we own. */
        if (ring == t->ring[q] && slot < VT_RING_SIZE) {
            qtest_memwrite(t->qts, ring + slot * sizeof(d), &d, sizeof(d));
        }
        slot = fz_below(f, 8) ? (slot + 1) % size : fz_u32(f);
    }
    vt_qwr(t, q, VNPU_QREG_TAIL, slot);
    vt_qwr(t, q, VNPU_QREG_DOORBELL, fz_u32(f));
    f->n_jobs++;
}

static void fz_pte(Fuzz *f)
{
    VnpuT *t = f->t;
    unsigned ctx = fz_below(f, FZ_CTXS);
    uint64_t pte;

    switch (fz_below(f, 4)) {
    case 0:
        pte = 0;
        break;
    case 1:
        pte = fz_u64(f);
        break;
    default:
        pte = f->ctx_pa[fz_below(f, FZ_CTXS)][fz_below(f, FZ_PAGES)] |
              fz_below(f, 8);
        break;
    }
    qtest_writeq(t->qts, f->ctx_leaf[ctx][fz_below(f, FZ_PAGES)], pte);
    if (fz_below(f, 4) == 0) {
        /* Corrupt the context entry itself. */
        qtest_writeq(t->qts, t->ctx_table + ctx * 16 + 8 * fz_below(f, 2),
                     fz_below(f, 2) ? fz_u64(f) : f->ctx_root[ctx] | 1);
    }
    vt_wr(t, VNPU_REG_MMU_TLB_INVAL,
          fz_below(f, 2) ? VNPU_TLB_INVAL_ALL : ctx);
    f->n_pte++;
}

static void fz_restore_ctx_table(Fuzz *f)
{
    unsigned c, p;

    for (c = 0; c < FZ_CTXS; c++) {
        qtest_writeq(f->t->qts, f->t->ctx_table + c * 16,
                     f->ctx_root[c] | VNPU_CTX_VALID);
        qtest_writeq(f->t->qts, f->t->ctx_table + c * 16 + 8, 0);
        for (p = 0; p < FZ_PAGES; p++) {
            qtest_writeq(f->t->qts, f->ctx_leaf[c][p], f->ctx_pa[c][p] |
                         VNPU_PTE_VALID | VNPU_PTE_READ | VNPU_PTE_WRITE);
        }
    }
}

static void fz_setup(Fuzz *f)
{
    VnpuT *t = f->t;

    vt_device_setup(t);
    vt_wr(t, VNPU_REG_MMU_CONTROL, 0);
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_LO, t->ctx_table);
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_HI, t->ctx_table >> 32);
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, FZ_CTXS);
    vt_wr(t, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
}

static void test_fuzz(void)
{
    const char *env_s = g_getenv("VNPU_FUZZ_SECONDS");
    const char *env_seed = g_getenv("VNPU_FUZZ_SEED");
    double seconds = env_s ? g_ascii_strtod(env_s, NULL) : 10;
    guint32 seed = env_seed ? g_ascii_strtoull(env_seed, NULL, 0) : 0x5eed;
    g_autoptr(GTimer) timer = g_timer_new();
    Fuzz f = { 0 };
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t marker, cmd;
    unsigned ctx, p;

    f.t = vt_start("x-fault-inject=on");
    f.rnd = g_rand_new_with_seed(seed);
    g_test_message("vnpu fuzz: seed 0x%x, %.0f s", seed, seconds);

    f.t->ctx_table = vt_alloc_page(f.t);
    f.scratch = vt_alloc(f.t, 8 * VNPU_PAGE_SIZE);
    for (ctx = 0; ctx < FZ_CTXS; ctx++) {
        for (p = 0; p < FZ_PAGES; p++) {
            f.ctx_pa[ctx][p] = vt_alloc_page(f.t);
            f.ctx_leaf[ctx][p] = vt_leaf(f.t, ctx,
                                         FZ_VA_BASE + p * VNPU_PAGE_SIZE);
        }
        f.ctx_root[ctx] = vt_ctx_root(f.t, ctx);
    }
    fz_restore_ctx_table(&f);
    fz_setup(&f);

    while (g_timer_elapsed(timer, NULL) < seconds) {
        unsigned r = fz_below(&f, 1000);

        if (r < 450) {
            fz_mmio(&f);
        } else if (r < 850) {
            fz_job(&f);
        } else if (r < 950) {
            fz_pte(&f);
        } else if (r < 990) {
            static const char *const props[] = {
                "inject-hang", "inject-dma-error", "inject-lost-irq",
            };

            vt_qom_set(f.t, props[fz_below(&f, 3)], fz_below(&f, 3));
            f.n_inject++;
        } else if (r < 997) {
            /* Recover from wedged states now and then, like a driver. */
            vt_wr(f.t, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
            fz_restore_ctx_table(&f);
            fz_setup(&f);
            f.n_reset++;
        } else {
            /* Bus mastering off and on again under running jobs. */
            uint16_t cmdreg = qpci_config_readw(f.t->dev, PCI_COMMAND);

            qpci_config_writew(f.t->dev, PCI_COMMAND,
                               cmdreg & ~PCI_COMMAND_MASTER);
            g_usleep(fz_below(&f, 1000));
            qpci_config_writew(f.t->dev, PCI_COMMAND,
                               cmdreg | PCI_COMMAND_MASTER);
        }
    }
    g_test_message("vnpu fuzz: %" PRIu64 " register writes, %" PRIu64
                   " reads, %" PRIu64 " doorbells, %" PRIu64 " command buffers "
                   "(%" PRIu64 " compute commands), %" PRIu64 " page-table "
                   "edits, %" PRIu64 " injections, %" PRIu64 " resets in "
                   "%.1f s", f.n_mmio, f.n_reads, f.n_jobs, f.n_cmdbufs,
                   f.n_compute, f.n_pte, f.n_inject, f.n_reset,
                   g_timer_elapsed(timer, NULL));

    /* QEMU survived: it answers and the device still does real work. */
    g_assert(qtest_probe_child(f.t->qts));
    g_assert_cmphex(vt_rd(f.t, VNPU_REG_ID), ==, VNPU_HW_ID_VALUE);
    vt_qom_set(f.t, "inject-hang", 0);
    vt_qom_set(f.t, "inject-dma-error", 0);
    vt_qom_set(f.t, "inject-lost-irq", 0);
    vt_qom_set(f.t, "inject-wedge", 0);
    vt_wr(f.t, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
    g_assert_cmphex(vt_rd(f.t, VNPU_REG_STATUS), ==,
                    VNPU_STATUS_READY | VNPU_STATUS_IDLE);
    g_assert_cmphex(vt_rd(f.t, VNPU_REG_ERROR_STATUS), ==, 0);
    qpci_device_enable(f.t->dev);
    vt_msix_setup(f.t);
    vt_device_setup(f.t);
    marker = vt_alloc(f.t, 8);
    vt_write_value(&b, marker, 0x600d);
    cmd = vt_put_cmds(f.t, &b);
    vt_run(f.t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(qtest_readq(f.t->qts, marker), ==, 0x600d);
    g_assert(vt_msi_wait(f.t, VNPU_MSIX_VEC_QUEUE(0)));

    g_rand_free(f.rnd);
    vt_stop(f.t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/vnpu/fuzz", test_fuzz);
    return g_test_run();
}
