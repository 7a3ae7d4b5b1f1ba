// The boundary between C callers and the C++ core. Every exported function
// runs its body through entry(): exceptions never cross into C; each becomes a
// dt_status, with its message stored for dt_error_last().
#pragma once

#include <exception>
#include <new>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "base/log.hpp"
#include "dtrain/status.h"

namespace dtrain::capi {

// Runs `body`, which returns void (meaning DT_OK) or a dt_status.
template <typename Body>
dt_status entry(Body&& body) noexcept {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return DT_OK;
    } else {
      return body();
    }
  } catch (const Error& e) {
    set_last_error(e.what());
    DT_LOG(debug) << "returning " << dt_status_string(e.status()) << ": " << e.what();
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return DT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    DT_LOG(error) << "internal error: " << e.what();
    return DT_ERR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return DT_ERR_INTERNAL;
  }
}

template <typename T>
T* require(T* pointer, const char* name) {
  if (pointer == nullptr) raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  return pointer;
}

}  // namespace dtrain::capi
