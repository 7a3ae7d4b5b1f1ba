#include "base/error.hpp"
#include "dtrain/status.h"

extern "C" {

DT_API const char* dt_status_string(dt_status status) {
  switch (status) {
    case DT_OK: return "ok";
    case DT_INPROGRESS: return "in progress";
    case DT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case DT_ERR_INVALID_USAGE: return "invalid usage";
    case DT_ERR_UNSUPPORTED: return "unsupported";
    case DT_ERR_OUT_OF_MEMORY: return "out of memory";
    case DT_ERR_TIMEOUT: return "timeout";
    case DT_ERR_REMOTE: return "remote peer failed";
    case DT_ERR_TRANSPORT: return "transport error";
    case DT_ERR_ABORTED: return "aborted";
    case DT_ERR_AUTH: return "authentication failed";
    case DT_ERR_MISMATCH: return "ranks disagree";
    case DT_ERR_INTERNAL: return "internal error";
    case DT_ERR_IO: return "input/output error";
  }
  return "unknown status";
}

DT_API const char* dt_error_last(void) { return dtrain::last_error(); }

}  // extern "C"
