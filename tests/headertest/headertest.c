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
