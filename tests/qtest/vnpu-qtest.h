/*
 * Helpers shared by the vnpu qtests: device discovery, MSI-X capture in
 * guest memory, queue rings, device page tables and job submission.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VNPU_QTEST_H
#define VNPU_QTEST_H

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/pci/pci_regs.h"
#include "qapi/qmp/qdict.h"
#include "standard-headers/linux/pci_regs.h"
#include "hw/vnpu/vnpu_hw.h"
/* The compute encoding arrives with the compute engine. */
#if defined(__has_include) && __has_include("hw/vnpu/vnpu_hw_ops.h")
#include "hw/vnpu/vnpu_hw_ops.h"
#define VT_HAVE_OPS 1
#endif

#define VT_SLOT             4
#define VT_RING_SIZE        16
#define VT_MSI_DATA(v)      (0xa000u + (v))
#define VT_TIMEOUT_US       (10 * G_USEC_PER_SEC)

typedef struct VnpuT {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint64_t msi_buf;
    uint64_t ctx_table;
    uint64_t ring[VNPU_NUM_QUEUES];
    uint64_t compl[VNPU_NUM_QUEUES];
    uint32_t tail[VNPU_NUM_QUEUES];
    uint64_t seq[VNPU_NUM_QUEUES];
} VnpuT;

static inline uint32_t vt_rd(VnpuT *t, uint32_t reg)
{
    return qpci_io_readl(t->dev, t->bar, reg);
}

static inline void vt_wr(VnpuT *t, uint32_t reg, uint32_t val)
{
    qpci_io_writel(t->dev, t->bar, reg, val);
}

static inline uint32_t vt_qrd(VnpuT *t, unsigned q, uint32_t r)
{
    return vt_rd(t, VNPU_REG_QUEUE(q, r));
}

static inline void vt_qwr(VnpuT *t, unsigned q, uint32_t r, uint32_t val)
{
    vt_wr(t, VNPU_REG_QUEUE(q, r), val);
}

static inline uint64_t vt_alloc(VnpuT *t, size_t size)
{
    uint64_t a = guest_alloc(&t->alloc, size);

    g_assert(a);
    qtest_memset(t->qts, a, 0, size);
    return a;
}

static inline uint64_t vt_alloc_page(VnpuT *t)
{
    uint64_t a = vt_alloc(t, VNPU_PAGE_SIZE);

    g_assert_cmphex(a & (VNPU_PAGE_SIZE - 1), ==, 0);
    return a;
}

/* Route every MSI-X vector to a word of guest memory, unmasked. */
static inline void vt_msix_setup(VnpuT *t)
{
    unsigned v;

    qpci_msix_enable(t->dev);
    t->msi_buf = vt_alloc(t, 4 * VNPU_MSIX_NUM_VECTORS);
    for (v = 0; v < VNPU_MSIX_NUM_VECTORS; v++) {
        uint64_t off = t->dev->msix_table_off + v * PCI_MSIX_ENTRY_SIZE;

        qpci_io_writel(t->dev, t->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_LOWER_ADDR, t->msi_buf + 4 * v);
        qpci_io_writel(t->dev, t->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
        qpci_io_writel(t->dev, t->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_DATA, VT_MSI_DATA(v));
        qpci_io_writel(t->dev, t->dev->msix_table_bar,
                       off + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    }
}

/* Was vector @v delivered since the last call?  Consumes the message. */
static inline bool vt_msi_fired(VnpuT *t, unsigned v)
{
    uint32_t data = qtest_readl(t->qts, t->msi_buf + 4 * v);

    /*
     * Clear only what was seen: a message landing between the read and an
     * unconditional clear would be erased unseen.
     */
    if (data) {
        qtest_writel(t->qts, t->msi_buf + 4 * v, 0);
    }
    g_assert(data == 0 || data == VT_MSI_DATA(v));
    return data == VT_MSI_DATA(v);
}

/* Wait until vector @v fires (the bottom half runs asynchronously). */
static inline bool vt_msi_wait(VnpuT *t, unsigned v)
{
    gint64 end = g_get_monotonic_time() + VT_TIMEOUT_US;

    do {
        if (vt_msi_fired(t, v)) {
            return true;
        }
        g_usleep(200);
    } while (g_get_monotonic_time() < end);
    return false;
}

/*
 * Debian's QEMU source drops the firmware blobs; the pc machine needs a
 * BIOS image even under qtest, so use the seabios package when present.
 * VNPU_QEMU_FIRMWARE overrides the directory.
 */
static inline const char *vt_firmware_args(void)
{
    static char buf[256];
    const char *dir = g_getenv("VNPU_QEMU_FIRMWARE");

    if (!dir) {
        dir = "/usr/share/seabios";
    }
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        return "";
    }
    g_snprintf(buf, sizeof(buf), "-L %s", dir);
    return buf;
}

/*
 * Start QEMU with the device at VT_SLOT.  @machine: extra QEMU options
 * (e.g. "-m 512M"); @extra: extra -device vnpu options.
 */
static inline VnpuT *vt_start_machine(const char *machine, const char *extra)
{
    VnpuT *t = g_new0(VnpuT, 1);

    t->qts = qtest_initf("%s -M pc -nodefaults %s "
                         "-device vnpu,id=vnpu0,addr=%02x.0%s%s",
                         vt_firmware_args(), machine ? machine : "", VT_SLOT,
                         extra ? "," : "", extra ? extra : "");
    pc_alloc_init(&t->alloc, t->qts, ALLOC_NO_FLAGS);
    t->bus = qpci_new_pc(t->qts, &t->alloc);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(VT_SLOT, 0));
    g_assert(t->dev);
    qpci_device_enable(t->dev);
    t->bar = qpci_iomap(t->dev, VNPU_BAR_REGS, NULL);
    vt_msix_setup(t);
    return t;
}

static inline VnpuT *vt_start(const char *extra)
{
    return vt_start_machine(NULL, extra);
}

static inline void vt_stop(VnpuT *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    alloc_destroy(&t->alloc);
    qtest_quit(t->qts);
    g_free(t);
}

/* Program queue @q with fresh rings of @size entries and enable it. */
static inline void vt_queue_setup(VnpuT *t, unsigned q, uint32_t size)
{
    t->ring[q] = vt_alloc(t, size * sizeof(struct vnpu_hw_desc));
    t->compl[q] = vt_alloc(t, size * sizeof(struct vnpu_hw_completion));
    vt_qwr(t, q, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, q, VNPU_QREG_RING_LO, t->ring[q]);
    vt_qwr(t, q, VNPU_QREG_RING_HI, t->ring[q] >> 32);
    vt_qwr(t, q, VNPU_QREG_RING_SIZE, size);
    vt_qwr(t, q, VNPU_QREG_COMPL_LO, t->compl[q]);
    vt_qwr(t, q, VNPU_QREG_COMPL_HI, t->compl[q] >> 32);
    vt_qwr(t, q, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    t->tail[q] = 0;
}

/* Device on, every interrupt source enabled, queues 0..3 ready. */
static inline void vt_device_setup(VnpuT *t)
{
    unsigned q;

    vt_wr(t, VNPU_REG_IRQ_MASK, VNPU_IRQ_QUEUE_ALL | VNPU_IRQ_MMU_FAULT |
                                VNPU_IRQ_ERROR);
    for (q = 0; q < VNPU_NUM_QUEUES; q++) {
        vt_queue_setup(t, q, VT_RING_SIZE);
    }
    vt_wr(t, VNPU_REG_CONTROL, VNPU_CONTROL_ENABLE);
}

/* Write a descriptor at the queue's tail without ringing the doorbell. */
static inline uint32_t vt_put_desc(VnpuT *t, unsigned q, uint32_t ctx,
                                   uint64_t cmd_va, uint32_t cmd_size,
                                   uint32_t flags)
{
    struct vnpu_hw_desc d = {
        .ctx_id = cpu_to_le32(ctx),
        .flags = cpu_to_le32(flags),
        .cmd_va = cpu_to_le64(cmd_va),
        .cmd_size = cpu_to_le32(cmd_size),
        .seq = cpu_to_le64(++t->seq[q] + 1000 * q),
    };
    uint32_t slot = t->tail[q];

    qtest_memwrite(t->qts, t->ring[q] + slot * sizeof(d), &d, sizeof(d));
    qtest_memset(t->qts, t->compl[q] + slot * sizeof(struct vnpu_hw_completion),
                 0, sizeof(struct vnpu_hw_completion));
    t->tail[q] = (slot + 1) % vt_qrd(t, q, VNPU_QREG_RING_SIZE);
    return slot;
}

static inline void vt_doorbell(VnpuT *t, unsigned q)
{
    vt_qwr(t, q, VNPU_QREG_TAIL, t->tail[q]);
    vt_qwr(t, q, VNPU_QREG_DOORBELL, 1);
}

static inline uint32_t vt_submit(VnpuT *t, unsigned q, uint32_t ctx,
                                 uint64_t cmd_va, uint32_t cmd_size)
{
    uint32_t slot = vt_put_desc(t, q, ctx, cmd_va, cmd_size, 0);

    vt_doorbell(t, q);
    return slot;
}

/* Wait until the device consumed everything up to the queue's tail. */
static inline bool vt_wait_idle(VnpuT *t, unsigned q)
{
    gint64 end = g_get_monotonic_time() + VT_TIMEOUT_US;

    do {
        if (vt_qrd(t, q, VNPU_QREG_HEAD) == t->tail[q] &&
            (vt_qrd(t, q, VNPU_QREG_STATUS) & VNPU_QSTATUS_IDLE)) {
            return true;
        }
        g_usleep(200);
    } while (g_get_monotonic_time() < end);
    return false;
}

static inline void vt_read_compl(VnpuT *t, unsigned q, uint32_t slot,
                                 struct vnpu_hw_completion *c)
{
    qtest_memread(t->qts, t->compl[q] + slot * sizeof(*c), c, sizeof(*c));
    c->seq = le64_to_cpu(c->seq);
    c->status = le32_to_cpu(c->status);
    c->fault_flags = le32_to_cpu(c->fault_flags);
    c->fault_va = le64_to_cpu(c->fault_va);
    c->cycles = le64_to_cpu(c->cycles);
    c->start_ns = le64_to_cpu(c->start_ns);
    c->end_ns = le64_to_cpu(c->end_ns);
}

/* Submit one job, wait for it and return its completion record. */
static inline void vt_run(VnpuT *t, unsigned q, uint32_t ctx, uint64_t cmd_va,
                          uint32_t cmd_size, struct vnpu_hw_completion *c)
{
    uint32_t slot = vt_submit(t, q, ctx, cmd_va, cmd_size);

    g_assert(vt_wait_idle(t, q));
    vt_read_compl(t, q, slot, c);
    g_assert_cmpuint(c->seq, ==, t->seq[q] + 1000 * q);
}

/* ---- command stream builder ---------------------------------------------- */

typedef struct VtCmds {
    uint8_t buf[4096];
    uint32_t len;
} VtCmds;

static inline void *vt_cmd(VtCmds *b, uint16_t op, uint32_t size)
{
    struct vnpu_cmd_hdr *h = (void *)(b->buf + b->len);

    g_assert(b->len + size <= sizeof(b->buf));
    memset(h, 0, size);
    h->opcode = cpu_to_le16(op);
    h->size = cpu_to_le32(size);
    b->len += size;
    return h;
}

static inline void vt_nop(VtCmds *b)
{
    vt_cmd(b, VNPU_CMD_NOP, 8);
}

static inline void vt_copy(VtCmds *b, uint64_t src, uint64_t dst, uint64_t n)
{
    struct vnpu_cmd_copy *c = vt_cmd(b, VNPU_CMD_COPY, sizeof(*c));

    c->src_va = cpu_to_le64(src);
    c->dst_va = cpu_to_le64(dst);
    c->size = cpu_to_le64(n);
}

static inline void vt_fill(VtCmds *b, uint64_t dst, uint64_t n, uint32_t pat)
{
    struct vnpu_cmd_fill *c = vt_cmd(b, VNPU_CMD_FILL, sizeof(*c));

    c->dst_va = cpu_to_le64(dst);
    c->size = cpu_to_le64(n);
    c->pattern = cpu_to_le32(pat);
}

static inline void vt_write_value(VtCmds *b, uint64_t dst, uint64_t v)
{
    struct vnpu_cmd_write_value *c = vt_cmd(b, VNPU_CMD_WRITE_VALUE, sizeof(*c));

    c->dst_va = cpu_to_le64(dst);
    c->value = cpu_to_le64(v);
}

static inline void vt_timestamp(VtCmds *b, uint64_t dst)
{
    struct vnpu_cmd_timestamp *c = vt_cmd(b, VNPU_CMD_TIMESTAMP, sizeof(*c));

    c->dst_va = cpu_to_le64(dst);
}

static inline void vt_barrier(VtCmds *b)
{
    vt_cmd(b, VNPU_CMD_BARRIER, sizeof(struct vnpu_cmd_barrier));
}

/* Place a command buffer in guest memory; returns its (physical) address. */
static inline uint64_t vt_put_cmds(VnpuT *t, VtCmds *b)
{
    uint64_t a = vt_alloc(t, b->len ? b->len : 8);

    qtest_memwrite(t->qts, a, b->buf, b->len);
    return a;
}

/* ---- device page tables -------------------------------------------------- */

static inline uint64_t vt_pte_get(VnpuT *t, uint64_t table, unsigned idx)
{
    return le64_to_cpu(qtest_readq(t->qts, table + idx * 8));
}

static inline void vt_pte_set(VnpuT *t, uint64_t table, unsigned idx,
                              uint64_t pte)
{
    qtest_writeq(t->qts, table + idx * 8, cpu_to_le64(pte));
}

/* Create the context table once; returns it.  MMU stays as it is. */
static inline void vt_mmu_setup(VnpuT *t)
{
    t->ctx_table = vt_alloc_page(t);
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_LO, t->ctx_table);
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_HI, t->ctx_table >> 32);
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, 16);
    vt_wr(t, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CONTROL), ==, VNPU_MMU_CONTROL_ENABLE);
}

static inline uint64_t vt_ctx_root(VnpuT *t, uint32_t ctx)
{
    uint64_t e = qtest_readq(t->qts, t->ctx_table + ctx * 16);

    if (!(e & VNPU_CTX_VALID)) {
        e = vt_alloc_page(t) | VNPU_CTX_VALID;
        qtest_writeq(t->qts, t->ctx_table + ctx * 16, e);
        qtest_writeq(t->qts, t->ctx_table + ctx * 16 + 8, 0);
    }
    return e & VNPU_PTE_ADDR_MASK;
}

/* Return the address of the leaf PTE for @va in @ctx, creating tables. */
static inline uint64_t vt_leaf(VnpuT *t, uint32_t ctx, uint64_t va)
{
    uint64_t table = vt_ctx_root(t, ctx);
    int l;

    for (l = 0; l < VNPU_PT_LEVELS - 1; l++) {
        unsigned idx = VNPU_PT_INDEX(va, l);
        uint64_t pte = vt_pte_get(t, table, idx);

        if (!(pte & VNPU_PTE_VALID)) {
            pte = vt_alloc_page(t) | VNPU_PTE_VALID;
            vt_pte_set(t, table, idx, pte);
        }
        table = pte & VNPU_PTE_ADDR_MASK;
    }
    return table + VNPU_PT_INDEX(va, 3) * 8;
}

static inline void vt_map(VnpuT *t, uint32_t ctx, uint64_t va, uint64_t pa,
                          uint64_t perms)
{
    qtest_writeq(t->qts, vt_leaf(t, ctx, va), pa | perms | VNPU_PTE_VALID);
}

/* Map @npages fresh pages at @va; returns the first page's address. */
static inline uint64_t vt_map_new(VnpuT *t, uint32_t ctx, uint64_t va,
                                  unsigned npages, uint64_t perms)
{
    uint64_t first = 0;
    unsigned i;

    for (i = 0; i < npages; i++) {
        uint64_t pa = vt_alloc_page(t);

        if (!i) {
            first = pa;
        }
        vt_map(t, ctx, va + i * VNPU_PAGE_SIZE, pa, perms);
    }
    return first;
}

/* qom-set on the device; true if QEMU accepted it. */
static inline bool vt_qom_try_set(VnpuT *t, const char *prop, uint32_t val)
{
    QDict *r = qtest_qmp(t->qts, "{ 'execute': 'qom-set', 'arguments': "
                         "{ 'path': '/machine/peripheral/vnpu0', "
                         "'property': %s, 'value': %u } }", prop, val);
    bool ok;

    g_assert(r);
    ok = !qdict_haskey(r, "error");
    qobject_unref(r);
    return ok;
}

static inline void vt_qom_set(VnpuT *t, const char *prop, uint32_t val)
{
    g_assert(vt_qom_try_set(t, prop, val));
}

static inline uint32_t vt_qom_get(VnpuT *t, const char *prop)
{
    QDict *r = qtest_qmp(t->qts, "{ 'execute': 'qom-get', 'arguments': "
                         "{ 'path': '/machine/peripheral/vnpu0', "
                         "'property': %s } }", prop);
    uint32_t v;

    g_assert(r && qdict_haskey(r, "return"));
    v = qdict_get_int(r, "return");
    qobject_unref(r);
    return v;
}

#ifdef VT_HAVE_OPS
/* ---- compute commands ------------------------------------------------------ */

static inline struct vnpu_cmd_compute *vt_compute(VtCmds *b, uint16_t op)
{
    return vt_cmd(b, op, sizeof(struct vnpu_cmd_compute));
}

/* Fill a tensor descriptor; @strides NULL means dense. */
static inline void vt_td(struct vnpu_tensor_desc *d, uint64_t va,
                         uint8_t dtype, unsigned rank, const uint32_t *dims,
                         const uint64_t *strides)
{
    unsigned i;

    memset(d, 0, sizeof(*d));
    d->va = cpu_to_le64(va);
    d->dtype = dtype;
    d->rank = rank;
    for (i = 0; i < rank; i++) {
        d->dims[i] = cpu_to_le32(dims[i]);
        if (strides) {
            d->strides[i] = cpu_to_le64(strides[i]);
        }
    }
    if (strides) {
        d->flags = cpu_to_le32(VNPU_TENSOR_STRIDED);
    }
}

/* Per-tensor quantization with a binary32 scale. */
static inline void vt_td_quant(struct vnpu_tensor_desc *d, float scale,
                               int32_t zp)
{
    uint32_t bits;

    memcpy(&bits, &scale, 4);
    d->quant = VNPU_QUANT_TENSOR;
    d->scale = cpu_to_le32(bits);
    d->zero_point = cpu_to_le32(zp);
}

#endif

#endif
