# Julia arrays as the DLTensors libdtrain borrows.

# An array with the DLTensor that describes it. The descriptor and the shape it
# points to live in this object, which also keeps the array referenced: holding
# it keeps every pointer in the descriptor valid, for the length of a call or,
# for a non-blocking operation, until its request completes.
mutable struct Borrowed
    array::Any
    shape::Vector{Int64}
    tensor::Base.RefValue{DLTensor}
end

function Borrowed(array::StridedArray{T}) where {T}
    dtype = dldatatype(T)
    _iscontiguous(array) || throw(ArgumentError(
        "DTrain: the array is not contiguous; libdtrain takes dense arrays (copy the view first)"))
    # Julia stores arrays column-major. Listed last dimension first, the same
    # memory is a row-major tensor, which is what libdtrain expects.
    shape = Int64[size(array, d) for d in ndims(array):-1:1]
    tensor = DLTensor(Ptr{Cvoid}(pointer(array)), DLDevice(kDLCPU, 0), Int32(ndims(array)), dtype,
                      pointer(shape), Ptr{Int64}(C_NULL), UInt64(0))
    return Borrowed(array, shape, Ref(tensor))
end

Borrowed(array::AbstractArray) = throw(ArgumentError(
    "DTrain: a $(typeof(array)) has no strided memory to hand to libdtrain; pass an Array or a contiguous view"))

# Dense column-major storage; a dimension of extent 1 may have any stride, as
# libdtrain's own check allows.
function _iscontiguous(array::StridedArray)
    length(array) == 0 && return true
    expected = 1
    for d in 1:ndims(array)
        if size(array, d) != 1 && stride(array, d) != expected
            return false
        end
        expected *= size(array, d)
    end
    return true
end

"""
    DeviceBuffer(pointer::Ptr{T}, length, device; stream=C_NULL)

`length` elements of `T` in CUDA device memory at `pointer`, on CUDA device
`device`, for the collectives and point-to-point calls (which take it wherever
they take an array), the in-place MoE exchanges ([`moe_dispatch!`](@ref) and
its kind, which take it as rows and do not use `stream`) and
[`tensor_check`](@ref). It describes memory the caller
owns, e.g. `pointer(cu_array)` of a CUDA.jl array: keep that memory allocated
(and the array referenced) until the operation has completed. `stream` is the
`cudaStream_t` the operations on it run on (`C_NULL`: the communicator's own
stream, which waits only for the legacy default stream; see `dtrain/comm.h`);
with NCCL they are queued on it, so work queued there afterwards sees their
results.

Julia cannot read device memory from the host, so indexing throws. Without a
usable CUDA device the library refuses it with `DT_ERR_UNSUPPORTED`.
"""
struct DeviceBuffer{T} <: AbstractVector{T}
    pointer::Ptr{T}
    length::Int
    device::Int32
    stream::Ptr{Cvoid}

    function DeviceBuffer(pointer::Ptr{T}, length::Integer, device::Integer; stream::Ptr=C_NULL) where {T}
        dldatatype(T)  # throws for element types libdtrain does not take
        length >= 0 || throw(ArgumentError("DTrain: a DeviceBuffer's length $length is negative"))
        device >= 0 || throw(ArgumentError("DTrain: CUDA device $device is negative"))
        return new{T}(pointer, Int(length), Int32(device), Ptr{Cvoid}(stream))
    end
end

Base.size(buffer::DeviceBuffer) = (buffer.length,)
Base.pointer(buffer::DeviceBuffer) = buffer.pointer
Base.getindex(::DeviceBuffer, ::Int) = throw(ArgumentError(
    "DTrain: a DeviceBuffer is CUDA device memory, which cannot be read from the host"))
Base.show(io::IO, buffer::DeviceBuffer{T}) where {T} =
    print(io, "DeviceBuffer{$T}(", buffer.pointer, ", ", buffer.length, ", device ", buffer.device, ")")
Base.show(io::IO, ::MIME"text/plain", buffer::DeviceBuffer) = show(io, buffer)

function Borrowed(buffer::DeviceBuffer{T}) where {T}
    shape = Int64[buffer.length]
    tensor = DLTensor(Ptr{Cvoid}(buffer.pointer), DLDevice(kDLCUDA, buffer.device), Int32(1), dldatatype(T),
                      pointer(shape), Ptr{Int64}(C_NULL), UInt64(0))
    return Borrowed(buffer, shape, Ref(tensor))
end

# The `stream` argument of an operation on `operands`: the first device
# buffer's; host arrays have none (the library ignores it for them).
function _stream(operands::Borrowed...)
    for operand in operands
        operand.array isa DeviceBuffer && return operand.array.stream
    end
    return C_NULL
end

"""
    tensor_check(array) -> Int
    tensor_check(tensor::DTrain.DLTensor) -> Int

Checks that libdtrain accepts `array` (or a DLTensor built by hand, whose
pointers the caller keeps valid) and returns its element count. Throws a
[`DTrainError`](@ref) saying which property is wrong otherwise.
"""
function tensor_check(array::AbstractArray)
    borrowed = Borrowed(array)
    return GC.@preserve borrowed tensor_check(borrowed.tensor[])
end

function tensor_check(tensor::DLTensor)
    count = Ref{Int64}(0)
    _check(ccall(_sym(:dt_tensor_check), Cint, (Ref{DLTensor}, Ref{Int64}), tensor, count))
    return Int(count[])
end
