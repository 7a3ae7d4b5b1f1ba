/*
 * ZeRO: the dt_zero handle and its argument conventions.
 *
 * dt_zero is an empty class whose destructor calls dt_zero_destroy(), like
 * the communicator. Unlike a DDP, a dt_zero owns its parameters and
 * gradients: the initial values are only read during dt_zero_create, so it
 * takes a sequence of Tensors (or None) that the caller may release after
 * the call. dt_zero_parameter and dt_zero_gradient describe memory the
 * dt_zero owns; they return that description as plain Python values, from
 * which the package's dtrain.Zero builds numpy views.
 */

%nodefaultctor dt_zero;
typedef struct dt_zero {} dt_zero;
%extend dt_zero {
  ~dt_zero() { dt_zero_destroy($self); }
}
%delobject dt_zero_destroy;

%typemap(in, numinputs=0) dt_zero **out (dt_zero *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_zero **out {
  /* Ctrl-C in a later call on it aborts the communicator it was made on, arg2 of dt_zero_create(out, comm, ...). */
  dtpy_owner_set(*$1, arg2);
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_zero *), SWIG_POINTER_OWN));
}

%{
/* The DLTensor pointers of a sequence of live Tensors, naming `name[i]` in
   errors. None is a NULL pointer: a rank whose own array could not be taken
   passes it, so that the library's collective check refuses it on this rank
   and tells the others rather than leaving them waiting. At least one entry
   is allocated, so an empty sequence reaches the library as n = 0. */
static int dtpy_zero_tensors(PyObject *obj, swig_type_info *tensor_type, const char *name, DLTensor ***out,
                             size_t *n) {
  PyObject *seq = PySequence_Fast(obj, "expected a sequence of Tensors");
  if (seq == NULL) {
    dtpy_raise_argument(name);
    return -1;
  }
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  DLTensor **pointers = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof(DLTensor *));
  if (pointers == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    dtpy_tensor *held = NULL;
    const char *problem = NULL;
    if (item == Py_None) continue;
    if (!SWIG_IsOK(SWIG_ConvertPtr(item, (void **)&held, tensor_type, 0)) || held == NULL) {
      problem = "expected a dtrain._capi.Tensor";
    } else if (held->released) {
      problem = "the Tensor was released";
    }
    if (problem != NULL) {
      char what[48];
      PyOS_snprintf(what, sizeof what, "%s[%zd]", name, i);
      PyErr_SetString(PyExc_ValueError, problem);
      dtpy_raise_argument(what);
      PyMem_Free(pointers);
      Py_DECREF(seq);
      return -1;
    }
    /* The Tensor lives in the sequence, which the caller holds through the call. */
    pointers[i] = &held->tensor;
  }
  Py_DECREF(seq);
  *out = pointers;
  *n = (size_t)count;
  return 0;
}

/* What dt_zero_parameter / dt_zero_gradient filled in, while `t`'s shape is
   still valid: (data address, device type, device id, dtype code, bits,
   lanes, shape, strides or None, byte offset). */
static PyObject *dtpy_tensor_description(const DLTensor *t) {
  PyObject *shape = PyTuple_New(t->ndim > 0 ? t->ndim : 0);
  PyObject *strides = t->strides != NULL ? PyTuple_New(t->ndim > 0 ? t->ndim : 0) : (Py_INCREF(Py_None), Py_None);
  if (shape == NULL || strides == NULL) goto fail;
  for (int d = 0; d < t->ndim; ++d) {
    PyObject *extent = PyLong_FromLongLong((long long)t->shape[d]);
    if (extent == NULL) goto fail;
    PyTuple_SET_ITEM(shape, d, extent);
    if (t->strides != NULL) {
      PyObject *stride = PyLong_FromLongLong((long long)t->strides[d]);
      if (stride == NULL) goto fail;
      PyTuple_SET_ITEM(strides, d, stride);
    }
  }
  return Py_BuildValue("(NiiiiiNNK)", PyLong_FromVoidPtr(t->data), (int)t->device.device_type,
                       (int)t->device.device_id, (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes,
                       shape, strides, (unsigned long long)t->byte_offset);
fail:
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return NULL;
}

/* A sequence of non-negative ints as a PyMem array of size_t (None: NULL, 0). */
static int dtpy_sizes(PyObject *obj, const char *name, size_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  if (obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "expected a sequence of ints");
  if (seq == NULL) goto fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(size_t));
  if (*out == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *index = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
    (*out)[i] = index ? PyLong_AsSize_t(index) : 0;
    Py_XDECREF(index);
    if (PyErr_Occurred()) {
      Py_DECREF(seq);
      PyMem_Free(*out);
      *out = NULL;
      goto fail;
    }
  }
  Py_DECREF(seq);
  *count = (size_t)n;
  return 0;
fail:
  dtpy_raise_argument(name);
  return -1;
}
%}

/* (params, n): one Python argument, a sequence of Tensors (or None). */
%typemap(in) (const DLTensor *const *params, size_t n) (DLTensor **pointers = NULL) {
  if (dtpy_zero_tensors($input, $descriptor(dtpy_tensor *), "params", &pointers, &$2) < 0) SWIG_fail;
  $1 = ($1_ltype)pointers;
}
%typemap(freearg) (const DLTensor *const *params, size_t n) {
  PyMem_Free(pointers$argnum);
}

/* DLTensor *out: not passed; the description of the filled tensor is returned. */
%typemap(in, numinputs=0) DLTensor *out (DLTensor value) {
  memset(&value, 0, sizeof value);
  $1 = &value;
}
%typemap(argout) DLTensor *out {
  PyObject *description = dtpy_tensor_description($1);
  if (description == NULL) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, description);
}
%typemap(freearg) DLTensor *out ""

/* dt_zero_memory *out: not passed; a new dt_zero_memory is returned. */
%typemap(in, numinputs=0) dt_zero_memory *out (dt_zero_memory value) {
  memset(&value, 0, sizeof value);
  value.version = DT_ZERO_MEMORY_VERSION;
  $1 = &value;
}
%typemap(argout) dt_zero_memory *out {
  dt_zero_memory *copy = (dt_zero_memory *)malloc(sizeof *copy);
  if (copy == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  *copy = *$1;
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $descriptor(dt_zero_memory *), SWIG_POINTER_OWN));
}

/* dt_zero_options: built with dt_zero_options(), filled by
   dt_zero_options_init(), then set_unit_sizes() and set_norm_excluded();
   the arrays are copies owned by the struct. */
%ignore dt_zero_options::unit_sizes;
%immutable dt_zero_options::unit_count;
%ignore dt_zero_options::norm_excluded;
%immutable dt_zero_options::norm_excluded_count;
%typemap(in) (const size_t *sizes, size_t count) (size_t *sizes = NULL) {
  if (dtpy_sizes($input, "unit_sizes", &sizes, &$2) < 0) SWIG_fail;
  $1 = sizes;
}
%typemap(freearg) (const size_t *sizes, size_t count) {
  PyMem_Free(sizes$argnum);
}
%typemap(in) (const size_t *indices, size_t count) (size_t *indices = NULL) {
  if (dtpy_sizes($input, "norm_excluded", &indices, &$2) < 0) SWIG_fail;
  $1 = indices;
}
%typemap(freearg) (const size_t *indices, size_t count) {
  PyMem_Free(indices$argnum);
}
%exception dt_zero_options::set_unit_sizes {
  $action
  if (PyErr_Occurred()) SWIG_fail;
}
%exception dt_zero_options::set_norm_excluded {
  $action
  if (PyErr_Occurred()) SWIG_fail;
}
%{
/* Replaces the array *field (of *field_count entries, malloc'ed or NULL)
   with a copy of values[0..count), or NULL for NULL values. */
static void dtpy_replace_sizes(const size_t **field, size_t *field_count, const size_t *values, size_t count) {
  size_t *copy = NULL;
  if (values != NULL) {
    copy = malloc((count > 0 ? count : 1) * sizeof(size_t));
    if (copy == NULL) {
      PyErr_NoMemory();
      return;
    }
    memcpy(copy, values, count * sizeof(size_t));
  }
  free((size_t *)*field);
  *field = copy;
  *field_count = values != NULL ? count : 0;
}
%}
%extend dt_zero_options {
  dt_zero_options() { return calloc(1, sizeof(dt_zero_options)); }
  ~dt_zero_options() {
    free((size_t *)$self->unit_sizes);
    free((size_t *)$self->norm_excluded);
    free($self);
  }
  /* None (or no sizes): one unit per parameter. */
  void set_unit_sizes(const size_t *sizes, size_t count) {
    dtpy_replace_sizes(&$self->unit_sizes, &$self->unit_count, sizes, count);
  }
  /* None: every parameter counts in the norm. */
  void set_norm_excluded(const size_t *indices, size_t count) {
    dtpy_replace_sizes(&$self->norm_excluded, &$self->norm_excluded_count, indices, count);
  }
}

/* SWIG has no int64_t of its own: byte counts are Python ints. */
%apply long long { int64_t parameters, int64_t gradients, int64_t optimizer_state, int64_t master_weights,
                   int64_t communication, int64_t padding, int64_t peak };
