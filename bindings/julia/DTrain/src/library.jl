# Finding libdtrain. The library is opened on first use rather than when the
# package loads, so that `using DTrain` works (and reports a clear error later)
# on a machine where the library is not installed.

const _DEFAULT_LIBRARY = "libdtrain.so.0"
const _library_handle = Ref{Ptr{Cvoid}}(C_NULL)
const _library_lock = ReentrantLock()

"""
    DTrain.library_path() -> String

The library DTrain loads: `ENV["LIBDTRAIN"]` when set, else `"libdtrain.so.0"`,
which the dynamic loader finds like any system library.
"""
library_path() = get(ENV, "LIBDTRAIN", _DEFAULT_LIBRARY)

function _library()
    handle = _library_handle[]
    # Finalizers come through here too: once the library is open they take no lock.
    handle != C_NULL && return handle
    lock(_library_lock) do
        if _library_handle[] == C_NULL
            path = library_path()
            try
                _library_handle[] = Libdl.dlopen(path)
            catch err
                error("DTrain: cannot load libdtrain from \"", path,
                      "\" (set ENV[\"LIBDTRAIN\"] to the library's path): ", sprint(showerror, err))
            end
        end
        return _library_handle[]
    end
end

# The address of a C API function, for ccall.
_sym(name::Symbol) = Libdl.dlsym(_library(), name)
