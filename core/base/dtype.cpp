#include "base/dtype.hpp"

namespace dtrain {

std::optional<DType> dtype_from_dlpack(DLDataType dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  switch (dtype.code) {
    case kDLFloat:
      if (dtype.bits == 32) return DType::f32;
      if (dtype.bits == 64) return DType::f64;
      if (dtype.bits == 16) return DType::f16;
      break;
    case kDLBfloat:
      if (dtype.bits == 16) return DType::bf16;
      break;
    case kDLInt:
      if (dtype.bits == 32) return DType::i32;
      if (dtype.bits == 64) return DType::i64;
      if (dtype.bits == 8) return DType::i8;
      break;
    case kDLUInt:
      if (dtype.bits == 8) return DType::u8;
      break;
    default:
      break;
  }
  return std::nullopt;
}

DLDataType dtype_to_dlpack(DType dtype) {
  switch (dtype) {
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f64: return {kDLFloat, 64, 1};
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::i32: return {kDLInt, 32, 1};
    case DType::i64: return {kDLInt, 64, 1};
    case DType::i8: return {kDLInt, 8, 1};
    case DType::u8: return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i8:
    case DType::u8: return 1;
  }
  return 0;
}

bool dtype_is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::i8: return "int8";
    case DType::u8: return "uint8";
  }
  return "?";
}

std::string describe_dlpack_dtype(DLDataType dtype) {
  std::string base;
  switch (dtype.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    default: base = "code" + std::to_string(dtype.code) + "_"; break;
  }
  base += std::to_string(dtype.bits);
  if (dtype.lanes != 1) base += "x" + std::to_string(dtype.lanes);
  return base;
}

}  // namespace dtrain
