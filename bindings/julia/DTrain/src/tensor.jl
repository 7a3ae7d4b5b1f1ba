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
