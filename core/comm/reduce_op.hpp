// Reduction operators, as the C API numbers them.
#pragma once

#include "dtrain/comm.h"

namespace dtrain::comm {

enum class ReduceOp { sum = DT_SUM, avg = DT_AVG, max = DT_MAX, min = DT_MIN, prod = DT_PROD };

inline const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::prod: return "prod";
  }
  return "?";
}

}  // namespace dtrain::comm
