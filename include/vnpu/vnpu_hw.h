/* SPDX-License-Identifier: MIT */
/*
 * vnpu hardware interface, version 1.
 *
 * This is the one definition of the NPU's programming interface: PCI
 * identity, BAR0 registers, queue descriptors, completion records, device
 * MMU formats and the command stream.  The QEMU device model, the kernel
 * driver and libnpu all include this file, so the three can never disagree.
 * Documentation/hw-spec.rst is the prose version of the same contract.
 *
 * All multi-byte fields in system memory are little-endian.  The
 * structures the driver reads or writes say so with __le types, so sparse
 * checks every conversion; outside sparse they are the plain __u types.
 * Only <linux/types.h> is used so the header compiles in the kernel, in
 * QEMU and in plain userspace alike.
 */
#ifndef VNPU_HW_H
#define VNPU_HW_H

#include <linux/types.h>

/* ---- PCI identity ------------------------------------------------------ */

#define VNPU_PCI_VENDOR_ID		0x1234
#define VNPU_PCI_DEVICE_ID		0x4e50	/* "NP" */
#define VNPU_PCI_REVISION		0x01
#define VNPU_PCI_CLASS_CODE		0x120000 /* processing accelerator */

#define VNPU_BAR_REGS			0	/* 64 KiB MMIO, 32-bit accesses */
#define VNPU_BAR_MSIX			4	/* MSI-X table and PBA */
#define VNPU_BAR_REGS_SIZE		0x10000

/* ---- Identification ---------------------------------------------------- */

#define VNPU_HW_ID_VALUE		0x3155504e /* "NPU1" read as LE bytes */
#define VNPU_HW_VERSION_MAJOR		1
#define VNPU_HW_VERSION_MINOR		1	/* 1.1: command limits */
#define VNPU_HW_VERSION(maj, min)	(((maj) << 16) | (min))

#define VNPU_NUM_QUEUES			4
#define VNPU_MAX_CONTEXTS		256
#define VNPU_VA_BITS			48
#define VNPU_PAGE_SHIFT			12
#define VNPU_PAGE_SIZE			(1u << VNPU_PAGE_SHIFT)

/*
 * The modelled silicon the timing model describes (see hw-spec.rst, "Timing
 * model").  CLOCK_MHZ and MAC_PER_CYCLE are also readable from BAR0.
 */
#define VNPU_MODEL_CLOCK_MHZ		1000
#define VNPU_MODEL_MACS_PER_CYCLE	4096	/* 64x64 int8 MAC array */
#define VNPU_MODEL_DRAM_BYTES_PER_CYCLE	32	/* 32 GB/s at 1 GHz */
#define VNPU_MODEL_SRAM_BYTES		(2u << 20)	/* on-chip buffer */
#define VNPU_MODEL_JOB_OVERHEAD_CYCLES	2000	/* fetch + completion */

/* ---- MSI-X vectors ----------------------------------------------------- */

#define VNPU_MSIX_VEC_ERROR		0	/* MMU fault, device error */
#define VNPU_MSIX_VEC_QUEUE(q)		(1 + (q))
#define VNPU_MSIX_NUM_VECTORS		(1 + VNPU_NUM_QUEUES)

/* ---- BAR0 global registers (all 32 bit) -------------------------------- */

#define VNPU_REG_ID			0x000	/* RO  VNPU_HW_ID_VALUE */
#define VNPU_REG_VERSION		0x004	/* RO  major << 16 | minor */
#define VNPU_REG_CAPS			0x008	/* RO  VNPU_CAP_* */
#define VNPU_REG_PLATFORM		0x00c	/* RO  VNPU_PLATFORM_* */
#define VNPU_REG_NUM_QUEUES		0x010	/* RO */
#define VNPU_REG_MAX_CONTEXTS		0x014	/* RO */
#define VNPU_REG_VA_BITS		0x018	/* RO */
#define VNPU_REG_NUM_ENGINES		0x01c	/* RO  concurrent execution units */
#define VNPU_REG_CONTROL		0x020	/* RW */
#define VNPU_REG_STATUS			0x024	/* RO */
#define VNPU_REG_IRQ_STATUS		0x028	/* RW1C VNPU_IRQ_* */
#define VNPU_REG_IRQ_MASK		0x02c	/* RW  1 = enabled */
#define VNPU_REG_ERROR_STATUS		0x030	/* RW1C VNPU_ERR_* */
#define VNPU_REG_SCRATCH		0x034	/* RW  free for driver use */
#define VNPU_REG_TIMESTAMP_LO		0x040	/* RO  device time, ns */
#define VNPU_REG_TIMESTAMP_HI		0x044	/* RO  latched on LO read */
#define VNPU_REG_CLOCK_MHZ		0x048	/* RO  modelled clock */
#define VNPU_REG_MAC_PER_CYCLE		0x04c	/* RO  modelled MAC array */
/*
 * Command limits (1.1): the largest compute command the device accepts.
 * Every compute command within them ends in bounded time and host memory;
 * one beyond them ends CMD_ERROR.  vnpu_hw_ops.h has the v1.1 values and
 * hw-spec.rst, "Command limits", what each one bounds.
 */
#define VNPU_REG_LIMIT_TENSOR_ELEMS	0x050	/* RO  elements of one operand */
#define VNPU_REG_LIMIT_TENSOR_BYTES	0x054	/* RO  bytes one operand spans */
#define VNPU_REG_LIMIT_CMD_BYTES	0x058	/* RO  bytes one command touches */
#define VNPU_REG_LIMIT_CMD_MACS_LO	0x05c	/* RO  work units of one command */
#define VNPU_REG_LIMIT_CMD_MACS_HI	0x060	/* RO */
#define VNPU_REG_LIMIT_REDUCTION	0x064	/* RO  terms summed per output */
#define VNPU_REG_LIMIT_KERNEL_DIM	0x068	/* RO  window extent per axis */
#define VNPU_REG_LIMIT_CHANNELS		0x06c	/* RO  per-channel array length */

#define VNPU_CAP_MMU			(1u << 0)
#define VNPU_CAP_COMPUTE		(1u << 1)
#define VNPU_CAP_TIMESTAMP		(1u << 2)
#define VNPU_CAP_FAULT_INJECT		(1u << 3)
#define VNPU_CAP_CYCLE_MODEL		(1u << 4)

#define VNPU_PLATFORM_SILICON		0
#define VNPU_PLATFORM_EMULATED		1

#define VNPU_CONTROL_ENABLE		(1u << 0)
#define VNPU_CONTROL_SOFT_RESET		(1u << 1)	/* WO, self-clearing */

#define VNPU_STATUS_READY		(1u << 0)
#define VNPU_STATUS_IDLE		(1u << 1)	/* no job on any engine */

#define VNPU_IRQ_QUEUE(q)		(1u << (q))	/* completion on queue q */
#define VNPU_IRQ_QUEUE_ALL		((1u << VNPU_NUM_QUEUES) - 1)
#define VNPU_IRQ_MMU_FAULT		(1u << 8)
#define VNPU_IRQ_ERROR			(1u << 9)

#define VNPU_ERR_RING			(1u << 0)	/* bad ring setup or pointer */
#define VNPU_ERR_DESCRIPTOR		(1u << 1)	/* unreadable descriptor */
#define VNPU_ERR_COMPLETION		(1u << 2)	/* completion write failed */
#define VNPU_ERR_CTX_TABLE		(1u << 3)	/* bad context table */
#define VNPU_ERR_REGISTER		(1u << 4)	/* bad register write */

/* ---- Device MMU registers ---------------------------------------------- */

#define VNPU_REG_MMU_CONTROL		0x080	/* RW  VNPU_MMU_CONTROL_* */
#define VNPU_REG_MMU_CTX_TABLE_LO	0x084	/* RW  DMA address, 4 KiB aligned */
#define VNPU_REG_MMU_CTX_TABLE_HI	0x088	/* RW */
#define VNPU_REG_MMU_CTX_COUNT		0x08c	/* RW  entries, <= MAX_CONTEXTS */
#define VNPU_REG_MMU_TLB_INVAL		0x090	/* WO  VNPU_TLB_INVAL_* */
#define VNPU_REG_MMU_TLB_INVAL_SEQ	0x094	/* RO  completed invalidations */
#define VNPU_REG_MMU_FAULT_STATUS	0x0a0	/* RW1C bit 0 clears the fault */
#define VNPU_REG_MMU_FAULT_CTX		0x0a4	/* RO */
#define VNPU_REG_MMU_FAULT_VA_LO	0x0a8	/* RO */
#define VNPU_REG_MMU_FAULT_VA_HI	0x0ac	/* RO */
#define VNPU_REG_MMU_FAULT_QUEUE	0x0b0	/* RO */

#define VNPU_MMU_CONTROL_ENABLE		(1u << 0)

/*
 * Debug block, present when CAPS has VNPU_CAP_FAULT_INJECT (the device
 * model's x-fault-inject=on; otherwise these offsets read as zero and
 * ignore writes, like any unassigned register).  Each register holds how
 * many of the next jobs get the fault; the device counts it down.  Not
 * cleared by reset, so a test can arm a fault across one.
 */
#define VNPU_REG_DEBUG_INJECT_HANG	0x0c0	/* RW  jobs that never end */
#define VNPU_REG_DEBUG_INJECT_DMA_ERROR	0x0c4	/* RW  jobs failing DMA_ERROR */
#define VNPU_REG_DEBUG_INJECT_LOST_IRQ	0x0c8	/* RW  completions w/o MSI-X */
/*
 * Soft resets after which the device never reports READY again (until a
 * later reset finds this register zero): a device that does not come back.
 */
#define VNPU_REG_DEBUG_INJECT_WEDGE	0x0cc	/* RW  resets that wedge */

#define VNPU_TLB_INVAL_ALL		(1u << 31)	/* else bits 15:0 = ctx */
#define VNPU_TLB_INVAL_CTX_MASK		0xffffu

#define VNPU_FAULT_VALID		(1u << 0)
#define VNPU_FAULT_WRITE		(1u << 1)	/* else a read */
#define VNPU_FAULT_REASON_SHIFT		4
#define VNPU_FAULT_REASON_MASK		(0xfu << VNPU_FAULT_REASON_SHIFT)
#define VNPU_FAULT_REASON_TRANSLATION	1	/* no valid PTE */
#define VNPU_FAULT_REASON_PERMISSION	2	/* PTE lacks R or W */
#define VNPU_FAULT_REASON_CONTEXT	3	/* ctx id invalid or disabled */
#define VNPU_FAULT_REASON_ADDRESS	4	/* VA beyond VA_BITS */
#define VNPU_FAULT_REASON_BUS		5	/* PTE or page not backed */

/* ---- Queue registers ---------------------------------------------------- */

#define VNPU_REG_QUEUE_BASE		0x1000
#define VNPU_REG_QUEUE_STRIDE		0x100
#define VNPU_REG_QUEUE(q, r)		(VNPU_REG_QUEUE_BASE + \
					 (q) * VNPU_REG_QUEUE_STRIDE + (r))

#define VNPU_QREG_RING_LO		0x00	/* RW  descriptor ring DMA addr */
#define VNPU_QREG_RING_HI		0x04	/* RW */
#define VNPU_QREG_RING_SIZE		0x08	/* RW  entries, power of 2 */
#define VNPU_QREG_COMPL_LO		0x0c	/* RW  completion ring DMA addr */
#define VNPU_QREG_COMPL_HI		0x10	/* RW */
#define VNPU_QREG_HEAD			0x14	/* RO  next slot the device reads */
#define VNPU_QREG_TAIL			0x18	/* RW  next slot the driver fills */
#define VNPU_QREG_DOORBELL		0x1c	/* WO  any value: fetch to TAIL */
#define VNPU_QREG_CONTROL		0x20	/* RW  VNPU_QCTRL_* */
#define VNPU_QREG_STATUS		0x24	/* RO  VNPU_QSTATUS_* */
#define VNPU_QREG_PRIORITY		0x28	/* RW  0 (low) .. 3 (high) */
#define VNPU_QREG_DONE_SEQ_LO		0x2c	/* RO  seq of last completion */
#define VNPU_QREG_DONE_SEQ_HI		0x30	/* RO */

#define VNPU_QCTRL_ENABLE		(1u << 0)

#define VNPU_QSTATUS_ENABLED		(1u << 0)
#define VNPU_QSTATUS_IDLE		(1u << 1)
#define VNPU_QSTATUS_ERROR		(1u << 2)	/* stopped on a ring error */

#define VNPU_RING_MIN_ENTRIES		2
#define VNPU_RING_MAX_ENTRIES		4096
#define VNPU_PRIORITY_MAX		3

/* ---- Descriptors and completion records (system memory) ---------------- */

/**
 * struct vnpu_hw_desc - one job on a queue ring, 64 bytes.
 * @ctx_id: address space the job runs in (index into the context table)
 * @flags: must be zero in v1
 * @cmd_va: device VA of the command buffer, 8-byte aligned
 * @cmd_size: command buffer size in bytes, multiple of 8
 * @reserved0: must be zero
 * @seq: fence sequence number, echoed in the completion record
 * @reserved: must be zero
 */
struct vnpu_hw_desc {
	__le32 ctx_id;
	__le32 flags;
	__le64 cmd_va;
	__le32 cmd_size;
	__le32 reserved0;
	__le64 seq;
	__le64 reserved[4];
};

/**
 * struct vnpu_hw_completion - written by the device when a job ends, 64 bytes.
 * @seq: the descriptor's sequence number
 * @status: VNPU_JOB_STATUS_*
 * @fault_flags: VNPU_FAULT_* bits for an MMU fault, else zero
 * @fault_va: faulting device VA, or offending command offset for
 *	VNPU_JOB_STATUS_CMD_ERROR
 * @cycles: modelled NPU cycles the job would take on silicon
 * @start_ns: device timestamp when the job started
 * @end_ns: device timestamp when the job ended
 * @reserved: written as zero
 */
struct vnpu_hw_completion {
	__le64 seq;
	__le32 status;
	__le32 fault_flags;
	__le64 fault_va;
	__le64 cycles;
	__le64 start_ns;
	__le64 end_ns;
	__le64 reserved[2];
};

#define VNPU_JOB_STATUS_OK		0
#define VNPU_JOB_STATUS_MMU_FAULT	1	/* fault_va and flags valid */
#define VNPU_JOB_STATUS_CMD_ERROR	2	/* malformed command stream */
#define VNPU_JOB_STATUS_DMA_ERROR	3	/* bus error on a translated address */
#define VNPU_JOB_STATUS_ABORTED		4	/* dropped by reset */
#define VNPU_JOB_STATUS_DESC_ERROR	5	/* bad descriptor fields */

/* ---- Device MMU formats (system memory) -------------------------------- */

/**
 * struct vnpu_hw_ctx_entry - context table entry, 16 bytes.
 * @pt_root: DMA address of the level-0 page table | VNPU_CTX_VALID
 * @reserved: must be zero
 */
struct vnpu_hw_ctx_entry {
	__le64 pt_root;
	__le64 reserved;
};

#define VNPU_CTX_VALID			(1ull << 0)

/*
 * Four levels of 512 eight-byte entries each translate a 48-bit VA with
 * 4 KiB pages: level 0 indexes VA[47:39], level 3 VA[20:12].  A non-leaf
 * entry needs only VALID; a leaf (level 3) entry grants READ and/or WRITE.
 */
#define VNPU_PT_LEVELS			4
#define VNPU_PT_ENTRIES			512
#define VNPU_PT_LEVEL_SHIFT(l)		(VNPU_PAGE_SHIFT + 9 * (3 - (l)))
#define VNPU_PT_INDEX(va, l)		(((va) >> VNPU_PT_LEVEL_SHIFT(l)) & 511)

#define VNPU_PTE_VALID			(1ull << 0)
#define VNPU_PTE_READ			(1ull << 1)
#define VNPU_PTE_WRITE			(1ull << 2)
#define VNPU_PTE_ADDR_MASK		0x000ffffffffff000ull

/* ---- Command stream ---------------------------------------------------- */

/*
 * A command buffer is a packed sequence of commands.  Each starts with an
 * 8-byte header; @size counts the whole command in bytes, header included,
 * and is a multiple of 8.  The device executes commands in order; a job
 * ends at the end of the buffer or at the first error.
 */
struct vnpu_cmd_hdr {
	__le16 opcode;
	__le16 flags;	/* must be zero in v1 */
	__le32 size;
};

#define VNPU_CMD_MAX_BUFFER		(1u << 20)	/* per job */

enum vnpu_cmd_opcode {
	VNPU_CMD_NOP		= 0x00,
	VNPU_CMD_COPY		= 0x01,
	VNPU_CMD_FILL		= 0x02,
	VNPU_CMD_WRITE_VALUE	= 0x03,	/* fence / semaphore write */
	VNPU_CMD_TIMESTAMP	= 0x04,
	VNPU_CMD_BARRIER	= 0x05,
	/* 0x40..0x7f: compute ops, see vnpu_hw_ops.h */
	VNPU_CMD_COMPUTE_FIRST	= 0x40,
	VNPU_CMD_COMPUTE_LAST	= 0x7f,
};

/** struct vnpu_cmd_copy - copy @size bytes; ranges must not overlap. */
struct vnpu_cmd_copy {
	struct vnpu_cmd_hdr hdr;
	__u64 src_va;
	__u64 dst_va;
	__u64 size;
};

/** struct vnpu_cmd_fill - fill @size bytes (multiple of 4) with @pattern. */
struct vnpu_cmd_fill {
	struct vnpu_cmd_hdr hdr;
	__u64 dst_va;
	__u64 size;
	__u32 pattern;
	__u32 reserved;
};

/** struct vnpu_cmd_write_value - store 64-bit @value at 8-aligned @dst_va. */
struct vnpu_cmd_write_value {
	struct vnpu_cmd_hdr hdr;
	__u64 dst_va;
	__u64 value;
};

/** struct vnpu_cmd_timestamp - store the device ns clock at 8-aligned @dst_va. */
struct vnpu_cmd_timestamp {
	struct vnpu_cmd_hdr hdr;
	__u64 dst_va;
};

/**
 * struct vnpu_cmd_barrier - every earlier write of this job is visible to
 * every later read.  The v1 device executes in order, so this only orders;
 * it exists so command streams written today stay correct on a pipelined
 * implementation.
 * @hdr: opcode VNPU_CMD_BARRIER, size 8
 */
struct vnpu_cmd_barrier {
	struct vnpu_cmd_hdr hdr;
};

#endif /* VNPU_HW_H */
