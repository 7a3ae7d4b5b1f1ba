/*
 * The device mesh: the dt_mesh handle and its argument conventions.
 *
 * dt_mesh is an empty class whose destructor calls dt_mesh_destroy(), like
 * the communicator. Names and sizes go in as sequences (names None: the
 * customary tp, cp, ep, dp, pp); coordinates and group ranks come back as
 * lists.
 */

%nodefaultctor dt_mesh;
typedef struct dt_mesh {} dt_mesh;
%extend dt_mesh {
  ~dt_mesh() { dt_mesh_destroy($self); }
}
%delobject dt_mesh_destroy;

%typemap(in, numinputs=0) dt_mesh **out (dt_mesh *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_mesh **out {
  /* Ctrl-C in a later call on it aborts the communicator it was made on, arg2 of dt_mesh_create(out, comm, ...). */
  dtpy_owner_set(*$1, arg2);
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_mesh *), SWIG_POINTER_OWN));
}

%{
/* A sequence of ints as a C array of at least one entry (NULL for None). */
static int dtpy_ints(PyObject *obj, const char *name, int **out, int *length) {
  *out = NULL;
  *length = 0;
  if (obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "expected a sequence of ints");
  if (seq == NULL) goto fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  if (*out == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    (*out)[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    if (PyErr_Occurred()) {
      Py_DECREF(seq);
      goto fail;
    }
  }
  Py_DECREF(seq);
  *length = (int)n;
  return 0;
fail:
  dtpy_raise_argument(name);
  return -1;
}

/* A sequence of str as a C array of UTF-8 strings owned by `holder` (a
   list of bytes objects kept alive for the call); NULL for None. */
static int dtpy_names(PyObject *obj, const char ***out, PyObject **holder) {
  *out = NULL;
  *holder = NULL;
  if (obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "names must be a sequence of str");
  if (seq == NULL) goto fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  *holder = PyList_New(0);
  *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(char *));
  if (*holder == NULL || *out == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *bytes = PyUnicode_AsUTF8String(PySequence_Fast_GET_ITEM(seq, i));
    if (bytes == NULL) {
      Py_DECREF(seq);
      goto fail;
    }
    PyList_Append(*holder, bytes);
    Py_DECREF(bytes);
    (*out)[i] = PyBytes_AS_STRING(bytes);
  }
  Py_DECREF(seq);
  return 0;
fail:
  dtpy_raise_argument("names");
  return -1;
}
%}

/* dt_mesh_create(out, comm, ndims, names, sizes): ndims is passed as is, so
   that the library checks it against the sequences' lengths. */
%typemap(in) const char *const *names (const char **array = NULL, PyObject *holder = NULL) {
  if (dtpy_names($input, &array, &holder) < 0) SWIG_fail;
  $1 = ($1_ltype)array;
}
%typemap(freearg) const char *const *names {
  PyMem_Free((void *)array$argnum);
  Py_XDECREF(holder$argnum);
}
%typemap(in) const int *sizes (int *array = NULL, int length = 0) {
  if (dtpy_ints($input, "sizes", &array, &length) < 0) SWIG_fail;
  $1 = array;
}
%typemap(freearg) const int *sizes {
  PyMem_Free(array$argnum);
}

/* dt_mesh_rank_at(mesh, coords, ncoords, out): one sequence. */
%typemap(in) (const int *coords, int ncoords) (int *array = NULL, int length = 0) {
  if (dtpy_ints($input, "coords", &array, &length) < 0) SWIG_fail;
  $1 = array;
  $2 = length;
}
%typemap(freearg) (const int *coords, int ncoords) {
  PyMem_Free(array$argnum);
}

/* dt_mesh_coords_of(mesh, rank, coords, ncoords): ncoords in, a list out. */
%typemap(in) (int *coords, int ncoords) (int *array = NULL) {
  $2 = (int)PyLong_AsLong($input);
  if (PyErr_Occurred()) {
    dtpy_raise_argument("ncoords");
    SWIG_fail;
  }
  array = PyMem_Calloc((size_t)($2 > 0 ? $2 : 1), sizeof(int));
  if (array == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $1 = array;
}
%typemap(argout) (int *coords, int ncoords) {
  PyObject *list = PyList_New($2);
  for (int i = 0; list != NULL && i < $2; ++i) PyList_SET_ITEM(list, i, PyLong_FromLong($1[i]));
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(freearg) (int *coords, int ncoords) {
  PyMem_Free(array$argnum);
}

/* dt_mesh_group_ranks(mesh, names, ranks, capacity, count): capacity in; the
   ranks written (a tuple) and the group's size out. */
%typemap(in) (int *ranks, int capacity) (int *array = NULL) {
  $2 = (int)PyLong_AsLong($input);
  if (PyErr_Occurred()) {
    dtpy_raise_argument("capacity");
    SWIG_fail;
  }
  array = PyMem_Calloc((size_t)($2 > 0 ? $2 : 1), sizeof(int));
  if (array == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  $1 = $2 > 0 ? array : NULL;
}
%typemap(in, numinputs=0) int *count (int value = 0) {
  $1 = &value;
}
%typemap(argout) (int *ranks, int capacity) {
  /* A tuple: SWIG would append the count to a list instead of returning a pair. */
  int written = *arg5 < $2 ? *arg5 : $2;
  PyObject *ranks = PyTuple_New(written > 0 ? written : 0);
  for (int i = 0; ranks != NULL && i < written; ++i) PyTuple_SET_ITEM(ranks, i, PyLong_FromLong(array$argnum[i]));
  $result = SWIG_Python_AppendOutput($result, ranks);
}
%typemap(argout) int *count {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLong(*$1));
}
%typemap(freearg) (int *ranks, int capacity) {
  PyMem_Free(array$argnum);
}

/* dt_mesh_dim_name: the name, as str. */
%typemap(in, numinputs=0) const char **out (const char *name = NULL) {
  $1 = ($1_ltype)&name;
}
%typemap(argout) const char **out {
  $result = SWIG_Python_AppendOutput($result, PyUnicode_FromString(*$1));
}
