/*
 * Python objects as DLTensors.
 *
 * An object with __dlpack__ is consumed per the DLPack protocol: its
 * "dltensor" capsule is renamed "used_dltensor" and its deleter is called
 * when the tensor is released. __dlpack_device__ is asked first: for a CUDA
 * tensor (kDLCUDA) the consumer's stream goes to __dlpack__(stream=...), so
 * that the producer makes that stream wait for its pending work (DLPack: 1
 * is the legacy default stream, 2 the per-thread one, -1 asks for no
 * synchronisation); host tensors are exported with no stream, as the
 * protocol requires. Any other object goes through the buffer protocol, with
 * the buffer's format mapped to a DLPack dtype. Writable arguments
 * (DLTensor *, e.g. recv) ask for a writable buffer.
 *
 * A tensor argument accepts any such object, converted for the duration of
 * the call, or a Tensor, which holds the conversion until it is released or
 * collected: non-blocking operations need their buffers past the call; or
 * None, passed as NULL.
 */

%{
typedef struct dtpy_tensor {
  DLTensor tensor;
  int writable;
  int released;
  DLManagedTensor *managed; /* from __dlpack__: ours to delete */
  int has_view;
  Py_buffer view;           /* from the buffer protocol: ours to release */
  int64_t *dims;            /* shape and strides of a buffer, 2 * ndim entries */
} dtpy_tensor;

static void dtpy_tensor_clear(dtpy_tensor *t) {
  if (t->managed != NULL) {
    DLManagedTensor *managed = t->managed;
    t->managed = NULL;
    if (managed->deleter != NULL) {
      /* Released after a failed call, too: a deleter that runs Python code
         (a ctypes callback) must not see the call's exception pending. */
      PyObject *type, *value, *traceback;
      PyErr_Fetch(&type, &value, &traceback);
      managed->deleter(managed);
      PyErr_Restore(type, value, traceback);
    }
  }
  if (t->has_view) {
    PyBuffer_Release(&t->view);
    t->has_view = 0;
  }
  PyMem_Free(t->dims);
  t->dims = NULL;
  t->released = 1;
}

/* The DLPack dtype of a struct-module format with one item of `itemsize` bytes. */
static int dtpy_dtype_from_format(const char *format, Py_ssize_t itemsize, DLDataType *out) {
  const char *f = format ? format : "B";
  /* Native byte order only: '@', '=' or the explicit marker of this host's. */
  if (*f == '@' || *f == '=' || *f == (PY_LITTLE_ENDIAN ? '<' : '>')) ++f;
  if (f[0] == '\0' || f[1] != '\0' || itemsize <= 0 || itemsize > 8) return -1;
  if (strchr("efd", f[0])) out->code = kDLFloat;
  else if (strchr("bhilqn", f[0])) out->code = kDLInt;
  else if (strchr("BHILQN", f[0])) out->code = kDLUInt;
  else return -1;
  out->bits = (uint8_t)(itemsize * 8);
  out->lanes = 1;
  return 0;
}

static int dtpy_tensor_from_buffer(dtpy_tensor *t, PyObject *obj, const char *name) {
  if (PyObject_GetBuffer(obj, &t->view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
    dtpy_raise_argument(name);
    return -1;
  }
  t->has_view = 1;
  /* Checked here rather than with PyBUF_WRITABLE: exporters word that refusal
     differently, and the message should not depend on the object. */
  if (t->writable && t->view.readonly) {
    PyErr_SetString(PyExc_ValueError, "the buffer is read-only");
    goto fail;
  }
  Py_buffer *v = &t->view;
  if (dtpy_dtype_from_format(v->format, v->itemsize, &t->tensor.dtype) < 0) {
    PyErr_Format(PyExc_ValueError, "buffer format '%s' has no DLPack dtype (bfloat16 needs __dlpack__)",
                 v->format ? v->format : "B");
    goto fail;
  }
  if (v->ndim > 0) {
    t->dims = PyMem_Malloc(2 * (size_t)v->ndim * sizeof(int64_t));
    if (t->dims == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
    for (int d = 0; d < v->ndim; ++d) {
      t->dims[d] = v->shape[d];
      if (v->strides != NULL) {
        /* DLPack counts strides in elements, the buffer protocol in bytes. */
        if (v->strides[d] % v->itemsize != 0) {
          PyErr_Format(PyExc_ValueError, "stride %zd bytes is not a multiple of the item size %zd",
                       v->strides[d], v->itemsize);
          goto fail;
        }
        t->dims[v->ndim + d] = v->strides[d] / v->itemsize;
      }
    }
  }
  t->tensor.data = v->buf;
  t->tensor.device.device_type = kDLCPU;
  t->tensor.device.device_id = 0;
  t->tensor.ndim = v->ndim;
  t->tensor.shape = v->ndim > 0 ? t->dims : NULL;
  t->tensor.strides = v->ndim > 0 && v->strides != NULL ? t->dims + v->ndim : NULL;
  t->tensor.byte_offset = 0;
  return 0;
fail:
  dtpy_raise_argument(name);
  dtpy_tensor_clear(t);
  return -1;
}

/* The device type __dlpack_device__ reports, kDLCPU for an object without
   it (older producers, which export host memory only); -1 with an error. */
static int dtpy_dlpack_device_type(PyObject *obj) {
  if (!PyObject_HasAttrString(obj, "__dlpack_device__")) return kDLCPU;
  PyObject *device = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
  if (device == NULL) return -1;
  long type = -1;
  if (PyTuple_Check(device) && PyTuple_GET_SIZE(device) == 2) type = PyLong_AsLong(PyTuple_GET_ITEM(device, 0));
  Py_DECREF(device);
  if (type < 0 || type > INT_MAX) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_ValueError, "__dlpack_device__ did not return (device_type, device_id)");
    }
    return -1;
  }
  return (int)type;
}

/* 1: converted, 0: __dlpack__ refused with BufferError and `obj` has a buffer
   to fall back to (numpy will not export a read-only array over DLPack 0.x),
   -1: error raised. `stream` (an int, NULL: none given) is passed on for a
   CUDA tensor. */
static int dtpy_tensor_from_dlpack(dtpy_tensor *t, PyObject *obj, const char *name, PyObject *stream) {
  const int device_type = dtpy_dlpack_device_type(obj);
  if (device_type < 0) {
    dtpy_raise_argument(name);
    return -1;
  }
  PyObject *capsule = NULL;
  if (device_type == kDLCUDA && stream != NULL) {
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    PyObject *args = method ? PyTuple_New(0) : NULL;
    PyObject *kwargs = args ? Py_BuildValue("{s:O}", "stream", stream) : NULL;
    capsule = kwargs ? PyObject_Call(method, args, kwargs) : NULL;
    Py_XDECREF(kwargs);
    Py_XDECREF(args);
    Py_XDECREF(method);
  } else {
    capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
  }
  if (capsule == NULL) {
    if (PyErr_ExceptionMatches(PyExc_BufferError) && PyObject_CheckBuffer(obj)) {
      PyErr_Clear();
      return 0;
    }
    dtpy_raise_argument(name);
    return -1;
  }
  DLManagedTensor *managed = PyCapsule_IsValid(capsule, "dltensor")
                                 ? (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor")
                                 : NULL;
  if (managed == NULL) {
    Py_DECREF(capsule);
    PyErr_SetString(PyExc_ValueError, "__dlpack__ did not return an unused \"dltensor\" capsule");
    dtpy_raise_argument(name);
    return -1;
  }
  /* From here the capsule's destructor leaves the tensor to us. */
  PyCapsule_SetName(capsule, "used_dltensor");
  Py_DECREF(capsule);
  t->managed = managed;
  t->tensor = managed->dl_tensor;
  return 1;
}

/* Fills `t` from `obj`, passing `stream` (NULL: none) to a CUDA tensor's
   __dlpack__; on failure raises InvalidArgumentError naming `name`. */
static int dtpy_tensor_init(dtpy_tensor *t, PyObject *obj, int writable, const char *name, PyObject *stream) {
  memset(t, 0, sizeof *t);
  t->writable = writable;
  if (PyObject_HasAttrString(obj, "__dlpack__")) {
    int converted = dtpy_tensor_from_dlpack(t, obj, name, stream);
    if (converted != 0) return converted > 0 ? 0 : -1;
  }
  if (PyObject_CheckBuffer(obj)) return dtpy_tensor_from_buffer(t, obj, name);
  PyErr_Format(PyExc_TypeError, "'%s' has neither __dlpack__ nor the buffer protocol",
               Py_TYPE(obj)->tp_name);
  dtpy_raise_argument(name);
  return -1;
}

/* The DLTensor for argument `name`: a Tensor's own, or `temp` converted from
   `obj` (then *converted is set and the caller releases `temp`). None is
   NULL, for the arguments a rank may leave out (recv of dt_reduce off the
   root); where a tensor is required the C API refuses NULL by name. */
static int dtpy_tensor_arg(PyObject *obj, swig_type_info *tensor_type, int writable, const char *name,
                           dtpy_tensor *temp, DLTensor **out, int *converted) {
  dtpy_tensor *held = NULL;
  if (obj == Py_None) {
    *out = NULL;
    return 0;
  }
  if (SWIG_IsOK(SWIG_ConvertPtr(obj, (void **)&held, tensor_type, 0)) && held != NULL) {
    const char *problem = held->released ? "the Tensor was released"
                          : writable && !held->writable ? "the Tensor was taken read-only"
                                                        : NULL;
    if (problem != NULL) {
      PyErr_SetString(PyExc_ValueError, problem);
      dtpy_raise_argument(name);
      return -1;
    }
    *out = &held->tensor;
    return 0;
  }
  if (dtpy_tensor_init(temp, obj, writable, name, NULL) < 0) return -1;
  *converted = 1;
  *out = &temp->tensor;
  return 0;
}
%}

%typemap(in) const DLTensor * (dtpy_tensor temp, int converted = 0) {
  if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 0, "$1_name", &temp, &$1, &converted) < 0) SWIG_fail;
}
%typemap(in) DLTensor * (dtpy_tensor temp, int converted = 0) {
  if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 1, "$1_name", &temp, &$1, &converted) < 0) SWIG_fail;
}
%typemap(freearg) const DLTensor *, DLTensor * {
  if (converted$argnum) dtpy_tensor_clear(&temp$argnum);
}

/* Tensor(obj, writable=False, name="tensor", stream=None): holds `obj` as a
   DLTensor until release() or collection; `name` is the argument errors
   refer to; `stream` (an int) is what a CUDA tensor's __dlpack__ is given,
   None giving none (DLPack's default: the legacy default stream). */
%rename(Tensor) dtpy_tensor;
%nodefaultctor dtpy_tensor;
typedef struct dtpy_tensor {
  %immutable;
  int writable;
  int released;
  %mutable;
} dtpy_tensor;
%exception dtpy_tensor::dtpy_tensor {
  $action
  if (result == NULL) SWIG_fail;
}
%extend dtpy_tensor {
  dtpy_tensor(PyObject *obj, int writable = 0, const char *name = "tensor", PyObject *stream = NULL) {
    dtpy_tensor *t = PyMem_Malloc(sizeof *t);
    if (t == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    if (dtpy_tensor_init(t, obj, writable, name, stream == Py_None ? NULL : stream) < 0) {
      PyMem_Free(t);
      return NULL;
    }
    return t;
  }
  ~dtpy_tensor() {
    dtpy_tensor_clear($self);
    PyMem_Free($self);
  }
  /* Gives the object back (buffer released, DLPack deleter called) now. */
  void release() { dtpy_tensor_clear($self); }
}
