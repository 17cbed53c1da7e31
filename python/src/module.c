// SPDX-License-Identifier: MIT
/*
 * npu._npu: module init, npu.Error and the dtype and shape conversions
 * the other files share.
 */
#define NPU_PY_MODULE_MAIN
#include "npu_py.h"

#include <errno.h>

PyObject *npu_py_error;

PyObject *npu_py_raise(int code, const char *what, const char *detail)
{
	const char *reason = npu_strerror(code);
	PyObject *msg, *exc, *v;

	if (detail && *detail)
		msg = PyUnicode_FromFormat("%s: %s (%s)", what, detail, reason);
	else
		msg = PyUnicode_FromFormat("%s: %s", what, reason);
	if (!msg)
		return NULL;
	exc = PyObject_CallOneArg(npu_py_error, msg);
	Py_DECREF(msg);
	if (!exc)
		return NULL;
	/*
	 * errno only for a failed call; a device job's outcome
	 * (NPU_ERR_JOB_*) is no errno, and is told by job_state instead.
	 */
	if (NPU_ERR_IS_JOB(code)) {
		v = PyUnicode_FromString(npu_job_state_name(
			(enum npu_job_state)NPU_ERR_JOB_STATE(code)));
		if (!v || PyObject_SetAttrString(exc, "job_state", v) < 0)
			goto fail;
		Py_DECREF(v);
		v = Py_NewRef(Py_None);
	} else {
		v = PyLong_FromLong(code < 0 ? -code : code);
	}
	if (!v || PyObject_SetAttrString(exc, "errno", v) < 0)
		goto fail;
	Py_DECREF(v);
	v = PyLong_FromLong(code);
	if (!v || PyObject_SetAttrString(exc, "code", v) < 0)
		goto fail;
	Py_DECREF(v);
	PyErr_SetObject(npu_py_error, exc);
	Py_DECREF(exc);
	return NULL;
fail:
	Py_XDECREF(v);
	Py_DECREF(exc);
	return NULL;
}

static const struct {
	enum npu_dtype npu;
	int numpy;
	const char *name;
} dtypes[] = {
	{ NPU_DTYPE_FP32, NPY_FLOAT32, "float32" },
	{ NPU_DTYPE_FP16, NPY_FLOAT16, "float16" },
	{ NPU_DTYPE_BF16, -1, "bfloat16" },
	{ NPU_DTYPE_INT8, NPY_INT8, "int8" },
	{ NPU_DTYPE_UINT8, NPY_UINT8, "uint8" },
	{ NPU_DTYPE_INT32, NPY_INT32, "int32" },
	{ NPU_DTYPE_INT64, NPY_INT64, "int64" },
	{ NPU_DTYPE_BOOL, NPY_BOOL, "bool" },
	{ NPU_DTYPE_FP64, NPY_FLOAT64, "float64" },
	{ NPU_DTYPE_INT16, NPY_INT16, "int16" },
	{ NPU_DTYPE_UINT16, NPY_UINT16, "uint16" },
	{ NPU_DTYPE_UINT32, NPY_UINT32, "uint32" },
	{ NPU_DTYPE_UINT64, NPY_UINT64, "uint64" },
};

int npu_py_dtype_to_numpy(enum npu_dtype dt)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].npu == dt)
			return dtypes[i].numpy;
	return -1;
}

enum npu_dtype npu_py_dtype_from_numpy(int type_num)
{
	/* numpy's int64 may be long or long long: compare by equivalence. */
	PyArray_Descr *want = PyArray_DescrFromType(type_num);
	enum npu_dtype found = 0;

	if (!want)
		return 0;
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]) && !found; i++) {
		PyArray_Descr *d;

		if (dtypes[i].numpy < 0)
			continue;
		d = PyArray_DescrFromType(dtypes[i].numpy);
		if (d && PyArray_EquivTypes(d, want))
			found = dtypes[i].npu;
		Py_XDECREF(d);
	}
	Py_DECREF(want);
	return found;
}

const char *npu_py_dtype_name(enum npu_dtype dt)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].npu == dt)
			return dtypes[i].name;
	return "unknown";
}

PyObject *npu_py_dtype_object(enum npu_dtype dt)
{
	int t = npu_py_dtype_to_numpy(dt);

	if (t < 0)
		Py_RETURN_NONE;
	return (PyObject *)PyArray_DescrFromType(t);
}

PyObject *npu_py_shape(uint32_t rank, const uint32_t *dims)
{
	PyObject *t = PyTuple_New(rank);

	for (uint32_t i = 0; t && i < rank; i++) {
		PyObject *v = PyLong_FromUnsignedLong(dims[i]);

		if (!v) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, v);
	}
	return t;
}

int npu_py_read_shape(PyObject *seq, const char *what, uint32_t *rank, int64_t *dims,
		      int allow_zero)
{
	PyObject *fast = PySequence_Fast(seq, "a shape is a sequence of ints");
	Py_ssize_t n;

	if (!fast)
		return -1;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n > NPU_TENSOR_MAX_RANK) {
		PyErr_Format(PyExc_ValueError, "%s: rank %zd is above libnpu's %d", what, n,
			     NPU_TENSOR_MAX_RANK);
		Py_DECREF(fast);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));

		if (v == -1 && PyErr_Occurred()) {
			Py_DECREF(fast);
			return -1;
		}
		if (v < (allow_zero ? 0 : 1) || v > UINT32_MAX) {
			PyErr_Format(PyExc_ValueError, "%s: dimension %zd is %lld, not 1..%lu", what,
				     i, v, (unsigned long)UINT32_MAX);
			Py_DECREF(fast);
			return -1;
		}
		dims[i] = v;
	}
	*rank = (uint32_t)n;
	Py_DECREF(fast);
	return 0;
}

int npu_py_deadline(PyObject *timeout, int64_t *deadline)
{
	double s;

	*deadline = NPU_TIMEOUT_INFINITE;
	if (timeout == Py_None)
		return 0;
	s = PyFloat_AsDouble(timeout);
	if (s == -1.0 && PyErr_Occurred())
		return -1;
	if (!(s >= 0)) {
		PyErr_SetString(PyExc_ValueError, "timeout must be None or >= 0 seconds");
		return -1;
	}
	/* Beyond ~292 years INT64 nanoseconds overflow: that is never. */
	if (s < 9.2e9)
		*deadline = npu_deadline_ns((int64_t)(s * 1e9));
	return 0;
}

PyDoc_STRVAR(devices_doc,
"devices($module, /)\n--\n\n"
"Every NPU bound to the vnpu driver, in index order (ascending accel\n"
"minor), read from sysfs: no device is opened and no root is needed.\n"
"An empty list on a machine without one.");

static PyMethodDef module_methods[] = {
	{ "devices", npu_py_devices, METH_NOARGS, devices_doc },
	{ NULL, NULL, 0, NULL },
};

PyDoc_STRVAR(module_doc,
"The C extension under the npu package (libnpu and libnpu-onnx).\n"
"Use the npu package, which re-exports everything here.");

static struct PyModuleDef npu_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "npu._npu",
	.m_doc = module_doc,
	.m_size = -1,
	.m_methods = module_methods,
};

PyDoc_STRVAR(error_doc,
"A libnpu or libnpu-onnx call failed.\n\n"
"str(e) names what failed and why, in libnpu's words (the importer's\n"
"and the graph compiler's messages name the node and op).\n"
"e.code is libnpu's negative return value; e.errno the errno (positive),\n"
"or None when a device job did not succeed, and then e.job_state names\n"
"its outcome ('mmu-fault', 'timeout', ...).");

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	return PyModule_AddObjectRef(m, name, (PyObject *)t);
}

PyMODINIT_FUNC PyInit__npu(void);
PyMODINIT_FUNC PyInit__npu(void)
{
	PyObject *m, *dict;

	import_array();
	m = PyModule_Create(&npu_module);
	if (!m)
		return NULL;
	dict = Py_BuildValue("{s:O,s:O,s:O}", "errno", Py_None, "code", Py_None,
			     "job_state", Py_None);
	if (!dict)
		goto fail;
	npu_py_error = PyErr_NewExceptionWithDoc("npu.Error", error_doc, NULL, dict);
	Py_DECREF(dict);
	if (!npu_py_error || PyModule_AddObjectRef(m, "Error", npu_py_error) < 0)
		goto fail;
	if (add_type(m, &NpuDevice_Type, "Device") < 0 ||
	    add_type(m, &NpuContext_Type, "Context") < 0 ||
	    add_type(m, &NpuBuffer_Type, "Buffer") < 0 ||
	    add_type(m, &NpuTensor_Type, "Tensor") < 0 ||
	    add_type(m, &NpuOp_Type, "Op") < 0 ||
	    add_type(m, &NpuModel_Type, "Model") < 0 || npu_py_model_types(m) < 0)
		goto fail;
	if (PyModule_AddStringConstant(m, "libnpu_version", npu_version()) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
