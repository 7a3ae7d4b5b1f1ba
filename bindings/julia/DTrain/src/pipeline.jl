# Pipeline schedules as data (dt_pipeline_schedule in dtrain/pipeline.h):
# every rank's forwards, backwards, sends and receives in one training step,
# in order. Building one is pure computation; no communicator is involved.

"""
    PipelineScheduleKind

The algorithm of a [`PipelineSchedule`](@ref) (`dt_pipeline_schedule_kind`):
`DT_PIPELINE_GPIPE`, `DT_PIPELINE_1F1B`, `DT_PIPELINE_INTERLEAVED_1F1B` or
`DT_PIPELINE_ZB_H1` (zero-bubble H1).
"""
@enum PipelineScheduleKind::Cint begin
    DT_PIPELINE_GPIPE = 0
    DT_PIPELINE_1F1B = 1
    DT_PIPELINE_INTERLEAVED_1F1B = 2
    DT_PIPELINE_ZB_H1 = 3
end

"""
    PipelineActionKind

What one step of a rank's list does (`dt_pipeline_action_kind`): a compute
action (`DT_PIPELINE_FORWARD`, `DT_PIPELINE_BACKWARD`, or for zero-bubble
schedules `DT_PIPELINE_BACKWARD_INPUT` and `DT_PIPELINE_BACKWARD_WEIGHT`) or
a message (`DT_PIPELINE_SEND_ACTIVATION`, `DT_PIPELINE_RECV_ACTIVATION`,
`DT_PIPELINE_SEND_GRAD`, `DT_PIPELINE_RECV_GRAD`).
"""
@enum PipelineActionKind::Cint begin
    DT_PIPELINE_FORWARD = 0
    DT_PIPELINE_BACKWARD = 1
    DT_PIPELINE_BACKWARD_INPUT = 2
    DT_PIPELINE_BACKWARD_WEIGHT = 3
    DT_PIPELINE_SEND_ACTIVATION = 4
    DT_PIPELINE_RECV_ACTIVATION = 5
    DT_PIPELINE_SEND_GRAD = 6
    DT_PIPELINE_RECV_GRAD = 7
end

# The version of dt_pipeline_schedule_options mirrored here.
const DT_PIPELINE_SCHEDULE_OPTIONS_VERSION = Cuint(1)

"""
    DTrain.PipelineScheduleOptions

`dt_pipeline_schedule_options`, field for field (version 1).
`PipelineScheduleOptions()` gives the library's defaults, written by
`dt_pipeline_schedule_options_init`.
"""
struct PipelineScheduleOptions
    version::Cuint
    kind::Cint
    stages::Cint
    microbatches::Cint
    chunks::Cint
end

function PipelineScheduleOptions()
    options = Ref{PipelineScheduleOptions}()
    _check(ccall(_sym(:dt_pipeline_schedule_options_init), Cint, (Ref{PipelineScheduleOptions}, Cuint),
                 options, DT_PIPELINE_SCHEDULE_OPTIONS_VERSION))
    return options[]
end

# dt_pipeline_action, field for field.
struct RawPipelineAction
    kind::Cint
    chunk::Cint
    microbatch::Cint
    peer::Cint
end

"""
    PipelineAction(kind, chunk, microbatch, peer)

One step of a rank's list: its [`PipelineActionKind`](@ref), the rank's model
chunk (global stage `chunk * stages + rank`) and the micro-batch, both
counted from 0 as in C, and `peer`, the rank a send goes to or a receive
comes from (-1 for compute actions).
"""
struct PipelineAction
    kind::PipelineActionKind
    chunk::Int
    microbatch::Int
    peer::Int
end

"""
    PipelineSchedule(kind; stages, microbatches, chunks=nothing)

Every rank's actions in one training step of a pipeline of `stages` ranks
over `microbatches` micro-batches, with `chunks` model chunks per rank
(`nothing`: 2 for `DT_PIPELINE_INTERLEAVED_1F1B`, 1 otherwise). Bad options
throw a `DT_ERR_INVALID_ARGUMENT` error naming the field. Ranks count from 0,
as everywhere in libdtrain. Read it with [`actions`](@ref),
[`bubble_fraction`](@ref) and [`peak_in_flight`](@ref); free it with
`close` (or leave it to the finalizer).
"""
mutable struct PipelineSchedule
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    stages::Int

    function PipelineSchedule(handle::Ptr{Cvoid}, stages::Int)
        s = new(handle, Threads.Atomic{Bool}(false), stages)
        finalizer(close, s)
        return s
    end
end

function PipelineSchedule(kind::PipelineScheduleKind; stages::Integer, microbatches::Integer,
                          chunks::Union{Integer,Nothing}=nothing)
    d = PipelineScheduleOptions()
    options = PipelineScheduleOptions(d.version, Cint(kind), Cint(stages), Cint(microbatches),
                                      chunks === nothing ? d.chunks : Cint(chunks))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    _check(ccall(_sym(:dt_pipeline_schedule_create), Cint, (Ref{Ptr{Cvoid}}, Ref{PipelineScheduleOptions}),
                 out, options))
    return PipelineSchedule(out[], Int(stages))
end

Base.cconvert(::Type{Ptr{Cvoid}}, s::PipelineSchedule) = s
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, s::PipelineSchedule)
    s.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the PipelineSchedule is closed"))
    return s.handle
end

"""
    close(s::PipelineSchedule)

Frees the schedule. Closing again does nothing.
"""
function Base.close(s::PipelineSchedule)
    Threads.atomic_xchg!(s.closed, true) && return nothing
    handle = s.handle
    s.handle = C_NULL
    _check(ccall(_sym(:dt_pipeline_schedule_destroy), Cint, (Ptr{Cvoid},), handle))
    return nothing
end

"""
    action_count(s::PipelineSchedule, rank) -> Int

The number of actions of `rank` (0 to `stages - 1`).
"""
function action_count(s::PipelineSchedule, rank::Integer)
    out = Ref{Csize_t}(0)
    _check(ccall(_sym(:dt_pipeline_schedule_length), Cint, (Ptr{Cvoid}, Cint, Ref{Csize_t}), s, Cint(rank), out))
    return Int(out[])
end

"""
    action(s::PipelineSchedule, rank, i) -> PipelineAction

The `i`-th action of `rank`, `i` counting from 1.
"""
function action(s::PipelineSchedule, rank::Integer, i::Integer)
    out = Ref{RawPipelineAction}()
    _check(ccall(_sym(:dt_pipeline_schedule_action), Cint, (Ptr{Cvoid}, Cint, Csize_t, Ref{RawPipelineAction}),
                 s, Cint(rank), _index(i, "action"), out))
    raw = out[]
    return PipelineAction(PipelineActionKind(raw.kind), raw.chunk, raw.microbatch, raw.peer)
end

"""
    actions(s::PipelineSchedule, rank) -> Vector{PipelineAction}

Every action of `rank`, in the order the rank runs them.
"""
actions(s::PipelineSchedule, rank::Integer) = [action(s, rank, i) for i in 1:action_count(s, rank)]

"""
    bubble_fraction(s::PipelineSchedule) -> Float64

The share of a step each rank idles, from the kind's closed form (see
dtrain/pipeline.h).
"""
function bubble_fraction(s::PipelineSchedule)
    out = Ref{Cdouble}(0)
    _check(ccall(_sym(:dt_pipeline_schedule_bubble_fraction), Cint, (Ptr{Cvoid}, Ref{Cdouble}), s, out))
    return out[]
end

"""
    peak_in_flight(s::PipelineSchedule, rank) -> Int

The most (chunk, micro-batch) pairs whose activations `rank` keeps at once.
"""
function peak_in_flight(s::PipelineSchedule, rank::Integer)
    out = Ref{Cint}(0)
    _check(ccall(_sym(:dt_pipeline_schedule_peak_in_flight), Cint, (Ptr{Cvoid}, Cint, Ref{Cint}), s, Cint(rank), out))
    return Int(out[])
end
