# Expert parallelism (dtrain/moe.h): top-k routing with a capacity limit, the
# auxiliary losses, and the dispatch and combine of tokens over an ep
# communicator, each with its backward pass.
#
# Julia matrices are column-major, so a C [rows, cols] tensor is a Julia
# cols × rows matrix: logits are E × T (one column per token), weights and
# expert indices k × T, tokens H × T, received rows H × R.

"""
    MoeScoring

How router logits become scores (`dt_moe_scoring`): `DT_MOE_SOFTMAX` over the
experts, or `DT_MOE_SIGMOID` of each logit (DeepSeek-V3).
"""
@enum MoeScoring::Cint begin
    DT_MOE_SOFTMAX = 0
    DT_MOE_SIGMOID = 1
end

"""
    MoeDropPolicy

Which pairs an expert over capacity drops (`dt_moe_drop_policy`): the later
tokens (`DT_MOE_DROP_BY_POSITION`) or the lowest-scoring ones (`DT_MOE_DROP_BY_SCORE`).
"""
@enum MoeDropPolicy::Cint begin
    DT_MOE_DROP_BY_POSITION = 0
    DT_MOE_DROP_BY_SCORE = 1
end

# The version of dt_moe_options that `MoeOptions` mirrors.
const DT_MOE_OPTIONS_VERSION = Cuint(1)

"The mesh dimensions expert parameters reduce their gradients over (`DT_MOE_EXPERT_GRAD_DIMS`)."
const MOE_EXPERT_GRAD_DIMS = "dp,cp"
"The mesh dimensions the other parameters of an MoE model reduce over (`DT_MOE_DENSE_GRAD_DIMS`)."
const MOE_DENSE_GRAD_DIMS = "dp,cp,ep"

"""
    MoeOptions(num_experts, top_k; scoring=DT_MOE_SOFTMAX, normalize=false,
               capacity_factor=0.0, drop_policy=DT_MOE_DROP_BY_POSITION)

`dt_moe_options`, field for field (version 1), starting from the library's
defaults (`dt_moe_options_init`). `capacity_factor > 0` limits each expert to
`ceil(capacity_factor * T * k / E)` of a rank's tokens; `<= 0` is dropless.
"""
struct MoeOptions
    version::Cuint
    num_experts::Cint
    top_k::Cint
    scoring::Cint
    normalize::Cint
    capacity_factor::Cdouble
    drop_policy::Cint
end

function MoeOptions(num_experts::Integer, top_k::Integer; scoring::MoeScoring=DT_MOE_SOFTMAX,
                    normalize::Bool=false, capacity_factor::Real=0.0,
                    drop_policy::MoeDropPolicy=DT_MOE_DROP_BY_POSITION)
    defaults = Ref{MoeOptions}()
    _check(ccall(_sym(:dt_moe_options_init), Cint, (Ref{MoeOptions}, Cuint), defaults, DT_MOE_OPTIONS_VERSION))
    return MoeOptions(defaults[].version, Cint(num_experts), Cint(top_k), Cint(scoring), Cint(normalize),
                      Cdouble(capacity_factor), Cint(drop_policy))
end

# A borrowed array's descriptor as a pointer, or NULL for `nothing`.
_tensor_pointer(b::Borrowed) = Base.unsafe_convert(Ptr{DLTensor}, b.tensor)
_tensor_pointer(::Nothing) = Ptr{DLTensor}(C_NULL)

"""
    moe_route(logits, opts) -> (weights, experts, dropped)

Routes the tokens of `logits` (E × T `Float32`): `weights` (k × T `Float32`),
`experts` (k × T `Int64`, zero-based expert indices, -1 where the capacity
dropped the pair) and how many pairs were dropped.
"""
function moe_route(logits::AbstractMatrix, opts::MoeOptions)
    tokens = size(logits, 2)
    weights = zeros(Float32, opts.top_k, tokens)
    experts = zeros(Int64, opts.top_k, tokens)
    dropped = Ref{Int64}(0)
    x, w, e = Borrowed(logits), Borrowed(weights), Borrowed(experts)
    GC.@preserve x w e begin
        _check(ccall(_sym(:dt_moe_route), Cint, (Ref{DLTensor}, Ref{MoeOptions}, Ref{DLTensor}, Ref{DLTensor}, Ref{Int64}),
                     x.tensor, opts, w.tensor, e.tensor, dropped))
    end
    return weights, experts, dropped[]
end

"""
    moe_route_backward(logits, d_weights, opts) -> d_logits

The gradient with respect to `logits` (E × T) from the one with respect to the
weights [`moe_route`](@ref) returned (k × T).
"""
function moe_route_backward(logits::AbstractMatrix, d_weights::AbstractMatrix, opts::MoeOptions)
    d_logits = zeros(Float32, size(logits)...)
    x, dw, dx = Borrowed(logits), Borrowed(d_weights), Borrowed(d_logits)
    GC.@preserve x dw dx begin
        _check(ccall(_sym(:dt_moe_route_backward), Cint, (Ref{DLTensor}, Ref{DLTensor}, Ref{MoeOptions}, Ref{DLTensor}),
                     x.tensor, dw.tensor, opts, dx.tensor))
    end
    return d_logits
end

"""
    moe_balance_loss(logits, opts; coeff=1.0, d_logits=nothing) -> (loss, counts)

The Switch load-balancing loss of `logits` (E × T) and the tokens routed to
each expert (`Int64`, length E). `coeff` times its gradient is added to
`d_logits` (E × T `Float32`) when given.
"""
function moe_balance_loss(logits::AbstractMatrix, opts::MoeOptions; coeff::Real=1.0, d_logits=nothing)
    counts = zeros(Int64, opts.num_experts)
    loss = Ref{Cdouble}(0)
    x, c = Borrowed(logits), Borrowed(counts)
    dx = d_logits === nothing ? nothing : Borrowed(d_logits)
    GC.@preserve x c dx begin
        _check(ccall(_sym(:dt_moe_balance_loss), Cint,
                     (Ref{DLTensor}, Ref{MoeOptions}, Cdouble, Ref{Cdouble}, Ref{DLTensor}, Ptr{DLTensor}),
                     x.tensor, opts, Cdouble(coeff), loss, c.tensor, _tensor_pointer(dx)))
    end
    return loss[], counts
end

"""
    moe_z_loss(logits; coeff=1.0, d_logits=nothing) -> loss

The router z-loss of `logits` (E × T): the mean over tokens of
logsumexp(logits)². `coeff` times its gradient is added to `d_logits` when given.
"""
function moe_z_loss(logits::AbstractMatrix; coeff::Real=1.0, d_logits=nothing)
    loss = Ref{Cdouble}(0)
    x = Borrowed(logits)
    dx = d_logits === nothing ? nothing : Borrowed(d_logits)
    GC.@preserve x dx begin
        _check(ccall(_sym(:dt_moe_z_loss), Cint, (Ref{DLTensor}, Cdouble, Ref{Cdouble}, Ptr{DLTensor}),
                     x.tensor, Cdouble(coeff), loss, _tensor_pointer(dx)))
    end
    return loss[]
end

"""
    MoePlan(ep::Comm, experts, hidden, opts)

The exchange of one layer's tokens over `ep` (collective over it), planned
from `experts` (k × T, as [`moe_route`](@ref) returns them) for tokens of
`hidden` elements. Rows arrive grouped by local expert
([`moe_expert_counts`](@ref) gives the group sizes), then by source rank, then
by token. Ranks that disagree about E, k or `hidden` get `DT_ERR_MISMATCH`.
The plan keeps the communicator alive itself. Free it with `close(plan)`; its
finalizer frees it locally.
"""
mutable struct MoePlan
    handle::Ptr{Cvoid}
    tokens::Int
    k::Int
    hidden::Int

    function MoePlan(ep::Comm, experts::AbstractMatrix, hidden::Integer, opts::MoeOptions)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        e = Borrowed(experts)
        GC.@preserve e begin
            _check(ccall(_sym(:dt_moe_plan_create), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Ref{DLTensor}, Int64, Ref{MoeOptions}),
                         out, ep, e.tensor, Int64(hidden), opts))
        end
        plan = new(out[], size(experts, 2), size(experts, 1), Int(hidden))
        finalizer(_destroy_moe_plan, plan)
        return plan
    end
end

Base.cconvert(::Type{Ptr{Cvoid}}, plan::MoePlan) = plan
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, plan::MoePlan)
    plan.handle == C_NULL && throw(DTrainError(DT_ERR_INVALID_USAGE, "the MoE plan is closed"))
    return plan.handle
end

function _destroy_moe_plan(plan::MoePlan)
    handle, plan.handle = plan.handle, C_NULL
    handle == C_NULL && return Cint(DT_OK)
    return ccall(_sym(:dt_moe_plan_destroy), Cint, (Ptr{Cvoid},), handle)
end

"""
    close(plan::MoePlan)

Frees the plan. Closing again does nothing.
"""
Base.close(plan::MoePlan) = (_check(_destroy_moe_plan(plan)); nothing)

"""
    moe_local_experts(plan) -> (first, count)

The zero-based global index of this rank's first expert, and how many it holds.
"""
function moe_local_experts(plan::MoePlan)
    first, count = Ref{Cint}(0), Ref{Cint}(0)
    _check(ccall(_sym(:dt_moe_plan_local_experts), Cint, (Ptr{Cvoid}, Ref{Cint}, Ref{Cint}), plan, first, count))
    return Int(first[]), Int(count[])
end

"""
    moe_received(plan) -> R

The rows [`moe_dispatch`](@ref) delivers to this rank.
"""
function moe_received(plan::MoePlan)
    rows = Ref{Int64}(0)
    _check(ccall(_sym(:dt_moe_plan_received), Cint, (Ptr{Cvoid}, Ref{Int64}), plan, rows))
    return Int(rows[])
end

"""
    moe_expert_counts(plan) -> Vector{Int64}

The rows delivered for each local expert, in order.
"""
function moe_expert_counts(plan::MoePlan)
    counts = zeros(Int64, moe_local_experts(plan)[2])
    _check(ccall(_sym(:dt_moe_plan_expert_counts), Cint, (Ptr{Cvoid}, Ptr{Int64}, Cint), plan, counts,
                 Cint(length(counts))))
    return counts
end

# A tensor of rows of `inner` elements: a host matrix as it is (inner × rows,
# column-major, which is C's [rows, inner]); a DeviceBuffer as rows × inner.
# Any other host array as it is, and a buffer that is not a whole number of
# rows as 1 × length: the library refuses either, giving both shapes (the
# call still reaches it, so that the other ranks hear of the refusal).
_rows(array::AbstractArray, inner::Integer) = Borrowed(array)

function _rows(buffer::DeviceBuffer{T}, inner::Integer) where {T}
    whole = inner > 0 && buffer.length % inner == 0
    shape = whole ? Int64[buffer.length ÷ inner, inner] : Int64[1, buffer.length]
    tensor = DLTensor(Ptr{Cvoid}(buffer.pointer), DLDevice(kDLCUDA, buffer.device), Int32(2), dldatatype(T),
                      pointer(shape), Ptr{Int64}(C_NULL), UInt64(0))
    return Borrowed(buffer, shape, Ref(tensor))
end

"""
    moe_dispatch(plan, tokens) -> received
    moe_dispatch!(plan, tokens, received) -> received

Sends the tokens (H × T `Float32`) to their experts' ranks; returns the rows
this rank receives (H × R), grouped by local expert. Collective.

The `!` forms of the four exchanges write outputs the caller gives, host
matrices or, with every operand of the call a [`DeviceBuffer`](@ref) of one
CUDA device, device memory (H × T then means T rows of H elements, `T * H`
long). Device calls run on that device, on a stream the library keeps for
the calling thread, which first waits for the legacy default stream and for
no other (finish work on other streams that writes the inputs first, e.g.
`CUDA.synchronize()`; the buffers' `stream` is not used here), and return
once their results are in place (`dtrain/moe.h`). A plan keeps the place of
its first exchange; without a usable CUDA device the library refuses device
buffers with `DT_ERR_UNSUPPORTED` before reading them.
"""
moe_dispatch(plan::MoePlan, tokens::AbstractMatrix) =
    moe_dispatch!(plan, tokens, zeros(Float32, plan.hidden, moe_received(plan)))

"In-place [`moe_dispatch`](@ref): writes `received` (host matrix or `DeviceBuffer`) and returns it."
function moe_dispatch!(plan::MoePlan, tokens, received)
    x, r = _rows(tokens, plan.hidden), _rows(received, plan.hidden)
    GC.@preserve x r begin
        _check(ccall(_sym(:dt_moe_dispatch), Cint, (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}), plan, x.tensor, r.tensor))
    end
    return received
end

"""
    moe_combine(plan, expert_out, weights) -> output
    moe_combine!(plan, expert_out, weights, output) -> output

Brings the experts' outputs (H × R, in the order dispatch delivered) back and
sums each token's weighted by `weights` (k × T): H × T. Collective.
"""
moe_combine(plan::MoePlan, expert_out::AbstractMatrix, weights::AbstractMatrix) =
    moe_combine!(plan, expert_out, weights, zeros(Float32, plan.hidden, plan.tokens))

"In-place [`moe_combine`](@ref) (see [`moe_dispatch`](@ref) for device buffers): writes `output` and returns it."
function moe_combine!(plan::MoePlan, expert_out, weights, output)
    y, w, o = _rows(expert_out, plan.hidden), _rows(weights, plan.k), _rows(output, plan.hidden)
    GC.@preserve y w o begin
        _check(ccall(_sym(:dt_moe_combine), Cint, (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
                     plan, y.tensor, w.tensor, o.tensor))
    end
    return output
end

"""
    moe_combine_backward(plan, d_out, weights) -> (d_expert_out, d_weights)
    moe_combine_backward!(plan, d_out, weights, d_expert_out, d_weights) -> (d_expert_out, d_weights)

From the gradient with respect to combine's output (H × T): the gradients
with respect to the experts' outputs (H × R) and the weights (k × T). Collective.
"""
moe_combine_backward(plan::MoePlan, d_out::AbstractMatrix, weights::AbstractMatrix) =
    moe_combine_backward!(plan, d_out, weights, zeros(Float32, plan.hidden, moe_received(plan)),
                          zeros(Float32, plan.k, plan.tokens))

"In-place [`moe_combine_backward`](@ref) (see [`moe_dispatch`](@ref) for device buffers): writes and returns `(d_expert_out, d_weights)`."
function moe_combine_backward!(plan::MoePlan, d_out, weights, d_expert_out, d_weights)
    dy, w = _rows(d_out, plan.hidden), _rows(weights, plan.k)
    dr, dw = _rows(d_expert_out, plan.hidden), _rows(d_weights, plan.k)
    GC.@preserve dy w dr dw begin
        _check(ccall(_sym(:dt_moe_combine_backward), Cint,
                     (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
                     plan, dy.tensor, w.tensor, dr.tensor, dw.tensor))
    end
    return d_expert_out, d_weights
end

"""
    moe_dispatch_backward(plan, d_received) -> d_tokens
    moe_dispatch_backward!(plan, d_received, d_tokens) -> d_tokens

The gradient with respect to the tokens (H × T) from the one with respect to
what dispatch delivered (H × R). Collective.
"""
moe_dispatch_backward(plan::MoePlan, d_received::AbstractMatrix) =
    moe_dispatch_backward!(plan, d_received, zeros(Float32, plan.hidden, plan.tokens))

"In-place [`moe_dispatch_backward`](@ref) (see [`moe_dispatch`](@ref) for device buffers): writes `d_tokens` and returns it."
function moe_dispatch_backward!(plan::MoePlan, d_received, d_tokens)
    dr, dx = _rows(d_received, plan.hidden), _rows(d_tokens, plan.hidden)
    GC.@preserve dr dx begin
        _check(ccall(_sym(:dt_moe_dispatch_backward), Cint, (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}),
                     plan, dr.tensor, dx.tensor))
    end
    return d_tokens
end

"""
    MoeActivation

The activation of the built-in experts (`dt_moe_activation`): GELU with the
tanh approximation, GELU with erf, or SiLU.
"""
@enum MoeActivation::Cint begin
    DT_MOE_GELU_TANH = 0
    DT_MOE_GELU_ERF = 1
    DT_MOE_SILU = 2
end

"""
    moe_experts_forward(x, counts, w1, w2; activation=DT_MOE_GELU_TANH) -> (hidden, y)

The built-in experts on rows grouped by expert: `x` (H × R `Float32`),
`counts` (rows per expert, `Int64`, length L, as [`moe_expert_counts`](@ref)
gives them), `w1` (F × H × L: C's [L, H, F]) and `w2` (H × F × L). Returns the
pre-activation (F × R, which the backward pass needs) and `y` (H × R).
"""
function moe_experts_forward(x::AbstractMatrix, counts::AbstractVector, w1::AbstractArray, w2::AbstractArray;
                             activation::MoeActivation=DT_MOE_GELU_TANH)
    hidden = zeros(Float32, size(w1, 1), size(x, 2))
    y = zeros(Float32, size(x)...)
    tx, c, t1, t2, th, ty = Borrowed(x), Borrowed(counts), Borrowed(w1), Borrowed(w2), Borrowed(hidden), Borrowed(y)
    GC.@preserve tx c t1 t2 th ty begin
        _check(ccall(_sym(:dt_moe_experts_forward), Cint,
                     (Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Cint, Ref{DLTensor}, Ref{DLTensor}),
                     tx.tensor, c.tensor, t1.tensor, t2.tensor, Cint(activation), th.tensor, ty.tensor))
    end
    return hidden, y
end

"""
    moe_experts_backward(x, counts, w1, w2, hidden, dy; activation=DT_MOE_GELU_TANH) -> (dx, dw1, dw2)

The backward pass of [`moe_experts_forward`](@ref) from `dy` (H × R) and the
forward's `hidden`: the gradients with respect to `x`, `w1` and `w2`, shaped
like them. An expert with no rows gets zero gradients.
"""
function moe_experts_backward(x::AbstractMatrix, counts::AbstractVector, w1::AbstractArray, w2::AbstractArray,
                              hidden::AbstractMatrix, dy::AbstractMatrix; activation::MoeActivation=DT_MOE_GELU_TANH)
    dx, dw1, dw2 = zeros(Float32, size(x)...), zeros(Float32, size(w1)...), zeros(Float32, size(w2)...)
    tx, c, t1, t2 = Borrowed(x), Borrowed(counts), Borrowed(w1), Borrowed(w2)
    th, tdy, tdx, td1, td2 = Borrowed(hidden), Borrowed(dy), Borrowed(dx), Borrowed(dw1), Borrowed(dw2)
    GC.@preserve tx c t1 t2 th tdy tdx td1 td2 begin
        _check(ccall(_sym(:dt_moe_experts_backward), Cint,
                     (Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Cint, Ref{DLTensor}, Ref{DLTensor},
                      Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
                     tx.tensor, c.tensor, t1.tensor, t2.tensor, Cint(activation), th.tensor, tdy.tensor, tdx.tensor,
                     td1.tensor, td2.tensor))
    end
    return dx, dw1, dw2
end
