# The pipeline executor (dt_pipeline in dtrain/pipeline.h): runs this rank's
# list of a PipelineSchedule, calling the trainer's Julia functions through
# @cfunction trampolines and moving activations and gradients between ranks.

const DT_PIPELINE_OPTIONS_VERSION = Cuint(1)
const DT_PIPELINE_STEP_INFO_VERSION = Cuint(1)

"""
    DTrain.PipelineOptions

`dt_pipeline_options`, field for field (version 1). `PipelineOptions()` gives
the library's defaults, written by `dt_pipeline_options_init`.
"""
struct PipelineOptions
    version::Cuint
    activation_elements::Int64
    activation_dtype::DLDataType
    forward::Ptr{Cvoid}
    backward::Ptr{Cvoid}
    backward_weight::Ptr{Cvoid}
    chunk_done::Ptr{Cvoid}
    user::Ptr{Cvoid}
end

function PipelineOptions()
    options = Ref{PipelineOptions}()
    _check(ccall(_sym(:dt_pipeline_options_init), Cint, (Ref{PipelineOptions}, Cuint),
                 options, DT_PIPELINE_OPTIONS_VERSION))
    return options[]
end

# dt_pipeline_step_info, field for field (version 1).
struct RawPipelineStepInfo
    version::Cuint
    step_seconds::Cdouble
    recv_wait_seconds::Cdouble
    comm_wait_seconds::Cdouble
    bubble_fraction::Cdouble
    peak_in_flight::Cint
end

"""
    PipelineStepInfo

What one [`step!`](@ref) of a [`Pipeline`](@ref) measured on this rank:
`step_seconds`, `recv_wait_seconds` (blocked on receives: idle time),
`comm_wait_seconds` (blocked in any wait), `bubble_fraction`
(`recv_wait_seconds / step_seconds`) and `peak_in_flight` (the most
(chunk, micro-batch) pairs alive at once).
"""
struct PipelineStepInfo
    step_seconds::Float64
    recv_wait_seconds::Float64
    comm_wait_seconds::Float64
    bubble_fraction::Float64
    peak_in_flight::Int
end

# What the trampolines reach through `user`: the trainer's functions, the
# activation's element type and length, and the first exception thrown,
# rethrown by step!.
mutable struct StageFunctions
    forward::Any
    backward::Any
    backward_weight::Any
    chunk_done::Any
    eltype::DataType
    elements::Int
    error::Any
end

# The activation a C tensor points at, as a Vector of the declared type, or
# `nothing` for NULL. Valid during the callback only.
function _activation(context::StageFunctions, tensor::Ptr{DLTensor})
    tensor == C_NULL && return nothing
    data = unsafe_load(tensor).data
    return unsafe_wrap(Array, Ptr{context.eltype}(data), context.elements)
end

# Exceptions must not unwind through C: the first is kept for step!, and the
# library gets DT_ERR_ABORTED, which ends the step.
function _run_stage(call, user::Ptr{Cvoid})::Cint
    context = unsafe_pointer_to_objref(user)::StageFunctions
    try
        call(context)
        return Cint(DT_OK)
    catch err
        context.error === nothing && (context.error = err)
        return Cint(DT_ERR_ABORTED)
    end
end

_forward_trampoline(user::Ptr{Cvoid}, chunk::Cint, microbatch::Cint, input::Ptr{DLTensor},
                    output::Ptr{DLTensor})::Cint =
    _run_stage(c -> c.forward(Int(chunk), Int(microbatch), _activation(c, input), _activation(c, output)), user)

_backward_trampoline(user::Ptr{Cvoid}, chunk::Cint, microbatch::Cint, grad_output::Ptr{DLTensor},
                     grad_input::Ptr{DLTensor})::Cint =
    _run_stage(c -> c.backward(Int(chunk), Int(microbatch), _activation(c, grad_output),
                               _activation(c, grad_input)), user)

_backward_weight_trampoline(user::Ptr{Cvoid}, chunk::Cint, microbatch::Cint)::Cint =
    _run_stage(c -> c.backward_weight(Int(chunk), Int(microbatch)), user)

_chunk_done_trampoline(user::Ptr{Cvoid}, chunk::Cint)::Cint = _run_stage(c -> c.chunk_done(Int(chunk)), user)

"""
    Pipeline(comm, schedule, T, elements; forward, backward, backward_weight=nothing, chunk_done=nothing)

The executor of this rank of `comm` (the pipeline group, whose size must be
the schedule's stages) for `schedule`. Every activation between stages, and
its gradient, is a `Vector{T}` of `elements` elements, owned by the
executor and valid only during the call that receives it (copy what you
keep). Chunks and micro-batches count from 0, as in C.

- `forward(chunk, microbatch, input, output)`: `input` is `nothing` on the
  first global stage, `output` on the last (which keeps its loss itself).
- `backward(chunk, microbatch, grad_output, grad_input)`: `grad_output` is
  `nothing` on the last global stage, `grad_input` on the first.
- `backward_weight(chunk, microbatch)`: ZB_H1 only, and required there.
- `chunk_done(chunk)`: once per chunk and step, after its last weight gradient.

An exception in any of them ends [`step!`](@ref), which rethrows it.
Free with `close`.
"""
mutable struct Pipeline
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    functions::StageFunctions

    function Pipeline(handle::Ptr{Cvoid}, functions::StageFunctions)
        p = new(handle, Threads.Atomic{Bool}(false), functions)
        finalizer(close, p)
        return p
    end
end

function Pipeline(comm::Comm, schedule::PipelineSchedule, ::Type{T}, elements::Integer; forward, backward,
                  backward_weight=nothing, chunk_done=nothing) where {T}
    functions = StageFunctions(forward, backward, backward_weight, chunk_done, T, Int(elements), nothing)
    d = PipelineOptions()
    options = PipelineOptions(d.version, Int64(elements), dldatatype(T),
                              @cfunction(_forward_trampoline, Cint,
                                         (Ptr{Cvoid}, Cint, Cint, Ptr{DLTensor}, Ptr{DLTensor})),
                              @cfunction(_backward_trampoline, Cint,
                                         (Ptr{Cvoid}, Cint, Cint, Ptr{DLTensor}, Ptr{DLTensor})),
                              backward_weight === nothing ? C_NULL :
                              @cfunction(_backward_weight_trampoline, Cint, (Ptr{Cvoid}, Cint, Cint)),
                              chunk_done === nothing ? C_NULL :
                              @cfunction(_chunk_done_trampoline, Cint, (Ptr{Cvoid}, Cint)),
                              pointer_from_objref(functions))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve functions begin
        _check(ccall(_sym(:dt_pipeline_create), Cint,
                     (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{PipelineOptions}),
                     out, comm, schedule, options))
    end
    return Pipeline(out[], functions)
end

Base.cconvert(::Type{Ptr{Cvoid}}, p::Pipeline) = p
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, p::Pipeline)
    p.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the Pipeline is closed"))
    return p.handle
end

"""
    step!(p::Pipeline) -> PipelineStepInfo

Runs one training step (see dtrain/pipeline.h). An exception from a stage
function is rethrown; a failing step otherwise throws a `DTrainError`
naming the rank and the action. After a failed step the communicator is
broken.
"""
function step!(p::Pipeline)
    info = Ref(RawPipelineStepInfo(DT_PIPELINE_STEP_INFO_VERSION, 0.0, 0.0, 0.0, 0.0, 0))
    p.functions.error = nothing
    code = GC.@preserve p ccall(_sym(:dt_pipeline_step), Cint, (Ptr{Cvoid}, Ref{RawPipelineStepInfo}), p, info)
    p.functions.error === nothing || throw(p.functions.error)
    _check(code)
    i = info[]
    return PipelineStepInfo(i.step_seconds, i.recv_wait_seconds, i.comm_wait_seconds, i.bubble_fraction,
                            Int(i.peak_in_flight))
end

"""
    close(p::Pipeline)

Frees the executor. Closing again does nothing.
"""
function Base.close(p::Pipeline)
    Threads.atomic_xchg!(p.closed, true) && return nothing
    handle = p.handle
    p.handle = C_NULL
    _check(ccall(_sym(:dt_pipeline_destroy), Cint, (Ptr{Cvoid},), handle))
    return nothing
end
