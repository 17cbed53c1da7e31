// SPDX-License-Identifier: MIT
/*
 * Dynamic shapes: a model file parsed, checked and its initializers
 * decoded once (an npu_onnx_source), then imported for each set of input
 * shapes the caller meets (npu_onnx_specialize()).  An import redoes only
 * what depends on shapes: shape inference, the folding of shape
 * arithmetic, the graph.  The device's commands have shapes in them, so a
 * caller compiles each imported graph and keeps the runtimes it wants
 * (npu.Model keeps a few, keyed by shape).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_import.h"

/* Copies of @n tensors with their data. */
static int copy_tensors(const struct npu_onnx_tensor *from, size_t n,
			const struct npu_onnx_tensor **to)
{
	struct npu_onnx_tensor *t;
	size_t i;

	*to = NULL;
	if (!n)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*to = t;
	for (i = 0; i < n; i++) {
		t[i] = from[i];
		t[i].data = NULL;
		if (!from[i].bytes || !from[i].data)
			continue;
		t[i].data = malloc(from[i].bytes);
		if (!t[i].data)
			return -ENOMEM;
		memcpy(t[i].data, from[i].data, from[i].bytes);
	}
	return 0;
}

static void free_tensors(const struct npu_onnx_tensor *t, size_t n)
{
	size_t i;

	for (i = 0; t && i < n; i++)
		free(t[i].data);
	free((void *)t);
}

int oi_options_copy(struct npu_onnx_options *dst, const struct npu_onnx_options *src, bool deep)
{
	size_t have = !src ? 0 : !src->size ? offsetof(struct npu_onnx_options, size) :
		      src->size < sizeof(*src) ? src->size : sizeof(*src);
	struct npu_onnx_shape *shapes;
	size_t i;
	int ret;

	memset(dst, 0, sizeof(*dst));
	if (src)
		memcpy(dst, src, have);
	if (src && src->size > sizeof(*src))
		dst->size = sizeof(*dst);	/* what lies past it is zero (take_limits()) */
	if (!deep)
		return 0;
	/* from here @dst owns its arrays, the failed copies NULL */
	dst->shapes = NULL;
	dst->constants = NULL;
	if (dst->size >= offsetof(struct npu_onnx_options, num_values) + sizeof(dst->num_values)) {
		dst->custom_ops = NULL;
		dst->values = NULL;
	}
	if (dst->num_shapes) {
		shapes = calloc(dst->num_shapes, sizeof(*shapes));
		if (!shapes)
			goto nomem;
		dst->shapes = shapes;
		for (i = 0; i < dst->num_shapes; i++) {
			shapes[i] = src->shapes[i];
			shapes[i].name = src->shapes[i].name ? strdup(src->shapes[i].name) : NULL;
			if (src->shapes[i].name && !shapes[i].name)
				goto nomem;
		}
	}
	ret = copy_tensors(src ? src->constants : NULL, dst->num_constants, &dst->constants);
	if (ret)
		goto nomem;
	if (dst->size < offsetof(struct npu_onnx_options, num_values) + sizeof(dst->num_values))
		return 0;
	ret = copy_tensors(src->values, dst->num_values, &dst->values);
	if (ret)
		goto nomem;
	if (dst->num_custom_ops) {
		const struct npu_onnx_op **ops = calloc(dst->num_custom_ops, sizeof(*ops));

		if (!ops)
			goto nomem;
		memcpy(ops, src->custom_ops, dst->num_custom_ops * sizeof(*ops));
		dst->custom_ops = ops;
	}
	return 0;
nomem:
	oi_options_release(dst);
	return -ENOMEM;
}

void oi_options_release(struct npu_onnx_options *o)
{
	size_t i;

	for (i = 0; o->shapes && i < o->num_shapes; i++)
		free((char *)o->shapes[i].name);
	free((void *)o->shapes);
	free_tensors(o->constants, o->num_constants);
	if (o->size >= offsetof(struct npu_onnx_options, num_values) + sizeof(o->num_values)) {
		free_tensors(o->values, o->num_values);
		free((void *)o->custom_ops);
	}
	memset(o, 0, sizeof(*o));
}

NPU_EXPORT_ONNX int npu_onnx_source_load(const void *data, size_t size,
					 const struct npu_onnx_options *opts,
					 struct npu_onnx_source **out, char *err, size_t err_size)
{
	struct npu_onnx_source *src;
	int ret;

	if (err && err_size)
		err[0] = 0;
	if (!out || (!data && size))
		return -EINVAL;
	src = calloc(1, sizeof(*src));
	if (!src)
		return -ENOMEM;
	ret = oi_options_copy(&src->opts, opts, true);
	src->owns_opts = !ret;
	if (!ret)
		ret = oi_source_parse(src, data, size, opts, err, err_size);
	if (ret) {
		if (ret == -ENOMEM && err && err_size && !*err)
			snprintf(err, err_size, "out of memory");
		npu_onnx_source_free(src);
		return ret;
	}
	*out = src;
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_source_load_file(const char *path,
					      const struct npu_onnx_options *opts,
					      struct npu_onnx_source **out, char *err,
					      size_t err_size)
{
	size_t len;
	void *buf;
	int ret = onnx_read_file(path, &buf, &len);

	if (ret) {
		if (err && err_size)
			snprintf(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = npu_onnx_source_load(buf, len, opts, out, err, err_size);
	free(buf);
	return ret;
}

NPU_EXPORT_ONNX void npu_onnx_source_free(struct npu_onnx_source *src)
{
	if (!src)
		return;
	oi_source_release(src);
	free(src);
}

NPU_EXPORT_ONNX int npu_onnx_specialize(const struct npu_onnx_source *src,
					const struct npu_onnx_shape *shapes, size_t num_shapes,
					struct npu_onnx_model **out, char *err, size_t err_size)
{
	if (err && err_size)
		err[0] = 0;
	if (!src || !out || (num_shapes && !shapes))
		return -EINVAL;
	return oi_source_import(src, shapes, num_shapes, out, err, err_size);
}

NPU_EXPORT_ONNX uint64_t npu_onnx_source_imports(const struct npu_onnx_source *src)
{
	return src ? __atomic_load_n(&src->imports, __ATOMIC_RELAXED) : 0;
}

static int dims_info(const struct oi_dyn *dyn, size_t n, size_t i,
		     struct npu_onnx_dims_info *info)
{
	struct npu_onnx_dims_info v = NPU_ONNX_DIMS_INFO_INIT;
	size_t have;
	uint32_t k;

	if (!dyn || !info || i >= n || info->size < offsetof(struct npu_onnx_dims_info, size) +
						     sizeof(info->size))
		return -EINVAL;
	have = info->size < sizeof(v) ? info->size : sizeof(v);
	v.dynamic = dyn[i].mask;
	for (k = 0; k < NPU_TENSOR_MAX_RANK; k++)
		v.param[k] = dyn[i].param[k];
	v.size = info->size;
	memcpy(info, &v, have);
	return 0;
}

NPU_EXPORT_ONNX int npu_onnx_input_dims(const struct npu_onnx_model *m, size_t i,
				       struct npu_onnx_dims_info *info)
{
	return m ? dims_info(m->in_dyn, m->num_in, i, info) : -EINVAL;
}

NPU_EXPORT_ONNX int npu_onnx_output_dims(const struct npu_onnx_model *m, size_t i,
					struct npu_onnx_dims_info *info)
{
	return m ? dims_info(m->out_dyn, m->num_out, i, info) : -EINVAL;
}
