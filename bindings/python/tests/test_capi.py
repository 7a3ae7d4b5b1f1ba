"""The low-level module dtrain._capi: C names, handles, statuses."""

import numpy as np
import pytest

import dtrain
from dtrain import _capi


def test_handles_are_classes_and_out_arguments_return():
    comm = _capi.dt_comm_create(None)
    assert isinstance(comm, _capi.dt_comm)
    assert _capi.dt_comm_rank(comm) == 0 and _capi.dt_comm_size(comm) == 1
    assert _capi.dt_comm_split(comm, _capi.DT_UNDEF, 0) is None
    child = _capi.dt_comm_split(comm, 0, 0)
    assert isinstance(child, _capi.dt_comm)
    _capi.dt_comm_destroy(child)
    _capi.dt_comm_destroy(comm)


def test_requests_and_progress_statuses():
    comm = _capi.dt_comm_create(None)
    buf = np.zeros(3)
    request = _capi.dt_recv(comm, buf, 0, 2, None, True)
    assert isinstance(request, _capi.dt_request)
    assert _capi.dt_request_test(request) == _capi.DT_INPROGRESS
    assert _capi.dt_send(comm, np.ones(3), 0, 2, None, False) is None
    assert _capi.dt_request_test(request) == _capi.DT_OK
    assert _capi.dt_request_wait(request, -1) is None
    _capi.dt_request_free(request)
    _capi.dt_comm_destroy(comm)


def test_failures_raise_the_package_exceptions():
    comm = _capi.dt_comm_create(None)
    with pytest.raises(dtrain.InvalidArgumentError, match="peer 5"):
        _capi.dt_send(comm, np.ones(3), 5, 0, None, False)
    with pytest.raises(dtrain.InvalidArgumentError, match="stream"):
        _capi.dt_send(comm, np.ones(3), 0, 0, "not a stream", False)
    _capi.dt_comm_destroy(comm)


def test_options_struct():
    opts = _capi.dt_comm_options()
    _capi.dt_comm_options_init(opts, _capi.DT_COMM_OPTIONS_VERSION)
    assert opts.version == _capi.DT_COMM_OPTIONS_VERSION
    assert opts.rank == opts.world_size == opts.device == opts.timeout_ms == _capi.DT_UNDEF
    assert opts.store is None and opts.backend == _capi.DT_BACKEND_AUTO
    opts.store = "127.0.0.1:29500"
    opts.store = "localhost:1234"
    assert opts.store == "localhost:1234"
    with pytest.raises(dtrain.InvalidArgumentError, match="version"):
        _capi.dt_comm_options_init(opts, 99)


def test_tensor_holder():
    array = np.arange(4.0)
    held = _capi.Tensor(array, True, "grad")
    assert held.writable and not held.released
    assert _capi.dt_tensor_check(held) == 4
    read_only = _capi.Tensor(array)
    comm = _capi.dt_comm_create(None)
    with pytest.raises(dtrain.InvalidArgumentError, match="recv: the Tensor was taken read-only"):
        _capi.dt_allreduce(comm, held, read_only, _capi.DT_SUM, None, False)
    held.release()
    assert held.released
    with pytest.raises(dtrain.InvalidArgumentError, match="released"):
        _capi.dt_tensor_check(held)
    with pytest.raises(dtrain.InvalidArgumentError, match="grad: 'int'"):
        _capi.Tensor(3, False, "grad")
    _capi.dt_comm_destroy(comm)
