// SPDX-License-Identifier: MIT
/*
 * npu.Tensor and npu.Op: single libnpu ops for callers writing their own
 * runtime.  A Tensor describes one operand and is bound to a numpy
 * array's memory (the CPU path) or to a Buffer (the device); an Op made
 * from Tensors runs on the device when its tensors live in one Context's
 * buffers and the device takes it, else on the CPU with the device's
 * compute engine.
 */
#include "npu_py.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
	PyObject_HEAD
	struct npu_tensor *t;
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	PyObject *memory;		/* the ndarray or Buffer it is bound to */
	NpuContext *context;		/* of that Buffer, else NULL */
	bool writable;
} NpuTensor;

typedef struct {
	PyObject_HEAD
	struct npu_op *op;
	PyObject *tensors;		/* inputs and output: their memory */
	NpuContext *context;		/* where its buffers are, else NULL */
	const char *kind;
} NpuOp;

static NpuTensor *tensor_alloc(enum npu_dtype dtype, uint32_t rank, const uint32_t *dims)
{
	NpuTensor *t = PyObject_New(NpuTensor, &NpuTensor_Type);
	int r;

	if (!t)
		return NULL;
	t->t = NULL;
	t->memory = NULL;
	t->context = NULL;
	t->writable = true;
	t->dtype = dtype;
	t->rank = rank;
	memcpy(t->dims, dims, rank * sizeof(*dims));
	/* libnpu's ops take rank >= 1: a scalar is one element. */
	if (!rank) {
		static const uint32_t one = 1;

		r = npu_tensor_create(dtype, 1, &one, &t->t);
	} else {
		r = npu_tensor_create(dtype, rank, dims, &t->t);
	}
	if (r) {
		Py_DECREF(t);
		return (NpuTensor *)npu_py_raise(r, "npu.Tensor",
						 r == -EINVAL ? "no op takes this dtype" : NULL);
	}
	return t;
}

/* Quantization and strides, common to both constructors. */
static int tensor_options(NpuTensor *t, PyObject *scale, int zero_point, PyObject *strides)
{
	int r;

	if (scale != Py_None) {
		double s = PyFloat_AsDouble(scale);

		if (s == -1.0 && PyErr_Occurred())
			return -1;
		r = npu_tensor_set_quant(t->t, (float)s, zero_point);
		if (r) {
			npu_py_raise(r, "npu.Tensor", "scale > 0 and a zero point within an int8/uint8 dtype");
			return -1;
		}
	}
	if (strides != Py_None) {
		PyObject *fast = PySequence_Fast(strides, "strides is a sequence of ints");
		uint64_t st[NPU_TENSOR_MAX_RANK];

		if (!fast)
			return -1;
		if (PySequence_Fast_GET_SIZE(fast) != (Py_ssize_t)(t->rank ? t->rank : 1)) {
			PyErr_Format(PyExc_ValueError, "strides: %zd of them for rank %u",
				     PySequence_Fast_GET_SIZE(fast), t->rank);
			Py_DECREF(fast);
			return -1;
		}
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
			st[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
			if (st[i] == (uint64_t)-1 && PyErr_Occurred()) {
				Py_DECREF(fast);
				return -1;
			}
		}
		Py_DECREF(fast);
		r = npu_tensor_set_strides(t->t, st);
		if (r) {
			npu_py_raise(r, "npu.Tensor", "setting its element strides");
			return -1;
		}
	}
	return 0;
}

static PyObject *Tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "array", "scale", "zero_point", "strides", NULL };
	PyObject *obj, *scale = Py_None, *strides = Py_None;
	uint32_t dims[NPU_TENSOR_MAX_RANK];
	PyArrayObject *arr;
	enum npu_dtype dt;
	int zero_point = 0, r;
	NpuTensor *t;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OiO:Tensor", kwlist, &obj, &scale,
					 &zero_point, &strides))
		return NULL;
	if (!PyArray_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "npu.Tensor binds a numpy.ndarray, not %.80s "
			     "(Tensor.on_buffer binds device memory)", Py_TYPE(obj)->tp_name);
		return NULL;
	}
	arr = (PyArrayObject *)obj;
	if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr) || !PyArray_ISNOTSWAPPED(arr)) {
		PyErr_SetString(PyExc_ValueError, "npu.Tensor: the array must be C-contiguous, aligned "
				"and native-endian (numpy.ascontiguousarray), since ops read and "
				"write it where it lies");
		return NULL;
	}
	dt = npu_py_dtype_from_numpy(PyArray_TYPE(arr));
	if (!dt) {
		PyErr_Format(PyExc_TypeError, "npu.Tensor: dtype %R has no libnpu dtype",
			     (PyObject *)PyArray_DESCR(arr));
		return NULL;
	}
	if (PyArray_NDIM(arr) > NPU_TENSOR_MAX_RANK) {
		PyErr_Format(PyExc_ValueError, "npu.Tensor: rank %d is above libnpu's %d",
			     PyArray_NDIM(arr), NPU_TENSOR_MAX_RANK);
		return NULL;
	}
	for (int i = 0; i < PyArray_NDIM(arr); i++) {
		if (PyArray_DIM(arr, i) < 1 || PyArray_DIM(arr, i) > UINT32_MAX) {
			PyErr_Format(PyExc_ValueError, "npu.Tensor: dimension %d is %zd", i,
				     (Py_ssize_t)PyArray_DIM(arr, i));
			return NULL;
		}
		dims[i] = (uint32_t)PyArray_DIM(arr, i);
	}
	t = tensor_alloc(dt, (uint32_t)PyArray_NDIM(arr), dims);
	if (!t)
		return NULL;
	if (tensor_options(t, scale, zero_point, strides) < 0) {
		Py_DECREF(t);
		return NULL;
	}
	r = npu_tensor_bind_host(t->t, PyArray_DATA(arr), (size_t)PyArray_NBYTES(arr));
	if (r) {
		Py_DECREF(t);
		return npu_py_raise(r, "npu.Tensor", "binding the array's memory");
	}
	t->memory = Py_NewRef(obj);
	t->writable = PyArray_ISWRITEABLE(arr);
	return (PyObject *)t;
}

static PyObject *Tensor_on_buffer(PyObject *cls, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "buffer", "dtype", "shape", "offset", "scale", "zero_point",
				  "strides", NULL };
	PyObject *buf, *shape, *scale = Py_None, *strides = Py_None;
	PyArray_Descr *descr = NULL;
	unsigned long long offset = 0;
	uint32_t rank, dims[NPU_TENSOR_MAX_RANK];
	int64_t d64[NPU_TENSOR_MAX_RANK];
	enum npu_dtype dt;
	int zero_point = 0, r;
	NpuTensor *t;

	(void)cls;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O&O|K$OiO:on_buffer", kwlist,
					 &NpuBuffer_Type, &buf, PyArray_DescrConverter, &descr,
					 &shape, &offset, &scale, &zero_point, &strides))
		return NULL;
	dt = npu_py_dtype_from_numpy(descr->type_num);
	Py_DECREF(descr);
	if (!dt) {
		PyErr_SetString(PyExc_TypeError, "Tensor.on_buffer: a dtype libnpu has");
		return NULL;
	}
	if (npu_py_read_shape(shape, "Tensor.on_buffer", &rank, d64, 0) < 0)
		return NULL;
	for (uint32_t i = 0; i < rank; i++)
		dims[i] = (uint32_t)d64[i];
	t = tensor_alloc(dt, rank, dims);
	if (!t)
		return NULL;
	if (tensor_options(t, scale, zero_point, strides) < 0) {
		Py_DECREF(t);
		return NULL;
	}
	r = npu_tensor_bind_buffer(t->t, ((NpuBuffer *)buf)->buf, offset);
	if (r) {
		Py_DECREF(t);
		return npu_py_raise(r, "Tensor.on_buffer", r == -ERANGE ?
				    "the tensor does not fit in the buffer at that offset" : NULL);
	}
	t->memory = Py_NewRef(buf);
	t->context = (NpuContext *)Py_NewRef(((NpuBuffer *)buf)->context);
	return (PyObject *)t;
}

static void Tensor_dealloc(NpuTensor *t)
{
	npu_tensor_free(t->t);
	Py_XDECREF(t->memory);
	Py_XDECREF(t->context);
	PyObject_Free(t);
}

static PyObject *Tensor_get_dtype(NpuTensor *t, void *c)
{
	(void)c;
	return npu_py_dtype_object(t->dtype);
}

static PyObject *Tensor_get_shape(NpuTensor *t, void *c)
{
	(void)c;
	return npu_py_shape(t->rank, t->dims);
}

static PyObject *Tensor_get_memory(NpuTensor *t, void *c)
{
	(void)c;
	return Py_NewRef(t->memory);
}

static PyGetSetDef Tensor_getset[] = {
	{ "dtype", (getter)Tensor_get_dtype, NULL, "numpy.dtype of the elements.", NULL },
	{ "shape", (getter)Tensor_get_shape, NULL, "tuple of ints.", NULL },
	{ "memory", (getter)Tensor_get_memory, NULL, "The ndarray or Buffer it is bound to.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef Tensor_methods[] = {
	{ "on_buffer", (PyCFunction)(void (*)(void))Tensor_on_buffer,
	  METH_VARARGS | METH_KEYWORDS | METH_CLASS,
	  "on_buffer($type, /, buffer, dtype, shape, offset=0, *, scale=None, zero_point=0, "
	  "strides=None)\n--\n\n"
	  "A Tensor in device memory: element [0, ...] at offset bytes into\n"
	  "buffer.  Ops whose tensors are all in one Context's buffers can run\n"
	  "on its device." },
	{ NULL, NULL, 0, NULL },
};

PyDoc_STRVAR(Tensor_doc,
"Tensor(array, *, scale=None, zero_point=0, strides=None)\n--\n\n"
"An operand bound to a C-contiguous numpy array's own memory: an Op\n"
"reads an input and writes an output array in place (the CPU path).\n"
"scale, zero_point: per-tensor quantization of an int8/uint8 tensor\n"
"(real = (q - zero_point) * scale).  strides: element strides, one per\n"
"dimension (0 broadcasts it).  Keeps the array alive.");

PyTypeObject NpuTensor_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu.Tensor",
	.tp_basicsize = sizeof(NpuTensor),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Tensor_doc,
	.tp_new = Tensor_new,
	.tp_dealloc = (destructor)Tensor_dealloc,
	.tp_getset = Tensor_getset,
	.tp_methods = Tensor_methods,
};

/* ---- Op ---- */

struct name_value {
	const char *name;
	int value;
};

static const struct name_value kinds[] = {
	{ "gemm", NPU_OP_GEMM }, { "conv2d", NPU_OP_CONV2D }, { "pool2d", NPU_OP_POOL2D },
	{ "eltwise", NPU_OP_ELTWISE }, { "activation", NPU_OP_ACTIVATION },
	{ "softmax", NPU_OP_SOFTMAX }, { NULL, 0 },
};

static const struct name_value acts[] = {
	{ "none", NPU_ACT_NONE }, { "relu", NPU_ACT_RELU }, { "relu6", NPU_ACT_RELU6 },
	{ "leaky_relu", NPU_ACT_LEAKY_RELU }, { "sigmoid", NPU_ACT_SIGMOID },
	{ "tanh", NPU_ACT_TANH }, { "gelu", NPU_ACT_GELU }, { "clip", NPU_ACT_CLIP },
	{ "hard_sigmoid", NPU_ACT_HARD_SIGMOID }, { "hard_swish", NPU_ACT_HARD_SWISH },
	{ "sqrt", NPU_ACT_SQRT }, { "reciprocal", NPU_ACT_RECIPROCAL }, { "exp", NPU_ACT_EXP },
	{ "log", NPU_ACT_LOG }, { "abs", NPU_ACT_ABS }, { "neg", NPU_ACT_NEG }, { NULL, 0 },
};

static const struct name_value eltwise_ops[] = {
	{ "add", NPU_ELTWISE_ADD }, { "sub", NPU_ELTWISE_SUB }, { "mul", NPU_ELTWISE_MUL },
	{ "div", NPU_ELTWISE_DIV }, { "max", NPU_ELTWISE_MAX }, { "min", NPU_ELTWISE_MIN },
	{ "pow", NPU_ELTWISE_POW }, { NULL, 0 },
};

static const struct name_value pools[] = {
	{ "max", NPU_POOL_MAX }, { "avg", NPU_POOL_AVG }, { "global_avg", NPU_POOL_GLOBAL_AVG },
	{ NULL, 0 },
};

static const struct name_value roundings[] = {
	{ "onnx", NPU_ROUND_ONNX }, { "tflite", NPU_ROUND_TFLITE }, { NULL, 0 },
};

/* @s's value in @table; -1 with ValueError listing the names otherwise. */
static int lookup(const struct name_value *table, const char *what, const char *s,
		  const char **canonical)
{
	PyObject *names;

	for (const struct name_value *e = table; e->name; e++)
		if (!strcmp(e->name, s)) {
			if (canonical)
				*canonical = e->name;
			return e->value;
		}
	names = PyList_New(0);
	for (const struct name_value *e = table; names && e->name; e++) {
		PyObject *n = PyUnicode_FromString(e->name);

		if (!n || PyList_Append(names, n) < 0)
			Py_CLEAR(names);
		Py_XDECREF(n);
	}
	if (names)
		PyErr_Format(PyExc_ValueError, "npu.Op: %s '%s' is not one of %R", what, s, names);
	Py_XDECREF(names);
	return -1;
}

/* @n unsigned ints from a sequence (None: leave @out as it is). */
static int read_uints(PyObject *seq, const char *what, uint32_t *out, Py_ssize_t n)
{
	PyObject *fast;

	if (seq == Py_None)
		return 0;
	fast = PySequence_Fast(seq, "a sequence of ints");
	if (!fast)
		return -1;
	if (PySequence_Fast_GET_SIZE(fast) != n) {
		PyErr_Format(PyExc_ValueError, "npu.Op: %s takes %zd values, not %zd", what, n,
			     PySequence_Fast_GET_SIZE(fast));
		Py_DECREF(fast);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(fast, i));

		if ((v == (unsigned long)-1 && PyErr_Occurred()) || v > UINT32_MAX) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_ValueError, "npu.Op: %s value too large", what);
			Py_DECREF(fast);
			return -1;
		}
		out[i] = (uint32_t)v;
	}
	Py_DECREF(fast);
	return 0;
}

static PyObject *Op_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "kind", "inputs", "output", "act", "alpha", "beta", "clip",
				  "trans_a", "trans_b", "stride", "dilation", "pad", "groups",
				  "op", "pool", "kernel", "count_include_pad", "axis",
				  "rounding", NULL };
	const char *kind, *act = "none", *elt = "add", *pool = "max", *round = "onnx";
	PyObject *inputs, *clip = Py_None, *stride = Py_None, *dilation = Py_None;
	PyObject *pad = Py_None, *kernel = Py_None, *fast = NULL;
	struct npu_op_params p = NPU_OP_PARAMS_INIT;
	const struct npu_tensor *in[8];
	NpuTensor *out;
	int trans_a = 0, trans_b = 0, cip = 0, k, r;
	unsigned int groups = 1, axis = 0;
	float alpha = 0, beta = 0;
	Py_ssize_t nin;
	NpuOp *op;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "sOO!|$sffOppOOOIssOpIs:Op", kwlist, &kind,
					 &inputs, &NpuTensor_Type, &out, &act, &alpha, &beta,
					 &clip, &trans_a, &trans_b, &stride, &dilation, &pad,
					 &groups, &elt, &pool, &kernel, &cip, &axis, &round))
		return NULL;
	if ((k = lookup(kinds, "kind", kind, &kind)) < 0 ||
	    (r = lookup(acts, "act", act, NULL)) < 0)
		return NULL;
	p.kind = (enum npu_op_kind)k;
	p.act = (enum npu_activation)r;
	p.act_alpha = alpha;
	p.act_beta = beta;
	if ((r = lookup(roundings, "rounding", round, NULL)) < 0)
		return NULL;
	p.round = (enum npu_rounding)r;
	if (clip != Py_None && !PyArg_ParseTuple(clip, "ff:clip", &p.clip.min, &p.clip.max))
		return NULL;
	switch (p.kind) {
	case NPU_OP_GEMM:
		p.gemm.flags = (trans_a ? NPU_GEMM_TRANS_A : 0) | (trans_b ? NPU_GEMM_TRANS_B : 0);
		break;
	case NPU_OP_CONV2D:
		p.conv.stride[0] = p.conv.stride[1] = 1;
		p.conv.dilation[0] = p.conv.dilation[1] = 1;
		p.conv.groups = groups;
		if (read_uints(stride, "stride", p.conv.stride, 2) < 0 ||
		    read_uints(dilation, "dilation", p.conv.dilation, 2) < 0 ||
		    read_uints(pad, "pad (top, left, bottom, right)", p.conv.pad, 4) < 0)
			return NULL;
		break;
	case NPU_OP_POOL2D:
		if ((r = lookup(pools, "pool", pool, NULL)) < 0)
			return NULL;
		p.pool.kind = (enum npu_pool_kind)r;
		p.pool.count_include_pad = cip;
		p.pool.stride[0] = p.pool.stride[1] = 1;
		if (read_uints(kernel, "kernel", p.pool.kernel, 2) < 0 ||
		    read_uints(stride, "stride", p.pool.stride, 2) < 0 ||
		    read_uints(dilation, "dilation", p.pool.dilation, 2) < 0 ||
		    read_uints(pad, "pad (top, left, bottom, right)", p.pool.pad, 4) < 0)
			return NULL;
		break;
	case NPU_OP_ELTWISE:
		if ((r = lookup(eltwise_ops, "op", elt, NULL)) < 0)
			return NULL;
		p.eltwise.kind = (enum npu_eltwise_kind)r;
		break;
	case NPU_OP_SOFTMAX:
		p.softmax.axis = axis;
		break;
	default:
		break;
	}
	fast = PySequence_Fast(inputs, "npu.Op: inputs is a sequence of Tensors (None: absent)");
	if (!fast)
		return NULL;
	nin = PySequence_Fast_GET_SIZE(fast);
	if (nin < 1 || nin > (Py_ssize_t)(sizeof(in) / sizeof(in[0]))) {
		PyErr_Format(PyExc_ValueError, "npu.Op: %zd inputs", nin);
		Py_DECREF(fast);
		return NULL;
	}
	op = PyObject_New(NpuOp, &NpuOp_Type);
	if (!op) {
		Py_DECREF(fast);
		return NULL;
	}
	op->op = NULL;
	op->context = out->context ? (NpuContext *)Py_NewRef(out->context) : NULL;
	op->kind = kind;
	op->tensors = PyList_New(0);
	if (!op->tensors)
		goto fail;
	for (Py_ssize_t i = 0; i < nin; i++) {
		PyObject *t = PySequence_Fast_GET_ITEM(fast, i);

		if (t == Py_None) {
			in[i] = NULL;
			continue;
		}
		if (!PyObject_TypeCheck(t, &NpuTensor_Type)) {
			PyErr_Format(PyExc_TypeError, "npu.Op: input %zd is a %.80s, not an npu.Tensor",
				     i, Py_TYPE(t)->tp_name);
			goto fail;
		}
		in[i] = ((NpuTensor *)t)->t;
		if (!op->context && ((NpuTensor *)t)->context)
			op->context = (NpuContext *)Py_NewRef(((NpuTensor *)t)->context);
		if (PyList_Append(op->tensors, t) < 0)
			goto fail;
	}
	if (!out->writable) {
		PyErr_SetString(PyExc_ValueError, "npu.Op: the output tensor's array is read-only");
		goto fail;
	}
	if (PyList_Append(op->tensors, (PyObject *)out) < 0)
		goto fail;
	r = npu_op_create(&p, in, (size_t)nin, out->t, &op->op);
	if (r) {
		char what[64];

		snprintf(what, sizeof(what), "npu.Op(%s)", kind);
		npu_py_raise(r, what, r == -EINVAL ?
			     "shapes, dtypes or parameters the op set does not define (Documentation/ops.rst)" :
			     r == -EXDEV ? "its buffers belong to different contexts" : NULL);
		goto fail;
	}
	Py_DECREF(fast);
	return (PyObject *)op;
fail:
	Py_DECREF(fast);
	Py_DECREF(op);
	return NULL;
}

static void Op_dealloc(NpuOp *op)
{
	npu_op_free(op->op);
	Py_XDECREF(op->tensors);
	Py_XDECREF(op->context);
	PyObject_Free(op);
}

static PyObject *Op_run(NpuOp *op, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "cpu", "timeout", NULL };
	PyObject *timeout = Py_None;
	struct npu_queue *q = NULL;
	enum npu_op_where where = 0;
	int64_t deadline;
	int cpu = 0, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$pO:run", kwlist, &cpu, &timeout) ||
	    npu_py_deadline(timeout, &deadline) < 0)
		return NULL;
	if (op->context && !cpu && !(q = npu_py_context_queue(op->context)))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = npu_op_run(op->op, q, deadline, &where);
	Py_END_ALLOW_THREADS
	if (r) {
		char what[64];

		snprintf(what, sizeof(what), "Op(%s).run", op->kind);
		return npu_py_raise(r, what, NULL);
	}
	return PyUnicode_FromString(where == NPU_OP_RAN_DEVICE ? "device" : "cpu");
}

static PyObject *Op_run_cpu(NpuOp *op, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "max_work", "timeout", NULL };
	struct npu_cpu_limits lim = NPU_CPU_LIMITS_INIT;
	unsigned long long max_work = 0;
	PyObject *timeout = Py_None;
	char err[256] = "";
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$KO:run_cpu", kwlist, &max_work, &timeout) ||
	    npu_py_deadline(timeout, &lim.deadline_ns) < 0)
		return NULL;
	if (lim.deadline_ns == NPU_TIMEOUT_INFINITE)
		lim.deadline_ns = 0;
	lim.max_work = max_work;
	Py_BEGIN_ALLOW_THREADS
	r = npu_op_run_cpu_limits(op->op, &lim, err, sizeof(err));
	Py_END_ALLOW_THREADS
	if (r) {
		char what[64];

		snprintf(what, sizeof(what), "Op(%s).run_cpu", op->kind);
		return npu_py_raise(r, what, err);
	}
	Py_RETURN_NONE;
}

static PyObject *Op_get_supported(NpuOp *op, void *c)
{
	const char *reason = NULL;
	int r = npu_op_supported(op->op, &reason);

	(void)c;
	if (r < 0)
		return npu_py_raise(r, "Op.supported", NULL);
	return Py_BuildValue("(Os)", r ? Py_True : Py_False, r ? NULL : reason);
}

static PyObject *Op_get_num_commands(NpuOp *op, void *c)
{
	(void)c;
	return PyLong_FromSize_t(npu_op_num_commands(op->op));
}

static PyObject *Op_get_kind(NpuOp *op, void *c)
{
	(void)c;
	return PyUnicode_FromString(op->kind);
}

static PyMethodDef Op_methods[] = {
	{ "run", (PyCFunction)(void (*)(void))Op_run, METH_VARARGS | METH_KEYWORDS,
	  "run($self, /, *, cpu=False, timeout=None)\n--\n\n"
	  "Run to completion: as one device job when the tensors are in a\n"
	  "Context's buffers and the device takes the op (and not cpu), else on\n"
	  "the CPU.  Returns where it ran." },
	{ "run_cpu", (PyCFunction)(void (*)(void))Op_run_cpu, METH_VARARGS | METH_KEYWORDS,
	  "run_cpu($self, /, *, max_work=0, timeout=None)\n--\n\n"
	  "Run on the CPU within the CPU path's limits: npu.Error (E2BIG) naming\n"
	  "the limit for an op beyond max_work units, ETIME past timeout." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Op_getset[] = {
	{ "kind", (getter)Op_get_kind, NULL, "'gemm', 'conv2d', ...", NULL },
	{ "supported", (getter)Op_get_supported, NULL,
	  "(True, None) when the device can run it, else (False, reason).", NULL },
	{ "num_commands", (getter)Op_get_num_commands, NULL,
	  "Device commands it encodes to (more than 1 when tiled), 0 if unsupported.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Op_doc,
"Op(kind, inputs, output, *, act='none', alpha=0.0, beta=0.0, clip=None, "
"trans_a=False, trans_b=False, stride=None, dilation=None, pad=None, "
"groups=1, op='add', pool='max', kernel=None, count_include_pad=False, "
"axis=0, rounding='onnx')\n--\n\n"
"One libnpu op (npu_op_create), validated once.\n\n"
"kind     'gemm' (inputs A, B, bias or None), 'conv2d' (X NHWC,\n"
"         W [CO,KH,KW,C/groups], bias), 'pool2d' (X NHWC), 'eltwise'\n"
"         (A, B, numpy broadcasting), 'activation' (X), 'softmax' (X)\n"
"act      fused activation, or activation's function: relu, relu6,\n"
"         leaky_relu (alpha), sigmoid, tanh, gelu, clip (clip=(min, max)),\n"
"         hard_sigmoid (alpha, beta), hard_swish, sqrt, reciprocal, exp,\n"
"         log, abs, neg\n"
"op       eltwise: add, sub, mul, div, max, min, pow\n"
"pool     pool2d: max, avg, global_avg, with kernel=(h, w)\n"
"stride, dilation  (h, w); pad  (top, left, bottom, right)\n\n"
"Keeps its Tensors (and their arrays and Buffers) alive.");

PyTypeObject NpuOp_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu.Op",
	.tp_basicsize = sizeof(NpuOp),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Op_doc,
	.tp_new = Op_new,
	.tp_dealloc = (destructor)Op_dealloc,
	.tp_methods = Op_methods,
	.tp_getset = Op_getset,
};
