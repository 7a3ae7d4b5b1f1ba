# Data parallelism (dt_ddp in dtrain/ddp.h): gradient averaging overlapped
# with backward, and parameter broadcast.

"""
    Compression

The type a [`DDP`](@ref)'s gradients travel in (`dt_ddp_compression`):
`DT_DDP_COMPRESS_NONE`, `DT_DDP_COMPRESS_F16` or `DT_DDP_COMPRESS_BF16`.
`Float32` and `Float64` gradients are cast down for the allreduce and back;
16-bit gradients travel as they are.
"""
@enum Compression::Cint begin
    DT_DDP_COMPRESS_NONE = 0
    DT_DDP_COMPRESS_F16 = 1
    DT_DDP_COMPRESS_BF16 = 2
end

"""
    BucketState

Where a [`DDP`](@ref) bucket is in the current step (`dt_bucket_state`):
`DT_BUCKET_WAITING` (not all its gradients are marked), `DT_BUCKET_IN_FLIGHT`
(its allreduce runs), `DT_BUCKET_REDUCED` (done; `wait` copies it back) or
`DT_BUCKET_FAILED` (`wait` says why).
"""
@enum BucketState::Cint begin
    DT_BUCKET_WAITING = 0
    DT_BUCKET_IN_FLIGHT = 1
    DT_BUCKET_REDUCED = 2
    DT_BUCKET_FAILED = 3
end

# The version of dt_ddp_options mirrored here.
const DT_DDP_OPTIONS_VERSION = Cuint(2)

"""
    DTrain.DDPOptions

`dt_ddp_options`, field for field (version 2). `DDPOptions()` gives the
library's defaults, written by `dt_ddp_options_init`; [`DDP`](@ref) fills one
from its keyword arguments.
"""
struct DDPOptions
    version::Cuint
    bucket_bytes::Int64
    compression::Cint
    find_unused::Cint
    weighted::Cint
    stream::Ptr{Cvoid}
end

function DDPOptions()
    options = Ref{DDPOptions}()
    _check(ccall(_sym(:dt_ddp_options_init), Cint, (Ref{DDPOptions}, Cuint), options, DT_DDP_OPTIONS_VERSION))
    return options[]
end

"""
    DDP(comm, grads; bucket_bytes, compression, find_unused=false, weighted=false)
    DDP(f, comm, grads; kwargs...)

Averages the gradient arrays `grads` over the ranks of `comm`. Every rank holds
a replica of the model and computes gradients on its share of the batch; as
backward makes `grads[i]` final, call [`mark_ready!(ddp, i)`](@ref mark_ready!):
gradients are packed into buckets (about `bucket_bytes` each, filled last
gradient first) whose allreduces start while backward goes on. `wait(ddp)`
finishes the step and leaves the averages in the arrays.

`grads` are dense floating-point arrays (`Float32`, `Float64`, `Float16`),
which the DDP keeps referenced and writes into until it is closed: all host
arrays, or all [`DeviceBuffer`](@ref)s on the communicator's CUDA device, whose
`stream` (the first one's) is the stream backward writes them on (`C_NULL`
here: the legacy default stream, not the communicator's; see `dtrain/ddp.h`).
Creation is
collective: every rank must pass arrays of the same element types and sizes
and the same options, or every rank throws a `DT_ERR_MISMATCH` error.

- `bucket_bytes`: bucket size on the wire (default 25 MiB);
- `compression`: a [`Compression`](@ref), or `:none`, `:f16`, `:bf16`;
- `find_unused`: gradients not marked in a step count as zero from this rank
  instead of failing `wait`;
- `weighted`: ranks are weighted by [`set_local_weight!`](@ref) (their sample
  counts, say), so that batches of different sizes still give the mean over
  all samples.

For gradient accumulation, run the micro-steps that only accumulate inside
[`no_sync`](@ref) (or after `set_sync!(ddp, false)`).

Indices are Julia's: gradient `i` is `grads[i]`, buckets count from 1. Free it
with `close(ddp)` or use the do-block form; otherwise its finalizer frees it
(waiting, within the communicator's deadline, for allreduces in flight).
"""
mutable struct DDP
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    # The arrays and their descriptors: libdtrain writes into them until the
    # handle is destroyed.
    borrowed::Vector{Borrowed}
    comm::Union{Comm,Nothing}
    sync::Bool

    function DDP(handle::Ptr{Cvoid}, borrowed::Vector{Borrowed}, comm::Comm)
        ddp = new(handle, Threads.Atomic{Bool}(false), borrowed, comm, true)
        finalizer(_finalize, ddp)
        return ddp
    end
end

_compression(c::Compression) = c
function _compression(c::Symbol)
    c === :none && return DT_DDP_COMPRESS_NONE
    c === :f16 && return DT_DDP_COMPRESS_F16
    c === :bf16 && return DT_DDP_COMPRESS_BF16
    throw(ArgumentError("DTrain: compression $(repr(c)) is not :none, :f16 or :bf16"))
end
_compression(c) = throw(ArgumentError("DTrain: compression $(repr(c)) is not a Compression or a Symbol"))

# Creating a DDP and broadcasting parameters are collective: a rank that threw
# before the call would leave the others waiting. Instead, what this rank
# cannot pass is replaced by a value the library refuses (a NULL tensor, an
# invalid option), so that every rank hears of it (the others get
# DT_ERR_MISMATCH), and this rank throws its own error after the call.
mutable struct _Refusal
    error::Any
end
_Refusal() = _Refusal(nothing)

function _take(f, refusal::_Refusal, stand_in)
    try
        return f()
    catch err
        err isa ArgumentError || err isa InexactError || err isa MethodError || rethrow()
        refusal.error === nothing && (refusal.error = err)
        return stand_in
    end
end

function _borrow_all(arrays::AbstractVector, refusal::_Refusal)
    borrowed = Union{Borrowed,Nothing}[_take(() -> Borrowed(a), refusal, nothing) for a in arrays]
    tensors = DLTensor[b === nothing ? DLTensor(C_NULL, DLDevice(kDLCPU, 0), Int32(0), DLDataType(kDLFloat, 32, 1),
                                                Ptr{Int64}(C_NULL), Ptr{Int64}(C_NULL), UInt64(0))
                       : b.tensor[] for b in borrowed]
    return borrowed, tensors
end

# The pointers of `tensors`, C_NULL where nothing was borrowed; `tensors`
# must be preserved while they are used.
_tensor_pointers(borrowed, tensors) =
    Ptr{DLTensor}[borrowed[i] === nothing ? Ptr{DLTensor}(C_NULL) : pointer(tensors, i) for i in eachindex(tensors)]

function DDP(comm::Comm, grads::AbstractVector; bucket_bytes::Union{Integer,Nothing}=nothing,
             compression=DT_DDP_COMPRESS_NONE, find_unused::Bool=false, weighted::Bool=false)
    refusal = _Refusal()
    borrowed, tensors = _borrow_all(grads, refusal)
    d = DDPOptions()
    options = DDPOptions(d.version,
                         bucket_bytes === nothing ? d.bucket_bytes :
                             _take(() -> Int64(bucket_bytes), refusal, Int64(0)),
                         _take(() -> Cint(_compression(compression)), refusal, Cint(-1)),
                         Cint(find_unused), Cint(weighted),
                         _stream(Borrowed[b for b in borrowed if b !== nothing]...))
    pointers = _tensor_pointers(borrowed, tensors)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    code = GC.@preserve borrowed tensors pointers comm begin
        ccall(_sym(:dt_ddp_create), Cint,
              (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Ptr{DLTensor}}, Csize_t, Ref{DDPOptions}),
              out, comm, pointers, Csize_t(length(pointers)), options)
    end
    if refusal.error !== nothing
        code == Cint(DT_OK) && ccall(_sym(:dt_ddp_destroy), Cint, (Ptr{Cvoid},), out[])
        throw(refusal.error)
    end
    _check(code)
    return DDP(out[], Borrowed[b for b in borrowed], comm)
end

function DDP(f::Function, comm::Comm, grads::AbstractVector; kwargs...)
    ddp = DDP(comm, grads; kwargs...)
    try
        return f(ddp)
    finally
        close(ddp)
    end
end

# ccall passes a DDP as its handle, and keeps it (so its finalizer) at bay
# for the length of the call.
Base.cconvert(::Type{Ptr{Cvoid}}, ddp::DDP) = ddp
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, ddp::DDP)
    ddp.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the DDP is closed"))
    return ddp.handle
end

"""
    close(ddp::DDP)

Frees the DDP (waiting for allreduces in flight) and lets go of its arrays.
Closing again does nothing.
"""
function Base.close(ddp::DDP)
    Threads.atomic_xchg!(ddp.closed, true) && return nothing
    code = _destroy(ddp)
    _check(code)
    return nothing
end

function _finalize(ddp::DDP)
    Threads.atomic_xchg!(ddp.closed, true) || _destroy(ddp)
    return nothing
end

function _destroy(ddp::DDP)
    handle = ddp.handle
    ddp.handle = C_NULL
    code = ccall(_sym(:dt_ddp_destroy), Cint, (Ptr{Cvoid},), handle)
    empty!(ddp.borrowed)
    ddp.comm = nothing
    return code
end

Base.length(ddp::DDP) = length(ddp.borrowed)

# A 1-based index as the library's 0-based one.
function _index(i::Integer, what::AbstractString)
    i >= 1 || throw(DTrainError(DT_ERR_INVALID_ARGUMENT, "$what $i is out of range: indices start at 1"))
    return Csize_t(i - 1)
end

"""
    mark_ready!(ddp::DDP, i)

`grads[i]` is final for this step: it is copied into its bucket, whose
allreduce starts once the bucket is full and every earlier one has started.
Does nothing with sync off. Safe from several threads at once.
"""
function mark_ready!(ddp::DDP, i::Integer)
    _check(ccall(_sym(:dt_ddp_mark_ready), Cint, (Ptr{Cvoid}, Csize_t), ddp, _index(i, "gradient")))
    return nothing
end

"""
    wait(ddp::DDP; timeout_ms=-1)

Finishes the step: starts what has not started, waits at most `timeout_ms`
(negative: the communicator's deadline) and leaves the averages in the arrays.
With sync off, returns at once. Gradients never marked throw a
`DT_ERR_INVALID_USAGE` error (and stay as they were) unless the DDP was made
with `find_unused`.
"""
function Base.wait(ddp::DDP; timeout_ms::Integer=-1)
    _check(ccall(_sym(:dt_ddp_wait), Cint, (Ptr{Cvoid}, Cint), ddp, Cint(timeout_ms)))
    return nothing
end

"""
    set_sync!(ddp::DDP, sync::Bool)

Turns averaging on or off for the steps that follow (on at creation); throws
`DT_ERR_INVALID_USAGE` in the middle of a step. `is_sync(ddp)` tells which.
"""
function set_sync!(ddp::DDP, sync::Bool)
    _check(ccall(_sym(:dt_ddp_set_sync), Cint, (Ptr{Cvoid}, Cint), ddp, Cint(sync)))
    ddp.sync = sync
    return nothing
end

"""
    is_sync(ddp::DDP) -> Bool

Whether steps average (true at creation).
"""
is_sync(ddp::DDP) = ddp.sync

"""
    no_sync(f, ddp::DDP)

Runs `f()` with averaging off, for micro-steps that only accumulate gradients
locally (PyTorch's `no_sync`), then restores the previous setting:
`no_sync(ddp) do ... end`.
"""
function no_sync(f::Function, ddp::DDP)
    previous = ddp.sync
    set_sync!(ddp, false)
    try
        return f()
    finally
        ddp.closed[] || set_sync!(ddp, previous)
    end
end

"""
    set_local_weight!(ddp::DDP, weight)

This rank's weight in a `weighted` average from the next step on (finite,
≥ 0), for example its number of samples.
"""
function set_local_weight!(ddp::DDP, weight::Real)
    _check(ccall(_sym(:dt_ddp_set_local_weight), Cint, (Ptr{Cvoid}, Cdouble), ddp, Cdouble(weight)))
    return nothing
end

"""
    bucket_count(ddp::DDP) -> Int

The number of buckets.
"""
function bucket_count(ddp::DDP)
    out = Ref{Csize_t}(0)
    _check(ccall(_sym(:dt_ddp_bucket_count), Cint, (Ptr{Cvoid}, Ref{Csize_t}), ddp, out))
    return Int(out[])
end

"""
    bucket_of(ddp::DDP, i) -> Int

The bucket (from 1) that holds `grads[i]`; bucket 1 starts first.
"""
function bucket_of(ddp::DDP, i::Integer)
    out = Ref{Csize_t}(0)
    _check(ccall(_sym(:dt_ddp_bucket_of), Cint, (Ptr{Cvoid}, Csize_t, Ref{Csize_t}), ddp,
                 _index(i, "gradient"), out))
    return Int(out[]) + 1
end

"""
    bucket_state(ddp::DDP, b) -> BucketState

Where bucket `b` (from 1) is in the current step; never blocks.
"""
function bucket_state(ddp::DDP, b::Integer)
    out = Ref{Cint}(0)
    _check(ccall(_sym(:dt_ddp_bucket_state), Cint, (Ptr{Cvoid}, Csize_t, Ref{Cint}), ddp,
                 _index(b, "bucket"), out))
    return BucketState(out[])
end

"""
    broadcast_parameters!(comm, params; root=0)

Makes every rank's arrays `params` equal to those of rank `root`, so that
replicas start identical. Collective and blocking. Any element type DTrain
takes, integers included. Ranks that disagree about the count, element types,
sizes or root all throw a `DT_ERR_MISMATCH` error; a rank whose own arrays or
root are bad throws its own error (and the others `DT_ERR_MISMATCH`).
"""
function broadcast_parameters!(comm::Comm, params::AbstractVector; root::Integer=0)
    refusal = _Refusal()
    borrowed, tensors = _borrow_all(params, refusal)
    pointers = _tensor_pointers(borrowed, tensors)
    c_root = _take(() -> Cint(root), refusal, Cint(-1))
    code = GC.@preserve borrowed tensors pointers comm begin
        ccall(_sym(:dt_ddp_broadcast_parameters), Cint, (Ptr{Cvoid}, Ptr{Ptr{DLTensor}}, Csize_t, Cint),
              comm, pointers, Csize_t(length(pointers)), c_root)
    end
    refusal.error === nothing || throw(refusal.error)
    _check(code)
    return nothing
end
