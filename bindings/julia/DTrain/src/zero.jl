# ZeRO stages 0–3, stage 3 being FSDP (dt_zero in dtrain/zero.h): parameters,
# gradients and optimizer state sharded over the ranks of a communicator.

# The versions of dt_zero_options and dt_zero_memory mirrored here.
const DT_ZERO_OPTIONS_VERSION = Cuint(3)
const DT_ZERO_MEMORY_VERSION = Cuint(1)

"""
    DTrain.ZeroOptions

`dt_zero_options`, field for field (version 3). `ZeroOptions()` gives the
library's defaults, written by `dt_zero_options_init`; [`Zero`](@ref) fills
one from its keyword arguments.
"""
struct ZeroOptions
    version::Cuint
    stage::Cint
    bucket_bytes::Int64
    unit_sizes::Ptr{Csize_t}
    unit_count::Csize_t
    prefetch::Cint
    stream::Ptr{Cvoid}
    norm_excluded::Ptr{Csize_t}
    norm_excluded_count::Csize_t
end

function ZeroOptions()
    options = Ref{ZeroOptions}()
    _check(ccall(_sym(:dt_zero_options_init), Cint, (Ref{ZeroOptions}, Cuint), options, DT_ZERO_OPTIONS_VERSION))
    return options[]
end

"""
    ZeroMemory

The bytes one rank of a [`Zero`](@ref) holds, by purpose (`dt_zero_memory`,
field for field): `parameters`, `gradients`, `optimizer_state`,
`master_weights`, `communication`, `padding` (elements added to make units
divisible by the number of ranks, already counted in the others) and `peak`
(the largest [`DTrain.total`](@ref) since creation).
"""
struct ZeroMemory
    version::Cuint
    parameters::Int64
    gradients::Int64
    optimizer_state::Int64
    master_weights::Int64
    communication::Int64
    padding::Int64
    peak::Int64
end

"""
    DTrain.total(memory::ZeroMemory) -> Int64

What the rank holds now: the sum of the five purposes.
"""
total(m::ZeroMemory) = m.parameters + m.gradients + m.optimizer_state + m.master_weights + m.communication

"""
    Zero(comm, params; stage=1, bucket_bytes, unit_sizes, prefetch=true, model_comm, norm_excluded,
         kind=:adamw, lr, ...)
    Zero(f, comm, params; kwargs...)

Trains a model with ZeRO over the ranks of `comm`. The `Zero` owns the
parameters and gradients: `params` (dense arrays, all `Float32`, all `Float16`
or all bfloat16) give their shapes and initial values, read here only; rank
0's values become every rank's. They are all host arrays, or all
[`DeviceBuffer`](@ref)s on the communicator's CUDA device, whose `stream` (the
first one's) is the one the trainer reads parameters and writes gradients on
(see "CUDA streams" in `dtrain/zero.h`); the Zero then keeps everything on
that device, and [`parameter`](@ref) and [`gradient`](@ref) return
`DeviceBuffer`s. What each rank keeps, by `stage`:

- 0: everything (DDP plus an optimizer);
- 1: full parameters and gradients, 1/N of the optimizer state;
- 2: full parameters, 1/N of the gradients and optimizer state;
- 3 (FSDP): 1/N of everything; a unit's full parameters exist only between
  [`gather!`](@ref) and [`release!`](@ref).

Parameters are grouped into units, contiguous runs in registration (forward)
order: `unit_sizes` (parameters per unit, e.g. one unit per layer, in any
stage), or by default one per parameter in stage 3 and buckets of about
`bucket_bytes` (25 MiB by default) in stages 0–2. `prefetch` (stage 3) starts the next unit's gather with
each `gather!`. The optimizer takes [`Optimizer`](@ref)'s keywords (`kind`,
`lr`, `weight_decay`, `momentum`, `betas`, `max_grad_norm`, ...), AdamW with
the library's defaults when none is given.

With tensor or pipeline parallelism, `comm` holds the replicas of this rank's
part of the model and `model_comm` the ranks holding its other parts (the
mesh's tp × pp group): `step!` clips by the whole model's gradient norm,
summed over both. `norm_excluded` lists the parameters (from 1) this rank
leaves out of that norm because a rank of `model_comm` counts the same
gradient (a layer norm's weight on every tensor-parallel rank but the first);
they are still clipped and updated ("With tensor or pipeline parallelism" in
`dtrain/zero.h`).

A step, the same on every stage (in stages 0–2 gathers and releases return at
once):

```julia
for u in 1:unit_count(z)                       # forward
    with_unit(z, u) do
        ...read parameter(z, i) for the unit's parameters...
    end
end
for u in unit_count(z):-1:1                    # backward
    with_unit(z, u) do
        for i in ...the unit's parameters, last first...
            gradient(z, i) .+= ...
            mark_ready!(z, i)
        end
    end
end
wait(z)
step!(z)
```

Creation, `wait`, `step!`, [`save_checkpoint`](@ref),
[`load_checkpoint!`](@ref) and gathers are collective: every rank calls them
in the same order, with the same shapes and options, or every rank throws a
`DT_ERR_MISMATCH` error. Indices count from 1. Free it with `close(z)` or the
do-block form; otherwise its finalizer frees it.
"""
mutable struct Zero
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    comm::Union{Comm,Nothing}
    model_comm::Union{Comm,Nothing}  # held: the dt_zero allreduces on it in step!
    count::Int
    sync::Bool

    function Zero(handle::Ptr{Cvoid}, comm::Comm, model_comm::Union{Comm,Nothing}, count::Int)
        z = new(handle, Threads.Atomic{Bool}(false), comm, model_comm, count, true)
        finalizer(_finalize, z)
        return z
    end
end

function Zero(comm::Comm, params::AbstractVector; stage::Integer=1, bucket_bytes::Union{Integer,Nothing}=nothing,
              unit_sizes::Union{AbstractVector,Nothing}=nothing, prefetch::Bool=true,
              model_comm::Union{Comm,Nothing}=nothing, norm_excluded::Union{AbstractVector,Nothing}=nothing,
              optimizer...)
    refusal = _Refusal()
    # What this rank cannot convert becomes a value the library refuses (a
    # negative learning rate, stage -1, ...), so that every rank hears of it.
    model = model_comm === nothing ? C_NULL : Base.unsafe_convert(Ptr{Cvoid}, model_comm)
    optimizer_options = _take(() -> _optimizer_options(; comm=model, optimizer...), refusal,
                              _optimizer_options(; lr=-1))
    sizes = unit_sizes === nothing ? Csize_t[] :
        _take(() -> Csize_t[Csize_t(s) for s in unit_sizes], refusal, Csize_t[])
    # Indices from 1 here, from 0 in C; one out of range becomes one the
    # library refuses.
    excluded = norm_excluded === nothing ? Csize_t[] :
        _take(() -> Csize_t[Csize_t(i - 1) for i in norm_excluded], refusal, Csize_t[typemax(Csize_t)])
    d = ZeroOptions()
    c_stage = _take(() -> Cint(stage), refusal, Cint(-1))
    c_bytes = bucket_bytes === nothing ? d.bucket_bytes : _take(() -> Int64(bucket_bytes), refusal, Int64(0))
    borrowed, tensors = _borrow_all(params, refusal)
    pointers = _tensor_pointers(borrowed, tensors)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    code = GC.@preserve borrowed tensors pointers sizes excluded comm model_comm begin
        options = ZeroOptions(d.version, c_stage, c_bytes,
                              unit_sizes === nothing ? Ptr{Csize_t}(C_NULL) : pointer(sizes),
                              Csize_t(unit_sizes === nothing ? 0 : length(sizes)), Cint(prefetch),
                              _stream(Borrowed[b for b in borrowed if b !== nothing]...),
                              isempty(excluded) ? Ptr{Csize_t}(C_NULL) : pointer(excluded),
                              Csize_t(length(excluded)))
        ccall(_sym(:dt_zero_create), Cint,
              (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Ptr{DLTensor}}, Csize_t, Ref{OptimizerOptions}, Ref{ZeroOptions}),
              out, comm, pointers, Csize_t(length(pointers)), optimizer_options, options)
    end
    if refusal.error !== nothing
        code == Cint(DT_OK) && ccall(_sym(:dt_zero_destroy), Cint, (Ptr{Cvoid},), out[])
        throw(refusal.error)
    end
    _check(code)
    return Zero(out[], comm, model_comm, length(params))
end

function Zero(f::Function, comm::Comm, params::AbstractVector; kwargs...)
    z = Zero(comm, params; kwargs...)
    try
        return f(z)
    finally
        close(z)
    end
end

# ccall passes a Zero as its handle, and keeps it (so its finalizer) at bay
# for the length of the call.
Base.cconvert(::Type{Ptr{Cvoid}}, z::Zero) = z
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, z::Zero)
    z.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the Zero is closed"))
    return z.handle
end

"""
    close(z::Zero)

Frees the Zero, waiting for communication in flight; arrays it lent become
invalid. Closing again does nothing.
"""
function Base.close(z::Zero)
    Threads.atomic_xchg!(z.closed, true) && return nothing
    _check(_destroy(z))
    return nothing
end

function _finalize(z::Zero)
    Threads.atomic_xchg!(z.closed, true) || _destroy(z)
    return nothing
end

function _destroy(z::Zero)
    handle = z.handle
    z.handle = C_NULL
    z.comm = nothing
    z.model_comm = nothing
    return ccall(_sym(:dt_zero_destroy), Cint, (Ptr{Cvoid},), handle)
end

Base.length(z::Zero) = z.count

"""
    parameter(z::Zero, i) -> Array
    parameter(z::Zero, i, T) -> Array{T}

Parameter `i`'s full values, as an array over the Zero's own memory (no copy;
dimensions last first, as they were given). Read it; the optimizer owns the
values. In stage 3 its unit must be gathered and waited for (inside
[`with_unit`](@ref), say), and the array is valid until the unit's
[`release!`](@ref); in stages 0–2 until the Zero is closed, and `step!`
updates it in place. The array does not keep `z` alive: use it while `z` is
referenced (inside `with_unit`, or under `GC.@preserve z`). `Float32` and
`Float16` are found from the dtype; bfloat16 needs `T`, a type for which
[`DTrain.dldatatype`](@ref) says bfloat16.
"""
function parameter(z::Zero, i::Integer, ::Type{T}=Nothing) where {T}
    tensor = Ref{DLTensor}()
    _check(ccall(_sym(:dt_zero_parameter), Cint, (Ptr{Cvoid}, Csize_t, Ref{DLTensor}), z,
                 _index(i, "parameter"), tensor))
    return _wrap(tensor[], T)
end

"""
    gradient(z::Zero, i) -> Array
    gradient(z::Zero, i, T) -> Array{T}

The array parameter `i`'s gradient is added into in this micro-step (no copy):
zeros at the start of a step (stages 0–1) or micro-step (stages 2–3). Add to
it (`gradient(z, i) .+= g`), then [`mark_ready!`](@ref). In stages 2–3 the
buffer is freed once the unit's reduction starts, so the array is valid only
until every parameter of its unit is marked; in stages 0–1 until the Zero is
closed. Asking again after the mark throws `DT_ERR_INVALID_USAGE`. As for
[`parameter`](@ref), use it while `z` is referenced.
"""
function gradient(z::Zero, i::Integer, ::Type{T}=Nothing) where {T}
    tensor = Ref{DLTensor}()
    _check(ccall(_sym(:dt_zero_gradient), Cint, (Ptr{Cvoid}, Csize_t, Ref{DLTensor}), z,
                 _index(i, "parameter"), tensor))
    return _wrap(tensor[], T)
end

# An array over the memory `t` describes, compact, of element type `T` (or,
# for `Nothing`, the Julia type of its dtype): host memory as an Array, CUDA
# memory as a flat DeviceBuffer.
function _wrap(t::DLTensor, ::Type{T}) where {T}
    t.device.device_type in (kDLCPU, kDLCUDAHost, kDLCUDA) ||
        throw(DTrainError(DT_ERR_INTERNAL, "the library lent memory on device type $(t.device.device_type)"))
    E = T === Nothing ? _eltype(t.dtype) : T
    dldatatype(E) == t.dtype ||
        throw(ArgumentError("DTrain: the tensor holds $(t.dtype), not $E"))
    # Row-major extents, listed last first: the same memory column-major.
    dims = ntuple(d -> Int(unsafe_load(t.shape, t.ndim - d + 1)), Int(t.ndim))
    if t.strides != C_NULL
        expected = 1
        for d in 1:Int(t.ndim)
            extent = unsafe_load(t.shape, t.ndim - d + 1)
            extent == 1 || unsafe_load(t.strides, t.ndim - d + 1) == expected ||
                throw(DTrainError(DT_ERR_INTERNAL, "the library lent a tensor that is not compact"))
            expected *= extent
        end
    end
    if t.device.device_type == kDLCUDA
        return DeviceBuffer(Ptr{E}(t.data + t.byte_offset), prod(dims; init=1), t.device.device_id)
    end
    return unsafe_wrap(Array, Ptr{E}(t.data + t.byte_offset), dims; own=false)
end

function _eltype(dtype::DLDataType)
    dtype == dldatatype(Float32) && return Float32
    dtype == dldatatype(Float16) && return Float16
    throw(ArgumentError("DTrain: a tensor of dtype $dtype (bfloat16?) needs its element type: parameter(z, i, T)"))
end

"""
    mark_ready!(z::Zero, i)

The gradient of parameter `i` is final for this micro-step; its unit's
reduction starts once the unit is complete. Safe from several threads at once.
"""
function mark_ready!(z::Zero, i::Integer)
    _check(ccall(_sym(:dt_zero_mark_ready), Cint, (Ptr{Cvoid}, Csize_t), z, _index(i, "parameter")))
    return nothing
end

"""
    wait(z::Zero; timeout_ms=-1)

Ends a micro-step: starts the reductions not started and waits for all of them,
at most `timeout_ms` (negative: the communicator's deadline). Gradients never
marked throw a `DT_ERR_INVALID_USAGE` error naming them.
"""
function Base.wait(z::Zero; timeout_ms::Integer=-1)
    _check(ccall(_sym(:dt_zero_wait), Cint, (Ptr{Cvoid}, Cint), z, Cint(timeout_ms)))
    return nothing
end

"""
    set_sync!(z::Zero, sync::Bool)

Turns the allreduce of stages 0–1 on or off for the micro-steps that follow
(on at creation): off, gradients accumulate locally until a micro-step with
sync on. Stages 2–3 reduce every micro-step; the result is the same. Throws
`DT_ERR_INVALID_USAGE` in the middle of a micro-step.
"""
function set_sync!(z::Zero, sync::Bool)
    _check(ccall(_sym(:dt_zero_set_sync), Cint, (Ptr{Cvoid}, Cint), z, Cint(sync)))
    z.sync = sync
    return nothing
end

"""
    is_sync(z::Zero) -> Bool

Whether micro-steps allreduce (true at creation).
"""
is_sync(z::Zero) = z.sync

"""
    no_sync(f, z::Zero)

Runs `f()` with sync off, for micro-steps that only accumulate, then restores
the previous setting: `no_sync(z) do ... end`.
"""
function no_sync(f::Function, z::Zero)
    previous = z.sync
    set_sync!(z, false)
    try
        return f()
    finally
        z.closed[] || set_sync!(z, previous)
    end
end

"""
    step!(z::Zero) -> StepInfo

Applies the optimizer to the gradients accumulated since the last step and
zeroes them. Collective. Throws `DT_ERR_INVALID_USAGE` when the last
micro-step was not ended by `wait` under sync, or a stage 3 unit is still
gathered.
"""
function step!(z::Zero)
    info = _step_info_out()
    _check(ccall(_sym(:dt_zero_step), Cint, (Ptr{Cvoid}, Ref{OptimizerStepInfo}), z, info))
    return StepInfo(info[])
end

"""
    unit_count(z::Zero) -> Int

The number of units.
"""
function unit_count(z::Zero)
    out = Ref{Csize_t}(0)
    _check(ccall(_sym(:dt_zero_unit_count), Cint, (Ptr{Cvoid}, Ref{Csize_t}), z, out))
    return Int(out[])
end

"""
    gather!(z::Zero, u)

Starts making unit `u` whole (stage 3: an allgather of its shards) and
prefetching the next one; does not block.
"""
function gather!(z::Zero, u::Integer)
    _check(ccall(_sym(:dt_zero_gather), Cint, (Ptr{Cvoid}, Csize_t), z, _index(u, "unit")))
    return nothing
end

"""
    gather_wait(z::Zero, u; timeout_ms=-1)

Waits until unit `u` is whole, gathering it first if `gather!` was not called;
then [`parameter`](@ref) serves its parameters.
"""
function gather_wait(z::Zero, u::Integer; timeout_ms::Integer=-1)
    _check(ccall(_sym(:dt_zero_gather_wait), Cint, (Ptr{Cvoid}, Csize_t, Cint), z, _index(u, "unit"),
                 Cint(timeout_ms)))
    return nothing
end

"""
    release!(z::Zero, u)

Hands unit `u`'s full parameters back (stage 3: frees them; arrays over them
become invalid). Throws `DT_ERR_INVALID_USAGE` for a unit not gathered.
"""
function release!(z::Zero, u::Integer)
    _check(ccall(_sym(:dt_zero_release), Cint, (Ptr{Cvoid}, Csize_t), z, _index(u, "unit")))
    return nothing
end

"""
    with_unit(f, z::Zero, u)

Gathers unit `u`, waits for it, runs `f()` and releases the unit, also when
`f` throws: `with_unit(z, u) do ... end`.
"""
function with_unit(f::Function, z::Zero, u::Integer)
    gather!(z, u)
    gather_wait(z, u)
    try
        return f()
    finally
        z.closed[] || release!(z, u)
    end
end

"""
    set_learning_rate!(z::Zero, lr)

Sets the learning rate of the next steps (finite, ≥ 0).
"""
function set_learning_rate!(z::Zero, lr::Real)
    _check(ccall(_sym(:dt_zero_set_lr), Cint, (Ptr{Cvoid}, Cfloat), z, Cfloat(lr)))
    return nothing
end

"""
    loss_scale(z::Zero) -> Float32

What to multiply the next loss by (1 without loss scaling).
"""
function loss_scale(z::Zero)
    out = Ref{Cfloat}(0)
    _check(ccall(_sym(:dt_zero_loss_scale), Cint, (Ptr{Cvoid}, Ref{Cfloat}), z, out))
    return out[]
end

"""
    memory_usage(z::Zero) -> ZeroMemory

The bytes this rank holds now, by purpose, and its peak.
"""
function memory_usage(z::Zero)
    out = Ref(ZeroMemory(DT_ZERO_MEMORY_VERSION, 0, 0, 0, 0, 0, 0, 0))
    _check(ccall(_sym(:dt_zero_memory_usage), Cint, (Ptr{Cvoid}, Ref{ZeroMemory}), z, out))
    return out[]
end

"""
    save_checkpoint(z::Zero, dir)

Writes a checkpoint into directory `dir` (created if missing): this rank's
shards of the master weights and optimizer state, and rank 0's metadata.
Collective; between steps. Throws `DT_ERR_IO` on every rank when a file cannot
be written.
"""
function save_checkpoint(z::Zero, dir::AbstractString)
    refusal = _Refusal()
    path = _take(() -> _c_path(dir), refusal, nothing)
    code = ccall(_sym(:dt_zero_save), Cint, (Ptr{Cvoid}, Cstring), z, path === nothing ? Cstring(C_NULL) : path)
    refusal.error === nothing || throw(refusal.error)
    _check(code)
    return nothing
end

"""
    load_checkpoint!(z::Zero, dir)

Loads the checkpoint in `dir`, written on any number of ranks and any stage.
Collective; between steps. Throws `DT_ERR_INVALID_ARGUMENT` on every rank for
a missing, corrupt or foreign checkpoint; either every rank loads everything
or nothing changes.
"""
function load_checkpoint!(z::Zero, dir::AbstractString)
    refusal = _Refusal()
    path = _take(() -> _c_path(dir), refusal, nothing)
    code = ccall(_sym(:dt_zero_load), Cint, (Ptr{Cvoid}, Cstring), z, path === nothing ? Cstring(C_NULL) : path)
    refusal.error === nothing || throw(refusal.error)
    _check(code)
    return nothing
end

# A path the library can take; a NUL byte would cut it short. Saving and
# loading are collective, so a rank that cannot pass its path passes NULL,
# which the library refuses on every rank.
function _c_path(dir::AbstractString)
    occursin('\0', dir) && throw(ArgumentError("DTrain: the directory $(repr(dir)) holds a NUL byte"))
    return String(dir)
end
