/*
 * dt_status to Python exceptions.
 *
 * A negative status raises the dtrain.Error subclass made by
 * dtrain._errors._from_status(), so the low-level module and the package
 * raise the same classes. The message is dt_error_last(), read right after
 * the call on the same thread, before any other libdtrain call can replace it.
 */

%{
/* Raises the exception for `status` with `message` (UTF-8, may be NULL). */
static void dtpy_raise(int status, const char *message) {
  PyObject *text = PyUnicode_DecodeUTF8(message ? message : "", (Py_ssize_t)strlen(message ? message : ""),
                                        "replace");
  PyObject *errors = text ? PyImport_ImportModule("dtrain._errors") : NULL;
  PyObject *exc = errors ? PyObject_CallMethod(errors, "_from_status", "iO", status, text) : NULL;
  Py_XDECREF(errors);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  /* Otherwise what stopped the exception from being made is pending: a
     KeyboardInterrupt from a signal that went off in _from_status, or the
     ImportError of a broken install. */
  Py_XDECREF(text);
}

/* SWIG's own argument conversions (a handle of the wrong type, an int out
   of range) raise the dtrain.Error subclass too: InvalidArgumentError, or
   OutOfMemoryError, rather than TypeError or OverflowError. */
static void dtpy_swig_error(int code, const char *message) {
  PyErr_Clear();
  dtpy_raise(code == SWIG_MemoryError ? DT_ERR_OUT_OF_MEMORY : DT_ERR_INVALID_ARGUMENT, message);
}
#undef SWIG_Error
#define SWIG_Error(code, msg) dtpy_swig_error(code, msg)

/* Raises InvalidArgumentError "<name>: <the pending Python error's text>",
   for arguments the binding itself cannot turn into C values. */
static void dtpy_raise_argument(const char *name) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyObject *text = value ? PyObject_Str(value) : NULL;
  const char *detail = text ? PyUnicode_AsUTF8(text) : NULL;
  PyErr_Clear();
  PyObject *message = PyUnicode_FromFormat("%s: %s", name, detail ? detail : "not accepted");
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  dtpy_raise(DT_ERR_INVALID_ARGUMENT, message ? PyUnicode_AsUTF8(message) : name);
  Py_XDECREF(message);
}
%}

%typemap(out) dt_status {
  if ($1 < 0) {
    dtpy_raise($1, dt_error_last());
    SWIG_fail;
  }
  $result = SWIG_Py_Void();
}

/* dt_request_test() reports progress through its status: DT_OK or DT_INPROGRESS. */
%typemap(out) dt_status dt_request_test {
  if ($1 < 0) {
    dtpy_raise($1, dt_error_last());
    SWIG_fail;
  }
  $result = PyLong_FromLong((long)$1);
}
