/*
 * qtests for the vnpu device model: registers, rings, MSI-X, commands,
 * device MMU, malformed input, reset, fault injection and concurrency.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "vnpu-qtest.h"

#define ALL_IRQS (VNPU_IRQ_QUEUE_ALL | VNPU_IRQ_MMU_FAULT | VNPU_IRQ_ERROR)

static void check_reset_values(VnpuT *t)
{
    unsigned q;

    g_assert_cmphex(vt_rd(t, VNPU_REG_CONTROL), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_STATUS), ==,
                    VNPU_STATUS_READY | VNPU_STATUS_IDLE);
    g_assert_cmphex(vt_rd(t, VNPU_REG_IRQ_STATUS), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_IRQ_MASK), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_SCRATCH), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CONTROL), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CTX_TABLE_LO), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CTX_TABLE_HI), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CTX_COUNT), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_TLB_INVAL_SEQ), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_STATUS), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_CTX), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_LO), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_HI), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_QUEUE), ==, 0);
    for (q = 0; q < VNPU_NUM_QUEUES; q++) {
        static const uint32_t zero_regs[] = {
            VNPU_QREG_RING_LO, VNPU_QREG_RING_HI, VNPU_QREG_RING_SIZE,
            VNPU_QREG_COMPL_LO, VNPU_QREG_COMPL_HI, VNPU_QREG_HEAD,
            VNPU_QREG_TAIL, VNPU_QREG_CONTROL, VNPU_QREG_PRIORITY,
            VNPU_QREG_DONE_SEQ_LO, VNPU_QREG_DONE_SEQ_HI,
        };
        unsigned i;

        for (i = 0; i < ARRAY_SIZE(zero_regs); i++) {
            g_assert_cmphex(vt_qrd(t, q, zero_regs[i]), ==, 0);
        }
        g_assert_cmphex(vt_qrd(t, q, VNPU_QREG_STATUS), ==, VNPU_QSTATUS_IDLE);
    }
}

static void test_identification(void)
{
    VnpuT *t = vt_start(NULL);
    uint8_t cap;

    g_assert_cmphex(qpci_config_readw(t->dev, PCI_VENDOR_ID), ==,
                    VNPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_DEVICE_ID), ==,
                    VNPU_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(t->dev, PCI_REVISION_ID), ==,
                    VNPU_PCI_REVISION);
    g_assert_cmphex(qpci_config_readl(t->dev, PCI_CLASS_REVISION) >> 8, ==,
                    VNPU_PCI_CLASS_CODE);
    cap = qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmpuint(cap, !=, 0);
    g_assert(qpci_config_readl(t->dev, cap + PCI_EXP_DEVCAP) &
             PCI_EXP_DEVCAP_FLR);
    g_assert_cmpuint(qpci_msix_table_size(t->dev), ==, VNPU_MSIX_NUM_VECTORS);

    g_assert_cmphex(vt_rd(t, VNPU_REG_ID), ==, VNPU_HW_ID_VALUE);
    g_assert_cmphex(vt_rd(t, VNPU_REG_VERSION), ==, VNPU_HW_VERSION(1, 0));
    g_assert_cmphex(vt_rd(t, VNPU_REG_CAPS), ==,
                    VNPU_CAP_MMU | VNPU_CAP_COMPUTE | VNPU_CAP_TIMESTAMP |
                    VNPU_CAP_FAULT_INJECT | VNPU_CAP_CYCLE_MODEL);
    g_assert_cmphex(vt_rd(t, VNPU_REG_PLATFORM), ==, VNPU_PLATFORM_EMULATED);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_NUM_QUEUES), ==, VNPU_NUM_QUEUES);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MAX_CONTEXTS), ==, VNPU_MAX_CONTEXTS);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_VA_BITS), ==, VNPU_VA_BITS);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_NUM_ENGINES), ==, 2);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_CLOCK_MHZ), ==, VNPU_MODEL_CLOCK_MHZ);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MAC_PER_CYCLE), ==,
                     VNPU_MODEL_MACS_PER_CYCLE);
    check_reset_values(t);

    /* Read-write scratch, and reads of ID are side-effect free. */
    vt_wr(t, VNPU_REG_SCRATCH, 0xdeadbeef);
    g_assert_cmphex(vt_rd(t, VNPU_REG_SCRATCH), ==, 0xdeadbeef);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS), ==, 0);
    vt_stop(t);

    t = vt_start("engines=3");
    g_assert_cmpuint(vt_rd(t, VNPU_REG_NUM_ENGINES), ==, 3);
    vt_stop(t);
}

static void test_nop_job(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd;

    vt_device_setup(t);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(c.fault_flags, ==, 0);
    g_assert_cmpuint(c.cycles, ==, VNPU_MODEL_JOB_OVERHEAD_CYCLES);
    g_assert_cmpuint(c.end_ns, >=, c.start_ns);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_HEAD), ==, 1);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_DONE_SEQ_LO), ==, 1);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_DONE_SEQ_HI), ==, 0);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(0)));
    g_assert(!vt_msi_fired(t, VNPU_MSIX_VEC_ERROR));
    g_assert_cmphex(vt_rd(t, VNPU_REG_IRQ_STATUS), ==, VNPU_IRQ_QUEUE(0));
    vt_wr(t, VNPU_REG_IRQ_STATUS, VNPU_IRQ_QUEUE(0));
    g_assert_cmphex(vt_rd(t, VNPU_REG_IRQ_STATUS), ==, 0);

    /* Same on queue 3, through the ring wrap-around. */
    for (int i = 0; i < VT_RING_SIZE + 3; i++) {
        vt_run(t, 3, 0, cmd, b.len, &c);
        g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
        g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(3)));
    }
    g_assert_cmpuint(vt_qrd(t, 3, VNPU_QREG_HEAD), ==, 3);
    g_assert_cmpuint(vt_qrd(t, 3, VNPU_QREG_DONE_SEQ_LO), ==,
                     3000 + VT_RING_SIZE + 3);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS), ==, 0);
    vt_stop(t);
}

static void test_dma_commands(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t src = vt_alloc(t, 3 * VNPU_PAGE_SIZE);
    uint64_t dst = vt_alloc(t, 3 * VNPU_PAGE_SIZE);
    uint64_t fill = vt_alloc(t, 8192);
    uint64_t wv = vt_alloc(t, 16);
    g_autofree uint8_t *pattern = g_malloc(3 * VNPU_PAGE_SIZE);
    g_autofree uint8_t *out = g_malloc(3 * VNPU_PAGE_SIZE);
    uint64_t cmd, ts, expect;
    unsigned i;

    vt_device_setup(t);
    for (i = 0; i < 3 * VNPU_PAGE_SIZE; i++) {
        pattern[i] = i * 7 + 3;
    }
    qtest_memwrite(t->qts, src, pattern, 3 * VNPU_PAGE_SIZE);

    vt_fill(&b, fill + 4, 8000, 0x11223344);
    vt_copy(&b, src + 5, dst + 1, 3 * VNPU_PAGE_SIZE - 5);
    vt_barrier(&b);
    vt_write_value(&b, wv, 0x0123456789abcdefull);
    vt_timestamp(&b, wv + 8);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);
    vt_run(t, 1, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(1)));

    g_assert_cmphex(qtest_readl(t->qts, fill), ==, 0);
    g_assert_cmphex(qtest_readl(t->qts, fill + 4), ==, 0x11223344);
    g_assert_cmphex(qtest_readl(t->qts, fill + 4 + 7996), ==, 0x11223344);
    g_assert_cmphex(qtest_readl(t->qts, fill + 8004), ==, 0);

    qtest_memread(t->qts, dst, out, 3 * VNPU_PAGE_SIZE);
    g_assert_cmpuint(out[0], ==, 0);
    g_assert(memcmp(out + 1, pattern + 5, 3 * VNPU_PAGE_SIZE - 5) == 0);

    g_assert_cmphex(qtest_readq(t->qts, wv), ==, 0x0123456789abcdefull);
    ts = qtest_readq(t->qts, wv + 8);
    g_assert_cmpuint(ts, >=, c.start_ns);
    g_assert_cmpuint(ts, <=, c.end_ns);

    /* Timing model: overhead + DMA bytes / DRAM bytes per cycle. */
    expect = VNPU_MODEL_JOB_OVERHEAD_CYCLES +
             DIV_ROUND_UP(8000, VNPU_MODEL_DRAM_BYTES_PER_CYCLE) +
             DIV_ROUND_UP(2 * (3 * VNPU_PAGE_SIZE - 5),
                          VNPU_MODEL_DRAM_BYTES_PER_CYCLE) + 1 + 1;
    g_assert_cmpuint(c.cycles, ==, expect);
    vt_stop(t);
}

static void test_irq_mask(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd;

    vt_device_setup(t);
    vt_wr(t, VNPU_REG_IRQ_MASK, ALL_IRQS & ~VNPU_IRQ_QUEUE(2));
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);
    vt_run(t, 2, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_usleep(20000);
    g_assert(!vt_msi_fired(t, VNPU_MSIX_VEC_QUEUE(2)));
    g_assert_cmphex(vt_rd(t, VNPU_REG_IRQ_STATUS), ==, VNPU_IRQ_QUEUE(2));
    /* Enabling a pending source delivers its message. */
    vt_wr(t, VNPU_REG_IRQ_MASK, ALL_IRQS);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(2)));
    vt_stop(t);
}

static void test_mmu_translate(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    const uint64_t src_va = 0x7f1234560000ull, dst_va = 0x10000000ull;
    const uint64_t cmd_va = 0x40000000ull;
    uint64_t src_pa[3], dst_pa[3], cmd_pa;
    uint8_t buf[64];
    unsigned i;

    vt_device_setup(t);
    vt_mmu_setup(t);
    /* Non-contiguous physical pages behind contiguous VAs. */
    for (i = 0; i < 3; i++) {
        src_pa[i] = vt_map_new(t, 1, src_va + i * VNPU_PAGE_SIZE, 1,
                               VNPU_PTE_READ);
        vt_alloc_page(t);
        dst_pa[i] = vt_map_new(t, 1, dst_va + i * VNPU_PAGE_SIZE, 1,
                               VNPU_PTE_READ | VNPU_PTE_WRITE);
        memset(buf, 0x40 + i, sizeof(buf));
        qtest_memwrite(t->qts, src_pa[i] + VNPU_PAGE_SIZE - 32, buf, 64 / 2);
        qtest_memwrite(t->qts, src_pa[i], buf, 32);
    }
    vt_copy(&b, src_va, dst_va, 3 * VNPU_PAGE_SIZE);
    vt_write_value(&b, dst_va + 3 * VNPU_PAGE_SIZE - 8, 77);
    cmd_pa = vt_map_new(t, 1, cmd_va, 1, VNPU_PTE_READ);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);

    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    for (i = 0; i < 3; i++) {
        g_assert_cmphex(qtest_readb(t->qts, dst_pa[i]), ==, 0x40 + i);
        g_assert_cmphex(qtest_readb(t->qts, dst_pa[i] + VNPU_PAGE_SIZE - 32),
                        ==, 0x40 + i);
    }
    g_assert_cmpuint(qtest_readq(t->qts, dst_pa[2] + VNPU_PAGE_SIZE - 8), ==,
                     77);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_STATUS), ==, 0);
    vt_stop(t);
}

static void test_mmu_fault(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 }, b2 = { 0 };
    const uint64_t ro_va = 0x200000, cmd_va = 0x100000;
    uint64_t cmd_pa, ro_pa, ok_pa;
    uint32_t slot_bad;

    vt_device_setup(t);
    vt_mmu_setup(t);
    ro_pa = vt_map_new(t, 1, ro_va, 1, VNPU_PTE_READ);
    /* Fault on the second page of the write: the first lands, then stop. */
    vt_write_value(&b, ro_va + 16, 5);
    vt_write_value(&b, ro_va + 24, 6);
    cmd_pa = vt_map_new(t, 1, cmd_va, 1, VNPU_PTE_READ);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);

    /* Context 2: a well-behaved job on another queue. */
    ok_pa = vt_map_new(t, 2, ro_va, 1, VNPU_PTE_READ | VNPU_PTE_WRITE);
    vt_write_value(&b2, ro_va + 16, 9);
    qtest_memwrite(t->qts, vt_map_new(t, 2, cmd_va, 1, VNPU_PTE_READ),
                   b2.buf, b2.len);

    slot_bad = vt_submit(t, 0, 1, cmd_va, b.len);
    vt_run(t, 1, 2, cmd_va, b2.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(qtest_readq(t->qts, ok_pa + 16), ==, 9);

    g_assert(vt_wait_idle(t, 0));
    vt_read_compl(t, 0, slot_bad, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_va, ==, ro_va + 16);
    g_assert_cmphex(c.fault_flags, ==, VNPU_FAULT_VALID | VNPU_FAULT_WRITE |
                    (VNPU_FAULT_REASON_PERMISSION << VNPU_FAULT_REASON_SHIFT));
    g_assert_cmpuint(qtest_readq(t->qts, ro_pa + 16), ==, 0);

    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_STATUS), ==, c.fault_flags);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_FAULT_CTX), ==, 1);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_LO), ==, ro_va + 16);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_HI), ==, 0);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_FAULT_QUEUE), ==, 0);
    g_assert(vt_rd(t, VNPU_REG_IRQ_STATUS) & VNPU_IRQ_MMU_FAULT);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_ERROR));
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(0)));

    /* A second fault (unmapped VA, read) does not overwrite the latch. */
    b = (VtCmds){ 0 };
    vt_copy(&b, 0x5000000, ro_va + 1024, 8);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_va, ==, 0x5000000);
    g_assert_cmphex(c.fault_flags, ==, VNPU_FAULT_VALID |
                    (VNPU_FAULT_REASON_TRANSLATION << VNPU_FAULT_REASON_SHIFT));
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_LO), ==, ro_va + 16);
    /* Clearing the latch lets the next fault in. */
    vt_wr(t, VNPU_REG_MMU_FAULT_STATUS, VNPU_FAULT_VALID);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_STATUS), ==, 0);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_FAULT_VA_LO), ==, 0x5000000);

    /* VA beyond VA_BITS and an invalid context entry. */
    b = (VtCmds){ 0 };
    vt_write_value(&b, 1ull << VNPU_VA_BITS, 1);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_flags >> VNPU_FAULT_REASON_SHIFT & 0xf, ==,
                    VNPU_FAULT_REASON_ADDRESS);
    vt_run(t, 0, 3, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_flags, ==, VNPU_FAULT_VALID |
                    (VNPU_FAULT_REASON_CONTEXT << VNPU_FAULT_REASON_SHIFT));
    g_assert_cmphex(c.fault_va, ==, cmd_va);
    /* ctx id beyond CTX_COUNT (16) but below MAX_CONTEXTS. */
    vt_run(t, 0, 100, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_flags >> VNPU_FAULT_REASON_SHIFT & 0xf, ==,
                    VNPU_FAULT_REASON_CONTEXT);

    /* Context 2 still works after all of this. */
    vt_run(t, 1, 2, cmd_va, b2.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    vt_stop(t);
}

static void test_mmu_isolation(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b1 = { 0 }, b2 = { 0 }, b3 = { 0 };
    const uint64_t va = 0x300000, cmd_va = 0x100000, secret_va = 0x900000;
    uint64_t pa1, pa2, secret_pa, cmd2_pa;

    vt_device_setup(t);
    vt_mmu_setup(t);
    pa1 = vt_map_new(t, 1, va, 1, VNPU_PTE_READ | VNPU_PTE_WRITE);
    pa2 = vt_map_new(t, 2, va, 1, VNPU_PTE_READ | VNPU_PTE_WRITE);
    secret_pa = vt_map_new(t, 1, secret_va, 1, VNPU_PTE_READ);
    qtest_writeq(t->qts, secret_pa, 0x5ec2e7);

    vt_write_value(&b1, va, 111);
    vt_write_value(&b2, va, 222);
    qtest_memwrite(t->qts, vt_map_new(t, 1, cmd_va, 1, VNPU_PTE_READ),
                   b1.buf, b1.len);
    cmd2_pa = vt_map_new(t, 2, cmd_va, 1, VNPU_PTE_READ);
    qtest_memwrite(t->qts, cmd2_pa, b2.buf, b2.len);

    vt_run(t, 0, 1, cmd_va, b1.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    vt_run(t, 1, 2, cmd_va, b2.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(qtest_readq(t->qts, pa1), ==, 111);
    g_assert_cmpuint(qtest_readq(t->qts, pa2), ==, 222);

    /* Context 2 cannot reach context 1's page at the same VA. */
    vt_copy(&b3, secret_va, va + 8, 8);
    qtest_memwrite(t->qts, cmd2_pa, b3.buf, b3.len);
    vt_run(t, 1, 2, cmd_va, b3.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_va, ==, secret_va);
    g_assert_cmpuint(qtest_readq(t->qts, pa2 + 8), ==, 0);
    vt_stop(t);
}

static void test_tlb_invalidate(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    /* Different TLB sets, so the command fetch cannot evict the data. */
    const uint64_t va = 0x401000, cmd_va = 0x100000;
    uint64_t pa1, pa2, seq;

    vt_device_setup(t);
    vt_mmu_setup(t);
    pa1 = vt_map_new(t, 1, va, 1, VNPU_PTE_READ | VNPU_PTE_WRITE);
    pa2 = vt_alloc_page(t);
    vt_write_value(&b, va, 0xaa);
    qtest_memwrite(t->qts, vt_map_new(t, 1, cmd_va, 1, VNPU_PTE_READ),
                   b.buf, b.len);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(qtest_readq(t->qts, pa1), ==, 0xaa);

    /* Remap without invalidating: the TLB still holds the old page. */
    vt_map(t, 1, va, pa2, VNPU_PTE_READ | VNPU_PTE_WRITE);
    qtest_writeq(t->qts, pa1, 0);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(qtest_readq(t->qts, pa1), ==, 0xaa);
    g_assert_cmpuint(qtest_readq(t->qts, pa2), ==, 0);

    /* Invalidating another context changes nothing for context 1. */
    seq = vt_rd(t, VNPU_REG_MMU_TLB_INVAL_SEQ);
    vt_wr(t, VNPU_REG_MMU_TLB_INVAL, 2);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_TLB_INVAL_SEQ), ==, seq + 1);
    qtest_writeq(t->qts, pa1, 0);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(qtest_readq(t->qts, pa1), ==, 0xaa);

    vt_wr(t, VNPU_REG_MMU_TLB_INVAL, 1);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_TLB_INVAL_SEQ), ==, seq + 2);
    qtest_writeq(t->qts, pa1, 0);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(qtest_readq(t->qts, pa1), ==, 0);
    g_assert_cmpuint(qtest_readq(t->qts, pa2), ==, 0xaa);

    /* Unmap + invalidate all: now a translation fault. */
    vt_map(t, 1, va, 0, 0);
    qtest_writeq(t->qts, vt_leaf(t, 1, va), 0);
    vt_wr(t, VNPU_REG_MMU_TLB_INVAL, VNPU_TLB_INVAL_ALL);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_TLB_INVAL_SEQ), ==, seq + 3);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_flags >> VNPU_FAULT_REASON_SHIFT & 0xf, ==,
                    VNPU_FAULT_REASON_TRANSLATION);
    vt_stop(t);
}

/* Run a single-buffer job in bypass mode, expect CMD_ERROR at @off. */
static void expect_cmd_error(VnpuT *t, VtCmds *b, uint32_t off)
{
    struct vnpu_hw_completion c;
    uint64_t cmd = vt_put_cmds(t, b);

    vt_run(t, 0, 0, cmd, b->len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_CMD_ERROR);
    g_assert_cmpuint(c.fault_va, ==, off);
    g_assert_cmpuint(c.fault_flags, ==, 0);
}

static void test_bad_commands(void)
{
    VnpuT *t = vt_start(NULL);
    uint64_t mem = vt_alloc(t, 4096), marker = vt_alloc(t, 8);
    struct vnpu_cmd_hdr *h;
    VtCmds b;

    vt_device_setup(t);

    /* Unknown opcode after a command that executes. */
    b = (VtCmds){ 0 };
    vt_write_value(&b, marker, 42);
    vt_cmd(&b, 0x3f, 8);
    vt_write_value(&b, marker, 43);
    expect_cmd_error(t, &b, 24);
    g_assert_cmpuint(qtest_readq(t->qts, marker), ==, 42);

    /* An opcode of a later hardware version. */
    b = (VtCmds){ 0 };
    vt_cmd(&b, 0x80, 16);
    expect_cmd_error(t, &b, 0);

    /* Size not a multiple of 8, zero, and past the buffer's end. */
    b = (VtCmds){ 0 };
    vt_nop(&b);
    h = vt_cmd(&b, VNPU_CMD_NOP, 16);
    h->size = cpu_to_le32(12);
    expect_cmd_error(t, &b, 8);
    b = (VtCmds){ 0 };
    h = vt_cmd(&b, VNPU_CMD_NOP, 8);
    h->size = 0;
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    h = vt_cmd(&b, VNPU_CMD_NOP, 8);
    h->size = cpu_to_le32(64);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    h = vt_cmd(&b, VNPU_CMD_NOP, 8);
    h->size = cpu_to_le32(0xfffffff8);
    expect_cmd_error(t, &b, 0);

    /* Flags and reserved fields. */
    b = (VtCmds){ 0 };
    h = vt_cmd(&b, VNPU_CMD_BARRIER, 8);
    h->flags = cpu_to_le16(1);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_fill(&b, mem, 16, 1);
    ((struct vnpu_cmd_fill *)b.buf)->reserved = 1;
    expect_cmd_error(t, &b, 0);

    /* Wrong fixed size for a v1 command. */
    b = (VtCmds){ 0 };
    vt_cmd(&b, VNPU_CMD_WRITE_VALUE, 32);
    expect_cmd_error(t, &b, 0);

    /* Alignment. */
    b = (VtCmds){ 0 };
    vt_write_value(&b, mem + 4, 1);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_timestamp(&b, mem + 1);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_fill(&b, mem + 2, 16, 1);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_fill(&b, mem, 6, 1);
    expect_cmd_error(t, &b, 0);

    /* Length overflow and overlapping copies. */
    b = (VtCmds){ 0 };
    vt_copy(&b, mem, mem + 2048, UINT64_MAX - 16);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_fill(&b, UINT64_MAX - 7, 16, 1);
    expect_cmd_error(t, &b, 0);
    b = (VtCmds){ 0 };
    vt_nop(&b);
    vt_copy(&b, mem, mem + 100, 200);
    expect_cmd_error(t, &b, 8);
    b = (VtCmds){ 0 };
    vt_copy(&b, mem + 100, mem, 200);
    expect_cmd_error(t, &b, 0);

    /* A DMA to an address with no RAM is a job error, not a crash. */
    {
        struct vnpu_hw_completion c;
        uint64_t cmd;

        b = (VtCmds){ 0 };
        vt_write_value(&b, 0xfee00000, 1);     /* the MSI window: not RAM */
        cmd = vt_put_cmds(t, &b);
        vt_run(t, 0, 0, cmd, b.len, &c);
        g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DMA_ERROR);
        g_assert_cmphex(c.fault_va, ==, 0xfee00000);
        b = (VtCmds){ 0 };
        vt_copy(&b, 1ull << 40, mem, 64);
        cmd = vt_put_cmds(t, &b);
        vt_run(t, 0, 0, cmd, b.len, &c);
        g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DMA_ERROR);
    }

    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS), ==, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ID), ==, VNPU_HW_ID_VALUE);
    vt_stop(t);
}

static void test_bad_descriptors(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd;
    uint32_t slot;
    struct {
        uint32_t ctx, size, flags;
        uint64_t va_off;
    } bad[] = {
        { 0, 8, 1, 0 },                         /* flags */
        { 0, 0, 0, 0 },                         /* empty */
        { 0, 12, 0, 0 },                        /* not a multiple of 8 */
        { 0, VNPU_CMD_MAX_BUFFER + 8, 0, 0 },   /* too large */
        { 0, 8, 0, 4 },                         /* unaligned */
        { VNPU_MAX_CONTEXTS, 8, 0, 0 },         /* no such context */
        { 0xffffffff, 8, 0, 0 },
    };
    unsigned i;

    vt_device_setup(t);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        slot = vt_put_desc(t, 2, bad[i].ctx, cmd + bad[i].va_off, bad[i].size,
                           bad[i].flags);
        vt_doorbell(t, 2);
        g_assert(vt_wait_idle(t, 2));
        vt_read_compl(t, 2, slot, &c);
        g_assert_cmpuint(c.seq, ==, t->seq[2] + 2000);
        g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DESC_ERROR);
    }
    /* Reserved descriptor words. */
    slot = vt_put_desc(t, 2, 0, cmd, 8, 0);
    qtest_writel(t->qts, t->ring[2] + slot * 64 + 20, 1);
    vt_doorbell(t, 2);
    g_assert(vt_wait_idle(t, 2));
    vt_read_compl(t, 2, slot, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DESC_ERROR);
    slot = vt_put_desc(t, 2, 0, cmd, 8, 0);
    qtest_writeq(t->qts, t->ring[2] + slot * 64 + 56, 1);
    vt_doorbell(t, 2);
    g_assert(vt_wait_idle(t, 2));
    vt_read_compl(t, 2, slot, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DESC_ERROR);

    /* The queue keeps going. */
    vt_run(t, 2, 0, cmd, 8, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    vt_stop(t);
}

static void expect_error(VnpuT *t, uint32_t err)
{
    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS) & err, ==, err);
    g_assert(vt_rd(t, VNPU_REG_IRQ_STATUS) & VNPU_IRQ_ERROR);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_ERROR));
    vt_wr(t, VNPU_REG_ERROR_STATUS, 0xffffffff);
    vt_wr(t, VNPU_REG_IRQ_STATUS, VNPU_IRQ_ERROR);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ERROR_STATUS), ==, 0);
}

static void test_ring_errors(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd, ring = vt_alloc(t, 4096);
    static const uint32_t bad_sizes[] = { 0, 1, 3, 24, 8192, 0xffffffff };
    unsigned i;

    vt_device_setup(t);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);

    /* Ring size not a power of two / out of range. */
    for (i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
        vt_qwr(t, 1, VNPU_QREG_CONTROL, 0);
        vt_qwr(t, 1, VNPU_QREG_RING_SIZE, bad_sizes[i]);
        vt_qwr(t, 1, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
        g_assert(vt_qrd(t, 1, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR);
        expect_error(t, VNPU_ERR_RING);
        /* A halted queue ignores doorbells. */
        vt_qwr(t, 1, VNPU_QREG_DOORBELL, 1);
        g_assert_cmpuint(vt_qrd(t, 1, VNPU_QREG_HEAD), ==, 0);
    }

    /* Unaligned ring base. */
    vt_qwr(t, 1, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, 1, VNPU_QREG_RING_SIZE, 16);
    vt_qwr(t, 1, VNPU_QREG_RING_LO, ring + 8);
    vt_qwr(t, 1, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    g_assert(vt_qrd(t, 1, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR);
    expect_error(t, VNPU_ERR_RING);

    /* Ring registers are locked while the queue is enabled. */
    vt_qwr(t, 0, VNPU_QREG_RING_SIZE, 4);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_RING_SIZE), ==, VT_RING_SIZE);
    expect_error(t, VNPU_ERR_REGISTER);

    /* TAIL beyond the ring halts the queue until it is re-enabled. */
    vt_qwr(t, 0, VNPU_QREG_TAIL, VT_RING_SIZE);
    g_assert(vt_qrd(t, 0, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR);
    expect_error(t, VNPU_ERR_RING);
    vt_qwr(t, 0, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, 0, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    g_assert_cmphex(vt_qrd(t, 0, VNPU_QREG_STATUS), ==,
                    VNPU_QSTATUS_ENABLED | VNPU_QSTATUS_IDLE);
    t->tail[0] = 0;
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);

    /* Doorbell on a disabled queue, writes to RO and undefined registers. */
    vt_qwr(t, 1, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, 1, VNPU_QREG_DOORBELL, 1);
    expect_error(t, VNPU_ERR_REGISTER);
    vt_wr(t, VNPU_REG_ID, 0);
    g_assert_cmphex(vt_rd(t, VNPU_REG_ID), ==, VNPU_HW_ID_VALUE);
    expect_error(t, VNPU_ERR_REGISTER);
    vt_qwr(t, 2, VNPU_QREG_HEAD, 5);
    g_assert_cmpuint(vt_qrd(t, 2, VNPU_QREG_HEAD), ==, 0);
    expect_error(t, VNPU_ERR_REGISTER);
    vt_wr(t, 0x8000, 1);
    g_assert_cmphex(vt_rd(t, 0x8000), ==, 0);
    expect_error(t, VNPU_ERR_REGISTER);
    vt_qwr(t, 2, VNPU_QREG_PRIORITY, 4);
    expect_error(t, VNPU_ERR_REGISTER);

    /* Descriptor ring with no memory behind it. */
    vt_qwr(t, 1, VNPU_QREG_RING_LO, 0);
    vt_qwr(t, 1, VNPU_QREG_RING_HI, 0x100);
    vt_qwr(t, 1, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    vt_qwr(t, 1, VNPU_QREG_TAIL, 1);
    vt_qwr(t, 1, VNPU_QREG_DOORBELL, 1);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_ERROR));
    g_assert(vt_qrd(t, 1, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR);
    g_assert_cmpuint(vt_qrd(t, 1, VNPU_QREG_HEAD), ==, 0);
    g_assert(vt_rd(t, VNPU_REG_ERROR_STATUS) & VNPU_ERR_DESCRIPTOR);
    vt_wr(t, VNPU_REG_ERROR_STATUS, 0xffffffff);

    /* Completion ring with no memory behind it. */
    vt_qwr(t, 1, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, 1, VNPU_QREG_RING_LO, t->ring[1]);
    vt_qwr(t, 1, VNPU_QREG_RING_HI, 0);
    vt_qwr(t, 1, VNPU_QREG_COMPL_HI, 0x100);
    vt_qwr(t, 1, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    t->tail[1] = 0;
    vt_put_desc(t, 1, 0, cmd, 8, 0);
    /* vt_put_desc cleared a completion slot in RAM; the device must not. */
    vt_doorbell(t, 1);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_ERROR));
    g_assert(vt_rd(t, VNPU_REG_ERROR_STATUS) & VNPU_ERR_COMPLETION);
    g_assert(vt_qrd(t, 1, VNPU_QREG_STATUS) & VNPU_QSTATUS_ERROR);
    vt_wr(t, VNPU_REG_ERROR_STATUS, 0xffffffff);

    /* Bad context tables are refused, the MMU stays off. */
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_LO, ring + 16);
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, 4);
    vt_wr(t, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CONTROL), ==, 0);
    expect_error(t, VNPU_ERR_CTX_TABLE);
    vt_wr(t, VNPU_REG_MMU_CTX_TABLE_LO, ring);
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, 0);
    vt_wr(t, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
    g_assert_cmphex(vt_rd(t, VNPU_REG_MMU_CONTROL), ==, 0);
    expect_error(t, VNPU_ERR_CTX_TABLE);
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, VNPU_MAX_CONTEXTS + 1);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_MMU_CTX_COUNT), ==, 0);
    expect_error(t, VNPU_ERR_REGISTER);
    vt_wr(t, VNPU_REG_MMU_TLB_INVAL, VNPU_MAX_CONTEXTS);
    expect_error(t, VNPU_ERR_REGISTER);

    /* Context table entries that point nowhere: a BUS fault for the job. */
    vt_wr(t, VNPU_REG_MMU_CTX_COUNT, 4);
    vt_wr(t, VNPU_REG_MMU_CONTROL, VNPU_MMU_CONTROL_ENABLE);
    qtest_writeq(t->qts, ring + 16, (1ull << 41) | VNPU_CTX_VALID);
    vt_run(t, 0, 1, 0x1000, 8, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert_cmphex(c.fault_flags >> VNPU_FAULT_REASON_SHIFT & 0xf, ==,
                    VNPU_FAULT_REASON_BUS);

    /* Still alive, still working. */
    g_assert_cmphex(vt_rd(t, VNPU_REG_ID), ==, VNPU_HW_ID_VALUE);
    vt_wr(t, VNPU_REG_MMU_CONTROL, 0);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    vt_stop(t);
}

static void test_soft_reset(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd, marker = vt_alloc(t, 8);
    uint32_t s0, s1;

    vt_device_setup(t);
    vt_mmu_setup(t);
    vt_wr(t, VNPU_REG_MMU_CONTROL, 0);
    vt_write_value(&b, marker, 7);
    cmd = vt_put_cmds(t, &b);

    /* One job hangs on an engine, one waits behind it. */
    vt_qom_set(t, "inject-hang", 1);
    s0 = vt_submit(t, 0, 0, cmd, b.len);
    s1 = vt_submit(t, 0, 0, cmd, b.len);
    g_usleep(50000);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_HEAD), ==, 0);
    g_assert(!(vt_rd(t, VNPU_REG_STATUS) & VNPU_STATUS_IDLE));
    g_assert_cmpuint(vt_qom_get(t, "inject-hang"), ==, 0);
    vt_wr(t, VNPU_REG_SCRATCH, 0x1234);
    vt_wr(t, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
    check_reset_values(t);

    /* Neither job completed or ran. */
    vt_read_compl(t, 0, s0, &c);
    g_assert_cmpuint(c.seq, ==, 0);
    vt_read_compl(t, 0, s1, &c);
    g_assert_cmpuint(c.seq, ==, 0);
    g_assert_cmpuint(qtest_readq(t->qts, marker), ==, 0);

    /* Reprogrammed (MSI-X is PCI state and survives), it works again. */
    vt_device_setup(t);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(qtest_readq(t->qts, marker), ==, 7);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(0)));
    vt_stop(t);
}

static void test_flr(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint8_t cap = qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0);
    uint64_t cmd;
    uint16_t ctl;

    vt_device_setup(t);
    vt_wr(t, VNPU_REG_SCRATCH, 0x55);
    vt_qom_set(t, "inject-hang", 1);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);
    vt_submit(t, 3, 0, cmd, b.len);
    g_usleep(20000);

    ctl = qpci_config_readw(t->dev, cap + PCI_EXP_DEVCTL);
    qpci_config_writew(t->dev, cap + PCI_EXP_DEVCTL, ctl | PCI_EXP_DEVCTL_BCR_FLR);
    /* FLR also resets the command register: re-enable like a driver. */
    qpci_device_enable(t->dev);
    t->bar = qpci_iomap(t->dev, VNPU_BAR_REGS, NULL);
    check_reset_values(t);

    vt_msix_setup(t);
    vt_device_setup(t);
    vt_run(t, 3, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(3)));
    vt_stop(t);
}

static void test_inject_hang(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd;

    vt_device_setup(t);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);

    /* Armed from inside the guest through the debug block. */
    vt_wr(t, VNPU_REG_DEBUG_INJECT_HANG, 1);
    g_assert_cmpuint(vt_qom_get(t, "inject-hang"), ==, 1);
    vt_submit(t, 0, 0, cmd, b.len);
    g_usleep(20000);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_DEBUG_INJECT_HANG), ==, 0);
    /* The other engine still serves the other queues. */
    vt_run(t, 1, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_HEAD), ==, 0);
    g_assert(!(vt_qrd(t, 0, VNPU_QREG_STATUS) & VNPU_QSTATUS_IDLE));

    /* A hung queue cannot be re-enabled under the job; reset recovers. */
    vt_qwr(t, 0, VNPU_QREG_CONTROL, 0);
    vt_qwr(t, 0, VNPU_QREG_CONTROL, VNPU_QCTRL_ENABLE);
    g_assert(vt_rd(t, VNPU_REG_ERROR_STATUS) & VNPU_ERR_REGISTER);
    vt_wr(t, VNPU_REG_CONTROL, VNPU_CONTROL_SOFT_RESET);
    g_assert_cmphex(vt_rd(t, VNPU_REG_STATUS), ==,
                    VNPU_STATUS_READY | VNPU_STATUS_IDLE);
    vt_device_setup(t);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    vt_stop(t);
}

static void test_inject_dma_error(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd, marker = vt_alloc(t, 8);

    vt_device_setup(t);
    vt_write_value(&b, marker, 3);
    cmd = vt_put_cmds(t, &b);

    vt_qom_set(t, "inject-dma-error", 2);
    g_assert_cmpuint(vt_rd(t, VNPU_REG_DEBUG_INJECT_DMA_ERROR), ==, 2);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DMA_ERROR);
    vt_run(t, 1, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DMA_ERROR);
    g_assert_cmpuint(qtest_readq(t->qts, marker), ==, 0);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(qtest_readq(t->qts, marker), ==, 3);

    vt_wr(t, VNPU_REG_DEBUG_INJECT_DMA_ERROR, 1);
    vt_run(t, 2, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_DMA_ERROR);
    g_assert_cmpuint(vt_qom_get(t, "inject-dma-error"), ==, 0);
    vt_stop(t);
}

static void test_inject_lost_irq(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    uint64_t cmd;

    vt_device_setup(t);
    vt_nop(&b);
    cmd = vt_put_cmds(t, &b);

    vt_qom_set(t, "inject-lost-irq", 1);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_DONE_SEQ_LO), ==, 1);
    g_usleep(50000);
    g_assert(!vt_msi_fired(t, VNPU_MSIX_VEC_QUEUE(0)));
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_assert(vt_msi_wait(t, VNPU_MSIX_VEC_QUEUE(0)));

    vt_wr(t, VNPU_REG_DEBUG_INJECT_LOST_IRQ, 1);
    vt_run(t, 0, 0, cmd, b.len, &c);
    g_usleep(50000);
    g_assert(!vt_msi_fired(t, VNPU_MSIX_VEC_QUEUE(0)));
    vt_stop(t);
}

static void test_two_queues(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    const unsigned n = VT_RING_SIZE - 1;
    const uint64_t len = 256 * 1024;
    uint64_t buf[2], cmd[2];
    unsigned q, i;

    vt_device_setup(t);
    for (q = 0; q < 2; q++) {
        VtCmds b = { 0 };

        buf[q] = vt_alloc(t, 2 * len);
        vt_fill(&b, buf[q], len, 0x01010101 * (q + 1));
        vt_copy(&b, buf[q], buf[q] + len, len);
        cmd[q] = vt_put_cmds(t, &b);
        for (i = 0; i < n; i++) {
            vt_put_desc(t, q, 0, cmd[q], b.len, 0);
        }
    }
    vt_doorbell(t, 0);
    vt_doorbell(t, 1);
    for (q = 0; q < 2; q++) {
        g_assert(vt_wait_idle(t, q));
        for (i = 0; i < n; i++) {
            vt_read_compl(t, q, i, &c);
            g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
            g_assert_cmpuint(c.seq, ==, 1000 * q + i + 1);
        }
        g_assert_cmpuint(vt_qrd(t, q, VNPU_QREG_DONE_SEQ_LO), ==, 1000 * q + n);
        g_assert_cmphex(qtest_readl(t->qts, buf[q] + 2 * len - 4), ==,
                        0x01010101 * (q + 1));
    }
    vt_stop(t);
}

/*
 * With one engine the execution order is deterministic.  Each job copies
 * the id of the previous job from a shared word into its own log slot,
 * then writes its own id there: the log is the execution chain.
 */
static void run_order(VnpuT *t, const unsigned *prio, unsigned njobs,
                      unsigned *order)
{
    uint64_t last = vt_alloc(t, 8), log = vt_alloc(t, 8 * 64);
    uint64_t prev = 0;
    unsigned q, i, k;

    vt_device_setup(t);
    vt_wr(t, VNPU_REG_CONTROL, 0);
    for (q = 0; q < VNPU_NUM_QUEUES; q++) {
        vt_qwr(t, q, VNPU_QREG_PRIORITY, prio[q]);
        for (i = 0; i < njobs; i++) {
            VtCmds b = { 0 };
            unsigned id = q * 16 + i + 1;

            vt_copy(&b, last, log + 8 * id, 8);
            vt_write_value(&b, last, id);
            vt_put_desc(t, q, 0, vt_put_cmds(t, &b), b.len, 0);
        }
        vt_doorbell(t, q);
    }
    /* Nothing runs until the device is enabled. */
    g_usleep(20000);
    g_assert_cmpuint(vt_qrd(t, 0, VNPU_QREG_HEAD), ==, 0);
    vt_wr(t, VNPU_REG_CONTROL, VNPU_CONTROL_ENABLE);
    for (q = 0; q < VNPU_NUM_QUEUES; q++) {
        g_assert(vt_wait_idle(t, q));
    }
    /* Walk the chain from the first job (whose predecessor is 0). */
    for (k = 0; k < VNPU_NUM_QUEUES * njobs; k++) {
        bool found = false;

        for (q = 0; q < VNPU_NUM_QUEUES && !found; q++) {
            for (i = 0; i < njobs && !found; i++) {
                unsigned id = q * 16 + i + 1;

                if (qtest_readq(t->qts, log + 8 * id) == prev) {
                    order[k] = id;
                    prev = id;
                    found = true;
                }
            }
        }
        g_assert(found);
    }
}

static void test_priority(void)
{
    static const unsigned mixed[VNPU_NUM_QUEUES] = { 0, 3, 1, 3 };
    static const unsigned equal[VNPU_NUM_QUEUES] = { 2, 2, 2, 2 };
    static const unsigned want_mixed[] = {
        17, 49, 18, 50, 19, 51,     /* queues 1 and 3 (priority 3) alternate */
        33, 34, 35,                 /* then queue 2 (priority 1) */
        1, 2, 3,                    /* then queue 0 (priority 0) */
    };
    static const unsigned want_equal[] = {
        1, 17, 33, 49, 2, 18, 34, 50, 3, 19, 35, 51,
    };
    unsigned order[12];
    VnpuT *t;

    t = vt_start("engines=1");
    run_order(t, mixed, 3, order);
    g_assert(memcmp(order, want_mixed, sizeof(order)) == 0);
    vt_stop(t);

    t = vt_start("engines=1");
    run_order(t, equal, 3, order);
    g_assert(memcmp(order, want_equal, sizeof(order)) == 0);
    vt_stop(t);
}

#ifdef VT_HAVE_OPS
/*
 * The compute seam: an fp32 ELTWISE add whose tensors span physically
 * scattered pages, executed by the compute engine through the MMU.
 */
static void test_compute(void)
{
    VnpuT *t = vt_start(NULL);
    struct vnpu_hw_completion c;
    VtCmds b = { 0 };
    const uint32_t n = 3000;
    const uint64_t a_va = 0x1000000, b_va = 0x2000000, y_va = 0x3000000;
    const uint64_t cmd_va = 0x100000;
    const unsigned pages = DIV_ROUND_UP(n * 4, VNPU_PAGE_SIZE);
    uint64_t a_pa[8], b_pa[8], y_pa[8], cmd_pa;
    struct vnpu_cmd_compute *cc;
    unsigned i, p;

    vt_device_setup(t);
    vt_mmu_setup(t);
    for (p = 0; p < pages; p++) {
        a_pa[p] = vt_map_new(t, 1, a_va + p * VNPU_PAGE_SIZE, 1, VNPU_PTE_READ);
        b_pa[p] = vt_map_new(t, 1, b_va + p * VNPU_PAGE_SIZE, 1, VNPU_PTE_READ);
        y_pa[p] = vt_map_new(t, 1, y_va + p * VNPU_PAGE_SIZE, 1,
                             VNPU_PTE_READ | VNPU_PTE_WRITE);
    }
    for (i = 0; i < n; i++) {
        float fa = i * 0.5f, fb = 1000.0f - i;
        uint32_t ua, ub;

        memcpy(&ua, &fa, 4);
        memcpy(&ub, &fb, 4);
        qtest_writel(t->qts, a_pa[i * 4 / VNPU_PAGE_SIZE] +
                     (i * 4) % VNPU_PAGE_SIZE, ua);
        qtest_writel(t->qts, b_pa[i * 4 / VNPU_PAGE_SIZE] +
                     (i * 4) % VNPU_PAGE_SIZE, ub);
    }

    cc = vt_cmd(&b, VNPU_OP_ELTWISE, sizeof(*cc));
    cc->attr.eltwise.kind = cpu_to_le32(VNPU_ELTWISE_ADD);
    for (i = 0; i < 4; i++) {
        static const uint64_t vas[4] = { a_va, b_va, 0, y_va };

        if (!vas[i]) {
            continue;
        }
        cc->t[i].va = cpu_to_le64(vas[i]);
        cc->t[i].dtype = VNPU_DT_FP32;
        cc->t[i].rank = 1;
        cc->t[i].dims[0] = cpu_to_le32(n);
    }
    cmd_pa = vt_map_new(t, 1, cmd_va, 1, VNPU_PTE_READ);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);

    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_OK);
    g_assert_cmpuint(c.cycles, >, VNPU_MODEL_JOB_OVERHEAD_CYCLES);
    for (i = 0; i < n; i++) {
        uint32_t uy = qtest_readl(t->qts, y_pa[i * 4 / VNPU_PAGE_SIZE] +
                                  (i * 4) % VNPU_PAGE_SIZE);
        float fy;

        memcpy(&fy, &uy, 4);
        g_assert_cmpfloat(fy, ==, i * 0.5f + (1000.0f - i));
    }

    /* The output on a read-only page: a write fault inside the engine. */
    vt_map(t, 1, y_va + VNPU_PAGE_SIZE, y_pa[1], VNPU_PTE_READ);
    vt_wr(t, VNPU_REG_MMU_TLB_INVAL, 1);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_MMU_FAULT);
    g_assert(c.fault_flags & VNPU_FAULT_WRITE);
    g_assert_cmphex(c.fault_va & ~(uint64_t)(VNPU_PAGE_SIZE - 1), ==,
                    y_va + VNPU_PAGE_SIZE);

    /* An encoding the engine rejects, after a NOP: CMD_ERROR at 8. */
    b = (VtCmds){ 0 };
    vt_nop(&b);
    cc = vt_cmd(&b, VNPU_OP_ELTWISE, sizeof(*cc));
    cc->attr.eltwise.kind = cpu_to_le32(77);
    qtest_memwrite(t->qts, cmd_pa, b.buf, b.len);
    vt_run(t, 0, 1, cmd_va, b.len, &c);
    g_assert_cmpuint(c.status, ==, VNPU_JOB_STATUS_CMD_ERROR);
    g_assert_cmpuint(c.fault_va, ==, 8);
    vt_stop(t);
}
#endif

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/vnpu/identification", test_identification);
    qtest_add_func("/vnpu/job/nop", test_nop_job);
    qtest_add_func("/vnpu/job/dma-commands", test_dma_commands);
    qtest_add_func("/vnpu/irq/mask", test_irq_mask);
    qtest_add_func("/vnpu/mmu/translate", test_mmu_translate);
    qtest_add_func("/vnpu/mmu/fault", test_mmu_fault);
    qtest_add_func("/vnpu/mmu/isolation", test_mmu_isolation);
    qtest_add_func("/vnpu/mmu/tlb-invalidate", test_tlb_invalidate);
#ifdef VT_HAVE_OPS
    qtest_add_func("/vnpu/job/compute", test_compute);
#endif
    qtest_add_func("/vnpu/malformed/commands", test_bad_commands);
    qtest_add_func("/vnpu/malformed/descriptors", test_bad_descriptors);
    qtest_add_func("/vnpu/malformed/rings-and-registers", test_ring_errors);
    qtest_add_func("/vnpu/reset/soft", test_soft_reset);
    qtest_add_func("/vnpu/reset/flr", test_flr);
    qtest_add_func("/vnpu/inject/hang", test_inject_hang);
    qtest_add_func("/vnpu/inject/dma-error", test_inject_dma_error);
    qtest_add_func("/vnpu/inject/lost-irq", test_inject_lost_irq);
    qtest_add_func("/vnpu/queues/concurrent", test_two_queues);
    qtest_add_func("/vnpu/queues/priority", test_priority);
    return g_test_run();
}
