"""Library-wide functions: versions, build information, errors, tensors."""

from . import _capi
from ._arguments import _integer


def version():
    """The version of the libdtrain loaded, as (major, minor, patch)."""
    return tuple(_capi.dt_version())


def build_info():
    """What the library was built with and found at run time (backends, devices)."""
    return _capi.dt_build_info()


def status_string(code):
    """The library's short description of a status code."""
    return _capi.dt_status_string(_integer(code, "code"))


def error_last():
    """The message of the last libdtrain failure on this thread ("" if none)."""
    return _capi.dt_error_last()


def tensor_check(obj):
    """The element count of ``obj`` if libdtrain accepts it as a tensor.

    ``obj`` is anything with ``__dlpack__`` or the buffer protocol. Raises
    InvalidArgumentError (or UnsupportedError for an unusable device) saying
    what is wrong.
    """
    return _capi.dt_tensor_check(obj)
