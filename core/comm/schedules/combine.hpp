// A reduction as the schedules apply it: the element-wise kernel, plus the
// division that turns a sum into an average, done once on the final values.
#pragma once

#include <cstdint>

#include "base/dtype.hpp"
#include "comm/reduce_op.hpp"
#include "device/cpu/reduce.hpp"

namespace dtrain::comm::schedule {

struct Combine {
  device::cpu::Reduction op = device::cpu::Reduction::sum;
  DType dtype = DType::f32;
  bool average = false;

  Combine(ReduceOp reduce, DType type) : dtype(type), average(reduce == ReduceOp::avg) {
    switch (reduce) {
      case ReduceOp::sum:
      case ReduceOp::avg: op = device::cpu::Reduction::sum; break;
      case ReduceOp::prod: op = device::cpu::Reduction::prod; break;
      case ReduceOp::max: op = device::cpu::Reduction::max; break;
      case ReduceOp::min: op = device::cpu::Reduction::min; break;
    }
  }

  // dst = dst op src, `count` elements.
  void apply(void* dst, const void* src, std::int64_t count) const {
    device::cpu::reduce(op, dtype, dst, src, count);
  }
  // dst = a op b, `count` elements; dst may be a.
  void apply(void* dst, const void* a, const void* b, std::int64_t count) const {
    device::cpu::reduce(op, dtype, dst, a, b, count);
  }
  // Turns fully reduced values into averages over `ranks`.
  void finish(void* dst, std::int64_t count, int ranks) const {
    if (average && ranks > 1) device::cpu::divide(dtype, dst, count, ranks);
  }
};

}  // namespace dtrain::comm::schedule
