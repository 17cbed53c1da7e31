/* SPDX-License-Identifier: MIT */
/*
 * npu._npu, the C half of the npu Python package: what the module's
 * files share.  Every libnpu call that can block runs with the GIL
 * released; every object holds a reference on the objects its libnpu
 * handle depends on, so Python frees them in an order libnpu accepts.
 */
#ifndef NPU_PY_H
#define NPU_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
/* One numpy C-API table for all of the module's files. */
#define PY_ARRAY_UNIQUE_SYMBOL npu_py_ARRAY_API
#ifndef NPU_PY_MODULE_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <npu/npu.h>
#include <npu/onnx.h>

extern PyObject *npu_py_error;		/* npu.Error */

/*
 * Raise npu.Error for libnpu's return value @code: "@what: @detail
 * (npu_strerror)", or "@what: npu_strerror" without a detail.  Returns
 * NULL, so callers can "return npu_py_raise(...)".
 */
PyObject *npu_py_raise(int code, const char *what, const char *detail);

/* numpy type number of an npu_dtype, -1 when numpy has none (bf16). */
int npu_py_dtype_to_numpy(enum npu_dtype dt);
/* npu_dtype of a numpy type number, 0 when libnpu has none. */
enum npu_dtype npu_py_dtype_from_numpy(int type_num);
/* "float32", ..., or libnpu's own name for a dtype numpy lacks. */
const char *npu_py_dtype_name(enum npu_dtype dt);
/* A numpy dtype object for @dt (new reference), or None for bf16. */
PyObject *npu_py_dtype_object(enum npu_dtype dt);
/* A tuple of ints from @rank @dims. */
PyObject *npu_py_shape(uint32_t rank, const uint32_t *dims);
/*
 * Read a shape from a sequence of ints into @dims, at most
 * NPU_TENSOR_MAX_RANK of them, each 1..UINT32_MAX (0 allowed when
 * @allow_zero).  -1 with a Python exception set.
 */
int npu_py_read_shape(PyObject *seq, const char *what, uint32_t *rank, int64_t *dims,
		      int allow_zero);

/*
 * Absolute CLOCK_MONOTONIC deadline for a timeout in seconds (None:
 * never).  -1 with ValueError for a negative or NaN timeout.
 */
int npu_py_deadline(PyObject *timeout, int64_t *deadline);

/* ---- device.c: Device, Context, Buffer ---- */

typedef struct {
	PyObject_HEAD
	struct npu_device_info info;
	struct npu_device *dev;		/* opened on first need */
	PyThread_type_lock lock;	/* guards opening @dev */
} NpuDevice;

typedef struct {
	PyObject_HEAD
	NpuDevice *device;
	struct npu_context *ctx;
	struct npu_queue *queue;	/* created on first run */
	PyThread_type_lock lock;	/* guards creating @queue */
} NpuContext;

typedef struct {
	PyObject_HEAD
	NpuContext *context;
	struct npu_buffer *buf;
	void *map;			/* CPU mapping, on first view */
} NpuBuffer;

extern PyTypeObject NpuDevice_Type;
extern PyTypeObject NpuContext_Type;
extern PyTypeObject NpuBuffer_Type;

PyObject *npu_py_devices(PyObject *self, PyObject *noargs);
/* Device for Model(device=...)/Context(device): a Device or an index. */
NpuDevice *npu_py_device_from(PyObject *arg);
/* Open the device if not yet open; -1 with npu.Error set on failure. */
int npu_py_device_open(NpuDevice *d);
/* The context's queue, created on first use; NULL with npu.Error set. */
struct npu_queue *npu_py_context_queue(NpuContext *c);
NpuContext *npu_py_context_new(NpuDevice *d);

/* ---- ops.c: Tensor, Op ---- */

extern PyTypeObject NpuTensor_Type;
extern PyTypeObject NpuOp_Type;

/* ---- model.c: Model ---- */

extern PyTypeObject NpuModel_Type;
/* Model's named tuples (IOInfo, NodeProfile), added to module @m. */
int npu_py_model_types(PyObject *m);

#endif /* NPU_PY_H */
