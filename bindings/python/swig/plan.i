/*
 * The planner: the dt_plan handle and its argument conventions.
 *
 * dt_plan is an empty class whose destructor calls dt_plan_destroy(). The
 * model, cluster, options and configuration structs are plain SWIG structs
 * the package fills; the structs the library writes (summary, estimate,
 * rejection, cluster) are made by the caller with their version set and
 * passed in, so that dt_plan_evaluate's estimate and its reason are still
 * there when the call raises. dt_plan_zero_memory takes the unit sizes as a
 * sequence of ints and the dtype as a (code, bits, lanes) tuple, and
 * returns a new dt_zero_memory.
 */

%nodefaultctor dt_plan;
typedef struct dt_plan {} dt_plan;
%extend dt_plan {
  ~dt_plan() { dt_plan_destroy($self); }
}
%delobject dt_plan_destroy;

%typemap(in, numinputs=0) dt_plan **out (dt_plan *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_plan **out {
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $descriptor(dt_plan *), SWIG_POINTER_OWN));
}

/* dt_plan_zero_memory(unit_elements, units, ...): one sequence. */
%typemap(in) (const int64_t *unit_elements, size_t units) (int64_t *array = NULL, Py_ssize_t length = 0) {
  if (dtpy_counts($input, "unit_elements", &array, &length) < 0) SWIG_fail;
  $1 = array;
  $2 = (size_t)length;
}
%typemap(freearg) (const int64_t *unit_elements, size_t units) {
  PyMem_Free(array$argnum);
}
%typemap(in) DLDataType dtype {
  int code = 0, bits = 0, lanes = 0;
  if (!PyArg_ParseTuple($input, "iii", &code, &bits, &lanes)) {
    dtpy_raise_argument("dtype");
    SWIG_fail;
  }
  $1.code = (uint8_t)code;
  $1.bits = (uint8_t)bits;
  $1.lanes = (uint16_t)lanes;
}

/* The 64-bit fields of the plan structs, as Python ints. */
%apply long long { int64_t global_batch, int64_t micro_batches, int64_t evaluated, int64_t feasible, int64_t count };
%apply long long { int64_t mem_parameters, int64_t mem_gradients, int64_t mem_optimizer_state,
                   int64_t mem_master_weights, int64_t mem_activations, int64_t mem_activations_without_recompute,
                   int64_t mem_communication, int64_t mem_total };
