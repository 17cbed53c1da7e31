// SPDX-License-Identifier: MIT
/* npu-quantize: samples and runs (see npu-quantize-run.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npu/onnx.h"
#include "npu-quantize-run.h"
#include "npy.h"

/* Compile-to-result bound of one run: a model cannot hang the tool. */
#define RUN_TIMEOUT_NS	(600ll * 1000000000ll)

struct qr_model {
	struct npu_onnx_model *om;
	struct npu_runtime *rt;
	struct npu_device *dev;
	struct npu_context *ctx;
	struct npu_queue *q;
	size_t nout;
	void **out;
	void **in;
	size_t nin;
};

static const struct {
	enum npu_dtype dtype;
	enum npy_type npy;
	const char *name;
} dtypes[] = {
	{ NPU_DTYPE_FP32, NPY_F32, "float32" },
	{ NPU_DTYPE_FP16, NPY_F16, "float16" },
	{ NPU_DTYPE_INT8, NPY_I8, "int8" },
	{ NPU_DTYPE_UINT8, NPY_U8, "uint8" },
	{ NPU_DTYPE_INT32, NPY_I32, "int32" },
	{ NPU_DTYPE_INT64, NPY_I64, "int64" },
	{ NPU_DTYPE_BOOL, NPY_BOOL, "bool" },
	{ NPU_DTYPE_FP64, NPY_F64, "float64" },
	{ NPU_DTYPE_INT16, NPY_I16, "int16" },
	{ NPU_DTYPE_UINT16, NPY_U16, "uint16" },
	{ NPU_DTYPE_UINT32, NPY_U32, "uint32" },
	{ NPU_DTYPE_UINT64, NPY_U64, "uint64" },
};

#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

static const char *npy_name(enum npy_type t)
{
	size_t i;

	for (i = 0; i < NDTYPES; i++)
		if (dtypes[i].npy == t)
			return dtypes[i].name;
	return "?";
}

static const char *dtype_name(enum npu_dtype d)
{
	size_t i;

	for (i = 0; i < NDTYPES; i++)
		if (dtypes[i].dtype == d)
			return dtypes[i].name;
	return "an unsupported dtype";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

int qr_samples_find(const char *dir, size_t max, struct qr_samples *out, char *err,
		    size_t err_size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0, ndirs = 0, nfiles = 0, i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!d) {
		ret = -errno;
		snprintf(err, err_size, "sample directory %s: %s", dir, strerror(errno));
		return ret;
	}
	out->root = strdup(dir);
	while (out->root && (e = readdir(d))) {
		char path[4096];
		struct stat st;
		bool isdir;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		isdir = S_ISDIR(st.st_mode);
		if (!isdir && !(S_ISREG(st.st_mode) && ends_with(e->d_name, ".npy")))
			continue;
		if (out->count == cap) {
			char **n = realloc(out->names, (cap ? cap * 2 : 16) * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			out->names = n;
			cap = cap ? cap * 2 : 16;
		}
		out->names[out->count] = strdup(e->d_name);
		if (!out->names[out->count]) {
			ret = -ENOMEM;
			break;
		}
		out->count++;
		ndirs += isdir;
		nfiles += !isdir;
	}
	closedir(d);
	if (!out->root)
		ret = -ENOMEM;
	if (!ret && ndirs && nfiles) {
		snprintf(err, err_size,
			 "sample directory %s mixes subdirectories and .npy files: give one subdirectory per sample, or .npy files only",
			 dir);
		ret = -EINVAL;
	} else if (!ret && !out->count) {
		snprintf(err, err_size, "sample directory %s has no samples (no subdirectories, no .npy files)", dir);
		ret = -ENOENT;
	} else if (ret == -ENOMEM) {
		snprintf(err, err_size, "out of memory");
	}
	if (ret) {
		qr_samples_free(out);
		return ret;
	}
	out->flat = nfiles > 0;
	qsort(out->names, out->count, sizeof(*out->names), cmp_str);
	if (max && out->count > max) {
		for (i = max; i < out->count; i++)
			free(out->names[i]);
		out->count = max;
	}
	return 0;
}

void qr_samples_free(struct qr_samples *s)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		free(s->names[i]);
	free(s->names);
	free(s->root);
	memset(s, 0, sizeof(*s));
}

static void file_name(char *buf, size_t size, const char *dir, const char *name)
{
	size_t n = (size_t)snprintf(buf, size, "%s/", dir), i;

	for (i = 0; name[i] && n + 5 < size; i++, n++) {
		char ch = name[i];

		buf[n] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
	}
	snprintf(buf + n, size - n, ".npy");
}

/* The model as bytes with @extra appended to its graph's outputs. */
static int pack_with_outputs(Onnx__ModelProto *mp, const char *const *extra, size_t n,
			     uint8_t **buf, size_t *len)
{
	Onnx__GraphProto *g = mp->graph;
	Onnx__ValueInfoProto **saved = g->output, **outs, *vi;
	size_t nsaved = g->n_output, i;

	outs = malloc((nsaved + n + 1) * sizeof(*outs));
	vi = malloc((n + 1) * sizeof(*vi));
	if (!outs || !vi) {
		free(outs);
		free(vi);
		return -ENOMEM;
	}
	memcpy(outs, saved, nsaved * sizeof(*outs));
	for (i = 0; i < n; i++) {
		onnx__value_info_proto__init(&vi[i]);
		vi[i].name = (char *)extra[i];
		outs[nsaved + i] = &vi[i];
	}
	g->output = outs;
	g->n_output = nsaved + n;
	*len = onnx__model_proto__get_packed_size(mp);
	*buf = malloc(*len ? *len : 1);
	if (*buf)
		onnx__model_proto__pack(mp, *buf);
	g->output = saved;
	g->n_output = nsaved;
	free(outs);
	free(vi);
	return *buf ? 0 : -ENOMEM;
}

int qr_model_open(Onnx__ModelProto *mp, const char *const *extra, size_t num_extra,
		  const struct npu_onnx_shape *shapes, size_t num_shapes, bool device, bool bind,
		  struct qr_model **out, char *err, size_t err_size)
{
	struct npu_onnx_options opts = { .size = sizeof(opts), .shapes = shapes,
					 .num_shapes = num_shapes };
	struct qr_model *m = calloc(1, sizeof(*m));
	uint8_t *buf = NULL;
	size_t len, i;
	int ret;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	ret = pack_with_outputs(mp, extra, num_extra, &buf, &len);
	if (ret) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	ret = npu_onnx_load(buf, len, &opts, &m->om, err, err_size);
	free(buf);
	if (ret)
		goto fail;
	if (device) {
		struct npu_device_list *list = NULL;

		if (npu_device_list(&list) || !npu_device_list_count(list)) {
			npu_device_list_free(list);
			snprintf(err, err_size, "--device: no NPU found");
			ret = -ENODEV;
			goto fail;
		}
		npu_device_list_free(list);
		ret = npu_device_open(0, &m->dev);
		if (!ret)
			ret = npu_context_create(m->dev, &m->ctx);
		if (!ret)
			ret = npu_queue_create(m->ctx, 0, NPU_PRIORITY_NORMAL, &m->q);
		if (ret) {
			snprintf(err, err_size, "NPU: %s", npu_strerror(ret));
			goto fail;
		}
	}
	ret = npu_graph_compile(npu_onnx_graph(m->om), m->ctx, 0, &m->rt);
	if (ret) {
		snprintf(err, err_size, "%s (%s)", npu_graph_error(npu_onnx_graph(m->om)),
			 npu_strerror(ret));
		goto fail;
	}
	m->nout = npu_onnx_num_outputs(m->om);
	m->nin = npu_onnx_num_inputs(m->om);
	m->out = calloc(m->nout + 1, sizeof(*m->out));
	m->in = calloc(m->nin + 1, sizeof(*m->in));
	if (!m->out || !m->in) {
		ret = -ENOMEM;
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	for (i = 0; bind && i < m->nout; i++) {
		struct npu_onnx_io io;

		npu_onnx_output(m->om, i, &io);
		m->out[i] = calloc(1, npu_runtime_value_bytes(m->rt, io.value) + 1);
		if (!m->out[i]) {
			ret = -ENOMEM;
			snprintf(err, err_size, "output '%s': out of memory", io.name);
			goto fail;
		}
		ret = npu_runtime_setup(m->rt, 1, &io.value, &m->out[i]);
		if (ret) {
			snprintf(err, err_size, "output '%s': %s", io.name, npu_strerror(ret));
			goto fail;
		}
	}
	*out = m;
	return 0;
fail:
	qr_model_close(m);
	return ret;
}

void qr_model_close(struct qr_model *m)
{
	size_t i;

	if (!m)
		return;
	npu_runtime_free(m->rt);
	npu_onnx_free(m->om);
	npu_queue_destroy(m->q);
	npu_context_destroy(m->ctx);
	npu_device_close(m->dev);
	for (i = 0; m->out && i < m->nout; i++)
		free(m->out[i]);
	for (i = 0; m->in && i < m->nin; i++)
		free(m->in[i]);
	free(m->out);
	free(m->in);
	free(m);
}


static bool is_initializer(const Onnx__GraphProto *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
			return true;
	return false;
}

/* An input whose every dimension the model fixes needs no shape from a sample. */
static bool fully_static(const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto *t = vi->type;
	const Onnx__TensorShapeProto *sh;
	size_t i;

	if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type ||
	    !(sh = t->tensor_type->shape))
		return false;
	for (i = 0; i < sh->n_dim; i++)
		if (sh->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			return false;
	return true;
}

int qr_samples_shapes(const Onnx__ModelProto *mp, const struct qr_samples *s,
		      struct npu_onnx_shape **shapes, size_t *count, char *err, size_t err_size)
{
	const Onnx__GraphProto *g = mp->graph;
	size_t i, n = 0;
	int j;

	*count = 0;
	*shapes = calloc(g->n_input + 1, sizeof(**shapes));
	if (!*shapes) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < g->n_input; i++) {
		const char *name = g->input[i]->name;
		char path[4096], dir[4096];
		struct npy_array a;
		int ret;

		if (!name || is_initializer(g, name) || fully_static(g->input[i]))
			continue;
		if (s->flat) {
			snprintf(path, sizeof(path), "%s/%s", s->root, s->names[0]);
		} else {
			snprintf(dir, sizeof(dir), "%s/%s", s->root, s->names[0]);
			file_name(path, sizeof(path), dir, name);
		}
		/* a missing or bad file is reported, with the input, by the run */
		if (npy_load(path, &a))
			continue;
		if (a.rank > NPU_TENSOR_MAX_RANK) {
			snprintf(err, err_size, "%s: rank %d is over %d", path, a.rank,
				 NPU_TENSOR_MAX_RANK);
			npy_free(&a);
			ret = -EINVAL;
			free(*shapes);
			*shapes = NULL;
			return ret;
		}
		(*shapes)[n].name = name;
		(*shapes)[n].rank = (uint32_t)a.rank;
		for (j = 0; j < a.rank; j++)
			(*shapes)[n].dims[j] = a.dims[j];
		n++;
		npy_free(&a);
	}
	*count = n;
	return 0;
}

static void fmt_dims(char *buf, size_t size, size_t rank, const int64_t *d64,
		     const uint32_t *d32)
{
	size_t i, n = (size_t)snprintf(buf, size, "[");

	for (i = 0; i < rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "",
				      d64 ? (long long)d64[i] : (long long)d32[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

int qr_model_run(struct qr_model *m, const struct qr_samples *s, size_t k, char *err,
		 size_t err_size)
{
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	size_t i, j;
	int ret;

	if (s->flat && m->nin != 1) {
		snprintf(err, err_size,
			 "sample directory %s holds .npy files, but the model has %zu inputs: give one subdirectory per sample with a file per input",
			 s->root, m->nin);
		return -EINVAL;
	}
	for (i = 0; i < m->nin; i++) {
		struct npu_onnx_io io;
		struct npy_array a;
		char path[4096], dir[4096], want[128], got[128];
		bool same;

		npu_onnx_input(m->om, i, &io);
		if (s->flat) {
			snprintf(path, sizeof(path), "%s/%s", s->root, s->names[k]);
		} else {
			snprintf(dir, sizeof(dir), "%s/%s", s->root, s->names[k]);
			file_name(path, sizeof(path), dir, io.name);
		}
		ret = npy_load(path, &a);
		if (ret) {
			snprintf(err, err_size, "%s (input '%s'): %s", path, io.name,
				 ret == -EINVAL ? "not a valid .npy file" :
				 ret == -ENOTSUP ? "a .npy layout or dtype npu-quantize does not read" :
				 strerror(-ret));
			return ret;
		}
		same = a.rank == (int)io.rank;
		for (j = 0; same && j < io.rank; j++)
			same = a.dims[j] == (int64_t)io.dims[j];
		fmt_dims(want, sizeof(want), io.rank, NULL, io.dims);
		fmt_dims(got, sizeof(got), (size_t)a.rank, a.dims, NULL);
		if (npy_name(a.type) != dtype_name(io.dtype) || !same) {
			snprintf(err, err_size, "%s: %s %s does not fit input '%s', %s %s", path,
				 npy_name(a.type), got, io.name, dtype_name(io.dtype), want);
			npy_free(&a);
			return -EINVAL;
		}
		free(m->in[i]);
		m->in[i] = a.data;
		ret = npu_runtime_setup(m->rt, 1, &io.value, &m->in[i]);
		if (ret) {
			snprintf(err, err_size, "input '%s': %s", io.name, npu_strerror(ret));
			return ret;
		}
	}
	lim.deadline_ns = npu_deadline_ns(RUN_TIMEOUT_NS);
	ret = npu_runtime_set_cpu_limits(m->rt, &lim);
	if (!ret)
		ret = npu_runtime_run(m->rt, m->q, lim.deadline_ns);
	if (ret) {
		snprintf(err, err_size, "run on sample %s: %s", s->names[k],
			 npu_runtime_error(m->rt)[0] ? npu_runtime_error(m->rt) : npu_strerror(ret));
		if (ret == -ETIMEDOUT) {
			npu_runtime_cancel(m->rt);
			npu_runtime_wait(m->rt, NPU_TIMEOUT_INFINITE);
		}
	}
	return ret;
}

size_t qr_model_num_outputs(const struct qr_model *m)
{
	return m->nout;
}

const char *qr_output_name(const struct qr_model *m, size_t i)
{
	struct npu_onnx_io io;

	return npu_onnx_output(m->om, i, &io) ? "" : io.name;
}

enum npu_dtype qr_output_dtype(const struct qr_model *m, size_t i)
{
	struct npu_onnx_io io;

	return npu_onnx_output(m->om, i, &io) ? 0 : io.dtype;
}

size_t qr_output_count(const struct qr_model *m, size_t i)
{
	struct npu_onnx_io io;
	size_t sz;

	if (npu_onnx_output(m->om, i, &io))
		return 0;
	sz = npu_dtype_size(io.dtype);
	return sz ? (size_t)(npu_runtime_value_bytes(m->rt, io.value) / sz) : 0;
}

int qr_output_shape(const struct qr_model *m, size_t i, int64_t *dims)
{
	struct npu_onnx_io io;
	uint32_t k;

	if (npu_onnx_output(m->om, i, &io))
		return -1;
	for (k = 0; k < io.rank; k++)
		dims[k] = io.dims[k];
	return (int)io.rank;
}

uint64_t qr_output_bytes(const struct qr_model *m, size_t i)
{
	struct npu_onnx_io io;

	return npu_onnx_output(m->om, i, &io) ? 0 : npu_runtime_value_bytes(m->rt, io.value);
}

const void *qr_output_data(const struct qr_model *m, size_t i)
{
	return i < m->nout ? m->out[i] : NULL;
}

long qr_output_find(const struct qr_model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nout; i++)
		if (!strcmp(qr_output_name(m, i), name))
			return (long)i;
	return -1;
}
