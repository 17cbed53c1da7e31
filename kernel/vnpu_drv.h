/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_DRV_H__
#define __VNPU_DRV_H__

#include <linux/completion.h>
#include <linux/dma-fence.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>
#include <drm/vnpu_accel.h>

#include "vnpu_hw.h"
#include "vnpu_pt.h"
#include "vnpu_track.h"
#include "vnpu_uapi_check.h"

#define DRIVER_NAME	"vnpu"
#define DRIVER_DESC	"Virtual NPU accelerator"
#define DRIVER_MAJOR	1
/* 1.1: QUERY reports the command limits */
#define DRIVER_MINOR	1

/*
 * VNPU_SCHED_JOB_INIT_CLIENT_ID and VNPU_SCHED_INIT_ARGS describe the
 * drm_sched API drift inside 6.12.y; Kbuild sets them from the kernel
 * version being built against.
 */
#ifndef VNPU_SCHED_JOB_INIT_CLIENT_ID
#define VNPU_SCHED_JOB_INIT_CLIENT_ID 1
#endif
#ifndef VNPU_SCHED_INIT_ARGS
#define VNPU_SCHED_INIT_ARGS 1
#endif

#define VNPU_MAX_BO_SIZE	SZ_1G
/* Context 0 is never handed out, so a zeroed descriptor always faults. */
#define VNPU_FIRST_CTX		1
/*
 * Jobs of one file that are submitted and not finished.  Below
 * VNPU_JOB_RECORDS, so the outcome of every unfinished job stays readable.
 */
#define VNPU_MAX_UNFINISHED	DRM_VNPU_MAX_UNFINISHED_JOBS

struct vnpu_device;
struct vnpu_job;

/**
 * struct vnpu_limits - command limits the device reports (1.1 and later)
 * @tensor_elems: VNPU_REG_LIMIT_TENSOR_ELEMS
 * @tensor_bytes: VNPU_REG_LIMIT_TENSOR_BYTES
 * @cmd_bytes: VNPU_REG_LIMIT_CMD_BYTES
 * @cmd_macs: VNPU_REG_LIMIT_CMD_MACS_HI:LO
 * @reduction: VNPU_REG_LIMIT_REDUCTION
 * @kernel_dim: VNPU_REG_LIMIT_KERNEL_DIM
 * @channels: VNPU_REG_LIMIT_CHANNELS
 *
 * All zero for a 1.0 device, which has no limits to report.
 */
struct vnpu_limits {
	u32 tensor_elems;
	u32 tensor_bytes;
	u32 cmd_bytes;
	u64 cmd_macs;
	u32 reduction;
	u32 kernel_dim;
	u32 channels;
};

/*
 * Jobs a SUBMIT may have written to a ring before drm_sched's run_job saw
 * them; the schedulers' credit limit leaves their slots free.
 */
#define VNPU_DIRECT_MAX		8

/**
 * struct vnpu_queue - one hardware queue and its scheduler
 * @vdev: owning device
 * @idx: hardware queue number
 * @sched: the drm_sched instance feeding this queue
 * @submit_wq: @sched's run_job and free_job work items run on it
 * @ring: descriptor ring, DMA-coherent
 * @ring_dma: bus address of @ring
 * @compl: completion ring, DMA-coherent, same number of entries
 * @compl_dma: bus address of @compl
 * @lock: protects @track, @seqno, @stopped and the rings; taken from the
 *	interrupt handler
 * @track: which job is in which ring slot; records are consumed strictly
 *	in ring order, from @track.head up to the device's HEAD register,
 *	and belong to a slot only if their seq matches the slot's
 * @seqno: last sequence number handed to the device
 * @stopped: the device is being reset or is gone, so its HEAD register
 *	says nothing about the ring; the interrupt handler consumes nothing
 * @replay: jobs a reset found unstarted, to be written to the fresh
 *	ring; protected by &vnpu_device.reset_lock
 * @fence_ctx: dma_fence context of the hardware fences
 * @raw_seq: sequence number of the raw probe on the ring, 0 if none;
 *	protected by @lock
 * @raw_status: VNPU_JOB_STATUS_* of the finished raw probe, or a negative
 *	errno if a reset or removal dropped it; protected by @lock
 * @raw_done: completed once @raw_status is set
 * @unrun: jobs waiting in @sched to be written to the ring by run_job;
 *	protected by @lock.  A SUBMIT writes its job to the ring directly
 *	only while this is 0: then every earlier job of the queue is on the
 *	ring already, so the ring keeps the order drm_sched would keep
 * @direct_unseen: jobs SUBMIT wrote to the ring that run_job (or, for
 *	one killed before it ran, free_job) has not seen yet, at most
 *	%VNPU_DIRECT_MAX; protected by @lock
 * @name: scheduler and fence timeline name
 */
struct vnpu_queue {
	struct vnpu_device *vdev;
	u32 idx;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *submit_wq;
	struct vnpu_hw_desc *ring;
	dma_addr_t ring_dma;
	struct vnpu_hw_completion *compl;
	dma_addr_t compl_dma;
	spinlock_t lock; /* see above */
	struct vnpu_ring_track track;
	u64 seqno;
	bool stopped;
	struct list_head replay;
	u64 fence_ctx;
	u64 raw_seq;
	int raw_status;
	struct completion raw_done;
	u32 unrun;
	u32 direct_unseen;
	char name[16];
};

/**
 * struct vnpu_device - driver state of one NPU
 * @drm: DRM device, first so the devm/drmm helpers can find it
 * @pdev: PCI function
 * @regs: BAR0
 * @irqs: Linux IRQ of each MSI-X vector, looked up once at probe:
 *	pci_irq_vector() takes the MSI descriptor mutex, which is held
 *	around allocations, so the reset path must not call it
 * @caps: VNPU_REG_CAPS
 * @hw_version: VNPU_REG_VERSION
 * @platform: VNPU_REG_PLATFORM
 * @num_queues: queues in use, at most %VNPU_NUM_QUEUES
 * @num_engines: VNPU_REG_NUM_ENGINES
 * @va_bits: VNPU_REG_VA_BITS
 * @va_end: one past the highest VA handed out
 * @max_contexts: context table entries in use
 * @clock_mhz: modelled clock
 * @macs_per_cycle: modelled MAC array
 * @limits: command limits, zero when the device does not report them
 * @timeout_ms: job timeout after platform scaling
 * @ctx_table: context table, DMA-coherent
 * @ctx_table_dma: bus address of @ctx_table
 * @ctx_ida: allocator of context ids
 * @mmu_lock: serialises context table updates and TLB invalidations
 * @reset_lock: serialises resets against each other and against remove
 * @sched_lock: makes job arm + push atomic so fence order is push order
 * @reset_wq: ordered workqueue all schedulers' timeout handlers run on,
 *	so one reset of the whole device happens at a time
 * @queues: hardware queues
 * @lost: a reset failed to bring the device back; every job ends
 *	DEVICE_LOST from then on.  Written under @reset_lock.
 * @reset_count: completed resets, for debugfs
 * @fault_count: MMU faults seen, for debugfs
 * @tlb_timeouts: TLB invalidations the device did not complete in time
 * @leaked_pages: pages never freed because the device may still have
 *	used them after such a timeout (BO pages and page tables)
 * @live_jobs: jobs created and not yet freed
 * @jobs_wq: woken when @live_jobs drops to zero
 * @release_list: jobs drm_sched freed whose references are still to be
 *	dropped; see vnpu_job_free()
 * @release_work: drops them, outside the fence signalling paths
 * @inject: debugfs fault-injection value
 * @raw_lock: one debugfs raw probe at a time, so a single ring slot
 *	suffices for it; protects @raw_count and @raw_next
 * @raw_count: round trips one read of debugfs raw_rtt measures
 * @raw_next: sequence counter of raw probes
 * @num_irqs: entries of @irqs in use: %VNPU_MSIX_NUM_VECTORS with MSI-X,
 *	1 with the MSI or INTx fallback
 * @powered_down: the device was quiesced for a runtime or system suspend
 *	and is or may be in D3hot, where it keeps no state; no register may
 *	be touched until vnpu_power_up().  Written under both @reset_lock
 *	and @mmu_lock, so either is enough to read it.
 * @pm_jobs: jobs holding a runtime PM reference, from SUBMIT until they
 *	are released; remove() drops the references of those that outlive
 *	the binding.  Changed only inside drm_dev_enter().
 * @as_list: every live &struct vnpu_as, so remove() can free their page
 *	tables; protected by @mmu_lock
 * @bo_lock: protects @bo_list
 * @bo_list: every &struct vnpu_bo, so remove() can unmap their pages
 *	from the device
 * @gemfs: private shmem mount with huge=within_size that BOs are backed
 *	from, or NULL (no transparent huge pages): the kernel's own mount
 */
struct vnpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	int irqs[VNPU_MSIX_NUM_VECTORS];
	u32 caps;
	u32 hw_version;
	u32 platform;
	u32 num_queues;
	u32 num_engines;
	u32 va_bits;
	u64 va_end;
	u32 max_contexts;
	u32 clock_mhz;
	u32 macs_per_cycle;
	struct vnpu_limits limits;
	unsigned int timeout_ms;
	struct vnpu_hw_ctx_entry *ctx_table;
	dma_addr_t ctx_table_dma;
	struct ida ctx_ida;
	struct mutex mmu_lock; /* ctx table, TLB invalidation */
	struct mutex reset_lock; /* one reset at a time */
	struct mutex sched_lock; /* job arm + push */
	struct workqueue_struct *reset_wq;
	struct vnpu_queue queues[VNPU_NUM_QUEUES];
	bool lost;
	atomic_t reset_count;
	atomic_t fault_count;
	atomic_t tlb_timeouts;
	atomic_long_t leaked_pages;
	atomic_t live_jobs;
	wait_queue_head_t jobs_wq;
	struct llist_head release_list;
	struct work_struct release_work;
	u32 inject;
	struct mutex raw_lock; /* raw probe; see above */
	u32 raw_count;
	u64 raw_next;
	unsigned int num_irqs;
	bool powered_down;
	atomic_t pm_jobs;
	struct list_head as_list;
	struct mutex bo_lock; /* bo_list */
	struct list_head bo_list;
	struct vfsmount *gemfs;
};

#define to_vnpu_device(d) container_of(d, struct vnpu_device, drm)

/**
 * struct vnpu_as - a device address space (one per open file)
 * @refcount: held by the file, by every mapping and by every job
 * @vdev: owning device
 * @ctx_id: index in the context table
 * @lock: protects @mm, @pt and @freed
 * @mm: VA allocator
 * @pt: page tables
 * @freed: page tables @pt let go of, freed only once a TLB invalidation
 *	completed (&struct vnpu_pt_freed)
 * @link: entry in &vnpu_device.as_list
 * @unbound: the device was unbound and @pt freed with it; nothing maps or
 *	unmaps any more.  Set under @lock, only by vnpu_mmu_unbind().
 */
struct vnpu_as {
	struct kref refcount;
	struct vnpu_device *vdev;
	u32 ctx_id;
	struct mutex lock; /* VA allocator and page tables */
	struct drm_mm mm;
	struct vnpu_pt pt;
	struct list_head freed;
	struct list_head link;
	bool unbound;
};

/**
 * struct vnpu_job_record - outcome of one job, as JOB_STATUS reports it
 * @id: job id, 0 for an unused slot
 * @state: &enum drm_vnpu_job_state
 * @fault_flags: DRM_VNPU_FAULT_*
 * @fault_va: faulting VA or command offset
 * @cycles: modelled device cycles
 * @duration_ns: device time
 * @fence: the job's finished fence, for WAIT
 * @hw_fence: the hardware fence of a job SUBMIT put on the ring itself,
 *	else NULL: WAIT waits for it, not for the scheduler to notice
 */
struct vnpu_job_record {
	u64 id;
	u32 state;
	u32 fault_flags;
	u64 fault_va;
	u64 cycles;
	u64 duration_ns;
	struct dma_fence *fence;
	struct dma_fence *hw_fence;
};

/**
 * struct vnpu_file_priv - per open file state
 * @refcount: held by the file and by every job, so a job finishing after
 *	close can still record its outcome
 * @vdev: owning device
 * @lock: serialises the creation of @as and @records
 * @as: the file's address space, NULL until the first BO or SUBMIT
 *	needs it (so an open file takes no context id)
 * @entities: one scheduler entity per queue and priority
 * @rec_lock: protects @records and @next_job_id; taken from interrupts
 * @next_job_id: id the next submit gets
 * @records: ring of recent job outcomes, NULL until the first SUBMIT
 * @unfinished: jobs submitted and not finished, at most
 *	%VNPU_MAX_UNFINISHED
 * @unfinished_wq: woken when @unfinished drops
 * @faults: jobs that ended with an MMU fault
 * @banned: set once @faults reaches %VNPU_BAN_FAULTS
 * @busy_ns: device time consumed, for fdinfo
 * @cycles: modelled cycles consumed, for fdinfo
 */
struct vnpu_file_priv {
	struct kref refcount;
	struct vnpu_device *vdev;
	struct mutex lock; /* creation of as and records */
	struct vnpu_as *as;
	struct drm_sched_entity entities[VNPU_NUM_QUEUES][DRM_VNPU_PRIORITY_HIGH + 1];
	spinlock_t rec_lock; /* job records; irq-safe */
	u64 next_job_id;
	struct vnpu_job_record *records;
	atomic_t unfinished;
	wait_queue_head_t unfinished_wq;
	atomic_t faults;
	bool banned;
	atomic64_t busy_ns;
	atomic64_t cycles;
};

/**
 * struct vnpu_bo - a GEM object
 * @base: shmem object
 * @lock: protects @mappings
 * @mappings: &struct vnpu_mapping in every address space it is mapped in
 * @readonly: the device may only read it
 * @dev_link: entry in &vnpu_device.bo_list
 * @unbound_dmabuf: an import whose attachment went with its device's
 *	binding: the dma-buf reference it took, dropped when it is freed
 */
struct vnpu_bo {
	struct drm_gem_shmem_object base;
	struct mutex lock; /* mappings list */
	struct list_head mappings;
	bool readonly;
	struct list_head dev_link;
	struct dma_buf *unbound_dmabuf;
};

#define to_vnpu_bo(obj) container_of(to_drm_gem_shmem_obj(obj), struct vnpu_bo, base)

/**
 * struct vnpu_mapping - a BO mapped into one address space
 * @refcount: held by the BO's list and by every job listing the BO
 * @link: entry in &vnpu_bo.mappings
 * @bo: the BO (not referenced: the list reference is dropped before the
 *	BO can be freed, and jobs hold their own BO references)
 * @as: the address space, referenced
 * @node: VA range, guard page included; the BO's size is mapped
 */
struct vnpu_mapping {
	struct kref refcount;
	struct list_head link;
	struct vnpu_bo *bo;
	struct vnpu_as *as;
	struct drm_mm_node node;
};

/**
 * struct vnpu_fence - hardware fence of one job execution
 * @base: the fence
 * @lock: fence lock
 */
struct vnpu_fence {
	struct dma_fence base;
	spinlock_t lock; /* the fence's own lock */
};

/**
 * struct vnpu_job - one submitted job
 * @base: scheduler job
 * @vdev: device
 * @fpriv: submitting file, referenced
 * @q: queue it runs on
 * @id: per-file job id
 * @cmd_va: command buffer VA
 * @cmd_size: command buffer bytes
 * @bos: BOs kept resident, referenced
 * @maps: their mappings in @fpriv's address space, referenced
 * @bo_count: entries in @bos and @maps
 * @deps: the job's explicit in-fences, referenced, so run_job can tell
 *	whether one failed
 * @dep_count: entries in @deps
 * @hw_fence_mem: the hardware fence, allocated at SUBMIT because run_job
 *	must not allocate; NULL once run_job took it
 * @hw_fence: the hardware fence once run_job or SUBMIT initialised it,
 *	else NULL
 * @seqno: sequence number on the ring
 * @link: entry in &vnpu_queue.replay during a reset
 * @finished_cb: on the finished fence: the job no longer counts towards
 *	&vnpu_file_priv.unfinished
 * @hw_cb: on the hardware fence of a job killed before run_job saw it,
 *	though SUBMIT had put it on the ring: release it once that ended
 * @release: entry in &vnpu_device.release_list
 * @done: the hardware fence is signalled; protected by &vnpu_queue.lock
 * @ring_error: its queue halted on a ring or completion DMA error while
 *	it was at the head, so a reset ends it DMA_ERROR without blame
 * @pm_ref: the job holds a runtime PM reference (see
 *	&vnpu_device.pm_jobs)
 * @direct: SUBMIT wrote it to the ring itself (see vnpu_job_run_direct());
 *	run_job then only hands drm_sched its hardware fence
 * @seen: counted out of &vnpu_queue.unrun by run_job or free_job;
 *	protected by &vnpu_queue.lock
 */
struct vnpu_job {
	struct drm_sched_job base;
	struct vnpu_device *vdev;
	struct vnpu_file_priv *fpriv;
	struct vnpu_queue *q;
	u64 id;
	u64 cmd_va;
	u32 cmd_size;
	struct drm_gem_object **bos;
	struct vnpu_mapping **maps;
	u32 bo_count;
	struct dma_fence **deps;
	u32 dep_count;
	struct vnpu_fence *hw_fence_mem;
	struct dma_fence *hw_fence;
	u64 seqno;
	struct list_head link;
	struct dma_fence_cb finished_cb;
	struct dma_fence_cb hw_cb;
	struct llist_node release;
	bool done;
	bool ring_error;
	bool pm_ref;
	bool direct;
	bool seen;
};

static inline u32 vnpu_read(struct vnpu_device *vdev, u32 reg)
{
	return readl(vdev->regs + reg);
}

static inline void vnpu_write(struct vnpu_device *vdev, u32 reg, u32 val)
{
	writel(val, vdev->regs + reg);
}

static inline u32 vnpu_qread(struct vnpu_queue *q, u32 reg)
{
	return vnpu_read(q->vdev, VNPU_REG_QUEUE(q->idx, reg));
}

static inline void vnpu_qwrite(struct vnpu_queue *q, u32 reg, u32 val)
{
	vnpu_write(q->vdev, VNPU_REG_QUEUE(q->idx, reg), val);
}

/* vnpu_drv.c */
int vnpu_hw_wait_ready(struct vnpu_device *vdev);
int vnpu_hw_start(struct vnpu_device *vdev);
void vnpu_hw_stop(struct vnpu_device *vdev);
void vnpu_file_priv_put(struct vnpu_file_priv *fpriv);
struct vnpu_as *vnpu_file_as(struct vnpu_file_priv *fpriv);
int vnpu_file_records(struct vnpu_file_priv *fpriv);
int vnpu_rpm_get(struct vnpu_device *vdev);
void vnpu_rpm_put(struct vnpu_device *vdev);
int vnpu_job_rpm_get(struct vnpu_device *vdev);
void vnpu_job_rpm_put(struct vnpu_device *vdev);

/* vnpu_gem.c */
struct drm_gem_object *vnpu_gem_create_object(struct drm_device *dev,
					      size_t size);
struct vnpu_mapping *vnpu_bo_map(struct vnpu_bo *bo, struct vnpu_as *as);
void vnpu_mapping_put(struct vnpu_mapping *map);
int vnpu_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file);
int vnpu_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file);
void vnpu_gem_unbind(struct vnpu_device *vdev);
int vnpu_gemfs_init(struct vnpu_device *vdev);
struct drm_gem_object *
vnpu_gem_prime_import_sg_table(struct drm_device *dev,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt);

/* vnpu_mmu.c */
int vnpu_mmu_init(struct vnpu_device *vdev);
void vnpu_mmu_hw_init(struct vnpu_device *vdev);
void vnpu_mmu_leak_bo(struct vnpu_device *vdev, struct drm_gem_object *obj);
void vnpu_mmu_unbind(struct vnpu_device *vdev);
struct vnpu_as *vnpu_as_create(struct vnpu_device *vdev);
void vnpu_as_put(struct vnpu_as *as);
struct vnpu_as *vnpu_as_get(struct vnpu_as *as);
int vnpu_as_map_sgt(struct vnpu_as *as, struct drm_mm_node *node,
		    struct sg_table *sgt, u64 size, bool writable);
int vnpu_as_unmap(struct vnpu_as *as, struct drm_mm_node *node, u64 size);

/* vnpu_sched.c */
int vnpu_sched_init(struct vnpu_device *vdev);
int vnpu_file_entities_init(struct vnpu_file_priv *fpriv);
void vnpu_file_entities_fini(struct vnpu_file_priv *fpriv);

/* vnpu_submit.c */
int vnpu_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file);
int vnpu_ioctl_wait(struct drm_device *dev, void *data,
		    struct drm_file *file);
int vnpu_ioctl_job_status(struct drm_device *dev, void *data,
			  struct drm_file *file);

/* vnpu_ring.c */
void vnpu_queue_complete(struct vnpu_queue *q);
int vnpu_queue_raw_submit(struct vnpu_queue *q, u32 ctx_id, u64 cmd_va,
			  u32 cmd_size, u64 seq);

/* vnpu_reset.c */
void vnpu_reset(struct vnpu_device *vdev, struct vnpu_job *bad);
void vnpu_job_fail_all(struct vnpu_device *vdev, int error);

/* vnpu_irq.c */
int vnpu_irq_init(struct vnpu_device *vdev);
void vnpu_irq_sync(struct vnpu_device *vdev);

/* vnpu_debugfs.c */
void vnpu_debugfs_init(struct vnpu_device *vdev);

#endif /* __VNPU_DRV_H__ */
