# The parallelism planner (dtrain/plan.h): every way of training a
# transformer on a cluster, ranked by estimated step time, with memory per
# GPU and step time broken down, and why the others were rejected. Nothing
# here communicates.

"""
    PlanRecompute

Activation recomputation (`dt_plan_recompute`): `DT_PLAN_RECOMPUTE_NONE`,
`DT_PLAN_RECOMPUTE_SELECTIVE` (the attention core) or `DT_PLAN_RECOMPUTE_FULL`.
"""
@enum PlanRecompute::Cint begin
    DT_PLAN_RECOMPUTE_NONE = 0
    DT_PLAN_RECOMPUTE_SELECTIVE = 1
    DT_PLAN_RECOMPUTE_FULL = 2
end

"""
    PlanDimension

Bits of `PlanOptions.dimensions` (`dt_plan_dimension`): the mesh dimensions searched.
"""
@enum PlanDimension::Cint begin
    DT_PLAN_DIM_TP = 1
    DT_PLAN_DIM_PP = 2
    DT_PLAN_DIM_CP = 4
    DT_PLAN_DIM_EP = 8
end

"""
    PlanReason

Why a configuration was rejected (`dt_plan_reason`), `DT_PLAN_ACCEPTED` when it was not.
"""
@enum PlanReason::Cint begin
    DT_PLAN_ACCEPTED = 0
    DT_PLAN_REJECT_GPUS = 1
    DT_PLAN_REJECT_HEADS_TP = 2
    DT_PLAN_REJECT_FFN_TP = 3
    DT_PLAN_REJECT_LAYERS_PP = 4
    DT_PLAN_REJECT_SEQ_CP = 5
    DT_PLAN_REJECT_EXPERTS_EP = 6
    DT_PLAN_REJECT_BATCH = 7
    DT_PLAN_REJECT_SCHEDULE = 8
    DT_PLAN_REJECT_MEMORY = 9
end

"""
    PlanFormat

Output formats of [`plan_write`](@ref) (`dt_plan_format`): `DT_PLAN_TABLE`, `DT_PLAN_JSON`, `DT_PLAN_SVG`.
"""
@enum PlanFormat::Cint begin
    DT_PLAN_TABLE = 0
    DT_PLAN_JSON = 1
    DT_PLAN_SVG = 2
end

# The versions of the structs mirrored here.
const DT_PLAN_MODEL_VERSION = Cuint(1)
const DT_PLAN_CLUSTER_VERSION = Cuint(2)
const DT_PLAN_OPTIONS_VERSION = Cuint(1)
const DT_PLAN_CONFIG_VERSION = Cuint(1)
const DT_PLAN_ESTIMATE_VERSION = Cuint(1)
const DT_PLAN_SUMMARY_VERSION = Cuint(1)
const DT_PLAN_REJECTION_VERSION = Cuint(1)

"""
    DTrain.PlanModel

`dt_plan_model`, field for field (version 1). `PlanModel(; layers, hidden, heads, vocab, seq_len,
kv_heads, ffn_hidden, experts, top_k)` starts from the library's defaults (`DT_UNDEF` for the
optional sizes).
"""
struct PlanModel
    version::Cuint
    layers::Cint
    hidden::Cint
    heads::Cint
    kv_heads::Cint
    ffn_hidden::Cint
    vocab::Cint
    seq_len::Cint
    experts::Cint
    top_k::Cint
end

function PlanModel(; layers, hidden, heads, vocab, seq_len, kv_heads=nothing, ffn_hidden=nothing,
                   experts=nothing, top_k=nothing)
    d = Ref{PlanModel}()
    _check(ccall(_sym(:dt_plan_model_init), Cint, (Ref{PlanModel}, Cuint), d, DT_PLAN_MODEL_VERSION))
    pick(value, default) = value === nothing ? default : Cint(value)
    m = d[]
    return PlanModel(m.version, Cint(layers), Cint(hidden), Cint(heads), pick(kv_heads, m.kv_heads),
                     pick(ffn_hidden, m.ffn_hidden), Cint(vocab), Cint(seq_len), pick(experts, m.experts),
                     pick(top_k, m.top_k))
end

"""
    DTrain.PlanCluster

`dt_plan_cluster`, field for field (version 2): nodes, GPUs per node, GPU memory (bytes), peak
FLOP/s, memory bandwidth (bytes/s), GEMM efficiency, the intra- and inter-node bandwidths
(bytes/s per GPU) and latencies (seconds), and the share of data- and context-parallel
communication that compute hides (`overlap`, [0, 1]: 1 for GPUs, 0 for CPU ranks without a
spare core). Made by [`cluster_preset`](@ref) or
[`cluster_load`](@ref).
"""
struct PlanCluster
    version::Cuint
    nodes::Cint
    gpus_per_node::Cint
    gpu_memory::Cdouble
    peak_flops::Cdouble
    memory_bandwidth::Cdouble
    gemm_efficiency::Cdouble
    intra_bandwidth::Cdouble
    intra_latency::Cdouble
    inter_bandwidth::Cdouble
    inter_latency::Cdouble
    overlap::Cdouble
end

_empty_cluster() = PlanCluster(DT_PLAN_CLUSTER_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)

"""
    cluster_preset(name::AbstractString, nodes::Integer=1) -> PlanCluster

`nodes` nodes of a preset kind: "a100", "h100" or "h200" (8 GPUs each).
"""
function cluster_preset(name::AbstractString, nodes::Integer=1)
    out = Ref(_empty_cluster())
    _check(ccall(_sym(:dt_plan_cluster_preset), Cint, (Ref{PlanCluster}, Cstring, Cint), out, name, Cint(nodes)))
    return out[]
end

"""
    cluster_load(path::AbstractString) -> PlanCluster

A cluster file ("key = value" lines; see `dtrain/plan.h`).
"""
function cluster_load(path::AbstractString)
    out = Ref(_empty_cluster())
    _check(ccall(_sym(:dt_plan_cluster_load), Cint, (Ref{PlanCluster}, Cstring), out, path))
    return out[]
end

"""
    DTrain.PlanOptions

`dt_plan_options`, field for field (version 1). `PlanOptions(global_batch; kwargs...)` starts from
the library's defaults; keyword arguments name the fields to change.
"""
struct PlanOptions
    version::Cuint
    global_batch::Int64
    dimensions::Cuint
    zero_stages::Cuint
    schedules::Cuint
    recompute::Cuint
    max_micro_batch::Cint
    max_virtual_stages::Cint
    sequence_parallel::Cint
    memory_fraction::Cdouble
    keep::Csize_t
end

function PlanOptions(global_batch::Integer; kwargs...)
    d = Ref{PlanOptions}()
    _check(ccall(_sym(:dt_plan_options_init), Cint, (Ref{PlanOptions}, Cuint), d, DT_PLAN_OPTIONS_VERSION))
    values = Any[getfield(d[], f) for f in fieldnames(PlanOptions)]
    values[2] = Int64(global_batch)
    for (key, value) in kwargs
        i = findfirst(==(key), fieldnames(PlanOptions))
        i === nothing && throw(ArgumentError("DTrain: PlanOptions has no field $(key)"))
        values[i] = convert(fieldtype(PlanOptions, i), value)
    end
    return PlanOptions(values...)
end

"""
    DTrain.PlanConfig

`dt_plan_config`, field for field (version 1): dp, tp, pp, cp, ep, the ZeRO stage, the schedule
(a `PipelineScheduleKind` value), virtual stages, micro-batch size and recomputation.
`PlanConfig(; kwargs...)` starts from `DT_PLAN_CONFIG_INIT`.
"""
struct PlanConfig
    version::Cuint
    dp::Cint
    tp::Cint
    pp::Cint
    cp::Cint
    ep::Cint
    zero_stage::Cint
    schedule::Cint
    virtual_stages::Cint
    micro_batch::Cint
    recompute::Cint
end

function PlanConfig(; kwargs...)
    d = Ref{PlanConfig}()
    _check(ccall(_sym(:dt_plan_config_init), Cint, (Ref{PlanConfig}, Cuint), d, DT_PLAN_CONFIG_VERSION))
    values = Any[getfield(d[], f) for f in fieldnames(PlanConfig)]
    for (key, value) in kwargs
        i = findfirst(==(key), fieldnames(PlanConfig))
        i === nothing && throw(ArgumentError("DTrain: PlanConfig has no field $(key)"))
        values[i] = Cint(value isa Enum ? Integer(value) : value)
    end
    return PlanConfig(values...)
end

"""
    DTrain.PlanEstimate

`dt_plan_estimate`, field for field (version 1): the reason (a `PlanReason` value), the
configuration, the micro-batches, memory per GPU in bytes (`mem_*`), seconds per step
(`time_*`), FLOPs, MFU and TFLOP/s per GPU.
"""
struct PlanEstimate
    version::Cuint
    reason::Cint
    config::PlanConfig
    micro_batches::Int64
    mem_parameters::Int64
    mem_gradients::Int64
    mem_optimizer_state::Int64
    mem_master_weights::Int64
    mem_activations::Int64
    mem_activations_without_recompute::Int64
    mem_communication::Int64
    mem_total::Int64
    time_compute::Cdouble
    time_recompute::Cdouble
    time_bubble::Cdouble
    time_tp::Cdouble
    time_cp::Cdouble
    time_ep::Cdouble
    time_pp::Cdouble
    time_dp::Cdouble
    time_optimizer::Cdouble
    time_step::Cdouble
    model_flops::Cdouble
    hardware_flops::Cdouble
    mfu::Cdouble
    tflops_per_gpu::Cdouble
end

_empty_config() = PlanConfig(DT_PLAN_CONFIG_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
_empty_estimate() = PlanEstimate(DT_PLAN_ESTIMATE_VERSION, 0, _empty_config(), ntuple(_ -> 0, fieldcount(PlanEstimate) - 3)...)

# dt_plan_summary and dt_plan_rejection, field for field (version 1).
struct PlanSummary
    version::Cuint
    evaluated::Int64
    feasible::Int64
    kept::Csize_t
    seconds::Cdouble
end

struct RawPlanRejection
    version::Cuint
    count::Int64
    example::PlanConfig
    message::Ptr{Cchar}
end

"""
    Plan(model::PlanModel, cluster::PlanCluster, options::PlanOptions)
    Plan(f, model, cluster, options)

Searches every configuration of `cluster`'s GPUs that `options` allows; `plan_summary`,
`plan_ranked`, `plan_rejection` and `plan_write` read the result. `close` frees it.
"""
mutable struct Plan
    handle::Ptr{Cvoid}

    function Plan(model::PlanModel, cluster::PlanCluster, options::PlanOptions)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        _check(ccall(_sym(:dt_plan_create), Cint,
                     (Ref{Ptr{Cvoid}}, Ref{PlanModel}, Ref{PlanCluster}, Ref{PlanOptions}),
                     out, model, cluster, options))
        plan = new(out[])
        finalizer(close, plan)
        return plan
    end
end

function Plan(f::Function, args...)
    plan = Plan(args...)
    try
        return f(plan)
    finally
        close(plan)
    end
end

function Base.close(plan::Plan)
    handle, plan.handle = plan.handle, C_NULL
    handle == C_NULL || ccall(_sym(:dt_plan_destroy), Cint, (Ptr{Cvoid},), handle)
    return nothing
end

function _live(plan::Plan)
    plan.handle == C_NULL && throw(DTrainError(DT_ERR_INVALID_USAGE, "the plan is closed"))
    return plan.handle
end

"""
    plan_summary(plan) -> PlanSummary

Configurations evaluated, feasible and kept, and the search's seconds.
"""
function plan_summary(plan::Plan)
    out = Ref(PlanSummary(DT_PLAN_SUMMARY_VERSION, 0, 0, 0, 0.0))
    _check(ccall(_sym(:dt_plan_info), Cint, (Ptr{Cvoid}, Ref{PlanSummary}), _live(plan), out))
    return out[]
end

"""
    plan_ranked(plan, index) -> PlanEstimate

The estimate ranked `index` (1: the fastest, as Julia counts).
"""
function plan_ranked(plan::Plan, index::Integer)
    out = Ref(_empty_estimate())
    _check(ccall(_sym(:dt_plan_ranked), Cint, (Ptr{Cvoid}, Csize_t, Ref{PlanEstimate}),
                 _live(plan), Csize_t(index - 1), out))
    return out[]
end

"""
    plan_rejection(plan, reason::PlanReason) -> (count, example::PlanConfig, message)

How many configurations were rejected for `reason`, the first of them and why.
"""
function plan_rejection(plan::Plan, reason::PlanReason)
    out = Ref(RawPlanRejection(DT_PLAN_REJECTION_VERSION, 0, _empty_config(), C_NULL))
    _check(ccall(_sym(:dt_plan_rejected), Cint, (Ptr{Cvoid}, Cint, Ref{RawPlanRejection}),
                 _live(plan), Cint(reason), out))
    r = out[]
    return (r.count, r.example, r.message == C_NULL ? "" : unsafe_string(r.message))
end

"""
    plan_write(plan, path; format=DT_PLAN_TABLE, top=0)

Writes the `top` fastest (0: all kept) as a table, JSON or SVG ("-": standard output).
"""
function plan_write(plan::Plan, path::AbstractString; format::PlanFormat=DT_PLAN_TABLE, top::Integer=0)
    _check(ccall(_sym(:dt_plan_write), Cint, (Ptr{Cvoid}, Cstring, Cint, Csize_t),
                 _live(plan), path, Cint(format), Csize_t(top)))
    return nothing
end

"""
    plan_evaluate(model, cluster, options, config) -> PlanEstimate

One configuration's estimate. A rejected configuration is no error: the estimate's `reason` says
why (and `DTrain.error_last()` explains it); for `DT_PLAN_REJECT_MEMORY` the rest holds what it
would take. Bad arguments throw `DTrainError`.
"""
function plan_evaluate(model::PlanModel, cluster::PlanCluster, options::PlanOptions, config::PlanConfig)
    out = Ref(_empty_estimate())
    code = ccall(_sym(:dt_plan_evaluate), Cint,
                 (Ref{PlanModel}, Ref{PlanCluster}, Ref{PlanOptions}, Ref{PlanConfig}, Ref{PlanEstimate}),
                 model, cluster, options, config, out)
    out[].reason == Cint(DT_PLAN_ACCEPTED) && _check(code)
    return out[]
end

"""
    zero_memory(unit_elements, stage, ranks; rank=0, eltype=Float32, kind=:adamw, optimizer...) -> ZeroMemory

What a [`Zero`](@ref) over units of `unit_elements` elements will hold on `rank` of `ranks` right
after creation, for parameters of `eltype` and the optimizer's keyword arguments.
"""
function zero_memory(unit_elements::AbstractVector{<:Integer}, stage::Integer, ranks::Integer; rank::Integer=0,
                     eltype::Type=Float32, kind=:adamw, optimizer...)
    units = Int64[n for n in unit_elements]
    options = _optimizer_options(; kind, optimizer...)
    out = Ref(ZeroMemory(DT_ZERO_MEMORY_VERSION, 0, 0, 0, 0, 0, 0, 0))
    _check(ccall(_sym(:dt_plan_zero_memory), Cint,
                 (Ptr{Int64}, Csize_t, Cint, Cint, Cint, DLDataType, Ref{OptimizerOptions}, Ref{ZeroMemory}),
                 units, Csize_t(length(units)), Cint(stage), Cint(ranks), Cint(rank), dldatatype(eltype), options,
                 out))
    return out[]
end
