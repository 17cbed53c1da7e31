// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Ring bookkeeping and the reset and ban verdicts (see vnpu_track.h).
 */

#include <linux/errno.h>

#include "vnpu_track.h"

static_assert(!(VNPU_RING_ENTRIES & (VNPU_RING_ENTRIES - 1)),
	      "ring indices wrap with a mask");

static u32 vnpu_track_next(u32 slot)
{
	return (slot + 1) & (VNPU_RING_ENTRIES - 1);
}

/**
 * vnpu_track_used() - slots between head and tail
 * @t: ring
 *
 * Return: slots pushed and not popped yet.
 */
u32 vnpu_track_used(const struct vnpu_ring_track *t)
{
	return (t->tail - t->head) & (VNPU_RING_ENTRIES - 1);
}

/**
 * vnpu_track_push() - note a descriptor written at the tail
 * @t: ring, with a free slot (drm_sched's credit limit and the raw
 *	probe's reserved slot guarantee one)
 * @owner: the job, or NULL for a raw probe
 * @seq: the descriptor's sequence number
 *
 * Return: the slot, whose descriptor the caller fills before it writes
 * the new tail to the device.
 */
u32 vnpu_track_push(struct vnpu_ring_track *t, void *owner, u64 seq)
{
	u32 slot = t->tail;

	t->owner[slot] = owner;
	t->seq[slot] = seq;
	t->tail = vnpu_track_next(slot);
	return slot;
}

/**
 * vnpu_track_pop() - forget the oldest slot
 * @t: ring, not empty
 * @seq: out: the slot's sequence number
 *
 * Return: the slot's owner.
 */
void *vnpu_track_pop(struct vnpu_ring_track *t, u64 *seq)
{
	u32 slot = t->head;
	void *owner = t->owner[slot];

	*seq = t->seq[slot];
	t->owner[slot] = NULL;
	t->seq[slot] = 0;
	t->head = vnpu_track_next(slot);
	return owner;
}

/**
 * vnpu_track_finished() - how many slots the device has finished
 * @t: ring
 * @hw_head: the device's HEAD register
 *
 * The device advances HEAD past a slot only after writing its record, so
 * the slots from @t->head up to @hw_head have whole records, to be
 * consumed in this order.  A HEAD outside the slots in flight is not a
 * state the device can be in (all ones: it is gone): nothing is finished.
 *
 * Return: the number of slots, or -EIO for an impossible HEAD.
 */
int vnpu_track_finished(const struct vnpu_ring_track *t, u32 hw_head)
{
	u32 done;

	if (hw_head >= VNPU_RING_ENTRIES)
		return -EIO;
	done = (hw_head - t->head) & (VNPU_RING_ENTRIES - 1);
	if (done > vnpu_track_used(t))
		return -EIO;
	return done;
}

/**
 * vnpu_track_record_ok() - does the oldest slot's record belong to it
 * @t: ring, not empty
 * @record_seq: seq field of the slot's completion record
 *
 * A record left from the slot's previous use, %VNPU_RING_ENTRIES
 * descriptors ago, carries another sequence number.
 *
 * Return: true if the record is the slot's own.
 */
bool vnpu_track_record_ok(const struct vnpu_ring_track *t, u64 record_seq)
{
	return record_seq == t->seq[t->head];
}

/**
 * vnpu_track_clear() - forget every slot (the ring was reset)
 * @t: ring, whose owners the caller has dealt with
 */
void vnpu_track_clear(struct vnpu_ring_track *t)
{
	while (t->head != t->tail) {
		u64 seq;

		vnpu_track_pop(t, &seq);
	}
	t->head = 0;
	t->tail = 0;
}

/**
 * vnpu_harvest_oldest() - a reset's verdict on the oldest slot of a ring
 * @t: ring of a stopped queue, not empty
 * @record_seq: seq field of the slot's completion record
 * @guilty: the slot holds the job the reset is for
 * @ring_error: ... and that job is guilty of a ring DMA error, not a hang
 * @started: the slot that may have been on an engine when the queue
 *	stopped, %VNPU_STARTED_NONE, or %VNPU_STARTED_ANY when the device
 *	could not tell
 *
 * Exactly-once: a job with its record ran once and is reported; a job
 * without one either never started (replayed) or was cut off (aborted),
 * never run again from the start.
 *
 * Return: what to do with the slot.
 */
enum vnpu_harvest vnpu_harvest_oldest(const struct vnpu_ring_track *t,
				      u64 record_seq, bool guilty,
				      bool ring_error, int started)
{
	u32 slot = t->head;

	if (vnpu_track_record_ok(t, record_seq))
		return VNPU_HARVEST_RETIRE;
	if (t->seq[slot] & VNPU_SEQ_RAW)
		return VNPU_HARVEST_RAW;
	if (guilty)
		return ring_error ? VNPU_HARVEST_DMA_ERROR : VNPU_HARVEST_BLAME;
	if (started == VNPU_STARTED_ANY || started == (int)slot)
		return VNPU_HARVEST_ABORT;
	return VNPU_HARVEST_REPLAY;
}

/**
 * vnpu_replay_verdict() - what happens to a job a reset found unstarted
 * @device_lost: the device could not be brought back
 * @banned: the job's file was banned, possibly by this very reset
 *
 * Return: the verdict.
 */
enum vnpu_replay vnpu_replay_verdict(bool device_lost, bool banned)
{
	if (device_lost)
		return VNPU_REPLAY_LOST;
	return banned ? VNPU_REPLAY_ABORT : VNPU_REPLAY_PUSH;
}

/**
 * vnpu_fault_bans() - count one fault or hang against a file
 * @faults: the file's counter
 *
 * Return: true once the file has reached %VNPU_BAN_FAULTS and must be
 * banned (and stays true for every later fault).
 */
bool vnpu_fault_bans(atomic_t *faults)
{
	return atomic_inc_return(faults) >= VNPU_BAN_FAULTS;
}
