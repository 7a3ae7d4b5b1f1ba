/*
 * Pipeline schedules: the dt_pipeline_schedule handle and its outputs.
 *
 * dt_pipeline_schedule is an empty class whose destructor calls
 * dt_pipeline_schedule_destroy(). A schedule is plain data, so the calls
 * that read it return Python values: an action as the tuple (kind, chunk,
 * microbatch, peer), from which the package's dtrain.PipelineSchedule builds
 * its PipelineAction records.
 */

%nodefaultctor dt_pipeline_schedule;
typedef struct dt_pipeline_schedule {} dt_pipeline_schedule;
%extend dt_pipeline_schedule {
  ~dt_pipeline_schedule() { dt_pipeline_schedule_destroy($self); }
}
%delobject dt_pipeline_schedule_destroy;

%typemap(in, numinputs=0) dt_pipeline_schedule **out (dt_pipeline_schedule *handle = NULL) {
  $1 = &handle;
}
%typemap(argout) dt_pipeline_schedule **out {
  $result = SWIG_Python_AppendOutput($result,
                                     SWIG_NewPointerObj(*$1, $descriptor(dt_pipeline_schedule *), SWIG_POINTER_OWN));
}

/* dt_pipeline_action *out: not passed; (kind, chunk, microbatch, peer) is returned. */
%typemap(in, numinputs=0) dt_pipeline_action *out (dt_pipeline_action value) {
  memset(&value, 0, sizeof value);
  $1 = &value;
}
%typemap(argout) dt_pipeline_action *out {
  $result = SWIG_Python_AppendOutput($result, Py_BuildValue("(iiii)", (int)$1->kind, $1->chunk, $1->microbatch,
                                                             $1->peer));
}

%apply double *OUTPUT { double *out };

/* dt_pipeline_schedule_options: built with dt_pipeline_schedule_options(),
   filled by dt_pipeline_schedule_options_init(). */
%extend dt_pipeline_schedule_options {
  dt_pipeline_schedule_options() { return calloc(1, sizeof(dt_pipeline_schedule_options)); }
  ~dt_pipeline_schedule_options() { free($self); }
}
