"""The exception hierarchy: dtrain.Error and one subclass per dt_status."""

import builtins

from . import _constants
from ._constants import Status


class Error(Exception):
    """A libdtrain call failed.

    ``status`` is the dt_status (a :class:`Status` where known) and ``message``
    the library's description of what failed (dt_error_last()).
    """

    def __init__(self, status, message):
        super().__init__(status, message)
        self.status = _constants.status_or_int(status)
        self.message = message

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (type(self), (int(self.status), self.message))


class InvalidArgumentError(Error):
    """A bad argument; nothing was changed."""


class InvalidUsageError(Error):
    """A call out of order or on the wrong object."""


class UnsupportedError(Error):
    """Not available in this build or on this machine."""


class OutOfMemoryError(Error):
    """An allocation failed."""


class TimeoutError(Error, builtins.TimeoutError):
    """A deadline passed. Also a builtin TimeoutError."""

    # OSError's constructor reads (status, message) as (errno, strerror); keep
    # Error's meaning of both.
    def __init__(self, status, message):
        Error.__init__(self, status, message)


class RemoteError(Error):
    """A peer failed; the message names the rank."""


class TransportError(Error):
    """The network or transport failed."""


class AbortedError(Error):
    """The communicator was aborted or is broken."""


class AuthError(Error):
    """Rendezvous refused the job's secret."""


class MismatchError(Error):
    """Ranks disagree about a collective."""


class InternalError(Error):
    """A bug in libdtrain."""


class IoError(Error, OSError):
    """A file could not be read or written (a checkpoint, for example)."""


_BY_STATUS = {
    Status.ERR_INVALID_ARGUMENT: InvalidArgumentError,
    Status.ERR_INVALID_USAGE: InvalidUsageError,
    Status.ERR_UNSUPPORTED: UnsupportedError,
    Status.ERR_OUT_OF_MEMORY: OutOfMemoryError,
    Status.ERR_TIMEOUT: TimeoutError,
    Status.ERR_REMOTE: RemoteError,
    Status.ERR_TRANSPORT: TransportError,
    Status.ERR_ABORTED: AbortedError,
    Status.ERR_AUTH: AuthError,
    Status.ERR_MISMATCH: MismatchError,
    Status.ERR_INTERNAL: InternalError,
    Status.ERR_IO: IoError,
}


def _from_status(status, message):
    """The exception for a failed status; the low-level module raises these."""
    return _BY_STATUS.get(status, Error)(status, message)
