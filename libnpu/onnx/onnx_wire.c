// SPDX-License-Identifier: MIT
/*
 * A pass over a model's protobuf wire format before protobuf-c unpacks it.
 *
 * protobuf-c's unpack recurses once per nested message with no depth limit
 * (a TypeProto inside a TypeProto a few hundred thousand times overflows
 * the stack), merges a repeated singular message field by copying the
 * earlier one (quadratic), and allocates a C struct per message however
 * small its encoding (two bytes of an empty NodeProto become ~150 bytes).
 * This pass walks the same bytes with an explicit stack, guided by the
 * generated descriptors so that it knows which length-delimited fields are
 * messages, and refuses before anything is allocated: nesting deeper than
 * the limit, malformed or truncated wire data, a singular message field
 * given twice, and an encoding that would unpack into more memory than
 * the budget.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"
#include "onnx_wire.h"
#include "onnx.pb-c.h"

struct frame {
	const ProtobufCMessageDescriptor *desc;
	size_t end;
	uint64_t seen;		/* singular message fields met, by field index */
};

struct walk {
	const uint8_t *p;
	size_t pos;
	char *err;
	size_t err_size;
	const char *what;	/* "model", "tensor" */
};

__attribute__((format(printf, 2, 3)))
static int wfail(struct walk *w, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->err && w->err_size)
		snprintf(w->err, w->err_size, "not a valid ONNX %s: %s", w->what, msg);
	return -EBADMSG;
}

/* "TypeProto.Sequence" for onnx.TypeProto.Sequence */
static const char *msg_name(const ProtobufCMessageDescriptor *d)
{
	size_t n = d->package_name ? strlen(d->package_name) : 0;

	return n && !strncmp(d->name, d->package_name, n) && d->name[n] == '.' ?
	       d->name + n + 1 : d->name;
}

static int varint(struct walk *w, size_t end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int shift;

	for (shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (w->pos >= end)
			return wfail(w, "a number is cut off at byte %zu", w->pos);
		b = w->p[w->pos++];
		if (shift == 63 && b > 1)
			return wfail(w, "a number longer than 64 bits at byte %zu", w->pos - 1);
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return wfail(w, "a number longer than 10 bytes at byte %zu", w->pos);
}

/* What protobuf-c allocates for one element of a repeated field. */
static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* Elements in the packed payload p[0..len) of a repeated scalar. */
static uint64_t packed_count(const uint8_t *p, size_t len, ProtobufCType t)
{
	uint64_t n = 0;
	size_t i;

	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
		return len / 4;
	case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return len / 8;
	default:
		for (i = 0; i < len; i++)
			n += !(p[i] & 0x80);
		return n;
	}
}

int onnx_wire_check(const void *data, size_t size, const ProtobufCMessageDescriptor *top,
		    const struct onnx_wire_limits *lim, char *err, size_t err_size)
{
	struct walk w = { .p = data, .err = err, .err_size = err_size,
			  .what = top == &onnx__model_proto__descriptor ? "model" : "tensor" };
	struct frame *st;
	uint64_t mem = top->sizeof_message;
	size_t depth = 0;
	int ret = 0;

	st = malloc((lim->max_depth + 1) * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[0] = (struct frame){ .desc = top, .end = size };
	for (;;) {
		struct frame *f = &st[depth];
		const ProtobufCFieldDescriptor *fd;
		uint64_t tag, v, len;
		uint32_t wt;

		if (w.pos == f->end) {
			if (!depth)
				break;
			depth--;
			continue;
		}
		ret = varint(&w, f->end, &tag);
		if (ret)
			break;
		wt = (uint32_t)(tag & 7);
		if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
			ret = wfail(&w, "field number %" PRIu64 " at byte %zu", tag >> 3, w.pos);
			break;
		}
		fd = protobuf_c_message_descriptor_get_field(f->desc, (unsigned)(tag >> 3));
		switch (wt) {
		case 0:
			ret = varint(&w, f->end, &v);
			len = 0;
			break;
		case 1: case 5:
			len = wt == 1 ? 8 : 4;
			if (f->end - w.pos < len)
				ret = wfail(&w, "a fixed-size number is cut off at byte %zu", w.pos);
			else
				w.pos += len;
			break;
		case 2:
			ret = varint(&w, f->end, &len);
			if (!ret && len > f->end - w.pos)
				ret = wfail(&w, "a field of %" PRIu64 " bytes at byte %zu runs past the end of its %s (%zu bytes left)",
					    len, w.pos, depth ? msg_name(f->desc) : "file",
					    f->end - w.pos);
			break;
		default:
			ret = wfail(&w, "wire type %u (%s) at byte %zu", wt,
				    wt == 3 || wt == 4 ? "a group" : "invalid", w.pos);
			break;
		}
		if (ret)
			break;
		if (!fd) {
			/* protobuf-c keeps unknown fields, with a copy of their bytes */
			mem += sizeof(ProtobufCMessageUnknownField) + (wt == 2 ? len : 8);
			if (wt == 2)
				w.pos += len;
		} else if (fd->type == PROTOBUF_C_TYPE_MESSAGE && wt == 2) {
			size_t idx = (size_t)(fd - f->desc->fields);

			if (fd->label != PROTOBUF_C_LABEL_REPEATED && idx < 64) {
				if (f->seen & (1ull << idx)) {
					ret = wfail(&w, "field '%s' of %s appears twice (byte %zu)",
						    fd->name, msg_name(f->desc), w.pos);
					break;
				}
				f->seen |= 1ull << idx;
			}
			if (depth + 1 >= lim->max_depth) {
				if (err && err_size)
					snprintf(err, err_size,
						 "protobuf messages nest deeper than %zu levels (npu_onnx_options.max_nesting): a %s inside %s at byte %zu",
						 lim->max_depth,
						 msg_name(fd->descriptor), msg_name(f->desc), w.pos);
				ret = -E2BIG;
				break;
			}
			mem += ((const ProtobufCMessageDescriptor *)fd->descriptor)->sizeof_message;
			if (fd->label == PROTOBUF_C_LABEL_REPEATED)
				mem += sizeof(void *);
			st[++depth] = (struct frame){ .desc = fd->descriptor, .end = w.pos + len };
		} else {
			if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES)
				mem += len + 1;
			if (fd->label == PROTOBUF_C_LABEL_REPEATED)
				mem += elem_size(fd->type) *
				       (wt == 2 && fd->type != PROTOBUF_C_TYPE_STRING &&
					fd->type != PROTOBUF_C_TYPE_BYTES ?
					packed_count(w.p + w.pos, len, fd->type) : 1);
			if (wt == 2)
				w.pos += len;
		}
		if (mem > lim->max_unpacked) {
			if (err && err_size)
				snprintf(err, err_size,
					 "the model would unpack into more than %" PRIu64 " bytes (8 times its size plus %u MiB) by byte %zu",
					 lim->max_unpacked, ONNX_WIRE_SLACK_MIB, w.pos);
			ret = -E2BIG;
			break;
		}
	}
	free(st);
	return ret;
}
