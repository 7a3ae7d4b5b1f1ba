// The order top-k ranks elements in, the same on every device: larger values
// first, NaN above every number (so a NaN in a router's scores surfaces
// instead of vanishing), ties (NaNs included) to the lower index.
#pragma once

#include <cstdint>

#include "device/host_device.hpp"

namespace dtrain::device {

// True when (a, ia) comes before (b, ib).
DTRAIN_HOST_DEVICE inline bool ranks_before(float a, std::int64_t ia, float b, std::int64_t ib) {
  const bool a_nan = a != a;
  const bool b_nan = b != b;
  if (a_nan || b_nan) return a_nan && (!b_nan || ia < ib);
  return a > b || (a == b && ia < ib);
}

}  // namespace dtrain::device
