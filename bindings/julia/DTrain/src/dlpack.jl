# DLPack 0.6 (dlpack/dlpack.h), the tensor description at libdtrain's boundary.
# The structs mirror the C layout field for field; tests/bindings compares their
# offsets with what a C compiler makes of the header.

# DLDeviceType
const kDLCPU = Int32(1)
const kDLCUDA = Int32(2)
const kDLCUDAHost = Int32(3)

# DLDataTypeCode
const kDLInt = UInt8(0)
const kDLUInt = UInt8(1)
const kDLFloat = UInt8(2)
const kDLBfloat = UInt8(4)

struct DLDevice
    device_type::Int32
    device_id::Int32
end

struct DLDataType
    code::UInt8
    bits::UInt8
    lanes::UInt16
end

struct DLTensor
    data::Ptr{Cvoid}
    device::DLDevice
    ndim::Int32
    dtype::DLDataType
    shape::Ptr{Int64}
    strides::Ptr{Int64}
    byte_offset::UInt64
end

"""
    DTrain.dldatatype(T) -> DLDataType

The DLPack dtype of element type `T`. libdtrain takes `Float32`, `Float64`,
`Float16`, `Int32`, `Int64`, `Int8` and `UInt8` arrays, and bfloat16: Julia has
no such type of its own, so a package that brings one adds a method, e.g.
`DTrain.dldatatype(::Type{BFloat16}) = DTrain.DLDataType(DTrain.kDLBfloat, 16, 1)`.
"""
dldatatype(::Type{Float32}) = DLDataType(kDLFloat, 32, 1)
dldatatype(::Type{Float64}) = DLDataType(kDLFloat, 64, 1)
dldatatype(::Type{Float16}) = DLDataType(kDLFloat, 16, 1)
dldatatype(::Type{Int32}) = DLDataType(kDLInt, 32, 1)
dldatatype(::Type{Int64}) = DLDataType(kDLInt, 64, 1)
dldatatype(::Type{Int8}) = DLDataType(kDLInt, 8, 1)
dldatatype(::Type{UInt8}) = DLDataType(kDLUInt, 8, 1)
dldatatype(::Type{T}) where {T} = throw(ArgumentError(
    "DTrain: arrays of $T are not supported (Float32, Float64, Float16, Int32, Int64, Int8, UInt8)"))
