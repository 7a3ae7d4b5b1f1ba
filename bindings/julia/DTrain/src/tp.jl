# Tensor parallelism (dtrain/tp.h).
#
# Julia arrays are column-major, so the row-major rows x cols tensor of the C
# API is a Julia matrix of size (cols, rows): pass activations as
# features x tokens and weights as in x out (the transposes, in the same
# memory, of what dtrain/tp.h describes). Optional tensors are `nothing`.

export TP_SEQUENCE_PARALLEL, TP_GATHER_OUTPUT, TP_ACCUMULATE
export TPRegion, DT_TP_COPY, DT_TP_REDUCE, DT_TP_SCATTER, DT_TP_GATHER, DT_TP_SEQ_GATHER, DT_TP_SEQ_REDUCE_SCATTER
export TPShardKind, DT_TP_SHARD_ROWS, DT_TP_SHARD_COLUMNS, DT_TP_SHARD_QKV
export tp_region_forward!, tp_region_backward!, tp_column_linear_forward!, tp_column_linear_backward!,
       tp_row_linear_forward!, tp_row_linear_backward!, tp_embedding_forward!, tp_embedding_backward!,
       tp_cross_entropy_forward!, tp_cross_entropy_backward!, tp_shard!, tp_unshard!

const TP_SEQUENCE_PARALLEL = Cuint(1)
const TP_GATHER_OUTPUT = Cuint(2)
const TP_ACCUMULATE = Cuint(4)

@enum TPRegion::Cint begin
    DT_TP_COPY = 0
    DT_TP_REDUCE = 1
    DT_TP_SCATTER = 2
    DT_TP_GATHER = 3
    DT_TP_SEQ_GATHER = 4
    DT_TP_SEQ_REDUCE_SCATTER = 5
end

@enum TPShardKind::Cint begin
    DT_TP_SHARD_ROWS = 0
    DT_TP_SHARD_COLUMNS = 1
    DT_TP_SHARD_QKV = 2
end

_borrow_optional(a) = a === nothing ? nothing : Borrowed(a)
_tensor_pointer(b::Borrowed) = Base.unsafe_convert(Ptr{DLTensor}, b.tensor)
_tensor_pointer(::Nothing) = Ptr{DLTensor}(C_NULL)

"""
    tp_region_forward!(comm, region, input, output) -> output

The forward half of a conjugate mapping ([`TPRegion`](@ref)).
"""
function tp_region_forward!(comm::Comm, region::TPRegion, input::AbstractArray, output::AbstractArray)
    i, o = Borrowed(input), Borrowed(output)
    GC.@preserve i o _check(ccall(_sym(:dt_tp_region_forward), Cint,
                                  (Ptr{Cvoid}, Cint, Ptr{DLTensor}, Ptr{DLTensor}),
                                  comm, Cint(region), _tensor_pointer(i), _tensor_pointer(o)))
    return output
end

"""
    tp_region_backward!(comm, region, grad_out, grad_in) -> grad_in

The backward half of a conjugate mapping.
"""
function tp_region_backward!(comm::Comm, region::TPRegion, grad_out::AbstractArray, grad_in::AbstractArray)
    g, i = Borrowed(grad_out), Borrowed(grad_in)
    GC.@preserve g i _check(ccall(_sym(:dt_tp_region_backward), Cint,
                                  (Ptr{Cvoid}, Cint, Ptr{DLTensor}, Ptr{DLTensor}),
                                  comm, Cint(region), _tensor_pointer(g), _tensor_pointer(i)))
    return grad_in
end

"""
    tp_column_linear_forward!(comm, x, weight, bias, y; flags=0) -> y

Column-parallel linear with this rank's shard of the weight (`bias` may be `nothing`).
"""
function tp_column_linear_forward!(comm::Comm, x, weight, bias, y; flags::Integer=0)
    bx, bw, bb, by = Borrowed(x), Borrowed(weight), _borrow_optional(bias), Borrowed(y)
    GC.@preserve bx bw bb by _check(ccall(_sym(:dt_tp_column_linear_forward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bx), _tensor_pointer(bw), _tensor_pointer(bb), _tensor_pointer(by), Cuint(flags)))
    return y
end

"""
    tp_column_linear_backward!(comm, x, weight, dy, dx, dweight, dbias; flags=0)

Gradients of the column-parallel linear layer; `dx`, `dweight` and `dbias` may be `nothing`.
"""
function tp_column_linear_backward!(comm::Comm, x, weight, dy, dx, dweight, dbias; flags::Integer=0)
    bx, bw, bdy = Borrowed(x), Borrowed(weight), Borrowed(dy)
    bdx, bdw, bdb = _borrow_optional(dx), _borrow_optional(dweight), _borrow_optional(dbias)
    GC.@preserve bx bw bdy bdx bdw bdb _check(ccall(_sym(:dt_tp_column_linear_backward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bx), _tensor_pointer(bw), _tensor_pointer(bdy), _tensor_pointer(bdx),
        _tensor_pointer(bdw), _tensor_pointer(bdb), Cuint(flags)))
    return nothing
end

"""
    tp_row_linear_forward!(comm, x, weight, bias, y; flags=0) -> y

Row-parallel linear: the products of every rank's shard summed, plus `bias` once.
"""
function tp_row_linear_forward!(comm::Comm, x, weight, bias, y; flags::Integer=0)
    bx, bw, bb, by = Borrowed(x), Borrowed(weight), _borrow_optional(bias), Borrowed(y)
    GC.@preserve bx bw bb by _check(ccall(_sym(:dt_tp_row_linear_forward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bx), _tensor_pointer(bw), _tensor_pointer(bb), _tensor_pointer(by), Cuint(flags)))
    return y
end

"""
    tp_row_linear_backward!(comm, x, weight, dy, dx, dweight, dbias; flags=0)

Gradients of the row-parallel linear layer; `dx`, `dweight` and `dbias` may be `nothing`.
"""
function tp_row_linear_backward!(comm::Comm, x, weight, dy, dx, dweight, dbias; flags::Integer=0)
    bx, bw, bdy = Borrowed(x), Borrowed(weight), Borrowed(dy)
    bdx, bdw, bdb = _borrow_optional(dx), _borrow_optional(dweight), _borrow_optional(dbias)
    GC.@preserve bx bw bdy bdx bdw bdb _check(ccall(_sym(:dt_tp_row_linear_backward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bx), _tensor_pointer(bw), _tensor_pointer(bdy), _tensor_pointer(bdx),
        _tensor_pointer(bdw), _tensor_pointer(bdb), Cuint(flags)))
    return nothing
end

"""
    tp_embedding_forward!(comm, table, ids, output; flags=0) -> output

Vocabulary-parallel embedding (`table`: H x V/tp in Julia's order; `ids` 0-based).
"""
function tp_embedding_forward!(comm::Comm, table, ids, output; flags::Integer=0)
    bt, bi, bo = Borrowed(table), Borrowed(ids), Borrowed(output)
    GC.@preserve bt bi bo _check(ccall(_sym(:dt_tp_embedding_forward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bt), _tensor_pointer(bi), _tensor_pointer(bo), Cuint(flags)))
    return output
end

"""
    tp_embedding_backward!(comm, ids, dout, dtable; flags=0) -> dtable
"""
function tp_embedding_backward!(comm::Comm, ids, dout, dtable; flags::Integer=0)
    bi, bd, bt = Borrowed(ids), Borrowed(dout), Borrowed(dtable)
    GC.@preserve bi bd bt _check(ccall(_sym(:dt_tp_embedding_backward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cuint),
        comm, _tensor_pointer(bi), _tensor_pointer(bd), _tensor_pointer(bt), Cuint(flags)))
    return dtable
end

"""
    tp_cross_entropy_forward!(comm, logits, targets, loss, lse; label_smoothing=0, ignore_index=-100) -> loss

Vocabulary-parallel cross-entropy (`logits`: V/tp x T in Julia's order; targets 0-based).
"""
function tp_cross_entropy_forward!(comm::Comm, logits, targets, loss, lse; label_smoothing::Real=0,
                                   ignore_index::Integer=-100)
    bz, bt, bl, bs = Borrowed(logits), Borrowed(targets), Borrowed(loss), Borrowed(lse)
    GC.@preserve bz bt bl bs _check(ccall(_sym(:dt_tp_cross_entropy_forward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cfloat, Int64),
        comm, _tensor_pointer(bz), _tensor_pointer(bt), _tensor_pointer(bl), _tensor_pointer(bs),
        Cfloat(label_smoothing), Int64(ignore_index)))
    return loss
end

"""
    tp_cross_entropy_backward!(comm, logits, targets, lse, dloss, dlogits; label_smoothing=0, ignore_index=-100) -> dlogits
"""
function tp_cross_entropy_backward!(comm::Comm, logits, targets, lse, dloss, dlogits; label_smoothing::Real=0,
                                    ignore_index::Integer=-100)
    bz, bt, bs, bl, bd = Borrowed(logits), Borrowed(targets), Borrowed(lse), Borrowed(dloss), Borrowed(dlogits)
    GC.@preserve bz bt bs bl bd _check(ccall(_sym(:dt_tp_cross_entropy_backward), Cint,
        (Ptr{Cvoid}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Ptr{DLTensor}, Cfloat, Int64),
        comm, _tensor_pointer(bz), _tensor_pointer(bt), _tensor_pointer(bs), _tensor_pointer(bl),
        _tensor_pointer(bd), Cfloat(label_smoothing), Int64(ignore_index)))
    return dlogits
end

"""
    tp_shard!(kind, full, local_, rank, size; q_heads=0, kv_heads=0) -> local_

Copies rank `rank`'s shard of `full` (no communication). In Julia's order a
C "rows" split is a split of the last Julia dimension.
"""
function tp_shard!(kind::TPShardKind, full, local_, rank::Integer, size::Integer; q_heads::Integer=0,
                   kv_heads::Integer=0)
    bf, bl = Borrowed(full), Borrowed(local_)
    GC.@preserve bf bl _check(ccall(_sym(:dt_tp_shard), Cint,
        (Cint, Ptr{DLTensor}, Ptr{DLTensor}, Cint, Cint, Cint, Cint),
        Cint(kind), _tensor_pointer(bf), _tensor_pointer(bl), Cint(rank), Cint(size), Cint(q_heads), Cint(kv_heads)))
    return local_
end

"""
    tp_unshard!(comm, kind, local_, full; q_heads=0, kv_heads=0) -> full

Gathers every rank's shard into `full` (collective).
"""
function tp_unshard!(comm::Comm, kind::TPShardKind, local_, full; q_heads::Integer=0, kv_heads::Integer=0)
    bl, bf = Borrowed(local_), Borrowed(full)
    GC.@preserve bl bf _check(ccall(_sym(:dt_tp_unshard), Cint,
        (Ptr{Cvoid}, Cint, Ptr{DLTensor}, Ptr{DLTensor}, Cint, Cint),
        comm, Cint(kind), _tensor_pointer(bl), _tensor_pointer(bf), Cint(q_heads), Cint(kv_heads)))
    return full
end
