"""What every object owning a library handle shares: close() on leaving a
``with`` block or on garbage collection, and a clear error once closed."""

from ._constants import Status
from ._errors import InvalidUsageError


class _Handle:
    _handle = None
    _noun = "object"  # names the object in "the <noun> is closed"

    def close(self):
        raise NotImplementedError

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _live(self):
        if self._handle is None:
            raise InvalidUsageError(Status.ERR_INVALID_USAGE, f"the {self._noun} is closed")
        return self._handle
