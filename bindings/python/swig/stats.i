/* dt_comm_stats: dt_op_stats *out is not passed; a new dt_op_stats is returned. */
%typemap(in, numinputs=0) dt_op_stats *out (dt_op_stats value) {
  memset(&value, 0, sizeof value);
  value.version = DT_OP_STATS_VERSION;
  $1 = &value;
}
%typemap(argout) dt_op_stats *out {
  dt_op_stats *copy = (dt_op_stats *)malloc(sizeof *copy);
  if (copy == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
  *copy = *$1;
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $descriptor(dt_op_stats *), SWIG_POINTER_OWN));
}

/* SWIG has no int64_t of its own: dt_op_stats' figures are Python ints. */
%apply long long { int64_t count, int64_t failed, int64_t bytes };
