# An out-of-band allgather written in Julia (over MPI.jl, say), which libdtrain
# calls during rendezvous instead of using its store. C calls a trampoline whose
# `user` pointer is one of these objects; the communicator keeps it referenced
# for as long as the library might call it.
mutable struct OOBAllgather
    allgather::Any     # allgather(send::Vector{UInt8}, recv::Vector{UInt8})
    world_size::Int
    error::Any         # what `allgather` threw, reported when dt_comm_create fails
end

# Exceptions must not unwind through C: one is kept for the caller, and the
# library gets an error status, which fails the rendezvous.
function _oob_trampoline(user::Ptr{Cvoid}, send::Ptr{Cvoid}, recv::Ptr{Cvoid}, bytes::Csize_t)::Cint
    context = unsafe_pointer_to_objref(user)::OOBAllgather
    try
        n = Int(bytes)
        sendbuf = unsafe_wrap(Array, Ptr{UInt8}(send), n)
        recvbuf = unsafe_wrap(Array, Ptr{UInt8}(recv), n * context.world_size)
        context.allgather(sendbuf, recvbuf)
        return Cint(DT_OK)
    catch err
        context.error = err
        return Cint(DT_ERR_TRANSPORT)
    end
end

_oob_trampoline_pointer() =
    @cfunction(_oob_trampoline, Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Csize_t))
