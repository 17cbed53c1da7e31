/*
 * vnpu DMA: how worker threads reach guest memory, and the reset gate.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Two rules (hw-spec.rst, "Device model notes"):
 *
 * - Translate once.  Each piece of a transfer is translated and accessed
 *   in one RCU critical section: address_space_translate() names the
 *   memory region behind the address, and if it is RAM the bytes are
 *   copied through its host pointer before the section ends.  Checking
 *   first and then calling address_space_read/write/map() would leave a
 *   window in which the page can become MMIO, and an MMIO dispatch from a
 *   worker would take the BQL (deadlock with reset, which holds it) or
 *   hand out a bounce buffer.  Anything that is not RAM is a bus error.
 *
 * - Every access passes the reset gate.  A worker announces an access
 *   (in_dma), then checks that its job's reset generation is still the
 *   device's; reset and unrealize bump the generation, then wait for
 *   in_dma to drop.  Either the worker saw the bump and touches nothing,
 *   or the reset waits for its one chunk (VNPU_DMA_CHUNK at most): after
 *   the reset returns, no access of an abandoned job is in flight or can
 *   start, and after unrealize no worker uses the bus-master address
 *   space the PCI core is about to destroy.
 *
 * - An output mapped for writing is one long access.  The compute engine
 *   writes through the host pointer for as long as the command runs, and
 *   such a pointer cannot be revoked, so the mapping itself holds the
 *   gate: it is counted (maps_out) before the generation check, exactly
 *   as in_dma is, and uncounted only after the engine unmapped it.  Reset
 *   then waits for it too, which takes until the engine's next abort
 *   check (ops/vnpu_run.h: VNPU_POLL_WORK units, or one VNPU_POLL_BLOCK
 *   block of a fast kernel, about a millisecond and a half at most): the
 *   engine sees its job abandoned, stops writing and unmaps.  Inputs
 *   mapped for reading need no such wait: reading guest RAM after a reset
 *   changes nothing in it.
 */
#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "qemu/atomic.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "exec/memory.h"
#include "vnpu-internal.h"
#include "trace.h"

static bool vnpu_mr_is_ram(MemoryRegion *mr, bool is_write)
{
    return memory_region_is_ram(mr) && !memory_region_is_ram_device(mr) &&
           !(is_write && mr->readonly);
}

/*
 * Copy between @buf and guest memory, one memory-region section at a
 * time.  A write marks the pages dirty (migration, TCG code invalidation)
 * through address_space_unmap(), which expects the region referenced as
 * address_space_map() would have done.
 */
static bool vnpu_ram_rw(VnpuState *s, uint64_t addr, void *buf, uint64_t len,
                        bool is_write)
{
    uint8_t *p = buf;

    if (vnpu_range_wraps(addr, len)) {
        return false;
    }
    while (len) {
        MemoryRegion *mr;
        hwaddr xlat, l = len;
        uint8_t *host;

        RCU_READ_LOCK_GUARD();
        mr = address_space_translate(s->as, addr, &xlat, &l, is_write,
                                     MEMTXATTRS_UNSPECIFIED);
        if (!l || !vnpu_mr_is_ram(mr, is_write)) {
            trace_vnpu_dma_bus_error(addr, len, is_write);
            return false;
        }
        host = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
        if (is_write) {
            memory_region_ref(mr);
            memcpy(host, p, l);
            address_space_unmap(s->as, host, l, true, l);
        } else {
            memcpy(p, host, l);
        }
        addr += l;
        p += l;
        len -= l;
    }
    return true;
}

bool vnpu_job_current(VnpuJob *job)
{
    return qatomic_read(&job->s->reset_gen) == job->reset_gen;
}

/*
 * The gate: announce an access, then check the job is still current.
 * Pairs with the barrier in vnpu_dma_quiesce().  One worker per engine,
 * and no access nests inside another, so a flag per engine is enough.
 */
static void vnpu_gate_exit(VnpuJob *job);

static bool vnpu_gate_enter(VnpuJob *job)
{
    qatomic_set(&job->eng->in_dma, true);
    smp_mb();
    if (vnpu_job_current(job)) {
        return true;
    }
    /* A reset may already be waiting on the flag just raised. */
    vnpu_gate_exit(job);
    return false;
}

/* An access or a write mapping just ended: a reset may be waiting. */
static void vnpu_gate_wake(VnpuState *s)
{
    /* Pairs with the barrier after a waiter registers in vnpu_dma_quiesce(). */
    smp_mb();
    if (qatomic_read(&s->gate_waiters)) {
        qemu_mutex_lock(&s->gate_lock);
        qemu_cond_broadcast(&s->gate_cond);
        qemu_mutex_unlock(&s->gate_lock);
    }
}

static void vnpu_gate_exit(VnpuJob *job)
{
    qatomic_store_release(&job->eng->in_dma, false);
    vnpu_gate_wake(job->s);
}

static bool vnpu_engine_in_dma(VnpuEngine *eng)
{
    return qatomic_load_acquire(&eng->in_dma) ||
           qatomic_load_acquire(&eng->maps_out);
}

VnpuDmaResult vnpu_job_dma(VnpuJob *job, uint64_t addr, void *buf,
                           uint64_t len, bool is_write)
{
    VnpuDmaResult r;

    if (!vnpu_gate_enter(job)) {
        trace_vnpu_dma_stale(job->eng->index, addr, len, is_write);
        return VNPU_DMA_STALE;
    }
    r = vnpu_ram_rw(job->s, addr, buf, len, is_write) ? VNPU_DMA_OK :
                                                        VNPU_DMA_BUS_ERROR;
    vnpu_gate_exit(job);
    return r;
}

/*
 * Called by reset and unrealize after bumping reset_gen: once it returns,
 * no access of an older job is in flight or can start, and no output of
 * one is still mapped.  Returns false only if one was still in flight
 * after VNPU_RESET_WAIT_MS, which takes a host that stopped scheduling a
 * worker for that long.
 *
 * An access is microseconds of memcpy, so a short spin usually sees it
 * end.  Past that the worker has most likely been preempted in the middle
 * of one (more busy threads than CPUs): then block, which frees this CPU
 * for it, and let it wake us when it leaves the gate.
 */
bool vnpu_dma_quiesce(VnpuState *s)
{
    int64_t start = get_clock();
    bool ok = true;
    unsigned i;

    smp_mb();
    for (i = 0; i < s->num_engines; i++) {
        VnpuEngine *eng = &s->eng[i];

        while (vnpu_engine_in_dma(eng) &&
               get_clock() - start < VNPU_GATE_SPIN_US * SCALE_US) {
            cpu_relax();
        }
        if (!vnpu_engine_in_dma(eng)) {
            continue;
        }
        qemu_mutex_lock(&s->gate_lock);
        qatomic_inc(&s->gate_waiters);
        smp_mb();
        while (vnpu_engine_in_dma(eng)) {
            if (get_clock() - start > VNPU_RESET_WAIT_MS * SCALE_MS) {
                error_report("vnpu: engine %u still accessing guest memory "
                             "%d ms after reset", i, VNPU_RESET_WAIT_MS);
                ok = false;
                break;
            }
            /* Timed only as a safety net: the worker signals. */
            qemu_cond_timedwait(&s->gate_cond, &s->gate_lock, 1);
        }
        qatomic_dec(&s->gate_waiters);
        qemu_mutex_unlock(&s->gate_lock);
    }
    return ok;
}

/*
 * A read-only host pointer to [@addr, @addr + @len), or NULL unless the
 * whole range is one section of RAM.  The region stays referenced until
 * vnpu_dma_unmap_read(), so the pointer outlives the RCU section safely,
 * and even the device: after a reset or unplug, an engine still finishing
 * a step on it reads RAM that cannot go away under it.
 */
void *vnpu_job_map_read(VnpuJob *job, uint64_t addr, uint64_t len)
{
    MemoryRegion *mr;
    hwaddr xlat, l = len;
    void *host = NULL;

    if (!len || vnpu_range_wraps(addr, len) || !vnpu_gate_enter(job)) {
        return NULL;
    }
    WITH_RCU_READ_LOCK_GUARD() {
        mr = address_space_translate(job->s->as, addr, &xlat, &l, false,
                                     MEMTXATTRS_UNSPECIFIED);
        if (l >= len && vnpu_mr_is_ram(mr, false)) {
            memory_region_ref(mr);
            host = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
        }
    }
    vnpu_gate_exit(job);
    return host;
}

/* Needs no address space: usable after the device is gone. */
void vnpu_dma_unmap_read(void *host)
{
    ram_addr_t off;
    MemoryRegion *mr = memory_region_from_host(host, &off);

    memory_region_unref(mr);
}

/*
 * A writable host pointer to [@addr, @addr + @len), or NULL unless the
 * whole range is one section of writable RAM.  Holds the reset gate until
 * vnpu_job_unmap_write() (see the top of this file): a reset waits for
 * the engine to unmap, and a job already abandoned gets no mapping.
 */
void *vnpu_job_map_write(VnpuJob *job, uint64_t addr, uint64_t len)
{
    VnpuEngine *eng = job->eng;
    MemoryRegion *mr;
    hwaddr xlat, l = len;
    void *host = NULL;

    if (!len || vnpu_range_wraps(addr, len)) {
        return NULL;
    }
    qatomic_inc(&eng->maps_out);
    /* Pairs with the barrier at the start of vnpu_dma_quiesce(). */
    smp_mb();
    if (vnpu_job_current(job)) {
        WITH_RCU_READ_LOCK_GUARD() {
            mr = address_space_translate(job->s->as, addr, &xlat, &l, true,
                                         MEMTXATTRS_UNSPECIFIED);
            if (l >= len && vnpu_mr_is_ram(mr, true)) {
                memory_region_ref(mr);
                host = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
            }
        }
    }
    if (!host) {
        qatomic_dec(&eng->maps_out);
        vnpu_gate_wake(job->s);
    }
    return host;
}

/*
 * Marks the whole mapping dirty whatever the engine reports it wrote: an
 * aborted command may have written part of it.  The address space is
 * still there: unrealize waits for this unmap before it lets go of it.
 */
void vnpu_job_unmap_write(VnpuJob *job, void *host, uint64_t len)
{
    address_space_unmap(job->s->as, host, len, true, len);
    qatomic_dec(&job->eng->maps_out);
    vnpu_gate_wake(job->s);
}
