"""Where libdtrain's log lines go: stderr (or DTRAIN_LOG_FILE) by default, or a Python handler."""

import enum
import sys
import threading
import traceback

from . import _capi


class LogLevel(enum.IntEnum):
    """How much a log line matters (dt_log_level); a level lets through itself and those above it."""
    ERROR = _capi.DT_LOG_ERROR
    WARN = _capi.DT_LOG_WARN
    INFO = _capi.DT_LOG_INFO
    DEBUG = _capi.DT_LOG_DEBUG
    TRACE = _capi.DT_LOG_TRACE


def set_log_level(level):
    """Sets the level in place of DTRAIN_LOG_LEVEL's: a LogLevel, its int, or its name ("debug")."""
    if isinstance(level, str):
        try:
            level = LogLevel[level.upper()]
        except KeyError:
            raise ValueError(f"log level {level!r} is not one of "
                             f"{', '.join(m.name.lower() for m in LogLevel)}") from None
    _capi.dt_set_log_level(int(level))


class _Delivery:
    """The thread that hands queued lines to a handler, until stopped."""

    def __init__(self, handler):
        self.handler = handler
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dtrain-log", daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            if not _capi.dtpy_log_wait(100):
                if self.stopping.is_set():
                    return
                continue
            line = _capi.dtpy_log_pop()
            if line is None:
                continue
            level, rank, message = line
            try:
                self.handler(LogLevel(level), rank, message)
            except Exception:  # a failing handler must not end the delivery of later lines
                traceback.print_exc(file=sys.stderr)

    def stop(self):
        """Returns once every line queued so far was handed over."""
        self.stopping.set()
        self.thread.join()


_lock = threading.Lock()
_delivery = None


def set_log_handler(handler):
    """Sends libdtrain's log lines to ``handler(level, rank, message)`` instead of stderr.

    ``level`` is a LogLevel, ``rank`` the process's rank (-1 before its first
    communicator), ``message`` the line without time, rank or level. Lines
    are handed over in order on a thread of this module's own, never the
    thread that logged, so ``handler`` may log, print or take locks (a
    library thread never waits for Python). ``None`` restores stderr, after
    the lines already queued were handed over. For the standard library's
    logging::

        log = logging.getLogger("dtrain")
        levels = {dtrain.LogLevel.ERROR: logging.ERROR, dtrain.LogLevel.WARN: logging.WARNING,
                  dtrain.LogLevel.INFO: logging.INFO}
        dtrain.set_log_handler(lambda level, rank, message:
                               log.log(levels.get(level, logging.DEBUG), "[rank %d] %s", rank, message))
    """
    global _delivery
    if handler is not None and not callable(handler):
        raise TypeError(f"handler must be callable or None, not {type(handler).__name__}")
    with _lock:
        if handler is not None:
            if _delivery is None:
                _delivery = _Delivery(handler)
            _delivery.handler = handler  # lines from now on, and those still queued
            _capi.dt_set_log_callback(_capi.DTPY_LOG_QUEUE, None)
            return
        _capi.dt_set_log_callback(None, None)
        previous, _delivery = _delivery, None
    if previous is not None:
        previous.stop()
