// The element types libdtrain accepts, and how they map from DLPack.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <dlpack/dlpack.h>

namespace dtrain {

enum class DType { f32, f64, f16, bf16, i32, i64, i8, u8 };

// The DType of a DLPack dtype, or nullopt when libdtrain does not accept it.
std::optional<DType> dtype_from_dlpack(DLDataType dtype);

// The DLPack dtype that describes `dtype` (the inverse of dtype_from_dlpack).
DLDataType dtype_to_dlpack(DType dtype);

std::size_t dtype_size(DType dtype);
bool dtype_is_floating(DType dtype);
const char* dtype_name(DType dtype);

// "float32", "int8x4", "uint16" ... for error messages about any DLPack dtype.
std::string describe_dlpack_dtype(DLDataType dtype);

}  // namespace dtrain
