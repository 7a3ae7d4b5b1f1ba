# Communicators (dt_comm in dtrain/comm.h).

"""
    Comm(; rank, world_size, store, auth_token, backend, device, timeout_ms, oob_allgather)
    Comm(f; kwargs...)

Creates a communicator. Every keyword left out (or `nothing`) is taken from the
environment, as `dt_comm_create` does: `DTRAIN_RANK`, `DTRAIN_WORLD_SIZE`,
`DTRAIN_STORE` and the variables of torchrun, OpenMPI, PMI and Slurm. A world of
one needs none of them.

- `store`: `"host:port"` of the rendezvous store; `auth_token`: the job's secret.
- `backend`: a [`Backend`](@ref); `device`: a CUDA ordinal; `timeout_ms`: the
  deadline of every operation.
- `oob_allgather(send, recv)`: rendezvous through the caller's own allgather
  (MPI, say) instead of the store: every rank contributes `send`, and
  `recv` (`world_size` times as long) receives all contributions in rank order.
  Needs `world_size`.

Free it with `close(comm)`, or use the do-block form, which closes it when `f`
returns. Otherwise its finalizer frees it, locally: a finalizer never talks to
other ranks.
"""
mutable struct Comm
    handle::Ptr{Cvoid}
    closed::Threads.Atomic{Bool}
    # 1 while open, plus one per live communicator split from this one: libdtrain
    # wants children destroyed before their parent, and finalizers run in no
    # particular order, so the handle is destroyed when this count reaches zero.
    refs::Threads.Atomic{Int}
    parent::Union{Comm,Nothing}
    oob::Union{OOBAllgather,Nothing}
    # The arrays of non-blocking operations whose requests were dropped before
    # they completed: libdtrain may use them until the handle is destroyed.
    pending::IdDict{Any,Nothing}
    lock::ReentrantLock

    function Comm(handle::Ptr{Cvoid}, parent::Union{Comm,Nothing}, oob::Union{OOBAllgather,Nothing})
        comm = new(handle, Threads.Atomic{Bool}(false), Threads.Atomic{Int}(1), parent, oob,
                   IdDict{Any,Nothing}(), ReentrantLock())
        parent === nothing || Threads.atomic_add!(parent.refs, 1)
        finalizer(_finalize, comm)
        return comm
    end
end

function Comm(; rank::Union{Integer,Nothing}=nothing, world_size::Union{Integer,Nothing}=nothing,
              store::Union{AbstractString,Nothing}=nothing,
              auth_token::Union{AbstractString,Nothing}=nothing,
              backend::Backend=DT_BACKEND_AUTO, device::Union{Integer,Nothing}=nothing,
              timeout_ms::Union{Integer,Nothing}=nothing, oob_allgather=nothing)
    store_text = _string_option(store, "store")
    token_text = _string_option(auth_token, "auth_token")
    oob = nothing
    if oob_allgather !== nothing
        world_size === nothing && throw(ArgumentError("DTrain: oob_allgather needs world_size"))
        oob = OOBAllgather(oob_allgather, Int(world_size), nothing)
    end
    defaults = CommOptions()
    out = Ref{Ptr{Cvoid}}(C_NULL)
    code = GC.@preserve store_text token_text oob begin
        options = CommOptions(
            defaults.version,
            _int_option(rank, defaults.rank),
            _int_option(world_size, defaults.world_size),
            store_text === nothing ? defaults.store : pointer(store_text),
            token_text === nothing ? defaults.auth_token : pointer(token_text),
            Cint(backend),
            _int_option(device, defaults.device),
            _int_option(timeout_ms, defaults.timeout_ms),
            oob === nothing ? defaults.oob_allgather : _oob_trampoline_pointer(),
            oob === nothing ? defaults.oob_user : pointer_from_objref(oob))
        ccall(_sym(:dt_comm_create), Cint, (Ref{Ptr{Cvoid}}, Ref{CommOptions}), out, options)
    end
    if code != Cint(DT_OK)
        err = _error(code)
        if oob !== nothing && oob.error !== nothing
            err = DTrainError(err.status, err.message * "; oob_allgather threw " * sprint(showerror, oob.error))
        end
        throw(err)
    end
    return Comm(out[], nothing, oob)
end

function Comm(f::Function; kwargs...)
    comm = Comm(; kwargs...)
    try
        return f(comm)
    finally
        close(comm)
    end
end

# ccall passes a Comm as its handle, and keeps the Comm (so its finalizer) at
# bay for the length of the call.
Base.cconvert(::Type{Ptr{Cvoid}}, comm::Comm) = comm
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, comm::Comm)
    comm.closed[] && throw(DTrainError(DT_ERR_INVALID_USAGE, "the communicator is closed"))
    return comm.handle
end

"""
    close(comm::Comm)

Frees the communicator; pending operations are aborted. Closing again does
nothing. A communicator split from this one stays usable until it is closed
itself; the library's resources are freed once both are.
"""
function Base.close(comm::Comm)
    Threads.atomic_xchg!(comm.closed, true) && return nothing
    code = _unref(comm)
    lock(comm.lock) do
        comm.handle == C_NULL && empty!(comm.pending)
    end
    _check(code)
    return nothing
end

# Finalizers must not take locks or throw: the handle goes, the rest goes with
# the object.
function _finalize(comm::Comm)
    Threads.atomic_xchg!(comm.closed, true) || _unref(comm)
    return nothing
end

# Drops one reference; the last one destroys the handle, then lets go of the
# parent. Returns dt_comm_destroy's status (DT_OK when nothing was destroyed).
function _unref(comm::Comm)
    Threads.atomic_sub!(comm.refs, 1) == 1 || return Cint(DT_OK)
    handle = comm.handle
    comm.handle = C_NULL
    code = ccall(_sym(:dt_comm_destroy), Cint, (Ptr{Cvoid},), handle)
    comm.parent === nothing || _unref(comm.parent)
    return code
end

"""
    comm_rank(comm) -> Int

This process's rank in `comm`, from 0.
"""
function comm_rank(comm::Comm)
    out = Ref{Cint}(0)
    _check(ccall(_sym(:dt_comm_rank), Cint, (Ptr{Cvoid}, Ref{Cint}), comm, out))
    return Int(out[])
end

"""
    comm_size(comm) -> Int

The number of ranks in `comm`.
"""
function comm_size(comm::Comm)
    out = Ref{Cint}(0)
    _check(ccall(_sym(:dt_comm_size), Cint, (Ptr{Cvoid}, Ref{Cint}), comm, out))
    return Int(out[])
end

"""
    split(comm::Comm, color, key=0) -> Union{Comm,Nothing}
    split(f, comm::Comm, color, key=0)

Splits `comm` like `MPI_Comm_split`: ranks with the same `color` (an integer
≥ 0) form a new communicator, ordered by `key` and then by rank in `comm`.
Collective over `comm`. `color === nothing` leaves this rank out and returns
`nothing`. The do-block form closes the new communicator when `f` returns.
"""
function Base.split(comm::Comm, color::Union{Integer,Nothing}, key::Integer=0)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    c_color = color === nothing ? DT_UNDEF : Cint(color)
    _check(ccall(_sym(:dt_comm_split), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Cint),
                 out, comm, c_color, Cint(key)))
    out[] == C_NULL && return nothing
    return Comm(out[], comm, nothing)
end

function Base.split(f::Function, comm::Comm, color::Union{Integer,Nothing}, key::Integer=0)
    child = split(comm, color, key)
    try
        return f(child)
    finally
        child === nothing || close(child)
    end
end

"""
    bind_thread(comm, bind=true)

Binds `comm` to the calling thread: only that thread may run its collectives,
point-to-point calls and splits; another gets `DT_ERR_INVALID_USAGE` and
nothing changes. A communicator is bound to the thread that created it, so a
task that migrates between threads (`Threads.@spawn`) calls this first, or
`bind = false` lets any thread call, one at a time, in the same order on
every rank.
"""
bind_thread(comm::Comm, bind::Bool=true) =
    _check(ccall(_sym(:dt_comm_bind_thread), Cint, (Ptr{Cvoid}, Cint), comm, bind ? 1 : 0))

"""
    abort(comm)

Aborts every pending and future operation on `comm`: waiters get
`DT_ERR_ABORTED`. Safe from any task or thread; never blocks.
"""
abort(comm::Comm) = _check(ccall(_sym(:dt_comm_abort), Cint, (Ptr{Cvoid},), comm))

"""
    barrier(comm)

Returns when every rank has entered the barrier.
"""
barrier(comm::Comm) = _check(ccall(_sym(:dt_barrier), Cint, (Ptr{Cvoid},), comm))
