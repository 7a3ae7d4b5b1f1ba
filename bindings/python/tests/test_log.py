"""Routing libdtrain's log lines to a Python handler, and the level."""

import threading

import pytest

import dtrain


@pytest.fixture(autouse=True)
def default_routing():
    yield
    dtrain.set_log_handler(None)
    dtrain.set_log_level("warn")


def refused_call():
    """A call the library refuses; it logs "returning ..." at debug level."""
    with pytest.raises(dtrain.InvalidArgumentError, match="is not below"):
        dtrain.Comm(rank=5, world_size=2)


def wait_for(lines, count, timeout=5.0):
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if len(lines) >= count:
            done.set()
            break
        done.wait(0.01)
    return len(lines) >= count


def test_handler_receives_lines_at_the_level_on_its_own_thread():
    lines = []
    dtrain.set_log_handler(lambda level, rank, message: lines.append((level, rank, message,
                                                                       threading.current_thread().name)))
    dtrain.set_log_level(dtrain.LogLevel.WARN)
    refused_call()
    dtrain.set_log_level("debug")
    refused_call()
    assert wait_for(lines, 1)
    dtrain.set_log_handler(None)  # returns once the queued lines were handed over
    assert len(lines) == 1, lines
    level, rank, message, thread = lines[0]
    assert level is dtrain.LogLevel.DEBUG
    assert rank == -1 or rank >= 0
    assert message.startswith("returning invalid argument: "), message
    assert thread == "dtrain-log"


def test_none_restores_stderr_and_the_handler_hears_nothing_more(capfd):
    lines = []
    dtrain.set_log_level("debug")
    dtrain.set_log_handler(lambda *line: lines.append(line))
    refused_call()
    dtrain.set_log_handler(None)
    handled = len(lines)
    refused_call()
    assert handled == 1
    assert len(lines) == handled
    assert "DEBUG returning invalid argument" in capfd.readouterr().err


def test_a_failing_handler_does_not_stop_later_lines(capfd):
    lines = []

    def handler(level, rank, message):
        lines.append(message)
        if len(lines) == 1:
            raise RuntimeError("handler failed on purpose")

    dtrain.set_log_level("debug")
    dtrain.set_log_handler(handler)
    refused_call()
    refused_call()
    dtrain.set_log_handler(None)
    assert len(lines) == 2
    assert "handler failed on purpose" in capfd.readouterr().err


def test_bad_levels_and_handlers_are_refused():
    with pytest.raises(ValueError, match="not one of error, warn, info, debug, trace"):
        dtrain.set_log_level("loud")
    with pytest.raises(dtrain.InvalidArgumentError, match="is not a dt_log_level"):
        dtrain.set_log_level(7)
    with pytest.raises(TypeError, match="callable or None"):
        dtrain.set_log_handler("stderr")
