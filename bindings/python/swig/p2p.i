/*
 * dt_p2p_group's ops from Python: a sequence of (kind, tensor, peer, tag)
 * tuples, kind being DT_P2P_SEND or DT_P2P_RECV. Each tensor is a Tensor
 * (or None, which the C API refuses by name): a group that does not block
 * outlives the call, so its tensors must be held by the caller, as the
 * pure-Python Comm.p2p_group does. The dt_p2p_op struct itself is not
 * wrapped; the tuples stand for it.
 */
%ignore dt_p2p_op;

%{
static int dtpy_p2p_ops(PyObject *obj, swig_type_info *tensor_type, dt_p2p_op **out, int *count) {
  PyObject *seq = PySequence_Fast(obj, "ops must be a sequence of (kind, Tensor, peer, tag) tuples");
  if (seq == NULL) goto fail;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > INT_MAX) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "too many ops");
    goto fail;
  }
  *out = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(dt_p2p_op));
  if (*out == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *tensor = NULL;
    dt_p2p_op *op = &(*out)[i];
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 4) {
      PyErr_Format(PyExc_TypeError, "ops[%zd] is not a (kind, Tensor, peer, tag) tuple", i);
      Py_DECREF(seq);
      goto fail;
    }
    op->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    tensor = PyTuple_GET_ITEM(item, 1);
    op->peer = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 2));
    op->tag = (int)PyLong_AsLong(PyTuple_GET_ITEM(item, 3));
    if (PyErr_Occurred()) {
      Py_DECREF(seq);
      goto fail;
    }
    if (tensor != Py_None) {
      dtpy_tensor *held = NULL;
      if (!SWIG_IsOK(SWIG_ConvertPtr(tensor, (void **)&held, tensor_type, 0)) || held == NULL || held->released) {
        PyErr_Format(PyExc_TypeError, "ops[%zd]'s tensor is not a live Tensor", i);
        Py_DECREF(seq);
        goto fail;
      }
      if (op->kind == DT_P2P_RECV && !held->writable) {
        PyErr_Format(PyExc_ValueError, "ops[%zd] receives into a Tensor taken read-only", i);
        Py_DECREF(seq);
        goto fail;
      }
      op->tensor = &held->tensor;
    }
  }
  Py_DECREF(seq);
  *count = (int)n;
  return 0;
fail:
  dtpy_raise_argument("ops");
  return -1;
}
%}

%typemap(in) (const dt_p2p_op *ops, int count) (dt_p2p_op *ops = NULL) {
  if (dtpy_p2p_ops($input, $descriptor(dtpy_tensor *), &ops, &$2) < 0) SWIG_fail;
  $1 = ops;
}
%typemap(freearg) (const dt_p2p_op *ops, int count) {
  PyMem_Free(ops$argnum);
}
