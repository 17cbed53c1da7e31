/*
 * vnpu execution engines: queue arbitration, the worker threads, job
 * execution and the v1 command processor.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Each engine is a host thread.  It takes the next job from the
 * highest-priority queue that has fetchable work and no job in flight
 * (queues execute in order), round-robin among equal priorities, runs it
 * without any lock held and completes it.  All guest memory access goes
 * through vnpu-dma.c: directly for rings, through the MMU callbacks for
 * job memory.  A job abandoned by reset may keep its engine for a moment
 * while it unwinds, but it no longer belongs to any queue and cannot
 * write guest memory (the reset gate, vnpu-dma.c).
 */
#include "qemu/osdep.h"
#include <sched.h>
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "block/aio.h"
#include "qapi/error.h"
#include "vnpu-internal.h"
#include "vnpu_exec.h"
#include "vnpu_split.h"
#include "trace.h"

/* Bounce buffer for COPY and FILL; also the granule at which they abort. */
#define VNPU_CHUNK      (64 * 1024)

bool vnpu_job_aborted(VnpuJob *job)
{
    return qatomic_read(&job->eng->abort) || qatomic_read(&job->s->stopping) ||
           !vnpu_job_current(job);
}

static bool vnpu_mem_aborted(void *opaque)
{
    return vnpu_job_aborted(opaque);
}

static const struct vnpu_mem_ops vnpu_job_mem_ops = {
    .read = vnpu_mem_read,
    .write = vnpu_mem_write,
    .map = vnpu_mem_map,
    .unmap = vnpu_mem_unmap,
    .aborted = vnpu_mem_aborted,
};

void vnpu_kick_locked(VnpuState *s)
{
    qemu_cond_broadcast(&s->work_cond);
}

void vnpu_engines_abort_locked(VnpuState *s)
{
    unsigned i;

    for (i = 0; i < s->num_engines; i++) {
        if (s->eng[i].busy) {
            qatomic_set(&s->eng[i].abort, true);
        }
    }
    qemu_cond_broadcast(&s->abort_cond);
}

static void vnpu_cmd_error(VnpuJob *job, uint32_t off, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "vnpu: queue %u seq %" PRIu64 ": bad command at offset %u: "
                  "%s\n", job->queue, (uint64_t)job->desc.seq, off, why);
    vnpu_job_fail(job, VNPU_JOB_STATUS_CMD_ERROR, off);
}

/* Counted only when the command completed (hw-spec, "Timing model"). */
static void vnpu_cmd_account(VnpuJob *job, const VnpuCmd *cmd)
{
    if (!job->failed) {
        job->rec.cycles += vnpu_cmd_cycles(cmd);
    }
}

static void vnpu_cmd_copy(VnpuJob *job, const VnpuCmd *cmd)
{
    uint64_t src = cmd->u.copy.src, dst = cmd->u.copy.dst;
    uint64_t len = cmd->u.copy.len;
    g_autofree uint8_t *bounce = NULL;
    uint64_t done;

    bounce = g_malloc(MIN(len, VNPU_CHUNK));
    for (done = 0; done < len && !job->failed; done += VNPU_CHUNK) {
        uint64_t n = MIN(len - done, VNPU_CHUNK);

        if (vnpu_mem_read(job, src + done, bounce, n) == 0) {
            vnpu_mem_write(job, dst + done, bounce, n);
        }
    }
}

static void vnpu_cmd_fill(VnpuJob *job, const VnpuCmd *cmd)
{
    uint64_t dst = cmd->u.fill.dst, len = cmd->u.fill.len;
    uint32_t pattern = cpu_to_le32(cmd->u.fill.pattern);
    g_autofree uint32_t *pat = NULL;
    uint64_t done;
    size_t i, n;

    n = MIN(len, VNPU_CHUNK);
    pat = g_malloc(n + 4);
    for (i = 0; i < n / 4; i++) {
        pat[i] = pattern;
    }
    for (done = 0; done < len && !job->failed; done += VNPU_CHUNK) {
        vnpu_mem_write(job, dst + done, pat, MIN(len - done, VNPU_CHUNK));
    }
}

static void vnpu_cmd_store64(VnpuJob *job, uint64_t dst, uint64_t value)
{
    uint64_t le = cpu_to_le64(value);

    vnpu_mem_write(job, dst, &le, sizeof(le));
}

/*
 * Results as ops/vnpu_exec.h documents them.  The compute engine reports a
 * malformed command at the offending field's offset within the command;
 * the record names it within the buffer.
 */
static void vnpu_compute_outcome(VnpuJob *job, int ret, uint32_t err_off,
                                 uint64_t cycles, uint32_t off,
                                 uint16_t opcode)
{
    switch (ret) {
    case 0:
        job->rec.cycles += cycles;
        break;
    case -EINVAL:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: queue %u seq %" PRIu64 ": compute command 0x%x "
                      "at offset %u rejected: field at byte %u of the "
                      "command\n", job->queue, (uint64_t)job->desc.seq,
                      opcode, off, err_off);
        vnpu_job_fail(job, VNPU_JOB_STATUS_CMD_ERROR, (uint64_t)off + err_off);
        break;
    case -E2BIG:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: queue %u seq %" PRIu64 ": compute command at "
                      "offset %u needs more than the engine's %u MiB of "
                      "scratch (property scratch-mb)\n", job->queue,
                      (uint64_t)job->desc.seq, off, job->s->scratch_mb);
        vnpu_job_fail(job, VNPU_JOB_STATUS_CMD_ERROR, off);
        break;
    case -EFAULT:
        /* The memory callbacks recorded the fault; make sure of it. */
        vnpu_job_fail(job, VNPU_JOB_STATUS_DMA_ERROR, 0);
        break;
    case -ECANCELED:
        vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, 0);
        break;
    case -ENOMEM:
    default:
        /* The host's failure, not the guest's: no CMD_ERROR blame. */
        warn_report_once("vnpu: compute engine failed on the host (%d)", ret);
        vnpu_job_fail(job, VNPU_JOB_STATUS_DMA_ERROR, 0);
        break;
    }
}

/*
 * Engines of every vnpu device in this process that run a job or a band
 * now, and the host CPUs this process may run on: an idle engine looks
 * for bands only while a CPU is left for it (vnpu_help_spin_locked()).
 */
static unsigned vnpu_engines_running;
static unsigned vnpu_host_cpus;

static unsigned vnpu_count_host_cpus(void)
{
    cpu_set_t set;
    long n;

    if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* eng->busy, under s->lock, and the process-wide count with it. */
static void vnpu_engine_set_busy(VnpuEngine *eng, bool busy)
{
    if (eng->busy == busy) {
        return;
    }
    eng->busy = busy;
    if (busy) {
        qatomic_inc(&vnpu_engines_running);
    } else {
        qatomic_dec(&vnpu_engines_running);
    }
}

/*
 * A compute command shared by idle engines (ops/vnpu_split.h).  The engine
 * whose job it is publishes it in s->split and works through the parts
 * itself; an engine with no job to pick takes parts too, and is busy
 * (abortable by reset, counted by the DMA gate through its own in_dma
 * flag) while it runs one.  Each part runs against a copy of the job, so
 * its faults are its own; the outcome is that of the first part that
 * failed, in output order, which is where the whole command would have
 * failed first had it run alone.
 */
typedef struct VnpuSplitPart {
    VnpuJob job;
    int ret;
    uint32_t err_off;
} VnpuSplitPart;

typedef struct VnpuSplit {
    VnpuJob *job;
    struct vnpu_cmd_compute parts[VNPU_SPLIT_MAX_PARTS];
    VnpuSplitPart out[VNPU_SPLIT_MAX_PARTS];
    unsigned n;
    unsigned next;              /* under s->lock: next part to hand out */
    unsigned helping;           /* under s->lock: parts on other engines */
} VnpuSplit;

static void vnpu_split_run_part(VnpuSplit *sp, unsigned i, VnpuEngine *eng)
{
    VnpuSplitPart *o = &sp->out[i];
    struct vnpu_compute_result res;

    o->job = *sp->job;
    o->job.eng = eng;
    o->job.failed = false;
    o->job.rec.status = VNPU_JOB_STATUS_OK;
    o->job.rec.fault_flags = 0;
    o->job.rec.fault_va = 0;
    memset(o->job.read_maps, 0, sizeof(o->job.read_maps));
    o->ret = vnpu_compute_exec(&sp->parts[i], sizeof(sp->parts[i]),
                               &vnpu_job_mem_ops, &o->job, &eng->cfg, &res);
    o->err_off = res.err_off;
}

/* Run one part of the published split on idle engine @eng, if any is left. */
static bool vnpu_split_help_locked(VnpuState *s, VnpuEngine *eng)
{
    VnpuSplit *sp = s->split;
    unsigned i;

    if (!sp || sp->next == sp->n) {
        return false;
    }
    i = sp->next++;
    sp->helping++;
    vnpu_engine_set_busy(eng, true);
    eng->job_gen = sp->job->reset_gen;
    eng->abort = false;
    qemu_mutex_unlock(&s->lock);

    trace_vnpu_split_help(eng->index, sp->job->queue, i);
    vnpu_split_run_part(sp, i, eng);

    qemu_mutex_lock(&s->lock);
    vnpu_engine_set_busy(eng, false);
    eng->abort = false;
    if (!--sp->helping) {
        qemu_cond_signal(&s->split_cond);
    }
    return true;
}

/*
 * Run @cmd cut into one part per engine when it is large enough to share
 * (ops/vnpu_split.h); false when it is not cut, and the caller runs it
 * whole.  The cut depends only on the command and the number of engines,
 * never on which engines happen to be idle, so a device computes the same
 * bits for the same command every time (fp32 kernels may block a band's
 * rows differently from the whole command's).  Engines with nothing else
 * to do take parts; the rest this engine runs itself.
 */
static bool vnpu_split_compute(VnpuJob *job, const void *cmd, uint32_t size,
                               uint32_t off, uint16_t opcode)
{
    VnpuState *s = job->s;
    /*
     * The engine's own, not one allocated and zeroed per command: a
     * VnpuSplit is over 50 KiB and most commands are not cut.  Nobody
     * else holds it once this returns (the helpers are waited for).
     */
    VnpuSplit *sp = job->eng->split_buf;
    unsigned i, first_bad;
    bool shared = false;
    uint64_t cycles;

    if (s->num_engines < 2) {
        return false;
    }
    sp->n = vnpu_compute_split(cmd, size, s->num_engines, sp->parts, &cycles);
    if (!sp->n) {
        return false;
    }
    sp->job = job;
    sp->next = 0;
    sp->helping = 0;
    trace_vnpu_split(job->eng->index, job->queue, off, sp->n);

    qemu_mutex_lock(&s->lock);
    /* One command is shared at a time; another waits for no one. */
    if (!s->split) {
        s->split = sp;
        shared = true;
        qemu_cond_broadcast(&s->work_cond);
    }
    while (sp->next < sp->n) {
        i = sp->next++;
        qemu_mutex_unlock(&s->lock);
        vnpu_split_run_part(sp, i, job->eng);
        qemu_mutex_lock(&s->lock);
    }
    /* Helpers notice an abort within one poll, so this wait is bounded. */
    while (sp->helping) {
        qemu_cond_wait(&s->split_cond, &s->lock);
    }
    if (shared) {
        s->split = NULL;
    }
    qemu_mutex_unlock(&s->lock);

    for (first_bad = 0; first_bad < sp->n; first_bad++) {
        if (sp->out[first_bad].ret) {
            break;
        }
    }
    if (first_bad == sp->n) {
        vnpu_compute_outcome(job, 0, 0, cycles, off, opcode);
    } else {
        VnpuSplitPart *o = &sp->out[first_bad];

        if (o->job.failed) {
            vnpu_job_fail(job, o->job.rec.status, o->job.rec.fault_va);
            job->rec.fault_flags = o->job.rec.fault_flags;
        }
        vnpu_compute_outcome(job, o->ret, o->err_off, 0, off, opcode);
    }
    trace_vnpu_compute(job->eng->index, job->queue, off, opcode,
                       first_bad == sp->n ? 0 : sp->out[first_bad].ret,
                       first_bad == sp->n ? 0 : sp->out[first_bad].err_off,
                       cycles);
    return true;
}

static void vnpu_cmd_compute(VnpuJob *job, const void *cmd, uint32_t size,
                             uint32_t off, uint16_t opcode)
{
    struct vnpu_compute_result res;
    int ret;

    if (vnpu_split_compute(job, cmd, size, off, opcode)) {
        return;
    }
    ret = vnpu_compute_exec(cmd, size, &vnpu_job_mem_ops, job, &job->eng->cfg,
                            &res);
    trace_vnpu_compute(job->eng->index, job->queue, off, opcode, ret,
                       res.err_off, res.cycles);
    vnpu_compute_outcome(job, ret, res.err_off, res.cycles, off, opcode);
}

static void vnpu_exec_cmds(VnpuJob *job, const uint8_t *buf, uint32_t size)
{
    uint32_t off = 0;

    while (off < size && !job->failed) {
        VnpuCmdErr err;
        VnpuCmd cmd;

        if (vnpu_job_aborted(job)) {
            vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, 0);
            return;
        }
        err = vnpu_cmd_decode(buf, size, off, &cmd);
        if (err != VNPU_CMD_OK) {
            vnpu_cmd_error(job, off, vnpu_cmd_strerror(err));
            return;
        }

        switch (cmd.opcode) {
        case VNPU_CMD_NOP:
            break;
        case VNPU_CMD_COPY:
            vnpu_cmd_copy(job, &cmd);
            break;
        case VNPU_CMD_FILL:
            vnpu_cmd_fill(job, &cmd);
            break;
        case VNPU_CMD_WRITE_VALUE:
            vnpu_cmd_store64(job, cmd.u.store.dst, cmd.u.store.value);
            break;
        case VNPU_CMD_TIMESTAMP:
            vnpu_cmd_store64(job, cmd.u.store.dst, vnpu_now_ns());
            break;
        case VNPU_CMD_BARRIER:
            /* In-order engine: every earlier access is already done. */
            smp_mb();
            break;
        default:
            /* vnpu_cmd_decode() lets only compute opcodes through. */
            vnpu_cmd_compute(job, buf + off, cmd.size, off, cmd.opcode);
            break;
        }
        vnpu_cmd_account(job, &cmd);
        off += cmd.size;
    }
}

/* A hung job holds its engine until reset or unrealize aborts it. */
static void vnpu_job_hang(VnpuJob *job)
{
    VnpuState *s = job->s;

    qemu_mutex_lock(&s->lock);
    while (!job->eng->abort && !s->stopping) {
        qemu_cond_wait(&s->abort_cond, &s->lock);
    }
    qemu_mutex_unlock(&s->lock);
    vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, 0);
}

/*
 * Run one job, no lock held.  Returns false when the descriptor itself
 * could not be read: that is a ring error, and there is no job to
 * complete.
 */
static bool vnpu_run_job(VnpuJob *job, uint64_t ring)
{
    VnpuState *s = job->s;
    struct vnpu_hw_desc *d = &job->desc;
    g_autofree uint8_t *cmds = NULL;
    uint8_t raw[VNPU_DESC_SIZE];

    if (vnpu_job_dma(job, ring + (uint64_t)job->slot * VNPU_DESC_SIZE, raw,
                     sizeof(raw), false) != VNPU_DMA_OK) {
        return false;
    }
    vnpu_desc_decode(raw, d);

    job->ctx_id = d->ctx_id;
    job->rec.seq = d->seq;
    job->rec.start_ns = vnpu_now_ns();
    job->rec.cycles = VNPU_MODEL_JOB_OVERHEAD_CYCLES;
    trace_vnpu_job_start(job->eng->index, job->queue, job->slot, d->ctx_id,
                         d->seq);

    if (!vnpu_desc_valid(d)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: queue %u slot %u: bad descriptor (ctx %u flags 0x%x "
                      "cmd_va 0x%" PRIx64 " cmd_size %u)\n", job->queue,
                      job->slot, d->ctx_id, d->flags, (uint64_t)d->cmd_va, d->cmd_size);
        vnpu_job_fail(job, VNPU_JOB_STATUS_DESC_ERROR, 0);
    } else if (vnpu_take_injection(s, &s->inject_hang)) {
        vnpu_job_hang(job);
    } else if (vnpu_take_injection(s, &s->inject_dma_error)) {
        vnpu_job_fail(job, VNPU_JOB_STATUS_DMA_ERROR, d->cmd_va);
    } else {
        cmds = g_malloc(d->cmd_size);
        if (vnpu_mem_read(job, d->cmd_va, cmds, d->cmd_size) == 0) {
            vnpu_exec_cmds(job, cmds, d->cmd_size);
        }
    }
    if (!job->failed && vnpu_job_aborted(job)) {
        vnpu_job_fail(job, VNPU_JOB_STATUS_ABORTED, 0);
    }
    job->rec.end_ns = vnpu_now_ns();
    return true;
}

static void vnpu_complete_locked(VnpuState *s, VnpuJob *job, bool desc_ok,
                                 bool written)
{
    VnpuQueue *q = &s->q[job->queue];

    if (!desc_ok) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: queue %u halted: descriptor %u unreadable\n",
                      job->queue, job->slot);
        q->error = true;
        vnpu_error_locked(s, VNPU_ERR_DESCRIPTOR);
        return;
    }
    if (!written) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vnpu: queue %u halted: completion %u not writable\n",
                      job->queue, job->slot);
        q->error = true;
        vnpu_error_locked(s, VNPU_ERR_COMPLETION);
        return;
    }
    if (job->rec.status == VNPU_JOB_STATUS_MMU_FAULT) {
        if (!(s->fault_status & VNPU_FAULT_VALID)) {
            s->fault_status = job->rec.fault_flags;
            s->fault_ctx = job->ctx_id;
            s->fault_va = job->rec.fault_va;
            s->fault_queue = job->queue;
        }
        vnpu_raise_locked(s, VNPU_IRQ_MMU_FAULT, true);
    }
    q->head = (job->slot + 1) & (q->size - 1);
    q->done_seq = job->rec.seq;
    vnpu_raise_locked(s, VNPU_IRQ_QUEUE(job->queue), !job->lost_irq);
}

static bool vnpu_pick_locked(VnpuState *s, unsigned *qout)
{
    int best = -1;
    unsigned i;

    if (!(s->control & VNPU_CONTROL_ENABLE)) {
        return false;
    }
    for (i = 0; i < VNPU_NUM_QUEUES; i++) {
        unsigned qi = (s->rr_next + i) % VNPU_NUM_QUEUES;
        VnpuQueue *q = &s->q[qi];

        if (!(q->control & VNPU_QCTRL_ENABLE) || q->error || q->busy ||
            q->head == q->fetch_tail) {
            continue;
        }
        if (best < 0 || q->priority > s->q[best].priority) {
            best = qi;
        }
    }
    if (best < 0) {
        return false;
    }
    s->rr_next = (best + 1) % VNPU_NUM_QUEUES;
    *qout = best;
    return true;
}

/* Write the job's completion record (little-endian) through the gate. */
static VnpuDmaResult vnpu_write_record(VnpuJob *job, uint64_t compl)
{
    struct vnpu_hw_completion le = {
        .seq = cpu_to_le64(job->rec.seq),
        .status = cpu_to_le32(job->rec.status),
        .fault_flags = cpu_to_le32(job->rec.fault_flags),
        .fault_va = cpu_to_le64(job->rec.fault_va),
        .cycles = cpu_to_le64(job->rec.cycles),
        .start_ns = cpu_to_le64(job->rec.start_ns),
        .end_ns = cpu_to_le64(job->rec.end_ns),
    };

    if (!vnpu_job_current(job)) {
        return VNPU_DMA_STALE;
    }
    job->lost_irq = vnpu_take_injection(job->s, &job->s->inject_lost_irq);
    return vnpu_job_dma(job, compl, &le, sizeof(le), true);
}

/* Finalizing a device needs the BQL, so the worker cannot unref itself. */
static void vnpu_worker_exited_bh(void *opaque)
{
    object_unref(OBJECT(opaque));
}

/*
 * An engine with nothing to do while another runs a job: whether to look
 * again rather than sleep.  The job's next shared command may come at
 * any moment, and the owner cuts it for every engine whether or not
 * they are awake (vnpu_split_compute()), so an engine woken only then,
 * on a host whose CPUs are busy, often finds the bands all taken and
 * the owner did them alone.  It looks for at most help-spin-us since it
 * last had work, giving its CPU to any other runnable thread (a vCPU,
 * another device's engine) between looks.  It sleeps at once while every
 * other engine is idle too, as no job's commands can come, and while
 * the engines running in this process leave no host CPU for it: with
 * two devices busy on a 2-CPU host, looking took CPU time from the
 * engines that had work and cut the pair's throughput by a tenth.
 */
static bool vnpu_help_spin_locked(VnpuState *s, VnpuEngine *eng,
                                  int64_t *spin_end)
{
    int64_t now;
    unsigned i;

    if (!s->help_spin_us ||
        qatomic_read(&vnpu_engines_running) >= vnpu_host_cpus) {
        return false;
    }
    for (i = 0; i < s->num_engines; i++) {
        if (&s->eng[i] != eng && s->eng[i].busy) {
            break;
        }
    }
    if (i == s->num_engines) {
        return false;
    }
    now = get_clock();
    if (!*spin_end) {
        *spin_end = now + (int64_t)s->help_spin_us * SCALE_US;
    }
    if (now >= *spin_end) {
        return false;
    }
    qemu_mutex_unlock(&s->lock);
    sched_yield();
    qemu_mutex_lock(&s->lock);
    return true;
}

static void *vnpu_worker(void *opaque)
{
    VnpuEngine *eng = opaque;
    VnpuState *s = eng->s;

    qemu_mutex_lock(&s->lock);
    for (;;) {
        VnpuJob job = { .s = s, .eng = eng };
        VnpuDmaResult wr = VNPU_DMA_STALE;
        int64_t spin_end = 0;
        uint64_t ring, compl;
        bool desc_ok, current;
        unsigned qi;

        while (!s->stopping && !vnpu_pick_locked(s, &qi)) {
            /* A job of its own comes first; else help share a command. */
            if (vnpu_split_help_locked(s, eng)) {
                spin_end = 0;
            } else if (!vnpu_help_spin_locked(s, eng, &spin_end)) {
                qemu_cond_wait(&s->work_cond, &s->lock);
                spin_end = 0;
            }
        }
        if (s->stopping) {
            break;
        }
        job.queue = qi;
        job.slot = s->q[qi].head;
        job.reset_gen = s->reset_gen;
        job.mmu.enabled = s->mmu_control & VNPU_MMU_CONTROL_ENABLE;
        job.mmu.ctx_table = s->ctx_table;
        job.mmu.ctx_count = s->ctx_count;
        ring = s->q[qi].ring;
        compl = s->q[qi].compl + (uint64_t)job.slot * VNPU_COMPL_SIZE;
        s->q[qi].busy = true;
        vnpu_engine_set_busy(eng, true);
        eng->job_gen = job.reset_gen;
        eng->abort = false;
        qemu_mutex_unlock(&s->lock);

        desc_ok = vnpu_run_job(&job, ring);
        if (desc_ok) {
            wr = vnpu_write_record(&job, compl);
        }

        qemu_mutex_lock(&s->lock);
        /*
         * A job a reset abandoned wrote nothing since (the gate) and its
         * queue has been reset under it: it only gives its engine back.
         */
        current = job.reset_gen == s->reset_gen;
        trace_vnpu_job_end(eng->index, job.queue, job.slot, job.rec.status,
                           job.rec.cycles, !current);
        if (current) {
            vnpu_complete_locked(s, &job, desc_ok, wr == VNPU_DMA_OK);
            s->q[qi].busy = false;
        }
        vnpu_engine_set_busy(eng, false);
        eng->abort = false;
        /* This queue's next job may now go to any engine. */
        qemu_cond_broadcast(&s->work_cond);
    }
    qemu_mutex_unlock(&s->lock);
    /* Last touch of the device: its reference goes back in the main loop. */
    aio_bh_schedule_oneshot(qemu_get_aio_context(), vnpu_worker_exited_bh, s);
    return NULL;
}

bool vnpu_engines_start(VnpuState *s, Error **errp)
{
    unsigned i;

    vnpu_compute_init();
    /* Under the BQL, before any engine thread exists. */
    if (!vnpu_host_cpus) {
        vnpu_host_cpus = vnpu_count_host_cpus();
    }

    for (i = 0; i < s->num_engines; i++) {
        VnpuEngine *eng = &s->eng[i];

        eng->s = s;
        eng->index = i;
        /* Address space only: pages are committed as commands touch them. */
        eng->arena = vnpu_arena_new((size_t)s->scratch_mb << 20);
        if (!eng->arena) {
            error_setg(errp, "vnpu: cannot reserve %u MiB of scratch for "
                       "engine %u", s->scratch_mb, i);
            while (i--) {
                vnpu_arena_free(s->eng[i].arena);
                s->eng[i].arena = NULL;
                g_free(s->eng[i].split_buf);
                s->eng[i].split_buf = NULL;
            }
            return false;
        }
        eng->cfg.arena = eng->arena;
        eng->cfg.i8_kernel = s->i8_kernel;
        eng->split_buf = g_new(VnpuSplit, 1);
    }
    for (i = 0; i < s->num_engines; i++) {
        /* A worker outliving unrealize keeps the device's memory alive. */
        object_ref(OBJECT(s));
        qemu_thread_create(&s->eng[i].thread, "vnpu-engine", vnpu_worker,
                           &s->eng[i], QEMU_THREAD_JOINABLE);
    }
    return true;
}

/*
 * Unrealize: abandon every job and let the workers go, without waiting
 * for them.  The generation bump detaches their jobs (no record, no
 * interrupt) and closes the reset gate; once the accesses in flight have
 * drained, no worker touches guest memory or the bus-master address space
 * again.  A worker in the middle of a compute step finishes it on its own
 * scratch memory, sees the abort at its next check, and exits; the last
 * one to go drops the last reference, and vnpu_engines_join() runs from
 * the device's finalization.
 */
void vnpu_engines_stop(VnpuState *s)
{
    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    qatomic_set(&s->reset_gen, s->reset_gen + 1);
    vnpu_engines_abort_locked(s);
    qemu_cond_broadcast(&s->work_cond);
    qemu_mutex_unlock(&s->lock);
    vnpu_dma_quiesce(s);
}

/* Every worker has exited, or is returning: it dropped its reference. */
void vnpu_engines_join(VnpuState *s)
{
    unsigned i;

    for (i = 0; i < s->num_engines; i++) {
        qemu_thread_join(&s->eng[i].thread);
        vnpu_arena_free(s->eng[i].arena);
        s->eng[i].arena = NULL;
        g_free(s->eng[i].split_buf);
        s->eng[i].split_buf = NULL;
    }
}
