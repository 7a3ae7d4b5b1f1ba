// What accelerator support this build has and what this machine offers, for
// dt_build_info(). Probing never prints and never fails: a missing driver or
// library is simply reported.
#pragma once

#include <string>

namespace dtrain::device {

// "compiled, 2 devices", "compiled, no device", or "not compiled".
std::string cuda_summary();

// "2.27.7", "compiled, library not found", or "not compiled".
std::string nccl_summary();

}  // namespace dtrain::device
