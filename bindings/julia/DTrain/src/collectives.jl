# Collectives (dtrain/comm.h). Each comes blocking (`allreduce!`) and
# non-blocking (`iallreduce!`, returning a Request). `send === recv` (or the
# one-array forms) is in place. Sizes follow MPI and count elements in memory
# order: for a column-major Julia array, block r of a reduce-scatter or
# all-to-all is the r-th contiguous run of `length ÷ size` elements.

"""
    ReduceOp

A reduction (`dt_reduce_op`). The functions `+`, `*`, `max` and `min` are
accepted wherever a ReduceOp is, for `DT_SUM`, `DT_PROD`, `DT_MAX` and `DT_MIN`.
`DT_AVG` takes floating-point arrays only.
"""
@enum ReduceOp::Cint begin
    DT_SUM = 0
    DT_AVG = 1
    DT_MAX = 2
    DT_MIN = 3
    DT_PROD = 4
end

const _Op = Union{ReduceOp,Function}

_reduce_op(op::ReduceOp) = op
_reduce_op(::typeof(+)) = DT_SUM
_reduce_op(::typeof(*)) = DT_PROD
_reduce_op(::typeof(max)) = DT_MAX
_reduce_op(::typeof(min)) = DT_MIN
_reduce_op(op) = throw(ArgumentError(
    "DTrain: $op is not a reduction libdtrain has (DT_SUM, DT_AVG, DT_MAX, DT_MIN, DT_PROD, +, *, max, min)"))

# Runs `start(req)`, the ccall of an operation whose last argument is
# `dt_request **req`: NULL to block, or where a non-blocking call puts its
# request. `roots` (the Borrowed arrays and anything else the call points into)
# stay referenced during the call and then, for a non-blocking call, by the Request.
function _launch(start, comm::Comm, roots::Vector{Any}, nonblocking::Bool)
    if nonblocking
        out = Ref{Ptr{Cvoid}}(C_NULL)
        GC.@preserve roots _check(start(out))
        return Request(out[], comm, roots)
    end
    GC.@preserve roots _check(start(Ptr{Ptr{Cvoid}}(C_NULL)))
    return nothing
end

function _allreduce(comm::Comm, send, recv, op, nonblocking::Bool)
    s, r, c_op = Borrowed(send), Borrowed(recv), Cint(_reduce_op(op))
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_allreduce), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, r.tensor, c_op, _stream(s, r), req)
    end
end

function _reduce_scatter(comm::Comm, send, recv, op, nonblocking::Bool)
    s, r, c_op = Borrowed(send), Borrowed(recv), Cint(_reduce_op(op))
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_reduce_scatter), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, r.tensor, c_op, _stream(s, r), req)
    end
end

function _allgather(comm::Comm, send, recv, nonblocking::Bool)
    s, r = Borrowed(send), Borrowed(recv)
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_allgather), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, r.tensor, _stream(s, r), req)
    end
end

function _broadcast(comm::Comm, buf, root::Integer, nonblocking::Bool)
    b = Borrowed(buf)
    return _launch(comm, Any[b], nonblocking) do req
        ccall(_sym(:dt_broadcast), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, b.tensor, Cint(root), _stream(b), req)
    end
end

function _alltoall(comm::Comm, send, recv, nonblocking::Bool)
    s, r = Borrowed(send), Borrowed(recv)
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_alltoall), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, r.tensor, _stream(s, r), req)
    end
end

# The library reads one count per rank; a shorter vector would be read past its end.
function _counts(comm::Comm, counts::AbstractVector{<:Integer}, name)
    n = comm_size(comm)
    length(counts) == n || throw(ArgumentError("DTrain: $name has $(length(counts)) entries for $n ranks"))
    return Vector{Int64}(counts)
end

function _alltoallv(comm::Comm, send, send_counts, recv, recv_counts, nonblocking::Bool)
    s, r = Borrowed(send), Borrowed(recv)
    sc, rc = _counts(comm, send_counts, "send_counts"), _counts(comm, recv_counts, "recv_counts")
    return _launch(comm, Any[s, r, sc, rc], nonblocking) do req
        ccall(_sym(:dt_alltoallv), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ptr{Int64}, Ref{DLTensor}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, sc, r.tensor, rc, _stream(s, r), req)
    end
end

"""
    allreduce!(comm, send, recv, op=DT_SUM) -> recv
    allreduce!(comm, buf, op=DT_SUM) -> buf

`recv[i]` becomes `op` over all ranks of `send[i]`; both arrays have the same
length and element type.
"""
function allreduce!(comm::Comm, send::AbstractArray, recv::AbstractArray, op::_Op=DT_SUM)
    _allreduce(comm, send, recv, op, false)
    return recv
end
allreduce!(comm::Comm, buf::AbstractArray, op::_Op=DT_SUM) = allreduce!(comm, buf, buf, op)

"""
    iallreduce!(comm, send, recv, op=DT_SUM) -> Request
    iallreduce!(comm, buf, op=DT_SUM) -> Request

Non-blocking [`allreduce!`](@ref).
"""
iallreduce!(comm::Comm, send::AbstractArray, recv::AbstractArray, op::_Op=DT_SUM) =
    _allreduce(comm, send, recv, op, true)
iallreduce!(comm::Comm, buf::AbstractArray, op::_Op=DT_SUM) = iallreduce!(comm, buf, buf, op)

"""
    reduce_scatter!(comm, send, recv, op=DT_SUM) -> recv

`send` holds `comm_size(comm) * length(recv)` elements; rank r receives block r
reduced over all ranks.
"""
function reduce_scatter!(comm::Comm, send::AbstractArray, recv::AbstractArray, op::_Op=DT_SUM)
    _reduce_scatter(comm, send, recv, op, false)
    return recv
end

"Non-blocking [`reduce_scatter!`](@ref); returns a [`Request`](@ref)."
ireduce_scatter!(comm::Comm, send::AbstractArray, recv::AbstractArray, op::_Op=DT_SUM) =
    _reduce_scatter(comm, send, recv, op, true)

"""
    allgather!(comm, send, recv) -> recv

`recv` holds `comm_size(comm) * length(send)` elements and receives every
rank's `send`, in rank order.
"""
function allgather!(comm::Comm, send::AbstractArray, recv::AbstractArray)
    _allgather(comm, send, recv, false)
    return recv
end

"Non-blocking [`allgather!`](@ref); returns a [`Request`](@ref)."
iallgather!(comm::Comm, send::AbstractArray, recv::AbstractArray) = _allgather(comm, send, recv, true)

"""
    broadcast!(comm::Comm, buf, root) -> buf

Copies `buf` on rank `root` into `buf` on every rank.
"""
function Base.broadcast!(comm::Comm, buf::AbstractArray, root::Integer)
    _broadcast(comm, buf, root, false)
    return buf
end

"Non-blocking `broadcast!(comm, buf, root)`; returns a [`Request`](@ref)."
ibroadcast!(comm::Comm, buf::AbstractArray, root::Integer) = _broadcast(comm, buf, root, true)

"""
    alltoall!(comm, send, recv) -> recv

`send` and `recv` hold `comm_size(comm)` equal blocks; block j of `send` goes to
rank j, block j of `recv` comes from rank j.
"""
function alltoall!(comm::Comm, send::AbstractArray, recv::AbstractArray)
    _alltoall(comm, send, recv, false)
    return recv
end

"Non-blocking [`alltoall!`](@ref); returns a [`Request`](@ref)."
ialltoall!(comm::Comm, send::AbstractArray, recv::AbstractArray) = _alltoall(comm, send, recv, true)

"""
    alltoallv!(comm, send, send_counts, recv, recv_counts) -> recv

[`alltoall!`](@ref) with per-rank element counts, one per rank: `send_counts[j]`
elements go to rank j and `recv_counts[j]` come from it, packed in rank order.
A count that disagrees with the peer's throws `DT_ERR_MISMATCH`.
"""
function alltoallv!(comm::Comm, send::AbstractArray, send_counts::AbstractVector{<:Integer},
                    recv::AbstractArray, recv_counts::AbstractVector{<:Integer})
    _alltoallv(comm, send, send_counts, recv, recv_counts, false)
    return recv
end

"Non-blocking [`alltoallv!`](@ref); returns a [`Request`](@ref)."
ialltoallv!(comm::Comm, send::AbstractArray, send_counts::AbstractVector{<:Integer},
            recv::AbstractArray, recv_counts::AbstractVector{<:Integer}) =
    _alltoallv(comm, send, send_counts, recv, recv_counts, true)

# A rank's tensor for a C argument it may leave NULL (a rooted operation's
# buffer off the root). The Borrowed stays referenced by the launch's roots.
_optional(b::Borrowed) = Base.unsafe_convert(Ptr{DLTensor}, b.tensor)
_optional(::Nothing) = Ptr{DLTensor}(C_NULL)
_borrowed_or_nothing(array) = array === nothing ? nothing : Borrowed(array)

function _reduce(comm::Comm, send, recv, op, root::Integer, nonblocking::Bool)
    s, r, c_op = Borrowed(send), _borrowed_or_nothing(recv), Cint(_reduce_op(op))
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_reduce), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ptr{DLTensor}, Cint, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, _optional(r), c_op, Cint(root), _stream(s), req)
    end
end

function _gather(comm::Comm, send, recv, root::Integer, nonblocking::Bool)
    s, r = Borrowed(send), _borrowed_or_nothing(recv)
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_gather), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ptr{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, _optional(r), Cint(root), _stream(s), req)
    end
end

function _scatter(comm::Comm, send, recv, root::Integer, nonblocking::Bool)
    s, r = _borrowed_or_nothing(send), Borrowed(recv)
    return _launch(comm, Any[s, r], nonblocking) do req
        ccall(_sym(:dt_scatter), Cint,
              (Ptr{Cvoid}, Ptr{DLTensor}, Ref{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, _optional(s), r.tensor, Cint(root), _stream(r), req)
    end
end

function _allgatherv(comm::Comm, send, recv, recv_counts, nonblocking::Bool)
    s, r = Borrowed(send), Borrowed(recv)
    rc = _counts(comm, recv_counts, "recv_counts")
    return _launch(comm, Any[s, r, rc], nonblocking) do req
        ccall(_sym(:dt_allgatherv), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ref{DLTensor}, Ptr{Int64}, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, r.tensor, rc, _stream(s, r), req)
    end
end

function _reduce_scatterv(comm::Comm, send, recv_counts, recv, op, nonblocking::Bool)
    s, r, c_op = Borrowed(send), Borrowed(recv), Cint(_reduce_op(op))
    rc = _counts(comm, recv_counts, "recv_counts")
    return _launch(comm, Any[s, r, rc], nonblocking) do req
        ccall(_sym(:dt_reduce_scatterv), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Ptr{Int64}, Ref{DLTensor}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, s.tensor, rc, r.tensor, c_op, _stream(s, r), req)
    end
end

"""
    reduce!(comm, send, recv, op=DT_SUM; root=0) -> recv

`recv` on `root` becomes `op` over all ranks of `send` (same length and element
type; `send === recv` is in place). Off the root `recv` is ignored: pass
`nothing`.
"""
function reduce!(comm::Comm, send::AbstractArray, recv::Union{AbstractArray,Nothing}, op::_Op=DT_SUM;
                 root::Integer=0)
    _reduce(comm, send, recv, op, root, false)
    return recv
end

"Non-blocking [`reduce!`](@ref); returns a [`Request`](@ref)."
ireduce!(comm::Comm, send::AbstractArray, recv::Union{AbstractArray,Nothing}, op::_Op=DT_SUM;
         root::Integer=0) = _reduce(comm, send, recv, op, root, true)

"""
    gather!(comm, send, recv; root=0) -> recv

Every rank's `send` (n elements) lands in block r of `recv` (`size × n`
elements) on `root`. Off the root `recv` is ignored: pass `nothing`.
"""
function gather!(comm::Comm, send::AbstractArray, recv::Union{AbstractArray,Nothing}; root::Integer=0)
    _gather(comm, send, recv, root, false)
    return recv
end

"Non-blocking [`gather!`](@ref) of a communicator; returns a [`Request`](@ref)."
igather!(comm::Comm, send::AbstractArray, recv::Union{AbstractArray,Nothing}; root::Integer=0) =
    _gather(comm, send, recv, root, true)

"""
    scatter!(comm, send, recv; root=0) -> recv

Block r of `send` (`size × n` elements) on `root` goes to `recv` (n elements)
of rank r. Off the root `send` is ignored: pass `nothing`.
"""
function scatter!(comm::Comm, send::Union{AbstractArray,Nothing}, recv::AbstractArray; root::Integer=0)
    _scatter(comm, send, recv, root, false)
    return recv
end

"Non-blocking [`scatter!`](@ref); returns a [`Request`](@ref)."
iscatter!(comm::Comm, send::Union{AbstractArray,Nothing}, recv::AbstractArray; root::Integer=0) =
    _scatter(comm, send, recv, root, true)

"""
    allgatherv!(comm, send, recv, recv_counts) -> recv

[`allgather!`](@ref) with a count per rank: rank r's `send` holds
`recv_counts[r+1]` elements and lands in `recv`, packed in rank order.
"""
function allgatherv!(comm::Comm, send::AbstractArray, recv::AbstractArray,
                     recv_counts::AbstractVector{<:Integer})
    _allgatherv(comm, send, recv, recv_counts, false)
    return recv
end

"Non-blocking [`allgatherv!`](@ref); returns a [`Request`](@ref)."
iallgatherv!(comm::Comm, send::AbstractArray, recv::AbstractArray, recv_counts::AbstractVector{<:Integer}) =
    _allgatherv(comm, send, recv, recv_counts, true)

"""
    reduce_scatterv!(comm, send, recv_counts, recv, op=DT_SUM) -> recv

[`reduce_scatter!`](@ref) with a count per rank: `send` holds blocks of
`recv_counts[r+1]` elements packed in rank order; `recv` gets this rank's
block reduced with `op` over the ranks.
"""
function reduce_scatterv!(comm::Comm, send::AbstractArray, recv_counts::AbstractVector{<:Integer},
                          recv::AbstractArray, op::_Op=DT_SUM)
    _reduce_scatterv(comm, send, recv_counts, recv, op, false)
    return recv
end

"Non-blocking [`reduce_scatterv!`](@ref); returns a [`Request`](@ref)."
ireduce_scatterv!(comm::Comm, send::AbstractArray, recv_counts::AbstractVector{<:Integer},
                  recv::AbstractArray, op::_Op=DT_SUM) =
    _reduce_scatterv(comm, send, recv_counts, recv, op, true)
