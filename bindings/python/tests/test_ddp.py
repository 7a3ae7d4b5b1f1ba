"""dtrain.DDP and dtrain.broadcast_parameters on a world of one (multirank/allranks.py
checks them across ranks)."""

import gc
import threading

import numpy as np
import pytest

import dtrain
from dtrain import _capi
from dlpack_objects import KDL_BFLOAT, ManualTensor, bfloat16


def _grads():
    return [np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5, np.linspace(-1, 1, 4),
            np.full(5, 0.25, np.float16)]


def test_a_step_leaves_the_gradients_of_a_world_of_one(comm):
    grads = _grads()
    before = [g.copy() for g in grads]
    with dtrain.DDP(comm, grads, bucket_bytes=16) as ddp:
        assert len(ddp) == 3 and ddp.sync
        assert ddp.bucket_count == 3
        # Reverse registration order: the last gradient's bucket starts first.
        assert [ddp.bucket_of(i) for i in range(3)] == [2, 1, 0]
        assert ddp.bucket_state(0) is dtrain.BucketState.WAITING
        for step in range(2):
            for i in reversed(range(3)):
                ddp.mark_ready(i)
            assert ddp.bucket_state(0) in (dtrain.BUCKET_IN_FLIGHT, dtrain.BUCKET_REDUCED)
            ddp.wait()
            assert ddp.bucket_state(0) == dtrain.BUCKET_WAITING
            for g, b in zip(grads, before):
                np.testing.assert_array_equal(g, b)
        assert "3 gradients" in repr(ddp)
    assert ddp.closed and repr(ddp) == "<dtrain.DDP closed>"


def test_defaults_make_one_bucket_per_dtype_and_options_are_read(comm):
    grads = _grads()  # float32, float64, float16
    with dtrain.DDP.from_arrays(comm, grads) as ddp:
        assert ddp.bucket_count == 3
        assert ddp.grads[0] is grads[0]
    with dtrain.DDP(comm, [np.zeros(3, np.float32), np.zeros((2, 2), np.float32)]) as ddp:
        assert ddp.bucket_count == 1
    for compression in ("f16", "BF16", dtrain.Compression.NONE, 1, None):
        with dtrain.DDP(comm, grads, compression=compression, bucket_bytes=1 << 20):
            pass


def test_no_sync_accumulates_locally(comm):
    grads = _grads()
    with dtrain.DDP(comm, grads) as ddp:
        with ddp.no_sync() as same:
            assert same is ddp and not ddp.sync
            ddp.mark_ready(0)
            ddp.mark_ready(0)  # does nothing with sync off
            ddp.wait()
        assert ddp.sync
        ddp.sync = False
        with ddp.no_sync():
            pass
        assert not ddp.sync  # restored as it was
        ddp.sync = True
        ddp.mark_ready(1)
        with pytest.raises(dtrain.InvalidUsageError, match="in progress"):
            ddp.sync = False
        assert ddp.sync
        with pytest.raises(dtrain.InvalidUsageError, match="never marked"):
            ddp.wait()


def test_misuse_raises_the_documented_errors(comm):
    grads = _grads()
    before = [g.copy() for g in grads]
    with dtrain.DDP(comm, grads) as ddp:
        ddp.mark_ready(2)
        with pytest.raises(dtrain.InvalidUsageError, match="already marked"):
            ddp.mark_ready(2)
        with pytest.raises(dtrain.InvalidUsageError, match="gradients 0, 1 were never marked") as info:
            ddp.wait()
        assert info.value.status == dtrain.ERR_INVALID_USAGE
        for g, b in zip(grads, before):
            np.testing.assert_array_equal(g, b)
        with pytest.raises(dtrain.InvalidArgumentError, match="gradient 3 is out of range"):
            ddp.mark_ready(3)
        with pytest.raises(dtrain.InvalidArgumentError, match="negative"):
            ddp.mark_ready(-1)
        with pytest.raises(dtrain.InvalidArgumentError, match="out of range"):
            ddp.mark_ready(2 ** 70)
        with pytest.raises(dtrain.InvalidArgumentError, match="out of range"):
            ddp.bucket_of(3)
        with pytest.raises(dtrain.InvalidArgumentError, match="bucket 3 is out of range"):
            ddp.bucket_state(3)
        with pytest.raises(dtrain.InvalidUsageError, match="weighted"):
            ddp.set_local_weight(3)
    with pytest.raises(dtrain.InvalidUsageError, match="closed"):
        ddp.mark_ready(0)
    ddp.close()


def test_find_unused_and_weights(comm):
    grads = _grads()
    with dtrain.DDP(comm, grads, find_unused=True, weighted=True) as ddp:
        for bad in (-1.0, float("nan"), float("inf")):
            with pytest.raises(dtrain.InvalidArgumentError, match="finite"):
                ddp.set_local_weight(bad)
        ddp.set_local_weight(0)
        ddp.mark_ready(0)
        with pytest.raises(dtrain.InvalidUsageError, match="first mark_ready"):
            ddp.set_local_weight(1)
        with pytest.raises(dtrain.InvalidUsageError, match="add up to"):
            ddp.wait()
        ddp.set_local_weight(7)
        kept = grads[0].copy()
        ddp.mark_ready(0)
        ddp.wait()
        np.testing.assert_allclose(grads[0], kept, rtol=1e-6)
        np.testing.assert_array_equal(grads[1], 0)  # unmarked: zero from this rank
        np.testing.assert_array_equal(grads[2], 0)


def test_bad_gradients_and_options_are_refused(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="floating point"):
        dtrain.DDP(comm, [np.zeros(3, np.float32), np.zeros(3, np.int32)])
    with pytest.raises(dtrain.InvalidArgumentError, match="read-only"):
        frozen = np.zeros(3, np.float32)
        frozen.flags.writeable = False
        dtrain.DDP(comm, [frozen])
    with pytest.raises(dtrain.InvalidArgumentError, match="overlap"):
        base = np.zeros(8, np.float32)
        dtrain.DDP(comm, [base[:5], base[3:]])
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.DDP(comm, [np.zeros((4, 4), np.float32)[:, 1]])  # strided view
    with pytest.raises(dtrain.InvalidArgumentError, match="bucket_bytes"):
        dtrain.DDP(comm, _grads(), bucket_bytes=0)
    with pytest.raises(dtrain.InvalidArgumentError, match="bucket_bytes"):
        dtrain.DDP(comm, _grads(), bucket_bytes="lots")
    with pytest.raises(dtrain.InvalidArgumentError, match="compression"):
        dtrain.DDP(comm, _grads(), compression="int8")
    with pytest.raises(dtrain.InvalidArgumentError, match="compression"):
        dtrain.DDP(comm, _grads(), compression=9)
    with pytest.raises(dtrain.InvalidArgumentError, match="grads\\[0\\]"):
        dtrain.DDP(comm, [object()])
    # The communicator still works after the refusals.
    with dtrain.DDP(comm, []) as empty:
        assert empty.bucket_count == 0
        empty.wait()


def test_bfloat16_gradients_over_dlpack(comm):
    storage = bfloat16([1.5, -2.0, 0.25])
    grad = ManualTensor(storage, KDL_BFLOAT, 16, 3)
    with dtrain.DDP(comm, [grad], compression="f16") as ddp:
        ddp.mark_ready(0)
        ddp.wait()
    np.testing.assert_array_equal(storage, bfloat16([1.5, -2.0, 0.25]))
    assert grad.deleted == 1  # the DDP gave the tensor back on close


def test_the_arrays_are_kept_until_close(comm):
    grads = _grads()
    ddp = dtrain.DDP(comm, [g for g in grads])
    del grads
    gc.collect()
    for i in range(3):
        ddp.mark_ready(i)
    ddp.wait()
    ddp.close()
    assert ddp.grads == []


def test_marks_from_several_threads(comm):
    grads = [np.full(100, float(i), np.float32) for i in range(16)]
    with dtrain.DDP(comm, grads, bucket_bytes=512) as ddp:
        threads = [threading.Thread(target=ddp.mark_ready, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ddp.wait(10_000)
    for i, g in enumerate(grads):
        np.testing.assert_array_equal(g, float(i))


def test_a_closed_communicator_aborts_the_ddp():
    comm = dtrain.Comm(rank=0, world_size=1)
    grads = _grads()
    ddp = dtrain.DDP(comm, grads)
    comm.close()
    ddp.mark_ready(0)
    ddp.mark_ready(1)
    try:
        ddp.mark_ready(2)
    except dtrain.AbortedError:
        pass
    with pytest.raises(dtrain.AbortedError):
        ddp.wait()
    ddp.close()


def test_broadcast_parameters_on_a_world_of_one(comm):
    params = [np.arange(4, dtype=np.float64), np.array([3, 4], np.int64)]
    dtrain.broadcast_parameters(comm, params)
    np.testing.assert_array_equal(params[0], np.arange(4))
    dtrain.broadcast_parameters(comm, [])
    with pytest.raises(dtrain.InvalidArgumentError, match="root 1"):
        dtrain.broadcast_parameters(comm, params, root=1)
    with pytest.raises(dtrain.InvalidArgumentError, match="root"):
        dtrain.broadcast_parameters(comm, params, root=2 ** 40)
    with pytest.raises(dtrain.InvalidArgumentError, match="params\\[1\\]"):
        dtrain.broadcast_parameters(comm, [params[0], "text"])


def test_capi_level_calls(comm):
    opts = _capi.dt_ddp_options()
    _capi.dt_ddp_options_init(opts, _capi.DT_DDP_OPTIONS_VERSION)
    assert opts.bucket_bytes == dtrain.UNDEF and opts.find_unused == dtrain.UNDEF
    with pytest.raises(dtrain.InvalidArgumentError):
        _capi.dt_ddp_options_init(opts, 0)
    grad = np.zeros(3, np.float32)
    with pytest.raises(dtrain.InvalidArgumentError, match="writable dtrain._capi.Tensor"):
        _capi.dt_ddp_create(comm._live(), [grad], opts)
    with pytest.raises(dtrain.InvalidArgumentError, match="read-only"):
        _capi.dt_ddp_create(comm._live(), [_capi.Tensor(grad, False)], opts)
    tensor = _capi.Tensor(grad, True)
    handle = _capi.dt_ddp_create(comm._live(), [tensor], None)
    assert _capi.dt_ddp_bucket_count(handle) == 1
    assert _capi.dt_ddp_bucket_state(handle, 0) == _capi.DT_BUCKET_WAITING
    _capi.dt_ddp_destroy(handle)
    tensor.release()
