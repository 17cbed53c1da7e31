// SPDX-License-Identifier: MIT
/*
 * npu.Model: an ONNX model imported by libnpu-onnx, compiled by the graph
 * compiler for a device or the CPU, run on numpy arrays.  Inputs are
 * bound where they lie when they are C-contiguous and aligned, and
 * outputs are written straight into the arrays run() returns: no copies.
 *
 * Dynamic shapes: a model with dynamic input dimensions keeps its parsed
 * file (npu_onnx_source) and a few compiled runtimes, one per set of
 * input shapes, least recently used out first.  A run whose shapes have
 * a runtime only binds its arrays; other shapes are imported and
 * compiled first (npu_onnx_specialize(), npu_graph_compile()).
 */
#include "npu_py.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct model_io {
	char *name;
	uint32_t value;
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	uint64_t bytes;
	/* bit k: dimension k is dynamic in the file, named param[k] ("" unnamed) */
	uint32_t dynamic;
	char *param[NPU_TENSOR_MAX_RANK];
};

/* One compiled set of input shapes. */
struct shape_entry {
	struct npu_runtime *rt;
	struct model_io *ins, *outs;	/* this runtime's values and shapes */
	uint64_t last_used;		/* NpuModel.tick of its last run */
};

#define DEFAULT_MAX_SHAPES	8

typedef struct {
	PyObject_HEAD
	NpuContext *context;		/* NULL: compiled for the CPU */
	struct npu_runtime *rt;		/* the last run's (cache entry's) runtime */
	struct model_io *ins, *outs;	/* as loaded: what inputs and outputs say */
	size_t nin, nout;
	int64_t opset;
	/* the parsed file; NULL when no input dimension is dynamic */
	struct npu_onnx_source *src;
	struct shape_entry *cache;	/* max_shapes slots, num_shapes used */
	size_t num_shapes, max_shapes;
	struct shape_entry *cur;	/* the entry of self->rt */
	uint64_t tick, hits, misses, evictions, compiles, imports;
	/*
	 * A runtime takes one run at a time: held from binding to the end
	 * of the run, across threads for run_async (started by _start,
	 * released by _finish).
	 */
	PyThread_type_lock busy;
	bool in_flight;
	PyObject *held_inputs;		/* arrays a run in flight reads */
	PyObject *held_outputs;		/* dict the run in flight writes */
} NpuModel;

static PyTypeObject IOInfo_Type, NodeProfile_Type;

static PyStructSequence_Field IOInfo_fields[] = {
	{ "name", "the ONNX graph input's or output's name" },
	{ "dtype", "numpy.dtype (None for bfloat16, which numpy lacks)" },
	{ "shape", "tuple of ints, dynamic dimensions bound at load" },
	{ "dynamic", "tuple: per dimension, None when the model fixes it, else its "
		     "dim_param ('' when unnamed); run() takes other sizes there" },
	{ NULL, NULL },
};

/* dynamic is an attribute only: an IOInfo still compares as (name, dtype, shape) */
static PyStructSequence_Desc IOInfo_desc = {
	"npu.IOInfo", "An input or output of a Model: name, dtype, shape (and .dynamic).",
	IOInfo_fields, 3,
};

static PyStructSequence_Field NodeProfile_fields[] = {
	{ "index", "node index in the imported graph" },
	{ "name", "the node's name, or ''" },
	{ "op", "'CONV2D', 'RESHAPE', ..." },
	{ "where", "'device', 'cpu', 'folded', 'fused' or 'elided'" },
	{ "segment", "segment index (device and cpu nodes), else None" },
	{ "fused_into", "index of the node it was merged into (fused), else None" },
	{ "cpu_reason", "why not the device (cpu nodes), else None" },
	{ "macs", "multiply-accumulates (GEMM, CONV2D)" },
	{ "device_cycles", "modelled cycles in the last profiled run" },
	{ "time_ns", "device job or CPU time in the last profiled run" },
	{ NULL, NULL },
};

static PyStructSequence_Desc NodeProfile_desc = {
	"npu.NodeProfile", "One node of Model.profile()'s table (npu_node_profile).",
	NodeProfile_fields, 10,
};

int npu_py_model_types(PyObject *m)
{
	if (PyStructSequence_InitType2(&IOInfo_Type, &IOInfo_desc) < 0 ||
	    PyStructSequence_InitType2(&NodeProfile_Type, &NodeProfile_desc) < 0)
		return -1;
	if (PyModule_AddObjectRef(m, "IOInfo", (PyObject *)&IOInfo_Type) < 0 ||
	    PyModule_AddObjectRef(m, "NodeProfile", (PyObject *)&NodeProfile_Type) < 0)
		return -1;
	return 0;
}

static void free_io(struct model_io *io, size_t n)
{
	for (size_t i = 0; io && i < n; i++) {
		PyMem_Free(io[i].name);
		for (size_t k = 0; k < NPU_TENSOR_MAX_RANK; k++)
			PyMem_Free(io[i].param[k]);
	}
	PyMem_Free(io);
}

/* Which of @io's dimensions the file leaves dynamic (@get: npu_onnx_input_dims, ...). */
static int copy_dynamic(struct npu_onnx_model *m, size_t i, struct model_io *io,
			int (*get)(const struct npu_onnx_model *, size_t,
				   struct npu_onnx_dims_info *))
{
	struct npu_onnx_dims_info di = NPU_ONNX_DIMS_INFO_INIT;
	int r = get(m, i, &di);

	if (r) {
		npu_py_raise(r, "npu.Model", "reading its dynamic dimensions");
		return -1;
	}
	io->dynamic = di.dynamic;
	for (uint32_t k = 0; k < io->rank; k++) {
		if (!(di.dynamic & (1u << k)))
			continue;
		io->param[k] = PyMem_Malloc(strlen(di.param[k]) + 1);
		if (!io->param[k]) {
			PyErr_NoMemory();
			return -1;
		}
		strcpy(io->param[k], di.param[k]);
	}
	return 0;
}

static struct model_io *copy_io(struct npu_onnx_model *m, struct npu_runtime *rt, size_t n,
				int (*get)(const struct npu_onnx_model *, size_t,
					   struct npu_onnx_io *),
				int (*get_dims)(const struct npu_onnx_model *, size_t,
						struct npu_onnx_dims_info *))
{
	struct model_io *out = PyMem_Calloc(n ? n : 1, sizeof(*out));

	if (!out)
		return (struct model_io *)PyErr_NoMemory();
	for (size_t i = 0; i < n; i++) {
		struct npu_onnx_io io;
		int r = get(m, i, &io);

		if (r) {
			free_io(out, n);
			return (struct model_io *)npu_py_raise(r, "npu.Model", "reading its inputs and outputs");
		}
		out[i].name = PyMem_Malloc(strlen(io.name) + 1);
		if (!out[i].name) {
			free_io(out, n);
			return (struct model_io *)PyErr_NoMemory();
		}
		strcpy(out[i].name, io.name);
		out[i].value = io.value;
		out[i].dtype = io.dtype;
		out[i].rank = io.rank;
		memcpy(out[i].dims, io.dims, sizeof(io.dims));
		out[i].bytes = npu_runtime_value_bytes(rt, io.value);
		if (get_dims && copy_dynamic(m, i, &out[i], get_dims) < 0) {
			free_io(out, n);
			return NULL;
		}
	}
	return out;
}

/* What load options point to, alive until the import returns. */
struct load_args {
	struct npu_onnx_shape shapes[64];
	struct npu_onnx_tensor consts[64];
	PyObject *keep;			/* list of objects the above point into */
};

static int read_shapes(PyObject *dict, struct load_args *a, struct npu_onnx_options *o)
{
	PyObject *key, *val;
	Py_ssize_t pos = 0;

	if (dict == Py_None)
		return 0;
	if (!PyDict_Check(dict)) {
		PyErr_SetString(PyExc_TypeError, "shapes must be a dict {input name: shape}");
		return -1;
	}
	while (PyDict_Next(dict, &pos, &key, &val)) {
		struct npu_onnx_shape *s = &a->shapes[o->num_shapes];
		int64_t dims[NPU_TENSOR_MAX_RANK];
		const char *name;

		if (o->num_shapes == sizeof(a->shapes) / sizeof(a->shapes[0])) {
			PyErr_SetString(PyExc_ValueError, "shapes: at most 64 inputs");
			return -1;
		}
		name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		if (!name) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "shapes: keys are input names (str)");
			return -1;
		}
		if (npu_py_read_shape(val, name, &s->rank, dims, 0) < 0)
			return -1;
		s->name = name;
		memcpy(s->dims, dims, sizeof(dims));
		o->num_shapes++;
	}
	o->shapes = a->shapes;
	return 0;
}

static int read_constants(PyObject *dict, struct load_args *a, struct npu_onnx_options *o)
{
	PyObject *key, *val;
	Py_ssize_t pos = 0;

	if (dict == Py_None)
		return 0;
	if (!PyDict_Check(dict)) {
		PyErr_SetString(PyExc_TypeError, "constants must be a dict {input name: array}");
		return -1;
	}
	while (PyDict_Next(dict, &pos, &key, &val)) {
		struct npu_onnx_tensor *t = &a->consts[o->num_constants];
		PyArrayObject *arr;
		const char *name;

		if (o->num_constants == sizeof(a->consts) / sizeof(a->consts[0])) {
			PyErr_SetString(PyExc_ValueError, "constants: at most 64 inputs");
			return -1;
		}
		name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		if (!name) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "constants: keys are input names (str)");
			return -1;
		}
		if (strlen(name) >= sizeof(t->name)) {
			PyErr_Format(PyExc_ValueError, "constants: name '%.40s...' is too long", name);
			return -1;
		}
		arr = (PyArrayObject *)PyArray_FROMANY(val, NPY_NOTYPE, 0, NPU_TENSOR_MAX_RANK,
						       NPY_ARRAY_IN_ARRAY | NPY_ARRAY_NOTSWAPPED);
		if (!arr)
			return -1;
		if (PyList_Append(a->keep, (PyObject *)arr) < 0) {
			Py_DECREF(arr);
			return -1;
		}
		Py_DECREF(arr);
		t->dtype = (int)npu_py_dtype_from_numpy(PyArray_TYPE(arr));
		if (!t->dtype) {
			PyErr_Format(PyExc_TypeError, "constants: '%s' has dtype %R, which libnpu lacks",
				     name, (PyObject *)PyArray_DESCR(arr));
			return -1;
		}
		strcpy(t->name, name);
		t->rank = (uint32_t)PyArray_NDIM(arr);
		for (uint32_t i = 0; i < t->rank; i++) {
			npy_intp d = PyArray_DIM(arr, (int)i);

			if (d < 1 || d > UINT32_MAX) {
				PyErr_Format(PyExc_ValueError, "constants: '%s' has a dimension of %zd",
					     name, (Py_ssize_t)d);
				return -1;
			}
			t->dims[i] = (uint32_t)d;
		}
		t->data = PyArray_DATA(arr);
		t->bytes = (uint64_t)PyArray_NBYTES(arr);
		o->num_constants++;
	}
	o->constants = a->consts;
	return 0;
}

/* Parse a path or bytes; NULL with npu.Error set on failure. */
static struct npu_onnx_source *load(PyObject *source, const struct npu_onnx_options *opts)
{
	struct npu_onnx_source *src = NULL;
	char err[512] = "";
	int r;

	if (PyUnicode_Check(source) || PyObject_HasAttrString(source, "__fspath__")) {
		PyObject *path = NULL;
		const char *p;

		if (!PyUnicode_FSConverter(source, &path))
			return NULL;
		p = PyBytes_AS_STRING(path);
		Py_BEGIN_ALLOW_THREADS
		r = npu_onnx_source_load_file(p, opts, &src, err, sizeof(err));
		Py_END_ALLOW_THREADS
		if (r) {
			npu_py_raise(r, p, err);
			src = NULL;
		}
		Py_DECREF(path);
		return src;
	}
	if (PyObject_CheckBuffer(source)) {
		Py_buffer view;

		if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) < 0)
			return NULL;
		Py_BEGIN_ALLOW_THREADS
		r = npu_onnx_source_load(view.buf, (size_t)view.len, opts, &src, err, sizeof(err));
		Py_END_ALLOW_THREADS
		PyBuffer_Release(&view);
		if (r) {
			npu_py_raise(r, "npu.Model(bytes)", err);
			src = NULL;
		}
		return src;
	}
	PyErr_Format(PyExc_TypeError,
		     "npu.Model: the model is a path (str, os.PathLike) or the ONNX file's bytes, not %.80s",
		     Py_TYPE(source)->tp_name);
	return NULL;
}

static void entry_free(struct shape_entry *e, size_t nin, size_t nout)
{
	npu_runtime_free(e->rt);
	free_io(e->ins, nin);
	free_io(e->outs, nout);
	memset(e, 0, sizeof(*e));
}

/*
 * Import self->src for input shapes @shapes (all of the load's when
 * @num_shapes is 0) and compile it into a new cache entry, evicting the
 * least recently used one when the cache is full.  With the GIL (released
 * while importing and compiling) and, after Model_new, the busy lock.
 * @what names the caller for messages.  The entry, or NULL with an
 * exception set.
 */
static struct shape_entry *specialize(NpuModel *self, const struct npu_onnx_shape *shapes,
				      size_t num_shapes, const char *what)
{
	struct npu_context *ctx = self->context ? self->context->ctx : NULL;
	struct npu_onnx_model *m = NULL;
	struct npu_runtime *rt = NULL;
	struct model_io *ins, *outs;
	struct shape_entry *e;
	char err[512] = "";
	int r, stage = 0;

	Py_BEGIN_ALLOW_THREADS
	r = npu_onnx_specialize(self->src, shapes, num_shapes, &m, err, sizeof(err));
	if (!r) {
		stage = 1;
		r = npu_graph_compile(npu_onnx_graph(m), ctx, 0, &rt);
		if (r)
			snprintf(err, sizeof(err), "%s", npu_graph_error(npu_onnx_graph(m)));
	}
	Py_END_ALLOW_THREADS
	self->imports = npu_onnx_source_imports(self->src);
	if (r) {
		npu_onnx_free(m);
		npu_py_raise(r, stage ? "npu.Model: compiling the graph" : what, err);
		return NULL;
	}
	self->compiles++;
	ins = copy_io(m, rt, self->nin, npu_onnx_input, NULL);
	outs = ins ? copy_io(m, rt, self->nout, npu_onnx_output, NULL) : NULL;
	npu_onnx_free(m);
	if (!outs) {
		free_io(ins, self->nin);
		npu_runtime_free(rt);
		return NULL;
	}
	if (self->num_shapes == self->max_shapes) {
		size_t old = 0;

		for (size_t i = 1; i < self->num_shapes; i++)
			if (self->cache[i].last_used < self->cache[old].last_used)
				old = i;
		entry_free(&self->cache[old], self->nin, self->nout);
		self->cache[old] = self->cache[--self->num_shapes];
		self->evictions++;
	}
	/* the caller makes the new entry current */
	self->cur = NULL;
	self->rt = NULL;
	e = &self->cache[self->num_shapes];
	e->rt = rt;
	e->ins = ins;
	e->outs = outs;
	e->last_used = 0;
	self->num_shapes++;
	return e;
}

/* The context a model runs in: NULL for the CPU (no error set then). */
static int choose_context(PyObject *device, int cpu, NpuContext **out)
{
	NpuDevice *d = NULL;

	*out = NULL;
	if (cpu) {
		if (device != Py_None) {
			PyErr_SetString(PyExc_ValueError,
					"npu.Model: cpu=True runs on the CPU, so it takes no device");
			return -1;
		}
		return 0;
	}
	if (device == Py_None) {
		struct npu_device_list *list = NULL;
		size_t n = 0;

		/* No device: the CPU path, as npu-run falls back to it. */
		if (!npu_device_list(&list))
			n = npu_device_list_count(list);
		npu_device_list_free(list);
		if (!n)
			return 0;
		device = PyLong_FromLong(0);
		if (!device)
			return -1;
		d = npu_py_device_from(device);
		Py_DECREF(device);
	} else {
		d = npu_py_device_from(device);
	}
	if (!d)
		return -1;
	*out = npu_py_context_new(d);
	Py_DECREF(d);
	return *out ? 0 : -1;
}

static PyObject *Model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "model", "device", "cpu", "shapes", "constants", "max_shapes",
				  NULL };
	PyObject *source, *device = Py_None, *shapes = Py_None, *constants = Py_None;
	struct npu_onnx_options opts = { .size = sizeof(opts) };
	Py_ssize_t max_shapes = DEFAULT_MAX_SHAPES;
	struct load_args *la;
	NpuModel *self;
	int cpu = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$pOOn:Model", kwlist, &source, &device,
					 &cpu, &shapes, &constants, &max_shapes))
		return NULL;
	if (max_shapes < 1 || max_shapes > 1024) {
		PyErr_Format(PyExc_ValueError, "npu.Model: max_shapes is %zd, not 1 to 1024",
			     max_shapes);
		return NULL;
	}
	self = (NpuModel *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	self->busy = PyThread_allocate_lock();
	if (!self->busy) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	if (choose_context(device, cpu, &self->context) < 0) {
		Py_DECREF(self);
		return NULL;
	}
	la = PyMem_Calloc(1, sizeof(*la));
	if (!la) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	la->keep = PyList_New(0);
	if (!la->keep || read_shapes(shapes, la, &opts) < 0 ||
	    read_constants(constants, la, &opts) < 0) {
		Py_XDECREF(la->keep);
		PyMem_Free(la);
		Py_DECREF(self);
		return NULL;
	}
	self->max_shapes = (size_t)max_shapes;
	self->cache = PyMem_Calloc(self->max_shapes, sizeof(*self->cache));
	self->src = self->cache ? load(source, &opts) : NULL;
	if (!self->cache)
		PyErr_NoMemory();
	Py_DECREF(la->keep);
	PyMem_Free(la);
	if (!self->src) {
		Py_DECREF(self);
		return NULL;
	}
	{
		struct npu_onnx_model *m = NULL;
		char err[512] = "";

		/* the inputs' and outputs' count and what the file says of them */
		Py_BEGIN_ALLOW_THREADS
		r = npu_onnx_specialize(self->src, NULL, 0, &m, err, sizeof(err));
		Py_END_ALLOW_THREADS
		if (r) {
			npu_py_raise(r, "npu.Model", err);
			Py_DECREF(self);
			return NULL;
		}
		self->nin = npu_onnx_num_inputs(m);
		self->nout = npu_onnx_num_outputs(m);
		self->opset = npu_onnx_opset(m);
		r = 0;
		Py_BEGIN_ALLOW_THREADS
		r = npu_graph_compile(npu_onnx_graph(m), self->context ? self->context->ctx : NULL, 0,
				      &self->rt);
		Py_END_ALLOW_THREADS
		if (r) {
			npu_py_raise(r, "npu.Model: compiling the graph",
				     npu_graph_error(npu_onnx_graph(m)));
			npu_onnx_free(m);
			Py_DECREF(self);
			return NULL;
		}
		self->compiles = 1;
		self->ins = copy_io(m, self->rt, self->nin, npu_onnx_input, npu_onnx_input_dims);
		self->outs = self->ins ? copy_io(m, self->rt, self->nout, npu_onnx_output,
						 npu_onnx_output_dims) : NULL;
		if (self->outs) {
			/* the load's shapes are the first entry */
			self->cur = &self->cache[0];
			self->cur->rt = self->rt;
			self->cur->ins = copy_io(m, self->rt, self->nin, npu_onnx_input, NULL);
			self->cur->outs = self->cur->ins ?
				copy_io(m, self->rt, self->nout, npu_onnx_output, NULL) : NULL;
			if (!self->cur->outs) {
				free_io(self->cur->ins, self->nin);
				self->cur->ins = NULL;
				self->cur->rt = NULL;	/* still self->rt's */
			} else {
				self->num_shapes = 1;
			}
		}
		npu_onnx_free(m);
		if (!self->num_shapes) {
			Py_DECREF(self);
			return NULL;
		}
	}
	self->imports = npu_onnx_source_imports(self->src);
	/* a model of fixed shapes never imports again: its parsed file is only memory */
	{
		bool dynamic = false;

		for (size_t i = 0; i < self->nin; i++)
			dynamic |= self->ins[i].dynamic != 0;
		if (!dynamic) {
			npu_onnx_source_free(self->src);
			self->src = NULL;
		}
	}
	return (PyObject *)self;
}

static void Model_dealloc(NpuModel *self)
{
	/*
	 * run_async's waiting thread holds the model, so only a _start()
	 * nobody finished can leave a run in flight: it writes arrays about
	 * to be freed, so wait for it.
	 */
	if (self->in_flight) {
		npu_runtime_wait(self->rt, NPU_TIMEOUT_INFINITE);
		PyThread_release_lock(self->busy);
	}
	/* a runtime Model_new compiled but could not make an entry of */
	if (self->rt && !(self->cur && self->cur->rt == self->rt))
		npu_runtime_free(self->rt);
	for (size_t i = 0; self->cache && i < self->num_shapes; i++)
		entry_free(&self->cache[i], self->nin, self->nout);
	PyMem_Free(self->cache);
	npu_onnx_source_free(self->src);
	free_io(self->ins, self->nin);
	free_io(self->outs, self->nout);
	Py_XDECREF(self->held_inputs);
	Py_XDECREF(self->held_outputs);
	Py_XDECREF(self->context);
	if (self->busy)
		PyThread_free_lock(self->busy);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *shape_str(uint32_t rank, const npy_intp *dims)
{
	PyObject *t = PyTuple_New(rank), *s;

	for (uint32_t i = 0; t && i < rank; i++) {
		PyObject *v = PyLong_FromSsize_t(dims[i]);

		if (!v) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, v);
	}
	if (!t)
		return NULL;
	s = PyObject_Repr(t);
	Py_DECREF(t);
	return s;
}

/* io's shape as numpy dims. */
static void io_dims(const struct model_io *io, npy_intp *dims)
{
	for (uint32_t i = 0; i < io->rank; i++)
		dims[i] = (npy_intp)io->dims[i];
}

/* The shape the model takes: ints, and the names of dynamic dimensions. */
static PyObject *model_shape_str(const struct model_io *io)
{
	PyObject *t = PyTuple_New(io->rank), *s;

	for (uint32_t i = 0; t && i < io->rank; i++) {
		PyObject *v = io->dynamic & (1u << i) ?
			PyUnicode_FromString(*io->param[i] ? io->param[i] : "?") :
			PyLong_FromUnsignedLong(io->dims[i]);

		if (!v) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, v);
	}
	if (!t)
		return NULL;
	s = PyObject_Repr(t);
	Py_DECREF(t);
	return s;
}

/*
 * Does @arr's shape fit input @io?  Its fixed dimensions must be the
 * model's; its dynamic ones, when the model keeps its source, any size
 * libnpu takes.  -1 with ValueError naming the input and dimension.
 */
static int check_shape(NpuModel *self, const struct model_io *io, PyArrayObject *arr)
{
	uint32_t rank = (uint32_t)PyArray_NDIM(arr), bad = UINT32_MAX;
	bool dynamic = self->src && io->dynamic;
	PyObject *got, *exp;

	if (rank == io->rank) {
		for (uint32_t d = 0; d < rank && bad == UINT32_MAX; d++) {
			npy_intp v = PyArray_DIM(arr, (int)d);

			if (dynamic && (io->dynamic & (1u << d)) ? v < 1 || v > UINT32_MAX :
			    v != (npy_intp)io->dims[d])
				bad = d;
		}
		if (bad == UINT32_MAX)
			return 0;
	}
	got = shape_str(rank, PyArray_DIMS(arr));
	if (!dynamic) {
		npy_intp dims[NPU_TENSOR_MAX_RANK];

		io_dims(io, dims);
		exp = shape_str(io->rank, dims);
	} else {
		exp = model_shape_str(io);
	}
	if (got && exp) {
		if (!dynamic || bad == UINT32_MAX)
			PyErr_Format(PyExc_ValueError, "input '%s': shape %U, but the model takes %U",
				     io->name, got, exp);
		else if (io->dynamic & (1u << bad))
			PyErr_Format(PyExc_ValueError,
				     "input '%s': shape %U, but the model takes %U: dimension %u is %zd, which libnpu cannot take",
				     io->name, got, exp, bad, (Py_ssize_t)PyArray_DIM(arr, (int)bad));
		else
			PyErr_Format(PyExc_ValueError,
				     "input '%s': shape %U, but the model takes %U: dimension %u must be %u",
				     io->name, got, exp, bad, io->dims[bad]);
	}
	Py_XDECREF(got);
	Py_XDECREF(exp);
	return -1;
}

/* The cache entry compiled for the shapes of @held (the inputs' arrays), or NULL. */
static struct shape_entry *find_entry(NpuModel *self, PyObject *held)
{
	for (size_t k = 0; k < self->num_shapes; k++) {
		struct shape_entry *e = &self->cache[k];
		bool same = true;

		for (size_t i = 0; i < self->nin && same; i++) {
			PyArrayObject *a = (PyArrayObject *)PyList_GET_ITEM(held, (Py_ssize_t)i);

			same = (uint32_t)PyArray_NDIM(a) == e->ins[i].rank;
			for (uint32_t d = 0; same && d < e->ins[i].rank; d++)
				same = PyArray_DIM(a, (int)d) == (npy_intp)e->ins[i].dims[d];
		}
		if (same)
			return e;
	}
	return NULL;
}

/*
 * Check @inputs against the model, take the runtime compiled for their
 * shapes (importing and compiling it on their first sight), and bind them
 * and fresh output arrays to it.  On success the arrays are in
 * held_inputs and held_outputs, and self->rt is that runtime.  Called
 * with the busy lock held.
 */
static int bind(NpuModel *self, PyObject *inputs)
{
	PyObject *held = NULL, *outs = NULL, *key, *val;
	struct shape_entry *e;
	size_t n = self->nin + self->nout;
	uint32_t *ids = NULL;
	void **data = NULL;
	Py_ssize_t pos = 0;
	int r;

	if (!PyDict_Check(inputs)) {
		PyErr_Format(PyExc_TypeError, "inputs must be a dict {name: array}, not %.80s",
			     Py_TYPE(inputs)->tp_name);
		return -1;
	}
	/* A name the model does not have is a mistake, never ignored. */
	while (PyDict_Next(inputs, &pos, &key, &val)) {
		const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		bool found = false;

		if (!name) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_TypeError, "input names are str, not %.80s",
					     Py_TYPE(key)->tp_name);
			return -1;
		}
		for (size_t i = 0; i < self->nin && !found; i++)
			found = !strcmp(self->ins[i].name, name);
		if (!found) {
			PyObject *names = PyList_New(0);

			for (size_t i = 0; names && i < self->nin; i++) {
				PyObject *s = PyUnicode_FromString(self->ins[i].name);

				if (!s || PyList_Append(names, s) < 0)
					Py_CLEAR(names);
				Py_XDECREF(s);
			}
			if (names)
				PyErr_Format(PyExc_ValueError,
					     "input '%s': the model has no input of that name (its inputs: %R)",
					     name, names);
			Py_XDECREF(names);
			return -1;
		}
	}
	ids = PyMem_Calloc(n ? n : 1, sizeof(*ids));
	data = PyMem_Calloc(n ? n : 1, sizeof(*data));
	held = PyList_New(0);
	outs = PyDict_New();
	if (!ids || !data || !held || !outs) {
		if (!PyErr_Occurred())
			PyErr_NoMemory();
		goto fail;
	}
	for (size_t i = 0; i < self->nin; i++) {
		const struct model_io *io = &self->ins[i];
		int want = npu_py_dtype_to_numpy(io->dtype);
		PyArrayObject *arr, *dense;

		val = PyDict_GetItemString(inputs, io->name);
		if (!val) {
			PyObject *sh = model_shape_str(io);

			if (sh)
				PyErr_Format(PyExc_ValueError, "input '%s' (%s %U) is missing", io->name,
					     npu_py_dtype_name(io->dtype), sh);
			Py_XDECREF(sh);
			goto fail;
		}
		arr = (PyArrayObject *)PyArray_FROMANY(val, NPY_NOTYPE, 0, 0, 0);
		if (!arr)
			goto fail;
		if (want < 0 || npu_py_dtype_from_numpy(PyArray_TYPE(arr)) != io->dtype ||
		    !PyArray_ISNOTSWAPPED(arr)) {
			PyErr_Format(PyExc_TypeError, "input '%s': dtype %R, but the model takes %s%s",
				     io->name, (PyObject *)PyArray_DESCR(arr),
				     npu_py_dtype_name(io->dtype),
				     want < 0 ? " (numpy has no such dtype)" : "");
			Py_DECREF(arr);
			goto fail;
		}
		if (check_shape(self, io, arr) < 0) {
			Py_DECREF(arr);
			goto fail;
		}
		/* A copy only when libnpu cannot read the array where it is. */
		dense = (PyArrayObject *)PyArray_FromArray(arr, NULL, NPY_ARRAY_IN_ARRAY);
		Py_DECREF(arr);
		if (!dense)
			goto fail;
		r = PyList_Append(held, (PyObject *)dense);
		Py_DECREF(dense);
		if (r < 0)
			goto fail;
	}
	e = find_entry(self, held);
	if (!e) {
		struct npu_onnx_shape *shapes = PyMem_Calloc(self->nin ? self->nin : 1,
							     sizeof(*shapes));

		if (!shapes) {
			PyErr_NoMemory();
			goto fail;
		}
		for (size_t i = 0; i < self->nin; i++) {
			PyArrayObject *a = (PyArrayObject *)PyList_GET_ITEM(held, (Py_ssize_t)i);

			shapes[i].name = self->ins[i].name;
			shapes[i].rank = (uint32_t)PyArray_NDIM(a);
			for (uint32_t d = 0; d < shapes[i].rank; d++)
				shapes[i].dims[d] = PyArray_DIM(a, (int)d);
		}
		self->misses++;
		e = specialize(self, shapes, self->nin, "Model.run: importing the model for these shapes");
		PyMem_Free(shapes);
		if (!e)
			goto fail;
	} else {
		self->hits++;
	}
	e->last_used = ++self->tick;
	self->cur = e;
	self->rt = e->rt;
	for (size_t i = 0; i < self->nin; i++) {
		PyArrayObject *dense = (PyArrayObject *)PyList_GET_ITEM(held, (Py_ssize_t)i);
		const struct model_io *io = &e->ins[i];

		if ((uint64_t)PyArray_NBYTES(dense) != io->bytes) {
			PyErr_Format(PyExc_ValueError, "input '%s': %zd bytes, the runtime wants %llu",
				     io->name, (Py_ssize_t)PyArray_NBYTES(dense),
				     (unsigned long long)io->bytes);
			goto fail;
		}
		ids[i] = io->value;
		data[i] = PyArray_DATA(dense);
	}
	for (size_t i = 0; i < self->nout; i++) {
		const struct model_io *io = &e->outs[i];
		int t = npu_py_dtype_to_numpy(io->dtype);
		npy_intp dims[NPU_TENSOR_MAX_RANK];
		PyObject *arr;

		if (t < 0) {
			PyErr_Format(PyExc_TypeError, "output '%s' is %s, which numpy has no dtype for",
				     io->name, npu_py_dtype_name(io->dtype));
			goto fail;
		}
		io_dims(io, dims);
		arr = PyArray_SimpleNew((int)io->rank, dims, t);
		if (!arr)
			goto fail;
		r = PyDict_SetItemString(outs, io->name, arr);
		Py_DECREF(arr);
		if (r < 0)
			goto fail;
		ids[self->nin + i] = io->value;
		data[self->nin + i] = PyArray_DATA((PyArrayObject *)arr);
	}
	r = n ? npu_runtime_setup(self->rt, n, ids, data) : 0;
	if (r) {
		npu_py_raise(r, "Model.run", "binding the inputs and outputs");
		goto fail;
	}
	PyMem_Free(ids);
	PyMem_Free(data);
	Py_XSETREF(self->held_inputs, held);
	Py_XSETREF(self->held_outputs, outs);
	return 0;
fail:
	PyMem_Free(ids);
	PyMem_Free(data);
	Py_XDECREF(held);
	Py_XDECREF(outs);
	return -1;
}

static struct npu_queue *model_queue(NpuModel *self)
{
	return self->context ? npu_py_context_queue(self->context) : NULL;
}

/* Take the busy lock without holding the GIL while waiting for it. */
static void lock_busy(NpuModel *self)
{
	if (!PyThread_acquire_lock(self->busy, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(self->busy, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
}

/*
 * The outputs of the run that just ended, and the model idle again.
 * @detail: why it failed, NULL for npu_runtime_error().
 */
static PyObject *finish(NpuModel *self, int r, const char *detail)
{
	PyObject *outs = self->held_outputs;

	self->held_outputs = NULL;
	Py_CLEAR(self->held_inputs);
	self->in_flight = false;
	PyThread_release_lock(self->busy);
	if (r) {
		Py_XDECREF(outs);
		return npu_py_raise(r, "Model.run", detail ? detail : npu_runtime_error(self->rt));
	}
	return outs;
}

/*
 * Run to the end or to @deadline; called without the GIL.  CPU segments
 * run on the caller's thread when there is no device, where only the CPU
 * path's own deadline can stop them (-ETIME); it is set for this run
 * only.  A run whose wait passed the deadline (-ETIMEDOUT) is still going
 * and writing into the held arrays, so it is stopped and waited for
 * before they can be let go (a device job runs to its end); @why keeps
 * what was running at the deadline.
 */
static int run_until(NpuModel *self, struct npu_queue *q, int64_t deadline, char *why,
		     size_t why_size)
{
	bool bounded = deadline != NPU_TIMEOUT_INFINITE;
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	int r;

	if (bounded) {
		lim.deadline_ns = deadline;
		r = npu_runtime_set_cpu_limits(self->rt, &lim);
		if (r)
			return r;
	}
	r = npu_runtime_run(self->rt, q, deadline);
	if (r == -ETIMEDOUT) {
		snprintf(why, why_size, "%s", npu_runtime_error(self->rt));
		npu_runtime_cancel(self->rt);
		npu_runtime_wait(self->rt, NPU_TIMEOUT_INFINITE);
	}
	if (bounded)
		npu_runtime_set_cpu_limits(self->rt, NULL);
	return r;
}

static PyObject *Model_run(NpuModel *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "inputs", "timeout", NULL };
	PyObject *inputs, *timeout = Py_None;
	struct npu_queue *q = NULL;
	char why[256] = "";
	int64_t deadline;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:run", kwlist, &inputs, &timeout) ||
	    npu_py_deadline(timeout, &deadline) < 0)
		return NULL;
	if (self->context && !(q = model_queue(self)))
		return NULL;
	lock_busy(self);
	if (bind(self, inputs) < 0) {
		PyThread_release_lock(self->busy);
		return NULL;
	}
	self->in_flight = true;
	Py_BEGIN_ALLOW_THREADS
	r = run_until(self, q, deadline, why, sizeof(why));
	Py_END_ALLOW_THREADS
	return finish(self, r, r == -ETIMEDOUT ? why : NULL);
}

static PyObject *Model_start(NpuModel *self, PyObject *inputs)
{
	struct npu_queue *q = NULL;
	int r;

	if (self->context && !(q = model_queue(self)))
		return NULL;
	lock_busy(self);
	if (bind(self, inputs) < 0) {
		PyThread_release_lock(self->busy);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	r = npu_runtime_run_async(self->rt, q);
	Py_END_ALLOW_THREADS
	if (r) {
		Py_CLEAR(self->held_inputs);
		Py_CLEAR(self->held_outputs);
		PyThread_release_lock(self->busy);
		return npu_py_raise(r, "Model.run_async", npu_runtime_error(self->rt));
	}
	self->in_flight = true;
	Py_RETURN_NONE;
}

static PyObject *Model_finish(NpuModel *self, PyObject *noargs)
{
	int r;

	(void)noargs;
	if (!self->in_flight) {
		PyErr_SetString(PyExc_RuntimeError, "Model._finish: no run in flight");
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	r = npu_runtime_wait(self->rt, NPU_TIMEOUT_INFINITE);
	Py_END_ALLOW_THREADS
	return finish(self, r, NULL);
}

static PyObject *opt_uint(bool have, unsigned long v)
{
	return have ? PyLong_FromUnsignedLong(v) : Py_NewRef(Py_None);
}

static PyObject *profile_table(NpuModel *self)
{
	size_t n = npu_runtime_num_nodes(self->rt);
	PyObject *list = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; list && i < n; i++) {
		struct npu_node_profile p = NPU_NODE_PROFILE_INIT;
		PyObject *row;
		bool seg;
		int r = npu_runtime_node_profile(self->rt, (uint32_t)i, &p);

		if (r) {
			Py_CLEAR(list);
			return npu_py_raise(r, "Model.profile", NULL);
		}
		seg = p.where == NPU_WHERE_DEVICE || p.where == NPU_WHERE_CPU;
		row = PyStructSequence_New(&NodeProfile_Type);
		if (!row) {
			Py_CLEAR(list);
			break;
		}
		PyStructSequence_SET_ITEM(row, 0, PyLong_FromSize_t(i));
		PyStructSequence_SET_ITEM(row, 1, PyUnicode_FromString(p.name ? p.name : ""));
		PyStructSequence_SET_ITEM(row, 2, PyUnicode_FromString(p.op ? p.op : ""));
		PyStructSequence_SET_ITEM(row, 3, PyUnicode_FromString(npu_node_where_name(p.where)));
		PyStructSequence_SET_ITEM(row, 4, opt_uint(seg, p.segment));
		PyStructSequence_SET_ITEM(row, 5, opt_uint(p.where == NPU_WHERE_FUSED, p.fused_into));
		PyStructSequence_SET_ITEM(row, 6, p.where == NPU_WHERE_CPU && p.cpu_reason ?
					  PyUnicode_FromString(p.cpu_reason) : Py_NewRef(Py_None));
		PyStructSequence_SET_ITEM(row, 7, PyLong_FromUnsignedLongLong(p.macs));
		PyStructSequence_SET_ITEM(row, 8, PyLong_FromUnsignedLongLong(p.device_cycles));
		PyStructSequence_SET_ITEM(row, 9, PyLong_FromUnsignedLongLong(p.time_ns));
		for (Py_ssize_t k = 0; k < 10; k++)
			if (!PyStructSequence_GET_ITEM(row, k)) {
				Py_DECREF(row);
				Py_CLEAR(list);
				return NULL;
			}
		PyList_SET_ITEM(list, (Py_ssize_t)i, row);
	}
	return list;
}

static PyObject *Model_profile(NpuModel *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "inputs", "timeout", NULL };
	PyObject *inputs = Py_None, *timeout = Py_None, *outs, *table;
	struct npu_queue *q = NULL;
	char why[256] = "";
	int64_t deadline;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:profile", kwlist, &inputs, &timeout) ||
	    npu_py_deadline(timeout, &deadline) < 0)
		return NULL;
	if (inputs == Py_None) {
		lock_busy(self);
		table = profile_table(self);
		PyThread_release_lock(self->busy);
		return table;
	}
	if (self->context && !(q = model_queue(self)))
		return NULL;
	lock_busy(self);
	if (bind(self, inputs) < 0) {
		PyThread_release_lock(self->busy);
		return NULL;
	}
	self->in_flight = true;
	/* Profiling submits each device node as its own job: this run only. */
	Py_BEGIN_ALLOW_THREADS
	r = npu_runtime_set_profiling(self->rt, true);
	if (!r)
		r = run_until(self, q, deadline, why, sizeof(why));
	npu_runtime_set_profiling(self->rt, false);
	Py_END_ALLOW_THREADS
	table = r ? NULL : profile_table(self);
	outs = finish(self, r, r == -ETIMEDOUT ? why : NULL);
	if (!outs) {
		Py_XDECREF(table);
		return NULL;
	}
	Py_DECREF(outs);
	return table;
}

/* IOInfo.dynamic: per dimension None, or the dynamic dimension's name. */
static PyObject *dynamic_tuple(const struct model_io *io)
{
	PyObject *t = PyTuple_New(io->rank);

	for (uint32_t k = 0; t && k < io->rank; k++) {
		PyObject *v = io->dynamic & (1u << k) ? PyUnicode_FromString(io->param[k]) :
			      Py_NewRef(Py_None);

		if (!v) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, k, v);
	}
	return t;
}

static PyObject *io_list(const struct model_io *io, size_t n)
{
	PyObject *t = PyTuple_New((Py_ssize_t)n);

	for (size_t i = 0; t && i < n; i++) {
		PyObject *row = PyStructSequence_New(&IOInfo_Type);

		if (!row) {
			Py_CLEAR(t);
			break;
		}
		PyStructSequence_SET_ITEM(row, 0, PyUnicode_FromString(io[i].name));
		PyStructSequence_SET_ITEM(row, 1, npu_py_dtype_object(io[i].dtype));
		PyStructSequence_SET_ITEM(row, 2, npu_py_shape(io[i].rank, io[i].dims));
		PyStructSequence_SET_ITEM(row, 3, dynamic_tuple(&io[i]));
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, row);
		for (Py_ssize_t k = 0; k < 4; k++)
			if (!PyStructSequence_GET_ITEM(row, k)) {
				Py_CLEAR(t);
				break;
			}
	}
	return t;
}

static PyObject *Model_get_inputs(NpuModel *self, void *c)
{
	(void)c;
	return io_list(self->ins, self->nin);
}

static PyObject *Model_get_outputs(NpuModel *self, void *c)
{
	(void)c;
	return io_list(self->outs, self->nout);
}

static PyObject *Model_get_device(NpuModel *self, void *c)
{
	(void)c;
	if (!self->context)
		Py_RETURN_NONE;
	return Py_NewRef(self->context->device);
}

static PyObject *Model_get_summary(NpuModel *self, void *c)
{
	size_t dev = 0, seg = npu_runtime_num_segments(self->rt, &dev);

	(void)c;
	return Py_BuildValue("{s:L,s:n,s:n,s:n,s:K,s:K}", "opset", (long long)self->opset,
			     "nodes", (Py_ssize_t)npu_runtime_num_nodes(self->rt),
			     "segments", (Py_ssize_t)seg, "device_segments", (Py_ssize_t)dev,
			     "arena_bytes", (unsigned long long)npu_runtime_arena_bytes(self->rt),
			     "static_bytes", (unsigned long long)npu_runtime_static_bytes(self->rt));
}

static PyObject *Model_get_shape_cache(NpuModel *self, void *c)
{
	(void)c;
	return Py_BuildValue("{s:n,s:n,s:K,s:K,s:K,s:K,s:K}",
			     "capacity", (Py_ssize_t)self->max_shapes,
			     "entries", (Py_ssize_t)self->num_shapes,
			     "hits", (unsigned long long)self->hits,
			     "misses", (unsigned long long)self->misses,
			     "evictions", (unsigned long long)self->evictions,
			     "imports", (unsigned long long)self->imports,
			     "compiles", (unsigned long long)self->compiles);
}

static PyMethodDef Model_methods[] = {
	{ "run", (PyCFunction)(void (*)(void))Model_run, METH_VARARGS | METH_KEYWORDS,
	  "run($self, /, inputs, timeout=None)\n--\n\n"
	  "Run the model once; returns {output name: numpy.ndarray}.\n\n"
	  "inputs maps every input's name to an array of its dtype and shape\n"
	  "(TypeError / ValueError otherwise, naming it); a dimension the model\n"
	  "leaves dynamic (IOInfo.dynamic) takes any size: the first run of a\n"
	  "set of input shapes imports and compiles the model for it, later ones\n"
	  "reuse that runtime (shape_cache).  C-contiguous arrays\n"
	  "are read where they lie.  Each output is a new array, which libnpu\n"
	  "wrote directly.  timeout: seconds, None for no limit.  npu.Error when\n"
	  "the run fails, with the node and op at fault.  The GIL is released\n"
	  "while it runs; runs of one Model take turns." },
	{ "profile", (PyCFunction)(void (*)(void))Model_profile, METH_VARARGS | METH_KEYWORDS,
	  "profile($self, /, inputs=None, timeout=None)\n--\n\n"
	  "The per-node table, a list of NodeProfile: where each node runs\n"
	  "and why (device, cpu, folded, fused, elided), its segment, MACs, and,\n"
	  "measured in one profiled run of inputs (each device node a job of\n"
	  "its own), its device cycles and time.  Without inputs, the placement\n"
	  "only (and the times of the last profiled run)." },
	{ "_start", (PyCFunction)Model_start, METH_O,
	  "_start(inputs): bind and start a run (run_async's first half)." },
	{ "_finish", (PyCFunction)Model_finish, METH_NOARGS,
	  "_finish() -> outputs: wait for the run _start began." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Model_getset[] = {
	{ "inputs", (getter)Model_get_inputs, NULL,
	  "tuple of IOInfo(name, dtype, shape): what run() takes; shape is the\n"
	  "load's, and IOInfo.dynamic names the dimensions run() may change.", NULL },
	{ "outputs", (getter)Model_get_outputs, NULL,
	  "tuple of IOInfo(name, dtype, shape): what run() returns, for the\n"
	  "load's input shapes (IOInfo.dynamic: the dimensions that may differ).", NULL },
	{ "device", (getter)Model_get_device, NULL,
	  "The Device the model runs on, None on the CPU.", NULL },
	{ "summary", (getter)Model_get_summary, NULL,
	  "dict: opset, nodes, segments, device_segments, arena_bytes, static_bytes\n"
	  "(of the runtime of the last run's input shapes).", NULL },
	{ "shape_cache", (getter)Model_get_shape_cache, NULL,
	  "dict: capacity (max_shapes), entries (compiled input shapes kept), hits\n"
	  "(runs that only bound their arrays), misses (runs whose shapes had no\n"
	  "runtime), evictions, imports (libnpu-onnx's count of imports of the\n"
	  "model, the load's included), compiles.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Model_doc,
"Model(model, device=None, *, cpu=False, shapes=None, constants=None, max_shapes=8)\n--\n\n"
"An ONNX model, imported by libnpu-onnx and compiled for an NPU or the\n"
"CPU.\n\n"
"model      a path (str or os.PathLike) or the ONNX file's bytes\n"
"device     None: the first NPU, or the CPU path when there is none;\n"
"           an index or a Device: that NPU (npu.Error if absent)\n"
"cpu        True: the CPU path (libnpu's engine), whatever NPUs exist\n"
"shapes     {input name: shape} binding dynamic dimensions for the\n"
"           first runtime; run() takes other sizes there too\n"
"constants  {input name: array} fixing inputs as constants (shape-like\n"
"           int64 inputs, as npu-run --input of int64 does)\n"
"max_shapes how many compiled sets of input shapes to keep (1 to 1024),\n"
"           the least recently run out first\n\n"
"Import and compile errors raise npu.Error naming the node and op.  The\n"
"Model keeps its Device and Context alive.");

PyTypeObject NpuModel_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Model",
	.tp_basicsize = sizeof(NpuModel),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = Model_doc,
	.tp_new = Model_new,
	.tp_dealloc = (destructor)Model_dealloc,
	.tp_methods = Model_methods,
	.tp_getset = Model_getset,
};
