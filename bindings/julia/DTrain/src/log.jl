# Where libdtrain's log lines go (dtrain/log.h).

"""
    LogLevel

How much a log line matters (`dt_log_level`); a level lets through itself and
the ones above it.
"""
@enum LogLevel::Cint begin
    DT_LOG_ERROR = 0
    DT_LOG_WARN = 1
    DT_LOG_INFO = 2
    DT_LOG_DEBUG = 3
    DT_LOG_TRACE = 4
end

"""
    set_log_level(level::LogLevel)

Sets the level in place of `DTRAIN_LOG_LEVEL`'s.
"""
function set_log_level(level::LogLevel)
    _check(ccall(_sym(:dt_set_log_level), Cint, (Cint,), Cint(level)))
    return nothing
end

"""
    set_log_callback(fn::Ptr{Cvoid}, user::Ptr{Cvoid}=C_NULL)
    set_log_callback(nothing)

Sends libdtrain's log lines to the C function `fn(user, level::Cint,
rank::Cint, message::Cstring)::Cvoid` instead of stderr; `nothing` restores
stderr. `fn` runs on whichever thread logs, libdtrain's own included, one call
at a time, and must return promptly without calling libdtrain. A Julia
function made into `fn` with `@cfunction` runs on threads Julia did not start,
which Julia 1.9 and later adopt; it must not yield or wait. When this returns,
the previous `fn` is no longer running.
"""
function set_log_callback(fn::Ptr{Cvoid}, user::Ptr{Cvoid}=C_NULL)
    _check(ccall(_sym(:dt_set_log_callback), Cint, (Ptr{Cvoid}, Ptr{Cvoid}), fn, user))
    return nothing
end

set_log_callback(::Nothing) = set_log_callback(C_NULL, C_NULL)
