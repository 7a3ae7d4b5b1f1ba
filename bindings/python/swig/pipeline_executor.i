/*
 * The pipeline executor: the dt_pipeline handle, its options and its step.
 *
 * The trainer's callbacks are Python: the package's dtrain.Pipeline fills a
 * dt_pipeline_options with dtpy_pipeline_options_set(), which points every
 * callback at a C trampoline here and `user` at a Python object (kept alive
 * by the dtrain.Pipeline). dt_pipeline_step runs without the GIL; each
 * trampoline takes it, calls the object's _forward, _backward,
 * _backward_weight or _chunk_done method with memoryviews over the
 * executor's buffers (None for a NULL tensor), and returns the int status
 * the method returns. The methods catch every exception themselves; one
 * that escapes anyway becomes DT_ERR_ABORTED.
 *
 * dt_pipeline_step(p) returns the step's measurements as the tuple
 * (step_seconds, recv_wait_seconds, comm_wait_seconds, bubble_fraction,
 * peak_in_flight).
 */

%{
/* A memoryview over a callback's tensor, or None. */
static PyObject *dtpy_activation_view(const DLTensor *t, int writable) {
  if (t == NULL) Py_RETURN_NONE;
  Py_ssize_t bytes = (Py_ssize_t)(t->shape[0] * ((t->dtype.bits * t->dtype.lanes + 7) / 8));
  return PyMemoryView_FromMemory((char *)t->data, bytes, writable ? PyBUF_WRITE : PyBUF_READ);
}

/* The status a trampoline returns for the method call's result (a new
   reference or NULL), which it releases. Called with the GIL. */
static dt_status dtpy_callback_status(PyObject *result) {
  if (result == NULL) {
    PyErr_Clear();
    return DT_ERR_ABORTED;
  }
  long status = PyLong_AsLong(result);
  Py_DECREF(result);
  if (status == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return DT_ERR_ABORTED;
  }
  return (dt_status)status;
}

static dt_status dtpy_pipeline_forward(void *user, int chunk, int microbatch, const DLTensor *input,
                                       DLTensor *output) {
  PyGILState_STATE gil = PyGILState_Ensure();
  dt_status status = dtpy_callback_status(PyObject_CallMethod((PyObject *)user, "_forward", "iiNN", chunk,
                                                              microbatch, dtpy_activation_view(input, 0),
                                                              dtpy_activation_view(output, 1)));
  PyGILState_Release(gil);
  return status;
}

static dt_status dtpy_pipeline_backward(void *user, int chunk, int microbatch, const DLTensor *grad_output,
                                        DLTensor *grad_input) {
  PyGILState_STATE gil = PyGILState_Ensure();
  dt_status status = dtpy_callback_status(PyObject_CallMethod((PyObject *)user, "_backward", "iiNN", chunk,
                                                              microbatch, dtpy_activation_view(grad_output, 0),
                                                              dtpy_activation_view(grad_input, 1)));
  PyGILState_Release(gil);
  return status;
}

static dt_status dtpy_pipeline_backward_weight(void *user, int chunk, int microbatch) {
  PyGILState_STATE gil = PyGILState_Ensure();
  dt_status status =
      dtpy_callback_status(PyObject_CallMethod((PyObject *)user, "_backward_weight", "ii", chunk, microbatch));
  PyGILState_Release(gil);
  return status;
}

static dt_status dtpy_pipeline_chunk_done(void *user, int chunk) {
  PyGILState_STATE gil = PyGILState_Ensure();
  dt_status status = dtpy_callback_status(PyObject_CallMethod((PyObject *)user, "_chunk_done", "i", chunk));
  PyGILState_Release(gil);
  return status;
}
%}

%inline %{
/* Sets the activation (`elements` of the DLPack dtype `dtype_code`,
   `dtype_bits`) and points `opts`'s callbacks at the trampolines
   (backward_weight and chunk_done only when asked for) and `user` at
   `stages`, borrowed: the caller keeps it alive as long as the executor. */
void dtpy_pipeline_options_set(dt_pipeline_options *opts, long long elements, int dtype_code, int dtype_bits,
                               PyObject *stages, int with_backward_weight, int with_chunk_done) {
  opts->activation_elements = (int64_t)elements;
  opts->activation_dtype.code = (uint8_t)dtype_code;
  opts->activation_dtype.bits = (uint8_t)dtype_bits;
  opts->activation_dtype.lanes = 1;
  opts->forward = dtpy_pipeline_forward;
  opts->backward = dtpy_pipeline_backward;
  opts->backward_weight = with_backward_weight ? dtpy_pipeline_backward_weight : NULL;
  opts->chunk_done = with_chunk_done ? dtpy_pipeline_chunk_done : NULL;
  opts->user = stages;
}
%}

%nodefaultctor dt_pipeline;
typedef struct dt_pipeline {} dt_pipeline;
%extend dt_pipeline {
  ~dt_pipeline() { dt_pipeline_destroy($self); }
}
%delobject dt_pipeline_destroy;

%typemap(in, numinputs=0) dt_pipeline **out (dt_pipeline *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_pipeline **out {
  /* Ctrl-C in a later call on it aborts the communicator it was made on, arg2 of dt_pipeline_create(out, comm, ...). */
  dtpy_owner_set(*$1, arg2);
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_pipeline *), SWIG_POINTER_OWN));
}

/* dt_pipeline_step_info *info: not passed; the measurements are returned. */
%typemap(in, numinputs=0) dt_pipeline_step_info *info (dt_pipeline_step_info value) {
  memset(&value, 0, sizeof value);
  value.version = DT_PIPELINE_STEP_INFO_VERSION;
  $1 = &value;
}
%typemap(argout) dt_pipeline_step_info *info {
  $result = SWIG_Python_AppendOutput($result, Py_BuildValue("(ddddi)", $1->step_seconds, $1->recv_wait_seconds,
                                                             $1->comm_wait_seconds, $1->bubble_fraction,
                                                             $1->peak_in_flight));
}

/* Set through dtpy_pipeline_options_set() only. */
%ignore dt_pipeline_options::activation_elements;
%ignore dt_pipeline_options::activation_dtype;
%ignore dt_pipeline_options::forward;
%ignore dt_pipeline_options::backward;
%ignore dt_pipeline_options::backward_weight;
%ignore dt_pipeline_options::chunk_done;
%ignore dt_pipeline_options::user;
%extend dt_pipeline_options {
  dt_pipeline_options() { return calloc(1, sizeof(dt_pipeline_options)); }
  ~dt_pipeline_options() { free($self); }
}
