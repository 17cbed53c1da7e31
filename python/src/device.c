// SPDX-License-Identifier: MIT
/*
 * npu.Device, npu.Context and npu.Buffer: discovery, address spaces and
 * device memory seen from Python as writable bytes.
 */
#include "npu_py.h"

#include <errno.h>
#include <string.h>

/* ---- Device ---- */

static NpuDevice *device_new(const struct npu_device_info *info)
{
	NpuDevice *d = PyObject_New(NpuDevice, &NpuDevice_Type);

	if (!d)
		return NULL;
	d->info = *info;
	d->dev = NULL;
	d->lock = PyThread_allocate_lock();
	if (!d->lock) {
		Py_DECREF(d);
		return (NpuDevice *)PyErr_NoMemory();
	}
	return d;
}

/* Look an index up in a fresh list; NULL with npu.Error when absent. */
static NpuDevice *device_by_index(long index)
{
	struct npu_device_list *list = NULL;
	struct npu_device_info info;
	NpuDevice *d = NULL;
	size_t n;
	int r;

	Py_BEGIN_ALLOW_THREADS
	r = npu_device_list(&list);
	Py_END_ALLOW_THREADS
	if (r)
		return (NpuDevice *)npu_py_raise(r, "npu.devices", NULL);
	n = npu_device_list_count(list);
	if (index < 0 || (size_t)index >= n) {
		char detail[96], what[48];

		snprintf(detail, sizeof(detail), "there %s %zu vnpu device%s", n == 1 ? "is" : "are",
			 n, n == 1 ? "" : "s");
		snprintf(what, sizeof(what), "device %ld", index);
		npu_device_list_free(list);
		return (NpuDevice *)npu_py_raise(-ENODEV, what, detail);
	}
	r = npu_device_list_get_info(list, (size_t)index, &info, sizeof(info));
	npu_device_list_free(list);
	if (r)
		return (NpuDevice *)npu_py_raise(r, "npu.devices", NULL);
	d = device_new(&info);
	return d;
}

PyObject *npu_py_devices(PyObject *self, PyObject *noargs)
{
	struct npu_device_list *list = NULL;
	PyObject *out;
	size_t n;
	int r;

	(void)self;
	(void)noargs;
	Py_BEGIN_ALLOW_THREADS
	r = npu_device_list(&list);
	Py_END_ALLOW_THREADS
	if (r)
		return npu_py_raise(r, "npu.devices", NULL);
	n = npu_device_list_count(list);
	out = PyList_New(0);
	for (size_t i = 0; out && i < n; i++) {
		struct npu_device_info info;
		NpuDevice *d;

		r = npu_device_list_get_info(list, i, &info, sizeof(info));
		if (r) {
			Py_CLEAR(out);
			npu_py_raise(r, "npu.devices", NULL);
			break;
		}
		d = device_new(&info);
		if (!d || PyList_Append(out, (PyObject *)d) < 0)
			Py_CLEAR(out);
		Py_XDECREF(d);
	}
	npu_device_list_free(list);
	return out;
}

NpuDevice *npu_py_device_from(PyObject *arg)
{
	long index;

	if (PyObject_TypeCheck(arg, &NpuDevice_Type))
		return (NpuDevice *)Py_NewRef(arg);
	if (!PyLong_Check(arg) || PyBool_Check(arg)) {
		PyErr_Format(PyExc_TypeError, "device must be an npu.Device or an index, not %.80s",
			     Py_TYPE(arg)->tp_name);
		return NULL;
	}
	index = PyLong_AsLong(arg);
	if (index == -1 && PyErr_Occurred())
		return NULL;
	return device_by_index(index);
}

int npu_py_device_open(NpuDevice *d)
{
	int r = 0;

	Py_BEGIN_ALLOW_THREADS
	PyThread_acquire_lock(d->lock, WAIT_LOCK);
	if (!d->dev)
		r = npu_device_open_pci(d->info.pci_address, &d->dev);
	PyThread_release_lock(d->lock);
	Py_END_ALLOW_THREADS
	if (r) {
		char what[96];

		snprintf(what, sizeof(what), "device %u (%s)", d->info.index, d->info.pci_address);
		npu_py_raise(r, what, "opening it");
		return -1;
	}
	return 0;
}

static PyObject *Device_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "index", NULL };
	long index;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "l:Device", kwlist, &index))
		return NULL;
	return (PyObject *)device_by_index(index);
}

static void Device_dealloc(NpuDevice *d)
{
	npu_device_close(d->dev);
	if (d->lock)
		PyThread_free_lock(d->lock);
	PyObject_Free(d);
}

static PyObject *Device_repr(NpuDevice *d)
{
	return PyUnicode_FromFormat("<npu.Device %u %s at %s>", d->info.index, d->info.node,
				    d->info.pci_address);
}

static PyObject *caps_list(uint64_t caps)
{
	PyObject *l = PyList_New(0);

	for (int b = 0; l && b < 64; b++) {
		const char *n;
		PyObject *s;

		if (!(caps & (1ull << b)))
			continue;
		n = npu_cap_name(1ull << b);
		s = n ? PyUnicode_FromString(n) : PyUnicode_FromFormat("bit%d", b);
		if (!s || PyList_Append(l, s) < 0)
			Py_CLEAR(l);
		Py_XDECREF(s);
	}
	return l;
}

static PyObject *Device_get_info(NpuDevice *d, void *closure)
{
	const struct npu_device_info *i = &d->info;
	PyObject *caps, *out;

	(void)closure;
	if (i->query_error)
		return Py_BuildValue("{s:I,s:I,s:s,s:s,s:s,s:H,s:H,s:B,s:i,s:s}",
				     "index", i->index, "minor", i->minor, "node", i->node,
				     "pci_address", i->pci_address, "driver", i->driver,
				     "pci_vendor", i->pci_vendor, "pci_device", i->pci_device,
				     "pci_revision", i->pci_revision, "query_error", i->query_error,
				     "query_error_text", npu_strerror(i->query_error));
	caps = caps_list(i->caps);
	if (!caps)
		return NULL;
	out = Py_BuildValue("{s:I,s:I,s:s,s:s,s:s,s:H,s:H,s:B,s:i,s:s,s:I,s:N,s:K,"
			    "s:I,s:I,s:I,s:I,s:K,s:K,s:K,s:I,s:I,s:s}",
			    "index", i->index, "minor", i->minor, "node", i->node,
			    "pci_address", i->pci_address, "driver", i->driver,
			    "pci_vendor", i->pci_vendor, "pci_device", i->pci_device,
			    "pci_revision", i->pci_revision, "query_error", 0,
			    "hw_version", "", "platform", i->platform, "caps", caps,
			    "caps_mask", (unsigned long long)i->caps,
			    "num_queues", i->num_queues, "num_engines", i->num_engines,
			    "va_bits", i->va_bits, "max_cmd_size", i->max_cmd_size,
			    "va_start", (unsigned long long)i->va_start,
			    "va_end", (unsigned long long)i->va_end,
			    "max_bo_size", (unsigned long long)i->max_bo_size,
			    "clock_mhz", i->clock_mhz, "macs_per_cycle", i->macs_per_cycle,
			    "driver_version", i->driver_version);
	if (out) {
		PyObject *hv = PyUnicode_FromFormat("%u.%u", i->hw_version >> 16,
						    i->hw_version & 0xffff);

		if (!hv || PyDict_SetItemString(out, "hw_version", hv) < 0)
			Py_CLEAR(out);
		Py_XDECREF(hv);
	}
	return out;
}

static PyObject *Device_get_limits(NpuDevice *d, void *closure)
{
	struct npu_device_limits l;
	int r;

	(void)closure;
	if (npu_py_device_open(d) < 0)
		return NULL;
	r = npu_device_get_limits(d->dev, &l, sizeof(l));
	if (r)
		return npu_py_raise(r, "Device.limits", NULL);
	return Py_BuildValue("{s:O,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
			     "reported", l.reported ? Py_True : Py_False,
			     "tensor_elems", (unsigned long long)l.tensor_elems,
			     "tensor_bytes", (unsigned long long)l.tensor_bytes,
			     "cmd_bytes", (unsigned long long)l.cmd_bytes,
			     "cmd_macs", (unsigned long long)l.cmd_macs,
			     "reduction", (unsigned long long)l.reduction,
			     "kernel_dim", (unsigned long long)l.kernel_dim,
			     "channels", (unsigned long long)l.channels);
}

static PyObject *Device_get_index(NpuDevice *d, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(d->info.index);
}

static PyObject *Device_get_name(NpuDevice *d, void *c)
{
	const char *slash = strrchr(d->info.node, '/');

	(void)c;
	return PyUnicode_FromString(slash ? slash + 1 : d->info.node);
}

static PyObject *Device_get_node(NpuDevice *d, void *c)
{
	(void)c;
	return PyUnicode_FromString(d->info.node);
}

static PyObject *Device_get_pci(NpuDevice *d, void *c)
{
	(void)c;
	return PyUnicode_FromString(d->info.pci_address);
}

static PyGetSetDef Device_getset[] = {
	{ "index", (getter)Device_get_index, NULL, "Position in npu.devices().", NULL },
	{ "name", (getter)Device_get_name, NULL, "The accel node's name, 'accel0'.", NULL },
	{ "node", (getter)Device_get_node, NULL, "The accel node, '/dev/accel/accel0'.", NULL },
	{ "pci_address", (getter)Device_get_pci, NULL, "'0000:00:04.0'.", NULL },
	{ "info", (getter)Device_get_info, NULL,
	  "dict of struct npu_device_info: PCI identity, and unless query_error\n"
	  "the device's answer (hw_version, caps, num_queues, va range, ...).", NULL },
	{ "limits", (getter)Device_get_limits, NULL,
	  "dict of struct npu_device_limits: the largest compute command the\n"
	  "device takes (opens the device).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Device_doc,
"Device(index)\n--\n\n"
"One NPU, as npu.devices() lists it.  Device(index) looks the index up\n"
"and raises npu.Error (errno ENODEV) when there is no such device.\n"
"The node is opened on first need (limits, a Context, a Model).");

PyTypeObject NpuDevice_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu.Device",
	.tp_basicsize = sizeof(NpuDevice),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Device_doc,
	.tp_new = Device_new,
	.tp_dealloc = (destructor)Device_dealloc,
	.tp_repr = (reprfunc)Device_repr,
	.tp_getset = Device_getset,
};

/* ---- Context ---- */

NpuContext *npu_py_context_new(NpuDevice *d)
{
	NpuContext *c;
	int r;

	if (npu_py_device_open(d) < 0)
		return NULL;
	c = PyObject_New(NpuContext, &NpuContext_Type);
	if (!c)
		return NULL;
	c->device = (NpuDevice *)Py_NewRef(d);
	c->ctx = NULL;
	c->queue = NULL;
	c->lock = PyThread_allocate_lock();
	if (!c->lock) {
		Py_DECREF(c);
		return (NpuContext *)PyErr_NoMemory();
	}
	Py_BEGIN_ALLOW_THREADS
	r = npu_context_create(d->dev, &c->ctx);
	Py_END_ALLOW_THREADS
	if (r) {
		Py_DECREF(c);
		return (NpuContext *)npu_py_raise(r, "npu.Context", "creating the context");
	}
	return c;
}

struct npu_queue *npu_py_context_queue(NpuContext *c)
{
	int r = 0;

	Py_BEGIN_ALLOW_THREADS
	PyThread_acquire_lock(c->lock, WAIT_LOCK);
	if (!c->queue)
		r = npu_queue_create(c->ctx, 0, NPU_PRIORITY_NORMAL, &c->queue);
	PyThread_release_lock(c->lock);
	Py_END_ALLOW_THREADS
	if (r) {
		npu_py_raise(r, "npu.Context", "creating its queue");
		return NULL;
	}
	return c->queue;
}

static PyObject *Context_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "device", NULL };
	PyObject *arg;
	NpuDevice *d;
	NpuContext *c;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Context", kwlist, &arg))
		return NULL;
	d = npu_py_device_from(arg);
	if (!d)
		return NULL;
	c = npu_py_context_new(d);
	Py_DECREF(d);
	return (PyObject *)c;
}

static void Context_dealloc(NpuContext *c)
{
	/* Buffers and ops of the context hold it, so none is left here. */
	npu_queue_destroy(c->queue);
	npu_context_destroy(c->ctx);
	if (c->lock)
		PyThread_free_lock(c->lock);
	Py_XDECREF(c->device);
	PyObject_Free(c);
}

static PyObject *Context_alloc(NpuContext *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "size", "readonly", NULL };
	unsigned long long size;
	int readonly = 0, r;
	NpuBuffer *b;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "K|$p:alloc", kwlist, &size, &readonly))
		return NULL;
	b = PyObject_New(NpuBuffer, &NpuBuffer_Type);
	if (!b)
		return NULL;
	b->context = (NpuContext *)Py_NewRef(c);
	b->buf = NULL;
	b->map = NULL;
	Py_BEGIN_ALLOW_THREADS
	r = npu_buffer_alloc(c->ctx, size, readonly ? NPU_BUFFER_DEVICE_READONLY : 0, &b->buf);
	Py_END_ALLOW_THREADS
	if (r) {
		char what[64];

		snprintf(what, sizeof(what), "Context.alloc(%llu)", size);
		Py_DECREF(b);
		return npu_py_raise(r, what, NULL);
	}
	return (PyObject *)b;
}

static PyObject *Context_get_device(NpuContext *c, void *closure)
{
	(void)closure;
	return Py_NewRef(c->device);
}

static PyMethodDef Context_methods[] = {
	{ "alloc", (PyCFunction)(void (*)(void))Context_alloc, METH_VARARGS | METH_KEYWORDS,
	  "alloc($self, /, size, *, readonly=False)\n--\n\n"
	  "A Buffer: device memory of size bytes (rounded up to a page), mapped into this\n"
	  "context; readonly: the device may only read it." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Context_getset[] = {
	{ "device", (getter)Context_get_device, NULL, "The Device this context is on.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Context_doc,
"Context(device)\n--\n\n"
"A device address space (its own file on the accel node): buffers are\n"
"allocated in one, and ops whose tensors live in its buffers run on its\n"
"queue.  device is a Device or an index.  Keeps the device alive.");

PyTypeObject NpuContext_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu.Context",
	.tp_basicsize = sizeof(NpuContext),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Context_doc,
	.tp_new = Context_new,
	.tp_dealloc = (destructor)Context_dealloc,
	.tp_methods = Context_methods,
	.tp_getset = Context_getset,
};

/* ---- Buffer ---- */

static int Buffer_getbuffer(NpuBuffer *b, Py_buffer *view, int flags)
{
	int r;

	if (!b->map) {
		void *p = NULL;

		Py_BEGIN_ALLOW_THREADS
		r = npu_buffer_map(b->buf, &p);
		Py_END_ALLOW_THREADS
		if (r) {
			npu_py_raise(r, "Buffer", "mapping it for the CPU");
			return -1;
		}
		b->map = p;
	}
	if (PyBuffer_FillInfo(view, (PyObject *)b, b->map, (Py_ssize_t)npu_buffer_size(b->buf), 0,
			      flags) < 0)
		return -1;
	return 0;
}

/* A view holds a reference on the Buffer, so nothing is freed under it. */
static PyBufferProcs Buffer_as_buffer = {
	.bf_getbuffer = (getbufferproc)Buffer_getbuffer,
};

static void Buffer_dealloc(NpuBuffer *b)
{
	/* Tensors and ops bound to it hold libnpu references of their own. */
	npu_buffer_free(b->buf);
	Py_XDECREF(b->context);
	PyObject_Free(b);
}

static PyObject *Buffer_wait_idle(NpuBuffer *b, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *timeout = Py_None;
	int64_t deadline;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait_idle", kwlist, &timeout) ||
	    npu_py_deadline(timeout, &deadline) < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = npu_buffer_wait_idle(b->buf, deadline);
	Py_END_ALLOW_THREADS
	if (r)
		return npu_py_raise(r, "Buffer.wait_idle", NULL);
	Py_RETURN_NONE;
}

static PyObject *Buffer_asarray(NpuBuffer *b, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dtype", "shape", "offset", NULL };
	PyArray_Descr *descr = NULL;
	PyObject *shape, *arr;
	unsigned long long offset = 0, bytes;
	int64_t d64[NPU_TENSOR_MAX_RANK];
	npy_intp dims[NPU_TENSOR_MAX_RANK];
	uint32_t rank;
	Py_buffer view;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|K:asarray", kwlist, PyArray_DescrConverter,
					 &descr, &shape, &offset))
		return NULL;
	if (npu_py_read_shape(shape, "Buffer.asarray", &rank, d64, 1) < 0) {
		Py_DECREF(descr);
		return NULL;
	}
	bytes = (unsigned long long)descr->elsize;
	for (uint32_t i = 0; i < rank; i++) {
		dims[i] = (npy_intp)d64[i];
		bytes *= (unsigned long long)d64[i];
	}
	if (offset > npu_buffer_size(b->buf) || bytes > npu_buffer_size(b->buf) - offset) {
		PyErr_Format(PyExc_ValueError,
			     "Buffer.asarray: %llu bytes at offset %llu do not fit in the buffer's %llu",
			     bytes, offset, (unsigned long long)npu_buffer_size(b->buf));
		Py_DECREF(descr);
		return NULL;
	}
	if (Buffer_getbuffer(b, &view, PyBUF_WRITABLE) < 0) {
		Py_DECREF(descr);
		return NULL;
	}
	PyBuffer_Release(&view);
	/* The array's base is the buffer, so the memory outlives the view. */
	arr = PyArray_NewFromDescr(&PyArray_Type, descr, (int)rank, dims, NULL,
				   (char *)b->map + offset, NPY_ARRAY_CARRAY, NULL);
	if (!arr)
		return NULL;
	if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(b)) < 0) {
		Py_DECREF(arr);
		return NULL;
	}
	return arr;
}

static PyObject *Buffer_get_va(NpuBuffer *b, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(npu_buffer_va(b->buf));
}

static PyObject *Buffer_get_size(NpuBuffer *b, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(npu_buffer_size(b->buf));
}

static PyObject *Buffer_get_handle(NpuBuffer *b, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(npu_buffer_handle(b->buf));
}

static PyObject *Buffer_get_context(NpuBuffer *b, void *c)
{
	(void)c;
	return Py_NewRef(b->context);
}

static Py_ssize_t Buffer_len(NpuBuffer *b)
{
	return (Py_ssize_t)npu_buffer_size(b->buf);
}

static PySequenceMethods Buffer_as_sequence = {
	.sq_length = (lenfunc)Buffer_len,
};

static PyMethodDef Buffer_methods[] = {
	{ "wait_idle", (PyCFunction)(void (*)(void))Buffer_wait_idle, METH_VARARGS | METH_KEYWORDS,
	  "wait_idle($self, /, timeout=None)\n--\n\n"
	  "Wait until no device job uses the buffer; npu.Error (ETIMEDOUT) when\n"
	  "timeout seconds pass first." },
	{ "asarray", (PyCFunction)(void (*)(void))Buffer_asarray, METH_VARARGS | METH_KEYWORDS,
	  "asarray($self, /, dtype, shape, offset=0)\n--\n\n"
	  "A numpy.ndarray view of the buffer's memory (no copy), which keeps the buffer alive." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Buffer_getset[] = {
	{ "va", (getter)Buffer_get_va, NULL, "Device virtual address.", NULL },
	{ "size", (getter)Buffer_get_size, NULL, "Bytes (a whole number of pages).", NULL },
	{ "handle", (getter)Buffer_get_handle, NULL, "GEM handle on the context's file.", NULL },
	{ "context", (getter)Buffer_get_context, NULL, "The Context it belongs to.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(Buffer_doc,
"Device memory, from Context.alloc().\n\n"
"Supports the buffer protocol: memoryview(buf), numpy.frombuffer(buf,\n"
"dtype) and buf.asarray(dtype, shape) see the device memory itself\n"
"through its CPU mapping.  A Tensor bound to it and an Op using it keep\n"
"it allocated.");

PyTypeObject NpuBuffer_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu.Buffer",
	.tp_basicsize = sizeof(NpuBuffer),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Buffer_doc,
	.tp_dealloc = (destructor)Buffer_dealloc,
	.tp_as_buffer = &Buffer_as_buffer,
	.tp_as_sequence = &Buffer_as_sequence,
	.tp_methods = Buffer_methods,
	.tp_getset = Buffer_getset,
};
