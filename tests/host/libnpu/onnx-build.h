/* SPDX-License-Identifier: MIT */
/*
 * Building ONNX models in memory for the importer's tests: a ModelProto
 * filled field by field and packed with protobuf-c.
 */
#ifndef ONNX_BUILD_H
#define ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "npu/onnx.h"
#include "onnx.pb-c.h"

struct mb {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto os, *osp;
	Onnx__NodeProto *nodes[16];
	Onnx__TensorProto *inits[16];
	Onnx__ValueInfoProto *ins[4], *outs[4];
	void *heap[256];
	size_t nheap;
};

/* @p freed by mb_free(); NULL fails the test. */
void *keep(struct mb *b, void *p);
void mb_init(struct mb *b, int64_t opset);
void mb_free(struct mb *b);
/* A tensor value info; dims < 0 are dynamic, named "N". */
Onnx__ValueInfoProto *vinfo(struct mb *b, const char *name, int elem,
			    int rank, const int64_t *dims);
/* A float graph input, and an output of unknown shape. */
void input(struct mb *b, const char *name, int rank, const int64_t *dims);
void output(struct mb *b, const char *name);
void init_f(struct mb *b, const char *name, int rank, const int64_t *dims,
	    const float *data, size_t n);
/* A 1-D int64 initializer. */
void init_i64(struct mb *b, const char *name, const int64_t *data, size_t n);
/*
 * A node; after @outs a NULL-terminated list of attributes
 * "name=i:VALUE", "name=ints:a,b,c" or "name=f:VALUE".
 */
Onnx__NodeProto *nodef(struct mb *b, const char *op, const char *name,
		       const char *ins, const char *outs, ...);
/* The packed model, malloc'd. */
uint8_t *pack(struct mb *b, size_t *len);
/* Load @b; expect @want and, for errors, @msg inside the message. */
struct npu_onnx_model *load(struct mb *b, const struct npu_onnx_options *o,
			    int want, const char *msg);

#endif /* ONNX_BUILD_H */
