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
