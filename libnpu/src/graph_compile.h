/* SPDX-License-Identifier: MIT */
/*
 * State shared by the steps of npu_graph_compile(): graph_compile.c
 * (order, runtime, partition), graph_rewrite.c (folds, rewrites,
 * fusions) and graph_plan.c (the arena).
 */
#ifndef NPU_GRAPH_COMPILE_H
#define NPU_GRAPH_COMPILE_H

#include "graph_internal.h"

#define ARENA_ALIGN	64u
/* Host arenas and statics from this size up are mmap()ed (host_zalloc()). */
#define HOST_MMAP_MIN	(256u << 10)

enum nstate { N_ALIVE = 0, N_FOLDED, N_FUSED, N_DEAD };

struct cstate {
	struct npu_graph *w;		/* working copy */
	uint8_t *state;			/* per node, nstate */
	uint32_t *fused_into;
	uint32_t *origin;		/* graph node a working node reports to */
	uint32_t *order;		/* topological, working node indices */
	size_t norder;
	uint32_t *consumers;		/* per value, among live nodes */
	/* per value, the XOR of those nodes: the reader when there is one */
	uint32_t *readers_xor;
	size_t cap_consumers;
	/*
	 * Per node, the inputs @consumers counts for it (none unless it is
	 * live): a rewrite recounts the nodes it touched, not the graph.
	 */
	uint32_t (*counted)[GNODE_MAX_INPUTS];
	size_t cap_nodes;
};

struct lifetime {
	uint32_t root;
	int64_t first, last;
	uint64_t bytes;
	uint64_t offset;
};

static inline uint64_t npu__align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* Grow the per-node arrays of @c to cover every working node. */
int npu__cstate_fit(struct cstate *c);
/* Append a node like @tmpl reporting to graph node @origin. */
int npu__add_node_raw(struct cstate *c, const struct gnode *tmpl,
		      uint32_t origin, uint32_t *id);
/* A new value like @like (dtype, quantization) with @rank/@dims. */
int npu__add_value_raw(struct cstate *c, const struct gvalue *like,
		       uint32_t rank, const uint32_t *dims, void *data,
		       uint32_t *id);
void npu__count_consumers(struct cstate *c);
/* Make node @id's part of the consumer counts match its inputs and state. */
void npu__recount_node(struct cstate *c, uint32_t id);

int npu__fold_constants(struct cstate *c);
int npu__rewrite_special(struct cstate *c);
int npu__drop_dead(struct cstate *c);
/* Static per-channel ADDs after GEMM and convolutions into their bias. */
int npu__fuse_bias(struct cstate *c);
/* Fold a spelled-out LayerNorm into one LAYERNORM node. */
int npu__rewrite_layernorm(struct cstate *c);
/* Fold a spelled-out HardSwish into one HARD_SWISH activation. */
int npu__rewrite_hardswish(struct cstate *c);
/*
 * DEQUANTIZE -> op -> QUANTIZE as the op on 8-bit values, and ReLU/ReLU6
 * into an integer GEMM/CONV2D's epilogue (graph_quant.c).
 */
int npu__fuse_quant(struct cstate *c);
/*
 * Chains of pointwise ops from one per-tensor 8-bit value to another as
 * one LUT node with the table they compute (graph_lut.c).
 */
int npu__fuse_lut(struct cstate *c);
/* Biases, then activations into the epilogue of the op before. */
int npu__fuse_epilogues(struct cstate *c);
int npu__pack_weights(struct cstate *c);
/* Store internal 4-D values NHWC where only NCHW-aware ops touch them. */
int npu__plan_layout(struct cstate *c);

/* Place @n roots (sorted in place); *@total receives the arena size. */
int npu__plan_arena(struct lifetime *lt, size_t n, uint64_t *total);

#endif /* NPU_GRAPH_COMPILE_H */
