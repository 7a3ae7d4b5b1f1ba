# Versions and build information (dtrain/version.h).

"""
    DTrain.version() -> VersionNumber

The version of the libdtrain loaded at run time.
"""
function version()
    major, minor, patch = Ref{Cint}(0), Ref{Cint}(0), Ref{Cint}(0)
    ccall(_sym(:dt_version), Cvoid, (Ref{Cint}, Ref{Cint}, Ref{Cint}), major, minor, patch)
    return VersionNumber(major[], minor[], patch[])
end

"""
    DTrain.build_info() -> String

What the loaded library was built with and found at run time: its version, the
backends and devices compiled in and which of them this machine has.
"""
build_info() = unsafe_string(ccall(_sym(:dt_build_info), Ptr{UInt8}, ()))
