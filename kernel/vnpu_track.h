/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The decisions of the completion, reset and ban paths, kept free of
 * MMIO, DMA, fences and locking so that KUnit can drive them with a
 * simulated device (on UML, where the PCI driver does not build).  The
 * callers in vnpu_ring.c and vnpu_reset.c hold the queue lock and act on
 * the verdicts.
 */
#ifndef VNPU_TRACK_H
#define VNPU_TRACK_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/types.h>

#define VNPU_RING_ENTRIES	256
/*
 * Jobs drm_sched may have on a ring at once: a ring holds ENTRIES - 1
 * descriptors, and one slot stays free for the debugfs raw probe.
 */
#define VNPU_RING_JOB_SLOTS	(VNPU_RING_ENTRIES - 2)
/*
 * Sequence numbers of raw probes.  Scheduler jobs count up from 1 in the
 * fence seqno space and never reach bit 63, so the completion path tells
 * the two apart by this bit alone.
 */
#define VNPU_SEQ_RAW		BIT_ULL(63)
/* Faulting jobs after which a context may no longer submit. */
#define VNPU_BAN_FAULTS		3

/**
 * struct vnpu_ring_track - what the driver put on one hardware ring
 * @head: oldest slot whose completion record is not consumed yet
 * @tail: next slot to fill; the value written to the device's TAIL
 * @owner: per slot, the job there (NULL for a raw probe)
 * @seq: per slot, the sequence number written into the descriptor, which
 *	the device echoes in the slot's completion record
 */
struct vnpu_ring_track {
	u32 head;
	u32 tail;
	void *owner[VNPU_RING_ENTRIES];
	u64 seq[VNPU_RING_ENTRIES];
};

u32 vnpu_track_used(const struct vnpu_ring_track *t);
u32 vnpu_track_push(struct vnpu_ring_track *t, void *owner, u64 seq);
void *vnpu_track_pop(struct vnpu_ring_track *t, u64 *seq);
int vnpu_track_finished(const struct vnpu_ring_track *t, u32 hw_head);
bool vnpu_track_record_ok(const struct vnpu_ring_track *t, u64 record_seq);
void vnpu_track_clear(struct vnpu_ring_track *t);

/**
 * enum vnpu_harvest - what a reset does with the oldest slot of a ring
 * @VNPU_HARVEST_RETIRE: its record is there: it ran exactly once, report it
 * @VNPU_HARVEST_RAW: a raw probe without a record: cancel its waiter
 * @VNPU_HARVEST_DMA_ERROR: guilty of a ring/descriptor/record DMA error
 * @VNPU_HARVEST_BLAME: guilty of the hang: TIMEOUT, counts to its ban
 * @VNPU_HARVEST_ABORT: innocent but cut off on an engine: ABORTED, since
 *	running it again could corrupt a non-idempotent stream
 * @VNPU_HARVEST_REPLAY: never started: write it to the fresh ring
 */
enum vnpu_harvest {
	VNPU_HARVEST_RETIRE,
	VNPU_HARVEST_RAW,
	VNPU_HARVEST_DMA_ERROR,
	VNPU_HARVEST_BLAME,
	VNPU_HARVEST_ABORT,
	VNPU_HARVEST_REPLAY,
};

/* vnpu_harvest_oldest()'s @started when any slot may have been running. */
#define VNPU_STARTED_ANY	VNPU_RING_ENTRIES
/* ... and when no slot was. */
#define VNPU_STARTED_NONE	(-1)

enum vnpu_harvest vnpu_harvest_oldest(const struct vnpu_ring_track *t,
				      u64 record_seq, bool guilty,
				      bool ring_error, int started);

/**
 * enum vnpu_replay - what happens to a job a reset found unstarted
 * @VNPU_REPLAY_PUSH: write it to the fresh ring; it runs once
 * @VNPU_REPLAY_ABORT: its file was banned meanwhile: ABORTED
 * @VNPU_REPLAY_LOST: the device did not come back: DEVICE_LOST
 */
enum vnpu_replay {
	VNPU_REPLAY_PUSH,
	VNPU_REPLAY_ABORT,
	VNPU_REPLAY_LOST,
};

enum vnpu_replay vnpu_replay_verdict(bool device_lost, bool banned);
bool vnpu_fault_bans(atomic_t *faults);

#endif /* VNPU_TRACK_H */
