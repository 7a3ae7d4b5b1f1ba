# Context parallelism (dtrain/cp.h): blockwise attention, the merge of partial
# results, sequence layouts, and ring and all-to-all (Ulysses) attention over a
# communicator.
#
# Julia arrays are column-major, so the row-major tensors of dtrain/cp.h are
# arrays with their dimensions reversed: queries and outputs
# (head_dim, q_heads, seq), keys and values (head_dim, kv_heads, seq),
# log-sum-exps (q_heads, seq), all Float32; positions Vector{Int64}; a whole
# sequence for cp_shard! has the sequence as its last dimension.

"""
    CpLayout

How a sequence is split between the ranks of a context-parallel group
(`dt_cp_layout`): `DT_CP_CONTIGUOUS` (rank r holds the r-th block) or
`DT_CP_ZIGZAG` (of 2cp chunks, rank r holds chunks r and 2cp-1-r, which
balances causal attention).
"""
@enum CpLayout::Cint begin
    DT_CP_CONTIGUOUS = 0
    DT_CP_ZIGZAG = 1
end

"""
    cp_positions(layout, cp_size, cp_rank, local_len) -> Vector{Int64}

The global positions (0-based) of the `local_len` tokens rank `cp_rank` holds.
"""
function cp_positions(layout::CpLayout, cp_size::Integer, cp_rank::Integer, local_len::Integer)
    positions = Vector{Int64}(undef, local_len)
    p = Borrowed(positions)
    GC.@preserve p _check(ccall(_sym(:dt_cp_positions), Cint, (Cint, Cint, Cint, Ref{DLTensor}),
                                Cint(layout), Cint(cp_size), Cint(cp_rank), p.tensor))
    return positions
end

"""
    cp_shard!(local_part, full, layout, cp_size, cp_rank) -> local_part

Copies the tokens of the whole sequence `full` (sequence last) that rank
`cp_rank` holds into `local_part`, in local order.
"""
function cp_shard!(local_part::AbstractArray, full::AbstractArray, layout::CpLayout, cp_size::Integer,
                   cp_rank::Integer)
    f, l = Borrowed(full), Borrowed(local_part)
    GC.@preserve f l _check(ccall(_sym(:dt_cp_shard), Cint, (Cint, Cint, Cint, Ref{DLTensor}, Ref{DLTensor}),
                                  Cint(layout), Cint(cp_size), Cint(cp_rank), f.tensor, l.tensor))
    return local_part
end

"""
    cp_unshard!(full, local_part, layout, cp_size, cp_rank) -> full

Writes rank `cp_rank`'s tokens `local_part` to their places in `full`; the
other tokens are untouched.
"""
function cp_unshard!(full::AbstractArray, local_part::AbstractArray, layout::CpLayout, cp_size::Integer,
                     cp_rank::Integer)
    l, f = Borrowed(local_part), Borrowed(full)
    GC.@preserve l f _check(ccall(_sym(:dt_cp_unshard), Cint, (Cint, Cint, Cint, Ref{DLTensor}, Ref{DLTensor}),
                                  Cint(layout), Cint(cp_size), Cint(cp_rank), l.tensor, f.tensor))
    return full
end

_lse_like(q::AbstractArray{Float32,3}) = Array{Float32}(undef, size(q, 2), size(q, 3))
_maybe_borrowed(array) = array === nothing ? nothing : Borrowed(array)
_tensor_pointer(b) = b === nothing ? Ptr{DLTensor}(C_NULL) : Base.unsafe_convert(Ptr{DLTensor}, b.tensor)

"""
    attention(q, k, v; q_positions=nothing, k_positions=nothing, causal=false, scale=0.0) -> (o, lse)

Attention of `q` against one block `k`, `v`. With `causal`, key j is visible
to query i when `k_positions[j] <= q_positions[i]` (global positions, required
then). `scale` 0 means 1/sqrt(head_dim). A query that sees no key gets o = 0
and lse = -Inf.
"""
function attention(q::AbstractArray{Float32,3}, k::AbstractArray{Float32,3}, v::AbstractArray{Float32,3};
                   q_positions=nothing, k_positions=nothing, causal::Bool=false, scale::Real=0.0)
    o, lse = similar(q), _lse_like(q)
    bq, bk, bv, bo, bl = Borrowed(q), Borrowed(k), Borrowed(v), Borrowed(o), Borrowed(lse)
    qp, kp = _maybe_borrowed(q_positions), _maybe_borrowed(k_positions)
    GC.@preserve bq bk bv bo bl qp kp begin
        _check(ccall(_sym(:dt_cp_attention), Cint,
                     (Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cint, Cdouble,
                      Ref{DLTensor}, Ref{DLTensor}),
                     bq.tensor, bk.tensor, bv.tensor, _tensor_pointer(qp), _tensor_pointer(kp), Cint(causal),
                     Cdouble(scale), bo.tensor, bl.tensor))
    end
    return o, lse
end

"""
    attention_merge!(o, lse, o_other, lse_other) -> (o, lse)

Merges the partial result `(o_other, lse_other)` of the same queries against
other keys into `(o, lse)` by log-sum-exp.
"""
function attention_merge!(o::AbstractArray{Float32,3}, lse::AbstractArray{Float32,2},
                          o_other::AbstractArray{Float32,3}, lse_other::AbstractArray{Float32,2})
    bo, bl, bo2, bl2 = Borrowed(o), Borrowed(lse), Borrowed(o_other), Borrowed(lse_other)
    GC.@preserve bo bl bo2 bl2 begin
        _check(ccall(_sym(:dt_cp_attention_merge), Cint,
                     (Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
                     bo.tensor, bl.tensor, bo2.tensor, bl2.tensor))
    end
    return o, lse
end

# The tensors of a forward call over a sharded sequence, borrowed for `call`
# (which makes the ccall), and its results.
function _sharded_forward(call, q::AbstractArray{Float32,3}, k::AbstractArray{Float32,3},
                          v::AbstractArray{Float32,3})
    o, lse = similar(q), _lse_like(q)
    borrowed = [Borrowed(x) for x in (q, k, v, o, lse)]
    GC.@preserve borrowed _check(call([b.tensor for b in borrowed]...))
    return o, lse
end

# The same for a backward call: (q, k, v, o, lse, d_o) in, (dq, dk, dv) out.
function _sharded_backward(call, q::AbstractArray{Float32,3}, k::AbstractArray{Float32,3},
                           v::AbstractArray{Float32,3}, o::AbstractArray{Float32,3}, lse::AbstractArray{Float32,2},
                           d_o::AbstractArray{Float32,3})
    dq, dk, dv = similar(q), similar(k), similar(v)
    borrowed = [Borrowed(x) for x in (q, k, v, o, lse, d_o, dq, dk, dv)]
    GC.@preserve borrowed _check(call([b.tensor for b in borrowed]...))
    return dq, dk, dv
end

"""
    ring_attention_forward(comm, q, k, v; causal=false, scale=0.0, layout=DT_CP_ZIGZAG) -> (o, lse)

Ring attention over `comm` (collective, blocking): this rank's shard of the
sequence in `layout` against the whole sequence. Ranks that disagree about
the layout, masking, scale or shapes all get `DT_ERR_MISMATCH`.
"""
function ring_attention_forward(comm::Comm, q, k, v; causal::Bool=false, scale::Real=0.0,
                                layout::CpLayout=DT_CP_ZIGZAG)
    return _sharded_forward(q, k, v) do tq, tk, tv, to, tl
        ccall(_sym(:dt_cp_ring_attention_forward), Cint,
              (Ptr{Cvoid}, Cint, Cint, Cdouble, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor},
               Ref{DLTensor}),
              comm, Cint(layout), Cint(causal), Cdouble(scale), tq, tk, tv, to, tl)
    end
end

"""
    ulysses_attention_forward(comm, q, k, v; causal=false, scale=0.0, layout=DT_CP_ZIGZAG) -> (o, lse)

All-to-all (Ulysses) attention: what [`ring_attention_forward`](@ref)
computes, through two all-to-alls; both head counts must be divisible by the
size of `comm`.
"""
function ulysses_attention_forward(comm::Comm, q, k, v; causal::Bool=false, scale::Real=0.0,
                                   layout::CpLayout=DT_CP_ZIGZAG)
    return _sharded_forward(q, k, v) do tq, tk, tv, to, tl
        ccall(_sym(:dt_cp_ulysses_attention_forward), Cint,
              (Ptr{Cvoid}, Cint, Cint, Cdouble, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor},
               Ref{DLTensor}),
              comm, Cint(layout), Cint(causal), Cdouble(scale), tq, tk, tv, to, tl)
    end
end

"""
    ring_attention_backward(comm, q, k, v, o, lse, d_o; causal=false, scale=0.0, layout=DT_CP_ZIGZAG)
        -> (dq, dk, dv)

The gradients of this rank's queries, keys and values from `d_o` and what
[`ring_attention_forward`](@ref) took and returned (collective over `comm`).
"""
function ring_attention_backward(comm::Comm, q, k, v, o, lse, d_o; causal::Bool=false, scale::Real=0.0,
                                 layout::CpLayout=DT_CP_ZIGZAG)
    return _sharded_backward(q, k, v, o, lse, d_o) do tq, tk, tv, to, tl, tdo, tdq, tdk, tdv
        ccall(_sym(:dt_cp_ring_attention_backward), Cint,
              (Ptr{Cvoid}, Cint, Cint, Cdouble, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor},
               Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
              comm, Cint(layout), Cint(causal), Cdouble(scale), tq, tk, tv, to, tl, tdo, tdq, tdk, tdv)
    end
end

"""
    ulysses_attention_backward(comm, q, k, v, o, lse, d_o; causal=false, scale=0.0, layout=DT_CP_ZIGZAG)
        -> (dq, dk, dv)

The gradients of [`ulysses_attention_forward`](@ref), as
[`ring_attention_backward`](@ref) gives them.
"""
function ulysses_attention_backward(comm::Comm, q, k, v, o, lse, d_o; causal::Bool=false, scale::Real=0.0,
                                    layout::CpLayout=DT_CP_ZIGZAG)
    return _sharded_backward(q, k, v, o, lse, d_o) do tq, tk, tv, to, tl, tdo, tdq, tdk, tdv
        ccall(_sym(:dt_cp_ulysses_attention_backward), Cint,
              (Ptr{Cvoid}, Cint, Cint, Cdouble, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor},
               Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}, Ref{DLTensor}),
              comm, Cint(layout), Cint(causal), Cdouble(scale), tq, tk, tv, to, tl, tdo, tdq, tdk, tdv)
    end
end
