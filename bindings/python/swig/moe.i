/*
 * Expert parallelism: the dt_moe_plan handle and the argument conventions
 * of dtrain/moe.h.
 *
 * dt_moe_plan is an empty class whose destructor calls dt_moe_plan_destroy(),
 * like the communicator. Scalars the C calls write through pointers (the
 * dropped count, a loss, the received rows, the local experts) come back as
 * return values; the optional tensors of the losses (counts, d_logits) take
 * None for NULL; dt_moe_plan_expert_counts takes n and returns a list.
 */

%nodefaultctor dt_moe_plan;
typedef struct dt_moe_plan {} dt_moe_plan;
%extend dt_moe_plan {
  ~dt_moe_plan() { dt_moe_plan_destroy($self); }
}
%delobject dt_moe_plan_destroy;

%typemap(in, numinputs=0) dt_moe_plan **out (dt_moe_plan *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_moe_plan **out {
  /* Ctrl-C in a later call on it aborts the communicator it was made on, arg2 of dt_moe_plan_create(out, comm, ...). */
  dtpy_owner_set(*$1, arg2);
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_moe_plan *), SWIG_POINTER_OWN));
}

%typemap(in, numinputs=0) int64_t *dropped (int64_t value = 0), int64_t *rows (int64_t value = 0) {
  $1 = &value;
}
%typemap(argout) int64_t *dropped, int64_t *rows {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLongLong(*$1));
}
%apply double *OUTPUT { double *loss };
%apply int *OUTPUT { int *first };

/* The losses' optional tensors: None is NULL. */
%typemap(in) DLTensor *counts (dtpy_tensor temp, int converted = 0), DLTensor *d_logits (dtpy_tensor temp, int converted = 0) {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (dtpy_tensor_arg($input, $descriptor(dtpy_tensor *), 1, "$1_name", &temp, &$1, &converted) < 0) {
    SWIG_fail;
  }
}

/* dt_moe_plan_expert_counts(plan, counts, n): n in, a list of n counts out. */
%typemap(in) (int64_t *counts, int n) (int64_t *array = NULL) {
  $2 = (int)PyLong_AsLong($input);
  if (PyErr_Occurred()) {
    dtpy_raise_argument("n");
    SWIG_fail;
  }
  array = PyMem_Calloc((size_t)($2 > 0 ? $2 : 1), sizeof(int64_t));
  if (array == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $1 = array;
}
%typemap(argout) (int64_t *counts, int n) {
  PyObject *list = PyList_New($2);
  for (int i = 0; list != NULL && i < $2; ++i) PyList_SET_ITEM(list, i, PyLong_FromLongLong($1[i]));
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(freearg) (int64_t *counts, int n) {
  PyMem_Free(array$argnum);
}

/* SWIG has no int64_t of its own: the hidden size is a Python int. */
%apply long long { int64_t hidden };
