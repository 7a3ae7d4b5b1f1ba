# Optimizers (dt_optimizer in dtrain/optim.h): SGD and AdamW over arrays the
# optimizer updates in place.

"""
    OptimizerKind

The update rule of an [`Optimizer`](@ref) (`dt_optimizer_kind`): `DT_OPTIM_SGD`
(momentum, Nesterov, L2 weight decay) or `DT_OPTIM_ADAMW` (decoupled weight
decay, bias correction).
"""
@enum OptimizerKind::Cint begin
    DT_OPTIM_SGD = 0
    DT_OPTIM_ADAMW = 1
end

# The versions of dt_optimizer_options and dt_optimizer_step_info mirrored here.
const DT_OPTIMIZER_OPTIONS_VERSION = Cuint(1)
const DT_OPTIMIZER_STEP_INFO_VERSION = Cuint(1)

"""
    DTrain.OptimizerOptions

`dt_optimizer_options`, field for field (version 1). `OptimizerOptions()` gives
the library's defaults, written by `dt_optimizer_options_init`; [`Optimizer`](@ref)
fills one from its keyword arguments.
"""
struct OptimizerOptions
    version::Cuint
    kind::Cint
    lr::Cfloat
    weight_decay::Cfloat
    momentum::Cfloat
    dampening::Cfloat
    nesterov::Cint
    beta1::Cfloat
    beta2::Cfloat
    eps::Cfloat
    max_grad_norm::Cfloat
    loss_scale::Cfloat
    dynamic_loss_scale::Cint
    growth_factor::Cfloat
    backoff_factor::Cfloat
    growth_interval::Cint
    comm::Ptr{Cvoid}
end

function OptimizerOptions()
    options = Ref{OptimizerOptions}()
    _check(ccall(_sym(:dt_optimizer_options_init), Cint, (Ref{OptimizerOptions}, Cuint),
                 options, DT_OPTIMIZER_OPTIONS_VERSION))
    return options[]
end

# `dt_optimizer_step_info`, field for field (version 1).
struct OptimizerStepInfo
    version::Cuint
    skipped::Cint
    grad_norm::Cdouble
    step::Int64
    loss_scale::Cfloat
end

"""
    StepInfo

What one [`step!`](@ref) did: `skipped` (a gradient held inf or NaN and nothing
was updated), `grad_norm` (the global L2 norm of the unscaled gradients before
clipping), `step` (steps applied so far) and `loss_scale` (what to multiply the
next loss by).
"""
struct StepInfo
    skipped::Bool
    grad_norm::Float64
    step::Int
    loss_scale::Float32
end

StepInfo(i::OptimizerStepInfo) = StepInfo(i.skipped != 0, i.grad_norm, Int(i.step), i.loss_scale)

# A dt_optimizer_step_info of the version mirrored here, for a step to fill.
_step_info_out() = Ref(OptimizerStepInfo(DT_OPTIMIZER_STEP_INFO_VERSION, 0, 0.0, 0, 0.0f0))

"""
    Optimizer(params, grads; kind=DT_OPTIM_ADAMW, lr, weight_decay, momentum, dampening,
              nesterov, betas, eps, max_grad_norm, loss_scale, dynamic_loss_scale,
              growth_factor, backoff_factor, growth_interval, comm)
    Optimizer(f, params, grads; kwargs...)

An optimizer that updates the arrays `params[i]` in place from `grads[i]`
(same shape and element type: `Float32`, `Float16`, or bfloat16 through
[`DTrain.dldatatype`](@ref)). It keeps both referenced until closed, and writes
into them only inside [`step!`](@ref) and [`zero_grad!`](@ref). Every keyword
left out (or `nothing`) takes the library's default, documented in
`dtrain/optim.h`: `kind` is an [`OptimizerKind`](@ref), `:sgd` or `:adamw`;
`betas` is AdamW's `(beta1, beta2)`; `max_grad_norm` clips the global gradient
norm; `loss_scale` is the factor the gradients arrive multiplied by, adjusted
after each step when `dynamic_loss_scale` is true. With a `comm` the arrays are
this rank's shard of a sharded model and the gradient norm is summed over its
ranks: every rank must then step together.

`Float16` parameters get `Float32` master weights. Free it with `close(opt)` or
use the do-block form; otherwise its finalizer frees it.
"""
mutable struct Optimizer
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    # The arrays and their descriptors: libdtrain writes into them until the
    # handle is destroyed.
    borrowed::Vector{Borrowed}
    comm::Union{Comm,Nothing}

    function Optimizer(handle::Ptr{Cvoid}, borrowed::Vector{Borrowed}, comm::Union{Comm,Nothing})
        opt = new(handle, Threads.Atomic{Bool}(false), borrowed, comm)
        finalizer(_finalize, opt)
        return opt
    end
end

_kind(kind::OptimizerKind) = kind
function _kind(kind::Symbol)
    kind === :sgd && return DT_OPTIM_SGD
    kind === :adamw && return DT_OPTIM_ADAMW
    throw(ArgumentError("DTrain: kind $(repr(kind)) is not :sgd or :adamw"))
end

_float_option(value::Nothing, default::Cfloat) = default
_float_option(value::Real, default::Cfloat) = Cfloat(value)
_flag_option(value::Nothing, default::Cint) = default
_flag_option(value::Integer, default::Cint) = Cint(value)

# dt_optimizer_options from the keyword arguments Optimizer and Zero share;
# `nothing` keeps the library's default.
function _optimizer_options(; kind=DT_OPTIM_ADAMW, lr=nothing, weight_decay=nothing, momentum=nothing,
                            dampening=nothing, nesterov=nothing, betas=nothing, eps=nothing,
                            max_grad_norm=nothing, loss_scale=nothing, dynamic_loss_scale=nothing,
                            growth_factor=nothing, backoff_factor=nothing, growth_interval=nothing,
                            comm::Ptr{Cvoid}=C_NULL)
    d = OptimizerOptions()
    beta1, beta2 = betas === nothing ? (d.beta1, d.beta2) : (Cfloat(betas[1]), Cfloat(betas[2]))
    return OptimizerOptions(
        d.version, Cint(_kind(kind)), _float_option(lr, d.lr),
        _float_option(weight_decay, d.weight_decay), _float_option(momentum, d.momentum),
        _float_option(dampening, d.dampening), _flag_option(nesterov, d.nesterov), beta1, beta2,
        _float_option(eps, d.eps), _float_option(max_grad_norm, d.max_grad_norm),
        _float_option(loss_scale, d.loss_scale), _flag_option(dynamic_loss_scale, d.dynamic_loss_scale),
        _float_option(growth_factor, d.growth_factor), _float_option(backoff_factor, d.backoff_factor),
        growth_interval === nothing ? d.growth_interval : Cint(growth_interval), comm)
end

function Optimizer(params::AbstractVector, grads::AbstractVector; kind=DT_OPTIM_ADAMW, lr=nothing,
                   weight_decay=nothing, momentum=nothing, dampening=nothing, nesterov=nothing,
                   betas=nothing, eps=nothing, max_grad_norm=nothing, loss_scale=nothing,
                   dynamic_loss_scale=nothing, growth_factor=nothing, backoff_factor=nothing,
                   growth_interval=nothing, comm::Union{Comm,Nothing}=nothing)
    length(params) == length(grads) || throw(DTrainError(DT_ERR_INVALID_ARGUMENT,
        "grads: $(length(grads)) gradients for $(length(params)) parameters"))
    borrowed = Borrowed[Borrowed(a) for a in Iterators.flatten((params, grads))]
    n = length(params)
    tensors = DLTensor[b.tensor[] for b in borrowed]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    code = GC.@preserve borrowed tensors comm begin
        options = _optimizer_options(; kind, lr, weight_decay, momentum, dampening, nesterov, betas, eps,
                                     max_grad_norm, loss_scale, dynamic_loss_scale, growth_factor,
                                     backoff_factor, growth_interval,
                                     comm=comm === nothing ? C_NULL : Base.unsafe_convert(Ptr{Cvoid}, comm))
        # params are tensors[1:n], grads tensors[n+1:2n]; pointer arithmetic counts bytes.
        base = pointer(tensors)
        ccall(_sym(:dt_optimizer_create), Cint,
              (Ref{Ptr{Cvoid}}, Ptr{DLTensor}, Ptr{DLTensor}, Csize_t, Ref{OptimizerOptions}),
              out, base, base + n * sizeof(DLTensor), Csize_t(n), options)
    end
    _check(code)
    return Optimizer(out[], borrowed, comm)
end

function Optimizer(f::Function, params::AbstractVector, grads::AbstractVector; kwargs...)
    opt = Optimizer(params, grads; kwargs...)
    try
        return f(opt)
    finally
        close(opt)
    end
end

# ccall passes an Optimizer as its handle, and keeps it (so its finalizer) at
# bay for the length of the call.
Base.cconvert(::Type{Ptr{Cvoid}}, opt::Optimizer) = opt
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, opt::Optimizer)
    opt.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the optimizer is closed"))
    return opt.handle
end

"""
    close(opt::Optimizer)

Frees the optimizer and lets go of its arrays. Closing again does nothing.
"""
function Base.close(opt::Optimizer)
    Threads.atomic_xchg!(opt.closed, true) && return nothing
    code = _destroy(opt)
    _check(code)
    return nothing
end

function _finalize(opt::Optimizer)
    Threads.atomic_xchg!(opt.closed, true) || _destroy(opt)
    return nothing
end

function _destroy(opt::Optimizer)
    handle = opt.handle
    opt.handle = C_NULL
    code = ccall(_sym(:dt_optimizer_destroy), Cint, (Ptr{Cvoid},), handle)
    empty!(opt.borrowed)
    opt.comm = nothing
    return code
end

"""
    step!(opt::Optimizer) -> StepInfo

Takes one step: skipped, changing nothing, when a gradient holds inf or NaN;
otherwise the gradients are unscaled and clipped and the parameters updated.
"""
function step!(opt::Optimizer)
    info = _step_info_out()
    _check(ccall(_sym(:dt_optimizer_step), Cint, (Ptr{Cvoid}, Ref{OptimizerStepInfo}), opt, info))
    return StepInfo(info[])
end

"""
    zero_grad!(opt::Optimizer)

Sets every gradient to zero.
"""
zero_grad!(opt::Optimizer) = _check(ccall(_sym(:dt_optimizer_zero_grad), Cint, (Ptr{Cvoid},), opt))

"""
    learning_rate(opt::Optimizer) -> Float32

The current learning rate.
"""
function learning_rate(opt::Optimizer)
    out = Ref{Cfloat}(0)
    _check(ccall(_sym(:dt_optimizer_lr), Cint, (Ptr{Cvoid}, Ref{Cfloat}), opt, out))
    return out[]
end

"""
    set_learning_rate!(opt::Optimizer, lr)

Sets the learning rate of the next steps (finite, ≥ 0).
"""
function set_learning_rate!(opt::Optimizer, lr::Real)
    _check(ccall(_sym(:dt_optimizer_set_lr), Cint, (Ptr{Cvoid}, Cfloat), opt, Cfloat(lr)))
    return nothing
end

"""
    loss_scale(opt::Optimizer) -> Float32

What to multiply the next loss by (1 without loss scaling).
"""
function loss_scale(opt::Optimizer)
    out = Ref{Cfloat}(0)
    _check(ccall(_sym(:dt_optimizer_loss_scale), Cint, (Ptr{Cvoid}, Ref{Cfloat}), opt, out))
    return out[]
end
