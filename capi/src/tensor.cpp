#include "arguments.hpp"
#include "dtrain/tensor.h"
#include "entry.hpp"

extern "C" DT_API dt_status dt_tensor_check(const DLTensor* tensor, int64_t* count) {
  return dtrain::capi::entry([&] {
    dtrain::TensorView view = dtrain::capi::view_of(tensor, "tensor");
    if (count) *count = view.count;
  });
}
