# Communicator options (dt_comm_options in dtrain/comm.h).

"""
    Backend

The transport a communicator uses (`dt_backend`). `DT_BACKEND_AUTO` picks NCCL
for CUDA devices and UCX otherwise.
"""
@enum Backend::Cint begin
    DT_BACKEND_AUTO = 0
    DT_BACKEND_UCX = 1
    DT_BACKEND_NCCL = 2
end

"An integer option left unset: the default, or what the environment says."
const DT_UNDEF = typemin(Cint)

# The version of dt_comm_options that `CommOptions` mirrors. The library
# accepts every older version, so this binding keeps working with newer ones.
const DT_COMM_OPTIONS_VERSION = Cuint(1)

"""
    DTrain.CommOptions

`dt_comm_options`, field for field (version 1, including the out-of-band
allgather callback and its `user` pointer). `CommOptions()` gives the library's
defaults, written by `dt_comm_options_init`; [`Comm`](@ref) fills one from its
keyword arguments.
"""
struct CommOptions
    version::Cuint
    rank::Cint
    world_size::Cint
    store::Ptr{UInt8}
    auth_token::Ptr{UInt8}
    backend::Cint
    device::Cint
    timeout_ms::Cint
    oob_allgather::Ptr{Cvoid}
    oob_user::Ptr{Cvoid}
end

function CommOptions()
    options = Ref{CommOptions}()
    _check(ccall(_sym(:dt_comm_options_init), Cint, (Ref{CommOptions}, Cuint),
                 options, DT_COMM_OPTIONS_VERSION))
    return options[]
end

_int_option(value::Nothing, default::Cint) = default
_int_option(value::Integer, default::Cint) = Cint(value)

# Strings go to C as NUL-terminated pointers; one with a NUL inside would be
# silently cut short there.
_string_option(value::Nothing, name) = nothing
function _string_option(value::AbstractString, name)
    text = String(value)
    '\0' in text && throw(ArgumentError("DTrain: $name contains a NUL character"))
    return text
end
