"""Bad input raises the right dtrain.Error subclass, with the library's message."""

import numpy as np
import pytest

import dtrain


def test_mismatched_dtype(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="float32.*int32"):
        comm.allreduce(np.zeros(4, np.float32), np.zeros(4, np.int32))


def test_mismatched_count(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="allreduce"):
        comm.allreduce(np.zeros(4), np.zeros(5))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_avg_needs_a_floating_dtype(comm, dtype):
    with pytest.raises(dtrain.InvalidArgumentError, match="AVG"):
        comm.allreduce(np.zeros(4, dtype), op="avg")


def test_unknown_op(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="op"):
        comm.allreduce(np.zeros(4), op="median")
    with pytest.raises(dtrain.InvalidArgumentError, match="op"):
        comm.allreduce(np.zeros(4), op=42)


def test_peer_out_of_range(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="peer 1"):
        comm.send(np.zeros(4), 1)
    with pytest.raises(dtrain.InvalidArgumentError, match="peer -1"):
        comm.recv(np.zeros(4), -1)


def test_negative_tag(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="tag"):
        comm.send(np.zeros(4), 0, tag=-1)


def test_root_out_of_range(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="root 1"):
        comm.broadcast(np.zeros(4), root=1)


def test_non_contiguous_array(comm):
    strided = np.zeros((4, 4), np.float32)[:, ::2]
    with pytest.raises(dtrain.InvalidArgumentError, match="send: strides"):
        comm.allreduce(strided, np.zeros(8, np.float32))
    with pytest.raises(dtrain.InvalidArgumentError, match="send: strides"):
        comm.allreduce(np.asfortranarray(np.zeros((3, 4))))


def test_read_only_recv_buffer(comm):
    read_only = np.zeros(4)
    read_only.flags.writeable = False
    with pytest.raises(dtrain.InvalidArgumentError, match="recv.*read-only"):
        comm.allreduce(np.ones(4), read_only)
    with pytest.raises(dtrain.InvalidArgumentError, match="buf.*read-only"):
        comm.recv(read_only, 0)
    assert (read_only == 0).all()
    with pytest.raises(dtrain.InvalidArgumentError, match="read-only"):
        comm.allgather(np.ones(4), b"\x00" * 32)
    # As the send side a read-only array is fine.
    send = np.frombuffer(np.ones(4).tobytes())
    assert not send.flags.writeable
    recv = np.zeros(4)
    comm.allreduce(send, recv)
    assert (recv == 1).all()


def test_not_a_tensor(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="send: 'list'"):
        comm.allreduce([1.0, 2.0], np.zeros(2))


def test_alltoallv_counts(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="send_counts: has 2 entries"):
        comm.alltoallv(np.zeros(4), [2, 2], np.zeros(4), [4])
    with pytest.raises(dtrain.InvalidArgumentError, match="recv_counts"):
        comm.alltoallv(np.zeros(4), [4], np.zeros(4), ["four"])
    with pytest.raises(dtrain.InvalidArgumentError, match="negative"):
        comm.alltoallv(np.zeros(4), [-1], np.zeros(4), [4])
    with pytest.raises(dtrain.MismatchError, match="expects to receive"):
        comm.alltoallv(np.zeros(4), [3], np.zeros(4), [4])


def test_invalid_argument_changes_nothing(comm):
    recv = np.full(4, 9.0)
    with pytest.raises(dtrain.InvalidArgumentError):
        comm.allreduce(np.zeros(4, np.float32), recv)
    assert (recv == 9).all()
    comm.allreduce(np.ones(4), recv)  # and the communicator still works
    assert (recv == 1).all()


def test_message_is_error_last(comm):
    with pytest.raises(dtrain.InvalidArgumentError) as info:
        comm.send(np.zeros(4), 3)
    assert info.value.message == dtrain.error_last()
    assert info.value.status == dtrain.ERR_INVALID_ARGUMENT



# Arguments that are not numbers where the library takes one: the package
# says which argument, as the library does, rather than int()'s ValueError.
@pytest.mark.parametrize("call, argument", [
    (lambda c: c.split("red"), "color"),
    (lambda c: c.broadcast(np.zeros(2), root="first"), "root"),
    (lambda c: c.reduce(np.zeros(2), root=None), "root"),
    (lambda c: c.send(np.zeros(2), None), "peer"),
    (lambda c: c.recv(np.zeros(2), 0, tag="t"), "tag"),
    (lambda c: c.p2p_group([dtrain.P2POp("send", np.zeros(2), "zero")]), r"ops\[0\].peer"),
    (lambda c: c.recv(np.zeros(2), 0, async_op=True).wait("soon"), "timeout_ms"),
    (lambda c: dtrain.Comm(timeout_ms="long"), "timeout_ms"),
    (lambda c: dtrain.cp_positions(4, "two", 0), "cp_size"),
    (lambda c: dtrain.tp.unshard(c, "columns", np.zeros(2), np.zeros(2), q_heads="x"), "q_heads"),
    (lambda c: dtrain.status_string("bad"), "code"),
    (lambda c: dtrain.MoeOptions(8, 2, drop_policy="sometimes"), "drop_policy"),
    (lambda c: dtrain.cluster_preset("h100", nodes="two"), "nodes"),
])
def test_arguments_that_are_not_numbers(comm, call, argument):
    with pytest.raises(dtrain.InvalidArgumentError, match=argument):
        call(comm)


# The low-level module's own argument conversions (SWIG's) raise the same
# class: a handle of the wrong type, an enum out of the C range.
def test_low_level_argument_errors_are_dtrain_errors(comm):
    from dtrain import _capi
    tensor = _capi.Tensor(np.zeros(2), True)
    with pytest.raises(dtrain.InvalidArgumentError, match="argument 1 of type 'dt_comm"):
        _capi.dt_allreduce("not a communicator", tensor, tensor, _capi.DT_SUM, None, False)
    with pytest.raises(dtrain.InvalidArgumentError, match="argument 4"):
        _capi.dt_allreduce(comm._live(), tensor, tensor, 2 ** 40, None, False)
    with pytest.raises(dtrain.InvalidArgumentError, match="dt_request"):
        _capi.dt_request_wait(comm._live(), 0)
    tensor.release()


def test_no_error_of_the_package_is_a_plain_runtime_error():
    # Every exception class the package defines is a dtrain.Error.
    for name in dtrain.__all__:
        value = getattr(dtrain, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, dtrain.Error), name
