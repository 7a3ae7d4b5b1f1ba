# Status codes and errors (dtrain/status.h).

"""
    Status

A libdtrain status code (`dt_status`). `DT_OK` is zero, errors are negative; the
values are fixed by the C ABI.
"""
@enum Status::Cint begin
    DT_OK = 0
    DT_INPROGRESS = 1
    DT_ERR_INVALID_ARGUMENT = -1
    DT_ERR_INVALID_USAGE = -2
    DT_ERR_UNSUPPORTED = -3
    DT_ERR_OUT_OF_MEMORY = -4
    DT_ERR_TIMEOUT = -5
    DT_ERR_REMOTE = -6
    DT_ERR_TRANSPORT = -7
    DT_ERR_ABORTED = -8
    DT_ERR_AUTH = -9
    DT_ERR_MISMATCH = -10
    DT_ERR_INTERNAL = -11
    DT_ERR_IO = -12
end

"""
    DTrainError(status, message)

A failed libdtrain call: `status` is its [`Status`](@ref) and `message` the
library's account of this failure (what, which argument, which rank).
"""
struct DTrainError <: Exception
    status::Status
    message::String
end

Base.showerror(io::IO, err::DTrainError) = print(io, "DTrainError(", err.status, "): ", err.message)

"""
    status_string(status::Status) -> String

The library's short description of `status`, e.g. `"timeout"`.
"""
status_string(status::Status) =
    unsafe_string(ccall(_sym(:dt_status_string), Ptr{UInt8}, (Cint,), Cint(status)))

const _STATUSES = Dict(Cint(status) => status for status in instances(Status))

# The error for a failed call. It must be built right after that call: the
# message is per thread and the next failing libdtrain call replaces it.
function _error(code::Cint)
    message = unsafe_string(ccall(_sym(:dt_error_last), Ptr{UInt8}, ()))
    status = get(_STATUSES, code, nothing)
    status === nothing && return DTrainError(DT_ERR_INTERNAL, "unknown status $code: $message")
    return DTrainError(status, message)
end

function _check(code::Cint)
    code == Cint(DT_OK) || throw(_error(code))
    return nothing
end
