# Non-blocking operations (dt_request in dtrain/comm.h).

"""
    Request

A non-blocking operation, returned by `iallreduce!`, `isend` and the other
`i` functions. Finish it with `wait(req)` or poll it with `test(req)`; the
arrays it works on stay referenced until it completes. `close(req)` (or the
finalizer) frees the request; an operation still running goes on, and its
arrays stay referenced by the communicator until it is closed.
"""
mutable struct Request
    handle::Ptr{Cvoid}
    comm::Comm
    roots::Vector{Any}
    done::Bool

    function Request(handle::Ptr{Cvoid}, comm::Comm, roots::Vector{Any})
        request = new(handle, comm, roots, false)
        lock(comm.lock) do
            comm.pending[roots] = nothing
        end
        finalizer(_free, request)
        return request
    end
end

Base.cconvert(::Type{Ptr{Cvoid}}, request::Request) = request
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, request::Request)
    request.handle == C_NULL && throw(DTrainError(DT_ERR_INVALID_USAGE, "the request is closed"))
    return request.handle
end

"""
    wait(req::Request; timeout_ms=-1)

Waits for the operation for at most `timeout_ms` milliseconds (negative: the
communicator's deadline) and throws a [`DTrainError`](@ref) if it failed or did
not finish in time. Waiting again on a finished request gives the same result.
"""
function Base.wait(request::Request; timeout_ms::Integer=-1)
    code = ccall(_sym(:dt_request_wait), Cint, (Ptr{Cvoid}, Cint), request, Cint(timeout_ms))
    try
        _check(code)
    finally
        # After a timeout the operation may still hold its arrays.
        code == Cint(DT_ERR_TIMEOUT) || _settle!(request)
    end
    return nothing
end

"""
    test(req::Request) -> Bool

`true` when the operation has finished, `false` while it runs; throws a
[`DTrainError`](@ref) if it failed.
"""
function test(request::Request)
    code = ccall(_sym(:dt_request_test), Cint, (Ptr{Cvoid},), request)
    code == Cint(DT_INPROGRESS) && return false
    try
        _check(code)
    finally
        _settle!(request)
    end
    return true
end

"""
    close(req::Request)

Frees the request. Closing again does nothing.
"""
Base.close(request::Request) = _free(request)

# The operation is over: its arrays need no longer be kept for the library.
function _settle!(request::Request)
    request.done && return nothing
    request.done = true
    lock(request.comm.lock) do
        delete!(request.comm.pending, request.roots)
    end
    return nothing
end

# Frees locally only, so it is also the finalizer.
function _free(request::Request)
    handle = request.handle
    request.handle = C_NULL
    handle == C_NULL || ccall(_sym(:dt_request_free), Cvoid, (Ptr{Cvoid},), handle)
    return nothing
end
