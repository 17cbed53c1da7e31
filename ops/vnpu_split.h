/* SPDX-License-Identifier: MIT */
/*
 * One large compute command cut into independent parts by output rows, so
 * that the device's idle engines can share it (hw-spec.rst, "Sharing one
 * command").  Each part is itself a complete, valid command over a band
 * of the output: the engine runs it like any other, and the bands
 * together compute what the whole command computes, every output element
 * from the same operand elements by the same arithmetic.  The bytes are
 * the uncut command's on every path but one: an unbatched fp32 GEMM or
 * CONV2D cut by rows, which the BLAS under the engine may block, and so
 * sum, otherwise for fewer rows.
 *
 * Only dense operands are cut, along their outermost rows, so every part's
 * operands are dense too and take the engine's fastest paths.  A command
 * whose output overlaps one of its inputs is never cut: the whole command
 * reads all of its inputs before it writes, and parallel parts would not.
 */
#ifndef VNPU_SPLIT_H
#define VNPU_SPLIT_H

#include "vnpu_ref.h"

/* Most parts one command is cut into. */
#define VNPU_SPLIT_MAX_PARTS	64

/*
 * Work units (MACs) a part aims at: a millisecond or less on the fast
 * kernels.  An engine that helps returns to its own queues between
 * parts, so this bounds how long a job waits behind a shared command.
 */
#define VNPU_SPLIT_PART_WORK	(1ull << 24)

/*
 * Fewest work units per part.  A part re-packs the weights and re-binds
 * its operands, a few microseconds; 2^19 MACs is 10-15 us of fp32 conv
 * on one core.  An idle engine looks for bands while a job runs
 * (qemu-device/vnpu-engine.c), so it takes one within microseconds and
 * the 1x1 and depthwise layers of mobile models, 0.5-3 M MACs each, are
 * worth sharing: blazeface-back's job took 17% less time than with the
 * floor at 2^21 (Documentation/bench.rst, "Engines on one model").
 */
#define VNPU_SPLIT_MIN_WORK	(1ull << 19)

/*
 * Fewest output pixels (CONV2D output positions, GEMM rows) per part, so
 * the weights each part packs again are used at least this many times.
 * A GEMM's B is usually far larger than a conv's weights, and packing it
 * for the int8 kernel costs about what 64 rows of its products do
 * (measured: 16 parts of a 1024^3 int8 GEMM on one thread took 1.5x the
 * uncut command), so GEMM parts are four times taller.
 */
#define VNPU_SPLIT_MIN_PIXELS	64
#define VNPU_SPLIT_MIN_GEMM_ROWS	256

/*
 * The same two for the ops that count elements or window taps (ELTWISE,
 * ACTIVATION, the conversions, POOL2D): the engine does 1-6 of them a
 * nanosecond on one core (ops.rst, "Engine performance"; sigmoid and the
 * 8-bit conversions at the slow end), so 2^16 is 10-60 us, several
 * times what handing a part to an idle engine thread costs, and 2^20 is
 * a millisecond or less.
 */
#define VNPU_SPLIT_MIN_ELEMS	(1ull << 16)
#define VNPU_SPLIT_PART_ELEMS	(1ull << 20)

/*
 * Parts per engine those ops aim at, within the floor: a helper that
 * starts late (its thread waiting for a host CPU) then holds up the
 * command by a quarter of its share, not all of it, as the owner takes
 * the parts nobody has claimed.  Their parts re-pack nothing, so more of
 * them cost little.
 */
#define VNPU_SPLIT_ELEM_PARTS_PER_ENGINE	4

/**
 * vnpu_compute_split - cut a compute command into output-row bands.
 * @cmd: the command bytes (any alignment), as the engine takes them
 * @size: their count
 * @engines: the device's engine count: at least this many parts when the
 *	command has the work and rows for them
 * @parts: receives the parts (VNPU_SPLIT_MAX_PARTS entries), each a whole
 *	struct vnpu_cmd_compute
 * @cycles: receives the whole command's modelled cycles when it is cut
 *
 * The number of parts depends only on the command and @engines: about
 * VNPU_SPLIT_PART_WORK each (VNPU_SPLIT_PART_ELEMS), at least @engines
 * (VNPU_SPLIT_ELEM_PARTS_PER_ENGINE times that), within the floors above.
 *
 * Return: the number of parts, at least 2; 0 when the command is not
 * worth cutting or cannot be (an op other than GEMM, CONV2D, POOL2D but
 * GLOBAL_AVG, ELTWISE, ACTIVATION, QUANTIZE, DEQUANTIZE, REQUANTIZE; a
 * batched fp32 GEMM whose B every batch shares, a per-channel operand
 * along the cut, a strided or
 * overlapping operand, too little work, invalid: the caller then runs it
 * whole, which also reports any error against the original command).
 */
unsigned int vnpu_compute_split(const void *cmd, uint32_t size,
				unsigned int engines,
				struct vnpu_cmd_compute *parts,
				uint64_t *cycles);

/*
 * Cut into min(@max_parts, work / @min_work, rows) parts, with no other
 * floor (tests: 1 cuts any command that can be cut at every row).
 */
unsigned int vnpu_compute_split_min(const void *cmd, uint32_t size,
				    unsigned int max_parts, uint64_t min_work,
				    struct vnpu_cmd_compute *parts,
				    uint64_t *cycles);

#endif /* VNPU_SPLIT_H */
