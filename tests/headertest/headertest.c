/* dtrain.h must compile on its own, warning-free, as C99 and as C++. */
#include <dtrain.h>

int dtrain_headertest_uses_types(void);
int dtrain_headertest_uses_types(void) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  dt_status status = DT_OK;
  dt_reduce_op op = DT_SUM;
  dt_backend backend = DT_BACKEND_AUTO;
  return (int)opts.version + (int)status + (int)op + (int)backend + (opts.rank == DT_UNDEF);
}

int dtrain_headertest_uses_pipeline_types(void);
int dtrain_headertest_uses_pipeline_types(void) {
  dt_pipeline_schedule_options opts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  dt_pipeline_action action = {DT_PIPELINE_FORWARD, 0, 0, -1};
  return (int)opts.version + (int)opts.kind + action.peer + (opts.chunks == DT_UNDEF);
}
