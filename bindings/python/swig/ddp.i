/*
 * Data parallelism: the dt_ddp handle and its argument conventions.
 *
 * dt_ddp is an empty class whose destructor calls dt_ddp_destroy(), like the
 * communicator. A DDP borrows its gradients' memory for its whole life, past
 * the call that creates it, so dt_ddp_create takes Tensor objects only:
 * whoever holds the handle holds the Tensors too, and releases them after
 * destroying it (the package's dtrain.DDP does). dt_ddp_broadcast_parameters
 * blocks, so its Tensors are only needed for the call.
 */

%nodefaultctor dt_ddp;
typedef struct dt_ddp {} dt_ddp;
%extend dt_ddp {
  ~dt_ddp() { dt_ddp_destroy($self); }
}
%delobject dt_ddp_destroy;

%typemap(in, numinputs=0) dt_ddp **out (dt_ddp *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_ddp **out {
  /* Ctrl-C in a later call on it aborts the communicator it was made on, arg2 of dt_ddp_create(out, comm, ...). */
  dtpy_owner_set(*$1, arg2);
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_ddp *), SWIG_POINTER_OWN));
}

%{
/* The DLTensor pointers of a sequence of Tensors, naming `name[i]` in errors.
   None is a NULL pointer: a rank whose own array could not be taken passes
   it, so that the library's collective check refuses it on this rank and
   tells the others (DT_ERR_MISMATCH) rather than leaving them waiting. At
   least one entry is allocated, so an empty sequence reaches the library as
   n = 0 rather than as a NULL array. */
static int dtpy_tensor_pointers(PyObject *obj, swig_type_info *tensor_type, const char *name, DLTensor ***out,
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
    if (item == Py_None) {
      /* A NULL tensor, which the library refuses on every rank at once. */
      pointers[i] = NULL;
      continue;
    }
    if (!SWIG_IsOK(SWIG_ConvertPtr(item, (void **)&held, tensor_type, 0)) || held == NULL) {
      problem = "the DDP keeps its tensors: pass a writable dtrain._capi.Tensor";
    } else if (held->released) {
      problem = "the Tensor was released";
    } else if (!held->writable) {
      problem = "the Tensor was taken read-only";
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
%}

/* (grads, n) and (params, n): one Python argument, a sequence of Tensors (or None). */
%typemap(in) (const DLTensor *const *grads, size_t n) (DLTensor **pointers = NULL) {
  if (dtpy_tensor_pointers($input, $descriptor(dtpy_tensor *), "grads", &pointers, &$2) < 0) SWIG_fail;
  $1 = ($1_ltype)pointers;
}
%typemap(freearg) (const DLTensor *const *grads, size_t n) {
  PyMem_Free(pointers$argnum);
}
%typemap(in) (DLTensor *const *params, size_t n) (DLTensor **pointers = NULL) {
  if (dtpy_tensor_pointers($input, $descriptor(dtpy_tensor *), "params", &pointers, &$2) < 0) SWIG_fail;
  $1 = pointers;
}
%typemap(freearg) (DLTensor *const *params, size_t n) {
  PyMem_Free(pointers$argnum);
}

/* size_t *out and dt_bucket_state *out: returned as Python ints. */
%typemap(in, numinputs=0) size_t *out (size_t value = 0) {
  $1 = &value;
}
%typemap(argout) size_t *out {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromSize_t(*$1));
}
%typemap(in, numinputs=0) dt_bucket_state *out (dt_bucket_state value = DT_BUCKET_WAITING) {
  $1 = &value;
}
%typemap(argout) dt_bucket_state *out {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLong((long)*$1));
}

/* SWIG has no int64_t of its own: the bucket size is a Python int. */
%apply long long { int64_t bucket_bytes };
