"""Requests: the handle of a non-blocking operation."""

from . import _capi
from ._constants import Status
from ._errors import Error, InvalidUsageError, TimeoutError
from ._arguments import _integer


class Request:
    """A started operation, returned by a collective called with ``async_op=True``.

    The request keeps the operation's tensors alive until the operation is
    known to be finished. ``free()`` (or leaving a ``with`` block) releases the
    handle; an operation still running then goes on, and its communicator
    keeps the tensors until it has finished or is closed.
    """

    def __init__(self, handle, tensors, comm):
        self._handle = handle
        self._tensors = tensors
        self._comm = comm

    def wait(self, timeout_ms=-1):
        """Waits for the operation; ``timeout_ms`` negative: the communicator's deadline.

        Raises the operation's error, or TimeoutError when the time passed
        (which, as for any timeout, breaks the communicator).
        """
        handle = self._live()
        try:
            _capi.dt_request_wait(handle, _integer(timeout_ms, "timeout_ms"))
        except TimeoutError:
            raise  # the operation may still be running: keep its tensors
        except Error:
            # Any other failure is the operation's own: it has finished.
            self._release_tensors()
            raise
        self._release_tensors()

    def test(self):
        """True when the operation has finished; raises its error if it failed."""
        handle = self._live()
        try:
            status = _capi.dt_request_test(handle)
        except Error:
            self._release_tensors()
            raise
        if status == Status.INPROGRESS:
            return False
        self._release_tensors()
        return True

    def free(self):
        """Releases the request. Safe to call twice."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        tensors, self._tensors = self._tensors, []
        if tensors and not _finished(handle):
            self._comm._adopt(handle, tensors)
            return
        _capi.dt_request_free(handle)
        _release(tensors)

    @property
    def freed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.free()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self):
        state = "freed" if self._handle is None else "live"
        return f"<dtrain.Request {state}>"

    def _live(self):
        if self._handle is None:
            raise InvalidUsageError(Status.ERR_INVALID_USAGE, "the request was freed")
        return self._handle

    def _release_tensors(self):
        tensors, self._tensors = self._tensors, []
        _release(tensors)


def _finished(handle):
    """Whether the operation of `handle` is over (a failure is over, too)."""
    try:
        return _capi.dt_request_test(handle) != Status.INPROGRESS
    except Error:
        return True


def _release(tensors):
    for tensor in tensors:
        tensor.release()
