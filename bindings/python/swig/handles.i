/*
 * Handles, options and the remaining argument conventions.
 *
 * dt_comm and dt_request are opaque in C; SWIG sees them as empty classes
 * whose destructors call dt_comm_destroy() / dt_request_free(), so a handle
 * that is never closed is still freed when collected. Handles come back from
 * `out` arguments owned by Python; the explicit destroy/free calls disown
 * them so they are not freed twice.
 */

%nodefaultctor dt_comm;
%nodefaultctor dt_request;
typedef struct dt_comm {} dt_comm;
typedef struct dt_request {} dt_request;
%extend dt_comm {
  ~dt_comm() { dt_comm_destroy($self); }
}
%extend dt_request {
  ~dt_request() { dt_request_free($self); }
}
%delobject dt_comm_destroy;
%delobject dt_request_free;

/* dt_comm **out: returned (None when a split leaves this rank out). */
%typemap(in, numinputs=0) dt_comm **out (dt_comm *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_comm **out {
  $result = SWIG_Python_AppendOutput(
      $result, *$1 ? SWIG_NewPointerObj(*$1, $descriptor(dt_comm *), SWIG_POINTER_OWN) : SWIG_Py_Void());
}

/* dt_request **req: a Python truth value. False passes NULL (blocking, the
   call returns None); true returns the request of the started operation. */
%typemap(in) dt_request **req (dt_request *handle = NULL) {
  int started = PyObject_IsTrue($input);
  if (started < 0) SWIG_fail;
  $1 = started ? &handle : NULL;
}
%typemap(argout) dt_request **req {
  /* Ctrl-C in a dt_request_wait() on it aborts its communicator, arg1 of every call that starts one. */
  if ($1 && *$1) dtpy_owner_set(*$1, arg1);
  $result = SWIG_Python_AppendOutput(
      $result, $1 && *$1 ? SWIG_NewPointerObj(*$1, $descriptor(dt_request *), SWIG_POINTER_OWN)
                         : SWIG_Py_Void());
}

/* void *stream: None (the communicator's stream) or an address as an int. */
%typemap(in) void *stream {
  $1 = $input == Py_None ? NULL : PyLong_AsVoidPtr($input);
  if (PyErr_Occurred()) {
    dtpy_raise_argument("$1_name");
    SWIG_fail;
  }
}

/* alltoallv counts: a sequence of ints with one entry per rank. */
%{
static int dtpy_counts(PyObject *obj, const char *name, int64_t **out, Py_ssize_t *length) {
  PyObject *seq = PySequence_Fast(obj, "counts must be a sequence of ints");
  if (seq == NULL) goto fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (*out == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *index = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
    (*out)[i] = index ? PyLong_AsLongLong(index) : -1;
    Py_XDECREF(index);
    if (PyErr_Occurred()) {
      Py_DECREF(seq);
      goto fail;
    }
  }
  Py_DECREF(seq);
  *length = n;
  return 0;
fail:
  dtpy_raise_argument(name);
  return -1;
}

/* The C function reads one count per rank: a shorter list must not get there. */
static int dtpy_counts_match(const dt_comm *comm, Py_ssize_t length, const char *name) {
  int size = 0;
  if (comm == NULL || dt_comm_size(comm, &size) != DT_OK || length == size) return 0;
  PyErr_Format(PyExc_ValueError, "has %zd entries but the communicator has %d ranks", length, size);
  dtpy_raise_argument(name);
  return -1;
}
%}
%typemap(in) const int64_t *send_counts (int64_t *counts = NULL, Py_ssize_t length = 0),
             const int64_t *recv_counts (int64_t *counts = NULL, Py_ssize_t length = 0) {
  if (dtpy_counts($input, "$1_name", &counts, &length) < 0) SWIG_fail;
  $1 = counts;
}
%typemap(check) const int64_t *send_counts, const int64_t *recv_counts {
  if (dtpy_counts_match(arg1, length$argnum, "$1_name") < 0) SWIG_fail;
}
%typemap(freearg) const int64_t *send_counts, const int64_t *recv_counts {
  PyMem_Free(counts$argnum);
}

/* Scalars returned through pointers. */
%apply int *OUTPUT { int *out };
%apply int *OUTPUT { int *major, int *minor, int *patch };
%typemap(in, numinputs=0) int64_t *count (int64_t value = 0) {
  $1 = &value;
}
%typemap(argout) int64_t *count {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLongLong(*$1));
}

/* dt_comm_options: built with dt_comm_options(), filled by
   dt_comm_options_init(). The strings are copies owned by the struct. The
   out-of-band allgather is for C callers; from Python, use the store. */
%ignore dt_comm_options::oob_allgather;
%ignore dt_comm_options::oob_user;
%typemap(memberin) const char *store, const char *auth_token {
  free((char *)$1);
  $1 = $input ? strdup($input) : NULL;
}
%extend dt_comm_options {
  dt_comm_options() { return calloc(1, sizeof(dt_comm_options)); }
  ~dt_comm_options() {
    free((char *)$self->store);
    free((char *)$self->auth_token);
    free($self);
  }
}
