#include "entry.hpp"
#include "handles.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;

extern "C" {

DT_API dt_status dt_request_wait(dt_request* req, int timeout_ms) {
  return entry([&] {
    require(req, "req");
    req->comm->wait(req->op, timeout_ms);
  });
}

DT_API dt_status dt_request_test(dt_request* req) {
  return entry([&] { return require(req, "req")->comm->test(req->op); });
}

DT_API void dt_request_free(dt_request* req) { delete req; }

}  // extern "C"
