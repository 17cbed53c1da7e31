// SPDX-License-Identifier: MIT
/*
 * The node accessors of npu/onnx.h: what a kernel op's create() (a
 * built-in CPU kernel or an application's custom op) reads of its node.
 */
#include <errno.h>
#include <string.h>

#include "onnx_import.h"

NPU_EXPORT_ONNX const char *npu_onnx_node_op_type(const struct npu_onnx_node *n)
{
	return n->n->op_type ? n->n->op_type : "";
}

NPU_EXPORT_ONNX const char *npu_onnx_node_name(const struct npu_onnx_node *n)
{
	return n->n->name ? n->n->name : "";
}

NPU_EXPORT_ONNX int64_t npu_onnx_node_opset(const struct npu_onnx_node *n)
{
	return n->opset;
}

NPU_EXPORT_ONNX size_t npu_onnx_node_num_inputs(const struct npu_onnx_node *n)
{
	return n->n->n_input;
}

NPU_EXPORT_ONNX size_t npu_onnx_node_num_outputs(const struct npu_onnx_node *n)
{
	return n->n->n_output;
}

/*
 * The attribute @name if it has type @type: files that leave out the
 * type field are read by which field is set.
 */
static int find(const struct npu_onnx_node *n, const char *name,
		Onnx__AttributeProto__AttributeType type,
		const Onnx__AttributeProto **out)
{
	const Onnx__AttributeProto *a = NULL;
	bool ok;
	size_t i;

	for (i = 0; i < n->n->n_attribute && !a; i++)
		if (n->n->attribute[i]->name && !strcmp(n->n->attribute[i]->name, name))
			a = n->n->attribute[i];
	if (!a)
		return -ENOENT;
	if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
		ok = a->type == type;
	} else {
		switch (type) {
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: ok = a->has_i; break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: ok = a->has_f; break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: ok = a->has_s; break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: ok = a->n_ints > 0; break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: ok = a->n_floats > 0; break;
		case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: ok = a->n_strings > 0; break;
		default: ok = false; break;
		}
	}
	if (!ok)
		return -EINVAL;
	*out = a;
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_attr_int(const struct npu_onnx_node *n, const char *name,
				      int64_t *v)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a);

	if (!ret)
		*v = a->i;
	return ret;
}

NPU_EXPORT_ONNX int npu_onnx_attr_float(const struct npu_onnx_node *n, const char *name,
					float *v)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &a);

	if (!ret)
		*v = a->f;
	return ret;
}

static const int64_t empty_ints[1];
static const float empty_floats[1];

NPU_EXPORT_ONNX int npu_onnx_attr_ints(const struct npu_onnx_node *n, const char *name,
				       const int64_t **v, size_t *count)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a);

	if (!ret) {
		/* an empty list still gives a pointer callers may pass to memcpy() */
		*v = a->n_ints ? a->ints : empty_ints;
		*count = a->n_ints;
	}
	return ret;
}

NPU_EXPORT_ONNX int npu_onnx_attr_floats(const struct npu_onnx_node *n, const char *name,
					 const float **v, size_t *count)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, &a);

	if (!ret) {
		*v = a->n_floats ? a->floats : empty_floats;
		*count = a->n_floats;
	}
	return ret;
}

NPU_EXPORT_ONNX int npu_onnx_attr_string(const struct npu_onnx_node *n, const char *name,
					 char *buf, size_t size)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &a);

	if (ret)
		return ret;
	if (!size || a->s.len > size - 1)
		return -ERANGE;
	/* an empty string may have no data at all (protobuf-c) */
	if (a->s.len)
		memcpy(buf, a->s.data, a->s.len);
	buf[a->s.len] = 0;
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_attr_strings(const struct npu_onnx_node *n, const char *name,
					  size_t index, char *buf, size_t size, size_t *count)
{
	const Onnx__AttributeProto *a;
	int ret = find(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, &a);

	if (ret)
		return ret;
	if (count)
		*count = a->n_strings;
	if (index >= a->n_strings || !size || a->strings[index].len > size - 1)
		return -ERANGE;
	if (a->strings[index].len)
		memcpy(buf, a->strings[index].data, a->strings[index].len);
	buf[a->strings[index].len] = 0;
	return 0;
}
