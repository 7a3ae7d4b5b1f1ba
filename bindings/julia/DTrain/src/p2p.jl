# Point-to-point messages (dt_send and dt_recv in dtrain/comm.h). Messages
# are matched by peer and tag (≥ 0); between two ranks, those with one tag
# arrive in the order they were sent. A rank may send to itself.

function _send(comm::Comm, buf, peer::Integer, tag::Integer, nonblocking::Bool)
    b = Borrowed(buf)
    return _launch(comm, Any[b], nonblocking) do req
        ccall(_sym(:dt_send), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Cint, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, b.tensor, Cint(peer), Cint(tag), _stream(b), req)
    end
end

function _recv(comm::Comm, buf, peer::Integer, tag::Integer, nonblocking::Bool)
    b = Borrowed(buf)
    return _launch(comm, Any[b], nonblocking) do req
        ccall(_sym(:dt_recv), Cint,
              (Ptr{Cvoid}, Ref{DLTensor}, Cint, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, b.tensor, Cint(peer), Cint(tag), _stream(b), req)
    end
end

"""
    send(comm, buf, peer; tag=0)

Sends `buf` to rank `peer`.
"""
function send(comm::Comm, buf::AbstractArray, peer::Integer; tag::Integer=0)
    _send(comm, buf, peer, tag, false)
    return nothing
end

"Non-blocking [`send`](@ref); returns a [`Request`](@ref)."
isend(comm::Comm, buf::AbstractArray, peer::Integer; tag::Integer=0) = _send(comm, buf, peer, tag, true)

"""
    recv!(comm, buf, peer; tag=0) -> buf

Receives into `buf` the next message from rank `peer` with `tag`. A message of
another length throws `DT_ERR_MISMATCH`.
"""
function recv!(comm::Comm, buf::AbstractArray, peer::Integer; tag::Integer=0)
    _recv(comm, buf, peer, tag, false)
    return buf
end

"Non-blocking [`recv!`](@ref); returns a [`Request`](@ref)."
irecv!(comm::Comm, buf::AbstractArray, peer::Integer; tag::Integer=0) = _recv(comm, buf, peer, tag, true)

# Grouped point-to-point (dt_p2p_group): several sends and receives posted
# together and completed as one, so exchanges that deadlock one call at a
# time (every rank sending to both ring neighbours before receiving) complete.

"""
    P2POp(kind, buf, peer; tag=0)

One op of [`p2p_group`](@ref): `kind` is `:send` or `:recv`.
"""
struct P2POp
    kind::Symbol
    buf::AbstractArray
    peer::Int
    tag::Int
end
P2POp(kind::Symbol, buf::AbstractArray, peer::Integer; tag::Integer=0) = P2POp(kind, buf, Int(peer), Int(tag))

"What a dt_p2p_op does (`dt_p2p_kind`)."
@enum P2PKind::Cint begin
    DT_P2P_SEND = 0
    DT_P2P_RECV = 1
end

# dt_p2p_op, field for field.
struct P2POpC
    kind::Cint
    tensor::Ptr{DLTensor}
    peer::Cint
    tag::Cint
end

const _P2P_KINDS = Dict(:send => Cint(DT_P2P_SEND), :recv => Cint(DT_P2P_RECV))

function _p2p_group(comm::Comm, ops::AbstractVector{P2POp}, nonblocking::Bool)
    borrowed = Borrowed[Borrowed(op.buf) for op in ops]
    kinds = map(ops) do op
        haskey(_P2P_KINDS, op.kind) || throw(ArgumentError("DTrain: P2POp kind $(op.kind) is neither :send nor :recv"))
        _P2P_KINDS[op.kind]
    end
    return _launch(comm, Any[borrowed], nonblocking) do req
        raw = [P2POpC(kinds[i], Base.unsafe_convert(Ptr{DLTensor}, borrowed[i].tensor), Cint(ops[i].peer),
                       Cint(ops[i].tag)) for i in eachindex(ops)]
        ccall(_sym(:dt_p2p_group), Cint,
              (Ptr{Cvoid}, Ptr{P2POpC}, Cint, Ptr{Cvoid}, Ptr{Ptr{Cvoid}}),
              comm, raw, Cint(length(raw)), _stream(borrowed...), req)
    end
end

"""
    p2p_group(comm, ops::AbstractVector{P2POp})

Posts every send and receive of `ops` before waiting for any, and returns once
all are done. One bad op refuses the whole group (`DT_ERR_INVALID_ARGUMENT`)
and starts nothing.
"""
function p2p_group(comm::Comm, ops::AbstractVector{P2POp})
    _p2p_group(comm, ops, false)
    return nothing
end

"Non-blocking [`p2p_group`](@ref): one [`Request`](@ref) for the group."
ip2p_group(comm::Comm, ops::AbstractVector{P2POp}) = _p2p_group(comm, ops, true)
