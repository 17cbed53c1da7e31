/* SPDX-License-Identifier: MIT */
/* The importer's check of the protobuf wire format (onnx_wire.c). */
#ifndef NPU_ONNX_WIRE_H
#define NPU_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* The decoded model may take 8 times its encoding plus this much. */
#define ONNX_WIRE_SLACK_MIB	64u

struct onnx_wire_limits {
	size_t max_depth;	/* messages inside messages, the top one is 1 */
	uint64_t max_unpacked;	/* bytes protobuf-c would allocate */
};

/*
 * 0 if @data (@size bytes) is a well-formed encoding of message @top
 * within @lim; else -EBADMSG (malformed) or -E2BIG (over a limit) with a
 * message in @err.
 */
int onnx_wire_check(const void *data, size_t size, const ProtobufCMessageDescriptor *top,
		    const struct onnx_wire_limits *lim, char *err, size_t err_size);

#endif /* NPU_ONNX_WIRE_H */
