// SPDX-License-Identifier: MIT
/* Building ONNX models in memory for the importer's tests (onnx-build.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx-build.h"


void *keep(struct mb *b, void *p)
{
	assert_non_null(p);
	assert_true(b->nheap < 256);
	b->heap[b->nheap++] = p;
	return p;
}

void mb_init(struct mb *b, int64_t opset)
{
	memset(b, 0, sizeof(*b));
	onnx__model_proto__init(&b->m);
	onnx__graph_proto__init(&b->g);
	onnx__operator_set_id_proto__init(&b->os);
	b->os.domain = "";
	b->os.has_version = 1;
	b->os.version = opset;
	b->osp = &b->os;
	b->m.n_opset_import = 1;
	b->m.opset_import = &b->osp;
	b->m.has_ir_version = 1;
	b->m.ir_version = 8;
	b->m.graph = &b->g;
	b->g.node = b->nodes;
	b->g.initializer = b->inits;
	b->g.input = b->ins;
	b->g.output = b->outs;
}

void mb_free(struct mb *b)
{
	size_t i;

	for (i = 0; i < b->nheap; i++)
		free(b->heap[i]);
}

/* A tensor value info; dims < 0 are dynamic, named "N". */
Onnx__ValueInfoProto *vinfo(struct mb *b, const char *name, int elem,
				   int rank, const int64_t *dims)
{
	Onnx__ValueInfoProto *v = keep(b, calloc(1, sizeof(*v)));
	Onnx__TypeProto *t = keep(b, calloc(1, sizeof(*t)));
	Onnx__TypeProto__Tensor *tt = keep(b, calloc(1, sizeof(*tt)));
	Onnx__TensorShapeProto *sh = keep(b, calloc(1, sizeof(*sh)));
	Onnx__TensorShapeProto__Dimension **dp = keep(b, calloc(8, sizeof(*dp)));
	int i;

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = keep(b, calloc(1, sizeof(*d)));

		onnx__tensor_shape_proto__dimension__init(d);
		if (dims[i] >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = "N";
		}
		dp[i] = d;
	}
	sh->n_dim = (size_t)rank;
	sh->dim = dp;
	tt->has_elem_type = 1;
	tt->elem_type = elem;
	tt->shape = sh;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = (char *)name;
	v->type = t;
	return v;
}

void input(struct mb *b, const char *name, int rank, const int64_t *dims)
{
	b->ins[b->g.n_input++] = vinfo(b, name, 1, rank, dims);
}

void output(struct mb *b, const char *name)
{
	b->outs[b->g.n_output++] = vinfo(b, name, 1, 0, NULL);
}

void init_f(struct mb *b, const char *name, int rank, const int64_t *dims,
		   const float *data, size_t n)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = 1;
	t->n_dims = (size_t)rank;
	t->dims = keep(b, calloc((size_t)rank + 1, 8));
	memcpy(t->dims, dims, 8ull * (size_t)rank);
	t->n_float_data = n;
	t->float_data = keep(b, calloc(n + 1, 4));
	memcpy(t->float_data, data, 4 * n);
	b->inits[b->g.n_initializer++] = t;
}

void init_i64(struct mb *b, const char *name, const int64_t *data, size_t n)
{
	Onnx__TensorProto *t = keep(b, calloc(1, sizeof(*t)));

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = 7;
	t->n_dims = 1;
	t->dims = keep(b, calloc(1, 8));
	t->dims[0] = (int64_t)n;
	t->n_int64_data = n;
	t->int64_data = keep(b, calloc(n + 1, 8));
	memcpy(t->int64_data, data, 8 * n);
	b->inits[b->g.n_initializer++] = t;
}

/* A node; attributes: "name=i:VALUE" or "name=ints:a,b,c" or "name=f:VALUE". */
Onnx__NodeProto *nodef(struct mb *b, const char *op, const char *name,
			      const char *ins, const char *outs, ...)
{
	Onnx__NodeProto *n = keep(b, calloc(1, sizeof(*n)));
	Onnx__AttributeProto **attrs = keep(b, calloc(8, sizeof(*attrs)));
	char **iv = keep(b, calloc(NPU_KERNEL_MAX_INPUTS, sizeof(char *)));
	char **ov = keep(b, calloc(NPU_KERNEL_MAX_OUTPUTS, sizeof(char *)));
	const char *a;
	char *s;
	va_list ap;

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	s = keep(b, strdup(ins));
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		assert_true(n->n_input < NPU_KERNEL_MAX_INPUTS);
		iv[n->n_input++] = strcmp(tok, "-") ? tok : "";
	}
	s = keep(b, strdup(outs));
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		assert_true(n->n_output < NPU_KERNEL_MAX_OUTPUTS);
		ov[n->n_output++] = tok;
	}
	n->input = iv;
	n->output = ov;
	va_start(ap, outs);
	while ((a = va_arg(ap, const char *))) {
		Onnx__AttributeProto *at = keep(b, calloc(1, sizeof(*at)));
		char *spec = keep(b, strdup(a)), *eq = strchr(spec, '='), *colon;

		onnx__attribute_proto__init(at);
		*eq = 0;
		at->name = spec;
		colon = strchr(eq + 1, ':');
		*colon = 0;
		if (!strcmp(eq + 1, "i")) {
			at->has_i = 1;
			at->i = strtoll(colon + 1, NULL, 10);
		} else if (!strcmp(eq + 1, "f")) {
			at->has_f = 1;
			at->f = strtof(colon + 1, NULL);
		} else {
			int64_t *v = keep(b, calloc(8, 8));

			for (char *tok = strtok(colon + 1, ","); tok; tok = strtok(NULL, ","))
				v[at->n_ints++] = strtoll(tok, NULL, 10);
			at->ints = v;
		}
		attrs[n->n_attribute++] = at;
	}
	va_end(ap);
	n->attribute = attrs;
	b->nodes[b->g.n_node++] = n;
	return n;
}

uint8_t *pack(struct mb *b, size_t *len)
{
	uint8_t *buf;

	*len = onnx__model_proto__get_packed_size(&b->m);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	onnx__model_proto__pack(&b->m, buf);
	return buf;
}

/* Load @b; expect @want and, for errors, @msg inside the message. */
struct npu_onnx_model *load(struct mb *b, const struct npu_onnx_options *o,
				   int want, const char *msg)
{
	struct npu_onnx_model *m = NULL;
	char err[512];
	size_t len;
	uint8_t *buf = pack(b, &len);
	int ret = npu_onnx_load(buf, len, o, &m, err, sizeof(err));

	free(buf);
	if (ret != want)
		fail_msg("load returned %d, want %d: %s", ret, want, err);
	if (msg && !strstr(err, msg))
		fail_msg("message '%s' lacks '%s'", err, msg);
	return m;
}

