/*
 * Optimizers: the dt_optimizer handle and its argument conventions.
 *
 * dt_optimizer is an empty class whose destructor calls
 * dt_optimizer_destroy(), like the communicator. The optimizer borrows its
 * tensors' memory for its whole life, past the call that creates it, so
 * dt_optimizer_create takes Tensor objects only: whoever holds the handle
 * holds the Tensors too, and releases them after destroying it (the package's
 * dtrain.Optimizer does).
 */

%nodefaultctor dt_optimizer;
typedef struct dt_optimizer {} dt_optimizer;
%extend dt_optimizer {
  ~dt_optimizer() { dt_optimizer_destroy($self); }
}
%delobject dt_optimizer_destroy;

%typemap(in, numinputs=0) dt_optimizer **out (dt_optimizer *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_optimizer **out {
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_optimizer *), SWIG_POINTER_OWN));
}

%{
/* Copies the DLTensors of a sequence of (param, grad) Tensor pairs into one
   array: params first, then grads. At least one entry is allocated, so an
   empty sequence reaches the library as n = 0 rather than as NULL arrays. */
static int dtpy_tensor_pairs(PyObject *obj, swig_type_info *tensor_type, DLTensor **out, size_t *n) {
  PyObject *seq = PySequence_Fast(obj, "expected a sequence of (param, grad) Tensor pairs");
  if (seq == NULL) {
    dtpy_raise_argument("params");
    return -1;
  }
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  DLTensor *tensors = PyMem_Calloc((size_t)(count > 0 ? 2 * count : 1), sizeof(DLTensor));
  if (tensors == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
    for (int k = 0; k < 2; ++k) {
      char name[48];
      PyOS_snprintf(name, sizeof name, "%s[%zd]", k == 0 ? "params" : "grads", i);
      PyObject *item = PySequence_Check(pair) && PySequence_Size(pair) == 2 ? PySequence_GetItem(pair, k) : NULL;
      dtpy_tensor *held = NULL;
      const char *problem = NULL;
      if (item == NULL) {
        PyErr_Clear();
        problem = "expected a (param, grad) pair";
      } else if (!SWIG_IsOK(SWIG_ConvertPtr(item, (void **)&held, tensor_type, 0)) || held == NULL) {
        problem = "the optimizer keeps its tensors: pass a writable dtrain._capi.Tensor";
      } else if (held->released) {
        problem = "the Tensor was released";
      } else if (!held->writable) {
        problem = "the Tensor was taken read-only";
      }
      Py_XDECREF(item);
      if (problem != NULL) {
        PyErr_SetString(PyExc_ValueError, problem);
        dtpy_raise_argument(name);
        PyMem_Free(tensors);
        Py_DECREF(seq);
        return -1;
      }
      tensors[k * count + i] = held->tensor;
    }
  }
  Py_DECREF(seq);
  *out = tensors;
  *n = (size_t)count;
  return 0;
}
%}

/* (params, grads, n): one Python argument, a sequence of (param, grad) Tensor pairs. */
%typemap(in) (DLTensor *params, DLTensor *grads, size_t n) (DLTensor *tensors = NULL) {
  if (dtpy_tensor_pairs($input, $descriptor(dtpy_tensor *), &tensors, &$3) < 0) SWIG_fail;
  $1 = tensors;
  $2 = tensors + $3;
}
%typemap(freearg) (DLTensor *params, DLTensor *grads, size_t n) {
  PyMem_Free(tensors$argnum);
}

/* dt_optimizer_step_info *info: not passed; a new dt_optimizer_step_info is returned. */
%typemap(in, numinputs=0) dt_optimizer_step_info *info (dt_optimizer_step_info value) {
  memset(&value, 0, sizeof value);
  value.version = DT_OPTIMIZER_STEP_INFO_VERSION;
  $1 = &value;
}
%typemap(argout) dt_optimizer_step_info *info {
  dt_optimizer_step_info *copy = (dt_optimizer_step_info *)malloc(sizeof *copy);
  if (copy == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  *copy = *$1;
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $descriptor(dt_optimizer_step_info *), SWIG_POINTER_OWN));
}

%apply float *OUTPUT { float *out };

/* SWIG has no int64_t of its own: the step count is a Python int. */
%apply long long { int64_t step };
